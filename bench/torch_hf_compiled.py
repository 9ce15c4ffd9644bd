#!/usr/bin/env python3
"""remat(compile=True)'s memory model against the measured step on
Hugging Face models nobody here wrote: the small configs of
tests/torch/t_hf.py (GPT-2, Llama, BERT, ViT; ResNet, ConvNeXt), a batch
of --rows x --length tokens (images: --rows x 3 x 16 x 16), at fixed
memory + F x activations for each of --fractions.

    build/venv-torch2/bin/python bench/torch_hf_compiled.py \\
        [--models GPT-2,Llama,BERT,ViT,ResNet,ConvNeXt] [--fractions 1,.55,.4] \\
        [--rows 32] [--length 32] [--json FILE]

prints per model and F the model's peak (plan_info's plan_peak less
fixed memory) and the step's measured peak (measure.step_peak after two
warm steps, the step's own allocations), in MB, and whether the
measured peaks fall with F. Inductor's caches are off.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "torch"))

import torch  # noqa: E402

import checkmate_torch  # noqa: E402
from checkmate_torch.measure import step_peak  # noqa: E402
import t_hf  # noqa: E402  (the configs, batches and loss of the HF tests)


class Loss(torch.nn.Module):
    """The model and its loss, so that the compiled step holds both (the
    loss's own values, outside the step, are no part of the model)."""

    def __init__(self, name, model):
        super().__init__()
        self.name, self.model = name, t_hf.Logits(model)

    def forward(self, target, **kw):
        return t_hf.loss_of(self.name, self.model(**kw), target)


def measured(name, build, fraction, args):
    torch.manual_seed(0)
    model = Loss(name, build())
    model.train()
    kw, target = t_hf.batch(name, 0, args.rows, args.length)
    kw = dict(kw, target=target)
    r = checkmate_torch.remat(model, (), kw, compile=True, cache=False,
                              budget=lambda fixed, peak: int(fixed + fraction * (peak - fixed)))

    def step():
        r(**kw).backward()
    step()
    step()
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    info = r.plan_info
    return dict(model=name, fraction=fraction, model_peak=info["plan_peak"] - info["fixed_memory"],
                peak=step_peak(step, "cpu")["peak"], budget=info["budget"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="GPT-2,Llama,BERT,ViT,ResNet,ConvNeXt")
    ap.add_argument("--fractions", default="1,.55,.4")
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--length", type=int, default=32)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    import transformers as tf
    tf.logging.set_verbosity_error()
    builds = dict(t_hf.configs(tf), **t_hf.more_configs(tf))
    print("# torch %s, transformers %s" % (torch.__version__, tf.__version__))
    rows = []
    for name in args.models.split(","):
        peaks = []
        for fraction in [float(f) for f in args.fractions.split(",")]:
            try:
                row = measured(name, builds[name], fraction, args)
            except Exception as e:
                row = dict(model=name, fraction=fraction,
                           error="%s: %s" % (type(e).__name__, str(e).splitlines()[0]))
                print("%s F %g: %s" % (name, fraction, row["error"]), flush=True)
            else:
                peaks.append(row["peak"])
                print("%s F %g: model %.3f MB, measured %.3f MB (%+.3f)"
                      % (name, fraction, row["model_peak"] / 1e6, row["peak"] / 1e6,
                         (row["peak"] - row["model_peak"]) / 1e6), flush=True)
            rows.append(row)
        print("%s: measured peaks fall with F: %s" % (
            name, all(a >= b for a, b in zip(peaks, peaks[1:]))), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""remat(compile=True)'s lowering rules against inductor's own, in one
process: one partition (checkmate's plan cache gives all the same), its
step lowered once as remat lowers it and once for each of --against,
with inductor's rule in place of remat's:

  reuse     buffer reuse (AllocateLine.should_reuse_buffer, gated by
            inductor's estimate of the peak; remat's: none, inductor's
            config allow_buffer_reuse off)
  fusion    horizontal fusion (InductorChoices.can_fuse_horizontal, up to
            64 nodes apart; remat's: compiled._choices)
  inductor  both

each step's peak measured (torch_peers.measure_mem) and their times in
interleaved rounds (torch_peers.timed_rounds: the same weights to start,
an SGD step after each timed one).

    build/venv-torch2/bin/python bench/torch_lowering.py --models gpt,resnet \\
        --fractions .45,.4 --against inductor,fusion --rounds 31 [--json FILE]

prints, per model and F (the budget is fixed memory + F x activations,
as bench/torch_compiled.py's remat-F), the model's peak, each lowering's
measured peak and median time, and the median of the paired ratios
(the other lowering's time over remat's) with a bootstrap 95% interval.
Inductor's caches are off, so each lowering is fresh.
"""
import argparse
import contextlib
import copy
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import checkmate_torch  # noqa: E402
import torch_cases  # noqa: E402
import torch_peers as tp  # noqa: E402


RULES = {"reuse": ("reuse",), "fusion": ("fusion",), "inductor": ("reuse", "fusion")}


@contextlib.contextmanager
def inductors(rules):
    """Inductor's own rules in place of remat's, for these RULES."""
    from checkmate_torch import compiled
    from torch._inductor.choices import InductorChoices
    ours = compiled._choices()
    fusion = ours.can_fuse_horizontal
    compiled._BUFFER_REUSE = "reuse" in rules
    if "fusion" in rules:
        ours.can_fuse_horizontal = staticmethod(InductorChoices.can_fuse_horizontal)
    try:
        yield
    finally:
        compiled._BUFFER_REUSE = False
        ours.can_fuse_horizontal = staticmethod(fusion)


def lowered(case, fraction, label, args, device):
    """A variant (torch_peers.Variant) of the partition at `fraction`, its
    first step lowering it with remat's rules, or inductor's where `label`
    names them (RULES), its peak measured (v.mem) after a second step."""
    model = copy.deepcopy(case["model"])
    r = checkmate_torch.remat(model, case["args"], case["kwargs"],
                              budget=lambda fixed, peak: int(fixed + fraction * (peak - fixed)),
                              time_limit=args.time_limit, cache=True, compile=True)
    v = tp.Variant(label, "remat", r, model, args.lr)
    with inductors(RULES.get(label, ())):   # "remat": none
        tp.warm(v, case, device, 1)   # the forward lowered, then the backward
    tp.warm(v, case, device, 1)
    v.mem = tp.measure_mem(v, case, device)
    v.extra["plan_info"] = r.plan_info
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="gpt")
    ap.add_argument("--fractions", default=".45,.4")
    ap.add_argument("--against", default="inductor",
                    help="comma-separated: " + ", ".join(RULES))
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--time-limit", type=float, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--json")
    torch_cases.add_size_arguments(ap)
    args = ap.parse_args()
    unknown = set(args.against.split(",")) - set(RULES)
    if unknown:
        ap.error("--against: unknown %s (known: %s)" % (", ".join(sorted(unknown)), ", ".join(RULES)))
    torch.set_num_threads(args.threads)
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    device = torch.device(args.device)
    rows = []
    for name in args.models.split(","):
        case = tp.CASES[name](args, args.device)
        base = case["model"]
        init = [t.detach().clone() for t in list(base.parameters()) + list(base.buffers())]
        for fraction in [float(f) for f in args.fractions.split(",")]:
            variants = [lowered(case, fraction, label, args, device)
                        for label in ["remat"] + args.against.split(",")]
            tp.timed_rounds(variants, init, case, device, args.rounds)
            ours = variants[0]
            info = ours.extra["plan_info"]
            row = dict(model=name, fraction=fraction, budget=info["budget"],
                       model_peak=info["plan_peak"] - info["fixed_memory"],
                       rounds=args.rounds, torch=torch.__version__, device=args.device)
            line = "%s F %g: model %.2f MB; remat %.2f MB %.1f ms" % (
                name, fraction, row["model_peak"] / 1e6, ours.mem["peak"] / 1e6,
                statistics.median(ours.wall))
            for v in variants:
                row[v.label] = dict(peak=v.mem["peak"], ms=statistics.median(v.wall),
                                    losses=v.losses)
                if v is ours:
                    continue
                row[v.label]["over_remat"] = tp.paired(ours.wall, v.wall)
                line += "; %s's %.2f MB %.1f ms, over remat's %.3f [%.3f, %.3f]" % (
                    v.label, v.mem["peak"] / 1e6, row[v.label]["ms"], *row[v.label]["over_remat"])
            rows.append(row)
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Models nobody here wrote: Hugging Face transformers built from small
configs (GPT-2, Llama, BERT, ViT), trained 3 AdamW steps under a plan that
recomputes, in fp32 and under bf16 autocast, equal 3 ordinary steps bit for
bit (losses, parameters, buffers); GPT-2 (with dropout) through
compile=True trains as through torch.compile; GPT-2 with its default
use_cache=True and a model after gradient_checkpointing_enable() are
refused in one line.

Usage: PYTHON tests/torch/t_hf.py [CHECKMATE_BINARY]. Prints TAP and ends
with "N passed, M failed"; where transformers does not import (it is in
build/venv-torch2, `make torch2`), one comment line says so."""
import copy
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

VOCAB = 128


def configs(tf):
    """name -> a function building the model from a small config."""
    return {
        "GPT-2": lambda: tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=VOCAB, n_positions=32, n_embd=64, n_layer=2, n_head=4,
            bos_token_id=0, eos_token_id=0)),
        "Llama": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(
            vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)),
        "BERT": lambda: tf.BertForMaskedLM(tf.BertConfig(
            vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=128, max_position_embeddings=32)),
        "ViT": lambda: tf.ViTForImageClassification(tf.ViTConfig(
            image_size=16, patch_size=4, num_channels=3, hidden_size=64, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=128, num_labels=5)),
    }


def batch(name, step, rows=2, length=16):
    """The call's keyword arguments and the loss's target for step."""
    g = torch.Generator().manual_seed(step)
    if name == "ViT":
        return {"pixel_values": torch.randn(rows, 3, 16, 16, generator=g)}, \
            torch.randint(0, 5, (rows,), generator=g)
    ids = torch.randint(0, VOCAB, (rows, length), generator=g)
    mask = torch.ones(rows, length, dtype=torch.long)
    mask[0, length * 3 // 4:] = 0
    kw = {"input_ids": ids, "attention_mask": mask}
    if name in ("GPT-2", "Llama"):
        kw["use_cache"] = False
    return kw, ids


class Logits(torch.nn.Module):
    """The model's logits: what a training loop takes from its output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, **kw):
        return self.model(**kw).logits


def loss_of(name, logits, target):
    if name == "ViT":
        return F.cross_entropy(logits.float(), target)
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB).float(), target[:, 1:].reshape(-1))


def train(name, model, call, autocast, rows=2, length=16):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    torch.manual_seed(1)
    losses = []
    for step in range(3):
        kw, target = batch(name, step, rows, length)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            logits = call(**kw)
        loss = loss_of(name, logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses + [t.detach().clone() for t in list(model.parameters()) +
                     list(model.buffers())] + [torch.get_rng_state()]


def equivalence(name, build, autocast):
    import checkmate_torch
    torch.manual_seed(0)
    base = Logits(build())
    base.train()
    plain = copy.deepcopy(base)
    want = train(name, plain, plain, autocast)
    model = copy.deepcopy(base)
    try:
        m = checkmate_torch.remat(model, (), batch(name, 0)[0], strategy="dtr",
                                  budget=lambda fixed, peak: fixed + (peak - fixed) * 6 // 10)
        got = train(name, model, m, autocast)
    except Exception as e:  # a refusal or a crash fails the line
        ok(False, "%s%s: trains under a plan" % (name, ", bf16 autocast" if autocast else ""),
           "%s: %s" % (type(e).__name__, e))
        return
    same = len(got) == len(want) and all(torch.equal(a, b) for a, b in zip(got, want))
    ok(same, "%s%s: 3 AdamW steps equal ordinary ones bitwise (plan: %d computes of %d nodes, "
       "run as %s%s)" % (name, ", bf16 autocast" if autocast else "", m.plan_info["computes"],
                         m.plan_info["nodes"], m.plan_info["runner"],
                         ": %s" % m.plan_info["runner_note"] if m.plan_info["runner_note"]
                         else ""))


def compiled(name, build):
    """compile=True (torch.compile with checkmate's partition) at a budget
    where the backward recomputes: the losses and the random state of 3
    AdamW steps as torch.compile's (a batch of 32 x 32 tokens, so that
    activations outweigh the parameters)."""
    import checkmate_torch
    from checkmate_torch import compiled as cm
    if not cm.has_hook():
        ok(True, "%s, compile=True: refused on this torch (no partitioner hook)" % name)
        return
    torch.manual_seed(0)
    base = Logits(build())
    base.train()
    plain = copy.deepcopy(base)
    want = train(name, plain, torch.compile(plain, fullgraph=True, dynamic=False), False, 32, 32)
    model = copy.deepcopy(base)
    try:
        m = checkmate_torch.remat(model, (), batch(name, 0, 32, 32)[0], compile=True,
                                  budget=lambda fixed, peak: int(fixed + (peak - fixed) * 0.4))
        got = train(name, model, m, False, 32, 32)
    except Exception as e:
        ok(False, "%s, compile=True: trains" % name, "%s: %s" % (type(e).__name__, e))
        return
    rel = max(abs(float(a) - float(b)) / abs(float(b)) for a, b in zip(got[:3], want[:3]))
    ok(rel < 1e-5 and torch.equal(got[-1], want[-1]) and m.plan_info["recomputed"] > 0,
       "%s, compile=True: 3 AdamW steps' losses as torch.compile's, the random state equal "
       "(%d ops recomputed)" % (name, m.plan_info["recomputed"]), "loss rel. diff %.2e" % rel)


def refusals(build):
    import checkmate_torch
    torch.manual_seed(0)
    kw, _ = batch("GPT-2", 0)
    del kw["use_cache"]
    model = build()
    model.train()
    for what, words, prepare in (
            ("GPT-2 with its default use_cache=True", ["use_cache=False"], lambda m: m),
            ("GPT-2 after gradient_checkpointing_enable()", ["checkpoints itself"],
             lambda m: m.gradient_checkpointing_enable() or m)):
        try:
            checkmate_torch.remat(prepare(copy.deepcopy(model)), (), kw, budget="100%",
                                  strategy="dtr")
            ok(False, "%s: refused" % what, "accepted")
        except Exception as e:
            msg = str(e)
            ok(all(w in msg for w in words) and "\n" not in msg,
               "%s: refused in one line: %s" % (what, msg), "%s: %s" % (type(e).__name__, e))


def main():
    torch_setup()
    try:
        import transformers as tf
        tf.logging.set_verbosity_error()
    except ImportError:
        print("# skipped: transformers does not import here")
        finish()
    remat_or_finish()
    print("# transformers %s" % tf.__version__)
    builds = configs(tf)
    for name, build in builds.items():
        for autocast in (False, True):
            equivalence(name, build, autocast)
    compiled("GPT-2", builds["GPT-2"])
    refusals(builds["GPT-2"])
    finish()


if __name__ == "__main__":
    main()

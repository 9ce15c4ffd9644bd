#!/usr/bin/python3
"""Models nobody here wrote: Hugging Face transformers built from small
configs (GPT-2, Llama, BERT, ViT, and ALBERT, whose layers share their
weights), trained 3 AdamW steps under a plan that recomputes, in fp32 and
under bf16 autocast, equal 3 ordinary steps bit for bit (losses,
parameters, buffers); GPT-2 (with dropout) through compile=True trains as
through torch.compile; GPT-2 and Llama called with labels=, the example
passing the ids as the labels and later calls masked labels, bit for bit
(GPT-2 through compile=True too, within 1e-4 of torch.compile's, which
breaks the graph where transformers logs); GPT-2 with its default
use_cache=True and a model
after gradient_checkpointing_enable() are refused in one line. --all adds
19 more architectures (decoders, encoders, T5, vision models with batch
norm and drop path) to the equivalence lines: a run by hand (80 s here),
not part of `make test`.

Usage: PYTHON tests/torch/t_hf.py [--all] [CHECKMATE_BINARY]. Prints TAP and
ends with "N passed, M failed"; where transformers does not import (it is
in build/venv-torch2, `make torch2`), one comment line says so."""
import copy
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import LONG, finish, long_checks, ok, remat_or_finish, skip, torch_setup  # noqa: E402

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
        "ALBERT": lambda: tf.AlbertForMaskedLM(tf.AlbertConfig(
            vocab_size=VOCAB, embedding_size=32, max_position_embeddings=32, **SMALL)),
    }


SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)


def more_configs(tf):
    """--all's architectures."""
    def lm(cls, conf, **kw):
        return lambda: cls(conf(vocab_size=VOCAB, **kw))
    return {
        "OPT": lm(tf.OPTForCausalLM, tf.OPTConfig, hidden_size=64, num_hidden_layers=2,
                  ffn_dim=128, num_attention_heads=4, max_position_embeddings=32,
                  word_embed_proj_dim=64),
        "Mistral": lm(tf.MistralForCausalLM, tf.MistralConfig, num_key_value_heads=2,
                      max_position_embeddings=32, **SMALL),
        "Qwen2": lm(tf.Qwen2ForCausalLM, tf.Qwen2Config, num_key_value_heads=2,
                    max_position_embeddings=32, **SMALL),
        "GPT-Neo": lm(tf.GPTNeoForCausalLM, tf.GPTNeoConfig, hidden_size=64, num_layers=2,
                      num_heads=4, attention_types=[[["global", "local"], 1]],
                      max_position_embeddings=32, window_size=8),
        "Phi": lm(tf.PhiForCausalLM, tf.PhiConfig, max_position_embeddings=32, **SMALL),
        "Gemma": lm(tf.GemmaForCausalLM, tf.GemmaConfig, num_key_value_heads=2, head_dim=16,
                    max_position_embeddings=32, **SMALL),
        "BLOOM": lm(tf.BloomForCausalLM, tf.BloomConfig, hidden_size=64, n_layer=2, n_head=4),
        "GPT-NeoX": lm(tf.GPTNeoXForCausalLM, tf.GPTNeoXConfig, max_position_embeddings=32,
                       **SMALL),
        "RoBERTa": lm(tf.RobertaForMaskedLM, tf.RobertaConfig, max_position_embeddings=40,
                      **SMALL),
        "DistilBERT": lm(tf.DistilBertForMaskedLM, tf.DistilBertConfig, dim=64, n_layers=2,
                         n_heads=4, hidden_dim=128, max_position_embeddings=32),
        "DeBERTa-v2": lm(tf.DebertaV2ForMaskedLM, tf.DebertaV2Config,
                         max_position_embeddings=32, **SMALL),
        "ELECTRA": lm(tf.ElectraForMaskedLM, tf.ElectraConfig, embedding_size=32,
                      max_position_embeddings=32, **SMALL),
        "T5": lm(tf.T5ForConditionalGeneration, tf.T5Config, d_model=64, d_kv=16, d_ff=128,
                 num_layers=2, num_heads=4, decoder_start_token_id=0),
        "ResNet": lambda: tf.ResNetForImageClassification(tf.ResNetConfig(
            embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], num_labels=5,
            layer_type="bottleneck")),
        "ConvNeXt": lambda: tf.ConvNextForImageClassification(tf.ConvNextConfig(
            num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=5,
            drop_path_rate=0.1)),
        "Swin": lambda: tf.SwinForImageClassification(tf.SwinConfig(
            image_size=16, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 2],
            window_size=4, num_labels=5, drop_path_rate=0.1)),
        "MobileNetV2": lambda: tf.MobileNetV2ForImageClassification(tf.MobileNetV2Config(
            image_size=16, depth_multiplier=0.35, num_labels=5)),
        "RegNet": lambda: tf.RegNetForImageClassification(tf.RegNetConfig(
            embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8,
            num_labels=5)),
        "DeiT": lambda: tf.DeiTForImageClassification(tf.DeiTConfig(
            image_size=16, patch_size=4, num_labels=5, **SMALL)),
    }


IMAGES = {"ViT", "ResNet", "ConvNeXt", "Swin", "MobileNetV2", "RegNet", "DeiT"}
NO_CACHE = {"GPT-2", "Llama", "OPT", "Mistral", "Qwen2", "GPT-Neo", "Phi", "Gemma", "BLOOM",
            "GPT-NeoX", "T5"}


def batch(name, step, rows=2, length=16):
    """The call's keyword arguments and the loss's target for step."""
    g = torch.Generator().manual_seed(step)
    if name in IMAGES:
        return {"pixel_values": torch.randn(rows, 3, 16, 16, generator=g)}, \
            torch.randint(0, 5, (rows,), generator=g)
    ids = torch.randint(0, VOCAB, (rows, length), generator=g)
    mask = torch.ones(rows, length, dtype=torch.long)
    mask[0, length * 3 // 4:] = 0
    kw = {"input_ids": ids, "attention_mask": mask}
    if name == "T5":
        kw["decoder_input_ids"] = ids
    if name in NO_CACHE:
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
    if name in IMAGES:
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
    torch.manual_seed(0)
    base = Logits(build())
    base.train()
    plain = copy.deepcopy(base)
    want = train(name, plain, plain, autocast)
    model = copy.deepcopy(base)
    try:
        m = plan(model, batch(name, 0)[0])
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


def plan(model, kw):
    """dtr's plan at fixed memory + 60% of the activations, or 80% or 100%
    where none fits (a small ResNet's least plan needs more)."""
    import checkmate_torch
    from checkmate_torch.solve import SolveError
    for tenths in (6, 8, 10):
        try:
            return checkmate_torch.remat(
                model, (), kw, strategy="dtr",
                budget=lambda fixed, peak: fixed + (peak - fixed) * tenths // 10)
        except SolveError:
            if tenths == 10:
                raise


def compiled(name, build):
    """compile=True (torch.compile with checkmate's partition) at a budget
    where the backward recomputes: the losses and the random state of 3
    AdamW steps as torch.compile's (a batch of 32 x 32 tokens, so that
    activations outweigh the parameters)."""
    import checkmate_torch
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


def lm_calls(step, rows=2, length=16):
    """A causal LM's call with labels: at step 0 the ids themselves (the
    usual example, one tensor twice), later labels of their own with the
    padding masked (-100), as a collator makes them."""
    g = torch.Generator().manual_seed(50 + step)
    ids = torch.randint(0, VOCAB, (rows, length), generator=g)
    if step == 0:
        return {"input_ids": ids, "labels": ids}
    labels = ids.clone()
    labels[0, length * 3 // 4:] = -100
    return {"input_ids": ids, "labels": labels}


def train_lm(model, call, rows, length):
    """3 AdamW steps on the model's own loss (labels=): the losses, then
    the parameters."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    torch.manual_seed(1)
    losses = []
    for step in range(3):
        loss = call(**lm_calls(step, rows, length)).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses + [p.detach().clone() for p in model.parameters()]


def labels_loop(name, build, compiled):
    """The causal LM called with labels=, the example passing its ids as
    its labels and later calls masked labels: eager bit for bit as the
    ordinary loop; with compiled, compile=True (a batch of 16 x 32) within 1e-4 of
    torch.compile's losses, which breaks the graph where the model logs
    (transformers' warning_once) and compile=True does not."""
    import checkmate_torch
    torch.manual_seed(0)
    base = build()
    base.config.use_cache = False
    base.train()
    plain = copy.deepcopy(base)
    want = train_lm(plain, plain, 2, 16)
    model = copy.deepcopy(base)
    try:
        m = checkmate_torch.remat(model, (), lm_calls(0), strategy="dtr",
                                  budget=lambda fixed, peak: fixed + (peak - fixed) * 8 // 10)
        got = train_lm(model, m, 2, 16)
        same = all(torch.equal(a, b) for a, b in zip(got, want))
        ok(same, "%s(labels=): example labels=input_ids, later masked labels: 3 AdamW steps "
           "equal ordinary ones bitwise (%d computes of %d nodes)"
           % (name, m.plan_info["computes"], m.plan_info["nodes"]))
    except Exception as e:
        ok(False, "%s(labels=): trains under a plan" % name, "%s: %s" % (type(e).__name__, e))
    if not compiled:
        return
    plain = copy.deepcopy(base)
    torch._dynamo.reset()
    want = train_lm(plain, torch.compile(plain, dynamic=False), 16, 32)[:3]
    for frac in (0.5, 0.8, 1.0):
        torch._dynamo.reset()
        model = copy.deepcopy(base)
        try:
            m = checkmate_torch.remat(
                model, (), lm_calls(0, 16, 32), compile=True,
                budget=lambda fixed, peak: int(fixed + (peak - fixed) * frac))
            got = train_lm(model, m, 16, 32)[:3]
            break
        except Exception as e:
            err = e
            if frac == 1.0 or "least budget" not in str(e):
                ok(False, "%s(labels=), compile=True: trains" % name,
                   "%s: %s" % (type(err).__name__, err))
                return
    rel = max(abs(float(a) - float(b)) / abs(float(b)) for a, b in zip(got, want))
    ok(rel < 1e-4, "%s(labels=), compile=True at fixed memory + %g of the activations: losses "
       "within 1e-4 of torch.compile's (%.1e; %d ops recomputed)"
       % (name, frac, rel, m.plan_info["recomputed"]), "loss rel. diff %.2e" % rel)


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
    wide = "--all" in sys.argv
    if wide:
        sys.argv.remove("--all")
    torch_setup()
    try:
        import transformers as tf
        tf.logging.set_verbosity_error()
    except ImportError:
        skip("Hugging Face models train under a plan", "transformers does not import here")
        finish()
    remat_or_finish()
    print("# transformers %s" % tf.__version__)
    builds = configs(tf)
    checked = dict(builds, **(more_configs(tf) if wide else {}))
    for name, build in checked.items():
        for autocast in (False, True):
            equivalence(name, build, autocast)
    if long_checks("compile=True on GPT-2, with and without labels="):
        compiled("GPT-2", builds["GPT-2"])
    labels_loop("GPT-2", builds["GPT-2"], LONG)
    labels_loop("Llama", builds["Llama"], False)
    refusals(builds["GPT-2"])
    finish()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Selective checkpointing policies for a budget (checkmate_torch.sac_policy,
sac_blocks): on a stack of MLP blocks, on our GPT and on Hugging Face's
GPT-2 and Llama (dropout in all four),
each block checkpointed with its policy, 5 AdamW steps equal the same
model trained without checkpointing, bit for bit (losses, parameters,
gradients); as the budget falls over 6 budgets, what one region holds
after its forward (measured: the bytes live after checkpoint(block, ...)
returns, less its output and the generator state checkpoint keeps) is
the model's saved bytes within 1 KiB, and the step's measured peak does
not rise and stays within the model: the peak of plain per-block
checkpointing (measured) plus every region's saved bytes, plus 4 KiB; at
the bytes torch's op-list policies hold (save every matmul, every second
one), the policy runs no more FLOPs again and its step peaks no higher;
under torch.compile (MLP blocks, 3 budgets; GPT, HF GPT-2 and Llama,
whose attention inductor decomposes further, in the long suite), 3
AdamW steps' losses are torch.compile's without the policy within 1e-4,
and on the MLP blocks the measured peak does not rise as the budget falls
(GPT's peaks are printed: they need not fall); sac_blocks(compile=True)
(long suite: MLP blocks, GPT, HF GPT-2, Llama) as the budget falls until
it refuses one: torch.compile's losses, each policy's measured peak
within its budget, the step's peak never rising, the refusal one line;
sac_policy(compile=True) refuses a budget below fixed memory, one not a
size and a block dynamo breaks, in one line, and measures a policy
within its budget (fast suite); per block under FSDP2
(fully_shard) on 2 gloo processes (sac_fsdp.py), 3 AdamW steps equal
those with the blocks checkpointed fully and those without checkpointing,
bit for bit; a region whose ops differ
from the example's (a branch taken or not) is a one-line error, in the
forward where it runs another op, in the backward where it runs fewer;
a region that writes a buffer (a counter, BatchNorm's statistics) is
refused in one line in either mode; a region that hooks a tensor and a
Linear whose output ReLU(inplace=True) writes, with either mode's
policy, train bit for bit (and with compile=True's, within 1e-4 under
torch.compile).
Run on torch 2.13 and 2.14 (sac.TESTED).

Usage: PYTHON tests/torch/t_sac.py [CHECKMATE_BINARY]. Prints TAP and
ends with "N passed, M failed"."""
import copy
import functools
import os
import pickle
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import finish, long_checks, ok, remat_or_finish, skip, torch_setup  # noqa: E402

if __name__ == "__main__":
    torch = torch_setup()
    remat_or_finish()
else:   # a process of check_fsdp's spawn, which imports this program again
    import torch

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import checkmate_torch  # noqa: E402
from checkmate_torch.examples import oplist  # noqa: E402
from checkmate_torch.examples.gpt import GPT  # noqa: E402
from checkmate_torch.measure import step_peak  # noqa: E402
from checkmate_torch.sac import SACError  # noqa: E402
from checkmate_torch.trace import tensors_of  # noqa: E402

FRACTIONS = (1.0, 0.8, 0.6, 0.4, 0.2, 0.0)
HELD_SLACK = 1024       # bytes: what one region's forward leaves besides the model's
PEAK_SLACK = 4096       # bytes: the step's peak over the model's


class MLPBlock(nn.Module):
    def __init__(self, d, extra=False):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(0.2)

    def forward(self, x, extra=False):
        y = x + self.out(self.drop(F.gelu(self.fc(self.ln(x)))))
        return torch.tanh(y) if extra else y


class MLP(nn.Module):
    def __init__(self, d=32, layers=3):
        super().__init__()
        self.blocks = nn.ModuleList(MLPBlock(d) for _ in range(layers))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def mlp_case():
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(64, 32)
    y = torch.randint(0, 10, (64,))
    return "MLP blocks", model, lambda m: m.blocks, (x,), {}, lambda out: F.cross_entropy(out, y)


def gpt_case():
    torch.manual_seed(0)
    model = GPT(layers=3)
    ids = torch.randint(0, 256, (8, 16))
    mask = torch.ones(8, 16, dtype=torch.bool)
    mask[0, 12:] = False
    target = torch.roll(ids, -1, 1)
    return "GPT", model, lambda m: m.blocks, (ids,), {"attention_mask": mask}, \
        lambda out: F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))


def hf_gpt2_case():
    """Hugging Face's GPT-2, small (dropout 0.1 in attention, residuals and
    embeddings), or None without transformers."""
    try:
        import transformers as tf
    except ImportError:
        return None
    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(
        vocab_size=128, n_positions=32, n_embd=64, n_layer=3, n_head=4,
        bos_token_id=0, eos_token_id=0))
    model.train()
    ids = torch.randint(0, 128, (4, 16))
    target = torch.roll(ids, -1, 1)
    return "HF GPT-2", model, lambda m: m.transformer.h, (), \
        {"input_ids": ids, "use_cache": False}, \
        lambda out: F.cross_entropy(out.logits.reshape(-1, 128), target.reshape(-1))


def hf_llama_case():
    """Hugging Face's Llama, small (attention dropout 0.1), or None without
    transformers."""
    try:
        import transformers as tf
    except ImportError:
        return None
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
        attention_dropout=0.1))
    model.train()
    ids = torch.randint(0, 128, (4, 16))
    target = torch.roll(ids, -1, 1)
    return "HF Llama", model, lambda m: m.model.layers, (), \
        {"input_ids": ids, "use_cache": False}, \
        lambda out: F.cross_entropy(out.logits.reshape(-1, 128), target.reshape(-1))


def budget_at(f):
    return lambda fixed, peak: fixed + int(f * (peak - fixed))


def train(model, args, kwargs, loss_of, steps=5):
    torch.manual_seed(1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(model(*args, **kwargs))
        loss.backward()
        losses.append(loss.detach().clone())
        grads.append([p.grad.clone() for p in model.parameters()])
        opt.step()
    return losses, grads, [p.detach().clone() for p in model.parameters()]


def same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b)) and len(a) == len(b)


def trained_alike(want, have):
    """train's losses, gradients and parameters, equal bit for bit."""
    return (same(want[0], have[0]) and all(same(a, b) for a, b in zip(want[1], have[1]))
            and same(want[2], have[2]))


def check_bits(name, base, blocks_of, args, kwargs, loss_of, f):
    ref = copy.deepcopy(base)
    got = copy.deepcopy(base)
    pols = checkmate_torch.sac_blocks(got, blocks_of(got), args, kwargs, budget=budget_at(f))
    want = train(ref, args, kwargs, loss_of)
    have = train(got, args, kwargs, loss_of)
    info = pols[0].info
    ok(trained_alike(want, have),
       "%s, budget fixed + %.0f%%: 5 AdamW steps equal ordinary training bit for bit "
       "(saves %d of %d ops, %d bytes a block)"
       % (name, 100 * f, info["saved"], info["ops"], info["saved_bytes"]),
       "losses %s vs %s" % ([float(v) for v in want[0]], [float(v) for v in have[0]]))


def held_by_region(block, a, k, policy):
    """Bytes live after checkpoint(block, ...) returns, less its output and
    the generator state it keeps."""
    outs = []

    def run():
        outs.append(checkpoint(block, *a, use_reentrant=False, context_fn=policy, **k))
    net = step_peak(run, "cpu")["net"]
    out_bytes = sum(t.numel() * t.element_size() for t in tensors_of(outs))
    return net - out_bytes - torch.get_rng_state().numel()


def step_peak_of(model, args, kwargs, loss_of):
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    torch.manual_seed(2)

    def run():
        loss_of(model(*args, **kwargs)).backward()
    return step_peak(run, "cpu")["peak"]


def check_budgets(name, base, blocks_of, args, kwargs, loss_of):
    rows = []
    for f in FRACTIONS:
        model = copy.deepcopy(base)
        got = {"x": first_block_inputs(base, blocks_of, args, kwargs)}
        pols = checkmate_torch.sac_blocks(model, blocks_of(model), args, kwargs,
                                          budget=budget_at(f))
        block0 = copy.deepcopy(blocks_of(base)[0])
        with torch.random.fork_rng():
            held = held_by_region(block0, got["x"][0], got["x"][1], pols[0])
        peak = step_peak_of(model, args, kwargs, loss_of)
        rows.append((f, pols, held, peak))
    base_peak = rows[-1][3]
    ok(all(p.info["saved"] == 0 for p in rows[-1][1]),
       "%s: at fixed memory alone no op is saved (plain checkpointing)" % name)
    for f, pols, held, peak in rows:
        info = pols[0].info
        ok(abs(held - info["saved_bytes"]) <= HELD_SLACK,
           "%s, fixed + %.0f%%: a region holds %d bytes after its forward, the model %d "
           "(fixed %d, budget %d, model peak %d, overhead %.3f, plain checkpoint %.3f)"
           % (name, 100 * f, held, info["saved_bytes"], info["fixed_memory"], info["budget"],
              info["model_peak"], info["overhead"], info["full_overhead"]))
        predicted = base_peak + sum(p.info["saved_bytes"] for p in pols)
        ok(peak <= predicted + PEAK_SLACK,
           "%s, fixed + %.0f%%: step peak %d <= plain checkpointing's %d + saved %d + %d"
           % (name, 100 * f, peak, base_peak, predicted - base_peak, PEAK_SLACK))
    peaks = [r[3] for r in rows]
    ok(all(b <= a for a, b in zip(peaks, peaks[1:])) and peaks[-1] < peaks[0],
       "%s: the step's peak does not rise as the budget falls, and falls: %s" % (name, peaks))


MATMULS = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default)


def op_list_context(every_second):
    return oplist.op_list_context(every_second, MATMULS)


def with_context(model, blocks_of, context_fn):
    def call(forward, *a, **k):
        return checkpoint(forward, *a, use_reentrant=False, context_fn=context_fn, **k)
    for blk in blocks_of(model):
        blk.forward = functools.partial(call, blk.forward)
    return model


def check_op_lists(name, base, blocks_of, args, kwargs, loss_of):
    """At the bytes an op-list policy saves, ours runs no more FLOPs again
    (the same cost table), and its step's measured peak is no higher."""
    from checkmate_torch.sac import Region
    a, k = first_block_inputs(base, blocks_of, args, kwargs)
    region = Region(copy.deepcopy(blocks_of(base)[0]), a, k)
    mats = [n for n in region.ops if n.target in MATMULS]
    for every_second, what in ((False, "every matmul"), (True, "every second matmul")):
        kept = mats[::2] if every_second else mats
        held = sum(region.bytes[n] for n in kept)
        again = sum(region.cost[n] for i, n in enumerate(region.ops)
                    if i <= region.stop and n not in kept)
        mine = copy.deepcopy(base)
        pols = checkmate_torch.sac_blocks(mine, blocks_of(mine), args, kwargs,
                                          budget=lambda fixed, peak: fixed + held)
        theirs = with_context(copy.deepcopy(base), blocks_of, op_list_context(every_second))
        p_ours = step_peak_of(mine, args, kwargs, loss_of)
        p_theirs = step_peak_of(theirs, args, kwargs, loss_of)
        info = pols[0].info
        ok(info["recompute"] <= again and info["saved_bytes"] <= held and
           p_ours <= p_theirs + PEAK_SLACK,
           "%s: at the %d bytes a block that saving %s holds, ours runs %d FLOPs again "
           "(theirs %d), step peak %d (theirs %d)"
           % (name, held, what, info["recompute"], again, p_ours, p_theirs))


def first_block_inputs(base, blocks_of, args, kwargs):
    """The (args, kwargs) the first block gets in a forward of a copy of
    base on the example."""
    model = copy.deepcopy(base)
    got = {}
    h = blocks_of(model)[0].register_forward_pre_hook(
        lambda m, a, k: got.setdefault("x", (tuple(v.detach().requires_grad_(
            v.requires_grad) if isinstance(v, torch.Tensor) else v for v in a), k)),
        with_kwargs=True)
    with torch.random.fork_rng():
        model(*args, **kwargs)
    h.remove()
    return got["x"]


COMPILE_FRACTIONS = (1.0, 0.6, 0.4, 0.2, 0.1, 0.0)
COMPILE_LOSS_TOL = 1e-4


def compiled_run(model, args, kwargs, loss_of, steps=3):
    """The losses of AdamW steps of torch.compile(model), and the measured
    peak of one step more."""
    torch._dynamo.reset()
    run_model = torch.compile(model)
    torch.manual_seed(1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(run_model(*args, **kwargs))
        loss.backward()
        losses.append(float(loss.detach()))
        opt.step()
    return losses, step_peak_of(run_model, args, kwargs, loss_of)


def check_compiled(name, base, blocks_of, args, kwargs, loss_of, peaks=True,
                   fractions=COMPILE_FRACTIONS):
    """Under torch.compile, each block with its policy: torch.compile's
    losses without one within COMPILE_LOSS_TOL; the step's measured peak
    does not rise as the budget falls, and falls."""
    want, plain_peak = compiled_run(copy.deepcopy(base), args, kwargs, loss_of)
    rows = []
    for f in fractions:
        model = copy.deepcopy(base)
        pols = checkmate_torch.sac_blocks(model, blocks_of(model), args, kwargs,
                                          budget=budget_at(f))
        have, peak = compiled_run(model, args, kwargs, loss_of)
        rows.append(peak)
        worst = max(abs(a - b) for a, b in zip(want, have))
        ok(worst <= COMPILE_LOSS_TOL,
           "%s under torch.compile, fixed + %.0f%%: 3 AdamW steps' losses within %g of "
           "torch.compile's without the policy (%.2g; saves %d of %d ops a block there, "
           "%d eager; step peak %d, without the policy %d)"
           % (name, 100 * f, COMPILE_LOSS_TOL, worst, pols[0].info["compile_saved"],
              pols[0].info["compile_ops"], pols[0].info["saved"], peak, plain_peak),
           "losses %s vs %s" % (want, have))
    torch._dynamo.reset()
    if peaks:
        ok(all(b <= a for a, b in zip(rows, rows[1:])) and rows[-1] < rows[0],
           "%s under torch.compile: the step's peak does not rise as the budget falls, and "
           "falls: %s" % (name, rows))
    else:
        print("# %s under torch.compile, the step's peaks: %s" % (name, rows))


PLANNED_FRACTIONS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.5, 0.4)


def check_planned(name, base, blocks_of, args, kwargs, loss_of, fractions=PLANNED_FRACTIONS,
                  least=5):
    """sac_blocks(compile=True) as the budget falls (fixed + a fraction of
    the compiled step's peak without a policy) until it refuses one: at
    each budget it takes, 3 AdamW steps of torch.compile(model) have
    torch.compile's losses without the policy (COMPILE_LOSS_TOL), the
    policy's measured peak is within the budget, and the step's peak as
    measured here does not rise from one budget to the next; at least
    `least` budgets taken; the first refused in one line, naming the
    least peak measured."""
    want, plain_peak = compiled_run(copy.deepcopy(base), args, kwargs, loss_of)
    rows, bad, refusal = [], [], None
    for f in fractions:
        model = copy.deepcopy(base)
        began = time.time()
        try:
            pols = checkmate_torch.sac_blocks(model, blocks_of(model), args, kwargs,
                                              budget=budget_at(f), compile=True)
        except SACError as e:
            refusal = str(e)
            break
        planned = time.time() - began
        have, peak = compiled_run(model, args, kwargs, loss_of)
        info = pols[0].info
        worst = max(abs(a - b) for a, b in zip(want, have))
        rows.append((f, peak, info["compile_saved"], info["measured"], planned))
        if worst > COMPILE_LOSS_TOL or info["measured_peak"] > info["budget"]:
            bad.append((f, worst, info["measured_peak"], info["budget"]))
    torch._dynamo.reset()
    peaks = [r[1] for r in rows]
    ok(not bad and len(rows) >= least and all(b <= a for a, b in zip(peaks, peaks[1:])),
       "%s, sac_blocks(compile=True) at %d budgets from fixed + 100%% of the compiled step's "
       "peak down: losses within %g of torch.compile's without a policy, each policy's "
       "measured peak within its budget, the step's peak never rising (%s; without a policy "
       "%d)" % (name, len(rows), COMPILE_LOSS_TOL, ", ".join(
           "%.2f: %d B, %d saved, %d measured, %.0f s" % r for r in rows), plain_peak),
       "wrong: %s" % bad)
    ok(refusal is not None and "\n" not in refusal and "least measured peak" in refusal,
       "%s, sac_blocks(compile=True) below every candidate's peak: refused in one line: %s"
       % (name, refusal))


def check_planned_refusals():
    """sac_policy(compile=True) on one block: a budget below its fixed
    memory, or not a size, refused in one line before anything compiles;
    a block that breaks dynamo's graph, in one line; at a budget every
    candidate fits, the cheapest, measured once, within it."""
    torch.manual_seed(0)
    blk = MLPBlock(16)
    x = torch.randn(4, 16, requires_grad=True)
    for budget, what in ((lambda fixed, peak: fixed - 1, "below fixed memory"),
                         ("lots", "not a size")):
        try:
            checkmate_torch.sac_policy(blk, x, budget=budget, compile=True)
            ok(False, "compile=True, a budget %s: refused" % what)
        except SACError as e:
            ok("\n" not in str(e), "compile=True, a budget %s: refused in one line: %s"
               % (what, e))
    class Branchy(nn.Module):   # a branch on a value: dynamo breaks its graph
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 16)

        def forward(self, v):
            h = self.fc(v)
            return h * 2 if h.sum().item() > 0 else h
    try:
        checkmate_torch.sac_policy(Branchy(), x, budget="1G", compile=True)
        ok(False, "compile=True, a block torch.compile breaks: refused")
    except SACError as e:
        ok("\n" not in str(e), "compile=True, a block torch.compile breaks: refused in one "
           "line: %s" % e)
    p = checkmate_torch.sac_policy(blk, x, budget="1G", compile=True)
    ok(p.info["planned_for"] == "compile" and p.info["measured"] == 1
       and p.info["measured_peak"] <= p.info["budget"] == 1 << 30,
       "sac_policy(compile=True) at 1G: the cheapest candidate, measured once (%d bytes), "
       "keeping %d of %d ops" % (p.info["measured_peak"], p.info["compile_saved"],
                                p.info["compile_ops"]))


class Counting(nn.Module):     # writes a buffer in its forward
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.register_buffer("n", torch.zeros(()))

    def forward(self, v):
        self.n += 1
        return torch.tanh(self.fc(v)) * (1 + 0.1 * self.n)


class Hooked(nn.Module):       # registers a gradient hook on a value of its forward
    def __init__(self):
        super().__init__()
        self.fc, self.out = nn.Linear(16, 32), nn.Linear(32, 16)

    def forward(self, v):
        h = torch.tanh(self.fc(v))
        h.register_hook(lambda g: g * 0.5)
        return self.out(h)


class InPlace(nn.Module):      # a Linear's output written by ReLU(inplace=True)
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 4)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, v):
        return self.c(torch.tanh(self.b(self.relu(self.a(v)))))


def check_unsafe_regions():
    """A region that writes a buffer (a counter; BatchNorm's running
    statistics), which a policy cannot checkpoint as it is, refused in
    one line in either mode; a region that hooks a tensor, and a Linear
    whose output ReLU(inplace=True) writes (the compile policy's eager
    side keeps no value written later: torch's checkpoint raises where
    it does), trained as without the policy, eager and under
    torch.compile."""
    torch.manual_seed(0)
    x = torch.randn(8, 16)
    bn = nn.Sequential(nn.Linear(16, 16), nn.BatchNorm1d(16))
    for blk, compile, what, named in ((Counting(), False, "a buffer counter", "buffer n"),
                                      (Counting(), True, "a buffer counter", "buffer n"),
                                      (bn, False, "BatchNorm", "buffer 1.running_mean")):
        mode = "compile=True" if compile else "eager"
        try:
            checkmate_torch.sac_policy(blk, x, budget="1G", compile=compile)
            ok(False, "%s, a region with %s: refused" % (mode, what))
        except SACError as e:
            ok("\n" not in str(e) and named in str(e),
               "%s, a region with %s: refused in one line: %s" % (mode, what, e))
    loss_of = lambda out: out.square().mean()      # noqa: E731
    for cls, compile in ((Hooked, False), (Hooked, True), (InPlace, False), (InPlace, True)):
        torch.manual_seed(0)
        base = cls()
        p = checkmate_torch.sac_policy(base, x, budget="1G", compile=compile, time_limit=10)
        whole = lambda m: [m]      # noqa: E731
        want = train(copy.deepcopy(base), (x,), {}, loss_of, steps=3)
        have = train(with_context(copy.deepcopy(base), whole, p), (x,), {}, loss_of, steps=3)
        ok(trained_alike(want, have),
           "%s with %s's policy (saves %d of %d ops), eager: 3 steps bit for bit"
           % (cls.__name__, "compile=True" if compile else "eager", p.info["saved"],
              p.info["ops"]))
        if compile:
            losses, _ = compiled_run(copy.deepcopy(base), (x,), {}, loss_of)
            mine, _ = compiled_run(with_context(copy.deepcopy(base), whole, p), (x,), {},
                                   loss_of)
            kept = (torch.ops.aten.addmm.default, 0) in p.args[0].modes["compile"][1]
            ok(not (cls is InPlace and kept)
               and max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(mine, losses))
               <= COMPILE_LOSS_TOL,
               "%s, compile=True%s (%d of %d kept): torch.compile's losses within %g"
               % (cls.__name__, ": the written Linear output not kept" if cls is InPlace
                  else "", p.info["compile_saved"], p.info["compile_ops"], COMPILE_LOSS_TOL))


FSDP_FRACTION = 0.5


def check_fsdp():
    """Per block under FSDP2 (fully_shard) on 2 gloo processes on the CPU
    (sac_fsdp.py): 3 AdamW steps with each block's policy equal those with
    each block checkpointed fully, and without checkpointing, bit for bit
    (each process's losses, the full parameters after)."""
    import tempfile
    import torch.distributed as dist
    what = "GPT per block under FSDP2 on 2 gloo processes"
    try:
        from torch.distributed.fsdp import fully_shard  # noqa: F401
    except ImportError as e:
        return skip(what, "torch %s has no torch.distributed.fsdp.fully_shard (%s)"
                    % (torch.__version__, e))
    if not dist.is_available() or not dist.is_gloo_available():
        return skip(what, "torch %s is built without gloo" % torch.__version__)
    import sac_fsdp
    with tempfile.TemporaryDirectory(prefix="checkmate-fsdp-") as d:
        torch.multiprocessing.spawn(sac_fsdp.worker, args=(2, os.path.join(d, "init"), d,
                                                           FSDP_FRACTION), nprocs=2)
        got = [torch.load(os.path.join(d, "rank%d.pt" % r)) for r in range(2)]
    for other in ("checkpoint", "plain"):
        equal = all(same(g["policy"][0], g[other][0]) and same(g["policy"][1], g[other][1])
                    for g in got)
        ok(equal and not same(got[0]["policy"][0], got[1]["policy"][0]),
           "%s, budget fixed + %.0f%% (saves %s ops a block): 3 AdamW steps equal those with "
           "the blocks %s, bit for bit (each process's losses, the parameters after)"
           % (what, 100 * FSDP_FRACTION, got[0]["policy"][2],
              "checkpointed fully" if other == "checkpoint" else "not checkpointed"),
           "losses %s vs %s" % ([[float(v) for v in g["policy"][0]] for g in got],
                                [[float(v) for v in g[other][0]] for g in got]))


def check_mismatch():
    torch.manual_seed(0)
    blk = MLPBlock(16)
    x = torch.randn(4, 16, requires_grad=True)
    pol = checkmate_torch.sac_policy(blk, (x,), {"extra": False}, budget=budget_at(0.5))
    try:
        checkpoint(blk, x, use_reentrant=False, context_fn=pol, extra=True).sum().backward()
        ok(False, "a region running an op the example did not: refused")
    except SACError as e:
        ok("\n" not in str(e) and "differ" in str(e),
           "a region running an op the example did not: one line in the forward: %s" % e)
    pol = checkmate_torch.sac_policy(blk, (x,), {"extra": True}, budget=budget_at(0.5))
    try:
        checkpoint(blk, x, use_reentrant=False, context_fn=pol, extra=False).sum().backward()
        ok(False, "a region running fewer ops than the example: refused")
    except SACError as e:
        ok("\n" not in str(e) and "differ" in str(e),
           "a region running fewer ops than the example: one line in the backward: %s" % e)
    y = checkpoint(blk, x, use_reentrant=False, context_fn=pol, extra=True)
    y.sum().backward()
    ok(x.grad is not None, "the example's own branch runs under its policy")


def check_again():
    """sac_blocks on blocks that have a policy: the new one replaces it."""
    name, base, blocks_of, args, kwargs, loss_of = mlp_case()
    ref = copy.deepcopy(base)
    first = checkmate_torch.sac_blocks(base, blocks_of(base), args, kwargs,
                                       budget=budget_at(1.0))
    second = checkmate_torch.sac_blocks(base, blocks_of(base), args, kwargs,
                                        budget=budget_at(0.0))
    want, have = train(ref, args, kwargs, loss_of, 2), train(base, args, kwargs, loss_of, 2)
    ok(first[0].info["saved"] > 0 and second[0].info["saved"] == 0 and same(want[0], have[0])
       and same(want[2], have[2]),
       "sac_blocks again on the same blocks: the new policies replace the old (saved %d, "
       "then %d), training as before" % (first[0].info["saved"], second[0].info["saved"]))
    # a copy of a model with policies (an EMA copy, say): its blocks run theirs
    name, base, blocks_of, args, kwargs, loss_of = mlp_case()
    ref = copy.deepcopy(base)
    pols = checkmate_torch.sac_blocks(base, blocks_of(base), args, kwargs, budget=budget_at(0.5))
    twin = copy.deepcopy(base)
    calls = []
    for blk in blocks_of(twin):
        blk.register_forward_hook(lambda m, a, out: calls.append(m))
    want, have = train(ref, args, kwargs, loss_of, 2), train(twin, args, kwargs, loss_of, 2)
    ok(pols[0].info["saved"] > 0 and same(want[0], have[0]) and same(want[2], have[2])
       and copy.deepcopy(pols[0]) is pols[0] and len(calls) == 2 * len(pols),
       "copy.deepcopy of a model with policies: its copy trains as the ordinary model, "
       "each block through its own forward and the same policy (saves %d)"
       % pols[0].info["saved"])
    # a pickled model with policies (torch.save(model)): the ops by name,
    # the same policies, the same training as the model unpickled
    mine = pickle.loads(pickle.dumps(base))
    back = vars(blocks_of(mine)[0])["forward"].args[1]
    want = train(copy.deepcopy(base), args, kwargs, loss_of, 2)
    have = train(mine, args, kwargs, loss_of, 2)
    ok(back.saved == pols[0].saved and back.ops == pols[0].ops and back.info == pols[0].info
       and back.args[0].modes == pols[0].args[0].modes and same(want[0], have[0])
       and same(want[2], have[2]),
       "a pickled model with policies: the same policies, found again by op name, and the "
       "same training")


def check_cache_and_refusals():
    torch.manual_seed(0)
    blk = MLPBlock(16)
    x = torch.randn(4, 16, requires_grad=True)
    first = checkmate_torch.sac_policy(blk, x, budget=budget_at(0.3))
    again = checkmate_torch.sac_policy(blk, x, budget=budget_at(0.3))
    ok(first.info["cached"] is False and again.info["cached"] is True
       and again.saved == first.saved,
       "a second policy for the same region and budget comes from the plan cache")
    none = checkmate_torch.sac_policy(blk, x, budget=budget_at(0.3), cache=False)
    ok(none.info["cached"] is None and none.saved == first.saved, "cache=False keeps none")
    pct = checkmate_torch.sac_policy(blk, x, budget="95%")
    ok(pct.info["budget"] == int(0.95 * pct.info["peak"]),
       "a budget of 95%% is 95%% of the region's peak: %d of %d"
       % (pct.info["budget"], pct.info["peak"]))
    for budget, what in ((lambda fixed, peak: fixed - 1, "below fixed memory"),
                         ("lots", "not a size"), (-5, "negative")):
        try:
            checkmate_torch.sac_policy(blk, x, budget=budget)
            ok(False, "a budget %s: refused" % what)
        except SACError as e:
            ok("\n" not in str(e), "a budget %s: refused in one line: %s" % (what, e))


def main():
    for case in (mlp_case, gpt_case, hf_gpt2_case, hf_llama_case):
        got = case()
        if got is None:
            skip(case.__doc__.split(",")[0], "transformers is not installed")
            continue
        whole = case in (mlp_case, gpt_case) or long_checks(
            "%s: budgets 0 and six peaks, the op-list policies" % got[0])
        for f in (0.5, 0.0) if whole else (0.5,):
            check_bits(*got, f)
        if whole:
            check_budgets(*got)
            check_op_lists(*got)
    check_compiled(*mlp_case(), fractions=(1.0, 0.4, 0.0))
    if long_checks("MLP blocks, GPT, HF GPT-2 and Llama under torch.compile: eager policies' "
                   "losses, compile=True's losses and peaks"):
        check_planned(*mlp_case(), least=3)
        check_compiled(*gpt_case(), peaks=False)
        check_planned(*gpt_case())
        for case in (hf_gpt2_case, hf_llama_case):
            got = case()
            if got is None:
                skip("%s under torch.compile" % case.__doc__.split(",")[0],
                     "transformers is not installed")
            else:
                check_compiled(*got, peaks=False, fractions=(0.5, 0.0))
                check_planned(*got)
    check_fsdp()
    check_mismatch()
    check_again()
    check_cache_and_refusals()
    check_planned_refusals()
    check_unsafe_regions()
    finish()


if __name__ == "__main__":
    main()

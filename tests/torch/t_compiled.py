#!/usr/bin/python3
"""remat(compile=True) (checkmate_torch/compiled.py): the step through
inductor with the partition's saved values trains as torch.compile does (same
losses and gradients up to rounding, dropout's masks the forward's),
takes less memory as the budget falls, never recomputes a random op, plans with
measured costs too, prices the saved values' memory traffic, and bad settings or
models get one line."""
import functools
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

from tap import finish, long_checks, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
remat_or_finish()

import copy  # noqa: E402
import tempfile  # noqa: E402
import unittest.mock  # noqa: E402
import warnings  # noqa: E402

import checkmate_torch  # noqa: E402
import fuzz_compiled  # noqa: E402
from checkmate_torch import compiled  # noqa: E402
from checkmate_torch.train import RematError  # noqa: E402

from torch import nn  # noqa: E402

class Net(nn.Module):
    """Linear layers, GELU, dropout, layer norm, a residual: the ops whose
    values a partitioner saves or recomputes."""

    def __init__(self, d=64, layers=2):
        super().__init__()
        self.inp = nn.Linear(16, d)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d),
                                                  nn.GELU(), nn.Dropout(0.2),
                                                  nn.Linear(4 * d, d))
                                    for _ in range(layers))
        self.out = nn.Linear(d, 3)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = h + b(h)
        return self.out(h)


torch.manual_seed(0)
base = Net()
x = torch.randn(256, 16)
y = torch.randint(0, 3, (256,))


def train(module, model, steps=3, inp=x, target=y):
    """Losses and final gradients of `steps` SGD steps, seeded alike."""
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for k in range(steps):
        torch.manual_seed(100 + k)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(module(inp), target)
        loss.backward()
        losses.append(loss.item())
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return losses, grads


def remat(budget, model=None, **kw):
    model = model or copy.deepcopy(base)
    return checkmate_torch.remat(model, (x,), budget=budget,
                                 compile=True, **kw), model


ref_model = copy.deepcopy(base)
ref = train(torch.compile(ref_model, fullgraph=True, dynamic=False), ref_model)

captured = {}
orig_choose = compiled.Partitioner.choose


def spy(self, joint_graph, node_info, memory_budget=1, **kw):
    captured["jg"] = compiled.JointGraph(joint_graph, node_info, self._num_fwd_outputs)
    captured["inputs"] = list(node_info.inputs)
    captured["saved"] = orig_choose(self, joint_graph, node_info, memory_budget, **kw)
    return captured["saved"]


# Three budgets between the least and the checkpoint-all peak (the lowest
# above the least any partition reaches here, where matmul values take
# memory whether saved or computed again): the same training as
# torch.compile's, fewer bytes saved as the budget falls.
infos = {}
compiled.Partitioner.choose = spy   # keeps the last joint graph (below)
for frac in (1.0, 0.6, 0.4):
    if frac == 1.0:
        r, m = remat(lambda fixed, peak: peak)
    else:   # between the least memory and the checkpoint-all peak
        least, peak = infos[1.0]["least"], infos[1.0]["checkpoint_all_peak"]
        r, m = remat(int(least + frac * (peak - least)))
    losses, grads = train(r, m)
    infos[frac] = r.plan_info
    rel = fuzz_compiled.rel(losses, ref[0])
    gd = max(float((g - h).abs().max() / (h.abs().max() + 1e-12)) for g, h in zip(grads, ref[1]))
    ok(rel < 1e-5 and gd < 1e-4,
       "budget the least + %g x (checkpoint-all peak - least): 3 steps' losses and gradients "
       "as torch.compile's" % frac,
       "loss rel. diff %.2e, gradient rel. diff %.2e" % (rel, gd))
compiled.Partitioner.choose = orig_choose
# With the traffic of saved values priced (save costs), the partition at
# the checkpoint-all peak saves less than everything the backward reads,
# and a lower budget can save more bytes to compute fewer matmul values
# again, which take memory: the partition's memory is what falls.
ok(infos[1.0]["plan_peak"] >= infos[0.6]["plan_peak"] >= infos[0.4]["plan_peak"]
   and infos[0.4]["plan_peak"] < infos[1.0]["plan_peak"]
   and infos[1.0]["plan_peak"] < infos[1.0]["checkpoint_all_peak"] and infos[1.0]["overhead"] < 1,
   "the partition's memory falls with the budget; at the checkpoint-all peak it saves less "
   "than keep-all, at less cost (save costs)",
   str({f: (i["plan_peak"], i["saved_bytes"], i["overhead"]) for f, i in infos.items()}))
ok(all(i["plan_peak"] <= i["budget"] and i["status"] in ("optimal", "feasible")
       and i["measured_peak"] <= i["budget"] for i in infos.values()),
   "every partition's memory within its budget, in the model and measured before the first "
   "step (compiles: %s)" % [i["compiles"] for i in infos.values()],
   str({f: (i["status"], i["plan_peak"], i["measured_peak"], i["budget"])
        for f, i in infos.items()}))

# Random ops: a partition that keeps nothing would have the backward draw
# new numbers; saved_values keeps every value of an op
# that draws from the generator (inductor's dropout: inductor_seeds, whose
# seeds the backward's inductor_random then reuses, the forward's masks).
# The joint graph is the last budget's, above.
jg = captured["jg"]
randoms = [n for n in jg.forward if compiled._is_random(n)]
saved = compiled.saved_values(jg, [], captured["inputs"])
again = jg.recomputed({jg.owner(n) for n in saved})
ok(randoms and not any(compiled._is_random(n) for n in again),
   "a partition keeping nothing: the backward recomputes no op that draws from the generator "
   "(%s saved)" % ", ".join(n.name for n in randoms),
   "random ops %s; recomputed %s" % (randoms, sorted(n.name for n in again)))

# With inductor's fallback_random the step draws eager's numbers (dropout
# is aten's, recomputed it would draw new ones): with one dropout, the
# partition at a budget that recomputes trains as an ordinary eager step.
# With two, inductor may run the draws in another order: refused.
with torch._inductor.config.patch(fallback_random=True):
    try:
        r, m = remat(infos[0.4]["budget"])
        train(r, m)
        ok(False, "fallback_random, two dropouts: refused", "trained")
    except RematError as e:
        ok("draws random numbers in 2 ops" in str(e) and "\n" not in str(e),
           "fallback_random, two dropouts: refused in one line: %s" % e)
    torch.manual_seed(0)
    one = Net(layers=1)
    eager_model = copy.deepcopy(one)
    eager = train(eager_model, eager_model)
    for frac in (0.6, 0.8, 0.9, 1.0):   # the lowest that fits this small net
        torch._dynamo.reset()
        try:
            r, m = remat(lambda fixed, peak: int(fixed + frac * (peak - fixed)),
                         copy.deepcopy(one))
            losses, grads = train(r, m)
            break
        except RematError:
            continue
rel = fuzz_compiled.rel(losses, eager[0])
gd = max(float((g - h).abs().max() / (h.abs().max() + 1e-12)) for g, h in zip(grads, eager[1]))
ok(rel < 1e-5 and gd < 1e-4,
   "fallback_random, one dropout: 3 steps' losses and gradients as eager's (budget fraction %g, "
   "%d ops recomputed, dropout's mask saved)" % (frac, r.plan_info["recomputed"]),
   "loss rel. diff %.2e, gradient rel. diff %.2e" % (rel, gd))

# Second processes with torch's caches and checkmate's on disk. The same
# budget: the compiled forward and backward from AOTAutograd's cache, no
# partition made, the figures from checkmate's cache. Another budget: no
# hit (the partitioner's uuid is in the key). Checkmate's cache emptied: a
# hit without figures compiles again, partitioning. Then a step under fp16
# autocast, another joint graph of dynamo's same graph: it partitions, and
# the next fp32 process's figures are still its own (the first's).
CHILD = r"""
import sys
sys.path.insert(0, %(root)r)
import torch, checkmate_torch
torch.set_num_threads(1)
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 3))
x = torch.randn(8, 16)
r = checkmate_torch.remat(m, (x,), budget=%(budget)d, compile=True)
with torch.autocast("cpu", dtype=torch.float16, enabled=%(autocast)s):
    out = r(x)
out.float().sum().backward()
from torch._dynamo.utils import counters
i = r.plan_info
print(i["cached"], counters["aot_autograd"]["autograd_cache_hit"], len(r._partitioner.info))
print(i["saved"], i["recomputed"], i["plan_peak"])
"""


def child(budget, env, autocast=False):
    """(the child's cached, AOTAutograd hits and partitions; its figures)."""
    import subprocess
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    p = subprocess.run([sys.executable, "-c", CHILD % {"root": root, "budget": budget,
                                                       "autocast": autocast}],
                       capture_output=True, text=True, env=env)
    lines = p.stdout.strip().splitlines()
    return tuple(lines[-2:]) if p.returncode == 0 and len(lines) > 1 else ("exit %d: %s" % (
        p.returncode, (p.stderr.strip().splitlines() or [""])[-1]), None)


def second_processes():
    with tempfile.TemporaryDirectory() as d:
        plans = os.path.join(d, "checkmate")
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(d, "inductor"),
                   CHECKMATE_CACHE_DIR=plans)
        runs = [child(10 ** 6, env) for _ in range(2)] + [child(9 * 10 ** 5, env)]
        shutil.rmtree(plans)
        runs.append(child(10 ** 6, env))
        runs += [child(10 ** 6, env, True), child(10 ** 6, env)]
    ok([r[0] for r in runs[:4]] == ["False 0 1", "True 1 1", "False 0 1", "False 1 1"],
       "second processes, caches on disk: the same budget's step from AOTAutograd's cache "
       "with its figures from checkmate's; another budget misses; without checkmate's cache "
       "a hit partitions again (plan cached, AOTAutograd's hits, partitions: %s)"
       % [r[0] for r in runs])
    ok(runs[4][0] == "False 0 1" and runs[5][0] == "True 1 1" and runs[5][1] == runs[0][1]
       and runs[4][1] != runs[0][1],
       "an fp16-autocast process partitions afresh, and the next fp32 process's figures are "
       "its own (saved, recomputed, plan peak: %s)" % [r[1] for r in runs])


if long_checks("six second processes with the caches on disk"):
    second_processes()

# Eval mode and no-grad run the model itself.
r, m = remat("90%")
r.eval()
with torch.no_grad():
    ok(torch.equal(r(x), m(x)), "eval mode: the model itself")

# One line for what compile=True cannot do.


def error_of(fn):
    try:
        fn()
    except RematError as e:
        return str(e)
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)
    return None


e = error_of(lambda: remat("lots"))
ok(e is not None and "budget" in e and "\n" not in e, "a bad budget: one line", e)

# "100%" is of the memory when the forward keeps every value. At batch 2
# the parameters' gradients, which the backward returns, outweigh the
# activations: the checkpoint-all schedule's peak, the base before, lay
# below any partition ("infeasible").
x2 = x[:2]
r2 = checkmate_torch.remat(copy.deepcopy(base), (x2,), budget="100%", compile=True)
e = error_of(lambda: r2(x2).sum().backward())
ok(e is None and r2.plan_info["plan_peak"] <= r2.plan_info["budget"],
   "budget '100%' at batch 2: a partition within it", e or r2.plan_info)

# Attention without dropout beside a dropout: the CPU's flash attention is
# tagged random whatever its dropout_p; at 0 it draws nothing, so the step
# has one draw, not two, and is not refused (fuzzer seed 16324 was).
class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        q, k, v = self.qkv(x).view(8, 32, 3, 2, 8).permute(2, 0, 3, 1, 4)
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(self.drop(a.transpose(1, 2).reshape(8, 32, 16))).mean(1)


torch.manual_seed(0)
attn = Attn()
xa = torch.randn(8, 32, 16)


def attn_losses(module, model):
    return train(module, model, inp=xa, target=y[:8])[0]


torch._dynamo.reset()
m0 = copy.deepcopy(attn)
want = attn_losses(torch.compile(m0, fullgraph=True, dynamic=False), m0)
m1 = copy.deepcopy(attn)
r = checkmate_torch.remat(m1, (xa,), compile=True, budget=lambda fixed, peak: peak)
got = []
compiled.Partitioner.choose = spy
e = error_of(lambda: got.extend(attn_losses(r, m1)))
compiled.Partitioner.choose = orig_choose
ok(e is None and fuzz_compiled.rel(got, want) < 1e-5,
   "attention (dropout_p 0) beside a dropout: trained as torch.compile", e or (got, want))
# The CPU's flash attention is an extern kernel, which torch's list of
# compute-intensive ops leaves out: computed again, its output is held.
jg = captured["jg"]
att = [n for n in jg.forward if "attention" in str(n.target)]
ok(att and all(jg.materialized(n) for n in att),
   "the attention's value is materialized when computed again (%s)"
   % ", ".join(str(n.target) for n in att))
# The dropout's random numbers, made again from the forward's seed, are
# written to a buffer by inductor (its lowering realizes them), and the
# mask made from them is not: a mask read late holds them until then.
rand = [n for n in jg.forward if "inductor_random" in str(n.target)]
masks = [u for n in rand for u in n.users]
ok(rand and all(jg.materialized(n) for n in rand) and not any(jg.materialized(u) for u in masks),
   "dropout's random numbers are materialized when computed again, its mask is not (%d, %d)"
   % (len(rand), len(masks)))

# What inductor writes when the backward computes values again: besides
# the matmuls' values and what they read, a reduction's, and a value of
# several readers whose fused expression reads many buffers or, on a CPU,
# holds an exp (the layer norm's and softmax's computed again). Inductor's
# own lowering of the backward (its values realized as buffers) against
# JointGraph.writes on a small GPT at a budget that computes much again;
# the partition solves again counting them.
from checkmate_torch.examples.gpt import GPT  # noqa: E402
from torch._inductor import graph as ind_graph, ir as ind_ir  # noqa: E402
from torch._inductor.codegen.wrapper import AllocateLine as Alloc  # noqa: E402
from torch._inductor.choices import InductorChoices  # noqa: E402

lowered = {}
orig_run_node = ind_graph.GraphLowering.run_node
reuses = []   # each allocation planned: (reused a buffer, inductor's reuse on, key tagged)
plan_allocation = Alloc.plan
fusions = []  # each horizontal fusion asked: (inductor's rule fuses, the limit does, nodes apart)
limit = compiled._choices().can_fuse_horizontal   # remat's, in place while it lowers


def reuse_spy(self, state):
    got = plan_allocation(self, state)
    reuses.append((type(got).__name__ == "ReuseLine", torch._inductor.config.allow_buffer_reuse,
                   torch.compiler.config.cache_key_tag.endswith(compiled._TAG)))
    return got


def fusion_spy(scheduler, node1, node2, score):
    got = limit(scheduler, node1, node2, score)
    fusions.append((InductorChoices.can_fuse_horizontal(scheduler, node1, node2, score), got,
                    compiled._distance(node1, node2)))
    return got


def run_node(self, n):
    out = orig_run_node(self, n)
    if self.is_backward:
        lowered[n.name] = out
    return out


def buffer_of(v):
    while isinstance(v, (ind_ir.TensorBox, ind_ir.BaseView)) and not isinstance(v, ind_ir.StorageBox):
        v = v.data
    return isinstance(v, ind_ir.StorageBox) and ind_ir.IRNode.is_realized_node(v.data)


def lower(step):
    """(error, joint graph, the forward nodes computed again) of step(),
    compiled with inductor's caches off, its backward's lowering kept in
    `lowered`."""
    lowered.clear()
    reuses.clear()
    fusions.clear()
    compiled.Partitioner.choose = spy
    ind_graph.GraphLowering.run_node = run_node
    Alloc.plan = reuse_spy
    compiled._choices().can_fuse_horizontal = staticmethod(fusion_spy)
    try:
        with torch._inductor.config.patch(force_disable_caches=True):
            e = error_of(step)
    finally:
        compiled.Partitioner.choose = orig_choose
        ind_graph.GraphLowering.run_node = orig_run_node
        Alloc.plan = plan_allocation
        compiled._choices().can_fuse_horizontal = staticmethod(limit)
    jg = captured["jg"]
    return e, jg, jg.recomputed({jg.owner(n) for n in captured["saved"]}) if e is None else set()


def single(nodes):
    """Nodes of one tensor's value (a multi-output op's parts are apart)."""
    return {n.name for n in nodes if not compiled._is_alias(n)
            and isinstance(n.meta.get("val"), torch.Tensor)}


def unwritten(jg):
    """The backward's values of one tensor that inductor's lowering
    kept in `lowered` does not write."""
    return single(n for n in jg.backward if n.name in lowered and jg.runs_op(n)
                  and not buffer_of(lowered[n.name]))


def inductor_internals():
    """Inductor's own lowering of a small GPT's backward against
    JointGraph's rules: what it writes, what it fuses, the views, its
    buffer reuse and horizontal fusion."""
    torch.manual_seed(0)
    gpt = GPT(vocab=64, context=32, d=32, heads=2, layers=2)
    ids = torch.randint(0, 64, (2, 32))
    torch._dynamo.reset()
    r = checkmate_torch.remat(gpt, (ids,), compile=True, cache=False,
                              budget=lambda fixed, peak: int(fixed + 0.5 * (peak - fixed)))
    e, jg, again = lower(lambda: r(ids).float().pow(2).mean().backward())

    got = single(jg.writes(again)[0])
    want = single(n for n in again if n.name in lowered and buffer_of(lowered[n.name]))
    rounds = r.plan_info["rounds"] if e is None else None
    ok(e is None and want and got == want and rounds > 1,
       "the values computed again that inductor writes: JointGraph.writes (%d), solved %s times"
       % (len(want), rounds),
       e or "only written: %s; only inductor's: %s" % (sorted(got - want), sorted(want - got)))

    # The backward's own values that the model takes as fused (no memory):
    # inductor writes none of them, and they are most of those it does not
    # write (the rest, a constant or a sum it turns into a view, are counted).
    fused = single(jg.writes(again)[1]) if e is None else set()
    free = unwritten(jg)
    ok(e is None and fused and not fused - free and len(fused) >= 0.9 * len(free),
       "the backward's values inductor fuses away: JointGraph.writes' (%d of %d), none it writes"
       % (len(fused), len(free)),
       e or "fused but written: %s; counted: %s" % (sorted(fused - free), sorted(free - fused)))

    # A view of an input (a weight transposed for its matmul) is computed
    # again, not saved: inductor counts a saved value as memory the backward
    # frees after its last read, which a parameter's view never frees, and
    # the buffer reuse its loose estimate allows held a GPT's step 5 MB over
    # the model. The partition above saved every such view before.
    views = sorted(n.name for n in captured["saved"]
                   if compiled._views_input(n) and not jg.pinned(n)) if e is None else None
    ok(e is None and not views and any(compiled._views_input(n) for n in again),
       "a view of an input is computed again, not saved", e or "saved: %s" % views)

    # Inductor's buffer reuse, in both programs (the backward lowered at the
    # first backward): none (its own rule holds freed buffers for later
    # kernels, memory the model counts as free); and inductor's cache key
    # says so (no code lowered with reuse is taken from its cache).
    ok(e is None and reuses and not any(got or on for got, on, tag in reuses)
       and all(tag for *_, tag in reuses),
       "inductor reuses no freed buffer while it lowers remat's programs, its cache key tagged "
       "(%d allocations)" % len(reuses), e or str(reuses[:5]))

    # Horizontal fusion (of kernels that do not feed each other), in both
    # programs: only of kernels at most compiled._FUSION_DISTANCE apart, where
    # inductor's own rule would also have fused recomputes of the other layer
    # (a fused kernel runs where its first part ran, ahead of the model).
    far = [k for rule, got, k in fusions if rule and k > compiled._FUSION_DISTANCE]
    ok(e is None and far
       and not [k for rule, got, k in fusions if got and k > compiled._FUSION_DISTANCE]
       and any(got for rule, got, k in fusions),
       "inductor fuses kernels horizontally only within %d nodes (%d of %d asked; inductor's "
       "rule: %d more, up to %d apart)" % (compiled._FUSION_DISTANCE, sum(f[1] for f in fusions),
                                          len(fusions), len(far), max(far or [0])),
       e or str(fusions))


if long_checks("inductor's lowering of a GPT against JointGraph's rules (writes, fusions, "
               "views, buffer reuse, horizontal fusion)"):
    inductor_internals()


# A ReLU computed again whose max pool is not: the pool's backward reads
# its saved offsets, so inductor fuses the ReLU into the batch norm's
# backward, and the ReLU's gradient (a `where` of three readers) reads
# the batch norm's inputs, too many buffers to fuse: written. The model
# took the ReLU as written for its pool, and the `where` as fused.
class PoolNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
                               nn.MaxPool2d(2))
        self.b = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.head = nn.Linear(c, 10)

    def forward(self, x):
        return self.head(self.b(self.a(x)).mean((2, 3)))


torch.manual_seed(0)
pool_x = torch.randn(8, 3, 32, 32)
torch._dynamo.reset()
r = checkmate_torch.remat(PoolNet(), (pool_x,), compile=True, cache=False,
                          budget=lambda fixed, peak: int(fixed + 0.9 * (peak - fixed)))
e, pool_jg, pool_again = lower(lambda: r(pool_x).pow(2).mean().backward())
fused = single(pool_jg.writes(pool_again)[1])
relus = [n for n in pool_again if n.target is torch.ops.aten.relu.default]
ok(e is None and relus and fused and not fused - unwritten(pool_jg),
   "a ReLU computed again for its batch norm's backward, not its pool's: the backward's "
   "values fused are none that inductor writes", e or "fused but written: %s"
   % sorted(fused - unwritten(pool_jg)))

def fuzzer_seeds():
    """Two fuzzer models that trained wrong once (seeds 16265, 16304):
    inputs the forward writes."""
    # An input the forward writes: Embedding(max_norm) renorms its weight, and
    # AOTAutograd copies the new value in when the forward ends. A backward
    # that computed the renorm again read the written weight (autograd's
    # "modified by an inplace operation"): no forward output is computed
    # again. The fuzzer's seed 16265 (an embedding with max_norm, BatchNorm
    # applied twice, GroupNorms) at the budget that crashed.
    want = fuzz_compiled.losses(16265, "cpu", lambda m, b: torch.compile(m, fullgraph=True,
                                                                         dynamic=False))[0]
    try:
        got, r, _ = fuzz_compiled.losses(16265, "cpu", lambda m, b: checkmate_torch.remat(
            m, b[0], b[1], compile=True,
            budget=lambda fixed, peak: int(fixed + 0.7 * (peak - fixed))))
        rel = fuzz_compiled.rel(got, want)
        ok(rel < 1e-5 and r.plan_info["recomputed"] > 0,
           "a forward that writes an input (Embedding(max_norm), fuzzer seed 16265; %d ops "
           "recomputed): 3 steps' losses as torch.compile's" % r.plan_info["recomputed"],
           "loss rel. diff %.2e" % rel)
    except Exception as e:
        ok(False, "a forward that writes an input (Embedding(max_norm), fuzzer seed 16265): "
           "trains", e)

    # An input the graph itself writes: a buffer counted in the forward
    # (fuzzer seed 16304: self.n += 1 then read) is written by a copy_ at the
    # forward's end, before the backward. A partition that keeps nothing
    # computes no reader of it again; and the training is eager's (plain
    # torch.compile's partition recomputes the reader and trains another
    # model: its loss differs from eager's by 1e-3 at the third step).
    captured.clear()
    compiled.Partitioner.choose = spy
    try:
        eager = fuzz_compiled.losses(16304, "cpu", lambda m, b: m)[0]
        got, r, _ = fuzz_compiled.losses(16304, "cpu", lambda m, b: checkmate_torch.remat(
            m, b[0], b[1], compile=True, budget=lambda fixed, peak: peak))
        rel = fuzz_compiled.rel(got, eager)
        ok(rel < 1e-5, "a buffer counted in the forward (fuzzer seed 16304): 3 steps' losses "
           "as eager's", "loss rel. diff %.2e" % rel)
    finally:
        compiled.Partitioner.choose = orig_choose
    jg = captured["jg"]
    graph = jg.forward[0].graph
    written = {n.args[0] for n in graph.nodes if n.target is torch.ops.aten.copy_.default}
    again = jg.recomputed({jg.owner(n) for n in compiled.saved_values(jg, [], captured["inputs"])})
    readers = [n.name for n in again if any(a in written for a in n.all_input_nodes)]
    ok(written and not readers, "a partition keeping nothing: the backward recomputes no "
       "reader of a written input (%d written)" % len(written), "recomputed: %s" % readers)


if long_checks("two fuzzer models whose forward writes an input (seeds 16265, 16304)"):
    fuzzer_seeds()

# Measured costs (jointcost.py): the same training, a partition within
# the budget, its overhead in measured milliseconds.
r, m = remat(infos[0.4]["budget"], cost="time")
losses, grads = train(r, m)
rel = fuzz_compiled.rel(losses, ref[0])
ok(rel < 1e-5 and r.plan_info["plan_peak"] <= r.plan_info["budget"]
   and r.plan_info["overhead"] > 0,
   "cost='time': 3 steps' losses as torch.compile's, within the budget, overhead %.3f"
   % r.plan_info["overhead"], "loss rel. diff %.2e, %s" % (rel, r.plan_info))

# The partitioner runs under torch's fake tensor mode; the measurements
# leave it (jointcost.real_tensors), or every op would time its dispatch,
# the same at any size (the figures of cost="time" were so before).
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from checkmate_torch import jointcost  # noqa: E402


class ValueNode:
    """What copy_costs reads of an fx node."""

    def __init__(self, val):
        self.meta = {"val": val}


sizes = (ValueNode(torch.empty(1 << 22)), ValueNode(torch.empty(16)))
with FakeTensorMode():
    copies = jointcost.copy_costs(sizes)
ratio = copies[sizes[0]] / max(copies[sizes[1]], 1e-9)
ok(ratio > 20, "under the fake tensor mode, measured copies are real: 16 MiB takes %.0fx "
   "the time of 64 bytes" % ratio, str(copies))


# measure.op_workspaces: what a call holds inside, not what it returns.
from checkmate_torch.measure import op_workspaces  # noqa: E402


def inside():   # three 4 MiB temporaries at once, nothing out
    torch.ones(1 << 20) + torch.ones(1 << 20)


def bad():
    raise RuntimeError("no")


got = op_workspaces([lambda: inside, lambda: lambda: torch.ones(1 << 20), lambda: bad],
                    torch.device("cpu"))
ok(got == [12 << 20, 0, None], "op_workspaces: three 4 MiB temporaries, an output (none), a "
   "call that raises (None)", str(got))


# The memory model on a network whose weights outweigh its activations:
# the backward returns every gradient at its end (a convolution's weight
# gradient is one output of its backward, beside the input gradient freed
# early), inductor's channels-last copies of the 3x3 weights are what
# the forward saves for the backward, and oneDNN's convolution backward
# holds two weight-sized buffers while it runs (its workspace, measured
# when the joint graph is partitioned and counted where the backward's
# outputs are all held; the largest over the layouts inductor may pass,
# here 1.70 MB against the 1.18 MB of the layouts it chose). The
# measured peak, inside a convolution's backward, must not exceed the
# model's, nor fall far below it; before the gradients and copies were
# counted, the model was half the peak between ops, and before the
# workspaces, 24% under the peak.
from checkmate_torch.measure import step_peak  # noqa: E402


class ConvNet(nn.Module):
    def __init__(self, c=128, layers=3):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.convs = nn.ModuleList(nn.Conv2d(c, c, 3, padding=1) for _ in range(layers))
        self.head = nn.Linear(c, 10)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        for conv in self.convs:
            h = torch.relu(conv(h))
        return self.head(h.mean((2, 3)))


torch.manual_seed(0)
conv_model = ConvNet()
conv_x, conv_y = torch.randn(8, 3, 8, 8), torch.randint(0, 10, (8,))
conv_r = checkmate_torch.remat(conv_model, (conv_x,), budget=lambda fixed, peak: peak,
                               compile=True)
for p in conv_model.parameters():
    p.grad = torch.zeros_like(p)


def conv_step():
    nn.functional.cross_entropy(conv_r(conv_x), conv_y).backward()


conv_step()
conv_step()
measured = step_peak(conv_step, "cpu")
info = conv_r.plan_info
model = info["plan_peak"] - info["fixed_memory"]
# The measured peak of the same compiled step varies from run to run by
# 256 KiB, one activation's size (4.61 or 4.88 MB against a model of
# 5.40 MB; the cause is not found): hence 1.2.
ok(measured["peak"] <= model <= measured["peak"] * 1.2 and info["workspace"] > 0,
   "compile=True's model holds on a convolution network: gradients to the backward's end, "
   "channels-last weight copies, the convolution backwards' workspaces",
   "model %d bytes (largest workspace %d), measured %d between extern kernels, %d peak"
   % (model, info["workspace"], measured["between_ops"], measured["peak"]))


# A tied weight's gradient is a sum of the decoder's matmul, early in the
# backward, and the embedding's gradient, at its end. Inductor folds such
# a sum into an addmm, which runs the matmul at the end and holds the
# logits' gradient until then (Hugging Face's small BERT: 0.58 MB above
# the model). While checkmate lowers a program it folds a matmul only
# into a sum right after it: here inductor's rule folds two, checkmate's
# none, and the step holds 1 MB less.
from torch._inductor.fx_passes import post_grad  # noqa: E402


class Tied(nn.Module):
    def __init__(self, vocab=256, d=16, wide=1024):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.up, self.down = nn.Linear(d, wide), nn.Linear(wide, d)

    def forward(self, t):
        h = self.emb(t)
        h = h + self.down(torch.tanh(self.up(h)))
        return h @ self.emb.weight.t()


folds = []   # each fold asked: (inductor's rule folds, checkmate's does)


def tied_peak(rule):
    def spy(match, check):
        got, inductors = check(match), check.inductors(match)
        folds.append((inductors, got))
        return inductors if rule == "inductor's" else got
    checks = list({id(e): e for es in post_grad.pass_patterns[2].patterns.values() for e in es
                   if getattr(e.extra_check, "checkmate", False)}.values())
    torch.manual_seed(0)
    model, t = Tied(), torch.randint(0, 256, (1024,))
    torch._dynamo.reset()
    r = checkmate_torch.remat(model, (t,), budget=lambda fixed, peak: peak, compile=True,
                              cache=False)

    def step():
        nn.functional.cross_entropy(r(t), t).backward()
    for e in checks:
        e.extra_check = functools.partial(spy, check=e.extra_check)
    try:
        with torch._inductor.config.patch(fx_graph_cache=False):
            step()
    finally:
        for e in checks:
            e.extra_check = e.extra_check.keywords["check"]
    step()
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    return step_peak(step, "cpu")["peak"], r.plan_info


ours, info = tied_peak("checkmate's")
asked = list(folds)
inductors, _ = tied_peak("inductor's")
ok(len([f for f in asked if f[0] and not f[1]]) == 2 and not any(got for _, got in asked)
   and ours <= info["plan_peak"] - info["fixed_memory"] and inductors > ours + 500000,
   "a tied weight: no matmul folded into a sum later in the program (%.2f MB measured, "
   "%.2f MB with inductor's folds; model %.2f MB)" % (
       ours / 1e6, inductors / 1e6, (info["plan_peak"] - info["fixed_memory"]) / 1e6),
   str(asked))


def infeasible():
    r, m = remat(1000)
    train(r, m, steps=1)


e = error_of(infeasible)
ok(e is not None and e.startswith("compile=True:") and "infeasible" in e and "\n" not in e,
   "a budget below the least: one line at the first step", e)


class Breaks(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 3)

    def forward(self, x):
        h = self.lin(x)
        if h.sum().item() > 0:   # data-dependent control flow: a graph break
            h = h * 2
        return h


def graph_break():
    r, m = remat("90%", model=Breaks())
    train(r, m, steps=1)


e = error_of(graph_break)
ok(e is not None and "one graph" in e and "\n" not in e, "a graph break: one line", e)


# A shape known only when the step runs (nonzero): torch.compile takes it,
# the partition cannot size it (a dynamo guard error before).
class Picks(Breaks):
    def forward(self, x):
        h = self.lin(x)
        return h[torch.nonzero(h[:, 0] > 0)[:, 0]].sum(0)


with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
    e = error_of(lambda: train(*remat("90%", model=Picks()), steps=1))
ok(e is not None and "nonzero" in e and "known only when the step runs" in e and "\n" not in e,
   "a data-dependent shape: one line naming the node", e)


# Dynamo keeps at most recompile_limit compiled versions of one function,
# and each remat's backend is a version of its own: with the limit at 2,
# three remats of one module in a process (a sweep over budgets) each
# train, and a third input signature for one remat is one line.
class Plain(Breaks):
    def forward(self, x):
        return self.lin(x).tanh()


def sweep():
    m = Plain()
    for budget in (10**6, 10**7, 10**8):
        r = checkmate_torch.remat(m, (x,), budget=budget, compile=True, cache=False)
        r(x).sum().backward()


def signatures():
    r = checkmate_torch.remat(Plain(), (x,), budget=10**6, compile=True, cache=False)
    for n in (8, 9, 10):
        r(x[:n]).sum().backward()


# The measured step (compiled._held): compile=True runs each new step once
# before the call does (probe.py), and partitions it again where the
# measured peak is over the budget. Here the probe reads 100 KB over the
# budget whatever it measures, as a compiler holding what the model does
# not count would: the step is partitioned again at a budget lowered by
# the miss, and at the last partition still over, one warning. The probe
# puts the generators back: dropout draws torch.compile's masks.
from checkmate_torch import probe  # noqa: E402
real_probe = probe.probe


def probe_over(total):
    """A probe whose fixed memory + peak - tangents reads `total` bytes."""
    def over(*args):
        got = real_probe(*args)
        return dict(got, peak=total - infos[1.0]["fixed_memory"] + got["tangents"])
    return over


torch._dynamo.reset()
probe.probe = probe_over(infos[0.6]["budget"] + 100000)
try:
    with warnings.catch_warnings(record=True) as caught, \
            unittest.mock.patch.object(compiled, "_COMPILES", 2):
        warnings.simplefilter("always")
        r, m = remat(infos[0.6]["budget"], cache=False)
        losses, _ = train(r, m)
finally:
    probe.probe = real_probe
i = r.plan_info
said = [str(w.message) for w in caught if "measured" in str(w.message)]
ok(i["compiles"] == 2 and i["solved_budget"] <= i["budget"] - 100000
   and i["plan_peak"] <= i["solved_budget"] and i["measured_peak"] > i["budget"]
   and len(said) == 1 and "\n" not in said[0]
   and fuzz_compiled.rel(losses, ref[0]) < 1e-5,
   "a step measured over its budget is partitioned again at the budget less the model's "
   "miss; over again at the last, one warning; losses as torch.compile's",
   str((i, said, fuzz_compiled.rel(losses, ref[0]))))

# A miss larger than the activations: no partition fits the lowered
# budget; the step measured is kept, one warning.
torch._dynamo.reset()
probe.probe = probe_over(infos[0.6]["budget"] + 10**7)
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r, m = remat(infos[0.6]["budget"], cache=False)
        e = error_of(lambda: train(r, m, steps=1))
finally:
    probe.probe = real_probe
said = [str(w.message) for w in caught if "measured" in str(w.message)]
ok(e is None and len(said) == 1 and "no partition fits" in said[0] and "\n" not in said[0]
   and r.plan_info["compiles"] == 1,
   "a step measured over the budget where no partition fits the lowered budget: kept, one "
   "warning", e or said)

# An input the step writes (BatchNorm's running statistics, its counter):
# written once a step, the probe's writes put back; and a parameter's
# gradient hook sees one gradient a step, the probe's none.
bn_model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 3))
bn_ref = copy.deepcopy(bn_model)
train(torch.compile(bn_ref, fullgraph=True, dynamic=False), bn_ref, steps=2)
torch._dynamo.reset()
r = checkmate_torch.remat(bn_model, (x,), budget=lambda fixed, peak: peak, compile=True,
                          cache=False)
hooked = []
bn_model[0].weight.register_hook(lambda g: hooked.append(g.shape))
train(r, bn_model, steps=2)
bufs = [(a.float() - b.float()).abs().max().item()
        for a, b in zip(bn_model.buffers(), bn_ref.buffers())]
ok(max(bufs) < 1e-6 and r.plan_info["measured_peak"] is not None and len(hooked) == 2,
   "BatchNorm's running statistics and counter after 2 steps as torch.compile's, a gradient "
   "hook called twice (the probe's writes put back, its gradients apart)",
   str((bufs, len(hooked))))

with torch._dynamo.config.patch(recompile_limit=2):
    torch._dynamo.reset()
    e = error_of(sweep)
    ok(e is None, "three remats of one module, recompile_limit 2: each trains", e)
    e = error_of(signatures)
ok(e is not None and "recompile_limit (2)" in e and "\n" not in e,
   "a third input signature over recompile_limit 2: one line", e)
finish()

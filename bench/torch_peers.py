#!/usr/bin/env python3
"""checkmate_torch.remat against PyTorch's own activation-memory tools, at
matched memory: a benchmark that keeps us honest (issue 38).

Usage: build/venv-torch2/bin/python bench/torch_peers.py
           [--models gpt,gpt-dropout,resnet] [--rounds 9] [--warmup 2]
           [--threads 1] [--device cpu|cuda] [--time-limit 30]
           [--cost flops|time] [--tries 4] [--lr 1e-3] [--warm-compile-cache]
           [--gpt-layers 8] [--gpt-d 256] [--gpt-context 128] [--gpt-batch 4]
           [--resnet-batch 16] [--resnet-size 128]
           [--json FILE] [--markdown FILE]

Models (inputs fixed for the run, seeded; the model seeded with
torch.manual_seed(0) and copied, so that every variant starts from the
same weights):
  gpt          checkmate_torch/examples/gpt.py GPT(vocab=256, context=128,
               d=256, heads=4, layers=8, dropout=0), batch 4: token ids,
               attention_mask (bool, all True) as a keyword, cross-entropy
               of the logits against the ids shifted by one (as
               bench/torch_train.py);
  gpt-dropout  the same with dropout=0.1;
  resnet       checkmate_torch/examples/resnet.py ResNet-50 (25.6 M
               parameters, no torchvision), batch 16, 3x128x128, random
               labels of 1000 classes, cross-entropy.

Variants of one training step, each on its own copy of the model:
  eager             the model itself;
  ckpt-every-block  torch.utils.checkpoint.checkpoint(block, ...,
                    use_reentrant=False) around every block (GPT: each
                    transformer block; ResNet: each of the 16 bottleneck
                    blocks), by replacing the block in the copy's
                    ModuleList / Sequential with a wrapper module (the
                    example classes are unchanged);
  ckpt-every-2nd    the same around blocks 0, 2, 4, ...;
  selective         every block checkpointed with selective activation
                    checkpointing (create_selective_checkpoint_contexts):
                    the policy MUST_SAVEs the outputs of aten mm, addmm,
                    bmm, baddbmm, convolution and the fused attentions,
                    and PREFER_RECOMPUTEs every other op;
  compile-B         torch.compile(copy) (inductor; mode default) with
                    torch._functorch.config.activation_memory_budget = B,
                    B = 1.0, 0.5, 0.2. The min-cut partitioner reads the
                    budget when AOTAutograd partitions the joint graph,
                    during the first call; each copy is compiled with a
                    backend of its own (inductor's compile_fx called under
                    torch._functorch.config.patch(activation_memory_budget=
                    B)), and its first step runs under the same patch.
                    Distinct backends also keep the copies' Dynamo cache
                    entries apart (Dynamo's BACKEND_MATCH guard), so no copy
                    runs another's graph; the AOTAutograd and FX graph
                    caches key on the functorch config, budget included.
                    The first step (compilation included) is timed apart
                    and reported as "compile s": a cold compilation, in a
                    fresh temporary TORCHINDUCTOR_CACHE_DIR (removed at
                    the end), unless --warm-compile-cache (or
                    $TORCHINDUCTOR_CACHE_DIR set) keeps torch's caches, so
                    that a second run reads its kernels back. The JSON
                    has each budget the partitioner was called with and
                    how many values it saved (an AOTAutograd cache hit
                    calls none);
  remat-all         checkmate_torch.remat(copy, ..., budget="100%",
                    strategy="checkpoint-all"): every node computed once,
                    freed after its last use: the eager path's own overhead;
  remat @ peer      for each checkpointing and compile variant P above, a
                    remat(copy, ..., strategy="auto", time_limit=--time-
                    limit, cache=True, cost=--cost) whose MEASURED peak
                    (below) is at most P's measured peak. The remat budget
                    is a total, fixed memory (weights, gradients, inputs)
                    included, while the measured peak counts from the
                    step's start (fixed memory excluded), so the first try
                    is budget = fixed memory + P's peak; while remat's
                    measured peak exceeds P's by X bytes, the next try is
                    the last plan's own peak (plan_info["peak"], at most
                    its budget) minus X minus 1% of that plan's activations
                    (plan peak - fixed memory: the measured peak is not
                    monotone in the budget, and an excess of a few KB
                    alone barely moves the plan), up to --tries tries
                    (default 4); each try runs one warm-up step before its
                    measured one.
                    The try that fits is used; if none does, the last one,
                    marked "not matched". A budget no plan fits ends the
                    search with the binary's reason. Tries with the same
                    budget are measured once (plans come from the cache).

The training step: zero gradients in place, forward, loss, backward
(timed and measured), then an SGD step (lr --lr, no momentum) outside the
timed and measured part, for every variant. Every parameter's .grad is
preallocated (zeros_like) and zeroed in place, so gradients accumulate
into existing tensors, as checkmate_torch.measure.step_peak expects.

Time: torch.set_num_threads(--threads) (1 by default; inductor's kernels
are compiled for that count). After --warmup steps of every variant (and
the peak measurement below), every copy's parameters and buffers are put
back to the initial ones (copied in place), then --rounds rounds each run
one step of every variant, the order rotating from round to round;
torch.manual_seed(round) before every step (so the checkpointing and
remat variants draw eager's dropout masks; inductor draws its own). The
median wall time (time.perf_counter, after torch.cuda.synchronize on
CUDA) is reported as a ratio to eager's median, with the milliseconds in
the JSON. The losses of each round are compared with eager's: the
relative difference |l - l_eager| / |l_eager| of the first round (the
same weights for all) and the largest over the rounds (0 where they are
equal bit for bit; the compiled variants' trajectories drift apart over
the SGD steps, and with dropout they differ by design: inductor draws its
own masks).

Peak: checkmate_torch.measure.step_peak(step, device) on one step after
the warm-up. On CPU that is the profiler's allocator events; the table's
"peak MB" is its between_ops (the largest live tensor bytes at the end of
a top-level ATen op: op workspaces left out, as in bench/torch_memory.py
and bench/torch_train.py), the same figure for every variant, and the
matching uses it; "in-op MB" is its peak (every moment, workspaces
included). Caveat for compile-B: inductor's fused C++ kernels are no ATen
ops and its buffers are allocated without one, so between_ops only sees
the moments after its extern ATen calls (mm, convolution...); look at
in-op MB too. On CUDA both columns are torch.cuda.max_memory_allocated
over the step, above what was allocated at its start. 1 MB = 10^6 bytes.

Errors: a variant that raises (building, compiling, a step, the
measurement) gets its one-line error in its row and leaves the rounds; the
others go on. The plans are kept in checkmate's plan cache
($CHECKMATE_CACHE_DIR or ~/.cache/checkmate), so a second run solves
nothing. The `checkmate` binary is found as checkmate_torch.binary does
($CHECKMATE, PATH, beside the package).
"""
import argparse
import copy
import functools
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
from torch.utils.checkpoint import (CheckpointPolicy, checkpoint,  # noqa: E402
                                    create_selective_checkpoint_contexts)

import checkmate_torch  # noqa: E402
from checkmate_torch.binary import find_checkmate  # noqa: E402
from checkmate_torch.measure import step_peak  # noqa: E402

import torch_cases  # noqa: E402  (bench/, the script's folder)

COMPILE_BUDGETS = (1.0, 0.5, 0.2)


# --- models -------------------------------------------------------------

CASES = {"gpt": lambda a, d: torch_cases.gpt(a, d, 0.0),
         "gpt-dropout": lambda a, d: torch_cases.gpt(a, d, 0.1),
         "resnet": torch_cases.resnet50}


# --- the peers --------------------------------------------------------------

class Checkpointed(torch.nn.Module):
    """A block run under torch.utils.checkpoint (non-reentrant), with a
    selective-checkpointing context_fn when given."""

    def __init__(self, block, context_fn=None):
        super().__init__()
        self.block = block
        self.context_fn = context_fn

    def forward(self, *args, **kwargs):
        extra = {} if self.context_fn is None else {"context_fn": self.context_fn}
        return checkpoint(self.block, *args, use_reentrant=False, **extra, **kwargs)


def _ops(*names):
    out = set()
    for n in names:
        packet, _, overload = n.partition(".")
        op = getattr(torch.ops.aten, packet, None)
        if op is not None and hasattr(op, overload):
            out.add(getattr(op, overload))
    return out


SAVE_OPS = _ops("mm.default", "addmm.default", "bmm.default", "baddbmm.default",
                "convolution.default", "_scaled_dot_product_flash_attention.default",
                "_scaled_dot_product_flash_attention_for_cpu.default",
                "_scaled_dot_product_efficient_attention.default",
                "_scaled_dot_product_cudnn_attention.default")


def selective_context(seen):
    """context_fn for checkpoint(): MUST_SAVE the matrix products and
    convolutions, PREFER_RECOMPUTE the rest; records what it saw in seen
    (op name -> policy name) for the JSON."""
    def policy(ctx, op, *args, **kwargs):
        p = CheckpointPolicy.MUST_SAVE if op in SAVE_OPS else CheckpointPolicy.PREFER_RECOMPUTE
        if not ctx.is_recompute:
            seen[str(op)] = p.name
        return p
    return functools.partial(create_selective_checkpoint_contexts, policy)


def wrap_blocks(case, model, which, context_fn=None):
    """model with the blocks whose index is in which(i) wrapped in
    Checkpointed (in place: model is a copy)."""
    for i, (container, j) in enumerate(case["blocks"](model)):
        if which(i):
            container[j] = Checkpointed(container[j], context_fn)
    return model


PARTITIONER_SEEN = []


def _record_partitioner():
    """Wraps the min-cut partitioner's choose_saved_values_set (private,
    torch 2.4+) to record the memory_budget it is called with and how many
    values it saves, for each compile-B variant's JSON: the evidence that
    the copy got its own budget. An AOTAutograd cache hit calls nothing
    (an empty list)."""
    try:
        from torch._functorch import partitioners
        orig = partitioners.choose_saved_values_set
    except (ImportError, AttributeError):
        return False
    if getattr(orig, "_peers_recorded", False):
        return True

    def recorded(joint_graph, node_info, memory_budget=1, **kw):
        saved = orig(joint_graph, node_info, memory_budget=memory_budget, **kw)
        PARTITIONER_SEEN.append({"memory_budget": memory_budget, "saved_values": len(saved)})
        return saved
    recorded._peers_recorded = True
    partitioners.choose_saved_values_set = recorded
    return True


def budget_backend(budget):
    """A torch.compile backend: inductor, with the AOTAutograd partitioner's
    activation_memory_budget set to budget while it compiles."""
    from torch._inductor.compile_fx import compile_fx

    def backend(gm, example_inputs):
        with torch._functorch.config.patch(activation_memory_budget=budget):
            return compile_fx(gm, example_inputs)
    backend.__name__ = "inductor_budget_%g" % budget
    return backend


# --- variants ------------------------------------------------------------

def one_line(e):
    s = (str(e).strip().splitlines() or [""])[0]
    if len(s) > 240:
        s = s[:237] + "..."
    return "%s: %s" % (type(e).__name__, s)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Variant:
    def __init__(self, label, kind, module, model, lr):
        self.label, self.kind = label, kind
        self.module = module          # what is called
        self.model = model            # the nn.Module holding the parameters
        self.params = list(model.parameters())
        for p in self.params:
            if p.requires_grad and p.grad is None:
                p.grad = torch.zeros_like(p)
        self.opt = torch.optim.SGD(self.params, lr=lr) if self.params else None
        self.wall, self.losses = [], []
        self.mem = None
        self.error = None
        self.extra = {}               # compile_s, build_s, plan_info, ...
        self.first_patch = None       # a context for the first step (compile)
        self.released = False

    def fwd_bwd(self, case):
        """The measured part: zero the gradients in place, forward, loss,
        backward; returns the loss."""
        for p in self.params:
            if p.grad is not None:
                p.grad.zero_()
        loss = case["loss"](self.module(*case["args"], **case["kwargs"]))
        loss.backward()
        return loss.detach()

    def update(self):
        self.opt.step()

    def release(self):
        """Drops the module and its copy of the model (a remat try not
        used): the figures stay."""
        self.module = self.model = self.opt = None
        self.params = []
        self.released = True


def guarded(v, what, fn, *a):
    """fn(*a), or None with v.error set (the variant leaves the run)."""
    if v.error is not None:
        return None
    try:
        return fn(*a)
    except Exception as e:
        v.error = "%s: %s" % (what, one_line(e))
        print("  %s: %s" % (v.label, v.error), flush=True)
        return None


def measure_mem(v, case, device):
    def step():
        v.fwd_bwd(case)
    r = step_peak(step, str(device))
    v.update()
    if device.type == "cuda":
        return {"between_ops": r["peak"], "peak": r["peak"]}
    return {"between_ops": r["between_ops"], "peak": r["peak"], "net": r["net"]}


def warm(v, case, device, n):
    for k in range(n):
        torch.manual_seed(1000 + k)
        v.fwd_bwd(case)
        sync(device)
        v.update()


def timed_rounds(variants, init, case, device, rounds):
    """Every variant back to the initial weights and buffers (init), then
    `rounds` rounds of one timed step each, the order rotating,
    torch.manual_seed(round) before each step, its SGD update after: into
    each variant's wall (ms) and losses."""
    with torch.no_grad():
        for v in variants:
            if v.error is None:
                own = list(v.model.parameters()) + list(v.model.buffers())
                for t, t0 in zip(own, init):
                    t.copy_(t0)
    for k in range(rounds):
        live = [v for v in variants if v.error is None]
        for j in range(len(live)):
            v = live[(j + k) % len(live)]

            def step(v=v, k=k):
                torch.manual_seed(k)
                sync(device)
                t0 = time.perf_counter()
                loss = v.fwd_bwd(case)
                sync(device)
                v.wall.append((time.perf_counter() - t0) * 1e3)
                v.losses.append(loss.item())
                v.update()
            guarded(v, "step", step)


def plan_summary(info):
    keys = ("budget", "peak", "cost", "overhead", "strategy", "param", "status",
            "fixed_memory", "checkpoint_all_peak", "checkpoint_all_cost", "nodes", "computes",
            "steps", "cost_unit", "stride_corrections", "cached")
    return {k: info.get(k) for k in keys}


def build_remat(case, base, args, label, budget, strategy):
    model = copy.deepcopy(base)
    t0 = time.perf_counter()
    r = checkmate_torch.remat(model, case["args"], case["kwargs"], budget=budget,
                              strategy=strategy, time_limit=args.time_limit, cache=True,
                              cost=args.cost)
    v = Variant(label, "remat", r, r.model, args.lr)
    v.extra["build_s"] = time.perf_counter() - t0
    v.extra["plan_info"] = plan_summary(r.plan_info)
    return v


def match_remat(case, base, args, device, peer, tried, keep):
    """The search for a remat budget whose measured between-ops peak is at
    most peer's (see the module docstring). tried: plan budget (bytes) ->
    Variant, shared between peers, so that a budget is measured once; a try
    that is superseded and not in keep (the variants chosen so far) is
    released, and built again if a later search needs it. Returns (variant
    or None, record)."""
    target = peer.mem["between_ops"]
    label = "remat@%s" % peer.label
    rec = {"target": target, "tries": [], "matched": False, "error": None}
    budget = None     # the first try: fixed memory + target, as a function
    chosen = None
    for k in range(args.tries):
        v = tried.get(budget)
        if v is None or v.released:
            b = (lambda fixed, peak, t=target: fixed + t) if budget is None else budget
            try:
                v = build_remat(case, base, args, label, b, "auto")
            except Exception as e:
                rec["error"] = one_line(e)
                rec["tries"].append({"budget": budget, "error": rec["error"]})
                print("  %s: try %d, budget %s: %s" % (
                    label, k + 1, "fixed + %s MB" % mb(target) if budget is None
                    else "%s MB" % mb(budget), rec["error"]), flush=True)
                break
            old = tried.get(v.extra["plan_info"]["budget"])
            if old is not None and not old.released:
                v.release()
                v = old
            else:
                guarded(v, "warm-up", warm, v, case, device, 1)
                torch.manual_seed(0)
                v.mem = guarded(v, "peak", measure_mem, v, case, device)
                tried[v.extra["plan_info"]["budget"]] = v
        info = v.extra["plan_info"]
        rec["tries"].append({"budget": info["budget"], "plan_peak": info["peak"],
                             "fixed_memory": info["fixed_memory"], "overhead": info["overhead"],
                             "status": info["status"], "cached": info["cached"],
                             "build_s": v.extra["build_s"], "measured": v.mem,
                             "error": v.error})
        print("  %s: try %d, budget %s MB (fixed %s + %s): plan peak %s MB, overhead %.3f, "
              "measured %s MB (target %s MB)"
              % (label, k + 1, mb(info["budget"]), mb(info["fixed_memory"]),
                 mb(info["budget"] - info["fixed_memory"]), mb(info["peak"]), info["overhead"],
                 "-" if v.mem is None else mb(v.mem["between_ops"]), mb(target)), flush=True)
        if v.error is not None:
            rec["error"] = v.error
            break
        if chosen is not None and chosen is not v and all(chosen is not c for c in keep):
            chosen.release()
        chosen = v
        excess = v.mem["between_ops"] - target
        if excess <= 0:
            rec["matched"] = True
            break
        margin = (info["peak"] - info["fixed_memory"]) // 100
        budget = min(info["budget"], info["peak"]) - excess - margin
        if budget <= info["fixed_memory"]:
            rec["tries"].append({"budget": budget, "error": "below the fixed memory"})
            break
    return chosen, rec


def paired(base, other, seed=1, draws=2000):
    """Round by round, other's wall time over base's in the same round
    (timed_rounds): the median of those ratios and a bootstrap 95%
    interval of it, [median, low, high]; None without equal rounds."""
    if not base or len(base) != len(other):
        return None
    ratios = [b / a for a, b in zip(base, other)]
    rng = random.Random(seed)
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(draws))
    return [statistics.median(ratios), boot[int(0.025 * draws)], boot[int(0.975 * draws) - 1]]


def mb(n):
    if n is None:
        return "-"
    return "%.1f" % (n / 1e6) if abs(n) >= 1e7 else "%.2f" % (n / 1e6)


def ratio(x):
    return "-" if x is None else "%.3f" % x


# --- one model ------------------------------------------------------------

def bench_model(name, args, device):
    torch._dynamo.reset()
    case = CASES[name](args, device)
    print("\n## %s on %s: %s" % (name, device, case["desc"]), flush=True)
    t_model = time.perf_counter()
    base = case["model"].to(device).train()
    init = [t.detach().clone() for t in list(base.parameters()) + list(base.buffers())]
    lr = args.lr
    variants = []

    def add(label, kind, make):
        try:
            module, model = make()
            v = Variant(label, kind, module, model, lr)
        except Exception as e:
            v = Variant(label, kind, None, torch.nn.Module(), lr)
            v.error = "build: " + one_line(e)
            print("  %s: %s" % (label, v.error), flush=True)
        variants.append(v)
        return v

    def plain():
        m = copy.deepcopy(base)
        return m, m

    def ckpt(which, context_fn=None):
        def make():
            m = wrap_blocks(case, copy.deepcopy(base), which, context_fn)
            return m, m
        return make

    add("eager", "eager", plain)
    add("ckpt-every-block", "peer", ckpt(lambda i: True))
    add("ckpt-every-2nd", "peer", ckpt(lambda i: i % 2 == 0))
    seen = {}
    sel = add("selective", "peer", ckpt(lambda i: True, selective_context(seen)))
    sel.extra["policy_seen"] = seen
    for b in COMPILE_BUDGETS:
        def make(b=b):
            m = copy.deepcopy(base)
            return torch.compile(m, backend=budget_backend(b)), m
        v = add("compile-%.1f" % b, "peer", make)
        v.first_patch = functools.partial(torch._functorch.config.patch,
                                          activation_memory_budget=b)
        v.extra["activation_memory_budget"] = b
    try:
        ra = build_remat(case, base, args, "remat-all", "100%", "checkpoint-all")
        ra.kind = "remat-all"
        print("  remat-all: built in %.1f s, fixed memory %s MB, checkpoint-all peak %s MB "
              "(the plan's figures)" % (ra.extra["build_s"],
                                        mb(ra.extra["plan_info"]["fixed_memory"]),
                                        mb(ra.extra["plan_info"]["checkpoint_all_peak"])),
              flush=True)
    except Exception as e:
        ra = Variant("remat-all", "remat-all", None, torch.nn.Module(), lr)
        ra.error = "build: " + one_line(e)
        print("  remat-all: %s" % ra.error, flush=True)
    variants.append(ra)

    # First steps: compilation for compile-B, timed apart.
    recording = _record_partitioner()
    for v in variants:
        if v.first_patch is None or v.error is not None:
            continue
        def first(v=v):
            torch.manual_seed(999)
            del PARTITIONER_SEEN[:]
            t0 = time.perf_counter()
            with v.first_patch():
                v.fwd_bwd(case)
                sync(device)
            v.extra["compile_s"] = time.perf_counter() - t0
            v.extra["partitioner"] = list(PARTITIONER_SEEN) if recording else None
            v.update()
        guarded(v, "compile", first)
        if v.error is None:
            print("  %s: first step (compilation) %.1f s; partitioner calls %s"
                  % (v.label, v.extra["compile_s"], v.extra["partitioner"]), flush=True)

    # Warm-up, then the peaks.
    for v in variants:
        guarded(v, "warm-up", warm, v, case, device, args.warmup)
    for v in variants:
        torch.manual_seed(0)
        v.mem = guarded(v, "peak", measure_mem, v, case, device)
        if v.mem is not None:
            print("  %s: peak %s MB between ops, %s MB in-op" % (
                v.label, mb(v.mem["between_ops"]), mb(v.mem["peak"])), flush=True)

    # remat at each peer's measured peak.
    tried, matches, chosen = {}, {}, []
    for p in variants:
        if p.kind != "peer":
            continue
        if p.mem is None:
            matches[p.label] = (None, {"error": "the peer has no peak (%s)" % p.error,
                                       "tries": [], "matched": False})
            continue
        c, rec = match_remat(case, base, args, device, p, tried, chosen)
        matches[p.label] = (c, rec)
        if c is not None and all(c is not x for x in chosen):
            chosen.append(c)
    for v in tried.values():
        if all(v is not c for c in chosen):
            v.release()
    tried.clear()
    for v in chosen:
        v.label = "remat@" + ",".join(lbl for lbl, (c, _) in matches.items() if c is v)
    timed = variants + chosen

    t_rounds = time.perf_counter()
    timed_rounds(timed, init, case, device, args.rounds)
    rounds_s = time.perf_counter() - t_rounds
    print("  %d rounds in %.1f s" % (args.rounds, rounds_s), flush=True)

    # Figures.
    eager = variants[0]
    e_med = statistics.median(eager.wall) if eager.error is None and eager.wall else None

    def fig(v):
        d = {"label": v.label, "kind": v.kind, "error": v.error, "memory": v.mem,
             "wall_ms": v.wall, "losses": v.losses}
        d.update(v.extra)
        ok = v.error is None and len(v.wall) == args.rounds
        d["ms_median"] = statistics.median(v.wall) if ok else None
        d["time_ratio"] = d["ms_median"] / e_med if ok and e_med else None
        if ok and eager.error is None and len(eager.losses) == len(v.losses):
            diffs = [abs(a - b) / abs(b) if b else abs(a - b)
                     for a, b in zip(v.losses, eager.losses)]
            d["loss_rel_diff"], d["loss_rel_diff_first"] = max(diffs), diffs[0]
        else:
            d["loss_rel_diff"] = d["loss_rel_diff_first"] = None
        return d
    rows = [fig(v) for v in variants]
    chosen_fig = {id(v): fig(v) for v in chosen}
    for r, v in zip(rows, variants):
        if v.kind != "peer":
            continue
        c, rec = matches[v.label]
        r["remat"] = dict(rec, result=None if c is None else chosen_fig[id(c)])
    out = {"model": name, "device": str(device), "desc": case["desc"],
           "dropout": case["dropout"], "eager_ms_median": e_med, "rows": rows,
           "rounds_s": rounds_s, "total_s": time.perf_counter() - t_model}
    print(table(out), flush=True)
    return out


# --- output ------------------------------------------------------------------

def table(m):
    lines = ["### %s (%s)" % (m["model"], m["device"]), "",
             "%s; eager %s ms per step (median)." % (
                 m["desc"], "-" if m["eager_ms_median"] is None
                 else "%.0f" % m["eager_ms_median"]), "",
             "| variant | peak MB | in-op MB | time / eager | loss rel. diff first / max "
             "| compile s "
             "| remat peak MB | remat time / eager | remat budget MB (fixed + act) | tries |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in m["rows"]:
        if r["error"] is not None and r["memory"] is None:
            lines.append("| %s | error: %s | | | | | | | | |" % (r["label"], r["error"]))
            continue
        mem = r["memory"] or {}
        cells = [r["label"], mb(mem.get("between_ops")), mb(mem.get("peak")),
                 ratio(r["time_ratio"]),
                 "-" if r["loss_rel_diff"] is None else "%.1e / %.1e" % (
                     r["loss_rel_diff_first"], r["loss_rel_diff"]),
                 "-" if r.get("compile_s") is None else "%.1f" % r["compile_s"]]
        if r["error"] is not None:
            cells[3] = "error: " + r["error"]
        rm = r.get("remat")
        if rm is None:
            cells += ["", "", "", ""]
        elif rm["result"] is None:
            cells += ["error: %s" % rm["error"], "", "", str(len(rm["tries"]))]
        else:
            res = rm["result"]
            info = res["plan_info"]
            rmem = res["memory"] or {}
            cells += [mb(rmem.get("between_ops")) + ("" if rm["matched"] else " (not matched)"),
                      ratio(res["time_ratio"]) if res["error"] is None
                      else "error: " + res["error"],
                      "%s (%s + %s)" % (mb(info["budget"]), mb(info["fixed_memory"]),
                                        mb(info["budget"] - info["fixed_memory"])),
                      str(len(rm["tries"]))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="gpt,gpt-dropout,resnet",
                    help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--rounds", type=int, default=9, help="timed rounds (default 9)")
    ap.add_argument("--warmup", type=int, default=2, help="warm-up steps per variant (default 2)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--time-limit", type=float, default=30.0,
                    help="seconds for each remat solve (strategy auto; default 30)")
    ap.add_argument("--cost", default="flops", choices=("flops", "time"),
                    help="remat(cost=...): what the plans minimize (default flops)")
    ap.add_argument("--tries", type=int, default=4,
                    help="remat budgets tried per peer (default 4)")
    ap.add_argument("--lr", type=float, default=1e-3, help="SGD learning rate (default 1e-3)")
    torch_cases.add_size_arguments(ap)
    ap.add_argument("--warm-compile-cache", action="store_true",
                    help="keep torch's inductor/AOTAutograd caches (default: a fresh temporary "
                         "TORCHINDUCTOR_CACHE_DIR, so compile s is a cold compilation)")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    ap.add_argument("--markdown", metavar="FILE", help="write the tables to FILE")
    args = ap.parse_args()
    names = args.models.split(",")
    for n in names:
        if n not in CASES:
            ap.error("unknown model %r (one of %s)" % (n, ", ".join(CASES)))
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch.cuda.is_available() is False")

    t_all = time.perf_counter()
    torch.set_num_threads(args.threads)
    fresh = None
    if not args.warm_compile_cache and "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        fresh = tempfile.mkdtemp(prefix="torch_peers_inductor.")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = fresh
    try:
        run(args, names, device, t_all)
    finally:
        if fresh is not None:
            shutil.rmtree(fresh, ignore_errors=True)


def run(args, names, device, t_all):
    head = ("torch %s, torch.get_num_threads() = %d, CPU %s (%d cores visible)%s; checkmate %s; "
            "%d rounds after %d warm-up steps, SGD lr %g; remat strategy auto, time limit %g s, "
            "cost %s; inductor cache %s"
            % (torch.__version__, torch.get_num_threads(), cpu_model(), os.cpu_count(),
               ", GPU " + torch.cuda.get_device_name(device) if device.type == "cuda" else "",
               find_checkmate(), args.rounds, args.warmup, args.lr, args.time_limit, args.cost,
               os.environ.get("TORCHINDUCTOR_CACHE_DIR", "torch's default")))
    print("# remat against its peers\n\n" + head, flush=True)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(),
           "cpu": cpu_model(), "device": str(device),
           "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
           "args": vars(args), "models": []}
    for n in names:
        try:
            out["models"].append(bench_model(n, args, device))
        except Exception as e:   # a failure outside any variant: the model's line
            print("\n## %s: error: %s" % (n, one_line(e)), flush=True)
            out["models"].append({"model": n, "error": one_line(e)})
    out["total_s"] = time.perf_counter() - t_all
    md = [head, ""]
    for m in out["models"]:
        md += [table(m) if "rows" in m else "### %s\n\nerror: %s" % (m["model"], m["error"]),
               ""]
    md.append("peak MB: checkmate_torch.measure.step_peak's between_ops (in-op MB: its peak); "
              "time / eager: median wall time over the rounds; remat: the remat budget found "
              "for the peer's measured peak (bench/torch_peers.py's docstring).")
    print("\n# summary\n\n" + "\n".join(md))
    print("\ntotal run time %.1f s" % out["total_s"])
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()

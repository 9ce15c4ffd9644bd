#!/usr/bin/env python3
"""remat(..., compile=True) against torch.compile at matched memory
(issue 38's compiled mode).

Usage: build/venv-torch2/bin/python bench/torch_compiled.py
           [--models gpt,gpt-dropout,resnet] [--rounds 7] [--threads 1]
           [--device cpu|cuda] [--time-limit 20] [--fractions 1,.7,.55,.45,.4]
           [--budgets BYTES,...]
           [--tries 3] [--costs flops,time] [--lr 1e-3] [--kernels]
           [--lock FILE] [--json FILE] [--markdown FILE]
           (and bench/torch_peers.py's model sizes: --gpt-layers ...)

The models are bench/torch_peers.py's (bench/torch_cases.py). Variants of
one training step, each on its own copy of the model, all compiled with
fullgraph=True, dynamic=False and inductor at default settings:
  compile        torch.compile (activation_memory_budget 1.0);
  compile-0.5    activation_memory_budget 0.5 (the knapsack over the
                 min cut's saved values);
  remat-F        checkmate_torch.remat(compile=True) at budget fixed
                 memory + F x the activations of the joint graph's
                 checkpoint-all schedule (plan_info's figures), for each F
                 of --fractions (none for --fractions ''): the saved
                 values chosen by `checkmate partition`;
  remat@B        the same at a budget of B bytes, for each B of
                 --budgets (a budget an earlier run found: a longer
                 head-to-head of that point alone);
  remat@0.5-tryK the largest budget whose measured peak is at most
                 compile-0.5's, by bisection: the budget halfway between
                 the largest remat partition's peak (the model's)
                 measured at or under that peak and the least over it
                 (below the lowest by the excess when none is under),
                 while they are more than 2% apart;
                 up to --tries (3) times.

Each variant's first step compiles (timed apart: "compile s"; every
variant with torch's caches as they are, $TORCHINDUCTOR_CACHE_DIR, warm
after a first run; remat's plans from checkmate's cache). Then one
step measured by checkmate_torch.measure.step_peak: "peak MB" is its peak
(every allocation inside inductor's kernels counted, not only between ATen
ops; on CUDA torch.cuda.max_memory_allocated). Then every copy goes back
to the initial weights and --rounds rounds run one step of each variant,
the order rotating, torch.manual_seed(round) before each, an SGD step (lr
--lr) after: the median wall time as a ratio to compile's, the median of
each round's time over compile-0.5's in that round with a bootstrap 95%
interval (torch_peers.paired), and the losses
of the first five rounds against compile's (largest relative difference;
inductor draws the same dropout masks for every partition, so they agree
up to rounding). Below the table: whether the measured peaks of the
remat-F are monotone in F, and the remat variant with the least time among
those whose peak is at most compile-0.5's, for each of --costs (flops,
time: remat's cost argument; a variant of cost time is labelled /time;
flops-plain, labelled /flops-plain: FLOP costs without the saved values'
traffic or launches, the partition before save costs, for comparison).
--kernels profiles one more step of each variant (kernel_profile): on
CUDA the kernels launched and their summed device time, to tell a step
that launches more kernels from one whose kernels take longer.
--lock FILE: processes started side by side with the same FILE (one per
model, bench/cuda.sh) compile at once and time one at a time, each once
no other compiles (FILE.started and FILE.ready list their pids), under
an exclusive flock of FILE.
"""
import argparse
import contextlib
import copy
import fcntl
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import torch_cases  # noqa: E402
import torch_peers as tp  # noqa: E402  (sets sys.path for checkmate_torch)
import checkmate_torch  # noqa: E402
from checkmate_torch import compiled as cm_compiled  # noqa: E402
from checkmate_torch.binary import find_checkmate  # noqa: E402


def compiled(model, backend):
    return torch.compile(model, backend=backend, fullgraph=True, dynamic=False)


def remat_variant(case, base, args, label, budget, cost="flops"):
    model = copy.deepcopy(base)
    r = checkmate_torch.remat(model, case["args"], case["kwargs"], budget=budget,
                              time_limit=args.time_limit, cache=True, compile=True,
                              cost="flops" if cost == "flops-plain" else cost)
    label += "" if cost == "flops" else "/" + cost
    if cost == "flops-plain":   # its rates patched (first_step): not these settings' partition
        r._partitioner._uuid = None
    v = tp.Variant(label, "remat", r, model, args.lr)
    v.extra["remat"] = r
    v.extra["cost"] = cost
    return v


def first_step(v, case, device):
    """The compiling step, timed; remat's plan figures after it."""
    def run():
        torch.manual_seed(999)
        t0 = time.perf_counter()
        plain = v.extra.get("cost") == "flops-plain"
        rate = cm_compiled.Partitioner.__dict__["_rates"]
        if plain:   # no save or launch costs: the partition that prices FLOPs alone
            cm_compiled.Partitioner._rates = staticmethod(
                lambda *a: {"flops_per_byte": 0.0, "flops_per_launch": 0.0})
        try:
            v.fwd_bwd(case)
        finally:
            cm_compiled.Partitioner._rates = rate
        tp.sync(device)
        v.extra["compile_s"] = time.perf_counter() - t0
        v.update()
        if "remat" in v.extra:
            v.extra["plan_info"] = v.extra.pop("remat").plan_info
    tp.guarded(v, "compile", run)


def measure(v, case, device):
    torch.manual_seed(0)
    v.mem = tp.guarded(v, "peak", tp.measure_mem, v, case, device)
    info = v.extra.get("plan_info", {})
    print("  %s: compile %s s, peak %s MB%s" % (
        v.label, "-" if "compile_s" not in v.extra else "%.1f" % v.extra["compile_s"],
        "-" if v.mem is None else tp.mb(v.mem["peak"]),
        "" if not info else "; budget %s MB, model peak %s MB, saved %d values %s MB, "
        "predicted overhead %.3f" % (
            tp.mb(info["budget"]), tp.mb(info["plan_peak"]), info["saved"],
            tp.mb(info["saved_bytes"]), info["overhead"])),
        flush=True)


def kernel_profile(v, case, device):
    """One step under torch.profiler: on CUDA the kernels it launches and
    their summed device time; everywhere the step's wall time under the
    profiler and its top-level aten:: ops (the extern kernels: matrix
    products, convolutions; inductor's own CPU kernels are no events)."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    torch.manual_seed(0)
    tp.sync(device)
    with profile(activities=acts) as prof:
        t0 = time.perf_counter()
        v.fwd_bwd(case)
        tp.sync(device)
        wall = time.perf_counter() - t0
    events = list(prof.events())
    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
    aten = sorted((e for e in events if e.name.startswith("aten::")
                   and e.device_type == torch.autograd.DeviceType.CPU),
                  key=lambda e: (e.thread, e.time_range.start))
    top, end = 0, {}
    for e in aten:
        if e.time_range.start >= end.get(e.thread, -1):
            top += 1
            end[e.thread] = e.time_range.end
    return {"kernels": len(kernels) if device.type == "cuda" else None,
            "device_ms": sum(e.time_range.elapsed_us() for e in kernels) / 1e3
            if device.type == "cuda" else None,
            "profiled_ms": wall * 1e3, "aten_ops": top}


def _pids(path):
    try:
        with open(path) as f:
            return {int(x) for x in f.read().split()}
    except OSError:
        return set()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


@contextlib.contextmanager
def locked(path):
    """The timed part of a run, alone (nothing for path None): marks
    this process ready in path.ready, waits until every process that
    registered in path.started (main) is ready or gone, so that none
    compiles, then holds an exclusive flock on path while the block
    runs."""
    if path is None:
        yield
        return
    with open(path + ".ready", "a") as f:
        f.write("%d\n" % os.getpid())
    t0 = time.perf_counter()
    while any(p not in _pids(path + ".ready") and _alive(p) for p in _pids(path + ".started")):
        time.sleep(0.5)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        print("  timing (waited %.1f s for the others' compiles and the lock)"
              % (time.perf_counter() - t0), flush=True)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def tries(variants, case, base, args, device, target, cost):
    """The bisection of remat@0.5-tryK (above) among the variants of cost."""
    for k in range(args.tries if target else 0):
        ours = [v for v in variants if v.kind == "remat" and v.mem is not None
                and v.extra["cost"] == cost]
        below = [v for v in ours if v.mem["peak"] <= target]
        above = [v for v in ours if v.mem["peak"] > target]
        if not above:
            break
        # The partitions' own peaks, not their budgets: a partition that
        # saves less than its budget allows (save costs) is the answer of
        # every budget down to its peak.
        bh = min(v.extra["plan_info"]["plan_peak"] for v in above)
        if below:
            bl = max(v.extra["plan_info"]["plan_peak"] for v in below)
            if bl >= bh or bh - bl <= 0.02 * bl:
                break
            budget = (bl + bh) // 2
        else:
            hi = min(above, key=lambda v: v.extra["plan_info"]["plan_peak"])
            fixed = hi.extra["plan_info"]["fixed_memory"]
            budget = bh - (hi.mem["peak"] - target) - (bh - fixed) // 50
        try:
            v = remat_variant(case, base, args, "remat@0.5-try%d" % (k + 1), budget, cost)
        except Exception as e:
            print("  remat@0.5-try%d: %s" % (k + 1, tp.one_line(e)), flush=True)
            break
        variants.append(v)
        first_step(v, case, device)
        tp.guarded(v, "warm-up", tp.warm, v, case, device, 1)
        measure(v, case, device)
        if v.mem is None:
            break


def bench_model(name, args, device):
    torch._dynamo.reset()
    case = tp.CASES[name](args, device)
    print("\n## %s on %s: %s" % (name, device, case["desc"]), flush=True)
    t_model = time.perf_counter()
    base = case["model"].to(device).train()
    init = [t.detach().clone() for t in list(base.parameters()) + list(base.buffers())]
    variants = []
    for label, b in (("compile", 1.0), ("compile-0.5", 0.5)):
        m = copy.deepcopy(base)
        v = tp.Variant(label, "peer", compiled(m, tp.budget_backend(b)), m, args.lr)
        variants.append(v)
    for cost in args.costs:
        for f in args.fractions:
            b = (lambda fixed, peak, f=f: int(fixed + f * (peak - fixed)))
            try:
                variants.append(remat_variant(case, base, args, "remat-%g" % f, b, cost))
            except Exception as e:
                print("  remat-%g: %s" % (f, tp.one_line(e)), flush=True)
        for b in args.budgets:
            variants.append(remat_variant(case, base, args, "remat@%d" % b, b, cost))
    for v in variants:
        first_step(v, case, device)
        tp.guarded(v, "warm-up", tp.warm, v, case, device, 1)
        measure(v, case, device)
    # The largest budget whose measured peak is at most compile-0.5's: a
    # bisection between the largest budget at or under that peak and the
    # least one over it (below the lowest by the excess when none is
    # under), up to --tries times, until they are within 2%.
    target = variants[1].mem["peak"] if variants[1].mem else None
    for cost in args.costs:
        tries(variants, case, base, args, device, target, cost)

    with locked(args.lock):
        tp.timed_rounds(variants, init, case, device, args.rounds)
        if args.kernels:
            for v in variants:
                if v.error is None:
                    v.extra["kernels"] = tp.guarded(v, "profile", kernel_profile, v, case,
                                                    device)
                    print("  %s: %s" % (v.label, v.extra["kernels"]), flush=True)

    ref = variants[0]
    ref_ms = statistics.median(ref.wall) if ref.error is None else None
    rows = []
    for v in variants:
        ok = v.error is None and len(v.wall) == args.rounds
        r = {"label": v.label, "kind": v.kind, "error": v.error, "memory": v.mem,
             "wall_ms": v.wall, "losses": v.losses,
             "compile_s": v.extra.get("compile_s"), "plan_info": v.extra.get("plan_info"),
             "kernels": v.extra.get("kernels"),
             "ms_median": statistics.median(v.wall) if ok else None}
        r["time_ratio"] = r["ms_median"] / ref_ms if ok and ref_ms else None
        r["paired_over_0.5"] = tp.paired(variants[1].wall, v.wall) \
            if ok and v is not variants[1] and variants[1].error is None else None
        n = min(5, len(v.losses), len(ref.losses))
        r["loss_rel_diff"] = (max(abs(a - b) / abs(b) for a, b in
                                  zip(v.losses[:n], ref.losses[:n])) if ok and n else None)
        rows.append(r)
    out = {"model": name, "device": str(device), "desc": case["desc"], "rows": rows,
           "fractions": args.fractions, "monotone": {}, "best_at_0.5": {},
           "total_s": time.perf_counter() - t_model}
    p = rows[1]
    for cost in args.costs:
        ours = [r for r, v in zip(rows, variants)
                if v.kind == "remat" and v.extra["cost"] == cost and r["memory"]]
        peaks = [r["memory"]["peak"] for r in ours if r["label"].startswith("remat-")]
        out["monotone"][cost] = (all(a >= b for a, b in zip(peaks, peaks[1:]))
                                 if args.fractions and len(peaks) == len(args.fractions)
                                 else None)
        fit = [r for r in ours if p["memory"] and r["time_ratio"]
               and r["memory"]["peak"] <= p["memory"]["peak"]]
        out["best_at_0.5"][cost] = (min(fit, key=lambda r: r["time_ratio"])["label"]
                                    if fit else None)
    print(table(out), flush=True)
    return out


def table(m):
    lines = ["### %s (%s)" % (m["model"], m["device"]), "", m["desc"], "",
             "| variant | peak MB | time / compile | paired / compile-0.5 "
             "| loss rel. diff (5 steps) | compile s "
             "| budget MB | model peak MB | saved MB | predicted overhead |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in m["rows"]:
        i = r["plan_info"] or {}
        pr = r.get("paired_over_0.5")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["label"] + ("" if r["error"] is None else " (%s)" % r["error"]),
            tp.mb(r["memory"]["peak"]) if r["memory"] else "-", tp.ratio(r["time_ratio"]),
            "-" if pr is None else "%.3f [%.3f, %.3f]" % tuple(pr),
            "-" if r["loss_rel_diff"] is None else "%.1e" % r["loss_rel_diff"],
            "-" if r["compile_s"] is None else "%.1f" % r["compile_s"],
            tp.mb(i.get("budget")), tp.mb(i.get("plan_peak")),
            tp.mb(i.get("saved_bytes")),
            tp.ratio(i.get("overhead"))))
    if any(r.get("kernels") for r in m["rows"]):
        lines += ["", "| variant | kernels | device ms | profiled step ms | top-level ATen ops |",
                  "|---|---:|---:|---:|---:|"]
        for r in m["rows"]:
            k = r.get("kernels") or {}
            lines.append("| %s | %s | %s | %s | %s |" % (
                r["label"], k.get("kernels", "-") if k.get("kernels") is not None else "-",
                "-" if k.get("device_ms") is None else "%.2f" % k["device_ms"],
                "-" if not k else "%.2f" % k["profiled_ms"], k.get("aten_ops", "-")))
    for cost in m["monotone"]:
        lines += ["", "costs %s: remat-F measured peaks monotone in F: %s; fastest remat at "
                  "most compile-0.5's peak: %s" % (cost, m["monotone"][cost],
                                                   m["best_at_0.5"][cost])]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="gpt,gpt-dropout,resnet")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--fractions", default="1,.7,.55,.45,.4",
                    type=lambda s: [float(x) for x in s.split(",") if x])
    ap.add_argument("--budgets", default="", type=lambda s: [int(x) for x in s.split(",") if x])
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--costs", default="flops", type=lambda s: s.split(","))
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--kernels", action="store_true",
                    help="profile one step of each variant (kernel_profile)")
    ap.add_argument("--lock", help="time alone among the processes given this file")
    torch_cases.add_size_arguments(ap)
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    if args.lock:
        with open(args.lock + ".started", "a") as f:
            f.write("%d\n" % os.getpid())
    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    head = ("torch %s, %d thread(s), CPU %s%s; checkmate %s; remat time limit %g s; "
            "%d rounds" % (torch.__version__, torch.get_num_threads(), tp.cpu_model(),
                           ", GPU " + torch.cuda.get_device_name(device)
                           if device.type == "cuda" else "", find_checkmate(),
                           args.time_limit, args.rounds))
    print("# remat(compile=True) against torch.compile\n\n" + head, flush=True)
    out = {"torch": torch.__version__, "args": vars(args), "head": head, "models": []}
    for n in args.models.split(","):
        out["models"].append(bench_model(n, args, device))
    md = [head, ""] + [table(m) + "\n" for m in out["models"]]
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()

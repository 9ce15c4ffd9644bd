#!/usr/bin/python3
"""Wall time per training step under checkmate_torch.remat.

Usage: /usr/bin/python3 bench/torch_train.py [--models resnet50,gpt]
           [--steps 7] [--warmup 2] [--time-limit 60] [--threads 1]
           [--device auto|cpu|cuda|all] [--profile] [--json FILE]

For each model a training step is forward, loss, backward and an SGD step
(optimizer.zero_grad(set_to_none=False) keeps the gradient tensors, which
are made before the first step, so that both the
ordinary step and the plan accumulate into existing .grad tensors). Three
versions of the step are timed, each on its own copy of the same initial
model:
  ordinary        the model itself;
  (a) ckpt-all    remat(..., budget="100%", strategy="checkpoint-all"): the
                  plan computes every node once and frees it after its last
                  use, so the time above the ordinary step is the module's
                  own overhead (ATen ops called from the plan's generated
                  code, the autograd.Function boundary);
  (b) 50% act     remat(..., budget=lambda fixed, peak: fixed + (peak -
                  fixed) // 2, strategy "auto", --time-limit seconds): half
                  of the activation memory; its plan_info["overhead"] (the
                  plan's cost over the checkpoint-all cost, in FLOPs) is
                  printed beside the measured ratios to the ordinary step
                  and to (a) (which leaves only the recompute cost);
  (c) --time-costs  (b) with cost="time": each op's median time measured
                  on the example, so that the predicted overhead is one of
                  time, to compare with the measured ratio to (a).
Plans are solved (and times measured) afresh unless --cache.

Models (the batch is fixed for the run, labels are random):
  resnet50  torchvision resnet50 (where torchvision imports; else
            checkmate_torch/examples/resnet.py, the same layers), batch
            16, 3x128x128, cross-entropy;
  gpt       checkmate_torch/examples/gpt.py GPT(vocab=256, context=64,
            d=128, heads=4, layers=4, dropout=0.1), batch 4: long token
            ids (B, T), attention_mask (bool, all True) as a keyword,
            cross-entropy of the logits against the ids shifted by one.

Timing: CPU work runs on torch.set_num_threads(--threads) (1 by default).
After --warmup steps of every version, --steps rounds each time one step of
every version, the order rotating from round to round, so that a slow
period of a shared machine spreads over the versions instead of landing on
one; the median wall time (time.perf_counter, after
torch.cuda.synchronize on CUDA) is reported with the min-max range and the
median process CPU time. torch.manual_seed(round) runs before every step,
so every version draws the same dropout masks and starts from the same
weights: their losses are compared (bitwise equal is expected). The time
to build each remat module (trace, analysis, the `checkmate solve` run,
which is timed on its own) is a one-off and reported separately.

The module's overhead is measured twice: as median((a)) / median(ordinary)
- 1, and, less sensitive to a busy machine, as the host time outside ATen
ops in one profiled step (torch.profiler; the step's wall time minus the
time inside top-level aten:: ops) of (a) minus that of the ordinary step,
over the ordinary step's median (medians of --host-repeats profiled steps). It must stay below 15% on resnet50; the
line saying so ends with OK or EXCEEDS. --profile adds a cProfile listing
of one (a) step per model.

Memory: on CPU the peak of live tensor bytes between two ATen ops during
one step (checkmate_torch.measure.step_peak's between_ops, measured with
the profiler after the timing; --no-memory skips it); on CUDA
torch.cuda.max_memory_allocated over one step. With --device auto (the
default) the benchmark runs on CPU and, where torch.cuda.is_available(),
on CUDA as well; without a GPU the CUDA part is skipped with a line saying
so.
"""
import argparse
import copy
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import checkmate_torch  # noqa: E402
from checkmate_torch import solve as solvemod  # noqa: E402
from checkmate_torch.binary import find_checkmate  # noqa: E402

import torch_cases  # noqa: E402  (bench/, the script's folder)

OVERHEAD_LIMIT = 0.15


# --- models -------------------------------------------------------------

CASES = {"resnet50": lambda a, d: torch_cases.resnet50(a, d, torchvision=True),
         "gpt": lambda a, d: torch_cases.gpt(a, d, 0.1)}


# --- helpers ------------------------------------------------------------

class SolveTimer:
    """Wraps checkmate_torch.solve.solve (which train.Compiled calls as
    solvemod.solve) to time the `checkmate solve` runs."""

    def __init__(self):
        self.seconds = 0.0
        self._orig = solvemod.solve

    def __enter__(self):
        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return self._orig(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t0
        solvemod.solve = timed
        return self

    def __exit__(self, *exc):
        solvemod.solve = self._orig


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Version:
    def __init__(self, label, module, params, info=None, build_s=None, solve_s=None):
        self.label, self.module, self.info = label, module, info
        self.build_s, self.solve_s = build_s, solve_s
        self.opt = torch.optim.SGD(params, lr=0.01)
        for p in params:   # the gradients are fixed memory, as the plans count them
            if p.requires_grad and p.grad is None:
                p.grad = torch.zeros_like(p)
        self.wall, self.cpu, self.losses = [], [], []
        self.mem = None
        self.outside_ms = None
        self.step_ms_profiled = None


def make_step(case, v):
    args, kwargs, loss_fn = case["args"], case["kwargs"], case["loss"]

    def step():
        v.opt.zero_grad(set_to_none=False)
        loss = loss_fn(v.module(*args, **kwargs))
        loss.backward()
        v.opt.step()
        return loss.detach()
    return step


def outside_aten_ms(step, device):
    """(wall ms of one profiled step, ms of it not inside a top-level
    aten:: op): the host time of Python, autograd and the executor."""
    sync(device)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        step()
        sync(device)
        wall = (time.perf_counter() - t0) * 1e3
    inside = 0.0
    for e in prof.events():
        if not e.name.startswith("aten::"):
            continue
        p = e.cpu_parent
        while p is not None and not p.name.startswith("aten::"):
            p = p.cpu_parent
        if p is None:
            inside += (e.time_range.end - e.time_range.start) / 1e3
    return wall, wall - inside


def memory_of(step, device):
    if device.type == "cuda":
        sync(device)
        torch.cuda.reset_peak_memory_stats(device)
        step()
        sync(device)
        return {"max_memory_allocated": torch.cuda.max_memory_allocated(device)}
    from checkmate_torch.measure import step_peak
    r = step_peak(step, "cpu")
    return {"between_ops": r["between_ops"], "peak": r["peak"]}


def mb(n):
    return "%.1f MB" % (n / 1e6)


def fmt_ratio(x):
    return "-" if x is None else "%.3f" % x


# --- one model on one device -----------------------------------------

def bench_case(name, args, device, out):
    case = CASES[name](args, device)
    print("\n## %s on %s: %s" % (name, device, case["desc"]), flush=True)
    base = case["model"].to(device).train()
    ex_args, ex_kwargs = case["args"], case["kwargs"]

    versions = []
    m = copy.deepcopy(base)
    versions.append(Version("ordinary", m, list(m.parameters())))
    half = lambda fixed, peak: fixed + (peak - fixed) // 2  # noqa: E731
    plans = [("(a) checkpoint-all", dict(budget="100%", strategy="checkpoint-all",
                                         time_limit=args.time_limit)),
             ("(b) fixed + 50% act", dict(budget=half, strategy="auto",
                                         time_limit=args.time_limit))]
    if args.time_costs:
        plans.append(("(c) (b), time costs", dict(budget=half, strategy="auto", cost="time",
                                                 time_limit=args.time_limit)))
    for label, settings in plans:
        m = copy.deepcopy(base)
        t0 = time.perf_counter()
        with SolveTimer() as st:
            r = checkmate_torch.remat(m, ex_args, ex_kwargs, cache=args.cache, **settings)
        build = time.perf_counter() - t0
        info = r.plan_info
        print("built %s in %.1f s (checkmate solve %.1f s): strategy %s %s, status %s, "
              "%d nodes, %d computes, overhead %.4f, peak %s of checkpoint-all %s "
              "(fixed %s)" % (label, build, st.seconds, info["strategy"], info["param"] or "",
                             info["status"], info["nodes"], info["computes"], info["overhead"],
                             mb(info["peak"]), mb(info["checkpoint_all_peak"]),
                             mb(info["fixed_memory"])), flush=True)
        versions.append(Version(label, r, list(r.model.parameters()), info, build, st.seconds))

    steps = [make_step(case, v) for v in versions]
    n = len(versions)
    t_start = time.perf_counter()
    for w in range(args.warmup):
        for v, step in zip(versions, steps):
            torch.manual_seed(1000 + w)
            step()
            sync(device)
    for k in range(args.steps):
        for j in range(n):
            i = (j + k) % n
            v, step = versions[i], steps[i]
            torch.manual_seed(k)
            sync(device)
            t0, c0 = time.perf_counter(), time.process_time()
            loss = step()
            sync(device)
            v.wall.append((time.perf_counter() - t0) * 1e3)
            v.cpu.append((time.process_time() - c0) * 1e3)
            v.losses.append(loss.item())
    print("timed %d rounds in %.1f s" % (args.steps, time.perf_counter() - t_start), flush=True)

    for v, step in zip(versions[:2], steps[:2]):
        got = []
        for k in range(args.host_repeats):
            torch.manual_seed(k)
            got.append(outside_aten_ms(step, device))
        v.step_ms_profiled = statistics.median(w for w, _ in got)
        v.outside_ms = statistics.median(o for _, o in got)
    if not args.no_memory:
        for v, step in zip(versions, steps):
            torch.manual_seed(0)
            v.mem = memory_of(step, device)
    if args.profile:
        torch.manual_seed(0)
        pr = cProfile.Profile()
        pr.enable()
        steps[1]()
        sync(device)
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(args.profile_rows)
        print("\ncProfile of one (a) step, by own time:\n" + s.getvalue())

    ordinary, ca = versions[0], versions[1]
    med = {v.label: statistics.median(v.wall) for v in versions}
    ref_losses = ordinary.losses
    rows = []
    for v in versions:
        m_ = med[v.label]
        same = v.losses == ref_losses
        diff = max(abs(a - b) for a, b in zip(v.losses, ref_losses))
        rows.append(dict(
            model=name, device=str(device), step=v.label, ms_median=m_,
            ms_min=min(v.wall), ms_max=max(v.wall), cpu_ms_median=statistics.median(v.cpu),
            ratio_ordinary=m_ / med["ordinary"],
            ratio_a=None if v is ordinary else m_ / med[ca.label],
            predicted=None if v.info is None else v.info["overhead"],
            peak_ratio=None if v.info is None else v.info["peak"] / v.info["checkpoint_all_peak"],
            plan_peak=None if v.info is None else v.info["peak"],
            checkpoint_all_peak=None if v.info is None else v.info["checkpoint_all_peak"],
            fixed_memory=None if v.info is None else v.info["fixed_memory"],
            build_s=v.build_s, solve_s=v.solve_s, losses_equal=same, loss_max_diff=diff,
            measured_memory=v.mem, wall_ms=v.wall, cpu_ms=v.cpu,
            profiled_step_ms=v.step_ms_profiled, outside_aten_ms=v.outside_ms,
            plan_info=v.info))
    overhead_wall = med[ca.label] / med["ordinary"] - 1
    overhead_host = (ca.outside_ms - ordinary.outside_ms) / med["ordinary"]
    verdict = "OK" if max(overhead_wall, overhead_host) < OVERHEAD_LIMIT else "EXCEEDS"
    summary = dict(model=name, device=str(device),
                   overhead_wall=overhead_wall, overhead_host=overhead_host,
                   outside_aten_ms={"ordinary": ordinary.outside_ms, "(a)": ca.outside_ms},
                   profiled_step_ms={"ordinary": ordinary.step_ms_profiled,
                                     "(a)": ca.step_ms_profiled},
                   verdict=verdict if name == "resnet50" else None)
    print("module overhead on %s (%s): (a)/ordinary - 1 = %+.1f%% of the step (wall medians); "
          "host time outside ATen ops %.1f ms (a) vs %.1f ms ordinary: %+.1f ms = %+.1f%% of "
          "the ordinary step%s"
          % (name, device, 100 * overhead_wall, ca.outside_ms, ordinary.outside_ms,
             ca.outside_ms - ordinary.outside_ms, 100 * overhead_host,
             (" -> %s (limit %d%%)" % (verdict, 100 * OVERHEAD_LIMIT)) if name == "resnet50"
             else ""), flush=True)
    out["rows"] += rows
    out["overheads"].append(summary)


def print_tables(out):
    rows = out["rows"]
    print("\n| model | step | ms per step (median) | ratio to ordinary | ratio to (a) "
          "| predicted overhead | plan peak / checkpoint-all peak |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s%s | %s | %.0f | %.3f | %s | %s | %s |" % (
            r["model"], "" if r["device"] == "cpu" else " (%s)" % r["device"], r["step"],
            r["ms_median"], r["ratio_ordinary"], fmt_ratio(r["ratio_a"]),
            fmt_ratio(r["predicted"]),
            "-" if r["peak_ratio"] is None else "%.3f (%s / %s)" % (
                r["peak_ratio"], mb(r["plan_peak"]), mb(r["checkpoint_all_peak"]))))
    print("\n| model | step | ms min-max | CPU ms (median) | one-off build s (solve s) "
          "| plan activations / checkpoint-all activations | measured peak | losses = ordinary |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        mem = r["measured_memory"]
        if mem is None:
            m_ = "-"
        elif "max_memory_allocated" in mem:
            m_ = "max_memory_allocated " + mb(mem["max_memory_allocated"])
        else:
            m_ = "%s (between ops; %s in-op)" % (mb(mem["between_ops"]), mb(mem["peak"]))
        act = "-" if r["plan_peak"] is None else "%.3f (%s / %s)" % (
            (r["plan_peak"] - r["fixed_memory"]) / (r["checkpoint_all_peak"] - r["fixed_memory"]),
            mb(r["plan_peak"] - r["fixed_memory"]), mb(r["checkpoint_all_peak"] - r["fixed_memory"]))
        print("| %s%s | %s | %.0f-%.0f | %.0f | %s | %s | %s | %s |" % (
            r["model"], "" if r["device"] == "cpu" else " (%s)" % r["device"], r["step"],
            r["ms_min"], r["ms_max"], r["cpu_ms_median"],
            "-" if r["build_s"] is None else "%.1f (%.1f)" % (r["build_s"], r["solve_s"]),
            act, m_, "bitwise" if r["losses_equal"] else "max diff %.2e" % r["loss_max_diff"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet50,gpt")
    ap.add_argument("--steps", type=int, default=7, help="timed rounds (default 7)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="seconds for each plan's solve (default 60)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda", "all"),
                    help="auto: CPU, and CUDA too where available")
    torch_cases.add_size_arguments(ap, gpt_layers=4, gpt_d=128, gpt_context=64)
    ap.add_argument("--host-repeats", type=int, default=3,
                    help="profiled steps whose median host time outside ATen ops is taken")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory measurement")
    ap.add_argument("--time-costs", action="store_true",
                    help="a third plan (c): (b) solved with measured op times (cost='time')")
    ap.add_argument("--cache", action="store_true",
                    help="take plans and measured times from the plan cache (default: "
                    "solve and measure every time, for honest build times)")
    ap.add_argument("--profile", action="store_true",
                    help="print a cProfile listing of one (a) step per model")
    ap.add_argument("--profile-rows", type=int, default=20)
    ap.add_argument("--json", help="write every figure to this file")
    args = ap.parse_args()

    t_all = time.perf_counter()
    torch.set_num_threads(args.threads)
    print("# checkmate_torch.remat training-step benchmark")
    print("torch %s, torch.get_num_threads() = %d (set by --threads), checkmate binary %s, "
          "%d steps after %d warm-ups per version, interleaved"
          % (torch.__version__, torch.get_num_threads(), find_checkmate(), args.steps, args.warmup))
    devices = []
    if args.device in ("auto", "all", "cpu"):
        devices.append(torch.device("cpu"))
    if args.device in ("auto", "all", "cuda"):
        if torch.cuda.is_available():
            devices.append(torch.device("cuda"))
        elif args.device == "cuda":
            sys.exit("--device cuda: torch.cuda.is_available() is False")
        else:
            print("CUDA: not available (torch.cuda.is_available() is False), skipped")
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(),
           "steps": args.steps, "warmup": args.warmup, "time_limit": args.time_limit,
           "rows": [], "overheads": []}
    for device in devices:
        for name in args.models.split(","):
            bench_case(name, args, device, out)
    print_tables(out)
    out["total_s"] = time.perf_counter() - t_all
    print("\ntotal run time %.1f s" % out["total_s"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()

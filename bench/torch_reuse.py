#!/usr/bin/env python3
"""remat(compile=True)'s buffer-reuse rule against inductor's own, in one
process: one partition (checkmate's plan cache gives both the same), its
step lowered twice, once as remat lowers it (a freed buffer goes only to
the next kernel: compiled._gate_reuse) and once with inductor's rule
(AllocateLine.should_reuse_buffer, estimate-gated), each step's peak
measured (torch_peers.measure_mem) and their times in interleaved
rounds (torch_peers.timed_rounds: the same weights to start, an SGD
step after each timed one).

    build/venv-torch2/bin/python bench/torch_reuse.py --models gpt,resnet \\
        --fractions .45,.4 --rounds 31 [--json FILE]

prints, per model and F (the budget is fixed memory + F x activations,
as bench/torch_compiled.py's remat-F), the model's peak, each rule's
measured peak and median time, and the median of the paired ratios
(inductor's rule over remat's) with a bootstrap 95% interval. Inductor's
caches are off, so each lowering is fresh.
"""
import argparse
import copy
import json
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import checkmate_torch  # noqa: E402
import torch_cases  # noqa: E402
import torch_peers as tp  # noqa: E402


def lowered(case, fraction, rule, args, device):
    """A variant (torch_peers.Variant) of the partition at `fraction`, its
    first step lowering it with remat's reuse rule or ("inductor")
    inductor's own, its peak measured (v.mem) after a second step."""
    from torch._inductor.codegen import wrapper
    model = copy.deepcopy(case["model"])
    r = checkmate_torch.remat(model, case["args"], case["kwargs"],
                              budget=lambda fixed, peak: int(fixed + fraction * (peak - fixed)),
                              time_limit=args.time_limit, cache=True, compile=True)
    v = tp.Variant(rule, "remat", r, model, args.lr)
    gate = wrapper.AllocateLine.should_reuse_buffer
    if rule == "inductor":
        wrapper.AllocateLine.should_reuse_buffer = gate.inductors
    try:
        tp.warm(v, case, device, 1)   # the forward lowered, then the backward
    finally:
        wrapper.AllocateLine.should_reuse_buffer = gate
    tp.warm(v, case, device, 1)
    v.mem = tp.measure_mem(v, case, device)
    v.extra["plan_info"] = r.plan_info
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="gpt")
    ap.add_argument("--fractions", default=".45,.4")
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--time-limit", type=float, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--json")
    torch_cases.add_size_arguments(ap)
    args = ap.parse_args()
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
            ours, theirs = (lowered(case, fraction, rule, args, device)
                            for rule in ("remat", "inductor"))
            tp.timed_rounds([ours, theirs], init, case, device, args.rounds)
            ratios = [b / a for a, b in zip(ours.wall, theirs.wall)]
            rng = random.Random(1)
            boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
            info = ours.extra["plan_info"]
            row = dict(model=name, fraction=fraction, budget=info["budget"],
                       model_peak=info["plan_peak"] - info["fixed_memory"],
                       **{v.label: dict(peak=v.mem["peak"], ms=statistics.median(v.wall),
                                        losses=v.losses) for v in (ours, theirs)},
                       inductor_over_remat=[statistics.median(ratios), boot[50], boot[1949]],
                       rounds=args.rounds, torch=torch.__version__, device=args.device)
            rows.append(row)
            print("%s F %g: model %.2f MB; remat's rule %.2f MB %.1f ms; inductor's %.2f MB %.1f ms;"
                  " inductor's over remat's %.3f [%.3f, %.3f]"
                  % (name, fraction, row["model_peak"] / 1e6, row["remat"]["peak"] / 1e6,
                     row["remat"]["ms"], row["inductor"]["peak"] / 1e6, row["inductor"]["ms"],
                     *row["inductor_over_remat"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Time to the first training step under checkmate_torch.remat, in a new
process, with an empty plan cache and then with the plan the first run
kept (checkmate_torch/cache.py).

Usage: PYTHON bench/torch_first_step.py [--layers 8] [--d 256] [--context 128]
           [--batch 4] [--strategy auto] [--time-limit 60] [--cost flops|time]
           [--runs 2] [--compile]

Each run is a new Python process that builds the GPT of
checkmate_torch/examples/gpt.py (dropout 0.1, vocab 256, 4 heads), calls
remat at fixed memory + half the activations, and runs one step (forward,
cross-entropy, backward). It prints: the import of torch and the package,
remat() (trace, analysis, solve or cache, strides check, code
generation), the first step, and where the plan came from. The cache is a
temporary directory shared by the runs of one invocation, so run 1 solves
and runs 2.. take the kept plan.

--compile: remat(compile=True) instead, and beside each of its runs one
of torch.compile alone (fullgraph, dynamic=False), both with one inductor
cache directory of their own shared by the runs (run 1 compiles, runs 2..
find inductor's caches). Compiled, remat() itself does nothing: the first
step traces, partitions and compiles."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

CHILD = r"""
import time, json, sys
t0 = time.perf_counter()
sys.path.insert(0, %(root)r)
import torch
import checkmate_torch
from checkmate_torch.examples.gpt import GPT
from torch.nn import functional as F
torch.set_num_threads(1)
t_import = time.perf_counter() - t0
torch.manual_seed(0)
B, T = %(batch)d, %(context)d
model = GPT(vocab=256, context=T, d=%(d)d, heads=4, layers=%(layers)d, dropout=0.1)
ids = torch.randint(0, 256, (B, T))
mask = torch.ones(B, T, dtype=torch.bool)
t1 = time.perf_counter()
if %(mode)r == "torch.compile":
    m = torch.compile(model, fullgraph=True, dynamic=False)
else:
    m = checkmate_torch.remat(model, (ids,), {"attention_mask": mask},
                              budget=lambda f, p: f + (p - f) // 2, strategy=%(strategy)r,
                              time_limit=%(limit)r, cost=%(cost)r,
                              compile=%(mode)r == "remat compiled")
t2 = time.perf_counter()
out = m(ids, attention_mask=mask)
F.cross_entropy(out[:, :-1].reshape(-1, 256), ids[:, 1:].reshape(-1)).backward()
t3 = time.perf_counter()
info = getattr(m, "plan_info", {"cached": None, "nodes": 0, "status": "-", "strategy": "-"})
print(json.dumps({"import_s": t_import, "remat_s": t2 - t1, "first_step_s": t3 - t2,
                  "to_first_step_s": t3 - t1, "cached": info["cached"],
                  "nodes": info["nodes"], "status": info["status"],
                  "strategy": info["strategy"]}))
"""


def plan_from(r):
    if r["cached"] is None:
        return "-"
    return "cache" if r["cached"] else "solve (%s, %s)" % (r["strategy"], r["status"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--strategy", default="auto")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--cost", default="flops", choices=("flops", "time"))
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    modes = ["remat compiled", "torch.compile"] if args.compile else ["remat"]
    print("| run | step | plan from | import s | remat() s | first step s "
          "| remat() + first step s |")
    print("|---|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="checkmate-cache-") as d:
        for k in range(args.runs):
            for mode in modes:
                code = CHILD % {"root": ROOT, "batch": args.batch, "context": args.context,
                                "d": args.d, "layers": args.layers, "strategy": args.strategy,
                                "limit": args.time_limit, "cost": args.cost, "mode": mode}
                env = dict(os.environ, CHECKMATE_CACHE_DIR=os.path.join(d, "checkmate"),
                           TORCHINDUCTOR_CACHE_DIR=os.path.join(d, mode.replace(" ", "-")))
                p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, env=env)
                if p.returncode != 0:
                    sys.exit("run %d (%s) failed: %s" % (
                        k + 1, mode, p.stderr.strip().splitlines()[-1:]))
                r = json.loads(p.stdout.strip().splitlines()[-1])
                if r["nodes"]:
                    nodes = r["nodes"]
                print("| %d | %s | %s | %.2f | %.2f | %.2f | %.2f |" % (
                    k + 1, mode, plan_from(r), r["import_s"], r["remat_s"], r["first_step_s"],
                    r["to_first_step_s"]), flush=True)
    print("\nGPT: %d layers, d %d, context %d, batch %d; %d graph nodes; time limit %g s; "
          "cost %s" % (args.layers, args.d, args.context, args.batch, nodes,
                       args.time_limit, args.cost))


if __name__ == "__main__":
    main()

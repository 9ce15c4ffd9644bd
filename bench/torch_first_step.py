#!/usr/bin/python3
"""Time to the first training step under checkmate_torch.remat, in a new
process, with an empty plan cache and then with the plan the first run
kept (checkmate_torch/cache.py).

Usage: PYTHON bench/torch_first_step.py [--layers 8] [--d 256] [--context 128]
           [--batch 4] [--strategy auto] [--time-limit 60] [--cost flops|time]
           [--runs 2]

Each run is a new Python process that builds the GPT of
checkmate_torch/examples/gpt.py (dropout 0.1, vocab 256, 4 heads), calls
remat at fixed memory + half the activations, and runs one step (forward,
cross-entropy, backward). It prints: the import of torch and the package,
remat() (trace, analysis, solve or cache, strides check, code
generation), the first step, and where the plan came from. The cache is a
temporary directory shared by the runs of one invocation, so run 1 solves
and runs 2.. take the kept plan."""
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
m = checkmate_torch.remat(model, (ids,), {"attention_mask": mask},
                          budget=lambda f, p: f + (p - f) // 2, strategy=%(strategy)r,
                          time_limit=%(limit)r, cost=%(cost)r)
t2 = time.perf_counter()
out = m(ids, attention_mask=mask)
F.cross_entropy(out[:, :-1].reshape(-1, 256), ids[:, 1:].reshape(-1)).backward()
t3 = time.perf_counter()
print(json.dumps({"import_s": t_import, "remat_s": t2 - t1, "first_step_s": t3 - t2,
                  "to_first_step_s": t3 - t1, "cached": m.plan_info["cached"],
                  "nodes": m.plan_info["nodes"], "status": m.plan_info["status"],
                  "strategy": m.plan_info["strategy"]}))
"""


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
    args = ap.parse_args()
    code = CHILD % {"root": ROOT, "batch": args.batch, "context": args.context, "d": args.d,
                    "layers": args.layers, "strategy": args.strategy,
                    "limit": args.time_limit, "cost": args.cost}
    print("| run | plan from | import s | remat() s | first step s | remat() + first step s |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="checkmate-cache-") as d:
        env = dict(os.environ, CHECKMATE_CACHE_DIR=d)
        for k in range(args.runs):
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=env)
            if p.returncode != 0:
                sys.exit("run %d failed: %s" % (k + 1, p.stderr.strip().splitlines()[-1:]))
            r = json.loads(p.stdout.strip().splitlines()[-1])
            print("| %d | %s | %.2f | %.2f | %.2f | %.2f |" % (
                k + 1, "cache" if r["cached"] else "solve (%s, %s)" % (r["strategy"], r["status"]),
                r["import_s"], r["remat_s"], r["first_step_s"], r["to_first_step_s"]), flush=True)
    print("\nGPT: %d layers, d %d, context %d, batch %d; %d graph nodes; time limit %g s; "
          "cost %s" % (args.layers, args.d, args.context, args.batch, r["nodes"],
                       args.time_limit, args.cost))


if __name__ == "__main__":
    main()

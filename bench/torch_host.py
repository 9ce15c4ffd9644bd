#!/usr/bin/env python3
"""The host time remat's eager path adds to a training step, where the
step is bound by the host: what decides its cost on a GPU, measured on the
CPU.

Usage: build/venv-torch2/bin/python bench/torch_host.py [--models gpt,resnet]
           [--rounds 40] [--steps 10] [--root CHECKOUT] [--json FILE]

On a GPU a small model's step takes as long as the host takes to launch
its kernels, and then every microsecond of Python around each ATen op
counts (docs/benchmarks.md, "PyTorch on a GPU"). On the CPU with tiny
tensors the kernels take about as long as a launch, so the same host time
decides:
  gpt     checkmate_torch/examples/gpt.py GPT(vocab=64, context=8, d=16,
          heads=2, layers=4, dropout=0.1), batch 1, cross-entropy;
  resnet  checkmate_torch/examples/resnet.py's ResNet-50 layout at width
          8, batch 2, 3x32x32, cross-entropy (batch norm, in-place ReLU).
One thread. Each step is forward, loss and backward into gradients made
beforehand (no optimizer). Two versions, each on its own copy of the same
model: the model itself ("ordinary") and remat(..., budget="100%",
strategy="checkpoint-all"), whose plan computes every node once, so that
what it costs above the ordinary step is remat's own host time. --rounds
rounds each time --steps steps of each version, the order alternating;
the medians per step are reported, their ratio, and the extra
microseconds per node of the plan's graph.

--root imports checkmate_torch from another checkout (an older commit in
a git worktree), to hold two versions of the package against each other
with the same script; each run's ratio is measured within that run."""
import argparse
import copy
import json
import os
import statistics
import sys
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--models", default="gpt,resnet")
ap.add_argument("--rounds", type=int, default=40)
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ap.add_argument("--json")
args = ap.parse_args()
sys.path.insert(0, os.path.abspath(args.root))

import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import checkmate_torch  # noqa: E402


def gpt():
    from checkmate_torch.examples.gpt import GPT
    model = GPT(vocab=64, context=8, d=16, heads=2, layers=4, dropout=0.1)
    x = torch.randint(0, 64, (1, 8))
    return model, (x,), lambda out: F.cross_entropy(out.reshape(-1, 64), x.reshape(-1))


def resnet():
    from checkmate_torch.examples.resnet import resnet
    model = resnet(width=8, classes=10)
    x, y = torch.randn(2, 3, 32, 32), torch.randint(0, 10, (2,))
    return model, (x,), lambda out: F.cross_entropy(out, y)


def bench(name, build):
    torch.manual_seed(0)
    model, inputs, loss = build()
    model.train()
    plain = copy.deepcopy(model)
    r = checkmate_torch.remat(model, inputs, budget="100%", strategy="checkpoint-all",
                              cache=False)
    versions = [("ordinary", plain), ("checkpoint-all plan", r)]
    for _, m in versions:
        for p in m.parameters():
            p.grad = torch.zeros_like(p)

    def step_of(m):
        def step():
            loss(m(*inputs)).backward()
        return step
    steps = [(label, step_of(m)) for label, m in versions]
    for _, step in steps:
        for _ in range(5):
            step()
    times = {label: [] for label, _ in steps}
    for k in range(args.rounds):
        for label, step in (steps if k % 2 == 0 else steps[::-1]):
            t0 = time.perf_counter()
            for _ in range(args.steps):
                step()
            times[label].append((time.perf_counter() - t0) / args.steps * 1e6)
    med = {label: statistics.median(ts) for label, ts in times.items()}
    nodes = r.plan_info["nodes"]
    a, b = med["ordinary"], med["checkpoint-all plan"]
    row = {"model": name, "nodes": nodes, "ordinary_us": a, "plan_us": b, "ratio": b / a,
           "extra_us_per_node": (b - a) / nodes,
           "root": os.path.abspath(args.root)}
    print("| %s | %d | %.0f | %.0f | %.3f | %+.2f |" % (name, nodes, a, b, b / a, (b - a) / nodes),
          flush=True)
    return row


def main():
    torch.set_num_threads(1)
    print("# torch %s, checkmate_torch from %s" % (torch.__version__, os.path.abspath(args.root)))
    print("| model | nodes | ordinary us | plan us | ratio | us a node |")
    print("|---|---:|---:|---:|---:|---:|")
    builds = {"gpt": gpt, "resnet": resnet}
    rows = [bench(name, builds[name]) for name in args.models.split(",")]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

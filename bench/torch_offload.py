#!/usr/bin/env python3
"""remat with copies to host memory against recompute alone, on one device
(issue 64; docs/torch.md, "Offload to host memory").

Usage: PYTHON bench/torch_offload.py [--device cpu|cuda] [--fractions .6,.4,.25]
           [--layers 8] [--d 512] [--heads 8] [--context 512] [--batch 8]
           [--rounds 9] [--bandwidth B] [--time-limit 20] [--json FILE]

The model: checkmate_torch/examples/gpt.py's GPT (vocab 256, dropout
0.1), token ids of batch x context, cross-entropy of the logits against
the ids shifted by one. Its costs are measured (cost="time"). The copy
bandwidth, unless --bandwidth gives one, is measured as offload=True
measures it (offload.measured_bandwidth). For each fraction F, a budget of fixed memory + F of the
activations, two plans: recompute alone, and with offload= that
bandwidth; each row gives the plan's replayed time (the cost in
milliseconds without copies), its offloads and host peak, the step's
measured median time (forward and backward, synchronized), its measured
peak (checkmate_torch.measure.step_peak: on CUDA the allocator's peak
above the step's start; on the CPU the live bytes between ops, host copies
included, since host and device memory are one), and whether the first
step's loss equals the ordinary step's bit for bit. The ordinary step is
the first row.

On the CPU copies are made at once, on the compute stream's time: the
rows check that the script and the plans run, not the overlap; the
figures that count are a GPU's (bench/cuda.sh, stage offload)."""
import argparse
import copy
import json
import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--fractions", default=".6,.4,.25")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--bandwidth", help="bytes a second (25GB/s); default: measured")
    ap.add_argument("--time-limit", type=float, default=20)
    ap.add_argument("--json")
    o = ap.parse_args()
    import torch
    from torch.nn import functional as F
    import checkmate_torch
    from checkmate_torch import offload
    from checkmate_torch.examples.gpt import GPT
    from checkmate_torch.measure import step_peak
    from checkmate_torch.solve import SolveError
    from checkmate_torch.train import RematError
    torch.set_num_threads(1) if o.device == "cpu" else None
    device = torch.device(o.device)
    bw = o.bandwidth or offload.measured_bandwidth(device)
    torch.manual_seed(0)
    base = GPT(vocab=256, context=o.context, d=o.d, heads=o.heads, layers=o.layers,
               dropout=0.1).to(device)
    ids = torch.randint(0, 256, (o.batch, o.context), generator=torch.Generator().manual_seed(1))
    ids = ids.to(device)

    def loss_of(logits):
        return F.cross_entropy(logits[:, :-1].reshape(-1, 256), ids[:, 1:].reshape(-1))

    def measure(model, call):
        for p in model.parameters():
            p.grad = torch.zeros_like(p)

        def step():
            loss_of(call(ids)).backward()
        torch.manual_seed(5)
        first = loss_of(call(ids)).detach()
        step()
        times = []
        for _ in range(o.rounds):
            sync(torch, device)
            t0 = time.perf_counter()
            step()
            sync(torch, device)
            times.append(time.perf_counter() - t0)
        peak = step_peak(step, o.device)
        return first, statistics.median(times), peak["peak" if o.device == "cuda" else
                                                     "between_ops"]

    rows = []
    plain = copy.deepcopy(base)
    want, secs, peak = measure(plain, plain)
    rows.append({"variant": "ordinary", "fraction": None, "step_s": secs, "peak": peak,
                 "equal": True})
    for frac in [float(f) for f in o.fractions.split(",")]:
        for copies in (None, bw):
            m = copy.deepcopy(base)
            row = {"variant": "remat, offload " + copies if copies else "remat",
                   "fraction": frac}
            try:
                r = checkmate_torch.remat(
                    m, (ids,), budget=lambda fixed, pk: fixed + int((pk - fixed) * frac),
                    cost="time", offload=copies, time_limit=o.time_limit)
                info = r.plan_info
                first, secs, peak = measure(m, r)
                row.update(step_s=secs, peak=peak, equal=bool(torch.equal(first, want)),
                           plan_s=info["time"] if info["time"] is not None
                           else info["cost"] / 1e3,
                           plan_peak=info["peak"] - info["fixed_memory"],
                           offloads=info["offloads"], host_peak=info["host_peak"],
                           strategy=info["param"])
            except (RematError, SolveError) as e:
                row["error"] = str(e)
            rows.append(row)
    print("# %s, torch %s, bandwidth %s, GPT %d layers d %d context %d batch %d" % (
        o.device, torch.__version__, bw, o.layers, o.d, o.context, o.batch))
    print("| variant | F | plan s | step s | plan MB | peak MB | offloads | host MB | "
          "loss bit for bit |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print("| %s | %s | %s |" % (r["variant"], r["fraction"], r["error"]))
            continue
        print("| %s | %s | %s | %.4f | %s | %.1f | %s | %s | %s |" % (
            r["variant"], r["fraction"] if r["fraction"] is not None else "",
            "%.4f" % r["plan_s"] if "plan_s" in r else "", r["step_s"],
            "%.1f" % (r["plan_peak"] / 1e6) if "plan_peak" in r else "", r["peak"] / 1e6,
            r.get("offloads", ""), "%.1f" % (r["host_peak"] / 1e6) if r.get("host_peak")
            else "", r["equal"]))
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"device": o.device, "torch": torch.__version__, "bandwidth": bw,
                       "args": vars(o), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

"""sac_policy(compile=True) on fuzz_gen's random models (not yet a mode of
fuzz_run.py): the whole model one region, 3 SGD steps of
torch.compile(checkpoint(model, policy)) against torch.compile(model) and
eager, ok where the losses are within fuzz_compiled.TOL of either.

Usage: PYTHON tests/torch/fuzz_sac.py A:B [F]  (seeds A to B-1; the
budget fixed + F (peak - fixed) of the compiled step's peak, 0.7 unless
given). Prints a line a seed and the counts."""
import sys, collections
import os
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", ".."))
import torch
from torch.utils.checkpoint import checkpoint
import fuzz_compiled as fc
import checkmate_torch
from checkmate_torch.sac import SACError
lo, hi = map(int, sys.argv[1].split(":"))
frac = float(sys.argv[2]) if len(sys.argv) > 2 else 0.7
count = collections.Counter()
for seed in range(lo, hi):
    try:
        eager = fc.losses(seed, "cpu", lambda m, b: m)[0]
    except Exception as e:
        count["skip"] += 1; continue
    torch._dynamo.reset()
    try:
        ref = fc.losses(seed, "cpu", lambda m, b: torch.compile(m, dynamic=False))[0]
    except Exception as e:
        count["skip"] += 1; print(seed, "skip compile:", fc._line(e)); continue
    info = {}
    def make(m, b):
        p = checkmate_torch.sac_policy(m, b[0], b[1], compile=True, time_limit=10,
                                       budget=lambda f, pk: f + int(frac * (pk - f)))
        info.update(p.info)
        def run(*a, **k):
            return checkpoint(m, *a, use_reentrant=False, context_fn=p, **k)
        return torch.compile(run, dynamic=False)
    torch._dynamo.reset()
    try:
        got = fc.losses(seed, "cpu", make)[0]
    except SACError as e:
        count["refused"] += 1; print(seed, "refused:", fc._line(e)); continue
    except Exception as e:
        count["crash"] += 1; print(seed, "CRASH:", type(e).__name__, fc._line(e)); continue
    r = min(fc.rel(got, ref), fc.rel(got, eager))
    out = "ok" if r <= fc.TOL else "wrong"
    count[out] += 1
    print(seed, out, "rel %.2g" % r, "saved %s/%s measured %s peak %s budget %s" % (
        info.get("compile_saved"), info.get("compile_ops"), info.get("measured"),
        info.get("measured_peak"), info.get("budget")), flush=True)
print("seeds %d:%d frac %g torch %s: %s" % (lo, hi, frac, torch.__version__, dict(count)))

#!/usr/bin/python3
"""Plans kept on disk (checkmate_torch/cache.py): a second remat of the
same model and budget takes its plan from the cache, in this process and
in a new one, and trains as the first; another budget, strategy or model
solves again; a damaged file is a miss; cache=False keeps nothing;
compile=True's key in AOTAutograd's cache tells settings apart."""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
remat_or_finish()

import checkmate_torch  # noqa: E402
from checkmate_torch.train import RematError  # noqa: E402

from torch import nn  # noqa: E402

CHILD = r"""
import sys, time, json
t0 = time.perf_counter()
sys.path.insert(0, %(root)r)
import torch
torch.set_num_threads(1)
import checkmate_torch
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.GELU())
                          for _ in range(6)])
x = torch.randn(8, 32)
r = checkmate_torch.remat(m, (x,), budget=lambda f, p: f + (p - f) * 3 // 4, strategy="auto",
                          time_limit=%(limit)r, cache=%(cache)r)
r(x).pow(2).mean().backward()
print(json.dumps({"secs": time.perf_counter() - t0, "cached": r.plan_info["cached"],
                  "grad": m[0][0].weight.grad.sum().item()}))
"""


def child(cache, limit):
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    p = subprocess.run([sys.executable, "-c", CHILD % {"root": root, "cache": cache,
                                                       "limit": limit}],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 4))


def grads_of(m, r, x):
    m.zero_grad(set_to_none=True)
    r(x).pow(2).mean().backward()
    return [p.grad.clone() for p in m.parameters()]


def files(d):
    return sorted(glob.glob(os.path.join(d, "plans", "*", "*.json")))


def main():
    x = torch.randn(8, 16)
    half = lambda f, p: f + (p - f) * 3 // 4  # noqa: E731
    with tempfile.TemporaryDirectory() as d:
        m1 = model()
        r1 = checkmate_torch.remat(m1, (x,), budget=half, strategy="dtr", cache=d)
        ok(r1.plan_info["cached"] is False and len(files(d)) == 1,
           "a first remat solves and keeps its plan (%d file)" % len(files(d)))
        first = files(d)[0]
        m2 = model()
        r2 = checkmate_torch.remat(m2, (x,), budget=half, strategy="dtr", cache=d)
        ok(r2.plan_info["cached"] is True, "a second remat of the same model takes the kept plan")
        def names(r):
            return [(op, n.name) for op, n in r._last.forward_steps + r._last.backward_steps]
        ok(names(r1) == names(r2) and r1.plan_info["peak"] == r2.plan_info["peak"],
           "the kept plan is the plan solved (steps, peak %s)" % r2.plan_info["peak"])
        g1, g2 = grads_of(m1, r1, x), grads_of(m2, r2, x)
        ok(all(torch.equal(a, b) for a, b in zip(g1, g2)),
           "training with the kept plan gives the same gradients bitwise")

        r3 = checkmate_torch.remat(model(), (x,), budget=lambda f, p: p, strategy="dtr", cache=d)
        r4 = checkmate_torch.remat(model(), (x,), budget=lambda f, p: p,
                                   strategy="checkpoint-all", cache=d)
        r5 = checkmate_torch.remat(model(), (torch.randn(16, 16),), budget=half,
                                   strategy="dtr", cache=d)
        wide = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4))
        r6 = checkmate_torch.remat(wide, (x,), budget=lambda f, p: p, strategy="dtr", cache=d)
        ok([r.plan_info["cached"] for r in (r3, r4, r5, r6)] == [False] * 4
           and len(files(d)) == 5,
           "another budget, strategy, a larger batch or model solves again (%d files)"
           % len(files(d)))
        r7 = checkmate_torch.remat(model(), (torch.randn(4, 16),), budget=half,
                                   strategy="dtr", cache=d)
        ok(r7.plan_info["cached"] and r7.plan_info["reused"] and len(files(d)) == 5,
           "a smaller batch takes a kept plan made for a larger one (cache.shape_key)")

        # a damaged file: a miss, solved again and written again (the
        # plans kept by structure damaged too, or they would serve)
        for f in [first] + glob.glob(os.path.join(d, "shapes", "*", "*.json")):
            with open(f, "w") as fh:
                fh.write("{not json")
        again = [checkmate_torch.remat(model(), (x,), budget=b, strategy="dtr", cache=d)
                 .plan_info["cached"] for b in (half, lambda f_, p: p)]
        ok(again == [False, True], "a damaged file is a miss, another file a hit (%s)" % again)
        with open(first) as fh:
            ok(json.load(fh)["key"] == os.path.basename(first)[:-5],
               "the damaged file is written again and reads back")

    # cost="time": measured once, kept, and the plan kept under those costs
    with tempfile.TemporaryDirectory() as d:
        def dropout_model():
            torch.manual_seed(0)
            return nn.Sequential(nn.Linear(16, 64), nn.Dropout(0.5), nn.GELU(),
                                 nn.Linear(64, 64), nn.Dropout(0.5), nn.Linear(64, 4))
        m1 = dropout_model()
        torch.manual_seed(5)
        rng = torch.get_rng_state()
        r1 = checkmate_torch.remat(m1, (x,), budget=half, strategy="dtr", cost="time", cache=d)
        ok(torch.equal(rng, torch.get_rng_state()),
           "measuring the ops' times leaves the generator as it was")
        costs = sorted(glob.glob(os.path.join(d, "costs", "*", "*.json")))
        ok(r1.plan_info["cost_unit"] == "ms" and len(costs) == 1 and r1.plan_info["cached"] is False,
           "cost='time': the plan is made with measured milliseconds, which are kept")
        r2 = checkmate_torch.remat(dropout_model(), (x,), budget=half, strategy="dtr",
                                   cost="time", cache=d)
        ok(r2.plan_info["cached"] is True and r2.plan_info["cost"] == r1.plan_info["cost"],
           "a second remat takes the kept times and so the kept plan (cost %.4f ms)"
           % r2.plan_info["cost"])
        plain = dropout_model()
        torch.manual_seed(7)
        want = grads_of(plain, plain, x)
        torch.manual_seed(7)
        got = grads_of(m1, r1, x)
        ok(all(torch.equal(a, b) for a, b in zip(want, got)),
           "a plan made with measured times trains as an ordinary step (dropout)")
        i = r1.plan_info
        ok(i["step_ms"] > 0 and i["measured_overhead"] == i["step_ms"] / i["checkpoint_all_cost"],
           "after a step: the step's own time and the measured overhead (%.3f; predicted %.3f)"
           % (i["measured_overhead"], i["overhead"]))
        try:
            checkmate_torch.remat(model(), (x,), budget=half, cost="seconds")
            ok(False, "cost='seconds' refused")
        except RematError as e:
            ok("\n" not in str(e) and "cost must be" in str(e),
               "cost='seconds' refused in one line: %s" % e)

    with tempfile.TemporaryDirectory() as d:
        os.environ["CHECKMATE_CACHE_DIR"] = d
        r = checkmate_torch.remat(model(), (x,), budget=half, strategy="dtr", cache=False)
        ok(r.plan_info["cached"] is None and not files(d), "cache=False keeps nothing")
        try:
            checkmate_torch.remat(model(), (x,), budget=half, cache=3)
            ok(False, "cache=3 refused")
        except RematError as e:
            ok("\n" not in str(e) and "cache must be" in str(e), "cache=3 refused in one line: %s" % e)

        # a new process: the first solves for its whole time limit (auto
        # on a graph it cannot prove), the second takes the plan from disk
        limit = 3.0
        a = child(d, limit)
        b = child(d, limit)
        ok(a.get("cached") is False and b.get("cached") is True and a.get("grad") == b.get("grad"),
           "a second process takes the plan from disk and computes the same gradients "
           "(first %.2f s, second %.2f s to its first step)" % (a.get("secs", -1), b.get("secs", -1)),
           "%s %s" % (a, b))
    partition_uuids()
    finish()


FR = 0.5   # read by a budget function below


def partition_uuids():
    """compile=True's key in AOTAutograd's cache (cache.partition_uuid):
    the same for the same settings in every process, another for any
    other budget (a function's constants, defaults and globals), time
    limit or cost, none for a function that reads an object."""
    global FR
    import math
    from checkmate_torch.binary import find_checkmate
    from checkmate_torch.cache import partition_uuid
    binary = find_checkmate()

    def uuid(budget, limit=20.0, cost="flops"):
        return partition_uuid(binary, budget, limit, cost)
    FR = 0.5
    by_global = uuid(lambda f, p: int(f + FR * (p - f)))
    FR = 0.6
    keys = [uuid("80%"), uuid("70%"), uuid(10 ** 6), uuid("80%", 10.0), uuid("80%", cost="time"),
            uuid(lambda f, p: f + (p - f) // 2), uuid(lambda f, p: f + (p - f) // 3),
            uuid(lambda f, p, x=0.3: f + x * (p - f)), uuid(lambda f, p, x=0.4: f + x * (p - f)),
            by_global, uuid(lambda f, p: int(f + FR * (p - f)))]
    ok(None not in keys and len(set(keys)) == len(keys) and uuid("80%") == keys[0],
       "partition_uuid: one per budget, time limit and cost; a budget function's constants, "
       "defaults and globals count (%d keys)" % len(keys), keys)
    ok(uuid(lambda f, p: math.floor(f)) is None,
       "partition_uuid: none for a budget function that reads a module's function")
    code = ("import sys; sys.path.insert(0, %r); from checkmate_torch.cache import "
            "partition_uuid as u; print(u(%r, lambda f, p: f + (p - f) // 2, 20.0, 'flops'))"
            % (os.path.join(HERE, "..", ".."), binary))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    ok(p.stdout.strip() == keys[5],
       "partition_uuid: a budget function's key is the same in another process",
       (p.stdout, p.stderr[-300:]))


if __name__ == "__main__":
    main()

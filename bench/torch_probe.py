#!/usr/bin/env python3
"""compile=True's measured run (checkmate_torch/probe.py, compiled._held)
against the model's rounds for what inductor's heuristics write
(JointGraph.writes, compiled._ROUNDS).

Usage: build/venv-torch2/bin/python bench/torch_probe.py
           [--models gpt,gpt-dropout,BERT] [--fractions 1,.55,.4]
           [--time-limit 10] [--json FILE] (and torch_cases' sizes)

For each model, budget (fixed memory + F x the activations of the joint
graph's checkpoint-all schedule, as bench/torch_compiled.py) and mode:
  rules     as shipped: the partition solved again while inductor's
            heuristics, as the model reads them, write values it took as
            fused (up to compiled._ROUNDS solves), then measured;
  measured  one solve (compiled._ROUNDS = 1), then measured: the
            measurement alone holds the budget;
the first step's wall time (dynamo, partitions, inductor, the measured
run), the partitions compiled (plan_info compiles), the model's peak, the
measured peak and the budget, in bytes. Inductor's caches are off, so
every compile is paid."""
import argparse
import json
import os
import sys
import time
from unittest import mock

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import checkmate_torch  # noqa: E402
from checkmate_torch import compiled  # noqa: E402
import torch_cases  # noqa: E402


def case(name, args):
    """bench/torch_cases.py's GPTs, or a Hugging Face small config of
    tests/torch/t_hf.py with its loss in the step (bench/torch_hf_compiled.py)."""
    if name == "gpt":
        return torch_cases.gpt(args, "cpu", 0.0)
    if name == "gpt-dropout":
        return torch_cases.gpt(args, "cpu", 0.1)
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "torch"))
    import t_hf
    import torch_hf_compiled
    import transformers as tf
    tf.logging.set_verbosity_error()
    builds = dict(t_hf.configs(tf), **t_hf.more_configs(tf))
    if name not in builds:
        raise SystemExit("torch_probe: unknown model %r" % name)
    torch.manual_seed(0)
    model = torch_hf_compiled.Loss(name, builds[name]())
    model.train()
    kw, target = t_hf.batch(name, 0, 32, 32)
    return dict(desc="%s (tests/torch/t_hf.py), batch 32 x 32" % name, model=model, args=(),
                kwargs=dict(kw, target=target), loss=lambda out: out)


def first_step(c, budget, time_limit, rounds):
    import copy
    model = copy.deepcopy(c["model"])
    torch._dynamo.reset()
    with mock.patch.object(compiled, "_ROUNDS", rounds), \
            torch._inductor.config.patch(force_disable_caches=True):
        start = time.perf_counter()
        r = checkmate_torch.remat(model, c["args"], c["kwargs"], budget=budget,
                                  compile=True, cache=False, time_limit=time_limit)
        c["loss"](r(*c["args"], **c["kwargs"])).backward()
        seconds = time.perf_counter() - start
    i = r.plan_info
    return dict(seconds=round(seconds, 1), compiles=i["compiles"], rounds=i["rounds"],
                plan_peak=i["plan_peak"], measured_peak=i["measured_peak"],
                budget=i["budget"], fixed=i["fixed_memory"],
                checkpoint_all=i["checkpoint_all_peak"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="gpt,gpt-dropout,BERT")
    ap.add_argument("--fractions", default="1,.55,.4")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--json")
    torch_cases.add_size_arguments(ap, gpt_layers=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for name in args.models.split(","):
        c = case(name, args)
        base = first_step(c, lambda fixed, peak: peak, args.time_limit, compiled._ROUNDS)
        fixed, peak = base["fixed"], base["checkpoint_all"]
        for f in (float(x) for x in args.fractions.split(",")):
            budget = int(fixed + f * (peak - fixed))
            for mode, rounds in (("rules", compiled._ROUNDS), ("measured", 1)):
                row = dict(model=name, fraction=f, mode=mode,
                           **first_step(c, budget, args.time_limit, rounds))
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "desc": {m: case(m, args)["desc"]
                                                           for m in args.models.split(",")},
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks the exporter's memory model against PyTorch's own allocations.

For each model (torchvision resnet18, mobilenet_v2, densenet121 when
torchvision imports; the encoder, GPT and in-place examples of
checkmate_torch/examples), in one process:

  graph     the training step exported as `python3 -m checkmate_torch export`
            does by default (sum loss: the sum of every floating-point output
            element): nodes, fixed memory, checkpoint-all peak; its
            activations = checkpoint-all peak - fixed memory.
  measured  an ordinary training step, loss_of(model(*args, **kwargs))
            .backward(), on a fresh copy of the same seeded model and inputs,
            every parameter's .grad preallocated (zeros_like) and one warm-up
            step first: checkmate_torch.measure.step_peak(step, "cpu"), its
            between_ops (the peak of live bytes at the moments between two
            top-level ATen ops: op workspaces excluded, which checkmate's
            memory model does not see) and its peak (everything).
  allowance with .grad preallocated, autograd's AccumulateGrad adds each new
            parameter gradient, a temporary, into .grad and frees it; the
            graph counts the gradients once, as fixed memory. A second
            profiled step (same step, same sizes) reads the profiler's event
            tree (experimental_event_tree: every allocation with its address,
            nested in the op ranges): a gradient temporary is an allocation
            freed inside a torch::autograd::AccumulateGrad range (if an
            in-place op outside AccumulateGrad writes it, e.g. an in-place
            accumulation of a parameter used twice, it counts from that op's
            end). "measured - allowance" is the largest live-bytes figure,
            over the same between-op moments, with the gradient temporaries
            live at that moment left out. The script checks that this
            second step's between-ops peak equals step_peak's to the byte.
            Without the event tree (or with --simple) the allowance is a
            range: between_ops - largest parameter .. between_ops.

Pass: graph_act * 0.97 <= measured - allowance <= graph_act * 1.03 (with the
range: graph_act * 0.97 <= between_ops and between_ops - largest parameter
<= graph_act * 1.03). Exit status 1 if a model fails (or --info disagrees),
2 on a usage error.

Runs under torch 1.13 (Debian's python3) and torch 2.x (build/venv-torch2,
no torchvision there: the torchvision models are skipped):

  /usr/bin/python3 bench/torch_memory.py [--info] [--details] [--only NAME]
  build/venv-torch2/bin/python bench/torch_memory.py
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BATCH = 2
EX = "checkmate_torch/examples/"
# (short name, model spec, --input texts)
MODELS = [
    ("resnet18", "torchvision:resnet18", ["3x32x32"]),
    ("mobilenet_v2", "torchvision:mobilenet_v2", ["3x32x32"]),
    ("densenet121", "torchvision:densenet121", ["3x32x32"]),
    ("encoder", EX + "transformer.py:encoder", ["16x64"]),
    ("gpt", EX + "gpt.py:gpt", ["long:16:256", "attention_mask=bool:16"]),
    ("inplace", EX + "inplace.py:model", ["3x32x32"]),
]
TOLERANCE = 0.03
ACCUMULATE = "torch::autograd::AccumulateGrad"


def nbytes(t):
    return t.numel() * t.element_size()


# --- the allowance: gradient temporaries from the profiler's event tree ---

def _input_storages(extra):
    """Storage addresses of an op's tensor arguments (torch 1.13: inputs
    .tensor_metadata; 2.x: a list of _TensorMetadata, lists of them and
    scalars)."""
    ins = getattr(extra, "inputs", None)
    if ins is None:
        return []
    items = ins.tensor_metadata if hasattr(ins, "tensor_metadata") else ins
    out = []
    for v in items:
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            p = getattr(x, "storage_data_ptr", None)
            if p:
                out.append(p)
    return out


def step_allowance(step_fn):
    """Runs step_fn() once under the profiler (memory and shapes) and
    returns dict(between, peak, excl, temp_at_peak, temps, temp_sizes):
    between is the between-op peak computed as measure.step_peak does (for
    the check that both runs agree); excl the largest (live - live gradient
    temporaries) over the same moments; temp_at_peak the gradient
    temporaries' bytes live at between's moment."""
    import torch
    cpu = ("cpu", "mkldnn", "ideep")
    gc.collect()
    with torch.autograd.profiler.profile(profile_memory=True, record_shapes=True) as prof:
        step_fn()
    tree = prof.kineto_results.experimental_event_tree()
    mems, ops = [], []   # (time, order, ...) in the profiler's nesting order

    def walk(e, under_aten, in_acc):
        ef = e.extra_fields
        if type(ef).__name__.endswith("Allocation"):
            if getattr(ef.device, "type", "cpu") in cpu:
                mems.append((e.start_time_ns, len(mems), ef.alloc_size, ef.ptr, in_acc))
            return
        aten = e.name.startswith("aten::")
        if aten and not under_aten:
            ops.append((e.end_time_ns, e.name, _input_storages(ef), in_acc))
        for c in e.children:
            walk(c, under_aten or aten, in_acc or e.name == ACCUMULATE)

    for root in tree:
        walk(root, False, False)
    mems.sort()
    ops.sort(key=lambda o: o[0])
    # Pair each free with the allocation at its address; a temporary is
    # freed inside AccumulateGrad.
    open_, pair, temp_allocs = {}, {}, set()
    for t, i, n, ptr, acc in mems:
        if n > 0:
            open_[ptr] = i
        elif ptr in open_:
            j = open_.pop(ptr)
            pair[j] = i
            if acc:
                temp_allocs.add(j)
    by_index = {m[1]: m for m in mems}
    # An in-place op outside AccumulateGrad writing a temporary (in-place
    # accumulation of two gradients of one parameter): the storage holds an
    # activation until that op ends, so it counts as a temporary from then.
    start = {j: by_index[j][0] for j in temp_allocs}
    for j in temp_allocs:
        t0, ptr, t1 = by_index[j][0], by_index[j][3], by_index[pair[j]][0]
        for t_end, name, ptrs, acc in ops:
            if t0 < t_end < t1 and not acc and name.endswith("_") and ptr in ptrs:
                start[j] = max(start[j], t_end)
    # Events in time order: allocations and frees (kind 0), and the moments
    # a temporary written in place starts counting (kind 1).
    events = [(t, 0, i, n) for t, i, n, ptr, acc in mems]
    events += [(start[j], 1, j, 0) for j in temp_allocs if start[j] != by_index[j][0]]
    events.sort()
    counted = {j for j in temp_allocs if start[j] == by_index[j][0]}
    temp_of_free = {pair[j]: j for j in temp_allocs}
    ends = iter([o[0] for o in ops])
    t_end = next(ends, None)
    live = tlive = peak = 0
    best = {"between": 0, "temp_at_peak": 0, "excl": 0}

    def moment():
        if live > best["between"]:
            best["between"], best["temp_at_peak"] = live, tlive
        best["excl"] = max(best["excl"], live - tlive)

    for t, kind, i, n in events:
        while t_end is not None and t > t_end:
            moment()
            t_end = next(ends, None)
        if kind == 1:
            counted.add(i)
            tlive += by_index[i][2]
            continue
        live += n
        peak = max(peak, live)
        if i in counted or temp_of_free.get(i) in counted:
            tlive += n
    moment()
    sizes = sorted((by_index[j][2] for j in temp_allocs), reverse=True)
    return dict(between=best["between"], peak=peak, excl=best["excl"],
                temp_at_peak=best["temp_at_peak"], temps=len(temp_allocs),
                temp_bytes=sum(sizes), in_place_late=sum(1 for j in temp_allocs
                                                        if start[j] != by_index[j][0]))


# --- one model --------------------------------------------------------------

def cross_check_info(spec, inputs, exe):
    """checkpoint-all peak of `checkmate info` on the graph the CLI writes."""
    fd, path = tempfile.mkstemp(prefix="torch_memory.", suffix=".json")
    os.close(fd)
    try:
        cmd = [sys.executable, "-m", "checkmate_torch", "export", spec, "--batch", str(BATCH),
               "-o", path]
        for t in inputs:
            cmd += ["--input", t]
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
        out = subprocess.run([exe, "info", "--json", "-", "-q", path], check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        return json.loads(out)
    finally:
        os.unlink(path)


def run_model(name, spec, inputs, opts):
    import torch
    from checkmate_torch import graph, measure, model as modelmod, trace
    t0 = time.perf_counter()
    specs = [modelmod.InputSpec(t) for t in inputs]
    if not spec.startswith("torchvision:"):
        spec = os.path.join(ROOT, spec)   # the examples, from any directory
    # 1. the exporter's graph, sum loss
    model, args, kwargs = modelmod.load(spec, BATCH, specs)
    traced, tensors = trace.trace(model, args, kwargs, mode="sum")
    a = graph.Analysis(traced, tensors)
    r = dict(name=name, spec=os.path.relpath(spec, ROOT) if spec.startswith("/") else spec,
             inputs=inputs, nodes=len(a.real),
             fixed=a.fixed_memory, fixed_parts=dict(a.fixed_parts),
             ca_peak=a.checkpoint_all_peak())
    r["graph_act"] = r["ca_peak"] - r["fixed"]
    model = traced = tensors = a = None   # freed before the measured step
    t_graph = time.perf_counter()
    # 2. the measured ordinary step on a fresh copy
    model, args, kwargs = modelmod.load(spec, BATCH, specs)
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.grad = torch.zeros_like(p)

    def step():
        trace.loss_of(model(*args, **kwargs)).backward()

    step()  # warm-up: lazy initialisations
    m = measure.step_peak(step, "cpu")
    r["between"], r["peak"] = m["between_ops"], m["peak"]
    r["largest_param"] = max(nbytes(p) for p in params)
    # 3. the allowance
    r["exact"] = False
    if not opts.simple:
        try:
            al = step_allowance(step)
        except Exception as e:  # the event tree is a private profiler API
            r["exact_error"] = "%s: %s" % (type(e).__name__, e)
        else:
            r.update(tree_between=al["between"], tree_peak=al["peak"], excl=al["excl"],
                     temp_at_peak=al["temp_at_peak"], temps=al["temps"],
                     temp_bytes=al["temp_bytes"], in_place_late=al["in_place_late"])
            grad_bytes = sum(nbytes(p) for p in params)
            # every parameter's gradient passes through AccumulateGrad once
            r["temps_match"] = al["temps"] == len(params) and al["temp_bytes"] == grad_bytes
            r["exact"] = al["between"] == m["between_ops"]
            if not r["exact"]:
                r["exact_error"] = ("the profiled rerun's between-ops peak %d differs from "
                                    "step_peak's %d" % (al["between"], m["between_ops"]))
    model = args = kwargs = params = step = None
    gact = r["graph_act"]
    lo, hi = gact * (1 - TOLERANCE), gact * (1 + TOLERANCE)
    r["range_pass"] = lo <= r["between"] and r["between"] - r["largest_param"] <= hi
    if r["exact"]:
        r["measured_adj"] = r["excl"]
        r["diff"] = (gact - r["excl"]) / r["excl"] if r["excl"] else float("inf")
        r["pass"] = lo <= r["excl"] <= hi
    else:
        r["measured_adj"] = None
        lo_m = r["between"] - r["largest_param"]
        # distance of the graph figure to the measured range, relative to it
        if gact < lo_m:
            r["diff"] = (gact - lo_m) / lo_m
        elif gact > r["between"]:
            r["diff"] = (gact - r["between"]) / r["between"]
        else:
            r["diff"] = 0.0
        r["pass"] = r["range_pass"]
    if opts.info:
        from checkmate_torch.binary import find_checkmate
        info = cross_check_info(spec, inputs, find_checkmate())
        r["info_peak"] = info["checkpoint_all_peak"]
        r["info_fixed"] = info["fixed_memory"]
        r["info_ok"] = (info["checkpoint_all_peak"] == r["ca_peak"]
                        and info["fixed_memory"] == r["fixed"])
    r["secs"] = time.perf_counter() - t0
    r["secs_graph"] = t_graph - t0
    return r


# --- output -------------------------------------------------------------------

def fmt(n):
    return "{:,}".format(n)


def table(results):
    lines = ["| model | batch, input | nodes | graph activations (checkpoint-all peak - fixed) "
             "| measured between ops | measured - allowance | difference % "
             "| measured peak incl. workspaces | pass |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        if "error" in r:
            lines.append("| %s | %d, %s | | | | | | | error: %s |"
                         % (r["name"], BATCH, " ".join(r["inputs"]), r["error"]))
            continue
        if r["exact"]:
            adj = fmt(r["measured_adj"])
        else:
            adj = "%s .. %s" % (fmt(r["between"] - r["largest_param"]), fmt(r["between"]))
        ok = "yes" if r["pass"] else "NO"
        if "info_ok" in r and not r["info_ok"]:
            ok += " (checkmate info differs)"
        lines.append("| %s | %d, %s | %d | %s | %s | %s | %+.2f | %s | %s |"
                     % (r["name"], BATCH, " ".join(r["inputs"]), r["nodes"],
                        fmt(r["graph_act"]), fmt(r["between"]), adj, 100 * r["diff"],
                        fmt(r["peak"]), ok))
    return "\n".join(lines)


def details(r):
    out = ["- %s (%s): fixed memory %s %s, checkpoint-all peak %s"
           % (r["name"], r["spec"], fmt(r["fixed"]),
              {k: v for k, v in r["fixed_parts"].items() if v}, fmt(r["ca_peak"]))]
    if "info_peak" in r:
        out.append("  `checkmate info` on the CLI's graph: checkpoint-all peak %s, fixed %s (%s)"
                   % (fmt(r["info_peak"]), fmt(r["info_fixed"]),
                      "equal" if r["info_ok"] else "DIFFERENT"))
    out.append("  largest parameter %s; range check (between - largest .. between = %s .. %s): %s"
               % (fmt(r["largest_param"]), fmt(r["between"] - r["largest_param"]),
                  fmt(r["between"]), "pass" if r["range_pass"] else "FAIL"))
    if r["exact"]:
        out.append("  gradient temporaries: %d (%s bytes, %s); live at the between-ops peak %s "
                   "(between - that = %s); measured - allowance %s at its own moment"
                   % (r["temps"], fmt(r["temp_bytes"]),
                      "one per parameter" if r["temps_match"] else "NOT one per parameter",
                      fmt(r["temp_at_peak"]), fmt(r["between"] - r["temp_at_peak"]),
                      fmt(r["excl"])))
        if r["in_place_late"]:
            out.append("  %d temporaries written in place before AccumulateGrad (counted from "
                       "that write)" % r["in_place_late"])
    elif "exact_error" in r:
        out.append("  exact allowance unavailable: %s" % r["exact_error"])
    out.append("  %.1f s (graph %.1f s)" % (r["secs"], r["secs_graph"]))
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", metavar="NAME",
                   help="only this model (repeatable): " + ", ".join(m[0] for m in MODELS))
    p.add_argument("--info", action="store_true",
                   help="also export each graph with the CLI and compare `checkmate info`'s "
                        "checkpoint-all peak (twice the tracing time)")
    p.add_argument("--simple", action="store_true",
                   help="no event-tree analysis: the allowance is the range "
                        "between_ops - largest parameter .. between_ops")
    p.add_argument("--details", action="store_true", help="a paragraph per model after the table")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    opts = p.parse_args(argv)
    names = [m[0] for m in MODELS]
    for n in opts.only or ():
        if n not in names:
            p.error("unknown model %s (one of %s)" % (n, ", ".join(names)))
    import torch
    torch.set_num_threads(1)
    try:
        import torchvision  # noqa: F401
        have_tv = True
    except ImportError:
        have_tv = False
    t0 = time.perf_counter()
    results, skipped = [], []
    for name, spec, inputs in MODELS:
        if opts.only and name not in opts.only:
            continue
        if spec.startswith("torchvision:") and not have_tv:
            skipped.append(name)
            continue
        try:
            r = run_model(name, spec, inputs, opts)
        except Exception as e:
            r = {"name": name, "spec": spec, "inputs": inputs, "pass": False,
                 "error": "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])}
        results.append(r)
        print("%s: %.1f s" % (name, r.get("secs", 0.0)), file=sys.stderr)
    print("torch %s, %s, 1 thread, batch %d; graph: sum loss, checkmate_torch.graph.Analysis; "
          "measured: checkmate_torch.measure.step_peak (.grad preallocated)"
          % (torch.__version__, sys.executable, BATCH))
    if skipped:
        print("skipped (no torchvision): %s" % ", ".join(skipped))
    print()
    print(table(results))
    print()
    print("measured - allowance: the largest live bytes between ops without the "
          "parameter-gradient temporaries (AccumulateGrad adds each into .grad) live at that "
          "moment, from the profiler's event tree; difference % = (graph activations - "
          "that) / that; pass when graph * 0.97 <= that <= graph * 1.03.")
    if any("error" not in r and not r["exact"] for r in results):
        print("A range 'a .. b' (no event tree, or --simple) is between - largest parameter "
              ".. between; difference % is then the graph's distance to the range; pass when "
              "graph * 0.97 <= b and a <= graph * 1.03.")
    if opts.details:
        print()
        for r in results:
            if "error" not in r:
                print(details(r))
    print()
    print("total %.1f s" % (time.perf_counter() - t0))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(dict(torch=torch.__version__, python=sys.executable, results=results), f,
                      indent=1)
    bad = [r["name"] for r in results if "error" in r or not r["pass"]
           or not r.get("info_ok", True)]
    if bad:
        print("FAIL: %s" % ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""python3 -m checkmate_torch export MODEL ... | run MODEL PLAN ...

Exit status: 0 done; 1 error (tracing failed, bad model or plan, gradients
differ, illegal step); 2 usage error."""
import argparse
import json
import os
import sys
import tempfile
import time

PROG = "checkmate_torch"


def _die(msg, status=1):
    print("%s: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(status)


def _model_args(p):
    p.add_argument("--model", metavar="SPEC",
                   help="torchvision:NAME or FILE.py:FUNCTION (a function returning an nn.Module)")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--input", default="3x224x224", metavar="DxDx...",
                   help="shape of one input sample (default 3x224x224)")


def _load(args, spec):
    import torch
    from . import model as modelmod, trace, graph
    torch.set_num_threads(1)  # deterministic kernels, and the machine is shared
    if args.batch <= 0:
        _die("--batch must be positive", 2)
    try:
        shape = modelmod.parse_shape(args.input)
        model, x = modelmod.load(spec, args.batch, shape)
    except modelmod.ModelError as e:
        _die(str(e))
    try:
        traced = trace.trace(model, x)
    except trace.TraceError as e:
        _die("%s: %s" % (spec, e))
    params = [p.detach() for p in model.parameters()]
    buffers = [b.detach() for b in model.buffers()]
    try:
        a = graph.Analysis(traced, params, buffers, x)
    except graph.AnalysisError as e:
        _die("%s: %s" % (spec, e))
    return model, x, params, buffers, a


def _write_whole(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def cmd_export(args):
    spec = args.model or args.MODEL
    if not spec:
        _die("export: no model (MODEL or --model SPEC)", 2)
    if not args.output:
        _die("export: no output file (-o FILE)", 2)
    t0 = time.perf_counter()
    model, x, params, buffers, a = _load(args, spec)
    if args.cost == "time":
        from . import cost, execute
        fixed = execute.fixed_values(a, params, buffers, x)
        a.set_costs(cost.measure(a, fixed.__getitem__, args.repeats), "ms")
    import torch
    short = spec.split(":", 1)[1] if spec.startswith("torchvision:") else spec
    extra = {
        "batch_size": args.batch,
        "torch": {
            "model": spec, "batch": args.batch, "input": args.input,
            "loss": "sum of every output element",
            "cost_unit": a.cost_unit, "torch_version": torch.__version__,
            "fixed_memory_parts": a.fixed_parts,
        },
    }
    doc = a.to_json("%s train, batch %d, input %s" % (short, args.batch, args.input), extra)
    text = json.dumps(doc, indent=None, separators=(",", ":")).replace('},{"name"', '},\n{"name"')
    try:
        _write_whole(args.output, text + "\n")
    except OSError as e:
        _die("%s: %s" % (args.output, e.strerror or e))
    secs = time.perf_counter() - t0
    nedges = sum(len(n["deps"]) for n in doc["nodes"])
    print("%s: %d nodes, %d edges, fixed memory %d bytes, %.1f s"
          % (args.output, len(doc["nodes"]), nedges, a.fixed_memory, secs), file=sys.stderr)
    return 0


def cmd_run(args):
    from . import execute
    pos = [p for p in (args.MODEL, args.PLAN) if p]
    if args.model:
        if len(pos) != 1:
            _die("run: give PLAN once with --model SPEC", 2)
        spec, plan_path = args.model, pos[0]
    else:
        if len(pos) != 2:
            _die("run: usage: run MODEL PLAN [options]", 2)
        spec, plan_path = pos
    try:
        with open(plan_path) as f:
            plan = json.load(f)
    except (OSError, ValueError) as e:
        _die("%s: %s" % (plan_path, e))
    if not isinstance(plan, dict) or not isinstance(plan.get("steps"), list):
        _die("%s: not a checkmate-plan (no steps)" % plan_path)
    model, x, params, buffers, a = _load(args, spec)
    fixed = execute.fixed_values(a, params, buffers, x)
    try:
        rp, got = execute.replay(a, fixed, plan["steps"])
    except execute.PlanError as e:
        _die("%s: %s" % (plan_path, e))
    # References: the traced graph run once in order (same ops, so equal
    # bit for bit unless a kernel is not deterministic), and an ordinary
    # eager training step (loss.backward(); autograd may order sums
    # differently, hence a tolerance) unless the graph draws random numbers.
    fixed2 = execute.fixed_values(a, [p.clone() for p in params],
                                  [b.clone() for b in buffers], x)
    _, ref = execute.replay(a, fixed2, execute.in_order_steps(a))
    exact_traced, abs_t, rel_t = execute.compare(got, ref)
    from .graph import is_random
    random = any(is_random(r.target) for r in a.real)
    report = {
        "plan": plan_path, "steps": len(plan["steps"]), "computes": rp.computes,
        "nodes": len(a.real), "gradients": len(got),
        "equal_to_traced": exact_traced, "max_abs_diff_traced": abs_t,
        "max_rel_diff_traced": rel_t, "tolerance": args.tolerance,
        "random_ops": random,
        "peak_measured": rp.peak, "peak_model": rp.model_peak,
        "peak_plan": plan.get("peak_memory"),
    }
    ok = rel_t <= args.tolerance
    if not random:
        from . import model as modelmod
        m2, x2 = modelmod.load(spec, args.batch, modelmod.parse_shape(args.input))
        eager = execute.eager_gradients(m2, x2, a.traced.grad_params)
        exact_e, abs_e, rel_e = execute.compare(got, eager)
        report.update({"equal_to_eager": exact_e, "max_abs_diff_eager": abs_e,
                       "max_rel_diff_eager": rel_e})
        ok = ok and rel_e <= args.tolerance
    report["gradients_ok"] = ok
    if report["peak_plan"]:
        report["peak_gap"] = (rp.peak - report["peak_plan"]) / report["peak_plan"]
    if args.json:
        print(json.dumps(report))
    else:
        print("plan %s: %d steps, %d computes of %d nodes"
              % (plan_path, report["steps"], rp.computes, len(a.real)))
        print("gradients of %d parameters: traced graph in order: %s (max rel diff %.3g)"
              % (len(got), "bitwise equal" if exact_traced else "differ", rel_t))
        if not random:
            print("  ordinary training step: %s (max abs diff %.3g, max rel diff %.3g)"
                  % ("bitwise equal" if report["equal_to_eager"] else "differ",
                     report["max_abs_diff_eager"], report["max_rel_diff_eager"]))
        print("  %s (tolerance: max rel diff <= %g)" % ("OK" if ok else "MISMATCH", args.tolerance))
        line = "peak live bytes: measured %d, by the exporter's sizes %d" % (rp.peak, rp.model_peak)
        if report["peak_plan"]:
            line += ", plan %d (measured %+.2f%%)" % (report["peak_plan"], 100 * report["peak_gap"])
        print(line)
    if not ok:
        _die("%s: gradients differ from the reference" % plan_path)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description="checkmate graphs from PyTorch models")
    sub = p.add_subparsers(dest="cmd")
    e = sub.add_parser("export", help="trace a training step and write a checkmate-graph v1 file")
    e.add_argument("MODEL", nargs="?", help="torchvision:NAME or FILE.py:FUNCTION")
    _model_args(e)
    e.add_argument("-o", "--output", metavar="FILE", help="the graph file to write")
    e.add_argument("--cost", choices=("flops", "time"), default="flops",
                   help="node cost: FLOPs from a table (default) or measured median ms")
    e.add_argument("--repeats", type=int, default=5, help="timed runs per node with --cost time")
    r = sub.add_parser("run", help="replay a plan on the model and check its gradients")
    r.add_argument("MODEL", nargs="?")
    r.add_argument("PLAN", nargs="?")
    _model_args(r)
    r.add_argument("--tolerance", type=float, default=1e-4,
                   help="largest gradient difference allowed, relative to each tensor's largest magnitude")
    r.add_argument("--json", action="store_true", help="print the report as one JSON line")
    args = p.parse_args(argv)
    if args.cmd == "export":
        return cmd_export(args)
    if args.cmd == "run":
        return cmd_run(args)
    p.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

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
DEFAULT_INPUT = "3x224x224"
RUN_SEED = 1000      # the generator state `run` starts each replay from
TANGENT_SEED = 2     # the outputs' gradients of `run --loss tangent`


def _die(msg, status=1):
    print("%s: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(status)


def _model_args(p):
    p.add_argument("--model", metavar="SPEC",
                   help="torchvision:NAME or FILE.py:FUNCTION (a function returning an nn.Module)")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--input", action="append", metavar="[NAME=][TYPE:]DIMS[:HIGH]",
                   help="one input of the model, the batch put in front of DIMS (repeatable: "
                        "positional in order, NAME= as a keyword); TYPE float (default), long, "
                        "int, bool, double, half, bfloat16; integers drawn in [0, HIGH) "
                        "(default %s)" % DEFAULT_INPUT)
    p.add_argument("--loss", choices=("sum", "tangent"), default="sum",
                   help="sum: the loss is the sum of every floating-point output element "
                        "(default); tangent: the gradients of the outputs are the backward's "
                        "inputs, as checkmate_torch.remat solves")



def _inputs(args):
    return args.input or [DEFAULT_INPUT]


def _model(args, spec):
    """The seeded model and its inputs (args, kwargs) for the command line's
    options; exits with the error of a bad model or --input."""
    from . import model as modelmod
    try:
        specs = [modelmod.InputSpec(t) for t in _inputs(args)]
        return modelmod.load(spec, args.batch, specs)
    except modelmod.ModelError as e:
        _die(str(e))


def _load(args, spec):
    """(placeholder tensors, graph.Analysis) of the traced step."""
    import torch
    from . import trace, graph, private
    try:
        private.check("graph")
    except private.PrivateError as e:
        _die(str(e))
    torch.set_num_threads(1)  # deterministic kernels, and the machine is shared
    if args.batch <= 0:
        _die("--batch must be positive", 2)
    model, margs, mkwargs = _model(args, spec)
    mode = "tangents" if args.loss == "tangent" else "sum"
    try:
        traced, tensors = trace.trace(model, margs, mkwargs, mode)
        a = graph.Analysis(traced, tensors)
    except (trace.TraceError, graph.AnalysisError) as e:
        _die("%s: %s" % (spec, e))
    return tensors, a


def _write_whole(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            # mkstemp made it 0600; give it the mode open() would have.
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(f.fileno(), 0o666 & ~mask)
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
    tensors, a = _load(args, spec)
    if args.cost == "time":
        from . import execute
        a.set_costs(execute.measure_costs(a, tensors, args.repeats), "ms")
    import torch
    short = spec.split(":", 1)[1] if spec.startswith("torchvision:") else spec
    inputs = _inputs(args)
    loss = ("sum of every output element" if args.loss == "sum"
            else "none: the outputs' gradients are inputs (tangents)")
    extra = {
        "batch_size": args.batch,
        "torch": {
            "model": spec, "batch": args.batch, "inputs": inputs, "loss": loss,
            "cost_unit": a.cost_unit, "torch_version": torch.__version__,
            "fixed_memory_parts": a.fixed_parts,
        },
    }
    doc = a.to_json("%s train, batch %d, input %s" % (short, args.batch, " ".join(inputs)), extra)
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


def _replay(a, tensors, steps, tangents, measure):
    """Runs steps from the generator state RUN_SEED gives: (interpreter,
    gradients). What the step writes of the model's buffers is not written
    back: a plan file's steps need not keep the last versions until the
    end, and only the gradients are compared."""
    import torch
    from . import execute
    torch.manual_seed(RUN_SEED)
    return execute.replay(a, tensors, steps, tangents, measure)


def _eager_gradients(spec, args, a, tangents):
    """The gradients of an ordinary training step on a fresh seeded copy
    of the model, from the same generator state: forward, then the sum
    loss's backward or the outputs' backward with the tangents."""
    import torch
    from . import private, trace
    model, margs, mkwargs = _model(args, spec)
    model.zero_grad(set_to_none=True)
    torch.manual_seed(RUN_SEED)
    out = model(*margs, **mkwargs)
    if tangents is None:
        trace.loss_of(out).backward()
    else:
        flat = [t for t in private.tree_flatten(out)[0]
                if isinstance(t, torch.Tensor)]
        diff = [flat[i] for i in a.traced.out.diff]
        torch.autograd.backward(diff, tangents)
    params = list(model.parameters())
    return [params[i].grad for kind, i in a.traced.grad_of if kind == "param"]


def cmd_run(args):
    from . import execute
    import torch
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
    tensors, a = _load(args, spec)
    tangents = None
    if a.tangents is not None:
        gen = torch.Generator().manual_seed(TANGENT_SEED)
        tangents = [torch.randn(a.traced.out.metas[i][0], generator=gen)
                    .to(a.traced.out.metas[i][1]) for i in a.traced.out.diff]
    n_fixed = len(a.traced.param_names) + len(a.traced.buffer_names)
    clone = lambda: [t.clone() if i < n_fixed else t for i, t in enumerate(tensors)]
    try:
        steps = execute.resolve(a, plan["steps"])
        rp, got = _replay(a, clone(), steps, tangents, True)
    except execute.PlanError as e:
        _die("%s: %s" % (plan_path, e))
    # References: the traced graph run once in order (same ops, so equal
    # bit for bit unless a kernel is not deterministic), and an ordinary
    # eager training step (autograd may order sums differently, hence a
    # tolerance), each from the same generator state.
    _, ref = _replay(a, clone(), a.in_order_steps(), tangents, False)
    exact_traced, abs_t, rel_t = execute.compare(got, ref)
    eager = _eager_gradients(spec, args, a, tangents)
    exact_e, abs_e, rel_e = execute.compare(got, eager)
    report = {
        "plan": plan_path, "steps": len(plan["steps"]), "computes": rp.computes,
        "nodes": len(a.real), "gradients": len(got),
        "equal_to_traced": exact_traced, "max_abs_diff_traced": abs_t,
        "max_rel_diff_traced": rel_t, "tolerance": args.tolerance,
        "random_ops": bool(a.randoms),
        "equal_to_eager": exact_e, "max_abs_diff_eager": abs_e, "max_rel_diff_eager": rel_e,
        "peak_measured": rp.peak, "peak_model": rp.model_peak,
        "peak_plan": plan.get("peak_memory"),
    }
    ok = rel_t <= args.tolerance and rel_e <= args.tolerance
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
        print("  ordinary training step: %s (max abs diff %.3g, max rel diff %.3g)"
              % ("bitwise equal" if exact_e else "differ", abs_e, rel_e))
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

"""The private names of torch that checkmate_torch reads, every one, and
the torch versions each of its modes was tested on.

Torch's public API does not reach all that a plan needs: an ATen
operator's class and schema, fake tensors, dispatch modes, pytrees, the
module internals of a fast walk, and, for compile=True, the inductor
rules that the partition's memory model depends on. Each such name is
an entry of NAMES: where it lives, the modes that read it, why no
public name serves, and, for the few whose absence costs only speed or
a convenience, what is lost without it. No other module of the package
names a private torch module or attribute (tests/torch/t_private.py
reads them all), so a torch release that renames one breaks here, by
name.

check(mode), called before anything is traced (remat(), the command
line), looks up every name of the mode: a missing required name is a
PrivateError, one line naming it and this torch; a missing optional one
a warning saying what is lost; a torch outside TESTED[mode] one warning.
The modes: "graph" (a model's graph for the checkmate binary: python3
-m checkmate_torch), "eager" (remat), "compile" (remat(...,
compile=True)) and "sac" (sac_policy)."""
import contextlib
import importlib
import warnings

import torch

# The torch versions (major.minor) each mode was tested on: `make test`
# runs the torch suite under Debian's torch 1.13 (graph only: remat
# refuses it) and torch 2.13 (build/venv-torch2), and `make
# test-torch-newest` under torch 2.14 (build/venv-torch-newest).
TESTED = {"graph": ("1.13", "2.13", "2.14"),
          "eager": ("2.13", "2.14"),
          "compile": ("2.13", "2.14"),
          "sac": ("2.13", "2.14")}
MODES = tuple(TESTED)
ALL = MODES
TRAINING = ("eager", "compile")


class PrivateError(RuntimeError):
    """A private torch name that a mode needs is missing from this torch."""


class UntestedTorchWarning(UserWarning):
    """A torch outside TESTED, or one that lacks an optional name."""


# Objects whose class carries an attribute an entry names (Name.on):
# the class's name in messages, and a function making one.
_OP = ("OpOverload", lambda: torch.ops.aten.mm.default)
_MODULE = ("Module", torch.nn.Module)
_PARAMETER = ("Parameter", lambda: torch.nn.Parameter(torch.zeros(1)))
_VIEW = ("Tensor", lambda: torch.zeros(2)[:1])
_VARIABLE = ("Variable", lambda: torch.autograd.Variable)


def _a_symint():
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    return ShapeEnv().create_unbacked_symint()


_SYMINT = ("SymInt", _a_symint)


class Name:
    """One private name. path: dotted, from torch (modules imported as
    needed), or from an object on = (its class's name, a function making
    one) whose instances carry the attribute. modes: the modes that read
    it. why: why no public name serves. lost: for an optional name, what
    is lost without it (None: required). key: how NAMES and messages
    name it."""

    def __init__(self, path, modes, why, lost=None, on=None):
        self.path, self.modes, self.why, self.lost, self.on = path, modes, why, lost, on
        self.key = path if on is None else on[0] + "." + path

    def resolve(self):
        """The object the path names; AttributeError or ImportError where
        this torch lacks it."""
        parts = self.path.split(".")
        if self.on is not None:
            obj, done = self.on[1](), ""
        else:
            obj, done, parts = torch, "torch", parts[1:]
        for p in parts:
            done = done + "." + p if done else p
            try:
                obj = getattr(obj, p)
            except AttributeError:
                obj = importlib.import_module(done)   # a submodule not imported yet
        return obj


_OP_WHY = "the class of an ATen operator's overloads (type(torch.ops.aten.mm.default)); torch " \
      "exports no public name for it"
_FAKE = "the step is traced on fake tensors (shapes and dtypes without data); torch has no " \
        "public fake tensor API"
_SCRIPT = "plans run as Python instead of TorchScript: slower on a step bound by the " \
          "host, where the TorchScript program is faster than an ordinary step and the " \
          "Python one slower (docs/benchmarks.md, \"The eager path's host time\")"
_SCRIPT_WHY = "TorchScript's interpreter, checked to run the plan's ops (script.py); its " \
              "passes and executor settings have no public API"
_SIZES = "each new size of an input is traced anew (a second or two on a small model), " \
         "not run by one plan traced with symbolic sizes"
_SIZES_WHY = "a step traced once with symbolic sizes for the dimensions that vary, and the " \
             "shape environment's guards checked for each new size; torch has no public " \
             "symbolic tracing"
NAMES = {n.key: n for n in (
    # --- every mode: tracing and analysing a step ------------------------
    Name("torch._ops.OpOverload", ALL, _OP_WHY),
    Name("_schema", ALL, "an operator's arguments, results and alias annotations (what it "
         "writes, what it views); OpOverload has no public schema", on=_OP),
    Name("torch.utils._pytree.tree_flatten", ALL, "torch's pytrees know the containers that "
         "libraries register with torch (Hugging Face's ModelOutput); torch 2.13 has no "
         "public pytree module"),
    Name("torch.utils._pytree.tree_unflatten", ALL, "as tree_flatten"),
    Name("torch._subclasses.fake_tensor.FakeTensorMode", ALL, _FAKE),
    Name("torch._subclasses.fake_tensor.DataDependentOutputException", ALL,
         "a trace that failed on .item() or Python control flow on a value is named so"),
    Name("torch._subclasses.fake_tensor.DynamicOutputShapeException", ALL,
         "a trace that failed on an output shape that depends on values is named so"),
    Name("_parameters", ALL, "a module's own parameters under every name, tied ones and "
         "None included (named_parameters drops both), read in one walk", on=_MODULE),
    Name("_buffers", ALL, "as _parameters, for buffers", on=_MODULE),
    Name("torch.nn.modules.batchnorm._BatchNorm", ALL, "the base class of every batch norm "
         "whose running statistics a step updates (BatchNorm1d-3d, their lazy and sync "
         "forms, users' subclasses); torch exports no public base"),
    # --- eager mode: the plan's runtime ------------------------------------
    Name("_modules", TRAINING, "as _parameters, for submodules: the step's walk of the model "
         "(0.3 ms on ResNet-50 against three public walks)", on=_MODULE),
    Name("torch.utils._python_dispatch.TorchDispatchMode", ("eager",),
         "a dispatch mode gives a traced op the strides its kernel gives (strides.py); torch "
         "has no public dispatch mode"),
    Name("_base", ("eager",), "the tensor a view was made of: a gradient added in place into "
         "a view frees its base", on=_VIEW),
    Name("_op", ("eager",), "the generated code calls an operator's C++ function, not the "
         "Python frame around it", on=_OP),
    Name("_execution_engine.queue_callback", ("eager",), "hooks set aside for a backward are "
         "put back when it ends; torch has no public callback at the end of a backward",
         on=_VARIABLE),
    Name("_backward_hooks", ("eager",), "whether a parameter has gradient hooks (then its "
         "gradient goes through autograd, which runs them); torch lists no hooks publicly",
         on=_PARAMETER),
    Name("_post_accumulate_grad_hooks", ("eager",), "as _backward_hooks, for hooks after "
         "accumulation", on=_PARAMETER),
    Name("_overloadname", ("eager",), _SCRIPT_WHY, _SCRIPT, on=_OP),
    Name("torch._C._jit_pass_inline", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch._C._jit_pass_remove_expands", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch._C._jit_pass_canonicalize_graph_fuser_ops", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch._C._jit_pass_dce", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch._C._get_graph_executor_optimize", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch._C._set_graph_executor_optimize", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch._C._last_executed_optimized_graph", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch._C.ScriptList", ("eager",), _SCRIPT_WHY, _SCRIPT),
    Name("torch.fx.experimental.symbolic_shapes.ShapeEnv", ("eager",), _SIZES_WHY, _SIZES),
    Name("torch.fx.experimental.symbolic_shapes.StatelessSymbolicContext", ("eager",),
         _SIZES_WHY, _SIZES),
    Name("torch.fx.experimental.symbolic_shapes.DimDynamic", ("eager",), _SIZES_WHY, _SIZES),
    Name("py_kernels", ("eager",), "the symbolic trace runs ATen's own composite kernels, as "
         "an ordinary step does, not torch's Python ones (dropout as native_dropout: other "
         "bits under autocast); torch has no public switch for them", _SIZES, on=_OP),
    Name("_dispatch_cache", ("eager",), "as py_kernels: an operator's cached choice of kernel, "
         "emptied where its Python kernels are set aside and put back", _SIZES, on=_OP),
    # --- sac_policy -------------------------------------------------------
    Name("torch._dispatch.python.enable_python_dispatcher", ("sac",),
         "the ops a checkpointed region dispatches under torch.compile are recorded with "
         "torch's Python kernels on, as AOTAutograd runs them (dropout as native_dropout); "
         "torch has no public switch for them"),
    # --- compile=True ------------------------------------------------------
    Name("torch._functorch.partitioners.min_cut_rematerialization_partition", ("compile",),
         "torch's partitioner, which splits the joint graph once checkmate has chosen the "
         "saved values"),
    Name("torch._functorch.partitioners.choose_saved_values_set", ("compile",),
         "where torch's partitioner chooses the saved values: checkmate's choice is put "
         "there for one partition; the partitioner takes no choice as an argument"),
    Name("torch._functorch.partitioners.get_default_op_list", ("compile",),
         "torch's partitioner's classes of ops (compute-intensive, random, views)"),
    Name("torch._functorch.config.enable_autograd_cache", ("compile",),
         "AOTAutograd's cache, turned off where its key would not hold the partition"),
    Name("node", ("compile",), "a symbolic size's expression, its hint and its shape "
         "environment (torch.compile's dynamic shapes: the partition is sized at the "
         "largest size the graph serves); SymInt has no public accessor for them",
         on=_SYMINT),
    Name("torch.fx.experimental.symbolic_shapes.ShapeEnv.bound_sympy", ("compile",),
         "the range a symbolic size's expression can take (a declared maximum, or one "
         "guarded by the partition); torch has no public interval bound"),
    Name("torch._dynamo.mark_dynamic", ("compile",), "remat(compile=True, dynamic=) marks the "
         "declared dimensions of each call's inputs dynamic with their maxima, as torch's "
         "documentation tells users to; torch.compile has no public name for it"),
    Name("torch._inductor.config.custom_partitioner_fn", ("compile",),
         "inductor's hook for a partitioner, its intended extension point"),
    Name("torch._inductor.custom_graph_pass.CustomPartitionerFn", ("compile",),
         "the class inductor's partitioner hook takes"),
    Name("torch._inductor.compile_fx.compile_fx", ("compile",),
         "inductor's compiler, given the partitioner and a lowering of checkmate's rules"),
    Name("torch._inductor.compile_fx.compile_fx_inner", ("compile",),
         "inductor's compiler of one program, called inside checkmate's lowering"),
    Name("torch._inductor.config.realize_reads_threshold", ("compile",),
         "how many readers make inductor write a value: the model counts what it writes"),
    Name("torch._inductor.config.realize_acc_reads_threshold", ("compile",),
         "how many buffers an expression reads before inductor writes it"),
    Name("torch._inductor.config.realize_cpu_acc_reads_threshold", ("compile",),
         "realize_acc_reads_threshold's default on a CPU"),
    Name("torch._inductor.config._realize_acc_reads_threshold_default", ("compile",),
         "realize_acc_reads_threshold's default on a GPU"),
    Name("torch._inductor.graph.GraphLowering.decide_layout_opt", ("compile",),
         "whether inductor lays the forward out channels-last (then it copies inputs, which "
         "the model counts)"),
    Name("torch._inductor.config.allow_buffer_reuse", ("compile",),
         "turned off while checkmate's backend lowers a program, so that buffers are freed "
         "where the partition's model frees them"),
    Name("torch._inductor.choices.InductorChoices", ("compile",),
         "inductor's heuristics, which it takes from others as a subclass of this one: "
         "compiled._choices limits horizontal fusion"),
    Name("torch._inductor.choices.InductorChoices.can_fuse_horizontal", ("compile",),
         "the heuristic compiled._choices tightens"),
    Name("torch._inductor.virtualized.V.set_choices_handler", ("compile",),
         "where inductor takes other heuristics than its own (InductorChoices' documented "
         "extension point)"),
    Name("torch._inductor.scheduler.Scheduler.are_long_distant_nodes", ("compile",),
         "inductor's measure of how far apart two kernels are, which compiled._choices "
         "tightens"),
    Name("torch._inductor.fx_passes.post_grad.pass_patterns", ("compile",),
         "inductor's rule that folds a matmul into the sum reading it, held to fold only in "
         "place while checkmate's backend lowers a program (compiled._fold_in_place)"),
    Name("torch._subclasses.fake_tensor.unset_fake_temporarily", ("compile",),
         "the partitioner runs under fake tensors; an op's time is measured on real ones"),
    Name("torch._prims_common.is_non_overlapping_and_dense_or_false", ("compile",),
         "whether a traced value's strides are dense, for symbolic sizes too"),
    Name("torch._dynamo.config.recompile_limit", ("compile",),
         "how many signatures dynamo compiles, named when a step exceeds it"),
    Name("torch._dynamo.exc.BackendCompilerFailed", ("compile",),
         "a failed partition is reported by its own message"),
    Name("torch._dynamo.exc.TorchDynamoException", ("compile",),
         "what dynamo refused is reported in one line"),
    Name("torch._dynamo.exc.Unsupported", ("compile",), "a graph break, told from a failed op"),
    Name("torch._dynamo.exc.FailOnRecompileLimitHit", ("compile",),
         "a step over the recompile limit is reported in one line"),
    Name("torch.compiler.config.cache_key_tag", ("compile",),
         "a public name, but needed: it keeps inductor's cache from giving code lowered "
         "without checkmate's rules"),
    Name("torch._dynamo.config.ignore_logging_functions", ("compile",),
         "dynamo takes logging calls inside the forward as no-ops",
         "a logging call inside the forward (transformers' warning_once) breaks the graph, "
         "and compile=True refuses the model, naming the call"),
    Name("torch._inductor.codecache.FxGraphHashDetails._get_custom_partitioner_fn_detail",
         ("compile",), "whether inductor's cache key holds the partitioner's identity",
         "AOTAutograd's cache is off: each process traces and partitions the step again "
         "(seconds), the plan's figures come from checkmate's cache alone"),
)}

_resolved = {}
_warned = set()


def version():
    """This torch's (major, minor)."""
    return tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])


def get(key):
    """The object NAMES[key] names, looked up once; PrivateError where
    this torch lacks it."""
    try:
        return _resolved[key]
    except KeyError:
        pass
    name = NAMES[key]
    try:
        _resolved[key] = obj = name.resolve()
    except (AttributeError, ImportError):
        raise PrivateError(missing(key, name.modes[0], name.why)) from None
    return obj


def has(key):
    """Whether this torch has NAMES[key] (an optional one)."""
    try:
        get(key)
        return True
    except PrivateError:
        return False


def _warn_once(text):
    if text not in _warned:
        _warned.add(text)
        warnings.warn(text, UntestedTorchWarning, stacklevel=3)


def check(mode):
    """Every name `mode` reads looked up, before the mode traces anything:
    PrivateError for the first required one missing, a warning (once a
    process) for each optional one missing, and one for a torch outside
    TESTED[mode]."""
    for key, name in NAMES.items():
        if mode not in name.modes or has(key):
            continue
        if name.lost is None:
            raise PrivateError(missing(key, mode, name.why))
        _warn_once("torch %s has no %s: %s" % (torch.__version__, key, name.lost))
    v = "%d.%d" % version()
    if v not in TESTED[mode]:
        _warn_once("checkmate_torch's %s mode was tested on torch %s, not on this torch %s"
                   % (mode, ", ".join(TESTED[mode]), torch.__version__))


# --- accessors of the names above ------------------------------------------
# Those of a module's or a class's name look their entry up (a torch
# without it fails here, by name); those of an instance's attribute read
# it directly, check() having looked it up on an instance.

def is_op(target):
    """Whether target is an ATen operator overload."""
    return isinstance(target, get("torch._ops.OpOverload"))


def schema(op):
    """An operator overload's schema."""
    return op._schema


def overload_name(op):
    return op._overloadname


def op_function(op):
    """The C++ function an operator overload calls."""
    return op._op


def base(tensor):
    """The tensor a view was made of (None: not a view)."""
    return tensor._base


def python_dispatcher():
    """A context in which torch's Python kernels (decompositions) run, as
    under AOTAutograd."""
    return get("torch._dispatch.python.enable_python_dispatcher")()


def tree_flatten(value):
    return get("torch.utils._pytree.tree_flatten")(value)


def tree_unflatten(leaves, spec):
    return get("torch.utils._pytree.tree_unflatten")(leaves, spec)


def fake_tensor_mode(**kwargs):
    return get("torch._subclasses.fake_tensor.FakeTensorMode")(**kwargs)


_python_composites = None


@contextlib.contextmanager
def aten_composites():
    """Within: the ATen operators with Python kernels for their composite
    and autograd dispatch keys (torch._decomp's: dropout, matmul, batch
    norm, upsampling, RNNs) run their C++ composite kernels, as an
    ordinary step runs them; the python dispatcher, which a symbolic
    trace needs (a C++ kernel's sizes stay symbolic), would run the
    Python ones, which record other ops (dropout as native_dropout,
    whose bits differ under autocast)."""
    global _python_composites
    keys = (torch._C.DispatchKey.CompositeImplicitAutograd, torch._C.DispatchKey.Autograd)
    if _python_composites is None:
        found = []
        for name in dir(torch.ops.aten):
            packet = getattr(torch.ops.aten, name, None)
            for ov in getattr(packet, "overloads", lambda: [])():
                op = getattr(packet, ov)
                found += [(op, k) for k in keys if k in op.py_kernels]
        _python_composites = found
    saved = [(op, k, op.py_kernels.pop(k)) for op, k in _python_composites
             if k in op.py_kernels]
    for op, _, _ in saved:
        op._dispatch_cache.clear()
    try:
        yield
    finally:
        for op, k, kernel in saved:
            op.py_kernels[k] = kernel
            op._dispatch_cache.clear()


@contextlib.contextmanager
def symbolic_kernels():
    """What a symbolic trace runs in: the python dispatcher (a C++
    kernel's sizes stay symbolic), ATen's C++ composite kernels (the ops
    an ordinary step runs: aten_composites)."""
    with python_dispatcher(), aten_composites():
        yield


def symbolic_fakes(groups, dynamic):
    """(a fake tensor mode with a shape environment, groups' tensors as its
    fake tensors): the last group's tensor i with the dimensions
    dynamic[i] symbolic, every other dimension static. Symbolic
    dimensions of one size are one symbol (torch.compile's duck sizing:
    the input_ids and labels of one batch have one length), which the
    trace's sizes then assume equal at other sizes too."""
    path = "torch.fx.experimental.symbolic_shapes."
    dynamic_, static = get(path + "DimDynamic").DUCK, get(path + "DimDynamic").STATIC
    mode = fake_tensor_mode(shape_env=get(path + "ShapeEnv")(), allow_fallback_kernels=True)
    out = []
    for g, ts in enumerate(groups):
        fakes = []
        for i, t in enumerate(ts):
            dims = dynamic.get(i, ()) if g == len(groups) - 1 else ()
            ctx = get(path + "StatelessSymbolicContext")(dynamic_sizes=[
                dynamic_ if d in dims else static for d in range(t.dim())])
            fakes.append(mode.from_tensor(t, symbolic_context=ctx))
        out.append(fakes)
    return mode, out


def unset_fake():
    """A context in which torch's fake tensor mode is off."""
    return get("torch._subclasses.fake_tensor.unset_fake_temporarily")()


def is_batch_norm(module):
    return isinstance(module, get("torch.nn.modules.batchnorm._BatchNorm"))


def own_tensors(module):
    """(name, tensor) of the parameters, then the buffers, registered on
    module itself, under every name, None where one is registered so."""
    return list(module._parameters.items()) + list(module._buffers.items())


def module_tensors(model):
    """(parameters, buffers) of model and its submodules, each once, in
    the order of model.parameters() and model.buffers(), in one walk."""
    params, buffers, seen = [], [], set()

    def walk(m):
        seen.add(id(m))
        for p in m._parameters.values():
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        for b in m._buffers.values():
            if b is not None and id(b) not in seen:
                seen.add(id(b))
                buffers.append(b)
        for c in m._modules.values():
            if c is not None and id(c) not in seen:
                walk(c)
    walk(model)
    return params, buffers


def gradient_hooks(param):
    """The dicts of a parameter's gradient hooks (before and after
    accumulation), those it has."""
    return [h for h in (param._backward_hooks, param._post_accumulate_grad_hooks) if h]


def at_backward_end(fn):
    """fn called when the running backward ends."""
    get("Variable._execution_engine.queue_callback")(fn)


def dispatch_mode():
    """torch's base class of a dispatch mode."""
    return get("torch.utils._python_dispatch.TorchDispatchMode")


def dynamo_exc(name):
    """A class of torch._dynamo.exc."""
    return get("torch._dynamo.exc." + name)


def backend_error(e):
    """What a torch.compile backend raised, where dynamo wrapped it in a
    BackendCompilerFailed (its inner_exception), else e: only a message
    reads it, so a torch without the attribute gives dynamo's text."""
    return getattr(e, "inner_exception", None) or e


def dynamo_config():
    return importlib.import_module("torch._dynamo.config")


def inductor_config():
    return importlib.import_module("torch._inductor.config")


def functorch_config():
    return importlib.import_module("torch._functorch.config")


def partitioners():
    return importlib.import_module("torch._functorch.partitioners")


def sym_expr(size):
    """A symbolic size's sympy expression (in torch's symbols)."""
    return size.node.expr


def sym_hint(size):
    """The size a symbolic size has in the call being compiled (None for
    a size known only when the step runs)."""
    return size.node.hint


# torch's symbolic numbers (none on torch 1.13)
_SYMBOLIC = tuple(getattr(torch, n) for n in ("SymInt", "SymFloat", "SymBool") if hasattr(torch, n))


def is_sym(value):
    """Whether value is a symbolic number (a size of a symbolic trace)."""
    return isinstance(value, _SYMBOLIC)


def hint(value):
    """A number as it is in the call traced: a symbolic one's hint."""
    if not is_sym(value):
        return value
    h = sym_hint(value)
    if h is None:
        raise ValueError("a size known only when the step runs (%s)" % sym_expr(value))
    return h


def shape_env(value):
    """The shape environment of a symbolic size."""
    return value.node.shape_env


def guards(env):
    """The sympy expressions a shape environment's trace assumed true
    (each a decision the traced code took on sizes), with each symbol's
    range (its lower and upper bounds as sympy relations)."""
    import sympy
    # in the symbols left: one found equal to another is replaced by it
    out = [g.expr.xreplace(env.replacements) for g in env.guards]
    out = [g for g in out if g is not sympy.true]
    for sym, r in env.var_to_range.items():
        if sym in env.replacements:
            continue
        if r.lower.is_finite:
            out.append(sympy.Ge(sym, r.lower))
        if r.upper.is_finite:
            out.append(sympy.Le(sym, r.upper))
    return out


def sym_largest(size):
    """The largest a symbolic size can take in its shape environment's
    ranges (not a sympy Integer where unbounded)."""
    node = size.node
    return node.shape_env.bound_sympy(node.expr).upper


def mark_dynamic(tensor, dim, most):
    """Marks a dimension of a call's input dynamic for torch.compile,
    from 2 (torch.compile compiles sizes 0 and 1 apart) to a maximum."""
    get("torch._dynamo.mark_dynamic")(tensor, dim, min=2, max=most)


def dense(value):
    """Whether a (fake) tensor's strides are non-overlapping and dense;
    False where its symbolic sizes leave it open."""
    return get("torch._prims_common.is_non_overlapping_and_dense_or_false")(value)


def jit_ops_pipeline(graph):
    """TorchScript's passes before its interpreter runs graph with the
    optimizer off (runNooptPassPipeline), in place."""
    for p in ("inline", "remove_expands", "canonicalize_graph_fuser_ops", "dce"):
        get("torch._C._jit_pass_" + p)(graph)


def jit_optimize(on=None):
    """TorchScript's optimizer setting (this thread's); set to `on` when
    given. Returns the setting before."""
    old = get("torch._C._get_graph_executor_optimize")()
    if on is not None:
        get("torch._C._set_graph_executor_optimize")(on)
    return old


def jit_last_graph():
    """The graph TorchScript's interpreter last ran."""
    return get("torch._C._last_executed_optimized_graph")()


def script_list():
    """An empty TorchScript list (torch.jit.script([]) warns on torch 2.14)."""
    return get("torch._C.ScriptList")([])


def has_symbolic():
    """Whether every name of the symbolic trace is there (torch 2)."""
    return all(has(k) for k, n in NAMES.items() if n.lost == _SIZES) and \
        has("torch._dispatch.python.enable_python_dispatcher") and has("SymInt.node")


def has_torchscript():
    """Whether every name of the TorchScript runner is there."""
    return all(has(k) for k, n in NAMES.items() if n.lost == _SCRIPT)


def owner(key):
    """The module or class that holds NAMES[key]'s last attribute (where
    a rule is replaced); PrivateError where this torch lacks the name."""
    get(key)
    return Name(NAMES[key].path.rsplit(".", 1)[0], (), "").resolve()


def missing(what, mode, why=None):
    """PrivateError's message for a thing `mode` needs that this torch
    lacks (what: its name, or what is not there; why: what it serves)."""
    return "torch %s has no %s, which checkmate_torch's %s mode needs%s (tested on torch %s)" % (
        torch.__version__, what, mode, ": " + why if why else "", ", ".join(TESTED[mode]))


def inductor_setting(name):
    """inductor's config.<name> as it is now; PrivateError where this
    torch has no such setting."""
    try:
        return getattr(inductor_config(), name)
    except AttributeError:
        raise PrivateError(missing("torch._inductor.config." + name, "compile")) from None


def forget():
    """Forgets the names looked up and the warnings given (the tests
    rename entries, as a torch release would)."""
    _resolved.clear()
    _warned.clear()

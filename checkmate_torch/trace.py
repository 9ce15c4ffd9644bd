"""Tracing one training step to an ATen-level torch.fx graph with make_fx
over fake tensors: nothing is computed, and a branch on a tensor's value
fails instead of being silently frozen to the traced example.

The step is the joint forward and backward graph, as AOTAutograd builds
it: the model's forward with the parameters and buffers passed in, then
torch.autograd.grad. Two kinds:
  tangents  the backward's inputs are the gradients of the module's
            differentiable outputs (what loss.backward() hands the module
            in a training loop): checkmate_torch.remat and `export --loss
            tangent`;
  sum       the loss is the sum of every floating-point output element
            (`export`'s default: a graph with a loss node, for the CLI).
"""
import contextlib
import os
import traceback

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from . import private
from .alias import independent
from .functional import aliased_arg, mutated_args, written_value


class TraceError(Exception):
    pass


_DATA_DEPENDENT = "its result depends on tensor values (Python control flow or .item() on a tensor?)"


def _all_names(model, params):
    """(dotted name, index in params) for every name a tensor of params is
    registered under, tied ones (a language model's head sharing the
    embedding's weight) under each of their names: torch 1.13's
    functional_call replaces only the names it is given."""
    index = {id(p): i for i, p in enumerate(params)}
    out = []
    for prefix, mod in model.named_modules(remove_duplicate=False):
        for name, t in private.own_tensors(mod):
            if t is not None and id(t) in index:
                out.append(((prefix + "." if prefix else "") + name, index[id(t)]))
    return out


def functional_call(model, state, args, kwargs):
    fc = getattr(getattr(torch, "func", None), "functional_call", None)
    if fc is None:
        from torch.nn.utils import stateless
        fc = stateless.functional_call
    return fc(model, state, tuple(args), dict(kwargs))


def tensors_of(value):
    """The tensor leaves of a pytree, in order."""
    return [t for t in private.tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


class _Leaves:
    """A pytree split into its tensor leaves and the rest (the structure
    and the non-tensor leaves), which rebuild puts back around other
    tensors."""

    def __init__(self, value):
        leaves, self.spec = private.tree_flatten(value)
        self.is_tensor = [isinstance(v, torch.Tensor) for v in leaves]
        self.tensors = [v for v in leaves if isinstance(v, torch.Tensor)]
        self.constants = [None if t else v for v, t in zip(leaves, self.is_tensor)]

    def rebuild(self, tensors):
        it = iter(tensors)
        leaves = [next(it) if t else c for t, c in zip(self.is_tensor, self.constants)]
        return private.tree_unflatten(leaves, self.spec)


class Inputs(_Leaves):
    """A call's (args, kwargs): the tree structure and the non-tensor
    leaves are held constant by a trace, the tensors (placed) are the
    graph's inputs. A tensor that requires a gradient and is passed at
    several positions is one input of the graph, so that the step adds
    up its gradients as autograd does (in the same order); any other is
    one input per position, whatever the call's tensors share (alias.py):
    where[i] is the index in placed of tensor i."""

    def __init__(self, args, kwargs):
        super().__init__((tuple(args), dict(kwargs or {})))
        first, self.where, self.placed = {}, [], []
        for t in self.tensors:
            k = first.get(id(t)) if t.requires_grad else None
            if k is None:
                k = len(self.placed)
                first.setdefault(id(t), k)
                self.placed.append(t)
            self.where.append(k)

    def describe(self):
        """The tensors' shapes, for a message: "(4, 96), (4, 96)"."""
        return ", ".join(str(tuple(t.shape)) for t in self.tensors) or "(none)"

    def key(self):
        """What a plan depends on: shapes, strides, dtypes, devices, which
        require gradients, which are one input, the constants and the
        structure."""
        shapes = tuple((tuple(t.shape), t.stride(), t.dtype, str(t.device), t.requires_grad)
                       for t in self.tensors)
        return (str(self.spec), repr(self.constants), shapes, tuple(self.where))


def _autocast_devices():
    return ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)


def autocast_key():
    """For each device type, whether autocast is on and its dtype, and
    whether its cast cache is on: the ops a step runs depend on them, so a
    plan does."""
    out = [("cache", torch.is_autocast_cache_enabled())]
    for dev in _autocast_devices():
        try:
            on, dtype = torch.is_autocast_enabled(dev), torch.get_autocast_dtype(dev)
        except (TypeError, AttributeError):  # torch 1.13
            on = torch.is_autocast_cpu_enabled() if dev == "cpu" else torch.is_autocast_enabled()
            dtype = torch.get_autocast_cpu_dtype() if dev == "cpu" else \
                torch.get_autocast_gpu_dtype()
        out.append((dev, on, dtype if on else None))
    return tuple(out)


class no_autocast:
    """Autocast off on every device type: the traced ops carry autocast's
    casts already, and run as traced."""

    def __enter__(self):
        self._cms = [torch.autocast(dev, enabled=False) for dev in _autocast_devices()]
        for cm in self._cms:
            cm.__enter__()

    def __exit__(self, *exc):
        for cm in reversed(self._cms):
            cm.__exit__(*exc)
        return False


class Traced:
    """The traced step. gm's placeholders are the parameters (in
    named_parameters order), the buffers, the input tensors, then the
    tangents (one per differentiable output); its output is (flat tensor
    outputs, gradients) in tangents mode, (loss, gradients) in sum mode.
    grad_of[i] is ('param', index) or ('input', index) for gradient i."""

    def __init__(self, gm, names, inputs, out, grad_of):
        self.gm = gm
        self.param_names, self.buffer_names = names
        self.inputs = inputs
        self.out = out          # Outputs, or None in sum mode
        self.grad_of = grad_of

    def placeholder_roles(self):
        n_tan = len(self.out.diff) if self.out is not None else 0
        return (["param"] * len(self.param_names) + ["buffer"] * len(self.buffer_names)
                + ["input"] * len(self.inputs.placed) + ["tangent"] * n_tan)

    def split_outputs(self, flat):
        """(loss or None, output fx nodes, gradient fx nodes)."""
        if self.out is None:
            return flat[0], [], flat[1:]
        k = len(self.out.metas)
        return None, flat[:k], flat[k:]


# What a module may return besides tensors: constants a plan holds.
_CONSTANTS = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device,
              torch.Size, torch.memory_format, torch.layout)


class Outputs(_Leaves):
    """The structure of the module's output, seen while tracing: metas
    (shape, dtype, device) of the flat tensor outputs, and diff, the flat
    indices that are differentiable (floating point and reached from a
    parameter or an input that requires grad). The traced tensors are not
    kept. A leaf that is neither a tensor nor a plain constant (an object
    holding tensors, such as HF's DynamicCache) is refused: the plan
    would return the trace's object on every call."""

    def __init__(self, value):
        super().__init__(value)
        for c in self.constants:
            if not isinstance(c, _CONSTANTS):
                raise TraceError("the model returns a %s, which is neither a tensor nor a "
                                 "tuple, list or dict of tensors and constants; return tensors "
                                 "(HF models: use_cache=False)" % type(c).__name__)
        self.metas = [(tuple(t.shape), t.dtype, t.device) for t in self.tensors]
        # A tensor returned at several places is one output, returned as
        # the same object at each (its gradients add up in autograd, in
        # the order the loss's backward delivers them, as they would
        # without a plan): first[i] is the flat index where tensor i
        # first appears, unique those indices.
        where = {}
        self.first = [where.setdefault(id(t), i) for i, t in enumerate(self.tensors)]
        self.unique = sorted(set(self.first))
        self.slot = {i: k for k, i in enumerate(self.unique)}   # flat index -> returned
        self.diff = [i for i in self.unique if self.tensors[i].requires_grad]
        # Outputs whose backward reads a tensor the forward wrote in place
        # afterwards (set by the trace): differentiable, but an ordinary
        # backward that reaches one fails, so no plan differentiates them
        self.unreadable = []
        self.tensors = None


def loss_of(out):
    """The sum loss: the sum of every element of every floating-point
    tensor the model returns."""
    leaves = [t for t in tensors_of(out) if t.is_floating_point()]
    if not leaves:
        raise TraceError("the model returned no floating-point tensor")
    loss = leaves[0].sum()
    for t in leaves[1:]:
        loss = loss + t.sum()
    return loss


_HERE = os.path.dirname(os.path.abspath(__file__))


def _user_frame(tb):
    """file:line of the innermost frame outside torch and this package,
    where the user's code made the failing call."""
    where = None
    for fr in traceback.extract_tb(tb):
        if outside(fr.filename):
            where = "%s:%d" % (os.path.basename(fr.filename), fr.lineno)
    return where


def _in_checkpoint(tb):
    return any(fr.filename.endswith(os.path.join("torch", "utils", "checkpoint.py"))
               for fr in traceback.extract_tb(tb))


def _failing_op(exc):
    """The ATen op being dispatched when exc was raised: the exception's own
    argument (fake tensor errors), else the innermost traceback frame with
    an OpOverload in a local named func (the tracer's dispatch functions)."""
    if exc.args and private.is_op(exc.args[0]):
        return exc.args[0]
    op = None
    tb = exc.__traceback__
    while tb is not None:
        f = tb.tb_frame.f_locals.get("func")
        if private.is_op(f):
            op = f
        tb = tb.tb_next
    return op


def _explain(exc):
    op = _failing_op(exc)
    op = str(op) if op is not None else None
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if _in_checkpoint(exc.__traceback__):
        return ("tracing failed: the model checkpoints itself (torch.utils.checkpoint; HF: "
                "gradient_checkpointing_enable()); remat makes its own plan: turn that off")
    if isinstance(exc, private.get(
            "torch._subclasses.fake_tensor.DataDependentOutputException")) or "data-dependent" in first or (
            op is not None and ("get value out of a tracing tensor" in first
                                or "_local_scalar_dense" in op)):
        why = _DATA_DEPENDENT
        # torch 2 fails later, when Python reads the symbol .item() gave
        op = op or "aten._local_scalar_dense.default"
    elif isinstance(exc, private.get(
            "torch._subclasses.fake_tensor.DynamicOutputShapeException")):
        why = "its output shape depends on tensor values"
    else:
        why = "%s: %s" % (type(exc).__name__, first)
    where = _user_frame(exc.__traceback__)
    msg = "tracing failed"
    if op:
        msg += " at op %s" % op
    if where:
        msg += " (called from %s)" % where
    return msg + ": " + why


_TORCH = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def outside(filename):
    """Whether filename is the user's: neither torch's nor this package's."""
    path = os.path.abspath(filename)
    return not path.startswith(_TORCH) and os.path.dirname(path) != _HERE


def _dynamic_node(gm):
    """The first node of gm whose value is not static, and why. Torch 2's
    fake tensors give .item() and data-dependent shapes (nonzero, masked
    indexing) a symbol instead of failing; a symbolic trace's sizes of
    the inputs' dynamic dimensions (and what follows from them) have a
    hint, and are not."""
    for n in gm.graph.nodes:
        vals = private.tree_flatten(n.meta.get("val"))[0]
        if n.target is torch.ops.aten._local_scalar_dense.default:
            return n, _DATA_DEPENDENT
        if any(isinstance(t, torch.Tensor) and
               any(not isinstance(d, int) and private.sym_hint(d) is None for d in t.shape)
               for t in vals):
            return n, "its output shape depends on tensor values"
    return None, None


# Ops whose floating-point tensor arguments must share one dtype, which
# fake tensors do not check: a float64 input to a float32 model's matmul
# traces, and the ordinary step raises.
_SAME_DTYPE = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot",
               "convolution", "_convolution"}


def dtype_mismatch(graph):
    """The first node of an fx graph whose op needs its floating-point
    tensor arguments in one dtype (_SAME_DTYPE) and gets several, with
    its message; else (None, None)."""
    for n in graph.nodes:
        name = private.schema(n.target).name if private.is_op(n.target) else ""
        if n.op != "call_function" or name.split("::")[-1] not in _SAME_DTYPE:
            continue
        vals = [a.meta.get("val") for a in private.tree_flatten(list(n.args))[0]
                if isinstance(a, torch.fx.Node)]
        dtypes = [v.dtype for v in vals if isinstance(v, torch.Tensor) and v.is_floating_point()]
        if len(set(dtypes)) > 1:
            return n, ("its tensors' dtypes differ (%s), which the op refuses when the step "
                       "runs: cast the input to the model's dtype (a float64 input to a "
                       "float32 model?)" % ", ".join(str(d).replace("torch.", "")
                                                     for d in dtypes))
    return None, None


def _make_fx(f, *args, symbolic=False):
    """f traced by make_fx over fake tensors, without stack traces (they
    cost a tenth of the trace). Torch 2's fake tensors give .item() and
    data-dependent shapes (nonzero, masked indexing) a symbol instead of
    failing; where the graph has one, f runs again on fake tensors without
    symbols, which fails at that op with the user's line in its traceback
    (the same error as on 1.13)."""
    try:
        with private.symbolic_kernels() if symbolic else contextlib.nullcontext():
            gm = make_fx(f, tracing_mode="symbolic" if symbolic else "fake")(*args)
    except TraceError:
        raise
    except Exception as exc:  # anything the tracer or the model raised
        raise TraceError(_explain(exc)) from exc
    n, why = _dynamic_node(gm)
    if n is not None:
        _fake_run(f, *args)
        raise TraceError("tracing failed at op %s: %s" % (n.target, why))
    n, why = dtype_mismatch(gm.graph)
    if n is not None:
        raise TraceError("tracing failed at op %s: %s" % (n.target, why))
    return gm


def _fake_run(f, *args, fakes=None):
    """f called on fake copies of args (lists of tensors) without building
    a graph, in a third of make_fx's time: for the probe of a step (its
    outputs' structure, shapes and which are differentiable), and for an
    error that names the user's line. fakes: (mode, args' fake tensors)
    of a symbolic trace (private.symbolic_fakes)."""
    try:
        if fakes is not None:
            (mode, fake), within = fakes, private.symbolic_kernels()
        else:
            mode = private.fake_tensor_mode(allow_fallback_kernels=True)
            fake = [[mode.from_tensor(t) for t in ts] for ts in args]
            within = contextlib.nullcontext()
        with mode, within:
            return f(*fake)
    except TraceError:
        raise
    except Exception as exc:
        raise TraceError(_explain(exc)) from exc


# The momentum a BatchNorm(momentum=None) is traced with, so that its batch
# norm op can be found and given 1 / num_batches_tracked when it runs.
CMA_MOMENTUM = 0.3141592653589793


def _cumulative_batch_norms(model):
    """BatchNorm modules that average their running statistics
    cumulatively (momentum=None): their momentum is 1 / num_batches_tracked,
    read from the buffer in Python, which no trace can follow."""
    return [m for m in model.modules()
            if private.is_batch_norm(m) and m.momentum is None and m.track_running_stats]


def trace(model, args, kwargs=None, mode="tangents", within=None, dynamic=None):
    """Traces a training step of model on the example call
    model(*args, **kwargs); mode is 'tangents' or 'sum'; within a function
    giving a context the step is traced in (strides.corrections); dynamic
    ({index of a placed input: dimensions}) traces with those dimensions
    symbolic (torch 2), every other size as the example has it. A
    BatchNorm(momentum=None) is traced with momentum CMA_MOMENTUM (the
    executor gives its op the true one)."""
    cma = _cumulative_batch_norms(model)
    for m in cma:
        m.momentum = CMA_MOMENTUM
    try:
        return _trace(model, args, kwargs, mode, within, dynamic)
    finally:
        for m in cma:
            m.momentum = None


def _inline_sizes(gm):
    """The nodes of a symbolic trace that compute sizes (sym_size, and
    arithmetic on sizes) removed, each argument that read one given the
    symbolic size itself: the graph's nodes are tensors and tuples of
    them, as in a trace of one size; codegen.py writes a symbolic size as
    a name bound to its value at each call's sizes."""
    sizes = {n: n.meta["val"] for n in gm.graph.nodes
             if n.op == "call_function" and private.is_sym(n.meta.get("val"))}
    if not sizes:
        return
    for n in gm.graph.nodes:
        if n not in sizes and any(d in sizes for d in n.all_input_nodes):
            n.args = torch.fx.node.map_arg(n.args, lambda d: sizes.get(d, d))
            n.kwargs = torch.fx.node.map_arg(n.kwargs, lambda d: sizes.get(d, d))
    for n in reversed(list(sizes)):
        gm.graph.erase_node(n)


def _same_size(a, b):
    """Whether two sizes of a trace (ints, or symbolic sizes) are one
    number, compared as expressions (no guard is added)."""
    if private.is_sym(a) or private.is_sym(b):
        return private.is_sym(a) and private.is_sym(b) and \
            private.sym_expr(a) == private.sym_expr(b)
    return a == b


def _drop_whole_slices(gm):
    """A trace's slices whose result has the sliced tensor's own sizes,
    strides and offset (x[:, :], x[:, :n] where n is its length) removed,
    their readers reading the sliced tensor; so are aliases (x[:]) and the
    backward of such a slice (a copy of a gradient) where nothing writes
    either. Torch's indexing skips a whole slice where the sizes are
    concrete (an alias where it skips every index) and emits it where
    they are symbolic: without this, a symbolic trace is another graph
    than a trace at one size, and a plan made for either does not serve
    the other (train._reused). What the step returns stays."""
    returned = set(next(n for n in gm.graph.nodes if n.op == "output").all_input_nodes)
    for n in list(gm.graph.nodes):
        if n.target not in _WHOLE or n in returned or not isinstance(n.args[0], torch.fx.Node):
            continue
        x, v = n.args[0].meta.get("val"), n.meta.get("val")
        if not isinstance(x, torch.Tensor) or not isinstance(v, torch.Tensor) \
                or x.dim() != v.dim():
            continue
        its = list(x.shape) + list(x.stride()) + [x.storage_offset()]
        mine = list(v.shape) + list(v.stride()) + [v.storage_offset()]
        if not all(_same_size(p, q) for p, q in zip(mine, its)):
            continue
        if n.target is torch.ops.aten.slice_backward.default and (
                _written(n) or _written(_base(n.args[0]))):
            continue    # a copy: its readers read the gradient as it was
        n.replace_all_uses_with(n.args[0])
        gm.graph.erase_node(n)


def _base(node):
    """The value node is a view of (through views of views), or node."""
    while node.op == "call_function":
        k = aliased_arg(node.target)
        if k is None or k >= len(node.args) or not isinstance(node.args[k], torch.fx.Node):
            break
        node = node.args[k]
    return node


def _written(node):
    """Whether an op writes node's value in place, or a view of it."""
    seen, todo = {node}, [node]
    while todo:
        for u in todo.pop().users:
            if written_value(u) in seen or any(
                    u.args[i] in seen for i in mutated_args(u.target, u.args)):
                return True
            k = aliased_arg(u.target)
            if k is not None and k < len(u.args) and u.args[k] in seen and u not in seen:
                seen.add(u)
                todo.append(u)
    return False


_WHOLE = (torch.ops.aten.slice.Tensor, torch.ops.aten.alias.default,
          torch.ops.aten.slice_backward.default)


def _trace(model, args, kwargs, mode, within, dynamic=None):
    param_names = [n for n, _ in model.named_parameters()]
    buffer_names = [n for n, _ in model.named_buffers()]
    params = [p.detach() for p in model.parameters()]
    buffers = [b.detach() for b in model.buffers()]
    inputs = Inputs(args, kwargs)
    # a placeholder per placed input, whatever they share (alias.py)
    xs_in = independent(inputs.placed)
    wants_grad = [p.requires_grad for p in model.parameters()]
    input_grad = [t.requires_grad and t.is_floating_point() for t in xs_in]

    p_names = _all_names(model, list(model.parameters()))
    b_names = _all_names(model, list(model.buffers()))

    # Autocast casts a parameter once per autocast region where its cache
    # is on (the default), and the gradients of that cast's uses add up in
    # the low precision before the cast back: ALBERT's layers, or any
    # module applied twice. make_fx turns the cache off while it traces;
    # the forward turns it back as the caller has it. Its entries are
    # keyed by the trace's own fake parameters, and leave with the
    # caller's autocast region.
    cache = torch.is_autocast_cache_enabled()

    def forward(ps, bs, xs):
        ps = [p.requires_grad_(True) if w else p for p, w in zip(ps, wants_grad)]
        xs = [x.requires_grad_(True) if w else x for x, w in zip(xs, input_grad)]
        state = {name: ps[i] for name, i in p_names}
        state.update((name, bs[i]) for name, i in b_names)
        a, k = inputs.rebuild([xs[i] for i in inputs.where])
        traced = torch.is_autocast_cache_enabled()
        torch.set_autocast_cache_enabled(cache)
        try:
            return ps, xs, functional_call(model, state, a, k)
        finally:
            torch.set_autocast_cache_enabled(traced)

    seen = {}

    def probe(ps, bs, xs):
        _, _, out = forward(ps, bs, xs)
        seen["out"] = Outputs(out)
        return tensors_of(out)

    wrt_index = [("param", i) for i, w in enumerate(wants_grad) if w] + \
                [("input", i) for i, w in enumerate(input_grad) if w]

    def wrt_of(ps, xs):
        return [ps[i] if kind == "param" else xs[i] for kind, i in wrt_index]

    def step(ps, bs, xs, tangents):
        ps, xs, out = forward(ps, bs, xs)
        wrt = wrt_of(ps, xs)
        flat = tensors_of(out)
        if mode == "sum":
            loss = loss_of(out)
            with no_autocast():
                grads = torch.autograd.grad(loss, wrt, allow_unused=True)
        else:
            diff = [flat[i] for i in seen["out"].diff]
            if not diff:
                raise TraceError("no output of the model is differentiable")
            with no_autocast():  # loss.backward() runs outside autocast
                grads = torch.autograd.grad(diff, wrt, grad_outputs=tangents,
                                            allow_unused=True)
        used = [k for k, g in enumerate(grads) if g is not None]
        seen["grad_of"] = [wrt_index[k] for k in used]
        kept = [grads[k] for k in used]
        return (loss, kept) if mode == "sum" else (flat, kept)

    def backward_of(i):
        def run(ps, bs, xs):
            ps, xs, out = forward(ps, bs, xs)
            t = tensors_of(out)[i]
            with no_autocast():
                torch.autograd.grad(t, wrt_of(ps, xs), grad_outputs=torch.zeros_like(t),
                                    allow_unused=True)
        return run

    def tangents_of(out):
        return [torch.zeros(out.metas[i][0], dtype=out.metas[i][1], device=out.metas[i][2])
                for i in out.diff]

    tangents = []
    fakes = None
    if dynamic is not None:
        fakes = private.symbolic_fakes((params, buffers, xs_in), dynamic)
    if mode == "tangents":
        _fake_run(probe, params, buffers, xs_in, fakes=fakes)
        with fakes[0] if fakes is not None else contextlib.nullcontext():
            tangents = tangents_of(seen["out"])     # symbolic ones in a symbolic trace
    if within is not None:
        plain = step

        def step(*a):
            with within():
                return plain(*a)
    if fakes is not None:
        gm = _make_fx(step, *fakes[1], tangents, symbolic=True)
        _inline_sizes(gm)
        _drop_whole_slices(gm)
        # the tangents as the call traced has them
        tangents = [torch.zeros([private.hint(d) for d in t.shape], dtype=t.dtype,
                                device=t.device) for t in tangents]
        return Traced(gm, (param_names, buffer_names), inputs, seen.get("out"),
                      seen["grad_of"]), params + buffers + xs_in + tangents
    try:
        gm = _make_fx(step, params, buffers, xs_in, tangents)
    except TraceError as e:
        # A returned value whose backward reads a tensor the forward wrote
        # in place afterwards (side = head(h); h[:, 0] = 0): an ordinary
        # loop whose loss leaves it out never runs that backward
        out = seen.get("out")
        if mode != "tangents" or _WRITTEN_AFTER not in str(e.__cause__):
            raise
        out.unreadable = [i for i in out.diff
                          if _fails(backward_of(i), params, buffers, xs_in)]
        if not out.unreadable:
            raise
        out.diff = [i for i in out.diff if i not in out.unreadable]
        tangents = tangents_of(out)
        gm = _make_fx(step, params, buffers, xs_in, tangents)
    _drop_whole_slices(gm)
    return Traced(gm, (param_names, buffer_names), inputs, seen.get("out"),
                  seen["grad_of"]), params + buffers + xs_in + tangents


_WRITTEN_AFTER = "modified by an inplace operation"


def _fails(f, *args):
    """Whether f, run on fake tensors, fails with autograd's error on a
    saved tensor written in place."""
    try:
        _fake_run(f, *args)
    except TraceError as e:
        return _WRITTEN_AFTER in str(e.__cause__)
    return False

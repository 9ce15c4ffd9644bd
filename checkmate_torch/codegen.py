"""A plan's steps as straight-line Python, generated once per plan.

execute.Executor interprets a plan: for every step it looks values up,
checks that they are resident, decides whether a random op runs for the
first time, which gradients are ready. All of that is fixed when the plan
is made, so Program decides it once, by running the steps symbolically,
and writes two functions whose bodies are the ATen calls themselves:

  forward(X)              X: the placeholders' tensors in order, the
                          tangents left out (as execute.fixed_values takes
                          them); returns (outputs, state)
  backward(state, T, A)   T: the tangents; A[i]: the tensor gradient i is
                          added into (in place) when it is complete, or None;
                          returns the gradients, in the order of a.grads;
                          empties state (a list), whose values it frees

A compute is an assignment (`v12 = f3(v4, v7, k0)`), a free a `del`, a
view read where it is used (as value_of rebuilds it), a random op's first
compute keeps its generator state and its recomputes run from it. What
the executor does besides, the generated code does the same way: the same
clones of what an op writes (functional.py), snapshots of the written
parameters, buffers and inputs and write_back at the end of the forward,
a gradient added into its A[i] as soon as it is complete and released
then (Executor.on_grad's work). The results are the executor's, bit for bit.

A plan the executor would stop on (a value not resident, a gradient never
produced) raises PlanError here, when the plan is made. A backward whose
tangents include ABSENT (outputs the loss does not reach) runs in the
executor instead: resume() makes one from a forward's state.

What differs between languages goes through the methods under "what a
dialect writes its own way": script.py's ScriptProgram writes the same
steps in TorchScript's."""
import math
import operator

import torch

from . import private
from .execute import Executor, PlanError, _device_of, rng_state, set_rng_state
from .functional import clone_strided, functional_op, written_arg, written_op, written_value
from .graph import _FORMULA_CONTIGUOUS, Synthetic, _formula_contiguous, is_random

_aten = torch.ops.aten
_RESHAPES = (_aten.view.default, _aten._reshape_alias.default)


def _formula_call(target, args, kwargs):
    return target(*_formula_contiguous(target, args), **kwargs)


# Views called as Tensor methods: the same ATen op through torch's Python
# bindings, which parse their arguments in about half the time of an
# OpOverload's (1.4 against 0.9 us for t on the CPU). Only for calls
# with positional arguments (expand's `implicit` is no method argument).
_METHODS = {_aten.t.default: torch.Tensor.t, _aten.reshape.default: torch.Tensor.reshape,
            _aten.transpose.int: torch.Tensor.transpose,
            _aten.permute.default: torch.Tensor.permute,
            _aten.expand.default: torch.Tensor.expand,
            _aten.unsqueeze.default: torch.Tensor.unsqueeze,
            _aten.squeeze.dim: torch.Tensor.squeeze, _aten.select.int: torch.Tensor.select,
            _aten.unbind.int: torch.Tensor.unbind,
            _aten.as_strided.default: torch.Tensor.as_strided}


def _identity_source(n):
    """The node whose value view n is, sizes and strides alike, whatever
    its strides at run time: t of t, a transpose of the same transpose,
    a view or reshape to the shape it has. None for any other node."""
    t, src = n.target, n.args[0] if n.args else None
    if not isinstance(src, torch.fx.Node):
        return None
    if t in _RESHAPES or t is _aten.reshape.default:
        a, b = n.meta.get("val"), src.meta.get("val")
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape:
            return src
        return None
    if t is _aten.t.default and src.target is _aten.t.default:
        return src.args[0]
    if t is _aten.transpose.int and src.target is _aten.transpose.int:
        val = src.meta.get("val")
        if isinstance(val, torch.Tensor):
            dims = {d % max(val.dim(), 1) for d in n.args[1:3]}
            if dims == {d % max(val.dim(), 1) for d in src.args[1:3]}:
                return src.args[0]
    return None


def _dense(t):
    """Whether t's elements fill its storage span once each (contiguous
    in some order of its dimensions), so that clone_strided copies its
    layout as it is."""
    expect = 1
    for stride, size in sorted((st, n) for n, st in zip(t.shape, t.stride()) if n != 1):
        if stride != expect:
            return False
        expect *= size
    return True


def _written(r):
    """The fx nodes compute r writes: its written_arg's, or a
    functional_op's mutated arguments."""
    if isinstance(r, Synthetic):
        return []
    if r.target is functional_op:
        return [x for x in (r.args[2 + i] for i in r.args[1]) if isinstance(x, torch.fx.Node)]
    x = written_value(r)
    return [x] if x is not None else []


def _step_reads(a, r):
    """The placeholders whose values as the step began compute r reads
    (through views of them; BatchNorm(momentum=None) reads its count)."""
    if isinstance(r, Synthetic):
        return set()
    out = {p for p in map(a._root, r.all_input_nodes) if p.op == "placeholder"}
    if r in a.cumulative:
        out.add(a.cumulative[r][1])
    return out


def in_place_writes(a, forward_steps, backward_steps):
    """(in_place, snapshot): which writes the generated code makes in place
    and which written placeholders it snapshots.

    in_place maps the index of a compute (in forward_steps +
    backward_steps) to the fx nodes its op may write in place instead of
    a clone, as the ordinary step writes them:
      - a dense value of the plan's, read once by the op and by nothing
        after it, not part of a gradient, and freed next in the same
        function (relu_ on a batch norm's output, dropout's bernoulli_ on
        a fresh tensor); an element of a tuple (a projection) only where
        nothing takes an element from that tuple again afterwards;
      - a parameter, buffer or input the step writes, where the op makes
        its last version and nothing reads its first one afterwards (a
        batch norm's running statistics, num_batches_tracked): the op
        writes the model's tensor, and the write-back at the forward's
        end finds it written.
    snapshot: the written placeholders whose first version something reads
    after the forward (a recompute in the backward, an output): they are
    read from a copy taken when the step starts; the others from the
    tensor itself, which the step writes only once nothing reads it."""
    steps = list(forward_steps) + list(backward_steps)
    boundary = len(forward_steps)
    last_read, snapshot = {}, set()
    for k, (op, r) in enumerate(steps):
        if op == "compute":
            for p in _step_reads(a, r):
                last_read[p] = k
                if k >= boundary:
                    snapshot.add(p)
    for v in a.outputs + a.grads + list(a.final.values()):
        p = a._root(v)
        if p.op == "placeholder":
            snapshot.add(p)
    snapshot &= set(a.final)
    in_grads = {d for g in a.grads for d in a.needs[g]}
    nxt = {}   # node -> ("free" or "read", step index) of its next use
    in_place = {}
    for k in range(len(steps) - 1, -1, -1):
        op, r = steps[k]
        if op == "free":
            nxt[r] = ("free", k)
            continue
        args = list(r.args) + list(r.kwargs.values()) if not isinstance(r, Synthetic) else []
        for x in _written(r):
            if sum(1 for y in args if y is x) != 1:
                continue
            own = x
            if a.kind.get(x) == "real-element" and isinstance(a.needs[x][0], Synthetic):
                own = a.needs[x][0]   # a projection: a name of its own
            elif a.kind.get(x) != "real":
                own = None
            if own is not None:
                fake = a.fake.get(x) if own is x else a.fake[own.base][own.index]
                kind, at = nxt.get(own, ("end", len(steps)))
                # a projection's tuple holds the same tensor: no later
                # projection may be taken from it
                base = nxt.get(getattr(own, "base", None), ("end",))[0]
                ok = own not in in_grads and isinstance(fake, torch.Tensor) and _dense(fake) \
                    and kind == "free" and (k < boundary) == (at < boundary) and base != "read"
            else:
                last = a.final.get(x)
                ok = x.op == "placeholder" and last is not None and x not in snapshot \
                    and k < boundary and last_read.get(x, -1) <= k \
                    and (last is r or last.target is operator.getitem and last.args[0] is r)
            if ok:
                in_place.setdefault(k, set()).add(x)
        for d in a.deps.get(r, ()):
            nxt[d] = ("read", k)
    return in_place, snapshot


class Program:
    """The generated forward and backward of one plan (see the module
    comment)."""

    def __init__(self, analysis, forward_steps, backward_steps):
        self.a = a = analysis
        self.fixed = [n for n in a.nodes if (n.op == "placeholder" and a.role[n] != "tangent")
                      or n.op == "get_attr"]
        self._globals = {"torch": torch, "_rng_state": rng_state,
                         "_set_rng_state": set_rng_state, "_clone": clone_strided,
                         "_formula": _formula_call}
        self._consts = {}
        self._var = {}
        self.read = {d for r in a.real for d in a.deps[r]}
        self.in_place, self.snapshot = in_place_writes(a, forward_steps, backward_steps)
        fwd = self._forward(forward_steps)
        bwd = self._backward(backward_steps, len(forward_steps))
        self.source = fwd + "\n\n" + bwd
        self._build()

    def _build(self):
        code = compile(self.source, "<checkmate plan %x>" % id(self), "exec")
        exec(code, self._globals)
        self.forward = self._globals["forward"]
        self.backward = self._globals["backward"]

    # --- what a dialect writes its own way (script.py: TorchScript's) ------

    _RNG_GET, _RNG_SET = "_rng_state", "_set_rng_state"
    _NONES = "[None] * %d"

    def _element(self, owner, i):
        """Source for element i of the tuple value of node owner."""
        return "%s[%d]" % (self._name(owner), i)

    def _assigned(self, r, out):
        """After the line that computes real node r."""

    def _del(self, name):
        """The lines that free a value's name."""
        return ["del %s" % name]

    def _cumulative(self, count, calls):
        """BatchNorm(momentum=None)'s factor: 1 / (its counter + calls)."""
        return "1.0 / float(%s + %d)" % (count, calls)

    def _op_call(self, target, args, src, kwargs):
        """Source for a call of op target (an OpOverload or a function
        like functional_op) on args (the node's), whose sources are src,
        and kwargs (sources)."""
        if getattr(target, "overloadpacket", None) in _FORMULA_CONTIGUOUS:
            return "_formula(%s, [%s], {%s})" % (
                self._const(target, "f"), ", ".join(src),
                ", ".join("%r: %s" % kv for kv in kwargs.items()))
        # an OpOverload's __call__ is a Python frame around its _op
        fn = _METHODS.get(target) if not kwargs else None
        if fn is None:
            fn = private.op_function(target) if private.is_op(target) else target
        f = self._const(fn, "f")
        return "%s(%s)" % (f, ", ".join(src + ["%s=%s" % kv for kv in kwargs.items()]))

    def _accumulate(self, i, g, out):
        """Adds gradient i (just bound to g) into A[i], or keeps it as
        the returned G[i]."""
        out.append("t = A[%d]" % i)
        out.append("if t is not None:")
        out.append("    t.add_(g)")
        out += ["    " + line for line in self._release(g)]
        out.append("    g = None")
        out.append("G[%d] = g" % i)

    def _write_back(self, pairs, out):
        """Writes each value into its placeholder (pairs: target and
        value sources) at the forward's end."""
        self._emit(out, "with torch.no_grad():")
        out += ["    if {v} is not {t}: {t}.copy_({v})".format(t=t, v=v) for t, v in pairs]

    def _forward_source(self, out, outs, parts):
        """The forward function: body lines out, the outputs' sources,
        parts: the state's names (the resident values, the fixed values,
        the generator states, the early gradients)."""
        out.append("return [%s], [%s]" % (", ".join(outs), ", ".join(
            "(%s)" % "".join("%s, " % x for x in part) for part in parts)))
        return "def forward(X):\n" + "".join("    %s\n" % line for line in out)

    def _backward_source(self, out):
        """The backward function: its prologue unpacks the state."""
        out = ["%s = V" % ("".join("%s, " % self._name(r) for r in self.boundary) or "_"),
               "del V",
               "%s = FS" % ("".join("%s, " % self.fixed_name[n] for n in self.fixed) or "_")] + out
        # the state's references go as the values are unpacked, so that a
        # `del` frees a value as the executor's free does
        return "def backward(state, T, A):\n    V, FS, R, E = state\n    state.clear()\n" + \
            "".join("    %s\n" % line for line in out)

    # --- names ----------------------------------------------------------

    def _name(self, r):
        if r not in self._var:
            self._var[r] = "v%d" % len(self._var)
        return self._var[r]

    def _const(self, value, prefix="k"):
        key = (type(value), id(value))
        if key not in self._consts:
            name = "%s%d" % (prefix, len(self._consts))
            self._consts[key] = name
            self._globals[name] = value
        return self._consts[key]

    def _literal(self, v):
        """Python source for a constant argument."""
        if v is None or isinstance(v, (bool, str)):
            return repr(v)
        if isinstance(v, int):
            return repr(int(v))
        if isinstance(v, float) and math.isfinite(v):
            return repr(v)
        if isinstance(v, (list, tuple)):
            inner = ", ".join(self._arg(x) for x in v)
            if isinstance(v, tuple):
                return "(%s%s)" % (inner, "," if len(v) == 1 else "")
            return "[%s]" % inner
        return self._const(v)

    # --- values ---------------------------------------------------------

    def _arg(self, x):
        if isinstance(x, torch.fx.Node):
            return self._value(x)
        return self._literal(x)

    def _value(self, n):
        """Source for the value of fx node n (Executor.value_of)."""
        a = self.a
        k = a.kind[n]
        if k == "real":
            if n not in self.env:
                raise PlanError("'%s' is needed but not resident" % n.name)
            return self._name(n)
        if k == "real-element":
            owner = a.needs[n][0]
            if owner not in self.env:
                raise PlanError("'%s' is needed but not resident" % owner.name)
            if isinstance(owner, Synthetic):
                return self._name(owner)
            return self._element(owner, n.args[1])
        if n.op == "placeholder" and a.role[n] == "tangent":
            if a.tangents not in self.env:
                raise PlanError("the tangents are needed but not resident")
            return "%s[%d]" % (self._name(a.tangents), self.tangent_index[n])
        if n.op in ("placeholder", "get_attr"):
            return self.fixed_name[n]
        same = _identity_source(n)
        if same is not None:
            return self._value(same)
        # a view: bound to a name once, while what it views is resident
        if n not in self.views:
            src = self._call(n)
            w = self.views[n] = "w%d" % self.n_views
            self.n_views += 1
            self.pre.append("%s = %s" % (w, src))
        return self.views[n]

    def _flush(self, out):
        """Appends the views bound since the last line (self.pre) to out."""
        out.extend(self.pre)
        self.pre.clear()

    def _emit(self, out, line):
        """Appends line to out after the views it reads."""
        self._flush(out)
        out.append(line)

    def _drop_views(self, roots, out):
        """Deletes the bound views of roots' storage (before a free), so
        that the storage goes when the plan frees it."""
        for n, w in list(self.views.items()):
            if any(r in roots for r in self.a.needs[n]):
                out += self._del(w)
                del self.views[n]

    def _call(self, n, replace=None, in_place=()):
        """Source for call(n) (graph.call): the clone of what the op
        writes (but of the nodes in_place: in_place_writes), view as
        reshape, group norm's contiguous arguments."""
        target = n.target
        args = list(n.args)
        if target in _RESHAPES:
            target, args = _aten.reshape.default, args[:2]
        src = [self._arg(x) for x in args]
        for i, v in (replace or {}).items():
            src[i] = v
        if target is functional_op and in_place:
            cloned = tuple(i for i in args[1] if args[2 + i] not in in_place)
            target, src = written_op, src[:2] + [self._literal(cloned)] + src[2:]
        kwargs = {k: self._arg(v) for k, v in n.kwargs.items()}
        w = written_arg(target)
        if w is not None and written_value(n) in in_place:
            w = None
        if isinstance(w, str) and isinstance(n.kwargs.get(w), torch.fx.Node):
            kwargs[w] = "_clone(%s)" % kwargs[w]
        elif isinstance(w, int) and w < len(args) and isinstance(args[w], torch.fx.Node):
            src[w] = "_clone(%s)" % src[w]
        return self._op_call(target, args, src, kwargs)

    # --- steps ----------------------------------------------------------

    def _compute(self, r, out, k):
        a = self.a
        if r in self.env:
            raise PlanError("compute '%s': already resident" % r.name)
        for d in a.deps[r]:
            if d not in self.env:
                raise PlanError("compute '%s': dep '%s' is not resident" % (r.name, d.name))
        v = self._name(r)
        if isinstance(r, Synthetic):
            if r.kind == "projection":
                out.append("%s = %s" % (v, self._element(r.base, r.index)))
            elif r.kind == "tangents":
                if not self.in_backward:
                    raise PlanError("the tangents are computed before the backward")
                out.append("%s = T" % v)
            else:
                out.append("%s = True" % v)  # an rng token
        elif is_random(r):
            dev = self._const(_device_of(a.fake[r]))
            state = "r_" + v
            if r not in self.computed:
                self.rng_kept.append(r)
                out.append("%s = %s(%s)" % (state, self._RNG_GET, dev))
                self._emit(out, "%s = %s" % (v, self._call(r, in_place=self.in_place.get(k, ()))))
            else:
                out.append("_now = %s(%s)" % (self._RNG_GET, dev))
                out.append("%s(%s, R[%d])" % (self._RNG_SET, dev, self.rng_forward.index(r))
                           if self.in_backward and r in self.rng_forward
                           else "%s(%s, %s)" % (self._RNG_SET, dev, state))
                self._emit(out, "%s = %s" % (v, self._call(r, in_place=self.in_place.get(k, ()))))
                out.append("%s(%s, _now)" % (self._RNG_SET, dev))
            self._assigned(r, out)
        else:
            replace = None
            if r in a.cumulative:
                i, count, calls = a.cumulative[r]
                replace = {i: self._cumulative(self.fixed_name[count], calls)}
            self._emit(out, "%s = %s" % (v, self._call(r, replace, self.in_place.get(k, ()))))
            self._assigned(r, out)
        self.env.add(r)
        self.computed.add(r)
        self._grads(a.grads_needing.get(r, ()), out)

    def _free(self, r, out):
        if r not in self.env:
            raise PlanError("free '%s': not resident" % r.name)
        self.env.discard(r)
        self._drop_views({r}, out)
        out += self._del(self._name(r))

    def _grads(self, candidates, out):
        a = self.a
        for i in candidates:
            g = a.grads[i]
            if i in self.collected or not all(d in self.env for d in a.needs[g]):
                continue
            self.collected.add(i)
            if not self.in_backward:
                # complete in the forward, where the executor has no
                # on_grad yet: kept as it is, handed over with the state
                self.early.append(i)
                self._emit(out, "e%d = %s" % (i, self._value(g)))
                continue
            self._emit(out, "g = %s" % self._value(g))
            o = self.a.owner(g)
            self._drop_views({o, getattr(o, "base", None)}, out)
            self._accumulate(i, g, out)

    def _fake(self, r):
        """The traced value of node r (of a projection, its element)."""
        if isinstance(r, Synthetic) and r.kind == "projection":
            return self.a.fake[r.base][r.index]
        return self.a.fake.get(r)

    def _release(self, g):
        """Executor._release: the references to a gradient added into A."""
        o = self.a.owner(g)
        lines = []
        for c in (o, getattr(o, "base", None)):
            if c is None or c not in self.env:
                continue
            v = self._name(c)
            fake = self._fake(c)
            if isinstance(fake, (tuple, list)):
                lines.append("%s = tuple(None if t is g else t for t in %s)" % (v, v))
            elif isinstance(fake, torch.Tensor) and c not in self.read:
                lines.append("if %s is g or %s(g) is %s: %s = None"
                             % (v, self._const(private.base, "f"), v, v))
        return lines or ["pass"]

    def _steps(self, steps, start, out):
        for k, (op, r) in enumerate(steps):
            try:
                if op == "compute":
                    self._compute(r, out, start + k)
                else:
                    self._free(r, out)
            except PlanError as e:
                raise PlanError("step %d: %s" % (start + k, e))

    # --- the two functions ----------------------------------------------

    def _forward(self, steps):
        a = self.a
        self.env, self.computed, self.collected = set(), set(), set()
        self.rng_kept, self.early = [], []
        self.views, self.pre, self.n_views = {}, [], 0
        self.in_backward = False
        self.tangent_index = {p: i for i, p in enumerate(
            [p for p in a.placeholders if a.role[p] == "tangent"])}
        self.fixed_name = {}
        out = []
        j = 0
        for i, n in enumerate(self.fixed):
            self.fixed_name[n] = "F%d" % i
            if n.op == "placeholder":
                out.append("F%d = X[%d]" % (i, j))
                j += 1
            else:
                out.append("F%d = %s" % (i, self._const(getattr(a.traced.gm, n.target))))
        # the placeholders the step writes: read from snapshots where
        # something reads them after the forward (in_place_writes)
        self.targets = {}
        for p in a.final:
            self.targets[p] = self.fixed_name[p]
            if p in self.snapshot:
                self.fixed_name[p] = "S%d" % self.fixed.index(p)
                out.append("%s = %s.clone()" % (self.fixed_name[p], self.targets[p]))
        self._steps(steps, 0, out)
        if a.final:
            # a last version written in place is the tensor itself
            self._write_back([(self.targets[p], self._value(v)) for p, v in a.final.items()], out)
        outs = [self._value(o) for o in a.outputs]
        self._flush(out)
        self.boundary = sorted(self.env, key=lambda r: self._name(r))
        self.forward_computed = set(self.computed)
        self.rng_forward = list(self.rng_kept)
        return self._forward_source(out, outs, (
            [self._name(r) for r in self.boundary], [self.fixed_name[n] for n in self.fixed],
            ["r_%s" % self._name(r) for r in self.rng_kept], ["e%d" % i for i in self.early]))

    def _backward(self, steps, start):
        a = self.a
        self.in_backward = True
        self.views, self.n_views = {}, 0   # the forward's are its locals
        out = ["G = %s" % (self._NONES % len(a.grads))]
        out += ["G[%d] = E[%d]" % (i, k) for k, i in enumerate(self.early)]
        self._steps(steps, start, out)
        missing = [r.name for r in a.real if r not in self.computed]
        if missing:
            raise PlanError("node '%s' is never computed" % missing[0])
        self._grads([i for i, g in enumerate(a.grads) if not a.needs[g]], out)
        if len(self.collected) != len(a.grads):
            raise PlanError("%d of %d gradients were never produced"
                            % (len(a.grads) - len(self.collected), len(a.grads)))
        out.append("return G")
        return self._backward_source(out)

    # --- the executor's way, for a backward with absent tangents ---------

    def resume(self, state):
        """An Executor holding a forward's state (the resident values, the
        fixed values with their snapshots, the generator states), to run
        the backward steps in."""
        values, fixed, rng, early = state
        state.clear()
        ex = Executor(self.a, dict(zip(self.fixed, fixed)), snapshot=False)
        ex.env = dict(zip(self.boundary, values))
        ex.computed = set(self.forward_computed)
        ex.rng_before = dict(zip(self.rng_forward, rng))
        ex.grads = dict(zip(self.early, early))
        return ex

"""A lowered plan (lower.py) written as straight-line Python, once per plan.

Program writes the instructions of lower.Lowered as two functions whose
bodies are the ATen calls themselves:

  forward(X)              X: the placeholders' tensors in order, the
                          tangents left out; returns (outputs, state)
  backward(state, T, A)   T: the tangents; A[i]: the tensor gradient i is
                          added into (in place) when it is complete, or None;
                          returns the gradients, in the order of a.grads;
                          empties state (a list), whose values it frees

Each instruction is one line or a few (a call `v12 = f3(v4, v7, k0)`, a
free a `del`); every decision was made when the plan was lowered, so the
results are the interpreter's (execute.Interpreter) bit for bit. A plan
the lowering refuses (a value not resident, a gradient never produced)
raises PlanError when the program is made. A backward whose tangents are
partly absent runs the lowered backward for them in the interpreter, from
this program's state (unpack).

What differs between languages goes through the methods under "what a
dialect writes its own way": script.py's ScriptProgram writes the same
instructions in TorchScript's."""
import copy
import math

import torch

from . import offload, private, sizes
from .execute import rng_state, set_rng_state
from .functional import clone_strided
from .graph import _FORMULA_CONTIGUOUS, _formula_contiguous
from .lower import Clone, Elem, Factor, Lowered, Reg, Zeros

_aten = torch.ops.aten


def _formula_call(target, args, kwargs):
    return target(*_formula_contiguous(target, args), **kwargs)


# Views called as Tensor methods: the same ATen op through torch's Python
# bindings, which parse their arguments in about half the time of an
# OpOverload's. Only for calls with positional arguments (expand's
# `implicit` is no method argument).
_METHODS = {_aten.t.default: torch.Tensor.t, _aten.reshape.default: torch.Tensor.reshape,
            _aten.transpose.int: torch.Tensor.transpose,
            _aten.permute.default: torch.Tensor.permute,
            _aten.expand.default: torch.Tensor.expand,
            _aten.unsqueeze.default: torch.Tensor.unsqueeze,
            _aten.squeeze.dim: torch.Tensor.squeeze, _aten.select.int: torch.Tensor.select,
            _aten.unbind.int: torch.Tensor.unbind,
            _aten.as_strided.default: torch.Tensor.as_strided}


class Program:
    """The generated forward and backward of one plan (see the module
    comment)."""

    def __init__(self, analysis, forward_steps, backward_steps, lowered=None):
        self.a = analysis
        self.lowered = lw = lowered or Lowered(analysis, forward_steps, backward_steps)
        self.in_place, self.snapshot = lw.in_place, lw.snapshot
        self._globals = {"torch": torch, "_rng_state": rng_state,
                         "_set_rng_state": set_rng_state, "_clone": clone_strided,
                         "_formula": _formula_call, "_to_host": offload.to_host,
                         "_to_device": offload.to_device, "_wait": offload.wait}
        self._consts = {}
        self._sizes = {}    # a symbolic size's expression -> its name
        self.binding = None
        self.pre = []
        fwd = self._forward_source(self._lines(lw.forward), [self._src(o) for o in lw.outputs])
        bwd = self._backward_source(self._lines(lw.backward()))
        self.source = fwd + "\n\n" + bwd
        self._build()

    def _build(self):
        self._code = compile(self.source, "<checkmate plan %x>" % id(self), "exec")
        exec(self._code, self._globals)
        self.forward = self._globals["forward"]
        self.backward = self._globals["backward"]

    def at(self, binding):
        """This program at other sizes of a symbolic trace (binding:
        {symbol: size}, sizes.py): a copy whose functions read those
        sizes, its code compiled once."""
        out = copy.copy(self)
        out._globals = dict(self._globals)
        out._globals.update(sizes.at({n: e for e, n in self._sizes.items()}, binding))
        out.binding = binding
        exec(self._code, out._globals)
        out.forward, out.backward = out._globals["forward"], out._globals["backward"]
        return out

    def backward_absent(self, state, T, A, absent):
        """backward with the tangents at the indices absent absent (their
        entries not read), where this program has it compiled; else None,
        state untouched (execute.Interpreter runs it: train._Step)."""
        return None

    def unpack(self, state):
        """A forward's state as execute.Interpreter.backward takes it: the
        values of each of the lowered plan's parts (the state itself)."""
        return state

    # --- what a dialect writes its own way (script.py: TorchScript's) ------

    _RNG_GET, _RNG_SET = "_rng_state", "_set_rng_state"
    _NONES = "[None] * %d"

    def _element(self, name, i):
        """Source for element i of tuple register name."""
        return "%s[%d]" % (name, i)

    def _after(self, ins, out):
        """After the lines of instruction ins."""

    def _del(self, names):
        """The lines that free registers."""
        return ["del %s" % ", ".join(names)]

    def _factor(self, x):
        """BatchNorm(momentum=None)'s factor: 1 / (its counter + calls)."""
        return "1.0 / float(%s + %d)" % (x.name, x.calls)

    def _op_call(self, target, args, src, kwargs):
        """Source for a call of op target (an OpOverload or a function
        like functional_op) on args (the instruction's), whose sources are
        src, and kwargs (sources)."""
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

    def _grad(self, ins, out):
        """Gradient ins.index is complete: added into A[i] and released, or
        kept as G[i]."""
        out.append("g = %s" % self._src(ins.src))
        if ins.drop:
            out += self._del(ins.drop)
        out.append("t = A[%d]" % ins.index)
        out.append("if t is not None:")
        out.append("    t.add_(g)")
        for name, how in ins.release:
            if how == "tuple":
                out.append("    %s = tuple(None if t is g else t for t in %s)" % (name, name))
            else:
                out.append("    if {v} is g or {b}(g) is {v}: {v} = None".format(
                    v=name, b=self._const(private.base, "f")))
        out.append("    g = None")
        out.append("G[%d] = g" % ins.index)

    def _write_back(self, pairs, out):
        """Writes each value into its placeholder (pairs: target and
        value sources) at the forward's end."""
        out.append("with torch.no_grad():")
        out += ["    if {v} is not {t}: {t}.copy_({v})".format(t=t, v=v) for t, v in pairs]

    def _forward_source(self, out, outs):
        """The forward function: body lines out, the outputs' sources; it
        hands over the lowered plan's parts."""
        out.append("return [%s], [%s]" % (", ".join(outs), ", ".join(
            "[%s]" % ", ".join(part) for part in self.lowered.parts)))
        return "def forward(X):\n" + "".join("    %s\n" % line for line in out)

    def _backward_source(self, out):
        """The backward function: its prologue unpacks the state."""
        pro = ["V, FS, R, E = state", "state.clear()"]
        for var, part in zip(("V", "FS", "R", "E"), self.lowered.parts):
            if part:
                pro.append("%s, = %s" % (", ".join(part), var))
        pro.append("del V, FS, R, E")
        pro.append("G = %s" % (self._NONES % len(self.a.grads)))
        out = pro + out + ["return G"]
        # the state's references go as the values are unpacked, so that a
        # `del` frees a value when the plan frees it
        return "def backward(state, T, A):\n" + "".join("    %s\n" % line for line in out)

    # --- operands -------------------------------------------------------

    def _const(self, value, prefix="k"):
        key = (type(value), id(value))
        if key not in self._consts:
            name = "%s%d" % (prefix, len(self._consts))
            self._consts[key] = name
            self._globals[name] = value
        return self._consts[key]

    def _src(self, x):
        """Python source for operand x."""
        t = type(x)
        if t is Reg:
            return x.name
        if t is Elem:
            return self._element(x.name, x.index)
        if t is Clone:
            return self._clone(self._src(x.arg))
        if t is Factor:
            return self._factor(x)
        if t is Zeros:
            return "torch.zeros(%s, dtype=%s, device=%s)" % (
                self._src(tuple(x.shape)), self._const(x.dtype), self._const(x.device))
        if private.is_sym(x):
            return self._size(x)
        if x is None or isinstance(x, (bool, str)):
            return repr(x)
        if isinstance(x, int):
            return repr(int(x))
        if isinstance(x, float) and math.isfinite(x):
            return repr(x)
        if isinstance(x, (list, tuple)):
            inner = ", ".join(self._src(y) for y in x)
            if isinstance(x, tuple):
                return "(%s%s)" % (inner, "," if len(x) == 1 else "")
            return "[%s]" % inner
        return self._const(x)

    def _size(self, x):
        """A symbolic size: a name per expression (_size_name), its value
        at the traced call's sizes (at(): at others)."""
        e = private.sym_expr(x)
        if e not in self._sizes:
            self._sizes[e] = self._size_name(len(self._sizes), private.hint(x))
        return self._sizes[e]

    def _size_name(self, k, value):
        """The name of the k-th symbolic size, whose value is value: a
        global."""
        name = "z%d" % k
        self._globals[name] = value
        return name

    def _clone(self, src):
        return "_clone(%s)" % src

    def _call(self, ins):
        """Source for a call instruction's right-hand side."""
        src = [self._src(x) for x in ins.args]
        kwargs = {k: self._src(v) for k, v in ins.kwargs.items()}
        return self._op_call(ins.target, ins.args, src, kwargs)

    # --- instructions ---------------------------------------------------

    def _lines(self, body):
        out = []
        for ins in body:
            k = ins.kind
            if k == "call":
                rhs = self._call(ins)
                out.extend(self.pre)
                self.pre.clear()
                out.append("%s = %s" % (ins.dst, rhs))
            elif k == "bind":
                out.append("%s = %s" % (ins.dst, self._src(ins.src)))
            elif k == "free":
                out += self._del(ins.names)
            elif k == "grad":
                if ins.src is not None:
                    self._grad(ins, out)
            elif k == "keep":
                out.append("G[%d] = %s" % (ins.index, self._src(ins.src)))
            elif k == "load":
                out.append("%s = X[%d]" % (ins.dst, ins.index))
            elif k == "const":
                out.append("%s = %s" % (ins.dst, self._const(ins.value)))
            elif k == "snapshot":
                out.append("%s = %s.clone()" % (ins.dst, ins.src))
            elif k == "tangents":
                out.append("%s = T" % ins.dst)
            elif k == "rng_get":
                out.append("%s = %s(%s)" % (ins.dst, self._RNG_GET, self._const(ins.device)))
            elif k == "rng_set":
                out.append("%s(%s, %s)" % (self._RNG_SET, self._const(ins.device),
                                           self._src(ins.src)))
            elif k == "offload":
                out.append("%s, %s = _to_host(%s)" % (ins.dst, ins.event, self._src(ins.src)))
            elif k == "fetch":
                out.append("%s, %s = _to_device(%s, %s)" % (ins.dst, ins.event, self._src(ins.src),
                                                            self._const(ins.device)))
            elif k == "wait":
                out.append("_wait(%s)" % ins.event)
            elif k == "write_back":
                pairs = [(t, self._src(v)) for t, v in ins.pairs]
                out.extend(self.pre)
                self.pre.clear()
                self._write_back(pairs, out)
            elif k != "mark":
                raise ValueError("unknown instruction %r" % (ins,))
            self._after(ins, out)
        return out

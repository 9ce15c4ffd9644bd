"""A step traced with symbolic sizes (trace.trace's dynamic=), run at
other sizes than the call it was traced at.

The trace's sizes are sympy expressions in torch's symbols, one symbol
per dynamic dimension of an input (a sequence length, a batch). The
trace, the analysis, the lowering and the code generator take every
decision on sizes through those expressions, and torch's shape
environment keeps each decision as a guard (s0 < 40 for a branch on the
length; s0 >= 2 always: sizes 0 and 1 are traced apart); a size the
step specialised is an int again. A call binds each symbol to its
input's size; the plan serves it where every other size and stride of
its inputs is the trace's at that binding, every guard holds, and its
steps, replayed with each node's bytes at that binding, fit the budget
(train.Compiled.sized_at).
"""
import fractions
import functools

from . import private


class NotSymbolic(Exception):
    """A symbolic trace that serves no other sizes: the step is traced at
    the call's sizes instead."""


def value_at(x, binding):
    """A number of the trace (an int, or a symbolic size) at binding
    ({symbol: int}); at the traced call's sizes where binding is None."""
    if not private.is_sym(x):
        return x
    if binding is None:
        return private.hint(x)
    return _evaluate(private.sym_expr(x), binding)


def _evaluate(expr, binding):
    return _evaluator(expr).values(binding)[0]


@functools.lru_cache(maxsize=1 << 16)
def _evaluator(expr):
    """The Table of one expression (an int, or a symbolic size's)."""
    return Table({0: expr})


def _number(v):
    """A sympy number as a Python one: an int, a Fraction or a float."""
    if v.is_Integer:
        return int(v)
    if v.is_Rational:
        return fractions.Fraction(int(v.p), int(v.q))
    return float(v)


def _expr(x):
    return private.sym_expr(x) if private.is_sym(x) else x


def at(values, binding):
    """{key: int} of {key: sympy expression}, at binding."""
    return {k: _evaluate(e, binding) for k, e in values.items()}


class Table:
    """A dict of expressions {key: sympy expression or int} evaluated at
    many bindings ({symbol: int}): every node's bytes and cost at each new
    size (train.Compiled.sized_at), a size an op reads (value_at). One
    generated Python function computes each distinct expression once:
    sums, products and whole powers of integers, fractions and symbols in
    exact arithmetic, a float coefficient (a priced cost) in floats, any
    other function (torch's FloorDiv, Max, ...) by sympy; each value
    truncated to an int. A few microseconds a node where sympy takes a
    millisecond."""

    def __init__(self, values):
        self.keys = list(values)
        exprs, self.index = {}, []
        for k in self.keys:
            self.index.append(exprs.setdefault(values[k], len(exprs)))
        self.env = {"_Fraction": fractions.Fraction}
        self.symbols = {}
        body = "".join("int(%s), " % self._source(e) for e in exprs)
        code = "def table(b):\n    %s\n    return (%s)\n" % (
            "; ".join("%s = b[_s%d]" % (n, i) for i, n in enumerate(self.symbols.values()))
            or "pass", body)
        for i, sym in enumerate(self.symbols):
            self.env["_s%d" % i] = sym
        exec(compile(code, "<checkmate sizes>", "exec"), self.env)
        self._table = self.env["table"]

    def _source(self, e):
        if isinstance(e, (int, float)):
            return repr(e)
        if e.is_Integer:
            return repr(int(e))
        if e.is_Rational:
            return "_Fraction(%d, %d)" % (int(e.p), int(e.q))
        if e.is_Float:
            return repr(float(e))
        if e.is_Symbol:
            return self.symbols.setdefault(e, "v%d" % len(self.symbols))
        if e.is_Add or e.is_Mul:
            return "(%s)" % (" + " if e.is_Add else " * ").join(map(self._source, e.args))
        if e.is_Pow and e.exp.is_Integer and e.exp >= 0:
            return "(%s ** %d)" % (self._source(e.base), int(e.exp))
        name = "_o%d" % len(self.env)
        self.env[name] = lambda b: _number(e.xreplace(b))
        for sym in e.free_symbols:      # bound before the call (a KeyError: unbound)
            self._source(sym)
        return "%s(b)" % name

    def values(self, binding):
        """The distinct expressions' values at binding, in first-seen
        order; ValueError where a symbol is not bound."""
        try:
            return self._table(binding)
        except KeyError as e:
            raise ValueError("the size %s is not bound by the call" % e) from None

    def at(self, binding):
        """{key: int} at binding; ValueError where a symbol is not bound."""
        values = self.values(binding)
        return dict(zip(self.keys, (values[i] for i in self.index)))


class Symbols:
    """The sizes a symbolic trace assumed of its inputs: for each
    dimension of each placed input, (its index among them, the dimension,
    its size: an int where the trace held it static or specialised it,
    else an expression in torch's symbols), and the guards its shape
    environment holds (read after the plan is lowered: the lowering's
    decisions are guards too)."""

    def __init__(self, input_fakes):
        self.dims = []      # (input, dimension, its size: an int or an expression)
        self.strides = []   # (input, dimension, its stride: the same)
        self.ndims = []
        self.env = None
        self._sizes = {}    # symbol -> a symbolic size that is it
        for i, t in enumerate(input_fakes):
            self.ndims.append(t.dim())
            for d, (n, st) in enumerate(zip(t.shape, t.stride())):
                if private.is_sym(n):
                    self.env = private.shape_env(n)
                    if private.sym_expr(n).is_Symbol:
                        self._sizes.setdefault(private.sym_expr(n), n)
                self.dims.append((i, d, _expr(n)))
                self.strides.append((i, d, _expr(st)))
        self.guards = []

    def __bool__(self):
        return self.env is not None

    def binding_at_trace(self):
        """{symbol: size} of the call traced."""
        return {e: private.hint(n) for e, n in self._sizes.items()}

    def seal(self):
        """Reads the guards: every decision taken so far."""
        self.guards = private.guards(self.env) if self.env is not None else []

    def binding(self, placed):
        """{symbol: size} for a call's placed inputs, or None where the
        trace does not serve their sizes (a guard fails, or a dimension's
        expression is not the input's size)."""
        if [t.dim() for t in placed] != self.ndims:
            return None
        try:
            return self._binding(placed)
        except ValueError:      # an expression of symbols no input binds
            return None

    def _binding(self, placed):
        binding = {}
        for i, d, e in self.dims:
            if getattr(e, "is_Symbol", False):
                if binding.setdefault(e, placed[i].shape[d]) != placed[i].shape[d]:
                    return None
        # every other size and stride, static ones included, is what the
        # trace assumed
        for i, d, e in self.dims:
            if _evaluate(e, binding) != placed[i].shape[d]:
                return None
        for i, d, e in self.strides:
            if _evaluate(e, binding) != placed[i].stride(d):
                return None
        for g in self.guards:
            try:
                holds = bool(g.xreplace(binding))
            except TypeError:   # not decided at the binding
                raise ValueError(g) from None
            if not holds:
                return None
        return binding

"""A plan's generated code run by TorchScript's interpreter.

codegen.Program writes a lowered plan's instructions (lower.py) as
Python, where each ATen op is a Python call. ScriptProgram writes the
same instructions in TorchScript's language and compiles them
(torch.jit.CompilationUnit); its interpreter calls each op from C++, with
less host time a call (docs/benchmarks.md, "The eager path's host
time"). The same ops on the same arguments in the same order give
the same results bit for bit, provided three things, which are checked
or made so here:

  - Each call resolves to the overload the trace recorded. TorchScript's
    language names an op without its overload (torch.ops.aten.mul) and
    picks the overload by the arguments' types, so the compiled graphs'
    ops are counted against the plan's before the program is used. A
    Python number where add, sub, mul or div (and their in-place forms)
    take a Tensor resolves to their Scalar overload, which ATen
    implements as the Tensor one on the number wrapped, as the Python
    binding wraps it: that is expected, nothing else is.
  - Every op runs. The compiler and the interpreter's pipeline (with the
    optimizer off, as every call here runs it: no fusion, no profiling)
    drop ops whose results nothing reads, random ones included, whose
    draws would then be missing. So each such result is read once, by an
    append to the state list and a pop; the count above is taken on the
    graphs after that pipeline (inlining, RemoveExpands, CanonicalizeOps,
    dead code elimination: runNooptPassPipeline in torch/csrc/jit).
  - Generator states are saved and restored by two ops of ours,
    checkmate::rng_state and checkmate::set_rng_state, whose kernels are
    execute.rng_state and set_rng_state.

The interpreter frees a value after its last read, not at a `del`: at or
before the plan's free. A tuple result is taken apart at once, so that
each element lives as long as something reads it. The state handed from
the forward to the backward is a torch.ScriptList, passed by reference:
the backward empties it, and its registers then hold the only references.

Anything else (a constant the language cannot write, an op that resolves
to another overload, a value of a type the state cannot hold) raises
ScriptError, and the plan runs as Python (train.py)."""
import collections
import copy
import math
import operator

import torch

from . import private, sizes
from .codegen import Program
from .execute import rng_state, set_rng_state
from .functional import functional_op, write_through, written_op
from .graph import _FORMULA_CONTIGUOUS, Synthetic
from .lower import Clone, Elem, Factor, Lowered, Reg, Zeros


class ScriptError(Exception):
    pass


_HELPERS = '''
def _clone(t: Tensor) -> Tensor:
    if t.is_contiguous():
        return t.clone()
    for i in range(t.dim()):
        if t.size(i) > 1 and t.stride(i) == 0:
            return t.clone()
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device).copy_(t)


def _contiguous(t: Tensor, like: Tensor) -> Tensor:
    if like.dim() == 4 and like.is_contiguous(memory_format=torch.channels_last) \\
            and not like.is_contiguous():
        return t.contiguous(memory_format=torch.channels_last)
    return t.contiguous()
'''

# ATen ops whose Scalar overloads are their Tensor ones on the number
# wrapped (the out= ones: the Scalar op, then a copy into out), which a
# Python number resolves to in TorchScript
_WRAPPED = {"add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_"}
_WRAPPED_AS = {"Tensor": "Scalar", "Tensor_mode": "Scalar_mode", "out": "Scalar_out",
               "out_mode": "Scalar_mode_out"}

_LIBRARY = []


def _register_ops():
    """checkmate::rng_state(Device) and set_rng_state(Device, Tensor), once
    a process (by whichever copy of this package comes first)."""
    try:
        torch.ops.checkmate.rng_state
        return
    except (AttributeError, RuntimeError):
        pass
    lib = torch.library.Library("checkmate", "FRAGMENT")
    # CONSERVATIVE: TorchScript may neither drop nor move them
    lib.define("rng_state(Device device) -> Tensor", alias_analysis="CONSERVATIVE")
    lib.define("set_rng_state(Device device, Tensor state) -> ()",
               alias_analysis="CONSERVATIVE")
    lib.impl("rng_state", rng_state, "CompositeExplicitAutograd")
    lib.impl("set_rng_state", set_rng_state, "CompositeExplicitAutograd")
    _LIBRARY.append(lib)


def _schema_name(schema):
    return str(schema).split("(")[0]


def _ops_run(graph):
    """The ops that TorchScript's interpreter runs for graph (with the
    optimizer off: its runNooptPassPipeline), by schema name."""
    g = graph.copy()
    private.jit_ops_pipeline(g)
    return _ops_of(g)


def _ops_of(g):
    """The ops of graph g by schema name: only those with a Tensor in
    their schema (the others are list, number and identity operations)."""
    count = collections.Counter()

    def walk(block):
        for n in block.nodes():
            for b in n.blocks():
                walk(b)
            if n.kind() == "prim::CallFunction":
                # a helper not inlined (torch 2.13 runs it by itself)
                name = n.inputsAt(0).node().s("name")
                count.update(_helper_ops(name) if name in ("_clone", "_contiguous")
                             else {"call " + name: 1})
                continue
            if n.kind().startswith("prim::"):
                continue
            s = n.schema()
            if s == "(no schema)":
                count[n.kind()] += 1   # never expected: a mismatch
            elif "Tensor" in s:
                # TorchScript's twins of the ops taking Tensor?[] call them
                count[_schema_name(s).replace("_hacked_twin", "").replace(".hacked_twin", "")] += 1
    walk(g.block())
    return count


_HELPER_OPS = {}


def _helper_ops(name):
    """The ops one call of helper `name` adds (_ops_run of its body)."""
    if not _HELPER_OPS:
        cu = torch.jit.CompilationUnit(_HELPERS)
        for h in ("_clone", "_contiguous"):
            _HELPER_OPS[h] = _ops_run(getattr(cu, h).graph)
    return _HELPER_OPS[name]


def _unread(body, live_out):
    """The call, snapshot and rng_get instructions of body (by id) whose
    results nothing reads: neither a later instruction nor live_out (the
    operands the function hands over). Reads are followed per element of
    a tuple register; a functional op's results are its tuple's first
    elements (the rest are the clones it wrote), and a bind reads its
    source only where its own register is read."""
    live = {}   # register -> True (read whole) or the elements read

    def note(x):
        if isinstance(x, Elem):
            got = live.setdefault(x.name, set())
            if got is not True:
                got.add(x.index)
        elif isinstance(x, (Reg, Factor)):
            live[x.name] = True
        elif isinstance(x, Clone):
            note(x.arg)
        elif isinstance(x, (list, tuple)):
            for y in x:
                note(y)
        elif isinstance(x, dict):
            for y in x.values():
                note(y)

    for x in live_out:
        note(x)
    unread = set()
    for ins in reversed(body):
        k = ins.kind
        if k in ("call", "snapshot", "rng_get"):
            got = live.pop(ins.dst, None)
            if k == "call" and ins.target in (functional_op, written_op):
                n = len(private.schema(ins.args[0]).returns)
                read = got is True or any(i < n for i in got or ())
            else:
                read = bool(got)
            if not read:
                unread.add(id(ins))
            if k == "call":
                note(ins.args)
                note(ins.kwargs)
            elif k == "snapshot":
                note(Reg(ins.src))
        elif k == "bind":
            if live.pop(ins.dst, None):
                note(ins.src)
        elif k in ("load", "const", "tangents"):
            live.pop(ins.dst, None)
        elif k in ("rng_set", "keep", "grad"):
            note(ins.src)
        elif k == "write_back":
            for t, v in ins.pairs:
                note(Reg(t))
                note(v)
    return unread


def _difference(got, expected):
    """The first op counted differently, as 'name (got, expected)', or
    None."""
    diff = sorted(k for k in set(got) | set(expected) if got[k] != expected[k])
    return "%s (%d, %d expected)" % (diff[0], got[diff[0]], expected[diff[0]]) if diff else None


class _NoOptimizer:
    """TorchScript's optimizer off in this thread (its setting is per
    thread: autograd runs a CUDA backward in a thread of its own)."""

    def __enter__(self):
        self.old = private.jit_optimize(False)

    def __exit__(self, *exc):
        private.jit_optimize(self.old)


class ScriptProgram(Program):
    """codegen.Program's forward and backward, compiled by TorchScript
    (see the module comment); the same interface."""

    _RNG_GET, _RNG_SET = "torch.ops.checkmate.rng_state", "torch.ops.checkmate.set_rng_state"
    _NONES = "torch.jit.annotate(List[Optional[Tensor]], [None]) * %d"
    _SINKS = True   # False: no result read once (t_codegen shows the check refuses it)

    def __init__(self, analysis, forward_steps, backward_steps, lowered=None):
        _register_ops()
        lowered = lowered or Lowered(analysis, forward_steps, backward_steps)
        if lowered.copies:
            raise ScriptError("a plan with copies to host memory runs as Python (offload.py)")
        lowered.backward()   # every register named: the tuples known
        self.expected = collections.Counter()
        self.helpers = collections.Counter()
        self.tuples = dict(lowered.tuples)   # tuple register -> its length
        self.n_tmp = 0
        self.n_kept = 0       # the op results read once (_after)
        self.result = None    # the op result of the call rendered last
        self.K = []
        self.Z = []     # a symbolic trace's sizes (codegen's _size), at the traced call's
        self.base = self    # the program at() copies are made from
        super().__init__(analysis, forward_steps, backward_steps, lowered)

    # --- the language's ways ----------------------------------------------

    def _const(self, value, prefix="k"):
        if isinstance(value, torch.device):
            return 'torch.device("%s")' % value
        if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
            return repr(value)
        if isinstance(value, float) and not math.isfinite(value):
            return 'float("%s")' % value
        if isinstance(value, torch.Tensor):
            key = (torch.Tensor, id(value))
            if key not in self._consts:
                self._consts[key] = "K[%d]" % len(self.K)
                self.K.append(value)
            return self._consts[key]
        raise ScriptError("a constant of type %s" % type(value).__name__)

    def _src(self, x):
        if isinstance(x, Zeros):
            raise ScriptError("zeros for an absent gradient")
        return super()._src(x)

    def _size_name(self, k, value):
        # an element of the functions' argument Z
        self.Z.append(value)
        return "Z[%d]" % k

    def at(self, binding):
        out = copy.copy(self)
        out.Z = list(sizes.at(dict(enumerate(self._sizes)), binding).values())
        out.binding = binding
        # one set for every size: the functions TorchScript runs take the
        # sizes as an argument, so the graph checked at one size is the
        # graph at all
        out.unchecked = self.unchecked
        return out

    def _tmp(self):
        self.n_tmp += 1
        return "c%d" % (self.n_tmp - 1)

    def _element(self, name, i):
        # a tuple's elements are registers of their own (T is a list)
        return "%s_%d" % (name, i) if name in self.tuples else "%s[%d]" % (name, i)

    def _lines(self, body):
        live_out = ()
        if body is self.lowered.forward:
            live_out = [Reg(n) for part in self.lowered.parts for n in part] + \
                list(self.lowered.outputs)
        self.unread = _unread(body, live_out) if self._SINKS else set()
        for ins in body:
            if ins.kind == "snapshot":
                self.expected["aten::clone"] += 1
            elif ins.kind == "rng_get":
                self.expected["checkmate::rng_state"] += 1
            elif ins.kind == "rng_set":
                self.expected["checkmate::set_rng_state"] += 1
        return super()._lines(body)

    def _after(self, ins, out):
        v = ins.dst
        if ins.kind in ("call", "bind") and v in self.tuples:
            out += ["%s_%d = %s[%d]" % (v, i, v, i) for i in range(self.tuples[v])]
        if id(ins) in self.unread:
            # read once, so that TorchScript keeps the op
            result = self.result if ins.kind == "call" and self.result else v
            if result in self.tuples:
                result += "[0]"
            out += ["state.append(%s)" % result, "state.pop()"]
            self.n_kept += 1
        self.result = None

    def _del(self, names):
        return []

    def _factor(self, x):
        self.expected["aten::add.Scalar"] += 1
        self.expected["aten::Float.Tensor"] += 1
        return super()._factor(x)

    def _clone(self, src):
        self.helpers["_clone"] += 1
        return "_clone(%s)" % src

    def _aten(self, op, args, src, kwargs):
        """A call of OpOverload op, counted in the ops expected."""
        if not private.is_op(op):
            raise ScriptError("a call of %r" % (op,))
        schema, overload = private.schema(op), private.overload_name(op)
        name = _schema_name(schema)
        ns, packet = schema.name.split("::")
        if packet in _WRAPPED and overload in _WRAPPED_AS and \
                len(args) > 1 and isinstance(args[1], (int, float)):
            name = "%s.%s" % (schema.name, _WRAPPED_AS[overload])
        self.expected[name] += 1
        return "torch.ops.%s.%s(%s)" % (ns, packet, ", ".join(
            list(src) + ["%s=%s" % kv for kv in kwargs.items()]))

    def _op_call(self, target, args, src, kwargs):
        if target is operator.getitem:
            if src[0] in self.tuples and isinstance(args[1], int):
                return "%s_%d" % (src[0], args[1])
            return "%s[%s]" % (src[0], src[1])
        src = list(src)
        idx = _FORMULA_CONTIGUOUS.get(getattr(target, "overloadpacket", None), ())
        like = src[idx[-1]] if idx else None
        for i in idx:
            src[i] = "_contiguous(%s, %s)" % (src[i], like)
            self.helpers["_contiguous"] += 1
        return self._aten(target, args, src, kwargs)

    def _call(self, ins):
        if ins.target is functional_op or ins.target is written_op:
            return self._functional(ins)
        if ins.target is write_through:
            return self._write_through(*ins.args)
        return super()._call(ins)

    def _functional(self, ins):
        """functional_op(op, mutated, *args) or written_op(op, mutated,
        cloned, *args) (functional.py): the clones, the op, and the tuple
        of its results and the mutated."""
        op, mutated = ins.args[0], ins.args[1]
        if ins.target is written_op:
            cloned, args = ins.args[2], ins.args[3:]
        else:
            cloned, args = mutated, ins.args[2:]
        src = [self._src(x) for x in args]
        for i in mutated:
            if i in cloned:
                c = self._tmp()
                self.pre.append("%s = %s.clone()" % (c, src[i]))
                self.expected["aten::clone"] += 1
                src[i] = c
        kwargs = {k: self._src(v) for k, v in ins.kwargs.items()}
        returns = private.is_op(op) and private.schema(op).returns
        if not returns or any(str(r.type) != "Tensor" for r in returns):
            raise ScriptError("%s returns no tensors" % (op,))
        t = self.result = self._tmp()
        self.pre.append("%s = %s" % (t, self._op_call(op, args, src, kwargs)))
        if len(returns) == 1:
            outs = [t]
        else:
            self.tuples[t] = len(returns)
            outs = ["%s[%d]" % (t, j) for j in range(len(returns))]
        return "(%s)" % ", ".join(outs + [src[i] for i in mutated])

    def _write_through(self, whole, part, chain):
        """functional.write_through: a clone of whole whose view chain
        holds part's values."""
        out = self._tmp()
        self.pre.append("%s = %s" % (out, self._clone(self._src(whole))))
        v = out
        for op, rest in chain:
            w = self._tmp()
            self.pre.append("%s = %s" % (w, self._aten(op, (None,) + tuple(rest), [v] + [
                self._src(x) for x in rest], {})))
            v = w
        self.pre.append("%s.copy_(%s)" % (v, self._src(part)))
        self.expected["aten::copy_"] += 1
        # read once: TorchScript drops the write into a detach's result
        self.pre += ["state.append(%s)" % v, "state.pop()"]
        return out

    def _grad(self, ins, out):
        self.expected["aten::add_.Tensor"] += 1
        i = ins.index
        out += ["g = %s" % self._src(ins.src), "t = A[%d]" % i, "if t is not None:",
                "    t.add_(g)", "else:", "    G[%d] = g" % i]

    def _write_back(self, pairs, out):
        out.append("with torch.no_grad():")
        for t, v in pairs:
            self.expected["aten::copy_"] += 1
            out += ["    if %s is not %s:" % (v, t), "        %s.copy_(%s)" % (t, v)]

    # --- the state between the two functions -------------------------------

    def _resident(self):
        """The names of the resident values the forward hands over (a
        tuple's elements, no rng token), and their layout: per value, the
        number of its elements, None for a tensor, 0 for an rng token."""
        names, layout = [], []
        for r, v in zip(self.lowered.boundary, self.lowered.parts[0]):
            if isinstance(r, Synthetic) and r.kind == "rng":
                layout.append(0)
            elif v in self.tuples:
                names += ["%s_%d" % (v, i) for i in range(self.tuples[v])]
                layout.append(self.tuples[v])
            elif not isinstance(self.lowered._fake(r), torch.Tensor):
                raise ScriptError("'%s' is kept for the backward and is no tensor" % r.name)
            else:
                names.append(v)
                layout.append(None)
        return names, layout

    def _forward_source(self, out, outs):
        for o in self.a.outputs:
            if not isinstance(self.a.fake.get(o, o.meta.get("val")), torch.Tensor):
                raise ScriptError("output '%s' is no tensor" % o.name)
        resident, self.layout = self._resident()
        self.handed = resident + [x for part in self.lowered.parts[1:] for x in part]
        if self.handed:
            out.append("state.extend([%s])" % ", ".join(self.handed))
        out.append("return [%s]" % ", ".join(outs))
        return ("def forward(X: List[Tensor], K: List[Tensor], Z: List[int], "
                "state: List[Tensor]) -> List[Tensor]:\n") + \
            "".join("    %s\n" % line for line in out)

    def _backward_source(self, out):
        pro = ["%s = state[%d]" % (v, k) for k, v in enumerate(self.handed)]
        pro += ["state.clear()", "G = %s" % (self._NONES % len(self.a.grads))]
        return ("def backward(state: List[Tensor], K: List[Tensor], Z: List[int], "
                "T: List[Tensor], A: List[Optional[Tensor]]) -> List[Optional[Tensor]]:\n") + \
            "".join("    %s\n" % line for line in pro + out + ["return G"])

    # --- compiling and checking --------------------------------------------

    def _build(self):
        self.source = _HELPERS + "\n" + self.source
        try:
            cu = torch.jit.CompilationUnit(self.source)
        except Exception as e:   # the language or the types
            raise ScriptError("TorchScript: %s" % str(e).strip().split("\n")[0]) from None
        self.ops = {f: _ops_run(getattr(cu, f).graph) for f in ("forward", "backward")}
        diff = _difference(self.ops["forward"] + self.ops["backward"], self._expected())
        if diff:
            raise ScriptError("TorchScript runs other ops than the plan's: %s" % diff)
        self.cu = cu
        self.unchecked = {"forward", "backward"}
        self.absent = {}    # absent tangents -> (the function, its unit), None: Python

    def _expected(self):
        """The ops the source rendered so far calls, its helpers' included."""
        expected = collections.Counter(self.expected)
        for h, k in self.helpers.items():
            for name, c in _helper_ops(h).items():
                expected[name] += c * k
        return expected

    def _absent_backward(self, absent):
        """The backward for the tangents at the indices absent being absent
        (outputs the loss does not reach: a language model's logits),
        compiled and checked as backward is, once for each such set; None
        where it does not compile to the plan's ops (the interpreter runs
        it, train._Step)."""
        if absent not in self.absent:
            saved = self.expected, self.helpers
            self.expected, self.helpers = collections.Counter(), collections.Counter()
            name = "backward_%d" % len(self.absent)
            try:
                src = self._backward_source(self._lines(self.lowered.backward(absent)))
                cu = torch.jit.CompilationUnit(
                    _HELPERS + "\n" + src.replace("def backward(", "def %s(" % name, 1))
                self.ops[name] = _ops_run(getattr(cu, name).graph)
                if _difference(self.ops[name], self._expected()):
                    raise ScriptError(name)
                self.absent[absent] = (name, cu)
                self.unchecked.add(name)
            except Exception:   # ScriptError, PlanError, the language or the types
                self.absent[absent] = None
            finally:
                self.expected, self.helpers = saved
                self.pre.clear()
        return self.absent[absent]

    # --- running --------------------------------------------------------------

    def _run(self, f, *args, cu=None):
        with _NoOptimizer():
            out = getattr(cu or self.cu, f)(*args)
        if f in self.unchecked:
            # the graph TorchScript ran the first time is the one checked
            self.unchecked.discard(f)
            diff = _difference(_ops_of(private.jit_last_graph()), self.ops[f])
            if diff:
                raise ScriptError("TorchScript ran other ops in the %s than were checked: %s "
                                  "(CHECKMATE_TORCHSCRIPT=0 runs plans as Python)" % (f, diff))
        return out

    def forward(self, X):
        state = private.script_list()
        return self._run("forward", X, self.K, self.Z, state), state

    def backward(self, state, T, A):
        return self._run("backward", state, self.K, self.Z, T, A)

    def backward_absent(self, state, T, A, absent):
        compiled = self.base._absent_backward(absent)   # written at the traced sizes
        if compiled is None:
            return None
        if self.binding is not None and len(self.Z) < len(self._sizes):
            # a copy made before it was written: the sizes only it reads
            self.Z = list(sizes.at(dict(enumerate(self._sizes)), self.binding).values())
        # (its absent tangents are not read: an empty tensor each, for the types)
        T = [torch.empty(0) if t is None else t for t in T]
        return self._run(compiled[0], state, self.K, self.Z, T, A, cu=compiled[1])

    def unpack(self, state):
        """A forward's state as execute.Interpreter.backward takes it (the
        values of each of the lowered plan's parts), emptying state."""
        items = list(state)
        state.clear()
        values, k = [], 0
        for n in self.layout:
            if n == 0:
                values.append(True)
            elif n is None:
                values.append(items[k])
                k += 1
            else:
                values.append(tuple(items[k:k + n]))
                k += n
        parts = [values]
        for part in self.lowered.parts[1:]:
            parts.append(items[k:k + len(part)])
            k += len(part)
        return parts

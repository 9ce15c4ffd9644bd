"""From the traced fx graph to checkmate-graph v1 nodes.

Each fx node is one of
  fixed  a placeholder (parameter, buffer, input) or constant, or an alias
         of only such values: always resident, counted in fixed_memory;
  alias  a view or other value sharing the storage of an argument (view, t,
         expand, _unsafe_view, getitem of a tuple whose elements are not
         nodes of their own, ...): no node of its own, its consumers depend
         on the nodes it is computed from;
  real   a node of the checkmate graph (its output bytes are its memory).
Besides the fx nodes the graph has synthetic nodes (class Synthetic):
  projection  element k of a tuple-returning op whose elements live for
              different times (batch norm's output and its saved
              statistics): its own node, so that the element the backward
              needs does not keep the others alive;
  tangents    the gradients of the module's outputs, the backward's input
              (only when the step is traced with tangents);
  rng token   'the generator state after random node r': makes the next
              random node depend on r, so that every plan draws random
              numbers in the order an ordinary step does.
Before that, functional.py makes the traced graph functional: every
write is a new value (an in-place op runs on a clone), and the last
version of a parameter, buffer or input the step writes is written back
into it at the end of the forward. Random nodes and those last versions
are kept even when no output needs them: an ordinary step draws the
random numbers and updates the buffers whether or not they are used.
"""
import contextlib
import functools
import operator

import torch

from . import cost as costmod, private
from .functional import (FunctionalError, aliased_arg, clone_strided, functional_op,
                         functionalize, op_of, written_arg)
from .trace import CMA_MOMENTUM, tensors_of


class AnalysisError(Exception):
    """A graph the memory model cannot express; names the node."""


_is_op = private.is_op


def _schema_args(target):
    return private.schema(target).arguments


def momentum_arg(node):
    """(index of the momentum argument, index of running_mean) among
    node's arguments, for a batch norm node that updates its running
    statistics (made functional_op by the functional pass), or None."""
    if node.target is not functional_op:
        return None
    op = node.args[0]
    names = [a.name for a in private.schema(op).arguments]
    # cudnn_batch_norm (CUDA) names its momentum exponential_average_factor
    momentum = [i for i, a in enumerate(names) if a in ("momentum", "exponential_average_factor")]
    if momentum and "running_mean" in names and names.index("running_mean") in node.args[1]:
        return momentum[0] + 2, names.index("running_mean") + 2
    return None


# Arguments that hand an op the numbers its forward drew: the attention
# backwards of CUDA (efficient, cuDNN) are tagged nondeterministic_seeded,
# yet draw nothing; they replay the forward's draw from these.
_REPLAYED_DRAW = frozenset(("philox_seed", "philox_offset", "rng_state"))


@functools.lru_cache(maxsize=None)
def draws_random(target):
    """Whether the op target draws from a generator."""
    return _is_op(target) and torch.Tag.nondeterministic_seeded in target.tags and \
        not any(a.name in _REPLAYED_DRAW for a in _schema_args(target))


_MATMULS = ("mm", "addmm", "bmm", "baddbmm", "convolution", "_convolution")


def is_random(node):
    """Whether node draws from a generator."""
    return not isinstance(node, Synthetic) and draws_random(op_of(node))


_aten = torch.ops.aten


# Ops that group_norm (their composite caller) and its autograd formula
# make arguments contiguous for (in the memory format the input suggests),
# a copy a trace leaves out when the fake tensor already has that layout:
# op packet -> argument indices. Fake tensors give some ops other strides
# than their kernels
# (native_batch_norm on a transposed input, hardtanh_backward,
# elu_backward), so the real argument may not have it; the group norm
# kernels then read it as if it had (wrong values, or a failed check).
_FORMULA_CONTIGUOUS = {_aten.native_group_norm: (0,),
                       _aten.native_group_norm_backward: (0, 1)}


def _formula_contiguous(target, args):
    idx = _FORMULA_CONTIGUOUS.get(getattr(target, "overloadpacket", None))
    if not idx:
        return args
    x = args[idx[-1]]   # the input, whose layout ATen's suggest_memory_format reads
    cl = torch.channels_last
    fmt = cl if x.dim() == 4 and x.is_contiguous(memory_format=cl) and not x.is_contiguous() \
        else torch.contiguous_format
    args = list(args)
    for i in idx:
        args[i] = args[i].contiguous(memory_format=fmt)
    return args


def call(node, value_of, replace=None):
    """Runs one fx call_function node on the values value_of(arg) gives:
    an in-place or out= op on a clone of what it writes (functional.py),
    replace's {index: value} instead of the traced arguments at those
    indices.

    The trace took some decisions on fake tensors' strides, which are not
    always the kernels' (_FORMULA_CONTIGUOUS); two are taken again on the
    real strides, as the ordinary step takes them: a view (view,
    _reshape_alias) runs as reshape, which gives the values the ordinary
    step's reshape gives, and the copies of _FORMULA_CONTIGUOUS are
    made."""
    args = _formula_contiguous(node.target, torch.fx.node.map_arg(node.args, value_of))
    kwargs = torch.fx.node.map_arg(node.kwargs, value_of)
    target = node.target
    if target is _aten.view.default or target is _aten._reshape_alias.default:
        target, args = _aten.reshape.default, args[:2]
    w = written_arg(target)
    if replace:
        args = list(args)
        for i, v in replace.items():
            args[i] = v
    if isinstance(w, str) and isinstance(kwargs.get(w), torch.Tensor):
        kwargs = dict(kwargs)
        kwargs[w] = clone_strided(kwargs[w])
    elif w is not None and not isinstance(w, str) and isinstance(args[w], torch.Tensor):
        args = list(args)
        args[w] = clone_strided(args[w])
    return target(*args, **kwargs)



def _exprs(numbers):
    """{key: sympy expression} of the symbolic numbers among numbers'
    values (a symbolic trace's)."""
    return {k: private.sym_expr(v) for k, v in numbers.items() if private.is_sym(v)}


def _hints(numbers):
    """numbers with each symbolic value given as it is in the call traced."""
    return {k: int(private.hint(v)) for k, v in numbers.items()}


def nbytes(t):
    return t.numel() * t.element_size()


def _tensor_inputs(node):
    out = []
    torch.fx.node.map_arg((node.args, node.kwargs), out.append)
    return out


def _union(groups):
    """The members of groups, in order, each once."""
    out = []
    for g in groups:
        out += [d for d in g if d not in out]
    return out


class Synthetic:
    """A graph node that is no fx node: kind is 'projection' (element
    `index` of `base`), 'tangents' or 'rng' (the token after random node
    `base`)."""

    def __init__(self, kind, name, base=None, index=None):
        self.kind, self.name, self.base, self.index = kind, name, base, index
        self.op = "synthetic"
        self.target = kind

    def __repr__(self):
        return self.name


class Analysis:
    """The checkmate view of a traced step: see the module comment.

    real       graph nodes (fx or Synthetic), in file order
    deps       graph node -> list of graph nodes it needs resident
    needs      fx node -> the graph nodes its value is computed from
    memory     graph node -> bytes counted for it
    cost       graph node -> FLOPs (or the time set by set_costs)
    backward   set of graph nodes that are the loss or the tangents or are
               computed from them
    grad_of    graph node -> forward graph node
    final      placeholder -> the fx node of its last version, for the
               parameters, buffers and inputs the step writes (written
               back at the end of the forward)
    grad_tangents  per gradient, the indices of the tangents it is
               computed from (a gradient none of whose tangents the caller
               gave is None, as autograd leaves it)
    randoms    random fx nodes, in traced order
    outputs    fx nodes of the module's flat tensor outputs (tangent mode)
    tangents   the Synthetic tangents node, or None (sum-loss mode)
    fixed_memory, loss (fx node or None), grads (fx nodes, in the order of
    traced.grad_of), fake (fx node -> fake value, for shapes)
    """

    def __init__(self, traced, fixed):
        """fixed: the real tensors of the placeholders, in order."""
        self.traced = traced
        gm = traced.gm
        try:
            self.final, self.version_root = functionalize(gm)
        except FunctionalError as e:
            raise AnalysisError(str(e)) from None
        self.fake = _fake_values(gm, fixed)
        self.nodes = list(gm.graph.nodes)
        self.order = {n: i for i, n in enumerate(self.nodes)}
        self.placeholders = [n for n in self.nodes if n.op == "placeholder"]
        self.output = self.nodes[-1]
        roles = traced.placeholder_roles()
        self.role = dict(zip(self.placeholders, roles))
        self.kind, self.source, self.needs = {}, {}, {}
        self.proj = {}      # (fx tuple node, index) -> Synthetic projection
        self.tangents = None
        if "tangent" in roles:
            self.tangents = Synthetic("tangents", "tangents")
        self._classify()
        flat = private.tree_flatten(self.output.args[0])[0]
        self.loss, self.outputs, self.grads = traced.split_outputs(flat)
        self._prune()
        self._memory(fixed)
        self._backward()
        self._grad_of()
        self.cost = {r: 0 if isinstance(r, Synthetic) else costmod.flops(r, self.fake)
                     for r in self.real}
        self.cost_expr = _exprs(self.cost)
        self.cost = _hints(self.cost)
        self.cost_unit = "flops"
        self.by_name = {r.name: r for r in self.real}
        self.cumulative = self._cumulative()
        self.grad_tangents = self._grad_tangents()
        # graph node -> indices of the gradients that need it
        self.grads_needing = {}
        for i, g in enumerate(self.grads):
            for d in self.needs[g]:
                self.grads_needing.setdefault(d, []).append(i)

    def _grad_tangents(self):
        tangent = {p: k for k, p in enumerate(
            p for p in self.placeholders if self.role[p] == "tangent")}
        reach = {}
        for n in self.nodes:
            if n in tangent:
                reach[n] = frozenset((tangent[n],))
            else:
                reach[n] = frozenset().union(*[reach[i] for i in _tensor_inputs(n)])
        return [reach[g] for g in self.grads]

    def _cumulative(self):
        """Batch norm node -> (momentum index, num_batches_tracked
        placeholder, k) for the BatchNorm(momentum=None) ones (traced with
        trace.CMA_MOMENTUM): the k-th call of the module in the step gets
        1 / (num_batches_tracked + k), the count the ordinary step has
        incremented k times by then."""
        buffers = {n: self.traced.buffer_names[i] for i, n in enumerate(
            p for p in self.placeholders if self.role[p] == "buffer")}
        by_name = {v: k for k, v in buffers.items()}
        out, calls = {}, {}
        for r in self.real:
            m = None if isinstance(r, Synthetic) else momentum_arg(r)
            if m is None or r.args[m[0]] != CMA_MOMENTUM:
                continue
            mean = buffers.get(self.version_root.get(r.args[m[1]], r.args[m[1]]))
            count = by_name.get(mean.rsplit(".", 1)[0] + ".num_batches_tracked"
                                if mean and "." in mean else "num_batches_tracked")
            if count is None:
                self._fail(r, "a BatchNorm(momentum=None) whose num_batches_tracked "
                              "is not found")
            calls[count] = calls.get(count, 0) + 1
            out[r] = (m[0], count, calls[count])
        return out

    # --- classification -------------------------------------------------

    def _fail(self, n, why):
        raise AnalysisError("node %s (op %s): %s" % (n.name, n.target, why))

    def _classify(self):
        for n in self.nodes:
            if n.op == "placeholder":
                self.kind[n] = "fixed"
                self.needs[n] = (self.tangents,) if self.role[n] == "tangent" else ()
            elif n.op == "get_attr":
                self.kind[n] = "fixed"
                self.needs[n] = ()
            elif n.op == "call_function":
                self._classify_call(n)
            elif n.op != "output":
                raise AnalysisError("unexpected fx node %s (%s)" % (n.name, n.op))

    def _root(self, n):
        """The fx node whose storage n is (through aliases; an element of a
        tuple counts as its own storage)."""
        while n in self.source and self.kind[n] != "real-element":
            n = self.source[n]
        return n

    def _classify_call(self, n):
        ins = _tensor_inputs(n)
        a = None if written_arg(n.target) is not None else aliased_arg(n.target)
        if a is not None and isinstance(n.args[a], torch.fx.Node):
            src = n.args[a]
            if n.target is operator.getitem and self.kind[src] == "real" and \
                    isinstance(self.fake[src], (tuple, list)):
                self.kind[n] = "real-element"
                self.source[n] = src
                self.needs[n] = (src,)  # replaced by a projection if any
                return
            dep = _union(self.needs[i] for i in ins)
            self.kind[n] = "alias" if dep else "fixed"
            self.source[n] = src
            self.needs[n] = tuple(dep)
            return
        self.kind[n] = "real"
        self.needs[n] = (n,)

    # --- the graph ------------------------------------------------------

    def _projections(self):
        """Tuple-returning nodes whose elements are read at different
        times, or that have unused elements with bytes, get one projection
        node per used element."""
        used = {}
        for n in self.nodes:
            if self.kind.get(n) == "real-element":
                used.setdefault(self.source[n], set()).add(n.args[1])
        for base, idx in used.items():
            val = self.fake[base]
            sizes = [nbytes(t) if isinstance(t, torch.Tensor) else 0 for t in val]
            grads = self.grad_elements.get(base, set())
            live = [i for i in idx if sizes[i] and i not in grads]
            unused = [i for i in range(len(val)) if i not in idx and sizes[i]]
            if len(live) < 2 and not unused:
                continue
            for i in sorted(idx):
                self.proj[(base, i)] = Synthetic("projection", "%s.%d" % (base.name, i), base, i)

    def _prune(self):
        # Only what the outputs, the loss, the gradients, the random nodes
        # and the last versions of what the step writes need: unused
        # values and tuple parts go.
        self.grad_elements = self._grad_elements()
        self._projections()
        for n in self.nodes:
            if self.kind.get(n) == "real-element":
                p = self.proj.get((self.source[n], n.args[1]))
                self.needs[n] = (p,) if p is not None else (self.source[n],)
        for n in self.nodes:   # aliases of elements: needs again, in order
            if self.kind.get(n) == "alias":
                self.needs[n] = tuple(_union(self.needs[i] for i in _tensor_inputs(n)))
        roots = []
        keep = [n for n in self.nodes if n.op == "call_function" and is_random(n)]
        for v in ([self.loss] if self.loss is not None else []) + self.outputs + self.grads \
                + keep + list(self.final.values()):
            roots += self.needs[v]
        want, deps = set(), {}
        stack = list(roots)
        while stack:
            n = stack.pop()
            if n in want:
                continue
            want.add(n)
            d = self._direct_deps(n)
            deps[n] = d
            stack += d
        order = []
        for n in self.nodes:
            if n in want:
                order.append(n)
                for i in sorted(k for (b, k) in self.proj if b is n):
                    p = self.proj[(n, i)]
                    if p in want:
                        order.append(p)
        order = self._rng_tokens(order, deps)
        if self.tangents is not None:
            order = self._place_tangents(order, deps)
        self.real = order
        self.deps = deps

    def _rng_tokens(self, order, deps):
        """Random nodes in traced order (self.randoms), each after the
        token of the one before, so that first computes happen in the
        ordinary step's order; the order with each token after its node."""
        self.randoms = [n for n in order if is_random(n)]
        self.tokens = {}
        for prev, r in zip([None] + self.randoms, self.randoms):
            if prev is not None:
                deps[r] = deps[r] + [self.tokens[prev]]
            self.tokens[r] = Synthetic("rng", "%s.rng" % r.name, r)
            deps[self.tokens[r]] = [r]
        out = []
        for n in order:
            out.append(n)
            if n in self.tokens:
                out.append(self.tokens[n])
        return out

    def _direct_deps(self, n):
        if isinstance(n, Synthetic):
            if n.kind == "projection":
                return [n.base]
            return []
        return _union(self.needs[i] for i in _tensor_inputs(n))

    def _place_tangents(self, order, deps):
        """The tangents node depends on every node an output is, on the last
        versions of what the step writes (written back at the end of the
        forward) and on the last random token (all random first computes
        are in the forward); it comes just before the first node that
        reads it."""
        t = self.tangents
        tdeps = []
        for o in self.outputs + list(self.final.values()):
            tdeps += [d for d in self.needs[o] if d is not t and d not in tdeps]
        if self.randoms:
            tdeps.append(self.tokens[self.randoms[-1]])
        deps[t] = tdeps
        readers = [i for i, n in enumerate(order) if t in deps.get(n, ())]
        at = readers[0] if readers else len(order)
        pos = {n: i for i, n in enumerate(order)}
        late = [d for d in tdeps if pos[d] >= at]
        if late:
            raise AnalysisError("node %s: an output is computed after the backward starts"
                                % late[0].name)
        return order[:at] + [t] + order[at:]

    def _grad_elements(self):
        """fx tuple node -> indices of elements that are a gradient the
        step returns (counted in fixed memory, not again as a node)."""
        out = {}
        self.grad_bytes = 0
        for g in self.grads:
            gt = self.fake[g]
            self.grad_bytes += nbytes(gt)
            n, elem = g, None
            while n in self.source:
                if n.target is operator.getitem and elem is None:
                    elem = n.args[1]
                n = self.source[n]
            if self.kind.get(n) != "real":
                continue
            val = self.fake[n]
            whole = val if elem is None else val[elem]
            if isinstance(whole, torch.Tensor) and whole.numel() == gt.numel():
                out.setdefault(n, set()).add(elem)
        return out

    def owner(self, n):
        """The graph node whose storage fx node n is, or None for a fixed
        value."""
        while True:
            k = self.kind.get(n)
            if k == "real":
                return n
            if k == "real-element":
                return self.needs[n][0]
            if n.op == "placeholder" and self.role[n] == "tangent":
                return self.tangents
            if n not in self.source:
                return None
            n = self.source[n]

    def _memory(self, fixed):
        self.memory = {}
        for r in self.real:
            if isinstance(r, Synthetic):
                if r.kind == "projection":
                    t = self.fake[r.base][r.index]
                    skip = r.index in self.grad_elements.get(r.base, ())
                    self.memory[r] = nbytes(t) if isinstance(t, torch.Tensor) and not skip else 0
                elif r.kind == "tangents":
                    self.memory[r] = sum(nbytes(self.fake[p]) for p in self.placeholders
                                         if self.role[p] == "tangent")
                else:
                    self.memory[r] = 0
                continue
            val = self.fake[r]
            if isinstance(val, torch.Tensor):
                parts = [(None, val)]
            elif isinstance(val, (tuple, list)):
                parts = list(enumerate(val))
            else:
                parts = []
            skip = self.grad_elements.get(r, ())
            self.memory[r] = sum(nbytes(t) for i, t in parts
                                 if isinstance(t, torch.Tensor) and i not in skip)
        const = sum(nbytes(self.fake[n]) for n in self.nodes
                    if n.op == "get_attr" and isinstance(self.fake[n], torch.Tensor))
        by_role = {}
        for p, t in zip(self.placeholders, fixed):
            if self.role[p] != "tangent" and isinstance(t, torch.Tensor):
                by_role[self.role[p]] = by_role.get(self.role[p], 0) + nbytes(t)
        self.fixed_parts = {
            "parameters": by_role.get("param", 0),
            "buffers": by_role.get("buffer", 0),
            "inputs": by_role.get("input", 0),
            "constants": const,
            "gradients": self.grad_bytes,
            # the generator state kept for each random node's recomputes
            "rng_states": sum(_rng_state_bytes(self.fake[r]) for r in self.randoms),
            # the values before the step of what it writes (lower.py's snapshots)
            "snapshots": sum(nbytes(self.fake[p]) for p in self.final),
        }
        # A symbolic trace's sizes: their values in the call traced, and
        # their expressions, for its other sizes (sized_at)
        self.memory_expr = _exprs(self.memory)
        self.fixed_expr = _exprs(self.fixed_parts)
        self.memory = _hints(self.memory)
        self.fixed_parts = _hints(self.fixed_parts)
        self.fixed_memory = sum(self.fixed_parts.values())

    def _backward(self):
        start = set()
        if self.loss is not None:
            start |= set(self.needs[self.loss])
        if self.tangents is not None:
            start.add(self.tangents)
        self.backward = set()
        for r in self.real:
            if r in start or any(d in self.backward for d in self.deps[r]):
                self.backward.add(r)

    def _grad_of(self):
        self.grad_of = {}
        for r in self.real:
            if r not in self.backward or isinstance(r, Synthetic) or not _is_op(r.target):
                continue
            rule = costmod.GRAD_OF.get(r.target.overloadpacket)
            if rule is None:
                continue
            saved, kind = rule
            if saved >= len(r.args) or not isinstance(r.args[saved], torch.fx.Node):
                continue
            f = self.owner(r.args[saved])
            if f is None or isinstance(f, Synthetic) and f.kind != "projection":
                continue
            if kind == "result":
                # The op saved its forward result; the gradient is w.r.t.
                # the input of the node that computed it.
                fx = f.base if isinstance(f, Synthetic) else f
                ins = _tensor_inputs(fx)
                if not ins:
                    continue
                f = self.owner(ins[0])
            if f is not None and f in self.deps and f not in self.backward:
                self.grad_of[r] = f

    def price(self, rates):
        """Each op's FLOPs plus what its memory traffic, its launch and its
        random draws cost in FLOPs on the device (rates:
        jointcost.device_rates): rates["flops_per_byte"] per byte it reads
        and writes (its output and the values it reads, parameters aside),
        rates["flops_per_launch"] once, rates["flops_per_random"] per
        element a random op draws. The FLOP table alone prices an
        elementwise op at one FLOP an element; on this CPU an add takes
        about 65 times that, a dropout's draw 900 times (bench/results,
        docs/torch.md "cost"). A symbolic trace's expressions follow."""
        fpb, fpl, fpr = (rates[k] for k in ("flops_per_byte", "flops_per_launch",
                                             "flops_per_random"))
        symbolic = {**self.memory, **self.memory_expr}
        for r in self.real:
            if isinstance(r, Synthetic):
                continue
            drawn = 0   # the elements of a random op's (first) output
            if is_random(r):
                out = [t for t in private.tree_flatten(self.fake.get(r))[0]
                       if isinstance(t, torch.Tensor)]
                drawn = out[0].numel() if out else 0

            def priced(memory, flops, drawn):
                moved = memory[r] + sum(memory[d] for d in self.deps[r])
                return flops + fpb * moved + fpl + fpr * drawn
            if r in self.cost_expr or private.is_sym(drawn) or \
                    any(d in self.memory_expr for d in (r, *self.deps[r])):
                self.cost_expr[r] = priced(symbolic, self.cost_expr.get(r, self.cost[r]),
                                           private.sym_expr(drawn) if private.is_sym(drawn)
                                           else drawn)
            self.cost[r] = int(priced(self.memory, self.cost[r], private.hint(drawn)))

    def matmul_dtype(self):
        """The dtype of most of the step's matmul and convolution FLOPs
        (float32 where it has none): the one whose FLOP rate prices the
        rest (price)."""
        by = {}
        for r in self.real:
            v = self.fake.get(r)
            if not isinstance(r, Synthetic) and isinstance(v, torch.Tensor) and \
                    v.dtype.is_floating_point and getattr(
                        getattr(op_of(r), "overloadpacket", None), "__name__", "") in _MATMULS:
                by[v.dtype] = by.get(v.dtype, 0) + self.cost[r]
        return max(by, key=by.get) if by else torch.float32

    def set_costs(self, costs, unit):
        """Costs of another kind (measured times): they hold at the sizes
        traced only, so a symbolic trace's cost expressions go."""
        self.cost = costs
        self.cost_expr = {}
        self.cost_unit = unit

    def in_order_steps(self):
        """Checkpoint-all's plan of this graph (in_order_steps below)."""
        return in_order_steps(self.real, self.deps.__getitem__)

    def checkpoint_all_peak(self):
        """The peak of in_order_steps, fixed memory included (what
        `checkmate info` calls checkpoint-all's)."""
        return steps_peak(self.in_order_steps(), self.memory) + self.fixed_memory

    def to_json(self, name, extra):
        nodes = []
        for r in self.real:
            node = {"name": r.name, "cost": self.cost[r], "memory": self.memory[r],
                    "deps": [d.name for d in self.deps[r]]}
            if r in self.backward:
                node["backward"] = True
            if r in self.grad_of:
                node["grad_of"] = self.grad_of[r].name
            node["op"] = str(r.target) if isinstance(r, Synthetic) else str(op_of(r))
            nodes.append(node)
        out = {"format": "checkmate-graph", "version": 1, "name": name,
               "fixed_memory": self.fixed_memory}
        out.update(extra)
        out["nodes"] = nodes
        return out


def in_order_steps(order, deps):
    """Every node of order once, in order, each freed after its last use
    (deps(node): its inputs): (op, node) steps, checkpoint-all's plan."""
    last = {}
    for r in order:
        for d in deps(r):
            last[d] = r
    steps = []
    for r in order:
        steps.append(("compute", r))
        steps += [("free", d) for d in deps(r) if last[d] is r]
    return steps


def steps_peak(steps, memory, workspace=None):
    """The most bytes (memory: node -> bytes) live at once under steps,
    fixed memory left out; with workspace (node -> bytes its op holds
    while it runs), those too at each compute. Steps that copy to host
    memory and back (docs/formats.md): a fetch adds its value as a compute
    does, an offload changes nothing on the device, and a free of a value
    not on the device frees its host copy."""
    live = peak = 0
    workspace = workspace or {}
    on = {}
    for op, r in steps:
        if op in ("compute", "fetch"):
            on[r] = on.get(r, 0) + 1
            live += memory[r]
            peak = max(peak, live + (workspace.get(r, 0) if op == "compute" else 0))
        elif op == "free" and on.get(r):
            on[r] -= 1
            live -= memory[r]
    return peak


def _rng_state_bytes(value):
    """Bytes of the generator state of value's device (CPU: mt19937's)."""
    ts = tensors_of(value)
    dev = ts[0].device if ts else torch.device("cpu")
    if dev.type == "cuda":
        return torch.cuda.get_rng_state(dev).numel()
    return torch.get_rng_state().numel()


def _fake_call(node, value_of):
    # lift_fresh_copy (a tensor literal such as torch.tensor(0.5) in
    # forward) recurses without end under torch 1.13's FakeTensorMode
    # (pytorch/pytorch#89627, #92244); a clone has its shape and dtype.
    if node.target is torch.ops.aten.lift_fresh_copy.default:
        return value_of(node.args[0]).clone()
    return call(node, value_of)


def _recorded_values(gm):
    """The fake values make_fx recorded for every node but the output
    (torch 2), or None where some are missing (torch 1.13)."""
    nodes = [n for n in gm.graph.nodes if n.op != "output"]
    if all("val" in n.meta for n in nodes):
        return {n: n.meta["val"] for n in nodes}
    return None


def _symbolic_mode(gm):
    """The fake tensor mode of a symbolic trace's placeholders, or None."""
    for n in gm.graph.nodes:
        v = n.meta.get("val") if n.op == "placeholder" else None
        if isinstance(v, torch.Tensor) and any(private.is_sym(d) for d in v.shape):
            return v.fake_mode
    return None


def _fake_values(gm, fixed):
    """Every fx node's value on fake tensors (shapes and dtypes only): the
    recorded ones, else each op run again on fake tensors. Raises
    AnalysisError naming the node whose op fails."""
    val = _recorded_values(gm)
    if val is not None:
        return val
    mode = _symbolic_mode(gm)
    if mode is not None:
        # a symbolic trace: the nodes the analysis added (functional.py)
        # run on the recorded values, sizes symbolic
        within = private.symbolic_kernels()
        val = {n: n.meta["val"] for n in gm.graph.nodes if "val" in n.meta}
    else:
        mode, within, val = private.fake_tensor_mode(), contextlib.nullcontext(), {}
        inputs = iter([mode.from_tensor(t.detach()) for t in fixed])
    with mode, within:
        for n in gm.graph.nodes:
            if n in val:
                continue
            if n.op == "placeholder":
                val[n] = next(inputs)
            elif n.op == "get_attr":
                val[n] = mode.from_tensor(getattr(gm, n.target))
            elif n.op == "call_function":
                try:
                    val[n] = _fake_call(n, val.__getitem__)
                except Exception as exc:  # whatever the op raised, on one line
                    why = str(exc).strip().splitlines() or [type(exc).__name__]
                    raise AnalysisError("shape propagation failed at node %s (op %s): %s"
                                        % (n.name, n.target, why[0])) from exc
    return val

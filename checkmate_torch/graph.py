"""From the traced fx graph to checkmate-graph v1 nodes.

Each fx node is one of
  fixed  a placeholder (parameter, buffer, input) or constant, or an alias
         of only such values: always resident, counted in fixed_memory;
  alias  a view or other value sharing the storage of an argument (getitem
         of a tuple, view, t, expand, _unsafe_view, ...): no node of its own,
         its consumers depend on the real nodes it is computed from;
  real   a node of the checkmate graph (its output bytes are its memory).
An in-place op (its return aliases an argument it writes, as add_) is run
out of place, on a clone of that argument, and is a real node.
"""
import operator

import torch
from torch.utils import _pytree as pytree

from . import cost as costmod


def _is_op(target):
    return isinstance(target, torch._ops.OpOverload)


def _schema_args(target):
    return target._schema.arguments


def written_arg(target):
    """Index of the argument an in-place op writes and returns, or None."""
    if not _is_op(target):
        return None
    rets = target._schema.returns
    for i, a in enumerate(_schema_args(target)):
        ai = a.alias_info
        if ai is not None and ai.is_write and not a.kwarg_only:
            if any(r.alias_info is not None and r.alias_info.before_set & ai.before_set
                   for r in rets):
                return i
    return None


def aliased_arg(target):
    """Index of the argument whose storage a view op's result shares, or
    None. _unsafe_view says nothing in its schema but returns a view."""
    if target is operator.getitem:
        return 0
    if not _is_op(target):
        return None
    if target.overloadpacket is torch.ops.aten._unsafe_view:
        return 0
    # In ATen schemas a read-only argument with an alias annotation,
    # Tensor(a) self -> Tensor(a) or Tensor(a -> *) self -> Tensor(a)[]
    # (split, unbind), is one whose storage the result may share.
    for i, a in enumerate(_schema_args(target)):
        ai = a.alias_info
        if ai is not None and not ai.is_write:
            return i
    return None


def is_random(target):
    return _is_op(target) and torch.Tag.nondeterministic_seeded in target.tags


def call(node, value_of):
    """Runs one fx call_function node on the values value_of(arg) gives,
    in-place ops on a clone of the argument they write."""
    args = torch.fx.node.map_arg(node.args, value_of)
    kwargs = torch.fx.node.map_arg(node.kwargs, value_of)
    w = written_arg(node.target)
    if w is not None:
        args = list(args)
        args[w] = args[w].clone()
    return node.target(*args, **kwargs)


def tensors_of(value):
    return [t for t in pytree.tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def nbytes(t):
    return t.numel() * t.element_size()


def _tensor_inputs(node):
    out = []
    torch.fx.node.map_arg((node.args, node.kwargs), out.append)
    return out


class Analysis:
    """The checkmate view of a traced step: see the module comment.

    real       fx nodes of the checkmate graph, in traced order
    deps       fx node -> list of real fx nodes it needs resident
    memory     real fx node -> bytes counted for it
    cost       real fx node -> FLOPs (or the time set by set_costs)
    backward   set of real fx nodes that are the loss or computed from it
    grad_of    real fx node -> forward real fx node
    fixed_memory, loss (fx node), grads (fx nodes, in traced.grad_params
    order), fake (fx node -> fake value, for shapes)
    """

    def __init__(self, traced, params, buffers, x):
        self.traced = traced
        gm = traced.gm
        self.nodes = list(gm.graph.nodes)
        self.fake = _fake_values(gm, params, buffers, x)
        self.kind = {}
        self.source = {}   # alias -> fx node whose storage it shares
        needs = {}
        for n in self.nodes:
            if n.op in ("placeholder", "get_attr"):
                self.kind[n] = "fixed"
                needs[n] = ()
            elif n.op == "call_function":
                a = None if written_arg(n.target) is not None else aliased_arg(n.target)
                ins = _tensor_inputs(n)
                if a is not None and isinstance(n.args[a], torch.fx.Node):
                    dep = []
                    for i in ins:
                        dep += [d for d in needs[i] if d not in dep]
                    self.kind[n] = "alias" if dep else "fixed"
                    self.source[n] = n.args[a]
                    needs[n] = tuple(dep)
                else:
                    self.kind[n] = "real"
                    needs[n] = (n,)
            elif n.op == "output":
                self.output = n
            else:
                raise ValueError("unexpected fx node %s (%s)" % (n.name, n.op))
        self.needs = needs
        flat = pytree.tree_flatten(self.output.args[0])[0]
        self.loss, self.grads = flat[0], flat[1:]
        self._prune()
        self._memory(params, buffers, x)
        self._backward()
        self._grad_of()
        self.cost = {n: costmod.flops(n, self.fake) for n in self.real}
        self.cost_unit = "flops"

    def _prune(self):
        # Only what the loss and the gradients need: buffer updates
        # (num_batches_tracked += 1) and unused tuple parts go.
        want = set()
        stack = list(self.needs[self.loss])
        for g in self.grads:
            stack += self.needs[g]
        deps = {}
        while stack:
            n = stack.pop()
            if n in want:
                continue
            want.add(n)
            d = []
            for i in _tensor_inputs(n):
                d += [r for r in self.needs[i] if r not in d]
            deps[n] = d
            stack += d
        self.real = [n for n in self.nodes if n in want]
        self.deps = deps

    def owner(self, n):
        """(real fx node, element index or None) whose storage n is, or
        (None, None) for a fixed value."""
        elem = None
        while self.kind[n] == "alias":
            if n.target is operator.getitem and elem is None:
                elem = n.args[1]
            n = self.source[n]
        if self.kind[n] != "real":
            return None, None
        return n, elem

    def _memory(self, params, buffers, x):
        grad_elems = {}
        self.grad_bytes = 0
        for g in self.grads:
            gt = self.fake[g]
            self.grad_bytes += nbytes(gt)
            r, elem = self.owner(g)
            if r is None:
                continue
            val = self.fake[r]
            whole = val if elem is None else val[elem]
            if isinstance(whole, torch.Tensor) and whole.numel() == gt.numel():
                grad_elems.setdefault(r, set()).add(elem)
        self.grad_owner = grad_elems
        self.memory = {}
        for r in self.real:
            val = self.fake[r]
            if isinstance(val, torch.Tensor):
                parts = [(None, val)]
            elif isinstance(val, (tuple, list)):
                parts = list(enumerate(val))
            else:
                parts = []
            skip = grad_elems.get(r, ())
            self.memory[r] = sum(nbytes(t) for i, t in parts
                                 if isinstance(t, torch.Tensor) and i not in skip)
        const = sum(nbytes(self.fake[n]) for n in self.nodes
                    if n.op == "get_attr" and isinstance(self.fake[n], torch.Tensor))
        self.fixed_parts = {
            "parameters": sum(nbytes(p) for p in params),
            "buffers": sum(nbytes(b) for b in buffers),
            "input": nbytes(x),
            "constants": const,
            "gradients": self.grad_bytes,
        }
        self.fixed_memory = sum(self.fixed_parts.values())

    def _backward(self):
        start = set(self.needs[self.loss])
        self.backward = set()
        for r in self.real:
            if r in start or any(d in self.backward for d in self.deps[r]):
                self.backward.add(r)

    def _grad_of(self):
        self.grad_of = {}
        for r in self.real:
            if r not in self.backward or not _is_op(r.target):
                continue
            rule = costmod.GRAD_OF.get(r.target.overloadpacket)
            if rule is None:
                continue
            saved, kind = rule
            if saved >= len(r.args) or not isinstance(r.args[saved], torch.fx.Node):
                continue
            f, _ = self.owner(r.args[saved])
            if f is None:
                continue
            if kind == "result":
                # The op saved its forward result; the gradient is w.r.t.
                # the input of the node that computed it.
                ins = [i for i in _tensor_inputs(f)]
                if not ins:
                    continue
                f, _ = self.owner(ins[0])
            if f is not None and f not in self.backward:
                self.grad_of[r] = f

    def set_costs(self, costs, unit):
        self.cost = costs
        self.cost_unit = unit

    def to_json(self, name, extra):
        nodes = []
        for r in self.real:
            node = {"name": r.name, "cost": self.cost[r], "memory": self.memory[r],
                    "deps": [d.name for d in self.deps[r]]}
            if r in self.backward:
                node["backward"] = True
            if r in self.grad_of:
                node["grad_of"] = self.grad_of[r].name
            node["op"] = str(r.target)
            nodes.append(node)
        out = {"format": "checkmate-graph", "version": 1, "name": name,
               "fixed_memory": self.fixed_memory}
        out.update(extra)
        out["nodes"] = nodes
        return out


class AnalysisError(Exception):
    """A node whose shapes the fake run cannot work out; names the node."""


def _fake_call(node, value_of):
    # lift_fresh_copy (a tensor literal such as torch.tensor(0.5) in
    # forward) recurses without end under torch 1.13's FakeTensorMode
    # (pytorch/pytorch#89627, #92244); a clone has its shape and dtype.
    if node.target is torch.ops.aten.lift_fresh_copy.default:
        return value_of(node.args[0]).clone()
    return call(node, value_of)


def _fake_values(gm, params, buffers, x):
    """Every fx node's value on fake tensors (shapes and dtypes only).
    Raises AnalysisError naming the node whose op fails."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode()
    inputs = iter([mode.from_tensor(t.detach()) for t in list(params) + list(buffers) + [x]])
    val = {}
    with mode:
        for n in gm.graph.nodes:
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

"""remat(..., compile=True): the training step through torch.compile's
inductor, with a checkmate MILP choosing what the forward keeps for the
backward.

AOTAutograd traces the forward and backward as one joint graph and a
partitioner splits it: the values the forward saves, and a backward that
recomputes from them whatever else it needs. Inductor's default
partitioner picks the saved values by a min cut (and, under
activation_memory_budget, a knapsack over them). Here the joint graph is
written as a checkmate graph (JointGraph) and `checkmate partition`
finds the saved values of least recompute cost within the budget, in the
memory model of a step whose two halves are each fused whole: what it
counts is fixed memory, the saved values until the backward is done with
them, the backward's own values that inductor writes (not the pointwise
ones it fuses into their readers), and the values the backward computes
again that inductor cannot fuse away (JointGraph.materialized: a matmul's
or convolution's output or input) or that its heuristics write
(JointGraph.writes, counted by solving again), held from the recompute
to their last read. The rest of torch's partitioner (functionalized random ops,
symbolic sizes, the reordering of the backward) runs unchanged. While
inductor lowers the two programs, it reuses no freed buffer, so that
buffers are freed where the model frees them, and fuses two kernels that
do not feed each other only where they are close in the program
(_choices), so that no recompute runs long before the model places it
(_lowering).
docs/torch.md, "Compiled mode", says what the model counts and what was
measured."""
import contextlib
import contextvars
import functools
import itertools
import logging
import operator
import re
import threading
import types
import warnings

import torch

from . import private, solve as solvemod
from .cost import flops
from .dynamic import grown_tensor
from .graph import draws_random, in_order_steps, steps_peak
from .trace import Inputs, autocast_key, dtype_mismatch


class CompiledError(Exception):
    pass


_patch_lock = threading.Lock()


def _tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _tensors(x)]
    return []


def _bytes(node):
    return sum(t.numel() * t.element_size() for t in _tensors(node.meta.get("val")))


def _symbols(graph):
    """{symbol: a SymInt that is that symbol} for the sizes of a joint
    graph traced with symbolic sizes (torch.compile's dynamic shapes)
    that have a size in the call being compiled; {} for a static graph."""
    syms = {}
    for n in graph.nodes:
        v = n.meta.get("val")
        sizes = [v] if isinstance(v, torch.SymInt) else \
            [d for t in _tensors(v) for d in tuple(t.shape) + tuple(t.stride())]
        for d in sizes:
            if isinstance(d, torch.SymInt) and private.sym_expr(d).is_Symbol \
                    and private.sym_hint(d) is not None:
                syms.setdefault(private.sym_expr(d), d)
    return syms


def _size_at(d, point):
    """A size (an int or a SymInt) where torch's symbols take the sizes
    of point ({symbol: size}); a SymInt of other symbols (a size known
    only when the step runs) as it is."""
    if not isinstance(d, torch.SymInt):
        return d
    expr = private.sym_expr(d)
    return int(expr.xreplace(point)) if expr.free_symbols <= point.keys() else d


@contextlib.contextmanager
def _sized(graph):
    """Within: every node's value of a joint graph with symbolic sizes
    made concrete at the largest sizes the compiled step serves, which
    the partition is made for (a smaller call holds less: each tensor's
    size grows with every symbol, checked). A symbol with a declared
    maximum (torch._dynamo.mark_dynamic(..., max=)) takes it; one without
    takes its size in this call, and the compiled step gets a guard that
    it is no larger (a larger call compiles again, partitioned for its
    sizes). Yields {symbol: size} (None for a static graph, left as it
    is)."""
    syms = _symbols(graph)
    if not syms:
        yield None
        return
    import sympy
    point = {}
    for sym, d in syms.items():
        largest = private.sym_largest(d)
        if not isinstance(largest, sympy.Integer):     # unbounded
            largest = private.sym_hint(d)
            bool(d <= largest)     # the guard
        point[sym] = int(largest)
    fake = private.fake_tensor_mode()

    def concrete(n, v):
        if isinstance(v, torch.SymInt):
            return _size_at(v, point)
        if isinstance(v, (tuple, list)):
            return type(v)(concrete(n, x) for x in v)
        if not isinstance(v, torch.Tensor) \
                or all(isinstance(d, int) for d in tuple(v.shape) + tuple(v.stride())):
            return v
        shape = [_size_at(d, point) for d in v.shape]
        stride = [_size_at(d, point) for d in v.stride()]
        if not all(isinstance(d, int) for d in shape + stride):
            return v    # a size known only when the step runs: JointGraph refuses it
        numel = v.numel()
        if isinstance(numel, torch.SymInt) and private.sym_largest(numel) != _size_at(numel, point):
            raise CompiledError("node %s (%s) has %s elements, more at smaller inputs than at "
                                "the largest (%s); the partition cannot size it for all"
                                % (n.name, n.target, private.sym_expr(numel), point))
        with fake:
            return torch.empty_strided(shape, stride, dtype=v.dtype, device=v.device)
    was = {n: n.meta["val"] for n in graph.nodes if "val" in n.meta}
    try:
        for n, v in was.items():
            n.meta["val"] = concrete(n, v)
        yield point
    finally:
        for n, v in was.items():
            n.meta["val"] = v


def _is_alias(node):
    """A getitem of a multi-output op, or a view: no memory of its own."""
    if node.target is operator.getitem:
        return True
    t = node.target
    if private.is_op(t):
        rets = private.schema(t).returns
        return bool(rets) and rets[0].alias_info is not None and not rets[0].alias_info.is_write
    return False


def _viewed(node):
    """The value a view reads, through views of views; a part of a
    multi-output op (a getitem) is a value of its own."""
    while _is_alias(node) and node.target is not operator.getitem \
            and isinstance(node.args[0], torch.fx.Node):
        node = node.args[0]
    return node


def _views_input(node):
    """Whether node is a view of a graph input (a parameter, a batch, a
    tangent), through views of views."""
    return _is_alias(node) and node.target is not operator.getitem \
        and _viewed(node).op == "placeholder"


@functools.lru_cache(maxsize=None)
def _op_types():
    """torch's partitioner's op classes, built once."""
    return private.get("torch._functorch.partitioners.get_default_op_list")()


# Attention kernels that torch's list leaves out (the CPU's flash
# attention, cuDNN's): inductor runs them as extern kernels too, which
# write their outputs to memory.
_EXTERN_ATTENTION = frozenset(("_scaled_dot_product_flash_attention_for_cpu",
                               "_scaled_dot_product_cudnn_attention",
                               "_scaled_dot_product_fused_attention_overrideable",
                               "_cudnn_attention_forward"))


def _is_inductor_random(node):
    """Inductor's own random ops (prims registered by inductor), which
    draw from a seed the forward draws once: computed again, they give
    the same numbers. Their lowering realizes them
    (torch/_inductor/lowering.py, inductor_random)."""
    t = node.target
    return private.is_op(t) and t.namespace == "prims" and \
        t.overloadpacket.__name__ in ("inductor_random", "inductor_randint")


def _is_compute_intensive(node):
    """A matmul, a convolution, attention: the ops torch's partitioner
    never recomputes unless a memory budget makes it, and the attentions
    it does not list."""
    t = node.target
    return _op_types().is_compute_intensive(node) or (
        private.is_op(t) and t.overloadpacket.__name__ in _EXTERN_ATTENTION)


def _is_attention_backward(node):
    """An attention's backward (the CPU's flash attention, CUDA's flash,
    memory-efficient and cuDNN ones): inductor runs it as a library
    call."""
    t = node.target
    if not private.is_op(t):
        return False
    name = t.overloadpacket.__name__
    return "attention" in name and name.endswith("_backward")


def _reads_windows(node):
    """A pooling or upsampling op (max_pool2d_with_indices, inductor's
    _low_memory_max_pool_with_offsets, avg_pool2d, upsample_nearest2d,
    ...): inductor's lowering realizes its input."""
    t = node.target
    if not private.is_op(t):
        return False
    name = t.overloadpacket.__name__
    return "pool" in name or "upsample" in name


def _is_random(node):
    """Whether node draws from the generator: its op may, and it is not
    an attention called with dropout_p=0 (the CPU's flash attention is
    tagged as random whatever its dropout)."""
    if not draws_random(node.target):
        return False
    names = [a.name for a in private.schema(node.target).arguments]
    if "dropout_p" in names:
        i = names.index("dropout_p")
        p = node.args[i] if i < len(node.args) else node.kwargs.get("dropout_p", 0.0)
        return p != 0
    return True


def _layout_opt(nodes):
    """Whether inductor lays out the forward graph of these nodes
    channels-last (its GraphLowering.decide_layout_opt)."""
    decide = private.get("torch._inductor.graph.GraphLowering.decide_layout_opt")
    graph = types.SimpleNamespace(graph=types.SimpleNamespace(nodes=nodes))
    try:
        return bool(decide(graph, is_inference=False))
    except AttributeError as e:   # it reads what this torch's graph has and ours lacks
        raise private.PrivateError(private.missing(
            "GraphLowering.decide_layout_opt that reads only a graph's nodes (%s)" % e,
            "compile")) from None


# The ops whose reuse inductor's lowering realizes on a CPU wherever they
# are in a value's expression (StorageBox.should_realize_on_reuse).
_HEAVY = frozenset(("exp", "log", "log10", "log1p", "log2", "sigmoid", "tanh"))


class _Copy:
    """Inductor's channels-last copy of a placeholder (JointGraph.copies):
    a backward node of the checkmate graph without an op."""

    def __init__(self, of):
        self.of = of
        self.name = of.name + " (channels-last copy)"


class JointGraph:
    """The joint graph as a checkmate graph: a node per op that owns its
    memory (views and getitems stand for the op they alias; a view of a
    placeholder, a weight transposed, owns none), forward nodes first,
    placeholders (parameters, inputs, tangents) as fixed memory.
    num_fwd_outputs: how many of the graph's outputs the forward returns
    (AOTAutograd's; None: unknown)."""

    def __init__(self, graph, node_info, num_fwd_outputs=None):
        self.base = {}
        fwd, bwd = [], []
        self.fixed = 0
        out = next(n for n in reversed(graph.nodes) if n.op == "output")
        outs = [o for o in out.args[0] if isinstance(o, torch.fx.Node)]
        fwd_outs = [o for o in out.args[0][:num_fwd_outputs] if isinstance(o, torch.fx.Node)] \
            if num_fwd_outputs is not None else []
        # The backward returns its gradients together, so each is held to
        # its end. A gradient that is one output of several (a
        # convolution's weight gradient beside its input gradient) is a
        # node of its own bytes, made with its op (so it reads the op's
        # inputs too), and the op keeps the rest, freed after its last
        # reader.
        self.parts = {o for o in outs if o.target is operator.getitem
                      and isinstance(o.args[0], torch.fx.Node) and o.args[0].op == "call_function"
                      and not node_info.is_required_fw(o.args[0])}
        self.split = {}
        for o in self.parts:
            self.split[o.args[0]] = self.split.get(o.args[0], 0) + _bytes(o)
        for n in graph.nodes:
            shape = next((tuple(t.shape) for t in _tensors(n.meta.get("val"))
                          if not all(isinstance(d, int) for d in t.shape)), None)
            if shape is not None:   # nonzero's output, say: no size to price
                raise CompiledError("node %s (%s) has a shape known only when the step runs "
                                    "%s, which the partition cannot size" % (n.name, n.target,
                                                                             shape))
            if n.op == "placeholder":
                self.fixed += _bytes(n)
            elif n.op != "call_function":
                continue
            elif _is_alias(n) and n not in self.parts and isinstance(n.args[0], torch.fx.Node) \
                    and n.args[0].op == "call_function":
                self.base[n] = self.base.get(n.args[0], n.args[0])
            elif node_info.is_required_fw(n):
                fwd.append(n)
            else:
                bwd.append(n)
        # Inductor's layout optimization (on a CPU with oneDNN always, on
        # a GPU when its FLOP heuristic says so) runs each 2-d convolution
        # channels-last: a parameter or input of another layout is copied
        # when the forward starts, and where the backward reads it, the
        # forward saves the copy. Each copy is a backward node that comes
        # first, held until its last reader.
        self.copies = {}
        self.channels_last = _layout_opt([n for n in graph.nodes
                                          if node_info.is_required_fw(n)] + [out])
        if self.channels_last:
            read = {a for b in bwd for a in b.all_input_nodes if a.op == "placeholder"}
            for n in fwd:
                if n.target is torch.ops.aten.convolution.default:
                    for a in n.args[:2]:
                        v = a.meta.get("val") if isinstance(a, torch.fx.Node) else None
                        if isinstance(v, torch.Tensor) and a in read and v.dim() == 4 \
                                and not v.is_contiguous(memory_format=torch.channels_last):
                            self.copies.setdefault(a, _Copy(a))
        bwd[:0] = self.copies.values()
        # The graph's output node stands for the backward's end: it reads
        # every value the backward returns (a view's too, whose base may
        # have later readers), so the model holds them until then.
        bwd_set = set(bwd)
        self.sink = out
        self.returned = list(dict.fromkeys(self.owner(o) for o in outs
                                           if self.owner(o) in bwd_set))
        bwd.append(out)
        self.forward, self.backward = fwd, bwd
        self.fwd_set = set(fwd)
        self.by_name = {n.name: n for n in fwd + bwd}
        # The forward's outputs begin with the new values of the inputs it
        # writes (Embedding(max_norm) renorms its weight), copied into
        # them when it ends: a recompute would read the written input.
        # So no forward output is computed again (the model's outputs are
        # held by the caller anyway).
        self.outputs = {self.owner(o) for o in fwd_outs} & self.fwd_set
        # An input the graph itself writes (a buffer's copy_, a counter's
        # step): the backward runs after the write, so a forward node that
        # reads the input (or a view of it) computed again there would
        # read the new value (torch.compile's own partition does, and
        # trains another model than eager: docs/torch.md, Compiled mode,
        # "Results"; pytorch#197039, open, pins such reads in torch's
        # partitioner).
        written = {n.args[0] for n in graph.nodes if n.op == "call_function"
                   and n.target is torch.ops.aten.copy_.default
                   and isinstance(n.args[0], torch.fx.Node) and n.args[0].op == "placeholder"}
        # The same inputs by position among the step's (node_info.inputs
        # are AOTAutograd's flat arguments, in order): what the probe
        # copies back after its run (probe.py).
        self.written_inputs = [[i, list(n.meta["val"].shape), str(n.meta["val"].dtype)]
                               for i, n in enumerate(node_info.inputs) if n in written
                               and isinstance(n.meta.get("val"), torch.Tensor)]
        self.reads_written = set()
        for n in fwd:
            if any(a in written or _is_alias(self.owner(a)) and self.owner(a) in self.reads_written
                   for a in n.all_input_nodes):
                self.reads_written.add(n)
        # A value read through as_strided: the view names strides of the
        # value's storage, and inductor lays out a value it computes again
        # as it chooses, so the view would read other elements (a
        # GroupNorm's decomposition: another weight gradient).
        self.strided = {self.owner(n.args[0]) for n in graph.nodes
                        if n.op == "call_function" and n.target is torch.ops.aten.as_strided.default
                        and isinstance(n.args[0], torch.fx.Node)}
        # Forward nodes that inductor writes to memory when the backward
        # computes them again besides those materialized says: its
        # heuristics' (writes), found for a partition and added by
        # Partitioner.choose before it solves again.
        self.realized = set()
        # Backward nodes the model takes as fused into their readers (no
        # memory; a reader reads what they read): those writes finds
        # fused, set by Partitioner.choose.
        self.inlined = set()
        # Forward nodes the partition may not keep ("saveable": false):
        # those a selective checkpointing policy cannot tag (sac_compile).
        self.unsaveable = set()

    def pinned(self, n):
        """Whether the backward must not compute forward node n again: a
        random op (a recompute would draw other numbers, pytorch#190758),
        an output of the forward, a reader of an input the graph writes,
        or a value read through as_strided."""
        return n in self.fwd_set and (_is_random(n) or n in self.outputs
                                      or n in self.reads_written or n in self.strided)

    def owner(self, n):
        return self.base.get(n, n)

    def bytes(self, n):
        """The memory node n owns: none for a view, the output node or
        an inlined backward node, a multi-output op's less the gradients
        that own theirs."""
        if isinstance(n, _Copy):
            return _bytes(n.of)
        if n is self.sink or _is_alias(n) and n not in self.parts or n in self.inlined:
            return 0
        return _bytes(n) - self.split.get(n, 0)

    def runs_op(self, n):
        """Whether node n runs an op of the graph: not the output node,
        a gradient that is part of another node's output or a layout
        copy."""
        return n is not self.sink and n not in self.parts and not isinstance(n, _Copy)

    def ops(self):
        """The nodes that run an op of the graph (runs_op)."""
        return [n for n in self.forward + self.backward if self.runs_op(n)]

    def deps(self, n):
        if n is self.sink:
            return list(self.returned)
        if isinstance(n, _Copy):
            return []
        if n in self.parts:
            # Made with its op: the op's inputs are live until it exists.
            op = n.args[0]
            return [op] + self.deps(op)
        out = []
        for a in n.all_input_nodes:
            if a in self.copies and n not in self.fwd_set:
                a = self.copies[a]
            elif a.op != "call_function":
                continue
            a = self.owner(a)
            if a not in out:
                out.append(a)
        return out

    def held_deps(self, n):
        """deps(n) in the memory model: an inlined backward node stands
        for what it reads, which is read where n reads it."""
        out, stack = [], list(reversed(self.deps(n)))
        while stack:
            d = stack.pop()
            if d in self.inlined:
                stack.extend(reversed(self.deps(d)))
            elif d not in out:
                out.append(d)
        return out

    def recomputed(self, keep):
        """The forward nodes the backward computes again when the forward
        keeps the values of `keep` (fx nodes): those it reaches from its
        own nodes through forward nodes not kept."""
        out, stack = set(), [a for b in self.backward for a in self.deps(b)]
        while stack:
            n = stack.pop()
            if n in out or n not in self.fwd_set or n in keep:
                continue
            out.add(n)
            stack.extend(self.deps(n))
        return out

    def cost(self, n):
        if not self.runs_op(n):
            return 0
        vals = _MetaVals()
        try:
            return max(1, flops(n, vals))
        except Exception:   # an op the table cannot size: one FLOP per element
            return max(1, sum(t.numel() for t in _tensors(n.meta.get("val"))))

    def materialized(self, n, program=None):
        """Whether the backward, computing n again, holds its value in
        memory: a matmul's or a convolution's output (an extern kernel
        writes it), the numbers of inductor's own random ops (its
        lowering writes them to a buffer, so that every reader sees the
        same ones), or a value one of them or a pooling or upsampling op
        reads (a kernel's input is a buffer; a window's reader reads each
        element several times, and inductor's lowering writes its input
        to memory first). Inductor fuses the other values computed again
        into the kernels that read them, unless its heuristics write them
        (writes; self.realized holds those found so far, which the
        partition's model counts). With `program` (the nodes the
        backward runs), the question is writes' for that program: only a
        reader there counts (the model takes a value a pooling op reads
        as written whether or not the backward computes the pooling op
        again), and self.realized does not, since a value an earlier
        partition's backward wrote may be fused in this one, its readers
        then reading what it reads (BERT's softmax: its exp, written
        where the backward also summed it, fused into the softmax's
        output where the sum was saved, which inductor then writes)."""
        if program is None and n in self.realized or _is_compute_intensive(n) \
                or _is_inductor_random(n):
            return True
        users, seen = list(n.users), set()
        while users:
            u = users.pop()
            if u in seen:
                continue
            seen.add(u)
            if _is_alias(u):
                users.extend(u.users)
            elif u.op == "call_function" and (_is_compute_intensive(u) or _reads_windows(u)) \
                    and (program is None or u in program):
                return True
        return False

    def writes(self, again):
        """(written, fused) when the backward computes the forward nodes
        of `again`. written: those of `again` whose values inductor
        writes to memory in the backward: the materialized ones (by a
        reader the backward runs: materialized(n, program)), every
        reduction's, and those its lowering's heuristics realize rather
        than fuse into each reader (torch/_inductor/graph.py, run_node;
        ir.py, StorageBox): a value of several readers whose fused
        expression reads more than realize_reads_threshold buffers or,
        on a CPU, holds an exp, log, sigmoid or tanh; and a value whose
        expression reads more than the accumulated-reads threshold. A
        buffer is a backward input (a saved value, a placeholder) or a
        value written; a value fused into its reader reads the buffers
        its own expression reads. fused: the backward's own nodes whose
        values inductor keeps inside the kernels that read them, writing
        no buffer: a pointwise op's value that the same rules would not
        write, and that the backward does not return. Inductor's count
        of an expression's ops (has_large_inner_fn) is not modelled."""
        program = set(again) | set(self.backward)
        cpu = any(t.device.type == "cpu" for n in self.forward + self.backward
                  if not isinstance(n, _Copy) for t in _tensors(n.meta.get("val")))
        setting = private.inductor_setting
        few = setting("realize_reads_threshold")
        many = setting("realize_acc_reads_threshold") or setting(
            "realize_cpu_acc_reads_threshold" if cpu else "_realize_acc_reads_threshold_default")
        written, fused, reads, heavy = set(), set(), {}, {}

        def readers(n):
            """n's readers in the backward program, a view counted as one."""
            count = 0
            for u in n.users:
                if u in program or _is_alias(u) and any(
                        w in program or _is_alias(w) for w in u.users):
                    count += 1
            return count

        for n in self.forward + self.backward:
            forward = n in self.fwd_set
            if forward and n not in again or not self.runs_op(n) or _is_alias(n):
                continue
            t = n.target
            op = private.is_op(t)
            r, h = set(), op and t.overloadpacket.__name__ in _HEAVY
            for a in n.all_input_nodes:
                a = _viewed(a)
                if a in reads and a not in written:
                    r |= reads[a]
                    h = h or heavy[a]
                elif a.op != "get_attr":
                    r.add(a)
            reads[n], heavy[n] = r, h
            realize = self.materialized(n, program) or op and torch.Tag.reduction in t.tags \
                or len(r) > many or readers(n) > 1 and (len(r) > few or cpu and h)
            if not forward and not realize:
                # Only a pointwise op's value, one value, not returned.
                realize = not op or torch.Tag.pointwise not in t.tags \
                    or not isinstance(n.meta.get("val"), torch.Tensor) \
                    or n in self.returned or any(u.op == "output" for u in n.users)
                if not realize:
                    fused.add(n)
            if realize:
                written.add(n)
        return {n for n in written if n in self.fwd_set}, fused

    def passes(self, n):
        """How many passes over memory saving forward node n's value
        adds to a step: the backward's read, and the forward's write
        unless the forward writes it anyway (an extern kernel's output,
        one of the forward's outputs)."""
        return 1 if _is_compute_intensive(n) or n in self.outputs else 2

    def save_costs(self, per_pass):
        """Forward node -> the cost of saving its value: per_pass(n), a
        pass over its bytes, times passes(n); a view owns no bytes."""
        return {n: per_pass(n) * self.passes(n) for n in self.forward if not _is_alias(n)}

    def kernels(self):
        """The forward nodes that the backward, computing them again,
        computes in a kernel of their own, a launch more: the values it
        holds (materialized) that an op makes, not views."""
        return [n for n in self.forward
                if self.runs_op(n) and not _is_alias(n) and self.materialized(n)]

    def keep_all(self):
        """The forward nodes whose values the backward reads."""
        return {d for b in self.backward for d in self.deps(b) if d in self.fwd_set}

    def extern_backward(self):
        """The backward's nodes that inductor runs as library calls
        (_is_compute_intensive, _is_attention_backward), whose own
        buffers it does not plan."""
        return [n for n in self.backward if self.runs_op(n)
                and (_is_compute_intensive(n) or _is_attention_backward(n))]

    def held_at(self, workspaces):
        """workspaces (backward op -> bytes) on the nodes where the model
        holds each op's outputs all at once: an op with returned parts
        (self.parts) at its last part, else at the op itself."""
        last = {}
        for n in self.backward:
            if n in self.parts:
                last[n.args[0]] = n
        return {last.get(n, n): b for n, b in workspaces.items()}

    def to_json(self, name, costs=None, save_costs=None, workspaces=None):
        """(the checkmate graph as a dict, node -> cost): costs given
        (node -> cost), or FLOPs; save_costs (node -> cost of keeping
        its value for the backward) on the forward nodes; workspaces
        (backward node -> bytes its op holds while it runs, placed by
        held_at) on the backward's."""
        nodes = []
        save_costs, workspaces = save_costs or {}, workspaces or {}
        costs = costs or {n: self.cost(n) for n in self.forward + self.backward}
        total = sum(costs.values())
        reachable = self.recomputed(set())   # what the backward could compute again
        for n in self.forward + self.backward:
            c = costs[n]
            # A pinned node the backward could compute again costs the
            # whole step, so a plan recomputes it only when nothing else
            # fits (saved_values keeps it then). One it cannot keeps its
            # cost: a larger sum would loosen the solver's relative gap.
            if n in reachable and self.pinned(n):
                c = total
            node = {"name": n.name, "cost": c, "memory": self.bytes(n),
                    "deps": [d.name for d in self.held_deps(n)]}
            if n not in self.fwd_set:
                node["backward"] = True
            elif self.materialized(n):
                node["materialized"] = True
            if n in self.unsaveable:
                node["saveable"] = False
            if save_costs.get(n):
                node["save_cost"] = save_costs[n]
            if workspaces.get(n) and n not in self.fwd_set:
                node["workspace"] = workspaces[n]
            nodes.append(node)
        return {"format": "checkmate-graph", "version": 1, "name": name,
                "fixed_memory": self.fixed, "nodes": nodes}, costs


class _MetaVals:
    """node -> its example value (meta["val"]), as cost.flops reads them."""

    def __getitem__(self, n):
        return n.meta.get("val")


def saved_values(jg, keep, inputs):
    """The values the forward saves: those of `keep` (fx nodes the
    partition keeps), every input (a parameter, a batch: fixed memory,
    kept anyway) and every pinned node (JointGraph.pinned) that the
    backward would otherwise recompute."""
    # A view of an input (a weight transposed) costs nothing to compute
    # again, and saved it would mislead inductor: its estimate of the
    # backward's memory, which orders the backward's kernels
    # (reorder_for_peak_memory), counts a saved value as memory the
    # backward frees after its last read (torch/_inductor/memory.py,
    # get_freeable_input_buf), but a view of a parameter frees nothing.
    keep = {n for n in keep if jg.pinned(n) or not _views_input(n)}
    while True:
        pinned = {n for n in jg.recomputed(keep) if jg.pinned(n)}
        if not pinned:
            break
        keep |= pinned
    # Views and getitems: the backward takes a multi-output op's parts.
    out = []
    for n in jg.forward:
        if n not in keep:
            continue
        if isinstance(n.meta.get("val"), torch.Tensor):
            out.append(n)
        else:
            out.extend(u for u in n.users if u.target is operator.getitem
                       and isinstance(u.meta.get("val"), torch.Tensor))
    return list(inputs) + out


# How many times Partitioner.choose solves a joint graph at most.
_ROUNDS = 3


class Partitioner:
    """Inductor's custom_partitioner_fn: torch's min-cut partitioner with
    its choice of saved values replaced by `checkmate partition`'s. Each
    joint graph's figures are appended to self.info."""

    def __init__(self, budget, time_limit, binary, cache, cost="flops", uuid=None,
                 unsaveable=None):
        self.settings = (budget, time_limit, binary, cache, cost)
        # JointGraph -> the forward nodes it may not keep, or None.
        self._unsaveable = unsaveable
        # Whether a budget no partition fits is said with the least that
        # does (_least_fitting: up to 8 solves more).
        self.explain = True
        # (JointGraph, costs, save costs, node_info, the keep-all cost) of
        # the last partition made (figures_of).
        self._model = None
        self.info = []
        self._num_fwd_outputs = None   # the partition's, set by __call__
        self._uuid = uuid
        # Bytes that replace the budget while the backend partitions a
        # step again, its measured peak over the budget (_held), or while
        # sac_compile partitions a region at its other budgets.
        self.lowered = None
        # The sizes the last partition was made at ({symbol: size}, None
        # for a static graph: _sized).
        self.point = None

    def uuid(self):
        """For AOTAutograd's cache key: cache.partition_uuid (and the
        lowered budget), or None (backend() then turns that cache off)."""
        if self._uuid is None or self.lowered is None:
            return self._uuid
        return "%s lowered to %d" % (self._uuid, self.lowered)

    def choose(self, joint_graph, node_info, memory_budget=1, **kwargs):
        with _sized(joint_graph) as point:
            saved = self._choose(joint_graph, node_info, **kwargs)
        self.info[-1]["sized_at"] = point and {str(k): v for k, v in point.items()}
        self.point = point
        return saved

    def _choose(self, joint_graph, node_info, **_):
        budget, time_limit, binary, cache, cost = self.settings
        n, why = dtype_mismatch(joint_graph)
        if n is not None:
            raise CompiledError("node %s (%s): %s" % (n.name, n.target, why))
        jg = JointGraph(joint_graph, node_info, self._num_fwd_outputs)
        if self._unsaveable is not None:   # a pinned node is kept anyway (saved_values)
            jg.unsaveable = {n for n in self._unsaveable(jg) if not jg.pinned(n)}
        # Inductor orders two ops that draw from the generator (aten's
        # bernoulli, rand_like; dropout under fallback_random) by their
        # data only: a partition that changes the forward's outputs can
        # swap them, and the step draws other numbers (two
        # torch.bernoulli calls, found by the fuzzer). One draw (inductor_seeds, which
        # nn.Dropout uses by default) keeps the step's numbers.
        draws = [n for n in jg.forward if _is_random(n)]
        if len(draws) > 1:
            raise CompiledError(
                "the step draws random numbers in %d ops (%s), which inductor may run in "
                "another order, drawing other numbers; use nn.Dropout with inductor's default "
                "random, or remat without compile" % (
                    len(draws), ", ".join(sorted({str(n.target) for n in draws}))))
        jg.inlined = jg.writes(set())[1]
        doc, op_costs = jg.to_json("joint graph")
        if cost == "time":
            op_costs, saves, launch = self._times(joint_graph, jg, doc, op_costs, cache)
        else:
            rates = self._rates(jg, op_costs, cache)
            saves = jg.save_costs(lambda n: rates["flops_per_byte"] * jg.bytes(n))
            launch = rates["flops_per_launch"]
        workspaces = jg.held_at(self._workspaces(joint_graph, jg, doc, cache))
        memory = {jg.by_name[n["name"]]: n["memory"] for n in doc["nodes"]}
        order = jg.forward + jg.backward
        ca_peak = steps_peak(in_order_steps(order, jg.held_deps), memory,
                             workspaces) + jg.fixed
        arg = solvemod.budget_arg(budget, jg.fixed, ca_peak) if self.lowered is None \
            else str(self.lowered)
        # Solved again, up to _ROUNDS times, while inductor's heuristics
        # write values the model took as fused: forward values the
        # partition computes again, and backward values that read them
        # (JointGraph.writes). Each round counts those found so far as
        # written, and prices the launches of the forward's. Where a
        # round finds no partition, the last one found stands (its model
        # counts less).
        found = None
        for rounds in range(1, _ROUNDS + 1):
            costs = dict(op_costs)
            # A matmul's measured time holds its launch already.
            for n in jg.kernels():
                if cost != "time" or not _is_compute_intensive(n):
                    costs[n] += launch
            doc, costs = jg.to_json("joint graph", costs, saves, workspaces)
            try:
                part, hit = solvemod.partition(binary, doc, arg, time_limit, cache)
            except solvemod.SolveError as e:
                if found is None and not self.explain:
                    raise
                if found is None:
                    raise solvemod.annotated(e, _least_fitting(
                        doc, int(arg) if arg.isdigit() else 0, jg.fixed, ca_peak, time_limit,
                        binary, cache)) from None
                break
            missing = [n for n in part["saved"] if n not in jg.by_name]
            if missing:
                raise CompiledError("the partition names node %s, which the joint graph lacks"
                                    % missing[0])
            saved = saved_values(jg, [jg.by_name[n] for n in part["saved"]], node_info.inputs)
            again = jg.recomputed({jg.owner(n) for n in saved})
            found = part, hit, saved, again, costs, rounds
            written, fused = jg.writes(again)
            new = {n for n in written if not jg.materialized(n)}
            unfused = jg.inlined - fused
            if not new and not unfused:
                break
            jg.realized |= new
            jg.inlined -= unfused
        part, hit, saved, again, costs, rounds = found
        floor = self._cost(jg, jg.keep_all(), costs, saves)
        self._model = jg, costs, saves, node_info, floor
        cost = self._cost(jg, saved, costs, saves)
        info = {"budget": part["budget"], "plan_peak": part["memory"],
                "least": part["least_memory"],
                "workspace": max(workspaces.values(), default=0),
                "cost": cost, "overhead": cost / floor if floor else 1.0,
                "recomputed": len(again),
                "strategy": "partition", "status": part["status"],
                "fixed_memory": jg.fixed, "checkpoint_all_peak": ca_peak,
                "nodes": len(doc["nodes"]), "rounds": rounds,
                "written_inputs": jg.written_inputs,
                "saved": sum(1 for n in saved if n not in node_info.inputs),
                "saved_bytes": _saved_bytes(saved, node_info),
                "cached": hit if cache is not None else None}
        self.info.append(info)
        return saved

    def figures_of(self, keep):
        """(cost, overhead, saved bytes) of the forward keeping the forward
        nodes of keep (and what saved_values adds) in the model of the last
        partition made (info's figures of the same names)."""
        jg, costs, saves, node_info, floor = self._model
        saved = saved_values(jg, keep, node_info.inputs)
        cost = self._cost(jg, saved, costs, saves)
        return cost, cost / floor if floor else 1.0, _saved_bytes(saved, node_info)

    @staticmethod
    def _times(joint_graph, jg, doc, flop_costs, cache):
        """(node -> measured milliseconds, forward node -> milliseconds
        of saving its value: half a copy's time per pass, milliseconds of
        a kernel's launch), jointcost.py's, from the cache where it has
        them (keyed by the graph, its FLOP graph, the device, the threads
        and torch's version)."""
        from .cache import cost_key, kept_or_measured
        from .jointcost import copy_costs, device_of, launch_ms, measure
        nodes = jg.ops()
        device = device_of(nodes)
        key = cost_key(str(joint_graph), doc, str(device), torch.get_num_threads(),
                       torch.__version__,
                       kind="joint graph: times, copies and a launch, real tensors")

        def valid(kept):
            return isinstance(kept.get("ops"), dict) and isinstance(kept.get("copies"), dict) \
                and isinstance(kept.get("launch"), (int, float)) \
                and all(n.name in kept["ops"] for n in nodes) \
                and all(n.name in kept["copies"] for n in jg.forward)

        def measured():
            by_size = {}   # copies by (numel, dtype), for both
            times = measure(nodes, flop_costs, _is_compute_intensive, copies=by_size)
            copies = copy_costs(jg.forward, copies=by_size)
            return {"ops": {n.name: ms for n, ms in times.items()},
                    "copies": {n.name: ms for n, ms in copies.items()},
                    "launch": launch_ms(device)}
        kept = kept_or_measured(cache, key, valid, measured)
        times = {n: kept["ops"][n.name] for n in nodes}
        copies = {n: kept["copies"][n.name] for n in jg.forward}
        times.update({n: 0.0 for n in jg.forward + jg.backward if n not in times})
        return times, jg.save_costs(lambda n: copies[n] / 2), kept["launch"]

    @staticmethod
    def _workspaces(joint_graph, jg, doc, cache):
        """Backward node -> the bytes its library call holds while it
        runs (jointcost.workspaces: measured on random tensors in
        inductor's layout), from the cache where it has them (keyed as
        _times's)."""
        from .cache import cost_key, kept_or_measured
        from .jointcost import device_of, workspaces
        nodes = jg.extern_backward()
        if not nodes:
            return {}
        kind = "joint graph: workspaces of the backward's library calls, real tensors" + \
            (", each layout inductor may choose" if jg.channels_last else "")
        key = cost_key(str(joint_graph), doc, str(device_of(nodes)), torch.get_num_threads(),
                       torch.__version__, kind=kind)

        def valid(kept):
            return isinstance(kept.get("workspaces"), dict) \
                and all(isinstance(kept["workspaces"].get(n.name), int) for n in nodes)

        def measured():
            got = workspaces(nodes, jg.channels_last, jg.copies)
            return {"workspaces": {n.name: b for n, b in got.items()}}
        kept = kept_or_measured(cache, key, valid, measured)
        return {n: kept["workspaces"][n.name] for n in nodes}

    @staticmethod
    def _rates(jg, flop_costs, cache):
        """jointcost.device_rates on the graph's device, for the dtype of
        most of its compute-intensive FLOPs (float32 when none)."""
        from .jointcost import device_of, device_rates
        by_dtype = {}
        for n in jg.ops():
            v = n.meta.get("val")
            if _is_compute_intensive(n) and isinstance(v, torch.Tensor) \
                    and v.dtype.is_floating_point:
                by_dtype[v.dtype] = by_dtype.get(v.dtype, 0) + flop_costs[n]
        dtype = max(by_dtype, key=by_dtype.get) if by_dtype else torch.float32
        return device_rates(device_of(jg.ops()), dtype, cache)

    @staticmethod
    def _cost(jg, saved, costs, saves):
        """The step's cost when the forward saves `saved`: every node of
        costs once, again each the backward computes again, and the save
        cost of each saved value that the backward, or a node it computes
        again, reads."""
        owners = {jg.owner(n) for n in saved}
        again = jg.recomputed(owners)
        read = {d for n in jg.backward + list(again) for d in jg.deps(n)}
        return sum(costs.values()) + sum(costs.get(n, 0) for n in again) \
            + sum(saves.get(n, 0) for n in owners & read)

    def __call__(self, gm, joint_inputs, **kwargs):
        partitioners = private.partitioners()
        self._num_fwd_outputs = kwargs.get("num_fwd_outputs")
        with _patch_lock:
            orig = partitioners.choose_saved_values_set
            partitioners.choose_saved_values_set = self.choose
            try:
                return partitioners.min_cut_rematerialization_partition(gm, joint_inputs,
                                                                        **kwargs)
            finally:
                partitioners.choose_saved_values_set = orig


def _least_fitting(doc, failed, fixed, peak, time_limit, binary, cache, probes=8):
    """Where no partition fits a budget: the least budget at which one is
    found, by bisection between the budget that failed (failed bytes, or
    0) and the checkpoint-all peak, to 2% of the activations (peak less
    fixed memory), at most `probes` solves of at most 10 s; in words, in
    bytes and as fixed memory + a fraction of the activations."""
    def fits(budget):
        try:
            return solvemod.partition(binary, doc, str(budget), min(time_limit, 10), cache
                                      )[0]["memory"]
        except solvemod.SolveError:
            return None
    lo, hi = max(failed, fixed), fits(peak)
    if hi is None:
        return "none is found at the checkpoint-all peak (%d) either" % peak
    for _ in range(probes):
        if hi - lo <= 0.02 * (peak - fixed):
            break
        mid = (lo + hi) // 2
        got = fits(mid)
        if got is None:
            lo = mid
        else:
            hi = got
    act = (hi - fixed) / (peak - fixed) if peak > fixed else 1.0
    return ("the least budget that fits is about %d bytes, fixed memory + %.2f of the "
            "activations (a partition found at %d, none found at %d)" % (hi, act, hi, lo))


def _saved_bytes(saved, node_info):
    """Bytes of the saved values besides the inputs and their views."""
    inputs = set(node_info.inputs)

    def of_input(n):
        n = _viewed(n)
        return n in inputs or n.op == "placeholder"
    return sum(_bytes(n) for n in set(saved) if not of_input(n))


_LOG_METHOD = re.compile(r"(debug|info|warning|warn|error|exception|critical|fatal|log)(_\w+)?$")


def quiet_logging():
    """A context in which dynamo takes the methods of logging.Logger as
    calls that do nothing, instead of breaking the graph there: those of
    logging and those libraries add to the class (transformers'
    warning_once, which a Hugging Face LM called with labels= runs
    inside its forward). A message the step would log is not logged
    when the step is compiled (torch.compile, breaking the graph there,
    logs it). Where this torch's dynamo has no such setting, a
    nullcontext: the graph breaks, and compile=True says where."""
    if not private.has("torch._dynamo.config.ignore_logging_functions"):
        return contextlib.nullcontext()
    cfg = private.dynamo_config()
    ignored = cfg.ignore_logging_functions
    ours = {f for name, f in vars(logging.Logger).items()
            if callable(f) and _LOG_METHOD.match(name)}
    return cfg.patch(ignore_logging_functions=set(ignored) | ours)


_compiling = contextvars.ContextVar("checkmate_compiling", default=False)
_FUSION_DISTANCE = 8
_BUFFER_REUSE = False   # inductor's allow_buffer_reuse in _lowering (bench/torch_lowering.py)
_TAG = (" checkmate: no buffer reuse, horizontal fusion within %d, addmm folds in place"
        % _FUSION_DISTANCE)


def _install(owner, name, ours):
    """Replace inductor's rule owner.name by one that asks
    ours(rule, *args) while checkmate's backend lowers a program
    (_compiling) and inductor's rule otherwise; the new rule is marked
    `checkmate` and keeps inductor's as `inductors` (the tests ask it
    too). Once: nothing where owner has ours already."""
    rule = getattr(owner, name, None)
    if rule is None:
        raise private.PrivateError(private.missing("%r's %s" % (owner, name), "compile"))
    if getattr(rule, "checkmate", False):
        return

    def installed(*args):
        return ours(rule, *args) if _compiling.get() else rule(*args)
    installed.checkmate = True
    installed.inductors = rule
    setattr(owner, name, installed)


def _fold_in_place():
    """While checkmate's backend lowers a program (_lowering), inductor
    folds a sum of a matmul's output into an addmm only where no op runs
    between the matmul and the sum.

    Inductor's post-grad passes replace add(mm(a, b), c) by
    addmm(c, a, b) (fx_passes/post_grad.py, addmm), which runs the matmul
    where the sum was, holding a and b until then; the model runs each
    op where the joint graph has it. A tied weight's gradient is such a
    sum: the decoder's weight gradient comes early in the backward and
    the embedding's last, and the fold would hold the logits' gradient
    across the whole backward, above the model. Invariant: a matmul is
    folded only into a sum with nothing but views between them, so it
    runs where the joint graph has it. Installed once; other compiles
    keep inductor's rule (docs/torch.md, Compiled mode, Memory)."""
    passes = private.get("torch._inductor.fx_passes.post_grad.pass_patterns")
    entries = [e for p in passes for es in p.patterns.values() for e in es
               if getattr(getattr(e, "handler", None), "__name__", "") == "addmm"]
    if not entries:
        raise private.PrivateError(private.missing(
            "post-grad pattern named addmm (the fold of a matmul into a sum)", "compile"))
    for e in entries:
        _install(e, "extra_check", lambda rule, match: _next_to_sum(match.output_node())
                 and rule(match))


def _next_to_sum(add):
    """Whether every node between add's matmul argument and add is a
    view (or a getitem): nothing that runs or holds memory."""
    mm = next((a for a in add.args if isinstance(a, torch.fx.Node)
               and a.target is torch.ops.aten.mm.default), None)
    if mm is None:
        return False
    n = mm.next
    while n is not add:
        if n.op == "call_function" and not _is_alias(n):
            return False
        n = n.next
    return True


def _distance(node1, node2):
    """How far apart two of inductor's scheduler nodes (or fused groups)
    are in the program's order, as its are_long_distant_nodes counts."""
    return max(abs(node1.min_order - node2.max_order), abs(node2.min_order - node1.max_order))


@functools.lru_cache(maxsize=None)
def _choices():
    """Inductor's heuristics (InductorChoices, the class through which it
    takes heuristics of others: V.set_choices_handler) with horizontal
    fusion, of two kernels that do not feed each other, only where they
    are at most _FUSION_DISTANCE apart in the program's order; in place
    while checkmate's backend lowers a program (_lowering).

    A fused kernel runs where its first part ran, so a horizontal fusion
    moves the later part ahead, and its outputs are held from there.
    Inductor refuses such fusions beyond 64 nodes
    (scheduler.are_long_distant_nodes), which keeps recomputes of
    checkpointed regions apart. In a plan's backward a recompute stands
    just before its first reader, and a layer is fewer nodes than that,
    so inductor would fuse the next layer's recomputes into the current
    layer's kernels and hold them above the model. The distance
    (_FUSION_DISTANCE) is a measured choice, not derived from the
    model's timeline (docs/torch.md, Compiled mode, Memory)."""
    base = private.get("torch._inductor.choices.InductorChoices")
    # the distance as inductor's own heuristic measures it
    private.get("torch._inductor.scheduler.Scheduler.are_long_distant_nodes")

    class Choices(base):
        @staticmethod
        def can_fuse_horizontal(scheduler, node1, node2, score):
            return _distance(node1, node2) <= _FUSION_DISTANCE and \
                base.can_fuse_horizontal(scheduler, node1, node2, score)
    return Choices


@contextlib.contextmanager
def _lowering():
    """Inductor lowering a program of checkmate's partition: no buffer
    reused (its config allow_buffer_reuse), horizontal fusion limited
    (_choices), a matmul folded into a sum only in place
    (_fold_in_place), and a tag in inductor's cache key
    (torch.compiler.config.cache_key_tag), so that its cache never gives
    code of the same program lowered without those rules (by an earlier
    version).

    Inductor's wrapper code keeps a freed buffer alive until a later
    buffer of the same size and layout takes its memory
    (codegen/wrapper.py, AllocateLine.plan), where the partition's model
    frees it after its last reader. It allows that where its estimate of
    the program's peak has room (AllocateLine.should_reuse_buffer), and
    the estimate is not the real peak: it counts an input read in parts
    (a saved matmul output read as q, k and v) by one part
    (memory.py, get_freeable_input_buf) and a kernel that writes its
    output over its input as holding both, so the buffers it holds can
    put the step over the model. Without reuse every buffer is freed
    after its last reader and allocated afresh, as the model counts
    (what that costs: docs/torch.md, Compiled mode, Memory)."""
    cc = torch.compiler.config
    token = _compiling.set(True)
    try:
        with cc.patch(cache_key_tag=cc.cache_key_tag + _TAG), \
                private.inductor_config().patch(allow_buffer_reuse=_BUFFER_REUSE), \
                private.get("torch._inductor.virtualized.V.set_choices_handler")(_choices()()):
            yield
    finally:
        _compiling.reset(token)


_COMPILES = 3   # the most partitions of one step while its measured peak is over the budget
_SLACK = 65536  # bytes a measured peak may exceed the budget by (_held)


def _placeholder_values(gm):
    """The values dynamo traced gm's inputs with (fake tensors of symbolic
    sizes, SymInts)."""
    return [n.meta.get("example_value", n.meta.get("val")) for n in gm.graph.nodes
            if n.op == "placeholder"]


def _at_point(args, gm, point):
    """The call's arguments at the sizes a partition of symbolic sizes
    was made at (point: Partitioner.point), for the measured run: a size
    passed as an int takes its size there, and a tensor of symbolic sizes
    grows along them by repeating its own values (dynamic.py's way: an
    index stays an index). The call's own arguments where the partition
    is static, or where a tensor to grow is not contiguous (the compiled
    step may assume its strides)."""
    if not point:
        return args
    out = []
    for a, e in zip(args, _placeholder_values(gm)):
        if isinstance(e, torch.SymInt):
            a = _size_at(e, point)
        elif isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) \
                and any(isinstance(d, torch.SymInt) for d in e.shape):
            if not a.is_contiguous():
                return args
            a = grown_tensor(a, {i: _size_at(d, point) for i, d in enumerate(e.shape)
                                 if isinstance(d, torch.SymInt)})
        out.append(a)
    return out


def own_code(model, name):
    """A function that calls model, of a code object of its own, named
    name_N.

    Dynamo keeps the code it compiles with the code object of the
    function compiled, up to torch._dynamo.config.recompile_limit (8)
    versions, and a new backend is a new version: compiling the model
    itself, the ninth remat(compile=True) of a module class in one
    process (a sweep over budgets) failed, and none of the versions went
    with the remat that made them. Here each compile's versions are its
    own (remat's step, sac_compile's region). Its name is its own too:
    dynamo keeps which sizes changed between calls (and compiles them as
    symbols from then on) by a code's file, line and name, which a copy
    would share with every other one's."""
    def step(*args, **kwargs):
        return model(*args, **kwargs)
    step.__code__ = step.__code__.replace(co_name="%s_%d" % (name, next(_steps)))
    return step


_steps = itertools.count()


def _held(part, compiled, gm, example_inputs, args, out):
    """The compiled step `out`, run once on the call's arguments `args`
    (at the sizes a partition of symbolic sizes was made at: _at_point)
    and measured (probe.py); while its peak is over the budget by more
    than _SLACK, partitioned and compiled again (compiled(gm,
    example_inputs)) at a budget lowered by what the model missed, up to
    _COMPILES partitions in all. The model counts inductor's buffers by rules
    (JointGraph), and a compiler may hold more than they say; the
    measurement, not the rules, is what a budget is held to. Still over
    after the last partition, or no partition at the lowered budget: the
    step measured last, one warning, the figures in plan_info."""
    from .probe import probe
    devices = [t.device for t in args if isinstance(t, torch.Tensor)]
    device = next((d for d in devices if d.type == "cuda"), torch.device("cpu"))
    budget = part.info[-1]["budget"]
    for compiles in range(1, _COMPILES + 1):
        info = part.info[-1]
        solved = info["budget"]
        measured = probe(out, _at_point(args, gm, part.point),
                         info.get("written_inputs"), device)
        info.update(budget=budget, solved_budget=solved, compiles=compiles)
        if measured is None:   # no input needs a gradient: nothing to measure
            info["measured_peak"] = None
            return out
        peak = info["fixed_memory"] + measured["peak"] - measured["tangents"]
        info["measured_peak"] = peak
        if peak <= budget + _SLACK:
            return out
        over = "compile=True: the compiled step measured %d bytes, %d over the budget (%d), " \
            "%d over its model" % (peak, peak - budget, budget, peak - info["plan_peak"])
        if compiles == _COMPILES:
            warnings.warn("%s, after %d partitions (plan_info['measured_peak'])"
                          % (over, compiles), stacklevel=2)
            return out
        lowered = min(budget - (peak - info["plan_peak"]), solved - (peak - budget))
        if lowered < info["least"]:
            warnings.warn("%s; kept, since no partition fits %d (the least: %d)"
                          % (over, lowered, info["least"]), stacklevel=2)
            return out
        part.lowered = lowered
        made = len(part.info)
        try:
            # a graph of symbolic sizes compiles again from its own
            # placeholders' values (the call's tensors would fix its sizes)
            again = compiled(gm, _placeholder_values(gm) if part.point
                             else example_inputs)
        except solvemod.SolveError as e:
            del part.info[made:]
            warnings.warn("%s; kept, since at %d: %s" % (over, part.lowered, e), stacklevel=2)
            return out
        finally:
            part.lowered = None
        out = again


def backend(budget, time_limit, binary, cache, cost="flops"):
    """A torch.compile backend: inductor with a Partitioner of these
    settings (backend.partitioner), given through its partitioner hook
    (config.custom_partitioner_fn)."""
    ic, aot = private.inductor_config(), private.functorch_config()
    compile_fx = private.get("torch._inductor.compile_fx.compile_fx")
    compile_fx_inner = private.get("torch._inductor.compile_fx.compile_fx_inner")

    class CheckmatePartitioner(Partitioner,
                               private.get("torch._inductor.custom_graph_pass.CustomPartitionerFn")):
        def __reduce__(self):
            # Inductor pickles its config into its cache keys. The graphs
            # it compiles are the partition's already, whatever the
            # settings that made it (a budget may be a function); one of
            # symbolic sizes holds the guard of the sizes it was made at
            # where none was declared (_sized), which another
            # partition's graph of the same code must not take.
            return (str, ("checkmate partitioner at %s" % sorted(
                (str(k), v) for k, v in (self.point or {}).items()),))

    from .cache import info_key, partition_uuid
    # Only where inductor's hash, which AOTAutograd's key extends, holds
    # the partitioner's uuid.
    keyed = private.has(
        "torch._inductor.codecache.FxGraphHashDetails._get_custom_partitioner_fn_detail")
    uuid = partition_uuid(binary, budget, time_limit, cost) \
        if cache is not None and keyed else None
    part = CheckmatePartitioner(budget, time_limit, binary, cache, cost, uuid)
    part.graphs = 0   # the graphs partitioned (dynamo's compiles of the step)

    _fold_in_place()

    def lower(*args, **kwargs):
        # Inductor's compiler of each program: the forward's, and the
        # backward's, lowered at the first backward (after compile_step).
        with _lowering():
            return compile_fx_inner(*args, **kwargs)

    def compile_step(gm, example_inputs, from_cache):
        with ic.patch(custom_partitioner_fn=part), \
                aot.patch(enable_autograd_cache=from_cache):
            return compile_fx(gm, example_inputs, inner_compile=lower)

    def compiled(gm, example_inputs):
        # AOTAutograd's cache, whose key holds the partitioner's uuid
        # (everything that decides the partition), gives a second process
        # the compiled forward and backward without tracing the joint
        # graph or partitioning it: the partition's figures (plan_info)
        # come from checkmate's cache then, and where it lacks them the
        # step compiles again without AOTAutograd's cache. Without a
        # uuid (no cache, a budget function of unknown reads, a torch
        # whose key would not hold it), or where the user turned it off,
        # that cache is off and only inductor's serves.
        made = len(part.info)
        if part.uuid() is None or not aot.enable_autograd_cache:
            return compile_step(gm, example_inputs, False)
        key = info_key(part.uuid(), gm.code, repr(Inputs(example_inputs, None).key()),
                       repr(autocast_key()))
        out = compile_step(gm, example_inputs, True)
        if len(part.info) == made:
            kept = cache.get(key)
            if kept is not None:
                part.info.append(dict(kept, cached=True))
                return out
            out = compile_step(gm, example_inputs, False)
        if len(part.info) > made:
            cache.put(key, part.info[-1])
        return out

    def checkmate_inductor(gm, example_inputs):
        made = len(part.info)
        out = compiled(gm, example_inputs)
        if len(part.info) == made:   # no backward: nothing partitioned
            return out
        part.graphs += 1
        # Measured at the first call, outside dynamo's compile (where the
        # backward could not compile), before the call runs.
        held = {"graph": gm}

        def step(*args):
            if "step" not in held:
                held["step"] = _held(part, compiled, held.pop("graph"), example_inputs, args,
                                     out)
            return held["step"](*args)
        return step
    checkmate_inductor.partitioner = part
    return checkmate_inductor


"""Selective activation checkpointing policies chosen for a budget.

sac_policy(module, args, kwargs, budget=...) returns the context_fn that
torch.utils.checkpoint.checkpoint(module, ..., use_reentrant=False,
context_fn=...) takes: torch's create_selective_checkpoint_contexts around
a policy that answers MUST_SAVE for the ops whose outputs the region keeps
and PREFER_RECOMPUTE for the others. sac_blocks applies one to each block
of a model.

The memory model (docs/torch.md, "Selective checkpointing policies"): in
eager mode a region keeps from its forward to its backward the outputs of
its MUST_SAVE ops (its inputs are the caller's); at its backward's first
unpack torch runs its forward again, every op but the saved ones, up to
the last op whose values autograd saved (early stop), so every value its
backward reads is alive at once whatever the policy. A policy therefore
decides two things only: the bytes the region holds while the rest of the
model runs (fixed memory + the saved outputs) and the cost of the ops run
again. That is a knapsack, solved by `checkmate partition` on a graph
that encodes it: a forward node per op that may be saved, without inputs
(the recompute runs every unsaved op anyway, so saving one spares only its
own cost), not materialized, all read by one backward node of no memory.

Ops are identified as torch's SAC does: the k-th call of an op overload in
the region's forward (detach and the ops torch's SAC ignores aside), in
the sequence torch's checkpoint dispatches: recorded on the example, once
as eager mode runs it and once as torch.compile's AOTAutograd traces it
(with the Python dispatcher on, where dropout is native_dropout), each
aligned with the trace's ops so that a saved op of the trace is saved
where it runs. In eager mode the policy checks each call against the
sequence, and a region whose ops differ is a one-line SACError, never
another policy; under torch.compile, whose inductor decomposes some ops
further (attention), it saves the k-th call of an op as torch's op-list
policies do.

Under torch.compile dynamo takes a context_fn that is a function or a
functools.partial whose arguments it can hold as constants: a Policy is
a functools.partial of _contexts and its _Plan (held by identity), and
its policy function keeps its count in the context that each checkpoint
call makes. There the policy's answers are tags that the partitioner
honours: MUST_SAVE is saved, PREFER_RECOMPUTE recomputed unless the
partitioner finds it cheaper to keep."""
import collections
import contextlib
import difflib
import functools

import torch
from torch.utils import checkpoint as torch_checkpoint

from . import cost as costmod, private, solve as solvemod
from .cache import open_cache
from .functional import TAKEN_AGAIN, functional_op, op_of, written_arg
from .graph import Analysis, AnalysisError, draws_random
from .trace import TraceError, tensors_of, trace


# As remat's (train.MIN_TORCH): the traces of older torches can differ
# from an ordinary step's ops.
MIN_TORCH = (2, 5)
# The torches t_sac.py runs on (eager, torch.compile, FSDP2): private's.
TESTED = tuple(tuple(int(x) for x in v.split(".")) for v in private.TESTED["sac"])


# Under torch.compile the ops whose outputs inductor writes to memory
# whatever the policy: it fuses pointwise ops and reductions into their
# readers, and saving one of those makes it write a buffer it would not
# have (the eager model's bytes undercount it, and the step's peak need not
# fall with the budget). There the policy saves only the eager plan's
# saved ops that are among these.
WRITTEN_UNDER_COMPILE = frozenset((
    "aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten.convolution",
    "aten._scaled_dot_product_flash_attention", "aten._scaled_dot_product_efficient_attention",
    "aten._scaled_dot_product_cudnn_attention",
    "aten._scaled_dot_product_flash_attention_for_cpu"))


class SACError(Exception):
    """A policy that cannot be made or no longer applies; one line."""


def _nbytes(value):
    return sum(t.numel() * t.element_size() for t in tensors_of(value))


def _written_input(node):
    w = written_arg(node.target)
    return node.kwargs[w] if isinstance(w, str) else node.args[w]


def _inputs(node):
    out = []
    torch.fx.node.map_arg((node.args, node.kwargs), out.append)
    return out


class Region:
    """The traced region: its forward ops in SAC's order (ops), which of
    them a policy may save (saveable), the position after which the
    recompute stops (stop), their FLOPs and output bytes."""

    def __init__(self, module, args, kwargs):
        try:
            traced, tensors = trace(module, args, kwargs, "tangents")
            a = Analysis(traced, tensors)
        except (TraceError, AnalysisError) as e:
            raise SACError(str(e)) from None
        self.analysis = a
        writes = self._written_names(a)
        if writes:
            raise SACError("%s: the region writes %s in its forward; checkpoint runs the "
                           "forward again in the backward, which writes it again or reads "
                           "the new value (another model trains): keep the write out of the "
                           "region"
                           % (type(module).__name__, writes[0] + (
                               " (and %d more)" % (len(writes) - 1) if writes[1:] else "")))
        tangents = {p for p in a.placeholders if a.role[p] == "tangent"}
        calls = [n for n in a.nodes if n.op == "call_function"]
        # The forward ends at its last output (or random op), and before
        # the first op that reads a tangent: autograd traces the backward
        # after the whole forward, and it may begin with ops of its own
        # that read no tangent (a weight transposed).
        # A forward that ends with ops nothing reads is refused when it
        # runs (the policy sees more ops than the example's).
        at = {n: i for i, n in enumerate(calls)}
        ends = [at[n] for n in a.outputs + a.randoms if n in at]
        bound = max(ends) + 1 if ends else len(calls)
        bound = min([bound] + [i for i, n in enumerate(calls)
                               if any(x in tangents for x in _inputs(n))])
        ignored = torch_checkpoint.SAC_IGNORED_OPS
        self.ops = [n for n in calls[:bound] if not n.meta.get(TAKEN_AGAIN)
                    and private.is_op(op_of(n)) and op_of(n) not in ignored]
        self.cost = {n: costmod.flops(n, a.fake) for n in self.ops}
        self.bytes = {n: _nbytes(a.fake[n]) for n in self.ops}
        self.outputs = {self._root(o) for o in a.outputs}
        bw_reads = [x for n in calls[bound:] for x in _inputs(n)]
        read = {self._root(x) for x in bw_reads}
        packs = [i for i, n in enumerate(self.ops)
                 if self._root(n) in read or any(self._root(x) in read for x in _inputs(n))]
        self.stop = packs[-1] if packs else -1
        written = {self._root(_written_input(n)) for n in self.ops
                   if n.target is not functional_op and written_arg(n.target) is not None}
        self.saveable = [n for i, n in enumerate(self.ops)
                         if i <= self.stop and self._may_save(n, written)]
        # What an ordinary (unchecked) region holds for its backward.
        owners = {a.owner(x) for x in bw_reads} - {None}
        self.read_bytes = sum(a.memory[r] for r in a.real
                              if r in owners and r not in a.backward)

    @staticmethod
    def _written_names(a):
        """The parameters, buffers and inputs the region writes, named."""
        names = (["parameter " + n for n in a.traced.param_names]
                 + ["buffer " + n for n in a.traced.buffer_names])
        return [names[i] if i < len(names) else "its input %d" % (i - len(names) + 1)
                for i, p in enumerate(a.placeholders) if p in a.final]

    def _root(self, n):
        a = self.analysis
        while n in a.source:
            n = a.source[n]
        return n

    def _may_save(self, n, written):
        """An op whose saved output a recompute can use as it is: not a
        view (the recompute makes it again from its base), not random
        (skipped, the later draws of the recompute would differ), not one
        that writes (the caller goes on with what it wrote, not with what
        it returns), not one whose output is written later, not the
        region's output (saved, it would outlive the next block's
        backward), with a cost."""
        a = self.analysis
        op = op_of(n)
        return (n.target is not functional_op and a.kind.get(n) == "real"
                and not draws_random(op) and written_arg(op) is None
                and self._root(n) not in written and self._root(n) not in self.outputs
                and self.cost[n] > 0)


def _ready(compile, cache):
    """The plan cache (open_cache's) where this torch serves policies (for
    torch.compile too where compile); else SACError."""
    if private.version() < MIN_TORCH:
        raise SACError("sac_policy needs torch >= %d.%d (this is torch %s)"
                       % (MIN_TORCH + (torch.__version__,)))
    try:
        private.check("sac")
        if compile:
            private.check("compile")
        return open_cache(cache)
    except (private.PrivateError, ValueError) as e:
        raise SACError(str(e)) from None


def _budget_bytes(budget, fixed, peak):
    """budget as bytes or a size string the CLI reads; a percentage is of
    peak (what the region holds saving what an ordinary step saves)."""
    arg = solvemod.budget_arg(budget, fixed, peak)
    if arg.endswith("%"):
        return str(int(float(arg[:-1]) / 100 * peak))
    return arg


def _knapsack_doc(region, fixed):
    nodes = [{"name": n.name, "cost": region.cost[n], "memory": region.bytes[n], "deps": []}
             for n in region.saveable]
    nodes.append({"name": "backward", "cost": 0, "memory": 0, "backward": True,
                  "deps": [n.name for n in region.saveable]})
    return {"format": "checkmate-graph", "version": 1, "name": "selective checkpoint region",
            "fixed_memory": fixed, "nodes": nodes}


class _Plan:
    """What a policy answers, per mode ("eager", "compile"): the region's
    op overloads in the order torch's checkpoint dispatches them there,
    and what it keeps: positions in eager mode, (op, k) under compile."""

    def __init__(self, name, modes):
        self.name = name
        self.modes = modes


def _mode():
    return "compile" if torch.compiler.is_compiling() else "eager"


def _contexts(plan):
    """The (forward, recompute) contexts of one checkpoint call: torch's
    selective checkpoint contexts around the plan's policy for the mode it
    runs in. In eager mode the policy checks each call against the
    example's sequence, and the recompute's context that the forward ran
    them all; a plan that saves nothing is plain checkpointing there,
    whatever ops run. Under torch.compile (which takes torch's contexts
    only) the policy saves the k-th call of an op where the plan does, as
    torch's op-list policies do, without the check: inductor's
    decompositions change the sequence (HF GPT-2's attention)."""
    mode = _mode()
    ops, save = plan.modes[mode]
    if mode == "compile":
        seen = collections.Counter()

        def compiled_fn(ctx, op, *args, **kwargs):
            k = seen[op]
            seen[op] = k + 1
            return (torch_checkpoint.CheckpointPolicy.MUST_SAVE if (op, k) in save
                    else torch_checkpoint.CheckpointPolicy.PREFER_RECOMPUTE)
        return torch_checkpoint.create_selective_checkpoint_contexts(compiled_fn)
    if not save:
        # nothing saved: plain checkpointing, without the dispatch mode
        # (11% of a CPU step's time on bench/torch_sac.py's GPT)
        return torch_checkpoint.noop_context_fn()
    state = {"at": 0}
    name = plan.name

    def policy_fn(ctx, op, *args, **kwargs):
        i = state["at"]
        state["at"] = i + 1
        if i >= len(ops) or ops[i] is not op:
            want = "the end of the region" if i >= len(ops) else str(ops[i])
            raise SACError("%s: call %d of the region is %s where the example's is %s: "
                           "its ops differ from the example's (another shape or branch); "
                           "make a policy for this call" % (name, i + 1, op, want))
        return (torch_checkpoint.CheckpointPolicy.MUST_SAVE if i in save
                else torch_checkpoint.CheckpointPolicy.PREFER_RECOMPUTE)
    forward, recompute = torch_checkpoint.create_selective_checkpoint_contexts(policy_fn)
    return forward, _Counted(recompute, state, len(ops), name)


class Policy(functools.partial):
    """The context_fn of torch.utils.checkpoint.checkpoint for one region,
    eager or under torch.compile: functools.partial(_contexts, plan).
    info: the plan's figures (see sac_policy); saved: the (op, k) whose
    outputs the region keeps in eager mode; ops: the eager sequence."""

    def __new__(cls, plan, saved, info):
        self = super().__new__(cls, _contexts, plan)
        self.ops = list(plan.modes["eager"][0])
        self.saved = saved
        self.info = info
        return self

    def __copy__(self):          # nothing in it changes: copies of a model share it
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        # torch.save(model) after sac_blocks: the op overloads by name
        # ("aten.mm.default"), torch's own, found again when loaded.
        plan = self.args[0]
        named = {mode: (tuple(map(str, ops)), frozenset(
            (str(k[0]), k[1]) if isinstance(k, tuple) else k for k in save))
            for mode, (ops, save) in plan.modes.items()}
        return _policy_of, (plan.name, named, [(str(op), k) for op, k in self.saved],
                            self.info)

    def __repr__(self):
        return "<sac policy %s: saves %d of %d ops, %d bytes>" % (
            self.args[0].name, len(self.saved), len(self.ops), self.info["saved_bytes"])


def _op_named(name):
    """The op overload torch names `name` ("aten.mm.default")."""
    ns, packet, overload = name.split(".")
    try:
        return getattr(getattr(getattr(torch.ops, ns), packet), overload)
    except (AttributeError, RuntimeError):
        raise SACError("a pickled policy names %s, which this torch lacks" % name) from None


def _policy_of(name, named, saved, info):
    """Policy.__reduce__'s policy, its ops found again by name."""
    def op_key(k):
        return (_op_named(k[0]), k[1]) if isinstance(k, tuple) else k
    modes = {mode: (tuple(map(_op_named, ops)), frozenset(map(op_key, save)))
             for mode, (ops, save) in named.items()}
    return Policy(_Plan(name, modes), [op_key(k) for k in saved], info)


class _Counted:
    """The recompute's context, entered at the backward's first unpack:
    first a region that ran fewer ops than the example is refused."""

    def __init__(self, inner, state, want, name):
        self.inner, self.state, self.want, self.name = inner, state, want, name

    def __enter__(self):
        if self.state["at"] != self.want:
            raise SACError("%s: the region ran %d ops where the example ran %d: its ops differ "
                           "from the example's (another shape or branch); make a policy for "
                           "this call" % (self.name, self.state["at"], self.want))
        return self.inner.__enter__()

    def __exit__(self, *exc):
        return self.inner.__exit__(*exc)


def _recorded(module, args, kwargs, compiled):
    """The op overloads torch's checkpoint dispatches in one checkpointed
    forward of module on the example (compiled: as AOTAutograd traces it,
    with the Python dispatcher on), run with the generator's state and
    the buffers put back after."""
    ops = []

    def record(ctx, op, *a, **k):
        ops.append(op)
        return torch_checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

    def context():
        return torch_checkpoint.create_selective_checkpoint_contexts(record)
    flat, spec = private.tree_flatten((tuple(args), dict(kwargs)))
    a, k = private.tree_unflatten([_kept_leaf(v) for v in flat], spec)
    with _kept_state(module), torch.enable_grad():
        if compiled:
            with private.python_dispatcher():
                torch_checkpoint.checkpoint(module, *a, use_reentrant=False, context_fn=context,
                                            **k)
        else:
            torch_checkpoint.checkpoint(module, *a, use_reentrant=False, context_fn=context, **k)
    return ops


def _alignment(traced, ran):
    """{position in traced: position in ran} for the trace's ops (traced)
    in runs of the same ops as dispatched (ran)."""
    at = {}
    for blk in difflib.SequenceMatcher(None, traced, ran, autojunk=False).get_matching_blocks():
        for d in range(blk.size):
            at[blk.a + d] = blk.b + d
    return at


def _key(ops, i):
    """(op, k): ops[i] is the k-th call of its op."""
    return ops[i], sum(1 for o in ops[:i] if o is ops[i])


def sac_policy(module, example_args, example_kwargs=None, *, budget, time_limit=60.0,
               cache=True, compile=False):
    """The context_fn for checkpoint(module, *args, use_reentrant=False,
    context_fn=...) on calls like module(*example_args, **example_kwargs)
    that keeps the outputs of the ops whose recompute costs most (FLOPs)
    within budget: bytes, a size string ("64M"), a percentage, or a
    function of (fixed, peak) giving bytes, where fixed is the region's
    fixed memory (its parameters, their gradients, its inputs) and peak
    fixed plus what an ordinary region holds for its backward (a
    percentage is of peak). The budget bounds what the region holds from
    its forward to its backward: fixed plus the saved outputs. Solved by
    `checkmate partition` (time_limit seconds), kept in the plan cache
    (cache as remat's). The returned Policy's info: budget, fixed_memory,
    peak, model_peak (fixed + saved bytes), saved_bytes, saved and ops
    (counts, eager mode's), compile_saved and compile_ops (the same under
    torch.compile, where only matmuls, convolutions and attentions are
    saved: WRITTEN_UNDER_COMPILE), recompute (FLOPs run again), overhead
    (the step's FLOPs with the recompute over those without),
    full_overhead (the same for plain checkpointing), status and
    cached.

    compile=True chooses for torch.compile instead (sac_compile.py): the
    budget bounds the measured peak of a step of torch.compile(checkpoint
    of module with the policy), fixed memory (its parameters, buffers
    and the example's tensors) + what the step allocates at most, peak
    the same without checkpointing; the policy is the cheapest of a few
    candidates (partitions of the region at fixed budgets, keeping
    matmuls, convolutions and attentions only) whose measured peak fits,
    the same (op, k) kept in eager mode. Its info: budget, fixed_memory,
    peak, measured_peak, measured (candidates compiled), region_peak and
    overhead (the partition's model: its peak and FLOPs over keeping
    every value), saved_bytes, saved, ops, compile_saved, compile_ops,
    cost_unit, status ("measured") and planned_for "compile" (else
    "eager").

    Refused in one line (SACError): a region that writes a parameter,
    buffer or input in its forward (a counter, BatchNorm's running
    statistics), which checkpoint's recompute would write again or read
    written."""
    from .binary import find_checkmate
    plans = _ready(compile, cache)
    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    kwargs = example_kwargs or {}
    if compile:
        return _compiled_policies(module, [module], [(example_args, kwargs)], example_args,
                                  kwargs, budget, time_limit, find_checkmate(), plans)[0]
    return _eager_policy(module, example_args, kwargs, budget, time_limit, find_checkmate(),
                         plans)


def _eager_policy(module, example_args, example_kwargs, budget, time_limit, binary, plans,
                  region=None, recorded=None):
    """sac_policy's Policy planned in eager mode's model (region: the
    module's Region, recorded: {mode: _recorded's ops}, where made
    already)."""
    name = type(module).__name__
    region = region or Region(module, example_args, example_kwargs)
    a = region.analysis
    fixed = a.fixed_memory
    peak = fixed + region.read_bytes
    try:
        arg = _budget_bytes(budget, fixed, peak)
        if arg.isdigit() and int(arg) < fixed:
            raise SACError("%s: the budget %s is below the region's fixed memory %d (its "
                           "parameters, their gradients, its inputs; peak %d)"
                           % (name, arg, fixed, peak))
        part, hit = solvemod.partition(binary, _knapsack_doc(region, fixed), arg,
                                       time_limit, plans)
    except solvemod.SolveError as e:
        raise SACError("%s: %s (fixed memory %d, peak %d)" % (name, e, fixed, peak)) from None
    chosen = set(part["saved"])
    traced = [op_of(n) for n in region.ops]
    want = [i for i, n in enumerate(region.ops) if n.name in chosen]
    modes, mine = {}, want
    try:
        for mode in ("eager", "compile"):
            ran = recorded[mode] if recorded else _recorded(module, example_args,
                                                            example_kwargs, mode == "compile")
            at = _alignment(traced, ran)
            keep = [i for i in want if i in at and (
                mode == "eager" or str(traced[i].overloadpacket) in WRITTEN_UNDER_COMPILE)]
            modes[mode] = (tuple(ran), frozenset(at[i] for i in keep) if mode == "eager"
                           else frozenset(_key(ran, at[i]) for i in keep))
            if mode == "eager":    # the trace's saved ops that eager mode saves
                mine = [i for i in want if i in at]
    except private.PrivateError as e:
        raise SACError(str(e)) from None
    saved = [_key(modes["eager"][0], j) for j in sorted(modes["eager"][1])]
    saved_bytes = sum(region.bytes[region.ops[i]] for i in mine)
    again = [n for i, n in enumerate(region.ops) if i <= region.stop]
    recompute = sum(region.cost[n] for i, n in enumerate(region.ops)
                    if i <= region.stop and i not in mine)
    full = sum(region.cost[n] for n in again)
    step = sum(a.cost.values())
    info = {"budget": part["budget"], "fixed_memory": fixed, "peak": peak,
            "model_peak": fixed + saved_bytes, "saved_bytes": saved_bytes,
            "saved": len(saved), "ops": len(modes["eager"][0]), "recompute": recompute,
            "overhead": (step + recompute) / step if step else 1.0,
            "full_overhead": (step + full) / step if step else 1.0,
            "compile_saved": len(modes["compile"][1]), "compile_ops": len(modes["compile"][0]),
            "status": part["status"], "cost_unit": "flops",
            "cached": hit if plans is not None else None, "planned_for": "eager"}
    return Policy(_Plan(name, modes), saved, info)


def _first_line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _compiled_policies(model, blocks, inputs, args, kwargs, budget, time_limit, binary, plans):
    """compile=True's Policies for blocks (called in model(*args,
    **kwargs) on inputs, each block's (args, kwargs); blocks [model]: the
    model is the region, called through checkpoint): the candidates (for
    each of _compile_candidates' answers, every block's; last, every
    block keeping nothing), in order of their cost in the partitions'
    model, measured (sac_compile.step_peak) until one fits the budget."""
    from . import sac_compile
    fixed = sum(t.numel() * t.element_size() for t in tensors_of(
        (list(model.parameters()), list(model.buffers()), args, kwargs)))
    params = list(model.parameters())

    def peak_of(policies):
        fn, through = model, contextlib.nullcontext()
        if policies and blocks == [model]:
            fn = functools.partial(_checkpointed, model, policies[0])
        elif policies:
            through = _through(blocks, policies)
        with _kept_state(model), through:
            return fixed + sac_compile.step_peak(fn, params, args, kwargs)
    plain = None
    if callable(budget) or str(budget).strip().endswith("%"):
        plain = peak_of(None)   # the budget's peak: measured only where it is read
    try:
        limit = solvemod.size_bytes(solvemod.budget_arg(budget, fixed, plain), plain)
    except solvemod.SolveError as e:
        raise SACError("compile=True: %s" % e) from None
    if limit < fixed:
        raise SACError("compile=True: the budget %d is below the model's fixed memory %d (its "
                       "parameters, buffers and the example's tensors)" % (limit, fixed))
    seen = {}
    regions = [_compile_candidates(blk, a, k, time_limit, binary, plans, seen)
               for blk, (a, k) in zip(blocks, inputs)]
    choices = sorted(range(len(regions[0][3])),
                     key=lambda j: (sum(r[3][j][1]["cost"] for r in regions), j)) + [None]
    measured = {}
    for j in choices:
        keys = tuple(frozenset() if j is None else r[3][j][0] for r in regions)
        if keys in measured:
            continue
        policies = [_compile_policy(name, eager, ran, k, saveable,
                                    None if j is None else answers[j][1], fixed)
                    for (name, eager, ran, answers, saveable), k in zip(regions, keys)]
        measured[keys] = peak = peak_of(policies)
        if peak <= limit:
            for p in policies:
                p.info.update(budget=limit, peak=plain, measured_peak=peak,
                              measured=len(measured), status="measured")
            return policies
    raise SACError("compile=True: no policy of the %d measured fits the budget %d: the least "
                   "measured peak is %d (fixed memory %d%s; the peaks measured: %s)"
                   % (len(measured), limit, min(measured.values()), fixed,
                      "" if plain is None else ", the step without a policy %d" % plain,
                      ", ".join(map(str, sorted(set(measured.values()))))))


# The eager plans that join compile=True's candidates: at fixed + these
# fractions of what an ordinary region holds (torch.compile's peaks need
# not follow the partition's model; on bench/torch_sac.py's GPT the eager
# plan at .4 holds less than any partition's).
EAGER_FRACTIONS = (0.6, 0.4, 0.2, 0.1)


def _eager_keys(blk, args, kwargs, time_limit, binary, plans, region, recorded):
    """For each of EAGER_FRACTIONS f, the (op, k) under torch.compile that
    blk's eager plan (region: blk's Region) at fixed + f of what an
    ordinary region holds keeps (recorded: {mode: _recorded's ops}); none
    where eager mode makes no plan."""
    out = []
    for f in EAGER_FRACTIONS:
        try:
            out.append(_eager_policy(
                blk, args, kwargs, lambda fixed, peak: fixed + int(f * (peak - fixed)),
                time_limit, binary, plans, region, recorded).args[0].modes["compile"][1])
        except SACError:
            out.append(frozenset())
    return out


def _saveable_keys(region, eager, ran):
    """{(op, k) under torch.compile: its position in eager mode, or None}
    for the ops of region that eager planning may save (Region.saveable:
    a value written later, say, is not), aligned with each mode's ops."""
    traced = [op_of(n) for n in region.ops]
    in_eager, in_compile = _alignment(traced, eager), _alignment(traced, ran)
    at = {n: i for i, n in enumerate(region.ops)}
    return {_key(ran, in_compile[at[n]]): in_eager.get(at[n]) for n in region.saveable
            if at[n] in in_compile}


def _compile_candidates(blk, args, kwargs, time_limit, binary, plans, seen):
    """(name, eager ops, ops under torch.compile, answers, saveable) for a
    block on (args, kwargs): the answers sac_compile.candidates' for its
    FRACTIONS (each none fits taking the one before) and for the ops
    under torch.compile that the eager plans at EAGER_FRACTIONS keep,
    among the saveable (_saveable_keys'); a block of the same ops on
    tensors of the same shapes as one of seen's (a transformer's; seen is
    updated) takes its answers: its joint graph is the same."""
    from . import compiled, sac_compile
    name = type(blk).__name__
    try:
        eager = _recorded(blk, args, kwargs, False)
        ran = _recorded(blk, args, kwargs, True)
        flat, spec = private.tree_flatten((tuple(args), dict(kwargs)))
        key = (tuple(eager), tuple(ran), tuple(
            (tuple(t.shape), t.dtype, t.requires_grad, t.device) if isinstance(t, torch.Tensor)
            else repr(t) for t in flat + list(blk.parameters()) + list(blk.buffers())))
        if key not in seen:
            region = Region(blk, args, kwargs)
            saveable = _saveable_keys(region, eager, ran)
            extra = _eager_keys(blk, args, kwargs, time_limit, binary, plans, region,
                                {"eager": eager, "compile": ran})
            a, k = private.tree_unflatten([_kept_leaf(v) for v in flat], spec)
            with _kept_state(blk):
                answers = sac_compile.candidates(blk, a, k, ran, set(saveable), time_limit,
                                                 binary, plans, extra)
            for i in range(1, len(sac_compile.FRACTIONS)):
                answers[i] = answers[i] or answers[i - 1]
            seen[key] = answers, saveable
    except private.dynamo_exc("BackendCompilerFailed") as e:
        # what the partition raised (SolveError, CompiledError) or inductor
        raise SACError("%s under torch.compile: %s"
                       % (name, _first_line(private.backend_error(e)))) from None
    except (compiled.CompiledError, private.PrivateError) as e:
        raise SACError("%s under torch.compile: %s" % (name, _first_line(e))) from None
    except private.dynamo_exc("TorchDynamoException") as e:   # a graph break
        raise SACError("%s: torch.compile captures it in more than one graph, or not at all: "
                       "%s" % (name, _first_line(e))) from None
    return (name, eager, ran) + seen[key]


def _compile_policy(name, eager, ran, keys, saveable, part, fixed):
    """The Policy keeping the (op, k) of keys under torch.compile and
    their positions in eager mode (saveable: _saveable_keys'), its info
    from the region's partition part (None: one keeping nothing)."""
    at = frozenset(saveable[k] for k in keys if saveable[k] is not None)
    modes = {"eager": (tuple(eager), at), "compile": (tuple(ran), keys)}
    info = {"fixed_memory": fixed, "region_peak": part and part["plan_peak"],
            "saved_bytes": part["saved_bytes"] if part else 0,
            "overhead": part and part["overhead"], "saved": len(at), "ops": len(eager),
            "compile_saved": len(keys), "compile_ops": len(ran), "cost_unit": "flops",
            "planned_for": "compile"}
    return Policy(_Plan(name, modes), [_key(eager, i) for i in sorted(at)], info)


@contextlib.contextmanager
def _through(blocks, policies):
    """Each block called through checkpoint with its policy, its own
    forward put back after."""
    kept = [vars(b).get("forward") for b in blocks]
    for blk, p in zip(blocks, policies):
        blk.forward = functools.partial(_checkpointed, blk.forward, p)
    try:
        yield
    finally:
        for blk, f in zip(blocks, kept):
            if f is None:
                del blk.forward
            else:
                blk.forward = f


@contextlib.contextmanager
def _kept_state(model):
    """The generator's state (CPU and the model's GPUs) and the model's
    buffers put back after the block."""
    buffers = [b.detach().clone() for b in model.buffers()]
    cuda = sorted({t.device.index or 0 for t in tensors_of((list(model.parameters()),
                                                            list(model.buffers())))
                   if t.device.type == "cuda"})
    try:
        with torch.random.fork_rng(devices=cuda):
            yield
    finally:
        with torch.no_grad():
            for b, v in zip(model.buffers(), buffers):
                b.copy_(v)


def _captured(model, blocks, args, kwargs):
    """Each block's (args, kwargs) in a forward of model on the example,
    run with the generator's state and the buffers put back after."""
    got = {}

    def hook(i, _mod, a, k):
        if i not in got:
            flat, spec = private.tree_flatten((a, k))
            got[i] = private.tree_unflatten([_kept_leaf(v) for v in flat], spec)
        return None
    handles = [b.register_forward_pre_hook(functools.partial(hook, i), with_kwargs=True)
               for i, b in enumerate(blocks)]
    try:
        with _kept_state(model):
            model(*args, **(kwargs or {}))
    finally:
        for h in handles:
            h.remove()
    missing = [i for i in range(len(blocks)) if i not in got]
    if missing:
        raise SACError("block %d (%s) is not called in the model's forward on the example"
                       % (missing[0], type(blocks[missing[0]]).__name__))
    return [got[i] for i in range(len(blocks))]


def _kept_leaf(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    return v


def _checkpointed(forward, policy, *args, **kwargs):
    if not torch.is_grad_enabled():
        return forward(*args, **kwargs)
    return torch_checkpoint.checkpoint(forward, *args, use_reentrant=False, context_fn=policy,
                                       **kwargs)


def sac_blocks(model, blocks, example_args, example_kwargs=None, *, budget, time_limit=60.0,
               cache=True, compile=False):
    """Each module of blocks (a model's transformer blocks, say) called
    through checkpoint(..., use_reentrant=False, context_fn=its policy)
    from now on, its policy made by sac_policy on the inputs the block gets
    in model(*example_args, **example_kwargs) (budget, time_limit and
    cache as sac_policy's, per block). The blocks' forward is replaced on
    the instance: names, parameters and hooks stay; a block given a
    policy before gets the new one instead. Returns the policies.

    compile=True chooses them for torch.compile(model) by its measured
    peak (sac_policy's compile=True, on the whole model: budget bounds
    the compiled step's peak, fixed being the model's parameters,
    buffers and the example's tensors, peak the step's without a
    policy)."""
    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    blocks = list(blocks)
    for blk in blocks:   # a block given a policy before: its own forward back
        f = vars(blk).get("forward")
        if isinstance(f, functools.partial) and f.func is _checkpointed:
            blk.forward = f.args[0]
    inputs = _captured(model, blocks, example_args, example_kwargs)
    if compile:
        from .binary import find_checkmate
        policies = _compiled_policies(model, blocks, inputs, example_args, example_kwargs or {},
                                      budget, time_limit, find_checkmate(),
                                      _ready(True, cache))
    else:
        policies = [sac_policy(blk, a, k, budget=budget, time_limit=time_limit, cache=cache)
                    for blk, (a, k) in zip(blocks, inputs)]
    for blk, p in zip(blocks, policies):
        blk.forward = functools.partial(_checkpointed, blk.forward, p)
    return policies

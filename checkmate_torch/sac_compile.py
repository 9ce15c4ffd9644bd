"""sac_blocks(..., compile=True): policies chosen for torch.compile by the
compiled step's measured peak, where eager mode's model does not hold.

Under torch.compile a policy's tags go to the partitioner: the forward
keeps the outputs of the MUST_SAVE ops and the backward computes the
others again, inductor fusing what it can and scheduling the rest. The
bytes a step then holds follow inductor's choices, not eager mode's
(all a region's backward reads alive at once): keeping a matmul's
output can hold less than keeping none, and no model of ours predicts
the step's peak closely enough to order two policies whose peaks are a
few percent apart (HF GPT-2: docs/torch.md). So the choice is made by
measurement, over a few candidates fixed in advance:

- candidates(): each region compiled once as torch.compile compiles it
  alone, its joint graph partitioned by remat(compile=True)'s
  partitioner (compiled.Partitioner, `checkmate partition`) with no
  budget binding, then at FRACTIONS[1:] of its activations above its
  least memory, restricted to the values a policy can tag: the outputs
  of the matmuls, convolutions and attentions that the policy sees under
  torch.compile (the k-th call of an op, as sac.py identifies ops),
  found in the joint graph in order, that eager mode may save too (the policy's eager side runs where
  dynamo leaves the recompute); the others are "saveable": false there
  (docs/formats.md). No kernel is compiled: the partition is all that
  compile is for.
- step_peak(): one forward and backward of the whole model through
  torch.compile with a candidate's policies, its peak measured.

sac.py takes the cheapest candidate (by the partitions' FLOPs) whose
measured peak fits the budget, measuring in order of cost until one
does. Since the candidates and their peaks do not depend on the budget,
a lower budget never gets a higher peak."""
import difflib

import torch

from . import compiled, private
from .measure import step_peak as measured_peak

# The region budgets of the candidates: least + f (peak - least), where
# peak keeps every value the backward reads and least is the partition's
# lower bound on any saved set's memory.
FRACTIONS = (1.0, 0.8, 0.6, 0.4, 0.3, 0.2, 0.1, 0.0)
# The budget of the first partition, above any plan's peak.
UNBOUNDED = 1 << 50


def _uncompiled(gm, example_inputs, **_):
    """Inductor's inner compiler, replaced: the partitioned program run
    as it is (boxed, as AOTAutograd calls it)."""
    def run(args):
        return gm(*args)
    run._boxed_call = True
    return run


def _taggable(jg, ran, allowed):
    """{forward node: (op, k)}: the matmuls, convolutions and attentions
    of the joint graph's forward matched in order with the calls of the
    same ops that the policy sees (ran), those whose (op, k) is among
    allowed; k counts the op's calls in ran before the matched one."""
    nodes = [n for n in jg.forward if compiled._is_compute_intensive(n)]
    ops = {n.target for n in nodes}
    calls = [i for i, op in enumerate(ran) if op in ops]
    match = difflib.SequenceMatcher(None, [n.target for n in nodes], [ran[i] for i in calls],
                                    autojunk=False)
    out = {}
    for blk in match.get_matching_blocks():
        for d in range(blk.size):
            n, i = nodes[blk.a + d], calls[blk.b + d]
            out[n] = (n.target, sum(1 for op in ran[:i] if op is n.target))
    return {n: k for n, k in out.items() if k in allowed}


def candidates(module, args, kwargs, ran, allowed, time_limit, binary, cache, extra=()):
    """[(keys, figures) or None, for each of FRACTIONS, then for each set
    of (op, k) of extra] for module called on (args, kwargs), whose
    policy sees the calls of ops `ran` under torch.compile and may keep
    the (op, k) of allowed (the others are unsaveable): the (op, k)
    that the partition at that budget keeps and its figures
    (Partitioner's info: budget, plan_peak, least, checkpoint_all_peak,
    fixed_memory, cost, overhead, saved_bytes, status, cached), None
    where no partition fits (the first always does); then extra's, those
    of its (op, k) that are found, with the cost, overhead and saved
    bytes of keeping them in the same model. Runs the region's forward once (the caller keeps the
    generator's state and the buffers). Raises what compiling the region raises (a
    graph break: fullgraph), compiled.CompiledError where it makes other
    than one joint graph, and solve.SolveError where even keeping every
    value the partition fails."""
    from .solve import SolveError
    found = {}

    def unsaveable(jg):
        found["keys"] = _taggable(jg, ran, allowed)
        return set(jg.forward) - set(found["keys"])

    base = private.get("torch._inductor.custom_graph_pass.CustomPartitionerFn")

    class RegionPartitioner(compiled.Partitioner, base):
        def choose(self, joint_graph, node_info, memory_budget=1, **kwargs):
            found["graphs"] = found.get("graphs", 0) + 1
            answers = found["answers"] = []
            saved = super().choose(joint_graph, node_info, memory_budget, **kwargs)
            answers.append((saved, self.info[-1]))
            least, peak = self.info[-1]["least"], self.info[-1]["checkpoint_all_peak"]
            for f in FRACTIONS[1:]:   # the budget each partition is made at
                self.lowered = least + int(f * (peak - least))
                try:
                    answers.append((super().choose(joint_graph, node_info, memory_budget,
                                                   **kwargs), self.info[-1]))
                except SolveError:
                    answers.append(None)
            self.lowered = None
            for keys in extra:
                keep = {n for n, k in found["keys"].items() if k in keys}
                cost, overhead, nbytes = self.figures_of(keep)
                answers.append((keep, {"cost": cost, "overhead": overhead,
                                       "saved_bytes": nbytes, "plan_peak": None}))
            return saved

        def uuid(self):
            return None

        def __reduce__(self):   # inductor pickles its config; no cache holds this
            return (str, ("checkmate selective checkpointing partitioner",))

    # The first partition keeps every value it may (no budget binds): an
    # unsaveable value computed again can hold more than keeping all.
    part = RegionPartitioner(lambda fixed, peak: UNBOUNDED, time_limit, binary, cache,
                             unsaveable=unsaveable)
    part.explain = False
    compile_fx = private.get("torch._inductor.compile_fx.compile_fx")
    ic, aot = private.inductor_config(), private.functorch_config()

    def backend(gm, example_inputs):
        with ic.patch(custom_partitioner_fn=part), aot.patch(enable_autograd_cache=False):
            return compile_fx(gm, example_inputs, inner_compile=_uncompiled)
    with torch.enable_grad():
        torch.compile(compiled.own_code(module, "sac_region"), backend=backend, fullgraph=True,
                      dynamic=False)(*args, **kwargs)
    graphs = found.get("graphs", 0)
    if graphs != 1:
        raise compiled.CompiledError(
            "the region compiles to %d joint graphs under torch.compile, not one" % graphs
            if graphs else "nothing in the region needs a gradient: nothing to keep")
    return [None if a is None else
            (frozenset(found["keys"][n] for n in a[0] if n in found["keys"]), a[1])
            for a in found["answers"]]


def step_peak(model, params, args, kwargs):
    """The peak of one forward and backward of torch.compile(model) on
    (args, kwargs) above what was live before (measure.step_peak), the
    backward of every output that needs a gradient (ones) into params,
    returned rather than added to .grad; compiled by a first run that is
    not measured. The caller keeps the generator's state and the
    buffers."""
    fn = torch.compile(compiled.own_code(model, "sac_step"), dynamic=False)
    params = [p for p in params if p.requires_grad]
    device = next((t.device for t in params if t.device.type == "cuda"), torch.device("cpu"))

    def step():
        out = [t for t in private.tree_flatten(fn(*args, **kwargs))[0]
               if isinstance(t, torch.Tensor) and t.requires_grad]
        if out:
            torch.autograd.grad(out, params, [torch.ones_like(t) for t in out],
                                allow_unused=True)
    with torch.enable_grad():
        step()
        return measured_peak(step, str(device))["peak"]

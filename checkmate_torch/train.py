"""checkmate_torch.remat: a module that trains a model under a checkmate
plan. Each training step runs the plan's forward steps in the module's
forward and the rest in its backward (docs/torch.md, "Training with a
plan")."""
import copy
import os
import platform
import re
import time
import warnings

import torch

from . import alias, private, sizes, solve as solvemod
from .cache import cost_key, kept_or_measured, open_cache, shape_key
from .codegen import Program
from .dynamic import DynamicError, declared, grown, grown_tensor
from .execute import Interpreter, PlanError, measure_costs, resolve
from .functional import op_of
from .graph import Analysis, Synthetic, steps_peak
from .jointcost import device_rates
from .offload import measured_bandwidth
from .script import ScriptError, ScriptProgram
from .sizes import NotSymbolic, Symbols, value_at
from .strides import corrections, measure, same_layouts
from .trace import Inputs, autocast_key, no_autocast, outside as _outside, tensors_of, trace


class RematError(Exception):
    pass


_HERE = os.path.dirname(os.path.abspath(__file__))


# The oldest torch remat runs on (docs/torch.md, "Versions"): on torch 1.13
# make_fx decomposes ops that an ordinary step runs whole (silu_backward,
# mish_backward: other bits) and cannot trace repeat_interleave; torch 2.5
# is the first with a public load_state_dict pre-hook. Only the versions
# of private.TESTED were tested; remat warns on the others.
MIN_TORCH = (2, 5)


class Compiled:
    """One plan for one input signature: the traced step, its graph, the
    plan's steps split where the backward starts, and the plan's figures.

    prior: the plans made for other signatures, the latest first, then
    those the cache keeps for this graph's structure (cache.shape_key: an
    earlier run's). One whose graph has this one's structure (the same
    ops, each reading the same nodes: another sequence length, say) gives
    its steps, without a solve, when they fit its budget at this
    signature's sizes (replayed: steps_peak); where its search goes on
    beside training, this plan follows it (settle: its final plan, where
    that fits here too). Else the graph is solved, and the plan kept in
    the cache for its structure."""

    def __init__(self, model, args, kwargs, budget, strategy, time_limit, binary, cache, cost,
                 copies=(), prior=(), dynamic=None, background=False):
        # Traced, solved, and run once on the example to compare strides
        # (strides.py); traced and solved again with the kernels' strides
        # where they differ (at most 3 rounds; differences left after the
        # third are refused, not run). dynamic ({placed input: dimensions})
        # traces those sizes symbolic (sizes.py); its corrections keep the
        # kernels' order of dimensions (strides._dense_strides).
        # background (auto without copies): the search's first plan, its
        # final one taken by settle() once it ends.
        fixes, search = {}, None
        for rounds in range(1, 4):
            fix = dict(fixes)
            traced, tensors = trace(model, args, kwargs, "tangents",
                                    (lambda: corrections(fix)) if fix else None, dynamic)
            a = Analysis(traced, tensors)
            symbols = Symbols(a.fake[p] for p in a.placeholders if a.role[p] == "input")
            if dynamic and not symbols:
                raise NotSymbolic("the step specialised every symbolic size (to the sizes "
                                  "of the call traced)")
            if cost == "time":
                a.set_costs(_time_costs(a, tensors, cache), "ms")
            else:
                a.price(device_rates(_device_of(tensors), a.matmul_dtype(), cache))
            ca_peak = a.checkpoint_all_peak()
            arg = solvemod.budget_arg(budget, a.fixed_memory, ca_peak)
            doc = a.to_json("%s train step" % type(model).__name__,
                            {"torch": {"torch_version": torch.__version__,
                                       "cost_unit": a.cost_unit,
                                       "fixed_memory_parts": a.fixed_parts}})
            self.structure = structure(a)
            plan, steps, like = _reused(a, self.structure, prior, copies)
            hit, skey, kept = False, None, []
            if plan is None and cache is not None:
                # an earlier run's plan for other sizes, where the cache
                # has none for these
                skey = shape_key(binary, self.structure, budget,
                                 solvemod.solve_kind(strategy, copies), time_limit, cost)
                kept = _Kept.load(cache, skey, self.structure)
                if kept and solvemod.cached(binary, doc, arg, strategy, time_limit,
                                            cache, copies) is None:
                    plan, steps, _ = _reused(a, self.structure, kept, copies)
                    hit = plan is not None
            if plan is None:
                if search is not None:   # an earlier round's, for another graph
                    search.cancel()
                try:
                    if background:
                        plan, hit, search = solvemod.start(binary, doc, arg, time_limit, cache)
                    else:
                        plan, hit = solvemod.solve(binary, doc, arg, strategy, time_limit,
                                                   cache, copies)
                except solvemod.SolveError as e:
                    raise solvemod.in_activations(e, a.fixed_memory, ca_peak) from None
                steps = resolve(a, plan.get("steps") or [])
            with no_autocast():
                found = {} if _checked(a, like) else measure(a, tensors, steps)
            new = sorted(found.keys() - fixes.keys(), key=lambda ok: (str(ok[0]), ok[1]))
            if not new:
                break
            if rounds == 3:
                raise RematError("the kernels' strides still differ from the trace's after 3 "
                                 "traces (call %d of %s): no plan runs the ordinary step's "
                                 "kernels" % (new[0][1] + 1, new[0][0]))
            fixes.update(found)
        self.traced, self.analysis, self.copies = traced, a, copies
        # the sizes the plan serves: its lowering's decisions are guards too
        self.symbols = symbols
        self.kind = None    # Remat's key of the calls it serves, sizes aside
        floor = sum(a.cost.values())
        self.info = {
            "checkpoint_all_cost": floor, "fixed_memory": a.fixed_memory,
            "bandwidth": copies[1] if copies else None,
            "fixed_memory_parts": dict(a.fixed_parts),
            "checkpoint_all_peak": ca_peak, "nodes": len(a.real), "cost_unit": a.cost_unit,
            "stride_corrections": len(fixes),
            "cached": hit if cache is not None else None,
            # a plan traced with symbolic sizes: its symbols' sizes at this call
            "sizes": {str(k): v for k, v in symbols.binding_at_trace().items()} or None,
            "step_ms": None, "measured_overhead": None,   # after a step (timed)
        }
        # A plan reused at other sizes runs as Python at its first step
        # and is compiled by TorchScript at its second (run): a length seen
        # once does not wait for TorchScript's compile.
        self._script_later = bool(plan.get("reused")) and not dynamic
        self._ran = False
        self._adopt(plan, steps)
        self._search = search
        # the plan reused, where its search goes on: this one follows it
        self._leader = like.source if getattr(like, "searching", False) else None
        self._pending = (tensors, fixes, cache, skey, kept) \
            if search is not None or self._leader is not None else None
        self.source = self      # sized_at's copies keep it: the plan they are sized from
        self._tables = None     # sized_at's: the sizes of every node, as functions
        if not plan.get("reused") and plan.get("budget") is not None and search is None:
            _Kept.store(cache, skey, kept, self.step_indices, plan)
        self.on_cpu = _device_name(tensors).startswith("cpu")
        self.n_params = len(traced.param_names)
        n_fixed = self.n_params + len(traced.buffer_names)
        # the placeholders that get gradients (in the order of grad_of):
        # the autograd node's inputs
        self.edges = [i if kind == "param" else n_fixed + i for kind, i in traced.grad_of]
        # the parameters, buffers and inputs the step writes (alias.py)
        self.n_state = n_fixed
        self.written = [k for k, p in enumerate(q for q in a.placeholders
                                                if a.role[q] != "tangent") if p in a.final]
        self.grad_meta = [_meta(a.fake.get(g)) for g in a.grads]

    @property
    def searching(self):
        """True while the search for this plan, or for the plan this was
        sized from or follows, goes on beside training."""
        s = self.source
        return s._search is not None or (s._leader is not None and s._leader.searching)

    def ended(self):
        """Whether settle() has what it waits for: the search beside
        training has ended, or the plan this one follows has settled."""
        if self._leader is not None:
            return not self._leader.searching
        return self._search is None or self._search.done()

    def wait(self):
        """Blocks until the search this plan's final plan comes from has
        ended (the next settle() takes it)."""
        s = self.source
        while s._leader is not None:
            s = s._leader.source
        if s._search is not None:
            try:
                s._search.result()
            except solvemod.SolveError:
                pass

    def _indices(self, steps):
        """Steps (op, node) as (op, index of the node in the graph)."""
        index = {r: i for i, r in enumerate(self.analysis.real)}
        return [(op, index[r]) for op, r in steps]

    def _adopt(self, plan, steps):
        """Plan (a dict, its steps resolved: steps) as the one this runs."""
        a = self.analysis
        self.step_indices = self._indices(steps)
        # The forward ends where the tangents are first computed (they may
        # be freed and computed again: the same gradients, bound again).
        at = next((k for k, (op, r) in enumerate(steps) if op == "compute" and r is a.tangents),
                  None)
        if at is None:
            raise RematError("the plan never computes the tangents")
        self.forward_steps, self.backward_steps = steps[:at], steps[at:]
        self.program, runner_note = _program(a, self.forward_steps, self.backward_steps,
                                             not self._script_later)
        self.symbols.seal()
        floor = self.info["checkpoint_all_cost"]
        self.info.update({
            "budget": plan.get("budget"), "peak": plan.get("peak_memory"),
            "cost": plan.get("cost"),
            "overhead": plan.get("cost") / floor if floor else 1.0,
            "strategy": plan.get("strategy"), "param": plan.get("param"),
            "status": plan.get("status"),
            # with copies to host memory (offload=): the replayed time in
            # seconds, its part waiting for copies, the host peak in bytes
            # (None for a plan reused at other sizes: not replayed in time)
            "offloads": sum(1 for op, _ in steps if op == "offload"),
            "time": plan.get("time"), "wait": plan.get("wait"),
            "host_peak": plan.get("host_peak_memory"),
            "computes": sum(1 for op, _ in steps if op == "compute"),
            "steps": len(steps),
            "runner": "torchscript" if isinstance(self.program, ScriptProgram) else "python",
            "runner_note": runner_note,
            "reused": plan.get("reused", False),
        })

    def settle(self):
        """Where the search beside training (background=True) has ended:
        its plan run from now on instead of the first one (where its steps
        are the first plan's, the figures say what the search found). A
        search that failed, or whose plan the kernels' strides would not run
        as traced, leaves the first plan, and says so. Copies sized_at made
        before then keep the first plan's figures (Remat._settle drops
        them)."""
        if self._leader is not None:
            self._follow()
            return
        if self._search is None or not self._search.done():
            return
        search, self._search = self._search, None
        tensors, fixes, cache, skey, kept = self._pending
        self._pending = None
        try:
            plan = search.result()
            steps = resolve(self.analysis, plan.get("steps") or [])
            same = self._indices(steps) == self.step_indices
            with no_autocast():
                found = {} if same else measure(self.analysis, tensors, steps)
            if found.keys() - fixes.keys():
                raise RematError("the kernels' strides differ from the trace's under it")
        except (solvemod.SolveError, RematError) as e:
            warnings.warn("checkmate_torch.remat: the search beside training ended without a "
                          "plan to take (%s); the first plan stays" % e, stacklevel=3)
            return
        if same:
            self.info.update({k: plan.get(k) for k in ("strategy", "param", "status")})
        else:
            self._adopt(plan, steps)
        _Kept.store(cache, skey, kept, self.step_indices, plan)

    def _follow(self):
        """settle() of a plan that follows another's search: the plan that
        one settled on, where it is another than this one's, fits the
        budget at this plan's sizes and the kernels' strides run it as
        traced."""
        if self._leader.searching:
            return
        leader, self._leader = self._leader, None
        tensors, fixes = self._pending[:2]
        self._pending = None
        if leader.step_indices == self.step_indices:
            self.info.update(strategy=leader.info["strategy"], param=leader.info["param"])
            return
        a = self.analysis
        steps = [(op, a.real[i]) for op, i in leader.step_indices]
        plan = _replayed(a, steps, leader.info)
        if plan is None:
            return
        with no_autocast():
            if not _checked(a, leader) and measure(a, tensors, steps).keys() - fixes.keys():
                return
        self._adopt(plan, steps)

    def cancel(self):
        """Ends the search beside training, if any, or stops following
        another plan's: the first plan stays."""
        if self._search is not None:
            self._search.cancel()
        self._search = self._leader = self._pending = None

    def sized_at(self, inputs):
        """This plan for a call at other sizes of its symbolic trace: a
        copy whose program and figures are at the call's sizes, where
        every guard holds there and the steps, replayed with each node's
        bytes at those sizes, fit the budget the plan was made for; else
        None."""
        binding = self.symbols.binding(inputs.placed) if self.symbols else None
        if binding is None or (self.info["offloads"] and "--host-budget" in self.copies):
            return None     # (a host peak is not replayed here)
        a = self.analysis
        if self._tables is None:
            self._tables = [sizes.Table(e) for e in (a.memory_expr, a.fixed_expr, a.cost_expr)]
        try:
            memory, fixed, cost = (t.at(binding) for t in self._tables)
        except ValueError:
            return None
        memory = {**a.memory, **memory}
        fixed = {**a.fixed_parts, **fixed}
        fixed_memory = sum(fixed.values())
        steps = [(op, a.real[i]) for op, i in self.step_indices]
        peak = steps_peak(steps, memory) + fixed_memory
        budget = self.info["budget"]
        if budget is not None and peak > budget:
            return None
        cost = {**a.cost, **cost}
        c = copy.copy(self)
        c._search = c._leader = c._pending = None   # settled by self
        c.program = self.program.at(binding)
        c.grad_meta = [None if m is None else
                       (tuple(value_at(d, binding) for d in m[0]),) + m[1:]
                       for m in self.grad_meta]
        other = binding != self.symbols.binding_at_trace()
        c.info = dict(self.info, peak=peak, fixed_memory=fixed_memory,
                      fixed_memory_parts=fixed, step_ms=None, measured_overhead=None,
                      cost=sum(cost[r] for op, r in steps if op == "compute"),
                      checkpoint_all_cost=sum(cost.values()),
                      reused=self.info["reused"] or other,
                      sizes={str(k): v for k, v in binding.items()})
        floor = c.info["checkpoint_all_cost"]
        c.info["overhead"] = c.info["cost"] / floor if floor else 1.0
        if other:
            # the copies' replayed time and host peak are the traced sizes',
            # and so are measured costs; a solver's proof holds there only
            c.info.update(time=None, wait=None, host_peak=None, status="feasible")
            if a.cost_unit != "flops":
                c.info.update(cost=None, checkpoint_all_cost=None, overhead=None)
        return c

    def timed(self, ms):
        """Records a step's own time, forward and backward (on the CPU;
        on a GPU the host's time says nothing without a synchronization):
        with measured costs, measured overhead is its ratio to the sum of
        the ops' medians, the ordinary step's op time."""
        if not self.on_cpu:
            return
        self.info["step_ms"] = ms
        if self.info["cost_unit"] == "ms" and self.info["checkpoint_all_cost"]:
            self.info["measured_overhead"] = ms / self.info["checkpoint_all_cost"]

    def run(self, params, buffers, inputs):
        """One step on the model's parameters and buffers (state_tensors)."""
        if len(params) != self.n_params:
            raise RematError("the model has %d parameters, the plan was made for %d"
                             % (len(params), self.n_params))
        # Only what gets a gradient is an input of the autograd node (an
        # edge to a parameter the step gives none would have autograd call
        # its hooks with None); the rest goes in a list, which apply does
        # not look into (apply's own time grows with its tensors).
        if self._script_later and self._ran:
            self._script_later = False
            self.program, note = _program(self.analysis, self.forward_steps,
                                          self.backward_steps)
            self.info["runner"] = "torchscript" if isinstance(self.program, ScriptProgram) \
                else "python"
            self.info["runner_note"] = note
        self._ran = True
        tensors = params + buffers + inputs.placed
        shared = self.shared_memory(tensors, inputs)
        out = self.traced.out
        res = _Step.apply(self, tensors, shared, *[tensors[k] for k in self.edges])
        return out.rebuild([res[out.slot[f]] for f in out.first])

    def shared_memory(self, tensors, inputs):
        """What the call's tensors (parameters, buffers, inputs) share
        (alias.py): refuses a call where a tensor the step writes shares
        memory with an input; the parameters whose gradients go back
        through autograd, as they share memory with an input that
        requires a gradient."""
        bad = alias.clash(self.written, tensors, self.n_state)
        if bad is not None:
            given = alias.input_names(*inputs.rebuild(inputs.tensors), len(inputs.tensors))
            names = self.traced.param_names + self.traced.buffer_names + \
                [given[inputs.where.index(i)] for i in range(len(inputs.placed))]
            k, j = (names[i] for i in bad)
            raise RematError("%s shares memory with %s, and the step writes %s in place; a "
                             "plan reads what it writes from a copy, so pass tensors that "
                             "share no memory (.clone() one)" % (k, j, k))
        return alias.shared_params(tensors, self.n_params, self.n_state)


_MODULE_WALK = (torch.nn.Module.parameters, torch.nn.Module.buffers,
                torch.nn.Module.named_modules)


def state_tensors(model):
    """(list(model.parameters()), list(model.buffers())) in one walk of the
    modules instead of three (the key and the step read both on every
    step, host time that a GPU step waits for); a
    model that overrides how they are found gets its own methods."""
    cls = type(model)
    if (cls.parameters, cls.buffers, cls.named_modules) != _MODULE_WALK:
        return list(model.parameters()), list(model.buffers())
    return private.module_tensors(model)


def _meta(fake):
    """(shape, dtype, is_sparse) of a traced tensor, or None."""
    return (fake.shape, fake.dtype, fake.is_sparse) if isinstance(fake, torch.Tensor) else None


def structure(a):
    """What a plan's steps depend on in graph a: per node, in file order,
    its op (a synthetic node's kind) and the positions of the nodes it
    reads. Two signatures of one model with the same structure (sizes
    aside) run the same steps."""
    index = {r: i for i, r in enumerate(a.real)}
    return tuple((r.kind if isinstance(r, Synthetic) else str(op_of(r)),
                  tuple(index[d] for d in a.deps[r])) for r in a.real)


def _reused(a, shape, prior, copies=()):
    """(plan figures, steps, the plan they come from) of the first of
    prior (Compiled or _Kept) whose graph has structure `shape` and whose
    steps, replayed at a's sizes, fit the budget it was made for; (None,
    None, None) when none does. Under a host budget (copies'
    --host-budget) a plan with copies is not reused: its host peak is not
    replayed here."""
    for c in prior:
        if c.structure != shape:
            continue
        if "--host-budget" in copies and any(op == "offload" for op, _ in c.step_indices):
            continue
        steps = [(op, a.real[i]) for op, i in c.step_indices]
        plan = _replayed(a, steps, c.info)
        if plan is not None:
            return plan, steps, c
    return None, None, None


def _checked(a, c):
    """Whether the kernels' strides are known to be a's trace's without a
    run (strides.measure): c, a plan made with no correction, has a's
    structure, and its graph a's shapes and strides, node for node."""
    return isinstance(c, Compiled) and c.info["stride_corrections"] == 0 and \
        same_layouts(a, c.analysis)


def _replayed(a, steps, info):
    """The figures of steps (a plan made for another graph of a's
    structure, under info's budget) replayed at a's sizes; None where they
    do not fit that budget. The status is 'feasible' (proven at no size
    here)."""
    peak = steps_peak(steps, a.memory) + a.fixed_memory
    budget = info["budget"]
    if budget is None or peak > budget:
        return None
    cost = sum(a.cost[r] for op, r in steps if op == "compute")
    return {"budget": budget, "peak_memory": peak, "cost": cost, "status": "feasible",
            "strategy": info["strategy"], "param": info["param"], "reused": True}


_OPS = ("compute", "free", "offload", "fetch")


class _Kept:
    """A plan an earlier run made for a graph structure, as the cache
    keeps it under shape_key: its steps (op, node index) and the budget
    in bytes it was made for."""
    LIMIT = 8   # plans kept per structure, the latest first

    def __init__(self, structure, step_indices, info):
        self.structure, self.step_indices, self.info = structure, step_indices, info

    @classmethod
    def load(cls, cache, key, structure):
        """The plans kept under key for structure (none without a cache or
        key); an entry that does not read as one is left out."""
        value = cache.get(key) if cache is not None and key is not None else None
        entries = value.get("plans") if isinstance(value, dict) else None
        out = []
        for e in entries if isinstance(entries, list) else []:
            try:
                steps = [(op, int(i)) for op, i in e["steps"]]
                info = {"budget": int(e["budget"]), "strategy": str(e["strategy"]),
                        "param": e.get("param")}
            except (KeyError, TypeError, ValueError):
                continue
            if all(op in _OPS and 0 <= i < len(structure) for op, i in steps):
                out.append(cls(structure, steps, info))
        return out

    @classmethod
    def store(cls, cache, key, kept, step_indices, plan):
        """Keeps a new plan first under key, the LIMIT - 1 latest after it."""
        if cache is None or key is None:
            return
        def entry(steps, info):
            return {"steps": [list(s) for s in steps], "budget": info["budget"],
                    "strategy": info.get("strategy"), "param": info.get("param")}
        new = entry(step_indices, plan)
        old = [entry(k.step_indices, k.info) for k in kept]
        if old[:1] == [new]:    # kept first already (the solver's plan from the cache)
            return
        rest = [e for e in old if e != new]
        cache.put(key, {"plans": [new] + rest[:cls.LIMIT - 1]})


def _device_of(tensors):
    """The device of the first CUDA tensor of tensors, else the CPU."""
    return next((t.device for t in tensors if isinstance(t, torch.Tensor)
                 and t.device.type == "cuda"), torch.device("cpu"))


def _device_name(tensors):
    device = _device_of(tensors)
    if device.type == "cuda":
        return "cuda: " + torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                         "")
    except OSError:
        model = ""
    return "cpu: " + (model or platform.machine())


def _time_costs(a, tensors, cache):
    """graph node -> the median milliseconds of its op on the example
    (execute.measure_costs), from the cache where it has them."""
    key = cost_key(a.traced.gm.code, a.to_json("step", {}), _device_name(tensors),
                   torch.get_num_threads(), torch.__version__)

    def measure():
        with no_autocast():
            times = measure_costs(a, tensors)
        return {r.name: ms for r, ms in times.items()}
    kept = kept_or_measured(cache, key, lambda v: all(r.name in v for r in a.real), measure)
    return {r: kept[r.name] for r in a.real}


def _program(a, forward_steps, backward_steps, script=True):
    """(the plan's generated code, why it is Python or None): compiled by
    TorchScript where it gives the same ops (script.py), else Python; the
    environment's CHECKMATE_TORCHSCRIPT=0 keeps it Python, and so does
    script=False (until a later call)."""
    try:
        if not script:
            note = "Python at the first step of a plan reused at these sizes"
        elif os.environ.get("CHECKMATE_TORCHSCRIPT", "1") == "0":
            note = "CHECKMATE_TORCHSCRIPT=0"
        elif not private.has_torchscript():
            note = "this torch lacks TorchScript's private names (checkmate_torch/private.py)"
        else:
            try:
                return ScriptProgram(a, forward_steps, backward_steps), None
            except ScriptError as e:
                note = str(e)
        return Program(a, forward_steps, backward_steps), note
    except PlanError as e:
        raise RematError("plan: %s" % e) from None


class _Step(torch.autograd.Function):
    """The plan's forward steps in forward, the rest in backward. The
    resident values at the boundary stay with the autograd node (ctx), as
    saved tensors would."""

    @staticmethod
    def forward(ctx, compiled, tensors, shared, *edged):
        ctx.set_materialize_grads(False)
        t0 = time.perf_counter()
        with no_autocast():
            outs, state = compiled.program.forward(
                [t.detach() if t.requires_grad else t for t in tensors])
        ctx.forward_ms = (time.perf_counter() - t0) * 1e3
        out = compiled.traced.out
        # One output per tensor the model returns (out.unique); each a new
        # tensor for autograd: one that is an input, or that the plan
        # made the same object as another, is returned as a copy.
        seen = set(id(t) for t in tensors)
        res = []
        for i in out.unique:
            o = outs[i]
            if id(o) in seen:
                o = o.clone()
            seen.add(id(o))
            res.append(o)
        diff = set(out.diff) | set(out.unreadable)
        ctx.mark_non_differentiable(*[o for i, o in zip(out.unique, res) if i not in diff])
        ctx.state = state
        ctx.compiled = compiled
        ctx.program = compiled.program   # the forward's, whichever runs later
        ctx.params = tensors[:compiled.n_params]
        ctx.shared = shared
        return tuple(res)

    @staticmethod
    def backward(ctx, *grad_outputs):
        state = getattr(ctx, "state", None)
        if state is None:
            raise RematError("backward through a checkmate step runs once per forward "
                             "(retain_graph is not supported)")
        ctx.state = None
        c = ctx.compiled
        for i in c.traced.out.unreadable:
            if grad_outputs[c.traced.out.slot[i]] is not None:
                raise RematError(
                    "the loss reaches output %d of the model, whose gradient reads a tensor "
                    "the forward wrote in place afterwards (an ordinary backward fails too: "
                    "one of the variables needed for gradient computation has been modified "
                    "by an inplace operation)" % i)
        t0 = time.perf_counter()
        tangents, given = [], set()
        for k, i in enumerate(c.traced.out.diff):
            g = grad_outputs[c.traced.out.slot[i]]
            if g is not None:
                given.add(k)
            tangents.append(g)
        # A gradient computed from outputs the loss does not reach only is
        # None, as autograd leaves it: not added into .grad, not returned.
        unreached = {j for j, ts in enumerate(c.analysis.grad_tangents) if ts and not ts & given}
        _quiet_hooks([ctx.params[i] for j, (kind, i) in enumerate(c.traced.grad_of)
                      if j in unreached and kind == "param"])
        into = _accumulate_into(ctx.params, c.traced.grad_of, c.grad_meta, ctx.shared)
        with no_autocast():
            if len(given) == len(tangents):
                grads = ctx.program.backward(state, tangents, into)
            else:
                # outputs the loss does not reach: the backward lowered for
                # those tangents absent, compiled by TorchScript once for
                # them, else run by the interpreter from the forward's state
                absent = frozenset(range(len(tangents))) - given
                into = [None if j in unreached else t for j, t in enumerate(into)]
                grads = ctx.program.backward_absent(state, tangents, into, absent)
                try:
                    if grads is None:
                        it = Interpreter(ctx.program.lowered, binding=ctx.program.binding)
                        grads = it.backward(ctx.program.unpack(state), tangents, into, absent)
                except PlanError as e:
                    raise RematError("plan: %s" % e) from None
        c.timed(ctx.forward_ms + (time.perf_counter() - t0) * 1e3)
        return (None, None, None) + tuple(None if j in unreached else g
                                          for j, g in enumerate(grads))


def _quiet_hooks(params):
    """Autograd calls a parameter's hooks whenever a node with an edge to
    it runs, with None when that node gives no gradient; without a plan,
    a parameter the loss does not reach has no such node and its hooks are
    not called. So the hooks of params (which get None from this backward)
    are set aside until the backward ends: the dicts autograd reads them
    from are emptied, and refilled by a callback of the engine."""
    saved = []
    for p in params:
        for hooks in private.gradient_hooks(p):
            saved.append((hooks, dict(hooks)))
            hooks.clear()
    if saved:
        def refill():
            for hooks, items in saved:
                hooks.update(items)
        private.at_backward_end(refill)


def _accumulate_into(params, grad_of, meta, shared):
    """For each gradient of the step (in the order of grad_of), the .grad
    tensor it is added into as soon as it is produced, or None: a
    parameter gradient is added in place into the parameter's existing
    .grad, as autograd's AccumulateGrad would add it, so that the step
    does not hold every new gradient until the backward ends. Gradients
    of inputs, of parameters whose .grad is None or that have hooks, or
    whose .grad differs from the gradient (meta: its traced shape, dtype
    and sparsity), or that share memory with an input that requires a
    gradient (shared: autograd adds the input's share first) go back
    through autograd."""
    out = []
    for (kind, k), m in zip(grad_of, meta):
        p = params[k] if kind == "param" else None
        old = p.grad if p is not None else None
        ok = old is not None and m == (old.shape, old.dtype, False) and not old.is_sparse \
            and k not in shared \
            and not private.gradient_hooks(p)
        out.append(old if ok else None)
    return out


def _placed_dims(args, kwargs, dynamic):
    """{index of a placed input: dimensions} of a declaration checked by
    dynamic.declared ({position or keyword: {dim: max}})."""
    inputs = Inputs(args, kwargs)
    out = {}
    for key, dims in dynamic.items():
        t = args[key] if isinstance(key, int) else kwargs[key]
        for j, u in enumerate(inputs.tensors):
            if u is t:
                out.setdefault(inputs.where[j], set()).update(d % t.dim() for d in dims)
    return out


def _input_kind(inputs):
    """An Inputs' key (Inputs.key) without its sizes and strides."""
    return (str(inputs.spec), repr(inputs.constants), tuple(inputs.where), tuple(
        (t.dim(), t.dtype, str(t.device), t.requires_grad) for t in inputs.placed))


def _varying(inputs, earlier):
    """{index of a placed input: dimensions} in which inputs' sizes differ
    from earlier's (Inputs), which has the same structure, constants,
    dtypes, devices and dimensions; {} where it differs otherwise."""
    if _input_kind(inputs) != _input_kind(earlier):
        return {}
    out = {}
    for i, (t, u) in enumerate(zip(inputs.placed, earlier.placed)):
        ds = {d for d in range(t.dim()) if t.shape[d] != u.shape[d]}
        if ds:
            out[i] = ds
    return out


def _distributed_wrapper(model):
    """The name of the data-parallel wrapper model is, or None."""
    names = {"DistributedDataParallel": "DDP", "DataParallel": "DataParallel",
             "FullyShardedDataParallel": "FSDP"}
    for cls in type(model).__mro__:
        if cls.__name__ in names and cls.__module__.startswith("torch."):
            return names[cls.__name__]
    return None


class _Figures:
    """A copied module's plan_info until its first step."""

    def __init__(self, info):
        self.info = info


class _Wrapper(torch.nn.Module):
    """What remat's two modules share: the wrapped model (self.model), whose
    own state_dict keys they save and load (no `model.` prefix), so that
    a checkpoint of one loads into the other."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.register_load_state_dict_pre_hook(_into_model)

    def state_dict(self, *args, **kwargs):
        """The wrapped model's state_dict (its keys, with the prefix a
        parent module gives)."""
        return self.model.state_dict(*args, **kwargs)


def _into_model(module, state_dict, prefix, *_):
    """load_state_dict's pre-hook: this module's keys (prefix + the
    model's own) are the model's, under prefix + 'model.'."""
    for k in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[prefix + "model." + k[len(prefix):]] = state_dict.pop(k)


def _say_once(module, reason, message):
    """A warning, once a module for each reason."""
    said = module.__dict__.setdefault("_said", set())
    if reason not in said:
        said.add(reason)
        warnings.warn(message, stacklevel=4)


class Remat(_Wrapper):
    """See remat()."""

    def __init__(self, model, example_args, example_kwargs, budget, strategy,
                 time_limit, binary, cache, cost, copies=(), dynamic=None, background=False):
        super().__init__(model)
        self._settings = (budget, strategy, time_limit, binary, cache, cost, copies)
        self._background = background
        self._searching = []    # plans whose search goes on beside training
        self._plans = {}
        self._families = []     # the plans traced with symbolic sizes, latest last
        self.symbolic_note = None   # why the last symbolic trace was given up
        self._symbolic = private.has_symbolic() and \
            os.environ.get("CHECKMATE_SYMBOLIC", "1") != "0"
        args, kwargs = tuple(example_args), dict(example_kwargs or {})
        self._declared = _placed_dims(args, kwargs, dynamic or {})
        self._last = self._compile(args, kwargs)

    def _key(self, inputs, params, sizes=True):
        """What a plan depends on: the inputs (Inputs.key), autocast, and
        the model's parameters (how many, tied or not, which require
        gradients); sizes=False: the inputs' sizes and strides aside (a
        symbolic plan's own check)."""
        return inputs.key() if sizes else _input_kind(inputs), autocast_key(), \
            tuple([(p.requires_grad, p.shape, p.dtype) for p in params])

    def _settle(self):
        """Takes the final plans of the searches beside training that have
        ended (Compiled.settle); the copies sized from a symbolic plan's
        first plan go, to be sized again from its final one (its steps, or
        its figures)."""
        for c in list(self._searching):     # a plan before those that follow it
            if not c.ended():
                continue
            self._searching.remove(c)
            c.settle()
            self._plans = {k: v for k, v in self._plans.items()
                           if v is c or v.source is not c}

    def _compile(self, args, kwargs):
        inputs = Inputs(args, kwargs)
        params, buffers = state_tensors(self.model)
        key = self._key(inputs, params)
        c = self._plans.get(key)
        if c is not None:
            return c
        # a plan traced with symbolic sizes that serves these
        kind = self._key(inputs, params, sizes=False)
        c = next((s for s in (f.sized_at(inputs) for f in self._families[::-1]
                              if f.kind == kind) if s is not None), None)
        prior = list(self._plans.values())[::-1]
        if c is None:
            was = self.model.training
            self.model.train()
            try:
                f = self._family(inputs, prior, kind)
                c = f.sized_at(inputs) if f is not None else None
                if f is not None and c is None:
                    # it does not serve the call it was traced for (a size
                    # the step specialised): sizes are traced one by one
                    self._families.remove(f)
                    f.cancel()
                    self._given_up("its guards (%s) or its budget exclude the call it was "
                                   "made for" % ", ".join(map(str, f.symbols.guards)))
                    f = None
                if c is None:
                    c = Compiled(self.model, args, kwargs, *self._settings, prior=prior,
                                 background=self._background)
                    self._searched(c)
            finally:
                self.model.train(was)
            made = f if f is not None else c
            # the first symbolic plan of an undeclared size is no news
            found = f is not None and not self._declared and len(self._families) == 1
            if prior and not made.info["reused"] and not found:
                same = any(p.structure == made.structure for p in prior)
                _say_once(
                    self, "larger" if same else "other",
                    "checkmate_torch.remat: planned anew for inputs %s: %s" % (
                        inputs.describe(),
                        "the plans made so far do not fit the budget at these sizes" if same
                        else "they trace to another graph than the plans made so far"))
        c.shared_memory(params + buffers + inputs.placed, inputs)
        self._plans[key] = c
        return c

    def _searched(self, c):
        if c.searching:
            self._searching.append(c)

    def _family(self, inputs, prior, kind):
        """A plan traced with symbolic sizes (sizes.py) for the dimensions
        declared dynamic (remat's dynamic=) or, without a declaration,
        those in which the call differs from earlier ones, traced at the
        largest sizes seen; None where there are no such dimensions, or
        the symbolic trace fails (the call is then traced at its own
        sizes)."""
        if not self._symbolic:
            return None
        dims, seen = self._declared, []
        if not dims:
            varying = [(p.traced.inputs, _varying(inputs, p.traced.inputs)) for p in prior]
            seen = [e for e, v in varying if v]
            dims = {}
            for _, v in varying:
                for i, ds in v.items():
                    dims.setdefault(i, set()).update(ds)
            if not dims:
                return None
        # the example (declared: grown to the maxima already), or this call
        # grown to the largest sizes seen
        placed = [grown_tensor(t, {d: max([t.shape[d]] + [e.placed[i].shape[d] for e in seen])
                                   for d in dims.get(i, ())})
                  if seen and i in dims else t for i, t in enumerate(inputs.placed)]
        args, kwargs = inputs.rebuild([placed[k] for k in inputs.where])
        try:
            f = Compiled(self.model, args, kwargs, *self._settings, prior=prior, dynamic=dims,
                         background=self._background)
            self._searched(f)
        except Exception as e:
            # the symbolic trace's limits: sizes are traced one by one
            self._given_up("%s: %s" % (type(e).__name__, _first_line(e)))
            return None
        f.kind = kind
        self._families.append(f)
        return f

    def _given_up(self, why):
        """No more symbolic traces: each new size is traced on its own."""
        self._symbolic, self.symbolic_note = False, why
        _say_once(self, "symbolic", "checkmate_torch.remat: each new size of the inputs is "
                  "traced and planned on its own; the trace with symbolic sizes was given up: "
                  + why)

    @property
    def plan_info(self):
        """The figures of the plan used last (or made for the example);
        "searching": its search goes on beside training (background=True)."""
        return dict(self._last.info, searching=getattr(self._last, "searching", False))

    def __getstate__(self):
        """A copy (copy.deepcopy, pickle, torch.save) leaves the plans
        behind: their traced graphs hold fake tensors and compiled code,
        and they belong to this module's tensors. The copy makes its own
        on its first steps (from the plan cache when there is one)."""
        state = self.__dict__.copy()
        state["_plans"], state["_families"], state["_searching"] = {}, [], []
        state["_last"] = _Figures(dict(self._last.info))
        return state

    def forward(self, *args, **kwargs):
        if not (self.training and torch.is_grad_enabled()):
            return self.model(*args, **kwargs)
        if self._searching:
            self._settle()
        inputs = Inputs(args, kwargs)
        params, buffers = state_tensors(self.model)
        c = self._plans.get(self._key(inputs, params)) or self._compile(args, kwargs)
        self._last = c
        return c.run(params, buffers, inputs)


class RematCompiled(_Wrapper):
    """See remat(compile=True)."""

    def __init__(self, model, step_backend, dynamic=None):
        super().__init__(model)
        from .compiled import own_code, quiet_logging
        self._quiet_logging = quiet_logging
        self._partitioner = step_backend.partitioner
        self._dynamic = dynamic or {}
        self._compiled = torch.compile(own_code(model, "remat_step"), backend=step_backend,
                                       fullgraph=True, dynamic=None)

    def _mark(self, args, kwargs):
        """Marks the declared dimensions (dynamic=) of this call's inputs
        dynamic with their maxima, so that torch.compile makes one graph
        for every size up to them; an input past its maximum is left
        unmarked (compiled for its sizes), with one warning, and one of
        size 0 or 1, which torch.compile compiles apart, silently. Whether
        an input was past its maximum."""
        beyond = False
        for key, dims in self._dynamic.items():
            t = kwargs.get(key) if isinstance(key, str) else \
                args[key] if -len(args) <= key < len(args) else None
            if not isinstance(t, torch.Tensor) or t.dim() <= max(dims):
                continue
            if all(2 <= t.shape[d] <= most for d, most in dims.items()):
                for d, most in dims.items():
                    private.mark_dynamic(t, d, most)
            elif any(t.shape[d] > most for d, most in dims.items()):
                _say_once(self, "beyond", "checkmate_torch.remat: compiled anew for inputs "
                          "%s: past the declared maxima" % Inputs(args, kwargs).describe())
                beyond = True
        return beyond

    @property
    def plan_info(self):
        """The figures of the partition made last (none before the first
        training step compiles one)."""
        if not self._partitioner.info:
            raise RematError("no plan yet: compile=True plans at the first training step")
        return dict(self._partitioner.info[-1])

    def forward(self, *args, **kwargs):
        if not (self.training and torch.is_grad_enabled()):
            return self.model(*args, **kwargs)
        beyond = self._dynamic and self._mark(args, kwargs)
        graphs = self._partitioner.graphs
        try:
            with self._quiet_logging():
                out = self._compiled(*args, **kwargs)
        except private.dynamo_exc("BackendCompilerFailed") as e:
            raise RematError("compile=True: %s" % _first_line(private.backend_error(e))) \
                from None
        except private.dynamo_exc("FailOnRecompileLimitHit"):
            raise RematError("compile=True: a step of a new input signature (shapes, dtypes) "
                             "over torch._dynamo.config.recompile_limit (%d) signatures "
                             "compiled for this module (raise it, or leave compile=False, "
                             "whose plans serve other sequence lengths)"
                             % private.dynamo_config().recompile_limit) from None
        except private.dynamo_exc("TorchDynamoException") as e:
            raise RematError(_dynamo_refusal(e)) from None
        if graphs and self._partitioner.graphs > graphs and not beyond:
            _say_once(self, "anew", "checkmate_torch.remat: partitioned anew for inputs %s: "
                      "torch.compile compiled the step again (sizes past those the "
                      "partitions so far serve, or another graph)"
                      % Inputs(args, kwargs).describe())
        return out


def _first_line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


_GOT = re.compile(r"\bgot (\w+(?:Error|Exception))\((['\"])(.*?)\2\)")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def _dynamo_refusal(e):
    """remat's one line for what dynamo raised: an op that failed on the
    call's fake tensors (a shape or dtype mistake) as a failed trace, the
    rest (a graph break, control flow on a tensor's value) as what one
    graph cannot hold."""
    if _GOT.search(str(e)) and not isinstance(e, private.dynamo_exc("Unsupported")):
        return "compile=True: tracing failed: %s" % _dynamo_error(e, hint=False)
    return "compile=True needs a model torch.compile captures in one graph: %s" % \
        _dynamo_error(e)


def _dynamo_error(e, hint=True):
    """What dynamo raised, in one line: what went wrong (the exception a
    fake tensor raised, the shape or dtype mistake, where its text has
    one), where (the innermost frame of its "from user code" outside
    torch, else the innermost one, and its caller), and with hint its
    hint. Read
    from dynamo's text: where that changes, its first line."""
    text = str(e)
    got = _GOT.search(text)
    what = "%s: %s" % (got.group(1), got.group(3)) if got else _first_line(e)
    frames = _FRAME.findall(text.split("from user code:", 1)[1]) \
        if "from user code:" in text else []
    frames = [fr for fr in frames if not _ours(fr[0])]
    users = [k for k, fr in enumerate(frames) if _outside(fr[0])]
    hint = hint and next((ln.strip()[len("Hint:"):].strip() for ln in text.splitlines()
                          if ln.strip().startswith("Hint:")), None)
    out = what
    if frames:
        at = users[-1] if users else len(frames) - 1
        out += " (at %s%s)" % (_at(frames[at]), ", called from %s" % _at(frames[at - 1])
                               if at else "")
    if hint:
        out += "; torch's hint: %s" % hint
    return out


def _at(frame):
    f, line, func = frame
    return "%s:%s, in %s" % (os.path.basename(f), line, func)


def _ours(filename):
    return os.path.dirname(os.path.abspath(filename)) == _HERE


def remat(model, example_args, example_kwargs=None, *, budget, strategy="auto",
          time_limit=60.0, cache=True, cost="flops", compile=False, dynamic=None,
          offload=None, background=False):
    """A module sharing model's parameters and buffers that, in training
    mode with gradients enabled, runs each forward and backward under a
    checkmate plan for budget: bytes, a string as the CLI takes it ("8G",
    "80%"), or a function of (fixed_memory, checkpoint_all_peak) giving
    bytes. The plan is solved by the `checkmate` binary (found on PATH,
    beside the package, or as $CHECKMATE) with strategy and time_limit
    seconds (ending sooner once within 0.1% of its bound:
    solve.GAP); background=True takes the search's first plan (its
    heuristics', within a second) and trains with it while the search goes
    on in a process of its own, each plan taking the search's final plan
    at the first call after it ends (plan_info["searching"] until then);
    a call whose inputs differ in dtype or constants from the
    example gets a plan of its own; the first that differs in sizes only
    is traced with those sizes symbolic, at the largest seen, and that
    plan serves every call where its guards hold and it fits its budget
    (sizes.py; $CHECKMATE_SYMBOLIC=0 traces each size instead).
    dynamic={input: {dim: max}} (an input by position or keyword) traces
    the example grown to those maxima with those sizes symbolic
    (dynamic.py), so that one plan serves every size up to them (with
    compile=True: one compiled graph, those dimensions symbols). Plans are
    kept on disk (cache.py): cache=True in $CHECKMATE_CACHE_DIR or
    ~/.cache/checkmate, a string names the directory, False keeps none.
    cost: what the plan minimizes, "flops" (from a table) or "time" (each
    op's median time on the example, measured once per signature and kept
    in the cache). offload= lets the plan copy values to host memory and
    back instead of recomputing them: a bandwidth ("25GB/s", or bytes a
    second; True: the device's, measured once a process), or
    {"bandwidth": ..., "rate": ..., "host_budget": ...} (rate:
    the device's cost units a second, needed with cost="flops"); the
    copies run on a stream of their own on CUDA (offload.py; docs/torch.md,
    "Offload to host memory"). In eval mode or without gradients it runs
    model itself. compile=True runs the step through torch.compile's inductor
    instead, `checkmate partition` choosing what the forward saves
    (compiled.py; strategy does not apply, cost="time" times the joint
    graph's ops): one graph per signature (fullgraph; a size that changes
    becomes a symbol, as torch.compile's dynamic=None makes it, the
    partition made at the largest size the graph serves), partitioned at
    its first training step; results torch.compile's up to the rounding of
    other fusions, not an ordinary step's bit for bit (docs/torch.md,
    "Compiled mode")."""
    from .binary import find_checkmate
    if private.version() < MIN_TORCH:
        raise RematError("remat needs torch >= %d.%d (this is torch %s, whose traces can differ "
                         "from an ordinary step): pip install torch==2.13.0"
                         % (MIN_TORCH + (torch.__version__,)))
    try:
        private.check("compile" if compile else "eager")
    except private.PrivateError as e:
        raise RematError(str(e)) from None
    wrapper = _distributed_wrapper(model)
    if wrapper:
        raise RematError("remat(%s(m)) is not supported: the wrapper's gradient hooks would "
                         "not run under the plan; write %s(remat(m, ...)) instead"
                         % (wrapper, wrapper))
    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    if cost not in ("flops", "time"):
        raise RematError("cost must be 'flops' or 'time'; got %r" % (cost,))
    if background and (compile or strategy != "auto" or offload not in (None, False)):
        raise RematError("background=True runs auto's search beside training, with "
                         "compile=False, strategy='auto' and no offload")
    if compile and offload not in (None, False):
        raise RematError("offload= runs with compile=False only: the compiled step's "
                         "partition saves or recomputes")
    try:
        plans = open_cache(cache)
        copies = solvemod.copy_args(offload, cost == "time",
                                    lambda: measured_bandwidth(_device_of(
                                        list(model.parameters()) + list(model.buffers()) +
                                        tensors_of((tuple(example_args), example_kwargs)))))
    except (ValueError, solvemod.SolveError) as e:
        raise RematError(str(e)) from None
    if compile:
        from .compiled import backend
        if not callable(budget):
            try:
                solvemod.budget_arg(budget, 0, 0)
            except solvemod.SolveError as e:
                raise RematError(str(e)) from None
        if strategy != "auto":
            raise RematError("compile=True solves `checkmate partition`, which takes no "
                             "strategy; got strategy=%r" % (strategy,))
        if dynamic is not None:
            try:
                dynamic = declared(example_args, example_kwargs or {}, dynamic)
            except DynamicError as e:
                raise RematError(str(e)) from None
        return RematCompiled(model, backend(budget, time_limit, find_checkmate(), plans, cost),
                             dynamic)
    declared_dims = None
    if dynamic is not None:
        try:
            declared_dims = declared(example_args, example_kwargs or {}, dynamic)
            example_args, example_kwargs = grown(example_args, example_kwargs or {}, dynamic)
        except DynamicError as e:
            raise RematError(str(e)) from None
    return Remat(model, example_args, example_kwargs, budget, strategy, time_limit,
                 find_checkmate(), plans, cost, copies, declared_dims, bool(background))

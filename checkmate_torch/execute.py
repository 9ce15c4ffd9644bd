"""Running a checkmate plan's steps on real tensors.

A step changes memory and time, never results:
  - a random op's first compute draws from the generator as the ordinary
    step would (the graph's rng tokens make first computes follow the
    traced order); its generator state before is kept, and a recompute
    runs from that state and puts the generator back as it found it;
  - no op writes what another reads (functional.py): an op that writes
    runs on a clone; what the step writes of the parameters, buffers and
    inputs is read from snapshots taken when the executor is made, and
    written back into them once, with write_back, at the end of the
    forward.
"""
import contextlib
import statistics
import time

import torch

from . import private
from .graph import Synthetic, call, is_random, nbytes
from .trace import tensors_of

_ADD = torch.ops.aten.add.Tensor
_SUMS = (_ADD, torch.ops.aten.sub.Tensor)


class PlanError(Exception):
    pass


class _Absent:
    """The value of a gradient autograd would not compute: the gradient of
    an output the loss does not reach, and what is computed from such
    gradients alone."""

    def __repr__(self):
        return "ABSENT"


ABSENT = _Absent()


def _device_of(value):
    ts = tensors_of(value)
    return ts[0].device if ts else torch.device("cpu")


def rng_state(device):
    if device.type == "cuda":
        return torch.cuda.get_rng_state(device)
    return torch.get_rng_state()


def set_rng_state(device, state):
    if device.type == "cuda":
        torch.cuda.set_rng_state(state, device)
    else:
        torch.set_rng_state(state)


def zero_tangents(analysis):
    """Zeros for the tangents (the outputs' gradients): for a run of the
    whole step whose gradients are not wanted."""
    return [torch.zeros(tuple(analysis.fake[p].shape), dtype=analysis.fake[p].dtype,
                        device=analysis.fake[p].device)
            for p in analysis.placeholders if analysis.role[p] == "tangent"]


def fixed_values(analysis, tensors):
    """fx placeholder or get_attr node -> its real tensor; tensors are the
    placeholders' values in order (tangents left out, or zeros)."""
    gm = analysis.traced.gm
    it = iter(tensors)
    vals = {}
    for n in analysis.nodes:
        if n.op == "placeholder":
            if analysis.role[n] != "tangent":
                vals[n] = next(it)
        elif n.op == "get_attr":
            vals[n] = getattr(gm, n.target)
    return vals


class Executor:
    """Runs compute and free steps, checking each against the memory model.
    With measure=True it also measures, after every compute, the bytes of
    live tensors: distinct storages of the resident values, the fixed
    values, and the gradients (those not produced yet at the size the
    exporter counted, as fixed_memory does), plus the generator states as
    fixed_memory counts them."""

    def __init__(self, analysis, fixed, measure=False, snapshot=True):
        self.a = analysis
        self.fixed = dict(fixed)
        # what the step writes: the real tensors, and snapshots to read
        # (snapshot=False: fixed holds the snapshots already)
        self.targets = {p: fixed[p] for p in analysis.final}
        if snapshot:
            for p in analysis.final:
                self.fixed[p] = fixed[p].clone()
        self.env = {}
        self.grads = {}
        self.computed = set()
        self.rng_before = {}
        self.tangent_values = None
        self.on_grad = None  # on_grad(i, tensor) -> True when it took gradient i
        self.read = {d for r in analysis.real for d in analysis.deps[r]}
        self.computes = 0
        self.measure = measure
        self.peak = 0
        self.model_bytes = 0
        self.model_peak = 0
        self.tangent_index = {p: i for i, p in enumerate(
            [p for p in analysis.placeholders if analysis.role[p] == "tangent"])}

    def value_of(self, n):
        a = self.a
        k = a.kind[n]
        if k == "real":
            if n not in self.env:
                raise PlanError("'%s' is needed but not resident" % n.name)
            return self.env[n]
        if k == "real-element":
            owner = a.needs[n][0]
            if owner not in self.env:
                raise PlanError("'%s' is needed but not resident" % owner.name)
            v = self.env[owner]
            return v if isinstance(owner, Synthetic) or v is ABSENT else v[n.args[1]]
        if n.op == "placeholder" and a.role[n] == "tangent":
            if a.tangents not in self.env:
                raise PlanError("the tangents are needed but not resident")
            return self.env[a.tangents][self.tangent_index[n]]
        if n.op in ("placeholder", "get_attr"):
            return self.fixed[n]
        return self._call(n)  # a view: rebuilt on demand

    def _call(self, n, replace=None):
        """call(n) on the values of its arguments, where some may be ABSENT
        (tangents the caller gave None for): autograd runs no node whose
        incoming gradients are all undefined and sums only the gradients
        that are, so
          - add(g, ABSENT), add(ABSENT, g), sub(g, ABSENT) are g itself;
          - an op whose gradient arguments are all ABSENT is ABSENT;
          - an op with some ABSENT ones (a formula of several outputs'
            gradients) gets zeros there, as autograd's formulas do."""
        vals = {}

        def look(d):
            vals[d] = self.value_of(d)
            return vals[d]
        torch.fx.node.map_arg((n.args, n.kwargs), look)
        absent = {d for d, v in vals.items() if v is ABSENT}
        if not absent:
            return call(n, vals.__getitem__, replace)
        if n.target in _SUMS and len(n.args) == 2 and not n.kwargs:
            a, b = n.args
            if b in absent and a not in absent:
                return vals[a]
            if a in absent and b not in absent and n.target is _ADD:
                return vals[b]
        if all(d in absent or not self._is_gradient(d) for d in vals):
            return ABSENT
        return call(n, lambda d: self._zeros(d) if d in absent else vals[d], replace)

    def _is_gradient(self, d):
        if d.op == "placeholder":
            return self.a.role[d] == "tangent"
        o = self.a.owner(d)
        return o is not None and o in self.a.backward

    def _zeros(self, d):
        f = self.a.fake[d]
        return torch.zeros(tuple(f.shape), dtype=f.dtype, device=f.device)

    def compute(self, r):
        if r in self.env:
            raise PlanError("compute '%s': already resident" % r.name)
        for d in self.a.deps[r]:
            if d not in self.env:
                raise PlanError("compute '%s': dep '%s' is not resident" % (r.name, d.name))
        first = r not in self.computed
        if isinstance(r, Synthetic):
            self.env[r] = self._synthetic(r)
        elif is_random(r):
            self.env[r] = self._random(r, first)
        else:
            replace = None
            if r in self.a.cumulative:
                # BatchNorm(momentum=None): the momentum the ordinary step
                # computes from the count it has incremented k times.
                i, count, k = self.a.cumulative[r]
                replace = {i: 1.0 / float(self.fixed[count] + k)}
            self.env[r] = self._call(r, replace)
        self.computed.add(r)
        self.computes += 1
        self._collect_grads(self.a.grads_needing.get(r, ()))
        if self.measure:
            self.model_bytes += self.a.memory[r]
            self.peak = max(self.peak, self.live_bytes())
            self.model_peak = max(self.model_peak, self.model_bytes + self.a.fixed_memory)

    def _synthetic(self, r):
        if r.kind == "projection":
            base = self.env[r.base]
            return ABSENT if base is ABSENT else base[r.index]
        if r.kind == "tangents":
            if self.tangent_values is None:
                raise PlanError("the tangents are computed before the backward")
            return self.tangent_values
        return True  # an rng token: its state is in rng_before

    def _random(self, r, first):
        device = _device_of(self.a.fake[r])
        if first:
            self.rng_before[r] = rng_state(device)
            return call(r, self.value_of)
        now = rng_state(device)
        set_rng_state(device, self.rng_before[r])
        try:
            return call(r, self.value_of)
        finally:
            set_rng_state(device, now)

    def free(self, r):
        if r not in self.env:
            raise PlanError("free '%s': not resident" % r.name)
        del self.env[r]
        if self.measure:
            self.model_bytes -= self.a.memory[r]

    def write_back(self):
        """What the step writes of the parameters, buffers and inputs: each
        one's last version copied into it, as the ordinary forward leaves
        it."""
        with torch.no_grad():
            for p, v in self.a.final.items():
                self.targets[p].copy_(self.value_of(v))

    def run(self, steps, start=0):
        """Runs (op, graph node) steps, as resolve makes them, numbered
        from start in errors."""
        for k, (op, r) in enumerate(steps):
            try:
                if op == "compute":
                    self.compute(r)
                else:
                    self.free(r)
            except PlanError as e:
                raise PlanError("step %d: %s" % (start + k, e))

    def _collect_grads(self, candidates):
        for i in candidates:
            g = self.a.grads[i]
            if i not in self.grads and all(d in self.env for d in self.a.needs[g]):
                v = self.value_of(g)
                if v is ABSENT:
                    v = None
                elif self.on_grad is not None and self.on_grad(i, v):
                    self._release(g, v)
                    v = None
                self.grads[i] = v

    def _release(self, g, v):
        """Drops the executor's references to gradient v once on_grad took
        it: the tuple element it is, or the whole value of a node nothing
        reads (a linear layer's weight gradient), so that it does not stay
        alive while the plan keeps that node."""
        o = self.a.owner(g)
        for c in (o, getattr(o, "base", None)):
            val = self.env.get(c)
            if isinstance(val, (tuple, list)):
                self.env[c] = tuple(None if t is v else t for t in val)
            elif isinstance(val, torch.Tensor) and c not in self.read:
                if val is v or private.base(v) is val:
                    self.env[c] = None

    def outputs(self):
        return [self.value_of(o) for o in self.a.outputs]

    def live_bytes(self):
        seen = {}
        tensors = list(self.fixed.values()) + list(self.targets.values()) + \
            [g for g in self.grads.values() if g is not None]
        for v in self.env.values():
            tensors += tensors_of(v)
        for t in tensors:
            st = t.storage()
            key = st.data_ptr()
            if key:
                seen[key] = max(seen.get(key, 0), st.nbytes())
        pending = sum(nbytes(self.a.fake[g]) for i, g in enumerate(self.a.grads)
                      if i not in self.grads)
        # the generator states, kept or not yet, as fixed memory counts them
        return sum(seen.values()) + pending + self.a.fixed_parts["rng_states"]

    def finish(self):
        missing = [r.name for r in self.a.real if r not in self.computed]
        if missing:
            raise PlanError("node '%s' is never computed" % missing[0])
        self._collect_grads([i for i, g in enumerate(self.a.grads) if not self.a.needs[g]])
        if len(self.grads) != len(self.a.grads):
            raise PlanError("%d of %d gradients were never produced"
                            % (len(self.a.grads) - len(self.grads), len(self.a.grads)))
        return [self.grads[i] for i in range(len(self.a.grads))]


def resolve(analysis, steps):
    """A plan's steps as (op, graph node); PlanError names the bad step."""
    out = []
    for k, s in enumerate(steps):
        op, name = (s.get("op"), s.get("node")) if isinstance(s, dict) else (None, None)
        if op not in ("compute", "free"):
            raise PlanError("step %d: unknown op '%s'" % (k, op))
        r = analysis.by_name.get(name)
        if r is None:
            raise PlanError("step %d: %s '%s': no such node in the traced graph" % (k, op, name))
        out.append((op, r))
    return out


def compare(got, want):
    """(bitwise equal, max abs difference, max difference relative to the
    largest reference magnitude of each tensor)."""
    exact, abs_d, rel_d = True, 0.0, 0.0
    for a, b in zip(got, want):
        if a.shape != b.shape:
            return False, float("inf"), float("inf")
        if not torch.equal(a, b):
            exact = False
        d = (a - b).abs().max().item() if a.numel() else 0.0
        scale = b.abs().max().item() if b.numel() else 0.0
        abs_d = max(abs_d, d)
        rel_d = max(rel_d, d / scale if scale > 0 else d)
    return exact, abs_d, rel_d


@contextlib.contextmanager
def kept_rng(tensors):
    """Puts the generators of the CPU and of the tensors' devices back as
    they were (a run on the example must not move the caller's streams)."""
    devices = {t.device for t in tensors if isinstance(t, torch.Tensor)}
    states = {d: rng_state(d) for d in devices | {torch.device("cpu")}}
    try:
        yield
    finally:
        for d, st in states.items():
            set_rng_state(d, st)


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_costs(analysis, fixed, repeats=5):
    """Median wall time in milliseconds of each node's op, computed again
    `repeats` times right after its first compute (the warm-up), the nodes
    in file order (synthetic nodes cost 0). On a GPU each time is taken
    between synchronizations. The generators are left as found."""
    ex = Executor(analysis, fixed)
    ex.tangent_values = zero_tangents(analysis)
    times = {}
    with kept_rng(list(fixed.values())), torch.no_grad():
        for op, r in analysis.in_order_steps():
            if op == "free":
                ex.free(r)
                continue
            ex.compute(r)
            if isinstance(r, Synthetic):
                times[r] = 0
                continue
            device = _device_of(analysis.fake[r])
            samples = []
            for _ in range(repeats):
                ex.free(r)
                _sync(device)
                t0 = time.perf_counter()
                ex.compute(r)
                _sync(device)
                samples.append((time.perf_counter() - t0) * 1e3)
            times[r] = round(statistics.median(samples), 6)
    return times

"""Replaying a checkmate plan on the traced step with real tensors."""
import torch

from .graph import call, is_random, nbytes, tensors_of
from .trace import loss_of

RNG_BASE = 1000  # random ops run under manual_seed(RNG_BASE + node index)


class PlanError(Exception):
    pass


def fixed_values(analysis, params, buffers, x):
    """fx placeholder or get_attr node -> its real tensor."""
    gm = analysis.traced.gm
    inputs = iter(list(params) + list(buffers) + [x])
    vals = {}
    for n in analysis.nodes:
        if n.op == "placeholder":
            vals[n] = next(inputs)
        elif n.op == "get_attr":
            vals[n] = getattr(gm, n.target)
    return vals


class Replay:
    """Runs compute and free steps, checking each against the memory model,
    and measures the bytes of live tensors after every compute: distinct
    storages of the resident values, the parameters, buffers, input and
    constants, and the gradients (those not produced yet at the size the
    exporter counted, as fixed_memory does)."""

    def __init__(self, analysis, fixed):
        self.a = analysis
        self.fixed = fixed
        self.env = {}
        self.grads = {}  # index into analysis.grads -> tensor
        self.by_name = {r.name: r for r in analysis.real}
        self.index = {r: i for i, r in enumerate(analysis.real)}
        self.computed = set()
        self.computes = 0
        self.peak = 0
        self.model_bytes = 0   # the same walk by the exporter's byte counts
        self.model_peak = 0

    def value_of(self, n):
        if n in self.env:
            return self.env[n]
        k = self.a.kind[n]
        if k == "real":
            raise PlanError("'%s' is needed but not resident" % n.name)
        if n.op in ("placeholder", "get_attr"):
            return self.fixed[n]
        return call(n, self.value_of)  # a view: rebuilt on demand

    def compute(self, name):
        r = self._node(name, "compute")
        if r in self.env:
            raise PlanError("compute '%s': already resident" % name)
        for d in self.a.deps[r]:
            if d not in self.env:
                raise PlanError("compute '%s': dep '%s' is not resident" % (name, d.name))
        if is_random(r.target):
            torch.manual_seed(RNG_BASE + self.index[r])
        self.env[r] = call(r, self.value_of)
        self.computed.add(r)
        self.computes += 1
        self.model_bytes += self.a.memory[r]
        self._collect_grads()
        self.peak = max(self.peak, self.live_bytes())
        self.model_peak = max(self.model_peak, self.model_bytes + self.a.fixed_memory)

    def free(self, name):
        r = self._node(name, "free")
        if r not in self.env:
            raise PlanError("free '%s': not resident" % name)
        del self.env[r]
        self.model_bytes -= self.a.memory[r]

    def _node(self, name, op):
        r = self.by_name.get(name)
        if r is None:
            raise PlanError("%s '%s': no such node in the traced graph" % (op, name))
        return r

    def _collect_grads(self):
        for i, g in enumerate(self.a.grads):
            if i in self.grads:
                continue
            if all(d in self.env for d in self.a.needs[g]):
                self.grads[i] = self.value_of(g)

    def live_bytes(self):
        seen = {}
        tensors = list(self.fixed.values()) + list(self.grads.values())
        for v in self.env.values():
            tensors += tensors_of(v)
        for t in tensors:
            st = t.storage()
            key = st.data_ptr()
            if key:
                seen[key] = max(seen.get(key, 0), st.nbytes())
        pending = sum(nbytes(self.a.fake[g]) for i, g in enumerate(self.a.grads)
                      if i not in self.grads)
        return sum(seen.values()) + pending

    def finish(self):
        missing = [r.name for r in self.a.real if r not in self.computed]
        if missing:
            raise PlanError("node '%s' is never computed" % missing[0])
        if len(self.grads) != len(self.a.grads):
            raise PlanError("%d of %d gradients were never produced"
                            % (len(self.a.grads) - len(self.grads), len(self.a.grads)))
        return [self.grads[i] for i in range(len(self.a.grads))]


def replay(analysis, fixed, steps):
    rp = Replay(analysis, fixed)
    for k, s in enumerate(steps):
        op, name = s.get("op"), s.get("node")
        try:
            if op == "compute":
                rp.compute(name)
            elif op == "free":
                rp.free(name)
            else:
                raise PlanError("unknown op '%s'" % op)
        except PlanError as e:
            raise PlanError("step %d: %s" % (k, e))
    return rp, rp.finish()


def in_order_steps(analysis):
    """Every node once in traced order, each freed after its last use."""
    last = {}
    for r in analysis.real:
        for d in analysis.deps[r]:
            last[d] = r
    steps = []
    for r in analysis.real:
        steps.append({"op": "compute", "node": r.name})
        for d in analysis.deps[r]:
            if last[d] is r:
                steps.append({"op": "free", "node": d.name})
    return steps


def eager_gradients(model, x, grad_params):
    """The gradients of an ordinary training step: forward, the same loss,
    loss.backward()."""
    model.zero_grad(set_to_none=True)
    loss_of(model(x)).backward()
    params = list(model.parameters())
    return [params[i].grad for i in grad_params]


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


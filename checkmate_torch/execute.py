"""Running a lowered plan's instructions on tensors (lower.py).

Interpreter follows a Lowered plan's instructions one by one: for `python3
-m checkmate_torch run`, for the measurements (the ops' times, the kernels'
strides, live bytes after each compute), for a backward whose tangents are
partly absent, and as the tests' oracle for the generated code
(codegen.py, script.py), which follows the same instructions. The helpers
below (generator states, comparisons) serve all of them."""
import contextlib
import statistics
import time

import torch

from . import offload, private
from .functional import clone_strided
from .graph import Synthetic, _formula_contiguous, nbytes
from .lower import Clone, Elem, Factor, Lowered, PlanError, Reg, Zeros, device_of, \
    is_copy_register, is_rng_register, split_at_tangents
from .sizes import value_at
from .trace import tensors_of


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
    return [torch.zeros([value_at(d, None) for d in analysis.fake[p].shape],
                        dtype=analysis.fake[p].dtype,
                        device=analysis.fake[p].device)
            for p in analysis.placeholders if analysis.role[p] == "tangent"]


class Interpreter:
    """Runs a Lowered plan's instructions on tensors, with the interface of
    the generated code (codegen.Program): forward(X) -> (outputs, state),
    backward(state, T, A) -> G, where state is [values of each of the
    lowered plan's parts].

    on_mark(ins, k, body, env), when set, is called at each mark
    instruction (body[k]). With measure=True it also counts, after every
    compute: `peak`, the bytes of live tensors (distinct storages of the
    registers and the gradients so far, plus the gradients not produced
    yet at the size the exporter counted, as fixed_memory does, plus the
    generator states as fixed_memory counts them), and `model_peak`, the
    peak by the exporter's sizes."""

    def __init__(self, lowered, measure=False, binding=None):
        self.lw = lowered
        self.a = lowered.a
        # a symbolic trace's sizes: {symbol: size} (sizes.py); None: the
        # traced call's
        self.binding = binding
        self.on_mark = None
        self.measure = measure
        self.computes = 0
        self.peak = self.model_bytes = self.model_peak = 0
        self.pc = None      # the instruction running (or that failed)
        self.body = None
        self.G = []
        self.done = set()   # the gradients complete so far

    # --- running --------------------------------------------------------

    def forward(self, X):
        env = {}
        self.X = X
        self.done = set()
        self.run(self.lw.forward, env)
        outs = [self.value(o, env) for o in self.lw.outputs]
        return outs, [[env[n] for n in part] for part in self.lw.parts]

    def backward(self, state, T, A, absent=()):
        """The backward for the tangents T, of which those at the indices
        absent are absent (their entries are not read)."""
        env = {}
        for names, values in zip(self.lw.parts, state):
            env.update(zip(names, values))
        state.clear()
        self.T, self.A = T, A
        self.G = [None] * len(self.a.grads)
        self.run(self.lw.backward(absent), env)
        return self.G

    def value(self, x, env):
        t = type(x)
        if t is Reg:
            return env[x.name]
        if t is Elem:
            return env[x.name][x.index]
        if t is Clone:
            return clone_strided(self.value(x.arg, env))
        if t is Factor:
            return 1.0 / float(env[x.name] + x.calls)
        if t is Zeros:
            return torch.zeros(self.value(x.shape, env), dtype=x.dtype, device=x.device)
        if t is list or t is tuple:
            return t(self.value(y, env) for y in x)
        return value_at(x, self.binding)

    def run(self, body, env, start=0, stop=None):
        """Runs body[start:stop] on the registers env."""
        self.body = body
        value = self.value
        for k in range(start, len(body) if stop is None else stop):
            ins = body[k]
            self.pc = k
            kind = ins.kind
            if kind == "call":
                args = value(ins.args, env)
                kwargs = {n: value(v, env) for n, v in ins.kwargs.items()}
                env[ins.dst] = ins.target(*_formula_contiguous(ins.target, args), **kwargs)
            elif kind == "mark":
                self._mark(ins, k, body, env)
            elif kind == "free":
                for n in ins.names:
                    del env[n]
            elif kind == "bind":
                env[ins.dst] = value(ins.src, env)
                if ins.grad is not None:
                    self.done.add(ins.grad)
            elif kind == "grad":
                self._grad(ins, env)
            elif kind == "rng_get":
                env[ins.dst] = rng_state(ins.device)
            elif kind == "rng_set":
                set_rng_state(ins.device, value(ins.src, env))
            elif kind == "load":
                env[ins.dst] = self.X[ins.index]
            elif kind == "const":
                env[ins.dst] = ins.value
            elif kind == "snapshot":
                env[ins.dst] = env[ins.src].clone()
            elif kind == "tangents":
                env[ins.dst] = self.T
            elif kind == "keep":
                self.G[ins.index] = value(ins.src, env)
            elif kind == "offload":
                env[ins.dst], env[ins.event] = offload.to_host(value(ins.src, env))
            elif kind == "fetch":
                env[ins.dst], env[ins.event] = offload.to_device(value(ins.src, env), ins.device)
            elif kind == "wait":
                offload.wait(env[ins.event])
            elif kind == "write_back":
                with torch.no_grad():
                    for t, v in ins.pairs:
                        v = value(v, env)
                        if v is not env[t]:
                            env[t].copy_(v)
            else:
                raise PlanError("unknown instruction %r" % (ins,))
        self.pc = None

    def _grad(self, ins, env):
        self.done.add(ins.index)
        if ins.src is None:
            self.G[ins.index] = None
            return
        g = self.value(ins.src, env)
        for n in ins.drop:
            del env[n]
        t = self.A[ins.index]
        if t is not None:
            t.add_(g)
            for name, how in ins.release:
                v = env[name]
                if how == "tuple":
                    env[name] = tuple(None if x is g else x for x in v)
                elif v is g or private.base(g) is v:
                    env[name] = None
            g = None
        self.G[ins.index] = g

    def _mark(self, ins, k, body, env):
        what = ins.what
        if what == "compute":
            self.computes += 1
        if not self.measure or what == "offload" or getattr(ins, "host", False):
            pass   # nothing changes on the device
        elif what == "free":
            self.model_bytes -= self.a.memory[ins.node]
        else:
            self.model_bytes += self.a.memory[ins.node]
            self.peak = max(self.peak, self.live_bytes(env))
            self.model_peak = max(self.model_peak, self.model_bytes + self.a.fixed_memory)
        if self.on_mark is not None:
            self.on_mark(ins, k, body, env)

    def failed_node(self):
        """The graph node whose compute was running when an instruction
        failed (the next compute mark from there)."""
        for ins in self.body[self.pc:]:
            if ins.kind == "mark" and ins.what == "compute":
                return ins.node
        return None

    def live_bytes(self, env):
        seen = {}
        tensors = [g for g in self.G if g is not None]
        for name, v in env.items():
            if not is_rng_register(name) and not is_copy_register(name):
                tensors += tensors_of(v)
        for t in tensors:
            st = t.storage()
            key = st.data_ptr()
            if key:
                seen[key] = max(seen.get(key, 0), st.nbytes())
        pending = sum(value_at(nbytes(self.a.fake[g]), self.binding)
                      for i, g in enumerate(self.a.grads) if i not in self.done)
        # the generator states, kept or not yet, as fixed memory counts them
        return sum(seen.values()) + pending + self.a.fixed_parts["rng_states"]


def replay(analysis, tensors, steps, tangents, measure=False):
    """Runs a plan file's steps (as resolve makes them) on tensors (the
    placeholders' values, tangents left out) and the tangents, without
    writing back what the step writes (a plan file's steps need not keep
    the last versions until the end): (interpreter, gradients)."""
    fwd, bwd = split_at_tangents(analysis, steps)
    lw = Lowered(analysis, fwd, bwd, in_place=False, write_back=False, outputs=False)
    it = Interpreter(lw, measure)
    _, state = it.forward(tensors)
    return it, it.backward(state, tangents, [None] * len(analysis.grads))


def whole_step(analysis, tensors, on_mark, steps=None):
    """Runs steps (checkpoint-all's by default) on tensors without autograd
    or write-back, zeros for the tangents, calling on_mark(interpreter,
    ins, k, body, env) at each mark; the generators are left as found."""
    fwd, bwd = split_at_tangents(analysis, steps or analysis.in_order_steps())
    lw = Lowered(analysis, fwd, bwd, in_place=False, write_back=False, outputs=False)
    it = Interpreter(lw)
    it.on_mark = lambda *m: on_mark(it, *m)
    with kept_rng(tensors), torch.no_grad():
        try:
            _, state = it.forward(tensors)
            it.backward(state, zero_tangents(analysis), [None] * len(analysis.grads))
        except Exception as e:
            if it.pc is not None:
                # the graph node being computed, for the caller
                e.checkmate_node = it.failed_node()
            raise
    return it


def resolve(analysis, steps):
    """A plan's steps as (op, graph node); PlanError names the bad step."""
    out = []
    for k, s in enumerate(steps):
        op, name = (s.get("op"), s.get("node")) if isinstance(s, dict) else (None, None)
        if op not in ("compute", "free", "offload", "fetch"):
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


def measure_costs(analysis, tensors, repeats=5):
    """Median wall time in milliseconds of each node's op, computed again
    `repeats` times right after its first compute (the warm-up), the nodes
    in file order (synthetic nodes cost 0); tensors: the placeholders'
    values, tangents left out. On a GPU each time is taken between
    synchronizations. The generators are left as found."""
    times = {}

    def timed(it, ins, k, body, env):
        r = ins.node
        if ins.what != "compute" or r in times:
            return
        if isinstance(r, Synthetic):
            times[r] = 0
            return
        device = device_of(analysis.fake[r])
        samples = []
        for _ in range(repeats):
            env.pop(it.lw.names[r], None)
            _sync(device)
            t0 = time.perf_counter()
            it.run(body, env, ins.start, k)
            _sync(device)
            samples.append((time.perf_counter() - t0) * 1e3)
        times[r] = round(statistics.median(samples), 6)
    whole_step(analysis, tensors, timed)
    return times

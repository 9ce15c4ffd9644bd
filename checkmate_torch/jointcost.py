"""Measured costs of a joint graph's ops (remat(..., compile=True,
cost="time")): what each op costs in the compiled step, in milliseconds
on the device of the graph's values.

Inductor runs the compute-intensive ops (matmuls, convolutions) as
library calls, as eager does: their cost is their measured time. It fuses
the others into its generated kernels, where a recomputed pointwise op or
reduction adds its arithmetic to a kernel that reads and writes memory
anyway: its cost is its measured time less the time of a copy of its
output (the memory pass fusion spares), never below 0. A transcendental
op (erf, exp, tanh) keeps most of its time that way; a multiply keeps
next to none. Each op runs on random inputs of its example values' shapes
and dtypes, once to warm up and then `repeats` times (the median); an op
that will not run so gets its FLOPs at the device's measured matmul rate.

A value the forward saves for the backward costs memory traffic: the
forward writes it, the backward reads it (copy_costs, rates). A value
the backward computes again in a kernel of its own costs that kernel's
launch, which decides a step whose kernels are short, as on a GPU
(launch_ms, rates).

A library call of the backward holds memory of its own while it runs
(workspaces), which the partition counts as the node's workspace."""
import contextlib
import functools
import statistics
import time

import torch

from . import private

# The reference matmul for the FLOP rate: (M, K) @ (K, N).
_M, _K, _N = 512, 256, 1024


def real_tensors(fn):
    """fn run without torch's fake tensor mode, without autocast, and
    with the generators put back after. The partitioner runs under fake
    mode (inductor traces with fake tensors): torch.randn there makes
    fake tensors, and an op's time would be its dispatch's, the same at
    any size. A measurement may run inside the user's step (a new
    signature's first call, under its autocast): its random examples and
    draws must not move the step's random stream."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        cuda = [torch.cuda.current_device()] \
            if torch.cuda.is_available() and torch.cuda.is_initialized() else []
        with private.unset_fake(), torch.random.fork_rng(devices=cuda), \
                torch.autocast("cpu", enabled=False), \
                torch.autocast("cuda", enabled=False) if cuda else contextlib.nullcontext():
            return fn(*args, **kwargs)
    return run


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(fn, device, repeats, stat=statistics.median):
    fn()
    _sync(device)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        _sync(device)
        samples.append((time.perf_counter() - t0) * 1e3)
    return stat(samples)


def _example(v, device):
    """A random tensor like meta value v (contiguous), on device."""
    if v.dtype.is_floating_point or v.dtype.is_complex:
        return torch.randn(tuple(v.shape), dtype=v.dtype, device=device)
    if v.dtype == torch.bool:
        return torch.rand(tuple(v.shape), device=device) > 0.5
    return torch.randint(0, 2, tuple(v.shape), dtype=v.dtype, device=device)


def device_of(nodes):
    """The device of the first tensor-valued node of nodes (cpu if none)."""
    for n in nodes:
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            return torch.device(v.device)
    return torch.device("cpu")


def _args(n, device, make=None):
    """n's arguments with every tensor-valued node replaced by a random
    tensor like it (make(node, device), or _example of its value); None
    when an argument is a node of another kind."""
    bad = []

    def one(a):
        v = a.meta.get("val")
        if isinstance(v, torch.Tensor):
            return make(a, device) if make else _example(v, device)
        if isinstance(v, (int, float, bool)):
            return v
        bad.append(a)
        return None
    args = torch.fx.node.map_arg(n.args, one)
    kwargs = torch.fx.node.map_arg(n.kwargs, one)
    return None if bad else (args, kwargs)


def _ms_per_flop(device, dtype, repeats, m=_M, k=_K, n=_N, stat=statistics.median):
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    c = torch.empty(m, n, device=device, dtype=dtype)
    return _timed(lambda: torch.mm(a, b, out=c), device, repeats, stat) / (2 * m * k * n)


def _copy(x, device, repeats, stat=statistics.median):
    """The time of a copy of tensor x into a tensor allocated beforehand:
    one read and one write of its bytes, without the allocator (whose
    page faults on the CPU made a clone's time vary twentyfold)."""
    y = torch.empty_like(x)
    return _timed(lambda: y.copy_(x), device, repeats, stat)


def _copy_ms(v, device, repeats, copies):
    """The time of a copy of a value like v (a tensor, or a tuple of
    them: their sum), by (numel, dtype) in copies."""
    ms = 0.0
    for t in (v if isinstance(v, (tuple, list)) else (v,)):
        if not isinstance(t, torch.Tensor):
            continue
        key = (t.numel(), t.dtype)
        if key not in copies:
            copies[key] = _copy(_example(t, device), device, repeats)
        ms += copies[key]
    return ms


@real_tensors
def launch_ms(device, repeats=9):
    """The host's time to start one small kernel on device: 100 launches
    of an elementwise op on one element, timed together, per launch (on
    a GPU they run asynchronously, so the host's issue rate decides); the
    least of `repeats` runs. An inductor kernel's launch from its
    generated code costs about as much as an eager op's dispatch."""
    x = torch.zeros(1, device=device)
    y = torch.empty_like(x)

    def batch():
        for _ in range(100):
            torch.neg(x, out=y)
    return _timed(batch, device, repeats, min) / 100


@real_tensors
def rates(device, dtype, repeats=9):
    """What a pass over memory and a kernel's launch cost in FLOPs on
    device, the FLOP costs' prices of a saved value's traffic and of a
    value the backward computes again in a kernel of its own (compiled.py):
    {"flops_per_byte": half the time of a copy, per byte, over the time
    per FLOP of a matmul of dtype; "flops_per_launch": launch_ms over that
    time per FLOP; "flops_per_random": the time of an element's draw of
    bernoulli_ over it (the eager mode's price of a random op,
    graph.Analysis.price)}. The copy is of 4 MiB and the matmul the reference one
    on the CPU; on a GPU, where such kernels take about their launch's
    time, 64 MiB and 2048 cubed. Each the least of its runs: another
    process's load only adds to a time."""
    big = device.type != "cpu"
    x = torch.randn(1 << (24 if big else 20), device=device)
    per_byte = _copy(x, device, repeats, min) / (2 * x.numel() * x.element_size())
    sizes = (2048, 2048, 2048) if big else (_M, _K, _N)
    per_flop = _ms_per_flop(device, dtype, repeats, *sizes, stat=min)
    per_draw = _timed(lambda: x.bernoulli_(0.5), device, repeats, min) / x.numel()
    return {"flops_per_byte": per_byte / per_flop,
            "flops_per_launch": launch_ms(device, repeats) / per_flop,
            "flops_per_random": per_draw / per_flop}


_RATES = {}     # device_rates's, this process's


def device_rates(device, dtype, cache):
    """rates(device, dtype), from cache (a cache.Cache, or None) where it
    has them (keyed by the device, the dtype, the threads and torch's
    version), else measured once a process and kept there: a measurement
    in each run would make every run's graph, and so its plan's key,
    another."""
    from .cache import kept_or_measured, rate_key
    key = rate_key(str(device), str(dtype), torch.get_num_threads(), torch.__version__)
    names = ("flops_per_byte", "flops_per_launch", "flops_per_random")

    def measured():
        if key not in _RATES:
            _RATES[key] = rates(device, dtype)
        return _RATES[key]
    if cache is None:
        return measured()
    return kept_or_measured(
        cache, key, lambda kept: all(isinstance(kept.get(k), (int, float)) for k in names),
        measured)


@real_tensors
def copy_costs(nodes, repeats=5, copies=None):
    """node -> milliseconds of a copy of its value, for the fx nodes
    (copies: the times by (numel, dtype) measured so far, measure's)."""
    device, copies = device_of(nodes), {} if copies is None else copies
    with torch.no_grad():
        return {n: _copy_ms(n.meta.get("val"), device, repeats, copies) for n in nodes}


@real_tensors
def measure(nodes, flop_costs, is_heavy, repeats=5, copies=None):
    """node -> milliseconds, for the fx nodes of a joint graph
    (flop_costs: node -> FLOPs, the fallback; is_heavy(node): a
    compute-intensive op, timed whole; copies: a dict that gets the
    copies' times by (numel, dtype), for copy_costs)."""
    device = device_of(nodes)
    ms_per_flop = _ms_per_flop(device, torch.float32, repeats)
    copies = {} if copies is None else copies
    out = {}
    with torch.no_grad():
        for n in nodes:
            v = n.meta.get("val")
            got = _args(n, device) if isinstance(v, torch.Tensor) else None
            ms = None
            if got is not None:
                try:
                    ms = _timed(lambda: n.target(*got[0], **got[1]), device, repeats)
                except Exception:   # an op that random inputs do not suit
                    ms = None
            if ms is None:
                out[n] = flop_costs[n] * ms_per_flop
                continue
            if not is_heavy(n):
                ms = max(0.0, ms - _copy_ms(v, device, repeats, copies))
            out[n] = ms
    return out


def _signature(n):
    """What decides an op's workspace: its op, its arguments' shapes,
    strides and dtypes and its other arguments."""
    def one(a):
        v = a.meta.get("val")
        return (tuple(v.shape), tuple(v.stride()), str(v.dtype)) \
            if isinstance(v, torch.Tensor) else repr(v)
    return str(n.target), repr(torch.fx.node.map_arg((n.args, n.kwargs), one))


def _laid_out(a, device, channels_last):
    """A random tensor like node a's value: channels-last where a is in
    channels_last, else with the value's strides where they are dense
    (a broadcast view's are not: contiguous then)."""
    v = a.meta["val"]
    x = _example(v, device)
    if a in channels_last:
        return x.contiguous(memory_format=torch.channels_last)
    if private.dense(v):
        x = torch.empty_strided(tuple(v.shape), tuple(v.stride()), dtype=v.dtype,
                                device=device).copy_(x)
    return x


def _layouts(n, device, pinned):
    """Setups (measure.op_workspaces) running n's op on random tensors
    in each layout inductor may pass where its layout optimization
    applies: each 4-dimensional argument not already channels-last
    either as the graph has it or channels-last, those of pinned always
    channels-last."""
    seen = []
    torch.fx.node.map_arg((n.args, n.kwargs), seen.append)
    four = [a for a in dict.fromkeys(seen) if isinstance(a.meta.get("val"), torch.Tensor)
            and a.meta["val"].dim() == 4
            and not a.meta["val"].is_contiguous(memory_format=torch.channels_last)]
    free = [a for a in four if a not in pinned]
    return [functools.partial(_call, n, device, set(pinned) & set(four) | {
        a for i, a in enumerate(free) if bits >> i & 1}) for bits in range(1 << len(free))]


@real_tensors
def workspaces(nodes, channels_last, pinned=()):
    """node -> bytes its op holds while it runs besides its outputs
    (measure.op_workspaces), for the fx nodes, the ops of one signature
    (_signature) measured once, on random tensors. What an op holds
    depends on the layouts it gets (oneDNN's depthwise convolution
    backward holds several times more with only its input contiguous
    than with every tensor channels-last: docs/torch.md, Compiled mode,
    Memory). Without inductor's layout optimization the graph's
    strides are kept (inductor holds a convolution's backward to them);
    with it (channels_last), inductor chooses a layout per tensor
    (GraphLowering.find_nodes_prefer_channels_last), so each op runs in
    every combination of its 4-dimensional tensors as the graph has them
    or channels-last (pinned: nodes it passes channels-last, its copies
    of convolution weights), and the largest counts. An op that will
    not run on them gets 0."""
    from .measure import op_workspaces
    device = device_of(nodes)
    setups = {}
    for n in nodes:
        sig = _signature(n)
        if sig not in setups and _args(n, device, lambda a, d: None) is not None:
            setups[sig] = _layouts(n, device, set(pinned)) if channels_last \
                else [functools.partial(_call, n, device, set())]
    with torch.no_grad():
        got = iter(op_workspaces([f for fs in setups.values() for f in fs], device))
    by_sig = {sig: max(b or 0 for b in [next(got) for _ in fs]) for sig, fs in setups.items()}
    return {n: by_sig.get(_signature(n), 0) for n in nodes}


def _call(n, device, channels_last):
    """A function running n's op on new random arguments (_laid_out)."""
    args, kwargs = _args(n, device, functools.partial(_laid_out, channels_last=channels_last))
    return functools.partial(n.target, *args, **kwargs)

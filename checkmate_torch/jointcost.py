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
that will not run so gets its FLOPs at the device's measured matmul rate."""
import statistics
import time

import torch

# The reference matmul for the FLOP rate: (M, K) @ (K, N).
_M, _K, _N = 512, 256, 1024


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(fn, device, repeats):
    fn()
    _sync(device)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        _sync(device)
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


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


def _args(n, device):
    """n's arguments with every tensor-valued node replaced by a random
    tensor like it; None when an argument is a node of another kind."""
    bad = []

    def one(a):
        v = a.meta.get("val")
        if isinstance(v, torch.Tensor):
            return _example(v, device)
        if isinstance(v, (int, float, bool)):
            return v
        bad.append(a)
        return None
    args = torch.fx.node.map_arg(n.args, one)
    kwargs = torch.fx.node.map_arg(n.kwargs, one)
    return None if bad else (args, kwargs)


def measure(nodes, flop_costs, is_heavy, repeats=5):
    """node -> milliseconds, for the fx nodes of a joint graph
    (flop_costs: node -> FLOPs, the fallback; is_heavy(node): a
    compute-intensive op, timed whole)."""
    device = device_of(nodes)
    a = torch.randn(_M, _K, device=device)
    b = torch.randn(_K, _N, device=device)
    ms_per_flop = _timed(lambda: a @ b, device, repeats) / (2 * _M * _K * _N)
    copies = {}
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
                key = (v.numel(), v.dtype)
                if key not in copies:
                    x = _example(v, device)
                    copies[key] = _timed(lambda: x.clone(), device, repeats)
                ms = max(0.0, ms - copies[key])
            out[n] = ms
    return out

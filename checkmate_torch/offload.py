"""Copies to host memory and back, for plans with `offload` and `fetch`
steps (docs/formats.md, "Offload to host memory"; docs/torch.md,
"Offload to host memory").

The lowering (lower.py) writes each copy as a call of to_host or
to_device, which returns the copy and an event, and a call of wait
before anything that must not run until a copy has ended: a compute
reading a fetched value, a free of a value being copied. What runs them:

- On CUDA, the copies run on a copy stream of the device's own, into
  pinned host memory and back, beside the compute stream. A copy is issued
  after everything the compute stream issued before it (the stream waits
  for it) and ends with an event; wait makes the compute stream wait for
  that event, which holds the host thread for nothing.
- On the CPU, a copy is made at once (host and device memory are one), so
  there are no events (None) and wait does nothing.
- emulate(True) (the tests) runs CPU copies as a copy stream would: each
  copy's destination starts as garbage (NaN), and the copies run in issue
  order only when a wait reaches them; a copy whose device source was
  freed first leaves its garbage. So a compute that reads a fetch it did
  not wait for, a free before its copy ends or an output returned before
  its fetch ends gives other results than an ordinary step, which the
  tests compare bit for bit.

The device memory a copy reads or writes is the compute stream's: the
lowering frees it only after a wait for the copy, so the allocator's
reuse on that stream comes after the copy (no record_stream, which would
hold the memory until the host next looks, above the plan's peak).
Pinned host memory read or written by a copy in flight is kept by
torch's host allocator until the copy ends.

A copy keeps the strides of the value (clone_strided's rule), so that
the kernels that read a fetched value read the layout the ordinary step
gives them. A value that is a tuple or list is copied element by element;
what is not a tensor (None, a released gradient) is kept as it is."""
import collections
import statistics
import time
import weakref

import torch

from .functional import clone_strided
from .lower import device_of

_STREAMS = {}   # CUDA device index -> its copy stream
_EMULATED = None   # emulate(True): the copies not run yet, in issue order


def emulate(on):
    """CPU copies run as an emulated copy stream (True) or at once."""
    global _EMULATED
    _EMULATED = collections.deque() if on else None


def _garbage(like):
    t = _empty_like(like, "cpu", False)
    return t.fill_(float("nan") if t.is_floating_point() or t.is_complex() else
                   True if t.dtype == torch.bool else 7)


def _emulated(value, from_device):
    """(destination, event) of a copy of value queued on the emulated
    stream; a device source is held weakly (freed, it leaves garbage), a
    host one strongly (torch's host allocator keeps it for its copy)."""
    def queue(t):
        dst = _garbage(t)
        _EMULATED.append((dst, weakref.ref(t) if from_device else (lambda t=t: t)))
        return dst
    out = _each(value, queue)
    event = [False]
    _EMULATED.append((None, event))
    return out, event


def _run_emulated(event):
    while not event[0]:
        dst, src = _EMULATED.popleft()
        if dst is None:
            src[0] = True
            continue
        t = src()
        if t is not None:
            dst.copy_(t)


def _copy_stream(device):
    s = _STREAMS.get(device.index)
    if s is None:
        s = _STREAMS[device.index] = torch.cuda.Stream(device)
    return s


def _empty_like(t, device, pin):
    if t.is_contiguous() or any(st == 0 for st, n in zip(t.stride(), t.shape) if n > 1):
        return torch.empty(t.shape, dtype=t.dtype, device=device, pin_memory=pin)
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=device,
                               pin_memory=pin)


def _each(value, copy):
    if isinstance(value, torch.Tensor):
        return copy(value)
    if isinstance(value, (tuple, list)):
        return tuple(_each(v, copy) for v in value)
    return value


def _on_stream(value, device, copy):
    """(copy of value, event): copy(tensor, copy stream) for each tensor,
    run on device's copy stream after the work issued so far; the event
    holds the copy's end and the stream that is to wait for it."""
    compute = torch.cuda.current_stream(device)
    s = _copy_stream(device)
    s.wait_stream(compute)
    with torch.cuda.stream(s):
        out = _each(value, lambda t: copy(t, s, compute))
        event = torch.cuda.Event()
        event.record(s)
    return out, (event, compute)


def to_host(value):
    """(host copy of value, event or None)."""
    device = device_of(value)
    if device.type != "cuda":
        if _EMULATED is not None:
            return _emulated(value, True)
        return _each(value, clone_strided), None

    def copy(t, s, compute):
        h = _empty_like(t, "cpu", True)
        h.copy_(t, non_blocking=True)
        return h
    return _on_stream(value, device, copy)


def to_device(value, device):
    """(value copied back to device, event or None)."""
    if device.type != "cuda":
        if _EMULATED is not None:
            return _emulated(value, False)
        return _each(value, clone_strided), None

    def copy(h, s, compute):
        # allocated for the compute stream, which reads it after the wait
        with torch.cuda.stream(compute):
            t = _empty_like(h, device, False)
        t.copy_(h, non_blocking=True)
        return t
    return _on_stream(value, device, copy)


_MEASURED = {}   # device -> its bandwidth string


def measured_bandwidth(device):
    """The copy bandwidth to host memory and back on device, measured once
    a process: the slower way of a 64 MiB copy (pinned host memory on
    CUDA; a clone on the CPU), median of 3 after one, rounded down to two
    significant digits, so that run-to-run noise seldom changes the plan
    (and its cache key); a string such as "24000000000B/s"."""
    device = torch.device(device)
    if device not in _MEASURED:
        n = 64 << 20
        src = torch.empty(n, dtype=torch.uint8, device=device)
        cuda = device.type == "cuda"
        host = torch.empty(n, dtype=torch.uint8, pin_memory=cuda)

        def seconds(copy):
            out = []
            for _ in range(4):
                if cuda:
                    torch.cuda.synchronize(device)
                t0 = time.perf_counter()
                copy()
                if cuda:
                    torch.cuda.synchronize(device)
                out.append(time.perf_counter() - t0)
            return statistics.median(out[1:])
        if cuda:
            worst = max(seconds(lambda: host.copy_(src, non_blocking=True)),
                        seconds(lambda: src.copy_(host, non_blocking=True)))
        else:
            worst = seconds(src.clone)
        rate = int(n / worst)
        scale = 10 ** max(len(str(rate)) - 2, 0)
        _MEASURED[device] = "%dB/s" % max(rate // scale * scale, 1)
    return _MEASURED[device]


def wait(event):
    """Work issued from here on waits for the copy of event (None: one
    that has ended)."""
    if isinstance(event, list):
        _run_emulated(event)
    elif event is not None:
        copied, stream = event
        stream.wait_event(copied)

"""Peak tensor memory of one training step, measured by the allocator.

step_peak(step_fn) runs step_fn() once (forward + loss + backward; the
caller prepares the model, the inputs and a zeros_like .grad for every
parameter that receives one, so gradients accumulate in place) and returns
the largest increase of live tensor bytes above the moment step_fn started.

On CPU the numbers come from the memory events of torch's profiler
(torch.autograd.profiler.profile(profile_memory=True), the same switch as
torch.profiler.profile(profile_memory=True); both work on torch 1.13 and
2.x): c10's CPU allocator reports every allocation and free as a `[memory]`
event carrying a signed size (nbytes, negative for a free).  The raw events
(not key_averages, which has no timeline) are put in time order (start_ns on
2.x, start_us on 1.13, ties kept in the profiler's order, which is already
time order) and summed; the peak is the largest running sum.

Counted: every block taken from c10's CPU allocator while step_fn runs, on
a thread the profiler follows (the calling thread and autograd's engine
threads, not a thread step_fn starts itself): tensor storages of the
forward, of the saved activations, of backward's gradients (including the
fresh gradient that AccumulateGrad adds into the existing .grad and then
frees), temporaries inside ATen kernels, and the scratchpads ideep/oneDNN
take through the allocator PyTorch registers with it (a convolution's
backward-weights scratchpad can dominate: several times the weight's size,
growing with torch.get_num_threads()).  A free counts when the block was
allocated while a profiler was recording memory (this run or an earlier
one).

Not counted: memory that does not come from c10's CPU allocator (what
oneDNN, BLAS or OpenMP malloc themselves, autograd's graph nodes, Python
objects, malloc's own overhead); and the free of a
block allocated while no profiler was recording memory (c10 does not know
its size and logs a warning), so a step that frees such tensors reads
higher than the truth, never lower.  The CPU allocator caches nothing, so
there is no reserved-but-free memory to confuse with live bytes.

With a CUDA device the function instead reads torch.cuda's allocator
statistics (reset_peak_memory_stats / max_memory_allocated) around step_fn:
live bytes of the caching allocator on that device, not its reserved cache.

op_workspaces(setups, device) measures the same way what single ops hold
while they run besides their outputs (compile=True counts it for the
backward's library calls).
"""
import gc

import torch

_DeviceType = torch.autograd.DeviceType


def _event_time(e):
    t = getattr(e, "start_ns", None)
    return t() if t is not None else e.start_us() * 1000


def _event_end(e):
    end = getattr(e, "end_ns", None)
    return end() if end is not None else (e.start_us() + e.duration_us()) * 1000


def _top_level_ops(events):
    """(start, end) of the ATen ops no other ATen op on the same thread
    encloses, in order of their ends."""
    ops = sorted((e.start_thread_id(), _event_time(e), _event_end(e))
                 for e in events if e.name().startswith("aten::"))
    spans = []
    thread, until = None, -1
    for th, start, end in ops:
        if th != thread:
            thread, until = th, -1
        if start >= until:
            spans.append((start, end))
            until = end
    return sorted(spans, key=lambda s: s[1])


def _memory_events(raw):
    """(time, index, signed bytes) of the CPU allocator's events among the
    profiler's raw events, in time order."""
    cpu = (_DeviceType.CPU, _DeviceType.MKLDNN, _DeviceType.IDEEP)
    return sorted((_event_time(e), i, e.nbytes()) for i, e in enumerate(raw)
                  if e.name() == "[memory]" and e.device_type() in cpu)


def _cpu_step(step_fn):
    with torch.autograd.profiler.profile(profile_memory=True) as prof:
        step_fn()
    raw = list(prof.kineto_results.events())
    events = _memory_events(raw)
    live = peak = allocated = between = outside = 0
    spans = _top_level_ops(raw)
    ends = iter(spans)
    span = next(ends, None)
    inside = sorted(spans)   # by start: is an event inside a top-level op?
    k = 0
    for t, _, nbytes in events:
        while span is not None and t > span[1]:
            between = max(between, live)
            span = next(ends, None)
        live += nbytes
        peak = max(peak, live)
        allocated += max(nbytes, 0)
        while k + 1 < len(inside) and inside[k + 1][0] <= t:
            k += 1
        if not (inside and inside[k][0] <= t <= inside[k][1]):
            outside = max(outside, live)
    between = max(between, live)
    return dict(peak=peak, between_ops=between, outside_ops=max(between, outside), net=live,
                baseline=None, allocated=allocated, events=len(events), device="cpu")


def _cuda_step(step_fn, device):
    torch.cuda.synchronize(device)
    baseline = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    step_fn()
    torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device) - baseline
    return dict(peak=peak, between_ops=None, outside_ops=None,
                net=torch.cuda.memory_allocated(device) - baseline,
                baseline=baseline, allocated=None, events=None,
                device=str(torch.device(device)))


def _measured(setups, measure):
    """Each setup's op warmed up, then run by measure(run) (None where
    its first run raised), one setup's inputs alive at a time."""
    out = []
    for setup in setups:
        run = setup()
        try:
            run()
        except Exception:   # an op that its inputs do not suit
            out.append(None)
            continue
        out.append(measure(run))
        del run
    return out


def _cpu_workspaces(setups):
    marks = []

    def measure(run):
        marks.append("checkmate workspace %d" % len(marks))
        with torch.autograd.profiler.record_function(marks[-1]):
            result = run()
        del result
        return marks[-1]
    with torch.autograd.profiler.profile(profile_memory=True) as prof:
        got = _measured(setups, measure)
    raw = list(prof.kineto_results.events())
    spans = {e.name(): (_event_time(e), _event_end(e)) for e in raw if e.name() in set(marks)}
    events = _memory_events(raw)
    sizes, live, k = {}, 0, 0
    for mark in marks:
        start, end = spans[mark]
        while k < len(events) and events[k][0] < start:
            live += events[k][2]
            k += 1
        top = live
        while k < len(events) and events[k][0] <= end:
            live += events[k][2]
            top = max(top, live)
            k += 1
        sizes[mark] = max(0, top - live)
    return [None if g is None else sizes[g] for g in got]


def _cuda_workspaces(setups, device):
    def measure(run):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        result = run()
        torch.cuda.synchronize(device)
        size = torch.cuda.max_memory_allocated(device) - torch.cuda.memory_allocated(device)
        del result
        return max(0, size)
    return _measured(setups, measure)


def op_workspaces(setups, device):
    """The workspace of an op: the most bytes it holds while it runs
    above those live when it returns, so its scratch buffers and layout
    copies, not its outputs. setups: functions of no arguments, each
    making one op's inputs and returning a function of no arguments that
    runs the op and returns what it returns. Each op runs once first,
    unmeasured (oneDNN makes its primitives, cuDNN chooses its
    algorithms). On a CPU the bytes are the profiler's allocator events
    inside a record_function around the op; on CUDA the allocator's
    peak, reset before the op, over its count when the op returns.
    device: a torch.device. Returns a list, None for an op whose first
    run raised."""
    if device.type == "cuda":
        return _cuda_workspaces(setups, device)
    return _cpu_workspaces(setups)


def step_peak(step_fn, device=None):
    """Run step_fn() once and measure its tensor memory.

    device: None means "cuda" when torch.cuda.is_available(), else "cpu";
    give "cpu" to measure a CPU model on a machine with a GPU.

    Returns a dict, all sizes in bytes:
      peak      largest (allocated - freed) reached during step_fn, counted
                from step_fn's start (an increase; 0 if nothing was allocated)
      between_ops  the largest (allocated - freed) at the end of an ATen op
                that no other ATen op encloses (CPU only, else None): the
                peak without what an op allocates and frees while it runs
                (workspaces, scratchpads), the moments checkmate's memory
                model looks at
      outside_ops  between_ops, or more where blocks are taken outside
                every ATen op (CPU only, else None): inductor's compiled
                kernels allocate their buffers without one, so in a
                compiled step this is the peak without what extern
                kernels (convolutions, matmuls) allocate and free inside
      net       (allocated - freed) when step_fn returned: what it left live
      baseline  bytes live when step_fn started: the CUDA allocator's count
                on CUDA; None on CPU, where the profiler cannot see blocks
                allocated before it started
      allocated sum of all allocation sizes (CPU only, else None)
      events    number of allocator events summed (CPU only, else None)
      device    "cpu" or the CUDA device measured

    What is counted and what is not is in this module's docstring.  A
    garbage collection runs first, so that cyclic garbage of the caller is
    not freed in the middle of the measured step.
    """
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    gc.collect()
    if torch.device(device).type == "cuda":
        return _cuda_step(step_fn, device)
    return _cpu_step(step_fn)

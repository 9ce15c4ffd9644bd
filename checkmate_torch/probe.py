"""One measured run of a compiled step, before the training step runs it:
compile=True's check that the step holds the budget (compiled.backend).

probe(fn, inputs, written, device) runs fn(*inputs), the compiled
forward, and the backward of its outputs that need a gradient, once, on
the first call's own inputs, and measures its peak (measure.step_peak).
Nothing the user sees changes: the generators are put back
(torch.random.fork_rng); an input that needs a gradient is passed as a
new leaf of the same memory (detach), so that the gradients are
returned (torch.autograd.grad), not added to .grad, no hook of the
user's sees them and no graph before the step is run; and the inputs
the step writes (`written`, from the joint graph; where it does not
match the inputs, every input) are copied back where the run changed
them. The outputs' gradients are ones, made for the probe; their bytes
are reported apart, since the partition's model takes the backward's
inputs as fixed memory."""
import torch

from . import private
from .measure import step_peak


def _tensors(value):
    return [t for t in private.tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def _snapshots(inputs, written):
    """[(input, its copy)] of the inputs the step may write: those of
    `written` ([position, shape, dtype name]) where each names an input
    of that shape and dtype, else every input."""
    def names(i, shape, dtype):
        t = inputs[i] if 0 <= i < len(inputs) else None
        return isinstance(t, torch.Tensor) and list(t.shape) == list(shape) \
            and str(t.dtype) == dtype
    if written is None or not all(names(*w) for w in written):
        which = range(len(inputs))
    else:
        which = sorted({w[0] for w in written})
    return [(inputs[i], inputs[i].detach().clone()) for i in which
            if isinstance(inputs[i], torch.Tensor)]


def probe(fn, inputs, written, device):
    """step_peak's figures of one forward and backward of fn(*inputs) on
    `device`, with "tangents" (the bytes of the outputs' gradients it
    made); None where no input or no output needs a gradient (no
    backward to measure)."""
    inputs = list(inputs)
    if not any(isinstance(t, torch.Tensor) and t.requires_grad for t in inputs):
        return None
    kept = _snapshots(inputs, written)
    inputs = [t.detach().requires_grad_() if isinstance(t, torch.Tensor) and t.requires_grad
              else t for t in inputs]
    needs = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    cuda = sorted({t.device.index or 0 for t in _tensors(inputs) if t.device.type == "cuda"})
    figures = {}
    try:
        with torch.random.fork_rng(devices=cuda), torch.enable_grad():
            def step():
                outs = [t for t in _tensors(fn(*inputs)) if t.requires_grad]
                if not outs:
                    return
                grads = [torch.ones_like(t) for t in outs]
                figures["tangents"] = sum(g.numel() * g.element_size() for g in grads)
                torch.autograd.grad(outs, needs, grads, allow_unused=True)
            measured = step_peak(step, str(device))
    finally:
        with torch.no_grad():
            for t, copy in kept:
                if not torch.equal(t, copy):
                    t.copy_(copy)
    if "tangents" not in figures:
        return None
    return dict(measured, **figures)

"""The kernels' strides in the trace.

make_fx traces on fake tensors, whose strides are not always the ones the
real kernels give (native_batch_norm or a convolution on a transposed
input, hardtanh_backward, elu_backward). The trace then takes decisions
on the wrong strides: a view instead of a copy, a `.contiguous()` left
out, strides baked into new_empty_strided, and the plan runs some kernels
on another memory layout than the ordinary step (other bits, or wrong
values).

So a plan is first run once on the example (measure: the plan's own
steps, so within its budget; the generator and the buffers are left as
they were), comparing each result's strides with the trace's. Where an
op's result differs although its inputs matched (the first op in a chain
of differences), the k-th call of that op is recorded with the kernel's
strides, and the step is traced again with those calls corrected (a
dispatch mode, corrections()): the op, then an as_strided view giving its
traced result the kernel's strides, which is the identity on the real
result.
Later decisions of the trace then see the real strides.
"""
import functools

import torch

from . import private
from .execute import PlanError, whole_step
from .functional import TAKEN_AGAIN, op_of
from .graph import Synthetic, _tensor_inputs
from .sizes import NotSymbolic, value_at


def _layout(value):
    """The strides of value's tensors (None for what is not one), in the
    dimensions longer than 1 (the others are free)."""
    if isinstance(value, torch.Tensor):
        # a symbolic trace's strides as they are in the call traced
        return tuple(value_at(st, None) if value_at(n, None) > 1 else None
                     for st, n in zip(value.stride(), value.shape))
    if isinstance(value, (tuple, list)):
        return tuple(_layout(v) for v in value)
    return None


def _shape(value):
    if isinstance(value, torch.Tensor):
        return tuple(value_at(n, None) for n in value.shape)
    if isinstance(value, (tuple, list)):
        return tuple(_shape(v) for v in value)
    return None


def same_layouts(a, b):
    """Whether two analyses of one structure (train.structure) have, node
    for node, the same shapes and strides at the sizes each was traced
    at: where measure found b's as the kernels give them, so would it
    a's."""
    fake = [(a.fake.get(r), b.fake.get(q)) for r, q in zip(a.real, b.real)]
    return len(a.real) == len(b.real) and all(
        _shape(x) == _shape(y) and _layout(x) == _layout(y) for x, y in fake)


def _strides(value):
    if isinstance(value, torch.Tensor):
        return tuple(value.stride())
    if isinstance(value, (tuple, list)):
        return tuple(_strides(v) for v in value)
    return None


def calls(analysis):
    """fx call node -> (its ATen op, k): it is the k-th call of that op in
    traced order (the views functional.py took again are not the traced
    step's calls)."""
    seen, out = {}, {}
    for n in analysis.nodes:
        if n.op == "call_function" and not n.meta.get(TAKEN_AGAIN):
            op = op_of(n)
            if private.is_op(op):
                k = seen.get(op, 0)
                seen[op] = k + 1
                out[n] = (op, k)
    return out


def measure(analysis, tensors, steps):
    """{(op, k): the kernel's strides} for the calls whose result's strides
    differ from the trace's while their inputs' do not, found by running
    steps on tensors (the placeholders' values, tangents left out)."""
    a = analysis
    differ, memo, found, seen = set(), {}, {}, set()
    which = calls(a)

    def tainted(n):
        # a view or an element is off where its source is, and so is what
        # no ATen op computes (write_through: nothing to correct in it)
        if n not in memo:
            memo[n] = n in differ or (
                (a.kind.get(n) in ("alias", "real-element") or n not in which) and
                any(tainted(i) for i in _tensor_inputs(n)))
        return memo[n]

    def check(it, ins, k, body, env):
        r = ins.node
        if ins.what != "compute" or r in seen:
            return
        seen.add(r)
        if isinstance(r, Synthetic) or r not in which:
            return
        value = env[it.lw.names[r]]
        if _layout(value) != _layout(a.fake[r]):
            if not any(tainted(i) for i in _tensor_inputs(r)):
                found[which[r]] = _strides(value)
            differ.add(r)
    try:
        whole_step(a, tensors, check, steps)
    except PlanError:
        raise
    except Exception as e:
        # an op the trace took on the wrong strides (a view the kernel's
        # layout does not allow) after a difference found: the step is
        # traced again with it corrected
        r = getattr(e, "checkmate_node", None)
        if found and r is not None and any(tainted(i) for i in _tensor_inputs(r)):
            return found
        raise
    return found


def _restride(value, want):
    if isinstance(value, torch.Tensor):
        if want is None or tuple(value_at(st, None) for st in value.stride()) == tuple(want):
            return value
        if any(private.is_sym(n) for n in value.shape):
            want = _dense_strides(value.shape, want)
        return torch.as_strided(value, value.shape, want, value.storage_offset())
    if isinstance(value, (tuple, list)) and isinstance(want, (tuple, list)):
        return type(value)(_restride(v, w) for v, w in zip(value, want))
    return value


def _dense_strides(shape, want):
    """Strides for a symbolic shape that lay its dimensions out in the
    order the kernel's strides want (measured at the traced call's
    sizes) put them, densely: want at those sizes, dimensions of size 1
    aside. NotSymbolic where the kernel's layout is not dense."""
    hint = [value_at(n, None) for n in shape]
    order = sorted(range(len(shape)), key=lambda d: (want[d], hint[d]))
    out, acc = [None] * len(shape), 1
    for d in order:
        out[d] = acc
        acc = acc * shape[d]
    if any(value_at(st, None) != w for st, w, n in zip(out, want, hint) if n != 1):
        raise NotSymbolic("a kernel's strides %s lay a tensor of sizes %s out other than "
                          "densely" % (tuple(want), tuple(hint)))
    return out


def corrections(fix):
    """A dispatch mode entered inside the traced step: it gives the k-th
    call of op the strides fix[(op, k)], an as_strided view of its result
    (which the tracer below records). A dispatch mode, so that it sees
    the ops as the tracer does."""
    return _corrections_mode()(fix)


@functools.lru_cache(maxsize=None)
def _corrections_mode():
    class Corrections(private.dispatch_mode()):
        def __init__(self, fix):
            super().__init__()
            self.fix = fix
            self.ops = {op for op, _ in fix}
            self.counts = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func in self.ops:
                k = self.counts.get(func, 0)
                self.counts[func] = k + 1
                want = self.fix.get((func, k))
                if want is not None:
                    out = _restride(out, want)
            return out
    return Corrections

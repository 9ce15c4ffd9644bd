"""Node costs: FLOPs from a table of common ATen ops (a multiply-add is 2
FLOPs), one FLOP per output element for every other op (measured times:
execute.measure_costs)."""
import math

import torch

from . import private
from .functional import functional_op

aten = torch.ops.aten


def _numel(v):
    return sum(t.numel() for t in private.tree_flatten(v)[0] if isinstance(t, torch.Tensor))


def _shape(v):
    return list(v.shape)


def _convolution(n, val, out):
    inp, weight = val(n.args[0]), val(n.args[1])
    transposed = bool(n.args[6])
    per = math.prod(_shape(weight)[1:])
    elems = inp.numel() if transposed else out.numel()
    f = 2 * elems * per
    if n.args[2] is not None:
        f += out.numel()
    return f


def _convolution_backward(n, val, out):
    # (grad_output, input, weight, bias_sizes, stride, padding, dilation,
    #  transposed, output_padding, groups, output_mask)
    go, inp, weight = val(n.args[0]), val(n.args[1]), val(n.args[2])
    mask = n.args[10]
    transposed = bool(n.args[7])
    per = math.prod(_shape(weight)[1:])
    fwd = 2 * per * (inp.numel() if transposed else go.numel())
    return fwd * mask[0] + fwd * mask[1] + go.numel() * mask[2]


def _mm(n, val, out):
    a, b = val(n.args[0]), val(n.args[1])
    return 2 * a.shape[0] * a.shape[1] * b.shape[1]


def _addmm(n, val, out):
    a, b = val(n.args[1]), val(n.args[2])
    return 2 * a.shape[0] * a.shape[1] * b.shape[1] + out.numel()


def _bmm(n, val, out):
    a, b = val(n.args[0]), val(n.args[1])
    return 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]


def _baddbmm(n, val, out):
    a, b = val(n.args[1]), val(n.args[2])
    return 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2] + out.numel()


def _per_input(k):
    return lambda n, val, out: k * val(n.args[0]).numel()


def _per_arg(i, k):
    return lambda n, val, out: k * val(n.args[i]).numel()


def _pool(n, val, out):
    # max/avg pooling: kernel-area operations per output element
    first = out[0] if isinstance(out, (tuple, list)) else out
    return first.numel() * math.prod(n.args[1])


def _pool_backward(n, val, out):
    # grad_output scattered over each window
    return val(n.args[0]).numel() * math.prod(n.args[2])


# op packet -> f(node, value_of, output value) -> FLOPs
FLOPS = {
    aten.convolution: _convolution,
    aten.convolution_backward: _convolution_backward,
    aten.mm: _mm,
    aten.addmm: _addmm,
    aten.bmm: _bmm,
    aten.baddbmm: _baddbmm,
    # batch and layer norm: mean, variance, normalise, scale and shift
    aten.native_batch_norm: _per_input(5),
    aten.native_batch_norm_backward: _per_arg(1, 8),
    aten.native_layer_norm: _per_input(5),
    aten.native_layer_norm_backward: _per_arg(1, 8),
    # softmax: max, subtract, exp, sum, divide
    aten._softmax: _per_input(5),
    aten._log_softmax: _per_input(5),
    aten._softmax_backward_data: _per_arg(0, 3),
    aten._log_softmax_backward_data: _per_arg(0, 3),
    aten.max_pool2d_with_indices: _pool,
    aten.max_pool2d_with_indices_backward: lambda n, val, out: val(n.args[0]).numel(),
    aten.avg_pool2d: _pool,
    aten.avg_pool2d_backward: _pool_backward,
    # reductions read every input element once
    aten._adaptive_avg_pool2d: _per_input(1),
    aten._adaptive_avg_pool2d_backward: _per_arg(1, 1),
    aten.mean: _per_input(1),
    aten.sum: _per_input(1),
    aten.gelu: _per_input(8),
    aten.gelu_backward: _per_arg(1, 12),
}

# Backward op packet -> (index of the saved forward argument, what it is):
# "input" when the op's result is the gradient w.r.t. that argument,
# "result" when the argument is the forward op's output and the gradient is
# w.r.t. that forward op's input.
GRAD_OF = {
    aten.convolution_backward: (1, "input"),
    aten.native_batch_norm_backward: (1, "input"),
    aten.native_layer_norm_backward: (1, "input"),
    aten.max_pool2d_with_indices_backward: (1, "input"),
    aten.avg_pool2d_backward: (1, "input"),
    aten._adaptive_avg_pool2d_backward: (1, "input"),
    aten.gelu_backward: (1, "input"),
    aten.hardtanh_backward: (1, "input"),
    aten.silu_backward: (1, "input"),
    aten.threshold_backward: (1, "result"),
    aten._softmax_backward_data: (1, "result"),
    aten._log_softmax_backward_data: (1, "result"),
    aten.tanh_backward: (1, "result"),
    aten.sigmoid_backward: (1, "result"),
}


class _Wrapped:
    """functional_op's node as the op it wraps: its target and arguments."""

    def __init__(self, node):
        self.target, self.args, self.kwargs = node.args[0], node.args[2:], node.kwargs


def flops(node, fake):
    out = fake[node]
    f = None
    if node.target is functional_op:
        node = _Wrapped(node)
        out = out[0]
    t = node.target
    if private.is_op(t) and t.overloadpacket in FLOPS:
        f = FLOPS[t.overloadpacket](node, fake.__getitem__, out)
    if f is None:
        f = _numel(out)
    # a symbolic trace's cost stays symbolic (graph.Analysis takes its hint)
    return f if private.is_sym(f) else int(f)

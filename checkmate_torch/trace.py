"""Tracing one training step (forward, loss, torch.autograd.grad w.r.t. the
parameters) to an ATen-level torch.fx graph with make_fx over fake tensors:
nothing is computed, and a branch on a tensor's value fails instead of being
silently frozen to the traced example."""
import os
import traceback

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils import stateless
from torch.utils import _pytree as pytree


class TraceError(Exception):
    pass


class Traced:
    """The traced step. gm.graph's placeholders are the parameters (in
    named_parameters order), then the buffers, then the input; its output is
    (loss, [gradient of each parameter in grad_params])."""

    def __init__(self, gm, param_names, buffer_names, grad_params):
        self.gm = gm
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.grad_params = grad_params  # indices of params with a gradient


def loss_of(out):
    """The loss: the sum of every element of every floating-point tensor
    the model returns."""
    leaves = [t for t in pytree.tree_flatten(out)[0]
              if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not leaves:
        raise TraceError("the model returned no floating-point tensor")
    loss = leaves[0].sum()
    for t in leaves[1:]:
        loss = loss + t.sum()
    return loss


def step_function(model, param_names, buffer_names, used=None):
    """f(params, buffers, x) -> (loss, grads): the loss is the sum of every
    floating-point output element. grads leaves out the parameters the loss
    does not reach; their indices are appended to used."""
    def step(params, buffers, x):
        ps = [p.requires_grad_(True) for p in params]
        state = dict(zip(param_names, ps))
        state.update(zip(buffer_names, buffers))
        loss = loss_of(stateless.functional_call(model, state, (x,)))
        grads = torch.autograd.grad(loss, ps, allow_unused=True)
        if used is not None:
            used[:] = [i for i, g in enumerate(grads) if g is not None]
        return loss, [g for g in grads if g is not None]
    return step


_HERE = os.path.dirname(os.path.abspath(__file__))


def _user_frame(tb):
    """file:line of the innermost frame outside torch and this package,
    where the user's code made the failing call."""
    where = None
    for fr in traceback.extract_tb(tb):
        if "/torch/" not in fr.filename and os.path.dirname(os.path.abspath(fr.filename)) != _HERE:
            where = "%s:%d" % (os.path.basename(fr.filename), fr.lineno)
    return where


def _failing_op(exc):
    """The ATen op being dispatched when exc was raised: the exception's own
    argument (fake tensor errors), else the innermost traceback frame with
    an OpOverload in a local named func (the tracer's dispatch functions)."""
    if exc.args and isinstance(exc.args[0], torch._ops.OpOverload):
        return exc.args[0]
    op = None
    tb = exc.__traceback__
    while tb is not None:
        f = tb.tb_frame.f_locals.get("func")
        if isinstance(f, torch._ops.OpOverload):
            op = f
        tb = tb.tb_next
    return op


def _explain(exc):
    from torch._subclasses import fake_tensor as ft
    op = _failing_op(exc)
    op = str(op) if op is not None else None
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, ft.DataDependentOutputException) or (
            op is not None and "get value out of a tracing tensor" in first):
        why = "its result depends on tensor values (Python control flow or .item() on a tensor?)"
    elif isinstance(exc, ft.DynamicOutputShapeException):
        why = "its output shape depends on tensor values"
    else:
        why = "%s: %s" % (type(exc).__name__, first)
    where = _user_frame(exc.__traceback__)
    msg = "tracing failed"
    if op:
        msg += " at op %s" % op
    if where:
        msg += " (called from %s)" % where
    return msg + ": " + why


def trace(model, x):
    param_names = [n for n, _ in model.named_parameters()]
    buffer_names = [n for n, _ in model.named_buffers()]
    params = [p.detach() for p in model.parameters()]
    buffers = [b.detach() for b in model.buffers()]
    used = []
    step = step_function(model, param_names, buffer_names, used)
    try:
        gm = make_fx(step, tracing_mode="fake")(params, buffers, x)
    except TraceError:
        raise
    except Exception as exc:  # anything the tracer or the model raised
        raise TraceError(_explain(exc)) from exc
    return Traced(gm, param_names, buffer_names, list(used))

"""Inputs that share memory: with one another (a causal LM's call passing
its input_ids as its labels, or overlapping views of one token buffer) or
with the model's parameters and buffers.

A plan is made for independent inputs: the trace gives each input
position a placeholder of its own (independent), even where the example
passes one tensor twice or views of one tensor, so that one plan serves
every call whatever its inputs share. That is an ordinary step's result as long as the step writes none
of the shared tensors. Per call:
  - clash() finds a call remat refuses: a tensor the step writes in
    place (an input, a BatchNorm's running statistics) sharing memory
    with another input, where the ordinary step's later reads of the
    other see the write, while a plan reads what it writes from
    snapshots and writes back at the forward's end (execute.py);
  - shared_params() names the parameters that share memory with an input
    that requires a gradient: their gradient arrives twice, from the step
    and through the input's view, and autograd adds the two before adding
    them into .grad, so the step must not add its own into .grad first.
Memory is compared by storage: views of one storage share it even where
their elements do not overlap (refused all the same).
"""
import torch


def independent(tensors):
    """tensors for the trace, each a new leaf on the same memory (with
    the same requires_grad): make_fx gives one placeholder per tensor
    object, so two positions given one tensor would read one input for
    both on every later call; and a view of another input keeps its
    autograd history in its fake tensor, so the trace's gradient of that
    other input would add the view's share, which autograd adds again
    through the real view."""
    return [t.detach().requires_grad_(t.requires_grad) for t in tensors]


def input_names(args, kwargs, count):
    """A name for each of the count input tensors of the call (args[0],
    labels, batch['ids'][1]), in the order Inputs flattens them; 'input k'
    where the call holds containers other than tuples, lists and dicts."""
    names = []

    def walk(value, path):
        if isinstance(value, torch.Tensor):
            names.append(path)
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                walk(v, "%s[%d]" % (path, i))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, "%s[%r]" % (path, k))
    for i, a in enumerate(args):
        walk(a, "args[%d]" % i)
    for k, v in kwargs.items():
        walk(v, str(k))
    if len(names) != count:
        return ["input %d" % k for k in range(count)]
    return names


def _storage(t):
    """The address of t's storage, or None (an empty or sparse tensor, a
    tensor subclass without one)."""
    if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
        return None
    try:
        return t.untyped_storage().data_ptr() or None
    except (RuntimeError, NotImplementedError):
        return None


def clash(written, tensors, n_state):
    """(k, j): a tensor the step writes (tensors[k], k in written) and
    another that shares its memory, an input or, where k is an input,
    a parameter or buffer; else None. tensors are the step's parameters
    and buffers (the first n_state), then its inputs."""
    if not written:
        return None
    at = {}
    for k in range(n_state, len(tensors)):
        p = _storage(tensors[k])
        if p is not None:
            at.setdefault(p, []).append(k)
    if any(k >= n_state for k in written):
        for k in range(n_state):   # an input the step writes, against the model's own
            p = _storage(tensors[k])
            if p is not None and p in at:
                at[p].append(k)
    for k in written:
        other = [j for j in at.get(_storage(tensors[k]), ()) if j != k]
        if other:
            return k, other[0]
    return None


def shared_params(tensors, n_params, n_state):
    """The indices of the parameters (the first n_params of tensors) that
    share memory with an input (from n_state on) that requires a
    gradient."""
    grads = {_storage(t) for t in tensors[n_state:] if t.requires_grad}
    grads.discard(None)
    if not grads:
        return frozenset()
    return frozenset(k for k in range(n_params) if _storage(tensors[k]) in grads)

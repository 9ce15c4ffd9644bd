"""Sizes a user declares dynamic, with their maxima (remat's dynamic=):
the example call grown to those maxima, so that the one plan made for it
serves every smaller call (train.Compiled reuses a plan whose steps fit
its budget at the new sizes; docs/torch.md, "Other sizes, one solve").
compile=True marks the declared dimensions dynamic instead
(train.RematCompiled), and its measured run grows a call's inputs to
the sizes its partition was made at with grown_tensor
(compiled._at_point).

dynamic maps an input, a position in the example's args (an int) or a
keyword (a str), to {dimension: maximum}, as torch._dynamo.mark_dynamic
takes a dimension and a max. A tensor grows along a dimension by
repeating its own values (an index stays a valid index), cut at the
maximum; one tensor passed twice (input_ids as labels) grows once and
stays one tensor."""
import torch


class DynamicError(ValueError):
    pass


def grown(args, kwargs, dynamic):
    """(args, kwargs) of the example with each declared dimension at its
    maximum; DynamicError (one line, naming the input) for a declaration
    that does not fit the example."""
    sizes = {}      # id of a declared tensor -> (tensor, {dim: max})
    for key, dims in declared(args, kwargs, dynamic).items():
        t = kwargs[key] if isinstance(key, str) else args[key]
        sizes.setdefault(id(t), (t, {}))[1].update(dims)
    done = {k: grown_tensor(t, want) for k, (t, want) in sizes.items()}

    def swap(v):
        return done.get(id(v), v) if isinstance(v, torch.Tensor) else v
    return tuple(swap(v) for v in args), {k: swap(v) for k, v in kwargs.items()}


def declared(args, kwargs, dynamic):
    """The declaration checked against the example call: {input: {dim:
    max}}, each dimension counted from 0; DynamicError (one line, naming
    the input) where it does not fit."""
    args, kwargs = list(args), dict(kwargs)
    if not isinstance(dynamic, dict):
        raise DynamicError("dynamic must be a dict {input: {dim: max}}; got %r" % (dynamic,))
    sizes = {}      # id of a declared tensor -> {dim: max}, over every key naming it
    out = {}
    for key, dims in dynamic.items():
        if isinstance(key, int) and not isinstance(key, bool):
            if not -len(args) <= key < len(args):
                raise DynamicError("dynamic: the example has %d positional inputs, no %d"
                                   % (len(args), key))
            t, name = args[key], "input %d" % key
        elif isinstance(key, str):
            if key not in kwargs:
                raise DynamicError("dynamic: the example has no keyword input %r" % key)
            t, name = kwargs[key], "input %r" % key
        else:
            raise DynamicError("dynamic: an input is a position (int) or a keyword (str); "
                               "got %r" % (key,))
        if not isinstance(t, torch.Tensor):
            raise DynamicError("dynamic: %s is a %s, not a tensor" % (name, type(t).__name__))
        if not isinstance(dims, dict) or not dims:
            raise DynamicError("dynamic: %s needs {dim: max}; got %r" % (name, dims))
        want, mine = sizes.setdefault(id(t), {}), out.setdefault(key, {})
        for dim, most in dims.items():
            if not isinstance(dim, int) or not -t.dim() <= dim < t.dim():
                raise DynamicError("dynamic: %s has %d dimensions, no dimension %r"
                                   % (name, t.dim(), dim))
            dim %= t.dim()
            if not isinstance(most, int) or isinstance(most, bool) or most < t.shape[dim] \
                    or t.shape[dim] == 0:
                raise DynamicError("dynamic: %s's dimension %d is %d long; its maximum must be "
                                   "a whole number at least that (and the dimension not "
                                   "empty); got %r" % (name, dim, t.shape[dim], most))
            if want.get(dim, most) != most:
                raise DynamicError("dynamic: %s is declared twice with other maxima for "
                                   "dimension %d" % (name, dim))
            want[dim] = mine[dim] = most
    return out


def grown_tensor(t, want):
    """t repeated along each dimension of want ({dim: size}) and cut at
    that size."""
    with torch.no_grad():
        out = t
        for dim, most in sorted(want.items()):
            reps = [1] * t.dim()
            reps[dim] = -(-most // out.shape[dim])
            out = out.repeat(*reps).narrow(dim, 0, most)
        out = out.contiguous()
    return out.requires_grad_(t.requires_grad) if t.requires_grad else out

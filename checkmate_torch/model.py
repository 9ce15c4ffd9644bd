"""Loading a model from a spec (torchvision:NAME or FILE.py:FUNCTION) with
fixed seeds, so that export and run see the same weights and input."""
import importlib.util
import os

import torch

WEIGHT_SEED = 0
INPUT_SEED = 1


class ModelError(Exception):
    pass


DTYPES = {"float": torch.float32, "double": torch.float64, "half": torch.float16,
          "bfloat16": torch.bfloat16, "long": torch.int64, "int": torch.int32,
          "bool": torch.bool}


def parse_shape(text):
    try:
        dims = [int(d) for d in text.lower().split("x")]
    except ValueError:
        raise ModelError("bad --input '%s': expected dimensions such as 3x224x224" % text)
    if not dims or any(d <= 0 for d in dims):
        raise ModelError("bad --input '%s': dimensions must be positive" % text)
    return dims


class InputSpec:
    """One --input: [NAME=][DTYPE:]DIMS[:HIGH], the batch dimension put in
    front of DIMS. float inputs are randn, integers are drawn in [0, HIGH)
    (HIGH default 2), bool ones are random too. A NAME makes it a keyword
    argument; the others are positional, in order."""

    def __init__(self, text):
        self.text = text
        rest = text
        self.name = None
        if "=" in rest:
            self.name, rest = rest.split("=", 1)
            if not self.name.isidentifier():
                raise ModelError("bad --input '%s': '%s' is not an argument name"
                                 % (text, self.name))
        parts = rest.split(":")
        self.dtype = torch.float32
        if parts and parts[0].lower() in DTYPES:
            self.dtype = DTYPES[parts.pop(0).lower()]
        elif parts and not parts[0][:1].isdigit():
            raise ModelError("bad --input '%s': unknown type '%s' (one of %s)"
                             % (text, parts[0], ", ".join(DTYPES)))
        if not parts or len(parts) > 2:
            raise ModelError("bad --input '%s': expected [NAME=][TYPE:]DIMS[:HIGH]" % text)
        self.dims = parse_shape(parts[0])
        self.high = 2
        if len(parts) == 2:
            if self.dtype.is_floating_point or self.dtype == torch.bool:
                raise ModelError("bad --input '%s': :HIGH is for integer inputs" % text)
            try:
                self.high = int(parts[1])
            except ValueError:
                self.high = 0
            if self.high <= 0:
                raise ModelError("bad --input '%s': HIGH must be a positive integer" % text)

    def make(self, batch, gen):
        shape = [batch] + self.dims
        if self.dtype.is_floating_point:
            return torch.randn(shape, generator=gen).to(self.dtype)
        if self.dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).bool()
        return torch.randint(0, self.high, shape, generator=gen).to(self.dtype)


def make_inputs(specs, batch):
    """(args, kwargs) for the model, drawn from a generator seeded
    INPUT_SEED."""
    gen = torch.Generator().manual_seed(INPUT_SEED)
    args, kwargs = [], {}
    for s in specs:
        v = s.make(batch, gen)
        if s.name:
            kwargs[s.name] = v
        else:
            args.append(v)
    return tuple(args), kwargs


def _build(spec):
    if spec.startswith("torchvision:"):
        import torchvision
        name = spec.split(":", 1)[1]
        fn = getattr(torchvision.models, name, None)
        if fn is None or not callable(fn):
            raise ModelError("'%s': torchvision has no model '%s'" % (spec, name))
        # Untrained: never download weights. aux_logits off where it exists
        # (googlenet, inception_v3), as their aux heads need weights=None too.
        try:
            return fn(weights=None, aux_logits=False, init_weights=True)
        except TypeError:
            return fn(weights=None)
    path, sep, func = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        raise ModelError("'%s': a model is torchvision:NAME or FILE.py:FUNCTION" % spec)
    if not os.path.isfile(path):
        raise ModelError("'%s': no such file '%s'" % (spec, path))
    modname = "checkmate_user_" + os.path.splitext(os.path.basename(path))[0]
    loader = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    fn = getattr(mod, func, None)
    if fn is None or not callable(fn):
        raise ModelError("'%s': '%s' defines no function '%s'" % (spec, path, func))
    m = fn()
    if not isinstance(m, torch.nn.Module):
        raise ModelError("'%s': %s() returned %s, not an nn.Module"
                         % (spec, func, type(m).__name__))
    return m


def load(spec, batch, input_specs):
    """The model in training mode with seeded weights, and its seeded
    inputs (args, kwargs)."""
    torch.manual_seed(WEIGHT_SEED)
    model = _build(spec)
    model.train()
    args, kwargs = make_inputs(input_specs, batch)
    return model, args, kwargs

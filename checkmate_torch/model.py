"""Loading a model from a spec (torchvision:NAME or FILE.py:FUNCTION) with
fixed seeds, so that export and run see the same weights and input."""
import importlib.util
import os

import torch

WEIGHT_SEED = 0
INPUT_SEED = 1


class ModelError(Exception):
    pass


def parse_shape(text):
    try:
        dims = [int(d) for d in text.lower().split("x")]
    except ValueError:
        raise ModelError("bad --input '%s': expected dimensions such as 3x224x224" % text)
    if not dims or any(d <= 0 for d in dims):
        raise ModelError("bad --input '%s': dimensions must be positive" % text)
    return dims


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


def load(spec, batch, input_shape):
    """The model in training mode with seeded weights, in-place activations
    turned off (an in-place op would share its input's storage, which the
    one-value-per-node memory model cannot say), and the seeded input."""
    torch.manual_seed(WEIGHT_SEED)
    model = _build(spec)
    model.train()
    for mod in model.modules():
        if getattr(mod, "inplace", False) is True:
            mod.inplace = False
    gen = torch.Generator().manual_seed(INPUT_SEED)
    x = torch.randn([batch] + list(input_shape), generator=gen)
    return model, x

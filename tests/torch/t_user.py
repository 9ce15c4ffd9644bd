#!/usr/bin/python3
"""What a new user meets besides training (issue 66), in both modes:
the remat module's state_dict keys are the model's own (a checkpoint
loads either way, and inside a parent module); a mistake in the call is
reported with its cause and line, and a float64 input to a float32 model
(which fake tensors let through) as its dtypes, not as a budget with no
plan; a budget no partition meets names the least that
fits (compile=True); a graph break names its line and torch's hint;
a model that logs inside its forward compiles in one graph, as
torch.compile compiles it with a break there.

Usage: PYTHON tests/torch/t_user.py [CHECKMATE_BINARY]. Prints TAP and
ends with "N passed, M failed"."""
import copy
import logging
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
remat_or_finish()
from torch import nn  # noqa: E402
from checkmate_torch import remat  # noqa: E402
from checkmate_torch.train import RematError  # noqa: E402

logging.getLogger("torch").setLevel(logging.CRITICAL)   # fake tensors' own error logs
MODES = (False, True)


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(),
                         nn.Linear(64, 3))


def fraction(f):
    return lambda fixed, peak: fixed + int((peak - fixed) * f)


def failure(f):
    """(exception, or None) of f()."""
    torch._dynamo.reset()
    try:
        f()
    except Exception as e:
        return e
    return None


def step(r, x):
    r(x).sum().backward()


def state_dicts():
    for comp in MODES:
        mode = "compile=True" if comp else "eager"
        m = mlp()
        x = torch.randn(32, 16)
        r = remat(m, (x,), budget="100%", compile=comp)
        ok(list(r.state_dict()) == list(m.state_dict()),
           "%s: state_dict keys are the model's own (%s...)" % (mode, list(r.state_dict())[0]))
        plain = mlp()
        for p in plain.parameters():
            p.data.add_(1)
        r.load_state_dict(plain.state_dict())
        back = mlp()
        back.load_state_dict(r.state_dict())
        ok(all(torch.equal(a, b) for a, b in zip(back.parameters(), plain.parameters())),
           "%s: a plain model's checkpoint loads into the remat module, and back" % mode)
        parent = nn.Module()
        parent.body = r
        keys = list(parent.state_dict())
        parent.load_state_dict({k: v * 2 for k, v in parent.state_dict().items()})
        ok(keys[0] == "body.0.weight" and torch.equal(m[0].weight, plain[0].weight * 2),
           "%s: inside a parent module, keys body.0.weight..., loaded through it" % mode)


def causes():
    emb = lambda: nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 4))   # noqa: E731
    for comp in MODES:
        mode = "compile=True" if comp else "eager"
        x = torch.randn(32, 15)
        e = failure(lambda: step(remat(mlp(), (x,), budget="100%", compile=comp), x))
        msg = str(e)
        ok(e is not None and "a and b must have same reduction dim" in msg and "\n" not in msg,
           "%s: an input of the wrong width names the op's error: %s" % (mode, msg), msg)
        ids = torch.rand(4, 8) * 10
        e = failure(lambda: step(remat(emb(), (ids,), budget="100%", compile=comp), ids))
        msg = str(e)
        ok(e is not None and "indices" in msg and "Long" in msg and "\n" not in msg,
           "%s: float ids into an embedding: %s" % (mode, msg), msg)
        x = torch.randn(512, 16, dtype=torch.float64)
        for frac in (0.1, 1.0):
            e = failure(lambda: step(remat(mlp(), (x,), budget=fraction(frac), compile=comp),
                                     x))
            msg = str(e)
            ok("dtypes differ (float32, float64, float32)" in msg and "budget" not in msg
               and "\n" not in msg, "%s: a float64 input to a float32 model, budget fraction "
               "%g: the dtypes named, not the budget: %s" % (mode, frac, msg), msg)


def least_budget():
    x = torch.randn(512, 16)
    e = failure(lambda: remat(mlp(), (x,), budget=fraction(0.1)))
    ok(re.search(r"the least any plan needs; that is fixed memory \+ \d\.\d\d of the "
                 r"activations .*\(exit 3\)$", str(e)),
       "eager: a budget function no plan meets names the least as a fraction of the "
       "activations: %s" % e, e)
    e = failure(lambda: step(remat(mlp(), (x,), budget=fraction(0.1), compile=True), x))
    m = re.search(r"the least budget that fits is about (\d+) bytes, fixed memory \+ "
                  r"(\d\.\d\d) of the activations", str(e))
    ok(isinstance(e, RematError) and m, "compile=True: a budget function no partition meets "
       "names the least that fits: %s" % e, e)
    if not m:
        return
    least = int(m.group(1))
    r = remat(mlp(), (x,), budget=least, compile=True)
    ran = failure(lambda: step(r, x))
    e = failure(lambda: step(remat(mlp(), (x,), budget=least - 2 ** 14, compile=True), x))
    ok(ran is None and r.plan_info["plan_peak"] <= least and isinstance(e, RematError),
       "compile=True: that budget has a partition (peak %s), 16 KiB less has none"
       % r.plan_info.get("plan_peak"), "%r; %r" % (ran, e))


class Breaks(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 3)

    def forward(self, x):
        h = self.a(x)
        torch._dynamo.graph_break()
        return self.b(h)


class Logs(nn.Module):
    """Logs a warning inside its forward, once (as a Hugging Face LM does
    when called with labels=)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 64)
        self.b = nn.Linear(64, 3)
        self.log = logging.getLogger("t_user")

    def forward(self, x):
        h = torch.tanh(self.a(x))
        self.log.warning("a warning inside the step")
        return self.b(h)


def compiled_graphs():
    x = torch.randn(32, 16)
    torch.manual_seed(0)
    e = failure(lambda: step(remat(Breaks(), (x,), budget="100%", compile=True), x))
    msg = str(e)
    ok(isinstance(e, RematError) and "t_user.py:" in msg and "in forward" in msg
       and "\n" not in msg, "compile=True: a graph break names its line: %s" % msg, msg)
    torch.manual_seed(0)
    model = Logs()
    want = copy.deepcopy(model)(x)
    torch.manual_seed(0)
    r = remat(model, (x,), budget="100%", compile=True)
    e = failure(lambda: step(r, x))
    ok(e is None and torch.allclose(r(x), want, rtol=1e-5, atol=1e-6),
       "compile=True: a model that logs inside its forward trains (the call is skipped)", e)


def main():
    for part in (state_dicts, causes, least_budget, compiled_graphs):
        e = failure(part)
        if e is not None:
            ok(False, "%s ran through" % part.__name__, "%s: %s" % (type(e).__name__, e))
    finish()


main()

#!/usr/bin/python3
"""checkmate_torch on a torch that renamed a private name
(checkmate_torch/private.py). No other module of the package names a
private torch module or attribute. Each entry of private.NAMES is
renamed in turn, as a torch release that renamed it would be seen:
every mode that reads it refuses in one line naming it and the torch
before it traces anything (check(), and remat() in each mode), or, for
an optional name, warns once saying what is lost and still trains: the
plan as Python bit for bit as an ordinary step (TorchScript's names),
compile=True within its budget and torch.compile's losses (dynamo's
logging setting, inductor's cache key). A torch outside the tested
versions is told once.

Usage: PYTHON tests/torch/t_private.py [CHECKMATE_BINARY]. Prints TAP and
ends with "N passed, M failed"."""
import ast
import contextlib
import os
import sys
import warnings

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
from checkmate_torch import private  # noqa: E402

PKG = os.path.join(ROOT, "checkmate_torch")
_OPS = ("aten", "_aten", "prims")   # names bound to torch.ops namespaces: operator names


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _chain(node):
    """['torch', 'a', 'b'] for the expression torch.a.b, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def defined_names(trees):
    """Every name the package binds: functions, classes, variables,
    attributes it assigns, arguments, imports."""
    ours = set()
    for tree in trees:
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ours.add(n.name)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                ours.add(n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                ours.add(n.attr)
            elif isinstance(n, ast.arg):
                ours.add(n.arg)
            elif isinstance(n, ast.alias):
                ours.add((n.asname or n.name).split(".")[0])
    return ours


def private_uses(tree, ours):
    """(line, name) of each private torch name tree reads: an import of a
    module under torch with a part that starts with _, torch.x._y, and an
    attribute _y (or getattr's "_y") that the package does not bind
    itself, which is then some other library's (torch's) private one.
    Operator names (torch.ops.aten._softmax) are the dispatcher's, not
    Python's."""
    hits = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            hits += [(n.lineno, a.name) for a in n.names
                     if a.name.split(".")[0] == "torch" and any(map(_private, a.name.split(".")))]
        elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "torch":
            if any(map(_private, n.module.split("."))):
                hits.append((n.lineno, n.module))
            hits += [(n.lineno, n.module + "." + a.name) for a in n.names if _private(a.name)]
        elif isinstance(n, ast.Attribute) and _private(n.attr):
            c = _chain(n.value)
            if c and (c[0] in _OPS or c[:2] == ["torch", "ops"]):
                continue
            if c and c[0] == "torch":
                hits.append((n.lineno, ".".join(c + [n.attr])))
            elif n.attr not in ours:
                hits.append((n.lineno, "." + n.attr))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                n.func.id in ("getattr", "hasattr", "setattr") and len(n.args) > 1 and \
                isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str) and \
                _private(n.args[1].value) and n.args[1].value not in ours:
            hits.append((n.lineno, '"%s"' % n.args[1].value))
    # torch._C._jit_pass_dce once, not also as torch._C
    return sorted({(line, name) for line, name in hits
                   if not any(l2 == line and n2.startswith(name + ".") for l2, n2 in hits)})


# --- no private torch name outside private.py --------------------------------
files = sorted(f for f in os.listdir(PKG) if f.endswith(".py"))
trees = {f: ast.parse(open(os.path.join(PKG, f)).read(), f) for f in files}
ours = defined_names(trees.values())
found = {f: private_uses(t, ours) for f, t in trees.items() if f != "private.py"}
ok(len(found) >= 15 and not any(found.values()),
   "no module of checkmate_torch but private.py names a private torch module or attribute "
   "(%d modules read)" % len(found),
   "; ".join("%s:%d: %s" % (f, line, name) for f, hits in found.items() for line, name in hits))
sample = ast.parse("import torch._dynamo\nfrom torch._inductor import config\n"
                   "from torch.utils import _pytree\nx = torch._C._jit_pass_dce\n"
                   "y = op._schema\nz = getattr(p, '_backward_hooks', None)\n"
                   "w = torch.ops.aten._softmax\nv = aten._to_copy\n")
got = [name for _, name in private_uses(sample, defined_names([sample]))]
ok(sorted(got) == sorted(["torch._dynamo", "torch._inductor", "torch.utils._pytree",
                          "torch._C._jit_pass_dce", "._schema", '"_backward_hooks"']),
   "the reader finds private names in a sample (imports, attributes, getattr) and leaves "
   "operator names alone", str(got))
@contextlib.contextmanager
def renamed(key):
    """NAMES[key] looked for under another name, as on a torch release
    that renamed it."""
    name = private.NAMES[key]
    old = name.path
    name.path = old + "_renamed"
    private.forget()
    try:
        yield
    finally:
        name.path = old
        private.forget()


def checked(mode):
    """(PrivateError or None, warnings' texts) of private.check(mode)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            private.check(mode)
            e = None
        except private.PrivateError as err:
            e = err
    return e, [str(x.message) for x in w if issubclass(x.category, private.UntestedTorchWarning)]


def one_line_naming(e, key):
    return e is not None and key in str(e) and torch.__version__ in str(e) and "\n" not in str(e)


# --- each name renamed: check() in each mode -----------------------------------
modes = [m for m in private.MODES if checked(m)[0] is None]
ok("graph" in modes, "this torch %s has every name of the modes %s" % (torch.__version__, modes))
for mode in modes:
    wrong = []
    for key, name in private.NAMES.items():
        with renamed(key):
            e, said = checked(mode)
        if mode not in name.modes:
            good = e is None and not any(key in s for s in said)
        elif name.lost is None:
            good = one_line_naming(e, key)
        else:
            good = e is None and len([s for s in said if key in s and name.lost in s]) == 1
        if not good:
            wrong.append("%s: %s, %s" % (key, e, said))
    needed = [k for k, n in private.NAMES.items() if mode in n.modes]
    ok(not wrong, "%s mode: each of its %d private names renamed in turn is refused in one line "
       "naming it and torch %s (a warning for the optional ones); the others' absence does not "
       "matter" % (mode, len(needed), torch.__version__), "; ".join(wrong[:3]))
e, said = checked(modes[-1])
ok(e is None and not said or all("tested on" in s for s in said),
   "every name put back, check() passes again")

remat_or_finish()
from torch import nn  # noqa: E402
from checkmate_torch import remat  # noqa: E402
from checkmate_torch.measure import step_peak  # noqa: E402
from checkmate_torch.train import RematError  # noqa: E402


def mlp(dropout=0.1):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Dropout(dropout), nn.Linear(32, 32),
                         nn.GELU(), nn.Linear(32, 3))


X, Y = torch.randn(256, 16), torch.randint(0, 3, (256,))
BUDGET = lambda fixed, peak: int(fixed + 0.7 * (peak - fixed))  # noqa: E731


def train(model, steps=3):
    """losses and final parameters of SGD steps, from one generator state."""
    torch.manual_seed(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X), Y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses, [p.detach().clone() for p in model.parameters()]


def same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a[0] + a[1], b[0] + b[1]))


def refused(compile):
    torch._dynamo.reset()
    try:
        remat(mlp(), (X,), budget=BUDGET, compile=compile)
    except RematError as e:
        return e
    return None


# --- each required name renamed: remat refuses before it traces --------------
for compile, mode in ((False, "eager"), (True, "compile")):
    wrong = []
    for key, name in private.NAMES.items():
        if mode not in name.modes or name.lost is not None:
            continue
        with renamed(key):
            e = refused(compile)
        if not one_line_naming(e, key):
            wrong.append("%s: %s" % (key, e))
    ok(not wrong, "remat(compile=%s) with any one of its required private names renamed: a "
       "one-line RematError naming it and the torch" % compile, "; ".join(wrong[:3]))
    with renamed("torch._ops.OpOverload"):
        e = refused(compile)
    print("# e.g. %s" % e)

# --- an optional name renamed: a warning, and the step still trains ----------
ordinary = train(mlp())
with renamed("torch._C._jit_pass_dce"):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = mlp()
        r = remat(model, (X,), budget=BUDGET)
        got = train(r)
        remat(mlp(), (X,), budget=BUDGET)   # a second remat(): no second warning
said = [str(x.message) for x in w if issubclass(x.category, private.UntestedTorchWarning)
        and "_jit_pass_dce" in str(x.message)]
ok(len(said) == 1 and "as Python" in said[0], "TorchScript's pass renamed: one warning for two "
   "remat() calls, saying plans run as Python", str(said))
ok(r.plan_info["runner"] == "python" and "private.py" in r.plan_info["runner_note"]
   and r.plan_info["computes"] > r.plan_info["nodes"] and same(got, ordinary),
   "... and the plan runs as Python, recomputing, bit for bit as an ordinary loop (3 SGD steps)",
   str((r.plan_info["runner"], r.plan_info["runner_note"])))
r3 = remat(mlp(), (X,), budget=BUDGET)
ok(r3.plan_info["runner"] == "torchscript", "the name put back, plans run by TorchScript again")


def compiled_losses(r):
    return [loss.item() for loss in train(r)[0]]


torch._dynamo.reset()
reference = compiled_losses(torch.compile(mlp(0)))
for key in ("torch._dynamo.config.ignore_logging_functions",
            "torch._inductor.codecache.FxGraphHashDetails._get_custom_partitioner_fn_detail"):
    torch._dynamo.reset()
    with renamed(key):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = remat(mlp(0), (X,), budget=BUDGET, compile=True)
            losses = compiled_losses(r)
            measured = step_peak(lambda: nn.functional.cross_entropy(r(X), Y).backward(), "cpu")
    said = [str(x.message) for x in w if key in str(x.message)]
    info = r.plan_info
    model = info["plan_peak"] - info["fixed_memory"]
    rel = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, reference))
    ok(len(said) == 1 and private.NAMES[key].lost in said[0] and rel < 1e-5
       and info["plan_peak"] <= info["budget"] and measured["peak"] <= model,
       "compile=True with %s renamed: one warning saying what is lost; trains within its "
       "budget (the step's measured peak within the plan's model), torch.compile's losses"
       % key.rsplit(".", 1)[1], "%s; rel %.2g; measured %d model %d"
       % (said, rel, measured["peak"], model))
    print("# measured %d bytes, model %d" % (measured["peak"], model))

# --- a torch outside the tested versions ---------------------------------------
real = torch.__version__
torch.__version__ = "2.99.0"
private.forget()
try:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = mlp()
        r = remat(model, (X,), budget=BUDGET)
        got = train(r)
        remat(mlp(), (X,), budget=BUDGET)
finally:
    torch.__version__ = real
    private.forget()
said = [str(x.message) for x in w if issubclass(x.category, private.UntestedTorchWarning)]
ok(len(said) == 1 and "2.99.0" in said[0] and ", ".join(private.TESTED["eager"]) in said[0]
   and same(got, ordinary),
   "torch 2.99.0: one warning for two remat() calls, naming the versions tested; it trains "
   "bit for bit", str(said))

finish()

#!/usr/bin/python3
"""The generated code of a plan (checkmate_torch/codegen.py, as Python, and
script.py, as TorchScript) against the interpreter that runs the same
instructions (execute.Interpreter, on the plan lowered by lower.py): on models with dropout recomputed in the backward,
batch norm (also momentum=None), group norm, in-place ops and a buffer
the step writes, at budgets that force recomputation and at the
checkpoint-all plan (which writes the buffers in place), all three give
the same outputs, gradients, buffers and generator state, bit for bit;
TorchScript's program is refused where its ops are not the plan's (shown
by taking away what makes them so); a plan the lowering refuses is
refused when the code is generated, naming the step."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
remat_or_finish()

from torch import nn  # noqa: E402

import checkmate_torch  # noqa: E402
from checkmate_torch import script  # noqa: E402
from checkmate_torch.codegen import Program  # noqa: E402
from checkmate_torch.script import ScriptError, ScriptProgram  # noqa: E402
from checkmate_torch.execute import Interpreter, PlanError  # noqa: E402
from checkmate_torch.lower import Lowered  # noqa: E402
from checkmate_torch.trace import Inputs  # noqa: E402


class Mixed(nn.Module):
    """Dropout, batch norm (one with momentum=None), group norm, in-place
    activations and a counter buffer written by the step, read before and
    after the write."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8, momentum=None)
        self.gn = nn.GroupNorm(2, 8)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(8, 5)
        self.register_buffer("n", torch.zeros(()))

    def forward(self, x):
        # reads n before the step writes it: a recompute in the backward
        # must read it as the step began
        h = self.bn(self.c1(x)).relu_() + self.n
        h = self.drop(h)
        h = h + self.gn(self.bn2(self.c2(h))).mul_(0.5)
        self.n += 1
        return self.head(self.drop(h.mean((2, 3)))) * (1 + self.n * 0)


class Residual(nn.Module):
    """Residual blocks whose `+=` an ordinary step writes into the batch
    norm's output: a plan that takes that output from the norm's tuple
    again afterwards must not find it written."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(4, 4, 3, padding=1) for _ in range(3))
        self.norms = nn.ModuleList(nn.BatchNorm2d(4) for _ in range(3))

    def forward(self, x):
        for conv, norm in zip(self.convs, self.norms):
            h = norm(conv(x))
            h += x
            x = h.relu_()
        return x.mean((2, 3))


def gpt():
    from checkmate_torch.examples.gpt import GPT
    return GPT(vocab=64, context=16, d=32, heads=4, layers=2, dropout=0.2)


CASES = [
    ("a CNN with dropout, batch norm, group norm, in-place ops, a written buffer",
     Mixed, lambda: ((torch.randn(4, 3, 8, 8),), {})),
    ("a GPT with dropout", gpt,
     lambda: ((torch.randint(0, 64, (2, 16)),),
              {"attention_mask": torch.ones(2, 16, dtype=torch.bool)})),
]


def placeholders(model, args, kwargs):
    return [p.detach().clone() for p in model.parameters()] + \
        [b.clone() for b in model.buffers()] + \
        [t.clone() for t in Inputs(args, kwargs).tensors]


def run_interpreter(c, tensors, tangents):
    """The interpreter on the plan's instructions, lowered anew."""
    it = Interpreter(Lowered(c.analysis, c.forward_steps, c.backward_steps))
    outs, state = it.forward(tensors)
    return outs, it.backward(state, tangents, [None] * len(c.analysis.grads))


def runner(kind):
    """A run of the plan's code generated as `kind` (Program or
    ScriptProgram)."""
    def run(c, tensors, tangents):
        p = kind(c.analysis, c.forward_steps, c.backward_steps)
        outs, state = p.forward(tensors)
        grads = p.backward(state, tangents, [None] * len(c.analysis.grads))
        run.left = len(state)   # the state the backward leaves: nothing
        return outs, grads
    run.__name__ = kind.__name__
    return run


def run_all(c, model, args, kwargs, tangents):
    """The interpreter's run, the Python program's and TorchScript's, each on
    fresh copies of the placeholders from seed 11: their (outputs,
    gradients, placeholders after, generator state), and how much state
    TorchScript's backward left."""
    runs = (run_interpreter, runner(Program), runner(ScriptProgram))
    results = []
    for run in runs:
        tensors = placeholders(model, args, kwargs)
        torch.manual_seed(11)
        with torch.no_grad():
            outs, grads = run(c, tensors, [t.clone() for t in tangents])
        results.append((outs, grads, tensors, torch.get_rng_state()))
    return results, runs[2].left


def same(xs, ys):
    return len(xs) == len(ys) and all(
        (x is None and y is None) or (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)
                                      and x.dtype == y.dtype and torch.equal(x, y))
        for x, y in zip(xs, ys))


class LossAndLogits(nn.Module):
    """A GPT returning its loss and its logits, as a language model of
    Hugging Face's does: a training loop's backward reaches the loss only."""

    def __init__(self):
        super().__init__()
        self.gpt = gpt()

    def forward(self, x):
        logits = self.gpt(x)
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 64), x[:, 1:].reshape(-1))
        return loss, logits


def absent_tangents():
    """The backward for the loss's gradient alone, the logits' absent:
    TorchScript's program compiled for those tangents (once) equals the
    interpreter's run of the same lowered backward, bit for bit, and
    remat's loss-only steps run it, bit for bit as an ordinary loop's."""
    torch.manual_seed(0)
    model, ref = LossAndLogits(), LossAndLogits()
    ref.load_state_dict(model.state_dict())
    x = torch.randint(0, 64, (2, 16))
    m = checkmate_torch.remat(model, (x,), cache=False, strategy="dtr",
                              budget=lambda f, p: f + (p - f) // 2)
    c = m._last
    a = c.analysis
    tangents = [torch.ones(()), torch.empty(0)]     # the logits' is not read
    runs = []
    for kind in ("interpreter", "TorchScript"):
        tensors = placeholders(model, (x,), {})
        torch.manual_seed(11)
        with torch.no_grad():
            p = ScriptProgram(c.analysis, c.forward_steps, c.backward_steps)
            outs, state = p.forward(tensors)
            if kind == "interpreter":
                grads = Interpreter(p.lowered).backward(p.unpack(state), [tangents[0], None],
                                                        [None] * len(a.grads), frozenset({1}))
            else:
                grads = p.backward_absent(state, [tangents[0], None], [None] * len(a.grads),
                                          frozenset({1}))
        runs.append((outs, grads, tensors, torch.get_rng_state()))
    (o1, g1, t1, r1), (o2, g2, t2, r2) = runs
    ok(g2 is not None and same(o1, o2) and same(g1, g2) and same(t1, t2)
       and torch.equal(r1, r2) and len(p.absent) == 1,
       "a loss and its logits, the logits' gradient absent: TorchScript's backward for those "
       "tangents = the interpreter's, bitwise (%d gradients)" % len(g1))
    opts = [torch.optim.SGD(n.parameters(), lr=0.1) for n in (m, ref)]
    equal = True
    for step in range(3):
        losses = []
        for n, opt in zip((m, ref), opts):
            torch.manual_seed(step)
            loss = n(x)[0]
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss)
        equal = equal and torch.equal(*losses)
    compiled = [v for v in m._last.program.base.absent.values() if v is not None]
    ok(equal and len(compiled) == 1
       and all(torch.equal(p, q) for p, q in zip(model.parameters(), ref.parameters())),
       "remat, 3 SGD steps on the loss alone: the backward compiled once for the logits' "
       "absent gradient, bit for bit as an ordinary loop (%d compiled)" % len(compiled))


def main():
    for what, build, inputs in CASES:
        for frac in (0.5, 0.8, 1):
            torch.manual_seed(0)
            model = build()
            args, kwargs = inputs()
            # 1: the checkpoint-all plan, in traced order (a counter's add_
            # before the batch norm that reads it)
            m = checkmate_torch.remat(model, args, kwargs, cache=False,
                                      strategy="dtr" if frac < 1 else "checkpoint-all",
                                      budget=lambda f, p, frac=frac: f + int((p - f) * frac))
            c = m._last
            recomputes = m.plan_info["computes"] - m.plan_info["nodes"]
            a = c.analysis
            gen = torch.Generator().manual_seed(3)
            tangents = [torch.randn(tuple(a.fake[p].shape), generator=gen).to(a.fake[p].dtype)
                        for p in a.placeholders if a.role[p] == "tangent"]
            results, left = run_all(c, model, args, kwargs, tangents)
            (o1, g1, t1, r1) = results[0]
            # writes made in place (codegen.in_place_writes): the checkpoint-
            # all plan snapshots nothing and writes every buffer in place
            writes = sum(map(len, c.program.in_place.values()))
            snaps = len(c.program.snapshot)
            for (o2, g2, t2, r2), name in zip(results[1:], ("Python", "TorchScript")):
                ok(same(o1, o2) and same(g1, g2) and same(t1, t2) and torch.equal(r1, r2)
                   and writes > 0 and (frac < 1 or snaps == 0),
                   "%s, %.0f%% of the activations (%d recomputes, %d writes in place, %d of %d "
                   "written tensors snapshot): generated code (%s) = interpreter, bitwise "
                   "(outputs, %d gradients, buffers, generator)"
                   % (what, frac * 100, recomputes, writes, snaps, len(a.final), name, len(g1)))
            ok(m.plan_info["runner"] == "torchscript" and m.plan_info["runner_note"] is None
               and left == 0,
               "%s, %.0f%%: remat runs the TorchScript program (plan_info runner %s), whose "
               "backward empties the state (%d left)"
               % (what, frac * 100, m.plan_info["runner"], left))

    # approx's plan for Residual computes a norm's output again from its
    # tuple after the `+=` that wrote it (found on ResNet-50 by an lns plan)
    torch.manual_seed(0)
    model = Residual()
    x = torch.randn(2, 4, 8, 8)
    c = checkmate_torch.remat(model, (x,), cache=False, strategy="approx",
                              budget=lambda f, p: f + int((p - f) * 0.7))._last
    a = c.analysis
    tangents = [torch.ones(tuple(a.fake[p].shape)) for p in a.placeholders
                if a.role[p] == "tangent"]
    results, _ = run_all(c, model, (x,), {}, tangents)
    ok(all(same(o, results[0][0]) and same(g, results[0][1]) for o, g, _, _ in results[1:]),
       "residual blocks, approx's plan (%d computes of %d nodes): both programs = interpreter, "
       "bitwise" % (sum(1 for op, _ in c.forward_steps + c.backward_steps if op == "compute"),
                    len(a.real)))

    # views called as Tensor methods dispatch what their ATen ops do
    from torch.utils._python_dispatch import TorchDispatchMode
    from checkmate_torch.codegen import _METHODS

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func)
            return func(*args, **(kwargs or {}))

    x = torch.randn(2, 3, 4).transpose(0, 2)   # (4, 3, 2), not contiguous
    examples = {"t": (torch.randn(3, 4),), "reshape": (x, [6, 4]), "transpose": (x, 0, 1),
                "permute": (x, [2, 0, 1]), "expand": (torch.randn(3, 1), [3, 5]),
                "unsqueeze": (x, 1), "squeeze": (torch.randn(3, 1, 2), 1),
                "select": (x, 1, 2), "unbind": (x, 0), "as_strided": (torch.randn(10), [2, 2],
                                                                      [1, 2], 1)}
    bad = []
    for op, method in _METHODS.items():
        args = examples[op.overloadpacket.__name__]
        runs = []
        for fn in (op._op, method):
            with Record() as rec:
                out = fn(*args)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            runs.append((rec.ops, [(o.shape, o.stride(), o.storage_offset(), o.tolist())
                                   for o in outs]))
        if runs[0] != runs[1]:
            bad.append(str(op))
    ok(not bad, "%d views called as Tensor methods dispatch the ATen ops of their OpOverloads, "
       "with the same results%s" % (len(_METHODS), "" if not bad else ": not " + ", ".join(bad)))

    # TorchScript's program is checked against the plan's ops: without the
    # results read where TorchScript would drop their ops (a recomputed
    # batch norm read for its running statistics only), or without the
    # overloads a Python number resolves to, the check refuses the program
    torch.manual_seed(0)
    model = Mixed()
    args, kwargs = CASES[0][2]()
    c = checkmate_torch.remat(model, args, kwargs, cache=False, strategy="dtr",
                              budget=lambda f, p: f + (p - f) // 2)._last
    kept = ScriptProgram(c.analysis, c.forward_steps, c.backward_steps).n_kept
    ScriptProgram._SINKS = False
    try:
        ScriptProgram(c.analysis, c.forward_steps, c.backward_steps)
        ok(False, "a program without the %d kept results is refused" % kept)
    except ScriptError as e:
        ok(kept > 0 and "other ops" in str(e),
           "a program without the %d kept results is refused: %s" % (kept, e))
    finally:
        ScriptProgram._SINKS = True
    torch.manual_seed(0)
    model = gpt()
    args, kwargs = CASES[1][2]()
    c = checkmate_torch.remat(model, args, kwargs, cache=False, budget="100%",
                              strategy="checkpoint-all")._last
    saved = dict(script._WRAPPED_AS)
    script._WRAPPED_AS.clear()
    try:
        ScriptProgram(c.analysis, c.forward_steps, c.backward_steps)
        ok(False, "a program whose numbers resolve to other overloads than expected is refused")
    except ScriptError as e:
        ok(".Scalar" in str(e), "a program whose numbers resolve to other overloads than "
           "expected is refused: %s" % e)
    finally:
        script._WRAPPED_AS.update(saved)
    os.environ["CHECKMATE_TORCHSCRIPT"] = "0"
    try:
        info = checkmate_torch.remat(model, args, kwargs, cache=False, budget="100%",
                                     strategy="checkpoint-all").plan_info
    finally:
        del os.environ["CHECKMATE_TORCHSCRIPT"]
    ok(info["runner"] == "python" and info["runner_note"] == "CHECKMATE_TORCHSCRIPT=0",
       "CHECKMATE_TORCHSCRIPT=0: the plan runs as Python (runner %s, note %s)"
       % (info["runner"], info["runner_note"]))

    absent_tangents()

    # a broken plan is refused when its code is generated
    torch.manual_seed(0)
    model = Mixed()
    args, kwargs = CASES[0][2]()
    c = checkmate_torch.remat(model, args, kwargs, budget="100%", strategy="checkpoint-all",
                              cache=False)._last
    fwd, bwd = list(c.forward_steps), list(c.backward_steps)
    k = next(i for i, (op, r) in enumerate(fwd) if op == "free")
    last = [r for op, r in bwd if op == "compute"][-1]
    cases = [
        ("a value freed twice", fwd[:k] + [fwd[k]] + fwd[k:], bwd, "not resident"),
        ("a node computed twice without a free",
         fwd[:1] + fwd[:1] + fwd[1:], bwd, "already resident"),
        ("the backward's last compute left out", fwd,
         [s for s in bwd if s[1] is not last], "never"),
    ]
    for what, f, b, words in cases:
        for kind in (Program, ScriptProgram):
            try:
                kind(c.analysis, f, b)
                ok(False, "%s: refused (%s)" % (what, kind.__name__))
            except PlanError as e:
                ok(words in str(e) and "\n" not in str(e),
                   "%s: refused when generated (%s): %s" % (what, kind.__name__, e))
    finish()


if __name__ == "__main__":
    main()

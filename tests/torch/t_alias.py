#!/usr/bin/python3
"""Calls whose tensors share memory (checkmate_torch/alias.py): a causal
LM's example passing its ids as its labels, then calls with other labels;
overlapping views of one tensor as two inputs; an input that is a view of
another input or of a parameter and requires a gradient. Each trains 3 SGD steps under a plan
that recomputes, equal bit for bit to an ordinary loop (losses, input
gradients, parameters), whatever the example shared and the later calls
share. A step that writes a tensor sharing memory with an input (an
input the model writes in place, a BatchNorm's running mean passed as an
input) is refused in one line naming both, at remat() and at a later
call.

Usage: PYTHON tests/torch/t_alias.py [CHECKMATE_BINARY]. Prints TAP and
ends with "N passed, M failed"."""
import copy
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
remat_or_finish()
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402
from checkmate_torch import remat  # noqa: E402
from checkmate_torch.train import RematError  # noqa: E402

V, D, T = 40, 16, 8


class LM(nn.Module):
    """A causal LM's call: ids in, the loss against labels out."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.l1 = nn.Linear(D, D)
        self.l2 = nn.Linear(D, D)
        self.head = nn.Linear(D, V)

    def forward(self, input_ids, labels):
        h = torch.tanh(self.l1(self.emb(input_ids)))
        h = torch.tanh(self.l2(h)) + h
        logits = self.head(h)
        return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1))


class Pair(nn.Module):
    """Two float inputs, each through layers of its own, x also against
    a parameter of its shape."""

    def __init__(self, din=6):
        super().__init__()
        self.a = nn.Linear(din, D)
        self.b = nn.Linear(din, D)
        self.c = nn.Linear(D, D)
        self.w = nn.Parameter(torch.randn(T, din))

    def forward(self, x, y):
        h = torch.tanh(self.a(x)) * torch.sigmoid(self.b(y)) + (x * self.w).sum(-1, True)
        return torch.tanh(self.c(torch.tanh(self.c(h)))).pow(2).mean()


class WritesInput(nn.Module):
    """Writes its first input in place, then reads the second."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(D, D)
        self.b = nn.Linear(D, D)

    def forward(self, x, y):
        x.mul_(2)
        return (torch.tanh(self.a(torch.tanh(self.b(y)))) + x).pow(2).mean()


class WithNorm(nn.Module):
    """A batch norm (its running statistics written by each step) and a
    second input."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(D, D)
        self.bn = nn.BatchNorm1d(D)

    def forward(self, x, y):
        return torch.tanh(self.bn(self.a(x)) + y.sum()).pow(2).mean()


def budget(fixed, peak):
    return fixed + int((peak - fixed) * 0.8)


def run(model, calls, planned, example=None, accumulate=False):
    """3 SGD steps over calls (step -> (args, kwargs)), under a plan made
    on example (a call) if planned (accumulate: each step's gradients
    added into random ones, as in the middle of an accumulation, never
    zeroed): the items to compare."""
    m = model
    if planned:
        a, k = example
        m = remat(model, a, k, budget=budget, time_limit=5)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(5)
    for p in model.parameters():
        p.grad = torch.randn(p.shape, generator=g) if accumulate else None
    items = []
    for step in range(3):
        args, kwargs = calls(step)
        if not accumulate:
            opt.zero_grad(set_to_none=False)
        loss = m(*args, **kwargs)
        loss.backward()
        items.append(("step %d loss" % step, loss.detach().clone()))
        for i, t in enumerate(list(args) + list(kwargs.values())):
            if t.requires_grad and t.is_leaf:
                items.append(("step %d input %d .grad" % (step, i), t.grad.clone()))
        opt.step()
    items += [(n, p.detach().clone()) for n, p in model.named_parameters()]
    return items


def same(model, calls, example, what):
    """Ordinary and planned runs from one copy of model: every item equal."""
    want = run(copy.deepcopy(model), calls, False)
    try:
        got = run(copy.deepcopy(model), calls, True, example(copy.deepcopy(model)))
    except Exception as e:
        return ok(False, what, "%s: %s" % (type(e).__name__, e))
    bad = [n for (n, a), (_, b) in zip(got, want) if not torch.equal(a, b)]
    ok(not bad and len(got) == len(want), what, "differ: %s" % ", ".join(bad[:5]))


def lm_calls():
    """Step 0 passes the ids as labels; steps 1 and 2 labels of their own
    with padding masked (-100), as a collator makes them."""
    def calls(step):
        g = torch.Generator().manual_seed(100 + step)
        ids = torch.randint(0, V, (2, T), generator=g)
        if step == 0:
            return (), {"input_ids": ids, "labels": ids}
        labels = ids.clone()
        labels[:, T - 2 - step:] = -100
        return (), {"input_ids": ids, "labels": labels}
    return calls


def main():
    torch.manual_seed(0)
    lm = LM()
    calls = lm_calls()
    same(lm, calls, lambda m: calls(0),
         "causal LM, example labels=input_ids, later calls masked labels: as ordinary")
    same(lm, lambda s: calls(2 - s) if s else calls(1), lambda m: calls(1),
         "causal LM, example with labels of its own, a later call labels=input_ids: as ordinary")
    lm_oov = remat(copy.deepcopy(lm), (), calls(0)[1], budget=budget, time_limit=5)
    labels = calls(1)[1]["input_ids"]   # no -100, which the embedding would refuse too
    what = "ids out of the vocabulary raise as in the model (example labels=input_ids)"
    try:
        lm_oov(input_ids=torch.full_like(labels, V + 9000), labels=labels)
        ok(False, what, "no exception")
    except Exception as e:   # IndexError ordinarily, TorchScript's RuntimeError in a plan
        ok("out of range" in str(e), what, "%s: %s" % (type(e).__name__, e))

    torch.manual_seed(1)
    pair = Pair()

    def shifted(step):
        """x and y overlapping views of one tensor that requires a gradient
        (steps 0 and 2), distinct tensors (step 1)."""
        g = torch.Generator().manual_seed(200 + step)
        if step == 1:
            return (torch.randn(2, T, 6, generator=g), torch.randn(2, T, 6, generator=g)), {}
        base = torch.randn(2, T + 1, 6, generator=g).requires_grad_(True)
        return (base[:, :-1], base[:, 1:]), {}
    same(pair, shifted, lambda m: shifted(0),
         "two inputs overlapping views of one tensor, then distinct: as ordinary")
    same(pair, lambda s: shifted(1 - s) if s < 2 else shifted(2), lambda m: shifted(1),
         "two distinct inputs, then overlapping views: as ordinary")

    def view_of_other(step):
        """y a view of x, which requires a gradient (steps 0 and 2)."""
        g = torch.Generator().manual_seed(250 + step)
        x = torch.randn(2, T, 6, generator=g).requires_grad_(True)
        return (x, x[:, :] if step != 1 else torch.randn(2, T, 6, generator=g)), {}
    same(pair, view_of_other, lambda m: view_of_other(0),
         "an input that is a view of another input requiring a gradient: as ordinary")

    def twice(step):
        g = torch.Generator().manual_seed(300 + step)
        x = torch.randn(2, T, 6, generator=g).requires_grad_(step != 1)
        return (x, x), {}
    same(pair, twice, lambda m: twice(0), "one tensor passed twice, requiring a gradient")

    holder = {}

    def param_view(step):
        """x a view of the parameter w (its gradient reaches w through x
        too); y a tensor of its own."""
        g = torch.Generator().manual_seed(400 + step)
        w = holder["m"].w
        return (w.unsqueeze(0).expand(2, T, 6), torch.randn(2, T, 6, generator=g)), {}

    def param_run(planned):
        m = copy.deepcopy(pair)
        holder["m"] = m
        return run(m, param_view, planned, param_view(0) if planned else None, True)
    want = param_run(False)
    got = param_run(True)
    bad = [n for (n, a), (_, b) in zip(got, want) if not torch.equal(a, b)]
    ok(not bad, "an input that is a view of a parameter, requiring a gradient, gradients "
       "accumulated: as ordinary",
       "differ: %s" % ", ".join(bad[:5]))

    def refused(make, args_of, what, later=None):
        """remat(make(), args_of(model)) refuses in one line naming both
        tensors; with later, remat on a distinct example and a later call
        (later(model)) is refused the same way."""
        model = make()
        names = None
        try:
            if later is None:
                remat(model, args_of(model), budget="100%", time_limit=5)
                return ok(False, what, "remat() accepted it")
            m = remat(model, args_of(model), budget="100%", time_limit=5)
            a, names = later(model)
            m(*a)
            return ok(False, what, "the call ran")
        except RematError as e:
            msg = str(e)
            good = "shares memory" in msg and "\n" not in msg and \
                (names is None or all(n in msg for n in names))
            ok(good, "%s: %s" % (what, msg), msg)
    x = torch.randn(2, D)
    refused(WritesInput, lambda m: (x, x),
            "the same tensor twice to a model that writes its first input: refused at remat()")
    refused(WritesInput, lambda m: (torch.randn(2, D), torch.randn(2, D)),
            "a later call passing one tensor twice to a model that writes it: refused",
            lambda m: ((x, x), ("args[0]", "args[1]")))
    refused(WithNorm, lambda m: (torch.randn(4, D), torch.randn(D)),
            "a BatchNorm's running mean passed as an input: refused",
            lambda m: ((torch.randn(4, D), m.bn.running_mean), ("bn.running_mean", "args[1]")))
    finish()


main()

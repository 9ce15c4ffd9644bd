#!/usr/bin/python3
"""remat on inputs of several sizes (train.py, Compiled's prior plans): a
new sequence length whose graph has the structure of a planned one runs
that plan's steps without a solve when they fit its budget at the new
sizes, bit for bit as an ordinary loop; a longer one that does not fit,
and one that traces to another graph, are solved anew, each saying so
once."""
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
remat_or_finish()

import checkmate_torch  # noqa: E402
from checkmate_torch import solve as solvemod  # noqa: E402
from checkmate_torch.examples.gpt import GPT  # noqa: E402

solves = []
_solve = solvemod.solve


def counted(*args, **kwargs):
    solves.append(1)
    return _solve(*args, **kwargs)


solvemod.solve = counted


class Branchy(torch.nn.Module):
    """A GPT whose forward takes another branch from length 40 on."""

    def __init__(self):
        super().__init__()
        self.gpt = GPT(vocab=64, context=64, d=32, heads=4, layers=2, dropout=0.1)

    def forward(self, x):
        h = self.gpt(x)
        return h * 2 if x.shape[1] >= 40 else h


def main():
    torch.manual_seed(0)
    model = Branchy()
    ref = Branchy()
    ref.load_state_dict(model.state_dict())
    gen = torch.Generator().manual_seed(1)
    x = torch.randint(0, 64, (2, 32), generator=gen)
    r = checkmate_torch.remat(model, (x,), budget=lambda f, p: f + (p - f) // 2, cache=False,
                              strategy="dtr")
    budget = r.plan_info["budget"]
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-2) for m in (model, ref)]
    rows = []
    for length in (32, 24, 16, 9, 32, 36, 20, 48, 44):
        xb = torch.randint(0, 64, (2, length), generator=gen)
        before = len(solves)
        losses = []
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            for m, opt in zip((r, ref), opts):
                torch.manual_seed(length)
                loss = m(xb).float().pow(2).mean()
                loss.backward()
                opt.step()
                opt.zero_grad()
                losses.append(loss)
        info = r.plan_info
        rows.append((length, torch.equal(*losses), info["reused"], len(solves) - before,
                     info["peak"], info["budget"], info["status"],
                     [str(w.message) for w in said if "planned anew" in str(w.message)]))
    same = all(torch.equal(a, b) for a, b in zip(model.parameters(), ref.parameters()))
    ok(all(row[1] for row in rows) and same,
       "9 AdamW steps at lengths 32, 24, 16, 9, 32, 36, 20, 48, 44: losses and parameters "
       "equal an ordinary loop's bit for bit")
    by = {row[0]: row for row in rows}
    shorter = [by[n] for n in (24, 16, 9)]
    ok(all(row[2] and row[3] == 0 and row[4] <= budget and row[6] == "feasible"
           for row in shorter),
       "lengths 24, 16, 9: the plan made at 32 runs without a solve, its peak replayed at "
       "each length within its budget %d (%s)" % (budget, ", ".join(
           "%d: %d" % (row[0], row[4]) for row in shorter)))
    ok(not by[36][2] and by[36][3] == 1 and len(by[36][7]) == 1
       and "do not fit the budget" in by[36][7][0] and not by[20][7] and by[20][3] == 0,
       "length 36: the plans made so far do not fit there: solved anew, saying so once; "
       "length 20 then reuses a plan: %s" % (by[36][7] or "no warning"))
    ok(not by[48][2] and by[48][3] == 1 and len(by[48][7]) == 1
       and "another graph" in by[48][7][0] and by[44][2] and by[44][3] == 0
       and not by[44][7],
       "length 48 takes another branch: solved anew, saying so once; length 44 reuses "
       "its plan: %s" % (by[48][7] or "no warning"))
    finish()


if __name__ == "__main__":
    main()

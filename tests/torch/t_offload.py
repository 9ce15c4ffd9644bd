#!/usr/bin/python3
"""Plans that copy values to host memory and back (remat's offload=,
checkmate_torch/offload.py), on the CPU through offload.emulate's copy
stream: a copy's destination holds NaN until a wait runs it, in issue
order, and a copy whose source was freed first leaves it so; a wait the
lowering left out changes the results (docs/torch.md, "Offload to host
memory").

- Models with dropout and layer norms (an MLP, our GPT, Hugging Face's
  GPT-2 and Llama where transformers imports) under plans that offload:
  3 training steps equal ordinary ones bit for bit (losses, parameters,
  buffers, the generator), the plan's offloads counted, and the bytes
  the plan's device registers hold at each step (host copies left out)
  equal to the plan's model of them.
- A backward whose tangents are partly absent (the interpreter's path).
- A plan reused at a shorter length with its copies; the plan cache
  keyed by the copy settings.
- A plan file with copies (`checkmate solve --bandwidth`) replayed by
  `python3 -m checkmate_torch run`: gradients and live bytes.
- The lowering's one-line errors for steps that copy wrongly, and
  remat()'s for offload= settings it cannot take.
- Where CUDA is available, the copy stream's: our GPT on the GPU, bit for
  bit an ordinary loop's, and the allocator's peak within the plan's
  activations plus the allowance t_train.py explains.

Usage: PYTHON tests/torch/t_offload.py [CHECKMATE_BINARY]. Prints TAP and
ends with "N passed, M failed"."""
import copy
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import cli, finish, ok, remat_or_finish, torch_setup  # noqa: E402

torch = torch_setup()
remat_or_finish()
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402
from checkmate_torch import offload, remat  # noqa: E402
from checkmate_torch.execute import PlanError, kept_rng, replay, resolve, \
    zero_tangents  # noqa: E402
from checkmate_torch.examples.gpt import GPT  # noqa: E402
from checkmate_torch.lower import Lowered, split_at_tangents  # noqa: E402
from checkmate_torch.train import RematError  # noqa: E402

# Copies as fast as a FLOP a nanosecond: the planners offload much.
FAST = {"bandwidth": "1GB/s", "rate": "1GFLOP/s"}


def at(frac):
    return lambda fixed, peak: fixed + int((peak - fixed) * frac)


class MLP(nn.Module):
    def __init__(self, blocks=4, d=64):
        super().__init__()
        self.m = nn.Sequential(*[nn.Sequential(
            nn.Linear(d, 4 * d), nn.GELU(), nn.Dropout(0.1), nn.Linear(4 * d, d),
            nn.LayerNorm(d)) for _ in range(blocks)])

    def forward(self, x):
        return self.m(x).pow(2).mean()


class TwoHeads(nn.Module):
    """Two outputs: a loss of the first alone leaves the second's
    gradient absent."""

    def __init__(self, d=32):
        super().__init__()
        self.body = MLP(3, d).m
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        h = self.body(x)
        return self.a(h).tanh(), self.b(h).sigmoid()


def compare(model, call, batches, loss_of, optimizer="sgd"):
    """Trains a copy ordinarily and model through call on batches (each
    (args, kwargs)): whether every loss, parameter, buffer and the
    generator state are equal bit for bit, and the first difference."""
    plain = copy.deepcopy(model)

    def run(m, fn):
        opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) if optimizer == "sgd" \
            else torch.optim.AdamW(m.parameters(), lr=1e-3)
        torch.manual_seed(7)
        out = []
        for args, kwargs in batches:
            loss = loss_of(fn(*args, **kwargs))
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(("loss", loss.detach()))
        out += [("parameter " + n, p.detach().clone()) for n, p in m.named_parameters()]
        out += [("buffer " + n, b.clone()) for n, b in m.named_buffers()]
        return out + [("generator", torch.get_rng_state())]
    want = run(plain, plain)
    got = run(model, call)
    for (name, a), (_, b) in zip(got, want):
        if not torch.equal(a, b):
            return False, name
    return len(got) == len(want), None


def register_peak(m, args, kwargs):
    """The plan of m's last step replayed by the interpreter on these
    inputs: (the most bytes its device registers held after a compute or
    fetch, host copies left out; that peak as the memory model counts
    it)."""
    c = m._last
    a = c.analysis
    flat = list(args) + list((kwargs or {}).values())
    tensors = [t.detach() for t in list(m.model.parameters()) + list(m.model.buffers())] + \
        [t for t in flat if isinstance(t, torch.Tensor)]
    with kept_rng(tensors), torch.no_grad():
        it, _ = replay(a, tensors, c.forward_steps + c.backward_steps, zero_tangents(a),
                       measure=True)
    return it.peak, it.model_peak


def trains(name, model, example, batches, loss_of, optimizer="sgd", strategy="dtr-offload"):
    """remat(offload=FAST) at 40% of the activations: offloads, trains bit
    for bit, its registers as the model says. The module."""
    args, kwargs = example
    m = remat(model, args, kwargs, budget=at(0.4), offload=FAST, strategy=strategy,
              time_limit=3)
    info = m.plan_info
    ok(info["offloads"] > 0 and info["runner"] == "python" and info["time"] is not None
       and info["host_peak"] > 0,
       "%s: the plan offloads %d values (host peak %s bytes, time %.4g s, run as %s)"
       % (name, info["offloads"], info["host_peak"], info["time"], info["runner"]))
    same, where = compare(model, m, batches, loss_of, optimizer)
    ok(same, "%s: %d steps equal ordinary ones bit for bit" % (name, len(batches)),
       "first difference: %s" % where)
    measured, modeled = register_peak(m, args, kwargs)
    ok(measured <= modeled == info["peak"],
       "%s: the device registers' peak %d <= the model's %d = the plan's %d (checkpoint-all's "
       "%d)" % (name, measured, modeled, info["peak"], info["checkpoint_all_peak"]))
    return m


def lm_batches(vocab, rows, length, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [((torch.randint(0, vocab, (rows, length), generator=g),), {}) for _ in range(n)]


def lm_loss(vocab):
    return lambda logits: F.cross_entropy(logits[:, :-1].reshape(-1, vocab),
                                          torch.zeros(logits.shape[0] * (logits.shape[1] - 1),
                                                      dtype=torch.long))


def main():
    offload.emulate(True)
    torch.manual_seed(0)
    x = torch.randn(32, 64)
    trains("MLP (auto)", MLP(), ((x,), {}),
           [((torch.randn(32, 64),), {}) for _ in range(3)], lambda loss: loss, strategy="auto")

    torch.manual_seed(0)
    gpt = GPT(vocab=64, d=32, heads=2, layers=2, context=32, dropout=0.1)
    batches = lm_batches(64, 2, 16, 3)
    m = trains("GPT", gpt, batches[0], batches, lm_loss(64), optimizer="adamw")

    at16 = m.plan_info
    # a shorter length: the plan's steps, copies included, reused
    short = lm_batches(64, 2, 12, 2, seed=1)
    same, where = compare(gpt, m, short, lm_loss(64), "adamw")
    info = m.plan_info
    ok(same and info["reused"] and info["offloads"] > 0,
       "GPT at length 12: a plan made at 16 (traced with a symbolic length) runs it with "
       "its %d offloads, bit for bit (reused %s, sizes %s)"
       % (info["offloads"], info["reused"], info["sizes"]), "first difference: %s" % where)

    # the plan cache: the same settings find the plan, another bandwidth not
    kw = dict(budget=at(0.4), strategy="dtr-offload", time_limit=3)
    again = remat(gpt, batches[0][0], offload=FAST, **kw).plan_info
    other = remat(gpt, batches[0][0], offload=dict(FAST, bandwidth="10MB/s"), **kw).plan_info
    ok(again["cached"] and not other["cached"] and again["offloads"] == at16["offloads"],
       "the plan cache: the same copy settings find the plan (cached %s, %d offloads), "
       "another bandwidth solves (cached %s, %d offloads)"
       % (again["cached"], again["offloads"], other["cached"], other["offloads"]))

    # a host budget: half the host memory the plan above took
    cap = other["host_peak"] // 2 if other["host_peak"] else info["host_peak"] // 2
    try:
        capped = remat(gpt, batches[0][0], offload=dict(FAST, host_budget=cap), **kw)
        got = capped.plan_info
        same, where = compare(gpt, capped, short[:1], lm_loss(64), "adamw")
        text = "host peak %s, %d offloads" % (got["host_peak"], got["offloads"])
    except RematError as e:
        got, same, where, text = {}, False, None, str(e)
    ok(same and got.get("offloads") and got["host_peak"] <= cap,
       "host_budget=%d: the plan's host peak within it, bit for bit (%s)" % (cap, text),
       "first difference: %s" % where)

    # partly absent tangents: the interpreter runs the backward
    torch.manual_seed(0)
    two = TwoHeads()
    xs = [((torch.randn(16, 32),), {}) for _ in range(3)]
    m2 = remat(two, xs[0][0], budget=at(0.4), offload=FAST, strategy="dtr-offload")
    same, where = compare(two, m2, xs, lambda out: out[0].sum())
    ok(same and m2.plan_info["offloads"] > 0,
       "two outputs, the loss of one: %d offloads, bit for bit" % m2.plan_info["offloads"],
       "first difference: %s" % where)

    hugging_face()
    on_cuda()
    plan_file()
    fetched_output()
    lowering_errors()
    settings_errors()


def hugging_face():
    try:
        import transformers as tf
    except ImportError:
        print("# transformers does not import here (build/venv-torch2 has it): "
              "no Hugging Face models")
        return
    tf.logging.set_verbosity_error()
    import t_hf
    vocab = t_hf.VOCAB

    class Logits(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids=input_ids, use_cache=False).logits
    builds = {"HF " + k: v for k, v in t_hf.configs(tf).items() if k in ("GPT-2", "Llama")}
    for name, build in builds.items():
        torch.manual_seed(0)
        model = Logits(build())
        model.train()
        batches = lm_batches(vocab, 2, 16, 3)
        trains(name, model, batches[0], batches, lm_loss(vocab), optimizer="adamw")


def on_cuda():
    if not torch.cuda.is_available():
        print("# no CUDA device here: the copy stream's checks run where there is one")
        return
    from checkmate_torch.measure import step_peak
    torch.manual_seed(0)
    gpt = GPT(vocab=64, d=64, heads=4, layers=2, context=64, dropout=0.1).cuda()
    g = torch.Generator().manual_seed(0)
    batches = [((torch.randint(0, 64, (4, 64), generator=g).cuda(),), {}) for _ in range(3)]
    loss_of = lm_loss(64)
    if not compare(gpt, gpt, batches, loss_of, "adamw")[0]:
        print("# two ordinary CUDA runs differ (a kernel that is not deterministic): "
              "no bit-for-bit check on CUDA")
        return
    m = remat(gpt, batches[0][0], budget=at(0.4), offload=FAST, strategy="dtr-offload")
    same, where = compare(gpt, m, batches, loss_of, "adamw")
    ok(same and m.plan_info["offloads"] > 0, "GPT on CUDA: %d offloads on the copy stream, "
       "3 steps bit for bit" % m.plan_info["offloads"], "first difference: %s" % where)
    info = m.plan_info
    for p in gpt.parameters():
        p.grad = torch.zeros_like(p)
    args = batches[0][0]

    def step():
        loss_of(m(*args)).backward()
    step()
    peak = step_peak(step, "cuda")["peak"]
    parts = info["fixed_memory_parts"]
    act = info["peak"] - info["fixed_memory"] + parts["rng_states"] + parts["snapshots"]
    with torch.no_grad():
        out_bytes = m(*args).numel() * 4
    allowance = max(p.numel() * p.element_size() for p in gpt.parameters()) + 2 * out_bytes
    ok(peak <= act + allowance, "GPT on CUDA: the allocator's peak %d <= the plan's activations "
       "%d + allowance %d" % (peak, act, allowance))


RUN_MODEL = """import torch
from torch import nn


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(
        nn.Linear(64, 256), nn.GELU(), nn.Dropout(0.1), nn.Linear(256, 64), nn.LayerNorm(64))
        for _ in range(3)])
"""


def plan_file():
    """A plan file with copies, replayed by `run`."""
    from checkmate_torch.binary import find_checkmate
    binary = find_checkmate()
    with tempfile.TemporaryDirectory(prefix="checkmate-offload-") as d:
        g, p = os.path.join(d, "g.json"), os.path.join(d, "p.json")
        spec = os.path.join(d, "model.py") + ":mlp"
        with open(spec[:-4], "w") as f:
            f.write(RUN_MODEL)
        st, _, err = cli(["export", spec, "--batch", "16", "--input", "64", "-o", g])
        with open(g) as f:
            doc = json.load(f)
        budget = doc["fixed_memory"] + (max(n["memory"] for n in doc["nodes"]) * 5)
        q = subprocess.run([binary, "solve", g, "--budget", str(budget), "--bandwidth", "1GB/s",
                            "--rate", "1GFLOP/s", "--strategy", "dtr-offload", "--plan", p,
                            "--quiet"], capture_output=True, text=True)
        steps = json.load(open(p))["steps"] if q.returncode == 0 else []
        copies = sum(1 for s in steps if s["op"] in ("offload", "fetch"))
        st, out, err = cli(["run", spec, p, "--batch", "16", "--input", "64", "--json"])
        try:
            rep = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            rep = {}
    ok(st == 0 and copies > 0 and rep.get("gradients_ok") and
       rep.get("peak_measured") == rep.get("peak_plan"),
       "run replays a plan file with %d copies: gradients equal the training step's, live "
       "bytes %s = the plan's %s" % (copies, rep.get("peak_measured"), rep.get("peak_plan")),
       err or q.stderr)


class Returns(nn.Module):
    """Returns an early activation beside its result: a plan may offload
    it and fetch it back before the forward ends."""

    def __init__(self, d=32):
        super().__init__()
        self.a = nn.Linear(d, 2 * d)
        self.m = MLP(2, d).m

    def forward(self, x):
        h = torch.tanh(self.a(x))
        return self.m(x), h


def fetched_output():
    """A hand-made plan that offloads a returned value after its compute
    and fetches it back at the forward's end, against checkpoint-all's, by
    the interpreter on the emulated stream: outputs and gradients equal
    (the forward's last wait is for that fetch)."""
    from checkmate_torch.execute import Interpreter
    torch.manual_seed(0)
    model, x = Returns(), torch.randn(8, 32)
    m = remat(model, (x,), budget=at(1.0), strategy="checkpoint-all")
    a = m._last.analysis
    early = a.outputs[1]
    plain = a.in_order_steps()
    at_end = next(k for k, (op, r) in enumerate(plain) if op == "compute" and r is a.tangents)
    steps = []
    for k, (op, r) in enumerate(plain):
        if k == at_end:
            steps.append(("fetch", early))
        steps.append((op, r))
        if op == "compute" and r is early:
            steps += [("offload", early), ("free", early)]
    tensors = [t.detach() for t in list(model.parameters()) + list(model.buffers())] + [x]

    def run(plan):
        it = Interpreter(Lowered(a, *split_at_tangents(a, plan)))
        with kept_rng(tensors), torch.no_grad():
            outs, state = it.forward(tensors)
            outs = [o.clone() for o in outs]
            grads = it.backward(state, [torch.ones_like(o) for o in outs],
                                [None] * len(a.grads))
        return outs + [g for g in grads if g is not None]
    got, want = run(steps), run(plain)
    ok(len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want)),
       "a returned value offloaded and fetched at the forward's end: outputs and gradients "
       "equal checkpoint-all's")


def lowering_errors():
    """Steps that copy wrongly: a PlanError naming the step."""
    torch.manual_seed(0)
    m = remat(MLP(2, 16), (torch.randn(4, 16),), budget=at(1.0), strategy="checkpoint-all")
    a = m._last.analysis
    first = a.real[0]
    user = next(r for r in a.real if first in a.deps[r])

    def lowered(steps):
        try:
            Lowered(a, *split_at_tangents(a, resolve(a, steps)))
        except PlanError as e:
            return str(e)
        return "no error"
    c, f, o, g = ({"op": op, "node": first.name} for op in ("compute", "free", "offload", "fetch"))
    cases = [
        ("a fetch with no host copy", [c, f, g], "step 2: fetch '%s': no host copy"
         % first.name),
        ("an offload of a value not resident", [o], "step 0: offload '%s': not resident"
         % first.name),
        ("a second offload", [c, o, o], "step 2: offload '%s': it has a host copy already"
         % first.name),
        ("a fetch of a resident value", [c, o, g], "step 2: fetch '%s': already resident"
         % first.name),
        ("a compute reading a value on the host only", [c, o, f, {"op": "compute",
                                                                  "node": user.name}],
         "step 3: compute '%s': input '%s' is on the host, not resident: fetch it first"
         % (user.name, first.name)),
        ("a free of a value on neither side", [c, o, f, f, f], "step 4: free '%s': not "
         "resident" % first.name),
    ]
    for what, steps, want in cases:
        got = lowered(steps)
        ok(got == want, "lowering refuses %s: %s" % (what, got), "want: %s" % want)


def settings_errors():
    x = torch.randn(4, 16)
    cases = [
        ("cost='flops' without a rate", dict(offload="25GB/s"), "needs the device's rate"),
        ("a bandwidth that is no size", dict(offload="fast"), "offload's bandwidth must be"),
        ("a rate that is no rate", dict(offload={"bandwidth": "1GB/s", "rate": "quick"}),
         "offload's rate must be"),
        ("an unknown key", dict(offload={"bandwidth": "1GB/s", "latency": 1}),
         "offload takes bandwidth, rate and host_budget"),
        ("compile=True", dict(offload=FAST, compile=True), "compile=False only"),
    ]
    for what, kw, want in cases:
        try:
            remat(MLP(2, 16), (x,), budget=at(0.5), **kw)
            got = "no error"
        except RematError as e:
            got = str(e)
        ok(want in got and "\n" not in got, "remat refuses %s in one line: %s" % (what, got))
    # offload=True: the device's bandwidth, measured
    try:
        m = remat(MLP(2, 16), (x,), budget=at(0.5), offload=True, cost="time",
                  strategy="dtr-offload")
        bw = m.plan_info["bandwidth"]
    except RematError as e:
        bw = str(e)
    ok(bw.endswith("B/s") and int(bw[:-3]) > 0 and len(bw[:-3].rstrip("0")) <= 2,
       "offload=True: the bandwidth measured once, two significant digits: %s" % bw)
    # with measured times the costs are milliseconds: no rate needed
    torch.manual_seed(0)
    model = MLP(2, 16)
    try:
        m = remat(model, (x,), budget=at(0.5), offload="1GB/s", cost="time",
                  strategy="dtr-offload")
        same, where = compare(model, m, [((torch.randn(4, 16),), {})] * 2, lambda loss: loss)
        got = "cost unit %s, %d offloads" % (m.plan_info["cost_unit"], m.plan_info["offloads"])
    except RematError as e:
        same, where, got = False, None, str(e)
    ok(same, "cost='time' with offload='1GB/s' trains bit for bit (%s)" % got,
       "first difference: %s" % where)


main()
finish()

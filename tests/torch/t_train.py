#!/usr/bin/python3
"""Training under a plan equals ordinary training (checkmate_torch.remat).

Usage: PYTHON tests/torch/t_train.py [CHECKMATE_BINARY]   (from anywhere)
For each model, 10 steps of SGD with momentum and 10 of Adam, the loss
written outside the module, at the least budget of fixed memory + 45, 50, 60 or 75% of the
activation memory that has a plan: every step's loss, the final
parameters and buffers, and the generator state must equal those of an
ordinary training loop from the same seed, bit for bit (the plan runs the
same ATen ops on one thread). One step of each is measured: the module's
peak live bytes must be below the ordinary step's and at most the plan's
peak plus the allowance explained in docs/torch.md. Prints TAP and ends
with "N passed, M failed"; on a torch remat does not support, one line
checks that it says so."""
import copy
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402


def models():
    """(name, builder, make_batch(batch, gen) -> (args, kwargs, target), loss(out, target))."""
    import torch
    from torch.nn import functional as F
    from checkmate_torch.examples import gpt, inplace, residual, transformer

    def images(shape, classes):
        def make(batch, gen):
            return ((torch.randn([batch] + shape, generator=gen),), {},
                    torch.randint(0, classes, (batch,), generator=gen))
        return make

    def tokens(batch, gen):
        ids = torch.randint(0, 256, (batch, 16), generator=gen)
        mask = torch.ones(batch, 16, dtype=torch.bool)
        mask[0, 12:] = False  # right padding in the first sequence
        return (ids,), {"attention_mask": mask}, torch.roll(ids, -1, 1)

    def seq(batch, gen):
        return (torch.randn(batch, 16, 64, generator=gen),), {}, None

    out = []
    out += [
        ("ResNet-style CNN (batch norm, residual)", residual.Residual, images([3, 32, 32], 10),
         lambda o, y: F.cross_entropy(o, y)),
        ("encoder with dropout", transformer.encoder_dropout, seq,
         lambda o, y: o.pow(2).mean()),
        ("gpt (ids, mask, cross-entropy)", gpt.gpt, tokens,
         lambda o, y: F.cross_entropy(o.reshape(-1, o.shape[-1]), y.reshape(-1))),
        ("in-place ops, dict output", inplace.model, images([3, 32, 32], 10),
         lambda o, y: F.cross_entropy(o["logits"], y) + o["features"].mean()),
    ]
    return out


def optimizers():
    import torch
    return [("SGD momentum", lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9)),
            ("Adam", lambda ps: torch.optim.Adam(ps, lr=1e-3))]


def train(module, params, make_opt, batches, loss_fn):
    """Ten steps from seed 123: (losses, generator states after: the CPU's
    and, on a GPU, the device's)."""
    import torch
    opt = make_opt(params)
    torch.manual_seed(123)
    losses = []
    for args, kwargs, y in batches:
        opt.zero_grad()
        loss = loss_fn(module(*args, **kwargs), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach().clone())
    states = [torch.get_rng_state()]
    if torch.cuda.is_available():
        states.append(torch.cuda.get_rng_state())
    return losses, states


def same_state(a, b, device):
    """(every parameter and buffer equal, name of the first that is not)."""
    for (n, x), (_, y) in zip(list(a.named_parameters()) + list(a.named_buffers()),
                              list(b.named_parameters()) + list(b.named_buffers())):
        if not equal(x, y, device):
            return False, n
    return True, None


def budget_for(frac):
    return lambda fixed, peak: fixed + int((peak - fixed) * frac)


def to(batch, device):
    args, kwargs, y = batch
    move = lambda t: t.to(device) if t is not None else None
    return tuple(map(move, args)), {k: move(v) for k, v in kwargs.items()}, move(y)


def equal(a, b, device):
    """Bitwise on the CPU; on a GPU, whose kernels need not be
    deterministic, within a relative 1e-5."""
    import torch
    if a.shape != b.shape:
        return False
    if device == "cpu" or not a.is_floating_point():
        return torch.equal(a, b)
    return torch.allclose(a, b, rtol=1e-5, atol=1e-6)


def equivalence(name, build, make_batch, loss_fn, device="cpu"):
    import torch
    from checkmate_torch import remat
    from checkmate_torch.solve import SolveError
    gen = torch.Generator().manual_seed(7)
    batches = [to(make_batch(3, gen), device) for _ in range(9)] + \
        [to(make_batch(2, gen), device)]
    torch.manual_seed(0)
    base = build().to(device)
    base.train()
    example = batches[0]
    m = None
    for frac in (0.45, 0.5, 0.6, 0.75):
        try:
            m = remat(copy.deepcopy(base), example[0], example[1], budget=budget_for(frac),
                      time_limit=5)
            break
        except SolveError as e:
            why = e
    if not ok(m is not None, "%s: a plan at fixed memory + %d%% of the activations (the "
              "least of 45, 50, 60, 75%% that has one)" % (name, frac * 100),
              None if m is not None else why):
        return None
    info = m.plan_info
    ok(info["peak"] <= info["budget"] and info["cost"] >= info["checkpoint_all_cost"]
       and info["fixed_memory"] < info["budget"] < info["checkpoint_all_peak"],
       "%s: plan_info: peak %d <= budget %d < checkpoint-all peak %d, overhead %.4f"
       % (name, info["peak"], info["budget"], info["checkpoint_all_peak"], info["overhead"]),
       info)
    for oname, make_opt in optimizers():
        # The same module (and its plans) for both optimizers, reset to
        # the initial weights and buffers.
        plain = copy.deepcopy(base)
        planned = m
        planned.model.load_state_dict(base.state_dict())
        for p in planned.parameters():
            p.grad = None
        want, rng_want = train(plain, list(plain.parameters()), make_opt, batches, loss_fn)
        got, rng_got = train(planned, list(planned.model.parameters()), make_opt, batches,
                             loss_fn)
        ok(all(equal(a, b, device) for a, b in zip(got, want)),
           "%s, %s: 10 losses equal an ordinary loop's (last batch of 2 on a plan of its "
           "own), bitwise" % (name, oname),
           "got %s\nwant %s" % ([x.item() for x in got], [x.item() for x in want]))
        same, which = same_state(planned.model, plain, device)
        ok(same, "%s, %s: parameters and buffers after 10 steps equal, bitwise" % (name, oname),
           which)
        ok(all(torch.equal(a, b) for a, b in zip(rng_got, rng_want)),
           "%s, %s: generator states after 10 steps equal"
           % (name, oname))
    ok(len(planned._plans) == 2, "%s: two plans cached (batch 3 and the last batch of 2)" % name)
    planned.eval()
    with torch.no_grad():
        e1 = planned(*example[0], **example[1])
        plain.eval()
        e2 = plain(*example[0], **example[1])
    flat = lambda o: list(o.values()) if isinstance(o, dict) else [o]
    ok(all(torch.equal(a, b) for a, b in zip(flat(e1), flat(e2))),
       "%s: eval mode runs the model itself" % name)
    return plain, planned, example


def memory(name, plain, planned, example, loss_fn, device="cpu"):
    """One step of each, with gradients allocated beforehand (the graph
    counts them as fixed memory)."""
    import torch
    from checkmate_torch.measure import step_peak
    results = {}
    planned.train()
    plain.train()
    for kind, module, model in (("ordinary", plain, plain), ("plan", planned, planned.model)):
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
        args, kwargs, y = example

        def step():
            loss_fn(module(*args, **kwargs), y).backward()
        step()  # warm-up (lazy initialisations)
        r = step_peak(step, device)
        # on a GPU: torch.cuda.max_memory_allocated, workspaces included
        results[kind] = r["between_ops"] if device == "cpu" else r["peak"]
    info = planned.plan_info
    act_ca = info["checkpoint_all_peak"] - info["fixed_memory"]
    # The generator states kept for recomputes and the snapshots of the
    # buffers the step writes are fixed memory in the graph but are
    # allocated during the step.
    parts = info["fixed_memory_parts"]
    act_plan = info["peak"] - info["fixed_memory"] + parts["rng_states"] + parts["snapshots"]
    with torch.no_grad():
        out = planned(*example[0], **example[1])
    flat = list(out.values()) if isinstance(out, dict) else [out]
    out_bytes = sum(t.numel() * t.element_size() for t in flat)
    max_param = max(p.numel() * p.element_size() for p in plain.parameters())
    allowance = max_param + 2 * out_bytes
    ok(results["plan"] < results["ordinary"],
       "%s: measured peak between ops under the plan %d < ordinary step %d (graph: %d < %d)"
       % (name, results["plan"], results["ordinary"], act_plan, act_ca))
    ok(results["plan"] <= act_plan + allowance,
       "%s: measured %d <= plan's activations %d + allowance %d (largest parameter %d, "
       "outputs twice %d)" % (name, results["plan"], act_plan, allowance, max_param,
                               2 * out_bytes))


def cumulative_batch_norm():
    """BatchNorm(momentum=None), whose momentum is 1 / num_batches_tracked:
    three steps under a recomputing plan leave the same parameters, running
    statistics and counts as three ordinary steps."""
    import torch
    from torch import nn
    from checkmate_torch import remat
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8, momentum=None),
                        nn.ReLU(inplace=True), nn.Conv2d(8, 8, 3, padding=1),
                        nn.BatchNorm2d(8, momentum=None), nn.ReLU(), nn.Flatten(),
                        nn.Linear(8 * 8 * 8, 4))
    plain = copy.deepcopy(net)
    x = torch.randn(4, 3, 8, 8)
    m = remat(net, (x,), budget=budget_for(0.6), strategy="dtr")
    for mod in (plain, m):
        gen = torch.Generator().manual_seed(1)
        for _ in range(3):
            mod(torch.randn(4, 3, 8, 8, generator=gen)).pow(2).mean().backward()
    same, which = same_state(net, plain, "cpu")
    ok(same and m.plan_info["computes"] > m.plan_info["nodes"] and net[1].momentum is None,
       "BatchNorm(momentum=None): 3 steps under a plan that recomputes (%d computes of %d "
       "nodes) equal 3 ordinary steps, bitwise" % (m.plan_info["computes"],
                                                   m.plan_info["nodes"]), which)


def copies():
    """A remat module after a step can be deep-copied and saved whole
    (torch.save, torch.load): the copy makes its own plans and trains as
    the original does, bitwise; the original is left as it was."""
    import io
    import torch
    from torch import nn
    from checkmate_torch import remat
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.2),
                        nn.Linear(16, 3))
    x = torch.randn(8, 6)
    m = remat(net, (x,), budget="100%", strategy="checkpoint-all", cache=False)
    m(x).pow(2).mean().backward()
    m(torch.randn(6, 6)).pow(2).mean().backward()   # a plan with a symbolic batch
    c = copy.deepcopy(m)
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    runs = []
    for mod in (m, c, loaded):
        torch.manual_seed(5)
        mod.zero_grad()
        loss = mod(x).pow(2).mean()
        loss.backward()
        runs.append([loss.detach()] + [p.grad.clone() for p in mod.parameters()] +
                    [b.clone() for b in mod.buffers()])
    same = all(len(r) == len(runs[0]) and all(torch.equal(a, b) for a, b in zip(r, runs[0]))
               for r in runs[1:])
    ok(same and c.model is not m.model and c._plans and c._last is not m._last
       and m._families and not c._families and not loaded._families,
       "a remat module copied (copy.deepcopy) and saved whole (torch.save, torch.load) "
       "after steps at two batch sizes: each copy plans anew and its next step equals the "
       "original's, bitwise")


def readme_example():
    """The README's training example runs as printed (from the repository
    root, with this python and this binary)."""
    import re
    import subprocess
    text = open(os.path.join(ROOT, "README.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    if not ok(len(blocks) == 1, "README has one python example"):
        return
    p = subprocess.run([sys.executable, "-"], input=blocks[0], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    ok(p.returncode == 0 and len(p.stdout.split()) == 3,
       "the README's training example runs: %s" % p.stdout.strip(), p.stderr)


def main():
    sys.path.insert(0, ROOT)
    torch = torch_setup()
    remat_or_finish()
    for name, build, make_batch, loss_fn in models():
        r = equivalence(name, build, make_batch, loss_fn)
        if r is not None:
            memory(name, r[0], r[1], r[2], loss_fn)
    cumulative_batch_norm()
    copies()
    readme_example()
    if torch.cuda.is_available():
        for name, build, make_batch, loss_fn in models():
            r = equivalence(name + " on cuda", build, make_batch, loss_fn, "cuda")
            if r is not None:
                memory(name + " on cuda", r[0], r[1], r[2], loss_fn, "cuda")
    else:
        print("# no CUDA device: the GPU runs are skipped")
    finish()


if __name__ == "__main__":
    main()

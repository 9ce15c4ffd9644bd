#!/usr/bin/python3
"""Every way remat was found to change a result or to refuse common code
(issue 37), as a model of a few lines: three steps under a plan that
recomputes equal three ordinary steps bitwise (losses, outputs,
parameters, .grad with None kept None, buffers, generator state), or the
model is refused with one clear line. Also: bf16 autocast on GPT- and
Llama-style models, DDP on two gloo processes, and the errors.

Usage: PYTHON tests/torch/t_causes.py [CHECKMATE_BINARY]. Prints TAP and
ends with "N passed, M failed"."""
import copy
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tap import finish, ok, remat_or_finish, torch_setup  # noqa: E402

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import checkmate_torch  # noqa: E402
from checkmate_torch.solve import SolveError  # noqa: E402
from checkmate_torch.trace import TraceError, trace  # noqa: E402
from checkmate_torch.train import RematError  # noqa: E402


def flat(out):
    return [t for t in torch.utils._pytree.tree_flatten(out)[0] if isinstance(t, torch.Tensor)]


def default_loss(out, step):
    return flat(out)[0].float().pow(2).mean()


def train(model, planned, make_inputs, loss_fn, steps, autocast, optimizer="sgd"):
    """steps steps of SGD with momentum (or AdamW) from seed 1, .grad
    zeroed in place (so that a plan adds into it): what a comparison
    needs."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimizer == "sgd" \
        else torch.optim.AdamW(model.parameters(), lr=1e-3)
    torch.manual_seed(1)
    losses, outs = [], []
    for step in range(steps):
        args, kwargs = make_inputs(step)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            out = planned(*args, **kwargs)
        loss = loss_fn(out, step)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        outs += [t.detach().clone() for t in flat(out)]
    grads = [p.grad for p in model.parameters()]
    state = list(model.parameters()) + list(model.buffers())
    return {"losses": losses, "outputs": outs, "grads": grads, "state": state,
            "rng": [torch.get_rng_state()]}


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)


def difference(want, got):
    """The first item that differs, or None."""
    for k in ("losses", "outputs", "grads", "state", "rng"):
        if len(want[k]) != len(got[k]):
            return "%s: %d against %d" % (k, len(got[k]), len(want[k]))
        for i, (a, b) in enumerate(zip(want[k], got[k])):
            if not _same(a, b):
                return "%s[%d] differs" % (k, i)
    return None


def plan(model, make_inputs, autocast=False, fracs=(0.4, 0.6, 0.8, 1.0)):
    """remat at the smallest of fixed + frac x activations that has a
    plan."""
    args, kwargs = make_inputs(0)
    err = None
    for frac in fracs:
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                return checkmate_torch.remat(
                    model, args, kwargs, strategy="dtr", time_limit=5,
                    budget=lambda fixed, peak: fixed + int((peak - fixed) * frac))
        except SolveError as e:
            err = e
    raise err


def same_training(what, build, make_inputs, loss_fn=default_loss, steps=3, autocast=False,
                  plan_autocast=None, optimizer="sgd", hooks=lambda m: None):
    """ok() that training under a plan equals ordinary training; hooks(m)
    registers hooks on each copy (deepcopy drops tensor hooks)."""
    torch.manual_seed(0)
    base = build()
    plain = copy.deepcopy(base)
    hooks(plain)
    want = train(plain, plain, make_inputs, loss_fn, steps, autocast, optimizer)
    model = copy.deepcopy(base)
    hooks(model)
    try:
        m = plan(model, make_inputs, autocast if plan_autocast is None else plan_autocast)
        got = train(model, m, make_inputs, loss_fn, steps, autocast, optimizer)
    except Exception as e:  # a refusal or a crash fails this line
        return ok(False, what, "%s: %s" % (type(e).__name__, e))
    info = m.plan_info
    diff = difference(want, got)
    return ok(diff is None,
              "%s: %d steps equal ordinary ones bitwise (plan: %d computes of %d nodes)"
              % (what, steps, info["computes"], info["nodes"]), diff)


def refused(what, build, make_inputs, words, **kw):
    """ok() that remat refuses the model with one line containing words."""
    torch.manual_seed(0)
    try:
        plan(build(), make_inputs, **kw)
    except Exception as e:
        msg = str(e)
        return ok(all(w in msg for w in words) and "\n" not in msg,
                  "%s: refused in one line: %s" % (what, msg), "%s: %s" % (type(e).__name__, e))
    return ok(False, "%s: refused" % what, "accepted")


def x3d(step, shape=(4, 6, 16)):
    g = torch.Generator().manual_seed(100 + step)
    return (torch.randn(*shape, generator=g),), {}


class Module(nn.Module):
    """A module whose forward is a function of (self, inputs...)."""

    def __init__(self, forward, **parts):
        super().__init__()
        self._f = forward
        for k, v in parts.items():
            if isinstance(v, torch.Tensor) and not isinstance(v, nn.Parameter):
                self.register_buffer(k, v)
            else:
                setattr(self, k, v)

    def forward(self, *args):
        return self._f(self, *args)


def lin(n=16, m=16):
    return nn.Linear(n, m)


def strides():
    def bnt():
        return Module(lambda s, x: F.elu(s.bn(s.a(x).transpose(1, 2)).transpose(1, 2)),
                      a=lin(), bn=nn.BatchNorm1d(16))
    same_training("1. strides: BatchNorm1d on a transposed input, then elu", bnt, x3d)
    torch.manual_seed(0)
    n = plan(bnt(), x3d).plan_info["stride_corrections"]
    ok(n >= 1, "1. strides: the check corrects the traced strides of that BatchNorm "
       "(%d call traced again)" % n)
    same_training("1. strides: hardtanh after a transposed BatchNorm, reshaped",
                  lambda: Module(lambda s, x: F.hardtanh(
                      s.bn(s.a(x).transpose(1, 2))).transpose(1, 2).reshape(4, -1),
                      a=lin(), bn=nn.BatchNorm1d(16)), x3d)


def effects():
    def bn_unused(s, x):
        h = s.a(x)
        s.bn(h.reshape(-1, 16))
        return h.tanh()
    same_training("2. a BatchNorm whose output is unused updates its statistics",
                  lambda: Module(bn_unused, a=lin(), bn=nn.BatchNorm1d(16)), x3d)

    def drop_unused(s, x):
        h = s.a(x)
        F.dropout(h, 0.5)
        return F.dropout(h.tanh(), 0.3)
    same_training("2. an unused dropout advances the generator",
                  lambda: Module(drop_unused, a=lin()), x3d)


def buffers():
    def read_before_write(s, x):
        x = x * (1 + s.n)
        h = s.a(x).tanh()
        s.n += 1
        return h
    same_training("3. a buffer read before its in-place write",
                  lambda: Module(read_before_write, a=lin(), n=torch.zeros(())), x3d)

    def mean_before_bn(s, x):
        h = s.a(x).reshape(-1, 16)
        h = h - s.bn.running_mean
        return s.bn(h).tanh()
    same_training("3. bn.running_mean read before the BatchNorm runs",
                  lambda: Module(mean_before_bn, a=lin(), bn=nn.BatchNorm1d(16)), x3d)

    def out_arg(s, x):
        torch.add(s.n, 1, out=s.n)
        return s.a(x).tanh() * s.n
    same_training("4. torch.add(s.n, 1, out=s.n)",
                  lambda: Module(out_arg, a=lin(), n=torch.zeros(())), x3d)

    def returned(s, x):
        s.n += 1
        return s.a(x).tanh(), s.n
    same_training("4. a buffer returned after s.n += 1",
                  lambda: Module(returned, a=lin(), n=torch.zeros(())), x3d)


def gradients():
    same_training("5. a parameter whose output the loss ignores keeps .grad None",
                  lambda: Module(lambda s, x: (s.a(x).tanh(), s.b(x)), a=lin(), b=lin()), x3d)

    def hooks(m):
        m.u.register_hook(lambda g: g * 2)
        m.a.weight.register_hook(lambda g: g * 0.5)
    same_training("5. hooks, one on a parameter the forward never uses",
                  lambda: Module(lambda s, x: s.a(x).tanh(), a=lin(),
                                 u=nn.Parameter(torch.ones(3))), x3d, hooks=hooks)

    same_training("5. a hook on a parameter only an output the loss ignores reaches",
                  lambda: Module(lambda s, x: (s.a(x).tanh(), s.b(x)), a=lin(), b=lin()), x3d,
                  hooks=lambda m: m.b.weight.register_hook(lambda g: g * 2))

    def images(step):
        g = torch.Generator().manual_seed(step)
        return (torch.randn(3, 3, 5, 6, generator=g),), {}

    def conv(n=8):
        return nn.Conv2d(3, n, 1)
    same_training("5. an activation returned as an output the loss ignores, and read on",
                  lambda: Module(lambda s, x: (lambda h: (s.n(h.permute(0, 2, 3, 1)), h))(s.c(x)),
                                 c=conv(), n=nn.LayerNorm(8)), images)

    # A side output whose gradient reads a tensor written in place after
    # it: an ordinary loop trains while its loss leaves the side output
    # out, and fails in backward where it uses it; so does the plan
    def side_then_write(s, x):
        h = s.a(x) * 1
        side = s.b(h)
        h[:, 0] = 0
        return s.c(torch.tanh(h)), side
    same_training("5. a side output the loss ignores, computed before an in-place write",
                  lambda: Module(side_then_write, a=lin(), b=lin(), c=lin()), x3d)
    torch.manual_seed(0)
    what = "5. a loss that uses that side output: the backward fails, as an ordinary one"
    try:
        m = plan(Module(side_then_write, a=lin(), b=lin(), c=lin()), x3d)
        sum(o.sum() for o in m(*x3d(0)[0])).backward()
        ok(False, what)
    except RematError as e:
        ok("modified by an inplace operation" in str(e) and "\n" not in str(e),
           "%s: %s" % (what, e))
    except Exception as e:  # a refusal at remat(), or another error
        ok(False, what, "%s: %s" % (type(e).__name__, e))

    def permuted_loss(out, step):
        w = torch.randn(out.shape[0], out.shape[2], out.shape[3], out.shape[1],
                        generator=torch.Generator().manual_seed(step))
        return (out.permute(0, 2, 3, 1) * w).sum()
    same_training("5. an output gradient with other strides than the output's",
                  lambda: Module(lambda s, x: s.d(s.c(x).relu()), c=conv(), d=nn.Conv2d(8, 16, 1)),
                  images, permuted_loss)

    def thrice_loss(out, step):
        return out[0].sum() * 0.3 + out[1].pow(2).mean() + out[2].mean()
    same_training("5. one tensor returned three times",
                  lambda: Module(lambda s, x: (lambda h: (h, h, h))(s.a(x).tanh()), a=lin()),
                  x3d, thrice_loss)


def refusals_gone():
    same_training("6. in-place ReLU right after a Linear on a 3-d input",
                  lambda: Module(lambda s, x: s.b(F.relu(s.a(x), inplace=True)),
                                 a=lin(), b=lin()), x3d)
    same_training("6. a BatchNorm module called twice",
                  lambda: Module(lambda s, x: s.bn(s.a(s.bn(x.reshape(-1, 16)))),
                                 a=lin(), bn=nn.BatchNorm1d(16)), x3d)

    def ema(s, x):
        h = s.a(x)
        with torch.no_grad():
            s.m.mul_(0.9).add_(h.detach().mean(dim=(0, 1)) * 0.1)
        return h.tanh() + s.m
    same_training("6. an EMA buffer: buf.mul_(a).add_(b) from an activation",
                  lambda: Module(ema, a=lin(), m=torch.zeros(16)), x3d)

    def setitem(s, x):
        t = s.a(x).tanh() * 1
        t[:, 0] = 0.5
        return t * 2
    same_training("6. t[:, 0] = ...", lambda: Module(setitem, a=lin()), x3d)

    # A write through a view while other views of the same value, taken
    # before it, are read after it: they see the written values.
    def view_read_after(s, x):
        h = s.a(x).tanh() * 1
        flat, tr = h.view(-1, 16), h.transpose(1, 2)
        h[:, 0] = 0.5
        return flat.sum(0) * tr.mean(1).sum()
    same_training("6. h[:, 0] = ... while h.view() and h.transpose() taken before are read after",
                  lambda: Module(view_read_after, a=lin()), x3d)

    def nested_view_write(s, x):
        h = s.a(x).tanh() * 1
        rows = h[:, 1:]
        col = rows.transpose(1, 2)[0]
        h[:, 1:][:, :, 0].mul_(3)
        return (rows.tanh() * col.sum()).sum(1, keepdim=True) + h
    same_training("6. a write through a view of a view while views of it are read after",
                  lambda: Module(nested_view_write, a=lin()), x3d)

    # The kernel gives the norm's output other strides than the trace: the
    # strides check must see through write_through (a correction found
    # past it, on the residual add, once trained another model)
    def bnt_write(s, x):
        h = s.bn(s.a(x).transpose(1, 2)).transpose(1, 2)
        h[:, 0] = 0
        return h + s.b(torch.relu(s.a2(h)))
    same_training("6. h[:, 0] = 0 on a transposed BatchNorm's output, then read",
                  lambda: Module(bnt_write, a=lin(), bn=nn.BatchNorm1d(16, affine=False),
                                 a2=lin(), b=lin()), x3d)

    # ... and where the trace's view of it (reshape) is a copy for the
    # kernel's strides: the strides check's run of the plan cannot take
    # that view, and stops there with the correction it found
    def bnt_flat_write(s, x):
        h = s.bn(s.a(x).transpose(1, 2)).transpose(1, 2)
        f = h.reshape(h.shape[0], -1)
        f[:, 0] = 0
        return f.tanh()
    same_training("6. a write into a reshape of a transposed BatchNorm's output",
                  lambda: Module(bnt_flat_write, a=lin(), bn=nn.BatchNorm1d(16)), x3d)

    def ids(step):
        return (torch.randint(0, 10, (4, 6), generator=torch.Generator().manual_seed(step)),), {}
    same_training("6. Embedding(max_norm=1.0)",
                  lambda: Module(lambda s, i: s.a(s.e(i)).tanh(),
                                 e=nn.Embedding(10, 16, max_norm=1.0), a=lin()), ids)
    same_training("6. repeat_interleave(2, -1)",
                  lambda: Module(lambda s, x: s.a(x).repeat_interleave(2, -1).tanh(), a=lin()),
                  x3d)
    same_training("6. empty_like(x).bernoulli_(p)",
                  lambda: Module(lambda s, x: (lambda h: h * torch.empty_like(h).bernoulli_(0.7))(
                      s.a(x).tanh()), a=lin()), x3d)


def autocast():
    from checkmate_torch.examples import gpt, llm

    def tokens(step):
        g = torch.Generator().manual_seed(step)
        ids = torch.randint(0, 256, (4, 16), generator=g)
        mask = torch.ones(4, 16, dtype=torch.bool)
        mask[0, 12:] = False
        return (ids,), {"attention_mask": mask}

    def ce(out, step):
        ids = tokens(step)[0][0]
        return F.cross_entropy(out[:, :-1].reshape(-1, out.shape[-1]).float(),
                               ids[:, 1:].reshape(-1))

    class LlamaLM(nn.Module):
        """Token ids and a padding mask in, logits out: llm.py's Llama
        blocks (RMSNorm, rotary embeddings, SwiGLU) between an embedding
        and a head."""

        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(256, 64)
            self.blocks = nn.ModuleList(llm.LlamaBlock(64, 4, 128) for _ in range(2))
            self.norm = llm.RMSNorm(64)
            self.head = nn.Linear(64, 256, bias=False)

        def forward(self, ids, attention_mask):
            x = self.emb(ids) * attention_mask.unsqueeze(-1)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.norm(x))
    builds = [("GPT-style", lambda: gpt.GPT(vocab=256, context=16, d=64, heads=4, layers=2,
                                            dropout=0.1)),
              ("Llama-style", LlamaLM)]
    for name, build in builds:
        for inside in (True, False):
            same_training("7. bf16 autocast, %s (ids, mask, cross-entropy outside), AdamW, "
                          "plan made %s autocast" % (name, "inside" if inside else "outside"),
                          build, tokens, ce, optimizer="adamw",
                          steps=5, autocast=True, plan_autocast=inside)
    # Autocast casts a weight once per region (its cache): the gradients
    # of a layer applied three times add up in bf16 before the cast back
    # (ALBERT's shared layers)
    same_training("7. bf16 autocast, one Linear applied three times",
                  lambda: Module(lambda s, x: s.b(torch.tanh(s.a(torch.tanh(s.a(torch.tanh(
                      s.a(x))))))), a=lin(), b=lin()), x3d, autocast=True)


def _ddp_worker(rank, path, wrap_first, out):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=2)
    try:
        torch.manual_seed(0)
        base = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                             nn.Linear(32, 4))
        x = [torch.randn(8, 16, generator=torch.Generator().manual_seed(10 * s + rank))
             for s in range(3)]
        results = []
        for planned in (False, True):
            model = copy.deepcopy(base)
            if not planned:
                m = DDP(model)
            elif wrap_first:
                m = DDP(checkmate_torch.remat(model, (x[0],), budget=lambda f, p: f + (p - f) * 3 // 4,
                                              strategy="dtr"))
            else:
                try:
                    checkmate_torch.remat(DDP(model), (x[0],), budget="100%", strategy="dtr")
                    results.append("accepted")
                except Exception as e:
                    results.append(str(e))
                break
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            for s in range(3):
                opt.zero_grad(set_to_none=False)
                m(x[s]).pow(2).mean().backward()
                opt.step()
            results.append([p.detach().clone() for p in model.parameters()])
        if rank == 0:
            torch.save(results, out)
    finally:
        dist.destroy_process_group()


def ddp():
    import tempfile
    import torch.multiprocessing as mp
    for wrap_first in (True, False):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.pt")
            # Once in a busy run a gloo process aborted at its exit ("terminate
            # called without an active exception"): the processes are
            # started again once, the results compared as they come.
            res = None
            for attempt in range(2):
                try:
                    mp.spawn(_ddp_worker, args=(os.path.join(d, "init%d" % attempt),
                                                wrap_first, out), nprocs=2, join=True)
                    res = torch.load(out)
                    break
                except Exception as e:
                    err = e
            if res is None:
                ok(False, "8. DDP on 2 gloo processes ran", err)
                continue
        if wrap_first:
            same = all(torch.equal(a, b) for a, b in zip(res[0], res[1]))
            ok(same, "8. DDP(remat(m)) on 2 gloo processes: 3 steps equal DDP(m)'s, bitwise")
        else:
            ok("DDP(remat(m" in res[1] and "\n" not in res[1],
               "8. remat(DDP(m)) refused in one line: %s" % res[1])


def objects_out():
    class Cache:
        def __init__(self, t):
            self.t = t

    refused("9. an output that holds tensors in an object (a cache)",
            lambda: Module(lambda s, x: (s.a(x).tanh(), Cache(s.a(x))), a=lin()), x3d,
            ["Cache", "use_cache=False"])

    def checkpointed(s, x):
        from torch.utils.checkpoint import checkpoint
        return checkpoint(s.a, x, use_reentrant=False).tanh()
    refused("9. a model that checkpoints itself",
            lambda: Module(checkpointed, a=lin()), x3d, ["checkpoints itself"])


def errors():
    def tiny(step):
        return x3d(step)
    torch.manual_seed(0)
    try:
        checkmate_torch.remat(Module(lambda s, x: s.a(x).tanh(), a=lin()), *tiny(0),
                              budget=1000, strategy="dtr")
        ok(False, "10. an infeasible budget raises SolveError")
    except SolveError as e:
        msg = str(e)
        ok("below" in msg and "KiB" in msg and "least any plan needs" in msg
           and "hint" not in msg and "did you mean" not in msg,
           "10. an infeasible budget: SolveError with the binary's reason: %s" % msg)
    for bad in (float("nan"), float("inf"), -5, 0):
        try:
            checkmate_torch.remat(Module(lambda s, x: s.a(x).tanh(), a=lin()), *tiny(0),
                                  budget=bad, strategy="dtr")
            ok(False, "10. budget=%r refused" % bad)
        except SolveError as e:
            ok("budget" in str(e) and "\n" not in str(e),
               "10. budget=%r refused in one line: %s" % (bad, e))

    def item(s, x):
        h = s.a(x)
        return h * 2 if h.sum().item() > 0 else h
    refused("10. .item() in forward", lambda: Module(item, a=lin()), x3d,
            ["_local_scalar_dense", "t_causes.py:", "depends on tensor values"])

    def nonzero(s, x):
        h = s.a(x)
        return h[h.nonzero()[:, 0]]
    refused("10. nonzero in forward", lambda: Module(nonzero, a=lin()), x3d,
            ["nonzero", "t_causes.py:", "depends on tensor values"])
    # export's trace (sum of the outputs) has no probe before it: make_fx
    # gives nonzero's shape a symbol, and the step runs again on fake
    # tensors without symbols for the error to name the user's line
    try:
        trace(Module(nonzero, a=lin()), x3d(0)[0], mode="sum")
        ok(False, "10. nonzero in an export's trace refused")
    except TraceError as e:
        ok("nonzero" in str(e) and "t_causes.py:" in str(e) and "\n" not in str(e),
           "10. nonzero in an export's trace: refused in one line naming the line: %s" % e)

    # A tied model untied by load_state_dict(assign=True) gets a plan of its own.
    torch.manual_seed(0)
    head = nn.Linear(16, 10, bias=False)
    tied = nn.ModuleDict({"e": nn.Embedding(10, 16), "h": head})
    tied.h.weight = tied.e.weight

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = tied

        def forward(self, i):
            return self.m.h(self.m.e(i).tanh())
    t = Tied()
    ids = torch.randint(0, 10, (4, 6))
    m = plan(t, lambda step: ((ids,), {}))
    sd = {k: v.clone() for k, v in t.state_dict().items()}
    t.load_state_dict(sd, assign=True)
    try:
        m(ids).pow(2).mean().backward()
        good = t.m.h.weight.grad is not None and t.m.e.weight.grad is not None and \
            t.m.h.weight is not t.m.e.weight
        ok(good, "10. a tied model untied by load_state_dict(assign=True) trains on (%d plans)"
           % len(m._plans))
    except Exception as e:
        ok(False, "10. a tied model untied by load_state_dict(assign=True) trains on", e)


def cuda_ops():
    """Causes found on a GPU (the PyTorch fuzzer on an H100, torch 2.11),
    checked here on the ops' schemas, which every build registers."""
    from types import SimpleNamespace
    from checkmate_torch.functional import functional_op, mutated_args
    from checkmate_torch.graph import draws_random, momentum_arg
    aten = torch.ops.aten
    # BatchNorm(momentum=None) on CUDA traces cudnn_batch_norm, whose
    # momentum is called exponential_average_factor: it ran with the traced
    # stand-in momentum (18 of 500 seeds' running statistics differed).
    found = []
    for name in ("native_batch_norm", "cudnn_batch_norm", "miopen_batch_norm",
                 "_native_batch_norm_legit", "_batch_norm_with_update"):
        op = getattr(aten, name).default
        args = [None] * len(op._schema.arguments)
        args[5] = True   # training
        node = SimpleNamespace(target=functional_op, args=(op, mutated_args(op, args)))
        m = momentum_arg(node)
        kind = None if m is None else str(op._schema.arguments[m[0] - 2].type)
        found.append("%s: %s" % (name, kind))
    ok(all(f.endswith(": float") for f in found),
       "11. the momentum of every batch norm op that updates running statistics is found",
       "; ".join(found))
    # The attention backwards of CUDA are tagged nondeterministic_seeded but
    # replay the forward's draw from philox_seed/offset: remat refused every
    # model with SDPA on CUDA ("an output is computed after the backward
    # starts").
    backs = [aten._scaled_dot_product_efficient_attention_backward.default,
             aten._scaled_dot_product_cudnn_attention_backward.default]
    fwds = [aten._scaled_dot_product_efficient_attention.default,
            aten._scaled_dot_product_cudnn_attention.default,
            aten._scaled_dot_product_flash_attention.default, aten.native_dropout.default]
    ok(not any(draws_random(o) for o in backs) and all(draws_random(o) for o in fwds),
       "12. CUDA's attention backwards draw nothing; the forwards and dropout draw",
       [(str(o), draws_random(o)) for o in backs + fwds])


def main():
    torch_setup()
    remat_or_finish()
    for part in (strides, effects, buffers, gradients, refusals_gone, autocast, ddp,
                 objects_out, errors, cuda_ops):
        part()
    finish()


if __name__ == "__main__":
    main()

"""The PyTorch fuzzer's compiled mode (fuzz_run.py --compile): a random
model (fuzz_gen.build) trained 3 SGD steps ordinarily, under
torch.compile, and under checkmate_torch.remat(compile=True), the losses
compared.

A compiled step fuses other kernels than an eager one, so its losses
equal eager's only up to rounding; and inductor draws its own random
numbers, so with dropout they equal torch.compile's, not eager's. A seed
is ok when remat's losses are within TOL (relative, every step) of
eager's or of torch.compile's, or, failing both, when under inductor's
fallback_random (aten's random ops, eager's masks) they are within it of
eager's, or within it of torch.compile's with a partition that computes
nothing again (keep_all_compile: inductor's masks, and none of the
recomputes by which torch's own partition can train another model);
wrong otherwise.
The budget is fixed memory + FRACS[0] of the activations, then FRACS[1]
where no partition fits the first (compile=True refuses what the binary
proves infeasible or finds nothing for). The record also has
compile_rel: how far torch.compile's own losses are from eager's (it
trains another model where its partition recomputes a read of a buffer
the forward writes, docs/torch.md)."""

TOL = 1e-4
ALIAS = False   # calls whose tensors share memory (fuzz_gen.build's alias; --alias)
FRACS = (0.7, 1.0)
STEPS = 3


def losses(seed, device, make, memory=None, writes=True):
    """(losses of STEPS SGD steps of seed's model (fuzz_gen.build's, with
    writes) wrapped by make(model, first batch), seeded alike; the wrapped
    module; the model's description). With a dict `memory`, one more
    step's checkmate_torch.measure.step_peak goes in it."""
    import torch
    import fuzz_gen
    model, make_batch, loss_fn, desc = fuzz_gen.build(seed, device=device, alias=ALIAS,
                                                      writes=writes)
    module = make(model, make_batch(0))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(seed + 1)
    out = []
    for step in range(STEPS):
        args, kwargs = make_batch(step)
        loss = loss_fn(module(*args, **kwargs), step)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    if memory is not None:
        from checkmate_torch.measure import step_peak
        args, kwargs = make_batch(0)
        outputs = []

        def step():
            out = module(*args, **kwargs)
            outputs.extend(t for t in torch.utils._pytree.tree_leaves(out)
                           if isinstance(t, torch.Tensor) and t.requires_grad)
            loss_fn(out, 0).backward()
        memory.update(step_peak(step, str(device)))
        memory["output_bytes"] = sum(t.numel() * t.element_size() for t in outputs)
    return out, module, desc


def keep_all_compile(model, _batch):
    """torch.compile with AOTAutograd's default partition, which saves
    every value the backward reads and computes none again."""
    import torch
    import torch._inductor.config as ic
    from torch._functorch.partitioners import default_partition
    from torch._inductor.custom_graph_pass import CustomPartitionerFn

    class KeepAll(CustomPartitionerFn):
        def __call__(self, gm, joint_inputs, **kw):
            return default_partition(
                gm, joint_inputs, num_fwd_outputs=kw["num_fwd_outputs"],
                static_lifetime_input_indices=kw.get("static_lifetime_input_indices"))

        def uuid(self):
            return "keep-all"

    compiled = torch.compile(model, fullgraph=True, dynamic=False)

    def step(*args, **kwargs):
        with ic.patch(custom_partitioner_fn=KeepAll()):
            return compiled(*args, **kwargs)
    return step


def draws_random(features):
    """Whether a model with these fuzz_gen features draws random numbers
    (dropout, bernoulli)."""
    return any("dropout" in f or "bernoulli" in f for f in features)


def rel(a, b):
    """The largest relative difference of losses a from losses b."""
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b))


def _line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]


def run_seed(seed, device="cpu"):
    """One seed's record: {seed, outcome, features, message, choices,
    compile_rel, recomputed, compiles, memory} (fuzz_run's outcomes; memory: the
    partition's model peak less fixed memory plus the outputs'
    gradients, and one more step's measured outside_ops and peak, in
    bytes)."""
    import torch
    import checkmate_torch
    from checkmate_torch.train import RematError
    rec = {"seed": seed, "outcome": None, "features": [], "message": "", "choices": None,
           "compile_rel": None, "recomputed": None, "compiles": None, "memory": None}
    try:
        eager, _, desc = losses(seed, device, lambda m, b: m)
        rec["features"] = list(desc.features)
    except Exception as e:
        rec["outcome"], rec["message"] = "skip", "ordinary: %s" % _line(e)
        return rec
    torch._dynamo.reset()
    try:
        ref = losses(seed, device,
                     lambda m, b: torch.compile(m, fullgraph=True, dynamic=False))[0]
    except Exception as e:   # dynamo or inductor refuses the model: nothing to compare
        rec["outcome"], rec["message"] = "skip", "torch.compile: %s" % _line(e)
        return rec
    rec["compile_rel"] = rel(ref, eager)
    for frac in FRACS:
        torch._dynamo.reset()
        def planned(m, b):   # this frac's partition
            return checkmate_torch.remat(
                m, b[0], b[1], compile=True, time_limit=10,
                budget=lambda fixed, peak: int(fixed + frac * (peak - fixed)))
        rec["choices"] = {"frac": frac}
        measured = {}
        try:
            got, module, _ = losses(seed, device, planned, measured)
        except RematError as e:
            text = str(e)
            if frac != FRACS[-1] and ("infeasible" in text or "no_plan" in text):
                continue
            rec["outcome"], rec["message"] = "refused", _line(e)
            return rec
        except Exception as e:
            rec["outcome"], rec["message"] = "crash", "%s: %s" % (type(e).__name__, _line(e))
            return rec
        info = module.plan_info
        rec["recomputed"] = info["recomputed"]
        rec["compiles"] = info.get("compiles")
        # The outputs' gradients are fixed memory to the model (the
        # backward's inputs); the step makes them.
        rec["memory"] = {"model": info["plan_peak"] - info["fixed_memory"]
                         + measured.get("output_bytes", 0),
                         "outside_ops": measured.get("outside_ops"),
                         "peak": measured.get("peak")}
        d_eager, d_compile = rel(got, eager), rel(got, ref)
        if min(d_eager, d_compile) >= TOL:
            # With dropout, inductor draws other masks than eager, and
            # torch.compile may be the one that is off: once more with
            # aten's random ops (eager's masks), against eager.
            import torch._inductor.config as ic
            torch._dynamo.reset()
            with ic.patch(fallback_random=True):
                try:
                    d_eager = rel(losses(seed, device, planned)[0], eager)
                except RematError:   # two random ops under fallback_random: refused
                    pass
        if min(d_eager, d_compile) >= TOL:
            # Both random numbers and torch's partition off (it computes
            # again a read of a buffer the forward writes, seed 17014):
            # against torch.compile with a partition that computes
            # nothing again, inductor's masks and no recompute.
            torch._dynamo.reset()
            try:
                d_compile = rel(got, losses(seed, device, keep_all_compile)[0])
            except Exception:   # that partition refuses the model: no verdict from it
                pass
        if min(d_eager, d_compile) < TOL:
            rec["outcome"] = "ok"
        else:
            rec["outcome"] = "wrong"
            rec["message"] = ("losses differ from eager's by %.1e and torch.compile's by %.1e "
                              "(budget fraction %g)" % (d_eager, d_compile, frac))
        return rec
    return rec


def memory_line(records):
    """The measured peak of a step (outside extern kernels: step_peak's
    outside_ops) over the partition's model (its peak less fixed memory,
    plus the outputs' gradients, which are fixed memory to it): median
    and largest ratio, and the models where it was above by more than 5%
    and 64 KiB; or None. A record, not a verdict: the model guesses what
    inductor writes (docs/torch.md, Compiled mode), and on the fuzzer's
    small models the loss, computed outside the compiled graph, weighs."""
    rows = sorted((r["memory"]["outside_ops"] / max(r["memory"]["model"], 1), r["seed"],
                   r["memory"]["outside_ops"] - r["memory"]["model"])
                  for r in records if r.get("memory")
                  and r["memory"].get("outside_ops") is not None)
    if not rows:
        return None
    over = [seed for ratio, seed, excess in rows if ratio > 1.05 and excess > 65536]
    again = [r["seed"] for r in records if (r.get("compiles") or 1) > 1]
    return ("compile=True's memory, measured over the model: median %.2f, largest %.2f "
            "(seed %d); above by more than 5%% and 64 KiB on %d of %d models%s; partitioned "
            "again after its measured run: %d%s" % (
                rows[len(rows) // 2][0], rows[-1][0], rows[-1][1], len(over), len(rows),
                " [seeds %s]" % ", ".join(map(str, over[:8])) if over else "", len(again),
                " [seeds %s]" % ", ".join(map(str, again[:8])) if again else ""))


def summary_line(records):
    """How often torch.compile's own losses left eager's on the models
    that draw no random numbers (with dropout inductor draws other masks
    than eager), or None."""
    plain = [r for r in records if r.get("compile_rel") is not None
             and not draws_random(r["features"])]
    if not plain:
        return None
    off = [r["seed"] for r in plain if r["compile_rel"] >= TOL]
    return ("torch.compile's own losses leave eager's by %g or more on %d of %d models "
            "without dropout%s" % (TOL, len(off), len(plain), " [seeds %s]" % ", ".join(
                map(str, off[:8])) if off else ""))

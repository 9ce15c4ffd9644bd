"""The PyTorch fuzzer's selective-checkpointing mode (fuzz_run.py --sac):
a random model (fuzz_gen.build; on three seeds in four one that writes no
parameter or buffer in its forward, since sac_policy refuses those),
taken whole as one region, trained 3 SGD steps through
torch.utils.checkpoint with a policy of checkmate_torch.sac_policy, in
two parts:

  eager    sac_policy at fixed + f (peak - fixed), f drawn from
           EAGER_FRACS: the losses and the parameters after the steps
           equal the model's trained without checkpointing, bit for bit.
  compile  sac_policy(compile=True) at fixed + f (peak - fixed) of the
           compiled step's peak, f drawn from COMPILE_FRACS (100: the
           cheapest candidate fits), 3 steps of torch.compile of the
           checkpointed model: the losses within fuzz_compiled.TOL of
           torch.compile's without checkpointing or of eager's, or,
           failing both (inductor draws its own dropout masks), under
           inductor's fallback_random (eager's masks) within it of
           eager's, or, on a model with dropout, within it of
           torch.compile's of torch's checkpoint without a policy
           (which draws other masks there: the part's "as").

Each part's outcome is fuzz_run's (ok, refused: one of sac's one-line
errors, wrong, crash); the seed's is its worst part's (crash, wrong, ok,
refused in that order), skip where the ordinary loop fails (and the
compile part is skipped where torch.compile fails without a policy)."""
import random

from torch.utils.checkpoint import checkpoint

EAGER_FRACS = (0.0, 0.3, 0.6, 1.0)
COMPILE_FRACS = (0.8, 100.0)
ORDER = ("crash", "wrong", "ok", "refused", "skip")
WRITES_RATE = 0.25   # the share of models that may write a buffer


def _trained(seed, device, make, writes):
    """(losses, final parameters, description) of fuzz_compiled.losses
    on make's wrapping, the parameters cloned."""
    import fuzz_compiled
    held = {}

    def wrap(m, b):
        held["model"] = m
        return make(m, b)
    got = fuzz_compiled.losses(seed, device, wrap, writes=writes)
    return got[0], [p.detach().clone() for p in held["model"].parameters()], got[2]


def _checkpointed(m, policy):
    def run(*a, **k):
        return checkpoint(m, *a, use_reentrant=False, context_fn=policy, **k)
    return run


def _part(run):
    """run()'s (outcome, message), an SACError being a refusal and any
    other exception a crash."""
    from checkmate_torch.sac import SACError
    from fuzz_compiled import _line
    try:
        return run()
    except SACError as e:
        return "refused", _line(e)
    except Exception as e:
        return "crash", "%s: %s" % (type(e).__name__, _line(e))


def run_seed(seed, device="cpu"):
    """One seed's record: {seed, outcome, features, message, choices,
    parts: {eager, compile: {outcome, message, saved, ops}}}."""
    import torch
    import checkmate_torch
    import fuzz_compiled as fc
    r = random.Random(seed * 7 + 3)
    ch = {"eager_frac": r.choice(EAGER_FRACS), "compile_frac": r.choice(COMPILE_FRACS),
          "writes": r.random() < WRITES_RATE}
    w = ch["writes"]
    rec = {"seed": seed, "outcome": None, "features": [], "message": "", "choices": ch,
           "parts": {}}
    try:
        want, want_params, desc = _trained(seed, device, lambda m, b: m, w)
        rec["features"] = list(desc.features)
    except Exception as e:
        rec["outcome"], rec["message"] = "skip", "ordinary: %s" % fc._line(e)
        return rec

    def eager():
        info = {}

        def make(m, b):
            p = checkmate_torch.sac_policy(m, b[0], b[1], time_limit=10, budget=_frac(
                ch["eager_frac"]))
            info.update(p.info)
            return _checkpointed(m, p)
        got, params, _ = _trained(seed, device, make, w)
        rec["parts"]["eager"] = {"saved": info["saved"], "ops": info["ops"]}
        if got == want and all(torch.equal(a, b) for a, b in zip(params, want_params)):
            return "ok", ""
        return "wrong", "losses %s, without checkpointing %s" % (got, want)

    def compiled():
        torch._dynamo.reset()
        try:
            ref = fc.losses(seed, device, lambda m, b: torch.compile(m, dynamic=False),
                            writes=w)[0]
        except Exception as e:
            return "skip", "torch.compile: %s" % fc._line(e)
        held = {}

        def make(m, b):   # the policy made once, for the first run
            if "policy" not in held:
                held["policy"] = checkmate_torch.sac_policy(
                    m, b[0], b[1], compile=True, time_limit=10, budget=_frac(ch["compile_frac"]))
            return torch.compile(_checkpointed(m, held["policy"]), dynamic=False)
        torch._dynamo.reset()
        got = fc.losses(seed, device, make, writes=w)[0]
        info = held["policy"].info
        rec["parts"]["compile"] = {"saved": info["compile_saved"], "ops": info["compile_ops"],
                                   "measured": info["measured"]}
        if min(fc.rel(got, ref), fc.rel(got, want)) < fc.TOL:
            return "ok", ""
        # With dropout inductor draws its own masks, in an order that the
        # checkpoint's graph can change: the policy once more with aten's
        # random ops (eager's masks), against eager.
        import torch._inductor.config as ic
        torch._dynamo.reset()
        with ic.patch(fallback_random=True):
            again = fc.losses(seed, device, make, writes=w)[0]
        if fc.rel(again, want) < fc.TOL:
            return "ok", ""
        # torch's checkpoint under torch.compile draws a checkpointed
        # region's masks otherwise, policy or none (seed 90456: its
        # first step's loss differs, under fallback_random too): the
        # policy against torch's own checkpoint, without a policy.
        plain = None
        if fc.draws_random(rec["features"]):
            torch._dynamo.reset()
            plain = fc.losses(seed, device, lambda m, b: torch.compile(
                lambda *a, **k: checkpoint(m, *a, use_reentrant=False, **k), dynamic=False),
                writes=w)[0]
            if fc.rel(got, plain) < fc.TOL:
                rec["parts"]["compile"]["as"] = "torch's checkpoint"
                return "ok", ""
        return "wrong", "losses %s, torch.compile's %s, eager's %s; under fallback_random %s; " \
            "torch's checkpoint's %s" % (got, ref, want, again, plain)

    for name, run in (("eager", eager), ("compile", compiled)):
        outcome, message = _part(run)
        rec["parts"].setdefault(name, {}).update(outcome=outcome, message=message)
    parts = rec["parts"].values()
    worst = min(parts, key=lambda p: ORDER.index(p["outcome"]))
    rec["outcome"] = worst["outcome"]
    rec["message"] = "; ".join("%s: %s" % (n, p["message"]) for n, p in rec["parts"].items()
                               if p["outcome"] == worst["outcome"] and p["message"])
    return rec


def _frac(f):
    return lambda fixed, peak: fixed + int(f * (peak - fixed))


def summary_line(records):
    """Each part's outcomes, counted; or None."""
    parts = {}
    for r in records:
        for name, p in r.get("parts", {}).items():
            if "outcome" in p:
                c = parts.setdefault(name, {})
                c[p["outcome"]] = c.get(p["outcome"], 0) + 1
    if not parts:
        return None
    plain = sum(1 for r in records if r.get("parts", {}).get("compile", {}).get("as"))
    return "sac parts: " + "; ".join(
        "%s %s" % (name, ", ".join("%d %s" % (c[o], o) for o in ORDER if o in c))
        for name, c in sorted(parts.items())) + \
        "; compile ok as torch's checkpoint without a policy (dropout): %d" % plain

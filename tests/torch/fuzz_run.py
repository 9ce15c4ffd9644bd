#!/usr/bin/python3
"""The PyTorch fuzzer's harness: random small models (fuzz_gen.build)
trained 3 steps ordinarily and 3 steps under checkmate_torch.remat from
the same seed, compared bit for bit (docs/fuzzing.md, "The PyTorch
fuzzer").

Usage: PYTHON tests/torch/fuzz_run.py [--seeds A:B | --seed N] [--jobs N]
           [--timeout S] [--device cpu|cuda] [--compile] [--alias] [--offload]
           [--sizes] [--background] [--sac]
           [--json FILE]
           [--features] [--verbose] [CHECKMATE_BINARY]

The binary: the argument, else $CHECKMATE, else
checkmate_torch.binary.find_checkmate(). Each seed's outcome is one of
  ok       every item equal
  refused  remat() or the first step (or the first step of a new batch
           shape) raised one of checkmate_torch's own errors
  wrong    an item differs (the message names the first)
  crash    any other exception under the plan (torch's included), a
           worker that died, or a seed past --timeout
  skip     the ordinary loop itself failed (the generator's fault), or,
           on CUDA, two ordinary runs differ (a kernel that is not
           deterministic, atomic adds say: no plan can equal it)
The summary counts them, gives the refusal rate among the models the
ordinary loop trains, and groups the messages (digits read as N). Exit
status 0 when no seed was wrong or crashed, else 1.

--compile fuzzes remat(compile=True) instead: losses against eager's
and torch.compile's within a tolerance (fuzz_compiled.py). --alias makes
calls whose tensors share memory (fuzz_gen.ALIAS_MODES: the ids passed as
targets, one tensor twice, overlapping views, a view of a parameter),
the example and the later calls aliased or not, on models of their own.
--offload plans with copies to host memory (remat's offload=, at a
bandwidth and a rate the seed draws, by strategies that copy: OFFLOADS),
on the CPU through offload.emulate's copy stream (a wait left out gives
NaN). --sizes makes each step's batch smaller and its sequence shorter
than the step's before (down to 2; fuzz_gen.build's sizes): the second
step's call is traced with symbolic sizes, and its plan runs the third
(sizes.py); the summary counts the steps a symbolic plan ran.
--sac fuzzes checkmate_torch.sac_policy instead, eager and compile=True,
the whole model one region (fuzz_sac.py).
--background passes remat background=True where the seed's strategy is
auto (without copies): the steps run the search's first plan until it
ends, then its final one; the summary counts the steps each ran.

`--seed N --verbose` runs one seed in this process and prints the model,
the harness's choices, every differing item and the traceback."""
import argparse
import json
import os
import random
import re
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PKG_ROOT = ROOT  # where checkmate_torch is imported from (--package-root)
DEVICE = "cpu"   # where the models train (--device)
COMPILE = False  # remat(compile=True) instead (--compile)
SAC = False      # sac_policy instead (--sac)
ALIAS = False    # calls whose tensors share memory (--alias, fuzz_gen.ALIAS_MODES)
OFFLOAD = False  # plans with copies to host memory (--offload)
SIZES = False    # each step at other sizes (--sizes)
BACKGROUND = False  # remat(background=True) where the strategy is auto (--background)
# --offload: the strategies that copy, for each that does not (the seed's
# draw stays one draw), and the bandwidths drawn (a byte a FLOP down to
# a thousandth: from everything offloaded to little)
OFFLOADS = {"auto": "auto", "lns": "offload-ilp", "approx": "dtr-offload",
            "dtr": "dtr-offload"}
BANDWIDTHS = ("1GB/s", "100MB/s", "10MB/s", "1MB/s")

OUTCOMES = ("ok", "refused", "wrong", "crash", "skip")
STEPS = 3


def choices(seed, torch_major=2):
    """The harness's own random choices for seed (not the model's):
    optimizer, zero_grad mode, budget fraction of the activations,
    strategy, autocast (never on torch 1, whose CPU bf16 kernels are
    incomplete: the ordinary step fails)."""
    r = random.Random(seed * 2654435761 + 12345)
    ch = {
        "optimizer": r.choice(["sgd", "adamw"]),
        "set_to_none": r.random() < 0.5,
        "frac": round(r.uniform(0.3, 1.0), 2),
        # one draw, so that the choices after it stay the seed's
        "strategy": _strategy(r.random()),
        "time_limit": 2,
        # bf16 autocast (CPU) around the forward and the loss: "step" with
        # the plan made outside autocast, "both" with it made inside
        "autocast": r.choice([None] * 17 + ["step", "both"]),
    }
    if torch_major < 2:
        ch["autocast"] = None
    if OFFLOAD:
        ch["strategy"] = OFFLOADS[ch["strategy"]]
        ch["offload"] = {"bandwidth": BANDWIDTHS[seed % len(BANDWIDTHS)], "rate": "1GFLOP/s"}
    return ch


def _strategy(u):
    """auto 15%, lns 15%, approx 15%, dtr 55%: plans of every kind (lns
    and approx recompute in other patterns than dtr)."""
    return "auto" if u < 0.15 else "lns" if u < 0.3 else "approx" if u < 0.45 else "dtr"


def choice_features(ch):
    """The harness's choices as feature flags."""
    out = ["opt_" + ch["optimizer"], "strategy_" + ch["strategy"]]
    if ch["set_to_none"]:
        out.append("zero_grad_set_to_none")
    if ch["autocast"]:
        out.append("autocast_" + ch["autocast"])
    return out


def our_errors():
    """checkmate_torch's own exception classes (those that exist)."""
    import importlib
    out = []
    for mod, name in (("train", "RematError"), ("trace", "TraceError"),
                      ("graph", "AnalysisError"), ("execute", "PlanError"),
                      ("solve", "SolveError"), ("binary", "BinaryError"),
                      ("model", "ModelError")):
        try:
            out.append(getattr(importlib.import_module("checkmate_torch." + mod), name))
        except (ImportError, AttributeError):
            pass
    return tuple(out)


class StageError(Exception):
    """An exception raised at stage (remat, step K forward/loss/backward/
    optimizer) of a run."""

    def __init__(self, stage, exc, new_shape):
        super().__init__(stage)
        self.stage, self.exc, self.new_shape = stage, exc, new_shape


def _clone(t):
    return None if t is None else t.detach().clone()


def _budget(frac, least=None):
    def f(fixed, peak):
        b = fixed + int((peak - fixed) * frac)
        return max(b, least) if least else b
    return f


LEAST = re.compile(r"\((\d+)\),? the least any plan needs")


def _budget_failure(exc):
    """Whether a SolveError says that no plan was found at the budget
    (exit 3: proven, 4: not found in time or by the heuristic)."""
    return re.search(r"\(exit [34]\)\s*$", str(exc)) is not None


def _next_budget(ch, level, exc):
    """The budget after one the binary found no plan at: level 1, the
    least budget its message names (else halfway to the checkpoint-all
    peak); level 2, the checkpoint-all peak, which every strategy meets.
    (name, budget function)."""
    if level == 1:
        m = LEAST.search(str(exc))
        if m:
            least = int(m.group(1))
            return "the least, %d bytes" % least, _budget(ch["frac"], least)
        half = (1 + ch["frac"]) / 2
        return "%.2f" % half, _budget(half)
    return "1.0 (checkpoint-all)", _budget(1.0)


def train(seed, budget, ch, log):
    """Builds seed's model and trains it 3 steps, under a plan for budget
    (a function of fixed memory and checkpoint-all peak) unless it is
    None: the list of (item name, value) to compare, in the order they
    are produced."""
    import torch
    from torch.utils import _pytree as pytree
    import fuzz_gen
    import contextlib
    model, make_batch, loss_fn, desc = fuzz_gen.build(seed, device=DEVICE, alias=ALIAS,
                                                      sizes=SIZES)
    m = model
    shapes = None

    def autocast(on):
        return torch.autocast(DEVICE, dtype=torch.bfloat16) if on else contextlib.nullcontext()
    if budget is not None:
        import checkmate_torch
        if OFFLOAD:
            from checkmate_torch import offload
            offload.emulate(True)
        args, kwargs = make_batch(0)
        try:
            with autocast(ch["autocast"] == "both"):
                m = checkmate_torch.remat(model, args, kwargs, budget=budget,
                                          strategy=ch["strategy"], time_limit=ch["time_limit"],
                                          offload=ch.get("offload"),
                                          background=BACKGROUND and ch["strategy"] == "auto"
                                          and not ch.get("offload"))
        except Exception as e:
            raise StageError("remat", e, True)
        log.append("plan: %s" % {k: m.plan_info.get(k) for k in
                                 ("budget", "peak", "checkpoint_all_peak", "fixed_memory",
                                  "computes", "nodes", "strategy", "offloads")})
        note = m.plan_info.get("runner_note")
        log.append("runner: %s%s" % (m.plan_info.get("runner"), " (%s)" % note if note else ""))
    params = list(m.parameters())
    if ch["optimizer"] == "sgd":
        opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    else:
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    torch.manual_seed(seed + 1)
    items = []
    for step in range(STEPS):
        if step == STEPS - 1 and budget is not None:
            # --background: the last step after the searches' end, so that
            # it runs their final plans
            for c in getattr(m, "_searching", ()):
                c.wait()
        args, kwargs = make_batch(step)
        inputs = pytree.tree_flatten((args, kwargs))[0]
        # a new signature: other shapes, strides or requires_grad, or
        # another tensor that requires a gradient passed twice (remat's
        # key holds which are one input)
        tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
        first = {}
        sig = [(tuple(t.shape), t.stride(), t.requires_grad) for t in tensors] + [
            first.setdefault(id(t), i) for i, t in enumerate(tensors) if t.requires_grad]
        new_shape = sig != shapes
        shapes = sig
        stage = "step %d forward" % step
        try:
            with autocast(ch["autocast"]):
                out = m(*args, **kwargs)
                stage = "step %d loss" % step
                loss = loss_fn(out, step)
            opt.zero_grad(set_to_none=ch["set_to_none"])
            stage = "step %d backward" % step
            loss.backward()
            stage = "step %d optimizer" % step
            items.append(("step %d loss" % step, _clone(loss)))
            leaves, spec = pytree.tree_flatten(out)
            items.append(("step %d output structure" % step, str(spec)))
            for i, t in enumerate(leaves):
                if isinstance(t, torch.Tensor):
                    items.append(("step %d output %d" % (step, i), _clone(t)))
                    items.append(("step %d output %d requires_grad" % (step, i), t.requires_grad))
                elif hasattr(t, "__dict__"):
                    # an object holding tensors (a cache): its tensors' types and values
                    for k, v in sorted(vars(t).items()):
                        if isinstance(v, torch.Tensor):
                            name = "step %d output %d .%s" % (step, i, k)
                            items.append((name + " type", type(v).__name__))
                            items.append((name, _clone(v)))
            for i, t in enumerate(inputs):
                if isinstance(t, torch.Tensor) and t.is_floating_point() and t.requires_grad:
                    # a view's gradient reaches the tensor it views
                    leaf = t if t.is_leaf else t._base
                    items.append(("step %d input %d .grad" % (step, i), _clone(leaf.grad)))
            for n, p in model.named_parameters():
                items.append(("step %d .grad of %s" % (step, n), _clone(p.grad)))
            opt.step()
            if budget is not None:
                log.append("step %d sizes: %s" % (step, m.plan_info.get("sizes")))
                log.append("step %d plan: %s" % (step, m.plan_info.get("param")))
            for n, b in model.named_buffers():
                items.append(("step %d buffer %s" % (step, n), _clone(b)))
        except Exception as e:
            raise StageError(stage, e, new_shape)
    if budget is not None and getattr(m, "symbolic_note", None):
        log.append("symbolic trace given up: %s" % m.symbolic_note)
    for n, p in model.named_parameters():
        items.append(("parameter %s" % n, _clone(p)))
    items.append(("generator state", torch.get_rng_state()))
    if DEVICE == "cuda":
        items.append(("cuda generator state", torch.cuda.get_rng_state()))
    return items, desc


def same(a, b):
    """Equal as torch.equal says (NaN equal to NaN where both have it),
    with the same dtype and shape; non-tensors by ==."""
    import torch
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return False
        return a == b
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point():
        na, nb = torch.isnan(a), torch.isnan(b)
        if not torch.equal(na, nb):
            return False
        if na.any():
            a, b = a.masked_fill(na, 0), b.masked_fill(nb, 0)
    return torch.equal(a, b)


def describe(name, a, b):
    import torch
    if a is None or b is None:
        return "%s: %s under the plan, %s ordinarily" % (
            name, "None" if a is None else "a tensor", "None" if b is None else "a tensor")
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return "%s: %s %s under the plan, %s %s ordinarily" % (
                name, a.dtype, tuple(a.shape), b.dtype, tuple(b.shape))
        if a.is_floating_point():
            d = (a.double() - b.double()).abs().nan_to_num(float("inf")).max().item()
            return "%s: values differ (max abs difference %.3g)" % (name, d)
        return "%s: values differ" % name
    return "%s: %r under the plan, %r ordinarily" % (name, a, b)


def _kind(name, a, b):
    """The grouping line of a difference: the item's kind, block indices
    as N, and whether it is None against a tensor."""
    n = re.sub(r"\d+", "N", name)
    if (a is None) != (b is None):
        n += " (None vs tensor)" if b is None else " (tensor vs None)"
    return n


def _where(exc):
    """The innermost traceback frame in checkmate_torch (file:line
    function), else the innermost one."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "checkmate_torch" in f.filename]
    f = (ours or frames or [None])[-1]
    return "%s:%d %s" % (os.path.basename(f.filename), f.lineno, f.name) if f else "?"


def _first_line(exc):
    text = str(exc).strip()
    return "%s: %s" % (type(exc).__name__, text.splitlines()[0] if text else "")


def differences(got, want):
    """[(item name, text, kind)] for the items of got that differ from
    want's (train's lists)."""
    diffs = []
    for (name, a), (name2, b) in zip(got, want):
        if name != name2:
            diffs.append(("%s vs %s" % (name, name2), "items differ: %s vs %s" % (name, name2),
                          "item order"))
            break
        try:
            equal = same(a, b)
            text = None if equal else describe(name, a, b)
        except Exception as e:  # a FakeTensor from the trace, say
            equal, text = False, "%s: cannot be compared (%s)" % (name, _first_line(e)[:120])
        if not equal:
            diffs.append((name, text, _kind(name, a, b)))
    if len(got) != len(want):
        diffs.append(("count", "%d items under the plan, %d ordinarily" % (len(got), len(want)),
                      "item count"))
    return diffs


def run_seed(seed, verbose=False):
    """One seed: the record {seed, outcome, features, message, secs,
    choices}."""
    import torch
    t0 = time.time()
    ch = choices(seed, int(torch.__version__.split(".")[0]))
    rec = {"seed": seed, "outcome": None, "features": [], "message": "", "choices": ch}
    log = []
    try:
        try:
            want, desc = train(seed, None, ch, log)
        except Exception as e:
            exc = e.exc if isinstance(e, StageError) else e
            stage = e.stage if isinstance(e, StageError) else "build"
            rec["outcome"], rec["message"] = "skip", "ordinary %s: %s" % (stage, _first_line(exc))
            try:
                import fuzz_gen
                rec["features"] = list(fuzz_gen.build(seed, alias=ALIAS)[3].features)
            except Exception:
                pass
            if verbose:
                traceback.print_exception(type(exc), exc, exc.__traceback__)
            return rec
        rec["features"] = sorted(set(desc.features) | set(choice_features(ch)))
        if DEVICE != "cpu":
            again = differences(train(seed, None, ch, [])[0], want)
            if again:
                rec["outcome"] = "skip"
                rec["message"] = "ordinary: two runs on %s differ (%s)" % (DEVICE, again[0][0])
                return rec
        if verbose:
            print("seed %d\n%s\nharness: %s" % (seed, desc, ch))
        # Where the binary finds no plan at the drawn budget (a limit of the
        # strategy, not a refusal of the model; at the first call or at a
        # new signature's), the planned run starts again at a higher one.
        name, budget = "%.2f" % ch["frac"], _budget(ch["frac"])
        try:
            for level in (1, 2, 3):
                try:
                    got, _ = train(seed, budget, ch, log)
                    if level > 1:
                        log.append("budget raised to %s" % name)
                    break
                except StageError as e:
                    from checkmate_torch.solve import SolveError
                    if level == 3 or not isinstance(e.exc, SolveError) \
                            or not _budget_failure(e.exc):
                        raise
                    log.append("no plan at budget %s (%s): %s" % (name, e.stage,
                                                                str(e.exc).splitlines()[0]))
                    name, budget = _next_budget(ch, level, e.exc)
        except StageError as e:
            exc = e.exc
            step0 = e.stage == "remat" or e.stage.startswith("step 0") or e.new_shape
            if isinstance(exc, our_errors()) and step0:
                rec["outcome"] = "refused"
                rec["message"] = "%s\n(at %s)" % (_first_line(exc), e.stage)
            else:
                rec["outcome"] = "crash"
                rec["message"] = "%s: %s\n%s" % (e.stage, _first_line(exc), _where(exc))
            if verbose:
                traceback.print_exception(type(exc), exc, exc.__traceback__)
            return rec
        diffs = differences(got, want)
        if diffs:
            rec["outcome"] = "wrong"
            rec["message"] = "%s differs\n%s%s" % (
                diffs[0][2], diffs[0][1],
                "; and %d more: %s" % (len(diffs) - 1, ", ".join(d[0] for d in diffs[1:6]))
                if len(diffs) > 1 else "")
            rec["differences"] = [d[1] for d in diffs]
        else:
            rec["outcome"] = "ok"
        return rec
    except Exception as e:  # a bug of the harness itself: a crash, said so
        rec["outcome"] = "crash"
        rec["message"] = "harness: %s\n%s" % (_first_line(e), _where(e))
        if verbose:
            traceback.print_exc()
        return rec
    finally:
        rec["secs"] = round(time.time() - t0, 3)
        rec["log"] = log
        if any(line.startswith("budget raised") for line in log):
            rec["features"] = sorted(set(rec["features"]) | {"budget_raised"})


def setup():
    """The worker's (or this process's) torch: one thread; paths."""
    for p in (PKG_ROOT, HERE):
        if p not in sys.path:
            sys.path.insert(0, p)
    import torch
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    import warnings
    warnings.filterwarnings("ignore")
    return torch


def one_seed(seed, verbose=False):
    """seed's record, in the mode of --compile or --sac."""
    if not (SAC or COMPILE):
        return run_seed(seed, verbose)
    if SAC:
        import fuzz_sac as mode
    else:
        import fuzz_compiled as mode
        mode.ALIAS = ALIAS
    t0 = time.time()
    rec = mode.run_seed(seed, DEVICE)
    rec.update(secs=round(time.time() - t0, 3), log=[])
    return rec


def _worker(conn, pkg_root, device, compiled, alias, offload, sizes, background, sac):
    global PKG_ROOT, DEVICE, COMPILE, ALIAS, OFFLOAD, SIZES, BACKGROUND, SAC
    BACKGROUND, SAC = background, sac
    PKG_ROOT, DEVICE, COMPILE, ALIAS, OFFLOAD, SIZES = \
        pkg_root, device, compiled, alias, offload, sizes
    setup()
    conn.send("ready")  # torch imported: the seeds' clocks start now
    while True:
        seed = conn.recv()
        if seed is None:
            return
        conn.send(one_seed(seed))


def run_many(seeds, jobs, timeout, progress=None):
    """Records of seeds, run in `jobs` worker processes (each seed under
    `timeout` seconds: a worker past it is killed and the seed is a
    crash), in the order they finish."""
    import multiprocessing as mp
    from multiprocessing.connection import wait
    # fork where this process has not started torch (its threads)
    fork = "fork" in mp.get_all_start_methods() and "torch" not in sys.modules
    ctx = mp.get_context("fork" if fork else "spawn")
    todo = list(seeds)[::-1]
    workers = {}  # conn -> [process, seed, start]

    def start():
        a, b = ctx.Pipe()
        p = ctx.Process(target=_worker, daemon=True,
                        args=(b, PKG_ROOT, DEVICE, COMPILE, ALIAS, OFFLOAD, SIZES, BACKGROUND,
                              SAC))
        p.start()
        b.close()
        workers[a] = [p, None, None]
        return a

    def give(conn):
        if todo:
            s = todo.pop()
            workers[conn][1:] = [s, time.time()]
            conn.send(s)
        else:
            conn.send(None)
            workers[conn][0].join(5)
            del workers[conn]

    for _ in range(min(jobs, len(todo))):
        start()
    out = []
    while workers:
        ready = wait(list(workers), timeout=1.0)
        now = time.time()
        for conn in ready:
            p, seed, t0 = workers[conn]
            try:
                rec = conn.recv()
            except (EOFError, OSError):
                p.join(5)
                if seed is None:
                    raise RuntimeError("a worker died before its first seed (exit %s)"
                                       % p.exitcode)
                rec = {"seed": seed, "outcome": "crash", "features": [], "choices": None,
                       "message": "worker died (exit %s)" % p.exitcode,
                       "secs": round(now - t0, 3)}
                del workers[conn]
                out.append(rec)
                if progress:
                    progress(rec)
                if todo:
                    start()
                continue
            if rec != "ready":
                out.append(rec)
                if progress:
                    progress(rec)
            give(conn)
        for conn in [c for c, w in workers.items() if w[2] is not None and now - w[2] > timeout]:
            p, seed, t0 = workers.pop(conn)
            p.kill()
            p.join(5)
            rec = {"seed": seed, "outcome": "crash", "features": [], "choices": None,
                   "message": "timeout: no result after %g s" % timeout,
                   "secs": round(now - t0, 3)}
            out.append(rec)
            if progress:
                progress(rec)
            if todo:
                start()
    return out


def group(records, outcome):
    """[(count, first line with digits as N, [seeds])] for outcome, most
    frequent first."""
    groups = {}
    for r in records:
        if r["outcome"] == outcome:
            key = re.sub(r"\d+", "N", (r["message"] or "").splitlines()[0] if r["message"] else "")
            groups.setdefault(key, []).append(r["seed"])
    return sorted(((len(s), k, sorted(s)) for k, s in groups.items()), key=lambda g: (-g[0], g[1]))


def summary(records, secs=None, jobs=1):
    """The summary's lines."""
    import collections
    n = collections.Counter(r["outcome"] for r in records)
    trained = len(records) - n["skip"]
    lines = ["%d seeds: %s" % (len(records), "  ".join("%s %d" % (o, n[o]) for o in OUTCOMES))]
    if trained:
        lines.append("refusal rate among the models PyTorch trains: %d/%d = %.1f%%"
                     % (n["refused"], trained, 100.0 * n["refused"] / trained))
    tot = sum(r.get("secs", 0) for r in records)
    if records:
        lines.append("time per seed: %.2f s (in the worker)%s" % (
            tot / len(records), "" if secs is None else
            "; wall %.0f s for %d jobs" % (secs, jobs)))
    runners = collections.Counter(line.split()[1] for r in records for line in r.get("log") or []
                                  if line.startswith("runner: "))
    if runners:
        lines.append("generated code run by: %s" % "  ".join(
            "%s %d" % kv for kv in sorted(runners.items())))
        why = collections.Counter(line[len("runner: python ("):-1].split(" (")[0]
                                  for r in records for line in r.get("log") or []
                                  if line.startswith("runner: python ("))
        lines += ["  %4d  python: %s" % (c, w) for w, c in why.most_common(5)]
    copied = [int(m.group(1)) for r in records if r["outcome"] == "ok"
              for m in [re.search(r"'offloads': (\d+)", " ".join(r.get("log") or []))] if m]
    if any(copied):
        lines.append("plans with copies to host memory: %d of %d ok seeds (%d offloads)"
                     % (sum(1 for c in copied if c), len(copied), sum(copied)))
    symbolic = [sum(1 for line in r.get("log") or []
                    if re.match(r"step \d+ sizes: \{", line)) for r in records
                if r["outcome"] == "ok"]
    if any(symbolic):
        lines.append("steps run by a plan traced with symbolic sizes: %d, in %d of %d ok seeds"
                     % (sum(symbolic), sum(1 for c in symbolic if c), len(symbolic)))
    plans = [[line.endswith(";first") for line in r.get("log") or []
              if re.match(r"step \d+ plan: ", line)] for r in records if r["outcome"] == "ok"]
    if BACKGROUND:
        lines.append("steps run by a search's first plan: %d, by its final plan after one: %d, "
                     "in %d of %d ok seeds" % (
                         sum(sum(p) for p in plans),
                         sum(sum(1 for a, b in zip(p, p[1:]) if a and not b) for p in plans),
                         sum(1 for p in plans if any(p)), len(plans)))
    for outcome in ("wrong", "crash", "refused", "skip"):
        g = group(records, outcome)
        if not g:
            continue
        lines.append("%s (%d):" % (outcome, n[outcome]))
        for c, key, seeds in g:
            lines.append("  %4d  %s  [seeds %s]" % (c, key, ", ".join(map(str, seeds[:3]))))
    return lines


def features_table(records):
    """Per feature: models, and the share of them wrong, crashed, refused."""
    import collections
    per = collections.defaultdict(collections.Counter)
    for r in records:
        for f in r.get("features") or []:
            per[f][r["outcome"]] += 1
            per[f]["all"] += 1
    lines = ["%-36s %6s %7s %7s %7s" % ("feature", "models", "wrong", "crash", "refused")]
    for f, c in sorted(per.items(), key=lambda kv: (-(kv[1]["wrong"] + kv[1]["crash"])
                                                    / kv[1]["all"], kv[0])):
        lines.append("%-36s %6d %6.0f%% %6.0f%% %6.0f%%" % (
            f, c["all"], 100.0 * c["wrong"] / c["all"], 100.0 * c["crash"] / c["all"],
            100.0 * c["refused"] / c["all"]))
    return lines


def below_minimum(python=None):
    """Where checkmate_torch declares a least torch for remat
    (train.MIN_TORCH) and the torch of python (default this one) is
    older: a line saying so; else None. Asked in a child process, so that
    this one does not import torch."""
    import subprocess
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import torch\n"
            "from checkmate_torch import train\n"
            "m = getattr(train, 'MIN_TORCH', None)\n"
            "v = tuple(int(x) for x in torch.__version__.split('+')[0].split('.')[:2])\n"
            "if m is not None and v < tuple(m):\n"
            "    print('remat needs torch >= %%s (checkmate_torch.train.MIN_TORCH); this is "
            "torch %%s' %% ('.'.join(map(str, m)), torch.__version__))\n") % PKG_ROOT
    p = subprocess.run([python or sys.executable, "-c", code], capture_output=True, text=True)
    return p.stdout.strip() or None


def revision():
    """checkmate_torch's commit, and whether its files have changes not
    committed (where PKG_ROOT is a git checkout)."""
    import subprocess
    try:
        head = subprocess.run(["git", "-C", PKG_ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", PKG_ROOT, "status", "--porcelain", "--",
                                "checkmate_torch"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        head = dirty = ""
    if not head:
        return "from %s" % PKG_ROOT
    return "at %s%s (%s)" % (head, " + changes" if dirty else "", PKG_ROOT)


def parse_seeds(text):
    a, _, b = text.partition(":")
    return range(int(a), int(b)) if b else range(int(a), int(a) + 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", nargs="?", help="the checkmate binary (else $CHECKMATE, or found)")
    ap.add_argument("--seeds", default="0:100", help="A:B, the seeds A to B-1 (default 0:100)")
    ap.add_argument("--seed", type=int, help="one seed, run in this process")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per seed (default 120)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="where the models train (default cpu)")
    ap.add_argument("--compile", action="store_true",
                    help="fuzz remat(compile=True) against eager and torch.compile")
    ap.add_argument("--alias", action="store_true",
                    help="calls whose tensors share memory (fuzz_gen.ALIAS_MODES): other models")
    ap.add_argument("--offload", action="store_true",
                    help="plans with copies to host memory (remat's offload=)")
    ap.add_argument("--background", action="store_true",
                    help="remat(background=True) where the seed's strategy is auto")
    ap.add_argument("--sizes", action="store_true",
                    help="each step at smaller sizes than the one before")
    ap.add_argument("--sac", action="store_true",
                    help="fuzz sac_policy (eager and compile=True) on the whole model")
    ap.add_argument("--json", help="write one record per seed (a JSON list) to this file")
    ap.add_argument("--features", action="store_true",
                    help="also print the outcomes per feature")
    ap.add_argument("--verbose", action="store_true", help="a line per seed; with --seed, all")
    ap.add_argument("--package-root", default=ROOT,
                    help="the folder checkmate_torch is imported from (default: this checkout)")
    o = ap.parse_args(argv)
    global PKG_ROOT, DEVICE, COMPILE, ALIAS, OFFLOAD, SIZES, BACKGROUND, SAC
    PKG_ROOT, DEVICE, COMPILE = os.path.abspath(o.package_root), o.device, o.compile
    ALIAS, OFFLOAD, SIZES, BACKGROUND, SAC = o.alias, o.offload, o.sizes, o.background, o.sac
    if SAC and (COMPILE or ALIAS or OFFLOAD or SIZES or BACKGROUND):
        ap.error("--sac runs alone (its compile=True part is in it)")
    if BACKGROUND and COMPILE:
        ap.error("--background runs with remat's eager mode only, not --compile")
    if OFFLOAD and COMPILE:
        ap.error("--offload runs with remat's eager mode only, not --compile")
    if SIZES and (COMPILE or ALIAS):
        ap.error("--sizes runs with remat's eager mode and calls that alias nothing")
    if o.binary:
        os.environ["CHECKMATE"] = os.path.abspath(o.binary)
    if PKG_ROOT not in sys.path:
        sys.path.insert(0, PKG_ROOT)
    if not os.environ.get("CHECKMATE"):
        from checkmate_torch.binary import find_checkmate
        os.environ["CHECKMATE"] = find_checkmate()
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    from tap import own_plan_cache
    own_plan_cache("checkmate-fuzz-plans-")   # every seed solves its own plan
    t0 = time.time()
    if o.seed is not None:
        torch = setup()
        print("# torch %s, %s, checkmate %s" % (torch.__version__, sys.executable,
                                                os.environ["CHECKMATE"]))
        records = [one_seed(o.seed, verbose=o.verbose)]
        r = records[0]
        if o.verbose:
            for line in r.get("log", []):
                print("# %s" % line)
        print("seed %d: %s (%.2f s)%s" % (r["seed"], r["outcome"], r["secs"],
                                          "\n" + r["message"] if r["message"] else ""))
        if o.verbose:
            for d in r.get("differences", [])[1:]:
                print("  " + d)
    else:
        import subprocess
        ver = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True).stdout.strip()
        seeds = parse_seeds(o.seeds)
        why = below_minimum()
        if why:
            print("# %s: no seed run" % why)
            if o.json:
                with open(o.json, "w") as f:
                    json.dump([], f)
            return 0
        print("# torch %s, %s, seeds %s, %d job(s), %s%s; checkmate_torch %s" % (
            ver, sys.executable, o.seeds, o.jobs, DEVICE,
            (", compile=True" if COMPILE else "") + (", aliased calls" if ALIAS else "") +
            (", offload" if OFFLOAD else "") + (", sizes" if SIZES else "") +
            (", background" if BACKGROUND else "") + (", sac_policy" if SAC else ""),
            revision()))
        sys.stdout.flush()

        def progress(r):
            if o.verbose:
                print("seed %d: %s (%.2f s) %s" % (r["seed"], r["outcome"], r.get("secs", 0),
                                                   (r["message"] or "").splitlines()[0]
                                                   if r["message"] else ""))
                sys.stdout.flush()
        records = sorted(run_many(seeds, max(1, o.jobs), o.timeout, progress),
                         key=lambda r: r["seed"])
        for line in summary(records, time.time() - t0, o.jobs):
            print(line)
        if SAC:
            import fuzz_sac
            print(fuzz_sac.summary_line(records))
        if COMPILE:
            import fuzz_compiled
            print(fuzz_compiled.summary_line(records))
            print(fuzz_compiled.memory_line(records))
        if o.features:
            for line in features_table(records):
                print(line)
    if o.json:
        with open(o.json, "w") as f:
            json.dump(records, f, indent=0)
    return 1 if any(r["outcome"] in ("wrong", "crash") for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())

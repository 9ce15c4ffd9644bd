"""Solving a graph with the `checkmate` binary: the graph written to a
temporary file, `checkmate solve` run on it, its plan and its summary
(`--json`) read back."""
import fractions
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
import weakref

from . import cache as cachemod


class SolveError(Exception):
    pass


# A size as the CLI reads one (common/size.c): a decimal number, then a
# unit or a percentage of the checkpoint-all peak.
SIZE = re.compile(r"\s*(\d+\.?\d*|\.\d+)\s*(%|[kmgt](i?b)?|b)?\s*$", re.IGNORECASE)

# The relative gap at which remat's solve ends (`solve --gap`, as
# `checkmate partition` ends by default): a plan within 0.1% of the
# proven bound is taken, since the costs it minimizes (a FLOP table, or
# times measured once) are not that exact. HF GPT-2's step at length 256,
# half the activations: dtr's plan within 0.06% of the turn bound in
# 0.24 s, where the search to the time limit (10 s) gained 0.04%.
GAP = 0.001

EXIT_WHY = {1: "bad input", 2: "bad command line", 3: "no plan fits the budget (proven)",
            4: "no plan fits the budget within the time limit"}


def budget_arg(budget, fixed_memory, checkpoint_all_peak):
    """The --budget argument: bytes, a string as the CLI takes it ("8G",
    "80%"), or a function of (fixed_memory, checkpoint_all_peak) giving
    bytes."""
    if callable(budget):
        budget = budget(fixed_memory, checkpoint_all_peak)
    if isinstance(budget, bool) or not isinstance(budget, (int, float, str)):
        raise SolveError("budget must be bytes, a string such as '8G' or '80%%', or a "
                         "function of (fixed_memory, checkpoint_all_peak); got %r" % (budget,))
    if isinstance(budget, float):
        if not math.isfinite(budget) or budget <= 0:
            raise SolveError("budget must be a positive number of bytes; got %r" % budget)
        budget = int(budget)
    if isinstance(budget, int) and budget <= 0:
        raise SolveError("budget must be a positive number of bytes; got %d" % budget)
    if isinstance(budget, str) and not SIZE.match(budget):
        raise SolveError("budget %r is not a size such as 16G, 1.5GB, 80%% or 1024" % budget)
    return str(budget)


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 10 ** 3, "m": 1 << 20,
          "mib": 1 << 20, "mb": 10 ** 6, "g": 1 << 30, "gib": 1 << 30, "gb": 10 ** 9,
          "t": 1 << 40, "tib": 1 << 40, "tb": 10 ** 12}


def size_bytes(text, of):
    """The bytes of a size as the CLI reads it (common/size.c, rounded
    down): "16G" and "16GiB" binary, "16GB" decimal, "1024" bytes, "80%"
    of `of`."""
    m = SIZE.match(text)
    x, unit = fractions.Fraction(m.group(1)), (m.group(2) or "").lower()
    return int(x * of / 100) if unit == "%" else int(x * _UNITS[unit])


# A bandwidth and a rate as the CLI reads them (common/rate.c).
_BANDWIDTH = re.compile(r"\s*(\d+\.?\d*|\.\d+)\s*([kmgt](i?b)?|b)?(/s)?\s*$", re.IGNORECASE)
_RATE = re.compile(r"(\d+\.?\d*|\.\d+)([kmgtp])?(flop/s|flops|/s)?$", re.IGNORECASE)


def copy_args(offload, cost_unit_known, measured):
    """The `solve` arguments of remat's offload= (docs/torch.md, "Offload
    to host memory"): None (no copies: none), a bandwidth (bytes a second,
    or a string such as "25GB/s"; True: measured(), the device's), or a
    dict with "bandwidth" and optionally "rate" (cost units a second,
    "100TFLOP/s": the device's, needed where the costs are FLOPs,
    cost_unit_known False) and "host_budget" (a size, "64G"). A tuple of
    strings."""
    if offload is None or offload is False:
        return ()
    given = dict(offload) if isinstance(offload, dict) else {"bandwidth": offload}
    if given.get("bandwidth") is True:
        given["bandwidth"] = measured()
    unknown = sorted(set(given) - {"bandwidth", "rate", "host_budget"})
    if unknown:
        raise SolveError("offload takes bandwidth, rate and host_budget; got %r" % unknown[0])

    def text(key, pattern, example):
        v = given.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
                and v >= 1:
            v = str(int(v))
        if not isinstance(v, str) or not pattern.match(v) or not re.search(r"[1-9]", v):
            also = " (or True: measured)" if key == "bandwidth" else ""
            raise SolveError("offload's %s must be a positive number or a string such as "
                             "%s%s; got %r" % (key, example, also, given.get(key)))
        return v.strip()
    out = ["--bandwidth", text("bandwidth", _BANDWIDTH, "'25GB/s'")]
    if "rate" in given:
        out += ["--rate", text("rate", _RATE, "'100TFLOP/s'")]
    elif not cost_unit_known:
        raise SolveError("offload with cost='flops' needs the device's rate, to weigh a copy "
                         "against a recompute: offload={'bandwidth': ..., 'rate': "
                         "'100TFLOP/s'}; or cost='time'")
    if "host_budget" in given:
        out += ["--host-budget", text("host_budget", SIZE, "'64G'")]
    return tuple(out)


_LEAST = re.compile(r"\((\d+)\),? the least any plan needs")


def in_activations(error, fixed_memory, checkpoint_all_peak):
    """error (a SolveError) with the least budget it names also as fixed
    memory + a fraction of the activations, the terms of a budget
    function such as fixed + (peak - fixed) // 2."""
    m = _LEAST.search(str(error))
    act = checkpoint_all_peak - fixed_memory
    if m is None or act <= 0:
        return error
    return annotated(error, "that is fixed memory + %.2f of the activations (fixed memory %d, "
                     "checkpoint-all peak %d)" % ((int(m.group(1)) - fixed_memory) / act,
                                                  fixed_memory, checkpoint_all_peak))


def annotated(error, text):
    """A SolveError of error's message with "; text" added before its
    closing "(exit N)", which stays last."""
    msg = str(error)
    m = re.search(r"\s*\(exit \d+\)\s*$", msg)
    at = m.start() if m else len(msg)
    return SolveError("%s; %s%s" % (msg[:at], text, msg[at:]))


def _reason(summary, rc, stderr):
    """What the binary says went wrong: the summary's reason (the budget and
    the least budget in human units), else its last line on stderr, else
    what its exit status means."""
    if summary.get("reason"):
        return "%s: %s" % (summary.get("status") or "no plan", summary["reason"])
    lines = [ln for ln in stderr.strip().splitlines() if "hint:" not in ln]
    return lines[-1] if lines else EXIT_WHY.get(rc, "failed")


def solve(binary, doc, budget, strategy, time_limit, cache=None, copies=()):
    """(plan, hit): the plan (a dict) `checkmate solve` writes for graph
    doc, taken from cache (a cache.Cache, or None) where it holds it (hit
    True), else solved and kept there. copies: copy_args's, to plan with
    copies to host memory."""
    return _through(cache, binary, doc, budget, solve_kind(strategy, copies), time_limit,
                    lambda: _solve(binary, doc, budget, strategy, time_limit, copies))


def partition(binary, doc, budget, time_limit, cache=None):
    """(answer, hit): what `checkmate partition` writes for graph doc (a
    dict: saved and recomputed node names, cost, memory, status), from
    cache where it holds it, else solved and kept there."""
    return _through(cache, binary, doc, budget, "partition", time_limit,
                    lambda: _partition(binary, doc, budget, time_limit))


def cached(binary, doc, budget, strategy, time_limit, cache, copies=()):
    """The plan cache holds for these settings (copies: copy_args's), or
    None."""
    return None if cache is None else \
        cache.get(cachemod.plan_key(binary, doc, budget, solve_kind(strategy, copies),
                                    time_limit))


def solve_kind(strategy, copies):
    """What a cached answer was solved by: the strategy and the gap, with
    the copies' arguments where there are some."""
    return " ".join((strategy, "--gap", str(GAP)) + tuple(copies))


def _through(cache, binary, doc, budget, kind, time_limit, run):
    """(run(), False), or (the cached answer, True) where cache holds the
    one for these settings."""
    key = cachemod.plan_key(binary, doc, budget, kind, time_limit)
    answer = None if cache is None else cache.get(key)
    if answer is not None:
        return answer, True
    answer = run()
    if cache is not None:
        cache.put(key, answer)
    return answer, False


def _partition(binary, doc, budget, time_limit):
    with tempfile.TemporaryDirectory(prefix="checkmate-") as d:
        graph = os.path.join(d, "graph.json")
        out = os.path.join(d, "partition.json")
        with open(graph, "w") as f:
            json.dump(doc, f)
        p = subprocess.run([binary, "partition", graph, "--budget", budget, "--time-limit",
                            str(time_limit), "--output", out, "--quiet"],
                           capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(out):
            # The summary's status and reason (an infeasible budget), else
            # the last line on stderr.
            said = dict(ln.split(None, 1) for ln in p.stdout.splitlines() if " " in ln)
            why = ("%s: %s" % (said["status"], said["reason"]) if "reason" in said else
                   (p.stderr.strip().splitlines() or [EXIT_WHY.get(p.returncode, "failed")])[-1])
            raise SolveError("checkmate partition --budget %s: %s (exit %d)"
                             % (budget, why.replace(graph, doc.get("name", "graph")),
                                p.returncode))
        with open(out) as f:
            return json.load(f)


def _solve(binary, doc, budget, strategy, time_limit, copies):
    return Search(binary, doc, budget, strategy, time_limit, copies).result()


def start(binary, doc, budget, time_limit, cache=None):
    """(plan, hit, search): auto's plan for graph doc from cache where it
    holds it (search None), else the first plan that fits from a search
    that goes on beside the caller (`solve --first-plan`; hit False):
    search.result() is its final plan, put in cache then."""
    key = cachemod.plan_key(binary, doc, budget, solve_kind("auto", ()), time_limit)
    answer = None if cache is None else cache.get(key)
    if answer is not None:
        return answer, True, None
    search = Search(binary, doc, budget, "auto", time_limit, (), first=True,
                    keep=None if cache is None else (lambda plan: cache.put(key, plan)))
    return search.first(), False, search


class Search:
    """`checkmate solve` on graph doc in a process of its own, in a
    temporary directory. first=True: it writes its first plan that fits
    as soon as it has one (first()), then searches on (done(),
    result()). keep(plan) is called with the final plan. The process is
    ended (SIGKILL) when the Search is collected or the interpreter
    exits before it has."""

    def __init__(self, binary, doc, budget, strategy, time_limit, copies=(), first=False,
                 keep=None):
        self._dir = tempfile.mkdtemp(prefix="checkmate-")
        self._path = {k: os.path.join(self._dir, k + ".json")
                      for k in ("graph", "plan", "summary", "first")}
        with open(self._path["graph"], "w") as f:
            json.dump(doc, f)
        self._name, self._keep = doc.get("name", "graph"), keep
        self._what = "checkmate solve --budget %s --strategy %s%s" % (
            budget, strategy, "".join(" " + c for c in copies))
        cmd = [binary, "solve", self._path["graph"], "--budget", budget, "--strategy", strategy,
               "--time-limit", str(time_limit), "--gap", str(GAP), "--plan", self._path["plan"],
               "--json", self._path["summary"], "--quiet"] + list(copies)
        if first:
            cmd += ["--first-plan", self._path["first"]]
        self._err = open(os.path.join(self._dir, "stderr"), "w+")
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._err)
        self._answer = None
        self._end = weakref.finalize(self, _end, self._proc, self._err, self._dir)

    def cancel(self):
        """Ends the process, whatever it found."""
        self._end()

    def done(self):
        """True once the process has ended."""
        return self._answer is not None or self._proc.poll() is not None

    def first(self):
        """The first plan that fits (a dict), once written; the final plan
        where the process ended without one; SolveError where it ended
        without a plan."""
        while not os.path.exists(self._path["first"]):
            if self._proc.poll() is not None:
                return self.result()
            time.sleep(0.005)
        with open(self._path["first"]) as f:
            return json.load(f)

    def result(self):
        """The final plan (a dict), waiting for the process to end;
        SolveError where it found none."""
        if self._answer is None:
            try:
                self._answer = self._read(self._proc.wait())
            except SolveError as e:
                self._answer = e
            finally:
                self._end()
            if self._keep is not None and isinstance(self._answer, dict):
                self._keep(self._answer)
        if isinstance(self._answer, SolveError):
            raise self._answer
        return self._answer

    def _read(self, rc):
        if rc == 0 and os.path.exists(self._path["plan"]):
            with open(self._path["plan"]) as f:
                return json.load(f)
        info = {}
        if os.path.exists(self._path["summary"]):
            with open(self._path["summary"]) as f:
                info = json.load(f)
        try:
            self._err.seek(0)
            said = self._err.read()
        except ValueError:      # closed: the search was cancelled
            said = ""
        err = _reason(info, rc, said).replace(self._path["graph"], self._name)
        raise SolveError("%s: %s (exit %d)" % (self._what, err, rc))


def _end(proc, err, d):
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    err.close()
    shutil.rmtree(d, ignore_errors=True)

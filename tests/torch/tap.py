"""What the PyTorch test programs share: TAP (ok() prints one numbered
line, and up to six lines of detail when it fails; skip() the numbered line
of a check that could not run, `ok N - WHAT # SKIP WHY`, counted apart and
never as a pass; finish() a line "# K skipped" when some were, then the
closing "N passed, M failed" and the exit status), the long checks
(long_checks()), their start (torch_setup, remat_or_finish) and cli(),
checkmate_torch's command line run in this process."""
import contextlib
import io
import os
import sys

_count = {"passed": 0, "failed": 0, "skipped": 0}


def _next():
    return _count["passed"] + _count["failed"] + _count["skipped"] + 1


def ok(cond, what, detail=None):
    n = _next()
    _count["passed" if cond else "failed"] += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))
    if not cond and detail:
        for line in str(detail).strip().splitlines()[-6:]:
            print("#   " + line)
    sys.stdout.flush()
    return cond


def skip(what, why):
    """A check that cannot run here (a library missing, a clock too coarse):
    TAP's skip directive, neither passed nor failed."""
    n = _next()
    _count["skipped"] += 1
    print("ok %d - %s # SKIP %s" % (n, what, why))
    sys.stdout.flush()


# `make test-long` sets CHECKMATE_LONG=1: the long checks run too
# (docs/testing.md, "Two suites").
LONG = os.environ.get("CHECKMATE_LONG") == "1"


def long_checks(what):
    """Whether the long checks `what` run: with CHECKMATE_LONG=1 (make
    test-long, or by hand), else a comment line says where they run."""
    if not LONG:
        print("# in make test-long: %s" % what)
    return LONG


def finish():
    if _count["skipped"]:
        print("# %d skipped" % _count["skipped"])
    print("%d passed, %d failed" % (_count["passed"], _count["failed"]))
    sys.exit(1 if _count["failed"] else 0)


def torch_setup():
    """The start of a PyTorch test program: argv[1] (the checkmate binary)
    as $CHECKMATE, torch imported (else one failed line, and the end), one
    thread, a header line. Returns torch."""
    if len(sys.argv) > 1:
        os.environ["CHECKMATE"] = os.path.abspath(sys.argv[1])
    try:
        import torch
    except ImportError as e:
        ok(False, "torch imports in %s" % sys.executable, e)
        finish()
    torch.set_num_threads(1)
    own_plan_cache("checkmate-plans-")
    print("# torch %s, %s" % (torch.__version__, sys.executable))
    return torch


def own_plan_cache(prefix):
    """Plans kept on disk (checkmate_torch/cache.py) go to a directory of
    this program's own, removed at its end, unless $CHECKMATE_CACHE_DIR
    names one: every run solves, none reads another's plans."""
    if "CHECKMATE_CACHE_DIR" not in os.environ:
        import atexit
        import shutil
        import tempfile
        d = tempfile.mkdtemp(prefix=prefix)
        atexit.register(shutil.rmtree, d, True)
        os.environ["CHECKMATE_CACHE_DIR"] = d


def remat_or_finish():
    """On a torch that remat does not support (older than
    checkmate_torch.train.MIN_TORCH) one line checks that remat refuses it
    with one line, and the program ends there."""
    import torch
    from checkmate_torch.private import version
    from checkmate_torch.train import MIN_TORCH, RematError, remat
    if version() >= MIN_TORCH:
        return
    try:
        remat(torch.nn.Linear(2, 2), (torch.randn(1, 2),), budget="100%")
        ok(False, "torch %s: remat refused" % torch.__version__)
    except RematError as e:
        ok("torch >=" in str(e) and "\n" not in str(e),
           "torch %s: remat refused in one line: %s" % (torch.__version__, e))
    finish()


def cli(argv):
    """checkmate_torch's main() in this process: (status, stdout, stderr)."""
    from checkmate_torch.__main__ import main
    out, err = io.StringIO(), io.StringIO()
    status = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv) or 0
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
    return status, out.getvalue(), err.getvalue()

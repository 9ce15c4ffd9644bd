"""Where the `checkmate` binary is: $CHECKMATE, else the one installed
inside this package (bin/checkmate, which `pip install` builds in), else
`checkmate` on PATH, else the one of the checkout this package sits in
(./checkmate, then build/checkmate). `main` is the `checkmate` command of
a pip install: it runs the package's binary."""
import os
import shutil
import sys

ENV = "CHECKMATE"
_HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLED = os.path.join(_HERE, "bin", "checkmate")


class BinaryError(Exception):
    """No usable checkmate binary; the message says how to provide one."""


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _checkout():
    top = os.path.dirname(_HERE)
    for path in (os.path.join(top, "checkmate"), os.path.join(top, "build", "checkmate")):
        if _executable(path):
            return path
    return None


def find_checkmate():
    """The path of the checkmate binary to run; BinaryError if there is none."""
    env = os.environ.get(ENV)
    if env:
        if not _executable(env):
            raise BinaryError("$%s is %s: not an executable file" % (ENV, env))
        return env
    if _executable(BUNDLED):
        return BUNDLED
    found = shutil.which("checkmate")
    if found:
        return found
    found = _checkout()
    if found:
        return found
    raise BinaryError("no checkmate binary: set $%s to its path, put it on PATH "
                      "(make install), build it in the checkout (make), or pip install "
                      "the repository, which builds it into the package" % ENV)


def main():
    """The `checkmate` command of a pip install: execs the package's binary
    (or, in an editable install, the checkout's), never one on PATH, which
    may be this command itself."""
    path = BUNDLED if _executable(BUNDLED) else _checkout()
    if path is None:
        print("checkmate: %s is missing: reinstall checkmate-torch from the repository "
              "(pip install CLONE)" % BUNDLED, file=sys.stderr)
        return 1
    os.execv(path, [sys.argv[0]] + sys.argv[1:])

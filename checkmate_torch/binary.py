"""Where the `checkmate` binary is: $CHECKMATE, else `checkmate` on PATH,
else the one of the checkout this package sits in (./checkmate, then
build/checkmate)."""
import os
import shutil

ENV = "CHECKMATE"


class BinaryError(Exception):
    """No usable checkmate binary; the message says how to provide one."""


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_checkmate():
    """The path of the checkmate binary to run; BinaryError if there is none."""
    env = os.environ.get(ENV)
    if env:
        if not _executable(env):
            raise BinaryError("$%s is %s: not an executable file" % (ENV, env))
        return env
    found = shutil.which("checkmate")
    if found:
        return found
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in (os.path.join(top, "checkmate"), os.path.join(top, "build", "checkmate")):
        if _executable(path):
            return path
    raise BinaryError("no checkmate binary: set $%s to its path, put it on PATH "
                      "(make install), or build it in the checkout (make)" % ENV)

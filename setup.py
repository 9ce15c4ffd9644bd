"""pip's build of checkmate-torch (the metadata is pyproject.toml's): the
Makefile builds the checkmate binary (build/checkmate, linking GLPK, Cbc
and Jansson), which goes into the package as checkmate_torch/bin/checkmate,
where checkmate_torch.binary looks first after $CHECKMATE. A missing tool
or library is one line naming the Debian package that brings it."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution
from setuptools.errors import SetupError

TOP = os.path.dirname(os.path.abspath(__file__))


def _ok(cmd, stdin=""):
    try:
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True).returncode == 0
    except OSError:
        return False


def _missing():
    """The Debian package of the first tool or library the build lacks."""
    cc = os.environ.get("CC", "cc")
    checks = [
        (lambda: shutil.which("make"), "make", "make"),
        (lambda: shutil.which(cc), "a C compiler (%s)" % cc, "gcc"),
        (lambda: shutil.which("pkg-config"), "pkg-config", "pkg-config"),
        (lambda: _ok(["pkg-config", "--exists", "jansson"]), "Jansson", "libjansson-dev"),
        (lambda: _ok(["pkg-config", "--exists", "cbc"]), "Cbc", "coinor-libcbc-dev"),
        (lambda: _ok([cc, "-E", "-x", "c", "-"], "#include <glpk.h>\n"), "GLPK", "libglpk-dev"),
    ]
    for check, what, package in checks:
        if not check():
            return what, package
    return None


class BuildWithBinary(build_py):
    def run(self):
        super().run()
        missing = _missing()
        if missing:
            raise SetupError("checkmate-torch: building the checkmate binary needs %s: "
                             "apt-get install %s (or make deps)" % missing)
        # The make of a caller (make torch2) must not hand its jobserver down.
        env = {k: v for k, v in os.environ.items()
               if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        if subprocess.run(["make", "--no-print-directory", "-C", TOP, "BUILD=build",
                           "build/checkmate"], env=env).returncode != 0:
            raise SetupError("checkmate-torch: make build/checkmate failed (above)")
        dest = os.path.join(self.build_lib, "checkmate_torch", "bin")
        self.mkpath(dest)
        self.copy_file(os.path.join(TOP, "build", "checkmate"), os.path.join(dest, "checkmate"))


class BinaryDistribution(Distribution):
    """A wheel for this platform, not a pure-Python one: it holds a binary."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithBinary}, distclass=BinaryDistribution)

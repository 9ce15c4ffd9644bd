"""Prints the site directory that `make install` puts checkmate_torch in
under PREFIX (argv[1]) for the python running this: the one that python
already reads (/usr/local/lib/pythonX.Y/dist-packages on Debian, the user
site for ~/.local), else PREFIX/lib/pythonX.Y/site-packages, the directory
to put on PYTHONPATH."""
import os
import site
import sys

prefix = os.path.normpath(os.path.abspath(sys.argv[1]))
lib = os.path.join(prefix, "lib", "python%d.%d" % sys.version_info[:2])
read = set(sys.path) | {site.getusersitepackages()}
for d in ("dist-packages", "site-packages"):
    if os.path.join(lib, d) in read:
        print(os.path.join(lib, d))
        break
else:
    print(os.path.join(lib, "site-packages"))

"""Plans kept on disk, so that a second run of the same training does not
solve again: one JSON file per (graph, budget, strategy, time limit,
binary), named by the SHA-256 of all five. The graph is the document the
binary is given (nodes, edges, costs, sizes), so any change to the model,
the inputs' shapes, the costs or the memory model is another key; the
binary by the SHA-256 of its file, so a rebuilt solver solves again.
Only plans are kept, never failures. A file that does not read back as a
plan of the same key is a miss (and is written again)."""
import hashlib
import json
import os
import tempfile

ENV = "CHECKMATE_CACHE_DIR"
FORMAT = 1
_binary_digests = {}


def default_dir():
    """$CHECKMATE_CACHE_DIR, else $XDG_CACHE_HOME/checkmate/plans, else
    ~/.cache/checkmate/plans."""
    env = os.environ.get(ENV)
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "checkmate", "plans")


def _binary_digest(path):
    st = os.stat(path)
    k = (path, st.st_size, st.st_mtime_ns)
    if k not in _binary_digests:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _binary_digests[k] = h.hexdigest()
    return _binary_digests[k]


def key(binary, doc, budget, strategy, time_limit):
    """The hex key of a solve."""
    h = hashlib.sha256()
    what = {"format": FORMAT, "binary": _binary_digest(binary), "budget": str(budget),
            "strategy": strategy, "time_limit": float(time_limit)}
    h.update(json.dumps(what, sort_keys=True).encode())
    h.update(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


class PlanCache:
    """Plans in directory path (made on first put)."""

    def __init__(self, path):
        self.path = path

    def _file(self, k):
        return os.path.join(self.path, k[:2], k + ".json")

    def get(self, k):
        """The plan kept under k, or None."""
        try:
            with open(self._file(k)) as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != k \
                or not isinstance(entry.get("plan"), dict):
            return None
        return entry["plan"]

    def put(self, k, plan):
        """Keeps plan under k; a cache that cannot be written is no cache
        (the plan is still used), so OSError is not raised."""
        target = self._file(k)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".plan-", dir=os.path.dirname(target))
        except OSError:
            return False
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"key": k, "plan": plan}, f)
            os.replace(tmp, target)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        return True


def open_cache(setting):
    """The PlanCache remat's cache= names: True the default directory,
    a string that directory, False or None no cache."""
    if setting is True:
        return PlanCache(default_dir())
    if isinstance(setting, (str, os.PathLike)):
        return PlanCache(os.fspath(setting))
    if setting in (False, None):
        return None
    raise ValueError("cache must be True, False or a directory; got %r" % (setting,))

"""Plans and measured op times kept on disk, so that a second run of the
same training neither solves nor measures again. One JSON file per key,
under ROOT/plans or ROOT/costs:
  plan_key   the graph the binary is given (every node's op, size, cost
             and inputs: any change to the model, the inputs' shapes, the
             costs or the memory model is another key), the budget, the
             strategy, the time limit and the binary (the SHA-256 of its
             file: a rebuilt solver solves again);
  cost_key   the traced step's code (every op and its arguments), the
             graph with FLOP costs (the sizes), the device, the number of
             threads and the torch version;
  rate_key   the device, the dtype, the number of threads and the torch
             version (jointcost.rates).
Only results are kept, never failures. A file that does not read back as
a value of the same key is a miss (and is written again)."""
import hashlib
import json
import os
import tempfile

ENV = "CHECKMATE_CACHE_DIR"
FORMAT = 1
_binary_digests = {}


def default_dir():
    """$CHECKMATE_CACHE_DIR, else $XDG_CACHE_HOME/checkmate, else
    ~/.cache/checkmate."""
    env = os.environ.get(ENV)
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "checkmate")


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


def _digest(what, *docs):
    h = hashlib.sha256()
    h.update(json.dumps(dict(what, format=FORMAT), sort_keys=True).encode())
    for d in docs:
        h.update(b"\0")
        h.update(d if isinstance(d, bytes) else
                 json.dumps(d, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def plan_key(binary, doc, budget, strategy, time_limit):
    """The key of a solve: doc is the graph the binary is given."""
    return "plans", _digest({"binary": _binary_digest(binary), "budget": str(budget),
                             "strategy": strategy, "time_limit": float(time_limit)}, doc)


def cost_key(code, doc, device, threads, torch_version, kind=None):
    """The key of a measurement of every node's time: code is the traced
    step's source, doc its graph with FLOP costs; kind, where given, what
    was measured besides (compiled.py's joint graphs: times and copies,
    on real tensors)."""
    what = {"device": device, "threads": threads, "torch": torch_version}
    if kind is not None:
        what["kind"] = kind
    return "costs", _digest(what, code.encode(), doc)


def rate_key(device, dtype, threads, torch_version):
    """The key of jointcost.rates's measurement."""
    return "costs", _digest({"rate": "flops per byte and per launch: least times, real "
                                     "tensors, a copy into a buffer", "device": device, "dtype": dtype,
                             "threads": threads, "torch": torch_version})


class Cache:
    """Values (dicts) in directory root (made on first put), by key."""

    def __init__(self, root):
        self.root = root

    def _file(self, key):
        kind, k = key
        return os.path.join(self.root, kind, k[:2], k + ".json")

    def get(self, key):
        """The value kept under key, or None."""
        try:
            with open(self._file(key)) as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key[1] \
                or not isinstance(entry.get("value"), dict):
            return None
        return entry["value"]

    def put(self, key, value):
        """Keeps value under key; a cache that cannot be written is no
        cache (the value is still used), so OSError is not raised."""
        target = self._file(key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".plan-", dir=os.path.dirname(target))
        except OSError:
            return False
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"key": key[1], "value": value}, f)
            os.replace(tmp, target)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        return True


def open_cache(setting):
    """The Cache remat's cache= names: True the default directory, a
    string that directory, False or None no cache."""
    if setting is True:
        return Cache(default_dir())
    if isinstance(setting, (str, os.PathLike)):
        return Cache(os.fspath(setting))
    if setting in (False, None):
        return None
    raise ValueError("cache must be True, False or a directory; got %r" % (setting,))

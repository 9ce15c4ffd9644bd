"""Plans and measured op times kept on disk, so that a second run of the
same training neither solves nor measures again. One JSON file per key,
under ROOT/plans, ROOT/shapes or ROOT/costs:
  plan_key   the graph the binary is given (every node's op, size, cost
             and inputs: any change to the model, the inputs' shapes, the
             costs or the memory model is another key), the budget, the
             strategy, the time limit and the binary (the SHA-256 of its
             file: a rebuilt solver solves again);
  cost_key   the traced step's code (every op and its arguments), the
             graph with FLOP costs (the sizes), the device, the number of
             threads and the torch version;
  rate_key   the device, the dtype, the number of threads and the torch
             version (jointcost.rates);
  info_key   a compiled graph's partition figures (plan_info), by
             partition_uuid, the graph dynamo gives the backend with its
             inputs' sizes, and autocast's state;
  shape_key  the plans made for a graph's structure (train.structure:
             its ops and edges, sizes aside) with the budget as given (a
             function by _function_text), the strategy, the time limit,
             the costs, the binary and this package's code: a later run
             whose inputs have other sizes takes one of them where it
             fits (train._reused) instead of solving.
partition_uuid is also the compiled mode's partitioner's uuid in
AOTAutograd's cache key (compiled.py): everything that decides a
partition besides the joint graph.
Only results are kept, never failures. A file that does not read back as
a value of the same key is a miss (and is written again)."""
import functools
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
                                     "tensors, a copy into a buffer",
                             "device": device, "dtype": dtype, "threads": threads,
                             "torch": torch_version})


@functools.lru_cache(maxsize=None)
def _package_digest():
    """The SHA-256 of checkmate_torch's Python files: its memory model
    and costs decide a partition as much as the binary does. Read once a
    process."""
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            h.update(name.encode() + b"\0")
            with open(os.path.join(here, name), "rb") as f:
                h.update(f.read() + b"\0")
    return h.hexdigest()


_SIMPLE = (int, float, str, bool, type(None))


def _function_text(fn):
    """A text that tells budget function fn from any other in every
    process (its bytecode, constants, defaults, closure and the globals
    and builtins it names, where each is a number, a string or a
    builtin), or None where something it reads is none of these."""
    code = getattr(fn, "__code__", None)
    if code is None or any(not isinstance(c, _SIMPLE + (tuple, frozenset))
                           for c in code.co_consts):
        return None
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    named = {}
    builtins = fn.__globals__.get("__builtins__", {})
    builtins = builtins if isinstance(builtins, dict) else vars(builtins)
    for n in code.co_names:
        if n in fn.__globals__:
            v = fn.__globals__[n]
        elif n in builtins:
            v = builtins[n]
        else:
            continue   # an attribute's name
        if type(v).__name__ == "builtin_function_or_method" or isinstance(v, type):
            v = "builtin " + getattr(v, "__name__", n)
        named[n] = v
    values = list(fn.__defaults__ or ()) + cells + list(named.values())
    if any(not isinstance(v, _SIMPLE) for v in values):
        return None
    return repr((code.co_code.hex(), code.co_consts, code.co_names, fn.__defaults__, cells,
                 sorted(named.items())))


def partition_uuid(binary, budget, time_limit, cost):
    """What decides a compiled step's partition besides its joint graph:
    the budget (a function by _function_text), the time limit, the
    costs, the binary and this package's code; None for a budget
    function _function_text cannot tell apart."""
    b = _function_text(budget) if callable(budget) else str(budget)
    if b is None:
        return None
    return "checkmate-" + _digest({"budget": b, "time_limit": float(time_limit), "cost": cost,
                                   "binary": _binary_digest(binary),
                                   "package": _package_digest()})


def shape_key(binary, structure, budget, strategy, time_limit, cost):
    """The key of the plans kept for a graph structure (see above), or
    None for a budget function _function_text cannot tell apart."""
    b = _function_text(budget) if callable(budget) else str(budget)
    if b is None:
        return None
    return "shapes", _digest({"budget": b,
                             "strategy": strategy, "time_limit": float(time_limit),
                             "cost": cost, "binary": _binary_digest(binary),
                             "package": _package_digest()}, structure)


def info_key(uuid, graph_code, inputs, modes):
    """The key of a compiled graph's plan_info: uuid (partition_uuid),
    the code of the graph dynamo gives the backend, inputs, the text of
    its inputs' trace.Inputs key (sizes, strides, dtypes, ...), and modes,
    the text of what else makes another joint graph of the same graph
    (trace.autocast_key: an autocast process's partition is not an fp32
    one's, though dynamo's graph is the same)."""
    return "plans", _digest({"partition figures": uuid}, graph_code.encode(), inputs, modes)


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


def kept_or_measured(cache, key, valid, measure):
    """The value cache keeps under key where valid(value), else
    measure()'s, kept there (cache None: no cache)."""
    value = cache.get(key) if cache is not None else None
    if value is not None and valid(value):
        return value
    value = measure()
    if cache is not None:
        cache.put(key, value)
    return value


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

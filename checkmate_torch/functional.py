"""Making a traced step functional: every write becomes a new value.

make_fx records the ATen ops a step runs, in-place writes included. A plan
computes a node again, at another time, so a write must not change a
value that something computed later may read. This pass rewrites the fx
graph, in traced order, so that no op writes a value another node reads
(what torch's functionalization does, on our own graph):

  - an in-place op (relu_, add_, fill_, bernoulli_) or an out= op stays
    one node, run on a clone of what it writes (graph.call); its result is
    the written value's new version, and every later reader of the value
    reads it instead;
  - an op that writes arguments it does not return (batch norm's running
    statistics) becomes functional_op: the op on clones of those
    arguments, returning its results and then the written clones, the new
    versions;
  - a write to a view of a value (t[:, 0] = x, relu_ on a reshaped linear
    output) that is read afterwards, whole or through another view, gets
    write_through: a clone of the whole with the view's new values copied
    in, the whole's new version; a view of that whole taken before the
    write and read after it (h.t() before h[:, 0] = 0) is taken again
    from the new version with the same view ops, for its later readers;
  - a version of a parameter, buffer or input (s.n += 1, an EMA buffer,
    Embedding(max_norm=) renormalising its weight) is recorded: the last
    one is written back into the real tensor once, at the end of the
    forward (lower.py: the write_back instruction), as an ordinary step leaves it.

Refused (FunctionalError naming the node): a write through views whose
shapes depend on other tensors.
"""
import functools
import operator

import torch

from . import private


# The meta key of the views this pass takes again: ops the traced step did
# not call (strides.calls leaves them out of its count of each op's calls).
TAKEN_AGAIN = "checkmate_taken_again"


class FunctionalError(Exception):
    """A write the pass cannot make functional; names the node."""


_is_op = private.is_op


@functools.lru_cache(maxsize=None)
def written_arg(target):
    """Index of the positional argument an in-place op writes and returns,
    or the name of the keyword argument an out= op writes (`out`), or
    None."""
    if not _is_op(target):
        return None
    rets = private.schema(target).returns
    for i, a in enumerate(private.schema(target).arguments):
        ai = a.alias_info
        if ai is not None and ai.is_write:
            if any(r.alias_info is not None and r.alias_info.before_set & ai.before_set
                   for r in rets):
                return a.name if a.kwarg_only else i
    return None


def written_value(node):
    """The fx value node writes in place (its written_arg), or None."""
    w = written_arg(node.target)
    v = node.kwargs.get(w) if isinstance(w, str) else (
        node.args[w] if w is not None and w < len(node.args) else None)
    return v if isinstance(v, torch.fx.Node) else None


# Batch norm ops that update the running statistics they are given (args 3
# and 4) in training mode, although torch 1.13's schemas do not say so.
_BN_UPDATES = ("native_batch_norm", "cudnn_batch_norm", "miopen_batch_norm")


def mutated_args(target, args):
    """Indices of the arguments an op writes besides what it returns: the
    schema's mutable arguments, and the running statistics of a batch norm
    in training mode."""
    if not _is_op(target):
        return ()
    out = [i for i, a in enumerate(private.schema(target).arguments)
           if a.alias_info is not None and a.alias_info.is_write and i < len(args)
           and not a.kwarg_only]
    w = written_arg(target)
    out = [i for i in out if i != w]
    name = target.overloadpacket.__name__
    if name in _BN_UPDATES and len(args) > 5 and args[5] is True:
        out += [3, 4]
    return tuple(sorted(set(out)))


def aliased_arg(target):
    """Index of the argument whose storage a view op's result shares, or
    None. _unsafe_view says nothing in its schema but returns a view."""
    if target is operator.getitem:
        return 0
    if not _is_op(target):
        return None
    if target.overloadpacket is torch.ops.aten._unsafe_view:
        return 0
    # In ATen schemas a read-only argument with an alias annotation,
    # Tensor(a) self -> Tensor(a) or Tensor(a -> *) self -> Tensor(a)[]
    # (split, unbind), is one whose storage the result may share.
    for i, a in enumerate(private.schema(target).arguments):
        ai = a.alias_info
        if ai is not None and not ai.is_write:
            return i
    return None


def functional_op(op, mutated, *args, **kwargs):
    """op on clones of the arguments at the indices `mutated`: its results
    (a tuple), then those clones, as op left them."""
    return written_op(op, mutated, mutated, *args, **kwargs)


def written_op(op, mutated, cloned, *args, **kwargs):
    """functional_op where only the arguments at the indices `cloned` (of
    `mutated`) are cloned: op writes the others in place, as the ordinary
    step does, where nothing reads them afterwards (codegen.py)."""
    args = list(args)
    for i in cloned:
        args[i] = args[i].clone()
    out = op(*args, **kwargs)
    out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return out + tuple(args[i] for i in mutated)


def clone_strided(t):
    """A copy of t with t's strides, gaps included (clone() makes a slice
    of a larger tensor contiguous): an op writing it in place then gives
    its result the layout the ordinary step's in-place write leaves, which
    later kernels (a matrix product's) may depend on for their last bits."""
    if t.is_contiguous() or any(st == 0 for st, n in zip(t.stride(), t.shape) if n > 1):
        return t.clone()
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device).copy_(t)


def write_through(whole, part, chain):
    """A clone of whole whose view `chain` ((op, other args) applied in
    order) holds part's values."""
    out = clone_strided(whole)   # the whole's layout, as the ordinary step writes it
    v = out
    for op, rest in chain:
        v = op(v, *rest)
    v.copy_(part)
    return out


def op_of(node):
    """The ATen op a node runs: functional_op's wrapped op, else its
    target."""
    return node.args[0] if node.target is functional_op else node.target


def _view_source(n):
    """The value view node n is taken from, or None (getitem of a tuple is
    an element, its own storage)."""
    if n.op != "call_function" or n.target is operator.getitem:
        return None
    if written_arg(n.target) is not None:
        return None
    a = aliased_arg(n.target)
    if a != 0 or not n.args or not isinstance(n.args[0], torch.fx.Node):
        return None
    return n.args[0]


class _Pass:
    def __init__(self, gm):
        self.g = gm.graph
        self.pos = {n: float(i) for i, n in enumerate(self.g.nodes)}
        self.version_of = {}   # a new version -> the placeholder it is a version of
        self.final = {}        # placeholder -> its last version

    def _insert_after(self, at, target, args, kwargs=None):
        nxt = at.next
        with self.g.inserting_after(at):
            n = self.g.call_function(target, tuple(args), dict(kwargs or {}))
        self.pos[n] = (self.pos[at] + self.pos.get(nxt, self.pos[at] + 2)) / 2
        return n

    def _later_users(self, value, after):
        return [u for u in value.users if self.pos[u] > self.pos[after]]

    def _new_version(self, old, new, after):
        """new is old's new value from `after` on: later readers of old read
        new; a version of a placeholder is recorded."""
        for u in self._later_users(old, after):
            if u is not new:
                u.replace_input_with(old, new)
        p = old if old.op == "placeholder" else self.version_of.get(old)
        if p is not None:
            self.version_of[new] = p
            self.final[p] = new

    def _views(self, root):
        """Every view taken (directly or not) from root."""
        out, stack = [], [root]
        while stack:
            x = stack.pop()
            for u in x.users:
                if _view_source(u) is x:
                    out.append(u)
                    stack.append(u)
        return out

    def in_place(self, n, value):
        """n writes value in place (on a copy, graph.call): n is value's new
        version; where value is a view of a whole read later (whole, or
        through another of its views), or of a parameter, buffer or input,
        write_through makes the whole's, and each view of the whole taken
        before the write and read after it is taken again from it."""
        chain, root = self._chain(value)
        stale = []
        if chain:
            stale = [w for w in self._views(root) if w is not value and self.pos[w] < self.pos[n]
                     and self._later_users(w, n)]
        self._new_version(value, n, n)
        if chain and (stale or self._later_users(root, n) or root.op == "placeholder"
                      or root in self.version_of):
            for c in set(chain) | {x for w in stale for x in self._chain(w)[0]}:
                if any(isinstance(a, torch.fx.Node) for a in
                       list(c.args[1:]) + list(c.kwargs.values())):
                    raise FunctionalError("node %s (op %s): writes a view of %s through view %s, "
                                          "whose shape depends on other tensors; not supported"
                                          % (n.name, n.target, root.name, c.name))
            steps = tuple((c.target, tuple(c.args[1:])) for c in reversed(chain))
            wt = self._insert_after(n, write_through, (root, n, steps))
            self._new_version(root, wt, wt)
            self._take_again(root, wt, n, stale)

    @staticmethod
    def _chain(v):
        """(the views from v up to the value they are taken from, v first;
        that value)."""
        out = []
        while _view_source(v) is not None:
            out.append(v)
            v = _view_source(v)
        return out, v

    def _take_again(self, root, new_root, write, stale):
        """Each view of `stale` (of root, read after `write`) taken again,
        with the same view ops, from root's new version new_root (right
        after it): its readers after the write read the new view, which
        sees the written values as the old one does in an ordinary step."""
        again, at = {root: new_root}, new_root
        for w in sorted(stale, key=self.pos.__getitem__):
            for x in reversed(self._chain(w)[0]):
                if x not in again:
                    at = self._insert_after(at, x.target, (again[_view_source(x)],) +
                                            tuple(x.args[1:]), x.kwargs)
                    at.meta[TAKEN_AGAIN] = True
                    again[x] = at
            for u in self._later_users(w, write):
                if u is not again[w]:
                    u.replace_input_with(w, again[w])

    def side_writes(self, n, mutated):
        multi = len(private.schema(n.target).returns) != 1 or \
            str(private.schema(n.target).returns[0].type).endswith("[]")
        f = self._insert_after(n, functional_op, (n.target, mutated) + tuple(n.args), n.kwargs)
        last = f
        if multi:
            k0 = len(private.schema(n.target).returns)
            n.replace_all_uses_with(f)
        else:
            k0 = 1
            last = self._insert_after(f, operator.getitem, (f, 0))
            n.replace_all_uses_with(last)
        versions = []
        for j in range(len(mutated)):
            last = self._insert_after(last, operator.getitem, (f, k0 + j))
            versions.append(last)
        for i, v in zip(mutated, versions):
            self._new_version(n.args[i], v, last)
        self.g.erase_node(n)

    def run(self):
        for n in list(self.g.nodes):
            if n.op != "call_function":
                continue
            value = written_value(n)
            if value is not None:
                self.in_place(n, value)
                continue
            m = tuple(i for i in mutated_args(n.target, n.args)
                      if isinstance(n.args[i], torch.fx.Node))
            if m:
                self.side_writes(n, m)
        return self.final, self.version_of


def functionalize(gm):
    """Rewrites gm's graph as the module comment says; returns
    ({placeholder: its last version}, {version: placeholder}) for the
    parameters, buffers and inputs the step writes."""
    return _Pass(gm).run()

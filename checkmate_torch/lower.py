"""A plan lowered once to a list of instructions.

Every decision about how a plan's steps run on tensors is made here, once,
by running the steps symbolically: which values are resident (a plan that
reads a value it does not hold raises PlanError, naming the step), which
generator state a random op runs from, what an op writes in place and what
it writes on a clone, which placeholders are read from snapshots, when a
view is bound and dropped, when each gradient is complete, and which
gradients are absent. What runs the plan only follows the instructions:
codegen.py writes them as Python, script.py as TorchScript, and
execute.Interpreter runs them one by one (for `run`, for measurements, for
a backward whose tangents are partly absent, and as the tests' oracle).

A lowered plan has two functions. The forward reads X (the placeholders'
tensors in order, the tangents left out) and ends by handing its state to
the backward: the resident values, the fixed values (with snapshots), the
generator states kept, and the gradients already complete. The backward
reads that state, T (the tangents) and A (A[i]: the tensor gradient i is
added into, in place, when complete, or None) and returns G, the
gradients.

Registers are names. An operand (an argument of an instruction) is a
constant, Reg(name), Elem(name, i) (element i of a tuple register),
Clone(x) (a copy of x with its strides: what an op writes), Factor(name,
k) (1 / (name + k): BatchNorm(momentum=None)'s) or Zeros(fake); lists and
tuples of operands are operands. The instructions (class Ins, field kind):

  load       dst = X[index]
  const      dst = value                    a get_attr tensor
  snapshot   dst = src.clone()              a written placeholder's first version
  call       dst = target(*args, **kwargs)
  bind       dst = src                      an element, an alias, an rng token (True)
  tangents   dst = T
  rng_get    dst = the generator state of device
  rng_set    the generator state of device = src
  free       del names
  grad       gradient index is src; then the views in drop are freed, and
             the gradient added into A[index] and released (release: the
             registers holding it, set to None) or kept as G[index];
             src None: absent (G[index] stays None)
  keep       G[index] = src                 (a gradient complete in the forward)
  write_back target.copy_(value) for each pair, without autograd
  offload    dst, event = offload.to_host(src)     a host copy, h_<register>
  fetch      dst, event = offload.to_device(src, device)
  wait       offload.wait(event): what follows waits for that copy
  mark       no code: what == "compute", "free", "offload" or "fetch"
             of graph node `node` (host=True: a free of its host copy),
             after the instructions that do it, the gradients it
             completes included (start: where they begin)

Copies (offload.py) follow docs/formats.md's model: a compute waits for
the fetches of the values it reads, a free of a value for the copy still
running from or into it; the forward ends waiting for the fetches of
what it returns or writes back, the backward for all of its fetches
(its gradients are read after it). The events of the copies not waited
for in the forward are handed over with the resident values and the
host copies. A value that is ever offloaded is never written in place
(the copy may still be reading it).

Absent gradients (the gradient of an output the loss does not reach, and
what is computed from such gradients alone) are decided when the backward
is lowered for a set of absent tangents, as autograd decides them: it runs
no node whose incoming gradients are all undefined and sums only those
that are defined, so add(g, absent) is g, an op whose gradient arguments
are all absent is absent, and an op with some absent ones gets zeros
there, as autograd's formulas do."""
import operator

import torch

from .functional import functional_op, written_arg, written_op, written_value
from .graph import Synthetic, is_random

_aten = torch.ops.aten
_RESHAPES = (_aten.view.default, _aten._reshape_alias.default)
_ADD = _aten.add.Tensor
_SUMS = (_ADD, _aten.sub.Tensor)


class PlanError(Exception):
    pass


class _Absent:
    def __repr__(self):
        return "ABSENT"


ABSENT = _Absent()   # the value of an absent gradient


class Reg:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class Elem:
    __slots__ = ("name", "index")

    def __init__(self, name, index):
        self.name, self.index = name, index

    def __repr__(self):
        return "%s[%d]" % (self.name, self.index)


class Clone:
    __slots__ = ("arg",)

    def __init__(self, arg):
        self.arg = arg

    def __repr__(self):
        return "clone(%r)" % (self.arg,)


class Factor:
    __slots__ = ("name", "calls")

    def __init__(self, name, calls):
        self.name, self.calls = name, calls

    def __repr__(self):
        return "1/(%s+%d)" % (self.name, self.calls)


class Zeros:
    __slots__ = ("shape", "dtype", "device")

    def __init__(self, fake):
        self.shape, self.dtype, self.device = tuple(fake.shape), fake.dtype, fake.device

    def __repr__(self):
        return "zeros%r" % (self.shape,)


class Ins:
    """One instruction: its kind and fields (see the module comment)."""

    dst = grad = None

    def __init__(self, kind, **fields):
        self.kind = kind
        self.__dict__.update(fields)

    def __repr__(self):
        return "%s(%s)" % (self.kind, ", ".join("%s=%r" % kv for kv in self.__dict__.items()
                                                 if kv[0] != "kind"))


# --- which writes run in place -------------------------------------------

def _dense(t):
    """Whether t's elements fill its storage span once each (contiguous
    in some order of its dimensions), so that clone_strided copies its
    layout as it is."""
    expect = 1
    for stride, size in sorted((st, n) for n, st in zip(t.shape, t.stride()) if n != 1):
        if stride != expect:
            return False
        expect *= size
    return True


def _written(r):
    """The fx nodes compute r writes: its written_arg's, or a
    functional_op's mutated arguments."""
    if isinstance(r, Synthetic):
        return []
    if r.target is functional_op:
        return [x for x in (r.args[2 + i] for i in r.args[1]) if isinstance(x, torch.fx.Node)]
    x = written_value(r)
    return [x] if x is not None else []


def _step_reads(a, r):
    """The placeholders whose values as the step began compute r reads
    (through views of them; BatchNorm(momentum=None) reads its count)."""
    if isinstance(r, Synthetic):
        return set()
    out = {p for p in map(a._root, r.all_input_nodes) if p.op == "placeholder"}
    if r in a.cumulative:
        out.add(a.cumulative[r][1])
    return out


def in_place_writes(a, forward_steps, backward_steps):
    """(in_place, snapshot): which writes run in place and which written
    placeholders are snapshot.

    in_place maps the index of a compute (in forward_steps +
    backward_steps) to the fx nodes its op may write in place instead of
    a clone, as the ordinary step writes them:
      - a dense value of the plan's, read once by the op and by nothing
        after it, not part of a gradient, never offloaded, and freed next
        in the same function (relu_ on a batch norm's output, dropout's
        bernoulli_ on a fresh tensor); an element of a tuple (a projection) only where
        nothing takes an element from that tuple again afterwards;
      - a parameter, buffer or input the step writes, where the op makes
        its last version and nothing reads its first one afterwards (a
        batch norm's running statistics, num_batches_tracked): the op
        writes the model's tensor, and the write-back at the forward's
        end finds it written.
    snapshot: the written placeholders whose first version something reads
    after the forward (a recompute in the backward, an output): they are
    read from a copy taken when the step starts; the others from the
    tensor itself, which the step writes only once nothing reads it."""
    steps = list(forward_steps) + list(backward_steps)
    boundary = len(forward_steps)
    last_read, snapshot = {}, set()
    for k, (op, r) in enumerate(steps):
        if op == "compute":
            for p in _step_reads(a, r):
                last_read[p] = k
                if k >= boundary:
                    snapshot.add(p)
    for v in a.outputs + a.grads + list(a.final.values()):
        p = a._root(v)
        if p.op == "placeholder":
            snapshot.add(p)
    snapshot &= set(a.final)
    in_grads = {d for g in a.grads for d in a.needs[g]}
    # a copy may still be reading a value offloaded (offload.py), or the
    # tuple a projection takes an element of
    copied = {r for op, r in steps if op == "offload"}
    in_grads |= copied | {r for r in a.real if getattr(r, "base", None) in copied}
    nxt = {}   # node -> ("free" or "read", step index) of its next use
    in_place = {}
    for k in range(len(steps) - 1, -1, -1):
        op, r = steps[k]
        if op == "free":
            nxt[r] = ("free", k)
            continue
        if op != "compute":
            nxt[r] = ("read", k)
            continue
        args = list(r.args) + list(r.kwargs.values()) if not isinstance(r, Synthetic) else []
        for x in _written(r):
            if sum(1 for y in args if y is x) != 1:
                continue
            own = x
            if a.kind.get(x) == "real-element" and isinstance(a.needs[x][0], Synthetic):
                own = a.needs[x][0]   # a projection: a name of its own
            elif a.kind.get(x) != "real":
                own = None
            if own is not None:
                fake = a.fake.get(x) if own is x else a.fake[own.base][own.index]
                kind, at = nxt.get(own, ("end", len(steps)))
                # a projection's tuple holds the same tensor: no later
                # projection may be taken from it
                base = nxt.get(getattr(own, "base", None), ("end",))[0]
                ok = own not in in_grads and isinstance(fake, torch.Tensor) and _dense(fake) \
                    and kind == "free" and (k < boundary) == (at < boundary) and base != "read"
            else:
                last = a.final.get(x)
                ok = x.op == "placeholder" and last is not None and x not in snapshot \
                    and k < boundary and last_read.get(x, -1) <= k \
                    and (last is r or last.target is operator.getitem and last.args[0] is r)
            if ok:
                in_place.setdefault(k, set()).add(x)
        for d in a.deps.get(r, ()):
            nxt[d] = ("read", k)
    return in_place, snapshot


def _identity_source(n):
    """The node whose value view n is, sizes and strides alike, whatever
    its strides at run time: t of t, a transpose of the same transpose,
    a view or reshape to the shape it has. None for any other node."""
    t, src = n.target, n.args[0] if n.args else None
    if not isinstance(src, torch.fx.Node):
        return None
    if t in _RESHAPES or t is _aten.reshape.default:
        a, b = n.meta.get("val"), src.meta.get("val")
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape:
            return src
        return None
    if t is _aten.t.default and src.target is _aten.t.default:
        return src.args[0]
    if t is _aten.transpose.int and src.target is _aten.transpose.int:
        val = src.meta.get("val")
        if isinstance(val, torch.Tensor):
            dims = {d % max(val.dim(), 1) for d in n.args[1:3]}
            if dims == {d % max(val.dim(), 1) for d in src.args[1:3]}:
                return src.args[0]
    return None


def device_of(value):
    """The device of value's first tensor (the CPU for none)."""
    if isinstance(value, torch.Tensor):
        return value.device
    if isinstance(value, (tuple, list)):
        for v in value:
            d = device_of(v)
            if d is not None and d.type != "cpu":
                return d
    return torch.device("cpu")


class Lowered:
    """A plan's instructions (see the module comment).

      fixed      the fixed fx nodes (placeholders but tangents, get_attr),
                 in order; X holds the placeholders' values among them
      forward    the forward's instructions; outputs: their operands
      parts      the state the forward hands over, as register names:
                 (resident values, fixed values, generator states,
                 complete gradients)
      early      the indices of the gradients complete in the forward
      names      graph node -> its register; tuples: register -> length
      in_place, snapshot   in_place_writes' answer
      backward(absent)     the backward's instructions for that set of
                 absent tangents (indices into T)

    Options: in_place=False writes every written value on a clone and
    snapshots every written placeholder (the measurements' way);
    write_back=False and outputs=False leave out the write-back and the
    outputs (a plan file's steps need not keep the last versions or the
    outputs until the forward's end)."""

    def __init__(self, analysis, forward_steps, backward_steps, in_place=True,
                 write_back=True, outputs=True):
        self.a = a = analysis
        self.forward_steps, self.backward_steps = list(forward_steps), list(backward_steps)
        self.fixed = [n for n in a.nodes if (n.op == "placeholder" and a.role[n] != "tangent")
                      or n.op == "get_attr"]
        if in_place:
            self.in_place, self.snapshot = in_place_writes(a, forward_steps, backward_steps)
        else:
            self.in_place, self.snapshot = {}, set(a.final)
        self.names, self.tuples = {}, {}
        self.read = {d for r in a.real for d in a.deps[r]}
        self.tangent_index = {p: i for i, p in enumerate(
            [p for p in a.placeholders if a.role[p] == "tangent"])}
        self._backwards = {}
        self._lower_forward(write_back, outputs)

    # --- names ----------------------------------------------------------

    def name(self, r):
        if r not in self.names:
            v = self.names[r] = "v%d" % len(self.names)
            fake = self._fake(r)
            if isinstance(fake, (tuple, list)):
                self.tuples[v] = len(fake)
        return self.names[r]

    def _fake(self, r):
        """The traced value of node r (of a projection, its element)."""
        if isinstance(r, Synthetic) and r.kind == "projection":
            return self.a.fake[r.base][r.index]
        return self.a.fake.get(r)

    # --- values ---------------------------------------------------------

    def _arg(self, x):
        if isinstance(x, torch.fx.Node):
            return self._value(x)
        if isinstance(x, list):   # fx's immutable_list too
            return [self._arg(y) for y in x]
        if isinstance(x, tuple):
            return tuple(self._arg(y) for y in x)
        return x

    def _value(self, n):
        """The operand of fx node n's value (or ABSENT)."""
        a = self.a
        k = a.kind[n]
        if k == "real":
            if n not in self.env:
                raise PlanError("'%s' is needed but not resident" % n.name)
            return ABSENT if n in self.absent_regs else Reg(self.name(n))
        if k == "real-element":
            owner = a.needs[n][0]
            if owner not in self.env:
                raise PlanError("'%s' is needed but not resident" % owner.name)
            if owner in self.absent_regs:
                return ABSENT
            if isinstance(owner, Synthetic):
                return Reg(self.name(owner))
            return Elem(self.name(owner), n.args[1])
        if n.op == "placeholder" and a.role[n] == "tangent":
            if a.tangents not in self.env:
                raise PlanError("the tangents are needed but not resident")
            i = self.tangent_index[n]
            return ABSENT if i in self.absent else Elem(self.name(a.tangents), i)
        if n.op in ("placeholder", "get_attr"):
            return Reg(self.fixed_name[n])
        same = _identity_source(n)
        if same is not None:
            return self._value(same)
        # a view: bound to a register once, while what it views is resident
        if n not in self.views:
            got = self._call(n)
            if isinstance(got, Ins):
                got.dst = "w%d" % self.n_views
                self.n_views += 1
                self.pre.append(got)
                got = Reg(got.dst)
            self.views[n] = got
        return self.views[n]

    def _flush(self, out):
        """Appends the views bound since the last instruction to out."""
        out.extend(self.pre)
        self.pre.clear()

    def _emit(self, out, ins):
        self._flush(out)
        out.append(ins)

    def _drop_views(self, roots, out):
        """Frees the bound views of roots' storage (before a free), so that
        the storage goes when the plan frees it."""
        names = []
        for n, w in list(self.views.items()):
            if any(r in roots for r in self.a.needs[n]):
                if isinstance(w, Reg) and w.name.startswith("w"):
                    names.append(w.name)
                del self.views[n]
        if names:
            out.append(Ins("free", names=names))

    def _is_gradient(self, d):
        if d.op == "placeholder":
            return self.a.role[d] == "tangent"
        o = self.a.owner(d)
        return o is not None and o in self.a.backward

    def _call(self, n, replace=None, in_place=()):
        """A call instruction (no dst yet) for fx node n: view as
        reshape, replace's {index: operand} instead of the traced
        arguments, the clone of what the op writes (but of the nodes
        in_place). With absent arguments, an operand (the present one of a
        sum) or ABSENT instead, or the call with zeros for them (see the
        module comment)."""
        target = n.target
        args = list(n.args)
        if target in _RESHAPES:
            target, args = _aten.reshape.default, args[:2]
        src = [self._arg(x) for x in args]
        kwargs = {k: self._arg(v) for k, v in n.kwargs.items()}
        absent = set()
        if self.absent:
            torch.fx.node.map_arg((n.args, n.kwargs),
                                  lambda d: absent.add(d) if self._value(d) is ABSENT else None)
        if absent:
            if n.target in _SUMS and len(n.args) == 2 and not n.kwargs:
                x, y = n.args
                if y in absent and x not in absent:
                    return src[0]
                if x in absent and y not in absent and n.target is _ADD:
                    return src[1]
            ins = set()
            torch.fx.node.map_arg((n.args, n.kwargs), ins.add)
            if all(d in absent or not self._is_gradient(d) for d in ins):
                return ABSENT

            def fill(x, node):
                if isinstance(node, torch.fx.Node) and node in absent:
                    return Zeros(self.a.fake[node])
                if isinstance(node, (list, tuple)):
                    return (list if isinstance(x, list) else tuple)(
                        fill(y, m) for y, m in zip(x, node))
                return x
            src = [fill(x, m) for x, m in zip(src, args)]
            kwargs = {k: fill(v, n.kwargs[k]) for k, v in kwargs.items()}
        for i, v in (replace or {}).items():
            src[i] = v
        if target is functional_op and in_place:
            cloned = tuple(i for i in args[1] if args[2 + i] not in in_place)
            target, src = written_op, src[:2] + [cloned] + src[2:]
        w = written_arg(target)
        if w is not None and written_value(n) in in_place:
            w = None
        if isinstance(w, str) and isinstance(n.kwargs.get(w), torch.fx.Node):
            kwargs[w] = Clone(kwargs[w])
        elif isinstance(w, int) and w < len(args) and isinstance(args[w], torch.fx.Node):
            src[w] = Clone(src[w])
        return Ins("call", target=target, args=src, kwargs=kwargs, node=n)

    # --- steps ----------------------------------------------------------

    def _compute(self, r, out, k):
        a = self.a
        if r in self.env:
            raise PlanError("compute '%s': already resident" % r.name)
        for d in a.deps[r]:
            if d not in self.env:
                if d in self.host:
                    raise PlanError("compute '%s': input '%s' is on the host, not resident: "
                                    "fetch it first" % (r.name, d.name))
                raise PlanError("compute '%s': dep '%s' is not resident" % (r.name, d.name))
        start = len(out)
        self._wait(a.deps[r], out, "fetch")
        v = self.name(r)
        if isinstance(r, Synthetic):
            if r.kind == "projection":
                if r.base in self.absent_regs:
                    self.absent_regs.add(r)
                else:
                    out.append(Ins("bind", dst=v, src=Elem(self.name(r.base), r.index)))
            elif r.kind == "tangents":
                if not self.in_backward:
                    raise PlanError("the tangents are computed before the backward")
                out.append(Ins("tangents", dst=v))
            else:
                out.append(Ins("bind", dst=v, src=True))  # an rng token
        else:
            replace = None
            if r in a.cumulative:
                i, count, calls = a.cumulative[r]
                replace = {i: Factor(self.fixed_name[count], calls)}
            got = self._call(r, replace, self.in_place.get(k, ()))
            if got is ABSENT:
                self.absent_regs.add(r)
            elif not isinstance(got, Ins):
                self._emit(out, Ins("bind", dst=v, src=got))
            elif is_random(r):
                dev = device_of(a.fake[r])
                got.dst = v
                if r not in self.computed:
                    self.rng_kept.append(r)
                    out.append(Ins("rng_get", dst="r_" + v, device=dev))
                    self._emit(out, got)
                else:
                    out.append(Ins("rng_get", dst="_now", device=dev))
                    out.append(Ins("rng_set", device=dev, src=Reg("r_" + v)))
                    self._emit(out, got)
                    out.append(Ins("rng_set", device=dev, src=Reg("_now")))
            else:
                got.dst = v
                self._emit(out, got)
        self._flush(out)
        self.env.add(r)
        self.computed.add(r)
        self._grads(a.grads_needing.get(r, ()), out)
        out.append(Ins("mark", what="compute", node=r, start=start))

    def _free(self, r, out):
        start = len(out)
        if r not in self.env:
            # a value on the host only: its host copy
            if r not in self.host:
                raise PlanError("free '%s': not resident" % r.name)
            self.host.discard(r)
            if r in self.absent_host:
                self.absent_host.discard(r)
            else:
                out.append(Ins("free", names=["h_" + self.name(r)]))
            out.append(Ins("mark", what="free", node=r, start=start, host=True))
            return
        self._wait([r], out)
        self.env.discard(r)
        self._drop_views({r}, out)
        if r in self.absent_regs:
            self.absent_regs.discard(r)
        else:
            out.append(Ins("free", names=[self.name(r)]))
        out.append(Ins("mark", what="free", node=r, start=start))

    def _offload(self, r, out):
        if r not in self.env:
            raise PlanError("offload '%s': not resident" % r.name)
        if r in self.host:
            raise PlanError("offload '%s': it has a host copy already" % r.name)
        start = len(out)
        self.host.add(r)
        if r in self.absent_regs:
            self.absent_host.add(r)
        else:
            v = self.name(r)
            out.append(Ins("offload", dst="h_" + v, src=Reg(v), event="q_" + v))
            self.pending[r] = ("q_" + v, "offload")
        out.append(Ins("mark", what="offload", node=r, start=start))

    def _fetch(self, r, out):
        if r not in self.host:
            raise PlanError("fetch '%s': no host copy" % r.name)
        if r in self.env:
            raise PlanError("fetch '%s': already resident" % r.name)
        start = len(out)
        self.env.add(r)
        if r in self.absent_host:
            self.absent_regs.add(r)
        else:
            v = self.name(r)
            out.append(Ins("fetch", dst=v, src=Reg("h_" + v), event="q_" + v,
                           device=device_of(self._fake(r))))
            self.pending[r] = ("q_" + v, "fetch")
        out.append(Ins("mark", what="fetch", node=r, start=start))

    def _wait(self, nodes, out, kind=None):
        """Waits for the copies running from or into nodes (kind: only
        those of that kind)."""
        for d in nodes:
            got = self.pending.get(d)
            if got is not None and kind in (None, got[1]):
                del self.pending[d]
                out.append(Ins("wait", event=got[0]))

    def _grads(self, candidates, out):
        a = self.a
        for i in candidates:
            g = a.grads[i]
            if i in self.collected or not all(d in self.env for d in a.needs[g]):
                continue
            self.collected.add(i)
            # read, and perhaps released: no copy may still run from or into it
            self._wait(a.needs[g], out)
            src = self._value(g)
            if not self.in_backward:
                # complete in the forward: kept as it is, handed over
                self.early.append(i)
                self._emit(out, Ins("bind", dst="e%d" % i, src=src, grad=i))
                continue
            if src is ABSENT:
                out.append(Ins("grad", index=i, src=None, drop=[], release=[]))
                continue
            self._flush(out)
            o = a.owner(g)
            drop = []
            self._drop_views({o, getattr(o, "base", None)}, drop)
            out.append(Ins("grad", index=i, src=src, drop=[n for f in drop for n in f.names],
                           release=self._release(g)))

    def _release(self, g):
        """The registers holding gradient g, to let go of once it is added
        into A: (name, 'tuple') for a tuple holding it as an element,
        (name, 'tensor') for a value nothing reads that is it or its
        base (a linear layer's weight gradient)."""
        o = self.a.owner(g)
        out = []
        for c in (o, getattr(o, "base", None)):
            if c is None or c not in self.env or c in self.absent_regs:
                continue
            fake = self._fake(c)
            if isinstance(fake, (tuple, list)):
                out.append((self.name(c), "tuple"))
            elif isinstance(fake, torch.Tensor) and c not in self.read:
                out.append((self.name(c), "tensor"))
        return out

    def _steps(self, steps, start, out):
        do = {"free": self._free, "offload": self._offload, "fetch": self._fetch}
        for k, (op, r) in enumerate(steps):
            try:
                if op == "compute":
                    self._compute(r, out, start + k)
                else:
                    do[op](r, out)
            except PlanError as e:
                raise PlanError("step %d: %s" % (start + k, e))

    # --- the two functions ----------------------------------------------

    def _lower_forward(self, write_back, outputs):
        a = self.a
        self.env, self.computed, self.collected, self.absent_regs = set(), set(), set(), set()
        self.host, self.absent_host, self.pending = set(), set(), {}
        self.absent = frozenset()
        self.rng_kept, self.early = [], []
        self.views, self.pre, self.n_views = {}, [], 0
        self.in_backward = False
        self.fixed_name = {}
        out = []
        j = 0
        for i, n in enumerate(self.fixed):
            self.fixed_name[n] = "F%d" % i
            if n.op == "placeholder":
                out.append(Ins("load", dst="F%d" % i, index=j))
                j += 1
            else:
                out.append(Ins("const", dst="F%d" % i, value=getattr(a.traced.gm, n.target)))
        # the placeholders the step writes: read from snapshots where
        # something reads them after the forward (in_place_writes)
        self.targets = {}
        for p in a.final:
            self.targets[p] = self.fixed_name[p]
            if p in self.snapshot:
                self.fixed_name[p] = "S%d" % self.fixed.index(p)
                out.append(Ins("snapshot", dst=self.fixed_name[p], src=self.targets[p]))
        self._steps(self.forward_steps, 0, out)
        # what the forward returns or writes back is read after it
        self._wait([d for v in a.outputs + list(a.final.values()) for d in a.needs[v]], out,
                   "fetch")
        if a.final and write_back:
            # a last version written in place is the tensor itself
            pairs = [(self.targets[p], self._value(v)) for p, v in a.final.items()]
            self._emit(out, Ins("write_back", pairs=pairs))
        self.outputs = [self._value(o) for o in a.outputs] if outputs else []
        self._flush(out)
        self.forward = out
        self.boundary = sorted(self.env, key=lambda r: self.name(r))
        # handed over: the resident values, then the host copies and the
        # events of the copies not waited for
        copies = ["h_" + self.name(r) for r in sorted(self.host - self.absent_host,
                                                      key=self.name)] + \
            sorted(e for e, _ in self.pending.values())
        self.parts = ([self.name(r) for r in self.boundary] + copies,
                      [self.fixed_name[n] for n in self.fixed],
                      ["r_%s" % self.name(r) for r in self.rng_kept],
                      ["e%d" % i for i in self.early])
        self.copies = any(op in ("offload", "fetch")
                          for op, _ in self.forward_steps + self.backward_steps)
        self._at_boundary = (set(self.env), set(self.computed), set(self.collected),
                             list(self.rng_kept), set(self.host), dict(self.pending))

    def backward(self, absent=frozenset()):
        """The backward's instructions, the tangents at indices absent
        being absent; PlanError names a step the plan cannot run."""
        absent = frozenset(absent)
        if absent not in self._backwards:
            self._backwards[absent] = self._lower_backward(absent)
        return self._backwards[absent]

    def _lower_backward(self, absent):
        a = self.a
        # from the forward's end (registers are named in compute order, the
        # same for every set of absent tangents)
        env, computed, collected, rng, host, pending = self._at_boundary
        self.env, self.computed, self.collected = set(env), set(computed), set(collected)
        self.host, self.pending, self.absent_host = set(host), dict(pending), set()
        self.rng_kept = list(rng)
        self.absent, self.absent_regs = absent, set()
        self.in_backward = True
        self.views, self.pre, self.n_views = {}, [], 0   # the forward's are its own
        out = [Ins("keep", index=i, src=Reg("e%d" % i)) for i in self.early]
        self._steps(self.backward_steps, len(self.forward_steps), out)
        missing = [r.name for r in a.real if r not in self.computed]
        if missing:
            raise PlanError("node '%s' is never computed" % missing[0])
        self._grads([i for i, g in enumerate(a.grads) if not a.needs[g]], out)
        if len(self.collected) != len(a.grads):
            raise PlanError("%d of %d gradients were never produced"
                            % (len(a.grads) - len(self.collected), len(a.grads)))
        self._wait(list(self.pending), out, "fetch")
        self._flush(out)
        return out


def split_at_tangents(analysis, steps):
    """(forward steps, backward steps): the forward ends where the
    tangents are first computed (all steps when they never are)."""
    at = next((k for k, (op, r) in enumerate(steps)
               if op == "compute" and r is analysis.tangents), len(steps))
    return steps[:at], steps[at:]


def is_rng_register(name):
    """Whether register name holds a generator state."""
    return name.startswith("r_") or name == "_now"


def is_copy_register(name):
    """Whether register name holds a host copy or a copy's event."""
    return name.startswith(("h_", "q_"))

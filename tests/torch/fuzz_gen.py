"""Seeded random small nn.Modules for the PyTorch fuzzer (tests/torch/fuzz_run.py).

build(seed) -> (model, make_batch, loss_fn, description)
  model       a torch.nn.Module in training mode
  make_batch  make_batch(step) -> (args, kwargs): the step's call, new
              tensors each time, from a generator seeded by (seed, step)
  loss_fn     loss_fn(output, step) -> scalar tensor, written outside the
              module (targets from a generator seeded by (seed, step))
  description a str: the first line "features: a b c" (also as
              description.features, a sorted list), then one line per
              input, block and output

Everything comes from random.Random(seed) and torch.manual_seed(seed):
the same seed gives the same model, weights, batches and loss. The
forward is a chain of blocks over one running activation h (layouts: vec
(B, D), seq (B, T, D), img (B, C, H, W)), with residual adds from earlier
activations, branches, side outputs and buffers; docs/fuzzing.md lists
the blocks. Blocks only use shapes, never tensor values, in Python (but
the data-dependent ones, which a trace must refuse).

Run as a script to print models: PYTHON fuzz_gen.py SEED [SEED...]."""
import math
import random
import sys

import torch
from torch import nn
from torch.nn import functional as F

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
NORM_RESIDUAL_RATE = 0.04   # a ResNet basic block after a block
SHARED_RATE = 0.04          # a Linear applied several times after a block


class Description(str):
    """The description string, with .features (a sorted list of flags)."""
    features = ()


class Holder:
    """A non-tensor output that holds a tensor (as a cache object does)."""

    def __init__(self, t):
        self.t = t


class Block(nn.Module):
    """One step of the chain: forward(h, ctx) -> h, dispatched on kind to
    the function in KINDS; its modules, parameters and buffers are its
    own."""

    def __init__(self, kind, **conf):
        super().__init__()
        self.kind = kind
        self.conf = conf

    def forward(self, h, ctx):
        return RUN[self.kind](self, h, ctx, **self.conf)

    def extra_repr(self):
        return "%s %s" % (self.kind, self.conf)


class Net(nn.Module):
    """The fuzzed model: inputs x (float), ids (integer), mask (bool), y
    (float), scale (a constant); an entry block, the chain, a head; the
    output built as outspec says from the head's result and the side
    outputs the blocks emitted."""

    def __init__(self, entry, blocks, head, outspec):
        super().__init__()
        self.entry = entry
        self.blocks = nn.ModuleList(blocks)
        self.head = head
        self.outspec = outspec

    def forward(self, x=None, ids=None, mask=None, y=None, scale=1.0, tgt=None):
        ctx = {"x": x, "ids": ids, "mask": mask, "y": y, "scale": scale, "tgt": tgt,
               "acts": [], "outs": []}
        h = self.entry(None, ctx)
        for b in self.blocks:
            h = b(h, ctx)
        main = self.head(h, ctx)
        items = [main] + [t for _, t in ctx["outs"]]
        form, names = self.outspec
        if form == "tensor":
            return main
        if form == "tuple":
            return tuple(items)
        if form == "list":
            return list(items)
        return dict(zip(names, items))


# --- what each kind runs: f(self, h, ctx, **conf) -> h ---------------------

def _entry(s, h, ctx, parts):
    h = None
    for p in parts:
        if p == "x":
            h = s.inp(ctx["x"])
        elif p == "ids":
            e = s.emb(ctx["ids"])
            h = e if h is None else h + e
        elif p == "y":
            y = s.lin_y(ctx["y"])
            h = y if h is None else h + y
    if ctx["tgt"] is not None:
        # a causal LM's loss against targets (-100 ignored), added to h
        logits = s.lm(h)
        h = h + F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ctx["tgt"].reshape(-1))
    return h


def _linear(s, h, ctx):
    return s.lin(h)


def _linear_relu_inplace(s, h, ctx):
    return s.relu(s.lin(h))


ACTS = {
    "relu_": lambda h: h.relu_(),
    "relu_inplace_mod": None,  # nn.ReLU(inplace=True), in the block
    "hardtanh_": lambda h: F.hardtanh_(h, -1.5, 1.5),
    "leaky_relu_": lambda h: F.leaky_relu_(h, 0.1),
    "elu": lambda h: F.elu(h),
    "elu_inplace": lambda h: F.elu(h, inplace=True),
    "silu": lambda h: F.silu(h),
    "silu_inplace": lambda h: F.silu(h, inplace=True),
    "mish": lambda h: F.mish(h),
    "gelu": lambda h: F.gelu(h),
    "gelu_tanh": lambda h: F.gelu(h, approximate="tanh"),
    "relu": lambda h: torch.relu(h),
    "tanh": lambda h: torch.tanh(h),
    "sigmoid": lambda h: torch.sigmoid(h),
    "hardtanh": lambda h: F.hardtanh(h),
    "softplus": lambda h: F.softplus(h),
}
# Activations that write their input in place, and those whose backward
# keeps their output (so that writing the output in place later breaks
# the ordinary step).
INPLACE_ACTS = {"relu_", "relu_inplace_mod", "hardtanh_", "leaky_relu_", "elu_inplace",
                "silu_inplace"}
SAVES_OUTPUT = {"relu_", "relu_inplace_mod", "hardtanh_", "leaky_relu_", "elu_inplace", "relu",
                "tanh", "sigmoid"}


def _act(s, h, ctx, name):
    if name == "relu_inplace_mod":
        return s.relu(h)
    return ACTS[name](h)


def _norm(s, h, ctx, how):
    """how: direct (the module on h), t (on h.transpose(1, 2), back),
    flat (on h.reshape(-1, D), back), chlast (img: on h.permute(0, 2, 3, 1),
    back)."""
    if how == "direct":
        return s.norm(h)
    if how == "t":
        return s.norm(h.transpose(1, 2)).transpose(1, 2)
    if how == "flat":
        return s.norm(h.reshape(-1, h.shape[-1])).reshape(h.shape)
    return s.norm(h.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _bn_unused(s, h, ctx, flat):
    s.norm(h.reshape(-1, h.shape[-1]) if flat else h)
    return h


def _bn_twice(s, h, ctx, flat):
    if flat:
        return s.norm(s.norm(h.reshape(-1, h.shape[-1]))).reshape(h.shape)
    return s.norm(s.norm(h))


def _bn_running_read(s, h, ctx, flat):
    # A buffer read before the op that writes it (cause 3 of issue 37).
    g = h.reshape(-1, h.shape[-1]) if flat else h
    g = g - s.norm.running_mean
    return s.norm(g).reshape(h.shape) if flat else s.norm(g)


def _conv1d(s, h, ctx):
    return s.conv(h.transpose(1, 2)).transpose(1, 2)


def _conv2d(s, h, ctx):
    return s.conv(h)


def _attn(s, h, ctx, heads, use_mask, causal, sdpa, p):
    B, T, D = h.shape
    dh = D // heads
    q, k, v = s.qkv(h).chunk(3, dim=-1)
    q, k, v = [t.reshape(B, T, heads, dh).transpose(1, 2) for t in (q, k, v)]
    mask = ctx["mask"] if use_mask else None
    if sdpa:
        am = None
        if mask is not None:
            am = mask[:, None, None, :]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=am, dropout_p=p if s.training else 0.0,
                                           is_causal=causal and am is None)
    else:
        a = q @ k.transpose(-2, -1) / math.sqrt(dh)
        if causal:
            a = a.masked_fill(s.tril[:T, :T] == 0, float("-inf"))
        if mask is not None:
            a = a.masked_fill(~mask[:, None, None, :], -1e9)
        a = F.softmax(a, dim=-1)
        if p:
            a = F.dropout(a, p, training=s.training)
        o = a @ v
    return s.proj(o.transpose(1, 2).reshape(B, T, D))


def _dropout(s, h, ctx, how, p):
    if how == "module":
        return s.drop(h)
    if how == "functional":
        return F.dropout(h, p, training=s.training)
    if how == "unused":
        F.dropout(h, p, training=s.training)  # drawn and dropped
        return h
    if how == "2d":
        return F.dropout2d(h, p, training=s.training)
    # bernoulli_ on a new tensor: a hand-made mask
    return h * torch.empty_like(h).bernoulli_(1 - p) / (1 - p)


def _residual(s, h, ctx, j):
    return h + ctx["acts"][j]


def _norm_residual(s, h, ctx):
    """A ResNet basic block: the block's input added in place into a
    norm's output (an element of the norm op's tuple), then relu_."""
    out = s.norm(s.proj(h))
    out += h
    return out.relu_()


def _shared(s, h, ctx, times):
    """One Linear applied `times` times (shared weights, as ALBERT's
    layers): under autocast one cast of its weight, whose uses' gradients
    add up in bf16."""
    for _ in range(times):
        h = torch.tanh(s.lin(h))
    return h


def _res_mlp(s, h, ctx, act):
    return h + s.l2(ACTS[act](s.l1(h)))


def _branch_cat(s, h, ctx):
    return torch.cat([s.a(h), torch.tanh(s.b(h))], dim=-1)


def _save(s, h, ctx):
    ctx["acts"].append(h)
    return h


def _view(s, h, ctx, how, arg=None):
    if how == "reshape_roundtrip":
        return (h.reshape(h.shape[0], -1) * 1.5).reshape(h.shape)
    if how == "permute":
        d = h.dim()
        perm = list(range(d))[::-1]
        return (h.permute(*perm).contiguous() + 1.0).permute(*perm)
    if how == "transpose_linear":
        return s.lin(h.transpose(1, 2)).transpose(1, 2)
    if how == "slice_last":
        return h[..., :arg]
    if how == "slice_T":
        return h[:, 1:]
    if how == "strided_cat":
        return torch.cat([h[..., ::2], h[..., 1::2]], dim=-1)
    if how == "expand":
        return h.unsqueeze(-2).expand(*h.shape[:-1], 2, h.shape[-1]).reshape(
            *h.shape[:-1], 2 * h.shape[-1])
    if how == "glu":
        a, b = h.chunk(2, dim=-1)
        return a * torch.sigmoid(b)
    if how == "repeat_interleave":
        r = h.repeat_interleave(2, dim=-1)
        return r.reshape(*h.shape, 2).mean(-1)
    if how == "unbind_stack":
        return torch.stack([t * (i + 1) for i, t in enumerate(h.unbind(1))], dim=1)
    if how == "flatten_vec":
        return h.reshape(h.shape[0], -1)
    if how == "mean_vec":
        return h.mean((2, 3)) if h.dim() == 4 else h.mean(1)
    if how == "first_vec":
        return h[:, 0]
    if how == "img_seq":
        return h.flatten(2).transpose(1, 2)
    if how == "vec_seq":
        return s.lin(h).reshape(h.shape[0], arg, -1)
    if how == "pool_max":
        return F.max_pool2d(h, 2)
    if how == "pool_avg":
        return F.avg_pool2d(h, 2)
    raise ValueError(how)


def _index_write(s, h, ctx, clone, value):
    if clone:
        h = h.clone()
    if value == "zero":
        h[:, 0] = 0.0
    elif value == "scaled":
        h[:, 0] = h[:, 0] * 2.0
    else:
        h[:, -1] += 1.0
    return h


def _masked(s, h, ctx):
    m = ctx["mask"]
    return h.masked_fill(~m.unsqueeze(-1), 0.0)


def _scale(s, h, ctx):
    return h * ctx["scale"]


def _buffer(s, h, ctx, how):
    """User buffers: n is a counter (float, shape ()), ema a running mean
    of the last dimension, k a constant."""
    if how == "read":
        return h * s.k
    if how == "count":
        s.n += 1
        return h
    if how == "read_then_count":
        h = h * (1 + 0.1 * s.n)
        s.n += 1
        return h
    if how == "count_then_read":
        s.n += 1
        return h * (1 + 0.1 * s.n)
    if how == "out_add":
        torch.add(s.n, 1, out=s.n)
        return h
    if how == "ema":
        with torch.no_grad():
            s.ema.mul_(0.9).add_(h.detach().reshape(-1, h.shape[-1]).mean(0).float() * 0.1)
        return h
    if how == "ema_lerp":
        s.ema.lerp_(h.detach().reshape(-1, h.shape[-1]).mean(0).float(), 0.1)
        return h
    if how == "returned":
        s.n += 1
        ctx["outs"].append(("buffer", s.n))
        return h
    raise ValueError(how)


def _emit(s, h, ctx, role):
    """A side output: used (by the loss, through its own head), ignored
    (its head's parameters get no gradient), int (an argmax), dup (h
    itself, again later as the main output is h's head)."""
    if role == "used":
        ctx["outs"].append((role, s.lin(h)))
    elif role == "ignored":
        ctx["outs"].append((role, s.lin(h)))
    elif role == "int":
        ctx["outs"].append((role, h.detach().argmax(-1)))
    elif role == "raw":
        ctx["outs"].append((role, h))
    elif role == "holder":
        ctx["outs"].append((role, Holder(h.detach() * 1.0)))
    return h


def _data_dep(s, h, ctx, how):
    if how == "item":
        return h * (1.0 + 0.0 * h.detach().abs().max().item())
    n = h.detach().gt(0).nonzero().shape[0]
    return h * (1.0 + 0.0 * n)


def _unused_param(s, h, ctx):
    return h


def _act_hook(s, h, ctx):
    h = h * 1.0
    if h.requires_grad:
        h.register_hook(lambda g: g * 0.5)
    return h


def _head(s, h, ctx, dup):
    out = s.lin(h)
    for _ in range(dup):
        ctx["outs"].append(("dup", out))
    return out


RUN = {
    "entry": _entry, "linear": _linear, "linear_relu_inplace": _linear_relu_inplace,
    "act": _act, "norm": _norm, "bn_unused": _bn_unused, "bn_twice": _bn_twice,
    "bn_running_read": _bn_running_read, "conv1d": _conv1d, "conv2d": _conv2d,
    "attn": _attn, "dropout": _dropout, "residual": _residual, "res_mlp": _res_mlp,
    "norm_residual": _norm_residual, "shared": _shared,
    "branch_cat": _branch_cat, "save": _save, "view": _view, "index_write": _index_write,
    "masked": _masked, "scale": _scale, "buffer": _buffer, "emit": _emit,
    "data_dep": _data_dep, "unused_param": _unused_param, "act_hook": _act_hook,
    "head": _head,
}


# --- the generator -----------------------------------------------------------

class _State:
    """What the generator knows while it chains blocks: the shape of h
    (without the batch), whether h may be written in place (its producer
    does not keep it for its backward), the saved activations' shapes,
    the entry's T (where the mask fits)."""

    def __init__(self, r, shape, mask_T):
        self.r = r
        self.shape = shape
        self.fresh = True
        self.saved = []        # shapes of ctx["acts"]
        self.mask_T = mask_T
        self.writes = True     # blocks may write buffers (build's writes)
        self.flags = set()
        self.lines = []

    @property
    def layout(self):
        return {1: "vec", 2: "seq", 3: "img"}[len(self.shape)]


def _bn_module(r, st, dim, feat):
    """A BatchNorm1d/2d with random settings (momentum None among them)."""
    mom = r.choice([0.1, 0.1, 0.3, None])
    affine = r.random() < 0.8
    track = r.random() < 0.85
    cls = nn.BatchNorm2d if dim == 2 else nn.BatchNorm1d
    st.flags.add("batchnorm")
    if mom is None and track:
        st.flags.add("bn_momentum_none")
    if not affine:
        st.flags.add("bn_no_affine")
    if not track:
        st.flags.add("bn_no_running_stats")
    return cls(feat, momentum=mom, affine=affine, track_running_stats=track), \
        "%s(%d, momentum=%s, affine=%s, track=%s)" % (cls.__name__, feat, mom, affine, track)


def _divisors(n, most=None):
    return [g for g in range(1, n + 1) if n % g == 0 and (most is None or g <= most)]


def _pick_block(r, st, cfg):
    """One block for the current layout: (Block, description) and st
    updated; None when the pick does not fit (the caller picks again)."""
    lay, shape = st.layout, st.shape
    D = shape[-1]
    kinds = ["linear", "act", "act", "dropout", "save", "residual", "buffer", "buffer", "emit",
             "index_write", "view", "scale", "act_hook", "data_dep", "unused_param"]
    if lay in ("vec", "seq"):
        kinds += ["linear", "linear_relu_inplace", "layernorm", "bn", "bn_unused", "bn_twice",
                  "bn_running_read", "res_mlp", "branch_cat", "view"]
    if lay == "seq":
        kinds += ["bn_t", "groupnorm_t", "conv1d", "attn", "attn", "masked", "view"]
    if lay == "img":
        kinds = [k for k in kinds if k != "linear"]
        kinds += ["conv2d", "conv2d", "bn", "bn_unused", "bn_twice", "groupnorm", "layernorm_chlast",
                  "view"]
    if not st.writes:
        kinds = [k for k in kinds if k != "buffer" and not k.startswith("bn")]
    kind = r.choice(kinds)
    f = st.flags
    if kind == "linear":
        d2 = r.randint(4, 16)
        b = Block("linear")
        b.lin = nn.Linear(D, d2, bias=r.random() < 0.8)
        st.shape = shape[:-1] + (d2,)
        st.fresh = True
        f.add("linear")
        return b, "Linear(%d, %d)" % (D, d2)
    if kind == "linear_relu_inplace":
        d2 = r.randint(4, 16)
        b = Block("linear_relu_inplace")
        b.lin = nn.Linear(D, d2)
        b.relu = nn.ReLU(inplace=True)
        st.shape = shape[:-1] + (d2,)
        st.fresh = False
        f.update(["linear", "relu_inplace_after_linear_%dd" % (len(shape) + 1)])
        return b, "Linear(%d, %d) + ReLU(inplace=True)" % (D, d2)
    if kind == "act":
        name = r.choice(sorted(ACTS))
        if name in INPLACE_ACTS and not st.fresh:
            return None
        b = Block("act", name=name)
        if name == "relu_inplace_mod":
            b.relu = nn.ReLU(inplace=True)
        st.fresh = name not in SAVES_OUTPUT
        f.add("act_" + name)
        if name in INPLACE_ACTS:
            f.add("inplace_act")
        return b, "activation %s" % name
    if kind in ("layernorm", "layernorm_chlast"):
        b = Block("norm", how="direct" if kind == "layernorm" else "chlast")
        feat = D if kind == "layernorm" else shape[0]
        b.norm = nn.LayerNorm(feat, elementwise_affine=r.random() < 0.8)
        st.fresh = True
        f.add("layernorm")
        return b, "LayerNorm(%d) %s" % (feat, b.conf["how"])
    if kind in ("groupnorm", "groupnorm_t"):
        C = shape[0] if kind == "groupnorm" else D
        g = r.choice(_divisors(C))
        b = Block("norm", how="direct" if kind == "groupnorm" else "t")
        b.norm = nn.GroupNorm(g, C, affine=r.random() < 0.8)
        st.fresh = True
        f.add("groupnorm")
        return b, "GroupNorm(%d, %d) %s" % (g, C, b.conf["how"])
    if kind in ("bn", "bn_t"):
        if lay == "img":
            how, dim, feat = "direct", 2, shape[0]
        elif lay == "vec":
            how, dim, feat = "direct", 1, D
        elif kind == "bn_t":
            how, dim, feat = "t", 1, D
        else:
            how, dim, feat = "flat", 1, D
        mod, text = _bn_module(r, st, dim, feat)
        b = Block("norm", how=how)
        b.norm = mod
        st.fresh = True
        if how == "t":
            f.add("bn_transposed")
        return b, "%s %s" % (text, how)
    if kind in ("bn_unused", "bn_twice", "bn_running_read"):
        flat = lay == "seq"
        dim = 2 if lay == "img" else 1
        feat = shape[0] if lay == "img" else D
        mod, text = _bn_module(r, st, dim, feat)
        if kind == "bn_running_read" and (not mod.track_running_stats or lay == "img"):
            return None
        b = Block(kind, flat=flat)
        b.norm = mod
        if kind != "bn_unused":
            st.fresh = True
        f.add(kind)
        return b, "%s %s" % (text, kind)
    if kind == "conv1d":
        k = r.choice([1, 3])
        d2 = r.randint(4, 12)
        b = Block("conv1d")
        b.conv = nn.Conv1d(D, d2, k, padding=k // 2, bias=r.random() < 0.7)
        st.shape = (shape[0], d2)
        st.fresh = True
        f.add("conv1d")
        return b, "Conv1d(%d, %d, %d) on h.transpose(1, 2)" % (D, d2, k)
    if kind == "conv2d":
        C, H, W = shape
        k = r.choice([1, 3, 3])
        stride = 2 if (H >= 6 and W >= 6 and r.random() < 0.3) else 1
        c2 = r.randint(2, 8)
        b = Block("conv2d")
        b.conv = nn.Conv2d(C, c2, k, stride=stride, padding=k // 2, bias=r.random() < 0.7)
        H2 = (H + 2 * (k // 2) - k) // stride + 1
        W2 = (W + 2 * (k // 2) - k) // stride + 1
        st.shape = (c2, H2, W2)
        st.fresh = True
        f.add("conv2d")
        return b, "Conv2d(%d, %d, %d, stride=%d)" % (C, c2, k, stride)
    if kind == "attn":
        T = shape[0]
        heads = r.choice(_divisors(D, 4))
        # (drawn on every torch, so that the rest of the model is the same)
        sdpa = r.random() < 0.5 and HAS_SDPA
        use_mask = st.mask_T == T and r.random() < 0.6
        causal = r.random() < 0.4 and not (sdpa and use_mask)
        p = r.choice([0.0, 0.0, 0.1])
        b = Block("attn", heads=heads, use_mask=use_mask, causal=causal, sdpa=sdpa, p=p)
        b.qkv = nn.Linear(D, 3 * D)
        b.proj = nn.Linear(D, D)
        if causal and not sdpa:
            b.register_buffer("tril", torch.tril(torch.ones(T, T)))
        st.fresh = True
        f.add("attn_sdpa" if sdpa else "attn_hand")
        if use_mask:
            f.add("attn_mask")
        if p:
            f.add("attn_dropout")
        return b, "attention heads=%d mask=%s causal=%s sdpa=%s p=%s" % (
            heads, use_mask, causal, sdpa, p)
    if kind == "dropout":
        how = r.choice(["module", "functional", "functional", "unused", "bernoulli"]
                       + (["2d"] if lay == "img" else []))
        p = r.choice([0.1, 0.25, 0.5])
        b = Block("dropout", how=how, p=p)
        if how == "module":
            b.drop = nn.Dropout(p)
        if how != "unused":
            st.fresh = True
        f.add("dropout_" + how)
        return b, "dropout %s p=%s" % (how, p)
    if kind == "save":
        b = Block("save")
        st.saved.append(st.shape)
        return b, "save h as act %d %s" % (len(st.saved) - 1, st.shape)
    if kind == "residual":
        js = [j for j, s in enumerate(st.saved) if s == st.shape]
        if not js:
            return None
        j = r.choice(js)
        st.fresh = True
        f.add("residual")
        return Block("residual", j=j), "h + act %d" % j
    if kind == "res_mlp":
        act = r.choice(["gelu", "relu", "silu", "tanh"])
        b = Block("res_mlp", act=act)
        hid = r.randint(4, 24)
        b.l1 = nn.Linear(D, hid)
        b.l2 = nn.Linear(hid, D)
        st.fresh = True
        f.update(["residual", "linear"])
        return b, "h + Linear(%s(Linear(h)))" % act
    if kind == "branch_cat":
        b = Block("branch_cat")
        d1, d2 = r.randint(2, 8), r.randint(2, 8)
        b.a = nn.Linear(D, d1)
        b.b = nn.Linear(D, d2)
        st.shape = shape[:-1] + (d1 + d2,)
        st.fresh = True
        f.update(["branch", "linear"])
        return b, "cat(Linear(h), tanh(Linear(h)))"
    if kind == "view":
        return _pick_view(r, st)
    if kind == "index_write":
        clone = r.random() < 0.4
        if not st.fresh and not clone:
            return None
        value = r.choice(["zero", "scaled", "add"])
        f.add("index_write")
        return Block("index_write", clone=clone, value=value), \
            "h[:, 0] write (%s, clone=%s)" % (value, clone)
    if kind == "masked":
        if st.mask_T != shape[0]:
            return None
        st.fresh = True
        f.add("masked_fill")
        return Block("masked"), "h.masked_fill(~mask, 0)"
    if kind == "scale":
        st.fresh = True
        f.add("const_kwarg")
        cfg["scale_used"] = True
        return Block("scale"), "h * scale (a constant kwarg)"
    if kind == "buffer":
        how = r.choice(["read", "count", "read_then_count", "count_then_read", "out_add", "ema",
                        "ema_lerp", "returned"])
        b = Block("buffer", how=how)
        b.register_buffer("k", torch.full((), 1.25))
        b.register_buffer("n", torch.zeros(()))
        b.register_buffer("ema", torch.zeros(D))
        if how in ("read", "read_then_count", "count_then_read"):
            st.fresh = True
        f.add("buffer_" + how)
        return b, "buffer %s" % how
    if kind == "emit":
        role = r.choice(["used"] * 3 + ["ignored"] * 3 + ["int"] * 3 + ["raw"] * 4 + ["holder"])
        b = Block("emit", role=role)
        if role in ("used", "ignored"):
            b.lin = nn.Linear(D, r.randint(2, 6))
        cfg["emitted"].append(role)
        f.add("out_" + role)
        return b, "side output %s" % role
    if kind == "data_dep":
        if r.random() > cfg["data_dep_rate"]:
            return None
        how = r.choice(["item", "nonzero"])
        f.add("data_dep_" + how)
        return Block("data_dep", how=how), "data-dependent %s" % how
    if kind == "unused_param":
        b = Block("unused_param")
        b.w = nn.Parameter(torch.randn(3))
        hook = r.random() < 0.4
        if hook:
            b.w.register_hook(lambda g: g * 2.0)
            f.add("hook_unused_param")
        f.add("unused_param")
        return b, "a parameter the forward does not use%s" % (" (with a hook)" if hook else "")
    if kind == "act_hook":
        f.add("activation_hook")
        st.fresh = True
        return Block("act_hook"), "h * 1 with a hook g * 0.5"
    raise AssertionError(kind)


def _pick_view(r, st):
    lay, shape = st.layout, st.shape
    D = shape[-1]
    f = st.flags
    hows = ["reshape_roundtrip", "permute", "strided_cat", "expand", "repeat_interleave"]
    if D >= 4:
        hows += ["slice_last"]
    if D % 2 == 0:
        hows += ["glu"]
    if lay == "seq":
        hows += ["transpose_linear", "unbind_stack", "mean_vec", "first_vec", "flatten_vec"]
        if shape[0] >= 3:
            hows += ["slice_T"]
    if lay == "vec":
        hows += ["vec_seq"]
    if lay == "img":
        hows += ["img_seq", "mean_vec", "flatten_vec"]
        if shape[1] % 2 == 0 and shape[2] % 2 == 0 and shape[1] >= 4:
            hows += ["pool_max", "pool_avg"]
    how = r.choice(hows)
    if how in ("expand", "strided_cat") and D > 12:
        return None
    b = Block("view", how=how)
    arg = None
    if how == "slice_last":
        arg = r.randint(2, D - 1)
        st.shape = shape[:-1] + (arg,)
    elif how == "slice_T":
        st.shape = (shape[0] - 1,) + shape[1:]
    elif how == "expand":
        st.shape = shape[:-1] + (2 * D,)
    elif how == "glu":
        st.shape = shape[:-1] + (D // 2,)
    elif how == "transpose_linear":
        b.lin = nn.Linear(shape[0], shape[0])
    elif how in ("mean_vec", "first_vec"):
        st.shape = (shape[0],) if lay == "img" else (D,)
    elif how == "flatten_vec":
        n = 1
        for s in shape:
            n *= s
        if n > 128:
            return None
        st.shape = (n,)
    elif how == "img_seq":
        st.shape = (shape[1] * shape[2], shape[0])
    elif how == "vec_seq":
        T, d = r.randint(2, 6), r.randint(3, 8)
        b.lin = nn.Linear(D, T * d)
        arg = T
        st.shape = (T, d)
    elif how in ("pool_max", "pool_avg"):
        st.shape = (shape[0], shape[1] // 2, shape[2] // 2)
    b.conf["arg"] = arg
    # views of a tensor keep its writability; the rest make a new tensor
    if how in ("reshape_roundtrip", "permute", "strided_cat", "expand", "repeat_interleave",
               "glu", "transpose_linear", "unbind_stack", "mean_vec", "flatten_vec", "vec_seq",
               "pool_avg"):
        st.fresh = how not in ("pool_max",)
    if how == "pool_max":
        st.fresh = True
    f.add("view_" + how)
    if how == "repeat_interleave":
        f.add("repeat_interleave")
    return b, "view %s%s -> %s" % (how, "" if arg is None else " %s" % arg, st.shape)


def _norm_residual_block(r, st):
    """A ResNet basic block on the current layout: (Block, description)."""
    lay, shape = st.layout, st.shape
    b = Block("norm_residual")
    if lay == "img":
        b.proj = nn.Conv2d(shape[0], shape[0], 3, padding=1)
        b.norm, nd = _bn_module(r, st, 2, shape[0]) if st.writes else \
            (nn.GroupNorm(1, shape[0]), "GroupNorm(1, %d)" % shape[0])
    elif lay == "vec" and st.writes:
        b.proj = nn.Linear(shape[-1], shape[-1])
        b.norm, nd = _bn_module(r, st, 1, shape[-1])
    else:
        b.proj = nn.Linear(shape[-1], shape[-1])
        b.norm, nd = nn.LayerNorm(shape[-1]), "LayerNorm(%d)" % shape[-1]
    st.fresh = False
    st.flags.update(["residual", "norm_residual_inplace"])
    return b, "relu_(%s(%s(h)) += h)" % (nd, type(b.proj).__name__)


def _shared_block(r, st):
    """A Linear(D, D) applied 2 or 3 times: (Block, description)."""
    D = st.shape[-1]
    times = r.choice([2, 3])
    b = Block("shared", times=times)
    b.lin = nn.Linear(D, D)
    st.fresh = False
    st.flags.update(["linear", "shared_weights"])
    return b, "tanh(Linear(%d, %d)) applied %d times" % (D, D, times)


# How calls share memory where build's alias is on (_alias_mode):
#   ids_twice  a causal LM's targets `tgt`, the ids themselves where the
#              step aliases (labels=input_ids), else targets of their own
#              with -100s
#   same       y is x
#   overlap    x and y overlapping views of one tensor (shifted by one
#              along the last axis; on images y is x[:, :, 0, 0])
#   param      x a view of the entry's weight (requiring a gradient where
#              x would; y is drawn as usual)
ALIAS_MODES = ("ids_twice", "same", "overlap", "param")


def _alias_mode(seed, layout, use_ids, use_x):
    """(mode, which of the 3 steps' calls alias): from a generator of the
    seed's own, among the modes the model's inputs allow."""
    r = random.Random("alias %d" % seed)
    modes = [m for m, can in (("ids_twice", use_ids and layout == "seq"),
                              ("same", use_x and layout != "img"),
                              ("overlap", use_x), ("param", use_x)) if can]
    return r.choice(modes), r.choice([(1, 0, 1), (0, 1, 1), (1, 1, 0)])


def _param_view(w, b, shape, grad):
    """A tensor of shape (b,) + shape that is a view of parameter w
    (w's first elements, else its first repeated): requiring a gradient
    (through the view, into w) where grad."""
    n = math.prod(shape)
    flat = (w if grad else w.detach()).reshape(-1)
    part = flat[:n] if flat.numel() >= n else flat[:1].expand(n)
    return part.view(shape).unsqueeze(0).expand((b,) + tuple(shape))


def build(seed, data_dep_rate=0.06, device="cpu", alias=False, sizes=False, writes=True):
    """(model, make_batch, loss_fn, description) for seed; see the module's
    docstring. The model, the batches and the loss's constants are made on
    the CPU, from the same generators whatever the device, then moved to
    device. alias: calls whose tensors share memory (ALIAS_MODES; another
    model than the seed's without it). writes=False: no block writes a
    parameter or buffer in its forward (no batch norms, buffer blocks or
    Embedding(max_norm); another model than the seed's with it)."""
    r = random.Random(seed)
    torch.manual_seed(seed)
    B = r.randint(2, 4)
    layout = r.choice(["seq", "seq", "seq", "vec", "img"])
    flags = set()
    lines = []
    # inputs
    use_ids = layout == "seq" and r.random() < 0.4
    use_x = not use_ids or r.random() < 0.5
    use_y = r.random() < 0.25
    mode, aliased = _alias_mode(seed, layout, use_ids, use_x) if alias else (None, None)
    use_y = use_y or mode in ("same", "overlap")
    use_mask = layout == "seq" and r.random() < 0.4
    x_grad = use_x and r.random() < 0.3
    y_grad = use_y and r.random() < 0.5
    if layout == "seq":
        T, Din, D = r.randint(2, 8), r.randint(3, 12), r.randint(4, 16)
        xshape, hshape = (T, Din), (T, D)
    elif layout == "vec":
        T, Din, D = None, r.randint(3, 16), r.randint(4, 24)
        xshape, hshape = (Din,), (D,)
    else:
        T, Din, D = None, r.randint(1, 4), r.randint(2, 6)
        H, W = r.randint(3, 8), r.randint(3, 8)
        xshape, hshape = (Din, H, W), (D, H, W)
    vocab = r.randint(5, 40)
    max_norm = use_ids and r.random() < 0.2 and writes
    entry = Block("entry", parts=[p for p, u in (("x", use_x), ("ids", use_ids), ("y", use_y)) if u])
    if use_x:
        entry.inp = nn.Conv2d(Din, D, 3, padding=1) if layout == "img" else nn.Linear(Din, D)
    if use_ids:
        entry.emb = nn.Embedding(vocab, D, max_norm=1.0 if max_norm else None)
        flags.add("embedding")
        if max_norm:
            flags.add("embedding_max_norm")
    # y: (B, T, Din) or (B, Din); on images a per-sample vector added to
    # every pixel
    yshape = xshape[:-1] + (Din,) if layout == "seq" else (Din,)
    if use_y:
        entry.lin_y = nn.Linear(Din, D) if layout != "img" else \
            nn.Sequential(nn.Linear(Din, D), nn.Unflatten(1, (D, 1, 1)))
    if mode == "ids_twice":
        entry.lm = nn.Linear(D, vocab)
    lines.append("inputs: B=%d layout=%s x=%s%s ids=%s mask=%s y=%s%s" % (
        B, layout, xshape if use_x else None, " (grad)" if x_grad else "",
        (T, vocab) if use_ids else None, use_mask, yshape if use_y else None,
        " (grad)" if y_grad else ""))
    flags.update(["layout_" + layout])
    if use_ids:
        flags.add("input_ids")
    if use_mask:
        flags.add("input_mask")
    if use_y:
        flags.add("input_kwarg_y")
    if x_grad or y_grad:
        flags.add("input_grad")
    if mode:
        flags.add("alias_" + mode)
        lines.append("alias: %s at steps %s" % (mode, [k for k in range(3) if aliased[k]]))
    st = _State(r, hshape, T if use_mask else None)
    st.flags = flags
    st.writes = writes
    cfg = {"emitted": [], "data_dep_rate": data_dep_rate, "scale_used": False}
    blocks = []
    extra = random.Random("norm_residual %d" % seed)
    shared = random.Random("shared %d" % seed)
    n_blocks = r.randint(3, 9)
    tries = 0
    while len(blocks) < n_blocks and tries < 200:
        tries += 1
        got = _pick_block(r, st, cfg)
        if got is None:
            continue
        b, text = got
        blocks.append(b)
        lines.append("block %d: %s" % (len(blocks) - 1, text))
        # ResNet basic blocks and shared layers (added after 2730f53)
        # draw from generators of their own, so that every other seed's
        # model stays the one the seed named before (docs/fuzzing.md's
        # seeds)
        for rng, rate, make in ((extra, NORM_RESIDUAL_RATE, _norm_residual_block),
                                (shared, SHARED_RATE, _shared_block)):
            if rng.random() < rate:
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(rng.randrange(2 ** 31))
                    b, text = make(rng, st)
                blocks.append(b)
                lines.append("block %d: %s" % (len(blocks) - 1, text))
    # head and output
    K = r.randint(2, 10)
    dup = r.choice([0] * 8 + [1, 2])
    head = Block("head", dup=dup)
    tied = use_ids and st.shape[-1] == D and r.random() < 0.5
    if tied:
        # a language model's head: the embedding's weight, tied
        K = vocab
        head.lin = nn.Linear(D, K, bias=r.random() < 0.5)
        head.lin.weight = entry.emb.weight
        flags.add("tied_weights")
    else:
        head.lin = nn.Linear(st.shape[-1], K)
    if r.random() < 0.15:
        head.lin.weight.register_hook(lambda g: g * 0.5)
        flags.add("param_hook")
    if dup:
        flags.add("out_same_tensor_%dx" % (dup + 1))
    roles = ["main"] + cfg["emitted"] + ["dup"] * dup
    n_out = len(roles)
    if n_out == 1:
        form = r.choice(["tensor", "tensor", "tuple", "dict"])
    else:
        form = r.choice(["tuple", "dict", "list"])
    names = ["out%d_%s" % (i, role) for i, role in enumerate(roles)]
    if form == "dict":
        r.shuffle(names)
        # the dict's order is insertion order; the loss reads by name
    outspec = (form, names)
    flags.add("output_" + form)
    if n_out > 1:
        flags.add("several_outputs")
    model = Net(entry, blocks, head, outspec).to(device)
    model.train()
    lines.append("head: Linear(%d, %d); output %s %s" % (st.shape[-1], K, form, roles))
    # the loss: a term per used float output
    terms = []
    for i, role in enumerate(roles):
        if role in ("int", "buffer", "ignored", "holder"):
            continue
        if role == "raw" and r.random() < 0.3:
            flags.add("out_raw_ignored")
            continue
        choices = ["mean_sq", "mean", "weighted"]
        if role == "main":
            choices.append("ce")
        terms.append((i, r.choice(choices), r.choice([0.5, 1.0, 2.0])))
    if not any(role == "main" for role in roles[:1]) or not terms:
        terms.append((0, "mean_sq", 1.0))
    lines.append("loss: %s" % ", ".join("%s(out %d)*%s" % (k, i, w) for i, k, w in terms))
    # inputs a step gets
    scale_kw = cfg["scale_used"] or r.random() < 0.2
    scale = r.choice([0.5, 2.0])
    pos = []
    if use_x:
        pos.append("x")
        if use_ids and r.random() < 0.5:
            pos.append("ids")
    elif use_ids and r.random() < 0.5:
        pos += ["x", "ids"]  # x=None, a constant, then the ids
    batch_change = r.random() < 0.08
    if batch_change:
        flags.add("batch_change")

    def make_batch(step):
        g = torch.Generator().manual_seed(seed * 1009 + step)
        b = B - 1 if batch_change and step == 2 and B > 2 else B
        t, xs, ys = T, xshape, yshape
        if sizes:
            # each step shorter and smaller than the one before, down to 2
            b = B - step if B - step >= 2 else B
            if T is not None and T - step >= 2:
                t = T - step
                xs, ys = (t,) + xshape[1:], (t,) + yshape[1:]
        vals = {}
        if use_x:
            vals["x"] = torch.randn((b,) + xs, generator=g).to(device)
            if x_grad:
                vals["x"].requires_grad_(True)
        if use_ids:
            vals["ids"] = torch.randint(0, vocab, (b, t), generator=g).to(device)
        if use_mask:
            m = torch.rand((b, t), generator=g) < 0.7
            m[:, 0] = True
            vals["mask"] = m.to(device)
        if use_y:
            vals["y"] = torch.randn((b,) + ys, generator=g).to(device)
            if y_grad:
                vals["y"].requires_grad_(True)
        if mode:
            _alias(vals, b, g, aliased[step % 3])
        args = tuple(vals.pop(k, None) for k in pos)
        kwargs = dict(vals)
        if scale_kw:
            kwargs["scale"] = scale
        return args, kwargs

    def _alias(vals, b, g, on):
        """vals changed as mode says for a call that aliases (on) or not."""
        if mode == "ids_twice":
            t = torch.randint(0, vocab, (b, T), generator=g).to(device)
            t[:, 0] = -100
            vals["tgt"] = vals["ids"] if on else t
        elif on and mode == "same":
            vals["y"] = vals["x"]
        elif on and mode == "overlap" and layout == "img":
            vals["y"] = vals["x"][:, :, 0, 0]
        elif on and mode == "overlap":
            base = torch.randn((b,) + xshape[:-1] + (Din + 1,), generator=g).to(device)
            base.requires_grad_(x_grad or y_grad)
            vals["x"], vals["y"] = base[..., :-1], base[..., 1:]
        elif on and mode == "param":
            vals["x"] = _param_view(entry.inp.weight, b, xshape, x_grad)

    wgen = torch.Generator().manual_seed(seed * 31 + 7)
    weights = {}

    def leaves(out):
        if form == "tensor":
            return [out]
        if form == "dict":
            return [out[n] for n in names]
        return list(out)

    def loss_fn(out, step):
        flat = leaves(out)
        loss = None
        for i, kind, w in terms:
            t = flat[i]
            if kind == "mean_sq":
                v = t.pow(2).mean()
            elif kind == "mean":
                v = t.mean()
            elif kind == "weighted":
                key = (i, tuple(t.shape))
                if key not in weights:
                    weights[key] = torch.randn(t.shape, generator=wgen).to(device)
                v = (t * weights[key]).sum() / t.numel()
            else:
                g = torch.Generator().manual_seed(seed * 7919 + step)
                logits = t.reshape(-1, t.shape[-1])
                y = torch.randint(0, t.shape[-1], (logits.shape[0],), generator=g).to(device)
                v = F.cross_entropy(logits, y)
            v = v * w
            loss = v if loss is None else loss + v
        return loss

    flags.update("loss_" + k for _, k, _ in terms)
    if scale_kw:
        flags.add("const_kwarg")
    if len(pos) > 1:
        flags.add("several_positional")
    d = Description("features: %s\n%s" % (" ".join(sorted(flags)), "\n".join(lines)))
    d.features = sorted(flags)
    return model, make_batch, loss_fn, d


def main(argv):
    for s in argv[1:] or ["0"]:
        model, make_batch, loss_fn, d = build(int(s))
        args, kwargs = make_batch(0)
        print("seed %s\n%s" % (s, d))
        out = model(*args, **kwargs)
        print("loss %.6f" % loss_fn(out, 0).item())


if __name__ == "__main__":
    main(sys.argv)

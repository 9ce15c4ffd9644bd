"""Two decoder-only transformers of configurable depth for exporting
training graphs at the scale of language models: a GPT-2-style decoder
(pre-norm LayerNorm blocks of causal self-attention and a GELU MLP, biases)
and a Llama-style one (RMSNorm, rotary position embeddings, SwiGLU MLP,
no biases). No dropout, no token embedding: the input is the embedded
sequence (float, batch x T x width) and the output a width-sized vector a
position (a linear head), so `export`'s loss is the sum of the outputs.
Each block builds its causal mask (and the Llama block its rotary tables)
from the sequence length, so no buffer ties the blocks together.

`gptN` and `llamaN`, for any N, are the N-layer models at the defaults
below (GPT: width 768, 12 heads; Llama: width 1024, 8 heads, MLP 2816):

  python3 -m checkmate_torch export checkmate_torch/examples/llm.py:gpt48 \\
      --input 1024x768 --batch 8 -o gpt48.json
  python3 -m checkmate_torch export checkmate_torch/examples/llm.py:llama32 \\
      --input 512x1024 --batch 1 -o llama32.json

tiny_gpt and tiny_llama are two layers of width 32 (`--input 8x32`), for
tests. Other sizes: GPT(layers, d, heads) and Llama(layers, d, heads,
hidden) from Python, or a function of your own returning one."""
import math
import re

import torch
from torch import nn
from torch.nn import functional as F


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(head dim)) v over (batch, heads, T, head dim),
    position i seeing positions <= i."""
    t, hd = q.shape[-2], q.shape[-1]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
    allowed = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
    return F.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v


class GPTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = causal_attention(q, k, v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers=12, d=768, heads=12):
        super().__init__()
        self.blocks = nn.ModuleList(GPTBlock(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, d)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_tables(t, hd, device, theta=10000.0):
    """cos and sin of position x frequency, (T, head dim / 2)."""
    f32 = dict(dtype=torch.float32, device=device)
    freqs = 1.0 / theta ** (torch.arange(0, hd, 2, **f32) / hd)
    angles = torch.arange(t, **f32)[:, None] * freqs[None, :]
    return angles.cos(), angles.sin()


def rotate(x, cos, sin):
    """Rotates each pair (x[2i], x[2i+1]) of the last dimension by its
    position's angle for frequency i."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.heads = heads
        self.attn_norm = RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d, bias=False)
        self.wv = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.mlp_norm = RMSNorm(d)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        h = self.attn_norm(x)
        q, k, v = (w(h).view(b, t, self.heads, hd).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        cos, sin = rotary_tables(t, hd, x.device)
        y = causal_attention(rotate(q, cos, sin), rotate(k, cos, sin), v)
        x = x + self.wo(y.transpose(1, 2).contiguous().view(b, t, d))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, layers=8, d=1024, heads=8, hidden=2816):
        super().__init__()
        self.blocks = nn.ModuleList(LlamaBlock(d, heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, d, bias=False)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


def tiny_gpt():
    """Two layers of width 32 (4 heads): for tests, `--input 8x32`."""
    return GPT(layers=2, d=32, heads=4)


def tiny_llama():
    """Two layers of width 32 (4 heads, MLP 64): for tests, `--input 8x32`."""
    return Llama(layers=2, d=32, heads=4, hidden=64)


_KINDS = {"gpt": GPT, "llama": Llama}


def __getattr__(name):
    """gptN and llamaN (N layers) for `export`'s FILE.py:FUNCTION."""
    m = re.fullmatch(r"(gpt|llama)([1-9][0-9]*)", name)
    if m is None:
        raise AttributeError(name)
    kind, layers = _KINDS[m.group(1)], int(m.group(2))
    return lambda: kind(layers=layers)

"""A small GPT: token and position embeddings, pre-norm blocks of causal
self-attention and a GELU MLP, dropout, a language-model head whose weight
is the token embedding's (tied, as GPT-2's). Its inputs
are token ids (long, batch x T) and an optional attention mask (bool, True
for a real token): `--input long:16:256 --input attention_mask=bool:16`
with `--batch B`."""
import math

import torch
from torch import nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, blocked):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = self.drop(F.softmax(att.masked_fill(blocked, float("-inf")), dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.drop(self.proj(y))
        return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))


class GPT(nn.Module):
    def __init__(self, vocab=256, context=16, d=64, heads=4, layers=2, dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(context, d)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(d, heads, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight
        self.register_buffer("causal", torch.ones(context, context, dtype=torch.bool).tril(),
                             persistent=False)

    def forward(self, ids, attention_mask=None):
        t = ids.shape[1]
        pos = torch.arange(t, device=ids.device)
        x = self.drop(self.wte(ids) + self.wpe(pos))
        allowed = self.causal[:t, :t]
        if attention_mask is not None:
            allowed = allowed & attention_mask[:, None, None, :]
        blocked = ~allowed
        for blk in self.blocks:
            x = blk(x, blocked)
        return self.head(self.ln_f(x))


def gpt():
    return GPT()

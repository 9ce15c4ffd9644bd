"""Training a small GPT under a checkmate plan: token ids, an attention
mask, cross-entropy written outside the module, AdamW. Run from the
repository root (or with the package installed):
`/usr/bin/python3 -m checkmate_torch.examples.train_gpt`."""
import torch
from torch.nn import functional as F
import checkmate_torch
from checkmate_torch.examples.gpt import GPT

torch.manual_seed(0)
model = GPT(vocab=256, context=16, d=64, heads=4, layers=2, dropout=0.1)
ids = torch.randint(0, 256, (8, 16))
mask = torch.ones(8, 16, dtype=torch.bool)

# Fixed memory (weights, gradients, inputs) plus half of the activations.
m = checkmate_torch.remat(model, (ids,), {"attention_mask": mask},
                          budget=lambda fixed, peak: fixed + (peak - fixed) // 2,
                          time_limit=10)
print({k: m.plan_info[k] for k in ("budget", "peak", "checkpoint_all_peak", "overhead")})

opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(0, 256, (8, 16))
    logits = m(ids, attention_mask=mask)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 256), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))

"""The worker of t_sac.py's FSDP2 check, one per process of
torch.multiprocessing.spawn (a module of its own, so that the processes
import it by name): our GPT trained for 3 AdamW steps under FSDP2
(fully_shard per block, then the model) on 2 gloo processes on the CPU,
each block called three ways: plainly, through torch's checkpoint (full
recompute), and through checkpoint with its sac_policy (sac_blocks, made
before fully_shard on the whole model); each process saves its losses
and the full parameters after the steps to OUT/rank<r>.pt."""
import copy
import functools
import os

import torch
import torch.distributed as dist
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

STEPS = 3
MODES = ("plain", "checkpoint", "policy")


def _full_checkpoint(forward, *a, **k):
    return checkpoint(forward, *a, use_reentrant=False, **k)


def _train(model, ids, mask, target):
    torch.manual_seed(10 + dist.get_rank())      # dropout: a stream per process
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        out = model(ids, attention_mask=mask)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))
        loss.backward()
        losses.append(loss.detach().clone())
        opt.step()
    params = [p.full_tensor() if hasattr(p, "full_tensor") else p.detach().clone()
              for p in model.parameters()]
    return losses, params


def worker(rank, world, init_file, out_dir, budget_fraction):
    torch.set_num_threads(1)
    from torch.distributed.fsdp import fully_shard
    import checkmate_torch
    from checkmate_torch.examples.gpt import GPT
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=world)
    try:
        torch.manual_seed(0)
        base = GPT(layers=3)                 # the same weights in every process
        g = torch.Generator().manual_seed(100 + rank)   # each process its own batch
        ids = torch.randint(0, 256, (4, 16), generator=g)
        mask = torch.ones(4, 16, dtype=torch.bool)
        mask[0, 12:] = False
        target = torch.roll(ids, -1, 1)
        got = {}
        for mode in MODES:
            model = copy.deepcopy(base)
            saved = None
            if mode == "checkpoint":
                for blk in model.blocks:
                    blk.forward = functools.partial(_full_checkpoint, blk.forward)
            elif mode == "policy":
                pols = checkmate_torch.sac_blocks(
                    model, model.blocks, (ids,), {"attention_mask": mask},
                    budget=lambda fixed, peak: fixed + int(budget_fraction * (peak - fixed)))
                saved = [p.info["saved"] for p in pols]
            for blk in model.blocks:
                fully_shard(blk)
            fully_shard(model)
            got[mode] = _train(model, ids, mask, target) + (saved,)
        torch.save(got, os.path.join(out_dir, "rank%d.pt" % rank))
    finally:
        dist.destroy_process_group()

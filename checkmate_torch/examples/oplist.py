"""torch's op-list selective checkpointing policy as torchtitan writes it,
for comparisons (tests/torch/t_sac.py, bench/torch_sac.py): save the
output of every matrix product, or of every second one (counted per
checkpoint call), recompute the rest."""
from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts


def op_list_context(every_second, matmuls):
    """The context_fn of checkpoint() for that policy; matmuls: the ops
    counted as matrix products."""
    def context():
        seen = {"mm": 0}

        def policy_fn(ctx, op, *args, **kwargs):
            if op not in matmuls:
                return CheckpointPolicy.PREFER_RECOMPUTE
            seen["mm"] += 1
            keep = not every_second or seen["mm"] % 2 == 1
            return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE
        return create_selective_checkpoint_contexts(policy_fn)
    return context

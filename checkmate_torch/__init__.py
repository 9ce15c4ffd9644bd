"""checkmate_torch: train a PyTorch model under a checkmate plan
(checkmate_torch.remat), export a model's joint forward and backward graph
as a checkmate-graph v1 file, and replay a plan on it with real tensors.
Run as `python3 -m checkmate_torch --help`; docs/torch.md describes the
choices."""


def remat(model, example_args, example_kwargs=None, **settings):
    """See checkmate_torch.train.remat (imported on first use, so that
    importing the package does not import torch)."""
    from .train import remat as _remat
    return _remat(model, example_args, example_kwargs, **settings)


def sac_policy(module, example_args, example_kwargs=None, **settings):
    """See checkmate_torch.sac.sac_policy: the context_fn of
    torch.utils.checkpoint.checkpoint that saves what fits a budget."""
    from .sac import sac_policy as _sac_policy
    return _sac_policy(module, example_args, example_kwargs, **settings)


def sac_blocks(model, blocks, example_args, example_kwargs=None, **settings):
    """See checkmate_torch.sac.sac_blocks: each block checkpointed with
    its own sac_policy."""
    from .sac import sac_blocks as _sac_blocks
    return _sac_blocks(model, blocks, example_args, example_kwargs, **settings)

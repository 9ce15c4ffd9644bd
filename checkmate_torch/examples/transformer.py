"""A torch.nn.TransformerEncoder of 4 layers (d_model 64, 4 heads, no
dropout), input batch x 16 tokens x 64: `--model
checkmate_torch/examples/transformer.py:encoder --batch 2 --input 16x64`."""
from torch import nn


def encoder(layers=4, d_model=64, heads=4, dropout=0.0):
    layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                       dropout=dropout, batch_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


def encoder_dropout():
    """The same with dropout 0.1: random ops, replayed under a fixed seed
    per node."""
    return encoder(dropout=0.1)

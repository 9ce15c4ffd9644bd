"""A module that branches on a tensor's value: it cannot be traced to one
graph, and export must say so (tests use it)."""
import torch
from torch import nn


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x.flatten(1))
        if y.sum() > 0:                    # data-dependent control flow
            y = torch.relu(y)
        return y


def model():
    return Branchy()

"""A module with a tensor literal in forward (torch.tensor(...) traces to
aten.lift_fresh_copy, as in torchvision's Swin Transformer); tests use it."""
import torch
from torch import nn


class Literal(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(8, 8)
        self.lin2 = nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.lin1(x.flatten(1)))
        y = y * torch.tensor(0.5)          # the literal
        return self.lin2(y)


def model():
    return Literal()

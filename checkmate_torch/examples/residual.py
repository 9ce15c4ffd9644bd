"""A small user module with a residual branch, for
`python3 -m checkmate_torch export --model checkmate_torch/examples/residual.py:model
--batch 2 --input 3x32x32 -o residual.json`."""
import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, channels=16, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        x = torch.relu(x + y)              # the residual branch joins here
        x = x.mean(dim=(2, 3))
        return self.head(x)


def model():
    return Residual()

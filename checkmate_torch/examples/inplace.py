"""A small residual net written with in-place ops (ReLU(inplace=True),
`out += identity`, `mul_`) that returns a dict: {"logits", "features"}.
Input: `--input 3x32x32`."""
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return self.relu(out)


class Net(nn.Module):
    def __init__(self, width=16, blocks=3, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(*[Block(width) for _ in range(blocks)])
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        out = self.blocks(self.stem(x))
        f = out.mean((2, 3))
        f.mul_(2.0)
        return {"logits": self.fc(f), "features": f}


def model():
    return Net()

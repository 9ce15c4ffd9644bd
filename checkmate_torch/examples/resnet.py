"""ResNet-50 (He et al. 2016, "Deep Residual Learning for Image
Recognition", the bottleneck version torchvision builds), in our own code:
no torchvision import.

A 7x7/2 convolution, batch norm, ReLU and a 3x3/2 max pool; four stages
of bottleneck blocks ([3, 4, 6, 3] for ResNet-50; widths 64, 128, 256, 512,
each block's output 4 times its width: 256 .. 2048 channels), each block
1x1 -> 3x3 -> 1x1 convolutions with batch norm, the stride on the 3x3
convolution (torchvision's "ResNet v1.5"), a 1x1 convolution and batch
norm on the shortcut where the shape changes, the shortcut added in place,
in-place ReLUs (torchvision's forward, op for op); global average pooling
and a linear classifier. Initialisation as torchvision's:
Kaiming normal (fan_out, ReLU) convolutions, batch norm weight 1 and bias 0,
the linear layer's default.

`model(classes=1000)` is ResNet-50 with 25,557,032 parameters, the count
of torchvision.models.resnet50(). `resnet(depth_blocks=(3, 4, 6, 3),
width=64, classes=1000)` builds other depths and widths. The stages are
`m.layer1` .. `m.layer4` (nn.Sequential of Bottleneck), as in torchvision,
so the same state_dict keys. For the exporter:
`--model checkmate_torch/examples/resnet.py:model --batch 2 --input 3x64x64`.
"""
from torch import nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        out = planes * self.expansion
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != out:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, out, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(out))

    def forward(self, x):
        # torchvision's order: the main path, then the shortcut, added in place
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        y += x if self.downsample is None else self.downsample(x)
        return self.relu(y)


class ResNet(nn.Module):
    def __init__(self, depth_blocks=(3, 4, 6, 3), width=64, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        inplanes = width
        for i, n in enumerate(depth_blocks):
            planes = width * 2 ** i
            layers = []
            for j in range(n):
                layers.append(Bottleneck(inplanes, planes, stride=2 if i > 0 and j == 0 else 1))
                inplanes = planes * Bottleneck.expansion
            setattr(self, "layer%d" % (i + 1), nn.Sequential(*layers))
        self.stages = len(depth_blocks)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(inplanes, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        for i in range(self.stages):
            x = getattr(self, "layer%d" % (i + 1))(x)
        return self.fc(self.avgpool(x).flatten(1))


def resnet(depth_blocks=(3, 4, 6, 3), width=64, classes=1000):
    return ResNet(depth_blocks, width, classes)


def model(classes=1000):
    return ResNet((3, 4, 6, 3), 64, classes)

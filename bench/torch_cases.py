"""The training steps the PyTorch benchmarks measure (bench/torch_train.py,
bench/torch_peers.py), built the same way for both: seeded inputs on the
device, the model seeded with torch.manual_seed(0), the loss outside the
model. Each case is a dict: desc, model, args, kwargs, loss (a function
of the model's output), blocks (the (container, index) pairs a wrapper can
replace: the transformer blocks, the bottleneck blocks) and dropout."""
import torch
from torch.nn import functional as F


def add_size_arguments(ap, gpt_layers=8, gpt_d=256, gpt_context=128, gpt_batch=4,
                       resnet_batch=16, resnet_size=128):
    """The models' sizes as options of argparse parser ap (gpt and
    resnet50 below read them), with these defaults."""
    ap.add_argument("--gpt-layers", type=int, default=gpt_layers)
    ap.add_argument("--gpt-d", type=int, default=gpt_d)
    ap.add_argument("--gpt-context", type=int, default=gpt_context)
    ap.add_argument("--gpt-batch", type=int, default=gpt_batch)
    ap.add_argument("--resnet-batch", type=int, default=resnet_batch)
    ap.add_argument("--resnet-size", type=int, default=resnet_size)


def gpt(args, device, dropout):
    """checkmate_torch/examples/gpt.py GPT(vocab=256, context=--gpt-context,
    d=--gpt-d, heads=4, layers=--gpt-layers, dropout), batch --gpt-batch:
    token ids, attention_mask (bool, all True) as a keyword, cross-entropy
    of the logits against the ids shifted by one."""
    from checkmate_torch.examples.gpt import GPT
    gen = torch.Generator().manual_seed(2)
    b, t = args.gpt_batch, args.gpt_context
    ids = torch.randint(0, 256, (b, t), generator=gen).to(device)
    mask = torch.ones(b, t, dtype=torch.bool, device=device)
    torch.manual_seed(0)
    model = GPT(vocab=256, context=t, d=args.gpt_d, heads=4, layers=args.gpt_layers,
                dropout=dropout)

    def loss_fn(out):
        return F.cross_entropy(out[:, :-1].reshape(-1, out.shape[-1]), ids[:, 1:].reshape(-1))

    def blocks(m):
        return [(m.blocks, i) for i in range(len(m.blocks))]
    return dict(desc="GPT(vocab=256, context=%d, d=%d, heads=4, layers=%d, dropout=%g), batch %d"
                % (t, args.gpt_d, args.gpt_layers, dropout, b),
                model=model, args=(ids,), kwargs={"attention_mask": mask}, loss=loss_fn,
                blocks=blocks, dropout=dropout)


def resnet50(args, device, torchvision=False):
    """ResNet-50 at batch --resnet-batch, 3x--resnet-size squared, random
    labels of 1000 classes, cross-entropy: torchvision's where torchvision
    is asked for and imports, else checkmate_torch/examples/resnet.py (the
    same layers)."""
    gen = torch.Generator().manual_seed(1)
    b, s = args.resnet_batch, args.resnet_size
    x = torch.randn(b, 3, s, s, generator=gen).to(device)
    y = torch.randint(0, 1000, (b,), generator=gen).to(device)
    torch.manual_seed(0)
    model = None
    if torchvision:
        try:
            import torchvision as tv
            model, which = tv.models.resnet50(weights=None), "torchvision resnet50"
        except ImportError:   # torch 2.x from PyPI: no torchvision beside it
            pass
    if model is None:
        from checkmate_torch.examples.resnet import model as ours
        model, which = ours(), "ResNet-50 (checkmate_torch/examples/resnet.py)"

    def loss_fn(out):
        return F.cross_entropy(out, y)

    def blocks(m):
        return [(layer, j) for layer in (m.layer1, m.layer2, m.layer3, m.layer4)
                for j in range(len(layer))]
    return dict(desc="%s, batch %d, 3x%dx%d" % (which, b, s, s), model=model, args=(x,),
                kwargs={}, loss=loss_fn, blocks=blocks, dropout=0.0)

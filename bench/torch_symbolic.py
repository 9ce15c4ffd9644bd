#!/usr/bin/python3
"""What a symbolic trace of a training step gives (issue 62's next step):
Hugging Face's GPT-2 (4 layers, width 256, batch 4, length --length),
traced by trace.py as remat traces it (make_fx over fake tensors, every
size a number), then again with the inputs' sequence dimension a symbol
(a ShapeEnv without duck sizing, the parameters' sizes static). Prints
one JSON line: both traces' times, the guards the symbolic trace
recorded, the ATen ops of each graph and the ops only one of them has.

Usage: build/venv-torch2/bin/python bench/torch_symbolic.py [--length 256]"""
import argparse
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--length", type=int, default=256)
    args = ap.parse_args()
    import torch
    import transformers as tf
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import (DimDynamic, ShapeEnv,
                                                       StatelessSymbolicContext)
    from torch._subclasses.fake_tensor import FakeTensorMode
    from checkmate_torch import trace as tr
    torch.set_num_threads(1)
    tf.logging.set_verbosity_error()
    cfg = tf.GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=1000, n_positions=512,
                        use_cache=False)
    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(cfg).train()
    ids = torch.randint(0, 1000, (4, args.length))
    t = time.perf_counter()
    fake, _ = tr.trace(model, (), {"input_ids": ids, "labels": ids}, "tangents")
    fake_s = time.perf_counter() - t

    env = ShapeEnv(duck_shape=False)
    mode = FakeTensorMode(shape_env=env, allow_fallback_kernels=True)

    def symbolic(f, ps, bs, xs, tangents):
        def fakes(ts, dim):
            return [mode.from_tensor(x, symbolic_context=StatelessSymbolicContext(
                dynamic_sizes=[DimDynamic.DYNAMIC if i == dim else DimDynamic.STATIC
                               for i in range(x.dim())])) for x in ts]
        with mode:
            return make_fx(f, tracing_mode="symbolic")(
                fakes(ps, None), fakes(bs, None), fakes(xs, 1), fakes(tangents, 1))
    tr._make_fx = symbolic
    t = time.perf_counter()
    sym, _ = tr.trace(model, (), {"input_ids": ids, "labels": ids}, "tangents")
    sym_s = time.perf_counter() - t

    def ops(gm):
        return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"
                and isinstance(n.target, torch._ops.OpOverload)
                and not str(n.target).startswith("aten.sym_")]
    a, b = collections.Counter(ops(fake.gm)), collections.Counter(ops(sym.gm))
    print(json.dumps({"length": args.length, "torch": torch.__version__,
                      "fake_trace_s": round(fake_s, 2), "symbolic_trace_s": round(sym_s, 2),
                      "guards": [str(g.expr) for g in env.guards],
                      "ops_fake": sum(a.values()), "ops_symbolic": sum(b.values()),
                      "only_fake": dict(a - b), "only_symbolic": dict(b - a)}))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A fine-tuning loop whose sequence length changes from batch to batch
(issue 62): Hugging Face's GPT-2 or Llama, small configs, AdamW, lengths
drawn at random, under checkmate_torch.remat and ordinarily, from the
same seeds.

Usage: PYTHON bench/torch_shapes.py [--model gpt2|llama] [--steps 100]
           [--batch 4] [--min 16] [--max 256] [--time-limit 10]
           [--frac 0.5] [--cache DIR] [--peaks N] [--declare] [--background]
           [--cost flops|time] [--interleave] [--compile] [--json FILE]

remat's example is a batch at --max (so that its plan serves every
shorter length: docs/torch.md, "Other sizes, one solve"); the budget is
fixed memory + frac of the activations there; --cache keeps plans in DIR
(run twice: the second run solves nothing). Prints: the total time of
the steps, first calls included, for each loop and their ratio; the
distinct lengths; how many were solved and how many reused a plan; the
mean time of a step at a new length; and whether every loss equals the
ordinary loop's bit for bit. --peaks N (eager) then measures one step at
N of the distinct lengths, spread from the shortest to the longest: its
peak of live tensor bytes between ops (checkmate_torch.measure.step_peak)
against the activations of the plan that length ran (plan_info["peak"]
less fixed memory, plus the generator states and snapshots the step
allocates) plus t_train.py's allowance (the largest parameter, the
outputs twice).

--compile compares remat(compile=True) with torch.compile(dynamic=True)
instead, both from the same seeds: the total times, how many graphs
each compiled (torch's frames, checkmate's partitions), and whether
every loss is within 1e-4 of torch.compile's. --declare (either mode)
passes dynamic={"input_ids": {1: max}, "labels": {1: max}} to remat;
--background passes background=True (eager: the search goes on beside
the steps); --cost passes remat's cost= (eager; "time": each op timed
once on the example, the first steps included). --interleave (eager)
steps the two models in turn, a step each, remat's first (it is made
first, its time counted), so that the machine's drift over a run falls
on both loops alike. A loop's total is the sum of its steps' times."""
import argparse
import json
import os
import random
import sys
import time
import warnings

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)


def build(name, tf):
    if name == "gpt2":
        cfg = tf.GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=1000,
                            n_positions=512, use_cache=False)
        return tf.GPT2LMHeadModel(cfg)
    cfg = tf.LlamaConfig(num_hidden_layers=4, hidden_size=256, intermediate_size=688,
                         num_attention_heads=4, num_key_value_heads=4, vocab_size=1000,
                         max_position_embeddings=512, use_cache=False)
    return tf.LlamaForCausalLM(cfg)


def setup(args, torch, tf):
    """(the model, a copy of it, the lengths drawn, their batches, the
    generator that drew them), from the same seeds each run."""
    torch.manual_seed(0)
    model = build(args.model, tf)
    model.train()
    ref = build(args.model, tf)
    ref.load_state_dict(model.state_dict())
    ref.train()
    rnd = random.Random(1)
    lengths = [rnd.randint(args.min, args.max) for _ in range(args.steps)]
    gen = torch.Generator().manual_seed(2)
    batches = [torch.randint(0, 1000, (args.batch, n), generator=gen) for n in lengths]
    return model, ref, lengths, batches, gen


def loop(torch, m, params, batches, other=None):
    """AdamW steps of m on batches (as input_ids and labels), each from
    torch.manual_seed(its index): (the sum of the steps' seconds, the
    losses, the seconds of each step at a length not seen before). other: a second
    (model, parameters), stepped in turn with m, a step each
    (--interleave): a list of the two results."""
    runs = [(m, torch.optim.AdamW(params, lr=1e-3), [0.0, [], []])]
    if other is not None:
        runs.append((other[0], torch.optim.AdamW(other[1], lr=1e-3), [0.0, [], []]))
    seen = set()
    for step, ids in enumerate(batches):
        for n, opt, out in runs:
            torch.manual_seed(step)
            s = time.perf_counter()
            loss = n(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            took = time.perf_counter() - s
            out[0] += took
            out[1].append(loss.detach())
            if ids.shape[1] not in seen:
                out[2].append(took)
        seen.add(ids.shape[1])
    got = [tuple(out) for _, _, out in runs]
    return got if other is not None else got[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="gpt2", choices=("gpt2", "llama"))
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--min", type=int, default=16)
    ap.add_argument("--max", type=int, default=256)
    ap.add_argument("--time-limit", type=float, default=10)
    ap.add_argument("--frac", type=float, default=0.5)
    ap.add_argument("--cache", default=False,
                    help="the plan cache's directory (default: none)")
    ap.add_argument("--peaks", type=int, default=0)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--declare", action="store_true")
    ap.add_argument("--background", action="store_true")
    ap.add_argument("--interleave", action="store_true")
    ap.add_argument("--cost", default="flops", choices=("flops", "time"))
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.compile:
        return compiled(args)
    import torch
    import transformers as tf
    import checkmate_torch
    from checkmate_torch import solve as solvemod
    tf.logging.set_verbosity_error()
    torch.set_num_threads(1)
    solves = []     # `checkmate solve` processes (a plan the cache holds makes none)
    init = solvemod.Search.__init__

    def counted(self, *a, **k):
        solves.append(1)
        init(self, *a, **k)
    solvemod.Search.__init__ = counted

    model, ref, lengths, batches, gen = setup(args, torch, tf)

    if not args.interleave:
        plain_s, want, _ = loop(torch, ref, ref.parameters(), batches)
    t0 = time.perf_counter()
    example = torch.randint(0, 1000, (args.batch, args.max), generator=gen)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dynamic = {"input_ids": {1: args.max}, "labels": {1: args.max}} \
            if args.declare else None
        m = checkmate_torch.remat(model, (), {"input_ids": example, "labels": example},
                                  budget=lambda f, p: int(f + (p - f) * args.frac),
                                  time_limit=args.time_limit, cache=args.cache,
                                  dynamic=dynamic, background=args.background,
                                  cost=args.cost)
        remat_s = time.perf_counter() - t0
        if args.interleave:
            (loop_s, got, new_times), (plain_s, want, _) = loop(
                torch, m, model.parameters(), batches, (ref, ref.parameters()))
        else:
            loop_s, got, new_times = loop(torch, m, model.parameters(), batches)
    remat_s += loop_s
    reused = sum(1 for c in m._plans.values() if c.info["reused"])
    row = {"model": args.model, "steps": args.steps, "batch": args.batch,
           "lengths": "%d-%d" % (args.min, args.max), "distinct": len(set(lengths)),
           "ordinary_s": round(plain_s, 1), "remat_s": round(remat_s, 1),
           "ratio": round(remat_s / plain_s, 2), "solves": len(solves),
           "plans_reused": reused, "cache": bool(args.cache), "declared": args.declare,
           "background": args.background, "cost": args.cost, "interleaved": args.interleave,
           "symbolic_plans": len(m._families), "symbolic_note": m.symbolic_note,
           "new_length_step_s": round(sum(new_times) / max(len(new_times), 1), 2),
           "equal": all(torch.equal(a, b) for a, b in zip(got, want)),
           "torch": torch.__version__}
    if args.peaks:
        row["peaks"] = peaks(torch, m, model, sorted(set(lengths)), args)
    print(json.dumps(row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(row, f)


def peaks(torch, m, model, distinct, args):
    """One step at args.peaks of the distinct lengths: per length, the
    measured peak, the plan's activations, the allowance and whether the
    first is within the other two."""
    from checkmate_torch.measure import step_peak
    k = min(args.peaks, len(distinct))
    picked = sorted({distinct[round(i * (len(distinct) - 1) / max(k - 1, 1))] for i in range(k)})
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    biggest = max(p.numel() * p.element_size() for p in model.parameters())
    out = []
    for n in picked:
        ids = torch.randint(0, 1000, (args.batch, n), generator=torch.Generator().manual_seed(n))

        def step():
            m(input_ids=ids, labels=ids).loss.backward()
        step()
        measured = step_peak(step, "cpu")["between_ops"]
        info = m.plan_info
        parts = info["fixed_memory_parts"]
        act = info["peak"] - info["fixed_memory"] + parts["rng_states"] + parts["snapshots"]
        with torch.no_grad():
            res = m(input_ids=ids, labels=ids)
        outs = 4 + res.logits.numel() * res.logits.element_size()
        allowance = biggest + 2 * outs
        out.append({"length": n, "measured": measured, "plan_activations": act,
                    "allowance": allowance, "reused": info["reused"],
                    "within": measured <= act + allowance})
    for p in model.parameters():
        p.grad = None
    return out


def compiled(args):
    import torch
    import transformers as tf
    import checkmate_torch
    from torch._dynamo.utils import counters
    tf.logging.set_verbosity_error()
    torch.set_num_threads(1)
    model, ref, lengths, batches, _ = setup(args, torch, tf)
    frames = counters["frames"]["ok"]
    plain_s, want, _ = loop(torch, torch.compile(ref, dynamic=True), ref.parameters(), batches)
    frames = counters["frames"]["ok"] - frames
    dynamic = {"input_ids": {1: args.max}, "labels": {1: args.max}} if args.declare else None
    example = batches[0]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        m = checkmate_torch.remat(model, (), {"input_ids": example, "labels": example},
                                  budget=lambda f, p: int(f + (p - f) * args.frac),
                                  time_limit=args.time_limit, cache=args.cache, compile=True,
                                  dynamic=dynamic)
        remat_s, got, _ = loop(torch, m, model.parameters(), batches)
    info = m.plan_info
    row = {"model": args.model, "steps": args.steps, "batch": args.batch,
           "lengths": "%d-%d" % (args.min, args.max), "distinct": len(set(lengths)),
           "declared": args.declare, "torch_compile_s": round(plain_s, 1),
           "remat_compile_s": round(remat_s, 1), "ratio": round(remat_s / plain_s, 2),
           "torch_compile_frames": frames, "partitions": len(m._partitioner.info),
           "sized_at": info["sized_at"], "budget": info["budget"],
           "measured_peak": info["measured_peak"],
           "max_rel_loss_diff": max(abs(a.item() - b.item()) / abs(b.item())
                                    for a, b in zip(got, want)),
           "warnings": sorted({str(w.message)[:120] for w in said
                               if "checkmate" in str(w.message)}),
           "cache": bool(args.cache), "torch": torch.__version__}
    print(json.dumps(row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(row, f)


if __name__ == "__main__":
    main()

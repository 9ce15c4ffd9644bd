#!/usr/bin/env python3
"""checkmate_torch.sac_blocks against per-block full checkpointing and
torch's op-list selective checkpointing, eager, at matched measured peaks
(issue 63).

Usage: build/venv-torch2/bin/python bench/torch_sac.py
           [--model gpt|hf-gpt2] [--dropout 0.1] [--rounds 11] [--warmup 2] [--threads 1]
           [--tries 4] [--lr 1e-3] [--time-limit 30]
           [--gpt-layers 8] [--gpt-d 256] [--gpt-context 128] [--gpt-batch 4]
           [--compile [--fractions 1,.6,.4,.2,.1,0] [--planned 1,.9,.8,.7,.6]]
           [--json FILE] [--markdown FILE]

The model (--model): gpt, bench/torch_cases.py's gpt
(checkmate_torch/examples/gpt.py, vocab 256, heads 4, the sizes above)
with --dropout; hf-gpt2, Hugging Face's GPT-2 at the same sizes. Variants, each on
its own copy of the model (seeded the same):
  eager           no checkpointing;
  ckpt-block      torch.utils.checkpoint.checkpoint(block, ...,
                  use_reentrant=False) around every transformer block;
  sac-matmuls     the same with torch's selective checkpointing, the
                  policy torchtitan writes: MUST_SAVE every matmul's
                  output (mm, addmm, bmm, baddbmm, the fused attentions),
                  PREFER_RECOMPUTE the rest;
  sac-2nd-matmul  the same saving every second matmul of a block (the
                  1st, 3rd, ...);
  policy @ P      for P each of the three above, checkmate_torch.sac_blocks
                  with a per-block budget fixed + A, A (bytes a block
                  saves) chosen so that the step's measured peak is at
                  most P's: first A = (P's peak - ckpt-block's peak) /
                  blocks (the eager memory model: a region holds its saved
                  outputs on top of plain checkpointing), then while the
                  measured peak exceeds P's by X, A = A - X / blocks - 1%
                  of A, and while it is under P's by more than 1%, by Y,
                  A = A + Y / blocks, up to --tries tries; the largest A
                  that fits is used, else the last, marked.

--compile runs every variant under torch.compile instead (each its own
compiled function, so that none reaches dynamo's recompile limit), without
matching: compile (no checkpointing), ckpt-block, sac-matmuls and
sac-2nd-matmul compiled; compile-B, torch.compile with
torch._functorch.config.activation_memory_budget = B (0.5, 0.2); policy F,
sac_blocks with a per-block budget of fixed + F of what a block holds
(each F of --fractions), compiled; planned F, sac_blocks(compile=True)
at fixed + F of the compiled step's peak without a policy above fixed
memory (each F of --planned; one it refuses, no candidate measuring
within, is left out); and remat(compile=True) at fixed + F of the
activations for F = .7 and .5. The losses are compared with
compile's (within 1e-4 of it, first round); "peak MB" is then the peak
at every moment ("in-op": inductor's fused kernels are no ATen ops).

A step: gradients zeroed in place, forward, loss, backward (timed and
measured), then an SGD step outside them. The peak is
checkmate_torch.measure.step_peak on the CPU after --warmup steps: "peak
MB" its between_ops (live tensor bytes at the end of each top-level ATen
op, workspaces out, as bench/torch_peers.py matches), "in-op MB" its
peak. Time: --rounds rounds of one step of every variant, the order
rotating, torch.manual_seed(round) before each; the median process CPU
time (time.process_time: one thread, so less moved by other processes on
a shared machine than the wall time, also reported) over eager's. The losses of every round are compared with eager's (equal bit
for bit expected: checkpointing keeps the generator's state). 1 MB = 10^6
bytes."""
import argparse
import copy
import datetime
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import checkmate_torch  # noqa: E402
from checkmate_torch.examples.oplist import op_list_context  # noqa: E402
import torch_cases  # noqa: E402
from checkmate_torch.measure import step_peak  # noqa: E402
from checkmate_torch.sac import SACError  # noqa: E402

MATMULS = {getattr(getattr(torch.ops.aten, p), "default") for p in (
    "mm", "addmm", "bmm", "baddbmm", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_efficient_attention")
    if hasattr(torch.ops.aten, p)}


def op_list(every_second):
    return op_list_context(every_second, MATMULS)


def _checkpointed(forward, context_fn, *a, **k):
    extra = {} if context_fn is None else {"context_fn": context_fn}
    return checkpoint(forward, *a, use_reentrant=False, **extra, **k)


class Variant:
    def __init__(self, label, model, lr, call=None):
        self.label, self.model = label, model
        self.call = call or model
        self.params = list(model.parameters())
        for p in self.params:
            p.grad = torch.zeros_like(p)
        self.opt = torch.optim.SGD(self.params, lr=lr)
        self.wall, self.cpu, self.losses, self.mem, self.extra = [], [], [], None, {}
        self.first = None   # a context the first step runs in

    def fwd_bwd(self, case):
        for p in self.params:
            p.grad.zero_()
        loss = case["loss"](self.call(*case["args"], **case["kwargs"]))
        loss.backward()
        return loss.detach()

    def warm_and_measure(self, case, warmup):
        for k in range(warmup):
            torch.manual_seed(1000 + k)
            if k == 0 and self.first is not None:
                with self.first():
                    self.fwd_bwd(case)
            else:
                self.fwd_bwd(case)
            self.opt.step()
        torch.manual_seed(999)
        r = step_peak(lambda: self.fwd_bwd(case), "cpu")
        self.opt.step()
        self.mem = {"between_ops": r["between_ops"], "peak": r["peak"]}
        return self.mem["between_ops"]


def build(case, base, label, args, context_fn=None, checkpointed=True):
    model = copy.deepcopy(base)
    if checkpointed:
        for blk in case["block_list"](model):
            blk.forward = functools.partial(_checkpointed, blk.forward, context_fn)
    return Variant(label, model, args.lr)


def build_policy(case, base, label, args, allowance):
    model = copy.deepcopy(base)
    t0 = time.perf_counter()
    pols = checkmate_torch.sac_blocks(
        model, case["block_list"](model), case["args"], case["kwargs"], time_limit=args.time_limit,
        budget=lambda fixed, peak: fixed + max(0, int(allowance)))
    v = Variant(label, model, args.lr)
    v.extra = {"build_s": time.perf_counter() - t0, "allowance": int(allowance),
               "saved_bytes": sum(p.info["saved_bytes"] for p in pols),
               "saved": [p.info["saved"] for p in pols], "ops": pols[0].info["ops"],
               "overhead": pols[0].info["overhead"],
               "full_overhead": pols[0].info["full_overhead"]}
    return v


def match(case, base, args, peer, plain_peak, blocks):
    """policy @ peer: the largest allowance tried whose measured peak fits
    peer's (else the last tried)."""
    target = peer.mem["between_ops"]
    allowance = (target - plain_peak) / blocks
    tries, best, v = [], None, None
    for _ in range(args.tries):
        v = build_policy(case, base, "policy @ " + peer.label, args, allowance)
        got = v.warm_and_measure(case, args.warmup)
        tries.append({"allowance": int(allowance), "peak": got})
        print("  policy @ %s: allowance %d bytes a block, peak %.3f MB (peer %.3f)"
              % (peer.label, allowance, got / 1e6, target / 1e6), flush=True)
        if got <= target:
            best = v if best is None or allowance > best.extra["allowance"] else best
            if target - got < 0.01 * target or allowance <= 0 and got == plain_peak == target:
                break
            allowance += (target - got) / blocks          # room left: save more
        else:
            allowance = max(0, allowance - (got - target) / blocks - 0.01 * allowance)
    v = best or v
    v.extra["tries"] = tries
    v.extra["fits"] = v.mem["between_ops"] <= target
    return v


_COMPILED = iter(range(1 << 30))


def build_compiled(case, base, label, args, prepare=None, backend="inductor"):
    """A Variant of a copy of base, prepare(copy) applied first (its
    figures in extra), run through torch.compile by a function of a code
    object of its own."""
    model = copy.deepcopy(base)
    extra = prepare(model) if prepare else {}

    def step(*a, **k):
        return model(*a, **k)
    step.__code__ = step.__code__.replace(co_name="sac_bench_%d" % next(_COMPILED))
    v = Variant(label, model, args.lr, torch.compile(step, backend=backend))
    v.extra = extra or {}
    return v


def compiled_variants(case, base, args):
    from torch_peers import budget_backend

    def blocks(context_fn):
        def prepare(model):
            for blk in case["block_list"](model):
                blk.forward = functools.partial(_checkpointed, blk.forward, context_fn)
        return prepare

    def policy(f):
        def prepare(model):
            pols = checkmate_torch.sac_blocks(
                model, case["block_list"](model), case["args"], case["kwargs"],
                time_limit=args.time_limit,
                budget=lambda fixed, peak: fixed + int(f * (peak - fixed)))
            return {"saved": [p.info["compile_saved"] for p in pols],
                    "ops": pols[0].info["compile_ops"]}
        return prepare

    def planned(f):
        def prepare(model):
            pols = checkmate_torch.sac_blocks(
                model, case["block_list"](model), case["args"], case["kwargs"],
                time_limit=args.time_limit, compile=True,
                budget=lambda fixed, peak: fixed + int(f * (peak - fixed)))
            return {"saved": [p.info["compile_saved"] for p in pols],
                    "ops": pols[0].info["compile_ops"]}
        return prepare

    def remat(f):
        m = copy.deepcopy(base)
        r = checkmate_torch.remat(m, case["args"], case["kwargs"], compile=True,
                                  time_limit=args.time_limit,
                                  budget=lambda fixed, peak: fixed + int(f * (peak - fixed)))
        return Variant("remat compile F=%g" % f, m, args.lr, r)
    out = [build_compiled(case, base, "compile", args),
           build_compiled(case, base, "ckpt-block", args, blocks(None)),
           build_compiled(case, base, "sac-matmuls", args, blocks(op_list(False))),
           build_compiled(case, base, "sac-2nd-matmul", args, blocks(op_list(True)))]
    for b in (0.5, 0.2):
        v = build_compiled(case, base, "compile-%g" % b, args, backend=budget_backend(b))
        # the partition may run at the first call, outside the backend
        v.first = functools.partial(torch._functorch.config.patch, activation_memory_budget=b)
        out.append(v)
    out += [build_compiled(case, base, "policy F=%g" % f, args, policy(f))
            for f in (float(x) for x in args.fractions.split(","))]
    for f in (float(x) for x in args.planned.split(",")):
        try:
            out.append(build_compiled(case, base, "planned F=%g" % f, args, planned(f)))
        except SACError as e:
            print("planned F=%g: %s" % (f, e), file=sys.stderr)
    out += [remat(f) for f in (0.7, 0.5)]
    return out


def rounds(variants, init, case, n):
    with torch.no_grad():
        for v in variants:
            for t, t0 in zip(list(v.model.parameters()) + list(v.model.buffers()), init):
                t.copy_(t0)
    for k in range(n):
        for j in range(len(variants)):
            v = variants[(j + k) % len(variants)]
            torch.manual_seed(k)
            t0, c0 = time.perf_counter(), time.process_time()
            loss = v.fwd_bwd(case)
            v.cpu.append((time.process_time() - c0) * 1e3)
            v.wall.append((time.perf_counter() - t0) * 1e3)
            v.losses.append(loss.item())
            v.opt.step()


def hf_gpt2(args):
    """Hugging Face's GPT2LMHeadModel at the --gpt-* sizes (vocab 256,
    heads 4, dropout --dropout in attention, residuals and embeddings),
    the loss as the GPT's."""
    import transformers
    from torch.nn import functional as F
    gen = torch.Generator().manual_seed(2)
    b, t = args.gpt_batch, args.gpt_context
    ids = torch.randint(0, 256, (b, t), generator=gen)
    torch.manual_seed(0)
    d = args.dropout
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=256, n_positions=t, n_embd=args.gpt_d, n_layer=args.gpt_layers, n_head=4,
        resid_pdrop=d, embd_pdrop=d, attn_pdrop=d, bos_token_id=0, eos_token_id=0))
    model.train()

    def loss_fn(out):
        logits = out.logits
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                               ids[:, 1:].reshape(-1))
    return dict(desc="HF GPT-2 (vocab=256, context=%d, d=%d, heads=4, layers=%d, dropout=%g), "
                "batch %d" % (t, args.gpt_d, args.gpt_layers, d, b),
                model=model, args=(), kwargs={"input_ids": ids, "use_cache": False},
                loss=loss_fn, block_list=lambda m: list(m.transformer.h))


def commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="gpt", choices=("gpt", "hf-gpt2"))
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tries", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--time-limit", type=float, default=30.0)
    torch_cases.add_size_arguments(ap)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--planned", default="1,.9,.8,.7,.6")
    ap.add_argument("--fractions", default="1,.6,.4,.2,.1,0")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--markdown", metavar="FILE")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t_all = time.perf_counter()
    if args.model == "gpt":
        case = torch_cases.gpt(args, torch.device("cpu"), args.dropout)
        case["block_list"] = lambda m: list(m.blocks)
    else:
        case = hf_gpt2(args)
    base = case["model"]
    blocks = len(case["block_list"](base))
    init = [t.detach().clone() for t in list(base.parameters()) + list(base.buffers())]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                       cpu)
    except OSError:
        pass
    head = ("%s; torch %s, %d thread(s), CPU %s; %d rounds after %d warm-up steps; "
            "checkmate %s, %s" % (case["desc"], torch.__version__, torch.get_num_threads(), cpu,
                                  args.rounds, args.warmup, commit(),
                                  datetime.datetime.now(datetime.timezone.utc)
                                  .strftime("%Y-%m-%d %H:%M UTC")))
    print(head, flush=True)
    peak_kind = "peak" if args.compile else "between_ops"
    failed = []
    if args.compile:
        variants = []
        for v in compiled_variants(case, base, args):
            try:
                v.warm_and_measure(case, args.warmup)
            except Exception as e:   # its one line in the table; the others go on
                failed.append({"variant": v.label, "error": (str(e).splitlines() or [""])[0]})
                print("  %s: %s" % (v.label, failed[-1]["error"]), flush=True)
                continue
            variants.append(v)
            print("  %s: peak %.3f MB" % (v.label, v.mem["peak"] / 1e6), flush=True)
        eager = variants[0]
    else:
        eager = build(case, base, "eager", args, checkpointed=False)
        ckpt = build(case, base, "ckpt-block", args)
        mm = build(case, base, "sac-matmuls", args, op_list(False))
        mm2 = build(case, base, "sac-2nd-matmul", args, op_list(True))
        peers = [eager, ckpt, mm, mm2]
        for v in peers:
            v.warm_and_measure(case, args.warmup)
            print("  %s: peak %.3f MB" % (v.label, v.mem["between_ops"] / 1e6), flush=True)
        ours = [match(case, base, args, p, ckpt.mem["between_ops"], blocks) for p in peers[1:]]
        variants = peers + ours
    rounds(variants, init, case, args.rounds)
    t_eager = statistics.median(eager.wall)
    c_eager = statistics.median(eager.cpu)
    rows = []
    for v in variants:
        med = statistics.median(v.wall)
        first = abs(v.losses[0] - eager.losses[0]) / abs(eager.losses[0])
        rows.append({"variant": v.label, "peak_mb": v.mem[peak_kind] / 1e6,
                     "in_op_mb": v.mem["peak"] / 1e6, "median_ms": med,
                     "time_vs_eager": med / t_eager, "wall_ms": v.wall, "cpu_ms": v.cpu,
                     "cpu_median_ms": statistics.median(v.cpu),
                     "cpu_vs_eager": statistics.median(v.cpu) / c_eager,
                     "losses_equal_eager": v.losses == eager.losses,
                     "first_loss_rel_diff": first, **v.extra})
    md = [head, "", "| variant | peak MB | in-op MB | CPU time / {0} | wall / {0} | "
          "saved a block | losses = {0}'s |".format(eager.label), "|---|---|---|---|---|---|---|"]
    for r in rows:
        saved = ("%d of %d ops" % (max(r["saved"]), r["ops"]) if "saved" in r else "")
        if "fits" in r and not r["fits"]:
            saved += " (over the peer's peak)"
        md.append("| %s | %.3f | %.3f | %.3f | %.3f | %s | %s |"
                  % (r["variant"], r["peak_mb"], r["in_op_mb"], r["cpu_vs_eager"],
                     r["time_vs_eager"], saved,
                     "yes" if r["losses_equal_eager"] else
                     "within 1e-4" if r["first_loss_rel_diff"] <= 1e-4 else "no"))
    md += ["| %s | %s |||||" % (r["variant"], r["error"]) for r in failed]
    out = {"command": " ".join([os.path.basename(sys.executable)] + sys.argv), "head": head,
           "commit": commit(), "torch": torch.__version__, "args": vars(args),
           "rows": rows + failed,
           "total_s": time.perf_counter() - t_all}
    print("\n" + "\n".join(md) + "\n\ntotal %.0f s" % out["total_s"])
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md) + "\n\ncommand: %s\n" % out["command"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()

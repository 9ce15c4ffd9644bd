#!/usr/bin/python3
"""The decoders of checkmate_torch/examples/llm.py (bench/llm_graphs.sh):
gptN and llamaN resolve to N-layer models, and the two-layer tiny ones
export, get a dtr plan at fixed memory + 50% of the activations, and
replay it with the gradients of an ordinary step (`checkmate_torch run`).

Usage: PYTHON tests/torch/t_llm.py [CHECKMATE_BINARY]   (from anywhere)
Prints TAP and ends with "N passed, M failed"."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import cli, finish, ok  # noqa: E402

LLM = os.path.join(ROOT, "checkmate_torch", "examples", "llm.py")




def main():
    sys.path.insert(0, ROOT)
    os.chdir(ROOT)
    checkmate = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "checkmate")
    import torch
    torch.set_num_threads(1)
    from checkmate_torch import model as modelmod

    for spec, kind, layers in (("gpt3", "GPT", 3), ("llama5", "Llama", 5)):
        m = modelmod._build(LLM + ":" + spec)
        ok(type(m).__name__ == kind and len(m.blocks) == layers,
           "llm.py:%s is a %d-layer %s" % (spec, layers, kind), type(m).__name__)
    try:
        modelmod._build(LLM + ":gpt0")
        ok(False, "llm.py:gpt0 is refused")
    except modelmod.ModelError as e:
        ok("defines no function" in str(e), "llm.py:gpt0 is refused", e)

    with tempfile.TemporaryDirectory() as tmp:
        for name in ("tiny_gpt", "tiny_llama"):
            spec = LLM + ":" + name
            g, p = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + "-plan.json")
            args = ["--batch", "2", "--input", "8x32"]
            st, _, err = cli(["export", spec, *args, "-o", g])
            if not ok(st == 0, "%s: export" % name, err):
                continue
            info = json.loads(subprocess.run([checkmate, "info", g, "--json", "-", "-q"],
                                             capture_output=True, text=True).stdout)
            fixed, peak = json.load(open(g))["fixed_memory"], info["checkpoint_all_peak"]
            budget = fixed + (peak - fixed) // 2
            s = subprocess.run([checkmate, "solve", g, "--budget", str(budget),
                                "--strategy", "dtr", "-o", p, "-q"], capture_output=True, text=True)
            if not ok(s.returncode == 0, "%s: dtr plan at fixed + 50%% of activations" % name,
                      s.stderr):
                continue
            st, out, err = cli(["run", spec, p, *args, "--json"])
            rep = json.loads(out) if st == 0 and out.strip() else {}
            ok(st == 0 and rep.get("gradients_ok") and rep.get("computes", 0) > rep.get("nodes", 0),
               "%s: the plan recomputes and replays with an ordinary step's gradients" % name,
               err or out)
    finish()


if __name__ == "__main__":
    main()

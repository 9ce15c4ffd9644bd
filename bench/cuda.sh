#!/bin/sh
# The checks and benchmarks that need a CUDA GPU, in one run with a time
# limit per stage, for a machine lent for a few minutes (docs/benchmarks.md,
# "PyTorch on a GPU"). Each stage writes its log (and JSON) into OUTDIR as it goes,
# so a stage cut off by its limit still leaves what it printed.
#
# Usage: bench/cuda.sh OUTDIR [STAGE ...]
#   stages (default: fuzz compiled train):
#     fuzz      tests/torch/fuzz_run.py --device cuda on $FUZZ_SEEDS
#               (default 16400:16900), $FUZZ_JOBS workers (default 12)
#     compiled  bench/torch_compiled.py --device cuda on $COMPILED_MODELS
#               (default gpt-dropout,gpt), three budgets with and without
#               save costs (--costs flops,flops-plain), one bisection try,
#               and one profiled step of each (kernels launched, device time)
#     train     bench/torch_train.py --device cuda --time-costs: the eager
#               path's own cost (checkpoint-all plan), host time outside
#               ATen ops, predicted against measured overhead
#     peers     bench/torch_peers.py --device cuda on $PEERS_MODELS
#               (default gpt)
#   $PYTHON (default python3) runs them; $CHECKMATE names the binary;
#   $LIMIT_<stage> (LIMIT_fuzz, LIMIT_compiled, ...) overrides a stage's seconds.
set -u
out=${1:?usage: bench/cuda.sh OUTDIR [STAGE ...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
stages=${*:-fuzz compiled train}

{
    date -u
    nvidia-smi -L 2>&1
    $py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
        torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")'
    echo "checkmate ${CHECKMATE:-(found by checkmate_torch)}: $("${CHECKMATE:-build/checkmate}" --version 2>&1)"
} > "$out/info.txt" 2>&1
cat "$out/info.txt"

limit() {  # limit STAGE DEFAULT: the stage's seconds
    eval "echo \${LIMIT_$1:-$2}"
}

for s in $stages; do
    t0=$(date +%s)
    echo "## $s: started $(date -u +%T)"
    case $s in
    fuzz)
        timeout "$(limit fuzz 120)" $py tests/torch/fuzz_run.py --device cuda \
            --seeds "${FUZZ_SEEDS:-16400:16900}" --jobs "${FUZZ_JOBS:-12}" --timeout 60 \
            --verbose --json "$out/fuzz.json" > "$out/fuzz.log" 2>&1
        ;;
    compiled)
        timeout "$(limit compiled 200)" $py bench/torch_compiled.py --device cuda \
            --models "${COMPILED_MODELS:-gpt-dropout,gpt}" --costs flops,flops-plain \
            --fractions 1,.55,.45 --tries 1 --rounds 9 --kernels \
            --json "$out/compiled.json" --markdown "$out/compiled.md" > "$out/compiled.log" 2>&1
        ;;
    train)
        timeout "$(limit train 130)" $py bench/torch_train.py --device cuda --time-costs \
            --time-limit 10 --json "$out/train.json" > "$out/train.log" 2>&1
        ;;
    peers)
        timeout "$(limit peers 300)" $py bench/torch_peers.py --device cuda \
            --models "${PEERS_MODELS:-gpt}" --time-limit 10 --tries 2 --rounds 9 \
            --json "$out/peers.json" --markdown "$out/peers.md" > "$out/peers.log" 2>&1
        ;;
    *)
        echo "bench/cuda.sh: unknown stage $s" >&2
        exit 2
        ;;
    esac
    echo "## $s: exit $?, $(($(date +%s) - t0)) s"
done

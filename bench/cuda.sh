#!/bin/sh
# The checks and benchmarks that need a CUDA GPU, in one run with a time
# limit per stage, for a machine lent for a few minutes (docs/benchmarks.md,
# "PyTorch on a GPU"). Each stage writes its log (and JSON) into OUTDIR as it goes,
# so a stage cut off by its limit still leaves what it printed.
#
# Usage: bench/cuda.sh OUTDIR [STAGE ...]
#   stages (default: train compiled fuzz-compiled fuzz):
#     fuzz      tests/torch/fuzz_run.py --device cuda on $FUZZ_SEEDS
#               (default 16400:16900), $FUZZ_JOBS workers (default 12)
#     compiled  bench/torch_compiled.py --device cuda --kernels,
#               one process per argument set of $COMPILED_JOBS (';'
#               between sets; default below), side by side: they compile
#               at once, $TORCHINDUCTOR_COMPILE_THREADS each (the cores
#               shared out), and time one at a time once none compiles
#               (--lock), 25 rounds; each writes
#               compiled-K.log, .json and .md (K from 1)
#     fuzz-compiled  the same as fuzz with --compile, on $CFUZZ_SEEDS
#               (default 17240:17400), one compile thread per worker
#     train     bench/torch_train.py --device cuda --time-costs: the eager
#               path's own cost (checkpoint-all plan), host time outside
#               ATen ops, predicted against measured overhead
#     peers     bench/torch_peers.py --device cuda on $PEERS_MODELS
#               (default gpt)
#     offload   tests/torch/t_offload.py (its CUDA checks: the copy stream
#               bit for bit, the allocator's peak), then
#               bench/torch_offload.py --device cuda: plans with copies
#               against recompute alone, replayed time against measured,
#               then fuzz_run.py --device cuda --offload on $OFUZZ_SEEDS
#               (default 62000:62300): random models on the copy stream
#               (not default)
#     lowering  bench/torch_lowering.py --device cuda: compile=True's
#               buffer reuse and horizontal fusion rules against
#               inductor's, one partition each, the GPTs at F = .45 and .4
#               (not default)
#   $PYTHON (default python3) runs them; $CHECKMATE names the binary;
#   $LIMIT_<stage> (LIMIT_fuzz, LIMIT_compiled, LIMIT_fuzz_compiled, ...) overrides a
#   stage's seconds.
set -u
out=${1:?usage: bench/cuda.sh OUTDIR [STAGE ...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.." || exit 1
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
stages=${*:-train compiled fuzz-compiled fuzz}
# compiled's default: both GPTs at five budgets and a bisection try, the
# ResNet at three, and the GPT with measured costs (cost="time") at two
jobs=${COMPILED_JOBS:-"--models gpt-dropout --fractions 1,.7,.55,.45,.4 --tries 1;\
--models gpt --fractions 1,.7,.55,.45,.4 --tries 1;\
--models resnet --fractions 1,.6,.5 --tries 0;\
--models gpt --costs time --fractions 1,.55 --tries 0"}

{
    date -u
    nvidia-smi -L 2>&1
    $py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
        torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")'
    echo "checkmate ${CHECKMATE:-(found by checkmate_torch)}: $("${CHECKMATE:-build/checkmate}" --version 2>&1)"
} > "$out/info.txt" 2>&1
cat "$out/info.txt"

limit() {  # limit STAGE DEFAULT: the stage's seconds ($LIMIT_fuzz_compiled for fuzz-compiled)
    eval "echo \${LIMIT_$(echo "$1" | tr - _):-$2}"
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
        n=$(echo "$jobs" | awk -F';' '{ print NF }')
        per=$(($(nproc) / n - 1))
        [ "$per" -ge 1 ] || per=1
        k=0
        rm -f "$out/.lock" "$out/.lock.started" "$out/.lock.ready"
        echo "$jobs" | tr ';' '\n' | {
            while read -r a; do
                k=$((k + 1))
                # shellcheck disable=SC2086  # $a: options, split on purpose
                TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$per} \
                    timeout "$(limit compiled 300)" $py bench/torch_compiled.py --device cuda \
                    $a --rounds 25 --kernels --lock "$out/.lock" --json "$out/compiled-$k.json" \
                    --markdown "$out/compiled-$k.md" > "$out/compiled-$k.log" 2>&1 &
            done
            wait
        }
        ;;
    fuzz-compiled)
        TORCHINDUCTOR_COMPILE_THREADS=1 timeout "$(limit fuzz-compiled 90)" \
            $py tests/torch/fuzz_run.py --device cuda --compile \
            --seeds "${CFUZZ_SEEDS:-17240:17400}" --jobs "${FUZZ_JOBS:-12}" --timeout 90 \
            --verbose --json "$out/fuzz-compiled.json" > "$out/fuzz-compiled.log" 2>&1
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
    offload)
        timeout "$(limit offload 240)" sh -c "$py tests/torch/t_offload.py \
            ${CHECKMATE:-build/checkmate} > '$out/offload-test.log' 2>&1; \
            $py bench/torch_offload.py --device cuda --time-limit 10 \
            --json '$out/offload.json' > '$out/offload.log' 2>&1; \
            $py tests/torch/fuzz_run.py --device cuda --offload \
            --seeds ${OFUZZ_SEEDS:-62000:62300} --jobs ${FUZZ_JOBS:-12} --timeout 60 \
            --json '$out/fuzz-offload.json' > '$out/fuzz-offload.log' 2>&1"
        ;;
    lowering)
        timeout "$(limit lowering 300)" $py bench/torch_lowering.py --device cuda \
            --models gpt,gpt-dropout --fractions .45,.4 --against inductor,fusion \
            --rounds 25 --json "$out/lowering.json" > "$out/lowering.log" 2>&1
        ;;
    *)
        echo "bench/cuda.sh: unknown stage $s" >&2
        exit 2
        ;;
    esac
    echo "## $s: exit $?, $(($(date +%s) - t0)) s"
done

#!/usr/bin/env bash
# Exports the training graphs of the transformer benchmark into build/llm/
# (not committed: the deepest are several MB): Llama-style decoders of 2,
# 4 and 32 layers (width 1024, 8 heads, sequence 512, batch 1) and
# GPT-2-style ones of 2, 4, 48 and 96 layers (width 768, 12 heads,
# sequence 1024, batch 8), from checkmate_torch/examples/llm.py, with FLOP
# costs; the loss is the sum of the outputs.
#
#   bench/llm_graphs.sh            those seven
#   bench/llm_graphs.sh gpt400     others by name (gptN, llamaN)
#
# A graph already there is kept; delete it to export it again. Needs
# torch: PYTHON (default /usr/bin/python3). Each takes 4-40 s; gpt400
# (22,010 nodes) is not among the defaults: its 2.8 G float parameters
# are allocated while it is traced (12 GB resident) and it took 6.7 min.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=build/llm
mkdir -p "$OUT"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(llama2 llama4 llama32 gpt2 gpt4 gpt48 gpt96)
for name in "${names[@]}"; do
	case $name in
	gpt[1-9]*) shape=(--input 1024x768 --batch 8) ;;
	llama[1-9]*) shape=(--input 512x1024 --batch 1) ;;
	*) echo "llm_graphs.sh: $name: expected gptN or llamaN" >&2; exit 2 ;;
	esac
	if [ -s "$OUT/$name.json" ]; then
		echo "$OUT/$name.json: there already" >&2
		continue
	fi
	"$PYTHON" -m checkmate_torch export "checkmate_torch/examples/llm.py:$name" \
		"${shape[@]}" -o "$OUT/$name.json"
done

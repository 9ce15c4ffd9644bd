#!/usr/bin/env bash
# The turn bound with copies (docs/model.md) against the fastest plan found:
# `compare --strategies auto --bandwidth BW --bound` (auto, and the rows
# that make plans with copies) at four budgets from the least any plan
# needs (lb) towards the checkpoint-all peak (lb + (peak - lb) q / 4,
# q = 0..3), at 25 and 50 GB/s. The exported graphs' FLOP costs at
# 100 TFLOP/s, the paper's graphs at 10,000 units a second (as
# bench/policy.sh). CSV rows (compare --csv) on standard output, one header.
#   bench/turn_copies.sh [BIN] [TIME_LIMIT]      (from the repository root)
set -u
bin=${1:-build/checkmate}
limit=${2:-10}
graphs=${GRAPHS:-"examples/graphs/gpt.json examples/graphs/gpt4.json
examples/graphs/resnet18.json examples/graphs/vgg16.json examples/graphs/mobilenet_v2.json
../shared/graphs/llm/gpt12.json ../shared/graphs/llm/llama8.json
../shared/graphs/vgg16.json ../shared/graphs/mobilenet.json ../shared/graphs/segnet.json"}
header=
for f in $graphs; do
	case $f in
	../shared/graphs/llm/* | examples/*) rate=100TFLOP/s ;;
	*) rate=10000/s ;;
	esac
	lb=$("$bin" info "$f" | awk '/^lower bound/ { print $3 }')
	peak=$("$bin" info "$f" | awk '/^checkpoint-all/ { sub(",", "", $5); print $5 }')
	budgets=$(for q in 0 1 2 3; do printf '%s,' $((lb + (peak - lb) * q / 4)); done)
	for bw in 25GB/s 50GB/s; do
		nice "$bin" compare "$f" --strategies auto --budgets "${budgets%,}" \
			--bandwidth "$bw" --rate "$rate" --bound --time-limit "$limit" \
			--csv - --quiet ${header:+--no-header} 2>/dev/null |
			sed "/^graph,/!s|^\([^,]*\),|\1@$bw,|"
		header=no
	done
done

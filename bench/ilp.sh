#!/usr/bin/env bash
# Time to proven optimum of the ilp strategy on the paper's graphs at the
# budgets lb + f (peak - lb), f = 0.25, 0.5, 0.75 (lb and peak as `info`
# prints them), for each backend, with a time cap per solve.
#   bench/ilp.sh [-c CAP_SECONDS] [-s "cbc glpk"] [GRAPH ...]
# Appends CSV rows (docs/formats.md, CSV columns) to bench/results/ilp.csv
# and prints them.
set -eu
cd "$(dirname "$0")/.."
cap=600 solvers="cbc glpk"
while getopts c:s: o; do
	case $o in c) cap=$OPTARG ;; s) solvers=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
graphs=${*:-vgg16 vgg19 unet fcn8 segnet mobilenet resnet50}
dir=${CHECKMATE_GRAPHS:-../shared/graphs}
[ -d "$dir" ] || { echo "bench/ilp.sh: no $dir (the paper's graphs; a clone has examples/graphs): skipped"; exit 0; }
mkdir -p bench/results
out=bench/results/ilp.csv
[ -s "$out" ] || ./checkmate solve linear:2 --budget 100% --csv - | head -n 1 >"$out"
for g in $graphs; do
	f=$dir/$g.json
	lb=$(./checkmate info "$f" | awk '/^lower bound/ { print $3 }')
	peak=$(./checkmate info "$f" | awk '/^checkpoint-all/ { sub(",", "", $5); print $5 }')
	for frac in 0.25 0.5 0.75; do
		b=$(awk -v l="$lb" -v p="$peak" -v f="$frac" 'BEGIN { printf "%.0f", l + f * (p - l) }')
		for s in $solvers; do
			./checkmate solve "$f" --budget "$b" --solver "$s" --threads 2 \
				--time-limit "$cap" --quiet --csv - --no-header | tee -a "$out" || true
		done
	done
done

#!/usr/bin/env bash
# auto (solve's default) at f = .25, .5, .75 of the way from the lower bound
# to the checkpoint-all peak on every shared graph, and the best heuristic
# beside it; --time-limit ${LIMIT:-60}. Rows go to ${OUT:-bench/results/auto.csv},
# a Markdown table to standard output (docs/benchmarks.md records a run).
#   bench/auto.sh [GRAPH_DIR]
set -u
cd "$(dirname "$0")/.."
dir=${1:-../shared/graphs} limit=${LIMIT:-60} out=${OUT:-bench/results/auto.csv}
[ -d "$dir" ] || { echo "bench/auto.sh: no $dir (the paper's graphs; a clone has examples/graphs): skipped"; exit 0; }
CM=./checkmate
: >"$out.tmp"
echo "| graph | f | auto overhead | bound | gap | seconds | plan; bound by | best heuristic |"
echo "|---|---|---|---|---|---|---|---|"
for g in "$dir"/*.json; do
	name=$(basename "$g" .json)
	lb=$($CM info "$g" | awk '/^lower bound/ {print $3}')
	peak=$($CM info "$g" | awk '/^checkpoint-all/ {print $5}')
	for f in 0.25 0.5 0.75; do
		b=$(awk -v l="$lb" -v p="$peak" -v f="$f" 'BEGIN { printf "%.0f", l + f * (p - l) }')
		row=$($CM solve "$g" --budget "$b" --time-limit "$limit" --csv - --no-header --quiet)
		echo "$row" >>"$out.tmp"
		best=$($CM compare "$g" --strategies dtr,kusumoto-approx,all --budgets "$b" --csv - \
			--no-header --quiet | awk -F, '$6 == 1 && (m == "" || $8 < m) { m = $8; s = $2 }
			END { print (m == "" ? "none" : m " (" s ")") }')
		echo "$row" | awk -F, -v n="$name" -v f="$f" -v h="$best" '{
			printf "| %s | %s | %s | %s | %s | %.1f | %s | %s |\n", n, f,
				$6 == 1 ? $8 : "none (" $13 ")", $10 == "" ? "-" : $10,
				$11 == "" ? "-" : sprintf("%.2f%%", 100 * $11), $12, $3, h }'
	done
done
mv "$out.tmp" "$out"

#!/usr/bin/env bash
# make bench: timings that belong in benchmarks, not in unit tests.
# Prints a Markdown table; docs/benchmarks.md records a run.
set -eu
cd "$(dirname "$0")/.."
CM=./checkmate
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# A chain of N forward nodes and its gradients, in format 1.
chain() {
	awk -v n="$1" 'BEGIN {
		printf "{\"format\": \"checkmate-graph\", \"version\": 1, \"nodes\": [\n"
		for (i = 0; i < n; i++)
			printf "{\"name\": \"f%d\", \"cost\": 1, \"memory\": 1024%s},\n", i,
				i ? sprintf(", \"deps\": [\"f%d\"]", i - 1) : ""
		printf "{\"name\": \"loss\", \"cost\": 1, \"memory\": 4, \"deps\": [\"f%d\"], \"backward\": true}", n - 1
		for (i = n - 1; i >= 0; i--)
			printf ",\n{\"name\": \"b%d\", \"cost\": 2, \"memory\": 1024, \"deps\": [\"f%d\", \"%s\"], \"backward\": true}",
				i, i, i == n - 1 ? "loss" : "b" (i + 1)
		printf "]}\n"
	}'
}

# Best wall time of three runs of a command, in seconds.
best_of_3() {
	local best=
	for _ in 1 2 3; do
		local t0 t1
		t0=$(date +%s.%N)
		"$@" >/dev/null
		t1=$(date +%s.%N)
		best=$(echo "$t0 $t1 ${best:-1e9}" | awk '{ d = $2 - $1; print (d < $3 ? d : $3) }')
	done
	printf '%.3f' "$best"
}

echo "| benchmark | nodes | seconds (best of 3) |"
echo "|---|---|---|"
chain 50000 >"$TMP/chain.json"
echo "| info, 100,000-node chain (50,000 layers) | $((2 * 50000 + 1)) | $(best_of_3 $CM info "$TMP/chain.json") |"
echo "| solve checkpoint-all, same chain | $((2 * 50000 + 1)) | $(best_of_3 $CM solve "$TMP/chain.json" --budget 100% --strategy checkpoint-all --plan "$TMP/p.json") |"
# Two of the paper's graphs, beside the CI's clone but not in the repository.
for g in ../shared/graphs/random_layered_n1000.json ../shared/graphs/resnet50.json; do
	if [ ! -f "$g" ]; then
		echo "| info, $(basename "$g" .json): skipped, no $g (a clone without ../shared) | | |"
		continue
	fi
	echo "| info, $(basename "$g" .json) | $($CM info "$g" | awk '/^nodes/ { print $2 }') | $(best_of_3 $CM info "$g") |"
done
# dtr's default (best: seven heuristics x two dead-value policies) on a long
# chain; docs/dtr.md records linear:1,000,000 too.
echo "| solve dtr (best), linear:100000 at 50% | $((2 * 100000 + 1)) | $(best_of_3 $CM solve linear:100000 --budget 50% --strategy dtr) |"

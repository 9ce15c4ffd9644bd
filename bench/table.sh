#!/usr/bin/env bash
# Turns bench/results/ilp.csv into the Markdown table of docs/benchmarks.md:
# one row per graph and budget, a column pair per backend.
set -eu
cd "$(dirname "$0")/.."
awk -F, 'NR > 1 {
	key = $1 SUBSEP $5
	if (!(key in seen)) { seen[key] = 1; order[++n] = key; g[key] = $1; b[key] = $5 }
	gap = ($11 == "" || $11 == 0) ? "" : sprintf(", gap %.3g%%", 100 * $11)
	cell[key, $4] = sprintf("%s s, %s%s", $12, $13, gap)
}
END {
	print "| graph | budget (GiB) | cbc | glpk |"
	print "|---|---|---|---|"
	for (i = 1; i <= n; i++) {
		k = order[i]
		printf "| %s | %.2f | %s | %s |\n", g[k], b[k] / 2^30,
			(k SUBSEP "cbc") in cell ? cell[k, "cbc"] : "not run",
			(k SUBSEP "glpk") in cell ? cell[k, "glpk"] : "not run"
	}
}' bench/results/ilp.csv

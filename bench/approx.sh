#!/usr/bin/env bash
# approx against the proven optima of bench/results/ilp.csv: the same graphs
# and budgets, rows appended to bench/results/approx.csv, then the
# geometric-mean ratio approx cost / optimum.
set -eu
cd "$(dirname "$0")/.."
dir=${CHECKMATE_GRAPHS:-../shared/graphs}
[ -d "$dir" ] || { echo "bench/approx.sh: no $dir (the paper's graphs; a clone has examples/graphs): skipped"; exit 0; }
out=bench/results/approx.csv
./checkmate solve linear:2 --budget 100% --csv - | head -n 1 >"$out"
awk -F, '$2 == "ilp" && $4 == "cbc" && $13 == "optimal" { print $1, $5 }' bench/results/ilp.csv |
while read -r g b; do
	./checkmate solve "$dir/$g.json" --budget "$b" --strategy approx --time-limit "${CAP:-600}" \
		--quiet --csv - --no-header | tee -a "$out" || true
done
awk -F, 'NR == FNR { if ($2 == "ilp" && $4 == "cbc" && $13 == "optimal") opt[$1 "," $5] = $7; next }
	FNR > 1 && $7 != "" && ($1 "," $5) in opt {
		r = $7 / opt[$1 "," $5]; s += log(r); n++; t += $12
		printf "%s %s: approx/opt = %.4f (%.1f s)\n", $1, $5, r, $12
	}
	END { if (n) printf "geometric mean over %d: %.4f; mean time %.1f s\n", n, exp(s / n), t / n }' \
	bench/results/ilp.csv "$out"

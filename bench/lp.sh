#!/usr/bin/env bash
# The LP relaxation's time per backend and LP method, as approx and --bound
# solve it (build/bench/lp), on ResNet50 at 50% and the random layered
# graphs at 60% of their checkpoint-all peaks. Rows go to
# bench/results/lp.csv; CAP (seconds, default 1800) bounds each solve.
# Run by hand: a full pass takes hours (docs/benchmarks.md).
#   bench/lp.sh [GRAPH:BUDGET:SOLVER:METHOD ...]
set -eu
cd "$(dirname "$0")/.."
dir=${CHECKMATE_GRAPHS:-../shared/graphs}
[ -d "$dir" ] || { echo "bench/lp.sh: no $dir (the paper's graphs; a clone has examples/graphs): skipped"; exit 0; }
out=bench/results/lp.csv
[ -s "$out" ] || echo "graph,solver,method,budget,columns,rows,nonzeros,status,lp,seconds,peak_kb" >"$out"
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(
	random_layered_n100:60%:cbc:auto random_layered_n100:60%:cbc:dual
	random_layered_n100:60%:cbc:primal random_layered_n100:60%:cbc:barrier
	random_layered_n100:60%:glpk:dual random_layered_n100:60%:glpk:primal
	random_layered_n100:60%:glpk:barrier
	random_layered_n250:60%:cbc:auto random_layered_n250:60%:cbc:dual
	random_layered_n250:60%:glpk:dual
	resnet50:50%:cbc:auto resnet50:50%:cbc:dual resnet50:50%:glpk:dual
	random_layered_n500:60%:cbc:dual random_layered_n1000:60%:cbc:dual)
for r in "${runs[@]}"; do
	IFS=: read -r g b s m <<<"$r"
	/usr/bin/time -f "%M" -o "$out.kb" build/bench/lp "$dir/$g.json" "$b" "$s" "$m" "${CAP:-1800}" |
		tr -d '\n' >>"$out"
	echo ",$(tail -n 1 "$out.kb")" >>"$out"
	tail -n 1 "$out"
done
rm -f "$out.kb"

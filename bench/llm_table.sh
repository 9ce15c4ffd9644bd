#!/usr/bin/env bash
# The transformer table of docs/benchmarks.md: for each graph of
# bench/llm_graphs.sh and each fraction f, the budget
#   lower bound + f x (checkpoint-all peak - lower bound)
# (both from `checkmate info --json`), solved by dtr, by auto with a time
# limit, and by the paper's heuristics (`checkmate compare`, the cheapest
# plan that fits). Prints a Markdown table of overheads (cost over the
# checkpoint-all cost); the CSV rows behind it go to build/llm/table.csv.
#
#   bench/llm_table.sh                 the seven graphs, f = .25 .5 .75
#   bench/llm_table.sh gpt4 llama4     some graphs (names in build/llm/)
#   bench/llm_table.sh --print         the table of build/llm/table.csv again
#
# Environment: FRACS (percent, default "25 50 75"), BIG_FRACS (for graphs
# of more than BIG_NODES nodes, default: FRACS), BIG_NODES (default 4000),
# BIN (default ./checkmate), TIME (auto's time limit, default 60), ILP (when set: also ilp with this
# time limit on graphs of at most BIG_NODES nodes), CSV (default
# build/llm/table.csv).
# One core: auto gets --threads 1, compare --jobs 1.
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-./checkmate}
DIR=build/llm
CSV=${CSV:-$DIR/table.csv}
FRACS=${FRACS:-25 50 75}
BIG_FRACS=${BIG_FRACS:-$FRACS}
BIG_NODES=${BIG_NODES:-4000}
TIME=${TIME:-60}
ILP=${ILP:-}

field() { # field NAME JSON-LINE: a number of info's JSON
	sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<< "$2"
}

table() {
	awk -F, 'NR > 1 {
		key = $1 SUBSEP $3
		if (!(key in seen)) { seen[key] = 1; order[++n] = key; g[key] = $1; nodes[key] = $2; f[key] = $3; b[key] = $4 }
		# $5 kind, $6 strategy, $7 param, $8 feasible, $9 overhead, $10 seconds, $11 gap
		if ($5 == "dtr") dtr[key] = $8 ? sprintf("%.4f", $9) : "none fits"
		if ($5 == "auto") {
			src = $7; sub(/;.*/, "", src); sub(/^plan=/, "", src)
			gap = $11 == "" ? "" : sprintf(", gap %.2f%%", 100 * $11)
			auto[key] = $8 ? sprintf("%.4f (%s%s)", $9, src, gap) : "none found"
		}
		if ($5 == "ilp") ilp[key] = $8 ? sprintf("%.4f", $9) : "none found"
		if ($5 == "paper") paper[key] = $8 ? sprintf("%.4f (%s)", $9, $6) : "none fits"
		secs[key, $5] = $10
	}
	END {
		print "| graph | nodes | f | budget (GiB) | dtr | auto (plan from, gap to its bound) | ilp | best paper baseline | seconds (dtr / auto / baselines) |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= n; i++) {
			k = order[i]
			printf "| %s | %d | %.2f | %.2f | %s | %s | %s | %s | %.1f / %.1f / %.1f |\n",
				g[k], nodes[k], f[k], b[k] / 2^30, dtr[k], auto[k],
				(k in ilp) ? ilp[k] : "-", paper[k],
				secs[k, "dtr"], secs[k, "auto"], secs[k, "paper"]
		}
	}' "$CSV"
}

if [ "${1:-}" = --print ]; then
	table
	exit 0
fi
[ -x "$BIN" ] || { echo "llm_table.sh: no $BIN (make)" >&2; exit 1; }
graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=(llama2 llama4 llama32 gpt2 gpt4 gpt48 gpt96)

echo "graph,nodes,f,budget,kind,strategy,param,feasible,overhead,seconds,gap" > "$CSV"
for name in "${graphs[@]}"; do
	g=$DIR/$name.json
	[ -s "$g" ] || { echo "llm_table.sh: no $g (bench/llm_graphs.sh $name)" >&2; exit 1; }
	info=$("$BIN" info "$g" --json - -q)
	nodes=$(field nodes "$info")
	lb=$(field budget_lower_bound "$info")
	peak=$(field checkpoint_all_peak "$info")
	fracs=$FRACS
	[ "$nodes" -le "$BIG_NODES" ] || fracs=$BIG_FRACS
	for pct in $fracs; do
		budget=$((lb + (peak - lb) * pct / 100))
		f=$(awk -v p="$pct" 'BEGIN { printf "%.2f", p / 100 }')
		pre="$name,$nodes,$f,$budget"
		echo "$(date +%T) $name f=$f budget $budget" >&2
		# solve's CSV: graph,strategy,param,solver,budget,feasible,cost,overhead,peak_memory,
		# lower_bound,gap,solve_seconds,status (exit 3: none fits, 4: time out without a plan)
		"$BIN" solve "$g" --budget "$budget" --strategy dtr --csv - --no-header -q |
			awk -F, -v pre="$pre" '{ print pre ",dtr," $2 "," $3 "," $6 "," $8 "," $12 }' >> "$CSV" || true
		"$BIN" solve "$g" --budget "$budget" --strategy auto --time-limit "$TIME" --threads 1 \
			--csv - --no-header -q |
			awk -F, -v pre="$pre" '{ print pre ",auto," $2 "," $3 "," $6 "," $8 "," $12 "," $11 }' >> "$CSV" || true
		if [ -n "$ILP" ] && [ "$nodes" -le "$BIG_NODES" ]; then
			"$BIN" solve "$g" --budget "$budget" --strategy ilp --time-limit "$ILP" --threads 1 \
				--csv - --no-header -q |
				awk -F, -v pre="$pre" '{ print pre ",ilp," $2 "," $3 "," $6 "," $8 "," $12 "," $11 }' >> "$CSV" || true
		fi
		t0=$(date +%s.%N)
		rows=$("$BIN" compare "$g" --budgets "$budget" --jobs 1 --csv - --no-header --quiet || true)
		secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
		awk -F, -v pre="$pre" -v secs="$secs" '
			$6 == 1 && (best == "" || $8 + 0 < best + 0) { best = $8; s = $2; p = $3 }
			END { if (best == "") print pre ",paper,,,0,," secs
			      else print pre ",paper," s "," p ",1," best "," secs }' <<< "$rows" >> "$CSV"
	done
done
table

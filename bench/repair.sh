#!/bin/sh
# bench/repair.sh: the repair measurements of docs/lns.md (run by hand, about
# 25 minutes): auto with --time-limit ${LIMIT:-60} on the four random layered
# graphs at f = .25/.5/.75 and at 80%/90% of the checkpoint-all peak, then
# each shave variant alone, then slack windows alone on four budgets. Rows
# (build/bench/repair): graph,budget,bytes,f,mode,fits,cost,overhead,t_fit,
# seconds,param,load.
cd "$(dirname "$0")/.." || exit 1
G=${CHECKMATE_GRAPHS:-../shared/graphs}
[ -d "$G" ] || { echo "bench/repair.sh: no $G (the paper's graphs; a clone has examples/graphs): skipped"; exit 0; }
B=${BUILD:-build}
L=${LIMIT:-60}
make -s "$B/bench/repair" || exit 1
for n in 100 250 500 1000; do
	for b in f0.25 f0.5 f0.75 80 90; do
		timeout $((3 * L + 60)) "$B/bench/repair" "$G/random_layered_n$n.json" $b "$L" auto
	done
done > bench/results/repair-auto.csv
for n in 100 250 500 1000; do
	for b in f0.5 f0.75 80 90; do
		timeout 600 "$B/bench/repair" "$G/random_layered_n$n.json" $b "$L" variants
	done
done > bench/results/shave-variants.csv
for x in "100 80" "100 f0.5" "250 90" "500 90"; do
	set -- $x
	timeout $((3 * L + 60)) "$B/bench/repair" "$G/random_layered_n$1.json" "$2" "$L" windows
done > bench/results/repair-windows.csv

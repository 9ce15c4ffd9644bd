#!/bin/sh
# bench/lns.sh: the lns measurements of docs/lns.md, one run at a time
# (60 s each, 10 s per window, 8 stages and 10 values per window at first).
# Rows: graph,budget,bytes,start,start_cost,final_cost,overhead_start,overhead,
# fits,windows,improved,passes,seconds,sec_per_window,sec_per_pass,t2,t1,proven,
# max_stage_window; standard error has each run's peak resident size.
G=${CHECKMATE_GRAPHS:-../shared/graphs}
[ -d "$G" ] || { echo "bench/lns.sh: no $G (the paper's graphs; a clone has examples/graphs): skipped"; exit 0; }
B=${BUILD:-build}
run() {
	/usr/bin/time -f "$1 $2 %M KB" timeout 400 $B/bench/lns $G/$1.json $2 60 10 8 10
}
for g in resnet50 mobilenet; do
	for f in f0.25 f0.5 f0.75 50; do
		run $g $f
	done
done > bench/results/lns-paper.csv
# The same from the best of every heuristic (dtr, shave, the DP too).
for g in resnet50 mobilenet; do
	for f in f0.25 f0.5 f0.75 50; do
		LNS_FROM_HEURISTICS=1 run $g $f
	done
done > bench/results/lns-paper-dtr.csv
for n in 100 250 500 1000; do
	for f in f0.25 f0.5 f0.75 80 90; do
		run random_layered_n$n $f
	done
done > bench/results/lns-random.csv

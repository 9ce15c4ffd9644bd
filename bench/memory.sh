#!/usr/bin/env bash
# Peak memory of one checkmate run, solver processes included: the sum of
# the proportional set sizes (Pss, /proc/PID/smaps_rollup) of the process
# and its children, sampled every 50 ms; shared pages (the model a solver
# process inherits by fork) count once. Prints the run's model size (from
# its summary) and the peak, for docs/usage.md's bytes per nonzero.
#   bench/memory.sh ./checkmate solve GRAPH --budget B --strategy ilp ...
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>/dev/null &
pid=$!
peak=0
pss() { awk '/^Pss:/ { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
while kill -0 "$pid" 2>/dev/null; do
	total=$(pss "$pid")
	for c in $(pgrep -P "$pid"); do total=$((total + $(pss "$c"))); done
	[ "$total" -gt "$peak" ] && peak=$total
	sleep 0.05
done
wait "$pid"
rc=$?
model=$(grep -o 'model of [0-9]* columns, [0-9]* rows, [0-9]* nonzeros' "$out" | head -n 1)
echo "exit $rc; ${model:-no model}; peak $((peak * 1024)) bytes"

#!/usr/bin/env bash
# fuzz/run.sh BUILD SECONDS [TARGET...]: runs each libFuzzer target of
# BUILD/fuzzers (all of them when none is named) for SECONDS from its seed
# corpus, fuzz/corpus/TARGET and fuzz/regress/TARGET, and prints a line of
# figures per target. New inputs go to BUILD/corpus/TARGET (not into the
# repository: `fuzz/run.sh --merge BUILD` minimises them into fuzz/corpus);
# a crash, sanitizer report, leak or hang (-timeout=10) leaves its input in
# BUILD/crashes/TARGET and makes the script exit 1. FUZZ_RUNS=N stops each
# target after N executions when that comes first.
set -u
cd "$(dirname "$0")/.." || exit 1

# Longest input per target: room for a graph of a few hundred nodes, a
# plan of a few hundred steps, a command line.
max_len() {
	case "$1" in
	fuzz_size) echo 64 ;;
	fuzz_options) echo 1024 ;;
	fuzz_plan) echo 8192 ;;
	*) echo 16384 ;;
	esac
}

seeds() {
	local t=$1
	echo "fuzz/corpus/$t"
	# the strategies read graphs: fuzz_graph's seeds are theirs too
	[ "$t" = fuzz_strategies ] && echo "fuzz/corpus/fuzz_graph"
	[ -d "fuzz/regress/$t" ] && echo "fuzz/regress/$t"
}

if [ "${1:-}" = --merge ]; then
	build=$2
	for bin in "$build"/fuzzers/fuzz_*; do
		t=$(basename "$bin")
		[ -d "$build/corpus/$t" ] || continue
		"$bin" -merge=1 -max_len="$(max_len "$t")" "fuzz/corpus/$t" "$build/corpus/$t" \
			>"$build/merge-$t.log" 2>&1 || { echo "merge of $t failed"; exit 1; }
		echo "$t: $(ls "fuzz/corpus/$t" | wc -l) files, $(du -sk --apparent-size "fuzz/corpus/$t" | cut -f1) KiB"
	done
	exit 0
fi

build=${1:?usage: fuzz/run.sh BUILD SECONDS [TARGET...]}
secs=${2:?usage: fuzz/run.sh BUILD SECONDS [TARGET...]}
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for bin in "$build"/fuzzers/fuzz_*; do targets+=("$(basename "$bin")"); done
fi
status=0
printf '%-14s %12s %8s %10s %9s %s\n' target executions seconds exec/s corpus result
for t in "${targets[@]}"; do
	bin=$build/fuzzers/$t log=$build/logs/$t.log
	mkdir -p "$build/corpus/$t" "$build/crashes/$t" "$build/logs"
	start=$SECONDS
	# shellcheck disable=SC2046
	"$bin" -max_total_time="$secs" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} -timeout=10 \
		-max_len="$(max_len "$t")" \
		-print_final_stats=1 -artifact_prefix="$build/crashes/$t/" \
		"$build/corpus/$t" $(seeds "$t") >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	files=$(find "$build/corpus/$t" "fuzz/corpus/$t" -type f -exec cat {} + | wc -c)
	n=$(find "$build/corpus/$t" "fuzz/corpus/$t" -type f | wc -l)
	if [ "$rc" -eq 0 ]; then result=ok; else result="FAILED (exit $rc, see $log)"; status=1; fi
	printf '%-14s %12s %8s %10s %9s %s\n' "$t" "${execs:-?}" "$((SECONDS - start))" \
		"${rate:-?}" "$n/$((files / 1024))K" "$result"
done
exit "$status"

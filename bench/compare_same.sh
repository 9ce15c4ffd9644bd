#!/usr/bin/env bash
# Checks that two checkmate binaries write the same compare CSVs on the
# shared graphs (solve_seconds, column 12, aside): run before and after a
# change that must not change behaviour.
#   bench/compare_same.sh OLD_BINARY NEW_BINARY [GRAPH_DIR]
set -u
old=$1 new=$2 dir=${3:-../shared/graphs}
[ -d "$dir" ] || { echo "bench/compare_same.sh: no $dir (the paper's graphs; a clone has examples/graphs): skipped"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 runs=0
check() {
	"$old" compare "$@" --csv - --quiet | cut -d, -f1-11,13 >"$tmp/old" 2>&1
	"$new" compare "$@" --csv - --quiet | cut -d, -f1-11,13 >"$tmp/new" 2>&1
	runs=$((runs + 1))
	if ! diff -u "$tmp/old" "$tmp/new" >"$tmp/diff"; then
		echo "differs: compare $*"
		head -n 20 "$tmp/diff"
		fail=$((fail + 1))
	fi
}
for g in "$dir"/*.json; do
	check "$g"
done
for g in "$dir"/vgg16.json "$dir"/unet.json "$dir"/fcn8.json; do
	check "$g" --sweep 4 --bound
done
check linear:8 --ilp --approx --bound
check linear:8 --bound --budgets 6,7,9,10
check linear:12 --ilp --sweep 5 --solver glpk
echo "$runs compare runs, $fail differ"
[ "$fail" -eq 0 ]

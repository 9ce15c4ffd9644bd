#!/usr/bin/env bash
# tests/fuzz_replay.sh BUILD: replays each fuzz target's seed corpus and
# crash reproducers (fuzz/corpus/TARGET, fuzz/regress/TARGET) through
# BUILD/replay/TARGET, the target built with fuzz/replay.c instead of
# libFuzzer; the graph targets also read the example graphs and, when
# they are there, the shared benchmark graphs. A failed check aborts, a
# sanitizer report exits non-zero: either fails the target's line. TAP,
# then "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: tests/fuzz_replay.sh BUILD}
pass=0 fail=0 n=0
targets=$(ls fuzz/fuzz_*.c | sed 's|fuzz/\(.*\)\.c|\1|')
echo "1..$(echo "$targets" | wc -l)"
for t in $targets; do
	n=$((n + 1))
	dirs=(fuzz/corpus/"$t")
	[ -d fuzz/regress/"$t" ] && dirs+=(fuzz/regress/"$t")
	if [ "$t" = fuzz_graph ]; then
		for d in examples/graphs ../shared/graphs ../shared/graphs/torchvision; do
			[ -d "$d" ] && dirs+=("$d")
		done
	fi
	out=$("$build/replay/$t" "${dirs[@]}" 2>&1)
	status=$?
	if [ "$status" -eq 0 ]; then
		echo "ok $n - $t: ${out##*$'\n'} (${dirs[*]})"
		pass=$((pass + 1))
	else
		echo "not ok $n - $t: exit $status"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"

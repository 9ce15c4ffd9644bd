#!/usr/bin/env bash
# Runs every test program of each build directory given (and the CLI tests
# against its binary), shows their TAP, and ends with the total line
# "N passed, M failed". Exits non-zero when a test fails or a program dies
# without its summary.
#
# The builds run side by side (one core each on the 2-core machines we
# have); their output is shown one build after the other. The first build
# runs every case; the later ones (the sanitizer build) with
# CHECKMATE_QUICK=1, where the solver-heavy loops run fewer cases
# (tests/tap.h, tap_cases) and the PyTorch and install tests do not run
# again.
set -u
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs the suite of build $1 (quick when $2 is 1); writes its TAP and, last,
# a line "pass fail broken".
suite() {
	local build=$1 quick=$2 pass=0 fail=0 broken=0 t out status summary start
	local -a cmd
	for t in "$build"/tests/t_* tests/cli.sh tests/interrupt.sh tests/install.sh \
		 tests/fuzz_replay.sh tests/deep.sh tests/torch/run.py; do
		case "$t" in
		*.o|*.d) continue ;;
		tests/cli.sh|tests/interrupt.sh|tests/deep.sh) cmd=("$t" "$build/checkmate") ;;
		tests/fuzz_replay.sh) cmd=("$t" "$build") ;;
		tests/install.sh)
			[ "$quick" = 0 ] || continue
			cmd=("$t" "$build") ;;
		tests/torch/run.py)
			[ "$quick" = 0 ] || continue
			cmd=(/usr/bin/python3 "$t" "$build/checkmate") ;;
		*) cmd=("$t") ;;
		esac
		start=$SECONDS
		out=$(CHECKMATE_QUICK=$quick "${cmd[@]}" 2>&1)
		status=$?
		echo "# ${cmd[*]} ($((SECONDS - start)) s)"
		printf '%s\n' "$out"
		summary=$(printf '%s\n' "$out" | tail -n 1)
		if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			pass=$((pass + BASH_REMATCH[1]))
			fail=$((fail + BASH_REMATCH[2]))
			[ "$status" -eq 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ] || broken=$((broken + 1))
		else
			echo "# ${cmd[*]} died (exit $status) without a summary"
			broken=$((broken + 1))
			fail=$((fail + 1))
		fi
	done
	echo "$pass $fail $broken"
}

k=0
for build in "$@"; do
	suite "$build" $((k > 0)) >"$tmp/$k" 2>&1 &
	k=$((k + 1))
done
wait
pass=0 fail=0 broken=0
for ((i = 0; i < k; i++)); do
	head -n -1 "$tmp/$i"
	read -r p f b < <(tail -n 1 "$tmp/$i")
	pass=$((pass + p)) fail=$((fail + f)) broken=$((broken + b))
done
[ "$broken" -eq 0 ] || echo "# $broken test program(s) exited abnormally"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$broken" -eq 0 ]

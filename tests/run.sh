#!/usr/bin/env bash
# Runs every test program of each build directory given (and the CLI tests
# against its binary), shows their TAP, and ends with the total line
# "N passed, M failed". Exits non-zero when a test fails or a program dies
# without its summary.
set -u
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 broken=0
for build in "$@"; do
	for t in "$build"/tests/t_* tests/cli.sh tests/torch/run.py; do
		case "$t" in *.o|*.d) continue ;; esac
		if [ "$t" = tests/cli.sh ]; then cmd=(tests/cli.sh "$build/checkmate")
		elif [ "$t" = tests/torch/run.py ]; then
			# PyTorch tests (about a minute): once, against the first build.
			[ "$build" = "$1" ] || continue
			cmd=(/usr/bin/python3 tests/torch/run.py "$build/checkmate")
		else cmd=("$t"); fi
		echo "# ${cmd[*]}"
		out=$("${cmd[@]}" 2>&1)
		status=$?
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
done
[ "$broken" -eq 0 ] || echo "# $broken test program(s) exited abnormally"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$broken" -eq 0 ]

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
# (tests/tap.h, tap_cases), the install and stand-alone clone tests do not
# run again, and the PyTorch programs run under torch 2.13 only (see
# suite()); the signal and deep-graph tests run in the sanitizer suite
# alone. With two builds the first build's C programs run quick too (CLI
# and shell tests apart), and every case only with CHECKMATE_FULL=1 (make
# test-long, where CHECKMATE_C_ONLY=1 leaves the PyTorch programs out).
set -u
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs one test program (the command line given), shows its TAP and adds
# its summary to the pass, fail and broken of the suite() that calls it
# (whose quick it passes on).
one() {
	local out status summary start=$SECONDS
	out=$(CHECKMATE_QUICK=$quick "$@" 2>&1)
	status=$?
	echo "# $* ($((SECONDS - start)) s)"
	printf '%s\n' "$out"
	summary=$(printf '%s\n' "$out" | tail -n 1)
	if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=$((pass + BASH_REMATCH[1]))
		fail=$((fail + BASH_REMATCH[2]))
		[ "$status" -eq 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ] || broken=$((broken + 1))
	else
		echo "# $* died (exit $status) without a summary"
		broken=$((broken + 1))
		fail=$((fail + 1))
	fi
}

# Runs the suite of build $1 (quick when $2 is 1); writes its TAP and, last,
# a line "pass fail broken". The PyTorch programs (tests/torch/run.py and
# t_*.py) run under Debian's python3 (torch 1.13) in the first suite, and
# again under build/venv-torch2 (torch 2.13), when `make torch2` has made
# it, in the second (the sanitizer suite, which is shorter; its binary) or
# in the first when there is one build; t_compiled.py and t_private.py
# under torch 2.13 in the first either way (moved); run.py (the graph
# mode) under torch 2.13 only with CHECKMATE_LONG=1, its fast suite being
# torch 1.13's. Under torch 1.13, which remat refuses, only the programs
# that check more than that refusal run (OLD_TORCH). With TORCH_PY set
# (make test-long), only the PyTorch programs run, under that python.
suite() {
	local build=$1 quick=$2 pass=0 fail=0 broken=0 t py cquick=$2
	[ "$nbuilds" -gt 1 ] && [ "${CHECKMATE_FULL:-0}" != 1 ] && cquick=1
	if [ -n "${TORCH_PY:-}" ]; then
		for t in tests/torch/run.py tests/torch/t_*.py; do
			one "$TORCH_PY" "$t" "$build/checkmate"
		done
		echo "$pass $fail $broken"
		return
	fi
	for t in "$build"/tests/t_* tests/cli.sh tests/interrupt.sh tests/install.sh \
		 tests/standalone.sh tests/fuzz_replay.sh tests/deep.sh tests/structure.sh; do
		case "$t" in
		*.o|*.d) ;;
		tests/cli.sh) one "$t" "$build/checkmate" ;;
		# the signal and deep-graph paths run once, under the
		# sanitizers when there is a sanitizer build
		tests/interrupt.sh|tests/deep.sh)
			{ [ "$quick" = 1 ] || [ "$nbuilds" = 1 ]; } && one "$t" "$build/checkmate" ;;
		tests/fuzz_replay.sh) one "$t" "$build" ;;
		tests/install.sh|tests/standalone.sh|tests/structure.sh)
			[ "$quick" = 1 ] || one "$t" "$build" ;;
		*) quick=$cquick one "$t" ;;
		esac
	done
	if [ "${CHECKMATE_C_ONLY:-0}" = 1 ]; then
		echo "$pass $fail $broken"
		return
	fi
	local -a pys=()
	[ "$quick" = 1 ] || pys+=(/usr/bin/python3)
	if [ -x build/venv-torch2/bin/python ] && { [ "$quick" = 1 ] || [ "$nbuilds" = 1 ]; }; then
		pys+=(build/venv-torch2/bin/python)
	fi
	# t_compiled.py, the longest under torch 2.13 (its compiles are cold on
	# a fresh machine), and a few others run in the first suite when there
	# are two, to even out their times
	local moved=(tests/torch/t_compiled.py tests/torch/t_private.py tests/torch/t_alias.py
		     tests/torch/t_train.py tests/torch/t_codegen.py tests/torch/t_cache.py
		     tests/torch/t_offload.py) m
	for py in "${pys[@]}"; do
		for t in tests/torch/run.py tests/torch/t_*.py; do
			[[ " ${moved[*]} " == *" $t "* ]] && [ "$quick" = 1 ] && [ "$nbuilds" -gt 1 ] &&
				continue
			[ "$py" = /usr/bin/python3 ] && [[ " ${OLD_TORCH[*]} " != *" $t "* ]] &&
				continue
			[ "$t" = tests/torch/run.py ] && [ "$py" != /usr/bin/python3 ] &&
				[ "${CHECKMATE_LONG:-0}" != 1 ] && continue
			[ -f "$t" ] && one "$py" "$t" "$build/checkmate"
		done
	done
	if [ "$quick" = 0 ] && [ "$nbuilds" -gt 1 ] && [ -x build/venv-torch2/bin/python ]; then
		for m in "${moved[@]}"; do
			one build/venv-torch2/bin/python "$m" "$build/checkmate"
		done
	fi
	echo "$pass $fail $broken"
}

# The PyTorch programs run under Debian's torch 1.13: the graph mode's,
# and one that checks remat's refusal (each t_*.py would check only that).
OLD_TORCH=(tests/torch/run.py tests/torch/t_llm.py tests/torch/t_private.py tests/torch/t_user.py)
nbuilds=$#
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

#!/usr/bin/env bash
# SIGINT and SIGTERM against the checkmate binary given as $1, at several
# moments of ilp, approx, compare and maxbatch runs: the exit status agrees
# with the status printed, a plan written is valid under check, no partial
# or temporary file is left, no solver process outlives the run; a second
# signal ends the run at once. No timings are asserted: a run that ends
# before its signal is checked all the same. TAP, "N passed, M failed".
set -u
CM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TOP=$(cd "$(dirname "$0")/.." && pwd)
GRAPHS=${CHECKMATE_GRAPHS:-$TOP/../shared/graphs}
UNET=$GRAPHS/unet.json
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0 failed=0

ok() { # ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

# Every case runs on U-Net, a shared graph that a clone does not have.
if [ ! -d "$GRAPHS" ]; then
	echo "ok 1 - # SKIP every case: no $GRAPHS (a clone without ../shared)"
	echo "1..1"
	echo "1 passed, 0 failed"
	exit 0
fi

# start ARGS...: runs checkmate in $TMP/o in the background, SIGINT and
# SIGTERM at their defaults (a script's background job would ignore SIGINT).
start() {
	rm -rf "$TMP/o" && mkdir "$TMP/o"
	(cd "$TMP/o" && exec env --default-signal=INT,TERM "$CM" "$@" >"$TMP/out" 2>"$TMP/err") &
	pid=$!
}

# signal WHEN SIG...: after WHEN seconds, notes the solver processes
# (kids) and sends each SIG in turn (a +S among them waits S seconds); then
# waits (at most a minute) and sets rc, out, err.
signal() {
	local when=$1 s t=0
	shift
	sleep "$when"
	kids=$(pgrep -P "$pid" | tr '\n' ' ')
	for s in "$@"; do
		case "$s" in
		+*) sleep "${s#+}" ;;
		*) kill -"$s" "$pid" 2>/dev/null ;;
		esac
	done
	while kill -0 "$pid" 2>/dev/null && [ "$t" -lt 600 ]; do sleep 0.1; t=$((t + 1)); done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	wait "$pid"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# 0 when no noted solver process (nor anything in its group) is alive.
no_kids() {
	local k
	for k in $kids; do
		kill -0 "$k" 2>/dev/null && return 1
		[ -z "$(pgrep -g "$k")" ] || return 1
	done
	return 0
}

# 0 when $TMP/o holds no temporary file and nothing but the files named.
only_files() {
	local f
	for f in $(ls -A "$TMP/o"); do
		case " $* " in *" $f "*) ;; *) return 1 ;; esac
	done
	return 0
}

# 0 when the solve's outcome hangs together: feasible, exit 0 and a valid
# plan; no_plan, exit 4 and no plan file.
solve_consistent() {
	if [[ "$out" == *"status       feasible"* ]]; then
		[ "$rc" -eq 0 ] && [ -s "$TMP/o/p.json" ] &&
			"$CM" check "$UNET" "$TMP/o/p.json" >/dev/null 2>&1
	elif [[ "$out" == *"status       no_plan"* ]]; then
		[ "$rc" -eq 4 ] && [ ! -e "$TMP/o/p.json" ]
	else
		return 1
	fi
}

# --- one signal at several moments of ilp and approx
for strategy in ilp approx; do
	budget=13.6G
	[ "$strategy" = approx ] && budget=60%
	for when in 0.5 1 2; do
		start solve "$UNET" --budget $budget --strategy $strategy --plan p.json --csv r.csv
		signal $when INT
		cut=0
		[[ "$out" == *"reason       interrupted"* ]] && cut=1
		solve_consistent && no_kids && only_files p.json r.csv && [ -s "$TMP/o/r.csv" ] &&
			{ [ "$cut" -eq 0 ] || [[ "$err" == *"checkmate: interrupted: stopping"* ]]; }
		ok $? "$strategy, SIGINT at $when s: exit $rc, $(grep -E '^status' <<<"$out" | tr -s ' ')$([ $cut = 1 ] || echo ' (ended before the signal)'), kids '$kids' gone"
	done
done

# --- SIGTERM is the same
start solve "$UNET" --budget 13.6G --strategy ilp --plan p.json
signal 1 TERM
solve_consistent && no_kids && only_files p.json
ok $? "ilp, SIGTERM at 1 s: exit $rc, $(grep -E '^status' <<<"$out" | tr -s ' ')"

# --- a second signal a second or more after the first kills at once:
# tests/t_interrupt.c (here the first has always ended the solve by then)

# --- signals within a second of the first are the same request, as GNU
# timeout sends it (to the child, then to its group) or a double tap
for pair in "INT INT" "INT +0.3 TERM"; do
	start solve "$UNET" --budget 13.6G --strategy ilp --plan p.json --csv r.csv
	signal 1 $pair
	solve_consistent && no_kids && only_files p.json r.csv
	ok $? "ilp, $pair at 1 s: one request, the answer so far (exit $rc)"
done

# --- GNU timeout -s INT, which signals the child and then its group
good=0
for i in 1 2 3 4 5; do
	rm -rf "$TMP/o" && mkdir "$TMP/o"
	(cd "$TMP/o" && timeout --preserve-status -s INT 2 "$CM" solve "$UNET" --budget 13.6G --strategy ilp \
		--plan p.json >"$TMP/out" 2>"$TMP/err")
	rc=$? out=$(cat "$TMP/out")
	solve_consistent && only_files p.json && good=$((good + 1))
done
[ "$good" -eq 5 ]
ok $? "timeout -s INT 2 solve: $good of 5 runs end with the answer so far"

# --- compare: the rows done, the rest interrupted, exit 4
for when in 0.5 2; do
	start compare "$UNET" --ilp --approx --sweep 4 --csv r.csv
	signal $when INT
	rows=$(tail -n +2 "$TMP/o/r.csv" 2>/dev/null | wc -l)
	bad=$(tail -n +2 "$TMP/o/r.csv" 2>/dev/null | awk -F, 'NF != 13' | wc -l)
	cut=$(grep -c ',interrupted$' "$TMP/o/r.csv" 2>/dev/null)
	{ { [ "$rc" -eq 4 ] && [ "$cut" -gt 0 ]; } || { [ "$rc" -eq 0 ] && [ "$cut" -eq 0 ]; }; } &&
		[ "$rows" -gt 0 ] && [ "$bad" -eq 0 ] && no_kids && only_files r.csv &&
		[ "$(head -n 1 "$TMP/o/r.csv")" = "graph,strategy,param,solver,budget,feasible,cost,overhead,peak_memory,lower_bound,gap,solve_seconds,status" ]
	ok $? "compare, SIGINT at $when s: exit $rc, $rows rows, $cut interrupted"
done

# --- maxbatch: the strategy under way and those after it interrupted
start maxbatch "$UNET" --budget 13.6G --strategies checkpoint-all,ilp --csv r.csv
signal 1 INT
row=$(grep '^unet,ilp,' "$TMP/o/r.csv" 2>/dev/null)
{ { [ "$rc" -eq 4 ] && [[ "$row" == *",interrupted" ]]; } || [ "$rc" -eq 0 ]; } &&
	grep -q '^unet,checkpoint-all,batch=' "$TMP/o/r.csv" && no_kids && only_files r.csv
ok $? "maxbatch, SIGINT at 1 s: exit $rc, ilp's row '$row'"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

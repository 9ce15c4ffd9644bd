#!/usr/bin/env bash
# Deep and wide inputs for the checkmate binary given as $1, made on the
# fly: a chain of 1,000,000 nodes (format 1; node-link, listed backwards
# with no order, 200,000), a node of 100,000 deps, names and ids of 1 MiB,
# JSON nested 100,000 deep. Each must give an answer (info; checkpoint-all
# and check of its plan) or a one-line error, never a crash; every command
# runs under `timeout 60`, so a hang fails. Times are printed as comments,
# not tested. CHECKMATE_QUICK=1 (the sanitizer suite) makes the chains
# 100,000 and 50,000 nodes and the wide node 20,000 deps. TAP, ending
# "N passed, M failed".
set -u
CM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
n=0 failed=0
if [ "${CHECKMATE_QUICK:-0}" = 1 ]; then chain=100000 nlchain=50000 wide=20000
else chain=1000000 nlchain=200000 wide=100000; fi
name=$((1 << 20)) depth=100000

ok() { # ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

# run ARGS...: checkmate under timeout 60; sets out, err (the first 300
# bytes), lines (of standard error), rc, and prints the time taken.
run() {
	local t0=$EPOCHREALTIME
	timeout 60 "$CM" "$@" >out 2>err
	rc=$?
	out=$(cat out)
	err=$(head -c 300 err)
	lines=$(wc -l <err)
	echo "# checkmate $1 ${2:0:40}: exit $rc, $(awk -v a="$t0" -v b="$EPOCHREALTIME" \
		'BEGIN { printf "%.2f", b - a }') s"
}

# gen SCRIPT > FILE: python3, fast at these sizes where a shell loop is not.
gen() { python3 -c "$1"; }

# answer FILE NODES WHAT: info, then checkpoint-all and check of its plan.
answer() {
	local f=$1 nodes=$2 what=$3
	run info "$f"
	[ "$rc" -eq 0 ] && grep -q "^nodes  *$nodes " out
	ok $? "$what: info answers ($(grep '^nodes' out))"
	run solve "$f" --budget 100% --strategy checkpoint-all --plan plan.json
	[ "$rc" -eq 0 ] && grep -q '^status *optimal' out && [ -s plan.json ]
	ok $? "$what: checkpoint-all plan (exit $rc)"
	run check "$f" plan.json
	[ "$rc" -eq 0 ] && [[ "$out" == "plan.json: valid plan of "* ]]
	ok $? "$what: check of that plan: ${out:0:80}"
	rm -f plan.json
}

# refused WANT ARGS...: exit 1 and one line of error that says WANT.
refused() {
	local want=$1
	shift
	run "$@"
	[ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && [ -z "$out" ] && [[ "$err" == *"$want"* ]] &&
		[ "$(wc -c <err)" -lt 2000 ]
	ok $? "$1 ${2:0:30}: one line of error: ${err:0:120}"
}

gen "
import sys
n = $chain
w = sys.stdout.write
w('{\"nodes\": [{\"name\": \"n0\", \"cost\": 1, \"memory\": 1}')
w(''.join(',{\"name\":\"n%d\",\"cost\":1,\"memory\":1,\"deps\":[%d]}' % (i, i - 1)
          for i in range(1, n)))
w(']}')" >chain.json
answer chain.json "$chain" "chain of $chain nodes"
rm chain.json

gen "
import sys
n = $nlchain
w = sys.stdout.write
w('{\"directed\": true, \"nodes\": [')
w(','.join('{\"id\":%d,\"cost_cpu\":1,\"cost_ram\":1}' % i for i in range(n - 1, -1, -1)))
w('], \"links\": [')
w(','.join('{\"source\":%d,\"target\":%d}' % (i - 1, i) for i in range(n - 1, 0, -1)))
w(']}')" >chain-nodelink.json
answer chain-nodelink.json "$nlchain" "node-link chain of $nlchain nodes, listed backwards"
rm chain-nodelink.json

gen "
import sys
n = $wide
w = sys.stdout.write
w('{\"nodes\": [')
w(','.join('{\"name\":\"n%d\",\"cost\":1,\"memory\":1}' % i for i in range(n)))
w(',{\"name\":\"sink\",\"cost\":1,\"memory\":1,\"deps\":[%s]}]}' %
  ','.join(str(i) for i in range(n)))" >wide.json
answer wide.json "$((wide + 1))" "a node of $wide deps"
# (auto only in the plain suite: under ASan a stage-matrix point over
# 20,000 nodes takes most of a minute)
if [ "${CHECKMATE_QUICK:-0}" != 1 ]; then
	run solve wide.json --budget 100% --time-limit 10
	[ "$rc" -eq 0 ] && grep -q '^status *optimal' out
	ok $? "a node of $wide deps: solve (auto) answers: $(grep '^strategy' out)"
fi
rm wide.json

gen "
import json, sys
a = 'a' * $name
b = 'a' * ($name - 1) + 'b'
json.dump({'nodes': [{'name': a, 'cost': 1, 'memory': 1},
                     {'name': b, 'cost': 1, 'memory': 1, 'deps': [a]}]}, sys.stdout)
" >names.json
answer names.json 2 "names of 1 MiB"
sed 's/"deps": \["a/"deps": ["c/' names.json >names-bad.json
refused "is not an earlier node" info names-bad.json
gen "
import json, sys
a = 'a' * $name
b = 'a' * ($name - 1) + 'b'
json.dump({'nodes': [{'id': b, 'cost_cpu': 1, 'cost_ram': 1},
                     {'id': a, 'cost_cpu': 1, 'cost_ram': 1}],
           'links': [{'source': a, 'target': b}]}, sys.stdout)
" >ids.json
answer ids.json 2 "node-link ids of 1 MiB that differ in the last byte"
rm -f names.json names-bad.json ids.json

gen "import sys; sys.stdout.write('[' * $depth + ']' * $depth)" >deep.json
refused "maximum parsing depth" info deep.json
gen "
import sys
d = $depth
sys.stdout.write('{\"nodes\": [{\"name\": \"a\", \"cost\": 1, \"memory\": 1, \"x\": ' +
                 '{\"y\": [' * d + ']}' * d + '}]}')" >deep-node.json
refused "maximum parsing depth" info deep-node.json
gen "
import sys
d = 2000
sys.stdout.write('{\"nodes\": [{\"name\": \"a\", \"cost\": 1, \"memory\": 1, \"x\": ' +
                 '[' * d + ']' * d + '}]}')" >nested-2000.json
run info nested-2000.json
[ "$rc" -eq 0 ]
ok $? "2,000 levels of nesting (under the reader's limit) in an unknown key: info answers"
gen "import sys; sys.stdout.write('{\"steps\": ' + '[' * $depth + ']' * $depth + '}')" >deep-plan.json
refused "maximum parsing depth" check linear:2 deep-plan.json
echo "$((n - failed)) passed, $failed failed"

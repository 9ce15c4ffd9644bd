#!/usr/bin/env bash
# The shape of the code (docs/architecture.md, Rules of the layout), as TAP
# ending "N passed, M failed":
#   - no circle of modules by #include (a module is X.c with X.h; X -> Y
#     when X.c or X.h includes Y.h), within a folder or across folders;
#   - no circle of modules by the symbols their objects use (nm over the
#     objects of build directory $1, default build): what a header hides
#     (a function declared in a hub, defined elsewhere) shows here. The
#     tables of function pointers (TABLES below) are the plug-in points: what
#     they name is not a dependency of theirs;
#   - no folder with more than 35% of the C lines of the library (tests/,
#     bench/, fuzz/ aside; a subfolder counts apart);
#   - no function over 80 lines, from its first line to its closing brace.
#   tests/structure.sh [BUILD]     (make deps-check)
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:-build}
n=0 failed=0
ok() { # ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
TABLES="solvers/table solvers/milp/backend/table"
FOLDERS="common graph plan baselines solvers cli"
src=$(find $FOLDERS -name '*.[ch]' | sort)

# The strongly connected components of more than one node of the edges
# "from to" on stdin, one a line.
circles() {
	python3 -c '
import sys
sys.setrecursionlimit(100000)
g = {}
for line in sys.stdin:
    a, b = line.split()
    g.setdefault(a, set()).add(b)
    g.setdefault(b, set())
index, low, stack, on, out = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in sorted(g[v]):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: out.append(" <-> ".join(sorted(c)))
for v in sorted(g):
    if v not in index: visit(v)
print("\n".join(out))
'
}

# --- #include
for f in $src; do
	dir=$(dirname "$f") mod=${f%.*}
	sed -n 's/^#include "\(.*\)\.h".*/\1/p' "$f" | while read -r inc; do
		to=$(realpath -m --relative-to=. "$dir/$inc")
		[ "$to" = "$mod" ] || echo "$mod $to"
	done
done >"${TMPDIR:-/tmp}/cm-inc.$$"
c=$(circles <"${TMPDIR:-/tmp}/cm-inc.$$")
rm -f "${TMPDIR:-/tmp}/cm-inc.$$"
[ -z "$c" ]
ok $? "no circle of includes${c:+: ${c//$'\n'/; }}"

# --- symbols
if [ -f "$build/libcheckmate.a" ]; then
	tmp=$(mktemp -d)
	# The objects of today's sources only: a build directory keeps those
	# of files moved away.
	objs=$(for f in $src; do
		case $f in cli/main.c|*.h) ;; *) [ -f "$build/${f%.c}.o" ] && echo "${f%.c}.o" ;; esac
	done)
	for o in $objs; do
		nm -g --defined-only "$build/$o" | awk -v O="${o%.o}" 'NF == 3 { print $3, O }'
	done | sort >"$tmp/defs"
	for o in $objs; do
		case " $TABLES " in *" ${o%.o} "*) continue ;; esac
		nm -u "$build/$o" | awk -v O="${o%.o}" '{ print $2, O }'
	done | sort >"$tmp/uses"
	c=$(join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u | circles)
	rm -rf "$tmp"
	[ -z "$c" ]
	ok $? "no circle of modules by symbols${c:+: ${c//$'\n'/; }}"
else
	echo "# $build/libcheckmate.a not built: symbols not checked"
fi

# --- lines per folder
total=$(cat $src | wc -l)
for d in $(dirname $src | sort -u); do
	lines=$(cat "$d"/*.[ch] | wc -l)
	[ $((lines * 100)) -le $((total * 35)) ]
	ok $? "$d/ holds $((lines * 100 / total))% of $total lines (at most 35%)"
done

# --- functions
long=$(for f in $src; do
	awk -v F="$f" '
	/^[A-Za-z_]/ && !/;[ \t]*$/ && !sig { sig = NR }
	/^[A-Za-z_]/ && /;[ \t]*$/ { sig = 0 }
	/^\{/ { start = sig ? sig : NR }
	/^\}/ { if (start && NR - start + 1 > 80) print F ":" start ": " NR - start + 1; start = 0; sig = 0 }
	' "$f"
done)
[ -z "$long" ]
ok $? "no function over 80 lines${long:+: ${long//$'\n'/, }}"

echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

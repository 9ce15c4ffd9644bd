#!/usr/bin/env bash
# A clone stands alone: the repository's files (git ls-files, tracked and
# untracked, as a clone of this tree would have them) copied to a
# temporary folder with no ../shared beside it, build $1's objects (default
# build) copied in as `make` left them; there `make demo` runs, and then
# every command of the README's Usage block as printed, each with the exit
# status it is documented with (0, or N for a line ending "# exit N").
# TAP, ending "N passed, M failed".
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
C=$TMP/clone
n=0 failed=0

ok() { # ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

# The files a clone has: git's (those deleted in the work tree left out),
# else every file but build outputs. Sources keep their times, so the
# objects copied after them are up to date for make.
mkdir "$C"
if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$TOP" && git ls-files -co --exclude-standard -z |
		xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' _ |
		tar --null -T - -cf -) | tar -C "$C" -xf -
else
	tar -C "$TOP" --exclude=./build --exclude=./.git --exclude=./checkmate -cf - . | tar -C "$C" -xf -
fi
mkdir -p "$C/build"
(cd "$TOP/$BUILD" && tar -cf - libcheckmate.a checkmate checkmate.1 \
	$(ls -d common graph plan baselines solvers cli 2>/dev/null)) | tar -C "$C/build" -xf -
[ -f "$C/README.md" ] && [ -x "$C/build/checkmate" ] && [ ! -e "$TMP/shared" ]
ok $? "the clone's files and build $BUILD in $C, no ../shared beside it"

# The make of the suite that runs us must not hand its jobserver down.
(cd "$C" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory demo) >"$TMP/log" 2>&1
ok $? "make demo in the clone: $(grep -c '^  CC' "$TMP/log") files compiled, $(tail -n 1 "$TMP/log")"

# The Usage block's commands: a line at the left margin starts one, an
# indented line or a `done` continues it.
awk '/^## Usage/ { u = 1 } u && /^```sh/ { f = 1; next } f && /^```/ { exit } f' \
	"$C/README.md" >"$TMP/usage"
cmds=()
while IFS= read -r line; do
	if [ "${#cmds[@]}" -gt 0 ] && [[ "$line" == [[:space:]]* || "$line" == done* ]]; then
		cmds[${#cmds[@]} - 1]+=$'\n'"$line"
	else
		cmds+=("$line")
	fi
done <"$TMP/usage"
[ "${#cmds[@]}" -ge 10 ]
ok $? "the README's Usage block: ${#cmds[@]} commands"
for cmd in "${cmds[@]}"; do
	want=0
	[[ "${cmd%%$'\n'*}" =~ \#\ exit\ ([0-9]+) ]] && want=${BASH_REMATCH[1]}
	start=$SECONDS
	(cd "$C" && timeout 300 bash -c "$cmd") >"$TMP/out" 2>&1
	rc=$?
	[ "$rc" -eq "$want" ]
	ok $? "exit $rc (want $want) in $((SECONDS - start)) s: $(echo "$cmd" | head -n 1)"
	[ "$rc" -eq "$want" ] || tail -n 5 "$TMP/out" | sed 's/^/# /'
done

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# make install / make uninstall of build $1 (default build) into temporary
# prefixes: the installed binary runs, its manual page renders and covers
# every command, option and strategy, the bash and zsh completions
# complete from the installed binary, the Python package imports from
# outside the checkout and finds the binary (and installs with pip in a
# venv, pyproject.toml and setup.py, which build the binary into the
# package: the README's torch 2.x lines run, the training example after
# them), and uninstall removes every file.
# TAP, ending "N passed, M failed".
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TOP" || exit 1
n=0 failed=0
P=$TMP/prefix
CM=$P/bin/checkmate
PAGE=$P/share/man/man1/checkmate.1
BASHC=$P/share/bash-completion/completions/checkmate
ZSHC=$P/share/zsh/site-functions/_checkmate

ok() { # ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

# The make of the suite that runs us must not hand its jobserver down.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory BUILD="$BUILD" "$@"; }

mk install PREFIX="$P" >"$TMP/log" 2>&1
ok $? "make install PREFIX=... ($(tail -n 1 "$TMP/log"))"
[ -x "$CM" ] && [ -f "$PAGE" ] && [ -f "$BASHC" ] && [ -f "$ZSHC" ]
ok $? "the binary, the manual page and both completions are installed"
"$CM" --help >"$TMP/out" 2>&1 && grep -q '^usage: checkmate COMMAND' "$TMP/out"
ok $? "the installed checkmate --help runs"

# --- the Python package: for Debian's python3 under PREFIX, and in a venv
PYV=$(/usr/bin/python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
SITE=$P/lib/$PYV/site-packages
[ -f "$SITE/checkmate_torch/__init__.py" ] && [ -f "$SITE/checkmate_torch/binary.py" ] &&
	[ -f "$SITE/checkmate_torch/examples/residual.py" ] && [ -x "$P/bin/checkmate-torch" ]
ok $? "checkmate_torch, its examples and checkmate-torch are installed in PREFIX/lib/$PYV/site-packages"
mkdir -p "$TMP/nobin"
pyout() { # ENV... : what the installed package says, run in $TMP as /usr/bin/python3
	(cd "$TMP" && env -u CHECKMATE "$@" /usr/bin/python3 -c '
import checkmate_torch
from checkmate_torch.binary import find_checkmate, BinaryError
print(checkmate_torch.__file__)
try:
    print(find_checkmate())
except BinaryError as e:
    print("BinaryError: %s" % e)' 2>&1)
}
out=$(pyout PYTHONPATH="$SITE" PATH="$P/bin:$PATH")
[ "$out" = "$SITE/checkmate_torch/__init__.py
$P/bin/checkmate" ]
ok $? "PYTHONPATH=SITE: the installed package imports outside the checkout, find_checkmate() finds the installed binary: $(echo $out)"
out=$(pyout PYTHONPATH="$SITE" PATH="$TMP/nobin" CHECKMATE="$CM")
[ "$(echo "$out" | tail -n 1)" = "$CM" ]
ok $? "find_checkmate() takes \$CHECKMATE: $(echo "$out" | tail -n 1)"
out=$(pyout PYTHONPATH="$SITE" PATH="$TMP/nobin" CHECKMATE="$PAGE" | tail -n 1)
out2=$(pyout PYTHONPATH="$SITE" PATH="$TMP/nobin" | tail -n 1)
[[ "$out" == "BinaryError: \$CHECKMATE is $PAGE: not an executable file" ]] &&
	[[ "$out2" == "BinaryError: no checkmate binary: set \$CHECKMATE"* ]]
ok $? "find_checkmate(): a one-line BinaryError for a bad \$CHECKMATE or no binary: $out2"
out=$(pyout PYTHONPATH="$TOP" PATH="$TMP/nobin" | tail -n 1)
[ "$out" = "$TOP/checkmate" ] || [ "$out" = "$TOP/build/checkmate" ]
ok $? "from a checkout, find_checkmate() falls back to the checkout's binary: $out"
(cd "$TMP" && "$P/bin/checkmate-torch" --help 2>&1) | grep -q '^usage: checkmate_torch'
ok $? "the installed checkmate-torch --help runs outside the checkout, PYTHONPATH unset"
mkdir "$TMP/src" && tar -C "$TOP" --exclude=./build --exclude=./.git --exclude=__pycache__ \
	--exclude='*.egg-info' --exclude=./checkmate -cf - . | tar -C "$TMP/src" -xf - &&
	/usr/bin/python3 -m venv --system-site-packages "$TMP/venv" >"$TMP/log" 2>&1
# A library missing (pkg-config knowing none here): one line naming the
# Debian package, no binary built.
mkdir "$TMP/nopc" && printf '#!/bin/sh\nexit 1\n' >"$TMP/nopc/pkg-config" && chmod +x "$TMP/nopc/pkg-config"
out=$(cd "$TMP/src" && PATH=$TMP/nopc:$PATH "$TMP/venv/bin/pip" install -q --disable-pip-version-check \
	--no-build-isolation . 2>&1 | grep -o 'error: checkmate-torch.*')
[ "$out" = "error: checkmate-torch: building the checkmate binary needs Jansson: apt-get install libjansson-dev (or make deps)" ] &&
	[ ! -e "$TMP/src/build/checkmate" ]
ok $? "pip install without Jansson: one line naming the package: $out"
(cd "$TMP/src" && "$TMP/venv/bin/pip" install -q --disable-pip-version-check \
	--no-build-isolation . >>"$TMP/log" 2>&1)
st=$? out=$(tail -n 1 "$TMP/log")
ok $st "venv --system-site-packages, pip install --no-build-isolation . (the binary built in)${out:+ ($out)}"
out=$(cd "$TMP" && "$TMP/venv/bin/python" -c 'import checkmate_torch, torch; print(checkmate_torch.__file__)' 2>&1)
[[ "$out" == "$TMP/venv/lib/"*"/checkmate_torch/__init__.py" ]] &&
	[ -f "$(dirname "$out")/examples/residual.py" ] &&
	(cd "$TMP" && "$TMP/venv/bin/checkmate-torch" --help 2>&1) | grep -q '^usage: checkmate_torch'
ok $? "the venv's checkmate_torch (with its examples) and torch import outside the checkout, checkmate-torch runs: $out"

# --- the README's torch 2.x lines: a fresh venv of the PATH's python3,
# torch pinned as the Makefile pins it, then the clone (its binary built
# above, so no second compile); then, elsewhere, with $CHECKMATE unset and
# neither checkout on PATH, the training example and the checkmate command.
# torch comes from build/venv-torch2 when make torch2 made it (seen through
# a .pth of links, checkmate_torch left out; pip then finds it there),
# else from pip; without a torch 2.13 wheel the cases are skipped.
PIN=$(sed -n 's/^TORCH2_PIN *= *//p' Makefile)
V=$TMP/V
grep -qxF 'python3 -m venv V' README.md &&
	grep -qxF "V/bin/pip install $PIN numpy" README.md &&
	grep -qxF 'V/bin/pip install CLONE' README.md &&
	grep -qxF 'V/bin/python -m checkmate_torch.examples.train_gpt' README.md
ok $? "README: the venv lines for $PIN"
python3 -m venv "$V" >"$TMP/log" 2>&1
T2=$(ls -d build/venv-torch2/lib/python3*/site-packages 2>/dev/null | head -n 1)
VS=$(ls -d "$V"/lib/python3*/site-packages | head -n 1)
if [ -n "$T2" ] && [ "$(basename "$(dirname "$T2")")" = "$(basename "$(dirname "$VS")")" ]; then
	mkdir "$TMP/torch2"
	for f in "$TOP/$T2"/*; do
		case "$(basename "$f")" in checkmate_torch*) ;; *) ln -s "$f" "$TMP/torch2/" ;; esac
	done
	echo "$TMP/torch2" >"$VS/torch2.pth"
fi
if "$V/bin/pip" install -q "$PIN" numpy >>"$TMP/log" 2>&1 && "$V/bin/python" -c 'import torch' 2>/dev/null; then
	(cd "$TMP/src" && "$V/bin/pip" install -q --no-build-isolation . >>"$TMP/log" 2>&1)
	ok $? "V/bin/pip install CLONE (--no-build-isolation: nothing fetched)$([ -s "$VS/torch2.pth" ] && echo ", torch from build/venv-torch2")"
	mkdir "$TMP/elsewhere"
	out=$(cd "$TMP/elsewhere" && env -u CHECKMATE PATH="$V/bin:/usr/bin:/bin" "$V/bin/python" -c '
import torch
from checkmate_torch.binary import find_checkmate
print(torch.__version__, find_checkmate())' 2>&1)
	[[ "$out" == "${PIN#torch==}"*" $VS/checkmate_torch/bin/checkmate" ]]
	ok $? "torch ${PIN#torch==}, find_checkmate() finds the binary built into the package: $out"
	(cd "$TMP/elsewhere" && env -u CHECKMATE PATH="$V/bin:/usr/bin:/bin" \
		"$V/bin/python" -m checkmate_torch.examples.train_gpt >"$TMP/out" 2>&1)
	st=$?
	[ "$st" -eq 0 ] && grep -q "'overhead'" "$TMP/out" && [ "$(grep -c '^[0-4] [0-9.]*$' "$TMP/out")" -eq 5 ]
	ok $? "the README's training example runs elsewhere (\$CHECKMATE unset): $(head -n 1 "$TMP/out")"
	out=$(cd "$TMP/elsewhere" && env -u CHECKMATE PATH="$V/bin:/usr/bin:/bin" checkmate --help 2>&1 | head -n 1)
	[ "$out" = "usage: checkmate COMMAND [ARGS]" ] &&
		(cd "$TMP/elsewhere" && env -u CHECKMATE PATH="$V/bin:/usr/bin:/bin" checkmate solve linear:4 \
			--budget 5 --quiet --csv - | grep -q '^linear:4,auto,')
	ok $? "the venv's checkmate command runs the package's binary: $out"
else
	ok 0 "# SKIP $PIN: no wheel could be installed ($(tail -n 1 "$TMP/log"))"
fi

# --- the manual page
MANWIDTH=100 man -l "$PAGE" >"$TMP/man" 2>"$TMP/manerr"
[ $? -eq 0 ] && [ ! -s "$TMP/manerr" ] && grep -q '^SYNOPSIS' "$TMP/man" &&
	grep -q '^EXIT STATUS' "$TMP/man"
ok $? "man -l renders the page without warnings $(head -c 200 "$TMP/manerr")"
MANWIDTH=100 MANPATH=$P/share/man man checkmate 2>/dev/null | cmp -s - "$TMP/man"
ok $? "man finds it under PREFIX/share/man"
missing=
while IFS=$'\t' read -r c _; do
	grep -q "^   checkmate $c\$" "$TMP/man" || missing="$missing $c"
	for o in $("$CM" "$c" --help | sed -n -E 's/^  (-[A-Za-z], |    )(--[a-z][a-z-]*).*/\2/p'); do
		grep -q -- "$o" "$TMP/man" || missing="$missing $c:$o"
	done
done < <("$CM" --list commands)
while IFS=$'\t' read -r s _; do
	grep -q "^       $s" "$TMP/man" || missing="$missing $s"
done < <("$CM" --list strategies)
[ -z "$missing" ] && grep -q -- '--json FILE|-' "$TMP/man"
ok $? "the page has every command, option and strategy of the binary${missing:+; missing:$missing}"

# --- bash completion, driven as bash drives it
bash_complete() { # WORD... : the completions of the last word, one line
	PATH=$P/bin:$PATH bash --norc --noprofile -c '
		source "$1"; shift
		complete -p checkmate >/dev/null || exit 1
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_checkmate; echo "${COMPREPLY[*]}"' _ "$BASHC" "$@"
}
out=$(bash_complete checkmate sol)
[ "$out" = solve ]
ok $? "bash: checkmate sol<TAB> -> '$out'"
out=$(bash_complete checkmate solve --strategy d)
[ "$out" = "dtr dtr-offload dtr-tune" ]
ok $? "bash: checkmate solve --strategy d<TAB> -> '$out'"
out=$(bash_complete checkmate compare --baselines chen-sqrtn,linearized-s)
[ "$out" = chen-sqrtn,linearized-sqrtn ]
ok $? "bash: a name in a --baselines list -> '$out'"
out=$(bash_complete checkmate solve --sol)
[ "$out" = --solver ]
ok $? "bash: options from the command's --help -> '$out'"
out=$(bash_complete checkmate solve --solver '')
[ "$out" = "$("$CM" --list solvers | tr '\n' ' ' | sed 's/ $//')" ]
ok $? "bash: solver names from the binary -> '$out'"
out=$(cd tests && bash_complete checkmate check cl)
[ "$out" = cli.sh ]
ok $? "bash: file names for GRAPH and PLAN -> '$out'"
out=$(bash_complete "$CM" info --j)
[ "$out" = --json ]
ok $? "bash: a binary given by its path is asked itself -> '$out'"

# --- zsh completion: the completion system's functions stubbed to print
# what they are given
if command -v zsh >/dev/null; then
	PATH=$P/bin:$PATH zsh -f -c '
		_describe() { print -rl -- "${(@P)${@[-1]}}" }
		_arguments() { print -rl -- "$@" }
		compadd() { local -a a o; zparseopts -D -E a:=a S:=o q=o J:=o; print -rl -- "${(@P)a[2]}" }
		_call_program() { shift; "$@" }
		source "$1"
		words=(checkmate sol) CURRENT=2; _checkmate
		words=(checkmate solve --strategy d) CURRENT=4; _checkmate
		bin=checkmate; _checkmate_strategies -J x' _ "$ZSHC" >"$TMP/zsh" 2>&1
	grep -q '^solve:find the cheapest' "$TMP/zsh" &&
		grep -q '^--strategy=\[one of the strategies below (default\\: auto)\]:NAME:_checkmate_strategies$' "$TMP/zsh" &&
		grep -q '^--plan=\[write the plan to FILE\]:FILE:_files$' "$TMP/zsh" &&
		grep -q '^dtr$' "$TMP/zsh" && ! grep -q 'not found' "$TMP/zsh"
	ok $? "zsh: commands with descriptions, option specs from --help, strategy names"
else
	ok 1 "zsh: not installed (make deps installs it)"
fi

HOME=$TMP/home mk install PREFIX='~/.local' >"$TMP/log" 2>&1 && [ -x "$TMP/home/.local/bin/checkmate" ] &&
	HOME=$TMP/home mk uninstall PREFIX='~/.local' >>"$TMP/log" 2>&1 &&
	[ -z "$(find "$TMP/home" ! -type d)" ] && [ ! -e '~' ]
ok $? "PREFIX='~/.local' as zsh passes it: under \$HOME, not in a directory named ~"

# --- uninstall; and DESTDIR stages under another root
mk uninstall PREFIX="$P" >"$TMP/log" 2>&1 && [ -z "$(find "$P" ! -type d)" ]
ok $? "make uninstall leaves no file of ours under PREFIX: $(find "$P" ! -type d | head -n 3)"
mk install DESTDIR="$TMP/stage" PREFIX=/opt/cm >"$TMP/log" 2>&1 &&
	[ -x "$TMP/stage/opt/cm/bin/checkmate" ] && [ -f "$TMP/stage/opt/cm/share/man/man1/checkmate.1" ] &&
	[ -f "$TMP/stage/opt/cm/lib/$PYV/site-packages/checkmate_torch/__init__.py" ] &&
	grep -q "^sys.path.insert(0, \"/opt/cm/lib/$PYV/site-packages\")\$" "$TMP/stage/opt/cm/bin/checkmate-torch" &&
	mk uninstall DESTDIR="$TMP/stage" PREFIX=/opt/cm >>"$TMP/log" 2>&1 &&
	[ -z "$(find "$TMP/stage" ! -type d)" ]
ok $? "DESTDIR=... PREFIX=/opt/cm installs under DESTDIR and uninstalls from there"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

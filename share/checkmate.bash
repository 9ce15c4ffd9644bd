# bash completion for checkmate, installed as
# share/bash-completion/completions/checkmate. Everything it offers comes
# from the binary being completed, so that it cannot drift from it: the
# commands, strategy, parameter, solver and LP-method names from
# `checkmate --list WHAT`, each command's options (and which take a value)
# from its --help; file names for GRAPH, PLAN and FILE arguments.

# The options of command $2 of binary $1 as lines "--long ARG -s", with
# "=" for no ARG and no short form.
_checkmate_options()
{
	local line re='^  (-([A-Za-z]), |    )(--[a-z][a-z-]*)( ([^ ]+))?'

	"$1" "$2" --help 2>/dev/null | while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		printf '%s %s -%s\n' "${BASH_REMATCH[3]}" "${BASH_REMATCH[5]:-=}" \
			"${BASH_REMATCH[2]:-=}"
	done
}

# COMPREPLY: the words of $1 (one a line) that start with $2.
_checkmate_reply()
{
	local w

	COMPREPLY=()
	while IFS= read -r w; do
		[[ -n $w && $w == "$2"* ]] && COMPREPLY+=("$w")
	done <<<"$1"
}

# COMPREPLY: file names that start with $1.
_checkmate_files()
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

# Completes the value $cur of option $opt (taking $arg) of binary $bin.
_checkmate_value()
{
	local names head=

	case $opt in
	--strategy) names=$("$bin" --list strategies | cut -f1) ;;
	--strategies | --baselines)
		# a comma-separated list: complete its last name
		[[ $cur == *,* ]] && head=${cur%,*},
		_checkmate_reply "$(printf 'all\nnone\n'; "$bin" --list strategies | cut -f1)" \
			"${cur#"$head"}"
		COMPREPLY=("${COMPREPLY[@]/#/$head}")
		compopt -o nospace 2>/dev/null
		return ;;
	--solver) names=$("$bin" --list solvers) ;;
	--lp-method) names=$("$bin" --list lp-methods) ;;
	--plan-format) names=$(printf 'json\ntext\n') ;;
	--param)
		names=$("$bin" --list params | cut -f1 | sort -u | sed 's/$/=/')
		compopt -o nospace 2>/dev/null ;;
	*)
		[[ $arg == FILE* ]] && _checkmate_files "$cur"
		return ;;
	esac
	_checkmate_reply "$names" "$cur"
}

_checkmate()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev= bin=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]-}
	local opt arg short line

	((COMP_CWORD > 1)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# bash splits "--strategy=dtr" at the "="
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	[[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
	type -P "$bin" >/dev/null 2>&1 || bin=checkmate
	COMPREPLY=()
	if ((COMP_CWORD == 1)) || [[ $cmd == help && $COMP_CWORD -eq 2 ]]; then
		if [[ $cur == -* ]]; then
			_checkmate_reply $'--help\n--version' "$cur"
		else
			_checkmate_reply "$("$bin" --list commands 2>/dev/null | cut -f1)" "$cur"
		fi
		return
	fi
	if [[ $prev == -* ]]; then
		while read -r opt arg short; do
			[[ $prev == "$opt" || $prev == "$short" ]] && break
		done < <(_checkmate_options "$bin" "$cmd")
		if [[ ($prev == "$opt" || $prev == "$short") && $arg != = ]]; then
			_checkmate_value
			return
		fi
	fi
	if [[ $cur == -* ]]; then
		_checkmate_reply "$(_checkmate_options "$bin" "$cmd" | cut -d' ' -f1)" "$cur"
		return
	fi
	_checkmate_files "$cur"
}

complete -F _checkmate checkmate

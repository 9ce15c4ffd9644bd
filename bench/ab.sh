#!/usr/bin/env bash
# auto from two binaries side by side, at f = .25, .5, .75 of the way from
# the lower bound to the checkpoint-all peak, --time-limit ${LIMIT:-10}:
# for a change that claims speed or quality, before and after in one run.
# Rows (graph,f,old overhead,old param,new overhead,new param) to stdout.
#   OLD=path/to/checkmate NEW=./checkmate bench/ab.sh GRAPH...
set -u
old=${OLD:?OLD=binary before the change} new=${NEW:-./checkmate} limit=${LIMIT:-10}
echo "graph,f,old_overhead,old_param,new_overhead,new_param"
for g in "$@"; do
	lb=$($new info "$g" | awk '/^lower bound/ {print $3}')
	peak=$($new info "$g" | awk '/^checkpoint-all/ {print $5}')
	for f in 0.25 0.5 0.75; do
		b=$(awk -v l="$lb" -v p="$peak" -v f="$f" 'BEGIN { printf "%.0f", l + f * (p - l) }')
		row=$(basename "$g" .json),$f
		for cm in "$old" "$new"; do
			row=$row,$($cm solve "$g" --budget "$b" --time-limit "$limit" --csv - --no-header \
				--quiet | awk -F, '{ print ($6 == 1 ? $8 : "none") "," $3 }')
		done
		echo "$row"
	done
done

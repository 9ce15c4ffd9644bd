#!/usr/bin/env bash
# The keep, offload or recompute class on the paper's chain graphs
# (docs/model.md, "Keep, offload or recompute"): offload-dp,
# offload-ilp, dtr-offload, and without copies dtr and ilp, at five budgets
# from the least any plan needs to the checkpoint-all peak (bytes), at 25 and
# 50 GB/s, costs read at RATE units a second. One line a run:
#   graph budget GB/s strategy status time_s host_bytes seconds
#   bench/policy.sh [BIN] [RATE]      (from the repository root)
set -u
bin=${1:-build/checkmate}
rate=${2:-10000/s}
graphs=${GRAPHS:-"vgg16 vgg19 mobilenet segnet"}
for g in $graphs; do
	f=../shared/graphs/$g.json
	lb=$("$bin" info "$f" | awk '/^lower bound/ { print $3 }')
	peak=$("$bin" info "$f" | awk '/^checkpoint-all/ { sub(",", "", $5); print $5 }')
	for q in 0 1 2 3 4; do
		# from the least any plan needs to the checkpoint-all peak
		pct=$((lb + (peak - lb) * q / 4))
		for bw in 25GB/s 50GB/s; do
			for s in offload-dp offload-ilp dtr-offload dtr ilp; do
				[ "$s" = ilp ] && [ "$bw" = 50GB/s ] && continue
				nice "$bin" solve "$f" --budget "$pct" --bandwidth "$bw" --rate "$rate" \
					--strategy "$s" --time-limit 10 --json - --quiet 2>/dev/null |
				python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], d.get("status"),
      d.get("time"), d.get("host_peak_memory"), d.get("solve_seconds"))' "$g" "$pct" "$bw" "$s"
			done
		done
	done
done

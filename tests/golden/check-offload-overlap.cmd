check ../graphs/offload.json offload-overlap.plan.json --bandwidth 100B/s

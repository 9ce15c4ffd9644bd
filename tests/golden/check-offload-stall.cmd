check ../graphs/offload.json offload-stall.plan.json --bandwidth 10/s --budget 210

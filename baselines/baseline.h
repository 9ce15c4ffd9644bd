/* Heuristic strategies (SPEC 4, the paper's Table 1): one file each, one
 * row each in baseline_table. */
#ifndef CM_BASELINE_H
#define CM_BASELINE_H

#include "../plan/plan.h"

struct baseline {
	const char *name;        /* --strategy / --baselines value */
	const char *description; /* one line for --help */
	/* Appends the strategy's schedule for g to p (steps only: the caller
	 * replays it). A strategy with a parameter picks its cheapest point
	 * that fits budget. Returns 0, or -1 with err set. */
	int (*run)(const struct graph *g, uint64_t budget, struct plan *p,
		   struct cm_error *err);
};

extern const struct baseline baseline_table[];
extern const int baseline_count;

/* The baseline called name, or NULL. */
const struct baseline *baseline_find(const char *name);

int baseline_checkpoint_all(const struct graph *g, uint64_t budget,
			    struct plan *p, struct cm_error *err);

#endif

/* dtr tuned to the graph: a weight per repeat class (graph/repeat.h) on
 * dtr's eviction score, found by coordinate search, each point a dtr run
 * replayed by the simulator. On stacks of identical blocks the classes tie
 * a layer's values to the same values of every other layer, so a few dozen
 * weights steer the whole plan. */
#ifndef CM_TUNE_H
#define CM_TUNE_H

#include <stdint.h>

#include "../../plan/plan.h"
#include "dtr.h"

/* tune_plan's status when dtr has no plan at the budget (DTR_NO_PLAN). */
#define TUNE_NO_PLAN DTR_NO_PLAN

struct tune_opts {
	double deadline;  /* cm_clock() time to stop at, 0 for none */
};

struct tune_stats {
	int runs;        /* dtr runs */
	int classes;     /* repeat classes at the finest level searched */
	int converged;   /* 1: no step of the finest level gains (the search
			  * ended on its own, not at the deadline) */
	char from[32];   /* the heuristic and dead-value policy of the plan,
			  * as "full", "full,keep-dead" */
};

/* The cheapest plan found within budget: dtr's own (every heuristic with
 * weight 1, as the dtr row runs) to begin with, then, for each heuristic
 * whose score has a cost numerator, weights searched class by class (a
 * factor e^step up or down on a class, kept when the replayed plan is
 * cheaper and fits), coarse classes (GRAPH_REPEAT_ROUNDS 0) first, the
 * weights carried over to finer ones. Appends the plan to p (empty; cost,
 * peak, budget and strategy "dtr-tune" set) and returns 0; TUNE_NO_PLAN
 * when dtr has no plan at budget; -1 with err set when out of memory. st
 * may be NULL. */
int tune_plan(const struct graph *g, uint64_t budget, const struct tune_opts *o,
	      struct plan *p, struct tune_stats *st, struct cm_error *err);

#endif

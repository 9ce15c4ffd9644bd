/* Repair: from a plan that does not fit the budget, a plan that does, by
 * windows of the Checkmate model whose memory rows may exceed the budget
 * by a slack that the objective weighs above any cost (phase 1 of the
 * simplex method, window by window: solvers/window.h, window_repair). The
 * windows sit around the stages whose memory is over the budget and grow
 * where they cannot reduce it. */
#ifndef CM_REPAIR_H
#define CM_REPAIR_H

#include <stdint.h>

#include "../../plan/stages.h"
#include "../milp/backend/solver.h"

/* Largest graph repaired: the shave variants hold three n x n stage
 * matrices and complete rows of n values per move. */
#define REPAIR_MAX_NODES 4000

struct repair_opts {
	const struct solver_ops *ops; /* the backend of every window */
	double time_limit;        /* seconds in all; <= 0: until stuck */
	double window_time_limit; /* seconds per window; <= 0: 10 */
	int stage_window;         /* stages around the target at first; <= 0: 6 */
	int node_window;          /* free values per window at first; <= 0: 12 */
	unsigned long long seed;  /* ties among values to free, random shaves */
	int no_shave;             /* 1: windows only, no constructive phase
				   * (tests and measurements) */
	/* Called after every window with the overflow left (as the
	 * incumbent) and the cost; may be NULL. */
	void (*progress)(void *ctx, const struct solve_progress *p);
	void *ctx;
};

struct repair_stats {
	int shaves;            /* shave attempts (solvers/shave.h) */
	int windows;           /* windows solved */
	int improved;          /* of which reduced the overflow (or the cost) */
	int rejected;          /* of which gave a solution the replay refused */
	int crashed;           /* of which the backend failed on */
	double first_overflow; /* the start's overflow (window_overflow), bytes */
	double final_overflow; /* the result's; 0 when it fits */
	double first_cost, final_cost;
	double seconds;        /* wall time */
	double t_fit;          /* seconds until the plan fit, or -1 */
	int start_unstaged;    /* 1: the start could not be taken as stages;
				* the checkpoint-all stages were used instead */
};

/* Turns start (valid; any peak) into a plan of g that fits budget. *out
 * (caller frees with plan_free) is the plan with the least overflow found,
 * replayed, staged, strategy "repair". Returns 1 when *out fits, 0 when
 * the time ran out or no window could reduce the overflow (*out is then
 * over budget), -1 with err set on failure (or when start is not valid).
 * A start the stage matrices cannot express (a node computed for the first
 * time before an earlier one) is replaced by the checkpoint-all plan. st
 * may be NULL. */
int repair_plan(const struct graph *g, uint64_t budget, const struct plan *start,
		const struct repair_opts *o, struct plan **out, struct repair_stats *st,
		struct cm_error *err);

#endif

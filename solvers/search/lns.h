/* Large-neighbourhood search over the Checkmate model: from a fitting
 * plan, solve windows of stages (and of values) exactly around the
 * incumbent (solvers/window.h) and keep every cheaper plan that replays
 * within the budget. Anytime: it never returns a plan worse than its
 * start. */
#ifndef CM_LNS_H
#define CM_LNS_H

#include <stdint.h>

#include "../../plan/stages.h"
#include "../milp/backend/solver.h"

struct lns_opts {
	const struct solver_ops *ops; /* the backend of every window */
	double time_limit;        /* seconds in all; <= 0: until no pass gains */
	double window_time_limit; /* seconds per window; <= 0: 10 */
	int stage_window;         /* stages per window at first; <= 0: 8 */
	int node_window;          /* free values per window at most; <= 0: 10 */
	unsigned long long seed;  /* ties among values to free */
	uint64_t memory_limit;    /* bytes a window's solve may take at most
				   * (with the memory available); 0: the
				   * memory available alone */
	/* Called after every window with the incumbent (and the proven bound,
	 * when the last window covered the whole model); may be NULL. */
	void (*progress)(void *ctx, const struct solve_progress *p);
	void *ctx;
	/* Asked with halt_ctx before every window and pass: nonzero ends the
	 * search as its time limit would (solve_request's halt); may be
	 * NULL. */
	int (*halt)(void *halt_ctx);
	void *halt_ctx;
};

struct lns_stats {
	int windows;         /* windows solved */
	int improved;        /* of which gave a cheaper plan */
	int optimal;         /* of which proved the incumbent optimal in the window */
	int rejected;        /* of which gave a solution that did not replay
			      * cheaper and fitting (a model defect: expect 0) */
	int crashed;         /* of which the backend failed or died on (the
			      * search goes on, and stops with the error after
			      * three in a row) */
	int passes;          /* passes over the stages */
	int max_stage_window, max_node_window; /* the largest windows tried */
	double first_cost;   /* the start's cost */
	double final_cost;   /* the result's cost */
	double seconds;      /* wall time */
	double window_seconds; /* time in windows (build, solve, replay) */
	double t_within_2pct, t_within_1pct; /* seconds until within 2% / 1% of final_cost */
	int proven;          /* 1 when a window covering the whole model with
			      * every value free was solved to optimality:
			      * final_cost is then optimal */
	int repaired;        /* 1 when the start did not fit and was repaired */
	int repair_windows;  /* windows the repair solved */
	double t_fit;        /* seconds until the repaired start fit (0: it did) */
};

/* Improves the plan start of g at budget; *out (caller frees with
 * plan_free) is the best plan found, replayed, never costlier than start,
 * strategy "lns". A start over budget is first repaired into one that
 * fits (solvers/repair.h), within the same time limit. st (may be NULL)
 * says what was done. Returns 0; 1 when the start cannot be used
 * (invalid, not convertible to stages within budget, or over budget with
 * no repair found in time), an answer and not a failure: why (why_len
 * bytes, may be NULL) says what, *out is NULL, err untouched; -1 with err
 * set on failure. */
int lns_improve(const struct graph *g, uint64_t budget, const struct plan *start,
		const struct lns_opts *o, struct plan **out, struct lns_stats *st, char *why,
		size_t why_len, struct cm_error *err);

#endif

/* Kusumoto et al.'s dynamic programs over lower sets of the forward graph
 * ("A Graph Theoretic Framework of Recomputation Algorithms for
 * Memory-Efficient Backpropagation", NeurIPS 2019, Algorithm 1 of the
 * appendix): the DP picks an increasing sequence of lower sets, the boundary
 * values of each step are kept, the rest recomputed in the backward pass;
 * that choice is turned into our own plan of compute and free steps for the
 * whole training graph, and replayed by plan_simulate. docs/kusumoto.md
 * says how the paper's model is mapped onto ours. Library code: never
 * prints. */
#ifndef CM_KUSUMOTO_H
#define CM_KUSUMOTO_H

#include <stdint.h>

#include <stddef.h>

#include "../../graph/graph.h"
#include "../../plan/plan.h"

/* Positive returns of kusumoto_plan: answers without a plan, not
 * failures; its why says what. */
#define KUSUMOTO_UNSUPPORTED 1 /* the graph is outside the DP's domain */
#define KUSUMOTO_TOO_LARGE 2   /* exact: more lower sets than the cap */
#define KUSUMOTO_NO_PLAN 3     /* the DP found no sequence at any budget tried */

/* Default cap on the lower sets of the exact DP. */
#define KUSUMOTO_MAX_LOWER_SETS 20000L
/* Default resolution of the DP's time axis (units for the whole forward
 * cost). */
#define KUSUMOTO_TIME_STEPS 2000

struct kusumoto_opts {
	int exact;            /* 1: all lower sets; 0: the paper's pruned family */
	int memory_centric;   /* 1: the largest recomputation time that fits
			       * (max instead of min in the final pick) */
	int time_steps;       /* time axis resolution, <= 0 for the default */
	long max_lower_sets;  /* exact: refuse above this many, <= 0 for the default */
	double deadline;      /* cm_clock() at which the search ends with what it
			       * has (as a stop request does), 0 for none */
};

/* What a run did, for benchmarks and messages. */
struct kusumoto_stats {
	long lower_sets;      /* size of the family the DP ran over */
	int time_units;       /* the time axis holds 0 .. time_units */
	double unit;          /* cost of one time unit (1 when exact integers) */
	int dp_runs;          /* DP runs of the internal budget search */
	uint64_t dp_budget;   /* the DP's own budget for the plan returned */
	int blocks;           /* steps of the lower set sequence returned */
	double dp_cost;       /* the DP's forward + recomputation estimate (in
			       * cost units, discretized), for that plan */
};

/* The defaults: approximate, time-centric. */
void kusumoto_opts_init(struct kusumoto_opts *o);

/* Runs the DP on g for budget (total bytes, fixed memory included) and
 * appends the best plan it found to p (which should be empty); p's cost,
 * peak, budget and strategy are set from its replay. Since the DP's memory
 * model is not ours, the DP is run at several budgets of its own and the
 * cheapest plan that fits under plan_simulate is kept, or, when none
 * fits, the one with the lowest peak (the caller replays and sees it does
 * not fit). Returns 0 with a plan; KUSUMOTO_UNSUPPORTED, KUSUMOTO_TOO_LARGE
 * or KUSUMOTO_NO_PLAN with why (why_len bytes, may be NULL) saying what,
 * err untouched; -1 with err set on failure (out of memory). */
int kusumoto_plan(const struct graph *g, uint64_t budget, const struct kusumoto_opts *o,
		  struct plan *p, char *why, size_t why_len, struct cm_error *err);

/* kusumoto_plan, and what it did in *st. */
int kusumoto_run(const struct graph *g, uint64_t budget, const struct kusumoto_opts *o,
		 struct plan *p, struct kusumoto_stats *st, char *why, size_t why_len,
		 struct cm_error *err);

#endif

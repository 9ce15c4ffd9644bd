/* What a plan does, step by step and node by node, from its replay by the
 * simulator: memory in use over the steps, how often each node is
 * computed and what its recomputations cost. `checkmate show` draws it. */
#ifndef CM_PLAN_PROFILE_H
#define CM_PLAN_PROFILE_H

#include <stdint.h>

#include "sim.h"

struct profile {
	struct sim_result sim;  /* the replay's verdict, cost and peak */
	int nsteps;             /* steps of the plan */
	uint64_t *memory;       /* [nsteps]: device memory in use after each step */
	char *recompute;        /* [nsteps]: 1 when the step computes a value
				 * that was computed before */
	int peak_step;          /* first step at the peak (a compute or a fetch),
				 * -1 when there is none */
	int first_over;         /* first step over the budget, or -1 */
	int *computes;          /* [g->n]: how many times each node is computed */
	int ncomputes;          /* compute steps */
	int extra_computes;     /* computes beyond each node's first */
	double recompute_cost;  /* cost of those extra computes */
	int nrecomputed;        /* nodes computed more than once */
	int *by_cost;           /* [nrecomputed]: those nodes, the most costly
				 * recomputation first (ties: graph order) */
	double floor_cost;      /* the checkpoint-all cost: overhead 1 */
	uint64_t peak_all;      /* the checkpoint-all peak */
	uint64_t budget;        /* the budget it is judged against, or
				 * SIM_NO_BUDGET */
	int nfrees, noffloads, nfetches; /* steps of each other kind */
};

/* Replays p on g against budget (SIM_NO_BUDGET for none) and fills pr;
 * with copy, in time at its rates, offload and fetch steps allowed
 * (plan_simulate_copies: pr->sim has the time, the wait and the host
 * peak), else NULL. Returns 0 (release pr with profile_release, whatever
 * the verdict in pr->sim), or -1 with err set when out of memory. A plan
 * that does not replay (pr->sim.valid 0) has its memory and counts filled
 * up to the step at fault only. */
int profile_plan(const struct graph *g, const struct plan *p, uint64_t budget,
		 const struct sim_copy *copy, struct profile *pr, struct cm_error *err);
void profile_release(struct profile *pr);

/* Node k's recomputation cost: (computes - 1) x cost, 0 when computed
 * once. */
double profile_recompute_cost(const struct graph *g, const struct profile *pr, int k);

/* The steps cut into at most ncols columns of consecutive steps (one step
 * each when there are no more steps than columns): the highest memory of
 * each column into out[], which holds ncols values. Returns the number of
 * columns. */
int profile_columns(const struct profile *pr, int ncols, uint64_t *out);

/* The column of step i when nsteps steps are cut into ncols columns as
 * profile_columns cuts them. */
int profile_column_of(int nsteps, int ncols, int i);

#endif

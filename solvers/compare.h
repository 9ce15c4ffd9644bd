/* compare's policy: strategies side by side over budgets, each row of the
 * CSV as it comes, the best bound known at each budget shared by the rows
 * that have none of their own. Library code: it never prints; the command
 * writes the rows, the table and the plot. */
#ifndef CM_COMPARE_H
#define CM_COMPARE_H

#include "strategy.h"

struct compare_request {
	const struct strategy *const *columns; /* in the order of the output */
	int ncols;
	const uint64_t *budgets;
	int nb;
	/* Give every row a lower bound: the best that a column with a bound
	 * of its own found at that budget, else the LP relaxation's. */
	int bound;
	/* Solver settings and parameters that every solve copies (its
	 * strategy, budget and bound are set here). */
	const struct solve_request *settings;
	/* Told what is about to be solved ("ilp at budget 3.00 GiB (1 of
	 * 4)"), and handed each row in order; either may be NULL. row returns
	 * nonzero to stop with an error (err is then the caller's to set). */
	void (*note)(void *ctx, const char *what);
	int (*row)(void *ctx, const struct strategy_row *r);
	void *ctx;
	/* Worker processes that share the budgets (budget k goes to worker k
	 * mod jobs); the rows reach row in budget order all the same, as one
	 * process gives them. <= 1: this process alone. */
	int jobs;
};

/* Most worker processes of one compare. */
#define COMPARE_MAX_JOBS 16

struct compare_result {
	/* best[c * nb + bi]: the overhead of column c's cheapest plan that
	 * fits budget bi, -1 when none does, COMPARE_NOT_RUN when a stop
	 * request came first. */
	double *best;
	char *unsupported; /* [c]: the graph is outside column c's domain */
	/* bound[bi]: the best lower bound known at budget bi, as an overhead
	 * (the shared one of --bound, else the best of the columns that
	 * bring their own, as ilp and approx do), or -1 when none is. */
	double *bound;
	/* A stop request (common/stop.h) left rows without an answer: they
	 * went to row with status interrupted. */
	int interrupted;
};

#define COMPARE_NOT_RUN (-2.0)

/* Runs every column at every budget. After a stop request, the solve
 * under way ends with what it has (its row interrupted when that is no
 * plan) and every row after it is interrupted: one per column and budget.
 * Returns 0 (res filled; release it with compare_result_release), or -1
 * with err set. */
int compare_run(const struct graph *g, const struct compare_request *rq,
		struct compare_result *res, struct cm_error *err);
void compare_result_release(struct compare_result *res);

#endif

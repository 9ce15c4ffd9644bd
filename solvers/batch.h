/* The largest batch a strategy fits in a budget under a cost cap
 * (maxbatch). Library code: it never prints. */
#ifndef CM_BATCH_H
#define CM_BATCH_H

#include <stdint.h>

#include "strategy.h"

/* The largest batch tried: far beyond any budget for real graphs. */
#define MAXBATCH_LIMIT ((uint64_t)1 << 32)

struct batch_request {
	const char *strategy;
	uint64_t budget;    /* total bytes */
	double ratio;       /* cost cap, as a multiple of the checkpoint-all cost
			     * (with settings->copy, a time cap: the multiple
			     * of the checkpoint-all cost's time) */
	/* Solver settings (solver, time limit per solve, copy rates, ...)
	 * that each probe copies; its strategy, budget, cost cap and gap are
	 * ignored. */
	const struct solve_request *settings;
	/* A batch some plan is known to fit (an earlier strategy's answer), or
	 * 0: the search probes it first and, when it fits, goes up from there. */
	uint64_t seed;
};

/* What the search found for one strategy. */
struct batch_answer {
	const char *strategy;
	uint64_t batch;       /* largest batch that fits, 0 if none */
	int proven;           /* batch + 1 was shown not to fit */
	int capped;           /* the search stopped at MAXBATCH_LIMIT */
	int unsupported;      /* the strategy does not apply to the graph */
	int no_fit;           /* enum strategy_status of the last probe that did
			       * not fit: infeasible (proven), over_budget (the
			       * strategy's plans do not fit), no_plan (unknown) */
	int interrupted;      /* a stop request (common/stop.h) ended the search:
			       * batch is the largest found to fit before it */
	double cost, overhead, seconds;
	uint64_t peak;
	/* With settings->copy: the plan's replay in time at that batch, and
	 * its time over the checkpoint-all cost's time (what the cap holds). */
	int has_time;
	double time, wait, slowdown;
	uint64_t host_peak;
	char param[64], solver[32];
};

/* Does the strategy fit at batch B under the cap? 1 yes (figures in *ans),
 * 0 no (proven: a baseline's own plans, a proof that none fits, or ilp's
 * that the stage model has none, docs/model.md),
 * -2 unknown (time limit), -1 error with err set. The question is only
 * whether a plan fits: a solver stops at its first plan (gap 1), so the
 * cost in *ans is that plan's, not the least at B. */
int batch_fits(const struct graph *g, const struct batch_request *rq, uint64_t batch,
	       struct batch_answer *ans, struct cm_error *err);

/* The default cost cap, as a multiple of the checkpoint-all cost: one
 * extra forward pass, (2 x forward cost + backward cost) / total cost
 * (paper section 6.4); with copies, of its time. */
double batch_default_ratio(const struct graph *g);

/* Steps that double from the seed (or from 0) while the batch fits, then
 * bisection between the last batch that fits and the first that does not;
 * feasibility is monotone in the batch. An unknown answer
 * counts as "does not fit" and leaves the result unproven. A stop request
 * ends the search with what is known (ans->interrupted). 0, or -1 with
 * err set. */
int batch_search(const struct graph *g, const struct batch_request *rq,
		 struct batch_answer *ans, struct cm_error *err);

/* maxbatch's question for several strategies (the command's policy). */
struct batch_run_request {
	const struct strategy *const *strategies; /* in the order of the answers */
	int n;
	uint64_t budget;    /* total bytes */
	double ratio;       /* cost cap, as a multiple of the checkpoint-all
			     * cost; <= 0: batch_default_ratio */
	const struct solve_request *settings; /* as batch_request's */
	/* Told which strategy's search starts ("searching the largest batch
	 * for ilp"); may be NULL. */
	void (*note)(void *ctx, const char *what);
	void *ctx;
};

/* batch_search for each strategy in turn into ans[0 .. n): a solver's
 * search starts from the largest batch that the strategies before it
 * found to fit (the seed), so that it only has to go up from there. After
 * a stop request the strategies not yet searched are answered
 * "interrupted". Returns 0, or -1 with err set (ans then partly filled). */
int batch_run(const struct graph *g, const struct batch_run_request *rq,
	      struct batch_answer *ans, struct cm_error *err);

/* The CSV row of an answer (docs/formats.md, CSV columns): the batch's
 * plan, optimal when batch + 1 was shown not to fit; when none fits,
 * unsupported or the status of the last probe; interrupted when a stop
 * request cut the search short. */
void batch_row_of_answer(struct strategy_row *r, const struct graph *g, uint64_t budget,
			 const struct batch_answer *a);

#endif

/* The strategy layer: runs any strategy of SPEC 4 by name, replays its plan
 * and says what it found. Library code: it never prints. */
#ifndef CM_STRATEGY_H
#define CM_STRATEGY_H

#include <stddef.h>
#include <stdio.h>

#include "../plan/sim.h"
#include "remat.h"
#include "backend/solver.h"

#define STRATEGY_DEFAULT "ilp"
#define SOLVER_DEFAULT "cbc"

struct solve_request {
	const char *strategy; /* SPEC 4 name */
	uint64_t budget;      /* total bytes, fixed memory included */
	const char *solver;   /* MILP backend; NULL for SOLVER_DEFAULT */
	double time_limit;    /* seconds, <= 0 for none */
	double gap;           /* relative gap at which the solver may stop */
	int threads;          /* solver threads, 0 for its default */
	double cost_cap;      /* when > 0, only plans costing at most this count */
	FILE *lp_out;         /* when not NULL, the model is written here (LP format) */
	struct remat_opts model;
	unsigned long long seed; /* approx: randomized rounding's seed */
	int samples;          /* approx: randomized roundings per LP (0: default) */
	int bound;            /* baselines: bound the cost from below by the LP
			       * relaxation too (ilp and approx always do) */
	int lp_method;        /* approx and bound: enum lp_method */
	void (*progress)(void *ctx, const struct solve_progress *p);
	void *ctx;
};

struct solve_outcome {
	struct plan *plan;   /* the replayed plan, or NULL when none was found;
			      * owned, freed by strategy_outcome_release */
	struct sim_result sim;
	char status[32];     /* optimal, feasible, infeasible, timeout, unsupported */
	char why[512];       /* a reason to show with the status, or "" */
	char solver[32];     /* the backend that ran, or "" */
	char param[64];      /* the baseline's parameter point, or "" */
	double objective;    /* the solver's objective for its plan, when it gave one */
	double lower_bound;  /* proven bound on the cost, when has_lower_bound */
	int has_lower_bound;
	double seconds;      /* wall time of the strategy and the replay */
	int cols, rows, nnz; /* size of the MILP, when one was built */
};

/* Runs the request on g. A heuristic plan that replays over budget is kept
 * (its figures are informative) with status "infeasible". "optimal" only
 * when proven: by the solver with no gap left, or for a heuristic when its
 * cost equals the checkpoint-all cost, below which no plan goes. Returns 0,
 * or -1 with err set (unknown strategy or solver, solver failure, out of
 * memory, a strategy that produced an invalid plan). */
int strategy_solve(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err);
void strategy_outcome_release(struct solve_outcome *out);

/* The approx strategy (cli/approx.c): LP relaxations at (1 - eps) x budget
 * for a grid of eps, each rounded deterministically (thresholds across
 * (0, 1)) and randomly, R completed, plans replayed; the cheapest that fits
 * the real budget wins, and the LP value at the full budget is its lower
 * bound. As strategy_solve. */
int approx_run(const struct graph *g, const struct solve_request *rq,
	       struct solve_outcome *out, struct cm_error *err);

/* Builds the model of g at budget shrunk into rm and solves its LP
 * relaxation with ops (rq: LP method, progress, which names it label;
 * time_left seconds, <= 0 for none). Returns 1 with the solution in *res, 0 when
 * there is none (status in res), -1 with err set (rm then released).
 * Release rm and res after a 0 or 1. */
int strategy_lp_relaxation(const struct graph *g, const struct solve_request *rq,
			   const struct solver_ops *ops, uint64_t shrunk, double time_left,
			   const char *label, struct remat_model *rm, struct milp_result *res,
			   struct cm_error *err);

/* Solves the LP relaxation at rq->budget and records its value (or the
 * checkpoint-all floor, when higher) as out's lower bound: every plan that
 * fits the budget costs at least that much. Leaves out as it was when the
 * LP is infeasible or stopped at the time limit. Returns 0, or -1 with err
 * set. */
int strategy_lp_bound(const struct graph *g, const struct solve_request *rq,
		      struct solve_outcome *out, struct cm_error *err);

/* strategy_lp_bound at each of the n budgets at once (rq->budget is not
 * used): one model, built at the largest, its LPs solved from scratch as
 * one sweep from the largest budget down, shared by a process per core as
 * approx's grid, within rq->time_limit once per budget in all. bound[k] and
 * has[k] as lower_bound and has_lower_bound at budgets[k]. Progress names
 * how many are done. Returns 0, or -1 with err set. */
int strategy_lp_bounds(const struct graph *g, const struct solve_request *rq,
		       const uint64_t *budgets, int n, double *bound, int *has,
		       struct cm_error *err);

/* The MILP backend that rq names (or the default); NULL with err set when
 * there is no such backend. */
const struct solver_ops *strategy_backend(const struct solve_request *rq, struct cm_error *err);

/* Replays p into out (taking ownership) and records what it is; -1 with
 * err set when the plan is not valid, which is a bug of the strategy. */
int strategy_adopt(const struct graph *g, const char *strategy, uint64_t budget,
		   struct plan *p, struct solve_outcome *out, struct cm_error *err);

/* Sets the outcome's status (and its plan's). */
void strategy_set_status(struct solve_outcome *out, const char *status);

/* Records the size of the model the outcome's strategy built. */
void strategy_set_model(struct solve_outcome *out, const struct milp *m);

/* A proven lower bound on the cost of the plans that fit, as reported for
 * a plan of this cost: rounded by graph_round_bound, or the cost itself
 * when the plan fits and meets it (*proven then set: it is optimal). */
double strategy_meet_bound(const struct graph *g, double cost, int fits, double bound,
			   int *proven);

/* Records a proven lower bound on the cost of any plan that fits (rounded
 * by graph_round_bound) in the outcome and its plan; a fitting plan that
 * costs no more than the bound becomes "optimal". Set the status first. */
void strategy_set_bound(const struct graph *g, struct solve_outcome *out, double bound);

/* The strategy names, comma-separated, for messages and --help. */
void strategy_names(char *buf, size_t len);

#endif

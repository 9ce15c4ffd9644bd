/* The offload-dp and offload-ilp rows: the fastest keep, offload or
 * recompute plan of a training graph (solvers/search/policy.h), by the
 * dynamic program (chains) or by the MILP (solvers/milp/policy.h). Both need a
 * bandwidth; their optimum holds over that class only (docs/model.md). */
#include "strategy.h"
#include "milp/policy.h"
#include "search/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"

/* The most cells (nodes times forward nodes) of the class's memory rows:
 * 3 bytes each. */
#define POLICY_MAX_CELLS 20000000ull

/* The most states (40 bytes each, and room for four times as many while
 * a level is expanded) and sums of kept bytes (8 bytes) the dynamic
 * program keeps in all: segnet at 10 GiB takes 6 s and 560 MB. */
#define POLICY_MAX_STATES 10000000L

/* The class on g, or 0 with out unsupported (why said), -1 with err set. */
static int chain_of(const struct strategy *s, const struct graph *g,
		    const struct solve_request *rq, struct policy_chain *pc,
		    struct solve_outcome *out, struct cm_error *err)
{
	char why[256];
	int rc;

	if (rq->copy == NULL || (uint64_t)g->n * (uint64_t)graph_nforward(g) > POLICY_MAX_CELLS) {
		strategy_set_status(out, STATUS_UNSUPPORTED);
		snprintf(out->why, sizeof(out->why), rq->copy ? "%s: the graph is too large for "
			 "its memory rows" : "%s makes plans with copies: it needs a bandwidth "
			 "(solve --bandwidth)", s->name);
		return 0;
	}
	rc = policy_chain_init(pc, g, rq->copy, why, sizeof(why), err);
	if (rc == 0) {
		strategy_set_status(out, STATUS_UNSUPPORTED);
		snprintf(out->why, sizeof(out->why), "%s plans training graphs whose forward nodes "
			 "come first: %.200s", s->name, why);
	}
	return rc;
}

/* The plan of mode adopted into out and settled, its model time said. */
static int answer(const struct strategy *s, const struct graph *g,
		  const struct solve_request *rq, const struct policy_chain *pc,
		  const int *mode, const char *proof, struct solve_outcome *out,
		  struct cm_error *err)
{
	struct plan *p = policy_plan(pc, mode, err);
	double t = policy_time(pc, mode) * rq->copy->seconds_per_cost;

	if (p == NULL || strategy_adopt_copies(g, s->name, rq->budget, rq->copy, p, out, err))
		return -1;
	out->objective = t;
	strategy_settle(g, rq, "the plan of the class", 0, 0, out);
	if (out->status == STATUS_FEASIBLE || out->status == STATUS_OPTIMAL)
		snprintf(out->why, sizeof(out->why), "%s keep, offload or recompute plans "
			 "(docs/model.md): %.9g s; not a bound on plans outside them", proof, t);
	return 0;
}

/* No plan of the class: no_plan, which proves nothing outside it. */
static void none(struct solve_outcome *out, const char *what)
{
	strategy_set_status(out, STATUS_NO_PLAN);
	snprintf(out->why, sizeof(out->why), "%s; plans outside the keep, offload or recompute "
		 "class are not ruled out", what);
}

int strategy_run_offload_dp(const struct strategy *s, const struct graph *g,
			    const struct solve_request *rq, struct solve_outcome *out,
			    struct cm_error *err)
{
	struct policy_chain pc;
	int *mode = NULL, rc, gave_up = 0;
	double t;

	if ((rc = chain_of(s, g, rq, &pc, out, err)) <= 0)
		return rc;
	if ((mode = malloc((size_t)pc.nf * sizeof(int))) == NULL) {
		rc = cm_errorf(err, "out of memory");
		goto out;
	}
	rc = policy_dp(&pc, rq->budget, POLICY_MAX_STATES, strategy_deadline(rq), mode, &t,
		       &gave_up, err);
	if (rc == 1) {
		rc = answer(s, g, rq, &pc, mode, "the fastest of the", out, err);
	} else if (rc == POLICY_UNORDERED) {
		strategy_set_status(out, STATUS_UNSUPPORTED);
		snprintf(out->why, sizeof(out->why), "%s plans chains only: the forward is not a "
			 "chain, or the backward reads it out of order (offload-ilp covers this graph)",
			 s->name);
		rc = 0;
	} else if (rc == 0) {
		none(out, gave_up ? "the dynamic program gave up (too many states, or the "
		     "time limit)" : "no plan of the class fits");
	}
out:
	free(mode);
	policy_chain_release(&pc);
	return rc;
}

/* A start for the MILP into mode: the fastest that fits of every moded
 * value kept (the checkpoint-all plan), offloaded, or prefetched where it
 * can be (else offloaded). 1 when one fits, else 0. */
static int start_modes(const struct policy_chain *pc, uint64_t budget, int *mode)
{
	int *m = malloc((size_t)pc->nf * sizeof(int)), found = 0;
	double best = 0;

	for (int q = POLICY_KEEP; m && q <= POLICY_PREFETCH; q++) {
		double t;

		if (q == POLICY_RECOMPUTE)
			continue;
		for (int j = 0; j < pc->nf; j++)
			m[j] = !pc->moded[j] ? POLICY_FIXED :
			       q == POLICY_PREFETCH && !pc->prefetchable[j] ? POLICY_OFFLOAD : q;
		if (policy_peak(pc, m) > budget ||
		    (pc->host_budget && policy_host(pc, m) > pc->host_budget))
			continue;
		t = policy_time(pc, m);
		if (!found || t < best) {
			memcpy(mode, m, (size_t)pc->nf * sizeof(int));
			best = t;
			found = 1;
		}
	}
	free(m);
	return found;
}

/* Solves pm with rq's backend into res, once more with the other backend
 * in the time left when the first one's process dies (as ilp does); the
 * backend that answered into out. No progress reports: they read the
 * objective as a cost. */
static int solve_model(const struct solve_request *rq, const struct policy_model *pm,
		       const double *start, struct milp_result *res, struct solve_outcome *out,
		       struct cm_error *err)
{
	const struct solver_ops *ops = strategy_backend(rq, err);
	struct solve_opts so = { .time_limit = rq->time_limit, .gap = rq->gap,
				 .threads = rq->threads, .lp_method = rq->lp_method,
				 .start = start, .halt = rq->halt, .halt_ctx = rq->halt_ctx,
				 .memory_cap = rq->memory_limit };
	double t0 = cm_clock();
	int rc;

	if (ops == NULL)
		return -1;
	rc = solver_solve(ops, &pm->milp, &so, res, err);
	if (rc == SOLVER_CRASHED) {
		ops = solver_find(ops == &solver_cbc ? "glpk" : "cbc");
		if (so.time_limit > 0)
			so.time_limit = so.time_limit - (cm_clock() - t0) > 0.01 ?
					so.time_limit - (cm_clock() - t0) : 0.01;
		milp_result_release(res);
		rc = solver_solve(ops, &pm->milp, &so, res, err);
	}
	snprintf(out->solver, sizeof(out->solver), "%s", ops->name);
	return rc ? -1 : 0;
}

int strategy_run_offload_ilp(const struct strategy *s, const struct graph *g,
			     const struct solve_request *rq, struct solve_outcome *out,
			     struct cm_error *err)
{
	struct policy_chain pc;
	struct policy_model pm = { 0 };
	struct milp_result res = { 0 };
	int *mode = NULL, rc;
	double *start = NULL;
	char proof[160];

	if ((rc = chain_of(s, g, rq, &pc, out, err)) <= 0)
		return rc;
	rc = -1;
	if ((mode = malloc((size_t)pc.nf * sizeof(int))) == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (policy_build(&pc, rq->budget, &pm, err))
		goto out;
	strategy_set_model(out, &pm.milp);
	if (rq->lp_out && milp_write_lp(&pm.milp, rq->lp_out)) {
		cm_errorf(err, "writing the LP file failed");
		goto out;
	}
	if (pm.hopeless) {
		none(out, "a memory row is over the budget whatever the modes");
		rc = 0;
		goto out;
	}
	if (start_modes(&pc, rq->budget, mode) && (start = policy_point(&pm, mode)) == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (solve_model(rq, &pm, start, &res, out, err))
		goto out;
	rc = 0;
	if (res.x == NULL) {
		if (res.status == MILP_INFEASIBLE)
			none(out, "the solver proved that no plan of the class fits");
		else
			strategy_set_status(out, STATUS_TIMEOUT);
		goto out;
	}
	policy_modes_of(&pm, res.x, mode);
	if (res.status == MILP_OPTIMAL)
		snprintf(proof, sizeof(proof), "proven the fastest of the");
	else
		snprintf(proof, sizeof(proof), "not proven the fastest (bound %.9g s) of the",
			 (res.has_bound ? res.bound * pm.scale : 0) * rq->copy->seconds_per_cost);
	rc = answer(s, g, rq, &pc, mode, proof, out, err);
out:
	free(start);
	milp_result_release(&res);
	policy_model_release(&pm);
	free(mode);
	policy_chain_release(&pc);
	return rc;
}

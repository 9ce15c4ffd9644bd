#include "strategy.h"
#include "../common/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/num.h"
#include "../plan/stages.h"

void strategy_names(char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "ilp, approx");

	for (int i = 0; i < baseline_count && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, ", %s", baseline_table[i].name);
}

void strategy_outcome_release(struct solve_outcome *out)
{
	plan_free(out->plan);
	out->plan = NULL;
}

void strategy_set_status(struct solve_outcome *out, const char *status)
{
	snprintf(out->status, sizeof(out->status), "%s", status);
	if (out->plan)
		snprintf(out->plan->status, sizeof(out->plan->status), "%s", status);
}

int strategy_adopt(const struct graph *g, const char *strategy, uint64_t budget,
		 struct plan *p, struct solve_outcome *out, struct cm_error *err)
{
	out->plan = p;
	if (plan_simulate(g, p, budget, &out->sim, err))
		return -1;
	if (!out->sim.valid)
		return cm_errorf(err, "internal error: strategy %s made an invalid plan: %s",
				 strategy, out->sim.why);
	snprintf(p->strategy, sizeof(p->strategy), "%s", strategy);
	p->budget = budget;
	p->cost = out->sim.cost;
	p->peak = out->sim.peak;
	return 0;
}

void strategy_set_model(struct solve_outcome *out, const struct milp *m)
{
	out->cols = m->ncols;
	out->rows = m->nrows;
	out->nnz = m->nnz;
}

double strategy_meet_bound(const struct graph *g, double cost, int fits, double bound,
			   int *proven)
{
	bound = graph_round_bound(g, bound);
	/* A bound that the cost meets proves the plan optimal. */
	*proven = fits && num_le(cost, bound);
	return *proven ? cost : bound;
}

void strategy_set_bound(const struct graph *g, struct solve_outcome *out, double bound)
{
	int proven;

	bound = strategy_meet_bound(g, out->plan ? out->sim.cost : 0, out->plan && out->sim.fits,
				    bound, &proven);
	if (proven && strcmp(out->status, "feasible") == 0)
		strategy_set_status(out, "optimal");
	out->has_lower_bound = 1;
	out->lower_bound = bound;
	if (out->plan) {
		out->plan->has_lower_bound = 1;
		out->plan->lower_bound = bound;
	}
}

static int run_baseline(const struct graph *g, const struct baseline *b,
			const struct solve_request *rq, struct solve_outcome *out,
			struct cm_error *err)
{
	struct plan *p;
	int rc = baseline_best(b, g, rq->budget, &p, &out->sim, out->param,
			       sizeof(out->param), err);

	if (rc == BASELINE_UNSUPPORTED) {
		strategy_set_status(out, "unsupported");
		snprintf(out->why, sizeof(out->why), "%s", err->msg);
		return 0;
	}
	if (rc || strategy_adopt(g, b->name, rq->budget, p, out, err))
		return -1;
	if (out->sim.fits && rq->cost_cap > 0 && !num_le(out->sim.cost, rq->cost_cap)) {
		strategy_set_status(out, "infeasible");
		snprintf(out->why, sizeof(out->why), "%s's cheapest plan that fits costs %.17g, over the cap %.17g",
			 b->name, out->sim.cost, rq->cost_cap);
	} else if (!out->sim.fits) {
		strategy_set_status(out, "infeasible");
		snprintf(out->why, sizeof(out->why), "%s%s%s%s peaks at %llu, over the budget %llu",
			 b->name, out->param[0] ? " (at best: " : "", out->param,
			 out->param[0] ? ")" : "", (unsigned long long)out->sim.peak,
			 (unsigned long long)rq->budget);
	} else if (num_le(out->sim.cost, graph_total_cost(g))) {
		strategy_set_status(out, "optimal");
		strategy_set_bound(g, out, graph_total_cost(g));
	} else {
		strategy_set_status(out, "feasible");
	}
	return 0;
}

/* The plan of stage matrices whose S is read from a MILP solution. */
static struct plan *plan_of_solution(const struct graph *g, const struct remat_model *rm,
				     const double *x, struct cm_error *err)
{
	struct stages st;
	struct plan *p;

	if (stages_init(&st, g->n, err))
		return NULL;
	remat_stages(rm, g, x, &st);
	stages_drop_unused(g, &st);
	p = plan_new();
	if (p == NULL || plan_from_stages(g, &st, p, err)) {
		if (p == NULL)
			cm_errorf(err, "out of memory");
		plan_free(p);
		p = NULL;
	}
	stages_release(&st);
	return p;
}

/* The cheapest plan of any baseline that fits, as a point of the model, to
 * start the solver from. Returns a malloc'd point, or NULL when no baseline
 * fits (or its plan is not a point of the model). */
static double *warm_start(const struct graph *g, const struct remat_model *rm,
			  uint64_t budget)
{
	struct plan *best = NULL;
	struct sim_result best_sim = { 0 };
	struct stages st;
	double *x = NULL;
	char param[64];

	for (int i = 0; i < baseline_count; i++) {
		struct plan *p;
		struct sim_result r;
		struct cm_error err;

		if (baseline_best(&baseline_table[i], g, budget, &p, &r, param, sizeof(param),
				  &err))
			continue;
		if (r.fits && (best == NULL || r.cost < best_sim.cost)) {
			plan_free(best);
			best = p;
			best_sim = r;
		} else {
			plan_free(p);
		}
	}
	if (best == NULL || stages_init(&st, g->n, NULL))
		goto out;
	x = malloc((size_t)rm->milp.ncols * sizeof(double) + 1);
	if (x && (stages_from_plan(g, best, &st) || stages_drop_unused(g, &st) < 0 ||
		  remat_point(rm, g, &st, x))) {
		free(x);
		x = NULL;
	}
	stages_release(&st);
out:
	plan_free(best);
	return x;
}

const struct solver_ops *strategy_backend(const struct solve_request *rq, struct cm_error *err)
{
	const struct solver_ops *ops = solver_find(rq->solver ? rq->solver : SOLVER_DEFAULT);
	char names[128];

	if (ops == NULL) {
		solver_names(names, sizeof(names));
		cm_errorf(err, "unknown solver '%s' (built: %s)", rq->solver, names);
	}
	return ops;
}

static int run_ilp(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err)
{
	const struct solver_ops *ops = strategy_backend(rq, err);
	struct remat_model rm;
	struct milp_result res = { 0 };
	struct solve_opts so = { .time_limit = rq->time_limit, .gap = rq->gap,
				 .threads = rq->threads, .lp_method = rq->lp_method,
				 .progress = rq->progress,
				 .ctx = rq->ctx };
	double *start = NULL;
	char crash[256] = "";
	int rc = -1;

	if (ops == NULL)
		return -1;
	snprintf(out->solver, sizeof(out->solver), "%s", ops->name);
	{
		struct remat_opts mo = rq->model;

		if (rq->cost_cap > 0)
			mo.cost_cap = rq->cost_cap;
		if (remat_build(g, rq->budget, &mo, &rm, err))
			return -1;
	}
	strategy_set_model(out, &rm.milp);
	if (rq->lp_out && milp_write_lp(&rm.milp, rq->lp_out)) {
		cm_errorf(err, "writing the LP file failed");
		goto out;
	}
	start = warm_start(g, &rm, rq->budget);
	so.start = start;
	rc = solver_solve(ops, &rm.milp, &so, &res, err);
	if (rc == SOLVER_CRASHED) {
		/* Seen with Cbc 2.10.8: an assertion in Clp's pricing on a model
		 * that the cbc program and GLPK solve. The other backend gets the
		 * same model; the answer says so. */
		const struct solver_ops *other = solver_find(ops == &solver_cbc ? "glpk" : "cbc");

		snprintf(crash, sizeof(crash), "%.200s; solved with %s instead", err->msg,
			 other->name);
		ops = other;
		snprintf(out->solver, sizeof(out->solver), "%s", ops->name);
		rc = solver_solve(ops, &rm.milp, &so, &res, err);
	}
	if (rc) {
		rc = -1;
		goto out;
	}
	rc = -1;
	if (res.status == MILP_INFEASIBLE) {
		strategy_set_status(out, "infeasible");
		snprintf(out->why, sizeof(out->why), "the solver proved that no plan fits");
	} else if (res.x != NULL || start != NULL) {
		const double *x = res.x ? res.x : start;
		struct plan *p = plan_of_solution(g, &rm, x, err);

		if (p == NULL || strategy_adopt(g, "ilp", rq->budget, p, out, err))
			goto out;
		snprintf(p->solver, sizeof(p->solver), "%s", ops->name);
		out->objective = res.x ? res.objective : milp_objective(&rm.milp, start);
		if (!out->sim.fits) {
			cm_errorf(err, "internal error: the solver's plan replays over budget: %s",
				  out->sim.why);
			goto out;
		}
		if (res.status == MILP_OPTIMAL && res.x &&
		    (!res.has_bound || num_le(out->sim.cost, res.bound) ||
		     (rq->gap <= 0 && num_le(out->sim.cost, res.objective)))) {
			strategy_set_status(out, "optimal");
			strategy_set_bound(g, out, out->sim.cost);
		} else {
			strategy_set_status(out, "feasible");
			if (res.has_bound)
				strategy_set_bound(g, out, res.bound);
			if (res.x == NULL)
				snprintf(out->why, sizeof(out->why),
					 "time limit: the solver found nothing better than the best baseline");
		}
	} else {
		strategy_set_status(out, "timeout");
		snprintf(out->why, sizeof(out->why), "no plan found within the time limit");
		if (res.has_bound)
			strategy_set_bound(g, out, res.bound);
	}
	if (crash[0]) {
		char why[sizeof(out->why)];

		snprintf(why, sizeof(why), "%s", out->why);
		snprintf(out->why, sizeof(out->why), "%.250s%s%s", why, why[0] ? "; " : "", crash);
	}
	rc = 0;
out:
	milp_result_release(&res);
	free(start);
	remat_release(&rm);
	return rc;
}

int strategy_solve(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err)
{
	const struct baseline *b = baseline_find(rq->strategy);
	uint64_t lb = graph_lower_bound(g);
	double t0 = cm_clock();
	char names[256];
	int rc;

	memset(out, 0, sizeof(*out));
	if (b == NULL && strcmp(rq->strategy, "ilp") != 0 && strcmp(rq->strategy, "approx") != 0) {
		strategy_names(names, sizeof(names));
		return cm_errorf(err, "unknown strategy '%s' (known: %s)", rq->strategy, names);
	}
	if (rq->budget < lb) {
		strategy_set_status(out, "infeasible");
		snprintf(out->why, sizeof(out->why),
			 "budget %llu is below %llu, the least any plan needs",
			 (unsigned long long)rq->budget, (unsigned long long)lb);
		out->seconds = cm_clock() - t0;
		return 0;
	}
	rc = b ? run_baseline(g, b, rq, out, err) :
	     strcmp(rq->strategy, "ilp") == 0 ? run_ilp(g, rq, out, err) :
	     approx_run(g, rq, out, err);
	/* A baseline's bound, when asked for: an optimal one has its own. */
	if (rc == 0 && b && rq->bound && !out->has_lower_bound &&
	    strcmp(out->status, "unsupported") != 0)
		rc = strategy_lp_bound(g, rq, out, err);
	out->seconds = cm_clock() - t0;
	if (rc)
		strategy_outcome_release(out);
	return rc;
}

/* The ilp row: the Checkmate MILP (solvers/remat.c) solved by a backend,
 * started from the best heuristic's plan; with a bandwidth, the stage
 * model with copies (docs/model.md), started from the same plan. */
#include "strategy.h"
#include "heuristic.h"
#include "memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/num.h"
#include "../plan/stages.h"

/* The plan of stage matrices whose S (and with copies F and O) is read
 * from a MILP solution. */
static struct plan *plan_of_solution(const struct graph *g, const struct remat_model *rm,
				     const double *x, struct cm_error *err)
{
	struct stages st;
	struct plan *p;

	if (stages_init(&st, g->n, err) || (rm->cf && stages_init_copies(&st, err)))
		return NULL;
	remat_stages(rm, g, x, &st);
	/* With copies, a value kept to be offloaded is not read: kept. */
	if (rm->cf == NULL)
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

/* The plan to start the solver from: rq->start, or else the cheapest
 * heuristic plan that fits (into *best, which the caller frees), or NULL
 * when none fits. */
static const struct plan *start_plan(const struct graph *g, const struct solve_request *rq,
				     struct plan **best)
{
	struct sim_result sim;

	*best = rq->start ? NULL : strategy_best_heuristic(g, rq, &sim);
	return rq->start ? rq->start : *best;
}

/* from as a point of the model: a malloc'd point, or NULL when from is
 * NULL or not a point of the model. */
static double *start_point(const struct graph *g, const struct remat_model *rm,
			   const struct plan *from)
{
	struct stages st;
	double *x = NULL;

	if (from == NULL || stages_init(&st, g->n, NULL))
		return NULL;
	x = malloc((size_t)rm->milp.ncols * sizeof(double) + 1);
	if (x && (stages_from_plan(g, from, &st) || stages_drop_unused(g, &st) < 0 ||
		  remat_point(rm, g, &st, x))) {
		free(x);
		x = NULL;
	}
	stages_release(&st);
	return x;
}

/* Does from fit the budget within the cost cap? 1 yes (its replayed cost
 * in *cost), 0 no (or from NULL), -1 error with err set. */
static int start_fits(const struct graph *g, const struct solve_request *rq,
		      const struct plan *from, double *cost, struct cm_error *err)
{
	struct sim_result sim;

	if (from == NULL)
		return 0;
	if (plan_simulate(g, from, rq->budget, &sim, err))
		return -1;
	*cost = sim.cost;
	return sim.fits && (rq->cost_cap <= 0 || num_le(sim.cost, rq->cost_cap));
}

/* Answers with a copy of from, the plan the solver was started from,
 * status feasible (or no_plan when it does not fit), why saying how it
 * came to answer. 0, or -1 with err set. */
static int take_start_plan(const struct graph *g, const struct solve_request *rq,
			   const struct plan *from, const char *why,
			   struct solve_outcome *out, struct cm_error *err)
{
	struct plan *p = plan_new();

	if (p == NULL)
		return cm_errorf(err, "out of memory");
	for (int k = 0; k < from->n; k++)
		if (plan_push(p, (enum plan_op)from->steps[k].op, from->steps[k].node,
			      from->steps[k].stage)) {
			plan_free(p);
			return cm_errorf(err, "out of memory");
		}
	snprintf(out->param, sizeof(out->param), "plan=%.40s", from->strategy);
	if (strategy_adopt(g, "ilp", rq->budget, p, out, err))
		return -1;
	strategy_set_status(out, out->sim.fits ? STATUS_FEASIBLE : STATUS_NO_PLAN);
	snprintf(out->why, sizeof(out->why), "%.40s's plan: %s", from->strategy, why);
	if (out->sim.fits) /* every plan pays the checkpoint-all cost */
		strategy_set_bound(g, out, graph_total_cost(g));
	return 0;
}

/* The model's frontier-advancing stages compute node t first in stage t.
 * A plan outside it (first computes out of file order, as dtr's may be)
 * can cost less than the model's optimum, or fit where the model has no
 * plan: then it is the answer, and the model's proof and bound, which do
 * not cover it, are dropped. 0, or -1 with err set. */
static int prefer_outside(const struct graph *g, const struct solve_request *rq,
			  const struct plan *from, struct solve_outcome *out,
			  struct cm_error *err)
{
	double cost;
	int rc = start_fits(g, rq, from, &cost, err);
	const char *why = out->status == STATUS_INFEASIBLE ?
		"outside the stage model, which has no plan at this budget" :
		out->plan ? "outside the stage model, cheaper than its answer" :
		"outside the stage model; the solver found no plan in time";

	/* With copies, in time (from has none: its time is its cost's). */
	if (rc <= 0 || (out->plan && out->sim.fits && !num_lt(cost, strategy_capped(rq, &out->sim))))
		return rc < 0 ? -1 : 0;
	plan_free(out->plan);
	out->plan = NULL;
	out->has_lower_bound = 0;
	return take_start_plan(g, rq, from, why, out, err);
}

/* Solves with ops, and once more with the other backend, in the time left,
 * when ops' process dies before its time limit (seen with Cbc 2.10.8: an
 * assertion in Clp's pricing on a model that the cbc program and GLPK
 * solve); crash then says so. Returns as solver_solve, *ops the backend
 * that answered. */
static int solve_or_retry(const struct solver_ops **ops, const struct milp *m,
			  const struct solve_opts *so, struct milp_result *res, char *crash,
			  size_t len, struct cm_error *err)
{
	double t0 = cm_clock();
	int rc = solver_solve(*ops, m, so, res, err);

	if (rc == SOLVER_CRASHED) {
		const struct solver_ops *other = solver_find(*ops == &solver_cbc ? "glpk" : "cbc");
		struct solve_opts again = *so;

		snprintf(crash, len, "%.200s; solved with %s instead", err->msg, other->name);
		*ops = other;
		if (so->time_limit > 0)
			again.time_limit = fmax(so->time_limit - (cm_clock() - t0), 0.01);
		rc = solver_solve(*ops, m, &again, res, err);
	}
	return rc ? -1 : 0;
}

/* With copies: the plan's replay is out's, in time. The model's objective
 * bounds its plan's time from above, and its optimum or bound are the
 * model's only (not a bound on other plans): said in why; status feasible
 * (strategy_solve makes it optimal when the time meets a bound that holds
 * for every plan). 0, or -1 with err set. */
static int copy_answer(const struct solve_request *rq, const struct remat_model *rm,
		       const struct milp_result *res, struct solve_outcome *out,
		       struct cm_error *err)
{
	double s = rm->time_unit * rq->copy->seconds_per_cost;

	/* The replay runs no later than the model's clocks (docs/model.md). */
	if (out->sim.time > out->objective * s * (1 + 1e-6) + 1e-12)
		return cm_errorf(err, "internal error: the stage model with copies bounds its "
				 "plan's time by %.9g s, the replay takes %.9g s",
				 out->objective * s, out->sim.time);
	strategy_set_status(out, STATUS_FEASIBLE);
	if (res->x && res->status == MILP_OPTIMAL)
		snprintf(out->why, sizeof(out->why), "proven the least time bound of the stage model "
			 "with copies (docs/model.md): %.9g s; the plan replays in %.9g s; not a "
			 "bound on other plans", out->objective * s, out->sim.time);
	else if (res->has_bound)
		snprintf(out->why, sizeof(out->why), "the stage model with copies: time bound "
			 "%.9g s, the solver's bound on the model %.9g s; not a bound on other "
			 "plans", out->objective * s, res->bound * s);
	else
		snprintf(out->why, sizeof(out->why), "the stage model with copies: time bound "
			 "%.9g s; not a bound on other plans", out->objective * s);
	return 0;
}

/* Describes the solver's answer in out: the plan of its solution (or of the
 * warm start it did not better), its status and bound. 0, or -1 with err
 * set. */
static int take_answer(const struct graph *g, const struct solve_request *rq,
		       const struct remat_model *rm, const struct milp_result *res,
		       const double *start, const struct plan *from, struct solve_outcome *out,
		       struct cm_error *err)
{
	const double *x = res->x ? res->x : start;
	struct plan *p;

	if (x == NULL && res->stopped && from)
		return take_start_plan(g, rq, from, "the solver was stopped before a plan of its own",
				       out, err);
	if (res->status == MILP_INFEASIBLE) {
		/* The model's proof only: strategy_run_ilp looks further. */
		strategy_set_status(out, STATUS_INFEASIBLE);
		return 0;
	}
	if (x == NULL) {
		/* Stopped: strategy_solve says so (status no_plan). */
		strategy_set_status(out, res->stopped ? STATUS_NO_PLAN : STATUS_TIMEOUT);
		if (!res->stopped)
			snprintf(out->why, sizeof(out->why), "no plan found within the time limit");
		if (res->has_bound && !rq->copy)
			strategy_set_bound(g, out, res->bound);
		return 0;
	}
	p = plan_of_solution(g, rm, x, err);
	if (p == NULL || strategy_adopt_copies(g, "ilp", rq->budget, rq->copy, p, out, err))
		return -1;
	snprintf(p->solver, sizeof(p->solver), "%s", out->solver);
	out->objective = res->x ? res->objective : milp_objective(&rm->milp, start);
	if (!out->sim.fits)
		return cm_errorf(err, "internal error: the solver's plan replays over budget: %s",
				 out->sim.why);
	if (rq->copy)
		return copy_answer(rq, rm, res, out, err);
	if (res->status == MILP_OPTIMAL && res->x &&
	    (!res->has_bound || num_le(out->sim.cost, res->bound) ||
	     (rq->gap <= 0 && num_le(out->sim.cost, res->objective)))) {
		strategy_set_status(out, STATUS_OPTIMAL);
		strategy_set_bound(g, out, out->sim.cost);
		return 0;
	}
	strategy_set_status(out, STATUS_FEASIBLE);
	/* The solver's bound, or the checkpoint-all cost that every plan pays
	 * when that is higher: optimal when the plan meets it. */
	strategy_set_bound(g, out, res->has_bound && res->bound > graph_total_cost(g) ?
				   res->bound : graph_total_cost(g));
	if (res->x == NULL)
		snprintf(out->why, sizeof(out->why), "%s", res->stopped ?
			 "the solver's warm start (the best heuristic's plan)" :
			 "time limit: the solver found nothing better than the best baseline");
	return 0;
}

int strategy_run_ilp(const struct strategy *s, const struct graph *g,
		     const struct solve_request *rq, struct solve_outcome *out,
		     struct cm_error *err)
{
	const struct solver_ops *ops = strategy_backend(rq, err);
	struct remat_opts mo = rq->model;
	struct remat_model rm;
	struct remat_size sz;
	struct milp_result res = { 0 };
	struct solve_opts so = { .time_limit = rq->time_limit, .gap = rq->gap,
				 .threads = rq->threads, .lp_method = rq->lp_method,
				 .progress = rq->progress, .ctx = rq->ctx,
				 .halt = rq->halt, .halt_ctx = rq->halt_ctx,
				 .memory_cap = rq->memory_limit };
	double *start = NULL;
	struct plan *best = NULL;
	const struct plan *from;
	char crash[256] = "";
	double cost, t0 = cm_clock();
	int rc = -1, any;

	(void)s;
	if (ops == NULL)
		return -1;
	snprintf(out->solver, sizeof(out->solver), "%s", ops->name);
	from = rq->gap >= 1 ? start_plan(g, rq, &best) : NULL;
	if ((any = start_fits(g, rq, from, &cost, err)) != 0) {
		/* Any plan is within a relative gap of 1: no model to build. */
		rc = any < 0 ? -1 : take_start_plan(g, rq, from, "within gap 1, no MILP solved",
						    out, err);
		plan_free(best);
		return rc;
	}
	if (rq->cost_cap > 0)
		mo.cost_cap = rq->cost_cap;
	mo.copy = rq->copy;
	remat_size(g, &mo, &sz);
	if (!strategy_check_memory(rq, "the MILP", &sz, 0, out) ||
	    remat_build(g, rq->budget, &mo, &rm, err)) {
		plan_free(best);
		return out->status == STATUS_UNSUPPORTED ? 0 : -1; /* too large, or err */
	}
	strategy_set_model(out, &rm.milp);
	if (rq->lp_out && milp_write_lp(&rm.milp, rq->lp_out)) {
		cm_errorf(err, "writing the LP file failed");
		goto out;
	}
	if (from == NULL)
		from = start_plan(g, rq, &best);
	so.start = start = start_point(g, &rm, from);
	if (solve_or_retry(&ops, &rm.milp, &so, &res, crash, sizeof(crash), err))
		goto out;
	snprintf(out->solver, sizeof(out->solver), "%s", ops->name);
	if (take_answer(g, rq, &rm, &res, start, from, out, err) ||
	    prefer_outside(g, rq, from, out, err))
		goto out;
	if (out->status == STATUS_INFEASIBLE)
		strategy_model_has_none(g, rq, strategy_time_left(rq, t0),
					"the solver proved that the stage model has no plan", out);
	if (crash[0]) {
		char why[sizeof(out->why)];

		snprintf(why, sizeof(why), "%s", out->why);
		snprintf(out->why, sizeof(out->why), "%.250s%s%s", why, why[0] ? "; " : "", crash);
	}
	rc = 0;
out:
	milp_result_release(&res);
	free(start);
	plan_free(best);
	remat_release(&rm);
	return rc;
}

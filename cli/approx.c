/* The paper's approximation (section 5, Algorithm 2, appendix D): the LP
 * relaxation at a budget shrunk by eps, its fractional S rounded in two
 * phases (S rounded, then the cheapest R for it), every candidate replayed
 * at the real budget. Instead of the paper's fixed eps = 0.1, a grid of eps
 * is tried (appendix D suggests a search), and each LP is rounded both
 * deterministically at thresholds across (0, 1) and at random. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/clock.h"
#include "../graph/num.h"
#include "../plan/stages.h"
#include "strategy.h"

/* eps = 0 first (its LP value is the bound), then the paper's 0.1, then
 * outward from it: a time limit that ends the search early cuts the eps
 * least likely to matter. */
static const double eps_grid[] = { 0, 0.1, 0.05, 0.2, 0.02, 0.3, 0.5 };
static const double thresholds[] = { 0.5, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9 };
#define APPROX_SAMPLES 16

/* splitmix64: a small seeded generator, the same stream on every machine. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Rounds S* (threshold, or at random when threshold < 0), completes R,
 * replays at budget; keeps the plan in *best when it fits and is cheaper. */
static int try_rounding(const struct graph *g, const double *sstar, double threshold,
			uint64_t *rng, uint64_t budget, struct stages *st,
			struct plan **best, double *best_cost, struct cm_error *err)
{
	struct plan *p;
	struct sim_result r;
	int n = g->n;

	for (int t = 0; t < n; t++)
		for (int i = 0; i < n; i++) {
			double v = sstar[(size_t)t * (size_t)n + (size_t)i];
			double u = threshold >= 0 ? threshold :
				   (double)(next_random(rng) >> 11) / 9007199254740992.0;

			STAGE_S(st, t, i) = i < t && v > 0 && v >= u && v > 1e-9;
		}
	stages_drop_unused(g, st);
	p = plan_new();
	if (p == NULL || plan_from_stages(g, st, p, err) ||
	    plan_simulate(g, p, budget, &r, err)) {
		plan_free(p);
		return p ? -1 : cm_errorf(err, "out of memory");
	}
	if (!r.valid) {
		plan_free(p);
		return cm_errorf(err, "internal error: a rounded plan is invalid: %s", r.why);
	}
	if (r.fits && (*best == NULL || r.cost < *best_cost)) {
		plan_free(*best);
		*best = p;
		*best_cost = r.cost;
	} else {
		plan_free(p);
	}
	return 0;
}

int strategy_lp_relaxation(const struct graph *g, const struct solve_request *rq,
			   const struct solver_ops *ops, uint64_t shrunk, double time_left,
			   const char *label, struct remat_model *rm, struct milp_result *res,
			   struct cm_error *err)
{
	struct solve_opts so = { .time_limit = time_left, .relaxation = 1,
				 .lp_method = rq->lp_method, .label = label,
				 .progress = rq->progress, .ctx = rq->ctx };

	if (remat_build(g, shrunk, &rq->model, rm, err))
		return -1;
	if (solver_solve(ops, &rm->milp, &so, res, err)) {
		remat_release(rm);
		return -1;
	}
	return res->status == MILP_OPTIMAL && res->x != NULL;
}

int strategy_lp_bound(const struct graph *g, const struct solve_request *rq,
		      struct solve_outcome *out, struct cm_error *err)
{
	const struct solver_ops *ops = solver_find(rq->solver ? rq->solver : SOLVER_DEFAULT);
	struct milp_result res = { 0 };
	struct remat_model rm;
	char names[128];
	int got;

	if (ops == NULL) {
		solver_names(names, sizeof(names));
		return cm_errorf(err, "unknown solver '%s' (built: %s)", rq->solver, names);
	}
	if (rq->budget < graph_lower_bound(g))
		return 0;
	got = strategy_lp_relaxation(g, rq, ops, rq->budget, rq->time_limit,
				     "LP relaxation for the bound", &rm, &res, err);
	if (got < 0)
		return -1;
	out->cols = rm.milp.ncols;
	out->rows = rm.milp.nrows;
	out->nnz = rm.milp.nnz;
	if (got) {
		double bound = fmax(res.objective, graph_total_cost(g));

		if (!out->has_lower_bound || bound > out->lower_bound)
			strategy_set_bound(g, out, bound);
	}
	milp_result_release(&res);
	remat_release(&rm);
	return 0;
}

int approx_run(const struct graph *g, const struct solve_request *rq,
	       struct solve_outcome *out, struct cm_error *err)
{
	const struct solver_ops *ops = solver_find(rq->solver ? rq->solver : SOLVER_DEFAULT);
	uint64_t rng = rq->seed ? rq->seed : 1, lb = graph_lower_bound(g);
	int samples = rq->samples > 0 ? rq->samples : APPROX_SAMPLES, rc = -1, lp_infeasible = 0;
	double t0 = cm_clock(), best_cost = 0, *sstar = NULL;
	struct plan *best = NULL;
	struct stages st = { 0 };
	char names[128];

	if (ops == NULL) {
		solver_names(names, sizeof(names));
		return cm_errorf(err, "unknown solver '%s' (built: %s)", rq->solver, names);
	}
	snprintf(out->solver, sizeof(out->solver), "%s", ops->name);
	sstar = malloc((size_t)g->n * (size_t)g->n * sizeof(double) + 1);
	if (sstar == NULL || stages_init(&st, g->n, err)) {
		if (sstar == NULL)
			cm_errorf(err, "out of memory");
		goto out;
	}
	for (size_t e = 0; e < sizeof(eps_grid) / sizeof(eps_grid[0]); e++) {
		uint64_t room = rq->budget - g->fixed_memory;
		uint64_t shrunk = g->fixed_memory + (uint64_t)floor((double)room * (1 - eps_grid[e]));
		double left = rq->time_limit > 0 ? rq->time_limit - (cm_clock() - t0) : 0;
		struct milp_result res = { 0 };
		struct remat_model rm;
		char label[64];
		int got;

		if (rq->time_limit > 0 && left <= 0)
			break;
		if (shrunk < lb)
			continue; /* no plan fits a budget this small */
		/* A plan that meets the bound cannot be improved on. */
		if (best && out->has_lower_bound &&
		    num_le(best_cost, graph_round_bound(g, out->lower_bound)))
			break;
		snprintf(label, sizeof(label), "LP relaxation %zu of %zu (eps %g)", e + 1,
			 sizeof(eps_grid) / sizeof(eps_grid[0]), eps_grid[e]);
		got = strategy_lp_relaxation(g, rq, ops, shrunk, left, label, &rm, &res, err);
		if (got < 0)
			goto out;
		if (e == 0) {
			out->cols = rm.milp.ncols;
			out->rows = rm.milp.nrows;
			out->nnz = rm.milp.nnz;
			/* The relaxation at the full budget bounds every plan. */
			if (got) {
				out->has_lower_bound = 1;
				out->lower_bound = res.objective;
			}
			lp_infeasible = res.status == MILP_INFEASIBLE;
		}
		if (got) {
			remat_fractional_s(&rm, res.x, sstar);
			for (size_t k = 0; k < sizeof(thresholds) / sizeof(thresholds[0]) && rc != -2; k++)
				if (try_rounding(g, sstar, thresholds[k], &rng, rq->budget, &st, &best,
						 &best_cost, err))
					rc = -2;
			for (int k = 0; k < samples && rc != -2; k++)
				if (try_rounding(g, sstar, -1, &rng, rq->budget, &st, &best, &best_cost,
						 err))
					rc = -2;
		}
		milp_result_release(&res);
		remat_release(&rm);
		if (rc == -2) {
			rc = -1;
			goto out;
		}
		if (lp_infeasible)
			break;
	}
	if (best != NULL) {
		double bound = out->lower_bound;
		int has_bound = out->has_lower_bound;

		if (strategy_adopt(g, "approx", rq->budget, best, out, err)) {
			best = NULL;
			goto out;
		}
		best = NULL;
		snprintf(out->plan->solver, sizeof(out->plan->solver), "%s", ops->name);
		out->objective = out->sim.cost;
		strategy_set_status(out, "feasible");
		if (has_bound)
			strategy_set_bound(g, out, bound);
	} else if (lp_infeasible) {
		strategy_set_status(out, "infeasible");
		snprintf(out->why, sizeof(out->why), "the LP relaxation is infeasible, so no plan fits");
	} else {
		strategy_set_status(out, "no_plan");
		snprintf(out->why, sizeof(out->why), "no rounding of the LP fits the budget%s",
			 rq->time_limit > 0 && cm_clock() - t0 >= rq->time_limit ?
			 " within the time limit" : "");
	}
	rc = 0;
out:
	plan_free(best);
	stages_release(&st);
	free(sstar);
	return rc;
}

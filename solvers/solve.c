/* The entrance of the library for one request: strategy_solve runs the
 * row of the table that the request names, after the checks every row
 * shares (the strategy, its parameters and the solver exist; the budget is
 * not below the least any plan needs), and adds what every row's outcome
 * may need after (an LP bound when asked, the mark of a stop request). */
#include "strategy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/num.h"
#include "../common/size.h"
#include "../common/stop.h"
#include "milp/turn.h"

/* After a stop request: an answer that is not final (a plan not proven
 * optimal, or none) says it was cut short; no plan is no_plan, whatever
 * the time limit would have made of it. */
static void mark_interrupted(struct solve_outcome *out)
{
	char why[sizeof(out->why)];

	if (out->status != STATUS_FEASIBLE && out->status != STATUS_NO_PLAN &&
	    out->status != STATUS_TIMEOUT && out->status != STATUS_OVER_BUDGET)
		return;
	out->interrupted = 1;
	if (out->status == STATUS_TIMEOUT)
		strategy_set_status(out, STATUS_NO_PLAN);
	snprintf(why, sizeof(why), "%s", out->why);
	snprintf(out->why, sizeof(out->why), "interrupted: %s%s%.400s",
		 out->plan ? "the best plan found before the signal" : "no plan found before the signal",
		 why[0] ? "; " : "", why);
}

int strategy_copy_bound(const struct graph *g, const struct solve_request *rq, double seconds,
			struct solve_outcome *out)
{
	const struct solver_ops *ops = solver_find(rq->solver ? rq->solver : SOLVER_DEFAULT);
	struct solve_opts so = { .time_limit = seconds, .threads = rq->threads,
				 .memory_cap = rq->memory_limit, .deadline = strategy_deadline(rq),
				 .label = "turn bound with copies" };
	double spc = rq->copy->seconds_per_cost, bound = graph_total_cost(g);
	struct cm_error err;
	int above = ops && seconds > 0 && !stop_requested() &&
		    turn_bound(g, rq->budget, rq->copy, ops, &so, &bound, &err) == 1;

	if (!out->has_time_bound || bound * spc > out->time_bound) {
		out->time_bound = bound * spc;
		out->has_time_bound = 1;
	}
	return above;
}

int strategy_time_meets(const struct solve_request *rq, const struct solve_outcome *o,
			double bound)
{
	double spc = rq->copy->seconds_per_cost;

	return o->plan && o->sim.fits && num_le(o->sim.time / spc, bound / spc);
}

/* With a bandwidth (rq->copy; docs/formats.md, Offload to host memory):
 * the plan replayed in time, its figures the replayed ones. A proof about
 * plans without copies (a bound on their cost, optimal, a stage model or
 * a pebble search without a plan) proves nothing once copies may stand in
 * for recomputes; the bounds left are those every plan meets: each node
 * computed once, the checkpoint-all cost, and in time that cost's time
 * (the compute stream runs one compute at a time), or the turn bound with
 * copies when out has it (auto, --bound). A plan whose time meets the
 * bound is optimal. 0, or -1 with err set. */
static int in_time(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err)
{
	double floor_cost = graph_total_cost(g), spc = rq->copy->seconds_per_cost;
	char why[sizeof(out->why)];

	if (out->status == STATUS_INFEASIBLE) {
		snprintf(why, sizeof(why), "%s", out->why);
		snprintf(out->why, sizeof(out->why), "%.400s; a proof for plans without copies "
			 "only", why);
		strategy_set_status(out, STATUS_NO_PLAN);
	}
	if (out->status == STATUS_UNSUPPORTED)
		return 0;
	out->has_lower_bound = 1;
	out->lower_bound = floor_cost;
	if (!out->has_time_bound || out->time_bound < floor_cost * spc) {
		out->has_time_bound = 1;
		out->time_bound = floor_cost * spc;
	}
	if (out->plan == NULL)
		return 0;
	if (plan_simulate_copies(g, out->plan, rq->budget, rq->copy, &out->sim, NULL, err))
		return -1;
	if (!out->sim.valid)
		return cm_errorf(err, "internal error: strategy %s made an invalid plan: %s",
				 rq->strategy, out->sim.why);
	out->plan->cost = out->sim.cost;
	out->plan->peak = out->sim.peak;
	out->plan->has_time = 1;
	out->plan->time = out->sim.time;
	out->plan->wait = out->sim.wait;
	out->plan->host_peak = out->sim.host_peak;
	out->plan->time_bound = out->time_bound;
	out->plan->has_lower_bound = 1;
	out->plan->lower_bound = floor_cost;
	if ((out->status == STATUS_OPTIMAL || out->status == STATUS_FEASIBLE) && !out->sim.fits) {
		strategy_set_status(out, STATUS_OVER_BUDGET);
		snprintf(out->why, sizeof(out->why), "%.400s", out->sim.why);
	} else if (out->status == STATUS_OPTIMAL || out->status == STATUS_FEASIBLE)
		strategy_set_status(out, strategy_time_meets(rq, out, out->time_bound) ?
				    STATUS_OPTIMAL : STATUS_FEASIBLE);
	return 0;
}

int strategy_solve(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err)
{
	const struct strategy *s = strategy_find(rq->strategy, err);
	uint64_t lb = graph_lower_bound(g);
	double t0 = cm_clock();
	int rc;

	memset(out, 0, sizeof(*out));
	/* An unknown solver is an error whichever strategy runs (auto would
	 * otherwise keep a heuristic's plan). */
	if (s == NULL || (rq->solver && strategy_backend(rq, err) == NULL) ||
	    strategy_check_params(&s, 1, rq, err))
		return -1;
	if (rq->budget < lb) {
		strategy_set_status(out, STATUS_INFEASIBLE);
		char b[64], l[64];

		snprintf(out->why, sizeof(out->why), "budget %s is below %s, the least any plan needs",
			 size_both(rq->budget, b, sizeof(b)), size_both(lb, l, sizeof(l)));
		out->seconds = cm_clock() - t0;
		return 0;
	}
	rc = s->run(s, g, rq, out, err);
	/* A bound, when asked for, for a strategy that has none of its own. */
	if (rc == 0 && rq->bound && !rq->copy && !(s->flags & STRATEGY_BOUND) &&
	    !out->has_lower_bound &&
	    out->status != STATUS_UNSUPPORTED && !stop_requested())
		rc = strategy_lp_bound(g, rq, out, err);
	/* With a bandwidth, --bound is the turn bound with copies. */
	if (rc == 0 && rq->bound && rq->copy && !out->has_time_bound &&
	    out->status != STATUS_UNSUPPORTED)
		strategy_copy_bound(g, rq, strategy_time_limit(rq), out);
	if (rc == 0 && rq->copy)
		rc = in_time(g, rq, out, err);
	if (rc == 0 && stop_requested())
		mark_interrupted(out);
	out->seconds = cm_clock() - t0;
	if (rc)
		strategy_outcome_release(out);
	return rc;
}

/* The rows of the paper's heuristics (baselines/): each point replayed at
 * the budget, the cheapest that fits kept; and the best of every
 * heuristic, which starts the solvers. */
#include "strategy.h"
#include "heuristic.h"

#include <string.h>

#include "../common/clock.h"
#include "../common/num.h"
#include "../common/stop.h"

int strategy_run_heuristic(const struct strategy *s, const struct graph *g,
			   const struct solve_request *rq, struct solve_outcome *out,
			   struct cm_error *err)
{
	const struct baseline b = { s->name, s->point };
	double deadline = strategy_deadline(rq);
	struct plan *p;
	char who[160];
	int rc = baseline_best_until(&b, deadline, g, rq->budget, &p, &out->sim, out->param,
				     sizeof(out->param), out->why, sizeof(out->why), err);

	if (rc == BASELINE_UNSUPPORTED) {
		strategy_set_status(out, STATUS_UNSUPPORTED);
		return 0;
	}
	if (rc || strategy_adopt(g, s->name, rq->budget, p, out, err))
		return -1;
	snprintf(who, sizeof(who), "%s%s%s%s", s->name, out->param[0] ? " (at best: " : "",
		 out->param, out->param[0] ? ")" : "");
	strategy_settle(g, rq, who, 0, 0, out);
	return 0;
}

struct plan *strategy_best_heuristic(const struct graph *g, const struct solve_request *rq,
				     struct sim_result *sim)
{
	struct plan *best = NULL;
	double t0 = cm_clock(), t_end = t0 + rq->time_limit / 3;
	int n = strategy_count();

	/* Three rounds: checkpoint-all (instant; nothing is cheaper when it
	 * fits), the general heuristics (dtr, shave, kusumoto-approx), then
	 * the rest of the paper's, the furthest from the optimum on large
	 * graphs: when the share runs out, it is their turn that is cut. */
	for (int i = 0; i < 3 * n; i++) {
		const struct strategy *s = strategy_at(i % n);
		struct solve_request h = *rq;
		struct solve_outcome o = { 0 };
		struct cm_error err;
		int round = s->point == baseline_checkpoint_all_point ? 0 :
			    !(s->flags & STRATEGY_PAPER) ? 1 : 2;

		if (!(s->flags & STRATEGY_HEURISTIC) || round != i / n)
			continue;
		if (stop_requested() || (best && num_le(sim->cost, graph_total_cost(g))))
			break;
		h.strategy = s->name;
		h.cost_cap = 0;
		if (rq->progress)
			rq->progress(rq->ctx, &(struct solve_progress){
				.elapsed = cm_clock() - t0, .incumbent = best ? sim->cost : 0,
				.has_incumbent = best != NULL, .label = s->name });
		/* A start must not take the solver's time: a third of it for
		 * them all (shave and kusumoto-approx take 4-5 s each on
		 * 3,000 nodes). */
		if (rq->time_limit > 0) {
			h.time_limit = t_end - cm_clock();
			if (best && h.time_limit <= 0)
				break;
			if (h.time_limit < 0.01)
				h.time_limit = 0.01;
		}
		if (s->run(s, g, &h, &o, &err) == 0 && o.plan && o.sim.fits &&
		    (best == NULL || o.sim.cost < sim->cost)) {
			plan_free(best);
			best = o.plan;
			o.plan = NULL;
			*sim = o.sim;
		}
		strategy_outcome_release(&o);
	}
	return best;
}

/* The pebble row: a plan within the budget whatever it costs, from the
 * backward search of graph/pebble.h. For budgets so tight that no
 * heuristic fits (auto runs it then, and lns makes it cheaper). */
#include "strategy.h"

#include <stdio.h>
#include <stdlib.h>

#include "../common/num.h"
#include "../common/stop.h"
#include "../graph/pebble.h"

/* Seconds the row takes without --time-limit. */
#define PEBBLE_TIME_LIMIT 60.0

STRATEGY_RUN(strategy_run_pebble)
{
	double limit = rq->time_limit > 0 ? rq->time_limit : PEBBLE_TIME_LIMIT;
	struct plan *p;
	int *steps, rc;
	long n;

	rc = graph_pebble_schedule(g, rq->budget, GRAPH_PEBBLE_STATES, limit, &steps, &n);
	if (rc != 1) {
		strategy_set_status(out, rc == 0 ? STATUS_INFEASIBLE : STATUS_NO_PLAN);
		snprintf(out->why, sizeof(out->why), rc == 0 ?
			 "no plan fits: a node no other reads cannot be computed within the budget" :
			 g->n > GRAPH_PEBBLE_MAX_NODES ? "more nodes than the search takes" :
			 "the search gave up (%d states a node, or the time limit)", GRAPH_PEBBLE_STATES);
		return 0;
	}
	if ((p = plan_new()) == NULL) {
		free(steps);
		return cm_errorf(err, "out of memory");
	}
	for (long i = 0; i < n; i++)
		if (plan_push(p, steps[i] >= 0 ? PLAN_COMPUTE : PLAN_FREE,
			      steps[i] >= 0 ? steps[i] : -1 - steps[i], -1)) {
			free(steps);
			plan_free(p);
			return cm_errorf(err, "out of memory");
		}
	free(steps);
	if (strategy_adopt(g, s->name, rq->budget, p, out, err))
		return -1;
	if (!out->sim.fits)
		return cm_errorf(err, "internal error: pebble's plan replays over budget: %s",
				 out->sim.why);
	if (rq->cost_cap > 0 && !num_le(out->sim.cost, rq->cost_cap)) {
		strategy_set_status(out, STATUS_INFEASIBLE);
		snprintf(out->why, sizeof(out->why), "pebble's plan costs %.17g, over the cap %.17g",
			 out->sim.cost, rq->cost_cap);
	} else {
		strategy_set_status(out, STATUS_FEASIBLE);
		if (num_le(out->sim.cost, graph_total_cost(g)))
			strategy_set_bound(g, out, graph_total_cost(g));
	}
	return 0;
}

/* The pebble row: a plan within the budget whatever it costs, from the
 * backward search of graph/pebble.h, or a proof that none fits. For
 * budgets so tight that no heuristic fits (auto runs it then). */
#include "strategy.h"

#include <stdio.h>
#include <stdlib.h>

#include "../common/clock.h"
#include "../common/stop.h"
#include "../graph/pebble.h"


/* No plan from the search: a proof that none fits, naming the node (the
 * schedule's own when shown is 1, else one searched for in the time
 * left), or no_plan. */
static void no_schedule(const struct graph *g, const struct solve_request *rq, int shown,
			int node, int ancestors, double left, struct solve_outcome *out)
{
	if (shown || (left > 0 && !stop_requested() &&
		      graph_pebble_infeasible(g, rq->budget, GRAPH_PEBBLE_STATES, left, &node,
					      &ancestors))) {
		strategy_set_infeasible(g, rq->budget, node, ancestors, out);
		return;
	}
	strategy_set_status(out, STATUS_NO_PLAN);
	if (g->n > GRAPH_PEBBLE_MAX_NODES)
		snprintf(out->why, sizeof(out->why), "%d nodes: the search takes up to %d",
			 g->n, GRAPH_PEBBLE_MAX_NODES);
	else
		snprintf(out->why, sizeof(out->why), "the search gave up (%d sets a node, or the "
			 "time limit)", GRAPH_PEBBLE_STATES);
}

STRATEGY_RUN(strategy_run_pebble)
{
	double limit = strategy_time_limit(rq), t0 = cm_clock();
	struct plan *p;
	int *steps, rc, node = -1, ancestors = 0;
	long n;

	rc = graph_pebble_schedule(g, rq->budget, GRAPH_PEBBLE_STATES, limit, &steps, &n, &node,
				   &ancestors);
	if (rc != 1) {
		no_schedule(g, rq, rc == 0, node, ancestors, limit - (cm_clock() - t0), out);
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
	strategy_settle(g, rq, "pebble's plan", 0, 0, out);
	return 0;
}

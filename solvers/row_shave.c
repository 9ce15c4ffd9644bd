/* The shave row: peak shaving from checkpoint-all (solvers/search/shave.h), settled. */
#include "strategy.h"
#include "search/repair.h"
#include "search/shave.h"

#include <stdio.h>
#include <stdlib.h>

#include "../common/clock.h"

/* Largest graph the shave row takes: the repair's limit (three n x n
 * stage matrices, rows of n values completed per move). */
#define SHAVE_MAX_NODES REPAIR_MAX_NODES
/* Seconds the shave row takes at most without --time-limit. */
#define SHAVE_TIME_LIMIT 10.0

/* The checkpoint-all stage matrices of g, R complete, into st (init'ed). */
static int checkpoint_all_stages(const struct graph *g, struct stages *st, struct cm_error *err)
{
	int *last = malloc(((size_t)g->n + 1) * sizeof(int));

	if (last == NULL)
		return cm_errorf(err, "out of memory");
	if (stages_init(st, g->n, err)) {
		free(last);
		return -1;
	}
	graph_last_use(g, last);
	stages_checkpoint_all(g, st, last);
	stages_complete_r(g, st);
	free(last);
	return 0;
}

int strategy_run_shave(const struct strategy *s, const struct graph *g,
		       const struct solve_request *rq, struct solve_outcome *out,
		       struct cm_error *err)
{
	double limit = rq->time_limit > 0 ? rq->time_limit : SHAVE_TIME_LIMIT;
	struct stages st = { 0 };
	struct shave_stats ss;
	struct plan *p = NULL;
	int rc = -1, fits;

	if (g->n > SHAVE_MAX_NODES) {
		strategy_set_status(out, STATUS_UNSUPPORTED);
		snprintf(out->why, sizeof(out->why), "%d nodes: shave works on n x n stage "
			 "matrices, up to %d nodes", g->n, SHAVE_MAX_NODES);
		return 0;
	}
	if (checkpoint_all_stages(g, &st, err))
		return -1;
	/* Once a variant fits, the others for a tenth of the time (at most
	 * a second): this row is also a warm start of the solvers. */
	fits = shave_best(g, rq->budget, &st, cm_clock() + limit,
			  cm_clock() + (limit / 10 < 1 ? limit / 10 : 1), SHAVE_VARIANTS, 0, &ss, err);
	if (fits < 0)
		goto out;
	if (!fits) {
		strategy_set_status(out, STATUS_NO_PLAN);
		snprintf(out->why, sizeof(out->why), "peak shaving gets stuck %.0f bytes over the "
			 "budget (summed over stages)", ss.final_overflow);
		rc = 0;
		goto out;
	}
	if ((p = plan_new()) == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (plan_from_stages(g, &st, p, err))
		goto out;
	rc = strategy_adopt(g, s->name, rq->budget, p, out, err);
	p = NULL;
	if (rc)
		goto out;
	if (!out->sim.fits) {
		rc = cm_errorf(err, "internal error: shave's plan replays over budget: %s",
			       out->sim.why);
	} else {
		strategy_settle(g, rq, "shave's plan", 0, 0, out);
	}
out:
	plan_free(p);
	stages_release(&st);
	return rc;
}

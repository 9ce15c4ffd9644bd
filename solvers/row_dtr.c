/* The dtr and dtr-offload rows: --param heuristic, dtr's greedy eviction
 * (solvers/search/dtr.h), settled. */
#include "strategy.h"
#include "search/dtr.h"

#include <stdio.h>

#include "../common/stop.h"

/* dtr and dtr-offload: the same greedy, with offload for the row flagged
 * STRATEGY_COPIES. */
static int run_dtr(const struct strategy *s, const struct graph *g,
		   const struct solve_request *rq, struct solve_outcome *out,
		   struct cm_error *err)
{
	struct dtr_opts o = { .heuristic = DTR_BEST,
			      .deadline = strategy_deadline(rq),
			      .copy = (s->flags & STRATEGY_COPIES) ? rq->copy : NULL };
	const char *h = strategy_param(rq, "heuristic");
	struct plan *p;
	int rc;

	if (h && (o.heuristic = dtr_heuristic_find(h)) < 0)
		return cm_errorf(err, "--param heuristic: expected full, eqclass, local, lru, size, "
				 "msps, nextuse or best, not '%s'", h);
	snprintf(out->param, sizeof(out->param), "heuristic=%s", dtr_heuristic_names[o.heuristic]);
	if ((p = plan_new()) == NULL)
		return cm_errorf(err, "out of memory");
	rc = dtr_plan(g, rq->budget, &o, p, err);
	return strategy_dtr_answer(s, g, rq, rc, p, 0, out, err);
}

int strategy_run_dtr(const struct strategy *s, const struct graph *g,
		     const struct solve_request *rq, struct solve_outcome *out,
		     struct cm_error *err)
{
	return run_dtr(s, g, rq, out, err);
}

int strategy_run_dtr_offload(const struct strategy *s, const struct graph *g,
			     const struct solve_request *rq, struct solve_outcome *out,
			     struct cm_error *err)
{
	if (rq->copy == NULL) {
		strategy_set_status(out, STATUS_UNSUPPORTED);
		snprintf(out->why, sizeof(out->why), "%s makes plans with copies: it needs a "
			 "bandwidth (solve --bandwidth)", s->name);
		return 0;
	}
	return run_dtr(s, g, rq, out, err);
}

int strategy_dtr_answer(const struct strategy *s, const struct graph *g,
			const struct solve_request *rq, int rc, struct plan *p, int anytime,
			struct solve_outcome *out, struct cm_error *err)
{
	if (rc == DTR_NO_PLAN) {
		plan_free(p);
		strategy_set_status(out, STATUS_NO_PLAN);
		if (!stop_requested())
			snprintf(out->why, sizeof(out->why), "the greedy eviction gets stuck at this "
				 "budget (every resident value is needed, or it recomputes without end)");
		return 0;
	}
	if (rc || strategy_adopt_copies(g, s->name, rq->budget, rq->copy, p, out, err)) {
		if (rc)
			plan_free(p);
		return -1;
	}
	strategy_settle(g, rq, anytime ? "dtr-tune's plan" : "dtr's plan", anytime, 0, out);
	return 0;
}

/* The dtr row: --param heuristic, dtr's greedy eviction (solvers/search/dtr.h), settled. */
#include "strategy.h"
#include "search/dtr.h"

#include <stdio.h>

#include "../common/stop.h"

int strategy_run_dtr(const struct strategy *s, const struct graph *g,
		     const struct solve_request *rq, struct solve_outcome *out,
		     struct cm_error *err)
{
	struct dtr_opts o = { .heuristic = DTR_BEST,
			      .deadline = strategy_deadline(rq) };
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
	if (rc || strategy_adopt(g, s->name, rq->budget, p, out, err)) {
		if (rc)
			plan_free(p);
		return -1;
	}
	strategy_settle(g, rq, anytime ? "dtr-tune's plan" : "dtr's plan", anytime, 0, out);
	return 0;
}

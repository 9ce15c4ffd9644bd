/* The dtr-tune row: dtr with weights per repeat class searched within the
 * time limit (solvers/search/tune.h), settled. */
#include "strategy.h"
#include "search/tune.h"

#include <stdio.h>

#include "../common/stop.h"

int strategy_run_tune(const struct strategy *s, const struct graph *g,
		      const struct solve_request *rq, struct solve_outcome *out,
		      struct cm_error *err)
{
	struct tune_opts o = { .deadline = strategy_deadline(rq) };
	struct tune_stats st;
	struct plan *p;
	int rc;

	if ((p = plan_new()) == NULL)
		return cm_errorf(err, "out of memory");
	rc = tune_plan(g, rq->budget, &o, p, &st, err);
	snprintf(out->param, sizeof(out->param), "from=%s;classes=%d;runs=%d%s", st.from,
		 st.classes, st.runs, st.converged ? ";converged" : "");
	if (rc == TUNE_NO_PLAN) {
		plan_free(p);
		strategy_set_status(out, STATUS_NO_PLAN);
		if (!stop_requested())
			snprintf(out->why, sizeof(out->why), "dtr's greedy eviction gets stuck at this "
				 "budget (every resident value is needed, or it recomputes without end)");
		return 0;
	}
	if (rc || strategy_adopt(g, s->name, rq->budget, p, out, err)) {
		if (rc)
			plan_free(p);
		return -1;
	}
	strategy_settle(g, rq, "dtr-tune's plan", 1, 0, out);
	return 0;
}

/* The dtr-tune row: dtr with weights per repeat class searched within the
 * time limit (solvers/search/tune.h), settled. */
#include "strategy.h"
#include "search/tune.h"

#include <stdio.h>

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
	/* TUNE_NO_PLAN is dtr's DTR_NO_PLAN: dtr has no plan at the budget. */
	return strategy_dtr_answer(s, g, rq, rc, p, 1, out, err);
}

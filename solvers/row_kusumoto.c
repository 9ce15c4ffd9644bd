/* The kusumoto-approx and kusumoto-exact rows: --param centric and
 * time-steps, Kusumoto et al.'s DP (solvers/search/kusumoto.h), settled. */
#include "strategy.h"
#include "search/kusumoto.h"

#include <stdio.h>
#include <string.h>

int strategy_run_kusumoto(const struct strategy *s, const struct graph *g,
			  const struct solve_request *rq, struct solve_outcome *out,
			  struct cm_error *err)
{
	const char *centric = strategy_param(rq, "centric");
	struct kusumoto_opts o;
	struct plan *p;
	int rc;

	kusumoto_opts_init(&o);
	o.exact = strcmp(s->name, "kusumoto-exact") == 0;
	o.memory_centric = centric && strcmp(centric, "memory") == 0;
	o.time_steps = (int)strategy_param_whole(rq, "time-steps", 0);
	o.deadline = strategy_deadline(rq);
	snprintf(out->param, sizeof(out->param), "centric=%s",
		 o.memory_centric ? "memory" : "time");
	if ((p = plan_new()) == NULL)
		return cm_errorf(err, "out of memory");
	rc = kusumoto_plan(g, rq->budget, &o, p, out->why, sizeof(out->why), err);
	if (rc > 0) {
		plan_free(p);
		strategy_set_status(out, rc == KUSUMOTO_NO_PLAN ? STATUS_NO_PLAN : STATUS_UNSUPPORTED);
		return 0;
	}
	if (rc || strategy_adopt(g, s->name, rq->budget, p, out, err)) {
		if (rc)
			plan_free(p);
		return -1;
	}
	strategy_settle(g, rq, "the DP's cheapest plan", 0, 0, out);
	return 0;
}

/* The lns row: --param stages and values, a start (the best heuristic's
 * plan, or checkpoint-all repaired), lns (solvers/search/lns.h), settled. */
#include "strategy.h"
#include "heuristic.h"
#include "memory.h"
#include "search/lns.h"

#include <stdio.h>

#include "../common/clock.h"

int strategy_run_lns(const struct strategy *s, const struct graph *g,
		     const struct solve_request *rq, struct solve_outcome *out,
		     struct cm_error *err)
{
	struct lns_opts o = { .ops = strategy_backend(rq, err), .seed = rq->seed,
			      .time_limit = strategy_time_limit(rq),
			      .progress = rq->progress, .ctx = rq->ctx,
			      .halt = rq->halt, .halt_ctx = rq->halt_ctx,
			      .memory_limit = rq->memory_limit };
	struct sim_result sim;
	struct plan *own = NULL, *best = NULL;
	const struct plan *start = rq->start;
	struct lns_stats st;
	double t0 = cm_clock();
	int rc;

	if (o.ops == NULL)
		return -1;
	o.stage_window = (int)strategy_param_whole(rq, "stages", 0);
	o.node_window = (int)strategy_param_whole(rq, "values", 0);
	snprintf(out->solver, sizeof(out->solver), "%s", o.ops->name);
	/* The smallest window still needs a solver process. */
	if (!strategy_check_memory(rq, "a window's solver process", &(struct remat_size){ 0 }, 0, out))
		return 0;
	if (start == NULL)
		start = own = strategy_best_heuristic(g, rq, &sim);
	if (start == NULL) {
		/* Nothing fits: repair the checkpoint-all plan. */
		start = own = plan_new();
		if (own == NULL || baseline_checkpoint_all(g, own, err)) {
			plan_free(own);
			return own ? -1 : cm_errorf(err, "out of memory");
		}
		snprintf(own->strategy, sizeof(own->strategy), "checkpoint-all");
	}
	/* The heuristics' time counts: --time-limit is for the whole row. */
	o.time_limit -= cm_clock() - t0;
	if (o.time_limit <= 0)
		o.time_limit = 1e-3;
	rc = lns_improve(g, rq->budget, start, &o, &best, &st, out->why, sizeof(out->why), err);
	snprintf(out->param, sizeof(out->param), "start=%s%.40s%s", st.repaired ? "repair(" : "",
		 start->strategy[0] ? start->strategy : "plan", st.repaired ? ")" : "");
	plan_free(own);
	if (rc == 1) {
		strategy_set_status(out, STATUS_NO_PLAN);
		return 0;
	}
	if (rc || strategy_adopt(g, s->name, rq->budget, best, out, err))
		return -1;
	snprintf(best->solver, sizeof(best->solver), "%s", o.ops->name);
	if (!out->sim.fits)
		return cm_errorf(err, "internal error: lns's plan replays over budget: %s",
				 out->sim.why);
	strategy_settle(g, rq, "the best plan found", 1, st.proven ? out->sim.cost : 0, out);
	return 0;
}

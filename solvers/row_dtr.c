/* The dtr and dtr-offload rows: --param heuristic, dtr's greedy eviction
 * (solvers/search/dtr.h), settled. */
#include "strategy.h"
#include "search/dtr.h"
#include "search/offload.h"

#include <stdio.h>

#include "../common/clock.h"
#include "../common/num.h"
#include "../common/stop.h"

/* The most recomputes times steps for which dtr-offload also runs the pass
 * that makes recomputes fetches (it replays the plan once a recompute):
 * about a second. */
#define DTR_PASS_WORK 5e7

/* dtr-offload's other candidate: dtr's own plan (o without copies) with
 * its recomputes made fetches where that is faster (solvers/search/offload.c);
 * it replaces *p, dtr_plan's answer with copies, when it is faster. 0, or
 * -1 with err set. */
static int try_pass(const struct graph *g, const struct solve_request *rq,
		    const struct dtr_opts *o, struct plan **p, struct cm_error *err)
{
	struct dtr_opts plain = *o;
	struct plan *d = plan_new(), *q = NULL;
	double spc = rq->copy->seconds_per_cost;
	struct sim_result a, b;
	int rc = -1, r, computes = 0;

	plain.copy = NULL;
	if (d == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	r = dtr_plan(g, rq->budget, &plain, d, err);
	if (r < 0)
		goto out;
	rc = 0;
	for (int i = 0; r == 0 && i < d->n; i++)
		computes += d->steps[i].op == PLAN_COMPUTE;
	if (r || computes == g->n || (double)(computes - g->n) * d->n > DTR_PASS_WORK ||
	    stop_requested() || (o->deadline > 0 && cm_clock() > o->deadline))
		goto out;
	rc = -1;
	if ((q = offload_recomputes(g, d, rq->budget, rq->copy, NULL, err)) == NULL ||
	    plan_simulate_copies(g, q, rq->budget, rq->copy, &b, NULL, err) ||
	    plan_simulate_copies(g, *p, rq->budget, rq->copy, &a, NULL, err))
		goto out;
	rc = 0;
	if (b.valid && b.fits && num_lt(b.time / spc, a.time / spc)) {
		plan_free(*p);
		*p = q;
		q = NULL;
	}
out:
	plan_free(d);
	plan_free(q);
	return rc;
}

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
	if (rc == 0 && o.copy && try_pass(g, rq, &o, &p, err)) {
		plan_free(p);
		return -1;
	}
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

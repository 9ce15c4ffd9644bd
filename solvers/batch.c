/* maxbatch's search: see batch.h. */
#include "batch.h"

#include "../common/clock.h"
#include "../common/stop.h"

#include <stdio.h>
#include <string.h>


int batch_fits(const struct graph *g, const struct batch_request *br, uint64_t batch,
	       struct batch_answer *ans, struct cm_error *err)
{
	struct solve_request rq = *br->settings;
	struct solve_outcome o;
	struct graph *h = graph_at_batch(g, batch, err);
	int rc;

	if (h == NULL)
		return 0; /* sizes beyond 2^53 bytes fit no budget */
	rq.strategy = br->strategy;
	rq.budget = br->budget;
	rq.gap = 1; /* any plan within the cap answers */
	/* A hair above the cap, so that rounding in the cost sum never turns
	 * away a plan of exactly the allowed cost. */
	rq.cost_cap = br->ratio * graph_total_cost(h) * (1 + 1e-9);
	if (rq.cost_cap <= 0)
		rq.cost_cap = 1e-300;
	if (strategy_solve(h, &rq, &o, err)) {
		graph_free(h);
		return -1;
	}
	if (o.status == STATUS_OPTIMAL || o.status == STATUS_FEASIBLE) {
		ans->batch = batch;
		ans->cost = o.sim.cost;
		ans->overhead = o.sim.cost / graph_total_cost(h);
		ans->peak = o.sim.peak;
		if (rq.copy) {
			ans->has_time = 1;
			ans->time = o.sim.time;
			ans->wait = o.sim.wait;
			ans->host_peak = o.sim.host_peak;
			ans->slowdown = o.sim.time / strategy_time_floor(h, &rq);
		}
		snprintf(ans->solver, sizeof(ans->solver), "%s", o.solver);
		rc = 1;
	} else if ((o.status == STATUS_TIMEOUT || o.status == STATUS_NO_PLAN) && !o.model_none) {
		ans->no_fit = STATUS_NO_PLAN;
		rc = -2;
	} else {
		ans->unsupported = o.status == STATUS_UNSUPPORTED;
		ans->no_fit = o.status;
		/* infeasible, over budget, unsupported, or no plan in the stage
		 * model: proven as ilp's `optimal` is */
		rc = 0;
	}
	strategy_outcome_release(&o);
	graph_free(h);
	return rc;
}

/* batch_fits, where "unsupported" above a batch that fitted proves
 * nothing: ilp answers small batches with a heuristic's plan before it
 * builds its model, and only the model may be refused for memory. */
static int probe(const struct graph *g, const struct batch_request *br, uint64_t batch,
		 uint64_t lo, struct batch_answer *ans, struct cm_error *err)
{
	int rc = batch_fits(g, br, batch, ans, err);

	if (rc == 0 && ans->unsupported && lo > 0) {
		ans->unsupported = 0;
		rc = -2;
	}
	return rc;
}

double batch_default_ratio(const struct graph *g)
{
	double fwd = 0, bwd = 0;

	for (int k = 0; k < g->n; k++)
		*(g->nodes[k].backward ? &bwd : &fwd) += g->nodes[k].cost;
	return fwd + bwd > 0 ? (2 * fwd + bwd) / (fwd + bwd) : 1;
}

int batch_search(const struct graph *g, const struct batch_request *br,
		 struct batch_answer *ans, struct cm_error *err)
{
	uint64_t lo = 0, hi = 0, step = 1;
	double t0 = cm_clock();
	int rc, unknown = 0;

	memset(ans, 0, sizeof(*ans));
	ans->strategy = br->strategy;
	if (br->seed > 0) {
		rc = probe(g, br, br->seed, 0, ans, err);
		if (rc == -1)
			return -1;
		unknown |= rc == -2;
		if (rc == 1)
			lo = br->seed;
	}
	for (;;) {
		if (stop_requested()) {
			ans->interrupted = 1;
			break;
		}
		hi = lo + step < MAXBATCH_LIMIT ? lo + step : MAXBATCH_LIMIT;
		rc = probe(g, br, hi, lo, ans, err);
		if (rc == -1)
			return -1;
		unknown |= rc == -2;
		if (rc != 1)
			break;
		lo = hi;
		if (hi >= MAXBATCH_LIMIT) {
			ans->capped = 1;
			ans->seconds = cm_clock() - t0;
			return 0;
		}
		step *= 2;
	}
	while (hi - lo > 1 && !ans->interrupted) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct batch_answer found = *ans;

		if (stop_requested()) {
			ans->interrupted = 1;
			break;
		}
		rc = probe(g, br, mid, lo, &found, err);
		if (rc == -1)
			return -1;
		unknown |= rc == -2;
		if (rc == 1) {
			lo = mid;
			*ans = found;
		} else {
			hi = mid;
		}
	}
	ans->batch = lo;
	ans->unsupported &= lo == 0;
	ans->proven = !unknown && !ans->interrupted;
	ans->seconds = cm_clock() - t0;
	snprintf(ans->param, sizeof(ans->param), "batch=%llu", (unsigned long long)lo);
	return 0;
}

int batch_run(const struct graph *g, const struct batch_run_request *rq,
	      struct batch_answer *ans, struct cm_error *err)
{
	double ratio = rq->ratio > 0 ? rq->ratio : batch_default_ratio(g);
	char what[128];

	for (int i = 0; i < rq->n; i++) {
		const struct strategy *s = rq->strategies[i];
		struct solve_request row = *rq->settings;
		struct batch_request br = { s->name, rq->budget, ratio, &row, 0 };

		/* A solver starts where the strategies before it got to. */
		if (s->flags & STRATEGY_SOLVER)
			for (int j = 0; j < i; j++)
				if (!ans[j].interrupted && ans[j].batch > br.seed)
					br.seed = ans[j].batch;
		if (stop_requested()) {
			ans[i] = (struct batch_answer){ .strategy = s->name, .interrupted = 1 };
			continue;
		}
		if (rq->note) {
			snprintf(what, sizeof(what), "searching the largest batch for %s", s->name);
			rq->note(rq->ctx, what);
		}
		if (batch_search(g, &br, &ans[i], err))
			return -1;
	}
	return 0;
}

void batch_row_of_answer(struct strategy_row *r, const struct graph *g, uint64_t budget,
			 const struct batch_answer *a)
{
	*r = (struct strategy_row){ .graph = g->id, .strategy = a->strategy,
				    .param = a->param, .solver = a->solver,
				    .budget = budget, .feasible = a->batch > 0,
				    .has_cost = a->batch > 0, .cost = a->cost,
				    .overhead = a->overhead, .peak = a->peak,
				    .seconds = a->seconds,
				    .has_time = a->batch > 0 && a->has_time, .time = a->time,
				    .wait = a->wait, .host_peak = a->host_peak,
				    .status = a->proven ? STATUS_OPTIMAL : STATUS_FEASIBLE };
	if (a->batch == 0)
		r->status = a->unsupported ? STATUS_UNSUPPORTED : a->no_fit;
	if (a->interrupted)
		r->status = STATUS_INTERRUPTED;
}

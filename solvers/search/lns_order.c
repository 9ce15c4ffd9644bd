#include "lns_order.h"

#include <stdlib.h>
#include <string.h>

#include "../../graph/order.h"
#include "../../plan/sim.h"

struct plan *lns_order_map(const struct plan *p, const int *map)
{
	struct plan *q = plan_new();

	if (q == NULL)
		return NULL;
	*q = *p;
	q->steps = NULL;
	q->n = q->cap = 0;
	for (int s = 0; s < p->n; s++)
		if (plan_push(q, (enum plan_op)p->steps[s].op, map[p->steps[s].node],
			      p->steps[s].stage)) {
			plan_free(q);
			return NULL;
		}
	return q;
}

int lns_order_first(const struct graph *g, const struct plan *start, int *order)
{
	int got = plan_first_computes(start, g->n, order);

	if (got < 0)
		return -1;
	if (got < g->n)
		return 0;
	for (int k = 0; k < g->n; k++)
		if (order[k] != k)
			return 1;
	return 0;
}

int lns_order_improve(const struct graph *g, uint64_t budget, const struct plan *start,
		      const struct lns_opts *o, struct plan **out, struct lns_stats *st,
		      struct cm_error *err)
{
	int *order = malloc((size_t)g->n * sizeof(int)), *pos = malloc((size_t)g->n * sizeof(int));
	struct graph *h = NULL;
	struct plan *start_h = NULL, *out_h = NULL;
	struct sim_result sim;
	int rc = -1, got;

	*out = NULL;
	if (order == NULL || pos == NULL || (got = lns_order_first(g, start, order)) < 0) {
		cm_errorf(err, "out of memory");
		goto done;
	}
	if (got == 0 || !graph_is_order(g, order)) {
		/* In order, or not a valid plan: lns_improve says why. */
		rc = LNS_ORDER_IN_ORDER;
		goto done;
	}
	for (int k = 0; k < g->n; k++)
		pos[order[k]] = k;
	if ((h = graph_permute(g, order, err)) == NULL)
		goto done;
	if ((start_h = lns_order_map(start, pos)) == NULL) {
		cm_errorf(err, "out of memory");
		goto done;
	}
	rc = lns_improve(h, budget, start_h, o, &out_h, st, err);
	if (rc != 0)
		goto done;
	rc = -1;
	if ((*out = lns_order_map(out_h, order)) == NULL) {
		cm_errorf(err, "out of memory");
		goto done;
	}
	if (plan_simulate(g, *out, budget, &sim, err))
		goto done;
	if (!sim.valid) {
		cm_errorf(err, "internal error: lns's plan, mapped back, is not valid: %s", sim.why);
		goto done;
	}
	(*out)->cost = sim.cost;
	(*out)->peak = sim.peak;
	rc = 0;
done:
	if (rc != 0) {
		plan_free(*out);
		*out = NULL;
	}
	plan_free(out_h);
	plan_free(start_h);
	graph_free(h);
	free(order);
	free(pos);
	return rc;
}

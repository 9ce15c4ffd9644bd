#include "lns_order.h"

#include <stdlib.h>

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

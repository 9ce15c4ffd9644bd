/* lns from a start that computes nodes for the first time out of file
 * order (dtr's plans on some training graphs, plans made on a reordered
 * graph): the stage model needs the first computes in file order, so the
 * search runs on the graph permuted to the start's first-compute order
 * (graph/order.h) and its plan is mapped back. */
#ifndef CM_LNS_ORDER_H
#define CM_LNS_ORDER_H

#include "lns.h"

/* What lns_order_improve returns when start is in file order (or does not
 * compute every node): lns_improve goes on as usual. */
#define LNS_ORDER_IN_ORDER 2

/* lns_improve (same arguments, same results) for a start whose first
 * computes are out of g's file order, by lns_improve on the permuted
 * graph; *out is a plan of g, replayed on g. LNS_ORDER_IN_ORDER when the
 * start needs no permutation. */
int lns_order_improve(const struct graph *g, uint64_t budget, const struct plan *start,
		      const struct lns_opts *o, struct plan **out, struct lns_stats *st,
		      struct cm_error *err);

/* order (g->n ints): start's first computes, when out of g's file order;
 * 1 then, 0 when in file order or not computing every node, -1 when out
 * of memory. */
int lns_order_first(const struct graph *g, const struct plan *start, int *order);

/* A copy of p with node v renamed map[v]; NULL when out of memory. */
struct plan *lns_order_map(const struct plan *p, const int *map);

#endif

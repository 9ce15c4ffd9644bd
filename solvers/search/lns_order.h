/* Plans whose first computes are out of the graph's file order (dtr's on
 * some training graphs, plans made on a reordered graph): that order, and a
 * plan renamed to a permuted graph and back. lns (solvers/search/lns.c) and
 * auto search the stage model, which needs the first computes in file
 * order, on the graph permuted to them. */
#ifndef CM_LNS_ORDER_H
#define CM_LNS_ORDER_H

#include "../../plan/plan.h"

/* order (g->n ints): start's first computes, when out of g's file order;
 * 1 then, 0 when in file order or not computing every node, -1 when out
 * of memory. */
int lns_order_first(const struct graph *g, const struct plan *start, int *order);

/* A copy of p with node v renamed map[v]; NULL when out of memory. */
struct plan *lns_order_map(const struct plan *p, const int *map);

#endif

/* Other execution orders of a graph: a copy with its nodes in another
 * topological order, the checkpoint-all peak of an order, and an order of
 * low checkpoint-all peak. An order is an array of g->n node indices:
 * order[k] is the node computed k-th. */
#ifndef CM_GRAPH_ORDER_H
#define CM_GRAPH_ORDER_H

#include <stdint.h>

#include "graph.h"

/* 1 when order is a permutation of g's nodes in which every dep comes
 * before its user, else 0. */
int graph_is_order(const struct graph *g, const int *order);

/* A copy of g whose node k is g's node order[k] (names, costs, sizes,
 * flags, fixed memory and batch unchanged; deps and grad_of re-indexed).
 * NULL with err set when order is not a topological order of g or out of
 * memory. Free with graph_free. */
struct graph *graph_permute(const struct graph *g, const int *order, struct cm_error *err);

/* Peak memory of the checkpoint-all schedule run in order (each node once,
 * each value freed after its last user in that order). */
uint64_t graph_peak_of_order(const struct graph *g, const int *order);

/* Fills order with a topological order of low checkpoint-all peak: greedy
 * (the ready node after which the fewest bytes stay live, ties to the
 * smaller output), then restarts-1 randomized greedy runs from seed; the
 * order with the lowest peak, file order included, wins (the randomized
 * runs stop early on wide graphs: about a second of work in all). Returns that
 * peak, or 0 with err set when out of memory. */
uint64_t graph_low_memory_order(const struct graph *g, int restarts, unsigned long long seed,
				int *order, struct cm_error *err);

#endif

/* The black pebble game on each node's ancestors, searched exhaustively
 * backwards (docs/model.md, "No plan at all"): a proof that no plan fits a
 * budget, stronger than the budget's lower bound (docs/formats.md, Memory
 * model; some node cannot be computed within it however its ancestors are
 * scheduled, freed and recomputed), and plans
 * at budgets where nothing cheaper fits. */
#ifndef CM_GRAPH_PEBBLE_H
#define CM_GRAPH_PEBBLE_H

#include <stdint.h>

#include "graph.h"

/* States searched a node before graph_pebble_infeasible gives that node up
 * (fewer when they would take more than GRAPH_PEBBLE_BYTES), and the
 * largest graph it searches: the sets of nodes it stores are n bits. */
#define GRAPH_PEBBLE_STATES 100000
#define GRAPH_PEBBLE_BYTES ((size_t)64 << 20)
#define GRAPH_PEBBLE_MAX_NODES 20000

/* 1 when no plan of g fits budget (total bytes, fixed memory included):
 * *node is then a node that cannot be computed within it and *ancestors
 * the size of the search that shows it. 0 when that is not shown within
 * `states` states a node and `seconds` in all (nodes are tried from the
 * last in file order), on a graph of more than GRAPH_PEBBLE_MAX_NODES, or
 * out of memory. */
int graph_pebble_infeasible(const struct graph *g, uint64_t budget, long states,
			     double seconds, int *node, int *ancestors);

/* A plan of g within budget made of one pebbling of each node no other
 * node reads, from nothing back to nothing, in file order: every node is
 * computed on the way. Its steps in *steps (malloc'd, *n_steps of them): k
 * >= 0 computes node k, -1 - k frees it. 1 when found; 0 when some such
 * node is shown not to fit (no plan fits; *node and *ancestors as for
 * graph_pebble_infeasible); -1 when a search gives up (`states` states a
 * node, `seconds` in all), on a graph of more than GRAPH_PEBBLE_MAX_NODES,
 * or out of memory. The plans recompute freely: they answer "does
 * anything fit", not "what is cheapest". */
int graph_pebble_schedule(const struct graph *g, uint64_t budget, long states, double seconds,
			  int **steps, long *n_steps, int *node, int *ancestors);

#endif

/* A proof that no plan fits a budget, stronger than SPEC 2's bound: some
 * node cannot be computed within the budget however its ancestors are
 * scheduled, freed and recomputed (the black pebble game on its ancestors,
 * searched exhaustively). docs/model.md has the argument. */
#ifndef CM_GRAPH_PEBBLE_H
#define CM_GRAPH_PEBBLE_H

#include <stdint.h>

#include "graph.h"

/* States searched a node before graph_pebble_infeasible gives that node up. */
#define GRAPH_PEBBLE_STATES 100000

/* 1 when no plan of g fits budget (total bytes, fixed memory included):
 * *node is then a node that cannot be computed within it and *ancestors
 * the size of the search that shows it. 0 when that is not shown within
 * `states` states a node and `seconds` in all (nodes are tried from the
 * last in file order), or out of memory. */
int graph_pebble_infeasible(const struct graph *g, uint64_t budget, long states,
			     double seconds, int *node, int *ancestors);

#endif

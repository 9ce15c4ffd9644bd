/* Repeated structure: nodes that sit at the same place in identical copies
 * of a block (the layers of a transformer), found without annotations. */
#ifndef CM_GRAPH_REPEAT_H
#define CM_GRAPH_REPEAT_H

#include "graph.h"

/* Rounds of refinement graph_repeat_classes uses by default: a node's
 * class then covers its neighbourhood up to this many edges away. */
#define GRAPH_REPEAT_ROUNDS 3

/* Colours g's nodes so that two nodes share a class when they have equal
 * cost, memory, direction (forward or backward) and numbers of inputs and
 * users and, up to `rounds` edges away, their inputs and users do too, as
 * multisets (colour
 * refinement, after Weisfeiler and Leman). Nodes at the same place in
 * identical blocks get the same class, except within `rounds` edges of
 * where the repetition starts or ends. Writes cls[v] in 0 .. count - 1
 * (classes numbered by first node) and returns count, or -1 with err set
 * when out of memory. cls holds g->n ints. */
int graph_repeat_classes(const struct graph *g, int rounds, int *cls, struct cm_error *err);

#endif

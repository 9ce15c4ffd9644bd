/* Random test data: a xorshift generator with a fixed seed and random DAGs. */
#ifndef CM_TEST_GEN_H
#define CM_TEST_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "../graph/graph.h"

static uint64_t gen_state = 0x9e3779b97f4a7c15ull;

__attribute__((unused))
static uint64_t gen_rnd(void)
{
	gen_state ^= gen_state << 13;
	gen_state ^= gen_state >> 7;
	gen_state ^= gen_state << 17;
	return gen_state;
}

/* n nodes; each earlier node is an input with probability edge_pct %; costs
 * in [cost_lo, cost_lo + 9], sizes in [1, max_mem]. */
__attribute__((unused))
static struct graph *gen_dag(int n, int edge_pct, int cost_lo, int max_mem)
{
	struct cm_error err;
	struct graph *g = graph_new("random");
	char name[16];

	for (int k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "v%d", k);
		graph_add_node(g, name, (double)(cost_lo + (int)(gen_rnd() % 10)),
			       1 + gen_rnd() % (uint64_t)max_mem, 0, &err);
		for (int i = 0; i < k; i++)
			if ((int)(gen_rnd() % 100) < edge_pct)
				graph_add_dep(g, i, &err);
	}
	graph_finish(g, &err);
	return g;
}

#endif

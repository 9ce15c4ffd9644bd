#include "repeat.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Class numbers for the colours: equal colours, equal numbers, numbered
 * in order of first node. Returns the count, -1 when out of memory. */
static int number(const uint64_t *col, int n, int *cls)
{
	size_t cap = 16;
	int count = 0, *slot;

	while (cap < 2 * (size_t)n)
		cap *= 2;
	if ((slot = malloc(cap * sizeof(int))) == NULL)
		return -1;
	memset(slot, 0xff, cap * sizeof(int));
	for (int v = 0; v < n; v++) {
		size_t h = (size_t)mix(col[v]) & (cap - 1);

		while (slot[h] >= 0 && col[slot[h]] != col[v])
			h = (h + 1) & (cap - 1);
		if (slot[h] < 0) {
			slot[h] = v;
			cls[v] = count++;
		} else {
			cls[v] = cls[slot[h]];
		}
	}
	free(slot);
	return count;
}

int graph_repeat_classes(const struct graph *g, int rounds, int *cls, struct cm_error *err)
{
	uint64_t *col = malloc(((size_t)g->n + 1) * sizeof(uint64_t));
	uint64_t *next = malloc(((size_t)g->n + 1) * sizeof(uint64_t));
	int count = -1;

	if (col == NULL || next == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	for (int v = 0; v < g->n; v++) {
		uint64_t c;
		double cost = g->nodes[v].cost;

		memcpy(&c, &cost, sizeof(c));
		col[v] = mix(mix(mix(c) ^ g->nodes[v].memory) + (uint64_t)g->nodes[v].backward) +
			 ((uint64_t)graph_ndeps(g, v) << 32) + (uint64_t)graph_nusers(g, v);
	}
	/* Each round: a node's colour, with its inputs' and its users'
	 * colours as multisets (sums of mixed colours, in two flavours). */
	for (int r = 0; r < rounds; r++) {
		for (int v = 0; v < g->n; v++) {
			uint64_t in = 0, out = 0;

			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				in += mix(col[g->deps[e]] ^ 0x9e3779b97f4a7c15ULL);
			for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++)
				out += mix(col[g->users[e]] + 0x632be59bd9b4e019ULL);
			next[v] = mix(col[v] ^ mix(in) ^ mix(mix(out) + 1));
		}
		memcpy(col, next, (size_t)g->n * sizeof(uint64_t));
	}
	if ((count = number(col, g->n, cls)) < 0)
		cm_errorf(err, "out of memory");
out:
	free(col);
	free(next);
	return count;
}

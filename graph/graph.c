#include "graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Grows *p (holding *cap elements of size sz) to at least need elements. */
static int grow(void *p, int *cap, int need, size_t sz)
{
	void **pp = p;
	int ncap = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap = ncap > INT32_MAX / 2 ? need : ncap * 2;
	q = realloc(*pp, (size_t)ncap * sz);
	if (q == NULL)
		return -1;
	*pp = q;
	*cap = ncap;
	return 0;
}

/* Room for need nodes in every per-node array of the builder. */
static int reserve_nodes(struct graph *g, int need)
{
	int cap = g->cap_nodes ? g->cap_nodes : 64;
	void *p;

	if (need <= g->cap_nodes)
		return 0;
	while (cap < need)
		cap = cap > INT32_MAX / 2 ? need : cap * 2;
	if ((p = realloc(g->nodes, (size_t)cap * sizeof(*g->nodes))) == NULL)
		return -1;
	g->nodes = p;
	if ((p = realloc(g->dep_off, ((size_t)cap + 1) * sizeof(int))) == NULL)
		return -1;
	g->dep_off = p;
	if ((p = realloc(g->mark, (size_t)cap * sizeof(int))) == NULL)
		return -1;
	g->mark = p;
	g->cap_nodes = cap;
	return 0;
}

struct graph *graph_new(const char *id)
{
	struct graph *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->batch_size = 1;
	g->id = strdup(id ? id : "graph");
	g->dep_off = calloc(1, sizeof(int));
	if (g->id == NULL || g->dep_off == NULL) {
		graph_free(g);
		return NULL;
	}
	return g;
}

void graph_free(struct graph *g)
{
	if (g == NULL)
		return;
	for (int k = 0; k < g->n; k++)
		free(g->nodes[k].name);
	free(g->nodes);
	free(g->dep_off);
	free(g->deps);
	free(g->user_off);
	free(g->users);
	free(g->mark);
	free(g->slots);
	free(g->id);
	free(g->title);
	free(g);
}

int graph_find(const struct graph *g, const char *name)
{
	uint32_t mask, h;

	if (g->n_slots == 0)
		return -1;
	mask = (uint32_t)g->n_slots - 1;
	for (h = hash_name(name) & mask; g->slots[h]; h = (h + 1) & mask)
		if (strcmp(g->nodes[g->slots[h] - 1].name, name) == 0)
			return g->slots[h] - 1;
	return -1;
}

static void index_insert(struct graph *g, int k)
{
	uint32_t mask = (uint32_t)g->n_slots - 1;
	uint32_t h = hash_name(g->nodes[k].name) & mask;

	while (g->slots[h])
		h = (h + 1) & mask;
	g->slots[h] = k + 1;
}

/* Keeps the name index at most half full. */
static int index_reserve(struct graph *g, int n)
{
	int ns = g->n_slots ? g->n_slots : 64;
	int *old = g->slots;

	if (2 * n <= g->n_slots)
		return 0;
	while (ns < 2 * n)
		ns *= 2;
	g->slots = calloc((size_t)ns, sizeof(int));
	if (g->slots == NULL) {
		g->slots = old;
		return -1;
	}
	g->n_slots = ns;
	free(old);
	for (int k = 0; k < g->n; k++)
		index_insert(g, k);
	return 0;
}

int graph_add_node(struct graph *g, const char *name, double cost,
		   uint64_t memory, int backward, struct cm_error *err)
{
	struct graph_node *v;
	int k = g->n;

	if (name[0] == '\0')
		return cm_errorf(err, "node %d: empty name", k);
	if (!isfinite(cost) || cost < 0)
		return cm_errorf(err, "node '%s': cost must be a finite number >= 0", name);
	if (memory >= GRAPH_MAX_MEMORY)
		return cm_errorf(err, "node '%s': memory %llu is too large (limit 2^53 bytes)",
				 name, (unsigned long long)memory);
	if (graph_find(g, name) >= 0)
		return cm_errorf(err, "node '%s': duplicate name (node %d has it too)",
				 name, graph_find(g, name));
	if (k >= GRAPH_MAX_NODES)
		return cm_errorf(err, "too many nodes (limit %d)", GRAPH_MAX_NODES);
	if (reserve_nodes(g, k + 1) || index_reserve(g, k + 1))
		goto oom;
	v = &g->nodes[k];
	v->name = strdup(name);
	if (v->name == NULL)
		goto oom;
	v->cost = cost;
	v->memory = memory;
	v->backward = backward != 0;
	v->grad_of = -1;
	v->materialized = 0;
	v->unsaveable = 0;
	v->save_cost = 0;
	v->workspace = 0;
	g->dep_off[k + 1] = g->dep_off[k];
	g->mark[k] = 0;
	g->n++;
	index_insert(g, k);
	return k;
oom:
	return cm_errorf(err, "out of memory");
}

int graph_add_dep(struct graph *g, int dep, struct cm_error *err)
{
	int k = g->n - 1;

	if (k < 0)
		return cm_errorf(err, "dep added before any node");
	if (dep < 0 || dep >= k)
		return cm_errorf(err, "node '%s': dep %d is not an earlier node",
				 g->nodes[k].name, dep);
	if (g->mark[dep] == k + 1)
		return cm_errorf(err, "node '%s': duplicate dep '%s'",
				 g->nodes[k].name, g->nodes[dep].name);
	if (grow(&g->deps, &g->cap_deps, g->n_edges + 1, sizeof(int)))
		return cm_errorf(err, "out of memory");
	g->mark[dep] = k + 1;
	g->deps[g->n_edges++] = dep;
	g->dep_off[k + 1] = g->n_edges;
	return 0;
}

int graph_finish(struct graph *g, struct cm_error *err)
{
	uint64_t total = g->fixed_memory;
	int *fill;

	if (g->n == 0)
		return cm_errorf(err, "graph has no nodes");
	if (g->fixed_memory >= GRAPH_MAX_TOTAL)
		return cm_errorf(err, "fixed_memory is too large (limit 2^62 bytes)");
	for (int k = 0; k < g->n; k++) {
		total += g->nodes[k].memory + g->nodes[k].workspace;
		if (total >= GRAPH_MAX_TOTAL)
			return cm_errorf(err, "node '%s': total memory exceeds 2^62 bytes",
					 g->nodes[k].name);
	}
	free(g->user_off);
	free(g->users);
	g->user_off = calloc((size_t)g->n + 1, sizeof(int));
	g->users = malloc(((size_t)g->n_edges + 1) * sizeof(int));
	fill = calloc((size_t)g->n, sizeof(int));
	if (g->user_off == NULL || g->users == NULL || fill == NULL) {
		free(fill);
		return cm_errorf(err, "out of memory");
	}
	for (int e = 0; e < g->n_edges; e++)
		g->user_off[g->deps[e] + 1]++;
	for (int k = 0; k < g->n; k++)
		g->user_off[k + 1] += g->user_off[k];
	/* Scanning users in node order leaves each list ascending. */
	for (int k = 0; k < g->n; k++)
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int i = g->deps[e];

			g->users[g->user_off[i] + fill[i]++] = k;
		}
	free(fill);
	return 0;
}

struct graph *graph_linear(int n, struct cm_error *err)
{
	struct graph *g;
	char name[32], id[32];
	int layers_max = (GRAPH_MAX_NODES - 1) / 2;

	if (n < 1 || n > layers_max) {
		cm_errorf(err, "linear:%d: layer count must be between 1 and %d", n, layers_max);
		return NULL;
	}
	snprintf(id, sizeof(id), "linear:%d", n);
	g = graph_new(id);
	if (g == NULL)
		goto oom;
	g->title = strdup("unit linear training graph");
	if (g->title == NULL)
		goto oom;
	/* f0 .. f(n-1), loss, b(n-1) .. b0; node ids follow that order. */
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		if (graph_add_node(g, name, 1, 1, 0, err) < 0 ||
		    (i > 0 && graph_add_dep(g, i - 1, err)))
			goto fail;
	}
	if (graph_add_node(g, "loss", 1, 1, 1, err) < 0 ||
	    graph_add_dep(g, n - 1, err))
		goto fail;
	for (int i = n - 1; i >= 0; i--) {
		int k;

		snprintf(name, sizeof(name), "b%d", i);
		k = graph_add_node(g, name, 1, 1, 1, err);
		if (k < 0 || graph_add_dep(g, i, err) || graph_add_dep(g, k - 1, err))
			goto fail;
		g->nodes[k].grad_of = i;
	}
	if (graph_finish(g, err))
		goto fail;
	return g;
oom:
	cm_errorf(err, "out of memory");
fail:
	graph_free(g);
	return NULL;
}

struct graph *graph_at_batch(const struct graph *g, uint64_t batch, struct cm_error *err)
{
	__extension__ typedef unsigned __int128 u128;
	struct graph *h = graph_new(g->id);
	double ratio = (double)batch / (double)g->batch_size;

	if (h == NULL) {
		cm_errorf(err, "out of memory");
		return NULL;
	}
	h->fixed_memory = g->fixed_memory;
	h->batch_size = batch;
	h->cost_unit = g->cost_unit;
	for (int k = 0; k < g->n; k++) {
		u128 m = ((u128)g->nodes[k].memory * batch + g->batch_size - 1) / g->batch_size;
		u128 w = ((u128)g->nodes[k].workspace * batch + g->batch_size - 1) / g->batch_size;

		if (m >= GRAPH_MAX_MEMORY || w >= GRAPH_MAX_MEMORY) {
			cm_errorf(err, "node '%s': memory at batch %llu passes 2^53 bytes",
				  g->nodes[k].name, (unsigned long long)batch);
			goto fail;
		}
		if (graph_add_node(h, g->nodes[k].name, g->nodes[k].cost * ratio, (uint64_t)m,
				   g->nodes[k].backward, err) < 0)
			goto fail;
		h->nodes[k].grad_of = g->nodes[k].grad_of;
		h->nodes[k].materialized = g->nodes[k].materialized;
		h->nodes[k].unsaveable = g->nodes[k].unsaveable;
		h->nodes[k].save_cost = g->nodes[k].save_cost * ratio;
		h->nodes[k].workspace = (uint64_t)w;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			if (graph_add_dep(h, g->deps[e], err))
				goto fail;
	}
	if (graph_finish(h, err) == 0)
		return h;
fail:
	graph_free(h);
	return NULL;
}

static const char *const cost_unit_names[] = {
	[GRAPH_COST_FLOPS] = "flops", [GRAPH_COST_S] = "s",
	[GRAPH_COST_MS] = "ms", [GRAPH_COST_US] = "us",
};

double graph_seconds_per_cost(const struct graph *g)
{
	switch (g->cost_unit) {
	case GRAPH_COST_S: return 1;
	case GRAPH_COST_MS: return 1e-3;
	case GRAPH_COST_US: return 1e-6;
	default: return 0;
	}
}

const char *graph_cost_unit_name(const struct graph *g)
{
	return g->cost_unit > GRAPH_COST_NONE && g->cost_unit <= GRAPH_COST_US ?
		cost_unit_names[g->cost_unit] : NULL;
}

int graph_cost_unit_parse(const char *name)
{
	if (strcmp(name, "flop") == 0)
		return GRAPH_COST_FLOPS;
	for (int u = GRAPH_COST_FLOPS; u <= GRAPH_COST_US; u++)
		if (strcmp(cost_unit_names[u], name) == 0)
			return u;
	return -1;
}

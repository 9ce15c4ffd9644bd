/* Derived views of a graph: cost and memory floors, last uses, and the
 * articulation points of the forward graph. */
#include "graph.h"

#include <math.h>
#include <stdlib.h>

#include "../common/num.h"

double graph_total_cost(const struct graph *g)
{
	double sum = 0;

	for (int k = 0; k < g->n; k++)
		sum += g->nodes[k].cost;
	return sum;
}

double graph_round_bound(const struct graph *g, double bound)
{
	for (int k = 0; k < g->n; k++)
		if (g->nodes[k].cost != floor(g->nodes[k].cost) || g->nodes[k].cost > 0x1p52)
			return bound;
	return ceil(bound - num_tol(bound, bound));
}

uint64_t graph_lower_bound(const struct graph *g)
{
	uint64_t best = 0;

	for (int k = 0; k < g->n; k++) {
		uint64_t m = g->nodes[k].memory;

		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			m += g->nodes[g->deps[e]].memory;
		if (m > best)
			best = m;
	}
	return g->fixed_memory + best;
}

void graph_last_use(const struct graph *g, int *last)
{
	for (int i = 0; i < g->n; i++)
		last[i] = graph_nusers(g, i) ? g->users[g->user_off[i + 1] - 1] : i;
}

uint64_t graph_profile_all(const struct graph *g, uint64_t *live_at)
{
	uint64_t live = g->fixed_memory, peak = g->fixed_memory;

	/* Value i is resident from its compute until its last user has run;
	 * a value without users is freed right after it is computed. */
	for (int k = 0; k < g->n; k++) {
		live += g->nodes[k].memory;
		if (live > peak)
			peak = live;
		if (live_at)
			live_at[k] = live;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int i = g->deps[e];

			if (g->users[g->user_off[i + 1] - 1] == k)
				live -= g->nodes[i].memory;
		}
		if (graph_nusers(g, k) == 0)
			live -= g->nodes[k].memory;
	}
	return peak;
}

uint64_t graph_peak_all(const struct graph *g)
{
	return graph_profile_all(g, NULL);
}

int graph_nforward(const struct graph *g)
{
	int f = 0;

	for (int k = 0; k < g->n; k++)
		f += !g->nodes[k].backward;
	return f;
}

/* Undirected adjacency of the forward graph plus the virtual source
 * (vertex n) and sink (vertex n + 1), in CSR form. Backward nodes stay
 * isolated. */
struct ugraph {
	int nv;
	int *off, *adj;
};

static int fwd_edge(const struct graph *g, int i, int k)
{
	return !g->nodes[i].backward && !g->nodes[k].backward;
}

static int ugraph_build(const struct graph *g, struct ugraph *u)
{
	int n = g->n, src = n, snk = n + 1;
	int *deg, *fill = NULL;
	int ok = -1;

	u->nv = n + 2;
	u->off = calloc((size_t)n + 3, sizeof(int));
	deg = calloc((size_t)n + 2, sizeof(int));
	if (u->off == NULL || deg == NULL)
		goto out;
	/* deg[k] counts forward deps first, then every incident edge. */
	for (int k = 0; k < n; k++) {
		int fdeps = 0, fusers = 0;

		if (g->nodes[k].backward)
			continue;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			fdeps += fwd_edge(g, g->deps[e], k);
		for (int e = g->user_off[k]; e < g->user_off[k + 1]; e++)
			fusers += fwd_edge(g, k, g->users[e]);
		deg[k] = fdeps + fusers + (fdeps == 0) + (fusers == 0);
		deg[src] += fdeps == 0;
		deg[snk] += fusers == 0;
	}
	for (int v = 0; v < n + 2; v++)
		u->off[v + 1] = u->off[v] + deg[v];
	u->adj = malloc(((size_t)u->off[n + 2] + 1) * sizeof(int));
	fill = calloc((size_t)n + 2, sizeof(int));
	if (u->adj == NULL || fill == NULL)
		goto out;
#define LINK(a, b) do { \
		u->adj[u->off[a] + fill[a]++] = (b); \
		u->adj[u->off[b] + fill[b]++] = (a); \
	} while (0)
	for (int k = 0; k < n; k++) {
		int fdeps = 0, fusers = 0;

		if (g->nodes[k].backward)
			continue;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			if (fwd_edge(g, g->deps[e], k)) {
				LINK(g->deps[e], k);
				fdeps++;
			}
		for (int e = g->user_off[k]; e < g->user_off[k + 1]; e++)
			fusers += fwd_edge(g, k, g->users[e]);
		if (fdeps == 0)
			LINK(src, k);
		if (fusers == 0)
			LINK(k, snk);
	}
#undef LINK
	ok = 0;
out:
	free(deg);
	free(fill);
	return ok;
}

int graph_articulation_points(const struct graph *g, int **out,
			      struct cm_error *err)
{
	struct ugraph u = { 0 };
	int *disc = NULL, *low = NULL, *parent = NULL, *it = NULL, *stack = NULL;
	char *cut = NULL;
	int count = -1, time = 0, top = 0;

	*out = NULL;
	if (ugraph_build(g, &u))
		goto oom;
	disc = calloc((size_t)u.nv, sizeof(int));
	low = calloc((size_t)u.nv, sizeof(int));
	parent = malloc((size_t)u.nv * sizeof(int));
	it = malloc((size_t)u.nv * sizeof(int));
	stack = malloc((size_t)u.nv * sizeof(int));
	cut = calloc((size_t)u.nv, 1);
	if (!disc || !low || !parent || !it || !stack || !cut)
		goto oom;

	/* Iterative Tarjan from the virtual source, which reaches every
	 * forward node; disc == 0 means unvisited. */
	stack[top++] = g->n;
	disc[g->n] = low[g->n] = ++time;
	parent[g->n] = -1;
	it[g->n] = u.off[g->n];
	while (top > 0) {
		int v = stack[top - 1];

		if (it[v] < u.off[v + 1]) {
			int w = u.adj[it[v]++];

			if (disc[w] == 0) {
				disc[w] = low[w] = ++time;
				parent[w] = v;
				it[w] = u.off[w];
				stack[top++] = w;
			} else if (w != parent[v] && disc[w] < low[v]) {
				low[v] = disc[w];
			}
			continue;
		}
		top--;
		if (parent[v] >= 0) {
			int p = parent[v];

			if (low[v] < low[p])
				low[p] = low[v];
			/* A non-root vertex is a cut vertex when a child cannot
			 * reach above it; the root is the virtual source. */
			if (parent[p] >= 0 && low[v] >= disc[p])
				cut[p] = 1;
		}
	}
	count = 0;
	for (int k = 0; k < g->n; k++)
		count += cut[k];
	*out = malloc(((size_t)count + 1) * sizeof(int));
	if (*out == NULL)
		goto oom;
	count = 0;
	for (int k = 0; k < g->n; k++)
		if (cut[k])
			(*out)[count++] = k;
	goto out;
oom:
	count = cm_errorf(err, "out of memory");
out:
	free(u.off);
	free(u.adj);
	free(disc);
	free(low);
	free(parent);
	free(it);
	free(stack);
	free(cut);
	return count;
}

int graph_forward_chain(const struct graph *g, int *bad)
{
	int prev = -1;

	for (int k = 0; k < g->n; k++) {
		int fdeps = 0, ok_dep = 1;

		if (g->nodes[k].backward)
			continue;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			if (!g->nodes[g->deps[e]].backward) {
				fdeps++;
				ok_dep &= g->deps[e] == prev;
			}
		if (fdeps != (prev >= 0) || !ok_dep) {
			*bad = k;
			return 0;
		}
		prev = k;
	}
	return 1;
}

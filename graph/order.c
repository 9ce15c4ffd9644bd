#include "order.h"

#include <stdlib.h>
#include <string.h>

int graph_is_order(const struct graph *g, const int *order)
{
	int *pos = malloc((size_t)g->n * sizeof(int)), ok = pos != NULL;

	for (int k = 0; ok && k < g->n; k++)
		pos[k] = -1;
	for (int k = 0; ok && k < g->n; k++) {
		ok = order[k] >= 0 && order[k] < g->n && pos[order[k]] < 0;
		if (ok)
			pos[order[k]] = k;
	}
	for (int v = 0; ok && v < g->n; v++)
		for (int e = g->dep_off[v]; ok && e < g->dep_off[v + 1]; e++)
			ok = pos[g->deps[e]] < pos[v];
	free(pos);
	return ok;
}

struct graph *graph_permute(const struct graph *g, const int *order, struct cm_error *err)
{
	struct graph *h = NULL;
	int *pos = NULL;

	if (!graph_is_order(g, order)) {
		cm_errorf(err, "not a topological order of the graph's nodes");
		return NULL;
	}
	h = graph_new(g->id);
	pos = malloc((size_t)g->n * sizeof(int));
	if (h == NULL || pos == NULL || (g->title && (h->title = strdup(g->title)) == NULL)) {
		cm_errorf(err, "out of memory");
		goto fail;
	}
	h->fixed_memory = g->fixed_memory;
	h->batch_size = g->batch_size;
	h->cost_unit = g->cost_unit;
	for (int k = 0; k < g->n; k++)
		pos[order[k]] = k;
	for (int k = 0; k < g->n; k++) {
		const struct graph_node *v = &g->nodes[order[k]];

		if (graph_add_node(h, v->name, v->cost, v->memory, v->backward, err) < 0)
			goto fail;
		h->nodes[k].grad_of = v->grad_of >= 0 ? pos[v->grad_of] : -1;
		h->nodes[k].materialized = v->materialized;
		h->nodes[k].unsaveable = v->unsaveable;
		h->nodes[k].save_cost = v->save_cost;
		h->nodes[k].workspace = v->workspace;
		for (int e = g->dep_off[order[k]]; e < g->dep_off[order[k] + 1]; e++)
			if (graph_add_dep(h, pos[g->deps[e]], err))
				goto fail;
	}
	if (graph_finish(h, err))
		goto fail;
	free(pos);
	return h;
fail:
	free(pos);
	graph_free(h);
	return NULL;
}

uint64_t graph_peak_of_order(const struct graph *g, const int *order)
{
	uint64_t live = g->fixed_memory, peak = g->fixed_memory;
	int *left = malloc((size_t)g->n * sizeof(int));

	if (left == NULL)
		return 0;
	for (int v = 0; v < g->n; v++)
		left[v] = graph_nusers(g, v);
	for (int k = 0; k < g->n; k++) {
		int v = order[k];

		live += g->nodes[v].memory;
		if (live > peak)
			peak = live;
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
			if (--left[g->deps[e]] == 0)
				live -= g->nodes[g->deps[e]].memory;
		if (graph_nusers(g, v) == 0)
			live -= g->nodes[v].memory;
	}
	free(left);
	return peak;
}

/* Deps looked at by all greedy runs together, at most (past it no run
 * starts): about a second, however wide the graph. */
#define ORDER_MAX_WORK 200000000ull

/* One greedy run's state. */
struct greedy {
	const struct graph *g;
	int *need;        /* deps not yet computed, per node */
	int *left;        /* users not yet computed, per node */
	int *ready, nready;
	uint64_t rng;     /* 0: deterministic */
	uint64_t work;    /* deps looked at so far, all runs */
	double jitter;    /* bytes of noise at most, randomized runs */
};

static uint64_t greedy_rnd(struct greedy *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

/* Bytes live after computing v and freeing what only v still needed,
 * minus those before. */
static double greedy_delta(struct greedy *s, int v)
{
	const struct graph *g = s->g;
	double d = graph_nusers(g, v) ? (double)g->nodes[v].memory : 0;

	s->work += (uint64_t)graph_ndeps(g, v) + 1;
	for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
		if (s->left[g->deps[e]] == 1)
			d -= (double)g->nodes[g->deps[e]].memory;
	return d;
}

/* Index in s->ready of the node to compute next. */
static int greedy_pick(struct greedy *s)
{
	const struct graph *g = s->g;
	double best = 0;
	int at = 0;

	for (int r = 0; r < s->nready; r++) {
		int v = s->ready[r];
		double key = greedy_delta(s, v);

		if (s->rng)
			key += s->jitter * (double)(greedy_rnd(s) >> 11) / 9007199254740992.0;
		if (r == 0 || key < best ||
		    (key <= best && g->nodes[v].memory < g->nodes[s->ready[at]].memory)) {
			best = key;
			at = r;
		}
	}
	return at;
}

/* Fills order by one greedy run; returns its peak. */
static uint64_t greedy_run(struct greedy *s, int *order)
{
	const struct graph *g = s->g;

	s->nready = 0;
	for (int v = 0; v < g->n; v++) {
		s->need[v] = graph_ndeps(g, v);
		s->left[v] = graph_nusers(g, v);
		if (s->need[v] == 0)
			s->ready[s->nready++] = v;
	}
	for (int k = 0; k < g->n; k++) {
		int at = greedy_pick(s), v = s->ready[at];

		s->ready[at] = s->ready[--s->nready];
		order[k] = v;
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
			s->left[g->deps[e]]--;
		for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++)
			if (--s->need[g->users[e]] == 0)
				s->ready[s->nready++] = g->users[e];
	}
	return graph_peak_of_order(g, order);
}

uint64_t graph_low_memory_order(const struct graph *g, int restarts, unsigned long long seed,
				int *order, struct cm_error *err)
{
	struct greedy s = { .g = g };
	int *cand = malloc((size_t)g->n * sizeof(int));
	uint64_t best, lb = graph_lower_bound(g), mean = 0;

	s.need = malloc((size_t)g->n * sizeof(int));
	s.left = malloc((size_t)g->n * sizeof(int));
	s.ready = malloc((size_t)g->n * sizeof(int));
	if (cand == NULL || s.need == NULL || s.left == NULL || s.ready == NULL) {
		cm_errorf(err, "out of memory");
		best = 0;
		goto out;
	}
	for (int k = 0; k < g->n; k++) {
		order[k] = k;
		mean += g->nodes[k].memory / (uint64_t)g->n;
	}
	best = graph_peak_of_order(g, order);
	s.rng = seed * 0x9e3779b97f4a7c15ull | 1;
	for (int r = 0; r < (restarts > 1 ? restarts : 1) && best > lb &&
			(r == 0 || s.work < ORDER_MAX_WORK); r++) {
		uint64_t peak;
		uint64_t keep = s.rng;

		if (r == 0)
			s.rng = 0;
		s.jitter = (double)mean * (double)(1 + r % 4) / 2;
		peak = greedy_run(&s, cand);
		s.rng = keep;
		if (peak < best) {
			best = peak;
			memcpy(order, cand, (size_t)g->n * sizeof(int));
		}
		(void)greedy_rnd(&s);
	}
out:
	free(cand);
	free(s.need);
	free(s.left);
	free(s.ready);
	return best;
}

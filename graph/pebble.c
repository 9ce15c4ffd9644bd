/* The black pebble game on a node's ancestors, played backwards.
 *
 * Every plan computes every node v at least once. Let R be values resident
 * together at some moment, and x the member of R computed last before it.
 * At x's compute, R \ {x} and deps(x) are resident, and x after it: the plan
 * holds R U deps(x) then, and R' = (R \ {x}) U deps(x) just before, earlier.
 * From R = {v} at v's compute, such steps lead back to the empty set, and
 * each step's R U deps(x) fits the budget when the plan does. So when no
 * sequence of steps from {v} stays within the budget, no plan fits it. The
 * search below tries them all, depth-first, latest node first (the order
 * of a plan that keeps everything), remembering the sets it has seen. */
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/stop.h"
#include "pebble.h"

struct game {
	int k, nw;           /* v and its ancestors in file order (v last); words a set */
	uint64_t *mem;       /* [k] */
	uint64_t *deps;      /* [k * nw] */
	uint64_t *sets;      /* [limit * nw]: the sets seen */
	uint64_t *held;      /* [limit]: bytes of each */
	long *parent;        /* [limit]: the set it was reached from, -1 for {v} */
	int *via;            /* [limit]: the node whose step reached it */
	long *stack;         /* [limit]: the sets of the depth-first path */
	int *next;           /* [limit]: the next node to try a step by, for each */
	long n, limit, cap;
	unsigned *slot, *stamp, gen; /* hash of the sets: index + 1, live when stamp == gen */
	int *pos, *list;     /* [g->n]: scratch, pos all -1 between uses */
};

static uint64_t *set_at(const struct game *gm, long i)
{
	return gm->sets + i * gm->nw;
}

static unsigned long set_hash(const struct game *gm, const uint64_t *w)
{
	unsigned long h = 1469598103934665603ul;

	for (int i = 0; i < gm->nw; i++) {
		h ^= w[i];
		h *= 1099511628211ul;
		h ^= h >> 29;
	}
	return h;
}

/* Adds w (held bytes, reached from set `from` by x's step) unless seen:
 * 1 added, 0 seen, -1 the limit is reached. */
static int set_add(struct game *gm, const uint64_t *w, uint64_t held, long from, int x)
{
	long i = (long)(set_hash(gm, w) & (unsigned long)(gm->cap - 1));

	for (; gm->stamp[i] == gm->gen; i = (i + 1) & (gm->cap - 1))
		if (memcmp(set_at(gm, gm->slot[i] - 1), w, (size_t)gm->nw * 8) == 0)
			return 0;
	if (gm->n == gm->limit)
		return -1;
	memcpy(set_at(gm, gm->n), w, (size_t)gm->nw * 8);
	gm->held[gm->n] = held;
	gm->parent[gm->n] = from;
	gm->via[gm->n] = x;
	gm->stamp[i] = gm->gen;
	gm->slot[i] = (unsigned)++gm->n;
	return 1;
}

/* v and its ancestors, in file order (topological), as the game's nodes. */
static void game_build(struct game *gm, const struct graph *g, int v)
{
	int k = 0, *pos = gm->pos, *list = gm->list;

	pos[v] = 0;
	list[k++] = v;
	for (int i = 0; i < k; i++)
		for (int j = g->dep_off[list[i]]; j < g->dep_off[list[i] + 1]; j++)
			if (pos[g->deps[j]] < 0) {
				pos[g->deps[j]] = 0;
				list[k++] = g->deps[j];
			}
	for (int u = 0, i = 0; u <= v; u++)
		if (pos[u] >= 0)
			list[i++] = u;
	for (int i = 0; i < k; i++)
		pos[list[i]] = i;
	gm->k = k;
	gm->nw = (k + 63) / 64;
	memset(gm->deps, 0, (size_t)k * (size_t)gm->nw * 8);
	for (int i = 0; i < k; i++) {
		gm->mem[i] = g->nodes[list[i]].memory;
		for (int j = g->dep_off[list[i]]; j < g->dep_off[list[i] + 1]; j++) {
			int d = pos[g->deps[j]];

			gm->deps[(long)i * gm->nw + (d >> 6)] |= 1ull << (d & 63);
		}
	}
	for (int i = 0; i < k; i++)
		pos[list[i]] = -1;
}

/* out = (r \ {x}) U deps(x); returns the bytes of r U deps(x). */
static uint64_t game_step(const struct game *gm, const uint64_t *r, uint64_t held, int x,
			  uint64_t *out)
{
	const uint64_t *d = gm->deps + (long)x * gm->nw;

	for (int i = 0; i < gm->nw; i++) {
		uint64_t add = d[i] & ~r[i];

		out[i] = r[i] | d[i];
		for (; add; add &= add - 1)
			held += gm->mem[i * 64 + __builtin_ctzll((unsigned long long)add)];
	}
	out[x >> 6] &= ~(1ull << (x & 63));
	return held;
}

/* 1 when the last node of the game can be computed within room bytes,
 * 0 when it cannot, -1 when the limit, the deadline or a stop request
 * (common/stop.h) comes first. On 1,
 * *last is the set whose step by *x empties it. */
static int game_fits(struct game *gm, uint64_t room, double deadline, uint64_t *w,
		     long *last, int *x_last)
{
	long sp = 0;

	gm->gen++;
	gm->n = 0;
	memset(w, 0, (size_t)gm->nw * 8);
	w[(gm->k - 1) >> 6] = 1ull << ((gm->k - 1) & 63);
	set_add(gm, w, gm->mem[gm->k - 1], -1, -1);
	gm->stack[sp] = 0;
	gm->next[sp++] = gm->k - 1;
	/* Depth first, one step at a time: the top set's next step (latest
	 * node first) to a set not seen yet goes on the stack. */
	while (sp) {
		long s = gm->stack[sp - 1];
		int x = gm->next[sp - 1];

		if ((gm->n & 1023) == 0 && (cm_clock() > deadline || stop_requested()))
			return -1;
		for (; x >= 0; x--) {
			uint64_t peak, empty = 0;
			int added;

			if (!(set_at(gm, s)[x >> 6] >> (x & 63) & 1))
				continue;
			peak = game_step(gm, set_at(gm, s), gm->held[s], x, w);
			if (peak > room)
				continue;
			for (int i = 0; i < gm->nw; i++)
				empty |= w[i];
			if (empty == 0) {
				*last = s;
				*x_last = x;
				return 1;
			}
			if ((added = set_add(gm, w, peak - gm->mem[x], s, x)) < 0)
				return -1;
			if (added)
				break;
		}
		if (x < 0) {
			sp--;
			continue;
		}
		gm->next[sp - 1] = x - 1;
		gm->stack[sp] = gm->n - 1;
		gm->next[sp++] = gm->k - 1;
	}
	return 0;
}

static void game_close(struct game *gm)
{
	free(gm->mem);
	free(gm->deps);
	free(gm->sets);
	free(gm->held);
	free(gm->parent);
	free(gm->via);
	free(gm->stack);
	free(gm->next);
	free(gm->slot);
	free(gm->stamp);
	free(gm->pos);
	free(gm->list);
}

/* 0, or -1 when g is too large or memory runs out. */
static int game_open(struct game *gm, const struct graph *g, long states)
{
	size_t nw = ((size_t)g->n + 63) / 64;

	memset(gm, 0, sizeof(*gm));
	if (g->n > GRAPH_PEBBLE_MAX_NODES)
		return -1;
	gm->limit = states > 0 ? states : 1;
	if ((size_t)gm->limit * nw * 8 > GRAPH_PEBBLE_BYTES)
		gm->limit = (long)(GRAPH_PEBBLE_BYTES / (nw * 8));
	for (gm->cap = 1; gm->cap < 2 * gm->limit; gm->cap <<= 1)
		;
	gm->mem = malloc((size_t)g->n * sizeof(uint64_t));
	gm->deps = malloc((size_t)g->n * nw * 8);
	gm->sets = malloc((size_t)gm->limit * nw * 8);
	gm->held = malloc((size_t)gm->limit * sizeof(uint64_t));
	gm->parent = malloc((size_t)gm->limit * sizeof(long));
	gm->via = malloc((size_t)gm->limit * sizeof(int));
	gm->stack = malloc((size_t)gm->limit * sizeof(long));
	gm->next = malloc((size_t)gm->limit * sizeof(int));
	gm->slot = malloc((size_t)gm->cap * sizeof(unsigned));
	gm->stamp = calloc((size_t)gm->cap, sizeof(unsigned));
	gm->pos = malloc((size_t)g->n * sizeof(int));
	gm->list = malloc((size_t)g->n * sizeof(int));
	if (!gm->mem || !gm->deps || !gm->sets || !gm->held || !gm->parent || !gm->via ||
	    !gm->stack || !gm->next || !gm->slot || !gm->stamp || !gm->pos || !gm->list) {
		game_close(gm);
		return -1;
	}
	for (int u = 0; u < g->n; u++)
		gm->pos[u] = -1;
	return 0;
}

int graph_pebble_infeasible(const struct graph *g, uint64_t budget, long states,
			    double seconds, int *node, int *ancestors)
{
	double deadline = cm_clock() + seconds;
	struct game gm;
	uint64_t *w = malloc(((size_t)g->n + 63) / 64 * 8);
	long last;
	int rc = 0, x;

	if (w == NULL || budget < g->fixed_memory || game_open(&gm, g, states)) {
		free(w);
		return 0;
	}
	for (int v = g->n - 1; v >= 0 && rc == 0 && cm_clock() <= deadline; v--) {
		game_build(&gm, g, v);
		if (game_fits(&gm, budget - g->fixed_memory, deadline, w, &last, &x) == 0) {
			rc = 1;
			*node = v;
			*ancestors = gm.k - 1;
		}
	}
	game_close(&gm);
	free(w);
	return rc;
}

/* Appends to *steps (grown as needed, *cap entries) the pebbling found
 * for the game's last node v, from nothing back to nothing: the path from
 * {v} to `last`, whose step by x_last empties it, played backwards. Going
 * up from `last` meets the computes in plan order; after each, the inputs
 * the set before it (in the game's direction) does not hold are freed.
 * -1 when out of memory. */
static int game_emit(const struct game *gm, const struct graph *g, long last, int x_last,
		     int **steps, long *n, long *cap)
{
	long len = 1, need;
	int most = 0;

	for (long s = last; s > 0; s = gm->parent[s])
		len++;
	for (int i = 0; i < gm->k; i++)
		most = graph_ndeps(g, gm->list[i]) > most ? graph_ndeps(g, gm->list[i]) : most;
	need = *n + len * (1 + (long)most) + 1;
	if (need > *cap) {
		int *grown = realloc(*steps, (size_t)(2 * need) * sizeof(int));

		if (grown == NULL)
			return -1;
		*steps = grown;
		*cap = 2 * need;
	}
	for (long s = last, x = x_last;; x = gm->via[s], s = gm->parent[s]) {
		const uint64_t *before = set_at(gm, s), *d = gm->deps + x * gm->nw;

		(*steps)[(*n)++] = gm->list[x];
		for (int i = 0; i < gm->nw; i++)
			for (uint64_t f = d[i] & ~before[i]; f; f &= f - 1)
				(*steps)[(*n)++] = -1 - gm->list[i * 64 + __builtin_ctzll((unsigned long long)f)];
		if (s == 0)
			break;
	}
	(*steps)[(*n)++] = -1 - gm->list[gm->k - 1];
	return 0;
}

int graph_pebble_schedule(const struct graph *g, uint64_t budget, long states, double seconds,
			  int **steps, long *n_steps, int *node, int *ancestors)
{
	double deadline = cm_clock() + seconds;
	struct game gm;
	uint64_t *w = malloc(((size_t)g->n + 63) / 64 * 8);
	long last, cap = 0;
	int rc = 1, x;

	*steps = NULL;
	*n_steps = 0;
	if (w == NULL || budget < g->fixed_memory || game_open(&gm, g, states)) {
		free(w);
		return -1;
	}
	for (int v = 0; v < g->n && rc == 1; v++) {
		if (graph_nusers(g, v) > 0)
			continue;
		game_build(&gm, g, v);
		switch (game_fits(&gm, budget - g->fixed_memory, deadline, w, &last, &x)) {
		case 1:
			if (game_emit(&gm, g, last, x, steps, n_steps, &cap))
				rc = -1;
			break;
		case 0:
			rc = 0;
			*node = v;
			*ancestors = gm.k - 1;
			break;
		default:
			rc = -1;
		}
	}
	game_close(&gm);
	free(w);
	if (rc != 1) {
		free(*steps);
		*steps = NULL;
		*n_steps = 0;
	}
	return rc;
}

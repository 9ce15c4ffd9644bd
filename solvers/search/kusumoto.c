/* Kusumoto et al.'s DP over lower sets (NeurIPS 2019, appendix Algorithm 1)
 * and the plan it implies on our training graphs.
 *
 * The paper's graph G = (V, E) is our forward nodes and the edges among
 * them. For a lower set L: delta+(L) the users of L's nodes, delta-(S) the
 * inputs of S's nodes, the boundary d(L) the nodes of L with a user outside
 * L, M and T sums of memory and (discretized) cost. A step L -> L' (V' =
 * L' \ L) keeps d(L') \ L for the backward pass, recomputes V' \ d(L'), and
 * must fit: kept so far + M(V') + Mg(V') + Mg(delta+(L') \ L') +
 * M(delta-(delta+(L')) \ L') <= the DP's budget, where Mg is the memory of a
 * node's gradient in our graph (the paper takes gradients as large as
 * their values: 2M(V'), M(delta+(L') \ L')). The DP array opt[L][t] is the
 * least kept memory over sequences reaching L with recomputation time t.
 *
 * The sequence then becomes our plan (plan_simulate is the judge): the
 * forward nodes once in file order, a value of step i kept when a node of a
 * later step reads it (or it is in the last step), otherwise freed after its
 * last forward user; then the backward nodes in file order, each preceded
 * by the recomputation of the forward values it reads that are not
 * resident (with their missing inputs, in order), every value freed as
 * soon as no later step can need it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../common/stop.h"
#include "../../plan/sim.h"
#include "kusumoto.h"

#define INF UINT64_MAX
/* Largest DP array (lower sets x time units) we allocate: 12 bytes a cell. */
#define MAX_CELLS ((size_t)1 << 24)
/* DP runs of the search over the DP's own budget. */
#define PROBES 16
/* Entries of the DP's last row tried per run, time-centric. */
#define CANDIDATES 32

struct kctx {
	const struct graph *g;
	int nf;               /* forward nodes */
	int *fwd;             /* forward index -> graph index (file order) */
	int *fid;             /* graph index -> forward index, or -1 */
	int *dep_off, *deps;  /* forward inputs of each forward node (forward indices) */
	int *user_off, *users;
	uint64_t *mem, *gmem; /* value and gradient bytes */
	uint32_t *tc;         /* discretized cost */
	double unit;
	int tmax;             /* sum of tc: no sequence recomputes more */
	int words;            /* 64-bit words of a set */
	long nl;              /* lower sets, ascending size; 0 is empty, nl-1 all */
	uint64_t *sets;
	int *size;
	uint64_t *msum, *gsum, *tsum, *xmem; /* M(L), Mg(L), T(L), the delta terms */
	int *bd_off, *bd;     /* boundary of each lower set */
	uint64_t *bmem, *btime;
};

static inline int has(const uint64_t *set, int v)
{
	return (int)((set[v >> 6] >> (v & 63)) & 1);
}

static inline uint64_t *set_of(const struct kctx *c, long i)
{
	return c->sets + (size_t)i * (size_t)c->words;
}

static void ctx_release(struct kctx *c)
{
	free(c->fwd); free(c->fid); free(c->dep_off); free(c->deps);
	free(c->user_off); free(c->users); free(c->mem); free(c->gmem); free(c->tc);
	free(c->sets); free(c->size); free(c->msum); free(c->gsum); free(c->tsum);
	free(c->xmem); free(c->bd_off); free(c->bd); free(c->bmem); free(c->btime);
	memset(c, 0, sizeof(*c));
}

/* The forward nodes in file order, their sizes, and the count of their
 * inputs and users in dep_off and user_off (one place on, for the prefix
 * sums of ctx_edges); *total and *integral describe their costs. A forward
 * node may not read a backward one. Returns 0 or KUSUMOTO_UNSUPPORTED. */
static int ctx_nodes(struct kctx *c, double *total, int *integral, int *ne,
		     struct cm_error *err)
{
	const struct graph *g = c->g;

	for (int k = 0, i = 0; k < g->n; k++) {
		c->fid[k] = g->nodes[k].backward ? -1 : i;
		if (!g->nodes[k].backward)
			c->fwd[i++] = k;
	}
	for (int i = 0; i < c->nf; i++) {
		int k = c->fwd[i];

		c->mem[i] = g->nodes[k].memory;
		*total += g->nodes[k].cost;
		if (!num_eq(g->nodes[k].cost, floor(g->nodes[k].cost)))
			*integral = 0;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int d = g->deps[e];

			if (g->nodes[d].backward) {
				cm_errorf(err, "graph '%s': forward node '%s' reads backward node '%s'",
					  g->id, g->nodes[k].name, g->nodes[d].name);
				return KUSUMOTO_UNSUPPORTED;
			}
			c->dep_off[i + 1]++;
			c->user_off[c->fid[d] + 1]++;
			(*ne)++;
		}
	}
	return 0;
}

/* Gradient sizes from grad_of; a forward node without a gradient node is
 * taken as the paper does, its gradient as large as its value. */
static void ctx_gradients(struct kctx *c)
{
	const struct graph *g = c->g;

	for (int i = 0; i < c->nf; i++)
		c->gmem[i] = INF;
	for (int k = 0; k < g->n; k++) {
		int v = g->nodes[k].grad_of;

		if (g->nodes[k].backward && v >= 0 && c->fid[v] >= 0)
			c->gmem[c->fid[v]] = (c->gmem[c->fid[v]] == INF ? 0 : c->gmem[c->fid[v]]) +
					     g->nodes[k].memory;
	}
	for (int i = 0; i < c->nf; i++)
		if (c->gmem[i] == INF)
			c->gmem[i] = c->mem[i];
}

/* The forward inputs and users of each forward node (forward indices),
 * from the ne edges ctx_nodes counted. Returns 0 or -1. */
static int ctx_edges(struct kctx *c, int ne)
{
	const struct graph *g = c->g;
	int *fill = NULL, r = -1;

	for (int i = 0; i < c->nf; i++) {
		c->dep_off[i + 1] += c->dep_off[i];
		c->user_off[i + 1] += c->user_off[i];
	}
	c->deps = malloc(sizeof(int) * (size_t)(ne + 1));
	c->users = malloc(sizeof(int) * (size_t)(ne + 1));
	fill = calloc((size_t)c->nf, sizeof(int));
	if (!c->deps || !c->users || !fill)
		goto out;
	for (int i = 0; i < c->nf; i++) {
		int k = c->fwd[i], n = 0;

		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int d = c->fid[g->deps[e]];

			c->deps[c->dep_off[i] + n++] = d;
			c->users[c->user_off[d] + fill[d]++] = i;
		}
	}
	r = 0;
out:
	free(fill);
	return r;
}

/* The time axis: whole costs as they are when they add up to at most
 * time_steps units, else units of total / time_steps, each cost rounded
 * up (a node never looks cheaper than it is). */
static void ctx_time_axis(struct kctx *c, int time_steps, double total, int integral)
{
	uint64_t ttot = 0;

	c->unit = 1;
	if (!integral || total > time_steps)
		c->unit = total > 0 ? total / time_steps : 1;
	for (int i = 0; i < c->nf; i++) {
		double u = ceil(c->g->nodes[c->fwd[i]].cost / c->unit - 1e-9);

		c->tc[i] = u > 0 ? (uint32_t)u : 0;
		ttot += c->tc[i];
	}
	c->tmax = (int)ttot;
}

/* The forward graph, its sizes and discretized costs. Returns 0,
 * KUSUMOTO_UNSUPPORTED, or -1. */
static int ctx_graph(struct kctx *c, const struct graph *g, int time_steps,
		     struct cm_error *err)
{
	int nb = 0, ne = 0, integral = 1, r;
	double total = 0;

	c->g = g;
	for (int k = 0; k < g->n; k++)
		nb += g->nodes[k].backward != 0;
	if (nb == 0) {
		cm_errorf(err, "graph '%s' has no backward nodes: the DP schedules the "
			  "gradient computation of a training graph", g->id);
		return KUSUMOTO_UNSUPPORTED;
	}
	c->nf = g->n - nb;
	if (c->nf == 0) {
		cm_errorf(err, "graph '%s' has no forward nodes", g->id);
		return KUSUMOTO_UNSUPPORTED;
	}
	c->fwd = malloc(sizeof(int) * (size_t)c->nf);
	c->fid = malloc(sizeof(int) * (size_t)g->n);
	c->mem = calloc((size_t)c->nf, sizeof(uint64_t));
	c->gmem = calloc((size_t)c->nf, sizeof(uint64_t));
	c->tc = calloc((size_t)c->nf, sizeof(uint32_t));
	c->dep_off = calloc((size_t)c->nf + 1, sizeof(int));
	c->user_off = calloc((size_t)c->nf + 1, sizeof(int));
	if (!c->fwd || !c->fid || !c->mem || !c->gmem || !c->tc || !c->dep_off || !c->user_off)
		return cm_errorf(err, "out of memory");
	if ((r = ctx_nodes(c, &total, &integral, &ne, err)) != 0)
		return r;
	ctx_gradients(c);
	if (ctx_edges(c, ne))
		return cm_errorf(err, "out of memory");
	ctx_time_axis(c, time_steps, total, integral);
	c->words = (c->nf + 63) / 64;
	return 0;
}

/* Appends a copy of set to the family; -1 when out of memory. */
static int family_push(struct kctx *c, long *cap, const uint64_t *set)
{
	if (c->nl == *cap) {
		long ncap = *cap ? 2 * *cap : 64;
		uint64_t *s = realloc(c->sets, sizeof(uint64_t) * (size_t)ncap * (size_t)c->words);

		if (!s)
			return -1;
		c->sets = s;
		*cap = ncap;
	}
	memcpy(set_of(c, c->nl), set, sizeof(uint64_t) * (size_t)c->words);
	c->nl++;
	return 0;
}

/* All lower sets, depth first: node i (in topological order) either out,
 * or in when all its inputs are in. step[i] says which branches of node i
 * are done (0 none, 1 out, 2 both); an explicit stack rather than
 * recursion, whose depth would be nf. Returns 0, 1 when there are more
 * than cap, -1. */
static int enumerate(struct kctx *c, uint64_t *cur, long cap, long *fcap)
{
	char *step = calloc((size_t)c->nf + 1, 1);
	int i = 0, r = 0;

	/* Every prefix of the order is a lower set: nf + 1 of them at least. */
	if (c->nf >= cap)
		r = 1;
	if (step == NULL)
		r = -1;
	while (r == 0 && i >= 0) {
		int in = 1;

		if (i == c->nf) {
			r = c->nl >= cap ? 1 : family_push(c, fcap, cur);
			i--;
			continue;
		}
		if (step[i]++ == 0) {
			i++; /* the set without i */
			continue;
		}
		for (int e = c->dep_off[i]; e < c->dep_off[i + 1] && in; e++)
			in = has(cur, c->deps[e]);
		if (step[i] == 2 && in) {
			cur[i >> 6] |= (uint64_t)1 << (i & 63);
			i++; /* the sets with i */
			continue;
		}
		cur[i >> 6] &= ~((uint64_t)1 << (i & 63));
		step[i--] = 0;
	}
	free(step);
	return r;
}

/* The paper's pruned family: for each node v the lower set generated by v
 * (v and everything that reaches it), with the empty set and V. */
static int family_pruned(struct kctx *c, long *fcap)
{
	uint64_t *gen = calloc((size_t)c->nf * (size_t)c->words, sizeof(uint64_t));
	uint64_t *s = calloc((size_t)c->words, sizeof(uint64_t));
	int whole = 0, r = -1;

	if (!gen || !s)
		goto out;
	if (family_push(c, fcap, s))
		goto out;
	for (int v = 0; v < c->nf; v++) {
		uint64_t *gv = gen + (size_t)v * (size_t)c->words;
		int cnt = 0;

		gv[v >> 6] |= (uint64_t)1 << (v & 63);
		for (int e = c->dep_off[v]; e < c->dep_off[v + 1]; e++) {
			const uint64_t *gd = gen + (size_t)c->deps[e] * (size_t)c->words;

			for (int w = 0; w < c->words; w++)
				gv[w] |= gd[w];
		}
		for (int w = 0; w < c->words; w++)
			cnt += __builtin_popcountll(gv[w]);
		whole |= cnt == c->nf;
		if (family_push(c, fcap, gv))
			goto out;
	}
	if (!whole) {
		for (int v = 0; v < c->nf; v++)
			s[v >> 6] |= (uint64_t)1 << (v & 63);
		if (family_push(c, fcap, s))
			goto out;
	}
	r = 0;
out:
	free(gen);
	free(s);
	return r;
}

static const int *sort_size;

static int by_size(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (sort_size[x] != sort_size[y])
		return sort_size[x] < sort_size[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Reorders the family by size (ties keep the order found), the ascending
 * order the DP's indices rely on, and fills c->size. Returns 0 or -1. */
static int family_sort(struct kctx *c)
{
	long nl = c->nl;
	int *order = malloc(sizeof(int) * (size_t)nl), *sz = malloc(sizeof(int) * (size_t)nl);
	uint64_t *sorted = malloc(sizeof(uint64_t) * (size_t)nl * (size_t)c->words);
	int r = -1;

	c->size = malloc(sizeof(int) * (size_t)nl);
	if (!order || !sz || !sorted || !c->size)
		goto out;
	for (long i = 0; i < nl; i++) {
		const uint64_t *s = set_of(c, i);

		order[i] = (int)i;
		sz[i] = 0;
		for (int w = 0; w < c->words; w++)
			sz[i] += __builtin_popcountll(s[w]);
	}
	sort_size = sz;
	qsort(order, (size_t)nl, sizeof(int), by_size);
	for (long i = 0; i < nl; i++) {
		memcpy(sorted + (size_t)i * (size_t)c->words, set_of(c, order[i]),
		       sizeof(uint64_t) * (size_t)c->words);
		c->size[i] = sz[order[i]];
	}
	free(c->sets);
	c->sets = sorted;
	sorted = NULL;
	r = 0;
out:
	free(order);
	free(sz);
	free(sorted);
	return r;
}

/* The boundary d(L) of set i, the nodes of L with a user outside L:
 * returns their count; with fill, also lists them from c->bd_off[i] and
 * adds up their memory and time (so the first pass can size c->bd). */
static int set_boundary(struct kctx *c, long i, int fill)
{
	const uint64_t *s = set_of(c, i);
	int n = 0;

	for (int v = 0; v < c->nf; v++) {
		int out = 0;

		if (!has(s, v))
			continue;
		for (int e = c->user_off[v]; e < c->user_off[v + 1] && !out; e++)
			out = !has(s, c->users[e]);
		if (!out)
			continue;
		if (fill) {
			c->bd[c->bd_off[i] + n] = v;
			c->bmem[i] += c->mem[v];
			c->btime[i] += c->tc[v];
		}
		n++;
	}
	return n;
}

/* Boundaries of every set, counted then listed. Returns 0 or -1. */
static int family_boundaries(struct kctx *c)
{
	long nbd;

	for (long i = 0; i < c->nl; i++)
		c->bd_off[i + 1] = c->bd_off[i] + set_boundary(c, i, 0);
	nbd = c->bd_off[c->nl];
	c->bd = malloc(sizeof(int) * (size_t)(nbd + 1));
	if (!c->bd)
		return -1;
	for (long i = 0; i < c->nl; i++)
		set_boundary(c, i, 1);
	return 0;
}

/* M(L), Mg(L), T(L) and the delta terms of set i; plus is scratch for
 * one set (delta+(L) \ L). */
static void set_sums(struct kctx *c, long i, uint64_t *plus)
{
	const uint64_t *s = set_of(c, i);

	memset(plus, 0, sizeof(uint64_t) * (size_t)c->words);
	for (int v = 0; v < c->nf; v++) {
		if (!has(s, v))
			continue;
		c->msum[i] += c->mem[v];
		c->gsum[i] += c->gmem[v];
		c->tsum[i] += c->tc[v];
		for (int e = c->user_off[v]; e < c->user_off[v + 1]; e++) {
			int u = c->users[e];

			if (!has(s, u))
				plus[u >> 6] |= (uint64_t)1 << (u & 63);
		}
	}
	/* Gradients of delta+(L) \ L, values of delta-(delta+(L)) \ L. */
	for (int u = 0; u < c->nf; u++) {
		int in = has(plus, u);

		if (in)
			c->xmem[i] += c->gmem[u];
		for (int e = c->user_off[u]; e < c->user_off[u + 1] && !in; e++)
			in = has(plus, c->users[e]);
		if (in && !has(s, u))
			c->xmem[i] += c->mem[u];
	}
}

/* Sorts the family by size and computes the per-set terms of the DP. */
static int family_terms(struct kctx *c)
{
	long nl = c->nl;
	uint64_t *plus = calloc((size_t)c->words, sizeof(uint64_t));
	int r = -1;

	c->msum = calloc((size_t)nl, sizeof(uint64_t));
	c->gsum = calloc((size_t)nl, sizeof(uint64_t));
	c->tsum = calloc((size_t)nl, sizeof(uint64_t));
	c->xmem = calloc((size_t)nl, sizeof(uint64_t));
	c->bmem = calloc((size_t)nl, sizeof(uint64_t));
	c->btime = calloc((size_t)nl, sizeof(uint64_t));
	c->bd_off = calloc((size_t)nl + 1, sizeof(int));
	if (!plus || !c->msum || !c->gsum || !c->tsum || !c->xmem || !c->bmem ||
	    !c->btime || !c->bd_off)
		goto out;
	if (family_sort(c) || family_boundaries(c))
		goto out;
	for (long i = 0; i < nl; i++)
		set_sums(c, i, plus);
	r = 0;
out:
	free(plus);
	return r;
}

static int subset(const struct kctx *c, long i, long j)
{
	const uint64_t *a = set_of(c, i), *b = set_of(c, j);

	for (int w = 0; w < c->words; w++)
		if (a[w] & ~b[w])
			return 0;
	return 1;
}

/* The terms of step i -> j: added recomputation time, added kept memory,
 * the memory the step needs on top of what is kept. */
static void step_terms(const struct kctx *c, long i, long j, uint64_t *dt, uint64_t *dm,
		       uint64_t *need)
{
	const uint64_t *s = set_of(c, i);
	uint64_t mb = 0, tb = 0;

	for (int e = c->bd_off[j]; e < c->bd_off[j + 1]; e++) {
		int v = c->bd[e];

		if (has(s, v)) {
			mb += c->mem[v];
			tb += c->tc[v];
		}
	}
	*dt = (c->tsum[j] - c->tsum[i]) - (c->btime[j] - tb);
	*dm = c->bmem[j] - mb;
	*need = (c->msum[j] - c->msum[i]) + (c->gsum[j] - c->gsum[i]) + c->xmem[j];
}

/* The DP array and its scratch, allocated once for all runs. */
struct dp {
	uint64_t *opt; /* opt[L][t]: least kept memory, INF when unreached */
	int *arg;      /* the lower set the entry was reached from */
	int *lt;       /* reachable entries of one row: times ... */
	uint64_t *lm;  /* ... and kept memory */
};

static void dp_release(struct dp *d)
{
	free(d->opt);
	free(d->arg);
	free(d->lt);
	free(d->lm);
}

static int dp_init(struct dp *d, const struct kctx *c)
{
	size_t cols = (size_t)c->tmax + 1, cells = (size_t)c->nl * cols;

	d->opt = malloc(sizeof(uint64_t) * cells);
	d->arg = malloc(sizeof(int) * cells);
	d->lt = malloc(sizeof(int) * cols);
	d->lm = malloc(sizeof(uint64_t) * cols);
	return d->opt && d->arg && d->lt && d->lm ? 0 : -1;
}

/* One run of Algorithm 1 (lines 1-14) at the DP's budget b. Returns the
 * reachable entries of the last row (V): their times in d->lt, ascending,
 * and count; time-centric keeps only entries that no entry of smaller
 * time beats in kept memory. -1 when the deadline (cm_clock(), 0 for
 * none) or a stop request comes first. */
static int dp_fill(const struct kctx *c, struct dp *d, uint64_t b, int memory_centric,
		   double deadline)
{
	size_t cols = (size_t)c->tmax + 1, cells = (size_t)c->nl * cols;
	long last = c->nl - 1;
	int n = 0;
	uint64_t best = INF;

	for (size_t x = 0; x < cells; x++)
		d->opt[x] = INF;
	d->opt[0] = 0;
	for (long i = 0; i < last; i++) {
		const uint64_t *row = d->opt + (size_t)i * cols;

		if ((i & 63) == 0 && ((deadline > 0 && cm_clock() > deadline) || stop_requested()))
			return -1;
		n = 0;
		best = INF;
		/* The reachable (t, kept) of L. Time-centric keeps only the
		 * entries no other entry beats in both time and memory: they
		 * cannot lead to a smaller final time. */
		for (int x = 0; x <= c->tmax; x++) {
			if (row[x] == INF || (!memory_centric && row[x] >= best))
				continue;
			best = row[x];
			d->lt[n] = x;
			d->lm[n++] = row[x];
		}
		if (n == 0)
			continue;
		for (long j = i + 1; j < c->nl; j++) {
			uint64_t dt, dm, need;
			uint64_t *rj = d->opt + (size_t)j * cols;
			int *aj = d->arg + (size_t)j * cols;

			if (c->size[j] == c->size[i] || !subset(c, i, j))
				continue;
			step_terms(c, i, j, &dt, &dm, &need);
			if (need > b)
				continue;
			for (int k = 0; k < n; k++) {
				size_t t2 = (size_t)d->lt[k] + dt;
				uint64_t m2 = d->lm[k] + dm;

				if (d->lm[k] > b - need)
					continue;
				if (m2 < rj[t2]) {
					rj[t2] = m2;
					aj[t2] = (int)i;
				}
			}
		}
	}
	n = 0;
	best = INF;
	for (int x = 0; x <= c->tmax; x++) {
		uint64_t m = d->opt[(size_t)last * cols + (size_t)x];

		if (m == INF || (!memory_centric && m >= best))
			continue;
		best = m;
		d->lt[n++] = x;
	}
	return n;
}

/* The sequence that reaches (V, t) (lines 17-18): set indices, the empty
 * set first, V last, in seq; returns its length. */
static int dp_sequence(const struct kctx *c, const struct dp *d, int t, int *seq)
{
	size_t cols = (size_t)c->tmax + 1;
	long j = c->nl - 1;
	int k = 0;

	seq[k++] = (int)j;
	while (j != 0) {
		long i = d->arg[(size_t)j * cols + (size_t)t];
		uint64_t dt, dm, need;

		step_terms(c, i, j, &dt, &dm, &need);
		t -= (int)dt;
		j = i;
		seq[k++] = (int)j;
	}
	for (int a = 0, z = k - 1; a < z; a++, z--) {
		int x = seq[a];

		seq[a] = seq[z];
		seq[z] = x;
	}
	return k;
}

/* Scratch for building plans. */
struct builder {
	int *blk, *kept, *lastf, *lastb, *futb, *needed, *mark, *stack, *list;
	uint8_t *res;
};

static void builder_release(struct builder *b)
{
	free(b->blk); free(b->kept); free(b->lastf); free(b->lastb); free(b->futb);
	free(b->needed); free(b->mark); free(b->stack); free(b->list); free(b->res);
}

static int builder_init(struct builder *b, const struct kctx *c)
{
	size_t n = (size_t)c->g->n;

	memset(b, 0, sizeof(*b));
	b->blk = malloc(sizeof(int) * n);
	b->kept = malloc(sizeof(int) * n);
	b->lastf = malloc(sizeof(int) * n);
	b->lastb = malloc(sizeof(int) * n);
	b->futb = malloc(sizeof(int) * n);
	b->needed = malloc(sizeof(int) * n);
	b->mark = malloc(sizeof(int) * n);
	b->stack = malloc(sizeof(int) * n);
	b->list = malloc(sizeof(int) * n);
	b->res = malloc(n);
	return b->blk && b->kept && b->lastf && b->lastb && b->futb && b->needed &&
	       b->mark && b->stack && b->list && b->res ? 0 : -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int emit(struct plan *p, struct builder *b, enum plan_op op, int k)
{
	b->res[k] = op == PLAN_COMPUTE;
	return plan_push(p, op, k, -1);
}

/* Frees every resident forward value no later step can need: one that no
 * remaining backward node reads and that no forward value to be recomputed
 * (needed, not resident) reads. */
static int free_unneeded(const struct kctx *c, struct builder *b, struct plan *p)
{
	for (int i = c->nf - 1; i >= 0; i--) {
		int k = c->fwd[i];

		b->needed[i] = b->futb[i] > 0;
		for (int e = c->user_off[i]; e < c->user_off[i + 1] && !b->needed[i]; e++) {
			int u = c->users[e];

			b->needed[i] = b->needed[u] && !b->res[c->fwd[u]];
		}
		if (!b->needed[i] && b->res[k] && emit(p, b, PLAN_FREE, k))
			return -1;
	}
	return 0;
}

/* What the plan of seq[0 .. len) is built from: no value resident; for
 * each forward value the step that adds it (blk), whether it is kept for
 * the backward pass, its last forward user and how many backward nodes
 * read it (futb); for each backward value its last backward user. */
static void builder_prepare(const struct kctx *c, struct builder *b, const int *seq, int len)
{
	const struct graph *g = c->g;

	memset(b->res, 0, (size_t)g->n);
	for (int s = 1; s < len; s++) {
		const uint64_t *cur = set_of(c, seq[s]), *prev = set_of(c, seq[s - 1]);

		for (int v = 0; v < c->nf; v++)
			if (has(cur, v) && !has(prev, v))
				b->blk[v] = s;
	}
	for (int v = 0; v < c->nf; v++) {
		b->kept[v] = b->blk[v] == len - 1;
		b->lastf[v] = -1;
		b->futb[v] = 0;
		b->mark[v] = 0;
		for (int e = c->user_off[v]; e < c->user_off[v + 1]; e++) {
			int u = c->users[e];

			b->kept[v] |= b->blk[u] > b->blk[v];
			b->lastf[v] = u;
		}
	}
	for (int k = 0; k < g->n; k++) {
		b->lastb[k] = -1;
		if (!g->nodes[k].backward)
			continue;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int d = g->deps[e];

			if (g->nodes[d].backward)
				b->lastb[d] = k;
			else
				b->futb[c->fid[d]]++;
		}
	}
}

/* Forward pass: each node once, values of no later step freed after
 * their last forward user. */
static int emit_forward(const struct kctx *c, struct builder *b, struct plan *p)
{
	for (int i = 0; i < c->nf; i++) {
		int k = c->fwd[i];

		if (emit(p, b, PLAN_COMPUTE, k))
			return -1;
		for (int e = c->dep_off[i]; e < c->dep_off[i + 1]; e++) {
			int d = c->deps[e];

			if (!b->kept[d] && b->lastf[d] == i && emit(p, b, PLAN_FREE, c->fwd[d]))
				return -1;
		}
		if (!b->kept[i] && b->lastf[i] < 0 && emit(p, b, PLAN_FREE, k))
			return -1;
	}
	return 0;
}

/* The forward values backward node k must have recomputed: those it reads
 * that are not resident and, in turn, their inputs that are not, listed in
 * b->list in file order (an input before its users). b->mark == stamp
 * marks a value already listed. Returns how many. */
static int missing_inputs(const struct kctx *c, struct builder *b, int k, int stamp)
{
	const struct graph *g = c->g;
	int top = 0, n = 0;

	for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
		int d = g->deps[e];

		if (!g->nodes[d].backward && !b->res[d] && b->mark[c->fid[d]] != stamp) {
			b->mark[c->fid[d]] = stamp;
			b->stack[top++] = c->fid[d];
		}
	}
	while (top > 0) {
		int v = b->stack[--top];

		b->list[n++] = v;
		for (int e = c->dep_off[v]; e < c->dep_off[v + 1]; e++) {
			int d = c->deps[e];

			if (!b->res[c->fwd[d]] && b->mark[d] != stamp) {
				b->mark[d] = stamp;
				b->stack[top++] = d;
			}
		}
	}
	qsort(b->list, (size_t)n, sizeof(int), cmp_int);
	return n;
}

/* Backward node k: the forward values it lacks recomputed, k itself, then
 * every value freed that no later step needs. */
static int emit_backward(const struct kctx *c, struct builder *b, int k, int stamp,
			 struct plan *p)
{
	const struct graph *g = c->g;
	int n = missing_inputs(c, b, k, stamp);

	for (int x = 0; x < n; x++)
		if (emit(p, b, PLAN_COMPUTE, c->fwd[b->list[x]]))
			return -1;
	if (emit(p, b, PLAN_COMPUTE, k))
		return -1;
	for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
		int d = g->deps[e];

		if (!g->nodes[d].backward)
			b->futb[c->fid[d]]--;
		else if (b->lastb[d] == k && emit(p, b, PLAN_FREE, d))
			return -1;
	}
	if (b->lastb[k] < 0 && emit(p, b, PLAN_FREE, k))
		return -1;
	return free_unneeded(c, b, p);
}

/* Our plan for the sequence seq[0 .. len) (see the top of the file). */
static int build_plan(const struct kctx *c, struct builder *b, const int *seq, int len,
		      struct plan *p)
{
	const struct graph *g = c->g;
	int stamp = 0;

	builder_prepare(c, b, seq, len);
	if (emit_forward(c, b, p) || free_unneeded(c, b, p))
		return -1;
	/* Backward pass in file order, recomputing on demand. */
	for (int k = 0; k < g->n; k++) {
		if (!g->nodes[k].backward)
			continue;
		if (emit_backward(c, b, k, ++stamp, p))
			return -1;
	}
	return 0;
}

void kusumoto_opts_init(struct kusumoto_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->time_steps = KUSUMOTO_TIME_STEPS;
	o->max_lower_sets = KUSUMOTO_MAX_LOWER_SETS;
}

/* The family of lower sets the options ask for. Returns 0,
 * KUSUMOTO_TOO_LARGE, or -1. */
static int ctx_family(struct kctx *c, const struct kusumoto_opts *o, struct cm_error *err)
{
	long fcap = 0, cap = o->max_lower_sets > 0 ? o->max_lower_sets : KUSUMOTO_MAX_LOWER_SETS;

	if (o->exact) {
		uint64_t *cur = calloc((size_t)c->words, sizeof(uint64_t));
		int r;

		if (!cur)
			return cm_errorf(err, "out of memory");
		r = enumerate(c, cur, cap, &fcap);
		free(cur);
		if (r < 0)
			return cm_errorf(err, "out of memory");
		if (r > 0) {
			cm_errorf(err, "graph '%s': its %d forward nodes have more than %ld "
				  "lower sets (the exact DP's cap)", c->g->id, c->nf, cap);
			return KUSUMOTO_TOO_LARGE;
		}
	} else if (family_pruned(c, &fcap)) {
		return cm_errorf(err, "out of memory");
	}
	if (family_terms(c))
		return cm_errorf(err, "out of memory");
	return 0;
}

struct best {
	struct plan *plan;
	int fits;
	double cost;
	uint64_t peak, b;
	int blocks;
	double dp_cost;
};

/* Keeps q in *bs when it is better: fitting first, then cheaper, then
 * lower. Swaps plans so that q is scratch again. */
static void consider(struct best *bs, struct plan **q, const struct sim_result *r,
		     uint64_t b, int blocks, double dp_cost)
{
	int better;

	if (bs->plan->n == 0)
		better = 1;
	else if (r->fits != bs->fits)
		better = r->fits;
	else if (r->fits)
		better = num_lt(r->cost, bs->cost) ||
			 (num_eq(r->cost, bs->cost) && r->peak < bs->peak);
	else
		better = r->peak < bs->peak;
	if (better) {
		struct plan *t = bs->plan;

		bs->plan = *q;
		*q = t;
		bs->fits = r->fits;
		bs->cost = r->cost;
		bs->peak = r->peak;
		bs->b = b;
		bs->blocks = blocks;
		bs->dp_cost = dp_cost;
	}
}

/* One call of kusumoto_run: its inputs, the DP's context and the scratch
 * of the budget search, all released by run_release. */
struct run {
	const struct graph *g;
	uint64_t budget;               /* ours, fixed memory included */
	const struct kusumoto_opts *o;
	struct kctx c;
	struct dp dp;
	struct builder bld;
	struct best bs;                /* the best plan so far */
	struct plan *q;                /* the plan being tried; consider swaps it */
	int *seq;                      /* a sequence of lower sets, nf + 2 entries */
	double fwd_cost;               /* one forward pass, for the DP's estimate */
};

static void run_release(struct run *rn)
{
	plan_free(rn->q);
	plan_free(rn->bs.plan);
	free(rn->seq);
	builder_release(&rn->bld);
	dp_release(&rn->dp);
	ctx_release(&rn->c);
}

/* The context, with a time axis coarse enough for the DP array to stay
 * within MAX_CELLS. Returns 0, KUSUMOTO_UNSUPPORTED, KUSUMOTO_TOO_LARGE,
 * or -1. */
static int run_context(struct run *rn, struct cm_error *err)
{
	struct kctx *c = &rn->c;
	int r, steps = rn->o->time_steps > 0 ? rn->o->time_steps : KUSUMOTO_TIME_STEPS;

	if ((r = ctx_graph(c, rn->g, steps, err)) != 0)
		return r;
	/* The pruned family holds nf + 2 sets at most, each needing a time
	 * axis longer than nf: refused before it is built (the sets alone
	 * take nf^2 / 8 bytes). */
	if (!rn->o->exact && ((size_t)c->nf + 2) * ((size_t)c->nf + 17) > MAX_CELLS) {
		cm_errorf(err, "graph '%s': %d forward nodes are too many for the DP (%zu cells)",
			  rn->g->id, c->nf, MAX_CELLS);
		return KUSUMOTO_TOO_LARGE;
	}
	if ((r = ctx_family(c, rn->o, err)) != 0)
		return r;
	if ((size_t)c->nl * ((size_t)c->tmax + 1) > MAX_CELLS) {
		int fewer = (int)(MAX_CELLS / (size_t)c->nl) - 1 - c->nf;

		if (fewer < 16) {
			cm_errorf(err, "graph '%s': %ld lower sets leave no room for a time "
				  "axis within %zu DP cells", rn->g->id, c->nl, MAX_CELLS);
			return KUSUMOTO_TOO_LARGE;
		}
		ctx_release(c);
		if ((r = ctx_graph(c, rn->g, fewer, err)) != 0 ||
		    (r = ctx_family(c, rn->o, err)) != 0)
			return r;
	}
	return 0;
}

/* Scratch for the budget search. Returns 0 or -1. */
static int run_alloc(struct run *rn)
{
	rn->seq = malloc(sizeof(int) * ((size_t)rn->c.nf + 2));
	rn->q = plan_new();
	rn->bs.plan = plan_new();
	if (!rn->seq || !rn->q || !rn->bs.plan || builder_init(&rn->bld, &rn->c) ||
	    dp_init(&rn->dp, &rn->c))
		return -1;
	for (int i = 0; i < rn->c.nf; i++)
		rn->fwd_cost += rn->g->nodes[rn->c.fwd[i]].cost;
	return 0;
}

/* Line 15 over the n entries dp_fill left at the DP's budget b, with our
 * simulator as the judge of "fits": time-centric takes the least time
 * whose plan fits (trying the first CANDIDATES entries), memory-centric
 * the largest time. Every plan built goes to consider. Returns 0 with
 * *fit set, or -1. */
static int run_pick(struct run *rn, uint64_t b, int n, int *fit, struct cm_error *err)
{
	const struct kctx *c = &rn->c;
	int mc = rn->o->memory_centric;
	struct sim_result res;

	*fit = 0;
	for (int x = 0; x < n && x < CANDIDATES && !*fit; x++) {
		int t = rn->dp.lt[mc ? n - 1 : x];
		int len = dp_sequence(c, &rn->dp, t, rn->seq);

		plan_clear(rn->q);
		if (build_plan(c, &rn->bld, rn->seq, len, rn->q))
			return cm_errorf(err, "out of memory");
		if (plan_simulate(rn->g, rn->q, rn->budget, &res, err))
			return -1;
		if (!res.valid)
			return cm_errorf(err, "internal error: the plan of the DP does not replay: %s",
					 res.why);
		consider(&rn->bs, &rn->q, &res, b, len - 1, rn->fwd_cost + t * c->unit);
		*fit = res.fits;
		if (mc)
			break;
	}
	return 0;
}

/* The DP's budget: first ours without the fixed memory, then a bisection
 * between "no sequence" (too small) and "its plan does not fit" (too
 * large) toward the largest budget whose plan fits; top is so large that
 * the DP never refuses a step. *runs counts the DP runs, on failure too.
 * Returns 0 or -1. */
static int run_search(struct run *rn, int *runs, struct cm_error *err)
{
	const struct kctx *c = &rn->c;
	uint64_t lo = 0, hi, b, top = 0;
	int k, n = 0, r = -1;

	for (int i = 0; i < c->nf; i++)
		top += 2 * (c->mem[i] + c->gmem[i]);
	top += 1;
	hi = top + 1;
	b = rn->budget > rn->g->fixed_memory ? rn->budget - rn->g->fixed_memory : 0;
	if (b > top)
		b = top;
	for (k = 0; k < PROBES; k++) {
		int fit;

		/* A stop request or the deadline ends the search with what it
		 * has. */
		n = dp_fill(c, &rn->dp, b, rn->o->memory_centric, rn->o->deadline);
		if (n < 0)
			break;

		if (run_pick(rn, b, n, &fit, err))
			goto out;
		if (n == 0 || fit)
			lo = b;
		else
			hi = b;
		if (hi - lo <= 1 || lo >= top)
			break;
		b = lo + (hi - lo) / 2;
	}
	k += k < PROBES && n >= 0;
	r = 0;
out:
	*runs = k;
	return r;
}

/* Copies the best plan into p with its replayed figures, and the DP's
 * into *st. Returns 0 or -1. */
static int run_adopt(const struct run *rn, struct plan *p, struct kusumoto_stats *st,
		     struct cm_error *err)
{
	const struct best *bs = &rn->bs;

	for (int i = 0; i < bs->plan->n; i++)
		if (plan_push(p, bs->plan->steps[i].op, bs->plan->steps[i].node, -1))
			return cm_errorf(err, "out of memory");
	snprintf(p->strategy, sizeof(p->strategy), "%s",
		 rn->o->exact ? "kusumoto-exact" : "kusumoto-approx");
	p->budget = rn->budget;
	p->cost = bs->cost;
	p->peak = bs->peak;
	if (st) {
		st->dp_budget = bs->b;
		st->blocks = bs->blocks;
		st->dp_cost = bs->dp_cost;
	}
	return 0;
}

/* kusumoto_run with the reason of a positive return in err. */
static int run_dp(const struct graph *g, uint64_t budget, const struct kusumoto_opts *o,
		  struct plan *p, struct kusumoto_stats *st, struct cm_error *err)
{
	struct kusumoto_opts dflt;
	struct run rn;
	int r, runs = 0;

	memset(&rn, 0, sizeof(rn));
	if (st)
		memset(st, 0, sizeof(*st));
	if (o == NULL) {
		kusumoto_opts_init(&dflt);
		o = &dflt;
	}
	rn.g = g;
	rn.budget = budget;
	rn.o = o;
	if ((r = run_context(&rn, err)) != 0)
		goto out;
	if (st) {
		st->lower_sets = rn.c.nl;
		st->time_units = rn.c.tmax;
		st->unit = rn.c.unit;
	}
	r = -1;
	if (run_alloc(&rn)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (run_search(&rn, &runs, err))
		goto out;
	if (rn.bs.plan->n == 0) {
		r = KUSUMOTO_NO_PLAN;
		if (o->deadline > 0 && cm_clock() > o->deadline)
			cm_errorf(err, "graph '%s': the time limit came before the DP had a plan",
				  g->id);
		else
			cm_errorf(err, "graph '%s': the DP found no sequence of lower sets within "
				  "any budget tried", g->id);
		goto out;
	}
	if (run_adopt(&rn, p, st, err))
		goto out;
	r = 0;
out:
	if (st)
		st->dp_runs = runs;
	run_release(&rn);
	return r;
}

int kusumoto_run(const struct graph *g, uint64_t budget, const struct kusumoto_opts *o,
		 struct plan *p, struct kusumoto_stats *st, char *why, size_t why_len,
		 struct cm_error *err)
{
	/* The DP's steps say why they give up as they say why they fail; an
	 * answer's reason leaves here as why, a failure's as err. */
	struct cm_error e = { "" };
	int r = run_dp(g, budget, o, p, st, &e);

	if (r > 0 && why)
		snprintf(why, why_len, "%s", e.msg);
	else if (r < 0)
		*err = e;
	return r;
}

int kusumoto_plan(const struct graph *g, uint64_t budget, const struct kusumoto_opts *o,
		  struct plan *p, char *why, size_t why_len, struct cm_error *err)
{
	return kusumoto_run(g, budget, o, p, NULL, why, why_len, err);
}

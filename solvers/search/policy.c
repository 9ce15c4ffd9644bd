#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/stop.h"

/* Forward value j, with the given mode, counted in memory row k. */
static int counted(const struct policy_chain *pc, int k, int j, int mode)
{
	size_t at = (size_t)k * (size_t)pc->nf + (size_t)j;

	if (j < 0 || j >= pc->nf || !pc->moded[j])
		return 0;
	return mode == POLICY_KEEP ? pc->in_k[at] : mode == POLICY_PREFETCH ? pc->in_p[at] :
	       pc->in_or[at];
}

void policy_chain_release(struct policy_chain *pc)
{
	free(pc->moded);
	free(pc->recomputable);
	free(pc->prefetchable);
	free(pc->fb);
	free(pc->lb);
	free(pc->ff);
	free(pc->end);
	free(pc->c);
	free(pc->m);
	free(pc->base);
	free(pc->in_k);
	free(pc->in_or);
	free(pc->in_p);
	memset(pc, 0, sizeof(*pc));
}

/* The memory rows of pc (last: each node's last user, or itself). */
static void rows_of(struct policy_chain *pc, const int *last)
{
	const struct graph *g = pc->g;
	int nf = pc->nf;

	for (int k = 0; k < g->n; k++) {
		uint64_t b = g->fixed_memory + g->nodes[k].memory;
		size_t at = (size_t)k * (size_t)nf;
		char *ik = pc->in_k + at, *io = pc->in_or + at, *ip = pc->in_p + at;

		if (k < nf) {
			/* After the compute of forward node k: the values a
			 * forward node from k on reads, the last forward value,
			 * and those kept from before. */
			for (int j = 0; j < k; j++)
				if (pc->ff[j] >= k || (pc->ff[j] < 0 && pc->fb[j] >= 0))
					b += g->nodes[j].memory;
				else if (pc->moded[j])
					ik[j] = 1;
		} else {
			/* After the compute of backward node k: the backward
			 * values still to be read, the last forward value, and
			 * each moded value by its mode. */
			for (int v = nf; v < k; v++)
				if (last[v] >= k && last[v] != v)
					b += g->nodes[v].memory;
			for (int j = 0; j < nf; j++) {
				if (pc->fb[j] < 0 || pc->lb[j] < k)
					continue;
				if (!pc->moded[j]) {
					b += g->nodes[j].memory;
					continue;
				}
				ik[j] = 1;
				io[j] = pc->fb[j] <= k;
				ip[j] = pc->fb[j] - 1 <= k;
			}
		}
		pc->base[k] = b;
	}
}

/* Each forward value's readers, choices and copy time. */
static void readers_of(struct policy_chain *pc, const struct sim_copy *copy)
{
	const struct graph *g = pc->g;
	int nf = pc->nf;

	for (int j = 0; j < nf; j++) {
		pc->fb[j] = pc->lb[j] = pc->ff[j] = -1;
		for (int e = g->user_off[j]; e < g->user_off[j + 1]; e++) {
			int u = g->users[e];

			if (u < nf) {
				pc->ff[j] = u > pc->ff[j] ? u : pc->ff[j];
				continue;
			}
			if (pc->fb[j] < 0 || u < pc->fb[j])
				pc->fb[j] = u;
			if (u > pc->lb[j])
				pc->lb[j] = u;
		}
		pc->moded[j] = pc->fb[j] >= 0 && pc->ff[j] >= 0;
		pc->m[j] = (double)g->nodes[j].memory / copy->bandwidth / copy->seconds_per_cost;
	}
	for (int j = 0; j < nf; j++) {
		pc->recomputable[j] = pc->moded[j];
		for (int e = g->dep_off[j]; e < g->dep_off[j + 1]; e++) {
			int u = g->deps[e];

			if (!pc->moded[u] || pc->lb[u] < pc->fb[j])
				pc->recomputable[j] = 0;
		}
		pc->prefetchable[j] = pc->moded[j] && pc->fb[j] - 1 >= nf;
	}
}

int policy_chain_init(struct policy_chain *pc, const struct graph *g,
		      const struct sim_copy *copy, char *why, size_t len,
		      struct cm_error *err)
{
	int nf = graph_nforward(g), bad = 0, *last = NULL;
	size_t cells;

	memset(pc, 0, sizeof(*pc));
	for (int k = 0; k < g->n; k++)
		if (g->nodes[k].backward != (k >= nf)) {
			snprintf(why, len, "node '%.80s' is a forward node after a backward one "
				 "(the class needs the forward first)", g->nodes[k].name);
			return 0;
		}
	if (nf >= g->n) {
		snprintf(why, len, "the graph has no backward node");
		return 0;
	}
	if (nf < 1) {
		snprintf(why, len, "the graph has no forward node");
		return 0;
	}
	pc->g = g;
	pc->nf = nf;
	pc->chain = graph_forward_chain(g, &bad);
	pc->host_budget = copy->host_budget;
	cells = (size_t)g->n * (size_t)nf;
	pc->moded = calloc((size_t)nf, 1);
	pc->recomputable = calloc((size_t)nf, 1);
	pc->prefetchable = calloc((size_t)nf, 1);
	pc->fb = malloc((size_t)nf * sizeof(int));
	pc->lb = malloc((size_t)nf * sizeof(int));
	pc->ff = malloc((size_t)nf * sizeof(int));
	pc->end = malloc((size_t)nf * sizeof(double));
	pc->c = malloc((size_t)g->n * sizeof(double));
	pc->m = malloc((size_t)nf * sizeof(double));
	pc->base = malloc((size_t)g->n * sizeof(uint64_t));
	pc->in_k = calloc(cells, 1);
	pc->in_or = calloc(cells, 1);
	pc->in_p = calloc(cells, 1);
	last = malloc((size_t)g->n * sizeof(int));
	if (!pc->moded || !pc->recomputable || !pc->prefetchable || !pc->fb || !pc->lb ||
	    !pc->ff || !pc->end ||
	    !pc->c || !pc->m || !pc->base || !pc->in_k || !pc->in_or || !pc->in_p || !last) {
		free(last);
		policy_chain_release(pc);
		return cm_errorf(err, "out of memory");
	}
	graph_last_use(g, last);
	for (int k = 0; k < g->n; k++) {
		pc->c[k] = g->nodes[k].cost;
		if (k < nf)
			pc->forward_time += g->nodes[k].cost;
	}
	readers_of(pc, copy);
	rows_of(pc, last);
	free(last);
	return 1;
}

/* 1 when value j in mode is copied to the host. */
static int offloaded(const struct policy_chain *pc, int j, int mode)
{
	return pc->moded[j] && (mode == POLICY_OFFLOAD || mode == POLICY_PREFETCH);
}

/* The forward step after value j: how long the offload of j outlasts the
 * compute of node j + 1 (the free of j waits for it). */
static double forward_wait(const struct policy_chain *pc, int j, int mode)
{
	if (j + 1 >= pc->nf || !offloaded(pc, j, mode) || pc->m[j] <= pc->c[j + 1])
		return 0;
	return pc->m[j] - pc->c[j + 1];
}

/* The backward step of node b from compute clock *t and copy clock *c:
 * its own fetches after what the copy stream still runs, then the
 * prefetches for the next step; its recomputes; its compute, after the
 * recomputes and after its fetches, own and prefetched (docs/model.md).
 * Only the values lo..hi-1 count, value v in mode mode[v - lo] (mode may
 * be NULL where none of them is fetched or recomputed at b). */
static void backward_step(const struct policy_chain *pc, int b, int lo, int hi, const int *mode,
			  double *t, double *c)
{
	double rc = 0, own = 0, next = 0, x = *t > *c ? *t : *c, a, f;

	for (int j = lo; j < hi; j++) {
		if (!pc->moded[j])
			continue;
		if (pc->fb[j] == b && mode[j - lo] == POLICY_RECOMPUTE)
			rc += pc->c[j];
		else if (pc->fb[j] == b && mode[j - lo] == POLICY_OFFLOAD)
			own += pc->m[j];
		else if (pc->fb[j] == b + 1 && mode[j - lo] == POLICY_PREFETCH)
			next += pc->m[j];
	}
	a = *t + rc;
	f = x + own;
	*t = (a > f ? a : f) + pc->c[b];
	*c = f + next;
}

/* 1 when forward value v is freed after its last forward reader. */
static int freed_in_forward(const struct policy_chain *pc, int v, int mode)
{
	return pc->fb[v] < 0 || (pc->moded[v] && mode != POLICY_KEEP);
}

double policy_time(const struct policy_chain *pc, const int *mode)
{
	const struct graph *g = pc->g;
	double t = 0, c = 0;

	/* The forward: each compute, the offload of its value after what
	 * the copy stream still runs, then the frees of the inputs it read
	 * last, each waiting for its offload. */
	for (int k = 0; k < pc->nf; k++) {
		t += pc->c[k];
		if (offloaded(pc, k, mode[k])) {
			c = (t > c ? t : c) + pc->m[k];
			pc->end[k] = c;
		}
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int v = g->deps[e];

			if (pc->ff[v] == k && offloaded(pc, v, mode[v]) && pc->end[v] > t)
				t = pc->end[v];
		}
	}
	for (int b = pc->nf; b < g->n; b++)
		backward_step(pc, b, 0, pc->nf, mode, &t, &c);
	return t;
}

/* Appends a step, remembering a failure in *bad. */
static void push(struct plan *p, int op, int node, int *bad)
{
	if (plan_push(p, (enum plan_op)op, node, -1))
		*bad = 1;
}

struct plan *policy_plan(const struct policy_chain *pc, const int *mode, struct cm_error *err)
{
	const struct graph *g = pc->g;
	struct plan *p = plan_new();
	int *last = malloc((size_t)g->n * sizeof(int)), bad = p == NULL || last == NULL;
	int nf = pc->nf;

	if (bad)
		goto out;
	graph_last_use(g, last);
	for (int k = 0; k < nf; k++) {
		push(p, PLAN_COMPUTE, k, &bad);
		if (offloaded(pc, k, mode[k]))
			push(p, PLAN_OFFLOAD, k, &bad);
		/* An input read by no later forward node stays only when the
		 * backward reads it from here. */
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int v = g->deps[e];

			if (pc->ff[v] == k && freed_in_forward(pc, v, mode[v]))
				push(p, PLAN_FREE, v, &bad);
		}
		if (graph_nusers(g, k) == 0)
			push(p, PLAN_FREE, k, &bad);
	}
	for (int b = nf; b < g->n; b++) {
		for (int j = 0; j < nf; j++)
			if (pc->moded[j] && pc->fb[j] == b && mode[j] == POLICY_OFFLOAD)
				push(p, PLAN_FETCH, j, &bad);
		for (int j = 0; j < nf; j++)
			if (pc->moded[j] && pc->fb[j] == b + 1 && mode[j] == POLICY_PREFETCH)
				push(p, PLAN_FETCH, j, &bad);
		for (int j = 0; j < nf; j++)
			if (pc->moded[j] && pc->fb[j] == b && mode[j] == POLICY_RECOMPUTE)
				push(p, PLAN_COMPUTE, j, &bad);
		push(p, PLAN_COMPUTE, b, &bad);
		for (int e = g->dep_off[b]; e < g->dep_off[b + 1]; e++) {
			int u = g->deps[e];

			if (u < nf ? pc->lb[u] != b : last[u] != b)
				continue;
			push(p, PLAN_FREE, u, &bad);
			/* and its host copy */
			if (u < nf && offloaded(pc, u, mode[u]))
				push(p, PLAN_FREE, u, &bad);
		}
		if (graph_nusers(g, b) == 0)
			push(p, PLAN_FREE, b, &bad);
	}
out:
	free(last);
	if (bad) {
		plan_free(p);
		cm_errorf(err, "out of memory");
		return NULL;
	}
	return p;
}

/* A state of the dynamic program, which decides the modes from the last
 * forward value down to the first, the order in which the backward runs
 * its steps (POFO's recursion unrolled): the clocks of the backward so
 * far, and what the steps and memory rows below need of the modes above. */
struct dp_state {
	signed char m0, m1; /* the modes of this level's value and the one above */
	int parent;         /* the state above it */
	uint64_t below;     /* bytes that the moded values below this level
			     * keep: guessed at the top, 0 at the bottom */
	uint64_t hmem;      /* bytes offloaded so far (with a host budget) */
	double t, c;        /* the compute and copy clocks (units of cost) */
};

/* What the program does where a value's mode is chosen: the memory rows
 * it completes, and the backward steps it lets run (in file order). */
struct dp_level {
	int *rows, nrows;
	int *steps, nsteps;
	struct dp_state *s;
	int n;
	uint64_t *sums;     /* the kept bytes the moded values below it can add up to, sorted */
	int nsums;
};

static int add_to(int **a, int *n, int v)
{
	int *t = realloc(*a, (size_t)(*n + 1) * sizeof(int));

	if (t == NULL)
		return -1;
	t[(*n)++] = v;
	*a = t;
	return 0;
}

/* The level of memory row k: its moded values but the last three are
 * counted when kept only, and the row is checked where the first of those
 * three is decided (-1: no moded value, nf: none at all);
 * POLICY_UNORDERED when a value before them counts otherwise. */
static int row_level(const struct policy_chain *pc, int k)
{
	size_t at = (size_t)k * (size_t)pc->nf;
	int hi = -1, lo;

	for (int j = 0; j < pc->nf; j++)
		if (pc->moded[j] && (pc->in_k[at + j] || pc->in_or[at + j] || pc->in_p[at + j]))
			hi = j;
	if (hi < 0)
		return -1;
	lo = hi >= 2 ? hi - 2 : 0;
	for (int j = 0; j < lo; j++)
		if (pc->moded[j] && (!pc->in_k[at + j] || pc->in_or[at + j] || pc->in_p[at + j]))
			return POLICY_UNORDERED;
	return lo;
}

/* The moded values whose mode backward step b depends on: those it
 * fetches, recomputes or prefetches for. Their least and greatest into
 * *lo and *hi (nf and -1 for none). */
static void step_values(const struct policy_chain *pc, int b, int *lo, int *hi)
{
	*lo = pc->nf;
	*hi = -1;
	for (int j = 0; j < pc->nf; j++)
		if (pc->moded[j] && (pc->fb[j] == b || pc->fb[j] == b + 1)) {
			*lo = j < *lo ? j : *lo;
			*hi = j;
		}
}

/* Files every row and step under its level (level nf: the start); 1 when
 * a row without moded values is over budget, POLICY_UNORDERED, -1 when out
 * of memory, else 0. */
static int levels_of(const struct policy_chain *pc, uint64_t budget, struct dp_level *lv)
{
	const struct graph *g = pc->g;
	int at = pc->nf;

	for (int k = 0; k < g->n; k++) {
		int r = row_level(pc, k);

		if (r == POLICY_UNORDERED)
			return r;
		if (r < 0 && pc->base[k] > budget)
			return 1;
		if (r >= 0 && add_to(&lv[r].rows, &lv[r].nrows, k))
			return -1;
	}
	for (int b = pc->nf; b < g->n; b++) {
		int lo, hi;

		step_values(pc, b, &lo, &hi);
		at = lo < at ? lo : at;
		if (hi > at + 2)
			return POLICY_UNORDERED;
		if (add_to(&lv[at].steps, &lv[at].nsteps, b))
			return -1;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The sums of each level: lv[j] those of the moded values below j, up to
 * cap. 0, -1 when out of memory, 1 when the levels have more than max in
 * all. */
static int sums_of(const struct policy_chain *pc, struct dp_level *lv, uint64_t cap, long max)
{
	lv[0].sums = malloc(sizeof(uint64_t));
	if (lv[0].sums == NULL)
		return -1;
	lv[0].sums[0] = 0;
	lv[0].nsums = 1;
	for (int j = 1; j <= pc->nf; j++) {
		max -= lv[j - 1].nsums;
		const struct dp_level *p = &lv[j - 1];
		uint64_t mj = pc->moded[j - 1] ? pc->g->nodes[j - 1].memory : 0;
		int n = 0;

		if ((lv[j].sums = malloc(2 * (size_t)p->nsums * sizeof(uint64_t))) == NULL)
			return -1;
		for (int i = 0; i < p->nsums; i++) {
			lv[j].sums[n++] = p->sums[i];
			if (mj && p->sums[i] + mj <= cap)
				lv[j].sums[n++] = p->sums[i] + mj;
		}
		qsort(lv[j].sums, (size_t)n, sizeof(uint64_t), cmp_u64);
		lv[j].nsums = 0;
		for (int i = 0; i < n; i++)
			if (i == 0 || lv[j].sums[i] != lv[j].sums[i - 1])
				lv[j].sums[lv[j].nsums++] = lv[j].sums[i];
		if (lv[j].nsums > max)
			return 1;
	}
	return 0;
}

static int has_sum(const struct dp_level *l, uint64_t v)
{
	return bsearch(&v, l->sums, (size_t)l->nsums, sizeof(uint64_t), cmp_u64) != NULL;
}

/* The state after value j in mode q from s (which holds the modes of
 * j + 1 and j + 2); 0 when it breaks a row, the class or the sums. */
static int step_to(const struct policy_chain *pc, uint64_t budget, const struct dp_level *l,
		   int j, int q, const struct dp_state *s, struct dp_state *to)
{
	const struct graph *g = pc->g;
	uint64_t mj = pc->moded[j] ? g->nodes[j].memory : 0, k = q == POLICY_KEEP ? mj : 0;
	int w[3] = { q, s->m0, s->m1 };
	double wait = forward_wait(pc, j, q);

	if (j + 1 < pc->nf && pc->moded[j + 1] && s->m0 == POLICY_RECOMPUTE && q != POLICY_KEEP)
		return 0;
	if (k > s->below || !has_sum(l, s->below - k))
		return 0;
	*to = (struct dp_state){ .m0 = (signed char)q, .m1 = s->m0, .below = s->below - k,
				 .hmem = s->hmem, .t = s->t + wait, .c = s->c + wait };
	if (pc->host_budget && offloaded(pc, j, q)) {
		to->hmem += mj;
		if (to->hmem > pc->host_budget)
			return 0;
	}
	for (int i = 0; i < l->nrows; i++) {
		uint64_t v = pc->base[l->rows[i]] + to->below;

		for (int d = 0; d < 3; d++)
			if (counted(pc, l->rows[i], j + d, w[d]))
				v += g->nodes[j + d].memory;
		if (v > budget)
			return 0;
	}
	for (int i = 0; i < l->nsteps; i++)
		backward_step(pc, l->steps[i], j, j + 3 < pc->nf ? j + 3 : pc->nf, w, &to->t,
			      &to->c);
	return 1;
}

static int by_key(const void *a, const void *b)
{
	const struct dp_state *x = a, *y = b;

	if (x->m0 != y->m0)
		return x->m0 - y->m0;
	if (x->m1 != y->m1)
		return x->m1 - y->m1;
	if (x->below != y->below)
		return x->below < y->below ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

/* Drops the states that another with the same modes and kept bytes below
 * dominates (clocks and host bytes no later, no more): the rest of the
 * backward is monotone in its clocks. */
static void prune(struct dp_level *l)
{
	int n = 0, from = 0;

	qsort(l->s, (size_t)l->n, sizeof(*l->s), by_key);
	for (int i = 0; i < l->n; i++) {
		const struct dp_state *x = &l->s[i];
		int dominated = 0;

		if (n > 0 && (l->s[n - 1].m0 != x->m0 || l->s[n - 1].m1 != x->m1 ||
			      l->s[n - 1].below != x->below))
			from = n;
		for (int k = from; k < n && !dominated; k++)
			dominated = l->s[k].c <= x->c && l->s[k].hmem <= x->hmem;
		if (!dominated)
			l->s[n++] = *x;
	}
	l->n = n;
}

/* Level j's states from those above (prev). 0, or -1 when out of memory. */
static int expand(const struct policy_chain *pc, uint64_t budget, const struct dp_level *prev,
		  struct dp_level *l, int j)
{
	l->s = malloc(4 * (size_t)(prev->n ? prev->n : 1) * sizeof(*l->s));
	l->n = 0;
	if (l->s == NULL)
		return -1;
	for (int i = 0; i < prev->n; i++)
		for (int q = 0; q < POLICY_MODES; q++) {
			if (pc->moded[j] ? q == POLICY_FIXED : q != POLICY_FIXED)
				continue;
			if ((q == POLICY_RECOMPUTE && !pc->recomputable[j]) ||
			    (q == POLICY_PREFETCH && !pc->prefetchable[j]))
				continue;
			if (step_to(pc, budget, l, j, q, &prev->s[i], &l->s[l->n]))
				l->s[l->n++].parent = i;
		}
	prune(l);
	return 0;
}

/* The states at the top: every sum of kept bytes the values can make,
 * the backward's steps that depend on no mode run. 0, or -1. */
static int start(const struct policy_chain *pc, struct dp_level *top)
{
	top->s = malloc((size_t)top->nsums * sizeof(*top->s));
	if (top->s == NULL)
		return -1;
	top->n = top->nsums;
	for (int i = 0; i < top->n; i++) {
		top->s[i] = (struct dp_state){ .m0 = POLICY_FIXED, .m1 = POLICY_FIXED,
					       .parent = -1, .below = top->sums[i],
					       .t = pc->forward_time, .c = pc->forward_time };
		for (int k = 0; k < top->nsteps; k++)
			backward_step(pc, top->steps[k], 0, pc->nf, NULL, &top->s[i].t,
				      &top->s[i].c);
	}
	return 0;
}

int policy_dp(const struct policy_chain *pc, uint64_t budget, long max_states,
	      double deadline, int *mode, double *time, int *gave_up, struct cm_error *err)
{
	int nf = pc->nf, rc;
	struct dp_level *lv = calloc((size_t)nf + 1, sizeof(*lv));

	*gave_up = 0;
	if (lv == NULL)
		return cm_errorf(err, "out of memory");
	if (!pc->chain) {
		free(lv);
		return POLICY_UNORDERED;
	}
	if ((rc = levels_of(pc, budget, lv)) != 0 || (rc = pc->base[nf] > budget) != 0)
		goto none;
	/* The first backward node's row counts every kept moded value: no
	 * more can be kept than its room. */
	if ((rc = sums_of(pc, lv, budget - pc->base[nf], max_states)) != 0) {
		*gave_up = rc == 1;
		goto none;
	}
	rc = -1;
	if (start(pc, &lv[nf]))
		goto out;
	for (int j = nf - 1; j >= 0; j--) {
		/* expand takes room for four states each before it prunes */
		if (4L * lv[j + 1].n > max_states) {
			*gave_up = 1;
			rc = 0;
			goto out;
		}
		if (expand(pc, budget, &lv[j + 1], &lv[j], j))
			goto out;
		max_states -= lv[j].n;
		if (max_states < 0 || stop_requested() ||
		    (deadline > 0 && cm_clock() > deadline))
			*gave_up = 1;
		if (lv[j].n == 0 || *gave_up) {
			rc = 0;
			goto out;
		}
	}
	rc = 0;
	{
		int best = -1, at;

		for (int i = 0; i < lv[0].n; i++)
			if (lv[0].s[i].below == 0 && (best < 0 || lv[0].s[i].t < lv[0].s[best].t))
				best = i;
		if (best >= 0) {
			*time = lv[0].s[best].t;
			at = best;
			for (int j = 0; j < nf; j++) {
				mode[j] = lv[j].s[at].m0;
				at = lv[j].s[at].parent;
			}
			rc = 1;
		}
	}
	goto out;
none:
	rc = rc == 1 ? 0 : rc;
out:
	for (int j = 0; j <= nf; j++) {
		free(lv[j].rows);
		free(lv[j].steps);
		free(lv[j].s);
		free(lv[j].sums);
	}
	free(lv);
	if (rc == -1)
		cm_errorf(err, "out of memory");
	return rc;
}

uint64_t policy_peak(const struct policy_chain *pc, const int *mode)
{
	const struct graph *g = pc->g;
	uint64_t peak = g->fixed_memory;

	for (int k = 0; k < g->n; k++) {
		uint64_t v = pc->base[k];

		for (int j = 0; j < pc->nf; j++)
			if (counted(pc, k, j, mode[j]))
				v += g->nodes[j].memory;
		if (v > peak)
			peak = v;
	}
	return peak;
}

uint64_t policy_host(const struct policy_chain *pc, const int *mode)
{
	uint64_t h = 0;

	for (int j = 0; j < pc->nf; j++)
		if (offloaded(pc, j, mode[j]))
			h += pc->g->nodes[j].memory;
	return h;
}

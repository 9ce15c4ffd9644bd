#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Forward value j, with the given mode, counted in memory row k. */
static int counted(const struct policy_chain *pc, int k, int j, int mode)
{
	size_t at = (size_t)k * (size_t)pc->nf + (size_t)j;

	if (j < 0 || !pc->moded[j])
		return 0;
	return mode == POLICY_KEEP ? pc->in_k[at] : pc->in_or[at];
}

void policy_chain_release(struct policy_chain *pc)
{
	free(pc->moded);
	free(pc->recomputable);
	free(pc->fb);
	free(pc->lb);
	free(pc->c);
	free(pc->m);
	free(pc->base);
	free(pc->in_k);
	free(pc->in_or);
	memset(pc, 0, sizeof(*pc));
}

/* The memory rows of pc (last: each node's last user, or itself). */
static void rows_of(struct policy_chain *pc, const int *last)
{
	const struct graph *g = pc->g;
	int nf = pc->nf;

	for (int k = 0; k < g->n; k++) {
		uint64_t b = g->fixed_memory + g->nodes[k].memory;
		char *ik = pc->in_k + (size_t)k * (size_t)nf, *io = pc->in_or + (size_t)k * (size_t)nf;

		if (k < nf) {
			/* After the compute of forward node k: its input, and the
			 * values kept from before it. */
			if (k >= 1)
				b += g->nodes[k - 1].memory;
			for (int j = 0; j + 2 <= k; j++)
				ik[j] = pc->moded[j];
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
			}
		}
		pc->base[k] = b;
	}
}

int policy_chain_init(struct policy_chain *pc, const struct graph *g,
		      const struct sim_copy *copy, char *why, size_t len,
		      struct cm_error *err)
{
	int nf = graph_nforward(g), bad, *last = NULL;
	size_t cells;

	memset(pc, 0, sizeof(*pc));
	for (int k = 0; k < g->n; k++)
		if (g->nodes[k].backward != (k >= nf)) {
			snprintf(why, len, "node '%.80s' is a forward node after a backward one "
				 "(the class needs the forward first)", g->nodes[k].name);
			return 0;
		}
	if (nf < 1 || !graph_forward_chain(g, &bad)) {
		snprintf(why, len, "the forward nodes are not a chain%s%.80s%s",
			 nf < 1 ? "" : " (node '", nf < 1 ? "" : g->nodes[bad].name,
			 nf < 1 ? "" : "')");
		return 0;
	}
	pc->g = g;
	pc->nf = nf;
	pc->host_budget = copy->host_budget;
	cells = (size_t)g->n * (size_t)nf;
	pc->moded = calloc((size_t)nf, 1);
	pc->recomputable = calloc((size_t)nf, 1);
	pc->fb = malloc((size_t)nf * sizeof(int));
	pc->lb = malloc((size_t)nf * sizeof(int));
	pc->c = malloc((size_t)g->n * sizeof(double));
	pc->m = malloc((size_t)nf * sizeof(double));
	pc->base = malloc((size_t)g->n * sizeof(uint64_t));
	pc->in_k = calloc(cells, 1);
	pc->in_or = calloc(cells, 1);
	last = malloc((size_t)g->n * sizeof(int));
	if (!pc->moded || !pc->recomputable || !pc->fb || !pc->lb || !pc->c || !pc->m ||
	    !pc->base || !pc->in_k || !pc->in_or || !last) {
		free(last);
		policy_chain_release(pc);
		return cm_errorf(err, "out of memory");
	}
	graph_last_use(g, last);
	for (int k = 0; k < g->n; k++) {
		pc->c[k] = g->nodes[k].cost;
		pc->fixed_time += g->nodes[k].cost;
	}
	for (int j = 0; j < nf; j++) {
		pc->fb[j] = pc->lb[j] = -1;
		for (int e = g->user_off[j]; e < g->user_off[j + 1]; e++) {
			int u = g->users[e];

			if (u < nf)
				continue;
			if (pc->fb[j] < 0 || u < pc->fb[j])
				pc->fb[j] = u;
			if (u > pc->lb[j])
				pc->lb[j] = u;
		}
		pc->moded[j] = pc->fb[j] >= 0 && j + 1 < nf;
		pc->m[j] = (double)g->nodes[j].memory / copy->bandwidth / copy->seconds_per_cost;
	}
	for (int j = 0; j < nf; j++)
		pc->recomputable[j] = pc->moded[j] &&
				      (j == 0 || (pc->moded[j - 1] && pc->lb[j - 1] >= pc->fb[j]));
	rows_of(pc, last);
	free(last);
	return 1;
}

double policy_time(const struct policy_chain *pc, const int *mode)
{
	const struct graph *g = pc->g;
	double t = pc->fixed_time;

	for (int k = 1; k < pc->nf; k++)
		if (pc->moded[k - 1] && mode[k - 1] == POLICY_OFFLOAD && pc->m[k - 1] > pc->c[k])
			t += pc->m[k - 1] - pc->c[k];
	for (int b = pc->nf; b < g->n; b++) {
		double rc = 0, fe = 0;

		for (int j = 0; j < pc->nf; j++) {
			if (!pc->moded[j] || pc->fb[j] != b)
				continue;
			if (mode[j] == POLICY_RECOMPUTE)
				rc += pc->c[j];
			else if (mode[j] == POLICY_OFFLOAD)
				fe += pc->m[j];
		}
		t += rc > fe ? rc : fe;
	}
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
		int j = k - 1;

		push(p, PLAN_COMPUTE, k, &bad);
		if (pc->moded[k] && mode[k] == POLICY_OFFLOAD)
			push(p, PLAN_OFFLOAD, k, &bad);
		/* The input, read by no later forward node, stays only when
		 * the backward reads it from here. */
		if (j >= 0 && (pc->fb[j] < 0 || (pc->moded[j] && mode[j] != POLICY_KEEP)))
			push(p, PLAN_FREE, j, &bad);
		if (graph_nusers(g, k) == 0)
			push(p, PLAN_FREE, k, &bad);
	}
	for (int b = nf; b < g->n; b++) {
		for (int j = 0; j < nf; j++)
			if (pc->moded[j] && pc->fb[j] == b && mode[j] == POLICY_OFFLOAD)
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
			if (u < nf && pc->moded[u] && mode[u] == POLICY_OFFLOAD)
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

/* A state of the dynamic program after the value at its level: the
 * mode chosen there, and what the rest of the chain needs of the modes
 * before it. */
struct dp_state {
	int mode, parent;  /* the mode of this level's value; the state before */
	uint64_t kmem;     /* bytes of the moded values kept so far */
	uint64_t hmem;     /* bytes offloaded so far (with a host budget only) */
	double t;          /* the time so far beyond fixed_time, units of cost */
};

/* What the program checks where a value's mode is chosen: the memory rows
 * and the backward steps whose last moded value it is. */
struct dp_level {
	int *rows, nrows;   /* memory rows (nodes) */
	int *steps, nsteps; /* backward nodes whose step fetches or recomputes */
	struct dp_state *s;
	int n;
};

/* The last moded value of row k, -1 for none; POLICY_UNORDERED when a
 * value before its last two is counted other than when kept. */
static int row_level(const struct policy_chain *pc, int k)
{
	size_t at = (size_t)k * (size_t)pc->nf;
	int hi = -1;

	for (int j = 0; j < pc->nf; j++)
		if (pc->moded[j] && (pc->in_k[at + j] || pc->in_or[at + j]))
			hi = j;
	for (int j = 0; j + 1 < hi; j++)
		if (pc->moded[j] && (!pc->in_k[at + j] || pc->in_or[at + j]))
			return POLICY_UNORDERED;
	return hi;
}

/* The last moded value that backward node b fetches or recomputes, -1 for
 * none; POLICY_UNORDERED when another is more than one before it. */
static int step_level(const struct policy_chain *pc, int b)
{
	int lo = -1, hi = -1;

	for (int j = 0; j < pc->nf; j++)
		if (pc->moded[j] && pc->fb[j] == b) {
			if (lo < 0)
				lo = j;
			hi = j;
		}
	return lo >= 0 && lo + 1 < hi ? POLICY_UNORDERED : hi;
}

static int add_to(int **a, int *n, int v)
{
	int *t = realloc(*a, (size_t)(*n + 1) * sizeof(int));

	if (t == NULL)
		return -1;
	t[(*n)++] = v;
	*a = t;
	return 0;
}

/* Files every row and step under its level; POLICY_UNORDERED, -1 when out
 * of memory, 1 when a row without moded values is over budget, else 0. */
static int levels_of(const struct policy_chain *pc, uint64_t budget, struct dp_level *lv)
{
	const struct graph *g = pc->g;

	for (int k = 0; k < g->n; k++) {
		int r = row_level(pc, k), s = k >= pc->nf ? step_level(pc, k) : -1;

		if (r == POLICY_UNORDERED || s == POLICY_UNORDERED)
			return POLICY_UNORDERED;
		if (r < 0 && pc->base[k] > budget)
			return 1;
		if ((r >= 0 && add_to(&lv[r].rows, &lv[r].nrows, k)) ||
		    (s >= 0 && add_to(&lv[s].steps, &lv[s].nsteps, k)))
			return -1;
	}
	return 0;
}

/* Bytes kept of value j in mode. */
static uint64_t kept(const struct policy_chain *pc, int j, int mode)
{
	return j >= 0 && pc->moded[j] && mode == POLICY_KEEP ? pc->g->nodes[j].memory : 0;
}

/* The state after value j in mode from state s (mode ps at j - 1); 0 when
 * it breaks a row of level j. */
static int step_to(const struct policy_chain *pc, uint64_t budget, const struct dp_level *l,
		   int j, int mode, const struct dp_state *s, int ps, struct dp_state *to)
{
	const struct graph *g = pc->g;
	uint64_t mj = g->nodes[j].memory;

	to->mode = mode;
	to->kmem = s->kmem + kept(pc, j, mode);
	to->hmem = s->hmem + (mode == POLICY_OFFLOAD && pc->host_budget ? mj : 0);
	to->t = s->t;
	if (pc->host_budget && to->hmem > pc->host_budget)
		return 0;
	if (mode == POLICY_OFFLOAD && j + 1 < pc->nf && pc->m[j] > pc->c[j + 1])
		to->t += pc->m[j] - pc->c[j + 1];
	for (int i = 0; i < l->nrows; i++) {
		int k = l->rows[i];
		uint64_t v = pc->base[k] + to->kmem - kept(pc, j - 1, ps) - kept(pc, j, mode);

		if (counted(pc, k, j - 1, ps))
			v += g->nodes[j - 1].memory;
		if (counted(pc, k, j, mode))
			v += mj;
		if (v > budget)
			return 0;
	}
	for (int i = 0; i < l->nsteps; i++) {
		int b = l->steps[i];
		double rc = 0, fe = 0;

		for (int q = j - 1; q <= j; q++) {
			int mq = q == j ? mode : ps;

			if (q < 0 || !pc->moded[q] || pc->fb[q] != b)
				continue;
			if (mq == POLICY_RECOMPUTE)
				rc += pc->c[q];
			else if (mq == POLICY_OFFLOAD)
				fe += pc->m[q];
		}
		to->t += rc > fe ? rc : fe;
	}
	return 1;
}

static int by_mode_time(const void *a, const void *b)
{
	const struct dp_state *x = a, *y = b;

	if (x->mode != y->mode)
		return x->mode - y->mode;
	return (x->t > y->t) - (x->t < y->t);
}

/* Drops the states that another of the same mode dominates (no more time,
 * kept bytes or host bytes): what follows depends on nothing else. */
static void prune(struct dp_level *l)
{
	int n = 0;

	qsort(l->s, (size_t)l->n, sizeof(*l->s), by_mode_time);
	for (int i = 0; i < l->n; i++) {
		int dominated = 0;

		for (int k = n - 1; k >= 0 && l->s[k].mode == l->s[i].mode && !dominated; k--)
			dominated = l->s[k].kmem <= l->s[i].kmem && l->s[k].hmem <= l->s[i].hmem;
		if (!dominated)
			l->s[n++] = l->s[i];
	}
	l->n = n;
}

/* Level j's states from level j - 1's (prev; NULL: the start). 0, or -1
 * when out of memory. */
static int expand(const struct policy_chain *pc, uint64_t budget, const struct dp_level *prev,
		  struct dp_level *l, int j)
{
	static const struct dp_state start = { .mode = POLICY_FIXED, .parent = -1 };
	int np = prev ? prev->n : 1, cap = 3 * np;

	l->s = malloc((size_t)cap * sizeof(*l->s));
	l->n = 0;
	if (l->s == NULL)
		return -1;
	for (int i = 0; i < np; i++) {
		const struct dp_state *s = prev ? &prev->s[i] : &start;

		for (int mode = 0; mode < POLICY_MODES; mode++) {
			if (pc->moded[j] ? mode == POLICY_FIXED : mode != POLICY_FIXED)
				continue;
			if (mode == POLICY_RECOMPUTE &&
			    (!pc->recomputable[j] || (j > 0 && s->mode != POLICY_KEEP)))
				continue;
			if (step_to(pc, budget, l, j, mode, s, s->mode, &l->s[l->n])) {
				l->s[l->n].parent = i;
				l->n++;
			}
		}
	}
	prune(l);
	return 0;
}

int policy_dp(const struct policy_chain *pc, uint64_t budget, long max_states, int *mode,
	      double *time, int *gave_up, struct cm_error *err)
{
	int nf = pc->nf, rc;
	struct dp_level *lv = calloc((size_t)nf, sizeof(*lv));

	*gave_up = 0;
	if (lv == NULL)
		return cm_errorf(err, "out of memory");
	rc = levels_of(pc, budget, lv);
	if (rc) {
		rc = rc == 1 ? 0 : rc;
		goto out;
	}
	for (int j = 0; j < nf; j++) {
		if (expand(pc, budget, j ? &lv[j - 1] : NULL, &lv[j], j)) {
			rc = -1;
			goto out;
		}
		if (lv[j].n > max_states)
			*gave_up = 1;
		if (lv[j].n == 0 || *gave_up)
			goto out;
	}
	{
		int best = 0, at;

		for (int i = 1; i < lv[nf - 1].n; i++)
			if (lv[nf - 1].s[i].t < lv[nf - 1].s[best].t)
				best = i;
		*time = pc->fixed_time + lv[nf - 1].s[best].t;
		at = best;
		for (int j = nf - 1; j >= 0; j--) {
			mode[j] = lv[j].s[at].mode;
			at = lv[j].s[at].parent;
		}
		rc = 1;
	}
out:
	for (int j = 0; j < nf; j++) {
		free(lv[j].rows);
		free(lv[j].steps);
		free(lv[j].s);
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
		if (pc->moded[j] && mode[j] == POLICY_OFFLOAD)
			h += pc->g->nodes[j].memory;
	return h;
}

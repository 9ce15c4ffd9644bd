#include "shave.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../plan/sim.h"

/* Candidates scored exactly per step, the most promising first; the rest
 * only when none of these gains. */
#define SHAVE_EXACT 8
/* Accepted moves between two global clean-ups (stages_drop_unused). */
#define SHAVE_CLEANUP 32

/* A move: S(u, i) = keep for u = a + 1 .. q, all of them !keep now.
 * Dropping (keep 0): i is recomputed in q (its next read, or a stage
 * before where its inputs are at hand, from which it is kept again).
 * Keeping (keep 1): i, recomputed in q, is kept there from a instead. */
struct shave_cand {
	int i, a, q, keep;
	double est;   /* optimistic overflow removed per unit of cost */
};

struct shave {
	const struct graph *g;
	uint64_t budget;
	int squares;          /* shave_opts */
	uint64_t rng;         /* perturbs scores when not 0 */
	struct stages *st;
	int n;
	uint64_t *pk;         /* per stage: its peak, as plan_from_stages runs it */
	uint8_t *stuck;       /* per stage: no candidate there gains */
	int *last;            /* stage simulation: last reader of a value in the stage */
	char *res;            /* stage simulation: resident values */
	uint8_t *ra, *rq;     /* a candidate's R rows for stages a and q */
	int *mark, stamp, *stack;
	struct shave_cand *cand;
};

static uint64_t rnd(struct shave *sh)
{
	sh->rng ^= sh->rng << 13;
	sh->rng ^= sh->rng >> 7;
	sh->rng ^= sh->rng << 17;
	return sh->rng;
}

static double over(const struct shave *sh, uint64_t peak)
{
	return peak > sh->budget ? (double)(peak - sh->budget) : 0;
}

/* What a move pays for: the overflow of a stage, squared (so that moving
 * overflow from a stage with much to one with little gains), in bytes. */
static double pen(const struct shave *sh, uint64_t peak)
{
	double o = over(sh, peak);

	return sh->squares ? o * o / (double)sh->budget : o;
}

/* R of stage t as stages_complete_r makes it, from S(t,.) and S(t+1,.),
 * into row. */
static void complete_row(const struct shave *sh, int t, uint8_t *row)
{
	const struct graph *g = sh->g;
	const struct stages *st = sh->st;

	memset(row, 0, (size_t)t + 1);
	row[t] = 1;
	for (int i = 0; i < t && t + 1 < sh->n; i++)
		if (STAGE_S(st, t + 1, i) && !STAGE_S(st, t, i))
			row[i] = 1;
	for (int k = t; k >= 0; k--) {
		if (!row[k])
			continue;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			if (!STAGE_S(st, t, g->deps[e]))
				row[g->deps[e]] = 1;
	}
}

/* Peak of stage t with R row `row`, as plan_from_stages runs it: kept
 * values not read and not kept further go at the start, every value after
 * its last use in the stage unless kept into t + 1. */
static uint64_t stage_peak(struct shave *sh, int t, const uint8_t *row)
{
	const struct graph *g = sh->g;
	const struct stages *st = sh->st;
	const uint8_t *keep = t + 1 < sh->n ? &STAGE_S(st, t + 1, 0) : NULL;
	uint64_t live = g->fixed_memory, peak = 0;

	for (int i = 0; i <= t; i++)
		sh->last[i] = -1;
	for (int k = 0; k <= t; k++) {
		if (!row[k])
			continue;
		if (sh->last[k] < k)
			sh->last[k] = k;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			sh->last[g->deps[e]] = k;
	}
	for (int i = 0; i <= t; i++) {
		sh->res[i] = i < t && STAGE_S(st, t, i) &&
			     (sh->last[i] >= 0 || (keep && keep[i]));
		live += sh->res[i] ? g->nodes[i].memory : 0;
	}
	for (int k = 0; k <= t; k++) {
		if (!row[k])
			continue;
		if (!sh->res[k]) {
			sh->res[k] = 1;
			live += g->nodes[k].memory;
			peak = live > peak ? live : peak;
		}
		for (int e = g->dep_off[k]; e <= g->dep_off[k + 1]; e++) {
			/* The inputs of k, then k itself. */
			int d = e < g->dep_off[k + 1] ? g->deps[e] : k;

			if (sh->res[d] && sh->last[d] == k && !(keep && keep[d])) {
				sh->res[d] = 0;
				live -= g->nodes[d].memory;
			}
		}
	}
	return peak;
}

static double row_cost(const struct graph *g, const uint8_t *row, int t)
{
	double c = 0;

	for (int k = 0; k <= t; k++)
		c += row[k] ? g->nodes[k].cost : 0;
	return c;
}

/* 1 when stage u computes a reader of i. */
static int read_in(const struct shave *sh, int u, int i)
{
	const struct graph *g = sh->g;

	for (int e = g->user_off[i]; e < g->user_off[i + 1] && g->users[e] <= u; e++)
		if (STAGE_R(sh->st, u, g->users[e]))
			return 1;
	return 0;
}

/* Cost of recomputing i in stage q with what q keeps and computes: i and
 * its missing inputs, recursively. */
static double redo_cost(struct shave *sh, int q, int i)
{
	const struct graph *g = sh->g;
	double c = 0;
	int top = 0;

	sh->stamp++;
	sh->stack[top++] = i;
	sh->mark[i] = sh->stamp;
	while (top > 0) {
		int v = sh->stack[--top];

		c += g->nodes[v].cost;
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int d = g->deps[e];

			if (sh->mark[d] != sh->stamp && !STAGE_S(sh->st, q, d) &&
			    !STAGE_R(sh->st, q, d)) {
				sh->mark[d] = sh->stamp;
				sh->stack[top++] = d;
			}
		}
	}
	return c;
}

/* The candidate stretch of i around stage a's end: from a (its last
 * compute or read at or before a) to q, its next read after, or the end
 * of its keep. Returns 0 when i is not kept out of a. */
static int stretch(const struct shave *sh, int i, int from, struct shave_cand *c)
{
	int a = from, q;

	if (from + 1 >= sh->n || !STAGE_S(sh->st, from + 1, i))
		return 0;
	while (a > i && !STAGE_R(sh->st, a, i) && !read_in(sh, a, i))
		a--;
	for (q = from + 1; q + 1 < sh->n && STAGE_S(sh->st, q + 1, i) && !read_in(sh, q, i); q++)
		;
	c->i = i;
	c->a = a;
	c->q = q;
	c->keep = 0;
	return 1;
}

/* The keep that would replace the recomputation of i in stage q: from
 * the last stage before q where i is resident. Returns 0 when i is not
 * recomputed in q. */
static int keep_stretch(const struct shave *sh, int i, int q, struct shave_cand *c)
{
	int a = q - 1;

	if (i >= q || !STAGE_R(sh->st, q, i))
		return 0;
	while (a > i && !STAGE_R(sh->st, a, i) && !STAGE_S(sh->st, a, i))
		a--;
	c->i = i;
	c->a = a;
	c->q = q;
	c->keep = 1;
	return 1;
}

/* Exact change of the overflow and of the cost if c were applied; the R
 * rows of a and q left in sh->ra, sh->rq, their peaks in *pa, *pq. */
static void evaluate(struct shave *sh, const struct shave_cand *c, double *dover,
		     double *dcost, uint64_t *pa, uint64_t *pq)
{
	const struct graph *g = sh->g;
	struct stages *st = sh->st;
	uint64_t m = g->nodes[c->i].memory;

	for (int u = c->a + 1; u <= c->q; u++)
		STAGE_S(st, u, c->i) = (uint8_t)c->keep;
	complete_row(sh, c->a, sh->ra);
	complete_row(sh, c->q, sh->rq);
	*pa = stage_peak(sh, c->a, sh->ra);
	*pq = stage_peak(sh, c->q, sh->rq);
	for (int u = c->a + 1; u <= c->q; u++)
		STAGE_S(st, u, c->i) = (uint8_t)!c->keep;
	*dcost = row_cost(g, sh->ra, c->a) - row_cost(g, &STAGE_R(st, c->a, 0), c->a) +
		 row_cost(g, sh->rq, c->q) - row_cost(g, &STAGE_R(st, c->q, 0), c->q);
	*dover = pen(sh, *pa) - pen(sh, sh->pk[c->a]) + pen(sh, *pq) - pen(sh, sh->pk[c->q]);
	for (int u = c->a + 1; u < c->q; u++)
		*dover += pen(sh, c->keep ? sh->pk[u] + m : sh->pk[u] - m) - pen(sh, sh->pk[u]);
}

static void apply(struct shave *sh, const struct shave_cand *c, uint64_t pa, uint64_t pq)
{
	struct stages *st = sh->st;
	uint64_t m = sh->g->nodes[c->i].memory;

	for (int u = c->a + 1; u <= c->q; u++)
		STAGE_S(st, u, c->i) = (uint8_t)c->keep;
	memcpy(&STAGE_R(st, c->a, 0), sh->ra, (size_t)c->a + 1);
	memcpy(&STAGE_R(st, c->q, 0), sh->rq, (size_t)c->q + 1);
	for (int u = c->a + 1; u < c->q; u++)
		sh->pk[u] = c->keep ? sh->pk[u] + m : sh->pk[u] - m;
	sh->pk[c->a] = pa;
	sh->pk[c->q] = pq;
}

static void all_peaks(struct shave *sh)
{
	for (int t = 0; t < sh->n; t++)
		sh->pk[t] = stage_peak(sh, t, &STAGE_R(sh->st, t, 0));
}

static double total_overflow(const struct shave *sh)
{
	double s = 0;

	for (int t = 0; t < sh->n; t++)
		s += over(sh, sh->pk[t]);
	return s;
}

static int by_est(const void *x, const void *y)
{
	const struct shave_cand *p = x, *q = y;

	if (p->est != q->est)
		return p->est > q->est ? -1 : 1;
	return p->i - q->i;
}

/* 1 when every input of i is kept into stage r or computed there. */
static int inputs_at_hand(const struct shave *sh, int r, int i)
{
	const struct graph *g = sh->g;

	for (int e = g->dep_off[i]; e < g->dep_off[i + 1]; e++)
		if (!STAGE_S(sh->st, r, g->deps[e]) && !STAGE_R(sh->st, r, g->deps[e]))
			return 0;
	return 1;
}

/* Adds candidate c (recomputed in c->q) with its optimistic score. */
static int add_cand(struct shave *sh, struct shave_cand *c, double mean)
{
	const struct graph *g = sh->g;
	double gain = 0, m = (double)g->nodes[c->i].memory, cost;

	for (int u = c->a; u <= c->q; u++)
		gain += over(sh, sh->pk[u]) < m ? over(sh, sh->pk[u]) : m;
	cost = read_in(sh, c->q, c->i) || (c->q + 1 < sh->n && STAGE_S(sh->st, c->q + 1, c->i)) ?
		       redo_cost(sh, c->q, c->i) : 0;
	c->est = gain / (cost + 1e-6 * mean);
	return gain > 0;
}

/* The candidates around stage t: the stretches through t and those that
 * leave t, each recomputed at its next read or, where the inputs are at
 * hand, at the last such stage before, sorted by optimistic score; then
 * (from *nk on) the keeps that would replace t's recomputations. Returns
 * the count. */
static int candidates(struct shave *sh, int t, int *nk)
{
	const struct graph *g = sh->g;
	double mean = graph_total_cost(g) / (g->n > 0 ? g->n : 1) + 1;
	int nc = 0;

	for (int i = 0; i <= t; i++) {
		for (int from = t - 1; from <= t; from++) {
			struct shave_cand *c = &sh->cand[nc];
			int q;

			if (from < 0 || (from == t - 1 && i == t) || !stretch(sh, i, from, c))
				continue;
			if (from == t && c->a < t)
				continue; /* the stretch through t, counted from t - 1 */
			q = c->q;
			nc += add_cand(sh, c, mean);
			for (int r = q - 1; r > c->a && r >= t; r--)
				if (inputs_at_hand(sh, r, i)) {
					sh->cand[nc] = *c;
					sh->cand[nc].q = r;
					nc += add_cand(sh, &sh->cand[nc], mean);
					break;
				}
		}
	}
	qsort(sh->cand, (size_t)nc, sizeof(*sh->cand), by_est);
	*nk = nc;
	for (int i = 0; i < t; i++)
		nc += keep_stretch(sh, i, t, &sh->cand[nc]);
	return nc;
}

/* One move at stage t: the candidate with the most overflow removed per
 * unit of cost, exactly (every keep, the most promising drops). Returns 1
 * when one was applied, 0 when none removes any. */
static int step(struct shave *sh, int t)
{
	int nk, nc = candidates(sh, t, &nk), best = -1;
	double best_score = 0, mean = graph_total_cost(sh->g) / sh->n + 1;
	uint64_t best_pa = 0, best_pq = 0;

	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (int k = pass ? SHAVE_EXACT : 0; k < nc; k++) {
			double dover, dcost, score;
			uint64_t pa, pq;

			/* First pass: the first drops and every keep; the
			 * other drops when none of them gains. */
			if (k < nk && (pass ? 0 : k >= SHAVE_EXACT))
				continue;
			if (k >= nk && pass)
				break;
			evaluate(sh, &sh->cand[k], &dover, &dcost, &pa, &pq);
			if (dover >= -1e-9)
				continue;
			score = -dover / (dcost > 0 ? dcost + 1e-6 * mean : 1e-6 * mean);
			if (sh->rng)
				score *= 0.5 + (double)(rnd(sh) % 1024) / 1024;
			if (best < 0 || score > best_score) {
				best = k;
				best_score = score;
				best_pa = pa;
				best_pq = pq;
			}
		}
	if (best < 0)
		return 0;
	/* evaluate() left the last candidate's rows: redo the best's. */
	{
		double dover, dcost;

		evaluate(sh, &sh->cand[best], &dover, &dcost, &best_pa, &best_pq);
	}
	apply(sh, &sh->cand[best], best_pa, best_pq);
	return 1;
}

/* Once the plan fits: keeps that replace recomputations, wherever they
 * lower the cost and the plan still fits, until none does. Returns the
 * number applied. */
static int economize(struct shave *sh, double deadline)
{
	int applied = 0, again = 1;

	while (again) {
		again = 0;
		for (int q = 1; q < sh->n; q++) {
			if (deadline > 0 && cm_clock() > deadline)
				return applied;
			for (int i = 0; i < q; i++) {
				struct shave_cand c;
				double dover, dcost;
				uint64_t pa, pq;

				if (!keep_stretch(sh, i, q, &c))
					continue;
				evaluate(sh, &c, &dover, &dcost, &pa, &pq);
				if (dover > 1e-9 || dcost >= -1e-9)
					continue;
				apply(sh, &c, pa, pq);
				applied++;
				again = 1;
			}
		}
	}
	return applied;
}

static int worst_stage(const struct shave *sh)
{
	int best = -1;

	for (int t = 0; t < sh->n; t++)
		if (sh->pk[t] > sh->budget && !sh->stuck[t] &&
		    (best < 0 || sh->pk[t] > sh->pk[best]))
			best = t;
	return best;
}

/* Moves at the worst stage until the plan fits budget sh->budget, no
 * move gains, or the deadline passes. Returns the number of moves. */
static int shave_to(struct shave *sh, double deadline)
{
	int moves = 0, since = 0;

	memset(sh->stuck, 0, (size_t)sh->n);
	for (;;) {
		int t = worst_stage(sh);

		if (t < 0 || (deadline > 0 && cm_clock() > deadline))
			break;
		if (!step(sh, t)) {
			sh->stuck[t] = 1;
			continue;
		}
		moves++;
		memset(sh->stuck, 0, (size_t)sh->n);
		if (++since >= SHAVE_CLEANUP) {
			since = 0;
			stages_drop_unused(sh->g, sh->st);
			all_peaks(sh);
		}
	}
	stages_drop_unused(sh->g, sh->st);
	all_peaks(sh);
	return moves;
}

static double total_cost(const struct shave *sh)
{
	double c = 0;

	for (int t = 0; t < sh->n; t++)
		c += row_cost(sh->g, &STAGE_R(sh->st, t, 0), t);
	return c;
}

/* Once the plan fits: for each recomputation, the dearest first, keep the
 * value instead and shave again (the drops then chosen are the cheapest
 * that make room); kept when the plan still fits and costs less. Until a
 * round gains nothing or the deadline. Returns the number kept, -1 when
 * out of memory. */
static int refine(struct shave *sh, double deadline)
{
	size_t cells = (size_t)sh->n * (size_t)sh->n;
	uint8_t *R0 = malloc(cells ? cells : 1), *S0 = malloc(cells ? cells : 1);
	struct shave_cand *list = malloc(((size_t)sh->n + 1) * sizeof(*list));
	int kept = 0, again = 1;

	if (!R0 || !S0 || !list) {
		kept = -1;
		goto out;
	}
	while (again) {
		double cost = total_cost(sh);
		int nl = 0;

		again = 0;
		/* The recomputations, dearest first (est: the value's cost). */
		for (int q = 1; q < sh->n && nl < sh->n; q++)
			for (int i = 0; i < q && nl < sh->n; i++)
				if (keep_stretch(sh, i, q, &list[nl])) {
					list[nl].est = sh->g->nodes[i].cost;
					nl++;
				}
		qsort(list, (size_t)nl, sizeof(*list), by_est);
		for (int k = 0; k < nl; k++) {
			double dover, dcost, after;
			uint64_t pa, pq;

			if (deadline > 0 && cm_clock() > deadline)
				goto out;
			/* Still a recomputation after the earlier keeps? */
			if (!keep_stretch(sh, list[k].i, list[k].q, &list[k]))
				continue;
			memcpy(R0, sh->st->R, cells);
			memcpy(S0, sh->st->S, cells);
			evaluate(sh, &list[k], &dover, &dcost, &pa, &pq);
			apply(sh, &list[k], pa, pq);
			shave_to(sh, deadline);
			after = total_cost(sh);
			if (total_overflow(sh) <= 0 && after < cost - 1e-9) {
				cost = after;
				kept++;
				again = 1;
				continue;
			}
			memcpy(sh->st->R, R0, cells);
			memcpy(sh->st->S, S0, cells);
			all_peaks(sh);
		}
	}
out:
	free(R0);
	free(S0);
	free(list);
	return kept;
}

static uint64_t max_peak(const struct shave *sh)
{
	uint64_t m = 0;

	for (int t = 0; t < sh->n; t++)
		m = sh->pk[t] > m ? sh->pk[t] : m;
	return m;
}

/* The working arrays of sh (g, n set); -1 when out of memory (free them
 * with shave_free either way). */
static int shave_alloc(struct shave *sh)
{
	size_t n = (size_t)sh->n + 1;

	sh->pk = malloc(n * sizeof(uint64_t));
	sh->stuck = calloc(n, 1);
	sh->last = malloc(n * sizeof(int));
	sh->res = malloc(n);
	sh->ra = malloc(n);
	sh->rq = malloc(n);
	sh->mark = calloc(n, sizeof(int));
	sh->stack = malloc(n * sizeof(int));
	/* Per value at most four drops (two stretches, two recompute
	 * stages each) and one keep. */
	sh->cand = malloc(5 * n * sizeof(*sh->cand));
	return sh->pk && sh->stuck && sh->last && sh->res && sh->ra && sh->rq && sh->mark &&
	       sh->stack && sh->cand ? 0 : -1;
}

static void shave_free(struct shave *sh)
{
	free(sh->pk);
	free(sh->stuck);
	free(sh->last);
	free(sh->res);
	free(sh->ra);
	free(sh->rq);
	free(sh->mark);
	free(sh->stack);
	free(sh->cand);
}

/* Shaves to budgets from the plan's peak down to sh->budget in `steps`
 * steps; each step shaves what the last left. Returns the moves made. */
static int descend(struct shave *sh, int steps, double deadline)
{
	uint64_t budget = sh->budget, top = max_peak(sh);
	int moves = 0;

	for (int k = 1; k <= steps; k++) {
		sh->budget = top > budget ? budget + (top - budget) / (uint64_t)steps *
							(uint64_t)(steps - k) : budget;
		all_peaks(sh);
		moves += shave_to(sh, deadline);
		/* Stuck on the way down: straight to the budget. */
		if (total_overflow(sh) > 0 && k < steps - 1)
			k = steps - 1;
	}
	sh->budget = budget;
	all_peaks(sh);
	return moves;
}

int shave_stages(const struct graph *g, uint64_t budget, struct stages *st,
		 const struct shave_opts *o, struct shave_stats *ss, struct cm_error *err)
{
	struct shave sh = { .g = g, .budget = budget, .st = st, .n = g->n,
			    .squares = o->squares };
	double t0 = cm_clock();
	int rc = -1;

	memset(ss, 0, sizeof(*ss));
	sh.rng = o->seed ? o->seed * 0x9e3779b97f4a7c15ull + 1 : 0;
	if (shave_alloc(&sh)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	stages_drop_unused(g, st);
	all_peaks(&sh);
	ss->first_overflow = total_overflow(&sh);
	ss->moves = descend(&sh, o->descent > 1 ? o->descent : 1, o->deadline);
	if (total_overflow(&sh) <= 0 && economize(&sh, o->deadline) > 0) {
		stages_drop_unused(g, st);
		all_peaks(&sh);
	}
	if (total_overflow(&sh) <= 0 && o->refine && refine(&sh, o->deadline) < 0) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	ss->final_overflow = total_overflow(&sh);
	ss->seconds = cm_clock() - t0;
	rc = ss->final_overflow <= 0;
out:
	shave_free(&sh);
	return rc;
}

/* The plan of st: its cost and overflow (summed over stages, as
 * plan_from_stages runs them). Returns 0, or -1 with err set. */
static int shave_measure(const struct graph *g, uint64_t budget, const struct stages *st,
			 double *cost, double *overflow, struct cm_error *err)
{
	struct shave sh = { .g = g, .budget = budget, .st = (struct stages *)st, .n = g->n };
	size_t n = (size_t)g->n + 1;
	int rc = -1;

	sh.pk = malloc(n * sizeof(uint64_t));
	sh.last = malloc(n * sizeof(int));
	sh.res = malloc(n);
	if (sh.pk && sh.last && sh.res) {
		all_peaks(&sh);
		*overflow = total_overflow(&sh);
		*cost = 0;
		for (int t = 0; t < g->n; t++)
			*cost += row_cost(g, &STAGE_R(st, t, 0), t);
		rc = 0;
	} else {
		cm_errorf(err, "out of memory");
	}
	free(sh.pk);
	free(sh.last);
	free(sh.res);
	return rc;
}

/* The eight variants: the overflow or its square (bit 0), descents of
 * 1, 3, 5 or 10 steps (bits 1-2). */
#define SHAVE_CLASSES 8

/* Attempt k's variant: the first SHAVE_VARIANTS deterministic, then random
 * ones, every other one of the class whose attempts came closest so far
 * (best_class), the others of each class in turn. Returns the class. */
static int shave_variant(int k, unsigned long long seed, int best_class, struct shave_opts *so)
{
	static const int descents[] = { 1, 3, 5, 10 };
	int r = k - SHAVE_VARIANTS, c = k;

	if (r >= 0)
		c = r % 2 ? best_class : (SHAVE_VARIANTS + r / 2) % SHAVE_CLASSES;
	so->squares = c & 1;
	so->descent = descents[c >> 1];
	so->seed = k < SHAVE_VARIANTS ? 0 : seed + (unsigned long long)k;
	return c;
}

/* Refines the fitting st (shave_opts.refine) until the deadline, for
 * `span` seconds at most (at least one). Returns 0, or -1 with err set. */
static int refine_best(const struct graph *g, uint64_t budget, struct stages *st,
		       double deadline, double span, struct cm_error *err)
{
	struct shave_opts so = { .refine = 1 };
	struct shave_stats one;
	double now = cm_clock();

	so.deadline = now + (span > 1 ? span : 1);
	if (deadline > 0 && so.deadline > deadline)
		so.deadline = deadline;
	if (so.deadline <= now)
		return 0;
	return shave_stages(g, budget, st, &so, &one, err) < 0 ? -1 : 0;
}

int shave_best(const struct graph *g, uint64_t budget, struct stages *st, double deadline,
	       double fit_deadline, int attempts, unsigned long long seed,
	       struct shave_stats *ss, struct cm_error *err)
{
	struct stages start = { 0 }, trial = { 0 }, swap;
	struct shave_stats one, dummy;
	size_t cells = (size_t)g->n * (size_t)g->n;
	double best_cost = 0, best_over = -1, cost, over, closest[SHAVE_CLASSES];
	int rc = -1, best_class = 0;

	ss = ss ? ss : &dummy;
	memset(ss, 0, sizeof(*ss));
	for (int c = 0; c < SHAVE_CLASSES; c++)
		closest[c] = HUGE_VAL;
	if (stages_init(&start, g->n, err) || stages_init(&trial, g->n, err))
		goto out;
	memcpy(start.S, st->S, cells);
	for (int k = 0; k < attempts; k++) {
		struct shave_opts so = { .deadline = deadline };
		double now = cm_clock();

		if (k > 0 && ((deadline > 0 && now >= deadline) ||
			      (best_over == 0 && (k >= SHAVE_VARIANTS ||
						  (fit_deadline > 0 && now >= fit_deadline)))))
			break;
		int c = shave_variant(k, seed, best_class, &so);

		memcpy(trial.S, start.S, cells);
		stages_complete_r(g, &trial);
		if (shave_stages(g, budget, &trial, &so, &one, err) < 0 ||
		    shave_measure(g, budget, &trial, &cost, &over, err))
			goto out;
		if (ss->attempts++ == 0)
			ss->first_overflow = one.first_overflow;
		closest[c] = fmin(closest[c], over);
		if (closest[c] < closest[best_class])
			best_class = c;
		if (best_over < 0 || num_lt(over, best_over) ||
		    (num_le(over, best_over) && num_lt(cost, best_cost))) {
			swap = *st;
			*st = trial;
			trial = swap;
			best_over = over;
			best_cost = cost;
			ss->moves = one.moves;
			ss->final_overflow = over;
			ss->best_variant = k;
		}
	}
	/* The refinement ends where it gains nothing more, seconds at most
	 * on 1,000 nodes; a quarter of the time left bounds it. */
	if (best_over == 0 &&
	    refine_best(g, budget, st, deadline, deadline > 0 ? (deadline - cm_clock()) / 4 : 60, err))
		goto out;
	rc = best_over == 0;
out:
	stages_release(&start);
	stages_release(&trial);
	return rc;
}

#include "lns.h"
#include "lns_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/mem.h"
#include "../../common/num.h"
#include "../../common/stop.h"
#include "../../graph/order.h"
#include "../../plan/sim.h"
#include "repair.h"
#include "restage.h"
#include "../milp/window.h"

/* The search's state. */
struct lns {
	const struct graph *g;
	uint64_t budget;
	const struct lns_opts *o;
	struct stages inc;
	struct plan *plan;     /* the incumbent's plan, replayed */
	uint8_t *free;         /* n flags for the window's free values */
	int *dist, *queue;
	uint64_t rng;
	double t0, deadline;
	double *hist_t, *hist_c; /* improvements: time and cost */
	size_t nhist, cap_hist;
	struct lns_stats *st;
	int shrink;            /* windows are halved this many times (after timeouts) */
	int crashes_in_row;    /* windows on which the backend failed, in a row */
	double sec_per_cell;   /* a window's build time per cell (window_cells),
				* measured; LNS_SEC_PER_CELL before any */
	double reserve;        /* seconds kept before the deadline for what
				* follows a solve (the splice: as long as
				* staging the start took) */
};

/* Seconds a window's build takes per cell of its index arrays, and
 * staging the start per cell of its n x n matrices, before any is
 * measured: about 3-4e-8 on the loaded 2-core machine of the bench
 * (page faults included), doubled and more to be safe. */
#define LNS_SEC_PER_CELL 1e-7
/* The share of the time left a window's build may take: the rest is the
 * solver's. */
#define LNS_BUILD_SHARE 0.4
/* Seconds staging the start (restage_plan and a replay) takes per
 * cell of the n x n matrices: 2e-8 measured on linear:5000 (10,001
 * nodes, 2 s), doubled. */
#define LNS_STAGE_SEC_PER_CELL 4e-8
/* Seconds left below which no window starts. */
#define LNS_MIN_LEFT 0.2

static uint64_t rnd(struct lns *l)
{
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return l->rng;
}

/* 1 when a stop request or the caller's halt (lns_opts) ends the search
 * with what it has. */
static int halted(const struct lns *l)
{
	return stop_requested() || (l->o->halt && l->o->halt(l->o->halt_ctx));
}

/* Cost of the incumbent's recomputations in stages a..b. */
static double recompute_cost(const struct lns *l, int a, int b)
{
	double c = 0;

	for (int t = a; t <= b; t++)
		for (int i = 0; i < t; i++)
			if (STAGE_R(&l->inc, t, i))
				c += l->g->nodes[i].cost;
	return c;
}

/* Adds the queue entries [from, to) to the free set, all or, when they
 * do not all fit under cap, a random subset. Returns the new count. */
static int take_level(struct lns *l, int from, int to, int count, int cap)
{
	for (int k = to - 1; k > from; k--) {
		int j = from + (int)(rnd(l) % (uint64_t)(k - from + 1)), x = l->queue[k];

		l->queue[k] = l->queue[j];
		l->queue[j] = x;
	}
	for (int k = from; k < to && count < cap; k++) {
		l->free[l->queue[k]] = 1;
		count++;
	}
	return count;
}

/* Picks at most cap values to free for stages a..b: the values the
 * incumbent recomputes there and the inputs of the stages' own nodes
 * first, then the values it keeps through them, then inputs of those, by
 * distance. Returns 0 when every value may be free (no selection needed),
 * else 1 with l->free set. */
static int choose_free(struct lns *l, int a, int b, int cap)
{
	const struct graph *g = l->g;
	int n = g->n, cand = 0, head = 0, tail = 0, count = 0;

	for (int i = 0; i < b; i++)
		cand += graph_nusers(g, i) > 0;
	if (cand <= cap)
		return 0;
	memset(l->free, 0, (size_t)n);
	for (int i = 0; i < n; i++)
		l->dist[i] = -1;
	/* Level 0. */
	for (int t = a; t <= b; t++) {
		for (int i = 0; i < t; i++)
			if (STAGE_R(&l->inc, t, i) && l->dist[i] < 0) {
				l->dist[i] = 0;
				l->queue[tail++] = i;
			}
		for (int e = g->dep_off[t]; e < g->dep_off[t + 1]; e++)
			if (l->dist[g->deps[e]] < 0) {
				l->dist[g->deps[e]] = 0;
				l->queue[tail++] = g->deps[e];
			}
	}
	count = take_level(l, 0, tail, count, cap);
	head = tail;
	/* Level 1: kept values. */
	for (int t = a + 1; t <= b + 1 && t < n; t++)
		for (int i = 0; i < t; i++)
			if (STAGE_S(&l->inc, t, i) && l->dist[i] < 0) {
				l->dist[i] = 1;
				l->queue[tail++] = i;
			}
	count = take_level(l, head, tail, count, cap);
	/* Then inputs of what is chosen, level by level. */
	for (int from = 0, level = 1; count < cap && from < tail; level++) {
		int to = tail;

		for (int q = from; q < to; q++) {
			int v = l->queue[q];

			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				if (l->dist[g->deps[e]] < 0) {
					l->dist[g->deps[e]] = level + 1;
					l->queue[tail++] = g->deps[e];
				}
		}
		count = take_level(l, to, tail, count, cap);
		from = to;
	}
	return 1;
}

static void report(struct lns *l, const char *label)
{
	struct solve_progress p = { 0 };

	if (l->o->progress == NULL)
		return;
	p.elapsed = cm_clock() - l->t0;
	p.incumbent = l->plan->cost;
	p.has_incumbent = 1;
	p.label = label;
	l->o->progress(l->o->ctx, &p);
}

/* Notes the time and cost of an improvement; -1 when out of memory. */
static int record(struct lns *l)
{
	if (l->nhist == l->cap_hist) {
		size_t cap = 2 * l->cap_hist;
		double *t = realloc(l->hist_t, cap * sizeof(double));
		double *c = t ? realloc(l->hist_c, cap * sizeof(double)) : NULL;

		if (t)
			l->hist_t = t;
		if (c)
			l->hist_c = c;
		if (!t || !c)
			return -1;
		l->cap_hist = cap;
	}
	l->hist_t[l->nhist] = cm_clock() - l->t0;
	l->hist_c[l->nhist++] = l->plan->cost;
	return 0;
}

/* A window's outcome in the words of progress reports. */
static const char *const outcome_names[] = { "a cheaper plan", "none cheaper in it",
					      "nothing cheaper found", "its plan rejected",
					      "the solver crashed" };

struct win {
	int a, b;
	double key;
};

static int by_key(const void *x, const void *y)
{
	const struct win *p = x, *q = y;

	if (p->key != q->key)
		return p->key > q->key ? -1 : 1;
	return p->a - q->a;
}

/* Cost of the incumbent's recomputations of values lo..hi-1, in all stages. */
static double value_recompute_cost(const struct lns *l, int lo, int hi)
{
	double c = 0;

	for (int i = lo; i < hi; i++)
		for (int t = i + 1; t < l->g->n; t++)
			if (STAGE_R(&l->inc, t, i))
				c += l->g->nodes[i].cost;
	return c;
}

/* Frees the values of blocks [p, p + lp) and [q, q + lq) (clipped to the
 * graph) in every stage from the first of them to their last reader. */
static void value_window(struct lns *l, int p, int lp, int q, int lq, struct window_spec *ws)
{
	const struct graph *g = l->g;
	int n = g->n, count = 0;

	memset(l->free, 0, (size_t)n);
	ws->a = n;
	ws->b = 0;
	for (int pass = 0; pass < 2; pass++) {
		int from = pass ? q : p, len = pass ? lq : lp;

		for (int i = from; i < from + len && i < n; i++) {
			count += !l->free[i];
			l->free[i] = 1;
			ws->a = i < ws->a ? i : ws->a;
			ws->b = i > ws->b ? i : ws->b;
			/* Up to the last reader: later stages would only keep
			 * the value idle. */
			if (graph_nusers(g, i) > 0 && g->users[g->user_off[i + 1] - 1] > ws->b)
				ws->b = g->users[g->user_off[i + 1] - 1];
		}
	}
	ws->free = count == n ? NULL : l->free;
}

/* The incumbent's recomputation cost per stage (values == 0) or per
 * value (values == 1) into c[0..n): one scan of R for every window's key. */
static void recompute_profile(const struct lns *l, int values, double *c)
{
	const struct graph *g = l->g;

	memset(c, 0, (size_t)g->n * sizeof(*c));
	for (int t = 0; t < g->n; t++)
		for (int i = 0; i < t; i++)
			if (STAGE_R(&l->inc, t, i))
				c[values ? i : t] += g->nodes[i].cost;
}

/* The windows of one pass (see pass), sorted: regular blocks of size
 * overlapping by step, each keyed by the recomputation it holds, or
 * n / step random pairs of block starts. NULL when out of memory. */
static struct win *pass_windows(struct lns *l, int values, int size, int step, int *nwin)
{
	int n = l->g->n, k = 0;
	struct win *wins = malloc(((size_t)n / (size_t)step + 2) * sizeof(*wins));
	double *c = values < 2 ? malloc((size_t)n * sizeof(*c) + 1) : NULL;

	if (wins == NULL || (values < 2 && c == NULL)) {
		free(wins);
		free(c);
		return NULL;
	}
	if (c)
		recompute_profile(l, values, c);
	for (int a = 0; a < n && values < 2; a += step) {
		int b = a + size - 1 < n - 1 ? a + size - 1 : n - 1;

		wins[k].a = a;
		wins[k].b = b;
		wins[k].key = 0;
		for (int j = a; j <= b; j++)
			wins[k].key += c[j];
		k++;
		if (b == n - 1)
			break;
	}
	free(c);
	/* Random pairs of half blocks: a and b are the two blocks' starts. */
	for (int j = 0; values == 2 && j < n / step; j++) {
		wins[k].a = (int)(rnd(l) % (uint64_t)n);
		wins[k].b = (int)(rnd(l) % (uint64_t)n);
		wins[k++].key = 0;
	}
	qsort(wins, (size_t)k, sizeof(*wins), by_key);
	*nwin = k;
	return wins;
}

/* 1 when the window a..b (two blocks' starts when values == 2), of eff
 * stages or values, holds recomputation: one that holds none costs its
 * floor already. */
static int pass_can_gain(const struct lns *l, int values, int a, int b, int eff)
{
	int n = l->g->n, half = eff / 2 + 2;

	if (values == 2)
		return value_recompute_cost(l, a, a + half < n ? a + half : n) +
		       value_recompute_cost(l, b, b + half < n ? b + half : n) > 0;
	return (values ? value_recompute_cost(l, a, b + 1) : recompute_cost(l, a, b)) > 0;
}

/* The free values of window ws (stages ws->a..ws->b; for random pairs,
 * blocks of eff / 2 values from wn's two starts), at most nw_eff in a
 * stage window. */
static void pass_free(struct lns *l, int values, const struct win *wn, int eff, int nw_eff,
		      struct window_spec *ws)
{
	if (values == 1) {
		int len = ws->b - ws->a + 1;

		value_window(l, ws->a, len, ws->a, len, ws);
	} else if (values == 2) {
		int half = eff / 2 > 2 ? eff / 2 : 2;

		value_window(l, wn->a, half, wn->b, half, ws);
	} else if (choose_free(l, ws->a, ws->b, nw_eff)) {
		ws->free = l->free;
	}
}

/* Counts a window's outcome wr in the stats and the pass's flags (see
 * pass); a window that ran out of time shrinks the next ones (eff above
 * min). Returns 1 on an improvement, 0 otherwise, -1 with err set (out
 * of memory, or the third backend failure in a row). */
static int pass_note(struct lns *l, const struct window_spec *ws, const struct window_result *wr,
		     int eff, int min, int *all_opt, int *whole, struct cm_error *err)
{
	int rc = 0;

	l->st->windows++;
	l->st->window_seconds += wr->seconds;
	if (wr->outcome != WINDOW_CRASHED)
		l->crashes_in_row = 0;
	if (wr->outcome == WINDOW_IMPROVED) {
		l->st->improved++;
		rc = record(l) ? cm_errorf(err, "out of memory") : 1;
	} else if (wr->outcome == WINDOW_REJECTED) {
		l->st->rejected++;
	} else if (wr->outcome == WINDOW_CRASHED) {
		l->st->crashed++;
		/* One crash is the backend's bad luck; three in a row, a
		 * backend that does not work (err says how it failed). */
		if (++l->crashes_in_row >= 3)
			rc = -1;
	} else if (wr->outcome == WINDOW_OPTIMAL) {
		l->st->optimal++;
		if (ws->a == 0 && ws->b == l->g->n - 1 && ws->free == NULL)
			*whole = 1;
	}
	if (wr->outcome != WINDOW_OPTIMAL)
		*all_opt = 0;
	if (wr->outcome == WINDOW_NO_GAIN && eff > min &&
	    !(l->o->time_limit > 0 && l->deadline - cm_clock() < 0.2))
		l->shrink++;
	return rc;
}

/* Fits window ws to the time left (and to the memory limit): its stages
 * cut so that its build is predicted to take at most LNS_BUILD_SHARE of
 * left (a cut window is still an exact sub-problem, S fixed at its ends).
 * Returns 0, or 1 when not even two stages fit. */
static int pass_fit(const struct lns *l, struct window_spec *ws, double left)
{
	const struct graph *g = l->g;
	double per_stage = 3.0 * g->n + g->n_edges, span = ws->b - ws->a + 1, cap = span;

	if (l->o->time_limit > 0)
		cap = LNS_BUILD_SHARE * left / (l->sec_per_cell * per_stage);
	if (ws->max_bytes > 0 && cap > (double)ws->max_bytes / (4 * per_stage))
		cap = (double)ws->max_bytes / (4 * per_stage);
	if (cap >= span)
		return 0;
	if (cap < 2)
		return 1;
	ws->b = ws->a + (int)cap - 1;
	return 0;
}

/* The solver's time limit and the deadline of window ws, left seconds
 * before the window's deadline wdl: what its predicted build leaves, a
 * little less so that the solver stops on its own (with its incumbent)
 * before it is killed at wdl. */
static void pass_timing(const struct lns *l, struct window_spec *ws, struct solve_opts *so,
			double left, double wdl)
{
	double solve = left - window_cells(l->g, ws) * l->sec_per_cell;

	so->time_limit = l->o->window_time_limit > 0 ? l->o->window_time_limit : 10;
	if (l->o->time_limit <= 0)
		return;
	ws->deadline = wdl;
	if (so->time_limit > 0.8 * solve)
		so->time_limit = 0.8 * solve;
	if (so->time_limit < 0.1)
		so->time_limit = 0.1;
}

/* Window wn of a pass (see pass) of size stages or values, at most nw
 * free: shrunk after timeouts, skipped when it cannot gain, else solved
 * and its outcome noted and reported. Returns 1 on an improvement, 0
 * otherwise, 2 when the time is up or a stop was requested (nothing
 * solved), -1 with err set. */
static int pass_window(struct lns *l, int values, const struct win *wn, int size, int nw,
		       int *all_opt, int *whole, struct cm_error *err)
{
	struct window_spec ws = { .a = wn->a, .b = wn->b,
				  .max_bytes = mem_budget(l->o->memory_limit) };
	struct solve_opts so = { .memory_cap = l->o->memory_limit, .halt = l->o->halt,
				 .halt_ctx = l->o->halt_ctx };
	struct window_result wr;
	double wdl = l->deadline - l->reserve, left = wdl - cm_clock();
	int eff = size >> l->shrink, nw_eff = nw >> l->shrink, min = values ? 4 : 2, rc;
	char label[96];

	/* After windows that ran out of time, smaller ones. */
	eff = eff < min ? min : eff;
	nw_eff = nw_eff < 4 ? 4 : nw_eff;
	if (values < 2 && ws.a + eff - 1 < ws.b)
		ws.b = ws.a + eff - 1;
	if ((l->o->time_limit > 0 && left < LNS_MIN_LEFT) || halted(l))
		return 2;
	if (!pass_can_gain(l, values, ws.a, ws.b, eff))
		return 0;
	pass_free(l, values, wn, eff, nw_eff, &ws);
	if (pass_fit(l, &ws, left))
		return 2;
	pass_timing(l, &ws, &so, left, wdl);
	if (window_improve(l->g, l->budget, l->o->ops, &so, &ws, &l->inc, &l->plan, &wr, err))
		return -1;
	if (!wr.late && wr.build_seconds > 0.05)
		l->sec_per_cell = 0.5 * (l->sec_per_cell + wr.build_seconds / window_cells(l->g, &ws));
	rc = pass_note(l, &ws, &wr, eff, min, all_opt, whole, err);
	if (rc < 0)
		return -1;
	snprintf(label, sizeof(label), "pass %d, %s %d..%d: %s", l->st->passes,
		 values ? "the values of nodes" : "stages", wn->a, wn->b,
		 outcome_names[wr.outcome]);
	report(l, label);
	return rc;
}

/* One pass of windows. Stage windows (values == 0): w stages, at most nw
 * free values chosen by choose_free. Value windows (values == 1): the
 * values of a block of nw consecutive nodes free in every stage from the
 * block's first on, every other value fixed: the shape that can move a
 * checkpoint kept from the forward into the backward pass, which no short
 * stage window can. Random pairs (values == 2): two blocks of nw / 2
 * values anywhere. Windows in order of the recomputation they hold, most
 * first. Returns the number of improvements, -1 with err set; *all_opt
 * is cleared when a window was not proven optimal, *whole set when a
 * window was the whole model, every value free, proven optimal. */
static int pass(struct lns *l, int values, int w, int nw, int *all_opt, int *whole,
		struct cm_error *err)
{
	int size = values ? nw : w, nwin, gains = 0, step, got = 0;
	struct win *wins;

	step = values == 2 ? size : size / 2 > 0 ? size / 2 : 1;
	wins = pass_windows(l, values, size, step, &nwin);
	if (wins == NULL)
		return cm_errorf(err, "out of memory");
	for (int k = 0; k < nwin && got >= 0; k++) {
		got = pass_window(l, values, &wins[k], size, nw, all_opt, whole, err);
		if (got == 2) {
			*all_opt = 0;
			break;
		}
		gains += got > 0;
	}
	free(wins);
	return got < 0 ? -1 : gains;
}

static void finish_stats(struct lns *l)
{
	struct lns_stats *s = l->st;
	double fin = l->plan->cost;

	s->final_cost = fin;
	s->seconds = cm_clock() - l->t0;
	s->t_within_2pct = s->t_within_1pct = -1;
	for (size_t k = 0; k < l->nhist; k++) {
		if (s->t_within_2pct < 0 && num_le(l->hist_c[k], 1.02 * fin))
			s->t_within_2pct = l->hist_t[k];
		if (s->t_within_1pct < 0 && num_le(l->hist_c[k], 1.01 * fin))
			s->t_within_1pct = l->hist_t[k];
	}
}

/* Passes until the time limit, a proof of optimality, or a pass that
 * gains nothing with windows that can grow no further (or that already
 * ran out of time). Returns 0, or -1 with err set. */
static int search(struct lns *l, struct cm_error *err)
{
	int n = l->g->n;
	int w = l->o->stage_window > 0 ? l->o->stage_window : 8;
	int nw = l->o->node_window > 0 ? l->o->node_window : 10, nw0 = nw;
	double floor = graph_total_cost(l->g);

	for (;;) {
		int all_opt = 1, whole = 0, gains, more, shrink = l->shrink;

		if (num_le(l->plan->cost, floor)) {
			l->st->proven = 1;
			return 0;
		}
		if (cm_clock() >= l->deadline - 0.2 || halted(l))
			return 0;
		l->st->passes++;
		if (w > l->st->max_stage_window)
			l->st->max_stage_window = w;
		if (nw > l->st->max_node_window)
			l->st->max_node_window = nw;
		gains = pass(l, 1, w, nw, &all_opt, &whole, err);
		if (gains < 0)
			return -1;
		if (!whole) {
			more = pass(l, 0, w, nw, &all_opt, &whole, err);
			if (more < 0)
				return -1;
			gains += more;
		}
		if (gains > 0)
			continue;
		if (whole) {
			l->st->proven = 1;
			return 0;
		}
		/* Nothing gained: smaller windows if some ran out of time,
		 * else larger ones, unless none can grow. */
		if (!all_opt && l->shrink > shrink)
			continue;
		if (!all_opt || (w >= n && nw >= n)) {
			/* The regular windows are exhausted. With time left,
			 * random pairs of blocks (a value recomputed here, one
			 * kept there) until one gains, then regular passes. */
			if (l->o->time_limit <= 0)
				return 0;
			do {
				if (cm_clock() >= l->deadline - 0.2 || halted(l))
					return 0;
				l->st->passes++;
				gains = pass(l, 2, w, 2 * nw0, &all_opt, &whole, err);
			} while (gains == 0);
			if (gains < 0)
				return -1;
			continue;
		}
		w = 2 * w < n ? 2 * w : n;
		nw = 2 * nw < n ? 2 * nw : n;
	}
}

/* A start that does not fit: repaired (solvers/repair.h) within the time
 * limit into *fixed. Returns 0 with *fixed fitting, 1 when the repair
 * found no fitting plan (err says how far it got), -1 with err set. */
static int lns_repair(const struct graph *g, uint64_t budget, const struct plan *start,
		      const struct lns_opts *o, struct plan **fixed, struct lns_stats *st,
		      struct cm_error *err)
{
	struct repair_opts ro = { .ops = o->ops, .time_limit = o->time_limit,
				  .window_time_limit = o->window_time_limit, .seed = o->seed,
				  .progress = o->progress, .ctx = o->ctx };
	struct repair_stats rs;
	int got;

	if (g->n > REPAIR_MAX_NODES) {
		cm_errorf(err, "the start is over budget, and %d nodes are too many to repair "
			  "(limit %d)", g->n, REPAIR_MAX_NODES);
		return 1;
	}
	got = repair_plan(g, budget, start, &ro, fixed, &rs, err);
	if (got < 0)
		return -1;
	st->repaired = 1;
	st->repair_windows = rs.windows;
	st->t_fit = rs.t_fit;
	if (got == 0) {
		cm_errorf(err, "repairing the start left %.0f bytes over the budget (summed over "
			  "stages) after %.1f s", rs.final_overflow, rs.seconds);
		plan_free(*fixed);
		*fixed = NULL;
		return 1;
	}
	return 0;
}

/* The search's buffers; 0, or -1 with err set. */
static int lns_alloc(struct lns *l, struct cm_error *err)
{
	size_t n = (size_t)l->g->n;

	l->free = malloc(n + 1);
	l->dist = malloc((n + 1) * sizeof(int));
	l->queue = malloc((n + 1) * sizeof(int));
	l->plan = plan_new();
	l->cap_hist = 64;
	l->hist_t = malloc(l->cap_hist * sizeof(double));
	l->hist_c = malloc(l->cap_hist * sizeof(double));
	if (!l->free || !l->dist || !l->queue || !l->plan || !l->hist_t || !l->hist_c)
		return cm_errorf(err, "out of memory");
	return 0;
}

/* 1 when the time left cannot cover staging the start (n x n matrices)
 * and a splice as long after a window: the start is then the answer. */
static int lns_no_time(const struct lns *l)
{
	double cells = (double)l->g->n * (double)l->g->n;

	return l->o->time_limit > 0 &&
	       2 * cells * LNS_STAGE_SEC_PER_CELL + LNS_MIN_LEFT > l->deadline - cm_clock();
}

/* The incumbent from the fitting start: its stages (restage_plan)
 * and their replayed plan; the time it took is kept as l->reserve.
 * Returns 1, 0 when the start cannot be staged (err says why), -1 with
 * err set. */
static int lns_stage_start(struct lns *l, const struct plan *start, struct cm_error *err)
{
	const struct graph *g = l->g;
	struct sim_result sim;
	double t = cm_clock();
	int got;

	if (stages_init(&l->inc, g->n, err))
		return -1;
	got = restage_plan(g, l->budget, start, &l->inc, err);
	if (got <= 0)
		return got;
	if (plan_from_stages(g, &l->inc, l->plan, err) ||
	    plan_simulate(g, l->plan, l->budget, &sim, err))
		return -1;
	l->plan->cost = sim.cost;
	l->plan->peak = sim.peak;
	l->hist_t[0] = 0;
	l->hist_c[0] = sim.cost;
	l->nhist = 1;
	l->reserve = cm_clock() - t;
	return 1;
}

/* The start's steps as the incumbent plan (cost and peak replayed). */
static int lns_take_start(struct lns *l, const struct plan *start, double cost, uint64_t peak,
			  struct cm_error *err)
{
	plan_clear(l->plan);
	for (int k = 0; k < start->n; k++)
		if (plan_push(l->plan, (enum plan_op)start->steps[k].op, start->steps[k].node,
			      start->steps[k].stage))
			return cm_errorf(err, "out of memory");
	l->plan->cost = cost;
	l->plan->peak = peak;
	l->st->proven = 0;
	return 0;
}

/* The search from a fitting start (repaired or not) of cost and peak;
 * the start itself when no time is left to stage it. Returns 0, 1 when
 * the start cannot be staged (err says why), -1 with err set. */
static int lns_run(struct lns *l, const struct plan *start, double cost, uint64_t peak,
		   struct cm_error *err)
{
	int got;

	l->st->first_cost = cost;
	if (lns_alloc(l, err))
		return -1;
	if (lns_no_time(l))
		return lns_take_start(l, start, cost, peak, err);
	got = lns_stage_start(l, start, err);
	if (got <= 0)
		return got < 0 ? -1 : 1;
	if (search(l, err))
		return -1;
	/* Cannot happen (the staged start replays no costlier than the
	 * start), but the promise is kept regardless. */
	if (num_lt(cost, l->plan->cost))
		return lns_take_start(l, start, cost, peak, err);
	return 0;
}

static int improve(const struct graph *g, uint64_t budget, const struct plan *start,
		   const struct lns_opts *o, struct plan **out, struct lns_stats *st,
		   struct cm_error *err);

/* What improve_permuted returns when start is in file order (or does not
 * compute every node): lns_improve goes on as usual. */
#define IN_ORDER 2

/* lns_improve (same arguments, same results) for a start whose first
 * computes are out of g's file order (dtr's plans on some training graphs,
 * plans made on a reordered graph): the stage model needs the first
 * computes in file order, so the search runs on the graph permuted to the
 * start's first-compute order (graph/order.h) and its plan is mapped back
 * (solvers/search/lns_order.h). IN_ORDER when the start needs no
 * permutation. */
static int improve_permuted(const struct graph *g, uint64_t budget, const struct plan *start,
			    const struct lns_opts *o, struct plan **out, struct lns_stats *st,
			    struct cm_error *err)
{
	int *order = malloc((size_t)g->n * sizeof(int)), *pos = malloc((size_t)g->n * sizeof(int));
	struct graph *h = NULL;
	struct plan *start_h = NULL, *out_h = NULL;
	struct sim_result sim;
	int rc = -1, got;

	*out = NULL;
	if (order == NULL || pos == NULL || (got = lns_order_first(g, start, order)) < 0) {
		cm_errorf(err, "out of memory");
		goto done;
	}
	if (got == 0 || !graph_is_order(g, order)) {
		/* In order, or not a valid plan: lns_improve says why. */
		rc = IN_ORDER;
		goto done;
	}
	for (int k = 0; k < g->n; k++)
		pos[order[k]] = k;
	if ((h = graph_permute(g, order, err)) == NULL)
		goto done;
	if ((start_h = lns_order_map(start, pos)) == NULL) {
		cm_errorf(err, "out of memory");
		goto done;
	}
	rc = improve(h, budget, start_h, o, &out_h, st, err);
	if (rc != 0)
		goto done;
	rc = -1;
	if ((*out = lns_order_map(out_h, order)) == NULL) {
		cm_errorf(err, "out of memory");
		goto done;
	}
	if (plan_simulate(g, *out, budget, &sim, err))
		goto done;
	if (!sim.valid) {
		cm_errorf(err, "internal error: lns's plan, mapped back, is not valid: %s", sim.why);
		goto done;
	}
	(*out)->cost = sim.cost;
	(*out)->peak = sim.peak;
	rc = 0;
done:
	if (rc != 0) {
		plan_free(*out);
		*out = NULL;
	}
	plan_free(out_h);
	plan_free(start_h);
	graph_free(h);
	free(order);
	free(pos);
	return rc;
}

/* lns_improve, with the reason of a 1 in err. */
static int improve(const struct graph *g, uint64_t budget, const struct plan *start,
		   const struct lns_opts *o, struct plan **out, struct lns_stats *st,
		   struct cm_error *err)
{
	struct lns l = { .g = g, .budget = budget, .o = o, .sec_per_cell = LNS_SEC_PER_CELL };
	struct lns_stats dummy;
	struct sim_result sim;
	struct plan *fixed = NULL;
	int rc = -1, got;

	*out = NULL;
	/* First computes out of file order: on the graph permuted to them. */
	got = improve_permuted(g, budget, start, o, out, st, err);
	if (got != IN_ORDER)
		return got;
	l.st = st ? st : &dummy;
	memset(l.st, 0, sizeof(*l.st));
	l.t0 = cm_clock();
	l.deadline = l.t0 + (o->time_limit > 0 ? o->time_limit : 1e30);
	l.rng = o->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	if (o->ops == NULL)
		return cm_errorf(err, "lns needs a MILP backend");
	if (plan_simulate(g, start, budget, &sim, err))
		return -1;
	if (!sim.valid) {
		cm_errorf(err, "the start plan is not valid: %s", sim.why);
		return 1;
	}
	if (!sim.fits || sim.peak > budget) {
		got = lns_repair(g, budget, start, o, &fixed, l.st, err);
		if (got != 0)
			return got;
		start = fixed;
		if (plan_simulate(g, start, budget, &sim, err))
			goto out;
	}
	rc = lns_run(&l, start, sim.cost, sim.peak, err);
	if (rc)
		goto out;
	finish_stats(&l);
	snprintf(l.plan->strategy, sizeof(l.plan->strategy), "lns");
	snprintf(l.plan->solver, sizeof(l.plan->solver), "%s", o->ops->name);
	snprintf(l.plan->status, sizeof(l.plan->status), "%s",
		 l.st->proven ? "optimal" : "feasible");
	l.plan->budget = budget;
	if (l.st->proven) {
		l.plan->lower_bound = l.plan->cost;
		l.plan->has_lower_bound = 1;
	}
	*out = l.plan;
	l.plan = NULL;
out:
	plan_free(fixed);
	stages_release(&l.inc);
	plan_free(l.plan);
	free(l.free);
	free(l.dist);
	free(l.queue);
	free(l.hist_t);
	free(l.hist_c);
	return rc;
}

int lns_improve(const struct graph *g, uint64_t budget, const struct plan *start,
		const struct lns_opts *o, struct plan **out, struct lns_stats *st, char *why,
		size_t why_len, struct cm_error *err)
{
	/* The steps say why the start cannot be used as they say why they
	 * fail; an answer's reason leaves here as why, a failure's as err. */
	struct cm_error e = { "" };
	int rc = improve(g, budget, start, o, out, st, &e);

	if (rc == 1 && why)
		snprintf(why, why_len, "%s", e.msg);
	else if (rc < 0)
		*err = e;
	return rc;
}

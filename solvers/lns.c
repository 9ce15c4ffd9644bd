#include "lns.h"
#include "lns_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/mem.h"
#include "../common/num.h"
#include "../common/stop.h"
#include "../plan/sim.h"
#include "repair.h"
#include "strategy.h"
#include "window.h"

/* S from residency in an unstaged plan: S(t,i) = resident[i] at the step
 * that marks stage t's start. after_prev: the first compute after node
 * t - 1's first compute (what the plan kept across t - 1's end); else the
 * first compute of t itself. */
static int stages_by_residency(const struct graph *g, const struct plan *p, int after_prev,
			       struct stages *st, struct cm_error *err)
{
	char *resident = calloc((size_t)g->n + 1, 1), *done = calloc((size_t)g->n + 1, 1);
	int next = 0, firsts = 0, pending = 1, rc = -1;

	if (resident == NULL || done == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	memset(st->S, 0, (size_t)g->n * (size_t)g->n);
	for (int s = 0; s < p->n; s++) {
		const struct plan_step *step = &p->steps[s];
		int v = step->node;

		if (step->op == PLAN_COMPUTE) {
			int begins = after_prev ? pending : !done[v];

			if (begins && next < g->n) {
				for (int i = 0; i < next; i++)
					STAGE_S(st, next, i) = (uint8_t)resident[i];
				next++;
				pending = 0;
			}
			if (!done[v]) {
				/* The model computes node t first in stage t. */
				if (v != firsts++) {
					cm_errorf(err, "the start plan computes '%s' before '%s'",
						  g->nodes[v].name, g->nodes[firsts - 1].name);
					rc = 0;
					goto out;
				}
				done[v] = 1;
				pending = 1;
			}
		}
		resident[v] = step->op == PLAN_COMPUTE;
	}
	if (next < g->n) {
		cm_errorf(err, "the start plan does not compute every node");
		rc = 0;
		goto out;
	}
	stages_drop_unused(g, st);
	rc = 1;
out:
	free(resident);
	free(done);
	return rc;
}

/* Replays the plan of st; 1 when it is valid and fits, its cost in *cost. */
static int replay_stages(const struct graph *g, uint64_t budget, const struct stages *st,
			 double *cost, struct cm_error *err)
{
	struct plan *p = plan_new();
	struct sim_result sim;
	int rc = -1;

	if (p == NULL)
		return cm_errorf(err, "out of memory");
	if (plan_from_stages(g, st, p, err) || plan_simulate(g, p, budget, &sim, err))
		goto out;
	*cost = sim.cost;
	rc = sim.valid && sim.fits && sim.peak <= budget;
out:
	plan_free(p);
	return rc;
}

int lns_stages_of_plan(const struct graph *g, uint64_t budget, const struct plan *p,
		       struct stages *st, struct cm_error *err)
{
	struct stages alt = { 0 };
	double best = -1, cost;
	int staged = 1, rc = -1, fits;

	for (int i = 0; i < p->n; i++)
		staged &= p->steps[i].stage >= 0;
	if (staged && stages_from_plan(g, p, st) == 0) {
		stages_drop_unused(g, st);
		fits = replay_stages(g, budget, st, &cost, err);
		if (fits != 0)
			return fits;
	}
	if (stages_init(&alt, g->n, err))
		return -1;
	for (int after_prev = 1; after_prev >= 0; after_prev--) {
		struct stages *dst = best < 0 ? st : &alt;
		int got = stages_by_residency(g, p, after_prev, dst, err);

		if (got <= 0) {
			rc = got;
			goto out;
		}
		fits = replay_stages(g, budget, dst, &cost, err);
		if (fits < 0)
			goto out;
		if (fits && (best < 0 || num_lt(cost, best))) {
			if (dst == &alt) {
				memcpy(st->R, alt.R, (size_t)g->n * (size_t)g->n);
				memcpy(st->S, alt.S, (size_t)g->n * (size_t)g->n);
			}
			best = cost;
		}
	}
	rc = best >= 0;
	if (!rc)
		cm_errorf(err, "the start plan, taken as stages, does not fit the budget");
out:
	stages_release(&alt);
	return rc;
}

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
};

static uint64_t rnd(struct lns *l)
{
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return l->rng;
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

static const char *const outcome_names[] = { "improved", "optimal", "no gain", "rejected",
					      "backend crashed" };

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

/* One pass of windows. Stage windows (values == 0): w stages, at most nw
 * free values chosen by choose_free. Value windows (values == 1): the
 * values of a block of nw consecutive nodes free in every stage from the
 * block's first on, every other value fixed: the shape that can move a
 * checkpoint kept from the forward into the backward pass, which no short
 * stage window can. Windows in order of the recomputation they hold, most
 * first. Returns the number of improvements, -1 with err set; *all_opt
 * is cleared when a window was not proven optimal, *whole set when a
 * window was the whole model, every value free, proven optimal. */
static int pass(struct lns *l, int values, int w, int nw, int *all_opt, int *whole,
		struct cm_error *err)
{
	const struct graph *g = l->g;
	int n = g->n, size = values ? nw : w, nwin = 0, gains = 0, step;
	struct win *wins;
	char label[96];

	step = size / 2 > 0 ? size / 2 : 1;
	if (values == 2)
		step = size;
	wins = malloc(((size_t)n / (size_t)step + 2) * sizeof(*wins));
	if (wins == NULL)
		return cm_errorf(err, "out of memory");
	for (int a = 0; a < n && values < 2; a += step) {
		int b = a + size - 1 < n - 1 ? a + size - 1 : n - 1;

		wins[nwin].a = a;
		wins[nwin].b = b;
		wins[nwin++].key = values ? value_recompute_cost(l, a, b + 1)
					  : recompute_cost(l, a, b);
		if (b == n - 1)
			break;
	}
	/* Random pairs of half blocks: a and b are the two blocks' starts. */
	for (int k = 0; values == 2 && k < n / step; k++) {
		wins[nwin].a = (int)(rnd(l) % (uint64_t)n);
		wins[nwin].b = (int)(rnd(l) % (uint64_t)n);
		wins[nwin++].key = 0;
	}
	qsort(wins, (size_t)nwin, sizeof(*wins), by_key);
	for (int k = 0; k < nwin; k++) {
		struct window_spec ws = { .a = wins[k].a, .b = wins[k].b,
					  .max_bytes = mem_budget(l->o->memory_limit) };
		struct solve_opts so = { .memory_cap = l->o->memory_limit };
		struct window_result wr;
		double left = l->deadline - cm_clock();
		int eff = size >> l->shrink, nw_eff = nw >> l->shrink, min = values ? 4 : 2;

		/* After windows that ran out of time, smaller ones. */
		eff = eff < min ? min : eff;
		nw_eff = nw_eff < 4 ? 4 : nw_eff;
		if (values < 2 && ws.a + eff - 1 < ws.b)
			ws.b = ws.a + eff - 1;

		if ((l->o->time_limit > 0 && left < 0.2) || stop_requested()) {
			*all_opt = 0;
			break;
		}
		/* A window that recomputes nothing costs its floor. */
		if (values == 2 ? !(value_recompute_cost(l, ws.a, ws.a + eff / 2 + 2 < n ?
							 ws.a + eff / 2 + 2 : n) +
				    value_recompute_cost(l, ws.b, ws.b + eff / 2 + 2 < n ?
							 ws.b + eff / 2 + 2 : n) > 0)
				: !((values ? value_recompute_cost(l, ws.a, ws.b + 1)
					    : recompute_cost(l, ws.a, ws.b)) > 0))
			continue;
		if (values == 1) {
			int len = ws.b - ws.a + 1;

			value_window(l, ws.a, len, ws.a, len, &ws);
		} else if (values == 2) {
			int half = eff / 2 > 2 ? eff / 2 : 2;

			value_window(l, wins[k].a, half, wins[k].b, half, &ws);
		} else if (choose_free(l, ws.a, ws.b, nw_eff)) {
			ws.free = l->free;
		}
		so.time_limit = l->o->window_time_limit > 0 ? l->o->window_time_limit : 10;
		if (l->o->time_limit > 0 && so.time_limit > left)
			so.time_limit = left;
		if (window_improve(g, l->budget, l->o->ops, &so, &ws, &l->inc, &l->plan, &wr, err)) {
			free(wins);
			return -1;
		}
		l->st->windows++;
		l->st->window_seconds += wr.seconds;
		if (wr.outcome != WINDOW_CRASHED)
			l->crashes_in_row = 0;
		if (wr.outcome == WINDOW_IMPROVED) {
			gains++;
			l->st->improved++;
			if (record(l)) {
				free(wins);
				return cm_errorf(err, "out of memory");
			}
		} else if (wr.outcome == WINDOW_REJECTED) {
			l->st->rejected++;
		} else if (wr.outcome == WINDOW_CRASHED) {
			l->st->crashed++;
			/* One crash is the backend's bad luck; three in a
			 * row, a backend that does not work. */
			if (++l->crashes_in_row >= 3) {
				free(wins);
				return -1;
			}
		} else if (wr.outcome == WINDOW_OPTIMAL) {
			l->st->optimal++;
			if (ws.a == 0 && ws.b == n - 1 && ws.free == NULL)
				*whole = 1;
		}
		if (wr.outcome != WINDOW_OPTIMAL)
			*all_opt = 0;
		if (wr.outcome == WINDOW_NO_GAIN && eff > min &&
		    !(l->o->time_limit > 0 && l->deadline - cm_clock() < 0.2))
			l->shrink++;
		snprintf(label, sizeof(label), "lns pass %d, %s window %d..%d (%d columns): %s",
			 l->st->passes, values ? "value" : "stage", wins[k].a, wins[k].b, wr.cols,
			 outcome_names[wr.outcome]);
		report(l, label);
	}
	free(wins);
	return gains;
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
		if (cm_clock() >= l->deadline - 0.2 || stop_requested())
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
				if (cm_clock() >= l->deadline - 0.2 || stop_requested())
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

int lns_improve(const struct graph *g, uint64_t budget, const struct plan *start,
		const struct lns_opts *o, struct plan **out, struct lns_stats *st,
		struct cm_error *err)
{
	struct lns l = { .g = g, .budget = budget, .o = o };
	struct lns_stats dummy;
	struct sim_result sim;
	struct plan *fixed = NULL;
	int n = g->n, rc = -1, got;
	uint64_t start_peak;

	*out = NULL;
	/* First computes out of file order: on the graph permuted to them. */
	got = lns_order_improve(g, budget, start, o, out, st, err);
	if (got != LNS_ORDER_IN_ORDER)
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
	l.st->first_cost = sim.cost;
	start_peak = sim.peak;
	if (stages_init(&l.inc, n, err))
		goto out;
	l.free = malloc((size_t)n + 1);
	l.dist = malloc(((size_t)n + 1) * sizeof(int));
	l.queue = malloc(((size_t)n + 1) * sizeof(int));
	l.plan = plan_new();
	l.cap_hist = 64;
	l.hist_t = malloc(l.cap_hist * sizeof(double));
	l.hist_c = malloc(l.cap_hist * sizeof(double));
	if (!l.free || !l.dist || !l.queue || !l.plan || !l.hist_t || !l.hist_c) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	got = lns_stages_of_plan(g, budget, start, &l.inc, err);
	if (got <= 0) {
		rc = got < 0 ? -1 : 1;
		goto out;
	}
	if (plan_from_stages(g, &l.inc, l.plan, err) ||
	    plan_simulate(g, l.plan, budget, &sim, err))
		goto out;
	l.plan->cost = sim.cost;
	l.plan->peak = sim.peak;
	l.hist_t[0] = 0;
	l.hist_c[0] = sim.cost;
	l.nhist = 1;
	if (search(&l, err))
		goto out;
	if (num_lt(l.st->first_cost, l.plan->cost)) {
		/* Cannot happen (the staged start replays no costlier than
		 * the start), but the promise is kept regardless. */
		plan_clear(l.plan);
		for (int k = 0; k < start->n; k++)
			if (plan_push(l.plan, (enum plan_op)start->steps[k].op,
				      start->steps[k].node, start->steps[k].stage)) {
				cm_errorf(err, "out of memory");
				goto out;
			}
		l.plan->cost = l.st->first_cost;
		l.plan->peak = start_peak;
		l.st->proven = 0;
	}
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
	rc = 0;
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

/* Seconds lns takes without --time-limit: it would otherwise run until a
 * pass gains nothing, hours on the largest graphs. */
#define LNS_TIME_LIMIT 60.0

int strategy_run_lns(const struct strategy *s, const struct graph *g,
		     const struct solve_request *rq, struct solve_outcome *out,
		     struct cm_error *err)
{
	struct lns_opts o = { .ops = strategy_backend(rq, err), .seed = rq->seed,
			      .time_limit = rq->time_limit > 0 ? rq->time_limit : LNS_TIME_LIMIT,
			      .progress = rq->progress, .ctx = rq->ctx,
			      .memory_limit = rq->memory_limit };
	uint64_t stages = 0, values = 0;
	struct sim_result sim;
	struct plan *own = NULL, *best = NULL;
	const struct plan *start = rq->start;
	struct lns_stats st;
	int rc;

	if (o.ops == NULL || strategy_param_whole(rq, "stages", 1, 1000, &stages, err) ||
	    strategy_param_whole(rq, "values", 1, 1000, &values, err))
		return -1;
	o.stage_window = (int)stages;
	o.node_window = (int)values;
	snprintf(out->solver, sizeof(out->solver), "%s", o.ops->name);
	/* The smallest window still needs a solver process. */
	if (!strategy_check_memory(rq, "a window's solver process", &(struct remat_size){ 0 }, 0, out))
		return 0;
	if (start == NULL)
		start = own = strategy_best_heuristic(g, rq, &sim);
	if (start == NULL) {
		/* Nothing fits: repair the checkpoint-all plan. */
		start = own = plan_new();
		if (own == NULL || baseline_checkpoint_all(g, own, err)) {
			plan_free(own);
			return own ? -1 : cm_errorf(err, "out of memory");
		}
		snprintf(own->strategy, sizeof(own->strategy), "checkpoint-all");
	}
	rc = lns_improve(g, rq->budget, start, &o, &best, &st, err);
	snprintf(out->param, sizeof(out->param), "start=%s%.40s%s", st.repaired ? "repair(" : "",
		 start->strategy[0] ? start->strategy : "plan", st.repaired ? ")" : "");
	plan_free(own);
	if (rc == 1) {
		strategy_set_status(out, STATUS_NO_PLAN);
		snprintf(out->why, sizeof(out->why), "%s", err->msg);
		return 0;
	}
	if (rc || strategy_adopt(g, s->name, rq->budget, best, out, err))
		return -1;
	snprintf(best->solver, sizeof(best->solver), "%s", o.ops->name);
	if (!out->sim.fits)
		return cm_errorf(err, "internal error: lns's plan replays over budget: %s",
				 out->sim.why);
	if (rq->cost_cap > 0 && !num_le(out->sim.cost, rq->cost_cap)) {
		strategy_set_status(out, STATUS_NO_PLAN);
		snprintf(out->why, sizeof(out->why), "the best plan found costs %.17g, over the "
			 "cap %.17g", out->sim.cost, rq->cost_cap);
		return 0;
	}
	strategy_set_status(out, st.proven ? STATUS_OPTIMAL : STATUS_FEASIBLE);
	if (st.proven || num_le(out->sim.cost, graph_total_cost(g)))
		strategy_set_bound(g, out, st.proven ? out->sim.cost : graph_total_cost(g));
	return 0;
}

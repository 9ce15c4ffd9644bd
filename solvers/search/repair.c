#include "repair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../plan/sim.h"
#include "restage.h"
#include "shave.h"
#include "../milp/window.h"

/* Windows around one stage grow this many times (doubling) at most. */
#define REPAIR_LEVELS 6

struct repair {
	const struct graph *g;
	uint64_t budget;
	const struct repair_opts *o;
	struct stages inc;
	struct plan *plan;     /* the incumbent's plan, replayed, staged */
	double overflow;       /* its window_overflow */
	uint64_t *peak;        /* per stage: the incumbent's peak */
	int *level;            /* per stage: how often a window there found nothing */
	uint8_t *free;         /* a window's free values */
	int *queue;            /* values in choose_free's order */
	double *score;         /* their scores */
	uint64_t rng;
	double t0, deadline;
	struct repair_stats *st;
};

static uint64_t rnd(struct repair *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

/* The incumbent's peak in each stage. */
static void stage_peaks(struct repair *r)
{
	const struct plan *p = r->plan;
	uint64_t live = r->g->fixed_memory;

	memset(r->peak, 0, (size_t)r->g->n * sizeof(uint64_t));
	for (int k = 0; k < p->n; k++) {
		int v = p->steps[k].node, t = p->steps[k].stage;

		if (p->steps[k].op == PLAN_COMPUTE) {
			live += r->g->nodes[v].memory;
			if (t >= 0 && t < r->g->n && live > r->peak[t])
				r->peak[t] = live;
		} else {
			live -= r->g->nodes[v].memory;
		}
	}
}

static int by_score_desc(const void *x, const void *y, const double *score)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (score[a] != score[b])
		return score[a] > score[b] ? -1 : 1;
	return a - b;
}

/* qsort has no context argument: a small insertion sort instead (the
 * queue holds at most n values, sorted once per window). */
static void sort_by_score(int *q, int len, const double *score)
{
	for (int i = 1; i < len; i++) {
		int v = q[i], j = i;

		while (j > 0 && by_score_desc(&v, &q[j - 1], score) < 0) {
			q[j] = q[j - 1];
			j--;
		}
		q[j] = v;
	}
}

/* Frees the values kept into stage t, largest and longest idle first (a
 * little noise breaks ties), cap of them at most. Returns the count. */
static int free_kept(struct repair *r, int t, int cap)
{
	const struct graph *g = r->g;
	int tail = 0, count = 0;

	for (int i = 0; i < t; i++) {
		int next = g->n;

		if (!STAGE_S(&r->inc, t, i))
			continue;
		for (int e = g->user_off[i]; e < g->user_off[i + 1]; e++)
			if (g->users[e] >= t) {
				next = g->users[e];
				break;
			}
		r->score[i] = (double)g->nodes[i].memory * (double)(next - t + 1) *
			      (1 + 0.01 * (double)(rnd(r) % 16));
		r->queue[tail++] = i;
	}
	sort_by_score(r->queue, tail, r->score);
	for (int q = 0; q < tail && count < cap; q++) {
		r->free[r->queue[q]] = 1;
		count++;
	}
	return count;
}

/* Frees the inputs of the free values, breadth first, while count < cap:
 * what a dropped value needs to be recomputed. Returns the new count. */
static int free_inputs(struct repair *r, int count, int cap)
{
	const struct graph *g = r->g;
	int tail = 0;

	for (int i = 0; i < g->n; i++)
		if (r->free[i])
			r->queue[tail++] = i;
	for (int head = 0; head < tail && count < cap; head++) {
		int v = r->queue[head];

		for (int e = g->dep_off[v]; e < g->dep_off[v + 1] && count < cap; e++) {
			int d = g->deps[e];

			if (!r->free[d] && graph_nusers(g, d) > 0) {
				r->free[d] = 1;
				r->queue[tail++] = d;
				count++;
			}
		}
	}
	return count;
}

/* The values a window around stage t over stages a..b frees, at most cap:
 * half of them kept into t (what fills its memory), then their inputs,
 * then the values the window recomputes and the inputs of its own nodes.
 * Returns the count (0: every value may be free). */
static int choose_free(struct repair *r, int t, int a, int b, int cap)
{
	const struct graph *g = r->g;
	int count = 0, cand = 0;

	for (int i = 0; i < b; i++)
		cand += graph_nusers(g, i) > 0;
	if (cand <= cap)
		return 0;
	memset(r->free, 0, (size_t)g->n);
	count = free_inputs(r, free_kept(r, t, cap / 2 + 1), cap);
	for (int s = a; s <= b && count < cap; s++) {
		for (int i = 0; i < s && count < cap; i++)
			if (STAGE_R(&r->inc, s, i) && !r->free[i]) {
				r->free[i] = 1;
				count++;
			}
		for (int e = g->dep_off[s]; e < g->dep_off[s + 1] && count < cap; e++)
			if (!r->free[g->deps[e]]) {
				r->free[g->deps[e]] = 1;
				count++;
			}
	}
	return count;
}

static void report(struct repair *r, const char *label)
{
	struct solve_progress p = { 0 };

	if (r->o->progress == NULL)
		return;
	p.elapsed = cm_clock() - r->t0;
	/* Only a plan that fits is an incumbent. */
	p.incumbent = r->plan->cost;
	p.has_incumbent = r->overflow <= 0 && r->plan->n > 0;
	p.label = label;
	r->o->progress(r->o->ctx, &p);
}

/* The stage to work on: the largest overflow, discounted by how often
 * windows there found nothing; -1 when every overflowing stage is at the
 * largest window. */
static int pick_stage(struct repair *r)
{
	int best = -1;
	double key = 0;

	for (int t = 0; t < r->g->n; t++) {
		double k;

		if (r->peak[t] <= r->budget || r->level[t] >= REPAIR_LEVELS)
			continue;
		k = (double)(r->peak[t] - r->budget) / (double)(1 << r->level[t]);
		if (best < 0 || k > key) {
			best = t;
			key = k;
		}
	}
	return best;
}

/* One window around stage t at its level. Returns 1 when it improved the
 * incumbent, 0 when not, -1 with err set. */
static int repair_window(struct repair *r, int t, struct cm_error *err)
{
	const struct graph *g = r->g;
	int lv = r->level[t], n = g->n;
	int half = (r->o->stage_window > 0 ? r->o->stage_window : 6) << lv;
	int cap = (r->o->node_window > 0 ? r->o->node_window : 12) << lv;
	struct window_spec ws = { .a = t - half / 2 > 0 ? t - half / 2 : 0, .slack = 1 };
	struct solve_opts so = { 0 };
	struct window_result wr;
	double left = r->deadline - cm_clock();
	char label[128];

	ws.b = t + half / 2 < n - 1 ? t + half / 2 : n - 1;
	if (choose_free(r, t, ws.a, ws.b, cap))
		ws.free = r->free;
	so.time_limit = r->o->window_time_limit > 0 ? r->o->window_time_limit : 10;
	if (r->o->time_limit > 0 && so.time_limit > left)
		so.time_limit = left;
	if (r->o->time_limit > 0)
		ws.deadline = r->deadline; /* the solver killed there */
	if (window_repair(g, r->budget, r->o->ops, &so, &ws, &r->inc, &r->plan, &r->overflow,
			  &wr, err))
		return -1;
	r->st->windows++;
	r->st->rejected += wr.outcome == WINDOW_REJECTED;
	r->st->crashed += wr.outcome == WINDOW_CRASHED;
	snprintf(label, sizeof(label), "fitting the plan to the budget, stages %d..%d around "
		 "stage %d: %.0f bytes over", ws.a, ws.b, t, r->overflow);
	report(r, label);
	if (wr.outcome == WINDOW_IMPROVED) {
		r->st->improved++;
		return 1;
	}
	r->level[t]++;
	return 0;
}

static int search(struct repair *r, struct cm_error *err)
{
	while (r->overflow > 0) {
		int t;

		if (cm_clock() >= r->deadline - 0.1)
			return 0;
		stage_peaks(r);
		t = pick_stage(r);
		if (t < 0)
			return 0;
		if (repair_window(r, t, err) < 0)
			return -1;
	}
	return 0;
}

/* The plan of st, replayed against r->budget, into p (cleared first), its
 * overflow in *over. Returns 0, or -1 with err set. */
static int replay_into(const struct repair *r, const struct stages *st, struct plan *p,
		       double *over, struct cm_error *err)
{
	struct sim_result sim;

	plan_clear(p);
	if (plan_from_stages(r->g, st, p, err) || plan_simulate(r->g, p, r->budget, &sim, err))
		return -1;
	if (!sim.valid)
		return cm_errorf(err, "internal error: a repaired plan is not valid: %s", sim.why);
	p->cost = sim.cost;
	p->peak = sim.peak;
	p->budget = r->budget;
	*over = window_overflow(r->g, p, r->budget, NULL);
	return 0;
}

/* The replayed plan of r->inc as the incumbent. */
static int replay(struct repair *r, struct cm_error *err)
{
	return replay_into(r, &r->inc, r->plan, &r->overflow, err);
}

/* The constructive phase (solvers/shave.h): shave variants from the
 * start, until one fits and the deterministic ones or a tenth of the time
 * are used up, or, while none fits, four tenths of the time. */
static int shave(struct repair *r, struct cm_error *err)
{
	struct shave_stats ss;
	double limit = r->o->time_limit;
	char label[128];

	if (shave_best(r->g, r->budget, &r->inc, limit > 0 ? r->t0 + 0.4 * limit : 0,
		       limit > 0 ? r->t0 + 0.1 * limit : 0, limit > 0 ? 1 << 30 : SHAVE_VARIANTS,
		       r->o->seed, &ss, err) < 0 || replay(r, err))
		return -1;
	r->st->shaves = ss.attempts;
	snprintf(label, sizeof(label), "fitting the plan to the budget, %d shaves: %.0f bytes "
		 "over", ss.attempts, r->overflow);
	report(r, label);
	return 0;
}

/* Stage matrices of start (any peak) and their replayed plan. */
static int repair_start(struct repair *r, const struct plan *start, struct cm_error *err)
{
	int got = restage_plan(r->g, SIM_NO_BUDGET, start, &r->inc, err);

	if (got < 0)
		return -1;
	if (got == 0) {
		/* A plan the stages cannot express (a node computed for the
		 * first time before an earlier one): start from keeping
		 * everything instead. */
		int *last = malloc(((size_t)r->g->n + 1) * sizeof(int));

		if (last == NULL)
			return cm_errorf(err, "out of memory");
		graph_last_use(r->g, last);
		stages_checkpoint_all(r->g, &r->inc, last);
		stages_drop_unused(r->g, &r->inc);
		free(last);
		r->st->start_unstaged = 1;
	}
	return replay(r, err);
}

/* The working arrays of r; -1 when out of memory (repair_free them
 * either way). */
static int repair_alloc(struct repair *r)
{
	size_t n = (size_t)r->g->n + 1;

	r->plan = plan_new();
	r->peak = malloc(n * sizeof(uint64_t));
	r->level = calloc(n, sizeof(int));
	r->free = malloc(n);
	r->queue = malloc(n * sizeof(int));
	r->score = malloc(n * sizeof(double));
	return r->plan && r->peak && r->level && r->free && r->queue && r->score ? 0 : -1;
}

static void repair_free(struct repair *r)
{
	stages_release(&r->inc);
	plan_free(r->plan);
	free(r->peak);
	free(r->level);
	free(r->free);
	free(r->queue);
	free(r->score);
}

int repair_plan(const struct graph *g, uint64_t budget, const struct plan *start,
		const struct repair_opts *o, struct plan **out, struct repair_stats *st,
		struct cm_error *err)
{
	struct repair r = { .g = g, .budget = budget, .o = o };
	struct repair_stats dummy;
	struct sim_result sim;
	int rc = -1;

	*out = NULL;
	r.st = st ? st : &dummy;
	memset(r.st, 0, sizeof(*r.st));
	r.st->t_fit = -1;
	r.t0 = cm_clock();
	r.deadline = r.t0 + (o->time_limit > 0 ? o->time_limit : 1e30);
	r.rng = o->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	if (o->ops == NULL)
		return cm_errorf(err, "repair needs a MILP backend");
	if (plan_simulate(g, start, SIM_NO_BUDGET, &sim, err))
		return -1;
	if (!sim.valid)
		return cm_errorf(err, "the start plan is not valid: %s", sim.why);
	if (stages_init(&r.inc, g->n, err))
		return -1;
	if (repair_alloc(&r)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (repair_start(&r, start, err))
		goto out;
	r.st->first_overflow = r.overflow;
	r.st->first_cost = r.plan->cost;
	/* Below the lower bound (docs/formats.md, Memory model) nothing fits: no
	 * search. */
	if (budget >= graph_lower_bound(g) &&
	    ((!o->no_shave && shave(&r, err)) || search(&r, err)))
		goto out;
	if (plan_simulate(g, r.plan, budget, &sim, err))
		goto out;
	r.st->final_overflow = r.overflow;
	r.st->final_cost = sim.cost;
	r.st->seconds = cm_clock() - r.t0;
	if (sim.fits)
		r.st->t_fit = r.st->seconds;
	snprintf(r.plan->strategy, sizeof(r.plan->strategy), "repair");
	snprintf(r.plan->solver, sizeof(r.plan->solver), "%s", o->ops->name);
	*out = r.plan;
	r.plan = NULL;
	rc = sim.valid && sim.fits;
out:
	repair_free(&r);
	return rc;
}

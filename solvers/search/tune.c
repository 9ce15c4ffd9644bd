#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../common/stop.h"
#include "../../graph/repeat.h"
#include "dtr.h"

/* The starts of the search, in the order tried: heuristics whose score a
 * weight can steer (a cost numerator), with a dead-value policy. Tuned on
 * gpt48, gpt96 and llama32 at f = .25, full and nextuse end 1-2% below
 * dtr; eqclass ends above them (28% above dtr on llama32) and local does
 * not move (30-45% above dtr), so neither is a start. */
static const struct {
	int heuristic, keep_dead;
} starts[] = {
	{ DTR_FULL, 0 }, { DTR_NEXTUSE, 0 }, { DTR_FULL, 1 }, { DTR_NEXTUSE, 1 }, { DTR_MSPS, 0 },
};
#define NSTARTS ((int)(sizeof(starts) / sizeof(starts[0])))

/* Levels of repeat classes, coarse to fine (rounds of refinement), and
 * the first step of each (log of the factor), halved after a pass
 * without gain down to TUNE_MIN_STEP. */
static const int level_rounds[] = { 0, 1, GRAPH_REPEAT_ROUNDS };
static const double level_step[] = { 3.0, 1.0, 1.0 };
#define NLEVELS ((int)(sizeof(level_rounds) / sizeof(level_rounds[0])))
#define TUNE_MIN_STEP 0.3

struct tune {
	const struct graph *g;
	uint64_t budget;
	double deadline;
	struct plan *best, *trial;
	double best_cost;
	int best_start;          /* starts[] index of best, -1 for dtr's own */
	double *lw;              /* per start and node: log weight */
	double *w;               /* the weights of the run under way */
	int *cls, ncls;          /* the classes of the level */
	int *mem_off, *members;  /* the members of each class, by class */
	int *order;              /* classes by total memory, largest first */
	struct tune_stats st;
};

static int out_of_time(const struct tune *t)
{
	return stop_requested() || (t->deadline > 0 && cm_clock() > t->deadline);
}

/* Cost of dtr's plan with start k's weights, -1 when it has none, -2 when
 * out of memory; the plan kept as the best when cheaper. */
static double run(struct tune *t, int k, struct cm_error *err)
{
	struct dtr_opts o = { .heuristic = starts[k].heuristic, .keep_dead = starts[k].keep_dead,
			      .deadline = t->deadline, .weight = t->w };
	const double *lw = &t->lw[(size_t)k * t->g->n];
	double c;
	int r;

	for (int v = 0; v < t->g->n; v++)
		t->w[v] = exp(lw[v]);
	plan_clear(t->trial);
	r = dtr_plan(t->g, t->budget, &o, t->trial, err);
	t->st.runs++;
	if (r < 0)
		return -2;
	if (r)
		return -1;
	c = t->trial->cost;
	if (num_lt(c, t->best_cost)) {
		struct plan *sw = t->best;

		t->best = t->trial;
		t->trial = sw;
		t->best_cost = c;
		t->best_start = k;
	}
	return c;
}

struct cls_rank {
	double mem;
	int c;
};

static int by_mem(const void *x, const void *y)
{
	const struct cls_rank *a = x, *b = y;

	if (a->mem != b->mem)
		return a->mem > b->mem ? -1 : 1;
	return a->c - b->c;
}

/* The classes of level l into t: their members, and the order of the
 * search (largest total memory first). 0, or -1 with err set. */
static int level_classes(struct tune *t, int l, struct cm_error *err)
{
	const struct graph *g = t->g;
	struct cls_rank *rank;
	int *fill;

	if ((t->ncls = graph_repeat_classes(g, level_rounds[l], t->cls, err)) < 0)
		return -1;
	rank = calloc((size_t)t->ncls, sizeof(*rank));
	fill = calloc((size_t)t->ncls + 1, sizeof(int));
	if (rank == NULL || fill == NULL) {
		free(rank);
		free(fill);
		return cm_errorf(err, "out of memory");
	}
	memset(t->mem_off, 0, ((size_t)g->n + 1) * sizeof(int));
	for (int v = 0; v < g->n; v++) {
		t->mem_off[t->cls[v] + 1]++;
		rank[t->cls[v]].mem += (double)g->nodes[v].memory;
		rank[t->cls[v]].c = t->cls[v];
	}
	for (int c = 0; c < t->ncls; c++)
		t->mem_off[c + 1] += t->mem_off[c];
	for (int v = 0; v < g->n; v++)
		t->members[t->mem_off[t->cls[v]] + fill[t->cls[v]]++] = v;
	qsort(rank, (size_t)t->ncls, sizeof(*rank), by_mem);
	for (int c = 0; c < t->ncls; c++)
		t->order[c] = rank[c].c;
	free(rank);
	free(fill);
	t->st.classes = t->ncls;
	return 0;
}

/* Adds d to start k's log weight of class c. */
static void shift(struct tune *t, int k, int c, double d)
{
	double *lw = &t->lw[(size_t)k * t->g->n];

	for (int e = t->mem_off[c]; e < t->mem_off[c + 1]; e++)
		lw[t->members[e]] += d;
}

/* One pass over the classes of the level for start k, whose plan costs
 * *cur: each class's weight up by e^step, else down, kept when the plan
 * gets cheaper. Returns 1 when some change was kept, 0 when none, -1 with
 * err set. Classes without memory are skipped: they are never evicted. */
static int pass(struct tune *t, int k, double step, double *cur, struct cm_error *err)
{
	int gained = 0;

	for (int i = 0; i < t->ncls && !out_of_time(t); i++) {
		int c = t->order[i];

		if (t->g->nodes[t->members[t->mem_off[c]]].memory == 0)
			continue;
		for (int dir = 1; dir >= -1; dir -= 2) {
			double x;

			shift(t, k, c, dir * step);
			if ((x = run(t, k, err)) == -2)
				return -1;
			if (x >= 0 && num_lt(x, *cur)) {
				*cur = x;
				gained = 1;
				break;
			}
			shift(t, k, c, -dir * step);
		}
	}
	return gained;
}

/* Start k at level l from its current weights: passes with the step
 * halved after each pass without gain, down to TUNE_MIN_STEP (or a
 * single pass when once is set). Returns 1 when the level ended on its
 * own, 0 at the deadline, -1 with err set. */
static int descend(struct tune *t, int k, int l, int once, double *cur, struct cm_error *err)
{
	for (double step = level_step[l]; step >= TUNE_MIN_STEP;) {
		int r = pass(t, k, step, cur, err);

		if (r < 0)
			return -1;
		if (out_of_time(t))
			return 0;
		if (once)
			return 1;
		if (r == 0)
			step /= 2;
	}
	return 1;
}

/* The search: every start's first pass at the coarse level, then the
 * best start through every level. 0, or -1 with err set. */
static int search(struct tune *t, struct cm_error *err)
{
	double cost[NSTARTS];
	int k = 0, r = 1;

	for (int s = 0; s < NSTARTS; s++)
		cost[s] = -1;
	if (level_classes(t, 0, err))
		return -1;
	for (int s = 0; s < NSTARTS && !out_of_time(t); s++) {
		if ((cost[s] = run(t, s, err)) == -2)
			return -1;
		if (cost[s] < 0)
			continue;
		if (descend(t, s, 0, 1, &cost[s], err) < 0)
			return -1;
		if (cost[k] < 0 || cost[s] < cost[k])
			k = s;
	}
	if (out_of_time(t) || cost[k] < 0)
		return 0;
	for (int l = 0; l < NLEVELS && r == 1; l++) {
		if (l > 0 && level_classes(t, l, err))
			return -1;
		if ((r = descend(t, k, l, 0, &cost[k], err)) < 0)
			return -1;
	}
	t->st.converged = r == 1;
	return 0;
}

static void tune_release(struct tune *t)
{
	plan_free(t->best);
	plan_free(t->trial);
	free(t->lw);
	free(t->w);
	free(t->cls);
	free(t->mem_off);
	free(t->members);
	free(t->order);
}

int tune_plan(const struct graph *g, uint64_t budget, const struct tune_opts *o,
	      struct plan *p, struct tune_stats *st, struct cm_error *err)
{
	struct tune t = { .g = g, .budget = budget, .deadline = o ? o->deadline : 0,
			  .best_start = -1 };
	struct dtr_opts base = { .heuristic = DTR_BEST, .deadline = t.deadline };
	size_t n = (size_t)g->n + 1;
	int rc = -1;

	t.best = plan_new();
	t.trial = plan_new();
	t.lw = calloc(n * NSTARTS, sizeof(double));
	t.w = malloc(n * sizeof(double));
	t.cls = malloc(n * sizeof(int));
	t.mem_off = malloc((n + 1) * sizeof(int));
	t.members = malloc(n * sizeof(int));
	t.order = malloc(n * sizeof(int));
	if (!t.best || !t.trial || !t.lw || !t.w || !t.cls || !t.mem_off || !t.members || !t.order) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	/* dtr's own plan first: what the search must beat. */
	rc = dtr_plan(g, budget, &base, t.best, err);
	t.st.runs = 1;
	if (rc)
		goto out;
	t.best_cost = t.best->cost;
	if ((rc = search(&t, err)) < 0)
		goto out;
	if (t.best_start >= 0)
		snprintf(t.st.from, sizeof(t.st.from), "%s%s", dtr_heuristic_names[starts[t.best_start].heuristic],
			 starts[t.best_start].keep_dead ? ",keep-dead" : "");
	else
		snprintf(t.st.from, sizeof(t.st.from), "dtr");
	for (int i = 0; i < t.best->n; i++)
		if (plan_push(p, t.best->steps[i].op, t.best->steps[i].node, -1)) {
			rc = cm_errorf(err, "out of memory");
			goto out;
		}
	p->cost = t.best->cost;
	p->peak = t.best->peak;
	p->budget = budget;
	snprintf(p->strategy, sizeof(p->strategy), "dtr-tune");
out:
	if (rc == DTR_NO_PLAN)
		rc = TUNE_NO_PLAN;
	if (st)
		*st = t.st;
	tune_release(&t);
	return rc;
}

/* The plan of a fixed set of forward checkpoints (Chen et al.'s scheme in
 * the stage model): see baseline_plan_of_checkpoints in baseline.h.
 *
 * The stage matrices of such a plan are sparse: a value is kept through
 * at most two runs of stages (forward, then from its recomputation on),
 * and a stage computes its own node and the segments recomputed there.
 * This makes the plan that stages_drop_unused and plan_from_stages would
 * make of those matrices, step for step, from the runs and per-stage
 * lists: in time about linear in the plan instead of n^2 (the matrices
 * took 0.13 s a plan on 3,125 nodes, and a Chen sweep makes 40 plans). */
#include "baseline.h"

#include <stdlib.h>
#include <string.h>

/* Value x is kept into stages from + 1 .. to of each of its runs
 * 2x, 2x + 1 (a run with to <= from keeps nothing). */
struct runs {
	int n;
	int *from, *to, *read; /* read: the last stage of the run that reads x */
	int *s_off, *s_run;    /* the runs that start after stage t */
	int *r_off, *r, r_cap; /* stage t computes r[r_off[t] .. r_off[t + 1]), ascending */
	int *stack, *last;
	unsigned *seen, stamp;
	char *resident;
};

static void runs_release(struct runs *rs)
{
	free(rs->from);
	free(rs->to);
	free(rs->read);
	free(rs->s_off);
	free(rs->s_run);
	free(rs->r_off);
	free(rs->r);
	free(rs->stack);
	free(rs->last);
	free(rs->seen);
	free(rs->resident);
}

static int runs_init(struct runs *rs, int n)
{
	size_t m = (size_t)n + 1;

	memset(rs, 0, sizeof(*rs));
	rs->n = n;
	rs->r_cap = 4 * n + 16;
	rs->from = malloc(2 * m * sizeof(int));
	rs->to = malloc(2 * m * sizeof(int));
	rs->read = malloc(2 * m * sizeof(int));
	rs->s_off = calloc(m + 1, sizeof(int));
	rs->s_run = malloc(2 * m * sizeof(int));
	rs->r_off = malloc(m * sizeof(int));
	rs->r = malloc((size_t)rs->r_cap * sizeof(int));
	rs->stack = malloc(m * sizeof(int));
	rs->last = malloc(m * sizeof(int));
	rs->seen = calloc(m, sizeof(unsigned));
	rs->resident = calloc(m, 1);
	return rs->from && rs->to && rs->read && rs->s_off && rs->s_run && rs->r_off &&
	       rs->r && rs->stack && rs->last && rs->seen && rs->resident ? 0 : -1;
}

/* 1 when run j keeps its value into stage t. */
static int covers(const struct runs *rs, int j, int t)
{
	return rs->from[j] < t && t <= rs->to[j];
}

/* 1 when x is kept into stage t (S(t, x)). */
static int kept(const struct runs *rs, int x, int t)
{
	return covers(rs, 2 * x, t) || covers(rs, 2 * x + 1, t);
}

/* Puts x on the stack of stage t's computes unless it is there already
 * or kept into t; returns the new top. */
static int push(struct runs *rs, int top, int x, int t)
{
	if (rs->seen[x] != rs->stamp && !kept(rs, x, t)) {
		rs->seen[x] = rs->stamp;
		rs->stack[top++] = x;
	}
	return top;
}

/* The runs of x: (x, a] and (b, c] (stages_keep's from and to), clipped
 * to the stages there are; overlapping or adjacent ones merged. */
static void set_runs(struct runs *rs, int x, int a, int b, int c)
{
	int last = rs->n - 1;

	a = a < last ? a : last;
	c = c < last ? c : last;
	if (b >= 0 && b <= a) { /* merged into the first */
		a = c > a ? c : a;
		b = -1;
	}
	rs->from[2 * x] = x;
	rs->to[2 * x] = a;
	rs->from[2 * x + 1] = b;
	rs->to[2 * x + 1] = b >= 0 ? c : b;
}

/* The runs by the stage after which they start (counting sort). */
static void index_starts(struct runs *rs)
{
	int n = rs->n;

	memset(rs->s_off, 0, ((size_t)n + 2) * sizeof(int));
	for (int j = 0; j < 2 * n; j++)
		if (rs->to[j] > rs->from[j])
			rs->s_off[rs->from[j] + 2]++;
	for (int t = 0; t < n; t++)
		rs->s_off[t + 2] += rs->s_off[t + 1];
	for (int j = 0; j < 2 * n; j++)
		if (rs->to[j] > rs->from[j])
			rs->s_run[rs->s_off[rs->from[j] + 1]++] = j;
}

static int by_index(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* R of every stage, as stages_complete_r makes it: the stage's node, the
 * values kept from the next stage on but not into this one, and their
 * inputs not kept here, recursively. */
static int complete_r(const struct graph *g, struct runs *rs)
{
	int used = 0;

	index_starts(rs);
	for (int t = 0; t < rs->n; t++) {
		int top;

		rs->r_off[t] = used;
		rs->stamp++;
		top = push(rs, 0, t, t); /* a value is never kept into its own stage */
		for (int j = rs->s_off[t]; j < rs->s_off[t + 1]; j++)
			top = push(rs, top, rs->s_run[j] / 2, t);
		while (top > 0) {
			int k = rs->stack[--top];

			if (used == rs->r_cap) {
				int *r = realloc(rs->r, 2 * (size_t)rs->r_cap * sizeof(int));

				if (r == NULL)
					return -1;
				rs->r = r;
				rs->r_cap *= 2;
			}
			rs->r[used++] = k;
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
				top = push(rs, top, g->deps[e], t);
		}
		qsort(rs->r + rs->r_off[t], (size_t)(used - rs->r_off[t]), sizeof(int), by_index);
	}
	rs->r_off[rs->n] = used;
	return 0;
}

/* stages_drop_unused: a run ends at the last stage that reads its value
 * (computes a user of it); a run with no such stage goes, which can take
 * computes out of the stage it started after, so R is made again until
 * no run goes. Returns 0, or -1 when memory runs out. */
static int drop_unused(const struct graph *g, struct runs *rs)
{
	int gone;

	do {
		gone = 0;
		if (complete_r(g, rs))
			return -1;
		for (int j = 0; j < 2 * rs->n; j++)
			rs->read[j] = -1;
		for (int t = 0; t < rs->n; t++)
			for (int q = rs->r_off[t]; q < rs->r_off[t + 1]; q++) {
				int k = rs->r[q];

				for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
					int d = g->deps[e];

					for (int j = 2 * d; j < 2 * d + 2; j++)
						if (covers(rs, j, t))
							rs->read[j] = t;
				}
			}
		for (int j = 0; j < 2 * rs->n; j++) {
			if (rs->to[j] <= rs->from[j])
				continue;
			if (rs->read[j] < 0) {
				rs->to[j] = rs->from[j];
				gone++;
			} else {
				rs->to[j] = rs->read[j];
			}
		}
	} while (gone);
	return 0;
}

/* plan_from_stages on the runs: in each stage its computes in index order,
 * a value freed right after its last use in the stage unless kept into the
 * next. (A kept value that the stage does not read and does not keep
 * further, which plan_from_stages frees at the stage's start, is not left
 * by drop_unused.) */
static int emit(const struct graph *g, struct runs *rs, struct plan *p)
{
	for (int t = 0; t < rs->n; t++) {
		int lo = rs->r_off[t], hi = rs->r_off[t + 1];

		/* last[x]: the last node of the stage that uses x (or computes
		 * it, when nothing later in the stage uses it). */
		for (int q = lo; q < hi; q++) {
			int k = rs->r[q];

			rs->last[k] = -1;
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
				rs->last[g->deps[e]] = -1;
		}
		for (int q = lo; q < hi; q++) {
			int k = rs->r[q];

			if (rs->last[k] < k)
				rs->last[k] = k;
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
				rs->last[g->deps[e]] = k;
		}
		for (int q = lo; q < hi; q++) {
			int k = rs->r[q];

			if (!rs->resident[k]) {
				if (plan_push(p, PLAN_COMPUTE, k, t))
					return -1;
				rs->resident[k] = 1;
			}
			for (int e = g->dep_off[k]; e <= g->dep_off[k + 1]; e++) {
				/* The inputs of k, then k itself. */
				int d = e < g->dep_off[k + 1] ? g->deps[e] : k;

				if (rs->resident[d] && rs->last[d] == k && !kept(rs, d, t + 1)) {
					rs->resident[d] = 0;
					if (plan_push(p, PLAN_FREE, d, t))
						return -1;
				}
			}
		}
	}
	return 0;
}

int baseline_checkpoint_keeps(const struct graph *g, const char *ckpt, int *keep)
{
	int n = g->n, *last = malloc(((size_t)n + 1) * sizeof(int));

	if (last == NULL)
		return -1;
	graph_last_use(g, last);
	/* keep[3x + 1]: the first backward stage that needs forward value x
	 * again, directly or through another recomputed forward value; -1 if
	 * none. Users come later, so one backward sweep settles it. */
	for (int x = n - 1; x >= 0; x--) {
		int *redo = &keep[3 * x + 1];

		keep[3 * x] = x;
		*redo = -1;
		keep[3 * x + 2] = last[x];
		if (g->nodes[x].backward || ckpt[x]) {
			keep[3 * x] = last[x];
			continue;
		}
		for (int e = g->user_off[x]; e < g->user_off[x + 1]; e++) {
			int y = g->users[e];
			int s = g->nodes[y].backward ? y : keep[3 * y + 1];

			if (!g->nodes[y].backward)
				keep[3 * x] = y; /* users ascend: the last forward one */
			if (s >= 0 && (*redo < 0 || s < *redo))
				*redo = s;
		}
	}
	free(last);
	return 0;
}

int baseline_plan_of_checkpoints(const struct graph *g, const char *ckpt,
				 struct plan *p, struct cm_error *err)
{
	int n = g->n, rc = -1;
	int *keep = malloc((3 * (size_t)n + 1) * sizeof(int));
	struct runs rs;

	if (runs_init(&rs, n) || keep == NULL || baseline_checkpoint_keeps(g, ckpt, keep)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	for (int x = 0; x < n; x++)
		set_runs(&rs, x, keep[3 * x], keep[3 * x + 1], keep[3 * x + 2]);
	if (drop_unused(g, &rs) || emit(g, &rs, p))
		cm_errorf(err, "out of memory");
	else
		rc = 0;
out:
	runs_release(&rs);
	free(keep);
	return rc;
}

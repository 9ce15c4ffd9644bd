#include "partition.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../common/stop.h"

const char *const partition_status_names[4] = { "optimal", "feasible", "infeasible",
						 "no_plan" };

/* The backward's timeline, at the positions 0 .. nb - 1 of the backward
 * nodes in file order. own[i]: the memory of the backward's own values
 * live at its i-th node, each from its compute to its last user, and a
 * value no node reads (a gradient, which the backward returns) to the
 * end, plus the i-th node's workspace. For a forward v: last[v], the
 * last position at which a backward node reads v or a forward value
 * computed from v, so that a saved v is held until then (-1 when none);
 * first[v] and final[v], the first and last positions at which a
 * backward node reads v itself (-1 when none). */
struct timeline {
	int nb;
	uint64_t *own;
	int *last, *first, *final;
};

static void timeline_release(struct timeline *t)
{
	free(t->own);
	free(t->last);
	free(t->first);
	free(t->final);
	*t = (struct timeline){ 0 };
}

/* 0, or -1 when out of memory. */
static int timeline_make(const struct graph *g, struct timeline *t)
{
	size_t n = (size_t)g->n + 1;
	int *pos = malloc(n * sizeof(int));
	int64_t *diff = NULL, run = 0;

	*t = (struct timeline){ 0, NULL, malloc(n * sizeof(int)), malloc(n * sizeof(int)),
				malloc(n * sizeof(int)) };
	if (pos && t->last && t->first && t->final)
		for (int v = 0; v < g->n; v++)
			pos[v] = g->nodes[v].backward ? t->nb++ : -1;
	diff = pos && t->last && t->first && t->final ?
	       calloc((size_t)t->nb + 2, sizeof(int64_t)) : NULL;
	t->own = diff ? malloc(((size_t)t->nb + 1) * sizeof(uint64_t)) : NULL;
	if (t->own == NULL) {
		free(pos);
		free(diff);
		timeline_release(t);
		return -1;
	}
	for (int v = g->n - 1; v >= 0; v--) {
		int end = g->nodes[v].backward && graph_nusers(g, v) == 0 ? t->nb - 1 : -1;

		t->first[v] = t->final[v] = -1;
		for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++) {
			int u = g->users[e], at = g->nodes[u].backward ? pos[u] : -1;

			if (!g->nodes[v].backward && at >= 0) {
				t->first[v] = t->first[v] < 0 || at < t->first[v] ? at : t->first[v];
				t->final[v] = at > t->final[v] ? at : t->final[v];
			}
			/* A forward user passes on the last read of what it computes. */
			if (!g->nodes[v].backward && !g->nodes[u].backward)
				at = t->last[u];
			end = at > end ? at : end;
		}
		if (g->nodes[v].backward) {
			diff[pos[v]] += (int64_t)(g->nodes[v].memory + g->nodes[v].workspace);
			diff[pos[v] + 1] -= (int64_t)g->nodes[v].workspace;
			diff[(end > pos[v] ? end : pos[v]) + 1] -= (int64_t)g->nodes[v].memory;
		}
		t->last[v] = g->nodes[v].backward ? -1 : end;
	}
	for (int i = 0; i < t->nb; i++)
		t->own[i] = (uint64_t)(run += diff[i]);
	free(pos);
	free(diff);
	return 0;
}

/* p's again set, saved set (cut to what is read), counts and cost from
 * p->saved, and in live[0 .. nb] the memory held besides fixed memory:
 * where the forward ends (live[0], all saved values) and at each backward
 * position (live[i + 1]). */
static int profile(const struct graph *g, const struct timeline *t, struct partition *p,
		   uint64_t *live)
{
	uint64_t saved = 0;
	int64_t *diff = calloc((size_t)t->nb + 2, sizeof(int64_t)), run = 0;
	int *at = malloc(((size_t)g->n + 1) * sizeof(int));
	int *end = malloc(((size_t)g->n + 1) * sizeof(int));

	if (diff == NULL || at == NULL || end == NULL) {
		free(diff);
		free(at);
		free(end);
		return -1;
	}
	memset(p->again, 0, (size_t)g->n);
	/* Nodes come in topological order: a forward node is computed again
	 * when a backward node, or one computed again, reads it unsaved. */
	for (int v = g->n - 1; v >= 0; v--) {
		if (!g->nodes[v].backward && !p->again[v])
			continue;
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int u = g->deps[e];

			if (!g->nodes[u].backward && (!p->saved[u] || g->nodes[u].unsaveable))
				p->again[u] = 1;
		}
	}
	p->cost = graph_total_cost(g);
	p->n_saved = p->n_again = 0;
	/* diff[i]: the change at backward position i of the saved values
	 * held and the materialized values computed again. A value computed
	 * again is computed just before the first backward node that reads
	 * it or a value computed again from it (at[v]) and held until the
	 * last of those reads (end[v]), where a value computed again that is
	 * not materialized reads it at each of its own reads (it is computed
	 * inside each program that reads it). */
	for (int v = g->n - 1; v >= 0; v--) {
		int read = 0, from = INT_MAX, until = -1;

		for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++) {
			int u = g->users[e];

			read |= g->nodes[u].backward || p->again[u];
			if (!g->nodes[u].backward && p->again[u]) {
				int r = g->nodes[u].materialized ? at[u] : end[u];

				from = at[u] < from ? at[u] : from;
				until = r > until ? r : until;
			}
		}
		p->saved[v] = p->saved[v] && !g->nodes[v].backward && !g->nodes[v].unsaveable && read;
		if (p->saved[v]) {
			p->cost += g->nodes[v].save_cost;
			saved += g->nodes[v].memory;
			diff[t->last[v] + 1] -= (int64_t)g->nodes[v].memory;
			p->n_saved++;
		}
		if (!p->again[v])
			continue;
		p->cost += g->nodes[v].cost;
		p->n_again++;
		if (t->first[v] >= 0) {
			from = t->first[v] < from ? t->first[v] : from;
			until = t->final[v] > until ? t->final[v] : until;
		}
		at[v] = from;
		end[v] = until;
		if (g->nodes[v].materialized) {
			diff[from] += (int64_t)g->nodes[v].memory;
			diff[until + 1] -= (int64_t)g->nodes[v].memory;
		}
	}
	live[0] = saved;
	for (int i = 0; i < t->nb; i++)
		live[i + 1] = (uint64_t)((int64_t)saved + (run += diff[i]) + (int64_t)t->own[i]);
	free(diff);
	free(at);
	free(end);
	return 0;
}

/* The peak of profile's live, where the forward ends or in the backward,
 * with fixed memory. */
static uint64_t peak(const struct graph *g, const struct timeline *t, const uint64_t *live)
{
	uint64_t top = 0;

	for (int i = 0; i <= t->nb; i++)
		top = live[i] > top ? live[i] : top;
	return top + g->fixed_memory;
}

int partition_derive(const struct graph *g, struct partition *p)
{
	struct timeline t;
	uint64_t *live;

	if (timeline_make(g, &t))
		return -1;
	live = malloc(((size_t)t.nb + 1) * sizeof(uint64_t));
	if (live == NULL || profile(g, &t, p, live)) {
		free(live);
		timeline_release(&t);
		return -1;
	}
	p->memory = peak(g, &t, live);
	free(live);
	timeline_release(&t);
	return 0;
}

int partition_keep_all(const struct graph *g, uint64_t *memory, double *cost)
{
	struct partition p = { .saved = calloc((size_t)g->n + 1, 1),
			       .again = calloc((size_t)g->n + 1, 1) };
	int rc = -1;

	if (p.saved && p.again) {
		for (int v = 0; v < g->n; v++)
			p.saved[v] = !g->nodes[v].backward;
		rc = partition_derive(g, &p);
		if (rc == 0) {
			*memory = p.memory;
			*cost = p.cost;
		}
	}
	partition_release(&p);
	return rc;
}

void partition_release(struct partition *p)
{
	free(p->saved);
	free(p->again);
	p->saved = p->again = NULL;
}

/* The column that is 1 where the forward node w is computed again by
 * backward position i: x_w where w's first read is at or before i, else
 * h_w (hcol, memory_row's), or -1 where w cannot be. */
static int again_by(const struct timeline *t, const int *col, const int *hcol, int w, int i)
{
	if (col[w] < 0)
		return -1;
	return t->first[w] >= 0 && t->first[w] <= i ? col[w] : hcol[w];
}

/* Whether materialized v, computed again, can be held at backward
 * position i for a value computed again from it later than v's own reads:
 * i is past v's last backward read (or the backward reads v nowhere) and
 * not past the last read of a value computed from it. */
static int held_for_later(const struct graph *g, const struct timeline *t, int v, int i)
{
	return g->nodes[v].materialized && g->nodes[v].memory > 0 && t->last[v] >= i &&
	       (t->first[v] < 0 || i > t->final[v]);
}

/* mark[u] = 1 for the forward nodes u (with columns) through which a
 * value v of held_for_later at i can be read at i or later: v's forward
 * users, and on through the forward users of each such u that is not
 * materialized and that no backward node reads at i or later (a compiler
 * computes such a u inside each program that reads it, so it reads its
 * own inputs there). */
static void later_marks(const struct graph *g, const struct timeline *t, int i, const int *col,
			char *mark)
{
	for (int v = 0; v < g->n; v++)
		mark[v] = 0;
	for (int v = 0; v < g->n; v++) {
		int through = col[v] >= 0 && held_for_later(g, t, v, i);

		through |= mark[v] && !g->nodes[v].materialized && t->final[v] < i;
		for (int e = g->user_off[v]; e < g->user_off[v + 1] && through; e++)
			if (col[g->users[e]] >= 0)
				mark[g->users[e]] = 1;
	}
}

/* bcol[u] for the forward nodes u whose "computed again by position
 * i - 1" a full row at i reads (the materialized ones of later_marks, and
 * on through users where u's first read is later): x_u where u's first
 * read is at or before i - 1, else a column b_u with b_u <= x_u and b_u
 * <= the sum of b_w over u's forward users w (u is computed again by
 * i - 1 only where one of them is), so that b_u is at most 1 where u is;
 * -1 elsewhere. */
static void before_cols(const struct graph *g, const struct timeline *t, int i, const int *col,
			const char *mark, int *bcol, struct milp *m, struct milp_row *r)
{
	for (int v = 0; v < g->n; v++)
		bcol[v] = mark[v] && g->nodes[v].materialized ? -2 : -1;
	for (int v = 0; v < g->n; v++)   /* users come after v */
		if (bcol[v] == -2 && !(t->first[v] >= 0 && t->first[v] <= i - 1))
			for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++)
				if (col[g->users[e]] >= 0)
					bcol[g->users[e]] = -2;
	for (int v = g->n - 1; v >= 0; v--) {
		char name[48];

		if (bcol[v] != -2)
			continue;
		if (t->first[v] >= 0 && t->first[v] <= i - 1) {
			bcol[v] = col[v];
			continue;
		}
		snprintf(name, sizeof(name), "b%d_%d", v, i);
		bcol[v] = milp_add_col(m, name, 0, 1, 0, 0);
		milp_add_row(m, -MILP_INF, 0, 2, (int[]){ bcol[v], col[v] }, (double[]){ 1, -1 });
		milp_row_add(r, bcol[v], 1);
		for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++)
			milp_row_add(r, bcol[g->users[e]], -1);
		milp_row_emit(m, r, -MILP_INF, 0);
	}
}

/* lcol[u] for the forward nodes u of later_marks: 1 where u is computed
 * again and read at i or later. A materialized u is read once, where it
 * is computed: a column l_u >= x_u - b_u (none where u's first read is
 * at or before i - 1: then it is computed by i - 1). One that a backward
 * node reads at i or later: x_u. Another: a column l_u >= l_w + x_u - 1
 * for each forward user w (u is computed inside w's program). -1
 * elsewhere. */
static void later_cols(const struct graph *g, const struct timeline *t, int i, const int *col,
		       const char *mark, const int *bcol, int *lcol, struct milp *m)
{
	for (int u = g->n - 1; u >= 0; u--) {
		char name[48];

		lcol[u] = -1;
		if (!mark[u] || (g->nodes[u].materialized && bcol[u] == col[u]))
			continue;
		if (!g->nodes[u].materialized && t->final[u] >= i) {
			lcol[u] = col[u];
			continue;
		}
		snprintf(name, sizeof(name), "l%d_%d", u, i);
		lcol[u] = milp_add_col(m, name, 0, 1, 0, 0);
		if (g->nodes[u].materialized) {
			milp_add_row(m, 0, MILP_INF, 3, (int[]){ lcol[u], col[u], bcol[u] },
				     (double[]){ 1, -1, 1 });
			continue;
		}
		for (int e = g->user_off[u]; e < g->user_off[u + 1]; e++) {
			int w = g->users[e];

			if (lcol[w] >= 0)
				milp_add_row(m, -1, MILP_INF, 3, (int[]){ lcol[u], lcol[w], col[u] },
					     (double[]){ 1, -1, -1 });
		}
	}
}

/* k_v of memory_row (v of held_for_later at i), its rows added to m;
 * returns its column. */
static int held_col(const struct graph *g, const struct timeline *t, int v, int i,
		    const int *col, const int *hcol, const int *lcol, struct milp *m)
{
	char name[48];
	int k;

	snprintf(name, sizeof(name), "k%d_%d", v, i);
	k = milp_add_col(m, name, 0, 1, 0, 0);
	for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++) {
		int u = g->users[e];

		if (lcol[u] < 0)
			continue;
		if (t->first[v] >= 0) {
			milp_add_row(m, 0, MILP_INF, 3, (int[]){ k, lcol[u], col[v] + 1 },
				     (double[]){ 1, -1, 1 });
			continue;
		}
		for (int f = g->user_off[v]; f < g->user_off[v + 1]; f++) {
			int w = again_by(t, col, hcol, g->users[f], i);

			if (w >= 0)
				milp_add_row(m, -1, MILP_INF, 4, (int[]){ k, w, lcol[u], col[v] + 1 },
					     (double[]){ 1, -1, -1, 1 });
		}
	}
	return k;
}

/* Scratch of a full memory row, g->n entries each: the h, b and l
 * columns of memory_row, before_cols and later_cols, and later_marks'. */
struct full_scratch {
	int *hcol, *bcol, *lcol;
	char *mark;
};

/* The model's memory row at backward position i: the saved values held
 * there, the backward's own, and each materialized value computed again
 * that is held there. That is x_v from v's first backward read to its last
 * (full: else only where v's first read is at or before i). With full,
 * also:
 * - each v whose first read comes later, computed again for a value
 *   computed from it that is read by i: a column h_v >= 0 per such v,
 *   with h_v >= again_by(w) - r_v for each forward user w (a value
 *   computed by i needs v then, saved or computed again), so that h_v is
 *   1 where v is computed again by i;
 * - each v of held_for_later, held for a forward user u that reads it
 *   at or after i (l_u, later_cols'), v not saved: a column k_v >=
 *   l_u - r_v per user u past v's last read; where the backward reads v
 *   nowhere, v is computed only when a first user is, so k_v >=
 *   again_by(u') + l_u - 1 - r_v per pair of users.
 * The full row counts what partition_derive does. */
static void memory_row(const struct graph *g, const struct timeline *t, int i, int full,
		       double room, const int *col, struct full_scratch *fs, struct milp *m,
		       struct milp_row *r)
{
	double scale = room > 0 ? room : 1;   /* bytes per unit of the row */
	uint64_t own = t->nb > 0 ? t->own[i] : 0;
	int *hcol = fs->hcol;

	for (int v = g->n - 1; v >= 0; v--) {
		hcol[v] = -1;
		if (!full || col[v] < 0 || (t->first[v] >= 0 && t->first[v] <= i))
			continue;
		for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++) {
			int w = again_by(t, col, hcol, g->users[e], i);
			char name[48];

			if (w < 0)
				continue;
			snprintf(name, sizeof(name), "h%d_%d", v, i);
			if (hcol[v] < 0)
				hcol[v] = milp_add_col(m, name, 0, 1, 0, 0);
			milp_add_row(m, 0, MILP_INF, 3, (int[]){ hcol[v], col[v] + 1, w },
				     (double[]){ 1, 1, -1 });
		}
	}
	if (full) {
		later_marks(g, t, i, col, fs->mark);
		before_cols(g, t, i, col, fs->mark, fs->bcol, m, r);
		later_cols(g, t, i, col, fs->mark, fs->bcol, fs->lcol, m);
	}
	for (int v = 0; v < g->n; v++) {
		double share = (double)g->nodes[v].memory / scale;

		if (col[v] < 0 || g->nodes[v].memory == 0)
			continue;
		if (t->last[v] >= i)
			milp_row_add(r, col[v] + 1, share);
		if (full && held_for_later(g, t, v, i))
			milp_row_add(r, held_col(g, t, v, i, col, hcol, fs->lcol, m), share);
		if (!g->nodes[v].materialized || t->first[v] < 0 || i > t->final[v])
			continue;
		if (t->first[v] <= i)
			milp_row_add(r, col[v], share);
		else
			milp_row_add(r, hcol[v], share);
	}
	milp_row_emit(m, r, -MILP_INF, (room - (double)own) / scale);
}

/* The model: for each forward node v the backward needs (last[v] >= 0),
 * x_v (computed again; objective cost / unit, objective_unit's) and
 * r_v (saved; objective save_cost / unit, or 0 without save_costs; fixed
 * at 0 where v is unsaveable). Rows: x_v + r_v >= 1 for the values a
 * backward node reads;
 * x_u + r_u >= x_v for each input u of v; and memory rows within room
 * (memory_row): at each backward position whose own memory exceeds that
 * at every earlier one and at each first read of a materialized value,
 * and full ones at the positions i with cut[i]. The rows never count
 * more than partition_derive, so the model is a relaxation of the
 * partition's memory, exact where it has a full row. col[v] is x_v's
 * column and r_v's the next; -1 for the nodes without. */
static int build(const struct graph *g, const struct timeline *t, double room, double unit,
		 int save_costs, const char *cut, int *col, struct milp *m, struct cm_error *err)
{
	struct milp_row mem = { 0 };
	uint64_t top = 0;
	size_t n = (size_t)g->n + 1;
	char *row = calloc((size_t)t->nb + 1, 1);
	int *cols = malloc(3 * n * sizeof(int));
	struct full_scratch fs = { cols, cols + n, cols + 2 * n, malloc(n) };

	if (row == NULL || cols == NULL || fs.mark == NULL) {
		free(row);
		free(cols);
		free(fs.mark);
		return cm_errorf(err, "out of memory");
	}
	/* The checkpoint-all cost as a column fixed at 1 (column 0): the
	 * solver's relative gap is then one on the step's whole cost. */
	milp_add_col(m, "floor", 1, 1, graph_total_cost(g) / unit, 0);
	for (int v = 0; v < g->n; v++) {
		char name[32];

		col[v] = -1;
		if (g->nodes[v].backward || t->last[v] < 0)
			continue;
		snprintf(name, sizeof(name), "x%d", v);
		col[v] = milp_add_col(m, name, 0, 1, g->nodes[v].cost / unit, 1);
		snprintf(name, sizeof(name), "r%d", v);
		milp_add_col(m, name, 0, g->nodes[v].unsaveable ? 0 : 1,
			     save_costs ? g->nodes[v].save_cost / unit : 0, 1);
		if (g->nodes[v].materialized && t->first[v] >= 0)
			row[t->first[v]] = 1;
	}
	for (int i = 0; i < t->nb; i++)
		if (i == 0 || t->own[i] > top) {
			row[i] = 1;
			top = t->own[i];
		}
	for (int v = 0; v < g->n && !m->failed; v++) {
		if (col[v] < 0)
			continue;
		if (t->first[v] >= 0)   /* a backward node reads v */
			milp_add_row(m, 1, MILP_INF, 2, (int[]){ col[v], col[v] + 1 },
				     (double[]){ 1, 1 });
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int u = g->deps[e];

			milp_add_row(m, 0, MILP_INF, 3, (int[]){ col[u], col[u] + 1, col[v] },
				     (double[]){ 1, 1, -1 });
		}
	}
	for (int i = 0; i < (t->nb > 0 ? t->nb : 1) && !m->failed; i++)
		if (t->nb == 0 || row[i] || cut[i])
			memory_row(g, t, i, t->nb > 0 && cut[i], room, col, &fs, m, &mem);
	free(row);
	free(cols);
	free(fs.mark);
	milp_row_release(&mem);
	return milp_ok(m, err);
}

/* The solve's state: the budget, the objective's unit and the largest
 * cost, whether the
 * objective counts save costs, profile's scratch, the positions with full
 * rows, the best answer within the budget (when have), the largest bound
 * of the rounds (or -1), and whether the graph has materialized values
 * (without, the first round's rows are exact). */
struct solve_state {
	const struct graph *g;
	const struct timeline *t;
	uint64_t budget;
	double unit, most, bound;
	int save_costs;
	uint64_t *live;
	char *cut;
	struct partition best;
	int have, relaxed;
};

/* One round of the solve: the model at room with s's full rows, started
 * from s's best when it has one. *answered: p holds the solver's answer,
 * its figures from profile (s->live). *proven_none: the model has none,
 * proven. *bound: a lower bound on the cost of every partition within
 * the model, or -1. 0, or -1 with err set. */
static int round_solve(struct solve_state *s, double room, const struct solver_ops *ops,
		       struct solve_opts *so, struct partition *p, int *answered,
		       int *proven_none, double *bound, struct cm_error *err)
{
	const struct graph *g = s->g;
	const struct partition *start = s->have ? &s->best : NULL;
	int *col = malloc(((size_t)g->n + 1) * sizeof(int)), rc = -1;
	double *x0 = NULL;
	struct milp m;
	struct milp_result res = { 0 };

	milp_init(&m);
	*answered = *proven_none = 0;
	*bound = -1;
	if (col == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (build(g, s->t, room, s->unit, s->save_costs, s->cut, col, &m, err))
		goto out;
	if (start != NULL) {
		if ((x0 = calloc((size_t)m.ncols + 1, sizeof(double))) == NULL) {
			cm_errorf(err, "out of memory");
			goto out;
		}
		x0[0] = 1;
		for (int v = 0; v < g->n; v++)
			if (col[v] >= 0) {
				x0[col[v]] = start->again[v];
				x0[col[v] + 1] = start->saved[v];
			}
	}
	so->start = x0;
	so->relaxation = 0;
	if (m.ncols > 1 && solver_solve(ops, &m, so, &res, err))
		goto out;
	*proven_none = m.ncols > 1 && res.x == NULL && res.status == MILP_INFEASIBLE;
	*answered = m.ncols == 1 || res.x != NULL;
	memset(p->saved, 0, (size_t)g->n);
	for (int v = 0; v < g->n && res.x != NULL; v++)
		p->saved[v] = col[v] >= 0 && res.x[col[v] + 1] > 0.5;
	if (*answered && profile(g, s->t, p, s->live)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	/* Proven at gap 0 (or nothing to choose): the answer's cost; else the
	 * solver's bound less a tolerance per column (1e-9 of the largest
	 * cost each). */
	if (*answered && (m.ncols == 1 || (res.status == MILP_OPTIMAL && so->gap <= 0)))
		*bound = p->cost;
	else if (res.has_bound)
		*bound = s->unit * res.bound - 1e-9 * m.ncols * s->most;
	rc = 0;
out:
	so->start = NULL;
	milp_result_release(&res);
	milp_release(&m);
	free(x0);
	free(col);
	return rc;
}

/* Copies a's saved set and figures to b (both allocated for g). */
static void keep(const struct graph *g, const struct partition *a, struct partition *b)
{
	memcpy(b->saved, a->saved, (size_t)g->n);
	memcpy(b->again, a->again, (size_t)g->n);
	b->cost = a->cost;
	b->memory = a->memory;
	b->n_saved = a->n_saved;
	b->n_again = a->n_again;
}

/* The peak of live (profile's) plus fixed memory, into p->memory; the
 * backward positions over room get a full row in cut, the PARTITION_CUTS
 * most over first. Returns how many positions were cut anew. */
static int settle_memory(const struct graph *g, const struct timeline *t, const uint64_t *live,
			 uint64_t room, char *cut, struct partition *p)
{
	int n = 0;

	p->memory = peak(g, t, live);
	for (int k = 0; k < PARTITION_CUTS; k++) {
		int at = -1;

		for (int i = 0; i < t->nb; i++)
			if (!cut[i] && live[i + 1] > room && (at < 0 || live[i + 1] > live[at + 1]))
				at = i;
		if (at < 0)
			break;
		cut[at] = 1;
		n++;
	}
	return n;
}


/* The rounds (partition_solve, below): p holds the last round's answer.
 * Returns 1 when a round's relaxation has no answer (proven infeasible),
 * 0 when the rounds end, -1 with err set. */
static int run_rounds(struct solve_state *s, const struct solver_ops *ops,
		      const struct solve_opts *o, struct partition *p, struct cm_error *err)
{
	const struct graph *g = s->g;
	uint64_t room = s->budget - g->fixed_memory;
	struct solve_opts so = *o;
	double end = o->time_limit > 0 ? cm_clock() + o->time_limit : 0;

	/* "optimal" is within num_tol of the step's cost: a solver's
	 * default tolerance is coarser (Cbc's, where it cannot take the
	 * objective in whole numbers, an absolute 1e-5 of a unit; GLPK's a
	 * relative 1e-7). */
	so.prune_tol = NUM_EPS * graph_total_cost(g) / s->unit;
	for (int r = 0; r < PARTITION_ROUNDS && !stop_requested(); r++) {
		int answered, none;
		double b;

		/* Where the rows are a relaxation, a round takes at most a quarter
		 * of the time left, so that later rounds, with the rows the
		 * earlier ones lacked, have time. */
		so.time_limit = end > 0 ? end - cm_clock() : 0;
		if (end > 0 && so.time_limit <= 0)
			break;
		if (end > 0 && s->relaxed && r + 1 < PARTITION_ROUNDS &&
		    so.time_limit > 4 * PARTITION_ROUND_MIN)
			so.time_limit = fmax(PARTITION_ROUND_MIN, so.time_limit / 4);
		if (round_solve(s, (double)room, ops, &so, p, &answered, &none, &b, err))
			return -1;
		s->bound = b > s->bound ? b : s->bound;
		if (none)
			return 1;
		if (!answered)
			break;
		if (settle_memory(g, s->t, s->live, room, s->cut, p) == 0 ||
		    p->memory <= s->budget) {
			if (p->memory <= s->budget && (!s->have || p->cost < s->best.cost)) {
				keep(g, p, &s->best);
				s->have = 1;
			}
			break;
		}
	}
	return 0;
}

/* run_rounds, and where the graph has save costs and no round found a
 * partition within the budget, the rounds again in the time left with
 * the cost of the values computed again alone, keeping the full rows made
 * so far. Save costs lead the solver to compute more again, which takes
 * more rounds of full rows; answers that save more fit sooner. The
 * bounds of both hold (save costs are >= 0). Returns as run_rounds. */
static int solve_rounds(struct solve_state *s, const struct solver_ops *ops,
			const struct solve_opts *o, struct partition *p, struct cm_error *err)
{
	double end = o->time_limit > 0 ? cm_clock() + o->time_limit : 0;
	struct solve_opts rest = *o;
	int proven = run_rounds(s, ops, o, p, err);

	if (proven != 0 || s->have || !s->save_costs || (end > 0 && cm_clock() >= end))
		return proven;
	rest.time_limit = end > 0 ? end - cm_clock() : 0;
	s->save_costs = 0;
	return run_rounds(s, ops, &rest, p, err);
}

/* The objective's unit: the least positive cost or save cost, so that
 * every coefficient is 1 or more, but no less than 2^-20 of the largest,
 * so that none is above 2^20. LP solvers take a reduced cost within
 * 1e-7 for 0, and a pinned value costs the whole step: in units of the
 * largest cost an op can be 1e-8, and GLPK "proved" optimal a partition
 * 2e-7 of the step dearer than the least. In units of the least cost
 * (1 FLOP, where the largest is 2e10) GLPK "proved" a relaxation
 * infeasible that Cbc solved. 1 when no cost is positive; *most: the
 * largest cost. */
static double objective_unit(const struct graph *g, double *most)
{
	double least = INFINITY;

	*most = 0;
	for (int v = 0; v < g->n; v++) {
		const double c[2] = { g->nodes[v].cost, g->nodes[v].save_cost };

		for (int k = 0; k < 2; k++) {
			least = c[k] > 0 && c[k] < least ? c[k] : least;
			*most = fmax(*most, c[k]);
		}
	}
	return *most > 0 ? fmax(least, ldexp(*most, -20)) : 1;
}

int partition_solve(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		    const struct solve_opts *o, struct partition *p, struct cm_error *err)
{
	struct timeline t;
	struct solve_state s = { .g = g, .t = &t, .budget = budget, .bound = -1,
				 .best = { .saved = calloc((size_t)g->n + 1, 1),
					   .again = calloc((size_t)g->n + 1, 1) } };
	int rc = -1, proven;

	*p = (struct partition){ .saved = calloc((size_t)g->n + 1, 1),
				 .again = calloc((size_t)g->n + 1, 1) };
	if (!s.best.saved || !s.best.again || !p->saved || !p->again || timeline_make(g, &t)) {
		cm_errorf(err, "out of memory");
		partition_release(&s.best);
		partition_release(p);
		return -1;
	}
	s.live = malloc(((size_t)t.nb + 1) * sizeof(uint64_t));
	s.cut = calloc((size_t)t.nb + 1, 1);
	/* A lower bound on any partition's memory: fixed, and the backward's
	 * own values where they peak. */
	p->least = g->fixed_memory;
	for (int i = 0; i < t.nb; i++)
		if (g->fixed_memory + t.own[i] > p->least)
			p->least = g->fixed_memory + t.own[i];
	s.unit = objective_unit(g, &s.most);
	for (int v = 0; v < g->n; v++) {
		s.save_costs |= g->nodes[v].save_cost > 0;
		s.relaxed |= !g->nodes[v].backward && g->nodes[v].materialized;
	}
	/* The saved set that keeps nothing (everything computed again), where
	 * it fits: the first answer, and the solver's start. */
	if (s.live == NULL || s.cut == NULL || profile(g, &t, &s.best, s.live)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	s.best.memory = peak(g, &t, s.live);
	s.have = s.best.memory <= budget;
	/* Rounds: the model's memory is a relaxation of the partition's, so
	 * an answer can be over the budget as derived; the positions where it
	 * is get full rows (exact), and the solve runs again. Every round's
	 * bound holds for every partition within the budget. */
	proven = budget < p->least ? 1 : solve_rounds(&s, ops, o, p, err);
	if (proven < 0)
		goto out;
	p->by_solver = proven && budget >= p->least;
	p->status = proven ? PARTITION_INFEASIBLE : s.have ? PARTITION_FEASIBLE : PARTITION_NO_PLAN;
	if (p->status == PARTITION_FEASIBLE) {
		keep(g, &s.best, p);
		p->bound = s.bound > graph_total_cost(g) ? s.bound : graph_total_cost(g);
		p->has_bound = s.bound >= 0 && !num_lt(p->cost, p->bound);
		/* A bound that meets the cost proves it, whatever the gap. */
		if (p->has_bound && num_eq(p->bound, p->cost)) {
			p->status = PARTITION_OPTIMAL;
			p->bound = p->cost;
		}
	}
	rc = 0;
out:
	if (rc)
		partition_release(p);
	partition_release(&s.best);
	timeline_release(&t);
	free(s.live);
	free(s.cut);
	return rc;
}

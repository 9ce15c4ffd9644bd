#include "turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../common/stop.h"
#include "remat.h"

/* Nodes the bound is taken at, at most (pick_cuts): an LP each. */
#define TURN_CUTS 8

/* Taken off the LP's value, per column, in units of the largest cost
 * (the objective's scale): ten times the simplex codes' tolerance on
 * reduced costs (1e-7 in Clp and GLPK), within which a basis passes for
 * optimal while its value may lie above the LP's optimum by up to that
 * much per column in [0, 1]. Seen: Clp 1.02094 and GLPK 1.02072 where
 * the optimum is 1.02024 (gpt96, f = .5, objective scaled by the
 * checkpoint-all cost, whose costs reach 1e-8 of it). */
#define TURN_TOLERANCE 1e-6

/* The largest node cost: the objective's unit. */
static double max_cost(const struct graph *g)
{
	double c = 0;

	for (int v = 0; v < g->n; v++)
		c = g->nodes[v].cost > c ? g->nodes[v].cost : c;
	return c;
}

/* The ancestors of node cut (anc[v] = 1), the nodes depending on it
 * (desc[v] = 1, cut's own mark too) and the values that cut and the nodes
 * depending on it read (late[v] = 1). */
static void marks(const struct graph *g, int cut, char *anc, char *desc, char *late)
{
	anc[cut] = 1;
	for (int v = cut; v >= 0; v--)
		if (anc[v])
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				anc[g->deps[e]] = 1;
	anc[cut] = 0;
	desc[cut] = 1;
	for (int v = cut + 1; v < g->n; v++)
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1] && !desc[v]; e++)
			desc[v] = desc[g->deps[e]];
	for (int v = cut; v < g->n; v++)
		if (desc[v])
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				late[g->deps[e]] = 1;
}

/* The rows of the copy stream at cut (docs/model.md, "The turn bound with
 * copies") over columns s and t, the start of cut's first compute and the
 * plan's time less their least (the ancestors' costs, the checkpoint-all
 * cost), in units of unit. A value on the host at the turn (h) was copied
 * out before it and is copied back after it, one copy at a time:
 * s >= the copies out, t >= s + cost[cut] + the copies back,
 * t >= s + cost[cut] + the descendants' costs + the second computes,
 * t >= the checkpoint-all cost + the second computes; and the values on
 * the host fit the host budget. */
static void copy_rows(const struct graph *g, int cut, const char *anc, const char *desc,
		      const int *x, const int *h, const struct sim_copy *copy, double unit,
		      struct milp *m)
{
	double a = 0, d = 0, all = graph_total_cost(g) / unit, c = g->nodes[cut].cost / unit;
	double per_byte = 1 / (copy->bandwidth * copy->seconds_per_cost * unit);
	int s = milp_add_col(m, "s", 0, MILP_INF, 0, 0), t = milp_add_col(m, "t", 0, MILP_INF, 1, 0);
	struct milp_row again = { 0 }, after = { 0 }, out = { 0 }, back = { 0 }, host = { 0 };

	for (int v = 0; v < g->n; v++) {
		a += anc[v] ? g->nodes[v].cost / unit : 0;
		d += desc[v] && v != cut ? g->nodes[v].cost / unit : 0;
	}
	milp_row_add(&again, t, 1);
	milp_row_add(&after, t, 1);
	milp_row_add(&after, s, -1);
	milp_row_add(&out, s, 1);
	milp_row_add(&back, t, 1);
	milp_row_add(&back, s, -1);
	for (int v = 0; v < cut; v++) {
		double cost = g->nodes[v].cost / unit, moved = per_byte * (double)g->nodes[v].memory;

		if (x[v] < 0)
			continue;
		milp_row_add(&again, x[v], -cost);
		milp_row_add(&after, x[v], -cost);
		milp_row_add(&out, h[v], -moved);
		milp_row_add(&back, h[v], -moved);
		if (copy->host_budget > 0)
			milp_row_add(&host, h[v],
				     (double)g->nodes[v].memory / (double)copy->host_budget);
	}
	milp_row_emit(m, &again, 0, MILP_INF);
	milp_row_emit(m, &after, a + c + d - all, MILP_INF);
	milp_row_emit(m, &out, -a, MILP_INF);
	milp_row_emit(m, &back, a + c - all, MILP_INF);
	milp_row_emit(m, &host, -MILP_INF, 1);
	milp_row_release(&again);
	milp_row_release(&after);
	milp_row_release(&out);
	milp_row_release(&back);
	milp_row_release(&host);
}

/* The model at node cut: for each ancestor v of cut, x_v (computed again
 * after cut's first compute), r_v (resident at it) and, with copies, h_v
 * (on the host at it, fetched after). Rows: x_v + r_v + h_v >= 1 for the
 * values read later; x_v <= x_u + r_u + h_u for each input u of v;
 * sum memory r <= budget - fixed - memory[cut] (scaled); r = 1 for cut's
 * inputs. The objective, in units of unit (the largest cost): the second
 * computes' costs, or with copies the time over the checkpoint-all cost
 * (copy_rows). Returns 0, -1 with err set. */
static int build(const struct graph *g, uint64_t budget, int cut, double unit,
		 const struct sim_copy *copy, struct milp *m, struct cm_error *err)
{
	char *anc = calloc((size_t)g->n + 1, 1), *desc = calloc((size_t)g->n + 1, 1);
	char *late = calloc((size_t)g->n + 1, 1);
	int *x = malloc(((size_t)g->n + 1) * sizeof(int)), *r = malloc(((size_t)g->n + 1) * sizeof(int));
	int *h = malloc(((size_t)g->n + 1) * sizeof(int));
	double room;
	struct milp_row mem = { 0 };
	int rc = -1;

	if (!anc || !desc || !late || !x || !r || !h) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	marks(g, cut, anc, desc, late);
	room = (double)budget - (double)g->fixed_memory - (double)g->nodes[cut].memory;
	for (int v = 0; v < cut; v++) {
		char name[32];

		x[v] = r[v] = h[v] = -1;
		if (!anc[v])
			continue;
		snprintf(name, sizeof(name), "x%d", v);
		x[v] = milp_add_col(m, name, 0, 1, copy ? 0 : g->nodes[v].cost / unit, 1);
		snprintf(name, sizeof(name), "r%d", v);
		r[v] = milp_add_col(m, name, 0, 1, 0, 1);
		if (copy) {
			snprintf(name, sizeof(name), "h%d", v);
			h[v] = milp_add_col(m, name, 0, 1, 0, 1);
		}
	}
	for (int e = g->dep_off[cut]; e < g->dep_off[cut + 1]; e++)
		if (r[g->deps[e]] >= 0)
			m->clo[r[g->deps[e]]] = 1;
	for (int v = 0; v < cut; v++) {
		if (x[v] < 0)
			continue;
		if (late[v])
			milp_add_row(m, 1, MILP_INF, 3, (int[]){ x[v], r[v], h[v] },
				     (double[]){ 1, 1, 1 });
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int u = g->deps[e];

			milp_add_row(m, 0, MILP_INF, 4, (int[]){ x[u], r[u], h[u], x[v] },
				     (double[]){ 1, 1, 1, -1 });
		}
		milp_row_add(&mem, r[v], room > 0 ? (double)g->nodes[v].memory / room : 1);
	}
	milp_row_emit(m, &mem, -MILP_INF, room > 0 ? 1 : 0);
	milp_row_release(&mem);
	if (copy)
		copy_rows(g, cut, anc, desc, x, h, copy, unit, m);
	rc = milp_ok(m, err);
out:
	free(anc);
	free(desc);
	free(late);
	free(x);
	free(r);
	free(h);
	return rc;
}

/* 1 when v is among the first n of cuts. */
static int picked(const int *cuts, int n, int v)
{
	for (int k = 0; k < n; k++)
		if (cuts[k] == v)
			return 1;
	return 0;
}

/* Up to TURN_CUTS nodes to bound at: the loss first, then the backward
 * nodes at which the checkpoint-all schedule holds the most memory (the
 * best cut on the 2- and 4-layer transformers is the first of those).
 * Returns their count, 0 when g has no backward node, -1 when out of
 * memory. */
static int pick_cuts(const struct graph *g, int *cuts)
{
	uint64_t *live = malloc(((size_t)g->n + 1) * sizeof(uint64_t));
	int loss = 0, k = 0;

	if (live == NULL)
		return -1;
	graph_profile_all(g, live);
	while (loss < g->n && !g->nodes[loss].backward)
		loss++;
	if (loss < g->n)
		cuts[k++] = loss;
	for (; k > 0 && k < TURN_CUTS; k++) {
		int best = -1;

		for (int v = loss + 1; v < g->n; v++)
			if (g->nodes[v].backward && !picked(cuts, k, v) &&
			    (best < 0 || live[v] > live[best]))
				best = v;
		if (best < 0)
			break;
		cuts[k] = best;
	}
	free(live);
	return k;
}

/* The LP of the model at cut: 1 with its bound in *bound, 0 when it gives
 * none, -1 with err set. */
static int bound_at(const struct graph *g, uint64_t budget, int cut,
		    const struct sim_copy *copy, const struct solver_ops *ops,
		    const struct solve_opts *o, double *bound, struct cm_error *err)
{
	struct milp m;
	struct milp_result res = { 0 };
	struct solve_opts lp = *o;
	double unit = max_cost(g), lo;
	int rc;

	milp_init(&m);
	if (build(g, budget, cut, unit, copy, &m, err)) {
		milp_release(&m);
		return -1;
	}
	/* Over the memory cap: no bound, as the solver process would fail. */
	if (o->memory_cap > 0 && remat_bytes((uint64_t)m.nnz, 0, 1) > (double)o->memory_cap) {
		milp_release(&m);
		return 0;
	}
	lp.relaxation = 1;
	if (solver_solve(ops, &m, &lp, &res, err)) {
		milp_release(&m);
		milp_result_release(&res);
		return -1;
	}
	lo = res.bound - TURN_TOLERANCE * m.ncols;
	rc = res.has_bound && res.status == MILP_OPTIMAL && lo > 0;
	if (rc)
		*bound = graph_round_bound(g, graph_total_cost(g) + unit * lo);
	milp_release(&m);
	milp_result_release(&res);
	return rc;
}

int turn_bound(const struct graph *g, uint64_t budget, const struct sim_copy *copy,
	       const struct solver_ops *ops, const struct solve_opts *o, double *bound,
	       struct cm_error *err)
{
	int cuts[TURN_CUTS], n = graph_total_cost(g) > 0 ? pick_cuts(g, cuts) : 0, found = 0;
	double t0 = cm_clock();

	if (n < 0)
		return cm_errorf(err, "out of memory");
	for (int k = 0; k < n && !stop_requested(); k++) {
		struct solve_opts lp = *o;
		double b;
		int r;

		if (o->time_limit > 0 && (lp.time_limit = o->time_limit - (cm_clock() - t0)) <= 0)
			break;
		if ((r = bound_at(g, budget, cuts[k], copy, ops, &lp, &b, err)) < 0)
			return -1;
		if (r && (!found || b > *bound)) {
			*bound = b;
			found = 1;
		}
	}
	return found;
}

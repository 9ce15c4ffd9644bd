#include "turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/num.h"
#include "remat.h"

/* Relative tolerance taken off the solver's bound: its optimality and
 * feasibility tolerances are below 1e-6 of the objective's scale. */
#define TURN_TOLERANCE 1e-6

/* The forward ancestors of node loss (anc[v] = 1) and the values the
 * nodes after it that depend on it read (late[v] = 1). */
static void marks(const struct graph *g, int loss, char *anc, char *late)
{
	char *desc = calloc((size_t)g->n + 1, 1);

	anc[loss] = 1;
	for (int v = loss; v >= 0; v--)
		if (anc[v])
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				anc[g->deps[e]] = 1;
	anc[loss] = 0;
	if (desc == NULL)
		return;
	desc[loss] = 1;
	for (int v = loss + 1; v < g->n; v++)
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1] && !desc[v]; e++)
			desc[v] = desc[g->deps[e]];
	for (int v = loss; v < g->n; v++)
		if (desc[v])
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				late[g->deps[e]] = 1;
	free(desc);
}

/* The model: for each ancestor v of the loss, x_v (computed again after
 * the loss, objective cost/total) and r_v (resident at the loss). Rows:
 * x_v + r_v >= 1 for the values read later; x_v <= x_u + r_u for each
 * input u of v; sum memory r <= budget - fixed - memory[loss] (scaled);
 * r = 1 for the loss's inputs. Returns 0, -1 with err set. */
static int build(const struct graph *g, uint64_t budget, int loss, struct milp *m,
		 struct cm_error *err)
{
	char *anc = calloc((size_t)g->n + 1, 1), *late = calloc((size_t)g->n + 1, 1);
	int *x = malloc(((size_t)g->n + 1) * sizeof(int)), *r = malloc(((size_t)g->n + 1) * sizeof(int));
	double total = graph_total_cost(g), room;
	struct milp_row mem = { 0 };
	int rc = -1;

	if (!anc || !late || !x || !r) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	marks(g, loss, anc, late);
	room = (double)budget - (double)g->fixed_memory - (double)g->nodes[loss].memory;
	for (int v = 0; v < loss; v++) {
		x[v] = r[v] = -1;
		if (!anc[v])
			continue;
		char name[32];

		snprintf(name, sizeof(name), "x%d", v);
		x[v] = milp_add_col(m, name, 0, 1, total > 0 ? g->nodes[v].cost / total : 0, 1);
		snprintf(name, sizeof(name), "r%d", v);
		r[v] = milp_add_col(m, name, 0, 1, 0, 1);
	}
	for (int e = g->dep_off[loss]; e < g->dep_off[loss + 1]; e++)
		if (r[g->deps[e]] >= 0)
			m->clo[r[g->deps[e]]] = 1;
	for (int v = 0; v < loss; v++) {
		if (x[v] < 0)
			continue;
		if (late[v])
			milp_add_row(m, 1, MILP_INF, 2, (int[]){ x[v], r[v] }, (double[]){ 1, 1 });
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int u = g->deps[e];

			milp_add_row(m, 0, MILP_INF, 3, (int[]){ x[u], r[u], x[v] },
				     (double[]){ 1, 1, -1 });
		}
		milp_row_add(&mem, r[v], room > 0 ? (double)g->nodes[v].memory / room : 1);
	}
	milp_row_emit(m, &mem, -MILP_INF, room > 0 ? 1 : 0);
	milp_row_release(&mem);
	rc = milp_ok(m, err);
out:
	free(anc);
	free(late);
	free(x);
	free(r);
	return rc;
}

int turn_bound(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
	       const struct solve_opts *o, double *bound, struct cm_error *err)
{
	struct milp m;
	struct milp_result res = { 0 };
	struct solve_opts lp = *o;
	double total = graph_total_cost(g);
	int loss = 0, rc;

	while (loss < g->n && !g->nodes[loss].backward)
		loss++;
	if (loss >= g->n || total <= 0)
		return 0;
	milp_init(&m);
	if (build(g, budget, loss, &m, err)) {
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
	rc = res.has_bound && res.status != MILP_INFEASIBLE && res.bound > TURN_TOLERANCE;
	if (rc)
		*bound = graph_round_bound(g, total * (1 + res.bound - TURN_TOLERANCE));
	milp_release(&m);
	milp_result_release(&res);
	return rc;
}

#include "partition.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/num.h"

const char *const partition_status_names[3] = { "optimal", "feasible", "infeasible" };

/* The forward nodes the backward reads, directly or through other
 * forward nodes (need[v] = 1), and those a backward node reads itself
 * (late[v] = 1). */
static void reach(const struct graph *g, char *need, char *late)
{
	for (int v = 0; v < g->n; v++)
		if (g->nodes[v].backward)
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				if (!g->nodes[g->deps[e]].backward)
					need[g->deps[e]] = late[g->deps[e]] = 1;
	for (int v = g->n - 1; v >= 0; v--)
		if (need[v] && !g->nodes[v].backward)
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				need[g->deps[e]] = 1;
}

void partition_derive(const struct graph *g, struct partition *p)
{
	memset(p->again, 0, (size_t)g->n);
	/* Nodes come in topological order: a forward node is computed again
	 * when a backward node, or a node computed again, reads it unsaved. */
	for (int v = g->n - 1; v >= 0; v--) {
		if (!g->nodes[v].backward && !p->again[v])
			continue;
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int u = g->deps[e];

			if (!g->nodes[u].backward && !p->saved[u])
				p->again[u] = 1;
		}
	}
	p->cost = graph_total_cost(g);
	p->memory = g->fixed_memory;
	p->n_saved = p->n_again = 0;
	for (int v = 0; v < g->n; v++) {
		int read = 0;

		for (int e = g->user_off[v]; e < g->user_off[v + 1] && !read; e++)
			read = g->nodes[g->users[e]].backward || p->again[g->users[e]];
		p->saved[v] = p->saved[v] && !g->nodes[v].backward && read;
		if (p->saved[v]) {
			p->memory += g->nodes[v].memory;
			p->n_saved++;
		}
		if (p->again[v]) {
			p->cost += g->nodes[v].cost;
			p->n_again++;
		}
	}
}

void partition_release(struct partition *p)
{
	free(p->saved);
	free(p->again);
	p->saved = p->again = NULL;
}

/* The model: for each forward node v the backward needs, x_v (computed
 * again; objective cost / unit, unit the largest cost) and r_v (saved). Rows: x_v + r_v >= 1 for
 * the values a backward node reads; x_u + r_u >= x_v for each input u of
 * v; the saved memory, over room, at most 1. col[v] is x_v's column and
 * r_v's the next; -1 for the nodes without. */
static int build(const struct graph *g, const char *need, const char *late, double room,
		 double unit, int *col, struct milp *m, struct cm_error *err)
{
	struct milp_row mem = { 0 };

	/* The checkpoint-all cost as a column fixed at 1 (column 0): the
	 * solver's relative gap is then one on the step's whole cost. */
	milp_add_col(m, "floor", 1, 1, graph_total_cost(g) / unit, 0);
	for (int v = 0; v < g->n; v++) {
		char name[32];

		col[v] = -1;
		if (!need[v])
			continue;
		snprintf(name, sizeof(name), "x%d", v);
		col[v] = milp_add_col(m, name, 0, 1, g->nodes[v].cost / unit, 1);
		snprintf(name, sizeof(name), "r%d", v);
		milp_add_col(m, name, 0, 1, 0, 1);
	}
	if (m->failed)
		return milp_ok(m, err);
	for (int v = 0; v < g->n; v++) {
		if (col[v] < 0)
			continue;
		if (late[v])
			milp_add_row(m, 1, MILP_INF, 2, (int[]){ col[v], col[v] + 1 },
				     (double[]){ 1, 1 });
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int u = g->deps[e];

			milp_add_row(m, 0, MILP_INF, 3, (int[]){ col[u], col[u] + 1, col[v] },
				     (double[]){ 1, 1, -1 });
		}
		if (g->nodes[v].memory > 0)
			milp_row_add(&mem, col[v] + 1, (double)g->nodes[v].memory / room);
	}
	milp_row_emit(m, &mem, -MILP_INF, 1);
	milp_row_release(&mem);
	return milp_ok(m, err);
}

int partition_solve(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		    const struct solve_opts *o, struct partition *p, struct cm_error *err)
{
	char *need = calloc((size_t)g->n + 1, 1), *late = calloc((size_t)g->n + 1, 1);
	int *col = malloc(((size_t)g->n + 1) * sizeof(int));
	double *start = NULL;
	struct milp m;
	struct milp_result res = { 0 };
	struct solve_opts so = *o;
	double unit = 0;
	int rc = -1;

	milp_init(&m);
	*p = (struct partition){ .saved = calloc((size_t)g->n + 1, 1),
				 .again = calloc((size_t)g->n + 1, 1) };
	if (!need || !late || !col || !p->saved || !p->again) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (budget < g->fixed_memory) {
		p->status = PARTITION_INFEASIBLE;
		rc = 0;
		goto out;
	}
	reach(g, need, late);
	for (int v = 0; v < g->n; v++)
		unit = g->nodes[v].cost > unit ? g->nodes[v].cost : unit;
	unit = unit > 0 ? unit : 1;
	/* Zero room: nothing with memory can be saved (the row's scale is moot). */
	if (build(g, need, late, budget > g->fixed_memory ? (double)(budget - g->fixed_memory) : 1,
		  unit, col, &m, err))
		goto out;
	if (budget == g->fixed_memory)
		for (int v = 0; v < g->n; v++)
			if (col[v] >= 0 && g->nodes[v].memory > 0)
				m.chi[col[v] + 1] = 0;
	/* A start that always fits: nothing saved, everything computed again. */
	if ((start = calloc((size_t)m.ncols + 1, sizeof(double))) == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	start[0] = 1;
	for (int v = 0; v < g->n; v++)
		if (col[v] >= 0)
			start[col[v]] = 1;
	so.start = start;
	so.relaxation = 0;
	if (m.ncols > 1 && solver_solve(ops, &m, &so, &res, err))
		goto out;
	if (res.x != NULL)
		for (int v = 0; v < g->n; v++)
			p->saved[v] = col[v] >= 0 && res.x[col[v] + 1] > 0.5;
	partition_derive(g, p);
	/* Optimal when proven at gap 0 (or with nothing to choose); else
	 * feasible, with the solver's bound less a tolerance per column. */
	p->status = m.ncols == 1 || (res.status == MILP_OPTIMAL && o->gap <= 0) ?
		    PARTITION_OPTIMAL : PARTITION_FEASIBLE;
	if (p->status == PARTITION_OPTIMAL) {
		p->bound = p->cost;
		p->has_bound = 1;
	} else if (res.has_bound) {
		double lo = unit * (res.bound - 1e-9 * m.ncols), floor_cost = graph_total_cost(g);

		p->bound = lo > floor_cost ? lo : floor_cost;
		p->has_bound = p->bound <= p->cost;
		/* A bound that meets the cost proves it, whatever the gap. */
		if (p->has_bound && num_eq(p->bound, p->cost))
			p->status = PARTITION_OPTIMAL;
	}
	rc = 0;
out:
	if (rc)
		partition_release(p);
	milp_result_release(&res);
	milp_release(&m);
	free(start);
	free(need);
	free(late);
	free(col);
	return rc;
}

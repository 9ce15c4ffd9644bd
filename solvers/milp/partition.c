#include "partition.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/num.h"

const char *const partition_status_names[3] = { "optimal", "feasible", "infeasible" };

/* Whether a backward node reads v. */
static int read_by_backward(const struct graph *g, int v)
{
	for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++)
		if (g->nodes[g->users[e]].backward)
			return 1;
	return 0;
}

/* The backward's timeline, at the positions 0 .. nb - 1 of the backward
 * nodes in file order. own[i]: the memory of the backward's own values
 * live at its i-th node, each from its compute to its last user, and a
 * value no node reads (a gradient, which the backward returns) to the
 * end. last[v], for a forward v: the last position at which a backward
 * node reads v or a forward value computed from v, so that a saved v is
 * held until then (-1 when none). Returns nb, or -1 when out of memory;
 * free *own and *last. */
static int timeline(const struct graph *g, uint64_t **own, int **last)
{
	int nb = 0, *pos = malloc(((size_t)g->n + 1) * sizeof(int));
	int64_t *diff = NULL;

	*own = NULL;
	*last = malloc(((size_t)g->n + 1) * sizeof(int));
	if (pos && *last)
		for (int v = 0; v < g->n; v++)
			pos[v] = g->nodes[v].backward ? nb++ : -1;
	diff = pos && *last ? calloc((size_t)nb + 2, sizeof(int64_t)) : NULL;
	*own = diff ? malloc(((size_t)nb + 1) * sizeof(uint64_t)) : NULL;
	if (*own == NULL) {
		free(pos);
		free(diff);
		free(*last);
		*last = NULL;
		return -1;
	}
	for (int v = g->n - 1; v >= 0; v--) {
		int end = g->nodes[v].backward && graph_nusers(g, v) == 0 ? nb - 1 : -1;

		for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++) {
			int u = g->users[e], at = g->nodes[u].backward ? pos[u] : -1;

			/* A forward user passes on the last read of what it computes. */
			if (!g->nodes[v].backward && !g->nodes[u].backward)
				at = (*last)[u];
			end = at > end ? at : end;
		}
		if (g->nodes[v].backward) {
			diff[pos[v]] += (int64_t)g->nodes[v].memory;
			diff[(end > pos[v] ? end : pos[v]) + 1] -= (int64_t)g->nodes[v].memory;
		}
		(*last)[v] = g->nodes[v].backward ? -1 : end;
	}
	int64_t run = 0;

	for (int i = 0; i < nb; i++)
		(*own)[i] = (uint64_t)(run += diff[i]);
	free(pos);
	free(diff);
	return nb;
}

int partition_derive(const struct graph *g, struct partition *p)
{
	uint64_t *own, saved = 0, *held;
	int *last, nb = timeline(g, &own, &last);

	if (nb < 0)
		return -1;
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
	p->n_saved = p->n_again = 0;
	/* held[i]: the saved values still held at backward position i. */
	held = calloc((size_t)nb + 2, sizeof(uint64_t));
	if (held == NULL) {
		free(own);
		free(last);
		return -1;
	}
	for (int v = 0; v < g->n; v++) {
		int read = 0;

		for (int e = g->user_off[v]; e < g->user_off[v + 1] && !read; e++)
			read = g->nodes[g->users[e]].backward || p->again[g->users[e]];
		p->saved[v] = p->saved[v] && !g->nodes[v].backward && read;
		if (p->saved[v]) {
			saved += g->nodes[v].memory;
			held[last[v] + 1] += g->nodes[v].memory;
			p->n_saved++;
		}
		if (p->again[v]) {
			p->cost += g->nodes[v].cost;
			p->n_again++;
		}
	}
	/* The peak: where the forward ends (all saved), or in the backward. */
	p->memory = saved;
	for (int i = 0; i < nb; i++) {
		saved -= held[i];
		p->memory = saved + own[i] > p->memory ? saved + own[i] : p->memory;
	}
	p->memory += g->fixed_memory;
	free(held);
	free(own);
	free(last);
	return 0;
}

void partition_release(struct partition *p)
{
	free(p->saved);
	free(p->again);
	p->saved = p->again = NULL;
}

/* What the model is built from: the timeline (own, last, nb; the nodes the
 * backward needs are those with last >= 0), the room for saved values
 * (budget - fixed memory) and the objective's unit. */
struct model_in {
	const uint64_t *own;
	const int *last;
	int nb;
	double room, unit;
};

/* The model: for each forward node v the backward needs, x_v (computed
 * again; objective cost / unit, unit the largest cost) and r_v (saved).
 * Rows: x_v + r_v >= 1 for the values a backward node reads; x_u + r_u >=
 * x_v for each input u of v; and the memory at backward position i, the
 * saved values held there plus the backward's own, within room: a row at
 * each i whose own memory exceeds that at every earlier one (the values
 * held only shrink, so the others follow). col[v] is x_v's column and
 * r_v's the next; -1 for the nodes without. */
static int build(const struct graph *g, const struct model_in *in, int *col, struct milp *m,
		 struct cm_error *err)
{
	struct milp_row mem = { 0 };
	uint64_t top = 0;

	/* The checkpoint-all cost as a column fixed at 1 (column 0): the
	 * solver's relative gap is then one on the step's whole cost. */
	milp_add_col(m, "floor", 1, 1, graph_total_cost(g) / in->unit, 0);
	for (int v = 0; v < g->n; v++) {
		char name[32];

		col[v] = -1;
		if (g->nodes[v].backward || in->last[v] < 0)
			continue;
		snprintf(name, sizeof(name), "x%d", v);
		col[v] = milp_add_col(m, name, 0, 1, g->nodes[v].cost / in->unit, 1);
		snprintf(name, sizeof(name), "r%d", v);
		milp_add_col(m, name, 0, 1, 0, 1);
	}
	if (m->failed)
		return milp_ok(m, err);
	for (int v = 0; v < g->n; v++) {
		if (col[v] < 0)
			continue;
		if (read_by_backward(g, v))
			milp_add_row(m, 1, MILP_INF, 2, (int[]){ col[v], col[v] + 1 },
				     (double[]){ 1, 1 });
		for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++) {
			int u = g->deps[e];

			milp_add_row(m, 0, MILP_INF, 3, (int[]){ col[u], col[u] + 1, col[v] },
				     (double[]){ 1, 1, -1 });
		}
	}
	for (int i = 0; i < (in->nb > 0 ? in->nb : 1); i++) {
		uint64_t own = in->nb > 0 ? in->own[i] : 0;

		if (i > 0 && own <= top)
			continue;
		top = own;
		for (int v = 0; v < g->n; v++)
			if (col[v] >= 0 && g->nodes[v].memory > 0 && in->last[v] >= i)
				milp_row_add(&mem, col[v] + 1, (double)g->nodes[v].memory / in->room);
		milp_row_emit(m, &mem, -MILP_INF, (in->room - (double)own) / in->room);
	}
	milp_row_release(&mem);
	return milp_ok(m, err);
}

/* p's figures from its saved set, and its status and bound from the
 * solver's result res of model m (unit: the objective's). */
static int settle(const struct graph *g, const struct milp *m, const struct milp_result *res,
		  const struct solve_opts *o, double unit, struct partition *p)
{
	if (partition_derive(g, p))
		return -1;
	/* Optimal when proven at gap 0 (or with nothing to choose); else
	 * feasible, with the solver's bound less a tolerance per column. */
	p->status = m->ncols == 1 || (res->status == MILP_OPTIMAL && o->gap <= 0) ?
		    PARTITION_OPTIMAL : PARTITION_FEASIBLE;
	if (p->status == PARTITION_OPTIMAL) {
		p->bound = p->cost;
		p->has_bound = 1;
	} else if (res->has_bound) {
		double lo = unit * (res->bound - 1e-9 * m->ncols), floor_cost = graph_total_cost(g);

		p->bound = lo > floor_cost ? lo : floor_cost;
		p->has_bound = p->bound <= p->cost;
		/* A bound that meets the cost proves it, whatever the gap. */
		if (p->has_bound && num_eq(p->bound, p->cost)) {
			p->status = PARTITION_OPTIMAL;
			p->bound = p->cost;
		}
	}
	return 0;
}

int partition_solve(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		    const struct solve_opts *o, struct partition *p, struct cm_error *err)
{
	int *col = malloc(((size_t)g->n + 1) * sizeof(int)), *last = NULL;
	uint64_t *own = NULL;
	double *start = NULL;
	struct milp m;
	struct milp_result res = { 0 };
	struct solve_opts so = *o;
	struct model_in in = { NULL, NULL, 0, 0, 0 };
	int rc = -1;

	milp_init(&m);
	*p = (struct partition){ .saved = calloc((size_t)g->n + 1, 1),
				 .again = calloc((size_t)g->n + 1, 1) };
	if (!col || !p->saved || !p->again ||
	    (in.nb = timeline(g, &own, &last)) < 0) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	in.own = own;
	in.last = last;
	/* The least memory of any partition: fixed, and the backward's own
	 * values where they peak. */
	p->least = g->fixed_memory;
	for (int i = 0; i < in.nb; i++)
		p->least = g->fixed_memory + own[i] > p->least ? g->fixed_memory + own[i] : p->least;
	if (budget < p->least) {
		p->status = PARTITION_INFEASIBLE;
		rc = 0;
		goto out;
	}
	for (int v = 0; v < g->n; v++)
		in.unit = g->nodes[v].cost > in.unit ? g->nodes[v].cost : in.unit;
	in.unit = in.unit > 0 ? in.unit : 1;
	/* Zero room: nothing with memory can be saved (the rows' scale is moot). */
	in.room = budget > g->fixed_memory ? (double)(budget - g->fixed_memory) : 1;
	if (build(g, &in, col, &m, err))
		goto out;
	if (budget == g->fixed_memory)
		for (int v = 0; v < g->n; v++)
			if (col[v] >= 0 && g->nodes[v].memory > 0)
				m.chi[col[v] + 1] = 0;
	/* A start that fits any budget from the least: nothing saved,
	 * everything computed again. */
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
	if (settle(g, &m, &res, o, in.unit, p)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	rc = 0;
out:
	if (rc)
		partition_release(p);
	milp_result_release(&res);
	milp_release(&m);
	free(start);
	free(col);
	free(own);
	free(last);
	return rc;
}

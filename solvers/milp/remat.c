#include "remat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/num.h"

void remat_release(struct remat_model *rm)
{
	milp_release(&rm->milp);
	free(rm->r);
	free(rm->s);
	free(rm->u);
	free(rm->f);
	free(rm->cf);
	free(rm->co);
	free(rm->ch);
	free(rm->ce);
	free(rm->cc);
	memset(rm, 0, sizeof(*rm));
}

#define AT(a, t, i) ((a)[(size_t)(t) * (size_t)rm->n + (size_t)(i)])
#define FREE_AT(t, e) (rm->f[(size_t)(t) * (size_t)rm->n_edges + (size_t)(e)])

/* Columns: R, S, U, FREE, each skipped where it is fixed at 0. */
static void add_columns(struct remat_model *rm, const struct graph *g,
			const struct remat_opts *o, double ubudget)
{
	struct milp *m = &rm->milp;
	int n = g->n;
	char name[64];

	for (int t = 0; t < n; t++)
		for (int i = 0; i <= t; i++) {
			int nu = graph_nusers(g, i);
			int last = nu ? g->users[g->user_off[i + 1] - 1] : i;

			/* A value nothing reads is computed once, in its own
			 * stage, and never kept. */
			if (i == t || nu > 0) {
				snprintf(name, sizeof(name), "R_%d_%d", t, i);
				AT(rm->r, t, i) = milp_add_col(m, name, i == t, 1,
							       o->copy ? 0 : g->nodes[i].cost, 1);
			}
			if (i < t && nu > 0 && !(o->prune_past_users && last < t)) {
				snprintf(name, sizeof(name), "S_%d_%d", t, i);
				AT(rm->s, t, i) = milp_add_col(m, name, 0, 1, 0, 1);
			}
			snprintf(name, sizeof(name), "U_%d_%d", t, i);
			AT(rm->u, t, i) = milp_add_col(m, name, 0, ubudget, 0, 0);
		}
	/* FREE(t,i,t) would release memory after the stage's last node,
	 * where no U is counted: it is left out. */
	for (int t = 0; t < n; t++)
		for (int k = 0; k < t; k++)
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
				if (AT(rm->r, t, k) < 0)
					continue;
				snprintf(name, sizeof(name), "F_%d_%d_%d", t, g->deps[e], k);
				FREE_AT(t, e) = milp_add_col(m, name, 0, 1, 0, 1);
			}
}

/* (1b), (1c) and the two reductions implied by optimality: a value is
 * computed only if a later node of the stage reads it or it is kept, and
 * kept into a stage only if that stage reads it or it is kept further. */
static void add_dependency_rows(struct remat_model *rm, const struct graph *g,
				const struct remat_opts *o, struct milp_row *row)
{
	struct milp *m = &rm->milp;
	int n = g->n;

	for (int t = 0; t < n; t++) {
		for (int k = 0; k <= t; k++)
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
				int i = g->deps[e];

				if (AT(rm->r, t, k) < 0)
					continue;
				milp_row_add(row, AT(rm->r, t, k), 1);
				milp_row_add(row, AT(rm->r, t, i), -1);
				milp_row_add(row, AT(rm->s, t, i), -1);
				milp_row_emit(m, row, -MILP_INF, 0);
			}
		for (int i = 0; i < t; i++) {
			int keep_next = t + 1 < n ? AT(rm->s, t + 1, i) : -1;

			if (AT(rm->s, t, i) >= 0) {
				milp_row_add(row, AT(rm->s, t, i), 1);
				milp_row_add(row, AT(rm->r, t - 1, i), -1);
				milp_row_add(row, AT(rm->s, t - 1, i), -1);
				if (rm->cf)
					milp_row_add(row, AT(rm->cf, t - 1, i), -1);
				milp_row_emit(m, row, -MILP_INF, 0);
			}
			for (int pass = 0; pass < 2 && !o->no_usefulness_rows; pass++) {
				int col = pass ? AT(rm->s, t, i) : AT(rm->r, t, i);

				if (col < 0)
					continue;
				milp_row_add(row, col, 1);
				for (int e = g->user_off[i]; e < g->user_off[i + 1]; e++) {
					int j = g->users[e];

					/* Computing i serves a later node of the stage; a
					 * kept i serves any node of the stage. */
					if (j <= t && (pass || j > i))
						milp_row_add(row, AT(rm->r, t, j), -1);
				}
				milp_row_add(row, keep_next, -1);
				/* kept into t to be offloaded in t - 1 (freed at
				 * t's start, once the copy ends) */
				if (pass && rm->co)
					milp_row_add(row, AT(rm->co, t - 1, i), -1);
				milp_row_emit(m, row, -MILP_INF, 0);
			}
		}
	}
}

/* Memory: U(t,0) = sizes kept into t + node 0 if computed (2); U(t,k) =
 * U(t,k-1) - what FREE releases after node k-1 + node k if computed (3);
 * U <= budget through its bounds. FREE(t,i,k) may be 1 only when k is
 * computed in t, i is not kept into t+1, and no later node of the stage
 * reads i (7c); the other direction (7b) is implied by optimality. */
static void add_memory_rows(struct remat_model *rm, const struct graph *g,
			    const struct remat_opts *o, struct milp_row *row)
{
	struct milp *m = &rm->milp;
	int n = g->n;

	for (int t = 0; t < n; t++)
		for (int k = 0; k <= t; k++) {
			double mk = (double)(g->nodes[k].memory / rm->unit);

			milp_row_add(row, AT(rm->u, t, k), 1);
			milp_row_add(row, AT(rm->r, t, k), -mk);
			if (k == 0) {
				for (int i = 0; i < t; i++) {
					double mi = (double)(g->nodes[i].memory / rm->unit);

					milp_row_add(row, AT(rm->s, t, i), -mi);
					if (rm->cf)
						milp_row_add(row, AT(rm->cf, t, i), -mi);
				}
			} else {
				milp_row_add(row, AT(rm->u, t, k - 1), -1);
				for (int e = g->dep_off[k - 1]; e < g->dep_off[k]; e++)
					milp_row_add(row, FREE_AT(t, e),
						(double)(g->nodes[g->deps[e]].memory / rm->unit));
			}
			milp_row_emit(m, row, 0, 0);
		}
	for (int t = 0; t < n; t++)
		for (int k = 0; k <= t; k++)
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
				int i = g->deps[e], fc = FREE_AT(t, e), hazards = 1;
				int keep = t + 1 < n ? AT(rm->s, t + 1, i) : -1;

				if (fc < 0)
					continue;
				if (o->aggregate_free) {
					/* kappa FREE + (1 - R(t,k)) + S(t+1,i) + sum R(t,j) <= kappa */
					milp_row_add(row, AT(rm->r, t, k), -1);
					hazards += keep >= 0;
					milp_row_add(row, keep, 1);
					for (int u = g->user_off[i]; u < g->user_off[i + 1]; u++) {
						int j = g->users[u];

						if (j > k && j <= t && AT(rm->r, t, j) >= 0) {
							milp_row_add(row, AT(rm->r, t, j), 1);
							hazards++;
						}
					}
					milp_row_add(row, fc, hazards);
					milp_row_emit(m, row, -MILP_INF, hazards - 1);
					continue;
				}
				milp_row_add(row, fc, 1);
				milp_row_add(row, AT(rm->r, t, k), -1);
				milp_row_emit(m, row, -MILP_INF, 0);
				if (keep >= 0) {
					milp_row_add(row, fc, 1);
					milp_row_add(row, keep, 1);
					milp_row_emit(m, row, -MILP_INF, 1);
				}
				for (int u = g->user_off[i]; u < g->user_off[i + 1]; u++) {
					int j = g->users[u];

					if (j > k && j <= t && AT(rm->r, t, j) >= 0) {
						milp_row_add(row, fc, 1);
						milp_row_add(row, AT(rm->r, t, j), 1);
						milp_row_emit(m, row, -MILP_INF, 1);
					}
				}
			}
}

/* With copies: F(t,i) and O(t,i) where S(t+1,i) exists (a fetched value
 * is kept into t + 1, where it is first read; an offloaded one is kept
 * into t + 1 and freed at its start, when the copy has ended), O also
 * needing S(t,i) (resident at t's start); H(t,i) from t = i + 2 (the
 * first offload is in stage i + 1) where S(t,i) exists; E(t) and C(t)
 * for every stage. 0, or -1 when out of memory. */
static int add_copy_columns(struct remat_model *rm, const struct graph *g)
{
	size_t cells = (size_t)g->n * (size_t)g->n;
	struct milp *m = &rm->milp;
	int n = g->n;
	char name[64];

	rm->cf = malloc(cells * sizeof(int));
	rm->co = malloc(cells * sizeof(int));
	rm->ch = malloc(cells * sizeof(int));
	rm->ce = malloc(((size_t)n + 1) * sizeof(int));
	rm->cc = malloc(((size_t)n + 1) * sizeof(int));
	if (!rm->cf || !rm->co || !rm->ch || !rm->ce || !rm->cc)
		return -1;
	memset(rm->cf, 0xff, cells * sizeof(int));
	memset(rm->co, 0xff, cells * sizeof(int));
	memset(rm->ch, 0xff, cells * sizeof(int));
	for (int t = 0; t < n; t++) {
		for (int i = 0; i < t; i++) {
			int next = t + 1 < n && AT(rm->s, t + 1, i) >= 0;

			if (t >= i + 2 && AT(rm->s, t, i) >= 0) {
				snprintf(name, sizeof(name), "H_%d_%d", t, i);
				AT(rm->ch, t, i) = milp_add_col(m, name, 0, 1, 0, 1);
			}
			if (next && AT(rm->ch, t, i) >= 0) {
				snprintf(name, sizeof(name), "Fe_%d_%d", t, i);
				AT(rm->cf, t, i) = milp_add_col(m, name, 0, 1, 0, 1);
			}
			if (next && AT(rm->s, t, i) >= 0) {
				snprintf(name, sizeof(name), "O_%d_%d", t, i);
				AT(rm->co, t, i) = milp_add_col(m, name, 0, 1, 0, 1);
			}
		}
		snprintf(name, sizeof(name), "E_%d", t);
		rm->ce[t] = milp_add_col(m, name, 0, MILP_INF, t == n - 1, 0);
		snprintf(name, sizeof(name), "C_%d", t);
		rm->cc[t] = milp_add_col(m, name, 0, MILP_INF, 0, 0);
	}
	return 0;
}

/* With copies, the rows of the host copies and the clocks (docs/model.md,
 * "The stage model with copies"): H(t+1,i) = H(t,i) + O(t,i) (one offload,
 * the host copy kept to the end); O(t,i) <= S(t,i), O(t,i) <= S(t+1,i),
 * O(t,i) + H(t,i) <= 1; F(t,i) <= H(t,i), F(t,i) <= S(t+1,i), F(t,i) +
 * S(t,i) <= 1, F(t,i) + R(t,i) <= 1; the host copies within the host
 * budget; and, stage t's copies issued at its start and its computes
 * waiting only for copies of earlier stages, E(t) >= E(t-1) + computes,
 * E(t) >= C(t-1) + computes, C(t) >= C(t-1) + copies, C(t) >= E(t-1) +
 * copies, in units of time_unit. */
static void add_copy_rows(struct remat_model *rm, const struct graph *g,
			  const struct sim_copy *copy, struct milp_row *row)
{
	struct milp *m = &rm->milp;
	int n = g->n;
	double per_copy = 1 / (copy->bandwidth * copy->seconds_per_cost * rm->time_unit);

	for (int t = 0; t < n; t++) {
		for (int i = 0; i < t; i++) {
			int f = AT(rm->cf, t, i), o = AT(rm->co, t, i), h = AT(rm->ch, t, i);
			int next = t + 1 < n ? AT(rm->s, t + 1, i) : -1;

			if (t + 1 < n && AT(rm->ch, t + 1, i) >= 0) {
				milp_row_add(row, AT(rm->ch, t + 1, i), 1);
				milp_row_add(row, h, -1);
				milp_row_add(row, o, -1);
				milp_row_emit(m, row, 0, 0);
			}
			if (o >= 0) {
				milp_add_row(m, -MILP_INF, 0, 2, (int[]){ o, AT(rm->s, t, i) },
					     (double[]){ 1, -1 });
				milp_add_row(m, -MILP_INF, 0, 2, (int[]){ o, next },
					     (double[]){ 1, -1 });
				if (h >= 0)
					milp_add_row(m, -MILP_INF, 1, 2, (int[]){ o, h },
						     (double[]){ 1, 1 });
			}
			if (f >= 0) {
				milp_add_row(m, -MILP_INF, 0, 2, (int[]){ f, h }, (double[]){ 1, -1 });
				milp_add_row(m, -MILP_INF, 0, 2, (int[]){ f, next },
					     (double[]){ 1, -1 });
				milp_add_row(m, -MILP_INF, 1, 2, (int[]){ f, AT(rm->s, t, i) },
					     (double[]){ 1, 1 });
				milp_add_row(m, -MILP_INF, 1, 2, (int[]){ f, AT(rm->r, t, i) },
					     (double[]){ 1, 1 });
			}
		}
		if (copy->host_budget > 0) {
			for (int i = 0; i < t; i++)
				milp_row_add(row, AT(rm->ch, t, i), (double)g->nodes[i].memory /
								     (double)copy->host_budget);
			milp_row_emit(m, row, -MILP_INF, 1);
		}
		/* the clocks: pass 0 from E(t-1), pass 1 from C(t-1) */
		for (int pass = 0; pass < 4; pass++) {
			int copies = pass >= 2, from = pass % 2 ? (t ? rm->cc[t - 1] : -1) :
							      (t ? rm->ce[t - 1] : -1);

			milp_row_add(row, copies ? rm->cc[t] : rm->ce[t], 1);
			milp_row_add(row, from, -1);
			for (int i = 0; i <= t; i++) {
				double c = g->nodes[i].cost / rm->time_unit;
				double q = per_copy * (double)g->nodes[i].memory;

				if (!copies)
					milp_row_add(row, AT(rm->r, t, i), -c);
				else if (i < t) {
					milp_row_add(row, AT(rm->cf, t, i), -q);
					milp_row_add(row, AT(rm->co, t, i), -q);
				}
			}
			milp_row_emit(m, row, 0, MILP_INF);
		}
	}
}

uint64_t remat_unit(const struct graph *g)
{
	uint64_t unit = 0;

	/* Memory in units of the gcd of the sizes keeps every coefficient an
	 * exact integer; the budget rounds down to a whole unit, which changes
	 * nothing since every sum of sizes is a multiple of the unit. */
	for (int k = 0; k < g->n; k++)
		unit = num_gcd(unit, g->nodes[k].memory);
	return unit ? unit : 1;
}

double remat_u_bound(const struct remat_model *rm, const struct graph *g, uint64_t budget)
{
	return (double)((budget - g->fixed_memory) / rm->unit);
}

int remat_build(const struct graph *g, uint64_t budget, const struct remat_opts *o,
		struct remat_model *rm, struct cm_error *err)
{
	size_t cells = (size_t)g->n * (size_t)g->n;
	struct milp_row row = { 0 };
	int rc;

	memset(rm, 0, sizeof(*rm));
	if (g->n > STAGES_MAX_NODES)
		return cm_errorf(err, "%d nodes is too many for the MILP (limit %d)", g->n,
				 STAGES_MAX_NODES);
	if (budget < g->fixed_memory)
		return cm_errorf(err, "budget below fixed memory");
	milp_init(&rm->milp);
	rm->n = g->n;
	rm->n_edges = g->n_edges;
	rm->r = malloc(cells * sizeof(int));
	rm->s = malloc(cells * sizeof(int));
	rm->u = malloc(cells * sizeof(int));
	rm->f = malloc(((size_t)g->n * (size_t)g->n_edges + 1) * sizeof(int));
	if (!rm->r || !rm->s || !rm->u || !rm->f) {
		remat_release(rm);
		return cm_errorf(err, "out of memory building the model");
	}
	memset(rm->r, 0xff, cells * sizeof(int));
	memset(rm->s, 0xff, cells * sizeof(int));
	memset(rm->u, 0xff, cells * sizeof(int));
	memset(rm->f, 0xff, ((size_t)g->n * (size_t)g->n_edges + 1) * sizeof(int));
	rm->unit = remat_unit(g);
	/* The clocks in thousandths of the checkpoint-all cost (FLOP costs
	 * of 1e12 and more would otherwise meet the solvers' tolerances). */
	rm->time_unit = graph_total_cost(g) > 0 ? graph_total_cost(g) / 1000 : 1;
	add_columns(rm, g, o, remat_u_bound(rm, g, budget));
	if (o->copy && add_copy_columns(rm, g)) {
		remat_release(rm);
		return cm_errorf(err, "out of memory building the model");
	}
	add_dependency_rows(rm, g, o, &row);
	add_memory_rows(rm, g, o, &row);
	if (o->copy)
		add_copy_rows(rm, g, o->copy, &row);
	if (o->cost_cap > 0) {
		for (int j = 0; j < rm->milp.ncols; j++)
			if (rm->milp.obj[j] != 0)
				milp_row_add(&row, j, rm->milp.obj[j]);
		milp_row_emit(&rm->milp, &row, -MILP_INF,
			      o->cost_cap / (o->copy ? rm->time_unit : 1));
	}
	milp_row_release(&row);
	rc = milp_ok(&rm->milp, err);
	if (rc)
		remat_release(rm);
	return rc;
}

int remat_point(const struct remat_model *rm, const struct graph *g,
		const struct stages *st, double *x)
{
	int n = g->n;

	memset(x, 0, (size_t)rm->milp.ncols * sizeof(double));
	for (int t = 0; t < n; t++)
		for (int i = 0; i <= t; i++) {
			if (STAGE_R(st, t, i)) {
				if (AT(rm->r, t, i) < 0)
					return -1;
				x[AT(rm->r, t, i)] = 1;
			}
			if (i < t && STAGE_S(st, t, i)) {
				if (AT(rm->s, t, i) < 0)
					return -1;
				x[AT(rm->s, t, i)] = 1;
			}
		}
	for (int t = 0; t < n; t++) {
		double u = 0;

		for (int i = 0; i < t; i++)
			u += STAGE_S(st, t, i) ? (double)(g->nodes[i].memory / rm->unit) : 0;
		for (int k = 0; k <= t; k++) {
			if (k > 0)
				for (int e = g->dep_off[k - 1]; e < g->dep_off[k]; e++)
					if (FREE_AT(t, e) >= 0 && x[FREE_AT(t, e)] > 0.5)
						u -= (double)(g->nodes[g->deps[e]].memory / rm->unit);
			if (STAGE_R(st, t, k))
				u += (double)(g->nodes[k].memory / rm->unit);
			x[AT(rm->u, t, k)] = u;
			/* FREE(t,i,k) by its definition (5). */
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
				int i = g->deps[e], used_later = 0;

				if (FREE_AT(t, e) < 0 || !STAGE_R(st, t, k))
					continue;
				if (t + 1 < n && STAGE_S(st, t + 1, i))
					continue;
				for (int q = g->user_off[i]; q < g->user_off[i + 1]; q++) {
					int j = g->users[q];

					used_later |= j > k && j <= t && STAGE_R(st, t, j);
				}
				if (!used_later)
					x[FREE_AT(t, e)] = 1;
			}
		}
	}
	/* With copies (none in st): the compute clock runs the stages back
	 * to back, the copy clock idles at the previous stage's end. */
	for (int t = 0; rm->ce && t < n; t++) {
		double c = 0;

		for (int i = 0; i <= t; i++)
			c += STAGE_R(st, t, i) ? g->nodes[i].cost / rm->time_unit : 0;
		x[rm->ce[t]] = (t ? x[rm->ce[t - 1]] : 0) + c;
		x[rm->cc[t]] = t ? x[rm->ce[t - 1]] : 0;
	}
	return milp_violation(&rm->milp, x) <= 1e-9 ? 0 : -1;
}

void remat_stages(const struct remat_model *rm, const struct graph *g,
		  const double *x, struct stages *st)
{
	for (int t = 0; t < rm->n; t++)
		for (int i = 0; i < t; i++) {
			STAGE_S(st, t, i) = AT(rm->s, t, i) >= 0 && x[AT(rm->s, t, i)] > 0.5;
			if (st->F && rm->cf) {
				STAGE_F(st, t, i) = AT(rm->cf, t, i) >= 0 && x[AT(rm->cf, t, i)] > 0.5;
				STAGE_O(st, t, i) = AT(rm->co, t, i) >= 0 && x[AT(rm->co, t, i)] > 0.5;
			}
		}
	stages_complete_r(g, st);
}

void remat_fractional_s(const struct remat_model *rm, const double *x, double *sstar)
{
	for (int t = 0; t < rm->n; t++)
		for (int i = 0; i < rm->n; i++)
			AT(sstar, t, i) = AT(rm->s, t, i) >= 0 ? x[AT(rm->s, t, i)] : 0;
}

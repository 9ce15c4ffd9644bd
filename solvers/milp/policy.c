#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

void policy_model_release(struct policy_model *pm)
{
	milp_release(&pm->milp);
	free(pm->col);
	pm->col = NULL;
}

/* The three columns of each moded value, and the rows that tie them: one
 * mode each, a recomputed value's input kept. */
static void mode_columns(const struct policy_chain *pc, struct policy_model *pm)
{
	static const char *const letter = "KOR";
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 };
	char name[32];

	for (int j = 0; j < pc->nf; j++) {
		if (!pc->moded[j])
			continue;
		for (int q = 0; q < 3; q++) {
			snprintf(name, sizeof(name), "%c_%d", letter[q], j);
			pm->col[3 * j + q] = milp_add_col(m, name, 0,
							  q == POLICY_RECOMPUTE && !pc->recomputable[j] ? 0 : 1,
							  0, 1);
			milp_row_add(&r, pm->col[3 * j + q], 1);
		}
		milp_row_emit(m, &r, 1, 1);
		if (j > 0 && pc->recomputable[j]) {
			milp_row_add(&r, pm->col[3 * j + POLICY_RECOMPUTE], 1);
			milp_row_add(&r, pm->col[3 * (j - 1) + POLICY_KEEP], -1);
			milp_row_emit(m, &r, -MILP_INF, 0);
		}
	}
	milp_row_release(&r);
}

/* A memory row a node, and the host's, in units of the gcd of the moded
 * sizes (exact integers; the right sides round down, which loses nothing). */
static void memory_rows(const struct policy_chain *pc, uint64_t budget, struct policy_model *pm)
{
	const struct graph *g = pc->g;
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 };
	uint64_t unit = 0;

	for (int j = 0; j < pc->nf; j++)
		if (pc->moded[j])
			unit = gcd(unit, g->nodes[j].memory);
	unit = unit ? unit : 1;
	for (int k = 0; k < g->n && !pm->hopeless; k++) {
		size_t at = (size_t)k * (size_t)pc->nf;

		if (pc->base[k] > budget) {
			pm->hopeless = 1;
			break;
		}
		for (int j = 0; j < pc->nf; j++) {
			double mj = (double)(g->nodes[j].memory / unit);

			if (!pc->moded[j])
				continue;
			if (pc->in_k[at + j])
				milp_row_add(&r, pm->col[3 * j + POLICY_KEEP], mj);
			if (pc->in_or[at + j]) {
				milp_row_add(&r, pm->col[3 * j + POLICY_OFFLOAD], mj);
				milp_row_add(&r, pm->col[3 * j + POLICY_RECOMPUTE], mj);
			}
		}
		milp_row_emit(m, &r, -MILP_INF, (double)((budget - pc->base[k]) / unit));
	}
	if (pc->host_budget) {
		for (int j = 0; j < pc->nf; j++)
			if (pc->moded[j])
				milp_row_add(&r, pm->col[3 * j + POLICY_OFFLOAD],
					     (double)(g->nodes[j].memory / unit));
		milp_row_emit(m, &r, -MILP_INF, (double)(pc->host_budget / unit));
	}
	milp_row_release(&r);
}

/* The time beyond the computes run once: a column per forward step whose
 * offload may outlast the next compute (its excess), and per backward step
 * that fetches or recomputes (the longer of the two). */
static void time_columns(const struct policy_chain *pc, struct policy_model *pm)
{
	const struct graph *g = pc->g;
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 }, s = { 0 };
	char name[32];

	for (int j = 0; j + 1 < pc->nf; j++) {
		int t;

		if (!pc->moded[j] || pc->m[j] <= pc->c[j + 1])
			continue;
		snprintf(name, sizeof(name), "wf_%d", j + 1);
		t = milp_add_col(m, name, 0, MILP_INF, 1, 0);
		milp_row_add(&r, t, 1);
		milp_row_add(&r, pm->col[3 * j + POLICY_OFFLOAD], -(pc->m[j] - pc->c[j + 1]));
		milp_row_emit(m, &r, 0, MILP_INF);
	}
	for (int b = pc->nf; b < g->n; b++) {
		int t = -1;

		for (int j = 0; j < pc->nf; j++) {
			if (!pc->moded[j] || pc->fb[j] != b)
				continue;
			if (t < 0) {
				snprintf(name, sizeof(name), "wb_%d", b);
				t = milp_add_col(m, name, 0, MILP_INF, 1, 0);
				milp_row_add(&r, t, 1);
				milp_row_add(&s, t, 1);
			}
			milp_row_add(&r, pm->col[3 * j + POLICY_RECOMPUTE], -pc->c[j]);
			milp_row_add(&s, pm->col[3 * j + POLICY_OFFLOAD], -pc->m[j]);
		}
		milp_row_emit(m, &r, 0, MILP_INF);
		milp_row_emit(m, &s, 0, MILP_INF);
	}
	milp_row_release(&r);
	milp_row_release(&s);
}

int policy_build(const struct policy_chain *pc, uint64_t budget, struct policy_model *pm,
		 struct cm_error *err)
{
	memset(pm, 0, sizeof(*pm));
	milp_init(&pm->milp);
	pm->nf = pc->nf;
	pm->col = malloc(3 * (size_t)pc->nf * sizeof(int));
	if (pm->col == NULL)
		return cm_errorf(err, "out of memory");
	for (int i = 0; i < 3 * pc->nf; i++)
		pm->col[i] = -1;
	mode_columns(pc, pm);
	memory_rows(pc, budget, pm);
	time_columns(pc, pm);
	return milp_ok(&pm->milp, err);
}

void policy_modes_of(const struct policy_model *pm, const double *x, int *mode)
{
	for (int j = 0; j < pm->nf; j++) {
		mode[j] = POLICY_FIXED;
		if (pm->col[3 * j] < 0)
			continue;
		mode[j] = POLICY_KEEP;
		for (int q = 1; q < 3; q++)
			if (x[pm->col[3 * j + q]] > x[pm->col[3 * j + mode[j]]])
				mode[j] = q;
	}
}

double *policy_point(const struct policy_model *pm, const int *mode)
{
	const struct milp *m = &pm->milp;
	double *x = calloc((size_t)m->ncols, sizeof(double));

	if (x == NULL)
		return NULL;
	for (int j = 0; j < pm->nf; j++)
		if (pm->col[3 * j] >= 0)
			x[pm->col[3 * j + mode[j]]] = 1;
	/* The time columns at their least: each row's other terms. */
	for (int r = 0; r < m->nrows; r++) {
		int t = -1;
		double need = 0;

		for (int e = m->rbeg[r]; e < m->rbeg[r + 1]; e++) {
			if (m->integer[m->ridx[e]])
				need -= m->rval[e] * x[m->ridx[e]];
			else
				t = m->ridx[e];
		}
		if (t >= 0 && need > x[t])
			x[t] = need;
	}
	return x;
}

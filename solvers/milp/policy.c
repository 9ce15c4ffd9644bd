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
	static const char *const letter = "KORP";
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 };
	char name[32];

	for (int j = 0; j < pc->nf; j++) {
		if (!pc->moded[j])
			continue;
		for (int q = 0; q < 4; q++) {
			int off = (q == POLICY_RECOMPUTE && !pc->recomputable[j]) ||
				  (q == POLICY_PREFETCH && !pc->prefetchable[j]);

			snprintf(name, sizeof(name), "%c_%d", letter[q], j);
			pm->col[4 * j + q] = milp_add_col(m, name, 0, off ? 0 : 1, 0, 1);
			milp_row_add(&r, pm->col[4 * j + q], 1);
		}
		milp_row_emit(m, &r, 1, 1);
		if (j > 0 && pc->recomputable[j]) {
			milp_row_add(&r, pm->col[4 * j + POLICY_RECOMPUTE], 1);
			milp_row_add(&r, pm->col[4 * (j - 1) + POLICY_KEEP], -1);
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
				milp_row_add(&r, pm->col[4 * j + POLICY_KEEP], mj);
			if (pc->in_or[at + j]) {
				milp_row_add(&r, pm->col[4 * j + POLICY_OFFLOAD], mj);
				milp_row_add(&r, pm->col[4 * j + POLICY_RECOMPUTE], mj);
			}
			if (pc->in_p[at + j])
				milp_row_add(&r, pm->col[4 * j + POLICY_PREFETCH], mj);
		}
		milp_row_emit(m, &r, -MILP_INF, (double)((budget - pc->base[k]) / unit));
	}
	if (pc->host_budget) {
		for (int j = 0; j < pc->nf; j++)
			for (int q = POLICY_OFFLOAD; pc->moded[j] && q <= POLICY_PREFETCH; q++)
				if (q != POLICY_RECOMPUTE)
					milp_row_add(&r, pm->col[4 * j + q],
						     (double)(g->nodes[j].memory / unit));
		milp_row_emit(m, &r, -MILP_INF, (double)(pc->host_budget / unit));
	}
	milp_row_release(&r);
}

/* A continuous time column (units of cost, at least 0). */
static int time_col(struct milp *m, const char *prefix, int k)
{
	char name[32];

	snprintf(name, sizeof(name), "%s_%d", prefix, k);
	return milp_add_col(m, name, 0, MILP_INF, 0, 0);
}

/* The forward's waits: a column per offload that may outlast the next
 * compute, at least its excess (the free of the value waits for it). The
 * forward's end is forward_time plus their sum (its terms into r). */
static void forward_waits(const struct policy_chain *pc, struct policy_model *pm,
			  struct milp_row *end)
{
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 };

	for (int j = 0; j + 1 < pc->nf; j++) {
		int w;

		if (!pc->moded[j] || pc->m[j] <= pc->c[j + 1])
			continue;
		w = time_col(m, "wf", j + 1);
		milp_row_add(&r, w, 1);
		milp_row_add(&r, pm->col[4 * j + POLICY_OFFLOAD], -(pc->m[j] - pc->c[j + 1]));
		milp_row_add(&r, pm->col[4 * j + POLICY_PREFETCH], -(pc->m[j] - pc->c[j + 1]));
		milp_row_emit(m, &r, 0, MILP_INF);
		milp_row_add(end, w, 1);
	}
	milp_row_release(&r);
}

/* Adds -coef times the columns of mode q of the moded values whose first
 * backward reader is b to r. */
static void add_reading(const struct policy_chain *pc, const struct policy_model *pm, int b,
			int q, struct milp_row *r)
{
	for (int j = 0; j < pc->nf; j++)
		if (pc->moded[j] && pc->fb[j] == b)
			milp_row_add(r, pm->col[4 * j + q], q == POLICY_RECOMPUTE ? -pc->c[j] : -pc->m[j]);
}

/* The backward's clocks, step by step as the replay runs them (docs/model.md):
 * T_b the end of the compute of b, X_b when its copies start, C_b the copy
 * stream's clock at its start; every row a relation the true clocks meet,
 * with equality on the critical path, so that the least T of the last step
 * is the time. */
static void backward_clocks(const struct policy_chain *pc, struct policy_model *pm,
			    const struct milp_row *fwd)
{
	const struct graph *g = pc->g;
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 };
	int t_prev = -1, c = -1;

	for (int b = pc->nf; b < g->n; b++) {
		int x = time_col(m, "X", b), t = time_col(m, "T", b);
		/* S_b: the end of the step before, or of the forward. */
		double s0 = t_prev < 0 ? pc->forward_time : 0;

#define ADD_START(row, sign)                                                            \
		do {                                                                    \
			if (t_prev >= 0)                                                \
				milp_row_add(row, t_prev, (sign));                      \
			else                                                            \
				for (int e = 0; e < fwd->n; e++)                        \
					milp_row_add(row, fwd->idx[e], (sign) * fwd->val[e]); \
		} while (0)
		milp_row_add(&r, x, 1);
		ADD_START(&r, -1.0);
		milp_row_emit(m, &r, s0, MILP_INF);
		if (c >= 0) {
			milp_row_add(&r, x, 1);
			milp_row_add(&r, c, -1);
			milp_row_emit(m, &r, 0, MILP_INF);
		}
		milp_row_add(&r, t, 1);
		ADD_START(&r, -1.0);
		add_reading(pc, pm, b, POLICY_RECOMPUTE, &r);
		milp_row_emit(m, &r, s0 + pc->c[b], MILP_INF);
		milp_row_add(&r, t, 1);
		milp_row_add(&r, x, -1);
		add_reading(pc, pm, b, POLICY_OFFLOAD, &r);
		milp_row_emit(m, &r, pc->c[b], MILP_INF);
#undef ADD_START
		if (b + 1 < g->n) {
			c = time_col(m, "C", b + 1);
			milp_row_add(&r, c, 1);
			milp_row_add(&r, x, -1);
			add_reading(pc, pm, b, POLICY_OFFLOAD, &r);
			add_reading(pc, pm, b + 1, POLICY_PREFETCH, &r);
			milp_row_emit(m, &r, 0, MILP_INF);
		} else {
			m->obj[t] = 1;
		}
		t_prev = t;
	}
	milp_row_release(&r);
}

int policy_build(const struct policy_chain *pc, uint64_t budget, struct policy_model *pm,
		 struct cm_error *err)
{
	struct milp_row fwd = { 0 };

	memset(pm, 0, sizeof(*pm));
	milp_init(&pm->milp);
	pm->nf = pc->nf;
	pm->col = malloc(4 * (size_t)pc->nf * sizeof(int));
	if (pm->col == NULL)
		return cm_errorf(err, "out of memory");
	for (int i = 0; i < 4 * pc->nf; i++)
		pm->col[i] = -1;
	mode_columns(pc, pm);
	memory_rows(pc, budget, pm);
	forward_waits(pc, pm, &fwd);
	backward_clocks(pc, pm, &fwd);
	milp_row_release(&fwd);
	return milp_ok(&pm->milp, err);
}

void policy_modes_of(const struct policy_model *pm, const double *x, int *mode)
{
	for (int j = 0; j < pm->nf; j++) {
		mode[j] = POLICY_FIXED;
		if (pm->col[4 * j] < 0)
			continue;
		mode[j] = POLICY_KEEP;
		for (int q = 1; q < 4; q++)
			if (x[pm->col[4 * j + q]] > x[pm->col[4 * j + mode[j]]])
				mode[j] = q;
	}
}

#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/num.h"

void policy_model_release(struct policy_model *pm)
{
	milp_release(&pm->milp);
	free(pm->col);
	pm->col = NULL;
}

/* The four columns of each moded value, and the rows that tie them: one
 * mode each, a recomputed value's inputs kept. */
static void mode_columns(const struct policy_chain *pc, struct policy_model *pm)
{
	static const char *const letter = "KORP";
	const struct graph *g = pc->g;
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
		for (int e = g->dep_off[j]; pc->recomputable[j] && e < g->dep_off[j + 1]; e++) {
			milp_row_add(&r, pm->col[4 * j + POLICY_RECOMPUTE], 1);
			milp_row_add(&r, pm->col[4 * g->deps[e] + POLICY_KEEP], -1);
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
			unit = num_gcd(unit, g->nodes[j].memory);
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

/* The forward's clocks: T_k the compute stream after node k and the
 * frees it makes (each waiting for its value's offload), C_k the copy
 * stream after its offload; big a clock no plan reaches. Returns the
 * column of the forward's end, -1 for none. */
static int forward_clocks(const struct policy_chain *pc, struct policy_model *pm, double big,
			  int *copy_clock)
{
	const struct graph *g = pc->g;
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 };
	int *cc = malloc((size_t)pc->nf * sizeof(int)), t_prev = -1, c_prev = -1;

	if (cc == NULL) {
		m->failed = 1;
		return -1;
	}
	for (int k = 0; k < pc->nf; k++) {
		int t = time_col(m, "T", k), c = time_col(m, "C", k);
		int o = pc->moded[k] ? pm->col[4 * k + POLICY_OFFLOAD] : -1;
		int p = pc->moded[k] ? pm->col[4 * k + POLICY_PREFETCH] : -1;

		cc[k] = c;
		/* the compute after the step before */
		milp_row_add(&r, t, 1);
		milp_row_add(&r, t_prev, -1);
		milp_row_emit(m, &r, pc->c[k] / pm->scale, MILP_INF);
		/* the offload after the compute and after the copies before */
		milp_row_add(&r, c, 1);
		milp_row_add(&r, t_prev, -1);
		milp_row_add(&r, o, -pc->m[k] / pm->scale);
		milp_row_add(&r, p, -pc->m[k] / pm->scale);
		milp_row_emit(m, &r, pc->c[k] / pm->scale, MILP_INF);
		if (c_prev >= 0) {
			milp_row_add(&r, c, 1);
			milp_row_add(&r, c_prev, -1);
			milp_row_add(&r, o, -pc->m[k] / pm->scale);
			milp_row_add(&r, p, -pc->m[k] / pm->scale);
			milp_row_emit(m, &r, 0, MILP_INF);
		}
		/* the frees of the inputs k reads last wait for their offloads */
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int v = g->deps[e];

			if (pc->ff[v] != k || !pc->moded[v])
				continue;
			milp_row_add(&r, t, 1);
			milp_row_add(&r, cc[v], -1);
			milp_row_add(&r, pm->col[4 * v + POLICY_OFFLOAD], -big);
			milp_row_add(&r, pm->col[4 * v + POLICY_PREFETCH], -big);
			milp_row_emit(m, &r, -big, MILP_INF);
		}
		t_prev = t;
		c_prev = c;
	}
	free(cc);
	milp_row_release(&r);
	*copy_clock = c_prev;
	return t_prev;
}

/* The forward of a chain in closed form (docs/model.md): a column per
 * offload that may outlast the next compute, at least its excess, and
 * the forward's end S = its computes + their sum. Tighter than
 * forward_clocks' big-M rows, and as exact on a chain. Returns S's
 * column. */
static int chain_forward(const struct policy_chain *pc, struct policy_model *pm)
{
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 }, end = { 0 };
	int s = time_col(m, "S", pc->nf);

	milp_row_add(&end, s, 1);
	for (int j = 0; j + 1 < pc->nf; j++) {
		int w;

		if (!pc->moded[j] || pc->m[j] <= pc->c[j + 1])
			continue;
		w = time_col(m, "wf", j + 1);
		milp_row_add(&r, w, 1);
		milp_row_add(&r, pm->col[4 * j + POLICY_OFFLOAD], -(pc->m[j] - pc->c[j + 1]) / pm->scale);
		milp_row_add(&r, pm->col[4 * j + POLICY_PREFETCH], -(pc->m[j] - pc->c[j + 1]) / pm->scale);
		milp_row_emit(m, &r, 0, MILP_INF);
		milp_row_add(&end, w, -1);
	}
	milp_row_emit(m, &end, pc->forward_time / pm->scale, MILP_INF);
	milp_row_release(&r);
	milp_row_release(&end);
	return s;
}

/* Adds -coef times the columns of mode q of the moded values whose first
 * backward reader is b to r. */
static void add_reading(const struct policy_chain *pc, const struct policy_model *pm, int b,
			int q, struct milp_row *r)
{
	for (int j = 0; j < pc->nf; j++)
		if (pc->moded[j] && pc->fb[j] == b)
			milp_row_add(r, pm->col[4 * j + q],
				     (q == POLICY_RECOMPUTE ? -pc->c[j] : -pc->m[j]) / pm->scale);
}

/* The backward's clocks, step by step as the replay runs them (docs/model.md):
 * T_b the end of the compute of b, X_b when its copies start, C_b the copy
 * stream's clock at its start; every row a relation the true clocks meet,
 * with equality on the critical path, so that the least T of the last step
 * is the time. t_prev and c: the forward's clocks at its end. */
static void backward_clocks(const struct policy_chain *pc, struct policy_model *pm, int t_prev,
			    int c)
{
	const struct graph *g = pc->g;
	struct milp *m = &pm->milp;
	struct milp_row r = { 0 };

	for (int b = pc->nf; b < g->n; b++) {
		int x = time_col(m, "X", b), t = time_col(m, "T", b);

		milp_row_add(&r, x, 1);
		milp_row_add(&r, t_prev, -1);
		milp_row_emit(m, &r, 0, MILP_INF);
		milp_row_add(&r, x, 1);
		milp_row_add(&r, c, -1);
		milp_row_emit(m, &r, 0, MILP_INF);
		milp_row_add(&r, t, 1);
		milp_row_add(&r, t_prev, -1);
		add_reading(pc, pm, b, POLICY_RECOMPUTE, &r);
		milp_row_emit(m, &r, pc->c[b] / pm->scale, MILP_INF);
		milp_row_add(&r, t, 1);
		milp_row_add(&r, x, -1);
		add_reading(pc, pm, b, POLICY_OFFLOAD, &r);
		milp_row_emit(m, &r, pc->c[b] / pm->scale, MILP_INF);
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
	double big = 0;
	int t, c = -1;

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
	for (int k = 0; k < pc->g->n; k++) {
		pm->scale += pc->c[k] / 1000;
		big += pc->c[k] + (k < pc->nf ? pc->m[k] : 0);
	}
	if (!(pm->scale > 0))
		pm->scale = 1;
	big /= pm->scale;
	if (pc->chain)
		t = chain_forward(pc, pm);
	else
		t = forward_clocks(pc, pm, big + 1, &c);
	backward_clocks(pc, pm, t, c);
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

double *policy_point(const struct policy_model *pm, const int *mode)
{
	const struct milp *m = &pm->milp;
	double *x = calloc((size_t)m->ncols, sizeof(double));

	if (x == NULL)
		return NULL;
	for (int j = 0; j < pm->nf; j++)
		if (pm->col[4 * j] >= 0)
			x[pm->col[4 * j + mode[j]]] = 1;
	/* Every clock row has the clock it defines first, coefficient 1,
	 * after the rows of the clocks it reads. */
	for (int r = 0; r < m->nrows; r++) {
		int e0 = m->rbeg[r], t = m->ridx[e0];
		double need = m->rlo[r];

		if (m->rbeg[r + 1] == e0 || m->integer[t] || m->rlo[r] <= -MILP_INF)
			continue;
		for (int e = e0 + 1; e < m->rbeg[r + 1]; e++)
			need -= m->rval[e] * x[m->ridx[e]];
		if (need > x[t])
			x[t] = need;
	}
	return x;
}

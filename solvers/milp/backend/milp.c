#include "milp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void milp_init(struct milp *m)
{
	memset(m, 0, sizeof(*m));
	m->rbeg = calloc(1, sizeof(int));
	if (m->rbeg == NULL)
		m->failed = 1;
}

void milp_release(struct milp *m)
{
	for (int j = 0; j < m->ncols; j++)
		free(m->cname[j]);
	free(m->obj);
	free(m->clo);
	free(m->chi);
	free(m->integer);
	free(m->cname);
	free(m->rlo);
	free(m->rhi);
	free(m->rbeg);
	free(m->ridx);
	free(m->rval);
	memset(m, 0, sizeof(*m));
}

/* Grows each array in the NULL-terminated list to cap elements. */
static int regrow(int *cap, int need, void **arrays[], const size_t *sizes)
{
	int ncap = *cap ? *cap : 1024;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > INT32_MAX / 2)
			return -1;
		ncap *= 2;
	}
	for (int a = 0; arrays[a]; a++) {
		void *p = realloc(*arrays[a], (size_t)ncap * sizes[a]);

		if (p == NULL)
			return -1;
		*arrays[a] = p;
	}
	*cap = ncap;
	return 0;
}

int milp_add_col(struct milp *m, const char *name, double lo, double hi,
		 double obj, int integer)
{
	void **arrays[] = { (void **)&m->obj, (void **)&m->clo, (void **)&m->chi,
			    (void **)&m->integer, (void **)&m->cname, NULL };
	const size_t sizes[] = { sizeof(double), sizeof(double), sizeof(double),
				 sizeof(char), sizeof(char *) };
	int j = m->ncols;

	if (m->failed || regrow(&m->cap_cols, j + 1, arrays, sizes))
		goto fail;
	m->cname[j] = strdup(name);
	if (m->cname[j] == NULL)
		goto fail;
	m->obj[j] = obj;
	m->clo[j] = lo;
	m->chi[j] = hi;
	m->integer[j] = (char)(integer != 0);
	m->ncols++;
	return j;
fail:
	m->failed = 1;
	return -1;
}

int milp_add_row(struct milp *m, double lo, double hi, int n, const int *idx,
		 const double *val)
{
	void **rarrays[] = { (void **)&m->rlo, (void **)&m->rhi, (void **)&m->rbeg, NULL };
	const size_t rsizes[] = { sizeof(double), sizeof(double), sizeof(int) };
	void **narrays[] = { (void **)&m->ridx, (void **)&m->rval, NULL };
	const size_t nsizes[] = { sizeof(int), sizeof(double) };
	int r = m->nrows;

	/* rbeg holds nrows + 1 entries. */
	if (m->failed || regrow(&m->cap_rows, r + 2, rarrays, rsizes) ||
	    regrow(&m->cap_nnz, m->nnz + n + 1, narrays, nsizes))
		goto fail;
	for (int j = 0; j < n; j++)
		if (idx[j] >= 0) {
			m->ridx[m->nnz] = idx[j];
			m->rval[m->nnz++] = val[j];
		}
	m->rlo[r] = lo;
	m->rhi[r] = hi;
	m->rbeg[r + 1] = m->nnz;
	m->nrows++;
	return r;
fail:
	m->failed = 1;
	return -1;
}

int milp_ok(const struct milp *m, struct cm_error *err)
{
	return m->failed ? cm_errorf(err, "out of memory building the model") : 0;
}

double milp_objective(const struct milp *m, const double *x)
{
	double z = 0;

	for (int j = 0; j < m->ncols; j++)
		z += m->obj[j] * x[j];
	return z;
}

double milp_violation(const struct milp *m, const double *x)
{
	double worst = 0;

	for (int j = 0; j < m->ncols; j++) {
		worst = fmax(worst, m->clo[j] - x[j]);
		worst = fmax(worst, x[j] - m->chi[j]);
		if (m->integer[j])
			worst = fmax(worst, fabs(x[j] - round(x[j])));
	}
	for (int r = 0; r < m->nrows; r++) {
		double a = 0;

		for (int e = m->rbeg[r]; e < m->rbeg[r + 1]; e++)
			a += m->rval[e] * x[m->ridx[e]];
		worst = fmax(worst, m->rlo[r] - a);
		worst = fmax(worst, a - m->rhi[r]);
	}
	return worst;
}

/* One term of a linear expression, breaking lines now and then. */
static void lp_term(FILE *f, double v, const char *name, int *nterm)
{
	if (*nterm > 0 && *nterm % 8 == 0)
		fputs("\n  ", f);
	if (v < 0)
		fprintf(f, " - %.17g %s", -v, name);
	else
		fprintf(f, " + %.17g %s", v, name);
	(*nterm)++;
}

static void lp_row(FILE *f, const struct milp *m, int r, const char *sense, double rhs,
		   const char *suffix)
{
	int nterm = 0;

	fprintf(f, " c%d%s:", r, suffix);
	for (int e = m->rbeg[r]; e < m->rbeg[r + 1]; e++)
		lp_term(f, m->rval[e], m->cname[m->ridx[e]], &nterm);
	if (nterm == 0)
		fprintf(f, " 0 %s", m->ncols ? m->cname[0] : "x");
	fprintf(f, " %s %.17g\n", sense, rhs);
}

int milp_write_lp(const struct milp *m, FILE *f)
{
	int nterm = 0, first;

	fputs("\\ checkmate rematerialization MILP\nMinimize\n obj:", f);
	for (int j = 0; j < m->ncols; j++)
		if (m->obj[j] != 0)
			lp_term(f, m->obj[j], m->cname[j], &nterm);
	if (nterm == 0 && m->ncols)
		fprintf(f, " 0 %s", m->cname[0]);
	fputs("\nSubject To\n", f);
	for (int r = 0; r < m->nrows; r++) {
		int lo = m->rlo[r] > -MILP_INF, hi = m->rhi[r] < MILP_INF;

		if (lo && hi && m->rlo[r] == m->rhi[r])
			lp_row(f, m, r, "=", m->rhi[r], "");
		else {
			if (lo)
				lp_row(f, m, r, ">=", m->rlo[r], hi ? "_lo" : "");
			if (hi)
				lp_row(f, m, r, "<=", m->rhi[r], lo ? "_hi" : "");
		}
	}
	fputs("Bounds\n", f);
	for (int j = 0; j < m->ncols; j++) {
		if (m->clo[j] == m->chi[j])
			fprintf(f, " %s = %.17g\n", m->cname[j], m->clo[j]);
		else if (m->clo[j] <= -MILP_INF && m->chi[j] >= MILP_INF)
			fprintf(f, " %s free\n", m->cname[j]);
		else if (m->chi[j] >= MILP_INF)
			fprintf(f, " %s >= %.17g\n", m->cname[j], m->clo[j]);
		else
			fprintf(f, " %.17g <= %s <= %.17g\n", m->clo[j], m->cname[j], m->chi[j]);
	}
	fputs("General\n", f);
	first = 1;
	for (int j = 0, k = 0; j < m->ncols; j++)
		if (m->integer[j]) {
			fprintf(f, "%s%s", k++ % 8 ? " " : (first ? " " : "\n "), m->cname[j]);
			first = 0;
		}
	fputs("\nEnd\n", f);
	return ferror(f) ? -1 : 0;
}

void milp_row_add(struct milp_row *r, int col, double v)
{
	if (col < 0)
		return;
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 64;
		int *i = realloc(r->idx, (size_t)cap * sizeof(int));
		double *x = i ? realloc(r->val, (size_t)cap * sizeof(double)) : NULL;

		if (i)
			r->idx = i;
		if (x)
			r->val = x;
		if (!i || !x) {
			r->failed = 1;
			return;
		}
		r->cap = cap;
	}
	r->idx[r->n] = col;
	r->val[r->n++] = v;
}

void milp_row_emit(struct milp *m, struct milp_row *r, double lo, double hi)
{
	if (r->failed)
		m->failed = 1;
	else if (r->n > 0)
		milp_add_row(m, lo, hi, r->n, r->idx, r->val);
	r->n = 0;
}

void milp_row_release(struct milp_row *r)
{
	free(r->idx);
	free(r->val);
	memset(r, 0, sizeof(*r));
}

void milp_result_release(struct milp_result *res)
{
	free(res->x);
	res->x = NULL;
}

/* Cbc backend, through its C interface. Cbc reports progress only as log
 * messages, so a message callback turns the status lines into progress
 * reports; the callback has no user pointer, hence the file-level context
 * (one solve per process: the runner forks for each). */
#include "solver.h"
#include "../graph/clock.h"

#include <Cbc_C_Interface.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cbc message numbers (CbcMessage.hpp, plus Cbc's offset): a new
 * incumbent and the periodic node status. */
#define CBC_MSG_SOLUTION 12
#define CBC_MSG_STATUS 10

static struct {
	const struct solve_opts *o;
	double t0, last;
	struct solve_progress p;
} cbc_ctx;

static void on_message(Cbc_Model *model, int msgno, int ndouble, const double *dvec,
		       int nint, const int *ivec, int nchar, char **cvec)
{
	double t = cm_clock();

	(void)model;
	(void)nint;
	(void)ivec;
	(void)nchar;
	(void)cvec;
	if (getenv("CHECKMATE_CBC_TRACE")) {
		fprintf(stderr, "cbc msg %d:", msgno);
		for (int i = 0; i < ndouble; i++)
			fprintf(stderr, " %g", dvec[i]);
		fprintf(stderr, "\n");
	}
	if (msgno == CBC_MSG_SOLUTION && ndouble >= 1) {
		cbc_ctx.p.incumbent = dvec[0];
		cbc_ctx.p.has_incumbent = 1;
	} else if (msgno == CBC_MSG_STATUS && ndouble >= 2) {
		if (dvec[0] < 1e49) {
			cbc_ctx.p.incumbent = dvec[0];
			cbc_ctx.p.has_incumbent = 1;
		}
		cbc_ctx.p.bound = dvec[1];
		cbc_ctx.p.has_bound = 1;
	} else {
		return;
	}
	/* The runner reports from the parent; send what is known at most a
	 * few times a second. */
	if (cbc_ctx.o->progress && t - cbc_ctx.last >= 0.25) {
		cbc_ctx.last = t;
		cbc_ctx.p.elapsed = t - cbc_ctx.t0;
		cbc_ctx.o->progress(cbc_ctx.o->ctx, &cbc_ctx.p);
	}
}

/* The model in Cbc's column-major form. */
static int load(Cbc_Model *model, const struct milp *m)
{
	int *start = calloc((size_t)m->ncols + 1, sizeof(int));
	int *index = malloc(((size_t)m->nnz + 1) * sizeof(int));
	double *value = malloc(((size_t)m->nnz + 1) * sizeof(double));
	double *rlo = malloc(((size_t)m->nrows + 1) * sizeof(double));
	double *rhi = malloc(((size_t)m->nrows + 1) * sizeof(double));
	double *clo = malloc(((size_t)m->ncols + 1) * sizeof(double));
	double *chi = malloc(((size_t)m->ncols + 1) * sizeof(double));
	int *fill = NULL, rc = -1;

	if (!start || !index || !value || !rlo || !rhi || !clo || !chi)
		goto out;
	fill = calloc((size_t)m->ncols + 1, sizeof(int));
	if (fill == NULL)
		goto out;
	for (int e = 0; e < m->nnz; e++)
		start[m->ridx[e] + 1]++;
	for (int j = 0; j < m->ncols; j++)
		start[j + 1] += start[j];
	for (int r = 0; r < m->nrows; r++) {
		for (int e = m->rbeg[r]; e < m->rbeg[r + 1]; e++) {
			int j = m->ridx[e];

			index[start[j] + fill[j]] = r;
			value[start[j] + fill[j]++] = m->rval[e];
		}
		rlo[r] = m->rlo[r] <= -MILP_INF ? -DBL_MAX : m->rlo[r];
		rhi[r] = m->rhi[r] >= MILP_INF ? DBL_MAX : m->rhi[r];
	}
	for (int j = 0; j < m->ncols; j++) {
		clo[j] = m->clo[j] <= -MILP_INF ? -DBL_MAX : m->clo[j];
		chi[j] = m->chi[j] >= MILP_INF ? DBL_MAX : m->chi[j];
	}
	Cbc_loadProblem(model, m->ncols, m->nrows, start, index, value, clo, chi,
			m->obj, rlo, rhi);
	for (int j = 0; j < m->ncols; j++)
		if (m->integer[j])
			Cbc_setInteger(model, j);
	rc = 0;
out:
	free(start);
	free(index);
	free(value);
	free(rlo);
	free(rhi);
	free(clo);
	free(chi);
	free(fill);
	return rc;
}

static int cbc_solve(const struct milp *m, const struct solve_opts *o,
		     struct milp_result *res, struct cm_error *err)
{
	Cbc_Model *model = Cbc_newModel();
	const double *x;
	char buf[32];
	int rc = -1;

	memset(res, 0, sizeof(*res));
	cbc_ctx.o = o;
	cbc_ctx.t0 = cbc_ctx.last = cm_clock();
	memset(&cbc_ctx.p, 0, sizeof(cbc_ctx.p));
	if (model == NULL || load(model, m)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	Cbc_setLogLevel(model, 1);
	Cbc_registerCallBack(model, on_message);
	if (o->time_limit > 0)
		Cbc_setMaximumSeconds(model, o->time_limit);
	if (o->gap > 0)
		Cbc_setAllowableFractionGap(model, o->gap);
	if (o->threads > 1) {
		snprintf(buf, sizeof(buf), "%d", o->threads);
		Cbc_setParameter(model, "threads", buf);
	}
	if (o->start) {
		int *idx = malloc(((size_t)m->ncols + 1) * sizeof(int));

		if (idx == NULL) {
			cm_errorf(err, "out of memory");
			goto out;
		}
		for (int j = 0; j < m->ncols; j++)
			idx[j] = j;
		Cbc_setMIPStartI(model, m->ncols, idx, o->start);
		free(idx);
	}
	Cbc_solve(model);
	if (Cbc_isProvenInfeasible(model)) {
		res->status = MILP_INFEASIBLE;
	} else if (Cbc_bestSolution(model) != NULL) {
		res->status = Cbc_isProvenOptimal(model) ? MILP_OPTIMAL : MILP_FEASIBLE;
		x = Cbc_bestSolution(model);
		res->x = malloc((size_t)m->ncols * sizeof(double) + 1);
		if (res->x == NULL) {
			cm_errorf(err, "out of memory");
			goto out;
		}
		memcpy(res->x, x, (size_t)m->ncols * sizeof(double));
		res->objective = Cbc_getObjValue(model);
	} else if (Cbc_isAbandoned(model)) {
		cm_errorf(err, "cbc abandoned the solve (numerical difficulties)");
		goto out;
	} else {
		res->status = MILP_NO_SOLUTION;
	}
	if (res->status != MILP_INFEASIBLE) {
		res->bound = Cbc_getBestPossibleObjValue(model);
		res->has_bound = res->bound > -1e49 && res->bound < 1e49;
	}
	rc = 0;
out:
	if (model)
		Cbc_deleteModel(model);
	return rc;
}

const struct solver_ops solver_cbc = { "cbc", cbc_solve };

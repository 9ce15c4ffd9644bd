/* Cbc backend, through its C interface. Cbc reports progress only as log
 * messages, so a message callback turns the status lines into progress
 * reports; the callback has no user pointer, hence the file-level context
 * (one solve per process: the runner forks for each). */
#include "solver.h"
#include "../../../common/clock.h"

#include <Cbc_C_Interface.h>
/* Clp's header declares ClpSolve_new() without a prototype. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <Clp_C_Interface.h>
#pragma GCC diagnostic pop
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cbc message numbers (CbcMessage.hpp, plus Cbc's offset): a new
 * incumbent and the periodic node status. */
#define CBC_MSG_SOLUTION 12
#define CBC_MSG_STATUS 10

/* Cbc reads from the objective a step that every solution's objective is
 * a multiple of (the gcd of whole-number coefficients, or of coefficients
 * that a multiplier it tries makes whole), prunes by it and rounds its
 * bound up to it. On coefficients that are not whole numbers,
 * floating-point rounding makes that step wrong: ILPs whose costs were
 * the paper's unet's times 0.137 or 1/7 ended "optimal", with a bound to
 * match, 0.07% and 0.16% above the optimum. So such an objective goes to
 * Cbc in whole numbers: each coefficient times a power of two, rounded,
 * the largest objective of any solution below 2^52 so that Cbc's sums are
 * exact; answers come back in the model's units. */
struct whole {
	double *obj;  /* what Cbc solves with: m->obj, or the rounded copy */
	double scale; /* Cbc's units per model unit; 0: not whole, m->obj
		       * as it is (a continuous or unbounded column costs) */
	double slack; /* the most the rounding moves any solution's objective,
		       * in Cbc's units */
};

/* The largest |x_j| column j allows. */
static double reach(const struct milp *m, int j)
{
	return fmax(fabs(m->clo[j]), fabs(m->chi[j]));
}

/* Fills w for m. 0, or -1 when out of memory. */
static int whole_make(const struct milp *m, struct whole *w)
{
	double most = 0, e;
	int whole = 1;

	*w = (struct whole){ m->obj, 0, 0 };
	for (int j = 0; j < m->ncols; j++) {
		if (m->obj[j] == 0)
			continue;
		if (!m->integer[j] || reach(m, j) >= MILP_INF)
			return 0; /* no whole step to find: Cbc's own tolerance */
		most += fabs(m->obj[j]) * reach(m, j);
		whole &= m->obj[j] == floor(m->obj[j]);
	}
	if (most == 0)
		return 0;
	if (whole && most <= 0x1p52) {
		w->scale = 1; /* Cbc's step is exact */
		return 0;
	}
	e = floor(log2(0x1p52 / most));
	if (!(fabs(e) < 1000))
		return 0; /* costs beyond any unit (or not numbers) */
	w->obj = malloc((size_t)m->ncols * sizeof(double) + 1);
	if (w->obj == NULL)
		return -1;
	w->scale = ldexp(1, (int)e);
	for (int j = 0; j < m->ncols; j++) {
		w->obj[j] = nearbyint(m->obj[j] * w->scale);
		w->slack += fabs(w->obj[j] - m->obj[j] * w->scale) * reach(m, j);
	}
	return 0;
}

/* An objective value in Cbc's units in the model's. */
static double whole_value(const struct whole *w, double value)
{
	return w->scale ? value / w->scale : value;
}

/* A bound in Cbc's units as one in the model's. */
static double whole_bound(const struct whole *w, double bound)
{
	return w->scale ? (bound - w->slack) / w->scale : bound;
}

/* What on_message reports. A static, not a context pointer: Cbc's C
 * interface (Cbc_registerCallBack, cbc_callback) hands its callbacks the
 * model and the message only. One solve runs at a time in a process (the
 * runner's child), which is what makes this safe. */
static struct {
	const struct solve_opts *o;
	const struct whole *w;
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
	if (msgno == CBC_MSG_SOLUTION && ndouble >= 1) {
		cbc_ctx.p.incumbent = whole_value(cbc_ctx.w, dvec[0]);
		cbc_ctx.p.has_incumbent = 1;
	} else if (msgno == CBC_MSG_STATUS && ndouble >= 2) {
		if (dvec[0] < 1e49) {
			cbc_ctx.p.incumbent = whole_value(cbc_ctx.w, dvec[0]);
			cbc_ctx.p.has_incumbent = 1;
		}
		cbc_ctx.p.bound = whole_bound(cbc_ctx.w, dvec[1]);
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

/* The model in column-major form, as Cbc and Clp load it. */
struct csc {
	int *start, *index;
	double *value, *rlo, *rhi, *clo, *chi;
};

static void csc_free(struct csc *c)
{
	free(c->start);
	free(c->index);
	free(c->value);
	free(c->rlo);
	free(c->rhi);
	free(c->clo);
	free(c->chi);
}

static int csc_build(struct csc *c, const struct milp *m)
{
	int *fill;

	c->start = calloc((size_t)m->ncols + 1, sizeof(int));
	c->index = malloc(((size_t)m->nnz + 1) * sizeof(int));
	c->value = malloc(((size_t)m->nnz + 1) * sizeof(double));
	c->rlo = malloc(((size_t)m->nrows + 1) * sizeof(double));
	c->rhi = malloc(((size_t)m->nrows + 1) * sizeof(double));
	c->clo = malloc(((size_t)m->ncols + 1) * sizeof(double));
	c->chi = malloc(((size_t)m->ncols + 1) * sizeof(double));
	fill = calloc((size_t)m->ncols + 1, sizeof(int));
	if (!c->start || !c->index || !c->value || !c->rlo || !c->rhi || !c->clo || !c->chi ||
	    !fill) {
		free(fill);
		csc_free(c);
		return -1;
	}
	for (int e = 0; e < m->nnz; e++)
		c->start[m->ridx[e] + 1]++;
	for (int j = 0; j < m->ncols; j++)
		c->start[j + 1] += c->start[j];
	for (int r = 0; r < m->nrows; r++) {
		for (int e = m->rbeg[r]; e < m->rbeg[r + 1]; e++) {
			int j = m->ridx[e];

			c->index[c->start[j] + fill[j]] = r;
			c->value[c->start[j] + fill[j]++] = m->rval[e];
		}
		c->rlo[r] = m->rlo[r] <= -MILP_INF ? -DBL_MAX : m->rlo[r];
		c->rhi[r] = m->rhi[r] >= MILP_INF ? DBL_MAX : m->rhi[r];
	}
	for (int j = 0; j < m->ncols; j++) {
		c->clo[j] = m->clo[j] <= -MILP_INF ? -DBL_MAX : m->clo[j];
		c->chi[j] = m->chi[j] >= MILP_INF ? DBL_MAX : m->chi[j];
	}
	free(fill);
	return 0;
}

static int load(Cbc_Model *model, const struct milp *m, const double *obj)
{
	struct csc c = { 0 };

	if (csc_build(&c, m))
		return -1;
	Cbc_loadProblem(model, m->ncols, m->nrows, c.start, c.index, c.value, c.clo, c.chi,
			obj, c.rlo, c.rhi);
	for (int j = 0; j < m->ncols; j++)
		if (m->integer[j])
			Cbc_setInteger(model, j);
	csc_free(&c);
	return 0;
}

/* Cbc's answer into res. Its infeasibility is taken only from a solve that
 * ended before its time limit: Cbc 2.10.8 stopped by the limit in its
 * preprocessing can say "infeasible" (status 0, secondary status 1) of a
 * model with plans (U-Net at 13.6G with half a second, in the sanitizer
 * build). 0, or -1 with err set. */
static int cbc_answer(Cbc_Model *model, const struct milp *m, const struct solve_opts *o,
		      const struct whole *w, struct milp_result *res, struct cm_error *err)
{
	int in_time = o->time_limit <= 0 || cm_clock() - cbc_ctx.t0 < o->time_limit;
	int infeasible = Cbc_isProvenInfeasible(model);
	const double *x = Cbc_bestSolution(model);

	if (infeasible && in_time) {
		res->status = MILP_INFEASIBLE;
		return 0;
	}
	if (x != NULL) {
		res->status = Cbc_isProvenOptimal(model) ? MILP_OPTIMAL : MILP_FEASIBLE;
		res->x = malloc((size_t)m->ncols * sizeof(double) + 1);
		if (res->x == NULL)
			return cm_errorf(err, "out of memory");
		memcpy(res->x, x, (size_t)m->ncols * sizeof(double));
		res->objective = w->scale ? milp_objective(m, res->x) : Cbc_getObjValue(model);
	} else if (Cbc_isAbandoned(model)) {
		return cm_errorf(err, "cbc abandoned the solve (numerical difficulties)");
	} else {
		res->status = MILP_NO_SOLUTION;
	}
	/* A bound from a solve that claimed infeasibility out of time is
	 * not one. */
	if (!infeasible) {
		res->bound = Cbc_getBestPossibleObjValue(model);
		res->has_bound = res->bound > -1e49 && res->bound < 1e49;
		if (res->has_bound)
			res->bound = whole_bound(w, res->bound);
	}
	return 0;
}

static int cbc_solve(const struct milp *m, const struct solve_opts *o,
		     struct milp_result *res, struct cm_error *err)
{
	Cbc_Model *model = Cbc_newModel();
	struct whole w = { 0 };
	char buf[32];
	int rc = -1;

	memset(res, 0, sizeof(*res));
	cbc_ctx.o = o;
	cbc_ctx.w = &w;
	cbc_ctx.t0 = cbc_ctx.last = cm_clock();
	memset(&cbc_ctx.p, 0, sizeof(cbc_ctx.p));
	if (model == NULL || whole_make(m, &w) || load(model, m, w.obj)) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	Cbc_setLogLevel(model, 1);
	Cbc_registerCallBack(model, on_message);
	/* On the clock, not on CPU time (Cbc's default), which runs slower
	 * than the user's on a loaded machine. */
	Cbc_setParameter(model, "timeMode", "elapsed");
	if (o->time_limit > 0)
		Cbc_setMaximumSeconds(model, o->time_limit);
	if (o->gap > 0) {
		Cbc_setAllowableFractionGap(model, o->gap);
	} else if (o->prune_tol > 0 && w.scale == 0) {
		/* Without a whole step, Cbc prunes the nodes that cannot
		 * improve on the incumbent by 1e-5 objective units. */
		snprintf(buf, sizeof(buf), "%.17g", o->prune_tol);
		Cbc_setAllowableGap(model, 0);
		Cbc_setParameter(model, "increment", buf);
	}
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
	if (cbc_answer(model, m, o, &w, res, err))
		goto out;
	rc = 0;
out:
	if (model)
		Cbc_deleteModel(model);
	if (w.obj != m->obj)
		free(w.obj);
	return rc;
}

/* The LP's outcome from the model into res. 0, or -1 with err set. */
static int clp_result(Clp_Simplex *model, const struct milp *m, struct milp_result *res,
		      struct cm_error *err)
{
	memset(res, 0, sizeof(*res));
	if (Clp_isProvenOptimal(model)) {
		res->status = MILP_OPTIMAL;
		res->x = malloc((size_t)m->ncols * sizeof(double) + 1);
		if (res->x == NULL)
			return cm_errorf(err, "out of memory");
		memcpy(res->x, Clp_getColSolution(model), (size_t)m->ncols * sizeof(double));
		res->objective = res->bound = Clp_objectiveValue(model);
		res->has_bound = 1;
	} else if (Clp_isProvenPrimalInfeasible(model)) {
		res->status = MILP_INFEASIBLE;
	} else if (Clp_status(model) == 3) {
		res->status = MILP_NO_SOLUTION; /* stopped on its limits */
	} else {
		return cm_errorf(err, "clp: the LP failed (status %d)", Clp_status(model));
	}
	return 0;
}

/* Solves the loaded LP from scratch by the requested method. */
static void clp_initial(Clp_Simplex *model, int method)
{
	switch (method) {
	case LP_DUAL:
		Clp_initialDualSolve(model);
		break;
	case LP_PRIMAL:
		Clp_initialPrimalSolve(model);
		break;
	case LP_BARRIER:
		Clp_initialBarrierSolve(model);
		break;
	default:
		Clp_initialSolve(model);
	}
}

/* Loads m into a new Clp model, with the column upper bounds chi; NULL
 * when out of memory. */
static Clp_Simplex *clp_load(const struct milp *m, const struct csc *c, const double *chi)
{
	Clp_Simplex *model = Clp_newModel();

	if (model == NULL)
		return NULL;
	Clp_setLogLevel(model, 0);
	Clp_loadProblem(model, m->ncols, m->nrows, c->start, c->index, c->value, c->clo, chi,
			m->obj, c->rlo, c->rhi);
	return model;
}

/* The rest of a sweep (solve_opts.sweep_ub): each LP from the previous
 * basis by the dual simplex, which a tightened bound leaves dual feasible,
 * or on large models (SWEEP_LARGE_NNZ) from scratch by the requested
 * method (*model is then replaced). */
static int clp_sweep(Clp_Simplex **model, const struct milp *m, const struct solve_opts *o,
		     const struct csc *c, int status, double t0, struct cm_error *err)
{
	double *ub = malloc((size_t)m->ncols * sizeof(double) + 1);
	int fresh = o->sweep_fresh || m->nnz > SWEEP_LARGE_NNZ;

	if (ub == NULL)
		return cm_errorf(err, "out of memory");
	memcpy(ub, c->chi, (size_t)m->ncols * sizeof(double));
	for (int k = 1; k < o->n_sweep && status == MILP_OPTIMAL; k++) {
		struct milp_result r;
		int stop;

		for (int i = 0; i < o->n_sweep_cols; i++)
			ub[o->sweep_cols[i]] = o->sweep_ub[k];
		if (fresh) {
			Clp_Simplex *next = clp_load(m, c, ub);

			if (next == NULL) {
				free(ub);
				return cm_errorf(err, "out of memory");
			}
			Clp_deleteModel(*model);
			*model = next;
		} else {
			Clp_chgColumnUpper(*model, ub);
		}
		if (o->time_limit > 0)
			Clp_setMaximumSeconds(*model, fmax(o->time_limit - (cm_clock() - t0), 0.01));
		if (fresh)
			clp_initial(*model, o->lp_method);
		else
			Clp_dual(*model, 0);
		if (clp_result(*model, m, &r, err)) {
			free(ub);
			return -1;
		}
		stop = o->on_lp(o->lp_ctx, k, &r);
		status = stop ? MILP_NO_SOLUTION : r.status;
		milp_result_release(&r);
	}
	free(ub);
	return 0;
}

/* The LP relaxation through Clp, Cbc's own LP solver. */
static int clp_solve_lp(const struct milp *m, const struct solve_opts *o,
			struct milp_result *res, struct cm_error *err)
{
	Clp_Simplex *model = NULL;
	struct csc c = { 0 };
	double t0 = cm_clock();
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (csc_build(&c, m) || (model = clp_load(m, &c, c.chi)) == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (o->time_limit > 0)
		Clp_setMaximumSeconds(model, o->time_limit);
	clp_initial(model, o->lp_method);
	if (clp_result(model, m, res, err))
		goto out;
	if (o->on_lp && (o->on_lp(o->lp_ctx, 0, res) == 0) &&
	    clp_sweep(&model, m, o, &c, res->status, t0, err))
		goto out;
	rc = 0;
out:
	if (rc)
		milp_result_release(res);
	csc_free(&c);
	if (model)
		Clp_deleteModel(model);
	return rc;
}

const struct solver_ops solver_cbc = { "cbc", cbc_solve, clp_solve_lp };

/* GLPK backend: the model scaled, glp_simplex (dual, with its LP presolver)
 * for the root, then glp_intopt with every cut family; the MIP start goes in
 * through the heuristic callback. A GLPK error (which would
 * abort the process) returns through the error hook instead. */
#include "solver.h"
#include "../../../common/clock.h"
#include "../../../common/num.h"

#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct glpk_ctx {
	const struct solve_opts *o;
	const struct milp *m;
	double t0, last;
	double bound;      /* best bound seen in the tree, when has_bound */
	int has_bound;
	int start_given;
	double *start1; /* 1-based copy of o->start */
	double *inc;    /* room for a better solution, for o->incumbent */
	char last_line[200]; /* GLPK's last line of output, for the message of
			      * a failure */
	jmp_buf fail;
};

static void on_glpk_error(void *info)
{
	struct glpk_ctx *c = info;

	longjmp(c->fail, 1);
}

/* GLPK's own output is swallowed; during a solve (info: its glpk_ctx) the
 * last line is kept for the message of a failure. */
static int quiet_terminal(void *info, const char *s)
{
	struct glpk_ctx *c = info;
	size_t len;

	if (c == NULL)
		return 1;
	snprintf(c->last_line, sizeof(c->last_line), "%s", s);
	len = strlen(c->last_line);
	while (len > 0 && (c->last_line[len - 1] == '\n' || c->last_line[len - 1] == '\r'))
		c->last_line[--len] = '\0';
	return 1;
}

static void callback(glp_tree *tree, void *info)
{
	struct glpk_ctx *c = info;
	double t = cm_clock();

	if (glp_ios_reason(tree) == GLP_IHEUR && c->start1 && !c->start_given) {
		c->start_given = 1;
		glp_ios_heur_sol(tree, c->start1);
	}
	if (glp_ios_reason(tree) == GLP_IBINGO && c->inc) {
		glp_prob *p = glp_ios_get_prob(tree);

		/* The presolver is off: the columns are the model's own. */
		for (int j = 0; j < c->m->ncols; j++)
			c->inc[j] = glp_mip_col_val(p, j + 1);
		c->o->incumbent(c->o->incumbent_ctx, c->inc, glp_mip_obj_val(p));
	}
	int best = glp_ios_best_node(tree);

	if (best) {
		double b = glp_ios_node_bound(tree, best);

		if (!c->has_bound || b > c->bound)
			c->bound = b;
		c->has_bound = 1;
	}
	if (c->o->progress && t - c->last >= 0.25) {
		glp_prob *p = glp_ios_get_prob(tree);
		struct solve_progress pr = { .elapsed = t - c->t0 };

		c->last = t;
		if (glp_mip_status(p) == GLP_FEAS) {
			pr.incumbent = glp_mip_obj_val(p);
			pr.has_incumbent = 1;
		}
		pr.bound = c->bound;
		pr.has_bound = c->has_bound;
		c->o->progress(c->o->ctx, &pr);
	}
}

static glp_prob *load(const struct milp *m)
{
	glp_prob *p = glp_create_prob();
	int *ia = malloc(((size_t)m->nnz + 1) * sizeof(int));
	int *ja = malloc(((size_t)m->nnz + 1) * sizeof(int));
	double *ar = malloc(((size_t)m->nnz + 1) * sizeof(double));

	if (ia == NULL || ja == NULL || ar == NULL) {
		free(ia);
		free(ja);
		free(ar);
		glp_delete_prob(p);
		return NULL;
	}
	glp_set_obj_dir(p, GLP_MIN);
	if (m->ncols)
		glp_add_cols(p, m->ncols);
	if (m->nrows)
		glp_add_rows(p, m->nrows);
	for (int j = 0; j < m->ncols; j++) {
		int lo = m->clo[j] > -MILP_INF, hi = m->chi[j] < MILP_INF;
		int type = lo && hi ? (m->clo[j] == m->chi[j] ? GLP_FX : GLP_DB)
				    : lo ? GLP_LO : hi ? GLP_UP : GLP_FR;

		/* Kind first: GLP_BV would reset the bounds to [0, 1]. */
		if (m->integer[j])
			glp_set_col_kind(p, j + 1, GLP_IV);
		glp_set_col_bnds(p, j + 1, type, m->clo[j], m->chi[j]);
		glp_set_obj_coef(p, j + 1, m->obj[j]);
	}
	for (int r = 0; r < m->nrows; r++) {
		int lo = m->rlo[r] > -MILP_INF, hi = m->rhi[r] < MILP_INF;
		int type = lo && hi ? (m->rlo[r] == m->rhi[r] ? GLP_FX : GLP_DB)
				    : lo ? GLP_LO : hi ? GLP_UP : GLP_FR;

		glp_set_row_bnds(p, r + 1, type, m->rlo[r], m->rhi[r]);
		for (int e = m->rbeg[r]; e < m->rbeg[r + 1]; e++) {
			ia[e + 1] = r + 1;
			ja[e + 1] = m->ridx[e] + 1;
			ar[e + 1] = m->rval[e];
		}
	}
	glp_load_matrix(p, m->nnz, ia, ja, ar);
	free(ia);
	free(ja);
	free(ar);
	return p;
}

/* Milliseconds left of the time limit, or INT_MAX without one. */
static int ms_left(const struct glpk_ctx *c)
{
	double left;

	if (c->o->time_limit <= 0)
		return 0x7fffffff;
	left = c->o->time_limit - (cm_clock() - c->t0);
	return left <= 0 ? 1 : (int)fmin(left * 1000, 0x7fffffff);
}

/* An optimal LP into res: its value, which is also the bound, and (when
 * want_x) its point, read column by column with prim (the simplex's or the
 * interior point's). 0, or -1 with err set. */
static int optimum(glp_prob *p, const struct milp *m, double value,
		   double (*prim)(glp_prob *, int), int want_x, struct milp_result *res,
		   struct cm_error *err)
{
	res->status = MILP_OPTIMAL;
	res->objective = res->bound = value;
	res->has_bound = 1;
	if (!want_x)
		return 0;
	res->x = malloc((size_t)m->ncols * sizeof(double) + 1);
	if (res->x == NULL)
		return cm_errorf(err, "out of memory");
	for (int j = 0; j < m->ncols; j++)
		res->x[j] = prim(p, j + 1);
	return 0;
}

/* The LP by glp_interior (which has no time limit of its own: the runner's
 * deadline bounds it). Its point is not a vertex, which the rounding of
 * approx does not need. Returns 0 with res filled, 1 when the method did
 * not converge (GLPK's interior point is fragile on degenerate models; the
 * caller falls back to the simplex), -1 with err set. */
static int interior(glp_prob *p, const struct milp *m, struct milp_result *res,
		    struct cm_error *err)
{
	glp_iptcp ip;
	int st;

	glp_init_iptcp(&ip);
	ip.msg_lev = GLP_MSG_OFF;
	st = glp_interior(p, &ip);
	if (st == GLP_ENOPFS || (st == 0 && glp_ipt_status(p) == GLP_NOFEAS)) {
		res->status = MILP_INFEASIBLE;
		return 0;
	}
	if (st != 0 || glp_ipt_status(p) != GLP_OPT)
		return 1;
	return optimum(p, m, glp_ipt_obj_val(p), glp_ipt_col_prim, 1, res, err);
}

/* glp_simplex on p (the dual simplex unless the primal is asked for: on
 * our models it is 3-4x faster at the MIP root and 27x on the 100-node
 * random graph's LP, docs/benchmarks.md), its outcome in res, with x when
 * want_x and optimal. 0, or -1 with err set. */
static int simplex(glp_prob *p, const struct milp *m, struct glpk_ctx *c, int presolve,
		   int want_x, struct milp_result *res, struct cm_error *err)
{
	glp_smcp sm;
	int st;

	memset(res, 0, sizeof(*res));
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	sm.presolve = presolve;
	sm.meth = c->o->lp_method == LP_PRIMAL ? GLP_PRIMAL : GLP_DUALP;
	sm.tm_lim = ms_left(c);
	st = glp_simplex(p, &sm);
	if (st == GLP_ENOPFS || (st == 0 && glp_get_status(p) == GLP_NOFEAS)) {
		res->status = MILP_INFEASIBLE;
		return 0;
	}
	if (st != 0 || glp_get_status(p) != GLP_OPT) {
		res->status = MILP_NO_SOLUTION;
		return st == GLP_ETMLIM ? 0 : cm_errorf(err, "glpk: the LP failed (code %d)", st);
	}
	return optimum(p, m, glp_get_obj_val(p), glp_get_col_prim, want_x, res, err);
}

/* A sweep (solve_opts.sweep_ub) after its first LP: each next LP from the
 * previous basis (presolve GLP_OFF) or afresh (sweep_fresh, or after the
 * interior point, which leaves no basis). 0, or -1 with err set. */
static int sweep(glp_prob *p, const struct milp *m, struct glpk_ctx *c,
		 const struct milp_result *first, int presolve, struct cm_error *err)
{
	const struct solve_opts *o = c->o;
	int status = first->status;

	if (o->on_lp(o->lp_ctx, 0, first))
		return 0;
	for (int k = 1; k < o->n_sweep && status == MILP_OPTIMAL; k++) {
		struct milp_result r;

		for (int i = 0; i < o->n_sweep_cols; i++) {
			int j = o->sweep_cols[i];

			glp_set_col_bnds(p, j + 1, m->clo[j] < o->sweep_ub[k] ? GLP_DB : GLP_FX,
					 m->clo[j], o->sweep_ub[k]);
		}
		if (simplex(p, m, c, presolve, 1, &r, err))
			return -1;
		status = o->on_lp(o->lp_ctx, k, &r) ? MILP_NO_SOLUTION : r.status;
		milp_result_release(&r);
	}
	return 0;
}

/* The MIP start, 1-based as glp_ios_heur_sol wants it, into c->start1
 * when there is one, and room for the solutions o->incumbent is given.
 * 0, or -1 with err set. */
static int copy_start(struct glpk_ctx *c, struct cm_error *err)
{
	if (c->o->incumbent) {
		c->inc = malloc(((size_t)c->m->ncols + 1) * sizeof(double));
		if (c->inc == NULL)
			return cm_errorf(err, "out of memory");
	}
	if (c->o->start == NULL)
		return 0;
	c->start1 = malloc(((size_t)c->m->ncols + 1) * sizeof(double));
	if (c->start1 == NULL)
		return cm_errorf(err, "out of memory");
	memcpy(c->start1 + 1, c->o->start, (size_t)c->m->ncols * sizeof(double));
	return 0;
}

/* The relaxation: the interior point when asked for, else (or when it does
 * not converge) the simplex, each followed by the rest of a sweep. 0, or -1
 * with err set. */
static int solve_relaxation(glp_prob *p, struct glpk_ctx *c, struct milp_result *res,
			    struct cm_error *err)
{
	const struct solve_opts *o = c->o;
	int rc;

	if (o->lp_method == LP_BARRIER) {
		rc = interior(p, c->m, res, err);
		if (rc == 0 && o->on_lp)
			rc = sweep(p, c->m, c, res, GLP_ON, err);
		if (rc <= 0)
			return rc;
		/* no convergence: the dual simplex instead */
	}
	if (simplex(p, c->m, c, GLP_ON, 1, res, err))
		return -1;
	return o->on_lp ? sweep(p, c->m, c, res, o->sweep_fresh ? GLP_ON : GLP_OFF, err) : 0;
}

/* glp_intopt from the root LP's basis, with c's callback; its return code. */
static int intopt(glp_prob *p, struct glpk_ctx *c)
{
	glp_iocp io;

	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.presolve = GLP_OFF; /* keeps the MIP start's columns the model's own */
	io.gmi_cuts = io.mir_cuts = io.cov_cuts = io.clq_cuts = GLP_ON;
	/* The feasibility pump and proximity search cost more than they
	 * gave on our model (docs/model.md: unet at 50%: 36 s with the pump,
	 * 18 s without); the warm start supplies a first incumbent. */
	io.fp_heur = GLP_OFF;
	io.ps_heur = GLP_OFF;
	io.mip_gap = c->o->gap;
	/* GLPK's tolerance is relative to the incumbent (default 1e-7). */
	if (c->o->gap <= 0 && c->o->prune_tol > 0)
		io.tol_obj = NUM_EPS;
	io.tm_lim = ms_left(c);
	io.cb_func = callback;
	io.cb_info = c;
	return glp_intopt(p, &io);
}

/* The status of branch and bound that returned st. */
static enum milp_status mip_status(glp_prob *p, int st)
{
	switch (glp_mip_status(p)) {
	case GLP_OPT:
		return st == 0 ? MILP_OPTIMAL : MILP_FEASIBLE;
	case GLP_FEAS:
		return MILP_FEASIBLE;
	case GLP_NOFEAS:
		/* Proven only by a search that ended, or by the relaxation. */
		return st == 0 || st == GLP_ENOPFS || st == GLP_ENODFS ? MILP_INFEASIBLE :
									MILP_NO_SOLUTION;
	default:
		return MILP_NO_SOLUTION;
	}
}

/* The outcome of branch and bound that returned st into res: the status,
 * the incumbent when there is one, and the best bound known. 0, or -1 with
 * err set. */
static int mip_outcome(glp_prob *p, const struct glpk_ctx *c, int st, struct milp_result *res,
		       struct cm_error *err)
{
	const struct milp *m = c->m;

	res->status = mip_status(p, st);
	if (res->status == MILP_OPTIMAL || res->status == MILP_FEASIBLE) {
		res->x = malloc((size_t)m->ncols * sizeof(double) + 1);
		if (res->x == NULL)
			return cm_errorf(err, "out of memory");
		for (int j = 0; j < m->ncols; j++)
			res->x[j] = glp_mip_col_val(p, j + 1);
		res->objective = glp_mip_obj_val(p);
	}
	/* The root LP bound is always valid; at optimality the incumbent is. */
	res->bound = glp_get_obj_val(p);
	res->has_bound = 1;
	if (c->has_bound && c->bound > res->bound)
		res->bound = c->bound;
	if (res->status == MILP_OPTIMAL && res->objective > res->bound)
		res->bound = res->objective;
	return 0;
}

/* The root LP, then branch and bound. 0, or -1 with err set. */
static int solve_mip(glp_prob *p, struct glpk_ctx *c, struct milp_result *res,
		     struct cm_error *err)
{
	int st;

	if (simplex(p, c->m, c, GLP_ON, 0, res, err))
		return -1;
	if (res->status != MILP_OPTIMAL) {
		/* Infeasible, or time ran out in the root LP: no bound yet. */
		res->has_bound = 0;
		return 0;
	}
	st = intopt(p, c);
	/* A node's LP that fails (GLP_EFAIL, seen on a partition's exact
	 * memory rows) ends the search as the time limit does: the incumbent
	 * and the bounds known before it hold. */
	if (st != 0 && st != GLP_ETMLIM && st != GLP_EMIPGAP && st != GLP_ENOPFS &&
	    st != GLP_ENODFS && st != GLP_ESTOP && st != GLP_EFAIL)
		return cm_errorf(err, "glpk: branch and bound failed (code %d)", st);
	return mip_outcome(p, c, st, res, err);
}

/* The root LP, then (when mip) branch and bound. */
static int glpk_run(const struct milp *m, const struct solve_opts *o,
		    struct milp_result *res, struct cm_error *err, int mip)
{
	struct glpk_ctx c = { .o = o, .m = m, .t0 = cm_clock() };
	volatile int rc = -1;
	glp_prob *volatile p = NULL;

	c.last = c.t0;
	memset(res, 0, sizeof(*res));
	glp_term_hook(quiet_terminal, &c);
	if (setjmp(c.fail)) {
		glp_error_hook(NULL, NULL);
		glp_term_hook(quiet_terminal, NULL);
		/* After an error GLPK's environment must be freed, problem
		 * objects included. */
		glp_free_env();
		free(c.start1);
		free(c.inc);
		return cm_errorf(err, "glpk failed: %s", c.last_line);
	}
	glp_error_hook(on_glpk_error, &c);
	p = load(m);
	if (p == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (copy_start(&c, err))
		goto out;
	glp_scale_prob(p, GLP_SF_AUTO);
	rc = mip ? solve_mip(p, &c, res, err) : solve_relaxation(p, &c, res, err);
out:
	if (p)
		glp_delete_prob(p);
	glp_error_hook(NULL, NULL);
	glp_term_hook(quiet_terminal, NULL);
	free(c.start1);
	free(c.inc);
	return rc;
}

static int glpk_solve(const struct milp *m, const struct solve_opts *o,
		      struct milp_result *res, struct cm_error *err)
{
	return glpk_run(m, o, res, err, 1);
}

static int glpk_solve_lp(const struct milp *m, const struct solve_opts *o,
			 struct milp_result *res, struct cm_error *err)
{
	return glpk_run(m, o, res, err, 0);
}

const struct solver_ops solver_glpk = { "glpk", glpk_solve, glpk_solve_lp };

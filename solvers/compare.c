/* compare's policy: see compare.h. */
#include "compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/num.h"
#include "../common/size.h"
#include "../common/stop.h"

/* What compare_run carries from budget to budget. */
struct run {
	const struct graph *g;
	const struct compare_request *rq;
	struct compare_result *res;
	struct baseline_point **pts; /* [c]: every point of a point column */
	int *npts;
	double *lp_value;            /* the LP bounds solved up front, or NULL */
	int *lp_has;
	struct solve_outcome *outs;  /* [c]: the other columns at this budget */
	double floor_cost;
};

static void note(const struct run *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(const struct run *w, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (w->rq->note == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->rq->note(w->rq->ctx, msg);
}

static int emit(const struct run *w, const struct strategy_row *r, struct cm_error *err)
{
	if (w->rq->row && w->rq->row(w->rq->ctx, r))
		return cm_errorf(err, "writing a row failed");
	return 0;
}

/* 1 when the rows at a budget need the shared bound: --bound, and a column
 * without a bound of its own. */
static int needs_bound(const struct compare_request *rq)
{
	for (int c = 0; rq->bound && c < rq->ncols; c++)
		if (!(rq->columns[c]->flags & STRATEGY_BOUND))
			return 1;
	return 0;
}

/* The points of every point column, computed once: they do not depend on
 * the budget. */
static int make_points(struct run *w, struct cm_error *err)
{
	for (int c = 0; c < w->rq->ncols; c++) {
		const struct strategy *s = w->rq->columns[c];
		const struct baseline b = { s->name, s->point };

		if (s->point == NULL)
			continue;
		w->npts[c] = baseline_points(&b, w->g, &w->pts[c], err);
		if (w->npts[c] == -BASELINE_UNSUPPORTED) {
			w->res->unsupported[c] = 1;
			w->npts[c] = 0;
		} else if (w->npts[c] < 0) {
			return -1;
		}
	}
	return 0;
}

/* The LP bounds at every budget, solved up front as one sweep when the
 * rows need them and no column brings a bound of its own. */
static int lp_bounds(struct run *w, struct cm_error *err)
{
	const struct compare_request *rq = w->rq;
	struct solve_request lp = *rq->settings;

	if (!needs_bound(rq))
		return 0;
	for (int c = 0; c < rq->ncols; c++)
		if (rq->columns[c]->flags & STRATEGY_BOUND)
			return 0;
	w->lp_value = calloc((size_t)rq->nb + 1, sizeof(double));
	w->lp_has = calloc((size_t)rq->nb + 1, sizeof(int));
	if (w->lp_value == NULL || w->lp_has == NULL)
		return cm_errorf(err, "out of memory");
	note(w, "LP bounds at %d budgets", rq->nb);
	return strategy_lp_bounds(w->g, &lp, rq->budgets, rq->nb, w->lp_value, w->lp_has, err);
}

/* The columns without points at budget bi, before any row is written, so
 * that the rows of the others can use their bounds. */
static int run_solves(struct run *w, int bi, struct cm_error *err)
{
	const struct compare_request *rq = w->rq;
	char h[32];

	for (int c = 0; c < rq->ncols; c++) {
		struct solve_request one = *rq->settings;

		if (rq->columns[c]->point)
			continue;
		if (stop_requested()) {
			w->outs[c].status = STATUS_INTERRUPTED;
			continue;
		}
		one.strategy = rq->columns[c]->name;
		one.budget = rq->budgets[bi];
		one.bound = 0;
		note(w, "%s at budget %s (%d of %d)", one.strategy,
		     size_human(one.budget, h, sizeof(h)), bi + 1, rq->nb);
		if (strategy_solve(w->g, &one, &w->outs[c], err))
			return -1;
		if (w->outs[c].interrupted && w->outs[c].plan == NULL)
			strategy_set_status(&w->outs[c], STATUS_INTERRUPTED);
	}
	return 0;
}

/* The best lower bound known at budget bi: the columns', else the LP
 * relaxation's (from the sweep when there was one). 1 when *bound was
 * set, 0 when none is known (LP infeasible or out of time), -1 after an
 * error. */
static int budget_bound(struct run *w, int bi, double *bound, struct cm_error *err)
{
	struct solve_request rq = *w->rq->settings;
	struct solve_outcome lp = { 0 };
	int found = 0;
	char h[32];

	for (int c = 0; c < w->rq->ncols; c++)
		if (w->outs[c].has_lower_bound && (!found || w->outs[c].lower_bound > *bound)) {
			*bound = w->outs[c].lower_bound;
			found = 1;
		}
	if (found)
		return 1;
	if (stop_requested())
		return 0;
	if (w->lp_has) {
		*bound = w->lp_value[bi];
		return w->lp_has[bi];
	}
	rq.budget = w->rq->budgets[bi];
	note(w, "LP bound at budget %s", size_human(rq.budget, h, sizeof(h)));
	if (strategy_lp_bound(w->g, &rq, &lp, err))
		return -1;
	*bound = lp.lower_bound;
	return lp.has_lower_bound;
}

/* A point's row; bound, when not NULL, is a lower bound on the cost of any
 * plan that fits this budget. */
static void point_row(const struct run *w, struct strategy_row *r, const char *name,
		      const struct baseline_point *p, uint64_t budget, const double *bound)
{
	int fits = p->peak <= budget, proven = 0;

	*r = (struct strategy_row){ .graph = w->g->id, .strategy = name, .param = p->param,
				    .budget = budget, .feasible = fits, .has_cost = 1,
				    .cost = p->cost, .overhead = p->cost / w->floor_cost,
				    .peak = p->peak, .seconds = p->seconds,
				    .status = fits ? STATUS_FEASIBLE : STATUS_OVER_BUDGET };
	/* Without --bound, only the checkpoint-all floor, when met, is one. */
	if (bound || (fits && num_le(p->cost, w->floor_cost))) {
		r->has_lower_bound = 1;
		r->lower_bound = strategy_meet_bound(w->g, p->cost, fits,
						     fmax(bound ? *bound : w->floor_cost,
							  w->floor_cost),
						     &proven);
		if (proven)
			r->status = STATUS_OPTIMAL;
	}
}

/* Column c's rows at budget bi; its best overhead into res. */
static int column_rows(struct run *w, int c, int bi, const double *bound,
		       struct cm_error *err)
{
	const struct strategy *s = w->rq->columns[c];
	uint64_t budget = w->rq->budgets[bi];
	double *best = &w->res->best[(size_t)c * (size_t)w->rq->nb + (size_t)bi];
	struct strategy_row r;

	*best = -1;
	if (s->point && w->res->unsupported[c]) {
		r = (struct strategy_row){ .graph = w->g->id, .strategy = s->name,
					   .budget = budget, .status = STATUS_UNSUPPORTED };
		return emit(w, &r, err);
	}
	for (int k = 0; s->point && k < w->npts[c]; k++) {
		point_row(w, &r, s->name, &w->pts[c][k], budget, bound);
		if (emit(w, &r, err))
			return -1;
		if (r.feasible && (*best < 0 || r.overhead < *best))
			*best = r.overhead;
	}
	if (s->point)
		return 0;
	if (bound && !(s->flags & STRATEGY_BOUND) && w->outs[c].plan &&
	    !w->outs[c].has_lower_bound)
		strategy_set_bound(w->g, &w->outs[c], fmax(*bound, w->floor_cost));
	w->res->unsupported[c] = w->outs[c].status == STATUS_UNSUPPORTED;
	strategy_row_of_outcome(&r, w->g, s->name, budget, &w->outs[c]);
	if (r.feasible)
		*best = r.overhead;
	if (r.status == STATUS_INTERRUPTED) {
		*best = COMPARE_NOT_RUN;
		w->res->interrupted = 1;
	}
	return emit(w, &r, err);
}

/* The best bound known at budget bi into res->bound: shared, when the
 * rows had one, else the best of the columns with bounds of their own. */
static void record_bound(const struct run *w, int bi, const double *shared)
{
	double best = -1;

	if (shared)
		best = *shared;
	for (int c = 0; !shared && c < w->rq->ncols; c++)
		if ((w->rq->columns[c]->flags & STRATEGY_BOUND) && w->outs[c].has_lower_bound &&
		    w->outs[c].lower_bound > best)
			best = w->outs[c].lower_bound;
	w->res->bound[bi] = best < 0 ? -1 : fmax(best, w->floor_cost) / w->floor_cost;
}

/* The rows of budget bi after a stop request: one per column, status
 * interrupted. */
static int interrupted_rows(struct run *w, int bi, struct cm_error *err)
{
	for (int c = 0; c < w->rq->ncols; c++) {
		struct strategy_row r = { .graph = w->g->id, .strategy = w->rq->columns[c]->name,
					  .budget = w->rq->budgets[bi],
					  .status = STATUS_INTERRUPTED };

		w->res->best[(size_t)c * (size_t)w->rq->nb + (size_t)bi] = COMPARE_NOT_RUN;
		w->res->bound[bi] = -1;
		if (emit(w, &r, err))
			return -1;
	}
	w->res->interrupted = 1;
	return 0;
}

static int run_budget(struct run *w, int bi, struct cm_error *err)
{
	double bound = 0;
	int has_bound = 0, rc = -1;

	memset(w->outs, 0, (size_t)w->rq->ncols * sizeof(*w->outs));
	if (run_solves(w, bi, err))
		goto out;
	if (needs_bound(w->rq) && (has_bound = budget_bound(w, bi, &bound, err)) < 0)
		goto out;
	for (int c = 0; c < w->rq->ncols; c++)
		if (column_rows(w, c, bi, has_bound ? &bound : NULL, err))
			goto out;
	record_bound(w, bi, has_bound ? &bound : NULL);
	rc = 0;
out:
	for (int c = 0; c < w->rq->ncols; c++)
		strategy_outcome_release(&w->outs[c]);
	return rc;
}

int compare_run(const struct graph *g, const struct compare_request *rq,
		struct compare_result *res, struct cm_error *err)
{
	size_t nc = (size_t)rq->ncols;
	struct run w = { .g = g, .rq = rq, .res = res, .floor_cost = graph_total_cost(g) };
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (w.floor_cost <= 0)
		w.floor_cost = 1;
	if (strategy_check_params(rq->columns, rq->ncols, rq->settings, err))
		return -1;
	res->best = malloc(nc * (size_t)rq->nb * sizeof(double) + 1);
	res->unsupported = calloc(nc + 1, 1);
	res->bound = malloc((size_t)rq->nb * sizeof(double) + 1);
	w.pts = calloc(nc + 1, sizeof(*w.pts));
	w.npts = calloc(nc + 1, sizeof(int));
	w.outs = calloc(nc + 1, sizeof(*w.outs));
	if (!res->best || !res->unsupported || !res->bound || !w.pts || !w.npts || !w.outs) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (make_points(&w, err) || lp_bounds(&w, err))
		goto out;
	for (int bi = 0; bi < rq->nb; bi++)
		if (stop_requested() ? interrupted_rows(&w, bi, err) : run_budget(&w, bi, err))
			goto out;
	rc = 0;
out:
	for (size_t c = 0; w.pts && c < nc; c++)
		free(w.pts[c]);
	free(w.pts);
	free(w.npts);
	free(w.outs);
	free(w.lp_value);
	free(w.lp_has);
	if (rc)
		compare_result_release(res);
	return rc;
}

void compare_result_release(struct compare_result *res)
{
	free(res->best);
	free(res->unsupported);
	free(res->bound);
	memset(res, 0, sizeof(*res));
}

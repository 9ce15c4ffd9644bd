/* The paper's approximation (section 5, Algorithm 2, appendix D): the LP
 * relaxation at a budget shrunk by eps, its fractional S rounded in two
 * phases (S rounded, then the cheapest R for it), every candidate replayed
 * at the real budget. Instead of the paper's fixed eps = 0.1, a grid of eps
 * is tried (appendix D suggests a search), and each LP is rounded both
 * deterministically at thresholds across (0, 1) and at random. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/cores.h"
#include "../common/mem.h"
#include "../common/num.h"
#include "../common/stop.h"
#include "../plan/stages.h"
#include "strategy.h"
#include "memory.h"

/* eps = 0 first (its LP value is the bound), then the paper's 0.1, then
 * outward from it: a time limit that ends the search early cuts the eps
 * least likely to matter. */
static const double eps_grid[] = { 0, 0.1, 0.05, 0.2, 0.02, 0.3, 0.5 };
static const double thresholds[] = { 0.5, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9 };
#define ROUNDINGS ((int)(sizeof(thresholds) / sizeof(thresholds[0])))
#define APPROX_SAMPLES 16

/* splitmix64: a small seeded generator, the same stream on every machine. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* What the sweep's LPs feed: the roundings' best plan and the bound. */
struct sweep {
	const struct graph *g;
	const struct solve_request *rq;
	const struct remat_model *rm;
	double *sstar;
	struct stages st;
	uint64_t rng;
	int samples;
	struct plan *best;
	uint8_t *best_s;    /* the S of best */
	double best_cost, bound;
	double deadline;    /* cm_clock() at the time limit, 0 for none */
	double t0;          /* cm_clock() at the start, for progress */
	int has_bound, lp_infeasible, failed, n_lp;
	int jobs;           /* processes sharing the LPs (solve_opts.jobs) */
	const double *eps;  /* of each LP of the sweep */
	char label[64];     /* progress: the LP being solved */
	struct cm_error err;
};

/* Completes R for the S in w->st and replays the plan at the budget; keeps
 * it (and its S) as the best when it fits and is cheaper. Returns 1 when it
 * did, 0 when not, -1 with w->err set. */
static int try_stages(struct sweep *w)
{
	const struct graph *g = w->g;
	struct plan *p;
	struct sim_result r;

	stages_drop_unused(g, &w->st);
	p = plan_new();
	if (p == NULL)
		return cm_errorf(&w->err, "out of memory");
	if (plan_from_stages(g, &w->st, p, &w->err) ||
	    plan_simulate(g, p, w->rq->budget, &r, &w->err)) {
		plan_free(p);
		return -1;
	}
	if (!r.valid) {
		plan_free(p);
		return cm_errorf(&w->err, "internal error: a rounded plan is invalid: %s", r.why);
	}
	if (r.fits && (w->best == NULL || r.cost < w->best_cost)) {
		plan_free(w->best);
		w->best = p;
		w->best_cost = r.cost;
		memcpy(w->best_s, w->st.S, (size_t)g->n * (size_t)g->n);
		return 1;
	}
	plan_free(p);
	return 0;
}

/* Rounds w->sstar (at threshold, or at random when threshold < 0) into
 * w->st, then as try_stages. */
static int try_rounding(struct sweep *w, double threshold)
{
	int n = w->g->n;

	for (int t = 0; t < n; t++)
		for (int i = 0; i < n; i++) {
			double v = w->sstar[(size_t)t * (size_t)n + (size_t)i];
			double u = threshold >= 0 ? threshold :
				   (double)(next_random(&w->rng) >> 11) / 9007199254740992.0;

			STAGE_S(&w->st, t, i) = i < t && v > 0 && v >= u && v > 1e-9;
		}
	return try_stages(w);
}

int strategy_lp_relaxation(const struct graph *g, const struct solve_request *rq,
			   const struct solver_ops *ops, uint64_t shrunk, double time_left,
			   const char *label, struct remat_model *rm, struct milp_result *res,
			   struct cm_error *err)
{
	struct solve_opts so = { .time_limit = time_left, .relaxation = 1,
				 .lp_method = rq->lp_method, .label = label,
				 .progress = rq->progress, .ctx = rq->ctx,
				 .halt = rq->halt, .halt_ctx = rq->halt_ctx,
				 .memory_cap = rq->memory_limit };

	if (remat_build(g, shrunk, &rq->model, rm, err))
		return -1;
	if (solver_solve(ops, &rm->milp, &so, res, err)) {
		remat_release(rm);
		return -1;
	}
	return res->status == MILP_OPTIMAL && res->x != NULL;
}

/* 1 when the LP relaxation for a bound fits the memory; else 0, and out
 * says why it has no bound (when it says nothing else). */
static int lp_fits(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out)
{
	struct solve_outcome probe = { 0 };
	struct remat_size sz;

	remat_size(g, &rq->model, &sz);
	if (strategy_check_memory(rq, "the LP for the bound", &sz, 1, &probe))
		return 1;
	if (out->why[0] == '\0')
		snprintf(out->why, sizeof(out->why), "no bound: %.400s", probe.why);
	return 0;
}

int strategy_lp_bound(const struct graph *g, const struct solve_request *rq,
		      struct solve_outcome *out, struct cm_error *err)
{
	const struct solver_ops *ops = strategy_backend(rq, err);
	struct milp_result res = { 0 };
	struct remat_model rm;
	int got;

	if (ops == NULL)
		return -1;
	if (rq->budget < graph_lower_bound(g) || !lp_fits(g, rq, out))
		return 0;
	got = strategy_lp_relaxation(g, rq, ops, rq->budget, rq->time_limit,
				     "LP relaxation for the bound", &rm, &res, err);
	if (got < 0)
		return -1;
	strategy_set_model(out, &rm.milp);
	if (got) {
		double bound = fmax(res.objective, graph_total_cost(g));

		if (!out->has_lower_bound || bound > out->lower_bound)
			strategy_set_bound(g, out, bound);
	}
	milp_result_release(&res);
	remat_release(&rm);
	return 0;
}


/* The progress label once k LPs are done. */
static void name_lp(struct sweep *w, int k)
{
	if (w->jobs > 1)
		snprintf(w->label, sizeof(w->label), "LP relaxations, %d at a time: %d of %d done",
			 w->jobs, k, w->n_lp);
	else
		snprintf(w->label, sizeof(w->label), "LP relaxation %d of %d (eps %g)", k + 1,
			 w->n_lp, w->eps[k]);
}

/* How many processes share a sweep's n_lp LPs: the cores (at most
 * --threads), as many as the memory holds (each holds its own copy of the
 * solver's model: remat_bytes; 9.6 GB for the 46.8 million
 * nonzeros of random_layered_n1000), 80% of it at most. LPs solved from
 * scratch (fresh, or a large model's) lose nothing when shared; a small
 * model's are re-solved warm in well under a second, by one process. */
static int sweep_jobs(const struct milp *m, const struct solve_request *rq, int n_lp, int fresh)
{
	double room = 0.8 * (double)mem_budget(rq->memory_limit);
	double held = remat_bytes((uint64_t)m->nnz, 1, 1) -
		      remat_bytes((uint64_t)m->nnz, 1, 0);
	int jobs = cores_online();

	if (!fresh && m->nnz <= SWEEP_LARGE_NNZ)
		return 1;
	if (rq->threads > 0 && rq->threads < jobs)
		jobs = rq->threads;
	if (n_lp < jobs)
		jobs = n_lp;
	if (room > 0)
		while (jobs > 1 && (double)jobs * held > room)
			jobs--;
	return jobs;
}

/* Sets so to sweep the budget of rm: its U columns, whose upper bound it
 * is. Returns their list (so->sweep_cols), malloc'd, or NULL when out of
 * memory. */
static int *sweep_budget(const struct graph *g, const struct remat_model *rm,
			 struct solve_opts *so)
{
	int *cols = malloc(((size_t)g->n * (size_t)g->n + 1) * sizeof(int));

	so->n_sweep_cols = 0;
	for (size_t c = 0; cols && c < (size_t)g->n * (size_t)g->n; c++)
		if (rm->u[c] >= 0)
			cols[so->n_sweep_cols++] = rm->u[c];
	so->sweep_cols = cols;
	return cols;
}

/* What strategy_lp_bounds' sweep fills: the bound at budgets[order[k]]
 * from its k-th LP. */
struct bounds {
	const struct graph *g;
	const int *order;
	double *bound;
	int *has, n;
	char label[64];
};

static int on_bound(void *ctx, int k, const struct milp_result *r)
{
	struct bounds *b = ctx;

	if (r->status == MILP_OPTIMAL) {
		b->bound[b->order[k]] = graph_round_bound(b->g, fmax(r->objective,
								 graph_total_cost(b->g)));
		b->has[b->order[k]] = 1;
	}
	snprintf(b->label, sizeof(b->label), "LP bounds: %d of %d done", k + 1, b->n);
	return 0;
}

int strategy_lp_bounds(const struct graph *g, const struct solve_request *rq,
		       const uint64_t *budgets, int n, double *bound, int *has,
		       struct cm_error *err)
{
	const struct solver_ops *ops = strategy_backend(rq, err);
	struct bounds b = { .g = g, .bound = bound, .has = has };
	struct solve_opts so = { .relaxation = 1, .lp_method = rq->lp_method, .on_lp = on_bound,
				 .lp_ctx = &b, .label = b.label, .progress = rq->progress,
				 .ctx = rq->ctx, .memory_cap = rq->memory_limit };
	uint64_t lb = graph_lower_bound(g);
	int *order = malloc((size_t)n * sizeof(int) + 1), *cols = NULL, rc = -1;
	double *ub = malloc((size_t)n * sizeof(double) + 1);
	struct milp_result res = { 0 };
	struct solve_outcome refused = { 0 };
	struct remat_model rm;

	if (ops == NULL || order == NULL || ub == NULL) {
		if (ops != NULL)
			cm_errorf(err, "out of memory");
		goto out;
	}
	/* The budgets that a plan may fit, largest first (insertion sort: a
	 * few dozen at most). */
	for (int k = 0, at; k < n; k++) {
		has[k] = 0;
		if (budgets[k] < lb)
			continue;
		for (at = b.n++; at > 0 && budgets[order[at - 1]] < budgets[k]; at--)
			order[at] = order[at - 1];
		order[at] = k;
	}
	if (b.n == 0 || !lp_fits(g, rq, &refused)) {
		rc = 0;
		goto out;
	}
	if (remat_build(g, budgets[order[0]], &rq->model, &rm, err))
		goto out;
	for (int k = 0; k < b.n; k++)
		ub[k] = remat_u_bound(&rm, g, budgets[order[k]]);
	b.order = order;
	so.sweep_ub = ub;
	so.n_sweep = b.n;
	so.time_limit = rq->time_limit > 0 ? rq->time_limit * b.n : 0;
	/* Budgets far apart: a warm re-solve costs more than a fresh one
	 * (MobileNet, six budgets from the lower bound to the peak, one
	 * process, beside another job: 44.4 s warm, 32.6 s fresh). */
	so.sweep_fresh = 1;
	so.jobs = sweep_jobs(&rm.milp, rq, b.n, 1);
	snprintf(b.label, sizeof(b.label), "LP bounds: 0 of %d done", b.n);
	if ((cols = sweep_budget(g, &rm, &so)) == NULL)
		cm_errorf(err, "out of memory");
	else if (solver_solve(ops, &rm.milp, &so, &res, err) == 0)
		rc = 0;
	milp_result_release(&res);
	remat_release(&rm);
out:
	free(order);
	free(ub);
	free(cols);
	return rc;
}

struct candidate {
	double v;
	size_t at;
};

static int by_value_desc(const void *a, const void *b)
{
	double x = ((const struct candidate *)a)->v, y = ((const struct candidate *)b)->v;

	return x > y ? -1 : x < y;
}

/* After an LP's roundings found a new best plan: a rounding tends to
 * recompute more than it must, so values are kept longer, one at a time.
 * For each (t, i) where the LP has S*(t,i) > 0 and the plan does not keep
 * i, largest S* first, i is kept into stage t and the stages before it
 * back to one that already keeps i (or to i's own stage; keeping it into t
 * alone mostly moves its recomputation to stage t - 1); the change
 * stays when the replayed plan is cheaper and still fits. Stops at the
 * time limit. 0, or -1 with w->err set. */
static int improve(struct sweep *w)
{
	size_t n = (size_t)w->g->n, nc = 0;
	struct candidate *c = malloc(n * n * sizeof(*c) + 1);

	if (c == NULL)
		return cm_errorf(&w->err, "out of memory");
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < t; i++)
			if (w->sstar[t * n + i] > 1e-9 && !w->best_s[t * n + i])
				c[nc++] = (struct candidate){ w->sstar[t * n + i], t * n + i };
	qsort(c, nc, sizeof(*c), by_value_desc);
	for (size_t k = 0; k < nc && (w->deadline <= 0 || cm_clock() < w->deadline) &&
			   !stop_requested(); k++) {
		if (w->best_s[c[k].at])
			continue; /* kept since, by an earlier change */
		memcpy(w->st.S, w->best_s, n * n);
		for (size_t t = c[k].at / n, i = c[k].at % n, u = t;
		     u > i && (u == t || !w->best_s[u * n + i]); u--)
			w->st.S[u * n + i] = 1;
		if (try_stages(w) < 0) {
			free(c);
			return -1;
		}
	}
	free(c);
	return 0;
}

/* solve_opts.on_lp: rounds the k-th LP of the grid; stops the sweep after
 * an error or once a plan meets the bound (none can do better). */
static int on_lp(void *ctx, int k, const struct milp_result *r)
{
	struct sweep *w = ctx;
	int improved = 0;

	if (k == 0) {
		/* The relaxation at the full budget bounds every plan. */
		w->has_bound = r->status == MILP_OPTIMAL;
		w->bound = r->objective;
		w->lp_infeasible = r->status == MILP_INFEASIBLE;
	}
	if (k + 1 < w->n_lp)
		name_lp(w, k + 1);
	if (r->status != MILP_OPTIMAL || r->x == NULL)
		return 0;
	remat_fractional_s(w->rm, r->x, w->sstar);
	/* After a stop request, only until one rounding fits. */
	for (int i = 0; i < ROUNDINGS + w->samples && !w->failed &&
			!(stop_requested() && w->best); i++) {
		int got = try_rounding(w, i < ROUNDINGS ? thresholds[i] : -1);

		w->failed = got < 0;
		improved |= got > 0;
	}
	if (improved && !w->failed)
		w->failed = improve(w) != 0;
	/* Each cheaper plan and the bound as they come, not only at the
	 * end: auto's stall stop counts them as gains. */
	if ((improved || k == 0) && w->rq->progress)
		w->rq->progress(w->rq->ctx, &(struct solve_progress){
			.elapsed = cm_clock() - w->t0,
			.incumbent = w->best ? w->best_cost : 0, .has_incumbent = w->best != NULL,
			.bound = w->bound, .has_bound = w->has_bound, .label = w->label });
	return w->failed || stop_requested() ||
	       (w->best && w->has_bound && num_le(w->best_cost, graph_round_bound(w->g, w->bound)));
}

/* The eps of the grid whose shrunk budget a plan may fit, and the U bound
 * of each, into eps and ub; returns their count. */
static int eps_sweep(const struct graph *g, const struct remat_model *rm, uint64_t budget,
		     double *eps, double *ub)
{
	uint64_t lb = graph_lower_bound(g), room = budget - g->fixed_memory;
	int n = 0;

	for (size_t e = 0; e < sizeof(eps_grid) / sizeof(eps_grid[0]); e++) {
		uint64_t shrunk = g->fixed_memory + (uint64_t)floor((double)room * (1 - eps_grid[e]));

		if (shrunk < lb)
			continue; /* no plan fits a budget this small */
		eps[n] = eps_grid[e];
		ub[n++] = remat_u_bound(rm, g, shrunk);
	}
	return n;
}

/* What the sweep found, into out: the best rounding and the bound, or why
 * there is no plan. 0, or -1 with err set. */
static int take_best(struct sweep *w, const struct milp_result *res,
		     struct solve_outcome *out, struct cm_error *err)
{
	const struct graph *g = w->g;

	if (w->best != NULL) {
		struct plan *best = w->best;

		w->best = NULL;
		if (strategy_adopt(g, "approx", w->rq->budget, best, out, err))
			return -1;
		snprintf(out->plan->solver, sizeof(out->plan->solver), "%s", out->solver);
		out->objective = out->sim.cost;
		strategy_set_status(out, STATUS_FEASIBLE);
		if (w->has_bound)
			strategy_set_bound(g, out, w->bound);
	} else if (w->lp_infeasible) {
		strategy_model_has_none(g, w->rq, w->deadline > 0 ? fmax(0, w->deadline - cm_clock()) : STRATEGY_TIME_LIMIT,
					"the LP relaxation of the stage model is infeasible", out);
	} else {
		if (w->has_bound)
			strategy_set_bound(g, out, w->bound);
		strategy_set_status(out, STATUS_NO_PLAN);
		if (!stop_requested())
			snprintf(out->why, sizeof(out->why), "no rounding of the LP fits the budget%s",
				 res->status == MILP_NO_SOLUTION ? " within the time limit" : "");
	}
	return 0;
}

int strategy_run_approx(const struct strategy *s, const struct graph *g,
			const struct solve_request *rq, struct solve_outcome *out,
			struct cm_error *err)
{
	const struct solver_ops *ops = strategy_backend(rq, err);
	struct sweep w = { .g = g, .rq = rq, .rng = rq->seed,
			   .samples = rq->samples > 0 ? rq->samples : APPROX_SAMPLES };
	uint64_t samples = 0;
	struct solve_opts so = { .time_limit = rq->time_limit, .relaxation = 1,
				 .lp_method = rq->lp_method, .on_lp = on_lp, .lp_ctx = &w,
				 .label = w.label, .progress = rq->progress, .ctx = rq->ctx,
				 .halt = rq->halt, .halt_ctx = rq->halt_ctx,
				 .memory_cap = rq->memory_limit };
	double ub[sizeof(eps_grid) / sizeof(eps_grid[0])], eps[sizeof(eps_grid) / sizeof(eps_grid[0])];
	struct milp_result res = { 0 };
	struct remat_model rm;
	struct remat_size sz;
	int *ucols = NULL, rc = -1;

	(void)s;
	if (ops == NULL)
		return -1;
	w.rng = strategy_param_whole(rq, "seed", w.rng);
	samples = strategy_param_whole(rq, "samples", samples);
	if (w.rng == 0)
		w.rng = 1;
	if (samples > 0)
		w.samples = (int)samples;
	snprintf(out->solver, sizeof(out->solver), "%s", ops->name);
	remat_size(g, &rq->model, &sz);
	if (!strategy_check_memory(rq, "the LP", &sz, 1, out))
		return 0;
	if (remat_build(g, rq->budget, &rq->model, &rm, err))
		return -1;
	w.rm = &rm;
	strategy_set_model(out, &rm.milp);
	/* The grid's LPs differ only in the bound of the U columns, so one
	 * model is solved once and re-solved from its basis for each eps. */
	w.n_lp = so.n_sweep = eps_sweep(g, &rm, rq->budget, eps, ub);
	so.sweep_ub = ub;
	w.eps = eps;
	w.deadline = strategy_deadline(rq);
	w.t0 = cm_clock();
	so.jobs = w.jobs = sweep_jobs(&rm.milp, rq, so.n_sweep, so.sweep_fresh);
	name_lp(&w, 0);
	w.sstar = malloc((size_t)g->n * (size_t)g->n * sizeof(double) + 1);
	w.best_s = malloc((size_t)g->n * (size_t)g->n + 1);
	ucols = sweep_budget(g, &rm, &so);
	if (w.sstar == NULL || w.best_s == NULL || ucols == NULL || stages_init(&w.st, g->n, err)) {
		if (w.sstar == NULL || w.best_s == NULL || ucols == NULL)
			cm_errorf(err, "out of memory");
		goto out;
	}
	if (solver_solve(ops, &rm.milp, &so, &res, err))
		goto out;
	if (w.failed) {
		*err = w.err;
		goto out;
	}
	rc = take_best(&w, &res, out, err);
out:
	milp_result_release(&res);
	remat_release(&rm);
	plan_free(w.best);
	stages_release(&w.st);
	free(w.sstar);
	free(w.best_s);
	free(ucols);
	return rc;
}

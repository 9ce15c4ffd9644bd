#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../plan/sim.h"
#include "remat.h"

/* Builder state: the model, the incumbent, and a row under construction
 * whose constant terms (entries fixed at the incumbent's value) are summed
 * apart and moved to the bounds. */
struct wbuild {
	struct window_model *wm;
	const struct graph *g;
	const struct stages *inc;
	int ne;        /* edges */
	int *u;        /* column of U(t,k) at [(t - a) * n + k], -1 none */
	int *f;        /* column of FREE(t,e) at [(t - a) * ne + e], -1 none */
	struct milp_row row; /* the row */
	double c;      /* its constant part */
	int slack;     /* memory rows with a slack per stage (window_spec) */
	double deadline; /* window_spec's */
	int late;      /* 1 once the deadline has passed */
};

#define WIN(wm, a_, t, i) ((size_t)((t) - (a_)) * (size_t)(wm)->n + (size_t)(i))

void window_release(struct window_model *wm)
{
	milp_release(&wm->milp);
	free(wm->r);
	free(wm->s);
	free(wm->sigma);
	free(wm->start);
	memset(wm, 0, sizeof(*wm));
}

/* 1 once the build's deadline has passed; checked once a stage, so that
 * a window over thousands of stages stops in time. */
static int late(struct wbuild *wb)
{
	if (!wb->late && wb->deadline > 0 && cm_clock() >= wb->deadline)
		wb->late = 1;
	return wb->late;
}

/* R(t,i) for a <= t <= b: its column, or -1 with the constant in *c. */
static int r_term(const struct wbuild *wb, int t, int i, double *c)
{
	const struct window_model *wm = wb->wm;
	int col = wm->r[WIN(wm, wm->a, t, i)];

	*c = col < 0 ? STAGE_R(wb->inc, t, i) : 0;
	return col;
}

/* S(t,i) for a <= t <= b + 1 (0 past the last stage). */
static int s_term(const struct wbuild *wb, int t, int i, double *c)
{
	const struct window_model *wm = wb->wm;
	int col = -1;

	if (t >= wm->n || i >= t) {
		*c = 0;
		return -1;
	}
	if (t <= wm->b)
		col = wm->s[WIN(wm, wm->a, t, i)];
	*c = col < 0 ? STAGE_S(wb->inc, t, i) : 0;
	return col;
}

static void add(struct wbuild *wb, int col, double cval, double coef)
{
	if (col < 0)
		wb->c += coef * cval;
	else
		milp_row_add(&wb->row, col, coef);
}

static void add_r(struct wbuild *wb, int t, int i, double coef)
{
	double c;
	int col = r_term(wb, t, i, &c);

	add(wb, col, c, coef);
}

static void add_s(struct wbuild *wb, int t, int i, double coef)
{
	double c;
	int col = s_term(wb, t, i, &c);

	add(wb, col, c, coef);
}

/* Emits lo <= row + c <= hi; a row of constants only is dropped (the
 * incumbent's constants satisfy it). */
static void emit(struct wbuild *wb, double lo, double hi)
{
	milp_row_emit(&wb->wm->milp, &wb->row, lo <= -MILP_INF ? lo : lo - wb->c,
		      hi >= MILP_INF ? hi : hi - wb->c);
	wb->c = 0;
}

/* 1 when node k may be computed in stage t: R(t,k) is a column or the
 * constant 1. */
static int relevant(const struct wbuild *wb, int t, int k)
{
	double c;

	return r_term(wb, t, k, &c) >= 0 || c > 0.5;
}

static void add_decision_columns(struct wbuild *wb, const struct window_spec *w)
{
	struct window_model *wm = wb->wm;
	const struct graph *g = wb->g;
	char name[64];

	for (int t = w->a; t <= w->b && !late(wb); t++)
		for (int i = 0; i < t; i++) {
			int free_i = graph_nusers(g, i) > 0 && (!w->free || w->free[i]);

			if (free_i) {
				snprintf(name, sizeof(name), "R_%d_%d", t, i);
				wm->r[WIN(wm, w->a, t, i)] =
					milp_add_col(&wm->milp, name, 0, 1, g->nodes[i].cost, 1);
			} else {
				wm->fixed_cost += STAGE_R(wb->inc, t, i) ? g->nodes[i].cost : 0;
			}
			if (free_i && t > w->a) {
				snprintf(name, sizeof(name), "S_%d_%d", t, i);
				wm->s[WIN(wm, w->a, t, i)] = milp_add_col(&wm->milp, name, 0, 1, 0, 1);
			}
		}
	for (int t = w->a; t <= w->b && !wb->late; t++) {
		wm->fixed_cost += g->nodes[t].cost; /* R(t,t) */
		for (int i = 0; i <= t; i++)
			wm->inc_cost += STAGE_R(wb->inc, t, i) ? g->nodes[i].cost : 0;
	}
}

/* U at every node the stage may compute, FREE for every input of such a
 * node but the stage's last, unless a constant hazard forbids it. */
static void add_memory_columns(struct wbuild *wb, double ubudget)
{
	struct window_model *wm = wb->wm;
	const struct graph *g = wb->g;
	char name[64];

	for (int t = wm->a; t <= wm->b && !late(wb); t++)
		for (int k = 0; k <= t; k++) {
			if (!relevant(wb, t, k))
				continue;
			snprintf(name, sizeof(name), "U_%d_%d", t, k);
			wb->u[WIN(wm, wm->a, t, k)] =
				milp_add_col(&wm->milp, name, 0, wb->slack ? MILP_INF : ubudget, 0, 0);
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1] && k < t; e++) {
				int i = g->deps[e], blocked;
				double c;

				blocked = s_term(wb, t + 1, i, &c) < 0 && c > 0.5;
				for (int q = g->user_off[i]; q < g->user_off[i + 1] && !blocked; q++) {
					int j = g->users[q];

					if (j > k && j <= t && r_term(wb, t, j, &c) < 0 && c > 0.5)
						blocked = 1;
				}
				if (blocked)
					continue;
				snprintf(name, sizeof(name), "F_%d_%d_%d", t, i, k);
				wb->f[(size_t)(t - wm->a) * (size_t)wb->ne + (size_t)e] =
					milp_add_col(&wm->milp, name, 0, 1, 0, 1);
			}
		}
}

/* (1b), (1c) and the two usefulness rows, as remat.c, for the window's
 * stages; (1c) also into stage b + 1, whose S is constant. */
static void add_dependency_rows(struct wbuild *wb)
{
	struct window_model *wm = wb->wm;
	const struct graph *g = wb->g;

	for (int t = wm->a; t <= wm->b && !late(wb); t++) {
		for (int k = 0; k <= t; k++) {
			if (!relevant(wb, t, k))
				continue;
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
				add_r(wb, t, k, 1);
				add_r(wb, t, g->deps[e], -1);
				add_s(wb, t, g->deps[e], -1);
				emit(wb, -MILP_INF, 0);
			}
		}
		for (int i = 0; i < t + 1 && t + 1 < wm->n; i++) {
			/* Keeping into t + 1 needs i at the end of t. */
			add_s(wb, t + 1, i, 1);
			add_r(wb, t, i, -1);
			add_s(wb, t, i, -1);
			emit(wb, -MILP_INF, 0);
		}
		for (int i = 0; i < t; i++)
			for (int pass = 0; pass < 2; pass++) {
				double c;
				int col = pass ? s_term(wb, t, i, &c) : r_term(wb, t, i, &c);

				/* Only rows on a decision: the constants are the
				 * incumbent's, which needs no reduction. */
				if (col < 0)
					continue;
				add(wb, col, 0, 1);
				for (int e = g->user_off[i]; e < g->user_off[i + 1]; e++) {
					int j = g->users[e];

					if (j <= t && (pass || j > i))
						add_r(wb, t, j, -1);
				}
				add_s(wb, t + 1, i, -1);
				emit(wb, -MILP_INF, 0);
			}
	}
}

/* (2), (3) over the nodes the stage may compute, and the hazard rows
 * (7c) of each FREE column. */
static void add_memory_rows(struct wbuild *wb)
{
	struct window_model *wm = wb->wm;
	const struct graph *g = wb->g;

	for (int t = wm->a; t <= wm->b && !late(wb); t++) {
		int prev = -1;

		for (int k = 0; k <= t; k++) {
			int uc = wb->u[WIN(wm, wm->a, t, k)];

			if (uc < 0)
				continue;
			add(wb, uc, 0, 1);
			add_r(wb, t, k, -(double)(g->nodes[k].memory / wm->unit));
			if (prev < 0) {
				for (int i = 0; i < t; i++)
					add_s(wb, t, i, -(double)(g->nodes[i].memory / wm->unit));
			} else {
				add(wb, wb->u[WIN(wm, wm->a, t, prev)], 0, -1);
				for (int e = g->dep_off[prev]; e < g->dep_off[prev + 1]; e++)
					add(wb, wb->f[(size_t)(t - wm->a) * (size_t)wb->ne + (size_t)e], 0,
					    (double)(g->nodes[g->deps[e]].memory / wm->unit));
			}
			emit(wb, 0, 0);
			prev = k;
		}
		for (int k = 0; k < t; k++)
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
				int fc = wb->f[(size_t)(t - wm->a) * (size_t)wb->ne + (size_t)e];
				int i = g->deps[e];

				if (fc < 0)
					continue;
				add(wb, fc, 0, 1);
				add_r(wb, t, k, -1);
				emit(wb, -MILP_INF, 0);
				add(wb, fc, 0, 1);
				add_s(wb, t + 1, i, 1);
				emit(wb, -MILP_INF, 1);
				for (int q = g->user_off[i]; q < g->user_off[i + 1]; q++) {
					int j = g->users[q];

					if (j > k && j <= t && relevant(wb, t, j)) {
						add(wb, fc, 0, 1);
						add_r(wb, t, j, 1);
						emit(wb, -MILP_INF, 1);
					}
				}
			}
	}
}

/* Slack windows: sigma_t >= U(t,k) - budget at every U of stage t,
 * weighted above every cost the window can change. */
static void add_slack_rows(struct wbuild *wb)
{
	struct window_model *wm = wb->wm;
	char name[64];

	wm->weight = 1;
	for (int j = 0; j < wm->milp.ncols; j++)
		wm->weight += wm->milp.obj[j];
	for (int t = wm->a; t <= wm->b; t++) {
		int sc = -1;

		for (int k = 0; k <= t; k++) {
			int uc = wb->u[WIN(wm, wm->a, t, k)];

			if (uc < 0)
				continue;
			if (sc < 0) {
				snprintf(name, sizeof(name), "SIGMA_%d", t);
				sc = milp_add_col(&wm->milp, name, 0, MILP_INF, wm->weight, 0);
				wm->sigma[t - wm->a] = sc;
			}
			add(wb, uc, 0, 1);
			add(wb, sc, 0, -1);
			emit(wb, -MILP_INF, wm->ubudget);
		}
	}
}

/* The incumbent as a point: R, S as they are, FREE by its definition (5),
 * U by recurrence (3), as remat_point. */
static void fill_start(struct wbuild *wb)
{
	struct window_model *wm = wb->wm;
	const struct graph *g = wb->g;
	const struct stages *st = wb->inc;
	double *x = wm->start;

	for (int t = wm->a; t <= wm->b; t++) {
		int prev = -1;
		double u = 0, umax = 0;

		for (int i = 0; i < t; i++) {
			int rc = wm->r[WIN(wm, wm->a, t, i)], sc = wm->s[WIN(wm, wm->a, t, i)];

			if (rc >= 0)
				x[rc] = STAGE_R(st, t, i);
			if (sc >= 0)
				x[sc] = STAGE_S(st, t, i);
			if (STAGE_S(st, t, i))
				u += (double)(g->nodes[i].memory / wm->unit);
		}
		for (int k = 0; k <= t; k++) {
			int uc = wb->u[WIN(wm, wm->a, t, k)];

			if (uc < 0)
				continue;
			if (prev >= 0)
				for (int e = g->dep_off[prev]; e < g->dep_off[prev + 1]; e++) {
					int fc = wb->f[(size_t)(t - wm->a) * (size_t)wb->ne + (size_t)e];

					if (fc >= 0 && x[fc] > 0.5)
						u -= (double)(g->nodes[g->deps[e]].memory / wm->unit);
				}
			if (STAGE_R(st, t, k))
				u += (double)(g->nodes[k].memory / wm->unit);
			x[uc] = u;
			umax = u > umax ? u : umax;
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1] && k < t; e++) {
				int fc = wb->f[(size_t)(t - wm->a) * (size_t)wb->ne + (size_t)e];
				int i = g->deps[e], later = 0;

				if (fc < 0 || !STAGE_R(st, t, k) ||
				    (t + 1 < st->n && STAGE_S(st, t + 1, i)))
					continue;
				for (int q = g->user_off[i]; q < g->user_off[i + 1]; q++) {
					int j = g->users[q];

					later |= j > k && j <= t && STAGE_R(st, t, j);
				}
				x[fc] = !later;
			}
			prev = k;
		}
		if (wm->sigma && wm->sigma[t - wm->a] >= 0)
			x[wm->sigma[t - wm->a]] = umax > wm->ubudget ? umax - wm->ubudget : 0;
	}
	wm->start_ok = milp_violation(&wm->milp, x) <= 1e-9;
}

int window_build(const struct graph *g, uint64_t budget, const struct stages *inc,
		 const struct window_spec *w, struct window_model *wm,
		 struct cm_error *err)
{
	struct wbuild wb = { .wm = wm, .g = g, .inc = inc, .ne = g->n_edges, .slack = w->slack,
			     .deadline = w->deadline };
	size_t cells, fcells;
	int rc = -1;

	memset(wm, 0, sizeof(*wm));
	milp_init(&wm->milp);
	if (w->a < 0 || w->a > w->b || w->b >= g->n || inc->n != g->n) {
		cm_errorf(err, "window %d..%d out of range", w->a, w->b);
		goto out;
	}
	if (budget < g->fixed_memory) {
		cm_errorf(err, "budget below fixed memory");
		goto out;
	}
	if (late(&wb)) {
		rc = 1;
		goto out;
	}
	wm->n = g->n;
	wm->a = w->a;
	wm->b = w->b;
	cells = (size_t)(w->b - w->a + 1) * (size_t)g->n;
	fcells = (size_t)(w->b - w->a + 1) * (size_t)g->n_edges + 1;
	wm->r = malloc(cells * sizeof(int));
	wm->s = malloc(cells * sizeof(int));
	wb.u = malloc(cells * sizeof(int));
	wb.f = malloc(fcells * sizeof(int));
	if (w->slack) {
		wm->sigma = malloc((size_t)(w->b - w->a + 1) * sizeof(int));
		for (int t = 0; wm->sigma && t <= w->b - w->a; t++)
			wm->sigma[t] = -1;
	}
	if (!wm->r || !wm->s || !wb.u || !wb.f || (w->slack && !wm->sigma)) {
		cm_errorf(err, "out of memory building window %d..%d", w->a, w->b);
		goto out;
	}
	memset(wm->r, 0xff, cells * sizeof(int));
	memset(wm->s, 0xff, cells * sizeof(int));
	memset(wb.u, 0xff, cells * sizeof(int));
	memset(wb.f, 0xff, fcells * sizeof(int));
	wm->unit = remat_unit(g);
	wm->ubudget = (double)((budget - g->fixed_memory) / wm->unit);
	add_decision_columns(&wb, w);
	add_memory_columns(&wb, wm->ubudget);
	add_dependency_rows(&wb);
	add_memory_rows(&wb);
	if (w->slack && !wb.late)
		add_slack_rows(&wb);
	if (wb.late) {
		rc = 1;
		goto out;
	}
	if (milp_ok(&wm->milp, err))
		goto out;
	wm->start = calloc((size_t)wm->milp.ncols + 1, sizeof(double));
	if (wm->start == NULL) {
		cm_errorf(err, "out of memory building window %d..%d", w->a, w->b);
		goto out;
	}
	fill_start(&wb);
	rc = 0;
out:
	free(wb.u);
	free(wb.f);
	milp_row_release(&wb.row);
	if (rc)
		window_release(wm);
	return rc;
}

double window_cells(const struct graph *g, const struct window_spec *w)
{
	return (double)(w->b - w->a + 1) * (3.0 * g->n + g->n_edges);
}

void window_extract(const struct window_model *wm, const double *x, struct stages *st)
{
	for (int t = wm->a + 1; t <= wm->b; t++)
		for (int i = 0; i < t; i++) {
			int col = wm->s[WIN(wm, wm->a, t, i)];

			if (col >= 0)
				STAGE_S(st, t, i) = x[col] > 0.5;
		}
}

/* The plan of a window's solution x spliced into a copy of inc: S of x,
 * R completed, unused S dropped, replayed against budget. Returns 0 with
 * *trial (init'ed here) and *p (a new plan, with its replayed cost and
 * peak) set, or -1 with err set. */
static int splice_trial(const struct graph *g, uint64_t budget, const struct window_model *wm,
			const double *x, const struct stages *inc, struct stages *trial,
			struct plan **p, struct sim_result *sim, struct cm_error *err)
{
	size_t cells = (size_t)g->n * (size_t)g->n;

	*p = NULL;
	if (stages_init(trial, g->n, err))
		return -1;
	memcpy(trial->S, inc->S, cells);
	window_extract(wm, x, trial);
	stages_drop_unused(g, trial);
	*p = plan_new();
	if (*p == NULL) {
		stages_release(trial);
		return cm_errorf(err, "out of memory");
	}
	if (plan_from_stages(g, trial, *p, err) || plan_simulate(g, *p, budget, sim, err)) {
		plan_free(*p);
		*p = NULL;
		stages_release(trial);
		return -1;
	}
	(*p)->cost = sim->cost;
	(*p)->peak = sim->peak;
	(*p)->budget = budget;
	return 0;
}

/* Makes the trial the incumbent: its stages into inc, its plan into
 * *plan (the old one freed, its labels kept). */
static void splice_adopt(const struct graph *g, struct stages *trial, struct plan *p,
			 struct stages *inc, struct plan **plan)
{
	size_t cells = (size_t)g->n * (size_t)g->n;

	memcpy(p->strategy, (*plan)->strategy, sizeof(p->strategy));
	memcpy(p->solver, (*plan)->solver, sizeof(p->solver));
	plan_free(*plan);
	*plan = p;
	memcpy(inc->R, trial->R, cells);
	memcpy(inc->S, trial->S, cells);
}

/* Splices the solution into a copy of inc, completes it and replays it;
 * on a valid, fitting, cheaper plan swaps it into inc and *plan. Returns 1
 * when accepted, 0 when not, -1 with err set. */
static int splice(const struct graph *g, uint64_t budget, const struct window_model *wm,
		  const double *x, struct stages *inc, struct plan **plan,
		  struct cm_error *err)
{
	struct stages trial = { 0 };
	struct plan *p;
	struct sim_result sim;
	int rc = 0;

	if (splice_trial(g, budget, wm, x, inc, &trial, &p, &sim, err))
		return -1;
	if (sim.valid && sim.fits && sim.peak <= budget && num_lt(sim.cost, (*plan)->cost)) {
		splice_adopt(g, &trial, p, inc, plan);
		p = NULL;
		rc = 1;
	}
	plan_free(p);
	stages_release(&trial);
	return rc;
}

double window_overflow(const struct graph *g, const struct plan *p, uint64_t budget,
		       double *worst)
{
	uint64_t live = g->fixed_memory, peak = 0;
	double sum = 0, max = 0;
	int stage = -1;

	for (int k = 0; k <= p->n; k++) {
		/* A stage's peak is complete when the next stage begins. */
		if (k == p->n || p->steps[k].stage != stage) {
			if (peak > budget) {
				sum += (double)(peak - budget);
				max = (double)(peak - budget) > max ? (double)(peak - budget) : max;
			}
			peak = 0;
			if (k == p->n)
				break;
			stage = p->steps[k].stage;
		}
		if (p->steps[k].op == PLAN_COMPUTE) {
			live += g->nodes[p->steps[k].node].memory;
			peak = live > peak ? live : peak;
		} else {
			live -= g->nodes[p->steps[k].node].memory;
		}
	}
	if (worst)
		*worst = max;
	return sum;
}

/* window_repair's splice: accepted when the replay is valid and has less
 * overflow, or as little at a lower cost. 1 accepted, 0 not, -1 error. */
static int splice_repair(const struct graph *g, uint64_t budget, const struct window_model *wm,
			 const double *x, struct stages *inc, struct plan **plan,
			 double *overflow, struct cm_error *err)
{
	struct stages trial = { 0 };
	struct plan *p;
	struct sim_result sim;
	double over;
	int rc = 0;

	if (splice_trial(g, budget, wm, x, inc, &trial, &p, &sim, err))
		return -1;
	over = window_overflow(g, p, budget, NULL);
	if (sim.valid && (num_lt(over, *overflow) ||
			  (num_le(over, *overflow) && num_lt(sim.cost, (*plan)->cost)))) {
		splice_adopt(g, &trial, p, inc, plan);
		*overflow = over;
		p = NULL;
		rc = 1;
	}
	plan_free(p);
	stages_release(&trial);
	return rc;
}

/* window_solve's second half, the window built: solves it from the
 * incumbent, and splices a better solution in. 0 (wr says what came of
 * it; a backend that failed or died is WINDOW_CRASHED, err says what
 * happened), or -1 with err set. */
static int solve_built(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		       struct solve_opts *so, struct window_model *wm, struct stages *inc,
		       struct plan **plan, double *overflow, struct window_result *wr,
		       struct milp_result *res, struct cm_error *err)
{
	/* What turns the window's objective into the plan's cost (nothing
	 * with slack: that objective is not a cost), and the incumbent's
	 * value of it. */
	double offset = overflow ? 0 : wm->fixed_cost;
	double z0 = overflow ? milp_objective(&wm->milp, wm->start) : wm->inc_cost;
	int rc;

	so->start = wm->start;
	so->gap = 0;
	so->relaxation = 0;
	if (solver_solve(ops, &wm->milp, so, res, err)) {
		/* The backend died or failed on this window (Cbc 2.10.8
		 * segfaults, rarely, in CglPreProcess::postProcess): the
		 * incumbent stands; err says what happened, the caller
		 * decides whether to go on. */
		wr->outcome = WINDOW_CRASHED;
		return 0;
	}
	wr->late = so->deadline > 0 && cm_clock() >= so->deadline;
	if (res->has_bound)
		wr->bound = res->bound + offset;
	if (res->x && num_lt(res->objective + offset, z0)) {
		rc = overflow ? splice_repair(g, budget, wm, res->x, inc, plan, overflow, err) :
				splice(g, budget, wm, res->x, inc, plan, err);
		if (rc < 0)
			return -1;
		wr->outcome = rc ? WINDOW_IMPROVED : WINDOW_REJECTED;
	} else if (res->status == MILP_OPTIMAL) {
		wr->outcome = WINDOW_OPTIMAL;
	}
	return 0;
}

/* window_improve and window_repair: builds window w (with slack columns
 * when overflow is not NULL), solves it to optimality from the incumbent
 * and splices a better solution in: cheaper (improve), or with less
 * overflow, or as little at a lower cost (repair). */
static int window_solve(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
			const struct solve_opts *o, const struct window_spec *w,
			struct stages *inc, struct plan **plan, double *overflow,
			struct window_result *wr, struct cm_error *err)
{
	struct window_model wm;
	struct milp_result res = { 0 };
	struct solve_opts so = *o;
	struct window_spec ws = *w;
	double t0 = cm_clock();
	int rc;

	memset(wr, 0, sizeof(*wr));
	wr->bound = -1;
	wr->outcome = WINDOW_NO_GAIN;
	ws.slack = overflow != NULL;
	if (w->deadline > 0 && (so.deadline <= 0 || w->deadline < so.deadline))
		so.deadline = w->deadline;
	rc = window_build(g, budget, inc, &ws, &wm, err);
	wr->build_seconds = cm_clock() - t0;
	if (rc) {
		wr->late = rc > 0;
		wr->seconds = wr->build_seconds;
		return rc > 0 ? 0 : -1;
	}
	wr->cols = wm.milp.ncols;
	wr->rows = wm.milp.nrows;
	wr->nnz = wm.milp.nnz;
	if (!wm.start_ok) {
		rc = cm_errorf(err, "the incumbent is not a point of window %d..%d", w->a, w->b);
		goto out;
	}
	if (wm.milp.ncols == 0) {
		wr->outcome = WINDOW_OPTIMAL;
		rc = 0;
		goto out;
	}
	/* Built already: only the solver process is still to come. */
	if (w->max_bytes > 0 && remat_bytes((uint64_t)wm.milp.nnz, 0, 1) -
				remat_bytes((uint64_t)wm.milp.nnz, 0, 0) >
				(double)w->max_bytes) {
		rc = 0;
		goto out;
	}
	rc = solve_built(g, budget, ops, &so, &wm, inc, plan, overflow, wr, &res, err);
out:
	milp_result_release(&res);
	window_release(&wm);
	wr->seconds = cm_clock() - t0;
	return rc;
}

int window_improve(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		   const struct solve_opts *o, const struct window_spec *w,
		   struct stages *inc, struct plan **plan, struct window_result *wr,
		   struct cm_error *err)
{
	return window_solve(g, budget, ops, o, w, inc, plan, NULL, wr, err);
}

int window_repair(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		  const struct solve_opts *o, const struct window_spec *w,
		  struct stages *inc, struct plan **plan, double *overflow,
		  struct window_result *wr, struct cm_error *err)
{
	return window_solve(g, budget, ops, o, w, inc, plan, overflow, wr, err);
}

/* compare's policy: see compare.h. */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

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
	int wfd;                     /* a worker's pipe to its parent, else -1 */
};

/* What a worker (compare_request.jobs) sends its parent: a row, then once
 * a budget is done its cells of the result, its bound and the end. */
enum wire_kind { WIRE_ROW, WIRE_CELL, WIRE_BOUND, WIRE_DONE, WIRE_ERROR };

struct wire {
	int kind, bi, c;
	struct strategy_row row; /* ROW: its strings are param and solver */
	char param[64], solver[32];
	int has_param, has_solver;
	double value;            /* CELL: res->best; BOUND: res->bound */
	int unsupported;         /* CELL: res->unsupported */
	char msg[sizeof(((struct cm_error *)0)->msg)]; /* ERROR */
};

static int send_wire(int fd, const struct wire *x, struct cm_error *err)
{
	const char *p = (const char *)x;
	size_t left = sizeof(*x);

	while (left > 0) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cm_errorf(err, "a compare worker could not write: %s", strerror(errno));
		p += n;
		left -= (size_t)n;
	}
	return 0;
}

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

/* Hands row r of column c at budget bi on: to rq->row, or, in a worker
 * (compare_request.jobs), to the parent. */
static int emit(const struct run *w, int c, int bi, const struct strategy_row *r,
		struct cm_error *err)
{
	if (w->wfd >= 0) {
		struct wire x = { .kind = WIRE_ROW, .bi = bi, .c = c, .row = *r };

		x.has_param = r->param != NULL;
		x.has_solver = r->solver != NULL;
		snprintf(x.param, sizeof(x.param), "%s", r->param ? r->param : "");
		snprintf(x.solver, sizeof(x.solver), "%s", r->solver ? r->solver : "");
		return send_wire(w->wfd, &x, err);
	}
	if (w->rq->row && w->rq->row(w->rq->ctx, r))
		return cm_errorf(err, "writing a row failed");
	return 0;
}

/* 1 when the rows at a budget need the shared bound: --bound, and a column
 * without a bound of its own; with a bandwidth, --bound (the turn bound
 * with copies: the LP bounds plans without copies only). */
static int needs_bound(const struct compare_request *rq)
{
	if (rq->settings->copy)
		return rq->bound;
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

/* With a bandwidth: the best bound on the time (seconds) of the plans at
 * budget bi, auto's when it went past the checkpoint-all time (the same
 * model), else the turn bound with copies. 1, with *bound set. */
static int budget_time_bound(struct run *w, int bi, double *bound)
{
	struct solve_request rq = *w->rq->settings;
	struct solve_outcome turn = { .time_bound = w->floor_cost * rq.copy->seconds_per_cost,
				      .has_time_bound = 1 };
	int above = 0;
	char h[32];

	for (int c = 0; c < w->rq->ncols; c++)
		if (w->outs[c].has_time_bound && w->outs[c].time_bound > turn.time_bound) {
			turn.time_bound = w->outs[c].time_bound;
			above = 1;
		}
	rq.budget = w->rq->budgets[bi];
	if (!above && !stop_requested()) {
		note(w, "turn bound with copies at budget %s", size_human(rq.budget, h, sizeof(h)));
		strategy_copy_bound(w->g, &rq, strategy_time_limit(&rq), &turn);
	}
	*bound = turn.time_bound;
	return 1;
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

	if (rq.copy)
		return budget_time_bound(w, bi, bound);
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
 * plan that fits this budget (with a bandwidth, on its time in seconds). */
static void point_row(const struct run *w, struct strategy_row *r, const char *name,
		      const struct baseline_point *p, uint64_t budget, const double *bound)
{
	const struct sim_copy *copy = w->rq->settings->copy;
	int fits = p->peak <= budget, proven = 0;

	*r = (struct strategy_row){ .graph = w->g->id, .strategy = name, .param = p->param,
				    .budget = budget, .feasible = fits, .has_cost = 1,
				    .cost = p->cost, .overhead = p->cost / w->floor_cost,
				    .peak = p->peak, .seconds = p->seconds,
				    .status = fits ? STATUS_FEASIBLE : STATUS_OVER_BUDGET };
	/* With a bandwidth, a plan without copies takes its cost's time, and
	 * bound is on the time. */
	if (copy) {
		r->has_time = 1;
		r->time = p->cost * copy->seconds_per_cost;
		r->has_time_bound = 1;
		r->time_bound = fmax(bound ? *bound : 0, w->floor_cost * copy->seconds_per_cost);
		if (fits && num_le(p->cost, r->time_bound / copy->seconds_per_cost))
			r->status = STATUS_OPTIMAL;
		bound = NULL;
	}
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

/* With a bandwidth: bound (seconds) as o's time bound when higher; a plan
 * that fits and meets it is then optimal. */
static void raise_time_bound(const struct run *w, struct solve_outcome *o, double bound)
{
	if (o->status == STATUS_UNSUPPORTED || (o->has_time_bound && o->time_bound >= bound))
		return;
	o->has_time_bound = 1;
	o->time_bound = bound;
	if (o->status == STATUS_FEASIBLE && strategy_time_meets(w->rq->settings, o, bound))
		strategy_set_status(o, STATUS_OPTIMAL);
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
		return emit(w, c, bi, &r, err);
	}
	for (int k = 0; s->point && k < w->npts[c]; k++) {
		point_row(w, &r, s->name, &w->pts[c][k], budget, bound);
		if (emit(w, c, bi, &r, err))
			return -1;
		if (r.feasible && (*best < 0 || r.overhead < *best))
			*best = r.overhead;
	}
	if (s->point)
		return 0;
	if (bound && w->rq->settings->copy)
		raise_time_bound(w, &w->outs[c], *bound);
	else if (bound && !(s->flags & STRATEGY_BOUND) && w->outs[c].plan &&
		 !w->outs[c].has_lower_bound)
		strategy_set_bound(w->g, &w->outs[c], fmax(*bound, w->floor_cost));
	w->res->unsupported[c] = w->outs[c].status == STATUS_UNSUPPORTED;
	strategy_row_of_outcome(&r, w->g, s->name, budget, &w->outs[c]);
	/* With a bandwidth, the best is in time: what copies change. */
	if (r.feasible)
		*best = r.has_time ? r.time / (w->floor_cost *
					       w->rq->settings->copy->seconds_per_cost) : r.overhead;
	if (r.status == STATUS_INTERRUPTED) {
		*best = COMPARE_NOT_RUN;
		w->res->interrupted = 1;
	}
	return emit(w, c, bi, &r, err);
}

/* The best bound known at budget bi into res->bound: shared, when the
 * rows had one, else the best of the columns with bounds of their own. */
static void record_bound(const struct run *w, int bi, const double *shared)
{
	const struct sim_copy *copy = w->rq->settings->copy;
	double best = -1;

	/* With a bandwidth, in time: the shared bound or auto's, when above
	 * the checkpoint-all time. */
	if (copy) {
		for (int c = 0; c < w->rq->ncols; c++)
			if ((w->rq->columns[c]->flags & STRATEGY_BOUND) &&
			    w->outs[c].has_time_bound && w->outs[c].time_bound > best)
				best = w->outs[c].time_bound;
		if (shared && *shared > best)
			best = *shared;
		w->res->bound[bi] = best < 0 ? -1 : best / (w->floor_cost * copy->seconds_per_cost);
		return;
	}

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
		if (emit(w, c, bi, &r, err))
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

/* The end of budget bi in a worker: its cells of the result, its bound,
 * then WIRE_DONE. */
static int send_budget(const struct run *w, int bi, struct cm_error *err)
{
	struct wire x = { .kind = WIRE_BOUND, .bi = bi, .value = w->res->bound[bi] };

	for (int c = 0; c < w->rq->ncols; c++) {
		struct wire y = { .kind = WIRE_CELL, .bi = bi, .c = c,
				  .value = w->res->best[(size_t)c * (size_t)w->rq->nb + (size_t)bi],
				  .unsupported = w->res->unsupported[c] };

		if (send_wire(w->wfd, &y, err))
			return -1;
	}
	if (send_wire(w->wfd, &x, err))
		return -1;
	x = (struct wire){ .kind = WIRE_DONE, .bi = bi };
	return send_wire(w->wfd, &x, err);
}

/* Worker k of jobs: budgets k, k + jobs, ... through fd, then exits. Its
 * solves report no progress (the parent's terminal line is not theirs). */
static void worker(struct run *w, int k, int jobs, int fd)
{
	struct solve_request settings = *w->rq->settings;
	struct compare_request rq = *w->rq;
	struct cm_error err;
	int rc = 0;

	settings.progress = NULL;
	rq.settings = &settings;
	w->rq = &rq;
	w->wfd = fd;
	for (int bi = k; bi < rq.nb && rc == 0; bi += jobs) {
		rc = stop_requested() ? interrupted_rows(w, bi, &err) : run_budget(w, bi, &err);
		if (rc == 0)
			rc = send_budget(w, bi, &err);
	}
	if (rc) {
		struct wire x = { .kind = WIRE_ERROR };

		snprintf(x.msg, sizeof(x.msg), "%s", err.msg);
		send_wire(fd, &x, &err);
	}
	_exit(rc ? 1 : 0);
}

/* The rows a worker sent for one budget, kept until the budgets before it
 * are out. */
struct pending {
	struct wire *rows;
	int n, cap, done;
};

/* Takes one record from a worker. 0, or -1 with err set. */
static int take_wire(struct run *w, struct pending *pb, const struct wire *x,
		     struct cm_error *err)
{
	struct pending *b;

	if (x->bi < 0 || x->bi >= w->rq->nb || x->c < 0 || x->c >= w->rq->ncols)
		return cm_errorf(err, "internal error: a compare worker sent a bad record");
	b = &pb[x->bi];
	switch (x->kind) {
	case WIRE_ROW:
		if (b->n == b->cap) {
			struct wire *more = realloc(b->rows, (size_t)(2 * b->cap + 4) * sizeof(*more));

			if (more == NULL)
				return cm_errorf(err, "out of memory");
			b->rows = more;
			b->cap = 2 * b->cap + 4;
		}
		b->rows[b->n++] = *x;
		return 0;
	case WIRE_CELL:
		w->res->best[(size_t)x->c * (size_t)w->rq->nb + (size_t)x->bi] = x->value;
		w->res->unsupported[x->c] |= (char)x->unsupported;
		w->res->interrupted |= x->value == COMPARE_NOT_RUN;
		return 0;
	case WIRE_BOUND:
		w->res->bound[x->bi] = x->value;
		return 0;
	case WIRE_DONE:
		b->done = 1;
		return 0;
	default:
		return cm_errorf(err, "%s", x->msg);
	}
}

/* Hands on the rows of the budgets done, in budget order, from *next. */
static int flush_done(struct run *w, struct pending *pb, int *next, struct cm_error *err)
{
	for (; *next < w->rq->nb && pb[*next].done; (*next)++) {
		struct pending *b = &pb[*next];

		for (int i = 0; i < b->n; i++) {
			struct wire *x = &b->rows[i];
			struct strategy_row r = x->row;

			r.graph = w->g->id;
			r.strategy = w->rq->columns[x->c]->name;
			r.param = x->has_param ? x->param : NULL;
			r.solver = x->has_solver ? x->solver : NULL;
			if (emit(w, x->c, *next, &r, err))
				return -1;
		}
		free(b->rows);
		*b = (struct pending){ .done = 1 };
	}
	return 0;
}

/* Reads whole records from the workers' pipes until every one has closed
 * its own; a stop request is passed on to them. 0, or -1 with err set. */
static int collect(struct run *w, struct pollfd *pf, const pid_t *pids, int jobs,
		   struct pending *pb, struct cm_error *err)
{
	int open = jobs, next = 0, told = 0;

	while (open > 0) {
		if (stop_requested() && !told) {
			for (int k = 0; k < jobs; k++)
				kill(pids[k], stop_signal() ? stop_signal() : SIGINT);
			told = 1;
		}
		if (poll(pf, (nfds_t)jobs, 200) < 0 && errno != EINTR)
			return cm_errorf(err, "poll: %s", strerror(errno));
		for (int k = 0; k < jobs; k++) {
			struct wire x;
			size_t got = 0;

			if (pf[k].fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP)))
				continue;
			while (got < sizeof(x)) {
				ssize_t n = read(pf[k].fd, (char *)&x + got, sizeof(x) - got);

				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0)
					break;
				got += (size_t)n;
			}
			if (got < sizeof(x)) {
				close(pf[k].fd);
				pf[k].fd = -1;
				open--;
				continue;
			}
			if (take_wire(w, pb, &x, err) || flush_done(w, pb, &next, err))
				return -1;
		}
	}
	if (next < w->rq->nb)
		return cm_errorf(err, "a compare worker ended before the rows of budget %d",
				 next + 1);
	return 0;
}

/* The budgets shared among `jobs` worker processes, the rows handed on in
 * the order one process gives them. 0, or -1 with err set. */
static int run_jobs(struct run *w, int jobs, struct cm_error *err)
{
	struct pollfd pf[COMPARE_MAX_JOBS];
	pid_t pids[COMPARE_MAX_JOBS];
	struct pending *pb = calloc((size_t)w->rq->nb, sizeof(*pb));
	int started = 0, rc = -1;

	if (pb == NULL)
		return cm_errorf(err, "out of memory");
	fflush(NULL); /* nothing buffered is written twice */
	for (; started < jobs; started++) {
		int fds[2];

		if (pipe(fds) != 0 || (pids[started] = fork()) < 0) {
			cm_errorf(err, "starting a compare worker: %s", strerror(errno));
			goto out;
		}
		if (pids[started] == 0) {
			close(fds[0]);
			for (int k = 0; k < started; k++)
				close(pf[k].fd);
			stop_child_forget_all();
#ifdef __linux__
			prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
			worker(w, started, jobs, fds[1]);
		}
		close(fds[1]);
		pf[started] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		stop_child_add(pids[started]);
	}
	rc = collect(w, pf, pids, jobs, pb, err);
out:
	for (int k = 0; k < started; k++) {
		int status;

		if (rc)
			kill(pids[k], SIGKILL);
		if (pf[k].fd >= 0)
			close(pf[k].fd);
		while (waitpid(pids[k], &status, 0) < 0 && errno == EINTR)
			;
		stop_child_remove(pids[k]);
	}
	for (int bi = 0; bi < w->rq->nb; bi++)
		free(pb[bi].rows);
	free(pb);
	return rc;
}

int compare_run(const struct graph *g, const struct compare_request *rq,
		struct compare_result *res, struct cm_error *err)
{
	size_t nc = (size_t)rq->ncols;
	struct run w = { .g = g, .rq = rq, .res = res, .floor_cost = graph_total_cost(g),
			 .wfd = -1 };
	int rc = -1, jobs = rq->jobs < rq->nb ? rq->jobs : rq->nb;

	if (jobs > COMPARE_MAX_JOBS)
		jobs = COMPARE_MAX_JOBS;

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
	if (jobs > 1) {
		if (run_jobs(&w, jobs, err))
			goto out;
	} else {
		for (int bi = 0; bi < rq->nb; bi++)
			if (stop_requested() ? interrupted_rows(&w, bi, err) : run_budget(&w, bi, err))
				goto out;
	}
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

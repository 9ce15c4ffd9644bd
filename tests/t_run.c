/* The bounded runner (solvers/milp/backend/run.c) with backends of its own
 * whose process dies: before its time limit that is a crash, which the
 * caller hears of; past it, it ends the solve as the limit does, with what
 * was reported kept (Cbc 2.10.8 faults in Cgl's postprocessing when its
 * limit stops the preprocessing).
 * Not timed: the backends sleep, the checks look at statuses only. */
#define _DEFAULT_SOURCE /* usleep */
#include <string.h>
#include <unistd.h>

#include "../solvers/milp/backend/solver.h"
#include "tap.h"

/* Reports a bound and a solution, then dies (exit status 70, no core file)
 * a quarter second past its time limit. */
static int die_late(const struct milp *m, const struct solve_opts *o,
		    struct milp_result *res, struct cm_error *err)
{
	struct solve_progress p = { .bound = 3, .has_bound = 1 };
	double x[1] = { 1 };

	(void)m;
	(void)res;
	(void)err;
	o->progress(o->ctx, &p);
	o->incumbent(o->incumbent_ctx, x, 7);
	usleep((useconds_t)((o->time_limit + 0.25) * 1e6));
	_exit(70);
}

/* Dies at once. */
static int die_now(const struct milp *m, const struct solve_opts *o, struct milp_result *res,
		   struct cm_error *err)
{
	(void)m;
	(void)o;
	(void)res;
	(void)err;
	_exit(70);
}

static const struct solver_ops late = { "late", die_late, die_late };
static const struct solver_ops early = { "early", die_now, die_now };

static void no_report(void *ctx, const struct solve_progress *p)
{
	(void)ctx;
	(void)p;
}

int main(void)
{
	double obj[1] = { 1 };
	struct milp m = { .ncols = 1, .obj = obj };
	struct solve_opts so = { .time_limit = 0.2, .progress = no_report };
	struct milp_result res;
	struct cm_error err = { "" };
	int rc;

	rc = solver_solve(&late, &m, &so, &res, &err);
	ok(rc == 0 && res.status == MILP_FEASIBLE && res.x && res.x[0] == 1 &&
	   res.objective == 7 && res.has_bound && res.bound == 3 && !res.stopped,
	   "a process that dies past its time limit: the limit, with the solution "
	   "(objective %g) and bound (%g) it reported (rc %d: %s)", res.objective, res.bound,
	   rc, err.msg);
	milp_result_release(&res);

	so.time_limit = 30;
	rc = solver_solve(&early, &m, &so, &res, &err);
	ok(rc == SOLVER_CRASHED && strstr(err.msg, "early crashed (exit status 70)") &&
	   res.x == NULL, "one that dies before its limit crashed: %s", err.msg);

	so.time_limit = 0;
	rc = solver_solve(&early, &m, &so, &res, &err);
	ok(rc == SOLVER_CRASHED, "so does one without a limit: %s", err.msg);
	return tap_done();
}

/* Stop requests (common/stop.h): the runner kills its solver processes and
 * returns what it knows; each long strategy, compare and maxbatch end
 * with the best answer so far; the command line's handler (cli/interrupt.c)
 * stops on the first signal and kills, cleans up and dies on a second one
 * a second later.
 * No timed assertions: a stop must only end things. */
#define _DEFAULT_SOURCE /* kill, setpgid through unistd */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../common/stop.h"
#include "../graph/read.h"
#include "../solvers/batch.h"
#include "../solvers/compare.h"
#include "../solvers/strategy.h"
#include "tap.h"

/* 1 when this process has no child left, reaped or not. */
static int no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static void stop_on_progress(void *ctx, const struct solve_progress *p)
{
	(void)p;
	(*(int *)ctx)++;
	stop_request(SIGINT);
}

/* Stops at the first report of the MILP's solver (the heuristics that
 * make ilp's start report each one by name first). */
static void stop_in_milp(void *ctx, const struct solve_progress *p)
{
	if (p->label == NULL)
		stop_on_progress(ctx, p);
}

/* A MILP that takes seconds: U-Net's, no warm start. The first progress
 * report (after a second) asks to stop. */
static void test_runner(void)
{
	char path[512];
	struct cm_error err;
	struct graph *g;
	struct remat_model rm;
	struct remat_opts mo = { 0 };
	struct milp_result res;
	int reports = 0;
	struct solve_opts so = { .progress = stop_on_progress, .ctx = &reports };

	stop_request(SIGINT);
	ok(solver_solve(&solver_cbc, &(struct milp){ 0 }, &so, &res, &err) == 0 && res.stopped &&
	   res.status == MILP_NO_SOLUTION && res.x == NULL && no_children(),
	   "a stop requested before the solve: no solver process, nothing solved");
	stop_clear();
	if (!tap_graph(path, sizeof(path), "unet.json"))
		return;
	if ((g = graph_load(path, &err)) == NULL) {
		ok(0, "%s: %s", path, err.msg);
		return;
	}
	remat_build(g, 14602888806ull, &mo, &rm, &err);
	for (int b = 0; b < 2; b++) {
		const struct solver_ops *ops = b ? &solver_glpk : &solver_cbc;
		int rc = solver_solve(ops, &rm.milp, &so, &res, &err);

		ok(rc == 0 && res.stopped && reports >= 1 && no_children() &&
		   (res.x == NULL) == (res.status == MILP_NO_SOLUTION),
		   "%s stopped from its first progress report: returns, status %d, no process left",
		   ops->name, res.status);
		if (res.x)
			ok(milp_violation(&rm.milp, res.x) < 1e-6, "%s: the solution it kept is feasible",
			   ops->name);
		milp_result_release(&res);
		stop_clear();
		reports = 0;
	}
	remat_release(&rm);
	graph_free(g);
}

/* Each long strategy asked to stop before it starts: the answer it has, at
 * once. */
static void test_strategies(void)
{
	struct cm_error err;
	struct graph *g = graph_linear(8, &err);
	static const char *const names[] = { "ilp", "approx", "lns", "auto", "dtr" };

	stop_request(SIGTERM);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct solve_request rq = { .strategy = names[i], .budget = 8, .time_limit = 30 };
		struct solve_outcome o;
		int rc = strategy_solve(g, &rq, &o, &err);

		ok(rc == 0 && no_children() &&
		   (o.plan ? o.status == STATUS_FEASIBLE && o.sim.fits && o.sim.valid :
			     o.status == STATUS_NO_PLAN) &&
		   o.interrupted && strstr(o.why, "interrupted") != NULL,
		   "%s stopped before it starts: %s, '%s'", names[i],
		   strategy_status_names[o.status], o.why);
		strategy_outcome_release(&o);
	}
	stop_clear();
	graph_free(g);
}

/* ilp on U-Net stopped at its first progress report: the plan it started
 * from (a heuristic's), valid and within the budget. */
static void test_ilp_midway(void)
{
	char path[512];
	struct cm_error err;
	struct graph *g;
	int reports = 0;
	struct solve_request rq = { .strategy = "ilp", .budget = 14602888806ull,
				    .progress = stop_in_milp, .ctx = &reports };
	struct solve_outcome o;

	if (!tap_graph(path, sizeof(path), "unet.json"))
		return;
	if ((g = graph_load(path, &err)) == NULL) {
		ok(0, "%s: %s", path, err.msg);
		return;
	}
	if (strategy_solve(g, &rq, &o, &err)) {
		ok(0, "ilp on unet: %s", err.msg);
		graph_free(g);
		return;
	}
	ok(o.plan && o.status == STATUS_FEASIBLE &&
	   o.sim.valid && o.sim.fits && o.interrupted && no_children(),
	   "ilp on unet stopped midway: %s, the best plan so far (%s)",
	   strategy_status_names[o.status], o.why);
	strategy_outcome_release(&o);
	stop_clear();
	graph_free(g);
}

static int count_rows(void *ctx, const struct strategy_row *r)
{
	((int *)ctx)[r->status == STATUS_INTERRUPTED]++;
	return 0;
}

static void test_compare_maxbatch(void)
{
	struct cm_error err;
	struct graph *g = graph_linear(6, &err);
	const struct strategy *cols[] = { strategy_find("checkpoint-all", NULL),
					  strategy_find("ilp", NULL) };
	uint64_t budgets[] = { 6, 8, 10 };
	struct solve_request settings = { 0 };
	struct compare_request rq = { .columns = cols, .ncols = 2, .budgets = budgets, .nb = 3,
				      .settings = &settings, .row = count_rows };
	struct compare_result res;
	struct batch_request br = { "ilp", 8, 2, &settings, 0 };
	struct batch_answer ans;
	int rows[2] = { 0, 0 }, rc;

	rq.ctx = rows;
	stop_request(SIGINT);
	rc = compare_run(g, &rq, &res, &err);
	ok(rc == 0 && res.interrupted && rows[0] == 0 && rows[1] == 6 &&
	   res.best[0] == COMPARE_NOT_RUN,
	   "compare stopped before it starts: every row interrupted (%d of %d)", rows[1],
	   rows[0] + rows[1]);
	compare_result_release(&res);
	ok(batch_search(g, &br, &ans, &err) == 0 && ans.interrupted && !ans.proven &&
	   ans.batch == 0, "maxbatch stopped before it starts: interrupted, nothing proven");
	stop_clear();
	graph_free(g);
}

/* The handler in a child process: a temporary output file and a tracked
 * solver process (a sleeper in its own group); the first SIGINT only asks
 * to stop, the second kills the sleeper, removes the file, and ends the
 * process by SIGINT. */
static void test_handler(void)
{
	char tmpl[] = "/tmp/cm-interrupt-XXXXXX";
	int fds[2], status = 0;
	pid_t pid, sleeper = 0;
	char report[2] = "";
	struct out o;
	struct cm_error err;

	if (mkdtemp(tmpl) == NULL || pipe(fds) != 0) {
		ok(0, "set-up: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		char path[600];

		close(fds[0]);
		snprintf(path, sizeof(path), "%s/plan.json", tmpl);
		/* A test run as a background job inherits SIGINT ignored,
		 * which the handler keeps (test_ignored). */
		signal(SIGINT, SIG_DFL);
		cli_catch_interrupts(1);
		if (out_open(&o, path, &err))
			_exit(3);
		sleeper = fork();
		if (sleeper == 0) {
			setpgid(0, 0);
			pause();
			_exit(0);
		}
		setpgid(sleeper, sleeper);
		stop_child_add(sleeper);
		raise(SIGINT);
		/* Within a second of the first: the same request again. */
		raise(SIGTERM);
		raise(SIGINT);
		report[0] = stop_requested() ? 'S' : '-';
		if (write(fds[1], report, 1) != 1 || write(fds[1], &sleeper, sizeof(sleeper)) < 0)
			_exit(4);
		nanosleep(&(struct timespec){ 1, 200000000 }, NULL);
		raise(SIGINT);
		_exit(5); /* not reached */
	}
	close(fds[1]);
	if (read(fds[0], report, 1) != 1 || read(fds[0], &sleeper, sizeof(sleeper)) < 0)
		report[0] = '?';
	close(fds[0]);
	waitpid(pid, &status, 0);
	ok(report[0] == 'S', "first SIGINT: a stop request, the process goes on, also through a "
	   "SIGTERM and a SIGINT within a second of it (the same request)");
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT,
	   "a SIGINT 1.2 s after the first: the process dies of it (status %#x)", status);
	ok(sleeper > 0 && kill(sleeper, 0) != 0 && errno == ESRCH,
	   "second SIGINT: the solver process is killed and reaped");
	status = rmdir(tmpl);
	ok(status == 0, "second SIGINT: no temporary file left (%s)",
	   status == 0 ? "the directory is empty" : strerror(errno));
}

/* A signal ignored at start (nohup, a shell's background job) stays so. */
static void test_ignored(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGINT, SIG_IGN);
		cli_catch_interrupts(1);
		raise(SIGINT);
		_exit(stop_requested() ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "SIGINT ignored at start stays ignored: no stop request");
}

int main(void)
{
	test_runner();
	test_strategies();
	test_ilp_midway();
	test_compare_maxbatch();
	test_handler();
	test_ignored();
	return tap_done();
}

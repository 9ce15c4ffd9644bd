/* The bounded runner: the backend solves in a forked child, which reports
 * progress and its result through a pipe; the parent waits at most the time
 * limit plus a grace period. */
#include "solver.h"
#include "../graph/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Seconds the child gets past the limit to stop by itself and report. */
#define RUN_GRACE 2.0

static const struct solver_ops *const backends[] = { &solver_cbc, &solver_glpk };

const struct solver_ops *solver_find(const char *name)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

const char *const lp_method_names[LP_METHODS] = { "auto", "dual", "primal", "barrier" };

int lp_method_find(const char *name)
{
	for (int i = 0; i < LP_METHODS; i++)
		if (strcmp(lp_method_names[i], name) == 0)
			return i;
	return -1;
}

void solver_names(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]) && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 backends[i]->name);
}

void milp_result_release(struct milp_result *res)
{
	free(res->x);
	res->x = NULL;
}

/* Messages from the child: a tag, then a fixed payload. */
enum { MSG_PROGRESS = 'P', MSG_RESULT = 'R', MSG_ERROR = 'E', MSG_LP = 'L' };

struct msg_result {
	int status, has_bound, has_x;
	double objective, bound;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Reads exactly len bytes, giving up at the deadline (0: none). */
static int read_all(int fd, void *buf, size_t len, double deadline)
{
	char *p = buf;

	while (len > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int ms = -1;
		ssize_t r;

		if (deadline > 0) {
			double left = deadline - cm_clock();

			if (left <= 0)
				return -2;
			ms = (int)(left * 1000) + 1;
		}
		r = poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue;
		r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int child_fd = -1;

static void child_progress(void *ctx, const struct solve_progress *p)
{
	char tag = MSG_PROGRESS;

	(void)ctx;
	if (write_all(child_fd, &tag, 1) == 0)
		write_all(child_fd, p, sizeof(*p));
}

static int child_ncols;

/* A result on the pipe: a msg_result, then x when there is one. */
static int write_result(int fd, const struct milp_result *r)
{
	struct msg_result mr = { r->status, r->has_bound, r->x != NULL, r->objective, r->bound };

	if (write_all(fd, &mr, sizeof(mr)))
		return -1;
	return r->x ? write_all(fd, r->x, (size_t)child_ncols * sizeof(double)) : 0;
}

/* One LP of a sweep: the tag, its number, then its result. */
static int child_on_lp(void *ctx, int k, const struct milp_result *r)
{
	char tag = MSG_LP;

	(void)ctx;
	if (write_all(child_fd, &tag, 1) == 0 && write_all(child_fd, &k, sizeof(k)) == 0)
		write_result(child_fd, r);
	return 0;
}

static void run_child(const struct solver_ops *ops, const struct milp *m,
		      const struct solve_opts *o, int fd)
{
	struct solve_opts co = *o;
	struct milp_result res = { 0 };
	struct cm_error err = { "" };
	char tag;

	child_fd = fd;
	/* Whatever a backend prints must not reach our standard output. */
	{
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			close(null);
		}
	}
	co.progress = child_progress;
	co.ctx = NULL;
	child_ncols = m->ncols;
	if (o->on_lp)
		co.on_lp = child_on_lp;
	if ((o->relaxation ? ops->solve_lp : ops->solve)(m, &co, &res, &err)) {
		tag = MSG_ERROR;
		write_all(fd, &tag, 1);
		write_all(fd, err.msg, sizeof(err.msg));
	} else {
		tag = MSG_RESULT;
		if (write_all(fd, &tag, 1) == 0)
			write_result(fd, &res);
	}
	close(fd);
	_exit(0);
}

/* read_all for a message body: -2 at the deadline, -1 with err set when
 * the child is gone. */
static int read_msg(int fd, void *buf, size_t len, double deadline, struct cm_error *err)
{
	int rc = read_all(fd, buf, len, deadline);

	if (rc == -1)
		return cm_errorf(err, "the solver process died");
	return rc;
}

/* Reads what write_result wrote into *r; its x (malloc'd) is the caller's
 * to release, after an error too. */
static int read_result(int fd, const struct milp *m, double deadline, struct milp_result *r,
		       struct cm_error *err)
{
	struct msg_result mr;
	int rc;

	if ((rc = read_msg(fd, &mr, sizeof(mr), deadline, err)))
		return rc;
	*r = (struct milp_result){ mr.status, mr.objective, mr.bound, mr.has_bound, NULL };
	if (!mr.has_x)
		return 0;
	r->x = malloc((size_t)m->ncols * sizeof(double) + 1);
	if (r->x == NULL)
		return cm_errorf(err, "out of memory");
	return read_msg(fd, r->x, (size_t)m->ncols * sizeof(double), deadline, err);
}

/* Waits up to `wait` seconds for fd to become readable: 1 readable, 0 not. */
static int wait_readable(int fd, double wait)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	int r;

	do
		r = poll(&pfd, 1, wait > 0 ? (int)(wait * 1000) + 1 : 0);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* Receives the child's messages until its result, an error or the
 * deadline, reporting progress about once a second from here (the child's
 * own reports only update what is known) and passing each LP of a sweep
 * to o->on_lp. Returns 0 with res filled, -1 with err set, or -2 at the
 * deadline or when on_lp asks to stop (res->bound then holds the last bound
 * reported). */
static int receive(int fd, const struct milp *m, const struct solve_opts *o,
		   double deadline, struct milp_result *res, struct cm_error *err)
{
	struct solve_progress known = { .label = o->label };
	double t0 = cm_clock(), next_report = t0 + 1.0;
	int rc;

	for (;;) {
		double t = cm_clock(), wait = next_report - t;
		char tag;

		if (deadline > 0 && deadline - t < wait)
			wait = deadline - t;
		if (deadline > 0 && t >= deadline)
			return -2;
		if (!wait_readable(fd, wait)) {
			if (cm_clock() >= next_report && o->progress) {
				known.elapsed = cm_clock() - t0;
				o->progress(o->ctx, &known);
			}
			if (cm_clock() >= next_report)
				next_report = cm_clock() + 1.0;
			continue;
		}
		if ((rc = read_msg(fd, &tag, 1, deadline, err)))
			return rc;
		if (tag == MSG_PROGRESS) {
			struct solve_progress p;

			if ((rc = read_msg(fd, &p, sizeof(p), deadline, err)))
				return rc;
			if (p.has_incumbent) {
				known.incumbent = p.incumbent;
				known.has_incumbent = 1;
			}
			if (p.has_bound) {
				known.bound = res->bound = p.bound;
				known.has_bound = res->has_bound = 1;
			}
		} else if (tag == MSG_LP) {
			struct milp_result lp = { 0 };
			int k, stop;

			if ((rc = read_msg(fd, &k, sizeof(k), deadline, err)) ||
			    (rc = read_result(fd, m, deadline, &lp, err))) {
				free(lp.x);
				return rc;
			}
			stop = o->on_lp(o->lp_ctx, k, &lp);
			free(lp.x);
			if (stop)
				return -2; /* as at the deadline: the child is stopped */
		} else if (tag == MSG_ERROR) {
			char msg[sizeof(err->msg)];

			if ((rc = read_msg(fd, msg, sizeof(msg), deadline, err)))
				return rc;
			msg[sizeof(msg) - 1] = '\0';
			return cm_errorf(err, "%s", msg);
		} else if (tag == MSG_RESULT) {
			return read_result(fd, m, deadline, res, err);
		} else {
			return cm_errorf(err, "garbled message from the solver process");
		}
	}
}

int solver_solve(const struct solver_ops *ops, const struct milp *m,
		 const struct solve_opts *o, struct milp_result *res,
		 struct cm_error *err)
{
	int fds[2], rc, wstatus;
	double deadline = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe(fds) != 0)
		return cm_errorf(err, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return cm_errorf(err, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		run_child(ops, m, o, fds[1]);
	}
	close(fds[1]);
	if (o->time_limit > 0)
		deadline = cm_clock() + o->time_limit + RUN_GRACE;
	rc = receive(fds[0], m, o, deadline, res, err);
	close(fds[0]);
	if (rc == -2) {
		kill(pid, SIGKILL);
		res->status = MILP_NO_SOLUTION;
		rc = 0;
	}
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (rc && WIFSIGNALED(wstatus) && WTERMSIG(wstatus) != SIGKILL) {
		cm_errorf(err, "%s crashed (signal %d: %s)", ops->name, WTERMSIG(wstatus),
			  strsignal(WTERMSIG(wstatus)));
		rc = SOLVER_CRASHED;
	}
	if (rc)
		milp_result_release(res);
	return rc;
}

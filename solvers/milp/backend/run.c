/* The bounded runner: the backend solves in a forked child, which reports
 * progress and its result through a pipe; the parent waits at most the time
 * limit plus a grace period. */
#include "solver.h"
#include "../../../common/clock.h"
#include "../../../common/stop.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* Seconds the child gets past the limit to stop by itself and report. */
#define RUN_GRACE 2.0

/* Children that share a sweep at most. */
#define RUN_MAX_JOBS 16

/* Seconds between two looks at stop_requested() while children run. */
#define RUN_STOP_POLL 0.2

/* Messages from the child: a tag, then a fixed payload. */
enum { MSG_PROGRESS = 'P', MSG_RESULT = 'R', MSG_ERROR = 'E', MSG_LP = 'L',
       MSG_INCUMBENT = 'I' };

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

/* What the callbacks of a solver process need: they get it as their
 * context pointer (solve_opts ctx, lp_ctx and incumbent_ctx). */
struct child_state {
	int fd;            /* the pipe to the parent */
	int ncols;         /* values in a solution */
	int first, stride; /* the sweep's LPs this child solves: first,
			    * first + stride, ... */
	double up;         /* the backend's objective units per model unit */
};

/* The backends' tolerances are absolute in objective units (reduced costs
 * within 1e-7 count as 0 in Clp, Cbc and GLPK), so costs far below 1 (a
 * graph's times in seconds) make their answers wrong: the paper's unet at
 * 60% with its costs times 2^-30 got an LP bound of overhead 1.173 and
 * approx an "optimal" 1.173, where the costs as they are give 1.0445. An
 * objective whose largest coefficient is below 1 is solved times the power
 * of two that brings it to [2^10, 2^11), exactly, and every figure the
 * child sends is divided back. */
static double objective_up(const struct milp *m)
{
	double most = 0;
	int e;

	for (int j = 0; j < m->ncols; j++)
		most = fmax(most, fabs(m->obj[j]));
	if (!(most > 0 && most < 1))
		return 1;
	frexp(most, &e); /* most in [2^(e-1), 2^e) */
	return ldexp(1, 11 - e);
}

static void child_progress(void *ctx, const struct solve_progress *p)
{
	const struct child_state *cs = ctx;
	struct solve_progress q = *p;
	char tag = MSG_PROGRESS;

	q.incumbent /= cs->up;
	q.bound /= cs->up;
	if (write_all(cs->fd, &tag, 1) == 0)
		write_all(cs->fd, &q, sizeof(q));
}

/* A result on the pipe: a msg_result, then x when there is one. */
static int write_result(const struct child_state *cs, const struct milp_result *r)
{
	struct msg_result mr = { r->status, r->has_bound, r->x != NULL, r->objective / cs->up,
				 r->bound / cs->up };

	if (write_all(cs->fd, &mr, sizeof(mr)))
		return -1;
	return r->x ? write_all(cs->fd, r->x, (size_t)cs->ncols * sizeof(double)) : 0;
}

/* A better solution: the tag, its objective, then its ncols values. */
static void child_incumbent(void *ctx, const double *x, double objective)
{
	const struct child_state *cs = ctx;
	char tag = MSG_INCUMBENT;

	objective /= cs->up;
	if (write_all(cs->fd, &tag, 1) == 0 &&
	    write_all(cs->fd, &objective, sizeof(objective)) == 0)
		write_all(cs->fd, x, (size_t)cs->ncols * sizeof(double));
}

/* One LP of a sweep: the tag, its number in the whole sweep, then its
 * result. */
static int child_on_lp(void *ctx, int k, const struct milp_result *r)
{
	const struct child_state *cs = ctx;
	char tag = MSG_LP;
	int global = cs->first + k * cs->stride;

	if (write_all(cs->fd, &tag, 1) == 0 && write_all(cs->fd, &global, sizeof(global)) == 0)
		write_result(cs, r);
	return 0;
}

/* Narrows the sweep of *co to the share of child `first` of `stride`: its
 * LPs' bounds into ub, and the model *share, a copy of m whose swept
 * columns start at the share's first bound (chi, a copy of m's). */
static void take_share(const struct milp *m, struct solve_opts *co, int first, int stride,
		       struct milp *share, double *chi, double *ub)
{
	int n = 0;

	for (int k = first; k < co->n_sweep; k += stride)
		ub[n++] = co->sweep_ub[k];
	memcpy(chi, m->chi, (size_t)m->ncols * sizeof(double));
	for (int i = 0; i < co->n_sweep_cols; i++)
		chi[co->sweep_cols[i]] = ub[0];
	*share = *m;
	share->chi = chi;
	co->sweep_ub = ub;
	co->n_sweep = n;
}

/* The child: solves m (with stride > 1, only its share of the sweep: LPs
 * first, first + stride, ...), reports through fd, and exits. */
static void run_child(const struct solver_ops *ops, const struct milp *m,
		      const struct solve_opts *o, int first, int stride, int fd)
{
	struct child_state cs = { .fd = fd, .ncols = m->ncols, .first = first, .stride = stride,
				  .up = objective_up(m) };
	struct solve_opts co = *o;
	struct milp_result res = { 0 };
	struct cm_error err = { "" };
	struct milp share, scaled;
	int rc;
	char tag;

	/* Whatever a backend prints must not reach our standard output. */
	{
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			close(null);
		}
	}
	co.progress = child_progress;
	co.ctx = &cs;
	co.incumbent = child_incumbent;
	co.incumbent_ctx = &cs;
	if (o->on_lp) {
		co.on_lp = child_on_lp;
		co.lp_ctx = &cs;
	}
	if (cs.up != 1) {
		double *obj = malloc((size_t)m->ncols * sizeof(double) + 1);

		if (obj == NULL) {
			rc = cm_errorf(&err, "out of memory");
			goto report;
		}
		for (int j = 0; j < m->ncols; j++)
			obj[j] = m->obj[j] * cs.up;
		scaled = *m;
		scaled.obj = obj;
		m = &scaled;
		co.prune_tol *= cs.up;
	}
	if (stride > 1) {
		double *chi = malloc((size_t)m->ncols * sizeof(double) + 1);
		double *ub = malloc((size_t)o->n_sweep * sizeof(double) + 1);

		if (chi == NULL || ub == NULL) {
			rc = cm_errorf(&err, "out of memory");
			goto report;
		}
		take_share(m, &co, first, stride, &share, chi, ub);
		m = &share;
	}
	rc = (o->relaxation ? ops->solve_lp : ops->solve)(m, &co, &res, &err);
report:
	if (rc) {
		tag = MSG_ERROR;
		write_all(fd, &tag, 1);
		write_all(fd, err.msg, sizeof(err.msg));
	} else {
		tag = MSG_RESULT;
		if (write_all(fd, &tag, 1) == 0)
			write_result(&cs, &res);
	}
	close(fd);
	_exit(0);
}

/* What read_msg returns when the child is gone (receive decides). */
#define RUN_GONE (-4)

/* read_all for a message body: -2 at the deadline, RUN_GONE when the child
 * is gone. */
static int read_msg(int fd, void *buf, size_t len, double deadline)
{
	int rc = read_all(fd, buf, len, deadline);

	return rc == -1 ? RUN_GONE : rc;
}

/* Reads what write_result wrote into *r; its x (malloc'd) is the caller's
 * to release, after an error too. */
static int read_result(int fd, const struct milp *m, double deadline, struct milp_result *r,
		       struct cm_error *err)
{
	struct msg_result mr;
	int rc;

	if ((rc = read_msg(fd, &mr, sizeof(mr), deadline)))
		return rc;
	*r = (struct milp_result){ .status = mr.status, .objective = mr.objective,
				   .bound = mr.bound, .has_bound = mr.has_bound };
	if (!mr.has_x)
		return 0;
	r->x = malloc((size_t)m->ncols * sizeof(double) + 1);
	if (r->x == NULL)
		return cm_errorf(err, "out of memory");
	return read_msg(fd, r->x, (size_t)m->ncols * sizeof(double), deadline);
}

/* The runner's children: the read end of each one's pipe, and whether it
 * has sent its result. */
struct child {
	pid_t pid;
	int fd, done;
};

/* Waits up to `wait` seconds for a child still running to have something
 * to read: its index, or -1. */
static int wait_readable(const struct child *ch, int jobs, double wait)
{
	struct pollfd pfd[RUN_MAX_JOBS];
	int r;

	for (int c = 0; c < jobs; c++)
		pfd[c] = (struct pollfd){ ch[c].done ? -1 : ch[c].fd, POLLIN, 0 };
	/* A signal (EINTR) returns at once: the caller looks at
	 * stop_requested() again. */
	r = poll(pfd, (nfds_t)jobs, wait > 0 ? (int)(wait * 1000) + 1 : 0);
	for (int c = 0; r > 0 && c < jobs; c++)
		if (pfd[c].revents)
			return c;
	return -1;
}

/* The LPs of a sweep that arrived before an earlier one: on_lp sees them
 * in the sweep's order whatever child finishes first, so that a sweep
 * shared by several children gives the answer of one that is not. */
struct inbox {
	struct milp_result *lp; /* n, the ones that arrived */
	char *have;
	int n;                  /* LPs: n_sweep, or 1 without a sweep */
	int next;               /* the LP that on_lp is to see next */
};

/* Passes on the LPs that are next in order, skipping those that a child
 * ended without (its sweep stopped). 1 when on_lp asks to stop, else 0. */
static int deliver(struct inbox *in, const struct child *ch, int jobs,
		   const struct solve_opts *o)
{
	while (in->next < in->n) {
		int k = in->next;

		if (in->have[k]) {
			int stop = o->on_lp(o->lp_ctx, k, &in->lp[k]);

			milp_result_release(&in->lp[k]);
			in->have[k] = 0;
			in->next++;
			if (stop)
				return 1;
		} else if (ch[k % jobs].done) {
			in->next++;
		} else {
			break;
		}
	}
	return 0;
}

/* The inbox for a sweep of o's (see deliver), or none without on_lp. 0, or
 * -1 with err set; inbox_release frees it either way. */
static int inbox_init(struct inbox *in, const struct solve_opts *o, struct cm_error *err)
{
	if (o->on_lp == NULL)
		return 0;
	in->n = o->n_sweep > 1 ? o->n_sweep : 1;
	in->lp = calloc((size_t)in->n, sizeof(*in->lp));
	in->have = calloc((size_t)in->n, 1);
	if (in->lp == NULL || in->have == NULL)
		return cm_errorf(err, "out of memory");
	return 0;
}

static void inbox_release(struct inbox *in)
{
	for (int k = 0; in->have && k < in->n; k++)
		milp_result_release(&in->lp[k]);
	free(in->lp);
	free(in->have);
}

/* The parent's side of a solve while it receives (see receive). */
struct receiver {
	const struct milp *m;
	const struct solve_opts *o;
	double deadline;           /* 0: none */
	struct milp_result *res;   /* child 0's result */
	struct cm_error *err;
	struct child ch[RUN_MAX_JOBS];
	int jobs;
	int running;               /* children yet to send their result */
	struct inbox in;
	struct solve_progress known; /* what the children reported so far */
	double t0, next_report;
	double *inc_x;             /* the best solution child 0 reported, or NULL */
	double inc_obj;
};

/* Nothing to read: when a report is due, what is known goes to
 * o->progress, and the next is due a second later. */
static void tick(struct receiver *rv)
{
	const struct solve_opts *o = rv->o;

	if (cm_clock() >= rv->next_report && o->progress) {
		rv->known.elapsed = cm_clock() - rv->t0;
		o->progress(o->ctx, &rv->known);
	}
	if (cm_clock() >= rv->next_report)
		rv->next_report = cm_clock() + 1.0;
}

/* A progress report's body: it only updates what is known. */
static int take_progress(struct receiver *rv, int fd)
{
	struct solve_progress p;
	int rc;

	if ((rc = read_msg(fd, &p, sizeof(p), rv->deadline)))
		return rc;
	if (p.has_incumbent) {
		rv->known.incumbent = p.incumbent;
		rv->known.has_incumbent = 1;
	}
	if (p.has_bound) {
		rv->known.bound = rv->res->bound = p.bound;
		rv->known.has_bound = rv->res->has_bound = 1;
	}
	return 0;
}

/* An LP of a sweep: into the inbox, and on to on_lp once those before it
 * have gone. -2 when on_lp asks to stop. */
static int take_lp(struct receiver *rv, int fd)
{
	struct milp_result lp = { 0 };
	struct inbox *in = &rv->in;
	int k, rc;

	if ((rc = read_msg(fd, &k, sizeof(k), rv->deadline)) ||
	    (rc = read_result(fd, rv->m, rv->deadline, &lp, rv->err))) {
		free(lp.x);
		return rc;
	}
	if (rv->o->on_lp == NULL || k < in->next || k >= in->n || in->have[k]) {
		free(lp.x);
		return cm_errorf(rv->err, "garbled message from the solver process");
	}
	in->lp[k] = lp;
	in->have[k] = 1;
	/* As at the deadline: the children are stopped. */
	return deliver(in, rv->ch, rv->jobs, rv->o) ? -2 : 0;
}

/* A better solution from child 0's backend, kept in case the solve is
 * cut short. */
static int take_incumbent(struct receiver *rv, int fd)
{
	size_t len = (size_t)rv->m->ncols * sizeof(double);
	double obj, *x = malloc(len + 1);
	int rc;

	if (x == NULL)
		return cm_errorf(rv->err, "out of memory");
	if ((rc = read_msg(fd, &obj, sizeof(obj), rv->deadline)) ||
	    (rc = read_msg(fd, x, len, rv->deadline))) {
		free(x);
		return rc;
	}
	free(rv->inc_x);
	rv->inc_x = x;
	rv->inc_obj = obj;
	return 0;
}

/* A child's error, which becomes the solve's. */
static int take_error(struct receiver *rv, int fd)
{
	char msg[sizeof(rv->err->msg)];
	int rc;

	if ((rc = read_msg(fd, msg, sizeof(msg), rv->deadline)))
		return rc;
	msg[sizeof(msg) - 1] = '\0';
	return cm_errorf(rv->err, "%s", msg);
}

/* Child c's result: child 0's into res, the others' only mark them done
 * (their LPs came one by one). -2 when on_lp asks to stop. */
static int take_result(struct receiver *rv, int c)
{
	struct milp_result other = { 0 };
	int rc;

	rc = read_result(rv->ch[c].fd, rv->m, rv->deadline, c == 0 ? rv->res : &other, rv->err);
	free(other.x);
	if (rc)
		return rc;
	rv->ch[c].done = 1;
	rv->running--;
	return rv->o->on_lp && deliver(&rv->in, rv->ch, rv->jobs, rv->o) ? -2 : 0;
}

/* Reads child c's next message and acts on it: 0 to go on, else what
 * receive returns. */
static int take_message(struct receiver *rv, int c)
{
	int fd = rv->ch[c].fd, rc;
	char tag;

	if ((rc = read_msg(fd, &tag, 1, rv->deadline)))
		return rc;
	switch (tag) {
	case MSG_PROGRESS:
		return take_progress(rv, fd);
	case MSG_LP:
		return take_lp(rv, fd);
	case MSG_INCUMBENT:
		return take_incumbent(rv, fd);
	case MSG_ERROR:
		return take_error(rv, fd);
	case MSG_RESULT:
		return take_result(rv, c);
	default:
		return cm_errorf(rv->err, "garbled message from the solver process");
	}
}

/* Cut short (rc -2 or -3): the best solution reported, when there is one
 * and no result came, becomes res's. */
static void keep_incumbent(struct receiver *rv, int rc)
{
	if ((rc == -2 || rc == -3) && rv->inc_x && rv->res->x == NULL) {
		rv->res->x = rv->inc_x;
		rv->res->objective = rv->inc_obj;
		rv->res->status = MILP_FEASIBLE;
		rv->inc_x = NULL;
	}
	free(rv->inc_x);
	rv->inc_x = NULL;
}

/* Receives the children's messages until each has sent its result, an
 * error, the deadline, or a stop request, reporting progress about once a
 * second from here (the children's own reports only update what is known)
 * and passing each LP of a sweep to o->on_lp in order. res is child 0's
 * result. Returns 0 with res filled, -1 with err set, -2 at the deadline,
 * when a child dies past its time limit or when on_lp or o->halt asks to
 * stop, -3 at a stop request (res->bound then holds
 * the last bound reported, res->x the last solution with status
 * MILP_FEASIBLE when one was reported). */
static int receive(const struct child *chin, int jobs, const struct milp *m,
		   const struct solve_opts *o, double deadline, struct milp_result *res,
		   struct cm_error *err)
{
	struct receiver rv = {
		.m = m, .o = o, .deadline = deadline, .res = res, .err = err,
		.jobs = jobs, .running = jobs, .known = { .label = o->label },
	};
	int rc;

	rv.t0 = cm_clock();
	rv.next_report = rv.t0 + 1.0;
	memcpy(rv.ch, chin, (size_t)jobs * sizeof(*chin));
	if ((rc = inbox_init(&rv.in, o, err)))
		goto out;
	while (rv.running > 0) {
		double t = cm_clock(), wait = rv.next_report - t;
		int c;

		if (deadline > 0 && deadline - t < wait)
			wait = deadline - t;
		if (wait > RUN_STOP_POLL)
			wait = RUN_STOP_POLL;
		if (stop_requested()) {
			rc = -3;
			goto out;
		}
		if ((deadline > 0 && t >= deadline) || (o->halt && o->halt(o->halt_ctx))) {
			rc = -2;
			goto out;
		}
		if ((c = wait_readable(rv.ch, jobs, wait)) < 0)
			tick(&rv);
		else if ((rc = take_message(&rv, c)))
			goto out;
	}
out:
	/* A child gone without its result died. Past its time limit that
	 * ends the solve as the limit does (Cbc 2.10.8 faults in Cgl's
	 * postprocessing when the limit stops its preprocessing). */
	if (rc == RUN_GONE)
		rc = o->time_limit > 0 && cm_clock() >= rv.t0 + o->time_limit ? -2 :
		     cm_errorf(err, "the solver process died");
	keep_incumbent(&rv, rc);
	inbox_release(&rv.in);
	return rc;
}

int solver_caps_memory(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return 0;
#else
	return 1;
#endif
#else
	return 1;
#endif
}

/* Caps the address space of this (solver) process at its size now plus
 * cap bytes (none when cap is 0 or the size is unknown). */
static void cap_memory(unsigned long long cap)
{
	unsigned long long pages = 0;
	long page = sysconf(_SC_PAGESIZE);
	FILE *f;

	if (cap == 0 || page <= 0 || !solver_caps_memory() ||
	    (f = fopen("/proc/self/statm", "r")) == NULL)
		return;
	if (fscanf(f, "%llu", &pages) == 1 && pages > 0) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)(pages * (unsigned long long)page + cap);
		setrlimit(RLIMIT_AS, &rl);
	}
	fclose(f);
}

/* A new solver process, before it solves: in a process group of its own,
 * so that a terminal's SIGINT goes to the parent alone, which decides
 * what to keep; killed when the parent dies, however it dies; SIGINT
 * ignored and SIGTERM at its default, whatever handlers the parent had;
 * the parent's stop request and children forgotten. Then the signals
 * blocked around fork are let through (old: the mask before). */
static void child_setup(pid_t parent, const sigset_t *old, unsigned long long cap)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	/* Out of the terminal's foreground group, a write to it must not
	 * stop the process (stty tostop). */
	signal(SIGTTOU, SIG_IGN);
	setpgid(0, 0);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(1); /* the parent died before prctl */
	stop_child_forget_all();
	stop_clear();
	cap_memory(cap);
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* Starts child `first` of `jobs` (see run_child), with SIGINT and SIGTERM
 * blocked until it is tracked (stop_child_add), so that a second signal
 * cannot miss it. 0, or -1 with err set. */
static int spawn(const struct solver_ops *ops, const struct milp *m, const struct solve_opts *o,
		 int first, int jobs, struct child *ch, struct cm_error *err)
{
	sigset_t block, old;
	pid_t parent = getpid();
	int fds[2];

	if (pipe(fds) != 0)
		return cm_errorf(err, "pipe: %s", strerror(errno));
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	ch->pid = fork();
	if (ch->pid == 0) {
		close(fds[0]);
		child_setup(parent, &old, o->memory_cap);
		run_child(ops, m, o, first, jobs, fds[1]);
	}
	if (ch->pid > 0) {
		setpgid(ch->pid, ch->pid); /* as the child does: whichever runs first */
		stop_child_add(ch->pid);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (ch->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return cm_errorf(err, "fork: %s", strerror(errno));
	}
	close(fds[1]);
	ch->fd = fds[0];
	ch->done = 0;
	return 0;
}

int solver_solve(const struct solver_ops *ops, const struct milp *m,
		 const struct solve_opts *o, struct milp_result *res,
		 struct cm_error *err)
{
	struct child ch[RUN_MAX_JOBS];
	int jobs = 1, started, rc = 0, crashed = 0;
	double deadline = 0;

	if (o->relaxation && o->on_lp && o->jobs > 1)
		jobs = o->jobs < o->n_sweep ? o->jobs : o->n_sweep;
	if (jobs > RUN_MAX_JOBS)
		jobs = RUN_MAX_JOBS;
	memset(res, 0, sizeof(*res));
	if (stop_requested() || (o->deadline > 0 && cm_clock() >= o->deadline)) {
		res->status = MILP_NO_SOLUTION;
		res->stopped = stop_requested();
		return 0;
	}
	fflush(NULL);
	for (started = 0; started < jobs; started++)
		if ((rc = spawn(ops, m, o, started, jobs, &ch[started], err)))
			break;
	if (rc == 0) {
		if (o->time_limit > 0)
			deadline = cm_clock() + o->time_limit + RUN_GRACE;
		if (o->deadline > 0 && (deadline == 0 || o->deadline < deadline))
			deadline = o->deadline;
		rc = receive(ch, jobs, m, o, deadline, res, err);
	}
	for (int c = 0; c < started; c++) {
		int wstatus;

		close(ch[c].fd);
		if (rc && kill(-ch[c].pid, SIGKILL) != 0)
			kill(ch[c].pid, SIGKILL);
		while (waitpid(ch[c].pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		stop_child_remove(ch[c].pid);
		/* A child that answered exits 0; one that died otherwise
		 * crashed (a signal, or the exit status a sanitizer gives
		 * after its report). */
		if (rc && rc != -2 && rc != -3 && !crashed &&
		    ((WIFSIGNALED(wstatus) && WTERMSIG(wstatus) != SIGKILL) ||
		     (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0))) {
			char how[64];

			if (WIFSIGNALED(wstatus))
				snprintf(how, sizeof(how), "signal %d: %s", WTERMSIG(wstatus),
					 strsignal(WTERMSIG(wstatus)));
			else
				snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(wstatus));
			cm_errorf(err, "%s crashed (%s)%s", ops->name, how,
				  o->memory_cap && solver_caps_memory() ?
				  ", its memory capped (--memory-limit)" : "");
			crashed = 1;
		}
	}
	if (rc == -2 || rc == -3) {
		/* A solution kept is a MILP incumbent; a sweep's LPs went to
		 * on_lp one by one. */
		if (res->x == NULL || jobs > 1)
			res->status = MILP_NO_SOLUTION;
		res->stopped = rc == -3;
		rc = 0;
	}
	if (crashed)
		rc = SOLVER_CRASHED;
	if (rc)
		milp_result_release(res);
	return rc;
}

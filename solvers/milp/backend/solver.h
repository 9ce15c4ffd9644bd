/* MILP backends behind one table of function pointers (SQLite's VFS, SCIP's
 * LP interface), and the runner that bounds any of them in time. */
#ifndef CM_SOLVER_H
#define CM_SOLVER_H

#include <stddef.h>

#include "milp.h"

struct solve_progress {
	double elapsed;   /* seconds since the solve began */
	double incumbent; /* objective of the best solution, when has_incumbent */
	double bound;     /* best proven lower bound, when has_bound */
	int has_incumbent, has_bound;
	const char *label; /* what is being solved (solve_opts.label), or NULL */
};

/* How the LP relaxation (and GLPK's MIP root) is solved: the backend's
 * default (Clp chooses after its presolve; GLPK runs its dual simplex), a
 * simplex of either kind, or an interior-point method (Clp's barrier with
 * crossover; GLPK's glp_interior, which falls back to the dual simplex
 * when it does not converge). */
enum lp_method { LP_AUTO, LP_DUAL, LP_PRIMAL, LP_BARRIER, LP_METHODS };

/* The names of enum lp_method in order, for --lp-method. */
extern const char *const lp_method_names[LP_METHODS];

/* The enum lp_method called name, or -1. */
int lp_method_find(const char *name);

/* A sweep of a model with more nonzeros than this is large: Clp re-solves
 * each of its LPs from scratch (solvers/milp/backend/cbc.c), and approx shares them
 * among processes (solvers/approx.c). Measured on the LP at eps 0.1 after the
 * one at eps 0 (budgets as fractions of the checkpoint-all peak), warm
 * dual simplex against a fresh solve: U-Net, VGG19, SegNet at 60% 0.0-0.1 s
 * against 0.1-0.2 s; MobileNet at 70% (466,077 nonzeros) 2.7 s against
 * 3.2 s; ResNet50 at 50% (1,795,287 nonzeros) 239 s against 103 s, where
 * Clp's presolve pays. */
#define SWEEP_LARGE_NNZ 1000000

struct solve_opts {
	double time_limit;  /* seconds; <= 0 means none */
	double gap;         /* relative gap at which to stop; 0 proves optimality */
	/* At gap 0: prune only the nodes that cannot improve on the incumbent
	 * by this much (objective units), instead of the backend's default
	 * tolerance; 0 keeps the default. Cbc needs it only for an
	 * objective it cannot take in whole numbers (cbc.c, struct whole);
	 * GLPK takes a relative tolerance of NUM_EPS instead. */
	double prune_tol;
	int threads;        /* 0: the backend's default */
	const double *start; /* a feasible point to start from (ncols values), or NULL */
	int relaxation;     /* solver_solve: solve the LP relaxation (solve_lp) */
	int lp_method;      /* enum lp_method, for solve_lp */
	/* solve_lp only: after the LP, solve it n_sweep - 1 more times, the
	 * upper bounds of the columns sweep_cols[0 .. n_sweep_cols) set to
	 * sweep_ub[k] for the k-th (k >= 1), each from the previous basis
	 * (the dual simplex, which a tightened bound leaves a dual feasible
	 * start) unless sweep_fresh. When on_lp is set, every LP's result,
	 * the first included, goes to it as soon as it is known (in the
	 * caller's process, while the next LP runs); on_lp returns nonzero to
	 * stop the sweep. res holds the first LP's. */
	const int *sweep_cols;
	int n_sweep_cols, n_sweep;
	const double *sweep_ub;
	int (*on_lp)(void *lp_ctx, int k, const struct milp_result *r);
	void *lp_ctx;
	/* Re-solve each LP of the sweep from scratch instead (the Cbc
	 * backend's Clp does so anyway on large models, where it is faster:
	 * solvers/milp/backend/cbc.c). */
	int sweep_fresh;
	/* solver_solve, a sweep with on_lp: how many child processes share
	 * its LPs (LP k goes to child k mod jobs, each child's share solved
	 * as a sweep of its own); on_lp still sees them in order, in this
	 * process. 0 or 1: one child. */
	int jobs;
	/* Names the solve in progress reports ("LP relaxation 2 of 7", say);
	 * may be NULL. */
	const char *label;
	/* Called about once a second while the solve runs, with what is known
	 * so far; may be NULL. */
	void (*progress)(void *ctx, const struct solve_progress *p);
	void *ctx;
	/* solver_solve: asked with halt_ctx, in this process, as often as a
	 * stop request is; nonzero ends the solve as the deadline does, with
	 * what is known (auto's stall stop, solvers/auto.c). NULL: never. */
	int (*halt)(void *halt_ctx);
	void *halt_ctx;
	/* Set by the runner in its solver process: a backend that can calls
	 * it with each better solution it finds (ncols values), and
	 * incumbent_ctx, so that a solve stopped early still has it (GLPK;
	 * Cbc's C interface has no such hook). NULL elsewhere. */
	void (*incumbent)(void *incumbent_ctx, const double *x, double objective);
	void *incumbent_ctx;
	/* Bytes of address space the solver process may take beyond what it
	 * starts with (setrlimit RLIMIT_AS, a safety net under the estimate of
	 * remat_bytes, solvers/milp/remat.h): a backend that grows past it fails in its own
	 * process, which the runner reports. 0: no cap. Not applied in an
	 * ASan build, whose shadow memory the cap would not allow for. */
	unsigned long long memory_cap;
	/* solver_solve: a cm_clock() time (common/clock.h) at which the
	 * solver process is killed whatever time_limit allows (the caller's
	 * own time limit); no solver process is started once it has passed.
	 * 0: none. */
	double deadline;
};

struct solver_ops {
	const char *name; /* --solver value */
	/* Solves m; fills res. Returns 0, or -1 with err set when the solver
	 * itself failed (as opposed to finding no solution). */
	int (*solve)(const struct milp *m, const struct solve_opts *o,
		     struct milp_result *res, struct cm_error *err);
	/* The same for the LP relaxation (integrality dropped): status
	 * MILP_OPTIMAL with x and objective (which is also the bound),
	 * MILP_INFEASIBLE, or MILP_NO_SOLUTION at the time limit. */
	int (*solve_lp)(const struct milp *m, const struct solve_opts *o,
			struct milp_result *res, struct cm_error *err);
};

extern const struct solver_ops solver_glpk, solver_cbc;

/* The backend called name, or NULL; solver_names lists those built. */
const struct solver_ops *solver_find(const char *name);
void solver_names(char *buf, size_t len);

/* The backends built, by index (common/near.h's name_at). */
int solver_count(void);
const char *solver_name_at(const void *ctx, int i);

/* 1 when solver processes get solve_opts.memory_cap (not in ASan builds). */
int solver_caps_memory(void);

/* What solver_solve returns when the backend's process died of a signal (a
 * failed assertion inside Clp, say); err says which. */
#define SOLVER_CRASHED (-2)

/* Runs ops->solve in a child process so that the time limit holds even when
 * a backend does not look at its clock (Cbc in a long root solve): the child
 * is killed a little after the limit and the result is MILP_NO_SOLUTION with
 * the last bound reported (MILP_FEASIBLE when the backend reported a
 * solution through solve_opts.incumbent). Progress reaches o->progress in
 * this process. A crash of the backend stays in the child; one past the
 * time limit is taken as the limit (a fault in Cbc 2.10.8's postprocessing
 * when the limit stops its preprocessing). With o->jobs >
 * 1, a sweep's LPs are shared by that many children; res is still the
 * first LP's. The children run in their own process group (a terminal's
 * SIGINT reaches this process only) and die with it; once stop_requested()
 * they are killed and res is what is known, with res->stopped set (at once,
 * without a child, when the request came before). Returns as ops->solve,
 * or SOLVER_CRASHED. */
int solver_solve(const struct solver_ops *ops, const struct milp *m,
		 const struct solve_opts *o, struct milp_result *res,
		 struct cm_error *err);

#endif

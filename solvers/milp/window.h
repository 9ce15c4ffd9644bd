/* Exact windows of the Checkmate model (solvers/remat.c, docs/model.md):
 * the rows and columns of stages a..b only, with the values kept into
 * stage a and into stage b + 1 taken from an incumbent as constants.
 * Stages are coupled only through S, so a window's optimum spliced into
 * the incumbent is a plan as good as the incumbent outside the window and
 * optimal inside it. Optionally only some values are free: the decisions
 * R(t,i), S(t,i) of every other value are the incumbent's constants, which
 * keeps late stages of a large graph small. */
#ifndef CM_WINDOW_H
#define CM_WINDOW_H

#include <stdint.h>

#include "../../plan/stages.h"
#include "backend/milp.h"
#include "backend/solver.h"

struct window_spec {
	int a, b;              /* stages a..b, 0 <= a <= b < n */
	const uint8_t *free;   /* n flags: values whose decisions are free;
				* NULL: every value */
	uint64_t max_bytes;    /* a window whose solve would take more memory
				* (remat_bytes) is left unsolved, as
				* WINDOW_NO_GAIN; 0: no limit */
	int slack;             /* 1: the memory rows of stage t allow the
				* budget plus a slack column sigma_t, whose
				* weight in the objective exceeds any cost the
				* window can change (window_repair) */
	double deadline;       /* a cm_clock() time: the build stops there
				* (window_build returns 1) and the solver
				* process is killed there; 0: none */
};

struct window_model {
	struct milp milp;
	int n, a, b;
	/* Column of R(t,i), S(t,i) at [(t - a) * n + i]; -1 where the entry
	 * is a constant (the incumbent's, or 0 where the model has no such
	 * variable). */
	int *r, *s;
	double fixed_cost; /* cost of the constant R entries of the window */
	double inc_cost;   /* cost of the incumbent's R in the window */
	uint64_t unit;     /* bytes per memory unit (gcd of the sizes) */
	double ubudget;    /* the budget above fixed memory, in units */
	int *sigma;        /* slack windows: column of sigma_t at [t - a], -1 none */
	double weight;     /* slack windows: objective of a unit of sigma */
	double *start;     /* the incumbent as a point of the model (ncols) */
	int start_ok;      /* 1 when start satisfies every row and bound */
};

/* Builds the window w of the model of g at budget around the incumbent
 * inc (R complete, no unused S: stages_drop_unused). The incumbent's
 * point is left in wm->start. Returns 0, 1 when w->deadline passed
 * before the model was complete (wm released), or -1 with err set.
 * Release with window_release. */
int window_build(const struct graph *g, uint64_t budget, const struct stages *inc,
		 const struct window_spec *w, struct window_model *wm,
		 struct cm_error *err);
void window_release(struct window_model *wm);

/* Cells of window w's index arrays, (b - a + 1)(3n + |E|): the build's
 * time and memory grow with it (4 bytes a cell). */
double window_cells(const struct graph *g, const struct window_spec *w);

/* Writes the S of a solution x (values above 1/2) into st for the
 * window's variable entries; R is left to stages_complete_r. */
void window_extract(const struct window_model *wm, const double *x, struct stages *st);

/* What one window solve did. */
enum window_outcome {
	WINDOW_IMPROVED,   /* a cheaper fitting plan was accepted */
	WINDOW_OPTIMAL,    /* the incumbent is optimal within the window */
	WINDOW_NO_GAIN,    /* stopped at the time limit without a better plan */
	WINDOW_REJECTED,   /* the solver's plan did not replay cheaper and fitting */
	WINDOW_CRASHED,    /* the backend failed or its process died (err says how) */
};

struct window_result {
	int outcome;        /* enum window_outcome */
	int cols, rows, nnz;
	double seconds;     /* build, solve and replay */
	double build_seconds; /* of which the model's build */
	int late;           /* 1 when the deadline (window_spec) ended the
			     * build or the solve: outcome WINDOW_NO_GAIN */
	double bound;       /* the solver's bound on the window's cost, or -1 */
};

/* Solves window w of g at budget around the incumbent (inc, its replayed
 * plan *plan of cost plan->cost) with ops, to optimality within o's time
 * limit, the incumbent as warm start. A solution that replays valid,
 * within budget and cheaper replaces *inc and *plan (the old plan is
 * freed). Returns 0 (what happened in *wr; a crash of the backend is
 * WINDOW_CRASHED, err then says how), or -1 with err set. */
int window_improve(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		   const struct solve_opts *o, const struct window_spec *w,
		   struct stages *inc, struct plan **plan, struct window_result *wr,
		   struct cm_error *err);

/* Overflow of plan p (steps staged, as plan_from_stages makes them) over
 * budget: the sum over stages of (the stage's peak - budget) where
 * positive, in bytes; the largest such term in *worst (may be NULL). A
 * window with slack minimizes the same sum over its own stages. */
double window_overflow(const struct graph *g, const struct plan *p, uint64_t budget,
		       double *worst);

/* Solves window w of g with slack (w->slack is taken as set) around the
 * incumbent inc, which may not fit budget (its replayed plan *plan), with
 * ops within o's limits:
 * the least overflow (window_overflow) the window allows, then the least
 * cost. A solution whose replay is valid and has less overflow, or as
 * little and a lower cost, replaces *inc and *plan (*overflow updated).
 * Returns 0 (what happened in *wr: WINDOW_IMPROVED, WINDOW_OPTIMAL when
 * the incumbent is the window's optimum, ...), or -1 with err set. */
int window_repair(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		  const struct solve_opts *o, const struct window_spec *w,
		  struct stages *inc, struct plan **plan, double *overflow,
		  struct window_result *wr, struct cm_error *err);

#endif

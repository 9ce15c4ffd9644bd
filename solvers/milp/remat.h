/* The Checkmate MILP (paper section 4) over a graph in its file order:
 * stage t computes node t for the first time. Variables R(t,i), S(t,i),
 * U(t,k) and FREE(t,i,k); see docs/model.md for every row and reduction.
 * With copies to host memory (remat_opts.copy), also F(t,i), O(t,i),
 * H(t,i) and the stage clocks E(t), C(t): the stage model with copies
 * (docs/model.md), whose objective is an upper bound on the replayed time
 * of its plan. */
#ifndef CM_REMAT_H
#define CM_REMAT_H

#include "../../plan/sim.h"
#include "../../plan/stages.h"
#include "backend/milp.h"

struct remat_opts {
	/* The first reduction: S(t,i) = 0 when every user of i comes
	 * before t. Not implied by optimality in general (docs/model.md), so
	 * off unless asked for. */
	int prune_past_users;
	/* Big-M form of the paper's (7c) instead of one row per hazard. */
	int aggregate_free;
	/* Leave out the rows "computed only for a reader or to be kept" and
	 * "kept only for a reader or to be kept further" (for measurement). */
	int no_usefulness_rows;
	/* When > 0, a row caps the total cost: sum C_i R(t,i) <= cost_cap
	 * (with copy, the time in units of cost). */
	double cost_cap;
	/* Not NULL: the stage model with copies at these rates and host
	 * budget; the objective is the time, in units of cost over
	 * remat_model.time_unit. */
	const struct sim_copy *copy;
};

struct remat_model {
	struct milp milp;
	int n, n_edges;
	int *r, *s, *u; /* column of R(t,i), S(t,i), U(t,k) at [t * n + i]; -1: fixed at 0 */
	int *f;         /* column of FREE(t,i,k) at [t * n_edges + e] for edge e = (i,k) */
	uint64_t unit;  /* bytes per memory unit of the model (gcd of the sizes) */
	/* With copies: columns of F(t,i) (fetched at stage t's start, read
	 * from t + 1), O(t,i) (offloaded at its start), H(t,i) (a host copy
	 * at its start), at [t * n + i], -1 where absent; E(t) and C(t),
	 * the compute and copy clocks at stage t's end, at [t]. */
	int *cf, *co, *ch, *ce, *cc;
	double time_unit; /* units of cost a unit of the clocks is */
};

/* Builds the model of g at budget (total bytes; budget >= the lower bound of
 * docs/formats.md, Memory model). Returns 0, or -1 with err set. Release with
 * remat_release. */
int remat_build(const struct graph *g, uint64_t budget, const struct remat_opts *o,
		struct remat_model *rm, struct cm_error *err);
void remat_release(struct remat_model *rm);

/* The size of a model, counted. */
struct remat_size {
	uint64_t cols, rows, nnz;
};

/* The columns, rows and nonzeros of the model remat_build makes of g with
 * o (at any budget), counted in O(nodes + edges) time without building it
 * (solvers/remat_size.c), so that a model too large for the memory can be
 * refused before it is built. Exact: tests/t_memory.c compares it with
 * built models. */
void remat_size(const struct graph *g, const struct remat_opts *o, struct remat_size *sz);

/* Fills x with the model's point for the stage matrices st (R complete, S
 * without unused entries): FREE as its definition (5), U by recurrence (3).
 * Returns 0 when x satisfies every row and bound, -1 when it does not (over
 * budget, or it uses a variable the model left out). */
int remat_point(const struct remat_model *rm, const struct graph *g,
		const struct stages *st, double *x);

/* The memory unit of g's models: the gcd of the node sizes (1 when all
 * are 0), so that every memory coefficient is an exact whole number. */
uint64_t remat_unit(const struct graph *g);

/* The upper bound of the U columns at budget (total bytes, fixed memory
 * included): what is left after fixed memory, in whole units. A model
 * re-solved at another budget takes this as its U bound. */
double remat_u_bound(const struct remat_model *rm, const struct graph *g, uint64_t budget);

/* The fractional S of an LP solution: sstar[t * n + i], 0 where the model
 * has no S(t,i). */
void remat_fractional_s(const struct remat_model *rm, const double *x, double *sstar);

/* Reads S (and with copies F and O, st having them) from a solution
 * (values above 1/2) into st and completes R. */
void remat_stages(const struct remat_model *rm, const struct graph *g,
		  const double *x, struct stages *st);

/* Bytes that a model of nnz nonzeros takes, this process's copy and
 * `processes` solver processes solving it (its LP relaxation when
 * relaxation), as measured (docs/usage.md, Memory). */
double remat_bytes(uint64_t nnz, int relaxation, int processes);

#endif

/* The simulator: replays a plan under the memory model (docs/formats.md,
 * Memory model and Plans), and in time when it copies values to host
 * memory and back (Offload to host memory). */
#ifndef CM_PLAN_SIM_H
#define CM_PLAN_SIM_H

#include "plan.h"

/* No budget to check. */
#define SIM_NO_BUDGET UINT64_MAX

struct sim_result {
	int valid;       /* 1 when every step is legal and every node computed */
	int fits;        /* 1 when valid and the peak is within the budget
			  * (and the host peak within the host budget) */
	double cost;     /* sum of the costs of the computes replayed */
	uint64_t peak;   /* highest device memory in use right after a compute
			  * or a fetch */
	double time;     /* with copies (struct sim_copy): seconds to the end
			  * of the last compute, waits included; else 0 */
	double wait;     /* with copies: seconds of that time the compute
			  * stream spent waiting for copies (before the last
			  * compute); else 0 */
	uint64_t host_peak; /* most bytes with a host copy after any offload */
	int bad_step;    /* first illegal or over-budget step, -1 if none or
			  * when the problem is a node never computed */
	char why[400];   /* that problem, "step N: compute 'x': ...", or "" */
};

/* Replays plan p on graph g. Structural problems stop the replay; a peak
 * over the budget is reported at its first step but the replay goes on so
 * that the true peak is known. Returns 0, or -1 (err set) when out of
 * memory; the verdict is in res. */
int plan_simulate(const struct graph *g, const struct plan *p, uint64_t budget,
		  struct sim_result *res, struct cm_error *err);

/* What plan_simulate_trace records as it replays; either array may be
 * NULL. Both are the caller's. */
struct sim_trace {
	uint64_t *memory; /* [p->n]: memory in use after each step (after a
			   * compute with its output, after a free without
			   * the value); 0 past a structural problem */
	int *computes;    /* [g->n]: how many times each node is computed */
};

/* plan_simulate, recording the replay step by step into tr. */
int plan_simulate_trace(const struct graph *g, const struct plan *p, uint64_t budget,
			struct sim_result *res, struct sim_trace *tr, struct cm_error *err);

/* What a replay in time needs (docs/formats.md, Offload to host memory). */
struct sim_copy {
	double bandwidth;        /* bytes a second a copy moves; > 0 */
	double seconds_per_cost; /* seconds a unit of node cost takes; > 0 */
	uint64_t host_budget;    /* most bytes with a host copy; 0 for no limit */
};

/* plan_simulate_trace for a plan that may offload values to host memory
 * and fetch them back, replayed in time with copy as its rates; copy NULL
 * replays as plan_simulate_trace, where an offload or fetch step is a
 * fault. tr may be NULL. */
int plan_simulate_copies(const struct graph *g, const struct plan *p, uint64_t budget,
			 const struct sim_copy *copy, struct sim_result *res,
			 struct sim_trace *tr, struct cm_error *err);

#endif

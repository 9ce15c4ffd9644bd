/* An execution plan: a list of compute and free steps, and offload and
 * fetch steps that copy values to host memory and back (docs/formats.md,
 * Plans and Offload to host memory), with the description that is written
 * next to it. */
#ifndef CM_PLAN_H
#define CM_PLAN_H

#include <stdint.h>

#include "../graph/graph.h"

enum plan_op { PLAN_COMPUTE, PLAN_FREE, PLAN_OFFLOAD, PLAN_FETCH };

struct plan_step {
	int op;    /* enum plan_op */
	int node;  /* graph node index */
	int stage; /* frontier-advancing stage the step belongs to, or -1 */
};

struct plan {
	struct plan_step *steps;
	int n, cap;
	/* What the plan says about itself; filled by the strategy and the
	 * simulator, written by plan_write_*. */
	char strategy[64];      /* "checkpoint-all", "ilp", ... */
	char solver[32];        /* backend name, or "" */
	char param[64];         /* the strategy's parameter point or, for auto,
				 * which methods made the plan and the bound;
				 * "" for none */
	char status[32];        /* "optimal", "feasible", ... */
	uint64_t budget;        /* the budget it was made for, 0 when none */
	double cost;            /* replayed cost */
	uint64_t peak;          /* replayed peak memory */
	double lower_bound;     /* proven bound on the cost, when has_lower_bound */
	int has_lower_bound;
	/* The replay in time (docs/formats.md, Offload to host memory), set
	 * when the plan was made or replayed with a bandwidth: written then
	 * only, so that files made without one stay as they were. */
	int has_time;
	double time;            /* seconds to the end of the last compute */
	double wait;            /* seconds of it spent waiting for copies */
	uint64_t host_peak;     /* most bytes with a host copy */
	double time_bound;      /* seconds: a proven lower bound on the time of
				 * any plan that fits the budget */
};

/* An empty plan; NULL when out of memory. Free with plan_free. */
struct plan *plan_new(void);
void plan_free(struct plan *p);

/* Drops every step, keeps the description. */
void plan_clear(struct plan *p);

/* Appends a step; -1 when out of memory. */
int plan_push(struct plan *p, enum plan_op op, int node, int stage);

/* A step to insert before step at of a plan (at == n: at its end). */
struct plan_edit {
	int at, op, node;
};

/* A copy of p (its description too) with the ne edits inserted (sorted by
 * at; several at one place go in their order) and without step drop (-1:
 * none); NULL when out of memory. */
struct plan *plan_edited(const struct plan *p, const struct plan_edit *e, int ne, int drop);

/* The nodes of a graph of n nodes in the order p first computes them:
 * order[k] is the k-th distinct node computed. Returns how many distinct
 * nodes p computes (n when it computes them all; order holds n ints), or
 * -1 when out of memory. */
int plan_first_computes(const struct plan *p, int n, int *order);

/* The index of p's first offload or fetch step, or -1 when it has none. */
int plan_first_copy(const struct plan *p);

/* "compute", "free", "offload", "fetch": the op as plan files spell it. */
const char *plan_op_name(int op);


#endif

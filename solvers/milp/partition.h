/* The partition of a training graph into two programs, a forward and a
 * backward, as a graph compiler runs a step (torch.compile's AOTAutograd
 * and its partitioner): the forward keeps some of its values for the
 * backward (saved), and the backward computes the other forward values it
 * reads again, from saved values and from each other. Each program's own
 * intermediates are its compiler's to fuse away, except the values marked
 * materialized (a matmul's output, say) that the backward computes again:
 * those are held from just before the first backward node that needs them
 * until their last read (a value computed again that is not materialized
 * is computed inside each program that reads it, and reads its own
 * inputs there). What a budget bounds is those, fixed memory,
 * the saved values (each until the last backward node that needs it), and
 * the backward's own values (each from its compute to its last use; a
 * gradient, which the backward returns, to the end). The cost is the
 * checkpoint-all cost plus the cost of the values computed again (each
 * once) and the save cost of the values saved. The cheapest partition within a budget is a MILP: two binaries
 * per forward node (the turn bound's variables, solvers/milp/turn.h) and
 * memory rows that relax the memory above (exact without materialized
 * values), solved again with exact rows where its answer was over the
 * budget as derived (docs/formats.md, Partitions). */
#ifndef CM_PARTITION_H
#define CM_PARTITION_H

#include <stdint.h>

#include "../../graph/graph.h"
#include "backend/solver.h"

/* The default relative gap of the solve, on the step's whole cost: 0.1%.
 * On the shared gpt12 and the joint graphs of a GPT and a ResNet-50 (torch
 * 2.13) at budgets of 20-90% of the checkpoint-all peak, Cbc reaches it
 * within 0.9 s in 12 of the 14 cases with an answer (gpt12 at 35% ends
 * at the 20 s limit, ResNet-50 at 50% takes 7 s in rounds; docs/usage.md,
 * partition), where a proof at gap 0 can take minutes: the pointwise ops
 * cost 1e-6 of a matmul and tie in many ways. */
#define PARTITION_GAP 1e-3

/* The most solves of one partition, and the most memory rows made exact
 * after each: where the answer before was most over the budget (derived). */
#define PARTITION_ROUNDS 12
#define PARTITION_CUTS 4
/* The least time limit of a round that is not the last, seconds. */
#define PARTITION_ROUND_MIN 1.0

enum partition_status {
	PARTITION_OPTIMAL,    /* no partition within the budget costs less (proven) */
	PARTITION_FEASIBLE,   /* within the budget; the solver stopped before a proof */
	PARTITION_INFEASIBLE, /* none fits: the budget is below least (below), or the
			       * solver proved it (by_solver) */
	PARTITION_NO_PLAN,    /* none found within the budget, none proven */
};

/* The names of enum partition_status, as the JSON and the summary print them. */
extern const char *const partition_status_names[4];

struct partition {
	int status;      /* enum partition_status */
	char *saved;     /* g->n flags: 1 for a forward value the forward keeps */
	char *again;     /* g->n flags: 1 for a forward node the backward computes again */
	double cost;     /* checkpoint-all cost + the cost of again + the save cost
			  * of saved */
	uint64_t memory; /* the peak: fixed memory + the most held at once of the
			  * saved values and the backward's own */
	uint64_t least;  /* a lower bound on any partition's memory: fixed
			  * memory + the backward's own values where they peak */
	int by_solver;   /* infeasible at a budget from least: the solver's proof */
	int n_saved, n_again;
	double bound;    /* a proven lower bound on the cost, when has_bound */
	int has_bound;
};

/* The cheapest partition of g whose memory is at most budget, solved with
 * ops and o (time limit for all rounds, threads, gap; optimal is claimed
 * where the first round's bound meets the cost: at gap 0, an answer of the
 * first round that fits). A solver that stops first leaves the best
 * partition found within the budget (status feasible; the forward keeping
 * nothing, every value computed again, when that fits and the solver found
 * none; no_plan when nothing found fits). The figures are
 * partition_derive's from the saved set, not the solver's.
 * Returns 0 (release p with partition_release), or -1 with err set. */
int partition_solve(const struct graph *g, uint64_t budget, const struct solver_ops *ops,
		    const struct solve_opts *o, struct partition *p, struct cm_error *err);

/* Given p->saved, sets again (the forward nodes the backward reaches
 * through values not saved), saved cut to the values that the backward
 * or again read, and the counts, cost and memory (the model above). 0, or
 * -1 when out of memory. */
int partition_derive(const struct graph *g, struct partition *p);

/* The memory and the cost of the partition whose forward saves every
 * value the backward reads (nothing computed again): what the budget's
 * percentages and the overhead are of. 0, or -1 when out of memory. */
int partition_keep_all(const struct graph *g, uint64_t *memory, double *cost);

void partition_release(struct partition *p);

#endif

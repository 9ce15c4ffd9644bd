/* Peak shaving: a constructive, solver-free way from stage matrices that
 * exceed a budget towards ones that fit. While some stage's memory is over
 * the budget, stop keeping a value through an idle stretch that crosses
 * it (from the stage where the value was last computed or read to the
 * next stage that reads it, where it is then recomputed, with whatever of
 * its inputs is not kept there), choosing the stretch that removes the
 * most overflow per unit of added cost. Stages are scored one at a time
 * exactly, as plan_from_stages would run them. */
#ifndef CM_SHAVE_H
#define CM_SHAVE_H

#include <stdint.h>

#include "../../plan/stages.h"

struct shave_opts {
	double deadline;          /* cm_clock() time to stop at; 0: none */
	int squares;              /* score moves by the squared overflow of each
				   * stage (spreading it out gains), else by the
				   * overflow itself */
	int descent;              /* shave to budgets from the start's peak down
				   * to the budget in this many steps (<= 1: the
				   * budget at once) */
	unsigned long long seed;  /* 0: always the best move; else the best of
				   * randomly perturbed scores */
	int refine;               /* once it fits: keep each recomputed value
				   * instead and shave again, where that is
				   * cheaper */
};

struct shave_stats {
	int moves;            /* stretches dropped or kept */
	int attempts;         /* shave_best: attempts made */
	int best_variant;     /* shave_best: the attempt whose plan it kept */
	double first_overflow, final_overflow; /* window_overflow of the plans */
	double seconds;
};

/* Shaves st (R complete, as stages_complete_r leaves it) of g towards
 * budget until its plan fits, no move reduces the overflow any more, or
 * the deadline passes; once it fits, replaces recomputations by keeps
 * wherever that is cheaper and still fits. st stays a valid stage matrix
 * pair (R complete, unused S dropped). Returns 1 when the plan of st fits,
 * 0 when not, -1 with err set (out of memory). */
int shave_stages(const struct graph *g, uint64_t budget, struct stages *st,
		 const struct shave_opts *o, struct shave_stats *ss, struct cm_error *err);

/* The variants of shave_stages tried in turn from the same start: the
 * overflow or its square, each in 1, 3, 5, 10 budget steps; from the
 * seventh on, random ones (scores perturbed), every other one of the
 * variant whose attempts came closest to fitting so far, the others of
 * each variant in turn. st (R complete) is the start and gets the best
 * result: the cheapest that fits, else the one with the least overflow.
 * Stops at the deadline (0: none), after `attempts` attempts, or once one
 * fits and either the deterministic ones are done or fit_deadline (0:
 * none) has passed. A fitting result is then refined (shave_opts.refine)
 * until that gains nothing, for a quarter of the time left at most (at
 * least a second, never past the deadline). Returns 1 when st fits, 0 when not, -1 with
 * err set. ss (the best attempt's, its moves; attempts counted) may be
 * NULL. */
int shave_best(const struct graph *g, uint64_t budget, struct stages *st, double deadline,
	       double fit_deadline, int attempts, unsigned long long seed,
	       struct shave_stats *ss, struct cm_error *err);

/* The number of deterministic variants shave_best tries first. */
#define SHAVE_VARIANTS 6

#endif

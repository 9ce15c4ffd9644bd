/* Values moved to host memory to fit a budget: a pass over a plan that,
 * where its memory peaks, offloads an idle value and fetches it back
 * before its next use (docs/formats.md, Offload to host memory). */
#ifndef CM_SPILL_H
#define CM_SPILL_H

#include "../../plan/sim.h"

/* A copy of p (a plan without copies) made to fit budget by moving values
 * to the host. While the replay at the rates of copy peaks over budget:
 * at the first step where it peaks, the largest value resident there that
 * the step neither computes nor reads is freed right after its last use
 * before it and fetched back right before its next use (offloaded right
 * after its compute first, unless it already has a host copy; a value
 * with no later use is only freed earlier). Then each fetch moves as
 * early as the budget lets its memory be held, when that does not make
 * the plan slower. Device memory never rises at any step; the plan may
 * still peak over budget when no value is left to move (its replay says
 * so). copy's host budget is not heeded. *moved (may be NULL) counts the values moved. Returns the plan, to
 * free with plan_free, or NULL with err set (out of memory, p with copies
 * or invalid). */
struct plan *spill_to_budget(const struct graph *g, const struct plan *p,
				  uint64_t budget, const struct sim_copy *copy, int *moved,
				  struct cm_error *err);

#endif

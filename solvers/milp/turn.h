/* The turn bound: a lower bound on the cost of every plan of a training
 * graph, from moments every plan has: the first compute of a node c (the
 * loss, the first backward node, and the backward nodes at which the
 * checkpoint-all schedule holds the most memory). What is resident then
 * fits the budget; every value computed before c (an ancestor) that c or
 * a node depending on c reads, and that is not resident then, is
 * computed again after it, with its inputs resident or computed again
 * too. The least cost of those second computes (a small MILP: two
 * binaries per ancestor, one memory row; its LP relaxation here) added
 * to the checkpoint-all cost bounds every plan, in any order, not only
 * the stage model's (docs/model.md, "The turn bound").
 *
 * With copies to host memory (docs/formats.md, Offload to host memory) a
 * value not resident at the turn may also be on the host, copied out
 * before it and back after it on the one copy stream; the least time
 * those copies and the second computes allow bounds the time of every
 * plan with copies (docs/model.md, "The turn bound with copies"). */
#ifndef CM_TURN_H
#define CM_TURN_H

#include <stdint.h>

#include "../../graph/graph.h"
#include "../../plan/sim.h"
#include "backend/solver.h"

/* Solves the LP relaxation of the turn model of g at budget at each of
 * up to 8 nodes, in turn, with ops and o (time limit for them all,
 * threads, deadline, memory cap); *bound gets the best: a proven lower
 * bound on the cost of any plan of g within budget, the checkpoint-all
 * cost plus an LP's value, less its tolerance.
 * With copy (not NULL), the bound is on the time of any plan with copies
 * at copy's rates and host budget, in units of cost (time /
 * copy->seconds_per_cost), the checkpoint-all cost plus the LP's value.
 * Returns 1 with *bound set, 0 when the model gives nothing (g has no
 * backward node, its solver process would pass o->memory_cap, or the
 * solver stopped before its first bound), -1 with err set. A model the solver proves infeasible gives no bound either:
 * the budget's own checks (graph_lower_bound, pebble) say that. */
int turn_bound(const struct graph *g, uint64_t budget, const struct sim_copy *copy,
	       const struct solver_ops *ops, const struct solve_opts *o, double *bound,
	       struct cm_error *err);

#endif

/* The best plan of the table's heuristics, the start of the solvers
 * (solvers/heuristic.c, which also holds the rows of baselines/). */
#ifndef CM_HEURISTIC_H
#define CM_HEURISTIC_H

#include "strategy.h"

/* The cheapest plan of every heuristic of the table that fits rq->budget,
 * replayed, or NULL when none fits (or on failure): a start for the
 * solvers. Checkpoint-all first (alone when it fits), the paper's other
 * heuristics last; a third of rq->time_limit for them all, each one
 * reported to rq->progress as it starts. *sim describes it, its plan's
 * strategy names the heuristic. Caller frees. */
struct plan *strategy_best_heuristic(const struct graph *g, const struct solve_request *rq,
				     struct sim_result *sim);

#endif

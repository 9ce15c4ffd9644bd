/* The strategy layer: runs any strategy of SPEC 4 by name, replays its plan
 * and says what it found. Library code: it never prints. */
#ifndef CM_STRATEGY_H
#define CM_STRATEGY_H

#include <stddef.h>

#include "../plan/sim.h"

struct solve_request {
	const char *strategy; /* SPEC 4 name */
	uint64_t budget;      /* total bytes, fixed memory included */
};

struct solve_outcome {
	struct plan *plan;   /* the replayed plan, or NULL when none was found;
			      * owned, freed by strategy_outcome_release */
	struct sim_result sim;
	char status[32];     /* optimal, feasible, infeasible, unsupported */
	char why[400];       /* for infeasible and unsupported: the reason */
	double seconds;      /* wall time of the strategy and the replay */
};

/* Runs the request on g. A plan that replays over budget is kept (its
 * figures are informative) with status "infeasible"; the status is
 * "optimal" only when proven: for a heuristic, when its cost equals the
 * checkpoint-all cost, below which no plan goes. Returns 0, or -1 with err
 * set (unknown strategy, out of memory, a strategy that produced an
 * invalid plan). */
int strategy_solve(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err);
void strategy_outcome_release(struct solve_outcome *out);

/* Writes the strategy names, comma-separated, for messages. */
void strategy_names(char *buf, size_t len);

#endif

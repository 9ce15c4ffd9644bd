#include "strategy.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../baselines/baseline.h"
#include "../graph/num.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void strategy_names(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < baseline_count && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 baseline_table[i].name);
}

void strategy_outcome_release(struct solve_outcome *out)
{
	plan_free(out->plan);
	out->plan = NULL;
}

int strategy_solve(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err)
{
	const struct baseline *b = baseline_find(rq->strategy);
	uint64_t lb = graph_lower_bound(g);
	double t0 = now(), floor_cost = graph_total_cost(g);
	char names[256];

	memset(out, 0, sizeof(*out));
	if (b == NULL) {
		strategy_names(names, sizeof(names));
		return cm_errorf(err, "unknown strategy '%s' (known: %s)", rq->strategy, names);
	}
	if (rq->budget < lb) {
		snprintf(out->status, sizeof(out->status), "infeasible");
		snprintf(out->why, sizeof(out->why),
			 "budget %llu is below %llu, the least any plan needs",
			 (unsigned long long)rq->budget, (unsigned long long)lb);
		out->seconds = now() - t0;
		return 0;
	}
	out->plan = plan_new();
	if (out->plan == NULL)
		return cm_errorf(err, "out of memory");
	if (b->run(g, rq->budget, out->plan, err) ||
	    plan_simulate(g, out->plan, rq->budget, &out->sim, err))
		goto fail;
	if (!out->sim.valid) {
		cm_errorf(err, "internal error: strategy %s made an invalid plan: %s",
			  b->name, out->sim.why);
		goto fail;
	}
	snprintf(out->plan->strategy, sizeof(out->plan->strategy), "%s", b->name);
	out->plan->budget = rq->budget;
	out->plan->cost = out->sim.cost;
	out->plan->peak = out->sim.peak;
	if (!out->sim.fits) {
		snprintf(out->status, sizeof(out->status), "infeasible");
		snprintf(out->why, sizeof(out->why), "%s peaks at %llu, over the budget %llu",
			 b->name, (unsigned long long)out->sim.peak,
			 (unsigned long long)rq->budget);
	} else if (num_le(out->sim.cost, floor_cost)) {
		snprintf(out->status, sizeof(out->status), "optimal");
		out->plan->has_lower_bound = 1;
		out->plan->lower_bound = floor_cost;
	} else {
		snprintf(out->status, sizeof(out->status), "feasible");
	}
	snprintf(out->plan->status, sizeof(out->plan->status), "%s", out->status);
	out->seconds = now() - t0;
	return 0;
fail:
	strategy_outcome_release(out);
	return -1;
}

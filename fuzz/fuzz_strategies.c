/* The solver-free strategies (the STRATEGY_HEURISTIC rows: the paper's
 * heuristics, dtr, kusumoto-approx) on graphs of at most 40 nodes that the
 * reader accepts, at three budgets from the lower bound to the
 * checkpoint-all peak. Each run ends without error (or with a one-line
 * one), and a plan it returns replays valid, costs at least the
 * checkpoint-all cost, and fits the budget when its status says so. The
 * seeds are fuzz_graph's. */
#include "fuzz.h"

#include "../common/num.h"
#include "../graph/read.h"
#include "../plan/sim.h"
#include "../solvers/strategy.h"

#define MAX_NODES 40

static void check_outcome(const struct graph *g, uint64_t budget, const struct solve_outcome *o)
{
	struct sim_result res;
	struct cm_error err;

	if (o->why[0])
		fuzz_check_message(o->why);
	if (o->plan == NULL) {
		FUZZ_CHECK(o->status != STATUS_OPTIMAL && o->status != STATUS_FEASIBLE,
			   "a status that promises a plan, and none");
		return;
	}
	FUZZ_CHECK(plan_simulate(g, o->plan, budget, &res, &err) == 0, "plan_simulate failed");
	FUZZ_CHECK(res.valid, "a strategy's plan does not replay");
	FUZZ_CHECK(res.peak == o->sim.peak && num_eq(res.cost, o->sim.cost),
		   "a strategy reports other figures than the replay");
	FUZZ_CHECK(num_le(graph_total_cost(g), res.cost), "a plan cheaper than checkpoint-all");
	if (o->status == STATUS_OPTIMAL || o->status == STATUS_FEASIBLE)
		FUZZ_CHECK(res.fits, "a plan over budget called feasible");
}

static void run_all(const struct graph *g, uint64_t budget)
{
	for (int i = 0; i < strategy_count(); i++) {
		const struct strategy *s = strategy_at(i);
		struct solve_request rq = { .strategy = s->name, .budget = budget, .time_limit = 2 };
		struct solve_outcome o;
		struct cm_error err;

		if (!(s->flags & STRATEGY_HEURISTIC))
			continue;
		if (strategy_solve(g, &rq, &o, &err)) {
			fuzz_check_message(err.msg);
			continue;
		}
		check_outcome(g, budget, &o);
		strategy_outcome_release(&o);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fuzz_stream(data, size);
	struct cm_error err;
	struct graph *g = graph_read_stream(f, "fuzz.json", &err);
	uint64_t lb, peak;

	fclose(f);
	if (g == NULL)
		return 0;
	if (g->n <= MAX_NODES) {
		lb = graph_lower_bound(g);
		peak = graph_peak_all(g);
		run_all(g, peak);
		run_all(g, lb + (peak - lb) / 2);
		run_all(g, lb);
	}
	graph_free(g);
	return 0;
}

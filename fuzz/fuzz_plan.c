/* The plan reader and the simulator, on plans for the built-in linear:3
 * (f0 f1 f2 loss b2 b1 b0): an error is one line; a plan read is replayed,
 * without copies and in time; a valid one costs the sum of its computes,
 * and its JSON reads back the same. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "../common/num.h"
#include "../plan/io.h"
#include "../plan/sim.h"

static void check_plan(const struct graph *g, const struct plan *p)
{
	struct sim_result res;
	struct cm_error err;
	double cost = 0;

	FUZZ_CHECK(plan_simulate(g, p, p->budget ? p->budget : SIM_NO_BUDGET, &res, &err) == 0,
		   "plan_simulate failed");
	if (!res.valid) {
		fuzz_check_message(res.why);
		return;
	}
	for (int i = 0; i < p->n; i++)
		if (p->steps[i].op == PLAN_COMPUTE)
			cost += g->nodes[p->steps[i].node].cost;
	FUZZ_CHECK(num_eq(cost, res.cost), "replayed cost is not the sum of the computes");
	FUZZ_CHECK(res.peak >= g->fixed_memory, "peak below the fixed memory");
	if (!res.fits)
		fuzz_check_message(res.why);
}

/* The replay in time (docs/formats.md, Offload to host memory): a plan
 * without copies gives what it gives without; one with copies a time of
 * at least its computes' (a unit of cost a second), plus its wait. */
static void check_copies(const struct graph *g, const struct plan *p)
{
	struct sim_copy c = { .bandwidth = 0.5, .seconds_per_cost = 1 };
	uint64_t budget = p->budget ? p->budget : SIM_NO_BUDGET;
	struct sim_result a, b;
	struct cm_error err;

	FUZZ_CHECK(plan_simulate(g, p, budget, &a, &err) == 0 &&
		   plan_simulate_copies(g, p, budget, &c, &b, NULL, &err) == 0,
		   "plan_simulate_copies failed");
	if (plan_first_copy(p) < 0) {
		FUZZ_CHECK(a.valid == b.valid && a.fits == b.fits && num_eq(a.cost, b.cost) &&
			   a.peak == b.peak && strcmp(a.why, b.why) == 0 && b.wait == 0 &&
			   b.host_peak == 0, "a plan without copies replays otherwise in time");
		return;
	}
	FUZZ_CHECK(!a.valid, "a plan with copies replays without a bandwidth");
	if (!b.valid) {
		fuzz_check_message(b.why);
		return;
	}
	FUZZ_CHECK(num_le(b.cost, b.time) && num_eq(b.time, b.cost + b.wait) && b.wait >= 0,
		   "time is not the computes' plus the wait");
	FUZZ_CHECK(b.peak >= g->fixed_memory, "peak below the fixed memory");
	if (!b.fits)
		fuzz_check_message(b.why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct graph *g;
	struct cm_error err;
	struct plan *p;
	FILE *f;

	if (g == NULL)
		g = graph_linear(3, &err);
	FUZZ_CHECK(g != NULL, "graph_linear");
	f = fuzz_stream(data, size);
	p = plan_read_stream(f, "fuzz.json", g, &err);
	fclose(f);
	if (p == NULL) {
		fuzz_check_message(err.msg);
		return 0;
	}
	check_plan(g, p);
	check_copies(g, p);
	plan_free(p);
	return 0;
}

/* The shave row (solvers/shave.c): every plan replays valid, within its
 * budget, at the reported cost, never below the checkpoint-all floor nor
 * the ilp optimum; measured against the ilp on small random DAGs, the
 * unit linear graphs at every budget, and two shared graphs. */
#include <stdlib.h>
#include <string.h>

#include "../common/num.h"
#include "../graph/read.h"
#include "../plan/sim.h"
#include "../solvers/strategy.h"
#include "gen.h"
#include "tap.h"

struct tally {
	int runs, found, bad, with_opt, at_opt, feasible;
	double worst;  /* largest cost / optimum */
};

/* Runs the shave row at budget and checks its plan; opt is the ilp's
 * optimum (< 0: unknown or none). */
static void run(const struct graph *g, uint64_t budget, double opt, struct tally *ty)
{
	struct solve_request rq = { .strategy = "shave", .budget = budget };
	struct solve_outcome o;
	struct sim_result sim;
	struct cm_error err;

	ty->runs++;
	ty->feasible += opt >= 0;
	if (strategy_solve(g, &rq, &o, &err)) {
		diag("%s at %llu: %s", g->id, (unsigned long long)budget, err.msg);
		ty->bad++;
		return;
	}
	if (o.plan) {
		plan_simulate(g, o.plan, budget, &sim, &err);
		if (!sim.valid || !sim.fits || sim.peak > budget || !num_eq(sim.cost, o.sim.cost) ||
		    (o.status != STATUS_FEASIBLE && o.status != STATUS_OPTIMAL) ||
		    num_lt(sim.cost, graph_total_cost(g)) || (opt >= 0 && num_lt(sim.cost, opt))) {
			diag("%s at %llu: bad plan (%s, cost %g, optimum %g)", g->id,
			     (unsigned long long)budget, sim.why, sim.cost, opt);
			ty->bad++;
		}
		ty->found++;
		if (opt > 0) {
			ty->with_opt++;
			ty->at_opt += num_le(sim.cost, opt);
			if (sim.cost / opt > ty->worst)
				ty->worst = sim.cost / opt;
		}
	} else if (o.status != STATUS_NO_PLAN) {
		diag("%s at %llu: no plan, status %s", g->id, (unsigned long long)budget,
		     strategy_status_names[o.status]);
		ty->bad++;
	}
	strategy_outcome_release(&o);
}

static void report(const struct tally *ty, const char *what, double pct)
{
	diag("%s: %d runs, %d with a plan (the ilp has %d), %d of %d at the optimum, "
	     "worst ratio %.3f", what, ty->runs, ty->found, ty->feasible, ty->at_opt,
	     ty->with_opt, ty->worst);
	ok(ty->bad == 0, "%s: every plan replays valid, within budget, at its cost, no "
	   "cheaper than the optimum", what);
	ok(ty->found >= pct * ty->feasible, "%s: a plan at %d of %d budgets where one exists",
	   what, ty->found, ty->feasible);
}

/* Random DAGs at budgets from the lower bound to the peak, against the ilp. */
static void random_dags(int training, int count, struct tally *ty)
{
	for (int k = 0; k < count; k++) {
		/* Training graphs of 3-7 forward nodes: the ilp proves those
		 * in a second or two. */
		struct graph *g = training ? gen_random_training(3 + k % 5, 30)
					   : gen_dag(5 + k % 10, 20 + 5 * (k % 5), 1, 9);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

		for (int s = 0; s <= 3; s++) {
			uint64_t b = lb + (peak - lb) * (uint64_t)s / 3;

			run(g, b, gen_ilp_optimum(g, b), ty);
		}
		graph_free(g);
	}
}

int main(void)
{
	struct tally lin = { 0 }, fwd = { 0 }, train = { 0 }, shared = { 0 };
	struct solve_outcome o;
	struct cm_error err;
	char path[512];
	struct graph *g;

	for (int n = 2; n <= tap_cases(16, 8); n++) {
		uint64_t lb, peak;

		g = graph_linear(n, &err);
		lb = graph_lower_bound(g);
		peak = graph_peak_all(g);
		for (uint64_t b = lb; b <= peak; b++)
			run(g, b, -2, &lin);
		graph_free(g);
	}
	lin.feasible = lin.runs; /* every budget from the lower bound fits a chain */
	report(&lin, "linear:2..16 at every budget", 0.9);
	random_dags(0, tap_cases(20, 4), &fwd);
	report(&fwd, "forward-only random DAGs", 0.9);
	random_dags(1, tap_cases(12, 3), &train);
	report(&train, "random training graphs", 0.6);
	for (int k = 0; k < 2; k++) {
		uint64_t lb, peak;

		if (!tap_graph(path, sizeof(path), "%s.json", k ? "unet" : "vgg16"))
			break;
		g = graph_read_file(path, &err);
		if (!ok(g != NULL, "read %s", path))
			continue;
		lb = graph_lower_bound(g);
		peak = graph_peak_all(g);
		for (int f = 1; f <= 3; f++)
			run(g, lb + (peak - lb) / 4 * (uint64_t)f, -2, &shared);
		graph_free(g);
	}
	shared.feasible = shared.runs;
	report(&shared, "vgg16 and unet at f = .25/.5/.75", 1.0);
	g = graph_linear(2001, &err);
	{
		struct solve_request rq = { .strategy = "shave", .budget = graph_peak_all(g) };

		ok(strategy_solve(g, &rq, &o, &err) == 0 && o.status == STATUS_UNSUPPORTED &&
		   o.plan == NULL, "shave declines %d nodes (%s)", g->n, o.why);
		strategy_outcome_release(&o);
	}
	graph_free(g);
	return tap_done();
}

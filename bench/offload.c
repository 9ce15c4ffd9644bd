/* Offload on training graphs, at 30% to 90% of the checkpoint-all peak,
 * replayed in time at a device rate and copy bandwidths of 25 and 50 GB/s:
 * checkpoint-all's plan with values moved to the host to fit the budget
 * (solvers/search/spill.c, no recomputation), and dtr's plan (recomputation only)
 * before and after the pass that turns its recomputes into fetches
 * (solvers/search/offload.c), and dtr-offload's plan (dtr whose evictions may
 * offload, docs/dtr.md). References for issue 64, not optima. Markdown on
 * standard output.
 *   build/bench/offload [-r RATE] GRAPH...
 * RATE: cost units a second for graphs whose costs are not times (default
 * 100T, 100 TFLOP/s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/rate.h"
#include "../baselines/baseline.h"
#include "../graph/read.h"
#include "../solvers/search/offload.h"
#include "../solvers/search/spill.h"
#include "../solvers/search/dtr.h"
#include "../solvers/strategy.h"

/* The time of checkpoint-all's plan with values moved to the host to fit
 * budget (solvers/search/spill.c), as "ms / floor" or "no plan". */
static void spill_cell(const struct graph *g, uint64_t budget, const struct sim_copy *c,
		       double floor)
{
	struct plan *p = plan_new(), *q = NULL;
	struct sim_result r;
	struct cm_error err;

	if (p && baseline_checkpoint_all(g, p, &err) == 0)
		q = spill_to_budget(g, p, budget, c, NULL, &err);
	if (q && plan_simulate_copies(g, q, budget, c, &r, NULL, &err) == 0 && r.fits)
		printf(" %.3f | %.4f | %.3f |", r.time * 1e3, r.time / floor,
		       (double)r.host_peak / (1 << 30));
	else
		printf(" no plan | | |");
	plan_free(p);
	plan_free(q);
}

/* dtr-offload's plan at budget (the strategy, as solve runs it): its time,
 * over the floor, what it takes off dtr's (dtr_time, 0 for no dtr plan),
 * its copies and host peak; the end of the row. */
static void offload_cell(const struct graph *g, uint64_t budget, const struct sim_copy *c,
			 double floor, double dtr_time)
{
	struct solve_request rq = { .strategy = "dtr-offload", .budget = budget, .copy = c };
	struct solve_outcome o;
	struct cm_error err;
	int copies = 0;

	if (strategy_solve(g, &rq, &o, &err) || o.plan == NULL || !o.sim.fits) {
		printf(" no plan | | | | |\n");
		strategy_outcome_release(&o);
		return;
	}
	for (int i = 0; i < o.plan->n; i++)
		copies += o.plan->steps[i].op == PLAN_OFFLOAD || o.plan->steps[i].op == PLAN_FETCH;
	if (dtr_time > 0)
		printf(" %.3f | %.4f | %.4f%% | %d | %.3f |\n", o.sim.time * 1e3, o.sim.time / floor,
		       100 * (dtr_time - o.sim.time) / dtr_time, copies,
		       (double)o.sim.host_peak / (1 << 30));
	else
		printf(" %.3f | %.4f | | %d | %.3f |\n", o.sim.time * 1e3, o.sim.time / floor, copies,
		       (double)o.sim.host_peak / (1 << 30));
	strategy_outcome_release(&o);
}

/* One row: at pct % of the peak and bandwidth bw, dtr's plan, the pass
 * over it, and checkpoint-all's with values moved to the host. */
static void row(const struct graph *g, const char *label, int pct, double bw, double spc)
{
	uint64_t budget = graph_peak_all(g) / 100 * (uint64_t)pct;
	struct sim_copy c = { .bandwidth = bw, .seconds_per_cost = spc };
	struct plan *p = plan_new(), *q = NULL;
	struct sim_result a, b;
	struct cm_error err;
	double floor = 0;
	int n = 0;

	for (int k = 0; k < g->n; k++)
		floor += g->nodes[k].cost * spc;
	printf("| %s | %d%% | %.0f |", label, pct, bw / 1e9);
	spill_cell(g, budget, &c, floor);
	if (p == NULL || dtr_plan(g, budget, NULL, p, &err) != 0 ||
	    plan_simulate_copies(g, p, budget, &c, &a, NULL, &err) || !a.fits) {
		printf(" no dtr plan | | | | | | |");
		offload_cell(g, budget, &c, floor, 0);
		plan_free(p);
		return;
	}
	q = offload_recomputes(g, p, budget, &c, &n, &err);
	if (q == NULL || plan_simulate_copies(g, q, budget, &c, &b, NULL, &err) || !b.fits) {
		fprintf(stderr, "offload: %s: %s\n", label, err.msg);
		b = a;
	}
	printf(" %.3f | %.4f | %.3f | %.4f%% | %d | %.3f | %.3f |", a.time * 1e3,
	       a.time / floor, b.time * 1e3, 100 * (a.time - b.time) / a.time, n,
	       b.wait * 1e3, (double)b.host_peak / (1 << 30));
	offload_cell(g, budget, &c, floor, a.time);
	plan_free(p);
	plan_free(q);
}

int main(int argc, char **argv)
{
	double rate = 100e12;
	struct cm_error err;
	int opt;

	while ((opt = getopt(argc, argv, "r:")) != -1)
		if (opt != 'r' || rate_parse_compute(optarg, &rate, &err)) {
			fprintf(stderr, "usage: offload [-r RATE] GRAPH...\n");
			return 2;
		}
	printf("| graph | budget | GB/s | moved ms | / floor | host GiB | dtr ms | / floor | "
	       "with fetches ms | saved | fetches | wait ms | host GiB | dtr-offload ms | / floor | "
	       "saved | copies | host GiB |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = optind; i < argc; i++) {
		struct graph *g = graph_load(argv[i], &err);
		double spc;

		if (g == NULL) {
			fprintf(stderr, "offload: %s\n", err.msg);
			return 1;
		}
		spc = graph_seconds_per_cost(g) > 0 ? graph_seconds_per_cost(g) : 1 / rate;
		for (int pct = 30; pct <= 90; pct += 10)
			for (int bw = 25; bw <= 50; bw += 25)
				row(g, g->id, pct, bw * 1e9, spc);
		graph_free(g);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

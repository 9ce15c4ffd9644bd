/* build/bench/repair GRAPH BUDGET TIME [START [WINDOW_TIME STAGES VALUES]]:
 * the repair phase (solvers/repair.h) from a plan that does not fit, then
 * lns with the time left; one CSV row on standard output.
 * BUDGET: fF for lb + F (peak - lb), or P% of the checkpoint-all peak.
 * START: "all" (checkpoint-all, the default) or "dtr" (the dtr plan at
 * the smallest of 100%, 95%, ... of the peak where it finds one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/clock.h"
#include "../graph/read.h"
#include "../plan/io.h"
#include "../plan/sim.h"
#include "../solvers/dtr.h"
#include "../solvers/lns.h"
#include "../solvers/repair.h"
#include "../solvers/strategy.h"

static void progress(void *ctx, const struct solve_progress *p)
{
	(void)ctx;
	fprintf(stderr, "%7.1f s  %.0f  %s\n", p->elapsed, p->incumbent, p->label);
}

/* dtr's plan at the tightest budget above budget (in steps of 5% of the
 * peak) where it finds one, or checkpoint-all. */
static struct plan *start_plan(const struct graph *g, uint64_t budget, const char *how)
{
	struct plan *p = plan_new();
	struct cm_error err;
	uint64_t peak = graph_peak_all(g);

	if (strcmp(how, "dtr") == 0)
		for (int pct = 5; (uint64_t)pct * peak / 100 < peak + 1; pct += 5) {
			uint64_t b = (uint64_t)pct * peak / 100;

			if (b < budget)
				continue;
			if (dtr_plan(g, b, NULL, p, &err) == 0) {
				fprintf(stderr, "start: dtr at %d%% of the peak\n", pct);
				return p;
			}
		}
	baseline_checkpoint_all(g, p, &err);
	return p;
}

int main(int argc, char **argv)
{
	struct repair_opts ro = { .window_time_limit = 10, .seed = 1 };
	struct lns_opts lo = { .window_time_limit = 10, .seed = 1 };
	struct plan *start, *fixed = NULL, *out = NULL;
	struct repair_stats rs;
	struct lns_stats ls = { 0 };
	struct sim_result sim;
	struct cm_error err;
	struct graph *g;
	uint64_t lb, peak, budget;
	double limit, t0;
	int fit;

	if (argc < 4) {
		fprintf(stderr, "usage: repair GRAPH fF|P%% TIME [all|dtr [WINDOW_TIME STAGES VALUES]]\n");
		return 2;
	}
	g = graph_load(argv[1], &err);
	if (g == NULL) {
		fprintf(stderr, "repair: %s\n", err.msg);
		return 1;
	}
	lb = graph_lower_bound(g);
	peak = graph_peak_all(g);
	if (argv[2][0] == 'f')
		budget = lb + (uint64_t)(atof(argv[2] + 1) * (double)(peak - lb));
	else
		budget = (uint64_t)(atof(argv[2]) / 100 * (double)peak);
	limit = atof(argv[3]);
	if (argc > 5)
		ro.window_time_limit = lo.window_time_limit = atof(argv[5]);
	if (argc > 6)
		ro.stage_window = atoi(argv[6]);
	if (argc > 7)
		ro.node_window = atoi(argv[7]);
	if (getenv("REPAIR_VERBOSE"))
		ro.progress = lo.progress = progress;
	ro.ops = lo.ops = solver_find("cbc");
	t0 = cm_clock();
	start = start_plan(g, budget, argc > 4 ? argv[4] : "all");
	ro.time_limit = limit - (cm_clock() - t0);
	fit = repair_plan(g, budget, start, &ro, &fixed, &rs, &err);
	if (fit < 0) {
		fprintf(stderr, "repair: %s\n", err.msg);
		return 1;
	}
	fprintf(stderr, "repair: fits %d, overflow %.0f -> %.0f, cost %.0f -> %.0f, %d windows "
		"(%d improved, %d rejected), %.1f s\n", fit, rs.first_overflow, rs.final_overflow,
		rs.first_cost, rs.final_cost, rs.windows, rs.improved, rs.rejected, rs.seconds);
	if (getenv("REPAIR_PLAN")) {
		FILE *f = fopen(getenv("REPAIR_PLAN"), "w");

		if (f) {
			plan_write_text(f, g, fixed);
			fclose(f);
		}
	}
	lo.time_limit = limit - (cm_clock() - t0);
	if (fit && lo.time_limit > 1 && lns_improve(g, budget, fixed, &lo, &out, &ls, &err) != 0) {
		fprintf(stderr, "lns: %s\n", err.msg);
		return 1;
	}
	plan_simulate(g, out ? out : fixed, budget, &sim, &err);
	/* graph,budget,bytes,start,fits,t_fit,repair_cost,final_cost,overhead_repair,
	 * overhead,windows,lns_windows,seconds */
	printf("%s,%s,%llu,%s,%d,%.1f,%.0f,%.0f,%.4f,%.4f,%d,%d,%.1f\n", g->id, argv[2],
	       (unsigned long long)budget, argc > 4 ? argv[4] : "all", sim.fits,
	       fit ? rs.t_fit + (rs.seconds - rs.seconds) : -1, rs.final_cost, sim.cost,
	       rs.final_cost / graph_total_cost(g), sim.cost / graph_total_cost(g), rs.windows,
	       ls.windows, cm_clock() - t0);
	plan_free(start);
	plan_free(fixed);
	plan_free(out);
	graph_free(g);
	return 0;
}

/* Recomputes made copies (plan/offload.c) on training graphs: dtr's plan at
 * 50% to 90% of the checkpoint-all peak, replayed in time at a device rate
 * and copy bandwidths of 25 and 50 GB/s, then the pass over it. A reference
 * for issue 64, not an optimum: the pass only turns recomputes into
 * fetches, at the same budget. Markdown on standard output.
 *   build/bench/offload [-r RATE] GRAPH...
 * RATE: cost units a second for graphs whose costs are not times (default
 * 100T, 100 TFLOP/s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/rate.h"
#include "../graph/read.h"
#include "../plan/offload.h"
#include "../solvers/search/dtr.h"

/* One row: dtr's plan at pct % of the peak and bandwidth bw. */
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
	if (p == NULL || dtr_plan(g, budget, NULL, p, &err) != 0 ||
	    plan_simulate_copies(g, p, budget, &c, &a, NULL, &err) || !a.fits) {
		printf("| %s | %d%% | %.0f | no dtr plan | | | | | |\n", label, pct, bw / 1e9);
		plan_free(p);
		return;
	}
	q = plan_offload_recomputes(g, p, budget, &c, &n, &err);
	if (q == NULL || plan_simulate_copies(g, q, budget, &c, &b, NULL, &err) || !b.fits) {
		fprintf(stderr, "offload: %s: %s\n", label, err.msg);
		b = a;
	}
	printf("| %s | %d%% | %.0f | %.3f | %.4f | %.3f | %.4f%% | %d | %.3f | %.3f |\n", label,
	       pct, bw / 1e9, a.time * 1e3, a.time / floor, b.time * 1e3,
	       100 * (a.time - b.time) / a.time, n, b.wait * 1e3,
	       (double)b.host_peak / (1 << 30));
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
	printf("| graph | budget | GB/s | dtr ms | / floor | with fetches ms | saved | "
	       "fetches | wait ms | host GiB |\n|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = optind; i < argc; i++) {
		struct graph *g = graph_load(argv[i], &err);
		double spc;

		if (g == NULL) {
			fprintf(stderr, "offload: %s\n", err.msg);
			return 1;
		}
		spc = graph_seconds_per_cost(g) > 0 ? graph_seconds_per_cost(g) : 1 / rate;
		for (int pct = 50; pct <= 90; pct += 10)
			for (int bw = 25; bw <= 50; bw += 25)
				row(g, g->id, pct, bw * 1e9, spc);
		graph_free(g);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

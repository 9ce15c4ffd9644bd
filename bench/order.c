/* build/bench/order GRAPH [RESTARTS]: the checkpoint-all peak of GRAPH in
 * file order and in graph_low_memory_order's order (greedy alone, then the
 * best of RESTARTS runs, default 64), with the lower bound and the seconds
 * taken. One CSV row: graph,n,lb,peak_file,peak_greedy,peak_best,restarts,
 * seconds.
 * build/bench/order GRAPH lns-dtr BUDGET TIME: lns_improve (Cbc) from
 * dtr's plan at BUDGET bytes for TIME seconds: one row graph,budget,
 * start_cost,out_of_order,rc,cost,seconds (rc 1: lns could not start). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../graph/order.h"
#include "../graph/read.h"
#include "../plan/sim.h"
#include "../solvers/search/dtr.h"
#include "../solvers/search/lns.h"

static int lns_dtr(const struct graph *g, uint64_t budget, double limit)
{
	struct lns_opts o = { .ops = solver_find("cbc"), .time_limit = limit, .seed = 1 };
	struct plan *start = plan_new(), *out = NULL;
	int *order = malloc((size_t)g->n * sizeof(int)), ooo = 0, rc;
	struct cm_error err;
	char why[256] = "";
	double t0 = cm_clock();

	if (dtr_plan(g, budget, NULL, start, &err)) {
		fprintf(stderr, "order: dtr has no plan at %llu\n", (unsigned long long)budget);
		return 1;
	}
	plan_first_computes(start, g->n, order);
	for (int k = 0; k < g->n; k++)
		ooo |= order[k] != k;
	rc = lns_improve(g, budget, start, &o, &out, NULL, why, sizeof(why), &err);
	if (rc)
		fprintf(stderr, "order: lns: %s\n", rc == 1 ? why : err.msg);
	printf("%s,%llu,%.17g,%d,%d,%.17g,%.1f\n", g->id, (unsigned long long)budget,
	       start->cost, ooo, rc, out ? out->cost : 0, cm_clock() - t0);
	plan_free(start);
	plan_free(out);
	free(order);
	return rc != 0;
}

/* The least f (5% steps) where dtr finds a plan, in file order and in the
 * low-memory order: graph,f_file,f_order. */
static int dtr_sweep(const struct graph *g)
{
	int *order = malloc((size_t)g->n * sizeof(int));
	struct cm_error err;
	struct graph *h;
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
	double least[2] = { -1, -1 };

	graph_low_memory_order(g, 256, 1, order, &err);
	h = graph_permute(g, order, &err);
	for (int w = 0; w < 2; w++)
		for (int pct = 0; pct <= 100 && least[w] < 0; pct += 5) {
			struct plan *p = plan_new();

			if (dtr_plan(w ? h : g, lb + (peak - lb) * (uint64_t)pct / 100, NULL, p,
				     &err) == 0)
				least[w] = pct / 100.0;
			plan_free(p);
		}
	printf("%s,%.2f,%.2f\n", g->id, least[0], least[1]);
	graph_free(h);
	free(order);
	return 0;
}

int main(int argc, char **argv)
{
	struct cm_error err;
	struct graph *g;
	int *order, restarts = argc > 2 ? atoi(argv[2]) : 64;
	uint64_t greedy, best;
	double t0;

	if (argc < 2 || (g = graph_read_file(argv[1], &err)) == NULL) {
		fprintf(stderr, "usage: order GRAPH [RESTARTS]%s%s\n", argc < 2 ? "" : ": ",
			argc < 2 ? "" : err.msg);
		return 2;
	}
	if (argc == 3 && strcmp(argv[2], "dtr-sweep") == 0)
		return dtr_sweep(g);
	if (argc == 5 && strcmp(argv[2], "lns-dtr") == 0)
		return lns_dtr(g, strtoull(argv[3], NULL, 10), atof(argv[4]));
	order = malloc((size_t)g->n * sizeof(int));
	greedy = graph_low_memory_order(g, 1, 1, order, &err);
	t0 = cm_clock();
	best = graph_low_memory_order(g, restarts, 1, order, &err);
	printf("%s,%d,%llu,%llu,%llu,%llu,%d,%.2f\n", g->id, g->n,
	       (unsigned long long)graph_lower_bound(g), (unsigned long long)graph_peak_all(g),
	       (unsigned long long)greedy, (unsigned long long)best, restarts, cm_clock() - t0);
	free(order);
	graph_free(g);
	return 0;
}

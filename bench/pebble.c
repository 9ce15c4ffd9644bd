/* build/bench/pebble GRAPH [STATES] [SECONDS]: the largest budget
 * graph_pebble_infeasible proves too small, and the smallest at which
 * graph_pebble_schedule finds a plan, each by bisection between the budget's
 * lower bound (docs/formats.md, Memory model) and the checkpoint-all peak
 * (STATES a node, default GRAPH_PEBBLE_STATES; SECONDS a probe, default 600).
 * One CSV row: graph,n,lb,proven,node,planned,seconds — no plan fits a budget
 * below `proven` (lb when nothing more is shown), `node` cannot be computed
 * within proven - 1, and a plan fits `planned` (the search is not monotone in
 * the budget, so a smaller one may exist). */
#include <stdio.h>
#include <stdlib.h>

#include "../common/clock.h"
#include "../graph/pebble.h"
#include "../graph/read.h"

int main(int argc, char **argv)
{
	struct cm_error err;
	struct graph *g;
	long states = argc > 2 ? atol(argv[2]) : GRAPH_PEBBLE_STATES;
	double seconds = argc > 3 ? atof(argv[3]) : 600, t0 = cm_clock();
	uint64_t lo, hi, proven, planned;
	int *steps;
	long n_steps;
	int node = -1, witness = -1, ancestors;

	if (argc < 2 || (g = graph_load(argv[1], &err)) == NULL) {
		fprintf(stderr, "usage: pebble GRAPH [STATES] [SECONDS]%s%s\n",
			argc < 2 ? "" : ": ", argc < 2 ? "" : err.msg);
		return 2;
	}
	lo = graph_lower_bound(g) - 1;       /* shown too small */
	hi = graph_peak_all(g);              /* not shown too small */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (graph_pebble_infeasible(g, mid, states, seconds, &node, &ancestors)) {
			lo = mid;
			witness = node;
		} else {
			hi = mid;
		}
	}
	proven = lo + 1;
	planned = hi = graph_peak_all(g);    /* checkpoint-all: a plan */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (graph_pebble_schedule(g, mid, states, seconds, &steps, &n_steps, &node,
					  &ancestors) == 1) {
			free(steps);
			planned = hi = mid;
		} else {
			lo = mid;
		}
	}
	printf("%s,%d,%llu,%llu,%s,%llu,%.1f\n", g->id, g->n,
	       (unsigned long long)graph_lower_bound(g), (unsigned long long)proven,
	       witness < 0 ? "" : g->nodes[witness].name, (unsigned long long)planned,
	       cm_clock() - t0);
	graph_free(g);
	return 0;
}

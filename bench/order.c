/* build/bench/order GRAPH [RESTARTS]: the checkpoint-all peak of GRAPH in
 * file order and in graph_low_memory_order's order (greedy alone, then the
 * best of RESTARTS runs, default 64), with the lower bound and the seconds
 * taken. One CSV row: graph,n,lb,peak_file,peak_greedy,peak_best,restarts,
 * seconds. */
#include <stdio.h>
#include <stdlib.h>

#include "../common/clock.h"
#include "../graph/order.h"
#include "../graph/read.h"

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

/* The effect of each model reduction: one graph, one budget, the model
 * built with and without it, solved by a backend with a time cap.
 *   build/bench/reductions GRAPH BUDGET [SOLVER] [CAP_SECONDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/size.h"
#include "../solvers/strategy.h"
#include "../graph/read.h"

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		struct remat_opts o;
	} variants[] = {
		{ "ours (default)", { 0, 0, 0 } },
		{ "without the two usefulness rows", { .no_usefulness_rows = 1 } },
		{ "big-M (7c) instead of split rows", { .aggregate_free = 1 } },
		{ "plus S=0 after the last user (lossy)", { .prune_past_users = 1 } },
	};
	struct cm_error err;
	struct graph *g;
	uint64_t budget;

	if (argc < 3) {
		fprintf(stderr, "usage: reductions GRAPH BUDGET [SOLVER] [CAP]\n");
		return 2;
	}
	g = graph_load(argv[1], &err);
	if (g == NULL || size_parse(argv[2], graph_peak_all(g), &budget, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("| variant | columns | rows | nonzeros | status | cost | bound | seconds |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		struct solve_request rq = { .strategy = "ilp", .budget = budget,
					    .solver = argc > 3 ? argv[3] : "cbc",
					    .time_limit = argc > 4 ? atof(argv[4]) : 600,
					    .model = variants[v].o };
		struct solve_outcome o;

		if (strategy_solve(g, &rq, &o, &err)) {
			printf("| %s | error: %s |\n", variants[v].name, err.msg);
			continue;
		}
		printf("| %s | %d | %d | %d | %s | %.17g | %.17g | %.1f |\n", variants[v].name,
		       o.cols, o.rows, o.nnz, strategy_status_names[o.status], o.plan ? o.sim.cost : -1,
		       o.has_lower_bound ? o.lower_bound : -1, o.seconds);
		fflush(stdout);
		strategy_outcome_release(&o);
	}
	graph_free(g);
	return 0;
}

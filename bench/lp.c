/* Times the LP relaxation of the Checkmate model as approx and --bound
 * solve it: one graph, one budget, one backend and LP method, a time cap.
 *   build/bench/lp GRAPH BUDGET [SOLVER] [METHOD] [CAP_SECONDS]
 * prints graph,solver,method,budget,columns,rows,nonzeros,status,lp,seconds */
#include <stdio.h>
#include <stdlib.h>

#include "../common/size.h"
#include "../solvers/strategy.h"
#include "../common/clock.h"
#include "../graph/read.h"

int main(int argc, char **argv)
{
	struct solve_request rq = { .solver = argc > 3 ? argv[3] : "cbc" };
	const char *method = argc > 4 ? argv[4] : "auto";
	const struct solver_ops *ops = solver_find(rq.solver);
	double cap = argc > 5 ? atof(argv[5]) : 600, t0;
	struct milp_result res = { 0 };
	struct remat_model rm;
	struct cm_error err;
	struct graph *g;
	int got;

	rq.lp_method = lp_method_find(method);
	if (argc < 3 || ops == NULL || rq.lp_method < 0) {
		fprintf(stderr, "usage: lp GRAPH BUDGET [cbc|glpk] [auto|dual|primal|barrier] "
				"[CAP]\n");
		return 2;
	}
	g = graph_load(argv[1], &err);
	if (g == NULL || size_parse(argv[2], graph_peak_all(g), &rq.budget, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t0 = cm_clock();
	got = strategy_lp_relaxation(g, &rq, ops, rq.budget, cap, NULL, &rm, &res, &err);
	if (got < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		return 1;
	}
	printf("%s,%s,%s,%llu,%d,%d,%d,%s,%.17g,%.1f\n", g->id, rq.solver, method,
	       (unsigned long long)rq.budget, rm.milp.ncols, rm.milp.nrows, rm.milp.nnz,
	       got ? "optimal" : res.status == MILP_INFEASIBLE ? "infeasible" : "stopped",
	       got ? res.objective : -1, cm_clock() - t0);
	milp_result_release(&res);
	remat_release(&rm);
	graph_free(g);
	return 0;
}

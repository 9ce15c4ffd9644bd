/* Times the LP relaxation of the Checkmate model: one graph, one budget,
 * one backend and LP method, the runner's time cap.
 *   build/bench/lp GRAPH BUDGET [SOLVER] [METHOD] [CAP_SECONDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../graph/clock.h"
#include "../graph/read.h"
#include "../solvers/remat.h"
#include "../solvers/solver.h"

int main(int argc, char **argv)
{
	const char *solver = argc > 3 ? argv[3] : "cbc";
	const char *method = argc > 4 ? argv[4] : "auto";
	struct solve_opts so = { .time_limit = argc > 5 ? atof(argv[5]) : 600,
				 .relaxation = 1, .lp_method = -1 };
	struct remat_opts ro = { 0 };
	const struct solver_ops *ops = solver_find(solver);
	struct remat_model rm;
	struct milp_result res;
	struct cm_error err;
	struct graph *g;
	uint64_t budget;
	double t0, t1;
	int rc;

	for (int i = 0; i < 4; i++)
		if (strcmp(method, lp_method_names[i]) == 0)
			so.lp_method = i;
	if (argc < 3 || ops == NULL || so.lp_method < 0) {
		fprintf(stderr, "usage: lp GRAPH BUDGET [cbc|glpk] [auto|dual|primal|barrier] [CAP]\n");
		return 2;
	}
	g = graph_load(argv[1], &err);
	if (g == NULL || size_parse(argv[2], graph_peak_all(g), &budget, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t0 = cm_clock();
	if (remat_build(g, budget, &ro, &rm, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t1 = cm_clock();
	rc = solver_solve(ops, &rm.milp, &so, &res, &err);
	printf("%s,%s,%s,%llu,%d,%d,%d,%.1f,%s,%.17g,%.1f\n", g->id, solver, method,
	       (unsigned long long)budget, rm.milp.ncols, rm.milp.nrows, rm.milp.nnz, t1 - t0,
	       rc ? err.msg : res.status == MILP_OPTIMAL ? "optimal"
			    : res.status == MILP_INFEASIBLE ? "infeasible" : "stopped",
	       rc == 0 && res.status == MILP_OPTIMAL ? res.objective : -1, cm_clock() - t1);
	if (rc == 0)
		milp_result_release(&res);
	remat_release(&rm);
	graph_free(g);
	return rc ? 1 : 0;
}

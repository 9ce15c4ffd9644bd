/* Model sizes counted without building (remat_size) against built models,
 * and the memory limit: a model over it is refused with a reason, and
 * auto falls back to what fits. */
#include <string.h>

#include "../common/mem.h"
#include "../graph/read.h"
#include "../solvers/strategy.h"
#include "gen.h"
#include "tap.h"

/* 1 when remat_size(g, o) is the size of the model remat_build makes. */
static int size_matches(const struct graph *g, const struct remat_opts *o, const char *what)
{
	struct remat_model rm;
	struct remat_size sz;
	struct cm_error err;
	int same;

	remat_size(g, o, &sz);
	if (remat_build(g, graph_peak_all(g), o, &rm, &err))
		return ok(0, "%s: build failed: %s", what, err.msg);
	same = sz.cols == (uint64_t)rm.milp.ncols && sz.rows == (uint64_t)rm.milp.nrows &&
	       sz.nnz == (uint64_t)rm.milp.nnz;
	if (!same)
		diag("%s: counted %llu/%llu/%llu, built %d/%d/%d", what,
		     (unsigned long long)sz.cols, (unsigned long long)sz.rows,
		     (unsigned long long)sz.nnz, rm.milp.ncols, rm.milp.nrows, rm.milp.nnz);
	remat_release(&rm);
	return same;
}

/* Every option of the model on graph g. */
static int all_options(const struct graph *g, const char *what)
{
	struct remat_opts o = { 0 };
	int good = 1;

	for (int bits = 0; bits < 16; bits++) {
		o.prune_past_users = bits & 1;
		o.aggregate_free = (bits >> 1) & 1;
		o.no_usefulness_rows = (bits >> 2) & 1;
		o.cost_cap = bits & 8 ? 1e9 : 0;
		good &= size_matches(g, &o, what);
	}
	return good;
}

static void test_sizes(void)
{
	char path[512];
	static const char *const shared[] = { "vgg16", "unet", "fcn8", "segnet" };
	struct cm_error err;
	int good = 1;

	for (int n = 1; n <= 6; n++) {
		struct graph *g = graph_linear(n, &err);

		good &= all_options(g, "linear");
		graph_free(g);
	}
	ok(good, "model sizes counted = built: linear:1 .. linear:6, every option");
	good = 1;
	for (int k = 0; k < tap_cases(40, 10); k++) {
		struct graph *f = gen_dag(2 + (int)(gen_rnd() % 12), 10 + (int)(gen_rnd() % 60), 0, 5);
		struct graph *g = k % 2 ? gen_training(f) : f;

		good &= all_options(g, "random");
		if (g != f)
			graph_free(g);
		graph_free(f);
	}
	ok(good, "model sizes counted = built: random DAGs and training graphs");
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		struct graph *g;
		struct remat_opts o = { 0 };

		if (!tap_graph(path, sizeof(path), "%s.json", shared[i]))
			break;
		if ((g = graph_load(path, &err)) == NULL) {
			ok(0, "%s: %s", path, err.msg);
			continue;
		}
		ok(size_matches(g, &o, shared[i]), "model size counted = built: %s", shared[i]);
		graph_free(g);
	}
}

/* strategy_solve of name on g at budget under limit, auto's time
 * limit short. */
static int solve(const struct graph *g, const char *name, uint64_t budget, uint64_t limit,
		 struct solve_outcome *o)
{
	struct solve_request rq = { .strategy = name, .budget = budget, .memory_limit = limit,
				    .time_limit = 10 };
	struct cm_error err;

	if (strategy_solve(g, &rq, o, &err)) {
		diag("%s: %s", name, err.msg);
		return -1;
	}
	return 0;
}

static void test_refusal(void)
{
	struct cm_error err;
	struct graph *g = graph_linear(8, &err);
	struct solve_outcome o;
	static const char *const refused[] = { "ilp", "approx", "lns" };

	ok(mem_available() > 0, "the memory available is known: %llu bytes",
	   (unsigned long long)mem_available());
	ok(remat_bytes(1000000, 1, 1) < remat_bytes(1000000, 0, 1) &&
	   remat_bytes(1000000, 1, 2) > remat_bytes(1000000, 1, 1) &&
	   remat_bytes(2000000, 1, 1) > remat_bytes(1000000, 1, 1),
	   "estimates: an LP below its MILP, growing with processes and nonzeros");
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (solve(g, refused[i], 8, 1 << 20, &o)) {
			ok(0, "%s under a 1 MiB limit", refused[i]);
			continue;
		}
		ok(o.status == STATUS_UNSUPPORTED && o.plan == NULL &&
		   strstr(o.why, "needs about") && strstr(o.why, "over the --memory-limit 1.00 MiB"),
		   "%s under a 1 MiB limit: refused, '%s'", refused[i], o.why);
		strategy_outcome_release(&o);
	}
	if (solve(g, "auto", 8, 1 << 20, &o) == 0) {
		ok(o.plan && o.sim.fits && (o.status == STATUS_FEASIBLE || o.status == STATUS_OPTIMAL) &&
		   strstr(o.why, "refused for memory: ") && strstr(o.why, "ilp: ") &&
		   strstr(o.why, "approx: ") && strstr(o.why, "lns: "),
		   "auto under a 1 MiB limit: every phase refused, the heuristics' plan (%s, %s)",
		   o.param, o.why);
		strategy_outcome_release(&o);
	}
	if (solve(g, "dtr", 8, 1 << 20, &o) == 0) {
		ok(o.plan && o.status == STATUS_FEASIBLE, "dtr under a 1 MiB limit: no model, a plan");
		strategy_outcome_release(&o);
	}
	graph_free(g);
}

/* A limit between the MILP's estimate and its LP's: auto gives ilp up for
 * approx. */
static void test_fallback(void)
{
	struct cm_error err;
	struct graph *g = graph_linear(12, &err);
	struct remat_opts mo = { 0 };
	struct remat_size sz;
	struct solve_outcome o;
	uint64_t limit;

	remat_size(g, &mo, &sz);
	limit = (uint64_t)((remat_bytes(sz.nnz, 0, 1) +
			    remat_bytes(sz.nnz, 1, 1)) / 2);
	if (solve(g, "auto", 14, limit, &o) == 0) {
		ok(o.plan && o.sim.fits && strstr(o.why, "refused for memory: ") &&
		   strstr(o.why, "ilp: ") && !strstr(o.why, "approx:") &&
		   strstr(o.param, "bound=approx"),
		   "auto with room for the LP but not the MILP: approx instead (%s; %s)",
		   o.param, o.why);
		strategy_outcome_release(&o);
	}
	graph_free(g);
}

/* The safety net: a solver process capped at 1 MiB more than it starts
 * with fails alone, and the runner says so. */
static void test_cap(void)
{
	struct cm_error err;
	struct graph *g = graph_linear(40, &err);
	struct remat_opts mo = { 0 };
	struct remat_model rm;
	struct milp_result res;
	struct solve_opts so = { .memory_cap = 1 << 20 };
	int rc;

	if (!solver_caps_memory()) {
		ok(1, "# SKIP no memory cap in an ASan build");
		graph_free(g);
		return;
	}
	remat_build(g, 60, &mo, &rm, &err);
	rc = solver_solve(&solver_cbc, &rm.milp, &so, &res, &err);
	/* How it fails depends on the heap the process starts with (larger
	 * after the shared graphs were read): Cbc dies in a C++ allocation,
	 * or the model's load reports that it is out of memory. */
	ok((rc == SOLVER_CRASHED && strstr(err.msg, "memory capped") != NULL) ||
	   (rc != 0 && strcmp(err.msg, "out of memory") == 0),
	   "cbc capped at 1 MiB more: its process fails alone (%s)", rc ? err.msg : "solved");
	if (rc == 0)
		milp_result_release(&res);
	so.relaxation = 1;
	rc = solver_solve(&solver_glpk, &rm.milp, &so, &res, &err);
	ok(rc != 0, "glpk capped at 1 MiB more: fails (%s)", rc ? err.msg : "solved");
	if (rc == 0)
		milp_result_release(&res);
	remat_release(&rm);
	graph_free(g);
}

int main(void)
{
	test_sizes();
	test_refusal();
	test_fallback();
	test_cap();
	return tap_done();
}

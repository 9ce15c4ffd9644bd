/* The approx strategy: never over budget, and LP bound <= optimum <= approx. */
#include <math.h>
#include <string.h>

#include "../cli/strategy.h"
#include "../graph/read.h"
#include "gen.h"
#include "tap.h"

struct triple {
	double lp, opt, approx; /* -1 when absent */
	int approx_fits, approx_status_ok;
};

static struct triple run(const struct graph *g, uint64_t budget, const char *solver)
{
	struct solve_request rq = { .strategy = "ilp", .budget = budget, .solver = solver };
	struct solve_outcome o;
	struct cm_error err;
	struct triple t = { -1, -1, -1, 1, 1 };

	if (strategy_solve(g, &rq, &o, &err) == 0 && strcmp(o.status, "optimal") == 0)
		t.opt = o.sim.cost;
	strategy_outcome_release(&o);
	rq.strategy = "approx";
	if (strategy_solve(g, &rq, &o, &err) == 0) {
		if (o.has_lower_bound)
			t.lp = o.lower_bound;
		if (o.plan) {
			t.approx = o.sim.cost;
			t.approx_fits = o.sim.fits && o.sim.peak <= budget;
		}
		/* Infeasible only with a proof; optimal only at the bound. */
		t.approx_status_ok = strcmp(o.status, "optimal") != 0 ||
				     (o.has_lower_bound && o.sim.cost <= o.lower_bound + 1e-6);
	} else {
		diag("approx: %s", err.msg);
		t.approx_fits = 0;
	}
	strategy_outcome_release(&o);
	return t;
}

/* LP <= opt <= approx wherever each exists; approx plans fit. */
static int consistent(const struct triple *t)
{
	double tol = 1e-6 * fmax(1, fabs(t->opt));

	if (!t->approx_fits || !t->approx_status_ok)
		return 0;
	if (t->opt >= 0 && t->lp >= 0 && t->lp > t->opt + tol)
		return 0;
	if (t->opt >= 0 && t->approx >= 0 && t->approx < t->opt - tol)
		return 0;
	/* An infeasible budget has no approx plan. */
	return !(t->opt < 0 && t->approx >= 0);
}

int main(void)
{
	int bad = 0, cases = 0, found = 0;
	char path[512];
	struct cm_error err;

	for (int s = 0; s < 2; s++) {
		const char *solver = s ? "glpk" : "cbc";

		bad = cases = 0;
		for (int n = 2; n <= 8; n++) {
			char name[32];
			struct graph *g;

			snprintf(name, sizeof(name), "linear:%d", n);
			g = graph_load(name, &err);
			for (uint64_t b = graph_lower_bound(g); b <= graph_peak_all(g); b++) {
				struct triple t = run(g, b, solver);

				cases++;
				if (!consistent(&t) && bad++ < 3)
					diag("%s at %llu (%s): lp %g, opt %g, approx %g", name,
					     (unsigned long long)b, solver, t.lp, t.opt, t.approx);
			}
			graph_free(g);
		}
		ok(bad == 0, "%s: LP bound <= optimum <= approx, approx within budget, on linear:2..8 "
		   "at every budget (%d cases)", solver, cases);
	}
	bad = cases = 0;
	for (int trial = 0; trial < 60; trial++) {
		struct graph *g = gen_dag(3 + (int)(gen_rnd() % 6), 40, 0, 6);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
		struct triple t = run(g, lb + gen_rnd() % (peak - lb + 1), "cbc");

		cases++;
		found += t.approx >= 0;
		if (!consistent(&t) && bad++ < 3)
			diag("random DAG %d: lp %g, opt %g, approx %g", trial, t.lp, t.opt, t.approx);
		graph_free(g);
	}
	ok(bad == 0, "the same on 60 random DAGs of 3-8 nodes (approx found a plan in %d)", found);
	snprintf(path, sizeof(path), "%s/vgg16.json", tap_graph_dir());
	{
		struct graph *g = graph_read_file(path, &err);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

		bad = 0;
		for (int f = 1; f <= 3; f++) {
			struct triple t = run(g, lb + (peak - lb) * (uint64_t)f / 4, "cbc");

			diag("vgg16 at f=%d/4: lp %.1f, opt %.0f, approx %.0f", f, t.lp, t.opt, t.approx);
			bad += !consistent(&t) || t.approx < 0;
		}
		ok(bad == 0, "vgg16 at three budgets: LP <= optimum <= approx, approx found and fits");
		graph_free(g);
	}
	return tap_done();
}

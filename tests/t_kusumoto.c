/* Kusumoto et al.'s DP (solvers/kusumoto.c): every plan replays, fits when
 * it says so, and never beats the ilp optimum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../solvers/strategy.h"
#include "../common/clock.h"
#include "../common/num.h"
#include "../plan/sim.h"
#include "../solvers/search/kusumoto.h"
#include "gen.h"
#include "tap.h"

static const char *variant_name[4] = { "approx", "approx+mc", "exact", "exact+mc" };

static void variant(struct kusumoto_opts *o, int v)
{
	kusumoto_opts_init(o);
	o->exact = v >= 2;
	o->memory_centric = v & 1;
}

/* Runs a variant and replays its plan. Returns kusumoto_run's code; *cost
 * and *fits from the replay (cost -1 when no plan). *consistent is cleared
 * when the plan does not replay or its reported figures are not the
 * replay's. */
static int run(const struct graph *g, uint64_t budget, const struct kusumoto_opts *o,
	       double *cost, int *fits, int *consistent)
{
	struct plan *p = plan_new();
	struct cm_error err = { "" };
	struct sim_result res;
	char why[256] = "";
	int r = kusumoto_run(g, budget, o, p, NULL, why, sizeof(why), &err);

	*cost = -1;
	*fits = 0;
	if (r == 0) {
		if (plan_simulate(g, p, budget, &res, &err) || !res.valid) {
			diag("%s at %llu: plan does not replay: %s", g->id,
			     (unsigned long long)budget, res.why);
			*consistent = 0;
		} else {
			*cost = res.cost;
			*fits = res.fits;
			if (!num_eq(res.cost, p->cost) || res.peak != p->peak ||
			    (p->peak <= budget) != res.fits)
				*consistent = 0;
		}
	} else if (r < 0 || why[0] == 0 || err.msg[0]) {
		diag("%s: %s", g->id, r < 0 ? err.msg : "no reason given");
		*consistent = 0;
	}
	plan_free(p);
	return r;
}

static void test_unsupported(void)
{
	struct graph *g = gen_dag(12, 30, 1, 4);
	struct kusumoto_opts o;
	struct plan *p = plan_new();
	struct cm_error err = { "" };
	char why[256] = "";
	int r;

	kusumoto_opts_init(&o);
	r = kusumoto_plan(g, graph_peak_all(g), &o, p, why, sizeof(why), &err);
	ok(r == KUSUMOTO_UNSUPPORTED && why[0] && !err.msg[0] && p->n == 0,
	   "a graph without backward nodes is unsupported (%s)", why);
	graph_free(g);
	plan_free(p);
}

/* linear:2..24 at every integer budget from the lower bound to the peak:
 * every variant gives a plan that replays, and at the peak the
 * checkpoint-all cost; on a chain the pruned family is every lower set, so
 * approx and exact agree. */
static void test_linear(void)
{
	int consistent = 1, nofit = 0, top_ok = 1, agree = 1, runs = 0;

	for (int n = 2; n <= tap_cases(24, 8); n++) {
		struct cm_error err;
		struct graph *g = graph_linear(n, &err);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

		for (uint64_t b = lb; b <= peak; b++) {
			double cost[4];

			for (int v = 0; v < 4; v++) {
				struct kusumoto_opts o;
				int fits, r;

				variant(&o, v);
				r = run(g, b, &o, &cost[v], &fits, &consistent);
				runs++;
				if (r != 0 || !fits)
					nofit++;
				if (b == peak && !(fits && num_eq(cost[v], graph_total_cost(g))))
					top_ok = 0;
			}
			if (!num_eq(cost[0], cost[2]) || !num_eq(cost[1], cost[3]))
				agree = 0;
		}
		graph_free(g);
	}
	ok(consistent, "linear:2..%d, every budget, 4 variants (%d runs): every plan replays "
	   "and reports its replayed cost and peak", tap_cases(24, 8), runs);
	diag("linear: %d of %d runs found no plan that fits", nofit, runs);
	ok(top_ok, "linear: at the checkpoint-all peak every variant costs the checkpoint-all cost");
	ok(agree, "linear: approx and exact give the same cost (the pruned family is every lower set)");
}

/* docs/formats.md, Small facts for tests, and the ilp optimum on small
 * chains. */
static void test_linear_ilp(void)
{
	static const double want[] = { 15, 11, 10, 9 };
	struct cm_error err;
	struct graph *g = graph_linear(4, &err);
	int spec = 1, above = 1, cmp = 0;
	double worst = 1, sum = 0;

	for (int b = 3; b <= 6; b++)
		spec &= num_eq(gen_ilp_optimum(g, (uint64_t)b), want[b - 3]);
	ok(spec, "linear:4: ilp costs 15, 11, 10, 9 at budgets 3..6 (docs/formats.md, small facts)");
	graph_free(g);
	for (int n = 2; n <= tap_cases(8, 4); n++) {
		uint64_t lb, peak;

		g = graph_linear(n, &err);
		lb = graph_lower_bound(g);
		peak = graph_peak_all(g);
		for (uint64_t b = lb; b <= peak; b++) {
			double opt = gen_ilp_optimum(g, b), cost;
			int fits, consistent = 1;
			struct kusumoto_opts o;

			variant(&o, 2);
			run(g, b, &o, &cost, &fits, &consistent);
			if (!fits || opt < 0)
				continue;
			cmp++;
			above &= num_le(opt, cost);
			sum += log(cost / opt);
			if (cost / opt > worst)
				worst = cost / opt;
			if (n == 4)
				diag("linear:4 budget %llu: exact %g, ilp %g",
				     (unsigned long long)b, cost, opt);
		}
		graph_free(g);
	}
	ok(above, "linear:2..%d, every budget: exact DP cost >= ilp optimum (%d fitting)",
	   tap_cases(8, 4), cmp);
	diag("linear exact/ilp: geometric mean %.4f, worst %.4f", exp(sum / (cmp ? cmp : 1)),
	     worst);
}

static void test_random(void)
{
	int consistent = 1, above = 1, cmp[4] = { 0 }, graphs = 0, nofit[4] = { 0 };
	int worse_than_exact = 0;
	double sum[4] = { 0 }, worst[4] = { 1, 1, 1, 1 };

	for (int trial = 0; trial < tap_cases(50, 4); trial++) {
		struct graph *g = gen_random_training(3 + (int)(gen_rnd() % 4), 20 + (int)(gen_rnd() % 40));
		uint64_t lb, peak;

		if (!g)
			continue;
		graphs++;
		lb = graph_lower_bound(g);
		peak = graph_peak_all(g);
		for (int f = 1; f <= 2; f++) {
			uint64_t b = lb + (uint64_t)f * (peak - lb) / 3;
			double opt = gen_ilp_optimum(g, b), cost[4];

			for (int v = 0; v < 4; v++) {
				struct kusumoto_opts o;
				int fits;

				variant(&o, v);
				run(g, b, &o, &cost[v], &fits, &consistent);
				if (!fits) {
					nofit[v]++;
					continue;
				}
				if (opt < 0)
					continue;
				cmp[v]++;
				if (!num_le(opt, cost[v])) {
					above = 0;
					diag("%s trial %d budget %llu: %g below ilp %g", variant_name[v],
					     trial, (unsigned long long)b, cost[v], opt);
				}
				sum[v] += log(cost[v] / opt);
				if (cost[v] / opt > worst[v])
					worst[v] = cost[v] / opt;
			}
			if (cost[0] >= 0 && cost[2] >= 0 && num_lt(cost[2], cost[0]))
				worse_than_exact++;
		}
		graph_free(g);
	}
	ok(graphs == tap_cases(50, 4), "%d random training graphs built", graphs);
	ok(consistent, "random training graphs: every plan replays with its reported figures");
	ok(above, "random training graphs: no fitting DP plan costs less than the ilp optimum");
	for (int v = 0; v < 4; v++)
		diag("%-9s vs ilp: %d fitting of %d, geometric mean %.4f, worst %.4f",
		     variant_name[v], cmp[v], 2 * graphs, exp(sum[v] / (cmp[v] ? cmp[v] : 1)),
		     worst[v]);
	diag("approx dearer than exact at %d of %d budgets", worse_than_exact, 2 * graphs);
	for (int v = 0; v < 4; v++)
		diag("%-9s: no plan that fits at %d of %d budgets", variant_name[v], nofit[v],
		     2 * graphs);
}

static void test_too_large(void)
{
	struct graph *g = gen_random_training(12, 10);
	struct kusumoto_opts o;
	struct plan *p = plan_new();
	struct cm_error err = { "" };
	char why[256] = "";
	int r;

	kusumoto_opts_init(&o);
	o.exact = 1;
	o.max_lower_sets = 5;
	r = kusumoto_plan(g, graph_peak_all(g), &o, p, why, sizeof(why), &err);
	ok(r == KUSUMOTO_TOO_LARGE && why[0] && !err.msg[0] && p->n == 0,
	   "exact DP over its lower set cap says so (%s)", why);
	graph_free(g);
	plan_free(p);
}

int main(void)
{
	double t0 = cm_clock();

	test_unsupported();
	test_too_large();
	test_linear();
	diag("%.1f s", cm_clock() - t0);
	test_linear_ilp();
	diag("%.1f s", cm_clock() - t0);
	test_random();
	diag("%.1f s", cm_clock() - t0);
	return tap_done();
}

/* auto, solve's default: every plan replays within its budget, it is never
 * worse than ilp or the best heuristic, and where ilp proves an optimum
 * auto reaches it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/num.h"
#include "../graph/read.h"
#include "../solvers/heuristic.h"
#include "../solvers/strategy.h"
#include "gen.h"
#include "tap.h"

/* Runs strategy on g at budget within limit seconds; 1 when the answer is
 * sound: no error, and a plan (if any) valid, fitting, at least the
 * checkpoint-all cost and no lower than its bound, which auto always gives
 * (the checkpoint-all cost at least, rounded down). *cost is the plan's
 * cost or -1; *status the outcome's. */
static int judge(const struct graph *g, const char *strategy, uint64_t budget, double limit,
		 double *cost, int *status)
{
	struct solve_request rq = { .strategy = strategy, .budget = budget, .time_limit = limit };
	struct solve_outcome o;
	struct cm_error err;
	int sound;

	*cost = -1;
	*status = -1;
	if (strategy_solve(g, &rq, &o, &err)) {
		diag("%s on %s at %llu: %s", strategy, g->id, (unsigned long long)budget, err.msg);
		return 0;
	}
	*status = o.status;
	sound = o.plan == NULL ||
		(o.sim.valid && o.sim.fits && num_le(graph_total_cost(g), o.sim.cost) &&
		 (!o.has_lower_bound || num_le(o.lower_bound, o.sim.cost)) &&
		 (strcmp(strategy, "auto") ||
		  (o.has_lower_bound && o.lower_bound >= graph_total_cost(g) * (1 - 1e-6))));
	if (o.plan && o.sim.fits)
		*cost = o.sim.cost;
	if (!sound)
		diag("%s on %s at %llu: unsound (%s, cost %g, peak %llu, bound %g)", strategy, g->id,
		     (unsigned long long)budget, strategy_status_names[o.status], o.sim.cost,
		     (unsigned long long)o.sim.peak, o.lower_bound);
	strategy_outcome_release(&o);
	return sound;
}

/* linear:2..8 (quick: 2..4) at every budget: auto proves ilp's optimum. */
static void test_linear_small(void)
{
	int bad = 0, cases = 0, top = tap_cases(8, 4);

	for (int n = 2; n <= top; n++) {
		struct cm_error err;
		struct graph *g = graph_linear(n, &err);

		for (uint64_t b = graph_lower_bound(g); b <= graph_peak_all(g); b++) {
			double a, opt;
			int sa, so;

			cases++;
			if (!judge(g, "auto", b, 0, &a, &sa) || !judge(g, "ilp", b, 0, &opt, &so) ||
			    so != STATUS_OPTIMAL || sa != STATUS_OPTIMAL || !num_eq(a, opt)) {
				if (bad++ < 3)
					diag("linear:%d at %llu: auto %g (%d), ilp %g (%d)", n,
					     (unsigned long long)b, a, sa, opt, so);
			}
		}
		graph_free(g);
	}
	ok(bad == 0, "linear:2..%d at every budget (%d): auto is optimal at ilp's optimum", top,
	   cases);
}

/* linear:9..24 at every budget with the heuristics alone (no time for
 * more): a plan that fits at each. */
static void test_linear_heuristics(void)
{
	int bad = 0, cases = 0, top = tap_cases(24, 10);

	for (int n = 9; n <= top; n++) {
		struct cm_error err;
		struct graph *g = graph_linear(n, &err);

		for (uint64_t b = graph_lower_bound(g); b <= graph_peak_all(g); b++) {
			double a;
			int sa;

			cases++;
			if ((!judge(g, "auto", b, 0.1, &a, &sa) || a < 0) && bad++ < 3)
				diag("linear:%d at %llu: no plan (%d)", n, (unsigned long long)b, sa);
		}
		graph_free(g);
	}
	ok(bad == 0, "linear:9..%d at every budget (%d), heuristics only: a plan that fits",
	   top, cases);
}

/* The heuristics' order: checkpoint-all alone when it fits; with no time
 * left after the first plan, that plan is a general heuristic's, not a
 * paper's sweep (these come last). */
static void test_heuristic_order(void)
{
	struct cm_error err;
	struct graph *g = graph_linear(16, &err);
	struct solve_request rq = { .budget = graph_peak_all(g) };
	struct sim_result sim;
	struct plan *p = strategy_best_heuristic(g, &rq, &sim);

	ok(p && strcmp(p->strategy, "checkpoint-all") == 0,
	   "linear:16 at its peak: checkpoint-all's plan (%s)", p ? p->strategy : "none");
	plan_free(p);
	rq.budget = graph_lower_bound(g) + (graph_peak_all(g) - graph_lower_bound(g)) / 2;
	rq.time_limit = 1e-9;
	p = strategy_best_heuristic(g, &rq, &sim);
	ok(p && strategy_find(p->strategy, NULL) &&
	   !(strategy_find(p->strategy, NULL)->flags & STRATEGY_PAPER),
	   "linear:16 at f = .5 with no time: a general heuristic's plan (%s)",
	   p ? p->strategy : "none");
	plan_free(p);
	graph_free(g);
}

/* 60 random DAGs, half training-like, at f = .25, .5, .75: sound; the
 * first 20 with the time for the MILP (which auto runs on graphs this
 * small) and never worse than ilp, the rest with the heuristics alone
 * (quick: 6, the first 2 with the MILP). */
static void test_random(void)
{
	int bad = 0, found = 0, cases = 0;

	for (int trial = 0; trial < tap_cases(60, 6); trial++) {
		struct graph *f = gen_dag(3 + (int)(gen_rnd() % 6), 30, 1, 5);
		struct graph *g = trial % 2 ? gen_training(f) : f;
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

		for (int q = 1; q <= 3; q++) {
			uint64_t b = lb + (peak - lb) * (uint64_t)q / 4;
			double a, opt;
			int sa, so;

			cases++;
			if (trial >= tap_cases(20, 2)) {
				bad += !judge(g, "auto", b, 0.1, &a, &sa);
				found += a >= 0;
				continue;
			}
			if (!judge(g, "auto", b, 0, &a, &sa) || !judge(g, "ilp", b, 0, &opt, &so) ||
			    (opt >= 0 && (a < 0 || !num_le(a, opt)))) {
				if (bad++ < 3)
					diag("random DAG %d at %llu: auto %g, ilp %g", trial,
					     (unsigned long long)b, a, opt);
			}
			found += a >= 0;
		}
		if (g != f)
			graph_free(g);
		graph_free(f);
	}
	ok(bad == 0, "%d random DAGs (half training-like) at 3 budgets: sound, and no worse "
		     "than ilp on the first %d (%d of %d with a plan)", tap_cases(60, 6),
	   tap_cases(20, 2), found, cases);
}

/* Every shared graph at f = .5 with 2 seconds: sound, and a plan no worse
 * than the best heuristic's given the same time. */
static void test_shared(void)
{
	static const char *const names[] = { "vgg16", "vgg19", "mobilenet", "resnet50", "fcn8",
					      "segnet", "unet", "random_layered_n100",
					      "random_layered_n250", "random_layered_n500",
					      "random_layered_n1000" };
	char path[512];

	for (size_t i = 0; i < (size_t)tap_cases(sizeof(names) / sizeof(names[0]), 1); i++) {
		struct cm_error err;
		struct graph *g;
		struct solve_request rq = { 0 };
		struct sim_result sim;
		struct plan *h;
		uint64_t b;
		double a;
		int sa, sound;

		if (!tap_graph(path, sizeof(path), "%s.json", names[i]))
			return;
		g = graph_read_file(path, &err);
		if (!ok(g != NULL, "%s reads", names[i]))
			continue;
		b = graph_lower_bound(g) + (graph_peak_all(g) - graph_lower_bound(g)) / 2;
		rq.budget = b;
		rq.time_limit = 2; /* the heuristics' share of auto's 2 s */
		h = strategy_best_heuristic(g, &rq, &sim);
		sound = judge(g, "auto", b, 2, &a, &sa);
		ok(sound && (h == NULL || (a >= 0 && num_le(a, sim.cost))),
		   "%s at f = .5: auto %s, overhead %.4f (best heuristic %.4f)", names[i],
		   sa >= 0 ? strategy_status_names[sa] : "failed", a / graph_total_cost(g),
		   h ? sim.cost / graph_total_cost(g) : -1);
		plan_free(h);
		graph_free(g);
	}
}

/* random_layered_n100 at 25,050 bytes, the least any plan needs (node 71
 * alone needs that much): only the pebble row's plan fits there. */
static void test_pebble(void)
{
	struct graph *g;
	struct cm_error err;
	char path[512];
	double a;
	int sa, sound;

	if (!tap_graph(path, sizeof(path), "random_layered_n100.json"))
		return;
	if (!ok((g = graph_read_file(path, &err)) != NULL, "random_layered_n100 reads"))
		return;
	sound = judge(g, "auto", 25050, 4, &a, &sa);
	ok(sound && a > 0,
	   "random_layered_n100 at 25,050 bytes: auto %s, overhead %.4f",
	   sa >= 0 ? strategy_status_names[sa] : "failed", a / graph_total_cost(g));
	graph_free(g);
}

/* ResNet50 at 3.8 GB, above the budget's lower bound (docs/formats.md,
 * Memory model: 3.7 GB) but below what its
 * first backward node needs: no heuristic fits, and auto proves that no
 * plan does at once instead of searching for its whole time limit. */
static void test_proof(void)
{
	struct solve_request rq = { .strategy = "auto", .budget = 3800000000ull, .time_limit = 30 };
	struct solve_outcome o;
	struct cm_error err;
	struct graph *g;
	char path[512];

	if (!tap_graph(path, sizeof(path), "resnet50.json"))
		return;
	g = graph_read_file(path, &err);
	if (!ok(g != NULL && graph_lower_bound(g) < rq.budget, "resnet50 reads"))
		return;
	if (strategy_solve(g, &rq, &o, &err) == 0) {
		ok(o.status == STATUS_INFEASIBLE && o.plan == NULL && strstr(o.param, "bound=pebble") &&
		   o.seconds < 15, "resnet50 at 3.8 GB: %s in %.1f s (%s)",
		   strategy_status_names[o.status], o.seconds, o.why);
		strategy_outcome_release(&o);
	} else {
		ok(0, "resnet50 at 3.8 GB: %s", err.msg);
	}
	graph_free(g);
}

/* gpt at the budget of issue 38: its plan and bound come within a second,
 * then nothing is gained (the MILP proves nothing within minutes). With
 * --param stall=1, auto ends seconds after its phases stop gaining, with
 * the plan it has, and says so. */
static void test_stall(void)
{
	struct strategy_param stall = { "stall", "1" };
	struct solve_request rq = { .strategy = "auto", .budget = 2128102, .time_limit = 30,
				    .params = &stall, .n_params = 1 };
	struct solve_outcome o;
	struct cm_error err;
	struct sim_result sim;
	struct plan *h;
	struct graph *g = graph_read_file("examples/graphs/gpt.json", &err);

	if (!ok(g != NULL, "examples/graphs/gpt.json reads"))
		return;
	h = strategy_best_heuristic(g, &rq, &sim);
	if (strategy_solve(g, &rq, &o, &err) == 0) {
		ok(o.plan && h && o.sim.fits && num_le(o.sim.cost, sim.cost) &&
		   strstr(o.why, "nothing gained for"),
		   "gpt at 2,128,102 bytes, stall=1: %s, cost %.0f (best heuristic %.0f) in %.1f s "
		   "(%s)", strategy_status_names[o.status], o.plan ? o.sim.cost : -1,
		   h ? sim.cost : -1, o.seconds, o.why);
		strategy_outcome_release(&o);
	} else {
		ok(0, "gpt, stall=1: %s", err.msg);
	}
	plan_free(h);
	graph_free(g);
}

/* gpt at the same budget with --gap: dtr's plan is within 0.4% of the
 * turn bound, so at a gap of 1% auto ends after them and says why; at
 * 0.1% it searches on to its time limit. */
static void test_gap(void)
{
	struct solve_request rq = { .strategy = "auto", .budget = 2128102, .time_limit = 2 };
	struct solve_outcome o;
	struct cm_error err;
	struct graph *g = graph_read_file("examples/graphs/gpt.json", &err);

	if (!ok(g != NULL, "examples/graphs/gpt.json reads"))
		return;
	for (int k = 0; k < 2; k++) {
		rq.gap = k ? 0.001 : 0.01;
		if (strategy_solve(g, &rq, &o, &err)) {
			ok(0, "gpt, gap %g: %s", rq.gap, err.msg);
			continue;
		}
		int ended = strstr(o.why, "within the gap") != NULL;

		ok(o.plan && o.sim.fits && o.has_lower_bound &&
		   (k ? !ended && o.seconds > 1.5 :
			ended && o.seconds < 1 && o.sim.cost - o.lower_bound <= rq.gap * o.sim.cost),
		   "gpt at 2,128,102 bytes, gap %g: %s, gap %.3g%% in %.1f s (%s)", rq.gap,
		   strategy_status_names[o.status],
		   o.has_lower_bound ? 100 * (o.sim.cost - o.lower_bound) / o.sim.cost : -1,
		   o.seconds, o.why);
		strategy_outcome_release(&o);
	}
	graph_free(g);
}

int main(void)
{
	test_linear_small();
	test_linear_heuristics();
	test_heuristic_order();
	test_random();
	test_shared();
	test_proof();
	test_pebble();
	test_stall();
	test_gap();
	return tap_done();
}

/* The lns strategy: every plan it returns replays valid and within budget,
 * never costs more than its start, never less than the ILP optimum, and
 * on small graphs mostly reaches that optimum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../solvers/strategy.h"
#include "../common/clock.h"
#include "../common/num.h"
#include "../graph/read.h"
#include "../solvers/search/lns.h"
#include "../solvers/search/restage.h"
#include "../solvers/milp/window.h"
#include "gen.h"
#include "tap.h"

struct tally {
	int runs, reached, bad, proven_wrong;
	int proven;   /* of which lns proved optimal itself (a window of the whole model) */
	int rejected; /* window solutions that did not replay as the model said */
	double worst; /* largest cost / optimum */
};

/* The cheapest fitting plan among the paper's baselines, or NULL. */
static struct plan *best_baseline(const struct graph *g, uint64_t budget)
{
	struct plan *best = NULL;
	double cost = 0;

	for (int k = 0; k < strategy_count(); k++) {
		const struct baseline b = { strategy_at(k)->name, strategy_at(k)->point };
		struct plan *p = NULL;
		struct sim_result sim;
		struct cm_error err;
		char param[64];

		if (b.point && baseline_best(&b, g, budget, &p, &sim, param, sizeof(param),
					     NULL, 0, &err) == 0 && p && sim.fits && (!best || sim.cost < cost)) {
			plan_free(best);
			best = p;
			cost = sim.cost;
			p = NULL;
		}
		plan_free(p);
	}
	return best;
}

/* Runs lns from start at budget and checks its plan; 0 when the plan is
 * wrong (invalid, over budget, costlier than the start, below opt). */
static int check_run(const struct graph *g, uint64_t budget, const struct plan *start,
		     const struct lns_opts *o, double opt, struct tally *ty, const char *what)
{
	struct plan *out = NULL;
	struct lns_stats st;
	struct sim_result sim, s0;
	struct cm_error err;
	char why[256] = "";
	int rc = lns_improve(g, budget, start, o, &out, &st, why, sizeof(why), &err), good = 1;

	if (rc != 0) {
		diag("%s: lns: %s", what, rc == 1 ? why : err.msg);
		ty->bad++;
		return 0;
	}
	if (st.crashed)
		diag("%s: the backend failed on %d windows (skipped)", what, st.crashed);
	plan_simulate(g, start, budget, &s0, &err);
	plan_simulate(g, out, budget, &sim, &err);
	good = sim.valid && sim.fits && sim.peak <= budget && num_le(sim.cost, s0.cost) &&
	       num_eq(sim.cost, out->cost);
	if (opt >= 0) {
		ty->runs++;
		good = good && num_le(opt, sim.cost);
		if (num_le(sim.cost, opt)) {
			ty->reached++;
			ty->proven += st.proven;
		}
		else
			diag("%s: start %g, lns %g, optimum %g (ratio %.4f, %d windows, %d passes)",
			     what, s0.cost, sim.cost, opt, sim.cost / opt, st.windows, st.passes);
		if (sim.cost / opt > ty->worst)
			ty->worst = sim.cost / opt;
		if (st.proven && !num_eq(sim.cost, opt))
			ty->proven_wrong++;
	}
	ty->rejected += st.rejected;
	if (!good) {
		ty->bad++;
		diag("%s: bad plan (valid %d fits %d cost %g start %g opt %g)", what, sim.valid,
		     sim.fits, sim.cost, s0.cost, opt);
	}
	plan_free(out);
	return good;
}

/* A random training graph: a random forward DAG of m nodes, a loss
 * reading the last one, and a gradient per forward node reading the node,
 * its inputs and its users' gradients (as Checkmate's extraction). */
static struct graph *random_training(int m, int edge_pct)
{
	struct cm_error err;
	struct graph *g = graph_new("train");
	int *grad = malloc((size_t)m * sizeof(int));
	char *deps = calloc((size_t)m * (size_t)m, 1);
	char name[16];

	for (int k = 0; k < m; k++) {
		snprintf(name, sizeof(name), "f%d", k);
		graph_add_node(g, name, (double)(1 + gen_rnd() % 9), 1 + gen_rnd() % 5, 0, &err);
		for (int i = 0; i < k; i++)
			if (i == k - 1 || (int)(gen_rnd() % 100) < edge_pct) {
				graph_add_dep(g, i, &err);
				deps[i * m + k] = (char)1;
			}
	}
	graph_add_node(g, "loss", 1, 1, 1, &err);
	graph_add_dep(g, m - 1, &err);
	for (int k = m - 1; k >= 0; k--) {
		snprintf(name, sizeof(name), "b%d", k);
		grad[k] = graph_add_node(g, name, (double)(1 + gen_rnd() % 9), 1 + gen_rnd() % 5, 1,
					 &err);
		graph_add_dep(g, k, &err);
		for (int i = 0; i < k; i++)
			if (deps[i * m + k])
				graph_add_dep(g, i, &err);
		if (k == m - 1)
			graph_add_dep(g, m, &err);
		for (int j = k + 1; j < m; j++)
			if (deps[k * m + j])
				graph_add_dep(g, grad[j], &err);
	}
	graph_finish(g, &err);
	free(grad);
	free(deps);
	return g;
}

/* Every budget between the lower bound and the peak, in `steps` steps. */
static void sweep(const struct graph *g, int steps, const struct lns_opts *o,
		  struct tally *ty, const char *label)
{
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
	char what[128];

	for (int s = 0; s <= steps; s++) {
		uint64_t budget = lb + (peak - lb) * (uint64_t)s / (uint64_t)steps;
		struct plan *start = best_baseline(g, budget);
		double opt;

		if (start == NULL)
			continue;
		opt = gen_ilp_optimum(g, budget);
		snprintf(what, sizeof(what), "%s at %llu", label, (unsigned long long)budget);
		check_run(g, budget, start, o, opt, ty, what);
		plan_free(start);
	}
}

/* The stage conversion of an unstaged plan: the same plan with every
 * stage erased converts back to a fitting plan no costlier. */
static void test_unstaged(const struct graph *g, uint64_t budget, const struct lns_opts *o)
{
	struct plan *start = best_baseline(g, budget), *out = NULL;
	struct sim_result s0, s1;
	struct stages st;
	struct cm_error err;
	char why[256] = "";
	int got, rc;

	if (!ok(start != NULL, "a baseline fits %s at %llu", g->id,
		(unsigned long long)budget))
		return;
	for (int k = 0; k < start->n; k++)
		start->steps[k].stage = -1;
	stages_init(&st, g->n, &err);
	got = restage_plan(g, budget, start, &st, &err);
	ok(got == 1, "an unstaged plan converts to stages (%s)", got == 1 ? "" : err.msg);
	plan_simulate(g, start, budget, &s0, &err);
	if ((rc = lns_improve(g, budget, start, o, &out, NULL, why, sizeof(why), &err)) == 0) {
		plan_simulate(g, out, budget, &s1, &err);
		ok(s1.fits && num_le(s1.cost, s0.cost),
		   "lns from an unstaged start: %g -> %g, fits", s0.cost, s1.cost);
	} else {
		ok(0, "lns from an unstaged start: %s", rc == 1 ? why : err.msg);
	}
	plan_free(out);
	plan_free(start);
	stages_release(&st);
}

/* Deadlines, with no timing: a window whose deadline has passed builds
 * nothing and leaves the incumbent as it was, and no solver process
 * starts past its deadline. */
static void test_deadline(const struct graph *g, uint64_t budget, const struct lns_opts *o)
{
	struct plan *start = best_baseline(g, budget), *inc = NULL;
	struct window_spec ws = { .a = 0, .b = g->n - 1, .deadline = cm_clock() - 1 };
	struct solve_opts so = { .time_limit = 5, .deadline = ws.deadline };
	struct window_model wm;
	struct window_result wr;
	struct milp_result res;
	struct sim_result sim;
	struct stages st = { 0 };
	struct cm_error err;
	double cost;

	if (!ok(start != NULL && stages_init(&st, g->n, &err) == 0 &&
		restage_plan(g, budget, start, &st, &err) == 1 && (inc = plan_new()) &&
		plan_from_stages(g, &st, inc, &err) == 0 &&
		plan_simulate(g, inc, budget, &sim, &err) == 0, "a staged start of %s", g->id))
		goto out;
	inc->cost = cost = sim.cost;
	ok(window_build(g, budget, &st, &ws, &wm, &err) == 1 && wm.milp.ncols == 0,
	   "a window past its deadline is not built");
	ok(window_improve(g, budget, o->ops, &so, &ws, &st, &inc, &wr, &err) == 0 && wr.late &&
	   wr.outcome == WINDOW_NO_GAIN && wr.cols == 0 && num_le(inc->cost, cost) &&
	   num_le(cost, inc->cost), "window_improve past the deadline leaves the incumbent");
	ws.deadline = 0;
	ok(window_build(g, budget, &st, &ws, &wm, &err) == 0 && wm.milp.ncols > 0,
	   "the same window without a deadline is built");
	ok(solver_solve(o->ops, &wm.milp, &so, &res, &err) == 0 && res.x == NULL &&
	   res.status == MILP_NO_SOLUTION, "no solver process past solve_opts.deadline");
	milp_result_release(&res);
	window_release(&wm);
out:
	plan_free(inc);
	plan_free(start);
	stages_release(&st);
}

/* A start over budget is repaired first (solvers/search/repair.h; tests/t_repair.c
 * tests it further), then improved. */
static void test_repaired(const struct graph *g, const struct lns_opts *o)
{
	struct plan *start = plan_new(), *out = NULL;
	struct lns_stats st;
	struct sim_result sim = { 0 };
	struct cm_error err;
	uint64_t budget = graph_peak_all(g) - 1;
	char why[256] = "";
	int rc;

	baseline_checkpoint_all(g, start, &err);
	rc = lns_improve(g, budget, start, o, &out, &st, why, sizeof(why), &err);
	if (rc == 0)
		plan_simulate(g, out, budget, &sim, &err);
	ok(rc == 0 && st.repaired && sim.valid && sim.fits,
	   "a start over budget is repaired, then improved (%s)", rc == 1 ? why : rc ? err.msg : "");
	plan_free(start);
	plan_free(out);
}

static void report(const struct tally *ty, const char *what, double pct)
{
	diag("%s: %d runs, %d reach the optimum (%d also proven by lns), worst ratio %.4f",
	     what, ty->runs, ty->reached, ty->proven, ty->worst);
	ok(ty->rejected == 0, "%s: every window optimum replays fitting and as cheap as "
	   "the window model says", what);
	ok(ty->bad == 0, "%s: every lns plan replays valid, fits, and costs between "
	   "the optimum and its start", what);
	ok(ty->proven_wrong == 0, "%s: lns claims optimality only at the optimum", what);
	ok(ty->runs > 0 && ty->reached >= pct * ty->runs,
	   "%s: lns reaches the optimum in %d of %d runs", what, ty->reached, ty->runs);
}

int main(void)
{
	struct lns_opts o = { .ops = solver_find("cbc"), .time_limit = 20,
			      .window_time_limit = 5, .stage_window = 3, .node_window = 6,
			      .seed = 1 };
	struct tally lin = { 0 }, rnd = { 0 }, vgg = { 0 };
	struct cm_error err;
	char path[512];
	struct graph *g;

	if (!ok(o.ops != NULL, "cbc backend built"))
		return tap_done();
	/* Quick: linear:3..4 at 3 budgets each; the unstaged and repaired
	 * starts on linear:4. */
	for (int n = 3; n <= tap_cases(9, 4); n++) {
		g = graph_linear(n, &err);
		sweep(g, tap_cases(4, 2), &o, &lin, g->id);
		if (n == tap_cases(6, 4)) {
			test_unstaged(g, graph_lower_bound(g) + 2, &o);
			test_deadline(g, graph_lower_bound(g) + 2, &o);
			test_repaired(g, &o);
		}
		graph_free(g);
	}
	report(&lin, tap_cases(1, 0) ? "linear:3..9" : "linear:3..4", 0.9);
	for (int k = 0; k < tap_cases(10, 1); k++) {
		g = random_training(4 + k % 4, 30);
		sweep(g, 3, &o, &rnd, "random training graph");
		graph_free(g);
	}
	report(&rnd, "random training graphs", 0.7);
	if (!tap_graph(path, sizeof(path), "vgg16.json"))
		return tap_done();
	g = graph_read_file(path, &err);
	if (ok(g != NULL, "read %s", path)) {
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
		struct lns_opts ov = o;

		ov.stage_window = 6;
		ov.node_window = 20;
		for (int f = 1; f <= tap_cases(2, 1); f++) {
			uint64_t budget = lb + (peak - lb) / 4 * (uint64_t)f;
			struct plan *start = best_baseline(g, budget);
			char what[64];

			snprintf(what, sizeof(what), "vgg16 at lb + %d/4 (peak - lb)", f);
			if (start)
				check_run(g, budget, start, &ov, gen_ilp_optimum(g, budget), &vgg, what);
			else
				diag("%s: no baseline fits", what);
			plan_free(start);
		}
		report(&vgg, "vgg16", 0.5);
		graph_free(g);
	}
	return tap_done();
}

/* The heuristics of the paper's Table 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../plan/stages.h"
#include "../solvers/strategy.h"
#include "../graph/read.h"
#include "gen.h"
#include "tap.h"

/* Every point of a and b gives the same steps on g. */
static int same_points(const struct graph *g, const char *a, const char *b)
{
	const struct strategy *x = strategy_find(a, NULL), *y = strategy_find(b, NULL);
	struct cm_error err;
	char pa[64], pb[64];
	int same = 1;

	for (int k = 0; same; k++) {
		struct plan *p = plan_new(), *q = plan_new();
		int ra = x->point(g, k, p, pa, sizeof(pa), &err);
		int rb = y->point(g, k, q, pb, sizeof(pb), &err);

		same = ra == rb && (ra != 0 || same_steps(p, q));
		plan_free(p);
		plan_free(q);
		if (ra == BASELINE_NO_POINT)
			break;
	}
	return same;
}

static void test_linear_equivalence(void)
{
	int sq = 1, gr = 1;

	for (int n = 1; n <= 24; n++) {
		char name[32];
		struct cm_error err;
		struct graph *g;

		snprintf(name, sizeof(name), "linear:%d", n);
		g = graph_load(name, &err);
		sq &= same_points(g, "chen-sqrtn", "ap-sqrtn") &&
		      same_points(g, "chen-sqrtn", "linearized-sqrtn");
		gr &= same_points(g, "chen-greedy", "ap-greedy") &&
		      same_points(g, "chen-greedy", "linearized-greedy");
		graph_free(g);
	}
	ok(sq, "on linear:1..24 ap-sqrtn and linearized-sqrtn give chen-sqrtn's plan");
	ok(gr, "on linear:1..24 ap-greedy and linearized-greedy give chen-greedy's plan at every b");
}

/* Every point of every baseline replays clean on the shared graphs, or the
 * baseline says the graph is outside its domain. */
static void test_shared_graphs(void)
{
	static const char *names[] = { "vgg16", "unet", "mobilenet", "resnet50",
				       "random_layered_n250" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512], param[64];
		struct cm_error err;
		struct graph *g;
		int bad = 0, points = 0, unsupported = 0;

		if (!tap_graph(path, sizeof(path), "%s.json", names[i]))
			break;
		g = graph_read_file(path, &err);
		if (!ok(g != NULL, "%s reads", names[i]))
			continue;
		for (int b = 0; b < strategy_count(); b++)
			for (int k = 0; strategy_at(b)->point; k++) {
				struct plan *p = plan_new();
				struct sim_result r;
				int rc = strategy_at(b)->point(g, k, p, param, sizeof(param), &err);

				if (rc == 0) {
					plan_simulate(g, p, SIM_NO_BUDGET, &r, &err);
					points++;
					if (!r.valid && bad++ == 0)
						diag("%s %s: %s", strategy_at(b)->name, param, r.why);
				}
				plan_free(p);
				unsupported += rc == BASELINE_UNSUPPORTED;
				if (rc != 0)
					break;
			}
		ok(bad == 0, "%s: %d baseline plans replay clean (%d baselines unsupported)",
		   names[i], points, unsupported);
		graph_free(g);
	}
}

static void test_unsupported(void)
{
	char path[512];
	struct cm_error err;
	struct graph *g;
	struct solve_request rq = { .strategy = "chen-sqrtn" };
	struct solve_outcome o;
	int rc;

	if (!tap_graph(path, sizeof(path), "unet.json"))
		return;
	g = graph_read_file(path, &err);
	if (!ok(g != NULL, "unet reads"))
		return;
	rq.budget = graph_peak_all(g);
	rc = strategy_solve(g, &rq, &o, &err);
	ok(rc == 0 && o.status == STATUS_UNSUPPORTED &&
	   strstr(o.why, "needs a chain of forward nodes"),
	   "chen-sqrtn on unet: %s, %s", strategy_status_names[o.status], o.why);
	strategy_outcome_release(&o);
	graph_free(g);
}

/* At every budget the ilp optimum is no more than any baseline that fits. */
static void check_ilp_dominates(const struct graph *g, uint64_t budget, int *bad)
{
	struct solve_request rq = { .strategy = "ilp", .budget = budget };
	struct solve_outcome best;
	struct cm_error err;

	if (strategy_solve(g, &rq, &best, &err))
		return;
	for (int b = 0; b < strategy_count(); b++) {
		struct solve_outcome o;

		if (strategy_at(b)->point == NULL)
			continue;
		rq.strategy = strategy_at(b)->name;
		if (strategy_solve(g, &rq, &o, &err) == 0 && o.plan && o.sim.fits &&
		    (best.status != STATUS_OPTIMAL || best.sim.cost > o.sim.cost + 1e-9) &&
		    (*bad)++ == 0)
			diag("%s at %llu: ilp %s %g, %s %g", g->id, (unsigned long long)budget,
			     strategy_status_names[best.status], best.sim.cost, rq.strategy,
			     o.sim.cost);
		strategy_outcome_release(&o);
	}
	strategy_outcome_release(&best);
}

static void test_ilp_dominates(void)
{
	struct cm_error err;
	char path[512];
	int bad = 0;

	/* Quick: linear:3..4, vgg16 at one budget (the ILP on vgg16 is slow
	 * under the sanitizers). */
	for (int n = 3; n <= tap_cases(8, 4); n++) {
		char name[32];
		struct graph *g;

		snprintf(name, sizeof(name), "linear:%d", n);
		g = graph_load(name, &err);
		for (uint64_t b = graph_lower_bound(g); b <= graph_peak_all(g); b++)
			check_ilp_dominates(g, b, &bad);
		graph_free(g);
	}
	if (tap_graph(path, sizeof(path), "vgg16.json")) {
		struct graph *g = graph_read_file(path, &err);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

		for (int f = tap_cases(1, 2); f <= tap_cases(3, 2); f++)
			check_ilp_dominates(g, lb + (peak - lb) * (uint64_t)f / 4, &bad);
		graph_free(g);
	}
	ok(bad == 0, "ilp is optimal and costs no more than any fitting baseline (linear:3..%d "
	   "at every budget, vgg16 at %d): %d exceptions", tap_cases(8, 4), tap_cases(3, 1), bad);
}

static long long binom(int a, int b)
{
	long long r = 1;

	for (int i = 1; i <= b; i++)
		r = r * (a - b + i) / i;
	return r;
}

/* docs/formats.md, Small facts for tests: with beta(s, r) = C(s + r, s),
 * reversing l steps with s snapshots takes r l - beta(s + 1, r - 1) forward
 * steps, beta(s, r - 1) < l <= beta(s, r). */
static long long revolve_closed_form(int l, int s)
{
	int r = 0;

	while (binom(s + r, s) < l)
		r++;
	return (long long)r * l - binom(s + r, s + 1);
}

static void test_revolve(void)
{
	int table_bad = 0, plan_bad = 0;

	for (int l = 1; l <= 60; l++) {
		char name[32];
		struct cm_error err;
		struct graph *g;

		snprintf(name, sizeof(name), "linear:%d", l);
		g = graph_load(name, &err);
		for (int s = 1; s <= 8; s++) {
			long long want = revolve_closed_form(l, s);
			struct plan *p = plan_new();
			char param[64];
			long long fwd = 0;

			if (baseline_revolve_steps(l, s) != want && table_bad++ < 3)
				diag("l=%d s=%d: table %lld, closed form %lld", l, s,
				     baseline_revolve_steps(l, s), want);
			/* The plan: its forward computes are the first value plus
			 * the schedule's forward steps. Points stop at s = l - 1. */
			if (s == 1 || s <= l - 1) {
				baseline_griewank_logn(g, s - 1, p, param, sizeof(param), &err);
				for (int i = 0; i < p->n; i++)
					fwd += p->steps[i].op == PLAN_COMPUTE && !g->nodes[p->steps[i].node].backward;
				if (fwd != 1 + want && plan_bad++ < 3)
					diag("l=%d s=%d: the plan computes %lld forward values, want 1 + %lld",
					     l, s, fwd, want);
			}
			plan_free(p);
		}
		graph_free(g);
	}
	ok(table_bad == 0, "revolve's forward steps equal the closed form for l <= 60, s <= 8");
	ok(plan_bad == 0, "and so do the forward computes of its plans on linear:l (plus the first)");
}

/* The plan of a checkpoint set through the stage matrices (stages_keep,
 * stages_drop_unused, plan_from_stages), as baseline_plan_of_checkpoints
 * made it before: the oracle for the runs it works on now. */
static int matrix_plan_of_checkpoints(const struct graph *g, const char *ckpt, struct plan *p)
{
	int *keep = malloc((3 * (size_t)g->n + 1) * sizeof(int));
	struct stages st;
	struct cm_error err;
	int rc = -1;

	if (keep && baseline_checkpoint_keeps(g, ckpt, keep) == 0 &&
	    stages_init(&st, g->n, &err) == 0) {
		for (int x = 0; x < g->n; x++) {
			stages_keep(&st, x, x, keep[3 * x]);
			if (keep[3 * x + 1] >= 0)
				stages_keep(&st, x, keep[3 * x + 1], keep[3 * x + 2]);
		}
		stages_drop_unused(g, &st);
		rc = plan_from_stages(g, &st, p, &err);
		stages_release(&st);
	}
	free(keep);
	return rc;
}

/* baseline_plan_of_checkpoints (runs of stages, no matrices) makes the
 * steps the stage matrices make, on random training graphs and random
 * DAGs with random checkpoint sets, and on the shared graphs. */
static void test_plan_of_checkpoints(void)
{
	static const char *const names[] = { "vgg16", "mobilenet", "resnet50", "unet",
					      "random_layered_n100" };
	int cases = 0, bad = 0;

	for (int c = 0; c < tap_cases(300, 40) + 5; c++) {
		struct cm_error err;
		struct graph *g;
		char *ckpt;
		char path[512];

		if (c >= tap_cases(300, 40)) {
			if (!tap_graph(path, sizeof(path), "%s.json", names[c - tap_cases(300, 40)]))
				break;
			g = graph_read_file(path, &err);
		} else {
			g = c % 3 ? gen_random_training(2 + c % 17, 10 + c % 50)
				  : gen_dag(2 + c % 23, 10 + c % 60, 1, 8);
		}
		if (g == NULL || (ckpt = calloc((size_t)g->n + 1, 1)) == NULL) {
			bad++;
			graph_free(g);
			continue;
		}
		for (int pct = 0; pct <= 100; pct += 25) {
			struct plan *p = plan_new(), *q = plan_new();

			for (int v = 0; v < g->n; v++)
				ckpt[v] = !g->nodes[v].backward && (int)(gen_rnd() % 100) < pct;
			cases++;
			if (baseline_plan_of_checkpoints(g, ckpt, p, &err) ||
			    matrix_plan_of_checkpoints(g, ckpt, q) || !same_steps(p, q)) {
				if (bad++ < 3)
					diag("%s, %d%% checkpoints: %d steps, the matrices' %d",
					     g->id, pct, p->n, q->n);
			}
			plan_free(p);
			plan_free(q);
		}
		free(ckpt);
		graph_free(g);
	}
	ok(bad == 0, "plan of a checkpoint set: the steps of the stage matrices (%d sets)", cases);
}

int main(void)
{
	test_plan_of_checkpoints();
	test_revolve();
	test_linear_equivalence();
	test_unsupported();
	test_shared_graphs();
	test_ilp_dominates();
	return tap_done();
}

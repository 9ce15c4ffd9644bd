/* The ilp strategy against brute force, across backends, and its LP file. */
#define _DEFAULT_SOURCE /* mkstemps */
#include <Cbc_C_Interface.h>
#include <glpk.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../solvers/strategy.h"
#include "../graph/read.h"
#include "../plan/stages.h"
#include "gen.h"
#include "../common/num.h"
#include "tap.h"

/* The cheapest plan of the stage model that fits the budget, by trying
 * every S (R completed, unused kept values dropped, plan replayed); -1 when
 * none fits. */
static double brute_force(const struct graph *g, uint64_t budget)
{
	int n = g->n, bits = n * (n - 1) / 2;
	double best = -1;
	struct cm_error err;
	struct stages st;
	struct plan *p = plan_new();

	stages_init(&st, n, &err);
	for (uint32_t mask = 0; mask < (1u << bits); mask++) {
		struct sim_result r;
		int b = 0;

		for (int t = 1; t < n; t++)
			for (int i = 0; i < t; i++)
				STAGE_S(&st, t, i) = (mask >> b++) & 1;
		stages_complete_r(g, &st);
		plan_clear(p);
		plan_from_stages(g, &st, p, &err);
		plan_simulate(g, p, budget, &r, &err);
		if (r.fits && (best < 0 || r.cost < best))
			best = r.cost;
	}
	stages_release(&st);
	plan_free(p);
	return best;
}

/* ilp through the strategy layer: the replayed cost, or -1 when infeasible,
 * -2 on anything else. */
static double ilp(const struct graph *g, uint64_t budget, const char *solver,
		  const struct remat_opts *mo, char *status)
{
	struct solve_request rq = { .strategy = "ilp", .budget = budget, .solver = solver };
	struct solve_outcome o;
	struct cm_error err;
	double cost = -2;

	if (mo)
		rq.model = *mo;
	if (gen_solve_model(g, &rq, &o, &err)) {
		snprintf(status, 32, "error");
		diag("%s", err.msg);
		return -2;
	}
	snprintf(status, 32, "%s", strategy_status_names[o.status]);
	if (o.status == STATUS_INFEASIBLE)
		cost = -1;
	else if (o.status == STATUS_OPTIMAL && o.sim.fits)
		cost = o.sim.cost;
	if (o.plan && fabs(o.objective - o.sim.cost) > 1e-6 * fmax(1, o.sim.cost)) {
		diag("objective %g but the plan replays at %g", o.objective, o.sim.cost);
		cost = -3;
	}
	strategy_outcome_release(&o);
	return cost;
}

static void test_brute_force(void)
{
	int bad[2] = { 0, 0 }, infeasible = 0, pruned_worse = 0, trials = tap_cases(150, 10);
	static const char *solvers[2] = { "cbc", "glpk" };
	struct remat_opts prune = { .prune_past_users = 1 };

	for (int trial = 0; trial < trials; trial++) {
		struct graph *g = gen_dag(2 + (int)(gen_rnd() % 5), 40, 0, 6);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
		uint64_t budget = lb + gen_rnd() % (peak - lb + 1);
		double want = brute_force(g, budget), got;
		char status[32];

		infeasible += want < 0;
		for (int s = 0; s < 2; s++) {
			got = ilp(g, budget, solvers[s], NULL, status);
			if (fabs(got - want) > 1e-9) {
				if (bad[s]++ < 3)
					diag("trial %d (%d nodes, budget %llu): %s says %g (%s), brute force %g",
					     trial, g->n, (unsigned long long)budget, solvers[s], got,
					     status, want);
			}
		}
		got = ilp(g, budget, "cbc", &prune, status);
		pruned_worse += fabs(got - want) > 1e-9;
		graph_free(g);
	}
	ok(bad[0] == 0, "cbc matches brute force on %d random DAGs of 2-6 nodes (%d infeasible): %d differ",
	   trials, infeasible, bad[0]);
	ok(bad[1] == 0, "glpk matches brute force on the same DAGs: %d differ", bad[1]);
	diag("with S(t,i) = 0 once every user of i precedes t, %d of %d differ", pruned_worse,
	     trials);
}

static void test_linear_facts(void)
{
	static const double want[] = { -1, 15, 11, 10, 9, 9, 9 }; /* budgets 2..8 */
	struct cm_error err;
	struct graph *g = graph_load("linear:4", &err);
	char status[32];

	for (int s = 0; s < 2; s++) {
		const char *solver = s ? "glpk" : "cbc";
		int good = 1;

		for (int b = 2; b <= 8; b++)
			good &= num_eq(ilp(g, (uint64_t)b, solver, NULL, status), want[b - 2]);
		ok(good, "%s: linear:4 costs infeasible, 15, 11, 10, 9, 9, 9 at budgets 2..8", solver);
	}
	graph_free(g);
	g = graph_load("linear:6", &err);
	{
		int agree = 1;

		for (uint64_t b = 2; b <= graph_peak_all(g) + 1; b++) {
			double c = ilp(g, b, "cbc", NULL, status), l = ilp(g, b, "glpk", NULL, status);

			if (!num_eq(c, l) || num_eq(c, -2)) {
				diag("linear:6 budget %llu: cbc %g, glpk %g", (unsigned long long)b, c, l);
				agree = 0;
			}
		}
		ok(agree, "cbc and glpk agree on linear:6 at every budget from 2 to %llu",
		   (unsigned long long)graph_peak_all(g) + 1);
	}
	graph_free(g);
}

static void test_vgg16(void)
{
	char path[512], status[32];
	struct cm_error err;
	struct graph *g;
	uint64_t lb, peak;

	if (!tap_graph(path, sizeof(path), "vgg16.json"))
		return;
	g = graph_read_file(path, &err);
	if (!ok(g != NULL, "vgg16 reads"))
		return;
	lb = graph_lower_bound(g);
	peak = graph_peak_all(g);
	/* Quick: the one budget where the optimum is below checkpoint-all's. */
	for (int f = tap_cases(1, 3); f <= 3; f++) {
		uint64_t b = lb + (uint64_t)((double)(peak - lb) * f / 4);
		double c = ilp(g, b, "cbc", NULL, status), l = ilp(g, b, "glpk", NULL, status);

		ok(c > 0 && num_eq(c, l), "vgg16 at lb + %d/4 (peak - lb) = %llu: cbc %g, glpk %g", f,
		   (unsigned long long)b, c, l);
	}
	graph_free(g);
}

/* The --write-lp model, read back by GLPK's and Cbc's own LP readers and
 * solved, gives the optimum the ilp strategy reports. */
static void test_lp_file(void)
{
	struct cm_error err;
	struct graph *g = graph_load("linear:5", &err);
	char path[] = "/tmp/cm-lp-XXXXXX.lp";
	int fd = mkstemps(path, 3);
	FILE *f = fdopen(fd, "w");
	struct solve_request rq = { .strategy = "ilp", .budget = 5, .lp_out = f };
	struct solve_outcome o;
	glp_prob *p;
	glp_iocp io;
	Cbc_Model *cbc;
	double obj = -1;
	int rc;

	strategy_solve(g, &rq, &o, &err);
	fclose(f);
	glp_term_out(GLP_OFF);
	p = glp_create_prob();
	glp_init_iocp(&io);
	io.presolve = GLP_ON;
	rc = glp_read_lp(p, NULL, path) || glp_intopt(p, &io);
	if (rc == 0)
		obj = glp_mip_obj_val(p);
	ok(rc == 0 && fabs(obj - o.sim.cost) < 1e-6,
	   "the LP file solved by glpk: %g, ilp reported %g", obj, o.sim.cost);
	glp_delete_prob(p);
	cbc = Cbc_newModel();
	Cbc_setLogLevel(cbc, 0);
	obj = -1;
	rc = Cbc_readLp(cbc, path) || Cbc_solve(cbc) || !Cbc_isProvenOptimal(cbc);
	if (rc == 0)
		obj = Cbc_getObjValue(cbc);
	ok(rc == 0 && fabs(obj - o.sim.cost) < 1e-6, "the LP file solved by cbc: %g", obj);
	Cbc_deleteModel(cbc);
	remove(path);
	strategy_outcome_release(&o);
	graph_free(g);
}

/* ilp never answers worse than the heuristics it starts from, even where
 * their plan is outside the stage model (dtr's may compute a node first
 * after a later one) and beats the model's optimum or fits where the model
 * has no plan. With --gap 1 (maxbatch's probes) the plan it starts from
 * answers at once, unless it costs more than the cost cap: then the MILP
 * runs. Random forward DAGs of 8-12 nodes at three budgets each. */
static void test_starts(void)
{
	struct cm_error err;
	int budgets = 0, outside = 0, at_once = 0, capped = 0, bad = 0;

	for (int k = 0; k < 12; k++) {
		struct graph *g = gen_dag(8 + k % 5, 30, 1, 9);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

		for (int f = 0; f < 3; f++) {
			struct solve_request rq = { .strategy = "dtr",
						    .budget = lb + (peak - lb) * (uint64_t)f / 4 };
			struct solve_outcome dtr, opt, any, cap;
			struct plan *dear;

			budgets++;
			strategy_solve(g, &rq, &dtr, &err);
			rq.strategy = "ilp";
			if (strategy_solve(g, &rq, &opt, &err) ||
			    (dtr.sim.fits && (!opt.plan || !num_le(opt.sim.cost, dtr.sim.cost))))
				bad++;
			outside += strstr(opt.why, "outside the stage model") != NULL;
			if (opt.plan) {
				rq.gap = 1;
				if (strategy_solve(g, &rq, &any, &err) || !any.sim.fits)
					bad++;
				else
					at_once += strstr(any.why, "within gap 1") != NULL;
				strategy_outcome_release(&any);
			}
			/* Started from a plan dearer than the cap (node 0, a
			 * source, computed and freed first): a solve. */
			if (opt.plan && strstr(opt.why, "outside the stage model") == NULL) {
				rq.start = dear = plan_new();
				plan_push(dear, PLAN_COMPUTE, 0, -1);
				plan_push(dear, PLAN_FREE, 0, -1);
				for (int s = 0; s < opt.plan->n; s++)
					plan_push(dear, (enum plan_op)opt.plan->steps[s].op,
						  opt.plan->steps[s].node, -1);
				rq.cost_cap = opt.sim.cost;
				if (strategy_solve(g, &rq, &cap, &err) || !cap.sim.fits ||
				    !num_le(cap.sim.cost, opt.sim.cost) ||
				    strstr(cap.why, "within gap 1") != NULL)
					bad++;
				else
					capped++;
				strategy_outcome_release(&cap);
				plan_free(dear);
			}
			strategy_outcome_release(&dtr);
			strategy_outcome_release(&opt);
		}
		graph_free(g);
	}
	ok(bad == 0 && outside > 0 && at_once > 0 && capped > 0,
	   "ilp at %d budgets of 12 random DAGs: never above dtr's plan (%d answers are a plan "
	   "outside the stage model); gap 1: the start's plan at once %d times, a solve "
	   "under a cap the start exceeds %d times; %d wrong", budgets, outside, at_once,
	   capped, bad);
}

int main(void)
{
	test_linear_facts();
	test_starts();
	test_lp_file();
	test_vgg16();
	test_brute_force();
	return tap_done();
}

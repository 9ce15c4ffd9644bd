/* Keep, offload or recompute (solvers/search/policy.c, docs/model.md):
 * the model's time and peaks are the replayed ones for every mode of
 * random chains and training DAGs; the dynamic program finds the fastest
 * plan of the class that fits on chains, as enumerating every mode does;
 * the MILP over the class proves the same optimum on chains and DAGs; any
 * bound printed with a bandwidth is never above a plan found by any
 * strategy. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/num.h"
#include "../graph/read.h"
#include "../solvers/search/policy.h"
#include "../solvers/strategy.h"
#include "gen.h"
#include "tap.h"

/* The next mode vector of the moded values (odometer); 0 after the last. */
static int next_modes(const struct policy_chain *pc, int *mode)
{
	for (int j = 0; j < pc->nf; j++) {
		if (!pc->moded[j])
			continue;
		if (++mode[j] <= POLICY_PREFETCH)
			return 1;
		mode[j] = POLICY_KEEP;
	}
	return 0;
}

/* The first modes of the class: every moded value kept. */
static void first_modes(const struct policy_chain *pc, int *mode)
{
	for (int j = 0; j < pc->nf; j++)
		mode[j] = pc->moded[j] ? POLICY_KEEP : POLICY_FIXED;
}

/* 1 when mode is in the class: a recomputed value's input kept. */
static int in_class(const struct policy_chain *pc, const int *mode)
{
	for (int j = 0; j < pc->nf; j++)
		if ((pc->moded[j] && mode[j] == POLICY_RECOMPUTE && !pc->recomputable[j]) ||
		    (pc->moded[j] && mode[j] == POLICY_PREFETCH && !pc->prefetchable[j]))
			return 0;
	for (int j = 0; j < pc->nf; j++)
		for (int e = pc->g->dep_off[j]; pc->moded[j] && mode[j] == POLICY_RECOMPUTE &&
		     e < pc->g->dep_off[j + 1]; e++)
			if (mode[pc->g->deps[e]] != POLICY_KEEP)
				return 0;
	return 1;
}

/* A random training chain of nf forward nodes: gen_training's (each
 * gradient reads its node and its input) or linear's shape (only its node),
 * with random costs and sizes. */
static struct graph *random_chain(int nf)
{
	struct graph *g = gen_random_training(nf, 0);

	return g;
}

/* Every mode of g replayed: the model's time, device and host peaks are
 * the simulator's. Returns the number of modes checked, -1 on a mismatch. */
static int check_model(const struct graph *g, const struct sim_copy *c, const char *what)
{
	struct policy_chain pc;
	struct cm_error err;
	char why[256];
	int *mode, n = 0, bad = 0;

	if (policy_chain_init(&pc, g, c, why, sizeof(why), &err) != 1) {
		diag("%s: not a chain: %s", what, why);
		return -1;
	}
	mode = malloc((size_t)pc.nf * sizeof(int));
	first_modes(&pc, mode);
	do {
		struct plan *p;
		struct sim_result r;
		double t;

		if (!in_class(&pc, mode))
			continue;
		p = policy_plan(&pc, mode, &err);
		t = policy_time(&pc, mode) * c->seconds_per_cost;
		if (p == NULL || plan_simulate_copies(g, p, SIM_NO_BUDGET, c, &r, NULL, &err) ||
		    !r.valid || !num_eq(r.time, t) || r.peak != policy_peak(&pc, mode) ||
		    r.host_peak != policy_host(&pc, mode)) {
			if (!bad++)
				diag("%s: model time %g peak %llu host %llu, replay valid %d time %g "
				     "peak %llu host %llu (%s)", what, t,
				     (unsigned long long)policy_peak(&pc, mode),
				     (unsigned long long)policy_host(&pc, mode), r.valid, r.time,
				     (unsigned long long)r.peak, (unsigned long long)r.host_peak, r.why);
		}
		plan_free(p);
		n++;
	} while (next_modes(&pc, mode));
	free(mode);
	policy_chain_release(&pc);
	return bad ? -1 : n;
}

static void test_model(void)
{
	struct cm_error err;
	int total = 0, bad = 0;

	for (int i = 0; i < tap_cases(40, 8); i++) {
		struct graph *g = random_chain(3 + i % 5);
		struct sim_copy c = { .bandwidth = 0.5 * (1 + i % 4), .seconds_per_cost = 1 };
		int n = check_model(g, &c, "random chain");

		bad += n < 0;
		total += n > 0 ? n : 0;
		graph_free(g);
	}
	for (int n = 2; n <= 6; n++) {
		char name[32];
		struct graph *g;
		struct sim_copy c = { .bandwidth = 0.7, .seconds_per_cost = 1 };
		int k;

		snprintf(name, sizeof(name), "linear:%d", n);
		g = graph_load(name, &err);
		k = check_model(g, &c, name);
		bad += k < 0;
		total += k > 0 ? k : 0;
		graph_free(g);
	}
	ok(bad == 0, "model = replay: time, device peak and host peak of %d plans of the class "
	   "on random chains and linear:2..6", total);
	total = bad = 0;
	for (int i = 0; i < tap_cases(40, 8); i++) {
		struct graph *g = gen_random_training(3 + i % 4, 30 + i % 3 * 20);
		struct sim_copy c = { .bandwidth = 0.5 * (1 + i % 4), .seconds_per_cost = 1 };
		int n = check_model(g, &c, "random DAG");

		bad += n < 0;
		total += n > 0 ? n : 0;
		graph_free(g);
	}
	ok(bad == 0, "model = replay on %d plans of the class on random training DAGs of 3-6 "
	   "forward nodes", total);
}

/* The least model time of the class within budget (and c's host budget),
 * by enumeration: -1 when none fits. */
static double brute_best(const struct policy_chain *pc, uint64_t budget)
{
	int *mode = malloc((size_t)pc->nf * sizeof(int));
	double best = -1;

	first_modes(pc, mode);
	do {
		double t;

		if (!in_class(pc, mode) || policy_peak(pc, mode) > budget ||
		    (pc->host_budget && policy_host(pc, mode) > pc->host_budget))
			continue;
		t = policy_time(pc, mode);
		if (best < 0 || t < best)
			best = t;
	} while (next_modes(pc, mode));
	free(mode);
	return best;
}

/* The budgets a test runs at: from below the least any plan needs to the
 * checkpoint-all peak, in k steps. */
static uint64_t budget_at(const struct graph *g, int i, int k)
{
	uint64_t lo = graph_lower_bound(g), hi = graph_peak_all(g);

	return lo - 1 + (hi - lo + 1) * (uint64_t)i / (uint64_t)(k - 1);
}

static void test_dp(void)
{
	int cases = 0, agree = 0, found = 0, replayed = 0;

	for (int i = 0; i < tap_cases(60, 10); i++) {
		struct graph *g = random_chain(4 + i % 5);
		struct sim_copy c = { .bandwidth = 0.5 * (1 + i % 4), .seconds_per_cost = 1,
				      .host_budget = i % 3 == 2 ? 4 : 0 };
		struct policy_chain pc;
		struct cm_error err;
		char why[256];
		int *mode;

		if (policy_chain_init(&pc, g, &c, why, sizeof(why), &err) != 1) {
			graph_free(g);
			continue;
		}
		mode = malloc((size_t)pc.nf * sizeof(int));
		for (int b = 0; b < 6; b++) {
			uint64_t budget = budget_at(g, b, 6);
			double want = brute_best(&pc, budget), t = -1;
			int gave_up, rc = policy_dp(&pc, budget, 100000, 0, mode, &t, &gave_up, &err);

			cases++;
			if ((rc == 0 && want < 0) || (rc == 1 && num_eq(t, want)))
				agree++;
			else
				diag("chain %d budget %llu: dp rc %d time %g, enumeration %g", i,
				     (unsigned long long)budget, rc, t, want);
			if (rc == 1) {
				struct plan *p = policy_plan(&pc, mode, &err);
				struct sim_result r;

				found++;
				if (p && !plan_simulate_copies(g, p, budget, &c, &r, NULL, &err) &&
				    r.valid && r.fits && num_eq(r.time, t))
					replayed++;
				plan_free(p);
			}
		}
		free(mode);
		policy_chain_release(&pc);
		graph_free(g);
	}
	ok(cases > 0 && agree == cases, "dynamic program = enumeration of the class on %d of %d "
	   "(chain, budget) pairs of 4-8 forward nodes, host budgets included", agree, cases);
	ok(found > 0 && replayed == found, "its %d plans replay within both budgets in its time "
	   "(%d)", found, replayed);
}

/* Runs strategy name on g at budget with c's rates into o (time limit
 * seconds, backend solver or the default). */
static int run(const struct graph *g, const char *name, const char *solver, uint64_t budget,
	       const struct sim_copy *c, double seconds, struct solve_outcome *o)
{
	struct solve_request rq = { .strategy = name, .budget = budget, .solver = solver,
				    .time_limit = seconds, .copy = c };
	struct cm_error err;

	if (strategy_solve(g, &rq, o, &err)) {
		diag("%s: %s", name, err.msg);
		memset(o, 0, sizeof(*o));
		return -1;
	}
	return 0;
}

/* The MILP's proven optimum = the dynamic program's time on random chains
 * of 4-8 forward nodes, with each backend; every plan within budget. */
static void test_milp(const char *solver)
{
	int chains = 0, pairs = 0, agree = 0, fits = 0, plans = 0;
	double worst = 0;

	for (int i = 0; i < tap_cases(24, 4); i++) {
		struct graph *g = random_chain(4 + i % 5);
		struct sim_copy c = { .bandwidth = 0.5 * (1 + i % 4), .seconds_per_cost = 1,
				      .host_budget = i % 4 == 3 ? 5 : 0 };

		chains++;
		for (int b = 1; b < 6; b++) {
			uint64_t budget = budget_at(g, b, 6);
			struct solve_outcome d, m;
			double t0 = cm_clock(), dt;

			if (run(g, "offload-dp", NULL, budget, &c, 10, &d))
				continue;
			t0 = cm_clock();
			if (run(g, "offload-ilp", solver, budget, &c, 10, &m)) {
				strategy_outcome_release(&d);
				continue;
			}
			dt = cm_clock() - t0;
			worst = dt > worst ? dt : worst;
			pairs++;
			if ((d.plan == NULL && m.plan == NULL && d.status == m.status &&
			     (d.status == STATUS_NO_PLAN || d.status == STATUS_INFEASIBLE)) ||
			    (d.plan && m.plan && strstr(m.why, "proven the fastest") &&
			     num_eq(d.sim.time, m.sim.time) && num_eq(m.objective, m.sim.time)))
				agree++;
			else
				diag("chain %d budget %llu: dp %s %g, milp %s %g (%s)", i,
				     (unsigned long long)budget, strategy_status_names[d.status],
				     d.plan ? d.sim.time : -1.0, strategy_status_names[m.status],
				     m.plan ? m.sim.time : -1.0, m.why);
			plans += (d.plan != NULL) + (m.plan != NULL);
			fits += (d.plan && d.sim.fits && d.sim.peak <= budget) +
				(m.plan && m.sim.fits && m.sim.peak <= budget);
			strategy_outcome_release(&d);
			strategy_outcome_release(&m);
		}
		graph_free(g);
	}
	ok(pairs > 0 && agree == pairs, "%s: the MILP's proven optimum = the dynamic program's "
	   "time on %d of %d (chain, budget) pairs, %d chains (slowest solve %.2f s)", solver,
	   agree, pairs, chains, worst);
	ok(plans > 0 && fits == plans, "%s: all %d plans replayed within budget", solver, plans);
}

/* The MILP's proven optimum = the best of the class, enumerated, on random
 * training DAGs of 3-6 forward nodes, with each backend. */
static void test_milp_dags(const char *solver)
{
	int pairs = 0, agree = 0;
	double worst = 0;

	for (int i = 0; i < tap_cases(20, 4); i++) {
		struct graph *g = gen_random_training(3 + i % 4, 40);
		struct sim_copy c = { .bandwidth = 0.5 * (1 + i % 4), .seconds_per_cost = 1,
				      .host_budget = i % 4 == 3 ? 5 : 0 };
		struct policy_chain pc;
		struct cm_error err;
		char why[256];

		if (policy_chain_init(&pc, g, &c, why, sizeof(why), &err) != 1) {
			graph_free(g);
			continue;
		}
		for (int b = 1; b < 6; b++) {
			uint64_t budget = budget_at(g, b, 6);
			double want = brute_best(&pc, budget), t0 = cm_clock();
			struct solve_outcome m;

			if (run(g, "offload-ilp", solver, budget, &c, 10, &m))
				continue;
			worst = fmax(worst, cm_clock() - t0);
			pairs++;
			if (want < 0 ? m.plan == NULL :
			    m.plan && m.sim.fits && strstr(m.why, "proven the fastest") &&
			    num_eq(m.sim.time, want))
				agree++;
			else
				diag("DAG %d budget %llu: enumeration %g, milp %s %g (%s)", i,
				     (unsigned long long)budget, want, strategy_status_names[m.status],
				     m.plan ? m.sim.time : -1.0, m.why);
			strategy_outcome_release(&m);
		}
		policy_chain_release(&pc);
		graph_free(g);
	}
	ok(pairs > 0 && agree == pairs, "%s: on random training DAGs the MILP's proven optimum = "
	   "the enumerated best of the class on %d of %d (graph, budget) pairs (slowest %.2f s)",
	   solver, agree, pairs, worst);
}

/* On random training graphs (chains and DAGs), with a bandwidth: the bound
 * any strategy prints is never above the time (or cost) of a plan any
 * strategy finds. */
static void test_bounds(void)
{
	int graphs = 0, runs = 0, bad = 0;

	for (int i = 0; i < tap_cases(6, 2); i++) {
		struct graph *g = gen_random_training(4 + i % 3, i % 2 ? 40 : 0);
		struct sim_copy c = { .bandwidth = 1, .seconds_per_cost = 1 };

		graphs++;
		for (int b = 1; b < 4; b++) {
			uint64_t budget = budget_at(g, b, 4);
			double bound = 0, best = -1, bound_cost = 0, best_cost = -1;

			for (int k = 0; k < strategy_count(); k++) {
				struct solve_outcome o;

				if (run(g, strategy_at(k)->name, NULL, budget, &c, 1, &o))
					continue;
				runs++;
				if (o.has_lower_bound && o.lower_bound > bound_cost)
					bound_cost = o.lower_bound;
				if (o.plan && o.plan->has_lower_bound &&
				    o.plan->lower_bound * c.seconds_per_cost > bound)
					bound = o.plan->lower_bound * c.seconds_per_cost;
				if (o.plan && o.sim.fits && (best < 0 || o.sim.time < best))
					best = o.sim.time;
				if (o.plan && o.sim.fits && (best_cost < 0 || o.sim.cost < best_cost))
					best_cost = o.sim.cost;
				strategy_outcome_release(&o);
			}
			if (best >= 0 && (!num_le(bound, best) || !num_le(bound_cost, best_cost))) {
				bad++;
				diag("graph %d budget %llu: bound %g (cost %g) above a plan %g (cost %g)",
				     i, (unsigned long long)budget, bound, bound_cost, best, best_cost);
			}
		}
		graph_free(g);
	}
	ok(runs > 0 && bad == 0, "with a bandwidth, no bound printed is above a plan found: %d "
	   "runs of every strategy on %d random graphs", runs, graphs);
}

int main(void)
{
	test_model();
	test_dp();
	test_milp("cbc");
	test_milp("glpk");
	test_milp_dags("cbc");
	test_milp_dags("glpk");
	test_bounds();
	return tap_done();
}

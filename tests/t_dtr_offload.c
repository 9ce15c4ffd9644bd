/* dtr-offload (docs/dtr.md) and solve with a bandwidth (docs/formats.md,
 * Offload to host memory): evictions that copy to host memory where a
 * recompute costs more, never slower than dtr without copies, every plan
 * replayed by the simulator within the budget; the figures and proofs of
 * strategy_solve in time. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/num.h"
#include "../graph/read.h"
#include "../solvers/search/dtr.h"
#include "../solvers/strategy.h"
#include "gen.h"
#include "tap.h"

/* The plan of dtr (copy NULL) or dtr with offload at budget, replayed by
 * the simulator in time at c's rates into *r; NULL when dtr has none. */
static struct plan *dtr_at(const struct graph *g, uint64_t budget, const struct sim_copy *c,
			   int offload, struct sim_result *r)
{
	struct dtr_opts o = { .heuristic = DTR_BEST, .verify = 1,
			      .copy = offload ? c : NULL };
	struct plan *p = plan_new();
	struct cm_error err;
	int rc = dtr_plan(g, budget, &o, p, &err);

	if (rc != 0) {
		if (rc < 0)
			diag("dtr_plan: %s", err.msg);
		plan_free(p);
		return NULL;
	}
	if (plan_simulate_copies(g, p, budget, c, r, NULL, &err)) {
		plan_free(p);
		return NULL;
	}
	return p;
}

/* The number of offload and fetch steps of p. */
static int copies_of(const struct plan *p)
{
	int n = 0;

	for (int i = 0; i < p->n; i++)
		n += p->steps[i].op == PLAN_OFFLOAD || p->steps[i].op == PLAN_FETCH;
	return n;
}

/* linear:8 (every cost 1, every size 1) at a second a unit of cost, at the
 * least budget where dtr still has a plan that recomputes. */
static void test_linear(void)
{
	struct cm_error err;
	struct graph *g = graph_load("linear:8", &err);
	struct sim_copy fast = { .bandwidth = 1000, .seconds_per_cost = 1 },
			slow = { .bandwidth = 0.01, .seconds_per_cost = 1 };
	struct sim_result a, b, c, d;
	struct plan *p, *q, *r, *s;
	uint64_t budget = graph_lower_bound(g);

	/* The least budget where dtr has a plan. */
	while ((p = dtr_at(g, budget, &fast, 0, &a)) == NULL && budget < graph_peak_all(g))
		budget++;
	q = dtr_at(g, budget, &fast, 1, &b);
	ok(p && q && a.valid && a.fits && num_lt(graph_total_cost(g), a.cost),
	   "linear:8 at budget %llu: dtr recomputes (cost %g)", (unsigned long long)budget,
	   p ? a.cost : -1.0);
	ok(q && b.valid && b.fits && b.peak <= budget && copies_of(q) > 0,
	   "fast link (a copy 1 ms, a recompute 1 s): dtr-offload's plan copies (%d copies), "
	   "valid, within the budget (peak %llu)", q ? copies_of(q) : -1,
	   (unsigned long long)b.peak);
	ok(p && q && num_lt(b.time, a.time) && num_lt(b.cost, a.cost),
	   "fast link: offload beats recompute: time %g s against dtr's %g s", q ? b.time : -1.0,
	   p ? a.time : -1.0);
	ok(q && num_le(graph_total_cost(g), b.time) && num_eq(b.time, b.cost + b.wait),
	   "fast link: the time is the computes' plus the wait, and not below every node once");
	r = dtr_at(g, budget, &slow, 0, &c);
	s = dtr_at(g, budget, &slow, 1, &d);
	ok(r && s && d.valid && d.fits && num_le(d.time, c.time),
	   "slow link (a copy 100 s): dtr-offload %g s, dtr %g s", s ? d.time : -1.0,
	   r ? c.time : -1.0);
	ok(s && copies_of(s) == 0 && num_eq(d.time, c.time),
	   "slow link: recomputing wins, no copies (%d)", s ? copies_of(s) : -1);
	plan_free(p);
	plan_free(q);
	plan_free(r);
	plan_free(s);
	{
		struct sim_copy host = fast;

		host.host_budget = 2;
		q = dtr_at(g, budget, &host, 1, &b);
		ok(q && b.valid && b.fits && b.host_peak <= 2,
		   "a host budget of 2 B is heeded: host peak %llu", q ? (unsigned long long)b.host_peak : 0ULL);
		plan_free(q);
	}
	graph_free(g);
}

/* Random training graphs at random budgets and links: every plan of
 * dtr-offload valid and within the budget and the host budget, never
 * slower than dtr's. */
static void test_random(void)
{
	int cases = tap_cases(200, 40), valid = 0, faster = 0, both = 0, only = 0, copied = 0,
	    better = 0, row = 0;

	for (int k = 0; k < cases; k++) {
		struct graph *g = gen_random_training(2 + (int)(gen_rnd() % 14), 40);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
		uint64_t budget = lb + (peak > lb ? gen_rnd() % (peak - lb + 1) : 0);
		static const double bw[] = { 0.05, 1, 4, 1e6 };
		/* Also a unit of cost of 1 ns: times of microseconds, below
		 * num.h's absolute tolerance, must still be told apart. */
		double spc = gen_rnd() % 2 ? 1 : 1e-9;
		struct sim_copy c = { .bandwidth = bw[gen_rnd() % 4] / spc, .seconds_per_cost = spc,
				      .host_budget = gen_rnd() % 3 == 0 ? 1 + gen_rnd() % 8 : 0 };
		struct sim_result a = { 0 }, b = { 0 };
		struct plan *p = dtr_at(g, budget, &c, 0, &a), *q = dtr_at(g, budget, &c, 1, &b);

		if (q) {
			valid += b.valid && b.fits && b.peak <= budget &&
				 (!c.host_budget || b.host_peak <= c.host_budget);
			copied += copies_of(q) > 0;
		} else {
			valid++;
		}
		if (p && q) {
			both++;
			faster += b.time <= a.time * (1 + 1e-12);
			better += num_lt(b.time / spc, a.time / spc);
		} else if (p) {
			diag("case %d: dtr has a plan at %llu, dtr-offload none", k,
			     (unsigned long long)budget);
		} else {
			faster++;
			only += q != NULL;
		}
		{
			/* The row as solve runs it: dtr_plan's answer or dtr's
			 * plan through the recomputes-to-fetches pass. */
			struct solve_request rq = { .strategy = "dtr-offload", .budget = budget,
						    .copy = &c };
			struct solve_outcome o;
			struct sim_result r;
			struct cm_error err;

			if (strategy_solve(g, &rq, &o, &err) == 0 && (o.plan != NULL) == (q != NULL) &&
			    (o.plan == NULL ||
			     (plan_simulate_copies(g, o.plan, budget, &c, &r, NULL, &err) == 0 &&
			      r.valid && r.fits && r.time == o.sim.time &&
			      r.time <= b.time * (1 + 1e-12))))
				row++;
			strategy_outcome_release(&o);
		}
		plan_free(p);
		plan_free(q);
		graph_free(g);
	}
	ok(row == cases, "the dtr-offload row: a plan where dtr_plan has one, valid, within "
	   "the budgets, its time as replayed and never above dtr_plan's: %d of %d", row, cases);
	ok(valid == cases, "every dtr-offload plan replays valid within the budget and the host "
	   "budget: %d of %d", valid, cases);
	ok(faster == cases, "never slower than dtr, and a plan wherever dtr has one: %d of %d "
	   "(%d with both, %d faster, %d where only dtr-offload has one)", faster, cases, both,
	   better, only);
	ok(copied > cases / 10, "copies are used: %d of %d plans", copied, cases);
}

/* strategy_solve with a bandwidth: the figures in time, the one bound that
 * holds for plans with copies, optimal only when the time meets it. */
static void test_solve(void)
{
	struct cm_error err;
	struct graph *g = graph_load("linear:8", &err);
	struct sim_copy fast = { .bandwidth = 1000, .seconds_per_cost = 2 };
	struct solve_request rq = { .strategy = "checkpoint-all", .budget = graph_peak_all(g),
				    .time_limit = 10, .copy = &fast };
	struct solve_outcome o;
	double floor_cost = graph_total_cost(g);
	uint64_t budget = graph_lower_bound(g) + 2;
	double plain = 0;
	int rc;

	rc = strategy_solve(g, &rq, &o, &err);
	ok(rc == 0 && o.plan && o.status == STATUS_OPTIMAL &&
	   num_eq(o.sim.time, 2 * floor_cost) && o.has_lower_bound &&
	   num_eq(o.lower_bound, floor_cost) && o.plan->has_time,
	   "checkpoint-all at its peak, 2 s a unit: time %g s = the floor, optimal",
	   o.plan ? o.sim.time : -1.0);
	strategy_outcome_release(&o);
	rq.budget = budget;
	rq.strategy = "dtr";
	rc = strategy_solve(g, &rq, &o, &err);
	ok(rc == 0 && o.plan && o.status == STATUS_FEASIBLE &&
	   num_eq(o.sim.time, 2 * o.sim.cost) && num_eq(o.lower_bound, floor_cost) &&
	   plan_first_copy(o.plan) < 0,
	   "dtr at budget %llu: no copies, time %g s = 2 x cost, feasible, bound %g",
	   (unsigned long long)budget, o.plan ? o.sim.time : -1.0, o.lower_bound);
	plain = o.plan ? o.sim.time : 0;
	strategy_outcome_release(&o);
	rq.strategy = "dtr-offload";
	rc = strategy_solve(g, &rq, &o, &err);
	ok(rc == 0 && o.plan && o.sim.fits &&
	   (o.status == STATUS_OPTIMAL) == num_le(o.sim.time, 2 * floor_cost) &&
	   num_lt(o.sim.time, plain) && plan_first_copy(o.plan) >= 0 && num_eq(o.plan->time, o.sim.time) &&
	   strcmp(o.plan->strategy, "dtr-offload") == 0,
	   "dtr-offload: %g s (%s), below dtr's %g s; optimal only at the floor, %g s",
	   o.plan ? o.sim.time : -1.0, strategy_status_names[o.status], plain, 2 * floor_cost);
	strategy_outcome_release(&o);
	rq.strategy = "auto";
	rq.time_limit = 5;
	rc = strategy_solve(g, &rq, &o, &err);
	ok(rc == 0 && o.plan && o.sim.fits &&
	   (o.status == STATUS_OPTIMAL) == num_le(o.sim.time, 2 * floor_cost) &&
	   num_lt(o.sim.time, plain) && num_eq(o.lower_bound, floor_cost) && strstr(o.param, "bound=floor"),
	   "auto with a bandwidth: %g s (%s, %s), 'optimal' only at the floor",
	   o.plan ? o.sim.time : -1.0, o.param, strategy_status_names[o.status]);
	strategy_outcome_release(&o);
	{
		/* A unit of cost of 1 ps: dtr's 45 ps are 28 ps over the floor,
		 * far below num.h's absolute tolerance, and still not optimal. */
		struct sim_copy tiny = { .bandwidth = 1e15, .seconds_per_cost = 1e-12 };

		rq.copy = &tiny;
		rq.strategy = "dtr";
		rq.budget = graph_lower_bound(g);
		rc = strategy_solve(g, &rq, &o, &err);
		ok(rc == 0 && o.plan && o.status == STATUS_FEASIBLE && num_lt(floor_cost, o.sim.cost),
		   "1 ps a unit: dtr at %llu, %g s over a floor of %g s, is %s",
		   (unsigned long long)rq.budget, o.plan ? o.sim.time : -1.0, floor_cost * 1e-12,
		   strategy_status_names[o.status]);
		strategy_outcome_release(&o);
		rq.budget = budget;
	}
	rq.copy = NULL;
	rq.strategy = "dtr-offload";
	rc = strategy_solve(g, &rq, &o, &err);
	ok(rc == 0 && o.plan == NULL &&
	   o.status == STATUS_UNSUPPORTED && strstr(o.why, "bandwidth"),
	   "dtr-offload without a bandwidth: unsupported: %s", o.why);
	strategy_outcome_release(&o);
	graph_free(g);
}

int main(void)
{
	test_linear();
	test_random();
	test_solve();
	return tap_done();
}

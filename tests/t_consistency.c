/* Every strategy's answer held against the others' on the same graph and
 * budget: a plan that fits never costs less than a bound valid for it; no
 * "infeasible" where some strategy has a plan that fits; "optimal" only
 * with a bound that its cost meets; "over_budget" only with a plan over
 * the budget. Bounds of the stage model (the solver rows: ilp, approx, lns,
 * and auto's from them) hold for the plans whose first computes follow file order
 * (docs/model.md, "What optimal covers"); the checkpoint-all cost (the
 * floor) and every bound of the other strategies hold for all plans. */
#include <math.h>
#include <string.h>

#include "../common/num.h"
#include "../graph/pebble.h"
#include "../graph/read.h"
#include "../solvers/strategy.h"
#include "gen.h"
#include "tap.h"

/* Seconds each solve may take: enough for the MILPs of these graphs. */
#define SOLVE_SECONDS 1.0

struct answer {
	const char *strategy;
	int status, has_plan, fits, in_model, has_bound, bound_global;
	double cost, bound;
};

/* Counts of the checks made and failed, for the summary lines. */
static int checks[4], failures[4];
enum { BOUNDS, INFEASIBLE, OPTIMAL, STATUS };

/* 1 when p computes each node the first time in file order. */
static int first_computes_in_order(const struct graph *g, const struct plan *p)
{
	char *seen = calloc((size_t)g->n, 1);
	int next = 0, in_order = seen != NULL;

	for (int i = 0; in_order && i < p->n; i++) {
		int v = p->steps[i].node;

		if (p->steps[i].op != PLAN_COMPUTE || seen[v])
			continue;
		seen[v] = 1;
		in_order = v == next++;
	}
	free(seen);
	return in_order;
}

static void fail(int kind, const char *what, const struct graph *g, uint64_t budget,
		 const struct answer *a, const struct answer *b)
{
	failures[kind]++;
	if (failures[0] + failures[1] + failures[2] + failures[3] <= 5)
		diag("%s at budget %llu: %s: %s (%s, cost %g, bound %g)%s%s", g->id,
		     (unsigned long long)budget, what, a->strategy, strategy_status_names[a->status],
		     a->cost, a->bound, b ? " against " : "", b ? b->strategy : "");
}

static void check_answers(const struct graph *g, uint64_t budget, const struct answer *a,
			  int n)
{
	int any_fits = 0;

	for (int i = 0; i < n; i++)
		any_fits |= a[i].has_plan && a[i].fits;
	for (int i = 0; i < n; i++) {
		int fitting = a[i].status == STATUS_FEASIBLE || a[i].status == STATUS_OPTIMAL;

		checks[STATUS]++;
		if ((fitting && !(a[i].has_plan && a[i].fits)) ||
		    (a[i].status == STATUS_OVER_BUDGET && !(a[i].has_plan && !a[i].fits)))
			fail(STATUS, "status and plan disagree", g, budget, &a[i], NULL);
		checks[INFEASIBLE] += a[i].status == STATUS_INFEASIBLE;
		if (a[i].status == STATUS_INFEASIBLE && any_fits)
			fail(INFEASIBLE, "infeasible where a plan fits", g, budget, &a[i], NULL);
		checks[OPTIMAL] += a[i].status == STATUS_OPTIMAL;
		if (a[i].status == STATUS_OPTIMAL &&
		    !(a[i].has_bound && num_le(a[i].cost, a[i].bound)))
			fail(OPTIMAL, "optimal without a bound its cost meets", g, budget, &a[i], NULL);
		for (int j = 0; a[i].has_bound && j < n; j++) {
			if (!a[j].has_plan || !a[j].fits || !(a[i].bound_global || a[j].in_model))
				continue;
			checks[BOUNDS]++;
			if (num_lt(a[j].cost, a[i].bound))
				fail(BOUNDS, "a plan below the bound", g, budget, &a[i], &a[j]);
		}
	}
}

/* Every strategy on g at budget. */
static void run_all(const struct graph *g, uint64_t budget)
{
	struct answer *a = calloc((size_t)strategy_count(), sizeof(*a));
	int n = 0;

	for (int s = 0; s < strategy_count() && a; s++) {
		struct solve_request rq = { .strategy = strategy_at(s)->name, .budget = budget,
					    .time_limit = SOLVE_SECONDS };
		struct solve_outcome o;
		struct cm_error err;
		struct answer *x = &a[n];

		if (strategy_solve(g, &rq, &o, &err)) {
			diag("%s at %llu: %s: %s", g->id, (unsigned long long)budget, rq.strategy,
			     err.msg);
			continue;
		}
		*x = (struct answer){ .strategy = rq.strategy, .status = o.status,
				      .has_plan = o.plan != NULL, .fits = o.plan && o.sim.fits,
				      .cost = o.plan ? o.sim.cost : 0, .has_bound = o.has_lower_bound,
				      .bound = o.lower_bound };
		x->in_model = o.plan && first_computes_in_order(g, o.plan);
		/* The solver rows' bounds are the stage model's. */
		x->bound_global = !(strategy_at(s)->flags & STRATEGY_SOLVER) ||
				  num_eq(o.lower_bound, graph_total_cost(g)) ||
				  strstr(o.param, "bound=pebble") != NULL;
		n++;
		strategy_outcome_release(&o);
	}
	check_answers(g, budget, a, n);
	free(a);
}

/* 1 when the pebble search proves that no plan of g fits budget. */
static int proven_too_small(const struct graph *g, uint64_t budget)
{
	int node, ancestors;

	return graph_pebble_infeasible(g, budget, GRAPH_PEBBLE_STATES, 10, &node, &ancestors);
}

/* Budgets from the lower bound to the checkpoint-all peak. */
static void run_budgets(const struct graph *g)
{
	static const double fs[] = { 0, 0.1, 0.3, 0.6 };
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

	for (size_t k = 0; k < sizeof(fs) / sizeof(fs[0]); k++)
		run_all(g, lb + (uint64_t)(fs[k] * (double)(peak - lb)));
}

/* The largest budget the pebble search proves too small, when that is
 * above the lower bound (1 then, else 0): there every answer must be
 * without a plan that fits, and an "infeasible" meets the others. */
static int run_proven_too_small(const struct graph *g)
{
	uint64_t lo = graph_lower_bound(g), hi = graph_peak_all(g);

	if (!proven_too_small(g, lo))
		return 0;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		*(proven_too_small(g, mid) ? &lo : &hi) = mid;
	}
	run_all(g, lo);
	return 1;
}

int main(void)
{
	static const char *const shared[] = { "vgg16.json" };
	struct cm_error err;
	int dags = tap_cases(4, 2);

	for (int n = 6; n <= 10; n += 4) {
		char name[32];
		struct graph *g;

		snprintf(name, sizeof(name), "linear:%d", n);
		if ((g = graph_load(name, &err)) != NULL)
			run_budgets(g);
		graph_free(g);
	}
	for (int k = 0; k < dags; k++) {
		struct graph *g = gen_dag(8 + k % 4, 35, 1, 6);

		run_budgets(g);
		graph_free(g);
		g = gen_random_training(4 + k % 3, 40);
		run_budgets(g);
		graph_free(g);
	}
	/* Random DAGs whose least peak is above the lower bound (about one in
	 * eight, tests/t_pebble.c): a budget where no plan fits, proven. */
	for (int k = 0, found = 0; k < 400 && found < tap_cases(6, 2); k++) {
		struct graph *g = gen_dag(6 + k % 5, 35, 1, 6);

		found += run_proven_too_small(g);
		graph_free(g);
	}
	for (size_t k = 0; k < sizeof(shared) / sizeof(shared[0]) && tap_cases(1, 0); k++) {
		char path[512];
		struct graph *g;

		if (!tap_graph(path, sizeof(path), "%s", shared[k]))
			break;
		if ((g = graph_load(path, &err)) == NULL) {
			ok(0, "%s", err.msg);
			continue;
		}
		run_budgets(g);
		graph_free(g);
	}
	ok(failures[BOUNDS] == 0, "no fitting plan costs less than a bound valid for it: %d pairs, "
	   "%d below", checks[BOUNDS], failures[BOUNDS]);
	ok(failures[INFEASIBLE] == 0, "no infeasible where any strategy has a plan that fits: "
	   "%d infeasible, %d wrong", checks[INFEASIBLE], failures[INFEASIBLE]);
	ok(failures[OPTIMAL] == 0, "optimal only with a bound the cost meets: %d optimal, %d "
	   "wrong", checks[OPTIMAL], failures[OPTIMAL]);
	ok(failures[STATUS] == 0, "feasible and optimal with a plan that fits, over_budget with "
	   "one that does not: %d answers, %d wrong", checks[STATUS], failures[STATUS]);
	return tap_done();
}

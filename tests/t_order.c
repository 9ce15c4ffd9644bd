/* Execution orders (graph/order.h): a permuted graph is valid and the same
 * graph, a plan mapped back replays the same, the low-memory order is a
 * topological order no worse than file order, and lns from a start out of
 * file order returns a plan of the original graph within budget. */
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/num.h"
#include "../graph/order.h"
#include "../plan/sim.h"
#include "../solvers/search/dtr.h"
#include "../solvers/search/lns.h"
#include "../solvers/search/lns_order.h"
#include "gen.h"
#include "tap.h"

/* 1 when h is g permuted by order: same nodes, deps re-indexed, each
 * dep earlier. */
static int same_graph(const struct graph *g, const struct graph *h, const int *order)
{
	int *pos = malloc((size_t)g->n * sizeof(int)), good = h->n == g->n &&
		h->n_edges == g->n_edges && h->fixed_memory == g->fixed_memory;

	for (int k = 0; k < g->n; k++)
		pos[order[k]] = k;
	for (int k = 0; good && k < h->n; k++) {
		const struct graph_node *a = &h->nodes[k], *b = &g->nodes[order[k]];

		good = strcmp(a->name, b->name) == 0 && num_eq(a->cost, b->cost) &&
		       a->memory == b->memory && a->backward == b->backward &&
		       graph_ndeps(h, k) == graph_ndeps(g, order[k]);
		for (int e = 0; good && e < graph_ndeps(h, k); e++) {
			int d = h->deps[h->dep_off[k] + e];

			good = d < k && d == pos[g->deps[g->dep_off[order[k]] + e]];
		}
	}
	free(pos);
	return good;
}

/* Replays q on g and p on h: 1 when both are valid with the same cost and
 * peak. */
static int same_replay(const struct graph *g, const struct plan *q, const struct graph *h,
		       const struct plan *p)
{
	struct sim_result a, b;
	struct cm_error err;

	if (plan_simulate(g, q, SIM_NO_BUDGET, &a, &err) ||
	    plan_simulate(h, p, SIM_NO_BUDGET, &b, &err))
		return 0;
	return a.valid && b.valid && num_eq(a.cost, b.cost) && a.peak == b.peak;
}

static void check_permute(int trial)
{
	struct graph *g = gen_dag(12 + trial * 3, 20, 1, 50), *h;
	int *order = malloc((size_t)g->n * sizeof(int)), *bad = malloc((size_t)g->n * sizeof(int));
	struct plan *p = plan_new(), *q;
	struct cm_error err;

	gen_random_order(g, order);
	h = graph_permute(g, order, &err);
	ok(graph_is_order(g, order) && h && same_graph(g, h, order),
	   "graph %d: permuted to a random order, the same graph with every dep earlier", trial);
	ok(h && graph_peak_all(h) == graph_peak_of_order(g, order),
	   "graph %d: checkpoint-all peak of the order = the permuted graph's", trial);
	baseline_checkpoint_all(h, p, &err);
	q = lns_order_map(p, order);
	ok(q && same_replay(g, q, h, p), "graph %d: checkpoint-all of the permuted graph, mapped "
	   "back, replays with the same cost and peak", trial);
	plan_free(q);
	plan_clear(p);
	if (dtr_plan(h, (graph_lower_bound(h) + graph_peak_all(h)) / 2, NULL, p, &err) == 0) {
		q = lns_order_map(p, order);
		ok(q && same_replay(g, q, h, p), "graph %d: dtr's plan of the permuted graph, "
		   "mapped back, replays the same", trial);
		plan_free(q);
	}
	/* A dep after its user: refused. */
	memcpy(bad, order, (size_t)g->n * sizeof(int));
	for (int k = 0; k + 1 < g->n; k++)
		if (graph_ndeps(g, order[k + 1]) && g->deps[g->dep_off[order[k + 1]]] == order[k]) {
			bad[k] = order[k + 1];
			bad[k + 1] = order[k];
			break;
		}
	if (memcmp(bad, order, (size_t)g->n * sizeof(int)))
		ok(!graph_is_order(g, bad) && graph_permute(g, bad, &err) == NULL,
		   "graph %d: an order with a dep after its user is refused", trial);
	plan_free(p);
	graph_free(h);
	graph_free(g);
	free(order);
	free(bad);
}

static void check_low_memory(int trial)
{
	struct graph *g = gen_dag(20 + trial * 10, 10, 1, 100);
	int *order = malloc((size_t)g->n * sizeof(int));
	struct cm_error err;
	uint64_t peak = graph_low_memory_order(g, 16, (unsigned long long)trial, order, &err);

	ok(peak > 0 && graph_is_order(g, order) && peak == graph_peak_of_order(g, order) &&
	   peak <= graph_peak_all(g) && peak >= graph_lower_bound(g),
	   "graph %d: the low-memory order is topological, peaks at %llu <= %llu in file order",
	   trial, (unsigned long long)peak, (unsigned long long)graph_peak_all(g));
	graph_free(g);
	free(order);
}

/* lns from dtr's plan of g in a random order, mapped to g: a plan of g
 * within budget, no costlier than the start. over: a start over budget
 * (checkpoint-all in that order), which lns repairs first. */
static void check_lns(int trial, int over)
{
	struct graph *g = gen_dag(14, 25, 1, 40), *h;
	int *order = malloc((size_t)g->n * sizeof(int)), rc, ooo = 0;
	struct lns_opts o = { .ops = solver_find("glpk"), .time_limit = 3, .seed = 1 };
	struct plan *p = plan_new(), *start = NULL, *out = NULL;
	struct sim_result s0, s1;
	struct cm_error err;
	char why[256] = "";
	uint64_t budget;

	gen_random_order(g, order);
	h = graph_permute(g, order, &err);
	budget = graph_lower_bound(h) + (graph_peak_all(h) - graph_lower_bound(h)) / (over ? 2 : 3);
	if (over ? baseline_checkpoint_all(h, p, &err) : dtr_plan(h, budget, NULL, p, &err)) {
		ok(1, "graph %d: no start (dtr found no plan)", trial);
		goto out;
	}
	start = lns_order_map(p, order);
	plan_simulate(g, start, budget, &s0, &err);
	plan_first_computes(start, g->n, order);
	for (int k = 0; k < g->n; k++)
		ooo |= order[k] != k;
	rc = lns_improve(g, budget, start, &o, &out, NULL, why, sizeof(why), &err);
	if (rc == 0)
		plan_simulate(g, out, budget, &s1, &err);
	ok(ooo && s0.valid && (over ? !s0.fits : s0.fits) &&
	   (rc == 0 ? s1.valid && s1.fits && (over || num_le(s1.cost, s0.cost)) : over && rc == 1),
	   "graph %d: lns from a start out of file order%s: %s (start %.0f, lns %.0f)", trial,
	   over ? " and over budget" : "", rc == 0 ? "fits" : rc == 1 ? why : "error",
	   s0.cost, rc == 0 ? s1.cost : 0);
out:
	plan_free(out);
	plan_free(start);
	plan_free(p);
	graph_free(h);
	graph_free(g);
	free(order);
}

int main(void)
{
	for (int t = 0; t < 6; t++)
		check_permute(t);
	for (int t = 0; t < 6; t++)
		check_low_memory(t);
	for (int t = 0; t < 4; t++)
		check_lns(t, t % 2);
	return tap_done();
}

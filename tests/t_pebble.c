/* The pebble game (graph/pebble.h) and the pebble row against the least
 * peak of any plan, found by brute force on small graphs: the proof shows
 * every budget below that peak too small and no budget at it, and given
 * too few states shows nothing; the schedule and the row find a plan at
 * that peak, which replays within it and computes every node. */
#include <stdlib.h>
#include <string.h>

#include "../graph/pebble.h"
#include "../plan/sim.h"
#include "gen.h"
#include "tap.h"

/* 1 when some plan of g (at most 9 nodes) fits budget: search over
 * (resident, computed once) pairs of node sets. */
static int brute_fits(const struct graph *g, uint64_t budget)
{
	int n = g->n, all = (1 << n) - 1, fits = 0;
	unsigned char *seen = calloc((size_t)1 << (2 * n), 1);
	int *stack = malloc(((size_t)1 << (2 * n)) * sizeof(int)), sp = 0;

	seen[0] = 1;
	stack[sp++] = 0;
	while (sp && !fits) {
		int s = stack[--sp], res = s & all, done = s >> n;
		uint64_t held = g->fixed_memory;

		if (done == all) {
			fits = 1;
			break;
		}
		for (int x = 0; x < n; x++)
			if (res >> x & 1)
				held += g->nodes[x].memory;
		for (int x = 0; x < n; x++) {
			int deps = 0, t;

			for (int j = g->dep_off[x]; j < g->dep_off[x + 1]; j++)
				deps |= 1 << g->deps[j];
			if (res >> x & 1)
				t = (res & ~(1 << x)) | done << n;
			else if ((deps & res) == deps && held + g->nodes[x].memory <= budget)
				t = (res | 1 << x) | (done | 1 << x) << n;
			else
				continue;
			if (!seen[t]) {
				seen[t] = 1;
				stack[sp++] = t;
			}
		}
	}
	free(seen);
	free(stack);
	return fits;
}

/* The least budget some plan of g fits. */
static uint64_t brute_least(const struct graph *g)
{
	uint64_t lo = g->fixed_memory, hi = g->fixed_memory;   /* lo too small, hi fits */

	for (int k = 0; k < g->n; k++)
		hi += g->nodes[k].memory;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (brute_fits(g, mid))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* n nodes, two sources, then each node reading two of the three before
 * it, sizes 1-3: deep and narrow, where recomputation saves memory. */
static struct graph *narrow_dag(int n)
{
	struct cm_error err;
	struct graph *g = graph_new("narrow");
	char name[16];

	for (int k = 0; k < n; k++) {
		int skip = (int)(gen_rnd() % 3);

		snprintf(name, sizeof(name), "v%d", k);
		graph_add_node(g, name, 1, 1 + gen_rnd() % 3, 0, &err);
		for (int i = k - 3; k >= 2 && i < k; i++)
			if (i >= 0 && i != k - 3 + skip)
				graph_add_dep(g, i, &err);
	}
	graph_finish(g, &err);
	return g;
}

/* 1 when the pebble row at budget answers a plan that replays within it
 * and computes every node, or (want_plan 0) proves that none fits. */
static int row_answers(const struct graph *g, uint64_t budget, int want_plan)
{
	struct solve_request rq = { .strategy = "pebble", .budget = budget, .time_limit = 60 };
	struct solve_outcome o;
	struct cm_error err;
	int good;

	if (strategy_solve(g, &rq, &o, &err))
		return 0;
	good = want_plan ? (o.status == STATUS_FEASIBLE || o.status == STATUS_OPTIMAL) && o.plan && o.sim.valid && o.sim.fits &&
			   o.sim.peak <= budget
			 : o.status == STATUS_INFEASIBLE && o.plan == NULL;
	strategy_outcome_release(&o);
	return good;
}

static void check(struct graph *g, const char *what, int *wrong, int *above_lb)
{
	uint64_t least = brute_least(g);
	int node = -1, ancestors = -1, snode = -1, sanc = -1, below, at, *steps = NULL;
	long n_steps;

	*above_lb += least > graph_lower_bound(g);
	below = graph_pebble_schedule(g, least - 1, GRAPH_PEBBLE_STATES, 60, &steps, &n_steps,
				      &snode, &sanc);
	free(steps);
	at = graph_pebble_schedule(g, least, GRAPH_PEBBLE_STATES, 60, &steps, &n_steps, &node,
				   &ancestors);
	free(steps);
	if (graph_pebble_infeasible(g, least, GRAPH_PEBBLE_STATES, 60, &node, &ancestors) ||
	    graph_pebble_infeasible(g, least, 1, 60, &node, &ancestors) ||
	    !graph_pebble_infeasible(g, least - 1, GRAPH_PEBBLE_STATES, 60, &node, &ancestors) ||
	    node < 0 || node >= g->n || ancestors < 0 || ancestors >= g->n ||
	    below != 0 || snode < 0 || snode >= g->n || graph_nusers(g, snode) != 0 ||
	    sanc < 0 || sanc >= g->n || at != 1 ||
	    !row_answers(g, least, 1) || !row_answers(g, least - 1, 0)) {
		(*wrong)++;
		diag("%s: least peak %llu, node %d", what, (unsigned long long)least, node);
	}
}

int main(void)
{
	int wrong = 0, above_lb = 0, graphs = 0;

	for (int t = 0; t < 150; t++, graphs++) {
		struct graph *g = gen_dag(2 + t % 8, 30 + (int)(gen_rnd() % 60), 1, 9);

		if (t % 3 == 0)
			g->fixed_memory = 5;
		check(g, "forward DAG", &wrong, &above_lb);
		graph_free(g);
	}
	for (int t = 0; t < 60; t++, graphs++) {
		struct graph *g = narrow_dag(6 + t % 4);

		check(g, "narrow DAG", &wrong, &above_lb);
		graph_free(g);
	}
	for (int t = 0; t < 40; t++, graphs++) {
		struct graph *g = gen_random_training(1 + t % 4, 50);

		check(g, "training graph", &wrong, &above_lb);
		graph_free(g);
	}
	ok(wrong == 0, "on %d random graphs, exactly the budgets below the least peak are "
	   "proven too small, and the pebble row fits that peak (%d wrong)", graphs, wrong);
	ok(above_lb >= 20, "the least peak is above the memory model's bound on %d of them, where the "
	   "proof goes further than that bound", above_lb);
	return tap_done();
}

/* checkmate partition (solvers/milp/partition.h): on random training
 * graphs its answer is the cheapest saved set within the budget that an
 * enumeration of every set finds, with both backends; with materialized
 * values (half the random graphs, and chains where every value is),
 * every answer is within the budget as derived, none is cheaper than the
 * enumeration, optimal only at its cost, and infeasible only where no set
 * fits; with save costs, the answer is still the enumeration's; with
 * values that may not be saved, too, and it saves none of them; a
 * workspace counts at its node's position, in the answer and the least
 * memory; a
 * materialized value is held until the last read of a value computed
 * again from it that is not materialized; its
 * figures are partition_derive's; a budget below the least
 * memory is infeasible and one at it has an answer; the shared 12-layer
 * GPT's answers are within the default gap of their bounds and cost less
 * as the budget grows. */
#include <stdlib.h>
#include <string.h>

#include "../common/num.h"
#include "../graph/read.h"
#include "../solvers/milp/partition.h"
#include "gen.h"
#include "tap.h"

static const struct solve_opts opts = { .time_limit = 30 };

/* The least cost of any saved set of g within budget: every subset of
 * the forward nodes (at most 16), through partition_derive. */
static double enumerate(const struct graph *g, uint64_t budget)
{
	int fwd[16], nf = 0;
	double best = -1;
	struct partition p = { .saved = calloc((size_t)g->n, 1), .again = calloc((size_t)g->n, 1) };

	for (int v = 0; v < g->n && nf < 16; v++)
		if (!g->nodes[v].backward)
			fwd[nf++] = v;
	for (long s = 0; s < (1L << nf); s++) {
		memset(p.saved, 0, (size_t)g->n);
		for (int k = 0; k < nf; k++)
			p.saved[fwd[k]] = (s >> k) & 1;
		if (partition_derive(g, &p))
			return -2;
		if (p.memory <= budget && (best < 0 || p.cost < best))
			best = p.cost;
	}
	partition_release(&p);
	return best;
}

/* Whether p's figures are what partition_derive makes of its saved set. */
static int consistent(const struct graph *g, const struct partition *p)
{
	struct partition q = { .saved = malloc((size_t)g->n), .again = calloc((size_t)g->n, 1) };
	int same;

	memcpy(q.saved, p->saved, (size_t)g->n);
	same = partition_derive(g, &q) == 0 && memcmp(q.saved, p->saved, (size_t)g->n) == 0 &&
	       memcmp(q.again, p->again, (size_t)g->n) == 0 && q.cost == p->cost &&
	       q.memory == p->memory;
	partition_release(&q);
	return same;
}

/* Whether p, an answer for budget b whose cheapest saved set enumerated
 * costs best (-1: none fits), is right: optimal only at that cost, within
 * the budget and as derived, its bound valid; infeasible only where none
 * fits. exact: the graph has no materialized values, where the model is
 * exact and every answer must be optimal. */
static int right(const struct graph *g, const struct partition *p, uint64_t b, double best,
		 int exact)
{
	if (best < 0)
		return p->status == PARTITION_INFEASIBLE || (!exact && p->status == PARTITION_NO_PLAN);
	if (p->status == PARTITION_NO_PLAN)
		return !exact;
	if (p->status == PARTITION_INFEASIBLE || p->memory > b || !consistent(g, p) ||
	    num_lt(p->cost, best) || (p->has_bound && num_lt(best, p->bound)))
		return 0;
	if (p->status == PARTITION_OPTIMAL)
		return num_eq(p->cost, best) && p->has_bound;
	return !exact;
}

/* Random training graphs, the materialized flags (seeded) on the forward
 * nodes of every other one. */
static void test_random(void)
{
	const struct solver_ops *const backends[] = { &solver_cbc, &solver_glpk };
	int cases = tap_cases(30, 8), checked[2] = { 0 }, bad = 0, recomputes = 0;
	int infeasible[2] = { 0 }, at_best = 0, no_plan = 0, proven = 0;
	unsigned seed = 7;

	for (int c = 0; c < cases; c++) {
		struct graph *g = gen_random_training(3 + c % 8, 35);
		uint64_t lo = g->fixed_memory, hi = graph_peak_all(g);
		int mat = c % 2;

		for (int v = 0; v < g->n && mat; v++) {
			seed = seed * 1103515245u + 12345u;
			g->nodes[v].materialized = !g->nodes[v].backward && (seed >> 16) % 2;
		}
		/* Every third graph: workspaces on some backward nodes. */
		for (int v = 0; v < g->n && c % 3 == 0; v++) {
			seed = seed * 1103515245u + 12345u;
			if (g->nodes[v].backward && (seed >> 16) % 3 == 0)
				g->nodes[v].workspace = (seed >> 18) % 40;
		}
		for (int f = 0; f <= 4; f++) {
			uint64_t b = lo + (hi - lo) * (uint64_t)(f + 2 * mat) / (4 + 2 * mat);
			double best = enumerate(g, b);

			for (int k = 0; k < 2; k++) {
				struct partition p;
				struct cm_error err;

				if (partition_solve(g, b, backends[k], &opts, &p, &err)) {
					bad++;
					diag("case %d f %d: %s", c, f, err.msg);
					continue;
				}
				checked[mat]++;
				recomputes += p.n_again > 0;
				infeasible[mat] += best < 0;
				at_best += mat && best >= 0 && p.status != PARTITION_NO_PLAN &&
					   num_eq(p.cost, best);
				no_plan += p.status == PARTITION_NO_PLAN;
				proven += mat && p.status == PARTITION_OPTIMAL;
				if (!right(g, &p, b, best, !mat)) {
					bad++;
					diag("case %d f %d %s: status %s cost %g (enumerated %g) memory %llu "
					     "budget %llu", c, f, k ? "glpk" : "cbc",
					     partition_status_names[p.status], p.cost, best,
					     (unsigned long long)p.memory, (unsigned long long)b);
				}
				partition_release(&p);
			}
		}
		graph_free(g);
	}
	ok(bad == 0 && checked[0] > infeasible[0] && recomputes > 0 && infeasible[0] > 0,
	   "random training graphs, cbc and glpk: %d answers, each optimal, within budget and as "
	   "cheap as every saved set enumerated, or infeasible where none fits (%d; %d with "
	   "recomputes; %d wrong)", checked[0], infeasible[0], recomputes, bad);
	diag("with materialized values: %d answers, %d infeasible (enumerated), %d at the "
	     "enumerated cost (%d proven), %d no_plan", checked[1], infeasible[1], at_best, proven,
	     no_plan);
	ok(bad == 0 && checked[1] > infeasible[1] && at_best * 10 >= (checked[1] - infeasible[1]) * 9,
	   "random training graphs with materialized values: %d answers, each within budget as "
	   "derived, none cheaper than the enumeration, optimal only at its cost, infeasible only "
	   "where none fits; %d of %d that fit at the enumerated cost", checked[1], at_best,
	   checked[1] - infeasible[1]);
}

/* Random training graphs whose forward values cost something to save
 * (seeded, up to twice the node's cost), half of them with materialized
 * values: every answer is right (as in test_random; without materialized
 * values, the cheapest saved set enumerated, save costs included), and
 * at the keep-all memory, where without save costs nothing is computed
 * again, some answers compute values again to save less. */
static void test_save_costs(void)
{
	int cases = tap_cases(24, 6), checked = 0, bad = 0, trade = 0;
	unsigned seed = 11;
	double keep_cost;

	for (int c = 0; c < cases; c++) {
		struct graph *g = gen_random_training(3 + c % 8, 35);
		uint64_t lo = g->fixed_memory, hi = graph_peak_all(g);

		for (int v = 0; v < g->n; v++) {
			seed = seed * 1103515245u + 12345u;
			if (g->nodes[v].backward)
				continue;
			g->nodes[v].save_cost = g->nodes[v].cost * ((seed >> 16) % 9) / 4;
			g->nodes[v].materialized = c % 2 && (seed >> 20) % 2;
		}
		if (partition_keep_all(g, &hi, &keep_cost)) {
			bad++;
			break;
		}
		for (int f = 0; f <= 4; f++) {
			uint64_t b = lo + (hi - lo) * (uint64_t)f / 4;
			double best = enumerate(g, b);
			struct partition p;
			struct cm_error err;

			if (partition_solve(g, b, &solver_cbc, &opts, &p, &err)) {
				bad++;
				diag("case %d f %d: %s", c, f, err.msg);
				continue;
			}
			checked++;
			trade += f == 4 && p.n_again > 0;
			if (!right(g, &p, b, best, c % 2 == 0)) {
				bad++;
				diag("case %d f %d: status %s cost %g (enumerated %g)", c, f,
				     partition_status_names[p.status], p.cost, best);
			}
			partition_release(&p);
		}
		graph_free(g);
	}
	ok(bad == 0 && trade > 0,
	   "random training graphs with save costs: %d answers, each right (optimal and as cheap "
	   "as every saved set enumerated without materialized values); %d at the keep-all "
	   "memory compute values again", checked, trade);
}

/* Random training graphs where some forward values may not be saved
 * (seeded: a third; half the graphs with materialized values): every
 * answer is right against the enumeration, whose sets saving an
 * unsaveable value derive as those that do not, and saves none; at
 * some budgets the least cost rises. */
static void test_unsaveable(void)
{
	int cases = tap_cases(24, 6), checked = 0, bad = 0, kept = 0, dearer = 0;
	unsigned seed = 13;

	for (int c = 0; c < cases; c++) {
		struct graph *g = gen_random_training(3 + c % 8, 35);
		uint64_t lo = g->fixed_memory, hi = graph_peak_all(g);
		char *no = calloc((size_t)g->n, 1);

		for (int v = 0; v < g->n && no != NULL; v++) {
			seed = seed * 1103515245u + 12345u;
			no[v] = !g->nodes[v].backward && (seed >> 16) % 3 == 0;
			g->nodes[v].materialized = c % 2 && !g->nodes[v].backward &&
						   (seed >> 20) % 2;
		}
		for (int f = 0; f <= 4 && no != NULL; f++) {
			uint64_t b = lo + (hi - lo) * (uint64_t)f / 4;
			double all, best;
			struct partition p;
			struct cm_error err;

			for (int v = 0; v < g->n; v++)
				g->nodes[v].unsaveable = 0;
			all = enumerate(g, b);
			for (int v = 0; v < g->n; v++)
				g->nodes[v].unsaveable = no[v];
			best = enumerate(g, b);
			dearer += all >= 0 && (best < 0 || best > all);
			if (partition_solve(g, b, &solver_cbc, &opts, &p, &err)) {
				bad++;
				diag("case %d f %d: %s", c, f, err.msg);
				continue;
			}
			checked++;
			for (int v = 0; v < g->n; v++)
				kept += p.saved[v] && no[v];
			if (!right(g, &p, b, best, c % 2 == 0)) {
				bad++;
				diag("case %d f %d: status %s cost %g (enumerated %g)", c, f,
				     partition_status_names[p.status], p.cost, best);
			}
			partition_release(&p);
		}
		bad += no == NULL;
		free(no);
		graph_free(g);
	}
	ok(bad == 0 && kept == 0 && dearer > 0,
	   "random training graphs with unsaveable values: %d answers, each right against the "
	   "enumeration, none saving an unsaveable value (%d); at %d budgets the least cost "
	   "is higher than with every value saveable", checked, kept, dearer);
}

/* The built-in chains, every forward value materialized: nothing saved
 * computes the whole chain again before the backward's first node, which
 * the model's rows do not count, so first answers can be over the budget
 * and the next rounds must find one within it. */
static void test_chains(void)
{
	int bad = 0, fits = 0, at_best = 0, answers = 0;

	for (int n = 3; n <= 10; n++) {
		struct cm_error err;
		struct graph *g = graph_linear(n, &err);
		uint64_t lo = g->fixed_memory, hi = graph_peak_all(g);

		for (int v = 0; v < g->n; v++)
			g->nodes[v].materialized = !g->nodes[v].backward;
		for (uint64_t b = lo; b <= hi; b++) {
			double best = enumerate(g, b);
			struct partition p;

			if (partition_solve(g, b, &solver_cbc, &opts, &p, &err)) {
				bad++;
				continue;
			}
			fits += best >= 0;
			answers += p.status == PARTITION_OPTIMAL || p.status == PARTITION_FEASIBLE;
			at_best += best >= 0 && p.status != PARTITION_NO_PLAN && num_eq(p.cost, best);
			if (!right(g, &p, b, best, 0)) {
				bad++;
				diag("linear:%d budget %llu: status %s cost %g (enumerated %g) memory %llu",
				     n, (unsigned long long)b, partition_status_names[p.status], p.cost,
				     best, (unsigned long long)p.memory);
			}
			partition_release(&p);
		}
		graph_free(g);
	}
	ok(bad == 0 && answers > 0 && at_best * 4 >= fits * 3,
	   "chains, every value materialized: each answer within budget as derived, none "
	   "cheaper than the enumeration, infeasible only where none fits; %d of %d budgets that "
	   "fit at the enumerated cost", at_best, fits);
}

/* A materialized value read by a value computed again that is not
 * materialized is read wherever that one is (a compiler computes it inside
 * each program that reads it): r1 (materialized, 4 B) -> m1 -> x1, the
 * backward's first node reads x1 (so r1, m1, x0, x1 are computed again
 * there) and its second reads m1. Saving nothing holds r1 from the first
 * to the second: 4 + 3 B there, against 4 + 1 B at the first. */
static void test_fused_reads(void)
{
	struct cm_error err;
	struct graph *g = graph_new("fused-reads");
	struct partition p = { 0 };
	int r1, m1, x0, x1, loss, d1, rc;

	r1 = graph_add_node(g, "r1", 1, 4, 0, &err);
	m1 = graph_add_node(g, "m1", 1, 1, 0, &err);
	graph_add_dep(g, r1, &err);
	x0 = graph_add_node(g, "x0", 1, 2, 0, &err);
	x1 = graph_add_node(g, "x1", 1, 2, 0, &err);
	graph_add_dep(g, x0, &err);
	graph_add_dep(g, m1, &err);
	loss = graph_add_node(g, "loss", 1, 1, 1, &err);
	graph_add_dep(g, x1, &err);
	d1 = graph_add_node(g, "d1", 1, 2, 1, &err);
	graph_add_dep(g, loss, &err);
	graph_add_dep(g, m1, &err);
	graph_add_dep(g, x0, &err);
	graph_add_node(g, "w1", 1, 1, 1, &err);
	graph_add_dep(g, d1, &err);
	rc = graph_finish(g, &err);
	g->nodes[r1].materialized = 1;
	p.saved = calloc((size_t)g->n, 1);
	p.again = calloc((size_t)g->n, 1);
	rc = rc || p.saved == NULL || p.again == NULL || partition_derive(g, &p);
	ok(rc == 0 && p.n_again == 4 && p.memory == 7,
	   "a materialized value read by one computed again inside the backward's programs is "
	   "held until that one's last read (memory %llu, 7 expected)",
	   (unsigned long long)p.memory);
	partition_release(&p);
	graph_free(g);
}

/* A workspace counts at its node's position only: f0 -> f1 -> loss, b1
 * reads loss and f0, b0 reads b1; 4 B values, loss 1 B. Saving both, the
 * backward holds 9 B at loss (f0, f1, loss) and at b1 (f0, loss, b1), 8 B
 * at b0. A 3 B workspace on loss makes that 12 B; saving f0 alone (f1
 * computed again, fused: no memory) holds 5 + 3 B at loss and 9 B at b1,
 * so at 11 B the answer saves f0 alone (f0 costs 2, f1 1: saving f1
 * alone fits too, dearer). A 6 B workspace on b0 puts every
 * partition at 14 B there, the least memory. */
static void test_workspace(void)
{
	struct cm_error err;
	struct graph *g = graph_new("workspace");
	struct partition p = { 0 };
	int f0, f1, loss, b0, rc;

	f0 = graph_add_node(g, "f0", 2, 4, 0, &err);
	f1 = graph_add_node(g, "f1", 1, 4, 0, &err);
	graph_add_dep(g, f0, &err);
	loss = graph_add_node(g, "loss", 1, 1, 1, &err);
	graph_add_dep(g, f1, &err);
	graph_add_node(g, "b1", 1, 4, 1, &err);
	graph_add_dep(g, loss, &err);
	graph_add_dep(g, f0, &err);
	b0 = graph_add_node(g, "b0", 1, 4, 1, &err);
	graph_add_dep(g, b0 - 1, &err);
	rc = graph_finish(g, &err);
	g->nodes[loss].workspace = 3;
	p.saved = calloc((size_t)g->n, 1);
	p.again = calloc((size_t)g->n, 1);
	rc = rc || p.saved == NULL || p.again == NULL;
	if (rc == 0) {
		p.saved[f0] = p.saved[f1] = 1;
		rc = partition_derive(g, &p);
	}
	ok(rc == 0 && p.memory == 12, "a workspace counts at its node: saving all, 12 B (%llu)",
	   (unsigned long long)p.memory);
	partition_release(&p);
	rc = rc || partition_solve(g, 11, &solver_cbc, &opts, &p, &err);
	ok(rc == 0 && p.status == PARTITION_OPTIMAL && p.memory == 9 && p.saved[f0] &&
	   !p.saved[f1] && p.again[f1] && p.least == 8,
	   "at 11 B with a 3 B workspace at loss: optimal, f0 saved, f1 computed again, 9 B, the "
	   "least 8 B");
	if (rc == 0)
		partition_release(&p);
	g->nodes[b0].workspace = 6;
	rc = rc || partition_solve(g, 13, &solver_glpk, &opts, &p, &err);
	ok(rc == 0 && p.status == PARTITION_INFEASIBLE && p.least == 14,
	   "a 6 B workspace at b0: the least memory 14 B, 13 B infeasible");
	if (rc == 0)
		partition_release(&p);
	graph_free(g);
}

static void test_shapes(void)
{
	struct graph *g = gen_random_training(5, 35);
	struct partition p;
	struct cm_error err;
	char path[512];
	double last = -1;
	uint64_t least;
	int rc, falling = 1;

	g->fixed_memory = 100;
	rc = partition_solve(g, 99, &solver_cbc, &opts, &p, &err);
	ok(rc == 0 && p.status == PARTITION_INFEASIBLE && p.least > 100,
	   "a budget below fixed memory: infeasible, the least memory above fixed memory (the "
	   "backward's own values)");
	least = rc == 0 ? p.least : 0;
	partition_release(&p);
	rc = partition_solve(g, least - 1, &solver_cbc, &opts, &p, &err);
	ok(rc == 0 && p.status == PARTITION_INFEASIBLE, "a budget a byte below the least: infeasible");
	partition_release(&p);
	rc = partition_solve(g, least, &solver_cbc, &opts, &p, &err);
	ok(rc == 0 && p.status == PARTITION_OPTIMAL && p.memory == least,
	   "a budget of the least: an answer, its memory the least");
	partition_release(&p);
	graph_free(g);
	if (!tap_graph(path, sizeof(path), "llm/gpt12.json"))
		return;
	if ((g = graph_read_file(path, &err)) == NULL) {
		ok(0, "read %s: %s", path, err.msg);
		return;
	}
	for (int q = 1; q <= 4; q++) {
		uint64_t b = g->fixed_memory + (graph_peak_all(g) - g->fixed_memory) * (uint64_t)q / 4;
		struct solve_opts at_gap = { .time_limit = 30, .gap = PARTITION_GAP };

		rc = partition_solve(g, b, &solver_cbc, &at_gap, &p, &err);
		falling &= rc == 0 && p.memory <= b && consistent(g, &p) && p.has_bound &&
			   !num_lt(p.cost, p.bound) && p.cost <= p.bound * (1 + PARTITION_GAP) &&
			   (last < 0 || p.cost <= last * (1 + PARTITION_GAP));
		diag("gpt12 at %d/4: %s, overhead %.4f, %d saved, %d again", q,
		     rc ? err.msg : partition_status_names[p.status],
		     rc ? 0 : p.cost / graph_total_cost(g), rc ? 0 : p.n_saved, rc ? 0 : p.n_again);
		last = rc ? -1 : p.cost;
		if (rc == 0)
			partition_release(&p);
	}
	ok(falling, "gpt12 over four budgets at the default gap: within each, as derived, within "
	   "the gap of its bound, no dearer as it grows (up to the gap)");
	graph_free(g);
}

int main(void)
{
	test_random();
	test_save_costs();
	test_unsaveable();
	test_chains();
	test_fused_reads();
	test_workspace();
	test_shapes();
	return tap_done();
}

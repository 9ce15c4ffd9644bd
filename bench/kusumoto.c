/* Measurements of Kusumoto et al.'s DP (solvers/search/kusumoto.c) for
 * docs/kusumoto.md. Usage:
 *   kusumoto table GRAPH...   four variants at f = .25/.5/.75 of
 *                             (peak - lb) above lb: CSV rows
 *   kusumoto onefwd GRAPH...  the smallest budget at which a variant costs
 *                             at most total + forward cost (bisection)
 *   kusumoto vsilp N SECS     linear:2..N and 100 random training graphs
 *                             (tests/gen.h) at every integer budget from
 *                             the lower bound to the peak: each variant
 *                             that fits against the ilp (Cbc, SECS a
 *                             solve): its optimum, else its bound
 * GRAPH is a file or linear:N. Results on standard output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../graph/read.h"
#include "../plan/sim.h"
#include "../solvers/search/kusumoto.h"
#include "../tests/gen.h"

static const char *names[4] = { "approx-tc", "approx-mc", "exact-tc", "exact-mc" };

/* One run; returns kusumoto_run's code, the replay in res. */
static int one(const struct graph *g, uint64_t b, int v, struct sim_result *res,
	       struct kusumoto_stats *st, double *secs, char *why, size_t len)
{
	struct kusumoto_opts o;
	struct plan *p = plan_new();
	struct cm_error err = { "" };
	double t0 = cm_clock();
	int r;

	kusumoto_opts_init(&o);
	o.exact = v >= 2;
	o.memory_centric = v & 1;
	r = kusumoto_run(g, b, &o, p, st, why, len, &err);
	*secs = cm_clock() - t0;
	memset(res, 0, sizeof(*res));
	if (r == 0 && plan_simulate(g, p, b, res, &err))
		r = -1;
	if (r < 0)
		snprintf(why, len, "%s", err.msg);
	else if (r == 0)
		why[0] = '\0';
	plan_free(p);
	return r;
}

static double forward_cost(const struct graph *g)
{
	double f = 0;

	for (int k = 0; k < g->n; k++)
		if (!g->nodes[k].backward)
			f += g->nodes[k].cost;
	return f;
}

static void table(const struct graph *g)
{
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
	double total = graph_total_cost(g);

	for (int f = 1; f <= 3; f++) {
		uint64_t b = lb + (uint64_t)((double)(peak - lb) * f / 4.0);

		for (int v = 0; v < 4; v++) {
			struct sim_result res;
			struct kusumoto_stats st;
			double secs;
			char why[600];
			int r = one(g, b, v, &res, &st, &secs, why, sizeof(why));

			printf("%s,%s,%.2f,%llu,%d,%d,%.17g,%.6f,%llu,%ld,%d,%g,%d,%llu,%d,%.3f,\"%s\"\n",
			       g->id, names[v], f / 4.0, (unsigned long long)b, r,
			       r == 0 && res.fits, r == 0 ? res.cost : 0,
			       r == 0 ? res.cost / total : 0, (unsigned long long)res.peak,
			       st.lower_sets, st.time_units, st.unit, st.dp_runs,
			       (unsigned long long)st.dp_budget, st.blocks, secs, why);
			fflush(stdout);
		}
	}
}

/* Smallest budget in [lb, peak] where variant v fits at a cost of at most
 * total + forward: bisection (costs are not monotone in the budget, so
 * this is the smallest the bisection finds). */
static void onefwd(const struct graph *g)
{
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
	double cap = graph_total_cost(g) + forward_cost(g);

	for (int v = 0; v < 4; v++) {
		uint64_t lo = lb - 1, hi = peak, eps = (peak - lb) / 2000 + 1;
		double secs, tsum = 0, cost = graph_total_cost(g);
		struct sim_result res;
		struct kusumoto_stats st;
		char why[600];
		int r = 0;

		while (hi - lo > eps) {
			uint64_t b = lo + (hi - lo) / 2;

			r = one(g, b, v, &res, &st, &secs, why, sizeof(why));
			tsum += secs;
			if (r > 0 && r != KUSUMOTO_NO_PLAN)
				break;
			if (r == 0 && res.fits && res.cost <= cap * (1 + 1e-12)) {
				hi = b;
				cost = res.cost;
			} else {
				lo = b;
			}
		}
		if (r > 0 && r != KUSUMOTO_NO_PLAN) {
			printf("%s,%s,,,,,%.1f,\"%s\"\n", g->id, names[v], tsum, why);
			continue;
		}
		printf("%s,%s,%llu,%llu,%.4f,%.17g,%.1f,\n", g->id, names[v],
		       (unsigned long long)hi, (unsigned long long)peak,
		       1.0 - (double)hi / (double)peak, cost, tsum);
		fflush(stdout);
	}
}

/* The ilp at b within secs: *cost its proven optimum (-1 none), *bound its
 * proven bound on the cost (0 when it has none). */
static void ilp_at(const struct graph *g, uint64_t b, double secs, double *cost, double *bound)
{
	struct solve_request rq = { .strategy = "ilp", .budget = b, .solver = "cbc",
				    .time_limit = secs };
	struct solve_outcome o;
	struct cm_error err;

	*cost = -1;
	*bound = 0;
	if (strategy_solve(g, &rq, &o, &err))
		return;
	if (o.status == STATUS_INFEASIBLE)
		*bound = INFINITY;
	else if (o.status == STATUS_OPTIMAL && o.sim.fits)
		*cost = *bound = o.sim.cost;
	else if (o.has_lower_bound)
		*bound = o.lower_bound;
	strategy_outcome_release(&o);
}

/* Every integer budget of g: a CSV row per variant that fits (graph,
 * budget, variant, cost, ilp optimum or empty, ilp bound, ratio), one row
 * "none" when no variant fits. */
static void vsilp_graph(const struct graph *g, const char *name, double secs)
{
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

	for (uint64_t b = lb; b <= peak; b++) {
		struct sim_result res[4];
		int fit = 0;
		double opt, bound;

		for (int v = 0; v < 4; v++) {
			struct kusumoto_stats st;
			double t;
			char why[600];

			if (one(g, b, v, &res[v], &st, &t, why, sizeof(why)) == 0 && res[v].fits)
				fit |= 1 << v;
		}
		if (!fit) {
			printf("%s,%llu,none,,,,\n", name, (unsigned long long)b);
			continue;
		}
		ilp_at(g, b, secs, &opt, &bound);
		for (int v = 0; v < 4; v++) {
			if (!(fit & 1 << v))
				continue;
			printf("%s,%llu,%s,%.17g,", name, (unsigned long long)b, names[v], res[v].cost);
			if (opt >= 0)
				printf("%.17g,%.17g,%.6f\n", opt, bound, res[v].cost / opt);
			else
				printf(",%.17g,\n", bound);
		}
		fflush(stdout);
	}
}

static int vsilp(int n, double secs)
{
	struct cm_error err;
	char name[32];

	printf("graph,budget,variant,cost,ilp_optimum,ilp_bound,ratio\n");
	for (int k = 2; k <= n; k++) {
		struct graph *g = graph_linear(k, &err);

		snprintf(name, sizeof(name), "linear:%d", k);
		vsilp_graph(g, name, secs);
		graph_free(g);
	}
	for (int trial = 0; trial < 100; trial++) {
		struct graph *g = gen_random_training(3 + (int)(gen_rnd() % 4),
						      20 + (int)(gen_rnd() % 40));

		snprintf(name, sizeof(name), "random%d", trial);
		vsilp_graph(g, name, secs);
		graph_free(g);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "vsilp") == 0)
		return vsilp(atoi(argv[2]), atof(argv[3]));
	if (argc < 3 || (strcmp(argv[1], "table") && strcmp(argv[1], "onefwd"))) {
		fprintf(stderr, "usage: kusumoto table|onefwd GRAPH... | vsilp N SECS\n");
		return 2;
	}
	if (strcmp(argv[1], "table") == 0)
		printf("graph,variant,f,budget,ret,fits,cost,overhead,peak,lower_sets,"
		       "time_units,unit,dp_runs,dp_budget,blocks,seconds,why\n");
	else
		printf("graph,variant,budget,peak_all,reduction,cost,seconds,why\n");
	for (int i = 2; i < argc; i++) {
		struct cm_error err;
		struct graph *g = graph_load(argv[i], &err);

		if (!g) {
			fprintf(stderr, "kusumoto: %s\n", err.msg);
			return 1;
		}
		if (strcmp(argv[1], "table") == 0)
			table(g);
		else
			onefwd(g);
		graph_free(g);
	}
	return 0;
}

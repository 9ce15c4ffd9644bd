/* The profile of a plan (plan/profile.c): memory over the steps and the
 * compute counts, against the simulator and plans whose figures are known
 * by hand. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/num.h"
#include "../graph/read.h"
#include "../plan/profile.h"
#include "../plan/stages.h"
#include "gen.h"
#include "tap.h"

/* linear:2 keeping f0 nowhere: f0 is computed again for b0. */
static void test_by_hand(void)
{
	static const uint64_t want[] = { 1, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 0 };
	struct cm_error err;
	struct graph *g = graph_load("linear:2", &err);
	struct plan *p = gen_plan_of(g, "c f0, c f1, f f0, c loss, c b1, f loss, f f1, "
				     "c f0, c b0, f f0, f b1, f b0");
	struct profile pr;
	int same = p->n == (int)(sizeof(want) / sizeof(want[0]));
	int rc = profile_plan(g, p, 3, NULL, &pr, &err);

	ok(rc == 0 && pr.sim.valid && pr.sim.fits, "a valid plan profiles: %s", pr.sim.why);
	for (int i = 0; same && i < p->n; i++)
		same = pr.memory[i] == want[i];
	ok(same, "memory after each step as replayed by hand");
	ok(pr.computes[0] == 2 && pr.computes[1] == 1 && pr.ncomputes == 6,
	   "f0 computed twice, f1 once, 6 computes in all");
	ok(pr.nrecomputed == 1 && pr.by_cost[0] == 0 && pr.extra_computes == 1 &&
	   num_eq(pr.recompute_cost, 1), "one recomputed node, f0, costing 1");
	ok(pr.recompute[7] && !pr.recompute[0] && !pr.recompute[8],
	   "only the second compute of f0 is a recomputation");
	ok(pr.peak_step == 4 && pr.sim.peak == 3 && pr.first_over < 0,
	   "peak 3 first reached at step 5, within the budget");
	profile_release(&pr);
	rc = profile_plan(g, p, 2, NULL, &pr, &err);
	ok(rc == 0 && pr.sim.valid && !pr.sim.fits && pr.first_over == 4,
	   "over a budget of 2: first over at step 5 (%d)", pr.first_over + 1);
	profile_release(&pr);
	plan_free(p);
	p = gen_plan_of(g, "c f0, c loss");
	rc = profile_plan(g, p, SIM_NO_BUDGET, NULL, &pr, &err);
	ok(rc == 0 && !pr.sim.valid && strstr(pr.sim.why, "input 'f1' is not resident") != NULL,
	   "a plan that does not replay says why: %s", pr.sim.why);
	profile_release(&pr);
	plan_free(p);
	graph_free(g);
}

/* Recomputed nodes come by the cost of their recomputation. */
/* linear:2 with f0 offloaded and fetched back for b0, replayed in time:
 * the device memory after each step, its host copy freed by a second
 * free, the steps of each kind, and the time and host peak the replay
 * reports. */
static void test_copies(void)
{
	static const uint64_t want[] = { 1, 1, 2, 1, 2, 3, 2, 1, 2, 3, 2, 2, 1, 0 };
	struct cm_error err;
	struct graph *g = graph_load("linear:2", &err);
	struct plan *p = gen_plan_of(g, "c f0, o f0, c f1, f f0, c loss, c b1, f loss, f f1, "
				     "g f0, c b0, f f0, f f0, f b1, f b0");
	struct sim_copy copy = { 1, 1, 0 };
	struct sim_result plain;
	struct profile pr;
	int same = p->n == (int)(sizeof(want) / sizeof(want[0]));
	int rc = profile_plan(g, p, 3, &copy, &pr, &err);

	ok(rc == 0 && pr.sim.valid && pr.sim.fits && pr.sim.host_peak == 1 && pr.sim.time > 0,
	   "a plan with copies profiles in time: %s", pr.sim.why);
	for (int i = 0; same && i < p->n; i++)
		same = pr.memory[i] == want[i];
	ok(same && pr.peak_step == 5 && pr.nrecomputed == 0 && pr.computes[0] == 1,
	   "device memory after each step as replayed by hand; f0 computed once");
	ok(pr.ncomputes == 5 && pr.nfrees == 7 && pr.noffloads == 1 && pr.nfetches == 1,
	   "5 computes, 7 frees (one of a host copy), an offload and a fetch");
	/* By hand, a unit of cost a second and a byte a second: the fetch of
	 * f0 starts when b1 ends (4 s) and b0 waits for it until 5 s. */
	ok(plan_simulate_copies(g, p, 3, &copy, &plain, NULL, &err) == 0 &&
	   num_eq(pr.sim.time, 6) && num_eq(pr.sim.wait, 1) && num_eq(plain.time, pr.sim.time),
	   "its time and wait as by hand and as the replay's: %g s, %g s waiting", pr.sim.time,
	   pr.sim.wait);
	profile_release(&pr);
	ok(profile_plan(g, p, 3, NULL, &pr, &err) == 0 && !pr.sim.valid,
	   "without a bandwidth the plan is a fault: %s", pr.sim.why);
	profile_release(&pr);
	plan_free(p);
	graph_free(g);
}

static void test_order(void)
{
	struct cm_error err;
	struct graph *g = graph_new("costs");
	struct plan *p;
	struct profile pr;

	graph_add_node(g, "a", 1, 1, 0, &err);
	graph_add_node(g, "b", 5, 1, 0, &err);
	graph_add_node(g, "c", 2, 1, 0, &err);
	graph_add_dep(g, 1, &err);
	graph_finish(g, &err);
	/* a three times (2 extra, cost 2), b twice (cost 5), c once. */
	p = gen_plan_of(g, "c a, f a, c a, f a, c a, c b, f b, c b, c c");
	ok(profile_plan(g, p, SIM_NO_BUDGET, NULL, &pr, &err) == 0 && pr.sim.valid &&
	   pr.nrecomputed == 2 && pr.by_cost[0] == 1 && pr.by_cost[1] == 0,
	   "b (recomputation cost 5) before a (2)");
	ok(num_eq(pr.recompute_cost, 7) && pr.extra_computes == 3 &&
	   num_eq(profile_recompute_cost(g, &pr, 2), 0), "7 of recomputation in 3 computes");
	profile_release(&pr);
	plan_free(p);
	graph_free(g);
}

/* Every column holds the highest of its steps; the columns cover the steps
 * in order, each step once. */
static int columns_agree(const struct profile *pr, int ncols)
{
	uint64_t *cols = malloc((size_t)ncols * sizeof(uint64_t)), top = 0;
	int m = profile_columns(pr, ncols, cols), good = m == (pr->nsteps < ncols ? pr->nsteps : ncols);

	for (int i = 0; good && i < pr->nsteps; i++) {
		int c = profile_column_of(pr->nsteps, ncols, i);

		good = c >= 0 && c < m && pr->memory[i] <= cols[c] &&
		       (i == 0 || c == profile_column_of(pr->nsteps, ncols, i - 1) ||
			c == profile_column_of(pr->nsteps, ncols, i - 1) + 1);
	}
	for (int c = 0; good && c < m; c++)
		top = cols[c] > top ? cols[c] : top;
	good = good && top == pr->sim.peak &&
	       profile_column_of(pr->nsteps, ncols, pr->nsteps - 1) == m - 1;
	free(cols);
	return good;
}

/* One random plan's profile against its replay. */
static int agrees(const struct graph *g, const struct plan *p, const struct profile *pr)
{
	struct sim_result r;
	struct cm_error err;
	uint64_t top = 0;
	int n = 0, good;

	plan_simulate(g, p, SIM_NO_BUDGET, &r, &err);
	good = r.valid && pr->sim.valid && num_eq(r.cost, pr->sim.cost) && r.peak == pr->sim.peak;
	for (int i = 0; i < p->n; i++) {
		top = pr->memory[i] > top ? pr->memory[i] : top;
		n += p->steps[i].op == PLAN_COMPUTE;
	}
	good = good && top == r.peak && n == pr->ncomputes &&
	       pr->memory[pr->peak_step] == r.peak;
	for (int i = 0; good && i < pr->peak_step; i++)
		good = pr->memory[i] < r.peak;
	good = good && num_eq(pr->recompute_cost, r.cost - graph_total_cost(g));
	for (int i = 1; good && i < pr->nrecomputed; i++)
		good = profile_recompute_cost(g, pr, pr->by_cost[i - 1]) >=
		       profile_recompute_cost(g, pr, pr->by_cost[i]);
	return good && columns_agree(pr, 1) && columns_agree(pr, 7) && columns_agree(pr, 72);
}

/* Random S on random training graphs: the profile agrees with the
 * simulator, the recomputation cost is the overhead, columns cover. */
static void test_random(void)
{
	int bad = 0, recomputing = 0, trials = tap_cases(200, 40);

	for (int trial = 0; trial < trials; trial++) {
		struct graph *f = gen_dag(2 + (int)(gen_rnd() % 12), 30, 1, 5);
		struct graph *g = gen_training(f);
		struct cm_error err;
		struct stages st;
		struct plan *p = plan_new();
		struct profile pr;

		stages_init(&st, g->n, &err);
		for (int t = 1; t < g->n; t++)
			for (int i = 0; i < t; i++)
				STAGE_S(&st, t, i) = gen_rnd() % 3 == 0;
		stages_complete_r(g, &st);
		plan_from_stages(g, &st, p, &err);
		if (profile_plan(g, p, SIM_NO_BUDGET, NULL, &pr, &err) || !agrees(g, p, &pr))
			bad++;
		recomputing += pr.nrecomputed > 0;
		profile_release(&pr);
		stages_release(&st);
		plan_free(p);
		graph_free(g);
		graph_free(f);
	}
	ok(bad == 0, "%d random plans: the profile agrees with the replay (%d do not)", trials, bad);
	ok(recomputing > trials / 2, "most of them recompute (%d)", recomputing);
}

int main(void)
{
	test_by_hand();
	test_copies();
	test_order();
	test_random();
	return tap_done();
}

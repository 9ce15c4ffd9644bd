/* The simulator, stage-matrix plans, checkpoint-all and plan files. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../graph/read.h"
#include "../plan/io.h"
#include "../plan/sim.h"
#include "../plan/stages.h"
#include "gen.h"
#include "tap.h"

static void expect_violation(const struct graph *g, const char *spec, uint64_t budget,
			     const char *want, const char *what)
{
	struct plan *p = gen_plan_of(g, spec);
	struct sim_result r;
	struct cm_error err;

	plan_simulate(g, p, budget, &r, &err);
	ok(!r.fits && strstr(r.why, want) != NULL, "%s: \"%s\"", what, r.why);
	plan_free(p);
}

static void test_simulator(void)
{
	struct cm_error err;
	struct graph *g = graph_load("linear:2", &err);
	struct plan *p = gen_plan_of(g, "c f0, c f1, c loss, c b1, f f1, f loss, c b0, f f0, f b1, f b0");
	struct sim_result r;

	plan_simulate(g, p, SIM_NO_BUDGET, &r, &err);
	ok(r.valid && r.fits && r.cost == 5 && r.peak == 4 && r.bad_step == -1,
	   "checkpoint-all of linear:2 replays: cost %g, peak %llu", r.cost,
	   (unsigned long long)r.peak);
	plan_simulate(g, p, 4, &r, &err);
	ok(r.fits, "it fits a budget equal to its peak");
	plan_free(p);
	expect_violation(g, "c f0, c loss", SIM_NO_BUDGET,
			 "step 2: compute 'loss': input 'f1' is not resident",
			 "a compute whose input is not resident is named");
	expect_violation(g, "c f0, c f0", SIM_NO_BUDGET,
			 "step 2: compute 'f0': it is already resident", "a double compute is named");
	expect_violation(g, "c f0, f f0, f f0", SIM_NO_BUDGET,
			 "step 3: free 'f0': it is not resident", "a free of a value not resident is named");
	expect_violation(g, "c f0, c f1, c loss, c b1", SIM_NO_BUDGET,
			 "node 'b0' is never computed", "a node never computed is named");
	expect_violation(g, "c f0, c f1, c loss, c b1, f f1, f loss, c b0", 3,
			 "step 4: compute 'b1': memory in use 4 B exceeds the budget 3 B",
			 "a peak over the budget is named at its first step");
	graph_free(g);
}

/* Checkpoint-all through the stage matrices (S keeps each value until its
 * last user, R completed) equals the direct construction, and replays at the
 * cost floor and the peak graph_peak_all predicts. */
static void check_checkpoint_all(const struct graph *g, const char *name)
{
	struct cm_error err;
	struct stages st;
	struct plan *a = plan_new(), *b = plan_new();
	struct sim_result r;
	int *last = malloc((size_t)g->n * sizeof(int)), diag = 1;

	if (stages_init(&st, g->n, &err) == 0) {
		graph_last_use(g, last);
		stages_checkpoint_all(g, &st, last);
		stages_complete_r(g, &st);
		for (int t = 0; t < g->n; t++)
			for (int i = 0; i < g->n; i++)
				diag &= STAGE_R(&st, t, i) == (t == i);
		ok(diag, "%s: checkpoint-all S completes to R = identity", name);
		plan_from_stages(g, &st, a, &err);
		stages_release(&st);
	}
	baseline_checkpoint_all(g, b, &err);
	ok(same_steps(a, b), "%s: stage plan equals the direct checkpoint-all plan", name);
	plan_simulate(g, b, SIM_NO_BUDGET, &r, &err);
	ok(r.valid && r.cost == graph_total_cost(g) && r.peak == graph_peak_all(g),
	   "%s: checkpoint-all replays clean at cost %g, peak %llu", name, r.cost,
	   (unsigned long long)r.peak);
	plan_free(a);
	plan_free(b);
	free(last);
}

/* Whatever S says, the completed R gives a plan that replays clean, and
 * keeping nothing costs at least as much as checkpoint-all. */
static void test_random_s(void)
{
	int bad = 0, cheap = 0;

	for (int trial = 0; trial < 300; trial++) {
		struct graph *g = gen_dag(2 + (int)(gen_rnd() % 12), 33, 1, 5);
		struct cm_error err;
		struct stages st;
		struct plan *p = plan_new();
		struct sim_result r;

		stages_init(&st, g->n, &err);
		for (int t = 1; t < g->n; t++)
			for (int i = 0; i < t; i++)
				STAGE_S(&st, t, i) = gen_rnd() % 2;
		stages_complete_r(g, &st);
		plan_from_stages(g, &st, p, &err);
		plan_simulate(g, p, SIM_NO_BUDGET, &r, &err);
		if (!r.valid) {
			if (!bad)
				diag("trial %d: %s", trial, r.why);
			bad++;
		}
		cheap += r.cost < graph_total_cost(g);
		stages_release(&st);
		plan_free(p);
		graph_free(g);
	}
	ok(bad == 0, "300 random S on random DAGs give valid plans (%d invalid)", bad);
	ok(cheap == 0, "no plan costs less than checkpoint-all");
}

/* linear:4 keeping nothing: stage t recomputes the chain it needs. */
static void test_keep_nothing(void)
{
	struct cm_error err;
	struct graph *g = graph_load("linear:4", &err);
	struct stages st;
	struct plan *p = plan_new();
	struct sim_result r;

	stages_init(&st, g->n, &err);
	stages_complete_r(g, &st);
	plan_from_stages(g, &st, p, &err);
	plan_simulate(g, p, SIM_NO_BUDGET, &r, &err);
	/* Stage t computes every node up to t: 1 + 2 + ... + 9. */
	ok(r.valid && r.cost == 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9,
	   "linear:4 with S = 0 recomputes everything each stage: cost %g", r.cost);
	stages_release(&st);
	plan_free(p);
	graph_free(g);
}

static void test_roundtrip(void)
{
	struct cm_error err;
	struct graph *g = graph_load("linear:3", &err);
	struct plan *p = plan_new(), *q;
	char path[] = "/tmp/cm-plan-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	baseline_checkpoint_all(g, p, &err);
	snprintf(p->strategy, sizeof(p->strategy), "checkpoint-all");
	snprintf(p->status, sizeof(p->status), "optimal");
	p->budget = 7;
	ok(plan_write_json(f, g, p) == 0 && fclose(f) == 0, "plan JSON written");
	q = plan_read_file(path, g, &err);
	ok(q && same_steps(p, q) && q->budget == 7 && strcmp(q->strategy, "checkpoint-all") == 0,
	   "plan JSON reads back the same steps and description");
	plan_free(q);
	f = fopen(path, "w");
	fputs("{\"steps\": [{\"op\": \"compute\", \"node\": \"nope\"}]}", f);
	fclose(f);
	q = plan_read_file(path, g, &err);
	ok(q == NULL && strstr(err.msg, "step 1: node 'nope' is not in the graph"),
	   "an unknown node in a plan is named: %s", err.msg);
	remove(path);
	plan_free(p);
	graph_free(g);
}

int main(void)
{
	static const char *names[] = { "vgg16", "unet", "mobilenet", "resnet50",
				       "random_layered_n250" };
	char path[512];
	struct cm_error err;

	test_simulator();
	test_keep_nothing();
	test_random_s();
	test_roundtrip();
	for (int n = 1; n <= 5; n++) {
		char arg[32];
		struct graph *g;

		snprintf(arg, sizeof(arg), "linear:%d", n);
		g = graph_load(arg, &err);
		check_checkpoint_all(g, arg);
		graph_free(g);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct graph *g;

		if (!tap_graph(path, sizeof(path), "%s.json", names[i]))
			break;
		g = graph_read_file(path, &err);
		if (!ok(g != NULL, "%s reads", names[i]))
			continue;
		check_checkpoint_all(g, names[i]);
		graph_free(g);
	}
	return tap_done();
}

/* Plans that offload values to host memory and fetch them back
 * (docs/formats.md, Offload to host memory): times and peaks worked out by
 * hand on a four-node graph, the faults, the graph's cost_unit, plan files,
 * and plans without copies replaying as before. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/num.h"
#include "../graph/read.h"
#include "../plan/io.h"
#include "../solvers/search/offload.h"
#include "../solvers/search/spill.h"
#include "../plan/sim.h"
#include "gen.h"
#include "tap.h"

/* a (1 s, 100 B) -> b (4 s, 10 B) -> c (2 s, 100 B); d (1 s, 10 B) reads a
 * and c: a is what to move to the host while b and c run. */
static const char four[] =
	"{\"cost_unit\": \"s\", \"nodes\": ["
	"{\"name\": \"a\", \"cost\": 1, \"memory\": 100},"
	"{\"name\": \"b\", \"cost\": 4, \"memory\": 10, \"deps\": [\"a\"]},"
	"{\"name\": \"c\", \"cost\": 2, \"memory\": 100, \"deps\": [\"b\"]},"
	"{\"name\": \"d\", \"cost\": 1, \"memory\": 10, \"deps\": [\"a\", \"c\"]}]}";

/* A plan from "compute a, offload a, free a, fetch a, ...". */
static struct plan *plan_of(const struct graph *g, const char *spec)
{
	struct plan *p = plan_new();
	char buf[512], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *sp;
		int op = PLAN_COMPUTE;

		while (*tok == ' ')
			tok++;
		sp = strchr(tok, ' ');
		*sp = '\0';
		while (op <= PLAN_FETCH && strcmp(plan_op_name(op), tok) != 0)
			op++;
		plan_push(p, (enum plan_op)op, graph_find(g, sp + 1), -1);
	}
	return p;
}

/* Replays spec at bandwidth bw (bytes a second) and one second a cost unit. */
static struct sim_result replay(const struct graph *g, const char *spec, double bw,
				uint64_t budget)
{
	struct sim_copy c = { .bandwidth = bw, .seconds_per_cost = graph_seconds_per_cost(g) };
	struct plan *p = plan_of(g, spec);
	struct sim_result r;
	struct cm_error err;

	plan_simulate_copies(g, p, budget, &c, &r, NULL, &err);
	plan_free(p);
	return r;
}

static const char overlap[] =
	"compute a, offload a, compute b, free a, fetch a, compute c, free b, compute d";
static const char stall[] =
	"compute a, offload a, compute b, free a, compute c, free b, fetch a, compute d";

static void test_times(const struct graph *g)
{
	struct sim_result r;

	/* 100 B/s: a copy of a takes 1 s. a [0,1]; offload [1,2]; b [1,5];
	 * free a: the copy ended; fetch [5,6] under c [5,7]; d [7,8]. */
	r = replay(g, overlap, 100, SIM_NO_BUDGET);
	ok(r.valid && r.fits && r.time == 8 && r.wait == 0 && r.cost == 8,
	   "overlap: the copies hide behind b and c: time %g, wait %g", r.time, r.wait);
	ok(r.peak == 210 && r.host_peak == 100,
	   "overlap: device peak 210 at d (the fetch counts from its step), host 100: %llu, %llu",
	   (unsigned long long)r.peak, (unsigned long long)r.host_peak);
	/* The fetch after c: [7,8], d waits for it: [8,9]. */
	r = replay(g, stall, 100, SIM_NO_BUDGET);
	ok(r.valid && r.time == 9 && r.wait == 1 && r.peak == 210,
	   "stall: d waits 1 s for the fetch: time %g, wait %g", r.time, r.wait);
	/* 10 B/s: a copy takes 10 s. offload [1,11]; b [1,5]; free a waits
	 * until 11; c [11,13]; fetch [13,23]; d waits until 23: [23,24]. */
	r = replay(g, stall, 10, SIM_NO_BUDGET);
	ok(r.valid && r.time == 24 && r.wait == 16,
	   "free after offload waits for the copy (6 s), d for the fetch (10 s): time %g, wait %g",
	   r.time, r.wait);
	/* free a waits until 11; fetch [11,21]; c [11,13]; d waits until 21. */
	r = replay(g, overlap, 10, SIM_NO_BUDGET);
	ok(r.valid && r.time == 22 && r.wait == 14,
	   "overlap at 10 B/s: the copies queue on one stream: time %g, wait %g", r.time,
	   r.wait);
	/* 20 B/s, 5 s a copy: offload [1,6]; b [1,5]; free a waits until 6;
	 * fetch [6,11]; c [6,8]; d waits until 11: [11,12]. */
	r = replay(g, "compute a, offload a, compute b, free a, fetch a, compute c, "
		   "compute d", 20, SIM_NO_BUDGET);
	ok(r.valid && r.time == 12 && r.wait == 4,
	   "one copy at a time: offload [1,6], free waits 1 s, fetch [6,11], d waits 3 s: "
	   "time %g, wait %g", r.time, r.wait);
	r = replay(g, "compute a, compute b, compute c, compute d", 100, SIM_NO_BUDGET);
	ok(r.valid && r.time == 8 && r.wait == 0 && r.host_peak == 0,
	   "without copies the time is the computes' times: %g", r.time);
}

static void test_host(const struct graph *g)
{
	struct sim_result r;

	r = replay(g, "compute a, offload a, compute b, free a, offload b, compute c, free b, "
		   "compute a, compute d", 100, SIM_NO_BUDGET);
	ok(r.valid && r.host_peak == 110, "host memory holds a and b: %llu",
	   (unsigned long long)r.host_peak);
	r = replay(g, "compute a, offload a, compute b, free a, free a, offload b, compute c, "
		   "free b, compute a, compute d", 100, SIM_NO_BUDGET);
	ok(r.valid && r.host_peak == 100,
	   "a free of a value on the host only frees its host copy: host peak %llu",
	   (unsigned long long)r.host_peak);
	{
		struct sim_copy c = { .bandwidth = 100, .seconds_per_cost = 1, .host_budget = 100 };
		struct plan *p = plan_of(g, "compute a, offload a, compute b, free a, offload b, "
					 "compute c, free b, compute a, compute d");
		struct cm_error err;

		plan_simulate_copies(g, p, SIM_NO_BUDGET, &c, &r, NULL, &err);
		ok(r.valid && !r.fits && r.host_peak == 110 &&
		   strcmp(r.why, "step 5: offload 'b': host memory in use 110 B exceeds the host "
			  "budget 100 B") == 0, "the first offload over the host budget is named: "
		   "\"%s\"", r.why);
		c.host_budget = 110;
		plan_simulate_copies(g, p, SIM_NO_BUDGET, &c, &r, NULL, &err);
		ok(r.valid && r.fits, "a host budget equal to the host peak fits");
		plan_free(p);
	}
	r = replay(g, "compute a, offload a, compute b, fetch a, compute c, compute d", 100,
		   SIM_NO_BUDGET);
	ok(!r.valid && strstr(r.why, "step 4: fetch 'a': it is already resident"),
	   "an offload leaves the value resident: \"%s\"", r.why);
}

static void expect(const struct graph *g, const char *spec, uint64_t budget, const char *want,
		   const char *what)
{
	struct sim_result r = replay(g, spec, 100, budget);

	ok(!r.fits && strstr(r.why, want) != NULL, "%s: \"%s\"", what, r.why);
}

static void test_faults(const struct graph *g)
{
	struct plan *p = plan_of(g, overlap);
	struct sim_result r;
	struct cm_error err;

	expect(g, "compute a, compute b, free a, fetch a", SIM_NO_BUDGET,
	       "step 4: fetch 'a': it has no host copy", "a fetch of a value never offloaded");
	expect(g, "compute a, compute b, free a, offload a", SIM_NO_BUDGET,
	       "step 4: offload 'a': it is not resident", "an offload of a value not resident");
	expect(g, "compute a, offload a, offload a", SIM_NO_BUDGET,
	       "step 3: offload 'a': it already has a host copy", "a second offload");
	expect(g, "compute a, offload a, compute b, free a, compute c, compute d", SIM_NO_BUDGET,
	       "step 6: compute 'd': input 'a' is on the host, not resident: fetch it first",
	       "a compute reading a value on the host only");
	expect(g, "compute a, offload a, compute b, free a, free a, free a", SIM_NO_BUDGET,
	       "step 6: free 'a': it is not resident", "a free of a value on neither side");
	expect(g, stall, 150, "step 7: fetch 'a': memory in use 200 B exceeds the budget 150 B",
	       "a fetch over the budget");
	expect(g, overlap, 150, "step 6: compute 'c': memory in use 210 B exceeds the budget 150 B",
	       "the fetch's memory counts from its step");
	plan_simulate(g, p, SIM_NO_BUDGET, &r, &err);
	ok(!r.valid && strcmp(r.why, "step 2: offload 'a': a copy needs a bandwidth") == 0,
	   "without a bandwidth a copy is a fault: \"%s\"", r.why);
	ok(plan_first_copy(p) == 1, "plan_first_copy finds the offload");
	plan_free(p);
}

static void test_cost_unit(void)
{
	static const struct {
		const char *json;
		int unit;
		double sec;
	} cases[] = {
		{ "{\"cost_unit\": \"ms\", \"nodes\": [{\"name\": \"a\", \"cost\": 1, \"memory\": 1}]}",
		  GRAPH_COST_MS, 1e-3 },
		{ "{\"cost_unit\": \"us\", \"nodes\": [{\"name\": \"a\", \"cost\": 1, \"memory\": 1}]}",
		  GRAPH_COST_US, 1e-6 },
		{ "{\"cost_unit\": \"flop\", \"nodes\": [{\"name\": \"a\", \"cost\": 1, \"memory\": 1}]}",
		  GRAPH_COST_FLOPS, 0 },
		{ "{\"cost_unit\": \"cycles\", \"nodes\": [{\"name\": \"a\", \"cost\": 1, \"memory\": 1}]}",
		  GRAPH_COST_NONE, 0 },
		{ "{\"torch\": {\"cost_unit\": \"ms\"}, \"nodes\": [{\"name\": \"a\", \"cost\": 1, "
		  "\"memory\": 1}]}", GRAPH_COST_MS, 1e-3 },
		{ "{\"cost_unit\": \"s\", \"torch\": {\"cost_unit\": \"flops\"}, \"nodes\": "
		  "[{\"name\": \"a\", \"cost\": 1, \"memory\": 1}]}", GRAPH_COST_S, 1 },
		{ "{\"graph\": {\"cost_unit\": \"us\"}, \"nodes\": [{\"id\": \"a\", \"cost\": 1, "
		  "\"memory\": 1}], \"links\": []}", GRAPH_COST_US, 1e-6 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cm_error err;
		struct graph *g = graph_read_string(cases[i].json, "unit.json", &err);

		ok(g && g->cost_unit == cases[i].unit && graph_seconds_per_cost(g) == cases[i].sec,
		   "cost_unit case %zu: unit %d, %g s a unit", i + 1, g ? g->cost_unit : -1,
		   g ? graph_seconds_per_cost(g) : -1);
		graph_free(g);
	}
}

static void test_files(const struct graph *g)
{
	struct plan *p = plan_of(g, stall), *q;
	struct cm_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ok(plan_write_json(f, g, p) == 0 && fclose(f) == 0, "a plan with copies is written");
	ok(strstr(buf, "{\"op\": \"offload\", \"node\": \"a\"}") &&
	   strstr(buf, "{\"op\": \"fetch\", \"node\": \"a\"}"), "as offload and fetch steps");
	f = fmemopen(buf, len, "r");
	q = plan_read_stream(f, "copies.json", g, &err);
	fclose(f);
	ok(q && same_steps(p, q), "and reads back the same");
	free(buf);
	f = open_memstream(&buf, &len);
	ok(plan_write_text(f, g, p) == 0 && fclose(f) == 0 &&
	   strstr(buf, "%0 = compute a\noffload %0\n") && strstr(buf, "fetch %0\n%3 = compute d"),
	   "the text form names the copies by register");
	free(buf);
	plan_free(p);
	plan_free(q);
}

/* q: p with each free of a value that p computes again later made
 * "offload (once per value), free", and that next compute a fetch. The
 * device memory after each step stays as in p, so the peak does; the
 * cost drops by the computes replaced; host memory holds each value
 * offloaded, never freed there. Returns the cost saved. */
static double recomputes_as_copies(const struct graph *g, const struct plan *p,
				   struct plan *q, uint64_t *host)
{
	char *fetch = calloc((size_t)g->n, 1), *on_host = calloc((size_t)g->n, 1);
	double saved = 0;

	*host = 0;
	for (int i = 0; i < p->n; i++) {
		const struct plan_step *s = &p->steps[i];
		int again = 0;

		if (s->op == PLAN_COMPUTE && fetch[s->node]) {
			fetch[s->node] = 0;
			saved += g->nodes[s->node].cost;
			plan_push(q, PLAN_FETCH, s->node, -1);
			continue;
		}
		for (int j = i + 1; j < p->n && s->op == PLAN_FREE; j++)
			if (p->steps[j].node == s->node) {
				again = p->steps[j].op == PLAN_COMPUTE;
				break;
			}
		if (again && !on_host[s->node]) {
			on_host[s->node] = 1;
			*host += g->nodes[s->node].memory;
			plan_push(q, PLAN_OFFLOAD, s->node, -1);
		}
		fetch[s->node] |= (char)again;
		plan_push(q, s->op, s->node, -1);
	}
	free(fetch);
	free(on_host);
	return saved;
}

/* Random training graphs, plans from random checkpoint sets: replayed
 * with copies they give the cost, peak and faults they give without; with
 * their recomputes made copies they stay valid at the same peak, cost
 * less by what was not recomputed, and take between their computes' time
 * and that plus every copy's. */
static void test_random(void)
{
	int cases = tap_cases(200, 40), same = 0, moved = 0, timed = 0, fast = 0, with_copies = 0;

	for (int c = 0; c < cases; c++) {
		struct graph *g = gen_random_training(2 + (int)(gen_rnd() % 12), 40);
		char *ckpt = calloc((size_t)g->n, 1);
		struct plan *p = plan_new(), *q = plan_new();
		struct sim_copy slow = { .bandwidth = 0.5 + (double)(gen_rnd() % 4),
					 .seconds_per_cost = 1e-3 },
				inf = { .bandwidth = 1e300, .seconds_per_cost = 1e-3 };
		struct sim_result a, b, d;
		struct cm_error err;
		uint64_t host;
		double saved, copies = 0;

		for (int k = 0; k < g->n; k++)
			ckpt[k] = !g->nodes[k].backward && gen_rnd() % 3 == 0;
		baseline_plan_of_checkpoints(g, ckpt, p, &err);
		if (gen_rnd() % 4 == 0 && p->n > 2)
			p->n -= 1 + (int)(gen_rnd() % 2); /* often invalid: a node never computed */
		plan_simulate(g, p, SIM_NO_BUDGET, &a, &err);
		plan_simulate_copies(g, p, SIM_NO_BUDGET, &slow, &b, NULL, &err);
		same += a.valid == b.valid && a.cost == b.cost && a.peak == b.peak &&
			strcmp(a.why, b.why) == 0 && b.wait == 0 && b.host_peak == 0 &&
			(!b.valid || num_eq(b.time, b.cost * 1e-3));
		saved = recomputes_as_copies(g, p, q, &host);
		with_copies += plan_first_copy(q) >= 0;
		for (int i = 0; i < q->n; i++)
			if (q->steps[i].op == PLAN_OFFLOAD || q->steps[i].op == PLAN_FETCH)
				copies += (double)g->nodes[q->steps[i].node].memory / slow.bandwidth;
		plan_simulate_copies(g, q, SIM_NO_BUDGET, &slow, &b, NULL, &err);
		plan_simulate_copies(g, q, SIM_NO_BUDGET, &inf, &d, NULL, &err);
		moved += b.valid == a.valid && b.peak == a.peak && b.host_peak == host &&
			num_eq(b.cost, a.cost - saved);
		timed += !b.valid || (num_le(b.cost * 1e-3, b.time) &&
				      num_le(b.time, b.cost * 1e-3 + copies) &&
				      num_eq(b.time, b.cost * 1e-3 + b.wait));
		fast += d.valid == b.valid && (!d.valid || num_eq(d.time, d.cost * 1e-3));
		free(ckpt);
		plan_free(p);
		plan_free(q);
		graph_free(g);
	}
	ok(same == cases, "plans without copies replay with copies as without: %d of %d", same,
	   cases);
	ok(moved == cases && with_copies > cases / 4,
	   "recomputes made copies: same validity and peak, cost less by them, host as "
	   "offloaded: %d of %d (%d with copies)", moved, cases, with_copies);
	ok(timed == cases, "their time lies between their computes' and that plus every copy's, "
	   "and is the computes' plus the wait: %d of %d", timed, cases);
	ok(fast == cases, "at an unbounded bandwidth no copy is waited for: %d of %d", fast, cases);
}

/* The pass that makes recomputes fetches, by hand: a computed again
 * before d costs 1 s; at 100 B/s its copies hide behind b and c. */
static void test_pass_by_hand(const struct graph *g)
{
	struct plan *p = plan_of(g, "compute a, compute b, free a, compute c, free b, compute a, "
				 "compute d");
	struct plan *q, *want = plan_of(g, overlap);
	struct sim_copy fast = { .bandwidth = 100, .seconds_per_cost = 1 },
			slow = { .bandwidth = 1, .seconds_per_cost = 1 };
	struct sim_result r;
	struct cm_error err;
	int n = -1;

	q = offload_recomputes(g, p, 210, &fast, &n, &err);
	ok(q && n == 1, "the pass makes the recompute of a a fetch: %d", n);
	ok(q && same_steps(q, want), "offloaded after its compute, fetched right after its free");
	if (q)
		plan_simulate_copies(g, q, 210, &fast, &r, NULL, &err);
	ok(q && r.valid && r.time == 8 && r.peak == 210,
	   "and the plan takes 8 s instead of 9, at the same peak: %g s", q ? r.time : -1);
	plan_free(q);
	q = offload_recomputes(g, p, 200, &fast, &n, &err);
	ok(q == NULL && strstr(err.msg, "does not replay within the budget"),
	   "a plan over the budget is refused: %s", err.msg);
	q = offload_recomputes(g, p, 210, &slow, &n, &err);
	ok(q && n == 0 && same_steps(q, p), "at 1 B/s a copy takes 100 s: the recompute stays");
	plan_free(q);
	plan_free(p);
	plan_free(want);
}

/* The pass on random plans: valid, within the budget, never slower, and
 * faster when it made a change. */
static void test_pass_random(void)
{
	int cases = tap_cases(200, 40), good = 0, changed = 0;

	for (int c = 0; c < cases; c++) {
		struct graph *g = gen_random_training(2 + (int)(gen_rnd() % 12), 40);
		char *ckpt = calloc((size_t)g->n, 1);
		struct plan *p = plan_new(), *q;
		struct sim_copy cp = { .bandwidth = 0.5 + (double)(gen_rnd() % 8),
				       .seconds_per_cost = 1 };
		struct sim_result a, b;
		struct cm_error err;
		uint64_t budget;
		int n = 0;

		for (int k = 0; k < g->n; k++)
			ckpt[k] = !g->nodes[k].backward && gen_rnd() % 3 == 0;
		baseline_plan_of_checkpoints(g, ckpt, p, &err);
		plan_simulate_copies(g, p, SIM_NO_BUDGET, &cp, &a, NULL, &err);
		budget = a.peak + gen_rnd() % 6;
		q = offload_recomputes(g, p, budget, &cp, &n, &err);
		if (q)
			plan_simulate_copies(g, q, budget, &cp, &b, NULL, &err);
		good += q && b.valid && b.fits && num_le(b.time, a.time) &&
			(n == 0 ? same_steps(p, q) : num_lt(b.time, a.time));
		changed += n > 0;
		plan_free(q);
		plan_free(p);
		free(ckpt);
		graph_free(g);
	}
	ok(good == cases && changed > cases / 10,
	   "recomputes made fetches: valid, within the budget, faster when changed: %d of %d "
	   "(%d changed)", good, cases, changed);
}

/* Moving values to the host to fit a budget, on linear:4 (checkpoint-all
 * peaks at 6; no plan fits below 3; recomputation alone costs 15 at 3,
 * docs/formats.md, Small facts for tests). */
static void test_spill_linear(void)
{
	struct cm_error err;
	struct graph *g = graph_load("linear:4", &err);
	struct plan *p = plan_new(), *q;
	struct sim_copy fast = { .bandwidth = 1e300, .seconds_per_cost = 1 },
			slow = { .bandwidth = 1, .seconds_per_cost = 1 };
	struct sim_result r;
	int moved = 0;

	baseline_checkpoint_all(g, p, &err);
	q = spill_to_budget(g, p, 3, &fast, &moved, &err);
	if (q)
		plan_simulate_copies(g, q, 3, &fast, &r, NULL, &err);
	ok(q && r.valid && r.fits && r.cost == 9 && num_eq(r.time, 9) && r.peak == 3,
	   "linear:4 at budget 3 by offload alone: cost 9 (recomputation: 15), peak %llu, "
	   "time %g, %d values moved, host peak %llu", q ? (unsigned long long)r.peak : 0,
	   q ? r.time : -1, moved, q ? (unsigned long long)r.host_peak : 0);
	plan_free(q);
	q = spill_to_budget(g, p, 3, &slow, &moved, &err);
	if (q)
		plan_simulate_copies(g, q, 3, &slow, &r, NULL, &err);
	ok(q && r.valid && r.fits && r.cost == 9 && num_eq(r.time, 9 + r.wait) && r.wait > 0,
	   "at a copy a compute's time the same plan waits: time %g, wait %g",
	   q ? r.time : -1, q ? r.wait : -1);
	plan_free(q);
	plan_free(p);
	graph_free(g);
}

/* The pass on random training graphs from checkpoint-all at budgets from
 * the lower bound to the peak: valid, no recompute, never above the
 * start's peak, no wait at an unbounded bandwidth; how often it fits. */
static void test_spill_random(void)
{
	int cases = tap_cases(200, 40), good = 0, fit = 0, below = 0;

	for (int c = 0; c < cases; c++) {
		struct graph *g = gen_random_training(2 + (int)(gen_rnd() % 12), 40);
		struct plan *p = plan_new(), *q;
		struct sim_copy cp = { .bandwidth = gen_rnd() % 2 ? 1e300 : 1.5,
				       .seconds_per_cost = 1 };
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g), budget;
		struct sim_result a, b;
		struct cm_error err;

		budget = lb + gen_rnd() % (peak - lb + 1);
		baseline_checkpoint_all(g, p, &err);
		plan_simulate_copies(g, p, SIM_NO_BUDGET, &cp, &a, NULL, &err);
		q = spill_to_budget(g, p, budget, &cp, NULL, &err);
		if (q)
			plan_simulate_copies(g, q, budget, &cp, &b, NULL, &err);
		good += q && b.valid && num_eq(b.cost, a.cost) && b.peak <= a.peak &&
			(b.peak > budget || b.fits) &&
			(cp.bandwidth < 1e9 || num_eq(b.time, b.cost)) &&
			num_eq(b.time, b.cost + b.wait);
		fit += q && b.fits;
		below += q && b.fits && budget < peak;
		plan_free(q);
		plan_free(p);
		graph_free(g);
	}
	ok(good == cases && fit > cases / 2,
	   "values moved to fit: valid, no recompute, peak never above the start's, no wait "
	   "at an unbounded bandwidth: %d of %d (%d fit the budget, %d below the peak)",
	   good, cases, fit, below);
}

int main(void)
{
	struct cm_error err;
	struct graph *g = graph_read_string(four, "four.json", &err);

	if (!ok(g != NULL, "the four-node graph reads"))
		return tap_done();
	test_times(g);
	test_host(g);
	test_faults(g);
	test_cost_unit();
	test_files(g);
	test_random();
	test_pass_by_hand(g);
	test_pass_random();
	test_spill_linear();
	test_spill_random();
	graph_free(g);
	return tap_done();
}

/* build/bench/lns GRAPH BUDGET TIME [WINDOW_TIME STAGES VALUES SOLVER]: the
 * lns strategy from the cheapest fitting baseline (or, when none fits, a
 * greedy eviction plan made here), one CSV row on standard output.
 * BUDGET: fF for lb + F (peak - lb), or P% of the checkpoint-all peak. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/clock.h"
#include "../graph/read.h"
#include "../plan/sim.h"
#include "../plan/stages.h"
#include "../solvers/search/lns.h"
#include "../solvers/heuristic.h"
#include "../solvers/strategy.h"

/* A simple fitting-plan generator for graphs no baseline fits: run the
 * nodes in order; when the next compute does not fit, evict the resident
 * value with the most bytes times distance to its next use per unit of
 * cost, among those whose inputs are resident (which then stay until it
 * is recomputed, so a recompute is one step, never a cascade). */
struct evict {
	const struct graph *g;
	uint64_t budget, used;
	char *resident, *evicted;
	int *pinned, *needed;
	int frontier;
	struct plan *p;
};

static int next_use(const struct graph *g, int i, int k)
{
	for (int e = g->user_off[i]; e < g->user_off[i + 1]; e++)
		if (g->users[e] >= k)
			return g->users[e];
	return -1;
}

static int deps_resident(const struct evict *ev, int i)
{
	for (int e = ev->g->dep_off[i]; e < ev->g->dep_off[i + 1]; e++)
		if (!ev->resident[ev->g->deps[e]])
			return 0;
	return 1;
}

static int make_room(struct evict *ev, uint64_t need)
{
	const struct graph *g = ev->g;

	while (ev->used + need > ev->budget) {
		int victim = -1;
		double best = -1;

		for (int i = 0; i < g->n; i++) {
			int nu;
			double score;

			double redo = g->nodes[i].cost;

			if (!ev->resident[i] || ev->pinned[i])
				continue;
			/* Inputs gone make the recompute dearer (and recursive). */
			for (int e = g->dep_off[i]; e < g->dep_off[i + 1]; e++)
				if (!ev->resident[g->deps[e]])
					redo += 4 * g->nodes[g->deps[e]].cost;
			nu = next_use(g, i, ev->frontier);
			/* Only an evicted value's recompute reads it: far. */
			if (nu < 0)
				nu = ev->frontier + g->n;
			score = (double)g->nodes[i].memory * (double)(nu - ev->frontier + 1) /
				(redo + 1e-9);
			if (score > best) {
				best = score;
				victim = i;
			}
		}
		if (victim < 0) {
			if (getenv("LNS_VERBOSE")) {
				int nres = 0, npin = 0, nneed = 0, ndeps = 0;

				for (int i = 0; i < g->n; i++) {
					nres += ev->resident[i];
					npin += ev->resident[i] && ev->pinned[i] > 0;
					nneed += ev->resident[i] && ev->needed[i] > 0;
					ndeps += ev->resident[i] && !deps_resident(ev, i);
				}
				fprintf(stderr, "evict: stuck at node %d: %llu + %llu > %llu, %d resident, %d pinned, %d needed, %d without inputs\n",
					ev->frontier, (unsigned long long)ev->used, (unsigned long long)need,
					(unsigned long long)ev->budget, nres, npin, nneed, ndeps);
			}
			return -1;
		}
		ev->resident[victim] = 0;
		ev->evicted[victim] = 1;
		ev->used -= g->nodes[victim].memory;
		for (int e = g->dep_off[victim]; e < g->dep_off[victim + 1]; e++)
			ev->needed[g->deps[e]]++;
		if (plan_push(ev->p, PLAN_FREE, victim, -1))
			return -1;
	}
	return 0;
}

static void unevict(struct evict *ev, int v)
{
	ev->evicted[v] = 0;
	for (int e = ev->g->dep_off[v]; e < ev->g->dep_off[v + 1]; e++)
		ev->needed[ev->g->deps[e]]--;
}

/* Computes v (its inputs resident or evicted with theirs resident). */
static int compute(struct evict *ev, int v)
{
	const struct graph *g = ev->g;
	int rc = 0;

	for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
		ev->pinned[g->deps[e]]++;
	for (int e = g->dep_off[v]; e < g->dep_off[v + 1] && rc == 0; e++)
		if (!ev->resident[g->deps[e]])
			rc = compute(ev, g->deps[e]);
	if (rc == 0)
		rc = make_room(ev, g->nodes[v].memory);
	if (rc == 0) {
		rc = plan_push(ev->p, PLAN_COMPUTE, v, -1);
		ev->resident[v] = 1;
		ev->used += g->nodes[v].memory;
		if (ev->evicted[v])
			unevict(ev, v);
	}
	for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
		ev->pinned[g->deps[e]]--;
	return rc;
}

static struct plan *evict_plan(const struct graph *g, uint64_t budget)
{
	struct evict ev = { .g = g, .budget = budget, .used = g->fixed_memory };
	int ok = 1;

	ev.resident = calloc((size_t)g->n, 1);
	ev.evicted = calloc((size_t)g->n, 1);
	ev.pinned = calloc((size_t)g->n, sizeof(int));
	ev.needed = calloc((size_t)g->n, sizeof(int));
	ev.p = plan_new();
	for (int k = 0; k < g->n && ok; k++) {
		ev.frontier = k;
		ok = compute(&ev, k) == 0;
		for (int i = 0; i <= k; i++)
			if (ev.evicted[i] && next_use(g, i, k + 1) < 0)
				unevict(&ev, i);
		/* Values nothing later reads go at once. */
		for (int i = k; i >= 0 && ok; i--)
			if (ev.resident[i] && !ev.needed[i] && next_use(g, i, k + 1) < 0) {
				ev.resident[i] = 0;
				ev.used -= g->nodes[i].memory;
				ok = plan_push(ev.p, PLAN_FREE, i, -1) == 0;
			}
	}
	free(ev.resident);
	free(ev.evicted);
	free(ev.pinned);
	free(ev.needed);
	if (!ok) {
		plan_free(ev.p);
		return NULL;
	}
	return ev.p;
}

/* Cost of recomputing i in stage u: i and every input, recursively, that
 * is neither kept into u nor already counted. */
static double redo_cost(const struct graph *g, const struct stages *st, int u, int i,
			int *stamp, int mark)
{
	double c = g->nodes[i].cost;

	stamp[i] = mark;
	for (int e = g->dep_off[i]; e < g->dep_off[i + 1]; e++) {
		int d = g->deps[e];

		if (stamp[d] != mark && !STAGE_S(st, u, d) && !STAGE_R(st, u, d))
			c += redo_cost(g, st, u, d, stamp, mark);
	}
	return c;
}

/* A second generator, on stage matrices: from checkpoint-all, while the
 * plan's first over-budget step is in stage t, stop keeping the value kept
 * into t with the most bytes times stages to its next use per unit of
 * cost, from t until that use (where it is recomputed). */
static struct plan *drop_plan(const struct graph *g, uint64_t budget)
{
	struct stages st;
	struct cm_error err;
	struct sim_result sim;
	struct plan *p = plan_new();
	int *last = malloc((size_t)g->n * sizeof(int)), n = g->n, found = 0, mark = 0;
	int *stamp = calloc((size_t)g->n, sizeof(int));

	if (stages_init(&st, n, &err) || !p || !last || !stamp)
		goto fail;
	graph_last_use(g, last);
	stages_checkpoint_all(g, &st, last);
	stages_drop_unused(g, &st);
	for (int iter = 0; iter < 20 * n; iter++) {
		int t, victim = -1, until = -1;
		double best = -1;

		plan_clear(p);
		if (plan_from_stages(g, &st, p, &err) || plan_simulate(g, p, budget, &sim, &err) ||
		    !sim.valid)
			goto fail;
		if (sim.fits) {
			found = 1;
			break;
		}
		t = sim.bad_step >= 0 ? p->steps[sim.bad_step].stage : -1;
		if (t < 0)
			goto fail;
		for (int i = 0; i < t; i++) {
			int nu;
			double score;

			if (!STAGE_S(&st, t, i))
				continue;
			nu = next_use(g, i, t);
			if (nu < 0 || nu == t)
				continue;
			score = (double)g->nodes[i].memory * (double)(nu - t) /
				(redo_cost(g, &st, nu, i, stamp, ++mark) + 1e-9);
			if (score > best) {
				best = score;
				victim = i;
				until = nu;
			}
		}
		if (victim < 0)
			goto fail;
		for (int u = t; u <= until; u++)
			STAGE_S(&st, u, victim) = 0;
		stages_drop_unused(g, &st);
	}
	if (!found)
		goto fail;
	for (int k = 0; k < p->n; k++)
		p->steps[k].stage = -1;
	stages_release(&st);
	free(last);
	free(stamp);
	return p;
fail:
	stages_release(&st);
	free(last);
	free(stamp);
	plan_free(p);
	return NULL;
}

static void progress(void *ctx, const struct solve_progress *p)
{
	(void)ctx;
	fprintf(stderr, "%7.1f s  %.0f  %s\n", p->elapsed, p->incumbent, p->label);
}

int main(int argc, char **argv)
{
	struct lns_opts o = { .window_time_limit = 10, .seed = 1 };
	struct plan *start = NULL, *out = NULL;
	struct lns_stats st;
	struct sim_result sim;
	struct cm_error err;
	char why[256] = "";
	int rc;
	struct graph *g;
	uint64_t lb, peak, budget;
	char source[96] = "";
	double cost = 0, t0;

	if (argc < 4) {
		fprintf(stderr, "usage: lns GRAPH fF|P%% TIME [WINDOW_TIME STAGES VALUES SOLVER]\n");
		return 2;
	}
	g = graph_load(argv[1], &err);
	if (g == NULL) {
		fprintf(stderr, "lns: %s\n", err.msg);
		return 1;
	}
	lb = graph_lower_bound(g);
	peak = graph_peak_all(g);
	if (argv[2][0] == 'f')
		budget = lb + (uint64_t)(atof(argv[2] + 1) * (double)(peak - lb));
	else
		budget = (uint64_t)(atof(argv[2]) / 100 * (double)peak);
	o.time_limit = atof(argv[3]);
	if (argc > 4)
		o.window_time_limit = atof(argv[4]);
	if (argc > 5)
		o.stage_window = atoi(argv[5]);
	if (argc > 6)
		o.node_window = atoi(argv[6]);
	if (getenv("LNS_VERBOSE"))
		o.progress = progress;
	o.ops = solver_find(argc > 7 ? argv[7] : "cbc");
	t0 = cm_clock();
	/* The paper's baselines, or with LNS_FROM_HEURISTICS every heuristic
	 * of the table (dtr and the DP too). */
	if (getenv("LNS_FROM_HEURISTICS")) {
		struct solve_request rq = { .budget = budget };

		start = strategy_best_heuristic(g, &rq, &sim);
		if (start)
			snprintf(source, sizeof(source), "%.40s %.40s", start->strategy, start->param);
	}
	for (int k = 0; k < strategy_count() && !getenv("LNS_FROM_HEURISTICS"); k++) {
		const struct baseline b = { strategy_at(k)->name, strategy_at(k)->point };
		struct plan *p = NULL;
		char param[64];

		if (b.point && baseline_best(&b, g, budget, &p, &sim, param, sizeof(param),
					     NULL, 0, &err) == 0 && p && sim.fits && (!start || sim.cost < cost)) {
			plan_free(start);
			start = p;
			cost = sim.cost;
			snprintf(source, sizeof(source), "%s%s%s", b.name, *param ? " " : "", param);
			p = NULL;
		}
		plan_free(p);
		if (getenv("LNS_VERBOSE") && b.point)
			fprintf(stderr, "baseline %s done at %.1f s\n", b.name, cm_clock() - t0);
	}
	if (start == NULL) {
		/* The cheaper fitting plan of the two generators. */
		struct plan *a = drop_plan(g, budget), *b = evict_plan(g, budget);
		struct sim_result sa, sb;
		int fa = a && plan_simulate(g, a, budget, &sa, &err) == 0 && sa.fits;
		int fb = b && plan_simulate(g, b, budget, &sb, &err) == 0 && sb.fits;

		if (fa && (!fb || sa.cost <= sb.cost)) {
			start = a;
			a = NULL;
			snprintf(source, sizeof(source), "stage drop");
		} else if (fb) {
			start = b;
			b = NULL;
			snprintf(source, sizeof(source), "eviction");
		}
		plan_free(a);
		plan_free(b);
	}
	if (start == NULL || plan_simulate(g, start, budget, &sim, &err) || !sim.fits) {
		printf("%s,%s,%llu,,no start,,,,,,,,,,\n", g->id, argv[2],
		       (unsigned long long)budget);
		return 0;
	}
	fprintf(stderr, "start %s cost %.0f in %.1f s\n", source, sim.cost, cm_clock() - t0);
	if ((rc = lns_improve(g, budget, start, &o, &out, &st, why, sizeof(why), &err)) != 0) {
		printf("%s,%s,%llu,%s,%.0f,error: %s\n", g->id, argv[2], (unsigned long long)budget,
		       source, sim.cost, rc == 1 ? why : err.msg);
		return 1;
	}
	plan_simulate(g, out, budget, &sim, &err);
	/* graph,budget,bytes,start,start_cost,final_cost,overhead_start,overhead,
	 * fits,windows,improved,passes,seconds,sec_per_window,sec_per_pass,t2,t1,proven,max_stage_window */
	printf("%s,%s,%llu,%s,%.0f,%.0f,%.4f,%.4f,%d,%d,%d,%d,%.1f,%.2f,%.1f,%.1f,%.1f,%d,%d\n",
	       g->id, argv[2], (unsigned long long)budget, source, st.first_cost, sim.cost,
	       st.first_cost / graph_total_cost(g), sim.cost / graph_total_cost(g),
	       sim.fits && sim.peak <= budget, st.windows, st.improved, st.passes, st.seconds,
	       st.windows ? st.window_seconds / st.windows : 0,
	       st.passes ? st.seconds / st.passes : 0, st.t_within_2pct, st.t_within_1pct,
	       st.proven, st.max_stage_window);
	plan_free(start);
	plan_free(out);
	graph_free(g);
	return 0;
}

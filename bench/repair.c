/* build/bench/repair GRAPH BUDGET TIME [MODE]: one CSV row on standard
 * output for a graph at a budget with `--time-limit TIME`:
 *   graph,budget,bytes,f,mode,fits,cost,overhead,t_fit,seconds,param,load
 * BUDGET: fF for lb + F (peak - lb), or P% of the checkpoint-all peak;
 * f is (bytes - lb) / (peak - lb). t_fit: seconds until the first plan that
 * fits (-1: none). load: the 1-minute load average when the run ended.
 * MODE: "auto" (the default: solve's default strategy, through the
 * strategy table; t_fit is its first progress report with an incumbent),
 * "all" or "dtr" (lns_improve from the checkpoint-all plan, or from dtr's
 * plan at the tightest of 100%, 95%, ... of the peak where it has one,
 * repaired first: solvers/search/repair.h), "shave" (the shave row alone),
 * "windows" (repair_plan from checkpoint-all with slack windows only),
 * "variants" (each deterministic shave variant from checkpoint-all: one
 * row each, mode variantK, with its overflow left in param).
 * BENCH_VERBOSE=1 prints progress on standard error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/clock.h"
#include "../graph/read.h"
#include "../plan/sim.h"
#include "../solvers/search/dtr.h"
#include "../solvers/search/lns.h"
#include "../solvers/search/repair.h"
#include "../solvers/search/shave.h"
#include "../solvers/strategy.h"

struct watch {
	double t0, t_fit;
};

static void progress(void *ctx, const struct solve_progress *p)
{
	struct watch *w = ctx;

	if (p->has_incumbent && w->t_fit < 0)
		w->t_fit = cm_clock() - w->t0;
	if (getenv("BENCH_VERBOSE"))
		fprintf(stderr, "%7.1f s  %s%.0f  %s\n", cm_clock() - w->t0,
			p->has_incumbent ? "" : "(over budget) ", p->incumbent,
			p->label ? p->label : "");
}

/* dtr's plan at the tightest budget of 5% steps of the peak at or above
 * budget where it finds one, else checkpoint-all. */
static struct plan *start_plan(const struct graph *g, uint64_t budget, const char *how)
{
	struct plan *p = plan_new();
	struct cm_error err;
	uint64_t peak = graph_peak_all(g);

	for (int pct = 5; strcmp(how, "dtr") == 0 && pct <= 100; pct += 5) {
		uint64_t b = (uint64_t)pct * peak / 100;

		if (b >= budget && dtr_plan(g, b, NULL, p, &err) == 0) {
			fprintf(stderr, "start: dtr at %d%% of the peak\n", pct);
			return p;
		}
	}
	baseline_checkpoint_all(g, p, &err);
	snprintf(p->strategy, sizeof(p->strategy), "checkpoint-all");
	return p;
}

static int run_lns(const struct graph *g, uint64_t budget, double limit, const char *mode,
		   struct watch *w, struct sim_result *sim, char *param, size_t len)
{
	struct lns_opts o = { .ops = solver_find("cbc"), .time_limit = limit, .seed = 1,
			      .progress = progress, .ctx = w };
	struct plan *start = start_plan(g, budget, mode), *out = NULL;
	struct lns_stats st;
	struct cm_error err;
	char why[256] = "";
	int rc;

	o.time_limit = limit - (cm_clock() - w->t0);
	rc = lns_improve(g, budget, start, &o, &out, &st, why, sizeof(why), &err);
	snprintf(param, len, "%.150s", rc == 1 ? why : rc ? err.msg : start->strategy);
	if (rc == 0) {
		plan_simulate(g, out, budget, sim, &err);
		w->t_fit = st.repaired ? st.t_fit : 0;
	}
	plan_free(start);
	plan_free(out);
	return rc < 0 ? -1 : 0;
}

/* Each deterministic shave variant from the checkpoint-all stages: a row
 * each. */
static void variants(const struct graph *g, uint64_t budget, const char *label, double f)
{
	static const int descents[] = { 1, 3, 5, 10 };
	struct cm_error err;

	for (int k = 0; k < SHAVE_VARIANTS; k++) {
		struct shave_opts so = { .squares = k & 1, .descent = descents[(k / 2) % 4] };
		struct shave_stats ss;
		struct stages st;
		struct plan *p = plan_new();
		struct sim_result sim;
		int *last = malloc((size_t)g->n * sizeof(int));
		double t0 = cm_clock();

		stages_init(&st, g->n, &err);
		graph_last_use(g, last);
		stages_checkpoint_all(g, &st, last);
		stages_complete_r(g, &st);
		shave_stages(g, budget, &st, &so, &ss, &err);
		plan_from_stages(g, &st, p, &err);
		plan_simulate(g, p, budget, &sim, &err);
		printf("%s,%s,%llu,%.3f,variant%d,%d,%.0f,%.4f,%.3f,%.3f,%s descent %d: %d moves "
		       "overflow %.0f,0\n", g->id, label, (unsigned long long)budget, f, k,
		       sim.fits, sim.cost, sim.cost / graph_total_cost(g),
		       sim.fits ? cm_clock() - t0 : -1, cm_clock() - t0,
		       so.squares ? "squares" : "sum", so.descent, ss.moves, ss.final_overflow);
		free(last);
		plan_free(p);
		stages_release(&st);
	}
}

/* repair_plan with slack windows only, from checkpoint-all. */
static void windows_only(const struct graph *g, uint64_t budget, double limit,
			 struct watch *w, struct sim_result *sim, char *param, size_t len)
{
	struct repair_opts o = { .ops = solver_find("cbc"), .time_limit = limit, .seed = 1,
				 .no_shave = 1, .progress = progress, .ctx = w };
	struct plan *start = start_plan(g, budget, "all"), *out = NULL;
	struct repair_stats st;
	struct cm_error err;
	int rc = repair_plan(g, budget, start, &o, &out, &st, &err);

	if (rc >= 0) {
		plan_simulate(g, out, budget, sim, &err);
		w->t_fit = rc ? st.t_fit : -1;
		snprintf(param, len, "%d windows (%d improved): overflow %.0f -> %.0f",
			 st.windows, st.improved, st.first_overflow, st.final_overflow);
	} else {
		snprintf(param, len, "%.150s", err.msg);
	}
	plan_free(start);
	plan_free(out);
}

int main(int argc, char **argv)
{
	struct watch w = { .t_fit = -1 };
	struct sim_result sim = { 0 };
	struct cm_error err;
	struct graph *g;
	const char *mode = argc > 4 ? argv[4] : "auto";
	char param[160] = "";
	uint64_t lb, peak, budget;
	double limit, load = -1;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: repair GRAPH fF|P%% TIME [auto|all|dtr|shave]\n");
		return 2;
	}
	g = graph_load(argv[1], &err);
	if (g == NULL) {
		fprintf(stderr, "repair: %s\n", err.msg);
		return 1;
	}
	lb = graph_lower_bound(g);
	peak = graph_peak_all(g);
	if (argv[2][0] == 'f')
		budget = lb + (uint64_t)(atof(argv[2] + 1) * (double)(peak - lb) + 0.5);
	else
		budget = (uint64_t)(atof(argv[2]) / 100 * (double)peak);
	limit = atof(argv[3]);
	w.t0 = cm_clock();
	if (strcmp(mode, "variants") == 0) {
		variants(g, budget, argv[2], (double)(budget - lb) / (double)(peak - lb));
		graph_free(g);
		return 0;
	}
	if (strcmp(mode, "windows") == 0) {
		windows_only(g, budget, limit, &w, &sim, param, sizeof(param));
	} else if (strcmp(mode, "auto") == 0 || strcmp(mode, "shave") == 0) {
		struct solve_request rq = { .strategy = mode, .budget = budget, .time_limit = limit,
					    .progress = progress, .ctx = &w };
		struct solve_outcome o;

		if (strategy_solve(g, &rq, &o, &err)) {
			fprintf(stderr, "repair: %s\n", err.msg);
			return 1;
		}
		if (o.plan)
			sim = o.sim;
		if (o.plan && sim.fits && w.t_fit < 0)
			w.t_fit = o.seconds;
		snprintf(param, sizeof(param), "%.150s", o.plan ? o.param : o.why);
		strategy_outcome_release(&o);
	} else if (run_lns(g, budget, limit, mode, &w, &sim, param, sizeof(param))) {
		fprintf(stderr, "repair: %s\n", param);
		return 1;
	}
	for (char *c = param; *c; c++)
		*c = *c == ',' ? ';' : *c;
	if ((f = fopen("/proc/loadavg", "r")) != NULL) {
		if (fscanf(f, "%lf", &load) != 1)
			load = -1;
		fclose(f);
	}
	printf("%s,%s,%llu,%.3f,%s,%d,%.0f,%.4f,%.1f,%.1f,%s,%.1f\n", g->id, argv[2],
	       (unsigned long long)budget, (double)(budget - lb) / (double)(peak - lb), mode,
	       sim.fits, sim.fits ? sim.cost : 0, sim.fits ? sim.cost / graph_total_cost(g) : 0,
	       sim.fits ? w.t_fit : -1, cm_clock() - w.t0, param, load);
	graph_free(g);
	return 0;
}

/* Repeat classes (graph/repeat.h) and dtr-tune (solvers/search/tune.h):
 * identical blocks share classes where their neighbourhoods do, a changed
 * block does not; tune's plans replay, fit and cost no more than dtr's,
 * strictly less on the shared 12-layer GPT; it says when dtr has no plan
 * and stops at its deadline. */
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/num.h"
#include "../graph/read.h"
#include "../graph/repeat.h"
#include "../plan/sim.h"
#include "../solvers/search/dtr.h"
#include "../solvers/search/tune.h"
#include "gen.h"
#include "tap.h"

/* The forward graph of `blocks` residual blocks of 4 nodes (a, b, c read
 * in turn, d = a + c), a training graph made of it (gen_training); block
 * odd (when >= 0) has a dearer b. */
static struct graph *stack(int blocks, int odd)
{
	struct cm_error err;
	struct graph *f = graph_new("stack"), *g;
	char name[24];
	int prev = -1;

	for (int k = 0; k < blocks; k++) {
		static const char *const part = "abcd";
		int first = f->n;

		for (int j = 0; j < 4; j++) {
			snprintf(name, sizeof(name), "%c%d", part[j], k);
			graph_add_node(f, name, j == 1 && k == odd ? 7 : 2 + j, (uint64_t)(4 - j), 0, &err);
			if (j == 0 && prev >= 0)
				graph_add_dep(f, prev, &err);
			if (j > 0)
				graph_add_dep(f, first + j - 1, &err);
			if (j == 3)
				graph_add_dep(f, first, &err);
		}
		prev = f->n - 1;
	}
	g = graph_finish(f, &err) ? NULL : gen_training(f);
	graph_free(f);
	return g;
}

static void test_classes(void)
{
	struct cm_error err;
	struct graph *g = stack(12, -1), *h = stack(12, 6);
	int *cls = malloc((size_t)g->n * sizeof(int)), *chg = malloc((size_t)h->n * sizeof(int));
	int rounds[] = { 0, 1, GRAPH_REPEAT_ROUNDS }, count, same = 1, numbered = 1, top = -1;

	for (size_t r = 0; r < sizeof(rounds) / sizeof(rounds[0]); r++) {
		count = graph_repeat_classes(g, rounds[r], cls, &err);
		/* Blocks 4..7 sit more than 3 edges from either end. */
		same = 1;
		for (int k = 5; k <= 7; k++)
			for (int j = 0; j < 4; j++)
				same &= cls[4 * k + j] == cls[16 + j];
		ok(count > 0 && same, "rounds %d: interior blocks share their classes (%d classes)",
		   rounds[r], count);
		graph_repeat_classes(h, rounds[r], chg, &err);
		ok(chg[4 * 6 + 1] != chg[4 * 5 + 1] && chg[4 * 6 + 1] != chg[4 * 7 + 1],
		   "rounds %d: the block with a dearer node differs there", rounds[r]);
		if (rounds[r] > 0)
			ok(chg[4 * 6] != chg[4 * 5] && chg[4 * 6 + 2] != chg[4 * 5 + 2],
			   "rounds %d: and so do its neighbours", rounds[r]);
	}
	numbered = cls[0] == 0;
	for (int v = 0; v < g->n; v++) {
		numbered &= cls[v] <= top + 1;
		top = cls[v] > top ? cls[v] : top;
	}
	ok(numbered && top + 1 == count, "classes numbered by first node, 0 .. count - 1");
	graph_free(g);
	graph_free(h);
	free(cls);
	free(chg);
}

/* dtr-tune at budget: its plan replays and fits, costing no more than
 * dtr's (*gain: dtr's cost over tune's). 2 when so, 1 when both have no
 * plan, 0 when wrong. */
static int judge(const struct graph *g, uint64_t budget, double deadline, double *gain,
		 struct tune_stats *st)
{
	struct plan *d = plan_new(), *p = plan_new();
	struct cm_error err;
	struct sim_result sd, sp;
	struct tune_opts o = { .deadline = deadline };
	int rd = dtr_plan(g, budget, NULL, d, &err), rp = tune_plan(g, budget, &o, p, st, &err);
	int good;

	*gain = 1;
	if (rd || rp) {
		good = rd == DTR_NO_PLAN && rp == TUNE_NO_PLAN && p->n == 0;
	} else {
		plan_simulate(g, d, budget, &sd, &err);
		plan_simulate(g, p, budget, &sp, &err);
		good = 2 * (sp.valid && sp.fits && num_eq(sp.cost, p->cost) &&
			    !num_lt(sd.cost, sp.cost) && strcmp(p->strategy, "dtr-tune") == 0);
		*gain = sd.cost / sp.cost;
	}
	plan_free(d);
	plan_free(p);
	return good;
}

static void test_random(void)
{
	int cases = tap_cases(20, 6), bad = 0, plans = 0, none = 0;

	for (int c = 0; c < cases; c++) {
		struct graph *g = gen_random_training(6 + c % 20, 30);
		uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);

		for (int f = 0; f <= 4; f++) {
			uint64_t b = lb + (peak - lb) * (uint64_t)f / 4;
			struct tune_stats st;
			double gain;
			int r = judge(g, b, 0, &gain, &st);

			bad += r == 0;
			plans += r == 2;
			none += r == 1;
		}
		graph_free(g);
	}
	ok(bad == 0, "random training graphs: %d plans, %d budgets without, %d wrong", plans, none,
	   bad);
}

/* Seconds of one dtr run (every heuristic) on g at budget, plus the
 * judge's own dtr run: an upper bound on tune's start. */
static double dtr_seconds(const struct graph *g, uint64_t budget)
{
	struct plan *p = plan_new();
	struct cm_error err;
	double t0 = cm_clock();

	dtr_plan(g, budget, NULL, p, &err);
	plan_free(p);
	return 2 * (cm_clock() - t0);
}

static void test_gpt(void)
{
	char path[512];
	struct cm_error err;
	struct graph *g;
	struct tune_stats st;
	uint64_t lb, peak;
	double gain, t0, dtr_time;
	int r;

	if (!tap_graph(path, sizeof(path), "llm/gpt12.json"))
		return;
	if ((g = graph_read_file(path, &err)) == NULL) {
		ok(0, "read %s: %s", path, err.msg);
		return;
	}
	lb = graph_lower_bound(g);
	peak = graph_peak_all(g);
	r = judge(g, lb + (peak - lb) / 4, 0, &gain, &st);
	ok(r == 2 && gain > 1.005 && st.converged, "gpt12, f = .25: %.4f x cheaper than dtr, converged, from %s, %d classes, %d runs",
	   gain, st.from, st.classes, st.runs);
	/* A deadline after dtr's own run (which tune makes first, with the
	 * same deadline) and well before the search converges. */
	dtr_time = dtr_seconds(g, lb + (peak - lb) / 4);
	t0 = cm_clock();
	r = judge(g, lb + (peak - lb) / 4, cm_clock() + 3 * dtr_time + 0.02, &gain, &st);
	ok(r == 2 && !st.converged && cm_clock() - t0 < 2 + 6 * dtr_time,
	   "gpt12 with a deadline %.2f s away: a plan in %.2f s, not converged",
	   3 * dtr_time + 0.02, cm_clock() - t0);
	r = judge(g, lb - 1, 0, &gain, &st);
	ok(r == 1, "gpt12 below the lower bound: no plan");
	graph_free(g);
}

int main(void)
{
	test_classes();
	test_random();
	test_gpt();
	return tap_done();
}

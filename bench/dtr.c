/* The dtr strategy on the shared graphs: for each graph and heuristic, the
 * smallest budget it reaches (bisection over budgets, as a fraction f of the
 * distance from the lower bound to the checkpoint-all peak), the overhead
 * (cost / checkpoint-all cost) at f = .25, .5, .75 and at 80% and 90% of the
 * peak, and the seconds per budget. Markdown on standard output.
 *   build/bench/dtr [-h HEUR,HEUR,...] [-s] GRAPH...
 * -s: staleness in cost units. Without GRAPH: every shared graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../graph/read.h"
#include "../plan/sim.h"
#include "../solvers/search/dtr.h"

static const char *const shared[] = {
	"vgg16", "vgg19", "mobilenet", "resnet50", "fcn8", "segnet", "unet",
	"random_layered_n100", "random_layered_n250", "random_layered_n500",
	"random_layered_n1000", "torchvision/inception_v3", "torchvision/resnet101",
	"torchvision/densenet169", "torchvision/efficientnet_b5",
	"torchvision/efficientnet_v2_m",
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Cost of dtr's plan at budget (replayed again here), -1 when it finds none,
 * -2 on error; adds the time taken to *sec and counts the run. */
static double run(const struct graph *g, uint64_t budget, const struct dtr_opts *o,
		  double *sec, int *runs)
{
	struct plan *p = plan_new();
	struct cm_error err;
	struct sim_result res;
	double t0 = now(), cost = -2;
	int r;

	if (p == NULL)
		return -2;
	r = dtr_plan(g, budget, o, p, &err);
	*sec += now() - t0;
	++*runs;
	if (r < 0)
		fprintf(stderr, "dtr: %s\n", err.msg);
	else if (r == DTR_NO_PLAN)
		cost = -1;
	else if (plan_simulate(g, p, budget, &res, &err) == 0 && res.fits)
		cost = res.cost;
	else
		fprintf(stderr, "dtr: %s: plan does not replay: %s\n", g->id, res.why);
	plan_free(p);
	return cost;
}

static void cell(double cost, double total)
{
	if (cost >= 0)
		printf(" %.3f |", cost / total);
	else
		printf(" %s |", cost < -1.5 ? "error" : "none");
}

static void bench_graph(const struct graph *g, const char *label, const struct dtr_opts *o)
{
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g), lo, hi;
	double total = graph_total_cost(g), sec = 0;
	static const double fs[] = { .25, .5, .75 };
	int runs = 0;

	/* Smallest budget with a plan: bisection on [lb, peak] (the peak always
	 * has one); greedy success need not be monotone in the budget. */
	lo = lb;
	hi = peak;
	if (run(g, lb, o, &sec, &runs) >= 0) {
		hi = lb;
	} else {
		while (hi - lo > 1 && (double)(hi - lo) > 1e-4 * (double)(peak - lb)) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (run(g, mid, o, &sec, &runs) >= 0)
				hi = mid;
			else
				lo = mid;
		}
	}
	printf("| %s | %s | %.4f |", label, dtr_heuristic_names[o->heuristic],
	       peak > lb ? (double)(hi - lb) / (double)(peak - lb) : 0.0);
	for (int i = 0; i < 3; i++)
		cell(run(g, lb + (uint64_t)(fs[i] * (double)(peak - lb)), o, &sec, &runs), total);
	for (int pct = 80; pct <= 90; pct += 10) {
		uint64_t b = (uint64_t)((double)peak * pct / 100.0);

		if (b < lb)
			printf(" below lb |");
		else
			cell(run(g, b, o, &sec, &runs), total);
	}
	printf(" %.4f |\n", sec / runs);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("CHECKMATE_GRAPHS");
	char heurs[256] = "eqclass,lru,best";
	struct dtr_opts o = { 0 };
	int first = 1, status = 0;

	if (dir == NULL || *dir == '\0')
		dir = "../shared/graphs";
	while (first < argc && argv[first][0] == '-') {
		if (strcmp(argv[first], "-h") == 0 && first + 1 < argc) {
			snprintf(heurs, sizeof(heurs), "%s", argv[first + 1]);
			first += 2;
		} else if (strcmp(argv[first], "-s") == 0) {
			o.staleness_cost = 1;
			first++;
		} else {
			fprintf(stderr, "usage: dtr [-h HEUR,...] [-s] [GRAPH...]\n");
			return 2;
		}
	}
	if (first == argc && access(dir, F_OK) != 0) {
		printf("dtr: no %s (the paper's graphs; a clone has examples/graphs): skipped\n", dir);
		return 0;
	}
	printf("| graph | heuristic | min f | f=.25 | f=.5 | f=.75 | 80%% peak | 90%% peak | s/budget |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; first + i < argc || (first == argc && i < (int)(sizeof(shared) / sizeof(shared[0]))); i++) {
		char path[1024], hs[256], *save = NULL;
		const char *label;
		struct cm_error err;
		struct graph *g;

		if (first < argc) {
			snprintf(path, sizeof(path), "%s", argv[first + i]);
			label = argv[first + i];
		} else {
			snprintf(path, sizeof(path), "%s/%s.json", dir, shared[i]);
			label = shared[i];
		}
		g = graph_load(path, &err);
		if (g == NULL) {
			fprintf(stderr, "dtr: %s\n", err.msg);
			status = 1;
			continue;
		}
		snprintf(hs, sizeof(hs), "%s", heurs);
		for (char *h = strtok_r(hs, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
			o.heuristic = dtr_heuristic_find(h);
			if (o.heuristic < 0) {
				fprintf(stderr, "dtr: no heuristic '%s'\n", h);
				graph_free(g);
				return 2;
			}
			bench_graph(g, label, &o);
		}
		graph_free(g);
	}
	return status;
}

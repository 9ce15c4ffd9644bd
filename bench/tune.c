/* Prototype: dtr with per-class weights tuned by coordinate search. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/clock.h"
#include "../graph/read.h"
#include "../graph/repeat.h"
#include "../plan/sim.h"
#include "../solvers/search/dtr.h"

static double run(const struct graph *g, uint64_t b, struct dtr_opts *o)
{
	struct plan *p = plan_new();
	struct cm_error err;
	double c = -1;

	if (dtr_plan(g, b, o, p, &err) == 0)
		c = p->cost;
	plan_free(p);
	return c;
}

int main(int argc, char **argv)
{
	struct cm_error err;
	struct graph *g = graph_read_file(argv[1], &err);
	uint64_t b = strtoull(argv[2], NULL, 10);
	double limit = argc > 3 ? atof(argv[3]) : 60, t0 = cm_clock();
	int n = g->n, *cls = malloc(sizeof(int) * n), nc = 0;
	double *w = calloc(n, sizeof(double)), *cw, total = graph_total_cost(g);
	struct dtr_opts o = { 0 };
	int bh = 0, bk = 0;
	double best = -1;

	for (int h = 0; h < DTR_BEST; h++)
		for (int k = 0; k < 2; k++) {
			o.heuristic = h; o.keep_dead = k;
			double c = run(g, b, &o);
			if (c > 0 && (best < 0 || c < best)) { best = c; bh = h; bk = k; }
		}
	printf("start %s keep_dead=%d %.5f (%.2f s)\n", dtr_heuristic_names[bh], bk, best / total, cm_clock() - t0);
	o.heuristic = bh; o.keep_dead = bk;
	nc = graph_repeat_classes(g, argc > 6 ? atoi(argv[6]) : 3, cls, &err);
	cw = calloc(nc, sizeof(double));
	printf("%d classes\n", nc);
	for (int i = 0; i < n; i++) w[i] = 1;
	o.weight = w;
	double step = argc > 4 ? atof(argv[4]) : 2;
	if (argc > 5) { o.heuristic = atoi(argv[5]); o.keep_dead = 0; best = run(g, b, &o); printf("forced %.5f\n", best / total); }
	while (cm_clock() - t0 < limit && step > 0.1) {
		int gained = 0;
		for (int c = 0; c < nc && cm_clock() - t0 < limit; c++) {
			for (int s = -1; s <= 1; s += 2) {
				cw[c] += s * step;
				for (int i = 0; i < n; i++) w[i] = exp(cw[cls[i]]);
				double x = run(g, b, &o);
				if (x > 0 && x < best * (1 - 1e-9)) {
					best = x; gained = 1;
					printf("%.1f s class %d %+.2f -> %.5f\n", cm_clock() - t0, c, cw[c], best / total);
					fflush(stdout);
					break;
				}
				cw[c] -= s * step;
			}
		}
		if (!gained)
			step /= 2;
	}
	printf("end %.5f %.1f s\n", best / total, cm_clock() - t0);
	return 0;
}

#include "profile.h"

#include <stdlib.h>
#include <string.h>

/* A recomputed node and what its recomputation costs, for sorting. */
struct costly {
	double cost;
	int node;
};

static int costly_cmp(const void *a, const void *b)
{
	const struct costly *x = a, *y = b;

	if (x->cost > y->cost)
		return -1;
	if (x->cost < y->cost)
		return 1;
	return (x->node > y->node) - (x->node < y->node);
}

double profile_recompute_cost(const struct graph *g, const struct profile *pr, int k)
{
	return pr->computes[k] > 1 ? (pr->computes[k] - 1) * g->nodes[k].cost : 0;
}

/* The per-node totals and the recomputed nodes by cost; -1 when out of
 * memory. */
static int profile_nodes(const struct graph *g, struct profile *pr)
{
	struct costly *c = malloc(((size_t)g->n + 1) * sizeof(*c));

	pr->by_cost = malloc(((size_t)g->n + 1) * sizeof(int));
	if (c == NULL || pr->by_cost == NULL) {
		free(c);
		return -1;
	}
	for (int k = 0; k < g->n; k++) {
		pr->ncomputes += pr->computes[k];
		if (pr->computes[k] < 2)
			continue;
		pr->extra_computes += pr->computes[k] - 1;
		pr->recompute_cost += profile_recompute_cost(g, pr, k);
		c[pr->nrecomputed++] = (struct costly){ profile_recompute_cost(g, pr, k), k };
	}
	qsort(c, (size_t)pr->nrecomputed, sizeof(*c), costly_cmp);
	for (int i = 0; i < pr->nrecomputed; i++)
		pr->by_cost[i] = c[i].node;
	free(c);
	return 0;
}

/* The steps that compute a value for the second time or later, and the
 * first step at the peak; -1 when out of memory. */
static int profile_steps(const struct graph *g, const struct plan *p, struct profile *pr)
{
	char *seen = calloc((size_t)g->n + 1, 1);

	pr->peak_step = -1;
	if (seen == NULL)
		return -1;
	for (int i = 0; i < p->n; i++) {
		const struct plan_step *s = &p->steps[i];

		if (pr->peak_step < 0 && (s->op == PLAN_COMPUTE || s->op == PLAN_FETCH) &&
		    pr->memory[i] == pr->sim.peak)
			pr->peak_step = i;
		pr->nfrees += s->op == PLAN_FREE;
		pr->noffloads += s->op == PLAN_OFFLOAD;
		pr->nfetches += s->op == PLAN_FETCH;
		if (s->op != PLAN_COMPUTE || s->node < 0 || s->node >= g->n)
			continue;
		pr->recompute[i] = seen[s->node];
		seen[s->node] = 1;
	}
	free(seen);
	return 0;
}

int profile_plan(const struct graph *g, const struct plan *p, uint64_t budget,
		 const struct sim_copy *copy, struct profile *pr, struct cm_error *err)
{
	struct sim_trace tr;

	memset(pr, 0, sizeof(*pr));
	pr->nsteps = p->n;
	pr->budget = budget;
	pr->floor_cost = graph_total_cost(g);
	pr->peak_all = graph_peak_all(g);
	pr->memory = calloc((size_t)p->n + 1, sizeof(*pr->memory));
	pr->recompute = calloc((size_t)p->n + 1, 1);
	pr->computes = calloc((size_t)g->n + 1, sizeof(int));
	if (pr->memory == NULL || pr->recompute == NULL || pr->computes == NULL)
		goto oom;
	tr = (struct sim_trace){ pr->memory, pr->computes };
	if (plan_simulate_copies(g, p, budget, copy, &pr->sim, &tr, err)) {
		profile_release(pr);
		return -1;
	}
	pr->first_over = pr->sim.valid && !pr->sim.fits ? pr->sim.bad_step : -1;
	if (profile_steps(g, p, pr) || profile_nodes(g, pr))
		goto oom;
	return 0;
oom:
	profile_release(pr);
	return cm_errorf(err, "out of memory");
}

void profile_release(struct profile *pr)
{
	free(pr->memory);
	free(pr->recompute);
	free(pr->computes);
	free(pr->by_cost);
	memset(pr, 0, sizeof(*pr));
}

int profile_column_of(int nsteps, int ncols, int i)
{
	int m = nsteps < ncols ? nsteps : ncols;

	if (m <= 0)
		return 0;
	/* Column c holds steps [c n / m, (c + 1) n / m), rounded down. */
	return (int)(((int64_t)(i + 1) * m - 1) / nsteps);
}

int profile_columns(const struct profile *pr, int ncols, uint64_t *out)
{
	int m = pr->nsteps < ncols ? pr->nsteps : ncols;

	for (int c = 0; c < m; c++)
		out[c] = 0;
	for (int i = 0; i < pr->nsteps; i++) {
		int c = profile_column_of(pr->nsteps, ncols, i);

		if (pr->memory[i] > out[c])
			out[c] = pr->memory[i];
	}
	return m < 0 ? 0 : m;
}

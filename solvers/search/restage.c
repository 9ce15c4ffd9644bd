#include "restage.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/num.h"
#include "../../plan/sim.h"

/* S from residency in an unstaged plan: S(t,i) = resident[i] at the step
 * that marks stage t's start. after_prev: the first compute after node
 * t - 1's first compute (what the plan kept across t - 1's end); else the
 * first compute of t itself. */
static int stages_by_residency(const struct graph *g, const struct plan *p, int after_prev,
			       struct stages *st, struct cm_error *err)
{
	char *resident = calloc((size_t)g->n + 1, 1), *done = calloc((size_t)g->n + 1, 1);
	int next = 0, firsts = 0, pending = 1, rc = -1;

	if (resident == NULL || done == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	memset(st->S, 0, (size_t)g->n * (size_t)g->n);
	for (int s = 0; s < p->n; s++) {
		const struct plan_step *step = &p->steps[s];
		int v = step->node;

		if (step->op == PLAN_COMPUTE) {
			int begins = after_prev ? pending : !done[v];

			if (begins && next < g->n) {
				for (int i = 0; i < next; i++)
					STAGE_S(st, next, i) = (uint8_t)resident[i];
				next++;
				pending = 0;
			}
			if (!done[v]) {
				/* The model computes node t first in stage t. */
				if (v != firsts++) {
					cm_errorf(err, "the start plan computes '%s' before '%s'",
						  g->nodes[v].name, g->nodes[firsts - 1].name);
					rc = 0;
					goto out;
				}
				done[v] = 1;
				pending = 1;
			}
		}
		resident[v] = step->op == PLAN_COMPUTE;
	}
	if (next < g->n) {
		cm_errorf(err, "the start plan does not compute every node");
		rc = 0;
		goto out;
	}
	stages_drop_unused(g, st);
	rc = 1;
out:
	free(resident);
	free(done);
	return rc;
}

/* Replays the plan of st; 1 when it is valid and fits, its cost in *cost. */
static int replay_stages(const struct graph *g, uint64_t budget, const struct stages *st,
			 double *cost, struct cm_error *err)
{
	struct plan *p = plan_new();
	struct sim_result sim;
	int rc = -1;

	if (p == NULL)
		return cm_errorf(err, "out of memory");
	if (plan_from_stages(g, st, p, err) || plan_simulate(g, p, budget, &sim, err))
		goto out;
	*cost = sim.cost;
	rc = sim.valid && sim.fits && sim.peak <= budget;
out:
	plan_free(p);
	return rc;
}

int restage_plan(const struct graph *g, uint64_t budget, const struct plan *p,
		 struct stages *st, struct cm_error *err)
{
	struct stages alt = { 0 };
	double best = -1, cost;
	int staged = 1, rc = -1, fits;

	for (int i = 0; i < p->n; i++)
		staged &= p->steps[i].stage >= 0;
	if (staged && stages_from_plan(g, p, st) == 0) {
		fits = replay_stages(g, budget, st, &cost, err);
		if (fits != 0)
			return fits;
	}
	if (stages_init(&alt, g->n, err))
		return -1;
	for (int after_prev = 1; after_prev >= 0; after_prev--) {
		struct stages *dst = best < 0 ? st : &alt;
		int got = stages_by_residency(g, p, after_prev, dst, err);

		if (got <= 0) {
			rc = got;
			goto out;
		}
		fits = replay_stages(g, budget, dst, &cost, err);
		if (fits < 0)
			goto out;
		if (fits && (best < 0 || num_lt(cost, best))) {
			if (dst == &alt) {
				memcpy(st->R, alt.R, (size_t)g->n * (size_t)g->n);
				memcpy(st->S, alt.S, (size_t)g->n * (size_t)g->n);
			}
			best = cost;
		}
	}
	rc = best >= 0;
	if (!rc)
		cm_errorf(err, "the start plan, taken as stages, does not fit the budget");
out:
	stages_release(&alt);
	return rc;
}

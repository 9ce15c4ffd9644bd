#include "baseline.h"

#include "../common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct baseline baseline_table[] = {
	{ "checkpoint-all", "keep every value until its last use; no recomputation",
	  baseline_checkpoint_all_point },
	{ "chen-sqrtn", "Chen et al.: every sqrt(n)-th node of a forward chain kept (chains only)",
	  baseline_chen_sqrtn },
	{ "chen-greedy", "Chen et al. greedy: a node kept once b bytes follow the last one; b swept (chains only)",
	  baseline_chen_greedy },
	{ "griewank-logn", "Griewank & Walther revolve, binomial checkpointing with s snapshots; s swept (chains only)",
	  baseline_griewank_logn },
	{ "ap-sqrtn", "chen-sqrtn over the articulation points of the forward graph",
	  baseline_ap_sqrtn },
	{ "ap-greedy", "chen-greedy with articulation points as the only candidates",
	  baseline_ap_greedy },
	{ "linearized-sqrtn", "chen-sqrtn on the forward nodes taken as a chain in topological order",
	  baseline_linearized_sqrtn },
	{ "linearized-greedy", "chen-greedy on the forward nodes taken as a chain in topological order",
	  baseline_linearized_greedy },
};

const int baseline_count = (int)(sizeof(baseline_table) / sizeof(baseline_table[0]));

const struct baseline *baseline_find(const char *name)
{
	for (int i = 0; i < baseline_count; i++)
		if (strcmp(baseline_table[i].name, name) == 0)
			return &baseline_table[i];
	return NULL;
}

int baseline_best(const struct baseline *b, const struct graph *g, uint64_t budget,
		  struct plan **best, struct sim_result *sim, char *param, size_t len,
		  struct cm_error *err)
{
	char label[64];
	int rc = 0;

	*best = NULL;
	for (int k = 0; rc == 0; k++) {
		struct plan *p = plan_new();
		struct sim_result r;
		int better;

		if (p == NULL)
			return cm_errorf(err, "out of memory");
		label[0] = '\0';
		rc = b->point(g, k, p, label, sizeof(label), err);
		if (rc == 0 && plan_simulate(g, p, budget, &r, err))
			rc = -1;
		if (rc != 0) {
			plan_free(p);
			break;
		}
		if (!r.valid) {
			plan_free(p);
			plan_free(*best);
			*best = NULL;
			return cm_errorf(err, "internal error: %s point %d made an invalid plan: %s",
					 b->name, k, r.why);
		}
		better = *best == NULL ||
			 (r.fits && (!sim->fits || r.cost < sim->cost)) ||
			 (!r.fits && !sim->fits && r.peak < sim->peak);
		if (better) {
			plan_free(*best);
			*best = p;
			*sim = r;
			snprintf(param, len, "%s", label);
		} else {
			plan_free(p);
		}
	}
	if (rc == BASELINE_NO_POINT && *best != NULL)
		return 0;
	plan_free(*best);
	*best = NULL;
	if (rc == BASELINE_NO_POINT)
		return cm_errorf(err, "%s has no parameter point", b->name);
	return rc;
}

int baseline_points(const struct baseline *b, const struct graph *g,
		    struct baseline_point **pts, struct cm_error *err)
{
	int n = 0, cap = 0, rc = 0;

	*pts = NULL;
	for (int k = 0;; k++) {
		double t0 = cm_clock();
		struct plan *p = plan_new();
		struct sim_result r;
		char label[64] = "";

		if (p == NULL) {
			rc = cm_errorf(err, "out of memory");
			break;
		}
		rc = b->point(g, k, p, label, sizeof(label), err);
		if (rc == 0 && plan_simulate(g, p, SIM_NO_BUDGET, &r, err))
			rc = -1;
		if (rc == 0 && !r.valid)
			rc = cm_errorf(err, "internal error: %s point %d made an invalid plan: %s",
				       b->name, k, r.why);
		plan_free(p);
		if (rc)
			break;
		if (n == cap) {
			struct baseline_point *q;

			cap = cap ? 2 * cap : 16;
			q = realloc(*pts, (size_t)cap * sizeof(*q));
			if (q == NULL) {
				rc = cm_errorf(err, "out of memory");
				break;
			}
			*pts = q;
		}
		snprintf((*pts)[n].param, sizeof((*pts)[n].param), "%s", label);
		(*pts)[n].cost = r.cost;
		(*pts)[n].peak = r.peak;
		(*pts)[n].seconds = cm_clock() - t0;
		n++;
	}
	if (rc == BASELINE_NO_POINT)
		return n;
	free(*pts);
	*pts = NULL;
	return rc == BASELINE_UNSUPPORTED ? -BASELINE_UNSUPPORTED : -1;
}

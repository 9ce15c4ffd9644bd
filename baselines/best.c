/* What the strategy layer asks of a heuristic: its answer at a budget, or
 * every point of its parameter sweep. */
#include "baseline.h"

#include "../common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int baseline_best(const struct baseline *b, const struct graph *g, uint64_t budget,
		  struct plan **best, struct sim_result *sim, char *param, size_t len,
		  char *why, size_t why_len, struct cm_error *err)
{
	return baseline_best_until(b, 0, g, budget, best, sim, param, len, why, why_len, err);
}

int baseline_best_until(const struct baseline *b, double deadline, const struct graph *g,
			uint64_t budget, struct plan **best, struct sim_result *sim, char *param,
			size_t len, char *why, size_t why_len, struct cm_error *err)
{
	/* A point says "unsupported" through a cm_error of its own (the
	 * signature of struct strategy's point); here it becomes why. */
	struct cm_error pe = { "" };
	char label[64];
	int rc = 0;

	*best = NULL;
	for (int k = 0; rc == 0; k++) {
		struct plan *p;
		struct sim_result r;
		int better;

		if (*best && deadline > 0 && cm_clock() > deadline)
			return 0;
		p = plan_new();
		if (p == NULL)
			return cm_errorf(err, "out of memory");
		label[0] = '\0';
		rc = b->point(g, k, p, label, sizeof(label), &pe);
		if (rc < 0)
			*err = pe;
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
	if (rc == BASELINE_UNSUPPORTED && why)
		snprintf(why, why_len, "%s", pe.msg);
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

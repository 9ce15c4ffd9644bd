/* Checkpoint all: every node once, in order, each value freed after its
 * last use. This is the stage plan of R = identity with S keeping each value
 * until its last user (stages_checkpoint_all), built directly in O(n + e) so
 * that it also serves graphs too large for stage matrices. */
#include "baseline.h"

#include <stdio.h>
#include <stdlib.h>

int baseline_checkpoint_all(const struct graph *g, struct plan *p, struct cm_error *err)
{
	int *last = malloc((size_t)g->n * sizeof(int));
	int rc = -1;

	if (last == NULL)
		goto out;
	graph_last_use(g, last);
	for (int k = 0; k < g->n; k++) {
		if (plan_push(p, PLAN_COMPUTE, k, k))
			goto out;
		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
			if (last[g->deps[e]] == k && plan_push(p, PLAN_FREE, g->deps[e], k))
				goto out;
		if (last[k] == k && plan_push(p, PLAN_FREE, k, k))
			goto out;
	}
	rc = 0;
out:
	if (rc)
		cm_errorf(err, "out of memory");
	free(last);
	return rc;
}

int baseline_checkpoint_all_point(const struct graph *g, int k, struct plan *p,
				  char *param, size_t len, struct cm_error *err)
{
	(void)param;
	(void)len;
	if (k > 0)
		return BASELINE_NO_POINT;
	return baseline_checkpoint_all(g, p, err);
}

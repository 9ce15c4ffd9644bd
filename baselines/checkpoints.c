/* The plan of a fixed set of forward checkpoints (Chen et al.'s scheme in
 * the stage model): see baseline_plan_of_checkpoints in baseline.h. */
#include "baseline.h"

#include <stdlib.h>

#include "../plan/stages.h"

int baseline_plan_of_checkpoints(const struct graph *g, const char *ckpt,
				 struct plan *p, struct cm_error *err)
{
	int n = g->n, rc = -1;
	int *last = malloc((size_t)n * sizeof(int));
	int *redo = malloc((size_t)n * sizeof(int));
	struct stages st;

	if (last == NULL || redo == NULL) {
		cm_errorf(err, "out of memory");
		goto out_free;
	}
	if (stages_init(&st, n, err))
		goto out_free;
	graph_last_use(g, last);
	/* redo[x]: the first backward stage that needs forward value x again,
	 * directly or through another recomputed forward value; -1 if none.
	 * Users come later, so one backward sweep settles it. */
	for (int x = n - 1; x >= 0; x--) {
		redo[x] = -1;
		if (g->nodes[x].backward || ckpt[x])
			continue;
		for (int e = g->user_off[x]; e < g->user_off[x + 1]; e++) {
			int y = g->users[e];
			int s = g->nodes[y].backward ? y : ckpt[y] ? -1 : redo[y];

			if (s >= 0 && (redo[x] < 0 || s < redo[x]))
				redo[x] = s;
		}
	}
	for (int x = 0; x < n; x++) {
		int last_fwd = x;

		if (g->nodes[x].backward || ckpt[x]) {
			stages_keep(&st, x, x, last[x]);
			continue;
		}
		for (int e = g->user_off[x]; e < g->user_off[x + 1]; e++)
			if (!g->nodes[g->users[e]].backward)
				last_fwd = g->users[e];
		stages_keep(&st, x, x, last_fwd);
		if (redo[x] >= 0)
			stages_keep(&st, x, redo[x], last[x]);
	}
	stages_drop_unused(g, &st);
	rc = plan_from_stages(g, &st, p, err);
	stages_release(&st);
out_free:
	free(last);
	free(redo);
	return rc;
}

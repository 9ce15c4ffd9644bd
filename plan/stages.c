#include "stages.h"

#include <stdlib.h>
#include <string.h>

int stages_init(struct stages *st, int n, struct cm_error *err)
{
	size_t cells = (size_t)n * (size_t)n;

	st->n = n;
	st->R = st->S = st->F = st->O = NULL;
	if (n > STAGES_MAX_NODES)
		return cm_errorf(err, "%d nodes is too many for stage matrices (limit %d)",
				 n, STAGES_MAX_NODES);
	st->R = calloc(cells ? cells : 1, 1);
	st->S = calloc(cells ? cells : 1, 1);
	if (st->R == NULL || st->S == NULL) {
		stages_release(st);
		return cm_errorf(err, "out of memory for %d x %d stage matrices", n, n);
	}
	return 0;
}

void stages_release(struct stages *st)
{
	free(st->R);
	free(st->S);
	free(st->F);
	free(st->O);
	st->R = st->S = st->F = st->O = NULL;
}

int stages_init_copies(struct stages *st, struct cm_error *err)
{
	size_t cells = (size_t)st->n * (size_t)st->n;

	st->F = calloc(cells ? cells : 1, 1);
	st->O = calloc(cells ? cells : 1, 1);
	if (st->F == NULL || st->O == NULL) {
		stages_release(st);
		return cm_errorf(err, "out of memory for %d x %d stage matrices", st->n, st->n);
	}
	return 0;
}

void stages_complete_r(const struct graph *g, struct stages *st)
{
	int n = st->n;

	memset(st->R, 0, (size_t)n * (size_t)n);
	for (int t = 0; t < n; t++) {
		for (int i = t; i < n; i++)
			STAGE_S(st, t, i) = 0;
		STAGE_R(st, t, t) = 1;
	}
	/* A value kept into stage t + 1 is computed in stage t unless it was
	 * already kept into t or is fetched in t. */
	for (int t = 0; t + 1 < n; t++)
		for (int i = 0; i <= t; i++)
			if (STAGE_S(st, t + 1, i) && !STAGE_S(st, t, i) &&
			    !(st->F && STAGE_F(st, t, i)))
				STAGE_R(st, t, i) = 1;
	/* Inputs that are neither kept nor computed yet are computed too; deps
	 * are earlier nodes, so one backward scan closes the stage. */
	for (int t = 0; t < n; t++)
		for (int k = t; k >= 0; k--) {
			if (!STAGE_R(st, t, k))
				continue;
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
				if (!STAGE_S(st, t, g->deps[e]))
					STAGE_R(st, t, g->deps[e]) = 1;
		}
}

/* 1 when stage t reads value i: a node of the stage that uses it is
 * computed. */
static int read_in_stage(const struct graph *g, const struct stages *st, int t, int i)
{
	for (int e = g->user_off[i]; e < g->user_off[i + 1]; e++)
		if (g->users[e] <= t && STAGE_R(st, t, g->users[e]))
			return 1;
	return 0;
}

int stages_drop_unused(const struct graph *g, struct stages *st)
{
	int total = 0, dropped;

	do {
		dropped = 0;
		stages_complete_r(g, st);
		/* From the last stage back, so that dropping S(t,i) can
		 * make S(t-1,i) unused in the same pass. */
		for (int t = st->n - 1; t > 0; t--)
			for (int i = 0; i < t; i++)
				if (STAGE_S(st, t, i) && !read_in_stage(g, st, t, i) &&
				    !(t + 1 < st->n && STAGE_S(st, t + 1, i))) {
					STAGE_S(st, t, i) = 0;
					dropped++;
				}
		total += dropped;
	} while (dropped);
	return total;
}

void stages_checkpoint_all(const struct graph *g, struct stages *st, const int *last)
{
	(void)g;
	memset(st->S, 0, (size_t)st->n * (size_t)st->n);
	for (int t = 1; t < st->n; t++)
		for (int i = 0; i < t; i++)
			STAGE_S(st, t, i) = last[i] >= t;
}

/* Frees value i when it is resident, not kept, and k is its last use. */
static int free_if_done(struct plan *p, char *resident, const int *last,
			const uint8_t *keep, int i, int k, int t)
{
	if (!resident[i] || last[i] != k || (keep && keep[i]))
		return 0;
	resident[i] = 0;
	return plan_push(p, PLAN_FREE, i, t);
}

int plan_from_stages(const struct graph *g, const struct stages *st,
		     struct plan *p, struct cm_error *err)
{
	int n = st->n, rc = -1;
	char *resident = calloc((size_t)n, 1);
	int *last = malloc((size_t)n * sizeof(int));

	if (resident == NULL || last == NULL)
		goto out;
	for (int t = 0; t < n; t++) {
		const uint8_t *R = &STAGE_R(st, t, 0);
		const uint8_t *keep = t + 1 < n ? &STAGE_S(st, t + 1, 0) : NULL;

		/* last[i]: the last node of stage t that uses i (or computes
		 * it, when nothing later in the stage uses it). */
		for (int i = 0; i < n; i++)
			last[i] = -1;
		for (int k = 0; k <= t; k++) {
			if (!R[k])
				continue;
			if (last[k] < k)
				last[k] = k;
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
				last[g->deps[e]] = k;
		}
		for (int i = 0; i < n; i++)
			if (free_if_done(p, resident, last, keep, i, -1, t))
				goto out;
		for (int i = 0; st->F && i < t; i++) {
			if (STAGE_F(st, t, i) && !resident[i]) {
				if (plan_push(p, PLAN_FETCH, i, t))
					goto out;
				resident[i] = 1;
			}
			if (STAGE_O(st, t, i) && resident[i] && plan_push(p, PLAN_OFFLOAD, i, t))
				goto out;
		}
		for (int k = 0; k <= t; k++) {
			if (!R[k])
				continue;
			if (!resident[k]) {
				if (plan_push(p, PLAN_COMPUTE, k, t))
					goto out;
				resident[k] = 1;
			}
			for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++)
				if (free_if_done(p, resident, last, keep, g->deps[e], k, t))
					goto out;
			if (free_if_done(p, resident, last, keep, k, k, t))
				goto out;
		}
	}
	rc = 0;
out:
	if (rc)
		cm_errorf(err, "out of memory");
	free(resident);
	free(last);
	return rc;
}

int stages_from_plan(const struct graph *g, const struct plan *p, struct stages *st)
{
	char *resident = calloc((size_t)g->n + 1, 1);
	int stage = -1, rc = -1;

	if (resident == NULL)
		return -1;
	memset(st->R, 0, (size_t)st->n * (size_t)st->n);
	memset(st->S, 0, (size_t)st->n * (size_t)st->n);
	for (int i = 0; i < p->n; i++) {
		const struct plan_step *s = &p->steps[i];
		/* An unstaged step belongs to the stage of the last node
		 * computed for the first time; a first compute opens the next
		 * stage, which must be that node's. */
		int at = s->stage >= 0 ? s->stage :
			 s->op == PLAN_COMPUTE && s->node > stage ? s->node : stage;

		if (at < stage || at >= st->n || (s->stage < 0 && at > stage + 1))
			goto out;
		/* Entering stages: what is resident now was kept into them. */
		while (stage < at) {
			stage++;
			for (int v = 0; v < g->n; v++)
				STAGE_S(st, stage, v) = resident[v] && v < stage;
		}
		if (s->op == PLAN_COMPUTE) {
			if (s->node > stage)
				goto out;
			STAGE_R(st, stage, s->node) = 1;
		}
		/* On the device: an offload leaves it there, a free of a
		 * value on the host only (its host copy) leaves it off. */
		if (s->op == PLAN_COMPUTE || s->op == PLAN_FETCH)
			resident[s->node] = 1;
		else if (s->op == PLAN_FREE)
			resident[s->node] = 0;
	}
	rc = stage == st->n - 1 ? 0 : -1;
out:
	free(resident);
	return rc;
}

void stages_keep(struct stages *st, int i, int from, int to)
{
	for (int t = from + 1; t <= to && t < st->n; t++)
		STAGE_S(st, t, i) = 1;
}

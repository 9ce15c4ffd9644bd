#include "offload.h"

#include <stdlib.h>

#include "../../common/num.h"

/* The state of the pass: the plan so far and its replay. */
struct pass {
	const struct graph *g;
	const struct sim_copy *copy;
	uint64_t budget;
	struct plan *cur;        /* the plan with the changes kept so far */
	struct sim_result res;   /* its replay */
	uint64_t *memory;        /* [cur->n] device memory after each step */
	struct cm_error *err;
};

/* Replays pl into res and, when memory is not NULL, its memory after
 * each step (memory holds pl->n). 0, or -1 with err set. */
static int replay(struct pass *s, const struct plan *pl, struct sim_result *res,
		  uint64_t *memory)
{
	struct sim_trace tr = { .memory = memory };

	return plan_simulate_copies(s->g, pl, s->budget, s->copy, res, memory ? &tr : NULL,
				    s->err);
}

/* cur with an offload of v after step c (c < 0: none), and the compute at
 * step j made a fetch at position k (before the step now at k; k < 0:
 * none). NULL when out of memory. */
static struct plan *variant(const struct plan *cur, int v, int c, int k, int j)
{
	struct plan_edit e[2];
	int ne = 0;

	/* sorted by position; at one place the offload goes first */
	if (c >= 0 && (k < 0 || c + 1 <= k))
		e[ne++] = (struct plan_edit){ c + 1, PLAN_OFFLOAD, v };
	if (k >= 0)
		e[ne++] = (struct plan_edit){ k, PLAN_FETCH, v };
	if (c >= 0 && k >= 0 && c + 1 > k)
		e[ne++] = (struct plan_edit){ c + 1, PLAN_OFFLOAD, v };
	return plan_edited(cur, e, ne, j);
}

/* Keeps t as the plan when its replay is valid, fits and is shorter; 1
 * when kept, 0 when not (t freed), -1 on error. */
static int try_variant(struct pass *s, struct plan *t)
{
	struct sim_result r;
	uint64_t *mem;

	if (t == NULL)
		return cm_errorf(s->err, "out of memory");
	mem = malloc((size_t)t->n * sizeof(*mem));
	if (mem == NULL || replay(s, t, &r, mem)) {
		free(mem);
		plan_free(t);
		return mem ? -1 : cm_errorf(s->err, "out of memory");
	}
	if (!r.valid || !r.fits || !num_lt(r.time, s->res.time)) {
		free(mem);
		plan_free(t);
		return 0;
	}
	plan_free(s->cur);
	free(s->memory);
	s->cur = t;
	s->memory = mem;
	s->res = r;
	return 1;
}

/* Tries to make the recompute of v at step j a fetch. Returns 1 when
 * kept (*shift: how far the steps after j moved), 0 when not, -1 on
 * error. */
static int convert(struct pass *s, int j, int *shift)
{
	const struct plan *cur = s->cur;
	int v = cur->steps[j].node, f = -1, c = -1, on_host = 0, k, rc;
	uint64_t mv = s->g->nodes[v].memory;

	for (int i = j - 1; i >= 0; i--) {
		const struct plan_step *st = &cur->steps[i];

		if (st->node != v)
			continue;
		on_host |= st->op == PLAN_OFFLOAD;
		if (f < 0 && st->op == PLAN_FREE)
			f = i;
		else if (f >= 0 && c < 0 && (st->op == PLAN_COMPUTE || st->op == PLAN_FETCH))
			c = i;
	}
	if (f < 0 || c < 0)
		return 0;
	if (on_host)
		c = -1;
	k = j;
	while (k - 1 > f && mv <= s->budget && s->memory[k - 2] <= s->budget - mv)
		k--;
	*shift = c >= 0;
	rc = try_variant(s, variant(cur, v, c, k, j));
	if (rc == 0 && k < j)
		rc = try_variant(s, variant(cur, v, c, j, j));
	return rc;
}

struct plan *offload_recomputes(const struct graph *g, const struct plan *p,
				     uint64_t budget, const struct sim_copy *copy,
				     int *converted, struct cm_error *err)
{
	struct pass s = { .g = g, .copy = copy, .budget = budget, .err = err };
	char *done = calloc((size_t)g->n, 1);
	int count = 0;

	if (plan_first_copy(p) >= 0) {
		cm_errorf(err, "the plan to start from already has copies");
		free(done);
		return NULL;
	}
	s.cur = variant(p, -1, -1, -1, -1);
	s.memory = s.cur ? malloc(((size_t)p->n + 1) * sizeof(*s.memory)) : NULL;
	if (done == NULL || s.memory == NULL) {
		cm_errorf(err, "out of memory");
		goto fail;
	}
	if (replay(&s, s.cur, &s.res, s.memory))
		goto fail;
	if (!s.res.valid || !s.res.fits) {
		cm_errorf(err, "the plan to start from does not replay within the budget: %s",
			  s.res.why);
		goto fail;
	}
	for (int i = 0; i < s.cur->n; i++) {
		const struct plan_step *st = &s.cur->steps[i];
		int shift = 0, rc = 0;

		if (st->op == PLAN_COMPUTE && done[st->node])
			rc = convert(&s, i, &shift);
		else if (st->op == PLAN_COMPUTE)
			done[st->node] = 1;
		if (rc < 0)
			goto fail;
		count += rc;
		i += rc ? shift : 0;
	}
	free(done);
	free(s.memory);
	if (converted)
		*converted = count;
	s.cur->cost = s.res.cost;
	s.cur->peak = s.res.peak;
	return s.cur;
fail:
	free(done);
	free(s.memory);
	plan_free(s.cur);
	return NULL;
}

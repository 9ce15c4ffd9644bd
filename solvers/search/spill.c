#include "spill.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/num.h"

/* The state of the pass: the plan so far and its replay. */
struct spill {
	const struct graph *g;
	const struct sim_copy *copy;
	uint64_t budget;
	struct plan *cur;      /* the plan with the changes kept so far */
	struct sim_result res; /* its replay, with no budget */
	uint64_t *memory;      /* [cur->n] device memory after each step */
	char *resident, *host; /* [g->n] scratch: where each value is */
	struct cm_error *err;
};

/* Makes t the plan when its replay is valid and keep says so (0: only
 * valid; 1: also no slower); 1 when kept, 0 when not (t freed), -1 on
 * error. */
static int adopt(struct spill *s, struct plan *t, int keep)
{
	struct sim_trace tr = { 0 };
	struct sim_result r;

	if (t == NULL)
		return cm_errorf(s->err, "out of memory");
	tr.memory = malloc(((size_t)t->n + 1) * sizeof(*tr.memory));
	if (tr.memory == NULL ||
	    plan_simulate_copies(s->g, t, SIM_NO_BUDGET, s->copy, &r, &tr, s->err)) {
		free(tr.memory);
		plan_free(t);
		return tr.memory ? -1 : cm_errorf(s->err, "out of memory");
	}
	if (!r.valid || (keep && !num_le(r.time, s->res.time))) {
		free(tr.memory);
		plan_free(t);
		return 0;
	}
	plan_free(s->cur);
	free(s->memory);
	s->cur = t;
	s->memory = tr.memory;
	s->res = r;
	return 1;
}

/* 1 when step st reads or makes v. */
static int touches(const struct graph *g, const struct plan_step *st, int v)
{
	if (st->op == PLAN_FETCH || (st->op == PLAN_COMPUTE && st->node == v))
		return st->node == v;
	if (st->op != PLAN_COMPUTE)
		return 0;
	for (int e = g->dep_off[st->node]; e < g->dep_off[st->node + 1]; e++)
		if (g->deps[e] == v)
			return 1;
	return 0;
}

/* Where the values are after step i of cur. */
static void places(struct spill *s, int i)
{
	memset(s->resident, 0, (size_t)s->g->n);
	memset(s->host, 0, (size_t)s->g->n);
	for (int j = 0; j <= i; j++) {
		const struct plan_step *st = &s->cur->steps[j];

		if (st->op == PLAN_COMPUTE || st->op == PLAN_FETCH)
			s->resident[st->node] = 1;
		else if (st->op == PLAN_OFFLOAD)
			s->host[st->node] = 1;
		else if (s->resident[st->node])
			s->resident[st->node] = 0;
		else
			s->host[st->node] = 0;
	}
}

/* The value to move at peak step i: resident there, neither made nor
 * read by step i, the largest (then the longest idle). Sets *a (its last
 * touch before i) and *b (its next step after i, cur->n for none); -1
 * when there is none. */
static int pick(struct spill *s, int i, int *a, int *b)
{
	const struct plan *cur = s->cur;
	int best = -1;

	places(s, i);
	for (int v = 0; v < s->g->n; v++) {
		int x = i, y = i + 1;

		if (!s->resident[v] || s->g->nodes[v].memory == 0 || touches(s->g, &cur->steps[i], v))
			continue;
		while (x >= 0 && !touches(s->g, &cur->steps[x], v))
			x--;
		while (y < cur->n && !touches(s->g, &cur->steps[y], v) && cur->steps[y].node != v)
			y++;
		if (x < 0 || (y < cur->n && cur->steps[y].op != PLAN_COMPUTE &&
			      cur->steps[y].op != PLAN_FREE))
			continue;
		if (best < 0 || s->g->nodes[v].memory > s->g->nodes[best].memory ||
		    (s->g->nodes[v].memory == s->g->nodes[best].memory && y - x > *b - *a)) {
			best = v;
			*a = x;
			*b = y;
		}
	}
	return best;
}

/* Moves one value off the first peak step; 1 when done, 0 when no value
 * can move, -1 on error. */
static int spill_once(struct spill *s)
{
	const struct plan *cur = s->cur;
	struct plan_edit e[3];
	int i = 0, a = 0, b = 0, v, c, ne = 0;

	while (i < cur->n && s->memory[i] != s->res.peak)
		i++;
	if (i == cur->n || (v = pick(s, i, &a, &b)) < 0)
		return 0;
	if (b == cur->n || cur->steps[b].op == PLAN_FREE) {
		e[0] = (struct plan_edit){ a + 1, PLAN_FREE, v };
		return adopt(s, plan_edited(cur, e, 1, b < cur->n ? b : -1), 0);
	}
	for (c = a; !(cur->steps[c].node == v && (cur->steps[c].op == PLAN_COMPUTE ||
						   cur->steps[c].op == PLAN_FETCH)); c--)
		;
	if (!s->host[v])
		e[ne++] = (struct plan_edit){ c + 1, PLAN_OFFLOAD, v };
	e[ne++] = (struct plan_edit){ a + 1, PLAN_FREE, v };
	if (b < cur->n)
		e[ne++] = (struct plan_edit){ b, PLAN_FETCH, v };
	return adopt(s, plan_edited(cur, e, ne, -1), 0);
}

/* Moves each fetch as early as the budget and its free allow, where that
 * is no slower; -1 on error. */
static int fetch_early(struct spill *s)
{
	for (int j = 0; j < s->cur->n; j++) {
		const struct plan_step *st = &s->cur->steps[j];
		uint64_t mv = s->g->nodes[st->node].memory;
		struct plan_edit e;
		int k = j, v = st->node, rc;

		if (st->op != PLAN_FETCH)
			continue;
		while (k - 1 > 0 && s->cur->steps[k - 1].node != v && mv <= s->budget &&
		       s->memory[k - 2] <= s->budget - mv)
			k--;
		if (k == j)
			continue;
		e = (struct plan_edit){ k, PLAN_FETCH, v };
		rc = adopt(s, plan_edited(s->cur, &e, 1, j), 1);
		if (rc < 0)
			return -1;
	}
	return 0;
}

struct plan *spill_to_budget(const struct graph *g, const struct plan *p,
				  uint64_t budget, const struct sim_copy *copy, int *moved,
				  struct cm_error *err)
{
	struct spill s = { .g = g, .copy = copy, .budget = budget, .err = err };
	int count = 0, rc = 1;

	if (plan_first_copy(p) >= 0) {
		cm_errorf(err, "the plan to start from already has copies");
		return NULL;
	}
	s.resident = malloc((size_t)g->n);
	s.host = malloc((size_t)g->n);
	if (s.resident == NULL || s.host == NULL) {
		cm_errorf(err, "out of memory");
		goto fail;
	}
	rc = adopt(&s, plan_edited(p, NULL, 0, -1), 0);
	if (rc < 0)
		goto fail;
	if (rc == 0) {
		cm_errorf(err, "the plan to start from does not replay");
		goto fail;
	}
	for (int it = 0; s.res.peak > budget && it < 4 * g->n + 16; it++) {
		rc = spill_once(&s);
		if (rc < 0)
			goto fail;
		if (rc == 0)
			break;
		count++;
	}
	if (s.res.peak <= budget && fetch_early(&s))
		goto fail;
	free(s.resident);
	free(s.host);
	free(s.memory);
	if (moved)
		*moved = count;
	s.cur->cost = s.res.cost;
	s.cur->peak = s.res.peak;
	return s.cur;
fail:
	free(s.resident);
	free(s.host);
	free(s.memory);
	plan_free(s.cur);
	return NULL;
}

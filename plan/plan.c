#include "plan.h"

#include <stdlib.h>
#include <string.h>

struct plan *plan_new(void)
{
	return calloc(1, sizeof(struct plan));
}

void plan_free(struct plan *p)
{
	if (p == NULL)
		return;
	free(p->steps);
	free(p);
}

void plan_clear(struct plan *p)
{
	p->n = 0;
}

int plan_push(struct plan *p, enum plan_op op, int node, int stage)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 256;
		struct plan_step *s;

		if (cap > INT32_MAX / 2)
			return -1;
		s = realloc(p->steps, (size_t)cap * sizeof(*s));
		if (s == NULL)
			return -1;
		p->steps = s;
		p->cap = cap;
	}
	p->steps[p->n++] = (struct plan_step){ op, node, stage };
	return 0;
}

struct plan *plan_edited(const struct plan *cur, const struct plan_edit *e, int ne, int drop)
{
	struct plan *t = plan_new();
	int k = 0;

	if (t == NULL)
		return NULL;
	memcpy(t->strategy, cur->strategy, sizeof(t->strategy));
	memcpy(t->solver, cur->solver, sizeof(t->solver));
	memcpy(t->param, cur->param, sizeof(t->param));
	memcpy(t->status, cur->status, sizeof(t->status));
	t->budget = cur->budget;
	for (int i = 0; i <= cur->n; i++) {
		for (; k < ne && e[k].at == i; k++)
			if (plan_push(t, (enum plan_op)e[k].op, e[k].node, -1))
				goto oom;
		if (i < cur->n && i != drop &&
		    plan_push(t, (enum plan_op)cur->steps[i].op, cur->steps[i].node,
			      cur->steps[i].stage))
			goto oom;
	}
	return t;
oom:
	plan_free(t);
	return NULL;
}

int plan_first_computes(const struct plan *p, int n, int *order)
{
	char *seen = calloc((size_t)n + 1, 1);
	int k = 0;

	if (seen == NULL)
		return -1;
	for (int s = 0; s < p->n; s++) {
		int v = p->steps[s].node;

		if (p->steps[s].op == PLAN_COMPUTE && v >= 0 && v < n && !seen[v]) {
			seen[v] = 1;
			order[k++] = v;
		}
	}
	free(seen);
	return k;
}

int plan_first_copy(const struct plan *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->steps[i].op == PLAN_OFFLOAD || p->steps[i].op == PLAN_FETCH)
			return i;
	return -1;
}

const char *plan_op_name(int op)
{
	static const char *const names[] = {
		[PLAN_COMPUTE] = "compute", [PLAN_FREE] = "free",
		[PLAN_OFFLOAD] = "offload", [PLAN_FETCH] = "fetch",
	};

	return op >= PLAN_COMPUTE && op <= PLAN_FETCH ? names[op] : "?";
}

#include "sim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/size.h"

static void violation(struct sim_result *res, int step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void violation(struct sim_result *res, int step, const char *fmt, ...)
{
	va_list ap;
	int len = 0;

	if (res->why[0] != '\0')
		return;
	res->bad_step = step;
	if (step >= 0)
		len = snprintf(res->why, sizeof(res->why), "step %d: ", step + 1);
	va_start(ap, fmt);
	cm_vformat(res->why + len, sizeof(res->why) - (size_t)len, fmt, ap);
	va_end(ap);
}

/* Checks one compute and applies it; 0 when legal. */
static int replay_compute(const struct graph *g, const struct plan_step *s, int idx,
			  char *resident, struct sim_result *res)
{
	const char *name = g->nodes[s->node].name;

	if (resident[s->node]) {
		violation(res, idx, "compute '%s': it is already resident", name);
		return -1;
	}
	for (int e = g->dep_off[s->node]; e < g->dep_off[s->node + 1]; e++)
		if (!resident[g->deps[e]]) {
			violation(res, idx, "compute '%s': input '%s' is not resident",
				  name, g->nodes[g->deps[e]].name);
			return -1;
		}
	resident[s->node] = 1;
	res->cost += g->nodes[s->node].cost;
	return 0;
}

int plan_simulate(const struct graph *g, const struct plan *p, uint64_t budget,
		  struct sim_result *res, struct cm_error *err)
{
	return plan_simulate_trace(g, p, budget, res, NULL, err);
}

/* Clears what tr records. */
static void trace_clear(const struct graph *g, const struct plan *p, struct sim_trace *tr)
{
	if (tr && tr->memory)
		memset(tr->memory, 0, (size_t)p->n * sizeof(*tr->memory));
	if (tr && tr->computes)
		memset(tr->computes, 0, (size_t)g->n * sizeof(*tr->computes));
}

int plan_simulate_trace(const struct graph *g, const struct plan *p, uint64_t budget,
			struct sim_result *res, struct sim_trace *tr, struct cm_error *err)
{
	char *resident = calloc((size_t)g->n, 1), *done = calloc((size_t)g->n, 1);
	uint64_t live = g->fixed_memory;
	int ok = 1;

	*res = (struct sim_result){ .bad_step = -1, .peak = g->fixed_memory };
	if (resident == NULL || done == NULL) {
		free(resident);
		free(done);
		return cm_errorf(err, "out of memory");
	}
	trace_clear(g, p, tr);
	for (int i = 0; i < p->n && ok; i++) {
		const struct plan_step *s = &p->steps[i];

		if (s->node < 0 || s->node >= g->n) {
			violation(res, i, "node %d does not exist", s->node);
			ok = 0;
		} else if (s->op == PLAN_COMPUTE) {
			ok = replay_compute(g, s, i, resident, res) == 0;
			if (ok) {
				done[s->node] = 1;
				if (tr && tr->computes)
					tr->computes[s->node]++;
				live += g->nodes[s->node].memory;
				if (live > res->peak)
					res->peak = live;
				if (live > budget && res->why[0] == '\0') {
					char l[64], b[64];

					violation(res, i, "compute '%s': memory in use %s exceeds the "
						  "budget %s", g->nodes[s->node].name,
						  size_both(live, l, sizeof(l)),
						  size_both(budget, b, sizeof(b)));
				}
			}
		} else if (!resident[s->node]) {
			violation(res, i, "free '%s': it is not resident", g->nodes[s->node].name);
			ok = 0;
		} else {
			resident[s->node] = 0;
			live -= g->nodes[s->node].memory;
		}
		if (ok && tr && tr->memory)
			tr->memory[i] = live;
	}
	for (int k = 0; k < g->n && ok; k++)
		if (!done[k]) {
			violation(res, -1, "node '%s' is never computed", g->nodes[k].name);
			ok = 0;
		}
	res->valid = ok;
	res->fits = ok && res->peak <= budget;
	free(resident);
	free(done);
	return 0;
}

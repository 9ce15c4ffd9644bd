#include "sim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/size.h"

/* The state of one replay. The clocks are used only with copies. */
struct replay {
	const struct graph *g;
	const struct sim_copy *copy; /* NULL: no copies, no time */
	uint64_t budget;
	struct sim_result *res;
	char *resident;  /* [n] 1 when the value is on the device */
	char *host;      /* [n] 1 when the value has a host copy */
	char *done;      /* [n] 1 once the node has been computed */
	double *ready;   /* [n] with copies: when the device copy can be
			  * read, the end of its compute or fetch; else NULL */
	double *copy_end; /* [n] with copies: the end of the value's last
			   * copy, 0 for none; else NULL */
	uint64_t live;   /* device memory in use */
	uint64_t host_live; /* bytes with a host copy */
	double t;        /* the compute stream's clock */
	double waited;   /* seconds the compute stream has waited so far */
	double c;        /* the end of the copy stream's last copy */
};

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

/* Records the device memory after step idx (a compute or fetch of v) in
 * the peak, naming the step when it is the first over the budget. */
static void count_peak(struct replay *r, int idx, const struct plan_step *s)
{
	struct sim_result *res = r->res;

	if (r->live > res->peak)
		res->peak = r->live;
	if (r->live > r->budget && res->why[0] == '\0') {
		char l[64], b[64];

		violation(res, idx, "%s '%s': memory in use %s exceeds the budget %s",
			  plan_op_name(s->op), r->g->nodes[s->node].name,
			  size_both(r->live, l, sizeof(l)), size_both(r->budget, b, sizeof(b)));
	}
}

/* Checks one compute and applies it; 0 when legal. */
static int replay_compute(struct replay *r, const struct plan_step *s, int idx)
{
	const struct graph *g = r->g;
	const char *name = g->nodes[s->node].name;
	double start = r->t;

	if (r->resident[s->node]) {
		violation(r->res, idx, "compute '%s': it is already resident", name);
		return -1;
	}
	for (int e = g->dep_off[s->node]; e < g->dep_off[s->node + 1]; e++) {
		int u = g->deps[e];

		if (!r->resident[u]) {
			violation(r->res, idx, "compute '%s': input '%s' is %s", name,
				  g->nodes[u].name, r->host[u] ?
				  "on the host, not resident: fetch it first" : "not resident");
			return -1;
		}
		if (r->ready && r->ready[u] > start)
			start = r->ready[u];
	}
	r->resident[s->node] = 1;
	r->res->cost += g->nodes[s->node].cost;
	if (r->copy) {
		r->waited += start - r->t;
		r->t = start + g->nodes[s->node].cost * r->copy->seconds_per_cost;
		r->ready[s->node] = r->t;
		r->res->time = r->t;
		r->res->wait = r->waited;
	}
	r->done[s->node] = 1;
	r->live += g->nodes[s->node].memory;
	count_peak(r, idx, s);
	return 0;
}

/* A free: of the device copy when there is one (waiting for a copy of it
 * still running), else of the host copy; 0 when legal. */
static int replay_free(struct replay *r, const struct plan_step *s, int idx)
{
	int v = s->node;

	if (r->resident[v]) {
		if (r->copy && r->copy_end[v] > r->t) {
			r->waited += r->copy_end[v] - r->t;
			r->t = r->copy_end[v];
		}
		r->resident[v] = 0;
		r->live -= r->g->nodes[v].memory;
	} else if (r->host[v]) {
		r->host[v] = 0;
		r->host_live -= r->g->nodes[v].memory;
	} else {
		violation(r->res, idx, "free '%s': it is not resident", r->g->nodes[v].name);
		return -1;
	}
	return 0;
}

/* An offload or a fetch: checks it, then runs it on the copy stream; 0
 * when legal. */
static int replay_copy(struct replay *r, const struct plan_step *s, int idx)
{
	const char *name = r->g->nodes[s->node].name, *op = plan_op_name(s->op);
	int v = s->node;
	double start;

	if (r->copy == NULL) {
		violation(r->res, idx, "%s '%s': a copy needs a bandwidth", op, name);
		return -1;
	}
	if (s->op == PLAN_OFFLOAD && !r->resident[v]) {
		violation(r->res, idx, "offload '%s': it is not resident", name);
		return -1;
	}
	if (s->op == PLAN_OFFLOAD && r->host[v]) {
		violation(r->res, idx, "offload '%s': it already has a host copy", name);
		return -1;
	}
	if (s->op == PLAN_FETCH && r->resident[v]) {
		violation(r->res, idx, "fetch '%s': it is already resident", name);
		return -1;
	}
	if (s->op == PLAN_FETCH && !r->host[v]) {
		violation(r->res, idx, "fetch '%s': it has no host copy", name);
		return -1;
	}
	start = r->t > r->c ? r->t : r->c;
	r->c = start + (double)r->g->nodes[v].memory / r->copy->bandwidth;
	r->copy_end[v] = r->c;
	if (s->op == PLAN_OFFLOAD) {
		r->host[v] = 1;
		r->host_live += r->g->nodes[v].memory;
		if (r->host_live > r->res->host_peak)
			r->res->host_peak = r->host_live;
		if (r->copy->host_budget && r->host_live > r->copy->host_budget &&
		    r->res->why[0] == '\0') {
			char l[64], b[64];

			violation(r->res, idx, "offload '%s': host memory in use %s exceeds the "
				  "host budget %s", name, size_both(r->host_live, l, sizeof(l)),
				  size_both(r->copy->host_budget, b, sizeof(b)));
		}
	} else {
		r->resident[v] = 1;
		r->ready[v] = r->c;
		r->live += r->g->nodes[v].memory;
		count_peak(r, idx, s);
	}
	return 0;
}

int plan_simulate(const struct graph *g, const struct plan *p, uint64_t budget,
		  struct sim_result *res, struct cm_error *err)
{
	return plan_simulate_copies(g, p, budget, NULL, res, NULL, err);
}

int plan_simulate_trace(const struct graph *g, const struct plan *p, uint64_t budget,
			struct sim_result *res, struct sim_trace *tr, struct cm_error *err)
{
	return plan_simulate_copies(g, p, budget, NULL, res, tr, err);
}

/* Clears what tr records. */
static void trace_clear(const struct graph *g, const struct plan *p, struct sim_trace *tr)
{
	if (tr && tr->memory)
		memset(tr->memory, 0, (size_t)p->n * sizeof(*tr->memory));
	if (tr && tr->computes)
		memset(tr->computes, 0, (size_t)g->n * sizeof(*tr->computes));
}

/* Replays the steps of p in r; 1 when every step is legal. */
static int replay_steps(struct replay *r, const struct plan *p, struct sim_trace *tr)
{
	const struct graph *g = r->g;

	for (int i = 0; i < p->n; i++) {
		const struct plan_step *s = &p->steps[i];
		int rc;

		if (s->node < 0 || s->node >= g->n) {
			violation(r->res, i, "node %d does not exist", s->node);
			return 0;
		}
		if (s->op == PLAN_COMPUTE)
			rc = replay_compute(r, s, i);
		else if (s->op == PLAN_FREE)
			rc = replay_free(r, s, i);
		else
			rc = replay_copy(r, s, i);
		if (rc)
			return 0;
		if (s->op == PLAN_COMPUTE && tr && tr->computes)
			tr->computes[s->node]++;
		if (tr && tr->memory)
			tr->memory[i] = r->live;
	}
	return 1;
}

int plan_simulate_copies(const struct graph *g, const struct plan *p, uint64_t budget,
			 const struct sim_copy *copy, struct sim_result *res,
			 struct sim_trace *tr, struct cm_error *err)
{
	size_t n = (size_t)g->n;
	/* The clocks' arrays only with copies: replays without them are the
	 * strategies' inner loop. */
	struct replay r = {
		.g = g, .copy = copy, .budget = budget, .res = res, .live = g->fixed_memory,
		.resident = calloc(n, 1), .host = calloc(n, 1), .done = calloc(n, 1),
		.ready = copy ? calloc(n, sizeof(double)) : NULL,
		.copy_end = copy ? calloc(n, sizeof(double)) : NULL,
	};
	int ok, rc = 0;

	*res = (struct sim_result){ .bad_step = -1, .peak = g->fixed_memory };
	if (!r.resident || !r.host || !r.done || (copy && (!r.ready || !r.copy_end))) {
		rc = cm_errorf(err, "out of memory");
		goto out;
	}
	trace_clear(g, p, tr);
	ok = replay_steps(&r, p, tr);
	for (int k = 0; k < g->n && ok; k++)
		if (!r.done[k]) {
			violation(res, -1, "node '%s' is never computed", g->nodes[k].name);
			ok = 0;
		}
	res->valid = ok;
	res->fits = ok && res->peak <= budget &&
		    (!copy || !copy->host_budget || res->host_peak <= copy->host_budget);
out:
	free(r.resident);
	free(r.host);
	free(r.done);
	free(r.ready);
	free(r.copy_end);
	return rc;
}

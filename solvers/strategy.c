/* The strategy layer: the table in use, names, parameters, and what every
 * strategy's outcome shares (replay, status, bounds). */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/near.h"
#include "../common/num.h"
#include "../common/size.h"
#include "../common/stop.h"
#include "../graph/pebble.h"

const char *const strategy_status_names[STATUS_COUNT] = {
	[STATUS_FEASIBLE] = "feasible",       [STATUS_OPTIMAL] = "optimal",
	[STATUS_TIMEOUT] = "timeout",         [STATUS_NO_PLAN] = "no_plan",
	[STATUS_INFEASIBLE] = "infeasible",   [STATUS_OVER_BUDGET] = "over_budget",
	[STATUS_UNSUPPORTED] = "unsupported", [STATUS_INTERRUPTED] = "interrupted",
};

/* The table in use; strategy_use swaps it for tests. */
static const struct strategy *rows_in_use;
static int rows_in_use_count;

int strategy_count(void)
{
	return rows_in_use ? rows_in_use_count : strategy_table_count;
}

const struct strategy *strategy_at(int i)
{
	return rows_in_use ? &rows_in_use[i] : &strategy_table[i];
}

void strategy_use(const struct strategy *rows, int n)
{
	rows_in_use = rows;
	rows_in_use_count = rows ? n : 0;
}

void strategy_names(unsigned mask, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < strategy_count() && used < len; i++)
		if ((strategy_at(i)->flags & mask) == mask)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 strategy_at(i)->name);
}

static const char *strategy_name_at(const void *ctx, int i)
{
	(void)ctx;
	return strategy_at(i)->name;
}

const struct strategy *strategy_find(const char *name, struct cm_error *err)
{
	const char *near;
	char names[1024];

	for (int i = 0; i < strategy_count(); i++)
		if (strcmp(strategy_at(i)->name, name) == 0)
			return strategy_at(i);
	if ((near = near_name(name, strategy_name_at, strategy_count(), NULL)) != NULL) {
		cm_errorf(err, "unknown strategy '%s'; did you mean '%s'?", name, near);
	} else {
		strategy_names(0, names, sizeof(names));
		cm_errorf(err, "unknown strategy '%s' (known: %s)", name, names);
	}
	return NULL;
}

static const struct strategy_key *key_of(const struct strategy *s, const char *key)
{
	for (const struct strategy_key *k = s->params; k && k->name; k++)
		if (strcmp(k->name, key) == 0)
			return k;
	return NULL;
}

/* The keys of n rows, ", "-separated, into buf. */
static void key_names(const struct strategy *const *s, int n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		for (const struct strategy_key *k = s[i]->params; k && k->name && used < len; k++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 k->name);
}

/* v against the values k allows; 0, or -1 with err set. */
static int check_value(const struct strategy_key *k, const char *v, struct cm_error *err)
{
	const char *near;
	char values[256], *end;
	double d;

	if (k->choices == NULL) {
		d = strtod(v, &end);
		if (end == v || *end || !(d >= k->lo && d <= k->hi) || d != floor(d))
			return cm_errorf(err, "--param %s: expected %s, not '%s'", k->name,
					 strategy_key_values(k, values, sizeof(values)), v);
		return 0;
	}
	for (const char *const *c = k->choices; *c; c++)
		if (strcmp(*c, v) == 0)
			return 0;
	if ((near = near_in(v, k->choices)) != NULL)
		return cm_errorf(err, "--param %s: unknown value '%s'; did you mean '%s'?", k->name,
				 v, near);
	return cm_errorf(err, "--param %s: unknown value '%s' (it takes %s)", k->name, v,
			 strategy_key_values(k, values, sizeof(values)));
}

int strategy_check_params(const struct strategy *const *s, int n,
			  const struct solve_request *rq, struct cm_error *err)
{
	for (int p = 0; p < rq->n_params; p++) {
		const char *key = rq->params[p].key;
		char keys[512];
		int known = 0;

		for (int i = 0; i < n; i++) {
			const struct strategy_key *k = key_of(s[i], key);

			if (k && check_value(k, rq->params[p].value, err))
				return -1;
			known |= k != NULL;
		}
		if (known)
			continue;
		key_names(s, n, keys, sizeof(keys));
		if (n == 1)
			return cm_errorf(err, "--param %s: strategy '%s' has no such parameter (%s%s)",
					 key, s[0]->name, keys[0] ? "it takes " : "it takes none", keys);
		return cm_errorf(err, "--param %s: none of the strategies run has such a parameter (%s%s)",
				 key, keys[0] ? "they take " : "they take none", keys);
	}
	return 0;
}

const char *strategy_key_values(const struct strategy_key *k, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	if (k->choices == NULL) {
		snprintf(buf, len, "a whole number from %.17g to %.17g", k->lo, k->hi);
		return buf;
	}
	for (const char *const *c = k->choices; *c && used < len; c++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "", *c);
	return buf;
}

const char *strategy_param(const struct solve_request *rq, const char *key)
{
	const char *value = NULL;

	/* The last one given wins, as with any repeated option. */
	for (int p = 0; p < rq->n_params; p++)
		if (strcmp(rq->params[p].key, key) == 0)
			value = rq->params[p].value;
	return value;
}

uint64_t strategy_param_whole(const struct solve_request *rq, const char *key, uint64_t dflt)
{
	const char *v = strategy_param(rq, key);

	return v ? (uint64_t)strtod(v, NULL) : dflt;
}

void strategy_outcome_release(struct solve_outcome *out)
{
	plan_free(out->plan);
	out->plan = NULL;
}

void strategy_set_status(struct solve_outcome *out, int status)
{
	out->status = status;
	if (out->plan)
		snprintf(out->plan->status, sizeof(out->plan->status), "%s",
			 strategy_status_names[status]);
}

int strategy_adopt(const struct graph *g, const char *strategy, uint64_t budget,
		 struct plan *p, struct solve_outcome *out, struct cm_error *err)
{
	return strategy_adopt_copies(g, strategy, budget, NULL, p, out, err);
}

int strategy_adopt_copies(const struct graph *g, const char *strategy, uint64_t budget,
			  const struct sim_copy *copy, struct plan *p, struct solve_outcome *out,
			  struct cm_error *err)
{
	out->plan = p;
	if (plan_simulate_copies(g, p, budget, copy, &out->sim, NULL, err))
		return -1;
	if (!out->sim.valid)
		return cm_errorf(err, "internal error: strategy %s made an invalid plan: %s",
				 strategy, out->sim.why);
	snprintf(p->strategy, sizeof(p->strategy), "%s", strategy);
	snprintf(p->param, sizeof(p->param), "%s", out->param);
	p->budget = budget;
	p->cost = out->sim.cost;
	p->peak = out->sim.peak;
	return 0;
}

void strategy_set_model(struct solve_outcome *out, const struct milp *m)
{
	out->cols = m->ncols;
	out->rows = m->nrows;
	out->nnz = m->nnz;
}

double strategy_meet_bound(const struct graph *g, double cost, int fits, double bound,
			   int *proven)
{
	/* The checkpoint-all cost is exact (a sum of the costs); a solver's
	 * bound is rounded down to what its tolerance allows. */
	if (bound != graph_total_cost(g))
		bound = graph_round_bound(g, bound);
	/* A bound that the cost meets proves the plan optimal. */
	*proven = fits && num_le(cost, bound);
	return *proven ? cost : bound;
}

void strategy_set_bound(const struct graph *g, struct solve_outcome *out, double bound)
{
	int proven;

	bound = strategy_meet_bound(g, out->plan ? out->sim.cost : 0, out->plan && out->sim.fits,
				    bound, &proven);
	if (proven && out->status == STATUS_FEASIBLE)
		strategy_set_status(out, STATUS_OPTIMAL);
	out->has_lower_bound = 1;
	out->lower_bound = bound;
	if (out->plan) {
		out->plan->has_lower_bound = 1;
		out->plan->lower_bound = bound;
	}
}

void strategy_settle(const struct graph *g, const struct solve_request *rq, const char *who,
		     int anytime, double bound, struct solve_outcome *out)
{
	char peak[64], budget[64];

	if (!out->sim.fits) {
		strategy_set_status(out, STATUS_OVER_BUDGET);
		snprintf(out->why, sizeof(out->why), "%.200s peaks at %s, over the budget %s", who,
			 size_both(out->sim.peak, peak, sizeof(peak)),
			 size_both(rq->budget, budget, sizeof(budget)));
	} else if (rq->cost_cap > 0 && !num_le(strategy_capped(rq, &out->sim), rq->cost_cap)) {
		strategy_set_status(out, anytime ? STATUS_NO_PLAN : STATUS_OVER_BUDGET);
		if (rq->copy)
			snprintf(out->why, sizeof(out->why), "%.200s takes %.17g s, over the cap "
				 "%.17g s", who, strategy_capped(rq, &out->sim) *
				 rq->copy->seconds_per_cost, rq->cost_cap * rq->copy->seconds_per_cost);
		else
			snprintf(out->why, sizeof(out->why), "%.200s costs %.17g, over the cap %.17g",
				 who, out->sim.cost, rq->cost_cap);
	} else {
		strategy_set_status(out, STATUS_FEASIBLE);
		if (bound > 0 || num_le(out->sim.cost, graph_total_cost(g)))
			strategy_set_bound(g, out, fmax(bound, graph_total_cost(g)));
	}
}

double strategy_capped(const struct solve_request *rq, const struct sim_result *sim)
{
	/* A plan not replayed in time yet has no copies: its time is its
	 * cost's. */
	return rq->copy && sim->time > 0 ? sim->time / rq->copy->seconds_per_cost : sim->cost;
}

double strategy_time_floor(const struct graph *g, const struct solve_request *rq)
{
	return graph_total_cost(g) * rq->copy->seconds_per_cost;
}

double strategy_time_limit(const struct solve_request *rq)
{
	return rq->time_limit > 0 ? rq->time_limit : STRATEGY_TIME_LIMIT;
}

double strategy_time_left(const struct solve_request *rq, double t0)
{
	return fmax(0, strategy_time_limit(rq) - (cm_clock() - t0));
}

double strategy_deadline(const struct solve_request *rq)
{
	return rq->time_limit > 0 ? cm_clock() + rq->time_limit : 0;
}

void strategy_set_infeasible(const struct graph *g, uint64_t budget, int node, int ancestors,
			     struct solve_outcome *out)
{
	char b[64];

	strategy_set_status(out, STATUS_INFEASIBLE);
	snprintf(out->why, sizeof(out->why), "no plan fits: %.200s cannot be computed within %s "
		 "however its %d ancestors are scheduled, freed and recomputed (an exhaustive "
		 "search, docs/model.md)", g->nodes[node].name, size_both(budget, b, sizeof(b)),
		 ancestors);
}

void strategy_model_has_none(const struct graph *g, const struct solve_request *rq,
			     double seconds, const char *model_why, struct solve_outcome *out)
{
	int node, ancestors;

	out->model_none = 1;
	if (seconds > 0 && !stop_requested() &&
	    graph_pebble_infeasible(g, rq->budget, GRAPH_PEBBLE_STATES, seconds, &node, &ancestors)) {
		strategy_set_infeasible(g, rq->budget, node, ancestors, out);
		return;
	}
	strategy_set_status(out, STATUS_NO_PLAN);
	snprintf(out->why, sizeof(out->why), "%.200s; plans outside it (first computes out of "
		 "file order) are not ruled out", model_why);
}

const struct solver_ops *strategy_backend(const struct solve_request *rq, struct cm_error *err)
{
	const struct solver_ops *ops = solver_find(rq->solver ? rq->solver : SOLVER_DEFAULT);
	char names[128];

	if (ops == NULL) {
		solver_names(names, sizeof(names));
		cm_errorf(err, "unknown solver '%s' (built: %s)", rq->solver, names);
	}
	return ops;
}

void strategy_row_of_outcome(struct strategy_row *r, const struct graph *g,
			     const char *strategy, uint64_t budget,
			     const struct solve_outcome *o)
{
	double floor_cost = graph_total_cost(g);

	*r = (struct strategy_row){ .graph = g->id, .strategy = strategy, .solver = o->solver,
				    .param = o->param, .budget = budget, .status = o->status,
				    .seconds = o->seconds, .has_lower_bound = o->has_lower_bound,
				    .lower_bound = o->lower_bound, .has_time_bound = o->has_time_bound,
				    .time_bound = o->time_bound };
	if (o->plan) {
		r->feasible = o->sim.fits;
		r->has_cost = 1;
		r->cost = o->sim.cost;
		r->overhead = o->sim.cost / (floor_cost > 0 ? floor_cost : 1);
		r->peak = o->sim.peak;
		r->has_time = o->plan->has_time;
		r->time = o->sim.time;
		r->wait = o->sim.wait;
		r->host_peak = o->sim.host_peak;
	}
}

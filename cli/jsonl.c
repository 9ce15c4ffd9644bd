/* JSON Lines for --json: each object built with json_pack and written
 * compactly, keys in the CSV's order, one object a line. */
#include "jsonl.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/graph.h"
#include "../solvers/strategy.h"
#include "cli.h"

/* A string, null when absent or empty (the CSV's empty field). A name
 * that is not UTF-8 (a file name, say) has its other bytes as '?'. */
static json_t *text(const char *s)
{
	json_t *j;
	char *copy;

	if (s == NULL || *s == '\0')
		return json_null();
	if ((j = json_string(s)) != NULL || (copy = strdup(s)) == NULL)
		return j;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

/* A byte count: an integer, as JSON readers expect, unless it is beyond
 * what Jansson's signed integers hold. */
static json_t *bytes(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

static json_t *real_or_null(int has, double v)
{
	return has ? json_real(v) : json_null();
}

/* Writes o (a reference the caller gives up) as one line of f. */
static int put(FILE *f, json_t *o, struct cm_error *err)
{
	char *s;
	int rc = 0;

	if (o == NULL)
		return cm_errorf(err, "--json: out of memory");
	/* 15 significant digits (DBL_DIG): every decimal of up to 15 digits
	 * prints as written (0.029, not 0.029000000000000001), and a cost
	 * below 10^15 keeps every digit. */
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(o);
	if (s == NULL)
		return cm_errorf(err, "--json: out of memory");
	if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
		rc = cm_errorf(err, "--json: write failed");
	free(s);
	return rc;
}

/* The plan's summary into o. */
static int add_plan(json_t *o, const struct jsonl_plan *p)
{
	json_t *model = p->cols == 0 ? json_null() :
		json_pack("{s:i, s:i, s:i}", "columns", p->cols, "rows", p->rows,
			  "nonzeros", p->nnz);

	return json_object_set_new(o, "steps", p->has_plan ? json_integer(p->steps) : json_null()) ||
	       json_object_set_new(o, "computes",
				   p->has_plan ? json_integer(p->computes) : json_null()) ||
	       json_object_set_new(o, "checkpoint_all_cost", json_real(p->checkpoint_all_cost)) ||
	       json_object_set_new(o, "reason", text(p->reason)) ||
	       json_object_set_new(o, "plan_file", text(p->plan_file)) ||
	       json_object_set_new(o, "model", model) ||
	       (p->has_time &&
		(json_object_set_new(o, "time", json_real(p->time)) ||
		 json_object_set_new(o, "wait", json_real(p->wait)) ||
		 json_object_set_new(o, "host_peak_memory", bytes(p->host_peak)))) ? -1 : 0;
}

int jsonl_row(FILE *f, const struct strategy_row *r, const struct jsonl_plan *p,
	      struct cm_error *err)
{
	double gap = 0;
	int has_gap = cli_row_gap(r, &gap);
	/* solve_seconds at the CSV's resolution, a millisecond */
	json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:f, s:s}",
			      "graph", text(r->graph), "strategy", text(r->strategy),
			      "param", text(r->param), "solver", text(r->solver),
			      "budget", bytes(r->budget), "feasible", r->feasible,
			      "cost", real_or_null(r->has_cost, r->cost),
			      "overhead", real_or_null(r->has_cost, r->overhead),
			      "peak_memory", r->has_cost ? bytes(r->peak) : json_null(),
			      "lower_bound", real_or_null(r->has_lower_bound, r->lower_bound),
			      "gap", real_or_null(has_gap, gap),
			      "solve_seconds", round(r->seconds * 1000) / 1000,
			      "status", strategy_status_names[r->status]);

	if (o && p && add_plan(o, p)) {
		json_decref(o);
		o = NULL;
	}
	/* compare's and maxbatch's rows: the time when there is one */
	if (o && p == NULL && r->has_time &&
	    (json_object_set_new(o, "time", json_real(r->time)) ||
	     json_object_set_new(o, "wait", json_real(r->wait)) ||
	     json_object_set_new(o, "host_peak_memory", bytes(r->host_peak)))) {
		json_decref(o);
		o = NULL;
	}
	if (o && r->has_time_bound &&
	    json_object_set_new(o, "time_lower_bound", json_real(r->time_bound))) {
		json_decref(o);
		o = NULL;
	}
	return put(f, o, err);
}

int jsonl_info(FILE *f, const struct graph *g, struct cm_error *err)
{
	int nf = graph_nforward(g);
	json_t *o = json_pack("{s:o, s:o, s:i, s:i, s:i, s:i, s:o, s:o, s:f, s:o, s:o}",
			      "graph", text(g->id), "title", text(g->title), "nodes", g->n,
			      "forward", nf, "backward", g->n - nf, "edges", g->n_edges,
			      "batch_size", bytes(g->batch_size),
			      "fixed_memory", bytes(g->fixed_memory),
			      "checkpoint_all_cost", graph_total_cost(g),
			      "checkpoint_all_peak", bytes(graph_peak_all(g)),
			      "budget_lower_bound", bytes(graph_lower_bound(g)));

	return put(f, o, err);
}

/* --json: results as JSON Lines, one object a line, built with Jansson.
 * The fields of a result are the CSV's (docs/formats.md, CSV columns; same
 * names, numbers as
 * numbers, null where the CSV leaves a field empty); solve adds its plan's
 * summary. json_t stays inside jsonl.c. */
#ifndef CM_JSONL_H
#define CM_JSONL_H

#include <stdio.h>

#include "../common/error.h"

struct graph;
struct strategy_row;

/* What solve knows beyond the CSV row. */
struct jsonl_plan {
	int has_plan;              /* steps and computes are known */
	int steps, computes;       /* the plan's steps, its compute steps */
	double checkpoint_all_cost; /* the cost floor overhead is measured against */
	const char *reason;        /* why the status, or NULL */
	const char *plan_file;     /* the plan file written, or NULL */
	int cols, rows, nnz;       /* size of the model, 0 when none was built */
	/* solve --bandwidth: the plan's replay in time (docs/formats.md,
	 * Planning with a bandwidth); written only when has_time is set. */
	int has_time;
	double time, wait;         /* seconds */
	unsigned long long host_peak; /* bytes */
};

/* Writes r as one line of JSON to f, with p's fields when p is not NULL.
 * Returns 0, or -1 with err set (out of memory, or a failed write). */
int jsonl_row(FILE *f, const struct strategy_row *r, const struct jsonl_plan *p,
	      struct cm_error *err);

/* Writes what `info` prints about g as one line of JSON to f. Returns 0,
 * or -1 with err set. */
int jsonl_info(FILE *f, const struct graph *g, struct cm_error *err);

#endif

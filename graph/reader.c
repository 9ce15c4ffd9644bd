/* The checks of single JSON values that the graph readers (read.c,
 * nodelink.c) share: reader.h. */
#include "reader.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int reader_fail(struct reader *r, const char *fmt, ...)
{
	char msg[sizeof(r->err->msg)];
	va_list ap;

	va_start(ap, fmt);
	cm_vformat(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cm_errorf(r->err, "%s: %s", r->file, msg);
}

/* Adds the file name to an error the graph builder reported. */
int reader_fail_builder(struct reader *r)
{
	char msg[sizeof(r->err->msg)];

	snprintf(msg, sizeof(msg), "%s", r->err->msg);
	return cm_errorf(r->err, "%s: %s", r->file, msg);
}

/* A whole number of bytes in [0, max), from a JSON number (integers arrive
 * as reals: the reader decodes with JSON_DECODE_INT_AS_REAL). */
int reader_bytes(struct reader *r, const char *who, const char *key,
		     json_t *v, uint64_t max, uint64_t *out)
{
	double x;

	if (!json_is_number(v))
		return reader_fail(r, "%s'%s' must be a number", who, key);
	x = json_number_value(v);
	if (x < 0)
		return reader_fail(r, "%s'%s' must not be negative", who, key);
	if (x != floor(x))
		return reader_fail(r, "%s'%s' must be a whole number of bytes, not %g", who, key, x);
	if (x >= (double)max)
		return reader_fail(r, "%s'%s' %.17g is too large (limit %.17g)", who, key,
			    x, (double)max);
	*out = (uint64_t)x;
	return 0;
}

int reader_cost(struct reader *r, const char *who, const char *key,
		    json_t *v, double *out)
{
	if (!json_is_number(v))
		return reader_fail(r, "%s'%s' must be a number", who, key);
	*out = json_number_value(v);
	if (!isfinite(*out) || *out < 0)
		return reader_fail(r, "%s'%s' must be a finite number >= 0", who, key);
	return 0;
}

int reader_bool(struct reader *r, const char *who, const char *key,
		    json_t *v, int *out)
{
	*out = 0;
	if (v == NULL)
		return 0;
	if (!json_is_boolean(v))
		return reader_fail(r, "%s'%s' must be true or false", who, key);
	*out = json_is_true(v);
	return 0;
}

/* cost_unit from the top level a, else from b, else from a's "torch"
 * object, where `checkmate_torch export` records it. */
static void reader_cost_unit(struct reader *r, json_t *a, json_t *b)
{
	json_t *v = json_object_get(a, "cost_unit");
	int u;

	if (v == NULL)
		v = json_object_get(b, "cost_unit");
	if (v == NULL)
		v = json_object_get(json_object_get(a, "torch"), "cost_unit");
	if (v == NULL)
		return;
	/* Graphs made before the key was read may carry other words
	 * ("cycles"): a unit not known is no unit, so that they read as
	 * before. */
	u = json_is_string(v) ? graph_cost_unit_parse(json_string_value(v)) : -1;
	r->g->cost_unit = u < 0 ? GRAPH_COST_NONE : u;
}

/* fixed_memory, batch_size and cost_unit, looked up in each of the objects
 * given. */
int reader_globals(struct reader *r, json_t *a, json_t *b)
{
	json_t *objs[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		json_t *fm = json_object_get(objs[i], "fixed_memory");
		json_t *bs = json_object_get(objs[i], "batch_size");

		if (fm && reader_bytes(r, "", "fixed_memory", fm, GRAPH_MAX_MEMORY,
				    &r->g->fixed_memory))
			return -1;
		if (bs && reader_bytes(r, "", "batch_size", bs, GRAPH_MAX_MEMORY,
				    &r->g->batch_size))
			return -1;
		if (bs && r->g->batch_size == 0)
			return reader_fail(r, "'batch_size' must be at least 1");
	}
	reader_cost_unit(r, a, b);
	return 0;
}

/* Sets the graph's title from a "name" string, when there is one. */
int reader_title(struct reader *r, json_t *obj)
{
	json_t *name = json_object_get(obj, "name");

	if (!json_is_string(name))
		return 0;
	free(r->g->title);
	r->g->title = strdup(json_string_value(name));
	return r->g->title ? 0 : reader_fail(r, "out of memory");
}

#include "io.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The node a step names: a node name or an integer index. */
static int step_node(const struct graph *g, json_t *v)
{
	if (json_is_string(v))
		return graph_find(g, json_string_value(v));
	if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < g->n)
		return (int)json_integer_value(v);
	return -1;
}

/* The enum plan_op a step's "op" names, or -1. */
static int step_op(const char *name)
{
	for (int op = PLAN_COMPUTE; op <= PLAN_FETCH; op++)
		if (strcmp(plan_op_name(op), name) == 0)
			return op;
	return -1;
}

static void copy_string(char *dst, size_t len, json_t *v)
{
	if (json_is_string(v))
		snprintf(dst, len, "%s", json_string_value(v));
}

/* Steps of the plan; for, when not NULL, the graph the plan says it was
 * made for (named in the error when a node is not in g). */
static int read_steps(const char *label, const struct graph *g, json_t *steps,
		      const char *for_graph, struct plan *p, struct cm_error *err)
{
	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		json_t *op = json_object_get(s, "op"), *node = json_object_get(s, "node");
		const char *ops = json_is_string(op) ? json_string_value(op) : "";
		int k, op_k;

		if (!json_is_object(s) || node == NULL)
			return cm_errorf(err, "%s: step %zu: expected {\"op\": ..., \"node\": ...}",
					 label, i + 1);
		k = step_node(g, node);
		if (k < 0) {
			if (json_is_string(node) && for_graph && strcmp(for_graph, g->id) != 0)
				return cm_errorf(err, "%s: step %zu: node '%s' is not in the graph "
						 "(the plan was made for graph '%s', not '%s')",
						 label, i + 1, json_string_value(node), for_graph,
						 g->id);
			if (json_is_string(node))
				return cm_errorf(err, "%s: step %zu: node '%s' is not in the graph",
						 label, i + 1, json_string_value(node));
			return cm_errorf(err, "%s: step %zu: 'node' must be a node name or index",
					 label, i + 1);
		}
		op_k = step_op(ops);
		if (op_k < 0)
			return cm_errorf(err, "%s: step %zu: 'op' must be \"compute\", \"free\", "
					 "\"offload\" or \"fetch\"", label, i + 1);
		if (plan_push(p, (enum plan_op)op_k, k, -1))
			return cm_errorf(err, "out of memory");
	}
	return 0;
}

struct plan *plan_read_file(const char *path, const struct graph *g,
			    struct cm_error *err)
{
	struct plan *p;
	FILE *f;

	if (strcmp(path, "-") == 0)
		return plan_read_stream(stdin, "stdin", g, err);
	f = fopen(path, "rb");
	if (f == NULL) {
		cm_errorf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	p = plan_read_stream(f, path, g, err);
	fclose(f);
	return p;
}

struct plan *plan_read_stream(FILE *f, const char *label, const struct graph *g,
			      struct cm_error *err)
{
	json_error_t je;
	json_t *root, *steps, *fmt, *v;
	struct plan *p = NULL;

	root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		if (je.line > 0)
			cm_errorf(err, "%s:%d:%d: %s", label, je.line, je.column, je.text);
		else
			cm_errorf(err, "%s: %s", label, je.text);
		return NULL;
	}
	fmt = json_object_get(root, "format");
	steps = json_object_get(root, "steps");
	if (!json_is_object(root) ||
	    (fmt && (!json_is_string(fmt) ||
		     strcmp(json_string_value(fmt), "checkmate-plan") != 0))) {
		cm_errorf(err, "%s: not a checkmate-plan document", label);
		goto fail;
	}
	if (!json_is_array(steps)) {
		cm_errorf(err, "%s: missing 'steps' array", label);
		goto fail;
	}
	p = plan_new();
	if (p == NULL) {
		cm_errorf(err, "out of memory");
		goto fail;
	}
	copy_string(p->strategy, sizeof(p->strategy), json_object_get(root, "strategy"));
	copy_string(p->solver, sizeof(p->solver), json_object_get(root, "solver"));
	copy_string(p->param, sizeof(p->param), json_object_get(root, "param"));
	copy_string(p->status, sizeof(p->status), json_object_get(root, "status"));
	v = json_object_get(root, "budget");
	if (json_is_integer(v) && json_integer_value(v) > 0)
		p->budget = (uint64_t)json_integer_value(v);
	v = json_object_get(root, "graph");
	if (read_steps(label, g, steps, json_is_string(v) ? json_string_value(v) : NULL, p, err))
		goto fail;
	json_decref(root);
	return p;
fail:
	plan_free(p);
	json_decref(root);
	return NULL;
}

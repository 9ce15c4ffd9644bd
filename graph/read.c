#include "read.h"
#include "reader.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Resolves a dep or grad_of reference (a name or an integer index) to an
 * earlier node of format 1. */
static int resolve_ref(struct reader *r, const char *who, const char *what,
		       json_t *ref, int k, int *out)
{
	int i = -1;

	if (json_is_string(ref)) {
		i = graph_find(r->g, json_string_value(ref));
		if (i < 0 || i >= k)
			return reader_fail(r, "%s%s '%s' is not an earlier node", who, what,
				    json_string_value(ref));
	} else if (json_is_number(ref)) {
		double x = json_number_value(ref);

		if (x != floor(x) || x < 0 || x >= k)
			return reader_fail(r, "%s%s %g is not the index of an earlier node",
				    who, what, x);
		i = (int)x;
	} else {
		return reader_fail(r, "%s%s must be a node name or index", who, what);
	}
	*out = i;
	return 0;
}

/* One node of format 1: name, cost, memory, backward, materialized,
 * saveable, save_cost, workspace, deps, grad_of. */
static int read_node(struct reader *r, json_t *node, int k)
{
	char who[300];
	json_t *name, *deps, *grad;
	const char *nm;
	double cost, save = 0;
	uint64_t mem, ws = 0;
	int bw, mat, saveable = 1, dep;

	if (!json_is_object(node))
		return reader_fail(r, "node %d: expected an object", k);
	name = json_object_get(node, "name");
	if (name == NULL)
		return reader_fail(r, "node %d: missing 'name'", k);
	if (!json_is_string(name))
		return reader_fail(r, "node %d: 'name' must be a string", k);
	nm = json_string_value(name);
	cm_format(who, sizeof(who), "node '%s': ", nm);
	if (json_object_get(node, "cost") == NULL)
		return reader_fail(r, "%smissing 'cost'", who);
	if (json_object_get(node, "memory") == NULL)
		return reader_fail(r, "%smissing 'memory'", who);
	if (reader_cost(r, who, "cost", json_object_get(node, "cost"), &cost) ||
	    reader_bytes(r, who, "memory", json_object_get(node, "memory"),
		      GRAPH_MAX_MEMORY, &mem) ||
	    reader_bool(r, who, "backward", json_object_get(node, "backward"), &bw) ||
	    reader_bool(r, who, "materialized", json_object_get(node, "materialized"), &mat) ||
	    (json_object_get(node, "saveable") != NULL &&
	     reader_bool(r, who, "saveable", json_object_get(node, "saveable"), &saveable)) ||
	    (json_object_get(node, "save_cost") != NULL &&
	     reader_cost(r, who, "save_cost", json_object_get(node, "save_cost"), &save)) ||
	    (json_object_get(node, "workspace") != NULL &&
	     reader_bytes(r, who, "workspace", json_object_get(node, "workspace"),
			  GRAPH_MAX_MEMORY, &ws)))
		return -1;
	if (graph_add_node(r->g, nm, cost, mem, bw, r->err) < 0)
		return reader_fail_builder(r);
	r->g->nodes[k].materialized = mat;
	r->g->nodes[k].unsaveable = !saveable;
	r->g->nodes[k].save_cost = save;
	r->g->nodes[k].workspace = ws;
	deps = json_object_get(node, "deps");
	if (deps != NULL && !json_is_array(deps))
		return reader_fail(r, "%s'deps' must be an array", who);
	for (size_t j = 0; deps && j < json_array_size(deps); j++)
		if (resolve_ref(r, who, "dep", json_array_get(deps, j), k, &dep) ||
		    (graph_add_dep(r->g, dep, r->err) && reader_fail_builder(r)))
			return -1;
	grad = json_object_get(node, "grad_of");
	if (grad != NULL && !json_is_null(grad)) {
		if (resolve_ref(r, who, "grad_of", grad, k, &dep))
			return -1;
		r->g->nodes[k].grad_of = dep;
	}
	return 0;
}

static int read_format1(struct reader *r, json_t *root)
{
	json_t *nodes = json_object_get(root, "nodes");
	json_t *fmt = json_object_get(root, "format");
	json_t *ver = json_object_get(root, "version");

	if (fmt && (!json_is_string(fmt) ||
		    strcmp(json_string_value(fmt), "checkmate-graph") != 0))
		return reader_fail(r, "'format' is not \"checkmate-graph\"");
	if (ver && (!json_is_number(ver) || json_number_value(ver) != 1))
		return reader_fail(r, "unsupported version (this checkmate reads version 1)");
	if (nodes == NULL)
		return reader_fail(r, "missing 'nodes'");
	if (!json_is_array(nodes))
		return reader_fail(r, "'nodes' must be an array");
	if (json_array_size(nodes) == 0)
		return reader_fail(r, "graph has no nodes");
	if (json_array_size(nodes) > GRAPH_MAX_NODES)
		return reader_fail(r, "too many nodes (limit %d)", GRAPH_MAX_NODES);
	if (reader_globals(r, root, NULL) || reader_title(r, root))
		return -1;
	for (size_t k = 0; k < json_array_size(nodes); k++)
		if (read_node(r, json_array_get(nodes, k), (int)k))
			return -1;
	return 0;
}

/* The file stem: "dir/vgg16.json" -> "vgg16". */
static char *stem(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;
	char *s;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".json") == 0)
		len -= 5;
	s = malloc(len + 1);
	if (s) {
		memcpy(s, base, len);
		s[len] = '\0';
	}
	return s;
}

/* Builds a graph from a parsed document. */
static struct graph *from_json(json_t *root, const char *label, const char *id,
			       struct cm_error *err)
{
	struct reader r = { label, err, NULL };
	int rc;

	if (!json_is_object(root)) {
		reader_fail(&r, "expected a JSON object at the top level");
		return NULL;
	}
	r.g = graph_new(id);
	if (r.g == NULL) {
		reader_fail(&r, "out of memory");
		return NULL;
	}
	if (json_object_get(root, "links") != NULL)
		rc = reader_nodelink(&r, root);
	else
		rc = read_format1(&r, root);
	if (rc == 0 && graph_finish(r.g, err))
		rc = reader_fail_builder(&r);
	if (rc) {
		graph_free(r.g);
		return NULL;
	}
	return r.g;
}

static const size_t json_flags = JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL;

static struct graph *parse_failed(const char *label, const json_error_t *je,
				  struct cm_error *err)
{
	if (je->line > 0)
		cm_errorf(err, "%s:%d:%d: %s", label, je->line, je->column, je->text);
	else
		cm_errorf(err, "%s: %s", label, je->text);
	return NULL;
}

/* The graph of a parsed document (root, or NULL with je's error), which
 * it releases. */
static struct graph *from_document(json_t *root, const json_error_t *je, const char *label,
				   struct cm_error *err)
{
	struct graph *g;
	char *id;

	if (root == NULL)
		return parse_failed(label, je, err);
	id = stem(label);
	g = id ? from_json(root, label, id, err) : NULL;
	if (id == NULL)
		cm_errorf(err, "out of memory");
	free(id);
	json_decref(root);
	return g;
}

struct graph *graph_read_string(const char *json, const char *label,
				struct cm_error *err)
{
	json_error_t je;
	json_t *root = json_loads(json, json_flags, &je);

	return from_document(root, &je, label, err);
}

struct graph *graph_read_stream(FILE *f, const char *label, struct cm_error *err)
{
	json_error_t je;
	json_t *root = json_loadf(f, json_flags, &je);

	return from_document(root, &je, label, err);
}

struct graph *graph_read_file(const char *path, struct cm_error *err)
{
	struct graph *g;
	struct stat st;
	FILE *f;

	if (strcmp(path, "-") == 0) {
		/* No file stem to name it by: its own name, when it has one. */
		char *id;

		g = graph_read_stream(stdin, "stdin", err);
		if (g && g->title && (id = strdup(g->title)) != NULL) {
			free(g->id);
			g->id = id;
		}
		return g;
	}
	f = fopen(path, "rb");
	if (f == NULL) {
		cm_errorf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		cm_errorf(err, "%s: is a directory, not a graph file", path);
		return NULL;
	}
	g = graph_read_stream(f, path, err);
	fclose(f);
	return g;
}

struct graph *graph_load(const char *arg, struct cm_error *err)
{
	if (strncmp(arg, "linear:", 7) == 0) {
		char *end;
		long n;

		errno = 0;
		n = strtol(arg + 7, &end, 10);
		if (arg[7] < '0' || arg[7] > '9' || *end != '\0' || errno ||
		    n > GRAPH_MAX_NODES) {
			cm_errorf(err, "%s: expected linear:N with N a whole number of layers",
				  arg);
			return NULL;
		}
		return graph_linear((int)n, err);
	}
	return graph_read_file(arg, err);
}

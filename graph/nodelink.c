/* networkx node-link JSON: "nodes" with an "id" (or "name") and cost_cpu /
 * cost_ram / backward, "links" with source and target, and an optional
 * "graph": {"order": [...]} giving the execution order. */
#include "reader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Renders an id (string or whole number) into buf; -1 when it is neither. */
static int render_id(json_t *v, char *buf, size_t len)
{
	if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
		return 0;
	}
	if (json_is_number(v) && json_number_value(v) == floor(json_number_value(v)) &&
	    fabs(json_number_value(v)) < 1e15) {
		snprintf(buf, len, "%.0f", json_number_value(v));
		return 0;
	}
	return -1;
}

static json_t *node_id(json_t *node)
{
	json_t *id = json_object_get(node, "id");

	return id ? id : json_object_get(node, "name");
}

/* Looks an id up in the index of ids; -1 when absent or not an id. */
static int find_id(const struct graph *ids, json_t *v)
{
	char buf[256];

	if (render_id(v, buf, sizeof(buf)))
		return -1;
	return graph_find(ids, buf);
}

static json_t *first_key(json_t *obj, const char *a, const char *b, const char **used)
{
	json_t *v = json_object_get(obj, a);

	*used = v ? a : b;
	return v ? v : json_object_get(obj, b);
}

/* Adds node fi (file position) of the document to the graph. */
static int add_node(struct reader *r, json_t *node, const struct graph *ids, int fi)
{
	char who[300];
	const char *name = ids->nodes[fi].name, *ck, *mk;
	json_t *nm = json_object_get(node, "name"), *c, *m;
	double cost;
	uint64_t mem;
	int bw;

	if (json_is_string(nm))
		name = json_string_value(nm);
	snprintf(who, sizeof(who), "node '%s': ", name);
	c = first_key(node, "cost_cpu", "cost", &ck);
	m = first_key(node, "cost_ram", "memory", &mk);
	if (c == NULL)
		return reader_fail(r, "%smissing 'cost_cpu' (or 'cost')", who);
	if (m == NULL)
		return reader_fail(r, "%smissing 'cost_ram' (or 'memory')", who);
	if (reader_cost(r, who, ck, c, &cost) ||
	    reader_bytes(r, who, mk, m, GRAPH_MAX_MEMORY, &mem) ||
	    reader_bool(r, who, "backward", json_object_get(node, "backward"), &bw))
		return -1;
	if (graph_add_node(r->g, name, cost, mem, bw, r->err) < 0)
		return reader_fail_builder(r);
	return 0;
}

/* The execution order as file positions: graph.order when given (which
 * must be a permutation that respects the links), else the node list,
 * sorted topologically (Kahn, first-come) when it is not already. */
static int make_order(struct reader *r, json_t *gattr, const struct graph *ids,
		      const int *src, const int *dst, int m, int *order)
{
	json_t *ord = json_object_get(gattr, "order");
	int n = ids->n, rc = -1, head = 0, tail = 0;
	int *pos = malloc((size_t)n * sizeof(int)), *indeg = NULL, *off = NULL, *out = NULL;

	if (pos == NULL)
		goto oom;
	for (int i = 0; i < n; i++)
		pos[i] = -1;
	if (ord != NULL) {
		if (!json_is_array(ord) || (int)json_array_size(ord) != n) {
			rc = reader_fail(r, "'graph.order' must list each of the %d nodes once", n);
			goto out;
		}
		for (int p = 0; p < n; p++) {
			int fi = find_id(ids, json_array_get(ord, (size_t)p));

			if (fi < 0 || pos[fi] >= 0) {
				rc = reader_fail(r, "'graph.order' entry %d is %s", p,
						 fi < 0 ? "not a node id" : "a repeated id");
				goto out;
			}
			pos[fi] = p;
			order[p] = fi;
		}
		for (int e = 0; e < m; e++)
			if (pos[src[e]] >= pos[dst[e]]) {
				rc = reader_fail(r, "node '%s': 'graph.order' puts it before its input '%s'",
						 ids->nodes[dst[e]].name, ids->nodes[src[e]].name);
				goto out;
			}
		rc = 0;
		goto out;
	}
	indeg = calloc((size_t)n, sizeof(int));
	off = calloc((size_t)n + 1, sizeof(int));
	out = malloc(((size_t)m + 1) * sizeof(int));
	if (!indeg || !off || !out)
		goto oom;
	for (int e = 0; e < m; e++) {
		indeg[dst[e]]++;
		off[src[e] + 1]++;
	}
	for (int i = 0; i < n; i++)
		off[i + 1] += off[i];
	for (int i = 0; i < n; i++)
		pos[i] = off[i];
	for (int e = 0; e < m; e++)
		out[pos[src[e]]++] = dst[e];
	for (int i = 0; i < n; i++)
		if (indeg[i] == 0)
			order[tail++] = i;
	while (head < tail) {
		int v = order[head++];

		for (int e = off[v]; e < off[v + 1]; e++)
			if (--indeg[out[e]] == 0)
				order[tail++] = out[e];
	}
	if (tail < n) {
		for (int i = 0; i < n; i++)
			if (indeg[i] > 0) {
				rc = reader_fail(r, "node '%s': the links form a cycle through it",
						 ids->nodes[i].name);
				goto out;
			}
	}
	rc = 0;
	goto out;
oom:
	rc = reader_fail(r, "out of memory");
out:
	free(pos);
	free(indeg);
	free(off);
	free(out);
	return rc;
}

int reader_nodelink(struct reader *r, json_t *root)
{
	json_t *nodes = json_object_get(root, "nodes");
	json_t *links = json_object_get(root, "links");
	json_t *gattr = json_object_get(root, "graph");
	struct graph *ids = graph_new("ids");
	int *src = NULL, *dst = NULL, *order = NULL, *pos = NULL, *loff = NULL, *lin = NULL;
	int n, m, rc = -1;
	char buf[256];

	if (ids == NULL)
		goto oom;
	if (!json_is_array(nodes)) {
		reader_fail(r, "'nodes' must be an array");
		goto out;
	}
	if (!json_is_array(links)) {
		reader_fail(r, "'links' must be an array");
		goto out;
	}
	if (json_array_size(nodes) == 0) {
		reader_fail(r, "graph has no nodes");
		goto out;
	}
	if (json_array_size(nodes) > GRAPH_MAX_NODES || json_array_size(links) > INT32_MAX / 2) {
		reader_fail(r, "graph too large");
		goto out;
	}
	if (gattr != NULL && !json_is_object(gattr)) {
		reader_fail(r, "'graph' must be an object");
		goto out;
	}
	n = (int)json_array_size(nodes);
	m = (int)json_array_size(links);
	for (int i = 0; i < n; i++) {
		json_t *node = json_array_get(nodes, (size_t)i);

		if (!json_is_object(node)) {
			reader_fail(r, "node %d: expected an object", i);
			goto out;
		}
		if (render_id(node_id(node), buf, sizeof(buf))) {
			reader_fail(r, "node %d: missing 'id' (a string or whole number)", i);
			goto out;
		}
		if (graph_add_node(ids, buf, 0, 0, 0, r->err) < 0) {
			reader_fail(r, "node %d: duplicate id '%s'", i, buf);
			goto out;
		}
	}
	src = malloc(((size_t)m + 1) * sizeof(int));
	dst = malloc(((size_t)m + 1) * sizeof(int));
	order = malloc((size_t)n * sizeof(int));
	pos = malloc((size_t)n * sizeof(int));
	loff = calloc((size_t)n + 1, sizeof(int));
	lin = malloc(((size_t)m + 1) * sizeof(int));
	if (!src || !dst || !order || !pos || !loff || !lin)
		goto oom;
	for (int e = 0; e < m; e++) {
		json_t *l = json_array_get(links, (size_t)e);
		json_t *s = json_object_get(l, "source"), *t = json_object_get(l, "target");

		if (!json_is_object(l) || s == NULL || t == NULL) {
			reader_fail(r, "link %d: expected an object with 'source' and 'target'", e);
			goto out;
		}
		src[e] = find_id(ids, s);
		dst[e] = find_id(ids, t);
		if (src[e] < 0 || dst[e] < 0) {
			json_t *bad = src[e] < 0 ? s : t;

			if (render_id(bad, buf, sizeof(buf)))
				snprintf(buf, sizeof(buf), "?");
			rc = reader_fail(r, "link %d: %s '%s' is not a node id", e,
					 src[e] < 0 ? "source" : "target", buf);
			goto out;
		}
		if (src[e] == dst[e]) {
			reader_fail(r, "node '%s': links to itself (a cycle)", ids->nodes[src[e]].name);
			goto out;
		}
		loff[dst[e] + 1]++;
	}
	if (make_order(r, gattr, ids, src, dst, m, order))
		goto out;
	/* Links grouped by target, each group in file order. */
	for (int i = 0; i < n; i++)
		loff[i + 1] += loff[i];
	for (int i = 0; i < n; i++)
		pos[i] = loff[i];
	for (int e = 0; e < m; e++)
		lin[pos[dst[e]]++] = e;
	for (int p = 0; p < n; p++)
		pos[order[p]] = p;
	if (reader_globals(r, root, gattr) || reader_title(r, gattr ? gattr : root))
		goto out;
	for (int p = 0; p < n; p++) {
		int fi = order[p];

		if (add_node(r, json_array_get(nodes, (size_t)fi), ids, fi))
			goto out;
		for (int j = loff[fi]; j < loff[fi + 1]; j++)
			if (graph_add_dep(r->g, pos[src[lin[j]]], r->err)) {
				reader_fail_builder(r);
				goto out;
			}
	}
	rc = 0;
	goto out;
oom:
	rc = reader_fail(r, "out of memory");
out:
	graph_free(ids);
	free(src);
	free(dst);
	free(order);
	free(pos);
	free(loff);
	free(lin);
	return rc;
}

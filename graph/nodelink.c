/* networkx node-link JSON: "nodes" with an "id" (or "name") and cost_cpu /
 * cost_ram / backward, "links" with source and target, and an optional
 * "graph": {"order": [...]} giving the execution order. */
#include "reader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An id as text: a string id itself (whatever its length), a whole
 * number written into buf; NULL when it is neither. */
static const char *id_text(json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_number(v) && json_number_value(v) == floor(json_number_value(v)) &&
	    fabs(json_number_value(v)) < 1e15) {
		snprintf(buf, len, "%.0f", json_number_value(v));
		return buf;
	}
	return NULL;
}

static json_t *node_id(json_t *node)
{
	json_t *id = json_object_get(node, "id");

	return id ? id : json_object_get(node, "name");
}

/* Looks an id up in the index of ids; -1 when absent or not an id. */
static int find_id(const struct graph *ids, json_t *v)
{
	char buf[32];
	const char *id = id_text(v, buf, sizeof(buf));

	return id ? graph_find(ids, id) : -1;
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
	cm_format(who, sizeof(who), "node '%s': ", name);
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

/* The document's parts and what the reader works out from them before it
 * builds the graph. Nodes go by their position in the file. */
struct nodelink {
	json_t *nodes, *links, *gattr;
	struct graph *ids; /* the ids in file order, to look the links' ends up */
	int n, m;          /* nodes and links */
	int *src, *dst;    /* each link's ends */
	int *order;        /* the execution order (see make_order) */
	int *pos;          /* each node's place in order */
	int *loff, *lin;   /* the links into node i: lin[loff[i]] to lin[loff[i + 1] - 1] */
};

/* The checks on the document's outline, before any node is read. */
static int check_outline(struct reader *r, const struct nodelink *nl)
{
	if (!json_is_array(nl->nodes))
		return reader_fail(r, "'nodes' must be an array");
	if (!json_is_array(nl->links))
		return reader_fail(r, "'links' must be an array");
	if (json_array_size(nl->nodes) == 0)
		return reader_fail(r, "graph has no nodes");
	if (json_array_size(nl->nodes) > GRAPH_MAX_NODES ||
	    json_array_size(nl->links) > INT32_MAX / 2)
		return reader_fail(r, "graph too large");
	if (nl->gattr != NULL && !json_is_object(nl->gattr))
		return reader_fail(r, "'graph' must be an object");
	return 0;
}

/* Every node's id into nl->ids, which also rejects a repeated one. */
static int index_ids(struct reader *r, struct nodelink *nl)
{
	char buf[32];
	const char *id;

	for (int i = 0; i < nl->n; i++) {
		json_t *node = json_array_get(nl->nodes, (size_t)i);

		if (!json_is_object(node))
			return reader_fail(r, "node %d: expected an object", i);
		if ((id = id_text(node_id(node), buf, sizeof(buf))) == NULL)
			return reader_fail(r, "node %d: missing 'id' (a string or whole number)", i);
		if (graph_add_node(nl->ids, id, 0, 0, 0, r->err) < 0)
			return reader_fail(r, "node %d: duplicate id '%s'", i, id);
	}
	return 0;
}

/* The arrays sized by n and m; -1 when memory runs out. */
static int alloc_arrays(struct nodelink *nl)
{
	nl->src = malloc(((size_t)nl->m + 1) * sizeof(int));
	nl->dst = malloc(((size_t)nl->m + 1) * sizeof(int));
	nl->order = malloc((size_t)nl->n * sizeof(int));
	nl->pos = malloc((size_t)nl->n * sizeof(int));
	nl->loff = calloc((size_t)nl->n + 1, sizeof(int));
	nl->lin = malloc(((size_t)nl->m + 1) * sizeof(int));
	return nl->src && nl->dst && nl->order && nl->pos && nl->loff && nl->lin ? 0 : -1;
}

/* Each link's ends into src and dst, counting the links into each node in
 * loff[node + 1]. */
static int read_links(struct reader *r, struct nodelink *nl)
{
	int *src = nl->src, *dst = nl->dst;
	char buf[32];

	for (int e = 0; e < nl->m; e++) {
		json_t *l = json_array_get(nl->links, (size_t)e);
		json_t *s = json_object_get(l, "source"), *t = json_object_get(l, "target");

		if (!json_is_object(l) || s == NULL || t == NULL)
			return reader_fail(r, "link %d: expected an object with 'source' and 'target'",
					   e);
		src[e] = find_id(nl->ids, s);
		dst[e] = find_id(nl->ids, t);
		if (src[e] < 0 || dst[e] < 0) {
			const char *bad = id_text(src[e] < 0 ? s : t, buf, sizeof(buf));

			return reader_fail(r, "link %d: %s '%s' is not a node id", e,
					   src[e] < 0 ? "source" : "target", bad ? bad : "?");
		}
		if (src[e] == dst[e])
			return reader_fail(r, "node '%s': links to itself (a cycle)",
					   nl->ids->nodes[src[e]].name);
		nl->loff[dst[e] + 1]++;
	}
	return 0;
}

/* Links grouped by target, each group in file order, and each node's place
 * in the execution order. */
static void group_links(struct nodelink *nl)
{
	int n = nl->n, *loff = nl->loff, *pos = nl->pos;

	for (int i = 0; i < n; i++)
		loff[i + 1] += loff[i];
	/* pos serves first as each group's fill point. */
	for (int i = 0; i < n; i++)
		pos[i] = loff[i];
	for (int e = 0; e < nl->m; e++)
		nl->lin[pos[nl->dst[e]]++] = e;
	for (int p = 0; p < n; p++)
		pos[nl->order[p]] = p;
}

/* The nodes into r->g in execution order, each with the links into it. */
static int add_nodes(struct reader *r, const struct nodelink *nl)
{
	for (int p = 0; p < nl->n; p++) {
		int fi = nl->order[p];

		if (add_node(r, json_array_get(nl->nodes, (size_t)fi), nl->ids, fi))
			return -1;
		for (int j = nl->loff[fi]; j < nl->loff[fi + 1]; j++)
			if (graph_add_dep(r->g, nl->pos[nl->src[nl->lin[j]]], r->err))
				return reader_fail_builder(r);
	}
	return 0;
}

int reader_nodelink(struct reader *r, json_t *root)
{
	struct nodelink nl = {
		.nodes = json_object_get(root, "nodes"),
		.links = json_object_get(root, "links"),
		.gattr = json_object_get(root, "graph"),
		.ids = graph_new("ids"),
	};
	int rc = -1;

	if (nl.ids == NULL)
		goto oom;
	if (check_outline(r, &nl))
		goto out;
	nl.n = (int)json_array_size(nl.nodes);
	nl.m = (int)json_array_size(nl.links);
	if (index_ids(r, &nl))
		goto out;
	if (alloc_arrays(&nl))
		goto oom;
	if (read_links(r, &nl) || make_order(r, nl.gattr, nl.ids, nl.src, nl.dst, nl.m, nl.order))
		goto out;
	group_links(&nl);
	if (reader_globals(r, root, nl.gattr) || reader_title(r, nl.gattr ? nl.gattr : root) ||
	    add_nodes(r, &nl))
		goto out;
	rc = 0;
	goto out;
oom:
	rc = reader_fail(r, "out of memory");
out:
	graph_free(nl.ids);
	free(nl.src);
	free(nl.dst);
	free(nl.order);
	free(nl.pos);
	free(nl.loff);
	free(nl.lin);
	return rc;
}

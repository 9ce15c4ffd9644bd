/* Graph reader, built-in examples and derived views. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/read.h"
#include "../common/num.h"
#include "tap.h"

static const char *benchmarks[] = {
	"vgg16", "vgg19", "mobilenet", "resnet50", "fcn8", "segnet", "unet",
	"random_layered_n100", "random_layered_n250", "random_layered_n500",
	"random_layered_n1000",
};

static void test_linear(void)
{
	struct cm_error err;
	struct graph *g = graph_linear(4, &err);
	int *ap = NULL, nap;

	if (!ok(g != NULL, "linear:4 builds"))
		return;
	ok(g->n == 9 && g->n_edges == 12, "linear:4 has 9 nodes and 12 edges (got %d, %d)",
	   g->n, g->n_edges);
	ok(strcmp(g->nodes[4].name, "loss") == 0 && strcmp(g->nodes[5].name, "b3") == 0 &&
	   strcmp(g->nodes[8].name, "b0") == 0, "linear:4 order f0..f3, loss, b3..b0");
	ok(graph_ndeps(g, 5) == 2 && g->deps[g->dep_off[5]] == 3 &&
	   g->deps[g->dep_off[5] + 1] == 4, "b3 reads f3 and loss");
	ok(graph_ndeps(g, 8) == 2 && g->deps[g->dep_off[8]] == 0 &&
	   g->deps[g->dep_off[8] + 1] == 7, "b0 reads f0 and b1");
	ok(g->nodes[8].grad_of == 0 && g->nodes[8].backward && !g->nodes[0].backward,
	   "b0 is the backward gradient of f0");
	ok(graph_nusers(g, 0) == 2 && g->users[g->user_off[0]] == 1 &&
	   g->users[g->user_off[0] + 1] == 8, "users of f0 are f1 and b0, ascending");
	ok(num_eq(graph_total_cost(g), 9), "checkpoint-all cost of linear:4 is 9");
	ok(graph_peak_all(g) == 6, "checkpoint-all peak of linear:4 is 6 (got %llu)",
	   (unsigned long long)graph_peak_all(g));
	{
		static const uint64_t want[9] = { 1, 2, 3, 4, 5, 6, 5, 4, 3 };
		uint64_t live[9];
		int same = graph_profile_all(g, live) == 6;

		for (int k = 0; k < 9; k++)
			same &= live[k] == want[k];
		ok(same, "checkpoint-all memory after each compute of linear:4: 1 2 3 4 5 6 5 4 3");
	}
	ok(graph_lower_bound(g) == 3, "lower bound of linear:4 is 3");
	ok(graph_nforward(g) == 4, "linear:4 has 4 forward nodes");
	nap = graph_articulation_points(g, &ap, &err);
	ok(nap == 4 && ap[0] == 0 && ap[3] == 3,
	   "every node of a forward chain is an articulation point, ends included (got %d)", nap);
	free(ap);
	graph_free(g);
	ok(graph_linear(0, &err) == NULL && strstr(err.msg, "between 1 and"),
	   "linear:0 is refused: %s", err.msg);
}

static struct graph *parse(const char *json, struct cm_error *err)
{
	return graph_read_string(json, "t.json", err);
}

static void test_format1(void)
{
	struct cm_error err;
	struct graph *g = parse(
		"{\"format\": \"checkmate-graph\", \"version\": 1, \"fixed_memory\": 100,"
		" \"batch_size\": 8, \"name\": \"tiny\", \"extra\": [1],"
		" \"nodes\": ["
		"  {\"name\": \"a\", \"cost\": 1.5, \"memory\": 10},"
		"  {\"name\": \"b\", \"cost\": 2, \"memory\": 20, \"deps\": [\"a\"]},"
		"  {\"name\": \"c\", \"cost\": 0, \"memory\": 5, \"deps\": [0, \"b\"],"
		"   \"backward\": true, \"grad_of\": \"b\"}]}", &err);

	if (!ok(g != NULL, "format 1 graph reads (%s)", g ? "" : err.msg))
		return;
	ok(g->n == 3 && g->n_edges == 3 && g->fixed_memory == 100 && g->batch_size == 8,
	   "nodes, edges, fixed memory and batch size as written");
	ok(strcmp(g->id, "t") == 0 && strcmp(g->title, "tiny") == 0,
	   "id is the file stem, title the name");
	ok(num_eq(g->nodes[0].cost, 1.5) && g->nodes[2].backward && g->nodes[2].grad_of == 1,
	   "cost, backward and grad_of read");
	ok(graph_lower_bound(g) == 100 + 35, "lower bound counts fixed memory and inputs");
	ok(graph_peak_all(g) == 135, "checkpoint-all peak 135 (got %llu)",
	   (unsigned long long)graph_peak_all(g));
	ok(graph_find(g, "b") == 1 && graph_find(g, "zz") == -1, "names are indexed");
	graph_free(g);
}

/* Ids longer than any buffer stay whole: two that differ only at the end
 * are two nodes. */
static void test_nodelink_long_ids(void)
{
	enum { LEN = 3000 };
	char *a = malloc(LEN + 1), *b = malloc(LEN + 1), *json = malloc(4 * LEN + 200);
	struct cm_error err;
	struct graph *g;

	memset(a, 'a', LEN);
	memcpy(b, a, LEN);
	a[LEN] = b[LEN] = '\0';
	b[LEN - 1] = 'b';
	snprintf(json, 4 * LEN + 200,
		 "{\"nodes\": [{\"id\": \"%s\", \"cost\": 1, \"memory\": 1},"
		 " {\"id\": \"%s\", \"cost\": 1, \"memory\": 1}],"
		 " \"links\": [{\"source\": \"%s\", \"target\": \"%s\"}]}", b, a, b, a);
	g = parse(json, &err);
	ok(g && g->n == 2 && strcmp(g->nodes[0].name, b) == 0 && strcmp(g->nodes[1].name, a) == 0 &&
	   graph_ndeps(g, 1) == 1, "node-link ids of %d bytes that differ at the end are two nodes (%s)",
	   LEN, g ? "ok" : err.msg);
	graph_free(g);
	free(a);
	free(b);
	free(json);
}

static void test_nodelink(void)
{
	struct cm_error err;
	/* Listed out of order; the links decide. */
	struct graph *g = parse(
		"{\"directed\": true, \"graph\": {\"name\": \"nl\"},"
		" \"nodes\": [{\"id\": 2, \"cost_cpu\": 3, \"cost_ram\": 30},"
		"            {\"id\": 0, \"cost_cpu\": 1, \"cost_ram\": 10, \"name\": \"in\"},"
		"            {\"id\": 1, \"cost_cpu\": 2, \"cost_ram\": 20, \"backward\": true}],"
		" \"links\": [{\"source\": 1, \"target\": 2}, {\"source\": 0, \"target\": 1},"
		"            {\"source\": 0, \"target\": 2}]}", &err);

	if (!ok(g != NULL, "node-link graph reads (%s)", g ? "" : err.msg))
		return;
	ok(g->n == 3 && strcmp(g->nodes[0].name, "in") == 0 &&
	   strcmp(g->nodes[1].name, "1") == 0 && strcmp(g->nodes[2].name, "2") == 0,
	   "node-link nodes sorted topologically, named by name or id");
	ok(graph_ndeps(g, 2) == 2 && g->deps[g->dep_off[2]] == 1 &&
	   g->deps[g->dep_off[2] + 1] == 0, "deps of a node-link node in link order");
	ok(g->nodes[1].backward && num_eq(g->nodes[2].cost, 3) && g->nodes[2].memory == 30,
	   "cost_cpu, cost_ram and backward read");
	graph_free(g);

	g = parse("{\"graph\": {\"order\": [\"x\", \"z\", \"y\"]},"
		  " \"nodes\": [{\"id\": \"x\", \"cost\": 1, \"memory\": 1},"
		  "  {\"id\": \"y\", \"cost\": 1, \"memory\": 1},"
		  "  {\"id\": \"z\", \"cost\": 1, \"memory\": 1}],"
		  " \"links\": [{\"source\": \"x\", \"target\": \"y\"}]}", &err);
	ok(g && strcmp(g->nodes[1].name, "z") == 0 && strcmp(g->nodes[2].name, "y") == 0,
	   "graph.order sets the execution order");
	graph_free(g);
	test_nodelink_long_ids();
}

static void test_benchmarks(void)
{
	char path[512];

	for (size_t i = 0; i < sizeof(benchmarks) / sizeof(benchmarks[0]); i++) {
		struct cm_error err;
		struct graph *g;
		int *ap = NULL, nap;

		if (!tap_graph(path, sizeof(path), "%s.json", benchmarks[i]))
			break;
		g = graph_read_file(path, &err);
		if (!ok(g != NULL, "%s reads (%s)", benchmarks[i], g ? "ok" : err.msg))
			continue;
		ok(graph_lower_bound(g) <= graph_peak_all(g),
		   "%s: lower bound <= checkpoint-all peak", benchmarks[i]);
		nap = graph_articulation_points(g, &ap, &err);
		ok(nap >= 1 && nap <= graph_nforward(g),
		   "%s: %d articulation points among %d forward nodes", benchmarks[i], nap,
		   graph_nforward(g));
		free(ap);
		graph_free(g);
	}
}

/* A diamond a -> (b, c) -> d: b and c are not cut vertices, a and d are. */
static void test_articulation(void)
{
	struct cm_error err;
	struct graph *g = parse(
		"{\"nodes\": [{\"name\": \"a\", \"cost\": 1, \"memory\": 1},"
		" {\"name\": \"b\", \"cost\": 1, \"memory\": 1, \"deps\": [\"a\"]},"
		" {\"name\": \"c\", \"cost\": 1, \"memory\": 1, \"deps\": [\"a\"]},"
		" {\"name\": \"d\", \"cost\": 1, \"memory\": 1, \"deps\": [\"b\", \"c\"]},"
		" {\"name\": \"e\", \"cost\": 1, \"memory\": 1, \"deps\": [\"d\"]},"
		" {\"name\": \"de\", \"cost\": 1, \"memory\": 1, \"deps\": [\"e\", \"a\"],"
		"  \"backward\": true}]}", &err);
	int *ap = NULL, nap;

	if (!ok(g != NULL, "diamond reads"))
		return;
	nap = graph_articulation_points(g, &ap, &err);
	ok(nap == 3 && ap[0] == 0 && ap[1] == 3 && ap[2] == 4,
	   "diamond: articulation points a, d, e; backward edges ignored (got %d)", nap);
	free(ap);
	graph_free(g);
}

int main(void)
{
	test_linear();
	test_format1();
	test_nodelink();
	test_articulation();
	test_benchmarks();
	return tap_done();
}

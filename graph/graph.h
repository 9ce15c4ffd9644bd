/* The data-flow graph: nodes in execution (topological) order, each with a
 * cost and an output size, and the derived views the strategies need. */
#ifndef CM_GRAPH_H
#define CM_GRAPH_H

#include <stdint.h>

#include "../common/error.h"

/* Largest memory figure we accept: every byte count below 2^53 is exact in a
 * double, which keeps JSON numbers and solver coefficients honest. */
#define GRAPH_MAX_MEMORY ((uint64_t)1 << 53)
/* Largest total of all sizes plus fixed memory, so that sums never wrap. */
#define GRAPH_MAX_TOTAL ((uint64_t)1 << 62)
/* Largest node count; indices are ints. */
#define GRAPH_MAX_NODES 50000000

struct graph_node {
	char *name;      /* unique, owned by the graph */
	double cost;     /* finite, >= 0, any unit */
	uint64_t memory; /* bytes of the node's output */
	int backward;    /* 1 for the loss and gradient nodes */
	int grad_of;     /* index of the forward node this is the gradient of, or -1 */
	int materialized; /* 1: a forward value that takes memory where a program
			   * computes it again (a partition's backward; docs/formats.md) */
	int unsaveable;  /* 1: a forward value a partition never keeps: the
			  * backward computes it again (docs/formats.md) */
	double save_cost; /* finite, >= 0: what a partition pays for keeping this
			   * forward value for the backward (its write and read) */
	uint64_t workspace; /* bytes the node's op takes while it runs besides
			     * its output, freed when it ends (a partition's
			     * backward node; docs/formats.md) */
};

/* What a node's cost measures (docs/formats.md, Graph file: cost_unit). */
enum graph_cost_unit {
	GRAPH_COST_NONE,  /* no unit given */
	GRAPH_COST_FLOPS, /* floating-point operations */
	GRAPH_COST_S,     /* seconds */
	GRAPH_COST_MS,    /* milliseconds */
	GRAPH_COST_US,    /* microseconds */
};

struct graph {
	char *id;              /* short label for plans and CSV rows: file stem or built-in name */
	char *title;           /* the file's own "name", or NULL */
	uint64_t fixed_memory; /* bytes always resident */
	uint64_t batch_size;   /* the batch the memory figures are for */
	int cost_unit;         /* enum graph_cost_unit */
	int n;                 /* node count */
	struct graph_node *nodes;
	int *dep_off;          /* deps of k: deps[dep_off[k] .. dep_off[k + 1]) in file order */
	int *deps;
	int *user_off;         /* users of k, ascending: users[user_off[k] .. user_off[k + 1]) */
	int *users;
	int n_edges;

	/* Builder state, private to graph.c. */
	int cap_nodes, cap_deps;
	int *mark;             /* mark[i] == k + 1 when i is already a dep of node k */
	int *slots;            /* open-addressing name index: node index + 1, 0 empty */
	int n_slots;
};

/* An empty graph with batch_size 1; NULL when out of memory. Free with
 * graph_free. */
struct graph *graph_new(const char *id);
void graph_free(struct graph *g);

/* Appends a node after all others and returns its index, or -1 with err set
 * (duplicate or empty name, bad cost, too large). The name is copied. */
int graph_add_node(struct graph *g, const char *name, double cost,
		   uint64_t memory, int backward, struct cm_error *err);

/* Makes node dep an input of the node added last; -1 with err set when dep
 * is not an earlier node or is already an input. */
int graph_add_dep(struct graph *g, int dep, struct cm_error *err);

/* Builds the users view and checks totals; call once after the last node.
 * Returns 0, or -1 with err set. */
int graph_finish(struct graph *g, struct cm_error *err);

/* Seconds a unit of cost takes when the graph's cost_unit is a time (s,
 * ms, us); 0 when it is not (flops, or no unit). */
double graph_seconds_per_cost(const struct graph *g);

/* The cost_unit as the graph file spells it ("ms"), or NULL for none. */
const char *graph_cost_unit_name(const struct graph *g);

/* The enum graph_cost_unit value spelt name ("s", "ms", "us", "flops" or
 * "flop"), or -1 when name is none of them. */
int graph_cost_unit_parse(const char *name);

/* Index of the node called name, or -1. */
int graph_find(const struct graph *g, const char *name);

/* The built-in unit linear training graph of n layers (docs/formats.md,
 * GRAPH arguments and labels), or NULL with err set when n is out of
 * range. */
struct graph *graph_linear(int n, struct cm_error *err);

static inline int graph_ndeps(const struct graph *g, int k)
{
	return g->dep_off[k + 1] - g->dep_off[k];
}

static inline int graph_nusers(const struct graph *g, int k)
{
	return g->user_off[k + 1] - g->user_off[k];
}

/* A copy of g at another batch size: each node's memory and cost scaled by
 * batch / g->batch_size (memory rounded up to a whole byte), fixed memory
 * unchanged. NULL with err set when a size would pass the limits. */
struct graph *graph_at_batch(const struct graph *g, uint64_t batch, struct cm_error *err);

/* Sum of all node costs: the checkpoint-all cost, below which no plan goes. */
double graph_total_cost(const struct graph *g);

/* A lower bound on plan costs, computed in floating point by a solver, made
 * as tight as the costs allow: when every cost is a whole number, so is
 * every plan's, and the bound rounds up to one (after allowing for the
 * solver's relative error of about NUM_EPS). Otherwise bound itself. */
double graph_round_bound(const struct graph *g, double bound);

/* fixed_memory + max over k of (memory[k] + memory of k's deps): no plan fits
 * a smaller budget. */
uint64_t graph_lower_bound(const struct graph *g);

/* Fills last[i] with the index of i's last user, or i itself when unused.
 * last must hold g->n ints. */
void graph_last_use(const struct graph *g, int *last);

/* Peak memory of the checkpoint-all schedule (every node once, in order,
 * each value freed after its last use). */
uint64_t graph_peak_all(const struct graph *g);
/* The same schedule's peak, and the memory in use right after each
 * node's compute into live_at[k] (fixed memory included) when live_at is
 * not NULL (g->n values). */
uint64_t graph_profile_all(const struct graph *g, uint64_t *live_at);

/* 1 when the forward nodes form a chain in file order: each reads the
 * previous forward node and nothing else forward (the chain heuristics'
 * domain); 0 with *bad set to the first node that breaks it. */
int graph_forward_chain(const struct graph *g, int *bad);

/* Number of forward (non-backward) nodes. */
int graph_nforward(const struct graph *g);

/* Articulation points of the undirected graph of forward nodes and the edges
 * among them, with a virtual source joined to every forward node without
 * forward inputs and a virtual sink joined to every forward node without
 * forward users (so both ends of a chain count). Writes their indices in
 * ascending order to a malloc'd *out (caller frees) and returns the count,
 * or -1 with err set. */
int graph_articulation_points(const struct graph *g, int **out,
			      struct cm_error *err);

#endif

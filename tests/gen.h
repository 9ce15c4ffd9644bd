/* Test helpers: a xorshift generator with a fixed seed, random DAGs, plan
 * comparison. */
#ifndef CM_TEST_GEN_H
#define CM_TEST_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../plan/plan.h"
#include "../solvers/strategy.h"

static uint64_t gen_state = 0x9e3779b97f4a7c15ull;

__attribute__((unused))
static uint64_t gen_rnd(void)
{
	gen_state ^= gen_state << 13;
	gen_state ^= gen_state >> 7;
	gen_state ^= gen_state << 17;
	return gen_state;
}

/* A plan from "c f0, c f1, f f0": compute and free steps by node name
 * (and "o f0" an offload, "g f0" a fetch). */
__attribute__((unused))
static struct plan *gen_plan_of(const struct graph *g, const char *spec)
{
	struct plan *p = plan_new();
	char buf[512], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		plan_push(p, tok[0] == 'c' ? PLAN_COMPUTE : tok[0] == 'o' ? PLAN_OFFLOAD :
			  tok[0] == 'g' ? PLAN_FETCH : PLAN_FREE, graph_find(g, tok + 2), -1);
	}
	return p;
}

/* A random topological order of g (Kahn's algorithm, random ready node). */
__attribute__((unused))
static void gen_random_order(const struct graph *g, int *order)
{
	int *need = malloc((size_t)g->n * sizeof(int)), *ready = malloc((size_t)g->n * sizeof(int));
	int nready = 0;

	for (int v = 0; v < g->n; v++)
		if ((need[v] = graph_ndeps(g, v)) == 0)
			ready[nready++] = v;
	for (int k = 0; k < g->n; k++) {
		int at = (int)(gen_rnd() % (uint64_t)nready), v = ready[at];

		ready[at] = ready[--nready];
		order[k] = v;
		for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++)
			if (--need[g->users[e]] == 0)
				ready[nready++] = g->users[e];
	}
	free(need);
	free(ready);
}

/* n nodes; each earlier node is an input with probability edge_pct %; costs
 * in [cost_lo, cost_lo + 9], sizes in [1, max_mem]. */
__attribute__((unused))
static struct graph *gen_dag(int n, int edge_pct, int cost_lo, int max_mem)
{
	struct cm_error err;
	struct graph *g = graph_new("random");
	char name[16];

	for (int k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "v%d", k);
		graph_add_node(g, name, (double)(cost_lo + (int)(gen_rnd() % 10)),
			       1 + gen_rnd() % (uint64_t)max_mem, 0, &err);
		for (int i = 0; i < k; i++)
			if ((int)(gen_rnd() % 100) < edge_pct)
				graph_add_dep(g, i, &err);
	}
	graph_finish(g, &err);
	return g;
}

/* A training-like graph from forward DAG f: f's nodes, a loss reading every
 * sink, and a gradient of each forward node in reverse order reading the
 * node, its inputs and the gradients of its users (the loss for a sink). */
__attribute__((unused))
static struct graph *gen_training(const struct graph *f)
{
	struct cm_error err;
	struct graph *g = graph_new("random-train");
	int *grad = malloc((size_t)f->n * sizeof(int)), loss;
	char name[24];

	for (int k = 0; k < f->n; k++) {
		graph_add_node(g, f->nodes[k].name, f->nodes[k].cost, f->nodes[k].memory, 0, &err);
		for (int e = f->dep_off[k]; e < f->dep_off[k + 1]; e++)
			graph_add_dep(g, f->deps[e], &err);
	}
	loss = graph_add_node(g, "loss", 1, 1, 1, &err);
	for (int k = 0; k < f->n; k++)
		if (graph_nusers(f, k) == 0)
			graph_add_dep(g, k, &err);
	for (int k = f->n - 1; k >= 0; k--) {
		snprintf(name, sizeof(name), "g%d", k);
		grad[k] = graph_add_node(g, name, 2 * f->nodes[k].cost, f->nodes[k].memory, 1, &err);
		g->nodes[grad[k]].grad_of = k;
		graph_add_dep(g, k, &err);
		for (int e = f->dep_off[k]; e < f->dep_off[k + 1]; e++)
			graph_add_dep(g, f->deps[e], &err);
		for (int e = f->user_off[k]; e < f->user_off[k + 1]; e++)
			graph_add_dep(g, grad[f->users[e]], &err);
		if (graph_nusers(f, k) == 0)
			graph_add_dep(g, loss, &err);
	}
	graph_finish(g, &err);
	free(grad);
	return g;
}

/* A random training graph (gen_training) over nf forward nodes (costs 1-5,
 * sizes 1-4), each earlier one an input with probability pct %, at least
 * one input past the first; NULL when nf is outside 1..64. */
__attribute__((unused))
static struct graph *gen_random_training(int nf, int pct)
{
	struct cm_error err;
	struct graph *f = graph_new("train"), *g;
	char name[16];

	if (f == NULL || nf < 1 || nf > 64) {
		graph_free(f);
		return NULL;
	}
	for (int k = 0; k < nf; k++) {
		int any = 0;

		snprintf(name, sizeof(name), "f%d", k);
		graph_add_node(f, name, (double)(1 + gen_rnd() % 5), 1 + gen_rnd() % 4, 0, &err);
		for (int i = 0; i < k; i++)
			if ((int)(gen_rnd() % 100) < pct || (i == k - 1 && !any)) {
				graph_add_dep(f, i, &err);
				any = 1;
			}
	}
	g = graph_finish(f, &err) ? NULL : gen_training(f);
	graph_free(f);
	return g;
}

/* Solves rq (an ilp request) pinned to the stage model: started from the
 * checkpoint-all plan, a point of the model, instead of the best
 * heuristic's, which may lie outside the model and answer in its place
 * (docs/model.md, "What optimal covers"). As strategy_solve. */
__attribute__((unused))
static int gen_solve_model(const struct graph *g, struct solve_request *rq,
			   struct solve_outcome *o, struct cm_error *err)
{
	struct plan *all = plan_new();
	char param[64];
	int rc;

	baseline_checkpoint_all_point(g, 0, all, param, sizeof(param), err);
	rq->start = all;
	rc = strategy_solve(g, rq, o, err);
	rq->start = NULL;
	plan_free(all);
	return rc;
}

/* The optimum of the stage model (ilp, Cbc) at budget: -1 when there is
 * no plan, -2 when the solve fails or proves nothing. */
__attribute__((unused))
static double gen_ilp_optimum(const struct graph *g, uint64_t budget)
{
	struct solve_request rq = { .strategy = "ilp", .budget = budget, .solver = "cbc" };
	struct solve_outcome o;
	struct cm_error err;
	double cost = -2;

	if (gen_solve_model(g, &rq, &o, &err))
		return -2;
	if (o.status == STATUS_INFEASIBLE)
		cost = -1;
	else if (o.status == STATUS_OPTIMAL && o.sim.fits)
		cost = o.sim.cost;
	strategy_outcome_release(&o);
	return cost;
}

/* 1 when a and b have the same steps. */
__attribute__((unused))
static int same_steps(const struct plan *a, const struct plan *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (a->steps[i].op != b->steps[i].op || a->steps[i].node != b->steps[i].node)
			return 0;
	return 1;
}

#endif

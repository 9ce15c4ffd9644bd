/* Griewank & Walther's binomial checkpointing (revolve, 2000) on a chain:
 * s snapshot slots, the chain's first value always in one of them. The
 * schedule comes from the recursion
 *   T(1, s) = 0,  T(l, 1) = l (l - 1) / 2,
 *   T(l, s) = min over 0 < m < l of  m + T(l - m, s - 1) + T(m, s)
 * (advance m steps and snapshot there, reverse the right part with one
 * slot fewer, then the left part), whose value is the closed form of
 * docs/formats.md, Small facts for tests;
 * tests/t_baselines.c checks both. The snapshots become the stage matrix S;
 * recomputation is the cheapest R for it. */
#include "baseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plan/stages.h"

/* Longest chain and most snapshots we tabulate. */
#define REVOLVE_MAX_LEN 1000
#define REVOLVE_MAX_SNAPS 32

struct revolve {
	int l, s;
	long long *T; /* T[(l' * (s + 1)) + s'] */
	int *split;   /* the best m for (l', s') */
};

#define TAB(rv, a, b) ((size_t)(a) * (size_t)((rv)->s + 1) + (size_t)(b))

static int revolve_table(struct revolve *rv, int l, int s)
{
	size_t cells = ((size_t)l + 1) * ((size_t)s + 1);

	rv->l = l;
	rv->s = s;
	rv->T = malloc(cells * sizeof(long long));
	rv->split = calloc(cells, sizeof(int));
	if (rv->T == NULL || rv->split == NULL)
		return -1;
	for (int a = 1; a <= l; a++)
		for (int b = 1; b <= s; b++) {
			long long best = (long long)a * (a - 1) / 2;

			if (a > 1 && b > 1)
				for (int m = 1; m < a; m++) {
					long long v = m + rv->T[TAB(rv, a - m, b - 1)] + rv->T[TAB(rv, m, b)];

					if (v < best) {
						best = v;
						rv->split[TAB(rv, a, b)] = m;
					}
				}
			rv->T[TAB(rv, a, b)] = best;
		}
	return 0;
}

long long baseline_revolve_steps(int l, int s)
{
	struct revolve rv = { 0 };
	long long t = -1;

	if (l >= 1 && s >= 1 && l <= REVOLVE_MAX_LEN && s <= REVOLVE_MAX_SNAPS &&
	    revolve_table(&rv, l, s) == 0)
		t = rv.T[TAB(&rv, l, s)];
	free(rv.T);
	free(rv.split);
	return t;
}

/* Walking the schedule: where each snapshot starts. */
struct walk {
	const struct revolve *rv;
	const int *fw;   /* graph index of chain value i */
	const int *grad; /* the stage that first needs chain value i */
	const int *last; /* last use of each graph node */
	struct stages *st;
	int pending[REVOLVE_MAX_SNAPS + 1], npending; /* taken since the last gradient */
	int started;     /* a gradient has been reached: we are in the backward pass */
};

/* The gradient of chain value i: snapshots taken since the previous one
 * were taken in its stage (or, in the forward pass, in their own). */
static void gradient(struct walk *w, int i)
{
	for (int p = 0; p < w->npending; p++) {
		int j = w->pending[p], v = w->fw[j];

		stages_keep(w->st, v, w->started ? w->grad[i] : v, w->last[v]);
	}
	w->npending = 0;
	w->started = 1;
}

static void reverse(struct walk *w, int a, int l, int s)
{
	int m = w->rv->split[TAB(w->rv, l, s)];

	if (l == 1 || s == 1 || m == 0) {
		for (int i = a + l - 1; i >= a; i--)
			gradient(w, i);
		return;
	}
	w->pending[w->npending++] = a + m;
	reverse(w, a + m, l - m, s - 1);
	reverse(w, a, m, s);
}

int baseline_griewank_logn(const struct graph *g, int k, struct plan *p, char *param,
			   size_t len, struct cm_error *err)
{
	int n = g->n, l = 0, s = k + 1, rc = -1, bad;
	int *fw = malloc((size_t)n * sizeof(int)), *grad = malloc((size_t)n * sizeof(int));
	int *last = malloc((size_t)n * sizeof(int));
	struct revolve rv = { 0 };
	struct stages st = { 0 };
	struct walk w;

	if (fw == NULL || grad == NULL || last == NULL) {
		rc = cm_errorf(err, "out of memory");
		goto out;
	}
	graph_last_use(g, last);
	if (!graph_forward_chain(g, &bad)) {
		cm_errorf(err, "griewank-logn needs a chain of forward nodes whose gradients "
			  "come in reverse order; node '%s' breaks it", g->nodes[bad].name);
		rc = BASELINE_UNSUPPORTED;
		goto out;
	}
	for (int v = 0; v < n; v++)
		if (!g->nodes[v].backward) {
			/* Its adjoint step: the node that says it is v's gradient,
			 * else v's first backward reader. */
			grad[l] = -1;
			for (int e = g->user_off[v]; e < g->user_off[v + 1]; e++) {
				int u = g->users[e];

				if (g->nodes[u].backward && (grad[l] < 0 || g->nodes[u].grad_of == v))
					grad[l] = g->nodes[u].grad_of == v || grad[l] < 0 ? u : grad[l];
			}
			if (grad[l] < 0 || (l > 0 && grad[l] >= grad[l - 1])) {
				cm_errorf(err, "griewank-logn needs a chain of forward nodes whose "
					  "gradients come in reverse order; node '%s' breaks it",
					  g->nodes[v].name);
				rc = BASELINE_UNSUPPORTED;
				goto out;
			}
			fw[l++] = v;
		}
	if (l == 0 || l > REVOLVE_MAX_LEN) {
		cm_errorf(err, "griewank-logn needs a chain of 1 to %d forward nodes", REVOLVE_MAX_LEN);
		rc = BASELINE_UNSUPPORTED;
		goto out;
	}
	/* Points: s = 1, 2, ... until no value is recomputed (s = l - 1). */
	if (s > REVOLVE_MAX_SNAPS || (s > 1 && s > l - 1)) {
		rc = BASELINE_NO_POINT;
		goto out;
	}
	snprintf(param, len, "s=%d", s);
	if (revolve_table(&rv, l, s) || stages_init(&st, n, err)) {
		rc = cm_errorf(err, "out of memory");
		goto out;
	}
	/* Gradients and the loss stay until their last use; the chain's first
	 * value holds a slot throughout; during the forward pass each value
	 * stays until the next one is computed, and the last one until its
	 * gradient. */
	for (int v = 0; v < n; v++)
		if (g->nodes[v].backward)
			stages_keep(&st, v, v, last[v]);
	stages_keep(&st, fw[0], fw[0], last[fw[0]]);
	for (int i = 0; i + 1 < l; i++)
		stages_keep(&st, fw[i], fw[i], fw[i + 1]);
	stages_keep(&st, fw[l - 1], fw[l - 1], last[fw[l - 1]]);
	w = (struct walk){ .rv = &rv, .fw = fw, .grad = grad, .last = last, .st = &st };
	reverse(&w, 0, l, s);
	stages_drop_unused(g, &st);
	rc = plan_from_stages(g, &st, p, err);
out:
	stages_release(&st);
	free(rv.T);
	free(rv.split);
	free(fw);
	free(grad);
	free(last);
	return rc;
}

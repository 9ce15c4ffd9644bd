/* Chen et al. (2016), "Training deep nets with sublinear memory cost": the
 * sqrt(n) and greedy checkpoint choices, over three candidate sets: the
 * forward chain itself (chains only), the articulation points of the
 * forward graph (paper appendix B.1), or every forward node in topological
 * order (B.2). The checkpoints become a plan through
 * baseline_plan_of_checkpoints. */
#include "baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Points of the greedy sweep: b = k / GREEDY_STEPS of the forward bytes. */
#define GREEDY_STEPS 40

enum candidates { CAND_CHAIN, CAND_AP, CAND_LINEARIZED };

/* Marks the candidates of kind in cand[]; BASELINE_UNSUPPORTED or -1 with
 * err set. */
static int candidates(const struct graph *g, enum candidates kind, char *cand,
		      const char *name, struct cm_error *err)
{
	int bad, *ap = NULL, nap;

	memset(cand, 0, (size_t)g->n);
	if (kind == CAND_AP) {
		nap = graph_articulation_points(g, &ap, err);
		if (nap < 0)
			return -1;
		for (int i = 0; i < nap; i++)
			cand[ap[i]] = 1;
		free(ap);
		return 0;
	}
	if (kind == CAND_CHAIN && !graph_forward_chain(g, &bad)) {
		cm_errorf(err, "%s needs a chain of forward nodes; node '%s' breaks it", name,
			  g->nodes[bad].name);
		return BASELINE_UNSUPPORTED;
	}
	for (int k = 0; k < g->n; k++)
		cand[k] = !g->nodes[k].backward;
	return 0;
}

/* Point k of a Chen heuristic. sqrt(n) (one point): of the m candidates in
 * order, every s-th is kept, s = round(sqrt(m)). Greedy (point k: the k-th
 * distinct b among j / GREEDY_STEPS of the forward bytes): walking the forward nodes in order, a
 * candidate is kept once more than b bytes were computed since the last
 * kept node. */
static int chen(const struct graph *g, int k, struct plan *p, char *param, size_t len,
		enum candidates kind, int is_greedy, const char *name, struct cm_error *err)
{
	char *cand, *ckpt;
	uint64_t total = 0, since = 0, b;
	int m = 0, seen = 0, s, rc;

	if (k > (is_greedy ? GREEDY_STEPS : 0))
		return BASELINE_NO_POINT;
	cand = malloc((size_t)g->n + 1);
	ckpt = calloc((size_t)g->n + 1, 1);
	if (cand == NULL || ckpt == NULL) {
		rc = cm_errorf(err, "out of memory");
		goto out;
	}
	rc = candidates(g, kind, cand, name, err);
	if (rc)
		goto out;
	for (int v = 0; v < g->n; v++) {
		m += cand[v];
		total += g->nodes[v].backward ? 0 : g->nodes[v].memory;
	}
	s = (int)lround(sqrt((double)m));
	/* The k-th distinct threshold: on small graphs several steps round
	 * to the same byte count. */
	b = 0;
	for (int j = 0, distinct = -1; is_greedy && distinct < k; j++) {
		uint64_t bj = (uint64_t)((double)total * j / GREEDY_STEPS);

		if (j > GREEDY_STEPS) {
			rc = BASELINE_NO_POINT;
			goto out;
		}
		if (j == 0 || bj != b)
			distinct++;
		b = bj;
	}
	if (is_greedy)
		snprintf(param, len, "b=%llu", (unsigned long long)b);
	for (int v = 0; v < g->n; v++) {
		if (g->nodes[v].backward)
			continue;
		since += g->nodes[v].memory;
		if (cand[v] && (is_greedy ? since > b : ++seen % (s > 1 ? s : 1) == 0)) {
			ckpt[v] = 1;
			since = 0;
		}
	}
	rc = baseline_plan_of_checkpoints(g, ckpt, p, err);
out:
	free(cand);
	free(ckpt);
	return rc;
}

int baseline_chen_sqrtn(const struct graph *g, int k, struct plan *p, char *param,
			size_t len, struct cm_error *err)
{
	return chen(g, k, p, param, len, CAND_CHAIN, 0, "chen-sqrtn", err);
}

int baseline_ap_sqrtn(const struct graph *g, int k, struct plan *p, char *param,
		      size_t len, struct cm_error *err)
{
	return chen(g, k, p, param, len, CAND_AP, 0, "ap-sqrtn", err);
}

int baseline_linearized_sqrtn(const struct graph *g, int k, struct plan *p, char *param,
			      size_t len, struct cm_error *err)
{
	return chen(g, k, p, param, len, CAND_LINEARIZED, 0, "linearized-sqrtn", err);
}

int baseline_chen_greedy(const struct graph *g, int k, struct plan *p, char *param,
			 size_t len, struct cm_error *err)
{
	return chen(g, k, p, param, len, CAND_CHAIN, 1, "chen-greedy", err);
}

int baseline_ap_greedy(const struct graph *g, int k, struct plan *p, char *param,
		       size_t len, struct cm_error *err)
{
	return chen(g, k, p, param, len, CAND_AP, 1, "ap-greedy", err);
}

int baseline_linearized_greedy(const struct graph *g, int k, struct plan *p, char *param,
			       size_t len, struct cm_error *err)
{
	return chen(g, k, p, param, len, CAND_LINEARIZED, 1, "linearized-greedy", err);
}

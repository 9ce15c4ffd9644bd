/* The paper's stage matrices: R[t][i] = 1 when node i is computed in
 * frontier-advancing stage t, S[t][i] = 1 when i is kept in memory from
 * stage t - 1 into stage t. Both are lower triangular (S strictly). */
#ifndef CM_PLAN_STAGES_H
#define CM_PLAN_STAGES_H

#include <stdint.h>

#include "plan.h"

/* Largest graph we build n x n stage matrices for. */
#define STAGES_MAX_NODES 30000

struct stages {
	int n;
	uint8_t *R, *S; /* row-major n x n */
	/* With copies to host memory (stages_init_copies), else NULL:
	 * F[t][i] = 1 when i is fetched at stage t's start (resident from
	 * there, read from stage t + 1, into which it is kept), O[t][i] = 1
	 * when i, resident at stage t's start, is offloaded there (kept into
	 * t + 1 and freed at its start, once the copy has ended). */
	uint8_t *F, *O;
};

#define STAGE_R(st, t, i) ((st)->R[(size_t)(t) * (size_t)(st)->n + (size_t)(i)])
#define STAGE_S(st, t, i) ((st)->S[(size_t)(t) * (size_t)(st)->n + (size_t)(i)])
#define STAGE_F(st, t, i) ((st)->F[(size_t)(t) * (size_t)(st)->n + (size_t)(i)])
#define STAGE_O(st, t, i) ((st)->O[(size_t)(t) * (size_t)(st)->n + (size_t)(i)])

/* Zeroed matrices for n nodes; -1 with err set when n is too large or
 * memory runs out. Release with stages_release. */
int stages_init(struct stages *st, int n, struct cm_error *err);
void stages_release(struct stages *st);

/* Adds zeroed F and O to st (after stages_init). 0, or -1 with err set. */
int stages_init_copies(struct stages *st, struct cm_error *err);

/* Keeps value i from stage from + 1 through stage to (S set there). */
void stages_keep(struct stages *st, int i, int from, int to);

/* The cheapest R that makes S correct (docs/formats.md, Plans; the second
 * phase of the
 * paper's Algorithm 2): the frontier diagonal, the computes that kept
 * values need, then missing dependencies, scanning each stage from its last
 * node back. Entries of S on or above the diagonal are cleared. */
void stages_complete_r(const struct graph *g, struct stages *st);

/* Drops kept values that their stage does not read and that are not kept
 * further (they only take memory), completing R again until nothing
 * changes. Returns how many entries of S were dropped. */
int stages_drop_unused(const struct graph *g, struct stages *st);

/* S for checkpoint-all: every value kept from its compute to its last use. */
void stages_checkpoint_all(const struct graph *g, struct stages *st, const int *last);

/* The stage matrices a plan executes: R from its computes, S from what is
 * resident on the device when each stage begins (a fetched value counts
 * from its fetch, one on the host only does not). A staged plan (every
 * step's stage set and never decreasing, as plan_from_stages and
 * checkpoint-all make them) keeps its stages; in an unstaged one (stage
 * -1, as dtr makes them) a stage begins at each node's first compute,
 * which must come in file order. Returns 0, or -1 when p is neither. */
int stages_from_plan(const struct graph *g, const struct plan *p, struct stages *st);

/* Appends the plan of (R, S) to p (the paper's Algorithm 1): stages in
 * order, each scanned by node; a value is freed right after its last use
 * in the stage unless kept into the next one, and a value not used in a
 * stage and not kept goes at the stage's start. A compute of a value that
 * is already resident is dropped. With F and O, each stage's fetches and
 * offloads come right after the frees at its start. Returns 0, or -1 with
 * err set. */
int plan_from_stages(const struct graph *g, const struct stages *st,
		     struct plan *p, struct cm_error *err);

#endif

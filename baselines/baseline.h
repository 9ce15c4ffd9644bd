/* Heuristic strategies (docs/formats.md, Strategies; the paper's Table 1):
 * one file each, one
 * row each in the strategy table (solvers/table.c). A baseline is a list
 * of parameter points, each a plan; at a budget its answer is its
 * cheapest point that fits. */
#ifndef CM_BASELINE_H
#define CM_BASELINE_H

#include <stddef.h>

#include "../plan/sim.h"

/* What a point function returns besides 0 and -1. */
enum { BASELINE_NO_POINT = 1, BASELINE_UNSUPPORTED = 2 };

struct baseline {
	const char *name;        /* for messages */
	/* Appends the steps of parameter point k (0, 1, ...) to p and writes
	 * the point's label to param ("" when the strategy has no parameter).
	 * Returns 0; BASELINE_NO_POINT when there is no point k;
	 * BASELINE_UNSUPPORTED with err set when g is outside the strategy's
	 * domain; -1 with err set on failure. */
	int (*point)(const struct graph *g, int k, struct plan *p, char *param,
		     size_t len, struct cm_error *err);
};

/* The answer of b at budget: every point replayed, the cheapest that fits
 * kept, else the one with the least peak. *best (caller frees) and *sim
 * describe it, param its label. Returns 0; BASELINE_UNSUPPORTED when g is
 * outside b's domain, an answer and not a failure: why (why_len bytes, may
 * be NULL) says what, err is untouched; -1 with err set on failure. */
int baseline_best(const struct baseline *b, const struct graph *g, uint64_t budget,
		  struct plan **best, struct sim_result *sim, char *param, size_t len,
		  char *why, size_t why_len, struct cm_error *err);

/* The same, trying no further point once it has one and cm_clock() is past
 * deadline (a sweep over a large graph takes a pass of stage matrices a
 * point); deadline 0 for none. */
int baseline_best_until(const struct baseline *b, double deadline, const struct graph *g,
			uint64_t budget, struct plan **best, struct sim_result *sim, char *param,
			size_t len, char *why, size_t why_len, struct cm_error *err);

/* One parameter point, replayed without a budget. */
struct baseline_point {
	char param[64];
	double cost;
	uint64_t peak;
	double seconds; /* to make and replay the plan */
};

/* Every point of b on g, in order, in a malloc'd *pts (caller frees).
 * Returns the count, BASELINE_UNSUPPORTED negated (err says why), or -1. */
int baseline_points(const struct baseline *b, const struct graph *g,
		    struct baseline_point **pts, struct cm_error *err);

/* The plan of a set of forward checkpoints (ckpt[k] != 0), the scheme the
 * Chen baselines share: during the forward pass every value stays until
 * its last forward user; checkpoints and gradients stay until their last
 * use and are never recomputed; any other forward value is recomputed,
 * with the rest of its segment, in the first backward stage that needs it
 * and then stays until its last use. R is the cheapest for that S. */
int baseline_plan_of_checkpoints(const struct graph *g, const char *ckpt,
				 struct plan *p, struct cm_error *err);

/* The stages that scheme keeps each value through, into keep[3 * n]:
 * value x from its compute through stage keep[3x] (its last forward use;
 * its last use for checkpoints and gradients) and, when keep[3x + 1] >= 0
 * (the first backward stage that needs it again), from there through
 * keep[3x + 2] (its last use). Returns 0, or -1 when memory runs out. */
int baseline_checkpoint_keeps(const struct graph *g, const char *ckpt, int *keep);

int baseline_checkpoint_all_point(const struct graph *g, int k, struct plan *p,
				  char *param, size_t len, struct cm_error *err);
int baseline_chen_sqrtn(const struct graph *g, int k, struct plan *p, char *param,
			size_t len, struct cm_error *err);
int baseline_chen_greedy(const struct graph *g, int k, struct plan *p, char *param,
			 size_t len, struct cm_error *err);
int baseline_ap_sqrtn(const struct graph *g, int k, struct plan *p, char *param,
		      size_t len, struct cm_error *err);
int baseline_ap_greedy(const struct graph *g, int k, struct plan *p, char *param,
		       size_t len, struct cm_error *err);
int baseline_linearized_sqrtn(const struct graph *g, int k, struct plan *p, char *param,
			      size_t len, struct cm_error *err);
int baseline_linearized_greedy(const struct graph *g, int k, struct plan *p, char *param,
			       size_t len, struct cm_error *err);

int baseline_griewank_logn(const struct graph *g, int k, struct plan *p, char *param,
			   size_t len, struct cm_error *err);

/* Forward steps of revolve's schedule for a chain of l steps with s
 * snapshot slots (the first value's included), from its recursion; -1 out
 * of range. */
long long baseline_revolve_steps(int l, int s);

/* The checkpoint-all plan, built directly in O(n + e). */
int baseline_checkpoint_all(const struct graph *g, struct plan *p, struct cm_error *err);

#endif

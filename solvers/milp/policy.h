/* The MILP over the keep, offload or recompute plans of a training graph
 * (solvers/search/policy.h; docs/model.md, "Keep, offload or
 * recompute"): four binaries a moded value, the memory rows as they are,
 * and the clocks of the replay as continuous columns. Its optimum is the
 * least time of the class (times scale, in units of cost), the replayed
 * time of the plan of its modes. */
#ifndef CM_MILP_POLICY_H
#define CM_MILP_POLICY_H

#include "../search/policy.h"
#include "backend/milp.h"

struct policy_model {
	struct milp milp;
	int nf;
	int *col;      /* [4 nf]: the column of value j in mode q at 4 j + q
			* (keep, offload, recompute, prefetch), -1 when j has
			* no choice */
	int hopeless;  /* a memory row without a moded value is over the
			* budget: no plan of the class fits (milp is empty) */
	double scale;  /* units of cost a time column's unit is: the
			* checkpoint-all cost over 1000, so that the clocks are
			* of the order of 1000 whatever the costs' unit */
};

/* Builds the model of pc at budget into pm (release with
 * policy_model_release, also after an error). 0, or -1 with err set. */
int policy_build(const struct policy_chain *pc, uint64_t budget, struct policy_model *pm,
		 struct cm_error *err);
void policy_model_release(struct policy_model *pm);

/* The modes of solution x: for each moded value the mode whose column is
 * largest, POLICY_FIXED elsewhere. */
void policy_modes_of(const struct policy_model *pm, const double *x, int *mode);

/* The point of the model for mode (pm->milp.ncols values, malloc'd): the
 * mode columns, and each clock at the least its rows allow, in the order
 * the rows define them; for a warm start. NULL when out of memory. */
double *policy_point(const struct policy_model *pm, const int *mode);

#endif

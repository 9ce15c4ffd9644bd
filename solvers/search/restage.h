/* The stage matrices of a plan made without them (a heuristic's, dtr's): the
 * start of lns and of the repair, which search the stage model. */
#ifndef CM_RESTAGE_H
#define CM_RESTAGE_H

#include <stdint.h>

#include "../../plan/stages.h"

/* Stage matrices for any valid plan: a staged plan's own (stages_from_plan);
 * otherwise S(t,i) = value i resident when the first compute after node
 * t - 1's first compute happens, or else when node t is first computed,
 * whichever gives the cheaper plan that fits budget. R completed, unused S
 * dropped. Returns 1 with st filled, 0 when neither fits (err says why), -1
 * with err set on failure. */
int restage_plan(const struct graph *g, uint64_t budget, const struct plan *p,
		 struct stages *st, struct cm_error *err);

#endif

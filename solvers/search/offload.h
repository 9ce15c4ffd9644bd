/* Recomputes made copies: a pass over a plan that fetches a value back
 * from host memory instead of computing it again, where that makes the
 * plan's time shorter (docs/formats.md, Offload to host memory). */
#ifndef CM_OFFLOAD_H
#define CM_OFFLOAD_H

#include "../../plan/sim.h"

/* A copy of p in which, greedily in plan order, each compute of a value
 * computed before (a recompute) becomes a fetch of it, with an offload
 * right after the compute or fetch that made it resident before its free
 * (none when it already has a host copy), when the replay at the rates of
 * copy is then shorter and fits budget (and copy's host budget, when it
 * has one). The fetch is placed as early after the free as the budget lets
 * its memory be held; failing that, where the compute was. Inputs computed
 * again only for that recompute are left as they were. *converted (may be NULL) counts the recomputes made fetches.
 * Returns the plan, to free with plan_free, or NULL with err set (out of
 * memory, p with copies already, or p invalid or over budget). */
struct plan *offload_recomputes(const struct graph *g, const struct plan *p,
				     uint64_t budget, const struct sim_copy *copy,
				     int *converted, struct cm_error *err);

#endif

/* Whether a model fits the memory a request may use (solvers/memory.c). */
#ifndef CM_MEMORY_H
#define CM_MEMORY_H

#include "strategy.h"

/* 1 when the model of size sz (what: "the MILP", "the LP") fits the memory
 * that rq may use (the memory available, at most rq->memory_limit) with
 * one solver process; else 0, out's status unsupported and its why saying
 * what it would need. */
int strategy_check_memory(const struct solve_request *rq, const char *what,
			  const struct remat_size *sz, int relaxation, struct solve_outcome *out);

#endif

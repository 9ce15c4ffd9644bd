/* Whether a model fits the memory: its size counted (remat_size) before
 * it is built, turned into bytes with figures measured on the shared
 * graphs (docs/usage.md, "Memory"), against the memory available and
 * --memory-limit. */
#include "strategy.h"

#include "../common/mem.h"
#include "../common/size.h"

/* This process's copy of the model (struct milp: an index and a value per
 * nonzero, arrays grown by doubling; names and bounds per column). */
#define MEM_OWN_PER_NNZ 40.0
/* A solver process: the backend's copy and its work, per nonzero of the
 * model, and a floor for the libraries and small models. */
#define MEM_LP_PER_NNZ 300.0
#define MEM_MILP_PER_NNZ 400.0
#define MEM_SOLVER_FLOOR (64.0 * 1024 * 1024)

double strategy_model_bytes(uint64_t nnz, int relaxation, int processes)
{
	double per = relaxation ? MEM_LP_PER_NNZ : MEM_MILP_PER_NNZ;

	return (double)nnz * MEM_OWN_PER_NNZ +
	       processes * (MEM_SOLVER_FLOOR + (double)nnz * per);
}

int strategy_check_memory(const struct solve_request *rq, const char *what,
			  const struct remat_size *sz, int relaxation, struct solve_outcome *out)
{
	uint64_t limit = mem_budget(rq->memory_limit);
	double need = strategy_model_bytes(sz->nnz, relaxation, 1);
	char h1[32], h2[32], model[96] = "";

	if (limit == 0 || need <= (double)limit)
		return 1;
	strategy_set_status(out, STATUS_UNSUPPORTED);
	if (sz->nnz > 0)
		snprintf(model, sizeof(model), " of %llu columns, %llu rows, %llu nonzeros",
			 (unsigned long long)sz->cols, (unsigned long long)sz->rows,
			 (unsigned long long)sz->nnz);
	snprintf(out->why, sizeof(out->why), "%s%s needs about %s, over the %s %s", what, model,
		 size_human(need >= 1.8e19 ? UINT64_MAX : (uint64_t)need, h1, sizeof(h1)),
		 rq->memory_limit && rq->memory_limit <= limit ? "--memory-limit" :
		 "memory available", size_human(limit, h2, sizeof(h2)));
	return 0;
}

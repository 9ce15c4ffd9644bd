/* Whether a model fits the memory: its size counted (remat_size) before
 * it is built, turned into bytes with figures measured on the shared
 * graphs (docs/usage.md, "Memory"), against the memory available and
 * --memory-limit. */
#include "strategy.h"
#include "memory.h"

#include "../common/mem.h"
#include "../common/size.h"

int strategy_check_memory(const struct solve_request *rq, const char *what,
			  const struct remat_size *sz, int relaxation, struct solve_outcome *out)
{
	uint64_t limit = mem_budget(rq->memory_limit);
	double need = remat_bytes(sz->nnz, relaxation, 1);
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

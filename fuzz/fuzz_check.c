/* `check` of a plan against a graph: the input is a graph, a line "--",
 * and a plan (all graph when there is no such line). The graph is read as
 * `check` reads it; when it reads, so is the plan, and a plan read is
 * replayed at the budget it records. Errors and verdicts are one line. */
#include "fuzz.h"

#include <string.h>

#include "../graph/read.h"
#include "../plan/io.h"
#include "../plan/sim.h"

static const char separator[] = "\n--\n";

/* The first separator in data, or NULL. */
static const uint8_t *find_separator(const uint8_t *data, size_t size)
{
	size_t len = sizeof(separator) - 1;

	for (size_t i = 0; i + len <= size; i++)
		if (memcmp(data + i, separator, len) == 0)
			return data + i;
	return NULL;
}

static void check_plan(const struct graph *g, const uint8_t *data, size_t size)
{
	FILE *f = fuzz_stream(data, size);
	struct cm_error err;
	struct plan *p = plan_read_stream(f, "plan.json", g, &err);
	struct sim_result res;

	fclose(f);
	if (p == NULL) {
		fuzz_check_message(err.msg);
		return;
	}
	FUZZ_CHECK(plan_simulate(g, p, p->budget ? p->budget : SIM_NO_BUDGET, &res, &err) == 0,
		   "plan_simulate failed");
	if (!res.valid || !res.fits)
		fuzz_check_message(res.why);
	FUZZ_CHECK(res.fits <= res.valid, "a plan that fits but is not valid");
	plan_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = find_separator(data, size);
	size_t glen = sep ? (size_t)(sep - data) : size;
	FILE *f = fuzz_stream(data, glen);
	struct cm_error err;
	struct graph *g = graph_read_stream(f, "graph.json", &err);

	fclose(f);
	if (g == NULL) {
		fuzz_check_message(err.msg);
		return 0;
	}
	if (sep) {
		size_t skip = glen + sizeof(separator) - 1;

		check_plan(g, data + skip, size - skip);
	}
	graph_free(g);
	return 0;
}

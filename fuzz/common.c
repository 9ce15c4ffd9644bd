#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/num.h"
#include "../plan/io.h"
#include "../plan/sim.h"

void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}

FILE *fuzz_stream(const uint8_t *data, size_t size)
{
	static const char empty[1];
	/* fmemopen takes no zero-sized buffer: an empty input is a buffer of
	 * one byte that is not read (mode "r" reads up to size). */
	FILE *f = size ? fmemopen((void *)data, size, "rb") : fmemopen((void *)empty, 1, "rb");

	FUZZ_CHECK(f != NULL, "fmemopen");
	if (size == 0)
		(void)fgetc(f);
	return f;
}

void fuzz_check_message(const char *msg)
{
	FUZZ_CHECK(msg[0] != '\0', "an empty error message");
	FUZZ_CHECK(strchr(msg, '\n') == NULL && strchr(msg, '\r') == NULL,
		   "an error message of more than one line");
}

/* The plan's JSON, read back, has the same steps. */
static void check_round_trip(const struct graph *g, const struct plan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct cm_error err;
	struct plan *q;

	FUZZ_CHECK(f != NULL, "open_memstream");
	FUZZ_CHECK(plan_write_json(f, g, p) == 0, "plan_write_json");
	FUZZ_CHECK(fclose(f) == 0, "fclose");
	f = fuzz_stream((const uint8_t *)buf, len);
	q = plan_read_stream(f, "round-trip", g, &err);
	fclose(f);
	FUZZ_CHECK(q != NULL, "a written plan does not read back");
	FUZZ_CHECK(q->n == p->n, "a plan read back has another step count");
	for (int i = 0; i < p->n; i++)
		FUZZ_CHECK(q->steps[i].op == p->steps[i].op && q->steps[i].node == p->steps[i].node,
			   "a plan read back has another step");
	plan_free(q);
	free(buf);
}

static void check_articulation(const struct graph *g)
{
	struct cm_error err;
	int *ap, n = graph_articulation_points(g, &ap, &err);

	FUZZ_CHECK(n >= 0, "graph_articulation_points failed");
	for (int i = 0; i < n; i++) {
		FUZZ_CHECK(ap[i] >= 0 && ap[i] < g->n && !g->nodes[ap[i]].backward,
			   "an articulation point that is no forward node");
		FUZZ_CHECK(i == 0 || ap[i - 1] < ap[i], "articulation points out of order");
	}
	free(ap);
}

void fuzz_check_graph(const struct graph *g)
{
	struct plan *p = plan_new();
	struct sim_result res;
	struct cm_error err;
	uint64_t peak = graph_peak_all(g);
	int bad;

	FUZZ_CHECK(p != NULL, "plan_new");
	FUZZ_CHECK(graph_lower_bound(g) <= peak, "lower bound above the checkpoint-all peak");
	FUZZ_CHECK(graph_nforward(g) <= g->n, "graph_nforward");
	if (!graph_forward_chain(g, &bad))
		FUZZ_CHECK(bad >= 0 && bad < g->n, "graph_forward_chain: bad node out of range");
	check_articulation(g);
	FUZZ_CHECK(baseline_checkpoint_all(g, p, &err) == 0, "baseline_checkpoint_all failed");
	FUZZ_CHECK(plan_simulate(g, p, peak, &res, &err) == 0, "plan_simulate failed");
	FUZZ_CHECK(res.valid && res.fits, "the checkpoint-all plan does not replay");
	FUZZ_CHECK(res.peak == peak, "the checkpoint-all plan peaks elsewhere than graph_peak_all");
	FUZZ_CHECK(num_eq(res.cost, graph_total_cost(g)), "checkpoint-all cost is not the total");
	check_round_trip(g, p);
	plan_free(p);
}

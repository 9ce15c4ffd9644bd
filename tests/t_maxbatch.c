/* maxbatch: the largest batch per strategy, confirmed at B and B + 1. */
#include <string.h>

#include "../baselines/baseline.h"
#include "../solvers/batch.h"
#include "../graph/read.h"
#include "../plan/sim.h"
#include "tap.h"

static const uint64_t budgets[] = { 20, 45, 90 };
#define NBUDGETS (sizeof(budgets) / sizeof(budgets[0]))

/* linear:n, a chain the searches run on. */
static struct graph *chain(int n)
{
	char name[32];
	struct cm_error err;

	snprintf(name, sizeof(name), "linear:%d", n);
	return graph_load(name, &err);
}

static void test_bandwidth(void);

int main(void)
{
	int confirmed = 0, unconfirmed = 0, dominated = 0, searches = 0, seeded = 0, differ = 0;
	struct cm_error err;

	for (int n = 3; n <= tap_cases(8, 4); n++) {
		struct graph *g = chain(n);
		const char *name = g->id;

		for (size_t bi = 0; bi < NBUDGETS; bi++) {
			/* One extra forward pass: n forward nodes, n + 1 backward. */
			double ratio = (2.0 * n + n + 1) / (2.0 * n + 1);
			struct batch_answer ilp, base, again;
			uint64_t best = 0;
			struct solve_request defaults = { 0 };
			struct batch_request rq = { "ilp", budgets[bi], ratio, &defaults, 0 };

			if (batch_search(g, &rq, &ilp, &err)) {
				diag("%s: %s", name, err.msg);
				unconfirmed++;
				continue;
			}
			for (int s = -1; s < strategy_count(); s++) {
				struct batch_answer *x = s < 0 ? &ilp : &base, probe;

				if (s >= 0 && strategy_at(s)->point == NULL)
					continue; /* the paper's heuristics */
				rq.strategy = s < 0 ? "ilp" : strategy_at(s)->name;
				if (s >= 0 && batch_search(g, &rq, &base, &err))
					continue;
				searches++;
				/* A plan fits at B (when B > 0), none at B + 1. */
				if ((x->batch == 0 || batch_fits(g, &rq, x->batch, &probe, &err) == 1) &&
				    batch_fits(g, &rq, x->batch + 1, &probe, &err) == 0 && x->proven)
					confirmed++;
				else if (unconfirmed++ < 3)
					diag("%s budget %llu %s: batch %llu not confirmed", name,
					     (unsigned long long)budgets[bi], rq.strategy,
					     (unsigned long long)x->batch);
				if (s >= 0 && base.batch > best)
					best = base.batch;
				if (s >= 0 && base.batch > ilp.batch && dominated++ < 3)
					diag("%s budget %llu: %s fits batch %llu, ilp only %llu", name,
					     (unsigned long long)budgets[bi], rq.strategy,
					     (unsigned long long)base.batch, (unsigned long long)ilp.batch);
			}
			/* Started from the best baseline's batch, as the command
			 * does, ilp's search ends where its own does. */
			if (best > 0) {
				rq.strategy = "ilp";
				rq.seed = best;
				seeded++;
				if (batch_search(g, &rq, &again, &err) || again.batch != ilp.batch ||
				    !again.proven)
					differ++;
			}
		}
		graph_free(g);
	}
	ok(unconfirmed == 0, "%d of %d answers on linear:3..%d confirmed: a plan at B, none at "
	   "B + 1 (for ilp a proof of infeasibility)", confirmed, searches, tap_cases(8, 4));
	ok(dominated == 0, "ilp's batch is at least every baseline's");
	ok(differ == 0 && seeded > 0, "ilp's search from the best baseline's batch ends where "
	   "its own does, proven, %d times; %d differ", seeded, differ);
	{
		/* Every model refused for memory: ilp answers with the
		 * heuristics' plans, and the refusal above them proves nothing. */
		struct graph *g = graph_load("linear:8", &err);
		struct solve_request tiny = { .memory_limit = 1 };
		/* Any cost up to twice checkpoint-all's. */
		struct batch_request rq = { "ilp", 90, 2.0, &tiny, 0 };
		struct batch_answer ilp, all;

		batch_search(g, &rq, &ilp, &err);
		rq.strategy = "checkpoint-all";
		batch_search(g, &rq, &all, &err);
		ok(ilp.batch >= all.batch && all.batch > 0 && !ilp.proven && !ilp.unsupported,
		   "models refused for memory: ilp's batch %llu (checkpoint-all's %llu), unproven",
		   (unsigned long long)ilp.batch, (unsigned long long)all.batch);
		graph_free(g);
	}
	{
		/* The command's policy: the strategies in turn, ilp seeded by
		 * the batch the ones before it reached; rows as the CSV's. */
		struct graph *g = graph_load("linear:8", &err);
		const struct strategy *list[2] = { strategy_find("checkpoint-all", &err),
						   strategy_find("ilp", &err) };
		struct solve_request defaults = { 0 };
		struct batch_run_request rq = { list, 2, 90, 0, &defaults, NULL, NULL };
		struct batch_answer ans[2], one;
		struct batch_request br = { "ilp", 90, batch_default_ratio(g), &defaults, 0 };
		struct strategy_row row;
		int rc = batch_run(g, &rq, ans, &err);

		batch_search(g, &br, &one, &err);
		batch_row_of_answer(&row, g, 90, &ans[1]);
		ok(rc == 0 && ans[0].batch > 0 && ans[1].batch == one.batch &&
		   ans[1].proven == one.proven && row.status == (one.proven ? STATUS_OPTIMAL :
								 STATUS_FEASIBLE) &&
		   strcmp(row.strategy, "ilp") == 0,
		   "batch_run: checkpoint-all %llu, ilp seeded from it %llu as alone (%llu)",
		   (unsigned long long)ans[0].batch, (unsigned long long)ans[1].batch,
		   (unsigned long long)one.batch);
		graph_free(g);
	}
	test_bandwidth();
	return tap_done();
}

/* With a bandwidth (maxbatch --bandwidth) the cap holds time: every
 * strategy that makes no copies answers as without one (its time is its
 * cost's); offload-dp's answer is confirmed at B and B + 1, within the
 * time cap, at least checkpoint-all's, and grows with the bandwidth. */
static void test_bandwidth(void)
{
	static const double bandwidths[] = { 1, 10, 1000 }; /* bytes a second */
	int same = 0, differ_copies = 0, dp_ok = 0, dp_bad = 0, grows = 1;
	struct cm_error err;

	for (int n = 3; n <= tap_cases(8, 4); n++) {
		struct graph *g = chain(n);
		const char *name = g->id;

		for (size_t bi = 0; bi < NBUDGETS; bi++) {
			double ratio = batch_default_ratio(g);
			uint64_t last = 0;

			for (size_t wi = 0; wi < sizeof(bandwidths) / sizeof(bandwidths[0]);
			     wi++) {
				struct sim_copy copy = { bandwidths[wi], 1, 0 };
				struct solve_request plain = { 0 }, timed = { .copy = &copy };
				struct batch_request rq = { "checkpoint-all", budgets[bi], ratio,
							    &plain, 0 };
				struct batch_answer a, b, dp, probe;

				for (int s = 0; wi == 0 && s < strategy_count(); s++) {
					if (strategy_at(s)->point == NULL)
						continue; /* the paper's heuristics */
					rq.strategy = strategy_at(s)->name;
					rq.settings = &plain;
					batch_search(g, &rq, &a, &err);
					rq.settings = &timed;
					batch_search(g, &rq, &b, &err);
					if (a.batch == b.batch && a.proven == b.proven)
						same++;
					else if (differ_copies++ < 3)
						diag("%s budget %llu %s: %llu without a bandwidth, "
						     "%llu with", name,
						     (unsigned long long)budgets[bi], rq.strategy,
						     (unsigned long long)a.batch,
						     (unsigned long long)b.batch);
				}
				rq.strategy = "checkpoint-all";
				rq.settings = &timed;
				batch_search(g, &rq, &a, &err);
				rq.strategy = "offload-dp";
				batch_search(g, &rq, &dp, &err);
				if (dp.proven && dp.batch >= a.batch &&
				    (dp.batch == 0 || (batch_fits(g, &rq, dp.batch, &probe, &err) == 1
						       && probe.has_time &&
						       probe.slowdown <= ratio * (1 + 1e-9))) &&
				    batch_fits(g, &rq, dp.batch + 1, &probe, &err) == 0)
					dp_ok++;
				else if (dp_bad++ < 3)
					diag("%s budget %llu bandwidth %g: offload-dp's batch %llu "
					     "not confirmed", name, (unsigned long long)budgets[bi],
					     bandwidths[wi], (unsigned long long)dp.batch);
				grows &= dp.batch >= last;
				last = dp.batch;
			}
		}
		graph_free(g);
	}
	ok(differ_copies == 0 && same > 0, "with a bandwidth, the %d answers of strategies "
	   "without copies as without one", same);
	ok(dp_bad == 0 && dp_ok > 0 && grows, "offload-dp with a bandwidth: %d answers "
	   "confirmed at B and B + 1 within the time cap, at least checkpoint-all's, growing "
	   "with the bandwidth", dp_ok);
}

/* checkmate maxbatch GRAPH --budget SIZE: per strategy, the largest batch
 * whose plan fits the budget at a cost of at most one extra forward pass
 * (paper section 6.4). Memory and cost scale with the batch
 * (docs/formats.md, Graph file), fixed
 * memory does not; feasibility is monotone in the batch, so doubling then
 * bisecting finds the exact largest batch, confirmed by a failure at B + 1. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/num.h"
#include "../solvers/batch.h"
#include "cli.h"
#include "jsonl.h"
#include "options.h"

static const char maxbatch_usage[] =
	"usage: checkmate maxbatch [GRAPH] --budget SIZE [--strategies LIST]\n"
	"                          [--max-overhead X] [--bandwidth B [--rate R]\n"
	"                          [--host-budget SIZE]] [--csv FILE|-] [--json FILE|-]\n\n"
	"For each strategy, the largest batch size whose plan for GRAPH (default: the\n"
	"built-in example " CLI_DEFAULT_GRAPH ") fits SIZE at a cost of at most one extra\n"
	"forward pass: 2 x forward cost + backward cost. Node memory and cost scale\n"
	"with the batch (memory x B / batch_size, rounded up); fixed memory does not.\n\n"
	"  -b, --budget SIZE        memory budget (16G, 80% of the checkpoint-all\n"
	"                           peak at the file's batch size, ...)\n"
	"  -s, --strategies LIST    all (default: the heuristics and ilp) or a\n"
	"                           comma-separated list of the strategies below\n"
	"      --max-overhead X     cap the cost at X times the checkpoint-all cost\n"
	"                           instead\n"
	"      --bandwidth B        copies to host memory at B (25GB/s): plans are\n"
	"                           replayed in time, the cap holds their time (X\n"
	"                           times the checkpoint-all cost's), and the\n"
	"                           strategies that offload join the default list\n"
	"      --rate R             the device's rate, where the graph's costs are\n"
	"                           FLOPs or have no unit (with --bandwidth)\n"
	"      --host-budget SIZE   the most bytes in host memory (with --bandwidth)\n"
	CLI_JSON_HELP
	"The table: the largest batch, as a multiple of checkpoint-all's, the\n"
	"overhead (cost over the checkpoint-all cost) and the peak at that batch.\n"
	"The CSV has one row per strategy (param: batch=B). ilp starts from the\n"
	"largest batch of the strategies before it and takes the first plan that\n"
	"fits (--gap does not apply): its cost is that plan's; solve at that batch\n"
	"for the cheapest. A solve that runs out of time (-t, per solve) leaves\n"
	"that strategy's answer unproven. A first SIGINT or SIGTERM marks the\n"
	"search under way and those after it interrupted (exit 4); a second ends\n"
	"the process at once.\n\n"
	CLI_SHARED_HELP;

int cmd_maxbatch_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "strategies", required_argument, NULL, 's' },
		{ "max-overhead", required_argument, NULL, 'X' },
		{ "bandwidth", required_argument, NULL, 'K' },
		{ "rate", required_argument, NULL, 'E' },
		{ "host-budget", required_argument, NULL, 'O' },
		CLI_JSON_LONGOPT,
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int rc = cli_parse("maxbatch", maxbatch_usage, opts, ":b:s:" CLI_SHARED_SHORTOPTS, argc,
			   argv, a);

	if (rc)
		return rc;
	if (a->budget == NULL)
		return cli_usage("maxbatch", "--budget is required");
	if ((a->rate || a->host_budget) && !a->bandwidth)
		return cli_usage("maxbatch", "%s needs --bandwidth",
				 a->rate ? "--rate" : "--host-budget");
	return cli_distinct_outputs("maxbatch", (const char *const[]){ a->csv, a->json }, 2);
}

/* One line of the table: the cells as text. */
static void table_line(const char *strategy, const char *batch, const char *vs,
		       const char *overhead, const char *peak, const char *status)
{
	printf("%-18s %13s %17s %9s %12s  %s\n", strategy, batch, vs, overhead, peak, status);
}

static const char *answer_status(const struct batch_answer *x)
{
	return x->proven ? "proven: batch + 1 does not fit" :
	       x->capped ? "search limit reached" :
	       x->interrupted ? "interrupted: the largest found so far" :
	       "unproven: none found at batch + 1";
}

static void print_table(const struct graph *g, uint64_t budget, double ratio, int timed,
			const struct batch_answer *ans, int n)
{
	uint64_t base = 0;
	char h[32];

	for (int i = 0; i < n; i++)
		if (strcmp(ans[i].strategy, "checkpoint-all") == 0)
			base = ans[i].batch;
	printf("%s at budget %s: the largest batch whose plan fits, at a %s of at most\n"
	       "%.4fx checkpoint-all's (the file's batch size is %llu)\n\n",
	       g->id, size_human(budget, h, sizeof(h)), timed ? "time" : "cost", ratio,
	       (unsigned long long)g->batch_size);
	table_line("strategy", "largest batch", "vs checkpoint-all", timed ? "time" : "overhead",
		   "peak memory", "status");
	for (int i = 0; i < n; i++) {
		const struct batch_answer *x = &ans[i];
		char vs[16] = "-", batch[32], over[16];

		if (x->interrupted && x->batch == 0) {
			table_line(x->strategy, "?", "-", "-", "-", "interrupted");
		} else if (x->unsupported) {
			table_line(x->strategy, "n/a", "-", "-", "-", "unsupported on this graph");
		} else if (x->batch == 0) {
			table_line(x->strategy, "0", "-", "-", "-", "none fits at batch 1");
		} else {
			if (base > 0)
				snprintf(vs, sizeof(vs), "%.2fx", (double)x->batch / (double)base);
			snprintf(batch, sizeof(batch), "%s%llu", x->capped ? ">=" : "",
				 (unsigned long long)x->batch);
			snprintf(over, sizeof(over), "%.4fx", timed ? x->slowdown : x->overhead);
			table_line(x->strategy, batch, vs, over, size_human(x->peak, h, sizeof(h)),
				   answer_status(x));
		}
	}
}

/* The CSV rows and JSON lines, into outputs opened before the search. */
static int write_rows(const struct cli_args *a, struct out *csv, struct out *json,
		      const struct graph *g, uint64_t budget, const struct batch_answer *ans,
		      int n)
{
	struct cm_error err;

	int timed = a->bandwidth != NULL;

	if (a->csv && a->header)
		csv_header(csv->f, timed);
	for (int i = 0; i < n; i++) {
		struct strategy_row r;

		batch_row_of_answer(&r, g, budget, &ans[i]);
		if (a->csv)
			csv_row(csv->f, &r, timed);
		if (a->json && jsonl_row(json->f, &r, NULL, &err))
			return cli_error("%s", err.msg);
	}
	if ((a->csv && out_commit(csv, &err)) || (a->json && out_commit(json, &err)))
		return cli_error("%s", err.msg);
	return 0;
}

/* The library's notes, as the command's. */
static void note(void *ctx, const char *what)
{
	cli_note(*(const int *)ctx, "%s", what);
}

int cmd_maxbatch_main(int argc, char **argv)
{
	struct cli_args a;
	const struct strategy **list = NULL;
	struct batch_answer *ans = NULL;
	struct solve_request settings = { 0 };
	struct batch_run_request br;
	struct out csv = { 0 }, json = { 0 };
	struct cm_error err;
	struct sim_copy copy;
	struct graph *g;
	uint64_t budget;
	double ratio;
	int n = 0, rc, cut = 0;

	rc = cmd_maxbatch_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	cli_catch_interrupts(a.quiet);
	g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	cli_request(&a, &settings);
	settings.progress = NULL; /* many short solves: the notes say which */
	if (size_parse(a.budget, graph_peak_all(g), &budget, &err)) {
		rc = cli_usage("maxbatch", "--budget: %s", err.msg);
		goto out;
	}
	if (a.bandwidth && (rc = cli_copy_rates("maxbatch", &a, g, &copy)))
		goto out;
	settings.copy = a.bandwidth ? &copy : NULL;
	/* With a bandwidth, the rows with copies join the default list. */
	if ((rc = cli_strategy_list("maxbatch", "--strategies", a.strategies ? a.strategies : "all",
				    STRATEGY_MAXBATCH, !a.bandwidth ? CLI_COPIES_REFUSED :
				    a.strategies ? CLI_COPIES_ALLOWED : CLI_COPIES_ADDED, &list, &n)))
		goto out;
	if (strategy_check_params(list, n, &settings, &err)) {
		rc = cli_usage("maxbatch", "%s", err.msg);
		goto out;
	}
	ans = calloc((size_t)n + 1, sizeof(*ans));
	if (ans == NULL) {
		rc = cli_error("out of memory");
		goto out;
	}
	if ((a.csv && out_open(&csv, a.csv, &err)) || (a.json && out_open(&json, a.json, &err))) {
		rc = cli_error("%s", err.msg);
		goto out;
	}
	ratio = a.max_overhead > 0 ? a.max_overhead : batch_default_ratio(g);
	br = (struct batch_run_request){ list, n, budget, ratio, &settings, note, &a.quiet };
	if (batch_run(g, &br, ans, &err)) {
		rc = cli_error("%s: %s", g->id, err.msg);
		goto out;
	}
	if ((rc = write_rows(&a, &csv, &json, g, budget, ans, n)))
		goto out;
	if (!(a.csv && strcmp(a.csv, "-") == 0) && !(a.json && strcmp(a.json, "-") == 0))
		print_table(g, budget, ratio, a.bandwidth != NULL, ans, n);
	/* Cut short, the answer is partial: as a search that ran out of time. */
	for (int i = 0; i < n; i++)
		cut |= ans[i].interrupted;
	rc = fflush(stdout) != 0 ? cli_error("standard output: write failed") :
	     cut ? CM_EXIT_NO_PLAN : CM_EXIT_OK;
out:
	out_abort(&csv);
	out_abort(&json);
	free(list);
	free(ans);
	graph_free(g);
	return rc;
}

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
#include "cli.h"
#include "../solvers/batch.h"
#include "options.h"

static const char maxbatch_usage[] =
	"usage: checkmate maxbatch [GRAPH] --budget SIZE [--strategies LIST]\n"
	"                          [--max-overhead X] [--csv FILE|-]\n\n"
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
	"The CSV has one row per strategy (param: batch=B). ilp starts from the\n"
	"largest batch of the strategies before it and takes the first plan that\n"
	"fits (--gap does not apply): its cost is that plan's; solve at that batch\n"
	"for the cheapest. A solve that runs out of time (-t, per solve; for ilp\n"
	"60 s unless given, 0 for none) leaves that strategy's answer unproven. A\n"
	"first SIGINT or SIGTERM marks the search under way and those after it\n"
	"interrupted (exit 4); a second ends the process at once.\n\n"
	CLI_SHARED_HELP;

int cmd_maxbatch_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "strategies", required_argument, NULL, 's' },
		{ "max-overhead", required_argument, NULL, 'X' },
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int rc = cli_parse("maxbatch", maxbatch_usage, opts, ":b:s:" CLI_SHARED_SHORTOPTS, argc,
			   argv, a);

	if (rc)
		return rc;
	if (a->budget == NULL)
		return cli_usage("maxbatch", "--budget is required");
	return 0;
}

static void print_table(const struct graph *g, uint64_t budget, double ratio,
			const struct batch_answer *ans, int n)
{
	uint64_t base = 0;
	char h[32];

	for (int i = 0; i < n; i++)
		if (strcmp(ans[i].strategy, "checkpoint-all") == 0)
			base = ans[i].batch;
	printf("%s at budget %s: the largest batch whose plan fits, at a cost of at most\n"
	       "%.4f x checkpoint-all (the file's batch size is %llu)\n\n",
	       g->id, size_human(budget, h, sizeof(h)), ratio,
	       (unsigned long long)g->batch_size);
	printf("%-18s %10s %16s %14s %9s  %s\n", "strategy", "max batch", "cost", "peak",
	       "x ckpt-all", "status");
	for (int i = 0; i < n; i++) {
		const struct batch_answer *x = &ans[i];
		char ratio_s[16] = "-", batch_s[32];

		if (base > 0)
			snprintf(ratio_s, sizeof(ratio_s), "%.2f", (double)x->batch / (double)base);
		if (x->interrupted && x->batch == 0) {
			printf("%-18s %10s %16s %14s %9s  %s\n", x->strategy, "?", "-", "-", "-",
			       "interrupted");
			continue;
		}
		if (x->unsupported) {
			printf("%-18s %10s %16s %14s %9s  %s\n", x->strategy, "n/a", "-", "-", "-",
			       "unsupported on this graph");
			continue;
		}
		if (x->batch == 0) {
			printf("%-18s %10s %16s %14s %9s  %s\n", x->strategy, "0", "-", "-", ratio_s,
			       "none fits at batch 1");
			continue;
		}
		snprintf(batch_s, sizeof(batch_s), "%s%llu", x->capped ? ">=" : "",
			 (unsigned long long)x->batch);
		printf("%-18s %10s %16.10g %14s %9s  %s\n", x->strategy, batch_s, x->cost,
		       size_human(x->peak, h, sizeof(h)),
		       ratio_s, x->proven ? "proven (batch + 1 does not fit)" :
		       x->capped ? "search limit reached" :
		       x->interrupted ? "interrupted (the largest found so far)" :
		       "unproven (none found at batch + 1, none proven)");
	}
}

/* The CSV rows, written whole or not at all. */
static int write_csv(const struct cli_args *a, const struct graph *g, uint64_t budget,
		     const struct batch_answer *ans, int n)
{
	struct out csv = { 0 };
	struct cm_error err;

	if (out_open(&csv, a->csv, &err))
		return cli_error("%s", err.msg);
	if (a->header)
		csv_header(csv.f);
	for (int i = 0; i < n; i++) {
		struct strategy_row r;

		batch_row_of_answer(&r, g, budget, &ans[i]);
		csv_row(csv.f, &r);
	}
	if (out_commit(&csv, &err))
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
	struct cm_error err;
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
	if ((rc = cli_strategy_list("maxbatch", "--strategies", a.strategies ? a.strategies : "all",
				    STRATEGY_MAXBATCH, &list, &n)))
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
	ratio = a.max_overhead > 0 ? a.max_overhead : batch_default_ratio(g);
	br = (struct batch_run_request){ list, n, budget, ratio, &settings, note, &a.quiet };
	if (batch_run(g, &br, ans, &err)) {
		rc = cli_error("%s: %s", g->id, err.msg);
		goto out;
	}
	if (a.csv && (rc = write_csv(&a, g, budget, ans, n)))
		goto out;
	if (!(a.csv && strcmp(a.csv, "-") == 0))
		print_table(g, budget, ratio, ans, n);
	/* Cut short, the answer is partial: as a search that ran out of time. */
	for (int i = 0; i < n; i++)
		cut |= ans[i].interrupted;
	rc = fflush(stdout) != 0 ? cli_error("standard output: write failed") :
	     cut ? CM_EXIT_NO_PLAN : CM_EXIT_OK;
out:
	free(list);
	free(ans);
	graph_free(g);
	return rc;
}

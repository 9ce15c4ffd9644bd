/* checkmate maxbatch GRAPH --budget SIZE: per strategy, the largest batch
 * whose plan fits the budget at a cost of at most one extra forward pass
 * (paper section 6.4). Memory and cost scale with the batch (SPEC 1), fixed
 * memory does not; feasibility is monotone in the batch, so doubling then
 * bisecting finds the exact largest batch, confirmed by a failure at B + 1. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../baselines/baseline.h"
#include "../common/clock.h"
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
	"      --strategies LIST    all (default: every baseline and ilp) or a\n"
	"                           comma-separated list\n"
	"      --max-overhead X     cap the cost at X times the checkpoint-all cost\n"
	"                           instead\n"
	"The CSV has one row per strategy (param: batch=B). A solve that runs out\n"
	"of time (-t, per ilp solve) leaves that strategy's answer unproven.\n\n"
	CLI_SHARED_HELP;

struct maxbatch_args {
	const char *graph, *budget, *strategies;
	double max_overhead;
	struct cli_shared sh;
};

static int parse_args(int argc, char **argv, struct maxbatch_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "strategies", required_argument, NULL, 's' },
		{ "max-overhead", required_argument, NULL, 'X' },
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cm_error err;
	int c;

	*a = (struct maxbatch_args){ .strategies = "all" };
	cli_shared_init(&a->sh);
	optind = 0;
	while ((c = cli_getopt("maxbatch", argc, argv, ":b:s:" CLI_SHARED_SHORTOPTS, opts)) != -1)
		switch (c) {
		case 'b': a->budget = optarg; break;
		case 's': a->strategies = optarg; break;
		case 'X':
			if (cli_parse_double("--max-overhead", optarg, 1, 1e6, &a->max_overhead, &err))
				return cli_usage("maxbatch", "%s", err.msg);
			break;
		default:
			c = cli_shared_option("maxbatch", maxbatch_usage, c, optarg, &a->sh);
			if (c != 1)
				return c ? c : CM_EXIT_USAGE;
		}
	if (argc - optind > 1)
		return cli_usage("maxbatch", "expected at most one GRAPH");
	if (a->budget == NULL)
		return cli_usage("maxbatch", "--budget is required");
	a->graph = optind < argc ? argv[optind] : NULL;
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
		       x->capped ? "search limit reached" : "unproven (a solve ran out of time)");
	}
}

int cmd_maxbatch_main(int argc, char **argv)
{
	struct maxbatch_args a;
	struct batch_answer ans[16];
	struct out csv = { 0 };
	struct cm_error err;
	struct graph *g;
	const char *names[16];
	uint64_t budget;
	double ratio, fwd = 0, bwd = 0;
	struct solve_request settings = { 0 };
	int n = 0, rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	g = cli_load_graph(a.graph, a.sh.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	cli_shared_request(&a.sh, &settings);
	settings.progress = NULL; /* many short solves: the notes say which */
	if (size_parse(a.budget, graph_peak_all(g), &budget, &err)) {
		rc = cli_usage("maxbatch", "--budget: %s", err.msg);
		goto out;
	}
	if (strcmp(a.strategies, "all") == 0) {
		for (int i = 0; i < baseline_count; i++)
			names[n++] = baseline_table[i].name;
		names[n++] = "ilp";
	} else {
		char *copy = strdup(a.strategies), *tok, *save = NULL;

		for (tok = strtok_r(copy, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save)) {
			const char *known = strcmp(tok, "ilp") == 0 ? "ilp" : NULL;

			if (baseline_find(tok))
				known = baseline_find(tok)->name;
			if (known == NULL) {
				rc = cli_usage("maxbatch", "--strategies: unknown strategy '%s'", tok);
				free(copy);
				goto out;
			}
			names[n++] = known;
		}
		free(copy);
	}
	for (int k = 0; k < g->n; k++)
		*(g->nodes[k].backward ? &bwd : &fwd) += g->nodes[k].cost;
	ratio = a.max_overhead > 0 ? a.max_overhead :
		(fwd + bwd > 0 ? (2 * fwd + bwd) / (fwd + bwd) : 1);
	for (int i = 0; i < n; i++) {
		double t0 = cm_clock();

		struct batch_request br = { names[i], budget, ratio, &settings };

		cli_note(a.sh.quiet, "searching the largest batch for %s", names[i]);
		if (batch_search(g, &br, &ans[i], &err)) {
			rc = cli_error("%s: %s", g->id, err.msg);
			goto out;
		}
		ans[i].seconds = cm_clock() - t0;
	}
	if (a.sh.csv) {
		if (out_open(&csv, a.sh.csv, &err)) {
			rc = cli_error("%s", err.msg);
			goto out;
		}
		if (a.sh.header)
			csv_header(csv.f);
		for (int i = 0; i < n; i++) {
			struct csv_row r = { .graph = g->id, .strategy = ans[i].strategy,
					     .param = ans[i].param, .solver = ans[i].solver,
					     .budget = budget, .feasible = ans[i].batch > 0,
					     .has_cost = ans[i].batch > 0, .cost = ans[i].cost,
					     .overhead = ans[i].overhead, .peak = ans[i].peak,
					     .seconds = ans[i].seconds,
					     .status = ans[i].proven ? "optimal" : "feasible" };

			if (ans[i].batch == 0)
				r.status = ans[i].unsupported ? "unsupported" : "infeasible";
			csv_row(csv.f, &r);
		}
		if (out_commit(&csv, &err)) {
			rc = cli_error("%s", err.msg);
			goto out;
		}
	}
	if (!(a.sh.csv && strcmp(a.sh.csv, "-") == 0))
		print_table(g, budget, ratio, ans, n);
	rc = fflush(stdout) == 0 ? CM_EXIT_OK : cli_error("standard output: write failed");
out:
	out_abort(&csv);
	graph_free(g);
	return rc;
}

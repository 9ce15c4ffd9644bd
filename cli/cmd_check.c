/* checkmate check GRAPH PLAN: replays a plan and says whether it is valid
 * and within budget, naming the first step that is not. */
#include <getopt.h>
#include <stdio.h>

#include "../plan/io.h"
#include "../plan/sim.h"
#include "cli.h"
#include "options.h"

static const char check_usage[] =
	"usage: checkmate check GRAPH PLAN [--budget SIZE]\n\n"
	"Replays the plan file PLAN (JSON, '-' for standard input) on GRAPH under\n"
	"the memory model and prints its cost and peak memory. Exits 1,\n"
	"naming the step, when a compute's input is not resident, a value is\n"
	"computed while resident or freed while not, a node is never computed, or\n"
	"the peak exceeds the budget: --budget, else the budget the plan records.\n\n"
	"  -b, --budget SIZE  memory budget (16G, 1.5GB, 80%, bytes)\n"
	"  -q, --quiet        no messages on standard error\n"
	"  -h, --help         this text\n";

int cmd_check_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct cli_args){ .header = 1 };
	optind = 0;
	while ((c = cli_getopt("check", argc, argv, ":b:qh", opts)) != -1)
		switch (c) {
		case 'b': a->budget = optarg; break;
		case 'q': a->quiet = 1; break;
		case 'h': fputs(check_usage, cli_help()); return -1;
		default: return CM_EXIT_USAGE;
		}
	if (argc - optind != 2)
		return cli_usage("check", "expected GRAPH and PLAN");
	a->graph = argv[optind];
	a->plan = argv[optind + 1];
	return 0;
}

int cmd_check_main(int argc, char **argv)
{
	const char *budget_arg, *plan_path;
	struct cli_args a;
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct sim_result res;
	struct cm_error err;
	uint64_t budget = SIM_NO_BUDGET;
	char h1[32], h2[32];
	int rc = cmd_check_parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	rc = CM_EXIT_ERROR;
	budget_arg = a.budget;
	plan_path = a.plan;
	g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		goto out;
	if (budget_arg && size_parse(budget_arg, graph_peak_all(g), &budget, &err)) {
		rc = cli_usage("check", "%s", err.msg);
		goto out;
	}
	p = plan_read_file(plan_path, g, &err);
	if (p == NULL) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (budget_arg == NULL && p->budget)
		budget = p->budget;
	if (plan_simulate(g, p, budget, &res, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (!res.valid || !res.fits) {
		cli_error("%s: %s", plan_path, res.why);
		goto out;
	}
	printf("%s: valid plan of %d steps, cost %.17g, peak memory %llu (%s)",
	       plan_path, p->n, res.cost, (unsigned long long)res.peak,
	       size_human(res.peak, h1, sizeof(h1)));
	if (budget != SIM_NO_BUDGET)
		printf(", within the budget %llu (%s)", (unsigned long long)budget,
		       size_human(budget, h2, sizeof(h2)));
	printf("\n");
	rc = fflush(stdout) == 0 ? CM_EXIT_OK : cli_error("standard output: write failed");
out:
	plan_free(p);
	graph_free(g);
	return rc;
}

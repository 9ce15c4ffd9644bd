/* checkmate check GRAPH PLAN: replays a plan and says whether it is valid
 * and within budget, naming the first step that is not; with --bandwidth,
 * a plan that offloads values to host memory, in time. */
#include <getopt.h>
#include <stdio.h>

#include "../plan/io.h"
#include "../plan/sim.h"
#include "cli.h"
#include "options.h"

static const char check_usage[] =
	"usage: checkmate check GRAPH PLAN [--budget SIZE]\n"
	"                      [--bandwidth B [--rate R] [--host-budget SIZE]]\n\n"
	"Replays the plan file PLAN (JSON, '-' for standard input) on GRAPH under\n"
	"the memory model and prints its cost and peak memory. Exits 1,\n"
	"naming the step, when a compute's input is not resident, a value is\n"
	"computed while resident or freed while not, a node is never computed, or\n"
	"the peak exceeds the budget: --budget, else the budget the plan records.\n"
	"With --bandwidth, the plan may offload values to host memory and fetch\n"
	"them back; it is replayed in time, and its time and host peak are printed\n"
	"too (docs/formats.md, Offload to host memory).\n\n"
	"  -b, --budget SIZE       memory budget (16G, 1.5GB, 80%, bytes)\n"
	"      --bandwidth B       the copy bandwidth to and from host memory (25GB/s)\n"
	"      --rate R            cost units a second (312TFLOP/s), for a graph whose\n"
	"                          cost_unit is flops or absent\n"
	"      --host-budget SIZE  the most host memory the copies may hold at once\n"
	"  -q, --quiet             no messages on standard error\n"
	"  -h, --help              this text\n";

int cmd_check_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "bandwidth", required_argument, NULL, 'B' },
		{ "rate", required_argument, NULL, 'R' },
		{ "host-budget", required_argument, NULL, 'O' },
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
		case 'B': a->bandwidth = optarg; break;
		case 'R': a->rate = optarg; break;
		case 'O': a->host_budget = optarg; break;
		case 'q': a->quiet = 1; break;
		case 'h': fputs(check_usage, cli_help()); return -1;
		default: return CM_EXIT_USAGE;
		}
	if (argc - optind != 2)
		return cli_usage("check", "expected GRAPH and PLAN");
	if ((a->rate || a->host_budget) && !a->bandwidth)
		return cli_usage("check", "%s needs --bandwidth",
				 a->rate ? "--rate" : "--host-budget");
	a->graph = argv[optind];
	a->plan = argv[optind + 1];
	return 0;
}

/* The summary line of a valid plan. */
static void print_summary(const struct cli_args *a, const struct plan *p,
			  const struct sim_result *res, uint64_t budget, uint64_t host_budget)
{
	char h[32];

	printf("%s: valid plan of %d steps, cost %.17g", a->plan, p->n, res->cost);
	if (a->bandwidth)
		printf(", time %.9g s (%.9g s waiting for copies)", res->time, res->wait);
	printf(", peak memory %llu (%s)", (unsigned long long)res->peak,
	       size_human(res->peak, h, sizeof(h)));
	if (a->bandwidth)
		printf(", host peak %llu (%s)", (unsigned long long)res->host_peak,
		       size_human(res->host_peak, h, sizeof(h)));
	if (budget != SIM_NO_BUDGET)
		printf(", within the budget %llu (%s)", (unsigned long long)budget,
		       size_human(budget, h, sizeof(h)));
	if (host_budget)
		printf(", within the host budget %llu (%s)", (unsigned long long)host_budget,
		       size_human(host_budget, h, sizeof(h)));
	printf("\n");
}

int cmd_check_main(int argc, char **argv)
{
	struct cli_args a;
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct sim_result res;
	struct sim_copy copy;
	struct cm_error err;
	uint64_t budget = SIM_NO_BUDGET;
	int rc = cmd_check_parse(argc, argv, &a), first;

	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	rc = CM_EXIT_ERROR;
	g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		goto out;
	if (a.budget && size_parse(a.budget, graph_peak_all(g), &budget, &err)) {
		rc = cli_usage("check", "%s", err.msg);
		goto out;
	}
	if (a.bandwidth && (rc = cli_copy_rates("check", &a, g, &copy)) != 0)
		goto out;
	rc = CM_EXIT_ERROR;
	p = plan_read_file(a.plan, g, &err);
	if (p == NULL) {
		cli_error("%s", err.msg);
		goto out;
	}
	first = plan_first_copy(p);
	if (a.bandwidth == NULL && first >= 0) {
		cli_error("%s: step %d: %s '%s': a plan with copies needs --bandwidth (a copy "
			  "has no duration without one)", a.plan, first + 1,
			  plan_op_name(p->steps[first].op), g->nodes[p->steps[first].node].name);
		goto out;
	}
	if (a.budget == NULL && p->budget)
		budget = p->budget;
	if (plan_simulate_copies(g, p, budget, a.bandwidth ? &copy : NULL, &res, NULL, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (!res.valid || !res.fits) {
		cli_error("%s: %s", a.plan, res.why);
		goto out;
	}
	print_summary(&a, p, &res, budget, a.bandwidth ? copy.host_budget : 0);
	rc = fflush(stdout) == 0 ? CM_EXIT_OK : cli_error("standard output: write failed");
out:
	plan_free(p);
	graph_free(g);
	return rc;
}

/* checkmate partition GRAPH --budget SIZE: which forward values a
 * two-program step (forward, then backward, each compiled whole) keeps,
 * at the least cost of computing the others again; the answer to a file,
 * the figures to standard output. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../common/clock.h"
#include "../plan/io.h"
#include "../solvers/milp/partition.h"
#include "cli.h"
#include "options.h"

static const char partition_usage[] =
	"usage: checkmate partition [GRAPH] --budget SIZE [-o FILE] [options]\n\n"
	"Splits GRAPH (default: the built-in example " CLI_DEFAULT_GRAPH ") into a forward\n"
	"and a backward program, as a graph compiler runs a training step: the\n"
	"forward keeps some of its values for the backward, and the backward\n"
	"computes the other forward values it reads again. Finds the set of kept\n"
	"values of least cost (the nodes computed again, and each kept value's\n"
	"save_cost) whose memory fits SIZE: fixed memory, the kept values until the\n"
	"backward is done with them, and the backward's own values and\n"
	"workspaces; the intermediates inside each program are not counted (a\n"
	"compiler fuses them away). 'optimal' means the solver proved it. Exits 3\n"
	"when SIZE is below fixed memory and the backward's own values at their\n"
	"peak.\n\n"
	"  -b, --budget SIZE        16G, 1.5GB, 512MiB, 80% (of the memory when the\n"
	"                           forward keeps every value) or a byte count\n"
	"  -o, --output FILE|-      write the partition (JSON) to FILE\n"
	"      --solver NAME        cbc (default) or glpk\n"
	"  -t, --time-limit SEC     stop the solve after SEC seconds (default 60; 0:\n"
	"                           none) with the best partition found\n"
	"      --gap FRAC           stop within FRAC of the least cost, the bound\n"
	"                           proving it (default 1e-3; 0: prove optimal)\n"
	"  -q, --quiet              no messages on standard error\n"
	"  -h, --help               this text\n";

int cmd_partition_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "solver", required_argument, NULL, 'S' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "gap", required_argument, NULL, 'G' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cm_error err;
	int c;

	*a = (struct cli_args){ .time_limit = STRATEGY_TIME_LIMIT, .gap = PARTITION_GAP };
	optind = 0;
	while ((c = cli_getopt("partition", argc, argv, ":b:o:t:qh", opts)) != -1)
		switch (c) {
		case 'b': a->budget = optarg; break;
		case 'o': a->plan = optarg; break;
		case 'S':
			if (cli_take_solver("partition", optarg, a))
				return CM_EXIT_USAGE;
			break;
		case 't':
			if (cli_parse_double("--time-limit", optarg, 0, 1e9, &a->time_limit, &err))
				return cli_usage("partition", "%s", err.msg);
			break;
		case 'G':
			if (cli_parse_double("--gap", optarg, 0, 1, &a->gap, &err))
				return cli_usage("partition", "%s", err.msg);
			break;
		case 'q': a->quiet = 1; break;
		case 'h': fputs(partition_usage, cli_help()); return -1;
		default: return CM_EXIT_USAGE;
		}
	if (argc - optind > 1)
		return cli_usage("partition", "expected at most one GRAPH");
	a->graph = optind < argc ? argv[optind] : NULL;
	if (a->budget == NULL)
		return cli_usage("partition", "--budget is required");
	return 0;
}

/* The names of the nodes flagged in set, as a JSON array. */
static void name_list(FILE *f, const struct graph *g, const char *set)
{
	int first = 1;

	fputc('[', f);
	for (int v = 0; v < g->n; v++)
		if (set[v]) {
			fputs(first ? "" : ", ", f);
			plan_json_string(f, g->nodes[v].name);
			first = 0;
		}
	fputc(']', f);
}

/* The partition file (docs/formats.md, Partitions), whole or not at all;
 * keep_cost: the cost of the partition that saves every value the
 * backward reads, which the overhead is over. */
static int write_partition(struct out *o, const struct graph *g, uint64_t budget,
			   const struct partition *p, double keep_cost, double seconds)
{
	struct cm_error err;

	fprintf(o->f, "{\"format\": \"checkmate-partition\", \"version\": 1, \"graph\": ");
	plan_json_string(o->f, g->id);
	fprintf(o->f, ", \"budget\": %llu, \"status\": \"%s\", \"cost\": %.17g, "
		"\"overhead\": %.17g, \"memory\": %llu, \"least_memory\": %llu, ",
		(unsigned long long)budget, partition_status_names[p->status], p->cost,
		p->cost / (keep_cost > 0 ? keep_cost : 1), (unsigned long long)p->memory,
		(unsigned long long)p->least);
	if (p->has_bound)
		fprintf(o->f, "\"lower_bound\": %.17g, ", p->bound);
	fprintf(o->f, "\"seconds\": %.3f,\n \"saved\": ", seconds);
	name_list(o->f, g, p->saved);
	fprintf(o->f, ",\n \"recomputed\": ");
	name_list(o->f, g, p->again);
	fprintf(o->f, "}\n");
	if (out_commit(o, &err))
		return cli_error("%s", err.msg);
	return 0;
}

static void print_summary(FILE *f, const struct graph *g, uint64_t budget,
			  const struct partition *p, double keep_cost, double seconds)
{
	char h[32], h2[32];

	fprintf(f, "graph        %s\nbudget       %llu (%s)\nstatus       %s\n", g->id,
		(unsigned long long)budget, size_human(budget, h, sizeof(h)),
		partition_status_names[p->status]);
	if (p->status == PARTITION_INFEASIBLE && p->by_solver) {
		fprintf(f, "reason       the solver proved that no saved set fits: the values "
			"the backward reads take memory where they are first read\n");
		return;
	}
	if (p->status == PARTITION_INFEASIBLE) {
		fprintf(f, "reason       the budget is below %llu (%s): fixed memory and the "
			"backward's own values at their peak\n", (unsigned long long)p->least,
			size_human(p->least, h, sizeof(h)));
		return;
	}
	if (p->status == PARTITION_NO_PLAN) {
		fprintf(f, "reason       no saved set found within the budget in %d rounds or "
			"the time limit (none proven)\ntime         %.3f s\n", PARTITION_ROUNDS,
			seconds);
		return;
	}
	fprintf(f, "cost         %.17g (overhead %.4fx over keeping all, %.17g)\n", p->cost,
		p->cost / (keep_cost > 0 ? keep_cost : 1), keep_cost);
	fprintf(f, "memory       %llu (%s; fixed %s, %d values saved)\n",
		(unsigned long long)p->memory, size_human(p->memory, h, sizeof(h)),
		size_human(g->fixed_memory, h2, sizeof(h2)), p->n_saved);
	fprintf(f, "recomputed   %d nodes\n", p->n_again);
	if (p->has_bound)
		fprintf(f, "lower bound  %.17g (gap %.4f%%)\n", p->bound,
			100 * (p->cost - p->bound) / (p->cost > 0 ? p->cost : 1));
	fprintf(f, "time         %.3f s\n", seconds);
}

int cmd_partition_main(int argc, char **argv)
{
	struct cli_args a;
	struct partition p = { 0 };
	struct out out = { 0 };
	struct cm_error err;
	struct solve_opts so = { 0 };
	const struct solver_ops *ops;
	struct graph *g;
	uint64_t budget, keep_all;
	double t0, keep_cost;
	int rc = cmd_partition_parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	cli_catch_interrupts(a.quiet);
	g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	if (partition_keep_all(g, &keep_all, &keep_cost)) {
		rc = cli_error("%s: out of memory", g->id);
		goto out;
	}
	if (size_parse(a.budget, keep_all, &budget, &err)) {
		rc = cli_usage("partition", "--budget: %s", err.msg);
		goto out;
	}
	if (a.plan && out_open(&out, a.plan, &err)) {
		rc = cli_error("%s", err.msg);
		goto out;
	}
	ops = solver_find(a.solver ? a.solver : SOLVER_DEFAULT);
	so.time_limit = a.time_limit;
	so.gap = a.gap;
	t0 = cm_clock();
	if (partition_solve(g, budget, ops, &so, &p, &err)) {
		rc = cli_error("%s: %s", g->id, err.msg);
		goto out;
	}
	if (p.status == PARTITION_INFEASIBLE || p.status == PARTITION_NO_PLAN) {
		print_summary(a.plan && strcmp(a.plan, "-") == 0 ? stderr : stdout, g, budget, &p,
			      keep_cost, cm_clock() - t0);
		rc = p.status == PARTITION_INFEASIBLE ? CM_EXIT_INFEASIBLE : CM_EXIT_NO_PLAN;
		goto out;
	}
	if (a.plan && (rc = write_partition(&out, g, budget, &p, keep_cost, cm_clock() - t0)))
		goto out;
	if (a.plan && strcmp(a.plan, "-") == 0) {
		fflush(stdout);
		if (!a.quiet)
			print_summary(stderr, g, budget, &p, keep_cost, cm_clock() - t0);
	} else {
		print_summary(stdout, g, budget, &p, keep_cost, cm_clock() - t0);
	}
	if (fflush(stdout) != 0)
		rc = cli_error("standard output: write failed");
out:
	out_abort(&out);
	partition_release(&p);
	graph_free(g);
	return rc;
}

/* checkmate solve GRAPH --budget SIZE: one strategy at one budget; the plan
 * to a file, the figures to standard output and, with --csv, as a row. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../plan/io.h"
#include "cli.h"
#include "options.h"

static const char solve_usage[] =
	"usage: checkmate solve [GRAPH] --budget SIZE [options]\n\n"
	"Finds the cheapest plan for GRAPH (default: the built-in example\n"
	CLI_DEFAULT_GRAPH ") whose peak memory fits SIZE, fixed memory included.\n"
	"Every plan is replayed by the simulator; the cost and peak printed are\n"
	"the replayed ones; 'optimal' means the solver proved it. Exits 3 when no\n"
	"plan fits (proven for ilp), 4 when the time limit ends the search first.\n\n"
	"  -b, --budget SIZE        16G, 1.5GB, 512MiB, 80% (of the checkpoint-all\n"
	"                           peak) or a byte count\n"
	"  -s, --strategy NAME      ilp (default: the optimal MILP), approx (LP\n"
	"                           rounding, with the LP value as lower bound),\n"
	"                           checkpoint-all,\n"
	"                           chen-sqrtn, chen-greedy, ap-sqrtn, ap-greedy,\n"
	"                           linearized-sqrtn or linearized-greedy\n"
	"      --write-lp FILE      write the MILP in CPLEX LP format\n"
	"      --bound              baselines: a lower bound on the cost too, from\n"
	"                           the LP relaxation (ilp and approx have one)\n"
	"      --seed N             approx: seed of the randomized rounding (default 1)\n"
	"      --samples N          approx: random roundings per LP (default 16)\n"
	"  -o, --plan FILE          write the plan to FILE\n"
	"      --plan-format F      json (default) or text\n"
	CLI_SHARED_HELP;

struct solve_args {
	const char *graph, *budget, *strategy, *plan, *lp;
	unsigned long long seed;
	int samples, text, bound;
	struct cli_shared sh;
};

static int parse_args(int argc, char **argv, struct solve_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "strategy", required_argument, NULL, 's' },
		{ "plan", required_argument, NULL, 'o' },
		{ "plan-format", required_argument, NULL, 'F' },
		{ "write-lp", required_argument, NULL, 'L' },
		{ "bound", no_argument, NULL, 'B' },
		{ "seed", required_argument, NULL, 'R' },
		{ "samples", required_argument, NULL, 'N' },
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cm_error err;
	double v;
	int c;

	*a = (struct solve_args){ .strategy = STRATEGY_DEFAULT };
	cli_shared_init(&a->sh);
	optind = 0;
	while ((c = cli_getopt("solve", argc, argv, ":b:s:o:" CLI_SHARED_SHORTOPTS, opts)) != -1)
		switch (c) {
		case 'L': a->lp = optarg; break;
		case 'B': a->bound = 1; break;
		case 'R':
			if (cli_parse_whole("--seed", optarg, 0, 9007199254740992.0, &v, &err))
				return cli_usage("solve", "%s", err.msg);
			a->seed = (unsigned long long)v;
			break;
		case 'N':
			if (cli_parse_whole("--samples", optarg, 0, 100000, &v, &err))
				return cli_usage("solve", "%s", err.msg);
			a->samples = (int)v;
			break;
		case 'b': a->budget = optarg; break;
		case 's': a->strategy = optarg; break;
		case 'o': a->plan = optarg; break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
				return cli_usage("solve", "--plan-format must be json or text, not '%s'",
						 optarg);
			a->text = optarg[0] == 't';
			break;
		default:
			c = cli_shared_option("solve", solve_usage, c, optarg, &a->sh);
			if (c != 1)
				return c ? c : CM_EXIT_USAGE;
		}
	if (argc - optind > 1)
		return cli_usage("solve", "expected at most one GRAPH");
	if (a->budget == NULL)
		return cli_usage("solve", "--budget is required");
	if ((a->plan && a->sh.csv && strcmp(a->plan, a->sh.csv) == 0) ||
	    (a->plan && a->lp && strcmp(a->plan, a->lp) == 0) ||
	    (a->lp && a->sh.csv && strcmp(a->lp, a->sh.csv) == 0))
		return cli_usage("solve", "two outputs name the same file");
	a->graph = optind < argc ? argv[optind] : NULL;
	return 0;
}

static void print_summary(FILE *f, const struct graph *g, const struct solve_request *rq,
			  const struct solve_outcome *o)
{
	double floor_cost = graph_total_cost(g);
	char h[32];

	fprintf(f, "graph        %s\nstrategy     %s", g->id, rq->strategy);
	if (o->solver[0])
		fprintf(f, " (%s; model of %d columns, %d rows, %d nonzeros)", o->solver,
			o->cols, o->rows, o->nnz);
	if (o->param[0])
		fprintf(f, " (%s)", o->param);
	fputc('\n', f);
	fprintf(f, "budget       %llu (%s)\nstatus       %s\n",
		(unsigned long long)rq->budget, size_human(rq->budget, h, sizeof(h)),
		o->status);
	if (o->why[0])
		fprintf(f, "reason       %s\n", o->why);
	if (o->plan == NULL)
		return;
	fprintf(f, "cost         %.17g (overhead %.4fx over checkpoint-all %.17g)\n",
		o->sim.cost, o->sim.cost / (floor_cost > 0 ? floor_cost : 1), floor_cost);
	fprintf(f, "peak memory  %llu (%s, %.1f%% of budget)\n",
		(unsigned long long)o->sim.peak, size_human(o->sim.peak, h, sizeof(h)),
		rq->budget ? 100.0 * (double)o->sim.peak / (double)rq->budget : 0.0);
	if (o->has_lower_bound)
		fprintf(f, "lower bound  %.17g (gap %.4f%%)\n", o->lower_bound,
			100 * (o->sim.cost - o->lower_bound) / (o->sim.cost > 0 ? o->sim.cost : 1));
	fprintf(f, "steps        %d\n", o->plan->n);
	fprintf(f, "time         %.3f s\n", o->seconds);
}

/* Writes the plan (when it fits) and the CSV row, each whole or not at all. */
static int write_outputs(const struct solve_args *a, const struct graph *g,
			 const struct solve_request *rq, const struct solve_outcome *o)
{
	struct out plan_out = { 0 }, csv_out = { 0 };
	struct cm_error err;
	struct csv_row row;

	if (a->plan && o->plan && o->sim.fits) {
		if (out_open(&plan_out, a->plan, &err))
			return cli_error("%s", err.msg);
		if ((a->text ? plan_write_text : plan_write_json)(plan_out.f, g, o->plan) ||
		    out_commit(&plan_out, &err)) {
			out_abort(&plan_out);
			return cli_error("%s: write failed", a->plan);
		}
	}
	if (a->sh.csv) {
		if (out_open(&csv_out, a->sh.csv, &err))
			return cli_error("%s", err.msg);
		if (a->sh.header)
			csv_header(csv_out.f);
		csv_row_of_outcome(&row, g, rq->strategy, rq->budget, o);
		csv_row(csv_out.f, &row);
		if (out_commit(&csv_out, &err))
			return cli_error("%s", err.msg);
	}
	return 0;
}

static int exit_status(const char *status)
{
	if (strcmp(status, "infeasible") == 0)
		return CM_EXIT_INFEASIBLE;
	if (strcmp(status, "timeout") == 0 || strcmp(status, "no_plan") == 0)
		return CM_EXIT_NO_PLAN;
	if (strcmp(status, "unsupported") == 0)
		return CM_EXIT_ERROR;
	return CM_EXIT_OK;
}

int cmd_solve_main(int argc, char **argv)
{
	struct solve_args a;
	struct solve_request rq = { 0 };
	struct solve_outcome o = { 0 };
	struct out lp = { 0 };
	struct cm_error err;
	struct graph *g;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	g = cli_load_graph(a.graph, a.sh.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	rq = (struct solve_request){ .strategy = a.strategy, .seed = a.seed,
				     .samples = a.samples, .bound = a.bound };
	cli_shared_request(&a.sh, &rq);
	if (size_parse(a.budget, graph_peak_all(g), &rq.budget, &err)) {
		rc = cli_usage("solve", "--budget: %s", err.msg);
		goto out;
	}
	if (a.lp) {
		if (out_open(&lp, a.lp, &err)) {
			rc = cli_error("%s", err.msg);
			goto out;
		}
		rq.lp_out = lp.f;
	}
	rc = strategy_solve(g, &rq, &o, &err) ? cli_error("%s: %s", g->id, err.msg) : 0;
	/* The model file is complete once built, whatever the solve did next:
	 * it is what one looks at when a solve fails. */
	if (a.lp && o.cols == 0)
		cli_note(a.sh.quiet, "%s: no model was built (%s), so no LP file", a.lp,
			 o.why[0] ? o.why : "not the ilp strategy");
	else if (a.lp && out_commit(&lp, &err))
		rc = cli_error("%s", err.msg);
	if (rc)
		goto out;
	if (write_outputs(&a, g, &rq, &o)) {
		rc = CM_EXIT_ERROR;
		goto out;
	}
	/* With the CSV on standard output, the summary would garble it. */
	if (!(a.sh.csv && strcmp(a.sh.csv, "-") == 0))
		print_summary(stdout, g, &rq, &o);
	rc = exit_status(o.status);
	if (fflush(stdout) != 0)
		rc = cli_error("standard output: write failed");
out:
	out_abort(&lp);
	strategy_outcome_release(&o);
	graph_free(g);
	return rc;
}

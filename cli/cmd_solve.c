/* checkmate solve GRAPH --budget SIZE: one strategy at one budget; the plan
 * to a file, the figures to standard output and, with --csv, as a row. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../plan/io.h"
#include "cli.h"
#include "jsonl.h"
#include "options.h"

static const char solve_usage[] =
	"usage: checkmate solve [GRAPH] --budget SIZE [options]\n\n"
	"Finds the cheapest plan for GRAPH (default: the built-in example\n"
	CLI_DEFAULT_GRAPH ") whose peak memory fits SIZE, fixed memory included.\n"
	"Every plan is replayed by the simulator; the cost and peak printed are\n"
	"the replayed ones; 'optimal' means the solver proved it. Exits 3 when no\n"
	"plan fits (proven for ilp), 4 when the time limit ends the search first.\n"
	"A first SIGINT or SIGTERM ends the search with the best plan so far (exit\n"
	"0, or 4 without one); a second ends the process at once.\n\n"
	"  -b, --budget SIZE        16G, 1.5GB, 512MiB, 80% (of the checkpoint-all\n"
	"                           peak) or a byte count\n"
	"  -s, --strategy NAME      one of the strategies below (default: "
	STRATEGY_DEFAULT ")\n"
	"      --write-lp FILE      write the MILP in CPLEX LP format\n"
	"      --bound              a strategy without a bound of its own gets one\n"
	"                           from the LP relaxation (ilp and approx have one)\n"
	"      --seed N             approx: seed of the randomized rounding (default 1)\n"
	"      --samples N          approx: random roundings per LP (default 16)\n"
	"      --bandwidth B        copies to host memory at B (25GB/s): plans are\n"
	"                           replayed in time; auto, ilp and the offload rows copy\n"
	"      --rate R             cost units a second (312TFLOP/s), for a graph whose\n"
	"                           cost_unit is flops or absent (with --bandwidth)\n"
	"      --host-budget SIZE   the most host memory copies may hold (with\n"
	"                           --bandwidth)\n"
	"  -o, --plan FILE          write the plan to FILE\n"
	"      --plan-format F      json (default) or text\n"
	"      --first-plan FILE    auto: write its first plan that fits to FILE as\n"
	"                           soon as it has one, then search on (the best\n"
	"                           plan still goes to --plan at the end)\n"
	CLI_JSON_HELP
	CLI_SHARED_HELP;

int cmd_solve_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "strategy", required_argument, NULL, 's' },
		{ "plan", required_argument, NULL, 'o' },
		{ "plan-format", required_argument, NULL, 'F' },
		{ "first-plan", required_argument, NULL, 'V' },
		{ "write-lp", required_argument, NULL, 'L' },
		{ "bound", no_argument, NULL, 'D' },
		{ "seed", required_argument, NULL, 'R' },
		{ "samples", required_argument, NULL, 'N' },
		{ "bandwidth", required_argument, NULL, 'K' },
		{ "rate", required_argument, NULL, 'E' },
		{ "host-budget", required_argument, NULL, 'O' },
		CLI_JSON_LONGOPT,
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int rc = cli_parse("solve", solve_usage, opts, ":b:s:o:" CLI_SHARED_SHORTOPTS, argc,
			   argv, a);
	const struct strategy *s;
	struct solve_request rq = { 0 };
	struct cm_error err;

	if (rc)
		return rc;
	if (a->strategy == NULL)
		a->strategy = STRATEGY_DEFAULT;
	/* An unknown strategy, a parameter it does not take or a value it
	 * does not allow is a usage error. */
	cli_request(a, &rq);
	if ((s = strategy_find(a->strategy, &err)) == NULL ||
	    strategy_check_params(&s, 1, &rq, &err))
		return cli_usage("solve", "%s", err.msg);
	if (a->budget == NULL)
		return cli_usage("solve", "--budget is required");
	if ((a->rate || a->host_budget) && !a->bandwidth)
		return cli_usage("solve", "%s needs --bandwidth",
				 a->rate ? "--rate" : "--host-budget");
	if ((s->flags & STRATEGY_COPIES) && !a->bandwidth)
		return cli_usage("solve", "strategy '%s' makes plans with copies: it needs "
				 "--bandwidth", s->name);
	if (a->first_plan && (strcmp(a->strategy, "auto") != 0 || a->bandwidth))
		return cli_usage("solve", "--first-plan is auto's, without --bandwidth");
	return cli_distinct_outputs("solve", (const char *const[]){ a->plan, a->csv, a->lp,
								    a->json, a->first_plan }, 5);
}

static int is_stdout(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

static void print_summary(FILE *f, const struct graph *g, const struct solve_request *rq,
			  const struct solve_outcome *o)
{
	double floor_cost = graph_total_cost(g);
	char h[32];

	fprintf(f, "graph        %s\nstrategy     %s", g->id, rq->strategy);
	if (o->solver[0] && o->cols)
		fprintf(f, " (%s; model of %d columns, %d rows, %d nonzeros)", o->solver,
			o->cols, o->rows, o->nnz);
	else if (o->solver[0])
		fprintf(f, " (%s)", o->solver);
	if (o->param[0])
		fprintf(f, " (%s)", o->param);
	fputc('\n', f);
	fprintf(f, "budget       %llu (%s)\nstatus       %s\n",
		(unsigned long long)rq->budget, size_human(rq->budget, h, sizeof(h)),
		strategy_status_names[o->status]);
	if (o->why[0])
		fprintf(f, "reason       %s\n", o->why);
	if (o->plan == NULL)
		return;
	fprintf(f, "cost         %.17g (overhead %.4fx over checkpoint-all %.17g)\n",
		o->sim.cost, o->sim.cost / (floor_cost > 0 ? floor_cost : 1), floor_cost);
	if (rq->copy)
		fprintf(f, "step time    %.9g s (%.9g s waiting for copies)\n", o->sim.time,
			o->sim.wait);
	fprintf(f, "peak memory  %llu (%s, %.1f%% of budget)\n",
		(unsigned long long)o->sim.peak, size_human(o->sim.peak, h, sizeof(h)),
		rq->budget ? 100.0 * (double)o->sim.peak / (double)rq->budget : 0.0);
	if (rq->copy)
		fprintf(f, "host peak    %llu (%s)\n", (unsigned long long)o->sim.host_peak,
			size_human(o->sim.host_peak, h, sizeof(h)));
	if (o->has_lower_bound && o->has_time_bound)
		fprintf(f, "lower bound  %.17g (step time %.9g s, gap %.4f%% in time)\n",
			o->lower_bound, o->time_bound,
			100 * (o->sim.time - o->time_bound) / (o->sim.time > 0 ? o->sim.time : 1));
	else if (o->has_lower_bound)
		fprintf(f, "lower bound  %.17g (gap %.4f%%)\n", o->lower_bound,
			100 * (o->sim.cost - o->lower_bound) / (o->sim.cost > 0 ? o->sim.cost : 1));
	fprintf(f, "steps        %d\n", o->plan->n);
	fprintf(f, "time         %.3f s\n", o->seconds);
}

/* The outputs of a solve, opened before it starts so that a path that
 * cannot be written fails at once rather than after the work. */
struct outputs {
	struct out plan, csv, json, lp, first;
	const struct graph *g; /* for first */
	int text;              /* --plan-format text */
};

/* solve_request's first_plan: the plan into --first-plan, whole (renamed
 * into place) or not at all. */
static void write_first(void *ctx, const struct plan *p)
{
	struct outputs *o = ctx;
	struct cm_error err;

	/* A failed write leaves it to abort_outputs (no file). */
	if ((o->text ? plan_write_text : plan_write_json)(o->first.f, o->g, p) == 0)
		out_commit(&o->first, &err);
}

static int open_outputs(const struct cli_args *a, struct outputs *o, struct cm_error *err)
{
	return (a->first_plan && out_open(&o->first, a->first_plan, err)) ||
	       (a->plan && out_open(&o->plan, a->plan, err)) ||
	       (a->csv && out_open(&o->csv, a->csv, err)) ||
	       (a->json && out_open(&o->json, a->json, err)) ||
	       (a->lp && out_open(&o->lp, a->lp, err)) ? -1 : 0;
}

static void abort_outputs(struct outputs *o)
{
	out_abort(&o->plan);
	out_abort(&o->csv);
	out_abort(&o->json);
	out_abort(&o->lp);
	out_abort(&o->first); /* a no-op once write_first committed it */
}

/* The --json line: the CSV row's fields and the plan's summary. */
static int write_json(const struct cli_args *a, struct out *json, const struct graph *g,
		      const struct solve_request *rq, const struct strategy_row *row,
		      const struct solve_outcome *o)
{
	struct jsonl_plan p = { .has_plan = o->plan != NULL,
				.checkpoint_all_cost = graph_total_cost(g),
				.reason = o->why, .cols = o->cols, .rows = o->rows,
				.nnz = o->nnz, .has_time = rq->copy && o->plan,
				.time = o->sim.time, .wait = o->sim.wait,
				.host_peak = o->sim.host_peak };
	struct cm_error err;

	if (a->plan && o->plan && o->sim.fits && strcmp(a->plan, "-") != 0)
		p.plan_file = a->plan;
	for (int i = 0; o->plan && i < o->plan->n; i++) {
		p.steps++;
		p.computes += o->plan->steps[i].op == PLAN_COMPUTE;
	}
	if (jsonl_row(json->f, row, &p, &err) || out_commit(json, &err))
		return cli_error("%s", err.msg);
	return 0;
}

/* Writes the plan (when it fits; else its file is not made), the CSV row
 * and the JSON line, each whole or not at all. */
static int write_outputs(const struct cli_args *a, struct outputs *out, const struct graph *g,
			 const struct solve_request *rq, const struct solve_outcome *o)
{
	struct cm_error err;
	struct strategy_row row;

	strategy_row_of_outcome(&row, g, rq->strategy, rq->budget, o);
	if (a->plan && o->plan && o->sim.fits) {
		if ((a->text ? plan_write_text : plan_write_json)(out->plan.f, g, o->plan) ||
		    out_commit(&out->plan, &err))
			return cli_error("%s: write failed", a->plan);
	}
	out_abort(&out->plan);
	if (a->csv) {
		if (a->header)
			csv_header(out->csv.f, rq->copy != NULL);
		csv_row(out->csv.f, &row, rq->copy != NULL);
		if (out_commit(&out->csv, &err))
			return cli_error("%s", err.msg);
	}
	return a->json ? write_json(a, &out->json, g, rq, &row, o) : 0;
}

static int exit_status(int status)
{
	switch (status) {
	case STATUS_INFEASIBLE: return CM_EXIT_INFEASIBLE;
	case STATUS_TIMEOUT:
	case STATUS_OVER_BUDGET:
	case STATUS_NO_PLAN: return CM_EXIT_NO_PLAN;
	case STATUS_UNSUPPORTED: return CM_EXIT_ERROR;
	default: return CM_EXIT_OK;
	}
}

int cmd_solve_main(int argc, char **argv)
{
	struct cli_args a;
	struct solve_request rq = { 0 };
	struct solve_outcome o = { 0 };
	struct outputs outs = { 0 };
	struct sim_copy copy;
	struct cm_error err;
	struct graph *g;
	int rc;

	rc = cmd_solve_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	cli_catch_interrupts(a.quiet);
	g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	rq = (struct solve_request){ .strategy = a.strategy, .seed = a.seed,
				     .samples = a.samples, .bound = a.bound };
	cli_request(&a, &rq);
	cli_progress_setup(a.progress, graph_total_cost(g), rq.time_limit);
	if (size_parse(a.budget, graph_peak_all(g), &rq.budget, &err)) {
		rc = cli_usage("solve", "--budget: %s", err.msg);
		goto out;
	}
	if (a.bandwidth && (rc = cli_copy_rates("solve", &a, g, &copy)) != 0)
		goto out;
	rq.copy = a.bandwidth ? &copy : NULL;
	if (open_outputs(&a, &outs, &err)) {
		rc = cli_error("%s", err.msg);
		goto out;
	}
	rq.lp_out = outs.lp.f;
	if (a.first_plan) {
		outs.g = g;
		outs.text = a.text;
		rq.first_plan = write_first;
		rq.first_ctx = &outs;
	}
	rc = strategy_solve(g, &rq, &o, &err) ? cli_error("%s: %s", g->id, err.msg) : 0;
	cli_progress_clear();
	/* The model file is complete once built, whatever the solve did next:
	 * it is what one looks at when a solve fails. */
	if (a.lp && o.cols == 0)
		cli_note(a.quiet, "%s: no model was built (%s), so no LP file", a.lp,
			 o.why[0] ? o.why : "not the ilp strategy");
	else if (a.lp && out_commit(&outs.lp, &err))
		rc = cli_error("%s", err.msg);
	if (rc)
		goto out;
	if (write_outputs(&a, &outs, g, &rq, &o)) {
		rc = CM_EXIT_ERROR;
		goto out;
	}
	/* With a result on standard output (the plan, the CSV or the JSON),
	 * the summary goes to standard error, so that the result can be piped
	 * (nowhere with --quiet); after the result, in a terminal's order. */
	if (is_stdout(a.plan) || is_stdout(a.csv) || is_stdout(a.json)) {
		fflush(stdout);
		if (!a.quiet)
			print_summary(stderr, g, &rq, &o);
	} else {
		print_summary(stdout, g, &rq, &o);
	}
	/* A bare number is bytes: a user who meant gigabytes hears so. */
	if (rq.budget < graph_lower_bound(g) && strspn(a.budget, "0123456789") == strlen(a.budget))
		cli_note(a.quiet, "hint: %s is %s bytes; did you mean %sG?", a.budget, a.budget,
			 a.budget);
	rc = exit_status(o.status);
	if (fflush(stdout) != 0)
		rc = cli_error("standard output: write failed");
out:
	abort_outputs(&outs);
	strategy_outcome_release(&o);
	graph_free(g);
	return rc;
}

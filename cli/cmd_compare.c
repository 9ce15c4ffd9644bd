/* checkmate compare GRAPH: the strategies side by side over budgets; a
 * readable table, CSV rows (every parameter point of every baseline), and
 * a plot of overhead against budget like the paper's Figure 5. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cores.h"
#include "../common/num.h"
#include "../solvers/compare.h"
#include "cli.h"
#include "jsonl.h"
#include "options.h"

static const char compare_usage[] =
	"usage: checkmate compare [GRAPH] [--strategies all|LIST] [--ilp] [--approx]\n"
	"                         [--bound] [--budgets LIST | --sweep N] [--csv FILE|-]\n"
	"                         [--plot FILE] [--bandwidth B [--rate R] [--host-budget SIZE]]\n\n"
	"Runs strategies (by default the paper's heuristics; --ilp adds the optimal\n"
	"MILP) on GRAPH (default: the built-in example " CLI_DEFAULT_GRAPH ") at each budget,\n"
	"and prints per budget each strategy's overhead (cost over the\n"
	"checkpoint-all cost) at its cheapest point that fits; '*' marks the best,\n"
	"'-' none fits, 'n/a' unsupported.\n\n"
	"  -s, --strategies L       all (default: the paper's heuristics), none, or a\n"
	"                           comma-separated list of the strategies below\n"
	"      --baselines L        the same\n"
	"      --ilp                solve the MILP at each budget too\n"
	"      --approx             the LP approximation at each budget too\n"
	"      --bound              a lower bound for every row: the best of the ilp\n"
	"                           and approx bounds at that budget, else the LP\n"
	"                           relaxation solved for it\n"
	"      --budgets LIST       comma-separated sizes (16G,80%,...)\n"
	"      --sweep N            N budgets evenly spaced from the lower bound to\n"
	"                           the checkpoint-all peak (default 10)\n"
	"      --plot FILE          overhead against budget through gnuplot (.svg or\n"
	"                           .png)\n"
	"  -j, --jobs N             budgets solved by N processes at once (default:\n"
	"                           one a core); the same rows, in budget order\n"
	"      --bandwidth B        copies to host memory at B (25GB/s): every plan is\n"
	"                           replayed in time, the strategies that offload join\n"
	"                           the columns, and the table compares step times\n"
	"      --rate R             cost units a second, for a graph whose cost_unit\n"
	"                           is flops or absent (with --bandwidth)\n"
	"      --host-budget SIZE   the most host memory copies may hold (with\n"
	"                           --bandwidth)\n"
	CLI_JSON_HELP
	"The CSV has every result, swept baseline points included; -t applies to\n"
	"each solve. A first SIGINT or SIGTERM ends the run with the rows done,\n"
	"the others marked interrupted (exit 4); a second ends it at once.\n\n"
	CLI_SHARED_HELP;

int cmd_compare_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "strategies", required_argument, NULL, 's' },
		{ "baselines", required_argument, NULL, 'B' },
		{ "ilp", no_argument, NULL, 'I' },
		{ "approx", no_argument, NULL, 'A' },
		{ "bound", no_argument, NULL, 'D' },
		{ "budgets", required_argument, NULL, 'U' },
		{ "sweep", required_argument, NULL, 'n' },
		{ "plot", required_argument, NULL, 'P' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "bandwidth", required_argument, NULL, 'K' },
		{ "rate", required_argument, NULL, 'E' },
		{ "host-budget", required_argument, NULL, 'O' },
		CLI_JSON_LONGOPT,
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int rc = cli_parse("compare", compare_usage, opts, ":s:j:" CLI_SHARED_SHORTOPTS, argc,
			   argv, a);

	if (rc)
		return rc;
	if (a->budgets && a->sweep)
		return cli_usage("compare", "--budgets and --sweep exclude each other");
	if ((a->rate || a->host_budget) && !a->bandwidth)
		return cli_usage("compare", "%s needs --bandwidth",
				 a->rate ? "--rate" : "--host-budget");
	if (a->plot && cli_plot_name("compare", a->plot))
		return CM_EXIT_USAGE;
	if (!a->sweep)
		a->sweep = 10;
	return cli_distinct_outputs("compare",
				    (const char *const[]){ a->csv, a->json, a->plot }, 3);
}

static int by_bytes(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* The budgets, ascending: a list, or a sweep from the lower bound to the
 * peak. */
static int make_budgets(const struct cli_args *a, const struct graph *g,
			uint64_t **out, int *n)
{
	uint64_t lb = graph_lower_bound(g), peak = graph_peak_all(g);
	struct cm_error err;
	char *copy, *tok, *save = NULL;
	int cap = 8;

	*n = 0;
	*out = malloc((size_t)(a->budgets ? cap : a->sweep) * sizeof(uint64_t));
	if (*out == NULL)
		return cli_error("out of memory");
	if (a->budgets == NULL) {
		for (int i = 0; i < a->sweep; i++)
			(*out)[(*n)++] = a->sweep == 1 ? peak :
				lb + (uint64_t)((double)(peak - lb) * i / (a->sweep - 1));
		return 0;
	}
	copy = strdup(a->budgets);
	if (copy == NULL)
		return cli_error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == cap) {
			uint64_t *q = realloc(*out, (size_t)(cap *= 2) * sizeof(uint64_t));

			if (q == NULL) {
				free(copy);
				return cli_error("out of memory");
			}
			*out = q;
		}
		if (size_parse(tok, peak, &(*out)[(*n)++], &err)) {
			free(copy);
			return cli_usage("compare", "--budgets: %s", err.msg);
		}
	}
	free(copy);
	if (*n == 0)
		return cli_usage("compare", "--budgets: no budget given");
	/* Rows, table and plot go in budget order, each budget once. */
	qsort(*out, (size_t)*n, sizeof(**out), by_bytes);
	for (int i = 1, k = 1; i <= *n; i++)
		if (i == *n)
			*n = k;
		else if ((*out)[i] != (*out)[k - 1])
			(*out)[k++] = (*out)[i];
	return 0;
}

/* The columns: --strategies (or --baselines) in table order, with --ilp
 * and --approx, and with --bandwidth the rows that make plans with
 * copies. */
static int make_columns(const struct cli_args *a, const struct strategy ***cols, int *ncols)
{
	char list[1024];
	struct solve_request rq = { 0 };
	struct cm_error err;
	int rc;

	snprintf(list, sizeof(list), "%s%s%s", a->strategies ? a->strategies : "all",
		 a->ilp ? ",ilp" : "", a->approx ? ",approx" : "");
	rc = cli_strategy_list("compare", a->list_opt ? a->list_opt : "--strategies", list,
			       STRATEGY_PAPER, a->bandwidth ? CLI_COPIES_ADDED : CLI_COPIES_REFUSED,
			       cols, ncols);
	if (rc == 0 && *ncols == 0)
		rc = cli_usage("compare", "nothing to compare: no baseline, no --ilp, no --approx");
	cli_request(a, &rq);
	if (rc == 0 && strategy_check_params(*cols, *ncols, &rq, &err))
		rc = cli_usage("compare", "%s", err.msg);
	return rc;
}

/* compare_request.note and .row. */
struct sink {
	FILE *csv, *json;
	int quiet;
	int with_time; /* --bandwidth: the CSV's time columns */
};

static void on_note(void *ctx, const char *what)
{
	cli_note(((struct sink *)ctx)->quiet, "%s", what);
}

static int on_row(void *ctx, const struct strategy_row *r)
{
	struct sink *k = ctx;
	struct cm_error err;

	cli_progress_clear();
	if (k->csv)
		csv_row(k->csv, r, k->with_time);
	return k->json ? jsonl_row(k->json, r, NULL, &err) : 0;
}

/* What the table and the plot show: the columns' best overheads. */
struct view {
	const struct graph *g;
	const struct sim_copy *copy; /* --bandwidth: overheads in time; else NULL */
	const struct strategy **cols;
	int ncols;
	const uint64_t *budgets;
	int nb;
	struct compare_result res;
};

static double best_at(const struct view *v, int c, int bi)
{
	return v->res.best[(size_t)c * (size_t)v->nb + (size_t)bi];
}

/* 1 when some budget has a lower bound (--bound, or ilp's and approx's
 * own): the table shows them in a last column. */
static int has_bounds(const struct view *v)
{
	for (int bi = 0; bi < v->nb; bi++)
		if (v->res.bound[bi] >= 0)
			return 1;
	return 0;
}

static void print_table(FILE *f, const struct view *v)
{
	char h[32];
	int bounds = has_bounds(v);

	if (v->copy)
		fprintf(f, "%s: overhead in time (step time / checkpoint-all time %.9g s) of each\n"
			"strategy's fastest plan that fits; * best, - none fits, n/a unsupported%s%s\n\n",
			v->g->id, graph_total_cost(v->g) * v->copy->seconds_per_cost,
			v->res.interrupted ? ", ? interrupted" : "",
			bounds ? ";\nlower bound: no plan that fits is faster" : "");
	else
		fprintf(f, "%s: overhead (cost / checkpoint-all cost %.17g) of each strategy's\n"
			"cheapest plan that fits; * best, - none fits, n/a unsupported%s%s\n\n",
			v->g->id, graph_total_cost(v->g), v->res.interrupted ? ", ? interrupted" : "",
			bounds ? ";\nlower bound: no plan that fits costs less" : "");
	fprintf(f, "%-12s", "budget");
	for (int c = 0; c < v->ncols; c++)
		fprintf(f, " %9s", v->cols[c]->name);
	fprintf(f, "%s\n", bounds ? "  lower bound" : "");
	for (int bi = 0; bi < v->nb; bi++) {
		double best = -1;

		for (int c = 0; c < v->ncols; c++)
			if (best_at(v, c, bi) >= 0 && (best < 0 || best_at(v, c, bi) < best))
				best = best_at(v, c, bi);
		fprintf(f, "%-12s", size_human(v->budgets[bi], h, sizeof(h)));
		for (int c = 0; c < v->ncols; c++) {
			int w = (int)(strlen(v->cols[c]->name) > 9 ? strlen(v->cols[c]->name) : 9);
			char cell[32];

			if (v->res.unsupported[c])
				snprintf(cell, sizeof(cell), "n/a");
			else if (best_at(v, c, bi) == COMPARE_NOT_RUN)
				snprintf(cell, sizeof(cell), "?");
			else if (best_at(v, c, bi) < 0)
				snprintf(cell, sizeof(cell), "-");
			else
				snprintf(cell, sizeof(cell), "%.4f%s", best_at(v, c, bi),
					 num_eq(best_at(v, c, bi), best) ? "*" : "");
			fprintf(f, " %*s", w, cell);
		}
		if (bounds && v->res.bound[bi] >= 0)
			fprintf(f, "  %11.4f", v->res.bound[bi]);
		else if (bounds)
			fprintf(f, "  %11s", "-");
		fputc('\n', f);
	}
}

/* 1 when column c fits at some budget. */
static int has_curve(const struct view *v, int c)
{
	for (int bi = 0; bi < v->nb; bi++)
		if (best_at(v, c, bi) >= 0)
			return 1;
	return 0;
}

/* 1 when some budget has a bound, into *met 1 when at every such budget
 * some column's best plan meets it (the bound is then the optimum). */
static int has_bound(const struct view *v, int *met)
{
	int any = 0;

	*met = 1;
	for (int bi = 0; bi < v->nb; bi++) {
		int hit = 0;

		if (v->res.bound[bi] < 0)
			continue;
		any = 1;
		for (int c = 0; c < v->ncols; c++)
			hit |= best_at(v, c, bi) >= 0 && num_eq(best_at(v, c, bi), v->res.bound[bi]);
		*met &= hit;
	}
	return any;
}

/* The data blocks: $dC for column C's best overheads, $b for the bounds. */
static void plot_data(FILE *gp, const struct view *v, double scale)
{
	for (int c = 0; c < v->ncols; c++) {
		if (!has_curve(v, c))
			continue;
		fprintf(gp, "$d%d << EOD\n", c);
		for (int i = 0; i < v->nb; i++)
			if (best_at(v, c, i) >= 0)
				fprintf(gp, "%.6g %.6g\n", (double)v->budgets[i] / scale,
					best_at(v, c, i));
		fprintf(gp, "EOD\n");
	}
	fprintf(gp, "$b << EOD\n");
	for (int i = 0; i < v->nb; i++)
		if (v->res.bound[i] >= 0)
			fprintf(gp, "%.6g %.6g\n", (double)v->budgets[i] / scale, v->res.bound[i]);
	fprintf(gp, "EOD\n");
}

/* Column c as the k-th of n curves: a plan's cost at a budget holds until
 * the next budget (steps), with a point where it was measured. Curves that
 * coincide stay visible: the earlier ones are drawn wider, each with its
 * own colour, dash and point type. */
static void plot_curve(FILE *gp, const struct view *v, int c, int k, int n)
{
	static const char *const colors[] = { "#0072b2", "#e69f00", "#009e73", "#cc79a7",
					      "#56b4e9", "#d55e00", "#8c564b", "#9467bd",
					      "#17becf", "#bcbd22", "#1f3f7f", "#e377c2" };
	static const int points[] = { 7, 5, 9, 11, 13, 4, 6, 8, 10, 12, 1, 2, 3 };
	static const int dashes[] = { 2, 4, 5, 3 }; /* dashed ... dotted */
	int nc = (int)(sizeof(colors) / sizeof(colors[0]));
	double lw = n > 1 ? 1.8 + 2.9 * (n - 1 - k) / (n - 1) : 2;

	/* The widest is solid; those drawn over it are dashed, so that it
	 * shows through. */
	fprintf(gp, "$d%d using 1:2 with steps lc rgb '%s' lw %.2f dt %d title ", c,
		colors[c % nc], lw, k ? dashes[(k - 1) % 4] : 1);
	cli_plot_string(gp, v->cols[c]->name);
	fprintf(gp, " noenhanced, $d%d using 1:2 with points lc rgb '%s' pt %d ps %.2f notitle",
		c, colors[c % nc], points[k % (int)(sizeof(points) / sizeof(points[0]))],
		0.6 + 1.4 * lw / 4.7);
}

/* The gnuplot script that draws v (after the terminal and output). */
static void plot_script(FILE *gp, void *ctx)
{
	const struct view *v = ctx;
	const char *unit;
	uint64_t most = 0;
	double scale;
	int curves = 0, k = 0, met, bound;

	for (int bi = 0; bi < v->nb; bi++)
		most = v->budgets[bi] > most ? v->budgets[bi] : most;
	cli_plot_unit(most, &scale, &unit);
	fprintf(gp, "set title ");
	cli_plot_string(gp, v->g->id);
	fprintf(gp, ".': overhead against memory budget' noenhanced\n"
		"set xlabel 'budget (%s); a plan''s overhead holds until the next budget'\n"
		"set ylabel '%s'\n"
		"set key outside right\nset grid\nset offsets graph 0.02, graph 0.02, graph 0.05, "
		"graph 0.05\n", unit, v->copy ? "overhead in time (step time / checkpoint-all time)" :
		"overhead (cost / checkpoint-all cost)");
	plot_data(gp, v, scale);
	for (int c = 0; c < v->ncols; c++)
		curves += has_curve(v, c);
	bound = has_bound(v, &met);
	if (curves == 0 && !bound) {
		fprintf(gp, "set label 'no strategy fits any budget' at graph 0.5, 0.5 center\n"
			"plot [0:1] [0:1] NaN notitle\n");
		return;
	}
	/* The reference first, under the curves: a bound at a budget holds
	 * for every smaller budget (fsteps). */
	fprintf(gp, "plot ");
	if (bound)
		fprintf(gp, "$b using 1:2 with fsteps lc rgb '#c8c8c8' lw 12 title '%s'",
			met ? "optimum (proven)" : "best lower bound");
	for (int c = 0; c < v->ncols; c++)
		if (has_curve(v, c)) {
			fprintf(gp, "%s", k || bound ? ", " : "");
			plot_curve(gp, v, c, k++, curves);
		}
	fprintf(gp, "\n");
}

int cmd_compare_main(int argc, char **argv)
{
	struct cli_args a;
	struct view v = { 0 };
	struct out csv = { 0 }, json = { 0 };
	struct sink sink = { 0 };
	struct solve_request settings = { 0 };
	struct sim_copy copy;
	struct compare_request rq = { 0 };
	struct cm_error err;
	struct graph *g;
	uint64_t *budgets = NULL;
	int rc;

	rc = cmd_compare_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	cli_catch_interrupts(a.quiet);
	v.g = g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	if ((rc = make_budgets(&a, v.g, &budgets, &v.nb)) ||
	    (rc = make_columns(&a, &v.cols, &v.ncols)))
		goto out;
	if (a.plot && (rc = cli_plot_writable(a.plot)))
		goto out;
	v.budgets = budgets;
	if (a.csv) {
		if (out_open(&csv, a.csv, &err)) {
			rc = cli_error("%s", err.msg);
			goto out;
		}
		if (a.header)
			csv_header(csv.f, a.bandwidth != NULL);
	}
	if (a.json && out_open(&json, a.json, &err)) {
		rc = cli_error("%s", err.msg);
		goto out;
	}
	cli_request(&a, &settings);
	if (a.bandwidth && (rc = cli_copy_rates("compare", &a, g, &copy)) != 0)
		goto out;
	settings.copy = v.copy = a.bandwidth ? &copy : NULL;
	cli_progress_setup(a.progress, graph_total_cost(v.g), settings.time_limit);
	sink = (struct sink){ csv.f, json.f, a.quiet, a.bandwidth != NULL };
	rq = (struct compare_request){ .columns = v.cols, .ncols = v.ncols, .budgets = budgets,
				       .nb = v.nb, .bound = a.bound, .settings = &settings,
				       .note = on_note, .row = on_row, .ctx = &sink,
				       .jobs = a.jobs ? a.jobs : cores_online() };
	if (compare_run(v.g, &rq, &v.res, &err)) {
		rc = cli_error("%s: %s", v.g->id, err.msg);
		goto out;
	}
	cli_progress_clear();
	if ((a.csv && out_commit(&csv, &err)) || (a.json && out_commit(&json, &err))) {
		rc = cli_error("%s", err.msg);
		goto out;
	}
	if (a.plot && (rc = cli_plot(a.plot, 900, 600, plot_script, &v)))
		goto out;
	if (!(a.csv && strcmp(a.csv, "-") == 0) && !(a.json && strcmp(a.json, "-") == 0))
		print_table(stdout, &v);
	/* Cut short, the answer is partial: as a search that ran out of time. */
	rc = fflush(stdout) != 0 ? cli_error("standard output: write failed") :
	     v.res.interrupted ? CM_EXIT_NO_PLAN : CM_EXIT_OK;
out:
	out_abort(&csv);
	out_abort(&json);
	compare_result_release(&v.res);
	free(v.cols);
	free(budgets);
	graph_free(g);
	return rc;
}

/* checkmate compare GRAPH: the strategies side by side over budgets; a
 * readable table, CSV rows (every parameter point of every baseline), and
 * a plot of overhead against budget like the paper's Figure 5. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../solvers/compare.h"
#include "../common/num.h"
#include "cli.h"
#include "options.h"

static const char compare_usage[] =
	"usage: checkmate compare [GRAPH] [--strategies all|LIST] [--ilp] [--approx]\n"
	"                         [--bound] [--budgets LIST | --sweep N] [--csv FILE|-]\n"
	"                         [--plot FILE]\n\n"
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
	"The CSV has every result, swept baseline points included; -t applies to\n"
	"each solve.\n\n"
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
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int rc = cli_parse("compare", compare_usage, opts, ":s:" CLI_SHARED_SHORTOPTS, argc,
			   argv, a);

	if (rc)
		return rc;
	if (a->budgets && a->sweep)
		return cli_usage("compare", "--budgets and --sweep exclude each other");
	if (a->plot) {
		const char *dot = strrchr(a->plot, '.');

		if (dot == NULL || (strcmp(dot, ".svg") != 0 && strcmp(dot, ".png") != 0))
			return cli_usage("compare", "--plot: the file name must end in .svg or .png");
	}
	if (!a->sweep)
		a->sweep = 10;
	return 0;
}

/* The budgets: a list, or a sweep from the lower bound to the peak. */
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
	return *n ? 0 : cli_usage("compare", "--budgets: no budget given");
}

/* The columns: --strategies (or --baselines) in table order, with --ilp
 * and --approx. */
static int make_columns(const struct cli_args *a, const struct strategy ***cols, int *ncols)
{
	char list[1024];

	snprintf(list, sizeof(list), "%s%s%s", a->strategies ? a->strategies : "all",
		 a->ilp ? ",ilp" : "", a->approx ? ",approx" : "");
	struct solve_request rq = { 0 };
	struct cm_error err;
	int rc;

	rc = cli_strategy_list("compare", a->list_opt ? a->list_opt : "--strategies", list,
			       STRATEGY_PAPER, cols, ncols);
	if (rc == 0 && *ncols == 0)
		rc = cli_usage("compare", "nothing to compare: no baseline, no --ilp, no --approx");
	cli_request(a, &rq);
	if (rc == 0 && strategy_check_params(*cols, *ncols, &rq, &err))
		rc = cli_usage("compare", "%s", err.msg);
	return rc;
}

/* compare_request.note and .row. */
struct sink {
	FILE *csv;
	int quiet;
};

static void on_note(void *ctx, const char *what)
{
	cli_note(((struct sink *)ctx)->quiet, "%s", what);
}

static int on_row(void *ctx, const struct strategy_row *r)
{
	struct sink *k = ctx;

	if (k->csv)
		csv_row(k->csv, r);
	return 0;
}

/* What the table and the plot show: the columns' best overheads. */
struct view {
	const struct graph *g;
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

static void print_table(FILE *f, const struct view *v)
{
	char h[32];

	fprintf(f, "%s: overhead (cost / checkpoint-all cost %.17g) of each strategy's\n"
		"cheapest plan that fits; * best, - none fits, n/a unsupported\n\n",
		v->g->id, graph_total_cost(v->g));
	fprintf(f, "%-12s", "budget");
	for (int c = 0; c < v->ncols; c++)
		fprintf(f, " %9s", v->cols[c]->name);
	fputc('\n', f);
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
			else if (best_at(v, c, bi) < 0)
				snprintf(cell, sizeof(cell), "-");
			else
				snprintf(cell, sizeof(cell), "%.4f%s", best_at(v, c, bi),
					 num_eq(best_at(v, c, bi), best) ? "*" : "");
			fprintf(f, " %*s", w, cell);
		}
		fputc('\n', f);
	}
}

/* A temporary file beside path, with the permissions a new file gets:
 * its malloc'd name, or NULL. */
static char *plot_tempfile(const char *path)
{
	char *tmp = malloc(strlen(path) + 16);
	mode_t mask = umask(0);
	int fd;

	umask(mask);
	if (tmp == NULL)
		return NULL;
	sprintf(tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return NULL;
	}
	fchmod(fd, 0666 & ~mask);
	close(fd);
	return tmp;
}

/* 1 when column c fits at some budget. */
static int has_curve(const struct view *v, int c)
{
	for (int bi = 0; bi < v->nb; bi++)
		if (best_at(v, c, bi) >= 0)
			return 1;
	return 0;
}

/* The gnuplot script that draws v into out. */
static void plot_script(FILE *gp, const struct view *v, const char *out, int svg)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double scale = 1;
	int u = 0, curves = 0;

	while (u < 4 && (double)v->budgets[v->nb - 1] / scale >= 1024 * 10) {
		scale *= 1024;
		u++;
	}
	fprintf(gp, "set terminal %s size 900,600 background rgb 'white'\n",
		svg ? "svg dynamic enhanced" : "pngcairo");
	fprintf(gp, "set output '%s'\nset title '%s: overhead against memory budget' noenhanced\n",
		out, v->g->id);
	fprintf(gp, "set xlabel 'budget (%s)'\nset ylabel 'overhead (cost / checkpoint-all cost)'\n"
		"set key outside right\nset grid\n", units[u]);
	for (int c = 0; c < v->ncols; c++) {
		if (!has_curve(v, c))
			continue;
		fprintf(gp, "$d%d << EOD\n", c);
		for (int bi = 0; bi < v->nb; bi++)
			if (best_at(v, c, bi) >= 0)
				fprintf(gp, "%.6g %.6g\n", (double)v->budgets[bi] / scale,
					best_at(v, c, bi));
		fprintf(gp, "EOD\n");
		curves++;
	}
	if (curves == 0)
		fprintf(gp, "set label 'no strategy fits any budget' at graph 0.5, 0.5 center\n"
			"plot [0:1] [0:1] NaN notitle\n");
	for (int c = 0, first = 1; c < v->ncols; c++) {
		if (!has_curve(v, c))
			continue;
		fprintf(gp, "%s$d%d using 1:2 with linespoints title '%s' noenhanced",
			first ? "plot " : ", ", c, v->cols[c]->name);
		first = 0;
	}
	fprintf(gp, "\n");
}

/* Overhead against budget through gnuplot, written whole or not at all. */
static int plot(const char *path, const struct view *v)
{
	char *tmp = plot_tempfile(path);
	void (*old_pipe)(int);
	FILE *gp;
	int status = -1;

	if (tmp == NULL)
		return cli_error("%s: cannot create", path);
	/* When gnuplot is missing, the shell exits before reading: writes
	 * must fail with EPIPE rather than kill us. */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	gp = popen("gnuplot 2>/dev/null", "w");
	if (gp != NULL) {
		plot_script(gp, v, tmp, strcmp(strrchr(path, '.'), ".svg") == 0);
		status = pclose(gp);
	}
	signal(SIGPIPE, old_pipe);
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    rename(tmp, path) == 0) {
		free(tmp);
		return 0;
	}
	unlink(tmp);
	free(tmp);
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return cli_error("--plot needs gnuplot (Debian package gnuplot-nox; "
				 "make deps installs it)");
	return cli_error("%s: gnuplot failed to draw the plot", path);
}

int cmd_compare_main(int argc, char **argv)
{
	struct cli_args a;
	struct view v = { 0 };
	struct out csv = { 0 };
	struct sink sink = { 0 };
	struct solve_request settings = { 0 };
	struct compare_request rq = { 0 };
	struct cm_error err;
	struct graph *g;
	uint64_t *budgets = NULL;
	int rc;

	rc = cmd_compare_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	v.g = g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	if ((rc = make_budgets(&a, v.g, &budgets, &v.nb)) ||
	    (rc = make_columns(&a, &v.cols, &v.ncols)))
		goto out;
	v.budgets = budgets;
	if (a.csv) {
		if (out_open(&csv, a.csv, &err)) {
			rc = cli_error("%s", err.msg);
			goto out;
		}
		if (a.header)
			csv_header(csv.f);
	}
	cli_request(&a, &settings);
	sink = (struct sink){ csv.f, a.quiet };
	rq = (struct compare_request){ .columns = v.cols, .ncols = v.ncols, .budgets = budgets,
				       .nb = v.nb, .bound = a.bound, .settings = &settings,
				       .note = on_note, .row = on_row, .ctx = &sink };
	if (compare_run(v.g, &rq, &v.res, &err)) {
		rc = cli_error("%s: %s", v.g->id, err.msg);
		goto out;
	}
	if (a.csv && out_commit(&csv, &err)) {
		rc = cli_error("%s", err.msg);
		goto out;
	}
	if (a.plot && (rc = plot(a.plot, &v)))
		goto out;
	if (!(a.csv && strcmp(a.csv, "-") == 0))
		print_table(stdout, &v);
	rc = fflush(stdout) == 0 ? CM_EXIT_OK : cli_error("standard output: write failed");
out:
	out_abort(&csv);
	compare_result_release(&v.res);
	free(v.cols);
	free(budgets);
	graph_free(g);
	return rc;
}

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

#include "../baselines/baseline.h"
#include "../common/num.h"
#include "cli.h"
#include "options.h"

static const char compare_usage[] =
	"usage: checkmate compare [GRAPH] [--baselines all|LIST] [--ilp] [--approx]\n"
	"                         [--bound] [--budgets LIST | --sweep N] [--csv FILE|-]\n"
	"                         [--plot FILE]\n\n"
	"Runs the baselines (and with --ilp the optimal MILP) on GRAPH (default: the\n"
	"built-in example " CLI_DEFAULT_GRAPH ") at each budget, and prints per budget each\n"
	"strategy's overhead (cost over the checkpoint-all cost) at its cheapest\n"
	"point that fits; '*' marks the best, '-' none fits, 'n/a' unsupported.\n\n"
	"      --baselines L     all (default), none, or a comma-separated list of\n"
	"                         checkpoint-all, chen-sqrtn, chen-greedy,\n"
	"                         griewank-logn, ap-sqrtn, ap-greedy,\n"
	"                         linearized-sqrtn, linearized-greedy\n"
	"      --ilp              solve the MILP at each budget too\n"
	"      --approx           the LP approximation at each budget too\n"
	"      --bound            a lower bound for the baselines' rows: the best of\n"
	"                         the ilp and approx bounds at that budget, else the\n"
	"                         LP relaxation solved for it\n"
	"      --budgets LIST     comma-separated sizes (16G,80%,...)\n"
	"      --sweep N          N budgets evenly spaced from the lower bound to\n"
	"                         the checkpoint-all peak (default 10)\n"
	"      --plot FILE        overhead against budget through gnuplot (.svg or\n"
	"                         .png)\n"
	"The CSV has every result, swept baseline points included; -t applies to\n"
	"each solve.\n\n"
	CLI_SHARED_HELP;

struct compare_args {
	const char *graph, *baselines, *budgets, *plot;
	int ilp, approx, bound, sweep;
	struct cli_shared sh;
};

/* One column of the comparison: a baseline (its points computed once) or
 * the MILP. */
struct column {
	const char *name;
	const struct baseline *b;   /* NULL for ilp and approx */
	struct baseline_point *pts;
	int npts;
	int unsupported;
	double *best;               /* per budget: overhead of the answer, or -1 */
};

static int parse_args(int argc, char **argv, struct compare_args *a)
{
	static const struct option opts[] = {
		{ "baselines", required_argument, NULL, 'B' },
		{ "ilp", no_argument, NULL, 'I' },
		{ "approx", no_argument, NULL, 'A' },
		{ "bound", no_argument, NULL, 'D' },
		{ "budgets", required_argument, NULL, 'b' },
		{ "sweep", required_argument, NULL, 'n' },
		{ "plot", required_argument, NULL, 'P' },
		CLI_SHARED_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cm_error err;
	double v;
	int c;

	*a = (struct compare_args){ .baselines = "all" };
	cli_shared_init(&a->sh);
	optind = 0;
	while ((c = cli_getopt("compare", argc, argv, ":" CLI_SHARED_SHORTOPTS, opts)) != -1)
		switch (c) {
		case 'B': a->baselines = optarg; break;
		case 'I': a->ilp = 1; break;
		case 'A': a->approx = 1; break;
		case 'D': a->bound = 1; break;
		case 'b': a->budgets = optarg; break;
		case 'P': a->plot = optarg; break;
		case 'n':
			if (cli_parse_whole("--sweep", optarg, 1, 10000, &v, &err))
				return cli_usage("compare", "%s", err.msg);
			a->sweep = (int)v;
			break;
		default:
			c = cli_shared_option("compare", compare_usage, c, optarg, &a->sh);
			if (c != 1)
				return c ? c : CM_EXIT_USAGE;
		}
	if (argc - optind > 1)
		return cli_usage("compare", "expected at most one GRAPH");
	if (a->budgets && a->sweep)
		return cli_usage("compare", "--budgets and --sweep exclude each other");
	if (a->plot) {
		const char *dot = strrchr(a->plot, '.');

		if (dot == NULL || (strcmp(dot, ".svg") != 0 && strcmp(dot, ".png") != 0))
			return cli_usage("compare", "--plot: the file name must end in .svg or .png");
	}
	if (!a->sweep)
		a->sweep = 10;
	a->graph = optind < argc ? argv[optind] : NULL;
	return 0;
}

/* The budgets: a list, or a sweep from the lower bound to the peak. */
static int make_budgets(const struct compare_args *a, const struct graph *g,
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

/* The columns: the chosen baselines, then ilp. */
static int make_columns(const struct compare_args *a, const struct graph *g, int nb,
			struct column **cols, int *ncols)
{
	struct cm_error err;
	int all = strcmp(a->baselines, "all") == 0, none = strcmp(a->baselines, "none") == 0;

	*ncols = 0;
	*cols = calloc((size_t)baseline_count + 2, sizeof(**cols));
	if (*cols == NULL)
		return cli_error("out of memory");
	if (!all && !none) {
		char *copy = strdup(a->baselines), *tok, *save = NULL;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (baseline_find(tok) == NULL) {
				int rc = cli_usage("compare", "--baselines: unknown baseline '%s'", tok);

				free(copy);
				return rc;
			}
		free(copy);
	}
	for (int i = 0; i < baseline_count; i++) {
		const struct baseline *b = &baseline_table[i];
		size_t len = strlen(b->name);
		const char *hit = all ? b->name : strstr(a->baselines, b->name);

		/* A whole entry of the list, not a prefix of another name. */
		if (none || hit == NULL || (!all && ((hit != a->baselines && hit[-1] != ',') ||
						    (hit[len] != '\0' && hit[len] != ','))))
			continue;
		(*cols)[*ncols] = (struct column){ .name = b->name, .b = b };
		(*cols)[*ncols].npts = baseline_points(b, g, &(*cols)[*ncols].pts, &err);
		if ((*cols)[*ncols].npts == -BASELINE_UNSUPPORTED) {
			(*cols)[*ncols].unsupported = 1;
			(*cols)[*ncols].npts = 0;
		} else if ((*cols)[*ncols].npts < 0) {
			return cli_error("%s: %s", g->id, err.msg);
		}
		(*ncols)++;
	}
	if (a->ilp)
		(*cols)[(*ncols)++] = (struct column){ .name = "ilp" };
	if (a->approx)
		(*cols)[(*ncols)++] = (struct column){ .name = "approx" };
	if (*ncols == 0)
		return cli_usage("compare", "nothing to compare: no baseline, no --ilp, no --approx");
	for (int c = 0; c < *ncols; c++) {
		(*cols)[c].best = malloc((size_t)nb * sizeof(double));
		if ((*cols)[c].best == NULL)
			return cli_error("out of memory");
	}
	return 0;
}

/* A baseline point's row; bound, when not NULL, is a lower bound on the
 * cost of any plan that fits this budget. */
static void point_row(struct csv_row *r, const struct graph *g, const struct column *c,
		      const struct baseline_point *p, uint64_t budget, double floor_cost,
		      const double *bound)
{
	int fits = p->peak <= budget, proven = 0;

	*r = (struct csv_row){ .graph = g->id, .strategy = c->name, .param = p->param,
			       .budget = budget, .feasible = fits, .has_cost = 1,
			       .cost = p->cost, .overhead = p->cost / floor_cost,
			       .peak = p->peak, .seconds = p->seconds,
			       .status = fits ? "feasible" : "infeasible" };
	/* Without --bound, only the checkpoint-all floor, when met, is one. */
	if (bound || (fits && num_le(p->cost, floor_cost))) {
		r->has_lower_bound = 1;
		r->lower_bound = strategy_meet_bound(g, p->cost, fits,
						     fmax(bound ? *bound : floor_cost, floor_cost),
						     &proven);
		if (proven)
			r->status = "optimal";
	}
}

/* The solver columns (ilp, approx) at one budget, before the rows are
 * written, so that --bound can use their bounds. */
static int run_solvers(const struct compare_args *a, const struct graph *g,
		       const struct column *cols, int ncols, uint64_t budget, int bi, int nb,
		       struct solve_outcome *outs)
{
	for (int c = 0; c < ncols; c++) {
		struct solve_request rq = { .strategy = cols[c].name, .budget = budget };
		struct cm_error err;
		char h[32];

		if (cols[c].b)
			continue;
		cli_shared_request(&a->sh, &rq);
		cli_note(a->sh.quiet, "%s at budget %s (%d of %d)", cols[c].name,
			 size_human(budget, h, sizeof(h)), bi + 1, nb);
		if (strategy_solve(g, &rq, &outs[c], &err))
			return cli_error("%s: %s", g->id, err.msg);
	}
	return 0;
}

/* The LP bounds at every budget, solved up front as one sweep when no
 * ilp or approx column brings its own (an empty lp.has otherwise). */
struct lp_bounds {
	double *value;
	int *has;
};

static int lp_bounds(const struct compare_args *a, const struct graph *g,
		     const uint64_t *budgets, int nb, struct lp_bounds *lp)
{
	struct solve_request rq = { 0 };
	struct cm_error err;

	if (!a->bound || a->ilp || a->approx)
		return 0;
	lp->value = calloc((size_t)nb + 1, sizeof(double));
	lp->has = calloc((size_t)nb + 1, sizeof(int));
	if (lp->value == NULL || lp->has == NULL)
		return cli_error("out of memory");
	cli_shared_request(&a->sh, &rq);
	cli_note(a->sh.quiet, "LP bounds at %d budgets", nb);
	if (strategy_lp_bounds(g, &rq, budgets, nb, lp->value, lp->has, &err))
		return cli_error("%s: %s", g->id, err.msg);
	return 0;
}

/* The best lower bound known at budget number bi for --bound: the solver
 * columns', else the LP relaxation's (from all when it has them). 1 when
 * *bound was set, 0 when none is known (LP infeasible or out of time), -1
 * after an error. */
static int budget_bound(const struct compare_args *a, const struct graph *g,
			const struct solve_outcome *outs, int ncols, uint64_t budget,
			const struct lp_bounds *all, int bi, double *bound)
{
	struct solve_request rq = { .budget = budget };
	struct solve_outcome lp = { 0 };
	struct cm_error err;
	int found = 0;
	char h[32];

	for (int c = 0; c < ncols; c++)
		if (outs[c].has_lower_bound && (!found || outs[c].lower_bound > *bound)) {
			*bound = outs[c].lower_bound;
			found = 1;
		}
	if (found)
		return 1;
	if (all->has) {
		*bound = all->value[bi];
		return all->has[bi];
	}
	cli_shared_request(&a->sh, &rq);
	cli_note(a->sh.quiet, "LP bound at budget %s", size_human(budget, h, sizeof(h)));
	if (strategy_lp_bound(g, &rq, &lp, &err)) {
		cli_error("%s: %s", g->id, err.msg);
		return -1;
	}
	*bound = lp.lower_bound;
	return lp.has_lower_bound;
}

/* Runs every column at budget number bi, writing rows to csv (or not) in
 * column order. */
static int run_budget(const struct compare_args *a, const struct graph *g,
		      struct column *cols, int ncols, const struct lp_bounds *lp, uint64_t budget,
		      int bi, int nb, FILE *csv)
{
	double floor_cost = graph_total_cost(g), bound = 0;
	struct solve_outcome *outs = calloc((size_t)ncols, sizeof(*outs));
	int has_bound = 0, rc = CM_EXIT_OK;
	struct csv_row r;

	if (outs == NULL)
		return cli_error("out of memory");
	if (floor_cost <= 0)
		floor_cost = 1;
	if ((rc = run_solvers(a, g, cols, ncols, budget, bi, nb, outs)))
		goto out;
	/* Baselines come first: cols[0] tells whether there are any. */
	if (a->bound && cols[0].b && (has_bound = budget_bound(a, g, outs, ncols, budget, lp,
							       bi, &bound)) < 0) {
		rc = CM_EXIT_ERROR;
		goto out;
	}
	for (int c = 0; c < ncols; c++) {
		struct column *col = &cols[c];

		col->best[bi] = -1;
		if (col->b && col->unsupported) {
			r = (struct csv_row){ .graph = g->id, .strategy = col->name, .budget = budget,
					      .status = "unsupported" };
			if (csv)
				csv_row(csv, &r);
			continue;
		}
		for (int k = 0; col->b && k < col->npts; k++) {
			point_row(&r, g, col, &col->pts[k], budget, floor_cost,
				  has_bound ? &bound : NULL);
			if (csv)
				csv_row(csv, &r);
			if (r.feasible && (col->best[bi] < 0 || r.overhead < col->best[bi]))
				col->best[bi] = r.overhead;
		}
		if (col->b == NULL) {
			csv_row_of_outcome(&r, g, col->name, budget, &outs[c]);
			if (r.feasible)
				col->best[bi] = r.overhead;
			if (csv)
				csv_row(csv, &r);
		}
	}
out:
	for (int c = 0; c < ncols; c++)
		strategy_outcome_release(&outs[c]);
	free(outs);
	return rc;
}

static void print_table(FILE *f, const struct graph *g, const struct column *cols, int ncols,
			const uint64_t *budgets, int nb)
{
	char h[32];

	fprintf(f, "%s: overhead (cost / checkpoint-all cost %.17g) of each strategy's\n"
		"cheapest plan that fits; * best, - none fits, n/a unsupported\n\n",
		g->id, graph_total_cost(g));
	fprintf(f, "%-12s", "budget");
	for (int c = 0; c < ncols; c++)
		fprintf(f, " %*s", (int)(strlen(cols[c].name) > 9 ? strlen(cols[c].name) : 9),
			cols[c].name);
	fputc('\n', f);
	for (int bi = 0; bi < nb; bi++) {
		double best = -1;

		for (int c = 0; c < ncols; c++)
			if (cols[c].best[bi] >= 0 && (best < 0 || cols[c].best[bi] < best))
				best = cols[c].best[bi];
		fprintf(f, "%-12s", size_human(budgets[bi], h, sizeof(h)));
		for (int c = 0; c < ncols; c++) {
			int w = (int)(strlen(cols[c].name) > 9 ? strlen(cols[c].name) : 9);
			char cell[32];

			if (cols[c].unsupported)
				snprintf(cell, sizeof(cell), "n/a");
			else if (cols[c].best[bi] < 0)
				snprintf(cell, sizeof(cell), "-");
			else
				snprintf(cell, sizeof(cell), "%.4f%s", cols[c].best[bi],
					 num_eq(cols[c].best[bi], best) ? "*" : "");
			fprintf(f, " %*s", w, cell);
		}
		fputc('\n', f);
	}
}

/* Overhead against budget through gnuplot, written whole or not at all. */
static int plot(const char *path, const struct graph *g, const struct column *cols,
		int ncols, const uint64_t *budgets, int nb)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int svg = strcmp(strrchr(path, '.'), ".svg") == 0, u = 0, curves = 0, status;
	void (*old_pipe)(int) = SIG_ERR;
	char *tmp = malloc(strlen(path) + 16);
	double scale = 1;
	FILE *gp;
	int fd;

	if (tmp == NULL)
		return cli_error("out of memory");
	while (u < 4 && (double)budgets[nb - 1] / scale >= 1024 * 10) {
		scale *= 1024;
		u++;
	}
	sprintf(tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return cli_error("%s: cannot create", path);
	}
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	close(fd);
	/* When gnuplot is missing, the shell exits before reading: writes
	 * must fail with EPIPE rather than kill us. */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	gp = popen("gnuplot 2>/dev/null", "w");
	if (gp == NULL)
		goto fail;
	fprintf(gp, "set terminal %s size 900,600 background rgb 'white'\n",
		svg ? "svg dynamic enhanced" : "pngcairo");
	fprintf(gp, "set output '%s'\nset title '%s: overhead against memory budget' noenhanced\n",
		tmp, g->id);
	fprintf(gp, "set xlabel 'budget (%s)'\nset ylabel 'overhead (cost / checkpoint-all cost)'\n"
		"set key outside right\nset grid\n", units[u]);
	for (int c = 0; c < ncols; c++) {
		int any = 0;

		for (int bi = 0; bi < nb; bi++)
			any |= cols[c].best[bi] >= 0;
		if (!any)
			continue;
		fprintf(gp, "$d%d << EOD\n", c);
		for (int bi = 0; bi < nb; bi++)
			if (cols[c].best[bi] >= 0)
				fprintf(gp, "%.6g %.6g\n", (double)budgets[bi] / scale, cols[c].best[bi]);
		fprintf(gp, "EOD\n");
		curves++;
	}
	if (curves == 0)
		fprintf(gp, "set label 'no strategy fits any budget' at graph 0.5, 0.5 center\n"
			"plot [0:1] [0:1] NaN notitle\n");
	for (int c = 0, first = 1; c < ncols; c++) {
		int any = 0;

		for (int bi = 0; bi < nb; bi++)
			any |= cols[c].best[bi] >= 0;
		if (!any)
			continue;
		fprintf(gp, "%s$d%d using 1:2 with linespoints title '%s' noenhanced",
			first ? "plot " : ", ", c, cols[c].name);
		first = 0;
	}
	fprintf(gp, "\n");
	status = pclose(gp);
	signal(SIGPIPE, old_pipe);
	old_pipe = SIG_ERR;
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
			unlink(tmp);
			free(tmp);
			return cli_error("--plot needs gnuplot (Debian package gnuplot-nox; "
					 "make deps installs it)");
		}
		goto fail;
	}
	if (rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	return 0;
fail:
	if (old_pipe != SIG_ERR)
		signal(SIGPIPE, old_pipe);
	unlink(tmp);
	free(tmp);
	return cli_error("%s: gnuplot failed to draw the plot", path);
}

int cmd_compare_main(int argc, char **argv)
{
	struct compare_args a;
	struct column *cols = NULL;
	struct out csv = { 0 };
	struct lp_bounds lp = { 0 };
	struct cm_error err;
	struct graph *g;
	uint64_t *budgets = NULL;
	int nb = 0, ncols = 0, rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	g = cli_load_graph(a.graph, a.sh.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	if ((rc = make_budgets(&a, g, &budgets, &nb)) ||
	    (rc = make_columns(&a, g, nb, &cols, &ncols)))
		goto out;
	if (a.sh.csv) {
		if (out_open(&csv, a.sh.csv, &err)) {
			rc = cli_error("%s", err.msg);
			goto out;
		}
		if (a.sh.header)
			csv_header(csv.f);
	}
	if ((rc = lp_bounds(&a, g, budgets, nb, &lp)))
		goto out;
	for (int bi = 0; bi < nb; bi++)
		if ((rc = run_budget(&a, g, cols, ncols, &lp, budgets[bi], bi, nb, csv.f)))
			goto out;
	if (a.sh.csv && out_commit(&csv, &err)) {
		rc = cli_error("%s", err.msg);
		goto out;
	}
	if (a.plot && (rc = plot(a.plot, g, cols, ncols, budgets, nb)))
		goto out;
	if (!(a.sh.csv && strcmp(a.sh.csv, "-") == 0))
		print_table(stdout, g, cols, ncols, budgets, nb);
	rc = fflush(stdout) == 0 ? CM_EXIT_OK : cli_error("standard output: write failed");
out:
	out_abort(&csv);
	for (int c = 0; cols && c < ncols; c++) {
		free(cols[c].pts);
		free(cols[c].best);
	}
	free(cols);
	free(budgets);
	free(lp.value);
	free(lp.has);
	graph_free(g);
	return rc;
}

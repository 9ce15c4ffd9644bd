/* checkmate show GRAPH PLAN: what a plan does, as the paper's figures show
 * it: memory in use over the steps against the budget, the recomputed
 * nodes, the stage matrices R and S; as text and, with --plot, through
 * gnuplot. The figures come from the replay (plan/profile.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plan/io.h"
#include "../plan/profile.h"
#include "../plan/stages.h"
#include "cli.h"
#include "options.h"

/* Text picture sizes: columns of the memory chart, its rows, the nodes up
 * to which R and S are drawn without --matrices, the nodes listed. */
#define SHOW_COLUMNS 72
#define SHOW_ROWS 10
#define SHOW_MATRIX_NODES 60
#define SHOW_TOP 10
#define SHOW_STR(x) SHOW_STR_(x)
#define SHOW_STR_(x) #x

static const char show_usage[] =
	"usage: checkmate show GRAPH PLAN [--budget SIZE] [--plot FILE] [--matrices]\n"
	"                      [--bandwidth B [--rate R] [--host-budget SIZE]]\n\n"
	"Replays the plan file PLAN (JSON, '-' for standard input) on GRAPH and\n"
	"shows what it does: a summary (steps, cost, overhead, peak), the memory\n"
	"in use over the steps against the budget, the nodes it recomputes (the\n"
	"ten most costly, with their share of the cost), and, for graphs of up\n"
	"to " SHOW_STR(SHOW_MATRIX_NODES) " nodes, the stage matrices R and S of the paper. The budget is\n"
	"--budget, else the one the plan records. A plan that does not replay\n"
	"is an error, as for check; one over the budget is shown.\n\n"
	"  -b, --budget SIZE  memory budget (16G, 1.5GB, 80%, bytes)\n"
	"  -p, --plot FILE    memory over the steps against the budget, and the\n"
	"                     most costly recomputed nodes, through gnuplot (.svg\n"
	"                     or .png)\n"
	"  -m, --matrices     draw R and S whatever the graph's size\n"
	"      --bandwidth B  a plan that offloads values to host memory, replayed\n"
	"                     in time with copies at B (25GB/s): its time, wait and\n"
	"                     host peak join the summary (docs/formats.md)\n"
	"      --rate R       the device's rate, where the graph's costs are FLOPs\n"
	"                     or have no unit (with --bandwidth)\n"
	"      --host-budget SIZE  the most bytes in host memory (with --bandwidth)\n"
	"  -q, --quiet        no messages on standard error\n"
	"  -h, --help         this text\n";

/* What the pictures draw from. */
struct show {
	const struct graph *g;
	const struct plan *p;
	const char *path;
	const struct sim_copy *copy; /* --bandwidth: the replay in time; else NULL */
	struct profile pr;
};

int cmd_show_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "plot", required_argument, NULL, 'p' },
		{ "matrices", no_argument, NULL, 'm' },
		{ "bandwidth", required_argument, NULL, 'K' },
		{ "rate", required_argument, NULL, 'E' },
		{ "host-budget", required_argument, NULL, 'O' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct cli_args){ .header = 1 };
	optind = 0;
	while ((c = cli_getopt("show", argc, argv, ":b:p:mqh", opts)) != -1)
		switch (c) {
		case 'b': a->budget = optarg; break;
		case 'p': a->plot = optarg; break;
		case 'm': a->matrices = 1; break;
		case 'K': a->bandwidth = optarg; break;
		case 'E': a->rate = optarg; break;
		case 'O': a->host_budget = optarg; break;
		case 'q': a->quiet = 1; break;
		case 'h': fputs(show_usage, cli_help()); return -1;
		default: return CM_EXIT_USAGE;
		}
	if (argc - optind != 2)
		return cli_usage("show", "expected GRAPH and PLAN");
	a->graph = argv[optind];
	a->plan = argv[optind + 1];
	if ((a->rate || a->host_budget) && !a->bandwidth)
		return cli_usage("show", "%s needs --bandwidth", a->rate ? "--rate" : "--host-budget");
	if (a->plot && cli_plot_name("show", a->plot))
		return CM_EXIT_USAGE;
	return 0;
}

static void show_summary(FILE *f, const struct show *s)
{
	const struct profile *pr = &s->pr;
	char h[32];

	fprintf(f, "graph        %s\nplan         %s", s->g->id, s->path);
	if (s->p->strategy[0])
		fprintf(f, " (strategy %s%s%s%s%s)", s->p->strategy, s->p->param[0] ? " " : "",
			s->p->param, s->p->status[0] ? ", " : "", s->p->status);
	fprintf(f, "\nsteps        %d (%d computes, %d frees", pr->nsteps, pr->ncomputes,
		pr->nfrees);
	if (s->copy)
		fprintf(f, ", %d offloads, %d fetches", pr->noffloads, pr->nfetches);
	fprintf(f, ")\n");
	fprintf(f, "cost         %.17g (overhead %.4fx over checkpoint-all %.17g)\n",
		pr->sim.cost, pr->sim.cost / (pr->floor_cost > 0 ? pr->floor_cost : 1),
		pr->floor_cost);
	if (s->copy) {
		fprintf(f, "time         %.6g s (%.6g s waiting for copies; %.4fx the checkpoint-all "
			"time)\n", pr->sim.time, pr->sim.wait,
			pr->sim.time / (pr->floor_cost > 0 ? pr->floor_cost * s->copy->seconds_per_cost :
					1));
		fprintf(f, "host peak    %llu (%s)\n", (unsigned long long)pr->sim.host_peak,
			size_human(pr->sim.host_peak, h, sizeof(h)));
	}
	fprintf(f, "peak memory  %llu (%s", (unsigned long long)pr->sim.peak,
		size_human(pr->sim.peak, h, sizeof(h)));
	if (pr->peak_step >= 0)
		fprintf(f, " at step %d", pr->peak_step + 1);
	fprintf(f, ", %.1f%% of checkpoint-all's)\n",
		pr->peak_all ? 100.0 * (double)pr->sim.peak / (double)pr->peak_all : 100.0);
	if (pr->budget != SIM_NO_BUDGET) {
		fprintf(f, "budget       %llu (%s): ", (unsigned long long)pr->budget,
			size_human(pr->budget, h, sizeof(h)));
		if (pr->first_over >= 0)
			fprintf(f, "exceeded, first at step %d\n", pr->first_over + 1);
		else
			fprintf(f, "fits, %.1f%% used at the peak\n",
				100.0 * (double)pr->sim.peak / (double)pr->budget);
	}
	fprintf(f, "recomputed   %d node%s, %d extra compute%s, cost %.17g (%.2f%% of the cost)\n",
		pr->nrecomputed, pr->nrecomputed == 1 ? "" : "s", pr->extra_computes,
		pr->extra_computes == 1 ? "" : "s", pr->recompute_cost,
		pr->sim.cost > 0 ? 100 * pr->recompute_cost / pr->sim.cost : 0.0);
}

/* The row of the chart (1 .. SHOW_ROWS) that a value reaches: 0 for
 * nothing, at least 1 for anything. */
static int chart_row(uint64_t v, uint64_t top)
{
	int r;

	if (v == 0 || top == 0)
		return 0;
	r = (int)((double)v / (double)top * SHOW_ROWS + 0.5);
	return r < 1 ? 1 : r > SHOW_ROWS ? SHOW_ROWS : r;
}

/* Prints line without its trailing spaces, and a line break. */
static void put_line(FILE *f, char *line)
{
	size_t len = strlen(line);

	while (len > 0 && line[len - 1] == ' ')
		line[--len] = '\0';
	fprintf(f, "%s\n", line);
}

/* One row of the chart: '#' memory up to this row, '!' over the budget,
 * '-' the budget's row where memory does not reach it. */
static void chart_line(FILE *f, int r, const uint64_t *cols, int m, uint64_t top,
		       const struct profile *pr)
{
	int brow = pr->budget != SIM_NO_BUDGET ? chart_row(pr->budget, top) : -1, len;
	char h[32] = "", line[SHOW_COLUMNS + 32];

	if (r == SHOW_ROWS)
		size_human(top, h, sizeof(h));
	else if (r == brow)
		size_human(pr->budget, h, sizeof(h));
	len = snprintf(line, sizeof(line), "%10s |", h);
	for (int c = 0; c < m; c++) {
		int reach = chart_row(cols[c], top), over = brow >= 0 && cols[c] > pr->budget;

		/* A column over the budget reaches above the budget's row (or
		 * marks the top row, the budget's too), however little it is
		 * over: rounding must not hide an overrun. */
		if (over && reach <= brow)
			reach = brow < SHOW_ROWS ? brow + 1 : brow;
		if (reach >= r)
			line[len++] = over && (r > brow || r == SHOW_ROWS) ? '!' : '#';
		else
			line[len++] = r == brow ? '-' : ' ';
	}
	snprintf(line + len, sizeof(line) - (size_t)len, "%s", r == brow ? " budget" : "");
	put_line(f, line);
}

/* Memory in use over the steps as a bar chart of text, with the budget
 * and the peak marked. */
static void show_memory(FILE *f, const struct show *s)
{
	const struct profile *pr = &s->pr;
	uint64_t cols[SHOW_COLUMNS], top = pr->sim.peak;
	int m = profile_columns(pr, SHOW_COLUMNS, cols), pc;
	char h[32];

	if (pr->budget != SIM_NO_BUDGET && pr->budget > top)
		top = pr->budget;
	fprintf(f, "\nmemory in use over the steps (");
	if (m < pr->nsteps)
		fprintf(f, "a column: the highest of %.1f steps", (double)pr->nsteps / m);
	else
		fprintf(f, "a column a step");
	fprintf(f, "; ! over the budget)\n");
	for (int r = SHOW_ROWS; r >= 1; r--)
		chart_line(f, r, cols, m, top, pr);
	fprintf(f, "%10s +", "0 B");
	for (int c = 0; c < m; c++)
		fputc('-', f);
	fputc('\n', f);
	pc = pr->peak_step >= 0 ? profile_column_of(pr->nsteps, SHOW_COLUMNS, pr->peak_step) : -1;
	if (pc >= 0) {
		char what[64];
		int len = snprintf(what, sizeof(what), "peak %s at step %d",
				   size_human(pr->sim.peak, h, sizeof(h)), pr->peak_step + 1);

		/* The caret under the peak's column, the words where they fit. */
		if (pc + 2 + len <= m || pc < len + 1)
			fprintf(f, "%11s %*s^ %s\n", "", pc, "", what);
		else
			fprintf(f, "%11s %*s%s ^\n", "", pc - len - 1, "", what);
	}
	snprintf(h, sizeof(h), "%d", pr->nsteps);
	if (m > 7 + (int)strlen(h))
		fprintf(f, "%11s step 1%*s\n", "", m - 6, h);
	else
		fprintf(f, "%11s steps 1 to %s\n", "", h);
}

/* The nodes recomputed, the most costly first: how often each is
 * computed, what its recomputations cost and their share of the cost. */
static void show_recomputed(FILE *f, const struct show *s)
{
	const struct profile *pr = &s->pr;
	int top = pr->nrecomputed < SHOW_TOP ? pr->nrecomputed : SHOW_TOP, w = 4;
	double rest = pr->recompute_cost;

	if (pr->nrecomputed == 0) {
		fprintf(f, "\nno node is recomputed: every node is computed once\n");
		return;
	}
	for (int i = 0; i < top; i++) {
		int len = (int)strlen(s->g->nodes[pr->by_cost[i]].name);

		w = len > w ? (len < 40 ? len : 40) : w;
	}
	fprintf(f, "\nrecomputed nodes (%s%d of %d, by the cost of their recomputation)\n",
		top < pr->nrecomputed ? "the top " : "all ", top, pr->nrecomputed);
	fprintf(f, "  %-*s  %8s  %14s  %13s\n", w, "node", "computed", "recompute cost",
		"share of cost");
	for (int i = 0; i < top; i++) {
		int k = pr->by_cost[i];
		double c = profile_recompute_cost(s->g, pr, k);

		fprintf(f, "  %-*.*s  %7dx  %14.6g  %12.2f%%\n", w, w, s->g->nodes[k].name,
			pr->computes[k], c, pr->sim.cost > 0 ? 100 * c / pr->sim.cost : 0.0);
		rest -= c;
	}
	if (top < pr->nrecomputed)
		fprintf(f, "  %-*s  %8s  %14.6g  %12.2f%%\n", w, "(the others)", "",
			rest, pr->sim.cost > 0 ? 100 * rest / pr->sim.cost : 0.0);
}

/* The matrices' column header: the tens digit of each node index every
 * ten nodes, then the units digit of each. */
static void matrix_header(FILE *f, int n, char *line)
{
	for (int row = 0; row < 2; row++) {
		int len = sprintf(line, "%6s", "");

		for (int m = 0; m < 2; m++) {
			for (int i = 0; i < n; i++)
				line[len++] = (char)(row == 1 ? '0' + i % 10 :
						     i % 10 ? ' ' : '0' + i / 10 % 10);
			len += sprintf(line + len, "%s", m ? "" : "   ");
		}
		put_line(f, line);
	}
}

/* Node index -> name, wrapped. */
static void matrix_legend(FILE *f, const struct graph *g)
{
	int col = 0;

	fprintf(f, "nodes:");
	col = 6;
	for (int i = 0; i < g->n; i++) {
		int len = snprintf(NULL, 0, " %d %s%s", i, g->nodes[i].name, i + 1 < g->n ? "," : "");

		if (col + len > 78) {
			fprintf(f, "\n      ");
			col = 6;
		}
		col += fprintf(f, " %d %s%s", i, g->nodes[i].name, i + 1 < g->n ? "," : "");
	}
	fputc('\n', f);
}

/* R and S side by side as the paper draws them: a row per stage, a column
 * per node; '#' a one, '.' a zero of the lower triangle. */
static void show_matrices(FILE *f, const struct show *s)
{
	const struct graph *g = s->g;
	struct stages st;
	struct cm_error err;
	char *line = NULL;

	if (stages_init(&st, g->n, &err)) {
		fprintf(f, "\nno stage matrices: %s\n", err.msg);
		return;
	}
	line = malloc(2 * (size_t)g->n + 32);
	if (line == NULL) {
		fprintf(f, "\nno stage matrices: out of memory\n");
		goto out;
	}
	if (stages_from_plan(g, s->p, &st)) {
		fprintf(f, "\nno stage matrices: the plan does not compute the nodes for the "
			"first time in graph order\n");
		goto out;
	}
	fprintf(f, "\nstage matrices: a row per stage t, a column per node i; R: i computed in\n"
		"stage t, S: i kept in memory from stage t - 1 into t\n");
	fprintf(f, "%6s%-*s   S\n", "", g->n, "R");
	matrix_header(f, g->n, line);
	for (int t = 0; t < g->n; t++) {
		int len = sprintf(line, "%5d ", t + 1);

		for (int i = 0; i < g->n; i++)
			line[len++] = i > t ? ' ' : STAGE_R(&st, t, i) ? '#' : '.';
		len += sprintf(line + len, "   ");
		for (int i = 0; i < t; i++)
			line[len++] = STAGE_S(&st, t, i) ? '#' : '.';
		line[len] = '\0';
		put_line(f, line);
	}
	matrix_legend(f, g);
out:
	free(line);
	stages_release(&st);
}

/* A horizontal line at y across the memory plot, labelled at its right
 * end. */
static void plot_level(FILE *gp, double y, const char *what, uint64_t bytes,
		       const char *color, int id)
{
	char h[32], label[96];

	snprintf(label, sizeof(label), "%s %s", what, size_human(bytes, h, sizeof(h)));
	fprintf(gp, "set arrow %d from graph 0, first %.6g to graph 1, first %.6g nohead "
		"lc rgb '%s' lw 2 dt 2 front\nset label %d ", id, y, y, color, id);
	cli_plot_string(gp, label);
	fprintf(gp, " at graph 0.99, first %.6g right offset 0, 0.7 tc rgb '%s' front\n", y,
		color);
}

/* The upper plot: memory in use after each step, recomputations marked,
 * the budget and the checkpoint-all peak as labelled lines. */
static void plot_memory(FILE *gp, const struct show *s)
{
	const struct profile *pr = &s->pr;
	uint64_t top = pr->sim.peak > pr->peak_all ? pr->sim.peak : pr->peak_all;
	const char *unit;
	double scale;

	if (pr->budget != SIM_NO_BUDGET && pr->budget > top)
		top = pr->budget;
	cli_plot_unit(top, &scale, &unit);
	fprintf(gp, "$m << EOD\n0 %.6g\n", (double)s->g->fixed_memory / scale);
	for (int i = 0; i < pr->nsteps; i++)
		fprintf(gp, "%d %.6g %d\n", i + 1, (double)pr->memory[i] / scale, pr->recompute[i]);
	fprintf(gp, "EOD\nset title ");
	cli_plot_string(gp, s->g->id);
	fprintf(gp, ".': memory in use over the plan''s %d steps (cost %.6g, overhead %.4fx)",
		pr->nsteps, pr->sim.cost, pr->sim.cost / (pr->floor_cost > 0 ? pr->floor_cost : 1));
	if (pr->first_over >= 0)
		fprintf(gp, ", over the budget from step %d", pr->first_over + 1);
	fprintf(gp, "' noenhanced\nset xlabel 'step'\nset ylabel 'memory in use (%s)'\n"
		"set yrange [0:%.6g]\nset xrange [0:%d]\nset key at graph 0.01, graph 0.98 top left horizontal\n"
		"set grid\n",
		unit, (double)top / scale * 1.3, pr->nsteps + 1);
	if (pr->budget != SIM_NO_BUDGET)
		plot_level(gp, (double)pr->budget / scale, "budget", pr->budget, "#c00000", 1);
	plot_level(gp, (double)pr->peak_all / scale, "checkpoint-all peak", pr->peak_all,
		   "#707070", 2);
	fprintf(gp, "plot $m using 1:2 with fillsteps fs solid 0.3 lc rgb '#4a7ebb' "
		"title 'in use after the step', '' using 1:2 with steps lc rgb '#4a7ebb' "
		"notitle, '' using 1:($3 > 0 ? $2 : NaN) with points pt 7 ps 1 "
		"lc rgb '#e07000' title 'a recomputation'");
	if (pr->peak_step >= 0)
		fprintf(gp, ", '-' using 1:2 with points pt 6 ps 2 lc rgb 'black' "
			"title 'peak %.4g %s'\n%d %.6g\ne", (double)pr->sim.peak / scale, unit,
			pr->peak_step + 1, (double)pr->sim.peak / scale);
	fprintf(gp, "\nunset arrow\nunset label\n");
}

/* The lower plot: the most costly recomputed nodes as horizontal bars,
 * their share of the plan's cost, how often each is computed. */
static void plot_counts(FILE *gp, const struct show *s)
{
	const struct profile *pr = &s->pr;
	int top = pr->nrecomputed < SHOW_TOP ? pr->nrecomputed : SHOW_TOP;
	double most = 0;

	fprintf(gp, "set title '%d node%s recomputed%s (Nx: computed N times)' noenhanced\n"
		"unset key\nset grid x\nset xlabel 'cost of the node''s recomputations "
		"(%% of the plan''s cost)'\nunset ylabel\nset ytics (", pr->nrecomputed,
		pr->nrecomputed == 1 ? "" : "s", top < pr->nrecomputed ? "; the ten most costly" : "");
	for (int i = 0; i < top; i++) {
		fprintf(gp, "%s", i ? ", " : "");
		cli_plot_string(gp, s->g->nodes[pr->by_cost[i]].name);
		fprintf(gp, " %d", i);
	}
	fprintf(gp, ") noenhanced\n$r << EOD\n");
	for (int i = 0; i < top; i++) {
		int k = pr->by_cost[i];
		double share = pr->sim.cost > 0 ? 100 * profile_recompute_cost(s->g, pr, k) /
						    pr->sim.cost : 0;

		fprintf(gp, "%d %.6g \"%dx\"\n", i, share, pr->computes[k]);
		most = share > most ? share : most;
	}
	fprintf(gp, "EOD\nset yrange [%g:-0.7]\nset xrange [0:%.6g]\nset style fill solid 0.6\n",
		top > 0 ? top - 0.3 : 0.7, most > 0 ? most * 1.15 : 1);
	if (top == 0)
		fprintf(gp, "set label 'no node is recomputed' at graph 0.5, 0.5 center\n"
			"unset ytics\nunset xtics\nunset xlabel\nunset title\nplot NaN notitle\n");
	else
		fprintf(gp, "plot $r using ($2 / 2):1:($2 / 2):(0.35) with boxxyerror "
			"lc rgb '#e07000', '' using 2:1:3 with labels left offset 0.5, 0\n");
}

/* The script: both plots, one above the other. */
static void plot_script(FILE *gp, void *ctx)
{
	const struct show *s = ctx;

	fprintf(gp, "set multiplot\nset size 1, 0.66\nset origin 0, 0.34\n");
	plot_memory(gp, s);
	fprintf(gp, "set size 1, 0.34\nset origin 0, 0\n");
	plot_counts(gp, s);
	fprintf(gp, "unset multiplot\n");
}

/* The graph, the budget and the plan; 0, or the exit status after the
 * error is printed (check's messages). */
static int show_load(const struct cli_args *a, struct show *s, struct plan **p,
		     struct graph **g, struct sim_copy *copy)
{
	uint64_t budget = SIM_NO_BUDGET;
	struct cm_error err;
	int rc;

	*g = cli_load_graph(a->graph, a->quiet);
	if (*g == NULL)
		return CM_EXIT_ERROR;
	if (a->budget && size_parse(a->budget, graph_peak_all(*g), &budget, &err))
		return cli_usage("show", "%s", err.msg);
	if (a->bandwidth && (rc = cli_copy_rates("show", a, *g, copy)))
		return rc;
	*p = plan_read_file(a->plan, *g, &err);
	if (*p == NULL)
		return cli_error("%s", err.msg);
	if (plan_first_copy(*p) >= 0 && !a->bandwidth) {
		const struct plan_step *c = &(*p)->steps[plan_first_copy(*p)];

		return cli_error("%s: step %d: %s '%s': a plan with copies needs --bandwidth (a "
				 "copy has no duration without one)", a->plan,
				 plan_first_copy(*p) + 1, plan_op_name(c->op),
				 (*g)->nodes[c->node].name);
	}
	if (a->budget == NULL && (*p)->budget)
		budget = (*p)->budget;
	*s = (struct show){ .g = *g, .p = *p, .path = a->plan,
			    .copy = a->bandwidth ? copy : NULL };
	if (profile_plan(*g, *p, budget, s->copy, &s->pr, &err))
		return cli_error("%s", err.msg);
	if (!s->pr.sim.valid)
		return cli_error("%s: %s", a->plan, s->pr.sim.why);
	return 0;
}

int cmd_show_main(int argc, char **argv)
{
	struct cli_args a;
	struct show s = { 0 };
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct sim_copy copy;
	int rc = cmd_show_parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	rc = show_load(&a, &s, &p, &g, &copy);
	if (rc)
		goto out;
	if (a.plot && (rc = cli_plot(a.plot, 1000, 760, plot_script, &s)))
		goto out;
	show_summary(stdout, &s);
	show_memory(stdout, &s);
	show_recomputed(stdout, &s);
	if (a.matrices || g->n <= SHOW_MATRIX_NODES)
		show_matrices(stdout, &s);
	rc = fflush(stdout) == 0 ? CM_EXIT_OK : cli_error("standard output: write failed");
out:
	profile_release(&s.pr);
	plan_free(p);
	graph_free(g);
	return rc;
}

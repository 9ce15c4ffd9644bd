#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/read.h"
#include "../solvers/milp/backend/solver.h"
#include "../solvers/strategy.h"

/* Set by cli_redirect; NULL means standard error and output. */
static FILE *msg_stream, *help_stream;

void cli_redirect(FILE *msg, FILE *help)
{
	msg_stream = msg;
	help_stream = help;
}

FILE *cli_msg(void)
{
	return msg_stream ? msg_stream : stderr;
}

FILE *cli_help(void)
{
	return help_stream ? help_stream : stdout;
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	cli_progress_clear();
	fputs("checkmate: ", cli_msg());
	va_start(ap, fmt);
	vfprintf(cli_msg(), fmt, ap);
	va_end(ap);
	fputc('\n', cli_msg());
	return CM_EXIT_ERROR;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(cli_msg(), "checkmate: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(cli_msg(), fmt, ap);
	va_end(ap);
	fprintf(cli_msg(), " (see 'checkmate %s --help')\n", cmd);
	return CM_EXIT_USAGE;
}

void cli_note(int quiet, const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	cli_progress_clear();
	fputs("checkmate: ", cli_msg());
	va_start(ap, fmt);
	vfprintf(cli_msg(), fmt, ap);
	va_end(ap);
	fputc('\n', cli_msg());
}

struct graph *cli_load_graph(const char *arg, int quiet)
{
	struct cm_error err;
	struct graph *g;

	if (arg == NULL) {
		arg = CLI_DEFAULT_GRAPH;
		cli_note(quiet, "no GRAPH given; using the built-in example %s", arg);
	}
	g = graph_load(arg, &err);
	if (g == NULL)
		cli_error("%s", err.msg);
	return g;
}

int cli_parse_double(const char *opt, const char *s, double lo, double hi,
		     double *out, struct cm_error *err)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (end == s || *end != '\0' || errno || !isfinite(*out))
		return cm_errorf(err, "%s: '%s' is not a number", opt, s);
	if (*out < lo || *out > hi)
		return cm_errorf(err, "%s: %s is out of range [%g, %g]", opt, s, lo, hi);
	return 0;
}

int cli_parse_whole(const char *opt, const char *s, double lo, double hi, double *out,
		    struct cm_error *err)
{
	if (cli_parse_double(opt, s, lo, hi, out, err) || *out != floor(*out))
		return cm_errorf(err, "%s: expected a whole number from %.0f to %.0f", opt, lo, hi);
	return 0;
}

void csv_header(FILE *f, int with_time)
{
	fputs("graph,strategy,param,solver,budget,feasible,cost,overhead,"
	      "peak_memory,lower_bound,gap,solve_seconds,status", f);
	fputs(with_time ? ",time,wait,host_peak_memory,time_lower_bound\n" : "\n", f);
}

/* A text field, quoted when it holds a comma, quote or line break. */
static void csv_text(FILE *f, const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int cli_row_gap(const struct strategy_row *r, double *gap)
{
	/* A plan over budget is no answer, so it has no gap. */
	if (!(r->has_lower_bound && r->has_cost && r->feasible))
		return 0;
	/* With a bandwidth, the gap in time. */
	if (r->has_time && r->has_time_bound)
		*gap = r->time > 0 ? (r->time - r->time_bound) / r->time : 0;
	else
		*gap = r->cost > 0 ? (r->cost - r->lower_bound) / r->cost : 0;
	return 1;
}

void csv_row(FILE *f, const struct strategy_row *r, int with_time)
{
	double gap;

	csv_text(f, r->graph);
	fputc(',', f);
	csv_text(f, r->strategy);
	fputc(',', f);
	csv_text(f, r->param);
	fputc(',', f);
	csv_text(f, r->solver);
	fprintf(f, ",%llu,%d,", (unsigned long long)r->budget, r->feasible);
	if (r->has_cost)
		fprintf(f, "%.17g,%.6f,%llu", r->cost, r->overhead,
			(unsigned long long)r->peak);
	else
		fputs(",,", f);
	fputc(',', f);
	if (r->has_lower_bound)
		fprintf(f, "%.17g", r->lower_bound);
	fputc(',', f);
	if (cli_row_gap(r, &gap))
		fprintf(f, "%.6g", gap);
	fprintf(f, ",%.3f,", r->seconds);
	csv_text(f, strategy_status_names[r->status]);
	if (with_time && r->has_time)
		fprintf(f, ",%.9g,%.9g,%llu", r->time, r->wait, (unsigned long long)r->host_peak);
	else if (with_time)
		fputs(",,,", f);
	if (with_time && r->has_time_bound)
		fprintf(f, ",%.9g", r->time_bound);
	else if (with_time)
		fputc(',', f);
	fputc('\n', f);
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == '?' || c == ':') {
		const char *arg = argv[optind - 1];

		if (c == ':')
			cli_usage(cmd, "option '%s' needs a value", arg);
		else if (optopt && strncmp(arg, "--", 2) != 0)
			cli_usage(cmd, "unknown option '-%c'", optopt);
		else
			cli_usage(cmd, "unknown option '%s'", arg);
		return '?';
	}
	return c;
}

/* Progress on standard error for solves that last over a second. */

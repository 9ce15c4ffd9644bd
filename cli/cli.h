/* Shared by the subcommands: exit statuses, messages, sizes, output files,
 * CSV rows. Only cli/ prints or exits. */
#ifndef CM_CLI_H
#define CM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "../common/size.h"
#include "../graph/graph.h"

#define CM_VERSION "0.1.0"

/* Exit statuses (docs/formats.md, Statuses and exit codes). */
enum {
	CM_EXIT_OK = 0,         /* a plan or answer was produced */
	CM_EXIT_ERROR = 1,      /* bad input, I/O, solver failure */
	CM_EXIT_USAGE = 2,      /* bad command line */
	CM_EXIT_INFEASIBLE = 3, /* proven infeasible at this budget */
	CM_EXIT_NO_PLAN = 4,    /* no plan that fits found, nothing proven */
};

/* The built-in example a command uses when it is given no GRAPH. */
#define CLI_DEFAULT_GRAPH "linear:8"

int cmd_solve_main(int argc, char **argv);
int cmd_check_main(int argc, char **argv);
int cmd_info_main(int argc, char **argv);
int cmd_compare_main(int argc, char **argv);
int cmd_maxbatch_main(int argc, char **argv);
int cmd_show_main(int argc, char **argv);
int cmd_partition_main(int argc, char **argv);

/* Each command's option parsing alone, as its X_main does it first:
 * returns 0 with a filled (check: graph, plan, budget, quiet; info: graph,
 * json, quiet; show: graph, plan, budget, plot, matrices, quiet), -1 after
 * printing --help, or CM_EXIT_USAGE after a usage message. Changes argv's
 * strings (--param). */
struct cli_args;
int cmd_solve_parse(int argc, char **argv, struct cli_args *a);
int cmd_compare_parse(int argc, char **argv, struct cli_args *a);
int cmd_maxbatch_parse(int argc, char **argv, struct cli_args *a);
int cmd_check_parse(int argc, char **argv, struct cli_args *a);
int cmd_info_parse(int argc, char **argv, struct cli_args *a);
int cmd_show_parse(int argc, char **argv, struct cli_args *a);
int cmd_partition_parse(int argc, char **argv, struct cli_args *a);

/* Where messages (cli_error, cli_usage, cli_note) and --help texts go:
 * standard error and standard output, unless cli_redirect names other
 * streams (NULL: back to those); the option fuzzer reads them. */
void cli_redirect(FILE *msg, FILE *help);
FILE *cli_msg(void);
FILE *cli_help(void);

/* "checkmate: " + message + newline on cli_msg(); returns
 * CM_EXIT_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* As cli_error, plus a hint to run `checkmate CMD --help`; returns
 * CM_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A message for standard error unless quiet. */
void cli_note(int quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Progress on standard error (cli/progress.c). AUTO: one line rewritten
 * in place on a terminal (LINE), else a line at most every second
 * (LINES). */
enum cli_progress_mode { CLI_PROGRESS_AUTO, CLI_PROGRESS_LINE, CLI_PROGRESS_LINES };

/* Before a solve: how to show its progress, the checkpoint-all cost (0:
 * unknown; the costs are then shown without overheads) and its time limit
 * (0: none). */
void cli_progress_setup(int mode, double floor_cost, double time_limit);

/* A solve_request progress callback (ctx unused): the time spent and
 * left, the phase, the best plan and the bound as overheads, the gap. */
struct solve_progress;
void cli_progress(void *ctx, const struct solve_progress *p);

/* Clears a rewritten line from the terminal: before anything else is
 * written to standard error. cli_progress_on_line says whether one is
 * there (async-signal-safe). */
void cli_progress_clear(void);
int cli_progress_on_line(void);

/* Loads GRAPH (NULL: the built-in example, said on standard error unless
 * quiet); prints the error and returns NULL on failure. */
struct graph *cli_load_graph(const char *arg, int quiet);

/* getopt_long with our messages: returns the option, -1 at the end of the
 * options, or '?' after printing a usage error (unknown option, missing
 * argument). optind must be reset to 0 by the first call's caller. */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/* Strict numeric option values; 0 or -1 with err set. */
int cli_parse_double(const char *opt, const char *s, double lo, double hi,
		     double *out, struct cm_error *err);
/* The same for a whole number (counts, seeds). */
int cli_parse_whole(const char *opt, const char *s, double lo, double hi, double *out,
		    struct cm_error *err);

/* An output file written whole or not at all: data goes to a temporary file
 * beside the target, renamed over it by out_commit. "-" is standard
 * output. */
struct out {
	FILE *f;
	char *path; /* target, NULL for standard output */
	char *tmp;  /* temporary file */
};

int out_open(struct out *o, const char *path, struct cm_error *err);
/* Flushes, closes and renames; -1 with err set when any write failed (the
 * temporary file is then removed). */
int out_commit(struct out *o, struct cm_error *err);
/* Discards the temporary file. Safe to call after out_commit. */
void out_abort(struct out *o);

/* Plots (cli/plot.c). cli_plot pipes a script to gnuplot, which draws
 * into a temporary file renamed to path (.svg or .png, width x height
 * pixels) on success: script(gp, ctx) writes what follows the terminal and
 * output lines. Returns 0, or prints the error (gnuplot missing or
 * failing) and returns CM_EXIT_ERROR; no file is left then. */
int cli_plot(const char *path, int width, int height,
	     void (*script)(FILE *gp, void *ctx), void *ctx);
/* 0 when path ends in .svg or .png, else a usage error of cmd (printed;
 * returns CM_EXIT_USAGE). */
int cli_plot_name(const char *cmd, const char *path);
/* 0 when a file can be made beside path (checked before the work), else
 * the error printed and CM_EXIT_ERROR. */
int cli_plot_writable(const char *path);
/* s as a gnuplot string literal ('...', quotes doubled). */
void cli_plot_string(FILE *gp, const char *s);
/* The binary unit ("B", "KiB", ... "TiB") that keeps max below 10240 of
 * them: its size in *scale, its name in *unit; returns its power of 1024. */
int cli_plot_unit(uint64_t max, double *scale, const char **unit);

/* The temporary files of outputs not yet committed (out_open, and the
 * plot's) are tracked, so that a second SIGINT can remove them: at most
 * OUT_MAX_TEMPS at once (more are not tracked). out_unlink_temps is
 * async-signal-safe. */
#define OUT_MAX_TEMPS 8
void out_track_temp(const char *path);
void out_untrack_temp(const char *path);
void out_unlink_temps(void);

/* SIGINT and SIGTERM for a long command (cli/interrupt.c): the first
 * asks the search to stop and says so on standard error (unless quiet),
 * the second kills the solver processes, removes the temporary files and
 * ends the process by the signal. A signal ignored at start stays
 * ignored. cli_interrupted: 1 after the first. */
void cli_catch_interrupts(int quiet);
int cli_interrupted(void);

/* The CSV header and rows (docs/formats.md, CSV columns); with_time adds
 * the columns of a run with --bandwidth (a row's time, wait and host peak,
 * empty when it has none). */
struct strategy_row;
void csv_header(FILE *f, int with_time);
void csv_row(FILE *f, const struct strategy_row *r, int with_time);
/* 1 and *gap = (cost - lower_bound) / cost when r has a gap (a bound and
 * a plan that fits); 0 otherwise. */
int cli_row_gap(const struct strategy_row *r, double *gap);

#endif

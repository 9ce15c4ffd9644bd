/* The options that solve, compare and maxbatch share: one parser and one
 * help text instead of a copy per command. */
#ifndef CM_OPTIONS_H
#define CM_OPTIONS_H

#include <getopt.h>

#include "../solvers/strategy.h"

/* getopt_long entries of the shared options; a command lists them after
 * its own (short options: "t:qh"). */
#define CLI_SHARED_LONGOPTS                                        \
	{ "csv", required_argument, NULL, 'C' },                   \
	{ "no-header", no_argument, NULL, 'H' },                   \
	{ "solver", required_argument, NULL, 'S' },                \
	{ "time-limit", required_argument, NULL, 't' },            \
	{ "gap", required_argument, NULL, 'G' },                   \
	{ "threads", required_argument, NULL, 'T' },               \
	{ "lp-method", required_argument, NULL, 'M' },             \
	{ "quiet", no_argument, NULL, 'q' },                       \
	{ "help", no_argument, NULL, 'h' }
#define CLI_SHARED_SHORTOPTS "t:qh"

#define CLI_SHARED_HELP                                                          \
	"      --csv FILE|-         write the results as CSV rows (with a header)\n" \
	"      --no-header          leave the CSV header out\n"                      \
	"      --solver NAME        cbc (default) or glpk\n"                         \
	"  -t, --time-limit SEC     stop each solve after SEC seconds (0: none,\n"   \
	"                           the default); its best answer is then\n"         \
	"                           reported with its gap\n"                         \
	"      --gap FRAC           stop a MILP at this relative gap (default 0)\n"  \
	"      --threads N          solver threads (Debian's cbc uses one);\n"       \
	"                           approx shares a large model's LPs among\n"       \
	"                           at most N processes (default: a core each)\n"    \
	"      --lp-method M        auto (default), dual, primal or barrier: how\n"  \
	"                           LP relaxations are solved (approx, --bound)\n"   \
	"  -q, --quiet              no messages on standard error\n"                 \
	"  -h, --help               this text\n"

struct cli_shared {
	const char *csv, *solver;
	double time_limit, gap;
	int threads, lp_method, header, quiet;
};

/* The defaults: a CSV header, no limits. */
void cli_shared_init(struct cli_shared *s);

/* Takes option c (with its argument) when it is a shared one: returns 1
 * when taken, 0 when c is not shared, CM_EXIT_USAGE after a usage message
 * for a bad value; 'h' prints help and returns -1. */
int cli_shared_option(const char *cmd, const char *help, int c, const char *arg,
		      struct cli_shared *s);

/* Copies the solver settings and progress reporting into a request. */
void cli_shared_request(const struct cli_shared *s, struct solve_request *rq);

#endif

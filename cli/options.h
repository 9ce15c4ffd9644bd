/* The options of solve, compare and maxbatch: one parser, one switch, one
 * help text for what they share; each command lists which options it
 * takes. */
#ifndef CM_OPTIONS_H
#define CM_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "../solvers/strategy.h"

/* getopt_long entries of the shared options; a command lists them after
 * its own (short options: CLI_SHARED_SHORTOPTS). */
#define CLI_SHARED_LONGOPTS                                        \
	{ "csv", required_argument, NULL, 'C' },                   \
	{ "no-header", no_argument, NULL, 'H' },                   \
	{ "solver", required_argument, NULL, 'S' },                \
	{ "time-limit", required_argument, NULL, 't' },            \
	{ "gap", required_argument, NULL, 'G' },                   \
	{ "threads", required_argument, NULL, 'T' },               \
	{ "lp-method", required_argument, NULL, 'M' },             \
	{ "param", required_argument, NULL, 'p' },                 \
	{ "memory-limit", required_argument, NULL, 'Y' },          \
	{ "quiet", no_argument, NULL, 'q' },                       \
	{ "progress", required_argument, NULL, 'W' },              \
	{ "help", no_argument, NULL, 'h' }
#define CLI_SHARED_SHORTOPTS "t:p:qh"

#define CLI_SHARED_HELP                                                          \
	"      --csv FILE|-         write the results as CSV rows (with a header)\n" \
	"      --no-header          leave the CSV header out\n"                      \
	"      --solver NAME        cbc (default) or glpk\n"                         \
	"  -t, --time-limit SEC     stop each solve after SEC seconds (default 60;\n" \
	"                           0: none, but auto, lns and pebble, which share\n" \
	"                           their time out, still take 60); its best\n"    \
	"                           answer is then reported with its gap\n"         \
	"      --gap FRAC           stop a MILP, or auto, once its plan is within\n"\
	"                           FRAC of its bound (default 0)\n"                \
	"      --threads N          solver threads (Debian's cbc uses one);\n"       \
	"                           approx shares a large model's LPs among\n"       \
	"                           at most N processes (default: a core each)\n"    \
	"      --lp-method M        auto (default), dual, primal or barrier: how\n"  \
	"                           LP relaxations are solved (approx, --bound)\n"   \
	"  -p, --param KEY=VALUE    a parameter of a strategy (repeatable; the\n"    \
	"                           keys each takes are listed below)\n"             \
	"      --memory-limit SIZE  refuse a model (ilp, approx, an LP bound, an\n"  \
	"                           lns window) whose solve would take more (16G,\n" \
	"                           50% of the machine's; default: the memory\n"    \
	"                           available); auto falls back to one that fits\n" \
	"      --progress HOW       auto (default: a line rewritten in place on a\n"  \
	"                           terminal, else a line a second) or lines\n"     \
	"  -q, --quiet              no messages on standard error\n"                 \
	"  -h, --help               this text\n"

/* --json FILE|- of solve and compare (cli/jsonl.h). */
#define CLI_JSON_LONGOPT { "json", required_argument, NULL, 'J' }
#define CLI_JSON_HELP \
	"      --json FILE|-        write the results as JSON Lines (an object a line)\n"

/* Most --param a command line may give. */
#define CLI_MAX_PARAMS 32

/* Everything the three commands parse; each takes the part its option
 * table names. */
struct cli_args {
	const char *graph, *budget;
	const char *strategy;   /* solve --strategy */
	const char *strategies; /* compare --strategies/--baselines, maxbatch --strategies */
	const char *list_opt;   /* which of those gave it, for messages */
	const char *plan, *lp, *budgets, *plot;
	const char *first_plan;  /* solve --first-plan */
	const char *csv, *solver;
	const char *json;       /* solve, compare and info --json */
	const char *bandwidth, *rate, *host_budget; /* check and solve
						      * --bandwidth, --rate,
						      * --host-budget */
	int matrices;           /* show --matrices */
	double time_limit;      /* --time-limit, -1 when not given */
	double gap, max_overhead;
	unsigned long long seed;
	int samples, text, bound, ilp, approx, sweep;
	int threads, lp_method, header, quiet;
	int progress;           /* --progress: enum cli_progress_mode */
	int jobs;               /* compare --jobs, 0 when not given */
	uint64_t memory_limit; /* --memory-limit in bytes, 0 for none */
	struct strategy_param params[CLI_MAX_PARAMS];
	int n_params;
};

/* Parses argv for cmd with its option table (shared options included) and
 * short options; at most one GRAPH operand. Returns 0; -1 after printing
 * --help (help, then the strategy table); CM_EXIT_USAGE after a usage
 * message. */
int cli_parse(const char *cmd, const char *help, const struct option *opts,
	      const char *shortopts, int argc, char **argv, struct cli_args *a);

/* A usage message and CM_EXIT_USAGE when two of the n output paths (NULL:
 * not given) are the same, "-" included; else 0. */
int cli_distinct_outputs(const char *cmd, const char *const *paths, int n);

/* Takes --solver NAME into a->solver: 0 for a backend built in, else a
 * usage message (with the nearest name) and CM_EXIT_USAGE. */
int cli_take_solver(const char *cmd, const char *name, struct cli_args *a);

/* The solver settings, parameters and progress reporting of a into rq. */
void cli_request(const struct cli_args *a, struct solve_request *rq);

/* What cli_strategy_list does with the rows that make plans with copies
 * (STRATEGY_COPIES): without a bandwidth, one named is a usage error; with
 * one, they are allowed, or all of them added to the list. */
enum { CLI_COPIES_REFUSED, CLI_COPIES_ALLOWED, CLI_COPIES_ADDED };

/* The strategies named by a comma-separated list ("all": the rows whose
 * flags include all_mask) into a malloc'd array in table order, each
 * once, the rows with copies as `copies` says; *n their count. A usage
 * message and CM_EXIT_USAGE for an unknown name or a row with copies
 * refused. */
int cli_strategy_list(const char *cmd, const char *opt, const char *list,
		      unsigned all_mask, int copies, const struct strategy ***out, int *n);

/* The rates and the host budget of a replay in time (struct sim_copy),
 * from a's --bandwidth, --rate and --host-budget and g's cost_unit: 0, or
 * CM_EXIT_USAGE after a usage message of cmd. */
int cli_copy_rates(const char *cmd, const struct cli_args *a, const struct graph *g,
		   struct sim_copy *c);

/* The strategy table as --help lists it. */
void cli_print_strategies(FILE *f);

#endif

#include "options.h"

#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "../common/near.h"
#include "../common/rate.h"
#include "../solvers/compare.h"
#include "cli.h"

/* Takes one --param KEY=VALUE. */
static int take_param(const char *cmd, char *arg, struct cli_args *a)
{
	char *eq = strchr(arg, '=');

	if (eq == NULL || eq == arg)
		return cli_usage(cmd, "--param: expected KEY=VALUE, not '%s'", arg);
	if (a->n_params == CLI_MAX_PARAMS)
		return cli_usage(cmd, "--param: at most %d may be given", CLI_MAX_PARAMS);
	*eq = '\0'; /* argv's strings are ours to change */
	a->params[a->n_params++] = (struct strategy_param){ arg, eq + 1 };
	return 0;
}

int cli_take_solver(const char *cmd, const char *name, struct cli_args *a)
{
	const char *near;
	char names[128];

	a->solver = name;
	if (solver_find(name))
		return 0;
	solver_names(names, sizeof(names));
	if ((near = near_name(name, solver_name_at, solver_count(), NULL)) != NULL)
		return cli_usage(cmd, "--solver: unknown solver '%s'; did you mean '%s'?", name, near);
	return cli_usage(cmd, "--solver: unknown solver '%s' (built: %s)", name, names);
}

/* What take_word returns for an option that is not one of its own. */
#define NOT_A_WORD (-2)

/* Takes option c, a flag or one whose argument is a word; 0, -1 after
 * --help, CM_EXIT_USAGE, or NOT_A_WORD. */
static int take_word(const char *cmd, const char *help, int c, char *arg, struct cli_args *a)
{
	switch (c) {
	case 'b': a->budget = arg; return 0;
	case 's':
		/* solve picks one strategy; compare and maxbatch a list */
		if (strcmp(cmd, "solve") == 0) {
			a->strategy = arg;
		} else {
			a->strategies = arg;
			a->list_opt = "--strategies";
		}
		return 0;
	case 'B':
		a->strategies = arg;
		a->list_opt = "--baselines";
		return 0;
	case 'o': a->plan = arg; return 0;
	case 'V': a->first_plan = arg; return 0;
	case 'K': a->bandwidth = arg; return 0;
	case 'E': a->rate = arg; return 0;
	case 'O': a->host_budget = arg; return 0;
	case 'L': a->lp = arg; return 0;
	case 'D': a->bound = 1; return 0;
	case 'I': a->ilp = 1; return 0;
	case 'A': a->approx = 1; return 0;
	case 'U': a->budgets = arg; return 0;
	case 'P': a->plot = arg; return 0;
	case 'C': a->csv = arg; return 0;
	case 'J': a->json = arg; return 0;
	case 'H': a->header = 0; return 0;
	case 'S': return cli_take_solver(cmd, arg, a);
	case 'q': a->quiet = 1; return 0;
	case 'W':
		if (strcmp(arg, "auto") == 0 || strcmp(arg, "lines") == 0) {
			a->progress = arg[0] == 'l' ? CLI_PROGRESS_LINES : CLI_PROGRESS_AUTO;
			return 0;
		}
		return cli_usage(cmd, "--progress must be auto or lines, not '%s'", arg);
	case 'p': return take_param(cmd, arg, a);
	case 'F':
		if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
			return cli_usage(cmd, "--plan-format must be json or text, not '%s'", arg);
		a->text = arg[0] == 't';
		return 0;
	case 'M':
		a->lp_method = lp_method_find(arg);
		if (a->lp_method >= 0)
			return 0;
		return cli_usage(cmd, "--lp-method must be auto, dual, primal or barrier, not '%s'",
				 arg);
	case 'h':
		fputs(help, cli_help());
		cli_print_strategies(cli_help());
		return -1;
	}
	return NOT_A_WORD;
}

/* Takes option c whose argument is a number or a size; 0 or CM_EXIT_USAGE. */
static int take_number(const char *cmd, int c, char *arg, struct cli_args *a)
{
	struct cm_error err;
	double v;

	switch (c) {
	case 't': return cli_parse_double("--time-limit", arg, 0, 1e9, &a->time_limit, &err) ?
		  cli_usage(cmd, "%s", err.msg) : 0;
	case 'G': return cli_parse_double("--gap", arg, 0, 1, &a->gap, &err) ?
		  cli_usage(cmd, "%s", err.msg) : 0;
	case 'X': return cli_parse_double("--max-overhead", arg, 1, 1e6, &a->max_overhead, &err) ?
		  cli_usage(cmd, "%s", err.msg) : 0;
	case 'T':
		if (cli_parse_whole("--threads", arg, 1, 256, &v, &err))
			return cli_usage(cmd, "%s", err.msg);
		a->threads = (int)v;
		return 0;
	case 'R':
		if (cli_parse_whole("--seed", arg, 0, 9007199254740992.0, &v, &err))
			return cli_usage(cmd, "%s", err.msg);
		a->seed = (unsigned long long)v;
		return 0;
	case 'N':
		if (cli_parse_whole("--samples", arg, 0, 100000, &v, &err))
			return cli_usage(cmd, "%s", err.msg);
		a->samples = (int)v;
		return 0;
	case 'n':
		if (cli_parse_whole("--sweep", arg, 1, 10000, &v, &err))
			return cli_usage(cmd, "%s", err.msg);
		a->sweep = (int)v;
		return 0;
	case 'j':
		if (cli_parse_whole("--jobs", arg, 1, COMPARE_MAX_JOBS, &v, &err))
			return cli_usage(cmd, "%s", err.msg);
		a->jobs = (int)v;
		return 0;
	case 'Y':
		if (size_parse(arg, mem_total(), &a->memory_limit, &err))
			return cli_usage(cmd, "--memory-limit: %s", err.msg);
		if (a->memory_limit == 0)
			return cli_usage(cmd, "--memory-limit: must be more than 0 bytes");
		return 0;
	}
	return CM_EXIT_USAGE; /* getopt has said what is wrong */
}

/* Takes option c with its argument; 0, -1 after --help, or CM_EXIT_USAGE. */
static int take(const char *cmd, const char *help, int c, char *arg, struct cli_args *a)
{
	int rc = take_word(cmd, help, c, arg, a);

	return rc == NOT_A_WORD ? take_number(cmd, c, arg, a) : rc;
}

int cli_parse(const char *cmd, const char *help, const struct option *opts,
	      const char *shortopts, int argc, char **argv, struct cli_args *a)
{
	int c, rc;

	*a = (struct cli_args){ .header = 1, .time_limit = -1 }; /* -1: not given */
	optind = 0;
	while ((c = cli_getopt(cmd, argc, argv, shortopts, opts)) != -1)
		if ((rc = take(cmd, help, c, optarg, a)) != 0)
			return rc;
	if (argc - optind > 1)
		return cli_usage(cmd, "expected at most one GRAPH");
	a->graph = optind < argc ? argv[optind] : NULL;
	return 0;
}

int cli_distinct_outputs(const char *cmd, const char *const *paths, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (paths[i] && paths[j] && strcmp(paths[i], paths[j]) == 0)
				return cli_usage(cmd, "two outputs name the same file ('%s')",
						 paths[i]);
	return 0;
}

void cli_request(const struct cli_args *a, struct solve_request *rq)
{
	rq->solver = a->solver;
	rq->time_limit = a->time_limit < 0 ? STRATEGY_TIME_LIMIT : a->time_limit;
	rq->gap = a->gap;
	rq->threads = a->threads;
	rq->lp_method = a->lp_method;
	rq->memory_limit = a->memory_limit;
	rq->params = a->params;
	rq->n_params = a->n_params;
	rq->progress = a->quiet ? NULL : cli_progress;
}

int cli_strategy_list(const char *cmd, const char *opt, const char *list,
		      unsigned all_mask, int copies, const struct strategy ***out, int *n)
{
	int count = strategy_count(), rc = 0;
	char *copy = strdup(list), *tok, *save = NULL;
	char *chosen = calloc((size_t)count + 1, 1);
	struct cm_error err;

	*out = calloc((size_t)count + 1, sizeof(**out));
	*n = 0;
	if (copy == NULL || chosen == NULL || *out == NULL) {
		rc = cli_error("out of memory");
		goto out;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct strategy *s;

		if (strcmp(tok, "none") == 0)
			continue;
		if (strcmp(tok, "all") == 0) {
			for (int i = 0; i < count; i++)
				chosen[i] |= (strategy_at(i)->flags & all_mask) == all_mask;
			continue;
		}
		if ((s = strategy_find(tok, &err)) == NULL) {
			rc = cli_usage(cmd, "%s: %s", opt, err.msg);
			goto out;
		}
		chosen[s - strategy_at(0)] = 1;
	}
	for (int i = 0; i < count; i++) {
		unsigned with = strategy_at(i)->flags & STRATEGY_COPIES;

		chosen[i] |= with && copies == CLI_COPIES_ADDED;
		if (chosen[i] && with && copies == CLI_COPIES_REFUSED) {
			rc = cli_usage(cmd, "strategy '%s' makes plans with copies: it needs "
				       "--bandwidth", strategy_at(i)->name);
			goto out;
		}
		if (chosen[i])
			(*out)[(*n)++] = strategy_at(i);
	}
out:
	free(copy);
	free(chosen);
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

void cli_print_strategies(FILE *f)
{
	fputs("\nstrategies:\n", f);
	for (int i = 0; i < strategy_count(); i++) {
		const struct strategy *s = strategy_at(i);

		fprintf(f, "  %-18s %s\n", s->name, s->description);
		for (const struct strategy_key *k = s->params; k && k->name; k++) {
			char values[256];

			fprintf(f, "  %-18s   --param %s=%s\n", "", k->name,
				k->choices ? strategy_key_values(k, values, sizeof(values)) : "N");
		}
	}
}

int cli_copy_rates(const char *cmd, const struct cli_args *a, const struct graph *g,
		   struct sim_copy *c)
{
	struct cm_error err;
	double rate;

	*c = (struct sim_copy){ 0 };
	if (rate_parse_bandwidth(a->bandwidth, &c->bandwidth, &err) ||
	    (a->host_budget && size_parse(a->host_budget, graph_peak_all(g), &c->host_budget,
					  &err)))
		return cli_usage(cmd, "%s", err.msg);
	if (a->host_budget && c->host_budget == 0)
		return cli_usage(cmd, "--host-budget '%s' must be above 0", a->host_budget);
	c->seconds_per_cost = graph_seconds_per_cost(g);
	if (c->seconds_per_cost > 0 && a->rate)
		return cli_usage(cmd, "--rate is for FLOP or unitless costs; %s's costs "
				 "are in %s", a->graph ? a->graph : g->id, graph_cost_unit_name(g));
	if (c->seconds_per_cost > 0)
		return 0;
	if (a->rate == NULL)
		return cli_usage(cmd, "%s: %s: give --rate, %s a second (312TFLOP/s)",
				 a->graph ? a->graph : g->id, g->cost_unit == GRAPH_COST_FLOPS ?
				 "the costs are FLOPs, not times" :
				 "the costs have no unit (no time cost_unit)",
				 g->cost_unit == GRAPH_COST_FLOPS ? "FLOPs" : "cost units");
	if (rate_parse_compute(a->rate, &rate, &err))
		return cli_usage(cmd, "%s", err.msg);
	c->seconds_per_cost = 1 / rate;
	return 0;
}

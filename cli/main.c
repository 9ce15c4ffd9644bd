/* checkmate: the command table (wireguard-tools style); each command's
 * X_main parses its own options and prints its own --help. */
#include <stdio.h>
#include <string.h>

#include "../solvers/milp/backend/solver.h"
#include "../common/near.h"
#include "../solvers/strategy.h"
#include "cli.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *description;
} commands[] = {
	{ "solve", cmd_solve_main, "find the cheapest plan that fits a memory budget" },
	{ "compare", cmd_compare_main, "run strategies side by side over budgets; CSV and plot" },
	{ "partition", cmd_partition_main,
	  "the values a compiled forward keeps for its backward, within a budget" },
	{ "maxbatch", cmd_maxbatch_main, "the largest batch each strategy fits in a budget" },
	{ "check", cmd_check_main, "replay a plan and report its cost, peak and first error" },
	{ "show", cmd_show_main, "what a plan does: memory over the steps, recomputations, R and S" },
	{ "info", cmd_info_main, "describe a graph: sizes, checkpoint-all cost and peak, bounds" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: checkmate COMMAND [ARGS]\n\n"
		"Optimal tensor rematerialization (Checkmate, MLSys 2020): the cheapest\n"
		"schedule that trains a network within a memory budget.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].description);
	fprintf(f, "\nGRAPH is a checkmate-graph or node-link JSON file, '-' for standard\n"
		"input, or a built-in example 'linear:N'. 'checkmate COMMAND --help'\n"
		"describes a command; 'checkmate --version' prints the version.\n");
}

/* checkmate --list WHAT: the names the tables hold, one a line (commands
 * and strategies followed by a tab and their description, a parameter
 * key by a tab and its strategy), for the completion scripts and the
 * manual page (share/); left out of the usage text. */
static int list(const char *what)
{
	char names[256], *tok, *save = NULL;

	if (what == NULL) {
		cli_error("--list: expected commands, strategies, params, solvers or lp-methods");
		return CM_EXIT_USAGE;
	} else if (strcmp(what, "commands") == 0) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			printf("%s\t%s\n", commands[i].name, commands[i].description);
	} else if (strcmp(what, "strategies") == 0 || strcmp(what, "params") == 0) {
		for (int i = 0; i < strategy_count(); i++) {
			const struct strategy *s = strategy_at(i);

			if (what[0] == 's')
				printf("%s\t%s\n", s->name, s->description);
			for (const struct strategy_key *k = s->params; what[0] == 'p' && k && k->name;
			     k++)
				printf("%s\t%s\n", k->name, s->name);
		}
	} else if (strcmp(what, "solvers") == 0) {
		solver_names(names, sizeof(names));
		for (tok = strtok_r(names, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
			puts(tok);
	} else if (strcmp(what, "lp-methods") == 0) {
		for (int i = 0; i < LP_METHODS; i++)
			puts(lp_method_names[i]);
	} else {
		return list(NULL);
	}
	return fflush(stdout) == 0 ? CM_EXIT_OK : cli_error("standard output: write failed");
}

static const char *command_at(const void *ctx, int i)
{
	(void)ctx;
	return commands[i].name;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL, *near;

	if (name == NULL) {
		usage(stderr);
		return CM_EXIT_USAGE;
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
	    strcmp(name, "help") == 0) {
		if (strcmp(name, "help") == 0 && argc > 2) {
			char help[] = "--help";
			char *hargv[] = { argv[2], help, NULL };

			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (strcmp(commands[i].name, argv[2]) == 0)
					return commands[i].fn(2, hargv);
			return cli_usage("help", "unknown command '%s'", argv[2]);
		}
		usage(stdout);
		return ferror(stdout) ? CM_EXIT_ERROR : CM_EXIT_OK;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("checkmate %s\n", CM_VERSION);
		return CM_EXIT_OK;
	}
	if (strcmp(name, "--list") == 0)
		return list(argc == 3 ? argv[2] : NULL);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	near = near_name(name, command_at, (int)(sizeof(commands) / sizeof(commands[0])), NULL);
	if (near)
		fprintf(stderr, "checkmate: unknown command '%s'; did you mean '%s'? "
			"(see 'checkmate --help')\n", name, near);
	else
		fprintf(stderr, "checkmate: unknown command '%s' (see 'checkmate --help')\n", name);
	return CM_EXIT_USAGE;
}

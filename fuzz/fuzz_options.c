/* Each command's option parsing (cli/options.c and the commands' tables),
 * without loading a graph or running a solver. The input's first byte picks
 * the command; the rest, split at line breaks, is its argv. The parse must
 * end in one of three ways: 0 with nothing printed, -1 after --help and
 * nothing else, or CM_EXIT_USAGE with exactly one message line. A strategy
 * list that parses is looked up as compare and maxbatch do. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../cli/options.h"

#define MAX_ARGS 64

static const struct {
	const char *name;
	int (*parse)(int argc, char **argv, struct cli_args *a);
} commands[] = {
	{ "solve", cmd_solve_parse },   { "compare", cmd_compare_parse },
	{ "maxbatch", cmd_maxbatch_parse }, { "check", cmd_check_parse },
	{ "info", cmd_info_parse },     { "show", cmd_show_parse },
	{ "partition", cmd_partition_parse },
};

/* Splits s (changed) into argv after the command's name; returns argc. */
static int split(char *s, const char *cmd, char **argv)
{
	int argc = 0;

	argv[argc++] = (char *)cmd;
	while (argc < MAX_ARGS) {
		char *nl = strchr(s, '\n');

		argv[argc++] = s;
		if (nl == NULL)
			break;
		*nl = '\0';
		s = nl + 1;
	}
	argv[argc] = NULL;
	return argc;
}

/* The outcome of one parse, given what it printed. */
static void check_outcome(int rc, const char *msg, size_t msg_len, size_t help_len)
{
	if (rc == 0) {
		FUZZ_CHECK(msg_len == 0 && help_len == 0, "a parse that succeeds prints");
		return;
	}
	if (rc < 0) {
		FUZZ_CHECK(help_len > 0 && msg_len == 0, "--help printed no help, or a message");
		return;
	}
	FUZZ_CHECK(rc == CM_EXIT_USAGE, "a parse ends in neither 0, -1 nor CM_EXIT_USAGE");
	FUZZ_CHECK(help_len == 0, "a usage error prints help");
	FUZZ_CHECK(msg_len > 11 && strncmp(msg, "checkmate: ", 11) == 0,
		   "a usage error without its 'checkmate: ' message");
	FUZZ_CHECK(strchr(msg, '\n') == msg + msg_len - 1, "a usage message of more than one line");
}

/* A strategy list as compare and maxbatch take it. */
static void check_list(const char *cmd, const struct cli_args *a)
{
	const struct strategy **list = NULL;
	int n = 0, rc;

	if (a->strategies == NULL)
		return;
	rc = cli_strategy_list(cmd, a->list_opt ? a->list_opt : "--strategies", a->strategies, 0,
			       a->bandwidth ? CLI_COPIES_ALLOWED : CLI_COPIES_REFUSED, &list, &n);
	FUZZ_CHECK(rc == 0 || rc == CM_EXIT_USAGE, "cli_strategy_list: unexpected return");
	FUZZ_CHECK(rc != 0 || (list != NULL && n >= 0 && n <= strategy_count()),
		   "cli_strategy_list: a list out of range");
	free(list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *argv[MAX_ARGS + 1], *msg = NULL, *help = NULL;
	size_t msg_len = 0, help_len = 0;
	FILE *mf, *hf;
	struct cli_args a;
	int argc, rc, c;

	if (size == 0)
		return 0;
	c = data[0] % (int)(sizeof(commands) / sizeof(commands[0]));
	s = malloc(size);
	FUZZ_CHECK(s != NULL, "malloc");
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	argc = split(s, commands[c].name, argv);
	mf = open_memstream(&msg, &msg_len);
	hf = open_memstream(&help, &help_len);
	FUZZ_CHECK(mf && hf, "open_memstream");
	cli_redirect(mf, hf);
	rc = commands[c].parse(argc, argv, &a);
	fflush(mf);
	fflush(hf);
	check_outcome(rc, msg, msg_len, help_len);
	if (rc == 0)
		check_list(commands[c].name, &a);
	cli_redirect(NULL, NULL);
	fclose(mf);
	fclose(hf);
	free(msg);
	free(help);
	free(s);
	return 0;
}

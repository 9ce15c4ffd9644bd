/* The command line is generated from the strategy table: a test-only copy
 * of the table with one more row is listed by --help, run by solve,
 * compare and maxbatch, and its unknown --param is refused. The one test
 * that drives cli/ itself (through its cmd_*_main functions). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../solvers/strategy.h"
#include "tap.h"

static char seen_level[32];

/* The checkpoint-all plan, after noting its --param level. */
static int run_dummy(const struct strategy *s, const struct graph *g,
		     const struct solve_request *rq, struct solve_outcome *out,
		     struct cm_error *err)
{
	struct plan *p = plan_new();

	snprintf(seen_level, sizeof(seen_level), "%s",
		 strategy_param(rq, "level") ? strategy_param(rq, "level") : "");
	if (p == NULL || baseline_checkpoint_all(g, p, err))
		return cm_errorf(err, "dummy failed");
	if (strategy_adopt(g, s->name, rq->budget, p, out, err))
		return -1;
	strategy_settle(g, rq, "dummy's plan", 0, 0, out);
	return 0;
}

static const struct strategy_key dummy_params[] = { { "level", NULL, 0, 9 }, { NULL, NULL, 0, 0 } };

/* Runs a command line (words split at spaces), its standard output and
 * error into *out (malloc'd); returns its exit status. */
static int run(int (*cmd)(int, char **), const char *line, char **out)
{
	char path[] = "/tmp/t_table.XXXXXX", *words = strdup(line), *argv[32], *save = NULL;
	int fd = mkstemp(path), saved_out = dup(1), saved_err = dup(2), argc = 0, rc;
	long len;
	FILE *f;

	for (char *w = strtok_r(words, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	dup2(fd, 1);
	dup2(fd, 2);
	rc = cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	f = fdopen(fd, "r");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	*out = calloc((size_t)len + 1, 1);
	if (fread(*out, 1, (size_t)len, f) != (size_t)len)
		(*out)[0] = '\0';
	fclose(f);
	unlink(path);
	free(words);
	return rc;
}

int main(void)
{
	int n = strategy_table_count;
	struct strategy *rows = calloc((size_t)n + 1, sizeof(*rows));
	char *out;
	int rc;

	memcpy(rows, strategy_table, (size_t)n * sizeof(*rows));
	rows[n] = (struct strategy){ "dummy", "a test-only strategy", STRATEGY_PAPER |
				     STRATEGY_HEURISTIC | STRATEGY_MAXBATCH, dummy_params, run_dummy, NULL };
	strategy_use(rows, n + 1);

	rc = run(cmd_solve_main, "solve --help", &out);
	ok(rc == 0 && strstr(out, "  dummy ") && strstr(out, "a test-only strategy") &&
	   strstr(out, "--param level="), "solve --help lists the new row and its parameter");
	free(out);

	rc = run(cmd_solve_main, "solve linear:4 --budget 6 --strategy dummy --param level=3 --csv -",
		 &out);
	ok(rc == 0 && strstr(out, "linear:4,dummy,,,6,1,9,") &&
	   strcmp(seen_level, "3") == 0, "solve runs it and hands it --param level=3");
	free(out);

	rc = run(cmd_compare_main, "compare linear:4 --budgets 6 --csv - --quiet", &out);
	ok(rc == 0 && strstr(out, "linear:4,dummy,,,6,1,9,"),
	   "compare's default columns include a new heuristic");
	free(out);

	rc = run(cmd_compare_main, "compare linear:4 --strategies dummy,ilp --budgets 5 --csv - --quiet", &out);
	ok(rc == 0 && strstr(out, "linear:4,dummy,,,5,0,9,") && strstr(out, "linear:4,ilp,") &&
	   !strstr(out, "chen-sqrtn"), "compare --strategies dummy,ilp runs those two");
	free(out);

	rc = run(cmd_maxbatch_main, "maxbatch linear:4 --budget 60 --strategies dummy --csv - --quiet", &out);
	ok(rc == 0 && strstr(out, "linear:4,dummy,batch=10,"),
	   "maxbatch --strategies dummy: checkpoint-all's batch (6 B a batch at 60 B)");
	free(out);

	rc = run(cmd_solve_main, "solve linear:4 --budget 6 --strategy dummy --param bogus=1", &out);
	ok(rc == 2 && strstr(out, "--param bogus: strategy 'dummy' has no such parameter "
				  "(it takes level)"), "solve refuses an unknown --param: %s", out);
	free(out);

	rc = run(cmd_solve_main, "solve linear:4 --budget 6 --strategy dummy --param level=12", &out);
	ok(rc == 2 && strstr(out, "--param level: expected a whole number from 0 to 9, not '12'"),
	   "solve holds a value to its key's range, a usage error: %s", out);
	free(out);

	rc = run(cmd_compare_main, "compare linear:4 --strategies dummy --param bogus=1", &out);
	ok(rc == 2 && strstr(out, "--param bogus"), "and so does compare: %s", out);
	free(out);

	rc = run(cmd_maxbatch_main, "maxbatch linear:4 --budget 60 --strategies dummy --param bogus=1", &out);
	ok(rc == 2 && strstr(out, "--param bogus"), "and maxbatch: %s", out);
	free(out);

	rc = run(cmd_solve_main, "solve linear:4 --budget 6 --strategy dumm", &out);
	ok(rc == 2 && strstr(out, "unknown strategy 'dumm'; did you mean 'dummy'?"),
	   "an unknown strategy is a usage error naming the new row as the nearest: %s", out);
	free(out);

	rc = run(cmd_solve_main, "solve linear:4 --budget 6 --strategy zzzzzzz", &out);
	ok(rc == 2 && strstr(out, "unknown strategy 'zzzzzzz'") && strstr(out, "approx, dummy)"),
	   "with none near, the message lists every row, the new one too: %s", out);
	free(out);

	strategy_use(NULL, 0);
	rc = run(cmd_solve_main, "solve --help", &out);
	ok(rc == 0 && !strstr(out, "dummy"), "strategy_use(NULL) restores the built-in table");
	free(out);
	free(rows);
	return tap_done();
}

/* A tiny TAP producer: ok(cond, "what") per check, tap_done() at the end
 * prints the plan and "N passed, M failed" and gives the exit status. */
#ifndef CM_TAP_H
#define CM_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int tap_count, tap_failed;

__attribute__((format(printf, 2, 3), unused))
static int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2), unused))
static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

__attribute__((unused))
static int tap_done(void)
{
	printf("1..%d\n%d passed, %d failed\n", tap_count, tap_count - tap_failed,
	       tap_failed);
	return tap_failed ? 1 : 0;
}

/* The number of cases a loop runs: full, or quick when CHECKMATE_QUICK is
 * set (make test's sanitizer pass, where every code path still runs but
 * solver-heavy loops would take ten times as long). */
__attribute__((unused))
static int tap_cases(int full, int quick)
{
	const char *q = getenv("CHECKMATE_QUICK");

	return q && *q && *q != '0' ? quick : full;
}

/* Where the shared benchmark graphs are: $CHECKMATE_GRAPHS or
 * ../shared/graphs from the top of the repository. */
__attribute__((unused))
static const char *tap_graph_dir(void)
{
	const char *d = getenv("CHECKMATE_GRAPHS");

	return d && *d ? d : "../shared/graphs";
}

/* Puts the path of the shared graph named by fmt, as printf ("%s.json")
 * in path and returns 1; when the folder of shared graphs is not there (a
 * clone without ../shared), prints a skipped case saying so and returns 0.
 * A file missing from a folder that is there is the caller's failure. */
__attribute__((format(printf, 3, 4), unused))
static int tap_graph(char *path, size_t size, const char *fmt, ...)
{
	char name[256];
	struct stat st;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(path, size, "%s/%s", tap_graph_dir(), name);
	if (stat(tap_graph_dir(), &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	printf("ok %d - # SKIP %s: no %s (a clone without ../shared)\n", ++tap_count, name,
	       tap_graph_dir());
	fflush(stdout);
	return 0;
}

#endif

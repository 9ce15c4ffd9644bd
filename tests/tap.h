/* A tiny TAP producer: ok(cond, "what") per check, tap_done() at the end
 * prints the plan and "N passed, M failed" and gives the exit status. */
#ifndef CM_TAP_H
#define CM_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif

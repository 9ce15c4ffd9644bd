/* What a long solve is doing, on standard error: on a terminal one line
 * rewritten in place, else (or with --progress lines) a line at most every
 * second. The figures are the summary's: the best plan so far and the
 * bound as overheads over the checkpoint-all cost, the gap between them,
 * the time spent and left, what runs now in plain words. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../solvers/milp/backend/solver.h"

/* Seconds before the first report, and between two lines in lines mode. */
#define PROGRESS_FIRST 1.0
#define PROGRESS_EVERY 1.0

static struct {
	int mode;          /* enum cli_progress_mode */
	double floor_cost; /* checkpoint-all cost, 0 when unknown */
	double time_limit; /* seconds, 0 for none */
	double next;       /* lines mode: elapsed time of the next line */
} state = { CLI_PROGRESS_AUTO, 0, 0, 0 };

/* 1 while a rewritten line is on the terminal, unfinished: the interrupt
 * handler reads it. */
static volatile sig_atomic_t on_line;

void cli_progress_setup(int mode, double floor_cost, double time_limit)
{
	if (mode == CLI_PROGRESS_AUTO)
		mode = isatty(STDERR_FILENO) ? CLI_PROGRESS_LINE : CLI_PROGRESS_LINES;
	state.mode = mode;
	state.floor_cost = floor_cost;
	state.time_limit = time_limit;
	state.next = 0;
}

int cli_progress_on_line(void)
{
	return on_line;
}

void cli_progress_clear(void)
{
	if (!on_line)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	on_line = 0;
}

/* Columns of the terminal, 80 when unknown. */
static int columns(void)
{
	struct winsize w;

	return ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20 ? w.ws_col : 80;
}

/* A cost as the summary shows it: "1.0297x (cost 31925)", or the cost
 * alone without the floor. */
static int cost_words(char *buf, size_t len, const char *what, double cost)
{
	if (state.floor_cost > 0)
		return snprintf(buf, len, "  %s %.4fx (%.10g)", what, cost / state.floor_cost, cost);
	return snprintf(buf, len, "  %s %.10g", what, cost);
}

void cli_progress(void *ctx, const struct solve_progress *p)
{
	char line[512];
	size_t n = 0;

	(void)ctx;
	if (p->elapsed < PROGRESS_FIRST ||
	    (state.mode == CLI_PROGRESS_LINES && p->elapsed < state.next))
		return;
	state.next = p->elapsed + PROGRESS_EVERY;
	n += (size_t)snprintf(line + n, sizeof(line) - n, "checkmate: %.0f s", p->elapsed);
	if (state.time_limit > 0)
		n += (size_t)snprintf(line + n, sizeof(line) - n, ", %.0f s left",
				      p->elapsed < state.time_limit ? state.time_limit - p->elapsed : 0);
	if (p->label && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, ": %s", p->label);
	if (n < sizeof(line))
		n += p->has_incumbent ? (size_t)cost_words(line + n, sizeof(line) - n, "best plan",
							   p->incumbent)
				      : (size_t)snprintf(line + n, sizeof(line) - n, "  no plan yet");
	if (p->has_bound && n < sizeof(line))
		n += (size_t)cost_words(line + n, sizeof(line) - n, "bound", p->bound);
	if (p->has_incumbent && p->has_bound && p->incumbent > 0 && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, "  gap %.2f%%",
			 100 * (p->incumbent - p->bound) / p->incumbent);
	if (state.mode == CLI_PROGRESS_LINE) {
		int width = columns() - 1;

		if ((int)strlen(line) > width)
			line[width] = '\0';
		fprintf(stderr, "\r\033[K%s", line);
		on_line = 1;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

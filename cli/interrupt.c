/* SIGINT and SIGTERM during solve, compare and maxbatch: the first asks
 * the search to stop (common/stop.h) and the command ends as usual with
 * what it has; a second one, a second or more later, ends the process at
 * once, solver processes and temporary files included. Signals within
 * that second of the first are the same request arriving twice: GNU
 * timeout sends its signal to the child and then to its process group, a
 * terminal's ^C reaches the whole foreground group. */
#include "cli.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/stop.h"

/* Seconds after the first signal within which another counts as the same. */
#define INTERRUPT_REPEAT_SECONDS 1.0

static volatile sig_atomic_t caught, quiet_notes;
static struct timespec first; /* when the first came (CLOCK_MONOTONIC) */

static void say(const char *s)
{
	if (!quiet_notes && write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

static void on_signal(int sig)
{
	sigset_t mask;
	struct timespec now;

	/* clock_gettime is async-signal-safe; the handler masks both signals,
	 * so `first` has one writer at a time. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!caught) {
		caught = 1;
		first = now;
		stop_request(sig);
		if (cli_progress_on_line())
			say("\n");
		say("checkmate: interrupted: stopping with the best answer so far "
		    "(again, a second later, to quit at once)\n");
		return;
	}
	if ((double)(now.tv_sec - first.tv_sec) + 1e-9 * (double)(now.tv_nsec - first.tv_nsec) <
	    INTERRUPT_REPEAT_SECONDS)
		return;
	stop_kill_children();
	out_unlink_temps();
	/* Die of the signal, as the shell expects of an interrupted program. */
	signal(sig, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, sig);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	raise(sig);
	_exit(128 + sig);
}

void cli_catch_interrupts(int quiet)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct sigaction sa, old;

	quiet_notes = quiet;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* Neither signal interrupts the handler of the other; file writes
	 * restart; poll() returns early (EINTR) whatever the flag says. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* A signal ignored when we started (nohup, a shell's background
		 * job) stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

int cli_interrupted(void)
{
	return stop_requested();
}

/* SIGINT and SIGTERM during solve, compare and maxbatch: the first asks
 * the search to stop (common/stop.h) and the command ends as usual with
 * what it has; the second ends the process at once, solver processes and
 * temporary files included. */
#include "cli.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../common/stop.h"

static volatile sig_atomic_t caught, quiet_notes;

static void say(const char *s)
{
	if (!quiet_notes && write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

static void on_signal(int sig)
{
	sigset_t mask;

	if (!caught) {
		caught = 1;
		stop_request(sig);
		say("checkmate: interrupted: stopping with the best answer so far "
		    "(again to quit at once)\n");
		return;
	}
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

#include "stop.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>

static volatile sig_atomic_t stop_flag, stop_sig;

/* The tracked solver processes; 0 marks a free slot. A slot is written
 * whole (pid_t is an int here), so the handler never sees half a pid. */
static volatile sig_atomic_t children[STOP_MAX_CHILDREN];

void stop_request(int sig)
{
	if (!stop_flag)
		stop_sig = sig;
	stop_flag = 1;
}

int stop_requested(void)
{
	return stop_flag != 0;
}

int stop_signal(void)
{
	return stop_sig;
}

void stop_clear(void)
{
	stop_flag = 0;
	stop_sig = 0;
}

void stop_child_add(pid_t pid)
{
	for (int i = 0; i < STOP_MAX_CHILDREN; i++)
		if (children[i] == 0) {
			children[i] = (sig_atomic_t)pid;
			return;
		}
}

void stop_child_remove(pid_t pid)
{
	for (int i = 0; i < STOP_MAX_CHILDREN; i++)
		if (children[i] == (sig_atomic_t)pid)
			children[i] = 0;
}

void stop_child_forget_all(void)
{
	for (int i = 0; i < STOP_MAX_CHILDREN; i++)
		children[i] = 0;
}

void stop_kill_children(void)
{
	int saved = errno;

	for (int i = 0; i < STOP_MAX_CHILDREN; i++) {
		pid_t pid = (pid_t)children[i];

		if (pid <= 0)
			continue;
		/* Its group: whatever the solver started dies with it. */
		if (kill(-pid, SIGKILL) != 0)
			kill(pid, SIGKILL);
	}
	for (int i = 0; i < STOP_MAX_CHILDREN; i++) {
		pid_t pid = (pid_t)children[i];

		if (pid <= 0)
			continue;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		children[i] = 0;
	}
	errno = saved;
}

/* A process-wide request to stop long work early (SIGINT, SIGTERM): the
 * command line's signal handler sets it, library code only reads it, at
 * the points where a search can end with what it has. Also the solver
 * processes that are running, so that a second signal can end them at
 * once. Library code never installs a signal handler. */
#ifndef CM_STOP_H
#define CM_STOP_H

#include <sys/types.h>

/* Asks every search to stop; sig (the signal, or 0) is what stop_signal
 * returns. Async-signal-safe. */
void stop_request(int sig);

/* 1 once stop_request was called (and not cleared), else 0. */
int stop_requested(void);

/* The signal given to the first stop_request, or 0. */
int stop_signal(void);

/* Forgets a request (tests, and a solver process that starts afresh). */
void stop_clear(void);

/* The solver processes alive: the runner adds each (in its own process
 * group) right after it starts and removes it once reaped. At most
 * STOP_MAX_CHILDREN are tracked; the others are still ended by
 * PR_SET_PDEATHSIG when this process dies. */
#define STOP_MAX_CHILDREN 32
void stop_child_add(pid_t pid);
void stop_child_remove(pid_t pid);

/* In a new solver process: forgets the parent's children. */
void stop_child_forget_all(void);

/* Kills (SIGKILL, the whole process group) and reaps every tracked
 * solver process. Async-signal-safe: for the second signal's handler. */
void stop_kill_children(void);

#endif

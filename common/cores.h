/* The cores this process may run on. */
#ifndef CM_CORES_H
#define CM_CORES_H

/* Cores online (sysconf), at least 1. */
int cores_online(void);

#endif

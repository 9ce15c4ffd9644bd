#include "cores.h"

#include <unistd.h>

int cores_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (int)(n < 4096 ? n : 4096) : 1;
}

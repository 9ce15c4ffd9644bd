#include "mem.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The first number of the file at path, or 0 ("max" and errors). */
static uint64_t read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return (uint64_t)v;
}

static uint64_t meminfo_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 0;
	int found = 0;

	if (f != NULL) {
		while (!found && fgets(line, sizeof(line), f))
			found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
		fclose(f);
	}
	if (found)
		return (uint64_t)kb * 1024;
	{
		long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);

		return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	}
}

uint64_t mem_available(void)
{
	uint64_t avail = meminfo_available();
	uint64_t max = read_number("/sys/fs/cgroup/memory.max");
	uint64_t used = read_number("/sys/fs/cgroup/memory.current");

	if (max > 0) {
		/* 1, not 0 (unknown), when the cgroup is full. */
		uint64_t left = max > used ? max - used : 1;

		if (avail == 0 || left < avail)
			avail = left;
	}
	return avail;
}

uint64_t mem_total(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

uint64_t mem_budget(uint64_t limit)
{
	uint64_t avail = mem_available();

	if (limit == 0)
		return avail;
	return avail == 0 || limit < avail ? limit : avail;
}

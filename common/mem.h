/* Memory that this process may still take: what the kernel says is
 * available (MemAvailable, and a cgroup's limit when one is set). */
#ifndef CM_MEM_H
#define CM_MEM_H

#include <stdint.h>

/* Bytes available for new allocations: MemAvailable of /proc/meminfo (or
 * the free pages when the kernel has no such line), lowered to what the
 * cgroup v2 limit leaves when there is one. 0 when unknown. */
uint64_t mem_available(void);

/* The machine's memory in bytes (the base of --memory-limit 50%), 0 when
 * unknown. */
uint64_t mem_total(void);

/* The memory a model may use: the smaller of mem_available() and limit
 * (0: no limit of the user's). 0 when neither is known. */
uint64_t mem_budget(uint64_t limit);

#endif

#include "baseline.h"

#include <string.h>

const struct baseline baseline_table[] = {
	{ "checkpoint-all", "keep every value until its last use; no recomputation",
	  baseline_checkpoint_all },
};

const int baseline_count = (int)(sizeof(baseline_table) / sizeof(baseline_table[0]));

const struct baseline *baseline_find(const char *name)
{
	for (int i = 0; i < baseline_count; i++)
		if (strcmp(baseline_table[i].name, name) == 0)
			return &baseline_table[i];
	return NULL;
}

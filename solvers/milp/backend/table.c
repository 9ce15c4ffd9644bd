/* The table of backends (SQLite's VFS): every --solver value, its list in
 * messages and --help, and the names of --lp-method. Adding a backend: its
 * file with a const struct solver_ops, declared in solver.h, and a row here
 * (docs/architecture.md, How to add a backend). */
#include "solver.h"

#include <stdio.h>
#include <string.h>

static const struct solver_ops *const backends[] = { &solver_cbc, &solver_glpk };

const struct solver_ops *solver_find(const char *name)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

int solver_count(void)
{
	return (int)(sizeof(backends) / sizeof(backends[0]));
}

const char *solver_name_at(const void *ctx, int i)
{
	(void)ctx;
	return backends[i]->name;
}

const char *const lp_method_names[LP_METHODS] = { "auto", "dual", "primal", "barrier" };

int lp_method_find(const char *name)
{
	for (int i = 0; i < LP_METHODS; i++)
		if (strcmp(lp_method_names[i], name) == 0)
			return i;
	return -1;
}

void solver_names(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]) && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 backends[i]->name);
}

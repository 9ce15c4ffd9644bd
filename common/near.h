/* "Did you mean": the known name closest to a mistyped one. */
#ifndef CM_NEAR_H
#define CM_NEAR_H

/* The name among n (name_at(ctx, i) for i < n) closest to `name`: one it
 * starts, or at most two edits away (insertions, deletions,
 * substitutions); NULL when none is that close. */
const char *near_name(const char *name, const char *(*name_at)(const void *ctx, int i), int n,
		      const void *ctx);

/* near_name over a NULL-terminated array of names. */
const char *near_in(const char *name, const char *const *names);

#endif

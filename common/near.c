#include "near.h"

#include <string.h>

/* Edit distance between a and b, counted up to 9. */
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), row[24], prev;

	if (la > 23 || lb > 23)
		return 9;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int here = row[j], best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = here;
		}
	}
	return row[lb];
}

const char *near_name(const char *name, const char *(*name_at)(const void *ctx, int i), int n,
		      const void *ctx)
{
	const char *best = NULL;
	int best_d = 3;

	for (int i = 0; i < n; i++) {
		const char *known = name_at(ctx, i);
		int d = *name && strncmp(known, name, strlen(name)) == 0 ? 1 : distance(name, known);

		if (d < best_d) {
			best_d = d;
			best = known;
		}
	}
	return best;
}

static const char *array_at(const void *ctx, int i)
{
	return ((const char *const *)ctx)[i];
}

const char *near_in(const char *name, const char *const *names)
{
	int n = 0;

	while (names[n])
		n++;
	return near_name(name, array_at, n, names);
}

#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest quoted name a message keeps whole, and how much of a longer one
 * it shows. */
#define QUOTED_MAX 80
#define QUOTED_KEEP 60

/* Cuts every span between single quotes that is longer than QUOTED_MAX to
 * its first QUOTED_KEEP bytes (at a UTF-8 character boundary) and "...",
 * in place. */
static void shorten_quoted(char *s)
{
	char *open = strchr(s, '\''), *close;

	while (open && (close = strchr(open + 1, '\'')) != NULL) {
		size_t len = (size_t)(close - open - 1), keep = QUOTED_KEEP;

		if (len > QUOTED_MAX) {
			while (keep > 0 && ((unsigned char)open[1 + keep] & 0xc0) == 0x80)
				keep--;
			memcpy(open + 1 + keep, "...", 3);
			memmove(open + 1 + keep + 3, close, strlen(close) + 1);
			close = open + 1 + keep + 3;
		}
		open = strchr(close + 1, '\'');
	}
}

void cm_vformat(char *dst, size_t size, const char *fmt, va_list ap)
{
	va_list ap2;
	char *full;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(dst, size, fmt, ap);
	if (n >= 0 && (size_t)n >= size && (full = malloc((size_t)n + 1)) != NULL) {
		/* Too long for dst: shorten the names first, then cut. */
		vsnprintf(full, (size_t)n + 1, fmt, ap2);
		shorten_quoted(full);
		snprintf(dst, size, "%s", full);
		free(full);
	} else {
		shorten_quoted(dst);
	}
	va_end(ap2);
	cm_oneline(dst);
}

void cm_format(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cm_vformat(dst, size, fmt, ap);
	va_end(ap);
}

int cm_errorf(struct cm_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	cm_vformat(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void cm_oneline(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

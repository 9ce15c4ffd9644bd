/* Error reporting shared by every module: library code fills a struct
 * cm_error and returns -1; only cli/ prints it. */
#ifndef CM_ERROR_H
#define CM_ERROR_H

#include <stdarg.h>
#include <stddef.h>

struct cm_error {
	char msg[512]; /* one line, lowercase, no final period */
};

/* Formats the message into err (when err is not NULL) and returns -1, so that
 * callers can write `return cm_errorf(err, "...")`. As cm_format. */
int cm_errorf(struct cm_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* snprintf for messages: a name quoted in it ('...') of more than 80
 * bytes is cut to its first 60 and "...", so that what is wrong still
 * fits after it; control characters (from names and values in the input)
 * become '?', so that the message stays one line. */
void cm_format(char *dst, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cm_vformat(char *dst, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Replaces the control characters of s by '?'. */
void cm_oneline(char *s);

#endif

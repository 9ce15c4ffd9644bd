/* Error reporting shared by every module: library code fills a struct
 * cm_error and returns -1; only cli/ prints it. */
#ifndef CM_ERROR_H
#define CM_ERROR_H

struct cm_error {
	char msg[512]; /* one line, lowercase, no final period */
};

/* Formats the message into err (when err is not NULL) and returns -1, so that
 * callers can write `return cm_errorf(err, "...")`. Control characters
 * (from names and values in the input) become '?', so that the message
 * stays one line. */
int cm_errorf(struct cm_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Replaces the control characters of s by '?' (see cm_errorf). */
void cm_oneline(char *s);

#endif

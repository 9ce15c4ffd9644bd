#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int cm_errorf(struct cm_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	cm_oneline(err->msg);
	return -1;
}

void cm_oneline(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

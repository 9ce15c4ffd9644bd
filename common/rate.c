#include "rate.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"

/* 1 when s ends with suffix, ignoring case; *len is then s's length
 * without it. */
static int ends_with(const char *s, const char *suffix, size_t *len)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n < m)
		return 0;
	for (size_t i = 0; i < m; i++)
		if (tolower((unsigned char)s[n - m + i]) != tolower((unsigned char)suffix[i]))
			return 0;
	*len = n - m;
	return 1;
}

int rate_parse_bandwidth(const char *s, double *out, struct cm_error *err)
{
	char buf[64];
	size_t len = strlen(s);
	uint64_t bytes;
	struct cm_error ignored;

	if (!ends_with(s, "/s", &len))
		len = strlen(s);
	if (len >= sizeof(buf) || memchr(s, '%', len) != NULL)
		goto bad;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (size_parse(buf, 0, &bytes, &ignored))
		goto bad;
	if (bytes == 0)
		return cm_errorf(err, "bandwidth '%s' must be above 0", s);
	*out = (double)bytes;
	return 0;
bad:
	return cm_errorf(err, "bandwidth '%s': expected bytes a second, as in 25GB/s, "
			 "800MB/s or 16GiB/s", s);
}

int rate_parse_compute(const char *s, double *out, struct cm_error *err)
{
	static const char prefixes[] = "kmgtp";
	const char *p = s, *pre;
	size_t len;
	int digits = 0;
	double x, mult = 1;

	for (; isdigit((unsigned char)*p); p++)
		digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (digits == 0 || digits > 30)
		goto bad;
	x = strtod(s, NULL);
	if (*p && (pre = strchr(prefixes, tolower((unsigned char)*p))) != NULL) {
		for (long i = 0; i <= pre - prefixes; i++)
			mult *= 1000;
		p++;
	}
	if (*p && !(ends_with(p, "flop/s", &len) || ends_with(p, "flops", &len) ||
		    ends_with(p, "/s", &len)))
		goto bad;
	if (*p && len != 0)
		goto bad;
	if (!(x > 0))
		return cm_errorf(err, "rate '%s' must be above 0", s);
	*out = x * mult;
	return 0;
bad:
	return cm_errorf(err, "rate '%s': expected cost units a second, as in 312TFLOP/s, "
			 "1.5G or 1000/s", s);
}

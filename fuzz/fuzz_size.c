/* The size parser (common/size.c) against a plain long double reading of
 * the same grammar: what it accepts is within a rounding of the reference
 * value, what it refuses gets a one-line message, and a modest size the
 * reference reads is never refused. The input up to its first NUL is the
 * size; each is tried with three percentage bases. */
#include "fuzz.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/size.h"

/* The multiplier of a unit, 0 when unknown; base / 100 for '%'. */
static long double ref_unit(const char *u, size_t len, uint64_t base)
{
	static const struct { const char *name; long double mult; } units[] = {
		{ "", 1 }, { "b", 1 }, { "k", 1024.0L }, { "kib", 1024.0L }, { "kb", 1e3L },
		{ "m", 1048576.0L }, { "mib", 1048576.0L }, { "mb", 1e6L },
		{ "g", 1073741824.0L }, { "gib", 1073741824.0L }, { "gb", 1e9L },
		{ "t", 1099511627776.0L }, { "tib", 1099511627776.0L }, { "tb", 1e12L },
	};

	if (len == 1 && *u == '%')
		return (long double)base / 100;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == len && strncasecmp(units[i].name, u, len) == 0)
			return units[i].mult;
	return 0;
}

/* The reference reading: 1 with *out and the digit counts, 0 when the
 * grammar does not match. */
static int ref_parse(const char *s, uint64_t base, long double *out, int *digits, int *frac)
{
	const char *p = s, *num, *u;
	long double mult;
	char *copy;

	while (isspace((unsigned char)*p))
		p++;
	num = p;
	for (*digits = 0; isdigit((unsigned char)*p); p++)
		++*digits;
	*frac = 0;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			++*frac;
	if (*digits + *frac == 0)
		return 0;
	copy = strndup(num, (size_t)(p - num));
	FUZZ_CHECK(copy != NULL, "strndup");
	*out = strtold(copy, NULL);
	free(copy);
	while (isspace((unsigned char)*p))
		p++;
	for (u = p; *p && !isspace((unsigned char)*p); p++)
		;
	mult = ref_unit(u, (size_t)(p - u), base);
	if (mult == 0 && !(p - u == 1 && *u == '%'))
		return 0;
	while (isspace((unsigned char)*p))
		p++;
	*out *= mult;
	return *p == '\0';
}

static void check_one(const char *s, uint64_t base)
{
	struct cm_error err;
	uint64_t got;
	long double want;
	int ok = size_parse(s, base, &got, &err) == 0, digits, frac;
	int ref = ref_parse(s, base, &want, &digits, &frac);

	if (!ok) {
		fuzz_check_message(err.msg);
		FUZZ_CHECK(!(ref && want < 1e18L && digits <= 20 && frac <= 17),
			   "a modest size refused");
		return;
	}
	FUZZ_CHECK(ref, "a size accepted that the grammar does not allow");
	FUZZ_CHECK((long double)got <= want * (1 + 1e-15L) + 1 &&
		   (long double)got >= want * (1 - 1e-15L) - 1,
		   "a size parsed to another value than the reference");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	FUZZ_CHECK(s != NULL, "malloc");
	memcpy(s, data, size);
	s[size] = '\0';
	check_one(s, 0);
	check_one(s, 12345678901ull);
	check_one(s, UINT64_MAX);
	free(s);
	return 0;
}

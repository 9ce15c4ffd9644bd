/* Sizes on the command line (docs/formats.md, Budgets and sizes), parsed
 * exactly: the decimal digits
 * are kept as an integer mantissa, so 1.5G is 1610612736, not a double's
 * approximation of it. */
#include "size.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

/* Past this, one more digit would wrap the mantissa (about 3.4e37): so
 * many digits are too large a size for any unit. */
#define MANT_MAX (~(u128)0 / 10 - 1)

static const struct {
	const char *unit;
	uint64_t mult;
} units[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1ull << 10 }, { "kib", 1ull << 10 }, { "kb", 1000ull },
	{ "m", 1ull << 20 }, { "mib", 1ull << 20 }, { "mb", 1000000ull },
	{ "g", 1ull << 30 }, { "gib", 1ull << 30 }, { "gb", 1000000000ull },
	{ "t", 1ull << 40 }, { "tib", 1ull << 40 }, { "tb", 1000000000000ull },
};

/* The multiplier of a unit (case-insensitive); 0 when unknown. */
static uint64_t unit_mult(const char *u, size_t len)
{
	char low[8];

	if (len >= sizeof(low))
		return 0;
	for (size_t i = 0; i < len; i++)
		low[i] = (char)tolower((unsigned char)u[i]);
	low[len] = '\0';
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(units[i].unit, low) == 0)
			return units[i].mult;
	return 0;
}

int size_parse(const char *s, uint64_t pct_base, uint64_t *out, struct cm_error *err)
{
	const char *p = s, *u;
	u128 mant = 0, scale = 1, num, den;
	size_t ulen;
	int digits = 0, frac = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-')
		return cm_errorf(err, "size '%s' must not be negative", s);
	for (; isdigit((unsigned char)*p); p++, digits++) {
		if (digits >= 24 || mant > MANT_MAX)
			return cm_errorf(err, "size '%s' is too large", s);
		mant = mant * 10 + (u128)(*p - '0');
	}
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++, frac++) {
			if (frac >= 18)
				return cm_errorf(err, "size '%s' has too many decimals", s);
			if (mant > MANT_MAX)
				return cm_errorf(err, "size '%s' is too large", s);
			mant = mant * 10 + (u128)(*p - '0');
			scale *= 10;
		}
	if (digits + frac == 0)
		return cm_errorf(err, "size '%s': expected a number, as in 16G, 1.5GB, 80%% or 1024",
				 s);
	while (isspace((unsigned char)*p))
		p++;
	u = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	ulen = (size_t)(p - u);
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '\0')
		return cm_errorf(err, "size '%s': unexpected text after the unit", s);
	if (ulen == 1 && *u == '%') {
		num = mant * pct_base;
		den = scale * 100;
		if (pct_base && num / pct_base != mant)
			return cm_errorf(err, "size '%s' is too large", s);
	} else {
		uint64_t m = unit_mult(u, ulen);

		if (m == 0)
			return cm_errorf(err, "size '%s': unknown unit '%.*s' (use K, M, G, T, "
					 "KiB..TiB, KB..TB or %%)", s, (int)ulen, u);
		num = mant * m;
		den = scale;
		if (num / m != mant)
			return cm_errorf(err, "size '%s' is too large", s);
	}
	if (num / den > (u128)UINT64_MAX)
		return cm_errorf(err, "size '%s' is too large", s);
	*out = (uint64_t)(num / den);
	return 0;
}

const char *size_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double x = (double)bytes;
	int i = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (x >= 1024 && i < 6) {
		x /= 1024;
		i++;
	}
	snprintf(buf, len, "%.2f %s", x, names[i]);
	return buf;
}

const char *size_both(uint64_t bytes, char *buf, size_t len)
{
	char h[32];

	if (bytes < 1024)
		return size_human(bytes, buf, len);
	snprintf(buf, len, "%s (%llu)", size_human(bytes, h, sizeof(h)), (unsigned long long)bytes);
	return buf;
}

/* The size parser (docs/formats.md, Budgets and sizes). */
#include <string.h>

#include "../common/size.h"
#include "tap.h"

static void good(const char *s, uint64_t base, uint64_t want)
{
	struct cm_error err = { "" };
	uint64_t got = 0;
	int rc = size_parse(s, base, &got, &err);

	ok(rc == 0 && got == want, "'%s' is %llu (got %llu%s%s)", s,
	   (unsigned long long)want, (unsigned long long)got, rc ? ": " : "", rc ? err.msg : "");
}

static void bad(const char *s, const char *want)
{
	struct cm_error err = { "" };
	uint64_t got = 0;

	ok(size_parse(s, 1000, &got, &err) == -1 && strstr(err.msg, want) != NULL,
	   "'%s' is refused: %s", s, err.msg);
}

int main(void)
{
	good("1024", 0, 1024);
	good("16G", 0, 16ull << 30);
	good("16g", 0, 16ull << 30);
	good("16GiB", 0, 16ull << 30);
	good("16GB", 0, 16000000000ull);
	good("1.5G", 0, 1610612736ull);
	good("0.1K", 0, 102);
	good("512MiB", 0, 512ull << 20);
	good("2T", 0, 2ull << 40);
	good("3TB", 0, 3000000000000ull);
	good("7KB", 0, 7000);
	good("1k", 0, 1024);
	good("100B", 0, 100);
	good("80%", 1000, 800);
	good("12.5%", 1000, 125);
	good("150%", 6, 9);
	good(" 16 G ", 0, 16ull << 30);
	good("0", 0, 0);
	good("18446744073709551615", 0, UINT64_MAX);
	bad("16Q", "unknown unit 'Q'");
	bad("-1G", "must not be negative");
	bad("1e400", "unknown unit 'e400'");
	bad("abc%", "expected a number");
	bad("", "expected a number");
	bad("%", "expected a number");
	bad("G", "expected a number");
	bad("1.5.5G", "unknown unit");
	bad("18446744073709551616", "too large");
	bad("99999999999T", "too large");
	/* 2^128 + 1 in 39 digits: a mantissa that wraps must not read as 0 */
	bad("3402823669209384634633.74607431768211457", "too large");
	bad("3402823669209384634633.74607431768211457%", "too large");
	bad("16 G B", "unexpected text");
	bad("nan", "expected a number");
	bad("inf", "expected a number");
	bad("+5G", "expected a number");
	bad("0x10", "unknown unit 'x10'");
	return tap_done();
}

/* The bandwidth and compute-rate parsers of check --bandwidth and --rate
 * (docs/usage.md, check). */
#include <string.h>

#include "../common/rate.h"
#include "tap.h"

static void good(int bw, const char *s, double want)
{
	struct cm_error err = { "" };
	double got = 0;
	int rc = bw ? rate_parse_bandwidth(s, &got, &err) : rate_parse_compute(s, &got, &err);

	ok(rc == 0 && got == want, "%s '%s' is %.17g (got %.17g%s%s)", bw ? "bandwidth" : "rate",
	   s, want, got, rc ? ": " : "", rc ? err.msg : "");
}

static void bad(int bw, const char *s, const char *want)
{
	struct cm_error err = { "" };
	double got = 0;
	int rc = bw ? rate_parse_bandwidth(s, &got, &err) : rate_parse_compute(s, &got, &err);

	ok(rc == -1 && strstr(err.msg, want) != NULL, "%s '%s' is refused: %s",
	   bw ? "bandwidth" : "rate", s, err.msg);
}

int main(void)
{
	good(1, "25GB/s", 25e9);
	good(1, "800MB/s", 8e8);
	good(1, "16GiB/s", 17179869184.0);
	good(1, "16gib/S", 17179869184.0);
	good(1, "1.5G", 1610612736.0);
	good(1, "100", 100);
	bad(1, "80%", "expected bytes a second");
	bad(1, "0GB/s", "must be above 0");
	bad(1, "25GB/h", "expected bytes a second");
	bad(1, "/s", "expected bytes a second");
	bad(1, "-1GB/s", "expected bytes a second");
	good(0, "312TFLOP/s", 312e12);
	good(0, "1.5G", 1.5e9);
	good(0, "1000/s", 1000);
	good(0, "2", 2);
	good(0, "20kflops", 20000);
	good(0, "1PFLOP/s", 1e15);
	bad(0, "1e12", "expected cost units a second");
	bad(0, "0", "must be above 0");
	bad(0, "5Q", "expected cost units a second");
	bad(0, "5 G", "expected cost units a second");
	bad(0, "G", "expected cost units a second");
	bad(0, "1TFLOP/sx", "expected cost units a second");
	return tap_done();
}

/* Tolerant comparisons of costs, which are doubles: never compare them with
 * == (SCIP's SCIPisFeasLE is the model); and the gcd of whole numbers. */
#ifndef CM_NUM_H
#define CM_NUM_H

#include <math.h>
#include <stdint.h>

#define NUM_EPS 1e-9

/* Tolerance scaled to the magnitude of the operands. */
static inline double num_tol(double a, double b)
{
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	return NUM_EPS * (m > 1.0 ? m : 1.0);
}

static inline int num_eq(double a, double b) { return fabs(a - b) <= num_tol(a, b); }
static inline int num_le(double a, double b) { return a <= b + num_tol(a, b); }
static inline int num_lt(double a, double b) { return a < b - num_tol(a, b); }

/* The greatest common divisor (num_gcd(0, b) is b): the MILPs' memory
 * units, which keep every coefficient a whole number. */
static inline uint64_t num_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

#endif

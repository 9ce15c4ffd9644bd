/* Tolerant comparisons of costs, which are doubles: never compare them with
 * == (SCIP's SCIPisFeasLE is the model). */
#ifndef CM_NUM_H
#define CM_NUM_H

#include <math.h>

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

#endif

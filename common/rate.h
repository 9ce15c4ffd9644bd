/* Rates as people write them on the command line (docs/usage.md, check):
 * a copy bandwidth in bytes a second, and a device's speed in cost units
 * (FLOPs) a second. */
#ifndef CM_RATE_H
#define CM_RATE_H

#include "error.h"

/* Parses a bandwidth: a size (docs/formats.md, Budgets and sizes; no
 * percentage) with an optional "/s": 25GB/s, 800MB/s, 16GiB/s. Sets *out to
 * bytes a second, > 0. Returns 0, or -1 with err set. */
int rate_parse_bandwidth(const char *s, double *out, struct cm_error *err);

/* Parses a compute rate: a decimal number, an optional prefix K, M, G, T,
 * P (powers of 1000) and an optional FLOP/s, FLOPS or /s: 312TFLOP/s,
 * 1.5G, 1000/s. Sets *out to units a second, > 0. Returns 0, or -1 with
 * err set. */
int rate_parse_compute(const char *s, double *out, struct cm_error *err);

#endif

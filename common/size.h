/* Byte sizes as people write them (docs/formats.md, Budgets and sizes) and
 * as we print them. */
#ifndef CM_SIZE_H
#define CM_SIZE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Parses a size (docs/formats.md, Budgets and sizes): a byte count, K M G T or
 * KiB MiB GiB TiB (powers of 1024), KB MB GB TB (powers of 1000), decimals, or
 * a percentage of pct_base. Rounds down. Returns 0, or -1 with err set. */
int size_parse(const char *s, uint64_t pct_base, uint64_t *out, struct cm_error *err);

/* "6 B", "14.90 GiB": a readable form of a byte count. */
const char *size_human(uint64_t bytes, char *buf, size_t len);

/* "14.90 GiB (16000000000)": the readable form with the exact count beside
 * it, for reasons and errors; "6 B" under 1 KiB. */
const char *size_both(uint64_t bytes, char *buf, size_t len);

#endif

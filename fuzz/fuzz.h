/* What the fuzz targets share: the libFuzzer entry point each defines, and
 * the checks they make of whatever the library accepts. A failed check
 * aborts, which libFuzzer and fuzz/replay.c both report as a crash. */
#ifndef CM_FUZZ_H
#define CM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../graph/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with what (and where) when ok is 0. */
#define FUZZ_CHECK(ok, what) \
	((ok) ? (void)0 : fuzz_fail(__FILE__, __LINE__, (what)))
void fuzz_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/* A stream that reads the size bytes of data; never NULL (aborts). */
FILE *fuzz_stream(const uint8_t *data, size_t size);

/* A message is one line: no line break, not empty. */
void fuzz_check_message(const char *msg);

/* Runs the analyses that info and the strategies rely on and checks what
 * they must agree on: the checkpoint-all plan replays valid, costs the
 * total cost and peaks at graph_peak_all; the lower bound is below that
 * peak; articulation points are forward nodes in ascending order; the
 * plan's JSON reads back to the same steps. */
void fuzz_check_graph(const struct graph *g);

#endif

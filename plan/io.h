/* Plan files (docs/formats.md, Plans): the JSON and text writers and the
 * JSON reader that
 * `check` uses. */
#ifndef CM_PLAN_IO_H
#define CM_PLAN_IO_H

#include <stdio.h>

#include "plan.h"

/* Writes p as a checkmate-plan JSON document. Returns 0, or -1 when a write
 * fails (the caller reports errno). */
int plan_write_json(FILE *f, const struct graph *g, const struct plan *p);

/* Writes p in the paper's Algorithm 1 form: "%3 = compute conv2",
 * "deallocate %3", one statement a line, "# stage t" before each stage. */
int plan_write_text(FILE *f, const struct graph *g, const struct plan *p);

/* Reads a checkmate-plan JSON file ("-" for standard input) whose steps
 * name nodes of g (by name or index). The description fields are read when
 * present. Returns a plan to free with plan_free, or NULL with err set to
 * "FILE[:LINE:COL]: [step N: ]problem". */
struct plan *plan_read_file(const char *path, const struct graph *g,
			    struct cm_error *err);

/* The same from an open stream, read to its end; label stands in for the
 * file name in messages. */
struct plan *plan_read_stream(FILE *f, const char *label, const struct graph *g,
			      struct cm_error *err);

/* Writes s as a JSON string literal, quotes included. */
void plan_json_string(FILE *f, const char *s);

#endif

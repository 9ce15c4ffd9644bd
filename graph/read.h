/* Reading graphs: checkmate-graph format 1, networkx node-link JSON, and the
 * built-in examples. json_t never leaves read.c. */
#ifndef CM_GRAPH_READ_H
#define CM_GRAPH_READ_H

#include <stdio.h>

#include "graph.h"

/* Reads a graph file (format 1, or node-link when it has a "links" key);
 * path "-" reads standard input (the graph's id is then its "name", when
 * it has one, else "stdin"). Returns a graph to free with graph_free,
 * or NULL with err set to "FILE[:LINE:COL]: [node 'x': ]problem". */
struct graph *graph_read_file(const char *path, struct cm_error *err);

/* The same from an open stream, read to its end; label stands in for the
 * file name in messages and the graph's id. */
struct graph *graph_read_stream(FILE *f, const char *label, struct cm_error *err);

/* The same from a string; label stands in for the file name. */
struct graph *graph_read_string(const char *json, const char *label,
				struct cm_error *err);

/* Resolves a GRAPH argument: a built-in example ("linear:N"), "-" for
 * standard input, or a file. */
struct graph *graph_load(const char *arg, struct cm_error *err);

#endif

/* Private to the graph readers (read.c, nodelink.c): the state they share
 * and the checks of single JSON values (reader.c), and the node-link
 * reader that read.c hands a document with "links" (nodelink.c). Each check returns 0, or -1 with the
 * error set to "FILE: WHO'KEY' problem"; who is "" or "node 'x': ". */
#ifndef CM_GRAPH_READER_H
#define CM_GRAPH_READER_H

#include <jansson.h>

#include "graph.h"

struct reader {
	const char *file;     /* the name to put in messages */
	struct cm_error *err;
	struct graph *g;      /* the graph being built */
};

int reader_fail(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefixes an error the graph builder reported with the file name. */
int reader_fail_builder(struct reader *r);
int reader_bytes(struct reader *r, const char *who, const char *key,
		 json_t *v, uint64_t max, uint64_t *out);
int reader_cost(struct reader *r, const char *who, const char *key,
		json_t *v, double *out);
int reader_bool(struct reader *r, const char *who, const char *key,
		json_t *v, int *out);
/* fixed_memory, batch_size and cost_unit from the top level or from b (may
 * be NULL). */
int reader_globals(struct reader *r, json_t *a, json_t *b);
/* The graph's title from obj's "name" string, if any. */
int reader_title(struct reader *r, json_t *obj);

/* Reads a networkx node-link document into r->g. */
int reader_nodelink(struct reader *r, json_t *root);

#endif

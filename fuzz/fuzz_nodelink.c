/* The graph readers (format 1, and node-link when the input has a "links"
 * key), from a seed corpus of node-link documents: an error is one line,
 * and a graph they accept passes fuzz_check_graph. The same entry point
 * as fuzz_graph; the corpus makes the difference. */
#include "fuzz.h"

#include "../graph/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fuzz_stream(data, size);
	struct cm_error err;
	struct graph *g = graph_read_stream(f, "fuzz.json", &err);

	fclose(f);
	if (g == NULL) {
		fuzz_check_message(err.msg);
		return 0;
	}
	fuzz_check_graph(g);
	graph_free(g);
	return 0;
}

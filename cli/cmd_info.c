/* checkmate info GRAPH: what the graph is and the figures every budget is
 * measured against. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"

static const char info_usage[] =
	"usage: checkmate info [GRAPH]\n\n"
	"Describes GRAPH (default: the built-in example " CLI_DEFAULT_GRAPH "): node and\n"
	"edge counts, the checkpoint-all cost (the cost floor) and peak memory, and\n"
	"the lower bound on the budget of any plan (SPEC 2).\n\n"
	"  -q, --quiet   no messages on standard error\n"
	"  -h, --help    this text\n";

int cmd_info_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct cli_args){ .header = 1 };
	optind = 0;
	while ((c = cli_getopt("info", argc, argv, ":qh", opts)) != -1)
		switch (c) {
		case 'q': a->quiet = 1; break;
		case 'h': fputs(info_usage, cli_help()); return -1;
		default: return CM_EXIT_USAGE;
		}
	if (argc - optind > 1)
		return cli_usage("info", "expected at most one GRAPH");
	a->graph = optind < argc ? argv[optind] : NULL;
	return 0;
}

int cmd_info_main(int argc, char **argv)
{
	struct cli_args a;
	struct graph *g;
	char h1[32], h2[32], h3[32];
	int nf, rc = cmd_info_parse(argc, argv, &a);
	uint64_t peak, lb;

	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	nf = graph_nforward(g);
	peak = graph_peak_all(g);
	lb = graph_lower_bound(g);
	printf("graph            %s", g->id);
	if (g->title && strcmp(g->title, g->id) != 0)
		printf(" (%s)", g->title);
	printf("\nnodes            %d (%d forward, %d backward)\n", g->n, nf, g->n - nf);
	printf("edges            %d\n", g->n_edges);
	printf("batch size       %llu\n", (unsigned long long)g->batch_size);
	printf("fixed memory     %llu (%s)\n", (unsigned long long)g->fixed_memory,
	       size_human(g->fixed_memory, h1, sizeof(h1)));
	printf("checkpoint-all   cost %.17g, peak %llu (%s)\n", graph_total_cost(g),
	       (unsigned long long)peak, size_human(peak, h2, sizeof(h2)));
	printf("lower bound      %llu (%s): no plan fits a smaller budget\n",
	       (unsigned long long)lb, size_human(lb, h3, sizeof(h3)));
	graph_free(g);
	if (fflush(stdout) != 0 || ferror(stdout))
		return cli_error("standard output: write failed");
	return CM_EXIT_OK;
}

/* checkmate info GRAPH: what the graph is and the figures every budget is
 * measured against. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonl.h"
#include "options.h"

static const char info_usage[] =
	"usage: checkmate info [GRAPH]\n\n"
	"Describes GRAPH (default: the built-in example " CLI_DEFAULT_GRAPH "): node and\n"
	"edge counts, the checkpoint-all cost (the cost floor) and peak memory, and\n"
	"the lower bound on the budget of any plan.\n\n"
	"      --json FILE|-  write the same as one JSON object (a line)\n"
	"  -q, --quiet        no messages on standard error\n"
	"  -h, --help         this text\n";

/* The figures as text on standard output. */
static void print_info(const struct graph *g)
{
	char h1[32], h2[32], h3[32];
	int nf = graph_nforward(g);
	uint64_t peak = graph_peak_all(g), lb = graph_lower_bound(g);

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
}

/* --json: the same figures as one object, whole or not at all. */
static int write_json(const char *path, const struct graph *g)
{
	struct out o;
	struct cm_error err;

	if (out_open(&o, path, &err))
		return cli_error("%s", err.msg);
	if (jsonl_info(o.f, g, &err) || out_commit(&o, &err)) {
		out_abort(&o);
		return cli_error("%s", err.msg);
	}
	return 0;
}

int cmd_info_parse(int argc, char **argv, struct cli_args *a)
{
	static const struct option opts[] = {
		{ "json", required_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct cli_args){ .header = 1 };
	optind = 0;
	while ((c = cli_getopt("info", argc, argv, ":qh", opts)) != -1)
		switch (c) {
		case 'J': a->json = optarg; break;
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
	const char *json;
	struct graph *g;
	int rc = cmd_info_parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? CM_EXIT_OK : rc;
	json = a.json;
	g = cli_load_graph(a.graph, a.quiet);
	if (g == NULL)
		return CM_EXIT_ERROR;
	if (json)
		rc = write_json(json, g);
	if (rc == CM_EXIT_OK && !(json && strcmp(json, "-") == 0))
		print_info(g);
	graph_free(g);
	if (rc == CM_EXIT_OK && (fflush(stdout) != 0 || ferror(stdout)))
		rc = cli_error("standard output: write failed");
	return rc;
}

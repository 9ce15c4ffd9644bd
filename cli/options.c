#include "options.h"

#include <stdio.h>

#include "cli.h"

void cli_shared_init(struct cli_shared *s)
{
	*s = (struct cli_shared){ .header = 1 };
}

int cli_shared_option(const char *cmd, const char *help, int c, const char *arg,
		      struct cli_shared *s)
{
	struct cm_error err;
	double v;

	switch (c) {
	case 'C': s->csv = arg; return 1;
	case 'H': s->header = 0; return 1;
	case 'S': s->solver = arg; return 1;
	case 'q': s->quiet = 1; return 1;
	case 't':
		if (cli_parse_double("--time-limit", arg, 0, 1e9, &s->time_limit, &err))
			return cli_usage(cmd, "%s", err.msg);
		return 1;
	case 'G':
		if (cli_parse_double("--gap", arg, 0, 1, &s->gap, &err))
			return cli_usage(cmd, "%s", err.msg);
		return 1;
	case 'T':
		if (cli_parse_whole("--threads", arg, 1, 256, &v, &err))
			return cli_usage(cmd, "%s", err.msg);
		s->threads = (int)v;
		return 1;
	case 'M':
		s->lp_method = lp_method_find(arg);
		if (s->lp_method >= 0)
			return 1;
		return cli_usage(cmd, "--lp-method must be auto, dual, primal or barrier, not '%s'",
				 arg);
	case 'h':
		fputs(help, stdout);
		return -1;
	default:
		return 0;
	}
}

void cli_shared_request(const struct cli_shared *s, struct solve_request *rq)
{
	rq->solver = s->solver;
	rq->time_limit = s->time_limit;
	rq->gap = s->gap;
	rq->threads = s->threads;
	rq->lp_method = s->lp_method;
	rq->progress = s->quiet ? NULL : cli_progress;
}

/* The size of the Checkmate model (solvers/remat.c) without building it:
 * each family of columns and rows of remat_build summed in closed form
 * over the stages. With nu(i) the number of users of value i, R(t,i)
 * exists for t = i and, when nu(i) > 0, every t > i; S(t,i) for i < t <=
 * shi(i) (the last stage, or with prune_past_users the last user of i);
 * U(t,k) for every k <= t; FREE(t,e) for each edge e = (i,k) with nu(k) > 0
 * and t > k. Comments name the rows as remat.c builds them. */
#include "remat.h"

/* The last stage that has an S(t,i), for a value with users. */
static int s_last(const struct graph *g, const struct remat_opts *o, int i)
{
	int last = g->users[g->user_off[i + 1] - 1];

	return o->prune_past_users && last < g->n - 1 ? last : g->n - 1;
}

/* The number of stages t in (from, to], 0 when the range is empty. */
static uint64_t span(int from, int to)
{
	return to > from ? (uint64_t)(to - from) : 0;
}

static void count_columns(const struct graph *g, const struct remat_opts *o,
			  struct remat_size *sz)
{
	uint64_t n = (uint64_t)g->n;

	sz->cols = n + n * (n + 1) / 2; /* R(t,t), U */
	for (int i = 0; i < g->n; i++) {
		if (graph_nusers(g, i) == 0)
			continue;
		sz->cols += span(i, g->n - 1) + span(i, s_last(g, o, i)); /* R, S */
	}
	for (int k = 0; k < g->n; k++)
		if (graph_nusers(g, k) > 0)
			sz->cols += (uint64_t)(g->dep_off[k + 1] - g->dep_off[k]) *
				    span(k, g->n - 1);
}

/* Sum over the stages t in (i, hi] of the users j <= t of i that have an
 * R(t,j): j itself at t = j, every t >= j when nu(j) > 0. */
static uint64_t users_in_range(const struct graph *g, int i, int hi)
{
	uint64_t sum = 0;

	for (int e = g->user_off[i]; e < g->user_off[i + 1]; e++) {
		int j = g->users[e];

		if (j <= hi)
			sum += graph_nusers(g, j) > 0 ? (uint64_t)(hi - j + 1) : 1;
	}
	return sum;
}

/* (1b, 1c) one row per edge (i,k) and stage with R(t,k); S continuity;
 * "computed only for a reader or to be kept" and "kept only for a reader
 * or to be kept further". */
static void count_dependency_rows(const struct graph *g, const struct remat_opts *o,
				  struct remat_size *sz)
{
	for (int k = 0; k < g->n; k++) {
		int with_r = graph_nusers(g, k) > 0;
		uint64_t stages = 1 + (with_r ? span(k, g->n - 1) : 0);

		for (int e = g->dep_off[k]; e < g->dep_off[k + 1]; e++) {
			int shi = s_last(g, o, g->deps[e]);

			sz->rows += stages;
			/* R(t,k), R(t,i), and S(t,i) where it exists */
			sz->nnz += 2 * stages + (with_r ? span(k - 1, shi) : k <= shi);
		}
	}
	for (int i = 0; i < g->n; i++) {
		int shi;
		uint64_t c;

		if (graph_nusers(g, i) == 0)
			continue;
		shi = s_last(g, o, i);
		c = span(i, shi);
		sz->rows += c; /* S(t,i) <= R(t-1,i) + S(t-1,i) */
		sz->nnz += 2 * c + (c > 0 ? c - 1 : 0);
		if (o->no_usefulness_rows)
			continue;
		for (int pass = 0; pass < 2; pass++) {
			int hi = pass ? shi : g->n - 1;
			uint64_t rows = span(i, hi);

			sz->rows += rows;
			sz->nnz += rows + users_in_range(g, i, hi) +
				   span(i, (hi < shi - 1 ? hi : shi - 1));
		}
	}
}

/* (2, 3) one row per stage and node; (7c) the FREE hazards. */
static void count_memory_rows(const struct graph *g, const struct remat_opts *o,
			      uint64_t r_cols, uint64_t s_cols, struct remat_size *sz)
{
	uint64_t n = (uint64_t)g->n;

	sz->rows += n * (n + 1) / 2;
	sz->nnz += n * (n + 1) / 2 + r_cols + s_cols;
	for (int k = 1; k < g->n; k++)
		sz->nnz += (uint64_t)(g->n - k) *
			   (1 + (graph_nusers(g, k - 1) > 0 ?
				 (uint64_t)(g->dep_off[k] - g->dep_off[k - 1]) : 0));
	/* Edges (i,k), k a user of i with users of its own; suffix sums over
	 * i's ascending users give the hazards of the later ones. */
	for (int i = 0; i < g->n; i++) {
		int shi = graph_nusers(g, i) ? s_last(g, o, i) : i;
		uint64_t later = 0;

		for (int e = g->user_off[i + 1] - 1; e >= g->user_off[i]; e--) {
			int k = g->users[e];
			uint64_t stages = span(k, g->n - 1), keep = span(k, shi - 1);

			if (graph_nusers(g, k) > 0 && o->aggregate_free) {
				sz->rows += stages;
				sz->nnz += 2 * stages + keep + later;
			} else if (graph_nusers(g, k) > 0) {
				sz->rows += stages + keep + later;
				sz->nnz += 2 * (stages + keep + later);
			}
			later += graph_nusers(g, k) > 0 ? (uint64_t)(g->n - k) : 1;
		}
	}
}

/* The cost cap's row: every R column of a node that costs something. */
static void count_cost_cap(const struct graph *g, struct remat_size *sz)
{
	uint64_t terms = 0;

	for (int i = 0; i < g->n; i++)
		if (g->nodes[i].cost != 0)
			terms += 1 + (graph_nusers(g, i) > 0 ? span(i, g->n - 1) : 0);
	if (terms > 0) {
		sz->rows++;
		sz->nnz += terms;
	}
}

void remat_size(const struct graph *g, const struct remat_opts *o, struct remat_size *sz)
{
	uint64_t r_cols = (uint64_t)g->n, s_cols = 0;

	*sz = (struct remat_size){ 0 };
	for (int i = 0; i < g->n; i++)
		if (graph_nusers(g, i) > 0) {
			r_cols += span(i, g->n - 1);
			s_cols += span(i, s_last(g, o, i));
		}
	count_columns(g, o, sz);
	count_dependency_rows(g, o, sz);
	count_memory_rows(g, o, r_cols, s_cols, sz);
	if (o->cost_cap > 0)
		count_cost_cap(g, sz);
	/* With copies, an upper estimate (not counted exactly): per S
	 * column at most an F, an O and an H, eleven rows and 24 nonzeros
	 * among them; per stage two clocks, five rows and 2 (t + 2) + t
	 * nonzeros of clock rows, and a host row of at most t. */
	if (o->copy) {
		uint64_t n = (uint64_t)g->n;

		sz->cols += 3 * s_cols + 2 * n;
		sz->rows += 11 * s_cols + 5 * n;
		sz->nnz += 24 * s_cols + 2 * n * (n + 3) + 2 * n * n;
	}
}

/* This process's copy of the model (struct milp: an index and a value per
 * nonzero, arrays grown by doubling; names and bounds per column). */
#define MEM_OWN_PER_NNZ 40.0
/* A solver process: the backend's copy and its work, per nonzero of the
 * model, and a floor for the libraries and small models. */
#define MEM_LP_PER_NNZ 300.0
#define MEM_MILP_PER_NNZ 400.0
#define MEM_SOLVER_FLOOR (64.0 * 1024 * 1024)

double remat_bytes(uint64_t nnz, int relaxation, int processes)
{
	double per = relaxation ? MEM_LP_PER_NNZ : MEM_MILP_PER_NNZ;

	return (double)nnz * MEM_OWN_PER_NNZ +
	       processes * (MEM_SOLVER_FLOOR + (double)nnz * per);
}

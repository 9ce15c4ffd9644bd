/* A solver-neutral sparse mixed-integer linear program: columns with
 * bounds, objective and integrality, rows with bounds, built once and
 * translated by each backend. Minimization. */
#ifndef CM_MILP_H
#define CM_MILP_H

#include <stdio.h>

#include "../../../common/error.h"

/* Bounds beyond this are infinite. */
#define MILP_INF 1e30

struct milp {
	int ncols, nrows, nnz;
	double *obj, *clo, *chi;  /* per column */
	char *integer;            /* per column: 1 binary/integer, 0 continuous */
	char **cname;             /* per column, owned */
	double *rlo, *rhi;        /* per row; -MILP_INF / MILP_INF when open */
	int *rbeg;                /* row r: ridx/rval[rbeg[r] .. rbeg[r + 1]) */
	int *ridx;
	double *rval;
	int cap_cols, cap_rows, cap_nnz;
	int failed;               /* an allocation failed; checked by milp_ok */
};

void milp_init(struct milp *m);
void milp_release(struct milp *m);

/* Adds a column and returns its index (-1 when out of memory, also
 * recorded in m->failed). The name is copied. */
int milp_add_col(struct milp *m, const char *name, double lo, double hi,
		 double obj, int integer);

/* Adds the row lo <= sum val[j] x[idx[j]] <= hi; entries with idx < 0 are
 * skipped (absent variables are fixed at 0). Returns the row index or -1. */
int milp_add_row(struct milp *m, double lo, double hi, int n, const int *idx,
		 const double *val);

/* A row under construction, grown as terms come (the model builders'). */
struct milp_row {
	int n, cap;
	int *idx;
	double *val;
	int failed; /* an allocation failed: milp_row_emit marks the model */
};

/* Adds the term v x[col] to r; col < 0 (an absent variable) adds nothing. */
void milp_row_add(struct milp_row *r, int col, double v);

/* Adds lo <= r <= hi to m (nothing when r has no term) and empties r. */
void milp_row_emit(struct milp *m, struct milp_row *r, double lo, double hi);

/* Frees r's arrays. */
void milp_row_release(struct milp_row *r);

/* 0 when every addition succeeded, else -1 with err set. */
int milp_ok(const struct milp *m, struct cm_error *err);

/* Objective value of x. */
double milp_objective(const struct milp *m, const double *x);

/* Largest violation of a row or bound by x, and of integrality. */
double milp_violation(const struct milp *m, const double *x);

/* Writes the model in CPLEX LP format (readable by glpsol --lp and cbc).
 * Returns 0 or -1 when a write failed. */
int milp_write_lp(const struct milp *m, FILE *f);

/* What a backend found: status, solution, bound. */
enum milp_status {
	MILP_OPTIMAL,     /* proven optimal (within the requested gap) */
	MILP_FEASIBLE,    /* a solution, not proven optimal */
	MILP_INFEASIBLE,  /* proven infeasible */
	MILP_NO_SOLUTION, /* stopped (time limit) without a solution */
};

struct milp_result {
	int status;       /* enum milp_status */
	double objective; /* of x, when x is not NULL */
	double bound;     /* proven lower bound, when has_bound */
	int has_bound;
	double *x;        /* ncols values, malloc'd; NULL without a solution */
	int stopped;      /* the solve was cut short by stop_requested() (common/
			   * stop.h): x, when there is one, is the best solution
			   * reported before */
};

/* Frees res->x (and sets it NULL). */
void milp_result_release(struct milp_result *res);

#endif

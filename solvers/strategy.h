/* The strategy layer: every way of finding a plan (docs/formats.md, Strategies)
 * is a row of one constant table, run by name, its plan replayed and described.
 * The commands, their --help texts and their error messages walk the table; no
 * other list of names exists. Library code: it never prints. */
#ifndef CM_STRATEGY_H
#define CM_STRATEGY_H

#include <stddef.h>
#include <stdio.h>

#include "../baselines/baseline.h"
#include "../plan/sim.h"
#include "milp/backend/solver.h"
#include "milp/remat.h"

#define STRATEGY_DEFAULT "auto"
#define SOLVER_DEFAULT "cbc"
/* Seconds a solve takes at most when the caller gives no time limit of its
 * own: the commands' default, and what auto, lns and pebble, which share
 * their time out among phases, take when given none (time_limit <= 0). */
#define STRATEGY_TIME_LIMIT 60.0

/* What an outcome is; strategy_status_names spells them for CSV rows,
 * plans and summaries. */
enum strategy_status {
	STATUS_FEASIBLE,    /* a plan that fits, not proven optimal */
	STATUS_OPTIMAL,     /* a plan that fits, proven optimal */
	STATUS_TIMEOUT,     /* the time limit came before any plan */
	STATUS_NO_PLAN,     /* the strategy found none, nothing proven */
	STATUS_INFEASIBLE,  /* no plan fits: proven */
	STATUS_OVER_BUDGET, /* the strategy's plans all peak over the budget or
			     * cost over the cap; nothing proven */
	STATUS_UNSUPPORTED, /* the graph is outside the strategy's domain, or its
			     * model would not fit the memory (out.why says) */
	STATUS_INTERRUPTED, /* compare and maxbatch: a row that a stop request
			     * (SIGINT, SIGTERM) left without an answer; no
			     * strategy returns it */
	STATUS_COUNT
};

extern const char *const strategy_status_names[STATUS_COUNT];

/* One --param KEY=VALUE. */
struct strategy_param {
	const char *key, *value;
};

struct solve_request {
	const char *strategy; /* a name of the table */
	uint64_t budget;      /* total bytes, fixed memory included */
	const char *solver;   /* MILP backend; NULL for SOLVER_DEFAULT */
	double time_limit;    /* seconds, <= 0 for none */
	double gap;           /* relative gap at which the solver may stop */
	int threads;          /* solver threads, 0 for its default */
	double cost_cap;      /* when > 0, only plans costing at most this count
			       * (with copy: taking at most this much time, in
			       * units of cost: strategy_capped) */
	FILE *lp_out;         /* when not NULL, the model is written here (LP format) */
	struct remat_opts model;
	unsigned long long seed; /* approx: randomized rounding's seed */
	int samples;          /* approx: randomized roundings per LP (0: default) */
	int bound;            /* a strategy without a bound of its own bounds the
			       * cost from below by the LP relaxation too */
	int lp_method;        /* approx and bound: enum lp_method */
	/* Bytes the models of a solve may take in all (--memory-limit); 0:
	 * the memory available is the only limit (strategy_fits_memory). */
	uint64_t memory_limit;
	/* --param KEY=VALUE pairs; each strategy reads the keys its row
	 * lists (strategy_check_params rejects the others). */
	const struct strategy_param *params;
	int n_params;
	/* A plan to start from, NULL: the best heuristic's. ilp's warm start
	 * must fit the budget; lns repairs one that does not (auto hands it
	 * the checkpoint-all plan when no heuristic fits). */
	const struct plan *start;
	void (*progress)(void *ctx, const struct solve_progress *p);
	void *ctx;
	/* Asked with halt_ctx where a search also asks stop_requested() (the
	 * MILP runner, lns between windows): nonzero ends the search as its
	 * time limit would, keeping what it found. auto's stall stop sets it
	 * for its phases; NULL: never. */
	int (*halt)(void *halt_ctx);
	void *halt_ctx;
	/* The copy bandwidth and the time of a unit of cost (solve
	 * --bandwidth; docs/formats.md, Offload to host memory), or NULL:
	 * plans without copies, figures without time. With it, every plan
	 * is replayed in time (strategy_solve), the rows flagged
	 * STRATEGY_COPIES may offload, and proofs hold for time. */
	const struct sim_copy *copy;
	/* Told once, the first plan that fits, replayed (strategy "auto",
	 * status "feasible", no bound), as soon as auto has it: the search
	 * goes on after (solve --first-plan). Other strategies and auto with
	 * copies tell nothing. NULL: none. */
	void (*first_plan)(void *first_ctx, const struct plan *p);
	void *first_ctx;
};

struct solve_outcome {
	struct plan *plan;   /* the replayed plan, or NULL when none was found;
			      * owned, freed by strategy_outcome_release */
	struct sim_result sim;
	int status;          /* enum strategy_status */
	char why[512];       /* a reason to show with the status, or "" */
	char solver[32];     /* the backend that ran, or "" */
	char param[64];      /* the baseline's parameter point, or "" */
	double objective;    /* the solver's objective for its plan, when it gave one */
	double lower_bound;  /* proven bound on the cost, when has_lower_bound */
	int has_lower_bound;
	double time_bound;   /* with a bandwidth: a proven lower bound in seconds
			      * on the time of every plan that fits, when
			      * has_time_bound */
	int has_time_bound;
	double seconds;      /* wall time of the strategy and the replay */
	int cols, rows, nnz; /* size of the MILP, when one was built */
	int interrupted;     /* a stop request (common/stop.h) cut the search
			      * short: the plan, if any, is the best found
			      * before it */
	int model_none;      /* no_plan or infeasible: the stage model was proven
			      * to have no plan (within the cost cap), a proof
			      * for the model's plans as `optimal` is
			      * (docs/model.md), not for plans outside it */
};

/* What a row of the table is. */
enum {
	STRATEGY_SOLVER = 1 << 0,    /* solves a model: --solver, --lp-method apply */
	STRATEGY_BOUND = 1 << 1,     /* its outcome carries a proven lower bound */
	STRATEGY_HEURISTIC = 1 << 2, /* fast, no solver: the warm starts of the
				      * solvers */
	STRATEGY_MAXBATCH = 1 << 3,  /* one of maxbatch's default strategies */
	STRATEGY_CHAINS = 1 << 4,    /* needs a chain of forward nodes */
	STRATEGY_LP_FILE = 1 << 5,   /* --write-lp writes its model */
	STRATEGY_PAPER = 1 << 6,     /* a heuristic of the paper's Table 1:
				      * compare's default columns */
	STRATEGY_COPIES = 1 << 7,    /* makes plans that offload to host memory;
				      * needs rq->copy (else unsupported) */
};

/* A --param key a strategy takes and the values it allows. */
struct strategy_key {
	const char *name;
	const char *const *choices; /* NULL-terminated; NULL: a whole number */
	double lo, hi;              /* that number's range */
};

struct strategy {
	const char *name;        /* --strategy value */
	const char *description; /* one line for --help */
	unsigned flags;
	/* The --param keys it takes, ended by one with a NULL name; NULL for
	 * none. strategy_check_params holds every value to its key's. */
	const struct strategy_key *params;
	/* Fills out for rq on g (rq->budget at or above the lower bound of
	 * docs/formats.md, Memory model; params checked). Returns 0, or -1 with
	 * err set. */
	int (*run)(const struct strategy *s, const struct graph *g,
		   const struct solve_request *rq, struct solve_outcome *out,
		   struct cm_error *err);
	/* The paper's heuristics: parameter point k (baselines/baseline.h);
	 * compare writes a row per point. NULL for the others. */
	int (*point)(const struct graph *g, int k, struct plan *p, char *param,
		     size_t len, struct cm_error *err);
};

/* The rows in their order: --help, compare's columns and maxbatch's. */
extern const struct strategy strategy_table[];
extern const int strategy_table_count;

/* The table in use: strategy_table unless a test put another one in place
 * with strategy_use (rows must outlive its use; NULL restores the
 * built-in one). */
int strategy_count(void);
const struct strategy *strategy_at(int i);
void strategy_use(const struct strategy *rows, int n);

/* The row called name, or NULL with err set to a message that lists the
 * known names ("unknown strategy 'x' (known: ilp, ...)"). */
const struct strategy *strategy_find(const char *name, struct cm_error *err);

/* The names of the rows whose flags include all of mask, comma-separated. */
void strategy_names(unsigned mask, char *buf, size_t len);

/* Each --param of rq must be a key that one of the n strategies takes,
 * its value one that every strategy taking the key allows: 0, or -1 with
 * err naming the key and what they take (or the value nearest). */
int strategy_check_params(const struct strategy *const *s, int n,
			  const struct solve_request *rq, struct cm_error *err);

/* The value of --param key in rq, or NULL. */
const char *strategy_param(const struct solve_request *rq, const char *key);

/* The values k allows as people read them: "time|memory", "a whole
 * number from 1 to 1000"; into buf, which it returns. */
const char *strategy_key_values(const struct strategy_key *k, char *buf, size_t len);

/* The whole number given as --param key, or dflt when it is absent (the
 * value was checked by strategy_check_params). */
uint64_t strategy_param_whole(const struct solve_request *rq, const char *key, uint64_t dflt);

/* Runs the request on g. A heuristic plan that replays over budget is kept
 * (its figures are informative) with status over_budget. "optimal" only
 * when proven: by the solver with no gap left, or for a heuristic when its
 * cost equals the checkpoint-all cost, below which no plan goes. Returns 0,
 * or -1 with err set (unknown strategy, parameter or solver, solver
 * failure, out of memory, a strategy that produced an invalid plan). */
int strategy_solve(const struct graph *g, const struct solve_request *rq,
		   struct solve_outcome *out, struct cm_error *err);
void strategy_outcome_release(struct solve_outcome *out);

/* The run functions of the rows (solvers/heuristic.c, ilp.c, approx.c,
 * row_dtr.c, row_shave.c, row_kusumoto.c, row_lns.c, auto.c, pebble.c), each as
 * struct strategy's run. */
#define STRATEGY_RUN(fn)                                                           \
	int fn(const struct strategy *s, const struct graph *g,                     \
	       const struct solve_request *rq, struct solve_outcome *out,           \
	       struct cm_error *err)
STRATEGY_RUN(strategy_run_heuristic);
STRATEGY_RUN(strategy_run_ilp);
STRATEGY_RUN(strategy_run_approx);
STRATEGY_RUN(strategy_run_dtr);
STRATEGY_RUN(strategy_run_dtr_offload);
STRATEGY_RUN(strategy_run_offload_dp);
STRATEGY_RUN(strategy_run_offload_ilp);
STRATEGY_RUN(strategy_run_shave);
STRATEGY_RUN(strategy_run_tune);

/* The answer of the dtr row (anytime 0) or the dtr-tune row (anytime 1)
 * from rc and plan p (taken): no_plan when rc is DTR_NO_PLAN, else p
 * adopted and settled. 0, or -1 with err set (rc < 0 passes err on). */
int strategy_dtr_answer(const struct strategy *s, const struct graph *g,
			const struct solve_request *rq, int rc, struct plan *p, int anytime,
			struct solve_outcome *out, struct cm_error *err);
STRATEGY_RUN(strategy_run_kusumoto);
STRATEGY_RUN(strategy_run_lns);
STRATEGY_RUN(strategy_run_auto);
STRATEGY_RUN(strategy_run_pebble);

/* Builds the model of g at budget shrunk into rm and solves its LP
 * relaxation with ops (rq: LP method, progress, which names it label;
 * time_left seconds, <= 0 for none). Returns 1 with the solution in *res, 0 when
 * there is none (status in res), -1 with err set (rm then released).
 * Release rm and res after a 0 or 1. */
int strategy_lp_relaxation(const struct graph *g, const struct solve_request *rq,
			   const struct solver_ops *ops, uint64_t shrunk, double time_left,
			   const char *label, struct remat_model *rm, struct milp_result *res,
			   struct cm_error *err);

/* Solves the LP relaxation at rq->budget and records its value (or the
 * checkpoint-all floor, when higher) as out's lower bound: every plan that
 * fits the budget costs at least that much. Leaves out as it was when the
 * LP is infeasible or stopped at the time limit. Returns 0, or -1 with err
 * set. */
int strategy_lp_bound(const struct graph *g, const struct solve_request *rq,
		      struct solve_outcome *out, struct cm_error *err);

/* The turn bound with copies (solvers/milp/turn.h) at rq->budget and
 * rq->copy's rates and host budget, within seconds, into out's time_bound:
 * a bound on the time of every plan that fits, at least the checkpoint-all
 * cost's time (which it is when the model gives nothing more). A solver
 * that fails costs only the bound above that. Returns 1 when the bound is
 * above the checkpoint-all time. */
int strategy_copy_bound(const struct graph *g, const struct solve_request *rq, double seconds,
			struct solve_outcome *out);

/* With a bandwidth: 1 when o has a plan that fits and whose replayed time
 * meets bound (seconds), compared in units of cost, where num.h's
 * tolerance is relative to the step's cost (a step of microseconds is not
 * within it). */
int strategy_time_meets(const struct solve_request *rq, const struct solve_outcome *o,
			double bound);

/* strategy_lp_bound at each of the n budgets at once (rq->budget is not
 * used): one model, built at the largest, its LPs solved from scratch as
 * one sweep from the largest budget down, shared by a process per core as
 * approx's grid, within rq->time_limit once per budget in all. bound[k] and
 * has[k] as lower_bound and has_lower_bound at budgets[k]. Progress names
 * how many are done. Returns 0, or -1 with err set. */
int strategy_lp_bounds(const struct graph *g, const struct solve_request *rq,
		       const uint64_t *budgets, int n, double *bound, int *has,
		       struct cm_error *err);

/* The MILP backend that rq names (or the default); NULL with err set when
 * there is no such backend. */
const struct solver_ops *strategy_backend(const struct solve_request *rq, struct cm_error *err);

/* Replays p into out (taking ownership) and records what it is; -1 with
 * err set when the plan is not valid, which is a bug of the strategy. */
int strategy_adopt(const struct graph *g, const char *strategy, uint64_t budget,
		   struct plan *p, struct solve_outcome *out, struct cm_error *err);

/* strategy_adopt for a plan that may have copies, replayed in time at
 * copy's rates (NULL: as strategy_adopt). */
int strategy_adopt_copies(const struct graph *g, const char *strategy, uint64_t budget,
			  const struct sim_copy *copy, struct plan *p, struct solve_outcome *out,
			  struct cm_error *err);

/* Sets the outcome's status (and its plan's). */
void strategy_set_status(struct solve_outcome *out, int status);

/* Records the size of the model the outcome's strategy built. */
void strategy_set_model(struct solve_outcome *out, const struct milp *m);

/* A proven lower bound on the cost of the plans that fit, as reported for
 * a plan of this cost: rounded by graph_round_bound, or the cost itself
 * when the plan fits and meets it (*proven then set: it is optimal). */
double strategy_meet_bound(const struct graph *g, double cost, int fits, double bound,
			   int *proven);

/* Records a proven lower bound on the cost of any plan that fits (rounded
 * by graph_round_bound) in the outcome and its plan; a fitting plan that
 * costs no more than the bound becomes "optimal". Set the status first. */
void strategy_set_bound(const struct graph *g, struct solve_outcome *out, double bound);

/* What rq's cost cap holds: the replayed cost, or with rq->copy the
 * replayed time in units of cost (waits count; maxbatch --bandwidth). */
double strategy_capped(const struct solve_request *rq, const struct sim_result *sim);

/* With rq->copy, the least time of any plan of g: every node computed
 * once, one after another (docs/formats.md, Offload to host memory). */
double strategy_time_floor(const struct graph *g, const struct solve_request *rq);

/* rq's time limit in seconds, STRATEGY_TIME_LIMIT when it has none (the
 * limit of the strategies that share their time out: auto, lns, pebble). */
double strategy_time_limit(const struct solve_request *rq);

/* Seconds left of strategy_time_limit(rq) since t0 (cm_clock()), at
 * least 0. */
double strategy_time_left(const struct solve_request *rq, double t0);

/* The cm_clock() time at which rq's time limit ends, 0 when it has none. */
double strategy_deadline(const struct solve_request *rq);

/* A proof that no plan fits the budget: `node` cannot be computed within
 * it however its `ancestors` are scheduled (graph/pebble.h). Sets status
 * infeasible and the reason. */
void strategy_set_infeasible(const struct graph *g, uint64_t budget, int node, int ancestors,
			     struct solve_outcome *out);

/* The stage model (first computes in file order) has no plan at rq's
 * budget, which proves nothing for plans outside it: infeasible when the
 * pebble search shows within `seconds` that no plan at all fits, else
 * no_plan with `model_why` as the reason; model_none set either way. */
void strategy_model_has_none(const struct graph *g, const struct solve_request *rq,
			     double seconds, const char *model_why, struct solve_outcome *out);

/* The status of a plan adopted into out, the one rule of every strategy:
 * over_budget when it peaks over the budget, or costs more than rq's cost
 * cap (maxbatch's question) and `anytime` is 0 (a search cut short by its
 * time limit says no_plan instead: more time could find one); the reason
 * names `who`. Else feasible, with `bound` (a proven lower bound, or 0 for
 * none) or the checkpoint-all cost, whichever is higher: optimal when the
 * plan meets it. */
void strategy_settle(const struct graph *g, const struct solve_request *rq, const char *who,
		     int anytime, double bound, struct solve_outcome *out);

/* One result: a CSV row (docs/formats.md, CSV columns) before it is
 * written. */
struct strategy_row {
	const char *graph, *strategy, *param, *solver;
	int status;            /* enum strategy_status */
	uint64_t budget;
	int feasible;
	int has_cost;          /* cost, overhead and peak_memory */
	double cost, overhead;
	uint64_t peak;
	int has_lower_bound;
	double lower_bound;    /* the gap, (cost - bound) / cost, follows */
	double seconds;
	/* With a bandwidth (solve_request.copy): the plan's replay in time. */
	int has_time;
	double time, wait;     /* seconds */
	uint64_t host_peak;    /* bytes */
	int has_time_bound;
	double time_bound;     /* seconds: a lower bound on the time of any plan
				* that fits; the gap is then in time */
};

/* The row of one strategy's outcome at one budget: cost, overhead and peak
 * when it produced a plan (replayed), its bound when it has one, and its
 * time when the plan was replayed in time (the overhead stays the cost's). */
void strategy_row_of_outcome(struct strategy_row *r, const struct graph *g,
			     const char *strategy, uint64_t budget,
			     const struct solve_outcome *o);

#endif

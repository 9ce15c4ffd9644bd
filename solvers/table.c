/* The strategies, one row each (docs/formats.md, Strategies). Adding one: a
 * file with its run function, a row here, a test program
 * (docs/architecture.md). */
#include "search/dtr.h"
#include "strategy.h"

static const char *const kusumoto_centric[] = { "time", "memory", NULL };

static const struct strategy_key auto_params[] = { { "stall", NULL, 0, 86400 }, { NULL } };
static const struct strategy_key approx_params[] = {
	{ "seed", NULL, 0, 9007199254740992.0 }, { "samples", NULL, 0, 100000 }, { NULL } };
static const struct strategy_key dtr_params[] = { { "heuristic", dtr_heuristic_names, 0, 0 }, { NULL } };
static const struct strategy_key kusumoto_params[] = {
	{ "centric", kusumoto_centric, 0, 0 }, { "time-steps", NULL, 1, 1000000 }, { NULL } };
static const struct strategy_key lns_params[] = {
	{ "stages", NULL, 1, 1000 }, { "values", NULL, 1, 1000 }, { NULL } };

#define PAPER_HEURISTIC (STRATEGY_PAPER | STRATEGY_HEURISTIC | STRATEGY_MAXBATCH)

const struct strategy strategy_table[] = {
	{ "auto", "the best plan and bound within the time limit (default 60 s): heuristics, the turn bound, dtr-tune, then the MILP, its LP and lns by the graph's size; a phase that gains nothing ends (stall=N seconds, 0: never)",
	  STRATEGY_SOLVER | STRATEGY_BOUND, auto_params, strategy_run_auto, NULL },
	{ "checkpoint-all", "keep every value until its last use; no recomputation",
	  PAPER_HEURISTIC, NULL, strategy_run_heuristic, baseline_checkpoint_all_point },
	{ "chen-sqrtn", "Chen et al.: every sqrt(n)-th node of a forward chain kept (chains only)",
	  PAPER_HEURISTIC | STRATEGY_CHAINS, NULL, strategy_run_heuristic, baseline_chen_sqrtn },
	{ "chen-greedy", "Chen et al. greedy: a node kept once b bytes follow the last one; b swept (chains only)",
	  PAPER_HEURISTIC | STRATEGY_CHAINS, NULL, strategy_run_heuristic, baseline_chen_greedy },
	{ "griewank-logn", "Griewank & Walther revolve, binomial checkpointing with s snapshots; s swept (chains only)",
	  PAPER_HEURISTIC | STRATEGY_CHAINS, NULL, strategy_run_heuristic, baseline_griewank_logn },
	{ "ap-sqrtn", "chen-sqrtn over the articulation points of the forward graph",
	  PAPER_HEURISTIC, NULL, strategy_run_heuristic, baseline_ap_sqrtn },
	{ "ap-greedy", "chen-greedy with articulation points as the only candidates",
	  PAPER_HEURISTIC, NULL, strategy_run_heuristic, baseline_ap_greedy },
	{ "linearized-sqrtn", "chen-sqrtn on the forward nodes taken as a chain in topological order",
	  PAPER_HEURISTIC, NULL, strategy_run_heuristic, baseline_linearized_sqrtn },
	{ "linearized-greedy", "chen-greedy on the forward nodes taken as a chain in topological order",
	  PAPER_HEURISTIC, NULL, strategy_run_heuristic, baseline_linearized_greedy },
	{ "dtr", "greedy eviction in file order, evicted inputs recomputed on demand (after DTR); any DAG",
	  STRATEGY_HEURISTIC | STRATEGY_MAXBATCH, dtr_params, strategy_run_dtr, NULL },
	{ "dtr-offload", "dtr whose evictions may copy the victim to host memory and fetch it back, when the copy's estimated exposed time is below the recompute's; needs --bandwidth",
	  STRATEGY_COPIES, dtr_params, strategy_run_dtr_offload, NULL },
	{ "offload-ilp", "the fastest plan that keeps, offloads, prefetches or recomputes each activation (from kept inputs), the forward and backward once in file order: a MILP solved to proven optimality; needs --bandwidth",
	  STRATEGY_COPIES | STRATEGY_SOLVER | STRATEGY_LP_FILE, NULL,
	  strategy_run_offload_ilp, NULL },
	{ "offload-dp", "offload-ilp's class on a chain by a dynamic program after POFO's; needs --bandwidth (chains only)",
	  STRATEGY_COPIES | STRATEGY_CHAINS, NULL, strategy_run_offload_dp, NULL },
	{ "dtr-tune", "dtr with a weight per repeated-block class on its eviction score, searched within the time limit; any DAG",
	  0, NULL, strategy_run_tune, NULL },
	{ "shave", "peak shaving from checkpoint-all: stop keeping values through stages over budget, recompute them where needed; any DAG",
	  STRATEGY_HEURISTIC | STRATEGY_MAXBATCH, NULL, strategy_run_shave, NULL },
	{ "pebble", "a plan however much it recomputes, or a proof that none fits: the pebble game searched backwards from each node no other reads",
	  0, NULL, strategy_run_pebble, NULL },
	{ "kusumoto-approx", "Kusumoto et al.'s DP over the pruned family of lower sets (training graphs)",
	  STRATEGY_HEURISTIC | STRATEGY_MAXBATCH, kusumoto_params, strategy_run_kusumoto, NULL },
	{ "kusumoto-exact", "Kusumoto et al.'s DP over all lower sets (up to 20,000 of them)",
	  STRATEGY_MAXBATCH, kusumoto_params, strategy_run_kusumoto, NULL },
	{ "ilp", "the Checkmate MILP, solved to proven optimality",
	  STRATEGY_SOLVER | STRATEGY_BOUND | STRATEGY_MAXBATCH | STRATEGY_LP_FILE, NULL,
	  strategy_run_ilp, NULL },
	{ "lns", "exact MILP solves of windows of stages and values around the best heuristic's plan",
	  STRATEGY_SOLVER, lns_params, strategy_run_lns, NULL },
	{ "approx", "LP relaxation rounded in two phases; the LP value is a lower bound",
	  STRATEGY_SOLVER | STRATEGY_BOUND, approx_params, strategy_run_approx, NULL },
};

const int strategy_table_count = (int)(sizeof(strategy_table) / sizeof(strategy_table[0]));

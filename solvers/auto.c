/* The auto row, solve's default: the best plan and the best bound within
 * the time limit. The heuristics first (a plan within a second on any
 * graph they handle), then what pays for the graph's size, each started
 * from the incumbent: the whole MILP when its model is small, the LP
 * relaxation and its rounding when the LP is tractable, the search over
 * windows of the model (lns) on the rest. When no heuristic fits in file
 * order, the heuristics again in a low-memory order (graph/order.h), the
 * plan mapped back; then the repair. Before those, the pebble row: a plan
 * at any cost, kept if nothing cheaper comes, or a proof that no plan
 * fits, which ends the search. */
#include "strategy.h"
#include "heuristic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clock.h"
#include "../common/num.h"
#include "../common/stop.h"
#include "../graph/order.h"
#include "../plan/stages.h"
#include "milp/turn.h"
#include "search/lns_order.h"
#include "search/repair.h"

/* Model sizes, in columns of the Checkmate MILP (1.5 n^2 + n |E|, roughly),
 * up to which the whole MILP, then its LP relaxation, is worth its time:
 * measured in docs/benchmarks.md (the MILP proves the paper's small graphs
 * optimal in seconds, up to 40,000 columns; MobileNet's LP, 120,000
 * columns, solves in a few seconds, ResNet50's, 290,000, in minutes). */
#define AUTO_MILP_COLUMNS 40000.0
#define AUTO_LP_COLUMNS 150000.0
/* Up to which the MILP has the whole time to itself (the paper's graphs:
 * U-Net's MILP, 18,000 columns estimated, needs 43 s to prove f = .25). */
#define AUTO_MILP_ALONE 25000.0

/* Seconds, at most, and share of the time limit for the pebble row (a plan
 * at any cost, or a proof that none fits): ResNet50 (353 nodes) at 4.2 GB
 * takes 0.02 s to pebble, below 3.9 GB 0.1 s to prove. */
#define AUTO_PEBBLE_SECONDS 5.0
#define AUTO_PEBBLE_SHARE 0.1

/* Randomized greedy runs of the low-memory order (graph_low_memory_order):
 * 0.1 s on 1,000 nodes. */
#define AUTO_ORDER_RESTARTS 256

/* Seconds, at most, for approx before the MILP on models of 40,000-150,000
 * columns: its bound LP (6-10 s on MobileNet) and a rounding or two; the
 * MILP's proof needs the rest. */
#define AUTO_BOUND_SECONDS 20.0

/* Seconds, at most, and share of the time left for the turn bound
 * (solvers/milp/turn.h): its LP takes about a second on transformers of
 * 5,000 nodes. */
#define AUTO_TURN_SECONDS 20.0
#define AUTO_TURN_SHARE 0.2

/* Phases after the heuristics, at most (phases_of). */
#define AUTO_MAX_PHASES 4

/* What the phases have found so far. */
struct incumbent {
	struct plan *plan;    /* the cheapest plan that fits, or NULL */
	double cost;
	char plan_by[64];     /* the strategy that made it */
	double bound;         /* the best proven lower bound, when has_bound */
	int has_bound, proven, infeasible;
	int repaired;         /* lns ran from a plan over budget (repair_phase) */
	int reordered;        /* the plan was made in the low-memory order */
	char bound_by[64];
	char why[256];        /* why a phase found nothing, for the summary */
	char refused[512];    /* the phases refused for memory, and why */
	char failed[256];     /* the phase that failed (a solver crash), and why */
	char early[96];       /* why auto ended before its time limit, or "" */
	double turn;          /* the turn bound, which holds for every plan,
			       * when has_turn */
	int has_turn;
	int cols, rows, nnz;  /* the model the last phase built, if any */
};

/* What a phase does, in the words of progress reports. */
static const char *phase_words(const char *phase)
{
	static const struct {
		const char *name, *words;
	} words[] = {
		{ "heuristics", "running the heuristics" },
		{ "pebble", "searching for any plan that fits (pebble)" },
		{ "approx", "rounding LP relaxations (approx)" },
		{ "ilp", "solving the whole MILP (ilp)" },
		{ "lns", "improving the plan window by window (lns)" },
		{ "dtr-tune", "tuning dtr's weights per repeated-block class (dtr-tune)" },
		{ "turn", "bounding the cost at the loss (turn bound)" },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(words[i].name, phase) == 0)
			return words[i].words;
	return phase;
}

static void report(const struct solve_request *rq, const struct incumbent *in, double t0,
		   const char *phase)
{
	char label[96];
	struct solve_progress p = { .elapsed = cm_clock() - t0,
				    .incumbent = in->plan ? in->cost : 0,
				    .has_incumbent = in->plan != NULL,
				    .bound = in->bound, .has_bound = in->has_bound,
				    .label = label };

	if (rq->progress == NULL)
		return;
	snprintf(label, sizeof(label), "%s", phase_words(phase));
	rq->progress(rq->ctx, &p);
}

/* What a phase's progress reports pass through: auto's own clock,
 * incumbent and bound, with the phase's. */
struct relay {
	const struct solve_request *rq;
	const struct incumbent *in;
	double t0;
	const char *phase;
};

static void relay_progress(void *ctx, const struct solve_progress *p)
{
	const struct relay *r = ctx;
	char label[160];
	struct solve_progress q = *p;

	q.elapsed = cm_clock() - r->t0;
	if (r->in->plan && (!q.has_incumbent || r->in->cost < q.incumbent)) {
		q.incumbent = r->in->cost;
		q.has_incumbent = 1;
	}
	if (r->in->has_bound && (!q.has_bound || r->in->bound > q.bound)) {
		q.bound = r->in->bound;
		q.has_bound = 1;
	}
	snprintf(label, sizeof(label), "%s%s%s", phase_words(r->phase), p->label ? ", " : "",
		 p->label ? p->label : "");
	q.label = label;
	r->rq->progress(r->rq->ctx, &q);
}

/* Makes b, proven by `by`, in's bound when it is higher. */
static void raise_bound(struct incumbent *in, double b, const char *by)
{
	if (in->has_bound && !(b > in->bound))
		return;
	in->bound = b;
	in->has_bound = 1;
	snprintf(in->bound_by, sizeof(in->bound_by), "%s", by);
}

/* Takes what one phase's outcome brings: a cheaper plan that fits, a
 * higher bound, a proof. */
static void take(const struct graph *g, struct incumbent *in, const char *by,
		 struct solve_outcome *o)
{
	const struct strategy *s = strategy_find(by, NULL);

	/* The floor every row reports is settle_bound's to name; a bound
	 * counts as the phase's own when its row proves bounds or it is
	 * higher. */
	if (o->has_lower_bound && !(s && (s->flags & STRATEGY_BOUND)) &&
	    !(o->lower_bound > graph_total_cost(g)))
		o->has_lower_bound = 0;
	if (o->plan && o->sim.fits && (in->plan == NULL || num_lt(o->sim.cost, in->cost))) {
		plan_free(in->plan);
		in->plan = o->plan;
		o->plan = NULL;
		in->cost = o->sim.cost;
		snprintf(in->plan_by, sizeof(in->plan_by), "%s", by);
	}
	if (o->has_lower_bound)
		raise_bound(in, o->lower_bound, by);
	in->proven |= o->status == STATUS_OPTIMAL && strcmp(by, "ilp") == 0;
	in->infeasible |= o->status == STATUS_INFEASIBLE && o->plan == NULL;
	if (o->why[0] && in->plan == NULL)
		snprintf(in->why, sizeof(in->why), "%s: %.200s", by, o->why);
}

/* The phases after the heuristics for g, with the share of the time left
 * each may take. First dtr-tune. Small MILPs: the LP's rounding (its LP
 * takes seconds there and its plan may beat the heuristics': a better
 * warm start), then the whole MILP. Larger MILPs (n = 100 random layered
 * graphs: the MILP finds nothing in 60 s where lns improves dtr's plan by
 * 8%): half the time, then lns. Up to the LP's limit, the LP and its
 * rounding briefly, the MILP for most of the rest, then lns. lns alone
 * on larger models, up to the repair's limit. */
struct phase {
	const char *name;
	double share;
	double cap;  /* seconds at most, 0 for no cap */
};

static int phases_of(const struct graph *g, struct phase ph[AUTO_MAX_PHASES])
{
	double n = g->n, cols = 1.5 * n * n + n * g->n_edges;
	int k = 0;

	/* dtr's weights tuned: the whole time on graphs too large for the
	 * stage matrices' searches, else a quarter (it ends sooner when its
	 * search converges: a second on graphs of a few hundred nodes). */
	ph[k++] = (struct phase){ "dtr-tune", g->n > REPAIR_MAX_NODES ? 1.0 : 0.25, 0 };
	if (cols <= AUTO_MILP_ALONE) {
		ph[k++] = (struct phase){ "approx", 0.25, 0 };
		ph[k++] = (struct phase){ "ilp", 1.0, 0 };
	} else if (cols <= AUTO_MILP_COLUMNS) {
		ph[k++] = (struct phase){ "ilp", 0.5, 0 };
	} else if (cols <= AUTO_LP_COLUMNS) {
		/* The LP's bound and a rounding (its first LP, the bound,
		 * takes 6-10 s on MobileNet), then the MILP, then lns:
		 * MobileNet (120,000 columns) at 25.78 GB has its proof from
		 * ilp in 75 s, where approx alone rounded for the whole 180 s
		 * and proved nothing. */
		ph[k++] = (struct phase){ "approx", 0.25, AUTO_BOUND_SECONDS };
		ph[k++] = (struct phase){ "ilp", 0.7, 0 };
	}
	/* lns works on stage matrices and, past the repair's limit, does
	 * not finish a pass in a minute (32-layer Llama, 4,652 nodes: stage
	 * 159 after 60 s); there the tuned plan is the answer. */
	if (g->n <= REPAIR_MAX_NODES && strategy_find("lns", NULL))
		ph[k++] = (struct phase){ "lns", 1.0, 0 };
	return k;
}

/* 1 when name is one of the n phases. */
static int has_phase(const struct phase *ph, int n, const char *name)
{
	for (int k = 0; k < n; k++)
		if (strcmp(ph[k].name, name) == 0)
			return 1;
	return 0;
}

/* Runs strategy name on rq's budget with the time left, from start (the
 * incumbent when NULL), into in; *refused set when it refused the model
 * (memory). A phase that fails (its solver crashed twice, say) is noted
 * in in->failed and costs auto nothing it had. */
static void run_phase(const struct graph *g, const struct solve_request *rq, const char *name,
		      double t0, double left, const struct plan *start, struct incumbent *in,
		      int *refused)
{
	struct solve_request sub = *rq;
	struct relay relay = { rq, in, t0, name };
	struct solve_outcome o;
	struct cm_error err;

	if (rq->progress) {
		sub.progress = relay_progress;
		sub.ctx = &relay;
	}
	sub.strategy = name;
	sub.time_limit = left;
	sub.start = start ? start : in->plan;
	sub.n_params = 0; /* auto's parameters are its own */
	*refused = 0;
	if (strategy_solve(g, &sub, &o, &err)) {
		if (in->failed[0] == 0)
			snprintf(in->failed, sizeof(in->failed), "%s failed: %.200s", name, err.msg);
		return;
	}
	*refused = o.status == STATUS_UNSUPPORTED;
	if (*refused) {
		size_t used = strlen(in->refused);

		snprintf(in->refused + used, sizeof(in->refused) - used, "%s%s: %.200s",
			 used ? "; " : "", name, o.why);
		strategy_outcome_release(&o);
		return;
	}
	take(g, in, name, &o);
	in->cols = o.cols;
	in->rows = o.rows;
	in->nnz = o.nnz;
	strategy_outcome_release(&o);
}

/* g in a low-memory order, when no heuristic fits in file order: order,
 * and h, g permuted to it (NULL when that order peaks no lower). */
struct reorder {
	int *order;
	struct graph *h;
};

static int reorder_make(const struct graph *g, struct reorder *ro, struct cm_error *err)
{
	uint64_t peak;

	ro->h = NULL;
	ro->order = malloc((size_t)g->n * sizeof(int));
	if (ro->order == NULL)
		return cm_errorf(err, "out of memory");
	peak = graph_low_memory_order(g, AUTO_ORDER_RESTARTS, 1, ro->order, err);
	if (peak == 0)
		return -1;
	if (peak < graph_peak_all(g) && (ro->h = graph_permute(g, ro->order, err)) == NULL)
		return -1;
	return 0;
}

static void reorder_release(struct reorder *ro)
{
	free(ro->order);
	graph_free(ro->h);
}

/* p, a plan of ro->h, as a plan of g replayed at budget into in when it
 * fits and is cheaper; takes p. */
static int reorder_take(const struct graph *g, const struct reorder *ro, uint64_t budget,
			struct plan *p, struct incumbent *in, struct cm_error *err)
{
	struct plan *q = lns_order_map(p, ro->order);
	struct sim_result sim;
	int rc = -1;

	if (q == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (plan_simulate(g, q, budget, &sim, err))
		goto out;
	if (sim.valid && sim.fits && (in->plan == NULL || num_lt(sim.cost, in->cost))) {
		snprintf(in->plan_by, sizeof(in->plan_by), "%s", p->strategy);
		plan_free(in->plan);
		in->plan = q;
		q = NULL;
		in->cost = sim.cost;
		in->reordered = 1;
	}
	rc = 0;
out:
	plan_free(q);
	plan_free(p);
	return rc;
}

/* The heuristics on g in the low-memory order, with the time left. */
static int reorder_heuristics(const struct graph *g, const struct solve_request *rq,
			      const struct reorder *ro, double t0, double limit,
			      struct incumbent *in, struct cm_error *err)
{
	struct solve_request heur = *rq;
	struct sim_result sim;
	struct plan *p;

	/* A quarter of the time left (the heuristics take a third of
	 * that): the repair after them needs the rest. */
	heur.time_limit = (limit - (cm_clock() - t0)) / 4;
	if (ro->h == NULL || heur.time_limit <= 0.5)
		return 0;
	report(rq, in, t0, "heuristics, low-memory order");
	p = strategy_best_heuristic(ro->h, &heur, &sim);
	return p ? reorder_take(g, ro, rq->budget, p, in, err) : 0;
}

/* When no heuristic fits: lns from the checkpoint-all plan, which it
 * repairs first (solvers/repair.h), with all the time left when lns is
 * g's only phase, else half of it (the phases get the rest, from the
 * repaired plan). */
static int repair_phase(const struct graph *g, const struct solve_request *rq,
			const struct phase *ph, int n_ph, double t0, double limit,
			struct incumbent *in, struct cm_error *err)
{
	double left = limit - (cm_clock() - t0);
	struct plan *all;
	int refused = 0;

	if (left <= 0.5 || !has_phase(ph, n_ph, "lns") || g->n > REPAIR_MAX_NODES)
		return 0;
	/* In file order: from the low-memory order's checkpoint-all plan the
	 * repair left more over budget on n500 at f = .5 and fit nothing on
	 * n100 at f = .25, where file order's fits (docs/lns.md). */
	all = plan_new();
	if (all == NULL || baseline_checkpoint_all(g, all, err)) {
		plan_free(all);
		return all ? -1 : cm_errorf(err, "out of memory");
	}
	snprintf(all->strategy, sizeof(all->strategy), "checkpoint-all");
	if (has_phase(ph, n_ph, "ilp") || has_phase(ph, n_ph, "approx"))
		left /= 2;
	report(rq, in, t0, "repair");
	run_phase(g, rq, "lns", t0, left, all, in, &refused);
	in->repaired = 1;
	plan_free(all);
	return 0;
}

/* 1 when p computes some node for the first time before an earlier one
 * (a plan made in the low-memory order). */
static int out_of_order(const struct graph *g, const struct plan *p)
{
	int *order = malloc((size_t)g->n * sizeof(int)), ooo;

	ooo = order && lns_order_first(g, p, order) == 1;
	free(order);
	return ooo;
}

/* When no heuristic fits in file order: the heuristics in the low-memory
 * order, then, if none fits there either, the repair. */
static int no_fit_phases(const struct graph *g, const struct solve_request *rq,
			 const struct phase *ph, int n_ph, double t0, double limit,
			 struct incumbent *in, struct cm_error *err)
{
	struct reorder ro = { 0 };
	int rc = -1;

	if (g->n <= REPAIR_MAX_NODES && reorder_make(g, &ro, err))
		goto out;
	if (reorder_heuristics(g, rq, &ro, t0, limit, in, err))
		goto out;
	if (in->plan == NULL && !stop_requested() &&
	    repair_phase(g, rq, ph, n_ph, t0, limit, in, err))
		goto out;
	rc = 0;
out:
	reorder_release(&ro);
	return rc;
}

/* The first phase: the best heuristic's plan that fits, if any, into in
 * (progress relayed as auto's). */
static void run_heuristics(const struct graph *g, const struct solve_request *rq, double t0,
			   double limit, struct incumbent *in)
{
	struct relay relay = { rq, in, t0, "heuristics" };
	struct solve_request heur = *rq;
	struct sim_result sim;

	report(rq, in, t0, "heuristics");
	heur.time_limit = limit;
	if (rq->progress) {
		heur.progress = relay_progress;
		heur.ctx = &relay;
	}
	in->plan = strategy_best_heuristic(g, &heur, &sim);
	if (in->plan) {
		in->cost = sim.cost;
		snprintf(in->plan_by, sizeof(in->plan_by), "%s", in->plan->strategy);
	}
}

/* No heuristic fits: pebble (a plan at any cost, or a proof that none
 * fits), then the phases that need no fitting start. Returns 1 when pebble
 * proved that no plan fits (out says so), 0 to go on, -1 with err set. */
static int no_heuristic_fits(const struct graph *g, const struct solve_request *rq,
			     struct phase *ph, int n_ph, double t0, double limit,
			     struct incumbent *in, int *refused, struct solve_outcome *out,
			     struct cm_error *err)
{
	struct incumbent costly = { 0 }; /* pebble's */

	report(rq, in, t0, "pebble");
	run_phase(g, rq, "pebble", t0, fmin(AUTO_PEBBLE_SECONDS, AUTO_PEBBLE_SHARE * limit),
		  NULL, &costly, refused);
	if (costly.infeasible) {
		strategy_set_status(out, STATUS_INFEASIBLE);
		snprintf(out->param, sizeof(out->param), "plan=none;bound=pebble");
		snprintf(out->why, sizeof(out->why), "%s", costly.why);
		return 1;
	}
	if (no_fit_phases(g, rq, ph, n_ph, t0, limit, in, err)) {
		plan_free(costly.plan);
		plan_free(in->plan);
		return -1;
	}
	/* pebble's plan when nothing cheaper came: lns cannot start from
	 * it (taken as stages, it does not fit), so it waits aside. */
	if (costly.plan && (in->plan == NULL || num_lt(costly.cost, in->cost))) {
		plan_free(in->plan);
		in->plan = costly.plan;
		in->cost = costly.cost;
		costly.plan = NULL;
		snprintf(in->plan_by, sizeof(in->plan_by), "pebble");
	}
	plan_free(costly.plan);
	return 0;
}

/* The turn bound into in, as its bound when higher and apart: it holds
 * for every plan, so settle_bound falls back to it where a stage-model
 * bound does not hold. A solver failure costs auto only this bound. */
static void turn_phase(const struct graph *g, const struct solve_request *rq, double t0,
		       double limit, struct incumbent *in)
{
	double left = limit - (cm_clock() - t0), bound;
	struct solve_opts so = { .time_limit = fmin(AUTO_TURN_SECONDS, AUTO_TURN_SHARE * left),
				 .threads = rq->threads, .memory_cap = rq->memory_limit,
				 .deadline = strategy_deadline(rq), .label = "turn bound" };
	const struct solver_ops *ops = solver_find(rq->solver ? rq->solver : SOLVER_DEFAULT);
	struct cm_error err;

	if (ops == NULL || left <= 1 || stop_requested())
		return;
	/* The solver's own progress is in the model's units: only the
	 * phase is reported. */
	report(rq, in, t0, "turn");
	if (turn_bound(g, rq->budget, ops, &so, &bound, &err) != 1)
		return;
	in->turn = bound;
	in->has_turn = 1;
	raise_bound(in, bound, "turn");
}

/* The phases by the graph's size, each with its share of the time left,
 * until one proves its plan optimal or that none fits. */
static void run_phases(const struct graph *g, const struct solve_request *rq,
		       struct phase *ph, int n_ph, double t0, double limit,
		       struct incumbent *in, int *refused)
{
	int solver = has_phase(ph, n_ph, "ilp") || has_phase(ph, n_ph, "approx");

	for (int k = 0; k < n_ph && !in->proven && !in->infeasible && !stop_requested(); k++) {
		double left = limit - (cm_clock() - t0);

		if (left <= 0.5 || (strcmp(ph[k].name, "lns") == 0 &&
				    (in->plan == NULL || (in->repaired && !solver))))
			break;
		/* dtr-tune starts from dtr's plan, which no heuristic fits. */
		if (strcmp(ph[k].name, "dtr-tune") == 0 && in->plan == NULL)
			continue;
		report(rq, in, t0, ph[k].name);
		run_phase(g, rq, ph[k].name, t0,
			  ph[k].cap > 0 ? fmin(ph[k].cap, left * ph[k].share) : left * ph[k].share,
			  NULL, in, refused);
		/* The MILP refused for memory: its LP in its place, unless that
		 * ran or comes anyway (lns, the last, takes over from it). */
		if (*refused && strcmp(ph[k].name, "ilp") == 0 && !has_phase(ph, n_ph, "approx")) {
			ph[k].name = "approx";
			k--;
		}
	}
	/* Every phase ended on its own (dtr-tune converged, lns ran out of
	 * windows) and the plan does not meet the bound: nothing more to
	 * gain by waiting. */
	if (!in->proven && !in->infeasible && !stop_requested() && in->plan &&
	    !(in->has_bound && !num_lt(in->bound, in->cost)) && limit - (cm_clock() - t0) > 1)
		snprintf(in->early, sizeof(in->early), "ended %.0f s before the time limit: "
			 "every phase ran to its end", limit - (cm_clock() - t0));
}

/* The bound that goes with in's plan: the solvers' bounds and proofs are
 * the stage model's (first computes in file order); a plan below one is
 * outside that model, which then bounds nothing. The turn bound and the
 * checkpoint-all cost (docs/formats.md, Memory model) hold for every
 * plan: the bound when no phase proved a higher one. */
static void settle_bound(const struct graph *g, struct incumbent *in)
{
	if (in->plan == NULL)
		return;
	if (in->has_bound && num_lt(in->cost, in->bound)) {
		in->has_bound = 0;
		in->proven = 0;
	}
	if (in->has_turn)
		raise_bound(in, in->turn, "turn");
	raise_bound(in, graph_total_cost(g), "floor");
}

/* What the phases found, into out: the plan (replayed, settled), or why
 * there is none. 0, or -1 with err set. */
static int take_incumbent(const struct strategy *s, const struct graph *g,
			  const struct solve_request *rq, double limit, struct incumbent *in,
			  struct solve_outcome *out, struct cm_error *err)
{
	const struct strategy *made_by;
	struct plan *p;

	out->cols = in->cols;
	out->rows = in->rows;
	out->nnz = in->nnz;
	settle_bound(g, in);
	snprintf(out->param, sizeof(out->param), "plan=%.20s;bound=%.12s%s",
		 in->plan ? in->plan_by : "none", in->has_bound ? in->bound_by : "none",
		 in->plan && in->reordered && out_of_order(g, in->plan) ? ";order=low-memory" : "");
	if (in->refused[0] || in->failed[0] || in->early[0]) {
		char a[300], b[110];

		snprintf(a, sizeof(a), "%s%.250s", in->refused[0] ? "refused for memory: " : "",
			 in->refused);
		snprintf(b, sizeof(b), "%s%.100s", in->refused[0] && in->failed[0] ? "; " : "",
			 in->failed);
		snprintf(out->why, sizeof(out->why), "%s%s%s%.90s", a, b,
			 (in->refused[0] || in->failed[0]) && in->early[0] ? "; " : "", in->early);
	}
	if (in->plan == NULL) {
		strategy_set_status(out, in->infeasible ? STATUS_INFEASIBLE : STATUS_NO_PLAN);
		/* Stopped, strategy_solve says why. */
		if (!stop_requested())
			snprintf(out->why, sizeof(out->why), "no plan found within %.0f s%s%.150s%s%.150s%s%.150s",
				 limit, in->why[0] ? "; " : "", in->why,
				 in->refused[0] ? "; refused for memory: " : "", in->refused,
				 in->failed[0] ? "; " : "", in->failed);
		if (in->has_bound)
			strategy_set_bound(g, out, in->bound);
		return 0;
	}
	p = in->plan;
	if (strategy_adopt(g, s->name, rq->budget, p, out, err))
		return -1;
	made_by = strategy_find(in->plan_by, NULL);
	if (made_by && (made_by->flags & STRATEGY_SOLVER)) {
		snprintf(out->solver, sizeof(out->solver), "%s", rq->solver ? rq->solver : SOLVER_DEFAULT);
		snprintf(p->solver, sizeof(p->solver), "%s", out->solver);
	}
	/* Optimal when the plan meets the bound (ilp's proof is its bound). */
	strategy_settle(g, rq, "the best plan found", 1, in->bound, out);
	return 0;
}

int strategy_run_auto(const struct strategy *s, const struct graph *g,
		      const struct solve_request *rq, struct solve_outcome *out,
		      struct cm_error *err)
{
	double t0 = cm_clock(), limit = strategy_time_limit(rq);
	struct incumbent in = { 0 };
	struct phase ph[AUTO_MAX_PHASES];
	int n_ph = phases_of(g, ph), refused = 0, rc;

	run_heuristics(g, rq, t0, limit, &in);
	if (in.plan == NULL && !stop_requested()) {
		rc = no_heuristic_fits(g, rq, ph, n_ph, t0, limit, &in, &refused, out, err);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	if (in.plan)
		turn_phase(g, rq, t0, limit, &in);
	run_phases(g, rq, ph, n_ph, t0, limit, &in, &refused);
	return take_incumbent(s, g, rq, limit, &in, out, err);
}

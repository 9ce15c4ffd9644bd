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

/* The stall stop: once a plan fits, a phase that can be halted
 * (stall_armed) ends when neither the plan's cost nor the bound has gained
 * AUTO_STALL_GAIN (relative) for max(AUTO_STALL_MIN, AUTO_STALL_SHARE x
 * the seconds auto has run), not counting the phases that cannot be
 * halted; each phase runs AUTO_STALL_GRACE seconds first. Measured with
 * --time-limit 60 on the paper's graphs, the random layered graphs and
 * examples/graphs/gpt.json at f = .25, .5, .75 (2 runs at a time on 2
 * cores; docs/benchmarks.md): lns gains after 22-33 s of nothing (n100 at
 * f = .25 from 26.0 s to 47.8 s, n500 at .75 from its start at 22.9 s to
 * 49.6 s, n250 at .25 from 3.0 s to 35.9 s; 0.1-2% each), at 0.46-0.92
 * of the time run; so 40 s, or half the time run. A window of 15 s ended
 * gpt in 16 s of 30 with its plan, but by their traces would have cost
 * those three plans. The
 * whole MILP reports no bound while it works (Cbc's root: U-Net at f =
 * .5 proves after 38 s of silence, SegNet at .5 after 39 s with a cheaper
 * plan at the same moment), so where it proves the paper's graphs (up to
 * AUTO_MILP_COLUMNS) it is never halted. */
#define AUTO_STALL_MIN 40.0
#define AUTO_STALL_SHARE 0.5
#define AUTO_STALL_GAIN 1e-5
/* Seconds each phase runs before the stall stop may halt it, however long
 * auto has gained nothing: MobileNet at f = .25 has lns's cheaper plan
 * (0.04%) 11 s into lns, after 48 s without a gain; with 5 s, lns was
 * halted in its first window and the plan lost. */
#define AUTO_STALL_GRACE 15.0

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

/* When auto last gained (the stall stop, AUTO_STALL_MIN): the best plan and
 * bound seen, auto's own or reported by the running phase. */
struct stall {
	double t0;          /* auto's start, cm_clock() */
	double seconds;     /* --param stall: seconds without a gain; 0: the
			     * stop is off; < 0: AUTO_STALL_MIN's rule */
	double last;        /* cm_clock() at the last gain */
	double from;        /* the end of the last phase that could not be
			     * halted, cm_clock(): its silence is not judged */
	double cost, bound; /* the cheapest plan and highest bound seen */
	int has_cost, has_bound;
	double grace;       /* cm_clock() before which the running phase is
			     * not halted (AUTO_STALL_GRACE) */
	int armed;          /* the running phase may be halted */
	int fired;          /* a phase was halted */
	double gap;         /* --gap: a plan within it of the bound ends auto
			     * (gap_met); 0: never */
};

/* Notes a plan of this cost and a bound, when they have them: a gain when
 * either moved by more than AUTO_STALL_GAIN. */
static void stall_see(struct stall *st, int has_cost, double cost, int has_bound, double bound)
{
	int gain = 0;

	if (has_cost && (!st->has_cost || cost < st->cost - AUTO_STALL_GAIN * fabs(st->cost))) {
		st->cost = cost;
		st->has_cost = 1;
		gain = 1;
	}
	if (has_bound && (!st->has_bound || bound > st->bound + AUTO_STALL_GAIN * fabs(st->bound))) {
		st->bound = bound;
		st->has_bound = 1;
		gain = 1;
	}
	if (gain)
		st->last = cm_clock();
}

/* 1 when the running phase has gained nothing for long enough: never
 * before a plan fits (any plan is worth the time). */
static int stall_over(const struct stall *st)
{
	double now = cm_clock(), since = fmax(st->last, st->from);
	double window = st->seconds > 0 ? st->seconds :
			fmax(AUTO_STALL_MIN, AUTO_STALL_SHARE * (now - st->t0));

	return st->seconds != 0 && st->has_cost && now >= st->grace && now - since >= window;
}

/* 1 when a plan of this cost is within gap (relative, > 0) of the bound:
 * solve --gap, which remat passes (its cost model is not that exact). */
static int gap_met(double gap, int has_cost, double cost, int has_bound, double bound)
{
	return gap > 0 && has_cost && has_bound && cost - bound <= gap * fabs(cost);
}

/* solve_request's halt for the phases: the stall stop where armed, the
 * gap in every phase. */
static int stall_halt(void *ctx)
{
	struct stall *st = ctx;

	if (gap_met(st->gap, st->has_cost, st->cost, st->has_bound, st->bound))
		return 1;
	if (!st->armed || !stall_over(st))
		return 0;
	st->fired = 1;
	return 1;
}

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
	struct stall *stall; /* told of the phase's gains; may be NULL */
};

static void relay_progress(void *ctx, const struct solve_progress *p)
{
	const struct relay *r = ctx;
	char label[160];
	struct solve_progress q = *p;

	if (r->stall)
		stall_see(r->stall, p->has_incumbent, p->incumbent, p->has_bound, p->bound);
	if (r->rq->progress == NULL)
		return;
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
 * (memory). st (may be NULL) sees the phase's gains and, when armed,
 * halts it. A phase that fails (its solver crashed twice, say) is noted
 * in in->failed and costs auto nothing it had. */
static void run_phase(const struct graph *g, const struct solve_request *rq, const char *name,
		      double t0, double left, const struct plan *start, struct incumbent *in,
		      int *refused, struct stall *st)
{
	struct solve_request sub = *rq;
	struct relay relay = { rq, in, t0, name, st };
	struct solve_outcome o;
	struct cm_error err;

	/* Relayed even when no one watches: the stall stop does. */
	if (rq->progress || st) {
		sub.progress = relay_progress;
		sub.ctx = &relay;
	}
	if (st && (st->armed || st->gap > 0)) {
		sub.halt = stall_halt;
		sub.halt_ctx = st;
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
	run_phase(g, rq, "lns", t0, left, all, in, &refused, NULL);
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
	struct relay relay = { rq, in, t0, "heuristics", NULL };
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
		  NULL, &costly, refused, NULL);
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

/* rq's first_plan told of in's plan, once (*told), when it has one: a
 * shallow copy of it with the fields of a plan file. */
static void tell_first(const struct graph *g, const struct solve_request *rq,
		       const struct incumbent *in, int *told)
{
	struct plan p;
	struct sim_result sim;
	struct cm_error err;

	if (*told || rq->first_plan == NULL || in->plan == NULL)
		return;
	*told = 1;
	p = *in->plan;
	if (plan_simulate(g, &p, rq->budget, &sim, &err) || !sim.fits)
		return;
	snprintf(p.strategy, sizeof(p.strategy), "auto");
	snprintf(p.param, sizeof(p.param), "plan=%.20s;first", in->plan_by);
	snprintf(p.status, sizeof(p.status), "%s", strategy_status_names[STATUS_FEASIBLE]);
	p.solver[0] = 0;
	p.budget = rq->budget;
	p.cost = sim.cost;
	p.peak = sim.peak;
	p.has_lower_bound = 0;
	p.has_time = 0;
	rq->first_plan(rq->first_ctx, &p);
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
	if (turn_bound(g, rq->budget, NULL, ops, &so, &bound, &err) != 1)
		return;
	in->turn = bound;
	in->has_turn = 1;
	raise_bound(in, bound, "turn");
}

/* 1 when the stall stop may halt phase name on g: approx; the whole MILP
 * only on models larger than those it proves (AUTO_MILP_COLUMNS), since
 * it reports nothing until its proof; lns only after the LP or the MILP
 * (up to AUTO_LP_COLUMNS), where it is not the only search: alone, on the
 * random layered graphs, its gains come after up to 40 s of nothing and
 * vary from run to run (n250 at f = .25: at 35.9 s in one run, not by
 * 42.6 s in the next). dtr-tune ends on its own. */
static int stall_armed(const struct graph *g, const char *name)
{
	double n = g->n, cols = 1.5 * n * n + n * g->n_edges;

	return strcmp(name, "approx") == 0 ||
	       (strcmp(name, "ilp") == 0 && cols > AUTO_MILP_COLUMNS) ||
	       (strcmp(name, "lns") == 0 && cols <= AUTO_LP_COLUMNS);
}

/* The phases by the graph's size, each with its share of the time left,
 * until one proves its plan optimal or that none fits; st halts those it
 * may when they stall. */
static void run_phases(const struct graph *g, const struct solve_request *rq,
		       struct phase *ph, int n_ph, double t0, double limit,
		       struct incumbent *in, int *refused, struct stall *st, int *told)
{
	int solver = has_phase(ph, n_ph, "ilp") || has_phase(ph, n_ph, "approx");

	for (int k = 0; k < n_ph && !in->proven && !in->infeasible && !stop_requested(); k++) {
		double left = limit - (cm_clock() - t0);

		if (gap_met(st->gap, in->plan != NULL, in->cost, in->has_bound, in->bound)) {
			if (left > 1)
				snprintf(in->early, sizeof(in->early), "ended %.0f s before the "
					 "time limit: within the gap (%.3g%%) of the bound", left,
					 100 * st->gap);
			break;
		}
		if (left <= 0.5 || (strcmp(ph[k].name, "lns") == 0 &&
				    (in->plan == NULL || (in->repaired && !solver))))
			break;
		/* dtr-tune starts from dtr's plan, which no heuristic fits. */
		if (strcmp(ph[k].name, "dtr-tune") == 0 && in->plan == NULL)
			continue;
		report(rq, in, t0, ph[k].name);
		st->armed = stall_armed(g, ph[k].name);
		st->grace = cm_clock() + (st->seconds > 0 ? fmin(st->seconds, AUTO_STALL_GRACE) :
						      AUTO_STALL_GRACE);
		run_phase(g, rq, ph[k].name, t0,
			  ph[k].cap > 0 ? fmin(ph[k].cap, left * ph[k].share) : left * ph[k].share,
			  NULL, in, refused, st);
		tell_first(g, rq, in, told);
		/* A phase that cannot be halted is not judged: its silence
		 * does not count against the next. */
		if (!st->armed)
			st->from = cm_clock();
		st->armed = 0;
		stall_see(st, in->plan != NULL, in->cost, in->has_bound, in->bound);
		/* The MILP refused for memory: its LP in its place, unless that
		 * ran or comes anyway (lns, the last, takes over from it). */
		if (*refused && strcmp(ph[k].name, "ilp") == 0 && !has_phase(ph, n_ph, "approx")) {
			ph[k].name = "approx";
			k--;
		}
	}
	/* Every phase ended on its own (dtr-tune converged, lns ran out of
	 * windows) or stalled, and the plan does not meet the bound: nothing
	 * more to gain by waiting. */
	if (!in->proven && !in->infeasible && !stop_requested() && in->plan && !in->early[0] &&
	    !(in->has_bound && !num_lt(in->bound, in->cost)) && limit - (cm_clock() - t0) > 1) {
		if (st->fired)
			snprintf(in->early, sizeof(in->early), "ended %.0f s before the time "
				 "limit: nothing gained for %.0f s", limit - (cm_clock() - t0),
				 cm_clock() - st->last);
		else
			snprintf(in->early, sizeof(in->early), "ended %.0f s before the time "
				 "limit: every phase ran to its end", limit - (cm_clock() - t0));
	}
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

/* With a bandwidth: the share of the time limit for the rows that make
 * plans with copies (dtr-offload: a second or less on the example graphs),
 * before the usual phases take the rest. */
#define AUTO_COPIES_SHARE 0.25

/* auto with a bandwidth (rq->copy): the rows flagged STRATEGY_COPIES, the
 * turn bound with copies (a bound on the time of every plan), then, unless
 * a plan meets it, the usual phases without copies; the plan of least
 * replayed time that fits. The phases' bounds and proofs hold for plans
 * without copies only; the turn bound's (param: bound=turn) or the
 * checkpoint-all time (bound=floor) for all. 0, or -1 with err set. */
static int auto_in_time(const struct strategy *s, const struct graph *g,
			const struct solve_request *rq, struct solve_outcome *out,
			struct cm_error *err)
{
	/* Times compared in units of cost, where num.h's tolerance is
	 * relative: a step of microseconds is not within it. */
	double t0 = cm_clock(), limit = strategy_time_limit(rq), spc = rq->copy->seconds_per_cost;
	struct solve_outcome best = { 0 }, bound = { 0 };
	struct solve_request plain = *rq;
	struct sim_result sim = { 0 };
	char by[32] = "none";
	int turn;

	for (int i = 0; i < strategy_count() && !stop_requested(); i++) {
		const struct strategy *c = strategy_at(i);
		struct solve_request cp = *rq;
		struct solve_outcome o = { 0 };

		if (!(c->flags & STRATEGY_COPIES))
			continue;
		cp.strategy = c->name;
		cp.n_params = 0; /* auto's parameters are its own */
		cp.time_limit = fmax(0.001, limit * AUTO_COPIES_SHARE - (cm_clock() - t0));
		if (c->run(c, g, &cp, &o, err)) {
			strategy_outcome_release(&best);
			return -1;
		}
		if (o.plan && o.sim.fits && (best.plan == NULL || num_lt(o.sim.time / spc,
									  best.sim.time / spc))) {
			strategy_outcome_release(&best);
			best = o;
			snprintf(by, sizeof(by), "%s", c->name);
		} else {
			strategy_outcome_release(&o);
		}
	}
	/* the fastest plan with copies so far, its time in units of cost */
	report(rq, &(struct incumbent){ .plan = best.plan,
					.cost = best.plan ? best.sim.time / spc : 0 }, t0, "turn");
	turn = strategy_copy_bound(g, rq, fmin(AUTO_TURN_SECONDS,
					       AUTO_TURN_SHARE * (limit - (cm_clock() - t0))),
				   &bound);
	plain.copy = NULL;
	plain.first_plan = NULL; /* a plan without copies is not the answer */
	plain.time_limit = fmax(0.001, limit - (cm_clock() - t0));
	/* A plan with copies that meets the bound is the fastest: no phase
	 * without copies can beat it. */
	if (!strategy_time_meets(rq, &best, bound.time_bound) &&
	    strategy_run_auto(s, g, &plain, out, err)) {
		strategy_outcome_release(&best);
		return -1;
	}
	if (out->plan && plan_simulate_copies(g, out->plan, rq->budget, rq->copy, &sim, NULL, err)) {
		strategy_outcome_release(&best);
		return -1;
	}
	if (best.plan && (out->plan == NULL || !sim.fits ||
			  num_lt(best.sim.time / spc, sim.time / spc))) {
		strategy_outcome_release(out);
		*out = best;
		snprintf(out->plan->strategy, sizeof(out->plan->strategy), "%s", s->name);
	} else {
		strategy_outcome_release(&best);
		if (out->plan) {
			const char *p = strstr(out->param, "plan=");

			snprintf(by, sizeof(by), "%.*s", p ? (int)strcspn(p + 5, ";") : 0,
				 p ? p + 5 : "");
		}
	}
	out->has_time_bound = 1;
	out->time_bound = bound.time_bound;
	snprintf(out->param, sizeof(out->param), "plan=%.30s;bound=%s", by, turn ? "turn" : "floor");
	if (out->plan)
		snprintf(out->plan->param, sizeof(out->plan->param), "%s", out->param);
	return 0;
}

int strategy_run_auto(const struct strategy *s, const struct graph *g,
		      const struct solve_request *rq, struct solve_outcome *out,
		      struct cm_error *err)
{
	double t0 = cm_clock(), limit = strategy_time_limit(rq);
	struct incumbent in = { 0 };
	struct stall st = { .t0 = t0, .last = t0, .from = t0, .seconds = -1, .gap = rq->gap };
	struct phase ph[AUTO_MAX_PHASES];
	int n_ph = phases_of(g, ph), refused = 0, told = 0, rc;

	if (rq->copy)
		return auto_in_time(s, g, rq, out, err);
	if (strategy_param(rq, "stall"))
		st.seconds = (double)strategy_param_whole(rq, "stall", 0);
	run_heuristics(g, rq, t0, limit, &in);
	if (in.plan == NULL && !stop_requested()) {
		rc = no_heuristic_fits(g, rq, ph, n_ph, t0, limit, &in, &refused, out, err);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	tell_first(g, rq, &in, &told);
	if (in.plan)
		turn_phase(g, rq, t0, limit, &in);
	stall_see(&st, in.plan != NULL, in.cost, in.has_bound, in.bound);
	st.from = cm_clock();
	run_phases(g, rq, ph, n_ph, t0, limit, &in, &refused, &st, &told);
	return take_incumbent(s, g, rq, limit, &in, out, err);
}

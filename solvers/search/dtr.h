/* The dtr strategy's algorithm: run the nodes in file order under a budget,
 * evicting resident values by a score when memory runs short and recomputing
 * evicted inputs on demand, after Dynamic Tensor Rematerialization (Kirisame
 * et al., ICLR 2021). Works on any DAG, with or without backward nodes. */
#ifndef CM_DTR_H
#define CM_DTR_H

#include <stdint.h>

#include "../../plan/sim.h"

/* dtr_plan's status when the greedy gets stuck: everything resident is
 * pinned and the next compute still does not fit, or the plan would pass
 * o->max_computes. */
#define DTR_NO_PLAN 1

/* Eviction scores; the resident, unpinned value with the lowest score goes
 * first. c = cost, m = memory, s = staleness (time since the last compute or
 * read of the value). */
enum dtr_heuristic {
	DTR_FULL,    /* (c + cost of the evicted neighbourhood e*) / (m s): h_DTR */
	DTR_EQCLASS, /* the same with e* approximated by union-find classes of
		      * evicted values: h_DTR_eq */
	DTR_LOCAL,   /* c / (m s): h_DTR without the neighbourhood */
	DTR_LRU,     /* the stalest first */
	DTR_SIZE,    /* the largest first, then the stalest */
	DTR_MSPS,    /* (c + cost of the evicted ancestors) / m: Capuchin's
		      * memory saving per second, highest first */
	DTR_NEXTUSE, /* (c + cost of e*) / (m d), d the distance to the next
		      * file-order step that reads the value (not in the paper:
		      * an offline run knows the future) */
	DTR_BEST,    /* every heuristic above, each with both settings of
		      * keep_dead; the cheapest plan that fits */
	DTR_NHEURISTICS
};

/* "full", "eqclass", "local", "lru", "size", "msps", "nextuse", "best", NULL: the
 * names for a --param heuristic=NAME, indexed by enum dtr_heuristic. */
extern const char *const dtr_heuristic_names[];

struct dtr_opts {
	int heuristic;        /* enum dtr_heuristic */
	int staleness_cost;   /* 1: staleness in cost units (the sum of the costs
			       * computed since), 0: in compute steps */
	int no_prune;         /* 1: keep useless computes (dtr_prune not run) */
	int keep_dead;        /* 1: dead values stay resident, evicted before any
			       * other, until memory is short (0: freed at once) */
	long max_soft;        /* give up past this many evictions of values that
			       * a pending recomputation needs (thrashing); 0 for
			       * n + 100 */
	long max_computes;    /* give up (DTR_NO_PLAN) past this many computes;
			       * 0 for 10 n + 10,000 */
	double deadline;      /* give up at this cm_clock() time (best: keep the
			       * best plan found by then); 0 for none */
	const double *weight; /* per node: a factor on the score's numerator
			       * (higher keeps the value longer); NULL for 1 */
	/* The copy bandwidth and time of a unit of cost, or NULL. With them
	 * every plan is replayed in time, each heuristic also runs with
	 * evictions that may offload their victim to host memory (docs/dtr.md,
	 * dtr-offload), and the fastest plan that fits (the host budget too)
	 * wins: never slower than the plain runs' fastest. */
	const struct sim_copy *copy;
	int verify;           /* 1: check every eviction's pick against a scan
			       * of all resident values (slow; for tests): an
			       * error (-1) when they differ */
};

/* Index of the heuristic called name in dtr_heuristic_names, or -1. */
int dtr_heuristic_find(const char *name);

/* Runs g's nodes in file order under budget (total bytes, fixed memory
 * included). Before each compute, evicts (a free step) resident values until
 * the compute fits: the one with the lowest score among those that neither
 * the compute nor the pending recomputation chain needs; when every resident
 * value is so pinned, one that only a lower frame of the chain needs (that
 * frame recomputes it later), never an input of the compute itself. Evicted
 * inputs are recomputed first, recursively. A value is dead once every user
 * of it has had its file-order step; dead values are freed right after that
 * step (o->keep_dead: kept, evicted before any other). Useless computes are
 * then dropped (dtr_prune). o NULL means the defaults (DTR_BEST). With
 * o->copy, evictions may offload (docs/dtr.md, dtr-offload). Appends the
 * steps to p (stage -1 on each) and returns 0: the plan has been replayed
 * with plan_simulate here (in time with o->copy, p's time figures set) and
 * fits; p's cost, peak, budget and strategy
 * ("dtr") are set when p held no steps before. Returns DTR_NO_PLAN with p
 * unchanged when the greedy gets stuck or thrashes past the caps, -1 with
 * err set when out of memory (or, a bug, when the plan does not replay). */
int dtr_plan(const struct graph *g, uint64_t budget, const struct dtr_opts *o,
	     struct plan *p, struct cm_error *err);

/* Drops from steps [from, p->n) of p every compute of a value that no
 * compute (or offload) reads before the value is freed or the plan ends, with its free,
 * when the plan computes that value elsewhere too: the cost falls, memory
 * in use never rises. Returns the number of computes dropped, or -1 with
 * err set when out of memory (p unchanged). */
int dtr_prune(const struct graph *g, struct plan *p, int from, struct cm_error *err);

#endif

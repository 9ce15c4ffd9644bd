/* Keep, offload or recompute: the plans of training graphs in which each
 * activation gets one of the policies that PyTorch's selective
 * checkpointing names (MUST_SAVE, MUST_CPU_OFFLOAD, PREFER_RECOMPUTE; and
 * an offload fetched one step early), the forward and the backward each
 * run once in file order, and a recomputed value is rebuilt from kept
 * inputs (docs/model.md, "Keep, offload or recompute"). Their replayed
 * time is a pass of two clocks with a closed form, so that a dynamic
 * program on chains (after POFO, Beaumont et al., NeurIPS 2021) and a MILP
 * (solvers/milp/policy.c) find the fastest exactly. */
#ifndef CM_POLICY_H
#define CM_POLICY_H

#include "../../plan/sim.h"

enum policy_mode {
	POLICY_KEEP,      /* on the device from its compute to its last reader */
	POLICY_OFFLOAD,   /* offloaded after its compute, freed after its forward
			   * reader, fetched before its first backward reader */
	POLICY_RECOMPUTE, /* freed after its forward reader, computed again
			   * before its first backward reader from its input,
			   * which is kept */
	POLICY_PREFETCH,  /* offloaded as POLICY_OFFLOAD, fetched one backward
			   * step earlier: during the backward node before its
			   * first backward reader */
	POLICY_FIXED,     /* no choice: kept when the backward reads it (the
			   * last forward value), else freed after its readers */
	POLICY_MODES
};

/* The class on one graph: which values have a choice, and what each
 * choice costs in memory and time. */
struct policy_chain {
	const struct graph *g;
	int nf;            /* forward nodes: 0 .. nf - 1, before every backward
			    * node */
	int chain;         /* the forward nodes are a chain (the dynamic
			    * program's domain) */
	char *moded;       /* [nf] 1 when the value has a choice: a later forward
			    * node and a backward node read it */
	char *recomputable; /* [nf] moded, and each input moded and still
			    * resident at its first backward reader (when
			    * kept) */
	char *prefetchable; /* [nf] moded and a backward node comes before its
			    * first backward reader */
	int *fb, *lb;      /* [nf] first and last backward reader, -1 for none */
	int *ff;           /* [nf] last forward reader, -1 for none */
	double *end;       /* [nf] scratch: the end of each offload */
	double *c;         /* [n] a compute, in units of cost */
	double *m;         /* [nf] a copy, in units of cost (seconds / seconds
			    * a unit of cost) */
	/* Memory rows, one a node k (after its compute): the row holds
	 * base[k] + the sum over moded j of memory[j] times
	 * (in_k[k][j] and j kept) or (in_or[k][j] and j offloaded or
	 * recomputed) or (in_p[k][j] and j prefetched). nf columns a row. */
	uint64_t *base;
	char *in_k, *in_or, *in_p;
	uint64_t host_budget; /* 0: none */
	double forward_time; /* the forward's computes (units of cost) */
};

/* Analyses g for the class at copy's rates: 1 when g is a training graph
 * the class covers, its forward nodes first (pc filled; release with
 * policy_chain_release), 0 when not (why says which node breaks it;
 * nothing to release), -1 with err set when out of memory. */
int policy_chain_init(struct policy_chain *pc, const struct graph *g,
		      const struct sim_copy *copy, char *why, size_t len,
		      struct cm_error *err);
void policy_chain_release(struct policy_chain *pc);

/* The model time of mode (nf values, POLICY_FIXED where not moded) in
 * units of cost: what the plan of policy_plan replays to, divided by the
 * seconds of a unit of cost. */
double policy_time(const struct policy_chain *pc, const int *mode);

/* The device peak of the plan of mode (the largest memory row), and its
 * host peak (the bytes offloaded). */
uint64_t policy_peak(const struct policy_chain *pc, const int *mode);
uint64_t policy_host(const struct policy_chain *pc, const int *mode);

/* The plan of mode (steps in the order of docs/model.md), or NULL with
 * err set when out of memory. */
struct plan *policy_plan(const struct policy_chain *pc, const int *mode,
			 struct cm_error *err);

/* The dynamic program: the modes of the fastest plan of the class whose
 * device peak is within budget (and host peak within the host budget)
 * into mode and its model time into *time. Returns 1 when there is one, 0
 * when no plan of the class fits (or its states, or the sums of kept
 * bytes it tries, exceed max_states in all, or the cm_clock() time deadline passed (0: none), or a stop
 * was requested: then *gave_up is set), POLICY_UNORDERED when a memory row
 * or a backward step involves moded values other than a prefix kept and
 * two neighbours (a backward that reads the chain out of order), or the
 * forward is not a chain (the MILP still covers both), -1 with err set
 * when out of memory. */
#define POLICY_UNORDERED (-2)
int policy_dp(const struct policy_chain *pc, uint64_t budget, long max_states,
	      double deadline, int *mode, double *time, int *gave_up, struct cm_error *err);

#endif

/* Greedy eviction with on-demand recomputation, after Dynamic Tensor
 * Rematerialization (Kirisame et al., ICLR 2021): the scores h_DTR, h_DTR_eq
 * and h_DTR_local are the paper's, LRU and largest-first its baselines, MSPS
 * Capuchin's (Peng et al., ASPLOS 2020). The run is an offline simulation of
 * the online algorithm: file order is the program, the plan records what the
 * runtime would do. */
#include "dtr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/num.h"
#include "../../common/stop.h"
#include "../../plan/sim.h"

const char *const dtr_heuristic_names[] = {
	[DTR_FULL] = "full", [DTR_EQCLASS] = "eqclass", [DTR_LOCAL] = "local",
	[DTR_LRU] = "lru", [DTR_SIZE] = "size", [DTR_MSPS] = "msps",
	[DTR_NEXTUSE] = "nextuse",
	[DTR_BEST] = "best", [DTR_NHEURISTICS] = NULL,
};

/* The state of one run. */
struct dtr {
	const struct graph *g;
	uint64_t budget;
	int heuristic;
	long max_computes, computes;
	struct plan *p;
	uint64_t live;       /* fixed memory + bytes of the resident values */
	char *resident;      /* resident[v]: v is in memory */
	char *computed;      /* computed[v]: v has been computed at least once */
	char *dead;          /* dead[v]: every user of v has had its file-order step */
	int *pin;            /* pin[v] > 0: the compute in progress or the pending
			      * recomputation chain needs v; not evictable */
	int *remaining;      /* users of v whose file-order step is still to come */
	double *last;        /* clock at v's last compute or read */
	const double *weight; /* dtr_opts.weight, or NULL */
	double clock, tick;  /* now; tick keeps staleness above 0 */
	int step;            /* the node whose file-order step is under way */
	int by_cost;         /* the clock advances by cost, else by 1 a compute */
	int *res, *res_pos, nres; /* the resident values; res_pos[v] its slot or -1 */
	int *fv, depth;           /* the chain of pending computes, v's inputs first */
	int keep_dead;            /* dead values stay (dtr_opts.keep_dead) */
	/* Values that may be dead and resident since the last sweep (those
	 * that died, dead ones recomputed), each once: the sweep after a step
	 * looks at them only, not at every resident value. */
	int *zombies, nzombies;
	char *listed;
	long soft_evictions;      /* evictions of values a lower frame needs */
	long max_soft;            /* more of them is thrashing: give up */
	double deadline;          /* cm_clock() at which to give up, or 0 */
	unsigned *mark, stamp;    /* visited marks of the neighbourhood walks */
	unsigned *hard, hstamp;   /* hard[u] == hstamp: u is an input of the top frame */
	int *walk;                /* their stack */
	/* Union-find over evicted values for h_DTR_eq: elem[v] is v's element
	 * while v is evicted (and not dead), else -1; an element per eviction. */
	int *elem, *uf_parent, uf_n, uf_cap;
	double *uf_cost;     /* a root's class: summed cost of its evicted members */
	unsigned *uf_mark;
	/* Candidates (resident, unpinned, memory > 0) in groups of equal score
	 * parameters; see the comment above pick. */
	double *a;           /* a[v]: c + e* (or c) of candidate v when last refreshed */
	int *grp, *hpos;     /* v's group (-1: none) and its slot in the group's heap */
	char *vol;           /* v's e* walk met a dead value: refreshed at every pick */
	int *vols, nvols;    /* the candidates with vol set (some may no longer be) */
	int *dirty, ndirty;  /* values to refresh before the next pick, each once */
	char *isdirty;
	struct dtr_group *groups;
	int ngroups, cap_groups;
	int *gtab, gtab_cap; /* hash of group keys: group + 1, 0 empty */
	int *glive, nlive;   /* the groups with members */
	/* eqclass: the candidates whose a[] used a class, by its root (lists
	 * over a pool of links; a change of the class refreshes and empties them) */
	int *w_head, w_cap, *w_next, *w_who, w_n, w_pool, w_free;
	int verify;          /* dtr_opts.verify */
	int met_dead;        /* the last neighbourhood walk passed a dead value */
	/* Offload (dtr_opts.copy; docs/dtr.md, dtr-offload): an eviction may
	 * copy its victim to host memory, and a later read fetches it. */
	const struct sim_copy *copy; /* NULL: never */
	double fetch_share;  /* the part of a fetch's time counted as exposed */
	char *host;          /* host[v]: v has a host copy */
	int *made;           /* made[v]: the step of p that last computed v */
	double *tmade;       /* tmade[v]: the estimated end of that compute, s */
	double tnow;         /* the estimated compute stream's clock, s */
	double cq;           /* the estimated end of the copy stream, s */
	uint64_t host_live;  /* bytes with a host copy now */
	int *offs;           /* the offloads to insert: after step offs[2i],
			      * of value offs[2i + 1] */
	int noffs, cap_offs;
};

/* make_room's status when o->verify finds the pick differs from a scan's. */
#define DTR_DIVERGED 2

/* A group's members share (a, m) and deadness, so their scores are ordered
 * as (k, last, index) at every clock: k is minus the next read for nextuse,
 * else 0. Heap entries keep the key they were inserted with. */
struct dtr_entry {
	double k, last;
	int v;
};

struct dtr_group {
	double a;
	uint64_t m;
	int dead, n, cap, livepos;
	struct dtr_entry *h;
};

static void state_release(struct dtr *s)
{
	free(s->resident);
	free(s->computed);
	free(s->dead);
	free(s->pin);
	free(s->remaining);
	free(s->last);
	free(s->res);
	free(s->res_pos);
	free(s->fv);
	free(s->zombies);
	free(s->listed);
	free(s->hard);
	free(s->mark);
	free(s->walk);
	free(s->elem);
	free(s->uf_parent);
	free(s->uf_cost);
	free(s->uf_mark);
	free(s->a);
	free(s->grp);
	free(s->hpos);
	free(s->vol);
	free(s->vols);
	free(s->dirty);
	free(s->isdirty);
	for (int i = 0; i < s->ngroups; i++)
		free(s->groups[i].h);
	free(s->groups);
	free(s->gtab);
	free(s->glive);
	free(s->w_head);
	free(s->w_next);
	free(s->w_who);
	free(s->host);
	free(s->made);
	free(s->tmade);
	free(s->offs);
}

static int state_init(struct dtr *s, const struct graph *g, uint64_t budget,
		      const struct dtr_opts *o, int heuristic, double share, struct plan *p)
{
	size_t n = (size_t)g->n + 1;

	*s = (struct dtr){ .g = g, .budget = budget, .heuristic = heuristic, .p = p,
			   .live = g->fixed_memory, .by_cost = o->staleness_cost,
			   .max_computes = o->max_computes > 0 ? o->max_computes
							       : 10L * g->n + 10000L,
			   .max_soft = o->max_soft > 0 ? o->max_soft : (long)g->n + 100,
			   .deadline = o->deadline, .keep_dead = o->keep_dead,
			   .weight = o->weight };
	s->resident = calloc(n, 1);
	s->computed = calloc(n, 1);
	s->dead = calloc(n, 1);
	s->pin = calloc(n, sizeof(int));
	s->remaining = malloc(n * sizeof(int));
	s->last = calloc(n, sizeof(double));
	s->res = malloc(n * sizeof(int));
	s->res_pos = malloc(n * sizeof(int));
	s->fv = malloc(n * sizeof(int));
	s->zombies = malloc(n * sizeof(int));
	s->listed = calloc(n, 1);
	s->hard = calloc(n, sizeof(unsigned));
	s->mark = calloc(n, sizeof(unsigned));
	s->walk = malloc(n * sizeof(int));
	s->elem = malloc(n * sizeof(int));
	s->a = malloc(n * sizeof(double));
	s->grp = malloc(n * sizeof(int));
	s->hpos = malloc(n * sizeof(int));
	s->vol = calloc(n, 1);
	s->vols = malloc(n * sizeof(int));
	s->dirty = malloc(n * sizeof(int));
	s->isdirty = calloc(n, 1);
	s->verify = o->verify;
	s->w_free = -1;
	s->copy = share >= 0 ? o->copy : NULL;
	s->fetch_share = share;
	if (s->copy) {
		s->host = calloc(n, 1);
		s->made = calloc(n, sizeof(int));
		s->tmade = calloc(n, sizeof(double));
		if (!s->host || !s->made || !s->tmade)
			return -1;
	}
	if (!s->resident || !s->computed || !s->dead || !s->pin || !s->remaining ||
	    !s->last || !s->res || !s->res_pos || !s->fv || !s->zombies || !s->listed ||
	    !s->hard || !s->mark || !s->walk || !s->elem || !s->a || !s->grp ||
	    !s->hpos || !s->vol || !s->vols || !s->dirty || !s->isdirty)
		return -1;
	s->tick = 1;
	if (s->by_cost && g->n > 0) {
		double mean = graph_total_cost(g) / g->n;

		s->tick = mean > 0 ? mean : 1;
	}
	for (int v = 0; v < g->n; v++) {
		s->remaining[v] = graph_nusers(g, v);
		s->res_pos[v] = -1;
		s->elem[v] = -1;
		s->grp[v] = -1;
	}
	return 0;
}

/* v's score parameters or candidacy may have changed: refreshed before the
 * next pick. */
static void touch(struct dtr *s, int v)
{
	if (s->isdirty[v])
		return;
	s->isdirty[v] = 1;
	s->dirty[s->ndirty++] = v;
}

/* The class with root r changed: the candidates that used it are refreshed
 * and its list of them emptied (they join again when refreshed). */
static void class_touch(struct dtr *s, int r)
{
	int last = -1;

	if (r >= s->w_cap)
		return;
	for (int i = s->w_head[r]; i >= 0; i = s->w_next[i]) {
		touch(s, s->w_who[i]);
		last = i;
	}
	if (last >= 0) {
		s->w_next[last] = s->w_free;
		s->w_free = s->w_head[r];
		s->w_head[r] = -1;
	}
}

/* Candidate v's a[] used the class with root r. 0, or -1 when out of memory. */
static int class_watch(struct dtr *s, int r, int v)
{
	int i;

	if (r >= s->w_cap) {
		int *h = realloc(s->w_head, (size_t)s->uf_cap * sizeof(int));

		if (h == NULL)
			return -1;
		for (int j = s->w_cap; j < s->uf_cap; j++)
			h[j] = -1;
		s->w_head = h;
		s->w_cap = s->uf_cap;
	}
	if (s->w_free >= 0) {
		i = s->w_free;
		s->w_free = s->w_next[i];
	} else {
		if (s->w_n == s->w_pool) {
			int cap = s->w_pool ? 2 * s->w_pool : 1024;
			int *nx = realloc(s->w_next, (size_t)cap * sizeof(int));

			if (nx == NULL)
				return -1;
			s->w_next = nx;
			nx = realloc(s->w_who, (size_t)cap * sizeof(int));
			if (nx == NULL)
				return -1;
			s->w_who = nx;
			s->w_pool = cap;
		}
		i = s->w_n++;
	}
	s->w_who[i] = v;
	s->w_next[i] = s->w_head[r];
	s->w_head[r] = i;
	return 0;
}

/* The resident neighbours of v are refreshed. */
static void touch_neighbours(struct dtr *s, int v)
{
	const struct graph *g = s->g;

	for (int i = g->dep_off[v]; i < g->dep_off[v + 1]; i++)
		if (s->resident[g->deps[i]])
			touch(s, g->deps[i]);
	for (int i = g->user_off[v]; i < g->user_off[v + 1]; i++)
		if (s->resident[g->users[i]])
			touch(s, g->users[i]);
}

static int uf_find(struct dtr *s, int x)
{
	while (s->uf_parent[x] != x) {
		s->uf_parent[x] = s->uf_parent[s->uf_parent[x]];
		x = s->uf_parent[x];
	}
	return x;
}

static void uf_union(struct dtr *s, int a, int b)
{
	a = uf_find(s, a);
	b = uf_find(s, b);
	if (a == b)
		return;
	class_touch(s, a);
	class_touch(s, b);
	/* The smaller index becomes the root: older classes are usually larger. */
	if (b < a) {
		int t = a;

		a = b;
		b = t;
	}
	s->uf_parent[b] = a;
	s->uf_cost[a] += s->uf_cost[b];
}

/* v was evicted: a new class of its own, merged with the classes of its
 * evicted neighbours. 0, or -1 when out of memory. */
static int eq_evict(struct dtr *s, int v)
{
	const struct graph *g = s->g;
	int e;

	if (s->uf_n == s->uf_cap) {
		int cap = s->uf_cap ? 2 * s->uf_cap : 1024;
		int *par = realloc(s->uf_parent, (size_t)cap * sizeof(int));
		double *cost;
		unsigned *mk;

		if (par == NULL)
			return -1;
		s->uf_parent = par;
		cost = realloc(s->uf_cost, (size_t)cap * sizeof(double));
		if (cost == NULL)
			return -1;
		s->uf_cost = cost;
		mk = realloc(s->uf_mark, (size_t)cap * sizeof(unsigned));
		if (mk == NULL)
			return -1;
		memset(mk + s->uf_cap, 0, (size_t)(cap - s->uf_cap) * sizeof(unsigned));
		s->uf_mark = mk;
		s->uf_cap = cap;
	}
	e = s->uf_n++;
	s->uf_parent[e] = e;
	s->uf_cost[e] = g->nodes[v].cost;
	s->elem[v] = e;
	for (int i = g->dep_off[v]; i < g->dep_off[v + 1]; i++)
		if (s->elem[g->deps[i]] >= 0)
			uf_union(s, e, s->elem[g->deps[i]]);
	for (int i = g->user_off[v]; i < g->user_off[v + 1]; i++)
		if (s->elem[g->users[i]] >= 0)
			uf_union(s, e, s->elem[g->users[i]]);
	touch_neighbours(s, v);
	return 0;
}

/* v leaves the evicted set (recomputed, or dead): its cost leaves its class;
 * classes are never split, as in the paper's approximation. */
static void eq_leave(struct dtr *s, int v)
{
	int r;

	if (s->elem[v] < 0)
		return;
	r = uf_find(s, s->elem[v]);
	s->uf_cost[r] -= s->g->nodes[v].cost;
	s->elem[v] = -1;
	class_touch(s, r);
	touch_neighbours(s, v);
}

static unsigned next_stamp(unsigned *stamp, unsigned *mark, size_t n)
{
	if (++*stamp == 0) {
		memset(mark, 0, n * sizeof(unsigned));
		*stamp = 1;
	}
	return *stamp;
}

/* Summed cost of the evicted values that recomputing v would need
 * (ancestors through non-resident values) and, when users is set, of the
 * evicted live values that need v to be recomputed (descendants through
 * such values): the paper's e*(v). */
static double neighbourhood(struct dtr *s, int v, int users)
{
	const struct graph *g = s->g;
	unsigned st = next_stamp(&s->stamp, s->mark, (size_t)g->n + 1);
	double sum = 0;
	int top = 0;

	s->mark[v] = st;
	s->walk[top++] = v;
	while (top > 0) {
		int x = s->walk[--top];

		for (int i = g->dep_off[x]; i < g->dep_off[x + 1]; i++) {
			int d = g->deps[i];

			if (!s->resident[d] && s->mark[d] != st) {
				s->mark[d] = st;
				s->met_dead |= s->dead[d];
				sum += g->nodes[d].cost;
				s->walk[top++] = d;
			}
		}
	}
	if (!users)
		return sum;
	s->walk[top++] = v;
	while (top > 0) {
		int x = s->walk[--top];

		for (int i = g->user_off[x]; i < g->user_off[x + 1]; i++) {
			int u = g->users[i];

			if (s->computed[u] && !s->resident[u] && !s->dead[u] &&
			    s->mark[u] != st) {
				s->mark[u] = st;
				sum += g->nodes[u].cost;
				s->walk[top++] = u;
			}
		}
	}
	return sum;
}

/* The approximate e*(v): the summed cost of the distinct classes next to v. */
static double eq_neighbourhood(struct dtr *s, int v)
{
	const struct graph *g = s->g;
	unsigned st;
	double sum = 0;

	if (s->uf_n == 0)
		return 0;
	st = next_stamp(&s->stamp, s->uf_mark, (size_t)s->uf_cap);
	for (int side = 0; side < 2; side++) {
		const int *adj = side ? g->users : g->deps;
		int lo = side ? g->user_off[v] : g->dep_off[v];
		int hi = side ? g->user_off[v + 1] : g->dep_off[v + 1];

		for (int i = lo; i < hi; i++) {
			int e = s->elem[adj[i]], r;

			if (e < 0)
				continue;
			r = uf_find(s, e);
			if (s->uf_mark[r] != st) {
				s->uf_mark[r] = st;
				sum += s->uf_cost[r];
			}
		}
	}
	return sum;
}

/* The next file-order step that reads live value v. */
static int next_read(const struct dtr *s, int v)
{
	return s->g->users[s->g->user_off[v + 1] - s->remaining[v]];
}

/* The numerator of live value v's score: c plus e* (full, nextuse), the
 * classes' e* (eqclass) or the evicted ancestors (msps); c (local); 0. */
static double numerator_plain(struct dtr *s, int v)
{
	double c = s->g->nodes[v].cost;

	switch (s->heuristic) {
	case DTR_FULL:
	case DTR_NEXTUSE:
		return c + neighbourhood(s, v, 1);
	case DTR_EQCLASS:
		return c + eq_neighbourhood(s, v);
	case DTR_MSPS:
		return c + neighbourhood(s, v, 0);
	case DTR_LOCAL:
		return c;
	default:
		return 0;
	}
}

/* numerator_plain times v's weight. */
static double numerator(struct dtr *s, int v)
{
	double w = s->weight ? s->weight[v] : 1;

	return w * numerator_plain(s, v);
}

/* The score of resident value v with numerator a; the lowest is evicted
 * first. */
static double score_with(const struct dtr *s, int v, double a)
{
	const struct graph_node *nd = &s->g->nodes[v];
	double m = (double)nd->memory, stale = s->clock - s->last[v] + s->tick;

	if (s->dead[v])
		return -INFINITY; /* a recomputed value no later step needs */
	switch (s->heuristic) {
	case DTR_FULL:
	case DTR_EQCLASS:
	case DTR_LOCAL:
		return a / (m * stale);
	case DTR_LRU:
		return s->last[v];
	case DTR_SIZE:
		return -m;
	case DTR_MSPS:
		return a / m;
	default: /* DTR_NEXTUSE: staleness replaced by the distance to the next
		  * file-order step that reads v, which an offline run knows */
		return a / (m * (double)(next_read(s, v) - s->step + 1));
	}
}

/* The score of resident value v, its numerator computed afresh. */
static double score(struct dtr *s, int v)
{
	return score_with(s, v, s->dead[v] ? 0 : numerator(s, v));
}

/* x's residency or deadness changed: the candidates whose e* walk reaches
 * x through evicted live values are refreshed (the walks of full, nextuse
 * and msps). A walk that reaches x through a dead value marks its candidate
 * volatile, refreshed at every pick, so these walks stop at dead values. */
static void nb_changed(struct dtr *s, int x)
{
	const struct graph *g = s->g;
	unsigned st;
	int top = 0;

	if (s->heuristic != DTR_FULL && s->heuristic != DTR_NEXTUSE &&
	    s->heuristic != DTR_MSPS)
		return;
	for (int side = 0; side < 2; side++) {
		const int *adj = side ? g->deps : g->users;
		const int *off = side ? g->dep_off : g->user_off;

		if (side && s->heuristic == DTR_MSPS)
			break;
		st = next_stamp(&s->stamp, s->mark, (size_t)g->n + 1);
		s->mark[x] = st;
		s->walk[top++] = x;
		while (top > 0) {
			int y = s->walk[--top];

			for (int i = off[y]; i < off[y + 1]; i++) {
				int u = adj[i];

				if (s->mark[u] == st)
					continue;
				s->mark[u] = st;
				if (s->resident[u])
					touch(s, u);
				else if (s->computed[u] && !s->dead[u])
					s->walk[top++] = u;
			}
		}
	}
}

static void res_add(struct dtr *s, int v)
{
	s->res_pos[v] = s->nres;
	s->res[s->nres++] = v;
}

static void res_remove(struct dtr *s, int v)
{
	int i = s->res_pos[v], w = s->res[--s->nres];

	s->res[i] = w;
	s->res_pos[w] = i;
	s->res_pos[v] = -1;
}

/* v may now be dead and resident: the next sweep looks at it. */
static void zombie_note(struct dtr *s, int v)
{
	if (s->keep_dead || s->listed[v] || !s->dead[v] || !s->resident[v])
		return;
	s->listed[v] = 1;
	s->zombies[s->nzombies++] = v;
}

static int do_compute(struct dtr *s, int v)
{
	const struct graph *g = s->g;

	if (plan_push(s->p, PLAN_COMPUTE, v, -1))
		return -1;
	if (s->copy) {
		s->tnow += g->nodes[v].cost * s->copy->seconds_per_cost;
		s->made[v] = s->p->n - 1;
		s->tmade[v] = s->tnow;
	}
	s->computes++;
	s->resident[v] = 1;
	s->computed[v] = 1;
	res_add(s, v);
	s->live += g->nodes[v].memory;
	s->clock += s->by_cost ? g->nodes[v].cost : 1;
	s->last[v] = s->clock;
	touch(s, v);
	for (int i = g->dep_off[v]; i < g->dep_off[v + 1]; i++) {
		s->last[g->deps[i]] = s->clock;
		touch(s, g->deps[i]);
	}
	nb_changed(s, v);
	eq_leave(s, v);
	zombie_note(s, v);
	return 0;
}

/* A dead value's host copy is freed once its device copy is gone: no
 * later step reads it (a recomputation that needs it computes it). 0, or
 * -1 when out of memory. */
static int drop_host(struct dtr *s, int v)
{
	if (!s->host || !s->host[v] || !s->dead[v] || s->resident[v])
		return 0;
	s->host[v] = 0;
	s->host_live -= s->g->nodes[v].memory;
	return plan_push(s->p, PLAN_FREE, v, -1);
}

static int do_free(struct dtr *s, int v)
{
	if (plan_push(s->p, PLAN_FREE, v, -1))
		return -1;
	s->resident[v] = 0;
	res_remove(s, v);
	s->live -= s->g->nodes[v].memory;
	touch(s, v);
	nb_changed(s, v);
	if (drop_host(s, v))
		return -1;
	if (s->heuristic == DTR_EQCLASS && !s->dead[v])
		return eq_evict(s, v);
	return 0;
}

/* 1 when a is a better victim than b (a lower score, then the stalest, then
 * the lowest index); b < 0 is no victim yet. */
static int better(const struct dtr *s, int a, double sa, int b, double sb)
{
	if (b < 0 || sa < sb)
		return 1;
	if (sa > sb)
		return 0;
	if (s->last[a] != s->last[b])
		return s->last[a] < s->last[b];
	return a < b;
}

/* Heap order within a group: (k, last, index). */
static int entry_less(const struct dtr_entry *x, const struct dtr_entry *y)
{
	if (x->k != y->k)
		return x->k < y->k;
	if (x->last != y->last)
		return x->last < y->last;
	return x->v < y->v;
}

static void heap_put(struct dtr *s, struct dtr_group *gr, int i, struct dtr_entry e)
{
	gr->h[i] = e;
	s->hpos[e.v] = i;
}

/* Moves the entry at slot i up or down to its place. */
static void heap_fix(struct dtr *s, struct dtr_group *gr, int i)
{
	struct dtr_entry e = gr->h[i];

	while (i > 0 && entry_less(&e, &gr->h[(i - 1) / 2])) {
		heap_put(s, gr, i, gr->h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		int c = 2 * i + 1;

		if (c >= gr->n)
			break;
		if (c + 1 < gr->n && entry_less(&gr->h[c + 1], &gr->h[c]))
			c++;
		if (!entry_less(&gr->h[c], &e))
			break;
		heap_put(s, gr, i, gr->h[c]);
		i = c;
	}
	heap_put(s, gr, i, e);
}

/* v leaves its group, if in one. */
static void group_remove(struct dtr *s, int v)
{
	struct dtr_group *gr;
	int i = s->hpos[v];

	if (s->grp[v] < 0)
		return;
	gr = &s->groups[s->grp[v]];
	s->grp[v] = -1;
	if (i != --gr->n) {
		gr->h[i] = gr->h[gr->n];
		heap_fix(s, gr, i);
	}
	if (gr->n == 0) {
		int w = s->glive[--s->nlive];

		s->glive[gr->livepos] = w;
		s->groups[w].livepos = gr->livepos;
	}
}

/* v joins group gi with key k. 0, or -1 when out of memory. */
static int group_insert(struct dtr *s, int gi, int v, double k)
{
	struct dtr_group *gr = &s->groups[gi];

	if (gr->n == gr->cap) {
		int cap = gr->cap ? 2 * gr->cap : 4;
		struct dtr_entry *h = realloc(gr->h, (size_t)cap * sizeof(*h));

		if (h == NULL)
			return -1;
		gr->h = h;
		gr->cap = cap;
	}
	if (gr->n == 0) {
		gr->livepos = s->nlive;
		s->glive[s->nlive++] = gi;
	}
	s->grp[v] = gi;
	gr->h[gr->n++] = (struct dtr_entry){ k, s->last[v], v };
	heap_fix(s, gr, gr->n - 1);
	return 0;
}

static uint64_t group_hash(double a, uint64_t m, int dead)
{
	uint64_t x;

	memcpy(&x, &a, sizeof(x));
	x ^= m * 0x9e3779b97f4a7c15ULL + (uint64_t)dead;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

/* Doubles the hash table of group keys. 0, or -1 when out of memory. */
static int group_rehash(struct dtr *s)
{
	int cap = s->gtab_cap ? 2 * s->gtab_cap : 64;
	int *t = calloc((size_t)cap, sizeof(int));

	if (t == NULL)
		return -1;
	for (int i = 0; i < s->ngroups; i++) {
		const struct dtr_group *gr = &s->groups[i];
		uint64_t h = group_hash(gr->a, gr->m, gr->dead) & (uint64_t)(cap - 1);

		while (t[h])
			h = (h + 1) & (uint64_t)(cap - 1);
		t[h] = i + 1;
	}
	free(s->gtab);
	s->gtab = t;
	s->gtab_cap = cap;
	return 0;
}

/* The group of key (a, m, dead), made when new; -1 when out of memory. */
static int group_find(struct dtr *s, double a, uint64_t m, int dead)
{
	uint64_t h;
	int gi;

	if (2 * (s->ngroups + 1) > s->gtab_cap && group_rehash(s))
		return -1;
	h = group_hash(a, m, dead) & (uint64_t)(s->gtab_cap - 1);
	while ((gi = s->gtab[h]) != 0) {
		const struct dtr_group *gr = &s->groups[gi - 1];

		if (gr->dead == dead && gr->m == m && memcmp(&gr->a, &a, sizeof(a)) == 0)
			return gi - 1;
		h = (h + 1) & (uint64_t)(s->gtab_cap - 1);
	}
	if (s->ngroups == s->cap_groups) {
		int cap = s->cap_groups ? 2 * s->cap_groups : 64;
		struct dtr_group *gs = realloc(s->groups, (size_t)cap * sizeof(*gs));
		int *lv = realloc(s->glive, (size_t)cap * sizeof(int));

		if (gs != NULL)
			s->groups = gs;
		if (lv != NULL)
			s->glive = lv;
		if (gs == NULL || lv == NULL)
			return -1;
		s->cap_groups = cap;
	}
	s->groups[s->ngroups] = (struct dtr_group){ .a = a, .m = m, .dead = dead };
	s->gtab[h] = s->ngroups + 1;
	return s->ngroups++;
}

/* eqclass: candidate v used the classes of its evicted neighbours. */
static int watch_classes(struct dtr *s, int v)
{
	const struct graph *g = s->g;

	for (int side = 0; side < 2; side++) {
		const int *adj = side ? g->users : g->deps;
		const int *off = side ? g->user_off : g->dep_off;

		for (int i = off[v]; i < off[v + 1]; i++)
			if (s->elem[adj[i]] >= 0 &&
			    class_watch(s, uf_find(s, s->elem[adj[i]]), v))
				return -1;
	}
	return 0;
}

/* Puts v in the group of its current score parameters, or in none when it
 * is no candidate. 0, or -1 when out of memory. */
static int refresh(struct dtr *s, int v)
{
	const struct graph_node *nd = &s->g->nodes[v];
	int dead = s->dead[v], gi;
	uint64_t m = 0;
	double a = 0, k = 0;

	s->isdirty[v] = 0;
	s->vol[v] = 0;
	if (!s->resident[v] || s->pin[v] || nd->memory == 0) {
		group_remove(s, v);
		return 0;
	}
	if (!dead) {
		s->met_dead = 0;
		a = numerator(s, v);
		m = s->heuristic == DTR_LRU ? 0 : nd->memory;
		if (s->met_dead)
			s->vols[s->nvols++] = v;
		s->vol[v] = (char)s->met_dead;
		if (s->heuristic == DTR_NEXTUSE && a != 0)
			k = -(double)next_read(s, v);
		if (s->heuristic == DTR_EQCLASS && watch_classes(s, v))
			return -1;
	}
	s->a[v] = a;
	if ((gi = group_find(s, a, m, dead)) < 0)
		return -1;
	if (s->grp[v] == gi) {
		struct dtr_entry *e = &s->groups[gi].h[s->hpos[v]];

		if (e->k != k || e->last != s->last[v]) {
			e->k = k;
			e->last = s->last[v];
			heap_fix(s, &s->groups[gi], s->hpos[v]);
		}
		return 0;
	}
	group_remove(s, v);
	return group_insert(s, gi, v, k);
}

/* The pick: the lowest score among the candidates (better's order), or -1
 * when there is none; -2 when out of memory. Within a group scores are
 * ordered as the heap is, so only the groups' tops are scored. Volatile
 * candidates and those touched since the last pick are refreshed first. */
static int pick(struct dtr *s)
{
	int best = -1;
	double bs = 0;

	for (int i = 0; i < s->nvols; i++)
		if (s->vol[s->vols[i]])
			touch(s, s->vols[i]);
	s->nvols = 0;
	for (int i = 0; i < s->ndirty; i++)
		if (refresh(s, s->dirty[i]))
			return -2;
	s->ndirty = 0;
	for (int i = 0; i < s->nlive; i++) {
		int u = s->groups[s->glive[i]].h[0].v;
		double sc = score_with(s, u, s->a[u]);

		if (better(s, u, sc, best, bs)) {
			best = u;
			bs = sc;
		}
	}
	return best;
}

/* The scan over every resident value that the pick replaces: the unpinned
 * value of lowest score, or -1; *soft the best of those that only a lower
 * frame of the chain needs, or -1. */
static int scan_pick(struct dtr *s, int v, int *soft)
{
	const struct graph *g = s->g;
	unsigned st = 0;
	int best = -1;
	double bs = 0, ss = 0;

	*soft = -1;
	for (int i = 0; i < s->nres; i++) {
		int u = s->res[i];
		double sc;

		if (g->nodes[u].memory == 0 || (s->pin[u] && (best >= 0 || s->depth < 2)))
			continue;
		if (s->pin[u] && st == 0) {
			st = next_stamp(&s->hstamp, s->hard, (size_t)g->n + 1);
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				s->hard[g->deps[e]] = st;
		}
		if (s->pin[u] && s->hard[u] == st)
			continue;
		sc = score(s, u);
		if (!s->pin[u] && better(s, u, sc, best, bs)) {
			best = u;
			bs = sc;
		} else if (s->pin[u] && better(s, u, sc, *soft, ss)) {
			*soft = u;
			ss = sc;
		}
	}
	return best;
}

/* With a bandwidth: offloads victim v instead of only freeing it when
 * the copy's estimated exposed time is below v's recompute time (docs/dtr.md,
 * dtr-offload). The offload is recorded to go right after v's last
 * compute, where it overlaps the computes since; the free waits for its
 * end. 0, or -1 when out of memory. */
static int maybe_offload(struct dtr *s, int v)
{
	const struct graph *g = s->g;
	double m, start, exposed, recompute;

	if (s->dead[v] || s->host[v] || g->nodes[v].memory == 0 ||
	    (s->copy->host_budget && g->nodes[v].memory > s->copy->host_budget - s->host_live))
		return 0;
	m = (double)g->nodes[v].memory / s->copy->bandwidth;
	start = s->cq > s->tmade[v] ? s->cq : s->tmade[v];
	exposed = fmax(0, start + m - s->tnow) + s->fetch_share * m;
	recompute = (g->nodes[v].cost + neighbourhood(s, v, 0)) * s->copy->seconds_per_cost;
	if (!(exposed < recompute))
		return 0;
	if (s->noffs == s->cap_offs) {
		int cap = s->cap_offs ? 2 * s->cap_offs : 64, *t;

		t = realloc(s->offs, 2 * (size_t)cap * sizeof(int));
		if (t == NULL)
			return -1;
		s->offs = t;
		s->cap_offs = cap;
	}
	s->offs[2 * s->noffs] = s->made[v];
	s->offs[2 * s->noffs++ + 1] = v;
	s->host[v] = 1;
	s->host_live += g->nodes[v].memory;
	s->cq = start + m;
	if (s->cq > s->tnow)
		s->tnow = s->cq; /* the free waits for the copy */
	return 0;
}

static int make_room(struct dtr *s, int v, uint64_t need);

/* Fetches u, an input of the top frame's v that has a host copy, after
 * making room for it as for v. 0, DTR_NO_PLAN, or -1 when out of memory. */
static int do_fetch(struct dtr *s, int v, int u)
{
	double m = (double)s->g->nodes[u].memory / s->copy->bandwidth;
	int r = make_room(s, v, s->g->nodes[u].memory);

	if (r)
		return r;
	if (plan_push(s->p, PLAN_FETCH, u, -1))
		return -1;
	s->cq = (s->cq > s->tnow ? s->cq : s->tnow) + m;
	s->resident[u] = 1;
	res_add(s, u);
	s->live += s->g->nodes[u].memory;
	s->last[u] = s->clock;
	touch(s, u);
	nb_changed(s, u);
	eq_leave(s, u);
	zombie_note(s, u);
	return 0;
}

/* Evicts until need more bytes fit (v's compute, or a fetch of one of its
 * inputs): the unpinned value of lowest score first; when every
 * resident value is pinned, one that only a lower frame of the chain needs
 * (that frame recomputes it when it is on top again). 0, DTR_NO_PLAN when
 * only v's own inputs are resident, DTR_DIVERGED when s->verify finds the
 * pick differs from the scan, -1 when out of memory. */
static int make_room(struct dtr *s, int v, uint64_t need)
{
	while (s->live + need > s->budget) {
		int best = pick(s), soft = -1;

		if (best == -2)
			return -1;
		if (best < 0 || s->verify) {
			int sb = scan_pick(s, v, &soft);

			if (sb != best)
				return DTR_DIVERGED;
		}
		if (best < 0)
			best = soft;
		if (best < 0)
			return DTR_NO_PLAN;
		if (best == soft && ++s->soft_evictions > s->max_soft)
			return DTR_NO_PLAN;
		if (s->copy && maybe_offload(s, best))
			return -1;
		if (do_free(s, best))
			return -1;
	}
	return 0;
}

static void push_frame(struct dtr *s, int v)
{
	const struct graph *g = s->g;

	s->fv[s->depth++] = v;
	for (int i = g->dep_off[v]; i < g->dep_off[v + 1]; i++) {
		s->pin[g->deps[i]]++;
		touch(s, g->deps[i]);
	}
}

/* Runs the chain of pending computes down to the empty stack: each waits
 * until its deps are resident (recomputing evicted ones first, which only
 * ever pushes earlier nodes, so the chain is finite), then makes room and
 * computes. 0, DTR_NO_PLAN, or -1 when out of memory. */
static int run_chain(struct dtr *s)
{
	const struct graph *g = s->g;

	while (s->depth > 0) {
		int v = s->fv[s->depth - 1], e = g->dep_off[v], r;

		/* From the first dep each time: a soft eviction may have taken
		 * one that was resident at the last look. */
		while (e < g->dep_off[v + 1] && s->resident[g->deps[e]])
			e++;
		if (e < g->dep_off[v + 1] && s->copy && s->host[g->deps[e]]) {
			r = do_fetch(s, v, g->deps[e]);
			if (r)
				return r;
			continue;
		}
		if (e < g->dep_off[v + 1]) {
			push_frame(s, g->deps[e]);
			continue;
		}
		if (s->computes >= s->max_computes ||
		    (s->computes % 256 == 0 &&
		     ((s->deadline > 0 && cm_clock() > s->deadline) || stop_requested())))
			return DTR_NO_PLAN;
		r = make_room(s, v, g->nodes[v].memory);
		if (r)
			return r;
		if (do_compute(s, v))
			return -1;
		for (int i = g->dep_off[v]; i < g->dep_off[v + 1]; i++) {
			s->pin[g->deps[i]]--;
			touch(s, g->deps[i]);
		}
		s->depth--;
	}
	return 0;
}

static void set_dead(struct dtr *s, int v)
{
	s->dead[v] = 1;
	touch(s, v);
	nb_changed(s, v);
	eq_leave(s, v);
	zombie_note(s, v);
}

/* Higher slot of the resident list first. */
static int by_slot_desc(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return (x[0] < y[0]) - (x[0] > y[0]);
}

/* Frees the dead values that are resident, in the order of their slots in
 * the resident list, last first (as a scan of the whole list would). 0,
 * or -1 when out of memory. */
static int sweep_dead(struct dtr *s)
{
	int n = 0, rc = 0, (*pairs)[2];

	if (s->nzombies == 0)
		return 0;
	pairs = malloc((size_t)s->nzombies * sizeof(*pairs));
	if (pairs == NULL)
		return -1;
	for (int i = 0; i < s->nzombies; i++) {
		int v = s->zombies[i];

		s->listed[v] = 0;
		if (s->dead[v] && s->resident[v]) {
			pairs[n][0] = s->res_pos[v];
			pairs[n++][1] = v;
		}
	}
	s->nzombies = 0;
	qsort(pairs, (size_t)n, sizeof(*pairs), by_slot_desc);
	for (int i = 0; i < n && rc == 0; i++)
		rc = do_free(s, pairs[i][1]);
	free(pairs);
	return rc;
}

static int by_step(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Puts each recorded offload into the plan right after the compute it
 * copies. 0, or -1 when out of memory. */
static int insert_offloads(struct dtr *s)
{
	struct plan *p = s->p;
	int n = p->n, j = s->noffs - 1, w;

	if (s->noffs == 0)
		return 0;
	qsort(s->offs, (size_t)s->noffs, 2 * sizeof(int), by_step);
	for (int i = 0; i < s->noffs; i++)
		if (plan_push(p, PLAN_FREE, 0, -1))
			return -1;
	w = p->n - 1;
	for (int i = n - 1; i >= 0; i--) {
		for (; j >= 0 && s->offs[2 * j] == i; j--)
			p->steps[w--] = (struct plan_step){ .op = PLAN_OFFLOAD,
							    .node = s->offs[2 * j + 1],
							    .stage = -1 };
		p->steps[w--] = p->steps[i];
	}
	return 0;
}

/* One heuristic: steps into p (which the caller empties). */
static int run_one(const struct graph *g, uint64_t budget, const struct dtr_opts *o,
		   int heuristic, double share, struct plan *p)
{
	struct dtr s;
	int r = -1;

	if (state_init(&s, g, budget, o, heuristic, share, p))
		goto out;
	for (int k = 0; k < g->n; k++) {
		s.step = k;
		push_frame(&s, k);
		r = run_chain(&s);
		if (r)
			goto out;
		r = -1;
		for (int i = g->dep_off[k]; i < g->dep_off[k + 1]; i++) {
			if (heuristic == DTR_NEXTUSE)
				touch(&s, g->deps[i]); /* its next read moved */
			if (--s.remaining[g->deps[i]] == 0) {
				set_dead(&s, g->deps[i]);
				if (drop_host(&s, g->deps[i]))
					goto out;
			}
		}
		if (graph_nusers(g, k) == 0)
			set_dead(&s, k);
		/* Dead values go now: those k read last, k itself when nothing
		 * reads it, and dead ones the chain recomputed. */
		if (sweep_dead(&s))
			goto out;
	}
	r = insert_offloads(&s);
out:
	state_release(&s);
	return r;
}

int dtr_heuristic_find(const char *name)
{
	for (int h = 0; dtr_heuristic_names[h] != NULL; h++)
		if (strcmp(name, dtr_heuristic_names[h]) == 0)
			return h;
	return -1;
}

int dtr_prune(const struct graph *g, struct plan *p, int from, struct cm_error *err)
{
	int *cnt = calloc((size_t)g->n + 1, sizeof(int));
	int *open = malloc(((size_t)g->n + 1) * sizeof(int));
	char *read = calloc((size_t)g->n + 1, 1);
	char *drop = calloc((size_t)(p->n - from) + 1, 1);
	int dropped = -1, w;

	if (cnt == NULL || open == NULL || read == NULL || drop == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	dropped = 0;
	for (int i = 0; i < p->n; i++)
		if (p->steps[i].op == PLAN_COMPUTE)
			cnt[p->steps[i].node]++;
	for (int v = 0; v < g->n; v++)
		open[v] = -1;
	for (int i = from; i < p->n; i++) {
		int v = p->steps[i].node;

		/* An offload reads the value; a fetch makes it without a
		 * compute to drop. */
		if (p->steps[i].op == PLAN_OFFLOAD) {
			read[v] = 1;
			continue;
		}
		if (p->steps[i].op == PLAN_FETCH) {
			open[v] = -1;
			continue;
		}
		if (p->steps[i].op == PLAN_COMPUTE) {
			for (int e = g->dep_off[v]; e < g->dep_off[v + 1]; e++)
				read[g->deps[e]] = 1;
			open[v] = i;
			read[v] = 0;
			continue;
		}
		if (open[v] >= 0 && !read[v] && cnt[v] > 1) {
			drop[open[v] - from] = drop[i - from] = 1;
			cnt[v]--;
			dropped++;
		}
		open[v] = -1;
	}
	for (int v = 0; v < g->n; v++)
		if (open[v] >= 0 && !read[v] && cnt[v] > 1) {
			drop[open[v] - from] = 1;
			cnt[v]--;
			dropped++;
		}
	w = from;
	for (int i = from; i < p->n; i++)
		if (!drop[i - from])
			p->steps[w++] = p->steps[i];
	p->n = w;
out:
	free(cnt);
	free(open);
	free(read);
	free(drop);
	return dropped;
}

/* Moves each fetch of p as early as the budget lets its memory be held
 * (mem: the memory after each step, kept up to date), never before the
 * last step before it on the same value (the free of its device copy). */
static void hoist_fetches(const struct graph *g, struct plan *p, uint64_t budget,
			  uint64_t *mem)
{
	for (int j = 0; j < p->n; j++) {
		struct plan_step f = p->steps[j];
		uint64_t mv = g->nodes[f.node].memory, before;
		int k = j;

		if (f.op != PLAN_FETCH || mv > budget)
			continue;
		for (;;) {
			if (k == 0 || p->steps[k - 1].node == f.node || mem[k - 1] > budget - mv)
				break;
			before = k >= 2 ? mem[k - 2] : g->fixed_memory;
			if (before > budget - mv)
				break;
			k--;
		}
		if (k == j)
			continue;
		before = k >= 1 ? mem[k - 1] : g->fixed_memory;
		for (int i = j; i > k; i--) {
			p->steps[i] = p->steps[i - 1];
			mem[i] = mem[i - 1] + mv;
		}
		p->steps[k] = f;
		mem[k] = before + mv;
	}
}

/* A copy of p's steps; NULL when out of memory. */
static struct plan *steps_copy(const struct plan *p)
{
	struct plan *c = plan_new();

	for (int i = 0; c && i < p->n; i++)
		if (plan_push(c, (enum plan_op)p->steps[i].op, p->steps[i].node, -1)) {
			plan_free(c);
			c = NULL;
		}
	return c;
}

/* q replayed in time at o->copy's rates, with its fetches moved early
 * when that is faster; its figures set. 0, DTR_NO_PLAN when it is over
 * the host budget, or -1 with err set. */
static int settle_in_time(const struct graph *g, uint64_t budget, const struct sim_copy *copy,
			  struct plan *q, struct sim_result *res, struct cm_error *err)
{
	struct sim_trace tr = { .memory = malloc(((size_t)q->n + 1) * sizeof(uint64_t)) };
	struct sim_result rh;
	struct plan *h = NULL;
	int r = -1;

	if (tr.memory == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (plan_simulate_copies(g, q, budget, copy, res, &tr, err))
		goto out;
	if (!res->valid || res->peak > budget) {
		cm_errorf(err, "dtr: internal error: the plan with copies does not replay: %s",
			  res->why);
		goto out;
	}
	if (plan_first_copy(q) >= 0) {
		if ((h = steps_copy(q)) == NULL) {
			cm_errorf(err, "out of memory");
			goto out;
		}
		hoist_fetches(g, h, budget, tr.memory);
		if (plan_simulate_copies(g, h, budget, copy, &rh, NULL, err))
			goto out;
		if (!rh.valid || rh.peak > budget) {
			cm_errorf(err, "dtr: internal error: moving fetches early broke the "
				  "plan: %s", rh.why);
			goto out;
		}
		/* In units of cost, where num.h's tolerance is relative. */
		if (rh.fits && num_lt(rh.time / copy->seconds_per_cost,
				      res->time / copy->seconds_per_cost)) {
			struct plan_step *st = q->steps;
			int n = q->n, cap = q->cap;

			q->steps = h->steps;
			q->n = h->n;
			q->cap = h->cap;
			h->steps = st;
			h->n = n;
			h->cap = cap;
			*res = rh;
		}
	}
	q->has_time = 1;
	q->time = res->time;
	q->wait = res->wait;
	q->host_peak = res->host_peak;
	r = res->fits ? 0 : DTR_NO_PLAN;
out:
	free(tr.memory);
	plan_free(h);
	return r;
}

/* One heuristic, pruned and replayed (in time with o->copy; share >= 0:
 * evictions may offload, docs/dtr.md): 0 with the plan in q, DTR_NO_PLAN,
 * or -1 with err set. */
static int plan_one(const struct graph *g, uint64_t budget, const struct dtr_opts *o,
		    int heuristic, double share, struct plan *q, struct cm_error *err)
{
	struct sim_result res;
	int r;

	plan_clear(q);
	q->has_time = 0;
	r = run_one(g, budget, o, heuristic, share, q);
	if (r < 0)
		return cm_errorf(err, "out of memory");
	if (r == DTR_DIVERGED)
		return cm_errorf(err, "dtr: %s: internal error: the pick differs from a scan's",
				 dtr_heuristic_names[heuristic]);
	if (r)
		return r;
	if (!o->no_prune && dtr_prune(g, q, 0, err) < 0)
		return -1;
	if (o->copy)
		r = settle_in_time(g, budget, o->copy, q, &res, err);
	else if (plan_simulate(g, q, budget, &res, err))
		return -1;
	else if (!res.fits)
		return cm_errorf(err, "dtr: %s: internal error: the plan does not replay: %s",
				 dtr_heuristic_names[heuristic], res.why);
	if (r)
		return r;
	q->cost = res.cost;
	q->peak = res.peak;
	return 0;
}

/* 1 when a's time is shorter than b's, compared in units of cost, where
 * num.h's tolerance is relative (a step of microseconds is not within
 * it). */
static int faster(const struct plan *a, const struct plan *b, const struct sim_copy *c)
{
	return num_lt(a->time / c->seconds_per_cost, b->time / c->seconds_per_cost);
}

/* The parts of a fetch's time counted as exposed in the offload score,
 * one run each (-1: no offload). */
static const double shares[] = { -1, 1, 0 };
#define NSHARES ((int)(sizeof(shares) / sizeof(shares[0])))

int dtr_plan(const struct graph *g, uint64_t budget, const struct dtr_opts *o,
	     struct plan *p, struct cm_error *err)
{
	static const struct dtr_opts defaults = { .heuristic = DTR_BEST };
	struct plan *q = plan_new(), *best = plan_new();
	int r = -1, h0, h1;

	if (o == NULL)
		o = &defaults;
	if (q == NULL || best == NULL) {
		cm_errorf(err, "out of memory");
		goto out;
	}
	if (o->heuristic < 0 || o->heuristic >= DTR_NHEURISTICS) {
		cm_errorf(err, "dtr: no heuristic %d", o->heuristic);
		goto out;
	}
	h0 = o->heuristic == DTR_BEST ? 0 : o->heuristic;
	h1 = o->heuristic == DTR_BEST ? DTR_BEST : o->heuristic + 1;
	r = DTR_NO_PLAN;
	/* With a bandwidth, the runs without copies first (so that the
	 * answer is never slower than theirs), then with offload at each
	 * share of a fetch counted as exposed; the fastest wins. */
	for (int t = 0; t < 2 * (h1 - h0) * (o->copy ? NSHARES : 1); t++) {
		struct dtr_opts ot = *o;
		int h = h0 + (t / 2) % (h1 - h0), rh;
		double share = shares[t / (2 * (h1 - h0))];

		/* Best of all: each heuristic with either dead-value policy. */
		if (t % 2 && o->heuristic != DTR_BEST)
			continue;
		if ((o->deadline > 0 && cm_clock() > o->deadline) || stop_requested())
			break;
		ot.keep_dead = t % 2 ? !o->keep_dead : o->keep_dead;
		rh = plan_one(g, budget, &ot, h, share, q, err);

		if (rh < 0) {
			r = -1;
			goto out;
		}
		if (rh == 0 && (r != 0 || (o->copy ? faster(q, best, o->copy)
						  : num_lt(q->cost, best->cost)))) {
			struct plan *sw = best;

			best = q;
			q = sw;
			r = 0;
		}
	}
	if (r)
		goto out;
	if (p->n == 0) {
		p->cost = best->cost;
		p->peak = best->peak;
		p->budget = budget;
		p->has_time = best->has_time;
		p->time = best->time;
		p->wait = best->wait;
		p->host_peak = best->host_peak;
		snprintf(p->strategy, sizeof(p->strategy), "dtr");
	}
	for (int i = 0; i < best->n; i++)
		if (plan_push(p, best->steps[i].op, best->steps[i].node, -1)) {
			p->n -= i;
			r = cm_errorf(err, "out of memory");
			goto out;
		}
out:
	plan_free(q);
	plan_free(best);
	return r;
}

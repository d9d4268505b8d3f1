/*
 * sched/place: placement policies over a flat array of GPUs grouped by node.
 *
 * exclusive   whole idle GPUs, the first that exist, in index order
 * first-fit   the first node, in index order, with enough GPUs that fit
 * best-fit    the GPUs left with the least free memory (a node's other GPUs
 *             break ties: the fuller node first)
 * fgd         fragmentation gradient descent (Weng et al., "Beware of
 *             Fragmentation: Scheduling GPU-Sharing Workloads with
 *             Fragmentation Gradient Descent", USENIX ATC 2023, section 4):
 *             a node's fragmentation measured by a request m, F_n(m), is the
 *             free GPU it cannot use: all of it when m cannot run there at
 *             all, otherwise the free share of each GPU too small for m.  The
 *             node's fragmentation for the expected workload M is
 *             F_n(M) = sum_m p_m F_n(m); a request goes where F(M) grows the
 *             least.  A node's CPU counts when the GPUs point at a CPU
 *             counter (the simulator); host memory is not modelled.
 * gpuwise     fgd's growth of fragmentation, with each expected request
 *             weighed by the GPUs it asks for (see GPUWISE_SIZE_EXPONENT),
 *             then best-fit among the placements that grow it equally
 *             (within 1e-9 GPU), then the fuller node.  Without a demand it
 *             is best-fit.
 */
#include "sched/place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const char *const policy_names[] = {
	[SCHED_POLICY_EXCLUSIVE] = "exclusive",
	[SCHED_POLICY_FIRST_FIT] = "first-fit",
	[SCHED_POLICY_BEST_FIT] = "best-fit",
	[SCHED_POLICY_FGD] = "fgd",
	[SCHED_POLICY_GPUWISE] = "gpuwise",
};

const char *sched_policy_name(sched_policy p)
{
	if ((size_t)p < sizeof policy_names / sizeof policy_names[0])
		return policy_names[p];
	return "?";
}

int sched_policy_parse(const char *name, sched_policy *p)
{
	for (size_t i = 0; i < sizeof policy_names / sizeof policy_names[0]; i++)
		if (strcmp(name, policy_names[i]) == 0) {
			*p = (sched_policy)i;
			return 0;
		}
	return -1;
}

uint64_t sched_need_bytes(const sched_gpu *g, const sched_req *r)
{
	uint64_t raw = r->vram_bytes;
	if (r->gpu_milli > 0 && r->gpu_milli < 1000)
		raw = (uint64_t)((unsigned __int128)g->mem_total_bytes * r->gpu_milli / 1000);
	if (g->n_slots) {
		/* a request over every size takes the whole GPU */
		for (size_t i = 0; i < g->n_slots; i++)
			if (g->slot_bytes[i] >= raw)
				return g->slot_bytes[i] < g->mem_total_bytes ? g->slot_bytes[i] : g->mem_total_bytes;
		return raw > g->mem_total_bytes ? raw : g->mem_total_bytes;
	}
	return raw + g->context_bytes;
}

static bool usable(const sched_gpu *g)
{
	return !g->unavailable && !g->exclusive;
}

static bool idle(const sched_gpu *g)
{
	return usable(g) && g->n_jobs == 0;
}

static bool cpu_fits(const sched_gpu *g, const sched_req *r)
{
	return !g->node_cpu_free_milli || r->cpu_milli == 0 || *g->node_cpu_free_milli >= r->cpu_milli;
}

/* ---- the expected workload, prepared as look-up tables ------------------ */

#define GAPS 1001     /* free share of a GPU in thousandths, 0..1000 */
#define MAX_K 64      /* GPUs a whole request may ask for */

typedef struct {
	uint64_t cpu;
	uint64_t bytes;
	uint32_t milli;
	int k;
	double w;
} dtype;

/* One weighting of the demand (by request count, or by GPUs asked for). */
typedef struct {
	bool known;
	/* shared requests given as a share, by CPU ascending */
	uint64_t *f_cpu;
	size_t n_f;
	double *f_pfx;   /* f_pfx[j]: weight of the first j */
	double *f_tab;   /* f_tab[j * GAPS + x]: of the first j, weight of shares > x */
	double p_f;
	/* shared requests given in bytes, ascending (their CPU is not weighed) */
	uint64_t *b_bytes;
	double *b_suf;
	size_t n_b;
	/* whole-GPU requests, by CPU ascending */
	uint64_t *w_cpu;
	size_t n_w;
	double *w_tab;   /* w_tab[j * (MAX_K + 1) + k]: of the first j, weight of those asking <= k GPUs */
	double p_w;
	/* without tables (a demand not prepared, as the daemon passes it): the
	 * requests themselves, looked at one by one; cheaper for a few */
	dtype *f, *w;
	size_t n_f_loop, n_w_loop;
	bool tables;
} prep;

struct sched_prep {
	prep by_count, by_gpus;
	bool have_count, have_gpus;
};

static int cmp_cpu(const void *a, const void *b)
{
	const dtype *x = a, *y = b;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int cmp_bytes(const void *a, const void *b)
{
	const dtype *x = a, *y = b;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/*
 * The gpuwise policy weighs each expected request by (GPUs it asks for)^0.25
 * instead of by its count alone: the allocation ratio counts GPUs, so a
 * placement that strands an 8-GPU request costs more than one that strands
 * a tenth of a GPU, but big requests are rare, and a full weight (exponent
 * 1) overrates them.  0.25 was chosen on the openb trace with seeds 1-10 of
 * `gpuwise sim` (0, 0.25, 0.5, 0.75, 1, 1.5 and 2 tried) and checked on
 * seeds 11-30, which it had not seen: at 100% arrived demand it allocated
 * more than fgd on each of the 30 seeds.
 */
#define GPUWISE_SIZE_EXPONENT 0.25

static bool req_whole(const sched_req *r)
{
	return r->exclusive || r->gpu_milli >= 1000;
}

/* GPUs a request would allocate: n_gpus times its share (1 when whole or in bytes). */
static double req_gpus(const sched_req *r)
{
	double share = req_whole(r) || r->gpu_milli == 0 ? 1.0 : r->gpu_milli / 1000.0;
	return r->n_gpus * share;
}

static void prep_build(prep *p, const sched_demand *d, bool by_gpus, bool tables)
{
	memset(p, 0, sizeof *p);
	if (!d || d->n == 0 || !d->reqs || !d->weight)
		return;
	p->known = true;
	dtype *f = xcalloc(d->n, sizeof *f), *b = xcalloc(d->n, sizeof *b), *w = xcalloc(d->n, sizeof *w);
	for (size_t i = 0; i < d->n; i++) {
		const sched_req *r = &d->reqs[i];
		double wt = d->weight[i] > 0 ? d->weight[i] : 0;
		if (by_gpus) /* a request weighs what it would allocate */
			wt *= pow(req_gpus(r), GPUWISE_SIZE_EXPONENT);
		dtype t = {.cpu = r->cpu_milli, .bytes = r->vram_bytes, .milli = r->gpu_milli, .k = r->n_gpus, .w = wt};
		if (req_whole(r)) {
			w[p->n_w++] = t;
			p->p_w += wt;
		} else if (r->gpu_milli > 0) {
			f[p->n_f++] = t;
			p->p_f += wt;
		} else {
			b[p->n_b++] = t;
		}
	}
	qsort(f, p->n_f, sizeof *f, cmp_cpu);
	qsort(b, p->n_b, sizeof *b, cmp_bytes);
	qsort(w, p->n_w, sizeof *w, cmp_cpu);
	p->tables = tables;
	if (!tables) {
		p->f = f;
		p->w = w;
		f = w = NULL;
		p->n_f_loop = p->n_f;
		p->n_w_loop = p->n_w;
		p->n_f = p->n_w = 0; /* no table rows */
	}
	p->f_cpu = xcalloc(p->n_f + 1, sizeof *p->f_cpu);
	p->f_pfx = xcalloc(p->n_f + 1, sizeof *p->f_pfx);
	p->f_tab = xcalloc((p->n_f + 1) * GAPS, sizeof *p->f_tab);
	for (size_t j = 0; j < p->n_f; j++) {
		p->f_cpu[j] = f[j].cpu;
		p->f_pfx[j + 1] = p->f_pfx[j] + f[j].w;
		double *prev = &p->f_tab[j * GAPS], *row = &p->f_tab[(j + 1) * GAPS];
		for (int x = 0; x < GAPS; x++)
			row[x] = prev[x] + (f[j].milli > (uint32_t)x ? f[j].w : 0);
	}
	p->b_bytes = xcalloc(p->n_b + 1, sizeof *p->b_bytes);
	p->b_suf = xcalloc(p->n_b + 1, sizeof *p->b_suf);
	for (size_t j = p->n_b; j-- > 0;) {
		p->b_bytes[j] = b[j].bytes;
		p->b_suf[j] = p->b_suf[j + 1] + b[j].w;
	}
	p->w_cpu = xcalloc(p->n_w + 1, sizeof *p->w_cpu);
	p->w_tab = xcalloc((p->n_w + 1) * (MAX_K + 1), sizeof *p->w_tab);
	for (size_t j = 0; j < p->n_w; j++) {
		p->w_cpu[j] = w[j].cpu;
		double *prev = &p->w_tab[j * (MAX_K + 1)], *row = &p->w_tab[(j + 1) * (MAX_K + 1)];
		for (int k = 0; k <= MAX_K; k++)
			row[k] = prev[k] + (w[j].k <= k ? w[j].w : 0);
	}
	free(f);
	free(b);
	free(w);
}

static void prep_free(prep *p)
{
	free(p->f);
	free(p->w);
	free(p->f_cpu);
	free(p->f_pfx);
	free(p->f_tab);
	free(p->b_bytes);
	free(p->b_suf);
	free(p->w_cpu);
	free(p->w_tab);
	memset(p, 0, sizeof *p);
}

void sched_demand_prepare(sched_demand *d)
{
	if (!d->prep)
		d->prep = xcalloc(1, sizeof *d->prep);
}

void sched_demand_release(sched_demand *d)
{
	if (!d->prep)
		return;
	prep_free(&d->prep->by_count);
	prep_free(&d->prep->by_gpus);
	free(d->prep);
	d->prep = NULL;
}

/* The tables of d weighted one way; *tmp holds them when d is not prepared. */
static const prep *prep_get(const sched_demand *d, bool by_gpus, prep *tmp)
{
	if (d && d->prep) {
		prep *p = by_gpus ? &d->prep->by_gpus : &d->prep->by_count;
		bool *have = by_gpus ? &d->prep->have_gpus : &d->prep->have_count;
		if (!*have) {
			prep_build(p, d, by_gpus, true);
			*have = true;
		}
		return p;
	}
	prep_build(tmp, d, by_gpus, false);
	return tmp;
}

/* How many of the first entries of a CPU-ascending array ask <= cpu. */
static size_t upto(const uint64_t *a, size_t n, uint64_t cpu)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a[mid] > cpu)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Where a node stands with respect to the demand's CPU requests. */
typedef struct {
	size_t j_f, j_w;  /* table rows: requests that fit the node's CPU */
	uint64_t cpu;     /* the node's free CPU (UINT64_MAX: not modelled) */
} cpu_cut;

static cpu_cut cut_at(const prep *p, uint64_t cpu)
{
	return (cpu_cut){upto(p->f_cpu, p->n_f, cpu), upto(p->w_cpu, p->n_w, cpu), cpu};
}

static cpu_cut cut_of(const prep *p, const uint64_t *cpu_free)
{
	return cut_at(p, cpu_free ? *cpu_free : UINT64_MAX);
}

static cpu_cut cut_after(const prep *p, const uint64_t *cpu_free, uint64_t cpu_taken)
{
	if (!cpu_free)
		return cut_at(p, UINT64_MAX);
	return cut_at(p, *cpu_free > cpu_taken ? *cpu_free - cpu_taken : 0);
}

static double free_share(uint64_t free, const sched_gpu *g)
{
	return g->mem_total_bytes ? (double)free / (double)g->mem_total_bytes : 0;
}

static int gap_milli(uint64_t free, const sched_gpu *g)
{
	if (!g->mem_total_bytes)
		return 0;
	uint64_t x = free < UINT64_MAX / 1000 ? free * 1000 / g->mem_total_bytes
					      : (uint64_t)((unsigned __int128)free * 1000 / g->mem_total_bytes);
	return x > 1000 ? 1000 : (int)x;
}

/*
 * One GPU's part of F_n(M): its free share times the weight of the
 * requests that cannot use it: shared ones whose CPU the node lacks or
 * whose share exceeds its free memory (shares compared in thousandths),
 * and whole ones, which the node term gives back when the node has the
 * CPU and the idle GPUs for them.
 */
/*
 * With standard sizes a shared request takes a whole slot, so what a GPU
 * can still give a request is its largest slot that fits in its free
 * memory (all of it when the GPU is idle).
 */
static uint64_t slot_free(const sched_gpu *g, uint64_t free)
{
	if (!g->n_slots || free >= g->mem_total_bytes)
		return free;
	uint64_t best = 0;
	for (size_t i = 0; i < g->n_slots; i++)
		if (g->slot_bytes[i] <= free && g->slot_bytes[i] < g->mem_total_bytes)
			best = g->slot_bytes[i];
	return best;
}

static double gpu_term(const prep *p, cpu_cut c, const sched_gpu *g, uint64_t free_bytes, bool is_usable)
{
	if (!is_usable || free_bytes == 0)
		return 0;
	/* the free share counts; what requests can use of it is by slots */
	uint64_t free = slot_free(g, free_bytes);
	double w;
	if (p->tables) {
		w = p->p_f - p->f_pfx[c.j_f] + p->f_tab[c.j_f * GAPS + (size_t)gap_milli(free, g)];
	} else {
		w = 0;
		int gap = gap_milli(free, g);
		for (size_t i = 0; i < p->n_f_loop; i++)
			if (p->f[i].cpu > c.cpu || p->f[i].milli > (uint32_t)gap)
				w += p->f[i].w;
	}
	size_t lo = 0, hi = p->n_b;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->b_bytes[mid] > free)
			hi = mid;
		else
			lo = mid + 1;
	}
	w += p->b_suf[lo];
	return free_share(free_bytes, g) * (w + p->p_w);
}

/* The node term: minus the idle share that the whole requests it can run could use. */
static double node_term(const prep *p, cpu_cut c, int n_idle, double idle_sum)
{
	if (!p->tables) {
		double w = 0;
		for (size_t i = 0; i < p->n_w_loop; i++)
			if (p->w[i].cpu <= c.cpu && p->w[i].k <= n_idle)
				w += p->w[i].w;
		return -idle_sum * w;
	}
	int k = n_idle > MAX_K ? MAX_K : n_idle;
	return -idle_sum * p->w_tab[c.j_w * (MAX_K + 1) + (size_t)k];
}

double sched_fragmentation(const sched_gpu *gpus, size_t n, const sched_demand *demand)
{
	prep tmp;
	const prep *p = prep_get(demand, false, &tmp);
	double f = 0;
	if (!p->known)
		goto out;
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		int n_idle = 0;
		double idle_sum = 0;
		cpu_cut c = cut_of(p, gpus[lo].node_cpu_free_milli);
		for (hi = lo; hi < n && gpus[hi].node == gpus[lo].node; hi++) {
			const sched_gpu *g = &gpus[hi];
			f += gpu_term(p, c, g, g->mem_free_bytes, usable(g));
			if (idle(g)) {
				n_idle++;
				idle_sum += free_share(g->mem_free_bytes, g);
			}
		}
		f += node_term(p, c, n_idle, idle_sum);
	}
out:
	if (p == &tmp)
		prep_free(&tmp);
	return f;
}

/* ---- placement ----------------------------------------------------------- */

#define N_KEYS 3
typedef struct {
	double key[N_KEYS];   /* smaller is better, compared in order */
} score;

static int score_cmp(const score *a, const score *b)
{
	for (int i = 0; i < N_KEYS; i++) {
		if (a->key[i] < b->key[i] - 1e-9)
			return -1;
		if (a->key[i] > b->key[i] + 1e-9)
			return 1;
	}
	return 0;
}

typedef struct {
	int idx;
	double delta;        /* change of this GPU's term (after the node's CPU is taken) */
	double left;         /* free share it keeps */
	uint64_t left_bytes;
} cand;

static int cand_cmp_delta(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->delta < y->delta - 1e-12)
		return -1;
	if (x->delta > y->delta + 1e-12)
		return 1;
	return x->idx - y->idx;
}

static int cand_cmp_delta_left(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->delta < y->delta - 1e-12)
		return -1;
	if (x->delta > y->delta + 1e-12)
		return 1;
	if (x->left_bytes != y->left_bytes)
		return x->left_bytes < y->left_bytes ? -1 : 1;
	return x->idx - y->idx;
}

static int cand_cmp_left(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->left_bytes != y->left_bytes)
		return x->left_bytes < y->left_bytes ? -1 : 1;
	return x->idx - y->idx;
}

/*
 * A multi-GPU request prefers GPUs close to each other: all k on one NVLink
 * group, else under one PCIe switch, else on one NUMA node; within a level
 * the candidates keep the policy's order (scratch is sorted best first).
 * Moves the chosen k to the front of scratch; false (scratch untouched)
 * when no level has k candidates sharing a known value.
 */
static int topo_key(const sched_gpu *g, int level)
{
	return level == 0 ? g->nvlink_group : level == 1 ? g->pcie_switch : g->numa;
}

static bool prefer_close(const sched_gpu *gpus, cand *scratch, int n_c, int k)
{
	for (int level = 0; level < 3; level++) {
		/* the group whose k best members come earliest in the policy's order */
		int best_v = -1;
		long best_rank = -1;
		for (int a = 0; a < n_c; a++) {
			int v = topo_key(&gpus[scratch[a].idx], level);
			if (v < 0)
				continue;
			bool seen = false;
			for (int b = 0; b < a && !seen; b++)
				seen = topo_key(&gpus[scratch[b].idx], level) == v;
			if (seen)
				continue;
			int got = 0;
			long rank = 0;
			for (int b = a; b < n_c && got < k; b++)
				if (topo_key(&gpus[scratch[b].idx], level) == v) {
					got++;
					rank += b;
				}
			if (got == k && (best_rank < 0 || rank < best_rank)) {
				best_rank = rank;
				best_v = v;
			}
		}
		if (best_rank < 0)
			continue;
		/* stable partition: the group's members first, in order */
		cand *tmp = xcalloc((size_t)n_c, sizeof *tmp);
		int m = 0;
		for (int b = 0; b < n_c; b++)
			if (topo_key(&gpus[scratch[b].idx], level) == best_v)
				tmp[m++] = scratch[b];
		for (int b = 0; b < n_c; b++)
			if (topo_key(&gpus[scratch[b].idx], level) != best_v)
				tmp[m++] = scratch[b];
		memcpy(scratch, tmp, (size_t)n_c * sizeof *tmp);
		free(tmp);
		return true;
	}
	return false;
}

/*
 * Choose on node gpus[lo..hi) the GPUs for req under policy pol, into
 * chosen[0..n_gpus); fill *s with the placement's score.  Returns false
 * when the node cannot hold the request.
 */
static bool place_on_node(sched_policy pol, const prep *p, const sched_gpu *gpus, size_t lo, size_t hi,
			  const sched_req *req, bool whole, cand *scratch, int *chosen, score *s)
{
	int k = req->n_gpus, n_c = 0, n_idle = 0;
	double idle_sum = 0, node_free = 0, base = 0;
	const uint64_t *cpu = gpus[lo].node_cpu_free_milli;
	if (!cpu_fits(&gpus[lo], req))
		return false;
	for (size_t i = lo; i < hi && n_c < k; i++) /* cheap test before the scoring */
		if (whole ? idle(&gpus[i]) : usable(&gpus[i]) && gpus[i].mem_free_bytes >= sched_need_bytes(&gpus[i], req))
			n_c++;
	if (n_c < k)
		return false;
	n_c = 0;
	bool fgd = p->known && (pol == SCHED_POLICY_FGD || pol == SCHED_POLICY_GPUWISE);
	cpu_cut c0 = {0, 0, 0}, c1 = {0, 0, 0};
	if (fgd) {
		c0 = cut_of(p, cpu);
		c1 = cut_after(p, cpu, req->cpu_milli);
	}
	for (size_t i = lo; i < hi; i++) {
		const sched_gpu *g = &gpus[i];
		if (usable(g))
			node_free += free_share(g->mem_free_bytes, g);
		if (idle(g)) {
			n_idle++;
			idle_sum += free_share(g->mem_free_bytes, g);
		}
		double t1 = 0;
		if (fgd && usable(g)) {
			t1 = gpu_term(p, c1, g, g->mem_free_bytes, true);
			base += t1 - (c1.cpu == c0.cpu ? t1 : gpu_term(p, c0, g, g->mem_free_bytes, true));
		}
		uint64_t left;
		if (whole) {
			if (!idle(g))
				continue;
			left = 0;
		} else {
			uint64_t need = sched_need_bytes(g, req);
			if (!usable(g) || g->mem_free_bytes < need)
				continue;
			left = g->mem_free_bytes - need;
		}
		if ((pol == SCHED_POLICY_FIRST_FIT || pol == SCHED_POLICY_EXCLUSIVE) && n_c == k)
			continue;
		cand *cd = &scratch[n_c++];
		cd->idx = (int)i;
		cd->left_bytes = left;
		cd->left = free_share(left, g);
		cd->delta = fgd ? gpu_term(p, c1, g, left, !whole) - t1 : 0;
	}
	if (n_c < k)
		return false;
	if (pol == SCHED_POLICY_BEST_FIT)
		qsort(scratch, (size_t)n_c, sizeof *scratch, cand_cmp_left);
	else if (pol == SCHED_POLICY_FGD)
		qsort(scratch, (size_t)n_c, sizeof *scratch, cand_cmp_delta);
	else if (pol == SCHED_POLICY_GPUWISE)
		qsort(scratch, (size_t)n_c, sizeof *scratch, cand_cmp_delta_left);
	if (k >= 2 && pol != SCHED_POLICY_FIRST_FIT && pol != SCHED_POLICY_EXCLUSIVE)
		prefer_close(gpus, scratch, n_c, k);
	double delta = base, left = 0, left_bytes = 0, idle_taken = 0;
	int n_idle_taken = 0;
	for (int j = 0; j < k; j++) {
		const cand *cd = &scratch[j];
		chosen[j] = cd->idx;
		delta += cd->delta;
		left += cd->left;
		left_bytes += (double)cd->left_bytes;
		if (idle(&gpus[cd->idx])) {
			n_idle_taken++;
			idle_taken += free_share(gpus[cd->idx].mem_free_bytes, &gpus[cd->idx]);
		}
	}
	if (fgd)
		delta += node_term(p, c1, n_idle - n_idle_taken, idle_sum - idle_taken) -
			 node_term(p, c0, n_idle, idle_sum);
	memset(s, 0, sizeof *s);
	switch (pol) {
	case SCHED_POLICY_BEST_FIT:
		s->key[0] = left_bytes;
		s->key[1] = node_free - idle_taken;
		break;
	case SCHED_POLICY_FGD:
		s->key[0] = delta;
		break;
	case SCHED_POLICY_GPUWISE:
		s->key[0] = delta;
		s->key[1] = left;
		s->key[2] = node_free - idle_taken;
		break;
	default:
		break;
	}
	return true;
}

int sched_place(sched_policy p, const sched_gpu *gpus, size_t n, const sched_req *req,
		const sched_demand *demand, int *out_idx)
{
	if (!req || req->n_gpus < 1 || (size_t)req->n_gpus > n || (int)p < 0 || p > SCHED_POLICY_GPUWISE)
		return SCHED_EINVAL;
	bool whole = req->exclusive || p == SCHED_POLICY_EXCLUSIVE;
	bool scan_all = p == SCHED_POLICY_BEST_FIT || p == SCHED_POLICY_FGD || p == SCHED_POLICY_GPUWISE;
	prep tmp;
	const prep *pr = prep_get((p == SCHED_POLICY_FGD || p == SCHED_POLICY_GPUWISE) ? demand : NULL,
				  p == SCHED_POLICY_GPUWISE, &tmp);
	size_t max_node = 0;
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo; hi < n && gpus[hi].node == gpus[lo].node; hi++)
			;
		if (hi - lo > max_node)
			max_node = hi - lo;
	}
	cand *scratch = xcalloc(max_node, sizeof *scratch);
	int *chosen = xcalloc(max_node, sizeof *chosen);
	int rc = SCHED_ENOFIT;
	score best = {{0}};
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo; hi < n && gpus[hi].node == gpus[lo].node; hi++)
			;
		if (hi - lo < (size_t)req->n_gpus)
			continue;
		score s;
		if (!place_on_node(p, pr, gpus, lo, hi, req, whole, scratch, chosen, &s))
			continue;
		if (rc == 0 && score_cmp(&s, &best) >= 0)
			continue;
		best = s;
		memcpy(out_idx, chosen, (size_t)req->n_gpus * sizeof *out_idx);
		rc = 0;
		if (!scan_all)
			break;
	}
	free(scratch);
	free(chosen);
	if (pr == &tmp)
		prep_free(&tmp);
	return rc;
}

void sched_commit(sched_gpu *gpus, const sched_req *req, const int *idx)
{
	uint64_t *cpu = gpus[idx[0]].node_cpu_free_milli;
	if (cpu)
		*cpu -= req->cpu_milli <= *cpu ? req->cpu_milli : *cpu;
	for (int i = 0; i < req->n_gpus; i++) {
		sched_gpu *g = &gpus[idx[i]];
		g->n_jobs++;
		if (req->exclusive) {
			g->exclusive = true;
		} else {
			uint64_t need = sched_need_bytes(g, req);
			g->mem_free_bytes -= need <= g->mem_free_bytes ? need : g->mem_free_bytes;
		}
	}
}

void sched_uncommit(sched_gpu *gpus, const sched_req *req, const int *idx)
{
	uint64_t *cpu = gpus[idx[0]].node_cpu_free_milli;
	if (cpu)
		*cpu += req->cpu_milli;
	for (int i = 0; i < req->n_gpus; i++) {
		sched_gpu *g = &gpus[idx[i]];
		if (g->n_jobs > 0)
			g->n_jobs--;
		if (req->exclusive) {
			g->exclusive = false;
		} else {
			uint64_t need = sched_need_bytes(g, req);
			uint64_t room = g->mem_total_bytes - g->mem_free_bytes;
			g->mem_free_bytes += need <= room ? need : room;
		}
	}
}

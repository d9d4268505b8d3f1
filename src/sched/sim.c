/*
 * sched/sim: the placement simulator (see sim.h).
 */
#include "sched/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const double sim_marks_pct[SIM_N_MARKS] = {50, 80, 90, 100, 110, 120};

void sim_cluster_init(sim_cluster *c, const trace_pod *pods, size_t n_pods, const trace_node *nodes,
		      size_t n_nodes, bool with_cpu)
{
	memset(c, 0, sizeof *c);
	size_t n = 0;
	for (size_t i = 0; i < n_nodes; i++)
		n += (size_t)nodes[i].n_gpus;
	c->gpus = xcalloc(n ? n : 1, sizeof *c->gpus);
	if (with_cpu)
		c->node_cpu_milli = xcalloc(n_nodes ? n_nodes : 1, sizeof *c->node_cpu_milli);
	for (size_t i = 0; i < n_nodes; i++) {
		if (nodes[i].n_gpus == 0)
			continue;
		for (int j = 0; j < nodes[i].n_gpus; j++) {
			sched_gpu *g = &c->gpus[c->n_gpus++];
			g->node = (int)c->n_nodes;
			g->numa = g->nvlink_group = g->pcie_switch = -1;
			g->mem_total_bytes = g->mem_free_bytes = nodes[i].gpu_mem_bytes;
		}
		if (with_cpu)
			c->node_cpu_milli[c->n_nodes] = nodes[i].cpu_milli;
		c->n_nodes++;
		c->n_nodes_assumed += nodes[i].mem_assumed;
	}
	c->pods = pods;
	c->n_pods = n_pods;
	c->pod_type = xcalloc(n_pods ? n_pods : 1, sizeof *c->pod_type);
	size_t cap = 0;
	for (size_t i = 0; i < n_pods; i++) {
		const trace_pod *p = &pods[i];
		c->pod_type[i] = -1;
		if (p->n_gpus == 0)
			continue;
		sched_req r = {.n_gpus = p->n_gpus, .cpu_milli = with_cpu ? p->cpu_milli : 0};
		if (p->gpu_milli >= 1000)
			r.exclusive = true;
		else
			r.gpu_milli = p->gpu_milli;
		size_t t;
		for (t = 0; t < c->n_types; t++)
			if (c->types[t].n_gpus == r.n_gpus && c->types[t].exclusive == r.exclusive &&
			    c->types[t].gpu_milli == r.gpu_milli && c->types[t].cpu_milli == r.cpu_milli)
				break;
		if (t == c->n_types) {
			size_t cap2 = cap, cap3 = cap;
			c->types = xgrow(c->types, &cap, t + 1, sizeof *c->types);
			c->type_gpus = xgrow(c->type_gpus, &cap2, t + 1, sizeof *c->type_gpus);
			c->weight = xgrow(c->weight, &cap3, t + 1, sizeof *c->weight);
			c->types[t] = r;
			c->type_gpus[t] = p->n_gpus * (p->gpu_milli / 1000.0);
			c->weight[t] = 0;
			c->n_types++;
		}
		c->weight[t] += 1;
		c->pod_type[i] = (int)t;
		c->n_gpu_pods++;
		c->demand_gpus += c->type_gpus[t];
	}
	for (size_t t = 0; t < c->n_types; t++)
		c->weight[t] /= (double)c->n_gpu_pods;
}

void sim_cluster_release(sim_cluster *c)
{
	free(c->gpus);
	free(c->node_cpu_milli);
	free(c->types);
	free(c->type_gpus);
	free(c->weight);
	free(c->pod_type);
	memset(c, 0, sizeof *c);
}

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): the same draws on every platform. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rng_below(uint64_t *s, size_t n)
{
	return (size_t)(rng_next(s) % n); /* bias < n / 2^64: negligible */
}

/* A fresh copy of the cluster's GPUs, pointing at a fresh copy of its CPU counters. */
static sched_gpu *cluster_copy(const sim_cluster *c, uint64_t **cpu)
{
	sched_gpu *g = xcalloc(c->n_gpus, sizeof *g);
	memcpy(g, c->gpus, c->n_gpus * sizeof *g);
	*cpu = NULL;
	if (c->node_cpu_milli) {
		*cpu = xcalloc(c->n_nodes, sizeof **cpu);
		memcpy(*cpu, c->node_cpu_milli, c->n_nodes * sizeof **cpu);
		for (size_t i = 0; i < c->n_gpus; i++)
			g[i].node_cpu_free_milli = &(*cpu)[g[i].node];
	}
	return g;
}

void sim_inflate(const sim_cluster *c, sched_policy p, uint64_t seed, double stop_pct, sim_result *r)
{
	memset(r, 0, sizeof *r);
	r->fail_arrived_pct = r->fail_alloc_pct = -1;
	if (stop_pct > SIM_CURVE_MAX)
		stop_pct = SIM_CURVE_MAX;
	if (c->n_gpus == 0 || c->n_gpu_pods == 0)
		return;
	size_t *gpu_pods = xcalloc(c->n_gpu_pods, sizeof *gpu_pods);
	for (size_t i = 0, k = 0; i < c->n_pods; i++)
		if (c->pod_type[i] >= 0)
			gpu_pods[k++] = i;
	uint64_t *cpu;
	sched_gpu *g = cluster_copy(c, &cpu);
	int idx[64];
	sched_demand demand = {.reqs = c->types, .weight = c->weight, .n = c->n_types};
	sched_demand_prepare(&demand);
	double cap = (double)c->n_gpus, arrived = 0, alloc = 0;
	int mark = 0;
	uint64_t rng = seed;
	r->curve_alloc_pct[0] = 0;
	r->n_curve = 1;
	while (arrived < stop_pct * cap / 100) {
		int t = c->pod_type[gpu_pods[rng_below(&rng, c->n_gpu_pods)]];
		sched_req req = c->types[t];
		if (p == SCHED_POLICY_EXCLUSIVE)
			req.exclusive = true;
		arrived += c->type_gpus[t];
		r->n_arrived++;
		if (sched_place(p, g, c->n_gpus, &req, &demand, idx) == 0) {
			sched_commit(g, &req, idx);
			alloc += c->type_gpus[t];
			r->n_placed++;
		} else if (r->fail_arrived_pct < 0) {
			r->fail_arrived_pct = 100 * arrived / cap;
			r->fail_alloc_pct = 100 * alloc / cap;
		}
		double a_pct = 100 * arrived / cap;
		while (mark < SIM_N_MARKS && a_pct >= sim_marks_pct[mark]) {
			r->alloc_pct[mark] = 100 * alloc / cap;
			r->frag_pct[mark] = 100 * sched_fragmentation(g, c->n_gpus, &demand) / cap;
			r->placed_pct[mark] = 100.0 * (double)r->n_placed / (double)r->n_arrived;
			mark++;
		}
		while (r->n_curve <= SIM_CURVE_MAX && r->n_curve * SIM_CURVE_STEP_PCT <= a_pct)
			r->curve_alloc_pct[r->n_curve++] = 100 * alloc / cap;
	}
	for (; mark < SIM_N_MARKS; mark++)
		r->alloc_pct[mark] = r->frag_pct[mark] = r->placed_pct[mark] = NAN;
	r->final_arrived_pct = 100 * arrived / cap;
	r->final_alloc_pct = 100 * alloc / cap;
	sched_demand_release(&demand);
	free(cpu);
	free(g);
	free(gpu_pods);
}

typedef struct {
	double t;
	size_t pod;
	bool arrive;
} event;

static int event_cmp(const void *a, const void *b)
{
	const event *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->arrive != y->arrive)
		return x->arrive ? 1 : -1; /* departures first */
	return (x->pod > y->pod) - (x->pod < y->pod);
}

void sim_replay(const sim_cluster *c, sched_policy p, sim_replay_result *r)
{
	memset(r, 0, sizeof *r);
	if (c->n_gpus == 0 || c->n_gpu_pods == 0)
		return;
	event *ev = xcalloc(2 * c->n_gpu_pods, sizeof *ev);
	size_t n_ev = 0;
	for (size_t i = 0; i < c->n_pods; i++) {
		if (c->pod_type[i] < 0)
			continue;
		const trace_pod *pd = &c->pods[i];
		double start = pd->sched_s > pd->create_s ? pd->sched_s : pd->create_s;
		ev[n_ev++] = (event){start, i, true};
		if (pd->delete_s >= start)
			ev[n_ev++] = (event){pd->delete_s, i, false};
	}
	qsort(ev, n_ev, sizeof *ev, event_cmp);
	uint64_t *cpu;
	sched_gpu *g = cluster_copy(c, &cpu);
	int *placed = xcalloc(c->n_pods, sizeof(int) * 64);
	bool *on = xcalloc(c->n_pods, sizeof *on);
	sched_demand demand = {.reqs = c->types, .weight = c->weight, .n = c->n_types};
	sched_demand_prepare(&demand);
	double cap = (double)c->n_gpus, requested = 0, alloc = 0, area = 0;
	double t0 = n_ev ? ev[0].t : 0, last = t0;
	for (size_t e = 0; e < n_ev; e++) {
		size_t i = ev[e].pod;
		int t = c->pod_type[i];
		sched_req req = c->types[t];
		if (p == SCHED_POLICY_EXCLUSIVE)
			req.exclusive = true;
		area += alloc * (ev[e].t - last);
		last = ev[e].t;
		if (ev[e].arrive) {
			r->n_pods++;
			requested += c->type_gpus[t];
			if (sched_place(p, g, c->n_gpus, &req, &demand, &placed[i * 64]) == 0) {
				sched_commit(g, &req, &placed[i * 64]);
				on[i] = true;
				alloc += c->type_gpus[t];
				r->n_placed++;
			} else {
				r->n_failed++;
			}
		} else {
			requested -= c->type_gpus[t];
			if (on[i]) {
				sched_uncommit(g, &req, &placed[i * 64]);
				on[i] = false;
				alloc -= c->type_gpus[t];
			}
		}
		if (requested > r->peak_requested_gpus)
			r->peak_requested_gpus = requested;
		if (100 * alloc / cap > r->peak_alloc_pct)
			r->peak_alloc_pct = 100 * alloc / cap;
	}
	r->span_s = last - t0;
	r->mean_alloc_pct = r->span_s > 0 ? 100 * area / r->span_s / cap : 0;
	sched_demand_release(&demand);
	free(ev);
	free(cpu);
	free(g);
	free(placed);
	free(on);
}

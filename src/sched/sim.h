/*
 * sched/sim: trace-driven placement simulation through sched_place, the
 * same code the queue daemon uses.  Two modes:
 * - inflation (Weng et al., ATC 2023, section 6.1): GPU pods drawn from the
 *   trace with replacement, with a fixed seed, arrive one by one and never
 *   depart, until the GPU demand that has arrived reaches stop_pct of the
 *   cluster's GPUs; a pod that cannot be placed is dropped;
 * - replay: every GPU pod at its own times (from creation_time, or
 *   scheduled_time when later, to deletion_time).
 * Never prints.
 */
#ifndef GW_SCHED_SIM_H
#define GW_SCHED_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/place.h"
#include "sched/trace.h"

#define SIM_N_MARKS 6
extern const double sim_marks_pct[SIM_N_MARKS];   /* 50 80 90 100 110 120 */
#define SIM_CURVE_STEP_PCT 1.0                    /* one curve point per 1% arrived */
#define SIM_CURVE_MAX 200

typedef struct sim_cluster {
	sched_gpu *gpus;          /* grouped by node, in node-list order */
	uint64_t *node_cpu_milli; /* per node with GPUs; NULL when CPU is not modelled */
	size_t n_gpus;
	size_t n_nodes;           /* nodes with GPUs */
	size_t n_nodes_assumed;   /* of them, of a model whose memory is assumed */
	sched_req *types;         /* distinct GPU requests of the pod list */
	double *type_gpus;        /* the GPUs each asks for (n_gpus x share) */
	double *weight;           /* share of the GPU pods of each type */
	size_t n_types;
	int *pod_type;            /* per pod: index into types, -1 CPU-only */
	size_t n_pods, n_gpu_pods;
	const trace_pod *pods;
	double demand_gpus;       /* GPUs the whole pod list asks for */
} sim_cluster;

/* with_cpu: pods also ask their cpu_milli of the node (as in the FGD paper). */
void sim_cluster_init(sim_cluster *c, const trace_pod *pods, size_t n_pods, const trace_node *nodes,
		      size_t n_nodes, bool with_cpu);
void sim_cluster_release(sim_cluster *c);

typedef struct sim_result {
	double alloc_pct[SIM_N_MARKS];   /* GPUs allocated to pods / capacity */
	double frag_pct[SIM_N_MARKS];    /* fragmented GPUs (F(M)) / capacity */
	double placed_pct[SIM_N_MARKS];  /* arrived pods placed */
	double fail_arrived_pct;         /* arrived demand at the first failed placement; -1 none */
	double fail_alloc_pct;           /* allocation then */
	double curve_alloc_pct[SIM_CURVE_MAX + 1]; /* at 0, 1, 2 ... % arrived */
	int n_curve;
	size_t n_arrived, n_placed;
	double final_arrived_pct, final_alloc_pct;
} sim_result;

/* One inflation run of policy p to stop_pct (at most SIM_CURVE_MAX). */
void sim_inflate(const sim_cluster *c, sched_policy p, uint64_t seed, double stop_pct, sim_result *r);

typedef struct sim_replay_result {
	size_t n_pods, n_placed, n_failed;
	double peak_requested_gpus;      /* most GPUs asked for by live pods at once */
	double peak_alloc_pct;           /* most GPUs allocated at once / capacity */
	double span_s;                   /* first arrival to last departure */
	double mean_alloc_pct;           /* time-weighted */
} sim_replay_result;

void sim_replay(const sim_cluster *c, sched_policy p, sim_replay_result *r);

#endif

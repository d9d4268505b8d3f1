/*
 * sched/place: memory-aware GPU placement, one piece of code shared by the
 * queue daemon (one server, a handful of GPUs) and the trace simulator
 * (a cluster of thousands).  Pure logic over plain structs: never prints,
 * never touches a socket or a file.
 *
 * Contract (fields may be added; the meaning of these stays):
 * - a GPU's mem_free_bytes is what a new job may still take: its total less
 *   the requests of the jobs placed on it, the memory processes outside the
 *   queue hold now, and a CUDA context reserve per job (the caller computes
 *   it; the simulator uses the request alone);
 * - a request asks for n_gpus GPUs with vram_bytes on each, or whole idle
 *   GPUs when exclusive;
 * - sched_place chooses, sched_commit/sched_uncommit change the GPUs.
 */
#ifndef GW_SCHED_PLACE_H
#define GW_SCHED_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	SCHED_POLICY_EXCLUSIVE,   /* whole GPUs only, any idle one */
	SCHED_POLICY_FIRST_FIT,   /* the first GPUs in index order that fit */
	SCHED_POLICY_BEST_FIT,    /* the GPUs that leave the least free memory */
	SCHED_POLICY_FGD,         /* fragmentation gradient descent (Weng et al., ATC'23) */
	SCHED_POLICY_GPUWISE,     /* the daemon's own policy */
} sched_policy;

#define SCHED_ENOFIT (-1)     /* no placement exists now */
#define SCHED_EINVAL (-2)     /* malformed request (0 GPUs, more GPUs than exist) */

typedef struct sched_gpu {
	int node;                 /* node index; 0 on one server */
	int numa;                 /* NUMA node, -1 unknown */
	int nvlink_group;         /* GPUs sharing a value are NVLink peers; -1 none */
	int pcie_switch;          /* GPUs sharing a value sit under one switch; -1 unknown */
	uint64_t mem_total_bytes;
	uint64_t mem_free_bytes;  /* what a new job may still take (see above) */
	int n_jobs;               /* jobs placed on it */
	bool exclusive;           /* held whole by one job */
	bool unavailable;         /* lost, draining, or MIG-partitioned */
} sched_gpu;

typedef struct sched_req {
	uint64_t vram_bytes;      /* per GPU; ignored when exclusive */
	int n_gpus;               /* >= 1 */
	bool exclusive;           /* whole idle GPUs */
} sched_req;

/*
 * What is expected to arrive next, for the policies that weigh
 * fragmentation (FGD, gpuwise): requests with their relative frequency.
 * NULL or n == 0 means unknown.
 */
typedef struct sched_demand {
	const sched_req *reqs;
	const double *weight;     /* sums to 1 over n */
	size_t n;
} sched_demand;

/*
 * Choose req->n_gpus GPUs from gpus[0..n) under policy p.  On success fills
 * out_idx[0..req->n_gpus) with indices into gpus and returns 0; returns
 * SCHED_ENOFIT when no placement exists now, SCHED_EINVAL for a malformed
 * request.  Does not change gpus.
 */
int sched_place(sched_policy p, const sched_gpu *gpus, size_t n, const sched_req *req,
		const sched_demand *demand, int *out_idx);
/* Take (commit) or give back (uncommit) what a placed request holds. */
void sched_commit(sched_gpu *gpus, const sched_req *req, const int *idx);
void sched_uncommit(sched_gpu *gpus, const sched_req *req, const int *idx);

const char *sched_policy_name(sched_policy p);
/* "first-fit" -> SCHED_POLICY_FIRST_FIT; returns 0, or -1 for an unknown name. */
int sched_policy_parse(const char *name, sched_policy *p);

#endif

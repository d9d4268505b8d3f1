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
	/*
	 * Added for the trace simulator: the free CPU of the GPU's node in
	 * thousandths of a core, one counter that every GPU of the node points
	 * at; NULL when CPU is not modelled (requests' cpu_milli then ignored).
	 */
	uint64_t *node_cpu_free_milli;
	/*
	 * Standard sizes (ascending): a shared request takes the first slot
	 * that holds it (the slot includes its context reserve); NULL none.
	 */
	const uint64_t *slot_bytes;
	size_t n_slots;
	/*
	 * Added to a request on a GPU without standard sizes when requests
	 * leave their context reserve out because other GPUs have sizes (the
	 * queue on a server of mixed models); 0 otherwise and in the simulator.
	 */
	uint64_t context_bytes;
} sched_gpu;

typedef struct sched_req {
	uint64_t vram_bytes;      /* per GPU; ignored when exclusive */
	int n_gpus;               /* >= 1 */
	bool exclusive;           /* whole idle GPUs */
	/*
	 * Added for the trace simulator: when 1..999, the request is this share
	 * (thousandths) of each GPU's mem_total_bytes, rounded down, whatever
	 * the GPU's model, and vram_bytes is ignored (Alibaba's gpu_milli).
	 */
	uint32_t gpu_milli;
	uint64_t cpu_milli;       /* CPU asked of the node, thousandths of a core; 0 none */
} sched_req;

/*
 * What is expected to arrive next, for the policies that weigh
 * fragmentation (FGD, gpuwise): requests with their relative frequency.
 * NULL or n == 0 means unknown.
 */
typedef struct sched_prep sched_prep;
typedef struct sched_demand {
	const sched_req *reqs;
	const double *weight;     /* sums to 1 over n */
	size_t n;
	sched_prep *prep;         /* look-up tables; NULL: built on each call */
} sched_demand;

/*
 * Build d's look-up tables once (the simulator places thousands of
 * requests against one demand); release them with sched_demand_release.
 * reqs and weight must not change in between.
 */
void sched_demand_prepare(sched_demand *d);
void sched_demand_release(sched_demand *d);

/*
 * Choose req->n_gpus GPUs from gpus[0..n) under policy p.  The GPUs of a
 * request always share one node; a node's GPUs must be contiguous in gpus.
 * Under SCHED_POLICY_EXCLUSIVE every request is placed on whole idle GPUs:
 * commit it with exclusive set.  On success fills
 * out_idx[0..req->n_gpus) with indices into gpus and returns 0; returns
 * SCHED_ENOFIT when no placement exists now, SCHED_EINVAL for a malformed
 * request.  Does not change gpus.
 */
int sched_place(sched_policy p, const sched_gpu *gpus, size_t n, const sched_req *req,
		const sched_demand *demand, int *out_idx);
/*
 * What req needs on GPU g, in bytes: vram_bytes or its gpu_milli share,
 * rounded up to g's standard sizes (the whole GPU when over them all),
 * else plus g's context_bytes.
 */
uint64_t sched_need_bytes(const sched_gpu *g, const sched_req *req);
/*
 * Fragmentation of gpus[0..n) measured against demand (Weng et al.'s F(M)):
 * the expected amount of free GPU, in GPUs, that the next request drawn
 * from demand could not use.  0 when demand is unknown.
 */
double sched_fragmentation(const sched_gpu *gpus, size_t n, const sched_demand *demand);

/* Take (commit) or give back (uncommit) what a placed request holds. */
void sched_commit(sched_gpu *gpus, const sched_req *req, const int *idx);
void sched_uncommit(sched_gpu *gpus, const sched_req *req, const int *idx);

const char *sched_policy_name(sched_policy p);
/* "first-fit" -> SCHED_POLICY_FIRST_FIT; returns 0, or -1 for an unknown name. */
int sched_policy_parse(const char *name, sched_policy *p);

#endif

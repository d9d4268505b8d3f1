/*
 * sched/queue: one scheduling pass of the shared-server queue: admission on
 * requested amounts against per-project quotas (Kueue's semantics: nominal
 * quota, optional borrowing of other projects' idle quota, borrowed jobs
 * preempted first when an owner needs its quota back), order (priority,
 * then fair share weighted by quota, then submission order), placement
 * through sched_place(), and backfill that holds a reservation for the
 * head job so that it never starves.
 *
 * Pure logic over plain structs: never prints, never touches a socket or a
 * file.  The caller (the daemon) owns every job and project; the pass only
 * reads them and fills a decision list and the reasons of waiting jobs.
 */
#ifndef GW_SCHED_QUEUE_H
#define GW_SCHED_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/job.h"
#include "sched/place.h"

#define SCHED_UNLIMITED UINT64_MAX

/* A project's quota (requested amounts of running jobs) and its use now. */
typedef struct sched_project {
	const char *name;
	uint64_t quota_vram_bytes;   /* SCHED_UNLIMITED = none */
	uint64_t quota_gpus;         /* exclusive GPUs; SCHED_UNLIMITED = none */
	uint64_t quota_jobs;         /* running jobs; SCHED_UNLIMITED = none */
	/* filled by sched_pass from the running jobs */
	uint64_t used_vram_bytes, used_gpus, used_jobs;
} sched_project;

/* One GPU as the queue sees it: the placement view plus what it carries. */
typedef struct sched_mig {
	char uuid[96];
	char profile[48];            /* "1g.10gb" */
	uint64_t mem_total_bytes;
	uint64_t job_id;             /* 0 = free */
} sched_mig;

typedef struct sched_node_gpu {
	char uuid[96];
	uint64_t mem_total_bytes;
	uint64_t mem_outside_bytes;  /* held now by processes outside the queue */
	sched_mig *migs;             /* MIG instances when partitioned */
	size_t n_migs;
	int numa, nvlink_group, pcie_switch;
	bool lost;
} sched_node_gpu;

typedef struct sched_config {
	sched_policy policy;         /* SCHED_POLICY_GPUWISE by default */
	bool borrowing;              /* may a project use others' idle quota */
	uint64_t context_reserve_bytes; /* per job per GPU (CUDA context) */
} sched_config;

typedef enum { SCHED_START, SCHED_PREEMPT } sched_action;

typedef struct sched_decision {
	sched_action action;
	job *job;
	int gpu_idx[16];             /* START: GPUs (indices into the node's GPUs) */
	int n_gpus;
	int mig_idx;                 /* START in MIG mode: instance on gpu_idx[0]; -1 */
	bool borrowed;               /* START on borrowed quota */
} sched_decision;

typedef struct sched_result {
	sched_decision *d;
	size_t n, cap;
	int64_t reserved_job;        /* the head job holding a reservation, 0 none */
	int reserved_gpus[16];
	int n_reserved;
} sched_result;

/*
 * One pass.  jobs[0..n_jobs) are every job not ended (queued, held,
 * running); running jobs hold their placement (gpu_idx, n_placed, and
 * mig_idx through gpu_idx when MIG).  Fills res with the jobs to start and
 * the borrowed jobs to preempt (requeue) first, and replaces each waiting
 * job's reason with words ("project nlp is at its VRAM quota: 48/48 GiB").
 * projects[] get their used_* amounts.  A job whose project is not in
 * projects[] waits with a reason.  Returns 0.
 */
int sched_pass(const sched_config *cfg, const sched_node_gpu *gpus, size_t n_gpus,
	       sched_project *projects, size_t n_projects, job **jobs, size_t n_jobs,
	       sched_result *res);
void sched_result_release(sched_result *res);

/* What a job charges to its project's VRAM and GPU quotas. */
uint64_t sched_job_vram_bytes(const job *j, const sched_node_gpu *gpus, size_t n_gpus);
uint64_t sched_job_gpus(const job *j);

/*
 * Check a request against the node before it is queued: NULL when it can
 * ever run here, else why not (static text or written into buf).
 */
const char *sched_check_fits(const job_spec *s, const sched_node_gpu *gpus, size_t n_gpus,
			     uint64_t context_reserve_bytes, char *buf, size_t n);

#endif

/*
 * sched/queue: one scheduling pass of the shared-server queue: admission on
 * requested amounts against per-project quotas (Kueue's semantics: nominal
 * quota, optional borrowing of other projects' idle quota, borrowed jobs
 * preempted first when an owner needs its quota back), order (a fair tree:
 * the administrators' level, then fair share between projects weighted by
 * quota, then between a project's users; a user's priority orders only
 * their own jobs; then submission order), placement
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
	/*
	 * Fair share (Slurm's classic factor): the project's decayed usage now,
	 * running jobs included (the caller computes it with sched_usage_*), and
	 * its shares (0: its VRAM quota, else its GPU quota, else an equal
	 * share).  sched_pass fills usage_norm (its part of all projects'
	 * usage), share_norm and fairshare = 2^(-usage_norm / share_norm), and
	 * orders projects by fairshare before submission time.
	 */
	double usage_vram_byte_s, usage_gpu_s;
	double shares;
	double usage_norm, share_norm, fairshare;
} sched_project;

/*
 * Decayed usage of one project: GPU-memory-byte-seconds and GPU-seconds,
 * each second weighted by 2^(-age / half_life), as of at_ms.
 */
typedef struct sched_usage {
	double vram_byte_s, gpu_s;
	uint64_t at_ms;
} sched_usage;

/* Decay u from u->at_ms to now_ms (later only); half_life_ms 0 = no decay. */
void sched_usage_decay(sched_usage *u, uint64_t now_ms, uint64_t half_life_ms);
/*
 * Add what a job holding vram_bytes of GPU memory and n_gpus GPUs from
 * start_ms to end_ms (a running job: to u->at_ms) weighs at u->at_ms.
 */
void sched_usage_add(sched_usage *u, uint64_t vram_bytes, uint64_t n_gpus, uint64_t start_ms,
		     uint64_t end_ms, uint64_t half_life_ms);

/* One GPU as the queue sees it: the placement view plus what it carries. */
typedef struct sched_mig {
	char uuid[96];
	char profile[48];            /* "1g.10gb" */
	uint64_t mem_total_bytes;
	uint64_t job_id;             /* 0 = free */
} sched_mig;

typedef struct sched_node_gpu {
	char uuid[96];
	char name[96];               /* the model, as NVML names it */
	uint64_t mem_total_bytes;
	uint64_t mem_outside_bytes;  /* held now by processes outside the queue */
	uint64_t mem_used_bytes;     /* NVML's used memory (shown beside what the queue reserved) */
	sched_mig *migs;             /* MIG instances when partitioned */
	size_t n_migs;
	int numa, nvlink_group, pcie_switch;
	bool lost;
	bool foreign;                /* a process outside the queue holds it: no exclusive job */
	const uint64_t *slot_bytes;  /* standard sizes (ascending) a shared job's request is */
	size_t n_slots;              /* rounded up to here; the slot includes its context */
} sched_node_gpu;

/* One user's decayed usage inside one project (fair share between a project's users). */
typedef struct sched_user_usage {
	const char *project;
	uint32_t uid;
	double vram_byte_s, gpu_s;
} sched_user_usage;

typedef struct sched_config {
	sched_policy policy;         /* SCHED_POLICY_GPUWISE by default */
	bool borrowing;              /* may a project use others' idle quota */
	uint64_t context_reserve_bytes; /* per job per GPU (CUDA context) */
	uint64_t prev_reserved_job;  /* the last pass's reserved_job: it starts first when it fits */
	/*
	 * How long a job without a time limit is expected to run (the daemon:
	 * the mean of recent runs); a job started in a pass counts that long
	 * against its project's usage for the rest of the pass, so the next
	 * job (and the reservation) goes where the usage will be.  0: none.
	 */
	uint64_t expected_run_ms;
	/* each user's usage per project (running jobs to now); none: users of a project go by submission */
	const sched_user_usage *user_usage;
	size_t n_user_usage;
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

/*
 * Estimated start times of the waiting jobs (those with a queue_pos), in
 * queue order, from the running jobs' time limits and each job's own:
 * j->est_start_ms is set where every job ahead of it, and each running
 * job whose end it waits for, has a time limit, else 0 (unknown).  Quotas
 * are honoured (no borrowing); backfill is not assumed.  Looks at most at
 * max_jobs waiting jobs.  Call after sched_pass (which sets queue_pos).
 */
void sched_estimate(const sched_config *cfg, const sched_node_gpu *gpus, size_t n_gpus,
		    const sched_project *projects, size_t n_projects, job **jobs, size_t n_jobs,
		    uint64_t now_ms, size_t max_jobs);

/*
 * Refuse at submission what can never start under its project's quota:
 * NULL when the request fits the quota (with borrowing: the quota plus
 * every other project's, when all are limited), else why not.
 */
const char *sched_check_quota(const job_spec *s, const sched_project *pr, const sched_project *all,
			      size_t n_all, bool borrowing, const sched_node_gpu *gpus, size_t n_gpus,
			      char *buf, size_t n);

/* Fill usage_norm, share_norm and fairshare of pr[0..n) (sched_pass calls it). */
void sched_fair_share(sched_project *pr, size_t n, const sched_node_gpu *gpus, size_t n_gpus);

/* The standard size a request rounds up to: the first slot >= bytes, else bytes. */
uint64_t sched_round_size(const uint64_t *slot_bytes, size_t n_slots, uint64_t bytes);

/*
 * What a shared request is charged on GPU g, per GPU: the standard size
 * of g's model it rounds up to (the whole GPU when over every size), else
 * the request itself.
 */
uint64_t sched_gpu_charge(const job_spec *s, const sched_node_gpu *g);
/*
 * What a job charges to its project's VRAM quota, all its GPUs together.
 * A shared job placed on its GPUs: the largest of their charges
 * (sched_gpu_charge) times its GPU count; not placed yet: the smallest
 * charge over the GPUs it could run on (a lower bound: what admission
 * and the refusal at submit use before placement decides).
 */
uint64_t sched_job_vram_bytes(const job *j, const sched_node_gpu *gpus, size_t n_gpus);
/*
 * The memory a placed shared job may use on each of its GPUs: the
 * smallest of their charges, so that it stays in its slot on every one
 * (the VRAM cap and the over-request check); else the request.
 */
uint64_t sched_job_slot_bytes(const job *j, const sched_node_gpu *gpus, size_t n_gpus);
uint64_t sched_job_gpus(const job *j);
/*
 * What the queue has given its running jobs on each GPU, as the
 * scheduling pass counts it (a shared job's request or standard size with
 * its context reserve, the whole GPU for an exclusive job, the instance
 * for a MIG job) into out[0..n_gpus); never over a GPU's total.
 */
void sched_gpu_reserved(job *const *jobs, size_t n_jobs, const sched_node_gpu *gpus, size_t n_gpus,
			uint64_t context_reserve_bytes, uint64_t *out);

/*
 * Check a request against the node before it is queued: NULL when it can
 * ever run here, else why not (static text or written into buf).
 */
const char *sched_check_fits(const job_spec *s, const sched_node_gpu *gpus, size_t n_gpus,
			     uint64_t context_reserve_bytes, char *buf, size_t n);

#endif

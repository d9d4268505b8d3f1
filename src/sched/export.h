/*
 * sched/export: a queue job (sched/job.h) written as a Kubernetes batch/v1
 * Job or a Slurm batch script, and project quotas as Kubernetes
 * ResourceQuota / Kueue objects or Slurm sacctmgr commands.  Text only:
 * never prints, never runs anything.
 */
#ifndef GW_SCHED_EXPORT_H
#define GW_SCHED_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/job.h"
#include "util/util.h"

typedef struct export_k8s_opts {
	const char *image;         /* container image */
	const char *queue;         /* Kueue LocalQueue name; NULL = no label */
	bool time_slicing;         /* ask nvidia.com/gpu.shared replicas (time-slicing) */
	const char *gpuwise_path;  /* gpuwise inside the image: the command runs under
	                              gpuwise run; NULL = the image has none, the
	                              command runs directly (a note says so) */
	const char *name_suffix;   /* appended to a name taken from the command
	                              (no job name given), so exports never collide */
} export_k8s_opts;

typedef struct export_slurm_opts {
	const char *partition;     /* NULL = the cluster's default */
	int shards;                /* > 0: --gres=shard:K for a shared job */
	uint64_t mem_per_gpu_bytes;/* > 0: --mem-per-gpu */
	int signal_before_s;       /* seconds before the time limit to send TERM */
	const char *gpuwise_path;  /* gpuwise on the nodes; NULL = "gpuwise" */
	const char *output;        /* --output pattern; NULL = Slurm's default */
} export_slurm_opts;

/* A Kubernetes object name (DNS-1123 label) made from s: lowercase
 * letters, digits and '-', at most 63, starting and ending alphanumeric;
 * "gpuwise" when nothing is left.  Caller frees. */
char *export_k8s_name(const char *s);

/* Append the Job's YAML to out; a negative GW_E* code and err on a spec
 * that cannot be exported.  notes gets one line per caveat (may be NULL). */
int export_k8s_job(const job_spec *j, const export_k8s_opts *o, strbuf *out, strbuf *notes, gw_error *err);
int export_slurm_script(const job_spec *j, const export_slurm_opts *o, strbuf *out, strbuf *notes, gw_error *err);

/* The command a node runs: gpuwise run with the job's restart options. */
char **export_run_argv(const job_spec *j, const char *gpuwise_path, bool restarts_inside, size_t *argc);

/* One project's limits, as `gpuwise quota` keeps them (0 = no limit). */
typedef struct export_quota {
	const char *project;
	int gpus;                  /* GPUs at once */
	int jobs;                  /* running jobs at once */
	uint64_t vram_bytes;       /* GPU memory at once */
	int borrow_gpus;           /* GPUs it may borrow beyond gpus (Kueue); -1 = unlimited */
} export_quota;

int export_quota_k8s(const export_quota *q, size_t n, bool kueue, const char *flavor, strbuf *out, strbuf *notes);
int export_quota_slurm(const export_quota *q, size_t n, const char *cluster, bool vram_gres, strbuf *out,
		       strbuf *notes);

#endif

/*
 * sched/job: the job spec of the shared-server queue, one plain struct that
 * the daemon stores, the scheduler admits and places, and the Slurm and
 * Kubernetes exports translate.  Pure data and a few helpers: never prints,
 * never touches a socket or a file.
 *
 * Ownership: every pointer in a job_spec is heap memory owned by the spec
 * (job_spec_release frees it); arrays are NULL-terminated as well as
 * counted, so argv can go to execvp unchanged.
 */
#ifndef GW_SCHED_JOB_H
#define GW_SCHED_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	JOB_QUEUED,     /* waiting for admission (quota) and a placement */
	JOB_HELD,       /* queued but held by its owner or an administrator */
	JOB_RUNNING,    /* started under `gpuwise run` */
	JOB_DONE,       /* ended with exit status 0 */
	JOB_FAILED,     /* ended otherwise, or lost (the reason says which) */
	JOB_CANCELLED,  /* cancelled before or while running */
} job_state;

typedef enum {
	JOB_MODE_SHARED,     /* packed by memory with other jobs on a GPU */
	JOB_MODE_EXCLUSIVE,  /* whole idle GPUs */
	JOB_MODE_MIG,        /* one free MIG instance of mig_profile */
} job_mode;

typedef enum {
	JOB_RESTART_NEVER,       /* the same words as `gpuwise run --restart` */
	JOB_RESTART_ON_FAILURE,
	JOB_RESTART_ALWAYS,
} job_restart;

#define JOB_MAX_RESTARTS_UNLIMITED (-1)

typedef struct job_spec {
	/* what to run, where and as whom */
	char **argv;             /* the command, argv[0] searched on PATH */
	size_t argc;
	char **env;              /* "NAME=value" the user passed explicitly */
	size_t n_env;
	char **env_inherited;    /* the submitter's environment (--export); merged into env at submit */
	size_t n_env_inherited;
	char *cwd;               /* the submitter's working directory */
	uint32_t uid, gid;       /* the submitter, from SO_PEERCRED */
	char *user;              /* the submitter's login name (display, exports) */
	char *project;           /* quota account; never NULL once accepted */
	char *name;              /* display name; NULL = basename of argv[0] */

	/* what it asks for */
	uint64_t vram_bytes;     /* per GPU; 0 = whole GPU (exclusive, mig) */
	bool vram_auto;          /* vram_bytes came from the planner */
	char *vram_plan;         /* the planner's summary when vram_auto, else NULL */
	int n_gpus;              /* >= 1 */
	job_mode mode;
	char *mig_profile;       /* e.g. "1g.10gb" when mode == JOB_MODE_MIG */

	/* when and for how long */
	int priority;            /* orders the user's own jobs: higher first; default 0 */
	/*
	 * The level across users and projects, above fair share: set by the
	 * daemon at submission, never by the client: the priority for an
	 * administrator, else the priority capped at the project's
	 * max_priority (default 0), so that a user's --priority 1000 orders
	 * only that user's own jobs and a negative one yields to everyone.
	 */
	int boost;
	uint64_t time_limit_ms;  /* 0 = none */
	uint64_t after_id;       /* start only after this job ended; 0 = none */

	/* supervision: what `gpuwise run` is given */
	job_restart restart;
	int max_restarts;        /* JOB_MAX_RESTARTS_UNLIMITED or >= 0 */
	char **run_args;         /* further `gpuwise run` options, verbatim */
	size_t n_run_args;
} job_spec;

/* A job as the queue keeps it: the spec plus what happened to it. */
typedef struct job {
	uint64_t id;
	job_spec spec;
	job_state state;
	bool borrowed;           /* admitted on another project's idle quota */
	uint64_t submit_ms, start_ms, end_ms;   /* wall clock; 0 = not yet */
	int gpu_idx[16];         /* placement: indices into the daemon's GPUs */
	int n_placed;
	int mig_idx;             /* MIG mode: the instance on gpu_idx[0]; -1 none */
	int pid;                 /* the supervisor's pid while running; 0 otherwise */
	uint64_t pid_start_ticks;/* its /proc start time, to re-adopt after restart */
	int exit_status;         /* when ended: 0..255, 128+signal */
	uint64_t vram_peak_bytes;/* measured by the supervisor; 0 unknown */
	char *reason;            /* why it waits, failed or was stopped; NULL none */
	uint32_t queue_pos;      /* set by sched_pass: 1 = considered first; 0 not waiting in order */
	uint64_t est_start_ms;   /* set by sched_estimate: wall clock; 0 unknown */
	/*
	 * A stop under way (the daemon's STOP_* code, 0 none) and the wall-clock
	 * time of its SIGKILL: stored with the job before a cancel is
	 * acknowledged, so a restart resumes it instead of forgetting it.
	 */
	int stop_kind;
	uint64_t stop_deadline_ms;
} job;

void job_spec_release(job_spec *s);
void job_release(job *j);

const char *job_state_name(job_state s);   /* "queued", "held", ... */
int job_state_parse(const char *s, job_state *out);   /* 0 or -1 */
bool job_state_ended(job_state s);
const char *job_mode_name(job_mode m);     /* "shared", "exclusive", "mig" */
/* "shared", "exclusive" or "mig:PROFILE" (profile malloc'd into *profile). */
int job_mode_parse(const char *s, job_mode *out, char **profile);
const char *job_restart_name(job_restart r);
int job_restart_parse(const char *s, job_restart *out);

#endif

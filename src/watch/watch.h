/*
 * watch: supervise one long GPU job.  Starts it in its own process group
 * (gpuwise being a child subreaper), samples its GPU memory, the GPUs' heat
 * and the tree's host memory, detects leaks, heat, hangs and Xid events,
 * classifies how each attempt ended, and restarts it with back-off.
 *
 * Nothing here prints: the caller gets samples, events and the job's output
 * through callbacks and the whole history in a watch_result.
 */
#ifndef GW_WATCH_H
#define GW_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hw/hw.h"
#include "util/util.h"

/* ---- process tree (every /proc read goes through gw_path) ------------- */

/*
 * Descendants of root (not root itself), by PPid, in no particular order.
 * *out is malloc'd (the caller frees); a process that vanishes meanwhile
 * is skipped.  Returns 0 or GW_EIO when /proc cannot be listed.
 */
int watch_tree(pid_t root, pid_t **out, size_t *n, gw_error *err);
/* Sum of resident memory (statm) of the pids in bytes; vanished ones count 0. */
uint64_t watch_rss_bytes(const pid_t *pids, size_t n);
/* State letter from /proc/PID/stat ('R', 'S', 'T' ...), 0 when gone. */
char watch_proc_state(pid_t pid);
/*
 * The oom_kill counter of pid's cgroup v2 memory.events (pid 0: our own),
 * or -1 when unknown.
 */
long long watch_cgroup_oom_kills(pid_t pid);
/*
 * Send sig to every process (but this one) whose environment holds the
 * exact string marker ("NAME=VALUE").  Returns how many were signalled.
 */
size_t watch_kill_marked(const char *marker, int sig);
/* MemAvailable from /proc/meminfo in bytes, -1 unknown. */
long long watch_mem_available_bytes(void);

/* ---- detectors (pure: feed samples, get verdicts) ---------------------- */

/* Median of the pairwise slopes (Theil-Sen) of (t[i], y[i]); 0 when n < 2. */
double watch_theil_sen(const double *t, const double *y, size_t n);

#define WATCH_LEAK_WINDOWS 64

/*
 * Leak: after warm-up the job's memory is cut into windows; each window
 * keeps its maximum and minimum.  A leak is a Theil-Sen slope of the
 * window maxima of at least min_rate_bps that also lifts the minima and
 * shows in both halves of the windows (so a single step up of a caching
 * allocator, or a sawtooth that does not grow, is not one).
 */
typedef struct watch_leak {
	uint64_t warmup_ms, window_ms;
	double min_rate_bps;
	size_t min_windows;
	uint64_t t0_ms;             /* attempt start */
	uint64_t win_start_ms;
	bool win_any;
	double win_max, win_min, win_tmax, win_tmin;
	double tmax[WATCH_LEAK_WINDOWS], ymax[WATCH_LEAK_WINDOWS];
	double tmin[WATCH_LEAK_WINDOWS], ymin[WATCH_LEAK_WINDOWS];
	size_t nw;                  /* completed windows kept (oldest first) */
	bool fired;
} watch_leak;

void watch_leak_init(watch_leak *l, uint64_t t0_ms, uint64_t warmup_ms, uint64_t window_ms,
		     double min_rate_bps);
/*
 * Feed one sample of the job's GPU memory.  Returns true once, when a
 * leak is judged at the close of a window; *slope_bps gets the growth.
 */
bool watch_leak_feed(watch_leak *l, uint64_t t_ms, uint64_t bytes, double *slope_bps);

/* Throttle bits that mean thermal slowdown (NVML clocks-event reasons). */
#define WATCH_THERMAL_BITS (HW_THR_SW_THERMAL | HW_THR_HW_THERMAL)

typedef enum { WATCH_HEAT_NONE, WATCH_HEAT_HOT, WATCH_HEAT_CLEAR } watch_heat_change;

/* Heat of one GPU: hot after `need` hot samples in a row, clear 5 C under. */
typedef struct watch_heat {
	int limit_c;
	int need;
	int run;        /* hot samples in a row */
	bool hot;
} watch_heat;

void watch_heat_init(watch_heat *h, int limit_c, int need);
/* temp_c < -273 means unknown; throttle is the NVML bit set (0 unknown). */
watch_heat_change watch_heat_feed(watch_heat *h, int temp_c, uint64_t throttle);
/* The margin under the limit before a paused job resumes (issue 5). */
#define WATCH_HEAT_HYSTERESIS_C 5

/* ---- exit classification and restart policy ----------------------------- */

#define WATCH_CLASS_MAP(X)                                          \
	X(SUCCESS, "success")                                       \
	X(CUDA_OOM, "cuda-oom")                                     \
	X(HOST_OOM, "host-oom")                                     \
	X(HARDWARE, "hardware")                                     \
	X(STOPPED, "stopped-by-gpuwise")                            \
	X(INTERRUPTED, "interrupted")                               \
	X(NOT_STARTED, "not-started")                               \
	X(FAILURE, "failure")

typedef enum {
#define WATCH_CLASS_ENUM(n, s) WATCH_##n,
	WATCH_CLASS_MAP(WATCH_CLASS_ENUM)
#undef WATCH_CLASS_ENUM
	WATCH_CLASS_COUNT
} watch_class;

const char *watch_class_name(watch_class c);
/* Parse a class name; -1 when unknown. */
int watch_class_parse(const char *s);

/*
 * What the tail of the job's stderr says, through explain's signatures
 * (src/doctor/doctor.h): WATCH_CUDA_OOM, WATCH_HARDWARE (the GPU fell off
 * the bus, an uncorrectable ECC error, a GSP timeout) or WATCH_FAILURE.
 */
watch_class watch_tail_class(const char *tail);
bool watch_tail_is_cuda_oom(const char *tail);
/*
 * Xid codes that mean the hardware, not the application, failed (DCGM's
 * health catalogue, see watch.c).
 */
bool watch_xid_is_hardware(int xid);

/* What we know about one ended attempt, for watch_classify. */
typedef struct watch_exit_facts {
	int wait_status;            /* from waitpid */
	bool exec_failed;
	const char *stop_reason;    /* non-NULL: gpuwise stopped it (leak, hang ...) */
	bool interrupted;           /* the user signalled gpuwise */
	int hardware_xid;           /* a hardware Xid during the attempt, 0 none */
	const char *stderr_tail;
	long long oom_kills_before, oom_kills_after; /* -1 unknown */
} watch_exit_facts;

watch_class watch_classify(const watch_exit_facts *f);
/* The status gpuwise passes through: the exit code, or 128 + signal. */
int watch_exit_status(int wait_status);

typedef enum { WATCH_RESTART_NEVER, WATCH_RESTART_ON_FAILURE, WATCH_RESTART_ALWAYS } watch_restart;
typedef enum { WATCH_ACT_WARN, WATCH_ACT_RESTART, WATCH_ACT_STOP, WATCH_ACT_PAUSE } watch_action;

typedef struct watch_policy {
	watch_restart restart;
	int max_restarts;               /* -1 unlimited */
	uint64_t backoff_min_ms, backoff_max_ms;
	uint64_t start_limit_interval_ms; /* 0 disables */
	int start_limit_burst;
	int no_restart_codes[32];
	size_t n_no_restart_codes;
	bool no_restart_class[WATCH_CLASS_COUNT];
} watch_policy;

/* systemd's defaults: StartLimitIntervalSec=10s, StartLimitBurst=5 (systemd.unit(5)). */
void watch_policy_defaults(watch_policy *p);

typedef struct watch_policy_state {
	int restarts;                   /* restarts done */
	int failures_in_row;
	uint64_t starts_ms[64];         /* recent start times, oldest first */
	size_t n_starts;
} watch_policy_state;

void watch_policy_note_start(watch_policy_state *st, uint64_t now_ms);
/*
 * Decide whether to start again after an attempt that ran ran_ms and ended
 * with class c and exit status (0-255).  force: a detector asked for the
 * restart (--on-leak restart).  Returns true and the delay to wait, or
 * false and why not (why gets a short phrase).
 */
bool watch_policy_next(const watch_policy *p, watch_policy_state *st, watch_class c,
		       int status, uint64_t ran_ms, bool force, uint64_t now_ms,
		       uint64_t *delay_ms, char *why, size_t why_n);

/*
 * --oom-halve: the next value of an integer variable after an
 * out-of-memory exit.  Returns false when it cannot shrink (already 1, or
 * not a positive integer).
 */
bool watch_halve(const char *value, long long *next);

/* ---- the supervisor ----------------------------------------------------- */

typedef enum {
	WATCH_EV_START,
	WATCH_EV_EXIT,
	WATCH_EV_RESTART,
	WATCH_EV_GIVE_UP,
	WATCH_EV_NO_GPU,
	WATCH_EV_LEAK,
	WATCH_EV_HEAT,
	WATCH_EV_HEAT_CLEAR,
	WATCH_EV_PAUSE,
	WATCH_EV_RESUME,
	WATCH_EV_HANG,
	WATCH_EV_MEM_LIMIT,
	WATCH_EV_XID,
	WATCH_EV_SIGNAL,
	WATCH_EV_OOM_HALVE,
	WATCH_EV_HOOK_FAILED,
	WATCH_EV_HOST_LEAK,
	WATCH_EV_COUNT
} watch_event_kind;

const char *watch_event_name(watch_event_kind k);
/* Is the event an alert (shown in red, marked on the charts)? */
bool watch_event_is_alert(watch_event_kind k);

typedef struct watch_event {
	uint64_t t_ms;          /* since the run started */
	uint64_t wall_ms;
	int attempt;            /* 1-based */
	watch_event_kind kind;
	int gpu;                /* gpuwise GPU index, -1 none */
	double value;           /* leak: bytes/s; heat: C; xid: code; exit: status */
	double value2;          /* leak: seconds to out-of-memory (NAN unknown) */
	char detail[320];       /* one human line */
} watch_event;

typedef struct watch_gpu_sample {
	int index;
	char name[96];
	hw_val mem_total_bytes, mem_used_bytes, mem_free_bytes;
	hw_val util_gpu_pct, temp_c, power_mw, clock_sm_mhz, clock_mem_mhz, throttle_reasons;
	hw_val job_mem_bytes;   /* the job's processes on this GPU */
	uint32_t job_procs;
} watch_gpu_sample;

typedef struct watch_sample {
	uint64_t t_ms, wall_ms;
	int attempt;
	pid_t job_pid;
	size_t n_pids;
	uint64_t host_rss_bytes;
	bool gpu_ok;            /* NVML answered */
	hw_val job_mem_bytes;   /* sum over GPUs */
	bool paused;
	size_t n_gpus;
	watch_gpu_sample *gpus;
} watch_sample;

typedef struct watch_attempt {
	int n;                  /* 1-based */
	pid_t pid;
	uint64_t start_ms, end_ms;      /* since the run started */
	int wait_status;
	int status;             /* passthrough status */
	watch_class cls;
	char reason[96];        /* stopped: leak/hang/mem-limit/heat; hardware: Xid N */
	char env_value[32];     /* the --oom-halve variable for this attempt, "" none */
	char arg_value[32];     /* the --oom-halve-arg value for this attempt, "" none */
	char stderr_tail[1024]; /* the last lines of its stderr (failed attempts), "" none */
	uint64_t backoff_ms;    /* waited before the next attempt, 0 none */
	hw_val peak_job_mem_bytes;
} watch_attempt;

/* History kept for the report: merged two into one when full (bounded). */
#define WATCH_SERIES_MAX 2048
typedef struct watch_series {
	size_t n, n_gpus;
	uint64_t t_ms[WATCH_SERIES_MAX];
	double job_mem[WATCH_SERIES_MAX];       /* bytes, NAN unknown */
	double rss[WATCH_SERIES_MAX];
	uint32_t attempt[WATCH_SERIES_MAX];     /* lines break where it changes */
	double *gpu_mem, *gpu_util, *gpu_temp, *gpu_power; /* [i * n_gpus + g] */
	uint32_t merged;        /* samples per point */
	uint32_t pending;       /* samples merged into the last point */
} watch_series;

typedef struct watch_gpu_info {
	int index;
	char name[96];
	hw_val mem_total_bytes;
	hw_val peak_temp_c, peak_power_mw, peak_util_pct, peak_mem_used_bytes, peak_job_mem_bytes;
} watch_gpu_info;

typedef struct watch_result {
	watch_attempt *attempts;
	size_t n_attempts, cap_attempts;
	watch_event *events;
	size_t n_events, cap_events;
	watch_series *series;
	watch_gpu_info *gpus;
	size_t n_gpus;
	bool gpu_seen;
	char no_gpu_reason[256];
	char xid_error[256];    /* why the kernel log could not be read, "" if it was */
	uint64_t samples;
	uint64_t start_wall_ms, duration_ms;
	hw_val peak_job_mem_bytes;
	uint64_t peak_rss_bytes;
	bool sentinel;          /* a sentinel process guarded the job (see watch_run) */
	double cpu_s;           /* gpuwise's own user+system time */
	int exit_status;
} watch_result;

void watch_result_release(watch_result *r);

typedef struct watch_callbacks {
	void *ctx;
	void (*on_sample)(void *ctx, const watch_sample *s);
	void (*on_event)(void *ctx, const watch_event *e);
	/* The job's output, fd 1 or 2; the caller writes it on, never blocking. */
	void (*on_output)(void *ctx, int fd, const char *buf, size_t n);
	/*
	 * Can the caller take more output for fd (1 or 2)?  WATCH_OUT_FULL: the
	 * job's pipe is not read until there is room (the job blocks, not
	 * gpuwise); WATCH_OUT_CLOSED: nobody reads it any more, so the job's
	 * stdout pipe is closed and the job sees EPIPE.  NULL: always room.
	 */
	int (*output_state)(void *ctx, int fd);
} watch_callbacks;

enum { WATCH_OUT_OK, WATCH_OUT_FULL, WATCH_OUT_CLOSED };

typedef struct watch_opts {
	char **argv;
	uint64_t interval_ms;
	watch_policy policy;
	const char *oom_halve_var;
	const char *oom_halve_arg;      /* "--batch-size": halve "--batch-size N" or "--batch-size=N" in argv */
	uint64_t mem_limit_bytes;       /* 0 none */
	watch_action on_leak, on_heat;
	int temp_limit_c;
	int heat_samples;
	uint64_t hang_timeout_ms;       /* 0 off */
	uint64_t leak_warmup_ms, leak_window_ms;
	double leak_min_rate_bps;
	const char *xid_path;           /* NULL: GPUWISE_ROOT/dev/kmsg */
	const char *on_event_cmd;
	uint64_t grace_ms;              /* SIGTERM to SIGKILL */
	bool no_gpu;                    /* do not open NVML */
} watch_opts;

void watch_opts_defaults(watch_opts *o);

/*
 * Check options meant for `gpuwise run` that another program places
 * before its own (the queue's run_args): each must be a whole long option
 * of gpuwise run that a job may set, with its value; `--`, abbreviations,
 * words that are not options and the options the daemon sets (--log,
 * --vram-cap, --restart ...) are refused.  0, or GW_EINVAL with the reason
 * in err.
 */
int watch_run_args_check(char *const *args, size_t n, char *err, size_t errn);

/*
 * Run the job to its end, restarts included.  Returns 0 with r filled (the
 * caller releases it; r->exit_status is the status to pass through) or a
 * negative code with err set when supervision could not start.  When it
 * returns, no process of the job is left.
 */
int watch_run(const watch_opts *o, const watch_callbacks *cb, watch_result *r, gw_error *err);

/*
 * One self-contained HTML page (inline CSS and SVG, no scripts, no
 * external assets): summary, charts over time with markers for restarts,
 * alerts and Xid events, attempts and events.  Appends to out.
 */
void watch_report_html(const watch_result *r, char *const *argv, const watch_opts *o, strbuf *out);

#endif

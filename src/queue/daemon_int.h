/*
 * queue/daemon_int.h: what the files of `gpuwise daemon` share and nothing
 * else sees.  The daemon is one process, one thread, one poll loop over a
 * signalfd, the listening Unix socket and the clients' non-blocking
 * sockets.  Everything a loop iteration changes (submissions, starts,
 * ends) is written in one SQLite transaction before any reply of that
 * iteration goes out (group commit), so an acknowledged job survives
 * SIGKILL.  Jobs run under `gpuwise run`, started through a small shim
 * process that records the exit status in a file, so a job that outlives
 * a crashed daemon is re-adopted and its end is still known.
 *
 *   config.c    daemon.conf: defaults and parsing
 *   auth.c      users, groups, project members, administrators
 *   jobs.c      transactions, jobs in memory, the GPUs, the scheduling
 *               pass and watching running jobs
 *   launch.c    starting a job (its argv and environment), signals, its end
 *   handlers.c  one function per request
 *   loop.c      the socket, the clients and the main loop
 */
#ifndef GW_QUEUE_DAEMON_INT_H
#define GW_QUEUE_DAEMON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hw/hw.h"
#include "queue/proto.h"
#include "queue/queue.h"
#include "queue/store.h"
#include "sched/queue.h"
#include "util/json.h"

#define READ_CHUNK 65536
#define TICK_MS 100
#define HW_EVERY_MS 1000
#define LOG_CHUNK 65536

enum { STOP_NONE, STOP_CANCEL, STOP_PREEMPT, STOP_TIMELIMIT, STOP_OVER, STOP_SHUTDOWN };

typedef struct djob {
	job j;                   /* first: sched/ sees job pointers */
	int stop;                /* STOP_*: why it is being stopped */
	uint64_t kill_at_ms;     /* monotonic, when to SIGKILL */
	bool own_child;          /* forked by this daemon process */
	int over_samples;
	bool over_noted;
	uint64_t log_pos;        /* read position in the supervisor's JSON-lines log */
	char *stop_note;
	char *preempt_note;      /* why it was preempted, kept until it starts again */
	bool dropping;           /* ended; leaves memory at the next qd_drop_marked */
	uint64_t start_boot_ms;  /* CLOCK_BOOTTIME at its start: time limits never follow the wall clock */
} djob;

typedef struct uid_use uid_use;

typedef struct client {
	int fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	strbuf in;
	size_t in_off;           /* requests before it are handled */
	strbuf out;
	size_t out_off;
	uint64_t last_ms;        /* monotonic: the last byte read */
	uint64_t wrote_ms;       /* monotonic: the last reply byte the client took */
	size_t acct_bytes;       /* what of in and out is counted in u->bytes */
	uid_use *u;              /* its user's connections, bytes and request budget */
	bool skipping;           /* dropping the rest of an oversized line */
	bool closing;            /* close once out is written */
	bool dead;
} client;

/* Per-user limits of the socket (clients.c; daemon.conf, docs/queue-protocol.md). */
typedef struct qd_limits {
	size_t max_connections;          /* every user together */
	size_t admin_connections;        /* of those, kept for administrators */
	size_t max_connections_per_user;
	uint64_t max_buffered_per_user_bytes;  /* requests read and replies unsent */
	uint64_t max_requests_per_user_s;      /* a second, sustained (burst: as many) */
	uint64_t max_jobs_per_user;            /* waiting or running */
} qd_limits;

typedef struct config {
	bool borrowing;
	bool over_stop;          /* stop (else warn) a job over its request */
	double over_grace;       /* 0.10 */
	int over_samples;        /* consecutive samples over before acting */
	uint64_t context_reserve_bytes;
	uint64_t log_retention_ms;
	uint64_t client_timeout_ms;
	char admin_group[64];
	sched_policy policy;
	bool vram_cap;           /* shared jobs run under `gpuwise run --vram-cap REQUEST` */
	qd_limits lim;
	char http[128];          /* "ADDR:PORT": serve the lab page and /metrics (status --serve), "" not */
	unsigned http_per_address; /* the page server's connections from one address (64) */
	uint64_t fairshare_half_life_ms; /* decay of the projects' past usage; 0 none */
	uint64_t exclusive_foreign_bytes; /* memory outside the queue that keeps exclusive jobs off a GPU */
	uint64_t vram_sizes[16]; /* standard sizes, ascending; none when n_vram_sizes is 0 */
	size_t n_vram_sizes;
	/* vram_sizes[MODEL] lines: a GPU whose name holds MODEL (the first such line) uses these */
	struct qd_model_sizes {
		char model[96];
		uint64_t sizes[16];
		size_t n;            /* 0: free-form requests on this model ("none") */
	} vram_models[16];
	size_t n_vram_models;
	uint64_t log_limit_bytes;    /* per job log; 0 = no limit */
	uint64_t free_reserve_bytes; /* submissions are refused below this much free state space */
	char env_deny[1024];     /* "LD_*,GPUWISE_*,...": what a job never inherits */
	uint64_t kill_wait_ms;   /* SIGTERM to SIGKILL for a job being stopped (30 s, Slurm's KillWait) */
	uint64_t user_log_limit_bytes; /* one user's logs, all their jobs; 0 = no limit */
	int max_priority;        /* the highest level a non-administrator's --priority reaches (0) */
	struct qd_prio_cap {
		char project[64];
		int max;
	} prio_caps[32];         /* max_priority[PROJECT] lines */
	size_t n_prio_caps;
	/* user_log_limit[USER] and log_retention[USER] lines: one user's own log budget */
	struct qd_user_logcfg {
		uint32_t uid;
		bool has_limit, has_retention;
		uint64_t limit_bytes, retention_ms;
	} user_logs[32];
	size_t n_user_logs;
} config;

typedef struct qd {
	const queue_daemon_opts *o;
	config cfg;
	char *state_dir, *socket_path, *logs_dir, *run_dir;
	char exe[4096];
	bool root;               /* serves every user */
	uid_t self_uid;
	store *st;
	bool in_tx;
	bool tx_failed;          /* a write of the open transaction failed: it is rolled back */
	djob **tx_new;           /* submitted in the open transaction: forgotten if it fails */
	size_t n_tx_new, cap_tx_new;
	uint64_t last_id;        /* highest id committed (and in the ids file) */
	int ids_fd;              /* state/ids: the highest id ever handed out, outside the database */
	mode_t job_umask;        /* the umask the daemon was started with, for the jobs */
	int sfd, lfd, lockfd;
	client **clients;
	size_t n_clients, cap_clients;
	uid_use **uids;          /* users with connections or jobs */
	size_t n_uids, cap_uids;
	int spare_fd;            /* /dev/null, given up to accept and refuse at EMFILE */
	int base_fds;            /* descriptors open besides the clients' */
	uint64_t accept_pause_until_ms;
	uint64_t trim_at_ms;     /* when memory freed by large replies goes back next */
	bool trim_due;
	pid_t http_pid;          /* the `status --serve` child of the http setting, 0 none */
	int http_fd;             /* its listening socket, bound by the daemon; -1 none */
	uint64_t http_started_ms, http_restart_at_ms;
	unsigned http_quick_deaths;  /* ended within 1 s of its start, in a row */
	djob **jobs;             /* not ended */
	size_t n_jobs, cap_jobs;
	store_project *projects;
	size_t n_projects;
	hw *hw;
	sched_node_gpu *gpus;
	size_t n_gpus;
	uint64_t hw_at_ms;
	uint64_t pass_at_ms;     /* monotonic time of the last scheduling pass */
	bool dirty;              /* schedule on the next tick */
	bool stopping;
	uint64_t expire_at_ms;
	gw_error err;            /* last store error */
	/* fair share (usage.c): each project's decayed usage of ended runs */
	char **usage_names;
	sched_usage *usage;
	size_t n_usage;
	/* and each user's inside each project (the fair tree's second level) */
	sched_user_usage *user_usage;   /* .project owned (malloc'd) */
	sched_usage *user_decayed;
	size_t n_user_usage, cap_user_usage;
	uint64_t reserved_job;   /* the last pass's reservation, kept to the next */
	struct {
		uint32_t uid;
		uint64_t bytes, at_ms;   /* monotonic */
	} log_cache[64];         /* users' kept log bytes, looked at most every 2 s */
	size_t n_log_cache;
	double mean_run_ms;      /* recent runs' mean length (weighted 1/16 per run) */
} qd;


/* jobs.c */
void qd_log(qd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void qd_tx(qd *d);
int qd_tx_commit(qd *d);
bool qd_tx_ok(qd *d);
void qd_tx_fail(qd *d);
void qd_save(qd *d, djob *j);
void qd_gpus_free(qd *d);
void qd_gpus_refresh(qd *d);
djob *qd_find_job(qd *d, uint64_t id);
size_t qd_job_index(const qd *d, uint64_t id);  /* first job with an id >= id */
void qd_djob_free(djob *j);
void qd_drop_job(qd *d, djob *j);
void qd_drop_marked(qd *d);
void qd_set_reason(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *qd_job_path(qd *d, const char *dir, uint64_t id, const char *ext);
void qd_schedule(qd *d);
void qd_watch_jobs(qd *d);
void qd_readopt(qd *d);
void qd_expire_logs(qd *d);
/*
 * One user's kept log bytes; with prune, over user_log_limit their oldest
 * ended jobs' logs are removed first until they fit.
 */
uint64_t qd_user_logs(qd *d, uint32_t uid, bool prune);
/* uid's log budget: user_log_limit[USER], else user_log_limit (0: none). */
uint64_t qd_user_log_limit(const qd *d, uint32_t uid);
/* An ended job's log bytes into the database (the user's count follows). */
void qd_log_ended(qd *d, uint64_t id);
/* At start-up: every kept log's bytes looked at once, the users' counts made from them. */
void qd_logs_recount(qd *d);
/*
 * Why a user's submission is refused for space, else NULL: over their
 * log budget with only running jobs' logs left, or the state disk below
 * free_space_reserve while their logs are more than an equal part of all.
 */
const char *qd_logs_refusal(qd *d, uint32_t uid, bool admin, char *why, size_t n);

/* usage.c */
void qd_usage_load(qd *d);
void qd_usage_ended(qd *d, const job *j);
/* Projects as the scheduler sees them, usage to now included; free with free(). */
sched_project *qd_sched_projects(qd *d, size_t *n);
/* The same, their quotas only (cheap: for each submission). */
sched_project *qd_quota_projects(qd *d, size_t *n);
void qd_usage_free(qd *d);
sched_config qd_sched_config(qd *d);
/* Each user's usage per project, running jobs to now, into cfg (freed by qd_sched_users_free). */
void qd_sched_users(qd *d, sched_config *cfg);
void qd_sched_users_free(sched_config *cfg);

/* config.c */
void qd_config_defaults(config *c);
/* The highest cross-user level a member of project may set (max_priority[PROJECT], else max_priority). */
int qd_config_max_priority(const config *c, const char *project);
int qd_config_load(const char *path, bool must_exist, config *c, gw_error *err);
/* The standard sizes of a GPU named name (its vram_sizes[MODEL] line, else vram_sizes); sets *n. */
const uint64_t *qd_config_sizes(const config *c, const char *name, size_t *n);

/* auth.c */
bool qd_is_admin(qd *d, const client *c);
char *qd_user_name(uid_t uid);
bool qd_member_of(const char *members, uid_t uid, gid_t gid);
bool qd_may_touch(qd *d, const client *c, const job *j);
int qd_peer_cred(client *c);
bool qd_peer_allowed(qd *d, const client *c);

/* launch.c */
uint64_t qd_proc_start_ticks(pid_t pid);
pid_t qd_launch(qd *d, djob *x);
void qd_job_ended(qd *d, djob *x, int status, bool known);
int qd_read_status_file(qd *d, uint64_t id, int *status);
void qd_signal_job(djob *x, int sig);
void qd_stop_job(qd *d, djob *x, int why, const char *note);

/* clients.c: the connections, their budgets and the per-user limits */
void qd_limits_defaults(qd_limits *l);
bool qd_limits_key(config *c, const char *k, const char *v, bool *ok);
int qd_http_bind(qd *d, gw_error *err);
pid_t qd_http_start(qd *d);
void qd_http_watch(qd *d);            /* start it again when due */
void qd_http_ended(qd *d, int status); /* it ended (reaped with status) */
void qd_clients_init(qd *d);
void qd_clients_release(qd *d);
void qd_accept(qd *d);
bool qd_accepting(qd *d);
void qd_clients_fit(qd *d);
short qd_client_events(qd *d, client *c);
void qd_client_read(qd *d, client *c);
void qd_clients_pass(qd *d);
bool qd_client_serve(qd *d, client *c);
void qd_client_write(qd *d, client *c);
void qd_clients_reap(qd *d, uint64_t mono);
void qd_user_jobs(qd *d, uid_t uid, int delta);
const char *qd_user_jobs_refusal(qd *d, const client *c, char *buf, size_t n);

/* handlers.c */
void qd_reply_error(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void qd_handle_line(qd *d, client *c, const char *line, size_t len);

#endif

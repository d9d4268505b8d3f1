/*
 * queue/daemon: `gpuwise daemon`.  One process, one thread, one poll loop
 * over a signalfd, the listening Unix socket and the clients' non-blocking
 * sockets.  Everything a loop iteration changes (submissions, starts,
 * ends) is written in one SQLite transaction before any reply of that
 * iteration goes out (group commit), so an acknowledged job survives
 * SIGKILL.  Jobs run under `gpuwise run`, started through a small shim
 * process that records the exit status in a file, so a job that outlives
 * a crashed daemon is re-adopted and its end is still known.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/hw.h"
#include "queue/proto.h"
#include "queue/queue.h"
#include "queue/store.h"
#include "sched/queue.h"
#include "util/json.h"

#define MAX_CLIENTS 1024
#define READ_CHUNK 65536
#define TICK_MS 100
#define KILL_AFTER_MS 30000      /* SIGTERM to SIGKILL for a job being stopped */
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
} djob;

typedef struct client {
	int fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	strbuf in;
	strbuf out;
	size_t out_off;
	uint64_t last_ms;
	bool skipping;           /* dropping the rest of an oversized line */
	bool closing;            /* close once out is written */
	bool dead;
} client;

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
	int sfd, lfd, lockfd;
	client *clients[MAX_CLIENTS];
	size_t n_clients;
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
} qd;

static void logf_(qd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(qd *d, const char *fmt, ...)
{
	if (!d->o->log)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	d->o->log(d->o->log_ctx, line);
}

/* ---- transactions: everything of one loop iteration in one commit ------ */
static void tx(qd *d)
{
	if (!d->in_tx && store_begin(d->st, &d->err) == 0)
		d->in_tx = true;
}

static int tx_commit(qd *d)
{
	if (!d->in_tx)
		return 0;
	d->in_tx = false;
	if (store_commit(d->st, &d->err)) {
		logf_(d, "state database commit failed: %s", d->err.msg);
		return -1;
	}
	return 0;
}

static void save(qd *d, djob *j)
{
	tx(d);
	if (store_update_job(d->st, &j->j, &d->err))
		logf_(d, "%s", d->err.msg);
}

/* ---- config ------------------------------------------------------------- */
static void config_defaults(config *c)
{
	memset(c, 0, sizeof *c);
	c->over_grace = 0.10;
	c->over_samples = 3;
	/* a CUDA context takes roughly 300-500 MiB per process (gpu-sharing.md 7.1) */
	c->context_reserve_bytes = 512 * MiB;
	c->log_retention_ms = 30ULL * 86400 * 1000;
	c->client_timeout_ms = 60000;
	c->policy = SCHED_POLICY_GPUWISE;
}

static bool yes_no(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
		*out = false;
	else
		return false;
	return true;
}

/* "key = value" lines, '#' comments; an unknown key or bad value is an error. */
static int config_load(const char *path, bool must_exist, config *c, gw_error *err)
{
	char *text = NULL;
	size_t len;
	gw_error e2;
	if (gw_read_file(path, false, 1 << 20, &text, &len, &e2)) {
		if (!must_exist && e2.code == GW_ENOENT)
			return 0;
		return gw_fail(err, GW_EIO, "cannot read config '%s': %s", path, e2.msg);
	}
	int rc = 0, lineno = 0;
	for (char *line = text, *next; line; line = next) {
		/* line by line, blank ones counted, so errors name the right line */
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *l = str_trim(line);
		if (!*l)
			continue;
		char *eq = strchr(l, '=');
		if (!eq) {
			rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: expected KEY = VALUE", path, lineno);
			break;
		}
		*eq = 0;
		char *k = str_trim(l), *v = str_trim(eq + 1);
		size_t vl = strlen(v);
		while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			v[--vl] = 0;
		size_t kl = strlen(k);
		while (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t'))
			k[--kl] = 0;
		bool ok = true;
		uint64_t u;
		long long ll;
		if (!strcmp(k, "borrowing"))
			ok = yes_no(v, &c->borrowing);
		else if (!strcmp(k, "vram_cap"))
			ok = yes_no(v, &c->vram_cap);
		else if (!strcmp(k, "over_request")) {
			ok = !strcmp(v, "warn") || !strcmp(v, "stop");
			c->over_stop = !strcmp(v, "stop");
		} else if (!strcmp(k, "over_request_grace")) {
			if (vl && v[vl - 1] == '%')
				v[--vl] = 0; /* "10%" or "10" */
			ok = parse_int(v, 0, 1000, &ll) == 0;
			c->over_grace = (double)ll / 100.0;
		} else if (!strcmp(k, "over_request_samples")) {
			ok = parse_int(v, 1, 1000, &ll) == 0;
			c->over_samples = (int)ll;
		} else if (!strcmp(k, "context_reserve")) {
			ok = parse_size(v, &u) == 0 && u <= 64 * GiB;
			c->context_reserve_bytes = u;
		} else if (!strcmp(k, "log_retention")) {
			ok = parse_duration_ms(v, &u) == 0;
			c->log_retention_ms = u;
		} else if (!strcmp(k, "client_timeout")) {
			ok = parse_duration_ms(v, &u) == 0 && u >= 100;
			c->client_timeout_ms = u;
		} else if (!strcmp(k, "admin_group")) {
			ok = strlen(v) < sizeof c->admin_group;
			if (ok)
				strcpy(c->admin_group, v);
		} else if (!strcmp(k, "policy"))
			ok = sched_policy_parse(v, &c->policy) == 0;
		else {
			rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: unknown key '%s'", path, lineno, k);
			break;
		}
		if (!ok) {
			rc = gw_fail(err, GW_EFORMAT, "config '%s' line %d: bad value '%s' for '%s'", path, lineno, v, k);
			break;
		}
	}
	free(text);
	return rc;
}

/* ---- users and groups --------------------------------------------------- */
static bool user_in_group(uid_t uid, gid_t gid, const char *group)
{
	struct group *g = getgrnam(group);
	if (!g)
		return false;
	if (g->gr_gid == gid)
		return true;
	struct passwd *pw = getpwuid(uid);
	if (!pw)
		return false;
	gid_t groups[256];
	int n = 256;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		n = 256;
	for (int i = 0; i < n; i++)
		if (groups[i] == g->gr_gid)
			return true;
	return false;
}

static bool is_admin(qd *d, const client *c)
{
	if (c->uid == 0 || (!d->root && c->uid == d->self_uid))
		return true;
	return d->cfg.admin_group[0] && user_in_group(c->uid, c->gid, d->cfg.admin_group);
}

static char *user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	return pw ? xstrdup(pw->pw_name) : xasprintf("%u", (unsigned)uid);
}

/* Does "alice,@lab" name this user?  An empty list is everyone. */
static bool member_of(const char *members, uid_t uid, gid_t gid)
{
	if (!members || !*members)
		return true;
	char *copy = xstrdup(members), *sp = NULL;
	char *name = user_name(uid);
	bool yes = false;
	for (char *m = strtok_r(copy, ",", &sp); m && !yes; m = strtok_r(NULL, ",", &sp)) {
		m = str_trim(m);
		if (*m == '@')
			yes = user_in_group(uid, gid, m + 1);
		else
			yes = strcmp(m, name) == 0;
	}
	free(copy);
	free(name);
	return yes;
}

/* ---- GPUs ---------------------------------------------------------------- */
static uint64_t proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* after the ')' comes field 3 (the state); the start time is field 22 */
	p += 2;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	return strtoull(p, NULL, 10);
}

/* True when pid belongs to a queue job: its environment names one. */
static bool proc_is_job(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%u/environ", (unsigned)pid);
	char *text = NULL;
	size_t len = 0;
	gw_error e;
	if (gw_read_file(path, true, 1 << 20, &text, &len, &e))
		return false;
	bool yes = false;
	for (size_t i = 0; i < len; i += strlen(text + i) + 1)
		if (str_starts(text + i, "GPUWISE_JOB_ID=")) {
			yes = true;
			break;
		}
	free(text);
	return yes;
}

/*
 * The PCIe switch above a GPU: in its sysfs path (root port / switch
 * upstream port / switch downstream port / GPU) the upstream port, the
 * third device from the end.  GPUs sharing it sit under one switch.
 * Returns an index into keys[] (grown as new switches appear), or -1.
 */
/*
 * GPU i's NVLink group: the lowest index of the GPUs it reaches over NVLink,
 * directly (a link whose remote end is the other GPU) or through a shared
 * NVSwitch (both link to the same remote bus id), transitively; -1 without
 * NVLink.
 */
static int nvlink_group_of(const hw_snapshot *s, size_t i)
{
	if (!s->gpus[i].n_nvlinks)
		return -1;
	size_t n = s->n_gpus;
	bool *in = xcalloc(n, sizeof *in);
	in[i] = true;
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t a = 0; a < n; a++) {
			if (!in[a])
				continue;
			const hw_gpu *ga = &s->gpus[a];
			for (size_t b = 0; b < n; b++) {
				if (in[b] || !s->gpus[b].n_nvlinks)
					continue;
				const hw_gpu *gb = &s->gpus[b];
				bool linked = false;
				for (int k = 0; k < ga->n_nvlinks && !linked; k++) {
					linked = strcmp(ga->nvlink_peer[k], gb->pci_bus_id) == 0;
					for (int m = 0; m < gb->n_nvlinks && !linked; m++)
						linked = strcmp(ga->nvlink_peer[k], gb->nvlink_peer[m]) == 0 ||
							 strcmp(gb->nvlink_peer[m], ga->pci_bus_id) == 0;
				}
				if (linked)
					in[b] = grew = true;
			}
		}
	}
	int group = (int)i;
	for (size_t a = 0; a < n; a++)
		if (in[a]) {
			group = (int)a;
			break;
		}
	free(in);
	return group;
}

static int pcie_switch_of(const char *bdf, char keys[][32], size_t *n_keys, size_t max)
{
	char rel[128];
	snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s", bdf);
	char *p = gw_path(rel);
	char *real = realpath(p, NULL);
	free(p);
	if (!real)
		return -1;
	const char *chain[32];
	size_t n = 0;
	char *sp = NULL;
	for (char *c = strtok_r(real, "/", &sp); c && n < 32; c = strtok_r(NULL, "/", &sp))
		if (strlen(c) == 12 && c[4] == ':' && c[7] == ':' && c[10] == '.')
			chain[n++] = c;
	int idx = -1;
	if (n >= 4) {
		const char *up = chain[n - 3];
		for (size_t i = 0; i < *n_keys; i++)
			if (strcmp(keys[i], up) == 0)
				idx = (int)i;
		if (idx < 0 && *n_keys < max) {
			snprintf(keys[*n_keys], 32, "%s", up);
			idx = (int)(*n_keys)++;
		}
	}
	free(real);
	return idx;
}

static void gpus_free(qd *d)
{
	for (size_t i = 0; i < d->n_gpus; i++)
		free(d->gpus[i].migs);
	free(d->gpus);
	d->gpus = NULL;
	d->n_gpus = 0;
}

/* Read the GPUs: identity, memory, MIG instances, memory held outside the queue. */
static void gpus_refresh(qd *d)
{
	if (!d->hw)
		return;
	hw_snapshot s;
	gw_error e;
	if (hw_sample(d->hw, &s, &e))
		return;
	/* keep the index order stable: only NVML devices, in NVML order */
	sched_node_gpu *g = xcalloc(s.n_gpus ? s.n_gpus : 1, sizeof *g);
	size_t n = 0;
	char switches[64][32];
	size_t n_switches = 0;
	for (size_t i = 0; i < s.n_gpus; i++) {
		const hw_gpu *h = &s.gpus[i];
		if (h->nvml_index < 0)
			continue;
		sched_node_gpu *x = &g[n++];
		snprintf(x->uuid, sizeof x->uuid, "%s", h->uuid);
		x->mem_total_bytes = HW_VALID(h->mem_total_bytes) ? (uint64_t)h->mem_total_bytes.v : 0;
		x->lost = h->error[0] || !x->mem_total_bytes;
		x->numa = -1;
		x->nvlink_group = -1;
		x->pcie_switch = -1;
		char path[128];
		long long numa;
		snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", h->pci_bus_id);
		if (gw_read_ll(path, &numa) == 0)
			x->numa = (int)numa;
		x->nvlink_group = nvlink_group_of(&s, i);
		x->pcie_switch = pcie_switch_of(h->pci_bus_id, switches, &n_switches, 64);
		uint64_t outside = HW_VALID(h->mem_reserved_bytes) ? (uint64_t)h->mem_reserved_bytes.v : 0;
		for (size_t k = 0; k < h->n_procs; k++)
			if (HW_VALID(h->procs[k].used_mem_bytes) && !proc_is_job((pid_t)h->procs[k].pid))
				outside += (uint64_t)h->procs[k].used_mem_bytes.v;
		x->mem_outside_bytes = outside;
		if (h->n_migs) {
			x->migs = xcalloc(h->n_migs, sizeof *x->migs);
			x->n_migs = h->n_migs;
			for (size_t k = 0; k < h->n_migs; k++) {
				const char *nm = strstr(h->migs[k].name, "MIG ");
				snprintf(x->migs[k].uuid, sizeof x->migs[k].uuid, "%s", h->migs[k].uuid);
				snprintf(x->migs[k].profile, sizeof x->migs[k].profile, "%s", nm ? nm + 4 : h->migs[k].name);
				x->migs[k].mem_total_bytes = HW_VALID(h->migs[k].mem_total_bytes)
								     ? (uint64_t)h->migs[k].mem_total_bytes.v : 0;
			}
		}
	}
	hw_snapshot_release(&s);
	gpus_free(d);
	d->gpus = g;
	d->n_gpus = n;
}

/* ---- jobs in memory -------------------------------------------------------- */
static djob *find_job(qd *d, uint64_t id)
{
	for (size_t i = 0; i < d->n_jobs; i++)
		if (d->jobs[i]->j.id == id)
			return d->jobs[i];
	return NULL;
}

static void djob_free(djob *j)
{
	if (!j)
		return;
	job_release(&j->j);
	free(j->stop_note);
	free(j->preempt_note);
	free(j);
}

static void drop_job(qd *d, djob *j)
{
	for (size_t i = 0; i < d->n_jobs; i++)
		if (d->jobs[i] == j) {
			memmove(&d->jobs[i], &d->jobs[i + 1], (d->n_jobs - i - 1) * sizeof *d->jobs);
			d->n_jobs--;
			break;
		}
	djob_free(j);
}

static void set_reason(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(job *j, const char *fmt, ...)
{
	free(j->reason);
	j->reason = NULL;
	if (!fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	strbuf sb = STRBUF_INIT;
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	j->reason = sb_detach(&sb);
}

static char *job_path(qd *d, const char *dir, uint64_t id, const char *ext)
{
	return xasprintf("%s/%llu.%s", dir, (unsigned long long)id, ext);
}

/* The job ended: record it and take it out of memory (or requeue it when preempted). */
static void job_ended(qd *d, djob *x, int status, bool known)
{
	job *j = &x->j;
	j->end_ms = wall_ms();
	j->exit_status = status;
	j->pid = 0;
	j->pid_start_ticks = 0;
	char t[32];
	switch (x->stop) {
	case STOP_PREEMPT:
		j->state = JOB_QUEUED;
		j->start_ms = j->end_ms = 0;
		j->n_placed = 0;
		j->mig_idx = -1;
		j->borrowed = false;
		free(x->preempt_note);
		x->preempt_note = xstrdup(x->stop_note ? x->stop_note : "its quota was reclaimed");
		set_reason(j, "preempted and requeued: %s", x->preempt_note);
		break;
	case STOP_CANCEL:
		j->state = JOB_CANCELLED;
		set_reason(j, "cancelled while running");
		break;
	case STOP_TIMELIMIT:
		j->state = JOB_FAILED;
		set_reason(j, "stopped at its time limit of %s", fmt_duration(t, sizeof t, j->spec.time_limit_ms));
		break;
	case STOP_OVER:
		j->state = JOB_FAILED;
		set_reason(j, "%s", x->stop_note ? x->stop_note : "stopped over its VRAM request");
		break;
	default:
		if (!known) {
			j->state = JOB_FAILED;
			set_reason(j, "lost: its process ended while the daemon was down and left no exit status");
		} else if (status == 0) {
			j->state = JOB_DONE;
			if (!x->over_noted)
				set_reason(j, NULL);
		} else {
			j->state = JOB_FAILED;
			if (!x->over_noted) {
				if (status > 128)
					set_reason(j, "exit status %d (signal %d)", status, status - 128);
				else
					set_reason(j, "exit status %d", status);
			}
		}
	}
	x->stop = STOP_NONE;
	x->own_child = false;
	save(d, x);
	logf_(d, "job %llu %s (status %d)", (unsigned long long)j->id, job_state_name(j->state), status);
	d->dirty = true;
	if (job_state_ended(j->state))
		drop_job(d, x);
}

static int read_status_file(qd *d, uint64_t id, int *status)
{
	char *p = job_path(d, d->run_dir, id, "status");
	char *text = NULL;
	size_t len;
	gw_error e;
	int rc = gw_read_file(p, false, 64, &text, &len, &e);
	free(p);
	if (rc || !len) {
		free(text);
		return -1;
	}
	*status = atoi(text);
	free(text);
	return 0;
}

static void signal_job(djob *x, int sig)
{
	if (x->j.pid > 0)
		kill(-x->j.pid, sig);
}

static void stop_job(qd *d, djob *x, int why, const char *note)
{
	if (x->stop)
		return;
	x->stop = why;
	free(x->stop_note);
	x->stop_note = note ? xstrdup(note) : NULL;
	x->kill_at_ms = now_ms() + KILL_AFTER_MS;
	signal_job(x, SIGTERM);
}

/* ---- launching ------------------------------------------------------------ */
static void add_env(char ***env, size_t *n, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_env(char ***env, size_t *n, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf sb = STRBUF_INIT;
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	char *s = sb_detach(&sb);
	size_t name_len = strcspn(s, "=");
	for (size_t i = 0; i < *n; i++)
		if (strncmp((*env)[i], s, name_len + 1) == 0) {
			free((*env)[i]);
			(*env)[i] = s;
			return;
		}
	*env = xgrow(*env, cap, *n + 2, sizeof **env);
	(*env)[(*n)++] = s;
	(*env)[*n] = NULL;
}

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void write_str(int fd, const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/*
 * Start the job: fork a shim that becomes the submitting user, starts
 * `gpuwise run` with the job's GPUs and waits for it, writing the exit
 * status to run/ID.status.  Returns the shim's pid, or -1.
 */
static pid_t launch(qd *d, djob *x)
{
	job *j = &x->j;
	const job_spec *s = &j->spec;
	char **env = NULL;
	size_t n_env = 0, cap_env = 0;
	struct passwd *pw = getpwuid(s->uid);
	char *uname = pw ? xstrdup(pw->pw_name) : NULL;
	char *home = xstrdup(pw && pw->pw_dir ? pw->pw_dir : "/");
	char *shell = xstrdup(pw && pw->pw_shell ? pw->pw_shell : "/bin/sh");
	/* a clean environment plus what the user passed explicitly */
	add_env(&env, &n_env, &cap_env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	add_env(&env, &n_env, &cap_env, "HOME=%s", home);
	add_env(&env, &n_env, &cap_env, "SHELL=%s", shell);
	if (uname) {
		add_env(&env, &n_env, &cap_env, "USER=%s", uname);
		add_env(&env, &n_env, &cap_env, "LOGNAME=%s", uname);
	}
	/* where the daemon itself finds the vendor libraries (and test doubles) */
	static const char *const pass[] = {"GPUWISE_NVML_LIB", "GPUWISE_CUDA_LIB", "GPUWISE_FAKE_SCENARIO",
					   "GPUWISE_FAKE_LOG", "GPUWISE_FAKE_CLOCK", "GPUWISE_ROOT"};
	for (size_t i = 0; i < sizeof pass / sizeof *pass; i++)
		if (getenv(pass[i]))
			add_env(&env, &n_env, &cap_env, "%s=%s", pass[i], getenv(pass[i]));
	for (size_t i = 0; i < s->n_env; i++)
		add_env(&env, &n_env, &cap_env, "%s", s->env[i]);
	strbuf vis = STRBUF_INIT;
	for (int i = 0; i < j->n_placed; i++) {
		int g = j->gpu_idx[i];
		if (g < 0 || (size_t)g >= d->n_gpus)
			continue;
		if (j->mig_idx >= 0 && (size_t)j->mig_idx < d->gpus[g].n_migs)
			sb_printf(&vis, "%s%s", i ? "," : "", d->gpus[g].migs[j->mig_idx].uuid);
		else
			sb_printf(&vis, "%s%s", i ? "," : "", d->gpus[g].uuid);
	}
	add_env(&env, &n_env, &cap_env, "CUDA_VISIBLE_DEVICES=%s", sb_str(&vis));
	add_env(&env, &n_env, &cap_env, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
	add_env(&env, &n_env, &cap_env, "GPUWISE_JOB_ID=%llu", (unsigned long long)j->id);
	add_env(&env, &n_env, &cap_env, "GPUWISE_PROJECT=%s", s->project);
	sb_release(&vis);

	/* gpuwise run [restart options] [run_args] --log run/ID.jsonl -- argv */
	size_t cap_a = 0, n_a = 0;
	char **argv = NULL;
#define ARG(str) do { argv = xgrow(argv, &cap_a, n_a + 2, sizeof *argv); argv[n_a++] = (str); argv[n_a] = NULL; } while (0)
	ARG(xstrdup(d->exe));
	ARG(xstrdup("run"));
	ARG(xstrdup("--restart"));
	ARG(xstrdup(job_restart_name(s->restart)));
	ARG(xstrdup("--max-restarts"));
	ARG(s->max_restarts < 0 ? xstrdup("unlimited") : xasprintf("%d", s->max_restarts));
	for (size_t i = 0; i < s->n_run_args; i++)
		ARG(xstrdup(s->run_args[i]));
	if (d->cfg.vram_cap && s->mode == JOB_MODE_SHARED) {
		/* a hard cap at the request, per GPU (libgpuwise-cap.so, issue 14) */
		ARG(xstrdup("--vram-cap"));
		ARG(xasprintf("%llu", (unsigned long long)s->vram_bytes));
	}
	ARG(xstrdup("--log"));
	ARG(job_path(d, d->run_dir, j->id, "jsonl"));
	ARG(xstrdup("--"));
	for (size_t i = 0; i < s->argc; i++)
		ARG(xstrdup(s->argv[i]));
#undef ARG
	char *out_path = job_path(d, d->logs_dir, j->id, "log");
	char *st_path = job_path(d, d->run_dir, j->id, "status");
	char *jl_path = job_path(d, d->run_dir, j->id, "jsonl");
	unlink(st_path);
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		int logfd = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
		int stfd = open(st_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		int jlfd = open(jl_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (logfd < 0 || stfd < 0 || jlfd < 0)
			_exit(125);
		if (d->root) {
			if (fchown(logfd, s->uid, s->gid) || fchown(stfd, s->uid, s->gid) ||
			    fchown(jlfd, s->uid, s->gid))
				_exit(125);
			if ((uname ? initgroups(uname, s->gid) : setgroups(0, NULL)) || setgid(s->gid) ||
			    setuid(s->uid))
				_exit(125);
			/* never run a normal user's job with root rights */
			if (s->uid != 0 && (getuid() == 0 || geteuid() == 0 || setuid(0) == 0))
				_exit(125);
		}
		close(jlfd);
		int nullfd = open("/dev/null", O_RDONLY);
		dup2(nullfd, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != stfd)
				close(fd);
		if (chdir(s->cwd ? s->cwd : home) != 0) {
			write_str(2, "gpuwise: cannot enter the job's working directory '");
			write_str(2, s->cwd ? s->cwd : home);
			write_str(2, "'\n");
			write_str(stfd, "126\n");
			_exit(126);
		}
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		pid_t c = fork();
		if (c == 0) {
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			execve(argv[0], argv, env);
			write_str(2, "gpuwise: cannot start the supervisor\n");
			_exit(127);
		}
		int ws = 0, code = 127;
		if (c > 0) {
			while (waitpid(c, &ws, 0) < 0 && errno == EINTR)
				;
			code = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
		}
		char buf[16];
		snprintf(buf, sizeof buf, "%d\n", code);
		write_str(stfd, buf);
		_exit(code);
	}
	free(out_path);
	free(st_path);
	free(jl_path);
	free_strv(argv);
	free_strv(env);
	free(uname);
	free(home);
	free(shell);
	return pid;
}

/* ---- scheduling --------------------------------------------------------------- */
static void schedule(qd *d)
{
	d->dirty = false;
	sched_project *pr = xcalloc(d->n_projects + 1, sizeof *pr);
	size_t np = 0;
	bool have_default = false;
	for (size_t i = 0; i < d->n_projects; i++) {
		pr[np++] = (sched_project){d->projects[i].name, d->projects[i].vram_bytes, d->projects[i].gpus,
					   d->projects[i].jobs, 0, 0, 0};
		have_default |= strcmp(d->projects[i].name, "default") == 0;
	}
	if (!have_default)
		pr[np++] = (sched_project){"default", SCHED_UNLIMITED, SCHED_UNLIMITED, SCHED_UNLIMITED, 0, 0, 0};
	job **jobs = xcalloc(d->n_jobs ? d->n_jobs : 1, sizeof *jobs);
	for (size_t i = 0; i < d->n_jobs; i++) {
		jobs[i] = &d->jobs[i]->j;
		/* a job being stopped is not a victim twice */
		if (d->jobs[i]->stop)
			jobs[i]->borrowed = false;
	}
	sched_config cfg = {d->cfg.policy, d->cfg.borrowing, d->cfg.context_reserve_bytes};
	sched_result res = {0};
	sched_pass(&cfg, d->gpus, d->n_gpus, pr, np, jobs, d->n_jobs, &res);
	/* a preempted job says so until it starts again */
	for (size_t i = 0; i < d->n_jobs; i++) {
		djob *x = d->jobs[i];
		if (x->preempt_note && x->j.state == JOB_QUEUED &&
		    !(x->j.reason && str_starts(x->j.reason, "preempted and requeued: "))) {
			char *r = x->j.reason;
			x->j.reason = NULL;
			set_reason(&x->j, "preempted and requeued: %s; now %s", x->preempt_note, r ? r : "waiting");
			free(r);
		}
	}
	/* first: record every start as running (never run twice after a crash) */
	uint64_t now = wall_ms();
	for (size_t i = 0; i < res.n; i++) {
		sched_decision *dc = &res.d[i];
		djob *x = (djob *)dc->job;
		if (dc->action == SCHED_PREEMPT) {
			char note[160];
			snprintf(note, sizeof note, "a job of a project within its quota needed the GPUs");
			for (size_t k = 0; k < res.n; k++)
				if (res.d[k].action == SCHED_START) {
					snprintf(note, sizeof note, "project %s reclaimed its quota for job %llu",
						 res.d[k].job->spec.project, (unsigned long long)res.d[k].job->id);
					break;
				}
			logf_(d, "job %llu preempted: %s", (unsigned long long)x->j.id, note);
			stop_job(d, x, STOP_PREEMPT, note);
			continue;
		}
		job *j = &x->j;
		free(x->preempt_note);
		x->preempt_note = NULL;
		j->state = JOB_RUNNING;
		j->start_ms = now;
		j->n_placed = dc->n_gpus;
		memcpy(j->gpu_idx, dc->gpu_idx, sizeof j->gpu_idx);
		j->mig_idx = dc->mig_idx;
		j->borrowed = dc->borrowed;
		j->pid = 0;
		set_reason(j, dc->borrowed ? "running on quota borrowed from idle projects" : NULL);
		save(d, x);
	}
	tx_commit(d);
	for (size_t i = 0; i < res.n; i++) {
		sched_decision *dc = &res.d[i];
		if (dc->action != SCHED_START)
			continue;
		djob *x = (djob *)dc->job;
		pid_t pid = launch(d, x);
		if (pid < 0) {
			x->j.state = JOB_FAILED;
			x->j.end_ms = wall_ms();
			set_reason(&x->j, "could not start: %s", strerror(errno));
			save(d, x);
			drop_job(d, x);
			continue;
		}
		x->j.pid = pid;
		x->j.pid_start_ticks = proc_start_ticks(pid);
		x->own_child = true;
		x->log_pos = 0;
		x->over_samples = 0;
		logf_(d, "job %llu started (pid %d)", (unsigned long long)x->j.id, (int)pid);
		save(d, x);
	}
	sched_result_release(&res);
	free(jobs);
	free(pr);
}

/* ---- watching running jobs ---------------------------------------------------- */
/* The supervisor's newest job_gpu_mem_bytes samples since the last look. */
static void check_usage(qd *d, djob *x)
{
	job *j = &x->j;
	char *p = job_path(d, d->run_dir, j->id, "jsonl");
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd < 0)
		return;
	char buf[65536];
	ssize_t n = pread(fd, buf, sizeof buf - 1, (off_t)x->log_pos);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	char *last_nl = strrchr(buf, '\n');
	if (!last_nl)
		return;
	*last_nl = 0;
	x->log_pos += (uint64_t)(last_nl - buf) + 1;
	char *sp = NULL;
	for (char *line = strtok_r(buf, "\n", &sp); line; line = strtok_r(NULL, "\n", &sp)) {
		const char *k = strstr(line, "\"job_gpu_mem_bytes\":");
		if (!k)
			continue;
		k += strlen("\"job_gpu_mem_bytes\":");
		if (*k < '0' || *k > '9')
			continue;
		uint64_t used = strtoull(k, NULL, 10);
		if (used > j->vram_peak_bytes)
			j->vram_peak_bytes = used;
		uint64_t req = j->spec.vram_bytes * (uint64_t)j->spec.n_gpus;
		if (j->spec.mode != JOB_MODE_SHARED || !req)
			continue;
		if ((double)used > (double)req * (1.0 + d->cfg.over_grace)) {
			if (++x->over_samples < d->cfg.over_samples || x->over_noted)
				continue;
			char a[32], b[32];
			x->over_noted = true;
			if (d->cfg.over_stop) {
				char note[200];
				snprintf(note, sizeof note, "stopped: used %s of GPU memory, over its request of %s by more than %.0f%%",
					 fmt_bytes(a, sizeof a, used), fmt_bytes(b, sizeof b, req), d->cfg.over_grace * 100);
				logf_(d, "job %llu %s", (unsigned long long)j->id, note);
				stop_job(d, x, STOP_OVER, note);
			} else {
				set_reason(j, "warning: uses %s of GPU memory, over its request of %s by more than %.0f%%",
					   fmt_bytes(a, sizeof a, used), fmt_bytes(b, sizeof b, req), d->cfg.over_grace * 100);
				logf_(d, "job %llu %s", (unsigned long long)j->id, j->reason);
			}
			save(d, x);
		} else {
			x->over_samples = 0;
		}
	}
}

static void watch_jobs(qd *d)
{
	int ws;
	pid_t pid;
	while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
		for (size_t i = 0; i < d->n_jobs; i++) {
			djob *x = d->jobs[i];
			if (x->j.state == JOB_RUNNING && x->j.pid == pid) {
				int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
				read_status_file(d, x->j.id, &status);
				job_ended(d, x, status, true);
				break;
			}
		}
	}
	uint64_t mono = now_ms(), wall = wall_ms();
	for (size_t i = 0; i < d->n_jobs; i++) {
		djob *x = d->jobs[i];
		job *j = &x->j;
		if (j->state != JOB_RUNNING || j->pid <= 0)
			continue;
		if (!x->own_child) {
			/* re-adopted: its process is not our child; watch /proc */
			uint64_t t = proc_start_ticks(j->pid);
			if (t == 0 || t != j->pid_start_ticks) {
				int status = 0;
				bool known = read_status_file(d, j->id, &status) == 0;
				job_ended(d, x, status, known);
				i--;
				continue;
			}
		}
		if (j->spec.time_limit_ms && !x->stop && wall > j->start_ms + j->spec.time_limit_ms)
			stop_job(d, x, STOP_TIMELIMIT, NULL);
		if (x->stop && mono > x->kill_at_ms) {
			signal_job(x, SIGKILL);
			x->kill_at_ms = mono + KILL_AFTER_MS;
		}
		check_usage(d, x);
	}
}

/* On start: running jobs whose process lives on are adopted; the others end now. */
static void readopt(qd *d)
{
	for (size_t i = 0; i < d->n_jobs; i++) {
		djob *x = d->jobs[i];
		job *j = &x->j;
		if (j->state != JOB_RUNNING)
			continue;
		if (j->pid > 0 && j->pid_start_ticks && proc_start_ticks(j->pid) == j->pid_start_ticks) {
			logf_(d, "job %llu re-adopted (pid %d)", (unsigned long long)j->id, j->pid);
			x->own_child = false;
			continue;
		}
		int status = 0;
		if (j->pid > 0 && read_status_file(d, j->id, &status) == 0) {
			job_ended(d, x, status, true);
		} else {
			j->state = JOB_FAILED;
			j->end_ms = wall_ms();
			set_reason(j, j->pid > 0 ? "lost: its process ended while the daemon was down and left no exit status"
						 : "the daemon stopped while starting it; it is not started again");
			save(d, x);
			drop_job(d, x);
		}
		i--;
	}
	tx_commit(d);
}

static void expire_logs(qd *d)
{
	uint64_t now = wall_ms();
	if (now < d->cfg.log_retention_ms)
		return;
	uint64_t *ids;
	size_t n;
	tx(d);
	if (store_expire_logs(d->st, now - d->cfg.log_retention_ms, &ids, &n, &d->err))
		return;
	for (size_t i = 0; i < n; i++) {
		static const char *const ext[] = {"log", "jsonl", "status"};
		for (int k = 0; k < 3; k++) {
			char *p = job_path(d, k ? d->run_dir : d->logs_dir, ids[i], ext[k]);
			unlink(p);
			free(p);
		}
	}
	if (n)
		logf_(d, "removed the logs of %zu job%s ended more than the retention ago", n, n == 1 ? "" : "s");
	free(ids);
}

/* ---- replies ---------------------------------------------------------------------- */
static void reply(client *c, json_t *o)
{
	json_object_set_new(o, "v", json_integer(PROTO_VERSION));
	char *t = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!t)
		return;
	sb_puts(&c->out, t);
	sb_add(&c->out, "\n", 1);
	free(t);
}

static void reply_error(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_error(client *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *o = json_object();
	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "error", json_string(msg));
	reply(c, o);
}

static json_t *ok_reply(void)
{
	json_t *o = json_object();
	json_object_set_new(o, "ok", json_true());
	return o;
}

static json_t *job_json(qd *d, const job *j, bool detail)
{
	json_t *o = json_object();
	const job_spec *s = &j->spec;
	uint64_t now = wall_ms();
	json_object_set_new(o, "id", json_integer((json_int_t)j->id));
	json_object_set_new(o, "name", json_string(s->name ? s->name : s->argc ? s->argv[0] : "?"));
	json_object_set_new(o, "state", json_string(job_state_name(j->state)));
	json_object_set_new(o, "project", json_string(s->project ? s->project : "default"));
	json_object_set_new(o, "user", json_string(s->user ? s->user : "?"));
	json_object_set_new(o, "uid", json_integer(s->uid));
	json_object_set_new(o, "mode", s->mode == JOB_MODE_MIG ? json_sprintf("mig:%s", s->mig_profile)
							      : json_string(job_mode_name(s->mode)));
	json_object_set_new(o, "gpus_requested", json_integer(s->n_gpus));
	json_object_set_new(o, "vram_request_bytes", json_integer((json_int_t)s->vram_bytes));
	json_object_set_new(o, "vram_measured_bytes", jint_or_null(j->vram_peak_bytes > 0, (long long)j->vram_peak_bytes));
	json_object_set_new(o, "priority", json_integer(s->priority));
	json_t *g = json_array(), *u = json_array();
	for (int i = 0; i < j->n_placed; i++) {
		json_array_append_new(g, json_integer(j->gpu_idx[i]));
		int gi = j->gpu_idx[i];
		if (gi >= 0 && (size_t)gi < d->n_gpus) {
			if (j->mig_idx >= 0 && (size_t)j->mig_idx < d->gpus[gi].n_migs)
				json_array_append_new(u, json_string(d->gpus[gi].migs[j->mig_idx].uuid));
			else
				json_array_append_new(u, json_string(d->gpus[gi].uuid));
		}
	}
	json_object_set_new(o, "gpus", g);
	json_object_set_new(o, "gpu_uuids", u);
	json_object_set_new(o, "borrowed", json_boolean(j->borrowed));
	json_object_set_new(o, "submit_ms", json_integer((json_int_t)j->submit_ms));
	json_object_set_new(o, "start_ms", jint_or_null(j->start_ms > 0, (long long)j->start_ms));
	json_object_set_new(o, "end_ms", jint_or_null(j->end_ms > 0, (long long)j->end_ms));
	uint64_t wait_end = j->start_ms ? j->start_ms : j->end_ms ? j->end_ms : now;
	json_object_set_new(o, "wait_ms", json_integer((json_int_t)(wait_end > j->submit_ms ? wait_end - j->submit_ms : 0)));
	uint64_t run_end = j->end_ms ? j->end_ms : now;
	json_object_set_new(o, "run_ms", jint_or_null(j->start_ms > 0, (long long)(j->start_ms && run_end > j->start_ms ? run_end - j->start_ms : 0)));
	json_object_set_new(o, "exit_status", jint_or_null(job_state_ended(j->state) && j->state != JOB_CANCELLED, j->exit_status));
	json_object_set_new(o, "reason", jstr_or_null(j->reason));
	if (detail) {
		json_object_set_new(o, "pid", jint_or_null(j->pid > 0, j->pid));
		json_object_set_new(o, "spec", proto_spec_to_json(s, true));
	}
	return o;
}

typedef struct list_ctx {
	qd *d;
	json_t *arr;
} list_ctx;

static void list_one(void *ctx, const job *j)
{
	list_ctx *l = ctx;
	json_array_append_new(l->arr, job_json(l->d, j, false));
}

static bool may_touch(qd *d, const client *c, const job *j)
{
	return j->spec.uid == c->uid || is_admin(d, c);
}

static const store_project *project_find(qd *d, const char *name)
{
	for (size_t i = 0; i < d->n_projects; i++)
		if (strcmp(d->projects[i].name, name) == 0)
			return &d->projects[i];
	return NULL;
}

static void do_submit(qd *d, client *c, proto_req *r)
{
	djob *x = xcalloc(1, sizeof *x);
	job *j = &x->j;
	j->spec = r->spec;
	memset(&r->spec, 0, sizeof r->spec);
	job_spec *s = &j->spec;
	s->uid = c->uid;
	s->gid = c->gid;
	free(s->user);
	s->user = user_name(c->uid);
	if (!s->project)
		s->project = xstrdup("default");
	const store_project *p = project_find(d, s->project);
	char why[256];
	const char *bad = NULL;
	if (!p && strcmp(s->project, "default") != 0) {
		snprintf(why, sizeof why, "no project '%s' (an administrator creates it with 'gpuwise quota set')", s->project);
		bad = why;
	} else if (p && !is_admin(d, c) && !member_of(p->members, c->uid, c->gid)) {
		snprintf(why, sizeof why, "user %s is not a member of project '%s'", s->user, s->project);
		bad = why;
	} else if (!s->cwd) {
		bad = "'cwd' is required";
	} else if (s->after_id && !find_job(d, s->after_id)) {
		job tmp;
		gw_error e;
		if (store_get_job(d->st, s->after_id, &tmp, &e)) {
			snprintf(why, sizeof why, "no job %llu to wait for", (unsigned long long)s->after_id);
			bad = why;
		} else
			job_release(&tmp);
	}
	if (!bad)
		bad = sched_check_fits(s, d->gpus, d->n_gpus, d->cfg.context_reserve_bytes, why, sizeof why);
	if (bad) {
		reply_error(c, "%s", bad);
		djob_free(x);
		return;
	}
	j->state = JOB_QUEUED;
	j->submit_ms = wall_ms();
	j->mig_idx = -1;
	tx(d);
	if (store_add_job(d->st, j, &d->err)) {
		reply_error(c, "%s", d->err.msg);
		djob_free(x);
		return;
	}
	d->jobs = xgrow(d->jobs, &d->cap_jobs, d->n_jobs + 1, sizeof *d->jobs);
	d->jobs[d->n_jobs++] = x;
	d->dirty = true;
	json_t *o = ok_reply();
	json_object_set_new(o, "id", json_integer((json_int_t)j->id));
	reply(c, o);
}

static void do_queue(qd *d, client *c, proto_req *r)
{
	json_t *o = ok_reply(), *arr = json_array();
	for (size_t i = 0; i < d->n_jobs; i++)
		json_array_append_new(arr, job_json(d, &d->jobs[i]->j, false));
	if (r->all) {
		list_ctx l = {d, arr};
		gw_error e;
		store_each_ended(d->st, r->limit ? r->limit : 1000, list_one, &l, &e);
	}
	json_object_set_new(o, "jobs", arr);
	reply(c, o);
}

/* A job by id, from memory or the store; *tmp is released by the caller when used. */
static const job *lookup(qd *d, uint64_t id, job *tmp, bool *from_store)
{
	djob *x = find_job(d, id);
	*from_store = false;
	if (x)
		return &x->j;
	gw_error e;
	if (store_get_job(d->st, id, tmp, &e))
		return NULL;
	*from_store = true;
	return tmp;
}

static void do_show(qd *d, client *c, proto_req *r)
{
	job tmp;
	bool fs;
	const job *j = lookup(d, r->ids[0], &tmp, &fs);
	if (!j) {
		reply_error(c, "no job %llu", (unsigned long long)r->ids[0]);
		return;
	}
	if (!may_touch(d, c, j))
		reply_error(c, "job %llu belongs to another user", (unsigned long long)r->ids[0]);
	else {
		json_t *o = ok_reply();
		json_object_set_new(o, "job", job_json(d, j, true));
		reply(c, o);
	}
	if (fs)
		job_release(&tmp);
}

/* Bytes as a JSON string: invalid UTF-8 becomes '?', a split last character is left for later. */
static json_t *text_json(char *buf, size_t *n)
{
	size_t len = *n;
	/* do not cut a multi-byte character in two */
	size_t k = len;
	for (size_t back = 0; back < 3 && k > 0; back++) {
		unsigned char ch = (unsigned char)buf[k - 1];
		if ((ch & 0xC0) == 0x80) {
			k--;
			continue;
		}
		if (ch >= 0xC0) {
			size_t need = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : 2;
			if (len - (k - 1) < need)
				len = k - 1;
		}
		break;
	}
	*n = len;
	json_t *s = json_stringn(buf, len);
	if (s)
		return s;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] >= 0x80 || buf[i] == 0)
			buf[i] = '?';
	return json_stringn(buf, len);
}

static void do_logs(qd *d, client *c, proto_req *r)
{
	job tmp;
	bool fs;
	const job *j = lookup(d, r->ids[0], &tmp, &fs);
	if (!j) {
		reply_error(c, "no job %llu", (unsigned long long)r->ids[0]);
		return;
	}
	if (!may_touch(d, c, j)) {
		reply_error(c, "job %llu belongs to another user", (unsigned long long)r->ids[0]);
		goto out;
	}
	char *p = job_path(d, d->logs_dir, j->id, "log");
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(p);
	char *buf = xmalloc(LOG_CHUNK);
	size_t got = 0;
	if (fd >= 0) {
		ssize_t n = pread(fd, buf, LOG_CHUNK, (off_t)r->offset);
		got = n > 0 ? (size_t)n : 0;
		close(fd);
	} else if (job_state_ended(j->state) && j->start_ms) {
		free(buf);
		reply_error(c, "the logs of job %llu are gone (older than the retention)", (unsigned long long)j->id);
		goto out;
	}
	json_t *o = ok_reply();
	json_object_set_new(o, "data", text_json(buf, &got));
	json_object_set_new(o, "offset", json_integer((json_int_t)(r->offset + got)));
	json_object_set_new(o, "state", json_string(job_state_name(j->state)));
	json_object_set_new(o, "ended", json_boolean(job_state_ended(j->state)));
	free(buf);
	reply(c, o);
out:
	if (fs)
		job_release(&tmp);
}

/* cancel, hold, release: all or nothing per id, one result each. */
static void do_change(qd *d, client *c, proto_req *r)
{
	json_t *o = ok_reply(), *res = json_array();
	bool all_ok = true;
	for (size_t i = 0; i < r->n_ids; i++) {
		uint64_t id = r->ids[i];
		djob *x = find_job(d, id);
		json_t *e = json_object();
		json_object_set_new(e, "id", json_integer((json_int_t)id));
		const char *err = NULL;
		char buf[128];
		if (!x) {
			job tmp;
			gw_error ge;
			if (store_get_job(d->st, id, &tmp, &ge) == 0) {
				snprintf(buf, sizeof buf, "job %llu has already ended (%s)", (unsigned long long)id,
					 job_state_name(tmp.state));
				job_release(&tmp);
				err = buf;
			} else {
				snprintf(buf, sizeof buf, "no job %llu", (unsigned long long)id);
				err = buf;
			}
		} else if (!may_touch(d, c, &x->j)) {
			snprintf(buf, sizeof buf, "job %llu belongs to another user", (unsigned long long)id);
			err = buf;
		} else if (r->op == PROTO_CANCEL) {
			if (x->j.state == JOB_RUNNING) {
				if (x->stop == STOP_PREEMPT)
					x->stop = STOP_CANCEL; /* already stopping: end cancelled, not requeued */
				stop_job(d, x, STOP_CANCEL, NULL);
				json_object_set_new(e, "state", json_string("cancelling"));
			} else {
				x->j.state = JOB_CANCELLED;
				x->j.end_ms = wall_ms();
				set_reason(&x->j, "cancelled before it started");
				save(d, x);
				drop_job(d, x);
				json_object_set_new(e, "state", json_string("cancelled"));
				d->dirty = true;
			}
		} else if (r->op == PROTO_HOLD) {
			if (x->j.state != JOB_QUEUED && x->j.state != JOB_HELD) {
				snprintf(buf, sizeof buf, "job %llu is %s; only a queued job can be held",
					 (unsigned long long)id, job_state_name(x->j.state));
				err = buf;
			} else {
				x->j.state = JOB_HELD;
				set_reason(&x->j, "held by %s", c->uid == x->j.spec.uid ? "its owner" : "an administrator");
				save(d, x);
				json_object_set_new(e, "state", json_string("held"));
				d->dirty = true;
			}
		} else {
			if (x->j.state != JOB_HELD) {
				snprintf(buf, sizeof buf, "job %llu is %s, not held", (unsigned long long)id,
					 job_state_name(x->j.state));
				err = buf;
			} else {
				x->j.state = JOB_QUEUED;
				set_reason(&x->j, NULL);
				save(d, x);
				json_object_set_new(e, "state", json_string("queued"));
				d->dirty = true;
			}
		}
		if (err) {
			json_object_set_new(e, "error", json_string(err));
			all_ok = false;
		}
		json_array_append_new(res, e);
	}
	json_object_set_new(o, "results", res);
	json_object_set(o, "ok", json_boolean(all_ok));
	reply(c, o);
}

static json_t *limit_json(uint64_t v)
{
	return v == UINT64_MAX ? json_null() : json_integer((json_int_t)v);
}

static void do_quota(qd *d, client *c)
{
	/* usage of running jobs by project */
	json_t *o = ok_reply(), *arr = json_array();
	size_t n = d->n_projects;
	bool have_default = project_find(d, "default") != NULL;
	for (size_t i = 0; i < n + !have_default; i++) {
		const char *name = i < n ? d->projects[i].name : "default";
		uint64_t uv = 0, ug = 0, uj = 0, qv = 0;
		size_t queued = 0;
		for (size_t k = 0; k < d->n_jobs; k++) {
			const job *j = &d->jobs[k]->j;
			if (strcmp(j->spec.project, name))
				continue;
			if (j->state == JOB_RUNNING) {
				uv += sched_job_vram_bytes(j, d->gpus, d->n_gpus);
				ug += sched_job_gpus(j);
				uj++;
				qv += j->borrowed;
			} else
				queued++;
		}
		json_t *p = json_object();
		json_object_set_new(p, "project", json_string(name));
		json_object_set_new(p, "vram_quota_bytes", limit_json(i < n ? d->projects[i].vram_bytes : UINT64_MAX));
		json_object_set_new(p, "gpus_quota", limit_json(i < n ? d->projects[i].gpus : UINT64_MAX));
		json_object_set_new(p, "jobs_quota", limit_json(i < n ? d->projects[i].jobs : UINT64_MAX));
		json_object_set_new(p, "vram_used_bytes", json_integer((json_int_t)uv));
		json_object_set_new(p, "gpus_used", json_integer((json_int_t)ug));
		json_object_set_new(p, "jobs_running", json_integer((json_int_t)uj));
		json_object_set_new(p, "jobs_borrowing", json_integer((json_int_t)qv));
		json_object_set_new(p, "jobs_waiting", json_integer((json_int_t)queued));
		json_object_set_new(p, "members", json_string(i < n ? d->projects[i].members : ""));
		json_array_append_new(arr, p);
	}
	json_object_set_new(o, "projects", arr);
	json_object_set_new(o, "borrowing", json_boolean(d->cfg.borrowing));
	json_object_set_new(o, "admin", json_boolean(is_admin(d, c)));
	reply(c, o);
}

static void do_quota_set(qd *d, client *c, proto_req *r)
{
	if (!is_admin(d, c)) {
		char *u = user_name(c->uid);
		reply_error(c, "only an administrator may set quotas (user %s is not root%s%s)", u,
			    d->cfg.admin_group[0] ? " nor in group " : "", d->cfg.admin_group);
		free(u);
		return;
	}
	const store_project *old = project_find(d, r->project);
	store_project p = {r->project, UINT64_MAX, UINT64_MAX, UINT64_MAX, (char *)""};
	if (old)
		p = (store_project){r->project, old->vram_bytes, old->gpus, old->jobs, old->members};
	if (r->has_vram)
		p.vram_bytes = r->vram_bytes;
	if (r->has_gpus)
		p.gpus = r->gpus;
	if (r->has_jobs)
		p.jobs = r->jobs;
	if (r->has_members)
		p.members = r->members;
	tx(d);
	if (store_set_project(d->st, &p, &d->err)) {
		reply_error(c, "%s", d->err.msg);
		return;
	}
	store_projects_free(d->projects, d->n_projects);
	d->projects = NULL;
	d->n_projects = 0;
	store_load_projects(d->st, &d->projects, &d->n_projects, &d->err);
	d->dirty = true;
	reply(c, ok_reply());
}

static void handle_line(qd *d, client *c, const char *line, size_t len)
{
	proto_req r;
	char err[256];
	if (proto_parse(line, len, &r, err, sizeof err)) {
		reply_error(c, "%s", err);
		return;
	}
	switch (r.op) {
	case PROTO_PING: {
		json_t *o = ok_reply();
		json_object_set_new(o, "version", json_string(GPUWISE_VERSION));
		json_object_set_new(o, "protocol", json_integer(PROTO_VERSION));
		json_object_set_new(o, "mode", json_string(d->root ? "system" : "personal"));
		json_object_set_new(o, "jobs_active", json_integer((json_int_t)d->n_jobs));
		json_object_set_new(o, "gpus", json_integer((json_int_t)d->n_gpus));
		/* the GPUs as the scheduler sees them */
		json_t *t = json_array();
		for (size_t i = 0; i < d->n_gpus; i++) {
			const sched_node_gpu *g = &d->gpus[i];
			json_t *x = json_object();
			json_object_set_new(x, "index", json_integer((json_int_t)i));
			json_object_set_new(x, "uuid", json_string(g->uuid));
			json_object_set_new(x, "mem_total_bytes", json_integer((json_int_t)g->mem_total_bytes));
			json_object_set_new(x, "mem_outside_bytes", json_integer((json_int_t)g->mem_outside_bytes));
			json_object_set_new(x, "numa", jint_or_null(g->numa >= 0, g->numa));
			json_object_set_new(x, "pcie_switch", jint_or_null(g->pcie_switch >= 0, g->pcie_switch));
			json_object_set_new(x, "nvlink_group", jint_or_null(g->nvlink_group >= 0, g->nvlink_group));
			json_object_set_new(x, "mig_instances", json_integer((json_int_t)g->n_migs));
			json_object_set_new(x, "lost", json_boolean(g->lost));
			json_array_append_new(t, x);
		}
		json_object_set_new(o, "topology", t);
		reply(c, o);
		break;
	}
	case PROTO_SUBMIT: do_submit(d, c, &r); break;
	case PROTO_QUEUE: do_queue(d, c, &r); break;
	case PROTO_SHOW: do_show(d, c, &r); break;
	case PROTO_LOGS: do_logs(d, c, &r); break;
	case PROTO_CANCEL:
	case PROTO_HOLD:
	case PROTO_RELEASE: do_change(d, c, &r); break;
	case PROTO_QUOTA: do_quota(d, c); break;
	case PROTO_QUOTA_SET: do_quota_set(d, c, &r); break;
	}
	proto_req_release(&r);
}

/* ---- clients ------------------------------------------------------------------------ */
static void client_free(client *c)
{
	close(c->fd);
	sb_release(&c->in);
	sb_release(&c->out);
	free(c);
}

static void accept_clients(qd *d)
{
	for (;;) {
		int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cr;
		socklen_t l = sizeof cr;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0) {
			close(fd);
			continue;
		}
		client *c = xcalloc(1, sizeof *c);
		c->fd = fd;
		c->uid = cr.uid;
		c->gid = cr.gid;
		c->pid = cr.pid;
		c->last_ms = now_ms();
		if (d->n_clients == MAX_CLIENTS) {
			reply_error(c, "too many clients");
			c->closing = true;
			(void)!write(fd, c->out.buf, c->out.len);
			client_free(c);
			continue;
		}
		if (!d->root && cr.uid != d->self_uid && cr.uid != 0) {
			reply_error(c, "this is the personal queue of uid %u", (unsigned)d->self_uid);
			(void)!write(fd, c->out.buf, c->out.len);
			client_free(c);
			continue;
		}
		d->clients[d->n_clients++] = c;
	}
}

/* Read what is there; handle complete lines.  Oversized lines get an error and the rest is skipped. */
static void read_client(qd *d, client *c)
{
	char buf[READ_CHUNK];
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(c->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (n == 0) {
			c->dead = true;
			break;
		}
		c->last_ms = now_ms();
		size_t off = 0;
		while (off < (size_t)n) {
			char *nl = memchr(buf + off, '\n', (size_t)n - off);
			size_t seg = nl ? (size_t)(nl - (buf + off)) : (size_t)n - off;
			if (c->skipping) {
				if (nl)
					c->skipping = false;
			} else if (c->in.len + seg > PROTO_MAX_LINE) {
				reply_error(c, "request longer than %d bytes", PROTO_MAX_LINE);
				c->in.len = 0;
				c->skipping = !nl;
			} else {
				sb_add(&c->in, buf + off, seg);
				if (nl) {
					size_t l = c->in.len;
					if (l && c->in.buf[l - 1] == '\r')
						l--;
					if (l)
						handle_line(d, c, c->in.buf, l);
					c->in.len = 0;
				}
			}
			off += seg + (nl ? 1 : 0);
		}
		if (c->out.len - c->out_off > 8 * 1024 * 1024)
			break; /* a client that does not read its replies waits */
	}
}

static void write_client(client *c)
{
	while (c->out_off < c->out.len) {
		ssize_t w = send(c->fd, c->out.buf + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			c->dead = true;
			return;
		}
		c->out_off += (size_t)w;
	}
	c->out.len = c->out_off = 0;
	if (c->closing)
		c->dead = true;
}

/* ---- setup -------------------------------------------------------------------------- */
static int make_dir(const char *p, mode_t mode, gw_error *err)
{
	if (mkdir(p, mode) == 0 || errno == EEXIST)
		return 0;
	return gw_fail(err, GW_EIO, "cannot create '%s': %s", p, strerror(errno));
}

static int make_dirs(const char *path, mode_t mode, gw_error *err)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *s = p + 1; *s && !rc; s++)
		if (*s == '/') {
			*s = 0;
			rc = make_dir(p, 0755, err);
			*s = '/';
		}
	if (!rc)
		rc = make_dir(p, mode, err);
	free(p);
	return rc;
}

static int listen_on(qd *d, gw_error *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(d->socket_path) >= sizeof a.sun_path)
		return gw_fail(err, GW_EINVAL, "socket path '%s' is too long", d->socket_path);
	strcpy(a.sun_path, d->socket_path);
	char *dir = xstrdup(d->socket_path);
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash && slash != dir) {
		*slash = 0;
		rc = make_dirs(dir, d->root ? 0755 : 0700, err);
	}
	free(dir);
	if (rc)
		return rc;
	/* a socket nobody answers on is left over from a crash */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0) {
		close(probe);
		return gw_fail(err, GW_EIO, "a daemon already listens on '%s'", d->socket_path);
	}
	if (probe >= 0)
		close(probe);
	unlink(d->socket_path);
	d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->lfd < 0)
		return gw_fail(err, GW_EIO, "socket: %s", strerror(errno));
	mode_t old = umask(d->root ? 0111 : 0177);
	int b = bind(d->lfd, (struct sockaddr *)&a, sizeof a);
	umask(old);
	if (b < 0 || listen(d->lfd, 512) < 0)
		return gw_fail(err, GW_EIO, "cannot listen on '%s': %s", d->socket_path, strerror(errno));
	return 0;
}

static void daemon_release(qd *d)
{
	for (size_t i = 0; i < d->n_clients; i++)
		client_free(d->clients[i]);
	for (size_t i = 0; i < d->n_jobs; i++)
		djob_free(d->jobs[i]);
	free(d->jobs);
	store_projects_free(d->projects, d->n_projects);
	gpus_free(d);
	if (d->hw)
		hw_close(d->hw);
	store_close(d->st);
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(d->socket_path);
	}
	if (d->sfd >= 0)
		close(d->sfd);
	if (d->lockfd >= 0)
		close(d->lockfd);
	free(d->state_dir);
	free(d->socket_path);
	free(d->logs_dir);
	free(d->run_dir);
}

int queue_daemon_run(const queue_daemon_opts *o, gw_error *err)
{
	qd d = {.o = o, .sfd = -1, .lfd = -1, .lockfd = -1};
	int rc = 0;
	config_defaults(&d.cfg);
	d.self_uid = geteuid();
	d.root = d.self_uid == 0;
	const char *cfgp = o->config_path ? o->config_path : d.root ? QUEUE_SYSTEM_CONFIG : NULL;
	if (cfgp && (rc = config_load(cfgp, o->config_path != NULL, &d.cfg, err)))
		goto out;
	d.state_dir = o->state_dir ? xstrdup(o->state_dir) : queue_default_state();
	d.socket_path = o->socket_path ? xstrdup(o->socket_path) : queue_default_socket();
	d.logs_dir = xasprintf("%s/logs", d.state_dir);
	d.run_dir = xasprintf("%s/run", d.state_dir);
	if ((rc = make_dirs(d.state_dir, 0700, err)) || (rc = make_dir(d.logs_dir, 0700, err)) ||
	    (rc = make_dir(d.run_dir, 0700, err)))
		goto out;
	if (d.root) {
		/*
		 * The supervisor of a job runs as its user and writes run/ID.jsonl,
		 * a file the shim created for that user: the directories may be
		 * searched, not listed, and every job file is 0600 for its owner.
		 */
		chmod(d.state_dir, 0711);
		chmod(d.run_dir, 0711);
	}
	char *lock = xasprintf("%s/daemon.lock", d.state_dir);
	d.lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lock);
	if (d.lockfd < 0 || flock(d.lockfd, LOCK_EX | LOCK_NB) < 0) {
		rc = gw_fail(err, GW_EIO, "another daemon uses the state in '%s'", d.state_dir);
		goto out;
	}
	ssize_t el = readlink("/proc/self/exe", d.exe, sizeof d.exe - 1);
	if (el <= 0) {
		rc = gw_fail(err, GW_EIO, "cannot find the gpuwise binary: %s", strerror(errno));
		goto out;
	}
	d.exe[el] = 0;
	char *dbp = xasprintf("%s/state.db", d.state_dir);
	rc = store_open(dbp, &d.st, err);
	free(dbp);
	if (rc)
		goto out;
	if ((rc = store_load_projects(d.st, &d.projects, &d.n_projects, err)))
		goto out;
	{
		job **loaded;
		size_t n;
		if ((rc = store_load_active(d.st, &loaded, &n, err)))
			goto out;
		for (size_t i = 0; i < n; i++) {
			djob *x = xcalloc(1, sizeof *x);
			x->j = *loaded[i];
			free(loaded[i]);
			d.jobs = xgrow(d.jobs, &d.cap_jobs, d.n_jobs + 1, sizeof *d.jobs);
			d.jobs[d.n_jobs++] = x;
		}
		free(loaded);
	}
	hw_opts ho = {.wake = true, .no_cuda = true};
	gw_error he;
	d.hw = hw_open(&ho, &he);
	gpus_refresh(&d);
	d.hw_at_ms = now_ms();

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d.sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if ((rc = listen_on(&d, err)))
		goto out;
	readopt(&d);
	logf_(&d, "gpuwise daemon %s: %s queue on %s, state in %s, %zu GPU%s, %zu job%s waiting or running",
	      GPUWISE_VERSION, d.root ? "system" : "personal", d.socket_path, d.state_dir, d.n_gpus,
	      d.n_gpus == 1 ? "" : "s", d.n_jobs, d.n_jobs == 1 ? "" : "s");
	d.dirty = true;
	d.expire_at_ms = 0;

	struct pollfd *pfd = xcalloc(MAX_CLIENTS + 2, sizeof *pfd);
	uint64_t tick_at = 0;
	while (!d.stopping) {
		size_t np = 0;
		pfd[np++] = (struct pollfd){.fd = d.sfd, .events = POLLIN};
		pfd[np++] = (struct pollfd){.fd = d.lfd, .events = POLLIN};
		for (size_t i = 0; i < d.n_clients; i++) {
			client *c = d.clients[i];
			short ev = 0;
			if (c->out.len - c->out_off < 8 * 1024 * 1024)
				ev |= POLLIN;
			if (c->out_off < c->out.len)
				ev |= POLLOUT;
			pfd[np++] = (struct pollfd){.fd = c->fd, .events = ev};
		}
		int pr = poll(pfd, np, TICK_MS);
		if (pr < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(d.sfd, &si, sizeof si) == sizeof si)
				if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
					d.stopping = true;
		}
		size_t n_before = d.n_clients;
		for (size_t i = 0; i < n_before; i++) {
			client *c = d.clients[i];
			if (pfd[2 + i].revents & (POLLIN | POLLHUP | POLLERR))
				read_client(&d, c);
		}
		if (pfd[1].revents & POLLIN)
			accept_clients(&d);
		uint64_t mono = now_ms();
		if (mono >= tick_at) {
			tick_at = mono + TICK_MS;
			watch_jobs(&d);
			if (mono - d.hw_at_ms >= HW_EVERY_MS) {
				gpus_refresh(&d);
				d.hw_at_ms = mono;
				d.dirty = true;
			}
			if (mono >= d.expire_at_ms) {
				expire_logs(&d);
				d.expire_at_ms = mono + 600000;
			}
		}
		/* group commit: everything this iteration wrote, before any reply */
		if (tx_commit(&d)) {
			for (size_t i = 0; i < d.n_clients; i++) {
				client *c = d.clients[i];
				sb_release(&c->out);
				c->out_off = 0;
				reply_error(c, "the daemon could not save its state: %s", d.err.msg);
				c->closing = true;
			}
		}
		/* with a long queue, at most one pass every 50 ms under a burst */
		if (d.dirty && (d.n_jobs < 1000 || mono - d.pass_at_ms >= 50)) {
			d.pass_at_ms = mono;
			schedule(&d);
			tx_commit(&d);
		}
		for (size_t i = 0; i < d.n_clients; i++) {
			client *c = d.clients[i];
			if (c->out_off < c->out.len)
				write_client(c);
			if (!c->dead && c->out_off == c->out.len && mono - c->last_ms > d.cfg.client_timeout_ms)
				c->dead = true; /* a silent client is dropped */
		}
		size_t k = 0;
		for (size_t i = 0; i < d.n_clients; i++) {
			if (d.clients[i]->dead)
				client_free(d.clients[i]);
			else
				d.clients[k++] = d.clients[i];
		}
		d.n_clients = k;
	}
	free(pfd);
	logf_(&d, "stopping; %zu running job%s keep running and are re-adopted on the next start",
	      d.n_jobs, d.n_jobs == 1 ? "" : "s");
	tx_commit(&d);
out:
	daemon_release(&d);
	return rc;
}

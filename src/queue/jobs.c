/*
 * queue/jobs: the daemon's state in memory and on disk: one transaction
 * per loop iteration, the jobs not ended, the GPUs as the scheduler sees
 * them, the scheduling pass and the watch over running jobs.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "queue/daemon_int.h"

static uint64_t boot_ms(void);


void qd_log(qd *d, const char *fmt, ...)
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
/*
 * A write that fails (a full disk, an I/O error) dooms the whole
 * transaction: it is rolled back at qd_tx_commit, the jobs submitted in it
 * are forgotten (their ids were never acknowledged and are handed out
 * again), and every reply of the iteration becomes the error.
 */
void qd_tx(qd *d)
{
	if (d->in_tx)
		return;
	d->in_tx = true;
	d->tx_failed = store_begin(d->st, &d->err) != 0;
}

/* May the open transaction still be written to? (opens one) */
bool qd_tx_ok(qd *d)
{
	qd_tx(d);
	/* SQLite may roll back by itself after SQLITE_FULL: writes would then commit one by one */
	if (!d->tx_failed && !store_in_tx(d->st))
		d->tx_failed = true;
	return !d->tx_failed;
}

void qd_tx_fail(qd *d)
{
	d->tx_failed = true;
}

/* The ids file: the highest id handed out, so that no id is reused even if state.db is replaced. */
static void ids_write(qd *d, uint64_t id)
{
	char buf[24];
	/* fixed width: rewritten in place, never shorter */
	int n = snprintf(buf, sizeof buf, "%020llu\n", (unsigned long long)id);
	if (d->ids_fd >= 0 && pwrite(d->ids_fd, buf, (size_t)n, 0) == n)
		d->last_id = id;
}

int qd_tx_commit(qd *d)
{
	if (!d->in_tx)
		return 0;
	d->in_tx = false;
	int rc = 0;
	if (d->tx_failed || store_commit(d->st, &d->err)) {
		store_rollback(d->st);
		qd_log(d, "state database commit failed: %s", d->err.msg);
		for (size_t i = 0; i < d->n_tx_new; i++)
			qd_drop_job(d, d->tx_new[i]);
		rc = -1;
	} else {
		uint64_t top = d->last_id;
		for (size_t i = 0; i < d->n_tx_new; i++)
			if (d->tx_new[i]->j.id > top)
				top = d->tx_new[i]->j.id;
		if (top > d->last_id)
			ids_write(d, top);
	}
	d->n_tx_new = 0;
	d->tx_failed = false;
	return rc;
}

void qd_save(qd *d, djob *j)
{
	if (!qd_tx_ok(d))
		return;
	if (store_update_job(d->st, &j->j, &d->err)) {
		qd_log(d, "%s", d->err.msg);
		qd_tx_fail(d);
	}
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

void qd_gpus_free(qd *d)
{
	for (size_t i = 0; i < d->n_gpus; i++)
		free(d->gpus[i].migs);
	free(d->gpus);
	d->gpus = NULL;
	d->n_gpus = 0;
}

/* Read the GPUs: identity, memory, MIG instances, memory held outside the queue. */
void qd_gpus_refresh(qd *d)
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
		snprintf(x->name, sizeof x->name, "%s", h->name);
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
		x->nvlink_group = hw_nvlink_group_of(&s, i);
		x->pcie_switch = hw_pcie_switch_of(h->pci_bus_id, switches, &n_switches, 64);
		/*
		 * Outside the queue: the driver's reservation, the processes that
		 * are not jobs, and what NVML counts as used that no visible
		 * process holds (other containers, VMs, vGPU guests).
		 */
		uint64_t outside = HW_VALID(h->mem_reserved_bytes) ? (uint64_t)h->mem_reserved_bytes.v : 0;
		uint64_t seen = 0, foreign = 0;
		bool job_unknown = false;
		for (size_t k = 0; k < h->n_procs; k++) {
			bool is_job = proc_is_job((pid_t)h->procs[k].pid);
			if (!HW_VALID(h->procs[k].used_mem_bytes)) {
				job_unknown |= is_job;
				x->foreign |= !is_job; /* holds an unknown amount */
				continue;
			}
			seen += (uint64_t)h->procs[k].used_mem_bytes.v;
			if (!is_job)
				foreign += (uint64_t)h->procs[k].used_mem_bytes.v;
		}
		outside += foreign;
		uint64_t used = HW_VALID(h->mem_used_bytes) ? (uint64_t)h->mem_used_bytes.v : 0;
		/* a job whose memory NVML does not itemise would be counted twice */
		if (used > seen && !job_unknown)
			outside += used - seen;
		x->mem_outside_bytes = outside;
		x->mem_used_bytes = used;
		x->foreign |= outside > d->cfg.exclusive_foreign_bytes;
		x->slot_bytes = qd_config_sizes(&d->cfg, x->name, &x->n_slots);
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
	qd_gpus_free(d);
	d->gpus = g;
	d->n_gpus = n;
}

/* ---- jobs in memory -------------------------------------------------------- */
/*
 * d->jobs is in id order (loaded in id order, new ids only grow, a
 * requeued job keeps its place), so a job is found by bisection: cancelling
 * 100,000 queued jobs is 100,000 lookups of 17 steps, not 5e9 comparisons.
 * Returns the index of id, or of where it would go.
 */
size_t qd_job_index(const qd *d, uint64_t id)
{
	size_t lo = 0, hi = d->n_jobs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->jobs[mid]->j.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

djob *qd_find_job(qd *d, uint64_t id)
{
	size_t i = qd_job_index(d, id);
	return i < d->n_jobs && d->jobs[i]->j.id == id ? d->jobs[i] : NULL;
}

void qd_djob_free(djob *j)
{
	if (!j)
		return;
	job_release(&j->j);
	free(j->stop_note);
	free(j->preempt_note);
	free(j);
}

void qd_drop_job(qd *d, djob *j)
{
	size_t i = qd_job_index(d, j->j.id);
	if (i < d->n_jobs && d->jobs[i] == j) {
		memmove(&d->jobs[i], &d->jobs[i + 1], (d->n_jobs - i - 1) * sizeof *d->jobs);
		d->n_jobs--;
		qd_user_jobs(d, j->j.spec.uid, -1);
	}
	qd_djob_free(j);
}

/* Take every job marked `dropping` out of memory in one pass (a cancel of many ids). */
void qd_drop_marked(qd *d)
{
	size_t k = 0;
	for (size_t i = 0; i < d->n_jobs; i++) {
		if (d->jobs[i]->dropping) {
			qd_user_jobs(d, d->jobs[i]->j.spec.uid, -1);
			qd_djob_free(d->jobs[i]);
		}
		else
			d->jobs[k++] = d->jobs[i];
	}
	d->n_jobs = k;
}


void qd_set_reason(job *j, const char *fmt, ...)
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

char *qd_job_path(qd *d, const char *dir, uint64_t id, const char *ext)
{
	return xasprintf("%s/%llu.%s", dir, (unsigned long long)id, ext);
}

/* ---- scheduling --------------------------------------------------------------- */
void qd_schedule(qd *d)
{
	d->dirty = false;
	size_t np;
	sched_project *pr = qd_sched_projects(d, &np);
	job **jobs = xcalloc(d->n_jobs ? d->n_jobs : 1, sizeof *jobs);
	for (size_t i = 0; i < d->n_jobs; i++) {
		jobs[i] = &d->jobs[i]->j;
		/* a job being stopped is not a victim twice */
		if (d->jobs[i]->stop)
			jobs[i]->borrowed = false;
	}
	sched_config cfg = qd_sched_config(d);
	qd_sched_users(d, &cfg);
	sched_result res = {0};
	sched_pass(&cfg, d->gpus, d->n_gpus, pr, np, jobs, d->n_jobs, &res);
	qd_sched_users_free(&cfg);
	d->reserved_job = res.reserved_job > 0 ? (uint64_t)res.reserved_job : 0;
	/* a preempted job says so until it starts again */
	for (size_t i = 0; i < d->n_jobs; i++) {
		djob *x = d->jobs[i];
		if (x->preempt_note && x->j.state == JOB_QUEUED &&
		    !(x->j.reason && str_starts(x->j.reason, "preempted and requeued: "))) {
			char *r = x->j.reason;
			x->j.reason = NULL;
			qd_set_reason(&x->j, "preempted and requeued: %s; now %s", x->preempt_note, r ? r : N_("waiting"));
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
			qd_log(d, "job %llu preempted: %s", (unsigned long long)x->j.id, note);
			qd_stop_job(d, x, STOP_PREEMPT, note);
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
		qd_set_reason(j, dc->borrowed ? N_("running on quota borrowed from idle projects") : NULL);
		qd_save(d, x);
	}
	/* a start that is not on disk is not made: after a restart the job would run again */
	bool saved = qd_tx_commit(d) == 0;
	for (size_t i = 0; i < res.n; i++) {
		sched_decision *dc = &res.d[i];
		if (dc->action != SCHED_START)
			continue;
		djob *x = (djob *)dc->job;
		if (!saved) {
			job *j = &x->j;
			j->state = JOB_QUEUED;
			j->start_ms = 0;
			j->n_placed = 0;
			j->mig_idx = -1;
			j->borrowed = false;
			qd_set_reason(j, "waiting: the daemon cannot save its state (%s)", d->err.msg);
			d->dirty = true;
			continue;
		}
		pid_t pid = qd_launch(d, x);
		if (pid < 0) {
			x->j.state = JOB_FAILED;
			x->j.end_ms = wall_ms();
			qd_set_reason(&x->j, "could not start: %s", strerror(errno));
			qd_save(d, x);
			qd_drop_job(d, x);
			continue;
		}
		x->j.pid = pid;
		x->j.pid_start_ticks = qd_proc_start_ticks(pid);
		x->start_boot_ms = boot_ms();
		x->own_child = true;
		x->log_pos = 0;
		x->over_samples = 0;
		qd_log(d, "job %llu started (pid %d)", (unsigned long long)x->j.id, (int)pid);
		qd_save(d, x);
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
	char *p = qd_job_path(d, d->run_dir, j->id, "jsonl");
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
		/* with standard sizes, what the job may use is its slot */
		uint64_t req = sched_job_slot_bytes(j, d->gpus, d->n_gpus) * (uint64_t)j->spec.n_gpus;
		if (j->spec.mode != JOB_MODE_SHARED || !req)
			continue;
		if ((double)used > (double)req * (1.0 + d->cfg.over_grace)) {
			if (++x->over_samples < d->cfg.over_samples || x->over_noted)
				continue;
			char a[32], b[32];
			x->over_noted = true;
			if (d->cfg.over_stop) {
				char note[200];
				snprintf(note, sizeof note,
					 N_("stopped: used %s of GPU memory, over its request of %s by more than %.0f%%"),
					 fmt_bytes(a, sizeof a, used), fmt_bytes(b, sizeof b, req), d->cfg.over_grace * 100);
				qd_log(d, "job %llu %s", (unsigned long long)j->id, note);
				qd_stop_job(d, x, STOP_OVER, note);
			} else {
				qd_set_reason(j, "warning: uses %s of GPU memory, over its request of %s by more than %.0f%%",
					   fmt_bytes(a, sizeof a, used), fmt_bytes(b, sizeof b, req), d->cfg.over_grace * 100);
				qd_log(d, "job %llu %s", (unsigned long long)j->id, j->reason);
			}
			qd_save(d, x);
		} else {
			x->over_samples = 0;
		}
	}
}

/*
 * Time limits run on CLOCK_BOOTTIME, never the wall clock: setting the
 * date (NTP stepping it, an administrator, a VM resumed) neither kills a
 * job early nor lets it overstay.  The clock counts from boot, as does a
 * process's start time in /proc, so a job re-adopted after a daemon
 * restart keeps the time it has already run.
 */
static uint64_t boot_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A re-adopted job's start on that clock: its process's start time (clock ticks since boot). */
static uint64_t job_start_boot_ms(const job *j)
{
	long hz = sysconf(_SC_CLK_TCK);
	if (!j->pid_start_ticks || hz <= 0)
		return 0;
	return j->pid_start_ticks * 1000 / (uint64_t)hz;
}

void qd_watch_jobs(qd *d)
{
	int ws;
	pid_t pid;
	while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
		if (pid == d->http_pid) {
			qd_http_ended(d, ws);
			continue;
		}
		for (size_t i = 0; i < d->n_jobs; i++) {
			djob *x = d->jobs[i];
			if (x->j.state == JOB_RUNNING && x->j.pid == pid) {
				int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
				qd_read_status_file(d, x->j.id, &status);
				qd_job_ended(d, x, status, true);
				break;
			}
		}
	}
	uint64_t mono = now_ms(), boot = boot_ms();
	for (size_t i = 0; i < d->n_jobs; i++) {
		djob *x = d->jobs[i];
		job *j = &x->j;
		if (j->state != JOB_RUNNING || j->pid <= 0)
			continue;
		if (!x->own_child) {
			/* re-adopted: its process is not our child; watch /proc */
			uint64_t t = qd_proc_start_ticks(j->pid);
			if (t == 0 || t != j->pid_start_ticks) {
				int status = 0;
				bool known = qd_read_status_file(d, j->id, &status) == 0;
				qd_job_ended(d, x, status, known);
				i--;
				continue;
			}
		}
		if (!x->start_boot_ms)
			x->start_boot_ms = job_start_boot_ms(j);
		if (j->spec.time_limit_ms && !x->stop && x->start_boot_ms &&
		    boot > x->start_boot_ms + j->spec.time_limit_ms)
			qd_stop_job(d, x, STOP_TIMELIMIT, NULL);
		if (x->stop && mono > x->kill_at_ms) {
			qd_signal_job(x, SIGKILL);
			x->kill_at_ms = mono + d->cfg.kill_wait_ms;
		}
		check_usage(d, x);
	}
}

/* On start: running jobs whose process lives on are adopted; the others end now. */
void qd_readopt(qd *d)
{
	for (size_t i = 0; i < d->n_jobs; i++) {
		djob *x = d->jobs[i];
		job *j = &x->j;
		if (j->state != JOB_RUNNING)
			continue;
		if (j->pid > 0 && j->pid_start_ticks && qd_proc_start_ticks(j->pid) == j->pid_start_ticks) {
			qd_log(d, "job %llu re-adopted (pid %d)", (unsigned long long)j->id, j->pid);
			x->own_child = false;
			/* a stop acknowledged before the restart goes on, its SIGKILL at the same time */
			if (j->stop_kind > STOP_NONE && j->stop_kind < STOP_SHUTDOWN) {
				uint64_t now = wall_ms();
				x->stop = j->stop_kind;
				x->kill_at_ms = now_ms() + (j->stop_deadline_ms > now ? j->stop_deadline_ms - now : 0);
				qd_signal_job(x, SIGTERM);
				qd_log(d, "job %llu: its stop (%d) goes on after the restart", (unsigned long long)j->id, x->stop);
			}
			continue;
		}
		int status = 0;
		if (j->pid > 0 && qd_read_status_file(d, j->id, &status) == 0) {
			qd_job_ended(d, x, status, true);
		} else {
			j->state = JOB_FAILED;
			j->end_ms = wall_ms();
			qd_set_reason(j, j->pid > 0 ? "lost: its process ended while the daemon was down and left no exit status"
						 : "the daemon stopped while starting it; it is not started again");
			qd_save(d, x);
			qd_drop_job(d, x);
		}
		i--;
	}
	qd_tx_commit(d);
}

/* The bytes one job's logs take on the state disk (its output and its monitor log). */
static uint64_t job_log_bytes(qd *d, uint64_t id)
{
	uint64_t b = 0;
	static const char *const ext[] = {"log", "jsonl"};
	for (int k = 0; k < 2; k++) {
		char *p = qd_job_path(d, k ? d->run_dir : d->logs_dir, id, ext[k]);
		struct stat st;
		if (stat(p, &st) == 0)
			b += (uint64_t)st.st_blocks * 512 > (uint64_t)st.st_size ? (uint64_t)st.st_blocks * 512
										  : (uint64_t)st.st_size;
		free(p);
	}
	return b;
}

static void remove_job_logs(qd *d, uint64_t id)
{
	static const char *const ext[] = {"log", "jsonl", "status"};
	for (int k = 0; k < 3; k++) {
		char *p = qd_job_path(d, k ? d->run_dir : d->logs_dir, id, ext[k]);
		unlink(p);
		free(p);
	}
}

/* The bytes the logs of uid's running jobs take now (uid < 0: everyone's); *users gets their uids. */
static uint64_t running_log_bytes(qd *d, int64_t uid, uint32_t *users, size_t *n_users)
{
	uint64_t b = 0;
	for (size_t i = 0; i < d->n_jobs; i++) {
		const job *j = &d->jobs[i]->j;
		if (j->state != JOB_RUNNING || (uid >= 0 && j->spec.uid != (uint32_t)uid))
			continue;
		uint64_t x = job_log_bytes(d, j->id);
		b += x;
		if (users && x) {
			size_t k = 0;
			while (k < *n_users && users[k] != j->spec.uid)
				k++;
			if (k == *n_users && k < 64)
				users[(*n_users)++] = j->spec.uid;
		}
	}
	return b;
}

static uint64_t user_retention(const qd *d, uint32_t uid);

/*
 * Ended jobs' logs older than their user's retention (log_retention[USER],
 * else log_retention) are removed, their rows marked and the user's count
 * lowered in the same transaction.
 */
void qd_expire_logs(qd *d)
{
	uint64_t now = wall_ms();
	store_log *l;
	size_t n, removed = 0;
	gw_error e;
	if (store_kept_logs(d->st, -1, &l, &n, &e))
		return;
	qd_tx(d);
	for (size_t i = 0; i < n; i++) {
		uint64_t keep = user_retention(d, l[i].uid);
		if (!l[i].ended || now < keep || l[i].end_ms >= now - keep)
			continue;
		if (store_drop_log(d->st, l[i].id, &d->err)) {
			qd_tx_fail(d);
			break;
		}
		remove_job_logs(d, l[i].id);
		removed++;
	}
	if (removed)
		qd_log(d, "removed the logs of %zu job%s ended more than their user's retention ago", removed,
		       removed == 1 ? "" : "s");
	free(l);
}

uint64_t qd_user_log_limit(const qd *d, uint32_t uid)
{
	for (size_t i = 0; i < d->cfg.n_user_logs; i++)
		if (d->cfg.user_logs[i].uid == uid && d->cfg.user_logs[i].has_limit)
			return d->cfg.user_logs[i].limit_bytes;
	return d->cfg.user_log_limit_bytes;
}

static uint64_t user_retention(const qd *d, uint32_t uid)
{
	for (size_t i = 0; i < d->cfg.n_user_logs; i++)
		if (d->cfg.user_logs[i].uid == uid && d->cfg.user_logs[i].has_retention)
			return d->cfg.user_logs[i].retention_ms;
	return d->cfg.log_retention_ms;
}

uint64_t qd_user_logs(qd *d, uint32_t uid, bool prune)
{
	/* ended jobs' logs from the counter in the database, running jobs' from the disk */
	uint64_t total = store_user_log_bytes(d->st, uid, NULL) + running_log_bytes(d, uid, NULL, NULL);
	uint64_t limit = qd_user_log_limit(d, uid);
	if (!prune || !limit || total <= limit)
		return total;
	store_log *l;
	size_t n;
	gw_error e;
	if (store_kept_logs(d->st, uid, &l, &n, &e))
		return total;
	size_t removed = 0;
	qd_tx(d);
	for (size_t i = 0; i < n && total > limit && l[i].ended; i++) {
		if (store_drop_log(d->st, l[i].id, &d->err)) {
			qd_tx_fail(d);
			break;
		}
		remove_job_logs(d, l[i].id);
		total -= l[i].bytes <= total ? l[i].bytes : total;
		removed++;
	}
	if (removed)
		qd_log(d, "user %u is over user_log_limit: removed the logs of their %zu oldest ended job%s",
		       (unsigned)uid, removed, removed == 1 ? "" : "s");
	free(l);
	return total;
}

void qd_log_ended(qd *d, uint64_t id)
{
	qd_tx(d);
	if (store_set_log_bytes(d->st, id, job_log_bytes(d, id), &d->err))
		qd_tx_fail(d);
}

void qd_logs_recount(qd *d)
{
	store_log *l;
	size_t n, fixed = 0;
	gw_error e;
	if (store_kept_logs(d->st, -1, &l, &n, &e))
		return;
	qd_tx(d);
	for (size_t i = 0; i < n; i++) {
		if (!l[i].ended)
			continue;
		uint64_t b = job_log_bytes(d, l[i].id);
		if (b == l[i].bytes)
			continue;
		if (store_set_log_bytes(d->st, l[i].id, b, &d->err)) {
			qd_tx_fail(d);
			break;
		}
		fixed++;
	}
	if (store_logs_recount(d->st, &d->err))
		qd_tx_fail(d);
	if (fixed)
		qd_log(d, "the logs of %zu ended job%s changed on disk while the daemon was away: counted again", fixed,
		       fixed == 1 ? "" : "s");
	free(l);
}

const char *qd_logs_refusal(qd *d, uint32_t uid, bool admin, char *why, size_t n)
{
	char a[32], b2[32], c3[32];
	uint64_t limit = qd_user_log_limit(d, uid);
	uint64_t mine = 0, now = now_ms();
	size_t ci = 0;
	while (ci < d->n_log_cache && d->log_cache[ci].uid != uid)
		ci++;
	/* a user's log bytes are looked at most every 2 s (a flood of submissions stays cheap) */
	if (ci < d->n_log_cache && now - d->log_cache[ci].at_ms < 2000) {
		mine = d->log_cache[ci].bytes;
	} else if (limit || d->cfg.free_reserve_bytes) {
		mine = qd_user_logs(d, uid, true);
		if (ci == d->n_log_cache) {
			if (d->n_log_cache < sizeof d->log_cache / sizeof *d->log_cache)
				d->n_log_cache++;
			else
				ci = (size_t)(now % d->n_log_cache);
		}
		d->log_cache[ci].uid = uid;
		d->log_cache[ci].bytes = mine;
		d->log_cache[ci].at_ms = now;
	}
	if (limit && mine > limit && !admin) {
		snprintf(why, n,
			 "your jobs' logs take %s, over your budget of %s (user_log_limit): they are running, so "
			 "no older log can go; wait for them to end or cancel one",
			 fmt_bytes(a, sizeof a, mine), fmt_bytes(b2, sizeof b2, limit));
		return why;
	}
	struct statvfs vfs;
	if (!d->cfg.free_reserve_bytes || statvfs(d->state_dir, &vfs) != 0)
		return NULL;
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize, reserve = d->cfg.free_reserve_bytes;
	if (avail >= reserve)
		return NULL;
	/*
	 * Below the reserve: the users whose logs take more than an equal part
	 * of all kept logs are refused; the others go on while half the reserve
	 * is left (the database must always be able to commit).
	 */
	/* every user's kept logs: the counter in the database, and the running jobs' from the disk */
	size_t users = 0, n_run = 0;
	uint32_t run_users[64];
	uint64_t total = store_user_log_bytes(d->st, -1, &users) + running_log_bytes(d, -1, run_users, &n_run);
	for (size_t k = 0; k < n_run; k++)
		users += store_user_log_bytes(d->st, run_users[k], NULL) == 0; /* not among the counted */
	/* the logs are why only when removing them would bring the disk back above the reserve */
	bool heavy = users && mine && mine * users >= total && total >= reserve - avail;
	if (!heavy && avail >= reserve / 2)
		return NULL;
	if (heavy)
		snprintf(why, n,
			 "the state directory '%.100s' has %s free, below the reserve of %s (free_space_reserve), and "
			 "your jobs' logs take %s of the %s kept: your submissions are refused until your logs expire "
			 "(log_retention) or an administrator removes them; other users' are not",
			 d->state_dir, fmt_bytes(a, sizeof a, avail), fmt_bytes(b2, sizeof b2, reserve),
			 fmt_bytes(c3, sizeof c3, mine), fmt_bytes((char[32]){0}, 32, total));
	else
		snprintf(why, n,
			 "the state directory '%.100s' has %s free, below the reserve of %s (free_space_reserve): "
			 "submissions are refused until space is freed",
			 d->state_dir, fmt_bytes(a, sizeof a, avail), fmt_bytes(b2, sizeof b2, reserve));
	return why;
}


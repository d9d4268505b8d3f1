/*
 * supervise.c: the supervisor loop.  gpuwise becomes a child subreaper,
 * starts the job in its own process group with its stdout and stderr on
 * pipes, and waits on one poll() for signals (signalfd), the job's output
 * and the next sample.  Each attempt ends with the whole tree gone; then
 * the exit is classified and the restart policy decides.
 */
#include "watch/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define TAIL_MAX 16384
#define MAX_HOOKS 32
#define MAX_HOOK_GROUPS 64
#define MAX_EVENTS 10000
/* How often the kernel log is read for Xid events (it can be large). */
#define XID_POLL_MS 1000

typedef struct sup {
	const watch_opts *o;
	const watch_callbacks *cb;
	watch_result *r;
	hw *hw;
	int sfd;
	sigset_t old_mask;
	struct sigaction old_pipe;
	uint64_t t0;
	/* the current attempt */
	int attempt;
	pid_t pid;
	bool leader_done;
	int wait_status;
	int out_fd, err_fd;
	char tail[TAIL_MAX + 1];
	size_t tail_len;
	bool paused;
	const char *stop_reason;    /* gpuwise is stopping the job, and why */
	bool stop_restart;          /* ... and starts it again (--on-leak restart) */
	bool stop_final;            /* ... and does not (--on-leak/--on-heat stop) */
	bool stopping;
	uint64_t stop_deadline;
	bool interrupted;
	int n_interrupts;
	int hardware_xid;
	uint64_t last_activity;
	watch_leak leak;
	watch_heat *heat;
	size_t n_heat;
	bool hang_fired, limit_fired;
	/* Xid */
	bool xid_ok;
	uint64_t xid_last_ts;
	uint64_t next_xid;
	/* hooks run by --on-event */
	pid_t hooks[MAX_HOOKS];
	size_t n_hooks;
	/* their process groups, kept after the hook's shell ends (its background children) */
	pid_t hook_groups[MAX_HOOK_GROUPS];
	size_t n_hook_groups;
	/* the sentinel that outlives a SIGKILLed gpuwise (sentinel_start) */
	int sentinel_fd;
	char *token;                /* "GPUWISE_RUN_TOKEN=..." in the job's and hooks' environment */
	/* --oom-halve */
	char halve_value[32];
	bool halve_set;
	/* --oom-halve-arg: argv[arg_at] is "NAME" (value in argv[arg_at + 1]) or "NAME=N" */
	int arg_at;
	bool arg_joined;
	char arg_value[32];
	watch_leak rss_leak;
	watch_gpu_sample *gs;
	size_t gs_cap;
} sup;

static uint64_t rel_ms(const sup *s)
{
	return now_ms() - s->t0;
}

/* ---- environment ----------------------------------------------------- */

/* environ without the names in drop[], then the extra "K=V" strings. */
static char **env_build(const char *const *drop, size_t ndrop, char **extra, size_t nextra)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xcalloc(n + nextra + 1, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool skip = false;
		for (size_t d = 0; d < ndrop; d++) {
			size_t l = strlen(drop[d]);
			if (strncmp(environ[i], drop[d], l) == 0 && environ[i][l] == '=')
				skip = true;
		}
		if (!skip)
			env[k++] = xstrdup(environ[i]);
	}
	for (size_t i = 0; i < nextra; i++)
		env[k++] = extra[i]; /* takes ownership */
	env[k] = NULL;
	return env;
}

static void env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

/* ---- children -------------------------------------------------------- */

/* In a freshly forked child: undo the supervisor's signal set-up. */
static void child_signals(const sup *s)
{
	sigaction(SIGPIPE, &s->old_pipe, NULL);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

/* Forget hook groups that have emptied; then remember pgid. */
static void hook_group_add(sup *s, pid_t pgid)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n_hook_groups; i++)
		if (kill(-s->hook_groups[i], 0) == 0 || errno != ESRCH)
			s->hook_groups[k++] = s->hook_groups[i];
	s->n_hook_groups = k;
	if (k < MAX_HOOK_GROUPS)
		s->hook_groups[s->n_hook_groups++] = pgid;
}

static void run_hook(sup *s, const watch_event *e)
{
	if (!s->o->on_event_cmd || e->kind == WATCH_EV_HOOK_FAILED || s->n_hooks == MAX_HOOKS)
		return;
	static const char *const drop[] = {"GPUWISE_EVENT", "GPUWISE_EVENT_DETAIL", "GPUWISE_EVENT_GPU",
					   "GPUWISE_EVENT_VALUE", "GPUWISE_EVENT_ATTEMPT", "GPUWISE_EVENT_TIME",
					   "GPUWISE_JOB_PID"};
	char *extra[8];
	extra[0] = xasprintf("GPUWISE_EVENT=%s", watch_event_name(e->kind));
	extra[1] = xasprintf("GPUWISE_EVENT_DETAIL=%s", e->detail);
	extra[2] = e->gpu >= 0 ? xasprintf("GPUWISE_EVENT_GPU=%d", e->gpu) : xstrdup("GPUWISE_EVENT_GPU=");
	extra[3] = isfinite(e->value) ? xasprintf("GPUWISE_EVENT_VALUE=%.17g", e->value)
				      : xstrdup("GPUWISE_EVENT_VALUE=");
	extra[4] = xasprintf("GPUWISE_EVENT_ATTEMPT=%d", e->attempt);
	extra[5] = xasprintf("GPUWISE_EVENT_TIME=%llu", (unsigned long long)(e->wall_ms / 1000));
	extra[6] = xasprintf("GPUWISE_JOB_PID=%d", (int)s->pid);
	extra[7] = xstrdup(s->token);
	char **env = env_build(drop, 7, extra, 8);
	pid_t self = getpid();
	pid_t p = fork();
	if (p == 0) {
		child_signals(s);
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != self)
			_exit(127);
		dup2(2, 1); /* keep our stdout for the job and --json */
		execle("/bin/sh", "sh", "-c", s->o->on_event_cmd, (char *)NULL, env);
		_exit(127);
	}
	if (p > 0) {
		setpgid(p, p);
		s->hooks[s->n_hooks++] = p;
		hook_group_add(s, p);
	}
	env_free(env);
}

static void emit(sup *s, watch_event_kind k, int gpu, double v, double v2, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void emit(sup *s, watch_event_kind k, int gpu, double v, double v2, const char *fmt, ...)
{
	watch_event e = {0};
	e.t_ms = rel_ms(s);
	e.wall_ms = wall_ms();
	e.attempt = s->attempt;
	e.kind = k;
	e.gpu = gpu;
	e.value = v;
	e.value2 = v2;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.detail, sizeof e.detail, fmt, ap);
	va_end(ap);
	watch_result *r = s->r;
	if (r->n_events < MAX_EVENTS) {
		r->events = xgrow(r->events, &r->cap_events, r->n_events + 1, sizeof *r->events);
		r->events[r->n_events++] = e;
	}
	if (s->cb->on_event)
		s->cb->on_event(s->cb->ctx, &e);
	run_hook(s, &e);
}

/* Reap every child that has ended: the job's leader, orphans, hooks. */
static void reap(sup *s)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == s->pid && !s->leader_done) {
			s->leader_done = true;
			s->wait_status = st;
			continue;
		}
		for (size_t i = 0; i < s->n_hooks; i++) {
			if (s->hooks[i] != p)
				continue;
			s->hooks[i] = s->hooks[--s->n_hooks];
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				emit(s, WATCH_EV_HOOK_FAILED, -1, watch_exit_status(st), NAN,
				     "--on-event command ended with status %d", watch_exit_status(st));
			break;
		}
	}
}

/* The job's tree: our descendants except the --on-event hooks and theirs. */
static void job_tree(sup *s, pid_t **pids, size_t *n)
{
	*pids = NULL;
	*n = 0;
	pid_t *all = NULL;
	size_t na = 0;
	if (watch_tree(getpid(), &all, &na, NULL))
		return;
	size_t keep = 0;
	for (size_t i = 0; i < na; i++) {
		bool drop = false;
		if (s->n_hook_groups) {
			pid_t g = getpgid(all[i]);
			for (size_t j = 0; j < s->n_hook_groups && !drop; j++)
				drop = g == s->hook_groups[j];
		}
		if (!drop)
			all[keep++] = all[i];
	}
	na = keep;
	if (s->n_hooks) {
		/* Drop hooks and everything below them. */
		pid_t *h = NULL;
		size_t nh = 0;
		for (size_t i = 0; i < s->n_hooks; i++) {
			pid_t *sub = NULL;
			size_t ns = 0;
			if (!watch_tree(s->hooks[i], &sub, &ns, NULL) && ns) {
				h = xrealloc(h, (nh + ns + 1) * sizeof *h);
				memcpy(h + nh, sub, ns * sizeof *h);
				nh += ns;
			}
			free(sub);
			h = xrealloc(h, (nh + 1) * sizeof *h);
			h[nh++] = s->hooks[i];
		}
		size_t k = 0;
		for (size_t i = 0; i < na; i++) {
			bool drop = false;
			for (size_t j = 0; j < nh && !drop; j++)
				drop = all[i] == h[j];
			if (!drop)
				all[k++] = all[i];
		}
		na = k;
		free(h);
	}
	*pids = all;
	*n = na;
}

/* Send sig to the job's group and to every process of its tree. */
static void signal_job(sup *s, int sig)
{
	if (s->pid > 0)
		kill(-s->pid, sig);
	pid_t *t;
	size_t n;
	job_tree(s, &t, &n);
	for (size_t i = 0; i < n; i++)
		kill(t[i], sig);
	free(t);
}

static bool job_alive(sup *s)
{
	pid_t *t;
	size_t n;
	job_tree(s, &t, &n);
	free(t);
	return n > 0;
}

/* Wait up to ms for signals; returns after one batch or the timeout. */
static void handle_signals(sup *s);

static void wait_signals(sup *s, uint64_t ms)
{
	struct pollfd p = {.fd = s->sfd, .events = POLLIN};
	int r = poll(&p, 1, (int)(ms > 60000 ? 60000 : ms));
	if (r > 0)
		handle_signals(s);
}

/*
 * End every process of the job: SIGTERM (and SIGCONT when paused) to the
 * group and the tree, grace_ms to go, then SIGKILL; reaps them all.
 */
static void kill_job(sup *s, uint64_t grace_ms)
{
	reap(s);
	if (!job_alive(s))
		return;
	signal_job(s, SIGTERM);
	if (s->paused) {
		signal_job(s, SIGCONT);
		s->paused = false;
	}
	uint64_t deadline = now_ms() + grace_ms;
	while (now_ms() < deadline) {
		reap(s);
		if (!job_alive(s))
			return;
		wait_signals(s, 20);
	}
	for (int round = 0; round < 250; round++) {
		signal_job(s, SIGKILL);
		reap(s);
		if (!job_alive(s))
			return;
		wait_signals(s, 20);
	}
}

/*
 * Signals that would end gpuwise (signal(7): default action Term or Core)
 * and come from outside, not from a fault of its own.  Those that ask a
 * program to end are forwarded and end the run (no restart; a second one
 * kills the job); the others pass through to the job and change nothing
 * here.  Real-time signals pass through too.  SIGPIPE is ignored (a
 * closed stdout is the job's to see, see run_attempt); SIGKILL cannot be
 * caught: the sentinel and PR_SET_PDEATHSIG handle it.
 */
static const int sig_end[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGXCPU, SIGXFSZ, SIGPWR};
static const int sig_pass[] = {SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGSTKFLT, SIGIO};

static bool sig_ends(int sig)
{
	for (size_t i = 0; i < sizeof sig_end / sizeof sig_end[0]; i++)
		if (sig_end[i] == sig)
			return true;
	return false;
}

/* Is some process of the job stopped (SIGSTOP, SIGTSTP, ...)? */
static bool job_stopped(sup *s)
{
	pid_t *t;
	size_t n;
	bool stopped = false;
	job_tree(s, &t, &n);
	for (size_t i = 0; i < n && !stopped; i++)
		stopped = watch_proc_state(t[i]) == 'T';
	free(t);
	return stopped;
}

static void forward_signal(sup *s, int sig)
{
	bool ends = sig_ends(sig);
	if (ends) {
		s->n_interrupts++;
		s->interrupted = true;
	}
	if (s->pid <= 0 || s->leader_done)
		return;
	if (ends && s->n_interrupts >= 2) {
		emit(s, WATCH_EV_SIGNAL, -1, SIGKILL, NAN, "second signal: killing the job");
		signal_job(s, SIGKILL);
		return;
	}
	emit(s, WATCH_EV_SIGNAL, -1, sig, NAN, "forwarding %s to the job%s", strsignal(sig),
	     ends ? "" : " (passed through)");
	signal_job(s, sig);
	/*
	 * A stopped process acts on the signal only once continued: continue a
	 * job that stopped itself, and one gpuwise paused when the signal ends it.
	 */
	if (s->paused && ends) {
		signal_job(s, SIGCONT);
		s->paused = false;
	} else if (!s->paused && job_stopped(s)) {
		signal_job(s, SIGCONT);
	}
}

static void handle_signals(sup *s)
{
	struct signalfd_siginfo si;
	while (read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGCHLD)
			reap(s);
		else
			forward_signal(s, (int)si.ssi_signo);
	}
	reap(s);
}

/* ---- output ----------------------------------------------------------- */

static void tail_add(sup *s, const char *buf, size_t n)
{
	if (n >= TAIL_MAX) {
		buf += n - TAIL_MAX;
		n = TAIL_MAX;
	}
	if (s->tail_len + n > TAIL_MAX) {
		size_t drop = s->tail_len + n - TAIL_MAX;
		memmove(s->tail, s->tail + drop, s->tail_len - drop);
		s->tail_len -= drop;
	}
	memcpy(s->tail + s->tail_len, buf, n);
	s->tail_len += n;
	s->tail[s->tail_len] = '\0';
}

/* Read what fd has; close it at end of file.  Returns bytes read. */
static int out_state(const sup *s, int which)
{
	return s->cb->output_state ? s->cb->output_state(s->cb->ctx, which) : WATCH_OUT_OK;
}

static size_t pump(sup *s, int *fd, int which)
{
	char buf[65536];
	size_t total = 0;
	/* a few reads at most, so a fast writer cannot starve signals */
	for (int round = 0; round < 8; round++) {
		ssize_t r = read(*fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				close(*fd);
				*fd = -1;
			}
			break;
		}
		total += (size_t)r;
		if (which == 2)
			tail_add(s, buf, (size_t)r);
		if (s->cb->on_output)
			s->cb->on_output(s->cb->ctx, which, buf, (size_t)r);
		if ((size_t)r < sizeof buf || out_state(s, which) != WATCH_OUT_OK)
			break;
	}
	if (total)
		s->last_activity = now_ms();
	return total;
}

/* ---- series ----------------------------------------------------------- */

static double hv(hw_val v)
{
	return HW_VALID(v) ? (double)v.v : NAN;
}

static double merge_max(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

static double merge_avg(double a, double b, double wa)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return (a * wa + b) / (wa + 1);
}

static void series_halve(watch_series *se)
{
	size_t g = se->n_gpus;
	for (size_t i = 0; i < se->n / 2; i++) {
		size_t a = 2 * i, b = 2 * i + 1;
		se->t_ms[i] = se->t_ms[a];
		se->attempt[i] = se->attempt[a];
		se->job_mem[i] = merge_max(se->job_mem[a], se->job_mem[b]);
		se->rss[i] = merge_max(se->rss[a], se->rss[b]);
		for (size_t k = 0; k < g; k++) {
			se->gpu_mem[i * g + k] = merge_max(se->gpu_mem[a * g + k], se->gpu_mem[b * g + k]);
			se->gpu_temp[i * g + k] = merge_max(se->gpu_temp[a * g + k], se->gpu_temp[b * g + k]);
			se->gpu_util[i * g + k] = merge_avg(se->gpu_util[a * g + k], se->gpu_util[b * g + k], 1);
			se->gpu_power[i * g + k] = merge_avg(se->gpu_power[a * g + k], se->gpu_power[b * g + k], 1);
		}
	}
	se->n /= 2;
	se->merged *= 2;
	se->pending = se->merged;
}

static void series_add(watch_series *se, const watch_sample *s)
{
	size_t g = se->n_gpus;
	if (se->n && se->pending < se->merged && se->attempt[se->n - 1] == (uint32_t)s->attempt) {
		size_t i = se->n - 1;
		double w = se->pending;
		se->job_mem[i] = merge_max(se->job_mem[i], hv(s->job_mem_bytes));
		se->rss[i] = merge_max(se->rss[i], s->n_pids ? (double)s->host_rss_bytes : NAN);
		for (size_t k = 0; k < g && k < s->n_gpus; k++) {
			const watch_gpu_sample *x = &s->gpus[k];
			se->gpu_mem[i * g + k] = merge_max(se->gpu_mem[i * g + k], hv(x->mem_used_bytes));
			se->gpu_temp[i * g + k] = merge_max(se->gpu_temp[i * g + k], hv(x->temp_c));
			se->gpu_util[i * g + k] = merge_avg(se->gpu_util[i * g + k], hv(x->util_gpu_pct), w);
			se->gpu_power[i * g + k] = merge_avg(se->gpu_power[i * g + k], hv(x->power_mw), w);
		}
		se->pending++;
		return;
	}
	if (se->n == WATCH_SERIES_MAX)
		series_halve(se);
	size_t i = se->n++;
	se->t_ms[i] = s->t_ms;
	se->attempt[i] = (uint32_t)s->attempt;
	se->job_mem[i] = hv(s->job_mem_bytes);
	se->rss[i] = s->n_pids ? (double)s->host_rss_bytes : NAN; /* no process: no point, not 0 */
	for (size_t k = 0; k < g; k++) {
		const watch_gpu_sample *x = k < s->n_gpus ? &s->gpus[k] : NULL;
		se->gpu_mem[i * g + k] = x ? hv(x->mem_used_bytes) : NAN;
		se->gpu_temp[i * g + k] = x ? hv(x->temp_c) : NAN;
		se->gpu_util[i * g + k] = x ? hv(x->util_gpu_pct) : NAN;
		se->gpu_power[i * g + k] = x ? hv(x->power_mw) : NAN;
	}
	se->pending = 1;
}

static void peak(hw_val *p, hw_val v)
{
	if (HW_VALID(v) && (!HW_VALID(*p) || v.v > p->v))
		*p = v;
}

/* ---- sampling ----------------------------------------------------------- */

static bool pid_in(const pid_t *t, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if ((uint32_t)t[i] == pid)
			return true;
	return false;
}

/* First successful snapshot: remember the GPUs and size the series. */
static void gpus_init(sup *s, const hw_snapshot *snap)
{
	watch_result *r = s->r;
	r->gpu_seen = true;
	r->n_gpus = snap->n_gpus;
	r->gpus = xcalloc(snap->n_gpus, sizeof *r->gpus);
	for (size_t i = 0; i < snap->n_gpus; i++) {
		watch_gpu_info *g = &r->gpus[i];
		g->index = snap->gpus[i].index;
		snprintf(g->name, sizeof g->name, "%s", snap->gpus[i].name);
		g->mem_total_bytes = snap->gpus[i].mem_total_bytes;
		hw_val none = {.st = HW_UNQUERIED};
		g->peak_temp_c = g->peak_power_mw = g->peak_util_pct = none;
		g->peak_mem_used_bytes = g->peak_job_mem_bytes = none;
	}
	watch_series *se = r->series;
	se->n_gpus = snap->n_gpus;
	size_t cells = WATCH_SERIES_MAX * (snap->n_gpus ? snap->n_gpus : 1);
	se->gpu_mem = xcalloc(cells, sizeof(double));
	se->gpu_util = xcalloc(cells, sizeof(double));
	se->gpu_temp = xcalloc(cells, sizeof(double));
	se->gpu_power = xcalloc(cells, sizeof(double));
	s->n_heat = snap->n_gpus;
	s->heat = xcalloc(s->n_heat ? s->n_heat : 1, sizeof *s->heat);
	for (size_t i = 0; i < s->n_heat; i++)
		watch_heat_init(&s->heat[i], s->o->temp_limit_c, s->o->heat_samples);
}

static void pause_job(sup *s, bool on)
{
	if (on == s->paused || s->pid <= 0 || s->leader_done)
		return;
	signal_job(s, on ? SIGSTOP : SIGCONT);
	s->paused = on;
	s->last_activity = now_ms();
}

static void request_stop(sup *s, const char *why, bool restart, bool final)
{
	if (s->stop_reason)
		return;
	s->stop_reason = why;
	s->stop_restart = restart;
	s->stop_final = final;
}

static void check_xid(sup *s, bool quiet)
{
	if (!s->xid_ok)
		return;
	hw_xid *x = NULL;
	size_t n = 0;
	gw_error err = {0};
	if (hw_xid_read(s->o->xid_path, 0, &x, &n, &err)) {
		free(x);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (x[i].ts_us <= s->xid_last_ts)
			continue;
		s->xid_last_ts = x[i].ts_us;
		if (quiet)
			continue;
		bool hwx = watch_xid_is_hardware(x[i].xid);
		if (hwx && s->pid > 0)
			s->hardware_xid = x[i].xid;
		emit(s, WATCH_EV_XID, -1, x[i].xid, NAN, "Xid %d on %s%s: %s", x[i].xid, x[i].pci,
		     hwx ? " (hardware)" : "", x[i].text);
	}
	free(x);
}

static void job_gpu_feed(sup *s, watch_sample *smp, uint64_t now)
{
	const watch_opts *o = s->o;
	bool running = s->pid > 0 && !s->leader_done && !s->stop_reason;
	/* Heat: the GPUs the job uses, or all when it shows on none. */
	bool any_job_gpu = false;
	for (size_t i = 0; i < smp->n_gpus; i++)
		if (HW_VALID(smp->gpus[i].job_mem_bytes) && smp->gpus[i].job_mem_bytes.v > 0)
			any_job_gpu = true;
	bool util_seen = false;
	for (size_t i = 0; i < smp->n_gpus && i < s->n_heat; i++) {
		const watch_gpu_sample *g = &smp->gpus[i];
		bool mine = !any_job_gpu || (HW_VALID(g->job_mem_bytes) && g->job_mem_bytes.v > 0);
		if (!mine)
			continue;
		if (HW_VALID(g->util_gpu_pct) && g->util_gpu_pct.v > 0)
			util_seen = true;
		int t = HW_VALID(g->temp_c) ? (int)g->temp_c.v : -1000;
		uint64_t thr = HW_VALID(g->throttle_reasons) ? (uint64_t)g->throttle_reasons.v : 0;
		watch_heat_change c = watch_heat_feed(&s->heat[i], t, thr);
		if (c == WATCH_HEAT_HOT && running) {
			char words[128] = "", what[160];
			if (thr & WATCH_THERMAL_BITS)
				hw_throttle_words(thr & WATCH_THERMAL_BITS, words, sizeof words);
			if (t > -274)
				snprintf(what, sizeof what, "%d C%s%s", t, *words ? ", " : "", words);
			else
				snprintf(what, sizeof what, "%s", words);
			emit(s, WATCH_EV_HEAT, g->index, t > -274 ? t : NAN, NAN,
			     "GPU %d at %s (limit %d C) for %d samples in a row", g->index, what,
			     o->temp_limit_c, s->heat[i].run);
			if (o->on_heat == WATCH_ACT_PAUSE && !s->paused) {
				pause_job(s, true);
				emit(s, WATCH_EV_PAUSE, g->index, NAN, NAN,
				     "job paused (SIGSTOP) until GPU %d is %d C under the limit", g->index,
				     WATCH_HEAT_HYSTERESIS_C);
			} else if (o->on_heat == WATCH_ACT_STOP) {
				request_stop(s, "heat", false, true);
			}
		} else if (c == WATCH_HEAT_CLEAR) {
			emit(s, WATCH_EV_HEAT_CLEAR, g->index, t > -274 ? t : NAN, NAN, "GPU %d cooled to %d C",
			     g->index, t);
		}
	}
	if (s->paused) {
		bool still_hot = false;
		for (size_t i = 0; i < s->n_heat; i++)
			still_hot |= s->heat[i].hot;
		if (!still_hot) {
			pause_job(s, false);
			emit(s, WATCH_EV_RESUME, -1, NAN, NAN, "job resumed (SIGCONT)");
		}
	}
	if (!running)
		return;
	if (util_seen)
		s->last_activity = now;
	if (HW_VALID(smp->job_mem_bytes)) {
		uint64_t mem = (uint64_t)smp->job_mem_bytes.v;
		double slope;
		if (!s->paused && watch_leak_feed(&s->leak, smp->t_ms, mem, &slope)) {
			/* Time to out-of-memory: free memory on the job's GPUs, or the --mem-limit. */
			double free_b = 0;
			for (size_t i = 0; i < smp->n_gpus; i++) {
				const watch_gpu_sample *g = &smp->gpus[i];
				bool mine = !any_job_gpu || (HW_VALID(g->job_mem_bytes) && g->job_mem_bytes.v > 0);
				if (mine && HW_VALID(g->mem_free_bytes))
					free_b += (double)g->mem_free_bytes.v;
			}
			if (o->mem_limit_bytes) {
				double left = (double)o->mem_limit_bytes - (double)mem;
				if (left < free_b || free_b == 0)
					free_b = left > 0 ? left : 0;
			}
			double tto = slope > 0 && free_b > 0 ? free_b / slope : NAN;
			char tbuf[32] = "unknown";
			if (isfinite(tto))
				fmt_duration(tbuf, sizeof tbuf, (uint64_t)(tto * 1000));
			emit(s, WATCH_EV_LEAK, -1, slope, tto,
			     "job GPU memory grows %.1f MiB/min after warm-up; out of memory in about %s",
			     slope * 60 / (double)MiB, tbuf);
			if (o->on_leak == WATCH_ACT_RESTART)
				request_stop(s, "leak", true, false);
			else if (o->on_leak == WATCH_ACT_STOP)
				request_stop(s, "leak", false, true);
		}
		if (o->mem_limit_bytes && mem > o->mem_limit_bytes && !s->limit_fired) {
			char a[32], b[32];
			s->limit_fired = true;
			emit(s, WATCH_EV_MEM_LIMIT, -1, (double)mem, (double)o->mem_limit_bytes,
			     "job GPU memory %s is over --mem-limit %s", fmt_bytes(a, sizeof a, mem),
			     fmt_bytes(b, sizeof b, o->mem_limit_bytes));
			request_stop(s, "mem-limit", false, false);
		}
	}
}

/* Host memory: the same leak detector over the tree's resident memory. */
static void host_leak_feed(sup *s, const watch_sample *smp)
{
	double slope;
	bool running = s->pid > 0 && !s->leader_done && !s->stop_reason;
	if (!running || s->paused || !smp->n_pids ||
	    !watch_leak_feed(&s->rss_leak, smp->t_ms, smp->host_rss_bytes, &slope))
		return;
	long long avail = watch_mem_available_bytes();
	double tto = slope > 0 && avail > 0 ? (double)avail / slope : NAN;
	char tbuf[32] = "unknown";
	if (isfinite(tto))
		fmt_duration(tbuf, sizeof tbuf, (uint64_t)(tto * 1000));
	emit(s, WATCH_EV_HOST_LEAK, -1, slope, tto,
	     "job host memory (RSS) grows %.1f MiB/min after warm-up; host out of memory in about %s",
	     slope * 60 / (double)MiB, tbuf);
	if (s->o->on_leak == WATCH_ACT_RESTART)
		request_stop(s, "host-leak", true, false);
	else if (s->o->on_leak == WATCH_ACT_STOP)
		request_stop(s, "host-leak", false, true);
}

static void sample(sup *s)
{
	watch_result *r = s->r;
	uint64_t now = now_ms();
	watch_sample smp = {0};
	smp.t_ms = now - s->t0;
	smp.wall_ms = wall_ms();
	smp.attempt = s->attempt;
	smp.job_pid = s->pid;
	smp.paused = s->paused;
	smp.job_mem_bytes.st = HW_UNQUERIED;
	pid_t *tree;
	size_t nt;
	job_tree(s, &tree, &nt);
	smp.n_pids = nt;
	smp.host_rss_bytes = watch_rss_bytes(tree, nt);
	hw_snapshot snap = {0};
	bool have = false;
	if (s->hw) {
		gw_error err = {0};
		have = hw_sample(s->hw, &snap, &err) == 0 && snap.nvml_loaded;
	}
	if (have) {
		if (!r->gpu_seen)
			gpus_init(s, &snap);
		smp.gpu_ok = true;
		smp.n_gpus = snap.n_gpus < r->n_gpus ? snap.n_gpus : r->n_gpus;
		s->gs = xgrow(s->gs, &s->gs_cap, smp.n_gpus ? smp.n_gpus : 1, sizeof *s->gs);
		smp.gpus = s->gs;
		uint64_t total = 0;
		bool total_ok = true;
		for (size_t i = 0; i < smp.n_gpus; i++) {
			const hw_gpu *g = &snap.gpus[i];
			watch_gpu_sample *x = &smp.gpus[i];
			memset(x, 0, sizeof *x);
			x->index = g->index;
			snprintf(x->name, sizeof x->name, "%s", g->name);
			x->mem_total_bytes = g->mem_total_bytes;
			x->mem_used_bytes = g->mem_used_bytes;
			x->mem_free_bytes = g->mem_free_bytes;
			x->util_gpu_pct = g->util_gpu_pct;
			x->temp_c = g->temp_c;
			x->power_mw = g->power_mw;
			x->clock_sm_mhz = g->clock_sm_mhz;
			x->clock_mem_mhz = g->clock_mem_mhz;
			x->throttle_reasons = g->throttle_reasons;
			uint64_t mine = 0;
			bool ok = true;
			for (size_t p = 0; p < g->n_procs; p++) {
				if (!pid_in(tree, nt, g->procs[p].pid))
					continue;
				x->job_procs++;
				if (HW_VALID(g->procs[p].used_mem_bytes))
					mine += (uint64_t)g->procs[p].used_mem_bytes.v;
				else
					ok = false;
			}
			x->job_mem_bytes.v = (int64_t)mine;
			x->job_mem_bytes.st = ok ? HW_OK : HW_NOT_SUPPORTED;
			if (!HW_VALID(g->procs_listed)) {
				/* no process list: the job's share is unknown, not 0 */
				x->job_mem_bytes = g->procs_listed;
				ok = false;
			}
			if (ok)
				total += mine;
			else
				total_ok = false;
			watch_gpu_info *gi = &r->gpus[i];
			peak(&gi->peak_temp_c, g->temp_c);
			peak(&gi->peak_power_mw, g->power_mw);
			peak(&gi->peak_util_pct, g->util_gpu_pct);
			peak(&gi->peak_mem_used_bytes, g->mem_used_bytes);
			peak(&gi->peak_job_mem_bytes, x->job_mem_bytes);
		}
		smp.job_mem_bytes.v = (int64_t)total;
		smp.job_mem_bytes.st = total_ok ? HW_OK : HW_NOT_SUPPORTED;
		peak(&r->peak_job_mem_bytes, smp.job_mem_bytes);
		if (r->n_attempts)
			peak(&r->attempts[r->n_attempts - 1].peak_job_mem_bytes, smp.job_mem_bytes);
	}
	if (smp.host_rss_bytes > r->peak_rss_bytes)
		r->peak_rss_bytes = smp.host_rss_bytes;
	r->samples++;
	host_leak_feed(s, &smp);
	if (have)
		job_gpu_feed(s, &smp, now);
	bool running = s->pid > 0 && !s->leader_done && !s->stop_reason;
	if (running && s->o->hang_timeout_ms && !s->hang_fired && !s->paused &&
	    now - s->last_activity >= s->o->hang_timeout_ms) {
		char d[32];
		s->hang_fired = true;
		emit(s, WATCH_EV_HANG, -1, (double)(now - s->last_activity) / 1000.0, NAN,
		     "no output%s for %s", have ? " and GPU utilisation 0%" : "",
		     fmt_duration(d, sizeof d, now - s->last_activity));
		request_stop(s, "hang", false, false);
	}
	if (now >= s->next_xid) {
		check_xid(s, false);
		s->next_xid = now + XID_POLL_MS;
	}
	if (s->cb->on_sample)
		s->cb->on_sample(s->cb->ctx, &smp);
	series_add(r->series, &smp);
	if (have)
		hw_snapshot_release(&snap);
	free(tree);
}

/* ---- one attempt ------------------------------------------------------ */

/*
 * fork + exec the job in its own process group with stdout and stderr on
 * pipes.  Returns 0, or errno of a failed exec (the attempt still counts).
 */
static void sentinel_tell(sup *s, char op, pid_t pid);

static int spawn(sup *s, char **argv, char **env)
{
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, execp[2] = {-1, -1};
	int rc = 0;
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC) || pipe2(execp, O_CLOEXEC)) {
		rc = errno;
		goto out;
	}
	pid_t self = getpid();
	pid_t p = fork();
	if (p < 0) {
		rc = errno;
		goto out;
	}
	if (p == 0) {
		child_signals(s);
		setpgid(0, 0);
		/* SIGKILL when gpuwise dies, even by SIGKILL (prctl(2)); it may already have */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != self)
			_exit(126);
		dup2(outp[1], 1);
		dup2(errp[1], 2);
		execvpe(argv[0], argv, env);
		int e = errno;
		ssize_t w = write(execp[1], &e, sizeof e);
		(void)w;
		_exit(e == ENOENT ? 127 : 126);
	}
	setpgid(p, p);
	s->pid = p;
	sentinel_tell(s, 'G', p);
	close(outp[1]);
	close(errp[1]);
	close(execp[1]);
	outp[1] = errp[1] = execp[1] = -1;
	int e = 0;
	ssize_t n;
	while ((n = read(execp[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof e)
		rc = e ? e : EINVAL;
	s->out_fd = outp[0];
	s->err_fd = errp[0];
	outp[0] = errp[0] = -1;
	fcntl(s->out_fd, F_SETFL, fcntl(s->out_fd, F_GETFL) | O_NONBLOCK);
	fcntl(s->err_fd, F_SETFL, fcntl(s->err_fd, F_GETFL) | O_NONBLOCK);
out:
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (execp[i] >= 0)
			close(execp[i]);
	}
	return rc;
}

static void attempt_reset(sup *s)
{
	s->pid = 0;
	s->leader_done = false;
	s->wait_status = 0;
	s->out_fd = s->err_fd = -1;
	s->tail_len = 0;
	s->tail[0] = '\0';
	s->paused = false;
	s->stop_reason = NULL;
	s->stop_restart = s->stop_final = s->stopping = false;
	s->hardware_xid = 0;
	s->hang_fired = s->limit_fired = false;
	s->last_activity = now_ms();
	watch_leak_init(&s->leak, rel_ms(s), s->o->leak_warmup_ms, s->o->leak_window_ms,
			s->o->leak_min_rate_bps);
	watch_leak_init(&s->rss_leak, rel_ms(s), s->o->leak_warmup_ms, s->o->leak_window_ms,
			s->o->leak_min_rate_bps);
	for (size_t i = 0; i < s->n_heat; i++)
		watch_heat_init(&s->heat[i], s->o->temp_limit_c, s->o->heat_samples);
}

/* The last whole lines of tail that fit in out (at most 12 lines). */
static void tail_lines(const char *tail, char *out, size_t n)
{
	size_t len = strlen(tail);
	while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r'))
		len--;
	size_t start = len, lines = 0;
	while (start > 0 && lines < 12) {
		size_t k = start - 1;
		while (k > 0 && tail[k - 1] != '\n')
			k--;
		if (len - k >= n)
			break;
		start = k;
		lines++;
	}
	if (!lines && len) /* one line longer than out: its end */
		start = len - (len < n - 1 ? len : n - 1);
	snprintf(out, n, "%.*s", (int)(len - start), tail + start);
}

/* Run one attempt to its end (the whole tree gone).  Returns the attempt. */
static watch_attempt *run_attempt(sup *s, watch_policy_state *ps)
{
	const watch_opts *o = s->o;
	watch_result *r = s->r;
	attempt_reset(s);
	s->attempt++;
	r->attempts = xgrow(r->attempts, &r->cap_attempts, r->n_attempts + 1, sizeof *r->attempts);
	watch_attempt *a = &r->attempts[r->n_attempts++];
	memset(a, 0, sizeof *a);
	a->n = s->attempt;
	a->start_ms = rel_ms(s);
	a->peak_job_mem_bytes.st = HW_UNQUERIED;
	if (s->halve_set)
		snprintf(a->env_value, sizeof a->env_value, "%s", s->halve_value);
	if (o->oom_halve_arg)
		snprintf(a->arg_value, sizeof a->arg_value, "%s", s->arg_value);

	const char *drop[3] = {"GPUWISE_RESTART_COUNT", "GPUWISE_RUN_TOKEN", NULL};
	char *extra[3];
	size_t nextra = 0, ndrop = 2;
	extra[nextra++] = xasprintf("GPUWISE_RESTART_COUNT=%d", s->attempt - 1);
	extra[nextra++] = xstrdup(s->token);
	if (s->halve_set) {
		drop[2] = o->oom_halve_var;
		ndrop = 3;
		extra[nextra++] = xasprintf("%s=%s", o->oom_halve_var, s->halve_value);
	}
	char **env = env_build(drop, ndrop, extra, nextra);
	/* --oom-halve-arg: this attempt's command line */
	size_t argc = 0;
	while (o->argv[argc])
		argc++;
	char **argv = xcalloc(argc + 1, sizeof *argv);
	memcpy(argv, o->argv, argc * sizeof *argv);
	char *arg_own = NULL;
	if (o->oom_halve_arg) {
		if (s->arg_joined)
			arg_own = xasprintf("%s=%s", o->oom_halve_arg, s->arg_value);
		else
			arg_own = xstrdup(s->arg_value);
		argv[s->arg_joined ? s->arg_at : s->arg_at + 1] = arg_own;
	}
	long long oom_before = watch_cgroup_oom_kills(0);
	watch_policy_note_start(ps, now_ms());
	int e = spawn(s, argv, env);
	env_free(env);
	free(argv);
	free(arg_own);
	a->pid = s->pid;
	bool exec_failed = e != 0;
	if (exec_failed)
		emit(s, WATCH_EV_START, -1, s->pid, NAN, "attempt %d: cannot run '%s': %s", s->attempt,
		     o->argv[0], strerror(e));
	else
		emit(s, WATCH_EV_START, -1, s->pid, NAN, "attempt %d started as pid %d", s->attempt,
		     (int)s->pid);

	uint64_t next_sample = now_ms();
	while (!s->leader_done) {
		uint64_t now = now_ms();
		if (now >= next_sample) {
			sample(s);
			next_sample += o->interval_ms;
			if (next_sample <= now)
				next_sample = now + o->interval_ms;
		}
		if (s->stop_reason && !s->stopping) {
			s->stopping = true;
			s->stop_deadline = now + o->grace_ms;
			signal_job(s, SIGTERM);
			if (s->paused) {
				signal_job(s, SIGCONT);
				s->paused = false;
			}
		} else if (s->stopping && now >= s->stop_deadline) {
			signal_job(s, SIGKILL);
			s->stop_deadline = now + 100;
		}
		uint64_t wake = next_sample;
		if (s->stopping && s->stop_deadline < wake)
			wake = s->stop_deadline;
		now = now_ms();
		int timeout = wake > now ? (int)(wake - now) : 0;
		/*
		 * The job's output is read only while our side can take it: a
		 * stalled reader of gpuwise's stdout stalls the job's writes, never
		 * this loop; a closed one closes the job's stdout (it sees EPIPE).
		 */
		int st1 = out_state(s, 1), st2 = out_state(s, 2);
		if (st1 == WATCH_OUT_CLOSED && s->out_fd >= 0) {
			close(s->out_fd);
			s->out_fd = -1;
		}
		bool held = (s->out_fd >= 0 && st1 == WATCH_OUT_FULL) || (s->err_fd >= 0 && st2 == WATCH_OUT_FULL);
		if (held && timeout > 20)
			timeout = 20;
		if (held) /* the job waits on our reader, it does not hang */
			s->last_activity = now_ms();
		struct pollfd p[3];
		int np = 0;
		p[np++] = (struct pollfd){.fd = s->sfd, .events = POLLIN};
		int io = np;
		if (s->out_fd >= 0 && st1 == WATCH_OUT_OK)
			p[np++] = (struct pollfd){.fd = s->out_fd, .events = POLLIN};
		if (s->err_fd >= 0 && st2 != WATCH_OUT_FULL)
			p[np++] = (struct pollfd){.fd = s->err_fd, .events = POLLIN};
		if (poll(p, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			handle_signals(s);
		for (int i = io; i < np; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == s->out_fd)
				pump(s, &s->out_fd, 1);
			else if (p[i].fd == s->err_fd)
				pump(s, &s->err_fd, 2);
		}
	}
	/* The leader is gone: end the rest of its tree, then drain the pipes. */
	kill_job(s, o->grace_ms);
	while (s->out_fd >= 0 && pump(s, &s->out_fd, 1))
		;
	while (s->err_fd >= 0 && pump(s, &s->err_fd, 2))
		;
	if (s->out_fd >= 0)
		close(s->out_fd);
	if (s->err_fd >= 0)
		close(s->err_fd);
	s->out_fd = s->err_fd = -1;
	check_xid(s, false);

	watch_exit_facts f = {
		.wait_status = s->wait_status,
		.exec_failed = exec_failed,
		.stop_reason = s->stop_reason,
		.interrupted = s->interrupted,
		.hardware_xid = s->hardware_xid,
		.stderr_tail = s->tail,
		.oom_kills_before = oom_before,
		.oom_kills_after = watch_cgroup_oom_kills(0),
	};
	a->end_ms = rel_ms(s);
	a->wait_status = s->wait_status;
	a->status = watch_exit_status(s->wait_status);
	a->cls = watch_classify(&f);
	if (a->cls == WATCH_STOPPED)
		snprintf(a->reason, sizeof a->reason, "%s", s->stop_reason);
	else if (a->cls == WATCH_HARDWARE)
		snprintf(a->reason, sizeof a->reason, "Xid %d", s->hardware_xid);
	else if (WIFSIGNALED(s->wait_status))
		snprintf(a->reason, sizeof a->reason, "%s", strsignal(WTERMSIG(s->wait_status)));
	if (a->cls != WATCH_SUCCESS)
		tail_lines(s->tail, a->stderr_tail, sizeof a->stderr_tail);
	emit(s, WATCH_EV_EXIT, -1, a->status, NAN, "attempt %d ended: %s, status %d%s%s%s", a->n,
	     watch_class_name(a->cls), a->status, *a->reason ? " (" : "", a->reason,
	     *a->reason ? ")" : "");
	return a;
}

/* ---- the run ---------------------------------------------------------- */

void watch_opts_defaults(watch_opts *o)
{
	memset(o, 0, sizeof *o);
	o->interval_ms = 1000;
	watch_policy_defaults(&o->policy);
	o->on_leak = WATCH_ACT_WARN;
	o->on_heat = WATCH_ACT_WARN;
	o->temp_limit_c = 83;
	o->heat_samples = 3;
	o->leak_warmup_ms = 120000;
	o->leak_window_ms = 30000;
	o->leak_min_rate_bps = (double)MiB / 60.0; /* 1 MiB/min */
	o->grace_ms = 10000; /* supervisord's stopwaitsecs */
}

void watch_result_release(watch_result *r)
{
	free(r->attempts);
	free(r->events);
	if (r->series) {
		free(r->series->gpu_mem);
		free(r->series->gpu_util);
		free(r->series->gpu_temp);
		free(r->series->gpu_power);
		free(r->series);
	}
	free(r->gpus);
	memset(r, 0, sizeof *r);
}

/* ---- the sentinel ------------------------------------------------------- */

/*
 * SIGKILL cannot be caught, and a killed gpuwise would leave the job
 * running with nobody watching (its leader gets PR_SET_PDEATHSIG, but its
 * descendants do not).  The sentinel is a small process forked twice
 * before gpuwise becomes a subreaper, so it is neither in gpuwise's tree
 * nor in its process group, blocked on a pipe whose write end only
 * gpuwise holds.
 * gpuwise writes each attempt's process group to it ('G' + pid) and a
 * goodbye ('B') when the run ends.  End of file without the goodbye means
 * gpuwise died: the sentinel then SIGKILLs the job's process group and
 * every process whose environment carries this run's token (descendants
 * that left the group with setsid or setpgid), sweeping until none is left.
 *
 * What stays out of reach without cgroups: a descendant that both left the
 * process group and dropped GPUWISE_RUN_TOKEN from its environment (env -i,
 * a daemon that rebuilds its environment), one running as another user,
 * and everything but the leader when the sentinel is killed too.
 */
static void sentinel_main(int fd, const char *token)
{
	pid_t pgid = 0;
	for (;;) {
		char msg[1 + sizeof(int32_t)];
		ssize_t r = read(fd, msg, sizeof msg);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == (ssize_t)sizeof msg && msg[0] == 'B')
			_exit(0);
		if (r == (ssize_t)sizeof msg && msg[0] == 'G') {
			int32_t v;
			memcpy(&v, msg + 1, sizeof v);
			pgid = (pid_t)v;
			continue;
		}
		break; /* end of file: gpuwise is gone */
	}
	for (int round = 0; round < 100; round++) {
		size_t n = watch_kill_marked(token, SIGKILL);
		if (pgid > 0 && kill(-pgid, SIGKILL) == 0)
			n++;
		if (!n)
			break;
		sleep_ms(20);
	}
	_exit(0);
}

static void sentinel_start(sup *s)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (fork() != 0)
			_exit(0); /* the sentinel is the grandchild, adopted by init */
		setsid();
		struct sigaction ign = {.sa_handler = SIG_IGN};
		sigaction(SIGINT, &ign, NULL);
		sigaction(SIGQUIT, &ign, NULL);
		sigaction(SIGHUP, &ign, NULL);
		sigaction(SIGTSTP, &ign, NULL);
		sigaction(SIGPIPE, &ign, NULL);
		/* it must hold none of gpuwise's pipes (a reader waiting for EOF would wait for it) */
		int null = open("/dev/null", O_RDWR);
		for (int fd = 0; fd < 3 && null >= 0; fd++)
			dup2(null, fd);
		if (p[0] > 3)
			close_range(3, (unsigned)p[0] - 1, 0);
		close_range((unsigned)p[0] + 1, ~0U, 0);
		sentinel_main(p[0], s->token);
	}
	close(p[0]);
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		close(p[1]);
		return;
	}
	s->sentinel_fd = p[1];
	s->r->sentinel = true;
}

static void sentinel_tell(sup *s, char op, pid_t pid)
{
	if (s->sentinel_fd < 0)
		return;
	char msg[1 + sizeof(int32_t)];
	int32_t v = (int32_t)pid;
	msg[0] = op;
	memcpy(msg + 1, &v, sizeof v);
	ssize_t w;
	while ((w = write(s->sentinel_fd, msg, sizeof msg)) < 0 && errno == EINTR)
		;
	(void)w;
}

/* Normal end: the goodbye, then reap it. */
static void sentinel_stop(sup *s)
{
	if (s->sentinel_fd < 0)
		return;
	sentinel_tell(s, 'B', 0);
	close(s->sentinel_fd);
	s->sentinel_fd = -1;
}

/* ---- --oom-halve-arg ---------------------------------------------------- */

/* Find "NAME N" or "NAME=N" (N a positive integer) in argv after argv[0]. */
static int arg_find(sup *s, const char *name, gw_error *err)
{
	char **argv = s->o->argv;
	size_t nl = strlen(name);
	long long v;
	for (int i = 1; argv[i]; i++) {
		const char *val = NULL;
		if (!strcmp(argv[i], name) && argv[i + 1]) {
			val = argv[i + 1];
			s->arg_joined = false;
		} else if (!strncmp(argv[i], name, nl) && argv[i][nl] == '=') {
			val = argv[i] + nl + 1;
			s->arg_joined = true;
		}
		if (!val)
			continue;
		if (parse_int(val, 1, (long long)1 << 62, &v))
			return gw_fail(err, GW_EINVAL, "--oom-halve-arg %s: '%s' in the command is not a positive integer",
				       name, val);
		s->arg_at = i;
		snprintf(s->arg_value, sizeof s->arg_value, "%lld", v);
		return 0;
	}
	return gw_fail(err, GW_EINVAL, "--oom-halve-arg: the command has no '%s N' or '%s=N' to halve", name, name);
}

/* Open NVML and take a first look; without GPUs, say why. */
static void gpu_open(sup *s)
{
	if (s->o->no_gpu) {
		snprintf(s->r->no_gpu_reason, sizeof s->r->no_gpu_reason, N_("--no-gpu was given"));
		return;
	}
	/* wake: the job is about to use the GPU anyway (hw_open in hw.h). */
	hw_opts ho = {.no_cuda = true, .wake = true};
	gw_error err = {0};
	s->hw = hw_open(&ho, &err);
	if (!s->hw) {
		snprintf(s->r->no_gpu_reason, sizeof s->r->no_gpu_reason, "%.200s", err.msg);
		return;
	}
	hw_snapshot snap = {0};
	if (hw_sample(s->hw, &snap, &err)) {
		snprintf(s->r->no_gpu_reason, sizeof s->r->no_gpu_reason, "%.200s", err.msg);
	} else if (!snap.nvml_loaded || snap.n_gpus == 0) {
		snprintf(s->r->no_gpu_reason, sizeof s->r->no_gpu_reason, "%.200s",
			 *snap.nvml_error ? snap.nvml_error : N_("NVML reports no GPU"));
	} else {
		hw_snapshot_release(&snap);
		return;
	}
	hw_snapshot_release(&snap);
	hw_close(s->hw);
	s->hw = NULL;
}

int watch_run(const watch_opts *o, const watch_callbacks *cb, watch_result *r, gw_error *err)
{
	static const watch_callbacks none = {0};
	sup s0 = {0}, *s = &s0;
	int rc = 0;
	memset(r, 0, sizeof *r);
	r->series = xcalloc(1, sizeof *r->series);
	r->series->merged = 1;
	r->peak_job_mem_bytes.st = HW_UNQUERIED;
	r->start_wall_ms = wall_ms();
	s->o = o;
	s->cb = cb ? cb : &none;
	s->r = r;
	s->sfd = -1;
	s->sentinel_fd = -1;
	s->out_fd = s->err_fd = -1;
	s->t0 = now_ms();
	if (!o->argv || !o->argv[0])
		return gw_fail(err, GW_EINVAL, "no command to run");
	if (o->oom_halve_arg && (rc = arg_find(s, o->oom_halve_arg, err)))
		return rc;
	if (o->oom_halve_var) {
		const char *v = getenv(o->oom_halve_var);
		long long x;
		if (!v || parse_int(v, 1, (long long)1 << 62, &x))
			return gw_fail(err, GW_EINVAL, "--oom-halve needs %s set to a positive integer (it is %s%s%s)",
				       o->oom_halve_var, v ? "'" : "", v ? v : "unset", v ? "'" : "");
		snprintf(s->halve_value, sizeof s->halve_value, "%lld", x);
		s->halve_set = true;
	}
	s->token = xasprintf("GPUWISE_RUN_TOKEN=%d.%llu", (int)getpid(), (unsigned long long)wall_ms());
	sentinel_start(s);
	/* Orphaned grandchildren come to us, not to init (prctl(2)). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		rc = gw_fail(err, GW_EIO, "cannot become a child subreaper: %s", strerror(errno));
		sentinel_stop(s);
		free(s->token);
		return rc;
	}
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < sizeof sig_end / sizeof sig_end[0]; i++)
		sigaddset(&mask, sig_end[i]);
	for (size_t i = 0; i < sizeof sig_pass / sizeof sig_pass[0]; i++)
		sigaddset(&mask, sig_pass[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&mask, sig);
	sigprocmask(SIG_BLOCK, &mask, &s->old_mask);
	struct sigaction ign = {.sa_handler = SIG_IGN};
	sigaction(SIGPIPE, &ign, &s->old_pipe);
	s->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sfd < 0) {
		rc = gw_fail(err, GW_EIO, "cannot create a signalfd: %s", strerror(errno));
		goto out;
	}

	gpu_open(s);
	if (!s->hw)
		emit(s, WATCH_EV_NO_GPU, -1, NAN, NAN, "no GPU to watch (%s): watching the host side only",
		     r->no_gpu_reason);
	/* Xids already in the log belong to the past. */
	{
		hw_xid *x = NULL;
		size_t n = 0;
		gw_error xe = {0};
		if (hw_xid_read(o->xid_path, 0, &x, &n, &xe)) {
			snprintf(r->xid_error, sizeof r->xid_error, "%.250s", xe.msg);
		} else {
			s->xid_ok = true;
			for (size_t i = 0; i < n; i++)
				if (x[i].ts_us > s->xid_last_ts)
					s->xid_last_ts = x[i].ts_us;
		}
		free(x);
		s->next_xid = now_ms() + XID_POLL_MS;
	}

	watch_policy_state ps = {0};
	for (;;) {
		watch_attempt *a = run_attempt(s, &ps);
		r->exit_status = a->status;
		if (a->cls == WATCH_NOT_STARTED)
			break;
		char why[160] = "";
		uint64_t delay = 0;
		bool again = false;
		if (s->stop_final)
			snprintf(why, sizeof why, N_("gpuwise stopped it (%s)"), a->reason);
		else
			again = watch_policy_next(&o->policy, &ps, a->cls, a->status, a->end_ms - a->start_ms,
						  s->stop_restart, now_ms(), &delay, why, sizeof why);
		if (again && a->cls == WATCH_CUDA_OOM && (s->halve_set || o->oom_halve_arg)) {
			long long next_env = 0, next_arg = 0;
			if (s->halve_set && !watch_halve(s->halve_value, &next_env)) {
				again = false;
				snprintf(why, sizeof why, N_("%s is already %s and cannot be halved"), o->oom_halve_var,
					 s->halve_value);
			} else if (o->oom_halve_arg && !watch_halve(s->arg_value, &next_arg)) {
				again = false;
				snprintf(why, sizeof why, N_("%s is already %s and cannot be halved"), o->oom_halve_arg,
					 s->arg_value);
			}
			if (!again) {
				ps.restarts--;
			} else {
				if (s->halve_set) {
					emit(s, WATCH_EV_OOM_HALVE, -1, (double)next_env, NAN, "%s %s -> %lld for the next attempt",
					     o->oom_halve_var, s->halve_value, next_env);
					snprintf(s->halve_value, sizeof s->halve_value, "%lld", next_env);
				}
				if (o->oom_halve_arg) {
					emit(s, WATCH_EV_OOM_HALVE, -1, (double)next_arg, NAN, "%s %s -> %lld for the next attempt",
					     o->oom_halve_arg, s->arg_value, next_arg);
					snprintf(s->arg_value, sizeof s->arg_value, "%lld", next_arg);
				}
			}
		}
		if (!again) {
			bool wanted = o->policy.restart != WATCH_RESTART_NEVER || s->stop_restart;
			if (wanted && a->cls != WATCH_SUCCESS && a->cls != WATCH_INTERRUPTED)
				emit(s, WATCH_EV_GIVE_UP, -1, a->status, NAN, "not restarting: %s", why);
			break;
		}
		a->backoff_ms = delay;
		char d[32];
		if (o->policy.max_restarts >= 0)
			emit(s, WATCH_EV_RESTART, -1, (double)delay, NAN, "restart %d of %d in %s", ps.restarts,
			     o->policy.max_restarts, fmt_duration(d, sizeof d, delay));
		else
			emit(s, WATCH_EV_RESTART, -1, (double)delay, NAN, "restart %d in %s", ps.restarts,
			     fmt_duration(d, sizeof d, delay));
		uint64_t until = now_ms() + delay;
		while (!s->interrupted && now_ms() < until)
			wait_signals(s, until - now_ms());
		if (s->interrupted)
			break;
	}
out:
	/* Nothing of the job may outlive us; hooks get the grace period to finish. */
	if (s->sfd >= 0) {
		kill_job(s, o->grace_ms);
		uint64_t hook_deadline = now_ms() + o->grace_ms;
		while (s->n_hooks && now_ms() < hook_deadline) {
			reap(s);
			if (s->n_hooks)
				wait_signals(s, 20);
		}
		/* Hooks are reaped with the job: their groups (background children too), then anything left. */
		for (int round = 0; round < 250; round++) {
			size_t n = 0;
			for (size_t i = 0; i < s->n_hooks; i++)
				n += kill(-s->hooks[i], SIGKILL) == 0;
			for (size_t i = 0; i < s->n_hook_groups; i++)
				n += kill(-s->hook_groups[i], SIGKILL) == 0;
			pid_t *t = NULL;
			size_t nt = 0;
			if (!watch_tree(getpid(), &t, &nt, NULL))
				for (size_t i = 0; i < nt; i++)
					n += kill(t[i], SIGKILL) == 0;
			free(t);
			reap(s);
			if (!n && !s->n_hooks)
				break;
			wait_signals(s, 20);
		}
		close(s->sfd);
	}
	sentinel_stop(s);
	free(s->token);
	sigaction(SIGPIPE, &s->old_pipe, NULL);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	if (s->hw)
		hw_close(s->hw);
	free(s->heat);
	free(s->gs);
	r->duration_ms = rel_ms(s);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		r->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return rc;
}

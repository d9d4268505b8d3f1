/*
 * queue/launch: starting a job (the shim that becomes its user, its argv
 * and environment for `gpuwise run`), signalling it and recording its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "queue/daemon_int.h"

/* ---- processes ----------------------------------------------------------- */
uint64_t qd_proc_start_ticks(pid_t pid)
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

/* The job ended: record it and take it out of memory (or requeue it when preempted). */
void qd_job_ended(qd *d, djob *x, int status, bool known)
{
	job *j = &x->j;
	j->end_ms = wall_ms();
	j->exit_status = status;
	j->pid = 0;
	j->pid_start_ticks = 0;
	qd_usage_ended(d, j);
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
		qd_set_reason(j, "preempted and requeued: %s", x->preempt_note);
		break;
	case STOP_CANCEL:
		j->state = JOB_CANCELLED;
		qd_set_reason(j, "cancelled while running");
		break;
	case STOP_TIMELIMIT:
		j->state = JOB_FAILED;
		qd_set_reason(j, "stopped at its time limit of %s", fmt_duration(t, sizeof t, j->spec.time_limit_ms));
		break;
	case STOP_OVER:
		j->state = JOB_FAILED;
		qd_set_reason(j, "%s", x->stop_note ? x->stop_note : "stopped over its VRAM request");
		break;
	default:
		if (!known) {
			j->state = JOB_FAILED;
			qd_set_reason(j, "lost: its process ended while the daemon was down and left no exit status");
		} else if (status == 0) {
			j->state = JOB_DONE;
			if (!x->over_noted)
				qd_set_reason(j, NULL);
		} else {
			j->state = JOB_FAILED;
			if (!x->over_noted) {
				if (status > 128)
					qd_set_reason(j, "exit status %d (signal %d)", status, status - 128);
				else
					qd_set_reason(j, "exit status %d", status);
			}
		}
	}
	x->stop = STOP_NONE;
	j->stop_kind = 0;
	j->stop_deadline_ms = 0;
	x->own_child = false;
	qd_save(d, x);
	qd_log(d, "job %llu %s (status %d)", (unsigned long long)j->id, job_state_name(j->state), status);
	d->dirty = true;
	if (job_state_ended(j->state)) {
		uint32_t uid = j->spec.uid;
		qd_log_ended(d, j->id);
		qd_drop_job(d, x);
		/* the user's log budget: their oldest ended jobs' logs go first */
		if (d->cfg.user_log_limit_bytes)
			qd_user_logs(d, uid, true);
		for (size_t i = 0; i < d->n_log_cache; i++)
			if (d->log_cache[i].uid == uid)
				d->log_cache[i].at_ms = 0;
	}
}

int qd_read_status_file(qd *d, uint64_t id, int *status)
{
	char *p = qd_job_path(d, d->run_dir, id, "status");
	char *text = NULL;
	size_t len;
	gw_error e;
	int rc = gw_read_file(p, false, 64, &text, &len, &e);
	free(p);
	/* "-" is the shim's placeholder: the job has not ended */
	if (rc || !len || text[0] < '0' || text[0] > '9') {
		free(text);
		return -1;
	}
	*status = atoi(text);
	free(text);
	return 0;
}

void qd_signal_job(djob *x, int sig)
{
	if (x->j.pid > 0)
		kill(-x->j.pid, sig);
}

void qd_stop_job(qd *d, djob *x, int why, const char *note)
{
	if (x->stop)
		return;
	x->stop = why;
	free(x->stop_note);
	x->stop_note = note ? xstrdup(note) : NULL;
	x->kill_at_ms = now_ms() + d->cfg.kill_wait_ms;
	/* committed with this iteration, before the reply: a restart resumes the stop */
	x->j.stop_kind = why;
	x->j.stop_deadline_ms = wall_ms() + d->cfg.kill_wait_ms;
	qd_save(d, x);
	qd_signal_job(x, SIGTERM);
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

/* Close every descriptor from fd up (the daemon's, in a freshly forked shim). */
static void close_from(int fd)
{
	if (close_range((unsigned)fd, ~0U, 0) == 0)
		return;
	long max = sysconf(_SC_OPEN_MAX);
	for (long i = fd; i < (max > 0 ? max : 65536); i++)
		close((int)i);
}

static void on_child(int sig)
{
	(void)sig; /* only interrupts ppoll */
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a full disk: the output is lost, the job goes on */
		p += w;
		n -= (size_t)w;
	}
}

/*
 * The shim's copy of the job's output (the read end in) to its log (out),
 * at most limit bytes counting what the log already holds (a requeued
 * job appends); past it, note once and drop the rest.  Returns when the
 * supervisor c has ended, its wait status in *ws.  SIGCHLD is blocked on
 * entry and only let through inside ppoll, so its end is never missed.
 */
static void copy_log(int in, int out, uint64_t limit, const char *note, pid_t c, int *ws)
{
	struct sigaction sa = {.sa_handler = on_child};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t open_mask;
	sigemptyset(&open_mask);
	struct stat sb;
	uint64_t written = fstat(out, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	bool over = written >= limit, eof = false;
	static char buf[65536];
	for (int drain = -1; drain != 0;) {
		if (drain < 0 && waitpid(c, ws, WNOHANG) == c) {
			/* what is in the pipe now, not what a left-over child writes forever */
			fcntl(in, F_SETFL, O_NONBLOCK);
			drain = 256;
		}
		if (drain < 0 && eof) {
			while (waitpid(c, ws, 0) < 0 && errno == EINTR)
				;
			break;
		}
		if (drain < 0) {
			struct pollfd p = {.fd = in, .events = POLLIN};
			if (ppoll(&p, 1, NULL, &open_mask) < 0)
				continue;
		} else
			drain--;
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (drain >= 0)
				break;
			eof = true;
			continue;
		}
		if (over)
			continue;
		size_t k = (uint64_t)n < limit - written ? (size_t)n : (size_t)(limit - written);
		write_all(out, buf, k);
		written += k;
		if (written >= limit) {
			over = true;
			write_all(out, note, strlen(note));
		}
	}
}

/*
 * Start the job: fork a shim that becomes the submitting user, starts
 * `gpuwise run` with the job's GPUs and waits for it, writing the exit
 * status to run/ID.status.  Returns the shim's pid, or -1.
 */
pid_t qd_launch(qd *d, djob *x)
{
	job *j = &x->j;
	const job_spec *s = &j->spec;
	char **env = NULL;
	size_t n_env = 0, cap_env = 0;
	struct passwd *pw = getpwuid(s->uid);
	char *uname = pw ? xstrdup(pw->pw_name) : NULL;
	char *home = xstrdup(pw && pw->pw_dir ? pw->pw_dir : "/");
	char *shell = xstrdup(pw && pw->pw_shell ? pw->pw_shell : "/bin/sh");
	/* a clean base; the submitter's environment (filtered at submit) and --env replace it by name */
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
		/*
		 * a hard cap at the request, per GPU (libgpuwise-cap.so, issue 14);
		 * with standard sizes at the slot it holds on its GPUs
		 */
		ARG(xstrdup("--vram-cap"));
		ARG(xasprintf("%llu", (unsigned long long)sched_job_slot_bytes(j, d->gpus, d->n_gpus)));
	}
	ARG(xstrdup("--log"));
	ARG(qd_job_path(d, d->run_dir, j->id, "jsonl"));
	ARG(xstrdup("--"));
	for (size_t i = 0; i < s->argc; i++)
		ARG(xstrdup(s->argv[i]));
#undef ARG
	char *out_path = qd_job_path(d, d->logs_dir, j->id, "log");
	char *st_path = qd_job_path(d, d->run_dir, j->id, "status");
	char *jl_path = qd_job_path(d, d->run_dir, j->id, "jsonl");
	unlink(st_path);
	uint64_t limit = d->cfg.log_limit_bytes;
	char note[200];
	if (limit) {
		char lb[32];
		snprintf(note, sizeof note,
			 "\ngpuwise: this job's output reached the log limit of %s (log_limit in daemon.conf); "
			 "the rest is not kept\n", fmt_bytes(lb, sizeof lb, limit));
	}
	pid_t pid = fork();
	if (pid == 0) {
		/*
		 * First hold nothing of the daemon's (its lock, socket, database):
		 * a daemon killed now is restarted at once, and no job inherits them.
		 */
		close_from(3);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		/* `ps` and `pkill -f 'gpuwise daemon'` must not take this shim for the daemon */
		char title[96];
		snprintf(title, sizeof title, "gpuwise-shim job %llu", (unsigned long long)j->id);
		gw_proc_title_set(title);
		int logfd = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
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
		/* the status file's space is taken now: on a full disk the end is still recorded */
		write_str(stfd, "-       \n");
		/* with a log limit the job writes to a pipe this shim copies, up to the limit */
		int pfd[2] = {-1, -1};
		if (limit && pipe2(pfd, O_CLOEXEC) < 0)
			_exit(125);
		int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int outfd = limit ? pfd[1] : logfd;
		if (nullfd < 0 || dup2(nullfd, 0) < 0 || dup2(outfd, 1) < 0 || dup2(outfd, 2) < 0)
			_exit(125);
		if (chdir(s->cwd ? s->cwd : home) != 0) {
			write_str(logfd, "gpuwise: cannot enter the job's working directory '");
			write_str(logfd, s->cwd ? s->cwd : home);
			write_str(logfd, "'\n");
			write_str(stfd, "126\n");
			_exit(126);
		}
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, NULL);
		pid_t c = fork();
		if (c == 0) {
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			sigprocmask(SIG_SETMASK, &none, NULL);
			/* the daemon's own umask is 0077; the job gets the one it was started with */
			umask(d->job_umask);
			execve(argv[0], argv, env);
			write_str(2, "gpuwise: cannot start the supervisor\n");
			_exit(127);
		}
		int ws = 0, code = 127;
		if (c > 0) {
			if (limit) {
				/* the shim's own stdout and stderr must not keep the pipe open */
				dup2(nullfd, 1);
				dup2(nullfd, 2);
				close(pfd[1]);
				copy_log(pfd[0], logfd, limit, note, c, &ws);
			} else {
				while (waitpid(c, &ws, 0) < 0 && errno == EINTR)
					;
			}
			code = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
		}
		char buf[16];
		int bl = snprintf(buf, sizeof buf, "%d\n", code);
		if (pwrite(stfd, buf, (size_t)bl, 0) == bl)
			(void)!ftruncate(stfd, bl);
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

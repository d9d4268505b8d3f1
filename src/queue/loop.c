/*
 * queue/loop: `gpuwise daemon` itself: the state directory, the listening
 * socket, the clients' non-blocking reads and writes and the poll loop.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include <time.h>
#include <unistd.h>

#include "queue/daemon_int.h"

/* ---- setup -------------------------------------------------------------------------- */
static int make_dir(const char *p, mode_t mode, gw_error *err)
{
	/* the daemon's umask is 0077: a directory it creates gets its mode explicitly */
	if (mkdir(p, mode) == 0) {
		chmod(p, mode);
		return 0;
	}
	if (errno == EEXIST)
		return 0;
	return gw_fail(err, GW_EIO, N_("cannot create '%s': %s"), p, strerror(errno));
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
		return gw_fail(err, GW_EINVAL, N_("socket path '%s' is too long"), d->socket_path);
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
		return gw_fail(err, GW_EIO, N_("a daemon already listens on '%s'"), d->socket_path);
	}
	if (probe >= 0)
		close(probe);
	unlink(d->socket_path);
	d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->lfd < 0)
		return gw_fail(err, GW_EIO, N_("socket: %s"), strerror(errno));
	mode_t old = umask(d->root ? 0111 : 0177);
	int b = bind(d->lfd, (struct sockaddr *)&a, sizeof a);
	umask(old);
	if (b < 0 || listen(d->lfd, 512) < 0)
		return gw_fail(err, GW_EIO, N_("cannot listen on '%s': %s"), d->socket_path, strerror(errno));
	return 0;
}

static void daemon_release(qd *d)
{
	qd_clients_release(d);
	for (size_t i = 0; i < d->n_jobs; i++)
		qd_djob_free(d->jobs[i]);
	free(d->jobs);
	store_projects_free(d->projects, d->n_projects);
	qd_gpus_free(d);
	if (d->hw)
		hw_close(d->hw);
	qd_usage_free(d);
	store_close(d->st);
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(d->socket_path);
	}
	if (d->sfd >= 0)
		close(d->sfd);
	if (d->lockfd >= 0)
		close(d->lockfd);
	if (d->ids_fd >= 0) {
		fdatasync(d->ids_fd);
		close(d->ids_fd);
	}
	free(d->tx_new);
	free(d->state_dir);
	free(d->socket_path);
	free(d->logs_dir);
	free(d->run_dir);
}

/*
 * Take the state directory's lock; its file names the holder.  A holder
 * that is ending (a job's shim between fork and closing the daemon's
 * descriptors, a daemon being reaped) gets two seconds to let go.
 */
static int lock_state(qd *d, gw_error *err)
{
	char *lock = xasprintf("%s/daemon.lock", d->state_dir);
	d->lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc = 0;
	if (d->lockfd < 0) {
		rc = gw_fail(err, GW_EIO, N_("cannot write the state directory '%s': %s"), d->state_dir, strerror(errno));
		goto out;
	}
	for (int i = 0; flock(d->lockfd, LOCK_EX | LOCK_NB) < 0; i++) {
		int why = errno;
		if (why != EWOULDBLOCK || i == 40) {
			char pid[24] = "";
			ssize_t n = pread(d->lockfd, pid, sizeof pid - 1, 0);
			pid[n > 0 ? n : 0] = 0;
			pid[strcspn(pid, "\n")] = 0;
			if (why != EWOULDBLOCK)
				rc = gw_fail(err, GW_EIO, N_("cannot lock '%s': %s"), lock, strerror(why));
			else
				rc = gw_fail(err, GW_EIO, N_("another daemon%s%s%s uses the state in '%s'"), *pid ? " (pid " : "",
					     pid, *pid ? ")" : "", d->state_dir);
			goto out;
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	char buf[24];
	int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
	if (ftruncate(d->lockfd, 0) || pwrite(d->lockfd, buf, (size_t)n, 0) != n) {
		rc = gw_fail(err, GW_EIO, N_("cannot write the state directory '%s': %s"), d->state_dir, strerror(errno));
		goto out;
	}
out:
	free(lock);
	return rc;
}

/* The highest job id named by a file "ID.ext" in dir (logs/, run/), 0 for none. */
static uint64_t max_file_id(const char *dir)
{
	DIR *dh = opendir(dir);
	uint64_t top = 0;
	if (!dh)
		return 0;
	for (struct dirent *e; (e = readdir(dh));) {
		char *end;
		unsigned long long v = strtoull(e->d_name, &end, 10);
		if (end != e->d_name && *end == '.' && v > top)
			top = v;
	}
	closedir(dh);
	return top;
}

/* Move state.db and its -wal and -shm aside (--new-state); the new name is logged. */
static int move_state_aside(qd *d, const char *dbp, gw_error *err)
{
	static const char *const ext[] = {"", "-wal", "-shm"};
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", gmtime_r(&now, &tm));
	for (int i = 0; i < 3; i++) {
		char *from = xasprintf("%s%s", dbp, ext[i]);
		char *to = xasprintf("%s.old-%s%s", dbp, stamp, ext[i]);
		int r = rename(from, to);
		if (r == 0)
			qd_log(d, "--new-state: moved '%s' aside to '%s'", from, to);
		else if (errno != ENOENT)
			r = gw_fail(err, GW_EIO, N_("cannot move '%s' aside: %s"), from, strerror(errno));
		else
			r = 0;
		free(from);
		free(to);
		if (r)
			return r;
	}
	return 0;
}

/*
 * Open state.db, refusing one that is not sound: empty, damaged, missing or
 * behind the ids already handed out (state/ids and the job files), for the
 * next ids would be old ones and their logs another job's.  --new-state
 * moves it aside and starts a new one whose ids continue after the old.
 */
static int open_state(qd *d, gw_error *err)
{
	char *dbp = xasprintf("%s/state.db", d->state_dir);
	char *idp = xasprintf("%s/ids", d->state_dir);
	char *how = xasprintf("restore it from a backup, or start anew with 'gpuwise daemon%s%s%s --new-state'",
			      d->o->state_dir ? " --state '" : "", d->o->state_dir ? d->o->state_dir : "",
			      d->o->state_dir ? "'" : "");
	int rc = 0;
	uint64_t handed = 0, last;
	char *text = NULL;
	size_t len;
	gw_error e2;
	if (gw_read_file(idp, false, 64, &text, &len, &e2) == 0)
		handed = strtoull(text, NULL, 10);
	free(text);
	uint64_t f = max_file_id(d->logs_dir);
	if (f > handed)
		handed = f;
	f = max_file_id(d->run_dir);
	if (f > handed)
		handed = f;
	struct stat sb;
	if (d->o->new_state) {
		if ((rc = move_state_aside(d, dbp, err)))
			goto out;
	} else if (handed && stat(dbp, &sb) < 0 && errno == ENOENT) {
		rc = gw_fail(err, GW_EFORMAT, N_("state database '%s' is missing, but job ids up to %llu were handed out; %s"),
			     dbp, (unsigned long long)handed, how);
		goto out;
	}
	rc = store_open(dbp, &d->st, err);
	if (rc == GW_EFORMAT) {
		char *m = xstrdup(err->msg);
		rc = gw_fail(err, GW_EFORMAT, N_("state database '%s' %s; %s"), dbp, m, how);
		free(m);
	}
	if (rc)
		goto out;
	/* older versions left these 0644 */
	static const char *const ext[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		char *p = xasprintf("%s%s", dbp, ext[i]);
		chmod(p, 0600);
		free(p);
	}
	last = store_last_id(d->st);
	if (last < handed) {
		if (!d->o->new_state) {
			rc = gw_fail(err, GW_EFORMAT,
				     "state database '%s' has lost its history: its last job id is %llu, but ids up to "
				     "%llu were handed out; %s",
				     dbp, (unsigned long long)last, (unsigned long long)handed, how);
			goto out;
		}
		if ((rc = store_set_last_id(d->st, handed, err)))
			goto out;
		qd_log(d, "--new-state: a new state database; job ids continue after %llu", (unsigned long long)handed);
		last = handed;
	}
	d->ids_fd = open(idp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->ids_fd < 0) {
		rc = gw_fail(err, GW_EIO, N_("cannot write '%s': %s"), idp, strerror(errno));
		goto out;
	}
	d->last_id = 0;
	char buf[24];
	int n = snprintf(buf, sizeof buf, "%020llu\n", (unsigned long long)last);
	if (pwrite(d->ids_fd, buf, (size_t)n, 0) != n || fdatasync(d->ids_fd)) {
		rc = gw_fail(err, GW_EIO, N_("cannot write '%s': %s"), idp, strerror(errno));
		goto out;
	}
	d->last_id = last;
out:
	free(dbp);
	free(idp);
	free(how);
	return rc;
}

int queue_daemon_run(const queue_daemon_opts *o, gw_error *err)
{
	qd d = {.o = o, .sfd = -1, .lfd = -1, .lockfd = -1, .ids_fd = -1, .http_fd = -1};
	int rc = 0;
	/* state.db, its -wal and -shm, the logs: for the daemon and each job's owner only */
	d.job_umask = umask(077);
	qd_config_defaults(&d.cfg);
	d.self_uid = geteuid();
	d.root = d.self_uid == 0;
	const char *cfgp = o->config_path ? o->config_path : d.root ? QUEUE_SYSTEM_CONFIG : NULL;
	if (cfgp && (rc = qd_config_load(cfgp, o->config_path != NULL, &d.cfg, err)))
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
	if ((rc = lock_state(&d, err)))
		goto out;
	ssize_t el = readlink("/proc/self/exe", d.exe, sizeof d.exe - 1);
	if (el <= 0) {
		rc = gw_fail(err, GW_EIO, N_("cannot find the gpuwise binary: %s"), strerror(errno));
		goto out;
	}
	d.exe[el] = 0;
	if ((rc = open_state(&d, err)))
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
	qd_gpus_refresh(&d);
	d.hw_at_ms = now_ms();
	qd_usage_load(&d);
	/* the users' log counts, corrected by one look at every kept log */
	qd_logs_recount(&d);
	qd_tx_commit(&d);

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
	if ((rc = qd_http_bind(&d, err)))
		goto out;
	qd_readopt(&d);
	qd_clients_init(&d);
	d.http_pid = qd_http_start(&d);
	qd_log(&d, "gpuwise daemon %s: %s queue on %s, state in %s, %zu GPU%s, %zu job%s waiting or running",
	      GPUWISE_VERSION, d.root ? N_("system") : N_("personal"), d.socket_path, d.state_dir, d.n_gpus,
	      d.n_gpus == 1 ? "" : "s", d.n_jobs, d.n_jobs == 1 ? "" : "s");
	d.dirty = true;
	d.expire_at_ms = 0;

	struct pollfd *pfd = NULL;
	size_t cap_pfd = 0;
	uint64_t tick_at = 0;
	bool more = false;       /* a client has requests it can be served without waiting */
	uint64_t pass_cost_ms = 0; /* how long the last scheduling pass took */
	while (!d.stopping) {
		size_t np = 0;
		qd_clients_fit(&d);
		pfd = xgrow(pfd, &cap_pfd, d.n_clients + 2, sizeof *pfd);
		pfd[np++] = (struct pollfd){.fd = d.sfd, .events = POLLIN};
		pfd[np++] = (struct pollfd){.fd = qd_accepting(&d) ? d.lfd : -1, .events = POLLIN};
		for (size_t i = 0; i < d.n_clients; i++)
			pfd[np++] = (struct pollfd){.fd = d.clients[i]->fd, .events = qd_client_events(&d, d.clients[i])};
		int pr = poll(pfd, np, more ? 0 : TICK_MS);
		if (pr < 0 && errno != EINTR && errno != EINVAL)
			break;
		if (pr < 0) {
			/* EINVAL: more descriptors than RLIMIT_NOFILE, lowered just now; fit them next pass */
			for (size_t i = 0; i < np; i++)
				pfd[i].revents = 0;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(d.sfd, &si, sizeof si) == sizeof si)
				if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
					d.stopping = true;
		}
		/* read what came, then serve each connection a bounded round of requests */
		size_t n_before = d.n_clients;
		for (size_t i = 0; i < n_before; i++)
			if (pfd[2 + i].revents & (POLLIN | POLLHUP | POLLERR))
				qd_client_read(&d, d.clients[i]);
		more = false;
		qd_clients_pass(&d);
		for (size_t i = 0; i < n_before; i++)
			more |= qd_client_serve(&d, d.clients[i]);
		if (pfd[1].revents & POLLIN)
			qd_accept(&d);
		uint64_t mono = now_ms();
		if (mono >= tick_at) {
			tick_at = mono + TICK_MS;
			qd_watch_jobs(&d);
			qd_http_watch(&d);
			if (mono - d.hw_at_ms >= HW_EVERY_MS) {
				qd_gpus_refresh(&d);
				d.hw_at_ms = mono;
				d.dirty = true;
			}
			if (mono >= d.expire_at_ms) {
				qd_expire_logs(&d);
				d.expire_at_ms = mono + 600000;
			}
		}
		/* group commit: everything this iteration wrote, before any reply */
		if (qd_tx_commit(&d)) {
			for (size_t i = 0; i < d.n_clients; i++) {
				client *c = d.clients[i];
				sb_release(&c->out);
				c->out_off = 0;
				qd_reply_error(c, "the daemon could not save its state: %s", d.err.msg);
				c->closing = true;
			}
		}
		/*
		 * With a long queue, at most one pass every 50 ms under a burst, and
		 * never more than a fifth of the loop's time: a pass over 100,000
		 * queued jobs takes ~100 ms, and one after each request of a mass
		 * cancel would make it take minutes.
		 */
		uint64_t gap = pass_cost_ms * 4 > 50 ? pass_cost_ms * 4 : 50;
		if (d.dirty && (d.n_jobs < 1000 || mono - d.pass_at_ms >= gap)) {
			d.pass_at_ms = mono;
			qd_schedule(&d);
			qd_tx_commit(&d);
			pass_cost_ms = now_ms() - mono;
		}
		for (size_t i = 0; i < d.n_clients; i++)
			if (d.clients[i]->out_off < d.clients[i]->out.len)
				qd_client_write(&d, d.clients[i]);
		qd_clients_reap(&d, mono);
	}
	free(pfd);
	/* unless it already ended and was reaped with the jobs */
	if (d.http_pid > 0 && waitpid(d.http_pid, NULL, WNOHANG) == 0) {
		kill(d.http_pid, SIGTERM);
		waitpid(d.http_pid, NULL, 0);
	}
	qd_log(&d, "stopping; %zu running job%s keep running and are re-adopted on the next start",
	      d.n_jobs, d.n_jobs == 1 ? "" : "s");
	qd_tx_commit(&d);
out:
	daemon_release(&d);
	umask(d.job_umask);
	return rc;
}

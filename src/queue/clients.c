/*
 * queue/clients: the daemon's connections, so that no client and no user
 * can stall the one-threaded loop or grow its memory without bound
 * (issue 20):
 *
 *  - requests are handled one at a time from a connection's buffer, at
 *    most CLIENT_ROUND of them per loop pass, and the next one only while
 *    less than CLIENT_OUT_BUDGET of replies wait for the client: a client
 *    that pipelines 2,000 `queue` requests and never reads holds about one
 *    megabyte and is simply not served further until it reads;
 *  - a connection is read only while it has room for a request and its
 *    user is under max_buffered_per_user; a connection that is neither
 *    read from nor takes its replies for client_timeout is closed;
 *  - per user: at most max_connections_per_user connections,
 *    max_requests_per_user a second, a reply counting one more per 4 KiB (a
 *    token bucket; excess requests wait, none is dropped), about 192 KiB
 *    of replies made per loop pass (so a pass serving everyone stays short)
 *    and max_jobs_per_user jobs waiting or running;
 *    administrators are exempt and have admin_connections of the
 *    max_connections kept for them;
 *  - at the descriptor limit (EMFILE) a spare descriptor lets the daemon
 *    accept and refuse with a reason instead of spinning on a listening
 *    socket it cannot drain, and the user holding the most connections
 *    gives up its oldest ones so that other users still get in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "queue/daemon_int.h"

#define CLIENT_OUT_BUDGET (1024 * 1024)  /* replies waiting before the next request waits */
#define CLIENT_IN_PENDING 65536          /* complete requests read ahead of their handling */
#define CLIENT_ROUND 64                  /* requests of one connection per loop pass */
#define USER_PASS_BYTES (192 * 1024)     /* replies made for one user per loop pass (~15 ms of work) */
#define TOKEN_BYTES 4096                 /* a reply costs one request more per 4 KiB */
#define FD_SPARE 16                      /* descriptors kept for the store, /proc, the jobs' shims */
#define BIG_BUFFER (256 * 1024)          /* a buffer this large is freed once empty */
#define TRIM_EVERY_MS 1000

struct uid_use {
	uid_t uid;
	bool admin;
	size_t conns;
	uint64_t bytes;          /* its connections' unhandled requests and unsent replies */
	uint64_t pass_bytes;     /* replies made for it in this loop pass */
	uint64_t jobs;           /* waiting or running */
	double tokens;           /* requests it may make now */
	uint64_t tokens_ms;      /* monotonic, when tokens was last topped up */
};

/* ---- configuration ------------------------------------------------------------ */
void qd_limits_defaults(qd_limits *l)
{
	l->max_connections = 1024;
	l->admin_connections = 16;
	l->max_connections_per_user = 64;
	l->max_buffered_per_user_bytes = 16 * MiB;
	l->max_requests_per_user_s = 2000;
	l->max_jobs_per_user = 10000;
}

/* One daemon.conf key of ours: true when it is one (ok says whether its value is good). */
bool qd_limits_key(config *cfg, const char *k, const char *v, bool *ok)
{
	qd_limits *l = &cfg->lim;
	long long ll;
	uint64_t u;
	if (!strcmp(k, "http")) {
		*ok = strlen(v) < sizeof cfg->http && strchr(v, ':') != NULL;
		if (*ok)
			strcpy(cfg->http, v);
	} else if (!strcmp(k, "http_per_address")) {
		*ok = parse_int(v, 1, 100000, &ll) == 0;
		cfg->http_per_address = (unsigned)ll;
	} else if (!strcmp(k, "max_connections")) {
		*ok = parse_int(v, 1, 1000000, &ll) == 0;
		l->max_connections = (size_t)ll;
	} else if (!strcmp(k, "admin_connections")) {
		*ok = parse_int(v, 0, 1000000, &ll) == 0;
		l->admin_connections = (size_t)ll;
	} else if (!strcmp(k, "max_connections_per_user")) {
		*ok = parse_int(v, 1, 1000000, &ll) == 0;
		l->max_connections_per_user = (size_t)ll;
	} else if (!strcmp(k, "max_buffered_per_user")) {
		*ok = parse_size(v, &u) == 0 && u >= 2 * MiB;
		l->max_buffered_per_user_bytes = u;
	} else if (!strcmp(k, "max_requests_per_user")) {
		*ok = parse_int(v, 1, 100000000, &ll) == 0;
		l->max_requests_per_user_s = (uint64_t)ll;
	} else if (!strcmp(k, "max_jobs_per_user")) {
		*ok = parse_int(v, 1, 100000000, &ll) == 0;
		l->max_jobs_per_user = (uint64_t)ll;
	} else
		return false;
	return true;
}

/* ---- users -------------------------------------------------------------------- */
static uid_use *uid_find(qd *d, uid_t uid)
{
	for (size_t i = 0; i < d->n_uids; i++)
		if (d->uids[i]->uid == uid)
			return d->uids[i];
	return NULL;
}

static uid_use *uid_get(qd *d, uid_t uid, gid_t gid)
{
	uid_use *u = uid_find(d, uid);
	if (u)
		return u;
	u = xcalloc(1, sizeof *u);
	u->uid = uid;
	client probe = {.uid = uid, .gid = gid};
	u->admin = qd_is_admin(d, &probe);
	u->tokens = (double)d->cfg.lim.max_requests_per_user_s;
	u->tokens_ms = now_ms();
	d->uids = xgrow(d->uids, &d->cap_uids, d->n_uids + 1, sizeof *d->uids);
	d->uids[d->n_uids++] = u;
	return u;
}

/* A user with no connection and no job is forgotten (its budget is full again by then). */
static void uid_forget_idle(qd *d, uint64_t mono)
{
	size_t k = 0;
	for (size_t i = 0; i < d->n_uids; i++) {
		uid_use *u = d->uids[i];
		if (!u->conns && !u->jobs && mono - u->tokens_ms > 1000)
			free(u);
		else
			d->uids[k++] = u;
	}
	d->n_uids = k;
}

void qd_user_jobs(qd *d, uid_t uid, int delta)
{
	uid_use *u = uid_get(d, uid, (gid_t)-1);
	if (delta < 0 && u->jobs < (uint64_t)-delta)
		u->jobs = 0;
	else
		u->jobs += (uint64_t)(int64_t)delta;
}

/* Why this client may not submit another job (NULL: it may). */
const char *qd_user_jobs_refusal(qd *d, const client *c, char *buf, size_t n)
{
	if (!c->u || c->u->admin || c->u->jobs < d->cfg.lim.max_jobs_per_user)
		return NULL;
	char *name = qd_user_name(c->uid);
	snprintf(buf, n, "user %s has %llu jobs waiting or running, the most one user may (max_jobs_per_user)", name,
		 (unsigned long long)c->u->jobs);
	free(name);
	return buf;
}

/* Requests the user may make now: the bucket refills at max_requests_per_user a second. */
static bool uid_may_request(qd *d, uid_use *u, uint64_t mono)
{
	if (u->admin)
		return true;
	double rate = (double)d->cfg.lim.max_requests_per_user_s;
	if (mono > u->tokens_ms) {
		u->tokens += rate * (double)(mono - u->tokens_ms) / 1000.0;
		if (u->tokens > rate)
			u->tokens = rate;
		u->tokens_ms = mono;
	}
	return u->tokens >= 1.0;
}

/* Bring the user's byte count up to date with what the client holds now. */
static void account(client *c)
{
	size_t now = (c->in.len - c->in_off) + (c->out.len - c->out_off);
	c->u->bytes = c->u->bytes + now - c->acct_bytes;
	c->acct_bytes = now;
}

/* ---- setup ---------------------------------------------------------------------- */
static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	if (!dir)
		return 16;
	int n = 0;
	while (readdir(dir))
		n++;
	closedir(dir);
	return n - 3; /* ".", ".." and the directory's own */
}

void qd_clients_init(qd *d)
{
	d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	d->base_fds = count_fds();
	for (size_t i = 0; i < d->n_jobs; i++)
		qd_user_jobs(d, d->jobs[i]->j.spec.uid, +1);
}

static void client_free(qd *d, client *c)
{
	close(c->fd);
	if (c->u) {
		c->u->bytes -= c->acct_bytes <= c->u->bytes ? c->acct_bytes : c->u->bytes;
		c->u->conns--;
	}
	if (c->in.cap > BIG_BUFFER || c->out.cap > BIG_BUFFER)
		d->trim_due = true;
	sb_release(&c->in);
	sb_release(&c->out);
	free(c);
}

void qd_clients_release(qd *d)
{
	for (size_t i = 0; i < d->n_clients; i++)
		client_free(d, d->clients[i]);
	free(d->clients);
	for (size_t i = 0; i < d->n_uids; i++)
		free(d->uids[i]);
	free(d->uids);
	if (d->spare_fd >= 0)
		close(d->spare_fd);
}

/* ---- accepting ------------------------------------------------------------------- */
/* Connections the descriptor limit leaves room for, now (prlimit may change it at any time). */
static size_t fd_room(qd *d)
{
	struct rlimit rl;
	size_t room = d->cfg.lim.max_connections;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		long long r = (long long)rl.rlim_cur - d->base_fds - FD_SPARE;
		if (r < 0)
			r = 0;
		if ((size_t)r < room)
			room = (size_t)r;
	}
	return room;
}

/* Say why and close: a connection refused at the door. */
static void refuse(int fd, const char *msg)
{
	char line[600];
	int n = snprintf(line, sizeof line, "{\"v\":%d,\"ok\":false,\"error\":\"%s\"}\n", PROTO_VERSION, msg);
	(void)!write(fd, line, (size_t)n);
	close(fd);
}

/* The non-administrator holding the most connections, other than except. */
static uid_use *top_holder(qd *d, const uid_use *except)
{
	uid_use *top = NULL;
	for (size_t i = 0; i < d->n_uids; i++) {
		uid_use *u = d->uids[i];
		if (u != except && !u->admin && u->conns && (!top || u->conns > top->conns))
			top = u;
	}
	return top;
}

/* Close u's connection that has been quiet longest, telling it why. */
static bool evict_one(qd *d, uid_use *u)
{
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < d->n_clients; i++) {
		client *c = d->clients[i];
		if (c->u == u && !c->dead && (best == SIZE_MAX || c->last_ms < d->clients[best]->last_ms))
			best = i;
	}
	if (best == SIZE_MAX)
		return false;
	client *c = d->clients[best];
	char *name = qd_user_name(u->uid);
	char msg[200];
	snprintf(msg, sizeof msg, "connection closed to make room: user %s holds the most connections (%zu)", name,
		 u->conns);
	free(name);
	(void)!send(c->fd, c->out.buf ? c->out.buf + c->out_off : "", c->out.len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
	char line[300];
	int n = snprintf(line, sizeof line, "{\"v\":%d,\"ok\":false,\"error\":\"%s\"}\n", PROTO_VERSION, msg);
	(void)!send(c->fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	memmove(&d->clients[best], &d->clients[best + 1], (d->n_clients - best - 1) * sizeof *d->clients);
	d->n_clients--;
	client_free(d, c);
	return true;
}

/*
 * Admit a connection or say why not.  Full means the configured maximum or
 * what the descriptor limit leaves, less the administrators' reserve for
 * everyone else; when full, a user who holds fewer connections than the
 * top holder takes the place of that holder's quietest one.
 */
static void admit(qd *d, int fd)
{
	client *c = xcalloc(1, sizeof *c);
	c->fd = fd;
	if (qd_peer_cred(c)) {
		free(c);
		close(fd);
		return;
	}
	if (!qd_peer_allowed(d, c)) {
		char msg[100];
		snprintf(msg, sizeof msg, "this is the personal queue of uid %u", (unsigned)d->self_uid);
		free(c);
		refuse(fd, msg);
		return;
	}
	uid_use *u = uid_get(d, c->uid, c->gid);
	const qd_limits *l = &d->cfg.lim;
	char msg[300];
	if (!u->admin && u->conns >= l->max_connections_per_user) {
		char *name = qd_user_name(c->uid);
		snprintf(msg, sizeof msg,
			 "user %s has %zu connections open, the most one user may (max_connections_per_user)", name,
			 u->conns);
		free(name);
		free(c);
		refuse(fd, msg);
		return;
	}
	size_t room = fd_room(d);
	size_t limit = u->admin ? room : room > l->admin_connections ? room - l->admin_connections : 0;
	if (d->n_clients >= limit) {
		uid_use *top = top_holder(d, u);
		if (!top || top->conns <= u->conns + 1 || !evict_one(d, top)) {
			if (room < l->max_connections)
				snprintf(msg, sizeof msg, "the daemon is at its open-file limit; try again shortly");
			else
				snprintf(msg, sizeof msg, "too many clients (%zu connections; %zu are kept for administrators)",
					 d->n_clients, l->admin_connections);
			free(c);
			refuse(fd, msg);
			return;
		}
	}
	uint64_t mono = now_ms();
	c->last_ms = c->wrote_ms = mono;
	c->u = u;
	u->conns++;
	d->clients = xgrow(d->clients, &d->cap_clients, d->n_clients + 1, sizeof *d->clients);
	d->clients[d->n_clients++] = c;
}

/*
 * At the descriptor limit: the top holders give up connections until the
 * limit leaves room again, then one connection waiting is taken with the
 * spare descriptor and refused when still nothing can be freed.  Returns
 * true when accepting may go on.
 */
static bool at_fd_limit(qd *d)
{
	size_t room = fd_room(d);
	size_t shed = 0;
	while (d->n_clients + 1 > room && shed < 4096) {
		uid_use *top = top_holder(d, NULL);
		if (!top || top->conns <= 1 || !evict_one(d, top))
			break;
		shed++;
	}
	if (shed) {
		qd_log(d, "at the open-file limit: closed %zu connection%s of the user holding the most", shed,
		       shed == 1 ? "" : "s");
		return true;
	}
	if (d->spare_fd >= 0) {
		close(d->spare_fd);
		d->spare_fd = -1;
		int fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			refuse(fd, "the daemon is at its open-file limit; try again shortly");
		d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	/* nothing to free: stop watching the socket a moment rather than spin on it */
	d->accept_pause_until_ms = now_ms() + 100;
	return false;
}

/*
 * Keep the connections within what the descriptor limit allows now (it may
 * be lowered under a running daemon; poll itself refuses more descriptors
 * than RLIMIT_NOFILE): the users holding the most give up their quietest.
 */
void qd_clients_fit(qd *d)
{
	size_t room = fd_room(d);
	size_t shed = 0;
	while (d->n_clients > room) {
		uid_use *top = top_holder(d, NULL);
		if (!top || !evict_one(d, top)) {
			/* administrators only: the oldest goes */
			client *c = d->clients[0];
			memmove(&d->clients[0], &d->clients[1], (d->n_clients - 1) * sizeof *d->clients);
			d->n_clients--;
			client_free(d, c);
		}
		shed++;
	}
	if (shed)
		qd_log(d, "at the open-file limit: closed %zu connection%s of the user holding the most", shed,
		       shed == 1 ? "" : "s");
}

bool qd_accepting(qd *d)
{
	return now_ms() >= d->accept_pause_until_ms;
}

void qd_accept(qd *d)
{
	for (int n = 0; n < 256; n++) {
		int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE) && at_fd_limit(d))
				continue;
			return;
		}
		admit(d, fd);
		if (d->spare_fd < 0)
			d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
}

/* A new loop pass: every user's share of it starts afresh. */
void qd_clients_pass(qd *d)
{
	for (size_t i = 0; i < d->n_uids; i++)
		d->uids[i]->pass_bytes = 0;
}

/* ---- reading, serving, writing ----------------------------------------------------------- */
static size_t out_pending(const client *c)
{
	return c->out.len - c->out_off;
}

/* Is there a whole request in the buffer? */
static bool has_line(const client *c)
{
	return c->in.len > c->in_off && memchr(c->in.buf + c->in_off, '\n', c->in.len - c->in_off);
}

static bool wants_read(qd *d, const client *c)
{
	if (c->dead || c->closing || out_pending(c) >= CLIENT_OUT_BUDGET)
		return false;
	if (c->u->bytes >= d->cfg.lim.max_buffered_per_user_bytes)
		return false;
	size_t pending = c->in.len - c->in_off;
	return pending < CLIENT_IN_PENDING || (!has_line(c) && pending <= PROTO_MAX_LINE);
}

short qd_client_events(qd *d, client *c)
{
	short ev = 0;
	if (wants_read(d, c))
		ev |= POLLIN;
	if (out_pending(c))
		ev |= POLLOUT;
	return ev;
}

/* Drop what was handled from the front of the input buffer. */
static void in_compact(client *c)
{
	if (!c->in_off)
		return;
	memmove(c->in.buf, c->in.buf + c->in_off, c->in.len - c->in_off);
	c->in.len -= c->in_off;
	c->in_off = 0;
}

void qd_client_read(qd *d, client *c)
{
	char buf[READ_CHUNK];
	for (int rounds = 0; rounds < 4 && wants_read(d, c); rounds++) {
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
		const char *p = buf;
		size_t left = (size_t)n;
		if (c->skipping) {
			/* the rest of an oversized line, up to its newline, is dropped */
			const char *nl = memchr(p, '\n', left);
			if (!nl)
				continue;
			c->skipping = false;
			left -= (size_t)(nl + 1 - p);
			p = nl + 1;
		}
		in_compact(c);
		sb_add(&c->in, p, left);
		/* a line longer than the protocol allows: say so once and skip it */
		const char *start = c->in.buf;
		const char *nl = memchr(start, '\n', c->in.len);
		size_t first = nl ? (size_t)(nl - start) : c->in.len;
		if (first > PROTO_MAX_LINE) {
			qd_reply_error(c, "request longer than %d bytes", PROTO_MAX_LINE);
			if (nl) {
				c->in_off = first + 1;
				in_compact(c);
			} else {
				c->in.len = 0;
				c->skipping = true;
			}
		}
		account(c);
	}
}

/*
 * Handle the client's complete requests, one at a time, while its replies
 * fit the budget and its user may make requests; at most CLIENT_ROUND.
 * Returns true when it has requests left that it could be served now.
 */
bool qd_client_serve(qd *d, client *c)
{
	uint64_t mono = now_ms();
	for (int handled = 0; !c->dead && !c->closing; handled++) {
		if (!has_line(c) || out_pending(c) >= CLIENT_OUT_BUDGET ||
		    c->u->bytes >= d->cfg.lim.max_buffered_per_user_bytes + CLIENT_IN_PENDING + PROTO_MAX_LINE)
			break;
		if (handled == CLIENT_ROUND || c->u->pass_bytes >= USER_PASS_BYTES)
			return true; /* the others' turn; more in the next pass */
		if (!uid_may_request(d, c->u, mono))
			break;
		size_t out_before = c->out.len;
		char *line = c->in.buf + c->in_off;
		char *nl = memchr(line, '\n', c->in.len - c->in_off);
		size_t l = (size_t)(nl - line);
		c->in_off += l + 1;
		if (l && line[l - 1] == '\r')
			l--;
		if (l) {
			*nl = 0;
			qd_handle_line(d, c, line, l);
		}
		size_t made = c->out.len - out_before;
		c->u->pass_bytes += made;
		if (!c->u->admin)
			c->u->tokens -= 1.0 + (double)(made / TOKEN_BYTES);
		account(c);
	}
	if (c->in_off == c->in.len)
		c->in.len = c->in_off = 0;
	if (!c->in.len && c->in.cap > BIG_BUFFER) {
		sb_release(&c->in);
		d->trim_due = true;
	}
	return false;
}

void qd_client_write(qd *d, client *c)
{
	while (c->out_off < c->out.len) {
		ssize_t w = send(c->fd, c->out.buf + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0) {
			c->dead = true;
			break;
		}
		c->out_off += (size_t)w;
		c->wrote_ms = now_ms();
	}
	if (c->out_off == c->out.len) {
		c->out.len = c->out_off = 0;
		/* a large listing's buffer goes back to the allocator once sent */
		if (c->out.cap > BIG_BUFFER) {
			sb_release(&c->out);
			d->trim_due = true;
		}
		if (c->closing)
			c->dead = true;
	} else if (c->out_off > BIG_BUFFER) {
		memmove(c->out.buf, c->out.buf + c->out_off, c->out.len - c->out_off);
		c->out.len -= c->out_off;
		c->out_off = 0;
	}
	account(c);
}

/*
 * Close dead connections and those that stalled for client_timeout: silent
 * with nothing to send, or not taking their replies.  Then, at most once a
 * second, give freed memory back to the system (glibc keeps it otherwise).
 */
void qd_clients_reap(qd *d, uint64_t mono)
{
	uint64_t t = d->cfg.client_timeout_ms;
	size_t k = 0;
	for (size_t i = 0; i < d->n_clients; i++) {
		client *c = d->clients[i];
		if (!c->dead && !out_pending(c) && mono - c->last_ms > t)
			c->dead = true; /* a silent client is dropped */
		if (!c->dead && out_pending(c) && mono - c->wrote_ms > t && mono - c->last_ms > t)
			c->dead = true; /* one that takes no replies too */
		if (c->dead)
			client_free(d, c);
		else
			d->clients[k++] = c;
	}
	d->n_clients = k;
	uid_forget_idle(d, mono);
	if (d->trim_due && mono >= d->trim_at_ms) {
		malloc_trim(0);
		d->trim_due = false;
		d->trim_at_ms = mono + TRIM_EVERY_MS;
	}
}

/*
 * The http setting: `gpuwise status --serve ADDR:PORT --socket SOCKET` as a
 * child, as nobody when the daemon is root (the page needs NVML and the
 * socket every user may use, nothing of the daemon's rights).  Its pid, or
 * 0 when it cannot be started.
 */
/*
 * Bind the page's port here, in the daemon (root), before any server runs:
 * a port another user took first fails the daemon's start with the reason,
 * and while the server is down (killed, restarting) nobody can take it.
 */
int qd_http_bind(qd *d, gw_error *err)
{
	d->http_fd = -1;
	if (!d->cfg.http[0])
		return 0;
	char host[128];
	const char *colon = strrchr(d->cfg.http, ':');
	if (!colon || (size_t)(colon - d->cfg.http) >= sizeof host)
		return gw_fail(err, GW_EINVAL, "http = '%s': expected ADDR:PORT", d->cfg.http);
	memcpy(host, d->cfg.http, (size_t)(colon - d->cfg.http));
	host[colon - d->cfg.http] = 0;
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res = NULL;
	int e = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (e || !res)
		return gw_fail(err, GW_EINVAL, "http = '%s': %s", d->cfg.http, e ? gai_strerror(e) : "no address");
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 128)) {
		int en = errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return gw_fail(err, GW_EIO, "cannot serve the lab page on %s: %s%s", d->cfg.http, strerror(en),
			       en == EADDRINUSE ? " (another process holds the port: find it with 'ss -ltnp')" : "");
	}
	freeaddrinfo(res);
	d->http_fd = fd;
	return 0;
}

/*
 * The page server: `gpuwise status --serve` on the socket bound above, as
 * the user gpuwise-page when it exists (its own daemon connection budget),
 * else nobody; the daemon restarts it when it dies (qd_http_watch).
 */
pid_t qd_http_start(qd *d)
{
	if (!d->cfg.http[0] || d->http_fd < 0)
		return 0;
	struct passwd *pw = NULL;
	if (d->root && !(pw = getpwnam("gpuwise-page")))
		pw = getpwnam("nobody");
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(d->http_fd, 3) != 3)
			_exit(125);
		for (int fd = 4; fd < 1024; fd++)
			close(fd);
		if (d->root && (!pw || setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid)))
			_exit(125);
		int nul = open("/dev/null", O_WRONLY);
		if (nul >= 0)
			dup2(nul, 1); /* its "serving ..." line; errors stay on the daemon's stderr */
		setenv("GPUWISE_LISTEN_FD", "3", 1);
		char pa[24];
		snprintf(pa, sizeof pa, "%u", d->cfg.http_per_address);
		setenv("GPUWISE_HTTP_PER_ADDRESS", pa, 1);
		execl(d->exe, d->exe, "status", "--serve", d->cfg.http, "--socket", d->socket_path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		qd_log(d, "serving the lab page and /metrics on http://%s/ (pid %d, as %s)", d->cfg.http, (int)pid,
		       pw ? pw->pw_name : "the daemon's user");
	d->http_started_ms = now_ms();
	return pid > 0 ? pid : 0;
}

void qd_http_watch(qd *d)
{
	if (d->http_pid <= 0 && d->http_fd >= 0 && d->http_restart_at_ms && now_ms() >= d->http_restart_at_ms) {
		d->http_restart_at_ms = 0;
		d->http_pid = qd_http_start(d);
	}
}

void qd_http_ended(qd *d, int st)
{
	qd_log(d, "the page server (pid %d) ended (%s %d); it is started again", (int)d->http_pid,
	       WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	d->http_pid = 0;
	/* at once, unless it keeps dying right after its start (then every 5 s) */
	uint64_t now = now_ms();
	d->http_quick_deaths = now - d->http_started_ms < 1000 ? d->http_quick_deaths + 1 : 0;
	d->http_restart_at_ms = d->http_quick_deaths >= 3 ? now + 5000 : now;
}

/*
 * queue/client: connect to the daemon's socket and exchange JSON lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "queue/proto.h"
#include "queue/queue.h"

struct queue_conn {
	int fd;
	strbuf in;
	size_t in_off;
};

char *queue_default_socket(void)
{
	if (geteuid() == 0)
		return xstrdup(QUEUE_SYSTEM_SOCKET);
	const char *rt = getenv("XDG_RUNTIME_DIR");
	if (rt && *rt == '/')
		return xasprintf("%s/gpuwise.sock", rt);
	return xasprintf("/tmp/gpuwise-%u/gpuwise.sock", (unsigned)geteuid());
}

char *queue_default_state(void)
{
	if (geteuid() == 0)
		return xstrdup(QUEUE_SYSTEM_STATE);
	const char *s = getenv("XDG_STATE_HOME");
	if (s && *s == '/')
		return xasprintf("%s/gpuwise", s);
	const char *home = getenv("HOME");
	return xasprintf("%s/.local/state/gpuwise", home && *home ? home : "/tmp");
}

char *queue_socket_path(const char *explicit_path)
{
	if (explicit_path && *explicit_path)
		return xstrdup(explicit_path);
	const char *env = getenv("GPUWISE_SOCKET");
	if (env && *env)
		return xstrdup(env);
	char *own = queue_default_socket();
	struct stat st;
	if (geteuid() == 0 || stat(own, &st) == 0)
		return own;
	free(own);
	return xstrdup(QUEUE_SYSTEM_SOCKET);
}

int queue_connect(const char *path, queue_conn **out, gw_error *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof a.sun_path)
		return gw_fail(err, GW_EINVAL, N_("socket path '%s' is too long"), path);
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gw_fail(err, GW_EIO, N_("socket: %s"), strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		close(fd);
		if (e == ENOENT || e == ECONNREFUSED)
			return gw_fail(err, GW_ENOENT, N_("no queue daemon at '%s'"), path);
		return gw_fail(err, e == EACCES ? GW_EPERM : GW_EIO, N_("cannot connect to '%s': %s"), path,
			       strerror(e));
	}
	queue_conn *c = xcalloc(1, sizeof *c);
	c->fd = fd;
	*out = c;
	return 0;
}

void queue_set_timeout(queue_conn *c, uint64_t ms)
{
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void queue_close(queue_conn *c)
{
	if (!c)
		return;
	close(c->fd);
	sb_release(&c->in);
	free(c);
}

int queue_send(queue_conn *c, json_t *req, gw_error *err)
{
	json_object_set_new(req, "v", json_integer(PROTO_VERSION));
	char *text = json_dumps(req, JSON_COMPACT);
	if (!text)
		return gw_fail(err, GW_EINVAL, N_("cannot encode the request"));
	size_t n = strlen(text);
	text[n] = '\n';
	size_t off = 0;
	int rc = 0;
	while (off < n + 1) {
		ssize_t w = send(c->fd, text + off, n + 1 - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = gw_fail(err, GW_EIO, N_("the queue daemon closed the connection: %s"), strerror(errno));
			break;
		}
		off += (size_t)w;
	}
	free(text);
	return rc;
}

int queue_recv(queue_conn *c, json_t **reply, gw_error *err)
{
	for (;;) {
		char *start = c->in.buf ? c->in.buf + c->in_off : NULL;
		char *nl = start ? memchr(start, '\n', c->in.len - c->in_off) : NULL;
		if (nl) {
			json_error_t je;
			*reply = json_loadb(start, (size_t)(nl - start), 0, &je);
			c->in_off = (size_t)(nl - c->in.buf) + 1;
			if (c->in_off == c->in.len)
				c->in.len = c->in_off = 0;
			if (!*reply || !json_is_object(*reply)) {
				json_decref(*reply);
				*reply = NULL;
				return gw_fail(err, GW_EFORMAT, N_("malformed reply from the queue daemon"));
			}
			return 0;
		}
		if (c->in_off > 65536) {
			memmove(c->in.buf, c->in.buf + c->in_off, c->in.len - c->in_off);
			c->in.len -= c->in_off;
			c->in_off = 0;
		}
		char buf[65536];
		ssize_t r = read(c->fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return gw_fail(err, GW_EIO, N_("the queue daemon did not answer in time"));
		if (r <= 0)
			return gw_fail(err, GW_EIO, N_("the queue daemon closed the connection"));
		sb_add(&c->in, buf, (size_t)r);
	}
}

int queue_call(queue_conn *c, json_t *req, json_t **reply, gw_error *err)
{
	int rc = queue_send(c, req, err);
	return rc ? rc : queue_recv(c, reply, err);
}

/*
 * files.c: every read of /proc, /sys, /dev and system paths goes through
 * the root prefix from GPUWISE_ROOT, so tests point it at fixture trees.
 */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *root_override;
static bool root_loaded;

const char *gw_root(void)
{
	if (!root_loaded) {
		const char *r = getenv("GPUWISE_ROOT");
		free(root_override);
		root_override = xstrdup(r ? r : "");
		size_t n = strlen(root_override);
		while (n && root_override[n - 1] == '/')
			root_override[--n] = '\0';
		root_loaded = true;
	}
	return root_override;
}

void gw_set_root(const char *root)
{
	free(root_override);
	root_override = NULL;
	root_loaded = false;
	if (root) {
		root_override = xstrdup(root);
		root_loaded = true;
	}
}

char *gw_path(const char *abs)
{
	return xasprintf("%s%s", gw_root(), abs);
}

int gw_open_regular(const char *path, const char *display, gw_error *err)
{
	if (!display)
		display = path;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return gw_fail(err, errno == ENOENT ? GW_ENOENT : errno == EACCES ? GW_EPERM : GW_EIO,
			       "cannot open '%s': %s", display, strerror(errno));
	struct stat st = {0};
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		bool dir = S_ISDIR(st.st_mode);
		close(fd);
		return gw_fail(err, GW_EINVAL, "cannot read '%s': %s", display,
			       dir ? "a directory, not a file" : "not a regular file");
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int gw_read_file(const char *path, bool rooted, size_t max, char **out, size_t *len, gw_error *err)
{
	char *full = rooted ? gw_path(path) : xstrdup(path);
	char *buf = NULL;
	int rc = 0;
	int fd = gw_open_regular(full, path, err);
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	size_t cap = 4096, n = 0;
	buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				rc = gw_fail(err, GW_ERANGE, "cannot read '%s': larger than %zu bytes", path, max);
				goto out;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = gw_fail(err, GW_EIO, "cannot read '%s': %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	buf = NULL;
	if (len)
		*len = n;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(full);
	return rc;
}

char *gw_read_line(const char *abs)
{
	char *buf;
	if (gw_read_file(abs, true, 1 << 16, &buf, NULL, NULL))
		return NULL;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	char *t = str_trim(buf);
	if (t != buf)
		memmove(buf, t, strlen(t) + 1);
	return buf;
}

int gw_read_ll(const char *abs, long long *out)
{
	char *s = gw_read_line(abs);
	if (!s)
		return GW_ENOENT;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	int rc = (end == s || *end || errno) ? GW_EFORMAT : 0;
	if (!rc)
		*out = v;
	free(s);
	return rc;
}

bool gw_exists(const char *abs)
{
	char *p = gw_path(abs);
	struct stat st;
	bool ok = stat(p, &st) == 0;
	free(p);
	return ok;
}

uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sleep_ms(uint64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

size_t gw_glob(const char *pattern, char ***out)
{
	char *p = gw_path(pattern);
	glob_t g;
	size_t n = 0;
	*out = NULL;
	if (glob(p, 0, NULL, &g) == 0) {
		size_t rl = strlen(gw_root());
		*out = xcalloc(g.gl_pathc + 1, sizeof **out);
		for (size_t i = 0; i < g.gl_pathc; i++)
			(*out)[n++] = xstrdup(g.gl_pathv[i] + rl);
		globfree(&g);
	}
	free(p);
	return n;
}

void gw_list_free(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

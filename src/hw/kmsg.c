/*
 * kmsg.c: NVIDIA Xid events from the kernel log.  Two line shapes:
 *   /dev/kmsg:  "6,1234,5678901,-;NVRM: Xid (PCI:0000:2a:00): 79, pid=..., name=..., text"
 *   dmesg:      "[ 1234.567890] NVRM: Xid (PCI:0000:2a:00): 79, pid=1234, name=python, text"
 * (/dev/kmsg record format: kernel Documentation/ABI/testing/dev-kmsg;
 * the Xid line shape as matched by NVIDIA/DCGM dcgmlib/src/DcgmKmsgReader.cpp.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/hw.h"
#include "hw/hw_int.h"

/* Copy the value of "key=" up to the next ", " (quotes dropped). */
static const char *field(const char *s, const char *key, char *out, size_t n)
{
	out[0] = '\0';
	size_t kl = strlen(key);
	if (strncmp(s, key, kl) != 0)
		return s;
	s += kl;
	const char *end = strstr(s, ", ");
	size_t len = end ? (size_t)(end - s) : strlen(s);
	const char *v = s;
	if (len >= 2 && v[0] == '\'' && v[len - 1] == '\'') {
		v++;
		len -= 2;
	}
	snprintf(out, n, "%.*s", (int)len, v);
	return end ? end + 2 : s + strlen(s);
}


bool hw_xid_parse(const char *line, hw_xid *x)
{
	memset(x, 0, sizeof *x);
	x->pid = -1;
	x->wall_s = -1;
	const char *msg = NULL;
	if (line[0] == '[') {
		/* dmesg: [seconds.micros] */
		char *end;
		double t = strtod(line + 1, &end);
		if (end == line + 1 || *end != ']' || t < 0)
			return false;
		x->ts_us = (uint64_t)(t * 1e6 + 0.5);
		msg = end + 1;
		while (*msg == ' ')
			msg++;
	} else {
		/* kmsg: prio,seq,ts_us,flags[,more];message */
		unsigned long long pri, seq, ts;
		int used = 0;
		if (sscanf(line, "%llu,%llu,%llu%n", &pri, &seq, &ts, &used) != 3)
			return false;
		const char *semi = strchr(line + used, ';');
		if (!semi)
			return false;
		x->ts_us = ts;
		msg = semi + 1;
	}
	static const char tag[] = "NVRM: Xid (PCI:";
	const char *p = strstr(msg, tag);
	if (!p)
		return false;
	p += sizeof tag - 1;
	const char *rp = strchr(p, ')');
	if (!rp || rp - p >= (long)sizeof x->pci)
		return false;
	snprintf(x->pci, sizeof x->pci, "%.*s", (int)(rp - p), p);
	if (strncmp(rp, "): ", 3) != 0)
		return false;
	char *end;
	long xid = strtol(rp + 3, &end, 10);
	if (end == rp + 3 || xid < 0 || xid > 100000)
		return false;
	x->xid = (int)xid;
	const char *s = end;
	if (strncmp(s, ", ", 2) == 0)
		s += 2;
	char buf[64];
	const char *after = field(s, "pid=", buf, sizeof buf);
	if (after != s) {
		char *e2;
		long pid = strtol(buf, &e2, 10);
		if (e2 != buf && !*e2 && pid > 0)
			x->pid = (int)pid;
		s = after;
		after = field(s, "name=", x->process, sizeof x->process);
		if (strcmp(x->process, "<unknown>") == 0)
			x->process[0] = '\0';
		s = after;
	}
	snprintf(x->text, sizeof x->text, "%s", s);
	size_t tl = strlen(x->text);
	while (tl && (x->text[tl - 1] == '\n' || x->text[tl - 1] == '\r'))
		x->text[--tl] = '\0';
	return true;
}

static void add_line(const char *line, uint64_t since_us, int64_t boot_wall_s, hw_xid **out, size_t *n,
		     size_t *cap)
{
	hw_xid x;
	if (!hw_xid_parse(line, &x) || x.ts_us < since_us)
		return;
	if (boot_wall_s >= 0)
		x.wall_s = boot_wall_s + (int64_t)(x.ts_us / 1000000);
	*out = xgrow(*out, cap, *n + 1, sizeof **out);
	(*out)[(*n)++] = x;
}

/* Wall-clock second of boot from /proc/uptime under the root, or -1. */
static int64_t boot_wall(void)
{
	char *s = gw_read_line("/proc/uptime");
	if (!s)
		return -1;
	double up = strtod(s, NULL);
	free(s);
	return up > 0 ? (int64_t)(wall_ms() / 1000) - (int64_t)up : -1;
}

/*
 * Call each(line, ctx) for every record of a kmsg-format or dmesg-format
 * file (NULL: GPUWISE_ROOT/dev/kmsg, read non-blocking to the end).
 */
static int kmsg_each(const char *path, void (*each)(const char *, void *), void *ctx, gw_error *err)
{
	char *full = path ? xstrdup(path) : gw_path("/dev/kmsg");
	int rc = 0;
	int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = gw_fail(err, errno == ENOENT ? GW_ENOENT : errno == EACCES ? GW_EPERM : GW_EIO,
			     "cannot read '%s': %s", full, strerror(errno));
		goto out;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
		/* /dev/kmsg: one record per read(); EAGAIN at the end */
		char rec[8192];
		for (;;) {
			ssize_t r = read(fd, rec, sizeof rec - 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && errno == EPIPE)
				continue; /* records overwritten while reading */
			if (r <= 0)
				break;
			rec[r] = '\0';
			char *nl = strchr(rec, '\n');
			if (nl)
				*nl = '\0';
			each(rec, ctx);
		}
		goto out;
	}
	close(fd);
	fd = -1;
	char *text;
	if ((rc = gw_read_file(full, false, 256 << 20, &text, NULL, err)))
		goto out;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		each(line, ctx);
	free(text);
out:
	if (fd >= 0)
		close(fd);
	free(full);
	return rc;
}

typedef struct xid_ctx {
	uint64_t since_us;
	int64_t boot;
	hw_xid **out;
	size_t *n, cap;
} xid_ctx;

static void xid_each(const char *line, void *p)
{
	xid_ctx *c = p;
	add_line(line, c->since_us, c->boot, c->out, c->n, &c->cap);
}

int hw_xid_read(const char *path, uint64_t since_us, hw_xid **out, size_t *n, gw_error *err)
{
	*out = NULL;
	*n = 0;
	xid_ctx c = {since_us, path ? -1 : boot_wall(), out, n, 0};
	return kmsg_each(path, xid_each, &c, err);
}

typedef struct grep_ctx {
	const char *needle;
	char **lines;
	size_t n, cap;
	size_t max;
} grep_ctx;

static void grep_each(const char *line, void *p)
{
	grep_ctx *c = p;
	if (!strcasestr(line, c->needle))
		return;
	/* kmsg "6,1021,5012345678,-;text": keep the text */
	const char *semi = strchr(line, ';');
	const char *text = semi && strspn(line, "0123456789,-") == (size_t)(semi - line) ? semi + 1 : line;
	if (c->n < c->max) {
		c->lines = xgrow(c->lines, &c->cap, c->n + 1, sizeof *c->lines);
		c->lines[c->n++] = xstrdup(text);
	}
}

int hw_kmsg_grep(const char *path, const char *needle, size_t max, char ***lines, size_t *n, gw_error *err)
{
	grep_ctx c = {needle, NULL, 0, 0, max};
	int rc = kmsg_each(path, grep_each, &c, err);
	*lines = c.lines;
	*n = c.n;
	return rc;
}

/*
 * proc.c: who runs a GPU process: user (from /proc/PID/status Uid, named
 * through NSS, or from the fixture's /etc/passwd under a root prefix),
 * command line and cgroup, with the container id when the
 * cgroup path names one.  Entries are cached per PID so a once-a-second
 * refresh reads /proc only for processes it has not seen before.
 */
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/hw_int.h"

typedef struct pentry {
	uint32_t pid;
	bool seen;
	char user[64], command[256], cgroup[256], container[80];
	char argv[1024];
	size_t argv_len;
} pentry;

typedef struct passwd_entry {
	uint32_t uid;
	char name[64];
} passwd_entry;

struct proc_cache {
	pentry *e;
	size_t n, cap;
	passwd_entry *pw;
	size_t n_pw;
	bool pw_loaded;
};

proc_cache *proc_cache_new(void)
{
	return xcalloc(1, sizeof(proc_cache));
}

void proc_cache_free(proc_cache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c->pw);
	free(c);
}

/* /etc/passwd under the root: name:x:uid:... */
static void load_passwd(proc_cache *c)
{
	c->pw_loaded = true;
	char *text;
	if (gw_read_file("/etc/passwd", true, 16 << 20, &text, NULL, NULL))
		return;
	size_t cap = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4];
		if (str_split(line, ':', f, 4) < 3)
			continue;
		long long uid;
		if (parse_int(f[2], 0, UINT32_MAX, &uid))
			continue;
		c->pw = xgrow(c->pw, &cap, c->n_pw + 1, sizeof *c->pw);
		c->pw[c->n_pw].uid = (uint32_t)uid;
		snprintf(c->pw[c->n_pw].name, sizeof c->pw[c->n_pw].name, "%s", f[0]);
		c->n_pw++;
	}
	free(text);
}

/*
 * The user name of uid.  On the real machine it comes through NSS
 * (getpwuid_r: /etc/passwd, LDAP, SSSD, systemd-userdb ... as nsswitch.conf
 * says); under a root prefix (tests) from that tree's /etc/passwd, so a
 * fixture never depends on the host's users.  The number when unknown.
 */
static void user_of(proc_cache *c, uint32_t uid, char *out, size_t n)
{
	if (!gw_root()[0]) {
		struct passwd pw, *res = NULL;
		char buf[4096];
		if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &res) == 0 && res && res->pw_name)
			snprintf(out, n, "%s", res->pw_name);
		else
			snprintf(out, n, "%u", uid);
		return;
	}
	if (!c->pw_loaded)
		load_passwd(c);
	for (size_t i = 0; i < c->n_pw; i++)
		if (c->pw[i].uid == uid) {
			snprintf(out, n, "%s", c->pw[i].name);
			return;
		}
	snprintf(out, n, "%u", uid);
}

static bool is_hex_id(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * Docker, containerd, CRI-O and podman name the cgroup after the 64-hex
 * container id: ".../docker-<id>.scope", "/docker/<id>", ".../cri-containerd-<id>.scope",
 * "/kubepods/.../<id>", ".../libpod-<id>.scope".
 */
void proc_container_id(const char *cgroup, char *out, size_t n)
{
	out[0] = '\0';
	for (const char *p = cgroup; *p; p++) {
		if (!isxdigit((unsigned char)*p))
			continue;
		if (p > cgroup && isalnum((unsigned char)p[-1]))
			continue;
		if (strlen(p) >= 64 && is_hex_id(p, 64) && !isalnum((unsigned char)p[64])) {
			snprintf(out, n, "%.64s", p);
			return;
		}
	}
}

static void read_entry(proc_cache *c, pentry *e)
{
	char path[64];
	char *text = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "/proc/%u/status", e->pid);
	if (gw_read_file(path, true, 1 << 16, &text, &len, NULL) == 0) {
		char *uid = strstr(text, "\nUid:");
		unsigned int u;
		if (uid && sscanf(uid + 5, "%u", &u) == 1)
			user_of(c, u, e->user, sizeof e->user);
		free(text);
	}
	snprintf(path, sizeof path, "/proc/%u/cmdline", e->pid);
	if (gw_read_file(path, true, 1 << 16, &text, &len, NULL) == 0) {
		while (len && text[len - 1] == '\0')
			len--;
		/* keep the arguments apart for JSON; a longer line is cut at an
		 * argument boundary so no argument is half there */
		size_t keep = len < sizeof e->argv ? len : sizeof e->argv - 1;
		if (keep < len)
			while (keep && text[keep] != '\0')
				keep--;
		memcpy(e->argv, text, keep);
		e->argv_len = keep;
		for (size_t i = 0; i < len; i++)
			if (text[i] == '\0' || text[i] == '\n')
				text[i] = ' ';
		snprintf(e->command, sizeof e->command, "%.*s", (int)len, text);
		free(text);
	}
	snprintf(path, sizeof path, "/proc/%u/cgroup", e->pid);
	if (gw_read_file(path, true, 1 << 16, &text, &len, NULL) == 0) {
		/* cgroup v2: one line "0::/path"; v1: take the first line's path */
		char *line = text, *nl;
		char *v2 = strstr(text, "0::");
		if (v2 && (v2 == text || v2[-1] == '\n'))
			line = v2;
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		char *path_part = strchr(line, ':');
		path_part = path_part ? strchr(path_part + 1, ':') : NULL;
		snprintf(e->cgroup, sizeof e->cgroup, "%s", path_part ? path_part + 1 : line);
		proc_container_id(e->cgroup, e->container, sizeof e->container);
		free(text);
	}
}

void proc_fill(proc_cache *c, hw_proc *p)
{
	char dir[32];
	snprintf(dir, sizeof dir, "/proc/%u", p->pid);
	p->exists = gw_exists(dir);
	if (!p->exists)
		return;
	pentry *e = NULL;
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].pid == p->pid) {
			e = &c->e[i];
			break;
		}
	if (!e) {
		c->e = xgrow(c->e, &c->cap, c->n + 1, sizeof *c->e);
		e = &c->e[c->n++];
		memset(e, 0, sizeof *e);
		e->pid = p->pid;
		read_entry(c, e);
	}
	e->seen = true;
	snprintf(p->user, sizeof p->user, "%s", e->user);
	snprintf(p->command, sizeof p->command, "%s", e->command);
	snprintf(p->cgroup, sizeof p->cgroup, "%s", e->cgroup);
	snprintf(p->container, sizeof p->container, "%s", e->container);
	memcpy(p->argv, e->argv, e->argv_len);
	p->argv_len = e->argv_len;
}

void proc_cache_sweep(proc_cache *c)
{
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].seen) {
			c->e[i].seen = false;
			c->e[k++] = c->e[i];
		}
	c->n = k;
}

/*
 * MemTotal and MemAvailable of /proc/meminfo (under the root prefix), in
 * bytes.  0, or GW_ENOENT / GW_EFORMAT with err set.
 */
int hw_meminfo(uint64_t *total_bytes, uint64_t *available_bytes, gw_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = gw_read_file("/proc/meminfo", true, 1 << 20, &text, &len, err);
	if (rc)
		return rc;
	long long total = -1, avail = -1;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		long long v;
		if (sscanf(line, "MemTotal: %lld kB", &v) == 1)
			total = v;
		else if (sscanf(line, "MemAvailable: %lld kB", &v) == 1)
			avail = v;
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	if (total <= 0 || avail < 0)
		return gw_fail(err, GW_EFORMAT, "cannot read MemTotal and MemAvailable in /proc/meminfo");
	*total_bytes = (uint64_t)total * 1024;
	*available_bytes = (uint64_t)avail * 1024;
	return 0;
}

/*
 * proc.c: the job's process tree, its host memory and cgroup OOM counter,
 * all read from /proc and /sys through the root prefix (gw_path).
 */
#include "watch/watch.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

/* A pid list that grows. */
typedef struct pidvec {
	pid_t *v;
	size_t n, cap;
} pidvec;

static void pv_push(pidvec *p, pid_t pid)
{
	p->v = xgrow(p->v, &p->cap, p->n + 1, sizeof *p->v);
	p->v[p->n++] = pid;
}

static bool pv_has(const pidvec *p, pid_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i] == pid)
			return true;
	return false;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Parse whitespace-separated pids from text into p (skipping known ones). */
static void push_pids(pidvec *p, const char *text)
{
	const char *s = text;
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s) {
			s++;
			continue;
		}
		if (v > 0 && !pv_has(p, (pid_t)v))
			pv_push(p, (pid_t)v);
		s = end;
	}
}

/*
 * Children of pid from /proc/PID/task/TID/children (every thread may have
 * forked).  Returns 0, or GW_ENOTSUP when the kernel has no such files
 * (CONFIG_PROC_CHILDREN off, or a fixture tree without them), judged on
 * the root of the walk.
 */
static int children_of(pid_t pid, bool is_root, pidvec *out)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	char *path = gw_path(dir);
	DIR *d = opendir(path);
	free(path);
	if (!d)
		return is_root ? GW_ENOTSUP : 0; /* a descendant may be gone */
	int rc = 0;
	bool any_thread = false, any_file = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!all_digits(de->d_name))
			continue;
		any_thread = true;
		char file[320];
		snprintf(file, sizeof file, "/proc/%d/task/%s/children", (int)pid, de->d_name);
		char *text;
		if (gw_read_file(file, true, 1 << 20, &text, NULL, NULL))
			continue;
		any_file = true;
		push_pids(out, text);
		free(text);
	}
	closedir(d);
	if (any_thread && !any_file)
		rc = GW_ENOTSUP;
	return rc;
}

/* PPid of pid from /proc/PID/stat (field 4, after the command in parens). */
static pid_t ppid_of(const char *pid_name)
{
	char file[320];
	snprintf(file, sizeof file, "/proc/%s/stat", pid_name);
	char *text;
	pid_t ppid = -1;
	if (gw_read_file(file, true, 1 << 16, &text, NULL, NULL))
		return -1;
	const char *p = strrchr(text, ')');
	int v;
	char state;
	if (p && sscanf(p + 1, " %c %d", &state, &v) == 2)
		ppid = (pid_t)v;
	free(text);
	return ppid;
}

/* Every process's parent, by scanning /proc (the slow, always-there way). */
static int scan_descendants(pid_t root, pidvec *out, gw_error *err)
{
	char *path = gw_path("/proc");
	DIR *d = opendir(path);
	free(path);
	if (!d)
		return gw_fail(err, GW_EIO, "cannot list '/proc'");
	pidvec pids = {0}, parents = {0};
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!all_digits(de->d_name))
			continue;
		pid_t pp = ppid_of(de->d_name);
		if (pp < 0)
			continue;
		pv_push(&pids, (pid_t)atoi(de->d_name));
		pv_push(&parents, pp);
	}
	closedir(d);
	/* Breadth first from root: out grows while we walk it. */
	for (size_t i = 0; i < pids.n; i++)
		if (parents.v[i] == root && !pv_has(out, pids.v[i]))
			pv_push(out, pids.v[i]);
	for (size_t k = 0; k < out->n; k++)
		for (size_t i = 0; i < pids.n; i++)
			if (parents.v[i] == out->v[k] && pids.v[i] != root && !pv_has(out, pids.v[i]))
				pv_push(out, pids.v[i]);
	free(pids.v);
	free(parents.v);
	return 0;
}

int watch_tree(pid_t root, pid_t **out, size_t *n, gw_error *err)
{
	pidvec v = {0};
	int rc = children_of(root, true, &v);
	if (rc == 0) {
		for (size_t k = 0; k < v.n && v.n < 1000000; k++) {
			rc = children_of(v.v[k], false, &v);
			if (rc)
				break;
		}
	}
	if (rc == GW_ENOTSUP) {
		v.n = 0;
		rc = scan_descendants(root, &v, err);
	}
	if (rc) {
		free(v.v);
		return rc;
	}
	*out = v.v;
	*n = v.n;
	return 0;
}

uint64_t watch_rss_bytes(const pid_t *pids, size_t n)
{
	static long page;
	if (!page) {
		page = sysconf(_SC_PAGESIZE);
		if (page <= 0)
			page = 4096;
	}
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		char file[64];
		snprintf(file, sizeof file, "/proc/%d/statm", (int)pids[i]);
		char *text;
		if (gw_read_file(file, true, 4096, &text, NULL, NULL))
			continue;
		unsigned long long size, resident;
		if (sscanf(text, "%llu %llu", &size, &resident) == 2)
			total += resident * (uint64_t)page;
		free(text);
	}
	return total;
}

char watch_proc_state(pid_t pid)
{
	char name[32];
	snprintf(name, sizeof name, "/proc/%d/stat", (int)pid);
	char *text;
	char state = 0;
	if (gw_read_file(name, true, 1 << 16, &text, NULL, NULL))
		return 0;
	const char *p = strrchr(text, ')');
	if (p && sscanf(p + 1, " %c", &state) != 1)
		state = 0;
	free(text);
	return state;
}

long long watch_cgroup_oom_kills(pid_t pid)
{
	char file[64];
	if (pid > 0)
		snprintf(file, sizeof file, "/proc/%d/cgroup", (int)pid);
	else
		snprintf(file, sizeof file, "/proc/self/cgroup");
	char *text = NULL, *events = NULL, *events_path = NULL;
	long long kills = -1;
	if (gw_read_file(file, true, 1 << 16, &text, NULL, NULL))
		goto out;
	/* cgroup v2: the single line "0::/path" (Documentation/admin-guide/cgroup-v2.rst). */
	char *line = strstr(text, "0::");
	if (!line || (line != text && line[-1] != '\n'))
		goto out;
	line += 3;
	char *nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	if (strcmp(line, "/") == 0)
		line = "";
	events_path = xasprintf("/sys/fs/cgroup%s/memory.events", line);
	if (gw_read_file(events_path, true, 1 << 16, &events, NULL, NULL))
		goto out;
	/* memory.events: "oom_kill N" counts processes the OOM killer killed. */
	for (char *p = events; p && *p;) {
		if (str_starts(p, "oom_kill ")) {
			kills = strtoll(p + 9, NULL, 10);
			break;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
out:
	free(text);
	free(events);
	free(events_path);
	return kills;
}

size_t watch_kill_marked(const char *marker, int sig)
{
	char *path = gw_path("/proc");
	DIR *d = opendir(path);
	free(path);
	if (!d)
		return 0;
	size_t mlen = strlen(marker), n = 0;
	pid_t self = getpid();
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!all_digits(de->d_name) || atoi(de->d_name) == self)
			continue;
		char file[320];
		snprintf(file, sizeof file, "/proc/%s/environ", de->d_name);
		char *text;
		size_t len;
		if (gw_read_file(file, true, 4u << 20, &text, &len, NULL))
			continue; /* gone, or not ours to read */
		/* environ is NUL-separated "NAME=VALUE" strings */
		for (size_t at = 0; at + mlen <= len;) {
			if (!memcmp(text + at, marker, mlen) && (at + mlen == len || text[at + mlen] == '\0')) {
				if (kill((pid_t)atoi(de->d_name), sig) == 0)
					n++;
				break;
			}
			const char *z = memchr(text + at, '\0', len - at);
			if (!z)
				break;
			at = (size_t)(z - text) + 1;
		}
		free(text);
	}
	closedir(d);
	return n;
}

long long watch_mem_available_bytes(void)
{
	char *text;
	long long kib = -1;
	if (gw_read_file("/proc/meminfo", true, 1 << 16, &text, NULL, NULL))
		return -1;
	/* "MemAvailable:   12345 kB" (proc(5), since Linux 3.14) */
	const char *p = strstr(text, "MemAvailable:");
	if (p && sscanf(p + 13, "%lld", &kib) != 1)
		kib = -1;
	free(text);
	return kib >= 0 ? kib * 1024 : -1;
}

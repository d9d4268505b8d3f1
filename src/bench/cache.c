/*
 * cache.c: this machine's measured bandwidth, kept after `gpuwise bench`
 * so that `plan` on this machine uses what the memory delivers instead of
 * the spec sheet.  A small TSV under the user's cache directory.
 */
#include "bench/bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int cache_dir(char *buf, size_t n)
{
	const char *d = getenv("GPUWISE_CACHE_DIR");
	if (d && *d)
		return snprintf(buf, n, "%s", d) < (int)n ? 0 : GW_ERANGE;
	d = getenv("XDG_CACHE_HOME");
	if (d && *d)
		return snprintf(buf, n, "%s/gpuwise", d) < (int)n ? 0 : GW_ERANGE;
	d = getenv("HOME");
	if (d && *d)
		return snprintf(buf, n, "%s/.cache/gpuwise", d) < (int)n ? 0 : GW_ERANGE;
	return GW_ENOENT;
}

/* mkdir -p of dir (two levels at most matter: ~/.cache/gpuwise). */
static int make_dirs(char *dir)
{
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int rc = mkdir(dir, 0755);
		*p = '/';
		if (rc && errno != EEXIST)
			return -1;
	}
	return mkdir(dir, 0755) && errno != EEXIST ? -1 : 0;
}

/* Tabs and newlines never enter a field. */
static void clean(char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n' || *s == '\r')
			*s = ' ';
}

int bench_cache_write(const bench_report *r, const char *version, gw_error *err)
{
	char dir[4096], path[4200], tmp[4300];
	if (cache_dir(dir, sizeof dir))
		return gw_fail(err, GW_ENOENT, "no cache directory (set HOME or XDG_CACHE_HOME)");
	if (make_dirs(dir))
		return gw_fail(err, GW_EIO, "cannot create '%s': %s", dir, strerror(errno));
	snprintf(path, sizeof path, "%s/bench.tsv", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return gw_fail(err, GW_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	char date[16];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%d", &tm);
	fprintf(f, "# gpuwise bench: this machine's measured memory bandwidth (STREAM/BabelStream Triad), read by plan\n");
	fprintf(f, "device\tname\ttriad_gbs\tdate\tbench_version\n");
	for (size_t i = 0; i < r->n_devs; i++) {
		const bench_device *d = &r->devs[i];
		const bench_fig *t = bench_find(d, "triad");
		if (!t || !t->validated || t->value <= 0 || (d->kind != BENCH_DEV_CPU && !d->is_gpu))
			continue;
		char name[128];
		snprintf(name, sizeof name, "%s", d->name);
		clean(name);
		fprintf(f, "%s\t%s\t%.1f\t%s\t%s\n", d->kind == BENCH_DEV_CPU ? "cpu" : "gpu", name, t->value, date,
			version);
	}
	if (fclose(f) || rename(tmp, path)) {
		remove(tmp);
		return gw_fail(err, GW_EIO, "cannot write '%s': %s", path, strerror(errno));
	}
	return 0;
}

int bench_cache_lookup(const char *kind, const char *name, double *gbs, char *from, size_t n)
{
	char dir[4096], path[4200], line[512];
	if (cache_dir(dir, sizeof dir))
		return GW_ENOENT;
	snprintf(path, sizeof path, "%s/bench.tsv", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return GW_ENOENT;
	int rc = GW_ENOENT;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || !strncmp(line, "device\t", 7))
			continue;
		line[strcspn(line, "\r\n")] = 0;
		char *field[5] = {0};
		char *p = line;
		size_t k = 0;
		for (; k < 5 && p; k++) {
			field[k] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = 0;
		}
		if (k < 5 || strcmp(field[0], kind))
			continue;
		if (strcmp(kind, "cpu") && !str_ieq(field[1], name))
			continue;
		char *end;
		double v = strtod(field[2], &end);
		if (end == field[2] || !(v > 0 && v < 1e6))
			continue;
		*gbs = v;
		snprintf(from, n, "gpuwise bench %s on %s", field[4], field[3]);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

int bench_cache_host_write(const char *desc, double gbs, gw_error *err)
{
	char dir[4096], path[4200], tmp[4300], d[128];
	if (cache_dir(dir, sizeof dir))
		return gw_fail(err, GW_ENOENT, "no cache directory (set HOME or XDG_CACHE_HOME)");
	if (make_dirs(dir))
		return gw_fail(err, GW_EIO, "cannot create '%s': %s", dir, strerror(errno));
	snprintf(path, sizeof path, "%s/host-memory.tsv", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	snprintf(d, sizeof d, "%s", desc);
	clean(d);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return gw_fail(err, GW_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	char date[16];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%d", &tm);
	fprintf(f, "# gpuwise: this machine's memory from its SMBIOS tables (read as root), read by plan\n");
	fprintf(f, "desc\tpeak_gbs\tdate\n%s\t%.1f\t%s\n", d, gbs, date);
	if (fclose(f) || rename(tmp, path)) {
		remove(tmp);
		return gw_fail(err, GW_EIO, "cannot write '%s': %s", path, strerror(errno));
	}
	return 0;
}

int bench_cache_host_lookup(char *desc, size_t dn, double *gbs, char *date, size_t datn)
{
	char dir[4096], path[4200], line[512];
	if (cache_dir(dir, sizeof dir))
		return GW_ENOENT;
	snprintf(path, sizeof path, "%s/host-memory.tsv", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return GW_ENOENT;
	int rc = GW_ENOENT;
	while (rc && fgets(line, sizeof line, f)) {
		if (line[0] == '#' || !strncmp(line, "desc\t", 5))
			continue;
		line[strcspn(line, "\r\n")] = 0;
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (!t2)
			continue;
		*t1++ = 0;
		*t2++ = 0;
		char *end;
		double v = strtod(t1, &end);
		if (end == t1 || !(v > 0 && v < 1e5) || !*line)
			continue;
		snprintf(desc, dn, "%s", line);
		snprintf(date, datn, "%s", t2);
		*gbs = v;
		rc = 0;
	}
	fclose(f);
	return rc;
}

/*
 * cmd/vramcap.c: the supervisor's side of the VRAM cap (see vramcap.h and
 * docs/vram-cap.md).
 */
#include "cmd/vramcap.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap/region.h"
#include "util/util.h"

int vram_cap_find_lib(char *out, size_t n)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (k <= 0) {
		snprintf(out, n, "/proc/self/exe unreadable");
		return -1;
	}
	exe[k] = '\0';
	char *dir = dirname(exe);
	char a[PATH_MAX + 64], b[PATH_MAX + 64];
	snprintf(a, sizeof a, "%s/%s", dir, CAP_LIB_NAME);
	snprintf(b, sizeof b, "%s/../lib/gpuwise/%s", dir, CAP_LIB_NAME);
	const char *found = access(a, R_OK) == 0 ? a : access(b, R_OK) == 0 ? b : NULL;
	if (!found) {
		snprintf(out, n, "'%s' or '%s'", a, b);
		return -1;
	}
	char *real = realpath(found, NULL);
	snprintf(out, n, "%s", real ? real : found);
	free(real);
	return 0;
}

/* Where the region lives: a per-user runtime directory, else shared memory. */
static const char *region_dir(void)
{
	const char *d = getenv("XDG_RUNTIME_DIR");
	struct stat sb;
	if (d && *d == '/' && stat(d, &sb) == 0 && S_ISDIR(sb.st_mode) && access(d, W_OK) == 0)
		return d;
	if (stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	d = getenv("TMPDIR");
	return d && *d == '/' ? d : "/tmp";
}

int vram_cap_start(uint64_t limit_bytes, vram_cap *c)
{
	char lib[PATH_MAX + 160];
	memset(c, 0, sizeof *c);
	/* a region of its own would take the inner job out of the outer job's count */
	const char *outer = getenv(CAP_ENV_REGION);
	if (outer && *outer) {
		gw_errorf("cannot nest --vram-cap: this job is already under the VRAM cap of '%s' "
			  "(a plain gpuwise run inside stays under it)", outer);
		return GW_EXIT_RUNTIME;
	}
	if (vram_cap_find_lib(lib, sizeof lib)) {
		gw_errorf("cannot find %s for --vram-cap: looked for %s", CAP_LIB_NAME, lib);
		return GW_EXIT_RUNTIME;
	}
	/* LD_PRELOAD splits on spaces and colons (ld.so(8)) */
	if (strpbrk(lib, " :\t")) {
		gw_errorf("cannot preload '%s': LD_PRELOAD cannot hold a path with a space or a colon", lib);
		return GW_EXIT_RUNTIME;
	}
	const char *dir = region_dir();
	int rc = CAP_EIO;
	for (int attempt = 0; attempt < 16 && rc == CAP_EIO; attempt++) {
		free(c->path);
		c->path = xasprintf("%s/gpuwise-cap-%d-%d", dir, (int)getpid(), attempt);
		rc = cap_region_create(c->path, limit_bytes, &c->region);
		if (rc == CAP_EIO && errno != EEXIST)
			break;
	}
	if (rc) {
		gw_errorf("cannot create the VRAM cap region '%s': %s", c->path,
			  rc == CAP_EIO ? strerror(errno) : cap_strerror(rc));
		free(c->path);
		c->path = NULL;
		return GW_EXIT_RUNTIME;
	}
	const char *old = getenv("LD_PRELOAD");
	char *pre = old && *old ? xasprintf("%s %s", lib, old) : xstrdup(lib);
	setenv("LD_PRELOAD", pre, 1);
	setenv(CAP_ENV_REGION, c->path, 1);
	free(pre);
	return 0;
}

void vram_cap_finish(vram_cap *c)
{
	if (c->region)
		cap_region_close(c->region);
	if (c->path)
		unlink(c->path);
	free(c->path);
	c->region = NULL;
	c->path = NULL;
}

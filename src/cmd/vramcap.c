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
#include <sys/random.h>
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
	c->fd = -1;
	/* a region of its own would take the inner job out of the outer job's count */
	const char *outer = getenv(CAP_ENV_REGION);
	if (outer && *outer) {
		gw_errorf(_("cannot nest --vram-cap: this job is already under the VRAM cap of '%s' "
			  "(a plain gpuwise run inside stays under it)"), outer);
		return GW_EXIT_RUNTIME;
	}
	/* the same when the job dropped the variable but not the library */
	if (cap_lib_mapped(getpid()) == 1) {
		gw_errorf(_("cannot nest --vram-cap: %s is loaded here, so this job is already under a VRAM cap "
			  "(%s was unset; a plain gpuwise run inside stays under it)"), CAP_LIB_NAME, CAP_ENV_REGION);
		return GW_EXIT_RUNTIME;
	}
	if (vram_cap_find_lib(lib, sizeof lib)) {
		gw_errorf(_("cannot find %s for --vram-cap: looked for %s"), CAP_LIB_NAME, lib);
		return GW_EXIT_RUNTIME;
	}
	/* LD_PRELOAD splits on spaces and colons (ld.so(8)) */
	if (strpbrk(lib, " :\t")) {
		gw_errorf(_("cannot preload '%s': LD_PRELOAD cannot hold a path with a space or a colon"), lib);
		return GW_EXIT_RUNTIME;
	}
	/* A private directory (0700) with an unpredictable name, made by the
	 * job's own user: nobody else can pre-create the name to block the
	 * job, nor plant a region in it. */
	const char *base = region_dir();
	int rc = CAP_EIO;
	for (int attempt = 0; attempt < 16; attempt++) {
		unsigned char rnd[16];
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
			rc = CAP_EIO;
			break;
		}
		char hex[33];
		for (size_t i = 0; i < sizeof rnd; i++)
			snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
		free(c->dir);
		c->dir = xasprintf("%s/gpuwise-cap-%s", base, hex);
		if (mkdir(c->dir, 0700) == 0) {
			rc = 0;
			break;
		}
		if (errno != EEXIST)
			break;
	}
	if (rc == 0) {
		c->path = xasprintf("%s/region", c->dir);
		rc = cap_region_create_held(c->path, limit_bytes, &c->region, &c->fd);
		if (rc) {
			int e = errno;
			rmdir(c->dir);
			errno = e;
		}
	}
	if (rc) {
		gw_errorf(_("cannot create the VRAM cap region in '%s': %s"), base,
			  rc == CAP_EIO ? strerror(errno) : cap_strerror(rc));
		free(c->path);
		free(c->dir);
		c->path = c->dir = NULL;
		c->fd = -1;
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
	if (c->region && c->fd >= 0)
		close(c->fd);
	if (c->region)
		cap_region_close(c->region);
	if (c->path)
		unlink(c->path);
	if (c->dir)
		rmdir(c->dir);
	free(c->path);
	free(c->dir);
	c->region = NULL;
	c->path = c->dir = NULL;
	c->fd = -1;
}

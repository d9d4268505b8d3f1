/*
 * cap/region.c: the job's shared VRAM accounting (see region.h).  Linked
 * into gpuwise and into libgpuwise-cap.so; libc only, never prints.
 */
#include "cap/region.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RELAXED memory_order_relaxed

const char *cap_strerror(int rc)
{
	switch (rc) {
	case 0: return "success";
	case CAP_EOVER: return "over the VRAM cap";
	case CAP_EFULL: return "too many processes or GPUs in the job";
	case CAP_EIO: return "cannot create or map the region file";
	case CAP_EBADREG: return "not a gpuwise cap region of this version";
	case CAP_EINVAL: return "invalid argument";
	case CAP_EFORGED: return "not a region this job's supervisor created";
	default: return "unknown error";
	}
}

static uint64_t ld(const _Atomic uint64_t *p) { return atomic_load_explicit(p, RELAXED); }
static void st(_Atomic uint64_t *p, uint64_t v) { atomic_store_explicit(p, v, RELAXED); }

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_sub(uint64_t a, uint64_t b) { return a < b ? 0 : a - b; }

/* Field `field` (3 or more) of /proc/PID/stat as a number; 0 unknown/gone. */
static uint64_t proc_stat_field(pid_t pid, int field)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the command name may hold spaces and ')': fields restart after the last ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* p + 1 is the space before field 3 (state) */
	p++;
	for (int f = 3; f < field && p; f++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	unsigned long long v = 0;
	if (sscanf(p, " %llu", &v) != 1)
		return 0;
	return v;
}

uint64_t cap_proc_start_ticks(pid_t pid)
{
	return proc_stat_field(pid, 22);
}

/* Is the process that leased s still there (same PID, same start)? */
static bool slot_alive(const cap_slot *s)
{
	pid_t pid = (pid_t)atomic_load_explicit(&s->pid, RELAXED);
	if (pid <= 0)
		return false;
	uint64_t start = cap_proc_start_ticks(pid), leased = ld(&s->start_ticks);
	/* a lease taken when /proc could not be read holds by the PID alone */
	if (start && leased)
		return start == leased;
	/* /proc unreadable (hidepid): only the PID can be checked */
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* Totals from the slots: the truth after a process died holding the lock. */
static void recompute(cap_region *r)
{
	for (int d = 0; d < CAP_MAX_DEVICES; d++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < r->n_slots; i++) {
			cap_slot *s = &r->slots[i];
			if (!atomic_load_explicit(&s->pid, RELAXED))
				continue;
			sum = sat_add(sum, sat_add(ld(&s->alloc_bytes[d]), ld(&s->ctx_bytes[d])));
		}
		st(&r->devs[d].used_bytes, sum);
	}
}

static void lock(cap_region *r)
{
	int rc = pthread_mutex_lock(&r->lock);
	if (rc == EOWNERDEAD) {
		pthread_mutex_consistent(&r->lock);
		recompute(r);
	}
}

static void unlock(cap_region *r) { pthread_mutex_unlock(&r->lock); }

/* Empty slot s, uncounting what it holds; lock held. */
static void slot_clear(cap_region *r, cap_slot *s)
{
	for (int d = 0; d < CAP_MAX_DEVICES; d++) {
		uint64_t b = sat_add(ld(&s->alloc_bytes[d]), ld(&s->ctx_bytes[d]));
		st(&r->devs[d].used_bytes, sat_sub(ld(&r->devs[d].used_bytes), b));
		st(&s->alloc_bytes[d], 0);
		st(&s->ctx_bytes[d], 0);
		atomic_store_explicit(&s->ctx_state[d], CAP_CTX_UNMEASURED, RELAXED);
	}
	st(&s->start_ticks, 0);
	atomic_store_explicit(&s->pid, 0, memory_order_release);
}

static int reclaim_locked(cap_region *r)
{
	int n = 0;
	for (uint32_t i = 0; i < r->n_slots; i++) {
		cap_slot *s = &r->slots[i];
		if (atomic_load_explicit(&s->pid, RELAXED) && !slot_alive(s)) {
			slot_clear(r, s);
			n++;
		}
	}
	if (n)
		atomic_fetch_add_explicit(&r->reclaimed, (uint64_t)n, RELAXED);
	return n;
}

int cap_reclaim(cap_region *r)
{
	lock(r);
	int n = reclaim_locked(r);
	unlock(r);
	return n;
}

static int map_fd(int fd, cap_region **out)
{
	void *p = mmap(NULL, sizeof(cap_region), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return CAP_EIO;
	*out = p;
	return 0;
}

int cap_region_create(const char *path, uint64_t limit_bytes, cap_region **out)
{
	int fd = -1;
	int rc = cap_region_create_held(path, limit_bytes, out, &fd);
	if (fd >= 0)
		close(fd);
	return rc;
}

int cap_region_create_held(const char *path, uint64_t limit_bytes, cap_region **out, int *fd_out)
{
	if (!path || !out || !fd_out || limit_bytes == 0)
		return CAP_EINVAL;
	*fd_out = -1;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return CAP_EIO;
	int rc = CAP_EIO;
	cap_region *r = NULL;
	if (ftruncate(fd, (off_t)sizeof(cap_region)) || map_fd(fd, &r))
		goto out;
	/* the file is all zeroes: every slot and device entry is free */
	r->version = CAP_VERSION;
	r->n_slots = CAP_MAX_SLOTS;
	r->region_bytes = sizeof(cap_region);
	r->limit_bytes = limit_bytes;
	r->owner_pid = (uint32_t)getpid();
	r->owner_start_ticks = cap_proc_start_ticks(getpid());
	r->owner_fd = fd;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	int e = pthread_mutex_init(&r->lock, &a);
	pthread_mutexattr_destroy(&a);
	if (e) {
		errno = e;
		goto out;
	}
	atomic_store_explicit(&r->magic, CAP_MAGIC, memory_order_release);
	*out = r;
	r = NULL;
	*fd_out = fd;
	fd = -1;
	rc = 0;
out:
	if (r)
		munmap(r, sizeof *r);
	if (rc) {
		int e2 = errno;
		unlink(path);
		errno = e2;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int cap_region_open(const char *path, cap_region **out)
{
	if (!path || !*path || !out)
		return CAP_EINVAL;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return CAP_EIO;
	int rc = CAP_EBADREG;
	struct stat sb;
	cap_region *r = NULL;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != sizeof(cap_region))
		goto out;
	if ((rc = map_fd(fd, &r)))
		goto out;
	rc = CAP_EBADREG;
	if (atomic_load_explicit(&r->magic, memory_order_acquire) != CAP_MAGIC || r->version != CAP_VERSION ||
	    r->region_bytes != sizeof(cap_region) || r->n_slots == 0 || r->n_slots > CAP_MAX_SLOTS ||
	    r->limit_bytes == 0)
		goto out;
	*out = r;
	r = NULL;
	rc = 0;
out:
	if (r)
		munmap(r, sizeof *r);
	close(fd);
	return rc;
}

void cap_region_close(cap_region *r)
{
	if (r)
		munmap(r, sizeof *r);
}

static int forged(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int forged(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (why && n)
		vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return CAP_EFORGED;
}

int cap_lib_mapped(pid_t pid)
{
	char path[64], buf[4096 + 64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int found = 0;
	size_t keep = 0, name = strlen("/" CAP_LIB_NAME);
	for (;;) {
		ssize_t r = read(fd, buf + keep, sizeof buf - 1 - keep);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				found = -1;
			break;
		}
		size_t len = keep + (size_t)r;
		buf[len] = '\0';
		if (memmem(buf, len, "/" CAP_LIB_NAME, name)) {
			found = 1;
			break;
		}
		/* keep the tail: the name may straddle two reads */
		keep = len < name ? len : name;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return found;
}

int cap_region_authenticate(const char *path, const cap_region *r, char *why, size_t n)
{
	if (why && n)
		why[0] = '\0';
	uid_t me = geteuid();
	struct stat fsb, dsb, osb;
	if (lstat(path, &fsb) || !S_ISREG(fsb.st_mode))
		return forged(why, n, "it is not a plain file");
	if (fsb.st_uid != me || (fsb.st_mode & 077))
		return forged(why, n, "the file is not private to uid %u (owner %u, mode %04o)", (unsigned)me,
			      (unsigned)fsb.st_uid, (unsigned)(fsb.st_mode & 07777));
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	if (lstat(dir, &dsb) || !S_ISDIR(dsb.st_mode) || dsb.st_uid != me || (dsb.st_mode & 077))
		return forged(why, n, "its directory '%s' is not private to uid %u", dir, (unsigned)me);
	pid_t owner = (pid_t)r->owner_pid;
	if (owner <= 0 || !r->owner_start_ticks || cap_proc_start_ticks(owner) != r->owner_start_ticks)
		return forged(why, n, "its creator (pid %u) is gone", (unsigned)r->owner_pid);
	/* the creator must be an ancestor: a region made beside the job does not count */
	pid_t p = getpid();
	int depth = 0;
	while (p > 1 && p != owner && depth++ < 4096)
		p = (pid_t)proc_stat_field(p, 4);
	if (p != owner)
		return forged(why, n, "its creator (pid %u) is not an ancestor of this process", (unsigned)owner);
	char fdpath[64];
	snprintf(fdpath, sizeof fdpath, "/proc/%d/fd/%d", (int)owner, (int)r->owner_fd);
	if (r->owner_fd < 0 || stat(fdpath, &osb) || osb.st_dev != fsb.st_dev || osb.st_ino != fsb.st_ino)
		return forged(why, n, "its creator (pid %u) does not hold it open", (unsigned)owner);
	/* a process under the cap that writes a region of its own is not a supervisor */
	int m = cap_lib_mapped(owner);
	if (m != 0)
		return forged(why, n, m < 0 ? "its creator (pid %u) cannot be inspected"
					    : "its creator (pid %u) is itself under a VRAM cap", (unsigned)owner);
	return 0;
}

int cap_slot_claim(cap_region *r, pid_t pid, uint64_t start_ticks, cap_slot **out)
{
	int rc = CAP_EFULL;
	lock(r);
	reclaim_locked(r);
	/* a lease of the same process before an exec: the driver freed its memory */
	for (uint32_t i = 0; i < r->n_slots; i++) {
		cap_slot *s = &r->slots[i];
		if (atomic_load_explicit(&s->pid, RELAXED) == (uint32_t)pid && ld(&s->start_ticks) == start_ticks)
			slot_clear(r, s);
	}
	for (uint32_t i = 0; i < r->n_slots; i++) {
		cap_slot *s = &r->slots[i];
		if (atomic_load_explicit(&s->pid, RELAXED))
			continue;
		for (int d = 0; d < CAP_MAX_DEVICES; d++) {
			st(&s->alloc_bytes[d], 0);
			st(&s->ctx_bytes[d], 0);
			atomic_store_explicit(&s->ctx_state[d], CAP_CTX_UNMEASURED, RELAXED);
		}
		st(&s->start_ticks, start_ticks);
		atomic_store_explicit(&s->pid, (uint32_t)pid, memory_order_release);
		*out = s;
		rc = 0;
		break;
	}
	unlock(r);
	return rc;
}

void cap_slot_release(cap_region *r, cap_slot *s)
{
	if (!r || !s)
		return;
	lock(r);
	if (atomic_load_explicit(&s->pid, RELAXED))
		slot_clear(r, s);
	unlock(r);
}

int cap_dev_find(const cap_region *r, const unsigned char uuid[16])
{
	for (int d = 0; d < CAP_MAX_DEVICES; d++)
		if (atomic_load_explicit(&r->devs[d].in_use, memory_order_acquire) &&
		    memcmp(r->devs[d].uuid, uuid, 16) == 0)
			return d;
	return -1;
}

int cap_dev_index(cap_region *r, const unsigned char uuid[16])
{
	int d = cap_dev_find(r, uuid);
	if (d >= 0)
		return d;
	lock(r);
	d = cap_dev_find(r, uuid);
	for (int i = 0; d < 0 && i < CAP_MAX_DEVICES; i++)
		if (!atomic_load_explicit(&r->devs[i].in_use, RELAXED)) {
			memcpy(r->devs[i].uuid, uuid, 16);
			atomic_store_explicit(&r->devs[i].in_use, 1, memory_order_release);
			d = i;
		}
	unlock(r);
	return d;
}

static bool fits(const cap_region *r, int dev, uint64_t bytes)
{
	uint64_t used = ld(&r->devs[dev].used_bytes);
	return bytes <= r->limit_bytes && used <= r->limit_bytes - bytes;
}

int cap_reserve(cap_region *r, cap_slot *s, int dev, uint64_t bytes)
{
	if (dev < 0 || dev >= CAP_MAX_DEVICES)
		return CAP_EINVAL;
	int rc = 0;
	lock(r);
	if (!fits(r, dev, bytes) && (!reclaim_locked(r) || !fits(r, dev, bytes))) {
		atomic_fetch_add_explicit(&r->refused, 1, RELAXED);
		rc = CAP_EOVER;
		goto out;
	}
	/* the slot first: recompute() trusts the slots */
	st(&s->alloc_bytes[dev], sat_add(ld(&s->alloc_bytes[dev]), bytes));
	uint64_t used = ld(&r->devs[dev].used_bytes) + bytes; /* fits(): no overflow */
	st(&r->devs[dev].used_bytes, used);
	if (used > ld(&r->devs[dev].peak_bytes))
		st(&r->devs[dev].peak_bytes, used);
out:
	unlock(r);
	return rc;
}

void cap_unreserve(cap_region *r, cap_slot *s, int dev, uint64_t bytes)
{
	if (dev < 0 || dev >= CAP_MAX_DEVICES)
		return;
	lock(r);
	/* never more than the slot holds, so a stray free cannot eat another process's count */
	uint64_t held = ld(&s->alloc_bytes[dev]);
	if (bytes > held)
		bytes = held;
	st(&s->alloc_bytes[dev], held - bytes);
	st(&r->devs[dev].used_bytes, sat_sub(ld(&r->devs[dev].used_bytes), bytes));
	unlock(r);
}

void cap_set_ctx(cap_region *r, cap_slot *s, int dev, uint64_t bytes, bool known)
{
	if (dev < 0 || dev >= CAP_MAX_DEVICES)
		return;
	lock(r);
	uint64_t old = ld(&s->ctx_bytes[dev]);
	st(&s->ctx_bytes[dev], bytes);
	uint64_t used = sat_add(sat_sub(ld(&r->devs[dev].used_bytes), old), bytes);
	st(&r->devs[dev].used_bytes, used);
	if (used > ld(&r->devs[dev].peak_bytes))
		st(&r->devs[dev].peak_bytes, used);
	atomic_store_explicit(&s->ctx_state[dev], known ? CAP_CTX_MEASURED : CAP_CTX_UNKNOWN, RELAXED);
	unlock(r);
}

uint64_t cap_used(const cap_region *r, int dev)
{
	return dev >= 0 && dev < CAP_MAX_DEVICES ? ld(&r->devs[dev].used_bytes) : 0;
}

int cap_live_slots(const cap_region *r)
{
	int n = 0;
	for (uint32_t i = 0; i < r->n_slots && i < CAP_MAX_SLOTS; i++)
		n += atomic_load_explicit(&r->slots[i].pid, RELAXED) != 0;
	return n;
}

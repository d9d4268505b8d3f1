/*
 * cap/region: the shared accounting region behind a per-job VRAM cap
 * (libgpuwise-cap.so, issue 14).
 *
 * The supervisor (gpuwise run --vram-cap, later the queue) creates one
 * region file per job, writes the limit and owns the file: the processes
 * of the job only map it and count in it, and none of them can set or
 * reset the limit by starting first (the trap of HAMi-core's shared cache,
 * see docs/vram-cap.md).  Each process of the job leases a slot under its
 * PID and start time; a slot whose process is gone (or whose PID now
 * belongs to a younger process) is reclaimed with all its memory.  Every
 * change is made under one robust process-shared mutex, so a process
 * killed while holding it leaves nothing half-counted: the next locker
 * recomputes the totals from the slots.  Counters saturate: a request
 * near 2^64 is refused, never wrapped, and a release never goes below 0.
 *
 * This file is linked both into gpuwise and into the preload library, so
 * it uses nothing but libc and never prints.
 */
#ifndef GW_CAP_REGION_H
#define GW_CAP_REGION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CAP_MAGIC 0x3170616373777067ULL /* "gpwscap1" little-endian */
#define CAP_VERSION 2
#define CAP_MAX_DEVICES 16
#define CAP_MAX_SLOTS 256
/* The environment variable that names the region for the job's processes. */
#define CAP_ENV_REGION "GPUWISE_CAP_REGION"
#define CAP_LIB_NAME "libgpuwise-cap.so"

/* Errors: 0 or one of these (negative). */
enum {
	CAP_EOVER = -1,    /* the request would pass the cap */
	CAP_EFULL = -2,    /* no free slot or device entry */
	CAP_EIO = -3,      /* cannot create, open or map the file (errno kept) */
	CAP_EBADREG = -4,  /* not a region of this version */
	CAP_EINVAL = -5,
	CAP_EFORGED = -6,  /* a region, but not one this job's supervisor made */
};
const char *cap_strerror(int rc);

/* One GPU seen by the job, by UUID (CUDA ordinals differ between processes). */
typedef struct cap_dev {
	_Atomic uint32_t in_use;
	unsigned char uuid[16];
	_Atomic uint64_t used_bytes;    /* allocations + contexts of live slots */
	_Atomic uint64_t peak_bytes;
} cap_dev;

/* Context memory states of a slot on a device. */
enum { CAP_CTX_UNMEASURED = 0, CAP_CTX_MEASURED = 1, CAP_CTX_UNKNOWN = 2 };

typedef struct cap_slot {
	_Atomic uint32_t pid;           /* 0: free */
	_Atomic uint64_t start_ticks;   /* /proc/PID/stat field 22 */
	_Atomic uint64_t alloc_bytes[CAP_MAX_DEVICES];
	_Atomic uint64_t ctx_bytes[CAP_MAX_DEVICES];
	_Atomic uint32_t ctx_state[CAP_MAX_DEVICES];
} cap_slot;

typedef struct cap_region {
	_Atomic uint64_t magic;         /* written last by the creator */
	uint32_t version;
	uint32_t n_slots;
	uint64_t region_bytes;          /* sizeof(cap_region), checked on open */
	uint64_t limit_bytes;           /* per GPU; set once by the supervisor */
	uint32_t owner_pid;
	uint64_t owner_start_ticks;
	int32_t owner_fd;               /* the creator keeps the file open here */
	pthread_mutex_t lock;           /* robust, process-shared */
	_Atomic uint64_t refused;       /* allocations refused for the cap */
	_Atomic uint64_t reclaimed;     /* slots of dead processes taken back */
	cap_dev devs[CAP_MAX_DEVICES];
	cap_slot slots[CAP_MAX_SLOTS];
} cap_region;

/*
 * Create the region file at path (O_EXCL, mode 0600) with the limit and
 * map it.  The caller owns the mapping (cap_region_close) and the file
 * (unlink it when the job is over).  Returns 0 or CAP_EIO/CAP_EINVAL.
 */
int cap_region_create(const char *path, uint64_t limit_bytes, cap_region **out);
/*
 * The same, keeping the file open: *fd_out (close-on-exec) is recorded in
 * the region as owner_fd, and cap_region_authenticate() checks that the
 * creator still holds it.  The caller closes *fd_out when the job is over.
 */
int cap_region_create_held(const char *path, uint64_t limit_bytes, cap_region **out, int *fd_out);
/* Map an existing region read-write; checks magic, version and size. */
int cap_region_open(const char *path, cap_region **out);
void cap_region_close(cap_region *r);
/*
 * Is the mapped region r, opened from path, one this process's own
 * supervisor made for it?  A job's processes and anyone else can write a
 * file that passes cap_region_open(); this checks what they cannot fake
 * without already being outside the cap:
 *   - the file and its directory belong to this process's effective user
 *     and are private to it (no group or other permission bits);
 *   - the creator recorded in the region is alive (same PID and start
 *     time), is an ancestor of this process, still holds the very file
 *     (same device and inode) open at the recorded descriptor, and is not
 *     itself under a cap (libgpuwise-cap.so is not mapped into it).
 * Returns 0 or CAP_EFORGED with the failed check in why.
 */
int cap_region_authenticate(const char *path, const cap_region *r, char *why, size_t n);
/* Is libgpuwise-cap.so mapped into process pid (its /proc/PID/maps)?  1, 0, or -1 unreadable. */
int cap_lib_mapped(pid_t pid);

/* Start time of a process in clock ticks since boot; 0 unknown/gone. */
uint64_t cap_proc_start_ticks(pid_t pid);

/*
 * Lease a slot for (pid, start_ticks), reclaiming dead slots first.
 * Returns 0 with *out, or CAP_EFULL.
 */
int cap_slot_claim(cap_region *r, pid_t pid, uint64_t start_ticks, cap_slot **out);
/* Give the slot back with everything it holds. */
void cap_slot_release(cap_region *r, cap_slot *s);

/* The region's index for a GPU UUID, taking a free entry; -1 when full. */
int cap_dev_index(cap_region *r, const unsigned char uuid[16]);
/* The index for a UUID without taking an entry; -1 when not seen yet. */
int cap_dev_find(const cap_region *r, const unsigned char uuid[16]);

/*
 * Count bytes for slot s on device dev if the job stays within the cap
 * (dead slots are reclaimed before refusing).  Returns 0 or CAP_EOVER.
 */
int cap_reserve(cap_region *r, cap_slot *s, int dev, uint64_t bytes);
/* Uncount bytes (saturating at 0). */
void cap_unreserve(cap_region *r, cap_slot *s, int dev, uint64_t bytes);
/*
 * Set what the slot's CUDA context (and whatever else the driver holds
 * for the process beyond the counted allocations: modules, rounding) uses
 * on dev, replacing the previous figure.  Measured, so it is counted even
 * past the cap: it exists already.  known false: NVML could not say.
 */
void cap_set_ctx(cap_region *r, cap_slot *s, int dev, uint64_t bytes, bool known);

/* Reclaim the slots of dead processes; returns how many. */
int cap_reclaim(cap_region *r);
/* Bytes counted on device dev (0 for an unknown index). */
uint64_t cap_used(const cap_region *r, int dev);
/* Live slots (processes that hold a lease). */
int cap_live_slots(const cap_region *r);

#endif

/*
 * The supervisor's side of the per-job VRAM cap (issue 14): create the
 * job's region, hand the job libgpuwise-cap.so and the region through its
 * environment, and remove the region when the job is over.  Used by
 * gpuwise run --vram-cap (and, later, the queue's jobs).
 */
#ifndef GW_CMD_VRAMCAP_H
#define GW_CMD_VRAMCAP_H

#include <stddef.h>
#include <stdint.h>

struct cap_region;

typedef struct vram_cap {
	struct cap_region *region;
	char *dir;      /* private (0700), unpredictable name */
	char *path;     /* dir/region */
	int fd;         /* held open for the job's life: the library checks it */
} vram_cap;

/*
 * The path of libgpuwise-cap.so: next to the running binary, else in
 * ../lib/gpuwise/ beside its bin/ (make install).  0, or -1 when neither
 * exists (out gets the places looked at, for the message).
 */
int vram_cap_find_lib(char *out, size_t n);
/*
 * Create the region for limit_bytes per GPU and set LD_PRELOAD and
 * GPUWISE_CAP_REGION in this process's environment, which the job
 * inherits.  Prints a one-line error; returns 0 or GW_EXIT_RUNTIME.
 */
int vram_cap_start(uint64_t limit_bytes, vram_cap *c);
/* Unmap and unlink the region and its directory (safe on a zeroed struct). */
void vram_cap_finish(vram_cap *c);

#endif

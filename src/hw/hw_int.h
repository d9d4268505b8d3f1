/*
 * hw_int.h: what the backends of hw/ (nvml.c, cuda.c, sysfs.c, proc.c)
 * offer hw.c.  Private to src/hw; other layers use hw.h only.
 */
#ifndef GW_HW_INT_H
#define GW_HW_INT_H

#include "hw/hw.h"

/* Mark every hw_val of g as not queried and clear the rest. */
void hw_gpu_clear(hw_gpu *g);
/* Deep copy of a static template (no MIG or process arrays). */
void hw_gpu_free_lists(hw_gpu *g);
/* Normalise a PCI bus id ("00000000:01:00.0", "0000:01:00.0") to
 * "dddd:bb:dd.f" lowercase; false when it does not parse. */
bool hw_pci_norm(const char *in, char *out, size_t n);

/* ---- nvml.c ------------------------------------------------------------- */
typedef struct nvml nvml;
/*
 * dlopen NVML (GPUWISE_NVML_LIB, else libnvidia-ml.so.1, else
 * libnvidia-ml.so), resolve symbols; no initialisation.  NULL when absent,
 * with why filled.  path gets the file loaded, note a skipped stub.
 */
nvml *nvml_load(char *path, size_t pathn, char *why, size_t whyn, char *note, size_t noten);
/* nvmlInit and the system strings; 0 or -1 with why filled. */
int nvml_start(nvml *n, hw_snapshot *s, char *why, size_t whyn);
unsigned nvml_count(const nvml *n);
/* Identity and static fields (name, UUID, PCI, limits, maxima). */
void nvml_static(nvml *n, unsigned i, hw_gpu *g);
/* Changing fields, MIG devices, (when procs) processes and (when pcie)
 * PCIe throughput. */
void nvml_dynamic(nvml *n, unsigned i, hw_gpu *g, bool procs, bool pcie);
/* nvmlShutdown (if started) and dlclose. */
void nvml_close(nvml *n);
const char *nvml_errstr(const nvml *n, int ret);
hw_status nvml_status(int ret);

/* ---- cuda.c ------------------------------------------------------------- */
typedef struct cuda cuda;
cuda *cuda_load(char *path, size_t pathn, char *why, size_t whyn);
/* cuInit and cuDriverGetVersion. */
int cuda_start(cuda *c, hw_val *version, char *why, size_t whyn);
/* Set cuda_ordinal and the CUDA attributes of gpus (matched by UUID); note
 * says when CUDA numbers them differently from NVML. */
void cuda_attach(cuda *c, hw_gpu *gpus, size_t n, char *note, size_t noten);
void cuda_close(cuda *c);

/* ---- sysfs.c ------------------------------------------------------------ */
typedef struct sysfs_gpu {
	hw_gpu id;              /* identity fields filled from sysfs */
	char dir[200];          /* /sys/bus/pci/devices/<bdf> (unprefixed) */
	char hwmon[200];        /* amdgpu hwmon directory, "" none */
} sysfs_gpu;
/*
 * Every PCI display controller (class 0x03xxxx) under the root.  Returns 0
 * (possibly with *n = 0) or an error for a malformed tree.
 */
int sysfs_scan(sysfs_gpu **out, size_t *n, gw_error *err);
/* Refresh runtime_status and, for amdgpu, VRAM/busy/temperature/power. */
/* wake: read amdgpu files even when runtime-suspended (reading wakes it). */
void sysfs_dynamic(const sysfs_gpu *s, hw_gpu *g, bool wake);
/* A name from pci.ids under the root, "" when not found. */
void sysfs_pci_name(uint32_t vendor, uint32_t device, char *out, size_t n);

/* ---- proc.c ------------------------------------------------------------- */
typedef struct proc_cache proc_cache;
proc_cache *proc_cache_new(void);
/* Fill user, command, cgroup, container and exists for p->pid. */
void proc_fill(proc_cache *c, hw_proc *p);
/* Forget the processes not filled since the last sweep. */
void proc_cache_sweep(proc_cache *c);
void proc_cache_free(proc_cache *c);
/* Parse one /proc/PID/cgroup text into a container id ("" when none). */
void proc_container_id(const char *cgroup, char *out, size_t n);

#endif

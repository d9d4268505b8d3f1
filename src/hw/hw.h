/*
 * hw: one vendor-neutral snapshot per GPU from NVML, the CUDA driver and
 * sysfs.  Vendor libraries are dlopen'ed, so nothing here needs them at
 * build time.  Every field carries its own validity: a value NVML does not
 * support is never reported as 0.
 */
#ifndef GW_HW_H
#define GW_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* Why a field has no value. */
typedef enum {
	HW_OK = 0,
	HW_UNQUERIED,       /* backend absent, or the device was asleep */
	HW_NOT_SUPPORTED,   /* NVML_ERROR_NOT_SUPPORTED */
	HW_NO_PERMISSION,   /* NVML_ERROR_NO_PERMISSION */
	HW_GPU_LOST,        /* NVML_ERROR_GPU_IS_LOST */
	HW_NO_SYMBOL,       /* the loaded library lacks the function (old driver) */
	HW_FAILED,          /* any other error; see nvml_ret */
} hw_status;

typedef struct hw_val {
	int64_t v;
	hw_status st;      /* HW_OK when v is valid */
	int nvml_ret;      /* the vendor's return code when st is not HW_OK */
} hw_val;

#define HW_VALID(x) ((x).st == HW_OK)

typedef enum { HW_VENDOR_NVIDIA, HW_VENDOR_AMD, HW_VENDOR_INTEL, HW_VENDOR_OTHER } hw_vendor;

/* ---- platform: Linux, WSL 1 or WSL 2 (wsl.c) --------------------------- */
typedef enum { HW_PLATFORM_LINUX = 0, HW_PLATFORM_WSL1, HW_PLATFORM_WSL2 } hw_platform_kind;

typedef struct hw_platform_info {
	hw_platform_kind kind;
	char kernel[128];      /* /proc/sys/kernel/osrelease, "" unreadable */
	bool dxg;              /* /dev/dxg, the GPU paravirtualisation (GPU-PV) device */
	bool wsl_lib;          /* /usr/lib/wsl/lib: the Windows driver's Linux libraries */
	char evidence[256];    /* what told ("kernel '...-microsoft-standard-WSL2', /dev/dxg") */
} hw_platform_info;

/*
 * Detect the platform under the root prefix: WSL 2 when the kernel
 * release or /proc/version says WSL2 or microsoft-standard, or /dev/dxg or
 * /usr/lib/wsl/lib exist; WSL 1 when the kernel names Microsoft otherwise;
 * else Linux (bare metal, VM or container).  Cheap: a few small reads.
 */
void hw_platform_detect(hw_platform_info *out);
/* The kind alone (for explain and other callers that only switch on it). */
hw_platform_kind hw_platform(void);
/* "linux", "wsl1", "wsl2": the JSON value of the "platform" keys. */
const char *hw_platform_name(hw_platform_kind k);


typedef struct hw_proc {
	uint32_t pid;
	char user[64];          /* "" when unknown (no /proc entry) */
	char command[256];      /* command line, spaces for NULs */
	char cgroup[256];       /* cgroup path (container id when recognisable) */
	char container[80];     /* docker/podman/k8s id, "" if none */
	hw_val used_mem_bytes;
	bool compute, graphics;
	bool exists;            /* /proc/PID exists (else a stale NVML entry) */
	uint32_t gpu_instance, compute_instance; /* MIG ids, UINT32_MAX when n/a */

	/* added after the first version of this contract */
	char argv[1024];        /* the command line as read: arguments separated by NUL */
	size_t argv_len;        /* bytes used in argv (0 when unknown) */
	hw_val sm_util_pct, mem_util_pct, enc_util_pct, dec_util_pct; /* latest NVML sample */
	bool windows_side;      /* WSL 2: NVML lists it, WSL's /proc has none: a Windows program */
} hw_proc;

typedef struct hw_mig {
	char uuid[96];
	char name[96];          /* "NVIDIA H100 80GB HBM3 MIG 3g.40gb" */
	char profile[32];       /* "3g.40gb" from the name, "" unknown */
	uint32_t gpu_instance, compute_instance;
	hw_val mem_total_bytes, mem_used_bytes;
	hw_val sm_count;
} hw_mig;

/* Throttle / clocks-event reasons (NVML bit values). */
enum {
	HW_THR_GPU_IDLE = 0x1,
	HW_THR_APP_CLOCKS = 0x2,
	HW_THR_SW_POWER_CAP = 0x4,
	HW_THR_HW_SLOWDOWN = 0x8,
	HW_THR_SYNC_BOOST = 0x10,
	HW_THR_SW_THERMAL = 0x20,
	HW_THR_HW_THERMAL = 0x40,
	HW_THR_HW_POWER_BRAKE = 0x80,
	HW_THR_DISPLAY_CLOCKS = 0x100,
};

typedef struct hw_gpu {
	int index;              /* gpuwise index: NVML order, then other PCI GPUs */
	int nvml_index;         /* -1 when not an NVML device */
	int cuda_ordinal;       /* -1 when not visible to CUDA (or CUDA not loaded) */
	char uuid[96];
	char name[96];
	hw_vendor vendor;
	char pci_bus_id[32];    /* "0000:01:00.0" */
	uint32_t pci_vendor_id, pci_device_id, pci_subsys_id;
	int pci_revision;       /* -1 unknown; 0xff = fell off the bus */
	bool integrated;
	char kernel_driver[32]; /* nvidia, nouveau, amdgpu, i915, xe, "" none */
	char runtime_status[32];/* sysfs power/runtime_status: active, suspended ... */
	bool asleep;            /* runtime-suspended and not woken */
	bool fell_off_bus;
	char arch[32];          /* "Ada Lovelace", "Hopper" ... */

	hw_val cc_major, cc_minor;
	hw_val mem_total_bytes, mem_used_bytes, mem_free_bytes, mem_reserved_bytes;
	hw_val util_gpu_pct, util_mem_pct;
	hw_val temp_c, temp_slowdown_c, temp_shutdown_c;
	hw_val fan_pct;
	hw_val power_mw, power_limit_mw, power_default_limit_mw;
	hw_val clock_sm_mhz, clock_mem_mhz, clock_sm_max_mhz, clock_mem_max_mhz;
	hw_val throttle_reasons;    /* HW_THR_* bits */
	hw_val pcie_gen, pcie_width, pcie_gen_max, pcie_width_max;
	hw_val persistence_mode, compute_mode, mig_mode;
	hw_val ecc_mode, ecc_corrected, ecc_uncorrected;
	hw_val retired_sbe, retired_dbe, retired_pending;
	hw_val remap_correctable, remap_uncorrectable, remap_pending, remap_failure;
	/* from the CUDA driver */
	hw_val sm_count, mem_clock_khz, mem_bus_width_bits, l2_bytes;
	double bandwidth_gbs;   /* theoretical, from clock x bus width; 0 unknown */

	hw_mig *migs;
	size_t n_migs;
	hw_proc *procs;
	size_t n_procs;

	/* added after the first version of this contract */
	char error[128];        /* why this GPU could not be read ("GPU is lost"), "" if fine */
	uint32_t pci_class;     /* 0x030000 VGA, 0x030200 3D controller; 0 unknown */
	hw_val procs_listed;    /* v = 1 when the process list was read; else why not */
	hw_val enc_util_pct, dec_util_pct;          /* video encoder / decoder */
	hw_val pcie_tx_kbytes_per_s, pcie_rx_kbytes_per_s; /* NVML: KB/s over ~20 ms */
	hw_val energy_mj;       /* millijoules since the driver loaded (counter) */
	hw_val pstate;          /* performance state: 0 (P0, fastest) to 15 */
	/* NVLink: the remote PCI bus id of each active link (a peer GPU or an
	 * NVSwitch), normalised like pci_bus_id; n_nvlinks 0 without NVLink */
	char nvlink_peer[18][32];
	int n_nvlinks;
} hw_gpu;

typedef struct hw_snapshot {
	uint64_t taken_wall_ms;
	char driver_version[32];    /* "" unknown */
	char nvml_version[32];
	hw_val cuda_driver_version; /* 12080 = 12.8 */
	bool nvml_loaded;
	char nvml_path[512];        /* file the NVML library was loaded from */
	char nvml_error[256];       /* why NVML is absent or failed, "" if fine */
	bool nvml_initialised;      /* false when every NVIDIA GPU was asleep */
	bool cuda_loaded;
	char cuda_path[512];
	char cuda_error[256];
	char cuda_order_note[256];  /* why CUDA and NVML orders differ, "" if same */
	hw_gpu *gpus;
	size_t n_gpus;

	/* added after the first version of this contract */
	char nvml_note[256];        /* e.g. a toolkit stub that was skipped, "" if none */
	bool nvml_asleep_skip;      /* NVML left uninitialised because a GPU sleeps */
	bool nvml_named;            /* GPUWISE_NVML_LIB named the library (so it must work) */
	bool nvml_disabled;         /* GPUWISE_NVML_LIB=none: NVML not wanted */
	hw_platform_kind platform;  /* detected at hw_open (hw_platform_detect) */
} hw_snapshot;

typedef struct hw_opts {
	bool wake;      /* initialise NVML even if an NVIDIA GPU is runtime-suspended */
	bool no_procs;  /* skip per-process collection */
	bool no_cuda;   /* skip the CUDA driver */
	/* added after the first version of this contract */
	bool pcie_throughput; /* read PCIe throughput: NVML counts bytes over about
			       * 20 ms per reading, so only callers that show it ask */
} hw_opts;

typedef struct hw hw;

/*
 * Open the backends (NVML, CUDA driver, sysfs).  A missing library is not
 * an error: the snapshot says why.  Returns NULL only on bad input (a
 * malformed fixture) with err set.  Static facts (identity, limits, CUDA
 * attributes) are read here once; hw_sample reads only what changes, so
 * sampling every second is cheap.  Without o->wake a runtime-suspended
 * NVIDIA GPU keeps NVML and CUDA uninitialised for the life of the handle
 * (a supervisor whose job uses the GPU should pass wake).  One handle is
 * not safe to sample from two threads at once.
 */
hw *hw_open(const hw_opts *o, gw_error *err);
/* Take a full snapshot; the caller releases it. */
int hw_sample(hw *h, hw_snapshot *out, gw_error *err);
void hw_snapshot_release(hw_snapshot *s);
void hw_close(hw *h);

/* One call: open, sample, close. */
int hw_snapshot_take(const hw_opts *o, hw_snapshot *out, gw_error *err);

/* Decode throttle bits to words ("thermal slowdown, power cap"). */
const char *hw_throttle_words(uint64_t bits, char *buf, size_t n);
/* Host memory from /proc/meminfo (root-prefixed): MemTotal and MemAvailable in bytes. */
int hw_meminfo(uint64_t *total_bytes, uint64_t *available_bytes, gw_error *err);
const char *hw_vendor_name(hw_vendor v);

/*
 * Topology (topo.c).  GPU i's NVLink group: the lowest index of the GPUs of
 * s it reaches over NVLink, directly or through an NVSwitch; -1 without
 * NVLink.  The PCIe switch above the GPU at bus id bdf: an index into
 * keys[] (max entries, *n_keys used, grown as new switches appear), or -1.
 */
int hw_nvlink_group_of(const hw_snapshot *s, size_t i);
int hw_pcie_switch_of(const char *bdf, char keys[][32], size_t *n_keys, size_t max);
const char *hw_status_name(hw_status s);

/* ---- kernel log: NVIDIA Xid events ----------------------------------- */
typedef struct hw_xid {
	uint64_t ts_us;          /* kmsg timestamp, microseconds since boot */
	int64_t wall_s;          /* wall clock seconds when derivable, else -1 */
	char pci[32];            /* "0000:2a:00" */
	int xid;
	int pid;                 /* -1 unknown */
	char process[64];
	char text[256];          /* the rest of the message */
} hw_xid;

/*
 * Read Xid events from a kmsg-format or dmesg-format file (NULL:
 * GPUWISE_ROOT/dev/kmsg, read non-blocking to the end).  since_us filters
 * by kmsg timestamp (0 = all).
 */
int hw_xid_read(const char *path, uint64_t since_us, hw_xid **out, size_t *n, gw_error *err);
/* Parse one kmsg or dmesg line; true when it is an Xid event. */
bool hw_xid_parse(const char *line, hw_xid *x);
/*
 * The kernel-log records (path as for hw_xid_read) that contain needle,
 * case-insensitive, at most max; the message text without the kmsg
 * prefix.  *lines is malloc'd, each line too (the caller frees both).
 */
int hw_kmsg_grep(const char *path, const char *needle, size_t max, char ***lines, size_t *n, gw_error *err);

/* The WSL 2 VM's memory: what the VM has and what limits it. */
typedef struct hw_wsl_memory {
	uint64_t vm_total_bytes;        /* MemTotal of /proc/meminfo: the VM's RAM */
	uint64_t limit_bytes;           /* memory= of [wsl2] in .wslconfig, 0 not set */
	char wslconfig[512];            /* the .wslconfig read (unprefixed), "" none found */
	char rule[600];                 /* "memory=16GB in /mnt/c/Users/ana/.wslconfig" or the default rule */
	uint64_t windows_ram_bytes_est; /* default rule only: about 2 x MemTotal; else 0 */
} hw_wsl_memory;
/*
 * Read MemTotal and the .wslconfig under /mnt/c/Users/<user>/ (through the
 * root prefix).  0, or an error when /proc/meminfo is unreadable.
 */
int hw_wsl_memory_read(hw_wsl_memory *out, gw_error *err);

/* ---- host memory from SMBIOS (dmi.c) ------------------------------------ */
/* The populated system-memory devices of the SMBIOS tables (type 17). */
typedef struct hw_host_memory {
	char type[8];            /* "DDR4", "DDR5", "LPDDR5" ...; "" unknown or mixed */
	uint32_t mts;            /* configured speed, MT/s (the slowest device) */
	uint32_t n_devices;      /* populated devices */
	uint32_t bus_bits;       /* data width summed over the channels */
	uint32_t channels;       /* 64-bit channel equivalents (bus_bits / 64, rounded up) */
	uint64_t total_bytes;
	double bandwidth_gbs;    /* peak: mts x bus_bits / 8 (decimal GB/s) */
} hw_host_memory;
/* SMBIOS memory type byte (type 17 offset 0x12) -> "DDR5"...; NULL other. */
const char *hw_dmi_memory_type_name(unsigned t);
/*
 * Parse a raw SMBIOS table (the contents of /sys/firmware/dmi/tables/DMI).
 * Truncated or lying structures end the walk; 0 with out filled, or
 * GW_ENOENT (no populated device) / GW_EFORMAT (no speed) with err set.
 */
int hw_dmi_memory_parse(const uint8_t *buf, size_t len, hw_host_memory *out, gw_error *err);
/* Read and parse GPUWISE_ROOT/sys/firmware/dmi/tables/DMI (root only on
 * most systems: GW_EPERM then). */
int hw_dmi_memory_read(hw_host_memory *out, gw_error *err);

#endif

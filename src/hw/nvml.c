/*
 * nvml.c: the NVIDIA Management Library, loaded with dlopen.  The few NVML
 * types used are declared here (nvtop style) from NVML's nvml.h as
 * published in NVIDIA/go-nvml (gen/nvml/nvml.h); no vendor header is
 * needed to build.  Every call's return code is kept in the field it fills.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw_int.h"

/* ---- NVML ABI (nvml.h) -------------------------------------------------- */
typedef int nvml_ret;
typedef struct nvml_dev_st *nvml_dev;

typedef struct {
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsys_id;
	char bus_id[32];
} nvml_pci_info;              /* nvmlPciInfo_t (v2, v3) */
typedef struct {
	char bus_id[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsys_id;
	unsigned int reserved[4];
} nvml_pci_info_v1;           /* nvmlPciInfo_t before v2 */
typedef struct { unsigned long long total, free, used; } nvml_memory;   /* nvmlMemory_t */
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvml_memory_v2;             /* nvmlMemory_v2_t */
typedef struct { unsigned int gpu, memory; } nvml_utilization;
typedef struct { unsigned int pid; unsigned long long used; } nvml_proc_v1;
typedef struct {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
} nvml_proc_v2;               /* nvmlProcessInfo_v2_t, also returned by _v3 */

typedef struct {
	unsigned int pid;
	unsigned long long time_us;
	unsigned int sm, mem, enc, dec;
} nvml_proc_util;             /* nvmlProcessUtilizationSample_t */

_Static_assert(sizeof(nvml_pci_info) == 68, "nvmlPciInfo_t ABI");
_Static_assert(sizeof(nvml_proc_util) == 32, "nvmlProcessUtilizationSample_t ABI");
_Static_assert(sizeof(nvml_memory_v2) == 40, "nvmlMemory_v2_t ABI");
_Static_assert(sizeof(nvml_proc_v1) == 16, "nvmlProcessInfo_v1_t ABI");
_Static_assert(sizeof(nvml_proc_v2) == 24, "nvmlProcessInfo_v2_t ABI");

/* nvmlReturn_t values used here */
enum {
	NVML_OK = 0,
	NVML_INVALID_ARGUMENT = 2,
	NVML_NOT_SUPPORTED = 3,
	NVML_NO_PERMISSION = 4,
	NVML_NOT_FOUND = 6,
	NVML_INSUFFICIENT_SIZE = 7,
	NVML_FUNCTION_NOT_FOUND = 13,
	NVML_GPU_IS_LOST = 15,
	NVML_ARGUMENT_VERSION_MISMATCH = 25,
};
/* NVML_STRUCT_VERSION(Memory, 2) */
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvml_memory_v2) | 2u << 24))
/* NVML_VALUE_NOT_AVAILABLE: usedGpuMemory when the driver cannot tell */
#define NVML_VALUE_NOT_AVAILABLE ULLONG_MAX
/* nvmlClockType_t, nvmlTemperatureThresholds_t, nvmlMemoryErrorType_t ... */
enum { CLOCK_SM = 1, CLOCK_MEM = 2 };
enum { THRESH_SHUTDOWN = 0, THRESH_SLOWDOWN = 1 };
enum { ECC_CORRECTED = 0, ECC_UNCORRECTED = 1, ECC_VOLATILE = 0 };
enum { RETIRE_SBE = 0, RETIRE_DBE = 1 };

typedef nvml_ret (*fn_void)(void);
typedef nvml_ret (*fn_u)(nvml_dev, unsigned int *);
typedef nvml_ret (*fn_ull)(nvml_dev, unsigned long long *);
typedef nvml_ret (*fn_uu)(nvml_dev, unsigned int *, unsigned int *);
typedef nvml_ret (*fn_int_u)(nvml_dev, int, unsigned int *);
typedef nvml_ret (*fn_str)(nvml_dev, char *, unsigned int);
typedef nvml_ret (*fn_procs)(nvml_dev, unsigned int *, void *);

struct nvml {
	void *lib;
	bool started;
	unsigned count;
	nvml_dev *devs;
	void *procbuf;
	size_t procbuf_cap;    /* bytes */
	bool mem_v2_broken;    /* the driver rejected our nvmlMemory_v2_t */

	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*sys_driver_version)(char *, unsigned int);
	nvml_ret (*sys_nvml_version)(char *, unsigned int);
	nvml_ret (*sys_cuda_version)(int *);
	nvml_ret (*get_count)(unsigned int *);
	nvml_ret (*get_handle)(unsigned int, nvml_dev *);
	fn_str name, uuid;
	nvml_ret (*pci_v3)(nvml_dev, nvml_pci_info *);
	nvml_ret (*nvlink_state)(nvml_dev, unsigned int, int *);
	nvml_ret (*nvlink_remote)(nvml_dev, unsigned int, nvml_pci_info *);
	nvml_ret (*pci_v1)(nvml_dev, nvml_pci_info_v1 *);
	nvml_ret (*cc)(nvml_dev, int *, int *);
	fn_u arch;
	nvml_ret (*mem_v1)(nvml_dev, nvml_memory *);
	nvml_ret (*mem_v2)(nvml_dev, nvml_memory_v2 *);
	nvml_ret (*util)(nvml_dev, nvml_utilization *);
	fn_int_u temp, temp_threshold, clock, max_clock;
	fn_u fan, power, power_limit, power_default, pcie_gen, pcie_width, pcie_gen_max,
		pcie_width_max, persistence, compute_mode, retired_pending;
	fn_ull reasons;
	fn_uu mig_mode, ecc_mode;
	fn_u max_mig;
	nvml_ret (*mig_handle)(nvml_dev, unsigned int, nvml_dev *);
	fn_u gi_id, ci_id;
	nvml_ret (*ecc_total)(nvml_dev, int, int, unsigned long long *);
	nvml_ret (*retired)(nvml_dev, int, unsigned int *, unsigned long long *);
	nvml_ret (*remapped)(nvml_dev, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
	fn_procs compute[3], graphics[3]; /* v3, v2, v1 */
	fn_uu enc_util, dec_util;
	fn_int_u pcie_tput;
	fn_ull energy;
	nvml_ret (*pstate)(nvml_dev, int *);
	nvml_ret (*proc_util)(nvml_dev, nvml_proc_util *, unsigned int *, unsigned long long);
	nvml_proc_util *utilbuf;
	size_t utilbuf_n;
};

/* The first of the names the library exports, or NULL. */
static void *sym(void *lib, const char *a, const char *b, const char *c)
{
	void *p = dlsym(lib, a);
	if (!p && b)
		p = dlsym(lib, b);
	if (!p && c)
		p = dlsym(lib, c);
	return p;
}

hw_status nvml_status(int ret)
{
	switch (ret) {
	case NVML_OK: return HW_OK;
	case NVML_NOT_SUPPORTED: return HW_NOT_SUPPORTED;
	case NVML_NO_PERMISSION: return HW_NO_PERMISSION;
	case NVML_GPU_IS_LOST: return HW_GPU_LOST;
	case NVML_FUNCTION_NOT_FOUND: return HW_NO_SYMBOL;
	default: return HW_FAILED;
	}
}

const char *nvml_errstr(const nvml *n, int ret)
{
	const char *s = n && n->error_string ? n->error_string(ret) : NULL;
	return s ? s : "unknown NVML error";
}

static void setv(hw_val *v, nvml_ret r, int64_t x)
{
	v->v = r == NVML_OK ? x : 0;
	v->st = nvml_status(r);
	v->nvml_ret = r;
}

static void nosym(hw_val *v)
{
	v->v = 0;
	v->st = HW_NO_SYMBOL;
	v->nvml_ret = NVML_FUNCTION_NOT_FOUND;
}

static void resolve(nvml *n)
{
	void *l = n->lib;
	/* Versioned names first: the unversioned ones keep old semantics
	 * (go-nvml pkg/nvml/lib.go updateVersionedSymbols). */
	*(void **)&n->init = sym(l, "nvmlInit_v2", "nvmlInit", NULL);
	*(void **)&n->shutdown = sym(l, "nvmlShutdown", NULL, NULL);
	*(void **)&n->error_string = sym(l, "nvmlErrorString", NULL, NULL);
	*(void **)&n->sys_driver_version = sym(l, "nvmlSystemGetDriverVersion", NULL, NULL);
	*(void **)&n->sys_nvml_version = sym(l, "nvmlSystemGetNVMLVersion", NULL, NULL);
	*(void **)&n->sys_cuda_version =
		sym(l, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion", NULL);
	*(void **)&n->get_count = sym(l, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL);
	*(void **)&n->get_handle =
		sym(l, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL);
	*(void **)&n->name = sym(l, "nvmlDeviceGetName", NULL, NULL);
	*(void **)&n->uuid = sym(l, "nvmlDeviceGetUUID", NULL, NULL);
	*(void **)&n->pci_v3 = sym(l, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", NULL);
	*(void **)&n->pci_v1 = sym(l, "nvmlDeviceGetPciInfo", NULL, NULL);
	*(void **)&n->nvlink_state = sym(l, "nvmlDeviceGetNvLinkState", NULL, NULL);
	*(void **)&n->nvlink_remote = sym(l, "nvmlDeviceGetNvLinkRemotePciInfo_v2", NULL, NULL);
	*(void **)&n->cc = sym(l, "nvmlDeviceGetCudaComputeCapability", NULL, NULL);
	*(void **)&n->arch = sym(l, "nvmlDeviceGetArchitecture", NULL, NULL);
	*(void **)&n->mem_v1 = sym(l, "nvmlDeviceGetMemoryInfo", NULL, NULL);
	*(void **)&n->mem_v2 = sym(l, "nvmlDeviceGetMemoryInfo_v2", NULL, NULL);
	*(void **)&n->util = sym(l, "nvmlDeviceGetUtilizationRates", NULL, NULL);
	*(void **)&n->temp = sym(l, "nvmlDeviceGetTemperature", NULL, NULL);
	*(void **)&n->temp_threshold = sym(l, "nvmlDeviceGetTemperatureThreshold", NULL, NULL);
	*(void **)&n->clock = sym(l, "nvmlDeviceGetClockInfo", NULL, NULL);
	*(void **)&n->max_clock = sym(l, "nvmlDeviceGetMaxClockInfo", NULL, NULL);
	*(void **)&n->fan = sym(l, "nvmlDeviceGetFanSpeed", NULL, NULL);
	*(void **)&n->power = sym(l, "nvmlDeviceGetPowerUsage", NULL, NULL);
	*(void **)&n->power_limit = sym(l, "nvmlDeviceGetEnforcedPowerLimit", NULL, NULL);
	*(void **)&n->power_default = sym(l, "nvmlDeviceGetPowerManagementDefaultLimit", NULL, NULL);
	*(void **)&n->pcie_gen = sym(l, "nvmlDeviceGetCurrPcieLinkGeneration", NULL, NULL);
	*(void **)&n->pcie_width = sym(l, "nvmlDeviceGetCurrPcieLinkWidth", NULL, NULL);
	*(void **)&n->pcie_gen_max = sym(l, "nvmlDeviceGetMaxPcieLinkGeneration", NULL, NULL);
	*(void **)&n->pcie_width_max = sym(l, "nvmlDeviceGetMaxPcieLinkWidth", NULL, NULL);
	*(void **)&n->persistence = sym(l, "nvmlDeviceGetPersistenceMode", NULL, NULL);
	*(void **)&n->compute_mode = sym(l, "nvmlDeviceGetComputeMode", NULL, NULL);
	/* ThrottleReasons is deprecated in favour of ClocksEventReasons (R535) */
	*(void **)&n->reasons = sym(l, "nvmlDeviceGetCurrentClocksEventReasons",
				    "nvmlDeviceGetCurrentClocksThrottleReasons", NULL);
	*(void **)&n->mig_mode = sym(l, "nvmlDeviceGetMigMode", NULL, NULL);
	*(void **)&n->max_mig = sym(l, "nvmlDeviceGetMaxMigDeviceCount", NULL, NULL);
	*(void **)&n->mig_handle = sym(l, "nvmlDeviceGetMigDeviceHandleByIndex", NULL, NULL);
	*(void **)&n->gi_id = sym(l, "nvmlDeviceGetGpuInstanceId", NULL, NULL);
	*(void **)&n->ci_id = sym(l, "nvmlDeviceGetComputeInstanceId", NULL, NULL);
	*(void **)&n->ecc_mode = sym(l, "nvmlDeviceGetEccMode", NULL, NULL);
	*(void **)&n->ecc_total = sym(l, "nvmlDeviceGetTotalEccErrors", NULL, NULL);
	*(void **)&n->retired = sym(l, "nvmlDeviceGetRetiredPages", NULL, NULL);
	*(void **)&n->retired_pending = sym(l, "nvmlDeviceGetRetiredPagesPendingStatus", NULL, NULL);
	*(void **)&n->remapped = sym(l, "nvmlDeviceGetRemappedRows", NULL, NULL);
	*(void **)&n->enc_util = sym(l, "nvmlDeviceGetEncoderUtilization", NULL, NULL);
	*(void **)&n->dec_util = sym(l, "nvmlDeviceGetDecoderUtilization", NULL, NULL);
	*(void **)&n->pcie_tput = sym(l, "nvmlDeviceGetPcieThroughput", NULL, NULL);
	*(void **)&n->energy = sym(l, "nvmlDeviceGetTotalEnergyConsumption", NULL, NULL);
	*(void **)&n->pstate = sym(l, "nvmlDeviceGetPerformanceState", NULL, NULL);
	*(void **)&n->proc_util = sym(l, "nvmlDeviceGetProcessUtilization", NULL, NULL);
	static const char *const cnames[3] = {"nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses"};
	static const char *const gnames[3] = {"nvmlDeviceGetGraphicsRunningProcesses_v3",
		"nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses"};
	for (int i = 0; i < 3; i++) {
		*(void **)&n->compute[i] = dlsym(l, cnames[i]);
		*(void **)&n->graphics[i] = dlsym(l, gnames[i]);
	}
}

nvml *nvml_load(char *path, size_t pathn, char *why, size_t whyn, char *note, size_t noten)
{
	const char *env = getenv("GPUWISE_NVML_LIB");
	/* The driver installs libnvidia-ml.so.1; the bare .so may be the CUDA
	 * toolkit's link-time stub (Syllo/nvtop issue 291), so it comes last. */
	const char *names[2] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
	size_t n_names = 2;
	if (env && *env) {
		names[0] = env;
		n_names = 1;
	}
	why[0] = note[0] = path[0] = '\0';
	if (env && strcmp(env, "none") == 0) {
		snprintf(why, whyn, N_("NVML not loaded (GPUWISE_NVML_LIB=none)"));
		return NULL;
	}
	for (size_t i = 0; i < n_names; i++) {
		dlerror();
		void *lib = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
		if (!lib) {
			if (!why[0] || env) {
				const char *e = dlerror();
				snprintf(why, whyn, N_("cannot load '%s': %s"), names[i], e ? e : N_("not found"));
			}
			continue;
		}
		Dl_info info;
		void *probe = sym(lib, "nvmlInit_v2", "nvmlInit", "nvmlShutdown");
		const char *file = probe && dladdr(probe, &info) && info.dli_fname ? info.dli_fname : names[i];
		if (strstr(file, "/stubs/")) {
			snprintf(note, noten, N_("skipped '%s': the CUDA toolkit's link-time stub, not the driver's library"),
				 file);
			snprintf(why, whyn, N_("no NVML library of the driver found ('%s' is the toolkit's stub)"), file);
			dlclose(lib);
			continue;
		}
		if (!probe) {
			snprintf(why, whyn, N_("'%s' is not an NVML library (no nvmlInit)"), file);
			dlclose(lib);
			continue;
		}
		nvml *n = xcalloc(1, sizeof *n);
		n->lib = lib;
		snprintf(path, pathn, "%s", file);
		resolve(n);
		why[0] = '\0';
		return n;
	}
	if (!why[0])
		snprintf(why, whyn, N_("libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"));
	return NULL;
}

int nvml_start(nvml *n, hw_snapshot *s, char *why, size_t whyn)
{
	if (!n->init || !n->get_count || !n->get_handle) {
		snprintf(why, whyn, N_("the NVML library lacks nvmlInit or nvmlDeviceGetCount"));
		return -1;
	}
	nvml_ret r = n->init();
	if (r != NVML_OK) {
		snprintf(why, whyn, N_("cannot initialise NVML: %s (NVML error %d)"), nvml_errstr(n, r), r);
		return -1;
	}
	n->started = true;
	if (n->sys_driver_version)
		n->sys_driver_version(s->driver_version, sizeof s->driver_version);
	if (n->sys_nvml_version)
		n->sys_nvml_version(s->nvml_version, sizeof s->nvml_version);
	/* Drivers 535.43 to 535.86 changed the v3 process struct (an extra
	 * usedGpuCcProtectedMemory field), 535.98 rolled it back (gpustat
	 * test_gpustat.py NvidiaDriverMock notes; wookayin/gpustat issue 161):
	 * read _v2 there, whose layout did not change. */
	unsigned int major = 0, minor = 0;
	if (sscanf(s->driver_version, "%u.%u", &major, &minor) == 2 && major == 535 && minor >= 43 &&
	    minor <= 86 && n->compute[1]) {
		n->compute[0] = n->graphics[0] = NULL;
		snprintf(s->nvml_note, sizeof s->nvml_note,
			 N_("driver %s: its _v3 process lists use a changed layout, read _v2 instead "
			    "(535.104.05 or newer fixes it)"), s->driver_version);
	}
	if (n->sys_cuda_version) {
		int v = 0;
		r = n->sys_cuda_version(&v);
		setv(&s->cuda_driver_version, r, v);
	} else {
		nosym(&s->cuda_driver_version);
	}
	unsigned int c = 0;
	r = n->get_count(&c);
	if (r != NVML_OK) {
		snprintf(why, whyn, N_("cannot count the GPUs: %s (NVML error %d)"), nvml_errstr(n, r), r);
		return -1;
	}
	n->count = c;
	n->devs = xcalloc(c ? c : 1, sizeof *n->devs);
	return 0;
}

unsigned nvml_count(const nvml *n)
{
	return n && n->started ? n->count : 0;
}

/* Call a one-unsigned getter into v (or mark the symbol missing). */
static void get_u(fn_u f, nvml_dev d, hw_val *v)
{
	unsigned int x = 0;
	if (!f) {
		nosym(v);
		return;
	}
	nvml_ret r_ = f(d, &x);
	setv(v, r_, x);
}

static void get_int_u(fn_int_u f, nvml_dev d, int arg, hw_val *v)
{
	unsigned int x = 0;
	if (!f) {
		nosym(v);
		return;
	}
	nvml_ret r_ = f(d, arg, &x);
	setv(v, r_, x);
}

static void set_error(hw_gpu *g, nvml *n, nvml_ret r)
{
	if (!g->error[0])
		snprintf(g->error, sizeof g->error, "%s", nvml_errstr(n, r));
}

void nvml_static(nvml *n, unsigned i, hw_gpu *g)
{
	g->nvml_index = (int)i;
	g->vendor = HW_VENDOR_NVIDIA;
	g->pci_vendor_id = 0x10de;
	nvml_dev d = NULL;
	nvml_ret r = n->get_handle(i, &d);
	if (r != NVML_OK) {
		n->devs[i] = NULL;
		set_error(g, n, r);
		return;
	}
	n->devs[i] = d;
	if (n->name && (r = n->name(d, g->name, sizeof g->name)) != NVML_OK) {
		g->name[0] = '\0';
		if (r == NVML_GPU_IS_LOST)
			set_error(g, n, r);
	}
	if (n->uuid && n->uuid(d, g->uuid, sizeof g->uuid) != NVML_OK)
		g->uuid[0] = '\0';
	nvml_pci_info p;
	memset(&p, 0, sizeof p);
	if (n->pci_v3 && n->pci_v3(d, &p) == NVML_OK) {
		hw_pci_norm(p.bus_id, g->pci_bus_id, sizeof g->pci_bus_id);
	} else if (n->pci_v1) {
		nvml_pci_info_v1 p1;
		memset(&p1, 0, sizeof p1);
		if (n->pci_v1(d, &p1) == NVML_OK) {
			hw_pci_norm(p1.bus_id, g->pci_bus_id, sizeof g->pci_bus_id);
			p.pci_device_id = p1.pci_device_id;
			p.pci_subsys_id = p1.pci_subsys_id;
		}
	}
	/* NVLink topology (static): the remote end of each active link;
	 * NVML_NVLINK_MAX_LINKS is 18 (nvml.h) */
	for (unsigned link = 0; n->nvlink_state && n->nvlink_remote && link < 18; link++) {
		int active = 0;
		nvml_pci_info rp;
		r = n->nvlink_state(d, link, &active);
		if (r == NVML_NOT_SUPPORTED || r == NVML_INVALID_ARGUMENT)
			break; /* no NVLink, or past the device's links */
		if (r != NVML_OK || active != 1)
			continue;
		memset(&rp, 0, sizeof rp);
		if (n->nvlink_remote(d, link, &rp) == NVML_OK && g->n_nvlinks < 18)
			hw_pci_norm(rp.bus_id, g->nvlink_peer[g->n_nvlinks++], sizeof g->nvlink_peer[0]);
	}
	/* pciDeviceId is device << 16 | vendor */
	if (p.pci_device_id) {
		g->pci_device_id = p.pci_device_id >> 16;
		g->pci_vendor_id = p.pci_device_id & 0xffff;
	}
	g->pci_subsys_id = p.pci_subsys_id;
	if (n->cc) {
		int a = 0, b = 0;
		r = n->cc(d, &a, &b);
		setv(&g->cc_major, r, a);
		setv(&g->cc_minor, r, b);
	} else {
		nosym(&g->cc_major);
		nosym(&g->cc_minor);
	}
	hw_val arch = {0, HW_UNQUERIED, 0};
	get_u(n->arch, d, &arch);
	/* nvmlDeviceArchitecture_t values (nvml.h) */
	static const char *const arch_names[] = {
		[2] = "Kepler", [3] = "Maxwell", [4] = "Pascal", [5] = "Volta", [6] = "Turing",
		[7] = "Ampere", [8] = "Ada Lovelace", [9] = "Hopper", [10] = "Blackwell"};
	if (HW_VALID(arch) && arch.v >= 0 && arch.v < (int64_t)(sizeof arch_names / sizeof arch_names[0]) &&
	    arch_names[arch.v])
		snprintf(g->arch, sizeof g->arch, "%s", arch_names[arch.v]);
	get_int_u(n->temp_threshold, d, THRESH_SLOWDOWN, &g->temp_slowdown_c);
	get_int_u(n->temp_threshold, d, THRESH_SHUTDOWN, &g->temp_shutdown_c);
	get_u(n->power_default, d, &g->power_default_limit_mw);
	get_int_u(n->max_clock, d, CLOCK_SM, &g->clock_sm_max_mhz);
	get_int_u(n->max_clock, d, CLOCK_MEM, &g->clock_mem_max_mhz);
	get_u(n->pcie_gen_max, d, &g->pcie_gen_max);
	get_u(n->pcie_width_max, d, &g->pcie_width_max);
}

/* Memory of a GPU or MIG device: v2 (reserved apart) or v1. */
static void memory(nvml *n, nvml_dev d, hw_val *total, hw_val *used, hw_val *freev, hw_val *reserved)
{
	nvml_ret r;
	if (n->mem_v2 && !n->mem_v2_broken) {
		nvml_memory_v2 m;
		memset(&m, 0, sizeof m);
		m.version = NVML_MEMORY_V2_VERSION;
		r = n->mem_v2(d, &m);
		if (r != NVML_ARGUMENT_VERSION_MISMATCH && r != NVML_FUNCTION_NOT_FOUND) {
			setv(total, r, (int64_t)m.total);
			setv(used, r, (int64_t)m.used);
			setv(freev, r, (int64_t)m.free);
			if (reserved)
				setv(reserved, r, (int64_t)m.reserved);
			return;
		}
		n->mem_v2_broken = true;
	}
	if (!n->mem_v1) {
		nosym(total);
		nosym(used);
		nosym(freev);
		return;
	}
	nvml_memory m;
	memset(&m, 0, sizeof m);
	r = n->mem_v1(d, &m);
	setv(total, r, (int64_t)m.total);
	setv(used, r, (int64_t)m.used);
	setv(freev, r, (int64_t)m.free);
	if (reserved)
		nosym(reserved);
}

/* Processes of one kind (v3, v2, v1 as available) merged into g->procs. */
static nvml_ret list_procs(nvml *n, nvml_dev d, fn_procs *fns, bool graphics, hw_gpu *g, size_t *cap)
{
	nvml_ret r = NVML_FUNCTION_NOT_FOUND;
	for (int v = 0; v < 3; v++) {
		if (!fns[v])
			continue;
		size_t elem = v < 2 ? sizeof(nvml_proc_v2) : sizeof(nvml_proc_v1);
		unsigned int count = 0;
		for (int tries = 0; tries < 6; tries++) {
			count = (unsigned int)(n->procbuf_cap / elem);
			r = fns[v](d, &count, n->procbuf);
			if (r != NVML_INSUFFICIENT_SIZE)
				break;
			/* processes may start between the calls: leave room */
			size_t want = ((size_t)count + 16) * sizeof(nvml_proc_v2);
			if (want > n->procbuf_cap) {
				n->procbuf = xrealloc(n->procbuf, want);
				n->procbuf_cap = want;
			}
		}
		if (r != NVML_OK)
			return r;
		for (unsigned int k = 0; k < count; k++) {
			uint32_t pid, gi = UINT32_MAX, ci = UINT32_MAX;
			unsigned long long used;
			if (v < 2) {
				nvml_proc_v2 *p = (nvml_proc_v2 *)n->procbuf + k;
				pid = p->pid;
				used = p->used;
				gi = p->gpu_instance;
				ci = p->compute_instance;
			} else {
				nvml_proc_v1 *p = (nvml_proc_v1 *)n->procbuf + k;
				pid = p->pid;
				used = p->used;
			}
			hw_proc *hp = NULL;
			for (size_t j = 0; j < g->n_procs; j++)
				if (g->procs[j].pid == pid && g->procs[j].gpu_instance == gi)
					hp = &g->procs[j];
			if (!hp) {
				g->procs = xgrow(g->procs, cap, g->n_procs + 1, sizeof *g->procs);
				hp = &g->procs[g->n_procs++];
				memset(hp, 0, sizeof *hp);
				hp->pid = pid;
				hp->sm_util_pct = hp->mem_util_pct = hp->enc_util_pct = hp->dec_util_pct =
					(hw_val){0, HW_UNQUERIED, 0};
				hp->gpu_instance = gi;
				hp->compute_instance = ci;
				if (used == NVML_VALUE_NOT_AVAILABLE)
					hp->used_mem_bytes = (hw_val){0, HW_NOT_SUPPORTED, NVML_NOT_SUPPORTED};
				else
					hp->used_mem_bytes = (hw_val){(int64_t)used, HW_OK, 0};
			}
			if (graphics)
				hp->graphics = true;
			else
				hp->compute = true;
		}
		return NVML_OK;
	}
	return r;
}

static void migs(nvml *n, nvml_dev d, hw_gpu *g)
{
	unsigned int max = 0;
	if (!n->max_mig || !n->mig_handle || n->max_mig(d, &max) != NVML_OK)
		return;
	size_t cap = 0;
	for (unsigned int i = 0; i < max && i < 64; i++) {
		nvml_dev m = NULL;
		if (n->mig_handle(d, i, &m) != NVML_OK)
			continue;
		g->migs = xgrow(g->migs, &cap, g->n_migs + 1, sizeof *g->migs);
		hw_mig *x = &g->migs[g->n_migs++];
		memset(x, 0, sizeof *x);
		if (n->uuid && n->uuid(m, x->uuid, sizeof x->uuid) != NVML_OK)
			x->uuid[0] = '\0';
		if (n->name && n->name(m, x->name, sizeof x->name) != NVML_OK)
			x->name[0] = '\0';
		/* the profile is the name's last word ("... MIG 3g.40gb") */
		const char *mig = strstr(x->name, "MIG ");
		if (mig)
			snprintf(x->profile, sizeof x->profile, "%s", mig + 4);
		unsigned int id = UINT32_MAX;
		x->gpu_instance = n->gi_id && n->gi_id(m, &id) == NVML_OK ? id : UINT32_MAX;
		id = UINT32_MAX;
		x->compute_instance = n->ci_id && n->ci_id(m, &id) == NVML_OK ? id : UINT32_MAX;
		hw_val freev;
		memory(n, m, &x->mem_total_bytes, &x->mem_used_bytes, &freev, NULL);
		x->sm_count = (hw_val){0, HW_UNQUERIED, 0};
	}
}

/* Encoder/decoder utilisation, PCIe throughput, energy and P-state. */
static void video_pcie_energy(nvml *n, nvml_dev d, hw_gpu *g, bool pcie)
{
	fn_uu fns[2] = {n->enc_util, n->dec_util};
	hw_val *out[2] = {&g->enc_util_pct, &g->dec_util_pct};
	for (int k = 0; k < 2; k++) {
		unsigned int u = 0, period_us = 0;
		if (!fns[k]) {
			nosym(out[k]);
			continue;
		}
		nvml_ret r = fns[k](d, &u, &period_us);
		setv(out[k], r, u);
	}
	/* nvmlPcieUtilCounter_t: NVML_PCIE_UTIL_TX_BYTES 0, RX_BYTES 1 */
	if (pcie) {
		get_int_u(n->pcie_tput, d, 0, &g->pcie_tx_kbytes_per_s);
		get_int_u(n->pcie_tput, d, 1, &g->pcie_rx_kbytes_per_s);
	}
	if (n->energy) {
		unsigned long long mj = 0;
		nvml_ret r = n->energy(d, &mj);
		setv(&g->energy_mj, r, (int64_t)mj);
	} else {
		nosym(&g->energy_mj);
	}
	if (n->pstate) {
		int p = 32;
		nvml_ret r = n->pstate(d, &p);
		/* NVML_PSTATE_UNKNOWN is 32 */
		if (r == NVML_OK && (p < 0 || p > 15))
			r = NVML_NOT_SUPPORTED;
		setv(&g->pstate, r, p);
	} else {
		nosym(&g->pstate);
	}
}

/*
 * Per-process SM, memory, encoder and decoder utilisation: the newest
 * sample of each listed PID among those the driver keeps (last seen 0 asks
 * for all of them).  NOT_FOUND means no process had a sample: they stay
 * unknown rather than 0.  Values over 100 are dropped (nvtop notes bogus
 * samples from some drivers).
 */
static void proc_utilization(nvml *n, nvml_dev d, hw_gpu *g)
{
	if (!g->n_procs)
		return;
	nvml_ret r = NVML_FUNCTION_NOT_FOUND;
	unsigned int count = 0;
	if (n->proc_util) {
		for (int tries = 0; tries < 4; tries++) {
			count = (unsigned int)n->utilbuf_n;
			r = n->proc_util(d, n->utilbuf_n ? n->utilbuf : NULL, &count, 0);
			if (r != NVML_INSUFFICIENT_SIZE)
				break;
			n->utilbuf_n = (size_t)count + 16;
			n->utilbuf = xrealloc(n->utilbuf, n->utilbuf_n * sizeof *n->utilbuf);
		}
	}
	for (size_t k = 0; k < g->n_procs; k++) {
		hw_proc *p = &g->procs[k];
		unsigned long long best = 0;
		bool found = false;
		for (unsigned int j = 0; r == NVML_OK && j < count && j < n->utilbuf_n; j++) {
			const nvml_proc_util *s = &n->utilbuf[j];
			if (s->pid != p->pid || (found && s->time_us < best) || s->sm > 100 || s->mem > 100)
				continue;
			found = true;
			best = s->time_us;
			p->sm_util_pct = (hw_val){s->sm, HW_OK, 0};
			p->mem_util_pct = (hw_val){s->mem, HW_OK, 0};
			p->enc_util_pct = (hw_val){s->enc, HW_OK, 0};
			p->dec_util_pct = (hw_val){s->dec, HW_OK, 0};
		}
		if (!found) {
			hw_val why = {0, r == NVML_OK || r == NVML_NOT_FOUND ? HW_NOT_SUPPORTED : nvml_status(r),
				      r == NVML_OK ? NVML_NOT_FOUND : r};
			if (r == NVML_FUNCTION_NOT_FOUND)
				why.st = HW_NO_SYMBOL;
			p->sm_util_pct = p->mem_util_pct = p->enc_util_pct = p->dec_util_pct = why;
		}
	}
}

void nvml_dynamic(nvml *n, unsigned i, hw_gpu *g, bool procs, bool pcie)
{
	if (i >= n->count || !n->devs[i])
		return;
	nvml_dev d = n->devs[i];
	memory(n, d, &g->mem_total_bytes, &g->mem_used_bytes, &g->mem_free_bytes, &g->mem_reserved_bytes);
	if (n->util) {
		nvml_utilization u = {0, 0};
		nvml_ret r = n->util(d, &u);
		setv(&g->util_gpu_pct, r, u.gpu);
		setv(&g->util_mem_pct, r, u.memory);
	} else {
		nosym(&g->util_gpu_pct);
		nosym(&g->util_mem_pct);
	}
	get_int_u(n->temp, d, 0 /* NVML_TEMPERATURE_GPU */, &g->temp_c);
	get_u(n->fan, d, &g->fan_pct);
	get_u(n->power, d, &g->power_mw);
	get_u(n->power_limit, d, &g->power_limit_mw);
	get_int_u(n->clock, d, CLOCK_SM, &g->clock_sm_mhz);
	get_int_u(n->clock, d, CLOCK_MEM, &g->clock_mem_mhz);
	if (n->reasons) {
		unsigned long long x = 0;
		nvml_ret r_ = n->reasons(d, &x);
		setv(&g->throttle_reasons, r_, (int64_t)x);
	} else {
		nosym(&g->throttle_reasons);
	}
	get_u(n->pcie_gen, d, &g->pcie_gen);
	get_u(n->pcie_width, d, &g->pcie_width);
	get_u(n->persistence, d, &g->persistence_mode);
	get_u(n->compute_mode, d, &g->compute_mode);
	if (n->mig_mode) {
		unsigned int cur = 0, pend = 0;
		nvml_ret r_ = n->mig_mode(d, &cur, &pend);
		setv(&g->mig_mode, r_, cur);
	} else {
		nosym(&g->mig_mode);
	}
	if (n->ecc_mode) {
		unsigned int cur = 0, pend = 0;
		nvml_ret r_ = n->ecc_mode(d, &cur, &pend);
		setv(&g->ecc_mode, r_, cur);
	} else {
		nosym(&g->ecc_mode);
	}
	if (n->ecc_total && HW_VALID(g->ecc_mode) && g->ecc_mode.v) {
		unsigned long long c = 0, u = 0;
		nvml_ret r_ = n->ecc_total(d, ECC_CORRECTED, ECC_VOLATILE, &c);
		setv(&g->ecc_corrected, r_, (int64_t)c);
		r_ = n->ecc_total(d, ECC_UNCORRECTED, ECC_VOLATILE, &u);
		setv(&g->ecc_uncorrected, r_, (int64_t)u);
	} else if (!n->ecc_total) {
		nosym(&g->ecc_corrected);
		nosym(&g->ecc_uncorrected);
	} else {
		g->ecc_corrected = g->ecc_uncorrected = g->ecc_mode.st == HW_OK
			? (hw_val){0, HW_NOT_SUPPORTED, NVML_NOT_SUPPORTED} : g->ecc_mode;
	}
	if (n->retired) {
		/* a zero-sized query returns the count (INSUFFICIENT_SIZE when > 0) */
		unsigned int c = 0;
		nvml_ret r = n->retired(d, RETIRE_SBE, &c, NULL);
		setv(&g->retired_sbe, r == NVML_INSUFFICIENT_SIZE ? NVML_OK : r, c);
		c = 0;
		r = n->retired(d, RETIRE_DBE, &c, NULL);
		setv(&g->retired_dbe, r == NVML_INSUFFICIENT_SIZE ? NVML_OK : r, c);
	} else {
		nosym(&g->retired_sbe);
		nosym(&g->retired_dbe);
	}
	get_u(n->retired_pending, d, &g->retired_pending);
	if (n->remapped) {
		unsigned int c = 0, u = 0, p = 0, f = 0;
		nvml_ret r = n->remapped(d, &c, &u, &p, &f);
		setv(&g->remap_correctable, r, c);
		setv(&g->remap_uncorrectable, r, u);
		setv(&g->remap_pending, r, p);
		setv(&g->remap_failure, r, f);
	} else {
		nosym(&g->remap_correctable);
		nosym(&g->remap_uncorrectable);
		nosym(&g->remap_pending);
		nosym(&g->remap_failure);
	}
	video_pcie_energy(n, d, g, pcie);
	if (HW_VALID(g->mig_mode) && g->mig_mode.v == 1)
		migs(n, d, g);
	if (procs) {
		size_t cap = 0;
		nvml_ret rc = list_procs(n, d, n->compute, false, g, &cap);
		nvml_ret rg = list_procs(n, d, n->graphics, true, g, &cap);
		/* either failure counts; a library without graphics lists does not */
		nvml_ret r = rc != NVML_OK ? rc : rg == NVML_FUNCTION_NOT_FOUND ? NVML_OK : rg;
		setv(&g->procs_listed, r, 1);
		if (!(HW_VALID(g->mig_mode) && g->mig_mode.v == 1))
			proc_utilization(n, d, g);
	}
	/* one lost GPU: say so once, the other GPUs carry on */
	const hw_val *vals[] = {&g->mem_total_bytes, &g->temp_c, &g->power_mw, &g->util_gpu_pct};
	for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++)
		if (vals[k]->st == HW_GPU_LOST || vals[k]->st == HW_FAILED) {
			set_error(g, n, vals[k]->nvml_ret);
			break;
		}
}

void nvml_close(nvml *n)
{
	if (!n)
		return;
	if (n->started && n->shutdown)
		n->shutdown();
	free(n->devs);
	free(n->procbuf);
	free(n->utilbuf);
	dlclose(n->lib);
	free(n);
}

/*
 * nvml_body.h: the fake NVML, included by libnvidia-ml.c (a current driver)
 * and libnvidia-ml-old.c (FAKE_OLD_DRIVER: an old driver whose library
 * lacks the versioned and newer symbols, so dlsym really fails for them).
 *
 * Types and values follow NVML's nvml.h as published in NVIDIA/go-nvml
 * (gen/nvml/nvml.h); declared here independently of src/hw so the two
 * sides check each other.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "scenario.h"

#define API __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct fdev *nvmlDevice_t;

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
typedef struct {
	char busId[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	unsigned int reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_v1_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long bar1Total, bar1Free, bar1Used; } nvmlBAR1Memory_t;
typedef struct {
	unsigned int pid;
	unsigned long long timeStamp;   /* CPU timestamp in microseconds */
	unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
typedef struct {
	unsigned int version;
	int sensorType;
	int temperature;
} nvmlTemperature_v1_t;
typedef struct {
	unsigned int fieldId, scopeId;
	long long timestamp, latencyUsec;
	int valueType;
	int nvmlReturn;
	union { double d; unsigned int ui; unsigned long ul; unsigned long long ull; long long sll; int si; } value;
} nvmlFieldValue_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t ABI");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t ABI");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t ABI");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_v2_t ABI");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t ABI");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t ABI");

enum {
	R_OK = 0, R_UNINIT = 1, R_INVAL = 2, R_NOTSUP = 3, R_INSUFFICIENT = 7, R_NOT_FOUND = 6,
	R_VERSION = 25, R_UNKNOWN = 999,
};
#define NVML_VALUE_NOT_AVAILABLE ULLONG_MAX

struct fdev {
	int idx;          /* GPU index */
	int mig;          /* -1 for the GPU itself */
	json_t *gpu, *obj;
};

static struct fdev *devs;      /* n GPUs, then their MIG devices */
static size_t n_devs;
static int init_count;

__attribute__((destructor)) static void free_devs(void)
{
	free(devs);
	devs = NULL;
}

static void build_devs(void)
{
	if (devs)
		return;
	size_t n = sc_gpu_count(), total = n;
	for (size_t i = 0; i < n; i++)
		total += json_array_size(json_object_get(sc_gpu(i), "migs"));
	devs = calloc(total ? total : 1, sizeof *devs);
	size_t k = n;
	for (size_t i = 0; i < n; i++) {
		devs[i] = (struct fdev){(int)i, -1, sc_gpu(i), sc_gpu(i)};
		json_t *migs = json_object_get(sc_gpu(i), "migs");
		for (size_t j = 0; j < json_array_size(migs); j++)
			devs[k++] = (struct fdev){(int)i, (int)j, sc_gpu(i), json_array_get(migs, j)};
	}
	n_devs = total;
}

static bool valid_dev(struct fdev *d)
{
	return d && devs && d >= devs && d < devs + n_devs;
}

/* Log the call and decide its fate: 0 to go on, else the code to return. */
static int enter(const char *fn, struct fdev *d)
{
	if (d && valid_dev(d))
		sc_log(d->mig < 0 ? "%s %d" : "%s %d/mig%d", fn, d->idx, d->mig);
	else
		sc_log("%s", fn);
	if (init_count <= 0)
		return R_UNINIT;
	if (!valid_dev(d))
		return R_INVAL;
	int e = 0;
	if (d->mig >= 0)
		e = sc_error(d->obj, fn, "errors");
	if (!e)
		e = sc_error(d->gpu, fn, "errors");
	return e;
}

#define BEGIN(fn, d)                     \
	sc_lock();                       \
	int rc_ = enter(fn, d);          \
	if (rc_) {                       \
		sc_unlock();             \
		return rc_;              \
	}
#define END(rc) do { sc_unlock(); return (rc); } while (0)

/* An unsigned field of the GPU (MIG handles support only a few fields). */
static int field_u(struct fdev *d, const char *key, unsigned int *out)
{
	int64_t v;
	if (d->mig >= 0 || !sc_int(d->obj, key, &v))
		return R_NOTSUP;
	*out = (unsigned int)v;
	return R_OK;
}

/*
 * A GPU in MIG mode (or one of its MIG devices): the driver answers
 * NOT_SUPPORTED for device-wide utilisation, encoder/decoder and process
 * utilisation (NVML reference, nvmlDeviceGetUtilizationRates: "not
 * supported ... in MIG mode"; nvidia-smi shows N/A there).
 */
static bool mig_enabled(struct fdev *d)
{
	return d->mig >= 0 || sc_int_or(d->gpu, "mig_mode", 0) == 1;
}

static int simple_u(const char *fn, nvmlDevice_t dev, const char *key, unsigned int *out)
{
	BEGIN(fn, dev);
	if (!out)
		END(R_INVAL);
	END(field_u(dev, key, out));
}

/* ---- init and system ----------------------------------------------------- */

static int do_init(const char *fn)
{
	sc_lock();
	sc_log("%s", fn);
	int rc = R_OK;
	if (sc_load()) {
		rc = R_UNKNOWN;
		goto out;
	}
	rc = sc_error(sc_root(), fn, "errors");
	if (rc)
		goto out;
	build_devs();
	init_count++;
out:
	sc_unlock();
	return rc;
}

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlInit_v2(void) { return do_init("nvmlInit_v2"); }
/* flags: NVML_INIT_FLAG_NO_GPUS 1, NVML_INIT_FLAG_NO_ATTACH 2; pynvml
 * passes 0 */
API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	(void)flags;
	return do_init("nvmlInitWithFlags");
}
#endif
API nvmlReturn_t nvmlInit(void) { return do_init("nvmlInit"); }

API nvmlReturn_t nvmlShutdown(void)
{
	sc_lock();
	sc_log("nvmlShutdown");
	int rc = init_count > 0 ? (init_count--, R_OK) : R_UNINIT;
	sc_unlock();
	return rc;
}

/* Texts as the real library prints them (nvidia-smi messages). */
API const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case 0: return "Success";
	case 1: return "Uninitialized";
	case 2: return "Invalid Argument";
	case 3: return "Not Supported";
	case 4: return "Insufficient Permissions";
	case 5: return "Already Initialized";
	case 6: return "Not Found";
	case 7: return "Insufficient Size";
	case 9: return "Driver Not Loaded";
	case 12: return "NVML Shared Library Not Found";
	case 13: return "Function Not Found";
	case 14: return "Corrupted infoROM";
	case 15: return "GPU is lost";
	case 16: return "GPU requires restart";
	case 17: return "The operating system has blocked the request.";
	case 18: return "RM has detected an NVML/RM version mismatch.";
	case 25: return "Argument version mismatch";
	case 28: return "GPU not found";
	default: return "Unknown Error";
	}
}

static int sys_string(const char *fn, const char *key, char *buf, unsigned int len)
{
	sc_lock();
	sc_log("%s", fn);
	int rc = init_count <= 0 ? R_UNINIT : sc_error(sc_root(), fn, "errors");
	const char *s = rc ? NULL : sc_str(sc_root(), key);
	if (!rc && !s)
		rc = R_NOTSUP;
	if (!rc && (!buf || strlen(s) + 1 > len))
		rc = R_INSUFFICIENT;
	if (!rc)
		memcpy(buf, s, strlen(s) + 1);
	sc_unlock();
	return rc;
}

API nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n)
{
	return sys_string("nvmlSystemGetDriverVersion", "driver_version", v, n);
}

API nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int n)
{
	return sys_string("nvmlSystemGetNVMLVersion", "nvml_version", v, n);
}

static int cuda_version(const char *fn, int *v)
{
	sc_lock();
	sc_log("%s", fn);
	int rc = init_count <= 0 ? R_UNINIT : sc_error(sc_root(), fn, "errors");
	int64_t x;
	if (!rc && !v)
		rc = R_INVAL;
	if (!rc && !sc_int(sc_root(), "cuda_driver_version", &x))
		rc = R_NOTSUP;
	if (!rc)
		*v = (int)x;
	sc_unlock();
	return rc;
}

API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	return cuda_version("nvmlSystemGetCudaDriverVersion", v);
}
#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	return cuda_version("nvmlSystemGetCudaDriverVersion_v2", v);
}
#endif

static int get_count(const char *fn, unsigned int *n)
{
	sc_lock();
	sc_log("%s", fn);
	int rc = init_count <= 0 ? R_UNINIT : sc_error(sc_root(), fn, "errors");
	if (!rc && !n)
		rc = R_INVAL;
	if (!rc)
		*n = (unsigned int)sc_gpu_count();
	sc_unlock();
	return rc;
}

API nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return get_count("nvmlDeviceGetCount", n); }
#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { return get_count("nvmlDeviceGetCount_v2", n); }
#endif

static int get_handle(const char *fn, unsigned int i, nvmlDevice_t *d)
{
	sc_lock();
	sc_log("%s %u", fn, i);
	int rc = init_count <= 0 ? R_UNINIT : R_OK;
	if (!rc && (!d || i >= sc_gpu_count()))
		rc = R_INVAL;
	if (!rc)
		rc = sc_error(sc_gpu(i), fn, "errors");
	if (!rc)
		*d = &devs[i];
	sc_unlock();
	return rc;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d)
{
	return get_handle("nvmlDeviceGetHandleByIndex", i, d);
}
#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	return get_handle("nvmlDeviceGetHandleByIndex_v2", i, d);
}
#endif

/* ---- identity ------------------------------------------------------------- */

static int copy_str(const char *s, char *buf, unsigned int len)
{
	if (!s)
		return R_NOTSUP;
	if (!buf || strlen(s) + 1 > len)
		return R_INSUFFICIENT;
	memcpy(buf, s, strlen(s) + 1);
	return R_OK;
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int len)
{
	BEGIN("nvmlDeviceGetName", dev);
	const char *s = sc_str(dev->obj, "name");
	char buf[160];
	if (dev->mig >= 0 && !s) {
		snprintf(buf, sizeof buf, "%s MIG", sc_str(dev->gpu, "name"));
		s = buf;
	}
	END(copy_str(s, name, len));
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int len)
{
	BEGIN("nvmlDeviceGetUUID", dev);
	END(copy_str(sc_str(dev->obj, "uuid"), uuid, len));
}

static void parse_bus(const char *s, unsigned int *dom, unsigned int *bus, unsigned int *dv, unsigned int *fn)
{
	*dom = *bus = *dv = *fn = 0;
	if (sscanf(s, "%x:%x:%x.%x", dom, bus, dv, fn) != 4) {
		*dom = 0;
		sscanf(s, "%x:%x.%x", bus, dv, fn);
	}
}

static int pci_info(const char *fn, nvmlDevice_t dev, nvmlPciInfo_t *p)
{
	BEGIN(fn, dev);
	if (!p)
		END(R_INVAL);
	unsigned int dom, bus, dv, f;
	parse_bus(sc_str(dev->gpu, "pci_bus_id"), &dom, &bus, &dv, &f);
	memset(p, 0, sizeof *p);
	snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04x:%02x:%02x.%x", dom, bus, dv, f);
	snprintf(p->busId, sizeof p->busId, "%08X:%02X:%02X.%X", dom, bus, dv, f);
	p->domain = dom;
	p->bus = bus;
	p->device = dv;
	p->pciDeviceId = (unsigned int)sc_int_or(dev->gpu, "pci_device_id", 0);
	p->pciSubSystemId = (unsigned int)sc_int_or(dev->gpu, "pci_subsys_id", 0);
	END(R_OK);
}

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *p)
{
	return pci_info("nvmlDeviceGetPciInfo_v3", dev, p);
}
API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t dev, nvmlPciInfo_t *p)
{
	return pci_info("nvmlDeviceGetPciInfo_v2", dev, p);
}
#endif

/* ---- NVLink: "nvlinks" lists each active link's remote PCI bus id (a GPU or an NVSwitch) */
#ifndef FAKE_OLD_DRIVER
static json_t *nvlink_at(struct fdev *d, unsigned int link, int *rc)
{
	json_t *a = d->mig < 0 ? json_object_get(d->obj, "nvlinks") : NULL;
	if (!json_is_array(a)) {
		*rc = R_NOTSUP; /* no NVLink on this GPU, as NVML says for PCIe-only boards */
		return NULL;
	}
	if (link >= 18) { /* NVML_NVLINK_MAX_LINKS */
		*rc = R_INVAL;
		return NULL;
	}
	*rc = R_OK;
	return json_array_get(a, link); /* NULL: a link that is present but down */
}
API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link, int *active)
{
	BEGIN("nvmlDeviceGetNvLinkState", dev);
	int rc;
	json_t *peer = nvlink_at(dev, link, &rc);
	if (rc || !active)
		END(rc ? rc : R_INVAL);
	*active = peer && json_is_string(peer) ? 1 : 0; /* NVML_FEATURE_ENABLED / DISABLED */
	END(R_OK);
}
API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t dev, unsigned int link, nvmlPciInfo_t *p)
{
	BEGIN("nvmlDeviceGetNvLinkRemotePciInfo_v2", dev);
	int rc;
	json_t *peer = nvlink_at(dev, link, &rc);
	if (rc || !p)
		END(rc ? rc : R_INVAL);
	if (!json_is_string(peer))
		END(R_NOTSUP);
	unsigned int dom, bus, dv, f;
	parse_bus(json_string_value(peer), &dom, &bus, &dv, &f);
	memset(p, 0, sizeof *p);
	snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04x:%02x:%02x.%x", dom, bus, dv, f);
	snprintf(p->busId, sizeof p->busId, "%08X:%02X:%02X.%X", dom, bus, dv, f);
	p->domain = dom;
	p->bus = bus;
	p->device = dv;
	END(R_OK);
}
#endif

API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t dev, nvmlPciInfo_v1_t *p1)
{
	nvmlPciInfo_t p;
	int rc = pci_info("nvmlDeviceGetPciInfo", dev, &p);
	if (rc || !p1)
		return rc ? rc : R_INVAL;
	memset(p1, 0, sizeof *p1);
	memcpy(p1->busId, p.busIdLegacy, sizeof p1->busId);
	p1->domain = p.domain;
	p1->bus = p.bus;
	p1->device = p.device;
	p1->pciDeviceId = p.pciDeviceId;
	p1->pciSubSystemId = p.pciSubSystemId;
	return R_OK;
}

API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor)
{
	BEGIN("nvmlDeviceGetCudaComputeCapability", dev);
	const char *cc = sc_str(dev->gpu, "cc");
	int a, b;
	if (!cc || sscanf(cc, "%d.%d", &a, &b) != 2)
		END(R_NOTSUP);
	if (!major || !minor)
		END(R_INVAL);
	*major = a;
	*minor = b;
	END(R_OK);
}

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t dev, unsigned int *arch)
{
	return simple_u("nvmlDeviceGetArchitecture", dev, "arch", arch);
}
#endif

/* ---- memory ----------------------------------------------------------------- */

/* Sum of the memory of the processes visible now on d (a GPU or a MIG). */
static bool proc_visible(json_t *p)
{
	int64_t now = sc_now_ms(), a, b;
	if (sc_int(p, "from_ms", &a) && now < a)
		return false;
	if (sc_int(p, "until_ms", &b) && now >= b)
		return false;
	return true;
}

static bool proc_on(struct fdev *d, json_t *p)
{
	if (d->mig < 0)
		return true;
	return sc_int_or(p, "gpu_instance", -1) == sc_int_or(d->obj, "gpu_instance", -2) &&
	       sc_int_or(p, "compute_instance", -1) == sc_int_or(d->obj, "compute_instance", -2);
}

static int mem_values(struct fdev *d, uint64_t *total, uint64_t *reserved, uint64_t *used)
{
	int64_t t, r = 0, u;
	if (!sc_int(d->obj, "memory_total_bytes", &t))
		return R_NOTSUP;
	if (d->mig < 0)
		sc_int(d->obj, "mem_reserved", &r);
	if (!sc_int(d->obj, "mem_used", &u)) {
		/* the sum of the processes: reading it must not advance their series */
		u = 0;
		sc_peek(true);
		json_t *procs = json_object_get(d->gpu, "processes");
		size_t i;
		json_t *p;
		json_array_foreach(procs, i, p) {
			int64_t m;
			if (proc_visible(p) && proc_on(d, p) && sc_int(p, "used_memory_bytes", &m))
				u += m;
		}
		sc_peek(false);
	}
	if (u + r > t)
		u = t - r;
	*total = (uint64_t)t;
	*reserved = (uint64_t)r;
	*used = (uint64_t)u;
	return R_OK;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m)
{
	BEGIN("nvmlDeviceGetMemoryInfo", dev);
	uint64_t t, r, u;
	int rc = mem_values(dev, &t, &r, &u);
	if (!rc && !m)
		rc = R_INVAL;
	if (!rc) {
		/* v1 counts the reserved memory as used (driver 510 and later) */
		m->total = t;
		m->used = u + r;
		m->free = t - u - r;
	}
	END(rc);
}

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m)
{
	BEGIN("nvmlDeviceGetMemoryInfo_v2", dev);
	if (!m)
		END(R_INVAL);
	/* nvmlMemory_v2 = NVML_STRUCT_VERSION(Memory, 2) = sizeof | 2 << 24 */
	if (m->version != (unsigned int)(sizeof(nvmlMemory_v2_t) | 2u << 24))
		END(R_VERSION);
	uint64_t t, r, u;
	int rc = mem_values(dev, &t, &r, &u);
	if (!rc) {
		m->total = t;
		m->reserved = r;
		m->used = u;
		m->free = t - u - r;
	}
	END(rc);
}
#endif

/* ---- sensors ---------------------------------------------------------------- */

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u)
{
	BEGIN("nvmlDeviceGetUtilizationRates", dev);
	unsigned int g, m;
	if (!u)
		END(R_INVAL);
	if (mig_enabled(dev))
		END(R_NOTSUP);
	int rc = field_u(dev, "util_gpu_pct", &g);
	if (!rc)
		rc = field_u(dev, "util_mem_pct", &m);
	if (!rc) {
		u->gpu = g;
		u->memory = m;
	}
	END(rc);
}

API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int *t)
{
	BEGIN("nvmlDeviceGetTemperature", dev);
	if (sensor != 0 || !t)
		END(R_INVAL);
	END(field_u(dev, "temp_c", t));
}

API nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t dev, int kind, unsigned int *t)
{
	BEGIN("nvmlDeviceGetTemperatureThreshold", dev);
	/* NVML_TEMPERATURE_THRESHOLD_SHUTDOWN 0, _SLOWDOWN 1 */
	if (!t || kind < 0)
		END(R_INVAL);
	if (kind > 1)
		END(R_NOTSUP);
	END(field_u(dev, kind == 0 ? "temp_shutdown_c" : "temp_slowdown_c", t));
}

API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetFanSpeed", dev, "fan_pct", v);
}
API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetPowerUsage", dev, "power_mw", v);
}
API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetEnforcedPowerLimit", dev, "power_limit_mw", v);
}
API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetPowerManagementDefaultLimit", dev, "power_default_limit_mw", v);
}

/* nvmlClockType_t: GRAPHICS 0, SM 1, MEM 2, VIDEO 3 */
static const char *clock_key(int type, bool max)
{
	if (type == 0 || type == 1)
		return max ? "clock_sm_max_mhz" : "clock_sm_mhz";
	if (type == 2)
		return max ? "clock_mem_max_mhz" : "clock_mem_mhz";
	return NULL;
}

API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int *v)
{
	BEGIN("nvmlDeviceGetClockInfo", dev);
	const char *k = clock_key(type, false);
	if (!v)
		END(R_INVAL);
	END(k ? field_u(dev, k, v) : R_NOTSUP);
}

API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *v)
{
	BEGIN("nvmlDeviceGetMaxClockInfo", dev);
	const char *k = clock_key(type, true);
	if (!v)
		END(R_INVAL);
	END(k ? field_u(dev, k, v) : R_NOTSUP);
}

static int reasons(const char *fn, nvmlDevice_t dev, unsigned long long *v)
{
	BEGIN(fn, dev);
	unsigned int x;
	if (!v)
		END(R_INVAL);
	int rc = field_u(dev, "throttle_reasons", &x);
	if (!rc)
		*v = x;
	END(rc);
}

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long *v)
{
	return reasons("nvmlDeviceGetCurrentClocksEventReasons", dev, v);
}
#endif
API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *v)
{
	return reasons("nvmlDeviceGetCurrentClocksThrottleReasons", dev, v);
}

API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetCurrPcieLinkGeneration", dev, "pcie_gen", v);
}
API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetCurrPcieLinkWidth", dev, "pcie_width", v);
}
API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetMaxPcieLinkGeneration", dev, "pcie_gen_max", v);
}
API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetMaxPcieLinkWidth", dev, "pcie_width_max", v);
}
API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetPersistenceMode", dev, "persistence_mode", v);
}
API nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetComputeMode", dev, "compute_mode", v);
}

/* ---- ECC and retired memory ---------------------------------------------------- */

API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, unsigned int *cur, unsigned int *pend)
{
	BEGIN("nvmlDeviceGetEccMode", dev);
	unsigned int v;
	if (!cur || !pend)
		END(R_INVAL);
	int rc = field_u(dev, "ecc_mode", &v);
	if (!rc)
		*cur = *pend = v;
	END(rc);
}

/* type: 0 corrected, 1 uncorrected; counter: 0 volatile, 1 aggregate */
API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter, unsigned long long *v)
{
	BEGIN("nvmlDeviceGetTotalEccErrors", dev);
	unsigned int x;
	if (!v || type < 0 || type > 1 || counter < 0 || counter > 1)
		END(R_INVAL);
	int rc = field_u(dev, type == 0 ? "ecc_corrected" : "ecc_uncorrected", &x);
	if (!rc)
		*v = x;
	END(rc);
}

/* cause: 0 multiple single-bit errors, 1 double-bit error */
API nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t dev, int cause, unsigned int *count, unsigned long long *addrs)
{
	BEGIN("nvmlDeviceGetRetiredPages", dev);
	unsigned int n;
	if (!count || cause < 0 || cause > 1)
		END(R_INVAL);
	int rc = field_u(dev, cause == 0 ? "retired_sbe" : "retired_dbe", &n);
	if (rc)
		END(rc);
	if (*count < n || (n && !addrs)) {
		*count = n;
		END(R_INSUFFICIENT);
	}
	for (unsigned int i = 0; i < n; i++)
		addrs[i] = 0x1000ull * (i + 1);
	*count = n;
	END(R_OK);
}

API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetRetiredPagesPendingStatus", dev, "retired_pending", v);
}

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned int *corr, unsigned int *unc,
					   unsigned int *pending, unsigned int *failure)
{
	BEGIN("nvmlDeviceGetRemappedRows", dev);
	if (!corr || !unc || !pending || !failure)
		END(R_INVAL);
	int rc = field_u(dev, "remap_correctable", corr);
	if (!rc)
		rc = field_u(dev, "remap_uncorrectable", unc);
	if (!rc)
		rc = field_u(dev, "remap_pending", pending);
	if (!rc)
		rc = field_u(dev, "remap_failure", failure);
	END(rc);
}
#endif

/* ---- MIG ------------------------------------------------------------------------ */

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *cur, unsigned int *pend)
{
	BEGIN("nvmlDeviceGetMigMode", dev);
	unsigned int v;
	if (!cur || !pend)
		END(R_INVAL);
	int rc = field_u(dev, "mig_mode", &v);
	if (!rc)
		*cur = *pend = v;
	END(rc);
}

API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *n)
{
	BEGIN("nvmlDeviceGetMaxMigDeviceCount", dev);
	if (!n)
		END(R_INVAL);
	if (dev->mig >= 0 || !json_object_get(dev->gpu, "mig_mode"))
		END(R_NOTSUP);
	/* A100/H100 expose at most 7 GPU instances (MIG user guide) */
	*n = 7;
	END(R_OK);
}

API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int i, nvmlDevice_t *out)
{
	BEGIN("nvmlDeviceGetMigDeviceHandleByIndex", dev);
	if (!out || dev->mig >= 0)
		END(R_INVAL);
	json_t *migs = json_object_get(dev->gpu, "migs");
	if (sc_int_or(dev->gpu, "mig_mode", 0) != 1 || i >= json_array_size(migs))
		END(R_NOT_FOUND);
	for (size_t k = 0; k < n_devs; k++)
		if (devs[k].idx == dev->idx && devs[k].mig == (int)i) {
			*out = &devs[k];
			END(R_OK);
		}
	END(R_NOT_FOUND);
}

API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t dev, unsigned int *id)
{
	BEGIN("nvmlDeviceGetGpuInstanceId", dev);
	if (!id)
		END(R_INVAL);
	if (dev->mig < 0)
		END(R_NOTSUP);
	*id = (unsigned int)sc_int_or(dev->obj, "gpu_instance", 0);
	END(R_OK);
}

API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t dev, unsigned int *id)
{
	BEGIN("nvmlDeviceGetComputeInstanceId", dev);
	if (!id)
		END(R_INVAL);
	if (dev->mig < 0)
		END(R_NOTSUP);
	*id = (unsigned int)sc_int_or(dev->obj, "compute_instance", 0);
	END(R_OK);
}

API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t dev, nvmlDevice_t *out)
{
	BEGIN("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", dev);
	if (!out || dev->mig < 0)
		END(R_INVAL);
	*out = &devs[dev->idx];
	END(R_OK);
}
#endif

/* ---- processes -------------------------------------------------------------------- */

static bool proc_kind(json_t *p, bool graphics)
{
	const char *t = sc_str(p, "type");
	if (!t)
		t = "compute";
	if (strcmp(t, "compute+graphics") == 0 || strcmp(t, "both") == 0)
		return true;
	return strcmp(t, graphics ? "graphics" : "compute") == 0;
}

/* version 1: nvmlProcessInfo_v1_t, 2 and 3: nvmlProcessInfo_v2_t */
static int procs(const char *fn, nvmlDevice_t dev, unsigned int *count, void *infos, int version, bool graphics)
{
	BEGIN(fn, dev);
	if (!count)
		END(R_INVAL);
	json_t *list = json_object_get(dev->gpu, "processes");
	unsigned int n = 0;
	size_t i;
	json_t *p;
	json_array_foreach(list, i, p)
		if (proc_visible(p) && proc_on(dev, p) && proc_kind(p, graphics))
			n++;
	if (*count < n || (n && !infos)) {
		*count = n;
		END(R_INSUFFICIENT);
	}
	unsigned int k = 0;
	json_array_foreach(list, i, p) {
		if (!(proc_visible(p) && proc_on(dev, p) && proc_kind(p, graphics)))
			continue;
		int64_t m;
		unsigned long long used = sc_int(p, "used_memory_bytes", &m) ? (unsigned long long)m
									     : NVML_VALUE_NOT_AVAILABLE;
		unsigned int pid = sc_pid(p);
		if (version == 1) {
			nvmlProcessInfo_v1_t *o = (nvmlProcessInfo_v1_t *)infos + k;
			o->pid = pid;
			o->usedGpuMemory = used;
		} else {
			nvmlProcessInfo_t *o = (nvmlProcessInfo_t *)infos + k;
			o->pid = pid;
			o->usedGpuMemory = used;
			o->gpuInstanceId = (unsigned int)sc_int_or(p, "gpu_instance", 0xFFFFFFFF);
			o->computeInstanceId = (unsigned int)sc_int_or(p, "compute_instance", 0xFFFFFFFF);
		}
		k++;
	}
	*count = k;
	END(R_OK);
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p)
{
	return procs("nvmlDeviceGetComputeRunningProcesses", d, n, p, 1, false);
}
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p)
{
	return procs("nvmlDeviceGetGraphicsRunningProcesses", d, n, p, 1, true);
}
#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs("nvmlDeviceGetComputeRunningProcesses_v2", d, n, p, 2, false);
}
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs("nvmlDeviceGetGraphicsRunningProcesses_v2", d, n, p, 2, true);
}
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs("nvmlDeviceGetComputeRunningProcesses_v3", d, n, p, 3, false);
}
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs("nvmlDeviceGetGraphicsRunningProcesses_v3", d, n, p, 3, true);
}
#endif

/* ---- what independent NVML clients ask too (pynvml, gpustat, nvitop) --------------- */

API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t dev, unsigned int *idx)
{
	BEGIN("nvmlDeviceGetIndex", dev);
	if (!idx)
		END(R_INVAL);
	*idx = (unsigned int)dev->idx;
	END(R_OK);
}

static int util_sampled(const char *fn, nvmlDevice_t dev, const char *key, unsigned int *u, unsigned int *period_us)
{
	BEGIN(fn, dev);
	if (!u || !period_us)
		END(R_INVAL);
	if (mig_enabled(dev))
		END(R_NOTSUP);
	int rc = field_u(dev, key, u);
	/* the driver samples every 167 ms on recent GPUs; any value will do */
	if (!rc)
		*period_us = 166666;
	END(rc);
}

API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t dev, unsigned int *u, unsigned int *period_us)
{
	return util_sampled("nvmlDeviceGetEncoderUtilization", dev, "enc_util_pct", u, period_us);
}
API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t dev, unsigned int *u, unsigned int *period_us)
{
	return util_sampled("nvmlDeviceGetDecoderUtilization", dev, "dec_util_pct", u, period_us);
}

/* nvmlPcieUtilCounter_t: TX_BYTES 0, RX_BYTES 1; the value is in KB/s */
API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t dev, int counter, unsigned int *v)
{
	BEGIN("nvmlDeviceGetPcieThroughput", dev);
	if (!v || counter < 0 || counter > 1)
		END(R_INVAL);
	END(field_u(dev, counter == 0 ? "pcie_tx_kbps" : "pcie_rx_kbps", v));
}

/* millijoules since the driver was last reloaded (Volta and newer) */
API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long *mj)
{
	BEGIN("nvmlDeviceGetTotalEnergyConsumption", dev);
	int64_t v;
	if (!mj)
		END(R_INVAL);
	if (dev->mig >= 0 || !sc_int(dev->obj, "energy_mj", &v))
		END(R_NOTSUP);
	*mj = (unsigned long long)v;
	END(R_OK);
}

/* nvmlPstates_t: 0 (P0, maximum performance) to 15, 32 unknown */
API nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t dev, int *p)
{
	BEGIN("nvmlDeviceGetPerformanceState", dev);
	unsigned int v;
	if (!p)
		END(R_INVAL);
	int rc = field_u(dev, "pstate", &v);
	if (!rc)
		*p = (int)v;
	END(rc);
}
API nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t dev, int *p)
{
	BEGIN("nvmlDeviceGetPowerState", dev);
	unsigned int v;
	if (!p)
		END(R_INVAL);
	int rc = field_u(dev, "pstate", &v);
	if (!rc)
		*p = (int)v;
	END(rc);
}

API nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t dev, nvmlBAR1Memory_t *b)
{
	BEGIN("nvmlDeviceGetBAR1MemoryInfo", dev);
	int64_t t, u;
	if (!b)
		END(R_INVAL);
	if (!sc_int(dev->obj, "bar1_total_bytes", &t) || !sc_int(dev->obj, "bar1_used_bytes", &u))
		END(R_NOTSUP);
	b->bar1Total = (unsigned long long)t;
	b->bar1Used = (unsigned long long)u;
	b->bar1Free = (unsigned long long)(t - u);
	END(R_OK);
}

API nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetPowerManagementLimit", dev, "power_limit_mw", v);
}
API nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetDisplayActive", dev, "display_active", v);
}
API nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t dev, unsigned int *v)
{
	return simple_u("nvmlDeviceGetDisplayMode", dev, "display_active", v);
}

API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t dev, char *buf, unsigned int len)
{
	BEGIN("nvmlDeviceGetSerial", dev);
	END(copy_str(dev->mig >= 0 ? NULL : sc_str(dev->gpu, "serial"), buf, len));
}

/* Windows driver models (WDDM/TCC): not supported on Linux.  (There is
 * deliberately no nvmlDeviceGetConfComputeMemSizeInfo: with it and without
 * nvmlDeviceGetRunningProcessDetailList a library looks like drivers
 * 535.43-535.86, whose _v3 process struct was larger, and nvitop reads the
 * lists with that layout.) */
static int windows_only(const char *fn, nvmlDevice_t dev)
{
	BEGIN(fn, dev);
	END(R_NOTSUP);
}
API nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t dev, int *cur, int *pend)
{
	(void)cur;
	(void)pend;
	return windows_only("nvmlDeviceGetDriverModel", dev);
}
API nvmlReturn_t nvmlDeviceGetDriverModel_v2(nvmlDevice_t dev, int *cur, int *pend)
{
	(void)cur;
	(void)pend;
	return windows_only("nvmlDeviceGetDriverModel_v2", dev);
}

/*
 * Per-process utilisation samples newer than last_seen_us.  NULL samples
 * is a size query (INSUFFICIENT_SIZE with the count); no sample at all is
 * NOT_FOUND, as the driver answers.
 */
API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t dev, nvmlProcessUtilizationSample_t *samples,
						 unsigned int *count, unsigned long long last_seen_us)
{
	BEGIN("nvmlDeviceGetProcessUtilization", dev);
	if (!count)
		END(R_INVAL);
	if (mig_enabled(dev))
		END(R_NOTSUP);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long now_us = (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
	json_t *list = json_object_get(dev->gpu, "processes");
	unsigned int n = 0;
	size_t i;
	json_t *p;
	json_array_foreach(list, i, p)
		if (proc_visible(p) && json_object_get(p, "sm_pct"))
			n++;
	if (!n || last_seen_us >= now_us)
		END(R_NOT_FOUND);
	if (!samples || *count < n) {
		*count = n;
		END(R_INSUFFICIENT);
	}
	unsigned int k = 0;
	json_array_foreach(list, i, p) {
		if (!(proc_visible(p) && json_object_get(p, "sm_pct")))
			continue;
		samples[k].pid = sc_pid(p);
		samples[k].timeStamp = now_us;
		samples[k].smUtil = (unsigned int)sc_int_or(p, "sm_pct", 0);
		samples[k].memUtil = (unsigned int)sc_int_or(p, "mem_pct", 0);
		samples[k].encUtil = (unsigned int)sc_int_or(p, "enc_pct", 0);
		samples[k].decUtil = (unsigned int)sc_int_or(p, "dec_pct", 0);
		k++;
	}
	*count = k;
	END(R_OK);
}

/* MPS clients: none in any scenario (an empty list, not an error) */
static int no_procs(const char *fn, nvmlDevice_t dev, unsigned int *count)
{
	BEGIN(fn, dev);
	if (!count)
		END(R_INVAL);
	*count = 0;
	END(R_OK);
}
API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, void *p)
{
	(void)p;
	return no_procs("nvmlDeviceGetMPSComputeRunningProcesses", d, n);
}

static int handle_by(const char *fn, const char *key, const char *want, nvmlDevice_t *out)
{
	sc_lock();
	sc_log("%s %s", fn, want ? want : "(null)");
	int rc = init_count <= 0 ? R_UNINIT : (!want || !out) ? R_INVAL : R_NOT_FOUND;
	for (size_t i = 0; rc == R_NOT_FOUND && i < n_devs; i++) {
		const char *v = sc_str(devs[i].obj, key);
		if (strcmp(key, "pci_bus_id") == 0 && devs[i].mig >= 0)
			continue;
		if (v && strcasecmp(v, want) == 0) {
			*out = &devs[i];
			rc = R_OK;
		}
	}
	sc_unlock();
	return rc;
}
API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
	return handle_by("nvmlDeviceGetHandleByUUID", "uuid", uuid, d);
}
API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *bus, nvmlDevice_t *d)
{
	return handle_by("nvmlDeviceGetHandleByPciBusId", "pci_bus_id", bus, d);
}

#ifndef FAKE_OLD_DRIVER
API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *d)
{
	return handle_by("nvmlDeviceGetHandleByPciBusId_v2", "pci_bus_id", bus, d);
}

API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, void *p)
{
	(void)p;
	return no_procs("nvmlDeviceGetMPSComputeRunningProcesses_v2", d, n);
}
API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, void *p)
{
	(void)p;
	return no_procs("nvmlDeviceGetMPSComputeRunningProcesses_v3", d, n);
}

API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t dev, unsigned int *is_mig)
{
	BEGIN("nvmlDeviceIsMigDeviceHandle", dev);
	if (!is_mig)
		END(R_INVAL);
	*is_mig = dev->mig >= 0;
	END(R_OK);
}

/* nvmlTemperature_v1 = NVML_STRUCT_VERSION(Temperature, 1) */
API nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t dev, nvmlTemperature_v1_t *t)
{
	BEGIN("nvmlDeviceGetTemperatureV", dev);
	unsigned int v;
	if (!t)
		END(R_INVAL);
	if (t->version != (unsigned int)(sizeof(nvmlTemperature_v1_t) | 1u << 24))
		END(R_VERSION);
	if (t->sensorType != 0)
		END(R_INVAL);
	int rc = field_u(dev, "temp_c", &v);
	if (!rc)
		t->temperature = (int)v;
	END(rc);
}

/* Field values: none is modelled; each answers NOT_SUPPORTED in its slot. */
API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t dev, int count, nvmlFieldValue_t *values)
{
	BEGIN("nvmlDeviceGetFieldValues", dev);
	if (count < 0 || (count && !values))
		END(R_INVAL);
	for (int i = 0; i < count; i++)
		values[i].nvmlReturn = R_NOTSUP;
	END(R_OK);
}

#endif

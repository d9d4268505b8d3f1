/*
 * Fake libcuda.so.1: the few CUDA driver API calls gpuwise makes, over the
 * same scenario as the fake NVML.  Like the real driver it enumerates
 * devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, then keeps
 * those CUDA_VISIBLE_DEVICES names (indexes or UUID prefixes; parsing stops
 * at the first invalid entry).  Signatures and attribute numbers follow
 * cuda.h (CUDA driver API reference: cuDeviceGetAttribute, CUdevice_attribute).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

#define API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef struct { char bytes[16]; } CUuuid;

enum { C_OK = 0, C_INVALID_VALUE = 1, C_NOT_INITIALIZED = 3, C_NO_DEVICE = 100, C_INVALID_DEVICE = 101 };

static int inited;
static size_t order[64]; /* CUDA ordinal -> scenario GPU index */
static int n_visible;

static int64_t speed(json_t *g)
{
	return sc_int_or(g, "sm_count", 1) * sc_int_or(g, "clock_sm_max_mhz", 1);
}

static bool uuid_prefix(const char *uuid, const char *want)
{
	return uuid && *want && strncmp(uuid, want, strlen(want)) == 0;
}

static void enumerate(void)
{
	size_t n = sc_gpu_count();
	if (n > 64)
		n = 64;
	size_t all[64];
	for (size_t i = 0; i < n; i++)
		all[i] = i;
	const char *ord = getenv("CUDA_DEVICE_ORDER");
	if (!ord || strcmp(ord, "PCI_BUS_ID") != 0) {
		/* stable insertion sort, fastest first */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && speed(sc_gpu(all[j])) > speed(sc_gpu(all[j - 1])); j--) {
				size_t t = all[j];
				all[j] = all[j - 1];
				all[j - 1] = t;
			}
	}
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	n_visible = 0;
	if (!cvd) {
		for (size_t i = 0; i < n; i++)
			order[n_visible++] = all[i];
		return;
	}
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", cvd);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		while (isspace((unsigned char)*tok))
			tok++;
		long k = -1;
		if (isdigit((unsigned char)*tok)) {
			char *end;
			k = strtol(tok, &end, 10);
			if (*end || k < 0 || (size_t)k >= n)
				return;
		} else {
			for (size_t i = 0; i < n; i++)
				if (uuid_prefix(sc_str(sc_gpu(all[i]), "uuid"), tok))
					k = (long)i;
			if (k < 0)
				return;
		}
		for (int j = 0; j < n_visible; j++)
			if (order[j] == all[k]) {
				n_visible = 0; /* a duplicate makes the list invalid */
				return;
			}
		order[n_visible++] = all[k];
	}
}

static int enter(const char *fn, json_t *obj)
{
	return sc_error(obj ? obj : sc_root(), fn, "cuda_errors");
}

API CUresult cuInit(unsigned int flags)
{
	sc_lock();
	sc_log("cuInit");
	int rc = sc_load() ? 999 : enter("cuInit", NULL);
	if (!rc && flags)
		rc = C_INVALID_VALUE;
	if (!rc) {
		enumerate();
		inited = 1;
	}
	sc_unlock();
	return rc;
}

API CUresult cuDriverGetVersion(int *v)
{
	sc_lock();
	sc_log("cuDriverGetVersion");
	int rc = sc_load() ? 999 : enter("cuDriverGetVersion", NULL);
	int64_t x;
	if (!rc && !v)
		rc = C_INVALID_VALUE;
	if (!rc && !sc_int(sc_root(), "cuda_driver_version", &x))
		rc = 999;
	if (!rc)
		*v = (int)x;
	sc_unlock();
	return rc;
}

API CUresult cuDeviceGetCount(int *n)
{
	sc_lock();
	sc_log("cuDeviceGetCount");
	int rc = !inited ? C_NOT_INITIALIZED : enter("cuDeviceGetCount", NULL);
	if (!rc && !n)
		rc = C_INVALID_VALUE;
	if (!rc)
		*n = n_visible;
	sc_unlock();
	return rc;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	sc_lock();
	sc_log("cuDeviceGet %d", ordinal);
	int rc = !inited ? C_NOT_INITIALIZED : enter("cuDeviceGet", NULL);
	if (!rc && (!d || ordinal < 0 || ordinal >= n_visible))
		rc = d ? C_INVALID_DEVICE : C_INVALID_VALUE;
	if (!rc)
		*d = ordinal;
	sc_unlock();
	return rc;
}

/* The scenario GPU behind a device, or NULL with *rc set. */
static json_t *dev_gpu(const char *fn, CUdevice d, int *rc)
{
	sc_log("%s %d", fn, d);
	*rc = !inited ? C_NOT_INITIALIZED : (d < 0 || d >= n_visible) ? C_INVALID_DEVICE : 0;
	if (*rc)
		return NULL;
	json_t *g = sc_gpu(order[d]);
	*rc = enter(fn, g);
	return *rc ? NULL : g;
}

API CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice d)
{
	sc_lock();
	int rc;
	json_t *g = dev_gpu("cuDeviceGetAttribute", d, &rc);
	if (!g)
		goto out;
	int64_t v = -1;
	int a = 0, b = 0;
	unsigned int dom = 0, bus = 0, dv = 0, fn = 0;
	const char *cc = sc_str(g, "cc");
	sscanf(sc_str(g, "pci_bus_id"), "%x:%x:%x.%x", &dom, &bus, &dv, &fn);
	switch (attrib) {
	case 16: sc_int(g, "sm_count", &v); break;            /* MULTIPROCESSOR_COUNT */
	case 36: sc_int(g, "mem_clock_khz", &v); break;       /* MEMORY_CLOCK_RATE (kHz) */
	case 37: sc_int(g, "mem_bus_width_bits", &v); break;  /* GLOBAL_MEMORY_BUS_WIDTH */
	case 38: sc_int(g, "l2_bytes", &v); break;            /* L2_CACHE_SIZE */
	case 33: v = bus; break;                              /* PCI_BUS_ID */
	case 34: v = dv; break;                               /* PCI_DEVICE_ID (slot) */
	case 50: v = dom; break;                              /* PCI_DOMAIN_ID */
	case 75:                                              /* COMPUTE_CAPABILITY_MAJOR */
	case 76:                                              /* COMPUTE_CAPABILITY_MINOR */
		if (cc && sscanf(cc, "%d.%d", &a, &b) == 2)
			v = attrib == 75 ? a : b;
		break;
	default: rc = C_INVALID_VALUE; goto out;
	}
	if (!pi)
		rc = C_INVALID_VALUE;
	else
		*pi = v < 0 ? 0 : (int)v;
out:
	sc_unlock();
	return rc;
}

static CUresult get_uuid(const char *fn, CUuuid *u, CUdevice d)
{
	sc_lock();
	int rc;
	json_t *g = dev_gpu(fn, d, &rc);
	if (!g)
		goto out;
	const char *s = sc_str(g, "uuid");
	if (!u) {
		rc = C_INVALID_VALUE;
		goto out;
	}
	memset(u, 0, sizeof *u);
	if (strncmp(s, "GPU-", 4) == 0)
		s += 4;
	for (int i = 0; i < 16 && *s;) {
		if (*s == '-') {
			s++;
			continue;
		}
		unsigned int byte;
		if (sscanf(s, "%2x", &byte) != 1)
			break;
		u->bytes[i++] = (char)byte;
		s += 2;
	}
out:
	sc_unlock();
	return rc;
}

API CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { return get_uuid("cuDeviceGetUuid", u, d); }
API CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) { return get_uuid("cuDeviceGetUuid_v2", u, d); }

API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	sc_lock();
	int rc;
	json_t *g = dev_gpu("cuDeviceGetName", d, &rc);
	if (g && (!name || len <= 0))
		rc = C_INVALID_VALUE;
	if (!rc)
		snprintf(name, (size_t)len, "%s", sc_str(g, "name"));
	sc_unlock();
	return rc;
}

API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	sc_lock();
	int rc;
	json_t *g = dev_gpu("cuDeviceTotalMem_v2", d, &rc);
	if (g && !bytes)
		rc = C_INVALID_VALUE;
	if (!rc)
		*bytes = (size_t)sc_int_or(g, "memory_total_bytes", 0);
	sc_unlock();
	return rc;
}

API CUresult cuGetErrorString(CUresult r, const char **s)
{
	if (!s)
		return C_INVALID_VALUE;
	switch (r) {
	case 0: *s = "no error"; break;
	case 1: *s = "invalid argument"; break;
	case 3: *s = "initialization error"; break;
	case 100: *s = "no CUDA-capable device is detected"; break;
	case 101: *s = "invalid device ordinal"; break;
	case 803: *s = "system has unsupported display driver / cuda driver combination"; break;
	case 804: *s = "forward compatibility was attempted on non supported HW"; break;
	default: *s = "unknown error"; break;
	}
	return C_OK;
}

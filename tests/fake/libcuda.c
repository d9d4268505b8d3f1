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

/* ---- memory (issue 14): a simulated pool per device --------------------
 *
 * Enough of the allocation API for libgpuwise-cap's tests: contexts
 * current per thread, cuMemAlloc_v2 and its relatives over a pool of the
 * scenario GPU's memory_total_bytes, each allocation kept in a table so a
 * free of an unknown pointer fails as in the real driver.  Nothing is ever
 * mapped: the addresses are made up.  Types, values and signatures follow
 * cuda.h of CUDA 13.0 (CUmemAllocationProp, CUmemLocationType,
 * CUdriverProcAddressQueryResult, CUresult 2/201/500).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
	int type;                 /* CUmemAllocationType: 1 PINNED */
	int requestedHandleTypes;
	CUmemLocation location;   /* type 1 DEVICE */
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType, gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

enum { C_OUT_OF_MEMORY = 2, C_INVALID_CONTEXT = 201, C_NOT_FOUND = 500 };
enum { FAKE_GRANULARITY = 2 << 20, FAKE_PITCH_ALIGN = 512 };
enum { K_PTR = 1, K_HANDLE = 2 };

static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t mem_used[64];
static unsigned long long next_addr = 0x7f0000000000ULL, next_handle = 1;
static __thread int cur_dev = -1; /* the calling thread's current context, -1 none */
typedef struct { uint64_t key; uint64_t bytes; int dev; int kind; } fake_alloc; /* kind 0: empty slot */
static fake_alloc *tab;
static size_t tab_cap, tab_n;

static size_t slot_of(uint64_t key, int kind)
{
	uint64_t h = (key ^ (uint64_t)kind) * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 20) & (tab_cap - 1);
}

/* Linear probing with backward-shift deletion; mem_mu held. */
static int tab_put(uint64_t key, int kind, uint64_t bytes, int dev)
{
	if ((tab_n + 1) * 2 > tab_cap) {
		size_t ncap = tab_cap ? tab_cap * 2 : 1024;
		fake_alloc *old = tab, *nt = calloc(ncap, sizeof *nt);
		size_t ocap = tab_cap;
		if (!nt)
			return -1;
		tab = nt;
		tab_cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].kind) {
				size_t j = slot_of(old[i].key, old[i].kind);
				while (tab[j].kind)
					j = (j + 1) & (tab_cap - 1);
				tab[j] = old[i];
			}
		free(old);
	}
	size_t j = slot_of(key, kind);
	while (tab[j].kind)
		j = (j + 1) & (tab_cap - 1);
	tab[j] = (fake_alloc){key, bytes, dev, kind};
	tab_n++;
	return 0;
}

static bool tab_take(uint64_t key, int kind, fake_alloc *out)
{
	if (!tab_cap)
		return false;
	size_t j = slot_of(key, kind);
	while (tab[j].kind && !(tab[j].key == key && tab[j].kind == kind))
		j = (j + 1) & (tab_cap - 1);
	if (!tab[j].kind)
		return false;
	*out = tab[j];
	tab[j].kind = 0;
	tab_n--;
	for (size_t k = (j + 1) & (tab_cap - 1); tab[k].kind; k = (k + 1) & (tab_cap - 1)) {
		size_t home = slot_of(tab[k].key, tab[k].kind);
		/* move k back into the hole j when its home is not in (j, k] */
		if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
			tab[j] = tab[k];
			tab[k].kind = 0;
			j = k;
		}
	}
	return true;
}

/* The pool's size, read once per device (a constant in every scenario). */
static uint64_t dev_total(int dev)
{
	static _Atomic uint64_t cached[64];
	if (dev < 0 || dev >= n_visible)
		return 0;
	uint64_t t = atomic_load_explicit(&cached[dev], memory_order_relaxed);
	if (t)
		return t;
	sc_lock();
	t = (uint64_t)sc_int_or(sc_gpu(order[dev]), "memory_total_bytes", 0);
	sc_unlock();
	atomic_store(&cached[dev], t);
	return t;
}

/* Take bytes from dev's pool; the new pointer or handle goes to *key. */
static CUresult pool_take(int dev, uint64_t bytes, int kind, unsigned long long *key)
{
	if (!inited)
		return C_NOT_INITIALIZED;
	if (dev < 0)
		return C_INVALID_CONTEXT;
	if (!key || bytes == 0)
		return C_INVALID_VALUE;
	uint64_t total = dev_total(dev);
	CUresult rc = C_OK;
	pthread_mutex_lock(&mem_mu);
	if (bytes > total || mem_used[dev] > total - bytes) {
		rc = C_OUT_OF_MEMORY;
		goto out;
	}
	unsigned long long k = kind == K_PTR ? next_addr : next_handle++;
	if (tab_put(k, kind, bytes, dev)) {
		rc = C_OUT_OF_MEMORY;
		goto out;
	}
	if (kind == K_PTR)
		next_addr += (bytes + 255) & ~(uint64_t)255;
	mem_used[dev] += bytes;
	*key = k;
out:
	pthread_mutex_unlock(&mem_mu);
	return rc;
}

static CUresult pool_give(uint64_t key, int kind)
{
	if (!inited)
		return C_NOT_INITIALIZED;
	fake_alloc a;
	pthread_mutex_lock(&mem_mu);
	bool found = tab_take(key, kind, &a);
	if (found)
		mem_used[a.dev] -= a.bytes;
	pthread_mutex_unlock(&mem_mu);
	return found ? C_OK : C_INVALID_VALUE;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
	if (!inited)
		return C_NOT_INITIALIZED;
	if (!pctx)
		return C_INVALID_VALUE;
	if (d < 0 || d >= n_visible)
		return C_INVALID_DEVICE;
	*pctx = (CUcontext)(uintptr_t)(d + 1);
	return C_OK;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	return !inited ? C_NOT_INITIALIZED : d < 0 || d >= n_visible ? C_INVALID_DEVICE : C_OK;
}

API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	uintptr_t v = (uintptr_t)ctx;
	if (!inited)
		return C_NOT_INITIALIZED;
	if (v > (uintptr_t)n_visible)
		return C_INVALID_CONTEXT;
	cur_dev = (int)v - 1;
	return C_OK;
}

API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice d)
{
	CUresult rc = cuDevicePrimaryCtxRetain(pctx, d);
	if (!rc)
		cur_dev = d;
	return rc;
}

API CUresult cuCtxGetDevice(CUdevice *d)
{
	if (!inited)
		return C_NOT_INITIALIZED;
	if (!d)
		return C_INVALID_VALUE;
	if (cur_dev < 0)
		return C_INVALID_CONTEXT;
	*d = cur_dev;
	return C_OK;
}

API CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
	if (!inited)
		return C_NOT_INITIALIZED;
	if (cur_dev < 0)
		return C_INVALID_CONTEXT;
	if (!free_b || !total_b)
		return C_INVALID_VALUE;
	uint64_t total = dev_total(cur_dev);
	pthread_mutex_lock(&mem_mu);
	*total_b = (size_t)total;
	*free_b = (size_t)(total - mem_used[cur_dev]);
	pthread_mutex_unlock(&mem_mu);
	return C_OK;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	return pool_take(cur_dev, bytes, K_PTR, dptr);
}

/* Pitch: the width rounded up to 512 bytes (a common texture pitch
 * alignment); element sizes 4, 8 or 16 as the reference requires. */
API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
	if (!pitch || (elem != 4 && elem != 8 && elem != 16) || width == 0 || height == 0 ||
	    width > SIZE_MAX - FAKE_PITCH_ALIGN)
		return C_INVALID_VALUE;
	size_t p = (width + FAKE_PITCH_ALIGN - 1) / FAKE_PITCH_ALIGN * FAKE_PITCH_ALIGN;
	if (height > SIZE_MAX / p)
		return C_OUT_OF_MEMORY;
	CUresult rc = pool_take(cur_dev, (uint64_t)p * height, K_PTR, dptr);
	if (!rc)
		*pitch = p;
	return rc;
}

API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
	if (flags != 1 && flags != 2) /* CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST */
		return C_INVALID_VALUE;
	return pool_take(cur_dev, bytes, K_PTR, dptr);
}

API CUresult cuMemFree_v2(CUdeviceptr p) { return pool_give(p, K_PTR); }

API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s) { return pool_take(cur_dev, bytes, K_PTR, dptr); }
API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s) { return pool_take(cur_dev, bytes, K_PTR, dptr); }
API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return pool ? pool_take((int)(uintptr_t)pool - 1, bytes, K_PTR, dptr) : C_INVALID_VALUE;
}
API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return cuMemAllocFromPoolAsync(dptr, bytes, pool, s);
}
API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { return pool_give(p, K_PTR); }
API CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return pool_give(p, K_PTR); }

/* A device's default pool: a handle that names the device. */
API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice d)
{
	if (!inited)
		return C_NOT_INITIALIZED;
	if (!pool)
		return C_INVALID_VALUE;
	if (d < 0 || d >= n_visible)
		return C_INVALID_DEVICE;
	*pool = (CUmemoryPool)(uintptr_t)(d + 1);
	return C_OK;
}

API CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, int option)
{
	if (!g || !prop)
		return C_INVALID_VALUE;
	*g = FAKE_GRANULARITY;
	return C_OK;
}

/* Physical memory for the virtual memory management API: pinned, on a
 * device, a multiple of the granularity. */
API CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t bytes, const CUmemAllocationProp *prop,
			 unsigned long long flags)
{
	if (!prop || prop->type != 1 || prop->location.type != 1 || bytes % FAKE_GRANULARITY)
		return C_INVALID_VALUE;
	if (prop->location.id < 0 || prop->location.id >= n_visible)
		return C_INVALID_DEVICE;
	return pool_take(prop->location.id, bytes, K_HANDLE, h);
}

API CUresult cuMemRelease(CUmemGenericAllocationHandle h) { return pool_give(h, K_HANDLE); }

/*
 * cuGetProcAddress: the driver's own table, never dlsym (a preloaded
 * library's dlsym must not answer for the driver).  A base name gets its
 * _v2 variant from CUDA 3.2 (3020) on and its _ptsz variant under
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2), as cuda.h maps them;
 * cuGetProcAddress itself is cuGetProcAddress_v2 from CUDA 12.0 on.
 */
API CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, unsigned long long flags, int *status);
API CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, unsigned long long flags);

static const struct {
	const char *name;
	int min_ver;
	void *fn;
} proc_tab[] = {
	{"cuInit", 2000, (void *)cuInit},
	{"cuDriverGetVersion", 2020, (void *)cuDriverGetVersion},
	{"cuDeviceGet", 2000, (void *)cuDeviceGet},
	{"cuDeviceGetCount", 2000, (void *)cuDeviceGetCount},
	{"cuDeviceGetName", 2000, (void *)cuDeviceGetName},
	{"cuDeviceGetUuid", 9020, (void *)cuDeviceGetUuid},
	{"cuDeviceGetUuid_v2", 11040, (void *)cuDeviceGetUuid_v2},
	{"cuDeviceTotalMem_v2", 3020, (void *)cuDeviceTotalMem_v2},
	{"cuDeviceGetAttribute", 2000, (void *)cuDeviceGetAttribute},
	{"cuDevicePrimaryCtxRetain", 7000, (void *)cuDevicePrimaryCtxRetain},
	{"cuDevicePrimaryCtxRelease_v2", 11000, (void *)cuDevicePrimaryCtxRelease_v2},
	{"cuCtxSetCurrent", 4000, (void *)cuCtxSetCurrent},
	{"cuCtxCreate_v2", 3020, (void *)cuCtxCreate_v2},
	{"cuCtxGetDevice", 2000, (void *)cuCtxGetDevice},
	{"cuMemGetInfo_v2", 3020, (void *)cuMemGetInfo_v2},
	{"cuMemAlloc_v2", 3020, (void *)cuMemAlloc_v2},
	{"cuMemAllocPitch_v2", 3020, (void *)cuMemAllocPitch_v2},
	{"cuMemAllocManaged", 6000, (void *)cuMemAllocManaged},
	{"cuMemFree_v2", 3020, (void *)cuMemFree_v2},
	{"cuMemAllocAsync", 11020, (void *)cuMemAllocAsync},
	{"cuMemAllocAsync_ptsz", 11020, (void *)cuMemAllocAsync_ptsz},
	{"cuMemAllocFromPoolAsync", 11020, (void *)cuMemAllocFromPoolAsync},
	{"cuMemAllocFromPoolAsync_ptsz", 11020, (void *)cuMemAllocFromPoolAsync_ptsz},
	{"cuMemFreeAsync", 11020, (void *)cuMemFreeAsync},
	{"cuMemFreeAsync_ptsz", 11020, (void *)cuMemFreeAsync_ptsz},
	{"cuDeviceGetDefaultMemPool", 11020, (void *)cuDeviceGetDefaultMemPool},
	{"cuMemGetAllocationGranularity", 10020, (void *)cuMemGetAllocationGranularity},
	{"cuMemCreate", 10020, (void *)cuMemCreate},
	{"cuMemRelease", 10020, (void *)cuMemRelease},
	{"cuGetErrorString", 6000, (void *)cuGetErrorString},
	{"cuGetProcAddress", 11030, (void *)cuGetProcAddress},
	{"cuGetProcAddress_v2", 12000, (void *)cuGetProcAddress_v2},
};

API CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, unsigned long long flags, int *status)
{
	static const char *const v2[] = {"cuDeviceTotalMem", "cuCtxCreate", "cuMemGetInfo", "cuMemAlloc",
					 "cuMemAllocPitch", "cuMemFree", "cuDevicePrimaryCtxRelease"};
	static const char *const ptsz[] = {"cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemFreeAsync"};
	if (status)
		*status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
	if (!sym || !pfn)
		return C_INVALID_VALUE;
	*pfn = NULL;
	char want[128];
	snprintf(want, sizeof want, "%s", sym);
	for (size_t i = 0; ver >= 3020 && i < sizeof v2 / sizeof v2[0]; i++)
		if (strcmp(sym, v2[i]) == 0)
			snprintf(want, sizeof want, "%s_v2", sym);
	if (ver >= 12000 && strcmp(sym, "cuGetProcAddress") == 0) /* cuda.h: the _v2 from CUDA 12.0 */
		snprintf(want, sizeof want, "cuGetProcAddress_v2");
	for (size_t i = 0; (flags & 2) && i < sizeof ptsz / sizeof ptsz[0]; i++)
		if (strcmp(sym, ptsz[i]) == 0)
			snprintf(want, sizeof want, "%s_ptsz", sym);
	for (size_t i = 0; i < sizeof proc_tab / sizeof proc_tab[0]; i++)
		if (strcmp(proc_tab[i].name, want) == 0) {
			if (ver < proc_tab[i].min_ver) {
				if (status)
					*status = 2; /* CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT */
				return C_NOT_FOUND;
			}
			*pfn = proc_tab[i].fn;
			if (status)
				*status = 0;
			return C_OK;
		}
	return C_NOT_FOUND;
}

API CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, unsigned long long flags)
{
	return cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
}

/*
 * cuda.c: the CUDA driver API (libcuda.so.1), loaded with dlopen, for what
 * NVML does not say: SM count, memory clock and bus width, L2 size, and
 * how CUDA numbers the GPUs.  Types and attribute numbers from cuda.h
 * (CUDA driver API reference, CUdevice_attribute).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hw/hw_int.h"

typedef int cu_result;
typedef int cu_device;
typedef struct { unsigned char bytes[16]; } cu_uuid;

/* CUdevice_attribute values */
enum {
	CU_ATTR_SM_COUNT = 16,          /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
	CU_ATTR_MEM_CLOCK_KHZ = 36,     /* CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE */
	CU_ATTR_BUS_WIDTH = 37,         /* CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH */
	CU_ATTR_L2_BYTES = 38,          /* CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE */
	CU_ATTR_CC_MAJOR = 75,          /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
	CU_ATTR_CC_MINOR = 76,
};

struct cuda {
	void *lib;
	bool started;
	cu_result (*init)(unsigned int);
	cu_result (*driver_version)(int *);
	cu_result (*count)(int *);
	cu_result (*get)(cu_device *, int);
	cu_result (*attr)(int *, int, cu_device);
	cu_result (*uuid)(cu_uuid *, cu_device);
	cu_result (*error_string)(cu_result, const char **);
};

static const char *cu_err(const cuda *c, cu_result r)
{
	const char *s = NULL;
	if (c->error_string && c->error_string(r, &s) != 0)
		s = NULL;
	return s ? s : "unknown CUDA error";
}

cuda *cuda_load(char *path, size_t pathn, char *why, size_t whyn)
{
	const char *env = getenv("GPUWISE_CUDA_LIB");
	const char *name = env && *env ? env : "libcuda.so.1";
	path[0] = why[0] = '\0';
	dlerror();
	void *lib = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		snprintf(why, whyn, N_("cannot load '%s': %s"), name, e ? e : N_("not found"));
		return NULL;
	}
	cuda *c = xcalloc(1, sizeof *c);
	c->lib = lib;
	*(void **)&c->init = dlsym(lib, "cuInit");
	*(void **)&c->driver_version = dlsym(lib, "cuDriverGetVersion");
	*(void **)&c->count = dlsym(lib, "cuDeviceGetCount");
	*(void **)&c->get = dlsym(lib, "cuDeviceGet");
	*(void **)&c->attr = dlsym(lib, "cuDeviceGetAttribute");
	*(void **)&c->uuid = dlsym(lib, "cuDeviceGetUuid_v2");
	if (!c->uuid)
		*(void **)&c->uuid = dlsym(lib, "cuDeviceGetUuid");
	*(void **)&c->error_string = dlsym(lib, "cuGetErrorString");
	Dl_info info;
	if (c->init && dladdr(*(void **)&c->init, &info) && info.dli_fname)
		snprintf(path, pathn, "%s", info.dli_fname);
	else
		snprintf(path, pathn, "%s", name);
	if (!c->init || !c->count || !c->get) {
		snprintf(why, whyn, N_("'%s' lacks cuInit or cuDeviceGet"), path);
		cuda_close(c);
		return NULL;
	}
	return c;
}

int cuda_start(cuda *c, hw_val *version, char *why, size_t whyn)
{
	int v = 0;
	if (c->driver_version) {
		cu_result r = c->driver_version(&v);
		*version = r == 0 ? (hw_val){v, HW_OK, 0} : (hw_val){0, HW_FAILED, r};
	}
	cu_result r = c->init(0);
	if (r != 0) {
		snprintf(why, whyn, N_("cuInit failed: %s (CUDA error %d)"), cu_err(c, r), r);
		return -1;
	}
	c->started = true;
	return 0;
}

static void attr(cuda *c, cu_device d, int a, hw_val *out)
{
	int x = 0;
	if (!c->attr) {
		*out = (hw_val){0, HW_NO_SYMBOL, 0};
		return;
	}
	cu_result r = c->attr(&x, a, d);
	*out = r == 0 ? (hw_val){x, HW_OK, 0} : (hw_val){0, HW_FAILED, r};
}

static void fmt_uuid(const cu_uuid *u, char *out, size_t n)
{
	const unsigned char *b = u->bytes;
	snprintf(out, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

void cuda_attach(cuda *c, hw_gpu *gpus, size_t n, char *note, size_t noten)
{
	note[0] = '\0';
	int count = 0;
	if (!c || !c->started || c->count(&count) != 0 || !c->uuid)
		return;
	bool differ = false;
	size_t matched = 0;
	for (int k = 0; k < count; k++) {
		cu_device d;
		cu_uuid u;
		char s[64];
		if (c->get(&d, k) != 0 || c->uuid(&u, d) != 0)
			continue;
		fmt_uuid(&u, s, sizeof s);
		hw_gpu *g = NULL;
		for (size_t i = 0; i < n; i++)
			if (gpus[i].uuid[0] && strcasecmp(gpus[i].uuid, s) == 0)
				g = &gpus[i];
		if (!g)
			continue;
		matched++;
		g->cuda_ordinal = k;
		if (g->nvml_index != k)
			differ = true;
		attr(c, d, CU_ATTR_SM_COUNT, &g->sm_count);
		attr(c, d, CU_ATTR_MEM_CLOCK_KHZ, &g->mem_clock_khz);
		attr(c, d, CU_ATTR_BUS_WIDTH, &g->mem_bus_width_bits);
		attr(c, d, CU_ATTR_L2_BYTES, &g->l2_bytes);
		if (!HW_VALID(g->cc_major)) {
			attr(c, d, CU_ATTR_CC_MAJOR, &g->cc_major);
			attr(c, d, CU_ATTR_CC_MINOR, &g->cc_minor);
		}
		/* peak bandwidth = 2 (double data rate) x clock x bus width / 8
		 * (NVIDIA developer blog, "How to Implement Performance Metrics
		 * in CUDA C/C++", theoretical bandwidth) */
		if (HW_VALID(g->mem_clock_khz) && HW_VALID(g->mem_bus_width_bits))
			g->bandwidth_gbs = 2.0 * (double)g->mem_clock_khz.v * 1e3 *
					   ((double)g->mem_bus_width_bits.v / 8.0) / 1e9;
	}
	size_t nvml_gpus = 0;
	for (size_t i = 0; i < n; i++)
		if (gpus[i].nvml_index >= 0)
			nvml_gpus++;
	if (!differ && matched == nvml_gpus)
		return;
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	const char *order = getenv("CUDA_DEVICE_ORDER");
	strbuf sb = STRBUF_INIT;
	/* "; "-separated parts: status translates each (N_) */
	sb_puts(&sb, N_("CUDA numbers the GPUs differently from NVML and nvidia-smi"));
	if (cvd) {
		sb_puts(&sb, "; ");
		sb_printf(&sb, N_("CUDA_VISIBLE_DEVICES=%s shows %zu of %zu"), cvd, matched, nvml_gpus);
	}
	if (!order || strcmp(order, "PCI_BUS_ID") != 0) {
		sb_puts(&sb, "; ");
		sb_printf(&sb, N_("CUDA_DEVICE_ORDER is %s (fastest first), set CUDA_DEVICE_ORDER=PCI_BUS_ID to "
				  "match nvidia-smi"), order ? order : N_("unset"));
	}
	snprintf(note, noten, "%s", sb_str(&sb));
	sb_release(&sb);
}

void cuda_close(cuda *c)
{
	if (!c)
		return;
	dlclose(c->lib);
	free(c);
}

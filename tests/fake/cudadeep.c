/*
 * cudadeep.c: a fake libcuda.so.1 for `gpuwise doctor --deep`: the driver
 * API calls the deep test makes (primary context, memory, copies, module
 * loading, kernel launch) and `gpuwise bench` (attributes, events), with
 * "device" memory in host RAM.  It runs the kernels of gpuwise bench
 * (src/bench/kernels.cu, mma.cu) on the host, found by name in the PTX
 * gpuwise passes, so a wrong launch, argument or copy shows in the results.
 * GPUWISE_FAKE_DEEP=corrupt flips a bit on the way back (checksum failure);
 * GPUWISE_FAKE_DEEP=noinit makes cuInit fail (CUDA_ERROR_NO_DEVICE, 100);
 * GPUWISE_FAKE_DEEP_FREE_MB=N reports N MiB free (default and at most 256).
 * Return codes are the real CUresult values (cuda.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_NOT_FOUND = 500,
};

static int initialised;

static const char *mode(void)
{
	const char *m = getenv("GPUWISE_FAKE_DEEP");
	return m ? m : "";
}

CUresult cuInit(unsigned flags)
{
	(void)flags;
	if (strcmp(mode(), "noinit") == 0)
		return CUDA_ERROR_NO_DEVICE;
	initialised = 1;
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	*v = 12080;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
	if (!initialised)
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(int *dev, int ordinal)
{
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, int dev)
{
	(void)dev;
	snprintf(name, (size_t)len, "Fake Deep GPU");
	return CUDA_SUCCESS;
}

static int ctx_token;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	(void)dev;
	*ctx = &ctx_token;
	return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(int dev)
{
	(void)dev;
	return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(void *ctx)
{
	return ctx == &ctx_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuCtxSynchronize(void)
{
	return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(unsigned long long *d, size_t n)
{
	void *p = malloc(n);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*d = (unsigned long long)(uintptr_t)p;
	return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(unsigned long long d)
{
	free((void *)(uintptr_t)d);
	return CUDA_SUCCESS;
}
CUresult cuMemAllocHost_v2(void **p, size_t n)
{
	*p = malloc(n);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void *p)
{
	free(p);
	return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n)
{
	memcpy((void *)(uintptr_t)d, h, n);
	return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n)
{
	memcpy(h, (void *)(uintptr_t)d, n);
	if (strcmp(mode(), "corrupt") == 0 && n >= 4)
		((unsigned char *)h)[n / 2] ^= 0x10;
	return CUDA_SUCCESS;
}

/* ---- modules: the kernels of gpuwise bench, found by name in the PTX ---- */
enum { K_COPY, K_TRIAD, K_DOT, K_SUMSQ, K_FMA, K_MMA_F16, K_MMA_BF16, K_MMA_TF32, K_N };
static const char *const kernel_names[K_N] = {"gw_copy", "gw_triad", "gw_dot", "gw_sumsq",
					      "gw_fma", "gw_mma_f16", "gw_mma_bf16", "gw_mma_tf32"};
typedef struct fake_module {
	const char *image;
} fake_module;
typedef struct fake_function {
	int kernel;
} fake_function;
static fake_function functions[K_N];

CUresult cuModuleLoadData(void **mod, const void *image)
{
	/* PTX: text with a .version line and at least one entry */
	const char *t = image;
	if (!strstr(t, ".version") || !strstr(t, ".entry "))
		return CUDA_ERROR_INVALID_IMAGE;
	fake_module *m = malloc(sizeof *m);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->image = t;
	*mod = m;
	return CUDA_SUCCESS;
}
CUresult cuModuleUnload(void *mod)
{
	free(mod);
	return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	const fake_module *m = mod;
	char entry[96];
	snprintf(entry, sizeof entry, ".entry %s(", name);
	if (!m || !strstr(m->image, entry))
		return CUDA_ERROR_NOT_FOUND;
	for (int k = 0; k < K_N; k++)
		if (strcmp(name, kernel_names[k]) == 0) {
			functions[k].kernel = k;
			*fn = &functions[k];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

#define PTR(i, type) ((type *)(uintptr_t)*(unsigned long long *)params[i])

static void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* Run the kernel on the host with the grid-stride semantics of kernels.cu. */
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			unsigned shared, void *stream, void **params, void **extra)
{
	(void)gy, (void)gz, (void)by, (void)bz, (void)shared, (void)stream, (void)extra;
	if (!fn || !params || gx == 0 || bx == 0)
		return CUDA_ERROR_INVALID_VALUE;
	int k = ((fake_function *)fn)->kernel;
	uint64_t threads = (uint64_t)gx * bx;
	switch (k) {
	case K_COPY: {
		const double *a = PTR(0, const double);
		double *c = PTR(1, double);
		uint64_t n = *(unsigned long long *)params[2];
		memcpy(c, a, n * sizeof *a);
		break;
	}
	case K_TRIAD: {
		double *a = PTR(0, double);
		const double *b = PTR(1, const double), *c = PTR(2, const double);
		double sc = *(double *)params[3];
		uint64_t n = *(unsigned long long *)params[4];
		for (uint64_t i = 0; i < n; i++)
			a[i] = b[i] + sc * c[i];
		break;
	}
	case K_DOT:
	case K_SUMSQ: {
		/* one partial per block: element i belongs to block (i mod threads) / blockDim */
		double *part = PTR(k == K_DOT ? 2 : 1, double);
		uint64_t n = *(unsigned long long *)params[k == K_DOT ? 3 : 2];
		for (unsigned g = 0; g < gx; g++)
			part[g] = 0;
		for (uint64_t i = 0; i < n; i++) {
			double v;
			if (k == K_DOT) {
				v = PTR(0, const double)[i] * PTR(1, const double)[i];
			} else {
				float x = PTR(0, const float)[i];
				v = (double)(x * x);
			}
			part[(i % threads) / bx] += v;
		}
		break;
	}
	default: {
		/* throughput kernels: one value a thread, and a fixed millisecond of "work" */
		float *out = PTR(0, float);
		for (uint64_t t = 0; t < threads; t++)
			out[t] = 1.0f;
		spin_us(1000);
		break;
	}
	}
	return CUDA_SUCCESS;
}

/* ---- what gpuwise bench asks besides --deep's calls ---------------------- */
CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	switch (attr) {
	case 16: *v = 4; break;          /* SMs */
	case 36: *v = 7001000; break;    /* memory clock, kHz */
	case 37: *v = 384; break;        /* bus width, bits */
	case 38: *v = 6 << 20; break;    /* L2 */
	case 75: *v = 8; break;          /* compute capability 8.6 */
	case 76: *v = 6; break;
	default: *v = 0; break;
	}
	return CUDA_SUCCESS;
}
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	/* GPUWISE_FAKE_DEEP_FREE_MB: a smaller free figure makes gpuwise bench
	 * size its arrays down (to its floor of 3 x 8 MB at 32), for fast tests */
	const char *mb = getenv("GPUWISE_FAKE_DEEP_FREE_MB");
	long v = mb ? strtol(mb, NULL, 10) : 0;
	*free_bytes = (v > 0 && v <= 256 ? (size_t)v : 256u) << 20;
	*total = 512u << 20;
	return CUDA_SUCCESS;
}
typedef struct fake_event {
	struct timespec t;
} fake_event;
CUresult cuEventCreate(void **ev, unsigned flags)
{
	(void)flags;
	*ev = calloc(1, sizeof(fake_event));
	return *ev ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuEventRecord(void *ev, void *stream)
{
	(void)stream;
	clock_gettime(CLOCK_MONOTONIC, &((fake_event *)ev)->t);
	return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(void *ev)
{
	(void)ev;
	return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
	const fake_event *x = a, *y = b;
	*ms = (float)((double)(y->t.tv_sec - x->t.tv_sec) * 1e3 + (double)(y->t.tv_nsec - x->t.tv_nsec) / 1e6);
	return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(void *ev)
{
	free(ev);
	return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
	switch (r) {
	case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected"; break;
	case CUDA_ERROR_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
	default: *s = "fake error"; break;
	}
	return CUDA_SUCCESS;
}

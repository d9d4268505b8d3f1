/*
 * cudadeep.c: a fake libcuda.so.1 for `gpuwise doctor --deep`: the driver
 * API calls the deep test makes (primary context, memory, copies, module
 * loading, kernel launch), with "device" memory in host RAM.  The one
 * kernel it knows is gw_inc (add one to n 32-bit words), found by name in
 * the PTX gpuwise passes, so a wrong launch or copy shows in the checksum.
 * GPUWISE_FAKE_DEEP=corrupt flips a bit on the way back (checksum failure);
 * GPUWISE_FAKE_DEEP=noinit makes cuInit fail (CUDA_ERROR_NO_DEVICE, 100).
 * Return codes are the real CUresult values (cuda.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int module_token;
CUresult cuModuleLoadData(void **mod, const void *image)
{
	/* only PTX that defines the gw_inc entry is accepted */
	if (!strstr((const char *)image, ".entry gw_inc"))
		return CUDA_ERROR_INVALID_IMAGE;
	*mod = &module_token;
	return CUDA_SUCCESS;
}
CUresult cuModuleUnload(void *mod)
{
	(void)mod;
	return CUDA_SUCCESS;
}
static int function_token;
CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	if (mod != &module_token || strcmp(name, "gw_inc") != 0)
		return CUDA_ERROR_NOT_FOUND;
	*fn = &function_token;
	return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			unsigned shared, void *stream, void **params, void **extra)
{
	(void)gy, (void)gz, (void)by, (void)bz, (void)shared, (void)stream, (void)extra;
	if (fn != &function_token || !params)
		return CUDA_ERROR_INVALID_VALUE;
	uint32_t *p = (uint32_t *)(uintptr_t)*(unsigned long long *)params[0];
	uint32_t n = *(uint32_t *)params[1];
	uint64_t threads = (uint64_t)gx * bx;
	for (uint64_t i = 0; i < threads && i < n; i++)
		p[i] += 1;
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

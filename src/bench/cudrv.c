/*
 * bench/cudrv.c: the CUDA driver API loaded with dlopen (see cudrv.h).
 */
#include "bench/cudrv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cu_driver_strerror(const cu_driver *c, cu_result r, char *buf, size_t n)
{
	const char *s = NULL;
	if (!c->error_string || c->error_string(r, &s) != 0)
		s = NULL;
	snprintf(buf, n, "CUDA error %d%s%s", r, s ? ": " : "", s ? s : "");
	return buf;
}

bool cu_driver_load(cu_driver *c, char *why, size_t n)
{
	memset(c, 0, sizeof *c);
	const char *env = getenv("GPUWISE_CUDA_LIB");
	const char *name = env && *env ? env : "libcuda.so.1";
	c->lib = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	if (!c->lib) {
		const char *e = dlerror();
		snprintf(why, n, "cannot load '%s': %s", name, e ? e : "not found");
		return false;
	}
	*(void **)&c->error_string = dlsym(c->lib, "cuGetErrorString");
	struct {
		void **slot;
		const char *name;
	} need[] = {
		{(void **)&c->init, "cuInit"},
		{(void **)&c->count, "cuDeviceGetCount"},
		{(void **)&c->get, "cuDeviceGet"},
		{(void **)&c->name, "cuDeviceGetName"},
		{(void **)&c->attr, "cuDeviceGetAttribute"},
		{(void **)&c->retain, "cuDevicePrimaryCtxRetain"},
		{(void **)&c->release, "cuDevicePrimaryCtxRelease_v2"},
		{(void **)&c->set_current, "cuCtxSetCurrent"},
		{(void **)&c->mem_info, "cuMemGetInfo_v2"},
		{(void **)&c->alloc, "cuMemAlloc_v2"},
		{(void **)&c->free, "cuMemFree_v2"},
		{(void **)&c->host_alloc, "cuMemAllocHost_v2"},
		{(void **)&c->host_free, "cuMemFreeHost"},
		{(void **)&c->htod, "cuMemcpyHtoD_v2"},
		{(void **)&c->dtoh, "cuMemcpyDtoH_v2"},
		{(void **)&c->sync, "cuCtxSynchronize"},
		{(void **)&c->load, "cuModuleLoadData"},
		{(void **)&c->unload, "cuModuleUnload"},
		{(void **)&c->function, "cuModuleGetFunction"},
		{(void **)&c->launch, "cuLaunchKernel"},
		{(void **)&c->ev_create, "cuEventCreate"},
		{(void **)&c->ev_record, "cuEventRecord"},
		{(void **)&c->ev_sync, "cuEventSynchronize"},
		{(void **)&c->ev_elapsed, "cuEventElapsedTime"},
		{(void **)&c->ev_destroy, "cuEventDestroy_v2"},
	};
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		*need[i].slot = dlsym(c->lib, need[i].name);
		if (!*need[i].slot) {
			snprintf(why, n, "'%s' lacks %s", name, need[i].name);
			dlclose(c->lib);
			c->lib = NULL;
			return false;
		}
	}
	return true;
}

void cu_driver_close(cu_driver *c)
{
	if (c->lib)
		dlclose(c->lib);
	c->lib = NULL;
}

/*
 * bench/cudrv: the CUDA driver API, loaded at run time (libcuda.so.1, or
 * GPUWISE_CUDA_LIB) for gpuwise bench and doctor --deep alike.  The few
 * types and functions are declared here with their ABI names from cuda.h
 * (CUDA 13.0: cuMemAlloc -> cuMemAlloc_v2 ...), so nothing of the CUDA
 * toolkit is needed to build.
 */
#ifndef GW_BENCH_CUDRV_H
#define GW_BENCH_CUDRV_H

#include <stdbool.h>
#include <stddef.h>

typedef int cu_result;
typedef int cu_device;
typedef void *cu_context, *cu_module, *cu_function, *cu_event, *cu_stream;
typedef unsigned long long cu_ptr;

typedef struct cu_driver {
	void *lib;
	cu_result (*init)(unsigned);
	cu_result (*count)(int *);
	cu_result (*get)(cu_device *, int);
	cu_result (*name)(char *, int, cu_device);
	cu_result (*attr)(int *, int, cu_device);
	cu_result (*retain)(cu_context *, cu_device);
	cu_result (*release)(cu_device);
	cu_result (*set_current)(cu_context);
	cu_result (*sync)(void);
	cu_result (*mem_info)(size_t *, size_t *);
	cu_result (*alloc)(cu_ptr *, size_t);
	cu_result (*free)(cu_ptr);
	cu_result (*host_alloc)(void **, size_t);
	cu_result (*host_free)(void *);
	cu_result (*htod)(cu_ptr, const void *, size_t);
	cu_result (*dtoh)(void *, cu_ptr, size_t);
	cu_result (*load)(cu_module *, const void *);
	cu_result (*unload)(cu_module);
	cu_result (*function)(cu_function *, cu_module, const char *);
	cu_result (*launch)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			    cu_stream, void **, void **);
	cu_result (*ev_create)(cu_event *, unsigned);
	cu_result (*ev_record)(cu_event, cu_stream);
	cu_result (*ev_sync)(cu_event);
	cu_result (*ev_elapsed)(float *, cu_event, cu_event);
	cu_result (*ev_destroy)(cu_event);
	cu_result (*error_string)(cu_result, const char **);
} cu_driver;

/* Load the library and every function above; false with why set (the file,
 * or the first function it lacks) otherwise.  cu_driver_close releases it. */
bool cu_driver_load(cu_driver *c, char *why, size_t n);
void cu_driver_close(cu_driver *c);
/* "CUDA error 100: no CUDA-capable device is detected" into buf. */
const char *cu_driver_strerror(const cu_driver *c, cu_result r, char *buf, size_t n);

#endif

#!/usr/bin/env python3
"""A Python ctypes client of the CUDA driver for libgpuwise-cap's tests.

Loads the driver named by GPUWISE_CUDA_LIB (libcuda.so.1 by default) with
ctypes, as Python programs without a CUDA runtime do, and reaches
cuMemAlloc_v2 both by symbol (ctypes looks it up with dlsym) and through
cuGetProcAddress_v2 ("cuMemAlloc", CUDA 12.0).  Usage: captest.py SIZE...
allocates each SIZE both ways and prints one line per call.
"""
import ctypes
import os
import sys

lib = ctypes.CDLL(os.environ.get("GPUWISE_CUDA_LIB", "libcuda.so.1"))
CUresult = ctypes.c_int
CUdeviceptr = ctypes.c_ulonglong
ALLOC = ctypes.CFUNCTYPE(CUresult, ctypes.POINTER(CUdeviceptr), ctypes.c_size_t)
FREE = ctypes.CFUNCTYPE(CUresult, CUdeviceptr)
INFO = ctypes.CFUNCTYPE(CUresult, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))


def check(rc, what):
    if rc != 0:
        print("%s failed rc=%d" % (what, rc))
        sys.exit(1)


check(lib.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def proc(name, proto):
    fn = ctypes.c_void_p()
    status = ctypes.c_int(-1)
    gpa = lib.cuGetProcAddress_v2
    gpa.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_ulonglong,
                    ctypes.POINTER(ctypes.c_int)]
    check(gpa(name.encode(), ctypes.byref(fn), 12000, 0, ctypes.byref(status)), "cuGetProcAddress_v2 " + name)
    return proto(fn.value)


ways = {
    "symbol": (ALLOC(("cuMemAlloc_v2", lib)), FREE(("cuMemFree_v2", lib))),
    "procaddr": (proc("cuMemAlloc", ALLOC), proc("cuMemFree", FREE)),
}
info = proc("cuMemGetInfo", INFO)
free_b, total_b = ctypes.c_size_t(), ctypes.c_size_t()
check(info(ctypes.byref(free_b), ctypes.byref(total_b)), "cuMemGetInfo")
print("info free=%d total=%d" % (free_b.value, total_b.value))
for way, (alloc, free) in ways.items():
    held = []
    for arg in sys.argv[1:]:
        p = CUdeviceptr()
        rc = alloc(ctypes.byref(p), int(arg))
        print("%s alloc %s rc=%d" % (way, arg, rc))
        if rc == 0:
            held.append(p.value)
    for p in held:
        check(free(p), "free")

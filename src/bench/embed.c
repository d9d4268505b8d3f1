/*
 * The benchmark kernels, embedded as NUL-terminated text: the PTX the
 * driver JIT-compiles (generated from kernels.cu and mma.cu by `make ptx`)
 * and the OpenCL C source.  Paths are relative to the top of the tree,
 * where make runs the compiler.
 */
#include "bench/bench.h"

__asm__(".section .rodata\n"
	".global gw_bench_kernels_ptx\n"
	".type gw_bench_kernels_ptx, @object\n"
	"gw_bench_kernels_ptx:\n"
	".incbin \"src/bench/kernels.ptx\"\n"
	".byte 0\n"
	".global gw_bench_mma_ptx\n"
	".type gw_bench_mma_ptx, @object\n"
	"gw_bench_mma_ptx:\n"
	".incbin \"src/bench/mma.ptx\"\n"
	".byte 0\n"
	".global gw_bench_kernels_cl\n"
	".type gw_bench_kernels_cl, @object\n"
	"gw_bench_kernels_cl:\n"
	".incbin \"src/bench/kernels.cl\"\n"
	".byte 0\n"
	".previous\n");

/*
 * bench: why GPUs win, measured on this machine.  The sum of squares over
 * growing sizes (one CPU core, all cores, the GPU), STREAM's four kernels on
 * the CPU, and on each GPU the BabelStream-style memory kernels, host <->
 * device copies, FP32 FMA and tensor-core (mma.sync) throughput, each set
 * against the hardware's peak.  NVIDIA GPUs through the CUDA driver API
 * (dlopen, PTX JIT-compiled by the driver); other GPUs and CPUs through
 * OpenCL (dlopen libOpenCL.so.1).  Never prints; progress goes through a
 * callback.
 */
#ifndef GW_BENCH_H
#define GW_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* One measured figure. */
typedef struct bench_fig {
	char id[32];          /* stable key: "triad", "h2d_pinned", "mma_bf16" ... */
	char label[80];       /* words for the table */
	double value;         /* in unit */
	const char *unit;     /* "GB/s", "TFLOPS", "GFLOPS" */
	double peak;          /* same unit; 0 when unknown */
	char peak_from[96];   /* where the peak comes from */
	bool validated;       /* the result was checked against the expected value */
	char note[160];       /* how bytes or flops were counted, what was skipped */
} bench_fig;

/* One size of the sum of squares: best time per variant, ms (< 0: not run). */
typedef struct bench_sumsq {
	uint64_t n;
	double cpu1_ms;       /* one thread, plain loop */
	double cpu1_simd_ms;  /* one thread, vectorised */
	double cpu_all_ms;    /* every core, vectorised */
	double dev_ms;        /* the device (launch + reduction + result back); < 0 none */
	bool validated;
} bench_sumsq;

typedef enum { BENCH_DEV_CPU, BENCH_DEV_CUDA, BENCH_DEV_OPENCL } bench_dev_kind;

typedef struct bench_device {
	bench_dev_kind kind;
	char name[128];
	char detail[160];     /* "132 SMs, cc 9.0", "OpenCL 3.0 PoCL, CPU, 2 compute units" */
	int threads;          /* CPU: threads used */
	bool is_gpu;          /* a GPU (CUDA, or an OpenCL device of GPU type) */
	uint64_t stream_array_bytes; /* bytes of each array of the memory kernels; 0 none */
	bench_fig *figs;
	size_t n_figs;
	bench_sumsq *sumsq;
	size_t n_sumsq;
	uint64_t crossover_n; /* smallest measured size where the device beat every CPU core; 0 none */
	char error[256];      /* why this device could not be measured, "" if it was */
} bench_device;

/* Peaks a caller knows from the hardware layer and the catalog, per CUDA ordinal. */
typedef struct bench_peaks {
	int cuda_ordinal;
	double mem_gbs;       /* 0 unknown: then the device attributes are used */
	const char *mem_from;
	double pcie_gbs;      /* one direction; 0 unknown */
	const char *pcie_from;
	double fp32_tflops, fp16_tflops, bf16_tflops, tf32_tflops; /* dense; 0 unknown */
	const char *tflops_from;
} bench_peaks;

typedef struct bench_opts {
	bool quick;           /* under 10 s in all */
	int threads;          /* CPU threads; 0 = every online CPU */
	uint64_t max_n;       /* largest sum-of-squares size; 0 = by mode */
	int runs;             /* STREAM's NTIMES (best of runs-1 after the first); 0 = by mode */
	bool no_cuda, no_opencl, no_cpu;
	const bench_peaks *peaks;
	size_t n_peaks;
	void (*progress)(void *ctx, const char *what);
	void *progress_ctx;
} bench_opts;

typedef struct bench_report {
	bench_device *devs;   /* the CPU first, then CUDA devices, then OpenCL */
	size_t n_devs;
	char cuda_note[256];  /* why CUDA was not used, "" when it was */
	char opencl_note[256];
	double llc_bytes;     /* the CPU's last-level cache */
} bench_report;

int bench_run(const bench_opts *o, bench_report *out, gw_error *err);
void bench_report_release(bench_report *r);
/* The figure with this id, or NULL. */
const bench_fig *bench_find(const bench_device *d, const char *id);

/*
 * The cache of this machine's measured bandwidth (cache.c), for plan:
 * $GPUWISE_CACHE_DIR/bench.tsv, else $XDG_CACHE_HOME/gpuwise/bench.tsv, else
 * ~/.cache/gpuwise/bench.tsv.  One row per device with a validated Triad:
 * device ("cpu" or "gpu"), name, triad_gbs, date (UTC, YYYY-MM-DD), bench
 * version.  bench_cache_write replaces the file; 0 or a negative code.
 */
int bench_cache_write(const bench_report *r, const char *version, gw_error *err);
/*
 * The cached Triad GB/s of the device named name (case-insensitive; "cpu"
 * with kind "cpu" for the host); from gets "gpuwise bench VERSION on DATE".
 * 0 found, GW_ENOENT none (no cache, no such row).
 */
int bench_cache_lookup(const char *kind, const char *name, double *gbs, char *from, size_t n);
/*
 * The host memory an SMBIOS read found (as root: the tables are root-only),
 * kept for the runs that cannot read them: host-memory.tsv beside bench.tsv,
 * one row: desc ("DDR5-6000 x2 channels"), peak GB/s, date (UTC).  The
 * write replaces the file; the lookup fills desc and date.  0, or a
 * negative code (GW_ENOENT: no cache).
 */
int bench_cache_host_write(const char *desc, double gbs, gw_error *err);
int bench_cache_host_lookup(char *desc, size_t dn, double *gbs, char *date, size_t datn);

/*
 * Internal pieces, shared with doctor --deep: the embedded kernels.
 * gw_bench_kernels_ptx: gw_copy, gw_triad, gw_dot, gw_sumsq, gw_fma (sm_75+);
 * gw_bench_mma_ptx: gw_mma_f16, gw_mma_bf16, gw_mma_tf32 (sm_80+);
 * gw_bench_kernels_cl: the OpenCL C source.  NUL-terminated.
 */
extern const char gw_bench_kernels_ptx[];
extern const char gw_bench_mma_ptx[];
extern const char gw_bench_kernels_cl[];

#endif

/* bench internals shared by cpu.c, cuda.c, opencl.c and bench.c. */
#ifndef GW_BENCH_INTERNAL_H
#define GW_BENCH_INTERNAL_H

#include "bench/bench.h"

/* Sum-of-squares sizes 10^4 .. 10^k; the test data: x[i] = (i mod 7) - 3. */
#define BENCH_SUMSQ_MIN_N 10000ull
static inline float bench_sumsq_value(uint64_t i) { return (float)((int)(i % 7) - 3); }
/* The exact sum of squares of the test data's first n values. */
double bench_sumsq_expected(uint64_t n);

double bench_now_s(void);
bench_fig *bench_fig_add(bench_device *d, const char *id, const char *label, double value, const char *unit);
void bench_progress(const bench_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The sizes of the sum-of-squares series for these options (n_out <= 6). */
size_t bench_sumsq_sizes(const bench_opts *o, uint64_t *sizes, size_t max);

/* Each fills one device (or several) and never fails the whole run. */
void bench_cpu(const bench_opts *o, bench_device *d, double *llc_bytes);
void bench_cuda(const bench_opts *o, bench_report *r);
void bench_opencl(const bench_opts *o, bench_report *r);

#endif

/*
 * The NVIDIA half of gpuwise bench, through the CUDA driver API:
 * libcuda.so.1 (or GPUWISE_CUDA_LIB) loaded with dlopen, the few types and
 * functions declared here with their ABI names from cuda.h (CUDA 13.0:
 * cuMemAlloc -> cuMemAlloc_v2 ...), the kernels as PTX the driver
 * JIT-compiles, timed with CUDA events.  Shapes and byte counts follow
 * BabelStream (src/benchmark.h: Copy 2, Triad 3, Dot 2 arrays per element;
 * 2^25 doubles per array) and nvbandwidth (a copy counts its size once).
 */
#include "bench/cudrv.h"
#include "bench/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cu_driver cu;

/* cuda.h (CUDA 13.0) CUdevice_attribute values */
enum {
	CU_ATTR_CLOCK_RATE = 13,
	CU_ATTR_SM_COUNT = 16,
	CU_ATTR_MEM_CLOCK_RATE = 36,
	CU_ATTR_BUS_WIDTH = 37,
	CU_ATTR_L2_BYTES = 38,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
};

/* One device's session: the context, the two modules, two events. */
typedef struct sess {
	const cu *c;
	cu_module mod, mma;
	cu_event e0, e1;
	int sms;
	char err[200];
	cu_result r;
} sess;

#define CK(call)                                                                                                       \
	do {                                                                                                           \
		if ((s->r = (call)) != 0) {                                                                            \
			cu_driver_strerror(s->c, s->r, s->err, sizeof s->err);                                                     \
			goto out;                                                                                      \
		}                                                                                                      \
	} while (0)

/* Launch fn `reps` times after one warm-up; the best time in ms, < 0 on error. */
static double timed(sess *s, cu_function fn, unsigned grid, unsigned block, void **args, int reps)
{
	double best = INFINITY;
	CK(s->c->launch(fn, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL));
	CK(s->c->sync());
	for (int i = 0; i < reps; i++) {
		float ms = 0;
		CK(s->c->ev_record(s->e0, NULL));
		CK(s->c->launch(fn, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL));
		CK(s->c->ev_record(s->e1, NULL));
		CK(s->c->ev_sync(s->e1));
		CK(s->c->ev_elapsed(&ms, s->e0, s->e1));
		if (ms > 0 && ms < best)
			best = ms;
	}
	return isfinite(best) ? best : 1e-6;
out:
	return -1;
}

static const bench_peaks *peaks_for(const bench_opts *o, int ordinal)
{
	for (size_t i = 0; i < o->n_peaks; i++)
		if (o->peaks[i].cuda_ordinal == ordinal)
			return &o->peaks[i];
	return NULL;
}

static void set_peak(bench_fig *f, double peak, const char *from)
{
	if (peak > 0) {
		f->peak = peak;
		snprintf(f->peak_from, sizeof f->peak_from, "%s", from ? from : "");
	}
}

/* The device's memory, copies and reduction; false when a step failed. */
static bool memory_figs(const bench_opts *o, sess *s, bench_device *d, double mem_peak, const char *mem_from,
			double pcie_peak, const char *pcie_from)
{
	const cu *c = s->c;
	cu_ptr a = 0, b = 0, cc = 0, part = 0;
	void *pinned = NULL, *pageable = NULL;
	double *host = NULL;
	bool ok = false;
	uint64_t n = o->quick ? (1ull << 25) : (1ull << 27);
	size_t freeb = 0, totalb = 0;
	if (c->mem_info(&freeb, &totalb) == 0 && freeb > 0)
		while (n > (1ull << 20) && (double)n * 8 * 3 > (double)freeb * 0.8)
			n /= 2;
	size_t bytes = (size_t)(n * 8);
	unsigned block = 256, grid = (unsigned)((n + block - 1) / block);
	unsigned dot_grid = (unsigned)(s->sms > 0 ? s->sms * 16 : 1024);
	int reps = o->quick ? 10 : 50;
	cu_function f_copy, f_triad, f_dot;
	CK(c->function(&f_copy, s->mod, "gw_copy"));
	CK(c->function(&f_triad, s->mod, "gw_triad"));
	CK(c->function(&f_dot, s->mod, "gw_dot"));
	CK(c->alloc(&a, bytes));
	CK(c->alloc(&b, bytes));
	CK(c->alloc(&cc, bytes));
	CK(c->alloc(&part, dot_grid * sizeof(double)));
	host = malloc(bytes);
	if (!host) {
		snprintf(s->err, sizeof s->err, "cannot allocate %zu bytes of host memory", bytes);
		goto out;
	}
	/* BabelStream's start values: a = 0.1, b = 0.2, scalar 0.4 */
	const double a0 = 0.1, b0 = 0.2, sc = 0.4;
	for (uint64_t i = 0; i < n; i++)
		host[i] = a0;
	CK(c->htod(a, host, bytes));
	for (uint64_t i = 0; i < n; i++)
		host[i] = b0;
	CK(c->htod(b, host, bytes));
	d->stream_array_bytes = bytes;
	bench_progress(o, "%s: device Copy, Triad and Dot over 3 x %.0f MB", d->name, (double)bytes / 1e6);
	void *copy_args[] = {&a, &cc, &n};
	double t_copy = timed(s, f_copy, grid, block, copy_args, reps);
	if (t_copy < 0)
		goto out;
	double sv = sc;
	void *triad_args[] = {&a, &b, &cc, &sv, &n};
	/* the triad reads c = a (the copy above) and writes a: fixed inputs, one value */
	double t_triad = timed(s, f_triad, grid, block, triad_args, reps);
	if (t_triad < 0)
		goto out;
	void *dot_args[] = {&a, &b, &part, &n};
	double t_dot = timed(s, f_dot, dot_grid, block, dot_args, reps);
	if (t_dot < 0)
		goto out;
	/* validate: c = a0; a = b0 + sc * a0; dot = n * a * b0 */
	double want_c = a0, want_a = b0 + sc * a0;
	double *parts = xcalloc(dot_grid, sizeof *parts);
	CK(c->dtoh(parts, part, dot_grid * sizeof(double)));
	double dot = 0;
	for (unsigned i = 0; i < dot_grid; i++)
		dot += parts[i];
	free(parts);
	CK(c->dtoh(host, cc, bytes));
	bool valid = true;
	for (uint64_t i = 0; i < n; i++)
		valid &= host[i] == want_c;
	CK(c->dtoh(host, a, bytes));
	for (uint64_t i = 0; i < n; i++)
		valid &= fabs(host[i] - want_a) <= 1e-15;
	double want_dot = (double)n * want_a * b0;
	valid &= fabs(dot - want_dot) <= 1e-9 * want_dot;

	bench_fig *f = bench_fig_add(d, "copy", "device Copy", 2.0 * (double)bytes / t_copy / 1e6, "GB/s");
	set_peak(f, mem_peak, mem_from);
	f->validated = valid;
	snprintf(f->note, sizeof f->note, "2 arrays of %.0f MB per pass, best of %d", (double)bytes / 1e6, reps);
	f = bench_fig_add(d, "triad", "device Triad", 3.0 * (double)bytes / t_triad / 1e6, "GB/s");
	set_peak(f, mem_peak, mem_from);
	f->validated = valid;
	snprintf(f->note, sizeof f->note, "3 arrays per pass (no write-allocate), best of %d", reps);
	f = bench_fig_add(d, "dot", "device Dot (two-stage reduction)", 2.0 * (double)bytes / t_dot / 1e6, "GB/s");
	set_peak(f, mem_peak, mem_from);
	f->validated = valid;
	snprintf(f->note, sizeof f->note, "%u blocks of %u, one partial each, summed on the host", dot_grid, block);
	if (!valid)
		snprintf(d->error, sizeof d->error, "device kernel results failed validation");

	/* host <-> device, pinned and pageable: the size counted once (nvbandwidth) */
	size_t xfer = o->quick ? (256u << 20) : (1024u << 20);
	if (xfer > bytes)
		xfer = bytes;
	bench_progress(o, "%s: host <-> device copies, %.0f MB", d->name, (double)xfer / 1e6);
	CK(c->host_alloc(&pinned, xfer));
	pageable = malloc(xfer);
	if (!pageable) {
		snprintf(s->err, sizeof s->err, "cannot allocate %zu bytes of host memory", xfer);
		goto out;
	}
	memset(pinned, 0x3c, xfer);
	memset(pageable, 0x3c, xfer);
	struct {
		const char *id, *label;
		void *buf;
		bool to_dev;
	} xf[4] = {
		{"h2d_pinned", "host to device, pinned", pinned, true},
		{"d2h_pinned", "device to host, pinned", pinned, false},
		{"h2d_pageable", "host to device, pageable", pageable, true},
		{"d2h_pageable", "device to host, pageable", pageable, false},
	};
	int xreps = o->quick ? 3 : 10;
	for (int k = 0; k < 4; k++) {
		double best = INFINITY;
		for (int i = 0; i <= xreps; i++) {
			float ms = 0;
			CK(c->ev_record(s->e0, NULL));
			if (xf[k].to_dev)
				CK(c->htod(a, xf[k].buf, xfer));
			else
				CK(c->dtoh(xf[k].buf, a, xfer));
			CK(c->ev_record(s->e1, NULL));
			CK(c->ev_sync(s->e1));
			CK(c->ev_elapsed(&ms, s->e0, s->e1));
			if (i > 0 && ms > 0 && ms < best)
				best = ms;
		}
		if (!isfinite(best))
			best = 1e-6;
		f = bench_fig_add(d, xf[k].id, xf[k].label, (double)xfer / best / 1e6, "GB/s");
		set_peak(f, pcie_peak, pcie_from);
		f->validated = true;
		snprintf(f->note, sizeof f->note, "%.0f MB counted once, best of %d after one warm-up", (double)xfer / 1e6,
			 xreps);
	}
	ok = true;
out:
	if (a)
		c->free(a);
	if (b)
		c->free(b);
	if (cc)
		c->free(cc);
	if (part)
		c->free(part);
	if (pinned)
		c->host_free(pinned);
	free(pageable);
	free(host);
	return ok;
}

/* The sum of squares on the device at each size: launch + reduction + partials back + host sum. */
static bool sumsq_figs(const bench_opts *o, sess *s, bench_device *d)
{
	const cu *c = s->c;
	uint64_t sizes[8];
	size_t ns = bench_sumsq_sizes(o, sizes, 8);
	cu_ptr x = 0, part = 0;
	float *h = NULL;
	double *parts = NULL;
	bool ok = false;
	size_t freeb = 0, totalb = 0;
	if (c->mem_info(&freeb, &totalb) == 0 && freeb > 0)
		while (ns > 1 && (double)sizes[ns - 1] * 4 > (double)freeb * 0.8)
			ns--;
	if (!ns)
		return true;
	uint64_t top = sizes[ns - 1];
	unsigned block = 256, maxgrid = (unsigned)(s->sms > 0 ? s->sms * 16 : 1024);
	cu_function fn;
	CK(c->function(&fn, s->mod, "gw_sumsq"));
	CK(c->alloc(&x, (size_t)top * 4));
	CK(c->alloc(&part, maxgrid * sizeof(double)));
	h = malloc((size_t)top * 4);
	parts = xcalloc(maxgrid, sizeof *parts);
	if (!h) {
		snprintf(s->err, sizeof s->err, "cannot allocate %llu bytes of host memory", (unsigned long long)top * 4);
		goto out;
	}
	for (uint64_t i = 0; i < top; i++)
		h[i] = bench_sumsq_value(i);
	CK(c->htod(x, h, (size_t)top * 4));
	d->sumsq = xcalloc(ns, sizeof *d->sumsq);
	for (size_t k = 0; k < ns; k++) {
		uint64_t n = sizes[k];
		bench_progress(o, "%s: sum of squares of %llu numbers", d->name, (unsigned long long)n);
		unsigned grid = (unsigned)((n + block - 1) / block);
		if (grid > maxgrid)
			grid = maxgrid;
		void *args[] = {&x, &part, &n};
		double r = 3e8 / (double)n;
		int reps = r < 3 ? 3 : r > 50 ? 50 : (int)r;
		double best = INFINITY;
		bool valid = true;
		for (int i = 0; i <= reps; i++) {
			double t0 = bench_now_s();
			CK(c->launch(fn, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL));
			CK(c->dtoh(parts, part, grid * sizeof(double)));
			double sum = 0;
			for (unsigned g = 0; g < grid; g++)
				sum += parts[g];
			double dt = bench_now_s() - t0;
			valid &= sum == bench_sumsq_expected(n);
			if (i > 0 && dt < best)
				best = dt;
		}
		bench_sumsq *q = &d->sumsq[d->n_sumsq++];
		q->n = n;
		q->cpu1_ms = q->cpu1_simd_ms = q->cpu_all_ms = -1;
		q->dev_ms = best * 1e3;
		q->validated = valid;
		if (!valid)
			snprintf(d->error, sizeof d->error, "the device's sum of squares of %llu numbers is wrong",
				 (unsigned long long)n);
	}
	ok = true;
out:
	if (x)
		c->free(x);
	if (part)
		c->free(part);
	free(h);
	free(parts);
	return ok;
}

/* FP32 FMA and mma.sync throughput, TFLOPS. */
static bool compute_figs(const bench_opts *o, sess *s, bench_device *d, int cc_major, const bench_peaks *pk)
{
	const cu *c = s->c;
	cu_ptr out_buf = 0;
	bool ok = false;
	unsigned block = 256, grid = (unsigned)((s->sms > 0 ? s->sms : 16) * 8);
	int reps = o->quick ? 3 : 10;
	CK(c->alloc(&out_buf, (size_t)grid * block * sizeof(float)));
	bench_progress(o, "%s: FP32 FMA and tensor-core throughput", d->name);
	cu_function fn;
	CK(c->function(&fn, s->mod, "gw_fma"));
	float fa = 0.999f, fb = 0.001f;
	int iters = o->quick ? 8192 : 32768;
	void *fargs[] = {&out_buf, &fa, &fb, &iters};
	double ms = timed(s, fn, grid, block, fargs, reps);
	if (ms < 0)
		goto out;
	double flops = 2.0 * 8.0 * iters * (double)grid * block;
	bench_fig *f = bench_fig_add(d, "fp32_fma", "FP32 FMA (CUDA cores)", flops / ms / 1e9, "TFLOPS");
	if (pk)
		set_peak(f, pk->fp32_tflops, pk->tflops_from);
	f->validated = true;
	snprintf(f->note, sizeof f->note, "8 independent FMA chains a thread, 2 flops an FMA");
	if (cc_major < 8 || !s->mma) {
		f = bench_fig_add(d, "mma_fp16", "tensor cores, mma.sync", 0, "TFLOPS");
		snprintf(f->note, sizeof f->note, "not measured: the mma.sync kernels need compute capability 8.0");
		ok = true;
		goto out;
	}
	static const struct {
		const char *id, *label, *fn;
		double flops_per_mma;
		int peak; /* 0 fp16, 1 bf16, 2 tf32 */
	} m[3] = {
		{"mma_fp16", "tensor cores fp16 (mma.sync m16n8k16)", "gw_mma_f16", 2.0 * 16 * 8 * 16, 0},
		{"mma_bf16", "tensor cores bf16 (mma.sync m16n8k16)", "gw_mma_bf16", 2.0 * 16 * 8 * 16, 1},
		{"mma_tf32", "tensor cores tf32 (mma.sync m16n8k8)", "gw_mma_tf32", 2.0 * 16 * 8 * 8, 2},
	};
	unsigned a0 = 0x3c003c00u; /* two fp16 1.0s */
	int miters = o->quick ? 256 : 1024; /* H200 quick: ~0.06 s a launch */
	for (int k = 0; k < 3; k++) {
		CK(c->function(&fn, s->mma, m[k].fn));
		void *margs[] = {&out_buf, &a0, &miters};
		ms = timed(s, fn, grid, block, margs, reps);
		if (ms < 0)
			goto out;
		double warps = (double)grid * block / 32.0;
		flops = warps * miters * 4.0 * m[k].flops_per_mma;
		f = bench_fig_add(d, m[k].id, m[k].label, flops / ms / 1e9, "TFLOPS");
		if (pk)
			set_peak(f, m[k].peak == 0 ? pk->fp16_tflops : m[k].peak == 1 ? pk->bf16_tflops : pk->tf32_tflops,
				 pk->tflops_from);
		f->validated = true;
		snprintf(f->note, sizeof f->note, "4 independent tiles a warp, dense, FP32 accumulate");
	}
	ok = true;
out:
	if (out_buf)
		c->free(out_buf);
	return ok;
}

static void one_device(const bench_opts *o, const cu *c, int ordinal, bench_device *d)
{
	sess st = {.c = c}, *s = &st;
	cu_device dev;
	cu_context ctx;
	bool retained = false;
	d->kind = BENCH_DEV_CUDA;
	d->is_gpu = true;
	snprintf(d->name, sizeof d->name, "CUDA device %d", ordinal);
	CK(c->get(&dev, ordinal));
	char name[128] = "";
	if (c->name(name, sizeof name, dev) == 0 && *name)
		snprintf(d->name, sizeof d->name, "%s", name);
	int ccmaj = 0, ccmin = 0, memclk = 0, bus = 0, l2 = 0;
	c->attr(&s->sms, CU_ATTR_SM_COUNT, dev);
	c->attr(&ccmaj, CU_ATTR_CC_MAJOR, dev);
	c->attr(&ccmin, CU_ATTR_CC_MINOR, dev);
	c->attr(&memclk, CU_ATTR_MEM_CLOCK_RATE, dev);
	c->attr(&bus, CU_ATTR_BUS_WIDTH, dev);
	c->attr(&l2, CU_ATTR_L2_BYTES, dev);
	snprintf(d->detail, sizeof d->detail, "%d SMs, compute capability %d.%d, L2 %.0f MiB", s->sms, ccmaj, ccmin,
		 l2 / 1048576.0);
	bench_progress(o, "%s: context and kernels", d->name);
	CK(c->retain(&ctx, dev));
	retained = true;
	CK(c->set_current(ctx));
	CK(c->load(&s->mod, gw_bench_kernels_ptx));
	if (ccmaj >= 8 && c->load(&s->mma, gw_bench_mma_ptx) != 0)
		s->mma = NULL;
	CK(c->ev_create(&s->e0, 0));
	CK(c->ev_create(&s->e1, 0));

	/* memory peak: 2 x memory clock x bus width (mixbench's lcutil.h formula), else the caller's */
	const bench_peaks *pk = peaks_for(o, ordinal);
	double mem_peak = memclk > 0 && bus > 0 ? 2.0 * memclk * 1e3 * (bus / 8.0) / 1e9 : 0;
	const char *mem_from = "2 x memory clock x bus width (device attributes)";
	char mem_from_buf[96];
	if (mem_peak <= 0 && pk && pk->mem_gbs > 0) {
		mem_peak = pk->mem_gbs;
		mem_from = pk->mem_from;
	} else if (pk && pk->mem_gbs > 0 && fabs(pk->mem_gbs - mem_peak) > 0.05 * pk->mem_gbs) {
		snprintf(mem_from_buf, sizeof mem_from_buf, "device attributes (the catalog says %.0f GB/s)", pk->mem_gbs);
		mem_from = mem_from_buf;
	}
	if (!memory_figs(o, s, d, mem_peak, mem_from, pk ? pk->pcie_gbs : 0, pk ? pk->pcie_from : NULL) ||
	    !sumsq_figs(o, s, d) || !compute_figs(o, s, d, ccmaj, pk))
		goto out;
out:
	if (s->r && !*d->error)
		snprintf(d->error, sizeof d->error, "%s", s->err);
	if (s->e0)
		c->ev_destroy(s->e0);
	if (s->e1)
		c->ev_destroy(s->e1);
	if (s->mma)
		c->unload(s->mma);
	if (s->mod)
		c->unload(s->mod);
	if (retained)
		c->release(dev);
}

void bench_cuda(const bench_opts *o, bench_report *r)
{
	cu c;
	char why[256], e[200];
	if (!cu_driver_load(&c, why, sizeof why)) {
		snprintf(r->cuda_note, sizeof r->cuda_note, "no CUDA driver: %s", why);
		return;
	}
	int n = 0;
	cu_result rc = c.init(0);
	if (!rc)
		rc = c.count(&n);
	if (rc) {
		snprintf(r->cuda_note, sizeof r->cuda_note, "the CUDA driver does not initialise: %s",
			 cu_driver_strerror(&c, rc, e, sizeof e));
	} else if (n == 0) {
		snprintf(r->cuda_note, sizeof r->cuda_note, "the CUDA driver sees no device");
	}
	for (int i = 0; !rc && i < n; i++) {
		r->devs = xrealloc(r->devs, (r->n_devs + 1) * sizeof *r->devs);
		bench_device *d = &r->devs[r->n_devs++];
		memset(d, 0, sizeof *d);
		one_device(o, &c, i, d);
	}
	cu_driver_close(&c);
}

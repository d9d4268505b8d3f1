/*
 * The OpenCL half of gpuwise bench: AMD and Intel GPUs (and CPUs through
 * PoCL, which is how CI runs every kernel for real).  libOpenCL.so.1 (the
 * ICD loader, or GPUWISE_OPENCL_LIB) is loaded with dlopen; the few types,
 * constants (CL/cl.h, OpenCL 3.0 headers 2023.02.06) and functions are
 * declared here.  Kernels: src/bench/kernels.cl, float32, timed with
 * profiling events; each result is checked.  NVIDIA devices are left to the
 * CUDA half when it measured them.
 */
#include "bench/internal.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef void *cl_platform_id, *cl_device_id, *cl_context, *cl_command_queue, *cl_program, *cl_kernel, *cl_mem,
	*cl_event;

#define CL_PLATFORM_NAME 0x0902
#define CL_DEVICE_TYPE_CPU (1 << 1)
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_VENDOR_ID 0x1001
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_GLOBAL_MEM_CACHE_SIZE 0x101E
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VERSION 0x102F
#define CL_QUEUE_PROFILING_ENABLE (1 << 1)
#define CL_MEM_READ_WRITE (1 << 0)
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283
#define CL_TRUE 1
#define PCI_VENDOR_NVIDIA 0x10de

typedef struct ocl {
	void *lib;
	cl_int (*platforms)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*platform_info)(cl_platform_id, cl_uint, size_t, void *, size_t *);
	cl_int (*devices)(cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*device_info)(cl_device_id, cl_uint, size_t, void *, size_t *);
	cl_context (*context)(const intptr_t *, cl_uint, const cl_device_id *, void *, void *, cl_int *);
	cl_command_queue (*queue)(cl_context, cl_device_id, cl_bitfield, cl_int *);
	cl_program (*program)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
	cl_int (*build)(cl_program, cl_uint, const cl_device_id *, const char *, void *, void *);
	cl_int (*build_info)(cl_program, cl_device_id, cl_uint, size_t, void *, size_t *);
	cl_kernel (*kernel)(cl_program, const char *, cl_int *);
	cl_int (*arg)(cl_kernel, cl_uint, size_t, const void *);
	cl_mem (*buffer)(cl_context, cl_bitfield, size_t, void *, cl_int *);
	cl_int (*write)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint, const cl_event *,
			cl_event *);
	cl_int (*read)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint, const cl_event *,
		       cl_event *);
	cl_int (*ndrange)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,
			  const cl_event *, cl_event *);
	cl_int (*finish)(cl_command_queue);
	cl_int (*wait)(cl_uint, const cl_event *);
	cl_int (*profiling)(cl_event, cl_uint, size_t, void *, size_t *);
	cl_int (*rel_event)(cl_event);
	cl_int (*rel_mem)(cl_mem);
	cl_int (*rel_kernel)(cl_kernel);
	cl_int (*rel_program)(cl_program);
	cl_int (*rel_queue)(cl_command_queue);
	cl_int (*rel_context)(cl_context);
} ocl;

static bool ocl_load(ocl *c, char *why, size_t n)
{
	memset(c, 0, sizeof *c);
	const char *env = getenv("GPUWISE_OPENCL_LIB");
	const char *name = env && *env ? env : "libOpenCL.so.1";
	c->lib = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	if (!c->lib) {
		const char *e = dlerror();
		snprintf(why, n, "cannot load '%s': %s", name, e ? e : "not found");
		return false;
	}
	struct {
		void **slot;
		const char *name;
	} need[] = {
		{(void **)&c->platforms, "clGetPlatformIDs"},
		{(void **)&c->platform_info, "clGetPlatformInfo"},
		{(void **)&c->devices, "clGetDeviceIDs"},
		{(void **)&c->device_info, "clGetDeviceInfo"},
		{(void **)&c->context, "clCreateContext"},
		{(void **)&c->queue, "clCreateCommandQueue"},
		{(void **)&c->program, "clCreateProgramWithSource"},
		{(void **)&c->build, "clBuildProgram"},
		{(void **)&c->build_info, "clGetProgramBuildInfo"},
		{(void **)&c->kernel, "clCreateKernel"},
		{(void **)&c->arg, "clSetKernelArg"},
		{(void **)&c->buffer, "clCreateBuffer"},
		{(void **)&c->write, "clEnqueueWriteBuffer"},
		{(void **)&c->read, "clEnqueueReadBuffer"},
		{(void **)&c->ndrange, "clEnqueueNDRangeKernel"},
		{(void **)&c->finish, "clFinish"},
		{(void **)&c->wait, "clWaitForEvents"},
		{(void **)&c->profiling, "clGetEventProfilingInfo"},
		{(void **)&c->rel_event, "clReleaseEvent"},
		{(void **)&c->rel_mem, "clReleaseMemObject"},
		{(void **)&c->rel_kernel, "clReleaseKernel"},
		{(void **)&c->rel_program, "clReleaseProgram"},
		{(void **)&c->rel_queue, "clReleaseCommandQueue"},
		{(void **)&c->rel_context, "clReleaseContext"},
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

typedef struct osess {
	const ocl *c;
	cl_context ctx;
	cl_command_queue q;
	cl_program prog;
	bool cpu;
	size_t cus, maxwg;
	char err[200];
	cl_int r;
} osess;

#define OK(call)                                                                                                       \
	do {                                                                                                           \
		if ((s->r = (call)) != 0) {                                                                            \
			snprintf(s->err, sizeof s->err, "%s failed: OpenCL error %d", #call, (int)s->r);               \
			goto out;                                                                                      \
		}                                                                                                      \
	} while (0)

/* Run a kernel over global items (local 0 = the runtime's choice); the event's time in ms, < 0 on error. */
static double run_kernel(osess *s, cl_kernel k, size_t global, size_t local)
{
	cl_event ev = NULL;
	cl_ulong t0 = 0, t1 = 0;
	double ms = -1;
	OK(s->c->ndrange(s->q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL, &ev));
	OK(s->c->wait(1, &ev));
	OK(s->c->profiling(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
	OK(s->c->profiling(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
	ms = t1 > t0 ? (double)(t1 - t0) / 1e6 : 1e-6;
out:
	if (ev)
		s->c->rel_event(ev);
	return ms;
}

static double best_of(osess *s, cl_kernel k, size_t global, size_t local, int reps)
{
	double best = INFINITY;
	for (int i = 0; i <= reps; i++) {
		double ms = run_kernel(s, k, global, local);
		if (ms < 0)
			return -1;
		if (i > 0 && ms < best)
			best = ms;
	}
	return best;
}

/*
 * The reduction's shape per device type (BabelStream's rule: few work-groups
 * on a CPU, CUs x 4 groups of up to 256 on a GPU), with at least one
 * partial per 2^20 elements so that every float partial of the test data
 * stays an exact integer (below 2^24).  Returns the number of partials.
 */
static size_t reduce_shape(const osess *s, uint64_t n, size_t *global, size_t *local)
{
	size_t cus = s->cus ? s->cus : 1;
	size_t need = (size_t)((n + (1u << 20) - 1) >> 20);
	if (s->cpu) {
		size_t items = cus * 8 > need ? cus * 8 : need;
		*local = 1;
		*global = items;
		return items;
	}
	size_t l = 1; /* the tree reduction needs a power of two */
	size_t lim = s->maxwg >= 256 ? 256 : s->maxwg ? s->maxwg : 1;
	while (l * 2 <= lim)
		l *= 2;
	size_t groups = cus * 4 > need ? cus * 4 : need;
	*local = l;
	*global = groups * l;
	return groups;
}

static bool measure(const bench_opts *o, osess *s, bench_device *d, uint64_t max_alloc, uint64_t global_mem)
{
	const ocl *c = s->c;
	cl_mem a = NULL, b = NULL, cm = NULL, part = NULL, x = NULL;
	cl_kernel kc = NULL, kt = NULL, kr = NULL;
	float *host = NULL, *parts = NULL;
	bool ok = false;
	uint64_t n = o->quick ? (1ull << 24) : (1ull << 26);
	while (n > (1ull << 16) && ((double)n * 4 > (double)max_alloc || (double)n * 4 * 3 > 0.6 * (double)global_mem))
		n /= 2;
	size_t bytes = (size_t)n * 4;
	size_t rglobal, local;
	size_t groups = reduce_shape(s, n, &rglobal, &local);
	int reps = o->quick ? 5 : 20;
	cl_int e = 0;
	host = malloc(bytes);
	parts = calloc(groups, sizeof *parts);
	if (!host || !parts) {
		snprintf(s->err, sizeof s->err, "cannot allocate %zu bytes of host memory", bytes);
		goto out;
	}
	a = c->buffer(s->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
	if (!e)
		b = c->buffer(s->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
	if (!e)
		cm = c->buffer(s->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
	if (!e)
		part = c->buffer(s->ctx, CL_MEM_READ_WRITE, groups * sizeof(float), NULL, &e);
	if (!e)
		kc = c->kernel(s->prog, "gw_copy", &e);
	if (!e)
		kt = c->kernel(s->prog, s->cpu ? "gw_triad" : "gw_triad", &e);
	if (!e)
		kr = c->kernel(s->prog, s->cpu ? "gw_reduce_chunked" : "gw_reduce_strided", &e);
	if (e) {
		s->r = e;
		snprintf(s->err, sizeof s->err, "cannot set up buffers and kernels: OpenCL error %d", (int)e);
		goto out;
	}
	/* a = 1, b = 0.5, scalar 2: copy c = 1, triad a = 2.5, dot 1.25 an element, all exact in float */
	for (uint64_t i = 0; i < n; i++)
		host[i] = 1.0f;
	OK(c->write(s->q, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	for (uint64_t i = 0; i < n; i++)
		host[i] = 0.5f;
	OK(c->write(s->q, b, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	cl_ulong nn = n;
	float sc = 2.0f;
	int op = 0;
	OK(c->arg(kc, 0, sizeof a, &a));
	OK(c->arg(kc, 1, sizeof cm, &cm));
	OK(c->arg(kc, 2, sizeof nn, &nn));
	OK(c->arg(kt, 0, sizeof a, &a));
	OK(c->arg(kt, 1, sizeof b, &b));
	OK(c->arg(kt, 2, sizeof cm, &cm));
	OK(c->arg(kt, 3, sizeof sc, &sc));
	OK(c->arg(kt, 4, sizeof nn, &nn));
	OK(c->arg(kr, 0, sizeof a, &a));
	OK(c->arg(kr, 1, sizeof b, &b));
	OK(c->arg(kr, 2, sizeof part, &part));
	OK(c->arg(kr, 3, local * sizeof(float), NULL));
	OK(c->arg(kr, 4, sizeof nn, &nn));
	OK(c->arg(kr, 5, sizeof op, &op));
	d->stream_array_bytes = bytes;
	bench_progress(o, "%s: Copy, Triad and Dot over 3 x %.0f MB", d->name, (double)bytes / 1e6);
	size_t gl = (size_t)((n + 255) / 256 * 256);
	double t_copy = best_of(s, kc, gl, s->cpu ? 0 : 256 <= s->maxwg ? 256 : 0, reps);
	if (t_copy < 0)
		goto out;
	double t_triad = best_of(s, kt, gl, s->cpu ? 0 : 256 <= s->maxwg ? 256 : 0, reps);
	if (t_triad < 0)
		goto out;
	double t_dot = best_of(s, kr, rglobal, local, reps);
	if (t_dot < 0)
		goto out;
	OK(c->read(s->q, part, CL_TRUE, 0, groups * sizeof(float), parts, 0, NULL, NULL));
	double dot = 0;
	for (size_t g = 0; g < groups; g++)
		dot += parts[g];
	bool valid = dot == 1.25 * (double)n;
	OK(c->read(s->q, cm, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	for (uint64_t i = 0; i < n; i++)
		valid &= host[i] == 1.0f;
	OK(c->read(s->q, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	for (uint64_t i = 0; i < n; i++)
		valid &= host[i] == 2.5f;
	struct {
		const char *id, *label;
		double words, ms;
	} f3[3] = {
		{"copy", "device Copy", 2, t_copy},
		{"triad", "device Triad", 3, t_triad},
		{"dot", "device Dot (two-stage reduction)", 2, t_dot},
	};
	for (int k = 0; k < 3; k++) {
		bench_fig *f = bench_fig_add(d, f3[k].id, f3[k].label, f3[k].words * (double)bytes / f3[k].ms / 1e6, "GB/s");
		f->validated = valid;
		snprintf(f->note, sizeof f->note, "float32, %.0f arrays of %.0f MB per pass, best of %d%s", f3[k].words,
			 (double)bytes / 1e6, reps,
			 k == 2 ? (s->cpu ? ", chunked reduction (CPU shape)" : ", grid-stride reduction (GPU shape)") : "");
	}
	if (!valid)
		snprintf(d->error, sizeof d->error, "OpenCL kernel results failed validation");

	/* the sum of squares at each size, data already on the device */
	uint64_t sizes[8];
	size_t ns = bench_sumsq_sizes(o, sizes, 8);
	while (ns > 1 && sizes[ns - 1] > n)
		ns--;
	uint64_t top = ns ? sizes[ns - 1] : 0;
	for (uint64_t i = 0; i < top; i++)
		host[i] = bench_sumsq_value(i);
	x = c->buffer(s->ctx, CL_MEM_READ_WRITE, (size_t)top * 4, NULL, &e);
	if (e) {
		s->r = e;
		snprintf(s->err, sizeof s->err, "cannot allocate the sum-of-squares buffer: OpenCL error %d", (int)e);
		goto out;
	}
	OK(c->write(s->q, x, CL_TRUE, 0, (size_t)top * 4, host, 0, NULL, NULL));
	op = 1;
	OK(c->arg(kr, 0, sizeof x, &x));
	OK(c->arg(kr, 1, sizeof x, &x));
	OK(c->arg(kr, 5, sizeof op, &op));
	d->sumsq = xcalloc(ns ? ns : 1, sizeof *d->sumsq);
	for (size_t k = 0; k < ns; k++) {
		cl_ulong m = sizes[k];
		bench_progress(o, "%s: sum of squares of %llu numbers", d->name, (unsigned long long)m);
		OK(c->arg(kr, 4, sizeof m, &m));
		size_t gsz, lsz, nparts = reduce_shape(s, m, &gsz, &lsz);
		double r = 3e8 / (double)m;
		int sreps = r < 3 ? 3 : r > 30 ? 30 : (int)r;
		double best = INFINITY;
		bool sv = true;
		for (int i = 0; i <= sreps; i++) {
			double t0 = bench_now_s();
			OK(c->ndrange(s->q, kr, 1, NULL, &gsz, &lsz, 0, NULL, NULL));
			OK(c->read(s->q, part, CL_TRUE, 0, nparts * sizeof(float), parts, 0, NULL, NULL));
			double sum = 0;
			for (size_t g = 0; g < nparts; g++)
				sum += parts[g];
			double dt = bench_now_s() - t0;
			sv &= sum == bench_sumsq_expected(m);
			if (i > 0 && dt < best)
				best = dt;
		}
		bench_sumsq *q = &d->sumsq[d->n_sumsq++];
		q->n = m;
		q->cpu1_ms = q->cpu1_simd_ms = q->cpu_all_ms = -1;
		q->dev_ms = best * 1e3;
		q->validated = sv;
		if (!sv)
			snprintf(d->error, sizeof d->error, "the device's sum of squares of %llu numbers is wrong",
				 (unsigned long long)m);
	}
	ok = true;
out:
	if (kc)
		c->rel_kernel(kc);
	if (kt)
		c->rel_kernel(kt);
	if (kr)
		c->rel_kernel(kr);
	if (a)
		c->rel_mem(a);
	if (b)
		c->rel_mem(b);
	if (cm)
		c->rel_mem(cm);
	if (part)
		c->rel_mem(part);
	if (x)
		c->rel_mem(x);
	free(host);
	free(parts);
	return ok;
}

static void one_device(const bench_opts *o, const ocl *c, cl_platform_id plat, cl_device_id dev, bench_device *d)
{
	osess st = {.c = c}, *s = &st;
	char name[128] = "", pname[96] = "", ver[96] = "";
	cl_bitfield type = 0;
	cl_uint cus = 0;
	size_t maxwg = 0;
	cl_ulong max_alloc = 0, gmem = 0;
	cl_int e = 0;
	d->kind = BENCH_DEV_OPENCL;
	c->device_info(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
	c->platform_info(plat, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
	c->device_info(dev, CL_DEVICE_VERSION, sizeof ver - 1, ver, NULL);
	c->device_info(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
	c->device_info(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
	c->device_info(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
	c->device_info(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
	c->device_info(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gmem, &gmem, NULL);
	s->cpu = (type & CL_DEVICE_TYPE_GPU) == 0;
	d->is_gpu = !s->cpu;
	s->cus = cus;
	s->maxwg = maxwg;
	snprintf(d->name, sizeof d->name, "%s", *name ? name : "OpenCL device");
	snprintf(d->detail, sizeof d->detail, "%s, %s, %s, %u compute units", *ver ? ver : "OpenCL",
		 *pname ? pname : "?", s->cpu ? "CPU" : "GPU", cus);
	bench_progress(o, "%s: building the OpenCL kernels", d->name);
	s->ctx = c->context(NULL, 1, &dev, NULL, NULL, &e);
	if (e || !s->ctx) {
		snprintf(d->error, sizeof d->error, "clCreateContext failed: OpenCL error %d", (int)e);
		return;
	}
	s->q = c->queue(s->ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
	if (e || !s->q) {
		snprintf(d->error, sizeof d->error, "clCreateCommandQueue failed: OpenCL error %d", (int)e);
		goto out;
	}
	const char *src = gw_bench_kernels_cl;
	s->prog = c->program(s->ctx, 1, &src, NULL, &e);
	if (!e)
		e = c->build(s->prog, 1, &dev, "", NULL, NULL);
	if (e) {
		char log[512] = "";
		if (s->prog)
			c->build_info(s->prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
		log[strcspn(log, "\n")] = 0;
		snprintf(d->error, sizeof d->error, "the OpenCL kernels do not build (error %d)%s%s", (int)e,
			 *log ? ": " : "", log);
		goto out;
	}
	if (!measure(o, s, d, max_alloc, gmem) && !*d->error)
		snprintf(d->error, sizeof d->error, "%s", s->err);
out:
	if (s->prog)
		c->rel_program(s->prog);
	if (s->q)
		c->rel_queue(s->q);
	c->rel_context(s->ctx);
}

void bench_opencl(const bench_opts *o, bench_report *r)
{
	ocl c;
	char why[256];
	if (!ocl_load(&c, why, sizeof why)) {
		snprintf(r->opencl_note, sizeof r->opencl_note, "no OpenCL: %s", why);
		return;
	}
	bool cuda_measured = false;
	for (size_t i = 0; i < r->n_devs; i++)
		cuda_measured |= r->devs[i].kind == BENCH_DEV_CUDA;
	cl_platform_id plats[16];
	cl_uint np = 0;
	if (c.platforms(16, plats, &np) != 0 || np == 0) {
		snprintf(r->opencl_note, sizeof r->opencl_note, "no OpenCL platform is installed (no ICD)");
		goto out;
	}
	size_t found = 0;
	for (cl_uint p = 0; p < np && p < 16; p++) {
		cl_device_id devs[16];
		cl_uint nd = 0;
		if (c.devices(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != 0)
			continue;
		for (cl_uint k = 0; k < nd && k < 16; k++) {
			cl_uint vendor = 0;
			c.device_info(devs[k], CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, NULL);
			if (vendor == PCI_VENDOR_NVIDIA && cuda_measured)
				continue;
			r->devs = xrealloc(r->devs, (r->n_devs + 1) * sizeof *r->devs);
			bench_device *d = &r->devs[r->n_devs++];
			memset(d, 0, sizeof *d);
			one_device(o, &c, plats[p], devs[k], d);
			found++;
		}
	}
	if (!found)
		snprintf(r->opencl_note, sizeof r->opencl_note, "no OpenCL device to measure");
out:
	/* the ICD loader and its drivers stay loaded: they keep allocations for
	 * the life of the process and are not made to be unloaded */
	return;
}

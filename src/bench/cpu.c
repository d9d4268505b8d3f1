/*
 * The CPU half of gpuwise bench: the sum of squares (one thread plain, one
 * thread vectorised, every core vectorised) and STREAM's Copy, Scale, Add
 * and Triad with STREAM's rules (jeffhammond/STREAM stream.c v5.10):
 * arrays at least 4x the last-level cache, best of NTIMES after the first,
 * results validated, MB = 10^6 bytes, bytes counted without write-allocate
 * (2, 2, 3, 3 doubles per element).  Threads are a persistent pool, so a
 * measurement pays one barrier hand-off, not a thread start.
 */
#include "bench/internal.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- a persistent thread pool: the caller is thread 0 ------------------ */
typedef struct pool {
	int n;
	pthread_t *threads;
	pthread_barrier_t start, done;
	void (*fn)(void *arg, int tid, int nt);
	void *arg;
	bool quit;
} pool;

typedef struct pool_slot {
	pool *p;
	int tid;
} pool_slot;

static void *pool_main(void *v)
{
	pool_slot *s = v;
	pool *p = s->p;
	for (;;) {
		pthread_barrier_wait(&p->start);
		if (p->quit)
			break;
		p->fn(p->arg, s->tid, p->n);
		pthread_barrier_wait(&p->done);
	}
	return NULL;
}

static pool_slot *pool_start(pool *p, int n)
{
	memset(p, 0, sizeof *p);
	p->n = n;
	pthread_barrier_init(&p->start, NULL, (unsigned)n);
	pthread_barrier_init(&p->done, NULL, (unsigned)n);
	p->threads = xcalloc((size_t)n, sizeof *p->threads);
	pool_slot *slots = xcalloc((size_t)n, sizeof *slots);
	for (int i = 1; i < n; i++) {
		slots[i] = (pool_slot){p, i};
		if (pthread_create(&p->threads[i], NULL, pool_main, &slots[i]) != 0) {
			/* fewer threads than asked: run with what started */
			p->n = i;
			pthread_barrier_destroy(&p->start);
			pthread_barrier_destroy(&p->done);
			pthread_barrier_init(&p->start, NULL, (unsigned)i);
			pthread_barrier_init(&p->done, NULL, (unsigned)i);
			break;
		}
	}
	return slots;
}

static void pool_run(pool *p, void (*fn)(void *, int, int), void *arg)
{
	p->fn = fn;
	p->arg = arg;
	if (p->n > 1)
		pthread_barrier_wait(&p->start);
	fn(arg, 0, p->n);
	if (p->n > 1)
		pthread_barrier_wait(&p->done);
}

static void pool_stop(pool *p, pool_slot *slots)
{
	if (p->n > 1) {
		p->quit = true;
		pthread_barrier_wait(&p->start);
		for (int i = 1; i < p->n; i++)
			pthread_join(p->threads[i], NULL);
	}
	pthread_barrier_destroy(&p->start);
	pthread_barrier_destroy(&p->done);
	free(p->threads);
	free(slots);
}

/* The slice [lo, hi) of n for thread tid of nt, in multiples of 64. */
static void slice(uint64_t n, int tid, int nt, uint64_t *lo, uint64_t *hi)
{
	uint64_t blocks = (n + 63) / 64;
	uint64_t per = blocks / (uint64_t)nt, extra = blocks % (uint64_t)nt;
	uint64_t b0 = (uint64_t)tid * per + ((uint64_t)tid < extra ? (uint64_t)tid : extra);
	uint64_t b1 = b0 + per + ((uint64_t)tid < extra ? 1 : 0);
	*lo = b0 * 64 > n ? n : b0 * 64;
	*hi = b1 * 64 > n ? n : b1 * 64;
}

/* ---- sum of squares ----------------------------------------------------- */
/*
 * Partial sums are kept in float for 4096 elements, then added to a double:
 * with the test data (squares 0..9) every float partial stays an exact
 * integer below 2^24, so each variant must return the exact sum.
 */
#define SQ_BLOCK 4096

double bench_sumsq_expected(uint64_t n)
{
	static const int sq[7] = {9, 4, 1, 0, 1, 4, 9};
	uint64_t full = n / 7;
	double s = (double)full * 28.0;
	for (uint64_t i = 0; i < n % 7; i++)
		s += sq[i];
	return s;
}

static double sumsq_plain(const float *x, uint64_t lo, uint64_t hi)
{
	double total = 0;
	for (uint64_t i = lo; i < hi; i += SQ_BLOCK) {
		uint64_t e = i + SQ_BLOCK < hi ? i + SQ_BLOCK : hi;
		float s = 0;
		for (uint64_t j = i; j < e; j++)
			s += x[j] * x[j];
		total += s;
	}
	return total;
}

typedef float v8f __attribute__((vector_size(32)));

static double sumsq_simd(const float *x, uint64_t lo, uint64_t hi)
{
	double total = 0;
	uint64_t i = lo;
	while (i + 32 <= hi) {
		uint64_t e = i + SQ_BLOCK < hi ? i + SQ_BLOCK : hi;
		v8f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
		for (; i + 32 <= e; i += 32) {
			v8f x0, x1, x2, x3;
			memcpy(&x0, x + i, sizeof x0);
			memcpy(&x1, x + i + 8, sizeof x1);
			memcpy(&x2, x + i + 16, sizeof x2);
			memcpy(&x3, x + i + 24, sizeof x3);
			a0 += x0 * x0;
			a1 += x1 * x1;
			a2 += x2 * x2;
			a3 += x3 * x3;
		}
		v8f s = a0 + a1 + a2 + a3;
		float f = 0;
		for (int k = 0; k < 8; k++)
			f += s[k];
		total += f;
	}
	return total + sumsq_plain(x, i, hi);
}

typedef struct sq_job {
	const float *x;
	uint64_t n;
	double part[256];
} sq_job;

static void sq_worker(void *arg, int tid, int nt)
{
	sq_job *j = arg;
	uint64_t lo, hi;
	slice(j->n, tid, nt, &lo, &hi);
	j->part[tid] = sumsq_simd(j->x, lo, hi);
}

/* Best time of `reps` calls, in ms; *ok false when a result was wrong. */
static double time_sumsq(int variant, pool *p, const float *x, uint64_t n, int reps, bool *ok)
{
	double best = INFINITY, want = bench_sumsq_expected(n);
	for (int r = 0; r < reps; r++) {
		double got, t0 = bench_now_s();
		if (variant == 0) {
			got = sumsq_plain(x, 0, n);
		} else if (variant == 1) {
			got = sumsq_simd(x, 0, n);
		} else {
			sq_job j = {.x = x, .n = n};
			pool_run(p, sq_worker, &j);
			got = 0;
			for (int t = 0; t < p->n; t++)
				got += j.part[t];
		}
		double dt = bench_now_s() - t0;
		if (got != want)
			*ok = false;
		if (dt < best)
			best = dt;
	}
	return best * 1e3;
}

static int sumsq_reps(uint64_t n, bool quick)
{
	double r = 3e7 / (double)n;
	int lim = quick ? 50 : 200;
	return r < 3 ? 3 : r > lim ? lim : (int)r;
}

size_t bench_sumsq_sizes(const bench_opts *o, uint64_t *sizes, size_t max)
{
	uint64_t top = o->max_n ? o->max_n : o->quick ? 10000000ull : 1000000000ull;
	size_t k = 0;
	for (uint64_t n = BENCH_SUMSQ_MIN_N; n <= top && k < max; n *= 10)
		sizes[k++] = n;
	return k;
}

/* ---- STREAM ----------------------------------------------------------- */
typedef struct stream_job {
	double *a, *b, *c;
	uint64_t n;
	double scalar;
	int kernel;            /* 0 init, 1 copy, 2 scale, 3 add, 4 triad */
} stream_job;

static void stream_worker(void *arg, int tid, int nt)
{
	stream_job *j = arg;
	uint64_t lo, hi;
	slice(j->n, tid, nt, &lo, &hi);
	double *restrict a = j->a, *restrict b = j->b, *restrict c = j->c;
	double s = j->scalar;
	switch (j->kernel) {
	case 0:
		for (uint64_t i = lo; i < hi; i++) {
			a[i] = 2.0; /* STREAM: a = 1, then a = 2a in its timer check */
			b[i] = 2.0;
			c[i] = 0.0;
		}
		break;
	case 1:
		for (uint64_t i = lo; i < hi; i++)
			c[i] = a[i];
		break;
	case 2:
		for (uint64_t i = lo; i < hi; i++)
			b[i] = s * c[i];
		break;
	case 3:
		for (uint64_t i = lo; i < hi; i++)
			c[i] = a[i] + b[i];
		break;
	case 4:
		for (uint64_t i = lo; i < hi; i++)
			a[i] = b[i] + s * c[i];
		break;
	}
}

/*
 * The last-level cache this CPU uses, in bytes: sysfs's largest cache of
 * cpu0 (the slice a core shares: 32 MiB on a Zen 4 CCX), else glibc's
 * figure (which on some machines is the whole socket's); 0 unknown.
 */
static double llc_size(void)
{
	double best = 0;
	for (int i = 0; i < 8; i++) {
		char p[96];
		snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		char *s = gw_read_line(p);
		if (!s)
			continue;
		char *end;
		double k = strtod(s, &end);
		if (*end == 'K')
			k *= 1024;
		else if (*end == 'M')
			k *= 1024 * 1024;
		if (k > best)
			best = k;
		free(s);
	}
	if (best > 0)
		return best;
	long v = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
	v = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (v <= 0)
		v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
	return v > 0 ? (double)v : 0;
}

/* STREAM's validation: replay the recurrence on scalars (checkSTREAMresults). */
static bool stream_valid(const stream_job *j, int ntimes, double *worst)
{
	double aj = 2.0, bj = 2.0, cj = 0.0, s = j->scalar;
	for (int k = 0; k < ntimes; k++) {
		cj = aj;
		bj = s * cj;
		cj = aj + bj;
		aj = bj + s * cj;
	}
	double ea = 0, eb = 0, ec = 0;
	for (uint64_t i = 0; i < j->n; i++) {
		ea += fabs(j->a[i] - aj);
		eb += fabs(j->b[i] - bj);
		ec += fabs(j->c[i] - cj);
	}
	double n = (double)j->n;
	double ra = ea / n / fabs(aj), rb = eb / n / fabs(bj), rc = ec / n / fabs(cj);
	*worst = fmax(ra, fmax(rb, rc));
	return *worst <= 1e-13;
}

void bench_cpu(const bench_opts *o, bench_device *d, double *llc_bytes)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int nt = o->threads > 0 ? o->threads : online > 0 ? (int)online : 1;
	if (nt > 256)
		nt = 256;
	d->kind = BENCH_DEV_CPU;
	d->threads = nt;
	char model[128] = "CPU";
	char *info = NULL;
	size_t len = 0;
	if (gw_read_file("/proc/cpuinfo", true, 1 << 20, &info, &len, NULL) == 0) {
		char *m = strstr(info, "model name");
		if (m && (m = strchr(m, ':'))) {
			m++;
			while (*m == ' ' || *m == '\t')
				m++;
			size_t k = strcspn(m, "\n");
			snprintf(model, sizeof model, "%.*s", (int)k, m);
		}
		free(info);
	}
	snprintf(d->name, sizeof d->name, "%s", model);
	double llc = llc_size();
	*llc_bytes = llc;
	snprintf(d->detail, sizeof d->detail, "%d thread%s, last-level cache %.0f MiB", nt, nt == 1 ? "" : "s",
		 llc / 1048576.0);

	pool p;
	pool_slot *slots = pool_start(&p, nt);
	d->threads = p.n;

	/* sum of squares */
	uint64_t sizes[8];
	size_t ns = bench_sumsq_sizes(o, sizes, 8);
	long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	double avail = pages > 0 && psz > 0 ? (double)pages * (double)psz : 0;
	uint64_t top = ns ? sizes[ns - 1] : 0;
	while (ns > 1 && avail > 0 && (double)top * 4 > avail / 2)
		top = sizes[--ns - 1];
	float *x = top ? aligned_alloc(64, (size_t)((top * 4 + 63) / 64 * 64)) : NULL;
	if (x) {
		for (uint64_t i = 0; i < top; i++)
			x[i] = bench_sumsq_value(i);
		d->sumsq = xcalloc(ns, sizeof *d->sumsq);
		for (size_t k = 0; k < ns; k++) {
			uint64_t n = sizes[k];
			bench_progress(o, "CPU: sum of squares of %llu numbers", (unsigned long long)n);
			bench_sumsq *s = &d->sumsq[d->n_sumsq++];
			s->n = n;
			s->validated = true;
			int reps = sumsq_reps(n, o->quick);
			s->cpu1_ms = time_sumsq(0, &p, x, n, reps, &s->validated);
			s->cpu1_simd_ms = time_sumsq(1, &p, x, n, reps, &s->validated);
			s->cpu_all_ms = time_sumsq(2, &p, x, n, reps, &s->validated);
			s->dev_ms = -1;
		}
		free(x);
	}

	/* STREAM */
	uint64_t n = (uint64_t)(4.0 * llc / 8.0);
	uint64_t floor_n = o->quick ? (4ull << 20) : (32ull << 20);
	if (n < floor_n)
		n = floor_n;
	int ntimes = o->runs >= 2 ? o->runs : o->quick ? 6 : 20;
	stream_job j = {.n = n, .scalar = 3.0};
	size_t bytes = (size_t)(n * sizeof(double));
	j.a = aligned_alloc(64, bytes);
	j.b = aligned_alloc(64, bytes);
	j.c = aligned_alloc(64, bytes);
	if (!j.a || !j.b || !j.c) {
		snprintf(d->error, sizeof d->error, "cannot allocate 3 x %.0f MB for STREAM", (double)bytes / 1e6);
		goto out;
	}
	d->stream_array_bytes = bytes;
	bench_progress(o, "CPU: STREAM, 3 arrays of %.0f MB, %d threads", (double)bytes / 1e6, p.n);
	j.kernel = 0;
	pool_run(&p, stream_worker, &j); /* first touch by the threads that use the pages */
	static const char *const ids[4] = {"copy", "scale", "add", "triad"};
	static const char *const labels[4] = {"STREAM Copy", "STREAM Scale", "STREAM Add", "STREAM Triad"};
	static const int words[4] = {2, 2, 3, 3};
	double best[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
	for (int k = 0; k < ntimes; k++)
		for (int kern = 0; kern < 4; kern++) {
			j.kernel = kern + 1;
			double t0 = bench_now_s();
			pool_run(&p, stream_worker, &j);
			double dt = bench_now_s() - t0;
			if (k > 0 && dt < best[kern])
				best[kern] = dt;
		}
	double worst;
	bool valid = stream_valid(&j, ntimes, &worst);
	for (int kern = 0; kern < 4; kern++) {
		double mbs = (double)words[kern] * 8.0 * (double)n / best[kern] / 1e9;
		bench_fig *f = bench_fig_add(d, ids[kern], labels[kern], mbs, "GB/s");
		f->validated = valid;
		snprintf(f->note, sizeof f->note,
			 "%d doubles moved per element (no write-allocate), best of %d after the first, %s", words[kern],
			 ntimes - 1, valid ? "results checked" : "RESULTS WRONG");
	}
	if (!valid)
		snprintf(d->error, sizeof d->error, "STREAM results failed validation (relative error %.3g)", worst);
out:
	free(j.a);
	free(j.b);
	free(j.c);
	pool_stop(&p, slots);
}

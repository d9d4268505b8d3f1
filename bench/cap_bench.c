/*
 * cap_bench: nanoseconds per cuMemAlloc_v2 and per cuMemFree_v2 against
 * the fake libcuda (linked, so a preloaded libgpuwise-cap.so interposes),
 * in batches of 1024 (1 MiB each), the median batch of ROUNDS.  With
 * "proc" the pointers come from cuGetProcAddress_v2, as the CUDA runtime
 * gets them.  Usage: cap_bench ROUNDS [proc].  Prints one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
CUresult cuInit(unsigned int);
CUresult cuDeviceGet(int *, int);
CUresult cuDevicePrimaryCtxRetain(void **, int);
CUresult cuCtxSetCurrent(void *);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);

#define BATCH 1024

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	CUresult (*alloc)(CUdeviceptr *, size_t) = cuMemAlloc_v2;
	CUresult (*release)(CUdeviceptr) = cuMemFree_v2;
	int dev;
	void *ctx;
	if (rounds < 1 || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
		return fprintf(stderr, "cap_bench: no device\n"), 1;
	if (argc > 2 && strcmp(argv[2], "proc") == 0) {
		void *a = NULL, *f = NULL;
		int st;
		if (cuGetProcAddress_v2("cuMemAlloc", &a, 12000, 0, &st) || cuGetProcAddress_v2("cuMemFree", &f, 12000, 0, &st))
			return fprintf(stderr, "cap_bench: cuGetProcAddress_v2 failed\n"), 1;
		alloc = (CUresult(*)(CUdeviceptr *, size_t))a;
		release = (CUresult(*)(CUdeviceptr))f;
	}
	double *ta = calloc((size_t)rounds, sizeof *ta), *tf = calloc((size_t)rounds, sizeof *tf);
	static CUdeviceptr p[BATCH];
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			if (alloc(&p[i], 1 << 20))
				return fprintf(stderr, "cap_bench: allocation failed\n"), 1;
		double t1 = now_ns();
		for (int i = 0; i < BATCH; i++)
			if (release(p[i]))
				return fprintf(stderr, "cap_bench: free failed\n"), 1;
		double t2 = now_ns();
		ta[r] = (t1 - t0) / BATCH;
		tf[r] = (t2 - t1) / BATCH;
	}
	qsort(ta, (size_t)rounds, sizeof *ta, cmp);
	qsort(tf, (size_t)rounds, sizeof *tf, cmp);
	printf("alloc_ns=%.1f free_ns=%.1f\n", ta[rounds / 2], tf[rounds / 2]);
	free(ta);
	free(tf);
	return 0;
}

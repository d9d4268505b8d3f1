/*
 * A plain C STREAM Triad, the reference tests/e2e/bench.t holds gpuwise
 * bench's CPU Triad against: one thread, the same array size, STREAM's
 * four kernels in STREAM's order, best of NTIMES after the first
 * (jeffhammond/STREAM stream.c rules), bytes counted without write-allocate.
 * usage: ref_triad ARRAY_BYTES NTIMES  -> prints the Triad GB/s
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	size_t n = strtoull(argv[1], NULL, 10) / sizeof(double);
	int ntimes = atoi(argv[2]);
	/* 64-byte aligned like gpuwise's arrays, so only the loops differ */
	double *a = aligned_alloc(64, n * sizeof *a), *b = aligned_alloc(64, n * sizeof *b), *c = aligned_alloc(64, n * sizeof *c);
	if (!a || !b || !c || ntimes < 2)
		return 1;
	for (size_t i = 0; i < n; i++) {
		a[i] = 2.0;
		b[i] = 2.0;
		c[i] = 0.0;
	}
	double s = 3.0, best = 1e30;
	for (int k = 0; k < ntimes; k++) {
		for (size_t i = 0; i < n; i++)
			c[i] = a[i];
		for (size_t i = 0; i < n; i++)
			b[i] = s * c[i];
		for (size_t i = 0; i < n; i++)
			c[i] = a[i] + b[i];
		double t0 = now();
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] + s * c[i];
		double dt = now() - t0;
		if (k > 0 && dt < best)
			best = dt;
	}
	printf("%.3f\n", 3.0 * 8.0 * (double)n / best / 1e9);
	/* keep the arrays alive: a checksum nobody can predict away */
	double sum = 0;
	for (size_t i = 0; i < n; i += 4096)
		sum += a[i] + b[i] + c[i];
	fprintf(stderr, "checksum %g\n", sum);
	free(a);
	free(b);
	free(c);
	return 0;
}

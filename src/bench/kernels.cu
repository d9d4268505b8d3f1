// gpuwise bench: the CUDA kernels, compiled to PTX by `make ptx` when nvcc is
// present (the PTX beside this file is what the binary embeds and the driver
// JIT-compiles; no CUDA runtime is linked).  extern "C" keeps the names plain
// for cuModuleGetFunction.  Shapes follow BabelStream (grid-stride loops,
// two-stage reduction with one partial per block).
#define TB 256

extern "C" __global__ void gw_copy(const double *__restrict__ a, double *__restrict__ c, unsigned long long n)
{
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		c[i] = a[i];
}

extern "C" __global__ void gw_triad(double *__restrict__ a, const double *__restrict__ b,
				    const double *__restrict__ c, double s, unsigned long long n)
{
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		a[i] = b[i] + s * c[i];
}

// Dot: each block writes one partial sum; the host adds the partials.
extern "C" __global__ void gw_dot(const double *__restrict__ a, const double *__restrict__ b,
				  double *__restrict__ partial, unsigned long long n)
{
	__shared__ double tb[TB];
	double sum = 0.0;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		sum += a[i] * b[i];
	tb[threadIdx.x] = sum;
	for (int off = blockDim.x / 2; off > 0; off /= 2) {
		__syncthreads();
		if (threadIdx.x < off)
			tb[threadIdx.x] += tb[threadIdx.x + off];
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = tb[0];
}

// Sum of squares of floats, one partial (double) per block.
extern "C" __global__ void gw_sumsq(const float *__restrict__ x, double *__restrict__ partial, unsigned long long n)
{
	__shared__ double tb[TB];
	double sum = 0.0;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x) {
		float v = x[i];
		sum += (double)(v * v);
	}
	tb[threadIdx.x] = sum;
	for (int off = blockDim.x / 2; off > 0; off /= 2) {
		__syncthreads();
		if (threadIdx.x < off)
			tb[threadIdx.x] += tb[threadIdx.x + off];
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = tb[0];
}

// FP32 FMA throughput: 8 independent chains per thread, `iters` rounds of
// 8 FMAs each (2 flops per FMA).  The result is stored so nothing is elided.
extern "C" __global__ void gw_fma(float *out, float a, float b, int iters)
{
	float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6,
	      x7 = x0 + 7;
	for (int i = 0; i < iters; i++) {
		x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
		x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

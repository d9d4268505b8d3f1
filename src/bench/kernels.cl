/* gpuwise bench: OpenCL C kernels (float32), the same memory and reduction
 * kernels as the CUDA PTX.  Reductions write one partial per work-group;
 * the host adds them.  Two shapes of reduction, as BabelStream picks per
 * device type: a grid-stride loop for GPUs, a contiguous chunk per
 * work-item for CPUs (barrier-heavy shapes run ~50x slower on PoCL). */
__kernel void gw_copy(__global const float *a, __global float *c, ulong n)
{
	for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
		c[i] = a[i];
}

__kernel void gw_triad(__global float *a, __global const float *b, __global const float *c, float s, ulong n)
{
	for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
		a[i] = b[i] + s * c[i];
}

/* op 0: dot of a and b; op 1: sum of squares of a */
static float gw_elem(__global const float *a, __global const float *b, ulong i, int op)
{
	return op ? a[i] * a[i] : a[i] * b[i];
}

__kernel void gw_reduce_strided(__global const float *a, __global const float *b, __global float *partial,
				__local float *scratch, ulong n, int op)
{
	float sum = 0.0f;
	for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
		sum += gw_elem(a, b, i, op);
	size_t lid = get_local_id(0);
	scratch[lid] = sum;
	for (size_t off = get_local_size(0) / 2; off > 0; off /= 2) {
		barrier(CLK_LOCAL_MEM_FENCE);
		if (lid < off)
			scratch[lid] += scratch[lid + off];
	}
	if (lid == 0)
		partial[get_group_id(0)] = scratch[0];
}

/* CPU shape: one partial per work-item (no barrier), chunk = n / items */
__kernel void gw_reduce_chunked(__global const float *a, __global const float *b, __global float *partial,
				__local float *scratch, ulong n, int op)
{
	ulong items = get_global_size(0);
	ulong chunk = (n + items - 1) / items;
	ulong lo = get_global_id(0) * chunk;
	ulong hi = min(lo + chunk, n);
	float16 acc = (float16)(0.0f);
	ulong i = lo;
	for (; i + 16 <= hi; i += 16) {
		float16 x = vload16(0, a + i);
		acc += op ? x * x : x * vload16(0, b + i);
	}
	float sum = 0.0f;
	for (; i < hi; i++)
		sum += gw_elem(a, b, i, op);
	sum += acc.s0 + acc.s1 + acc.s2 + acc.s3 + acc.s4 + acc.s5 + acc.s6 + acc.s7 + acc.s8 + acc.s9 + acc.sa +
	       acc.sb + acc.sc + acc.sd + acc.se + acc.sf;
	partial[get_global_id(0)] = sum;
}

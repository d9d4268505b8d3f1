// gpuwise bench: tensor-core throughput with mma.sync (sm_80 and newer),
// compiled to mma.ptx by `make ptx` when nvcc is present.  Each warp keeps
// four independent accumulator tiles in registers and issues `iters` rounds
// of four mma.sync; operands are fixed registers (throughput, not a GEMM).
// Flops per mma: 2*M*N*K.  fp16 and bf16: m16n8k16; tf32: m16n8k8.
// One kernel per instruction, the same body: GW_MMA_KERNEL(name, instruction).

#define GW_MMA_KERNEL(NAME, INSN)                                                                                  \
	extern "C" __global__ void NAME(float *out, unsigned a0, int iters)                                        \
	{                                                                                                          \
		unsigned a[4] = {a0, a0 ^ 1u, a0 ^ 2u, a0 ^ 3u}, b[2] = {a0, a0 ^ 4u};                             \
		float c[4][4] = {};                                                                                \
		for (int i = 0; i < iters; i++) {                                                                  \
			_Pragma("unroll") for (int t = 0; t < 4; t++) asm volatile(                                \
				INSN " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                    \
				: "+f"(c[t][0]), "+f"(c[t][1]), "+f"(c[t][2]), "+f"(c[t][3])                       \
				: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));               \
		}                                                                                                  \
		float s = 0;                                                                                       \
		for (int t = 0; t < 4; t++)                                                                        \
			s += c[t][0] + c[t][1] + c[t][2] + c[t][3];                                                \
		out[blockIdx.x * blockDim.x + threadIdx.x] = s;                                                    \
	}

GW_MMA_KERNEL(gw_mma_f16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
GW_MMA_KERNEL(gw_mma_bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
GW_MMA_KERNEL(gw_mma_tf32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")

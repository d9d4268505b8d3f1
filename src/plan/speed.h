/*
 * speed.h: the speed model's entry points (speed.c).  Decode and prefill
 * tokens/s per engine build x backend x GPU architecture family, from the
 * constants of data/speed.tsv (docs/data-tables.md).  Pure functions; no
 * printing.
 */
#ifndef GW_PLAN_SPEED_H
#define GW_PLAN_SPEED_H

#include <stdbool.h>
#include <stdint.h>

#include "kb/kb.h"

/* The llama.cpp (ggml) backend that runs the model. */
typedef enum {
	PLAN_BACKEND_AUTO = 0, /* the default for the GPU's vendor and platform */
	PLAN_BACKEND_CUDA,
	PLAN_BACKEND_ROCM,
	PLAN_BACKEND_VULKAN,
	PLAN_BACKEND_METAL,
	PLAN_BACKEND_SYCL,
	PLAN_BACKEND_CPU,
} plan_backend;

const char *plan_backend_name(plan_backend b); /* "cuda" ... "auto" */
/* GW_EINVAL for a name that is none of cuda rocm vulkan metal sycl cpu. */
int plan_backend_parse(const char *s, plan_backend *b);
/* The default backend of a GPU: CUDA on NVIDIA, ROCm on AMD, Metal on
 * Apple, SYCL on Intel; CPU without a GPU (spec NULL and not unified). */
plan_backend plan_backend_default(const gpu_spec *s, bool unified_memory);
/*
 * Whether llama.cpp has backend b for a GPU of this vendor: 0, or
 * GW_EINVAL with err naming the vendor the backend needs.
 */
int plan_backend_check(plan_backend b, const gpu_spec *s, bool unified_memory, gw_error *err);
/* Architecture family of a GPU for the speed table ("ada", "rdna3",
 * "apple" ...; "*" when the catalog does not say). */
const char *plan_speed_family(const gpu_spec *s, bool unified_memory);

/* The constants of one row of data/speed.tsv. */
typedef struct plan_speed_row {
	char build[16], backend[8], family[16];
	double tok_us;      /* fixed cost per token (graph launch, sampling) */
	double layer_us;    /* per block per token (kernel launches) */
	double gpu_us;      /* per extra GPU of a layer split, per token */
	double bw_kq, bw_legacy, bw_mxfp4, bw_f16; /* achieved fraction of peak bandwidth by kernel family */
	double bw_ceil_gbs; /* effective ceiling (GB/s), 0 none */
	double bw_kv;       /* decode's KV-cache reads: fraction of peak bandwidth, 0: bw_f16 */
	char pp_q_rate[8];  /* quantized prefill: "int8", "fp16", "fp32" peak the kernel runs at */
	double pp_q_x;      /* multiplier on that peak (int8 = 2x the full-rate fp16 column) */
	double pp_q_eff;    /* fraction of it reached */
	double pp_f_eff;    /* F16/BF16 weights: fraction of the fp16 tensor peak */
	double attn_eff_fa, attn_eff_nofa; /* attention FLOPs: fraction of the fp16 peak */
	double pp_layer_us; /* prefill: non-matrix ops per block per prompt token */
	double moe_us;      /* decode: extra per MoE block per token (routing, mul_mat_id) */
	double moe_pp_us;   /* prefill: extra per MoE block per prompt token (routing, token gather/scatter) */
	bool legacy;        /* the 2024 closed form (b2824) */
	const char *source;
} plan_speed_row;

/*
 * The row of data/speed.tsv for an engine build ("b2824", "latest" for
 * today's), backend and family; falls back to family "*" of the same build
 * and backend.  0, or GW_ENOENT when the table has none.
 */
int plan_speed_row_find(const char *build, plan_backend b, const char *family, plan_speed_row *out);

/* Weight-format kernel family of a GGUF type name: "kq" (k-quants and
 * i-quants), "legacy" (Q4_0 ... Q8_0), "mxfp4", "f16" (F16, BF16, F32). */
const char *plan_speed_kernel(const char *quant);

/*
 * llama.cpp on the CPU: decode reads bytes_per_token from host memory at
 * host_bw_gbs x the cpu row's bw fraction, plus a fixed cost per token and
 * block; prefill runs flops_per_token on threads cores at the row's
 * per-thread rate (pp_q_x GFLOPS per thread for quantized weights).
 * Returns 0 and sets *decode / *prefill (tok/s), or GW_ENOENT without a
 * cpu row.
 */
int plan_speed_cpu(const char *build, const char *quant, uint32_t n_blocks, double bytes_per_token,
		   double flops_per_token, double host_bw_gbs, uint32_t threads, double *decode,
		   double *prefill);

#endif

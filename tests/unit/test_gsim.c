/*
 * Unit tests for plan/gsim.c (ggml's graph allocator replayed on shapes)
 * and plan/lgraph.c (llama.cpp's graphs).  The allocator cases are small
 * graphs whose buffer can be worked out by hand from ggml-alloc's rules;
 * the graph cases pin the compute buffers llama.cpp 0c1e570 printed
 * ("CPU compute buffer size is X MiB") for the oracle's small models
 * (tests/oracle/llamacpp_oracle.py, llama-cpp-python 0.3.36).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "plan/gsim.h"
#include "plan/lgraph.h"

#define MIB_D(x) ((double)(x) / 1048576.0)
enum { K = 1024 };

/* an input of n f32 elements */
static gs_t in(gsim *g, int64_t n)
{
	return gs_input(g, GS_F32, n, 1, 1, 1);
}

static void test_inplace_chain(void **state)
{
	(void)state;
	gsim *g = gs_new();
	/* x -> scale -> unary -> scale: every step may reuse its parent */
	gs_t x = gs_mul_mat(g, gs_external(g, GS_F16, 64, 256 * K, 1, 1), in(g, 64));
	gs_t y = gs_unop(g, GS_SCALE, x);
	y = gs_unop(g, GS_UNARY, y);
	y = gs_unop(g, GS_SCALE, y);
	gs_expand(g, y);
	/* input 256 B + one 1 MiB buffer */
	assert_int_equal(gs_alloc_peak(g, 32), 256 + MiB);
	gs_free(g);
}

static void test_no_inplace(void **state)
{
	(void)state;
	gsim *g = gs_new();
	/* mul_mat never runs in place: two 1 MiB tensors live at once */
	gs_t w = gs_external(g, GS_F16, 256 * K, 256 * K, 1, 1);
	gs_t x = gs_mul_mat(g, gs_external(g, GS_F16, 64, 256 * K, 1, 1), in(g, 64));
	gs_t y = gs_mul_mat(g, w, x);
	gs_expand(g, y);
	assert_int_equal(gs_alloc_peak(g, 32), 256 + 2 * MiB);
	gs_free(g);
}

static void test_view_blocks_inplace(void **state)
{
	(void)state;
	gsim *g = gs_new();
	/* rope of a reshape: the parent is a view, which ggml never reuses */
	gs_t pos = gs_input(g, GS_I32, 8, 1, 1, 1);
	gs_t x = gs_mul_mat(g, gs_external(g, GS_F16, 64, 256 * K, 1, 1), in(g, 64));
	gs_t v = gs_reshape(g, x, 1024, 256, 1, 1);
	gs_t r = gs_binop(g, GS_ROPE, v, pos);
	gs_expand(g, r);
	assert_int_equal(gs_alloc_peak(g, 32), 256 + 32 + 2 * MiB);
	gs_free(g);
}

static void test_second_consumer_blocks_inplace(void **state)
{
	(void)state;
	gsim *g = gs_new();
	/* x feeds the scale and the add: the scale cannot take its memory */
	gs_t x = gs_mul_mat(g, gs_external(g, GS_F16, 64, 256 * K, 1, 1), in(g, 64));
	gs_t y = gs_unop(g, GS_SCALE, x);
	gs_t z = gs_binop(g, GS_ADD, y, x);
	gs_expand(g, z);
	assert_int_equal(gs_alloc_peak(g, 32), 256 + 2 * MiB);
	gs_free(g);
}

static void test_output_kept(void **state)
{
	(void)state;
	gsim *g = gs_new();
	/* a graph output is neither freed nor taken over */
	gs_t a = gs_mul_mat(g, gs_external(g, GS_F16, 64, 256 * K, 1, 1), in(g, 64));
	gs_set_output(g, a);
	gs_t b = gs_unop(g, GS_SCALE, a);
	gs_t c = gs_mul_mat(g, gs_external(g, GS_F16, 256 * K, 256 * K, 1, 1), b);
	gs_t d = gs_mul_mat(g, gs_external(g, GS_F16, 256 * K, 256 * K, 1, 1), c);
	gs_expand(g, d);
	/* a (kept) + b, c, d where b is freed before d: a + b + c at most */
	assert_int_equal(gs_alloc_peak(g, 32), 256 + 3 * MiB);
	gs_free(g);
}

static void test_best_fit(void **state)
{
	(void)state;
	gsim *g = gs_new();
	gs_t x = in(g, 64);                                  /* [0, 256) */
	gs_t w1 = gs_external(g, GS_F16, 64, 512 * K, 1, 1); /* 2 MiB results */
	gs_t w2 = gs_external(g, GS_F16, 64, 256 * K, 1, 1); /* 1 MiB results */
	gs_t ws = gs_external(g, GS_F16, 64, 16, 1, 1);      /* 64 B results */
	gs_t none = gs_input(g, GS_I32, 0, 1, 1, 1);         /* no rows */
	gs_t a = gs_mul_mat(g, w1, x);
	gs_expand(g, a);
	gs_expand(g, gs_mul_mat(g, ws, x)); /* keeps the two holes apart */
	gs_t b = gs_mul_mat(g, w2, x);
	gs_expand(g, b);
	gs_expand(g, gs_mul_mat(g, ws, x));
	/* consumers with no memory free a (2 MiB hole) and b (1 MiB hole) */
	gs_expand(g, gs_get_rows(g, a, none));
	gs_expand(g, gs_get_rows(g, b, none));
	/* best fit puts 1 MiB in the 1 MiB hole and 2 MiB in the 2 MiB one;
	 * first fit would have split the 2 MiB hole and grown the buffer */
	gs_expand(g, gs_mul_mat(g, w2, x));
	gs_expand(g, gs_mul_mat(g, w1, x));
	assert_int_equal(gs_alloc_peak(g, 32), 256 + 2 * MiB + 64 + MiB + 64);
	gs_free(g);
}

static void test_zero_size(void **state)
{
	(void)state;
	gsim *g = gs_new();
	/* zero-sized tensors (llama.cpp's extra recurrent states for one
	 * sequence) take no memory and do not upset the free list */
	gs_t ids = gs_input(g, GS_I32, 0, 1, 1, 1);
	gs_t s = gs_external(g, GS_F32, 16, 4, 1, 1);
	gs_t r = gs_get_rows(g, s, ids);
	gs_expand(g, r);
	assert_int_equal(gs_ne(g, r, 1), 0);
	assert_int_equal(gs_alloc_peak(g, 32), 0);
	gs_free(g);
}

/* ---- llama.cpp graphs vs its printed buffers ---------------------------- */

static void small(model_desc *m, const char *arch)
{
	memset(m, 0, sizeof *m);
	m->arch = (char *)arch;
	m->n_layers = 4;
	m->hidden = 1024;
	m->n_heads = 16;
	m->n_kv_heads = 4;
	m->head_dim_k = m->head_dim_v = 64;
	m->ffn = 2816;
	m->vocab = 32000;
	m->ctx_train = 32768;
}

static double lg(const model_desc *m, uint64_t cells, bool fa, plan_kv_type kv)
{
	lgraph_params p = {.cells = cells, .n_ubatch = 512, .n_seq = 1, .flash_attn = fa, .kv_k = kv, .kv_v = kv,
			   .alignment = 32};
	return MIB_D(plan_lgraph_compute_bytes(m, &p));
}

static void test_llama_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "llama");
	assert_true(plan_lgraph_supported(&m));
	/* llama.cpp 0c1e570: 66.5020 (FA), 147.0098 (no FA), 68.5020 (q8_0 KV) */
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_F16) - 66.5020) < 0.0005);
	assert_true(fabs(lg(&m, 4096, false, PLAN_KV_F16) - 147.0098) < 0.0005);
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_Q8_0) - 68.5020) < 0.0005);
}

/* The same small llama split over devices as llama.cpp's scheduler splits
 * it (gs_sched_peaks), against llama.cpp 0c1e570 over two rpc-server
 * processes on the CPU (tests/oracle/slots_oracle.py with
 * GW_LLAMA_RPC_LIB; RPC devices take no op offload, pipeline parallelism
 * keeps 4 copies): blocks 0-2 on RPC0, block 3 and the output on RPC1:
 * 180.0234, 178.0312 and CPU 46.0391 MiB at 4096 cells without flash
 * attention; -ngl 3 of 5 on one device (blocks 0-1 on the CPU): 145.01
 * and CPU 147.01. */
static void test_devices_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "llama");
	uint64_t peak[3];
	int8_t two[5] = {0, 0, 0, 1, 1}, part[5] = {1, 1, 0, 0, 0};
	lgraph_params p = {.cells = 4096, .n_ubatch = 512, .n_seq = 1, .kv_k = PLAN_KV_F16, .kv_v = PLAN_KV_F16,
			   .alignment = 128, .layer_dev = two, .n_dev = 3};
	assert_true(plan_lgraph_device_bytes(&m, &p, 4, false, 0, peak));
	assert_true(fabs(MIB_D(peak[0]) - 180.0234) < 0.005);
	assert_true(fabs(MIB_D(peak[1]) - 178.0312) < 0.005);
	assert_true(fabs(MIB_D(peak[2]) - 46.0391) < 0.005);
	p.layer_dev = part;
	p.n_dev = 2;
	assert_true(plan_lgraph_device_bytes(&m, &p, 1, false, 0, peak));
	assert_true(fabs(MIB_D(peak[0]) - 145.01) < 0.01);
	assert_true(fabs(MIB_D(peak[1]) - 147.01) < 0.01);
	/* with op offload device 0 runs the CPU blocks' large-batch ops too,
	 * copying their weights in: its buffer grows, the CPU's shrinks */
	uint64_t off[2];
	assert_true(plan_lgraph_device_bytes(&m, &p, 1, true, 0, off));
	assert_true(off[0] > peak[0] && off[1] < peak[1]);
}

static void test_gemma2_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "gemma2");
	m.head_dim_k = m.head_dim_v = 128;
	m.tied_embeddings = true;
	model_set_swa_pattern(&m, 512, 2, false);
	/* sliding-window cache of 1024 cells beside the full one:
	 * 79.5215 (FA), 156.0137 (no FA), 68.5020 (q8_0: the rotation moves
	 * the logits to a lower offset), 75.5215 at 512 */
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_F16) - 79.5215) < 0.0005);
	assert_true(fabs(lg(&m, 4096, false, PLAN_KV_F16) - 156.0137) < 0.0005);
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_Q8_0) - 68.5020) < 0.0005);
	assert_true(fabs(lg(&m, 512, true, PLAN_KV_F16) - 75.5215) < 0.0005);
	free(m.layer_swa);
}

static void test_moe_mla_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "qwen3moe");
	m.head_dim_k = m.head_dim_v = 128;
	m.n_experts = 16;
	m.n_experts_used = 4;
	m.expert_ffn = 768;
	assert_true(fabs(lg(&m, 4096, false, PLAN_KV_F16) - 152.0098) < 0.0005);
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 66.5020) < 0.0005);

	/* DeepSeek-2 style: MLA (kv_lora 512 + rope 64), q_lora 256, one
	 * leading dense block, 16 experts (4 used) + 1 shared */
	small(&m, "deepseek2");
	m.n_layers = 5;
	m.n_kv_heads = 1;
	m.head_dim_k = 576;
	m.head_dim_v = 512;
	m.mla = true;
	m.mla_head_dim_k = 192;
	m.mla_head_dim_v = 128;
	m.q_lora_rank = 256;
	m.n_rot = 64;
	m.n_experts = 16;
	m.n_experts_used = 4;
	m.expert_ffn = 512;
	m.n_expert_shared = 1;
	m.n_dense_lead = 1;
	m.expert_gating = 1;
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_F16) - 78.5957) < 0.0005);
	assert_true(fabs(lg(&m, 4096, false, PLAN_KV_F16) - 186.1035) < 0.0005);
}

/* gpt-oss, Llama 4 and Phi-3 on the oracle's shapes: the figures llama.cpp
 * 0c1e570 printed loading those files (tests/oracle/llamacpp_oracle.py);
 * vocabulary 2048 leaves the attention and expert phases as the peak */
static void test_gptoss_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "gpt-oss");
	m.n_experts = 8;
	m.n_experts_used = 4;
	m.expert_ffn = m.ffn = 768;
	model_set_swa_pattern(&m, 128, 2, false);
	assert_true(plan_lgraph_supported(&m));
	assert_true(fabs(lg(&m, 4096, false, PLAN_KV_F16) - 151.5137) < 0.0005);
	assert_true(fabs(lg(&m, 512, true, PLAN_KV_Q8_0) - 69.5840) < 0.0005);
	m.vocab = 2048;
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 42.7715) < 0.0005);
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_Q8_0) - 28.8652) < 0.0005);
	free(m.layer_swa);
}

static void test_llama4_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "llama4");
	m.n_experts = 16;
	m.n_experts_used = 1;
	m.expert_ffn = 768;
	model_set_swa_pattern(&m, 8192, 4, false);
	assert_true(plan_lgraph_supported(&m));
	assert_true(fabs(lg(&m, 16384, false, PLAN_KV_F16) - 565.0156) < 0.0005);
	m.vocab = 2048;
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 36.1172) < 0.0005);
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_Q8_0) - 19.6797) < 0.0005);
	/* sliding_window 0: no chunks, the last layer without RoPE */
	free(m.layer_swa);
	m.layer_swa = NULL;
	m.swa_window = 0;
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 27.6094) < 0.0005);

	/* Maverick-like: 128 experts (no QK norm), MoE in blocks 1 and 3 */
	small(&m, "llama4");
	m.n_experts = 128;
	m.n_experts_used = 1;
	m.expert_ffn = 256;
	model_set_swa_pattern(&m, 8192, 4, false);
	uint64_t exp_bytes[4] = {0, 1, 0, 1};
	m.layer_expert_bytes = exp_bytes;
	m.has_tensors = true;
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 71.7520) < 0.0005);
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_Q8_0) - 73.7520) < 0.0005);
	/* the same from interleave_moe_layer_step without tensors (a catalog row) */
	m.layer_expert_bytes = NULL;
	m.has_tensors = false;
	m.moe_step = 2;
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 71.7520) < 0.0005);
	m.moe_step = 1; /* every block: a different graph */
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 71.7520) > 0.01);
	free(m.layer_swa);
}

static void test_phi3_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "phi3");
	assert_true(plan_lgraph_supported(&m));
	assert_true(fabs(lg(&m, 4096, false, PLAN_KV_F16) - 143.0098) < 0.0005);
	assert_true(fabs(lg(&m, 512, true, PLAN_KV_Q8_0) - 71.0449) < 0.0005);
	m.vocab = 2048;
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_F16) - 38.5137) < 0.0005);
	assert_true(fabs(lg(&m, 512, false, PLAN_KV_F16) - 24.5098) < 0.0005);
	/* Phi-3 mini's widths (head size 96): llama.cpp rotates no quantized
	 * cache whose head size is not a multiple of 64 */
	small(&m, "phi3");
	m.hidden = 3072;
	m.n_heads = m.n_kv_heads = 32;
	m.head_dim_k = m.head_dim_v = 96;
	m.ffn = 8192;
	m.vocab = 32064;
	assert_true(fabs(lg(&m, 4096, true, PLAN_KV_Q8_0) - 90.6387) < 0.0005);
	assert_true(fabs(lg(&m, 16384, true, PLAN_KV_Q8_0) - 82.0137) < 0.0005);
}

/* Mamba-2 mixers before attention (build_mamba2_layer keeps its in and
 * out projections 2D, so the residual add takes the out projection's
 * memory): the oracle's files (tests/oracle/archs.py nemotron_h,
 * llamacpp_oracle.py granitehybrid) against the bytes llama.cpp 0c1e570
 * reserves on the CPU (ggml_gallocr_get_buffer_size).  Before, Nemotron-H
 * with flash attention was 4-128 MiB under and the Granite hybrid
 * without it 2 MiB over. */
static uint64_t lg_bytes(const model_desc *m, uint64_t cells, uint32_t ub, bool fa, plan_kv_type kv)
{
	lgraph_params p = {.cells = cells, .n_ubatch = ub, .n_seq = 1, .flash_attn = fa, .kv_k = kv, .kv_v = kv,
			   .alignment = 32};
	return plan_lgraph_compute_bytes(m, &p);
}

static void test_mamba2_hybrid_graph(void **state)
{
	(void)state;
	model_desc m;
	/* Nemotron-H-8B widths: Mamba-2, MLP-only and attention layers */
	small(&m, "nemotron_h");
	m.n_layers = 6;
	m.hidden = 4096;
	m.n_heads = 32;
	m.n_kv_heads = 8;
	m.head_dim_k = m.head_dim_v = 128;
	m.ffn = 12288;
	uint32_t kv[6] = {0, 0, 0, 8, 0, 0}, ff[6] = {0, 12288, 0, 0, 0, 12288};
	m.layer_kv_heads = kv;
	m.layer_ffn = ff;
	m.recurrent = true;
	m.ssm_conv = 4;
	m.ssm_inner = 8192;
	m.ssm_state = 128;
	m.ssm_dt_rank = 128;
	m.ssm_groups = 8;
	model_layers_fill(&m);
	assert_true(plan_lgraph_supported(&m));
	assert_int_equal(lg_bytes(&m, 4096, 512, true, PLAN_KV_Q8_0), 130748448);   /* 124.69 MiB */
	assert_int_equal(lg_bytes(&m, 65536, 1024, true, PLAN_KV_Q4_0), 416235552); /* 396.95 */
	assert_int_equal(lg_bytes(&m, 4096, 512, false, PLAN_KV_F16), 314581024);   /* 300.01 */
	free(m.layer_mix);

	/* Granite 4 hybrid: layers 1 and 3 attention, the rest Mamba-2 */
	small(&m, "granitehybrid");
	m.n_layers = 6;
	uint32_t gkv[6] = {0, 4, 0, 4, 0, 0};
	m.layer_kv_heads = gkv;
	m.recurrent = true;
	m.ssm_conv = 4;
	m.ssm_inner = 2048;
	m.ssm_state = 64;
	m.ssm_dt_rank = 32;
	m.ssm_groups = 1;
	model_layers_fill(&m);
	assert_int_equal(lg_bytes(&m, 4096, 512, false, PLAN_KV_F16), 156274208); /* 149.03 */
	free(m.layer_mix);
}

/* PhiMoE and Granite MoE as the oracle writes them (tests/oracle/archs.py),
 * against the bytes llama.cpp 0c1e570 reserved for the same files (its
 * ggml_gallocr_get_buffer_size). */
static void test_phimoe_granitemoe_graph(void **state)
{
	(void)state;
	model_desc m;
	/* Phi-3.5-MoE widths, 2 layers: phi3.cpp's graph with a MoE FFN */
	small(&m, "phimoe");
	m.n_layers = 2;
	m.hidden = 4096;
	m.n_heads = 32;
	m.n_kv_heads = 8;
	m.head_dim_k = m.head_dim_v = 128;
	m.ffn = m.expert_ffn = 3200;
	m.n_experts = 4;
	m.n_experts_used = 2;
	assert_true(plan_lgraph_supported(&m));
	assert_int_equal(lg_bytes(&m, 4096, 512, true, PLAN_KV_Q8_0), 103380992); /* 98.59 MiB (was 86.50) */
	assert_int_equal(lg_bytes(&m, 4096, 512, false, PLAN_KV_F16), 322971648); /* 308.01 */

	/* Granite 3 MoE: 12 experts, 8 used, no ffn_gate_exps in the file */
	small(&m, "granitemoe");
	m.hidden = 1536;
	m.n_heads = 24;
	m.n_kv_heads = 8;
	m.head_dim_k = m.head_dim_v = 64;
	m.ffn = m.expert_ffn = 512;
	m.n_experts = 12;
	m.n_experts_used = 8;
	m.expert_ungated = true;
	assert_true(plan_lgraph_supported(&m));
	assert_int_equal(lg_bytes(&m, 65536, 512, true, PLAN_KV_F16), 113260544);  /* 108.01 (phase model: 100.05) */
	assert_int_equal(lg_bytes(&m, 16384, 4096, true, PLAN_KV_Q5_1), 599801856); /* 572.02 */
}

/* Gemma 4 (gemma4.cpp), the oracle's file: SWA 5:1 with the sliding
 * layers' own head size (256, the full layer's 512), V taken from the K
 * projection (no attn_v), per-layer inputs of 256; llama.cpp 0c1e570's
 * bytes (ggml_gallocr_get_buffer_size of the reserved graph). Without
 * flash attention every layer's transposed V cache is n_embd_v_gqa_max()
 * wide and the sliding layers' V is padded to it. */
static void test_gemma4_graph(void **state)
{
	(void)state;
	model_desc m;
	small(&m, "gemma4");
	m.n_layers = 6;
	m.hidden = 2560;
	m.n_heads = 8;
	m.n_kv_heads = 2;
	m.head_dim_k = m.head_dim_v = 512;
	m.head_dim_k_swa = m.head_dim_v_swa = 256;
	m.ffn = 10240;
	m.embd_per_layer = 256;
	bool swa[6] = {1, 1, 1, 1, 1, 0}, vk[6] = {1, 1, 1, 1, 1, 1};
	m.swa_window = 512;
	m.layer_swa = swa;
	m.layer_v_from_k = vk;
	assert_true(plan_lgraph_supported(&m));
	assert_int_equal(lg_bytes(&m, 4096, 512, false, PLAN_KV_F16), 116932608);  /* 111.52 MiB (phase model: 114.52) */
	assert_int_equal(lg_bytes(&m, 65536, 1024, true, PLAN_KV_Q4_0), 325402624); /* 310.33 */
	assert_int_equal(lg_bytes(&m, 16384, 1024, false, PLAN_KV_F16), 688947200); /* 657.03 (phase model: 653.03) */
}

/* Random shapes of every architecture the builder knows: no crash, no
 * sanitizer report, and the buffer at least holds the f32 logits, which
 * are a graph output and never share memory. */
static void test_random_shapes(void **state)
{
	(void)state;
	static const char *const archs[] = {"llama", "qwen2", "qwen3", "gemma2", "gemma3", "olmo2", "qwen3moe",
					    "smallthinker", "deepseek2", "mamba", "mamba2", "granitehybrid", "lfm2",
					    "jamba", "gpt-oss", "llama4", "phi3", "gemma4"};
	uint64_t r = 0x9e3779b97f4a7c15ULL;
#define RND(n) ((r = r * 6364136223846793005ULL + 1442695040888963407ULL), (uint32_t)((r >> 33) % (n)))
	for (int it = 0; it < 400; it++) {
		model_desc m;
		const char *a = archs[it % (sizeof archs / sizeof archs[0])];
		small(&m, a);
		m.n_layers = 1 + RND(6);
		m.hidden = 64 * (1 + RND(8));
		m.n_heads = 1 + RND(8);
		m.n_kv_heads = 1 + RND(m.n_heads);
		m.head_dim_k = m.head_dim_v = 32 * (1 + RND(4));
		m.ffn = RND(3) ? 128 * (1 + RND(8)) : 0;
		m.vocab = 1 + RND(5000);
		if (!strcmp(a, "gemma4")) {
			m.embd_per_layer = 64 * RND(3);
			m.head_dim_k_swa = m.head_dim_v_swa = RND(2) ? 32 * (1 + RND(4)) : 0;
		}
		uint32_t kv[8] = {0};
		bool swa[8] = {0};
		if (!strcmp(a, "qwen3moe") || !strcmp(a, "smallthinker") || !strcmp(a, "deepseek2") ||
		    !strcmp(a, "jamba") || !strcmp(a, "gpt-oss") || (!strcmp(a, "llama4") && RND(2))) {
			m.n_experts = 2 + RND(16);
			m.n_experts_used = 1 + RND(m.n_experts);
			m.expert_ffn = RND(2) ? 64 * (1 + RND(4)) : 0;
			m.n_dense_lead = RND(2);
			m.n_expert_shared = RND(2);
		}
		if (!strcmp(a, "deepseek2")) {
			m.mla = true;
			m.n_kv_heads = 1;
			m.n_rot = 64;
			m.head_dim_k = 64 + 128 * (1 + RND(3));
			m.head_dim_v = m.head_dim_k - 64;
			m.mla_head_dim_k = 64 + 64 * (1 + RND(2));
			m.mla_head_dim_v = 64 * (1 + RND(2));
			m.q_lora_rank = RND(2) ? 128 : 0;
		}
		if (!strcmp(a, "mamba") || !strcmp(a, "mamba2") || !strcmp(a, "granitehybrid") || !strcmp(a, "lfm2") ||
		    !strcmp(a, "jamba")) {
			m.recurrent = true;
			m.ssm_conv = 2 + RND(4);
			m.ssm_inner = strcmp(a, "lfm2") ? 2 * m.hidden : m.hidden;
			m.ssm_state = strcmp(a, "lfm2") ? 16 * (1 + RND(4)) : 0;
			m.ssm_dt_rank = 8 * (1 + RND(4));
			m.ssm_groups = strcmp(a, "mamba2") && strcmp(a, "granitehybrid") ? 0 : 1;
			for (uint32_t il = 0; il < m.n_layers; il++)
				kv[il] = (!strcmp(a, "mamba") || !strcmp(a, "mamba2") || RND(2)) ? 0 : m.n_kv_heads;
			m.layer_kv_heads = kv;
		}
		if (!strcmp(a, "gemma2") || !strcmp(a, "gemma3") || !strcmp(a, "olmo2") || !strcmp(a, "smallthinker") ||
		    !strcmp(a, "gpt-oss") || !strcmp(a, "llama4")) {
			m.swa_window = 64 * (1 + RND(16));
			for (uint32_t il = 0; il < m.n_layers; il++)
				swa[il] = RND(2);
			m.layer_swa = swa;
		}
		plan_kv_type kvt = RND(3) == 0 ? PLAN_KV_Q8_0 : PLAN_KV_F16;
		bool fa = RND(2) || kvt != PLAN_KV_F16;
		uint64_t cells = 256 * (1 + RND(64));
		uint32_t ub = 1 + RND(1024);
		lgraph_params p = {.cells = cells, .n_ubatch = ub, .n_seq = 1 + RND(2), .flash_attn = fa, .kv_k = kvt,
				   .kv_v = kvt, .alignment = 128};
		if (!plan_lgraph_supported(&m))
			fail_msg("%s not supported", a);
		uint64_t bytes = plan_lgraph_compute_bytes(&m, &p);
		uint64_t t = ub < cells ? ub : cells;
		if (bytes < 4ULL * m.vocab * t)
			fail_msg("%s: %llu bytes, less than the logits", a, (unsigned long long)bytes);
	}
#undef RND
}

static void test_unsupported(void **state)
{
	(void)state;
	model_desc m;
	/* Gemma 4's MoE layers (26B-A4B) are not built: the phase model plans it */
	small(&m, "gemma4");
	m.n_experts = 128;
	m.n_experts_used = 8;
	assert_false(plan_lgraph_supported(&m));
	assert_int_equal(lg(&m, 4096, true, PLAN_KV_F16), 0);
	/* Gemma 3n's is (AltUp, Laurel, per-layer inputs) */
	small(&m, "gemma3n");
	assert_true(plan_lgraph_supported(&m));
	assert_true(lg(&m, 4096, true, PLAN_KV_F16) > 0);
	/* StarCoder2 is (issue 22): LayerNorm and an ungated FFN */
	small(&m, "starcoder2");
	assert_true(plan_lgraph_supported(&m));
	assert_true(lg(&m, 4096, true, PLAN_KV_F16) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inplace_chain),   cmocka_unit_test(test_no_inplace),
		cmocka_unit_test(test_view_blocks_inplace), cmocka_unit_test(test_second_consumer_blocks_inplace),
		cmocka_unit_test(test_output_kept),     cmocka_unit_test(test_best_fit),
		cmocka_unit_test(test_zero_size),       cmocka_unit_test(test_llama_graph),
		cmocka_unit_test(test_gemma2_graph),    cmocka_unit_test(test_moe_mla_graph),
		cmocka_unit_test(test_random_shapes),   cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_gptoss_graph),    cmocka_unit_test(test_llama4_graph),
		cmocka_unit_test(test_phi3_graph),      cmocka_unit_test(test_devices_graph),
		cmocka_unit_test(test_mamba2_hybrid_graph), cmocka_unit_test(test_phimoe_granitemoe_graph),
		cmocka_unit_test(test_gemma4_graph),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

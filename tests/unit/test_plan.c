/*
 * Unit tests for plan/: weights by llama.cpp's quantization rules, KV cache
 * by type and sliding window, compute buffers, placement over GPUs and host
 * RAM, verdicts, speed and advice.  Expected figures are llama.cpp's own
 * log lines (XiongjieDai/GPU-Benchmarks-on-LLM-Inference notebooks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_writer.h"
#include "kb/kb.h"
#include "model/model.h"
#include "plan/engine.h"
#include "plan/plan.h"
#include "plan/speed.h"

#define MIB(x) ((double)(x) / 1048576.0)

static void llama(model_desc *m, const char *name, uint32_t layers, uint32_t hidden, uint32_t heads,
		  uint32_t kv, uint32_t ffn, uint32_t vocab, uint64_t ctx)
{
	memset(m, 0, sizeof *m);
	m->name = (char *)name;
	m->arch = (char *)"llama";
	m->n_layers = layers;
	m->hidden = hidden;
	m->n_heads = heads;
	m->n_kv_heads = kv;
	m->head_dim_k = m->head_dim_v = hidden / heads;
	m->ffn = ffn;
	m->vocab = vocab;
	m->ctx_train = ctx;
}

static void llama3_8b(model_desc *m)
{
	llama(m, "llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8192);
	m->params_total = m->params_active = 8.03e9;
}

static void gpu(plan_request *rq, const char *id, size_t count)
{
	const gpu_spec *s = kb_gpu_find(id);
	assert_non_null(s);
	for (size_t i = 0; i < count; i++)
		plan_gpu_from_spec(&rq->gpus[rq->n_gpus++], s);
}

/* Llama-3-8B Q4_K_M: llama.cpp b2824 printed CUDA0 model buffer 4403.49
 * MiB and CPU 281.81 MiB (the token embedding). */
static void test_weights_q4_k_m(void **state)
{
	(void)state;
	model_desc m;
	llama3_8b(&m);
	plan_weights w;
	gw_error err;
	assert_int_equal(plan_weights_get(&m, "q4_k_m", &w, &err), 0);
	uint64_t gpu = w.output_bytes;
	for (uint32_t i = 0; i < w.n_layers; i++)
		gpu += w.layer_bytes[i];
	assert_true(fabs(MIB(gpu) - 4403.49) < 0.01);
	assert_true(fabs(MIB(w.embd_bytes) - 281.81) < 0.01);
	assert_false(w.exact);
	assert_string_equal(w.quant, "Q4_K_M");
	/* more-bits layers are bigger (attn_v/ffn_down in Q6_K): layer 0 vs 5 */
	assert_true(w.layer_bytes[0] > w.layer_bytes[5]);
	plan_weights_release(&w);

	/* Llama-2-13B Q4_0: old llama.cpp "model 6936.01" MiB on the GPU;
	 * Llama-2-7B F16: 12603.02 MiB. */
	llama(&m, "llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 4096);
	assert_int_equal(plan_weights_get(&m, "q4_0", &w, &err), 0);
	gpu = w.output_bytes;
	for (uint32_t i = 0; i < w.n_layers; i++)
		gpu += w.layer_bytes[i];
	assert_true(fabs(MIB(gpu) - 6936.01) < 0.05);
	plan_weights_release(&w);
	llama(&m, "llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096);
	assert_int_equal(plan_weights_get(&m, "f16", &w, &err), 0);
	gpu = w.output_bytes;
	for (uint32_t i = 0; i < w.n_layers; i++)
		gpu += w.layer_bytes[i];
	assert_true(fabs(MIB(gpu) - 12603.02) < 0.05);
	plan_weights_release(&w);

	/* Qwen2.5-72B-Instruct Q4_K_M (bartowski): 44.15 GiB, 5.22 bpw
	 * (gpustack/gguf-parser-go README); qwen2 biases, 70B-type attn_v */
	llama(&m, "qwen2.5-72b", 80, 8192, 64, 8, 29568, 152064, 32768);
	m.arch = (char *)"qwen2";
	assert_int_equal(plan_weights_get(&m, "q4_k_m", &w, &err), 0);
	assert_true(fabs((double)w.total_bytes / GiB - 44.15) < 0.02);
	plan_weights_release(&w);

	assert_int_equal(plan_weights_get(&m, "q9_z", &w, &err), GW_EINVAL);
	assert_non_null(strstr(err.msg, "q9_z"));
}

static void test_weights_formats(void **state)
{
	(void)state;
	model_desc m;
	llama3_8b(&m);
	plan_weights bf, awq, q8;
	gw_error err;
	assert_int_equal(plan_weights_get(&m, "bf16", &bf, &err), 0);
	assert_int_equal(plan_weights_get(&m, "awq-int4", &awq, &err), 0);
	assert_int_equal(plan_weights_get(&m, "q8_0", &q8, &err), 0);
	/* 8.03e9 params in bf16 ~ 16.06 GB */
	assert_true(fabs((double)bf.total_bytes / 1e9 - 16.06) < 0.05);
	assert_true(fabs(bf.params - 8.03e9) / 8.03e9 < 0.01);
	assert_true(awq.total_bytes < bf.total_bytes / 2);
	assert_true(q8.total_bytes < bf.total_bytes && q8.total_bytes > awq.total_bytes);
	plan_weights_release(&bf);
	plan_weights_release(&awq);
	plan_weights_release(&q8);
}

static void test_kv(void **state)
{
	(void)state;
	model_desc m;
	llama3_8b(&m);
	/* 32 x 1024 x 8192 x 2 B x 2 = 1024.00 MiB (KV self size, 4090_v3) */
	uint64_t cells = plan_kv_cells(8192, 1);
	assert_int_equal(cells, 8192);
	assert_int_equal(plan_kv_bytes(&m, 0, 32, cells, 1, 512, PLAN_KV_F16), 1024 * MiB);
	assert_int_equal(plan_kv_bytes(&m, 0, 32, cells, 1, 512, PLAN_KV_Q8_0), 1024 * MiB / 64 * 34);
	assert_int_equal(plan_kv_bytes(&m, 0, 32, cells, 1, 512, PLAN_KV_Q4_0), 1024 * MiB / 64 * 18);
	assert_int_equal(plan_kv_bytes(&m, 0, 32, cells, 1, 512, PLAN_KV_F32), 2048 * MiB);
	/* padding to 256 cells, sequences multiply */
	assert_int_equal(plan_kv_cells(1000, 1), 1024);
	assert_int_equal(plan_kv_cells(2048, 4), 8192);
	/* Llama-2-13B (MHA) at 512: 400 MiB; Llama-2-70B (kv 8) at 512: 160 MiB */
	llama(&m, "l13", 40, 5120, 40, 40, 13824, 32000, 4096);
	assert_int_equal(plan_kv_bytes(&m, 0, 40, 512, 1, 512, PLAN_KV_F16), 400 * MiB);
	llama(&m, "l70", 80, 8192, 64, 8, 28672, 32000, 4096);
	assert_int_equal(plan_kv_bytes(&m, 0, 80, 512, 1, 512, PLAN_KV_F16), 160 * MiB);

	/* sliding window: 5 of every 6 layers hold window + batch cells */
	llama(&m, "g3", 12, 2560, 8, 4, 10240, 262144, 131072);
	m.arch = (char *)"gemma3";
	m.head_dim_k = m.head_dim_v = 256;
	m.swa_window = 1024;
	bool swa[12];
	for (int i = 0; i < 12; i++)
		swa[i] = i % 6 != 5;
	m.layer_swa = swa;
	uint64_t per_cell = 2 * 4 * 256 * 2;
	uint64_t full = plan_kv_bytes(&m, 0, 12, 32768, 1, 512, PLAN_KV_F16);
	assert_int_equal(full, 2 * 32768 * per_cell + 10 * 1536 * per_cell);
	/* a context shorter than the window: every layer holds the context */
	assert_int_equal(plan_kv_bytes(&m, 0, 12, 1024, 1, 512, PLAN_KV_F16), 12 * 1024 * per_cell);
	/* per-layer KV heads */
	uint32_t heads[12] = {4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 8};
	m.layer_kv_heads = heads;
	m.swa_window = 0;
	m.layer_swa = NULL;
	assert_int_equal(plan_kv_bytes(&m, 0, 12, 256, 1, 512, PLAN_KV_F16),
			 (10 * 4 + 8) * 256 * 2 * 256 * 2);
}

static void test_compute(void **state)
{
	(void)state;
	model_desc m;
	llama3_8b(&m);
	/* 560.00 MiB single GPU, 640 MiB per GPU over two (3090_2_v3) */
	assert_true(fabs(MIB(plan_compute_bytes(&m, 8192, 512, false, false)) - 560.00) < 0.01);
	assert_true(fabs(MIB(plan_compute_bytes(&m, 8192, 512, false, true)) - 640.0) < 0.05);
	/* flash attention drops the n_ubatch x n_ctx x n_head f32 KQ term */
	uint64_t fa = plan_compute_bytes(&m, 8192, 512, true, false);
	assert_true(fa < 400 * MiB);
	assert_true(fa >= 4ULL * 512 * (4096 + 128256)); /* the logits stay */
	/* Llama-2-7B at 512: 70.50 MiB (VRAM scratch buffer, 4090_v2) */
	llama(&m, "l7", 32, 4096, 32, 32, 11008, 32000, 4096);
	assert_true(fabs(MIB(plan_compute_bytes(&m, 512, 512, false, false)) - 70.50) < 0.01);
}

static void test_fits_8gb(void **state)
{
	(void)state;
	model_desc m;
	llama3_8b(&m);
	plan_request rq;
	plan_request_init(&rq);
	rq.model = &m;
	rq.quant = "q4_k_m";
	rq.ctx = 8192;
	gpu(&rq, "rtx-4060", 1);
	plan_result *r = malloc(sizeof *r);
	gw_error err;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_FITS);
	assert_int_equal(r->gpu_layers, 33);
	assert_int_equal(r->total_layers, 33);
	assert_int_equal(r->kv_cache_bytes, 1024 * MiB);
	assert_true(r->vram_bytes < 8ULL * GiB);
	assert_int_equal(r->max_ctx, 8192); /* the trained context */
	assert_true(r->decode_tok_s > 20 && r->decode_tok_s < 80);
	assert_true(r->prefill_tok_s > 100);
	assert_int_equal(r->host_weights_bytes, r->embd_bytes);
	free(r);
}

static void test_laptop_13b(void **state)
{
	(void)state;
	model_desc m;
	llama(&m, "llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 4096);
	m.params_total = m.params_active = 13.02e9;
	plan_request rq;
	plan_request_init(&rq);
	rq.model = &m;
	rq.quant = "q4_k_m";
	rq.ctx = 2048;
	rq.ram_bytes = 16 * GiB;
	rq.engine_build = "b2824"; /* the users' reports are of 2024 builds */
	gpu(&rq, "4060-laptop", 1);
	plan_result *r = malloc(sizeof *r);
	gw_error err;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_OFFLOAD);
	assert_true(r->gpu_layers > 10 && r->gpu_layers < 41);
	assert_int_equal(r->total_layers, 41);
	assert_true(r->devices[0].has_output); /* filled from the last layer */
	assert_int_equal(r->devices[0].first_layer, 41 - r->gpu_layers);
	assert_true(r->host_bytes > r->embd_bytes && r->host_bytes < 16 * GiB);
	assert_true(r->decode_tok_s >= 6 && r->decode_tok_s <= 8);
	assert_true(r->ram_ok);
	/* advice in the documented order, each planned */
	assert_true(r->n_advice >= 3);
	/* the placements that run first (never the plan's own -ngl split:
	 * not a change), then the other changes in the documented order */
	size_t first = 0;
	while (first < r->n_advice && r->advice[first].placement)
		first++;
	assert_true(first < r->n_advice);
	for (size_t i = 0; i < r->n_advice; i++)
		assert_null(strstr(r->advice[i].action, "offload: "));
	assert_non_null(strstr(r->advice[first].action, "quant"));
	bool card = false;
	for (size_t i = 0; i < r->n_advice; i++)
		card |= strstr(r->advice[i].action, "larger card") != NULL && r->advice[i].verdict == PLAN_FITS;
	assert_true(card);

	/* too little RAM for the host part: no fit */
	rq.ram_bytes = 1 * GiB;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_NOFIT);
	assert_false(r->ram_ok);

	/* a fixed -ngl is honoured */
	rq.ram_bytes = 16 * GiB;
	rq.gpu_layers = 10;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->gpu_layers, 10);
	assert_int_equal(r->verdict, PLAN_OFFLOAD);
	free(r);
}

static void test_70b_24gb(void **state)
{
	(void)state;
	model_desc m;
	llama(&m, "llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 8192);
	m.params_total = m.params_active = 70.55e9;
	plan_request rq;
	plan_request_init(&rq);
	rq.model = &m;
	rq.quant = "q4_k_m";
	gpu(&rq, "rtx-4090", 1);
	plan_result *r = malloc(sizeof *r);
	gw_error err;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_OFFLOAD);
	assert_true(r->gpu_layers < r->total_layers);
	/* file 39.59 GiB (XiongjieDai README) */
	assert_true(fabs((double)r->model_bytes / GiB - 39.59) < 0.4);
	/* two 4090s hold it with a split by free memory */
	gpu(&rq, "rtx-4090", 1);
	rq.ctx = 1024;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_FITS);
	assert_int_equal(r->n_devices, 2);
	assert_true(r->devices[0].layers > 30 && r->devices[1].layers > 30);
	assert_true(r->devices[1].has_output);
	/* measured 19.06 tok/s (4090_2_v3) */
	assert_true(r->decode_tok_s > 19.06 * 0.75 && r->decode_tok_s < 19.06 * 1.25);
	free(r);
}

/* 2x3090, Llama-3-8B Q4_K_M at 8192: model 2113.28 + 2290.21, KV 544 + 480. */
static void test_split_2x3090(void **state)
{
	(void)state;
	model_desc m;
	llama3_8b(&m);
	plan_request rq;
	plan_request_init(&rq);
	rq.model = &m;
	rq.quant = "q4_k_m";
	rq.ctx = 8192;
	rq.gpu_layers = 99;
	rq.engine_build = "b2824"; /* the measured logs are of b2824 */
	gpu(&rq, "rtx-3090", 2);
	plan_result *r = malloc(sizeof *r);
	gw_error err;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_FITS);
	assert_true(fabs(MIB(r->devices[0].weights_bytes) - 2113.28) / 2113.28 < 0.03);
	assert_true(fabs(MIB(r->devices[1].weights_bytes) - 2290.21) / 2290.21 < 0.03);
	assert_int_equal(r->devices[0].kv_cache_bytes, 544 * MiB);
	assert_int_equal(r->devices[1].kv_cache_bytes, 480 * MiB);
	assert_true(fabs(MIB(r->devices[0].compute_bytes) - 640.0) < 0.1);
	free(r);
}

static void test_moe_speed(void **state)
{
	(void)state;
	model_desc m;
	llama(&m, "moe", 48, 2048, 32, 4, 768, 151936, 40960);
	m.arch = (char *)"qwen3moe";
	m.head_dim_k = m.head_dim_v = 128;
	m.n_experts = 128;
	m.n_experts_used = 8;
	m.expert_ffn = 768;
	m.params_total = 30.5e9;
	m.params_active = 3.3e9;
	plan_request rq;
	plan_request_init(&rq);
	rq.model = &m;
	rq.quant = "q4_k_m";
	gpu(&rq, "rtx-4090", 1);
	plan_result *r = malloc(sizeof *r);
	gw_error err;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_FITS);
	/* only the active experts are read: far fewer bytes than the weights */
	assert_true(r->gpu_bytes_per_token < (double)r->weights_bytes / 4);
	double moe = r->decode_tok_s;
	/* on a 12 GB card: experts of the first blocks in RAM keep every layer
	 * on the GPU and decode faster than whole layers in RAM.  By default
	 * llama.cpp's automatic fit does just that (plan.c fit_moe); an
	 * explicit -ngl gives whole layers, and the advice the --n-cpu-moe */
	rq.n_gpus = 0;
	gpu(&rq, "rtx-3060", 1);
	rq.ram_bytes = 32 * GiB;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_OFFLOAD);
	assert_true(r->fit_moe);
	assert_int_equal(r->gpu_layers, r->total_layers);
	assert_true(r->n_cpu_moe > 0 && r->fit_layer_split_layers < r->total_layers);
	assert_true(r->decode_tok_s > r->fit_layer_split_tok_s);
	assert_true(r->advice[0].placement);
	rq.gpu_layers = (int)r->fit_layer_split_layers;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_false(r->fit_moe);
	assert_true(r->gpu_layers < r->total_layers);
	double layers_off = r->decode_tok_s;
	bool advised = false;
	for (size_t i = 0; i < r->n_advice; i++)
		advised |= strstr(r->advice[i].action, "--n-cpu-moe") != NULL;
	assert_true(advised);
	rq.n_cpu_moe = 24;
	rq.gpu_layers = 99;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->n_cpu_moe, 24);
	assert_int_equal(r->gpu_layers, r->total_layers);
	assert_int_equal(r->verdict, PLAN_OFFLOAD);
	assert_true(r->host_weights_bytes > 6 * GiB);
	assert_true(r->decode_tok_s > layers_off);
	rq.n_cpu_moe = 0;
	rq.gpu_layers = -1;
	rq.ram_bytes = 0;
	rq.n_gpus = 0;
	gpu(&rq, "rtx-4090", 1);
	m.n_experts_used = 128;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_true(moe > 3 * r->decode_tok_s);
	free(r);
}

static void test_engines(void **state)
{
	(void)state;
	model_desc m;
	llama3_8b(&m);
	plan_request rq;
	plan_request_init(&rq);
	rq.model = &m;
	gpu(&rq, "a100-80g-sxm", 1);
	plan_result *r = malloc(sizeof *r);
	gw_error err;
	/* vLLM pre-allocates 0.9 of the card when the model fits */
	rq.engine = PLAN_ENGINE_VLLM;
	rq.quant = "bf16";
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_FITS);
	assert_true(llabs((long long)r->vram_bytes - (long long)(0.9 * (double)rq.gpus[0].vram_bytes)) <
		    (long long)MiB);
	assert_true(r->kv_cache_bytes > 40 * GiB);
	/* on a 16 GB card the bf16 weights leave no KV space */
	rq.n_gpus = 0;
	gpu(&rq, "rtx-4080", 1);
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_NOFIT);
	/* Ollama: num_parallel multiplies the KV context */
	rq.engine = PLAN_ENGINE_OLLAMA;
	rq.quant = "q4_k_m";
	rq.ctx = 2048;
	rq.n_parallel = 4;
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->kv_cache_bytes, 1024 * MiB);
	assert_int_equal(r->devices[0].overhead_bytes, 457 * MiB);
	/* transformers: bf16 weights + KV + activations */
	rq.engine = PLAN_ENGINE_TRANSFORMERS;
	rq.n_parallel = 1;
	rq.quant = "bf16";
	rq.n_gpus = 0;
	gpu(&rq, "a100-80g-sxm", 1);
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_int_equal(r->verdict, PLAN_FITS);
	assert_true(r->weights_bytes > 14.5 * GiB && r->weights_bytes < 15.5 * GiB);
	free(r);
}

static void test_parse(void **state)
{
	(void)state;
	plan_kv_type t;
	plan_engine e;
	assert_int_equal(plan_kv_type_parse("Q8_0", &t), 0);
	assert_int_equal(t, PLAN_KV_Q8_0);
	assert_int_not_equal(plan_kv_type_parse("q3_k", &t), 0);
	assert_int_equal(plan_engine_parse("vLLM", &e), 0);
	assert_int_equal(e, PLAN_ENGINE_VLLM);
	assert_int_not_equal(plan_engine_parse("tgi", &e), 0);
	assert_string_equal(plan_verdict_name(PLAN_NOFIT), "no-fit");
	assert_int_equal(plan_kv_row_bytes(PLAN_KV_Q8_0, 33), 68);
}

/* A GGUF written here is planned with exactly its tensor bytes. */
static void test_gguf_exact(void **state)
{
	(void)state;
	char path[256];
	const char *t = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/gw-plan-%d.gguf", t && *t ? t : "/tmp", (int)getpid());
	ggw w;
	ggw_init(&w, 3);
	ggw_kv_str(&w, "general.architecture", "llama");
	ggw_kv_u32(&w, "general.file_type", 15); /* MOSTLY_Q4_K_M */
	ggw_kv_u32(&w, "llama.block_count", 2);
	ggw_kv_u32(&w, "llama.embedding_length", 512);
	ggw_kv_u32(&w, "llama.feed_forward_length", 1024);
	ggw_kv_u32(&w, "llama.attention.head_count", 8);
	ggw_kv_u32(&w, "llama.attention.head_count_kv", 2);
	ggw_kv_u32(&w, "llama.context_length", 4096);
	uint64_t expect_gpu = 0, embd;
	embd = ggw_tensor2(&w, "token_embd.weight", 12, 512, 1000);
	for (int b = 0; b < 2; b++) {
		char n[64];
		snprintf(n, sizeof n, "blk.%d.attn_q.weight", b);
		expect_gpu += ggw_tensor2(&w, n, 12, 512, 512);
		snprintf(n, sizeof n, "blk.%d.attn_k.weight", b);
		expect_gpu += ggw_tensor2(&w, n, 12, 512, 128);
		snprintf(n, sizeof n, "blk.%d.attn_v.weight", b);
		expect_gpu += ggw_tensor2(&w, n, 14, 512, 128);
		snprintf(n, sizeof n, "blk.%d.attn_output.weight", b);
		expect_gpu += ggw_tensor2(&w, n, 12, 512, 512);
		snprintf(n, sizeof n, "blk.%d.ffn_gate.weight", b);
		expect_gpu += ggw_tensor2(&w, n, 12, 512, 1024);
		snprintf(n, sizeof n, "blk.%d.ffn_up.weight", b);
		expect_gpu += ggw_tensor2(&w, n, 12, 512, 1024);
		snprintf(n, sizeof n, "blk.%d.ffn_down.weight", b);
		expect_gpu += ggw_tensor2(&w, n, 14, 1024, 512);
		uint64_t d1[1] = {512};
		snprintf(n, sizeof n, "blk.%d.attn_norm.weight", b);
		expect_gpu += ggw_tensor(&w, n, 0, 1, d1);
		snprintf(n, sizeof n, "blk.%d.ffn_norm.weight", b);
		expect_gpu += ggw_tensor(&w, n, 0, 1, d1);
	}
	uint64_t d1[1] = {512};
	expect_gpu += ggw_tensor(&w, "output_norm.weight", 0, 1, d1);
	expect_gpu += ggw_tensor2(&w, "output.weight", 14, 512, 1000);
	ggw_write(&w, path, 0);
	ggw_free(&w);

	model_desc m;
	gw_error err;
	assert_int_equal(model_load(path, NULL, &m, &err), 0);
	plan_request rq;
	plan_request_init(&rq);
	rq.model = &m;
	rq.ctx = 512;
	gpu(&rq, "rtx-4090", 1);
	plan_result *r = malloc(sizeof *r);
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_true(r->weights_exact);
	assert_int_equal(r->weights_bytes, expect_gpu);
	assert_int_equal(r->embd_bytes, embd);
	assert_int_equal(r->model_bytes, expect_gpu + embd);
	assert_int_equal(r->verdict, PLAN_FITS);
	/* a different --quant re-estimates from the shape */
	rq.quant = "q8_0";
	assert_int_equal(plan_run(&rq, r, &err), 0);
	assert_false(r->weights_exact);
	free(r);
	model_release(&m);
	remove(path);
}

static int teardown(void **state)
{
	(void)state;
	kb_release_all();
	return 0;
}

/* Unified memory as its own kind: the GPU's share of one pool by the OS's
 * rule (Apple 2/3 up to 32 GB then 3/4; GB10 all but the OS; Strix Halo
 * half, TTM's default), and the CPU side the rest less the OS. */
static void test_unified_kinds(void **state)
{
	(void)state;
	gw_error err = {0};
	assert_int_equal(kb_load_all(&err), 0);
	const gpu_spec *m1 = kb_gpu_find("m1"), *m4 = kb_gpu_find("m4-max"), *spark = kb_gpu_find("dgx-spark"),
		       *halo = kb_gpu_find("strix-halo-395"), *halo390 = kb_gpu_find("ai-max-390");
	assert_non_null(m1);
	assert_non_null(m4);
	assert_non_null(spark);
	assert_non_null(halo);
	assert_non_null(halo390);
	assert_true(m1->unified_memory && spark->unified_memory && halo->unified_memory && halo390->unified_memory);
	assert_int_equal(halo->bandwidth_gbs, 256);
	assert_int_equal(spark->bandwidth_gbs, 273);
	/* Apple 16 GB: 10922.67 MB (2/3); 128 GB: 3/4 */
	assert_int_equal(plan_unified_gpu_bytes(m1, 16 * GiB), 16 * GiB / 3 * 2);
	assert_int_equal(plan_unified_gpu_bytes(m4, 128 * GiB), 96 * GiB);
	assert_int_equal(plan_unified_gpu_bytes(NULL, 64 * GiB), 48 * GiB);
	/* GB10: 128 GiB less the OS's 8 GiB */
	assert_int_equal(plan_unified_gpu_bytes(spark, 128 * GiB), 120 * GiB);
	/* Strix Halo: half */
	assert_int_equal(plan_unified_gpu_bytes(halo, 128 * GiB), 64 * GiB);
	/* the CPU side: the rest less the OS's 10% (at least 4 GiB) */
	assert_int_equal(plan_unified_host_bytes(halo, 128 * GiB), 64 * GiB - 128 * GiB / 10);
	assert_int_equal(plan_unified_host_bytes(spark, 128 * GiB), 0);
	/* a plan on each: the usable bytes are the share, the backend the vendor's */
	for (int k = 0; k < 3; k++) {
		const gpu_spec *s = k == 0 ? m4 : k == 1 ? spark : halo;
		plan_gpu g;
		plan_gpu_from_spec(&g, s);
		assert_int_equal(plan_usable_bytes(&g), plan_unified_gpu_bytes(s, s->vram_bytes));
		assert_non_null(plan_unified_knob(s));
	}
	assert_int_equal(plan_backend_default(halo, true), PLAN_BACKEND_ROCM);
	assert_int_equal(plan_backend_default(spark, true), PLAN_BACKEND_CUDA);
	assert_int_equal(plan_backend_default(m4, true), PLAN_BACKEND_METAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights_q4_k_m), cmocka_unit_test(test_weights_formats),
		cmocka_unit_test(test_unified_kinds),
		cmocka_unit_test(test_kv),             cmocka_unit_test(test_compute),
		cmocka_unit_test(test_fits_8gb),       cmocka_unit_test(test_laptop_13b),
		cmocka_unit_test(test_70b_24gb),       cmocka_unit_test(test_split_2x3090),
		cmocka_unit_test(test_moe_speed),      cmocka_unit_test(test_engines),
		cmocka_unit_test(test_parse),          cmocka_unit_test(test_gguf_exact),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

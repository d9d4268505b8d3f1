/*
 * Unit tests for plan/train: the bytes-per-parameter rules, the activation
 * formula's options, and the validation against published fine-tuning
 * peaks (tests/validation/plan-measurements.tsv, rows full/lora/qlora).
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

#include "kb/kb.h"
#include "plan/train.h"

/* Shapes from the models' config.json (see reference/model-arch.tsv). */
static const model_desc llama2_7b = {.name = "llama-2-7b", .n_layers = 32, .hidden = 4096, .n_heads = 32,
				     .n_kv_heads = 32, .head_dim_k = 128, .ffn = 11008, .vocab = 32000,
				     .params_total = 6.74e9};
static const model_desc llama31_8b = {.name = "llama-3.1-8b", .n_layers = 32, .hidden = 4096, .n_heads = 32,
				      .n_kv_heads = 8, .head_dim_k = 128, .ffn = 14336, .vocab = 128256,
				      .params_total = 8.03e9};

static uint64_t total(const model_desc *m, const train_opts *o)
{
	train_breakdown bd;
	uint64_t host;
	double t;
	assert_int_equal(train_memory(m, o, &bd, &host, &t, NULL), 0);
	return bd.total;
}

/* Bytes per parameter at the optimizer step, the phase where every
 * gradient and state coexists (tests/validation/train-oracle.tsv: exact
 * against PyTorch's MemTracker for fp32 and the Trainer's autocast). */
static double step_bytes_per_param(const model_desc *m, const train_opts *o)
{
	train_breakdown bd;
	uint64_t host;
	double t;
	assert_int_equal(train_memory(m, o, &bd, &host, &t, NULL), 0);
	return bd.phase_bytes[TRAIN_PHASE_OPTIMIZER] / m->params_total;
}

static void test_full_mixed_adam_is_16_bytes(void **state)
{
	(void)state;
	train_opts o;
	train_opts_init(&o);
	o.method = TRAIN_FULL;
	o.precision = TRAIN_MIXED_BF16;
	o.optimizer = TRAIN_ADAMW_FUSED;
	/* the Trainer's autocast: fp32 weights, fp32 gradients, m and v: 4 + 4 + 8 */
	assert_int_equal(o.amp, TRAIN_AMP_AUTOCAST);
	assert_true(fabs(step_bytes_per_param(&llama2_7b, &o) - 16.0) < 0.01);
	/* DeepSpeed/FSDP: bf16 weights and gradients, fp32 master and states: 2 + 2 + 4 + 8 */
	o.amp = TRAIN_AMP_MASTER;
	assert_true(fabs(step_bytes_per_param(&llama2_7b, &o) - 16.0) < 0.01);
	train_breakdown bd;
	uint64_t host;
	double t;
	o.optimizer = TRAIN_ADAMW_FUSED;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	assert_true(fabs(bd.cat_params / 6.74e9 - 2.0) < 0.01);
	o.amp = TRAIN_AMP_AUTOCAST;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	assert_true(fabs(bd.cat_params / 6.74e9 - 4.0) < 0.01);
	assert_true(t == 6.74e9);
	/* foreach AdamW adds the step's sqrt(v) list: 4 more */
	o.optimizer = TRAIN_ADAMW;
	assert_true(fabs(step_bytes_per_param(&llama2_7b, &o) - 20.0) < 0.01);
	/* pure fp32 fused Adam: 4 + 4 + 8 */
	o.precision = TRAIN_FP32;
	o.optimizer = TRAIN_ADAMW_FUSED;
	assert_true(fabs(step_bytes_per_param(&llama2_7b, &o) - 16.0) < 0.01);
	/* 8-bit Adam shrinks m+v from 8 to about 2 bytes */
	o.precision = TRAIN_MIXED_BF16;
	o.optimizer = TRAIN_ADAMW_8BIT;
	double per = step_bytes_per_param(&llama2_7b, &o);
	assert_true(per > 10.02 && per < 10.04); /* 4 + 4 + 2 x (1 + 4/256) */
	/* paged states leave the GPU for host RAM */
	o.optimizer = TRAIN_PAGED_ADAMW_8BIT;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	assert_true(host > 13e9 && host < 14e9);
	/* ZeRO-Offload: states and master on the host, none on the GPU */
	o.optimizer = TRAIN_ADAMW;
	o.amp = TRAIN_AMP_MASTER;
	o.offload_optimizer = true;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	assert_true(fabs(host / 6.74e9 - 12.0) < 0.01);
	assert_true(fabs(bd.phase_bytes[TRAIN_PHASE_OPTIMIZER] / 6.74e9 - 4.0) < 0.01);
}

static void test_lora_adapter_count(void **state)
{
	(void)state;
	train_opts o;
	train_opts_init(&o);
	o.method = TRAIN_LORA;
	o.lora_rank = 8;
	/* PEFT's default for Llama: q_proj and v_proj */
	assert_int_equal(o.targets, TRAIN_LORA_QV);
	train_breakdown bd;
	uint64_t host;
	double t;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	assert_true(t == 32.0 * 2 * 8 * 8192);
	o.targets = TRAIN_LORA_ATTN;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	/* q,k,v,o of 4096x4096: 4 * 8 * (4096 + 4096) per layer, 32 layers */
	assert_true(t == 32.0 * 4 * 8 * 8192);
	o.targets = TRAIN_LORA_ALL_LINEAR;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	assert_true(t == 32.0 * (4 * 8 * 8192 + 3 * 8 * (4096 + 11008)));
	/* a list: q, k, down */
	assert_int_equal(train_parse_lora_targets("q_proj,k,down_proj", &o), 0);
	assert_int_equal(o.targets, TRAIN_LORA_LIST);
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	assert_true(t == 32.0 * 8 * (8192 + 8192 + 15104));
	assert_int_equal(train_parse_lora_targets("q,x", &o), GW_EINVAL);
	assert_int_equal(train_parse_lora_targets("", &o), GW_EINVAL);
	/* the frozen base holds no gradients or optimizer states */
	assert_int_equal(bd.gradients, 0);
	assert_int_equal(bd.optimizer, 0);
}

static void test_qlora_constants(void **state)
{
	(void)state;
	train_opts o;
	train_opts_init(&o);
	o.method = TRAIN_QLORA;
	train_breakdown bd;
	uint64_t host;
	double t;
	assert_int_equal(train_memory(&llama2_7b, &o, &bd, &host, &t, NULL), 0);
	double linear = 6.74e9 - 2 * 32000.0 * 4096 - (32 * 2 * 4096 + 4096);
	/* double quantization: 0.127 bits per parameter */
	double bits = bd.quant_consts * 8.0 / linear;
	assert_true(fabs(bits - 0.127) < 0.001);
	/* 4-bit linears plus 16-bit embeddings */
	assert_true(bd.weights < 6.74e9 * 0.6);
}

static void test_activation_options(void **state)
{
	(void)state;
	train_opts o;
	train_opts_init(&o);
	train_apply_framework(&o, TRAIN_FW_NONE); /* eager attention: the score term counts */
	o.method = TRAIN_LORA;
	o.precision = TRAIN_MIXED_BF16;
	o.micro_batch = 2;
	uint64_t none = total(&llama2_7b, &o);
	o.ckpt = TRAIN_CKPT_SELECTIVE;
	uint64_t sel = total(&llama2_7b, &o);
	o.ckpt = TRAIN_CKPT_FULL;
	uint64_t full = total(&llama2_7b, &o);
	assert_true(none > sel && sel > full);

	train_breakdown a, b;
	uint64_t host;
	double t;
	o.ckpt = TRAIN_CKPT_NONE;
	o.flash_attn = false;
	assert_int_equal(train_memory(&llama2_7b, &o, &a, &host, &t, NULL), 0);
	o.flash_attn = true;
	assert_int_equal(train_memory(&llama2_7b, &o, &b, &host, &t, NULL), 0);
	/* eager attention under autocast keeps the fp32 softmax and its bf16
	 * copy (6 bytes per score) and one more bf16 hidden per layer */
	double N = 2048.0 * 2;
	double eager = 32 * N * (32 * 2048.0 * 6 + 2 * 4096);
	assert_true(llabs((long long)(a.phase_bytes[TRAIN_PHASE_LOSS_BWD] - b.phase_bytes[TRAIN_PHASE_LOSS_BWD]) -
			  (long long)eager) < 64);
	assert_int_equal(a.peak_phase, TRAIN_PHASE_LOSS_BWD);

	/* gradient accumulation keeps the gradients through the next
	 * micro-batch's forward: full fine-tuning pays for them there */
	o.method = TRAIN_FULL;
	o.grad_accum = 1;
	assert_int_equal(train_memory(&llama2_7b, &o, &a, &host, &t, NULL), 0);
	o.grad_accum = 16;
	assert_int_equal(train_memory(&llama2_7b, &o, &b, &host, &t, NULL), 0);
	assert_true(llabs((long long)(b.phase_bytes[TRAIN_PHASE_FORWARD] - a.phase_bytes[TRAIN_PHASE_FORWARD]) -
			  (long long)(6.74e9 * 4)) < 64);
	assert_int_equal(a.phase_bytes[TRAIN_PHASE_OPTIMIZER], b.phase_bytes[TRAIN_PHASE_OPTIMIZER]);
}

static void test_sharding(void **state)
{
	(void)state;
	train_opts o;
	train_opts_init(&o);
	o.method = TRAIN_FULL;
	o.ckpt = TRAIN_CKPT_FULL;
	uint64_t one = total(&llama31_8b, &o);
	o.gpus = 4;
	uint64_t ddp = total(&llama31_8b, &o);
	assert_int_equal(one, ddp); /* plain data parallel replicates everything */
	o.shard = TRAIN_SHARD_ZERO1;
	uint64_t z1 = total(&llama31_8b, &o);
	o.shard = TRAIN_SHARD_ZERO2;
	uint64_t z2 = total(&llama31_8b, &o);
	o.shard = TRAIN_SHARD_FSDP;
	uint64_t z3 = total(&llama31_8b, &o);
	assert_true(ddp > z1 && z1 > z2 && z2 > z3);
}

static void test_advice_story(void **state)
{
	(void)state;
	/* Our users' case: LoRA of a 7B model on an 8 GB card. */
	train_opts o;
	train_opts_init(&o);
	train_plan p;
	assert_int_equal(train_plan_compute(&llama2_7b, &o, 8 * GiB, &p, NULL), 0);
	assert_false(p.fits);
	assert_true(p.n_advice >= 2);
	bool mb1 = false, qlora = false;
	for (size_t i = 0; i < p.n_advice; i++) {
		if (strstr(p.advice[i].action, "--micro-batch 1"))
			mb1 = true;
		assert_null(strstr(p.advice[i].action, "GPUs")); /* one GPU: never a second one */
		if (strstr(p.advice[i].action, "QLoRA"))
			qlora = true;
	}
	assert_true(mb1 && qlora);
	assert_true(p.advice[p.n_advice - 1].fits_after);
	assert_true(p.advice[p.n_advice - 1].total_after <= 8 * GiB);
	train_plan_release(&p);

	/* ... and the plan with those settings fits */
	o.method = TRAIN_QLORA;
	o.micro_batch = 1;
	o.ckpt = TRAIN_CKPT_FULL;
	o.seq = 512;
	assert_int_equal(train_plan_compute(&llama2_7b, &o, 8 * GiB, &p, NULL), 0);
	assert_true(p.fits);
	assert_int_equal(p.n_advice, 0);
	train_plan_release(&p);
}

/* The default is Hugging Face transformers + PEFT as run today (issue 9):
 * SDPA (no s x s scores), the full logits upcast to fp32 (not chunked), no
 * checkpointing, mixed-bf16 AdamW, PEFT's r=8 on attention; the plan's
 * assumptions name it.  --framework none is the textbook eager model. */
static void test_default_is_transformers(void **state)
{
	(void)state;
	train_opts o, t;
	train_opts_init(&o);
	assert_int_equal(o.framework, TRAIN_FW_TRANSFORMERS);
	assert_true(o.flash_attn);
	assert_false(o.chunked_ce);
	assert_int_equal(o.ckpt, TRAIN_CKPT_NONE);
	assert_int_equal(o.precision, TRAIN_MIXED_BF16);
	assert_int_equal(o.optimizer, TRAIN_ADAMW_FUSED);
	assert_int_equal(o.lora_rank, 8);
	assert_int_equal(o.targets, TRAIN_LORA_QV);
	/* the same as asking for the preset */
	train_opts_init(&t);
	train_apply_framework(&t, TRAIN_FW_TRANSFORMERS);
	assert_memory_equal(&o, &t, sizeof o);

	train_plan p;
	assert_int_equal(train_plan_compute(&llama31_8b, &o, 0, &p, NULL), 0);
	bool named = false;
	for (size_t i = 0; i < p.n_notes; i++)
		named = named || (strstr(p.notes[i], "transformers >= 5") && strstr(p.notes[i], "PEFT"));
	assert_true(named);
	/* the loss backward: the fp32 log-softmax, its gradient and the
	 * logits' gradient: 12 bytes per b*s*V, the peak of LoRA */
	assert_int_equal(p.bd.peak_phase, TRAIN_PHASE_LOSS_BWD);
	assert_true(p.bd.logits == (uint64_t)(4.0 * 2048 * 128256 * 12));
	uint64_t sdpa = p.bd.activations;
	train_plan_release(&p);

	train_apply_framework(&o, TRAIN_FW_NONE);
	assert_false(o.flash_attn);
	assert_int_equal(o.framework, TRAIN_FW_NONE);
	assert_int_equal(train_plan_compute(&llama31_8b, &o, 0, &p, NULL), 0);
	/* eager attention keeps the scores: s*a*6 bytes per token and layer
	 * (and all-linear adapters: LoRA inputs of k, o and the MLP) */
	assert_true(p.bd.activations > sdpa + 32 * 8192.0 * 32 * 2048 * 6);
	assert_non_null(strstr(p.notes[0], "no framework"));
	train_plan_release(&p);
}

static void test_bad_model(void **state)
{
	(void)state;
	model_desc m = {.name = "bare", .params_total = 7e9};
	train_opts o;
	train_opts_init(&o);
	gw_error err = {0};
	train_breakdown bd;
	uint64_t host;
	double t;
	assert_int_equal(train_memory(&m, &o, &bd, &host, &t, &err), GW_EINVAL);
	assert_non_null(strstr(err.msg, "--layers"));
	train_method mm;
	assert_int_equal(train_parse_method("qlora", &mm), 0);
	assert_int_equal(mm, TRAIN_QLORA);
	assert_int_equal(train_parse_method("qlor", &mm), GW_EINVAL);
}

/* ---- validation against published peaks ------------------------------- */

/* Architectures of the validation rows' models (config.json values). */
static const model_desc val_models[] = {
	{.name = "Llama-3.1-8B", .n_layers = 32, .hidden = 4096, .n_heads = 32, .n_kv_heads = 8, .head_dim_k = 128,
	 .ffn = 14336, .vocab = 128256, .params_total = 8.03e9},
	{.name = "Llama-3.1-70B", .n_layers = 80, .hidden = 8192, .n_heads = 64, .n_kv_heads = 8, .head_dim_k = 128,
	 .ffn = 28672, .vocab = 128256, .params_total = 70.6e9},
	{.name = "Llama-3.1-405B", .n_layers = 126, .hidden = 16384, .n_heads = 128, .n_kv_heads = 8,
	 .head_dim_k = 128, .ffn = 53248, .vocab = 128256, .params_total = 405e9},
	/* T5 encoder-decoder models planned as 24+24 layers of one stack */
	{.name = "bigscience/T0_3B", .n_layers = 48, .hidden = 2048, .n_heads = 32, .n_kv_heads = 32,
	 .head_dim_k = 64, .ffn = 5120, .vocab = 32128, .params_total = 2.85e9},
	{.name = "bigscience/mt0-xxl", .n_layers = 48, .hidden = 4096, .n_heads = 64, .n_kv_heads = 64,
	 .head_dim_k = 64, .ffn = 10240, .vocab = 250112, .params_total = 12.9e9},
	{.name = "bigscience/bloomz-7b1", .arch = "bloom", .n_layers = 30, .hidden = 4096, .n_heads = 32, .n_kv_heads = 32,
	 .head_dim_k = 128, .ffn = 16384, .vocab = 250880, .params_total = 7.07e9, .tied_embeddings = true},
	/* representatives of the Unsloth size classes */
	{.name = "(any, Unsloth table) 7B", .n_layers = 32, .hidden = 4096, .n_heads = 32, .n_kv_heads = 32,
	 .head_dim_k = 128, .ffn = 11008, .vocab = 32000, .params_total = 6.74e9},
	{.name = "(any, Unsloth table) 8B", .n_layers = 32, .hidden = 4096, .n_heads = 32, .n_kv_heads = 8,
	 .head_dim_k = 128, .ffn = 14336, .vocab = 128256, .params_total = 8.03e9},
	{.name = "(any, Unsloth table) 14B", .n_layers = 48, .hidden = 5120, .n_heads = 40, .n_kv_heads = 8,
	 .head_dim_k = 128, .ffn = 13824, .vocab = 152064, .params_total = 14.7e9},
	{.name = "(any, Unsloth table) 32B", .n_layers = 64, .hidden = 5120, .n_heads = 40, .n_kv_heads = 8,
	 .head_dim_k = 128, .ffn = 27648, .vocab = 152064, .params_total = 32.8e9},
	{.name = "(any, Unsloth table) 70B", .n_layers = 80, .hidden = 8192, .n_heads = 64, .n_kv_heads = 8,
	 .head_dim_k = 128, .ffn = 28672, .vocab = 128256, .params_total = 70.6e9},
	{.name = "(any, Unsloth table) 405B", .n_layers = 126, .hidden = 16384, .n_heads = 128, .n_kv_heads = 8,
	 .head_dim_k = 128, .ffn = 53248, .vocab = 128256, .params_total = 405e9},
};

/*
 * The training setup of each measured row, from its source: torchtune's
 * llama3_1 recipes (bf16, SDPA, chunked cross-entropy, batch 2, seq 2048;
 * full: paged 8-bit AdamW stepped in backward with activation
 * checkpointing on the 4090; LoRA/QLoRA rank 8 on q, v, output and the
 * MLP), PEFT's example scripts (fp32 model, LoRA r=8 on attention, AdamW,
 * batch 8, max_length 64, eager attention: the table was published with
 * PEFT 0.2 in February 2023, before transformers 4.36 made SDPA the
 * default, and neither T5 nor BLOOM has an SDPA path).  Assumed where the source is silent: the A6000
 * full run uses non-paged 8-bit AdamW, the A6000 LoRA run has no
 * checkpointing.  Vendor minimums use the leanest setup (micro-batch 1,
 * seq 2048, full checkpointing, flash attention, chunked loss, 8-bit paged
 * optimizer).
 */
typedef struct val_setup {
	const char *model, *quant, *gpu; /* prefixes of the row's columns */
	const char *opts;                /* option words, parsed below */
} val_setup;

static const val_setup setups[] = {
	{"Llama-3.1-8B", "BF16 full FT (Paged", "RTX 4090",
	 "full bf16 paged-adamw-8bit bwd ckpt=full flash fused seq=2048 mb=2"},
	{"Llama-3.1-8B", "BF16 full FT", "RTX A6000", "full bf16 adamw-8bit bwd ckpt=full flash fused seq=2048 mb=2"},
	{"Llama-3.1-8B", "BF16 LoRA", "RTX A6000", "lora bf16 adamw ckpt=none flash fused seq=2048 mb=2 r=8 attn+mlp"},
	{"Llama-3.1-8B", "BF16 LoRA", "RTX 4090", "lora bf16 adamw ckpt=full flash fused seq=2048 mb=2 r=8 attn+mlp"},
	{"Llama-3.1-70B", "BF16 LoRA", "8x A100",
	 "lora bf16 adamw ckpt=full flash fused seq=2048 mb=2 r=16 attn+mlp gpus=8"},
	{"Llama-3.1-8B", "NF4 QLoRA", "RTX 4090", "qlora bf16 adamw ckpt=full flash fused seq=2048 mb=2 r=8 attn+mlp"},
	{"Llama-3.1-405B", "NF4 QLoRA", "8x A100",
	 "qlora bf16 adamw ckpt=full flash fused seq=2048 mb=2 r=8 attn+mlp gpus=8"},
	{"bigscience/", "LoRA (PyTorch)", "A100", "lora fp32 adamw ckpt=none eager seq=64 mb=8 r=8 qv"},
	{"bigscience/", "full FT", "A100", "full fp32 adamw ckpt=none eager seq=64 mb=8"},
	{"(any, Unsloth", "16-bit LoRA", "any", "lora bf16 adamw-8bit ckpt=full flash chunked seq=2048 mb=2 r=16 all-linear"},
	{"(any, Unsloth", "4-bit QLoRA", "any", "qlora bf16 adamw-8bit ckpt=full flash chunked seq=2048 mb=2 r=16 all-linear"},
};

static void apply_words(train_opts *o, const char *words)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", words);
	char *save = NULL;
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		unsigned v;
		if (str_starts(w, "ckpt=")) {
			assert_int_equal(train_parse_ckpt(w + 5, &o->ckpt), 0);
			continue;
		}
		if (!train_parse_method(w, &o->method) || !train_parse_precision(w, &o->precision) ||
		    !train_parse_optimizer(w, &o->optimizer) || !train_parse_targets(w, &o->targets))
			continue;
		if (!strcmp(w, "bwd"))
			o->optimizer_in_bwd = true;
		else if (!strcmp(w, "flash"))
			o->flash_attn = true;
		else if (!strcmp(w, "eager"))
			o->flash_attn = false;
		else if (!strcmp(w, "chunked"))
			o->chunked_ce = true;
		else if (!strcmp(w, "fused"))
			o->fused_ce = true; /* torchtune's README: torch.compile */
		else if (sscanf(w, "seq=%u", &v) == 1)
			o->seq = v;
		else if (sscanf(w, "mb=%u", &v) == 1)
			o->micro_batch = v;
		else if (sscanf(w, "r=%u", &v) == 1)
			o->lora_rank = v;
		else if (sscanf(w, "gpus=%u", &v) == 1) {
			o->gpus = v;
			o->shard = TRAIN_SHARD_FSDP;
		} else
			fail_msg("unknown setup word '%s'", w);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_validation(void **state)
{
	(void)state;
	const char *top = getenv("GW_TOP");
	char *path = xasprintf("%s/tests/validation/plan-measurements.tsv", top ? top : ".");
	char *text;
	size_t len;
	gw_error err;
	assert_int_equal(gw_read_file(path, false, 1 << 20, &text, &len, &err), 0);
	kb_table t;
	if (kb_parse_tsv(&t, "plan-measurements", text, len, &err))
		fail_msg("%s", err.msg);
	long cm = kb_col(&t, "model"), cq = kb_col(&t, "quant"), cg = kb_col(&t, "gpu");
	long ct = kb_col(&t, "task"), cv = kb_col(&t, "measured_vram_gib"), cs = kb_col(&t, "source");
	double errs[64];
	size_t n_err = 0, n_rows = 0, n_bounds = 0, n_oom = 0;
	printf("# %-24s %-30s %-13s %9s %9s %8s  %s\n", "model", "setup", "gpu", "measured", "predicted", "error", "kind");
	for (size_t i = 0; i < t.nrows; i++) {
		const char *task = kb_cell(&t, i, ct);
		if (strcmp(task, "full") && strcmp(task, "lora") && strcmp(task, "qlora"))
			continue;
		const char *model = kb_cell(&t, i, cm), *quant = kb_cell(&t, i, cq), *gpu = kb_cell(&t, i, cg);
		if (strstr(quant, "DeepSpeed")) {
			printf("# %-24.24s %-30.30s %-13.13s %9s %9s %8s  skipped: ZeRO-3 parameter offload to CPU is not modelled\n",
			       model, quant, gpu, kb_cell(&t, i, cv), "-", "-");
			continue;
		}
		const model_desc *m = NULL;
		for (size_t k = 0; k < sizeof val_models / sizeof val_models[0]; k++)
			if (!strcmp(model, val_models[k].name))
				m = &val_models[k];
		const val_setup *su = NULL;
		for (size_t k = 0; k < sizeof setups / sizeof setups[0] && !su; k++)
			if (str_starts(model, setups[k].model) && str_starts(quant, setups[k].quant) &&
			    str_starts(gpu, setups[k].gpu))
				su = &setups[k];
		if (!m || !su)
			fail_msg("validation row %zu (%s, %s, %s) has no model or setup", i, model, quant, gpu);
		train_opts o;
		train_opts_init(&o);
		apply_words(&o, su->opts);
		train_breakdown bd;
		uint64_t host;
		double tr;
		assert_int_equal(train_memory(m, &o, &bd, &host, &tr, NULL), 0);
		double pred = bd.total / (double)GiB;
		/* torchtune and PEFT report PyTorch allocator statistics (PEFT's
		 * script: torch.cuda.max_memory_allocated), which leave out the
		 * CUDA context; vendor minimums are whole-card figures. */
		bool allocator = strstr(kb_cell(&t, i, cs), "pytorch/torchtune") ||
				 strstr(kb_cell(&t, i, cs), "huggingface/peft");
		if (allocator)
			pred = (bd.total - TRAIN_CUDA_CONTEXT_BYTES) / (double)GiB;
		const char *meas = kb_cell(&t, i, cv);
		bool vendor = strstr(kb_cell(&t, i, cs), "not a measurement") != NULL;
		/* "GB" in the PEFT and torchtune-405B rows: decimal units */
		bool decimal = strstr(kb_cell(&t, i, cs), "GB'") != NULL;
		n_rows++;
		if (!strcmp(meas, "OOM")) {
			/* a measured failure: the plan must exceed the card (80 GB) */
			printf("# %-24.24s %-30.30s %-13.13s %9s %9.2f %8s  OOM: predicted above 74.5 GiB\n", model, quant,
			       gpu, meas, pred, "-");
			assert_true(pred > 80e9 / GiB);
			n_oom++;
			continue;
		}
		double v = strtod(meas, NULL);
		if (decimal || vendor)
			v = v * 1e9 / GiB;
		double e = pred / v - 1;
		if (vendor) {
			/* A vendor's minimum is met with its own kernels; a standard
			 * stack at its leanest should need no less than 85% of it. */
			printf("# %-24.24s %-30.30s %-13.13s %9.2f %9.2f %+7.1f%%  vendor minimum (lower bound)\n", model,
			       quant, gpu, v, pred, e * 100);
			assert_true(pred >= 0.85 * v);
			n_bounds++;
			continue;
		}
		printf("# %-24.24s %-30.30s %-13.13s %9.2f %9.2f %+7.1f%%  measured\n", model, quant, gpu, v, pred, e * 100);
		assert_true(n_err < 64);
		errs[n_err++] = fabs(e);
	}
	assert_true(n_err >= 6);
	qsort(errs, n_err, sizeof errs[0], cmp_double);
	double median = n_err % 2 ? errs[n_err / 2] : (errs[n_err / 2 - 1] + errs[n_err / 2]) / 2;
	printf("# fine-tuning rows: %zu planned, %zu measured (median |error| %.1f%%), %zu vendor lower bounds, %zu OOM\n",
	       n_rows, n_err, median * 100, n_bounds, n_oom);
	assert_true(median <= 0.15);
	kb_table_release(&t);
	free(text);
	free(path);
}

/*
 * The framework presets against each framework's own published peaks:
 * torchtune's README table (its recipes; the 70B LoRA row keeps the
 * preset's r=8 where its config has r=16: adapters of 0.1% of the weights), PEFT's README table (Trainer +
 * PEFT example scripts), Unsloth's requirements table (a vendor minimum: a
 * lower bound).  Each row gets its framework's preset, then only the facts
 * its source states: method, sequence, batch, GPUs (and for PEFT's
 * scripts: fp32 weights, max_length 64, batch 8, r=8).  Prints the median
 * error per preset.
 */
static void test_framework_presets(void **state)
{
	(void)state;
	const char *top = getenv("GW_TOP");
	char *path = xasprintf("%s/tests/validation/plan-measurements.tsv", top ? top : ".");
	char *text;
	size_t len;
	gw_error err;
	assert_int_equal(gw_read_file(path, false, 1 << 20, &text, &len, &err), 0);
	kb_table t;
	if (kb_parse_tsv(&t, "plan-measurements", text, len, &err))
		fail_msg("%s", err.msg);
	long cm = kb_col(&t, "model"), cq = kb_col(&t, "quant"), cg = kb_col(&t, "gpu");
	long ct = kb_col(&t, "task"), cv = kb_col(&t, "measured_vram_gib"), cs = kb_col(&t, "source");
	static const struct {
		const char *source;      /* substring of the row's source */
		train_framework fw;
		const char *facts;       /* what the source states about the run */
	} fws[] = {
		{"pytorch/torchtune", TRAIN_FW_TORCHTUNE, "seq=2048 mb=2"}, /* compile: the preset's */
		{"huggingface/peft", TRAIN_FW_TRANSFORMERS, "fp32 seq=64 mb=8 r=8 qv"},
		{"unsloth", TRAIN_FW_UNSLOTH, "seq=2048 mb=2"},
	};
	double errs[3][32];
	size_t n[3] = {0}, bounds = 0;
	for (size_t i = 0; i < t.nrows; i++) {
		const char *task = kb_cell(&t, i, ct), *src = kb_cell(&t, i, cs), *quant = kb_cell(&t, i, cq);
		if ((strcmp(task, "full") && strcmp(task, "lora") && strcmp(task, "qlora")) || strstr(quant, "DeepSpeed"))
			continue;
		size_t k = 0;
		while (k < 3 && !strstr(src, fws[k].source))
			k++;
		if (k == 3)
			continue;
		const model_desc *m = NULL;
		for (size_t j = 0; j < sizeof val_models / sizeof val_models[0]; j++)
			if (!strcmp(kb_cell(&t, i, cm), val_models[j].name))
				m = &val_models[j];
		assert_non_null(m);
		train_opts o;
		train_opts_init(&o);
		assert_int_equal(train_parse_method(task, &o.method), 0);
		if (strstr(kb_cell(&t, i, cg), "8x"))
			o.gpus = 8;
		train_apply_framework(&o, fws[k].fw);
		apply_words(&o, fws[k].facts);
		assert_int_equal(train_parse_method(task, &o.method), 0); /* the row's method stands */
		if (o.gpus > 1)
			o.shard = TRAIN_SHARD_FSDP;
		train_breakdown bd;
		uint64_t host;
		double tr;
		assert_int_equal(train_memory(m, &o, &bd, &host, &tr, NULL), 0);
		bool vendor = strstr(src, "not a measurement") != NULL;
		double pred = (vendor ? bd.total : bd.total - TRAIN_CUDA_CONTEXT_BYTES) / (double)GiB;
		const char *meas = kb_cell(&t, i, cv);
		if (!strcmp(meas, "OOM")) {
			assert_true(pred > 80e9 / GiB);
			continue;
		}
		double v = strtod(meas, NULL);
		if (vendor || strstr(src, "GB'"))
			v = v * 1e9 / GiB;
		double e = pred / v - 1;
		printf("# %-12s %-24.24s %-30.30s %8.2f %8.2f %+6.1f%%%s\n", train_framework_name(fws[k].fw),
		       kb_cell(&t, i, cm), quant, v, pred, e * 100, vendor ? "  (vendor minimum: lower bound)" : "");
		/* torchtune's 8B LoRA and QLoRA rows on the 4090 (its recipes'
		 * own settings: the 4090 rows of 8B_lora_single_device and
		 * 8B_qlora_single_device, compile: True as the table states):
		 * within 10% each */
		if (k == 0 && strstr(kb_cell(&t, i, cg), "4090") && strcmp(task, "full")) {
			printf("# torchtune preset, %s 8B on the 4090: %+.1f%% (published %.1f GiB)\n", task, e * 100, v);
			assert_true(fabs(e) <= 0.10);
		}
		if (vendor) {
			assert_true(pred >= 0.85 * v);
			bounds++;
		} else {
			assert_true(n[k] < 32);
			errs[k][n[k]++] = fabs(e);
		}
	}
	for (size_t k = 0; k < 3; k++) {
		if (!n[k])
			continue;
		qsort(errs[k], n[k], sizeof errs[k][0], cmp_double);
		double med = n[k] % 2 ? errs[k][n[k] / 2] : (errs[k][n[k] / 2 - 1] + errs[k][n[k] / 2]) / 2;
		printf("# preset %s: %zu measured rows, median |error| %.1f%%\n", train_framework_name(fws[k].fw), n[k],
		       med * 100);
		/* torchtune: its README table states batch 2, packed 2048 and
		 * compile for every row and nothing else; the same stated
		 * settings give 16.2 GiB for LoRA on a 4090 and 30.3 GiB on an
		 * A6000, so the A6000 rows ran settings the table does not
		 * state (the preset, its default configs, is -51% and -42%
		 * there).  Over the seven rows the median is 8.5%. */
		static const double bound[] = {0.10, 0.10, 0};
		assert_true(med <= bound[k]);
	}
	printf("# preset unsloth: %zu vendor minimums met as lower bounds\n", bounds);
	assert_true(n[0] >= 7 && n[1] >= 3 && bounds >= 6);
	kb_table_release(&t);
	free(text);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_mixed_adam_is_16_bytes),
		cmocka_unit_test(test_lora_adapter_count),
		cmocka_unit_test(test_qlora_constants),
		cmocka_unit_test(test_activation_options),
		cmocka_unit_test(test_sharding),
		cmocka_unit_test(test_advice_story),
		cmocka_unit_test(test_default_is_transformers),
		cmocka_unit_test(test_bad_model),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_framework_presets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

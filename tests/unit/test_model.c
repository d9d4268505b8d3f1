/*
 * Unit tests for model_load (paths, catalog, explicit numbers), the
 * config.json reader and the safetensors reader (one file, an indexed
 * directory of shards, hostile headers).  Files are written here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gguf_writer.h"
#include "kb/kb.h"
#include "model/internal.h"
#include "model/model.h"
#include "tmpdir.h"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("model");
}

static int teardown(void **state)
{
	(void)state;
	kb_release_all();
	return tmpdir_remove();
}

static const char *tpath(const char *name)
{
	static char p[4][400];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static void write_text(const char *path, const char *text)
{
	write_file(path, text, strlen(text));
}

/* A safetensors file: header JSON, then data_len bytes (sparse). */
static void write_st(const char *path, const char *json, uint64_t data_len)
{
	size_t n = strlen(json);
	uint8_t len8[8];
	for (int i = 0; i < 8; i++)
		len8[i] = (uint8_t)((uint64_t)n >> (8 * i));
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(len8, 1, 8, f);
	fwrite(json, 1, n, f);
	fflush(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)(8 + n + data_len)), 0);
	fclose(f);
}

static void expect_fail(int rc, const gw_error *err, const char *want)
{
	assert_true(rc < 0);
	if (!strstr(err->msg, want))
		print_error("message '%s' lacks '%s'\n", err->msg, want);
	assert_non_null(strstr(err->msg, want));
}

/* ---- explicit numbers ---------------------------------------------------- */

static void test_explicit(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	model_numbers n = {.params = 13e9, .layers = 40, .hidden = 5120, .heads = 40, .kv_heads = 40,
			   .head_dim = 128, .ffn = 13824, .vocab = 32000};
	assert_int_equal(model_load(NULL, &n, &m, &err), 0);
	assert_string_equal(m.name, "custom");
	assert_int_equal(m.source, MODEL_SRC_EXPLICIT);
	assert_int_equal(m.n_layers, 40);
	assert_int_equal(m.n_kv_heads, 40);
	assert_int_equal(m.head_dim_k, 128);
	assert_true(m.params_total == 13e9);
	assert_true(m.params_active == 13e9);
	assert_false(m.has_tensors);
	model_release(&m);

	/* without --params: counted from the shape (Llama-2-13B: 13.0e9) */
	n.params = 0;
	assert_int_equal(model_load(NULL, &n, &m, &err), 0);
	assert_true(m.params_total > 12.9e9 && m.params_total < 13.1e9);
	model_release(&m);

	/* kv heads and head dim derived */
	model_numbers few = {.layers = 32, .hidden = 4096, .heads = 32};
	assert_int_equal(model_load(NULL, &few, &m, &err), 0);
	assert_int_equal(m.n_kv_heads, 32);
	assert_int_equal(m.head_dim_k, 128);
	model_release(&m);

	model_numbers bad = {.params = 7e9};
	expect_fail(model_load(NULL, &bad, &m, &err), &err, "--layers and --hidden");
	expect_fail(model_load(NULL, NULL, &m, &err), &err, "--layers and --hidden");
	model_numbers noheads = {.layers = 2, .hidden = 64};
	expect_fail(model_load(NULL, &noheads, &m, &err), &err, "--heads");
}

static void test_paths(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	expect_fail(model_load(tpath("missing.gguf"), NULL, &m, &err), &err, "missing.gguf");
	assert_non_null(strstr(err.msg, "No such file"));
	expect_fail(model_load("./nope/model.safetensors", NULL, &m, &err), &err, "cannot read './nope");
	expect_fail(model_load("zz-no-such-model-zz", NULL, &m, &err), &err, "unknown model 'zz-no-such-model-zz'");

	/* a GGUF by magic even without the extension, with overrides */
	ggw w;
	ggw_init(&w, 3);
	ggw_kv_str(&w, "general.architecture", "llama");
	ggw_kv_u32(&w, "llama.block_count", 2);
	ggw_kv_u32(&w, "llama.embedding_length", 64);
	ggw_kv_u32(&w, "llama.attention.head_count", 4);
	ggw_kv_u32(&w, "llama.attention.head_count_kv", 2);
	ggw_kv_u64(&w, "llama.context_length", 4096);
	ggw_tensor2(&w, "blk.0.attn_q.weight", GGT_F16, 64, 64);
	ggw_tensor2(&w, "blk.1.attn_q.weight", GGT_F16, 64, 64);
	const char *p = tpath("model.bin");
	assert_true(ggw_write(&w, p, 0) > 0);
	ggw_free(&w);
	model_numbers ctx = {.ctx = 1024, .kv_heads = 1};
	assert_int_equal(model_load(p, &ctx, &m, &err), 0);
	assert_int_equal(m.source, MODEL_SRC_GGUF);
	assert_int_equal(m.ctx_train, 1024);
	assert_int_equal(m.n_kv_heads, 1);
	assert_int_equal(m.layer_bytes[1], 64 * 64 * 2);
	assert_true(m.has_tensors);
	assert_string_equal(model_source_name(m.source), "gguf");
	model_release(&m);

	/* a file that is none of the formats */
	p = tpath("notes.txt");
	write_text(p, "hello world, not a model");
	expect_fail(model_load(p, NULL, &m, &err), &err, "not a GGUF, safetensors or config.json");
}

static void test_catalog(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	if (kb_model_count() == 0) {
		print_message("# skip catalog checks: the models table is empty\n");
		return;
	}
	const model_spec *s = kb_model_at(0);
	assert_int_equal(model_load(s->id, NULL, &m, &err), 0);
	assert_int_equal(m.source, MODEL_SRC_CATALOG);
	assert_string_equal(m.arch, s->arch);
	assert_int_equal(m.n_layers, (uint32_t)s->layers);
	assert_int_equal(m.hidden, (uint32_t)s->hidden);
	assert_true(m.params_total > 0);
	model_release(&m);

	/* every catalog model loads, with its sliding-window layers marked */
	for (size_t i = 0; i < kb_model_count(); i++) {
		s = kb_model_at(i);
		assert_int_equal(model_load(s->id, NULL, &m, &err), 0);
		/* MLA rows: the K-only latent cache is the one KV "head" */
		assert_int_equal(m.head_dim_k, (uint32_t)(s->kv_latent ? s->kv_latent : s->head_dim));
		assert_true(m.mla == (s->kv_latent > 0));
		if (s->swa_window > 0 && s->swa_period > 0) {
			assert_non_null(m.layer_swa);
			uint32_t global = 0;
			for (uint32_t l = 0; l < m.n_layers; l++)
				global += !m.layer_swa[l];
			uint32_t want = s->swa_period == 1 ? 0 : m.n_layers / (uint32_t)s->swa_period;
			assert_int_equal(global, want);
		}
		model_release(&m);
	}

	/* the parameter count from the shape agrees with every catalog row within 1% */
	double worst = 0;
	for (size_t i = 0; i < kb_model_count(); i++) {
		s = kb_model_at(i);
		assert_int_equal(model_load(s->id, NULL, &m, &err), 0);
		double act, est = model_shape_params(&m, &act);
		double d = est / s->params_total - 1, da = act / s->params_active - 1;
		if (d < -0.01 || d > 0.01 || da < -0.01 || da > 0.01)
			fail_msg("%s: shape gives %.4g total / %.4g active, catalog %.4g / %.4g", s->id, est, act,
				 s->params_total, s->params_active);
		if (d < 0)
			d = -d;
		if (d > worst)
			worst = d;
		model_release(&m);
	}
	print_message("# shape parameter count vs catalog: worst %.2f%% over %zu models\n", worst * 100,
		      kb_model_count());

	/* a near miss suggests the closest name */
	char typo[128];
	snprintf(typo, sizeof typo, "%sx", kb_model_at(0)->id);
	if (!kb_model_find(typo)) {
		expect_fail(model_load(typo, NULL, &m, &err), &err, "did you mean");
	}
	/* explicit numbers override a catalog entry */
	model_numbers n = {.layers = 3};
	assert_int_equal(model_load(kb_model_at(0)->id, &n, &m, &err), 0);
	assert_int_equal(m.n_layers, 3);
	assert_null(m.layer_swa);
	model_release(&m);
}

/* ---- config.json --------------------------------------------------------- */

/* Llama-3.1-8B's config.json fields (meta-llama/Llama-3.1-8B on the Hub). */
static const char llama31_8b[] =
	"{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": 4096,"
	" \"intermediate_size\": 14336, \"num_attention_heads\": 32, \"num_hidden_layers\": 32,"
	" \"num_key_value_heads\": 8, \"vocab_size\": 128256, \"max_position_embeddings\": 131072,"
	" \"tie_word_embeddings\": false, \"rope_scaling\": {\"factor\": 8.0}, \"torch_dtype\": \"bfloat16\"}";

static void test_hfconfig(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	assert_int_equal(hfconfig_read_mem(llama31_8b, strlen(llama31_8b), &m, &err), 0);
	assert_string_equal(m.arch, "llama");
	assert_int_equal(m.n_layers, 32);
	assert_int_equal(m.n_kv_heads, 8);
	assert_int_equal(m.head_dim_k, 128);
	assert_int_equal(m.ctx_train, 131072);
	assert_false(m.tied_embeddings);
	/* 8,030,261,248 parameters in the released safetensors */
	assert_true(m.params_total == 8030261248.0);
	model_release(&m);

	/* Qwen3-0.6B: explicit head_dim 128 (not 1024/16), tied */
	const char *q3 = "{\"model_type\": \"qwen3\", \"hidden_size\": 1024, \"num_attention_heads\": 16,"
			 " \"num_key_value_heads\": 8, \"head_dim\": 128, \"num_hidden_layers\": 28,"
			 " \"intermediate_size\": 3072, \"vocab_size\": 151936, \"tie_word_embeddings\": true,"
			 " \"sliding_window\": null, \"max_position_embeddings\": 40960}";
	assert_int_equal(hfconfig_read_mem(q3, strlen(q3), &m, &err), 0);
	assert_string_equal(m.arch, "qwen3");
	assert_int_equal(m.head_dim_k, 128);
	assert_true(m.tied_embeddings);
	assert_null(m.layer_swa);
	model_release(&m);

	/* gemma3 multimodal: text_config nesting, every 6th layer global */
	const char *g3 = "{\"model_type\": \"gemma3\", \"text_config\": {\"model_type\": \"gemma3_text\","
			 " \"hidden_size\": 2560, \"num_attention_heads\": 8, \"num_key_value_heads\": 4,"
			 " \"head_dim\": 256, \"num_hidden_layers\": 34, \"intermediate_size\": 10240,"
			 " \"sliding_window\": 1024, \"sliding_window_pattern\": 6, \"vocab_size\": 262208}}";
	assert_int_equal(hfconfig_read_mem(g3, strlen(g3), &m, &err), 0);
	assert_string_equal(m.arch, "gemma3");
	assert_int_equal(m.n_layers, 34);
	assert_int_equal(m.swa_window, 1024);
	assert_true(m.tied_embeddings);
	for (uint32_t i = 0; i < 34; i++)
		assert_int_equal(m.layer_swa[i], i % 6 != 5);
	model_release(&m);

	/* layer_types decide (gpt-oss style), MoE numbers */
	const char *oss = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 2880, \"num_attention_heads\": 64,"
			  " \"num_key_value_heads\": 8, \"head_dim\": 64, \"num_hidden_layers\": 4,"
			  " \"intermediate_size\": 2880, \"num_local_experts\": 32, \"num_experts_per_tok\": 4,"
			  " \"vocab_size\": 201088, \"sliding_window\": 128, \"layer_types\": [\"sliding_attention\","
			  " \"full_attention\", \"sliding_attention\", \"full_attention\"]}";
	assert_int_equal(hfconfig_read_mem(oss, strlen(oss), &m, &err), 0);
	assert_string_equal(m.arch, "gpt-oss");
	assert_int_equal(m.n_experts, 32);
	assert_int_equal(m.n_experts_used, 4);
	assert_int_equal(m.expert_ffn, 2880);
	assert_true(m.layer_swa[0] && !m.layer_swa[1] && m.layer_swa[2] && !m.layer_swa[3]);
	/* 28 of 32 experts idle per token, in 4 layers */
	assert_true(m.params_total - m.params_active == 4.0 * 28 * 3 * 2880 * 2880);
	model_release(&m);

	/* mixtral maps to llama.cpp's llama arch */
	const char *mx = "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"num_attention_heads\": 32,"
			 " \"num_key_value_heads\": 8, \"num_hidden_layers\": 32, \"intermediate_size\": 14336,"
			 " \"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000}";
	assert_int_equal(hfconfig_read_mem(mx, strlen(mx), &m, &err), 0);
	assert_string_equal(m.arch, "llama");
	/* Mixtral-8x7B: 46.7e9 total, 12.9e9 active */
	assert_true(m.params_total > 46.6e9 && m.params_total < 46.8e9);
	assert_true(m.params_active > 12.8e9 && m.params_active < 13.0e9);
	model_release(&m);

	expect_fail(hfconfig_read_mem("{", 1, &m, &err), &err, "invalid JSON");
	expect_fail(hfconfig_read_mem("[1]", 3, &m, &err), &err, "not a JSON object");
	const char *neg = "{\"num_hidden_layers\": -4}";
	expect_fail(hfconfig_read_mem(neg, strlen(neg), &m, &err), &err, "num_hidden_layers");
	const char *str = "{\"hidden_size\": \"big\"}";
	expect_fail(hfconfig_read_mem(str, strlen(str), &m, &err), &err, "hidden_size");
	const char *lt = "{\"num_hidden_layers\": 3, \"sliding_window\": 4, \"layer_types\": [\"full_attention\"]}";
	expect_fail(hfconfig_read_mem(lt, strlen(lt), &m, &err), &err, "layer_types has 1 entries for 3 layers");

	/* from a file: named after its directory */
	assert_int_equal(mkdir(tpath("Llama-3.1-8B"), 0755), 0);
	const char *p = tpath("Llama-3.1-8B/config.json");
	write_text(p, llama31_8b);
	assert_int_equal(model_load(p, NULL, &m, &err), 0);
	assert_int_equal(m.source, MODEL_SRC_CONFIG);
	assert_string_equal(m.name, "Llama-3.1-8B");
	assert_false(m.has_tensors);
	model_release(&m);
}

/* ---- safetensors --------------------------------------------------------- */

static void test_safetensors_file(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	/* 2 layers, BF16 + one F32 norm, an embedding of [100, 64] */
	char json[2048];
	snprintf(json, sizeof json,
		 "{\"__metadata__\": {\"format\": \"pt\"},"
		 " \"model.embed_tokens.weight\": {\"dtype\": \"BF16\", \"shape\": [100, 64], \"data_offsets\": [0, 12800]},"
		 " \"model.layers.0.self_attn.q_proj.weight\": {\"dtype\": \"BF16\", \"shape\": [64, 64], \"data_offsets\": [12800, 20992]},"
		 " \"model.layers.1.self_attn.q_proj.weight\": {\"dtype\": \"BF16\", \"shape\": [64, 64], \"data_offsets\": [20992, 29184]},"
		 " \"model.layers.1.mlp.experts.0.up_proj.weight\": {\"dtype\": \"F8_E4M3\", \"shape\": [64, 64], \"data_offsets\": [29184, 33280]},"
		 " \"model.norm.weight\": {\"dtype\": \"F32\", \"shape\": [64], \"data_offsets\": [33280, 33536]},"
		 " \"lm_head.weight\": {\"dtype\": \"BF16\", \"shape\": [100, 64], \"data_offsets\": [33536, 46336]},"
		 " \"model.rotary.inv_freq\": {\"dtype\": \"F32\", \"shape\": [], \"data_offsets\": [46336, 46340]}}");
	const char *p = tpath("one.safetensors");
	write_st(p, json, 46340);
	assert_int_equal(safetensors_read(p, &m, &err), 0);
	assert_int_equal(m.source, MODEL_SRC_SAFETENSORS);
	assert_int_equal(m.n_layers, 2);
	assert_int_equal(m.hidden, 64);
	assert_int_equal(m.vocab, 100);
	assert_int_equal(m.layer_bytes[0], 8192);
	assert_int_equal(m.layer_bytes[1], 8192 + 4096);
	assert_int_equal(m.layer_expert_bytes[1], 4096);
	assert_int_equal(m.embd_bytes, 12800);
	assert_int_equal(m.output_bytes, 256 + 12800);
	assert_int_equal(m.other_bytes, 4);
	assert_int_equal(m.total_bytes, 46340);
	assert_int_equal(m.n_tensors, 7);
	assert_false(m.tied_embeddings);
	assert_true(m.params_total == 6400 + 4096 * 3 + 64 + 6400 + 1);
	assert_int_equal(m.n_dtypes, 3);
	assert_null(m.dtype_names[3]);
	uint64_t bf16 = 0, f32 = 0, f8 = 0;
	for (size_t i = 0; i < m.n_dtypes; i++) {
		if (!strcmp(m.dtype_names[i], "BF16"))
			bf16 = m.dtype_bytes[i];
		if (!strcmp(m.dtype_names[i], "F32"))
			f32 = m.dtype_bytes[i];
		if (!strcmp(m.dtype_names[i], "F8_E4M3"))
			f8 = m.dtype_bytes[i];
	}
	assert_int_equal(bf16, 12800 * 2 + 8192 * 2);
	assert_int_equal(f32, 260);
	assert_int_equal(f8, 4096);
	assert_string_equal(m.file_type, "BF16");
	assert_string_equal(m.name, "one");
	model_release(&m);

	/* the same bytes from memory */
	FILE *f = fopen(p, "rb");
	uint8_t buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_int_equal(safetensors_read_mem(buf, n, 8 + strlen(json) + 46340, &m, &err), 0);
	assert_int_equal(m.total_bytes, 46340);
	model_release(&m);

	/* truncated copy */
	write_st(p, json, 46339);
	expect_fail(safetensors_read(p, &m, &err), &err, "outside the 46339 data bytes");
	assert_non_null(strstr(err.msg, "one.safetensors"));
	/* without config.json, model_load wants the heads */
	write_st(p, json, 46340);
	expect_fail(model_load(p, NULL, &m, &err), &err, "attention heads");
}

static void st_refuse(const char *json, const char *want)
{
	model_desc m;
	gw_error err = {0};
	size_t n = strlen(json);
	uint8_t *buf = malloc(8 + n);
	for (int i = 0; i < 8; i++)
		buf[i] = (uint8_t)((uint64_t)n >> (8 * i));
	memcpy(buf + 8, json, n);
	expect_fail(safetensors_read_mem(buf, 8 + n, 8 + n + 64, &m, &err), &err, want);
	free(buf);
}

static void test_safetensors_hostile(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	uint8_t b[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, '{', '}'};
	expect_fail(safetensors_read_mem(b, 10, 10, &m, &err), &err, "larger than the 100 MB limit");
	uint8_t c[16] = {100, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
	expect_fail(safetensors_read_mem(c, 10, 10, &m, &err), &err, "runs past the end of the file");
	expect_fail(safetensors_read_mem(c, 5, 5, &m, &err), &err, "too short");
	st_refuse("{ ", "invalid JSON header");
	st_refuse("{", "too short");
	st_refuse("[]", "not a JSON object");
	st_refuse("{\"a\": 3}", "tensor 'a' is not an object");
	st_refuse("{\"a\": {\"dtype\": \"Q9\", \"shape\": [1], \"data_offsets\": [0, 1]}}", "unknown dtype 'Q9'");
	st_refuse("{\"a\": {\"shape\": [1], \"data_offsets\": [0, 1]}}", "no dtype");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": 4, \"data_offsets\": [0, 1]}}", "no valid shape");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", "negative");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 4294967296], \"data_offsets\": [0, 4]}}",
		  "overflows");
	st_refuse("{\"a\": {\"dtype\": \"F64\", \"shape\": [2305843009213693952], \"data_offsets\": [0, 4]}}",
		  "byte size that overflows");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0]}}", "no valid data_offsets");
	/* found by fuzz_safetensors: three offsets once overran the header reader's array */
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16, 16]}}", "no valid data_offsets");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16, 16, 16, 16]}}",
		  "no valid data_offsets");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 4]}}",
		  "no valid shape");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}} x", "text after the header");
	st_refuse("{\"a\\ud800\": {}}", "lone surrogate");
	st_refuse("{\"__metadata__\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
		  "nesting deeper than 64");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [16, 0]}}", "ends before it begins");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [40], \"data_offsets\": [0, 160]}}", "outside the 64 data bytes");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 8]}}", "shape and dtype need 16");
	st_refuse("{\"a\": {\"dtype\": \"F4\", \"shape\": [3], \"data_offsets\": [0, 1]}}", "and a fraction");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
		  " \"b\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [8, 24]}}",
		  "overlaps");
	st_refuse("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
		  " \"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [16, 32]}}",
		  "invalid JSON header");
}

static void test_safetensors_dir(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	char d[400];
	snprintf(d, sizeof d, "%s", tpath("tiny-llama"));
	assert_int_equal(mkdir(d, 0755), 0);
	write_text(tpath("tiny-llama/config.json"),
		   "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4,"
		   " \"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"intermediate_size\": 128,"
		   " \"vocab_size\": 100, \"max_position_embeddings\": 2048, \"tie_word_embeddings\": true}");
	write_st(tpath("tiny-llama/model-00001-of-00002.safetensors"),
		 "{\"model.embed_tokens.weight\": {\"dtype\": \"BF16\", \"shape\": [100, 64], \"data_offsets\": [0, 12800]},"
		 " \"model.layers.0.mlp.up_proj.weight\": {\"dtype\": \"BF16\", \"shape\": [128, 64], \"data_offsets\": [12800, 29184]}}",
		 29184);
	write_st(tpath("tiny-llama/model-00002-of-00002.safetensors"),
		 "{\"model.layers.1.mlp.up_proj.weight\": {\"dtype\": \"F32\", \"shape\": [128, 64], \"data_offsets\": [0, 32768]},"
		 " \"model.norm.weight\": {\"dtype\": \"F32\", \"shape\": [64], \"data_offsets\": [32768, 33024]}}",
		 33024);
	const char *index_ok =
		"{\"metadata\": {\"total_size\": 62208}, \"weight_map\": {"
		"\"model.embed_tokens.weight\": \"model-00001-of-00002.safetensors\","
		"\"model.layers.0.mlp.up_proj.weight\": \"model-00001-of-00002.safetensors\","
		"\"model.layers.1.mlp.up_proj.weight\": \"model-00002-of-00002.safetensors\","
		"\"model.norm.weight\": \"model-00002-of-00002.safetensors\"}}";
	char idx[400];
	snprintf(idx, sizeof idx, "%s", tpath("tiny-llama/model.safetensors.index.json"));
	write_text(idx, index_ok);
	if (model_load(d, NULL, &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m.source, MODEL_SRC_SAFETENSORS);
	assert_string_equal(m.name, "tiny-llama");
	assert_string_equal(m.arch, "llama");
	assert_int_equal(m.n_layers, 2);
	assert_int_equal(m.n_kv_heads, 2);
	assert_int_equal(m.ctx_train, 2048);
	assert_int_equal(m.layer_bytes[0], 16384);
	assert_int_equal(m.layer_bytes[1], 32768);
	assert_int_equal(m.embd_bytes, 12800);
	assert_int_equal(m.output_bytes, 256);
	assert_int_equal(m.total_bytes, 12800 + 16384 + 32768 + 256);
	assert_true(m.tied_embeddings);
	assert_true(m.params_total == 6400 + 8192 * 2 + 64);
	assert_int_equal(m.n_dtypes, 2);
	model_release(&m);

	/* a tensor listed in the index but absent from its shard */
	write_text(idx, "{\"weight_map\": {\"model.layers.9.x\": \"model-00002-of-00002.safetensors\","
			"\"model.norm.weight\": \"model-00002-of-00002.safetensors\"}}");
	expect_fail(model_load(d, NULL, &m, &err), &err, "tensor 'model.layers.9.x' listed in the index is missing");
	/* a shard name that escapes the directory */
	write_text(idx, "{\"weight_map\": {\"a\": \"../etc/passwd\"}}");
	expect_fail(model_load(d, NULL, &m, &err), &err, "invalid shard name");
	/* a missing shard */
	write_text(idx, "{\"weight_map\": {\"a\": \"model-00003-of-00003.safetensors\"}}");
	expect_fail(model_load(d, NULL, &m, &err), &err, "model-00003-of-00003.safetensors");
	write_text(idx, "{\"weight_map\": 3}");
	expect_fail(model_load(d, NULL, &m, &err), &err, "no weight_map");

	/* no index: every .safetensors file of the directory */
	remove(idx);
	assert_int_equal(model_load(d, NULL, &m, &err), 0);
	assert_int_equal(m.total_bytes, 12800 + 16384 + 32768 + 256);
	model_release(&m);

	const char *e = tpath("empty-dir");
	assert_int_equal(mkdir(e, 0755), 0);
	expect_fail(model_load(e, NULL, &m, &err), &err, "no model.safetensors.index.json");
}


/* The layer taxonomy (model/layers.c): each architecture's rule as
 * llama.cpp applies it, and the catalog's Qwen3-Next row. */
static uint32_t count_bits(const model_desc *m, uint8_t bit)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->n_layers; i++)
		n += (m->layer_mix[i] & bit) != 0;
	return n;
}

static void test_layers(void **state)
{
	(void)state;
	model_desc m;
	/* Nemotron-H: Mamba-2, MLP-only and attention layers; MLP-only keep neither */
	uint32_t kv[6] = {0, 0, 0, 8, 0, 0}, ff[6] = {0, 12288, 0, 0, 0, 12288};
	memset(&m, 0, sizeof m);
	m.arch = "nemotron_h";
	m.n_layers = 6, m.n_heads = 32, m.n_kv_heads = 8, m.recurrent = true, m.ssm_state = 128, m.ssm_inner = 8192;
	m.layer_kv_heads = kv, m.layer_ffn = ff;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_RS), 3);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 1);
	assert_true(m.layer_mix[3] & MODEL_L_KV);
	assert_false(m.layer_mix[1] & (MODEL_L_KV | MODEL_L_RS));
	assert_non_null(m.layer_rule);
	free(m.layer_mix), m.layer_mix = NULL;
	/* the same per-layer facts under the common rule: the MLP-only layers
	 * would be recurrent (the mistake issue 22 names) */
	m.arch = "granitehybrid";
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_RS), 5);
	free(m.layer_mix), m.layer_mix = NULL;
	m.layer_kv_heads = NULL, m.layer_ffn = NULL;
	/* Falcon-H1: KV and a recurrent row on every layer */
	m.arch = "falcon-h1", m.n_layers = 4, m.ffn = 4096;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_RS), 4);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 4);
	free(m.layer_mix), m.layer_mix = NULL;
	/* Qwen3-Next: every 4th layer attends (default interval), or the file's flags */
	m.arch = "qwen3next", m.n_layers = 8;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 2);
	assert_true(m.layer_mix[3] & MODEL_L_KV);
	assert_true(m.layer_mix[0] & MODEL_L_RS);
	assert_int_equal(m.mixer, MODEL_MIX_GDN);
	free(m.layer_mix), m.layer_mix = NULL;
	bool given[8] = {true, false, true, false, true, true, true, true};
	m.layer_recr_given = given;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 2);
	assert_true(m.layer_mix[1] & MODEL_L_KV);
	free(m.layer_mix), m.layer_mix = NULL;
	m.layer_recr_given = NULL;
	/* without SSM keys no layer is recurrent, whatever the rule */
	m.recurrent = false;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_RS), 0);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 8);
	free(m.layer_mix), m.layer_mix = NULL;
	/* Gemma 3n: layers from 20 on reuse an earlier layer's cache */
	m.arch = "gemma3n", m.n_layers = 30;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 20);
	free(m.layer_mix), m.layer_mix = NULL;
	/* Gemma 4: block_count - shared_kv_layers */
	m.arch = "gemma4", m.n_layers = 42, m.n_shared_kv_layers = 18;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 24);
	free(m.layer_mix), m.layer_mix = NULL;
	/* DeepSeek-V3.2: an indexer-key cache on every attention layer */
	m.arch = "deepseek32", m.n_layers = 4, m.n_shared_kv_layers = 0, m.n_kv_heads = 1, m.indexer_key_len = 128;
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_IDX), 4);
	free(m.layer_mix), m.layer_mix = NULL;
	m.arch = "deepseek2";
	model_layers_fill(&m);
	assert_int_equal(count_bits(&m, MODEL_L_IDX), 0);
	free(m.layer_mix), m.layer_mix = NULL;

	/* the catalog row: 12 attention layers of 48, 36 gated delta-net */
	gw_error err = {0};
	assert_int_equal(model_load("qwen3-next-80b-a3b", NULL, &m, &err), 0);
	assert_int_equal(count_bits(&m, MODEL_L_KV), 12);
	assert_int_equal(count_bits(&m, MODEL_L_RS), 36);
	model_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explicit),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_layers),
		cmocka_unit_test(test_hfconfig),
		cmocka_unit_test(test_safetensors_file),
		cmocka_unit_test(test_safetensors_hostile),
		cmocka_unit_test(test_safetensors_dir),
	};
	return cmocka_run_group_tests_name("model", tests, setup, teardown);
}

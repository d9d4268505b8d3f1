/*
 * Unit tests for kb/: the embedded knowledge tables, their typed records,
 * name lookup, GGUF block sizes, and rejection of malformed tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb/kb.h"

static int teardown(void **state)
{
	(void)state;
	kb_set_data_dir(NULL);
	kb_release_all();
	return 0;
}

static void test_tables_load(void **state)
{
	(void)state;
	gw_error err = {0};
	kb_set_data_dir(NULL);
	int rc = kb_load_all(&err);
	if (rc)
		fail_msg("embedded tables rejected: %s", err.msg);
	assert_true(kb_gpu_count() >= 45);
	assert_true(kb_model_count() >= 30);
	assert_true(kb_quant_count() >= 40);
	/* every record cites a source, and its strings live in the cached table */
	const kb_table *t = kb_get_table("gpus", &err);
	assert_non_null(t);
	long name_col = kb_col(t, "name");
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *g = kb_gpu_at(i);
		assert_true(*g->source);
		assert_ptr_equal(g->name, kb_cell(t, i, name_col));
		assert_true(g->vram_bytes > 0 && g->bandwidth_gbs > 0);
	}
	assert_null(kb_gpu_at(kb_gpu_count()));
	for (size_t i = 0; i < kb_model_count(); i++) {
		const model_spec *m = kb_model_at(i);
		assert_true(*m->source);
		assert_true(m->head_dim > 0 && m->heads % m->kv_heads == 0);
	}
}

/* Every card our users name, by short id and by the name NVML reports. */
static void test_gpu_find(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"gtx-580", "gtx-580"},
		{"GTX 1060", "gtx-1060"},
		{"NVIDIA GeForce GTX 1080 Ti", "gtx-1080-ti"},
		{"rtx-2060", "rtx-2060"},
		{"NVIDIA GeForce RTX 2080 Ti", "rtx-2080-ti"},
		{"RTX 3060 12GB", "rtx-3060"},
		{"NVIDIA GeForce RTX 3060", "rtx-3060"},
		{"rtx-3070", "rtx-3070"},
		{"NVIDIA GeForce RTX 3080", "rtx-3080"},
		{"rtx-3080-ti", "rtx-3080-ti"},
		{"NVIDIA GeForce RTX 3090", "rtx-3090"},
		{"RTX 3090 24GB", "rtx-3090"},
		{"rtx-4060", "rtx-4060"},
		{"4060-laptop", "4060-laptop"},
		{"NVIDIA GeForce RTX 4060 Laptop GPU", "4060-laptop"},
		{"rtx-4070", "rtx-4070"},
		{"RTX 4070 Ti", "rtx-4070-ti"},
		{"rtx-4080", "rtx-4080"},
		{"rtx-4090", "rtx-4090"},
		{"NVIDIA GeForce RTX 4090", "rtx-4090"},
		{"4090", "rtx-4090"},
		{"rtx 4090", "rtx-4090"},
		{"NVIDIA GeForce RTX 4090 Laptop GPU", "4090-laptop"},
		{"rtx-5060", "rtx-5060"},
		{"NVIDIA GeForce RTX 5070", "rtx-5070"},
		{"NVIDIA GeForce RTX 5070 Laptop GPU", "5070-laptop"},
		{"rtx-5080", "rtx-5080"},
		{"NVIDIA GeForce RTX 5090", "rtx-5090"},
		{"Tesla V100-SXM2-32GB", "v100"},
		{"Tesla T4", "t4"},
		{"NVIDIA A10", "a10"},
		{"NVIDIA A100-SXM4-40GB", "a100-40g-sxm"},
		{"NVIDIA A100-PCIE-40GB", "a100-40g-pcie"},
		{"NVIDIA A100 80GB PCIe", "a100-80g-pcie"},
		{"NVIDIA A100-SXM4-80GB", "a100-80g-sxm"},
		{"a100-80g-sxm", "a100-80g-sxm"},
		{"NVIDIA L4", "l4"},
		{"NVIDIA L40S", "l40s"},
		{"NVIDIA RTX A6000", "rtx-a6000"},
		{"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
		{"NVIDIA RTX 5000 Ada Generation", "rtx-5000-ada"},
		{"NVIDIA H100 PCIe", "h100-pcie"},
		{"NVIDIA H100 80GB HBM3", "h100-sxm"},
		{"h100-sxm", "h100-sxm"},
		{"NVIDIA H200", "h200"},
		{"NVIDIA H20", "h20"},
		{"NVIDIA B200", "b200"},
		{"AMD Instinct MI300X", "mi300x"},
		{"AMD Radeon RX 7900 XTX", "rx-7900-xtx"},
		{"Apple M1", "m1"},
		{"m1-max", "m1-max"},
		{"m2-ultra", "m2-ultra"},
		{"Apple M3 Max", "m3-max"},
		{"M4 Max", "m4-max"},
		/* as the validation measurements name them */
		{"RTX 4090 24GB", "rtx-4090"},
		{"RTX 3070 8GB", "rtx-3070"},
		{"RTX 3080 10GB", "rtx-3080"},
		{"RTX 3080 Ti 12GB", "rtx-3080-ti"},
		{"RTX 4070 Ti 12GB", "rtx-4070-ti"},
		{"RTX 4080 16GB", "rtx-4080"},
		{"RTX 5090 32GB", "rtx-5090"},
		{"RTX 5000 Ada 32GB", "rtx-5000-ada"},
		{"RTX 6000 Ada 48GB", "rtx-6000-ada"},
		{"RTX A6000 48GB", "rtx-a6000"},
		{"A100 80GB", "a100-80g-sxm"},
		{"A100 SXM 80GB", "a100-80g-sxm"},
		{"H100 80GB", "h100-sxm"},
		{"H100 PCIe 80GB", "h100-pcie"},
		{"H20 96GB", "h20"},
		{"L40S 48GB", "l40s"},
		{"Apple M1 7c 8GB", "m1-7c-8g"},
		{"Apple M1 Max 32c 64GB", "m1-max"},
		{"Apple M2 Ultra 76c 192GB", "m2-ultra"},
		{"Apple M3 Max 40c 64GB", "m3-max-64g"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const gpu_spec *g = kb_gpu_find(cases[i][0]);
		if (!g)
			fail_msg("'%s' not found", cases[i][0]);
		if (strcmp(g->id, cases[i][1]) != 0)
			fail_msg("'%s' gave '%s', expected '%s'", cases[i][0], g->id, cases[i][1]);
	}
	/* a memory size that is not the card's is not silently dropped */
	assert_null(kb_gpu_find("RTX 3090 12GB"));
	assert_null(kb_gpu_find("rtx-9999"));
	assert_null(kb_gpu_find(""));
	assert_null(kb_gpu_find("NVIDIA"));
	/* every GPU the cloud price table names resolves */
	gw_error err = {0};
	const kb_table *prices = kb_get_table("cloud-prices", &err);
	if (prices) {
		long col = kb_col(prices, "gpu");
		assert_true(col >= 0);
		for (size_t r = 0; r < prices->nrows; r++)
			if (!kb_gpu_find(kb_cell(prices, r, col)))
				fail_msg("cloud-prices.tsv line %zu: unknown GPU '%s'", prices->lines[r],
					 kb_cell(prices, r, col));
	}
	const gpu_spec *s = kb_gpu_suggest("rtx-4909");
	assert_non_null(s);
	assert_string_equal(s->id, "rtx-4090");
	assert_null(kb_gpu_suggest("zzzzzzzzzzzzzzzzzzzzzzzz"));
}

static void test_gpu_fields(void **state)
{
	(void)state;
	const gpu_spec *g = kb_gpu_find("rtx-4090");
	assert_non_null(g);
	assert_string_equal(g->vendor, "NVIDIA");
	assert_int_equal(g->cc_major, 8);
	assert_int_equal(g->cc_minor, 9);
	assert_int_equal(g->vram_bytes, 24ULL << 30);
	assert_int_equal(g->sms, 128);
	assert_false(g->laptop);
	assert_false(g->mig);
	g = kb_gpu_find("4060-laptop");
	assert_true(g->laptop);
	assert_int_equal(g->vram_bytes, 8ULL << 30);
	g = kb_gpu_find("h100-sxm");
	assert_true(g->mig);
	assert_int_equal(g->cc_major, 9);
	g = kb_gpu_find("m2-ultra");
	assert_true(g->unified_memory);
	assert_int_equal(g->cc_major, -1);
	assert_int_equal(g->pcie_gen, 0);
	g = kb_gpu_find("gtx-580");
	assert_int_equal(g->vram_bytes, 1536ULL << 20);
}

static void test_model_find(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"llama-2-13b", "llama-2-13b"},
		{"llama2:13b", "llama-2-13b"},
		{"meta-llama/Llama-2-13b-hf", "llama-2-13b"},
		{"llama3.1:8b", "llama-3.1-8b"},
		{"meta-llama/Llama-3.1-8B", "llama-3.1-8b"},
		{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"},
		{"llama3.1:8b-instruct-q4_K_M", "llama-3.1-8b"},
		{"Meta-Llama-3-8B", "llama-3-8b"},
		{"Llama 3.3 70B", "llama-3.3-70b"},
		{"mixtral:8x7b", "mixtral-8x7b"},
		{"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"},
		{"qwen2.5-coder:32b", "qwen2.5-coder-32b"},
		{"qwq:32b", "qwq-32b"},
		{"qwen3-coder:30b", "qwen3-coder-30b-a3b"},
		{"qwen3:30b-a3b", "qwen3-30b-a3b"},
		{"Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"},
		{"gemma2:9b", "gemma-2-9b"},
		{"google/gemma-3-27b-it", "gemma-3-27b"},
		{"phi4", "phi-4"},
		{"deepseek-r1:14b", "deepseek-r1-distill-qwen-14b"},
		{"deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "deepseek-r1-distill-llama-70b"},
		{"gpt-oss:20b", "gpt-oss-20b"},
		{"openai/gpt-oss-120b", "gpt-oss-120b"},
		/* GGUF repositories of any org resolve to the model they quantize */
		{"bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "llama-3.1-8b"},
		{"bartowski/openai_gpt-oss-20b-GGUF", "gpt-oss-20b"},
		{"unsloth/Qwen3-30B-A3B-GGUF", "qwen3-30b-a3b"},
		{"lmstudio-community/Mistral-Small-3.2-24B-Instruct-2506-GGUF", "mistral-small-3.1-24b"},
		{"unsloth/Llama-4-Scout-17B-16E-Instruct-GGUF", "llama-4-scout"},
		{"Mistral-Small-3.2-24B-Instruct-2506", "mistral-small-3.1-24b"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const model_spec *m = kb_model_find(cases[i][0]);
		if (!m)
			fail_msg("'%s' not found", cases[i][0]);
		if (strcmp(m->id, cases[i][1]) != 0)
			fail_msg("'%s' gave '%s', expected '%s'", cases[i][0], m->id, cases[i][1]);
	}
	assert_null(kb_model_find("llama-9-999b"));
	const model_spec *s = kb_model_suggest("lama3.1:8b");
	assert_non_null(s);
	assert_string_equal(s->id, "llama-3.1-8b");

	const model_spec *m = kb_model_find("llama-3-70b");
	assert_int_equal(m->layers, 80);
	assert_int_equal(m->kv_heads, 8);
	assert_int_equal(m->vocab, 128256);
	m = kb_model_find("gemma-3-12b");
	assert_int_equal(m->swa_period, 6);
	assert_int_equal(m->swa_window, 1024);
	m = kb_model_find("gemma-2-9b");
	assert_int_equal(m->swa_period, 2);
	assert_int_equal(m->swa_window, 4096);
	assert_int_equal(m->head_dim, 256);
	m = kb_model_find("qwen3-30b-a3b");
	assert_string_equal(m->arch, "qwen3moe");
	assert_int_equal(m->experts, 128);
	assert_int_equal(m->experts_used, 8);
	assert_true(m->params_active < m->params_total / 5);
	m = kb_model_find("gpt-oss-20b");
	assert_int_equal(m->swa_window, 128);
	assert_int_equal(m->swa_period, 2);
	m = kb_model_find("qwen3-0.6b");
	assert_true(m->tied_embeddings);
	assert_int_equal(m->head_dim, 128);
}

static void test_quants(void **state)
{
	(void)state;
	const quant_spec *q = kb_quant_find_kind("q4_k", QK_GGUF_TYPE);
	assert_non_null(q);
	assert_int_equal(q->block_size, 256);
	assert_int_equal(q->bytes_per_block, 144);
	assert_int_equal(q->ggml_type, 12);
	q = kb_quant_by_ggml_type(14);
	assert_non_null(q);
	assert_string_equal(q->name, "Q6_K");
	assert_int_equal(q->block_size, 256);
	assert_int_equal(q->bytes_per_block, 210);
	q = kb_quant_find_kind("Q8_0", QK_GGUF_TYPE);
	assert_int_equal(q->block_size, 32);
	assert_int_equal(q->bytes_per_block, 34);
	assert_int_equal(q->ggml_type, 8);
	assert_string_equal(kb_quant_by_ggml_type(30)->id, "bf16");
	assert_string_equal(kb_quant_by_ggml_type(39)->id, "mxfp4");
	assert_null(kb_quant_by_ggml_type(4)); /* Q4_2: removed from ggml */
	assert_null(kb_quant_by_ggml_type(-1));

	/* rounding up to whole blocks */
	q = kb_quant_find_kind("q4_k", QK_GGUF_TYPE);
	assert_int_equal(quant_row_bytes(q, 4096), 16 * 144);
	assert_int_equal(quant_row_bytes(q, 257), 2 * 144);
	assert_int_equal(quant_row_bytes(q, 1), 144);
	assert_int_equal(quant_row_bytes(q, 0), 0);
	q = kb_quant_find_kind("q8_0", QK_GGUF_TYPE);
	assert_int_equal(quant_row_bytes(q, 33), 68);
	assert_int_equal(quant_row_bytes(kb_quant_find("f16"), 1000), 2000);
	assert_int_equal(quant_row_bytes(NULL, 1000), 0);

	/* recipes: a plain lookup prefers the recipe; it carries its base layout */
	q = kb_quant_find("Q4_K_M");
	assert_non_null(q);
	assert_int_equal(q->kind, QK_GGUF_RECIPE);
	assert_string_equal(q->base, "q4_k");
	assert_string_equal(q->output, "q6_k");
	assert_string_equal(q->attn_v, "q6_k@more_bits");
	assert_int_equal(q->bytes_per_block, 144);
	assert_true(q->bpw > 4.5 && q->bpw < 5.0);
	q = kb_quant_find("q8_0");
	assert_int_equal(q->kind, QK_GGUF_RECIPE);
	assert_int_equal(q->ggml_type, -1);
	q = kb_quant_find("awq");
	assert_non_null(q);
	assert_string_equal(q->id, "awq-int4");
	assert_true(q->bpw > 4.1 && q->bpw < 4.2);
	q = kb_quant_find("nf4");
	assert_int_equal(q->kind, QK_FORMAT);
	assert_int_equal(quant_row_bytes(q, 16384), 8452);
	assert_int_equal(kb_quant_find("fp16")->kind, QK_FORMAT);
	assert_null(kb_quant_find("q9_z"));
	assert_string_equal(kb_quant_suggest("q4_k_mm")->id, "q4_k_m");
}

/* ---- malformed tables from a data directory ---------------------------- */

static char tmpdir[64];

static void write_file(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void remove_files(void)
{
	static const char *const names[] = {"gpus.tsv", "models.tsv", "quants.tsv"};
	char path[128];
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

#define GPU_HDR "id\tname\taliases\tvendor\tarch\tcc\tsms\tcores\tvram_gib\tbandwidth_gbs\tfp32_tflops\t" \
		"fp16_tflops\ttdp_w\tpcie_gen\tmig\tlaptop\tunified_memory\tyear\tprice_usd\t"           \
		"used_price_usd\tprice_date\tsource\n"
#define GPU_ROW(vram, src) "x-1\tX One\t\tNVIDIA\tAda\t8.9\t10\t1280\t" vram "\t200\t10\t20\t100\t4\t0\t0\t0\t2023\t0\t0\t\t" src "\n"

/* Load gpus.tsv with the given text from a temp dir; return the error text (static). */
static const char *gpus_error(const char *text)
{
	static gw_error err;
	memset(&err, 0, sizeof err);
	write_file("gpus.tsv", text);
	kb_set_data_dir(tmpdir);
	int rc = kb_gpus_load(&err);
	/* a broken table reads as empty for the lookups */
	if (rc) {
		assert_int_equal(kb_gpu_count(), 0);
		assert_null(kb_gpu_find("x-1"));
	}
	return rc ? err.msg : NULL;
}

static void test_malformed(void **state)
{
	(void)state;
	const char *msg;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/gw-kb-test.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));

	/* a well-formed one-row table loads and replaces the embedded one */
	assert_null(gpus_error(GPU_HDR GPU_ROW("8", "test row")));
	assert_int_equal(kb_gpu_count(), 1);
	assert_non_null(kb_gpu_find("X One"));
	assert_null(kb_gpu_find("rtx-4090"));

	msg = gpus_error(GPU_HDR GPU_ROW("8", ""));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "'gpus'"));
	assert_non_null(strstr(msg, "line 2"));
	assert_non_null(strstr(msg, "source"));

	msg = gpus_error(GPU_HDR "# comment\n" GPU_ROW("eight", "src"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "'gpus' line 3"));
	assert_non_null(strstr(msg, "'vram_gib'"));
	assert_non_null(strstr(msg, "'eight' is not a number"));

	msg = gpus_error(GPU_HDR GPU_ROW("-8", "src"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "out of range"));

	msg = gpus_error(GPU_HDR "x-1\tX One\tNVIDIA\tsrc\n");
	assert_non_null(msg);
	assert_non_null(strstr(msg, "line 2"));
	assert_non_null(strstr(msg, "columns"));

	msg = gpus_error("id\tname\tvendor\n" "x\tX\tNVIDIA\n");
	assert_non_null(msg);
	assert_non_null(strstr(msg, "source"));

	msg = gpus_error("id\tname\tsource\n" "x\tX\tsrc\n");
	assert_non_null(msg);
	assert_non_null(strstr(msg, "no 'aliases' column"));

	msg = gpus_error(GPU_HDR GPU_ROW("8", "a") GPU_ROW("8", "b"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "duplicate id 'x-1'"));

	/* a table the directory lacks keeps its built-in copy */
	gw_error err = {0};
	kb_set_data_dir(tmpdir);
	assert_int_equal(kb_models_load(&err), 0);
	assert_true(kb_model_count() >= 30);
	/* a directory that does not exist is an error naming it */
	char *nodir = xasprintf("%s/no-such-dir", tmpdir);
	kb_set_data_dir(nodir);
	assert_int_not_equal(kb_models_load(&err), 0);
	assert_non_null(strstr(err.msg, "no-such-dir"));
	free(nodir);
	kb_set_data_dir(tmpdir);

	/* models: cross-column checks */
	write_file("models.tsv",
		   "id\tname\taliases\tarch\tlayers\thidden\theads\tkv_heads\thead_dim\tffn\tvocab\texperts\t"
		   "experts_used\texpert_ffn\tparams_total\tparams_active\tswa_window\tswa_period\tctx_train\t"
		   "tied_embeddings\tdefault_quant\tkv_latent\tmoe_step\tshared_ffn\tdense_lead\tsource\n"
		   "m\tM\t\tllama\t32\t4096\t32\t6\t128\t11008\t32000\t0\t0\t0\t7e9\t7e9\t0\t0\t4096\t0\t\t0\t0\t0\t0\tsrc\n");
	kb_set_data_dir(tmpdir);
	assert_int_not_equal(kb_models_load(&err), 0);
	assert_non_null(strstr(err.msg, "kv_heads"));
	/* alternating MoE blocks on a dense row */
	write_file("models.tsv",
		   "id\tname\taliases\tarch\tlayers\thidden\theads\tkv_heads\thead_dim\tffn\tvocab\texperts\t"
		   "experts_used\texpert_ffn\tparams_total\tparams_active\tswa_window\tswa_period\tctx_train\t"
		   "tied_embeddings\tdefault_quant\tkv_latent\tmoe_step\tshared_ffn\tdense_lead\tsource\n"
		   "m\tM\t\tllama\t32\t4096\t32\t8\t128\t11008\t32000\t0\t0\t0\t7e9\t7e9\t0\t0\t4096\t0\t\t0\t2\t0\t0\tsrc\n");
	kb_set_data_dir(tmpdir);
	assert_int_not_equal(kb_models_load(&err), 0);
	assert_non_null(strstr(err.msg, "moe_step"));

	/* quants: a recipe naming an unknown type, a bpw that contradicts the block */
	write_file("quants.tsv",
		   "id\tname\taliases\tkind\tggml_type\tblock_size\tbytes_per_block\tbpw\tbase\tbump\toutput\t"
		   "attn_v\tffn_down\tattn_output\tsource\n"
		   "q4_k\tQ4_K\t\ttype\t12\t256\t144\t4.5\t\t\t\t\t\t\tsrc\n"
		   "q4_k_m\tQ4_K_M\t\trecipe\t-1\t\t\t4.9\tq4_k\tq6_k\tq6_k\tq6_k@more_bits\t\t\tsrc\n");
	kb_set_data_dir(tmpdir);
	assert_int_not_equal(kb_quants_load(&err), 0);
	assert_non_null(strstr(err.msg, "unknown type"));
	write_file("quants.tsv",
		   "id\tname\taliases\tkind\tggml_type\tblock_size\tbytes_per_block\tbpw\tbase\tbump\toutput\t"
		   "attn_v\tffn_down\tattn_output\tsource\n"
		   "q4_k\tQ4_K\t\ttype\t12\t256\t144\t4.25\t\t\t\t\t\t\tsrc\n");
	kb_set_data_dir(tmpdir);
	assert_int_not_equal(kb_quants_load(&err), 0);
	assert_non_null(strstr(err.msg, "disagrees"));

	/* back to the embedded tables */
	kb_set_data_dir(NULL);
	assert_int_equal(kb_load_all(&err), 0);
	assert_non_null(kb_gpu_find("rtx-4090"));
	remove_files();
}

static void test_name_key(void **state)
{
	(void)state;
	char k[64];
	kb_name_key("NVIDIA GeForce RTX 4090", k, sizeof k);
	assert_string_equal(k, "rtx4090");
	kb_name_key("NVIDIA A100-SXM4-80GB", k, sizeof k);
	assert_string_equal(k, "a100sxm480g");
	kb_name_key("h100 80GiB", k, sizeof k);
	assert_string_equal(k, "h10080g");
	kb_name_key("llama3.1:8b", k, sizeof k);
	assert_string_equal(k, "llama318b");
	kb_name_key("x", k, 1);
	assert_string_equal(k, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_tables_load, teardown),
		cmocka_unit_test_teardown(test_gpu_find, teardown),
		cmocka_unit_test_teardown(test_gpu_fields, teardown),
		cmocka_unit_test_teardown(test_model_find, teardown),
		cmocka_unit_test_teardown(test_quants, teardown),
		cmocka_unit_test_teardown(test_malformed, teardown),
		cmocka_unit_test_teardown(test_name_key, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

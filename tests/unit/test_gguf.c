/*
 * Unit tests for the GGUF reader: real GGUF v2/v3 files written by
 * tests/unit/gguf_writer.h (exact bytes per tensor, layer and group, SWA
 * flags, per-layer KV heads), truncated copies, and every hostile header
 * the reader must refuse with a message naming the file and the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gguf_writer.h"
#include "kb/kb.h"
#include "model/model.h"
#include "tmpdir.h"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("gguf");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

static char *tpath(const char *name)
{
	static char p[2][400];
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

/* Expected numbers of a written model. */
typedef struct expect {
	uint64_t layer[64], expert[64], embd, output, other, total;
	double params;
	uint64_t n_tensors;
} expect;

static void add(expect *e, long layer, bool expert, int group, uint32_t type, uint64_t d0, uint64_t d1,
		uint64_t d2, ggw *w, const char *name)
{
	uint64_t dims[3] = {d0, d1, d2};
	uint32_t nd = d2 ? 3 : d1 ? 2 : 1;
	uint64_t b = ggw_tensor(w, name, type, nd, dims);
	e->total += b;
	e->params += (double)d0 * (d1 ? d1 : 1) * (d2 ? d2 : 1);
	e->n_tensors++;
	if (layer >= 0) {
		e->layer[layer] += b;
		if (expert)
			e->expert[layer] += b;
	} else if (group == 0) {
		e->embd += b;
	} else if (group == 1) {
		e->output += b;
	} else {
		e->other += b;
	}
}

typedef struct shape {
	const char *arch;
	uint32_t layers, hidden, heads, kv, ffn, vocab, experts, used, head_dim;
	bool tied;
	uint32_t wtype;   /* weight type of the layers */
} shape;

/* A llama-style model (MoE when experts > 0) with exact expectations. */
static void build_model(ggw *w, const shape *s, expect *e)
{
	char k[128], n[64];
	uint32_t hd = s->head_dim ? s->head_dim : s->hidden / s->heads;
	memset(e, 0, sizeof *e);
	ggw_kv_str(w, "general.architecture", s->arch);
	ggw_kv_str(w, "general.name", "Test Model");
	ggw_kv_u32(w, "general.file_type", 15);
#define AK(suffix) (snprintf(k, sizeof k, "%s." suffix, s->arch), k)
	ggw_kv_u32(w, AK("block_count"), s->layers);
	ggw_kv_u32(w, AK("embedding_length"), s->hidden);
	ggw_kv_u32(w, AK("feed_forward_length"), s->ffn);
	ggw_kv_u32(w, AK("attention.head_count"), s->heads);
	ggw_kv_u32(w, AK("attention.head_count_kv"), s->kv);
	ggw_kv_u64(w, AK("context_length"), 8192);
	ggw_kv_f32(w, AK("attention.layer_norm_rms_epsilon"), 1e-5f);
	if (s->head_dim) {
		ggw_kv_u32(w, AK("attention.key_length"), hd);
		ggw_kv_u32(w, AK("attention.value_length"), hd);
	}
	if (s->experts) {
		ggw_kv_u32(w, AK("expert_count"), s->experts);
		ggw_kv_u32(w, AK("expert_used_count"), s->used);
		ggw_kv_u32(w, AK("expert_feed_forward_length"), s->ffn);
	}
	ggw_kv_str(w, "tokenizer.ggml.model", "gpt2");
	ggw_kv_tokens(w, "tokenizer.ggml.tokens", s->vocab);
	ggw_kv_arr_f32(w, "tokenizer.ggml.scores", s->vocab);
	ggw_kv_nested(w, "test.nested", 3, 5);
	ggw_kv_f64(w, "test.f64", 2.5);
	ggw_kv_bool(w, "test.bool", true);
	ggw_kv_small(w, "test.i16", GGW_I16, 0xfffe, 2);
	ggw_kv_small(w, "test.u8", GGW_U8, 7, 1);
#undef AK
	add(e, -1, false, 0, GGT_Q4_K, s->hidden, s->vocab, 0, w, "token_embd.weight");
	for (uint32_t l = 0; l < s->layers; l++) {
		uint32_t t = s->wtype, tv = l % 2 ? GGT_Q6_K : t;
#define T(nm) (snprintf(n, sizeof n, "blk.%u." nm, l), n)
		add(e, l, false, 2, GGT_F32, s->hidden, 0, 0, w, T("attn_norm.weight"));
		add(e, l, false, 2, t, s->hidden, s->heads * hd, 0, w, T("attn_q.weight"));
		add(e, l, false, 2, t, s->hidden, s->kv * hd, 0, w, T("attn_k.weight"));
		add(e, l, false, 2, tv, s->hidden, s->kv * hd, 0, w, T("attn_v.weight"));
		add(e, l, false, 2, t, s->heads * hd, s->hidden, 0, w, T("attn_output.weight"));
		add(e, l, false, 2, GGT_F32, s->hidden, 0, 0, w, T("ffn_norm.weight"));
		if (s->experts) {
			add(e, l, false, 2, GGT_F32, s->hidden, s->experts, 0, w, T("ffn_gate_inp.weight"));
			add(e, l, true, 2, t, s->hidden, s->ffn, s->experts, w, T("ffn_gate_exps.weight"));
			add(e, l, true, 2, t, s->hidden, s->ffn, s->experts, w, T("ffn_up_exps.weight"));
			add(e, l, true, 2, GGT_Q8_0, s->ffn, s->hidden, s->experts, w, T("ffn_down_exps.weight"));
		} else {
			add(e, l, false, 2, t, s->hidden, s->ffn, 0, w, T("ffn_gate.weight"));
			add(e, l, false, 2, t, s->hidden, s->ffn, 0, w, T("ffn_up.weight"));
			add(e, l, false, 2, GGT_Q6_K, s->ffn, s->hidden, 0, w, T("ffn_down.weight"));
		}
#undef T
	}
	add(e, -1, false, 1, GGT_F32, s->hidden, 0, 0, w, "output_norm.weight");
	if (!s->tied)
		add(e, -1, false, 1, GGT_Q6_K, s->hidden, s->vocab, 0, w, "output.weight");
	add(e, -1, false, 2, GGT_F32, hd / 2, 0, 0, w, "rope_freqs.weight");
}

static const shape llama_small = {"llama", 4, 512, 8, 2, 1024, 1000, 0, 0, 0, false, GGT_Q4_K};

static void check_expect(const model_desc *m, const expect *e, uint32_t layers)
{
	for (uint32_t l = 0; l < layers; l++) {
		assert_int_equal(m->layer_bytes[l], e->layer[l]);
		assert_int_equal(m->layer_expert_bytes[l], e->expert[l]);
	}
	assert_int_equal(m->embd_bytes, e->embd);
	assert_int_equal(m->output_bytes, e->output);
	assert_int_equal(m->other_bytes, e->other);
	assert_int_equal(m->total_bytes, e->total);
	assert_int_equal(m->n_tensors, e->n_tensors);
	assert_true(m->params_total == e->params);
}

static void test_llama_v3(void **state)
{
	(void)state;
	ggw w;
	expect e;
	model_desc m;
	gw_error err = {0};
	ggw_init(&w, 3);
	build_model(&w, &llama_small, &e);
	const char *p = tpath("llama.gguf");
	assert_true(ggw_write(&w, p, 0) > 0);
	assert_int_equal(gguf_read(p, &m, &err), 0);
	assert_int_equal(m.source, MODEL_SRC_GGUF);
	assert_string_equal(m.arch, "llama");
	assert_string_equal(m.name, "Test Model");
	assert_string_equal(m.path, p);
	assert_string_equal(m.file_type, "Q4_K_M");
	assert_int_equal(m.n_layers, 4);
	assert_int_equal(m.hidden, 512);
	assert_int_equal(m.n_heads, 8);
	assert_int_equal(m.n_kv_heads, 2);
	assert_int_equal(m.head_dim_k, 64);
	assert_int_equal(m.head_dim_v, 64);
	assert_int_equal(m.ffn, 1024);
	assert_int_equal(m.vocab, 1000);
	assert_int_equal(m.ctx_train, 8192);
	assert_false(m.tied_embeddings);
	assert_true(m.has_tensors);
	assert_null(m.layer_swa);
	assert_null(m.layer_kv_heads);
	assert_int_equal(m.swa_window, 0);
	check_expect(&m, &e, 4);
	/* a Q6_K attn_v on odd layers makes them larger */
	assert_true(m.layer_bytes[1] > m.layer_bytes[0]);
	assert_true(m.params_active == m.params_total);
	model_release(&m);

	/* the same header from memory, header bytes only, real file size */
	size_t hl;
	uint8_t *h = ggw_header(&w, &hl);
	assert_int_equal(gguf_read_mem(h, hl, hl + w.data_len, &m, &err), 0);
	assert_int_equal(m.total_bytes, e.total);
	model_release(&m);
	/* ... and with a file size one byte short of the data */
	assert_int_not_equal(gguf_read_mem(h, hl, hl + w.data_len - 32 - 200, &m, &err), 0);
	assert_non_null(strstr(err.msg, "truncated"));
	free(h);
	ggw_free(&w);
}

static void test_v2_and_tied(void **state)
{
	(void)state;
	ggw w;
	expect e;
	model_desc m;
	gw_error err = {0};
	shape s = llama_small;
	s.tied = true;
	ggw_init(&w, 2);
	build_model(&w, &s, &e);
	const char *p = tpath("tied-v2.gguf");
	assert_true(ggw_write(&w, p, 0) > 0);
	assert_int_equal(gguf_read(p, &m, &err), 0);
	assert_true(m.tied_embeddings);
	check_expect(&m, &e, 4);
	assert_int_equal(m.output_bytes, 512 * 4); /* output_norm only */
	model_release(&m);
	ggw_free(&w);
}

static void test_moe(void **state)
{
	(void)state;
	ggw w;
	expect e;
	model_desc m;
	gw_error err = {0};
	shape s = {"qwen3moe", 3, 256, 4, 2, 512, 300, 8, 2, 128, false, GGT_Q4_K};
	ggw_init(&w, 3);
	build_model(&w, &s, &e);
	const char *p = tpath("moe.gguf");
	assert_true(ggw_write(&w, p, 0) > 0);
	assert_int_equal(gguf_read(p, &m, &err), 0);
	assert_int_equal(m.n_experts, 8);
	assert_int_equal(m.n_experts_used, 2);
	assert_int_equal(m.expert_ffn, 512);
	assert_int_equal(m.head_dim_k, 128); /* key_length, not hidden/heads = 64 */
	check_expect(&m, &e, 3);
	assert_true(m.layer_expert_bytes[0] > 0 && m.layer_expert_bytes[0] < m.layer_bytes[0]);
	double exp_params = 3.0 * 3 * 256 * 512 * 8;
	assert_true(m.params_active == e.params - exp_params + exp_params * 2 / 8);
	model_release(&m);
	ggw_free(&w);
}

/* A minimal valid model with a few metadata keys chosen by the caller. */
static void tiny_header(ggw *w, const char *arch, uint32_t layers)
{
	char k[96];
	ggw_kv_str(w, "general.architecture", arch);
	snprintf(k, sizeof k, "%s.block_count", arch);
	ggw_kv_u32(w, k, layers);
	snprintf(k, sizeof k, "%s.embedding_length", arch);
	ggw_kv_u32(w, k, 64);
	snprintf(k, sizeof k, "%s.attention.head_count", arch);
	ggw_kv_u32(w, k, 4);
}

static void tiny_tensors(ggw *w, uint32_t layers)
{
	char n[64];
	ggw_tensor2(w, "token_embd.weight", GGT_F16, 64, 100);
	for (uint32_t l = 0; l < layers; l++) {
		snprintf(n, sizeof n, "blk.%u.attn_q.weight", l);
		ggw_tensor2(w, n, GGT_Q8_0, 64, 64);
	}
}

static void read_tiny(ggw *w, model_desc *m, int want_rc, const char *want_msg)
{
	gw_error err = {0};
	const char *p = tpath("tiny.gguf");
	assert_true(ggw_write(w, p, 0) > 0);
	int rc = gguf_read(p, m, &err);
	if (want_rc == 0) {
		if (rc)
			print_error("unexpected: %s\n", err.msg);
		assert_int_equal(rc, 0);
		return;
	}
	assert_int_not_equal(rc, 0);
	assert_true(err.code < 0);
	if (!strstr(err.msg, want_msg) || !strstr(err.msg, p))
		print_error("message '%s' lacks '%s' or the path\n", err.msg, want_msg);
	assert_non_null(strstr(err.msg, want_msg));
	assert_non_null(strstr(err.msg, p));
}

static void test_swa_patterns(void **state)
{
	(void)state;
	ggw w;
	model_desc m;
	/* gemma3: every 6th layer global by default */
	ggw_init(&w, 3);
	tiny_header(&w, "gemma3", 12);
	ggw_kv_u32(&w, "gemma3.attention.sliding_window", 1024);
	tiny_tensors(&w, 12);
	read_tiny(&w, &m, 0, NULL);
	assert_int_equal(m.swa_window, 1024);
	assert_non_null(m.layer_swa);
	for (uint32_t i = 0; i < 12; i++)
		assert_int_equal(m.layer_swa[i], i % 6 != 5);
	model_release(&m);
	ggw_free(&w);

	/* gemma3 with an explicit period */
	ggw_init(&w, 3);
	tiny_header(&w, "gemma3", 8);
	ggw_kv_u32(&w, "gemma3.attention.sliding_window", 512);
	ggw_kv_u32(&w, "gemma3.attention.sliding_window_pattern", 4);
	tiny_tensors(&w, 8);
	read_tiny(&w, &m, 0, NULL);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(m.layer_swa[i], i % 4 != 3);
	model_release(&m);
	ggw_free(&w);

	/* gemma2 alternates, starting with a sliding layer */
	ggw_init(&w, 3);
	tiny_header(&w, "gemma2", 6);
	ggw_kv_u32(&w, "gemma2.attention.sliding_window", 4096);
	tiny_tensors(&w, 6);
	read_tiny(&w, &m, 0, NULL);
	for (uint32_t i = 0; i < 6; i++)
		assert_int_equal(m.layer_swa[i], i % 2 == 0);
	model_release(&m);
	ggw_free(&w);

	/* a per-layer bool array */
	bool flags[5] = {true, false, false, true, true};
	ggw_init(&w, 3);
	tiny_header(&w, "gpt-oss", 5);
	ggw_kv_u32(&w, "gpt-oss.attention.sliding_window", 128);
	ggw_kv_arr_bool(&w, "gpt-oss.attention.sliding_window_pattern", flags, 5);
	tiny_tensors(&w, 5);
	read_tiny(&w, &m, 0, NULL);
	assert_int_equal(m.swa_window, 128);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(m.layer_swa[i], flags[i]);
	model_release(&m);
	ggw_free(&w);

	/* Llama 4: chunks of 8192 on three layers of four without a window
	 * key, or with any window but 0; none with 0 (llama.cpp llama4.cpp) */
	for (int c = 0; c < 3; c++) {
		ggw_init(&w, 3);
		tiny_header(&w, "llama4", 8);
		if (c)
			ggw_kv_u32(&w, "llama4.attention.sliding_window", c == 1 ? 4096 : 0);
		tiny_tensors(&w, 8);
		read_tiny(&w, &m, 0, NULL);
		if (c == 2) {
			assert_int_equal(m.swa_window, 0);
			assert_null(m.layer_swa);
		} else {
			assert_int_equal(m.swa_window, 8192);
			assert_non_null(m.layer_swa);
			for (uint32_t i = 0; i < 8; i++)
				assert_int_equal(m.layer_swa[i], i % 4 != 3);
		}
		model_release(&m);
		ggw_free(&w);
	}

	/* llama with no window: no flags */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 2);
	tiny_tensors(&w, 2);
	read_tiny(&w, &m, 0, NULL);
	assert_null(m.layer_swa);
	assert_int_equal(m.swa_window, 0);
	assert_int_equal(m.vocab, 100); /* from token_embd's shape: no token list */
	assert_string_equal(m.name, "tiny");
	assert_string_equal(m.file_type, "Q8_0"); /* no general.file_type: dominant type */
	model_release(&m);
	ggw_free(&w);
}

static void test_layer_kv_heads(void **state)
{
	(void)state;
	ggw w;
	model_desc m;
	int32_t kv[4] = {4, 0, 4, 2};
	ggw_init(&w, 3);
	tiny_header(&w, "jamba", 4);
	ggw_kv_arr_i32(&w, "jamba.attention.head_count_kv", kv, 4);
	tiny_tensors(&w, 4);
	read_tiny(&w, &m, 0, NULL);
	assert_non_null(m.layer_kv_heads);
	for (int i = 0; i < 4; i++)
		assert_int_equal(m.layer_kv_heads[i], (uint32_t)kv[i]);
	assert_int_equal(m.n_kv_heads, 4);
	model_release(&m);
	ggw_free(&w);

	uint32_t same[3] = {2, 2, 2};
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 3);
	ggw_kv_arr_u32(&w, "llama.attention.head_count_kv", same, 3);
	tiny_tensors(&w, 3);
	read_tiny(&w, &m, 0, NULL);
	assert_null(m.layer_kv_heads);
	assert_int_equal(m.n_kv_heads, 2);
	model_release(&m);
	ggw_free(&w);

	ggw_init(&w, 3);
	tiny_header(&w, "llama", 3);
	ggw_kv_arr_u32(&w, "llama.attention.head_count_kv", same, 2);
	tiny_tensors(&w, 3);
	read_tiny(&w, &m, GW_EFORMAT, "has 2 entries for 3 layers");
	ggw_free(&w);
}

/* A header of 3 layers, 64 wide, with the given heads and one extra u32 key. */
static void shape_header(ggw *w, uint32_t heads, const char *key, uint32_t v)
{
	ggw_init(w, 3);
	ggw_kv_str(w, "general.architecture", "llama");
	ggw_kv_u32(w, "llama.block_count", 3);
	ggw_kv_u32(w, "llama.embedding_length", 64);
	ggw_kv_u32(w, "llama.attention.head_count", heads);
	if (key)
		ggw_kv_u32(w, key, v);
	tiny_tensors(w, 3);
}

/*
 * The shape rules config.json always had (issue 10): GGUF files that break
 * them are refused with the same words, not planned (one with 2^32-1 heads
 * planned 512 TiB of KV "fits with offload").
 */
static void test_shape_rules(void **state)
{
	(void)state;
	ggw w;
	model_desc m;
	shape_header(&w, 4, "llama.attention.head_count_kv", 0);
	read_tiny(&w, &m, GW_EFORMAT, "4 attention heads cannot be shared by 0 key-value heads");
	ggw_free(&w);
	shape_header(&w, 4, "llama.attention.head_count_kv", 3);
	read_tiny(&w, &m, GW_EFORMAT, "4 attention heads cannot be shared by 3 key-value heads");
	ggw_free(&w);
	shape_header(&w, 4, "llama.attention.head_count_kv", 8);
	read_tiny(&w, &m, GW_EFORMAT, "4 attention heads cannot be shared by 8 key-value heads");
	ggw_free(&w);
	shape_header(&w, UINT32_MAX, NULL, 0);
	read_tiny(&w, &m, GW_EFORMAT, "4294967295 attention heads (at most 65536)");
	ggw_free(&w);
	shape_header(&w, 4, "llama.expert_count", UINT32_MAX);
	read_tiny(&w, &m, GW_EFORMAT, "4294967295 experts (at most 65536)");
	ggw_free(&w);
	shape_header(&w, 3, NULL, 0);
	read_tiny(&w, &m, GW_EFORMAT, "hidden size 64 is not a multiple of 3 heads");
	ggw_free(&w);
	/* LFM2's short-convolution window: a conv state of (l_cache - 1) x
	 * n_embd; an absurd window is refused, not planned as TiB of state */
	shape_header(&w, 4, "llama.shortconv.l_cache", 3);
	read_tiny(&w, &m, 0, NULL);
	assert_true(m.recurrent);
	assert_int_equal(m.ssm_conv, 3);
	assert_int_equal(m.ssm_inner, 64);
	assert_int_equal(m.ssm_state, 0);
	model_release(&m);
	ggw_free(&w);
	shape_header(&w, 4, "llama.shortconv.l_cache", 4000000000u);
	read_tiny(&w, &m, GW_EFORMAT, "llama.shortconv.l_cache = 4000000000 is impossible");
	ggw_free(&w);
	/* 0 heads and 0 KV heads: a model without attention (Mamba), not an error */
	shape_header(&w, 0, "llama.attention.head_count_kv", 0);
	read_tiny(&w, &m, 0, NULL);
	model_release(&m);
	ggw_free(&w);
	/* the same file with a head dimension is fine: heads need not split the width */
	shape_header(&w, 3, "llama.attention.key_length", 16);
	read_tiny(&w, &m, 0, NULL);
	model_release(&m);
	ggw_free(&w);
	uint32_t kv[3] = {4, 3, 4};
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 3);
	ggw_kv_arr_u32(&w, "llama.attention.head_count_kv", kv, 3);
	tiny_tensors(&w, 3);
	read_tiny(&w, &m, GW_EFORMAT, "layer 1: 4 attention heads cannot be shared by 3 key-value heads");
	ggw_free(&w);
}

/* A sparse file whose header describes ~6 GB of tensors: offsets above 4 GiB. */
static void test_large_sparse(void **state)
{
	(void)state;
	ggw w;
	model_desc m;
	gw_error err = {0};
	char n[64];
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 3);
	uint64_t want = 0;
	for (int l = 0; l < 3; l++) {
		snprintf(n, sizeof n, "blk.%d.ffn_up.weight", l);
		want += ggw_tensor2(&w, n, GGT_BF16, 32768, 32768);
	}
	const char *p = tpath("big.gguf");
	uint64_t size = ggw_write(&w, p, 0);
	assert_true(size > 6000000000ULL);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(gguf_read(p, &m, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_int_equal(m.total_bytes, want);
	assert_int_equal(m.layer_bytes[2], 32768ULL * 32768 * 2);
	print_message("# read a header describing %.1f GB in %.3f ms\n", want / 1e9,
		      (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	model_release(&m);
	/* truncated copy: one byte short of the last tensor */
	assert_true(ggw_write(&w, p, 1) > 0);
	assert_int_equal(gguf_read(p, &m, &err), GW_ETRUNC);
	assert_non_null(strstr(err.msg, "truncated"));
	assert_non_null(strstr(err.msg, "big.gguf"));
	ggw_free(&w);
}

/* Raw bytes as a file, expecting a refusal naming the problem. */
static void refuse_raw(const uint8_t *buf, size_t len, const char *want)
{
	model_desc m;
	gw_error err = {0};
	const char *p = tpath("raw.gguf");
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	assert_true(gguf_read(p, &m, &err) < 0);
	if (!strstr(err.msg, want))
		print_error("message '%s' lacks '%s'\n", err.msg, want);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "raw.gguf"));
	assert_int_not_equal(gguf_read_mem(buf, len, len, &m, &err), 0);
	assert_non_null(strstr(err.msg, want));
}

static void test_bad_headers(void **state)
{
	(void)state;
	ggw_buf b = {0};
	refuse_raw((const uint8_t *)"", 0, "too short");
	refuse_raw((const uint8_t *)"GGU", 3, "too short");
	refuse_raw((const uint8_t *)"GGML\x03\0\0\0", 8, "bad magic");
	refuse_raw((const uint8_t *)"GGUF\x01\0\0\0\0\0\0\0\0\0\0\0", 16, "version 1 is not supported");
	refuse_raw((const uint8_t *)"GGUF\0\0\0\x03\0\0\0\0\0\0\0\0", 16, "big-endian");
	refuse_raw((const uint8_t *)"GGUF\x07\0\0\0\0\0\0\0\0\0\0\0", 16, "unsupported GGUF version 7");
	refuse_raw((const uint8_t *)"GGUF\x03\0\0\0\0\0\0", 11, "truncated header");

	/* 2^60 tensors, 2^60 metadata pairs */
	ggw_put(&b, "GGUF", 4);
	ggw_u32(&b, 3);
	ggw_u64(&b, 1ULL << 60);
	ggw_u64(&b, 0);
	refuse_raw(b.p, b.len, "impossible tensor count 1152921504606846976");
	b.len = 8;
	ggw_u64(&b, 0);
	ggw_u64(&b, 1ULL << 60);
	refuse_raw(b.p, b.len, "impossible metadata count");
	/* a key whose length runs past the end */
	b.len = 8;
	ggw_u64(&b, 0);
	ggw_u64(&b, 1);
	ggw_u64(&b, 1ULL << 62);
	ggw_put(&b, "general.architecture", 20);
	refuse_raw(b.p, b.len, "runs past the end of the file");
	free(b.p);
}

static void test_hostile_meta(void **state)
{
	(void)state;
	ggw w;
	model_desc m;

	ggw_init(&w, 3);
	ggw_kv_str(&w, "general.name", "x");
	tiny_tensors(&w, 1);
	read_tiny(&w, &m, GW_EFORMAT, "no general.architecture");
	ggw_free(&w);

	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_key(&w, "bad.type", 13);
	ggw_u32(&w.kv, 0);
	read_tiny(&w, &m, GW_EFORMAT, "unknown value type 13");
	ggw_free(&w);

	/* an array claiming 2^60 uint32 */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_key(&w, "huge.array", GGW_ARRAY);
	ggw_u32(&w.kv, GGW_U32);
	ggw_u64(&w.kv, 1ULL << 60);
	read_tiny(&w, &m, GW_EFORMAT, "more than the file can hold");
	ggw_free(&w);

	/* a string array claiming 2^40 strings */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_key(&w, "tokenizer.ggml.tokens", GGW_ARRAY);
	ggw_u32(&w.kv, GGW_STRING);
	ggw_u64(&w.kv, 1ULL << 40);
	read_tiny(&w, &m, GW_EFORMAT, "more than the file can hold");
	ggw_free(&w);

	/* arrays nested 20 deep */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_key(&w, "deep", GGW_ARRAY);
	for (int i = 0; i < 20; i++) {
		ggw_u32(&w.kv, GGW_ARRAY);
		ggw_u64(&w.kv, 1);
	}
	ggw_u32(&w.kv, GGW_U8);
	ggw_u64(&w.kv, 0);
	read_tiny(&w, &m, GW_EFORMAT, "nests arrays deeper");
	ggw_free(&w);

	/* alignment: not a power of two, wrong type */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_kv_u32(&w, "general.alignment", 48);
	read_tiny(&w, &m, GW_EFORMAT, "not a power of two");
	ggw_free(&w);
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_kv_u64(&w, "general.alignment", 64);
	read_tiny(&w, &m, GW_EFORMAT, "expected uint32");
	ggw_free(&w);

	/* a 64-byte alignment is honoured */
	ggw_init(&w, 3);
	w.alignment = 64;
	tiny_header(&w, "llama", 2);
	ggw_kv_u32(&w, "general.alignment", 64);
	tiny_tensors(&w, 2);
	read_tiny(&w, &m, 0, NULL);
	assert_int_equal(m.total_bytes, 64 * 100 * 2 + 2 * (64 * 64 / 32 * 34));
	model_release(&m);
	ggw_free(&w);

	/* negative block count */
	ggw_init(&w, 3);
	ggw_kv_str(&w, "general.architecture", "llama");
	ggw_kv_i32(&w, "llama.block_count", -3);
	read_tiny(&w, &m, GW_EFORMAT, "negative");
	ggw_free(&w);

	/* impossible block count */
	ggw_init(&w, 3);
	ggw_kv_str(&w, "general.architecture", "llama");
	ggw_kv_u32(&w, "llama.block_count", 4000000000u);
	read_tiny(&w, &m, GW_EFORMAT, "impossible");
	ggw_free(&w);

	/* a key longer than GGUF allows */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	char *longkey = malloc(70000);
	memset(longkey, 'k', 69999);
	longkey[69999] = '\0';
	ggw_kv_u32(&w, longkey, 1);
	free(longkey);
	read_tiny(&w, &m, GW_EFORMAT, "longer than 65535");
	ggw_free(&w);
}

static void test_hostile_tensors(void **state)
{
	(void)state;
	ggw w;
	model_desc m;
	uint64_t d5[5] = {32, 1, 1, 1, 1};
	uint64_t dover[3] = {1ULL << 32, 1ULL << 32, 1ULL << 32};
	uint64_t dneg[2] = {32, (uint64_t)-1};
	uint64_t d2[2] = {64, 64};

	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.x.weight", GGT_F32, 5, d5, 0);
	read_tiny(&w, &m, GW_EFORMAT, "has 5 dimensions");
	ggw_free(&w);

	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.x.weight", GGT_F32, 3, dover, 0);
	read_tiny(&w, &m, GW_EFORMAT, "element count overflows");
	ggw_free(&w);

	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.x.weight", GGT_F32, 2, dneg, 0);
	read_tiny(&w, &m, GW_EFORMAT, "negative dimension");
	ggw_free(&w);

	/* element count fits int64 but bytes overflow: 2^62 F32 */
	uint64_t dbytes[2] = {1ULL << 31, 1ULL << 31};
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.x.weight", GGT_F32, 2, dbytes, 0);
	read_tiny(&w, &m, GW_EFORMAT, "byte size that overflows");
	ggw_free(&w);

	int bad_types[] = {4, 5, 31, 36, 99, 1 << 20};
	for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
		ggw_init(&w, 3);
		tiny_header(&w, "llama", 1);
		ggw_tensor_at(&w, "blk.0.x.weight", (uint32_t)bad_types[i], 2, d2, 0);
		read_tiny(&w, &m, GW_EFORMAT, "unknown ggml type");
		ggw_free(&w);
	}

	uint64_t d33[1] = {33};
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.x.weight", GGT_Q8_0, 1, d33, 0);
	read_tiny(&w, &m, GW_EFORMAT, "not a multiple of the block size");
	ggw_free(&w);

	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.x.weight", GGT_F32, 2, d2, 16);
	read_tiny(&w, &m, GW_EFORMAT, "not a multiple of the alignment");
	ggw_free(&w);

	/* overlapping: two tensors at offset 0 */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.a.weight", GGT_F32, 2, d2, 0);
	ggw_tensor_at(&w, "blk.0.b.weight", GGT_F32, 2, d2, 0);
	w.data_len = 64 * 64 * 4;
	read_tiny(&w, &m, GW_EFORMAT, "overlaps");
	ggw_free(&w);

	/* beyond the end of the file */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.a.weight", GGT_F32, 2, d2, 1ULL << 40);
	w.data_len = 64 * 64 * 4;
	read_tiny(&w, &m, GW_ETRUNC, "truncated");
	ggw_free(&w);

	/* offset + bytes overflows */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor_at(&w, "blk.0.a.weight", GGT_F32, 2, d2, UINT64_MAX - 31);
	read_tiny(&w, &m, GW_EFORMAT, "offset overflows");
	ggw_free(&w);

	/* duplicate names */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor2(&w, "blk.0.a.weight", GGT_F32, 64, 64);
	ggw_tensor2(&w, "blk.0.a.weight", GGT_F32, 64, 64);
	read_tiny(&w, &m, GW_EFORMAT, "duplicate tensor 'blk.0.a.weight'");
	ggw_free(&w);

	/* a name longer than ggml allows */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	ggw_tensor2(&w, "blk.0.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", GGT_F32, 64, 64);
	read_tiny(&w, &m, GW_EFORMAT, "name longer than 63 bytes");
	ggw_free(&w);

	/* blk index beyond block_count */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 2);
	ggw_tensor2(&w, "blk.7.a.weight", GGT_F32, 64, 64);
	read_tiny(&w, &m, GW_EFORMAT, "beyond block_count");
	ggw_free(&w);

	/* more tensors claimed than written */
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	tiny_tensors(&w, 1);
	w.claim_t = 1 << 24;
	read_tiny(&w, &m, GW_EFORMAT, "impossible tensor count");
	ggw_free(&w);
	ggw_init(&w, 3);
	tiny_header(&w, "llama", 1);
	tiny_tensors(&w, 1);
	w.claim_t = 3;
	w.data_len = 0; /* the file ends after the header */
	read_tiny(&w, &m, GW_ETRUNC, "truncated header: tensor");
	ggw_free(&w);
}

static void test_type_table(void **state)
{
	(void)state;
	const char *name;
	uint32_t block, bytes;
	/* ggml-common.h sizes, and the ids gguf-py uses */
	assert_true(gguf_type_info(12, &name, &block, &bytes));
	assert_string_equal(name, "Q4_K");
	assert_int_equal(block, 256);
	assert_int_equal(bytes, 144);
	assert_true(gguf_type_info(14, &name, &block, &bytes));
	assert_int_equal(bytes, 210);
	assert_true(gguf_type_info(8, &name, &block, &bytes));
	assert_int_equal(block, 32);
	assert_int_equal(bytes, 34);
	assert_true(gguf_type_info(39, &name, &block, &bytes));
	assert_string_equal(name, "MXFP4");
	assert_int_equal(bytes, 17);
	assert_false(gguf_type_info(4, NULL, NULL, NULL));
	assert_false(gguf_type_info(-1, NULL, NULL, NULL));
	assert_string_equal(gguf_file_type_name(15), "Q4_K_M");
	assert_string_equal(gguf_file_type_name(32), "BF16");
	assert_null(gguf_file_type_name(5));
	assert_null(gguf_file_type_name(100000));
}

/* The reader's type table and data/quants.tsv must agree on every type both know. */
static void test_quants_agree(void **state)
{
	(void)state;
	size_t both = 0;
	for (int id = 0; id < 64; id++) {
		const char *name;
		uint32_t block, bytes;
		const quant_spec *q = kb_quant_by_ggml_type(id);
		if (!gguf_type_info(id, &name, &block, &bytes)) {
			if (q && q->kind == QK_GGUF_TYPE)
				fail_msg("quants.tsv knows ggml type %d (%s), the reader does not", id, q->name);
			continue;
		}
		if (!q)
			continue;
		both++;
		if ((uint32_t)q->block_size != block || (uint32_t)q->bytes_per_block != bytes)
			fail_msg("type %d %s: reader %u/%u, quants.tsv %d/%d", id, name, block, bytes, q->block_size,
				 q->bytes_per_block);
	}
	print_message("# %zu ggml types agree with quants.tsv\n", both);
	if (kb_quant_count())
		assert_true(both >= 20);
	kb_release_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama_v3),
		cmocka_unit_test(test_v2_and_tied),
		cmocka_unit_test(test_moe),
		cmocka_unit_test(test_swa_patterns),
		cmocka_unit_test(test_layer_kv_heads),
		cmocka_unit_test(test_shape_rules),
		cmocka_unit_test(test_large_sparse),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_hostile_meta),
		cmocka_unit_test(test_hostile_tensors),
		cmocka_unit_test(test_type_table),
		cmocka_unit_test(test_quants_agree),
	};
	return cmocka_run_group_tests_name("gguf", tests, setup, teardown);
}

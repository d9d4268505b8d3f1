/*
 * weights.c: the bytes of a model's weights under a storage format, split
 * the way llama.cpp loads them (repeating layers, output layer, token
 * embedding).  A GGUF file gives exact tensor bytes; everything else is
 * estimated tensor by tensor from the architecture with llama.cpp's
 * quantization rules.
 *
 * Rules: ggml-org/llama.cpp src/llama-quant.cpp (llama_tensor_get_type_impl
 * and the default type of each llama_ftype), as summarised in
 * shared/reference/vram-planner.md section 2.5.  Block sizes come from
 * data/quants.tsv (ggml-common.h).
 */
#include "plan/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A GGUF file-type recipe: its default tensor type (llama_ftype). */
typedef enum {
	R_NONE,  /* not a GGUF recipe: a plain type or a non-GGUF format */
	R_Q2_K, R_Q2_K_S, R_Q3_K_S, R_Q3_K_M, R_Q3_K_L, R_Q4_K_S, R_Q4_K_M,
	R_Q5_K_S, R_Q5_K_M, R_Q6_K, R_Q8_0, R_Q4_0, R_Q4_1, R_Q5_0, R_Q5_1,
	R_IQ2_XXS, R_IQ2_XS, R_IQ2_S, R_IQ2_M, R_IQ3_XXS, R_IQ3_S, R_IQ3_M,
	R_IQ1_S, R_IQ1_M, R_IQ4_NL, R_IQ4_XS, R_F16, R_BF16, R_F32, R_MXFP4_MOE,
} recipe;

static const struct {
	const char *id;
	recipe r;
	const char *base; /* default tensor type of the ftype */
} recipes[] = {
	{"q2_k", R_Q2_K, "q2_k"}, {"q2_k_s", R_Q2_K_S, "q2_k"},
	{"q3_k_s", R_Q3_K_S, "q3_k"}, {"q3_k_m", R_Q3_K_M, "q3_k"}, {"q3_k_l", R_Q3_K_L, "q3_k"},
	{"q4_k_s", R_Q4_K_S, "q4_k"}, {"q4_k_m", R_Q4_K_M, "q4_k"},
	{"q5_k_s", R_Q5_K_S, "q5_k"}, {"q5_k_m", R_Q5_K_M, "q5_k"},
	{"q6_k", R_Q6_K, "q6_k"}, {"q8_0", R_Q8_0, "q8_0"},
	{"q4_0", R_Q4_0, "q4_0"}, {"q4_1", R_Q4_1, "q4_1"},
	{"q5_0", R_Q5_0, "q5_0"}, {"q5_1", R_Q5_1, "q5_1"},
	{"iq2_xxs", R_IQ2_XXS, "iq2_xxs"}, {"iq2_xs", R_IQ2_XS, "iq2_xs"},
	{"iq2_s", R_IQ2_S, "iq2_xs"}, {"iq2_m", R_IQ2_M, "iq2_s"},
	{"iq3_xxs", R_IQ3_XXS, "iq3_xxs"}, {"iq3_s", R_IQ3_S, "iq3_s"}, {"iq3_m", R_IQ3_M, "iq3_s"},
	{"iq1_s", R_IQ1_S, "iq1_s"}, {"iq1_m", R_IQ1_M, "iq1_m"},
	{"iq4_nl", R_IQ4_NL, "iq4_nl"}, {"iq4_xs", R_IQ4_XS, "iq4_xs"},
	{"f16", R_F16, "f16"}, {"bf16", R_BF16, "bf16"}, {"f32", R_F32, "f32"},
	/* LLAMA_FTYPE_MOSTLY_MXFP4_MOE (38): MoE experts in MXFP4 as OpenAI
	 * ships gpt-oss, every other weight Q8_0 (llama.cpp src/llama-quant.cpp;
	 * ggml-org/gpt-oss-20b-GGUF) */
	{"mxfp4_moe", R_MXFP4_MOE, "q8_0"}, {"mxfp4", R_MXFP4_MOE, "q8_0"},
};

/* Non-GGUF storage formats (vLLM, transformers): bytes per weight of the
 * linear layers; embeddings and lm_head stay 16-bit. */
static const struct {
	const char *id;
	const char *canon;
	double linear_bpw;   /* 0: take the bpw column of quants.tsv */
	double other_bytes;  /* bytes per weight of embeddings, norms */
} formats[] = {
	{"fp16", "FP16", 16, 2}, {"float16", "FP16", 16, 2}, {"half", "FP16", 16, 2},
	{"bfloat16", "BF16", 16, 2},
	{"fp32", "FP32", 32, 4}, {"float32", "FP32", 32, 4},
	{"fp8", "FP8", 8, 2}, {"int8", "INT8", 8, 2}, {"w8a8", "INT8", 8, 2},
	{"awq", "AWQ-INT4", 0, 2}, {"awq-int4", "AWQ-INT4", 0, 2},
	{"gptq", "GPTQ-INT4", 0, 2}, {"gptq-int4", "GPTQ-INT4", 0, 2},
	{"nf4", "NF4", 0, 2}, {"bnb-4bit", "NF4", 0, 2},
};

typedef enum {
	T_NORM, T_EMBD, T_OUTPUT, T_ATTN_Q, T_ATTN_K, T_ATTN_V, T_ATTN_QKV, T_ATTN_OUT,
	T_FFN_GATE, T_FFN_UP, T_FFN_DOWN, T_GATE_INP, T_EXPS_GATE, T_EXPS_UP, T_EXPS_DOWN,
} tkind;

static void lower_copy(const char *in, char *out, size_t n)
{
	size_t i = 0;
	for (; in[i] && i + 1 < n; i++)
		out[i] = (char)((in[i] >= 'A' && in[i] <= 'Z') ? in[i] + 32 : in[i]);
	out[i] = 0;
}

/* llama.cpp use_more_bits(): the first and last eighth and every third layer. */
static bool use_more_bits(uint32_t i, uint32_t n)
{
	return i < n / 8 || i >= 7 * n / 8 || ((int64_t)i - n / 8) % 3 == 2;
}

/* The ggml type llama.cpp picks for one tensor under recipe r. */
static const char *tensor_type(recipe r, const char *base, tkind k, uint32_t il,
			       const model_desc *m)
{
	uint32_t n = m->n_layers;
	uint32_t gqa = m->n_kv_heads ? m->n_heads / m->n_kv_heads : 1;
	bool moe8 = m->n_experts == 8;
	bool is_iq_low = r == R_IQ2_XXS || r == R_IQ2_XS || r == R_IQ2_S || r == R_IQ2_M ||
			 r == R_IQ1_S || r == R_IQ1_M;
	/* LLM_TYPE_70B: llama/qwen2 with 80 blocks */
	bool is70b = n == 80 && m->n_experts == 0;

	if (k == T_NORM || k == T_GATE_INP)
		return "f32";
	if (r == R_F16 || r == R_BF16 || r == R_F32)
		return base;
	if (r == R_MXFP4_MOE)
		return k == T_EXPS_GATE || k == T_EXPS_UP || k == T_EXPS_DOWN ? "mxfp4" : "q8_0";
	switch (k) {
	case T_OUTPUT:
		if (is_iq_low || r == R_IQ3_XXS)
			return "q5_k";
		return r == R_Q8_0 ? "q8_0" : "q6_k";
	case T_EMBD:
		if (is_iq_low)
			return "q2_k";
		if (r == R_IQ3_S || r == R_IQ3_M)
			return "iq3_s";
		return base;
	case T_ATTN_V: {
		const char *t = base;
		if (r == R_Q2_K)
			t = gqa >= 4 ? "q4_k" : "q3_k";
		else if (r == R_Q2_K_S && gqa >= 4)
			t = "q4_k";
		else if (r == R_Q3_K_M)
			t = il < 2 ? "q5_k" : "q4_k";
		else if (r == R_Q3_K_L)
			t = "q5_k";
		else if ((r == R_IQ4_NL || r == R_IQ4_XS) && gqa >= 4)
			t = "q5_k";
		else if ((r == R_Q4_K_M || r == R_Q5_K_M) && use_more_bits(il, n))
			t = "q6_k";
		else if (r == R_Q4_K_S && il < 4)
			t = "q5_k";
		if (is70b && (strcmp(t, "q3_k") == 0 || strcmp(t, "q4_k") == 0))
			t = "q5_k";
		if (moe8)
			t = "q8_0";
		return t;
	}
	case T_ATTN_K:
		return moe8 ? "q8_0" : base;
	case T_ATTN_QKV: /* a fused attn_qkv (Phi-3, Phi-4) */
		if (r == R_Q3_K_M || r == R_Q3_K_L || r == R_IQ3_M)
			return "q4_k";
		if (r == R_Q4_K_M)
			return "q5_k";
		if (r == R_Q5_K_M)
			return "q6_k";
		return base;
	case T_ATTN_OUT:
		if (moe8) {
			if (r == R_Q2_K || r == R_IQ3_XXS || r == R_Q3_K_S || r == R_Q3_K_M ||
			    r == R_IQ4_NL || r == R_Q4_K_S || r == R_Q4_K_M || r == R_IQ3_S ||
			    r == R_IQ3_M || r == R_Q5_K_S || r == R_Q5_K_M)
				return "q5_k";
			return base;
		}
		if (r == R_Q2_K)
			return "q3_k";
		if (r == R_IQ3_XXS)
			return "iq3_s";
		if (r == R_Q3_K_M || r == R_IQ3_M)
			return "q4_k";
		if (r == R_Q3_K_L)
			return "q5_k";
		return base;
	case T_FFN_DOWN:
	case T_EXPS_DOWN:
		if (r == R_Q2_K)
			return "q3_k";
		if (r == R_Q2_K_S)
			return il < n / 8 ? "q4_k" : base;
		if (r == R_Q3_K_M)
			return il < n / 16 ? "q5_k" : "q4_k";
		if (r == R_Q3_K_L)
			return "q5_k";
		if ((r == R_Q4_K_M || r == R_Q5_K_M) && use_more_bits(il, n))
			return "q6_k";
		if ((r == R_IQ4_NL || r == R_IQ4_XS || r == R_Q4_K_S) && il < n / 8)
			return "q5_k";
		return base;
	default:
		return base;
	}
}

/* The 32-weight type llama.cpp falls back to when a row does not split
 * into 256-weight super-blocks. */
static const char *fallback_type(const char *t)
{
	if (!strcmp(t, "q4_k"))
		return "q5_0";
	if (!strcmp(t, "q5_k"))
		return "q5_1";
	if (!strcmp(t, "q6_k"))
		return "q8_0";
	return "iq4_nl"; /* q2_k, q3_k, iq* (18 bytes per 32 like q4_0) */
}

typedef struct est {
	recipe r;
	const char *base;
	double linear_bpw, other_bytes; /* formats */
	bool is_format;
	uint64_t bytes;
	double params;
	gw_error *err;
	int rc;
	/* types resolved so far: kb lookups normalise names, so resolve each once */
	const char *cache_name[16];
	const quant_spec *cache_q[16];
	size_t ncache;
} est;

static const quant_spec *type_lookup(est *e, const char *t)
{
	for (size_t i = 0; i < e->ncache; i++)
		if (e->cache_name[i] == t || !strcmp(e->cache_name[i], t))
			return e->cache_q[i];
	const quant_spec *q = kb_quant_find_kind(t, QK_GGUF_TYPE);
	if (e->ncache < 16) {
		e->cache_name[e->ncache] = t;
		e->cache_q[e->ncache++] = q;
	}
	return q;
}

/* Bytes of a tensor of `rows` rows of `ne0` weights. */
static uint64_t tensor_bytes(est *e, tkind k, uint32_t il, const model_desc *m, uint64_t ne0,
			     uint64_t rows)
{
	e->params += (double)ne0 * (double)rows;
	if (e->is_format) {
		bool linear = k != T_NORM && k != T_EMBD && k != T_OUTPUT && k != T_GATE_INP;
		if (k == T_NORM || k == T_GATE_INP)
			return ne0 * rows * (uint64_t)e->other_bytes;
		if (!linear)
			return ne0 * rows * (uint64_t)e->other_bytes;
		return (uint64_t)ceil((double)ne0 * (double)rows * e->linear_bpw / 8.0);
	}
	const char *t = tensor_type(e->r, e->base, k, il, m);
	const quant_spec *q = type_lookup(e, t);
	if (q && q->block_size > 1 && ne0 % (uint64_t)q->block_size != 0)
		q = type_lookup(e, fallback_type(t));
	if (!q || q->block_size <= 0) {
		if (e->rc == 0)
			e->rc = gw_fail(e->err, GW_ENOTFOUND,
					"quantization type '%s' is missing from quants.tsv", t);
		return 0;
	}
	return quant_row_bytes(q, ne0) * rows;
}

static int setup_est(est *e, const char *quant, char *canon, size_t ncanon, gw_error *err)
{
	char low[32];
	memset(e, 0, sizeof *e);
	e->err = err;
	lower_copy(quant, low, sizeof low);
	for (char *p = low; *p; p++)
		if (*p == '-' && strncmp(low, "awq", 3) && strncmp(low, "gptq", 4) &&
		    strncmp(low, "bnb", 3))
			*p = '_';
	if (!strcmp(low, "fp16") || !strcmp(low, "float16") || !strcmp(low, "half"))
		strcpy(low, "f16");
	for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++) {
		if (!strcmp(low, recipes[i].id)) {
			e->r = recipes[i].r;
			e->base = recipes[i].base;
			for (size_t j = 0; j + 1 < ncanon && low[j]; j++) {
				canon[j] = (char)((low[j] >= 'a' && low[j] <= 'z') ? low[j] - 32 : low[j]);
				canon[j + 1] = 0;
			}
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
		if (!strcmp(low, formats[i].id)) {
			e->is_format = true;
			e->linear_bpw = formats[i].linear_bpw;
			e->other_bytes = formats[i].other_bytes;
			if (e->linear_bpw == 0) {
				const quant_spec *q = kb_quant_find_kind(formats[i].id, QK_FORMAT);
				e->linear_bpw = q && q->bpw > 0 ? q->bpw : 4.25;
			}
			snprintf(canon, ncanon, "%s", formats[i].canon);
			return 0;
		}
	}
	/* A plain GGUF type from the table (q6_k, iq4_xs ...) stored everywhere. */
	const quant_spec *q = kb_quant_find_kind(low, QK_GGUF_TYPE);
	if (q) {
		e->r = R_NONE;
		e->base = q->id;
		snprintf(canon, ncanon, "%s", q->name);
		return 0;
	}
	q = kb_quant_find_kind(low, QK_FORMAT);
	if (q && q->bpw > 0) {
		e->is_format = true;
		e->linear_bpw = q->bpw;
		e->other_bytes = 2;
		snprintf(canon, ncanon, "%s", q->name);
		return 0;
	}
	return gw_fail(err, GW_EINVAL, "unknown quantization '%s'", quant);
}

static uint32_t layer_kv_heads(const model_desc *m, uint32_t il)
{
	if (m->layer_kv_heads)
		return m->layer_kv_heads[il];
	return m->n_kv_heads;
}

/* Estimate one repeating block. */
static uint64_t block_bytes(est *e, const model_desc *m, uint32_t il, uint64_t *expert_bytes)
{
	uint64_t emb = m->hidden, hk = m->head_dim_k, hv = m->head_dim_v;
	uint64_t nh = m->n_heads, nkv = layer_kv_heads(m, il);
	uint64_t b = 0;
	bool gemma = m->arch && !strncmp(m->arch, "gemma", 5);
	bool qknorm = m->arch && (!strncmp(m->arch, "qwen3", 5) || !strcmp(m->arch, "gemma3"));
	/* OLMo 2/3: q_norm over all heads, k_norm over the KV heads
	 * (llama.cpp src/models/olmo2.cpp) */
	bool olmo = m->arch && (!strcmp(m->arch, "olmo2") || !strcmp(m->arch, "olmo3"));
	bool qkv_bias = m->arch && (!strcmp(m->arch, "qwen2") || !strcmp(m->arch, "qwen2moe"));
	/* Phi-3/Phi-4 GGUFs keep q, k and v in one attn_qkv tensor, which
	 * llama.cpp quantizes by its own rule (convert_hf_to_gguf.py keeps
	 * qkv_proj fused; llama-quant.cpp attn_qkv.weight) */
	bool fused_qkv = m->arch && !strcmp(m->arch, "phi3");

	b += tensor_bytes(e, T_NORM, il, m, emb, 1); /* attn_norm */
	if (nkv > 0 && m->mla) {
		/* MLA (DeepSeek-V3 shape): q through a 1536 low-rank, the latent
		 * K/V projection to head_dim_k (kv_lora_rank + rope), its
		 * per-head up-projections k_b and v_b, and the output; the
		 * heads are mla_head_dim_k / _v wide */
		uint64_t lat = hk, rank = hv, qr = 1536, qk = m->mla_head_dim_k, vk = m->mla_head_dim_v;
		b += tensor_bytes(e, T_ATTN_Q, il, m, emb, qr);
		b += tensor_bytes(e, T_ATTN_Q, il, m, qr, nh * qk);
		b += tensor_bytes(e, T_ATTN_K, il, m, emb, lat);
		b += tensor_bytes(e, T_ATTN_K, il, m, qk > 64 ? qk - 64 : qk, rank * nh);
		b += tensor_bytes(e, T_ATTN_V, il, m, rank, vk * nh);
		b += tensor_bytes(e, T_ATTN_OUT, il, m, nh * vk, emb);
		b += tensor_bytes(e, T_NORM, il, m, qr + rank, 1);
	} else if (nkv > 0 && fused_qkv) {
		b += tensor_bytes(e, T_ATTN_QKV, il, m, emb, nh * hk + nkv * hk + nkv * hv);
		b += tensor_bytes(e, T_ATTN_OUT, il, m, nh * hv, emb);
	} else if (nkv > 0) {
		b += tensor_bytes(e, T_ATTN_Q, il, m, emb, nh * hk);
		b += tensor_bytes(e, T_ATTN_K, il, m, emb, nkv * hk);
		b += tensor_bytes(e, T_ATTN_V, il, m, emb, nkv * hv);
		b += tensor_bytes(e, T_ATTN_OUT, il, m, nh * hv, emb);
		if (qkv_bias)
			b += tensor_bytes(e, T_NORM, il, m, nh * hk + 2 * nkv * hk, 1);
		if (qknorm)
			b += tensor_bytes(e, T_NORM, il, m, hk, 2);
		if (olmo)
			b += tensor_bytes(e, T_NORM, il, m, nh * hk + nkv * hk, 1);
	}
	b += tensor_bytes(e, T_NORM, il, m, emb, gemma ? 3 : 1); /* ffn_norm (+ gemma post norms) */
	if (model_layer_moe(m, il)) {
		uint64_t eff = m->expert_ffn ? m->expert_ffn : m->ffn, sh = m->shared_expert_ffn;
		uint64_t x = 0;
		b += tensor_bytes(e, T_GATE_INP, il, m, emb, m->n_experts);
		x += tensor_bytes(e, T_EXPS_GATE, il, m, emb, eff * m->n_experts);
		x += tensor_bytes(e, T_EXPS_UP, il, m, emb, eff * m->n_experts);
		x += tensor_bytes(e, T_EXPS_DOWN, il, m, eff, emb * m->n_experts);
		*expert_bytes = x;
		b += x;
		if (sh) {
			/* the shared expert (ffn_*_shexp): a dense FFN that stays
			 * with its layer under --n-cpu-moe */
			b += tensor_bytes(e, T_FFN_GATE, il, m, emb, sh);
			b += tensor_bytes(e, T_FFN_UP, il, m, emb, sh);
			b += tensor_bytes(e, T_FFN_DOWN, il, m, sh, emb);
		}
	} else {
		/* a dense block, also a dense block of a MoE model (Llama 4
		 * Maverick's every other block, DeepSeek-V3's first three) */
		b += tensor_bytes(e, T_FFN_GATE, il, m, emb, m->ffn);
		b += tensor_bytes(e, T_FFN_UP, il, m, emb, m->ffn);
		b += tensor_bytes(e, T_FFN_DOWN, il, m, m->ffn, emb);
		*expert_bytes = 0;
	}
	return b;
}

void plan_weights_release(plan_weights *w)
{
	free(w->layer_bytes);
	free(w->layer_expert_bytes);
	memset(w, 0, sizeof *w);
}

static bool same_quant(const char *a, const char *b)
{
	char x[32], y[32];
	lower_copy(a, x, sizeof x);
	lower_copy(b, y, sizeof y);
	for (char *p = x; *p; p++)
		if (*p == '-')
			*p = '_';
	for (char *p = y; *p; p++)
		if (*p == '-')
			*p = '_';
	return !strcmp(x, y);
}

int plan_weights_get(const model_desc *m, const char *quant, plan_weights *w, gw_error *err)
{
	memset(w, 0, sizeof *w);
	if (m->n_layers == 0 || m->n_layers > 100000)
		return gw_fail(err, GW_EINVAL, "the model has no layer count (give --layers)");
	w->n_layers = m->n_layers;
	w->layer_bytes = xcalloc(m->n_layers, sizeof *w->layer_bytes);
	w->layer_expert_bytes = xcalloc(m->n_layers, sizeof *w->layer_expert_bytes);

	bool use_file = m->has_tensors && m->layer_bytes &&
			(!quant || !*quant || (m->file_type && same_quant(quant, m->file_type)));
	if (use_file) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < m->n_layers; i++) {
			w->layer_bytes[i] = m->layer_bytes[i];
			if (m->layer_expert_bytes)
				w->layer_expert_bytes[i] = m->layer_expert_bytes[i];
			sum += m->layer_bytes[i];
		}
		w->embd_bytes = m->embd_bytes;
		/* A tied output reuses token_embd; llama.cpp loads a second copy
		 * of it as the output layer (TENSOR_DUPLICATED). */
		w->output_bytes = m->output_bytes + (m->tied_embeddings ? m->embd_bytes : 0);
		w->other_bytes = m->other_bytes;
		w->total_bytes = m->total_bytes ? m->total_bytes
						: sum + m->embd_bytes + m->output_bytes + m->other_bytes;
		w->params = m->params_total;
		w->exact = true;
		snprintf(w->quant, sizeof w->quant, "%s", m->file_type ? m->file_type : "file");
		return 0;
	}
	if (!m->hidden || !m->n_heads || !m->vocab || (!m->ffn && !m->expert_ffn)) {
		plan_weights_release(w);
		return gw_fail(err, GW_EINVAL,
			       "the model lacks the shape needed to estimate its weights "
			       "(hidden size, heads, FFN size, vocabulary)");
	}
	est e;
	int rc = setup_est(&e, quant && *quant ? quant : m->default_quant ? m->default_quant : "q4_k_m", w->quant,
			   sizeof w->quant, err);
	if (rc) {
		plan_weights_release(w);
		return rc;
	}
	w->n_layers = m->n_layers;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		w->layer_bytes[i] = block_bytes(&e, m, i, &w->layer_expert_bytes[i]);
		sum += w->layer_bytes[i];
	}
	double layer_params = e.params;
	/* token_embd: with no separate output tensor it takes the output's type. */
	w->embd_bytes = tensor_bytes(&e, m->tied_embeddings ? T_OUTPUT : T_EMBD, 0, m, m->hidden,
				     m->vocab);
	uint64_t out_norm = tensor_bytes(&e, T_NORM, 0, m, m->hidden, 1);
	if (m->tied_embeddings) {
		w->output_bytes = w->embd_bytes + out_norm;
		w->total_bytes = sum + w->embd_bytes + out_norm;
	} else {
		w->output_bytes = tensor_bytes(&e, T_OUTPUT, 0, m, m->hidden, m->vocab) + out_norm;
		w->total_bytes = sum + w->embd_bytes + w->output_bytes;
	}
	if (e.rc) {
		rc = e.rc;
		plan_weights_release(w);
		return rc;
	}
	(void)layer_params;
	w->params = e.params;
	w->exact = false;
	return 0;
}

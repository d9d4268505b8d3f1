/*
 * lgraph.c: llama.cpp's worst-case compute graph for a model, built node
 * for node on shapes (gsim.h), and the compute buffer ggml's allocator
 * reserves for it.
 *
 * The graph is the one llama.cpp reserves at context creation: a ubatch of
 * T = min(n_ubatch, cells) tokens, all of them outputs, attending over the
 * whole cache (cells; the sliding-window cache for SWA layers).  Node order
 * follows llama.cpp 0c1e570's graph builders (src/models/ARCH.cpp and
 * src/llama-graph.cpp: build_inp_embd, build_attn, build_attn_mha,
 * build_ffn, build_moe_ffn, build_rs / the SSM layers): which tensors each
 * creates, from which sources, in which order it expands them.  Checked
 * node for node against the graph llama.cpp prints with GGML_SCHED_DEBUG=2
 * and by buffer size against its log (tests/oracle/llamacpp_oracle.py).
 */
#include "plan/lgraph.h"
#include "plan/gsim.h"

#include <stdlib.h>
#include <string.h>

typedef struct lb {
	gsim *g;
	const model_desc *m;
	const lgraph_params *p;
	int64_t T, E;
	/* inputs, created when first needed */
	gs_t pos, out_ids, s_copy;
	gs_t k_idxs[2], v_idxs[2], mask[2], k_rot[2], v_rot[2]; /* [0] full cache, [1] sliding window */
	bool iswa;
	/* the transposed V cache's row width when it is wider than some
	 * layers' V (llama_kv_cache: n_embd_v_gqa_max() for every layer
	 * without flash attention; cpy_v pads V to it); 0: each layer's own */
	int64_t v_trans_max;
	uint32_t il; /* the block being built (devices: gs_set_device) */
	bool pin_norms; /* several devices, all layers offloaded (or T < 32) */
} lb;

enum arch_kind { A_QWEN3NEXT, A_QWEN35, A_NEMOTRON_H, A_FALCON_H1, A_COHERE2, A_COHERE2MOE, A_GEMMA3N, A_GEMMA4, A_LLAMA, A_QWEN2, A_QWEN3, A_GEMMA2, A_GEMMA3, A_OLMO2, A_QWEN3MOE, A_SMALLTHINKER,
		 A_DEEPSEEK2, A_MAMBA, A_MAMBA2, A_GRANITEHYBRID, A_LFM2, A_JAMBA, A_GPTOSS, A_LLAMA4, A_PHI3,
		 A_UNKNOWN };

/* Variants of the decoder graph an architecture adds to its kind. */
enum {
	V_QKV_BIAS = 1,      /* biases on Q, K and V (Qwen2, Qwen2-MoE) */
	V_SHEXP_GATE = 2,    /* the shared expert scaled by sigmoid(x . w) (Qwen2-MoE) */
	V_NO_NORM_W = 4,     /* the chosen experts' weights not renormalised */
	V_LAYERNORM = 8,     /* LayerNorm with bias instead of RMSNorm (StarCoder2) */
	V_OUT_BIAS = 16,     /* biases on the attention output and the FFN (StarCoder2) */
	V_QKNORM = 32,       /* per-head Q and K RMS norms */
	V_QKNORM_FULL = 64,  /* Q and K RMS norms over all heads, before the reshape (OLMoE) */
	V_RELU2 = 128,       /* the ungated FFN's activation is ReLU then square (Arcee) */
	V_POSTNORM = 256,    /* norms after the attention and the FFN too (GLM-4) */
	V_FUSED_UP = 512,    /* one up projection of 2 x n_ff split by the SwiGLU (GLM-4) */
	V_MOE_BIAS = 1024,   /* expert selection on probabilities + exp_probs_b, weights renormalised (LFM2-MoE) */
	V_FUSED_QKV = 2048,  /* one QKV projection, Q, K and V views of it (build_qkv with wqkv) */
	V_ATTN_GATE = 4096,  /* the attention output times sigmoid(x . W_gate), NoPE every 4th layer (AFMoE) */
	V_DSA = 8192,        /* DeepSeek sparse attention: the lightning indexer's top-k unmasks the KQ mask */
	V_RMS_BIAS = 16384,  /* RMS norms with a bias added after the weight (PhiMoE's build_norm with _b) */
	V_Q_SCALE = 32768,   /* Q scaled by 1/sqrt(head size) after RoPE (phi3.cpp's graph) */
	V_LOGIT_BIAS = 65536, /* a bias on the output projection (output.bias) */
	V_RES_FIRST = 131072, /* the block output is residual + FFN, in that order (phi3.cpp) */
};

static const struct kind_row {
	const char *name;
	int k; /* enum arch_kind */
	unsigned v;
	const char *src;
} kinds[] = {
	{"seed_oss", 0 /* A_LLAMA */, 0, "src/models/seed-oss.cpp"},
	{"exaone", 0, 0, "src/models/exaone.cpp"},
	{"arcee", 0, V_RELU2, "src/models/arcee.cpp"},
	{"ernie4_5", 0, 0, "src/models/ernie4-5.cpp"},
	{"smollm3", 0, 0, "src/models/smollm3.cpp"},
	{"granite", 0, 0, "src/models/granite.cpp"},
	{"granitemoe", 0, 0, "src/models/granite.cpp (llm_build_granite, the MoE branch)"},
	{"mistral4", -1 /* A_DEEPSEEK2 */, 0, "src/models/mistral4.cpp (deepseek2's graph)"},
	{"deepseek32", -1, V_DSA, "src/models/deepseek32.cpp (deepseek2's graph + lightning indexer)"},
	{"starcoder2", 0, V_LAYERNORM | V_OUT_BIAS, "src/models/starcoder2.cpp"},
	{"qwen2moe", -2 /* A_QWEN2 */, V_SHEXP_GATE | V_NO_NORM_W | V_QKV_BIAS, "src/models/qwen2moe.cpp"},
	{"olmoe", 0, V_NO_NORM_W | V_QKNORM_FULL, "src/models/olmoe.cpp"},
	{"hunyuan-dense", 0, V_QKNORM, "src/models/hunyuan-dense.cpp"},
	{"hunyuan-moe", 0, V_QKNORM, "src/models/hunyuan-moe.cpp"},
	{"phimoe", 0, V_RMS_BIAS | V_OUT_BIAS | V_Q_SCALE | V_LOGIT_BIAS | V_RES_FIRST,
	 "src/models/phimoe.cpp (llama_model_phi3::graph: separate Q/K/V, build_moe_ffn)"},
	{"glm4", 0, V_POSTNORM | V_FUSED_UP, "src/models/glm4.cpp"},
	{"exaone4", -3 /* A_OLMO2 */, V_QKNORM, "src/models/exaone4.cpp (post-norm only, per-head QK norms)"},
	{"lfm2moe", -4 /* A_LFM2 */, V_MOE_BIAS, "src/models/lfm2moe.cpp, lfm2.cpp build_moe_ffn"},
	{"ernie4_5-moe", 0, 0, "src/models/ernie4-5-moe.cpp"},
	{"afmoe", -1, V_ATTN_GATE | V_QKNORM | V_POSTNORM, "src/models/afmoe.cpp"},
	{"bailingmoe2", -1, V_FUSED_QKV | V_QKNORM, "src/models/bailingmoe2.cpp"},
	{"glm4moe", -1, 0, "src/models/glm4-moe.cpp (deepseek2's router: sigmoid, exp_probs_b)"},
};

static unsigned variant_of(const char *a)
{
	for (size_t i = 0; a && i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(a, kinds[i].name))
			return kinds[i].v;
	if (a && (!strcmp(a, "qwen2")))
		return V_QKV_BIAS;
	return 0;
}

static enum arch_kind kind_of(const char *a)
{
	static const struct {
		const char *name;
		enum arch_kind k;
	} t[] = {
		{"llama", A_LLAMA},	  {"mistral3", A_LLAMA},     {"qwen2", A_QWEN2},
		{"qwen3", A_QWEN3},	  {"gemma2", A_GEMMA2},	     {"gemma3", A_GEMMA3},
		{"olmo2", A_OLMO2},	  {"olmo3", A_OLMO2},	     {"qwen3moe", A_QWEN3MOE},
		{"smallthinker", A_SMALLTHINKER}, {"deepseek2", A_DEEPSEEK2},
		{"mamba", A_MAMBA},	  {"mamba2", A_MAMBA2},	     {"granitehybrid", A_GRANITEHYBRID},
		{"lfm2", A_LFM2},	  {"jamba", A_JAMBA},	     {"nemotron_h", A_NEMOTRON_H}, {"falcon-h1", A_FALCON_H1},
		{"cohere2", A_COHERE2},	  {"qwen3next", A_QWEN3NEXT}, {"qwen35", A_QWEN35}, {"qwen35moe", A_QWEN35},	  {"cohere2moe", A_COHERE2MOE}, {"gemma3n", A_GEMMA3N}, {"gemma4", A_GEMMA4},
		{"gpt-oss", A_GPTOSS},	  {"llama4", A_LLAMA4},	     {"phi3", A_PHI3},
	};
	for (size_t i = 0; a && i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(a, t[i].name))
			return t[i].k;
	for (size_t i = 0; a && i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(a, kinds[i].name))
			return kinds[i].k == -1 ? A_DEEPSEEK2 : kinds[i].k == -2 ? A_QWEN2 : kinds[i].k == -3 ? A_OLMO2
			       : kinds[i].k == -4 ? A_LFM2 : A_LLAMA;
	return A_UNKNOWN;
}

static gs_type kv_gs_type(plan_kv_type t)
{
	switch (t) {
	case PLAN_KV_F32: return GS_F32;
	case PLAN_KV_BF16: return GS_BF16;
	case PLAN_KV_Q8_0: return GS_Q8_0;
	case PLAN_KV_Q5_1: return GS_Q5_1;
	case PLAN_KV_Q5_0: return GS_Q5_0;
	case PLAN_KV_Q4_1: return GS_Q4_1;
	case PLAN_KV_Q4_0: return GS_Q4_0;
	case PLAN_KV_IQ4_NL: return GS_IQ4_NL;
	default: return GS_F16;
	}
}

static bool quantized(plan_kv_type t)
{
	return t != PLAN_KV_F16 && t != PLAN_KV_BF16 && t != PLAN_KV_F32;
}

static uint32_t kv_heads(const model_desc *m, uint32_t il)
{
	return m->layer_kv_heads ? m->layer_kv_heads[il] : m->n_kv_heads;
}

static bool is_swa(const model_desc *m, uint32_t il)
{
	return m->swa_window && m->layer_swa && m->layer_swa[il];
}

/* x rotated by a Hadamard matrix (llama_mul_mat_hadamard): the rows
 * regrouped by the matrix width, multiplied, reshaped back. */
/* ggml_is_contiguous (f32 tensors) */
static bool contiguous(const gsim *g, gs_t x)
{
	return gs_nb(g, x, 1) == gs_nb(g, x, 0) * (size_t)gs_ne(g, x, 0) &&
	       gs_nb(g, x, 2) == gs_nb(g, x, 1) * (size_t)gs_ne(g, x, 1) &&
	       gs_nb(g, x, 3) == gs_nb(g, x, 2) * (size_t)gs_ne(g, x, 2);
}

static gs_t hadamard(lb *b, gs_t x, gs_t rot)
{
	gsim *g = b->g;
	int64_t n = gs_ne(g, rot, 0);
	int64_t all = gs_ne(g, x, 0) * gs_ne(g, x, 1) * gs_ne(g, x, 2) * gs_ne(g, x, 3);
	/* a view into a fused QKV projection is copied out first */
	gs_t r = contiguous(g, x) ? gs_reshape(g, x, n, all / n, 1, 1)
				  : gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){n, all / n, 1, 1}, x, -1, -1, -1);
	r = gs_mul_mat(g, rot, r);
	return gs_reshape(g, r, gs_ne(g, x, 0), gs_ne(g, x, 1), gs_ne(g, x, 2), gs_ne(g, x, 3));
}

static gs_t norm(lb *b, gs_t x, gs_t w)
{
	gs_t r = gs_unop(b->g, GS_RMS_NORM, x);
	/* llama.cpp pins a block's weighted norms ("norm") to the block's
	 * device when every layer is offloaded or the batch is under 32
	 * tokens (llama_context::graph_get_cb), so that a block's first op
	 * does not run on the previous block's device */
	if (w >= 0 && b->pin_norms && b->il < b->m->n_layers)
		gs_pin(b->g, r, b->p->layer_dev[b->il]);
	return w >= 0 ? gs_binop(b->g, GS_MUL, r, w) : r;
}

static gs_t weight(lb *b, int64_t ne0, int64_t ne1);

/* LayerNorm with weight and bias (build_norm LLM_NORM) */
static gs_t layer_norm(lb *b, gs_t x)
{
	gs_t r = gs_unop(b->g, GS_NORM, x);
	r = gs_binop(b->g, GS_MUL, r, weight(b, b->E, 1));
	return gs_binop(b->g, GS_ADD, r, weight(b, b->E, 1));
}

static gs_t weight(lb *b, int64_t ne0, int64_t ne1)
{
	return gs_external(b->g, GS_F16, ne0, ne1, 1, 1);
}

/* A block's (or the output's) norm of x [E, T] as the architecture's
 * build_norm calls it: LayerNorm, RMS norm with a bias, or RMS norm. */
static gs_t block_norm(lb *b, gs_t x)
{
	unsigned v = variant_of(b->m->arch);
	if (v & V_LAYERNORM)
		return layer_norm(b, x);
	gs_t r = norm(b, x, weight(b, b->E, 1));
	return v & V_RMS_BIAS ? gs_binop(b->g, GS_ADD, r, weight(b, b->E, 1)) : r;
}

/* Devices (lgraph_params.layer_dev): the weights and caches made from
 * here on belong to block il's device (il = n_layers: the output layer;
 * -1: the CPU, where the token embedding stays). */
static void layer_begin(lb *b, int64_t il)
{
	if (il >= 0)
		b->il = (uint32_t)il;
	if (!b->p->layer_dev)
		return;
	gs_set_device(b->g, il < 0 ? b->p->n_dev - 1 : b->p->layer_dev[il]);
}

/* The experts of the first n_cpu_moe blocks stay in host memory
 * (llama.cpp --n-cpu-moe: ffn_(up|down|gate)_exps of those blocks,
 * biases included, overridden to the CPU buffer). */
static void experts_begin(lb *b, bool on)
{
	if (!b->p->layer_dev || b->il >= b->p->n_cpu_moe)
		return;
	gs_set_device(b->g, on ? b->p->n_dev - 1 : b->p->layer_dev[b->il]);
}

static gs_t mm(lb *b, int64_t out, gs_t x)
{
	return gs_mul_mat(b->g, weight(b, gs_ne(b->g, x, 0), out), x);
}

/* The attention inputs of cache s (0 full, 1 sliding window), made when
 * first used so that leaf order follows llama.cpp's. */
static uint64_t cache_cells(const lb *b, int s)
{
	if (s == 0)
		return b->p->cells;
	if (b->p->swa_cells)
		return b->p->swa_cells < b->p->cells ? b->p->swa_cells : b->p->cells;
	/* a stream per sequence holds one window; a unified one n_seq */
	uint64_t per = b->p->n_stream > 1 ? 1 : (b->p->n_seq ? b->p->n_seq : 1);
	uint64_t c = (uint64_t)b->m->swa_window * per + (uint64_t)b->T;
	c = (c + 255) / 256 * 256;
	return c < b->p->cells ? c : b->p->cells;
}

/*
 * Attention with the KV cache (build_attn): q [hd, H, T], k and v
 * [hd, Hkv, T] after RoPE; returns the output projection's input
 * [hv*H, T] ready for wo.
 */
static gs_t attention(lb *b, uint32_t il, gs_t q, gs_t k, gs_t v, bool softcap)
{
	gsim *g = b->g;
	const lgraph_params *p = b->p;
	int s = is_swa(b->m, il) ? 1 : 0;
	/* k < 0: the layer reads an earlier layer's cache and stores nothing
	 * (Gemma 3n's layers from n_layer_kv_from_start on) */
	bool reuse = k < 0;
	int64_t hk = gs_ne(g, q, 0), hv = hk, nkv = b->m->n_kv_heads, H = gs_ne(g, q, 1);
	if (!reuse) {
		hk = gs_ne(g, k, 0);
		hv = gs_ne(g, v, 0);
		nkv = gs_ne(g, k, 1);
	}
	int64_t cells = (int64_t)cache_cells(b, s);
	bool v_trans = !p->flash_attn;

	/* llama.cpp rotates only head sizes that are multiples of 64 (attn_rot_k/_v),
	 * K by the largest power of two dividing the head size, V by 64 */
	bool rot_k = quantized(p->kv_k) && hk % 64 == 0, rot_v = quantized(p->kv_v) && hv % 64 == 0;
	if (rot_k) {
		int64_t nrot = 64;
		while (hk % (2 * nrot) == 0)
			nrot *= 2;
		if (b->k_rot[s] < 0)
			b->k_rot[s] = gs_input(g, GS_F32, nrot, nrot, 1, 1);
		q = hadamard(b, q, b->k_rot[s]);
		if (!reuse)
			k = hadamard(b, k, b->k_rot[s]);
	}
	if (rot_v) {
		if (b->v_rot[s] < 0)
			b->v_rot[s] = gs_input(g, GS_F32, 64, 64, 1, 1);
		if (!reuse)
			v = hadamard(b, v, b->v_rot[s]);
	}
	gs_expand(g, q);
	int64_t vrow = v_trans && b->v_trans_max > hv * nkv ? b->v_trans_max : hv * nkv;
	gs_t kc = gs_external(g, kv_gs_type(p->kv_k), hk * nkv, cells, 1, 1);
	gs_t vc = gs_external(g, kv_gs_type(p->kv_v), vrow, cells, 1, 1);
	gs_mark_cache(g, kc);
	gs_mark_cache(g, vc);
	if (reuse) {
		/* nothing to store */
	} else if (b->iswa) {
		gs_expand(g, k);
		gs_expand(g, v);
	} else {
		gs_expand(g, v);
		gs_expand(g, k);
	}
	/* store to the cache */
	if (!reuse) {
		if (b->k_idxs[s] < 0)
			b->k_idxs[s] = gs_input(g, GS_I64, b->T, 1, 1, 1);
		gs_expand(g, gs_set_rows(g, kc, gs_reshape(g, k, hk * nkv, b->T, 1, 1), b->k_idxs[s]));
		if (b->v_idxs[s] < 0)
			b->v_idxs[s] = gs_input(g, GS_I64, v_trans ? b->T * vrow : b->T, 1, 1, 1);
		if (v_trans) {
			/* V as a view of a fused QKV projection is copied out first */
			gs_t vc2 = contiguous(g, v) ? v
						    : gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){hv * nkv, b->T, 1, 1}, v, -1, -1, -1);
			if (vrow > hv * nkv) /* ggml_pad */
				vc2 = gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){vrow, b->T, 1, 1}, vc2, -1, -1, -1);
			gs_t vv = gs_reshape(g, vc2, 1, vrow * b->T, 1, 1);
			gs_expand(g, gs_set_rows(g, gs_reshape(g, vc, 1, vrow * cells, 1, 1), vv, b->v_idxs[s]));
		} else {
			gs_expand(g, gs_set_rows(g, vc, gs_reshape(g, v, hv * nkv, b->T, 1, 1), b->v_idxs[s]));
		}
	}
	if (b->mask[s] < 0)
		b->mask[s] = gs_input(g, p->flash_attn ? GS_F16 : GS_F32, cells, b->T, 1, 1);
	gs_t mask = b->mask[s];

	/* build_attn_mha */
	gs_t kview = gs_view(g, kc, hk, nkv, cells, 1, gs_row_size(kv_gs_type(p->kv_k), hk),
			     gs_row_size(kv_gs_type(p->kv_k), hk * nkv), gs_row_size(kv_gs_type(p->kv_k), hk * nkv) * cells, 0);
	/* transposed V: [cells, Hkv, hv], which the permute turns to [cells, hv, Hkv] */
	gs_t vview = v_trans ? gs_view(g, vc, cells, nkv, hv, 1, gs_nb(g, vc, 0) * cells * hv, gs_nb(g, vc, 0) * cells,
				       gs_nb(g, vc, 0) * cells * vrow, 0)
			     : gs_view(g, vc, hv, nkv, cells, 1, gs_row_size(kv_gs_type(p->kv_v), hv),
				       gs_row_size(kv_gs_type(p->kv_v), hv * nkv),
				       gs_row_size(kv_gs_type(p->kv_v), hv * nkv) * cells, 0);
	gs_t qv = gs_view(g, q, gs_ne(g, q, 0), H, b->T, 1, gs_nb(g, q, 1), gs_nb(g, q, 2), gs_nb(g, q, 3), 0);
	qv = gs_permute(g, qv, 0, 2, 1, 3);
	kview = gs_permute(g, kview, 0, 2, 1, 3);
	vview = gs_permute(g, vview, 0, 2, 1, 3);
	gs_t cur;
	if (p->flash_attn) {
		cur = gs_flash_attn(g, qv, kview, vview, mask);
		cur = gs_reshape(g, cur, gs_ne(g, cur, 0) * gs_ne(g, cur, 1), gs_ne(g, cur, 2) * gs_ne(g, cur, 3), 1, 1);
	} else {
		gs_t kq = gs_mul_mat(g, kview, qv);
		if (softcap) {
			kq = gs_unop(g, GS_SCALE, kq);
			kq = gs_unop(g, GS_UNARY, kq);
			kq = gs_unop(g, GS_SCALE, kq);
		}
		kq = gs_binop(g, GS_SOFT_MAX, kq, mask);
		gs_t kqv = gs_mul_mat(g, vview, kq);
		cur = gs_permute(g, kqv, 0, 2, 1, 3);
		cur = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){hv * H, b->T, 1, 1}, cur, -1, -1, -1);
	}
	gs_expand(g, cur);
	if (rot_v)
		cur = hadamard(b, cur, b->v_rot[s]);
	(void)H;
	return cur;
}

static gs_t rope(lb *b, gs_t x)
{
	/* M-RoPE / interleaved M-RoPE (Qwen3.5: LLAMA_ROPE_TYPE_IMROPE) carry
	 * 4 positions per token (llama_hparams::n_pos_per_embd) */
	if (b->pos < 0)
		b->pos = gs_input(b->g, GS_I32, b->T * (kind_of(b->m->arch) == A_QWEN35 ? 4 : 1), 1, 1, 1);
	return gs_binop(b->g, GS_ROPE, x, b->pos);
}

static gs_t ffn_glu(lb *b, gs_t x, int64_t ff)
{
	gsim *g = b->g;
	if (b->m->ffn_ungated) {
		/* build_ffn LLM_FFN_SEQ without a gate: up (+ bias), the
		 * activation, down (+ bias) -- StarCoder2's GELU */
		bool bias = variant_of(b->m->arch) & V_OUT_BIAS;
		gs_t up = mm(b, ff, x);
		if (bias)
			up = gs_binop(g, GS_ADD, up, weight(b, ff, 1));
		up = gs_unop(g, GS_UNARY, up);
		if (variant_of(b->m->arch) & V_RELU2)
			up = gs_unop(g, GS_SQR, up);
		gs_t down = mm(b, b->E, up);
		return bias ? gs_binop(g, GS_ADD, down, weight(b, b->E, 1)) : down;
	}
	gs_t gate = mm(b, ff, x), up = mm(b, ff, x);
	gs_t act = gs_op4(g, GS_GLU, GS_F32, (int64_t[4]){ff, gs_ne(g, x, 1), 1, 1}, gate, up, -1, -1);
	return mm(b, b->E, act);
}

/* Is block il a MoE block (else a dense feed-forward)? */
static bool moe_layer(const model_desc *m, uint32_t il)
{
	if (!m->n_experts)
		return false;
	if (m->layer_expert_bytes && m->has_tensors)
		return m->layer_expert_bytes[il] != 0;
	return il >= m->n_dense_lead;
}

enum moe_gating { MOE_SOFTMAX, MOE_SIGMOID, MOE_SOFTMAX_CHOSEN };

typedef struct moe_opts {
	enum moe_gating gating;
	bool router_bias;   /* a bias on the router logits (gpt-oss) */
	bool select_logits; /* top-k on the raw logits (Llama 4) */
	bool expert_bias;   /* ADD_ID of a per-expert bias after each projection (gpt-oss) */
	bool weight_first;  /* the input scaled by the router weight before the experts (Llama 4) */
	bool select_bias;   /* a bias added to the probabilities top-k picks from (DeepSeek's exp_probs_b) */
	bool norm_w;        /* the chosen experts' weights renormalised to sum to 1 */
} moe_opts;

/*
 * build_moe_ffn: the router (logits given, or computed from x), top-k
 * experts by argsort, their weights (renormalised when the model says
 * so), the chosen experts' gate/up/down as MUL_MAT_ID, weighted, and
 * summed one view at a time; with the options gpt-oss and Llama 4 use:
 * biases on the router and on every expert projection, softmax over the
 * chosen experts only, sigmoid weights applied to the input.
 */
static gs_t moe_ffn_opts(lb *b, gs_t x, gs_t logits, const moe_opts *o)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t X = m->n_experts, k = m->n_experts_used ? m->n_experts_used : 1, T = gs_ne(g, x, 1);
	int64_t fe = m->expert_ffn ? m->expert_ffn : m->ffn, E = b->E;
	if (logits < 0)
		logits = gs_mul_mat(g, gs_external(g, GS_F32, E, X, 1, 1), x);
	if (o->router_bias)
		logits = gs_binop(g, GS_ADD, logits, gs_external(g, GS_F32, X, 1, 1, 1));
	gs_t probs = o->gating == MOE_SOFTMAX	? gs_binop(g, GS_SOFT_MAX, logits, -1)
		     : o->gating == MOE_SIGMOID ? gs_unop(g, GS_UNARY, logits)
						: logits;
	gs_t sel = o->select_logits ? logits : probs;
	if (o->select_bias)
		sel = gs_binop(g, GS_ADD, sel, gs_external(g, GS_F32, X, 1, 1, 1));
	gs_t order = gs_argsort(g, sel);
	gs_t topk = gs_view(g, order, k, T, 1, 1, gs_nb(g, order, 1), gs_nb(g, order, 1) * T, gs_nb(g, order, 1) * T, 0);
	gs_t w = gs_get_rows(g, gs_reshape(g, probs, 1, X, T, 1), topk);
	if (o->gating == MOE_SOFTMAX_CHOSEN) {
		gs_t w2 = gs_binop(g, GS_SOFT_MAX, gs_reshape(g, w, k, T, 1, 1), -1);
		w = gs_reshape(g, w2, 1, k, T, 1);
	}
	if (o->norm_w) {
		gs_t w2 = gs_reshape(g, w, k, T, 1, 1);
		gs_t sum = gs_unop(g, GS_CLAMP, gs_sum_rows(g, w2));
		w2 = gs_binop(g, GS_DIV, w2, sum);
		w = gs_reshape(g, w2, 1, k, T, 1);
	}
	gs_expand(g, w);
	gs_t x3 = gs_reshape(g, x, E, 1, T, 1);
	if (o->weight_first) {
		gs_t rep = gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){E, k, T, 1}, x3, -1, -1, -1); /* ggml_repeat_4d */
		x3 = gs_binop(g, GS_MUL, rep, w);
	}
	experts_begin(b, true);
	gs_t up = gs_mul_mat_id(g, gs_external(g, GS_F16, E, fe, X, 1), x3, topk);
	if (o->expert_bias)
		up = gs_op4(g, GS_ADD_ID, GS_F32, (int64_t[4]){fe, k, T, 1}, up, gs_external(g, GS_F32, fe, X, 1, 1), topk, -1);
	gs_t act;
	if (m->expert_ungated) {
		/* no ffn_gate_exps in the file: the activation of up alone */
		act = gs_unop(g, GS_UNARY, up);
	} else {
		gs_t gate = gs_mul_mat_id(g, gs_external(g, GS_F16, E, fe, X, 1), x3, topk);
		if (o->expert_bias)
			gate = gs_op4(g, GS_ADD_ID, GS_F32, (int64_t[4]){fe, k, T, 1}, gate,
				      gs_external(g, GS_F32, fe, X, 1, 1), topk, -1);
		act = gs_op4(g, GS_GLU, GS_F32, (int64_t[4]){fe, k, T, 1}, gate, up, -1, -1);
	}
	gs_t ex = gs_mul_mat_id(g, gs_external(g, GS_F16, fe, E, X, 1), act, topk);
	if (o->expert_bias)
		ex = gs_op4(g, GS_ADD_ID, GS_F32, (int64_t[4]){E, k, T, 1}, ex, gs_external(g, GS_F32, E, X, 1, 1), topk, -1);
	experts_begin(b, false);
	if (!o->weight_first)
		ex = gs_binop(g, GS_MUL, ex, w);
	gs_expand(g, ex);
	gs_t v[64];
	int64_t kk = k < 64 ? k : 64;
	for (int64_t i = 0; i < kk; i++) {
		v[i] = gs_view(g, ex, E, T, 1, 1, gs_nb(g, ex, 2), gs_nb(g, ex, 2) * T, gs_nb(g, ex, 2) * T,
			       (size_t)i * gs_nb(g, ex, 1));
		gs_expand(g, v[i]);
	}
	gs_t out = v[0];
	for (int64_t i = 1; i < kk; i++) {
		out = gs_binop(g, GS_ADD, out, v[i]);
		gs_expand(g, out);
	}
	if (kk == 1)
		out = gs_unop(g, GS_CONT, out);
	return out;
}

/* The common case: softmax (or the model's sigmoid) gating, an optional
 * selection bias, weights renormalised or not. */
static gs_t moe_ffn(lb *b, gs_t x, gs_t logits, bool bias, bool norm_w)
{
	moe_opts o = {.gating = b->m->expert_gating == 2 ? MOE_SIGMOID : MOE_SOFTMAX, .select_bias = bias,
		      .norm_w = norm_w};
	return moe_ffn_opts(b, x, logits, &o);
}

/* DeepSeek-V3.2's lightning indexer (src/models/deepseek32.cpp, the
 * fused ggml_lightning_indexer, which llama.cpp enables where the backend
 * runs it, as the CPU one does; the unfused path is not built): indexer
 * Q from the Q latent qr, one key head from the block input, both
 * roped and rotated (Hadamard), the key stored in the indexer cache;
 * scores [cells, T] and their top-k cells (i32). */
static gs_t lightning_indexer(lb *b, gs_t qr, gs_t cur, gs_type kt)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, IH = m->indexer_heads, ID = m->indexer_key_len;
	int64_t cells = (int64_t)b->p->cells;
	gs_t iq = mm(b, IH * ID, qr);
	iq = rope(b, gs_reshape(g, iq, ID, IH, T, 1));
	gs_t ik = mm(b, ID, cur);
	ik = gs_unop(g, GS_NORM, ik);
	ik = gs_binop(g, GS_MUL, ik, weight(b, ID, 1));
	ik = gs_binop(g, GS_ADD, ik, weight(b, ID, 1));
	ik = rope(b, gs_reshape(g, ik, ID, 1, T, 1));
	if (b->k_rot[1] < 0) /* the indexer's own inputs (the sliding slot is unused here) */
		b->k_rot[1] = gs_input(g, GS_F32, ID, ID, 1, 1);
	iq = gs_mul_mat(g, b->k_rot[1], iq);
	ik = gs_mul_mat(g, b->k_rot[1], ik);
	gs_t kc = gs_external(g, kt, ID, cells, 1, 1);
	gs_mark_cache(g, kc);
	if (b->k_idxs[1] < 0)
		b->k_idxs[1] = gs_input(g, GS_I64, T, 1, 1, 1);
	gs_expand(g, gs_set_rows(g, kc, gs_reshape(g, ik, ID, T, 1, 1), b->k_idxs[1]));
	gs_t w = mm(b, IH, cur);
	size_t rk = gs_row_size(kt, ID);
	gs_t kview = gs_view(g, kc, ID, 1, cells, 1, rk, rk, rk * cells, 0);
	w = gs_unop(g, GS_SCALE, gs_view(g, w, IH, T, 1, 1, gs_nb(g, w, 1), gs_nb(g, w, 1) * T, gs_nb(g, w, 1) * T, 0));
	if (b->mask[1] < 0)
		b->mask[1] = gs_input(g, GS_F16, cells, T, 1, 1);
	gs_t score = gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){cells, T, 1, 1}, iq, kview, w, b->mask[1]);
	int64_t nk = m->indexer_top_k && m->indexer_top_k < cells ? m->indexer_top_k : cells;
	gs_t top = gs_op4(g, GS_OTHER, GS_I32, (int64_t[4]){nk, T, 1, 1}, score, -1, -1, -1);
	return gs_unop(g, GS_CONT, top);
}

/* Multi-head latent attention (DeepSeek-V2/V3, Kimi K2) with the
 * absorbed K projection: the cache holds the compressed latent and the
 * rotary part, K only; returns the input of wo. */
static gs_t mla_attention(lb *b, uint32_t il, gs_t cur)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	const lgraph_params *p = b->p;
	int64_t T = b->T, H = m->n_heads;
	int64_t rope_d = m->n_rot ? m->n_rot : 64;
	int64_t kv_lora = (int64_t)m->head_dim_k - rope_d;       /* 512 */
	int64_t qk_head = m->mla_head_dim_k ? m->mla_head_dim_k : 192;
	int64_t nope = qk_head - rope_d, vh = m->mla_head_dim_v ? m->mla_head_dim_v : 128;
	int64_t cells = (int64_t)p->cells;
	(void)il;

	gs_t q, top_k = -1;
	gs_type kt = kv_gs_type(p->kv_k);
	if (m->q_lora_rank) {
		q = mm(b, m->q_lora_rank, cur);
		q = norm(b, q, weight(b, m->q_lora_rank, 1));
		if (variant_of(m->arch) & V_DSA)
			top_k = lightning_indexer(b, q, cur, kt);
		q = mm(b, H * qk_head, q);
	} else {
		q = mm(b, H * qk_head, cur);
	}
	size_t qnb1 = gs_row_size(GS_F32, qk_head), qnb2 = qnb1 * H;
	gs_t q_nope = gs_view(g, q, nope, H, T, 1, qnb1, qnb2, qnb2 * T, 0);
	gs_t q_pe = gs_view(g, q, rope_d, H, T, 1, qnb1, qnb2, qnb2 * T, gs_row_size(GS_F32, nope));
	gs_t qn = gs_permute(g, q_nope, 0, 2, 1, 3);
	gs_t absorbed = gs_mul_mat(g, gs_external(g, GS_F16, nope, kv_lora, H, 1), qn);
	absorbed = gs_permute(g, absorbed, 0, 2, 1, 3);
	q_pe = rope(b, q_pe);
	gs_t Q = gs_concat(g, absorbed, q_pe, 0);

	gs_t kvp = mm(b, kv_lora + rope_d, cur);
	size_t knb1 = gs_nb(g, kvp, 1);
	gs_t kv_cmpr = gs_view(g, kvp, kv_lora, T, 1, 1, knb1, knb1 * T, knb1 * T, 0);
	gs_t k_pe = gs_view(g, kvp, rope_d, 1, T, 1, knb1, knb1, knb1 * T, gs_row_size(GS_F32, kv_lora));
	kv_cmpr = norm(b, kv_cmpr, weight(b, kv_lora, 1));
	k_pe = rope(b, k_pe);
	gs_t Vc = gs_reshape(g, kv_cmpr, kv_lora, 1, T, 1);
	gs_t K = gs_concat(g, Vc, k_pe, 0);

	gs_expand(g, Q);
	gs_expand(g, Vc);
	gs_expand(g, K);
	int64_t hk = kv_lora + rope_d;
	gs_t kc = gs_external(g, kt, hk, cells, 1, 1);
	gs_mark_cache(g, kc);
	if (b->k_idxs[0] < 0)
		b->k_idxs[0] = gs_input(g, GS_I64, T, 1, 1, 1);
	gs_expand(g, gs_set_rows(g, kc, gs_reshape(g, K, hk, T, 1, 1), b->k_idxs[0]));
	if (b->mask[0] < 0)
		b->mask[0] = gs_input(g, p->flash_attn ? GS_F16 : GS_F32, cells, T, 1, 1);
	gs_t mask = b->mask[0];
	if (top_k >= 0) {
		/* build_attn (llm_graph_input_attn_k_dsa): a mask filled with
		 * -inf, zeros set at the chosen cells, plus the causal mask */
		gs_type mt = p->flash_attn ? GS_F16 : GS_F32;
		gs_t all = gs_op4(g, GS_FILL, mt, (int64_t[4]){cells, T, 1, 1}, mask, -1, -1, -1);
		size_t e = gs_row_size(mt, 1);
		all = gs_view(g, all, 1, cells, T, 1, e, e * cells, e * cells * T, 0);
		int64_t nk = gs_ne(g, top_k, 0);
		size_t tnb1 = gs_nb(g, top_k, 1);
		gs_t t3 = gs_view(g, top_k, nk, T, 1, 1, tnb1, tnb1 * T, tnb1 * T, 0);
		gs_t zeros = gs_op4(g, GS_NONE, GS_F32, (int64_t[4]){1, nk, T, 1}, -1, -1, -1, -1);
		zeros = gs_op4(g, GS_FILL, GS_F32, (int64_t[4]){1, nk, T, 1}, zeros, -1, -1, -1);
		gs_t sel = gs_set_rows(g, all, zeros, t3);
		sel = gs_view(g, sel, cells, T, 1, 1, e * cells, e * cells * T, e * cells * T, 0);
		mask = gs_op4(g, GS_ADD, mt, (int64_t[4]){cells, T, 1, 1}, sel, b->mask[0], -1, -1);
	}
	size_t rk = gs_row_size(kt, hk);
	gs_t kview = gs_view(g, kc, hk, 1, cells, 1, rk, rk, rk * cells, 0);
	gs_t vview = gs_view(g, kview, kv_lora, 1, cells, 1, rk, rk, rk * cells, 0);
	gs_t qv = gs_view(g, Q, hk, H, T, 1, gs_nb(g, Q, 1), gs_nb(g, Q, 2), gs_nb(g, Q, 3), 0);
	qv = gs_permute(g, qv, 0, 2, 1, 3);
	kview = gs_permute(g, kview, 0, 2, 1, 3);
	vview = gs_permute(g, vview, 0, 2, 1, 3);
	gs_t v_b = gs_external(g, GS_F16, kv_lora, vh, H, 1);
	gs_t out;
	if (p->flash_attn) {
		out = gs_flash_attn(g, qv, kview, vview, mask);
		out = gs_permute(g, out, 0, 2, 1, 3);
		out = gs_mul_mat(g, v_b, out);
		out = gs_permute(g, out, 0, 2, 1, 3);
		out = gs_unop(g, GS_CONT, out);
		out = gs_reshape(g, out, gs_ne(g, out, 0) * gs_ne(g, out, 1), gs_ne(g, out, 2) * gs_ne(g, out, 3), 1, 1);
	} else {
		gs_t kq = gs_mul_mat(g, kview, qv);
		kq = gs_binop(g, GS_SOFT_MAX, kq, mask);
		gs_t vt = gs_transpose(g, vview);
		gs_t vcont = gs_op4(g, GS_CONT, kt == GS_F32 ? GS_F32 : GS_F16, (int64_t[4]){cells, kv_lora, 1, 1}, vt, -1,
				    -1, -1);
		gs_t kqv = gs_mul_mat(g, vcont, kq);
		kqv = gs_mul_mat(g, v_b, kqv);
		out = gs_permute(g, kqv, 0, 2, 1, 3);
		out = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){vh * H, T, 1, 1}, out, -1, -1, -1);
	}
	gs_expand(g, out);
	return out;
}

/* build_inp_embd: the token rows and the embeddings input llama.cpp
 * selects between. */
static gs_t inp_embd(lb *b)
{
	gsim *g = b->g;
	layer_begin(b, -1);
	gs_t tokens = gs_input(g, GS_I32, b->T, 1, 1, 1);
	gs_t x = gs_get_rows(g, gs_external(g, GS_F16, b->E, b->m->vocab, 1, 1), tokens);
	gs_t embd_in = gs_input(g, GS_F32, b->E, b->T, 1, 1);
	gs_expand(g, x);
	gs_expand(g, embd_in);
	return x;
}

static gs_t out_rows(lb *b, gs_t x)
{
	if (b->out_ids < 0)
		b->out_ids = gs_input(b->g, GS_I32, b->T, 1, 1, 1);
	return gs_get_rows(b->g, x, b->out_ids);
}

/* The final norm and the output projection (all outputs); softcap:
 * Gemma 2's final logit soft-capping (scale, tanh, scale in place). */
static gs_t lm_head(lb *b, gs_t x, bool softcap)
{
	gsim *g = b->g;
	layer_begin(b, b->m->n_layers);
	gs_t cur = block_norm(b, x);
	gs_set_output(g, cur);
	cur = gs_mul_mat(g, gs_external(g, GS_F16, b->E, b->m->vocab, 1, 1), cur);
	if (variant_of(b->m->arch) & V_LOGIT_BIAS)
		cur = gs_binop(g, GS_ADD, cur, gs_external(g, GS_F32, b->m->vocab, 1, 1, 1));
	if (softcap) {
		cur = gs_unop(g, GS_SCALE, cur);
		cur = gs_unop(g, GS_UNARY, cur);
		cur = gs_unop(g, GS_SCALE, cur);
	}
	gs_set_output(g, cur);
	gs_expand(g, cur);
	return cur;
}

/* The output head of the builders that select the output rows after the
 * final norm (nemotron-h.cpp, qwen3next.cpp, gemma4.cpp), the logits
 * soft-capped where asked. */
static gs_t lm_head_rows_last(lb *b, gs_t x, bool softcap)
{
	gsim *g = b->g;
	layer_begin(b, b->m->n_layers);
	gs_t cur = norm(b, x, weight(b, b->E, 1));
	gs_set_output(g, cur);
	cur = out_rows(b, cur);
	gs_set_output(g, cur);
	cur = gs_mul_mat(g, gs_external(g, GS_F16, b->E, b->m->vocab, 1, 1), cur);
	if (softcap) {
		cur = gs_unop(g, GS_SCALE, cur);
		cur = gs_unop(g, GS_UNARY, cur);
		cur = gs_unop(g, GS_SCALE, cur);
	}
	gs_set_output(g, cur);
	gs_expand(g, cur);
	return cur;
}

/* Recurrent state of one layer (build_rs): the states of this ubatch's
 * sequences gathered (by rows, or by the scan when scan >= 0 is given),
 * the others copied back; returns what the layer reads. */
static gs_t rs_states(lb *b, gs_t s, int64_t size, gs_t x, gs_t dt, gs_t bm, gs_t cm, bool scan, int64_t ssm_shape[4])
{
	gsim *g = b->g;
	int64_t rs = b->p->n_seq ? b->p->n_seq : 1, n_seqs = 1;
	if (b->s_copy < 0)
		b->s_copy = gs_input(g, GS_I32, rs, 1, 1, 1);
	gs_t main_ids = gs_view(g, b->s_copy, n_seqs, 1, 1, 1, 4 * n_seqs, 4 * n_seqs, 4 * n_seqs, 0);
	gs_t extra_ids = gs_view(g, b->s_copy, rs - n_seqs, 1, 1, 1, 4 * (rs - n_seqs), 4 * (rs - n_seqs),
				 4 * (rs - n_seqs), 4 * (size_t)n_seqs);
	gs_t states = gs_reshape(g, s, size, rs, 1, 1);
	gs_t zero = gs_view(g, states, size, 1, 1, 1, 4 * size, 4 * size, 4 * size, 0);
	gs_expand(g, gs_inplace(g, GS_SCALE, zero));
	gs_t out;
	if (scan) {
		gs_t ssm = gs_reshape(g, states, ssm_shape[0], ssm_shape[1], ssm_shape[2], ssm_shape[3]);
		int64_t n = gs_ne(g, x, 0) * gs_ne(g, x, 1) * gs_ne(g, x, 2) * gs_ne(g, x, 3) +
			    ssm_shape[0] * ssm_shape[1] * ssm_shape[2] * n_seqs;
		gs_t a = gs_external(g, GS_F32, 1, ssm_shape[2], 1, 1);
		out = gs_op4(g, GS_SSM_SCAN, GS_F32, (int64_t[4]){n, 1, 1, 1}, ssm, x, dt, a);
		gs_add_src(g, out, bm);
		gs_add_src(g, out, cm);
		gs_add_src(g, out, main_ids);
	} else {
		out = gs_get_rows(g, states, main_ids);
	}
	gs_expand(g, out);
	gs_t extra = gs_get_rows(g, states, extra_ids);
	gs_expand(g, gs_cpy_into(g, extra, gs_view(g, s, size * (rs - n_seqs), 1, 1, 1, 0, 0, 0, 0)));
	return out;
}

/* One Mamba (v1 or v2) mixer: in projection, causal conv with the
 * carried conv state, the selective scan, gating, out projection. */
static gs_t mamba_layer(lb *b, gs_t cur, bool v2, bool dbc_norm)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E;
	int64_t d_conv = m->ssm_conv ? m->ssm_conv : 4, d_inner = m->ssm_inner, d_state = m->ssm_state;
	int64_t ng = v2 ? (m->ssm_groups ? m->ssm_groups : 1) : 0;
	int64_t n_head = v2 ? m->ssm_dt_rank : d_inner, head_dim = v2 ? d_inner / (n_head ? n_head : 1) : 1;
	int64_t dt_rank = m->ssm_dt_rank, ch = d_inner + 2 * ng * d_state;
	int64_t rs = b->p->n_seq ? b->p->n_seq : 1;

	gs_t conv_all = gs_external(g, GS_F32, (d_conv - 1) * ch * rs, 1, 1, 1);
	gs_t ssm_all = gs_external(g, GS_F32, d_state * d_inner * rs, 1, 1, 1);
	gs_mark_cache(g, conv_all);
	gs_mark_cache(g, ssm_all);
	gs_t conv = rs_states(b, conv_all, (d_conv - 1) * ch, -1, -1, -1, -1, false, NULL);
	conv = gs_reshape(g, conv, d_conv - 1, ch, 1, 1);
	/* Mamba-1 reshapes its input and output ({n_embd, n_seq_tokens,
	 * n_seqs} and back); Mamba-2 keeps the projection 2D, and its output
	 * is the out projection itself, which the residual add may then
	 * overwrite in place (build_mamba2_layer) */
	if (!v2)
		cur = gs_reshape(g, cur, E, T, 1, 1);
	int64_t proj = v2 ? 2 * d_inner + 2 * ng * d_state + n_head : 2 * d_inner;
	gs_t zx = mm(b, proj, cur);
	size_t nb1 = gs_nb(g, zx, 1);
	gs_t z = gs_view(g, zx, d_inner, T, 1, 1, nb1, nb1 * T, nb1 * T, v2 ? 0 : 4 * (size_t)d_inner);
	gs_t xbc = gs_view(g, zx, ch, T, 1, 1, nb1, nb1 * T, nb1 * T, v2 ? 4 * (size_t)d_inner : 0);
	gs_t dtv = v2 ? gs_view(g, zx, n_head, T, 1, 1, nb1, nb1 * T, nb1 * T, 4 * (size_t)(2 * d_inner + 2 * ng * d_state))
		      : -1;
	gs_t conv_x = gs_concat(g, conv, gs_transpose(g, xbc), 0);
	gs_t last = gs_view(g, conv_x, d_conv - 1, ch, 1, 1, gs_nb(g, conv_x, 1), gs_nb(g, conv_x, 2), gs_nb(g, conv_x, 2),
			    (size_t)T * 4);
	gs_expand(g, gs_cpy_into(g, last, gs_view(g, conv_all, (d_conv - 1) * ch, 1, 1, 1, 0, 0, 0, 0)));
	gs_t x = gs_op4(g, GS_SSM_CONV, GS_F32, (int64_t[4]){ch, gs_ne(g, conv_x, 0) - d_conv + 1, 1, 1}, conv_x,
			gs_external(g, GS_F32, d_conv, ch, 1, 1), -1, -1);
	x = gs_binop(g, GS_ADD, x, weight(b, ch, 1));
	x = gs_unop(g, GS_UNARY, x);
	gs_t xs, dt, bm, cm, skip_src;
	if (v2) {
		size_t xnb1 = gs_nb(g, x, 1);
		xs = gs_view(g, x, head_dim, n_head, T, 1, 4 * (size_t)head_dim, xnb1, xnb1 * T, 0);
		bm = gs_view(g, x, d_state, ng, T, 1, 4 * (size_t)d_state, xnb1, xnb1 * T, 4 * (size_t)d_inner);
		cm = gs_view(g, x, d_state, ng, T, 1, 4 * (size_t)d_state, xnb1, xnb1 * T,
			     4 * (size_t)(d_inner + ng * d_state));
		dt = gs_unop(g, GS_CONT, dtv);
		dt = gs_binop(g, GS_ADD, dt, weight(b, n_head, 1));
		skip_src = xs;
	} else {
		gs_t x_db = mm(b, dt_rank + 2 * d_state, x);
		size_t dnb1 = gs_nb(g, x_db, 1);
		gs_t dtv1 = gs_view(g, x_db, dt_rank, T, 1, 1, dnb1, dnb1 * T, dnb1 * T, 0);
		bm = gs_view(g, x_db, d_state, 1, T, 1, 4 * (size_t)d_state, dnb1, dnb1 * T, 4 * (size_t)dt_rank);
		cm = gs_view(g, x_db, d_state, 1, T, 1, 4 * (size_t)d_state, dnb1, dnb1 * T,
			     4 * (size_t)(dt_rank + d_state));
		if (dbc_norm) { /* Jamba, FalconMamba: RMS norms on dt, B and C */
			dtv1 = norm(b, dtv1, weight(b, dt_rank, 1));
			bm = norm(b, bm, weight(b, d_state, 1));
			cm = norm(b, cm, weight(b, d_state, 1));
		} else {
			dtv1 = gs_unop(g, GS_CONT, dtv1);
		}
		dt = mm(b, d_inner, dtv1);
		dt = gs_binop(g, GS_ADD, dt, weight(b, d_inner, 1));
		skip_src = x;
		xs = gs_reshape(g, x, 1, d_inner, T, 1);
	}
	int64_t shape[4] = {d_state, head_dim, n_head, rs};
	gs_t y_ssm = rs_states(b, ssm_all, d_state * d_inner, xs, dt, bm, cm, true, shape);
	gs_expand(g, gs_cpy_into(g, gs_view(g, y_ssm, d_state * d_inner, 1, 1, 1, 0, 0, 0, 4 * (size_t)(d_inner * T)),
				 gs_view(g, ssm_all, d_state * d_inner, 1, 1, 1, 0, 0, 0, 0)));
	gs_t y = v2 ? gs_view(g, y_ssm, head_dim, n_head, T, 1, 4 * (size_t)head_dim, 4 * (size_t)d_inner,
			      4 * (size_t)(d_inner * T), 0)
		    : gs_view(g, y_ssm, d_inner, T, 1, 1, 4 * (size_t)d_inner, 4 * (size_t)(d_inner * T),
			      4 * (size_t)(d_inner * T), 0);
	gs_t d = v2 ? gs_reshape(g, weight(b, 1, n_head), 1, n_head, 1, 1) : weight(b, d_inner, 1);
	gs_t xd = gs_binop(g, GS_MUL, skip_src, d);
	y = gs_binop(g, GS_ADD, y, xd);
	gs_t zc = v2 ? gs_unop(g, GS_CONT, gs_reshape(g, z, head_dim, n_head, T, 1)) : gs_unop(g, GS_CONT, z);
	y = gs_op4(g, GS_GLU, GS_F32, (int64_t[4]){gs_ne(g, zc, 0), gs_ne(g, zc, 1), gs_ne(g, zc, 2), 1}, zc, y, -1, -1);
	if (v2) {
		y = gs_reshape(g, y, d_inner / ng, ng, T, 1);
		y = norm(b, y, weight(b, d_inner / ng, ng));
		y = gs_reshape(g, y, d_inner, T, 1, 1);
	}
	cur = mm(b, E, y);
	return v2 ? cur : gs_reshape(g, cur, E, T, 1, 1);
}

/* LFM2's gated short convolution: B, C and x from one projection, B*x
 * convolved over the carried (l_cache - 1) columns, gated by C. */
static gs_t shortconv(lb *b, gs_t cur)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, lc = m->ssm_conv ? m->ssm_conv : 3;
	int64_t rs = b->p->n_seq ? b->p->n_seq : 1;
	gs_t s = gs_external(g, GS_F32, (lc - 1) * E * rs, 1, 1, 1);
	gs_mark_cache(g, s);
	gs_t conv = rs_states(b, s, (lc - 1) * E, -1, -1, -1, -1, false, NULL);
	conv = gs_reshape(g, conv, lc - 1, E, 1, 1);
	gs_t bcx = mm(b, 3 * E, cur);
	size_t nb1 = gs_nb(g, bcx, 1);
	gs_t bv = gs_view(g, bcx, E, T, 1, 1, nb1, nb1 * T, nb1 * T, 0);
	gs_t cv = gs_view(g, bcx, E, T, 1, 1, nb1, nb1 * T, nb1 * T, 4 * (size_t)E);
	gs_t xv = gs_view(g, bcx, E, T, 1, 1, nb1, nb1 * T, nb1 * T, 8 * (size_t)E);
	gs_t bx = gs_transpose(g, gs_binop(g, GS_MUL, bv, xv));
	bx = gs_concat(g, conv, bx, 0);
	gs_t last = gs_view(g, bx, lc - 1, E, 1, 1, gs_nb(g, bx, 1), gs_nb(g, bx, 2), gs_nb(g, bx, 2), (size_t)T * 4);
	gs_expand(g, gs_cpy_into(g, last, gs_view(g, s, (lc - 1) * E, 1, 1, 1, 0, 0, 0, 0)));
	gs_t out = gs_op4(g, GS_SSM_CONV, GS_F32, (int64_t[4]){E, T, 1, 1}, bx, gs_external(g, GS_F32, lc, E, 1, 1), -1,
			  -1);
	gs_t y = gs_binop(g, GS_MUL, cv, out);
	return gs_reshape(g, mm(b, E, y), E, T, 1, 1);
}

/* Mamba, Mamba-2 and Granite 4 hybrids (Mamba-2 and attention layers,
 * each followed by a feed-forward), LFM2 (short convolutions and
 * attention, each followed by a feed-forward). */
static void build_recurrent(lb *b, enum arch_kind k)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : (H ? E / H : 0), hv = m->head_dim_v ? m->head_dim_v : hd;
	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		bool last = il == m->n_layers - 1;
		gs_t inpSA = inpL;
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		if (k == A_LFM2 && model_layer_recurrent(m, il)) {
			cur = shortconv(b, cur);
		} else if (model_layer_recurrent(m, il) || k == A_MAMBA || k == A_MAMBA2) {
			cur = mamba_layer(b, cur, k != A_MAMBA && k != A_JAMBA, k == A_JAMBA);
		} else {
			int64_t nkv = kv_heads(m, il);
			gs_t q = gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1);
			if (k == A_LFM2)
				q = norm(b, q, weight(b, hd, 1));
			if (k != A_JAMBA) /* Jamba's attention has no RoPE */
				q = rope(b, q);
			gs_t kk = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
			if (k == A_LFM2)
				kk = norm(b, kk, weight(b, hd, 1));
			if (k != A_JAMBA)
				kk = rope(b, kk);
			gs_t v = gs_reshape(g, mm(b, nkv * hv, cur), hv, nkv, T, 1);
			cur = mm(b, E, attention(b, il, q, kk, v, false));
		}
		if (last) {
			cur = out_rows(b, cur);
			inpSA = out_rows(b, inpSA);
		}
		/* LFM2 and Jamba add the residual first, the others the layer output */
		bool res_first = k == A_LFM2 || k == A_JAMBA;
		cur = res_first ? gs_binop(g, GS_ADD, inpSA, cur) : gs_binop(g, GS_ADD, cur, inpSA);
		if (res_first) {
			gs_t x = norm(b, cur, weight(b, E, 1));
			bool mb = variant_of(m->arch) & V_MOE_BIAS;
			gs_t ffn = moe_layer(m, il) ? moe_ffn(b, x, -1, mb, mb) : ffn_glu(b, x, m->ffn);
			cur = gs_binop(g, GS_ADD, cur, ffn);
		} else if (k == A_GRANITEHYBRID && (m->ffn || m->n_experts)) {
			gs_t res = cur, x = norm(b, cur, weight(b, E, 1));
			if (m->n_experts) {
				/* Granite 4.0-H MoE: routed experts (renormalised) plus a
				 * shared expert on the same input */
				cur = moe_ffn(b, x, -1, false, true);
				if (m->shared_expert_ffn)
					cur = gs_binop(g, GS_ADD, cur, ffn_glu(b, x, m->shared_expert_ffn));
			} else {
				cur = ffn_glu(b, x, m->ffn);
			}
			cur = gs_binop(g, GS_ADD, cur, res);
		}
		inpL = cur;
	}
	lm_head(b, inpL, false);
}

/* Nemotron-H (src/models/nemotron-h.cpp): three kinds of layer, each
 * after one RMS norm and added to its input -- a Mamba-2 mixer, attention
 * without RoPE, or an ungated ReLU^2 feed-forward; the final norm's output
 * is kept (t_h_nextn) and the output rows are selected after it. */
static void build_nemotron_h(lb *b)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : (H ? E / H : 0);
	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		uint32_t ff = m->layer_ffn ? m->layer_ffn[il] : m->ffn;
		if (model_layer_recurrent(m, il)) {
			cur = mamba_layer(b, cur, true, false);
		} else if (ff == 0) {
			int64_t nkv = kv_heads(m, il);
			gs_t q = gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1);
			gs_t k = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
			gs_t v = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
			cur = mm(b, E, attention(b, il, q, k, v, false));
		} else {
			gs_t up = gs_unop(g, GS_UNARY, mm(b, ff, cur));
			cur = mm(b, E, gs_unop(g, GS_SQR, up));
		}
		inpL = gs_binop(g, GS_ADD, cur, inpL);
	}
	lm_head_rows_last(b, inpL, false);
}

/* Falcon-H1 (src/models/falcon-h1.cpp): attention and a Mamba-2 mixer
 * side by side on the same (twice normed) input, their sum added to the
 * input, then a gated FFN. */
static void build_falcon_h1(lb *b)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : (H ? E / H : 0);
	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		int64_t nkv = kv_heads(m, il);
		gs_t inpSA = inpL;
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		gs_t q = rope(b, gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1));
		gs_t k = rope(b, gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1));
		gs_t v = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
		gs_t attn_out = mm(b, E, attention(b, il, q, k, v, false));
		cur = norm(b, inpL, weight(b, E, 1));
		gs_t ssm_out = mamba_layer(b, cur, true, false);
		cur = gs_binop(g, GS_ADD, attn_out, ssm_out);
		inpSA = gs_binop(g, GS_ADD, cur, inpSA);
		if (il == m->n_layers - 1)
			inpSA = out_rows(b, inpSA);
		cur = norm(b, inpSA, weight(b, E, 1));
		cur = ffn_glu(b, cur, m->ffn);
		inpL = gs_binop(g, GS_ADD, cur, inpSA);
	}
	lm_head(b, inpL, false);
}

/* Qwen3-Next, Qwen3.5 and Qwen3.5-MoE (src/models/qwen3next.cpp,
 * qwen35.cpp, qwen35moe.cpp, delta-net-base.cpp): every
 * full_attention_interval-th layer gated attention (Q and its gate from
 * one projection, per-head QK norms, output times sigmoid(gate)), the
 * others a gated delta-net (fused QKV + gate projections, beta and alpha,
 * the causal conv over the carried conv state, L2-normed Q and K, the
 * fused GATED_DELTA_NET op llama.cpp enables on the CPU, a gated RMS
 * norm); post-attention norm, then the MoE with a sigmoid-gated shared
 * expert (Qwen3.5: a dense FFN); the final norm kept (t_h_nextn), the
 * output rows selected after it. */
static gs_t gdn_layer(lb *b, gs_t cur, bool next)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E;
	int64_t d_conv = m->ssm_conv ? m->ssm_conv : 4, d_inner = m->ssm_inner, hk = m->ssm_state;
	int64_t nk = m->ssm_groups ? m->ssm_groups : 1, nv = m->ssm_dt_rank ? m->ssm_dt_rank : 1, hv = d_inner / nv;
	int64_t ch = d_inner + 2 * nk * hk, rs = b->p->n_seq ? b->p->n_seq : 1;
	gs_t qkv = gs_reshape(g, mm(b, 2 * hk * nk + hv * nv, cur), 2 * hk * nk + hv * nv, T, 1, 1);
	gs_t z = mm(b, hv * nv, cur);
	gs_t beta, gate;
	if (next) {
		gs_t ba = gs_reshape(g, mm(b, 2 * nv, cur), 2 * nv / nk, nk, T, 1);
		size_t nb1 = gs_nb(g, ba, 1);
		gs_t bv = gs_view(g, ba, nv / nk, nk, T, 1, nb1, nb1 * nk, nb1 * nk * T, 0);
		gs_t av = gs_view(g, ba, nv / nk, nk, T, 1, nb1, nb1 * nk, nb1 * nk * T, 4 * (size_t)(nv / nk));
		beta = gs_unop(g, GS_UNARY, gs_unop(g, GS_CONT, bv));
		gs_t alpha = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){nv, T, 1, 1}, av, -1, -1, -1);
		gate = gs_unop(g, GS_UNARY, gs_binop(g, GS_ADD, alpha, weight(b, nv, 1)));
		gate = gs_binop(g, GS_MUL, gate, weight(b, nv, 1));
	} else {
		beta = gs_unop(g, GS_UNARY, gs_reshape(g, mm(b, nv, cur), 1, nv, T, 1));
		gs_t alpha = gs_reshape(g, mm(b, nv, cur), nv, T, 1, 1);
		gate = gs_unop(g, GS_UNARY, gs_binop(g, GS_ADD, alpha, weight(b, nv, 1)));
		gate = gs_binop(g, GS_MUL, gate, weight(b, nv, 1));
	}
	beta = gs_reshape(g, beta, 1, nv, T, 1);
	gate = gs_reshape(g, gate, 1, nv, T, 1);
	gs_t conv_all = gs_external(g, GS_F32, (d_conv - 1) * ch * rs, 1, 1, 1);
	gs_t ssm_all = gs_external(g, GS_F32, hk * d_inner * rs, 1, 1, 1);
	gs_mark_cache(g, conv_all);
	gs_mark_cache(g, ssm_all);
	gs_t conv = rs_states(b, conv_all, (d_conv - 1) * ch, -1, -1, -1, -1, false, NULL);
	conv = gs_reshape(g, conv, d_conv - 1, ch, 1, 1);
	gs_t conv_x = gs_concat(g, conv, gs_transpose(g, qkv), 0);
	gs_t last = gs_view(g, conv_x, d_conv - 1, ch, 1, 1, gs_nb(g, conv_x, 1), gs_nb(g, conv_x, 2), gs_nb(g, conv_x, 2),
			    (size_t)T * 4);
	gs_expand(g, gs_cpy_into(g, last, gs_view(g, conv_all, (d_conv - 1) * ch, 1, 1, 1, 0, 0, 0, 0)));
	gs_t state = rs_states(b, ssm_all, hk * d_inner, -1, -1, -1, -1, false, NULL);
	state = gs_reshape(g, state, hv, hv, nv, 1);
	gs_t x = gs_op4(g, GS_SSM_CONV, GS_F32, (int64_t[4]){ch, gs_ne(g, conv_x, 0) - d_conv + 1, 1, 1}, conv_x,
			gs_external(g, GS_F32, d_conv, ch, 1, 1), -1, -1);
	x = gs_unop(g, GS_UNARY, x);
	size_t xnb1 = gs_nb(g, x, 1);
	gs_t q = gs_view(g, x, hk, nk, T, 1, 4 * (size_t)hk, xnb1, xnb1 * T, 0);
	gs_t k = gs_view(g, x, hk, nk, T, 1, 4 * (size_t)hk, xnb1, xnb1 * T, 4 * (size_t)(hk * nk));
	gs_t v = gs_view(g, x, hv, nv, T, 1, 4 * (size_t)hv, xnb1, xnb1 * T, 4 * (size_t)(2 * hk * nk));
	q = gs_unop(g, GS_SCALE, gs_unop(g, GS_RMS_NORM, q));
	k = gs_unop(g, GS_SCALE, gs_unop(g, GS_RMS_NORM, k));
	if (next && nk != nv) { /* Qwen3-Next repeats Q and K to the value heads */
		int64_t r = nv / nk;
		q = gs_reshape(g, gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){hk, r, nk, T}, gs_reshape(g, q, hk, 1, nk, T), -1, -1, -1),
			       hk, nv, T, 1);
		k = gs_reshape(g, gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){hk, r, nk, T}, gs_reshape(g, k, hk, 1, nk, T), -1, -1, -1),
			       hk, nv, T, 1);
	}
	/* ggml_gated_delta_net: the output rows, then the final state */
	gs_t res = gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){hv * nv, T + hv, 1, 1}, q, k, v, gate);
	gs_add_src(g, res, beta);
	gs_add_src(g, res, state);
	gs_t out = gs_view(g, res, hv, nv, T, 1, 4 * (size_t)hv, 4 * (size_t)(hv * nv), 4 * (size_t)(hv * nv * T), 0);
	gs_t ns = gs_view(g, res, hv * hv * nv, 1, 1, 1, 0, 0, 0, 4 * (size_t)(hv * nv * T));
	gs_expand(g, gs_cpy_into(g, ns, gs_view(g, ssm_all, hk * d_inner, 1, 1, 1, 0, 0, 0, 0)));
	gs_t zz = gs_reshape(g, z, hv, nv, T, 1);
	gs_t y = norm(b, out, weight(b, hv, 1));
	y = gs_binop(g, GS_MUL, y, gs_unop(g, GS_UNARY, zz));
	y = gs_reshape(g, y, hv * nv, T, 1, 1);
	return gs_reshape(g, mm(b, E, y), E, T, 1, 1);
}

static void build_qwen3next(lb *b, bool next)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : (H ? E / H : 0);
	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		gs_t inpSA = inpL;
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		gs_expand(g, cur);
		if (model_layer_recurrent(m, il)) {
			cur = gdn_layer(b, cur, next);
		} else {
			int64_t nkv = kv_heads(m, il);
			gs_t qf = gs_reshape(g, mm(b, 2 * hd * H, cur), 2 * hd, H, T, 1);
			gs_t kk = mm(b, nkv * hd, cur), v = mm(b, nkv * hd, cur);
			size_t nb1 = gs_nb(g, qf, 1);
			gs_t q = gs_view(g, qf, hd, H, T, 1, nb1, nb1 * H, nb1 * H * T, 0);
			gs_t gt = gs_view(g, qf, hd, H, T, 1, nb1, nb1 * H, nb1 * H * T, 4 * (size_t)hd);
			kk = gs_reshape(g, kk, hd, nkv, T, 1);
			v = gs_reshape(g, v, hd, nkv, T, 1);
			q = rope(b, norm(b, q, weight(b, hd, 1)));
			kk = rope(b, norm(b, kk, weight(b, hd, 1)));
			cur = attention(b, il, q, kk, v, false);
			gt = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){hd * H, T, 1, 1}, gt, -1, -1, -1);
			cur = gs_binop(g, GS_MUL, cur, gs_unop(g, GS_UNARY, gt));
			cur = mm(b, E, cur);
		}
		cur = gs_binop(g, GS_ADD, cur, inpSA);
		gs_t res = cur;
		gs_t x = norm(b, cur, weight(b, E, 1));
		if (moe_layer(m, il)) {
			cur = moe_ffn(b, x, -1, false, true);
			if (m->shared_expert_ffn) {
				gs_t sh = ffn_glu(b, x, m->shared_expert_ffn);
				gs_t gi = gs_unop(g, GS_UNARY, gs_mul_mat(g, weight(b, E, 1), x));
				cur = gs_binop(g, GS_ADD, cur, gs_binop(g, GS_MUL, sh, gi));
			}
		} else {
			cur = ffn_glu(b, x, m->ffn);
		}
		inpL = gs_binop(g, GS_ADD, cur, res);
	}
	lm_head_rows_last(b, inpL, false);
}

/* Cohere 2 and Cohere 2 MoE (src/models/cohere2.cpp, cohere2moe.cpp): a
 * parallel block -- attention and the FFN on the same normed input, both
 * added to the input; RoPE on the sliding layers only (and the leading
 * dense ones of the MoE); the MoE's shared expert averaged with the
 * routed ones; the logits scaled.  Cohere 2 normalises with LayerNorm
 * (no bias) and selects the output rows in its last layer, the MoE with
 * RMSNorm and after the final norm, which it keeps (t_h_nextn). */
static void build_cohere2(lb *b, bool moe)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : (H ? E / H : 0);
	const moe_opts o = {.gating = m->expert_gating == 1 ? MOE_SOFTMAX : MOE_SIGMOID, .norm_w = m->expert_weights_norm};
	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		int64_t nkv = kv_heads(m, il);
		bool last = il == m->n_layers - 1, use_rope = is_swa(m, il) || (moe && il < m->n_dense_lead);
		gs_t cur = moe ? norm(b, inpL, weight(b, E, 1))
			       : gs_binop(g, GS_MUL, gs_unop(g, GS_NORM, inpL), weight(b, E, 1));
		gs_t ffn_inp = cur;
		gs_t q = gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1);
		gs_t k = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
		gs_t v = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
		if (use_rope) {
			q = rope(b, q);
			k = rope(b, k);
		}
		cur = mm(b, E, attention(b, il, q, k, v, false));
		if (last && !moe) {
			cur = out_rows(b, cur);
			inpL = out_rows(b, inpL);
			ffn_inp = out_rows(b, ffn_inp);
		}
		gs_t attn_out = cur;
		if (moe && moe_layer(m, il)) {
			cur = moe_ffn_opts(b, ffn_inp, -1, &o);
			if (m->shared_expert_ffn) {
				cur = gs_binop(g, GS_ADD, cur, ffn_glu(b, ffn_inp, m->shared_expert_ffn));
				cur = gs_unop(g, GS_SCALE, cur);
			}
		} else {
			cur = ffn_glu(b, ffn_inp, m->ffn);
		}
		cur = gs_binop(g, GS_ADD, cur, inpL);
		inpL = gs_binop(g, GS_ADD, cur, attn_out);
	}
	layer_begin(b, m->n_layers);
	gs_t cur = moe ? norm(b, inpL, weight(b, E, 1)) : gs_binop(g, GS_MUL, gs_unop(g, GS_NORM, inpL), weight(b, E, 1));
	gs_set_output(g, cur);
	if (moe) {
		cur = out_rows(b, cur);
		gs_set_output(g, cur);
	}
	cur = gs_mul_mat(g, gs_external(g, GS_F16, E, m->vocab, 1, 1), cur);
	cur = gs_unop(g, GS_SCALE, cur);
	gs_set_output(g, cur);
	gs_expand(g, cur);
}

/* Decoder layers of the transformer families. */
static gs_t build_decoder(lb *b, enum arch_kind k)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : E / (H ? H : 1);
	int64_t hv = m->head_dim_v ? m->head_dim_v : hd;
	unsigned var = variant_of(m->arch);
	bool gemma = k == A_GEMMA2 || k == A_GEMMA3, olmo = k == A_OLMO2;
	bool qkfull = (olmo && !(var & V_QKNORM)) || (var & V_QKNORM_FULL), post = gemma || olmo || (var & V_POSTNORM);
	bool qknorm_head = k == A_QWEN3 || k == A_GEMMA3 || k == A_QWEN3MOE || (var & V_QKNORM);
	bool qkv_bias = var & V_QKV_BIAS, out_bias = var & V_OUT_BIAS;

	gs_t inpL = inp_embd(b);
	if (gemma)
		inpL = gs_unop(g, GS_SCALE, inpL);

	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		int64_t nkv = kv_heads(m, il);
		bool last = il == m->n_layers - 1;
		gs_t inpSA = inpL, router = -1;
		/* SmallThinker routes on the layer input; the logits enter the
		 * graph with the expert weights, before the attention output */
		if (k == A_SMALLTHINKER && moe_layer(m, il))
			router = gs_mul_mat(g, gs_external(g, GS_F32, E, m->n_experts, 1, 1), inpL);
		gs_t cur = olmo ? inpL : block_norm(b, inpL);
		if (k == A_DEEPSEEK2 && m->mla) {
			cur = mla_attention(b, il, cur);
		} else if (var & V_FUSED_QKV) {
			gs_t qkv = mm(b, hd * (H + 2 * nkv), cur);
			size_t es = gs_row_size(GS_F32, hd), nb1 = gs_nb(g, qkv, 1);
			gs_t q = gs_view(g, qkv, hd, H, T, 1, es, nb1, nb1 * T, 0);
			gs_t kk = gs_view(g, qkv, hd, nkv, T, 1, es, nb1, nb1 * T, gs_row_size(GS_F32, hd * H));
			gs_t v = gs_view(g, qkv, hd, nkv, T, 1, es, nb1, nb1 * T, gs_row_size(GS_F32, hd * (H + nkv)));
			if (qknorm_head)
				q = norm(b, q, weight(b, hd, 1));
			q = rope(b, q);
			if (qknorm_head)
				kk = norm(b, kk, weight(b, hd, 1));
			kk = rope(b, kk);
			cur = attention(b, il, q, kk, v, false);
		} else {
			gs_t q = mm(b, H * hd, cur), kk, v;
			bool nope = (k == A_SMALLTHINKER && !is_swa(m, il)) || ((var & V_ATTN_GATE) && (il + 1) % 4 == 0);
			if (qkv_bias)
				q = gs_binop(g, GS_ADD, q, weight(b, H * hd, 1));
			if (qkfull) {
				q = norm(b, q, weight(b, H * hd, 1));
				q = gs_reshape(g, q, hd, H, T, 1);
			} else {
				q = gs_reshape(g, q, hd, H, T, 1);
				if (qknorm_head)
					q = norm(b, q, weight(b, hd, 1));
			}
			if (!nope)
				q = rope(b, q);
			if (gemma || (var & V_Q_SCALE))
				q = gs_unop(g, GS_SCALE, q);
			kk = mm(b, nkv * hd, cur);
			if (qkv_bias)
				kk = gs_binop(g, GS_ADD, kk, weight(b, nkv * hd, 1));
			if (qkfull) {
				kk = norm(b, kk, weight(b, nkv * hd, 1));
				kk = gs_reshape(g, kk, hd, nkv, T, 1);
			} else {
				kk = gs_reshape(g, kk, hd, nkv, T, 1);
				if (qknorm_head)
					kk = norm(b, kk, weight(b, hd, 1));
			}
			if (!nope)
				kk = rope(b, kk);
			v = mm(b, nkv * hv, cur);
			if (qkv_bias)
				v = gs_binop(g, GS_ADD, v, weight(b, nkv * hv, 1));
			v = gs_reshape(g, v, hv, nkv, T, 1);
			gs_t attn_in = cur;
			cur = attention(b, il, q, kk, v, k == A_GEMMA2);
			if (var & V_ATTN_GATE)
				cur = gs_binop(g, GS_MUL, cur, gs_unop(g, GS_UNARY, gs_mul_mat(g, weight(b, E, H * hv), attn_in)));
		}
		if (router >= 0 && last)
			router = out_rows(b, router);
		cur = mm(b, E, cur);
		if (out_bias)
			cur = gs_binop(g, GS_ADD, cur, weight(b, E, 1));
		if (last) {
			cur = out_rows(b, cur);
			inpSA = out_rows(b, inpSA);
		}
		if (post)
			cur = norm(b, cur, weight(b, E, 1));
		gs_t ffn_inp = gs_binop(g, GS_ADD, cur, inpSA);
		cur = olmo ? ffn_inp : block_norm(b, ffn_inp);
		if (moe_layer(m, il)) {
			gs_t x = cur;
			/* DeepSeek's selection bias (exp_probs_b): catalog rows have it,
			 * files when they carry the tensor (Mistral 4 does not) */
			cur = moe_ffn(b, x, router, k == A_DEEPSEEK2 && (!m->has_tensors || m->expert_select_bias),
				      k == A_DEEPSEEK2 ? m->expert_weights_norm : !(var & V_NO_NORM_W));
			if (var & V_SHEXP_GATE) {
				/* Qwen2-MoE: the shared expert times sigmoid(x . w), as
				 * silu(y) / y */
				gs_t gi = gs_mul_mat(g, weight(b, E, 1), x);
				gs_t gt = gs_binop(g, GS_DIV, gs_op4(g, GS_UNARY, GS_F32, (int64_t[4]){1, T, 1, 1}, gi, -1, -1, -1), gi);
				gs_t sh = ffn_glu(b, x, m->shared_expert_ffn ? m->shared_expert_ffn : m->expert_ffn);
				cur = gs_binop(g, GS_ADD, cur, gs_binop(g, GS_MUL, sh, gt));
			} else if (m->n_expert_shared || (k == A_DEEPSEEK2 && !m->has_tensors)) {
				uint32_t ns = m->n_expert_shared ? m->n_expert_shared : 1;
				int64_t sf = (int64_t)ns * (m->expert_ffn ? m->expert_ffn : m->ffn);
				/* Granite MoE Shared: one shared expert n_ff_shexp wide */
				if (!strcmp(m->arch, "granitemoe") && m->shared_expert_ffn)
					sf = m->shared_expert_ffn;
				gs_t sh = ffn_glu(b, x, sf);
				cur = gs_binop(g, GS_ADD, cur, sh);
			}
		} else if (var & V_FUSED_UP) {
			gs_t up = mm(b, 2 * (int64_t)m->ffn, cur);
			gs_t act = gs_op4(g, GS_GLU, GS_F32, (int64_t[4]){m->ffn, T, 1, 1}, up, -1, -1, -1);
			cur = mm(b, E, act);
		} else {
			cur = ffn_glu(b, cur, m->ffn);
		}
		if (post)
			cur = norm(b, cur, weight(b, E, 1));
		/* which source the add may overwrite in place follows the order */
		cur = var & V_RES_FIRST ? gs_binop(g, GS_ADD, ffn_inp, cur) : gs_binop(g, GS_ADD, cur, ffn_inp);
		inpL = cur;
	}
	return lm_head(b, inpL, k == A_GEMMA2);
}

/* ---- gpt-oss, Llama 4, Phi-3: builders of their own (src/models/
 * openai-moe.cpp, llama4.cpp, phi3.cpp) on the shared pieces above ---- */

/* x @ W (+ bias) */
static gs_t mm_b(lb *b, int64_t out, gs_t x, bool bias)
{
	gs_t r = mm(b, out, x);
	return bias ? gs_binop(b->g, GS_ADD, r, weight(b, out, 1)) : r;
}

/* Gemma 3n (src/models/gemma3n.cpp): AltUp keeps n_altup = 4 copies of
 * the hidden state [E, T, 4], Laurel adds a low-rank (64) residual, and
 * every layer takes its slice of the per-layer inputs (a second token
 * embedding of 256 per layer plus a projection of the input); the
 * layers from n_layer_kv_from_start on read an earlier layer's cache.
 * n_altup, laurel_rank and n_embd_altup are llama_hparams' defaults
 * (the loader reads none of them). */
static gs_t g3n_slice(lb *b, gs_t x, int64_t i)
{
	gsim *g = b->g;
	int64_t n0 = gs_ne(g, x, 0), n1 = gs_ne(g, x, 1);
	size_t nb1 = gs_row_size(GS_F32, n0);
	return gs_view(g, x, n0, n1, 1, 1, nb1, nb1 * n1, nb1 * n1, (size_t)i * nb1 * n1);
}

static gs_t g3n_magnitude(lb *b, gs_t x)
{
	return gs_unop(b->g, GS_SQRT, gs_sum_rows(b->g, gs_unop(b->g, GS_SQR, x)));
}

static gs_t g3n_router(lb *b, gs_t x, int64_t na)
{
	gs_t r = norm(b, x, weight(b, b->E, 1));
	r = gs_unop(b->g, GS_SCALE, r);
	r = gs_mul_mat(b->g, weight(b, b->E, na), r);
	return gs_unop(b->g, GS_UNARY, r);
}

static gs_t build_gemma3n(lb *b)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads, L = m->n_layers;
	int64_t hd = m->head_dim_k ? m->head_dim_k : E / (H ? H : 1);
	const int64_t NA = 4, PL = 256, LR = 64;
	size_t rs = gs_row_size(GS_F32, E);

	gs_t inpL = gs_unop(g, GS_SCALE, inp_embd(b));
	/* build_inp_per_layer: its own token rows */
	gs_t ptok = gs_input(g, GS_I32, T, 1, 1, 1);
	gs_t ipl = gs_get_rows(g, gs_external(g, GS_F16, PL * L, m->vocab, 1, 1), ptok);
	ipl = gs_unop(g, GS_SCALE, gs_reshape(g, ipl, PL, L, T, 1));
	gs_expand(g, ipl);
	/* project_per_layer_inputs */
	gs_t pp = gs_unop(g, GS_SCALE, gs_mul_mat(g, weight(b, E, PL * L), inpL));
	pp = norm(b, gs_reshape(g, pp, PL, L, T, 1), weight(b, PL, 1));
	ipl = gs_unop(g, GS_SCALE, gs_binop(g, GS_ADD, pp, ipl));
	ipl = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){PL, T, L, 1}, gs_permute(g, ipl, 0, 2, 1, 3), -1, -1, -1);
	/* the other AltUp copies */
	{
		gs_t tm = g3n_magnitude(b, inpL);
		gs_t rep = gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){E, T, NA - 1, 1}, inpL, -1, -1, -1);
		gs_t add = gs_mul_mat(g, gs_external(g, GS_F16, E, E, NA - 1, 1), rep);
		gs_t nm = g3n_magnitude(b, add);
		add = gs_binop(g, GS_DIV, gs_binop(g, GS_MUL, add, tm), nm);
		inpL = gs_concat(g, inpL, add, 2);
	}
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		gs_t cur = inpL;
		/* altup_predict */
		gs_t mod = g3n_router(b, g3n_slice(b, cur, 0), NA);
		gs_t coefs = gs_reshape(g, gs_mul_mat(g, weight(b, NA, NA * NA), mod), NA, NA, T, 1);
		gs_t cp = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){NA, E, T, 1}, gs_permute(g, cur, 1, 2, 0, 3), -1, -1, -1);
		gs_t pred = gs_mul_mat(g, cp, coefs);
		pred = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){E, T, NA, 1}, gs_permute(g, pred, 0, 2, 1, 3), -1, -1, -1);
		pred = gs_binop(g, GS_ADD, pred, cur);
		gs_t active = g3n_slice(b, pred, 0);
		cur = norm(b, active, weight(b, E, 1));
		/* laurel */
		gs_t lo = gs_mul_mat(g, weight(b, E, LR), cur);
		lo = gs_mul_mat(g, weight(b, LR, E), lo);
		lo = norm(b, lo, weight(b, E, 1));
		lo = gs_binop(g, GS_ADD, lo, cur);
		gs_t q;
		if (model_layer_has_kv(m, il)) {
			int64_t nkv = kv_heads(m, il);
			q = gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1);
			gs_t k = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
			gs_t v = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
			q = norm(b, q, weight(b, hd, 1));
			k = norm(b, k, weight(b, hd, 1));
			v = gs_unop(g, GS_RMS_NORM, v);
			q = rope(b, q);
			k = rope(b, k);
			cur = attention(b, il, q, k, v, false);
		} else {
			q = gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1);
			q = norm(b, q, weight(b, hd, 1));
			q = rope(b, q);
			cur = attention(b, il, q, -1, -1, false);
		}
		cur = mm(b, E, cur);
		cur = norm(b, cur, weight(b, E, 1));
		cur = gs_binop(g, GS_ADD, cur, active);
		gs_t al = gs_unop(g, GS_SCALE, gs_binop(g, GS_ADD, cur, lo));
		cur = norm(b, al, weight(b, E, 1));
		/* feed-forward, activation sparsity on the first 10 layers */
		int64_t ff = m->layer_ffn ? m->layer_ffn[il] : m->ffn;
		gs_t up = mm(b, ff, cur), gate = mm(b, ff, cur);
		if (il < 10) {
			gs_t mean = gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){1, T, 1, 1}, gate, -1, -1, -1);
			gs_t sd = gs_unop(g, GS_SQR, gs_binop(g, GS_SUB, gate, mean));
			sd = gs_unop(g, GS_SQRT, gs_unop(g, GS_SCALE, gs_sum_rows(g, sd)));
			gs_t cut = gs_binop(g, GS_ADD, mean, gs_unop(g, GS_SCALE, sd));
			gate = gs_unop(g, GS_UNARY, gs_binop(g, GS_SUB, gate, cut));
		}
		gate = gs_unop(g, GS_UNARY, gate);
		cur = mm(b, E, gs_binop(g, GS_MUL, up, gate));
		cur = norm(b, cur, weight(b, E, 1));
		gs_t gated = gs_binop(g, GS_ADD, cur, al);
		/* altup_correct */
		mod = g3n_router(b, gated, NA);
		gs_t innov = gs_binop(g, GS_SUB, gated, g3n_slice(b, pred, 0));
		gs_t cc = gs_unop(g, GS_SCALE, gs_mul_mat(g, weight(b, NA, NA), mod));
		cc = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){1, T, NA, 1}, gs_transpose(g, cc), -1, -1, -1);
		innov = gs_op4(g, GS_OTHER, GS_F32, (int64_t[4]){E, T, NA, 1}, innov, -1, -1, -1);
		gs_t corr = gs_binop(g, GS_ADD, gs_binop(g, GS_MUL, innov, cc), pred);
		/* the per-layer input */
		gs_t fp = gs_binop(g, GS_MUL, g3n_slice(b, corr, 0), weight(b, E, 1));
		fp = gs_unop(g, GS_UNARY, gs_mul_mat(g, weight(b, E, PL), fp));
		fp = gs_binop(g, GS_MUL, fp, g3n_slice(b, ipl, il));
		fp = gs_mul_mat(g, weight(b, PL, E), fp);
		fp = norm(b, fp, weight(b, E, 1));
		gs_t first = g3n_slice(b, corr, 0);
		gs_t rest = gs_view(g, corr, E, T, NA - 1, 1, rs, rs * T, rs * T * (NA - 1), rs * T);
		inpL = gs_concat(g, first, gs_binop(g, GS_ADD, rest, fp), 2);
	}
	layer_begin(b, m->n_layers);
	gs_t tm = g3n_magnitude(b, g3n_slice(b, inpL, 0));
	gs_t alt = gs_view(g, inpL, E, T, NA - 1, 1, rs, rs * T, rs * T * (NA - 1), rs * T);
	gs_t un = gs_mul_mat(g, gs_external(g, GS_F16, E, E, NA - 1, 1), alt);
	gs_t nm = g3n_magnitude(b, un);
	un = gs_binop(g, GS_DIV, gs_binop(g, GS_MUL, un, tm), nm);
	gs_t cur = g3n_slice(b, inpL, 0);
	for (int64_t i = 0; i < NA - 1; i++)
		cur = gs_binop(g, GS_ADD, cur, g3n_slice(b, un, i));
	cur = gs_unop(g, GS_SCALE, cur);
	return lm_head(b, out_rows(b, cur), true);
}

/* Gemma 4 (src/models/gemma4.cpp, dense layers): the sliding layers have
 * their own head size (attention.key_length_swa); Q and K get per-head
 * RMS norms, V an unweighted one, and a file without attn_v takes V from
 * the K projection itself; post-norms after the attention and the FFN
 * (GELU); every layer adds its slice of the per-layer inputs (as Gemma
 * 3n's) through a gate and a projection; the output rows are selected
 * after the final norm (embeddings_nextn_masked is false), and the
 * logits soft-capped (f_final_logit_softcapping, 30 by default). */
static gs_t build_gemma4(lb *b)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads, L = m->n_layers;
	int64_t hd_full = m->head_dim_k ? m->head_dim_k : E / (H ? H : 1);
	int64_t hd_swa = m->head_dim_k_swa ? m->head_dim_k_swa : hd_full;
	int64_t PL = m->embd_per_layer;
	for (uint32_t il = 0; il < m->n_layers; il++) {
		int64_t w = (int64_t)kv_heads(m, il) * (is_swa(m, il) ? hd_swa : hd_full);
		if (w > b->v_trans_max)
			b->v_trans_max = w;
	}

	gs_t inpL = gs_unop(g, GS_SCALE, inp_embd(b));
	gs_t ipl = -1;
	if (PL) {
		/* build_inp_per_layer */
		gs_t ptok = gs_input(g, GS_I32, T, 1, 1, 1);
		ipl = gs_get_rows(g, gs_external(g, GS_F16, PL * L, m->vocab, 1, 1), ptok);
		ipl = gs_unop(g, GS_SCALE, gs_reshape(g, ipl, PL, L, T, 1));
		gs_expand(g, ipl);
		/* project_per_layer_inputs */
		gs_t pp = gs_unop(g, GS_SCALE, gs_mul_mat(g, weight(b, E, PL * L), inpL));
		pp = norm(b, gs_reshape(g, pp, PL, L, T, 1), weight(b, PL, 1));
		ipl = gs_unop(g, GS_SCALE, gs_binop(g, GS_ADD, pp, ipl));
		ipl = gs_op4(g, GS_CONT, GS_F32, (int64_t[4]){PL, T, L, 1}, gs_permute(g, ipl, 0, 2, 1, 3), -1, -1, -1);
	}
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		int64_t hd = is_swa(m, il) ? hd_swa : hd_full, nkv = kv_heads(m, il);
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		gs_t q = gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1);
		q = norm(b, q, weight(b, hd, 1));
		q = rope(b, q);
		if (model_layer_has_kv(m, il)) {
			gs_t kp = mm(b, nkv * hd, cur);
			gs_t vp = m->layer_v_from_k && m->layer_v_from_k[il] ? kp : mm(b, nkv * hd, cur);
			gs_t k = gs_reshape(g, kp, hd, nkv, T, 1);
			gs_t v = gs_reshape(g, vp, hd, nkv, T, 1);
			k = norm(b, k, weight(b, hd, 1));
			v = gs_unop(g, GS_RMS_NORM, v);
			k = rope(b, k);
			cur = attention(b, il, q, k, v, false);
		} else {
			cur = attention(b, il, q, -1, -1, false);
		}
		cur = mm(b, E, cur);
		cur = norm(b, cur, weight(b, E, 1));
		gs_t attn_out = gs_binop(g, GS_ADD, cur, inpL);
		cur = norm(b, attn_out, weight(b, E, 1));
		cur = ffn_glu(b, cur, m->layer_ffn && m->layer_ffn[il] ? m->layer_ffn[il] : m->ffn);
		cur = norm(b, cur, weight(b, E, 1));
		cur = gs_binop(g, GS_ADD, cur, attn_out);
		if (PL) {
			gs_t pe_in = cur;
			cur = gs_unop(g, GS_UNARY, gs_mul_mat(g, weight(b, E, PL), cur));
			cur = gs_binop(g, GS_MUL, cur, g3n_slice(b, ipl, il));
			cur = gs_mul_mat(g, weight(b, PL, E), cur);
			cur = norm(b, cur, weight(b, E, 1));
			cur = gs_binop(g, GS_ADD, pe_in, cur);
		}
		inpL = cur;
	}
	return lm_head_rows_last(b, inpL, true);
}

/* gpt-oss (openai-moe.cpp): biased Q/K/V and output projections,
 * attention sinks (no memory of their own), a post-attention norm feeding
 * the MoE with biased experts and the OAI SwiGLU; the output rows are
 * selected after the last layer, whose output stays allocated (the
 * hidden state llama.cpp offers to a NextN head, ggml_set_output). */
static gs_t build_gptoss(lb *b)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : E / (H ? H : 1);
	const moe_opts o = {.gating = MOE_SOFTMAX_CHOSEN, .router_bias = true, .expert_bias = true};

	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		int64_t nkv = kv_heads(m, il);
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		gs_t q = rope(b, gs_reshape(g, mm_b(b, H * hd, cur, true), hd, H, T, 1));
		gs_t k = rope(b, gs_reshape(g, mm_b(b, nkv * hd, cur, true), hd, nkv, T, 1));
		gs_t v = gs_reshape(g, mm_b(b, nkv * hd, cur, true), hd, nkv, T, 1);
		cur = attention(b, il, q, k, v, false);
		cur = mm_b(b, E, cur, true);
		gs_t ffn_inp = gs_binop(g, GS_ADD, cur, inpL);
		cur = norm(b, ffn_inp, weight(b, E, 1));
		cur = moe_ffn_opts(b, cur, -1, &o);
		inpL = gs_binop(g, GS_ADD, cur, ffn_inp);
	}
	gs_set_output(g, inpL); /* t_h_nextn: the last layer's output is kept */
	return lm_head(b, out_rows(b, inpL), false);
}

/* Is Llama 4 block il a MoE block?  From a file, where its expert tensors
 * are; else every moe_step-th block (interleave_moe_layer_step: Scout 1,
 * Maverick 2). */
static bool llama4_moe_layer(const model_desc *m, uint32_t il)
{
	if (m->layer_expert_bytes && m->has_tensors)
		return m->layer_expert_bytes[il] != 0;
	return model_layer_moe(m, il);
}

/* Llama 4 (llama4.cpp): chunked attention on three layers of four and
 * NoPE on the fourth, whose queries are scaled by the attention
 * temperature input; an L2 (RMS) norm of Q and K after RoPE unless the
 * model has 128 experts; the router's sigmoid weight scales the input of
 * the experts; a shared expert beside them; MoE blocks every
 * interleave_moe_layer_step blocks, dense feed-forwards between. */
static gs_t build_llama4(lb *b)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : E / (H ? H : 1);
	uint32_t nope_every = b->iswa ? 4 : m->n_layers; /* n_no_rope_layer_step */
	bool kq_norm = m->n_experts != 128;
	const moe_opts o = {.gating = MOE_SIGMOID, .select_logits = true, .weight_first = true};
	gs_t attn_scale = -1;

	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		int64_t nkv = kv_heads(m, il);
		bool use_rope = (il + 1) % nope_every != 0, last = il == m->n_layers - 1;
		gs_t inpSA = inpL;
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		gs_t q = gs_reshape(g, mm(b, H * hd, cur), hd, H, T, 1);
		gs_t k = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
		gs_t v = gs_reshape(g, mm(b, nkv * hd, cur), hd, nkv, T, 1);
		if (use_rope) {
			q = rope(b, q);
			k = rope(b, k);
			if (kq_norm) {
				q = gs_unop(g, GS_RMS_NORM, q);
				k = gs_unop(g, GS_RMS_NORM, k);
			}
		} else {
			if (attn_scale < 0)
				attn_scale = gs_input(g, GS_F32, 1, 1, T, 1);
			q = gs_binop(g, GS_MUL, q, attn_scale);
		}
		cur = attention(b, il, q, k, v, false);
		cur = mm(b, E, cur);
		if (last) {
			cur = out_rows(b, cur);
			inpSA = out_rows(b, inpSA);
		}
		gs_t ffn_inp = gs_binop(g, GS_ADD, cur, inpSA);
		cur = norm(b, ffn_inp, weight(b, E, 1));
		if (m->n_experts && llama4_moe_layer(m, il)) {
			gs_t moe = moe_ffn_opts(b, cur, -1, &o);
			gs_t sh = ffn_glu(b, cur, m->expert_ffn ? m->expert_ffn : m->ffn);
			cur = gs_binop(g, GS_ADD, moe, sh);
		} else {
			cur = ffn_glu(b, cur, m->ffn);
		}
		inpL = gs_binop(g, GS_ADD, cur, ffn_inp);
	}
	return lm_head(b, inpL, false);
}

/* Phi-3 / Phi-4 (phi3.cpp): one fused QKV projection whose Q, K and V are
 * views, Q scaled after RoPE, one fused gate/up projection split by the
 * SwiGLU; the residual added first. */
static gs_t build_phi3(lb *b)
{
	gsim *g = b->g;
	const model_desc *m = b->m;
	int64_t T = b->T, E = b->E, H = m->n_heads;
	int64_t hd = m->head_dim_k ? m->head_dim_k : E / (H ? H : 1);

	gs_t inpL = inp_embd(b);
	for (uint32_t il = 0; il < m->n_layers; il++) {
		layer_begin(b, il);
		int64_t nkv = kv_heads(m, il);
		bool last = il == m->n_layers - 1;
		gs_t residual = inpL;
		gs_t cur = norm(b, inpL, weight(b, E, 1));
		gs_t qkv = mm(b, hd * (H + 2 * nkv), cur);
		size_t es = gs_row_size(GS_F32, hd), nb1 = gs_nb(g, qkv, 1);
		gs_t q = gs_view(g, qkv, hd, H, T, 1, es, nb1, nb1 * T, 0);
		gs_t k = gs_view(g, qkv, hd, nkv, T, 1, es, nb1, nb1 * T, gs_row_size(GS_F32, hd * H));
		gs_t v = gs_view(g, qkv, hd, nkv, T, 1, es, nb1, nb1 * T, gs_row_size(GS_F32, hd * (H + nkv)));
		q = rope(b, q);
		k = rope(b, k);
		q = gs_unop(g, GS_SCALE, q);
		cur = attention(b, il, q, k, v, false);
		cur = mm(b, E, cur);
		if (last) {
			cur = out_rows(b, cur);
			residual = out_rows(b, residual);
		}
		cur = gs_binop(g, GS_ADD, cur, residual);
		residual = cur;
		cur = norm(b, cur, weight(b, E, 1));
		gs_t up = mm(b, 2 * (int64_t)m->ffn, cur);
		gs_t act = gs_op4(g, GS_GLU, GS_F32, (int64_t[4]){m->ffn, T, 1, 1}, up, -1, -1, -1);
		cur = mm(b, E, act);
		inpL = gs_binop(g, GS_ADD, residual, cur);
	}
	return lm_head(b, inpL, false);
}

bool plan_lgraph_supported(const model_desc *m)
{
	if (!m)
		return false;
	enum arch_kind k = kind_of(m->arch);
	if (k == A_UNKNOWN)
		return false;
	if (m->recurrent != (k == A_MAMBA || k == A_MAMBA2 || k == A_GRANITEHYBRID || k == A_LFM2 || k == A_JAMBA ||
			     k == A_NEMOTRON_H || k == A_FALCON_H1 || k == A_QWEN3NEXT || k == A_QWEN35))
		return false;
	if (m->mla && k != A_DEEPSEEK2)
		return false;
	if ((variant_of(m->arch) & V_DSA) && (!m->indexer_heads || !m->indexer_key_len || !m->q_lora_rank))
		return false;
	bool listed = false;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		listed |= !strcmp(m->arch, kinds[i].name);
	if (m->n_experts && k != A_QWEN3MOE && k != A_COHERE2MOE && k != A_SMALLTHINKER && k != A_DEEPSEEK2 && k != A_JAMBA &&
	    k != A_GPTOSS && k != A_LLAMA4 && k != A_GRANITEHYBRID && k != A_QWEN3NEXT && k != A_QWEN35 && !listed)
		return false;
	if (k == A_GPTOSS && !m->n_experts)
		return false;
	return true;
}

uint64_t plan_lgraph_build(gsim *g, const model_desc *m, const lgraph_params *p)
{
	enum arch_kind k = kind_of(m->arch);
	if (k == A_UNKNOWN || !m->n_layers)
		return 0;
	lb b = {.g = g, .m = m, .p = p, .E = m->hidden, .pos = -1, .out_ids = -1, .s_copy = -1};
	for (int s = 0; s < 2; s++)
		b.k_idxs[s] = b.v_idxs[s] = b.mask[s] = b.k_rot[s] = b.v_rot[s] = -1;
	uint64_t T = p->n_ubatch ? p->n_ubatch : 512;
	/* min(n_ctx, n_ubatch) over all streams, made a multiple of the
	 * sequences the reserved ubatch holds (llama_context::graph_reserve) */
	uint64_t n_ctx = p->cells * (p->n_stream > 1 ? p->n_stream : 1);
	if (n_ctx && T > n_ctx)
		T = n_ctx;
	if (p->n_seq > 1)
		T = (T + p->n_seq - 1) / p->n_seq * p->n_seq;
	b.T = (int64_t)T;
	b.iswa = m->swa_window && m->layer_swa;
	if (p->layer_dev) {
		bool full = true;
		for (uint32_t il = 0; il <= m->n_layers; il++)
			full = full && p->layer_dev[il] != p->n_dev - 1;
		b.pin_norms = full || T < 32;
	}
	gs_reset(g);
	if (k == A_QWEN3NEXT || k == A_QWEN35)
		build_qwen3next(&b, k == A_QWEN3NEXT);
	else if (k == A_NEMOTRON_H)
		build_nemotron_h(&b);
	else if (k == A_FALCON_H1)
		build_falcon_h1(&b);
	else if (k == A_COHERE2 || k == A_COHERE2MOE)
		build_cohere2(&b, k == A_COHERE2MOE);
	else if (m->recurrent)
		build_recurrent(&b, k);
	else if (k == A_GPTOSS)
		build_gptoss(&b);
	else if (k == A_GEMMA3N)
		build_gemma3n(&b);
	else if (k == A_GEMMA4)
		build_gemma4(&b);
	else if (k == A_LLAMA4)
		build_llama4(&b);
	else if (k == A_PHI3)
		build_phi3(&b);
	else
		build_decoder(&b, k);
	return 1;
}

/* A plan asks for the same graph many times (every layer split it tries,
 * every piece of advice): the last few answers are kept per thread. */
typedef struct memo {
	const model_desc *m;
	uint64_t shape[8];
	lgraph_params p;
	uint64_t bytes;
} memo;

static void fingerprint(const model_desc *m, uint64_t f[8])
{
	f[0] = m->n_layers | (uint64_t)m->hidden << 32;
	f[1] = m->n_heads | (uint64_t)m->n_kv_heads << 32;
	f[2] = m->head_dim_k | (uint64_t)m->head_dim_v << 32;
	f[3] = m->ffn | (uint64_t)m->vocab << 32;
	f[4] = m->n_experts | (uint64_t)m->n_experts_used << 32;
	f[5] = m->expert_ffn ^ (uint64_t)m->shared_expert_ffn << 16 ^ (uint64_t)m->swa_window << 32 ^
	       (uint64_t)m->indexer_heads << 8 ^ (uint64_t)m->indexer_top_k << 40 ^ (uint64_t)m->indexer_key_len << 20;
	f[6] = (uintptr_t)m->arch ^ (uintptr_t)m->layer_swa ^ (uintptr_t)m->layer_kv_heads;
	f[7] = m->q_lora_rank ^ (uint64_t)m->n_dense_lead << 24 ^ (uint64_t)m->n_expert_shared << 40 ^
	       (uint64_t)m->expert_gating << 56 ^ (uint64_t)m->mla << 60 ^ (uint64_t)m->has_tensors << 61 ^
	       (uint64_t)m->expert_weights_norm << 62 ^ (uint64_t)m->moe_step << 32 ^
	       (uint64_t)m->expert_ungated << 63;
	f[6] ^= (uintptr_t)m->layer_v_from_k ^ (uint64_t)m->embd_per_layer << 48 ^ (uint64_t)m->head_dim_k_swa << 36;
}

static bool same_params(const lgraph_params *a, const lgraph_params *b)
{
	return a->cells == b->cells && a->n_ubatch == b->n_ubatch && a->n_seq == b->n_seq &&
	       a->n_stream == b->n_stream && a->swa_cells == b->swa_cells &&
	       a->flash_attn == b->flash_attn && a->kv_k == b->kv_k && a->kv_v == b->kv_v && a->alignment == b->alignment;
}

uint64_t plan_lgraph_compute_bytes(const model_desc *m, const lgraph_params *p)
{
	static _Thread_local memo cache[32];
	static _Thread_local unsigned next;
	if (!plan_lgraph_supported(m))
		return 0;
	uint64_t f[8];
	fingerprint(m, f);
	for (unsigned i = 0; i < sizeof cache / sizeof cache[0]; i++)
		if (cache[i].m == m && !memcmp(cache[i].shape, f, sizeof f) && same_params(&cache[i].p, p))
			return cache[i].bytes;
	/* the last graph's size: the next one (the same model) is reserved at
	 * once instead of growing by doubling */
	static _Thread_local size_t size_hint;
	gsim *g = gs_new();
	gs_reserve(g, size_hint);
	uint64_t r = plan_lgraph_build(g, m, p) ? gs_alloc_peak(g, p->alignment ? p->alignment : 32) : 0;
	if (gs_size(g) > size_hint)
		size_hint = gs_size(g);
	gs_free(g);
	memo *e = &cache[next++ % (sizeof cache / sizeof cache[0])];
	e->m = m;
	memcpy(e->shape, f, sizeof f);
	e->p = *p;
	e->bytes = r;
	return r;
}

/* The split graph's buffers, memoised like the single-device ones (the
 * placement search asks for the same split several times). */
typedef struct dev_memo {
	const model_desc *m;
	uint64_t shape[8], devs; /* devs: a hash of layer_dev */
	lgraph_params p;
	int n_copies;
	bool op_offload;
	double weight_scale;
	uint64_t peak[PLAN_MAX_GPUS + 1];
} dev_memo;

static uint64_t devs_hash(const lgraph_params *p, uint32_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (uint32_t i = 0; i <= n; i++)
		h = (h ^ (uint8_t)p->layer_dev[i]) * 1099511628211ULL;
	return h ^ (uint64_t)p->n_dev << 56;
}

bool plan_lgraph_device_bytes(const model_desc *m, const lgraph_params *p, int n_copies, bool op_offload,
			      double weight_scale, uint64_t *peak)
{
	static _Thread_local dev_memo cache[16];
	static _Thread_local unsigned next;
	if (!plan_lgraph_supported(m) || !p->layer_dev || p->n_dev < 1 || p->n_dev > PLAN_MAX_GPUS + 1)
		return false;
	uint64_t f[8], h = devs_hash(p, m->n_layers);
	fingerprint(m, f);
	for (unsigned i = 0; i < sizeof cache / sizeof cache[0]; i++) {
		dev_memo *e = &cache[i];
		if (e->m == m && e->devs == h && e->n_copies == n_copies && e->op_offload == op_offload &&
		    e->weight_scale == weight_scale &&
		    !memcmp(e->shape, f, sizeof f) && same_params(&e->p, p) && e->p.n_cpu_moe == p->n_cpu_moe) {
			memcpy(peak, e->peak, sizeof(uint64_t) * (size_t)p->n_dev);
			return true;
		}
	}
	gsim *g = gs_new();
	bool ok = plan_lgraph_build(g, m, p) != 0;
	if (ok) {
		gs_sched_opts o = {.n_dev = p->n_dev, .n_copies = n_copies, .offload_cpu_weights = op_offload,
				   .alignment = p->alignment, .weight_scale = weight_scale};
		gs_sched_peaks(g, &o, peak);
	}
	gs_free(g);
	if (!ok)
		return false;
	dev_memo *e = &cache[next++ % (sizeof cache / sizeof cache[0])];
	e->m = m;
	memcpy(e->shape, f, sizeof f);
	e->devs = h;
	e->p = *p;
	e->p.layer_dev = NULL;
	e->n_copies = n_copies;
	e->op_offload = op_offload;
	e->weight_scale = weight_scale;
	memcpy(e->peak, peak, sizeof(uint64_t) * (size_t)p->n_dev);
	return true;
}

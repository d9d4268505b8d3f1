/*
 * memory.c: the KV cache, the compute buffer and the runtime overhead,
 * reproducing llama.cpp's own buffer arithmetic.
 */
#include "plan/plan.h"
#include "plan/lgraph.h"

#include <stdlib.h>
#include <string.h>

/* KV cache types: weights per block and bytes per block
 * (ggml-org/llama.cpp ggml/src/ggml-common.h: block_q8_0 = f16 d + 32 int8
 * = 34 B, block_q4_0 = f16 d + 16 B = 18 B, ...). */
static const struct {
	const char *name;
	uint32_t block, bytes;
} kv_types[] = {
	[PLAN_KV_F16] = {"f16", 1, 2},      [PLAN_KV_BF16] = {"bf16", 1, 2},
	[PLAN_KV_F32] = {"f32", 1, 4},      [PLAN_KV_Q8_0] = {"q8_0", 32, 34},
	[PLAN_KV_Q5_1] = {"q5_1", 32, 24},  [PLAN_KV_Q5_0] = {"q5_0", 32, 22},
	[PLAN_KV_Q4_1] = {"q4_1", 32, 20},  [PLAN_KV_Q4_0] = {"q4_0", 32, 18},
	[PLAN_KV_IQ4_NL] = {"iq4_nl", 32, 18},
};

const char *plan_kv_type_name(plan_kv_type t)
{
	return kv_types[t].name;
}

int plan_kv_type_parse(const char *s, plan_kv_type *t)
{
	for (size_t i = 0; i < sizeof kv_types / sizeof kv_types[0]; i++) {
		if (str_ieq(s, kv_types[i].name)) {
			*t = (plan_kv_type)i;
			return 0;
		}
	}
	if (str_ieq(s, "fp16") || str_ieq(s, "float16")) {
		*t = PLAN_KV_F16;
		return 0;
	}
	if (str_ieq(s, "fp8") || str_ieq(s, "q8")) { /* vLLM's fp8 cache: one byte per element */
		*t = PLAN_KV_Q8_0;
		return 0;
	}
	return GW_EINVAL;
}

uint64_t plan_kv_row_bytes(plan_kv_type t, uint64_t n)
{
	uint64_t blocks = (n + kv_types[t].block - 1) / kv_types[t].block;
	return blocks * kv_types[t].bytes;
}

static uint64_t pad_to(uint64_t x, uint64_t p)
{
	return (x + p - 1) / p * p;
}

/*
 * llama.cpp pads the context to a multiple of 256 cells
 * (src/llama-context.cpp: n_ctx = GGML_PAD(n_ctx, 256); the same padding the
 * --fit search rounds to, common/fit.cpp).  n_seq sequences share one
 * unified cache of ctx x n_seq cells.
 */
uint64_t plan_kv_cells(uint64_t ctx, uint32_t n_seq)
{
	if (n_seq == 0)
		n_seq = 1;
	return pad_to(ctx * n_seq, 256);
}

/*
 * Cells of one stream of a sliding-window layer: llama.cpp sizes the
 * window cache min(stream, window x (sequences sharing the stream) +
 * n_ubatch), padded to 256 (src/llama-kv-cache-iswa.cpp: size_swa =
 * GGML_PAD(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256));
 * Ollama's cache keeps window + 1 cells per sequence when there are several
 * (ollama/ollama kvcache/causal.go, Causal.Init).
 */
uint64_t plan_kv_swa_cells(const model_desc *m, const plan_kv_shape *s)
{
	if (!m->swa_window)
		return s->cells;
	uint64_t per = s->n_stream > 1 ? 1 : (s->n_seq ? s->n_seq : 1);
	uint64_t c = (m->swa_window + (uint64_t)s->swa_extra_per_seq) * per + s->ubatch;
	c = pad_to(c, 256);
	return c < s->cells ? c : s->cells;
}

/*
 * Per layer: row_size(type_k, head_dim_k * n_kv_heads) + the same for V,
 * times the layer's cells, times the streams (src/llama-kv-cache.cpp: K and
 * V are [n_embd_gqa, kv_size, n_stream]; kv_unified = false gives each
 * sequence its own stream of n_ctx / n_seq_max cells, true one stream of
 * n_ctx).  Sliding-window layers hold plan_kv_swa_cells per stream.
 */
uint64_t plan_kv_shape_bytes(const model_desc *m, uint32_t first, uint32_t count, const plan_kv_shape *s,
			     plan_kv_type t)
{
	uint64_t total = 0;
	uint64_t ns = s->n_stream ? s->n_stream : 1;
	uint64_t swa_cells = plan_kv_swa_cells(m, s);
	for (uint32_t il = first; il < first + count && il < m->n_layers; il++) {
		if (model_layer_recurrent(m, il)) {
			total += plan_rs_bytes(m, s->n_seq);
			continue;
		}
		uint64_t nkv = m->layer_kv_heads ? m->layer_kv_heads[il] : m->n_kv_heads;
		if (nkv == 0)
			continue;
		uint64_t c = (m->swa_window && m->layer_swa && m->layer_swa[il]) ? swa_cells : s->cells;
		/* MLA keeps the latent K only; V is a view of it */
		total += (plan_kv_row_bytes(t, nkv * m->head_dim_k) +
			  (m->mla ? 0 : plan_kv_row_bytes(t, nkv * m->head_dim_v))) * c * ns;
	}
	return total;
}

/* One unified cache of `cells` cells (sliding-window layers:
 * min(cells, window*n_seq+batch) padded to 256). */
uint64_t plan_kv_bytes(const model_desc *m, uint32_t first, uint32_t count, uint64_t cells,
		       uint32_t n_seq, uint32_t batch, plan_kv_type t)
{
	plan_kv_shape s = {.cells = cells, .n_stream = 1, .n_seq = n_seq ? n_seq : 1, .ubatch = batch};
	return plan_kv_shape_bytes(m, first, count, &s, t);
}

/*
 * llama.cpp's KV layout for ctx cells per sequence and n_seq sequences
 * (src/llama-context.cpp): n_ctx = pad(ctx x n_seq, 256); unified: one
 * stream of n_ctx; else n_ctx_seq = pad(n_ctx / n_seq, 256) per stream.
 */
void plan_kv_shape_llamacpp(plan_kv_shape *s, uint64_t ctx, uint32_t n_seq, bool unified, uint32_t ubatch)
{
	if (n_seq == 0)
		n_seq = 1;
	uint64_t n_ctx = pad_to(ctx * n_seq, 256);
	memset(s, 0, sizeof *s);
	s->n_seq = n_seq;
	s->ubatch = ubatch;
	if (unified || n_seq == 1) {
		s->cells = n_ctx;
		s->n_stream = 1;
	} else {
		s->cells = pad_to(n_ctx / n_seq, 256);
		s->n_stream = n_seq;
	}
}

/*
 * Recurrent state of one layer for n_seq sequences (llama.cpp
 * src/llama-memory-recurrent.cpp, f32 rows of n_embd_r + n_embd_s per
 * sequence; src/llama-hparams.cpp): the conv state (d_conv - 1) x
 * (d_inner + 2 x groups x d_state) and the SSM state d_state x d_inner.
 */
uint64_t plan_rs_bytes(const model_desc *m, uint32_t n_seq)
{
	uint64_t conv = m->ssm_conv ? m->ssm_conv - 1 : 0;
	uint64_t r = conv * ((uint64_t)m->ssm_inner + 2ULL * m->ssm_groups * m->ssm_state);
	uint64_t st = (uint64_t)m->ssm_state * m->ssm_inner;
	return 4 * (r + st) * (n_seq ? n_seq : 1);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * Compute buffer of the worst-case graph for `batch` tokens.  Without flash
 * attention it is Ollama's closed form (ollama/ollama fs/ggml/ggml.go
 * GraphSize, "llama" and "qwen2" cases), dominated by the f32 KQ matrix
 * 4*b*c*heads:
 *   llama: max(4b(1 + 4e + c(1 + h)), 4b(e + V))
 * which gives llama.cpp's own 560.00 MiB for Llama-3-8B at c 8192, b 512
 * (XiongjieDai/GPU-Benchmarks-on-LLM-Inference, 4090_v3.ipynb) and 70.50 MiB
 * for Llama-2-7B at 512 (4090_v2.ipynb).  The same form is used for every
 * dense architecture with head_dim-correct sizes; gemma's wider heads use
 * Ollama's gemma case.
 *
 * With flash attention the KQ matrix is never materialised; what remains
 * is the f16 mask (c x b), the layer's intermediates and the logits.
 * Without it, the current llama.cpp build prints 2-3% more than this form
 * (66.50 vs 64.50 MiB, 147.01 vs 144.00 MiB in the oracle test); the form
 * is kept because it matches the GPU logs of the validation data exactly.
 *
 * Over several GPUs llama.cpp enables pipeline parallelism with 4 graph
 * copies (GGML_SCHED_MAX_COPIES = 4), so each GPU also holds extra copies
 * of its inputs: 3 more KQ masks (f32 c x b in b2824) and 4 hidden-state
 * inputs (f32 b x e).  For Llama-3-8B at 8192 that is 3*16 + 4*8 = 80 MiB,
 * matching the measured 640 vs 560 MiB per GPU (3090_2_v3.ipynb) [derived].
 */
uint64_t plan_compute_bytes(const model_desc *m, uint64_t cells, uint32_t batch, bool flash_attn,
			    bool multi)
{
	uint64_t b = batch ? batch : 512, c = cells, e = m->hidden, h = m->n_heads;
	uint64_t v = m->vocab, hk = m->head_dim_k ? m->head_dim_k : (h ? e / h : 128);
	uint64_t logits = 4 * b * (e + v);
	uint64_t bytes;
	bool gemma = m->arch && !strncmp(m->arch, "gemma", 5);

	if (!flash_attn) {
		uint64_t attn;
		if (gemma)
			attn = 4 * b * (2 + c + c * h + 2 * e + 2 * hk * h);
		else
			attn = 4 * b * (1 + 4 * e + c * (1 + h));
		/* heads wider than hidden/heads (qwen3, gemma) widen q and attn out */
		if (!gemma && h * hk > e)
			attn += 4 * b * 2 * (h * hk - e);
		bytes = max_u64(attn, logits);
	} else {
		/* With flash attention the output phase bounds the graph: the
		 * logits plus two f32 hidden states, 4b(2e + V); llama.cpp
		 * (llama-cpp-python 0.3.36) printed exactly that, 66.50 MiB for
		 * e 1024, V 32000, b 512 at every context from 512 to 16384
		 * (tests/oracle/llamacpp_oracle.py). */
		uint64_t attn = 4 * b * (1 + 4 * e + c) + 2 * c * pad_to(b, 64);
		if (h * hk > e)
			attn += 4 * b * 2 * (h * hk - e);
		bytes = max_u64(attn, logits + 4 * b * e);
	}
	if (multi)
		bytes += 3 * 4 * b * c + 4 * 4 * b * e;
	return bytes;
}

/*
 * Runtime memory an engine uses beyond its own buffers on each GPU.
 * - llama.cpp and Ollama on CUDA/ROCm: 457 MiB, the CUDA context and
 *   driver reserve Ollama sets aside per GPU (ollama/ollama ml/device.go
 *   MinimumMemory); on Metal 512 MiB (same file).
 * - vLLM: non-torch memory measured at 1.79 GiB on an H100 at TP=1 and
 *   3.58 GiB at TP=2 (NCCL buffers) (vllm-project/vllm pull 10511, via
 *   shared/reference/vram-planner.md section 0).
 * - transformers: the CUDA context only, as for llama.cpp.
 */
uint64_t plan_overhead_bytes(plan_engine e, const plan_gpu *g, size_t n_gpus)
{
	if (e == PLAN_ENGINE_VLLM)
		return n_gpus > 1 ? (uint64_t)(3.58 * GiB) : (uint64_t)(1.79 * GiB);
	if (g && g->unified_memory)
		return 512 * MiB;
	return 457 * MiB;
}

/*
 * Compute buffer as llama.cpp's graph allocator reserves it (builds with
 * graph_phases, 0c1e570): the worst-case graph for b = min(batch, cells)
 * tokens, where ggml-alloc frees each intermediate after its last use, so
 * the buffer is the peak over the graph's phases of what is live at once
 * [derived from src/llama-graph.cpp and ggml/src/ggml-alloc.c; checked
 * against the printed buffers by tests/e2e/oracle.t]:
 *   inputs live through every layer: the KQ masks, f16 [cells, b] with
 *     flash attention (f32 without), one per cache (full, sliding window);
 *   attention with flash attention: residual, normed input, Q, K, V
 *     (f32 [dims, b]), then Q and the f32 result;
 *   attention without: residual + the f32 KQ matrix [cells, b, heads]
 *     + its product with V;
 *   feed-forward: residual + gate, up and their product, three f32
 *     [n_ff, b] (MoE: [n_ff_exp, used experts, b], plus the routing);
 *   recurrent (Mamba-2) layers: the input projection, the conv window and
 *     the scan's output and state;
 *   output: two f32 hidden states and the f32 logits [vocab, b], after
 *     the masks are freed.
 * Split over several GPUs, pipeline parallelism keeps 3 more copies of
 * the masks and 4 of the hidden-state input per GPU.
 */
/* The KQ mask inputs: f16 with flash attention (f32 without), one per
 * cache (full, sliding window): [stream cells, b / streams, 1, streams],
 * i.e. cells x b elements. */
static uint64_t mask_bytes(const model_desc *m, const plan_kv_shape *s, uint32_t batch, bool flash_attn)
{
	uint64_t b = batch, el = flash_attn ? 2 : 4, c = s->cells;
	bool any_full = false, any_swa = false;
	for (uint32_t il = 0; il < m->n_layers; il++) {
		if (model_layer_recurrent(m, il))
			continue;
		uint64_t nkv = m->layer_kv_heads ? m->layer_kv_heads[il] : m->n_kv_heads;
		if (!nkv)
			continue;
		if (m->swa_window && m->layer_swa && m->layer_swa[il])
			any_swa = true;
		else
			any_full = true;
	}
	uint64_t swa_c = any_swa ? plan_kv_swa_cells(m, s) : c;
	return (any_full ? el * c * b : 0) + (any_swa ? el * swa_c * b : 0);
}

static uint64_t phase_bytes(const model_desc *m, const plan_kv_shape *s, bool flash_attn, bool multi)
{
	uint64_t c = s->cells, e = m->hidden, h = m->n_heads;
	uint64_t b = plan_graph_tokens(s);
	uint32_t n_seq = s->n_seq;
	uint64_t v = m->vocab;
	uint64_t hk = m->mla ? m->head_dim_k : m->head_dim_k ? m->head_dim_k : (h ? e / h : 128);
	uint64_t hv = m->mla ? m->head_dim_v : m->head_dim_v ? m->head_dim_v : hk;
	bool any_attn = false, any_rec = false;
	uint64_t nkv_max = 0;
	for (uint32_t il = 0; il < m->n_layers; il++) {
		if (model_layer_recurrent(m, il)) {
			any_rec = true;
			continue;
		}
		uint64_t nkv = m->layer_kv_heads ? m->layer_kv_heads[il] : m->n_kv_heads;
		if (!nkv)
			continue;
		any_attn = true;
		nkv_max = nkv > nkv_max ? nkv : nkv_max;
	}
	uint64_t masks = mask_bytes(m, s, (uint32_t)b, flash_attn);

	/* widths (f32 elements per token) live at each phase's peak; fitted
	 * per tensor to the buffers llama.cpp 0c1e570 printed for llama-type
	 * graphs of varied hidden size, heads, KV heads, head size, FFN width,
	 * vocabulary and context (tests/oracle/llamacpp_oracle.py --sweep):
	 * attention (FA) 3e + q + max(q_out, K + V); attention (no FA)
	 * heads x cells + 3e + 2q + K + V; feed-forward 4e + 3 n_ff. */
	uint64_t q = h * hk, q_out = h * hv, kvw = nkv_max * (hk + (m->mla ? 0 : hv));
	uint64_t peak = 4 * b * (2 * e + v); /* output */
	/* With flash attention and heads wider than the hidden size (Gemma,
	 * Qwen3: q = 2e) the logits land above the masks and two q-wide
	 * blocks the allocator cannot reuse [fitted to the oracle: 75.52 and
	 * 78.51 MiB where the plain output phase gives 66.50] */
	uint64_t qw = m->mla ? h * m->mla_head_dim_v : q; /* MLA: the decompressed heads */
	/* ... only where a dense feed-forward layer precedes it (all-MoE
	 * Qwen3-MoE prints the plain 66.50; DeepSeek's leading dense block
	 * does not) */
	bool dense_ffn = !m->n_experts;
	for (uint32_t il = 0; !dense_ffn && m->layer_expert_bytes && il < m->n_layers; il++)
		dense_ffn = m->layer_expert_bytes[il] == 0 && !model_layer_recurrent(m, il);
	if (flash_attn && qw > e && dense_ffn)
		peak = masks + 4 * b * (2 * e + 2 * qw + v);
	if (any_attn) {
		uint64_t attn;
		if (flash_attn)
			attn = 4 * b * (3 * e + q + max_u64(q_out, kvw));
		else
			attn = 4 * b * (h * c + 3 * e + 2 * q + kvw);
		peak = max_u64(peak, masks + attn);
	}
	uint64_t ffn;
	if (m->n_experts) {
		uint64_t fe = m->expert_ffn ? m->expert_ffn : m->ffn, k = m->n_experts_used ? m->n_experts_used : 1;
		ffn = 4 * b * (4 * e + 3 * fe * k) + 8 * b * m->n_experts;
	} else {
		ffn = 4 * b * (4 * e + 3 * (uint64_t)m->ffn);
	}
	peak = max_u64(peak, masks + ffn);
	if (any_rec) {
		uint64_t gs = 2ULL * m->ssm_groups * m->ssm_state, xbc = (uint64_t)m->ssm_inner + gs;
		uint64_t conv = m->ssm_conv ? m->ssm_conv - 1 : 0;
		uint64_t in_proj = 2ULL * m->ssm_inner + gs + m->ssm_dt_rank;
		uint64_t rec = 4 * b * (e + in_proj + xbc + m->ssm_inner) + 4 * (conv + b) * xbc +
			       4ULL * m->ssm_state * m->ssm_inner * (n_seq ? n_seq : 1);
		peak = max_u64(peak, masks + rec);
	}
	if (multi)
		peak += 3 * masks + 4 * 4 * b * e;
	return peak;
}

/* Tokens of the worst-case ubatch llama.cpp reserves: min(n_ctx, n_ubatch)
 * over every stream's cells (src/llama-context.cpp sched_reserve). */
uint64_t plan_graph_tokens(const plan_kv_shape *s)
{
	uint64_t b = s->ubatch ? s->ubatch : 512;
	uint64_t n_ctx = s->cells * (s->n_stream ? s->n_stream : 1);
	return n_ctx && b > n_ctx ? n_ctx : b;
}

uint64_t plan_compute_graph_bytes(const model_desc *m, const plan_kv_shape *s, bool flash_attn, plan_kv_type kv,
				  bool multi)
{
	if (plan_lgraph_supported(m)) {
		/* CUDA buffers align tensors to 128 bytes */
		lgraph_params p = {.cells = s->cells, .n_ubatch = s->ubatch, .n_seq = s->n_seq, .n_stream = s->n_stream,
				   .swa_cells = plan_kv_swa_cells(m, s), .flash_attn = flash_attn, .kv_k = kv, .kv_v = kv,
				   .alignment = 128};
		uint64_t bytes = plan_lgraph_compute_bytes(m, &p);
		if (bytes) {
			if (multi) {
				/* pipeline parallelism: 3 more copies of the masks and
				 * 4 of the hidden-state input (see plan_compute_bytes) */
				uint64_t b = plan_graph_tokens(s);
				bytes += 3 * mask_bytes(m, s, (uint32_t)b, flash_attn) + 4 * 4 * b * m->hidden;
			}
			return bytes;
		}
	}
	return phase_bytes(m, s, flash_attn, multi);
}

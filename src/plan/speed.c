/*
 * speed.c: decode and prefill tokens/s from the bytes each device reads per
 * token and the FLOPs of a batch, with the constants of data/speed.tsv: one
 * row per engine build x backend x GPU architecture family.
 *
 * Today's llama.cpp (build column "latest"), per token of decode:
 *   t = tok_us + n_blocks * layer_us + (GPUs - 1) * gpu_us
 *       + sum_dev weights_dev / (peak_dev * bw_<kernel>)
 *       + sum_dev (KV read + scores) / (peak_dev * bw_f16)
 *       + host_bytes / (host_bw * cpu bw fraction)
 * The weight-format kernel family picks the fraction of peak bandwidth the
 * matrix-vector kernels reach (ggml-cuda mmvq.cu for quantized types, mmv /
 * cuBLAS for F16; the Vulkan mul_mat_vec shaders; Metal's mul_mv kernels):
 * k-quants and i-quants, the legacy Q4_0...Q8_0 blocks, MXFP4, F16.  The KV
 * cache is read at its average fill (half the context); without flash
 * attention the KQ scores (n_heads x position x F32) are also written and
 * read back by the softmax and the KQV product [derived: ggml's non-FA
 * attention graph, llama-graph.cpp build_attn_mha].
 *
 * Prefill, per prompt token, over a layer split run one GPU after another:
 *   t = sum_dev share_dev * (2 x active params / (R_dev * pp_q_eff)
 *                            + attention FLOPs / (fp16_dev * attn_eff))
 * R is the peak of the kernel that runs: quantized weights through int8
 * MMQ on CUDA/ROCm (ggml-cuda mmq.cu ggml_cuda_should_use_mmq: int8 MMA
 * from Turing on, dp4a before; MFMA on CDNA, WMMA on RDNA3/4), through
 * dequantise + fp16 cooperative-matrix GEMM on Vulkan, simdgroup matrices
 * at the FP32 rate on Apple (no separate fp16 tensor rate), oneDNN/XMX on
 * SYCL.  NVIDIA's int8 dense rate is 2x its full-rate fp16; the catalog's
 * fp16 column for GeForce is the halved FP32-accumulate rate, so GeForce
 * int8 is 4x that column (NVIDIA Ada/Ampere/Blackwell whitepapers) while a
 * professional card's is 2x.  MoE counts the active experts only, plus a
 * fixed cost per MoE block (routing, mul_mat_id) in decode and prefill; in
 * prefill the experts' GEMMs run at the fill their tokens per expert give
 * (expert_tile_fill below).
 *
 * Several GPUs: llama.cpp's layer split, the default: decode adds each
 * device's bytes over its own bandwidth plus gpu_us per extra GPU (the
 * hand-over of the activations); prefill runs each device's share of the
 * layers one after the other.  Row split is not modelled: current builds
 * dropped it from CUDA (ggml-org/llama.cpp pull 24216, "remove -sm row").
 *
 * The CPU backend (no GPU, --backend cpu, or no layer offloaded) reads the
 * whole model from host memory at the cpu row's fraction of the host
 * bandwidth and runs prefill on rq->cpu_threads threads (plan_speed_cpu).
 *
 * llama.cpp@b2824 keeps the 2024 closed form (its row says legacy):
 *   t = n_blocks * c + sum_dev gpu_bytes_dev / min(0.92 * peak_dev, 1200 GB/s)
 *       + host_bytes / (host_bw * 0.55)
 * fitted to the 41 llama-bench tg rows of XiongjieDai/GPU-Benchmarks-on-
 * LLM-Inference (tests/validation/plan-measurements.tsv), prefill 2 x params
 * at 55% of the fp16 tensor peak.  Ollama, vLLM and transformers keep the
 * constants of their engine ops in the same closed form.
 */
#include "plan/engine.h"
#include "plan/speed.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEC_MULTI_PENALTY 0.02
/* Host RAM for the offloaded part: dual-channel DDR4-3200 = 2 channels x
 * 8 B x 3200 MT/s = 51.2 GB/s peak [derived]; llama.cpp's CPU matrix-vector
 * path reads weights at about half the peak DRAM bandwidth [assumption]. */
#define HOST_BW_DEFAULT_GBS 51.2
#define HOST_BW_FRACTION 0.50
/* Prefill of the closed form: 55% of the dense fp16 tensor peak. */
#define PREFILL_EFF 0.55
/* CPU backend threads when not given [assumption: a desktop's cores]. */
#define CPU_THREADS_DEFAULT 8

/* ---- backends ------------------------------------------------------------- */
static const char *const backend_names[] = {"auto", "cuda", "rocm", "vulkan", "metal", "sycl", "cpu"};

const char *plan_backend_name(plan_backend b)
{
	return (unsigned)b < sizeof backend_names / sizeof backend_names[0] ? backend_names[b] : "auto";
}

int plan_backend_parse(const char *s, plan_backend *b)
{
	for (size_t i = 1; s && i < sizeof backend_names / sizeof backend_names[0]; i++)
		if (str_ieq(s, backend_names[i]) || (i == PLAN_BACKEND_ROCM && str_ieq(s, "hip"))) {
			*b = (plan_backend)i;
			return 0;
		}
	return GW_EINVAL;
}

static const char *vendor_of(const gpu_spec *s, bool unified)
{
	if (s && s->vendor)
		return s->vendor;
	return unified ? "Apple" : "";
}

plan_backend plan_backend_default(const gpu_spec *s, bool unified_memory)
{
	const char *v = vendor_of(s, unified_memory);
	if (str_ieq(v, "AMD"))
		return PLAN_BACKEND_ROCM;
	if (str_ieq(v, "Apple"))
		return PLAN_BACKEND_METAL;
	if (str_ieq(v, "Intel"))
		return PLAN_BACKEND_SYCL;
	if (!s && !unified_memory)
		return PLAN_BACKEND_CUDA; /* --vram only: the common case */
	return PLAN_BACKEND_CUDA;
}

int plan_backend_check(plan_backend b, const gpu_spec *s, bool unified_memory, gw_error *err)
{
	const char *v = vendor_of(s, unified_memory);
	const char *need = NULL;
	switch (b) {
	case PLAN_BACKEND_CUDA: need = "NVIDIA"; break;
	case PLAN_BACKEND_ROCM: need = "AMD"; break;
	case PLAN_BACKEND_METAL: need = "Apple"; break;
	case PLAN_BACKEND_SYCL: need = "Intel"; break;
	default: return 0; /* Vulkan runs on every vendor's GPU, the CPU backend anywhere */
	}
	if (!*v || str_ieq(v, need))
		return 0;
	return gw_fail(err, GW_EINVAL, "--backend %s needs an %s GPU ('%s' is %s)", plan_backend_name(b), need,
		       s && s->name ? s->name : "this GPU", v);
}

const char *plan_speed_family(const gpu_spec *s, bool unified_memory)
{
	const char *v = vendor_of(s, unified_memory);
	if (str_ieq(v, "Apple"))
		return "apple";
	if (!s)
		return "*";
	const char *a = s->arch ? s->arch : "";
	if (str_ieq(v, "Intel"))
		return "xe";
	if (str_ieq(v, "AMD")) {
		if (strstr(a, "CDNA 3") || strstr(a, "CDNA3"))
			return "cdna3";
		if (strstr(a, "CDNA"))
			return "cdna";
		if (strstr(a, "RDNA 4") || strstr(a, "RDNA4"))
			return "rdna4";
		if (strstr(a, "RDNA 3") || strstr(a, "RDNA3"))
			return "rdna3";
		if (strstr(a, "RDNA"))
			return "rdna2";
		return "gcn";
	}
	if (s->cc_major < 0)
		return "*";
	int cc = s->cc_major * 10 + s->cc_minor;
	if (cc < 60)
		return "maxwell";
	if (cc < 70)
		return "pascal";
	if (cc < 75)
		return "volta";
	if (cc < 80)
		return "turing";
	if (cc == 80)
		return "ampere-hpc";
	if (cc < 89)
		return "ampere";
	if (cc < 90)
		return "ada";
	if (cc < 100)
		return "hopper";
	if (cc < 110)
		return "blackwell-hpc";
	return "blackwell";
}

/* The family with "-pro" for NVIDIA workstation and data-center cards of a
 * GeForce architecture (their clocks and power limits differ), with "-soc"
 * for an NVIDIA GPU that shares a SoC's memory and power (GB10), and with the
 * chip tier for Apple's Max (one die, 512-bit memory bus) and Ultra (two Max
 * dies joined by UltraFusion) chips: a single mul_mv kernel reaches a smaller
 * share of those wider memory systems, and an Ultra pays a cross-die cost per
 * kernel (data/speed.tsv rows apple-max, apple-ultra, and their sources). */
static const char *family_of(const gpu_spec *s, bool unified_memory, char *buf, size_t n)
{
	const char *f = plan_speed_family(s, unified_memory);
	if (!strcmp(f, "apple") && s && s->name) {
		bool ultra = strstr(s->name, " Ultra") != NULL, max = strstr(s->name, " Max") != NULL;
		if (ultra || max) {
			snprintf(buf, n, "apple-%s", ultra ? "ultra" : "max");
			return buf;
		}
	}
	bool split = !strcmp(f, "turing") || !strcmp(f, "ampere") || !strcmp(f, "ada") || !strcmp(f, "blackwell");
	if (split && s && unified_memory) /* GB10 (DGX Spark): a GPU in a ~140 W SoC on LPDDR5X */
		snprintf(buf, n, "%s-soc", f);
	else if (split && s && !(s->name && strstr(s->name, "GeForce")) && !s->laptop)
		snprintf(buf, n, "%s-pro", f);
	else
		snprintf(buf, n, "%s", f);
	return buf;
}

/* GeForce (and laptop) cards: the catalog's fp16 column is their halved
 * FP32-accumulate rate (docs/data-tables.md, gpus.tsv). */
static bool is_geforce(const gpu_spec *s)
{
	return s && s->vendor && str_ieq(s->vendor, "NVIDIA") &&
	       ((s->name && strstr(s->name, "GeForce")) || s->laptop);
}

const char *plan_speed_kernel(const char *q)
{
	if (!q || !*q)
		return "kq";
	if (!strncasecmp(q, "mxfp4", 5))
		return "mxfp4";
	if (!strncasecmp(q, "f16", 3) || !strncasecmp(q, "bf16", 4) || !strncasecmp(q, "f32", 3))
		return "f16";
	if ((q[0] == 'Q' || q[0] == 'q') && isdigit((unsigned char)q[1]) && q[2] == '_' &&
	    (q[3] == '0' || q[3] == '1'))
		return "legacy";
	return "kq";
}

/* ---- the table ---------------------------------------------------------------- */
static double num(const kb_table *t, size_t r, const char *col)
{
	const char *c = kb_cell(t, r, kb_col(t, col));
	return *c ? strtod(c, NULL) : 0;
}

static void row_from(const kb_table *t, size_t r, plan_speed_row *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->build, sizeof o->build, "%s", kb_cell(t, r, kb_col(t, "build")));
	snprintf(o->backend, sizeof o->backend, "%s", kb_cell(t, r, kb_col(t, "backend")));
	snprintf(o->family, sizeof o->family, "%s", kb_cell(t, r, kb_col(t, "family")));
	o->tok_us = num(t, r, "tok_us");
	o->layer_us = num(t, r, "layer_us");
	o->gpu_us = num(t, r, "gpu_us");
	o->bw_kq = num(t, r, "bw_kq");
	o->bw_legacy = num(t, r, "bw_legacy");
	o->bw_mxfp4 = num(t, r, "bw_mxfp4");
	o->bw_f16 = num(t, r, "bw_f16");
	o->bw_ceil_gbs = num(t, r, "bw_ceil_gbs");
	o->bw_kv = num(t, r, "bw_kv");
	snprintf(o->pp_q_rate, sizeof o->pp_q_rate, "%s", kb_cell(t, r, kb_col(t, "pp_q_rate")));
	o->pp_q_x = num(t, r, "pp_q_x");
	o->pp_q_eff = num(t, r, "pp_q_eff");
	o->pp_f_eff = num(t, r, "pp_f_eff");
	o->attn_eff_fa = num(t, r, "attn_eff_fa");
	o->attn_eff_nofa = num(t, r, "attn_eff_nofa");
	o->pp_layer_us = num(t, r, "pp_layer_us");
	o->moe_us = num(t, r, "moe_us");
	o->moe_pp_us = num(t, r, "moe_pp_us");
	o->legacy = !strcmp(kb_cell(t, r, kb_col(t, "model")), "2024");
	o->source = kb_cell(t, r, kb_col(t, "source"));
}

static long row_find_uncached(const kb_table *t, const char *build, plan_backend b, const char *family);

/* The last rows found: a plan looks the same (build, backend, family) up
 * once per device and per plan of the context search and the advice, some
 * seven hundred times for one `gpuwise plan` (plans run on one thread). */
#define ROW_CACHE 8
static struct {
	const kb_table *t;
	char build[24], family[16];
	plan_backend b;
	bool found;
	plan_speed_row row;
} row_cache[ROW_CACHE];
static unsigned row_cache_next;

int plan_speed_row_find(const char *build, plan_backend b, const char *family, plan_speed_row *out)
{
	const kb_table *t = kb_get_table("speed", NULL);
	if (!t)
		return GW_ENOENT;
	for (unsigned i = 0; i < ROW_CACHE; i++)
		if (row_cache[i].t == t && row_cache[i].b == b && !strcmp(row_cache[i].build, build) &&
		    !strcmp(row_cache[i].family, family)) {
			if (!row_cache[i].found)
				return GW_ENOENT;
			*out = row_cache[i].row;
			return 0;
		}
	long found = row_find_uncached(t, build, b, family);
	if (found >= 0)
		row_from(t, (size_t)found, out);
	if (strlen(build) < sizeof row_cache[0].build && strlen(family) < sizeof row_cache[0].family) {
		unsigned k = row_cache_next++ % ROW_CACHE;
		row_cache[k].t = t;
		row_cache[k].b = b;
		row_cache[k].found = found >= 0;
		if (found >= 0)
			row_cache[k].row = *out;
		snprintf(row_cache[k].build, sizeof row_cache[k].build, "%s", build);
		snprintf(row_cache[k].family, sizeof row_cache[k].family, "%s", family);
	}
	return found >= 0 ? 0 : GW_ENOENT;
}

/* The row index of (build, backend, family) in t: the family, then its stem
 * ("ada-pro" -> "ada", "apple-max" -> "apple", "blackwell-soc" ->
 * "blackwell"), then "*"; -1 when none. */
static long row_find_uncached(const kb_table *t, const char *build, plan_backend b, const char *family)
{
	long cb = kb_col(t, "build"), ck = kb_col(t, "backend"), cf = kb_col(t, "family");
	const char *bn = plan_backend_name(b);
	char stem[16];
	snprintf(stem, sizeof stem, "%s", family);
	static const char *const tiers[] = {"-pro", "-max", "-ultra", "-soc"};
	for (size_t i = 0; i < sizeof tiers / sizeof tiers[0]; i++) {
		size_t ls = strlen(stem), lt = strlen(tiers[i]);
		if (ls > lt && !strcmp(stem + ls - lt, tiers[i]))
			stem[ls - lt] = 0;
	}
	long hit[3] = {-1, -1, -1};
	for (size_t r = 0; r < t->nrows; r++) {
		if (strcmp(kb_cell(t, r, cb), build) || strcmp(kb_cell(t, r, ck), bn))
			continue;
		const char *f = kb_cell(t, r, cf);
		int k = !strcmp(f, family) ? 0 : !strcmp(f, stem) ? 1 : !strcmp(f, "*") ? 2 : -1;
		if (k >= 0 && hit[k] < 0)
			hit[k] = (long)r;
	}
	for (int k = 0; k < 3; k++)
		if (hit[k] >= 0)
			return hit[k];
	return -1;
}

static double kernel_bw(const plan_speed_row *row, const char *kernel)
{
	double f = !strcmp(kernel, "legacy") ? row->bw_legacy
		   : !strcmp(kernel, "mxfp4") ? row->bw_mxfp4
		   : !strcmp(kernel, "f16")   ? row->bw_f16
					      : row->bw_kq;
	return f > 0 ? f : row->bw_kq;
}

/* ---- bytes and FLOPs ------------------------------------------------------------ */
static double moe_read_fraction(const model_desc *m)
{
	if (m->n_experts > 0 && m->n_experts_used > 0)
		return (double)m->n_experts_used / (double)m->n_experts;
	return 1.0;
}

/* Weight bytes of layers [a, b) read per token: MoE reads only the active experts. */
static double weight_bytes(const work *wk, uint32_t a, uint32_t b)
{
	double f = moe_read_fraction(wk->m), sum = 0;
	for (uint32_t il = a; il < b; il++) {
		if (il >= wk->n) {
			sum += (double)wk->w.output_bytes;
			continue;
		}
		double x = (double)wk->w.layer_expert_bytes[il];
		sum += (double)wk->w.layer_bytes[il] - x + x * f;
	}
	return sum;
}

/* KV cache of layers [a, b) read per token: on average half full. */
static double kv_bytes(const work *wk, uint32_t a, uint32_t b)
{
	double sum = 0;
	for (uint32_t il = a; il < b && il < wk->n; il++)
		sum += (double)wk->layer_kv[il] * 0.5;
	return sum;
}

/* Bytes of layers [a, b) read per token in the closed form. */
static double read_bytes(const work *wk, uint32_t a, uint32_t b)
{
	return weight_bytes(wk, a, b) + kv_bytes(wk, a, b);
}

/* Mean KV position a token attends to in layer il (half the cells, at most
 * the sliding window); 0 for layers without attention (recurrent, MLP-only;
 * Falcon-H1's layers attend beside their recurrent mixer, and Gemma 3n's
 * shared-KV layers read an earlier layer's cache). */
static double mean_pos(const model_desc *m, uint32_t il, double cells)
{
	if (!model_layer_has_kv(m, il) && !(m->kv_from_start && il >= m->kv_from_start))
		return 0;
	double pos = cells / 2;
	if (m->swa_window && m->layer_swa && m->layer_swa[il] && pos > m->swa_window)
		pos = m->swa_window;
	return pos;
}

/* Without flash attention: the F32 KQ scores of layers [a, b) are written,
 * read and written by the softmax, and read by the KQV product (4 passes). */
static double score_bytes(const work *wk, uint32_t a, uint32_t b)
{
	double sum = 0;
	for (uint32_t il = a; il < b && il < wk->n; il++)
		sum += 4.0 * 4.0 * wk->m->n_heads * mean_pos(wk->m, il, (double)wk->cells / wk->nseq);
	return sum;
}

/*
 * Attention FLOPs per prompt token, averaged over a prompt of ctx tokens:
 * the token at position p multiplies its query with p keys (2 h dk p) and
 * the scores with p values (2 h dv p); the mean position is ctx / 2, and a
 * sliding-window layer sees at most its window.  [derived; at 131072 on
 * Llama-3.1-8B this is 2.1x the weight FLOPs]
 */
double plan_attn_flops(const model_desc *m, uint64_t ctx)
{
	double sum = 0;
	for (uint32_t il = 0; il < m->n_layers; il++) {
		uint32_t nkv = m->layer_kv_heads ? m->layer_kv_heads[il] : m->n_kv_heads;
		if (!nkv)
			continue;
		sum += 2.0 * m->n_heads * ((double)m->head_dim_k + m->head_dim_v) * mean_pos(m, il, (double)ctx);
	}
	return sum;
}

/*
 * Prefill FLOPs per prompt token of the routed experts, and how full the
 * expert GEMMs run.  llama.cpp's mul_mat_id gathers, per ubatch, the tokens
 * routed to each expert and runs one quantized GEMM per expert (ggml-cuda
 * mmid / mmq.cu; Vulkan and Metal mul_mm_id likewise): an expert gets on
 * average t = ubatch x used / experts tokens, and a GEMM of t columns fills
 * t / (t + MOE_TILE_HALF_TOKENS) of the tensor-core tile throughput (tile
 * columns left empty, per-expert weight loads not amortised).  gpt-oss-20b
 * (32 experts, top 4) sees 64 tokens per expert at -ub 512, gpt-oss-120b
 * (128 experts) 16: the larger model's experts run at 0.25 of the rate, the
 * smaller's at 0.57.  MOE_TILE_HALF_TOKENS (48) and the cuda rows' moe_pp_us
 * (1.8 us per MoE block per token: routing, gather and scatter) were fitted
 * together on the four fitted gpt-oss rows of llamabench-current.tsv (RTX PRO
 * 6000 and its Max-Q, 20b and 120b, pp2048 at the default ubatch): errors
 * -8/-10/+6/+2% (refitted when prefill stopped counting the embeddings and
 * the output head, prefill_params; 34 tokens gave -11/-1/+2/+13% before).
 * The dense blocks keep the dense rate.
 */
#define MOE_TILE_HALF_TOKENS 48.0

/*
 * The dense blocks' GEMMs at a small ubatch.  A quantized GEMM (CUDA/ROCm
 * MMQ, the Vulkan and Metal mul_mm shaders) tiles the ubatch's tokens in
 * columns of up to 128 (ggml-cuda mmq.cuh: mmq_x up to 128); a ubatch
 * narrower than the tile leaves columns empty and reads each weight tile
 * for fewer tokens.  From DENSE_TILE_TOKENS tokens on the rate is flat:
 * an RX 7900 XTX (ROCm) prefills Llama 8B Q4_K_M at 3189 / 3294 tok/s with
 * -ub 512 / 1024 and Q5_K_M at 1794 with -ub 64 (pp2048; at -d 4096: 2678 /
 * 2740 and 1598), ggml-org/llama.cpp pull 26284's master column: the -ub 64
 * rate is 0.55 and 0.59 of the -ub 512/1024 ones after the planner's own
 * Q4_K/Q5_K difference, 64 / 0.57 = 112 tokens [fitted on the fit rows of
 * tests/validation/speed-field.tsv; other backends: assumption].  The
 * default -ub 512, and every llama-bench pp512 row, is unchanged.
 */
#define DENSE_TILE_TOKENS 112.0

static double dense_tile_fill(uint32_t ubatch)
{
	double b = ubatch ? ubatch : 512;
	return b >= DENSE_TILE_TOKENS ? 1.0 : b / DENSE_TILE_TOKENS;
}

static double expert_flops(const model_desc *m)
{
	if (m->n_experts == 0 || m->n_experts_used == 0 || m->expert_ffn == 0)
		return 0;
	double n = 0;
	for (uint32_t il = 0; il < m->n_layers; il++)
		if (model_layer_moe(m, il))
			n++;
	/* gate, up and down of each chosen expert: 3 x hidden x expert_ffn MACs */
	return 2.0 * n * m->n_experts_used * 3.0 * m->hidden * m->expert_ffn;
}

/*
 * The parameters a prompt token multiplies on the GPU: the token embedding
 * is a row lookup (get_rows, no product) and the output head runs only for
 * the tokens that return logits, the last one of a llama-bench pp test or of
 * a llama-server prompt (llama_batch_get_one outputs the last token), so
 * prefill's products leave both out [derived: llama-bench test_prompt,
 * llama-graph build_inp_embd and the n_outputs rows of the lm_head].  A
 * Llama 2 7B leaves 3.9% of its parameters out, a Llama 3.1 8B (128K
 * vocabulary) 13%, gpt-oss 1.16B of its 3.6B / 5.1B active.
 */
static double prefill_params(const model_desc *m, double params)
{
	double e = (double)m->vocab * m->hidden * (m->tied_embeddings ? 1.0 : 2.0);
	return e > 0 && e < 0.9 * params ? params - e : params;
}

static double expert_tile_fill(const model_desc *m, uint32_t ubatch)
{
	if (m->n_experts == 0 || m->n_experts_used == 0)
		return 1;
	double t = (double)(ubatch ? ubatch : 512) * m->n_experts_used / m->n_experts;
	return t / (t + MOE_TILE_HALF_TOKENS);
}

/* ---- CPU backend ------------------------------------------------------------------ */
int plan_speed_cpu(const char *build, const char *quant, uint32_t n_blocks, double bytes_per_token,
		   double flops_per_token, double host_bw_gbs, uint32_t threads, double *decode,
		   double *prefill)
{
	plan_speed_row row;
	if (plan_speed_row_find(build, PLAN_BACKEND_CPU, "*", &row))
		return GW_ENOENT;
	if (host_bw_gbs <= 0)
		host_bw_gbs = HOST_BW_DEFAULT_GBS;
	if (!threads)
		threads = CPU_THREADS_DEFAULT;
	const char *k = plan_speed_kernel(quant);
	double t = (row.tok_us + n_blocks * row.layer_us) * 1e-6 +
		   bytes_per_token / (host_bw_gbs * 1e9 * kernel_bw(&row, k));
	*decode = t > 0 ? 1.0 / t : 0;
	/* pp_q_x: GFLOPS per thread of the quantized dot-product kernels;
	 * F16 weights at pp_f_eff of that */
	double rate = threads * row.pp_q_x * 1e9 * (!strcmp(k, "f16") ? row.pp_f_eff : row.pp_q_eff);
	*prefill = rate > 0 && flops_per_token > 0 ? rate / flops_per_token : 0;
	return 0;
}

/* ---- weights in host memory during prefill ------------------------------------------- */
/*
 * Where a prompt's matrix products over host-resident weights run, per
 * ubatch (one graph compute, llama_context::decode):
 *
 * ggml-backend's scheduler gives an op the backend of its weight, except
 * that with op offload on (llama.cpp's default; -nopo turns it off) an op
 * whose weight sits in a host buffer goes to the first GPU backend that
 * supports it and wants it (ggml/src/ggml-backend.cpp,
 * ggml_backend_sched_backend_id_from_cur: "check if a backend with higher
 * prio wants to offload the op").  ggml-cuda wants it when the op's batch
 * is at least 32 (ggml/src/ggml-cuda/ggml-cuda.cu,
 * ggml_backend_cuda_device_offload_op, min_batch_size = 32; the batch is
 * ne[1] of MUL_MAT and ne[2] of MUL_MAT_ID, i.e. the ubatch's tokens;
 * GET_ROWS, the token embedding, never).  The weight is then an input of
 * that GPU's split and is copied over PCIe before every compute of the
 * graph: once per ubatch.  For MUL_MAT_ID only the experts the ubatch's
 * tokens were routed to are copied (ggml_backend_sched_compute_splits:
 * "copying only the experts that are used").  So a ubatch of B tokens
 * pays
 *   (dense host bytes + expert host bytes x used(B)) / PCIe
 * with used(B) = 1 - (1 - k/E)^B under uniform routing [derived], the
 * layers beyond -ngl and the --n-cpu-moe experts alike; below 32 tokens,
 * and with -nopo at any size, the same products run on the CPU instead.
 *
 * The copy runs at the link's rate: PCIe 3.0/4.0/5.0 move 8/16/32 GT/s per
 * lane with 128b/130b coding, 0.985/1.969/3.938 GB/s per lane [PCI-SIG
 * base specifications], x16 unless the chip has eight lanes (AD106/AD107
 * and GB206/GB207: NVIDIA's RTX 4060/4060 Ti/5060 family pages, "PCIe 4.0
 * x8", "PCIe 5.0 x8"; Navi 33: AMD's RX 7600 page, "PCIe 4.0 x8").  The
 * copies come from pinned memory (llama.cpp puts host weights in the
 * CUDA_Host buffer when a GPU is used) and reach about the link rate: an
 * RTX 3090 with gpt-oss-120b, --n-cpu-moe 26/25/28 prefills 380 / 1113 /
 * 2091 tok/s at -ub 512 / 2048 / 8192 (a user's llama-bench table,
 * reddit r/LocalLLaMA 2026-05, reposted by ai-maestro.online), about
 * 1.2 to 1.4 s of copy per ubatch for 42 to 47 GB of experts
 * (tests/e2e/speed-offload.t).
 */
#define OP_OFFLOAD_MIN_BATCH 32

static double pcie_rate(const plan_request *rq, double host_bw)
{
	const gpu_spec *s = rq->n_gpus ? rq->gpus[0].spec : NULL;
	if (rq->n_gpus && rq->gpus[0].unified_memory)
		return host_bw; /* one memory: the "copy" is a read */
	int gen = s ? s->pcie_gen : 4;
	double lane = gen >= 5 ? 3.938e9 : gen == 4 ? 1.969e9 : gen == 3 ? 0.985e9 : 0.5e9;
	int lanes = 16;
	const char *a = s && s->arch ? s->arch : "";
	if (strstr(a, "AD106") || strstr(a, "AD107") || strstr(a, "GB206") || strstr(a, "GB207") ||
	    strstr(a, "Navi 33"))
		lanes = 8;
	return lane * lanes;
}

/* Share of the experts a ubatch of b tokens routes to at least once. */
static double experts_used(const model_desc *m, double b)
{
	if (m->n_experts == 0 || m->n_experts_used == 0)
		return 1;
	double p = 1.0 - (double)m->n_experts_used / (double)m->n_experts;
	return p <= 0 ? 1 : 1.0 - pow(p, b);
}

/* The prefill cost of the weights in host memory, added to tp (seconds
 * per prompt token of the GPUs' compute): the copies per ubatch, or the
 * CPU's compute of those products.  Sets r->prefill_copy_bytes. */
static double host_prefill(const work *wk, plan_result *r, double tp, double host_bw)
{
	const plan_request *rq = wk->rq;
	uint32_t start = wk->total - r->gpu_layers; /* layers [0, start) are in host RAM */
	double dense = 0, experts = 0;
	for (uint32_t il = 0; il < start && il < wk->n; il++) {
		dense += (double)(wk->w.layer_bytes[il] - wk->w.layer_expert_bytes[il]);
		experts += (double)wk->w.layer_expert_bytes[il];
	}
	experts += (double)plan_cpu_expert_bytes(wk, start, wk->n);
	r->prefill_copy_bytes = 0;
	if (dense + experts <= 0)
		return tp;
	double b = wk->batch;
	if (!rq->no_op_offload && b >= OP_OFFLOAD_MIN_BATCH) {
		double bytes = dense + experts * experts_used(wk->m, b);
		r->prefill_copy_bytes = bytes;
		return tp + bytes / pcie_rate(rq, host_bw * 1e9) / b;
	}
	/* on the CPU: the share of the products whose weights are in host RAM
	 * (active bytes for active bytes), and the attention of host layers */
	double all = weight_bytes(wk, 0, wk->total);
	double host = dense + experts * moe_read_fraction(wk->m);
	double params = wk->m->params_active > 0 ? wk->m->params_active : wk->w.params;
	double mm = 2.0 * params, att = plan_attn_flops(wk->m, wk->ctx);
	double f_att = wk->n ? (double)(start < wk->n ? start : wk->n) / wk->n : 0;
	double cpu_flops = (all > 0 ? mm * host / all : 0) + att * f_att;
	double moved = mm + att > 0 ? cpu_flops / (mm + att) : 0;
	double gflops = plan_host_gflops(rq);
	if (gflops <= 0)
		return tp;
	return tp * (1.0 - moved) + cpu_flops / (gflops * 1e9);
}

/* ---- the closed form (b2824, other engines) ------------------------------------------ */
static void speed_closed(const work *wk, plan_result *r, double lat_ms, double frac, double ceil_gbs,
			 double pp_eff, bool ggml_sched)
{
	const plan_request *rq = wk->rq;
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	double host_bw = (rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS) * 1e9;
	double t = wk->n * lat_ms / 1000.0;
	bool known = true;
	size_t used = 0;
	double gpu_bytes = 0;

	if (r->split_row)
		return; /* -sm row is modelled for today's llama.cpp only (speed_row) */
	if (ops->tensor_parallel) {
		/* tensor parallel: every GPU reads its share at once */
		if (rq->n_gpus == 0 || r->verdict == PLAN_NOFIT)
			return;
		double bw = rq->gpus[0].bandwidth_gbs * 1e9 * frac;
		if (bw <= 0)
			return;
		gpu_bytes = read_bytes(wk, 0, wk->total);
		t += gpu_bytes / ((double)rq->n_gpus * bw);
		r->gpu_bytes_per_token = gpu_bytes;
		r->host_bytes_per_token = 0;
		r->decode_tok_s = 1.0 / t;
	} else {
		for (size_t d = 0; d < r->n_devices; d++) {
			const plan_device *pd = &r->devices[d];
			if (pd->layers == 0)
				continue;
			used++;
			double bw = rq->gpus[d].bandwidth_gbs * 1e9 * frac;
			if (ceil_gbs > 0)
				bw = fmin(bw, ceil_gbs * 1e9);
			uint32_t a = pd->first_layer, b = pd->first_layer + pd->layers;
			double bytes = read_bytes(wk, a, b) -
				       (double)plan_cpu_expert_bytes(wk, a, b) * moe_read_fraction(wk->m);
			gpu_bytes += bytes;
			if (bw <= 0)
				known = false;
			else
				t += bytes / bw;
		}
		double host_bytes;
		if (!ops->gguf) /* accelerate: the last layers stay on the CPU */
			host_bytes = read_bytes(wk, r->gpu_layers, wk->total);
		else
			host_bytes = read_bytes(wk, 0, wk->total - r->gpu_layers);
		if (r->gpu_layers == 0)
			host_bytes = read_bytes(wk, 0, wk->total);
		else /* experts kept in RAM (--n-cpu-moe): only the active ones are read */
			host_bytes += (double)plan_cpu_expert_bytes(wk, wk->total - r->gpu_layers, wk->n) *
				      moe_read_fraction(wk->m);
		t += host_bytes / (host_bw * HOST_BW_FRACTION);
		if (used > 1)
			t *= 1.0 + DEC_MULTI_PENALTY * (double)(used - 1);
		r->gpu_bytes_per_token = gpu_bytes;
		r->host_bytes_per_token = host_bytes;
		if (known && r->verdict != PLAN_NOFIT)
			r->decode_tok_s = 1.0 / t;
	}

	/* prefill: compute bound on the GPUs */
	double params = wk->m->params_active > 0 ? wk->m->params_active : wk->w.params;
	if (params <= 0 || rq->n_gpus == 0 || r->verdict == PLAN_NOFIT)
		return;
	double flops = 2.0 * params + plan_attn_flops(wk->m, wk->ctx);
	double tf = 0;
	for (size_t d = 0; d < rq->n_gpus; d++) {
		if (rq->gpus[d].fp16_tflops <= 0)
			return;
		if (ops->tensor_parallel)
			tf += rq->gpus[d].fp16_tflops;
		else if (d == 0 || rq->gpus[d].fp16_tflops < tf)
			tf = rq->gpus[d].fp16_tflops; /* a layer split runs one GPU at a time */
	}
	double tp = flops / (tf * 1e12 * pp_eff);
	if (ggml_sched && !ops->tensor_parallel) {
		tp = host_prefill(wk, r, tp, host_bw / 1e9);
	} else if (r->gpu_layers < r->total_layers && !ops->tensor_parallel) {
		/* the 2024 form: host weights cross PCIe once per batch of tokens */
		int gen = rq->gpus[0].spec ? rq->gpus[0].spec->pcie_gen : 4;
		double pcie = gen >= 5 ? 48e9 : gen == 4 ? 24e9 : gen == 3 ? 12e9 : 6e9;
		if (rq->gpus[0].unified_memory)
			pcie = host_bw;
		tp += (double)r->host_weights_bytes / pcie / (double)wk->batch;
	}
	r->prefill_tok_s = 1.0 / tp;
}

/* ---- today's llama.cpp ------------------------------------------------------------------ */
/* Peak TFLOPS of the kernel a row names for GPU g. */
static double kernel_tflops(const plan_gpu *g, const char *rate, double x)
{
	double fp16 = g->fp16_tflops, fp32 = g->spec ? g->spec->fp32_tflops : 0;
	if (!strcmp(rate, "fp32") || fp16 <= 0)
		return fp32 * x;
	if (!strcmp(rate, "int8") || !strcmp(rate, "fp16acc")) /* GeForce's column is the halved rate */
		return fp16 * x * (is_geforce(g->spec) ? 2.0 : 1.0);
	return fp16 * x;
}

static double fp16_tflops(const plan_gpu *g)
{
	if (g->fp16_tflops > 0)
		return g->fp16_tflops;
	return g->spec ? g->spec->fp32_tflops : 0;
}

/* The row for GPU d (the first GPU's backend for every GPU). */
static bool gpu_row(const work *wk, plan_backend be, size_t d, plan_speed_row *row)
{
	const plan_gpu *g = &wk->rq->gpus[d];
	char fam[16];
	return plan_speed_row_find("latest", be, family_of(g->spec, g->unified_memory, fam, sizeof fam), row) == 0;
}

/*
 * -sm row (r->split_row, engine_llamacpp.c place_row): each weight matrix
 * is cut by rows over the GPUs, so every product runs on all of them at
 * once and decode reads each GPU's slice in parallel (the slowest device
 * sets the pace); the KV cache, attention and the rest run on the main
 * GPU.  The price, paid on every matrix product of every token: ggml-cuda
 * copies the product's input to each other GPU, waits on an event for each
 * and gathers their rows of the result back to the main GPU
 * [ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_op_mul_mat; 4 bytes an
 * element over the GPUs' PCIe link].  ROW_SYNC_US is that wait per product
 * and per extra GPU [assumption: a launch, an event and a peer copy each
 * way, ~15 us; order checked on one public A/B, 8x A100 GLM-5.2 UD-Q4_K_M:
 * -sm layer 23.4 tok/s, -sm row 7.1 tok/s decode, github.com/
 * anthony-chaudhary/fak issue 3075, 2026-07: ~100 ms a token of extra
 * waits].  Prefill pays the copies per token (the whole ubatch's rows), so
 * it loses to the layer split on PCIe cards as the batch grows.
 */
#define ROW_SYNC_US 15.0
#define ROW_MM_PER_LAYER 7.0 /* q k v o, gate up down */

static void speed_row(const work *wk, plan_result *r, plan_backend be)
{
	const plan_request *rq = wk->rq;
	const char *k = plan_speed_kernel(wk->w.quant);
	const model_desc *m = wk->m;
	double params = m->params_active > 0 ? m->params_active : wk->w.params;
	double host_bw = rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS;
	size_t nd = r->n_devices;
	uint32_t start = wk->total - r->gpu_layers, n_moe = 0, nl = 0;
	plan_speed_row row0, row, cpu;
	bool have_cpu = plan_speed_row_find("latest", PLAN_BACKEND_CPU, "*", &cpu) == 0;
	if (nd < 2 || !gpu_row(wk, be, 0, &row0))
		return;
	for (uint32_t il = 0; il < wk->n; il++)
		if (wk->w.layer_expert_bytes[il])
			n_moe++;
	for (uint32_t il = start; il < wk->n; il++)
		nl++;
	double sumw = 0;
	for (size_t d = 0; d < nd; d++)
		sumw += (double)r->devices[d].weights_bytes;
	if (sumw <= 0)
		return;
	double w = weight_bytes(wk, start, wk->total) -
		   (double)plan_cpu_expert_bytes(wk, start, wk->total) * moe_read_fraction(m);
	double kv = kv_bytes(wk, start, wk->total) + (wk->fa ? 0 : score_bytes(wk, start, wk->total));
	double mm_flops = 2.0 * prefill_params(m, params), ex_flops = fmin(expert_flops(m), mm_flops);
	double ex_fill = expert_tile_fill(m, wk->batch), dense_fill = dense_tile_fill(wk->batch);
	double t_mm = 0, tp_mm = 0, share0 = (double)r->devices[0].weights_bytes / sumw;
	for (size_t d = 0; d < nd; d++) {
		const plan_gpu *g = &rq->gpus[d];
		if (!gpu_row(wk, be, d, &row))
			return;
		double share = (double)r->devices[d].weights_bytes / sumw;
		double peak = g->bandwidth_gbs * 1e9;
		if (row.bw_ceil_gbs > 0)
			peak = fmin(peak, row.bw_ceil_gbs * 1e9 / kernel_bw(&row, k));
		double rw = !strcmp(k, "f16") ? fp16_tflops(g) * row.pp_f_eff
					      : kernel_tflops(g, row.pp_q_rate, row.pp_q_x) * row.pp_q_eff;
		if (peak <= 0 || rw <= 0)
			return;
		t_mm = fmax(t_mm, share * w / (peak * kernel_bw(&row, k)));
		tp_mm = fmax(tp_mm, share * ((mm_flops - ex_flops) / dense_fill + ex_flops / ex_fill) / (rw * 1e12));
	}
	const plan_gpu *g0 = &rq->gpus[0];
	double peak0 = g0->bandwidth_gbs * 1e9;
	/* per token and layer: each product's input to every other GPU, their rows of its output back */
	double kvd = (double)m->n_kv_heads * (m->head_dim_k ? m->head_dim_k : (m->n_heads ? m->hidden / m->n_heads : 0));
	double in = 6.0 * m->hidden + m->ffn, out = 3.0 * m->hidden + 2.0 * kvd + 2.0 * m->ffn;
	double xfer = nl * 4.0 * ((double)(nd - 1) * in + (1.0 - share0) * out);
	double link = pcie_rate(rq, host_bw * 1e9);
	double sync = nl * ROW_MM_PER_LAYER * (double)(nd - 1) * ROW_SYNC_US * 1e-6;

	double t = (row0.tok_us + wk->n * row0.layer_us + n_moe * row0.moe_us) * 1e-6 + t_mm +
		   kv / (peak0 * (row0.bw_kv > 0 ? row0.bw_kv : row0.bw_f16)) + sync + xfer / link;
	double host_bytes = read_bytes(wk, 0, start) +
			    (double)plan_cpu_expert_bytes(wk, start, wk->n) * moe_read_fraction(m);
	if (host_bytes > 0)
		t += host_bytes / (host_bw * 1e9 * (have_cpu ? kernel_bw(&cpu, k) : HOST_BW_FRACTION));
	r->gpu_bytes_per_token = w + kv;
	r->host_bytes_per_token = host_bytes;
	if (r->verdict == PLAN_NOFIT)
		return;
	r->decode_tok_s = 1.0 / t;
	if (!rq->skip_advice)
		plan_note(r, "split mode row: the %zu GPUs read their row slices of the weights at once (%.1f ms a token, "
			  "the slowest slice); the KV cache and attention on GPU 0; every token waits %.1f ms on "
			  "%.0f matrix products' syncs (%.0f us each per extra GPU) and copies %.1f MB of activations "
			  "over PCIe at %.1f GB/s",
			  nd, t_mm * 1e3, sync * 1e3, nl * ROW_MM_PER_LAYER, ROW_SYNC_US, xfer / 1e6, link / 1e9);
	double ra = fp16_tflops(g0) * (wk->fa ? row0.attn_eff_fa : row0.attn_eff_nofa);
	if (params <= 0 || ra <= 0)
		return;
	double tp = tp_mm + plan_attn_flops(m, wk->ctx) / (ra * 1e12) +
		    (wk->n * row0.pp_layer_us + n_moe * row0.moe_pp_us) * 1e-6 + xfer / link +
		    sync / (double)wk->batch;
	tp = host_prefill(wk, r, tp, host_bw);
	r->prefill_tok_s = 1.0 / tp;
}

static void speed_latest(const work *wk, plan_result *r, plan_backend be)
{
	const plan_request *rq = wk->rq;
	const char *k = plan_speed_kernel(wk->w.quant);
	double params = wk->m->params_active > 0 ? wk->m->params_active : wk->w.params;
	double host_bw = rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS;
	plan_speed_row row, cpu;
	bool have_cpu = plan_speed_row_find("latest", PLAN_BACKEND_CPU, "*", &cpu) == 0;

	if (be == PLAN_BACKEND_CPU || rq->n_gpus == 0 || r->gpu_layers == 0) {
		/* everything on the host */
		double bytes = read_bytes(wk, 0, wk->total);
		r->gpu_bytes_per_token = 0;
		r->host_bytes_per_token = bytes;
		double flops = 2.0 * params + plan_attn_flops(wk->m, wk->ctx), dec = 0, pre = 0;
		if (plan_speed_cpu("latest", wk->w.quant, wk->n, bytes, flops, host_bw, rq->cpu_threads, &dec, &pre))
			return;
		if (r->verdict != PLAN_NOFIT) {
			r->decode_tok_s = dec;
			r->prefill_tok_s = pre;
		}
		return;
	}

	if (r->split_row) {
		speed_row(wk, r, be);
		return;
	}
	double t = 0, gpu_bytes = 0, tp = 0;
	size_t used = 0;
	bool known = true;
	uint32_t on_gpu = 0, n_moe = 0;
	for (uint32_t il = 0; il < wk->n; il++)
		if (wk->w.layer_expert_bytes[il])
			n_moe++;
	for (size_t d = 0; d < r->n_devices; d++)
		on_gpu += r->devices[d].layers;
	double mm_flops = 2.0 * prefill_params(wk->m, params), ex_flops = fmin(expert_flops(wk->m), mm_flops);
	double ex_fill = expert_tile_fill(wk->m, wk->batch), dense_fill = dense_tile_fill(wk->batch);
	for (size_t d = 0; d < r->n_devices; d++) {
		const plan_device *pd = &r->devices[d];
		if (pd->layers == 0)
			continue;
		if (!gpu_row(wk, be, d, &row)) {
			known = false;
			continue;
		}
		const plan_gpu *g = &rq->gpus[d];
		if (!used)
			t += (row.tok_us + wk->n * row.layer_us + n_moe * row.moe_us) * 1e-6;
		else
			t += row.gpu_us * 1e-6;
		used++;
		double peak = g->bandwidth_gbs * 1e9;
		if (row.bw_ceil_gbs > 0)
			peak = fmin(peak, row.bw_ceil_gbs * 1e9 / kernel_bw(&row, k));
		uint32_t a = pd->first_layer, b = pd->first_layer + pd->layers;
		double w = weight_bytes(wk, a, b) - (double)plan_cpu_expert_bytes(wk, a, b) * moe_read_fraction(wk->m);
		double kv = kv_bytes(wk, a, b) + (wk->fa ? 0 : score_bytes(wk, a, b));
		gpu_bytes += w + kv;
		if (peak <= 0) {
			known = false;
			continue;
		}
		t += w / (peak * kernel_bw(&row, k)) + kv / (peak * (row.bw_kv > 0 ? row.bw_kv : row.bw_f16));

		/* prefill: this device's share of the layers, one device after another */
		double share = on_gpu ? (double)pd->layers / on_gpu : 1;
		double rw = !strcmp(k, "f16") ? fp16_tflops(g) * row.pp_f_eff
					      : kernel_tflops(g, row.pp_q_rate, row.pp_q_x) * row.pp_q_eff;
		double ra = fp16_tflops(g) * (wk->fa ? row.attn_eff_fa : row.attn_eff_nofa);
		if (rw <= 0 || ra <= 0) {
			tp = -1;
			continue;
		}
		if (tp >= 0)
			tp += share * (((mm_flops - ex_flops) / dense_fill + ex_flops / ex_fill) / (rw * 1e12) +
				       plan_attn_flops(wk->m, wk->ctx) / (ra * 1e12) +
				       (wk->n * row.pp_layer_us + n_moe * row.moe_pp_us) * 1e-6);
	}
	double host_bytes = read_bytes(wk, 0, wk->total - r->gpu_layers) +
			    (double)plan_cpu_expert_bytes(wk, wk->total - r->gpu_layers, wk->n) * moe_read_fraction(wk->m);
	if (host_bytes > 0)
		t += host_bytes / (host_bw * 1e9 * (have_cpu ? kernel_bw(&cpu, k) : HOST_BW_FRACTION));
	r->gpu_bytes_per_token = gpu_bytes;
	r->host_bytes_per_token = host_bytes;
	if (!known || !used || r->verdict == PLAN_NOFIT)
		return;
	r->decode_tok_s = 1.0 / t;
	if (params <= 0 || tp <= 0)
		return;
	tp = host_prefill(wk, r, tp, host_bw);
	r->prefill_tok_s = 1.0 / tp;
}

/*
 * Windows' Sysmem Fallback (r->spill_bytes, engine_llamacpp.c): the driver
 * keeps the allocations that do not fit the dedicated VRAM in shared system
 * memory and pages them across PCIe as kernels touch them, so every token
 * moves the spilled bytes, whatever share of them it reads (a spilled
 * allocation moves whole).  They move at half the link rate, out and back
 * in [assumption: one measurement, an RTX 5070 12 GB (PCIe 5.0 x16) with
 * Qwen3-30B-A3B Q3_K_M, 13.7 GiB, at -ngl 99 on Windows: 11 tok/s, where
 * this gives 2.9 GB / 31.5 GB/s + the GPU's 6.8 ms = 10.1 tok/s; issue 30].
 */
static double spill_rate(const plan_request *rq)
{
	return pcie_rate(rq, 0) / 2;
}

static void spill_cost(const work *wk, plan_result *r)
{
	double rate = spill_rate(wk->rq), b = (double)r->spill_bytes;
	if (b <= 0 || rate <= 0)
		return;
	if (r->decode_tok_s > 0)
		r->decode_tok_s = 1.0 / (1.0 / r->decode_tok_s + b / rate);
	if (r->prefill_tok_s > 0) /* once per ubatch */
		r->prefill_tok_s = 1.0 / (1.0 / r->prefill_tok_s + b / rate / (double)wk->batch);
}

/* The backend planned: as asked, else the first GPU's default (CPU without GPUs). */
static plan_backend resolve_backend(const plan_request *rq)
{
	if (rq->backend != PLAN_BACKEND_AUTO)
		return rq->backend;
	if (rq->n_gpus == 0)
		return PLAN_BACKEND_CPU;
	return plan_backend_default(rq->gpus[0].spec, rq->gpus[0].unified_memory);
}

void plan_speed(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	bool metal = rq->n_gpus > 0 && rq->gpus[0].unified_memory;
	plan_backend be = resolve_backend(rq);
	plan_speed_row row;

	r->decode_tok_s = r->prefill_tok_s = 0;
	r->prefill_copy_bytes = 0;
	r->backend = be;
	r->speed_family[0] = r->speed_build[0] = 0;
	char fb[16];
	const char *fam = rq->n_gpus && be != PLAN_BACKEND_CPU
				  ? family_of(rq->gpus[0].spec, rq->gpus[0].unified_memory, fb, sizeof fb)
				  : "*";
	if (rq->engine == PLAN_ENGINE_LLAMACPP && wk->build) {
		const char *bid = wk->build == plan_llamacpp_build_find(NULL) ? "latest" : wk->build->id;
		if (plan_speed_row_find(bid, be, fam, &row) == 0) {
			snprintf(r->speed_family, sizeof r->speed_family, "%s", row.family);
			snprintf(r->speed_build, sizeof r->speed_build, "%s", row.build);
			if (row.legacy) {
				speed_closed(wk, r, row.layer_us / 1000.0, row.bw_kq, row.bw_ceil_gbs, row.pp_q_eff, false);
			} else {
				speed_latest(wk, r, be);
			}
			spill_cost(wk, r);
			return;
		}
	}
	/* Ollama runs ggml's scheduler too: its prefill pays the same copies */
	speed_closed(wk, r, metal ? ops->dec_lat_metal_ms : ops->dec_lat_ms, ops->dec_bw_fraction,
		     ops->dec_bw_ceil_gbs, PREFILL_EFF, rq->engine == PLAN_ENGINE_OLLAMA);
	spill_cost(wk, r);
}

/* Where the host bandwidth comes from, for the notes. */
static const char *host_mem_text(const plan_request *rq)
{
	if (rq->host_mem_from)
		return rq->host_mem_from;
	if (rq->ram_bw_from)
		return rq->ram_bw_from;
	return rq->ram_bw_gbs > 0 ? "--ram-bw" : _("assumed DDR4-3200 x2; set --host-mem");
}

void plan_speed_notes(const plan_request *rq, plan_result *r)
{
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	const model_desc *m = rq->model;
	bool metal = rq->n_gpus && rq->gpus[0].unified_memory;
	plan_speed_row row;
	bool have = r->speed_build[0] &&
		    plan_speed_row_find(r->speed_build, r->backend, r->speed_family, &row) == 0;
	const char *k = plan_speed_kernel(r->quant);
	double p2 = 2 * (m->params_active > 0 ? m->params_active : m->params_total);
	double att = plan_attn_flops(m, r->ctx);

	/* this machine's measured bandwidth (gpuwise bench's cache), one note */
	const plan_gpu *mg = NULL;
	for (size_t d = 0; d < rq->n_gpus && !mg; d++)
		if (rq->gpus[d].bandwidth_from)
			mg = &rq->gpus[d];
	if (mg && rq->ram_bw_from)
		plan_note(r, "bandwidth measured here by %s: GPU %.0f GB/s (spec sheet %.0f), host %.1f GB/s",
			  mg->bandwidth_from, mg->bandwidth_gbs, mg->spec ? mg->spec->bandwidth_gbs : 0, rq->ram_bw_gbs);
	else if (mg)
		plan_note(r, "bandwidth measured here by %s: GPU %.0f GB/s (spec sheet %.0f)", mg->bandwidth_from,
			  mg->bandwidth_gbs, mg->spec ? mg->spec->bandwidth_gbs : 0);
	else if (rq->ram_bw_from)
		plan_note(r, "host bandwidth measured here by %s: %.1f GB/s", rq->ram_bw_from, rq->ram_bw_gbs);
	if (have && !row.legacy) {
		plan_note(r, "speed model: llama.cpp %s on %s, family %s (data/speed.tsv); decode %.0f us/token + "
			     "%.1f us/block + weights at %.0f%% of peak (%s kernels)",
			  r->engine_build, plan_backend_name(r->backend), row.family, row.tok_us, row.layer_us,
			  kernel_bw(&row, k) * 100, k);
		if (r->backend == PLAN_BACKEND_CPU || r->gpu_layers == 0)
			plan_note(r, "CPU backend: host memory at %.1f GB/s (%s), %u threads at %.0f GFLOPS each",
				  rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS, host_mem_text(rq),
				  rq->cpu_threads ? rq->cpu_threads : CPU_THREADS_DEFAULT, row.pp_q_x);
		else
			plan_note(r, "prefill: 2 x %.2fB params at %.0f%% of the %s peak x%.1f%s; attention %.2f GFLOPs/token "
				     "at %.0f%% of fp16 (flash attention %s)",
				  prefill_params(m, p2 / 2) / 1e9, (!strcmp(k, "f16") ? row.pp_f_eff : row.pp_q_eff) * 100,
				  !strcmp(k, "f16") ? "fp16" : row.pp_q_rate, !strcmp(k, "f16") ? 1.0 : row.pp_q_x,
				  !strcmp(k, "f16") ? "" : (!strcmp(row.pp_q_rate, "int8") ? _(" (int8 MMQ)") : ""),
				  att / 1e9, (r->flash_attn ? row.attn_eff_fa : row.attn_eff_nofa) * 100,
				  r->flash_attn ? "on" : "off");
		plan_note(r, "decode reads the KV cache half full%s; batch of one sequence",
			  r->flash_attn ? "" : _(" and writes/reads the F32 attention scores (no flash attention)"));
	} else {
		double lat = have ? row.layer_us / 1000.0 : metal ? ops->dec_lat_metal_ms : ops->dec_lat_ms;
		if (have || ops->calibrated)
			plan_note(r, "decode: %.2f ms/layer + GPU bytes at min(%.0f%% of peak, %.0f GB/s); fit to "
				     "llama.cpp b2824 llama-bench tg (XiongjieDai)%s%s",
				  lat, (have ? row.bw_kq : ops->dec_bw_fraction) * 100,
				  have ? row.bw_ceil_gbs : ops->dec_bw_ceil_gbs, have ? _("; backend ") : "",
				  have ? plan_backend_name(r->backend) : "");
		else
			plan_note(r, "decode: %.2f ms/layer + GPU bytes at %.0f%% of peak bandwidth (uncalibrated for %s)",
				  ops->dec_lat_ms, ops->dec_bw_fraction * 100, ops->name);
		plan_note(r, "decode reads the KV cache half full; batch of one sequence");
		plan_note(r, "prefill: 2 x %.2fB active params + attention %.2f GFLOPs/token (%.0f%% of the total at "
			     "ctx %llu) at %.0f%% of fp16 tensor peak",
			  p2 / 2e9, att / 1e9, p2 + att > 0 ? 100 * att / (p2 + att) : 0, (unsigned long long)r->ctx,
			  (have ? row.pp_q_eff : PREFILL_EFF) * 100);
	}
	if (r->spill_bytes)
		plan_note(r, "Windows' driver spills %.1f GB beyond the dedicated VRAM into shared system memory (CUDA "
			     "Sysmem Fallback) instead of failing; it crosses PCIe every token (~%.0f GB/s), so decode "
			     "drops to ~%.1f tok/s; to fail instead: NVIDIA Control Panel > Manage 3D settings > CUDA - "
			     "Sysmem Fallback Policy > Prefer No Sysmem Fallback",
			  (double)r->spill_bytes / 1e9, spill_rate(rq) / 1e9, r->decode_tok_s);
	if (r->prefill_copy_bytes > 0)
		plan_note(r, "prefill: %.1f GB of weights in host RAM cross PCIe at %.1f GB/s once per ubatch of %u "
			     "tokens (op offload: ggml-cuda takes products of 32 tokens or more); a larger -ub "
			     "amortises the copy",
			  r->prefill_copy_bytes / 1e9, pcie_rate(rq, (rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS) * 1e9) / 1e9,
			  r->batch);
	else if (r->n_devices && (r->gpu_layers < r->total_layers || r->n_cpu_moe) && r->gpu_layers > 0 &&
		 !ops->tensor_parallel && ops->gguf)
		plan_note(r, "prefill: the products of weights in host RAM run on the CPU (%s)",
			  rq->no_op_offload ? _("--no-op-offload") : _("ubatch below 32 tokens: no op offload"));
	if (r->host_bytes_per_token > 0 && r->gpu_layers > 0 && !ops->tensor_parallel)
		plan_note(r, "host memory: %.1f GB/s (%s); the host part is read at it",
			  rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS, host_mem_text(rq));
}

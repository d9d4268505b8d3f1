/*
 * plan.c: placement of a model on GPUs and host RAM, the verdict, the
 * largest context, the speed model and the ranked advice.
 */
#include "plan/plan.h"
#include "plan/prices.h"

#include <math.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- names ------------------------------------------------------------ */
static const char *const engine_names[] = {"llama.cpp", "ollama", "vllm", "transformers"};

const char *plan_engine_name(plan_engine e)
{
	return engine_names[e];
}

int plan_engine_parse(const char *s, plan_engine *e)
{
	if (str_ieq(s, "llama.cpp") || str_ieq(s, "llamacpp") || str_ieq(s, "llama-cpp") ||
	    str_ieq(s, "llama"))
		*e = PLAN_ENGINE_LLAMACPP;
	else if (str_ieq(s, "ollama"))
		*e = PLAN_ENGINE_OLLAMA;
	else if (str_ieq(s, "vllm"))
		*e = PLAN_ENGINE_VLLM;
	else if (str_ieq(s, "transformers") || str_ieq(s, "hf") || str_ieq(s, "huggingface"))
		*e = PLAN_ENGINE_TRANSFORMERS;
	else
		return GW_EINVAL;
	return 0;
}

const char *plan_verdict_name(plan_verdict v)
{
	return v == PLAN_FITS ? "fits" : v == PLAN_OFFLOAD ? "offload" : "no-fit";
}

void plan_request_init(plan_request *rq)
{
	memset(rq, 0, sizeof *rq);
	rq->engine = PLAN_ENGINE_LLAMACPP;
	rq->kv_type = PLAN_KV_F16;
	rq->gpu_layers = -1;
}

void plan_gpu_from_spec(plan_gpu *g, const gpu_spec *s)
{
	memset(g, 0, sizeof *g);
	snprintf(g->name, sizeof g->name, "%s", s->name);
	g->spec = s;
	g->vram_bytes = s->vram_bytes;
	g->bandwidth_gbs = s->bandwidth_gbs;
	g->fp16_tflops = s->fp16_tflops > 0 ? s->fp16_tflops : s->fp32_tflops;
	g->unified_memory = s->unified_memory;
}

/* ---- constants of the speed model ---------------------------------------
 * Decode time per token (llama.cpp / Ollama):
 *   t = n_blocks * c + sum_dev gpu_bytes_dev / min(0.92 * peak_dev, 1200 GB/s)
 *       + host_bytes / (host_bw * 0.55)
 * c = 0.10 ms per block on CUDA/ROCm and 0.40 ms on Apple Metal; 0.92 of
 * peak bandwidth with an effective ceiling of 1200 GB/s (the HBM cards of
 * the data set, A100 SXM and H100 PCIe, read only ~1000-1050 GB/s in that
 * llama.cpp build).  Fitted by least squares on log(tok/s) to the 41
 * llama-bench tg points of XiongjieDai/GPU-Benchmarks-on-LLM-Inference
 * (llama.cpp b2824; Llama-3-8B Q4_K_M / F16 and Llama-3-70B Q4_K_M on 19
 * GPUs and multi-GPU rigs, Llama-2 7B/13B/70B; the rows of
 * tests/validation/plan-measurements.tsv), median error 5%.  An explicit
 * growth of the efficiency with bytes per token fitted to zero: the
 * per-block latency already makes the apparent efficiency (tok/s * bytes /
 * peak) rise with bytes, as shared/reference/vram-planner.md section 5.4
 * shows (4090: 62% at Q4_K_M, 87% at F16).
 * Several GPUs in a layer split: 2% slower per extra GPU (3090: 111.7,
 * 108.1, 104.9, 101.1 tok/s on 1, 2, 4, 6 cards, same source).
 */
#define DEC_LAT_CUDA_MS 0.10
#define DEC_LAT_METAL_MS 0.40
#define DEC_BW_FRACTION 0.92
#define DEC_BW_CEIL_GBS 1200.0
#define DEC_MULTI_PENALTY 0.02
/* Host RAM for the offloaded part: dual-channel DDR4-3200 = 2 channels x
 * 8 B x 3200 MT/s = 51.2 GB/s peak [derived]; llama.cpp's CPU matrix-vector
 * path reads weights at about half the peak DRAM bandwidth [assumption]. */
#define HOST_BW_DEFAULT_GBS 51.2
#define HOST_BW_FRACTION 0.50
/* Prefill: 2 x active parameters FLOPs per token at 55% of the dense fp16
 * tensor peak [assumption; llama.cpp pp512 on an RTX 4090 runs Llama-3-8B
 * Q4_K_M at roughly 0.6 of 165 TFLOPS]. */
#define PREFILL_EFF 0.55
/* vLLM and transformers are not calibrated against measurements of their
 * decode here except the Qwen transformers rows: per-layer latency of
 * Python eager decoding ~0.45 ms [calibrated on QwenLM speed_benchmark
 * rows, transformers 4.46], CUDA-graph vLLM ~0.03 ms [assumption]. */
#define DEC_LAT_HF_MS 0.45
#define DEC_LAT_VLLM_MS 0.03
#define DEC_BW_FRACTION_OTHER 0.80

/* ---- working state ------------------------------------------------------ */
typedef struct work {
	const plan_request *rq;
	const model_desc *m;
	plan_weights w;
	uint64_t ctx, cells;
	uint32_t batch, nseq;
	plan_kv_type kv;
	bool fa;
	uint32_t n;       /* repeating blocks */
	uint32_t total;   /* n + 1 (output layer) */
	uint64_t *layer_kv; /* n */
	uint64_t largest_tensor; /* largest single weight tensor of a block (approx) */
	uint64_t margin;  /* memory the engine leaves free per GPU */
	uint32_t ncm;     /* --n-cpu-moe: blocks whose experts stay in host RAM */
} work;

static void note(plan_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(plan_result *r, const char *fmt, ...)
{
	if (r->n_notes >= PLAN_MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->n_notes++], sizeof r->notes[0], fmt, ap);
	va_end(ap);
}

uint64_t plan_unified_gpu_bytes(uint64_t total)
{
	return total / 4 * 3;
}

/* The rest of unified memory less the OS's share: the larger of 4 GiB
 * and 10% [assumption]. */
uint64_t plan_unified_host_bytes(uint64_t total)
{
	uint64_t rest = total - plan_unified_gpu_bytes(total);
	uint64_t os = total / 10 > 4 * GiB ? total / 10 : 4 * GiB;
	return rest > os ? rest - os : 0;
}

static uint64_t usable_bytes(const plan_gpu *g)
{
	uint64_t total = g->vram_bytes;
	if (g->unified_memory)
		total = plan_unified_gpu_bytes(total);
	if (g->free_bytes && g->free_bytes < total)
		total = g->free_bytes;
	return total;
}

/* Bytes of layer il that go where the layer goes (experts of the first
 * ncm blocks stay in host RAM, llama.cpp --n-cpu-moe). */
static uint64_t item_bytes(const work *wk, uint32_t il)
{
	if (il >= wk->n)
		return wk->w.output_bytes;
	if (il < wk->ncm)
		return wk->w.layer_bytes[il] - wk->w.layer_expert_bytes[il];
	return wk->w.layer_bytes[il];
}

static uint64_t cpu_expert_bytes(const work *wk, uint32_t a, uint32_t b)
{
	uint64_t x = 0;
	for (uint32_t il = a; il < b && il < wk->ncm && il < wk->n; il++)
		x += wk->w.layer_expert_bytes[il];
	return x;
}

static uint64_t item_kv(const work *wk, uint32_t il)
{
	return il < wk->n ? wk->layer_kv[il] : 0;
}

/*
 * Assign the last ngl layers to the GPUs.  split: llama.cpp's default
 * tensor split, proportional to each GPU's free memory
 * (src/llama-model.cpp: layer il goes to the first device whose
 * cumulative share exceeds (il - i_gpu_start) / ngl); otherwise fill from
 * the last layer backwards onto the last GPU and spill to earlier ones
 * (llama.cpp --fit and Ollama's greedyFit).  Returns true when every GPU
 * holds its part.
 */
static bool place(const work *wk, uint32_t ngl, bool split, plan_result *r)
{
	const plan_request *rq = wk->rq;
	size_t nd = rq->n_gpus;
	uint32_t start = wk->total - ngl;
	uint64_t avail[PLAN_MAX_GPUS], ovh[PLAN_MAX_GPUS];
	double share[PLAN_MAX_GPUS], sum = 0;

	memset(r->devices, 0, sizeof r->devices);
	r->n_devices = nd;
	for (size_t d = 0; d < nd; d++) {
		plan_device *pd = &r->devices[d];
		snprintf(pd->name, sizeof pd->name, "%s", rq->gpus[d].name);
		pd->vram_total_bytes = rq->gpus[d].vram_bytes;
		pd->usable_bytes = usable_bytes(&rq->gpus[d]);
		ovh[d] = plan_overhead_bytes(rq->engine, &rq->gpus[d], nd);
		avail[d] = pd->usable_bytes > ovh[d] + wk->margin ? pd->usable_bytes - ovh[d] - wk->margin : 0;
		sum += (double)avail[d];
	}
	if (ngl == 0)
		return true;
	/* which device holds each layer */
	int *dev = xcalloc(wk->total, sizeof *dev);
	if (split) {
		double cum = 0;
		for (size_t d = 0; d < nd; d++) {
			cum += sum > 0 ? (double)avail[d] / sum : 1.0 / (double)nd;
			share[d] = cum;
		}
		share[nd - 1] = 1.0 + 1e-9;
		for (uint32_t il = start; il < wk->total; il++) {
			double f = (double)(il - start) / (double)ngl;
			size_t d = 0;
			while (d + 1 < nd && f >= share[d])
				d++;
			dev[il] = (int)d;
		}
	} else {
		/* greedy from the back; the compute buffer is reserved up front */
		uint64_t comp = plan_compute_bytes(wk->m, wk->cells, wk->batch, wk->fa, nd > 1) +
				(ngl < wk->total || wk->ncm ? wk->largest_tensor : 0);
		size_t d = nd - 1;
		uint64_t used = comp;
		for (uint32_t il = wk->total; il-- > start;) {
			uint64_t need = item_bytes(wk, il) + item_kv(wk, il);
			while (used + need > avail[d] && d > 0) {
				d--;
				used = comp;
			}
			used += need;
			dev[il] = (int)d;
		}
	}
	size_t nused = 0;
	for (uint32_t il = start; il < wk->total; il++) {
		plan_device *pd = &r->devices[dev[il]];
		if (pd->layers == 0) {
			pd->first_layer = il;
			nused++;
		}
		pd->layers++;
		pd->weights_bytes += item_bytes(wk, il);
		pd->kv_cache_bytes += item_kv(wk, il);
		if (il == wk->n)
			pd->has_output = true;
	}
	free(dev);
	bool ok = true;
	for (size_t d = 0; d < nd; d++) {
		plan_device *pd = &r->devices[d];
		if (pd->layers == 0)
			continue;
		pd->compute_bytes = plan_compute_bytes(wk->m, wk->cells, wk->batch, wk->fa, nused > 1);
		/* Partial offload: the GPU also receives copies of host weights
		 * for large-batch matrix products (ggml-backend offload_op). */
		if (ngl < wk->total || wk->ncm)
			pd->compute_bytes += wk->largest_tensor;
		pd->overhead_bytes = ovh[d];
		pd->total_bytes = pd->weights_bytes + pd->kv_cache_bytes + pd->compute_bytes +
				  pd->overhead_bytes;
		if (pd->total_bytes + wk->margin > pd->usable_bytes)
			ok = false;
	}
	return ok;
}

static void sum_devices(plan_result *r)
{
	r->weights_bytes = r->kv_cache_bytes = r->compute_bytes = r->overhead_bytes = 0;
	for (size_t d = 0; d < r->n_devices; d++) {
		r->weights_bytes += r->devices[d].weights_bytes;
		r->kv_cache_bytes += r->devices[d].kv_cache_bytes;
		r->compute_bytes += r->devices[d].compute_bytes;
		r->overhead_bytes += r->devices[d].overhead_bytes;
	}
	r->vram_bytes = r->weights_bytes + r->kv_cache_bytes + r->compute_bytes + r->overhead_bytes;
}

/* Host side of a llama.cpp-style placement with ngl layers on the GPUs. */
static void host_part(const work *wk, uint32_t ngl, plan_result *r)
{
	uint32_t start = wk->total - ngl;
	uint64_t hw = wk->w.embd_bytes + wk->w.other_bytes, hk = 0;
	for (uint32_t il = 0; il < start; il++) {
		hw += item_bytes(wk, il);
		hk += item_kv(wk, il);
	}
	hw += cpu_expert_bytes(wk, 0, wk->n);
	r->host_weights_bytes = hw;
	r->host_kv_bytes = hk;
	/* Host compute buffer: with everything on the GPUs llama.cpp keeps the
	 * f32 input embeddings and KQ mask there (CUDA_Host compute 24.01 MiB =
	 * 4b(e + c) for Llama-3-8B at 8192, 4090_v3.ipynb); with CPU layers the
	 * whole graph can run there. */
	uint64_t b = wk->batch, e = wk->m->hidden;
	if (ngl == wk->total && wk->rq->n_gpus > 0)
		r->host_compute_bytes = 4 * b * (e + wk->cells);
	else
		r->host_compute_bytes = plan_compute_bytes(wk->m, wk->cells, wk->batch, wk->fa, false);
	/* logits output buffer: n_vocab f32 per sequence */
	r->host_compute_bytes += 4ULL * wk->m->vocab * wk->nseq;
	r->host_bytes = r->host_weights_bytes + r->host_kv_bytes + r->host_compute_bytes;
}

/* ---- engines -------------------------------------------------------------- */
static void plan_llamacpp(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	uint32_t ngl = 0;
	bool found = false;
	if (rq->n_gpus == 0) {
		place(wk, 0, true, r);
	} else if (rq->gpu_layers >= 0) {
		ngl = (uint32_t)rq->gpu_layers > wk->total ? wk->total : (uint32_t)rq->gpu_layers;
		found = place(wk, ngl, true, r) || place(wk, ngl, false, r);
	} else {
		/* most layers that fit; usage grows with ngl, so bisect */
		uint32_t lo = 0, hi = wk->total;
		if (place(wk, hi, true, r) || place(wk, hi, false, r)) {
			ngl = hi;
			found = true;
		} else {
			while (hi - lo > 1) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (place(wk, mid, true, r) || place(wk, mid, false, r))
					lo = mid;
				else
					hi = mid;
			}
			ngl = lo;
			found = lo > 0;
			if (!(place(wk, ngl, true, r)))
				place(wk, ngl, false, r);
		}
	}
	r->gpu_layers = ngl;
	sum_devices(r);
	host_part(wk, ngl, r);
	r->ram_known = rq->ram_bytes > 0;
	r->ram_ok = !r->ram_known || r->host_bytes <= rq->ram_bytes;
	r->n_cpu_moe = wk->ncm;
	if (found && ngl == wk->total && wk->ncm == 0)
		r->verdict = PLAN_FITS;
	else if (found && ngl > 0 && r->ram_ok)
		r->verdict = PLAN_OFFLOAD;
	else
		r->verdict = PLAN_NOFIT;
}

/*
 * vLLM: weights, activations of the profiling run and non-torch memory
 * come first; every byte left of gpu_memory_utilization x VRAM becomes KV
 * cache (vllm worker determine_available_memory).  A plan fits when that
 * KV space holds one sequence of the context; the GPU then holds the whole
 * pre-allocated share.  Tensor parallel over the given GPUs.
 * Activations: profiled with max_num_batched_tokens T (8192): T x (4 x
 * ffn/tp x 2 B + 4 x hidden x 2 B) plus the sampler's 256 x vocab x 4 B x
 * 2, which gives 1.18 GiB for Llama-3-8B at TP=2 against the 1.26 GiB
 * measured (vllm-project/vllm pull 10511) [calibrated].
 */
static void plan_vllm(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	const model_desc *m = wk->m;
	size_t tp = rq->n_gpus ? rq->n_gpus : 1;
	double util = rq->gpu_mem_util > 0 ? rq->gpu_mem_util : 0.9;
	uint64_t tokens = 8192;
	uint64_t ffn = m->n_experts ? (m->expert_ffn ? m->expert_ffn : m->ffn) * m->n_experts_used : m->ffn;
	uint64_t act = tokens * (4 * ffn / tp * 2 + 4ULL * m->hidden * 2) + 256ULL * m->vocab * 4 * 2;
	uint64_t kv_need = plan_kv_bytes(m, 0, m->n_layers, wk->ctx, 1, 0, wk->kv) / tp;
	uint64_t wts = wk->w.total_bytes / tp;
	bool ok = rq->n_gpus > 0;

	memset(r->devices, 0, sizeof r->devices);
	r->n_devices = rq->n_gpus;
	for (size_t d = 0; d < rq->n_gpus; d++) {
		plan_device *pd = &r->devices[d];
		snprintf(pd->name, sizeof pd->name, "%s", rq->gpus[d].name);
		pd->vram_total_bytes = rq->gpus[d].vram_bytes;
		pd->usable_bytes = (uint64_t)((double)usable_bytes(&rq->gpus[d]) * util);
		pd->weights_bytes = wts;
		pd->compute_bytes = act;
		pd->overhead_bytes = plan_overhead_bytes(rq->engine, &rq->gpus[d], rq->n_gpus);
		uint64_t fixed = wts + act + pd->overhead_bytes;
		uint64_t kv_space = pd->usable_bytes > fixed ? pd->usable_bytes - fixed : 0;
		if (kv_space < kv_need) {
			ok = false;
			pd->kv_cache_bytes = kv_need;
		} else {
			pd->kv_cache_bytes = kv_space;
		}
		pd->layers = wk->total;
		pd->has_output = true;
		pd->total_bytes = fixed + pd->kv_cache_bytes;
	}
	r->gpu_layers = ok ? wk->total : 0;
	sum_devices(r);
	r->host_weights_bytes = r->host_kv_bytes = 0;
	r->host_compute_bytes = 0;
	r->host_bytes = 0;
	r->ram_known = rq->ram_bytes > 0;
	r->ram_ok = true;
	r->verdict = ok ? PLAN_FITS : PLAN_NOFIT;
}

/*
 * transformers (device_map="auto"): every weight in its storage dtype on
 * the GPUs, the DynamicCache for ctx tokens, and the prefill activations
 * as torch.cuda.max_memory_allocated sees them with SDPA/flash attention:
 * s x (3 x ffn + 4 x hidden) x 2 B plus the last token's f32 logits
 * [calibrated on QwenLM speed_benchmark rows: Qwen2.5-7B BF16 at 32768
 * 20.28 vs 19.97 GiB, Qwen2.5-14B at 2049 28.1 vs 28.08 GiB].  Layers
 * that do not fit stay on the CPU (accelerate's offload), first layers on
 * the GPU.
 */
static void plan_transformers(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	const model_desc *m = wk->m;
	uint64_t ffn = m->n_experts ? (m->expert_ffn ? m->expert_ffn : m->ffn) * m->n_experts_used : m->ffn;
	uint64_t s = wk->ctx * wk->nseq;
	uint64_t act = s * (3 * ffn + 4ULL * m->hidden) * 2 + 4ULL * m->vocab * wk->nseq;
	size_t nd = rq->n_gpus;

	memset(r->devices, 0, sizeof r->devices);
	r->n_devices = nd;
	uint64_t cap[PLAN_MAX_GPUS];
	for (size_t d = 0; d < nd; d++) {
		plan_device *pd = &r->devices[d];
		snprintf(pd->name, sizeof pd->name, "%s", rq->gpus[d].name);
		pd->vram_total_bytes = rq->gpus[d].vram_bytes;
		pd->usable_bytes = usable_bytes(&rq->gpus[d]);
		pd->overhead_bytes = plan_overhead_bytes(rq->engine, &rq->gpus[d], nd);
		pd->compute_bytes = d == 0 ? act : 0;
		uint64_t fixed = pd->overhead_bytes + pd->compute_bytes + (d == 0 ? wk->w.embd_bytes : 0) +
				 (d == nd - 1 ? wk->w.output_bytes : 0);
		cap[d] = pd->usable_bytes > fixed ? pd->usable_bytes - fixed : 0;
		pd->weights_bytes = (d == 0 ? wk->w.embd_bytes : 0) + (d == nd - 1 ? wk->w.output_bytes : 0);
		pd->first_layer = UINT32_MAX;
	}
	uint32_t on_gpu = 0;
	size_t d = 0;
	uint64_t used = 0;
	bool fixed_ok = true;
	for (size_t k = 0; k < nd; k++)
		if (r->devices[k].usable_bytes < r->devices[k].overhead_bytes + r->devices[k].compute_bytes)
			fixed_ok = false;
	for (uint32_t il = 0; nd > 0 && fixed_ok && il < wk->n; il++) {
		uint64_t need = wk->w.layer_bytes[il] + wk->layer_kv[il];
		while (d < nd && used + need > cap[d]) {
			d++;
			used = 0;
		}
		if (d >= nd)
			break;
		plan_device *pd = &r->devices[d];
		if (pd->first_layer == UINT32_MAX)
			pd->first_layer = il;
		pd->layers++;
		pd->weights_bytes += wk->w.layer_bytes[il];
		pd->kv_cache_bytes += wk->layer_kv[il];
		used += need;
		on_gpu++;
	}
	bool all = on_gpu == wk->n;
	for (size_t k = 0; k < nd; k++) {
		plan_device *pd = &r->devices[k];
		if (k == nd - 1 && all) {
			pd->has_output = true;
			pd->layers++;
		}
		if (pd->first_layer == UINT32_MAX)
			pd->first_layer = 0;
		pd->total_bytes = pd->weights_bytes + pd->kv_cache_bytes + pd->compute_bytes + pd->overhead_bytes;
	}
	r->gpu_layers = on_gpu + (all ? 1 : 0);
	sum_devices(r);
	uint64_t hw = 0, hk = 0;
	for (uint32_t il = on_gpu; il < wk->n; il++) {
		hw += wk->w.layer_bytes[il];
		hk += wk->layer_kv[il];
	}
	if (!all && nd > 0) {
		/* the output layer was reserved on the last GPU; move it home */
		r->devices[nd - 1].weights_bytes -= wk->w.output_bytes;
		r->devices[nd - 1].total_bytes -= wk->w.output_bytes;
		hw += wk->w.output_bytes;
		sum_devices(r);
	}
	r->host_weights_bytes = hw;
	r->host_kv_bytes = hk;
	r->host_compute_bytes = 0;
	r->host_bytes = hw + hk;
	r->ram_known = rq->ram_bytes > 0;
	r->ram_ok = !r->ram_known || r->host_bytes <= rq->ram_bytes;
	if (all && fixed_ok)
		r->verdict = PLAN_FITS;
	else if (on_gpu > 0 && r->ram_ok)
		r->verdict = PLAN_OFFLOAD;
	else
		r->verdict = PLAN_NOFIT;
}

/* ---- speed ---------------------------------------------------------------- */
static double moe_read_fraction(const model_desc *m)
{
	if (m->n_experts > 0 && m->n_experts_used > 0)
		return (double)m->n_experts_used / (double)m->n_experts;
	return 1.0;
}

/* Bytes of layers [a, b) read per token: MoE reads only the active experts. */
static double read_bytes(const work *wk, uint32_t a, uint32_t b)
{
	double f = moe_read_fraction(wk->m), sum = 0;
	for (uint32_t il = a; il < b; il++) {
		if (il >= wk->n) {
			sum += (double)wk->w.output_bytes;
			continue;
		}
		double x = (double)wk->w.layer_expert_bytes[il];
		sum += (double)wk->w.layer_bytes[il] - x + x * f;
		/* attention reads the KV cache, on average half full */
		sum += (double)wk->layer_kv[il] * 0.5;
	}
	return sum;
}

static void speed(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	plan_engine e = rq->engine;
	bool metal = rq->n_gpus > 0 && rq->gpus[0].unified_memory;
	double lat_ms = e == PLAN_ENGINE_TRANSFORMERS ? DEC_LAT_HF_MS
			: e == PLAN_ENGINE_VLLM	      ? DEC_LAT_VLLM_MS
			: metal			      ? DEC_LAT_METAL_MS
						      : DEC_LAT_CUDA_MS;
	double host_bw = (rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS) * 1e9;
	double t = wk->n * lat_ms / 1000.0;
	bool known = true;
	size_t used = 0;
	double gpu_bytes = 0;

	r->decode_tok_s = r->prefill_tok_s = 0;
	if (e == PLAN_ENGINE_VLLM) {
		/* tensor parallel: every GPU reads its share at once */
		if (rq->n_gpus == 0 || r->verdict == PLAN_NOFIT)
			return;
		double bw = rq->gpus[0].bandwidth_gbs * 1e9 * DEC_BW_FRACTION_OTHER;
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
			double peak = rq->gpus[d].bandwidth_gbs * 1e9;
			double bw;
			if (e == PLAN_ENGINE_TRANSFORMERS)
				bw = peak * DEC_BW_FRACTION_OTHER;
			else
				bw = fmin(peak * DEC_BW_FRACTION, DEC_BW_CEIL_GBS * 1e9);
			uint32_t a = pd->first_layer, b = pd->first_layer + pd->layers;
			double bytes = read_bytes(wk, a, b) -
				       (double)cpu_expert_bytes(wk, a, b) * moe_read_fraction(wk->m);
			gpu_bytes += bytes;
			if (bw <= 0)
				known = false;
			else
				t += bytes / bw;
		}
		double host_bytes;
		if (e == PLAN_ENGINE_TRANSFORMERS)
			host_bytes = read_bytes(wk, r->gpu_layers, wk->total);
		else
			host_bytes = read_bytes(wk, 0, wk->total - r->gpu_layers);
		if (r->gpu_layers == 0)
			host_bytes = read_bytes(wk, 0, wk->total);
		else /* experts kept in RAM (--n-cpu-moe): only the active ones are read */
			host_bytes += (double)cpu_expert_bytes(wk, wk->total - r->gpu_layers, wk->n) *
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
	double flops = 2.0 * params;
	double tf = 0;
	for (size_t d = 0; d < rq->n_gpus; d++) {
		if (rq->gpus[d].fp16_tflops <= 0)
			return;
		if (e == PLAN_ENGINE_VLLM)
			tf += rq->gpus[d].fp16_tflops;
		else if (d == 0 || rq->gpus[d].fp16_tflops < tf)
			tf = rq->gpus[d].fp16_tflops; /* a layer split runs one GPU at a time */
	}
	double tp = flops / (tf * 1e12 * PREFILL_EFF);
	if (r->gpu_layers < r->total_layers && e != PLAN_ENGINE_VLLM) {
		/* host weights cross PCIe once per batch of tokens */
		int gen = rq->gpus[0].spec ? rq->gpus[0].spec->pcie_gen : 4;
		double pcie = gen >= 5 ? 48e9 : gen == 4 ? 24e9 : gen == 3 ? 12e9 : 6e9;
		if (rq->gpus[0].unified_memory)
			pcie = host_bw;
		tp += (double)r->host_weights_bytes / pcie / (double)wk->batch;
	}
	r->prefill_tok_s = 1.0 / tp;
}

/* ---- one plan --------------------------------------------------------------- */
static int work_init(work *wk, const plan_request *rq, gw_error *err)
{
	const model_desc *m = rq->model;
	memset(wk, 0, sizeof *wk);
	wk->rq = rq;
	wk->m = m;
	if (!m)
		return gw_fail(err, GW_EINVAL, "no model");
	int rc = plan_weights_get(m, rq->quant, &wk->w, err);
	if (rc)
		return rc;
	wk->n = m->n_layers;
	wk->total = m->n_layers + 1;
	wk->nseq = rq->n_parallel ? rq->n_parallel : 1;
	wk->batch = rq->batch ? rq->batch : 512;
	wk->kv = rq->kv_type;
	wk->fa = rq->flash_attn;
	uint64_t trained = m->ctx_train ? m->ctx_train : 4096;
	if (rq->ctx)
		wk->ctx = rq->ctx;
	else if (rq->engine == PLAN_ENGINE_VLLM)
		wk->ctx = trained; /* vLLM's max_model_len defaults to the model's */
	else
		wk->ctx = trained < 4096 ? trained : 4096;
	if (rq->engine == PLAN_ENGINE_VLLM || rq->engine == PLAN_ENGINE_TRANSFORMERS)
		wk->cells = wk->ctx * wk->nseq;
	else
		wk->cells = plan_kv_cells(wk->ctx, wk->nseq);
	if (rq->engine != PLAN_ENGINE_LLAMACPP && rq->engine != PLAN_ENGINE_OLLAMA)
		wk->fa = true; /* SDPA / flash kernels: no materialised KQ */
	/* llama.cpp's automatic fit (on by default, common/common.h
	 * fit_params_target = 1 GiB) keeps 1 GiB free on every device; an
	 * explicit -ngl does not. */
	if (rq->engine == PLAN_ENGINE_LLAMACPP && rq->gpu_layers < 0)
		wk->margin = GiB;
	if (m->n_experts && rq->engine == PLAN_ENGINE_LLAMACPP)
		wk->ncm = rq->n_cpu_moe > m->n_layers ? m->n_layers : rq->n_cpu_moe;
	wk->layer_kv = xcalloc(wk->n ? wk->n : 1, sizeof *wk->layer_kv);
	for (uint32_t il = 0; il < wk->n; il++)
		wk->layer_kv[il] = plan_kv_bytes(m, il, 1, wk->cells, wk->nseq, wk->batch, wk->kv);
	/* largest tensor of a block ~ one FFN matrix (or one expert tensor) */
	uint64_t lb = 0, lx = 0;
	for (uint32_t il = 0; il < wk->n; il++) {
		if (wk->w.layer_bytes[il] > lb)
			lb = wk->w.layer_bytes[il];
		if (wk->w.layer_expert_bytes[il] > lx)
			lx = wk->w.layer_expert_bytes[il];
	}
	if (lx)
		wk->largest_tensor = lx / 3;
	else if (m->hidden && m->ffn)
		wk->largest_tensor = (uint64_t)((double)lb * 0.3);
	return 0;
}

static void work_release(work *wk)
{
	plan_weights_release(&wk->w);
	free(wk->layer_kv);
}

/* Memory, verdict and speed only. */
static int plan_one(const plan_request *rq, plan_result *r, gw_error *err)
{
	work wk;
	memset(r, 0, sizeof *r);
	if (rq->n_gpus > PLAN_MAX_GPUS)
		return gw_fail(err, GW_EINVAL, "at most %d GPUs", PLAN_MAX_GPUS);
	/* bytes are uint64_t: refuse shapes whose products would not fit */
	const model_desc *m = rq->model;
	if (m) {
		double e = m->hidden, L = m->n_layers, kvw = (double)(m->n_kv_heads + 1) * (m->head_dim_k + m->head_dim_v + 2);
		double ffn = (double)(m->ffn > m->expert_ffn ? m->ffn : m->expert_ffn) * (m->n_experts + 1);
		double ctx = (double)(rq->ctx ? rq->ctx : 131072) * (rq->n_parallel ? rq->n_parallel : 1);
		double b = rq->batch ? rq->batch : 512;
		if (L * e * (4 * e + 3 * ffn) * 4 > 1e18 || (double)m->vocab * e * 8 > 1e18 ||
		    L * kvw * ctx * 8 > 1e18 || 4 * b * ctx * (m->n_heads + 1) > 1e18)
			return gw_fail(err, GW_ERANGE, "the model or context is too large to plan (over an exabyte)");
	}
	int rc = work_init(&wk, rq, err);
	if (rc)
		return rc;
	r->engine = rq->engine;
	snprintf(r->quant, sizeof r->quant, "%s", wk.w.quant);
	r->weights_exact = wk.w.exact;
	r->ctx = rq->engine == PLAN_ENGINE_VLLM || rq->engine == PLAN_ENGINE_TRANSFORMERS
			 ? wk.ctx
			 : wk.cells / wk.nseq;
	r->kv_cells = wk.cells;
	r->batch = wk.batch;
	r->n_parallel = wk.nseq;
	r->kv_type = wk.kv;
	r->flash_attn = wk.fa;
	r->total_layers = wk.total;
	r->model_bytes = wk.w.total_bytes;
	r->embd_bytes = wk.w.embd_bytes;
	r->kv_total_bytes = 0;
	for (uint32_t il = 0; il < wk.n; il++)
		r->kv_total_bytes += wk.layer_kv[il];
	switch (rq->engine) {
	case PLAN_ENGINE_VLLM:
		plan_vllm(&wk, r);
		break;
	case PLAN_ENGINE_TRANSFORMERS:
		plan_transformers(&wk, r);
		break;
	default:
		plan_llamacpp(&wk, r);
		break;
	}
	speed(&wk, r);
	work_release(&wk);
	return 0;
}

/* ---- max context ------------------------------------------------------------ */
/*
 * Largest context (a multiple of 256, at most the trained context) that
 * keeps the verdict: for "fits" the largest that still fits; for
 * "offload" the largest that keeps at least as many layers on the GPUs.
 */
static uint64_t search_max_ctx(const plan_request *rq, const plan_result *base)
{
	if (base->verdict == PLAN_NOFIT)
		return 0;
	plan_request t = *rq;
	t.skip_advice = true;
	uint64_t trained = rq->model->ctx_train ? rq->model->ctx_train : 131072;
	uint64_t lo = 0, hi = trained / 256 + 1; /* in units of 256; lo ok, hi not */
	plan_result *r = xmalloc(sizeof *r);
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		t.ctx = mid * 256;
		gw_error e;
		bool ok = plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT &&
			  (base->verdict == PLAN_FITS ? r->verdict == PLAN_FITS
						      : r->gpu_layers >= base->gpu_layers);
		if (ok)
			lo = mid;
		else
			hi = mid;
	}
	free(r);
	uint64_t best = lo * 256;
	if (best > trained)
		best = trained;
	return best;
}

/* ---- advice ----------------------------------------------------------------- */
static void fmt_gib(char *buf, size_t n, uint64_t b)
{
	snprintf(buf, n, "%.1f GiB", (double)b / (double)GiB);
}

static void describe(const plan_result *r, char *buf, size_t n)
{
	char v[32];
	fmt_gib(v, sizeof v, r->vram_bytes);
	int k;
	if (r->verdict == PLAN_FITS)
		k = snprintf(buf, n, "fits: %s on the GPU", v);
	else if (r->verdict == PLAN_OFFLOAD)
		k = snprintf(buf, n, "offload: %u of %u layers on the GPU", r->gpu_layers, r->total_layers);
	else
		k = snprintf(buf, n, "still does not fit");
	if (k > 0 && (size_t)k < n && r->decode_tok_s > 0)
		snprintf(buf + k, n - (size_t)k, ", ~%.0f tok/s decode", r->decode_tok_s);
}

/* Is b better than a (verdict, then GPU layers, then speed by 5%)? */
static bool better(const plan_result *a, const plan_result *b)
{
	if (b->verdict != a->verdict)
		return b->verdict < a->verdict;
	if (b->gpu_layers != a->gpu_layers)
		return b->gpu_layers > a->gpu_layers;
	return b->decode_tok_s > a->decode_tok_s * 1.05;
}

static void add_advice(plan_result *res, const plan_result *after, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_str(plan_advice *a, const char *key, const char *v)
{
	if (a->n_set >= PLAN_ADVICE_MAX_SET)
		return;
	plan_advice_set *s = &a->set[a->n_set++];
	snprintf(s->key, sizeof s->key, "%s", key);
	s->type = PLAN_SET_STR;
	size_t i = 0;
	for (; v[i] && i + 1 < sizeof s->str; i++) /* option spelling: q3_k_m, not Q3_K_M */
		s->str[i] = (char)tolower((unsigned char)v[i]);
	s->str[i] = 0;
}

static void set_num(plan_advice *a, const char *key, unsigned long long v, bool is_bool)
{
	if (a->n_set >= PLAN_ADVICE_MAX_SET)
		return;
	plan_advice_set *s = &a->set[a->n_set++];
	snprintf(s->key, sizeof s->key, "%s", key);
	s->type = is_bool ? PLAN_SET_BOOL : PLAN_SET_NUM;
	s->num = v;
}

/*
 * The advice's option changes, read off the two plans: what differs
 * between the plan as asked (res) and the plan after the change.
 */
static void advice_set(plan_advice *a, const plan_result *res, const plan_result *after)
{
	if (after->engine != res->engine)
		set_str(a, "engine", plan_engine_name(after->engine));
	if (strcmp(after->quant, res->quant))
		set_str(a, "quant", after->quant);
	if (after->ctx != res->ctx)
		set_num(a, "ctx", after->ctx, false);
	if (after->batch != res->batch)
		set_num(a, "batch", after->batch, false);
	if (after->kv_type != res->kv_type)
		set_str(a, "kv_type", plan_kv_type_name(after->kv_type));
	if (after->flash_attn != res->flash_attn)
		set_num(a, "flash_attn", after->flash_attn, true);
	if (after->n_cpu_moe != res->n_cpu_moe)
		set_num(a, "n_cpu_moe", after->n_cpu_moe, false);
	if (after->n_devices && res->n_devices && strcmp(after->devices[0].name, res->devices[0].name)) {
		const gpu_spec *g = kb_gpu_find(after->devices[0].name);
		set_str(a, "gpu", g ? g->id : after->devices[0].name);
	}
	if (after->verdict == PLAN_OFFLOAD && after->n_cpu_moe == 0 &&
	    (after->gpu_layers != res->gpu_layers || res->verdict != PLAN_OFFLOAD || after == res))
		set_num(a, "gpu_layers", after->gpu_layers, false);
	if (res->ram_known && !res->ram_ok && after->ram_ok)
		set_num(a, "ram_bytes", after->host_bytes + GiB, false);
}

static void add_advice(plan_result *res, const plan_result *after, const char *fmt, ...)
{
	if (res->n_advice >= PLAN_MAX_ADVICE)
		return;
	plan_advice *a = &res->advice[res->n_advice++];
	memset(a, 0, sizeof *a);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->action, sizeof a->action, fmt, ap);
	va_end(ap);
	describe(after, a->effect, sizeof a->effect);
	a->verdict = after->verdict;
	a->vram_bytes = after->vram_bytes;
	a->gpu_layers = after->gpu_layers;
	a->decode_tok_s = after->verdict == PLAN_NOFIT ? 0 : after->decode_tok_s;
	advice_set(a, res, after);
}

/* The quantization ladder, best first (GGUF and non-GGUF). */
static const char *const gguf_ladder[] = {"f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k"};
static const char *const hf_ladder[] = {"bf16", "fp8", "awq-int4"};

/* A catalog card with today's price (new when on sale, else used). */
typedef struct priced_card {
	const gpu_spec *g;
	price_quote q;
	bool used;
} priced_card;

static int by_price(const void *a, const void *b)
{
	double x = ((const priced_card *)a)->q.usd, y = ((const priced_card *)b)->q.usd;
	return (x > y) - (x < y);
}

static void advise(const plan_request *rq, plan_result *res)
{
	plan_request t = *rq;
	t.skip_advice = true;
	plan_result *r = xmalloc(sizeof *r);
	gw_error e;
	bool gguf = rq->engine == PLAN_ENGINE_LLAMACPP || rq->engine == PLAN_ENGINE_OLLAMA;
	const char *const *ladder = gguf ? gguf_ladder : hf_ladder;
	size_t nl = gguf ? sizeof gguf_ladder / sizeof *gguf_ladder : sizeof hf_ladder / sizeof *hf_ladder;

	/* 1. a lower quantization step */
	size_t at = nl;
	for (size_t i = 0; i < nl; i++) {
		char a[32], b[32];
		snprintf(a, sizeof a, "%s", ladder[i]);
		snprintf(b, sizeof b, "%s", res->quant);
		for (char *p = b; *p; p++)
			*p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
		if (!strcmp(a, b) || (!strcmp(a, "bf16") && !strcmp(b, "f16")) ||
		    (!strcmp(a, "f16") && !strcmp(b, "bf16")) || (!strcmp(a, "f16") && !strcmp(b, "f32")))
			at = i;
	}
	if (at == nl && gguf)
		at = 0; /* unknown or unusual recipe: try the whole ladder below f16 */
	for (size_t i = at + 1; i < nl; i++) {
		t = *rq;
		t.skip_advice = true;
		t.quant = ladder[i];
		if (plan_one(&t, r, &e) == 0 && better(res, r)) {
			add_advice(res, r, "use a lower quantization: --quant %s", ladder[i]);
			break;
		}
	}

	/* 2. a smaller context or batch */
	if (res->verdict != PLAN_FITS) {
		t = *rq;
		t.skip_advice = true;
		uint64_t lo = 0, hi = res->ctx / 256; /* find largest ctx that fits */
		while (hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;
			t.ctx = mid * 256;
			if (plan_one(&t, r, &e) == 0 && r->verdict == PLAN_FITS)
				lo = mid;
			else
				hi = mid;
		}
		if (lo > 0) {
			t.ctx = lo * 256;
			if (plan_one(&t, r, &e) == 0)
				add_advice(res, r, "use a smaller context: --ctx %llu",
					   (unsigned long long)t.ctx);
		} else if (res->batch > 128) {
			t = *rq;
			t.skip_advice = true;
			t.batch = 128;
			t.ctx = res->ctx;
			if (plan_one(&t, r, &e) == 0 && better(res, r))
				add_advice(res, r, "use a smaller batch: --batch 128");
		}
	}

	/* 3. KV cache quantization */
	if (rq->kv_type == PLAN_KV_F16 || rq->kv_type == PLAN_KV_BF16 || rq->kv_type == PLAN_KV_F32) {
		static const plan_kv_type kvs[] = {PLAN_KV_Q8_0, PLAN_KV_Q4_0};
		for (size_t i = 0; i < 2; i++) {
			if (rq->engine == PLAN_ENGINE_TRANSFORMERS)
				break;
			if (rq->engine == PLAN_ENGINE_VLLM && i > 0)
				break;
			t = *rq;
			t.skip_advice = true;
			t.kv_type = kvs[i];
			if (rq->engine != PLAN_ENGINE_VLLM)
				t.flash_attn = true;
			if (plan_one(&t, r, &e) == 0 && better(res, r)) {
				if (rq->engine == PLAN_ENGINE_VLLM)
					add_advice(res, r, "quantize the KV cache: --kv-cache-dtype fp8");
				else if (rq->engine == PLAN_ENGINE_OLLAMA)
					add_advice(res, r,
						   "quantize the KV cache: OLLAMA_KV_CACHE_TYPE=%s (needs "
						   "OLLAMA_FLASH_ATTENTION=1)",
						   plan_kv_type_name(kvs[i]));
				else
					add_advice(res, r,
						   "quantize the KV cache: --kv-type %s --flash-attn (llama.cpp "
						   "-ctk %s -ctv %s needs -fa)",
						   plan_kv_type_name(kvs[i]), plan_kv_type_name(kvs[i]),
						   plan_kv_type_name(kvs[i]));
				break;
			}
		}
	}

	/* 4. partial offload: for MoE, the experts of the first N blocks in RAM
	 * beat whole layers there (decode reads only the active experts) */
	if (res->verdict != PLAN_FITS && rq->engine == PLAN_ENGINE_LLAMACPP && rq->model->n_experts &&
	    rq->n_cpu_moe == 0 && rq->n_gpus > 0) {
		uint32_t lo = 0, hi = rq->model->n_layers + 1; /* smallest N that holds every layer */
		t = *rq;
		t.skip_advice = true;
		t.gpu_layers = -1;
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			t.n_cpu_moe = mid;
			if (plan_one(&t, r, &e) == 0 && r->gpu_layers == r->total_layers && r->verdict != PLAN_NOFIT)
				hi = mid;
			else
				lo = mid;
		}
		if (hi <= rq->model->n_layers) {
			t.n_cpu_moe = hi;
			if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT &&
			    r->decode_tok_s > res->decode_tok_s)
				add_advice(res, r, "keep the MoE experts of %u layers in RAM: --n-cpu-moe %u (all "
						   "layers on the GPU)", hi, hi);
		}
	}
	if (res->verdict == PLAN_OFFLOAD && gguf) {
		char need[32];
		fmt_gib(need, sizeof need, res->host_bytes);
		add_advice(res, res, "offload: -ngl %u keeps %u layers in host RAM (%s)", res->gpu_layers,
			   res->total_layers - res->gpu_layers, need);
	} else if (res->verdict == PLAN_NOFIT && !gguf && rq->n_gpus > 0) {
		t = *rq;
		t.skip_advice = true;
		t.engine = PLAN_ENGINE_LLAMACPP;
		/*
		 * Keep the weights as asked where llama.cpp has the format (BF16,
		 * F16); otherwise say plainly that the quantization changes.
		 */
		char same[32];
		size_t i = 0;
		for (; res->quant[i] && i + 1 < sizeof same; i++)
			same[i] = (char)tolower((unsigned char)res->quant[i]);
		same[i] = 0;
		t.quant = same;
		if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT) {
			add_advice(res, r, "offload layers to the CPU with llama.cpp, weights kept at %s "
					   "(--engine llama.cpp --quant %s)", res->quant, same);
		} else {
			t.quant = "q4_k_m";
			if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT)
				add_advice(res, r, "offload layers to the CPU with llama.cpp, changing the weights from %s "
						   "to 4-bit Q4_K_M (--engine llama.cpp --quant q4_k_m)", res->quant);
		}
	} else if (res->verdict == PLAN_NOFIT && res->ram_known && !res->ram_ok && res->gpu_layers > 0 &&
		   !(rq->n_gpus && rq->gpus[0].unified_memory)) { /* unified memory: no RAM to add */
		char need[32];
		fmt_gib(need, sizeof need, res->host_bytes);
		t = *rq;
		t.skip_advice = true;
		t.ram_bytes = res->host_bytes + GiB;
		if (plan_one(&t, r, &e) == 0)
			add_advice(res, r, "more host RAM: the offloaded part needs %s", need);
	}

	/*
	 * 5. a larger card: the cheapest catalog GPU, with more memory than
	 * the largest one asked about, on which it fits; priced from the dated
	 * tables (new when on sale, else used), never at a launch price.
	 */
	if (res->verdict != PLAN_FITS) {
		size_t n = kb_gpu_count(), k = 0;
		priced_card *cards = xcalloc(n ? n : 1, sizeof *cards);
		uint64_t need = res->model_bytes > res->embd_bytes ? res->model_bytes - res->embd_bytes : 0;
		uint64_t have = 0;
		for (size_t i = 0; i < rq->n_gpus; i++) {
			/* the driver reports a little less than the nominal size: take the larger */
			uint64_t v = rq->gpus[i].vram_bytes;
			if (rq->gpus[i].spec && rq->gpus[i].spec->vram_bytes > v)
				v = rq->gpus[i].spec->vram_bytes;
			if (v > have)
				have = v;
		}
		time_t now = time(NULL);
		struct tm tmv;
		gmtime_r(&now, &tmv);
		for (size_t i = 0; i < n; i++) {
			const gpu_spec *s = kb_gpu_at(i);
			/* a card smaller than the weights, or than the card in question, is no answer */
			bool mac = rq->n_gpus && rq->gpus[0].unified_memory;
			if (!s || s->vram_bytes <= need || s->vram_bytes <= have || s->laptop ||
			    s->unified_memory != mac || strstr(s->name, "SXM"))
				continue; /* a Mac for a Mac; no laptop or server module as a card to plug in */
			priced_card *c = &cards[k];
			c->g = s;
			if (price_quote_get(s, false, false, tmv.tm_year + 1900, &c->q, NULL) || !c->q.known) {
				c->used = true;
				if (price_quote_get(s, true, false, tmv.tm_year + 1900, &c->q, NULL) || !c->q.known)
					continue;
			}
			k++;
		}
		qsort(cards, k, sizeof *cards, by_price);
		for (size_t i = 0; i < k; i++) {
			t = *rq;
			t.skip_advice = true;
			t.n_gpus = 1;
			plan_gpu_from_spec(&t.gpus[0], cards[i].g);
			if (plan_one(&t, r, &e) == 0 && r->verdict == PLAN_FITS) {
				char v[32];
				fmt_gib(v, sizeof v, cards[i].g->vram_bytes);
				add_advice(res, r, "a larger card: %s (%s, %s; about $%.0f %s, %s)", cards[i].g->id,
					   cards[i].g->name, v, cards[i].q.usd, cards[i].used ? "used" : "new", cards[i].q.date);
				break;
			}
		}
		free(cards);
	}
	free(r);
}

int plan_run(const plan_request *rq, plan_result *res, gw_error *err)
{
	int rc = plan_one(rq, res, err);
	if (rc)
		return rc;
	const model_desc *m = rq->model;
	const char *eng = plan_engine_name(rq->engine);
	note(res, "engine %s; weights %s (%s)", eng, res->quant,
	     res->weights_exact ? "exact tensor bytes from the file"
				: "estimated tensor by tensor with llama.cpp's quantization rules");
	if (rq->engine == PLAN_ENGINE_LLAMACPP || rq->engine == PLAN_ENGINE_OLLAMA) {
		note(res, "token embedding (%.2f GiB) stays in host RAM, as llama.cpp keeps it",
		     (double)res->embd_bytes / (double)GiB);
		note(res, "KV cache %s, %llu cells (context padded to 256)%s", plan_kv_type_name(res->kv_type),
		     (unsigned long long)res->kv_cells,
		     res->flash_attn ? ", flash attention" : ", no flash attention (f32 KQ in the compute buffer)");
		note(res, "runtime overhead %s per GPU (CUDA context; Ollama's reserve, ml/device.go)",
		     rq->n_gpus && rq->gpus[0].unified_memory ? "512 MiB" : "457 MiB");
	if (rq->engine == PLAN_ENGINE_LLAMACPP && rq->gpu_layers < 0)
		note(res, "llama.cpp's automatic fit leaves 1 GiB free per GPU (common/common.h "
			  "fit_params_target); --gpu-layers N overrides");
	}
	if (rq->engine == PLAN_ENGINE_OLLAMA)
		note(res, "ollama: num_parallel %u multiplies the KV context", res->n_parallel);
	if (res->n_cpu_moe)
		note(res, "experts of the first %u blocks in host RAM (--n-cpu-moe); decode reads only the active ones",
		     res->n_cpu_moe);
	if (rq->engine == PLAN_ENGINE_VLLM)
		note(res, "vllm: gpu_memory_utilization %.2f pre-allocated, KV cache takes the rest",
		     rq->gpu_mem_util > 0 ? rq->gpu_mem_util : 0.9);
	if (rq->engine == PLAN_ENGINE_TRANSFORMERS)
		note(res, "transformers: torch max_memory_allocated semantics plus the CUDA context");
	if (rq->engine == PLAN_ENGINE_LLAMACPP || rq->engine == PLAN_ENGINE_OLLAMA)
		note(res, "decode: %.2f ms/layer + GPU bytes at min(%.0f%% of peak, %.0f GB/s); fit to llama.cpp "
			  "b2824 llama-bench tg (XiongjieDai)",
		     rq->n_gpus && rq->gpus[0].unified_memory ? DEC_LAT_METAL_MS : DEC_LAT_CUDA_MS,
		     DEC_BW_FRACTION * 100, DEC_BW_CEIL_GBS);
	else
		note(res, "decode: %.2f ms/layer + GPU bytes at %.0f%% of peak bandwidth (uncalibrated for %s)",
		     rq->engine == PLAN_ENGINE_VLLM ? DEC_LAT_VLLM_MS : DEC_LAT_HF_MS,
		     DEC_BW_FRACTION_OTHER * 100, eng);
	note(res, "decode reads the KV cache half full; batch of one sequence");
	if (res->gpu_layers < res->total_layers && rq->engine != PLAN_ENGINE_VLLM)
		note(res, "host part read at %.1f GB/s x %.0f%% (%s)",
		     rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS, HOST_BW_FRACTION * 100,
		     rq->ram_bw_gbs > 0 ? "--ram-bw" : "dual-channel DDR4-3200; set --ram-bw");
	note(res, "prefill: 2 x %.2fB active params FLOPs/token at %.0f%% of fp16 tensor peak",
	     (m->params_active > 0 ? m->params_active : m->params_total) / 1e9, PREFILL_EFF * 100);
	if (rq->n_gpus == 0)
		note(res, "no GPU given: everything in host RAM");
	if (!res->ram_known && res->host_bytes > 0 && rq->engine != PLAN_ENGINE_VLLM)
		note(res, "host RAM not checked (give --ram)");
	if (rq->skip_advice)
		return 0;
	res->max_ctx = search_max_ctx(rq, res);
	advise(rq, res);
	return 0;
}

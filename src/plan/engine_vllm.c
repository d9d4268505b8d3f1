/*
 * engine_vllm.c: vLLM's memory plan (pre-allocated share of the GPU, KV
 * cache takes what is left), tensor parallel over the given GPUs.
 */
#include "plan/engine.h"

#include <stdio.h>
#include <string.h>

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
static void vllm_place(const work *wk, plan_result *r)
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
		pd->usable_bytes = (uint64_t)((double)plan_usable_bytes(&rq->gpus[d]) * util);
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
	plan_sum_devices(r);
	r->host_weights_bytes = r->host_kv_bytes = 0;
	r->host_compute_bytes = 0;
	r->host_bytes = 0;
	r->ram_known = rq->ram_bytes > 0;
	r->ram_ok = true;
	r->ram_need_bytes = r->host_bytes + rq->ram_reserve_bytes;
	r->verdict = ok ? PLAN_FITS : PLAN_NOFIT;
}

/* vLLM's max_model_len defaults to the model's trained context; cells are
 * not padded; its attention kernels never materialise KQ. */
static void vllm_setup(work *wk)
{
	if (!wk->rq->ctx)
		wk->ctx = wk->m->ctx_train ? wk->m->ctx_train : 4096;
	wk->cells = wk->ctx * wk->nseq;
	wk->fa = true;
}

static void vllm_notes(const plan_request *rq, plan_result *r)
{
	plan_note(r, "vllm: gpu_memory_utilization %.2f pre-allocated, KV cache takes the rest",
		  rq->gpu_mem_util > 0 ? rq->gpu_mem_util : 0.9);
}

/* Decode: CUDA-graph vLLM ~0.03 ms per block [assumption], 80% of peak
 * bandwidth (not calibrated against vLLM measurements here). */
const plan_engine_ops plan_engine_vllm_ops = {
	.id = PLAN_ENGINE_VLLM,
	.name = "vllm",
	.gguf = false,
	.setup = vllm_setup,
	.place = vllm_place,
	.notes = vllm_notes,
	.dec_lat_ms = 0.03,
	.dec_lat_metal_ms = 0.03,
	.dec_bw_fraction = 0.80,
	.tensor_parallel = true,
};

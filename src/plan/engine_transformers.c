/*
 * engine_transformers.c: Hugging Face transformers with accelerate's
 * device_map="auto" (first layers on the GPUs, the rest on the CPU).
 */
#include "plan/engine.h"

#include <stdio.h>
#include <string.h>


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
static void transformers_place(const work *wk, plan_result *r)
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
		pd->usable_bytes = plan_usable_bytes(&rq->gpus[d]);
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
	plan_sum_devices(r);
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
		plan_sum_devices(r);
	}
	r->host_weights_bytes = hw;
	r->host_kv_bytes = hk;
	r->host_compute_bytes = 0;
	r->host_bytes = hw + hk;
	r->ram_known = rq->ram_bytes > 0;
	r->ram_need_bytes = r->host_bytes + rq->ram_reserve_bytes;
	r->ram_ok = !r->ram_known || r->ram_need_bytes <= rq->ram_bytes;
	if (all && fixed_ok)
		r->verdict = PLAN_FITS;
	else if (on_gpu > 0 && r->ram_ok)
		r->verdict = PLAN_OFFLOAD;
	else
		r->verdict = PLAN_NOFIT;
}


/* Unpadded cells; SDPA / flash kernels: no materialised KQ. */
static void transformers_setup(work *wk)
{
	wk->cells = wk->ctx * wk->nseq;
	wk->fa = true;
}

static void transformers_notes(const plan_request *rq, plan_result *r)
{
	(void)rq;
	plan_note(r, "transformers: torch max_memory_allocated semantics plus the CUDA context");
}

/* Decode: per-layer latency of Python eager decoding ~0.45 ms
 * [calibrated on QwenLM speed_benchmark rows, transformers 4.46], 80% of
 * peak bandwidth. */
const plan_engine_ops plan_engine_transformers_ops = {
	.id = PLAN_ENGINE_TRANSFORMERS,
	.name = "transformers",
	.gguf = false,
	.setup = transformers_setup,
	.place = transformers_place,
	.notes = transformers_notes,
	.dec_lat_ms = 0.45,
	.dec_lat_metal_ms = 0.45,
	.dec_bw_fraction = 0.80,
};

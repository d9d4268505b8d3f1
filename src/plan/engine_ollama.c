/*
 * engine_ollama.c: Ollama runs llama.cpp's buffers and placement; what
 * differs is its knobs (num_ctx, num_gpu, num_parallel,
 * OLLAMA_FLASH_ATTENTION, OLLAMA_KV_CACHE_TYPE), no automatic 1 GiB fit
 * margin, and --n-cpu-moe is not exposed.
 */
#include "plan/engine.h"

static void ollama_setup(work *wk)
{
	wk->cells = plan_kv_cells(wk->ctx, wk->nseq);
}

static void ollama_notes(const plan_request *rq, plan_result *r)
{
	plan_llamacpp_notes(rq, r);
	plan_note(r, "ollama: num_parallel %u multiplies the KV context", r->n_parallel);
}

const plan_engine_ops plan_engine_ollama_ops = {
	.id = PLAN_ENGINE_OLLAMA,
	.name = "ollama",
	.gguf = true,
	.setup = ollama_setup,
	.place = plan_llamacpp_place,
	.notes = ollama_notes,
	.dec_lat_ms = 0.10,
	.dec_lat_metal_ms = 0.40,
	.dec_bw_fraction = 0.92,
	.dec_bw_ceil_gbs = 1200.0,
	.calibrated = true,
};

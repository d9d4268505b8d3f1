/*
 * engine_ollama.c: Ollama runs llama.cpp's buffers and placement; what
 * differs is its knobs (num_ctx, num_gpu, num_parallel,
 * OLLAMA_FLASH_ATTENTION, OLLAMA_KV_CACHE_TYPE) and --n-cpu-moe is not
 * exposed; the layers are placed by llama-server's automatic fit.
 */
#include "plan/engine.h"

#include <string.h>

/*
 * Ollama turns flash attention on by default per model family:
 * gpt-oss (ollama/ollama pull 11996), qwen3 and qwen3moe (pull 12482),
 * gemma3 (pull 12639), qwen3vl (pull 12862); elsewhere it stays off
 * unless OLLAMA_FLASH_ATTENTION=1.  Its buffers follow the newest
 * llama.cpp graph.
 */
static bool ollama_fa_default(const char *arch)
{
	static const char *const on[] = {"gpt-oss", "gptoss", "qwen3", "qwen3moe", "gemma3", "qwen3vl", "qwen3vlmoe"};
	for (size_t i = 0; arch && i < sizeof on / sizeof on[0]; i++)
		if (!strcmp(arch, on[i]))
			return true;
	return false;
}

static void ollama_setup(work *wk)
{
	wk->build = plan_llamacpp_build_find(NULL);
	/* OLLAMA_NUM_PARALLEL sequences share one pool of num_ctx x n cells
	 * (padded to 256, ml/backend/ggml/ggml.go CacheConfig), whose
	 * sliding-window layers keep window + 1 cells per sequence when there
	 * are several, plus the batch (kvcache/causal.go, Causal.Init) */
	wk->cells = plan_kv_cells(wk->ctx, wk->nseq);
	wk->kvs = (plan_kv_shape){.cells = wk->cells, .n_stream = 1, .n_seq = wk->nseq, .ubatch = wk->batch,
				  .swa_extra_per_seq = wk->nseq > 1 ? 1 : 0};
	plan_llamacpp_resolve_fa(wk, ollama_fa_default(wk->m->arch));
	/*
	 * Placement: Ollama runs llama.cpp's own server since v0.24 (ollama/ollama
	 * #16031, 2026-05-29, "use llama-server exclusively for GGML models") and
	 * passes no -ngl unless num_gpu is set (llm/llama_server.go: "let
	 * llama-server auto-detect"), so llama.cpp's automatic fit places the
	 * layers: LLAMA_ARG_FIT_TARGET unset, its 1 GiB free per GPU
	 * (llm/llama_server.go extraEnvsForStart pads it only for a vision
	 * projector), and for a MoE model the experts to host RAM first
	 * (plan.c fit_moe).  Its own estimate (llm/memory.go) is gone.
	 */
	if (wk->rq->gpu_layers < 0)
		wk->margin = GiB;
	/* the fit's expert offload (Ollama itself has no --n-cpu-moe knob) */
	if (wk->m->n_experts)
		wk->ncm = wk->rq->n_cpu_moe > wk->m->n_layers ? wk->m->n_layers : wk->rq->n_cpu_moe;
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
	.knob_ctx = "num_ctx",
	.knob_gpu_layers = "num_gpu",
	.knob_fa = "OLLAMA_FLASH_ATTENTION=1",
	.knob_kv = "OLLAMA_KV_CACHE_TYPE=%s",
};

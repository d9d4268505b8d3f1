/*
 * speed.c: decode and prefill tokens/s from the bytes each device reads per
 * token and the FLOPs of a batch.  Engine constants come from its ops.
 *
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
 * The per-engine constants (c, fraction, ceiling) are in each engine's ops.
 */
#include "plan/engine.h"

#include <math.h>

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
		if (model_layer_recurrent(m, il))
			continue;
		uint32_t nkv = m->layer_kv_heads ? m->layer_kv_heads[il] : m->n_kv_heads;
		if (!nkv)
			continue;
		double pos = (double)ctx / 2;
		if (m->swa_window && m->layer_swa && m->layer_swa[il] && pos > m->swa_window)
			pos = m->swa_window;
		sum += 2.0 * m->n_heads * ((double)m->head_dim_k + m->head_dim_v) * pos;
	}
	return sum;
}

void plan_speed(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	bool metal = rq->n_gpus > 0 && rq->gpus[0].unified_memory;
	double lat_ms = metal ? ops->dec_lat_metal_ms : ops->dec_lat_ms;
	double host_bw = (rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS) * 1e9;
	double t = wk->n * lat_ms / 1000.0;
	bool known = true;
	size_t used = 0;
	double gpu_bytes = 0;

	r->decode_tok_s = r->prefill_tok_s = 0;
	if (ops->tensor_parallel) {
		/* tensor parallel: every GPU reads its share at once */
		if (rq->n_gpus == 0 || r->verdict == PLAN_NOFIT)
			return;
		double bw = rq->gpus[0].bandwidth_gbs * 1e9 * ops->dec_bw_fraction;
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
			bw = peak * ops->dec_bw_fraction;
			if (ops->dec_bw_ceil_gbs > 0)
				bw = fmin(bw, ops->dec_bw_ceil_gbs * 1e9);
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
	double tp = flops / (tf * 1e12 * PREFILL_EFF);
	if (r->gpu_layers < r->total_layers && !ops->tensor_parallel) {
		/* host weights cross PCIe once per batch of tokens */
		int gen = rq->gpus[0].spec ? rq->gpus[0].spec->pcie_gen : 4;
		double pcie = gen >= 5 ? 48e9 : gen == 4 ? 24e9 : gen == 3 ? 12e9 : 6e9;
		if (rq->gpus[0].unified_memory)
			pcie = host_bw;
		tp += (double)r->host_weights_bytes / pcie / (double)wk->batch;
	}
	r->prefill_tok_s = 1.0 / tp;
}

void plan_speed_notes(const plan_request *rq, plan_result *r)
{
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	const model_desc *m = rq->model;
	bool metal = rq->n_gpus && rq->gpus[0].unified_memory;
	if (ops->calibrated)
		plan_note(r, "decode: %.2f ms/layer + GPU bytes at min(%.0f%% of peak, %.0f GB/s); fit to llama.cpp "
			     "b2824 llama-bench tg (XiongjieDai)",
			  metal ? ops->dec_lat_metal_ms : ops->dec_lat_ms, ops->dec_bw_fraction * 100,
			  ops->dec_bw_ceil_gbs);
	else
		plan_note(r, "decode: %.2f ms/layer + GPU bytes at %.0f%% of peak bandwidth (uncalibrated for %s)",
			  ops->dec_lat_ms, ops->dec_bw_fraction * 100, ops->name);
	plan_note(r, "decode reads the KV cache half full; batch of one sequence");
	if (r->gpu_layers < r->total_layers && !ops->tensor_parallel)
		plan_note(r, "host part read at %.1f GB/s x %.0f%% (%s)",
			  rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : HOST_BW_DEFAULT_GBS, HOST_BW_FRACTION * 100,
			  rq->ram_bw_gbs > 0 ? "--ram-bw" : "dual-channel DDR4-3200; set --ram-bw");
	double p2 = 2 * (m->params_active > 0 ? m->params_active : m->params_total);
	double att = plan_attn_flops(m, r->ctx);
	plan_note(r, "prefill: 2 x %.2fB active params + attention %.2f GFLOPs/token (%.0f%% of the total at "
		     "ctx %llu) at %.0f%% of fp16 tensor peak",
		  p2 / 2e9, att / 1e9, p2 + att > 0 ? 100 * att / (p2 + att) : 0, (unsigned long long)r->ctx,
		  PREFILL_EFF * 100);
}

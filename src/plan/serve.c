/*
 * serve.c: many users on one server (plan --parallel N, --per-user-tps):
 * llama.cpp server slots or vLLM's continuous batching decode N sequences
 * in one step, which reads the weights once for all of them.
 *
 *   step(N) = max(t1 + (N - 1) x t_kv, N x t_flop) + (N - 1) x t_seq
 *
 * t1: one sequence's decode step, from the speed model (plan_speed, the
 * plan at --parallel 1: weights + its own KV cache + per-token latency);
 * t_kv: reading one more sequence's KV cache (half full on average) at the
 * bandwidth decode gets (serve_kv_seconds); t_flop: one token's FLOPs (2 x
 * active params + attention at that context) at SERVE_COMPUTE_EFF of the
 * tensor peak; t_seq: the engine's own work per sequence and step
 * (scheduling, sampling).  Per request: 1 / step; aggregate: N / step.
 * Decode turns compute-bound where N x t_flop passes the memory term.  The
 * most sequences: the largest N whose KV cache still fits (llama.cpp:
 * the plan at --parallel N still fits; vLLM: its KV pool / one sequence's
 * KV, and at most max_num_seqs 256).
 *
 * Where this meets the speed model: t1 is plan_speed's figure; the
 * bandwidth and FLOP rate are the engine fields speed.c reads today
 * (dec_bw_fraction, dec_bw_ceil_gbs, fp16_tflops) in serve_kv_seconds and
 * serve_flop_seconds, which a per-backend table can replace.
 * Validated in tests/validation/serving-throughput.tsv (tests/e2e/serving.t).
 */
#include "plan/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Share of the dense fp16 tensor peak a batched decode step's GEMMs reach
 * [assumption: half, between llama.cpp's MMQ and cuBLAS bf16 at batch 64+]. */
#define SERVE_COMPUTE_EFF 0.50
/* vLLM's CPU-side work per sequence and step (scheduler, sampler, output
 * processing): 0.28 ms, fitted on the one fit row of
 * serving-throughput.tsv (H100, Llama-3.1-8B fp16, 16 concurrent: TPOT
 * 10.94 ms against 6.57 ms for one sequence and 15 x 0.0125 ms of KV). */
#define SERVE_VLLM_SEQ_MS 0.28
/* llama.cpp server: not measured here; sampling is per slot on the CPU
 * [assumption: 0.05 ms]. */
#define SERVE_LLAMACPP_SEQ_MS 0.05
/* vLLM's default max_num_seqs (EngineArgs) */
#define SERVE_VLLM_MAX_SEQS 256
#define SERVE_MAX_N 4096

/* Seconds to read one more sequence's KV cache, half full, in one step. */
static double serve_kv_seconds(const plan_request *rq, const plan_result *r1)
{
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	if (rq->cpu_only) {
		double bw = plan_host_read_gbs(rq) * 1e9;
		return bw > 0 ? 0.5 * (double)r1->kv_total_bytes / bw : 0;
	}
	if (ops->tensor_parallel) {
		double bw = 0;
		for (size_t d = 0; d < rq->n_gpus; d++)
			bw += rq->gpus[d].bandwidth_gbs * 1e9 * ops->dec_bw_fraction;
		return bw > 0 ? 0.5 * (double)r1->kv_total_bytes / bw : 0;
	}
	double t = 0;
	for (size_t d = 0; d < r1->n_devices && d < rq->n_gpus; d++) {
		double bw = rq->gpus[d].bandwidth_gbs * 1e9 * ops->dec_bw_fraction;
		if (ops->dec_bw_ceil_gbs > 0)
			bw = fmin(bw, ops->dec_bw_ceil_gbs * 1e9);
		if (bw <= 0)
			return 0;
		t += 0.5 * (double)r1->devices[d].kv_cache_bytes / bw;
	}
	if (r1->host_kv_bytes) {
		double hb = plan_host_peak_gbs(rq) * 1e9 * 0.5; /* offloaded layers' KV in host RAM */
		t += 0.5 * (double)r1->host_kv_bytes / hb;
	}
	return t;
}

/* Seconds of compute for one sequence's token in a batched step. */
static double serve_flop_seconds(const plan_request *rq, uint64_t ctx)
{
	const model_desc *m = rq->model;
	double params = m->params_active > 0 ? m->params_active : m->params_total;
	double flops = 2.0 * params + plan_attn_flops(m, ctx);
	double rate = 0;
	if (rq->cpu_only) {
		rate = plan_host_gflops(rq) * 1e9;
	} else if (plan_engine_ops_of(rq->engine)->tensor_parallel) {
		for (size_t d = 0; d < rq->n_gpus; d++)
			rate += rq->gpus[d].fp16_tflops * 1e12 * SERVE_COMPUTE_EFF;
	} else {
		for (size_t d = 0; d < rq->n_gpus; d++) { /* a layer split runs one GPU at a time */
			double x = rq->gpus[d].fp16_tflops * 1e12 * SERVE_COMPUTE_EFF;
			if (d == 0 || x < rate)
				rate = x;
		}
	}
	return rate > 0 && flops > 0 ? flops / rate : 0;
}

static plan_serve_point point(const plan_serve *s, uint32_t n)
{
	plan_serve_point p = {.n = n};
	double mem = s->t1_ms + (double)(n - 1) * s->kv_ms_per_seq;
	double comp = (double)n * s->compute_ms_per_seq;
	p.compute_bound = comp > mem;
	p.step_ms = fmax(mem, comp) + (double)(n - 1) * s->overhead_ms_per_seq;
	p.per_request_tok_s = 1000.0 / p.step_ms;
	p.aggregate_tok_s = (double)n * p.per_request_tok_s;
	return p;
}

/* Does the plan at n sequences keep the verdict of the plan at one? */
static bool fits_at(const plan_request *rq, const plan_result *r1, uint32_t n, plan_result *tmp)
{
	plan_request t = *rq;
	t.n_parallel = n;
	t.skip_advice = true;
	if (plan_run(&t, tmp, NULL))
		return false;
	return r1->verdict == PLAN_FITS ? tmp->verdict == PLAN_FITS
					: tmp->verdict != PLAN_NOFIT && tmp->gpu_layers >= r1->gpu_layers;
}

int plan_serve_run(const plan_request *rq, double per_user_tok_s, plan_serve *s, gw_error *err)
{
	memset(s, 0, sizeof *s);
	s->n_asked = rq->n_parallel ? rq->n_parallel : 1;
	s->per_user_tok_s = per_user_tok_s;
	plan_request one = *rq;
	one.n_parallel = 1;
	one.skip_advice = true;
	plan_result *r1 = xcalloc(1, sizeof *r1), *tmp = xcalloc(1, sizeof *tmp);
	int rc = plan_run(&one, r1, err);
	if (rc || r1->verdict == PLAN_NOFIT || r1->decode_tok_s <= 0)
		goto out;
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	s->ctx = r1->ctx;
	s->kv_bytes_per_seq = r1->kv_total_bytes;
	s->t1_ms = 1000.0 / r1->decode_tok_s;
	s->kv_ms_per_seq = 1000.0 * serve_kv_seconds(rq, r1);
	s->compute_ms_per_seq = 1000.0 * serve_flop_seconds(rq, r1->ctx);
	s->overhead_ms_per_seq = rq->engine == PLAN_ENGINE_VLLM ? SERVE_VLLM_SEQ_MS
				 : ops->gguf			 ? SERVE_LLAMACPP_SEQ_MS
								 : 0;
	if (ops->tensor_parallel) {
		/* vLLM: the pre-allocated pool over one sequence's share per GPU */
		uint64_t per = r1->kv_total_bytes / (rq->n_gpus ? rq->n_gpus : 1);
		uint64_t most = UINT64_MAX;
		for (size_t d = 0; d < r1->n_devices; d++)
			if (per && r1->devices[d].kv_cache_bytes / per < most)
				most = r1->devices[d].kv_cache_bytes / per;
		s->kv_max_seqs = most == UINT64_MAX ? 0 : most > SERVE_MAX_N ? SERVE_MAX_N : (uint32_t)most;
		s->engine_max_seqs = SERVE_VLLM_MAX_SEQS;
	} else {
		/* llama.cpp: the cells grow with -np; the largest N that still fits */
		uint32_t lo = 1, hi = SERVE_MAX_N + 1;
		if (fits_at(rq, r1, SERVE_MAX_N, tmp))
			lo = SERVE_MAX_N;
		else
			while (hi - lo > 1) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (fits_at(rq, r1, mid, tmp))
					lo = mid;
				else
					hi = mid;
			}
		s->kv_max_seqs = lo;
		s->engine_max_seqs = 0;
	}
	s->max_seqs = s->kv_max_seqs;
	if (s->engine_max_seqs && s->engine_max_seqs < s->max_seqs)
		s->max_seqs = s->engine_max_seqs;
	if (s->max_seqs < 1)
		s->max_seqs = 1;
	s->known = true;
	s->asked = point(s, s->n_asked);
	s->asked_fits = s->n_asked <= s->max_seqs;
	for (uint32_t n = 1; n <= s->max_seqs && s->n_points < PLAN_SERVE_MAX_POINTS; n *= 2)
		s->points[s->n_points++] = point(s, n);
	for (uint32_t n = 1; n <= s->max_seqs; n++)
		if (point(s, n).compute_bound) {
			s->compute_bound_from = n;
			break;
		}
	if (per_user_tok_s > 0)
		for (uint32_t n = 1; n <= s->max_seqs; n++) {
			if (point(s, n).per_request_tok_s < per_user_tok_s)
				break;
			s->users_at_target = n;
		}
out:
	free(r1);
	free(tmp);
	return rc;
}

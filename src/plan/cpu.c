/*
 * cpu.c: the CPU-only plan (plan --gpu none): llama.cpp with every layer on
 * the host, its verdict (the whole model in host RAM or not) and its speed.
 *
 * Where this meets the speed model (speed.c): plan_speed() runs first, as
 * for every plan; for a CPU-only plan plan_cpu_speed() then replaces its
 * decode and prefill with the host model below, and plan_cpu_notes() takes
 * the place of plan_speed_notes().  The two host figures are each one
 * function (plan_host_read_gbs, plan_host_gflops) so that a per-backend
 * speed table can replace their constants without touching the rest.
 *
 * Decode reads every weight once per token (MoE: the active experts) plus
 * the sequence's KV cache, half full on average:
 *   t = bytes / min(CPU_BW_FRACTION x host peak, threads x CPU_THREAD_GBS)
 * Prefill is compute bound: 2 x active params + attention FLOPs per token
 * over threads x CPU_THREAD_GFLOPS.
 * Checked against published llama-bench CPU rows in
 * tests/validation/cpu-llama-bench.tsv (tests/e2e/plan-cpu.t prints the
 * fitted and held-out errors).
 */
#include "plan/engine.h"

#include <math.h>
#include <stdio.h>

/* Dual-channel DDR4-3200: 2 x 8 B x 3200 MT/s = 51.2 GB/s [derived]; the
 * assumption when neither --host-bw nor a measurement says otherwise. */
#define CPU_HOST_BW_DEFAULT_GBS 51.2
/* Share of the DRAM peak llama.cpp's CPU matrix-vector kernels stream:
 * 0.70, fitted on the two fit-set rows of cpu-llama-bench.tsv (i7-7820HQ
 * DDR4-2400 x2: 72%; i9-13900K DDR5-6400 x2: 68%). */
#define CPU_BW_FRACTION 0.70
/* What one thread can stream from DRAM: ~16 GB/s per core, the limit a
 * few threads hit on a many-channel server [assumption: the single-core
 * STREAM figure of current x86 and Apple cores; held-out rows test it]. */
#define CPU_THREAD_GBS 16.0
/* Prefill GFLOP/s per thread of llama.cpp's CPU GEMM (llamafile sgemm,
 * AVX2): 90, fitted on the i7-7820HQ pp512 row (22.5 tok/s x 16.1 GFLOP /
 * 4 threads). */
#define CPU_THREAD_GFLOPS 90.0
/* Threads when the caller gives none (plan --cpu counts this machine's
 * physical cores, llama.cpp's default) [assumption: a desktop's cores]. */
#define CPU_THREADS_DEFAULT 8

static uint32_t threads_of(const plan_request *rq)
{
	return rq->cpu_threads ? rq->cpu_threads : CPU_THREADS_DEFAULT;
}

double plan_host_peak_gbs(const plan_request *rq)
{
	return rq->ram_bw_gbs > 0 ? rq->ram_bw_gbs : CPU_HOST_BW_DEFAULT_GBS;
}

double plan_host_read_gbs(const plan_request *rq)
{
	double by_dram = plan_host_peak_gbs(rq) * CPU_BW_FRACTION;
	double by_threads = (double)threads_of(rq) * CPU_THREAD_GBS;
	return fmin(by_dram, by_threads);
}

double plan_host_gflops(const plan_request *rq)
{
	return (double)threads_of(rq) * CPU_THREAD_GFLOPS;
}

/* Bytes one decoded token reads: every block (MoE: the active experts),
 * the output layer, and this sequence's KV cache half full. */
static double token_bytes(const work *wk)
{
	const model_desc *m = wk->m;
	double f = m->n_experts > 0 && m->n_experts_used > 0 ? (double)m->n_experts_used / m->n_experts : 1.0;
	double sum = (double)wk->w.output_bytes;
	for (uint32_t il = 0; il < wk->n; il++) {
		double x = (double)wk->w.layer_expert_bytes[il];
		sum += (double)wk->w.layer_bytes[il] - x + x * f;
		sum += (double)wk->layer_kv[il] / (wk->nseq ? wk->nseq : 1) * 0.5;
	}
	return sum;
}

void plan_cpu_verdict(const work *wk, plan_result *r)
{
	(void)wk;
	r->gpu_layers = 0;
	r->verdict = !r->ram_known || r->ram_ok ? PLAN_FITS : PLAN_NOFIT;
}

void plan_cpu_speed(const work *wk, plan_result *r)
{
	const plan_request *rq = wk->rq;
	double bytes = token_bytes(wk);
	r->gpu_bytes_per_token = 0;
	r->host_bytes_per_token = bytes;
	r->decode_tok_s = r->prefill_tok_s = 0;
	if (r->verdict == PLAN_NOFIT)
		return;
	double bw = plan_host_read_gbs(rq) * 1e9;
	if (bw > 0 && bytes > 0)
		r->decode_tok_s = bw / bytes;
	double params = wk->m->params_active > 0 ? wk->m->params_active : wk->w.params;
	double flops = 2.0 * params + plan_attn_flops(wk->m, wk->ctx);
	double fl = plan_host_gflops(rq) * 1e9;
	if (flops > 0 && fl > 0)
		r->prefill_tok_s = fl / flops;
}

void plan_cpu_notes(const plan_request *rq, plan_result *r)
{
	double peak = plan_host_peak_gbs(rq), by_dram = peak * CPU_BW_FRACTION;
	double by_threads = (double)threads_of(rq) * CPU_THREAD_GBS;
	plan_note(r, "CPU only: llama.cpp with all %u layers on the host, %u thread%s%s", r->total_layers,
		  threads_of(rq), threads_of(rq) == 1 ? "" : "s",
		  rq->cpu_threads ? "" : _(" (assumed; set --threads)"));
	char cap[64] = "";
	if (by_threads < by_dram)
		snprintf(cap, sizeof cap, ", capped at %.1f GB/s by the threads (%.0f GB/s each)", by_threads,
			 CPU_THREAD_GBS);
	plan_note(r, "host memory %.1f GB/s peak (%s); decode streams %.0f%% of it = %.1f GB/s%s", peak,
		  rq->host_mem_from ? rq->host_mem_from
		  : rq->ram_bw_gbs > 0 ? _("given") : _("assumed dual-channel DDR4-3200; set --host-bw or --host-mem"),
		  CPU_BW_FRACTION * 100, by_dram, cap);
	plan_note(r, "decode reads the weights and the KV cache (half full) once per token; prefill at %.0f "
		     "GFLOP/s per thread",
		  CPU_THREAD_GFLOPS);
}

/*
 * engine.h (internal to plan/): the interface every inference engine
 * implements.  plan.c builds the working state (weights, context, KV per
 * layer) once; an engine adjusts the defaults it owns (setup), places the
 * model on the GPUs and host RAM (place), and states its assumptions
 * (notes).  The decode-speed constants of an engine are fields, so the
 * speed model has no per-engine branches.
 *
 * One file per engine: engine_llamacpp.c, engine_ollama.c (llama.cpp's
 * placement with Ollama's knobs), engine_vllm.c, engine_transformers.c.
 * A new engine is a new file and one line in plan_engine_ops_of().
 */
#ifndef GW_PLAN_ENGINE_H
#define GW_PLAN_ENGINE_H

#include "plan/plan.h"

/* What differs between llama.cpp builds (llamacpp_builds.c). */
typedef struct plan_llamacpp_build {
	const char *id;     /* "b2824", or the commit of an untagged build */
	const char *date;   /* year-month of the build */
	bool fa_auto;       /* -fa defaults to auto (else off) */
	bool fit_margin;    /* the automatic fit leaves 1 GiB free per GPU */
	bool graph_phases;  /* compute buffer from today's graph (lgraph.c; the
			     * phase model for architectures it lacks)
			     * (else Ollama's closed form, as b2824 printed) */
	bool arch_memory;   /* MLA K-only latent cache, recurrent state,
			     * NextN/MTP blocks skipped */
	bool auto_fit;      /* common/fit.cpp: the automatic fit places MoE
			     * experts (plan.c fit_moe) */
	const char *source;
} plan_llamacpp_build;

/* NULL or "latest": the newest; NULL for an unknown build. */
const plan_llamacpp_build *plan_llamacpp_build_find(const char *id);
const char *plan_llamacpp_build_list(void);

/* The working state of one plan. */
typedef struct work {
	const plan_request *rq;
	const model_desc *m;
	plan_weights w;
	uint64_t ctx, cells; /* cells: of a full-attention layer, all streams */
	uint32_t batch, nseq;
	/* the KV layout (streams); an engine's setup fills it, else one
	 * unified cache of `cells` */
	plan_kv_shape kvs;
	plan_kv_type kv;
	bool fa;
	uint32_t n;       /* repeating blocks */
	uint32_t total;   /* n + 1 (output layer) */
	uint64_t *layer_kv; /* n */
	uint64_t largest_tensor; /* largest single weight tensor of a block (approx) */
	uint64_t margin;  /* memory the engine leaves free per GPU */
	uint32_t ncm;     /* --n-cpu-moe: blocks whose experts stay in host RAM */
	const plan_llamacpp_build *build; /* llama.cpp-family engines: the build planned */
	bool fa_assumed;  /* flash attention resolved from the engine's default */
	/* llama.cpp: compute buffers of a split graph (several GPUs, layers or
	 * experts in host RAM) from the graph split device by device (else the
	 * rule the placement searches use) */
	bool exact_split;
} work;

typedef struct plan_engine_ops {
	plan_engine id;
	const char *name;
	/* GGUF weights and llama.cpp's buffers: padded KV cells, the GGUF
	 * quantization ladder, layers offloaded to host RAM */
	bool gguf;
	/* engine defaults on the working state (context, cells, flash
	 * attention, free-memory margin); called before the KV is sized */
	void (*setup)(work *wk);
	/* memory per device, the host part and the verdict */
	void (*place)(const work *wk, plan_result *r);
	/* the engine's assumptions, appended to r->notes */
	void (*notes)(const plan_request *rq, plan_result *r);
	/* decode model: per-block latency (ms) on CUDA/ROCm and on Metal,
	 * fraction of peak bandwidth, effective ceiling (GB/s; 0 none) */
	double dec_lat_ms, dec_lat_metal_ms, dec_bw_fraction, dec_bw_ceil_gbs;
	bool tensor_parallel;  /* every GPU reads its share at once */
	/* the engine's own names for the knobs the advice turns */
	const char *knob_ctx, *knob_gpu_layers, *knob_fa, *knob_kv;
	bool calibrated;       /* decode fitted to measurements of this engine */
} plan_engine_ops;

extern const plan_engine_ops plan_engine_llamacpp_ops, plan_engine_ollama_ops, plan_engine_vllm_ops,
	plan_engine_transformers_ops;
const plan_engine_ops *plan_engine_ops_of(plan_engine e);

/* llama.cpp's placement (shared by llama.cpp and Ollama). */
void plan_llamacpp_place(const work *wk, plan_result *r);
void plan_llamacpp_setup(work *wk);
void plan_llamacpp_resolve_fa(work *wk, bool auto_on);
void plan_llamacpp_notes(const plan_request *rq, plan_result *r);

/* Shared helpers (plan.c). */
void plan_note(plan_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t plan_usable_bytes(const plan_gpu *g);
void plan_sum_devices(plan_result *r);
/* Expert bytes of blocks [a, b) that --n-cpu-moe keeps in host RAM. */
uint64_t plan_cpu_expert_bytes(const work *wk, uint32_t a, uint32_t b);

/* Speed (speed.c): decode and prefill tokens/s into r, and its note. */
void plan_speed(const work *wk, plan_result *r);
void plan_speed_notes(const plan_request *rq, plan_result *r);
/* Attention FLOPs per prompt token over a prompt of ctx tokens. */
double plan_attn_flops(const model_desc *m, uint64_t ctx);

/* The CPU-only plan (cpu.c): verdict (all in host RAM or not), then
 * decode/prefill from the host model, replacing plan_speed's, and its
 * assumptions in place of plan_speed_notes'. */
void plan_cpu_verdict(const work *wk, plan_result *r);
void plan_cpu_speed(const work *wk, plan_result *r);
void plan_cpu_notes(const plan_request *rq, plan_result *r);

#endif

/*
 * plan: will a model fit a GPU (or several GPUs plus host RAM), how is it
 * split, and how fast does it run.  Pure functions over model_desc and
 * plain GPU descriptions; nothing here prints or exits.
 *
 * The memory model reproduces llama.cpp's own buffers (its load log is the
 * ground truth for local inference): model buffer per device, KV buffer by
 * cache type, compute buffer, plus a per-GPU runtime overhead that llama.cpp
 * does not report (CUDA context).  Other engines (ollama, vllm,
 * transformers) are profiles over the same parts.
 *
 * Layer numbering follows llama.cpp: the n repeating blocks are layers
 * 0..n-1 and the output layer (output_norm + output) is layer n, so a model
 * has total_layers = n + 1 and `-ngl K` puts the last K of them on the GPUs.
 */
#ifndef GW_PLAN_H
#define GW_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kb/kb.h"
#include "model/model.h"
#include "plan/speed.h"
#include "util/util.h"

#define PLAN_MAX_GPUS 16
#define PLAN_MAX_ADVICE 8
#define PLAN_MAX_NOTES 16

typedef enum {
	PLAN_ENGINE_LLAMACPP,
	PLAN_ENGINE_OLLAMA,
	PLAN_ENGINE_VLLM,
	PLAN_ENGINE_TRANSFORMERS,
} plan_engine;

typedef enum { PLAN_FITS, PLAN_OFFLOAD, PLAN_NOFIT } plan_verdict;

/* Flash attention as asked (llama.cpp -fa auto|on|off).  Auto is what the
 * engine does by default on that GPU; `true` assigned to it means on. */
typedef enum { PLAN_FA_AUTO = 0, PLAN_FA_ON = 1, PLAN_FA_OFF = 2 } plan_fa;

/* KV cache element types llama.cpp accepts for -ctk/-ctv. */
typedef enum {
	PLAN_KV_F16,
	PLAN_KV_BF16,
	PLAN_KV_F32,
	PLAN_KV_Q8_0,
	PLAN_KV_Q5_1,
	PLAN_KV_Q5_0,
	PLAN_KV_Q4_1,
	PLAN_KV_Q4_0,
	PLAN_KV_IQ4_NL,
} plan_kv_type;

/* One GPU the plan may use. */
typedef struct plan_gpu {
	char name[96];
	const gpu_spec *spec;   /* catalog entry, or NULL (--vram, unknown card) */
	uint64_t vram_bytes;    /* total memory of the device */
	uint64_t free_bytes;    /* memory free now (hw snapshot); 0 = all of it */
	double bandwidth_gbs;   /* peak memory bandwidth; 0 unknown */
	double fp16_tflops;     /* dense fp16 tensor TFLOPS; 0 unknown */
	bool unified_memory;    /* Apple / SoC: VRAM is host RAM */
	/* where bandwidth_gbs comes from when not the spec sheet ("gpuwise bench
	 * 0.1.0 on 2026-12-01"); NULL: the catalog's peak */
	const char *bandwidth_from;
} plan_gpu;

/* What to plan.  Zero values mean "the engine's default". */
typedef struct plan_request {
	const model_desc *model;
	const char *quant;      /* recipe/type/format id; NULL: the file's own or q4_k_m */
	plan_engine engine;
	uint64_t ctx;           /* context tokens per sequence; 0: min(4096, trained) */
	uint32_t batch;         /* physical batch (llama.cpp -ub, ollama num_batch); 0: 512 */
	uint32_t n_parallel;    /* sequences (ollama num_parallel, llama.cpp -np); 0: 1 */
	/* one KV cache shared by the sequences (llama.cpp --kv-unified, what
	 * llama-server's -np auto sets); false: llama.cpp's default of a stream
	 * of ctx cells per sequence, each with its own sliding-window cache */
	bool kv_unified;
	/* llama.cpp -nopo: no op offload (ops of weights in host memory stay
	 * on the CPU; else GPU 0 runs the large-batch ones); what RPC devices
	 * do too (ggml-rpc has no offload_op) */
	bool no_op_offload;
	/* llama.cpp --no-mmap (Ollama use_mmap false): the host part is read
	 * into memory of its own instead of living in the mapped file's page
	 * cache; false: llama.cpp's default mmap (engine_llamacpp.c mapped_bytes) */
	bool no_mmap;
	/* Windows' display driver (WDDM; WSL 2 runs on it too): what does not fit
	 * the dedicated VRAM spills into shared system memory instead of failing
	 * (NVIDIA's CUDA Sysmem Fallback Policy, on by default); only a forced
	 * placement (gpu_layers given) overflows, the automatic fit does not */
	bool sysmem_fallback;
	plan_kv_type kv_type;
	plan_fa flash_attn;
	/* engine version profile ("b2824" for llama.cpp); NULL: the newest one
	 * the oracle test checks (plan_engine_spec_parse reads "llama.cpp@b2824") */
	const char *engine_build;
	const char *currency;   /* the reader's currency for prices in the advice (ISO 4217); NULL: USD */
	plan_gpu gpus[PLAN_MAX_GPUS];
	size_t n_gpus;
	int gpu_layers;         /* -1: as many as fit (the planner's search) */
	uint32_t n_cpu_moe;     /* llama.cpp --n-cpu-moe: experts of the first N layers in RAM */
	/* llama.cpp -sm row: each layer's weight matrices split by rows over the
	 * GPUs (shares as the layer split's), KV cache and the rest on GPU 0 */
	bool split_row;
	uint64_t ram_bytes;     /* host RAM available; 0 unknown */
	/* of ram_bytes, what the system keeps for itself when ram_bytes is the
	 * installed RAM (--ram): the host part must fit beside it, else the
	 * host is starved; 0 when ram_bytes is already what is left
	 * (MemAvailable less headroom) */
	uint64_t ram_reserve_bytes;
	double ram_bw_gbs;      /* host memory bandwidth; 0: default assumption */
	const char *ram_bw_from; /* where ram_bw_gbs comes from ("gpuwise bench ..."); NULL: --ram-bw */
	/* what the notes say of the host memory's bandwidth ("DDR5-6000 x2 channels, SMBIOS",
	 * "assumed DDR4-3200 x2: ..."); NULL: from ram_bw_from or --ram-bw */
	const char *host_mem_from;
	plan_backend backend;   /* llama.cpp backend; AUTO: by the GPU's vendor */
	double gpu_mem_util;    /* vllm gpu_memory_utilization; 0: 0.9 */
	bool cpu_only;          /* --gpu none: llama.cpp on the host CPU alone (n_gpus 0) */
	uint32_t cpu_threads;   /* threads of the CPU backend (llama.cpp -t); 0: 8 */
	bool skip_advice;       /* internal: no advice, no max-context search */
	/* internal: with skip_advice, still the plan shown's per-device graphs
	 * (an advice item re-planned as the user will see it) */
	bool exact_split;
} plan_request;

void plan_request_init(plan_request *rq);

/* Per-device usage under a plan. */
typedef struct plan_device {
	char name[96];
	uint64_t vram_total_bytes;
	uint64_t usable_bytes;   /* what the engine may use on it */
	uint32_t layers;         /* layers on it (the output layer counts as one) */
	uint32_t first_layer;    /* first layer index on it */
	bool has_output;
	uint64_t weights_bytes, kv_cache_bytes, compute_bytes, overhead_bytes;
	uint64_t total_bytes;    /* the sum of the four */
} plan_device;

/* One option a piece of advice sets, for scripts (plan --json "set"). */
#define PLAN_ADVICE_MAX_SET 6
typedef struct plan_advice_set {
	char key[16];            /* quant ctx batch kv_type flash_attn engine gpu_layers n_cpu_moe gpu ram_bytes */
	enum { PLAN_SET_STR, PLAN_SET_NUM, PLAN_SET_BOOL } type;
	char str[48];
	unsigned long long num;  /* numbers and booleans */
} plan_advice_set;

typedef struct plan_advice {
	char action[384]; /* room for a translation (UTF-8 CJK: 3 bytes a character) */
	char effect[384];
	plan_verdict verdict;    /* the verdict after the change */
	/* the change as option fields, and its predicted result */
	plan_advice_set set[PLAN_ADVICE_MAX_SET];
	size_t n_set;
	uint64_t vram_bytes;     /* GPU side after the change */
	uint32_t gpu_layers;
	double decode_tok_s;     /* 0 unknown */
	/* a placement: the same model, weights and context, another choice of
	 * what stays in host RAM (layers, experts); listed first, fastest first */
	bool placement;
} plan_advice;

typedef struct plan_result {
	plan_verdict verdict;
	plan_engine engine;
	char quant[32];          /* the weight format planned ("Q4_K_M") */
	bool weights_exact;      /* weights from a file's tensor table */
	uint64_t ctx;            /* context per sequence as planned (padded) */
	uint64_t kv_cells;       /* KV cells of a full-context layer (ctx x seqs) */
	uint32_t batch, n_parallel;
	bool kv_unified;         /* one stream for all sequences (else one each) */
	uint32_t kv_streams;     /* KV streams (1 unified, n_parallel split) */
	uint64_t kv_stream_cells; /* cells of one stream of a full-attention layer */
	uint64_t kv_swa_cells;   /* cells of one stream of a sliding-window layer (= stream cells without SWA) */
	plan_kv_type kv_type;
	bool flash_attn;         /* as planned (auto resolved) */
	bool flash_attn_assumed; /* resolved from the engine's default (auto) */
	char engine_build[24];   /* the engine profile planned ("0c1e570"); "" none */
	plan_backend backend;    /* the backend the speed models (resolved) */
	char speed_family[16];   /* architecture family of its data/speed.tsv row; "" none */
	char speed_build[16];    /* build column of that row ("latest", "b2824"); "" built-in constants */
	uint32_t gpu_layers, total_layers;
	uint32_t n_cpu_moe;      /* MoE layers whose experts stay in host RAM */
	bool split_row;          /* -sm row planned (several GPUs): every device holds a row slice of every layer */
	/* n_cpu_moe chosen as llama.cpp's automatic fit chooses it (experts to
	 * host RAM first, plan.c fit_moe), not asked; fit_layer_split_tok_s: the
	 * decode of whole layers in host RAM instead (0 unknown) */
	bool fit_moe;
	uint32_t fit_layer_split_layers;
	double fit_layer_split_tok_s;

	/* GPU side, summed over devices */
	uint64_t weights_bytes, kv_cache_bytes, compute_bytes, overhead_bytes;
	uint64_t vram_bytes;
	plan_device devices[PLAN_MAX_GPUS];
	size_t n_devices;

	/* whole model and host side */
	uint64_t model_bytes;    /* all tensor data */
	uint64_t embd_bytes;     /* token embedding (host RAM under llama.cpp) */
	uint64_t kv_total_bytes; /* the whole KV cache, GPU + host */
	uint64_t host_weights_bytes, host_kv_bytes, host_compute_bytes;
	/* the CPU's compute buffer of a graph split over devices (0: not split) */
	uint64_t host_split_compute_bytes;
	uint64_t host_bytes;     /* sum of the host parts */
	bool ram_known, ram_ok;
	uint64_t ram_need_bytes; /* host_bytes (+ the rest of the mapped file) + the request's ram_reserve_bytes */
	/* the GGUF's tensor data llama.cpp maps and populates at load (mmap, its
	 * default) when weights stay in host RAM: what the host holds beside its
	 * own buffers (engine_llamacpp.c); 0 with --no-mmap or no host part */
	uint64_t mapped_bytes;
	/* the placement fits the GPUs (whatever the host RAM says) */
	bool gpus_ok;

	uint64_t max_ctx;        /* largest context that keeps this verdict's layers; 0 none */
	double decode_tok_s, prefill_tok_s; /* 0 when unknown (no bandwidth data) */
	double gpu_bytes_per_token, host_bytes_per_token;
	/* prefill: bytes of host-resident weights copied to the GPU per ubatch
	 * (op offload, speed.c host_prefill); 0 none or run on the CPU */
	double prefill_copy_bytes;
	/* bytes beyond the dedicated VRAM that Windows' driver spills into shared
	 * system memory (sysmem_fallback); 0 none */
	uint64_t spill_bytes;

	plan_advice advice[PLAN_MAX_ADVICE];
	size_t n_advice;
	char notes[PLAN_MAX_NOTES][400]; /* the assumptions behind the numbers */
	size_t n_notes;
} plan_result;

/* ---- the planner ------------------------------------------------------ */
/*
 * Plan rq into res: memory per device, verdict, largest context, speed and
 * (unless rq->skip_advice) ranked advice, each re-planned with its change.
 * Returns 0, or a negative code with err set (unknown quant, no GPU...).
 */
int plan_run(const plan_request *rq, plan_result *res, gw_error *err);

/* ---- parts, exported for tests and other planners ---------------------- */
/* Weights of a model under a weight format, split like llama.cpp loads them. */
typedef struct plan_weights {
	uint32_t n_layers;
	uint64_t *layer_bytes;   /* n_layers */
	uint64_t *layer_expert_bytes; /* n_layers; MoE expert tensors (subset) */
	uint64_t embd_bytes;     /* token embedding: host RAM under llama.cpp */
	uint64_t output_bytes;   /* output layer: output_norm + output (or the tied copy) */
	uint64_t other_bytes;
	uint64_t total_bytes;    /* everything stored (the file's tensor data) */
	double params;
	bool exact;
	char quant[32];
} plan_weights;

/*
 * Weights of m stored as quant (a GGUF recipe "q4_k_m", a GGUF type "q8_0",
 * or a format "bf16", "awq-int4", "nf4" ...); quant NULL or the file's own
 * type takes the exact tensor bytes of a file.  Estimates go tensor by
 * tensor with llama.cpp's quantization rules.  Free with plan_weights_release.
 */
int plan_weights_get(const model_desc *m, const char *quant, plan_weights *w, gw_error *err);
void plan_weights_release(plan_weights *w);

/* Bytes of n elements of a KV type (whole blocks). */
uint64_t plan_kv_row_bytes(plan_kv_type t, uint64_t n);
/*
 * KV cache bytes of layers [first, first+count) of m: full-attention layers
 * hold `cells` cells, sliding-window layers min(cells, window*n_seq+batch)
 * padded to 256.
 */
uint64_t plan_kv_bytes(const model_desc *m, uint32_t first, uint32_t count, uint64_t cells,
		       uint32_t n_seq, uint32_t batch, plan_kv_type t);
/* The KV cache's layout: streams of cells (llama.cpp kv_unified). */
typedef struct plan_kv_shape {
	uint64_t cells;          /* cells of one stream of a full-attention layer */
	uint32_t n_stream;       /* 1: one cache for every sequence; n_seq: one per sequence */
	uint32_t n_seq;          /* sequences (recurrent state rows) */
	uint32_t ubatch;         /* physical batch: a sliding-window cache holds it beyond the window */
	uint32_t swa_extra_per_seq; /* window cells added per sequence (Ollama: 1 with several) */
	bool v_trans;            /* V stored transposed (no flash attention): rows padded to the widest layer's */
} plan_kv_shape;
/* llama.cpp's layout for ctx cells per sequence (padding as its context does). */
void plan_kv_shape_llamacpp(plan_kv_shape *s, uint64_t ctx, uint32_t n_seq, bool unified, uint32_t ubatch);
/* Tokens of the worst-case ubatch llama.cpp reserves (min(n_ctx, ubatch)). */
uint64_t plan_graph_tokens(const plan_kv_shape *s);
/* Cells of one stream of a sliding-window layer. */
uint64_t plan_kv_swa_cells(const model_desc *m, const plan_kv_shape *s);
/* KV cache (and recurrent state) bytes of layers [first, first+count) under s. */
uint64_t plan_kv_shape_bytes(const model_desc *m, uint32_t first, uint32_t count, const plan_kv_shape *s,
			     plan_kv_type t);
/* Recurrent (SSM) state of one recurrent layer for n_seq sequences. */
uint64_t plan_rs_bytes(const model_desc *m, uint32_t n_seq);
/* KV cells llama.cpp allocates for ctx per sequence and n_seq sequences. */
uint64_t plan_kv_cells(uint64_t ctx, uint32_t n_seq);
/*
 * llama.cpp compute buffer on a GPU (graph reserve for `batch` tokens at
 * `cells` KV cells).  multi: the model is split over several GPUs
 * (pipeline-parallel input copies).
 */
uint64_t plan_compute_bytes(const model_desc *m, uint64_t cells, uint32_t batch, bool flash_attn,
			    bool multi);
/*
 * The same from the phases of today's graph (llama.cpp 0c1e570): the peak
 * of the KQ masks + attention, feed-forward/experts, recurrent layers, and
 * the output logits, for a ubatch of s->ubatch tokens over the KV layout s
 * (split streams: each sequence's tokens attend over its own stream).
 */
uint64_t plan_compute_graph_bytes(const model_desc *m, const plan_kv_shape *s, bool flash_attn, plan_kv_type kv,
				  bool multi);
/* Per-GPU runtime overhead an engine adds to its own buffers. */
uint64_t plan_overhead_bytes(plan_engine e, const plan_gpu *g, size_t n_gpus);

const char *plan_engine_name(plan_engine e);
int plan_engine_parse(const char *s, plan_engine *e);
/* "llama.cpp@b2824": the engine and its version profile (*build NULL when
 * no @ part; points into s).  GW_EINVAL for an unknown engine or build. */
int plan_engine_spec_parse(const char *s, plan_engine *e, const char **build);
/* The known builds of an engine, comma-separated, newest first ("" none). */
const char *plan_engine_builds(plan_engine e);
int plan_fa_parse(const char *s, plan_fa *fa);
const char *plan_kv_type_name(plan_kv_type t);
int plan_kv_type_parse(const char *s, plan_kv_type *t);
const char *plan_verdict_name(plan_verdict v); /* "fits" "offload" "no-fit" */

/*
 * Unified memory (Apple, SoC): the one rule for every workload (LLM,
 * training, images).  The GPU may use the share its OS allows (per kind,
 * plan.c); what is "offloaded" stays in the same memory, so it frees
 * nothing and crosses no PCIe link: the CPU side gets the rest less the
 * OS's share, read at the pool's bandwidth.
 */
/* Unified memory (Apple M-series, NVIDIA GB10, AMD Strix Halo): the
 * share of a pool of total bytes the OS lets the GPU use by default, and
 * what is left to the CPU side after the OS.  s NULL: Apple's rule. */
uint64_t plan_unified_gpu_bytes(const gpu_spec *s, uint64_t total);
uint64_t plan_unified_host_bytes(const gpu_spec *s, uint64_t total);
/* The setting that moves the GPU's share, for notes ("sysctl iogpu.wired_limit_mb"). */
const char *plan_unified_knob(const gpu_spec *s);

/*
 * The host side of a CPU-only plan (cpu.c): the host's peak memory
 * bandwidth (--host-bw, or dual-channel DDR4-3200 assumed), what llama.cpp's
 * decode streams of it with rq->cpu_threads threads (GB/s), and the
 * threads' prefill GFLOP/s.  The speed model's backend table may replace
 * these; they are the whole host model.
 */
double plan_host_peak_gbs(const plan_request *rq);
double plan_host_read_gbs(const plan_request *rq);
double plan_host_gflops(const plan_request *rq);

/* ---- serving many users (serve.c) ---------------------------------------- */
#define PLAN_SERVE_MAX_POINTS 16
typedef struct plan_serve_point {
	uint32_t n;              /* sequences decoded together */
	double step_ms;          /* one batched decode step */
	double per_request_tok_s, aggregate_tok_s;
	bool compute_bound;      /* the step's FLOPs outlast its memory reads */
} plan_serve_point;

typedef struct plan_serve {
	bool known;              /* false: the plan at one sequence does not fit or has no speed */
	uint64_t ctx;            /* context per sequence */
	uint32_t n_asked;        /* rq->n_parallel (1 when 0) */
	plan_serve_point asked;  /* at n_asked */
	bool asked_fits;         /* n_asked <= max_seqs */
	plan_serve_point points[PLAN_SERVE_MAX_POINTS]; /* N = 1, 2, 4 ... up to max_seqs */
	size_t n_points;
	uint32_t kv_max_seqs;    /* most sequences of ctx whose KV cache fits */
	uint32_t engine_max_seqs; /* the engine's own cap (vLLM max_num_seqs 256); 0 none */
	uint32_t max_seqs;       /* the smaller of the two */
	uint32_t compute_bound_from; /* smallest N where decode is compute-bound; 0: not up to max_seqs */
	double per_user_tok_s;   /* the target asked; 0 none */
	uint32_t users_at_target; /* most N (<= max_seqs) with per-request tok/s >= the target; 0 none */
	/* the step's parts */
	double t1_ms;            /* one sequence alone (the speed model's decode) */
	double kv_ms_per_seq;    /* each further sequence's KV cache read */
	double compute_ms_per_seq;
	double overhead_ms_per_seq; /* the engine's work per sequence and step */
	uint64_t kv_bytes_per_seq;
} plan_serve;

/*
 * Many users at once on the plan rq describes (rq->n_parallel sequences):
 * per-request and aggregate decode tok/s as N grows, where decode turns
 * compute-bound, the most sequences the KV cache holds, and how many users
 * get per_user_tok_s each (0: not asked).  Returns 0 (s->known false when
 * the plan at one sequence does not fit) or a negative code with err set.
 */
int plan_serve_run(const plan_request *rq, double per_user_tok_s, plan_serve *s, gw_error *err);

/* Fill a plan_gpu from a catalog entry (count copies are the caller's). */
void plan_gpu_from_spec(plan_gpu *g, const gpu_spec *s);

#endif

/*
 * train: GPU memory of fine-tuning a transformer (full, LoRA, QLoRA) and
 * the ranked changes that make it fit.  Pure: takes a model_desc and the
 * options, returns numbers; nothing here prints.
 *
 * Sources (constants cite them where used):
 * - bytes per parameter of mixed-precision Adam: ZeRO, arXiv:1910.02054;
 * - activations per layer: Korthikanti et al., arXiv:2205.05198;
 * - NF4 with block 64 and double quantization: QLoRA, arXiv:2305.14314;
 * - LoRA adapters r*(d_in+d_out) per adapted matrix: arXiv:2106.09685.
 */
#ifndef GW_PLAN_TRAIN_H
#define GW_PLAN_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "util/util.h"

typedef enum { TRAIN_FULL, TRAIN_LORA, TRAIN_QLORA } train_method;
typedef enum { TRAIN_FP32, TRAIN_MIXED_BF16, TRAIN_MIXED_FP16, TRAIN_BF16 } train_precision;
typedef enum {
	TRAIN_ADAMW,
	TRAIN_ADAMW_8BIT,
	TRAIN_PAGED_ADAMW_8BIT,
	TRAIN_SGD,
	TRAIN_ADAFACTOR,
	TRAIN_ADAMW_FUSED,       /* fused kernel (the HF Trainer's default): no step temporaries */
} train_optimizer;
typedef enum { TRAIN_CKPT_NONE, TRAIN_CKPT_SELECTIVE, TRAIN_CKPT_FULL } train_ckpt;
/* LoRA targets: q and v (PEFT's default for the Llama family, Qwen2,
 * Mistral/Mixtral, Gemma), q k v o, every linear map of a layer, or a
 * list of maps (TRAIN_LORA_LIST, lora_mask). */
typedef enum { TRAIN_LORA_QV, TRAIN_LORA_ATTN, TRAIN_LORA_ATTN_MLP, TRAIN_LORA_ALL_LINEAR, TRAIN_LORA_LIST } train_lora_targets;
enum {
	TRAIN_LORA_Q = 1, TRAIN_LORA_K = 2, TRAIN_LORA_V = 4, TRAIN_LORA_O = 8,
	TRAIN_LORA_GATE = 16, TRAIN_LORA_UP = 32, TRAIN_LORA_DOWN = 64,
};
/* How mixed precision keeps the trained weights: the HF Trainer's autocast
 * (fp32 parameters, gradients and states; bf16 copies of the weights made
 * in the forward pass) or DeepSpeed/FSDP's bf16 weights and gradients plus
 * an fp32 master copy (ZeRO, arXiv:1910.02054 sec. 3.1). */
typedef enum { TRAIN_AMP_AUTOCAST, TRAIN_AMP_MASTER } train_amp_layout;
/* The moments of a step whose memory the plan computes. */
typedef enum {
	TRAIN_PHASE_FORWARD,     /* end of forward: the loss's logits */
	TRAIN_PHASE_LOSS_BWD,    /* the loss and lm_head backward */
	TRAIN_PHASE_LAYER_BWD,   /* backward through the layers */
	TRAIN_PHASE_OPTIMIZER,   /* optimizer step with its temporaries */
	TRAIN_N_PHASES
} train_phase;
const char *train_phase_name(train_phase ph);
typedef enum { TRAIN_SHARD_NONE, TRAIN_SHARD_ZERO1, TRAIN_SHARD_ZERO2, TRAIN_SHARD_ZERO3, TRAIN_SHARD_FSDP } train_shard;

/*
 * Fine-tuning frameworks as people run them today: each preset sets that
 * framework's defaults (attention kernel, logits upcast or chunked loss,
 * checkpointing, optimizer, LoRA targets, sharding) on o; options given
 * after --framework override them.  The default is transformers + PEFT.
 * Sources at the definitions (train.c).
 */
typedef enum {
	TRAIN_FW_NONE,          /* no framework: eager attention, fp32 logits (the textbook model) */
	TRAIN_FW_TRANSFORMERS,  /* Hugging Face Trainer + PEFT */
	TRAIN_FW_TORCHTUNE,
	TRAIN_FW_UNSLOTH,
	TRAIN_FW_AXOLOTL,
	TRAIN_FW_DEEPSPEED,     /* Trainer + DeepSpeed ZeRO-2 */
} train_framework;
typedef struct train_opts {
	train_method method;
	uint32_t seq;            /* tokens per sample */
	uint32_t micro_batch;    /* samples per GPU per step */
	uint32_t grad_accum;     /* steps accumulated (memory-neutral) */
	train_precision precision;
	train_optimizer optimizer;
	train_ckpt ckpt;
	uint32_t lora_rank;
	train_lora_targets targets;
	unsigned lora_mask;      /* TRAIN_LORA_Q ... for TRAIN_LORA_LIST */
	train_amp_layout amp;    /* mixed precision layout (framework's) */
	bool flash_attn;         /* FlashAttention / SDPA: no s^2 score storage */
	uint32_t gpus;
	train_shard shard;
	bool offload_optimizer;  /* optimizer states (and fp32 master) in host RAM */
	bool optimizer_in_bwd;   /* step fused into backward: no gradient buffer */
	bool chunked_ce;         /* chunked cross-entropy: no full fp32 logits */
	bool fused_ce;           /* compiled chunked (torchtune compile=True),
				  * Unsloth's or Liger's fused cross-entropy:
				  * only the 16-bit logits are kept */
	train_framework framework; /* whose defaults these are */
	uint8_t weights_bytes;   /* the frozen base's element (LoRA; QLoRA's
				  * 16-bit parts): 0 auto, the checkpoint's
				  * dtype as transformers >= 5 loads it
				  * (dtype="auto": 16-bit unless the checkpoint
				  * is fp32); 2 bf16/fp16; 4 fp32 (transformers
				  * 4's float32 default) */
} train_opts;

/* Defaults: Hugging Face transformers + PEFT as people run it today (the
 * transformers preset: SDPA attention, fp32 logits upcast in the loss,
 * mixed-bf16 AdamW, no checkpointing, LoRA r=8 on attention), seq 2048,
 * micro-batch 4, one GPU. */
void train_opts_init(train_opts *o);

int train_parse_framework(const char *s, train_framework *out);
const char *train_framework_name(train_framework f);
/* The framework and the version whose behaviour the numbers model, for
 * the assumptions ("transformers >= 4.46 + PEFT ..."); a static string. */
const char *train_framework_modelled(train_framework f);
void train_apply_framework(train_opts *o, train_framework f);

/* Parsers for the option words ("mixed-bf16"); 0 or GW_EINVAL. */
int train_parse_method(const char *s, train_method *out);
int train_parse_precision(const char *s, train_precision *out);
int train_parse_optimizer(const char *s, train_optimizer *out);
int train_parse_ckpt(const char *s, train_ckpt *out);
int train_parse_targets(const char *s, train_lora_targets *out);
/* --lora-targets: qv, attn, attn+mlp, all-linear or a comma list of
 * q,k,v,o,gate,up,down (with or without _proj); 0 or GW_EINVAL. */
int train_parse_lora_targets(const char *s, train_opts *o);
int train_parse_shard(const char *s, train_shard *out);
/* --weights-dtype auto|bf16|fp16|fp32 into o->weights_bytes; 0 or GW_EINVAL */
int train_parse_weights_dtype(const char *s, train_opts *o);
/* The frozen base's bytes per weight o plans for m (auto resolved). */
unsigned train_weights_bytes(const model_desc *m, const train_opts *o);
const char *train_method_name(train_method m);
const char *train_precision_name(train_precision p);
const char *train_optimizer_name(train_optimizer o);
const char *train_ckpt_name(train_ckpt c);
const char *train_targets_name(train_lora_targets t);
const char *train_shard_name(train_shard s);

/* The CUDA context and library handles, outside PyTorch's allocator (so
 * absent from torch.cuda.max_memory_allocated): Ollama reserves 457 MiB
 * per CUDA GPU for them (ollama/ollama llm/memory.go; reference/
 * vram-planner.md sec. 1.3). */
#define TRAIN_CUDA_CONTEXT_BYTES (457ULL * MiB)

/* Memory per GPU, in bytes. */
typedef struct train_breakdown {
	uint64_t weights;        /* base weights as stored on the GPU */
	uint64_t quant_consts;   /* NF4 block constants (QLoRA) */
	uint64_t gradients;      /* full fine-tune gradients */
	uint64_t optimizer;      /* optimizer states + fp32 master (full) */
	uint64_t activations;    /* saved activations + one layer's working set */
	uint64_t logits;         /* logits and their softmax/gradient */
	uint64_t adapter;        /* LoRA weights + their grads + optimizer states */
	uint64_t overhead;       /* CUDA context + allocator reserve */
	uint64_t total;          /* per GPU */
	/* The phase-aware peak: PyTorch allocator bytes at each phase, the
	 * largest, and its parts in torch's MemTracker categories. */
	uint64_t phase_bytes[TRAIN_N_PHASES];
	train_phase peak_phase;
	uint64_t allocated;      /* = phase_bytes[peak_phase] */
	uint64_t cat_params, cat_grads, cat_optimizer, cat_activations;
} train_breakdown;

typedef struct train_advice {
	char *action;            /* "use a 4-bit base (QLoRA)" */
	char *effect;            /* "total 5.31 GiB per GPU (-7.20 GiB)" */
	const char *action_fmt;  /* the catalog formats they were made from (N_()): */
	const char *effect_fmt;  /* src/cmd translates with gw_translate_fmt() */
	uint64_t total_after;    /* per GPU, after this and the earlier steps */
	bool fits_after;
} train_advice;

typedef struct train_plan {
	train_opts opts;
	train_breakdown bd;
	uint64_t host_bytes;     /* offloaded or paged optimizer states */
	double params;           /* model parameters */
	double trainable_params;
	uint64_t effective_batch; /* micro_batch x grad_accum x gpus */
	uint64_t vram_bytes;     /* budget per GPU (0: unknown) */
	bool has_budget;
	bool fits;
	train_advice *advice;
	size_t n_advice;
	const char *notes[8];    /* assumptions worth printing; static strings */
	size_t n_notes;
} train_plan;

/*
 * Plan fine-tuning m with o against vram_bytes per GPU (0: no budget, no
 * verdict, no advice).  Returns 0, or GW_EINVAL when the model lacks the
 * shape the activations need (layers, hidden, vocab).
 */
int train_plan_compute(const model_desc *m, const train_opts *o, uint64_t vram_bytes,
		       train_plan *p, gw_error *err);
/* Only the breakdown (used by advice, cards and tests). */
int train_memory(const model_desc *m, const train_opts *o, train_breakdown *bd,
		 uint64_t *host_bytes, double *trainable, gw_error *err);
void train_plan_release(train_plan *p);

/*
 * Training FLOPs per token: 6 x parameters for full fine-tuning (forward
 * 2P, backward 4P: Kaplan et al. arXiv:2001.08361), 4P when the base is
 * frozen (no weight gradients), plus 2P when full checkpointing recomputes
 * the forward pass.  0 when the model has no parameter count.
 */
double train_flops_per_token(const model_desc *m, const train_opts *o);
/* Model FLOPs utilisation assumed for speed estimates [assumption]. */
#define TRAIN_MFU 0.4

#endif

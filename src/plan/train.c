/*
 * train.c: fine-tuning memory.  Every term is a product of the model's
 * shape and the options; the comments name where each factor comes from.
 */
#include "plan/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- option words ----------------------------------------------------- */

static const char *const method_names[] = {"full", "lora", "qlora"};
static const char *const precision_names[] = {"fp32", "mixed-bf16", "mixed-fp16", "bf16"};
static const char *const optimizer_names[] = {"adamw", "adamw-8bit", "paged-adamw-8bit", "sgd", "adafactor"};
static const char *const ckpt_names[] = {"none", "selective", "full"};
static const char *const target_names[] = {"attn", "attn+mlp", "all-linear"};
static const char *const shard_names[] = {"none", "zero1", "zero2", "zero3", "fsdp"};

static int parse_word(const char *s, const char *const *names, size_t n, int *out)
{
	for (size_t i = 0; s && i < n; i++)
		if (str_ieq(s, names[i])) {
			*out = (int)i;
			return 0;
		}
	return GW_EINVAL;
}

#define NAMES(a) a, sizeof a / sizeof a[0]
#define PARSER(fn, type, table)                         \
	int fn(const char *s, type *out)                \
	{                                               \
		int v;                                  \
		if (parse_word(s, NAMES(table), &v))    \
			return GW_EINVAL;               \
		*out = (type)v;                         \
		return 0;                               \
	}
PARSER(train_parse_method, train_method, method_names)
PARSER(train_parse_precision, train_precision, precision_names)
PARSER(train_parse_optimizer, train_optimizer, optimizer_names)
PARSER(train_parse_ckpt, train_ckpt, ckpt_names)
PARSER(train_parse_targets, train_lora_targets, target_names)
PARSER(train_parse_shard, train_shard, shard_names)

const char *train_method_name(train_method m) { return method_names[m]; }
const char *train_precision_name(train_precision p) { return precision_names[p]; }
const char *train_optimizer_name(train_optimizer o) { return optimizer_names[o]; }
const char *train_ckpt_name(train_ckpt c) { return ckpt_names[c]; }
const char *train_targets_name(train_lora_targets t) { return target_names[t]; }
const char *train_shard_name(train_shard s) { return shard_names[s]; }

void train_opts_init(train_opts *o)
{
	memset(o, 0, sizeof *o);
	o->method = TRAIN_LORA;
	o->seq = 2048;
	o->micro_batch = 4;
	o->grad_accum = 1;
	o->precision = TRAIN_MIXED_BF16;
	o->optimizer = TRAIN_ADAMW;
	o->ckpt = TRAIN_CKPT_NONE;
	o->lora_rank = 16;
	o->targets = TRAIN_LORA_ALL_LINEAR;
	o->gpus = 1;
	o->shard = TRAIN_SHARD_NONE;
	/* The default is Hugging Face transformers + PEFT as people run it
	 * today (issue 9): its preset below. */
	train_apply_framework(o, TRAIN_FW_TRANSFORMERS);
}

/* ---- framework presets -------------------------------------------------- */

static const char *const fw_names[] = {"none", "transformers", "torchtune", "unsloth", "axolotl", "deepspeed"};

int train_parse_framework(const char *s, train_framework *out)
{
	for (size_t i = 0; i < sizeof fw_names / sizeof fw_names[0]; i++)
		if (str_ieq(s, fw_names[i])) {
			*out = (train_framework)i;
			return 0;
		}
	if (str_ieq(s, "hf") || str_ieq(s, "peft") || str_ieq(s, "trl")) {
		*out = TRAIN_FW_TRANSFORMERS;
		return 0;
	}
	return GW_EINVAL;
}

const char *train_framework_name(train_framework f)
{
	return fw_names[f];
}

/* What each preset models, named for the assumptions; the facts behind
 * each are cited at train_apply_framework. */
const char *train_framework_modelled(train_framework f)
{
	switch (f) {
	case TRAIN_FW_TRANSFORMERS:
		return "Hugging Face transformers >= 4.46 Trainer + PEFT: SDPA attention, logits upcast to fp32 in "
		       "the loss, LoRA r=8 on attention";
	case TRAIN_FW_TORCHTUNE:
		return "torchtune 0.3 llama3_1 single-device recipes: SDPA, chunked cross-entropy, bf16, activation "
		       "checkpointing";
	case TRAIN_FW_UNSLOTH:
		return "Unsloth notebooks: 4-bit QLoRA, chunked cross-entropy, offloaded checkpointing, 8-bit AdamW";
	case TRAIN_FW_AXOLOTL:
		return "axolotl examples/llama-3: flash attention, gradient checkpointing, 8-bit AdamW";
	case TRAIN_FW_DEEPSPEED:
		return "transformers Trainer + DeepSpeed ZeRO-2: SDPA, states and gradients sharded";
	default:
		return "no framework (--framework none): eager attention, full fp32 logits";
	}
}

/*
 * transformers + PEFT: SDPA attention by default since transformers 4.36
 * (docs "Attention interface": sdpa is the default where available); the
 * causal-LM loss upcasts the full logits to fp32 (loss_utils.py
 * ForCausalLMLoss: logits.float()); TrainingArguments defaults to
 * gradient_checkpointing=False and optim adamw_torch; people set bf16=True;
 * PEFT's LoRA default targets for Llama are q_proj and v_proj
 * (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING), r=8.
 * torchtune: SDPA, CEWithChunkedOutputLoss (8 chunks), bf16 weights, and
 * in the llama3_1 configs enable_activation_checkpointing: True, LoRA rank
 * 8 on q, v, output_proj with apply_lora_to_mlp: True, AdamW; the
 * single-device full recipe uses PagedAdamW8bit with optimizer_in_bwd
 * (pytorch/torchtune recipes/configs/llama3_1/8B_{full,lora,qlora}_single_device.yaml).
 * unsloth: 4-bit QLoRA (load_in_4bit=True), its fused chunked cross-entropy,
 * use_gradient_checkpointing="unsloth" (offloaded: counted as full),
 * optim adamw_8bit, r=16 on all seven linear maps (unsloth notebooks).
 * axolotl: flash_attention: true, gradient_checkpointing: true, optimizer
 * adamw_bnb_8bit, bf16, lora_target_linear: true (examples/llama-3 configs);
 * no chunked loss by default.
 * deepspeed: the Trainer with a ZeRO-2 config (optimizer states and
 * gradients sharded over the GPUs), SDPA, bf16, AdamW.
 */
void train_apply_framework(train_opts *o, train_framework f)
{
	o->framework = f;
	switch (f) {
	case TRAIN_FW_NONE:
		/* the textbook model without a framework's kernels: what gpuwise
		 * planned before the presets */
		o->flash_attn = false;
		o->chunked_ce = false;
		o->ckpt = TRAIN_CKPT_NONE;
		o->optimizer = TRAIN_ADAMW;
		o->optimizer_in_bwd = false;
		o->precision = TRAIN_MIXED_BF16;
		o->targets = TRAIN_LORA_ALL_LINEAR;
		o->lora_rank = 16;
		break;
	case TRAIN_FW_TRANSFORMERS:
		o->flash_attn = true;
		o->chunked_ce = false;
		o->ckpt = TRAIN_CKPT_NONE;
		o->optimizer = TRAIN_ADAMW;
		o->precision = TRAIN_MIXED_BF16;
		o->targets = TRAIN_LORA_ATTN;
		o->lora_rank = 8;
		break;
	case TRAIN_FW_TORCHTUNE:
		o->flash_attn = true;
		o->chunked_ce = true;
		o->ckpt = TRAIN_CKPT_FULL;
		o->precision = TRAIN_BF16;
		o->targets = TRAIN_LORA_ATTN_MLP;
		o->lora_rank = 8;
		o->optimizer = o->method == TRAIN_FULL ? TRAIN_PAGED_ADAMW_8BIT : TRAIN_ADAMW;
		o->optimizer_in_bwd = o->method == TRAIN_FULL;
		if (o->gpus > 1)
			o->shard = TRAIN_SHARD_FSDP;
		break;
	case TRAIN_FW_UNSLOTH:
		if (o->method == TRAIN_LORA)
			o->method = TRAIN_QLORA;
		o->flash_attn = true;
		o->chunked_ce = true;
		o->ckpt = TRAIN_CKPT_FULL;
		o->optimizer = TRAIN_ADAMW_8BIT;
		o->precision = TRAIN_MIXED_BF16;
		o->targets = TRAIN_LORA_ALL_LINEAR;
		o->lora_rank = 16;
		break;
	case TRAIN_FW_AXOLOTL:
		o->flash_attn = true;
		o->chunked_ce = false;
		o->ckpt = TRAIN_CKPT_FULL;
		o->optimizer = TRAIN_ADAMW_8BIT;
		o->precision = TRAIN_MIXED_BF16;
		o->targets = TRAIN_LORA_ALL_LINEAR;
		break;
	case TRAIN_FW_DEEPSPEED:
		o->flash_attn = true;
		o->chunked_ce = false;
		o->ckpt = TRAIN_CKPT_NONE;
		o->optimizer = TRAIN_ADAMW;
		o->precision = TRAIN_MIXED_BF16;
		o->shard = TRAIN_SHARD_ZERO2;
		break;
	default:
		break;
	}
}

/* ---- the model's shape ------------------------------------------------ */

typedef struct shape {
	double L, h, a, kv, hd, ffn, V;
	double experts;          /* 1 for dense */
	double effn;             /* FFN width of one expert (= ffn for dense) */
	double params;           /* all parameters */
	double embed, output;    /* token embedding and lm_head parameters */
	double linear;           /* parameters of the layers' linear maps */
	double norms;
	double layer_linear;     /* one layer's linear parameters */
	double max_matrix;       /* largest single weight matrix */
	double max_linear;       /* largest matrix of a layer */
} shape;

static int shape_of(const model_desc *m, shape *s, gw_error *err)
{
	memset(s, 0, sizeof *s);
	if (!m->n_layers || !m->hidden)
		return gw_fail(err, GW_EINVAL, "model '%s': layers and hidden size are needed for training memory (give --layers and --hidden)",
			       m->name ? m->name : "?");
	s->L = m->n_layers;
	s->h = m->hidden;
	s->a = m->n_heads ? m->n_heads : m->hidden / 128.0;
	s->kv = m->n_kv_heads ? m->n_kv_heads : s->a;
	s->hd = m->head_dim_k ? m->head_dim_k : s->h / s->a;
	s->ffn = m->ffn ? m->ffn : 4 * s->h;
	s->V = m->vocab ? m->vocab : 32000;
	s->experts = m->n_experts ? m->n_experts : 1;
	double effn = m->n_experts && m->expert_ffn ? m->expert_ffn : s->ffn;
	s->effn = effn;
	s->embed = s->V * s->h;
	s->output = m->tied_embeddings ? 0 : s->V * s->h;
	s->norms = s->L * 2 * s->h + s->h;
	/* attention: q and o are h x a*hd, k and v are h x kv*hd; MLP gated (3 matrices) */
	double attn = 2 * s->h * s->a * s->hd + 2 * s->h * s->kv * s->hd;
	double mlp = 3 * s->h * effn * s->experts;
	double shape_params = s->L * (attn + mlp) + s->embed + s->output + s->norms;
	s->params = m->params_total > 0 ? m->params_total : shape_params;
	/* The linear share: what is not embedding, output or norms. */
	s->linear = s->params - s->embed - s->output - s->norms;
	if (s->linear < 0)
		s->linear = 0;
	s->layer_linear = s->linear / s->L;
	s->max_matrix = fmax(s->embed, s->h * effn);
	s->max_linear = s->h * fmax(effn, s->a * s->hd);
	return 0;
}

/* LoRA trainable parameters: r*(d_in+d_out) per adapted matrix (Hu et al.). */
static double lora_params(const shape *s, const train_opts *o)
{
	double r = o->lora_rank;
	double q_o = 2 * r * (s->h + s->a * s->hd);
	double k_v = 2 * r * (s->h + s->kv * s->hd);
	double mlp = 3 * r * (s->h + s->effn) * s->experts;
	double per_layer = q_o + k_v;
	/* "attn+mlp" and "all-linear" adapt the same maps on a decoder: every
	 * linear map of each layer; PEFT's all-linear leaves out the lm_head. */
	if (o->targets != TRAIN_LORA_ATTN)
		per_layer += mlp;
	return s->L * per_layer;
}

/* ---- bytes per parameter ---------------------------------------------- */

typedef struct per_param {
	double weight, grad, master, states;
} per_param;

static per_param bytes_per_trainable(const train_opts *o, const shape *s)
{
	per_param b = {0};
	bool fp32 = o->precision == TRAIN_FP32;
	bool mixed = o->precision == TRAIN_MIXED_BF16 || o->precision == TRAIN_MIXED_FP16;
	/* ZeRO (arXiv:1910.02054 sec. 3.1): mixed precision keeps 16-bit
	 * weights and gradients plus an fp32 master copy: 2 + 2 + 4 (+ 8 Adam). */
	b.weight = fp32 ? 4 : 2;
	b.grad = fp32 ? 4 : 2;
	b.master = mixed ? 4 : 0;
	double state_elem = (fp32 || mixed) ? 4 : 2; /* states follow the parameter dtype in pure bf16 */
	switch (o->optimizer) {
	case TRAIN_ADAMW: b.states = 2 * state_elem; break;          /* m and v */
	/* bitsandbytes block-wise 8-bit Adam: 1 byte per state plus one fp32
	 * absmax per 2048-element block (Dettmers et al., arXiv:2110.02861). */
	case TRAIN_ADAMW_8BIT:
	case TRAIN_PAGED_ADAMW_8BIT: b.states = 2 * (1 + 4.0 / 2048); break;
	case TRAIN_SGD: b.states = state_elem; break;                 /* momentum */
	/* Adafactor (arXiv:1804.04235): factored second moment, one row and
	 * one column vector per matrix, no first moment by default. */
	case TRAIN_ADAFACTOR: b.states = 4 * (1 / s->h + 1 / s->ffn); break;
	}
	return b;
}

/* NF4 storage: 4 bits per weight plus block constants.  QLoRA
 * (arXiv:2305.14314): one fp32 absmax per 64 weights (0.5 bit/param);
 * double quantization stores it as 8 bits with one fp32 constant per 256
 * blocks: 8/64 + 32/(64*256) = 0.127 bit/param. */
#define NF4_BYTES_PER_PARAM 0.5
#define NF4_DQ_CONST_BYTES_PER_PARAM (1.0 / 64 + 4.0 / (64 * 256))

/* Framework overhead: TRAIN_CUDA_CONTEXT_BYTES (train.h) plus the caching
 * allocator's slack, taken as 5% of the dynamic tensors (activations,
 * logits) [assumption]. */
#define TRAIN_ALLOCATOR_SLACK 0.05

static uint64_t u64(double x)
{
	return x <= 0 ? 0 : x >= 1.8e19 ? UINT64_MAX / 4 : (uint64_t)llround(x);
}

int train_memory(const model_desc *m, const train_opts *o, train_breakdown *bd,
		 uint64_t *host_bytes, double *trainable, gw_error *err)
{
	shape s;
	int rc = shape_of(m, &s, err);
	memset(bd, 0, sizeof *bd);
	*host_bytes = 0;
	if (rc)
		return rc;
	if (!o->seq || !o->micro_batch || !o->gpus)
		return gw_fail(err, GW_EINVAL, "sequence length, micro-batch and GPU count must be at least 1");

	per_param b = bytes_per_trainable(o, &s);
	double n = o->gpus;
	bool shard_states = o->gpus > 1 && o->shard != TRAIN_SHARD_NONE;
	bool shard_grads = o->gpus > 1 && o->shard >= TRAIN_SHARD_ZERO2;
	bool shard_weights = o->gpus > 1 && o->shard >= TRAIN_SHARD_ZERO3;
	double base_weight_b = o->precision == TRAIN_FP32 ? 4 : 2;

	/* Weights of the base model. */
	double weights, consts = 0;
	if (o->method == TRAIN_QLORA) {
		/* Linear maps in NF4; embeddings, lm_head and norms stay 16-bit. */
		weights = s.linear * NF4_BYTES_PER_PARAM + (s.embed + s.output + s.norms) * 2;
		consts = s.linear * NF4_DQ_CONST_BYTES_PER_PARAM;
	} else {
		weights = s.params * base_weight_b;
	}
	if (shard_weights) {
		/* ZeRO-3 / FSDP: each GPU keeps 1/N and gathers one layer at a time. */
		double layer = (weights + consts) / s.L;
		weights = weights / n + layer;
		consts /= n;
	}

	/* Trainable parameters and their gradient/optimizer memory. */
	double T = o->method == TRAIN_FULL ? s.params : lora_params(&s, o);
	*trainable = T;
	double grads = T * b.grad;
	if (o->optimizer_in_bwd)
		/* The step runs inside backward; one tensor's gradient at a time. */
		grads = fmin(T, s.max_matrix) * b.grad;
	double states = T * b.states, master = T * b.master;
	double host = 0;
	if (o->optimizer == TRAIN_PAGED_ADAMW_8BIT) {
		/* Paged states live in CUDA unified memory and are evicted to host
		 * RAM under pressure (bitsandbytes paged optimizers); the GPU does
		 * not have to hold them. */
		host += states;
		states = 0;
	}
	if (o->offload_optimizer) {
		host += states + master;
		states = master = 0;
	}
	if (shard_states) {
		states /= n;
		master /= n;
	}
	if (shard_grads)
		grads /= n;

	double adapter = 0, gradients = 0, optimizer = 0;
	if (o->method == TRAIN_FULL) {
		gradients = grads;
		optimizer = states + master;
	} else {
		adapter = T * b.weight + grads + states + master;
		if (shard_weights)
			adapter = adapter / n;
	}

	/* Activations, Korthikanti et al. (arXiv:2205.05198) eqs. for 16-bit
	 * activations: s*b*h*(34 + 5*a*s/h) bytes per layer without recompute;
	 * FlashAttention never stores the a*s*s scores, dropping 5as/h;
	 * selective recompute keeps 34*s*b*h; full recompute keeps the layer
	 * input 2*s*b*h per layer plus one layer's working set. */
	double sq = o->seq, mb = o->micro_batch;
	double sbh = sq * mb * s.h;
	double score = o->flash_attn ? 0 : 5 * s.a * sq / s.h;
	double layer_full = sbh * (34 + score);
	double act;
	switch (o->ckpt) {
	case TRAIN_CKPT_NONE: act = s.L * layer_full; break;
	case TRAIN_CKPT_SELECTIVE: act = s.L * 34 * sbh + (layer_full - 34 * sbh); break;
	default: act = s.L * 2 * sbh + layer_full; break;
	}
	if (o->precision == TRAIN_FP32)
		act *= 2;
	if (o->method == TRAIN_QLORA)
		act += s.max_linear * 2; /* one weight dequantized to 16-bit at a time */

	/* Logits: b*s*V fp32 (4 bytes), doubled for the softmax and its
	 * gradient; chunked cross-entropy keeps 16-bit logits plus one fp32
	 * chunk of eight (torchtune CEWithChunkedOutputLoss, 8 chunks). */
	double bsv = mb * sq * s.V;
	double logits = o->chunked_ce ? bsv * 2 + bsv * 8 / 8 : bsv * 4 * 2;

	bd->weights = u64(weights);
	bd->quant_consts = u64(consts);
	bd->gradients = u64(gradients);
	bd->optimizer = u64(optimizer);
	bd->activations = u64(act);
	bd->logits = u64(logits);
	bd->adapter = u64(adapter);
	bd->overhead = TRAIN_CUDA_CONTEXT_BYTES + u64((act + logits) * TRAIN_ALLOCATOR_SLACK);
	bd->total = bd->weights + bd->quant_consts + bd->gradients + bd->optimizer + bd->activations +
		    bd->logits + bd->adapter + bd->overhead;
	*host_bytes = u64(host);
	return 0;
}

/* ---- verdict and advice ----------------------------------------------- */

static void add_advice(train_plan *p, size_t *cap, uint64_t before, uint64_t after, bool fits,
		       char *action)
{
	char a[32], d[32];
	p->advice = xgrow(p->advice, cap, p->n_advice + 1, sizeof *p->advice);
	train_advice *ad = &p->advice[p->n_advice++];
	ad->action = action;
	fmt_bytes(a, sizeof a, after);
	if (after <= before)
		fmt_bytes(d, sizeof d, before - after);
	else
		fmt_bytes(d, sizeof d, after - before);
	ad->effect = xasprintf("%s per GPU (%s%s)%s", a, after <= before ? "-" : "+", d,
			       fits ? ", fits" : ", still too large");
	ad->total_after = after;
	ad->fits_after = fits;
}

/*
 * The ranked changes, applied one after the other in the order users learn
 * them: mixed precision; micro-batch 1 with gradient accumulation plus
 * checkpointing; a 4-bit base (QLoRA); an 8-bit paged optimizer or
 * offload; more GPUs with FSDP.  Stops at the first step that fits.
 */
static int advise(const model_desc *m, train_plan *p, gw_error *err)
{
	train_opts o = p->opts;
	uint64_t cur = p->bd.total, host;
	size_t cap = 0;
	train_breakdown bd;
	double t;
	int rc;

#define TRY(cond, mutate, text)                                                         \
	if (!p->fits && (cond)) {                                                       \
		mutate;                                                                 \
		if ((rc = train_memory(m, &o, &bd, &host, &t, err)))                    \
			return rc;                                                      \
		if (bd.total < cur) {                                                   \
			add_advice(p, &cap, cur, bd.total, bd.total <= p->vram_bytes, text); \
			cur = bd.total;                                                 \
			if (bd.total <= p->vram_bytes)                                  \
				return 0;                                               \
		}                                                                       \
	}

	TRY(o.precision == TRAIN_FP32, o.precision = TRAIN_MIXED_BF16,
	    xstrdup("train in mixed precision (--precision mixed-bf16; mixed-fp16 on GPUs without bf16)"));
	uint32_t old_mb = o.micro_batch;
	TRY(o.micro_batch > 1 || o.ckpt != TRAIN_CKPT_FULL,
	    (o.grad_accum *= o.micro_batch, o.micro_batch = 1, o.ckpt = TRAIN_CKPT_FULL),
	    old_mb > 1 ? xasprintf("micro-batch 1 with --grad-accum %u (same effective batch) and gradient "
				   "checkpointing (--micro-batch 1 --checkpointing full)",
				   o.grad_accum)
		       : xstrdup("gradient checkpointing (--checkpointing full)"));
	TRY(o.method != TRAIN_QLORA, o.method = TRAIN_QLORA,
	    xstrdup("load the base in 4-bit NF4 and train LoRA adapters (QLoRA: --train qlora)"));
	TRY(o.optimizer != TRAIN_PAGED_ADAMW_8BIT && o.optimizer != TRAIN_ADAFACTOR && !o.offload_optimizer,
	    o.optimizer = TRAIN_PAGED_ADAMW_8BIT,
	    xstrdup("8-bit paged AdamW (--optimizer paged-adamw-8bit), or --offload-optimizer"));
	if (!p->fits) {
		/* The smallest number of GPUs with FSDP that fits, up to 64. */
		for (uint32_t n = o.gpus < 2 ? 2 : o.gpus * 2; n <= 64; n *= 2) {
			train_opts q = o;
			q.gpus = n;
			q.shard = TRAIN_SHARD_FSDP;
			if ((rc = train_memory(m, &q, &bd, &host, &t, err)))
				return rc;
			if (bd.total <= p->vram_bytes) {
				add_advice(p, &cap, cur, bd.total, true,
					   xasprintf("shard across %u GPUs with FSDP / ZeRO-3 (--gpus %u --shard fsdp)", n, n));
				return 0;
			}
		}
	}
#undef TRY
	return 0;
}

int train_plan_compute(const model_desc *m, const train_opts *o, uint64_t vram_bytes,
		       train_plan *p, gw_error *err)
{
	memset(p, 0, sizeof *p);
	p->opts = *o;
	int rc = train_memory(m, o, &p->bd, &p->host_bytes, &p->trainable_params, err);
	if (rc)
		return rc;
	shape s;
	shape_of(m, &s, NULL);
	p->params = s.params;
	p->effective_batch = (uint64_t)o->micro_batch * (o->grad_accum ? o->grad_accum : 1) * o->gpus;
	p->vram_bytes = vram_bytes;
	p->has_budget = vram_bytes > 0;
	p->fits = p->has_budget && p->bd.total <= vram_bytes;
	p->notes[p->n_notes++] = train_framework_modelled(o->framework);
	p->notes[p->n_notes++] = "activations: Korthikanti et al. 2022, 16-bit, no tensor parallelism";
	if (!o->flash_attn)
		p->notes[p->n_notes++] = "eager attention stores the s x s scores; --flash-attn drops them";
	if (o->optimizer == TRAIN_PAGED_ADAMW_8BIT)
		p->notes[p->n_notes++] = "paged optimizer states are counted in host RAM; they use spare GPU memory when there is some";
	if (o->method != TRAIN_FULL && o->targets != TRAIN_LORA_ATTN)
		p->notes[p->n_notes++] = "LoRA on every linear map of each layer (the lm_head excluded)";
	if (p->has_budget && !p->fits)
		rc = advise(m, p, err);
	return rc;
}

void train_plan_release(train_plan *p)
{
	for (size_t i = 0; i < p->n_advice; i++) {
		free(p->advice[i].action);
		free(p->advice[i].effect);
	}
	free(p->advice);
	memset(p, 0, sizeof *p);
}

double train_flops_per_token(const model_desc *m, const train_opts *o)
{
	shape s;
	if (shape_of(m, &s, NULL))
		return 0;
	/* MoE: only the active parameters compute per token */
	double p = m->params_active > 0 && m->params_active < s.params ? m->params_active : s.params;
	double f = (o->method == TRAIN_FULL ? 6 : 4) * p;
	if (o->ckpt == TRAIN_CKPT_FULL)
		f += 2 * p;
	return f;
}

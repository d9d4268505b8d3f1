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
static const char *const optimizer_names[] = {"adamw", "adamw-8bit", "paged-adamw-8bit", "sgd", "adafactor", "adamw-fused"};
static const char *const ckpt_names[] = {"none", "selective", "full"};
static const char *const target_names[] = {"qv", "attn", "attn+mlp", "all-linear", "list"};
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

/* "q_proj,v_proj" or "q,v": the maps of a decoder layer */
int train_parse_lora_targets(const char *s, train_opts *o)
{
	train_lora_targets t;
	if (!train_parse_targets(s, &t) && t != TRAIN_LORA_LIST) {
		o->targets = t;
		o->lora_mask = 0;
		return 0;
	}
	static const char *const maps[] = {"q", "k", "v", "o", "gate", "up", "down"};
	unsigned mask = 0;
	const char *p = s;
	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (len > 5 && !strncmp(p + len - 5, "_proj", 5))
			len -= 5;
		size_t i = 0;
		while (i < 7 && !(strlen(maps[i]) == len && !strncmp(p, maps[i], len)))
			i++;
		if (i == 7)
			return GW_EINVAL;
		mask |= 1u << i;
		p = c ? c + 1 : NULL;
	}
	if (!mask)
		return GW_EINVAL;
	o->targets = TRAIN_LORA_LIST;
	o->lora_mask = mask;
	return 0;
}

/* The adapted maps as a mask. */
static unsigned lora_mask_of(const train_opts *o)
{
	switch (o->targets) {
	case TRAIN_LORA_QV: return TRAIN_LORA_Q | TRAIN_LORA_V;
	case TRAIN_LORA_ATTN: return TRAIN_LORA_Q | TRAIN_LORA_K | TRAIN_LORA_V | TRAIN_LORA_O;
	case TRAIN_LORA_LIST: return o->lora_mask;
	default: return 0x7f;
	}
}
const char *train_shard_name(train_shard s) { return shard_names[s]; }

int train_parse_weights_dtype(const char *s, train_opts *o)
{
	if (str_ieq(s, "auto"))
		o->weights_bytes = 0;
	else if (str_ieq(s, "bf16") || str_ieq(s, "fp16") || str_ieq(s, "bfloat16") || str_ieq(s, "float16"))
		o->weights_bytes = 2;
	else if (str_ieq(s, "fp32") || str_ieq(s, "float32"))
		o->weights_bytes = 4;
	else
		return GW_EINVAL;
	return 0;
}

/* transformers >= 5 loads a checkpoint in its own dtype (from_pretrained
 * dtype="auto" by default; transformers 4 loaded float32 unless told):
 * the safetensors header's dtypes when read (fp32 when most bytes are
 * F32), else 16-bit, what the catalog's checkpoints ship. */
unsigned train_weights_bytes(const model_desc *m, const train_opts *o)
{
	if (o->weights_bytes)
		return o->weights_bytes;
	if (o->precision == TRAIN_FP32)
		return 4;
	uint64_t f32 = 0, all = 0;
	for (size_t i = 0; i < m->n_dtypes; i++) {
		all += m->dtype_bytes[i];
		if (m->dtype_names[i] && !strcmp(m->dtype_names[i], "F32"))
			f32 += m->dtype_bytes[i];
	}
	return all && f32 * 2 > all ? 4 : 2;
}

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
		return N_("Hugging Face transformers >= 5 Trainer + PEFT 0.21: SDPA attention, fp32 log-softmax in the "
		       "loss, bf16=True as autocast over fp32 weights, fused AdamW, LoRA r=8 on q,v");
	case TRAIN_FW_TORCHTUNE:
		return N_("torchtune 0.3 llama3_1 single-device recipes: SDPA, chunked cross-entropy compiled (compile: True, "
		       "as torchtune's published memory table; --compile off for the configs' eager default), bf16, "
		       "activation checkpointing");
	case TRAIN_FW_UNSLOTH:
		return N_("Unsloth notebooks: 4-bit QLoRA, Unsloth's fused cross-entropy kernel, offloaded checkpointing, 8-bit AdamW");
	case TRAIN_FW_AXOLOTL:
		return N_("axolotl examples/llama-3: flash attention, gradient checkpointing, 8-bit AdamW");
	case TRAIN_FW_DEEPSPEED:
		return N_("transformers Trainer + DeepSpeed ZeRO-2: SDPA, states and gradients sharded");
	default:
		return N_("no framework (--framework none): eager attention, full fp32 logits");
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
		o->fused_ce = false;
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
		o->fused_ce = false;
		o->ckpt = TRAIN_CKPT_NONE;
		o->optimizer = TRAIN_ADAMW_FUSED;
		o->precision = TRAIN_MIXED_BF16;
		o->amp = TRAIN_AMP_AUTOCAST;
		o->targets = TRAIN_LORA_QV;
		o->lora_rank = 8;
		break;
	case TRAIN_FW_TORCHTUNE:
		o->flash_attn = true;
		o->chunked_ce = true;
		/* compile: True, as torchtune's published memory table was
		 * measured (README "Memory and training speed": batch 2,
		 * packed 2048, torch compile enabled); the configs' own
		 * default is compile: False (--compile off) */
		o->fused_ce = true;
		o->ckpt = TRAIN_CKPT_FULL;
		o->precision = TRAIN_BF16;
		o->targets = TRAIN_LORA_ATTN_MLP;
		o->lora_rank = 8;
		o->optimizer = o->method == TRAIN_FULL ? TRAIN_PAGED_ADAMW_8BIT : TRAIN_ADAMW_FUSED;
		o->optimizer_in_bwd = o->method == TRAIN_FULL;
		o->amp = TRAIN_AMP_MASTER;
		if (o->gpus > 1)
			o->shard = TRAIN_SHARD_FSDP;
		break;
	case TRAIN_FW_UNSLOTH:
		if (o->method == TRAIN_LORA)
			o->method = TRAIN_QLORA;
		o->flash_attn = true;
		o->chunked_ce = true;
		/* its own cross-entropy kernel (unsloth/kernels/cross_entropy_loss.py):
		 * no fp32 logits, the gradient written in place */
		o->fused_ce = true;
		o->ckpt = TRAIN_CKPT_FULL;
		o->optimizer = TRAIN_ADAMW_8BIT;
		o->precision = TRAIN_MIXED_BF16;
		o->targets = TRAIN_LORA_ALL_LINEAR;
		o->lora_rank = 16;
		break;
	case TRAIN_FW_AXOLOTL:
		o->flash_attn = true;
		o->chunked_ce = false;
		o->fused_ce = false;
		o->ckpt = TRAIN_CKPT_FULL;
		o->optimizer = TRAIN_ADAMW_8BIT;
		o->precision = TRAIN_MIXED_BF16;
		o->targets = TRAIN_LORA_ALL_LINEAR;
		break;
	case TRAIN_FW_DEEPSPEED:
		o->flash_attn = true;
		o->chunked_ce = false;
		o->fused_ce = false;
		o->ckpt = TRAIN_CKPT_NONE;
		o->optimizer = TRAIN_ADAMW;
		o->precision = TRAIN_MIXED_BF16;
		o->shard = TRAIN_SHARD_ZERO2;
		o->amp = TRAIN_AMP_MASTER;
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

/* LoRA trainable parameters: r*(d_in+d_out) per adapted matrix (Hu et
 * al.).  A MoE's routed experts are 3-D parameters in transformers >= 5
 * (MixtralExperts.gate_up_proj ...), not nn.Linear, so PEFT's target
 * names and all-linear reach only attention and a shared expert's MLP. */
static double lora_params(const shape *s, const train_opts *o, const model_desc *m)
{
	double r = o->lora_rank;
	unsigned mk = lora_mask_of(o);
	double q = s->a * s->hd, kvd = s->kv * s->hd;
	double mlp_f = s->experts > 1 ? (double)m->shared_expert_ffn : s->ffn;
	double per_layer = 0;
	if (mk & TRAIN_LORA_Q)
		per_layer += r * (s->h + q);
	if (mk & TRAIN_LORA_K)
		per_layer += r * (s->h + kvd);
	if (mk & TRAIN_LORA_V)
		per_layer += r * (s->h + kvd);
	if (mk & TRAIN_LORA_O)
		per_layer += r * (q + s->h);
	if (mlp_f > 0) {
		if (mk & TRAIN_LORA_GATE)
			per_layer += r * (s->h + mlp_f);
		if (mk & TRAIN_LORA_UP)
			per_layer += r * (s->h + mlp_f);
		if (mk & TRAIN_LORA_DOWN)
			per_layer += r * (mlp_f + s->h);
	}
	if (s->experts > 1 && (o->targets == TRAIN_LORA_ALL_LINEAR || o->targets == TRAIN_LORA_ATTN_MLP)) {
		/* PEFT 0.21 all-linear on a fused-expert MoE (counted from its
		 * Mixtral model): the router (h -> E) as a linear, and the 3-D
		 * expert weights through target_parameters, rank r per expert:
		 * gate_up_proj as 2rE x (h + 2f), down_proj rE x (f + h) */
		double E = s->experts;
		per_layer += r * (s->h + E) + 2 * r * E * (s->h + 2 * s->effn) + r * E * (s->effn + s->h);
	}
	return s->L * per_layer;
}

/* ---- bytes per parameter ---------------------------------------------- */

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

static const char *const phase_names[] = {N_("forward"), N_("loss-backward"), N_("layer-backward"), N_("optimizer-step")};

const char *train_phase_name(train_phase ph)
{
	return ph < TRAIN_N_PHASES ? phase_names[ph] : "?";
}

/*
 * Saved activations of one decoder layer, bytes per token, as PyTorch's
 * MemTracker counts them for the Hugging Face Llama-family layer (RMSNorm
 * in fp32, q/k/v/o, RoPE, SDPA, SwiGLU MLP): measured layer by layer with
 * tests/oracle/train_oracle.py's shapes varied one at a time (h, ffn,
 * kv_heads*head_dim); coefficients of h, ffn, kv*hd and a constant.  The
 * frozen base of LoRA saves less (a frozen linear keeps no input), mixed
 * precision keeps the fp32 residual stream and bf16 matmul outputs.
 */
typedef struct act_coef {
	double h, f, kv, c;
} act_coef;

static act_coef layer_coef(bool full, int mode)
{
	/* mode 0: fp32, 1: autocast over fp32 (or bf16-base LoRA), 2: 16-bit */
	static const act_coef fullc[3] = {{32, 16, 8, 8}, {30, 8, 8, 8}, {20, 8, 4, 8}};
	static const act_coef lorac[3] = {{20, 12, 8, 72}, {16, 6, 4, 40}, {20, 6, 4, 72}};
	return full ? fullc[mode] : lorac[mode];
}

static bool mlp_gated(const model_desc *m)
{
	static const char *const plain[] = {"bloom", "gpt2", "gptneox", "gpt_neox", "falcon", "phi2", "starcoder",
					    "gptj", "opt", "mpt"};
	for (size_t i = 0; m->arch && i < sizeof plain / sizeof plain[0]; i++)
		if (!strcmp(m->arch, plain[i]))
			return false;
	return true;
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

	bool full = o->method == TRAIN_FULL, qlora = o->method == TRAIN_QLORA;
	bool fp32 = o->precision == TRAIN_FP32;
	bool amp = o->precision == TRAIN_MIXED_BF16 || o->precision == TRAIN_MIXED_FP16;
	bool master = amp && o->amp == TRAIN_AMP_MASTER;
	/* activation mode: autocast over fp32 weights (full) or a 16-bit base
	 * (LoRA); DeepSpeed's master layout runs 16-bit weights like bf16 */
	int mode = fp32 ? 0 : (amp && !master) ? 1 : 2;
	if (!full && mode == 1 && master)
		mode = 2;
	double n = o->gpus;
	bool shard_states = o->gpus > 1 && o->shard != TRAIN_SHARD_NONE;
	bool shard_grads = o->gpus > 1 && o->shard >= TRAIN_SHARD_ZERO2;
	bool shard_weights = o->gpus > 1 && o->shard >= TRAIN_SHARD_ZERO3;

	/* Bytes per trainable parameter: its own dtype (fp32 under the
	 * Trainer's autocast; PEFT keeps adapters in fp32 over a 16-bit base,
	 * autocast_adapter_dtype=True; torchtune keeps them bf16), gradients in
	 * the same dtype, and the optimizer's states. */
	double tb = fp32 ? 4 : full ? (amp && !master ? 4 : 2) : (o->framework == TRAIN_FW_TORCHTUNE && !amp ? 2 : 4);
	double base_b = train_weights_bytes(m, o);
	double sb = master ? 4 : tb; /* state element */
	double states_b = 0, tmp_b = 0;
	switch (o->optimizer) {
	case TRAIN_ADAMW:
		/* torch.optim.AdamW foreach (_multi_tensor_adamw): m and v, and
		 * the step's sqrt(v) list, one state-sized temporary */
		states_b = 2 * sb;
		tmp_b = sb;
		break;
	case TRAIN_ADAMW_FUSED: states_b = 2 * sb; break;
	/* bitsandbytes block-wise 8-bit Adam (Dettmers et al.,
	 * arXiv:2110.02861): uint8 state1 and state2 plus one fp32 absmax per
	 * 256-element block each (AdamW8bit's state as bitsandbytes
	 * builds it: tests/validation/train-oracle.tsv llama-25); its kernels
	 * update in place; tensors under 4096 elements (min_8bit_size: the
	 * norms) keep 32-bit states */
	case TRAIN_ADAMW_8BIT:
	case TRAIN_PAGED_ADAMW_8BIT: states_b = 2 * (1 + 4.0 / 256); break;
	/* SGD with momentum (foreach): the buffer, and one gradient-sized
	 * temporary for the momentum update */
	case TRAIN_SGD: states_b = sb; tmp_b = sb; break;
	/* Adafactor (arXiv:1804.04235; transformers.optimization.Adafactor):
	 * factored second moment, no first moment; the step makes fp32 copies
	 * of the gradient and the update */
	case TRAIN_ADAFACTOR:
		states_b = sb * (1 / s.h + 1 / s.ffn);
		tmp_b = 3 * 4;
		break;
	}
	double master_b = master ? 4 : 0;

	/* Weights of the base model. */
	double weights, consts = 0;
	if (qlora) {
		/* Linear maps in NF4; embeddings, lm_head and norms stay 16-bit
		 * (transformers 4 too forces float16 for bitsandbytes when no
		 * dtype is given), unless --weights-dtype says otherwise. */
		weights = s.linear * NF4_BYTES_PER_PARAM + (s.embed + s.output + s.norms) * (o->weights_bytes ? o->weights_bytes : 2);
		consts = s.linear * NF4_DQ_CONST_BYTES_PER_PARAM;
	} else {
		weights = s.params * (full ? tb : base_b);
	}
	if (shard_weights) {
		/* ZeRO-3 / FSDP: each GPU keeps 1/N and gathers one layer at a time. */
		double layer = (weights + consts) / s.L;
		weights = weights / n + layer;
		consts /= n;
	}

	double T = full ? s.params : lora_params(&s, o, m);
	*trainable = T;
	double grads = T * tb, states = T * states_b, mstr = T * master_b, tmp = T * tmp_b;
	if ((o->optimizer == TRAIN_ADAMW_8BIT || o->optimizer == TRAIN_PAGED_ADAMW_8BIT) && full)
		states += s.norms * (2 * sb - states_b);
	if (o->optimizer == TRAIN_ADAFACTOR)
		tmp = fmin(T, s.max_matrix) * tmp_b + T * 0; /* per tensor */
	double host = 0;
	if (o->optimizer == TRAIN_PAGED_ADAMW_8BIT) {
		/* Paged states live in CUDA unified memory and are evicted to host
		 * RAM under pressure (bitsandbytes paged optimizers). */
		host += states;
		states = 0;
	}
	if (o->offload_optimizer) {
		/* ZeRO-Offload: states and master in host RAM, the step on the CPU */
		host += states + mstr;
		states = mstr = tmp = 0;
	}
	if (shard_states) {
		states /= n;
		mstr /= n;
		tmp /= n;
	}
	if (shard_grads)
		grads /= n;
	double adapter_w = full ? 0 : T * tb;
	if (shard_weights && !full)
		adapter_w /= n;

	/* ---- activations of one micro-batch ---- */
	double N = (double)o->seq * o->micro_batch, sq = o->seq;
	act_coef c = layer_coef(full, mode);
	double e = mode == 0 ? 4 : 2;          /* matmul output element */
	double ex = (mode == 0 || (full && mode == 1)) ? 4 : 2; /* residual stream */
	double kvd = s.kv * s.hd;
	double moe = s.experts > 1;
	double k_used = moe ? (m->n_experts_used ? m->n_experts_used : 2) : 1;
	double f_tok = moe ? k_used * s.effn + (m->shared_expert_ffn ? m->shared_expert_ffn : 0) : s.ffn;
	/* a gated MLP (SwiGLU: gate, up, act(gate), product) saves twice the
	 * ffn-wide tensors of a plain one (fc1 output, act output: BLOOM,
	 * GPT-2, GPT-NeoX, Falcon, Phi, StarCoder) */
	double fc = c.f * (mlp_gated(m) ? 1 : 0.5);
	double per_tok = c.h * s.h + fc * f_tok + c.kv * kvd + c.c;
	if (moe)
		per_tok += 2 * k_used * s.h * e; /* tokens gathered per expert and scattered back */
	if (!full) {
		unsigned mk = lora_mask_of(o);
		/* an adapted map saves its input for lora_A's gradient when no
		 * frozen neighbour keeps it: k and o beside q,v; the MLP's input
		 * (gate, up) and down's input */
		if (mk & (TRAIN_LORA_K | TRAIN_LORA_O))
			per_tok += 2 * s.h * ((mk & TRAIN_LORA_K ? 1 : 0) + (mk & TRAIN_LORA_O ? 1 : 0));
		if (!moe && (mk & (TRAIN_LORA_GATE | TRAIN_LORA_UP)))
			per_tok += 4 * s.h;
		if (!moe && (mk & TRAIN_LORA_DOWN))
			per_tok += 2 * s.ffn;
		/* PEFT's expert adapters (all-linear on a MoE): each routed
		 * token's fp32 adapter inputs, h and f wide */
		if (moe && (o->targets == TRAIN_LORA_ALL_LINEAR || o->targets == TRAIN_LORA_ATTN_MLP))
			per_tok += k_used * 4 * (s.h + s.effn);
	}
	double eager_tok = o->flash_attn ? 0 : s.a * sq * (mode == 0 ? 4 : 6) + e * s.h;
	per_tok += eager_tok;
	double layer_act = per_tok * N;
	/* the Trainer's autocast keeps bf16 copies of every trained weight it
	 * cast (torch autocast weight cache, saved for backward) */
	double copies = full && mode == 1 ? 2 * s.layer_linear : 0;
	/* embedding output and the final norm's saved tensors */
	double extra = N * s.h * (ex + (full ? 2 * ex : ex));
	double act_all, ws;
	/* one layer's backward working set: gradients of its activations */
	double bwd_ws = N * e * (2 * f_tok + 4 * s.h);
	switch (o->ckpt) {
	case TRAIN_CKPT_NONE:
		act_all = s.L * (layer_act + copies);
		ws = bwd_ws;
		break;
	case TRAIN_CKPT_SELECTIVE:
		/* the attention core (the s x s scores) recomputed */
		act_all = s.L * (layer_act - eager_tok * N + copies) + eager_tok * N;
		ws = bwd_ws;
		break;
	default:
		/* non-reentrant torch.utils.checkpoint per layer: the layer
		 * input kept, one layer recomputed in backward */
		act_all = s.L * N * s.h * ex;
		ws = layer_act + copies + bwd_ws;
		break;
	}
	act_all += extra;
	if (qlora)
		ws += s.max_linear * 2; /* one weight dequantized to 16-bit at a time */

	/* ---- the loss: bytes per logit ---- */
	double bsv = N * s.V;
	double lg_fwd, lg_saved, lg_bwd;
	if (o->fused_ce) {
		/* the loss kernel reads the 16-bit logits and keeps a per-row
		 * logsumexp; the fp32 upcast never leaves it.  torchtune's
		 * compile_loss compiles each chunk's cross-entropy
		 * (training/_compile.py: compute_cross_entropy), so backward
		 * makes one chunk's gradient at a time (fp32 inside, e out);
		 * Unsloth's kernel writes it in place (no more than this) */
		lg_fwd = e;
		lg_saved = e;
		lg_bwd = e + (4 + e) / 8;
	} else if (o->chunked_ce) {
		/* torchtune CEWithChunkedOutputLoss (8 chunks): the output chunks
		 * in the model dtype and each chunk's fp32 log-softmax kept for
		 * backward; one chunk upcast at a time */
		lg_fwd = e + 4 + (e < 4 ? 4.0 / 8 : 0);
		lg_saved = 4;
		lg_bwd = 4 + (e + 8) / 8; /* a chunk's grads; the chunks are not saved */
	} else {
		/* transformers ForCausalLMLoss: logits.float() then cross_entropy
		 * (log_softmax keeps its fp32 output); in backward the fp32
		 * gradients of the log-softmax and of the logits beside it:
		 * 12 bytes per logit, in every precision */
		lg_fwd = e + (e < 4 ? 4 : 0) + 4;
		lg_saved = 4;
		lg_bwd = 4 + 4 + 4;
	}

	/* ---- phases ---- */
	double accum = o->grad_accum > 1;
	double W = weights + consts + adapter_w;
	double Sp = states + mstr;            /* from the previous step on */
	double G = grads;                     /* all gradients */
	double Gp = accum ? G : 0;            /* kept between micro-batches */
	double head_g = full ? (s.output + s.h) * tb : 0;
	if (shard_grads)
		head_g /= n;
	double ph[TRAIN_N_PHASES];
	ph[TRAIN_PHASE_FORWARD] = W + Sp + Gp + act_all + lg_fwd * bsv;
	ph[TRAIN_PHASE_LOSS_BWD] = W + Sp + Gp + act_all + lg_bwd * bsv;
	/* backward runs from the last layer (activations all kept, the
	 * lm_head's gradient made) to the first (every gradient but the first
	 * layer's and the embedding's, that layer's working set) */
	double first = full ? (s.embed + s.layer_linear) * tb / (shard_grads ? n : 1) : 0;
	double start = fmax(Gp, head_g) + act_all + ws,
	       end = fmax(Gp, G - first) + (o->ckpt == TRAIN_CKPT_FULL ? ws : bwd_ws);
	if (o->optimizer_in_bwd) {
		/* torchtune: each parameter stepped as its gradient lands */
		double one = fmin(T, s.max_matrix);
		start = one * (tb + tmp_b) + act_all + ws;
		end = one * (tb + tmp_b) + ws;
		G = Gp = 0;
	}
	ph[TRAIN_PHASE_LAYER_BWD] = W + Sp + fmax(start, end);
	ph[TRAIN_PHASE_OPTIMIZER] = o->optimizer_in_bwd ? W + Sp : W + G + Sp + tmp;

	train_phase pk = TRAIN_PHASE_FORWARD;
	for (int i = 1; i < TRAIN_N_PHASES; i++)
		if (ph[i] > ph[pk])
			pk = (train_phase)i;
	for (int i = 0; i < TRAIN_N_PHASES; i++)
		bd->phase_bytes[i] = u64(ph[i]);
	bd->peak_phase = pk;
	bd->allocated = bd->phase_bytes[pk];

	/* the parts at the peak */
	double g_at = 0, opt_at = Sp, lg_at = 0;
	switch (pk) {
	case TRAIN_PHASE_FORWARD: g_at = Gp; lg_at = lg_fwd * bsv; break;
	case TRAIN_PHASE_LOSS_BWD: g_at = Gp; lg_at = lg_bwd * bsv; break;
	case TRAIN_PHASE_LAYER_BWD:
		if (start >= end) {
			g_at = o->optimizer_in_bwd ? fmin(T, s.max_matrix) * tb : fmax(Gp, head_g);
			if (o->optimizer_in_bwd)
				opt_at += fmin(T, s.max_matrix) * tmp_b;
		} else {
			g_at = o->optimizer_in_bwd ? fmin(T, s.max_matrix) * tb : fmax(Gp, G - first);
		}
		break;
	default: g_at = G; opt_at = Sp + (o->optimizer_in_bwd ? 0 : tmp); break;
	}
	bd->cat_params = u64(W);
	bd->cat_grads = u64(g_at);
	bd->cat_optimizer = u64(opt_at);
	bd->cat_activations = bd->allocated > bd->cat_params + bd->cat_grads + bd->cat_optimizer
				      ? bd->allocated - bd->cat_params - bd->cat_grads - bd->cat_optimizer
				      : 0;

	bd->weights = u64(weights);
	bd->quant_consts = u64(consts);
	if (full) {
		bd->gradients = u64(g_at);
		bd->optimizer = u64(opt_at);
	} else {
		bd->adapter = u64(adapter_w + g_at + opt_at);
	}
	bd->logits = u64(lg_at);
	bd->activations = bd->cat_activations > bd->logits ? bd->cat_activations - bd->logits : 0;
	(void)lg_saved;
	bd->overhead = TRAIN_CUDA_CONTEXT_BYTES + u64((act_all + lg_fwd * bsv) * TRAIN_ALLOCATOR_SLACK);
	bd->total = bd->allocated + bd->overhead;
	*host_bytes = u64(host);
	return 0;
}

/* ---- verdict and advice ----------------------------------------------- */

static void add_advice(train_plan *p, size_t *cap, uint64_t before, uint64_t after, bool fits,
		       train_phase phase, const char *action_fmt, char *action)
{
	char a[32], d[32];
	p->advice = xgrow(p->advice, cap, p->n_advice + 1, sizeof *p->advice);
	train_advice *ad = &p->advice[p->n_advice++];
	ad->action = action ? action : xstrdup(action_fmt);
	ad->action_fmt = action_fmt;
	ad->effect_fmt = N_("%s per GPU (%s%s; peak at the %s phase)%s");
	fmt_bytes(a, sizeof a, after);
	if (after <= before)
		fmt_bytes(d, sizeof d, before - after);
	else
		fmt_bytes(d, sizeof d, after - before);
	ad->effect = xasprintf("%s per GPU (%s%s; peak at the %s phase)%s", a, after <= before ? "-" : "+", d,
			       train_phase_name(phase), fits ? N_(", fits") : N_(", still too large"));
	ad->total_after = after;
	ad->fits_after = fits;
}

/*
 * The change search.  Each change the plan can still make costs something
 * in quality or speed (the weights below: 1 free or faster, 2-3 a little
 * slower, 4-6 some quality, 7-8 much slower or shorter samples)
 * [assumption: the order an experienced fine-tuner tries them].  Every
 * combination is planned (a few thousand train_memory calls, microseconds
 * each) and the cheapest that fits on the plan's GPUs is reported, its
 * changes cheapest first, each with the total after it.  A minimal-cost
 * set holds no change it could do without (each costs > 0).  Sharding
 * over more GPUs is a change only when the plan has several; on one GPU
 * it comes last, and only when no single-GPU set fits.
 */
typedef enum {
	CH_MIXED, CH_FLASH, CH_FUSED_CE, CH_MICRO1, CH_CKPT, CH_OPT8, CH_TARGETS, CH_RANK,
	CH_QLORA, CH_LORA, CH_SEQ2, CH_SEQ4, CH_OFFLOAD, CH_SHARD, CH_N
} change_id;

typedef struct change {
	change_id id;
	int cost;
	unsigned excl;           /* group: at most one change of a group */
} change;

static void change_apply(train_opts *o, change_id id, uint32_t seq0)
{
	switch (id) {
	case CH_MIXED: o->precision = TRAIN_MIXED_BF16; break;
	case CH_FLASH: o->flash_attn = true; break;
	case CH_FUSED_CE: o->fused_ce = true; break;
	case CH_MICRO1: o->grad_accum *= o->micro_batch; o->micro_batch = 1; break;
	case CH_CKPT: o->ckpt = TRAIN_CKPT_FULL; break;
	case CH_OPT8: o->optimizer = TRAIN_PAGED_ADAMW_8BIT; o->optimizer_in_bwd = false; break;
	case CH_TARGETS: o->targets = TRAIN_LORA_QV; o->lora_mask = 0; break;
	case CH_RANK: o->lora_rank = 16; break;
	case CH_QLORA: o->method = TRAIN_QLORA; break;
	case CH_LORA: o->method = TRAIN_LORA; break;
	case CH_SEQ2: o->seq = seq0 / 2; break;
	case CH_SEQ4: o->seq = seq0 / 4; break;
	case CH_OFFLOAD: o->offload_optimizer = true; break;
	case CH_SHARD: o->shard = TRAIN_SHARD_FSDP; break;
	default: break;
	}
}

/* The change's words: its catalog format (N_()) and the English made
 * from it (NULL when the format has no argument). */
static const char *change_text(const train_opts *after, change_id id, char **text)
{
	*text = NULL;
	switch (id) {
	case CH_MIXED: return N_("train in mixed precision (--precision mixed-bf16; mixed-fp16 on GPUs without bf16)");
	case CH_FLASH: return N_("SDPA / FlashAttention (--flash-attn on): no s x s attention scores kept");
	case CH_FUSED_CE:
		return N_("fused cross-entropy (--fused-ce: torch.compile'd loss, Liger or Unsloth kernels): only the "
			  "16-bit logits kept, no fp32 copy");
	case CH_MICRO1:
		*text = xasprintf("micro-batch 1 with --grad-accum %u (same effective batch: --micro-batch 1 "
				  "--grad-accum %u)", after->grad_accum, after->grad_accum);
		return N_("micro-batch 1 with --grad-accum %u (same effective batch: --micro-batch 1 --grad-accum %u)");
	case CH_CKPT:
		return N_("gradient checkpointing (--checkpointing full): about a third more compute per step");
	case CH_OPT8:
		return N_("8-bit paged AdamW (--optimizer paged-adamw-8bit): states in 8 bits, paged to host RAM under "
			  "pressure");
	case CH_TARGETS: return N_("LoRA on q_proj and v_proj only (--lora-targets qv): fewer adapted maps, less to learn");
	case CH_RANK: return N_("LoRA rank 16 (--lora-rank 16)");
	case CH_QLORA: return N_("load the base in 4-bit NF4 and train LoRA adapters (QLoRA: --train qlora)");
	case CH_LORA: return N_("train LoRA adapters instead of every weight (--train lora)");
	case CH_SEQ2:
	case CH_SEQ4:
		*text = xasprintf("shorter samples (--seq %u): longer ones are cut; fine when your data is shorter",
				  after->seq);
		return N_("shorter samples (--seq %u): longer ones are cut; fine when your data is shorter");
	case CH_OFFLOAD:
		return N_("optimizer states and step on the CPU (--offload-optimizer): slower steps, host RAM instead");
	case CH_SHARD:
		*text = xasprintf("shard weights, gradients and states over the %u GPUs (--shard fsdp)", after->gpus);
		return N_("shard weights, gradients and states over the %u GPUs (--shard fsdp)");
	default: return "";
	}
}

/* The changes that still apply to o, cheapest first. */
static size_t changes_for(const train_opts *o, change *c)
{
	size_t n = 0;
	bool full = o->method == TRAIN_FULL;
#define ADD(cond, i, k, g)                                  \
	if (cond)                                           \
		c[n++] = (change){.id = (i), .cost = (k), .excl = (g)}
	ADD(o->precision == TRAIN_FP32, CH_MIXED, 1, 0);
	ADD(!o->flash_attn, CH_FLASH, 1, 0);
	ADD(!o->fused_ce, CH_FUSED_CE, 1, 0);
	ADD(o->micro_batch > 1, CH_MICRO1, 2, 0);
	ADD(o->ckpt != TRAIN_CKPT_FULL, CH_CKPT, 3, 0);
	ADD(o->optimizer != TRAIN_PAGED_ADAMW_8BIT && o->optimizer != TRAIN_ADAMW_8BIT &&
		    o->optimizer != TRAIN_ADAFACTOR && !o->offload_optimizer,
	    CH_OPT8, 3, 0);
	ADD(o->gpus > 1 && o->shard != TRAIN_SHARD_FSDP && o->shard != TRAIN_SHARD_ZERO3, CH_SHARD, 4, 0);
	ADD(!full && o->targets != TRAIN_LORA_QV, CH_TARGETS, 4, 0);
	ADD(!full && o->lora_rank > 16, CH_RANK, 4, 0);
	ADD(o->method != TRAIN_QLORA, CH_QLORA, full ? 7 : 5, 1);
	ADD(full, CH_LORA, 6, 1);
	ADD(o->seq >= 512, CH_SEQ2, 6, 2);
	ADD(o->seq >= 1024, CH_SEQ4, 8, 2);
	ADD(!o->offload_optimizer, CH_OFFLOAD, 7, 0);
#undef ADD
	return n;
}

/* The cheapest set of c that fits p's budget with o as the start:
 * returns its mask (0 and *found false when none fits). */
static int search(const model_desc *m, const train_opts *o, const change *c, size_t n, uint64_t budget,
		  unsigned *best, bool *found, gw_error *err)
{
	int best_cost = 0, best_n = 0;
	uint64_t best_total = 0;
	*found = false;
	*best = 0;
	for (unsigned mask = 0; mask < (1u << n); mask++) {
		unsigned groups = 0;
		int cost = 0, k = 0;
		bool ok = true;
		train_opts q = *o;
		for (size_t i = 0; i < n && ok; i++) {
			if (!(mask & (1u << i)))
				continue;
			if (c[i].excl && (groups & (1u << c[i].excl)))
				ok = false;
			groups |= c[i].excl ? 1u << c[i].excl : 0;
			cost += c[i].cost;
			k++;
		}
		if (!ok || (*found && (cost > best_cost || (cost == best_cost && k > best_n))))
			continue;
		for (size_t i = 0; i < n; i++)
			if (mask & (1u << i))
				change_apply(&q, c[i].id, o->seq);
		train_breakdown bd;
		uint64_t host;
		double t;
		int rc = train_memory(m, &q, &bd, &host, &t, err);
		if (rc)
			return rc;
		if (bd.total > budget)
			continue;
		if (!*found || cost < best_cost || k < best_n || bd.total < best_total) {
			*found = true;
			*best = mask;
			best_cost = cost;
			best_n = k;
			best_total = bd.total;
		}
	}
	return 0;
}

/* Report the set: each change in turn (cheapest first) with the total
 * after it and the ones before it. */
static int report(const model_desc *m, train_plan *p, size_t *cap, train_opts *o, const change *c, size_t n,
		  unsigned mask, uint64_t *cur, gw_error *err)
{
	uint32_t seq0 = o->seq;
	for (size_t i = 0; i < n; i++) {
		if (!(mask & (1u << i)))
			continue;
		change_apply(o, c[i].id, seq0);
		train_breakdown bd;
		uint64_t host;
		double t;
		int rc = train_memory(m, o, &bd, &host, &t, err);
		if (rc)
			return rc;
		char *text;
		const char *fmt = change_text(o, c[i].id, &text);
		add_advice(p, cap, *cur, bd.total, bd.total <= p->vram_bytes, bd.peak_phase, fmt, text);
		*cur = bd.total;
	}
	return 0;
}

static int advise(const model_desc *m, train_plan *p, gw_error *err)
{
	train_opts o = p->opts;
	uint64_t cur = p->bd.total;
	size_t cap = 0;
	change c[CH_N];
	size_t n = changes_for(&o, c);
	unsigned mask;
	bool found;
	int rc = search(m, &o, c, n, p->vram_bytes, &mask, &found, err);
	if (rc)
		return rc;
	if (found)
		return report(m, p, &cap, &o, c, n, mask, &cur, err);
	/* Nothing fits these GPUs: the cheapest set on the fewest more GPUs,
	 * sharded (FSDP / ZeRO-3), up to 64. */
	for (uint32_t g = o.gpus < 2 ? 2 : o.gpus * 2; g <= 64; g *= 2) {
		train_opts q = o;
		q.gpus = g;
		q.shard = TRAIN_SHARD_FSDP;
		change cq[CH_N];
		size_t nq = changes_for(&q, cq);
		if ((rc = search(m, &q, cq, nq, p->vram_bytes, &mask, &found, err)))
			return rc;
		if (!found)
			continue;
		/* the single-GPU changes first, then the GPUs */
		train_opts r = o;
		if ((rc = report(m, p, &cap, &r, cq, nq, mask, &cur, err)))
			return rc;
		r.gpus = g;
		r.shard = TRAIN_SHARD_FSDP;
		train_breakdown bd;
		uint64_t host;
		double t;
		if ((rc = train_memory(m, &r, &bd, &host, &t, err)))
			return rc;
		add_advice(p, &cap, cur, bd.total, bd.total <= p->vram_bytes, bd.peak_phase,
			   g == 2 ? N_("with a second GPU: shard across 2 GPUs with FSDP / ZeRO-3 (--gpus 2 --shard fsdp)")
				  : N_("with more GPUs: shard across %u GPUs with FSDP / ZeRO-3 (--gpus %u --shard fsdp)"),
			   g == 2 ? NULL
				  : xasprintf("with more GPUs: shard across %u GPUs with FSDP / ZeRO-3 (--gpus %u --shard fsdp)",
					      g, g));
		return 0;
	}
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
	p->notes[p->n_notes++] = N_("activations: the saved tensors of a Hugging Face decoder layer as PyTorch's MemTracker "
				 "counts them (tests/validation/train-oracle.tsv); peak = the largest phase of a step");
	if (o->precision == TRAIN_MIXED_BF16 || o->precision == TRAIN_MIXED_FP16)
		p->notes[p->n_notes++] = o->amp == TRAIN_AMP_MASTER
						 ? N_("mixed precision as DeepSpeed/FSDP keep it: 16-bit weights and gradients, fp32 master and states")
						 : N_("mixed precision as the HF Trainer runs it: fp32 weights, gradients and states, bf16 weight copies under autocast");
	if (!o->flash_attn)
		p->notes[p->n_notes++] = N_("eager attention stores the s x s scores; --flash-attn drops them");
	if (o->optimizer == TRAIN_PAGED_ADAMW_8BIT)
		p->notes[p->n_notes++] = N_("paged optimizer states are counted in host RAM; they use spare GPU memory when there is some");
	if (o->method != TRAIN_FULL && (o->targets == TRAIN_LORA_ALL_LINEAR || o->targets == TRAIN_LORA_ATTN_MLP))
		p->notes[p->n_notes++] = N_("LoRA on every linear map of each layer (the lm_head and a MoE's fused experts excluded)");
	if (o->method == TRAIN_LORA)
		p->notes[p->n_notes++] = train_weights_bytes(m, o) == 4
			? N_("the frozen base in fp32 (--weights-dtype fp32, or an fp32 checkpoint): transformers 4 loads "
			     "float32 unless given a dtype")
			: N_("the frozen base in 16-bit, the checkpoint's dtype as transformers >= 5 loads it (dtype=\"auto\"); "
			     "--weights-dtype fp32 for transformers 4's float32 default");
	if (o->method != TRAIN_FULL && o->targets == TRAIN_LORA_QV)
		p->notes[p->n_notes++] = N_("LoRA on q_proj and v_proj: PEFT's default for Llama, Mistral, Qwen2, Gemma");
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

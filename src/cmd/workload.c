/*
 * workload.c: --train and --image options and the printing of their plans.
 */
#include "cmd/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "util/json.h"

enum {
	OPT_TRAIN = WORKLOAD_OPT_BASE,
	OPT_SEQ,
	OPT_MICRO_BATCH,
	OPT_GRAD_ACCUM,
	OPT_PRECISION,
	OPT_OPTIMIZER,
	OPT_CHECKPOINTING,
	OPT_LORA_RANK,
	OPT_LORA_TARGETS,
	OPT_GPUS,
	OPT_SHARD,
	OPT_OFFLOAD_OPTIMIZER,
	OPT_OPTIMIZER_IN_BWD,
	OPT_FRAMEWORK,
	OPT_CHUNKED_CE,
	OPT_FUSED_CE,
	OPT_COMPILE,
	OPT_WEIGHTS_DTYPE,
	OPT_IMAGE,
	OPT_STEPS,
	OPT_OFFLOAD,
	OPT_VAE_TILING,
	OPT_UI,
};

const struct option workload_options[] = {
	{"train", required_argument, NULL, OPT_TRAIN},
	{"seq", required_argument, NULL, OPT_SEQ},
	{"micro-batch", required_argument, NULL, OPT_MICRO_BATCH},
	{"grad-accum", required_argument, NULL, OPT_GRAD_ACCUM},
	{"precision", required_argument, NULL, OPT_PRECISION},
	{"optimizer", required_argument, NULL, OPT_OPTIMIZER},
	{"checkpointing", required_argument, NULL, OPT_CHECKPOINTING},
	{"lora-rank", required_argument, NULL, OPT_LORA_RANK},
	{"lora-targets", required_argument, NULL, OPT_LORA_TARGETS},
	{"gpus", required_argument, NULL, OPT_GPUS},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"offload-optimizer", no_argument, NULL, OPT_OFFLOAD_OPTIMIZER},
	{"optimizer-in-bwd", no_argument, NULL, OPT_OPTIMIZER_IN_BWD},
	{"chunked-ce", no_argument, NULL, OPT_CHUNKED_CE},
	{"fused-ce", no_argument, NULL, OPT_FUSED_CE},
	{"compile", required_argument, NULL, OPT_COMPILE},
	{"weights-dtype", required_argument, NULL, OPT_WEIGHTS_DTYPE},
	{"framework", required_argument, NULL, OPT_FRAMEWORK},
	{"image", required_argument, NULL, OPT_IMAGE},
	{"steps", required_argument, NULL, OPT_STEPS},
	{"offload", required_argument, NULL, OPT_OFFLOAD},
	{"vae-tiling", no_argument, NULL, OPT_VAE_TILING},
	{"ui", required_argument, NULL, OPT_UI},
	{NULL, 0, NULL, 0},
};

size_t workload_option_count(void)
{
	return sizeof workload_options / sizeof workload_options[0] - 1;
}

const char workload_help[] =
	N_("Fine-tuning (--train):\n"
	"  --train full|lora|qlora   plan fine-tuning memory instead of inference\n"
	"  --seq N                   tokens per sample (default 2048)\n"
	"  --micro-batch N           samples per GPU per step (default 4)\n"
	"  --grad-accum N            steps accumulated; memory-neutral (default 1)\n"
	"  --precision P             fp32, mixed-bf16 (default), mixed-fp16, bf16\n"
	"  --optimizer O             adamw-fused (the Trainer's default), adamw (foreach),\n"
	"                            adamw-8bit, paged-adamw-8bit, sgd, adafactor\n"
	"  --checkpointing C         none (default), selective, full\n"
	"  --lora-rank R             LoRA rank (default 8, PEFT's)\n"
	"  --lora-targets T          qv (default, PEFT's), attn (q,k,v,o), all-linear,\n"
	"                            or a list such as q,k,v,o,gate,up,down\n"
	"  --gpus N --shard S        data parallel over N GPUs; S: none, zero1, zero2,\n"
	"                            zero3, fsdp\n"
	"  --offload-optimizer       optimizer states and fp32 master in host RAM\n"
	"  --optimizer-in-bwd        optimizer step fused into backward (torchtune)\n"
	"  --chunked-ce              chunked cross-entropy (torchtune's, eager)\n"
	"  --fused-ce                fused cross-entropy (torch.compile'd chunks, Unsloth,\n"
	"                            Liger): only the 16-bit logits are kept\n"
	"  --compile on|off          torch.compile of the loss (on: as --fused-ce; the\n"
	"                            torchtune preset is on, as its published table)\n"
	"  --weights-dtype D         the frozen base's dtype for LoRA: auto (default: the\n"
	"                            checkpoint's, as transformers >= 5 loads it; 16-bit\n"
	"                            unless the checkpoint is fp32), bf16, fp16, fp32\n"
	"                            (transformers 4's float32 default)\n"
	"  --framework F             the defaults of transformers (HF Trainer + PEFT,\n"
	"                            the default: SDPA, fp32 logits), torchtune, unsloth,\n"
	"                            axolotl, deepspeed (ZeRO-2) or none (eager\n"
	"                            attention); give it after --train; later options\n"
	"                            override it\n"
	"  (--flash-attn on|off overrides the framework's attention kernel)\n"
	"Image generation (--image, MODEL: sd-1.5 sdxl sd-3.5-medium sd-3.5-large\n"
	"flux.1-dev flux.1-schnell):\n"
	"  --image WxH               image size, e.g. 1024x1024\n"
	"  --batch N                 images per batch (default 1)\n"
	"  --steps N                 denoising steps (default: the model's)\n"
	"  --quant Q                 fp32, fp16 (default), bf16, fp8, or a GGUF type\n"
	"                            (q8_0 q6_k q5_k_s q5_0 q4_k_s q4_0 ...)\n"
	"  --offload M               none (default), text-encoders, sequential\n"
	"  --vae-tiling              decode the image in 512x512 tiles\n"
	"  --ui U                    how the UI allocates memory: comfyui (default:\n"
	"                            stages swapped, bf16 VAE where the card has it),\n"
	"                            diffusers (all resident, SDXL VAE in fp32), a1111\n"
	"                            (as diffusers, its no-half-vae setting)\n");

void workload_init(workload *w)
{
	memset(w, 0, sizeof *w);
	w->kind = WORKLOAD_LLM;
	train_opts_init(&w->train);
	image_opts_init(&w->image);
}

static int count_opt(const char *cmd, const char *name, const char *arg, long long min, long long max,
		     uint32_t *out)
{
	long long v;
	if (parse_int(arg, min, max, &v))
		return usage_error(cmd, "invalid %s '%s' (a whole number from %lld to %lld)", name, arg, min, max);
	*out = (uint32_t)v;
	return 0;
}

static int word_error(const char *cmd, const char *name, const char *arg, const char *choices)
{
	return usage_error(cmd, "invalid %s '%s' (one of: %s)", name, arg, choices);
}

/* "1024x1024" -> w, h within 64..16384 */
static int parse_wxh(const char *s, uint32_t *w, uint32_t *h)
{
	const char *x = strpbrk(s, "xX");
	if (!x)
		return GW_EINVAL;
	char *a = xstrndup(s, (size_t)(x - s));
	long long wv, hv;
	int rc = parse_int(a, 64, 16384, &wv) || parse_int(x + 1, 64, 16384, &hv) ? GW_EINVAL : 0;
	free(a);
	if (!rc) {
		*w = (uint32_t)wv;
		*h = (uint32_t)hv;
	}
	return rc;
}

int workload_option(workload *w, int id, const char *arg, const char *cmd)
{
	train_opts *t = &w->train;
	const char *name = NULL;
	for (size_t i = 0; workload_options[i].name; i++)
		if (workload_options[i].val == id)
			name = workload_options[i].name;
	if (!name)
		return -1;
	if (id >= OPT_SEQ && id <= OPT_WEIGHTS_DTYPE && !w->train_only_flag)
		w->train_only_flag = name;
	if (id >= OPT_STEPS && !w->image_only_flag)
		w->image_only_flag = name;
	switch (id) {
	case OPT_TRAIN:
		if (train_parse_method(arg, &t->method))
			return word_error(cmd, "--train", arg, "full, lora, qlora");
		w->kind = WORKLOAD_TRAIN;
		return 0;
	case OPT_SEQ: return count_opt(cmd, "--seq", arg, 1, 10000000, &t->seq);
	case OPT_MICRO_BATCH: return count_opt(cmd, "--micro-batch", arg, 1, 100000, &t->micro_batch);
	case OPT_GRAD_ACCUM: return count_opt(cmd, "--grad-accum", arg, 1, 1000000, &t->grad_accum);
	case OPT_PRECISION:
		return train_parse_precision(arg, &t->precision)
			       ? word_error(cmd, "--precision", arg, "fp32, mixed-bf16, mixed-fp16, bf16")
			       : 0;
	case OPT_OPTIMIZER:
		return train_parse_optimizer(arg, &t->optimizer)
			       ? word_error(cmd, "--optimizer", arg,
					    "adamw, adamw-fused, adamw-8bit, paged-adamw-8bit, sgd, adafactor")
			       : 0;
	case OPT_CHECKPOINTING:
		return train_parse_ckpt(arg, &t->ckpt) ? word_error(cmd, "--checkpointing", arg, "none, selective, full")
						       : 0;
	case OPT_LORA_RANK: return count_opt(cmd, "--lora-rank", arg, 1, 65536, &t->lora_rank);
	case OPT_LORA_TARGETS:
		return train_parse_lora_targets(arg, t)
			       ? word_error(cmd, "--lora-targets", arg,
					    "qv, attn, attn+mlp, all-linear, or a list of q,k,v,o,gate,up,down")
			       : 0;
	case OPT_GPUS:
		w->gpus_given = true;
		return count_opt(cmd, "--gpus", arg, 1, 4096, &t->gpus);
	case OPT_SHARD:
		return train_parse_shard(arg, &t->shard)
			       ? word_error(cmd, "--shard", arg, "none, zero1, zero2, zero3, fsdp")
			       : 0;
	case OPT_OFFLOAD_OPTIMIZER: t->offload_optimizer = true; return 0;
	case OPT_OPTIMIZER_IN_BWD: t->optimizer_in_bwd = true; return 0;
	case OPT_CHUNKED_CE: t->chunked_ce = true; return 0;
	case OPT_FUSED_CE: t->fused_ce = true; return 0;
	case OPT_COMPILE:
		/* torch.compile of the loss: its fp32 upcast fused (torchtune's
		 * compile: True) */
		if (str_ieq(arg, "on"))
			t->fused_ce = true;
		else if (str_ieq(arg, "off"))
			t->fused_ce = false;
		else
			return word_error(cmd, "--compile", arg, "on, off");
		return 0;
	case OPT_WEIGHTS_DTYPE:
		return train_parse_weights_dtype(arg, t) ? word_error(cmd, "--weights-dtype", arg, "auto, bf16, fp16, fp32")
							 : 0;
	case OPT_FRAMEWORK: {
		train_framework f;
		if (train_parse_framework(arg, &f))
			return word_error(cmd, "--framework", arg, "transformers, torchtune, unsloth, axolotl, deepspeed, none");
		train_apply_framework(t, f);
		return 0;
	}
	case OPT_IMAGE:
		if (parse_wxh(arg, &w->image.width, &w->image.height))
			return usage_error(cmd, "invalid --image '%s' (WIDTHxHEIGHT, 64 to 16384 each, e.g. 1024x1024)", arg);
		w->kind = WORKLOAD_IMAGE;
		return 0;
	case OPT_STEPS: return count_opt(cmd, "--steps", arg, 1, 10000, &w->image.steps);
	case OPT_OFFLOAD:
		return image_parse_offload(arg, &w->image.offload)
			       ? word_error(cmd, "--offload", arg, "none, text-encoders, sequential")
			       : 0;
	case OPT_VAE_TILING: w->image.vae_tiling = true; return 0;
	case OPT_UI:
		return image_parse_ui(arg, &w->image.ui) ? word_error(cmd, "--ui", arg, "comfyui, diffusers, a1111") : 0;
	}
	return -1;
}

int workload_check(const workload *w, const char *cmd)
{
	if (w->train_only_flag && w->kind != WORKLOAD_TRAIN)
		return usage_error(cmd, "--%s needs --train", w->train_only_flag);
	if (w->image_only_flag && w->kind != WORKLOAD_IMAGE)
		return usage_error(cmd, "--%s needs --image", w->image_only_flag);
	return 0;
}

/* ---- printing --------------------------------------------------------- */

/* Names, the same in every language (not in the catalog) */
static const char LORA[] = "LoRA", SDPA_FLASH[] = "SDPA/flash", UNET[] = "UNet", A1111[] = "AUTOMATIC1111",
		  DIFFUSERS[] = "diffusers", NO_HALF_VAE[] = "--no-half-vae", FORCE_UPCAST[] = "force_upcast";

static const char *gib(char *buf, size_t n, uint64_t b)
{
	return fmt_bytes(buf, n, b);
}

/* One change and its effect, made in English by src/plan from the catalog
 * formats it keeps beside them: translated here, the pieces put in. */
static void advice_line(size_t n, const char *action_fmt, const char *action, const char *effect_fmt,
			const char *effect)
{
	char *a = gw_translate_fmt(action_fmt, action), *e = gw_translate_fmt(effect_fmt, effect);
	if (n)
		printf("  %zu. %s\n     -> %s\n", n, a, e);
	else
		printf("  - %s\n     -> %s\n", a, e);
	free(a);
	free(e);
}

static void add_row(table *t, const char *what, uint64_t bytes, const char *note)
{
	char b[32];
	gib(b, sizeof b, bytes);
	table_add(t, what, b, note);
}

int workload_plan_train(workload *w, const model_desc *m, uint64_t vram_bytes, uint32_t n_gpus,
			const char *gpu_name, bool json)
{
	train_opts o = w->train;
	if (n_gpus > 1 && !w->gpus_given)
		o.gpus = n_gpus;
	train_plan p;
	gw_error err = {0};
	int rc = train_plan_compute(m, &o, vram_bytes, &p, &err);
	if (rc) {
		if (rc == GW_EINVAL)
			return usage_error("plan", "%s", gw_error_text(&err));
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	const train_breakdown *bd = &p.bd;
	const char *verdict = !p.has_budget ? NULL : p.fits ? "fits" : "no-fit";
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "model", jstr_or_null(m->name));
		json_object_set_new(j, "workload", json_string("train"));
		json_object_set_new(j, "method", json_string(train_method_name(o.method)));
		json_object_set_new(j, "framework", json_string(train_framework_name(o.framework)));
		json_object_set_new(j, "verdict", jstr_or_null(verdict));
		json_object_set_new(j, "params", json_integer((json_int_t)p.params));
		json_object_set_new(j, "trainable_params", json_integer((json_int_t)p.trainable_params));
		json_object_set_new(j, "seq", json_integer(o.seq));
		json_object_set_new(j, "micro_batch", json_integer(o.micro_batch));
		json_object_set_new(j, "grad_accum", json_integer(o.grad_accum));
		json_object_set_new(j, "effective_batch", json_integer((json_int_t)p.effective_batch));
		json_object_set_new(j, "precision", json_string(train_precision_name(o.precision)));
		json_object_set_new(j, "optimizer", json_string(train_optimizer_name(o.optimizer)));
		json_object_set_new(j, "checkpointing", json_string(train_ckpt_name(o.ckpt)));
		json_object_set_new(j, "lora_rank", o.method == TRAIN_FULL ? json_null() : json_integer(o.lora_rank));
		json_object_set_new(j, "lora_targets",
				    o.method == TRAIN_FULL ? json_null() : json_string(train_targets_name(o.targets)));
		json_object_set_new(j, "flash_attn", json_boolean(o.flash_attn));
		json_object_set_new(j, "fused_ce", json_boolean(o.fused_ce));
		json_object_set_new(j, "weights_dtype", o.method == TRAIN_FULL ? json_null()
				    : json_string(train_weights_bytes(m, &o) == 4 ? "fp32" : "16-bit"));
		json_object_set_new(j, "gpus", json_integer(o.gpus));
		json_object_set_new(j, "shard", json_string(train_shard_name(o.shard)));
		json_object_set_new(j, "per_gpu_bytes", json_integer((json_int_t)bd->total));
		json_object_set_new(j, "peak_phase", json_string(train_phase_name(bd->peak_phase)));
		json_object_set_new(j, "amp_layout", o.precision == TRAIN_MIXED_BF16 || o.precision == TRAIN_MIXED_FP16
			? json_string(o.amp == TRAIN_AMP_MASTER ? "master" : "autocast") : json_null());
		static const char *const phase_keys[TRAIN_N_PHASES] = {"forward_bytes", "loss_backward_bytes",
								       "layer_backward_bytes", "optimizer_step_bytes"};
		json_t *ph = json_object();
		for (int i = 0; i < TRAIN_N_PHASES; i++)
			json_object_set_new(ph, phase_keys[i], json_integer((json_int_t)bd->phase_bytes[i]));
		json_object_set_new(j, "phases", ph);
		json_t *pk = json_object();
		json_object_set_new(pk, "phase", json_string(train_phase_name(bd->peak_phase)));
		json_object_set_new(pk, "allocated_bytes", json_integer((json_int_t)bd->allocated));
		json_object_set_new(pk, "parameters_bytes", json_integer((json_int_t)bd->cat_params));
		json_object_set_new(pk, "gradients_bytes", json_integer((json_int_t)bd->cat_grads));
		json_object_set_new(pk, "optimizer_bytes", json_integer((json_int_t)bd->cat_optimizer));
		json_object_set_new(pk, "activations_bytes", json_integer((json_int_t)bd->cat_activations));
		json_object_set_new(j, "peak", pk);
		json_object_set_new(j, "vram_bytes", json_integer((json_int_t)(bd->total * o.gpus)));
		json_object_set_new(j, "vram_budget_bytes", jint_or_null(p.has_budget, (long long)vram_bytes));
		json_t *b = json_object();
		json_object_set_new(b, "weights_bytes", json_integer((json_int_t)(bd->weights + bd->quant_consts)));
		json_object_set_new(b, "quant_constants_bytes", json_integer((json_int_t)bd->quant_consts));
		json_object_set_new(b, "gradients_bytes", json_integer((json_int_t)bd->gradients));
		json_object_set_new(b, "optimizer_bytes", json_integer((json_int_t)bd->optimizer));
		json_object_set_new(b, "activations_bytes", json_integer((json_int_t)bd->activations));
		json_object_set_new(b, "logits_bytes", json_integer((json_int_t)bd->logits));
		json_object_set_new(b, "adapter_bytes", json_integer((json_int_t)bd->adapter));
		json_object_set_new(b, "overhead_bytes", json_integer((json_int_t)bd->overhead));
		json_object_set_new(j, "breakdown", b);
		json_object_set_new(j, "host_bytes", json_integer((json_int_t)p.host_bytes));
		json_t *adv = json_array();
		for (size_t i = 0; i < p.n_advice; i++) {
			json_t *a = json_object();
			json_object_set_new(a, "action", json_string(p.advice[i].action));
			json_object_set_new(a, "effect", json_string(p.advice[i].effect));
			json_object_set_new(a, "per_gpu_bytes", json_integer((json_int_t)p.advice[i].total_after));
			json_object_set_new(a, "fits", json_boolean(p.advice[i].fits_after));
			json_array_append_new(adv, a);
		}
		json_object_set_new(j, "advice", adv);
		json_t *notes = json_array();
		for (size_t i = 0; i < p.n_notes; i++)
			json_array_append_new(notes, json_string(p.notes[i]));
		json_object_set_new(j, "notes", notes);
		json_print(j, stdout);
		json_decref(j);
	} else {
		FILE *f = stdout;
		char a[32], c[32];
		printf(_("%sFine-tuning %s%s: %s"), c_bold(f), m->name ? m->name : _("model"), c_reset(f),
		       o.method == TRAIN_FULL ? _("full") : o.method == TRAIN_LORA ? LORA : _("QLoRA (NF4 base)"));
		if (o.method != TRAIN_FULL)
			printf(_(", rank %u on %s"), o.lora_rank, train_targets_name(o.targets));
		if (p.params >= 1e9)
			printf(_("\n  %.2f B parameters, %.1f M trainable\n"), p.params / 1e9, p.trainable_params / 1e6);
		else
			printf(_("\n  %.1f M parameters, %.2f M trainable\n"), p.params / 1e6, p.trainable_params / 1e6);
		printf(P_("  seq %u, micro-batch %u x grad-accum %u x %u GPU = effective batch %llu\n",
			  "  seq %u, micro-batch %u x grad-accum %u x %u GPUs = effective batch %llu\n", o.gpus),
		       o.seq, o.micro_batch, o.grad_accum, o.gpus, (unsigned long long)p.effective_batch);
		printf(_("  %s, %s, checkpointing %s, %s attention%s%s%s\n\n"), train_precision_name(o.precision),
		       train_optimizer_name(o.optimizer), train_ckpt_name(o.ckpt), o.flash_attn ? SDPA_FLASH : _("eager"),
		       o.gpus > 1 ? _(", shard ") : "", o.gpus > 1 ? train_shard_name(o.shard) : "",
		       o.offload_optimizer ? _(", optimizer offloaded") : "");
		const char *hdr[] = {_("per GPU"), _("bytes"), ""};
		table *t = table_new(3, hdr);
		table_set_align(t, 1, true);
		add_row(t, _("weights"), bd->weights, o.method == TRAIN_QLORA ? _("NF4 linears, 16-bit embeddings") : "");
		if (bd->quant_consts)
			add_row(t, _("quant constants"), bd->quant_consts, _("NF4 block 64, double quantization"));
		add_row(t, _("gradients"), bd->gradients, o.optimizer_in_bwd ? _("one tensor at a time") : "");
		add_row(t, _("optimizer"), bd->optimizer, o.method == TRAIN_FULL ? _("states + fp32 master") : "");
		add_row(t, _("activations"), bd->activations, _("saved tensors at the peak"));
		add_row(t, _("logits"), bd->logits, o.fused_ce ? _("fused cross-entropy") : o.chunked_ce ? _("chunked cross-entropy") : _("fp32 log-softmax + grads"));
		add_row(t, _("adapter"), bd->adapter, o.method == TRAIN_FULL ? "" : _("LoRA weights, grads, states"));
		add_row(t, _("overhead"), bd->overhead, _("CUDA context + allocator"));
		add_row(t, _("total"), bd->total, _(train_phase_name(bd->peak_phase)));
		table_print(t, stdout);
		table_free(t);
		gib(a, sizeof a, bd->allocated);
		printf(_("  peak at the %s phase (PyTorch allocator %s; forward %s, loss backward %s, layer backward %s, optimizer step %s)\n"),
		       _(train_phase_name(bd->peak_phase)), a, gib(c, sizeof c, bd->phase_bytes[0]),
		       fmt_bytes((char[32]){0}, 32, bd->phase_bytes[1]), fmt_bytes((char[32]){0}, 32, bd->phase_bytes[2]),
		       fmt_bytes((char[32]){0}, 32, bd->phase_bytes[3]));
		if (p.host_bytes)
			printf(_("  host RAM: %s (offloaded or paged optimizer states)\n"), gib(a, sizeof a, p.host_bytes));
		if (p.has_budget) {
			gib(a, sizeof a, bd->total);
			gib(c, sizeof c, vram_bytes);
			char on[160] = "";
			if (gpu_name)
				snprintf(on, sizeof on, _(" (%s)"), gpu_name);
			if (p.fits)
				printf(_("\n%sfits%s: %s of %s per GPU%s\n"), c_green(f), c_reset(f), a, c, on);
			else
				printf(_("\n%sdoes not fit%s: needs %s of %s per GPU%s\n"), c_red(f), c_reset(f), a, c, on);
		}
		if (p.n_advice) {
			printf(_("\nChanges, applied in this order:\n"));
			for (size_t i = 0; i < p.n_advice; i++)
				advice_line(i + 1, p.advice[i].action_fmt, p.advice[i].action, p.advice[i].effect_fmt, p.advice[i].effect);
		}
		printf(_("\nAssumptions:\n"));
		for (size_t i = 0; i < p.n_notes; i++)
			printf("  - %s\n", _(p.notes[i]));
	}
	int status = p.has_budget && !p.fits ? GW_EXIT_VERDICT4 : GW_EXIT_OK;
	train_plan_release(&p);
	return status;
}

int workload_plan_image(workload *w, const char *model_name, uint64_t vram_bytes, const char *gpu_name,
			const gpu_spec *gpu, bool json)
{
	image_model m;
	gw_error err = {0};
	int rc = image_model_find(model_name, &m, &err);
	if (rc == GW_ENOTFOUND)
		return usage_error("plan", "%s", gw_error_text(&err));
	if (rc) {
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	image_opts o = w->image;
	o.gpu = gpu;
	image_plan p;
	rc = image_plan_compute(&m, &o, vram_bytes, &p, &err);
	if (rc) {
		if (rc == GW_EINVAL)
			return usage_error("plan", "%s", gw_error_text(&err));
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	const image_breakdown *bd = &p.bd;
	const char *verdict = !p.has_budget ? NULL : p.fits ? "fits" : "no-fit";
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "model", json_string(m.id));
		json_object_set_new(j, "workload", json_string("image"));
		json_object_set_new(j, "verdict", jstr_or_null(verdict));
		json_object_set_new(j, "little_headroom", p.has_budget ? json_boolean(p.little_headroom) : json_null());
		json_object_set_new(j, "width", json_integer(p.opts.width));
		json_object_set_new(j, "height", json_integer(p.opts.height));
		json_object_set_new(j, "batch", json_integer(p.opts.batch));
		json_object_set_new(j, "steps", json_integer(p.steps));
		json_object_set_new(j, "quant", json_string(p.opts.quant));
		json_object_set_new(j, "offload", json_string(image_offload_name(p.opts.offload)));
		json_object_set_new(j, "vae_tiling", json_boolean(p.opts.vae_tiling));
		json_object_set_new(j, "ui", json_string(image_ui_name(p.opts.ui)));
		json_object_set_new(j, "vae_dtype", json_string(bd->vae_fp32 ? "fp32" : p.opts.ui == IMAGE_UI_COMFYUI && m.vae_fp32 ? "bf16" : "fp16"));
		json_object_set_new(j, "resident_bytes", json_integer((json_int_t)bd->resident));
		json_object_set_new(j, "tokens", json_integer((json_int_t)p.tokens));
		json_object_set_new(j, "vram_bytes", json_integer((json_int_t)bd->total));
		json_object_set_new(j, "vram_budget_bytes", jint_or_null(p.has_budget, (long long)vram_bytes));
		json_t *b = json_object();
		json_object_set_new(b, "weights_bytes",
				    json_integer((json_int_t)(bd->denoiser + bd->text_encoders + bd->vae)));
		json_object_set_new(b, "denoiser_bytes", json_integer((json_int_t)bd->denoiser));
		json_object_set_new(b, "text_encoders_bytes", json_integer((json_int_t)bd->text_encoders));
		json_object_set_new(b, "vae_bytes", json_integer((json_int_t)bd->vae));
		json_object_set_new(b, "activations_bytes", json_integer((json_int_t)bd->activations));
		json_object_set_new(b, "vae_decode_bytes", json_integer((json_int_t)bd->vae_decode));
		json_object_set_new(b, "overhead_bytes", json_integer((json_int_t)bd->overhead));
		json_object_set_new(j, "breakdown", b);
		json_object_set_new(j, "host_bytes", json_integer((json_int_t)bd->host));
		json_object_set_new(j, "s_per_image", p.has_speed ? jreal_round(p.s_per_image, 3) : json_null());
		json_object_set_new(j, "offload_s_per_image", p.has_speed ? jreal_round(p.offload_s, 3) : json_null());
		json_object_set_new(j, "s_per_step", p.has_speed ? jreal_round(p.s_per_step, 4) : json_null());
		json_object_set_new(j, "it_per_s", p.has_speed ? jreal_round(1 / p.s_per_step, 3) : json_null());
		json_object_set_new(j, "decode_s", p.has_speed ? jreal_round(p.decode_s, 3) : json_null());
		json_object_set_new(j, "images_per_min", p.has_speed ? jreal_round(p.images_per_min, 3) : json_null());
		json_object_set_new(j, "speed_estimated", p.has_speed ? json_boolean(p.speed_estimated) : json_null());
		json_object_set_new(j, "speed_backend", p.has_speed ? json_string(p.backend) : json_null());
		json_object_set_new(j, "rate_tflops", p.has_speed ? jreal_round(p.rate_tflops, 2) : json_null());
		json_object_set_new(j, "realised_fraction", p.has_speed ? jreal_round(p.fraction, 3) : json_null());
		json_object_set_new(j, "attention_fraction", p.has_speed ? jreal_round(p.attn_fraction, 3) : json_null());
		json_object_set_new(j, "speed_caveat", p.has_speed && p.speed_caveat ? json_string(p.speed_caveat) : json_null());
		json_t *adv = json_array();
		for (size_t i = 0; i < p.n_advice; i++) {
			json_t *a = json_object();
			json_object_set_new(a, "action", json_string(p.advice[i].action));
			json_object_set_new(a, "effect", json_string(p.advice[i].effect));
			json_object_set_new(a, "vram_bytes", json_integer((json_int_t)p.advice[i].total_after));
			json_object_set_new(a, "fits", json_boolean(p.advice[i].fits_after));
			json_array_append_new(adv, a);
		}
		json_object_set_new(j, "advice", adv);
		json_t *sav = json_array();
		for (size_t i = 0; i < p.n_savings; i++) {
			json_t *a = json_object();
			json_object_set_new(a, "action", json_string(p.savings[i].action));
			json_object_set_new(a, "effect", json_string(p.savings[i].effect));
			json_object_set_new(a, "vram_bytes", json_integer((json_int_t)p.savings[i].total_after));
			json_array_append_new(sav, a);
		}
		json_object_set_new(j, "savings", sav);
		json_object_set_new(j, "source", json_string(m.source));
		json_print(j, stdout);
		json_decref(j);
	} else {
		FILE *f = stdout;
		char a[32], c[32];
		const char *vae_dt = bd->vae_fp32 ? "fp32" : p.opts.ui == IMAGE_UI_COMFYUI && m.vae_fp32 ? "bf16" : _("16-bit");
		printf(_("%s%s%s: %ux%u, batch %u, %u steps, %s weights, offload %s%s, %s memory profile\n"), c_bold(f), m.name,
		       c_reset(f), p.opts.width, p.opts.height, p.opts.batch, p.steps, p.opts.quant,
		       image_offload_name(p.opts.offload), p.opts.vae_tiling ? _(", tiled VAE decode") : "",
		       image_ui_name(p.opts.ui));
		printf(_("  %s with %.0f tokens per image\n\n"), m.dit ? _("diffusion transformer") : UNET, p.tokens);
		const char *hdr[] = {_("on the GPU at the peak"), _("bytes"), ""};
		table *t = table_new(3, hdr);
		table_set_align(t, 1, true);
		bool comfy = p.opts.ui == IMAGE_UI_COMFYUI;
		add_row(t, m.dit ? _("diffusion transformer") : UNET, bd->denoiser,
			p.opts.offload == IMAGE_OFFLOAD_SEQUENTIAL ? _("one block at a time")
			: comfy				     ? _("denoising stage; may leave for the decode")
							     : "");
		add_row(t, _("text encoders"), bd->text_encoders,
			p.opts.offload != IMAGE_OFFLOAD_NONE ? _("in host RAM after encoding")
			: comfy			     ? _("encoding stage only (ComfyUI unloads them)")
						     : "");
		char vnote[64];
		snprintf(vnote, sizeof vnote, _("decodes in %s"), vae_dt);
		add_row(t, "VAE", bd->vae, vnote);
		add_row(t, _("denoising activations"), bd->activations, m.cfg > 1 ? _("x2 for guidance") : "");
		add_row(t, _("VAE decode"), bd->vae_decode, p.opts.vae_tiling ? _("one 512x512 tile") : _("whole batch"));
		add_row(t, _("overhead"), bd->overhead, _("CUDA context"));
		add_row(t, _("peak"), bd->total, comfy ? _("largest stage, models swapped between stages") : _("largest stage: encode, denoise or decode"));
		if (comfy && bd->resident != bd->total)
			add_row(t, _("all resident"), bd->resident, _("what ComfyUI keeps loaded when it fits"));
		table_print(t, stdout);
		table_free(t);
		if (bd->host)
			printf(_("  host RAM: %s of offloaded weights\n"), gib(a, sizeof a, bd->host));
		if (p.has_budget) {
			gib(a, sizeof a, bd->total);
			gib(c, sizeof c, vram_bytes);
			char on[160] = "";
			if (gpu_name)
				snprintf(on, sizeof on, _(" (%s)"), gpu_name);
			if (p.fits)
				printf(_("\n%sfits%s%s: %s of %s%s%s\n"), c_green(f), c_reset(f),
				       p.little_headroom ? _(" with little headroom") : _(" comfortably"), a, c, on,
				       p.opts.offload == IMAGE_OFFLOAD_SEQUENTIAL ? _(", with sequential offload") : _(", without sequential offload"));
			else
				printf(_("\n%sdoes not fit%s: needs %s of %s%s\n"), c_red(f), c_reset(f), a, c, on);
			if (p.fits && comfy && bd->resident > vram_bytes)
				printf(_("  not everything stays loaded: ComfyUI moves the models between RAM and GPU each image "
				       "(counted in the time below)\n"));
		}
		if (p.n_advice) {
			printf(_("\nChanges, applied in this order:\n"));
			for (size_t i = 0; i < p.n_advice; i++)
				advice_line(i + 1, p.advice[i].action_fmt, p.advice[i].action, p.advice[i].effect_fmt, p.advice[i].effect);
		}
		if (p.n_savings) {
			printf(_("\nIf you need room (larger images, batches, LoRAs, ControlNet), each on its own:\n"));
			for (size_t i = 0; i < p.n_savings; i++)
				advice_line(0, p.savings[i].action_fmt, p.savings[i].action, p.savings[i].effect_fmt, p.savings[i].effect);
		}
		if (p.has_speed) {
			printf(_("\nSpeed: %s%.2f it/s, about %.1f s per image, %.1f images/min (%s; %.0f TFLOPS %s x %.0f%% realised"),
			       p.speed_estimated ? "~" : "", 1 / p.s_per_step, p.s_per_image, p.images_per_min,
			       p.backend_name, p.rate_tflops,
			       p.rate_tflops < p.paper_tflops ? _("after the board-power cap") : _("paper rate"),
			       p.fraction * 100);
			if (p.attn_fraction > 0 && p.attn_fraction < 1)
				printf(_(", attention at %.0f%% of that"), p.attn_fraction * 100);
			if (p.alu_tflops > 0)
				printf(_(", plus vector work on %.0f FP32 TFLOPS"), p.alu_tflops);
			if (p.offload_s > 0)
				printf(_(", plus %.1f s of PCIe transfers"), p.offload_s);
			printf(_(")\n"));
			if (p.speed_estimated)
				printf(_("  ~ estimate: no measured row for this card on %s; the fraction comes from the cards that "
				       "have one (data/image-backends.tsv)\n"),
				       p.backend);
			else
				printf(_("  measured card: its public rows are in tests/validation/image-speed.tsv\n"));
			if (p.speed_caveat)
				printf(_("  caveat: %s\n"), p.speed_caveat);
		} else if (gpu) {
			printf(_("\nSpeed: unknown for %s (no image backend or rate for its vendor)\n"), gpu->name);
		} else {
			printf(_("\nSpeed: unknown without a GPU (give --gpu)\n"));
		}
		printf(_("Assumptions:\n"));
		if (comfy)
			printf(_("  - ComfyUI profile: text encoders unloaded after encoding, the %s swapped out for the decode "
			       "when memory is short, VAE decoded in %s%s\n"),
			       m.dit ? _("transformer") : UNET, vae_dt,
			       !gpu ? _(" (no GPU given: a card with bf16, NVIDIA Ampere or newer, is assumed)") : "");
		else
			printf(_("  - %s profile: all models resident, SDXL's VAE upcast to fp32 (%s)\n"),
			       p.opts.ui == IMAGE_UI_A1111 ? A1111 : DIFFUSERS,
			       p.opts.ui == IMAGE_UI_A1111 ? NO_HALF_VAE : FORCE_UPCAST);
		printf(_("  - activations scale with tokens (latent W/8 x H/8%s); time: the denoiser's FLOPs (attention's\n"
		       "    share growing with the square of the tokens) at the realised rate, plus a per-step overhead;\n"
		       "    fp8 and GGUF weights are computed in 16 bits (no speed-up counted); sources in\n"
		       "    data/diffusion.tsv and data/image-backends.tsv (gpuwise --data-dir)\n"),
		       m.dit ? _(", 2x2 patches, plus text tokens") : "");
	}
	int status = p.has_budget && !p.fits ? GW_EXIT_VERDICT4 : GW_EXIT_OK;
	image_plan_release(&p);
	return status;
}

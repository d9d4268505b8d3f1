/*
 * image: GPU memory and speed of text-to-image diffusion (SD 1.5, SDXL,
 * SD 3.5, FLUX.1) from the table data/diffusion.tsv.  Pure; nothing here
 * prints.
 */
#ifndef GW_PLAN_IMAGE_H
#define GW_PLAN_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "kb/kb.h"
#include "util/util.h"

typedef enum { IMAGE_OFFLOAD_NONE, IMAGE_OFFLOAD_TEXT_ENCODERS, IMAGE_OFFLOAD_SEQUENTIAL } image_offload;

/*
 * How the UI allocates memory.  COMFYUI (the default): models are swapped
 * between the stages by its memory manager (text encoders leave before
 * denoising, the denoiser may leave for the VAE decode), the VAE decodes
 * in bf16 on cards that support it.  DIFFUSERS: everything stays resident,
 * SDXL's VAE is upcast to fp32 (force_upcast).  A1111: as diffusers, with
 * --no-half-vae (its fix for SDXL's fp16 VAE).
 */
typedef enum { IMAGE_UI_COMFYUI, IMAGE_UI_DIFFUSERS, IMAGE_UI_A1111 } image_ui;

/* A model row of the diffusion table (strings owned by kb). */
typedef struct image_model {
	const char *id, *name, *denoiser, *source;
	bool dit;
	double denoiser_params, width, patch, text_tokens;
	double clip_params, t5_params;   /* summed CLIP encoders; T5 encoder */
	double vae_params;
	bool vae_fp32;
	double native_px, gflops_native, attn_gflops_native, act_bytes_per_token, vae_bytes_per_px;
	uint32_t default_steps, cfg;
} image_model;

/* Find a model by id, name or alias (case-insensitive); 0, GW_ENOTFOUND
 * (err names the closest id) or a table error. */
int image_model_find(const char *name, image_model *m, gw_error *err);
/* True when name is a diffusion model of the table (no error reporting). */
bool image_model_known(const char *name);

typedef struct image_opts {
	uint32_t width, height, batch, steps; /* steps 0: the model's default */
	const char *quant;       /* fp32 fp16 bf16 fp8 q8_0 q6_k q5_k_s q5_0 q4_k_s q4_0 ... */
	image_offload offload;
	bool vae_tiling;
	image_ui ui;
	const gpu_spec *gpu;     /* the card (speed, bf16 support); NULL: no speed, bf16 assumed */
	int pcie_gen;            /* 0 unknown: the card's, else gen 4 */
} image_opts;

void image_opts_init(image_opts *o);
int image_parse_offload(const char *s, image_offload *out);
const char *image_offload_name(image_offload o);
int image_parse_ui(const char *s, image_ui *out);
const char *image_ui_name(image_ui u);
/* True when the UI decodes g's VAE in bf16 (ComfyUI on NVIDIA cc >= 8.0,
 * AMD RDNA 3/4 and CDNA 2/3, Intel Arc; not on Apple MPS or older cards);
 * g NULL: true (a current card is assumed). */
bool image_bf16_vae(const gpu_spec *g);
/* Bytes per parameter of a precision or GGUF type; 0 and GW_EINVAL if unknown. */
int image_quant_bytes(const char *quant, double *bytes_per_param);

typedef struct image_breakdown {
	uint64_t denoiser;       /* weights resident on the GPU at the peak */
	uint64_t text_encoders;
	uint64_t vae;
	uint64_t activations;    /* denoising working set */
	uint64_t vae_decode;     /* decode working set */
	uint64_t overhead;
	uint64_t total;          /* the peak over the stages: what must fit */
	uint64_t resident;       /* everything loaded at once (ComfyUI keeps models loaded when this fits);
				    equal to total for diffusers and A1111 */
	uint64_t host;           /* weights parked in host RAM by offload */
	bool vae_fp32;           /* the decode runs in fp32 */
} image_breakdown;

typedef struct image_advice {
	char *action, *effect;
	const char *action_fmt, *effect_fmt; /* their catalog formats (N_()), for gw_translate_fmt() */
	uint64_t total_after;
	bool fits_after;
} image_advice;

typedef struct image_plan {
	image_model model;
	image_opts opts;
	image_breakdown bd;
	uint32_t steps;
	double tokens;           /* denoiser tokens per image */
	bool has_speed;
	bool speed_estimated;    /* no measured row for this card and backend (data/image-backends.tsv) */
	const char *backend, *backend_name; /* "cuda", "PyTorch CUDA (...)" (kb strings) */
	double rate_tflops;      /* the paper rate the kernels use, after the power cap */
	double paper_tflops;     /* before the power cap */
	double fraction;         /* realised share of rate_tflops (matrix work) */
	double alu_tflops;       /* FP32 ALU rate after the power cap (vector work); 0: none */
	double attn_fraction;    /* attention's share of the realised matrix rate (1: the same) */
	const char *speed_caveat; /* data/image-backends.tsv caveat for this card, or NULL (kb string) */
	double s_per_step;       /* one sampler step of the whole batch */
	double decode_s;         /* VAE decode of the batch */
	double s_per_image;      /* steps + decode + transfers, per image */
	double offload_s;        /* the transfer share of it, per image */
	double images_per_min;
	uint64_t vram_bytes;
	bool has_budget, fits, little_headroom;
	image_advice *advice;    /* changes that make it fit, applied in order */
	size_t n_advice;
	image_advice *savings;   /* when it fits: each change alone and what it saves */
	size_t n_savings;
} image_plan;

/* Headroom below this share of the card counts as "little headroom". */
#define IMAGE_LITTLE_HEADROOM 0.25

int image_memory(const image_model *m, const image_opts *o, image_breakdown *bd, gw_error *err);
int image_plan_compute(const image_model *m, const image_opts *o, uint64_t vram_bytes, image_plan *p,
		       gw_error *err);
void image_plan_release(image_plan *p);

#endif

/*
 * image: GPU memory and speed of text-to-image diffusion (SD 1.5, SDXL,
 * SD 3.5, FLUX.1) from the table data/diffusion.tsv.  Pure; nothing here
 * prints.
 */
#ifndef GW_PLAN_IMAGE_H
#define GW_PLAN_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

typedef enum { IMAGE_OFFLOAD_NONE, IMAGE_OFFLOAD_TEXT_ENCODERS, IMAGE_OFFLOAD_SEQUENTIAL } image_offload;

/* A model row of the diffusion table (strings owned by kb). */
typedef struct image_model {
	const char *id, *name, *denoiser, *source;
	bool dit;
	double denoiser_params, width, patch, text_tokens;
	double clip_params, t5_params;   /* summed CLIP encoders; T5 encoder */
	double vae_params;
	bool vae_fp32;
	double native_px, gflops_native, mfu, act_bytes_per_token, vae_bytes_per_px;
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
	double gpu_tflops;       /* dense FP16 tensor TFLOPS; 0 unknown: no speed */
	int pcie_gen;            /* 0 unknown: gen 4 */
} image_opts;

void image_opts_init(image_opts *o);
int image_parse_offload(const char *s, image_offload *out);
const char *image_offload_name(image_offload o);
/* Bytes per parameter of a precision or GGUF type; 0 and GW_EINVAL if unknown. */
int image_quant_bytes(const char *quant, double *bytes_per_param);

typedef struct image_breakdown {
	uint64_t denoiser;       /* weights resident on the GPU at the peak */
	uint64_t text_encoders;
	uint64_t vae;
	uint64_t activations;    /* denoising working set */
	uint64_t vae_decode;     /* decode working set */
	uint64_t overhead;
	uint64_t total;          /* the peak over the stages */
	uint64_t host;           /* weights parked in host RAM by offload */
} image_breakdown;

typedef struct image_advice {
	char *action, *effect;
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
	double s_per_image;      /* compute-bound estimate incl. offload transfers */
	double offload_s;        /* the transfer share of it */
	uint64_t vram_bytes;
	bool has_budget, fits, little_headroom;
	image_advice *advice;
	size_t n_advice;
} image_plan;

/* Headroom below this share of the card counts as "little headroom". */
#define IMAGE_LITTLE_HEADROOM 0.25

int image_memory(const image_model *m, const image_opts *o, image_breakdown *bd, gw_error *err);
int image_plan_compute(const image_model *m, const image_opts *o, uint64_t vram_bytes, image_plan *p,
		       gw_error *err);
void image_plan_release(image_plan *p);

#endif

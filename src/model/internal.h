/*
 * model/internal.h: helpers shared by the model readers (not part of the
 * model.h contract).
 */
#ifndef GW_MODEL_INTERNAL_H
#define GW_MODEL_INTERNAL_H

#include "model/model.h"

/* Upper bound on layers any reader accepts (sizes per-layer arrays). */
#define MODEL_MAX_LAYERS 65536u

/*
 * Bounds on heads and experts no model comes near (the largest published
 * have 128 heads and 256 routed experts); a header claiming more is broken
 * (one claiming 2^32-1 heads planned 512 TiB of KV cache).
 */
#define MODEL_MAX_HEADS 65536u
#define MODEL_MAX_EXPERTS 65536u

/*
 * The one check of a model's attention and expert shape, shared by every
 * source: GGUF, safetensors (through its config.json), a config.json
 * alone and explicit numbers (model_load).  Heads and experts within the
 * bounds above; KV heads that share the heads evenly, per layer too (0
 * there marks a layer without attention, as in hybrid models); an explicit
 * 0 KV heads (kv_given) refused rather than read as "as many as the
 * heads", unless the heads are 0 too (a recurrent model such as Mamba);
 * experts used not above the experts; a hidden size that splits
 * into the heads when no head dimension is given.  Reads the fields as the
 * source gave them, before model_finish fills defaults.  name: the file
 * ("cannot read 'NAME': ..."), NULL for explicit numbers.
 */
int model_check_shape(const model_desc *m, bool kv_given, const char *name, gw_error *err);

/* Allocate the per-layer byte arrays (zeroed) for n layers. */
void model_alloc_layer_bytes(model_desc *m, uint32_t n);
/*
 * Mark sliding-window layers: period 0 = none (window ignored), 1 = every
 * layer, p >= 2 = every p-th layer is global and the others slide
 * (llama.cpp's set_swa_pattern: layer il slides when il % p < p - 1).
 * Needs m->n_layers.
 */
void model_set_swa(model_desc *m, uint32_t window, uint32_t period);
/*
 * Parameters implied by the architecture fields (embeddings, attention
 * q/k/v/o with the real head dims, gated MLP or experts + router, two
 * norms per layer, final norm, untied lm_head).  *active: per token.
 */
double model_shape_params(const model_desc *m, double *active);
/* Last path component without the extension (malloc'd). */
char *model_base_name(const char *path);
/* Replace m->name (frees the old one). */
void model_set_name(model_desc *m, const char *name);


#endif

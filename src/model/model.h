/*
 * model: what the planner knows about a model, from a catalog entry, a
 * GGUF file, safetensors (one file or an indexed directory), a Hugging
 * Face config.json, or explicit numbers.  Readers touch headers only.
 */
#ifndef GW_MODEL_H
#define GW_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef enum {
	MODEL_SRC_CATALOG,
	MODEL_SRC_GGUF,
	MODEL_SRC_SAFETENSORS,
	MODEL_SRC_CONFIG,
	MODEL_SRC_EXPLICIT,
} model_source;

/* Where a model named by name was found (model_load, in this order). */
typedef enum {
	MODEL_STORE_NONE,     /* explicit numbers */
	MODEL_STORE_PATH,     /* a file or folder the user named */
	MODEL_STORE_OLLAMA,   /* Ollama's store: a manifest's model blob */
	MODEL_STORE_HF_CACHE, /* the Hugging Face cache: a snapshot */
	MODEL_STORE_LMSTUDIO, /* LM Studio's models folder */
	MODEL_STORE_HUB,      /* the Hugging Face Hub (model_remote_resolve) */
	MODEL_STORE_REGISTRY, /* Ollama's registry (model_remote_resolve) */
	MODEL_STORE_CATALOG,  /* data/models.tsv */
} model_store;

/* What the store said besides the file: owned strings, NULL when absent. */
typedef struct model_origin {
	model_store store;
	char *ref;             /* the name as the store knows it: "qwen3:14b", "Qwen/Qwen3-8B" */
	char *root;            /* the store's folder (or the endpoint's URL) */
	char *revision;        /* HF snapshot commit, Ollama config digest */
	char *projector;       /* a vision projector file (Ollama projector layer, mmproj*.gguf) */
	uint64_t projector_bytes;
	uint64_t file_bytes;   /* bytes on disk of the model file (0: a folder or not read) */
	uint64_t num_ctx;      /* Ollama's params num_ctx (the Modelfile's PARAMETER); 0 none */
	bool has_num_gpu;      /* Ollama's params set num_gpu (layers on the GPU): */
	uint32_t num_gpu;
	char *note;            /* a line the store adds ("offline: the catalog's answer") */
	/* the Hub and Ollama's registry (model_remote_resolve): */
	char *read;            /* what was read: "config.json + 2 safetensors headers" */
	uint64_t read_bytes;   /* bytes received over the network by this run */
	uint32_t requests;     /* HTTP requests this run (0: all from the cache) */
} model_origin;

/* Bytes of one tensor group, as stored (exact when read from a file). */
typedef struct model_tensor_group {
	uint64_t bytes;
	uint64_t params;
} model_tensor_group;

typedef struct model_desc {
	char *name;            /* display name */
	char *path;            /* file or directory; NULL for catalog/explicit */
	char *arch;            /* llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3 ... */
	model_source source;

	uint32_t n_layers, hidden, n_heads, n_kv_heads;
	uint32_t head_dim_k, head_dim_v; /* real head dims (not hidden/heads) */
	uint32_t ffn, vocab;
	uint32_t n_experts, n_experts_used, expert_ffn;
	uint32_t swa_window;   /* 0: no sliding-window layers */
	bool *layer_swa;       /* n_layers flags when swa_window > 0, else NULL */
	uint32_t *layer_kv_heads; /* per-layer KV heads when they vary, else NULL */
	uint64_t ctx_train;
	bool tied_embeddings;

	/* MLA (DeepSeek-V2/V3, Kimi K2): the cache holds the compressed latent
	 * only, K of head_dim_k x n_kv_heads per token and no V (llama.cpp
	 * hparams.is_mla(): GGUF key_length_mla / value_length_mla present);
	 * the attention computes with mla_head_dim_k/_v per head. */
	bool mla;
	uint32_t mla_head_dim_k, mla_head_dim_v;
	/* Graph details llama.cpp reads from GGUF (0: not given): the query
	 * LoRA rank (MLA), rotary dimensions, shared experts, leading dense
	 * blocks of a MoE, the router's gating function (1 softmax, 2 sigmoid)
	 * and whether the chosen experts' weights are renormalised. */
	uint32_t q_lora_rank, n_rot, n_expert_shared, n_dense_lead, expert_gating;
	bool expert_weights_norm;
	/* Recurrent state (Mamba, Mamba-2, hybrids): the layers with no KV
	 * heads hold a conv state and an SSM state per sequence instead of a
	 * KV cache (GGUF ssm.* keys). */
	bool recurrent;
	uint32_t ssm_conv, ssm_inner, ssm_state, ssm_groups, ssm_dt_rank;
	/* NextN / multi-token-prediction blocks at the end of block_count that
	 * llama.cpp does not load for plain generation (nextn_predict_layers);
	 * n_layers above excludes them. */
	uint32_t n_nextn;

	double params_total;   /* parameters */
	double params_active;  /* per token (MoE); = total for dense */

	/* Exact storage, when read from a file (has_tensors); else estimated by plan/. */
	bool has_tensors;
	char *default_quant;   /* catalog: the weight format people run it in (NULL: q4_k_m) */
	char *file_type;       /* "Q4_K_M", "BF16" ... or NULL */
	uint64_t *layer_bytes; /* n_layers: all tensors named blk.N.* */
	uint64_t *layer_expert_bytes; /* n_layers: MoE expert tensors within blk.N (subset) */
	uint64_t embd_bytes;   /* token_embd (stays in host RAM under llama.cpp) */
	uint64_t output_bytes; /* output.weight + output_norm (or 0 when tied) */
	uint64_t other_bytes;  /* every other tensor */
	uint64_t total_bytes;  /* sum of all tensor data */
	uint64_t n_tensors;
	/* safetensors: bytes by dtype ("BF16", "F32", "I8"...), NULL-terminated names */
	char **dtype_names;
	uint64_t *dtype_bytes;
	size_t n_dtypes;

	/* Which repeating blocks are MoE (llama.cpp n_moe_layer_step): with
	 * n_experts, block il is MoE when il >= n_dense_lead and (il + 1) %
	 * moe_step == 0 (moe_step 0 or 1: every block); the others have a
	 * dense FFN of width ffn (Llama 4 Maverick: every other block).
	 * Every MoE block also holds always-active shared experts,
	 * shared_expert_ffn wide in all (ffn_*_shexp; 0 none), which stay
	 * with their layer under --n-cpu-moe.  See model_layer_moe(). */
	uint32_t moe_step;
	uint32_t shared_expert_ffn;

	/* ---- the layer taxonomy (src/model/layers.c) ----
	 * What the file says, as llama.cpp's loaders read it: the per-layer
	 * FFN widths when feed_forward_length is an array (0: no FFN, as in
	 * Nemotron-H's attention and Mamba layers), the recurrent-layer flags
	 * (attention.recurrent_layers) or the full-attention interval, the
	 * number of trailing layers that reuse an earlier layer's KV
	 * (attention.shared_kv_layers), the sliding layers' own head sizes
	 * (attention.key_length_swa / value_length_swa) and the sparse
	 * attention indexer's key length (attention.indexer.key_length), head
	 * count and top-k (attention.indexer.head_count / top_k). */
	uint32_t *layer_ffn;
	bool *layer_recr_given;
	uint32_t full_attn_interval;
	uint32_t n_shared_kv_layers;
	uint32_t head_dim_k_swa, head_dim_v_swa;
	uint32_t indexer_key_len, indexer_heads, indexer_top_k;
	/* What llama.cpp makes of it (model_layers_fill, one rule per
	 * architecture): per layer MODEL_L_* bits; kv_from_start > 0: layers
	 * from there on read an earlier layer's cache and hold none. */
	uint8_t *layer_mix;
	uint32_t kv_from_start;
	uint8_t mixer;          /* MODEL_MIX_* of the recurrent layers */
	bool ffn_ungated;       /* up -> activation -> down, no gate (StarCoder2) */
	bool expert_select_bias; /* the file has exp_probs_b: experts chosen on probabilities + a bias */
	bool expert_ungated;     /* the file has ffn_up_exps but no ffn_gate_exps: up -> activation -> down */
	/* Gemma 4: embedding_length_per_layer_input, and the layers whose
	 * file has attn_k but no attn_v (V is the K projection itself,
	 * gemma4.cpp's use_alternative_attention); NULL: every layer has V */
	uint32_t embd_per_layer;
	bool *layer_v_from_k;
	const char *layer_rule; /* the llama.cpp source of the rule applied */
	model_origin origin;    /* which store answered (model_load) */
} model_desc;

/* Bits of model_desc.layer_mix. */
enum {
	MODEL_L_KV = 1,   /* the layer keeps its own KV cache */
	MODEL_L_RS = 2,   /* the layer keeps a recurrent-state row per sequence */
	MODEL_L_FFN = 4,  /* the layer has a feed-forward (dense or MoE) */
	MODEL_L_IDX = 8,  /* the layer keeps an indexer-key cache (DeepSeek-V3.2) */
};
/* Recurrent mixers. */
enum { MODEL_MIX_NONE, MODEL_MIX_MAMBA1, MODEL_MIX_MAMBA2, MODEL_MIX_GDN, MODEL_MIX_SHORTCONV };

/* Explicit numbers (--params 13b --layers 40 ...); 0 = not given. */
typedef struct model_numbers {
	double params;
	uint32_t layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
	uint64_t ctx;
} model_numbers;

/*
 * Resolve a model argument: an existing path (GGUF file, safetensors file
 * or directory, config.json) or a catalog name/alias.  Explicit numbers
 * fill and override fields, and alone (name NULL) describe a model.
 * Returns 0, or a negative code with err naming the file and the problem.
 */
int model_load(const char *name, const model_numbers *nums, model_desc *m, gw_error *err);
void model_release(model_desc *m);

/* ---- the stores of installed models (src/model/store.c) ---- */

/* A model found in a local store: the file or folder the readers open. */
typedef struct model_found {
	char *path;
	model_origin origin;
} model_found;

/*
 * Look name up in Ollama's store ("qwen3:14b", "user/model:tag",
 * "hf.co/org/repo:Q4_K_M"), then the Hugging Face cache ("ORG/NAME",
 * "ORG/NAME-GGUF:QUANT"), then LM Studio's folders ("PUBLISHER/REPO[:QUANT]").
 * Returns 0 with f filled (release with model_found_release), 1 when no
 * store has it, or a negative code when one has it broken (a manifest
 * naming a missing blob, refs/main naming a missing snapshot, a blob of
 * the wrong size) with err saying which.
 */
int model_store_find(const char *name, model_found *f, gw_error *err);
/* The same in one store only. */
int model_store_find_in(model_store s, const char *name, model_found *f, gw_error *err);
void model_found_release(model_found *f);
void model_origin_release(model_origin *o);
/* "ollama", "hf-cache", "lmstudio", "hub", "catalog" ... (JSON values) */
const char *model_store_name(model_store s);

/* One installed model, as `list models --installed` shows it. */
typedef struct model_installed {
	model_store store;
	char *name;     /* the name that resolves to it */
	char *path;     /* NULL: broken (its manifest or snapshot points nowhere) */
	uint64_t bytes; /* exact bytes on disk (model + projector; a snapshot's files) */
	char *revision;
} model_installed;
/* Every model of every store, by store then name. */
int model_store_list(model_installed **out, size_t *n);
void model_installed_free(model_installed *v, size_t n);

/*
 * The hook for the Hugging Face Hub and Ollama's registry
 * (src/model/remote.c), asked after the local stores and before the
 * catalog.  Returns 0 with m filled (m->origin.store MODEL_STORE_HUB or
 * MODEL_STORE_REGISTRY), 1 when it does not answer (not a remote name,
 * offline: the catalog answers; it may leave a note in *note, malloc'd,
 * which the catalog's answer carries), or a negative code with err set.
 */
int model_remote_resolve(const char *name, model_desc *m, char **note, gw_error *err);

/* The individual readers (used by model_load, tests and fuzzers). */
int gguf_read(const char *path, model_desc *m, gw_error *err);
int gguf_read_mem(const uint8_t *buf, size_t len, uint64_t file_size, model_desc *m, gw_error *err);
/*
 * A GGUF file read from its start through grow (a file on the Hugging Face
 * Hub or a registry, read by HTTP Range): grow(ctx, need, &buf, &len, err)
 * makes buf hold at least the file's first need bytes (buf and len
 * updated; the caller owns buf) or fails with err set.  The header is
 * parsed exactly as gguf_read parses a file of file_size bytes; name is the
 * file's name in messages.
 */
typedef int (*gguf_grow_fn)(void *ctx, uint64_t need, const uint8_t **buf, size_t *len, gw_error *err);
int gguf_read_grow(const char *name, uint64_t file_size, gguf_grow_fn grow, void *ctx, model_desc *m, gw_error *err);
int safetensors_read(const char *path, model_desc *m, gw_error *err);
int safetensors_read_mem(const uint8_t *buf, size_t len, uint64_t file_size, model_desc *m, gw_error *err);
int hfconfig_read(const char *path, model_desc *m, gw_error *err);
/* A config.json's text; name: the file in messages. */
int hfconfig_read_text(const char *text, size_t len, const char *name, model_desc *m, gw_error *err);
/* A safetensors file known by its first len bytes (the 8-byte length and
 * the JSON header, at least) and its size: a file on the Hub. */
typedef struct safetensors_head {
	const char *name; /* file name, no directory */
	const uint8_t *buf;
	size_t len;
	uint64_t file_size;
} safetensors_head;
/*
 * A safetensors model from header bytes already read: parsed exactly as
 * safetensors_read parses a directory that holds config.json (config, NULL
 * when absent), model.safetensors.index.json (index, NULL: every file in
 * name order) and the files.  display names the directory in messages and
 * becomes m->name.
 */
int safetensors_read_heads(const char *display, const char *config, size_t config_len, const char *index,
			   size_t index_len, const safetensors_head *files, size_t n, model_desc *m, gw_error *err);
int hfconfig_read_mem(const char *text, size_t len, model_desc *m, gw_error *err);

/*
 * ggml tensor types (the GGUF type ids): name, weights per block and bytes
 * per block.  False for an unknown or removed id.
 */
bool gguf_type_info(int type, const char **name, uint32_t *block, uint32_t *bytes);
/* "Q4_K_M" for general.file_type 15; NULL when unknown. */
const char *gguf_file_type_name(uint32_t ftype);

/* Fill derived fields (head dims, active params, parameter count estimate). */
void model_finish(model_desc *m);
/* Is block il a MoE block (routed experts), rather than a dense FFN? */
bool model_layer_moe(const model_desc *m, uint32_t il);
/* Does layer il hold a recurrent state (Mamba, gated delta-net, short
 * conv; Falcon-H1's layers hold a KV cache too)? */
bool model_layer_recurrent(const model_desc *m, uint32_t il);
/* Does layer il keep a KV cache of its own? */
bool model_layer_has_kv(const model_desc *m, uint32_t il);
/* Does layer il keep an indexer-key cache (sparse attention)? */
bool model_layer_has_idx(const model_desc *m, uint32_t il);
/* Layer il's key and value head sizes (sliding layers may have their own). */
uint32_t model_layer_head_k(const model_desc *m, uint32_t il);
uint32_t model_layer_head_v(const model_desc *m, uint32_t il);
uint32_t model_layer_kv_heads(const model_desc *m, uint32_t il);
/* Fill layer_mix from the fields read (called by model_finish). */
void model_layers_fill(model_desc *m);
/* The rule's name when the architecture has one of its own, else NULL. */
const char *model_layers_rule(const char *arch);
/* Sliding-window layers every `period` layers; dense_first: layer 0 of each
 * period is the full-attention one (llama.cpp set_swa_pattern). */
void model_set_swa_pattern(model_desc *m, uint32_t window, uint32_t period, bool dense_first);
const char *model_source_name(model_source s);

#endif

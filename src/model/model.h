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
} model_desc;

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

/* The individual readers (used by model_load, tests and fuzzers). */
int gguf_read(const char *path, model_desc *m, gw_error *err);
int gguf_read_mem(const uint8_t *buf, size_t len, uint64_t file_size, model_desc *m, gw_error *err);
int safetensors_read(const char *path, model_desc *m, gw_error *err);
int safetensors_read_mem(const uint8_t *buf, size_t len, uint64_t file_size, model_desc *m, gw_error *err);
int hfconfig_read(const char *path, model_desc *m, gw_error *err);
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
/* Is layer il recurrent (no KV cache, an RS state instead)? */
bool model_layer_recurrent(const model_desc *m, uint32_t il);
/* Sliding-window layers every `period` layers; dense_first: layer 0 of each
 * period is the full-attention one (llama.cpp set_swa_pattern). */
void model_set_swa_pattern(model_desc *m, uint32_t window, uint32_t period, bool dense_first);
const char *model_source_name(model_source s);

#endif

/*
 * kb: the knowledge tables.  TSV files from data/ are embedded at build
 * time; kb_set_data_dir() (--data-dir, GPUWISE_DATA) replaces them at run
 * time.  Every row must carry a non-empty `source` column.
 */
#ifndef GW_KB_H
#define GW_KB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* ---- generic TSV tables ---------------------------------------------- */
typedef struct kb_table {
	char *name;
	size_t ncols, nrows;
	char **header;  /* ncols */
	char **cells;   /* nrows * ncols, never NULL ("" when empty) */
	size_t *lines;  /* nrows: 1-based line of each row in the file */
	char *text;     /* backing store */
} kb_table;

void kb_set_data_dir(const char *dir); /* NULL: embedded (or GPUWISE_DATA) */
const char *kb_data_dir(void);          /* NULL when embedded */
/* The named table ("gpus" for gpus.tsv); cached, owned by kb. */
const kb_table *kb_get_table(const char *name, gw_error *err);
/* Parse TSV text into t (lines starting with '#' are comments). */
int kb_parse_tsv(kb_table *t, const char *name, const char *text, size_t len, gw_error *err);
void kb_table_release(kb_table *t);
long kb_col(const kb_table *t, const char *col); /* -1 when absent */
const char *kb_cell(const kb_table *t, size_t row, long col); /* "" when col < 0 */
void kb_release_all(void); /* free the cache and typed records (valgrind-clean exits) */
/* The name of the i-th embedded table ("gpus"), NULL past the last. */
const char *kb_embedded_name(size_t i);

/*
 * Parse and validate the typed tables (cached until kb_release_all or
 * kb_set_data_dir).  0, or an error whose text names the table, the line
 * and the column ("table 'gpus' line 12, column 'vram_gib': 'x' is not a
 * number").  The lookups below call these themselves and act as if the
 * table were empty when it is broken; commands call kb_load_all() first to
 * report the problem.
 */
int kb_gpus_load(gw_error *err);
int kb_models_load(gw_error *err);
int kb_quants_load(gw_error *err);
int kb_load_all(gw_error *err);
/*
 * Every table the data directory holds parses (kb_load_all calls it); an
 * entry that cannot be read (a FIFO, a symlink loop) is an error, not a
 * table left out.
 */
int kb_data_dir_check(gw_error *err);

/*
 * Key for fuzzy name matching: lower case, vendor and brand words
 * ("nvidia", "geforce", "tesla", "amd", "radeon", "apple") dropped, "80GB"/"80GiB" written "80g", punctuation removed
 * ("NVIDIA GeForce RTX 4090" -> "rtx4090").
 */
void kb_name_key(const char *in, char *out, size_t n);

/* ---- GPUs (data/gpus.tsv) --------------------------------------------- */
typedef struct gpu_spec {
	const char *id;       /* short id users type: "rtx-4090", "h100-sxm" */
	const char *name;     /* "GeForce RTX 4090" */
	const char *aliases;  /* comma-separated extra names */
	const char *vendor;   /* NVIDIA, AMD, Apple, Intel */
	const char *arch;     /* "Ada Lovelace" */
	const char *cc;       /* "8.9"; "" when not CUDA */
	int cc_major, cc_minor; /* -1 when not CUDA */
	int sms, cores;
	uint64_t vram_bytes;
	double bandwidth_gbs;  /* GB/s, decimal */
	double fp32_tflops;
	double fp16_tflops;    /* dense FP16/BF16 tensor, FP32 accumulate; 0: no tensor units */
	double int8_tops;      /* dense INT8 tensor/matrix TOPS; 0: not stated (or none) */
	double fp16_acc16_tflops; /* dense FP16 tensor with FP16 accumulate (GeForce: 2x
				   * fp16_tflops); 0: not stated */
	bool sparse;           /* the vendor also states 2:4-sparse rates (twice these) */
	int tdp_w;
	int pcie_gen;          /* 0 for SoC */
	bool mig;
	bool laptop;
	bool unified_memory;   /* Apple / SoC */
	int year;
	double price_usd;      /* typical new price; 0 unknown */
	double used_price_usd; /* typical used price; 0 unknown */
	const char *price_date;
	const char *source;
} gpu_spec;

size_t kb_gpu_count(void);
const gpu_spec *kb_gpu_at(size_t i);
/*
 * Find a GPU by id, name or alias: case-insensitive, ignoring "NVIDIA",
 * "GeForce" and punctuation ("rtx-4090" = "NVIDIA GeForce RTX 4090").
 * Failing that, a unique match without a leading "rtx"/"gtx" ("4090") or
 * without a memory size equal to the card's ("RTX 3090 24GB").
 * NULL when unknown; then kb_gpu_suggest() names the closest.
 */
const gpu_spec *kb_gpu_find(const char *name);
const gpu_spec *kb_gpu_suggest(const char *name);

/* ---- models (data/models.tsv) ----------------------------------------- */
typedef struct model_spec {
	const char *id;        /* "llama-3.1-8b" */
	const char *name;      /* "Llama 3.1 8B" */
	const char *aliases;   /* "llama3.1:8b,meta-llama/Llama-3.1-8B" */
	const char *arch;      /* llama.cpp architecture: llama, qwen2, qwen3moe, gemma2 ... */
	int layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
	int experts, experts_used, expert_ffn; /* 0 for dense */
	double params_total, params_active;    /* parameters (not billions) */
	int swa_window;        /* 0: none */
	int swa_period;        /* every swa_period-th layer is global; 0 none; 1 all SWA */
	int ctx_train;
	bool tied_embeddings;
	const char *default_quant; /* "" = q4_k_m; "mxfp4_moe" for gpt-oss */
	int kv_latent;         /* MLA: K-only cache width per token (kv_lora_rank + rope); 0 none */
	int moe_step;          /* MoE every moe_step-th block (Llama 4 Maverick: 2); 0 or 1 every block */
	int shared_ffn;        /* shared-expert width in each MoE block; 0 none */
	int dense_lead;        /* leading dense blocks before the MoE ones (DeepSeek-V3: 3) */
	/* recurrent layers (optional column ssm, "conv:inner:state:groups:dt_rank:full_every"):
	 * the SSM / gated delta-net widths as llama.cpp's GGUF keys give them,
	 * and every full_every-th layer attention (0: the common rule) */
	int ssm_conv, ssm_inner, ssm_state, ssm_groups, ssm_dt_rank, full_attn_every;
	const char *released;  /* "2025-04" (optional column; "" unknown) */
	const char *kind;      /* "chat,reasoning": of chat, code, reasoning, vision ("" unknown) */
	const char *source;
} model_spec;

size_t kb_model_count(void);
const model_spec *kb_model_at(size_t i);
/* By id, name or alias (case and punctuation ignored): "llama3.1:8b". */
const model_spec *kb_model_find(const char *name);
const model_spec *kb_model_suggest(const char *name);
/* Is kind (chat, code, reasoning, vision) one of the model's kinds? */
bool kb_model_is_kind(const model_spec *m, const char *kind);

/* ---- quantization types (data/quants.tsv) ----------------------------- */
typedef enum { QK_GGUF_TYPE, QK_GGUF_RECIPE, QK_FORMAT } quant_kind;
typedef struct quant_spec {
	const char *id;        /* "q4_k", "q4_k_m", "awq-int4"; unique per kind */
	const char *name;      /* "Q4_K" */
	const char *aliases;   /* comma-separated */
	quant_kind kind;
	int ggml_type;         /* GGML type id for QK_GGUF_TYPE; -1 otherwise */
	int block_size;        /* weights per block */
	int bytes_per_block;
	double bpw;            /* bits per weight (effective for recipes/formats) */
	const char *base;      /* recipe: base type id ("q4_k"); "" otherwise */
	const char *bump;      /* recipe: type for attn_v/ffn_down on more-bits layers */
	const char *output;    /* recipe: type of output.weight */
	/*
	 * Recipe rules per tensor, "" = base: TYPE[@COND][/ELSE] with COND
	 * more_bits, first2, first4, first8th, first16th or gqa4 (see
	 * docs/data-tables.md).  Recipes carry block_size/bytes_per_block of
	 * their base type.
	 */
	const char *attn_v, *ffn_down, *attn_output;
	const char *source;
} quant_spec;

size_t kb_quant_count(void);
const quant_spec *kb_quant_at(size_t i);
/*
 * By id, name or alias, case and punctuation ignored.  Recipe ids equal
 * type ids where llama.cpp uses one name for both (Q6_K, Q8_0, Q4_0):
 * kb_quant_find prefers the recipe, then the type, then the format.
 */
const quant_spec *kb_quant_find(const char *name);
const quant_spec *kb_quant_find_kind(const char *name, quant_kind kind);
const quant_spec *kb_quant_suggest(const char *name);
const quant_spec *kb_quant_by_ggml_type(int ggml_type);
/* Bytes of n weights of a type or format (rounded up to whole blocks); 0 if q is NULL. */
uint64_t quant_row_bytes(const quant_spec *q, uint64_t n);

#endif

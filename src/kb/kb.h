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
void kb_release_all(void); /* free the cache (valgrind-clean exits) */

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
	double fp16_tflops;    /* dense FP16/BF16 tensor, FP32 accumulate */
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
	const char *source;
} model_spec;

size_t kb_model_count(void);
const model_spec *kb_model_at(size_t i);
const model_spec *kb_model_find(const char *name);
const model_spec *kb_model_suggest(const char *name);

/* ---- quantization types (data/quants.tsv) ----------------------------- */
typedef enum { QK_GGUF_TYPE, QK_GGUF_RECIPE, QK_FORMAT } quant_kind;
typedef struct quant_spec {
	const char *id;        /* "q4_k", "q4_k_m", "awq-int4" */
	const char *name;      /* "Q4_K" */
	quant_kind kind;
	int ggml_type;         /* GGML type id for QK_GGUF_TYPE; -1 otherwise */
	int block_size;        /* weights per block */
	int bytes_per_block;
	double bpw;            /* bits per weight (effective for recipes/formats) */
	const char *base;      /* recipe: base type id ("q4_k"); "" otherwise */
	const char *bump;      /* recipe: type for attn_v/ffn_down on more-bits layers */
	const char *output;    /* recipe: type of output.weight */
	const char *source;
} quant_spec;

size_t kb_quant_count(void);
const quant_spec *kb_quant_at(size_t i);
const quant_spec *kb_quant_find(const char *name);
const quant_spec *kb_quant_by_ggml_type(int ggml_type);
/* Bytes of n weights of a GGUF type (rounded up to whole blocks). */
uint64_t quant_row_bytes(const quant_spec *q, uint64_t n);

#endif

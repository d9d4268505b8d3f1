/*
 * hub: a model by the name it has on the Hugging Face Hub (ORG/NAME,
 * ORG/NAME-GGUF:Q4_K_M) or in Ollama's registry (qwen3:14b), read
 * without downloading it: config.json and each safetensors file's header,
 * or a GGUF file's header, by HTTP Range through model/fetch.c, kept in
 * the user's cache by revision so that the next run asks nothing.
 */
#ifndef GW_MODEL_HUB_H
#define GW_MODEL_HUB_H

#include "model/fetch.h"
#include "model/model.h"

typedef enum { HUB_NONE, HUB_HF, HUB_OLLAMA } hub_kind;

/* A remote model name, parsed. */
typedef struct hub_name {
	hub_kind kind;
	char repo[256];  /* HF: ORG/NAME; Ollama: NAMESPACE/NAME (library/qwen3) */
	char rev[128];   /* HF: revision (main); Ollama: tag (latest) */
	char quant[64];  /* HF: the GGUF quantization after ':' ("" none) */
} hub_name;

/*
 * Is arg a remote name?  ORG/NAME[@REV][:QUANT] (optionally after hf.co/,
 * huggingface.co/ or https://huggingface.co/) is the Hub's; NAME:TAG and
 * ollama.com/NS/NAME[:TAG] are Ollama's registry's.  A name without '/'
 * or ':' is not (it is the catalog's).  Fills out when true.
 */
bool hub_parse(const char *arg, hub_name *out);

typedef struct hub_opts {
	const char *file;          /* --file: this file of the repository */
	net_progress_fn progress;  /* reads over a second (NULL: none) */
	void *progress_ctx;
} hub_opts;

typedef struct hub_result {
	hub_kind kind;
	char name[300];       /* ORG/NAME or NS/NAME:TAG */
	char revision[96];    /* the Hub's commit, or the registry's model blob digest */
	char files[512];      /* what was read: "config.json + 4 safetensors headers", "Q4_K_M.gguf header" */
	char url[512];        /* the model page or the registry manifest */
	uint64_t bytes_read;  /* over the network by this run (0: all from the cache) */
	unsigned requests;    /* HTTP requests this run */
	uint32_t num_ctx;     /* Ollama: the params layer's num_ctx (0: none) */
	uint64_t file_bytes;  /* the model file's size (safetensors: all shards) */
	bool offline;         /* GW_EUNREACH because the network is off (the
			       * variables, no libcurl), not unreachable */
} hub_result;

/*
 * Read the model named arg (hub_parse's forms).  Returns 0 with m and res
 * filled, or a negative code with err set:
 *   GW_EUNREACH  no network (GPUWISE_OFFLINE=1, HF_HUB_OFFLINE=1 for the
 *                Hub, no libcurl, host or proxy unreachable) and nothing
 *                in the cache: the caller may answer from the catalog;
 *   GW_EGONE     no such repository, revision, file or tag (HTTP 404);
 *   GW_EDENIED   gated or private (HTTP 401/403);
 *   GW_ETIMEOUT, GW_ENET  the transfer failed (timeout, truncated reply,
 *                redirect loop, a server that ignores Range);
 *   GW_EINVAL    the name or --file does not pick one model (several GGUF
 *                files and no quantization named);
 *   GW_EFORMAT, GW_ETRUNC ...  the files themselves (as the local readers).
 */
int hub_load(const char *arg, const hub_opts *o, model_desc *m, hub_result *res, gw_error *err);

/*
 * The growing prefix of one remote file, as gguf_read_grow reads it:
 * fetch(ctx, from, to, out, err) appends bytes [from, to) (or fewer only
 * at the end of the file) and sets *size once known.  Exposed for the fuzz
 * target, which feeds it from memory.
 */
typedef int (*hub_fetch_fn)(void *ctx, uint64_t from, uint64_t to, strbuf *out, uint64_t *size, gw_error *err);
typedef struct hub_prefix {
	hub_fetch_fn fetch;
	void *ctx;
	const char *what;     /* the file, in messages */
	strbuf buf;           /* the first buf.len bytes of the file */
	uint64_t size;        /* the file's size (0 until known) */
	uint64_t max;         /* the most the header may take (HUB_MAX_HEADER) */
	uint64_t first;       /* the first request's length */
} hub_prefix;
#define HUB_MAX_HEADER (64ULL << 20)
/* gguf_grow_fn over a hub_prefix (ctx): at least need bytes, doubling. */
int hub_prefix_grow(void *ctx, uint64_t need, const uint8_t **buf, size_t *len, gw_error *err);

/*
 * What model_remote_resolve (src/model/remote.c, model_load's hook) passes
 * to hub_load: --file, and a progress callback (NULL: none).  cmd/plan.c
 * sets them around its model_load and clears them after (NULL, NULL, NULL).
 */
void model_remote_configure(const char *file, net_progress_fn progress, void *progress_ctx);

#endif

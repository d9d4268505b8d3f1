/*
 * fetch: the one network layer of gpuwise.  HTTP GETs (whole small files,
 * or byte ranges of large ones) through libcurl, loaded at run time, for
 * the model resolvers that read the Hugging Face Hub and Ollama's registry
 * (model/hub.c); and the user's cache directory they keep what they read in.
 * Nothing here prints: progress goes to a callback the caller supplies.
 */
#ifndef GW_MODEL_FETCH_H
#define GW_MODEL_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* what: the file being read; done/total: bytes (total 0 when unknown);
 * end: the read is over (clear the line).  Called only once a read has
 * taken more than a second. */
typedef void (*net_progress_fn)(void *ctx, const char *what, uint64_t done_bytes, uint64_t total_bytes, bool end);

typedef struct net_ctx {
	void *lib;               /* the libcurl handle (dlopen) */
	void *easy;              /* one CURL easy handle, reused (keep-alive) */
	void *fn[10];            /* the libcurl functions used */
	long timeout_s;          /* connect timeout and the longest stall */
	char *bearer;            /* token sent to the first host only (HF_TOKEN) */
	net_progress_fn progress;
	void *progress_ctx;
	uint64_t bytes_in;       /* response bytes received, all requests */
	unsigned requests;
} net_ctx;

typedef struct net_resp {
	long status;             /* HTTP status of the last response (after redirects) */
	uint8_t *body;           /* malloc'd, NUL-terminated (len excludes the NUL) */
	size_t len;
	uint64_t range_total;    /* Content-Range's size of the whole file; 0 when absent */
	char commit[96];         /* X-Repo-Commit (the Hub) */
	char error_code[64];     /* X-Error-Code (the Hub: GatedRepo, RepoNotFound ...) */
	char error_msg[240];     /* X-Error-Message */
	char *final_url;         /* the URL that answered, after redirects (malloc'd) */
} net_resp;

/*
 * Load libcurl (GPUWISE_CURL_LIB, else libcurl.so.4, else
 * libcurl-gnutls.so.4) and make a handle; GPUWISE_NET_TIMEOUT (seconds,
 * default 30) sets the timeout.  Fails with GW_EUNREACH and a message when
 * libcurl is absent (or GPUWISE_CURL_LIB=none): no network then.
 */
int net_open(net_ctx *n, gw_error *err);
void net_close(net_ctx *n);

/*
 * GET url (redirects followed, at most 10).  to > from: only bytes
 * [from, to) (a Range request; a server that sends more is stopped: a
 * weights file is never downloaded); else the whole body, at most max
 * bytes.  accept: an Accept header or NULL.  what names the file in
 * messages and progress.  Returns 0 with r filled for any HTTP status (the
 * caller reads r->status), or a negative code: GW_EUNREACH (no network:
 * host or proxy not resolved, connection refused), GW_ETIMEOUT, GW_ENET
 * (truncated or oversized reply, redirect loop, other transport failure).
 */
int net_get(net_ctx *n, const char *url, uint64_t from, uint64_t to, size_t max, const char *accept,
	    const char *what, net_resp *r, gw_error *err);
void net_resp_release(net_resp *r);

/* The cache directory for what the resolvers read: $GPUWISE_CACHE_DIR/hub,
 * else $XDG_CACHE_HOME/gpuwise/hub, else ~/.cache/gpuwise/hub (malloc'd);
 * NULL when none can be named. */
char *net_cache_dir(void);
/* mkdir -p of the directory part of path.  0 or -1 (errno set). */
int net_mkdirs_for(const char *path);
/* Write a whole file atomically (a temporary file, then rename).  0 or -1. */
int net_write_file(const char *path, const void *data, size_t len);

#endif

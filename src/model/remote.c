/*
 * remote.c: model_load's hook for the Hugging Face Hub and Ollama's
 * registry, asked after the local stores and before the catalog.  The
 * reading itself is model/hub.c; this decides what a failure means: with
 * the network off by choice (HF_HUB_OFFLINE, GPUWISE_OFFLINE, no libcurl)
 * or out of reach, the catalog answers a name it knows, carrying the
 * reason as its note; a name the catalog lacks keeps the catalog's own
 * error (with the reason) when the network is off by choice, and is a
 * network failure when a host could not be reached.
 */
#include "model/hub.h"

#include <stdlib.h>
#include <string.h>

#include "kb/kb.h"

static struct {
	const char *file;
	net_progress_fn progress;
	void *progress_ctx;
} opts;

void model_remote_configure(const char *file, net_progress_fn progress, void *progress_ctx)
{
	opts.file = file;
	opts.progress = progress;
	opts.progress_ctx = progress_ctx;
}

int model_remote_resolve(const char *name, model_desc *m, char **note, gw_error *err)
{
	hub_name hn;
	hub_result res;
	hub_opts o = {.file = opts.file, .progress = opts.progress, .progress_ctx = opts.progress_ctx};
	if (!hub_parse(name, &hn))
		return 1;
	int rc = hub_load(name, &o, m, &res, err);
	/* offline or out of reach, or the Hub or registry has no such name (a
	 * 404, or a proxy that answers one) while the catalog knows it: the
	 * catalog answers, with why the network did not */
	bool unreach = rc == GW_EUNREACH && (res.offline || kb_model_find(name));
	bool gone = rc == GW_EGONE && kb_model_find(name);
	if ((unreach || gone) && !opts.file) {
		*note = xstrdup(gw_error_text(err));
		return 1;
	}
	if (rc)
		return rc;
	model_origin *g = &m->origin;
	g->store = res.kind == HUB_HF ? MODEL_STORE_HUB : MODEL_STORE_REGISTRY;
	g->ref = xstrdup(res.name);
	g->root = xstrdup(res.url);
	g->revision = xstrdup(res.revision);
	g->file_bytes = res.file_bytes;
	g->num_ctx = res.num_ctx;
	g->read = xstrdup(res.files);
	g->read_bytes = res.bytes_read;
	g->requests = res.requests;
	return 0;
}

/*
 * libFuzzer target: the Range-grown GGUF reader (model/hub.c's
 * hub_prefix_grow under gguf_read_grow), as plan reads a GGUF on the Hub
 * or in Ollama's registry.  The input is the start of a remote file whose
 * size its last byte stretches by up to 255 MiB of zeros (a header that
 * claims more than it holds reads zeros, as a sparse file would); the
 * "server" answers every range, sometimes short (its byte 5 decides: a
 * truncated reply).  Any crash, leak, hang or sanitizer report is a bug;
 * errors are fine but must say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/hub.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fake_file {
	const uint8_t *data;
	size_t len;
	uint64_t size;
	unsigned short_every; /* every n-th reply is short (0: never) */
	unsigned calls;
} fake_file;

static int fake_fetch(void *ctx, uint64_t from, uint64_t to, strbuf *out, uint64_t *size, gw_error *err)
{
	fake_file *f = ctx;
	*size = f->size;
	if (from >= f->size)
		return 0;
	if (to > f->size)
		to = f->size;
	if (f->short_every && ++f->calls % f->short_every == 0 && to - from > 1)
		to = from + (to - from) / 2; /* a reply shorter than asked */
	for (uint64_t p = from; p < to; p++) {
		char c = p < f->len ? (char)f->data[p] : 0;
		sb_add(out, &c, 1);
	}
	(void)err;
	return 0;
}

/* the cache holds the whole header: a second read must never fetch */
static int no_fetch(void *ctx, uint64_t from, uint64_t to, strbuf *out, uint64_t *size, gw_error *err)
{
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fake_file f = {.data = data, .len = size};
	f.size = size + (size ? (uint64_t)data[size - 1] << 20 : 0);
	f.short_every = size > 5 ? data[5] % 4 : 0;
	/* a small ceiling keeps each input fast; the logic is HUB_MAX_HEADER's */
	hub_prefix p = {.fetch = fake_fetch, .ctx = &f, .what = "fuzz.gguf", .max = 1u << 20, .first = 4096};
	model_desc m;
	gw_error err = {0};
	const uint8_t *b;
	size_t blen;
	int rc = hub_prefix_grow(&p, 4, &b, &blen, &err);
	if (!rc)
		rc = gguf_read_grow("fuzz.gguf", p.size, hub_prefix_grow, &p, &m, &err);
	if (!rc) {
		/* a second run from what was read (plan's cache) parses the same
		 * and asks for nothing more */
		hub_prefix again = {.fetch = no_fetch, .what = "fuzz.gguf", .max = 1u << 20, .first = 4096, .size = p.size};
		model_desc m2;
		sb_add(&again.buf, p.buf.buf, p.buf.len);
		if (gguf_read_grow("fuzz.gguf", again.size, hub_prefix_grow, &again, &m2, &err))
			abort();
		if (m2.total_bytes != m.total_bytes || m2.n_layers != m.n_layers || m2.n_tensors != m.n_tensors)
			abort();
		model_release(&m2);
		model_release(&m);
		sb_release(&again.buf);
	} else if (!err.msg[0] || err.code >= 0) {
		abort(); /* a failure must say why */
	}
	sb_release(&p.buf);
	return 0;
}

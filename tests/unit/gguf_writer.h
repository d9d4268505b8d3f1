/*
 * gguf_writer.h: a small GGUF writer for the tests (header-only, static).
 * Writes real GGUF v2/v3 files: metadata of every value type, tensor
 * infos, alignment padding and zero-filled tensor data made sparse with
 * ftruncate.  Hostile files are built by overriding counts, offsets and
 * raw bytes.  Its type table is its own (from ggml-common.h), so the
 * reader's arithmetic is checked against an independent copy.
 */
#ifndef GW_TEST_GGUF_WRITER_H
#define GW_TEST_GGUF_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	GGW_U8, GGW_I8, GGW_U16, GGW_I16, GGW_U32, GGW_I32, GGW_F32, GGW_BOOL,
	GGW_STRING, GGW_ARRAY, GGW_U64, GGW_I64, GGW_F64
};
enum { GGT_F32 = 0, GGT_F16 = 1, GGT_Q4_0 = 2, GGT_Q8_0 = 8, GGT_Q4_K = 12, GGT_Q6_K = 14, GGT_BF16 = 30,
       GGT_MXFP4 = 39 };

typedef struct ggw_buf {
	uint8_t *p;
	size_t len, cap;
} ggw_buf;

typedef struct ggw {
	uint32_t version;
	uint32_t alignment;
	ggw_buf kv, ti;
	uint64_t n_kv, n_t;
	uint64_t data_len;          /* running, aligned */
	int64_t claim_kv, claim_t;  /* >= 0: write this count instead */
} ggw;

static inline void ggw_put(ggw_buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}
static inline void ggw_u32(ggw_buf *b, uint32_t v)
{
	uint8_t x[4];
	for (int i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	ggw_put(b, x, 4);
}
static inline void ggw_u64(ggw_buf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	ggw_put(b, x, 8);
}
static inline void ggw_str(ggw_buf *b, const char *s)
{
	ggw_u64(b, strlen(s));
	ggw_put(b, s, strlen(s));
}

static inline void ggw_init(ggw *w, uint32_t version)
{
	memset(w, 0, sizeof *w);
	w->version = version;
	w->alignment = 32;
	w->claim_kv = w->claim_t = -1;
}
static inline void ggw_free(ggw *w)
{
	free(w->kv.p);
	free(w->ti.p);
	memset(w, 0, sizeof *w);
}

/* Key and type; the caller appends the value to w->kv. */
static inline void ggw_key(ggw *w, const char *key, uint32_t type)
{
	ggw_str(&w->kv, key);
	ggw_u32(&w->kv, type);
	w->n_kv++;
}
static inline void ggw_kv_str(ggw *w, const char *key, const char *v)
{
	ggw_key(w, key, GGW_STRING);
	ggw_str(&w->kv, v);
}
static inline void ggw_kv_u32(ggw *w, const char *key, uint32_t v)
{
	ggw_key(w, key, GGW_U32);
	ggw_u32(&w->kv, v);
}
static inline void ggw_kv_i32(ggw *w, const char *key, int32_t v)
{
	ggw_key(w, key, GGW_I32);
	ggw_u32(&w->kv, (uint32_t)v);
}
static inline void ggw_kv_u64(ggw *w, const char *key, uint64_t v)
{
	ggw_key(w, key, GGW_U64);
	ggw_u64(&w->kv, v);
}
static inline void ggw_kv_f32(ggw *w, const char *key, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	ggw_key(w, key, GGW_F32);
	ggw_u32(&w->kv, u);
}
static inline void ggw_kv_f64(ggw *w, const char *key, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	ggw_key(w, key, GGW_F64);
	ggw_u64(&w->kv, u);
}
static inline void ggw_kv_bool(ggw *w, const char *key, bool v)
{
	uint8_t b = v;
	ggw_key(w, key, GGW_BOOL);
	ggw_put(&w->kv, &b, 1);
}
static inline void ggw_kv_small(ggw *w, const char *key, uint32_t type, uint64_t v, size_t n)
{
	ggw_key(w, key, type);
	uint8_t x[8];
	for (size_t i = 0; i < n; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	ggw_put(&w->kv, x, n);
}
static inline void ggw_kv_arr_u32(ggw *w, const char *key, const uint32_t *v, size_t n)
{
	ggw_key(w, key, GGW_ARRAY);
	ggw_u32(&w->kv, GGW_U32);
	ggw_u64(&w->kv, n);
	for (size_t i = 0; i < n; i++)
		ggw_u32(&w->kv, v[i]);
}
static inline void ggw_kv_arr_i32(ggw *w, const char *key, const int32_t *v, size_t n)
{
	ggw_key(w, key, GGW_ARRAY);
	ggw_u32(&w->kv, GGW_I32);
	ggw_u64(&w->kv, n);
	for (size_t i = 0; i < n; i++)
		ggw_u32(&w->kv, (uint32_t)v[i]);
}
static inline void ggw_kv_arr_bool(ggw *w, const char *key, const bool *v, size_t n)
{
	ggw_key(w, key, GGW_ARRAY);
	ggw_u32(&w->kv, GGW_BOOL);
	ggw_u64(&w->kv, n);
	for (size_t i = 0; i < n; i++) {
		uint8_t b = v[i];
		ggw_put(&w->kv, &b, 1);
	}
}
static inline void ggw_kv_arr_f32(ggw *w, const char *key, size_t n)
{
	ggw_key(w, key, GGW_ARRAY);
	ggw_u32(&w->kv, GGW_F32);
	ggw_u64(&w->kv, n);
	for (size_t i = 0; i < n; i++)
		ggw_u32(&w->kv, 0x3f800000u);
}
/* n strings "tok0", "tok1" ... (a vocabulary) */
static inline void ggw_kv_tokens(ggw *w, const char *key, size_t n)
{
	char s[32];
	ggw_key(w, key, GGW_ARRAY);
	ggw_u32(&w->kv, GGW_STRING);
	ggw_u64(&w->kv, n);
	for (size_t i = 0; i < n; i++) {
		snprintf(s, sizeof s, "tok%zu", i);
		ggw_str(&w->kv, s);
	}
}
/* An array of n arrays of m uint8 each (nested). */
static inline void ggw_kv_nested(ggw *w, const char *key, size_t n, size_t m)
{
	ggw_key(w, key, GGW_ARRAY);
	ggw_u32(&w->kv, GGW_ARRAY);
	ggw_u64(&w->kv, n);
	for (size_t i = 0; i < n; i++) {
		ggw_u32(&w->kv, GGW_U8);
		ggw_u64(&w->kv, m);
		for (size_t j = 0; j < m; j++) {
			uint8_t b = (uint8_t)j;
			ggw_put(&w->kv, &b, 1);
		}
	}
}

/* Bytes of a tensor: weights per block and bytes per block from ggml-common.h. */
static inline uint64_t ggw_nbytes(uint32_t type, const uint64_t *dims, uint32_t nd)
{
	uint64_t nel = 1;
	for (uint32_t i = 0; i < nd; i++)
		nel *= dims[i];
	switch (type) {
	case GGT_F32: return nel * 4;
	case GGT_F16: case GGT_BF16: return nel * 2;
	case GGT_Q4_0: return nel / 32 * 18;
	case GGT_Q8_0: return nel / 32 * 34;
	case GGT_Q4_K: return nel / 256 * 144;
	case GGT_Q6_K: return nel / 256 * 210;
	case GGT_MXFP4: return nel / 32 * 17;
	}
	abort();
}

/* A tensor info at an explicit offset (hostile tests). */
static inline void ggw_tensor_at(ggw *w, const char *name, uint32_t type, uint32_t nd, const uint64_t *dims, uint64_t off)
{
	ggw_str(&w->ti, name);
	ggw_u32(&w->ti, nd);
	for (uint32_t i = 0; i < nd; i++)
		ggw_u64(&w->ti, dims[i]);
	ggw_u32(&w->ti, type);
	ggw_u64(&w->ti, off);
	w->n_t++;
}
/* A tensor placed after the previous one; returns its bytes. */
static inline uint64_t ggw_tensor(ggw *w, const char *name, uint32_t type, uint32_t nd, const uint64_t *dims)
{
	uint64_t b = ggw_nbytes(type, dims, nd);
	ggw_tensor_at(w, name, type, nd, dims, w->data_len);
	w->data_len += (b + w->alignment - 1) / w->alignment * w->alignment;
	return b;
}
static inline uint64_t ggw_tensor2(ggw *w, const char *name, uint32_t type, uint64_t d0, uint64_t d1)
{
	uint64_t d[2] = {d0, d1};
	return ggw_tensor(w, name, type, d1 ? 2 : 1, d);
}

/* The header bytes (magic .. padding); caller frees. */
static inline uint8_t *ggw_header(const ggw *w, size_t *len)
{
	ggw_buf b = {0};
	ggw_put(&b, "GGUF", 4);
	ggw_u32(&b, w->version);
	ggw_u64(&b, w->claim_t >= 0 ? (uint64_t)w->claim_t : w->n_t);
	ggw_u64(&b, w->claim_kv >= 0 ? (uint64_t)w->claim_kv : w->n_kv);
	ggw_put(&b, w->kv.p, w->kv.len);
	ggw_put(&b, w->ti.p, w->ti.len);
	while (b.len % w->alignment)
		ggw_put(&b, "", 1);
	*len = b.len;
	return b.p;
}

/*
 * Write the file: header, then data_len - cut bytes of zeros as a hole
 * (ftruncate), so a header describing 40 GB costs nothing on disk.
 * Returns the file size, 0 on failure.
 */
static inline uint64_t ggw_write(const ggw *w, const char *path, uint64_t cut)
{
	size_t hl;
	uint8_t *h = ggw_header(w, &hl);
	FILE *f = fopen(path, "wb");
	uint64_t size = 0;
	if (!f)
		goto out;
	if (fwrite(h, 1, hl, f) != hl) {
		fclose(f);
		goto out;
	}
	fflush(f);
	size = hl + (w->data_len > cut ? w->data_len - cut : 0);
	if (ftruncate(fileno(f), (off_t)size))
		size = 0;
	fclose(f);
out:
	free(h);
	return size;
}

#endif

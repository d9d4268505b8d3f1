/*
 * gguf.c: the GGUF reader (versions 2 and 3, little-endian).  Reads the
 * header only -- metadata and tensor infos -- through a small sliding
 * window (pread), so a file whose header describes 40 GB of tensors is
 * planned without touching its data.  Every count and length from the
 * file is checked against the bytes that remain before it is used, and no
 * allocation is sized by an unchecked number.
 *
 * Format: ggml-org/ggml docs/gguf.md and ggml/src/gguf.cpp (llama.cpp).
 */
#include "model/internal.h"
#include "util/i18n.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- ggml types and file types ----------------------------------------- */

/*
 * Block sizes and bytes per block: ggml/src/ggml-common.h and the
 * type_traits table in ggml/src/ggml.c (llama.cpp); ids from enum
 * ggml_type in ggml/include/ggml.h (also gguf-py GGMLQuantizationType).
 * Ids 4, 5, 31-33 and 36-38 were removed from ggml and are refused.
 * Q8_1 is 36 bytes (static_assert in ggml-common.h; gguf-py 0.19 says 40).
 */
static const struct ggml_type_row {
	int id;
	const char *name;
	uint32_t block, bytes;
} ggml_types[] = {
	{0, "F32", 1, 4},        {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
	{3, "Q4_1", 32, 20},     {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
	{8, "Q8_0", 32, 34},     {9, "Q8_1", 32, 36},      {10, "Q2_K", 256, 84},
	{11, "Q3_K", 256, 110},  {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
	{14, "Q6_K", 256, 210},  {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
	{17, "IQ2_XS", 256, 74}, {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
	{20, "IQ4_NL", 32, 18},  {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
	{23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},        {25, "I16", 1, 2},
	{26, "I32", 1, 4},       {27, "I64", 1, 8},        {28, "F64", 1, 8},
	{29, "IQ1_M", 256, 56},  {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
	{35, "TQ2_0", 256, 66},  {39, "MXFP4", 32, 17},    {40, "NVFP4", 64, 36},
	{41, "Q1_0", 128, 18},
};

bool gguf_type_info(int type, const char **name, uint32_t *block, uint32_t *bytes)
{
	for (size_t i = 0; i < sizeof ggml_types / sizeof ggml_types[0]; i++) {
		if (ggml_types[i].id != type)
			continue;
		if (name)
			*name = ggml_types[i].name;
		if (block)
			*block = ggml_types[i].block;
		if (bytes)
			*bytes = ggml_types[i].bytes;
		return true;
	}
	return false;
}

/* general.file_type: enum llama_ftype in llama.cpp include/llama.h. */
static const char *const file_types[] = {
	[0] = "F32",       [1] = "F16",      [2] = "Q4_0",     [3] = "Q4_1",
	[7] = "Q8_0",      [8] = "Q5_0",     [9] = "Q5_1",     [10] = "Q2_K",
	[11] = "Q3_K_S",   [12] = "Q3_K_M",  [13] = "Q3_K_L",  [14] = "Q4_K_S",
	[15] = "Q4_K_M",   [16] = "Q5_K_S",  [17] = "Q5_K_M",  [18] = "Q6_K",
	[19] = "IQ2_XXS",  [20] = "IQ2_XS",  [21] = "Q2_K_S",  [22] = "IQ3_XS",
	[23] = "IQ3_XXS",  [24] = "IQ1_S",   [25] = "IQ4_NL",  [26] = "IQ3_S",
	[27] = "IQ3_M",    [28] = "IQ2_S",   [29] = "IQ2_M",   [30] = "IQ4_XS",
	[31] = "IQ1_M",    [32] = "BF16",    [36] = "TQ1_0",   [37] = "TQ2_0",
	[38] = "MXFP4_MOE", [39] = "NVFP4",  [40] = "Q1_0",
};

const char *gguf_file_type_name(uint32_t ftype)
{
	if (ftype < sizeof file_types / sizeof file_types[0])
		return file_types[ftype];
	return NULL;
}

/* ---- limits ------------------------------------------------------------ */

/* Far above any real model (DeepSeek-V3: ~1,100 tensors; big vocabularies
 * hold a few hundred thousand strings inside one KV pair). */
#define GG_MAX_TENSORS (1u << 20)
#define GG_MAX_KV (1u << 20)
#define GG_MAX_KEY 65535u       /* gguf.md: keys are at most 2^16-1 bytes */
#define GG_MAX_NAME 64u         /* GGML_MAX_NAME, including the NUL */
#define GG_MAX_DIMS 4u          /* GGML_MAX_DIMS */
#define GG_MAX_DEPTH 8          /* nested arrays */
#define GG_KEEP_STR 4096u       /* longest string value we keep */
#define GG_WINDOW (1u << 20)    /* read window */

enum {
	GT_U8, GT_I8, GT_U16, GT_I16, GT_U32, GT_I32, GT_F32, GT_BOOL,
	GT_STRING, GT_ARRAY, GT_U64, GT_I64, GT_F64, GT_COUNT
};
static const uint8_t gt_size[GT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const char *const gt_name[GT_COUNT] = {"uint8", "int8", "uint16", "int16", "uint32",
	"int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"};

/* ---- reader: a window over a buffer or a file -------------------------- */

typedef struct gg_reader {
	const char *name;
	const uint8_t *mem; /* memory mode */
	size_t mem_len;
	int fd;             /* file mode when >= 0 */
	uint8_t *win;
	uint64_t win_off;
	size_t win_len;
	uint64_t file_size;
	uint64_t pos;
	gw_error *err;
	/* grow mode (a remote file): mem holds a prefix that grow extends */
	gguf_grow_fn grow;
	void *grow_ctx;
} gg_reader;

static int rd_fail(gg_reader *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int rd_fail(gg_reader *r, int code, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return gw_fail(r->err, code, "cannot read '%s': %s", r->name, what);
}

static uint64_t rd_left(const gg_reader *r)
{
	return r->pos < r->file_size ? r->file_size - r->pos : 0;
}

/*
 * Bytes that can still be read: in memory mode only the buffer holds the
 * header, so counts are bounded by it (no large allocation for a short
 * buffer that claims a large file).
 */
static uint64_t rd_avail(const gg_reader *r)
{
	uint64_t end = r->fd < 0 && !r->grow && r->mem_len < r->file_size ? r->mem_len : r->file_size;
	return r->pos < end ? end - r->pos : 0;
}

/* Point *p at the next n (<= GG_WINDOW) bytes and advance; valid until the next call. */
static int rd_get(gg_reader *r, size_t n, const uint8_t **p, const char *what)
{
	if (n > rd_left(r))
		return rd_fail(r, GW_ETRUNC, "truncated header: %s at offset %llu needs %zu bytes, the file has %llu",
			       what, (unsigned long long)r->pos, n, (unsigned long long)r->file_size);
	if (r->fd < 0) {
		if (r->pos + n > r->mem_len && r->grow) {
			int rc = r->grow(r->grow_ctx, r->pos + n, &r->mem, &r->mem_len, r->err);
			if (rc)
				return rc;
		}
		if (r->pos + n > r->mem_len)
			return rd_fail(r, GW_ETRUNC, "header extends beyond the %zu bytes read (%s at offset %llu)",
				       r->mem_len, what, (unsigned long long)r->pos);
		*p = r->mem + r->pos;
		r->pos += n;
		return 0;
	}
	if (r->pos < r->win_off || r->pos + n > r->win_off + r->win_len) {
		uint64_t want = r->file_size - r->pos;
		size_t len = want < GG_WINDOW ? (size_t)want : GG_WINDOW;
		size_t got = 0;
		while (got < len) {
			ssize_t k = pread(r->fd, r->win + got, len - got, (off_t)(r->pos + got));
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return rd_fail(r, GW_EIO, "%s", strerror(errno));
			if (k == 0)
				break;
			got += (size_t)k;
		}
		r->win_off = r->pos;
		r->win_len = got;
		if (got < n)
			return rd_fail(r, GW_ETRUNC, "file shrank while reading (%s at offset %llu)", what,
				       (unsigned long long)r->pos);
	}
	*p = r->win + (r->pos - r->win_off);
	r->pos += n;
	return 0;
}

static int rd_skip(gg_reader *r, uint64_t n, const char *what)
{
	if (n > rd_left(r))
		return rd_fail(r, GW_ETRUNC, "truncated header: %s at offset %llu needs %llu bytes, the file has %llu",
			       what, (unsigned long long)r->pos, (unsigned long long)n,
			       (unsigned long long)r->file_size);
	r->pos += n;
	return 0;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int rd_u32(gg_reader *r, uint32_t *v, const char *what)
{
	const uint8_t *p;
	int rc = rd_get(r, 4, &p, what);
	if (!rc)
		*v = (uint32_t)le(p, 4);
	return rc;
}

static int rd_u64(gg_reader *r, uint64_t *v, const char *what)
{
	const uint8_t *p;
	int rc = rd_get(r, 8, &p, what);
	if (!rc)
		*v = le(p, 8);
	return rc;
}

/*
 * A string: its length, then (when keep and the length is at most max)
 * its bytes copied into out (NUL-terminated, out has max+1 bytes);
 * *kept says whether it was copied.  Longer strings are skipped.
 */
static int rd_string(gg_reader *r, char *out, size_t max, bool *kept, const char *what)
{
	uint64_t len;
	int rc = rd_u64(r, &len, what);
	if (rc)
		return rc;
	if (len > rd_left(r))
		return rd_fail(r, GW_EFORMAT, "%s length %llu at offset %llu runs past the end of the file", what,
			       (unsigned long long)len, (unsigned long long)(r->pos - 8));
	if (kept)
		*kept = false;
	if (!out || len > max)
		return rd_skip(r, len, what);
	const uint8_t *p;
	if ((rc = rd_get(r, (size_t)len, &p, what)))
		return rc;
	memcpy(out, p, (size_t)len);
	out[len] = '\0';
	if (kept)
		*kept = true;
	return 0;
}

/* ---- metadata we keep -------------------------------------------------- */

/* ARCH.<suffix> keys the planner needs; values may be per-layer arrays. */
enum {
	K_BLOCKS, K_EMBD, K_FFN, K_CTX, K_HEADS, K_KV_HEADS, K_KEY_LEN, K_VAL_LEN,
	K_EXPERTS, K_EXPERTS_USED, K_EXPERT_FFN, K_SWA, K_SWA_PATTERN, K_VOCAB,
	K_KEY_LEN_MLA, K_VAL_LEN_MLA, K_SSM_CONV, K_SSM_INNER, K_SSM_STATE, K_SSM_DT, K_SSM_GROUPS,
	K_NEXTN, K_Q_LORA, K_ROPE_DIMS, K_EXPERT_SHARED, K_DENSE_LEAD, K_GATING, K_WEIGHTS_NORM, K_SHORTCONV,
	K_MOE_STEP, K_SHEXP_FFN, K_RECR_LAYERS, K_FULL_ATTN, K_SHARED_KV, K_KEY_LEN_SWA, K_VAL_LEN_SWA,
	K_IDX_KEY_LEN, K_IDX_HEADS, K_IDX_TOP_K, K_EMBD_PER_LAYER, K_NARCH
};
static const char *const arch_keys[K_NARCH] = {
	"block_count", "embedding_length", "feed_forward_length", "context_length",
	"attention.head_count", "attention.head_count_kv", "attention.key_length",
	"attention.value_length", "expert_count", "expert_used_count",
	"expert_feed_forward_length", "attention.sliding_window",
	"attention.sliding_window_pattern", "vocab_size",
	"attention.key_length_mla", "attention.value_length_mla", "ssm.conv_kernel", "ssm.inner_size",
	"ssm.state_size", "ssm.time_step_rank", "ssm.group_count", "nextn_predict_layers",
	"attention.q_lora_rank", "rope.dimension_count", "expert_shared_count", "leading_dense_block_count",
	"expert_gating_func", "expert_weights_norm", "shortconv.l_cache",
	"interleave_moe_layer_step", "expert_shared_feed_forward_length",
	"attention.recurrent_layers", "full_attention_interval", "attention.shared_kv_layers",
	"attention.key_length_swa", "attention.value_length_swa", "attention.indexer.key_length",
	"attention.indexer.head_count", "attention.indexer.top_k", "embedding_length_per_layer_input",
};

typedef struct gg_slot {
	bool set;
	char prefix[65];  /* the ARCH part of the key */
	uint64_t val;     /* scalar, or max over the array */
	uint32_t *arr;    /* per-layer values when the key held an array */
	uint32_t n;
} gg_slot;

typedef struct gg_meta {
	char arch[65];
	char name[GG_KEEP_STR + 1];
	bool has_arch, has_name, has_ftype;
	uint32_t ftype;
	uint32_t alignment;
	uint64_t n_tokens;
	bool has_tokens;
	gg_slot slot[K_NARCH];
} gg_meta;

static void meta_release(gg_meta *g)
{
	for (int i = 0; i < K_NARCH; i++)
		free(g->slot[i].arr);
}

static bool gt_is_int(uint32_t t)
{
	return t == GT_U8 || t == GT_I8 || t == GT_U16 || t == GT_I16 || t == GT_U32 || t == GT_I32 ||
	       t == GT_U64 || t == GT_I64 || t == GT_BOOL;
}

/* An integer value of type t (already known to be an integer type). */
static int rd_int(gg_reader *r, uint32_t t, uint64_t *v, bool *neg, const char *key)
{
	const uint8_t *p;
	unsigned n = gt_size[t];
	int rc = rd_get(r, n, &p, key);
	if (rc)
		return rc;
	uint64_t u = le(p, n);
	*neg = false;
	if (t == GT_I8 || t == GT_I16 || t == GT_I32 || t == GT_I64) {
		unsigned bits = 8 * n;
		if (u >> (bits - 1) & 1)
			*neg = true;
	}
	*v = u;
	return 0;
}

/* Skip one value of type t (recursing into arrays up to GG_MAX_DEPTH). */
static int skip_value(gg_reader *r, uint32_t t, int depth, const char *key)
{
	if (t >= GT_COUNT)
		return rd_fail(r, GW_EFORMAT, "key '%s' has unknown value type %u", key, t);
	if (t == GT_STRING)
		return rd_string(r, NULL, 0, NULL, N_("string value"));
	if (t != GT_ARRAY)
		return rd_skip(r, gt_size[t], key);
	if (depth >= GG_MAX_DEPTH)
		return rd_fail(r, GW_EFORMAT, "key '%s' nests arrays deeper than %d levels", key, GG_MAX_DEPTH);
	uint32_t et;
	uint64_t count;
	int rc;
	if ((rc = rd_u32(r, &et, N_("array type"))) || (rc = rd_u64(r, &count, N_("array length"))))
		return rc;
	if (et >= GT_COUNT)
		return rd_fail(r, GW_EFORMAT, "key '%s' is an array of unknown type %u", key, et);
	/* The smallest an element can be: its fixed size, a string's length,
	 * or a nested array's type and count. */
	uint64_t min = et == GT_STRING ? 8 : et == GT_ARRAY ? 12 : gt_size[et];
	if (count > rd_avail(r) / min)
		return rd_fail(r, GW_EFORMAT, "key '%s' claims %llu array elements, more than the file can hold", key,
			       (unsigned long long)count);
	if (et != GT_STRING && et != GT_ARRAY)
		return rd_skip(r, count * min, key);
	for (uint64_t i = 0; i < count; i++)
		if ((rc = skip_value(r, et, depth + 1, key)))
			return rc;
	return 0;
}

/* Which ARCH.<suffix> slot a key names, or -1; *plen = length of the ARCH part. */
static int arch_slot(const char *key, size_t *plen)
{
	size_t kl = strlen(key);
	for (int i = 0; i < K_NARCH; i++) {
		size_t sl = strlen(arch_keys[i]);
		if (kl > sl + 1 && key[kl - sl - 1] == '.' && !strcmp(key + kl - sl, arch_keys[i])) {
			*plen = kl - sl - 1;
			if (*plen <= 64 && !memchr(key, '.', *plen))
				return i;
		}
	}
	return -1;
}

/* Read an ARCH.* value: an unsigned integer or an array of them (bools count as 0/1). */
static int read_slot(gg_reader *r, gg_meta *g, int si, const char *key, size_t plen, uint32_t t)
{
	gg_slot *s = &g->slot[si];
	/* Several archs in one file: keep the one matching general.architecture. */
	if (s->set && g->has_arch && !strcmp(s->prefix, g->arch))
		return skip_value(r, t, 0, key);
	uint64_t v;
	bool neg;
	int rc;
	free(s->arr);
	s->arr = NULL;
	s->n = 0;
	s->val = 0;
	memcpy(s->prefix, key, plen);
	s->prefix[plen] = '\0';
	if (gt_is_int(t)) {
		if ((rc = rd_int(r, t, &v, &neg, key)))
			return rc;
		if (neg)
			return rd_fail(r, GW_EFORMAT, "key '%s' is negative", key);
		s->val = v;
		s->set = true;
		return 0;
	}
	if (t != GT_ARRAY)
		return rd_fail(r, GW_EFORMAT, "key '%s' has type %s, expected an integer", key,
			       t < GT_COUNT ? gt_name[t] : "unknown");
	uint32_t et;
	uint64_t count;
	if ((rc = rd_u32(r, &et, N_("array type"))) || (rc = rd_u64(r, &count, N_("array length"))))
		return rc;
	if (et >= GT_COUNT || !gt_is_int(et))
		return rd_fail(r, GW_EFORMAT, "key '%s' is an array of %s, expected integers", key,
			       et < GT_COUNT ? gt_name[et] : "unknown type");
	if (count > MODEL_MAX_LAYERS || count > rd_avail(r) / gt_size[et])
		return rd_fail(r, GW_EFORMAT, "key '%s' claims %llu per-layer values", key, (unsigned long long)count);
	s->arr = xcalloc(count ? (size_t)count : 1, sizeof *s->arr);
	s->n = (uint32_t)count;
	for (uint64_t i = 0; i < count; i++) {
		if ((rc = rd_int(r, et, &v, &neg, key)))
			return rc;
		if (neg || v > UINT32_MAX)
			return rd_fail(r, GW_EFORMAT, "key '%s' holds an out-of-range value", key);
		s->arr[i] = (uint32_t)v;
		if (v > s->val)
			s->val = v;
	}
	s->set = true;
	return 0;
}

/* One key/value pair. */
static int read_kv(gg_reader *r, gg_meta *g, char *key)
{
	bool kept;
	uint32_t t;
	int rc;
	if ((rc = rd_string(r, key, GG_MAX_KEY, &kept, N_("key"))))
		return rc;
	if (!kept)
		return rd_fail(r, GW_EFORMAT, "metadata key at offset %llu is longer than %u bytes",
			       (unsigned long long)r->pos, GG_MAX_KEY);
	if ((rc = rd_u32(r, &t, N_("value type"))))
		return rc;
	if (t >= GT_COUNT)
		return rd_fail(r, GW_EFORMAT, "key '%s' has unknown value type %u", key, t);

	if (!strcmp(key, "general.architecture") || !strcmp(key, "general.name")) {
		bool arch = key[8] == 'a';
		if (t != GT_STRING)
			return rd_fail(r, GW_EFORMAT, "key '%s' has type %s, expected a string", key, gt_name[t]);
		char *dst = arch ? g->arch : g->name;
		if ((rc = rd_string(r, dst, arch ? 64 : GG_KEEP_STR, &kept, key)))
			return rc;
		if (arch && (!kept || !*dst))
			return rd_fail(r, GW_EFORMAT, "general.architecture is empty or longer than 64 bytes");
		if (arch)
			g->has_arch = true;
		else
			g->has_name = kept && *dst;
		return 0;
	}
	if (!strcmp(key, "general.alignment")) {
		uint32_t a;
		/* gguf.cpp requires uint32 here */
		if (t != GT_U32)
			return rd_fail(r, GW_EFORMAT, "general.alignment has type %s, expected uint32", gt_name[t]);
		if ((rc = rd_u32(r, &a, key)))
			return rc;
		if (a == 0 || (a & (a - 1)))
			return rd_fail(r, GW_EFORMAT, "general.alignment %u is not a power of two", a);
		g->alignment = a;
		return 0;
	}
	if (!strcmp(key, "general.file_type") && gt_is_int(t)) {
		uint64_t v;
		bool neg;
		if ((rc = rd_int(r, t, &v, &neg, key)))
			return rc;
		g->ftype = (uint32_t)v;
		g->has_ftype = !neg && v <= UINT32_MAX;
		return 0;
	}
	if (!strcmp(key, "tokenizer.ggml.tokens") && t == GT_ARRAY) {
		uint64_t save = r->pos, count;
		uint32_t et;
		if ((rc = rd_u32(r, &et, N_("array type"))) || (rc = rd_u64(r, &count, N_("array length"))))
			return rc;
		g->n_tokens = count;
		g->has_tokens = true;
		r->pos = save;
		return skip_value(r, t, 0, key);
	}
	size_t plen;
	int si = arch_slot(key, &plen);
	if (si >= 0)
		return read_slot(r, g, si, key, plen, t);
	return skip_value(r, t, 0, key);
}

/* ---- tensor infos ------------------------------------------------------ */

typedef struct gg_tensor {
	uint64_t off, bytes, nel;
	uint32_t name_at; /* offset into the name arena */
	int type;
} gg_tensor;

static const char *sort_names; /* qsort has no context argument in C17 */
static int cmp_name(const void *a, const void *b)
{
	const gg_tensor *x = a, *y = b;
	return strcmp(sort_names + x->name_at, sort_names + y->name_at);
}
static int cmp_off(const void *a, const void *b)
{
	const gg_tensor *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* One tensor info: name, dims, type, offset; computes its exact bytes. */
static int read_tensor(gg_reader *r, gg_tensor *ti, char *names, uint64_t idx)
{
	char *name = names + ti->name_at;
	bool kept;
	uint32_t nd, type;
	int rc;
	if ((rc = rd_string(r, name, GG_MAX_NAME - 1, &kept, N_("tensor name"))))
		return rc;
	if (!kept)
		return rd_fail(r, GW_EFORMAT, "tensor %llu has a name longer than %u bytes", (unsigned long long)idx,
			       GG_MAX_NAME - 1);
	if ((rc = rd_u32(r, &nd, N_("tensor dims"))))
		return rc;
	if (nd > GG_MAX_DIMS)
		return rd_fail(r, GW_EFORMAT, "tensor '%s' has %u dimensions (at most %u)", name, nd, GG_MAX_DIMS);
	uint64_t ne[GG_MAX_DIMS] = {1, 1, 1, 1}, nel = 1;
	for (uint32_t d = 0; d < nd; d++) {
		if ((rc = rd_u64(r, &ne[d], N_("tensor shape"))))
			return rc;
		if (ne[d] > (uint64_t)INT64_MAX)
			return rd_fail(r, GW_EFORMAT, "tensor '%s' has a negative dimension", name);
	}
	for (uint32_t d = 0; d < GG_MAX_DIMS; d++)
		if (__builtin_mul_overflow(nel, ne[d], &nel) || nel > (uint64_t)INT64_MAX)
			return rd_fail(r, GW_EFORMAT, "tensor '%s' has a shape whose element count overflows", name);
	if ((rc = rd_u32(r, &type, N_("tensor type"))))
		return rc;
	uint32_t block, tbytes;
	if (type > INT32_MAX || !gguf_type_info((int)type, NULL, &block, &tbytes))
		return rd_fail(r, GW_EFORMAT, "tensor '%s' has unknown ggml type %u", name, type);
	if (ne[0] % block)
		return rd_fail(r, GW_EFORMAT, "tensor '%s': row of %llu elements is not a multiple of the block size %u",
			       name, (unsigned long long)ne[0], block);
	uint64_t bytes = 0;
	if (nel && __builtin_mul_overflow(nel / block, (uint64_t)tbytes, &bytes))
		return rd_fail(r, GW_EFORMAT, "tensor '%s' has a byte size that overflows", name);
	if ((rc = rd_u64(r, &ti->off, N_("tensor offset"))))
		return rc;
	ti->bytes = bytes;
	ti->nel = nel;
	ti->type = (int)type;
	return 0;
}

/* "blk.N." -> N, else -1. */
static long blk_index(const char *name)
{
	if (strncmp(name, "blk.", 4))
		return -1;
	const char *p = name + 4;
	long n = 0;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (*p++ - '0');
		if (n > (long)MODEL_MAX_LAYERS)
			return (long)MODEL_MAX_LAYERS;
	}
	return *p == '.' ? n : -1;
}

static bool is_expert_tensor(const char *name)
{
	return strstr(name, "_exps.") || strstr(name, "_chexps.");
}

/* ---- model fields from metadata ---------------------------------------- */

static uint32_t slot_u32(gg_reader *r, const gg_meta *g, int k, int *rc)
{
	const gg_slot *s = &g->slot[k];
	if (!s->set || strcmp(s->prefix, g->arch))
		return 0;
	if (s->val > UINT32_MAX && !*rc)
		*rc = rd_fail(r, GW_EFORMAT, "%s.%s = %llu is out of range", g->arch, arch_keys[k],
			      (unsigned long long)s->val);
	return (uint32_t)s->val;
}

static const gg_slot *slot_arr(const gg_meta *g, int k)
{
	const gg_slot *s = &g->slot[k];
	return s->set && s->arr && !strcmp(s->prefix, g->arch) ? s : NULL;
}

/*
 * Default sliding-window pattern of an arch when the file gives a window
 * but no per-layer pattern (llama.cpp src/models/ARCH.cpp
 * load_swa_pattern(ml, period, dense_first) at 0c1e570): every `period`
 * layers one is full attention, the last of the period or, with
 * dense_first, the first.  Phi-3 files carry a window too, but llama.cpp
 * loads them with SWA disabled, so they plan as full attention.
 */
static const struct {
	const char *arch;
	uint32_t period;
	bool dense_first;
} swa_defaults[] = {
	{"gemma2", 2, false},      {"gpt-oss", 2, false},     {"gemma3", 6, false},
	{"gemma-embedding", 6, false}, {"gemma3n", 5, false}, {"cohere2", 4, false},
	{"olmo2", 4, false},       {"llama4", 4, false},      {"exaone4", 4, false},
	{"olmo3", 4, false}, /* Ollama's own converter names OLMo 3 so */
	{"exaone-moe", 4, false},  {"afmoe", 4, false},       {"mellum", 4, false},
	{"muse-glimmer", 4, false}, {"plamo3", 8, false},     {"cohere2moe", 4, true},
	{"smallthinker", 4, true}, {"laguna", 4, true},       {"modern-bert", 3, true},
};

static uint32_t arch_swa_period(const char *arch, bool *dense_first)
{
	*dense_first = false;
	for (size_t i = 0; i < sizeof swa_defaults / sizeof swa_defaults[0]; i++)
		if (!strcmp(arch, swa_defaults[i].arch)) {
			*dense_first = swa_defaults[i].dense_first;
			return swa_defaults[i].period;
		}
	return 0;
}

static int fill_shape(gg_reader *r, const gg_meta *g, model_desc *m)
{
	int rc = 0;
	m->arch = xstrdup(g->arch);
	m->n_layers = slot_u32(r, g, K_BLOCKS, &rc);
	m->hidden = slot_u32(r, g, K_EMBD, &rc);
	m->ffn = slot_u32(r, g, K_FFN, &rc);
	m->ctx_train = g->slot[K_CTX].set && !strcmp(g->slot[K_CTX].prefix, g->arch) ? g->slot[K_CTX].val : 0;
	m->n_heads = slot_u32(r, g, K_HEADS, &rc);
	m->n_kv_heads = slot_u32(r, g, K_KV_HEADS, &rc);
	m->head_dim_k = slot_u32(r, g, K_KEY_LEN, &rc);
	m->head_dim_v = slot_u32(r, g, K_VAL_LEN, &rc);
	m->n_experts = slot_u32(r, g, K_EXPERTS, &rc);
	m->n_experts_used = slot_u32(r, g, K_EXPERTS_USED, &rc);
	m->expert_ffn = slot_u32(r, g, K_EXPERT_FFN, &rc);
	uint32_t vocab = slot_u32(r, g, K_VOCAB, &rc);
	uint32_t k_mla = slot_u32(r, g, K_KEY_LEN_MLA, &rc), v_mla = slot_u32(r, g, K_VAL_LEN_MLA, &rc);
	m->ssm_conv = slot_u32(r, g, K_SSM_CONV, &rc);
	m->ssm_inner = slot_u32(r, g, K_SSM_INNER, &rc);
	m->ssm_state = slot_u32(r, g, K_SSM_STATE, &rc);
	m->ssm_dt_rank = slot_u32(r, g, K_SSM_DT, &rc);
	m->ssm_groups = slot_u32(r, g, K_SSM_GROUPS, &rc);
	m->n_nextn = slot_u32(r, g, K_NEXTN, &rc);
	m->q_lora_rank = slot_u32(r, g, K_Q_LORA, &rc);
	m->n_rot = slot_u32(r, g, K_ROPE_DIMS, &rc);
	m->n_expert_shared = slot_u32(r, g, K_EXPERT_SHARED, &rc);
	m->n_dense_lead = slot_u32(r, g, K_DENSE_LEAD, &rc);
	m->expert_gating = slot_u32(r, g, K_GATING, &rc);
	m->expert_weights_norm = slot_u32(r, g, K_WEIGHTS_NORM, &rc) != 0;
	/* Which blocks are MoE (llama.cpp n_moe_layer_step; convert_hf_to_gguf.py
	 * writes llama4.interleave_moe_layer_step from the HF config) and the
	 * shared experts' width (n_expert_shared x n_ff_shexp, n_ff_shexp
	 * defaulting to n_ff_exp; Llama 4 has one n_ff_exp wide and no key
	 * for it).  The tensors give the bytes; these say the shape. */
	uint32_t moe_step = slot_u32(r, g, K_MOE_STEP, &rc), shexp_ffn = slot_u32(r, g, K_SHEXP_FFN, &rc);
	if (rc)
		return rc;
	if (m->n_experts) {
		if (moe_step > MODEL_MAX_LAYERS || (m->n_layers && moe_step > m->n_layers))
			return rd_fail(r, GW_EFORMAT, "%s.interleave_moe_layer_step = %u leaves no MoE block of %u", g->arch,
				       moe_step, m->n_layers);
		m->moe_step = moe_step;
		if (!m->n_expert_shared && (shexp_ffn || !strcmp(g->arch, "llama4")))
			m->n_expert_shared = 1;
		uint64_t sh = (uint64_t)m->n_expert_shared * (shexp_ffn ? shexp_ffn : m->expert_ffn);
		if (sh > (1u << 30))
			return rd_fail(r, GW_EFORMAT, "%s: %u shared experts of %u is impossible", g->arch,
				       m->n_expert_shared, shexp_ffn ? shexp_ffn : m->expert_ffn);
		m->shared_expert_ffn = (uint32_t)sh;
	}
	/* MLA: both MLA head sizes given (llama.cpp hparams.is_mla()) */
	if (k_mla && v_mla) {
		m->mla = true;
		m->mla_head_dim_k = k_mla;
		m->mla_head_dim_v = v_mla;
	}
	/* recurrent layers: an SSM state size (Mamba, Mamba-2, Jamba, Granite
	 * 4 hybrids, Nemotron-H, Falcon-H1); the layers without KV heads */
	m->recurrent = m->ssm_state > 0 && m->ssm_inner > 0;
	/* LFM2's short-convolution layers: a conv state of (l_cache - 1) x
	 * n_embd per sequence and no SSM state (llama-hparams.cpp n_embd_r) */
	uint32_t l_cache = slot_u32(r, g, K_SHORTCONV, &rc);
	if (rc)
		return rc;
	if (l_cache > 4096) /* a convolution window; LFM2's is 3 */
		return rd_fail(r, GW_EFORMAT, "%s.shortconv.l_cache = %u is impossible", g->arch, l_cache);
	if (l_cache > 1 && !m->recurrent) {
		m->recurrent = true;
		m->ssm_conv = l_cache;
		m->ssm_inner = m->hidden;
		m->ssm_state = m->ssm_groups = 0;
	}
	if (m->n_nextn >= m->n_layers && m->n_nextn)
		return rd_fail(r, GW_EFORMAT, "%s.nextn_predict_layers = %u leaves no layers of %u", g->arch,
			       m->n_nextn, m->n_layers);
	if (m->n_layers > MODEL_MAX_LAYERS)
		return rd_fail(r, GW_EFORMAT, "%s.block_count = %u is impossible", g->arch, m->n_layers);
	if (g->has_tokens) {
		if (g->n_tokens > UINT32_MAX)
			return rd_fail(r, GW_EFORMAT, "tokenizer.ggml.tokens has %llu entries",
				       (unsigned long long)g->n_tokens);
		m->vocab = (uint32_t)g->n_tokens;
	} else if (vocab) {
		m->vocab = vocab;
	}
	/* Per-layer KV heads (0 marks a layer without attention, e.g. recurrent). */
	const gg_slot *kv = slot_arr(g, K_KV_HEADS);
	if (kv && m->n_layers) {
		if (kv->n != m->n_layers)
			return rd_fail(r, GW_EFORMAT, "%s.attention.head_count_kv has %u entries for %u layers",
				       g->arch, kv->n, m->n_layers);
		bool vary = false;
		for (uint32_t i = 1; i < kv->n; i++)
			vary |= kv->arr[i] != kv->arr[0];
		if (vary) {
			m->layer_kv_heads = xcalloc(kv->n, sizeof *m->layer_kv_heads);
			memcpy(m->layer_kv_heads, kv->arr, kv->n * sizeof *kv->arr);
		}
	}
	/* The layer taxonomy's inputs (model/layers.c): per-layer FFN widths,
	 * recurrent-layer flags, the full-attention interval, shared-KV
	 * layers, the sliding layers' head sizes, the indexer's key length. */
	const gg_slot *ffa = slot_arr(g, K_FFN);
	if (ffa && m->n_layers) {
		if (ffa->n != m->n_layers)
			return rd_fail(r, GW_EFORMAT, "%s.feed_forward_length has %u entries for %u layers", g->arch,
				       ffa->n, m->n_layers);
		m->layer_ffn = xcalloc(ffa->n, sizeof *m->layer_ffn);
		memcpy(m->layer_ffn, ffa->arr, ffa->n * sizeof *ffa->arr);
	}
	const gg_slot *rla = slot_arr(g, K_RECR_LAYERS);
	if (rla && m->n_layers) {
		if (rla->n != m->n_layers)
			return rd_fail(r, GW_EFORMAT, "%s.attention.recurrent_layers has %u entries for %u layers", g->arch,
				       rla->n, m->n_layers);
		m->layer_recr_given = xcalloc(rla->n, sizeof *m->layer_recr_given);
		for (uint32_t i = 0; i < rla->n; i++)
			m->layer_recr_given[i] = rla->arr[i] != 0;
	}
	m->full_attn_interval = slot_u32(r, g, K_FULL_ATTN, &rc);
	m->n_shared_kv_layers = slot_u32(r, g, K_SHARED_KV, &rc);
	m->head_dim_k_swa = slot_u32(r, g, K_KEY_LEN_SWA, &rc);
	m->head_dim_v_swa = slot_u32(r, g, K_VAL_LEN_SWA, &rc);
	m->indexer_key_len = slot_u32(r, g, K_IDX_KEY_LEN, &rc);
	m->indexer_heads = slot_u32(r, g, K_IDX_HEADS, &rc);
	m->indexer_top_k = slot_u32(r, g, K_IDX_TOP_K, &rc);
	m->embd_per_layer = slot_u32(r, g, K_EMBD_PER_LAYER, &rc);
	if (rc)
		return rc;
	if (m->full_attn_interval > MODEL_MAX_LAYERS || m->head_dim_k_swa > MODEL_MAX_HEADS * 64 ||
	    m->head_dim_v_swa > MODEL_MAX_HEADS * 64 || m->indexer_key_len > MODEL_MAX_HEADS * 64 ||
	    m->indexer_heads > MODEL_MAX_HEADS)
		return rd_fail(r, GW_EFORMAT, "%s: impossible full_attention_interval, SWA head size or indexer key length",
			       g->arch);
	bool kv_given = g->slot[K_KV_HEADS].set && !kv && !strcmp(g->slot[K_KV_HEADS].prefix, g->arch);
	if ((rc = model_check_shape(m, kv_given, r->name, r->err)))
		return rc;

	/* Sliding-window layers. */
	uint32_t window = slot_u32(r, g, K_SWA, &rc);
	if (rc)
		return rc;
	/* Llama 4: chunked attention of 8192 tokens unless the file sets the
	 * window to 0 (llama.cpp src/models/llama4.cpp ignores any other value) */
	if (!strcmp(g->arch, "llama4")) {
		bool given = g->slot[K_SWA].set && !strcmp(g->slot[K_SWA].prefix, g->arch);
		window = given && !window ? 0 : 8192;
	}
	/* EXAONE 4 slides only in its 64-layer (32B) model, by default over
	 * 4096 tokens (llama.cpp src/models/exaone4.cpp load_arch_hparams);
	 * at any other depth the key is read but no layer slides */
	if (!strcmp(g->arch, "exaone4")) {
		bool given = g->slot[K_SWA].set && !strcmp(g->slot[K_SWA].prefix, g->arch);
		window = m->n_layers != 64 ? 0 : given ? window : 4096;
	}
	const gg_slot *pat = &g->slot[K_SWA_PATTERN];
	bool has_pat = pat->set && !strcmp(pat->prefix, g->arch);
	if (window && m->n_layers) {
		if (has_pat && pat->arr) {
			/* one flag per layer: true = sliding window */
			if (pat->n != m->n_layers)
				return rd_fail(r, GW_EFORMAT, "%s.attention.sliding_window_pattern has %u entries for %u layers",
					       g->arch, pat->n, m->n_layers);
			m->swa_window = window;
			m->layer_swa = xcalloc(m->n_layers, sizeof *m->layer_swa);
			for (uint32_t i = 0; i < m->n_layers; i++)
				m->layer_swa[i] = pat->arr[i] != 0;
		} else if (has_pat) {
			/* llama.cpp set_swa_pattern(p): 0 = every layer slides, 1 = none */
			uint64_t p = pat->val;
			if (p > MODEL_MAX_LAYERS)
				return rd_fail(r, GW_EFORMAT, "%s.attention.sliding_window_pattern %llu is impossible",
					       g->arch, (unsigned long long)p);
			bool dense_first;
			arch_swa_period(g->arch, &dense_first);
			model_set_swa_pattern(m, window, p == 0 ? 1 : p == 1 ? 0 : (uint32_t)p, dense_first);
		} else {
			bool dense_first;
			uint32_t period = arch_swa_period(g->arch, &dense_first);
			model_set_swa_pattern(m, window, period, dense_first);
		}
		/* SmallThinker's window is fixed at 4096 whatever the file says
		 * (llama.cpp src/models/smallthinker.cpp) */
		if (m->swa_window && !strcmp(g->arch, "smallthinker"))
			m->swa_window = 4096;
	}
	return 0;
}

/*
 * Parse a whole GGUF header from r into m.  m is released on failure.
 */
static int gguf_parse(gg_reader *r, model_desc *m)
{
	gg_meta g = {.alignment = 32}; /* GGUF_DEFAULT_ALIGNMENT */
	gg_tensor *ts = NULL;
	char *names = NULL, *key = NULL;
	uint64_t n_tensors = 0, n_kv = 0;
	uint32_t version;
	const uint8_t *p;
	int rc;

	memset(m, 0, sizeof *m);
	if (r->file_size < 4 || (r->fd < 0 && !r->grow && r->mem_len < 4)) {
		rc = rd_fail(r, GW_EFORMAT, "too short to be a GGUF file (%llu bytes)", (unsigned long long)r->file_size);
		goto out;
	}
	if ((rc = rd_get(r, 4, &p, N_("magic"))))
		goto out;
	if (memcmp(p, "GGUF", 4)) {
		rc = rd_fail(r, GW_EFORMAT, "not a GGUF file (bad magic %02x %02x %02x %02x)", p[0], p[1], p[2], p[3]);
		goto out;
	}
	if ((rc = rd_u32(r, &version, N_("version"))))
		goto out;
	if (version == 1) {
		rc = rd_fail(r, GW_ENOTSUP, "GGUF version 1 is not supported (convert it with a current llama.cpp)");
		goto out;
	}
	if (version != 2 && version != 3) {
		if ((version & 0xffff) == 0)
			rc = rd_fail(r, GW_ENOTSUP, "GGUF version %u: big-endian files are not supported", version);
		else
			rc = rd_fail(r, GW_ENOTSUP, "unsupported GGUF version %u", version);
		goto out;
	}
	if ((rc = rd_u64(r, &n_tensors, N_("tensor count"))) || (rc = rd_u64(r, &n_kv, N_("metadata count"))))
		goto out;
	/* a KV pair needs >= 12 bytes, a tensor info >= 24 */
	if (n_kv > GG_MAX_KV || n_kv > rd_avail(r) / 12) {
		rc = rd_fail(r, GW_EFORMAT, "impossible metadata count %llu", (unsigned long long)n_kv);
		goto out;
	}
	if (n_tensors > GG_MAX_TENSORS || n_tensors > rd_avail(r) / 24) {
		rc = rd_fail(r, GW_EFORMAT, "impossible tensor count %llu", (unsigned long long)n_tensors);
		goto out;
	}

	key = xmalloc(GG_MAX_KEY + 1);
	for (uint64_t i = 0; i < n_kv; i++)
		if ((rc = read_kv(r, &g, key)))
			goto out;
	if (!g.has_arch) {
		rc = rd_fail(r, GW_EFORMAT, "no general.architecture in the metadata");
		goto out;
	}

	ts = xcalloc(n_tensors ? (size_t)n_tensors : 1, sizeof *ts);
	names = xmalloc((n_tensors ? (size_t)n_tensors : 1) * GG_MAX_NAME);
	for (uint64_t i = 0; i < n_tensors; i++) {
		ts[i].name_at = (uint32_t)(i * GG_MAX_NAME);
		if ((rc = read_tensor(r, &ts[i], names, i)))
			goto out;
		if (ts[i].off % g.alignment) {
			rc = rd_fail(r, GW_EFORMAT, "tensor '%s' offset %llu is not a multiple of the alignment %u",
				     names + ts[i].name_at, (unsigned long long)ts[i].off, g.alignment);
			goto out;
		}
	}
	uint64_t data_start = r->pos + (g.alignment - r->pos % g.alignment) % g.alignment;
	uint64_t data_have = data_start <= r->file_size ? r->file_size - data_start : 0;

	sort_names = names;
	qsort(ts, (size_t)n_tensors, sizeof *ts, cmp_name);
	for (uint64_t i = 1; i < n_tensors; i++)
		if (!strcmp(names + ts[i].name_at, names + ts[i - 1].name_at)) {
			rc = rd_fail(r, GW_EFORMAT, "duplicate tensor '%s'", names + ts[i].name_at);
			goto out;
		}
	qsort(ts, (size_t)n_tensors, sizeof *ts, cmp_off);
	uint64_t data_end = 0;
	for (uint64_t i = 0; i < n_tensors; i++) {
		const char *nm = names + ts[i].name_at;
		if (i && ts[i].off < ts[i - 1].off + ts[i - 1].bytes) {
			rc = rd_fail(r, GW_EFORMAT, "tensor '%s' overlaps tensor '%s'", nm, names + ts[i - 1].name_at);
			goto out;
		}
		if (ts[i].off > UINT64_MAX - ts[i].bytes) {
			rc = rd_fail(r, GW_EFORMAT, "tensor '%s' offset overflows", nm);
			goto out;
		}
		uint64_t end = ts[i].off + ts[i].bytes;
		if (end > data_end)
			data_end = end;
	}
	if (data_end > data_have) {
		rc = rd_fail(r, GW_ETRUNC, "truncated: tensor data needs %llu bytes after offset %llu, the file has %llu",
			     (unsigned long long)data_end, (unsigned long long)data_start, (unsigned long long)data_have);
		goto out;
	}

	m->source = MODEL_SRC_GGUF;
	if ((rc = fill_shape(r, &g, m)))
		goto out;

	/* Layers named blk.N: without block_count, count them. */
	long max_blk = -1;
	for (uint64_t i = 0; i < n_tensors; i++) {
		long b = blk_index(names + ts[i].name_at);
		if (b > max_blk)
			max_blk = b;
	}
	if (max_blk >= (long)MODEL_MAX_LAYERS || (m->n_layers && max_blk >= (long)m->n_layers)) {
		rc = rd_fail(r, GW_EFORMAT, "tensor blk.%ld is beyond block_count %u", max_blk, m->n_layers);
		goto out;
	}
	if (!m->n_layers)
		m->n_layers = (uint32_t)(max_blk + 1);
	model_alloc_layer_bytes(m, m->n_layers);

	uint64_t type_bytes[64] = {0};
	double exp_params = 0, params = 0;
	bool has_output = false, up_exps = false, gate_exps = false;
	uint8_t *kv_proj = xcalloc(m->n_layers ? m->n_layers : 1, 1); /* bit 0: attn_k, bit 1: attn_v or attn_qkv */
	/* NextN/MTP blocks (the last nextn_predict_layers of block_count):
	 * llama.cpp skips their tensors unless asked to load MTP (its
	 * load_mtp, off for plain generation) and keeps no cache for them */
	uint32_t first_nextn = m->n_nextn && m->n_nextn < m->n_layers ? m->n_layers - m->n_nextn : m->n_layers;
	for (uint64_t i = 0; i < n_tensors; i++) {
		const char *nm = names + ts[i].name_at;
		uint64_t b = ts[i].bytes;
		long blk = blk_index(nm);
		if (blk >= (long)first_nextn)
			continue;
		params += (double)ts[i].nel;
		if (blk >= 0 && ts[i].type < 64 && strstr(nm, ".weight") && !strstr(nm, "norm"))
			type_bytes[ts[i].type] += b;
		if (blk >= 0) {
			m->layer_bytes[blk] += b;
			if (strstr(nm, ".exp_probs_b."))
				m->expert_select_bias = true;
			up_exps |= strstr(nm, ".ffn_up_exps.") != NULL;
			gate_exps |= strstr(nm, ".ffn_gate_exps.") || strstr(nm, ".ffn_gate_up_exps.");
			if (blk < (long)m->n_layers)
				kv_proj[blk] |= (strstr(nm, ".attn_k.") ? 1 : 0) |
						(strstr(nm, ".attn_v.") || strstr(nm, ".attn_qkv.") ? 2 : 0);
			if (is_expert_tensor(nm)) {
				m->layer_expert_bytes[blk] += b;
				exp_params += (double)ts[i].nel;
			}
		} else if (!strncmp(nm, "token_embd.", 11)) {
			m->embd_bytes += b;
		} else if (!strcmp(nm, "output.weight") || !strncmp(nm, "output_norm.", 12) ||
			   !strcmp(nm, "output.bias")) {
			m->output_bytes += b;
			has_output |= !strcmp(nm, "output.weight");
		} else {
			m->other_bytes += b;
		}
		m->total_bytes += b;
	}
	m->n_tensors = n_tensors;
	m->n_layers = first_nextn;
	m->tied_embeddings = !has_output;
	/* the gate is optional where the loader says TENSOR_NOT_REQUIRED
	 * (Granite MoE); build_moe_ffn then activates up alone */
	m->expert_ungated = up_exps && !gate_exps;
	free(m->layer_v_from_k);
	m->layer_v_from_k = NULL;
	for (uint32_t i = 0; i < m->n_layers; i++)
		if (kv_proj[i] == 1) {
			if (!m->layer_v_from_k)
				m->layer_v_from_k = xcalloc(m->n_layers, sizeof *m->layer_v_from_k);
			m->layer_v_from_k[i] = true;
		}
	free(kv_proj);
	m->has_tensors = true;
	m->params_total = params;
	if (m->n_experts && m->n_experts_used)
		m->params_active = params - exp_params + exp_params * m->n_experts_used / m->n_experts;
	else
		m->params_active = params;

	if (!m->vocab) {
		/* token_embd.weight is {n_embd, n_vocab}: nel / n_embd */
		for (uint64_t i = 0; i < n_tensors; i++)
			if (!strcmp(names + ts[i].name_at, "token_embd.weight") && m->hidden &&
			    ts[i].nel / m->hidden <= UINT32_MAX)
				m->vocab = (uint32_t)(ts[i].nel / m->hidden);
	}
	if (g.has_ftype && gguf_file_type_name(g.ftype)) {
		m->file_type = xstrdup(gguf_file_type_name(g.ftype));
	} else {
		/* no (known) file type: name the type holding most layer weight bytes */
		int best = -1;
		for (int t = 0; t < 64; t++)
			if (type_bytes[t] && (best < 0 || type_bytes[t] > type_bytes[best]))
				best = t;
		const char *tn;
		if (best >= 0 && gguf_type_info(best, &tn, NULL, NULL))
			m->file_type = xstrdup(tn);
	}
	if (g.has_name)
		m->name = xstrdup(g.name);
	model_finish(m);
	rc = 0;
out:
	meta_release(&g);
	free(ts);
	free(names);
	free(key);
	if (rc)
		model_release(m);
	return rc;
}

int gguf_read_mem(const uint8_t *buf, size_t len, uint64_t file_size, model_desc *m, gw_error *err)
{
	gg_reader r = {.name = "(buffer)", .mem = buf, .mem_len = len, .fd = -1, .err = err};
	r.file_size = file_size > len ? file_size : len;
	return gguf_parse(&r, m);
}

int gguf_read_grow(const char *name, uint64_t file_size, gguf_grow_fn grow, void *ctx, model_desc *m, gw_error *err)
{
	gg_reader r = {.name = name, .fd = -1, .err = err, .file_size = file_size, .grow = grow, .grow_ctx = ctx};
	return gguf_parse(&r, m);
}

int gguf_read(const char *path, model_desc *m, gw_error *err)
{
	gg_reader r = {.name = path, .fd = -1, .err = err};
	struct stat st;
	int rc;
	memset(m, 0, sizeof *m);
	r.fd = gw_open_regular(path, NULL, err);
	if (r.fd < 0)
		return r.fd;
	if (fstat(r.fd, &st)) {
		rc = gw_fail(err, GW_EIO, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	r.file_size = (uint64_t)st.st_size;
	r.win = xmalloc(GG_WINDOW);
	rc = gguf_parse(&r, m);
	if (!rc) {
		m->path = xstrdup(path);
		if (!m->name)
			m->name = model_base_name(path);
	}
out:
	free(r.win);
	close(r.fd);
	return rc;
}

/*
 * safetensors.c: one .safetensors file or a directory of shards
 * (model.safetensors.index.json), plus the directory's config.json.
 * Reads the JSON headers only.
 *
 * Format (huggingface/safetensors README): 8-byte little-endian header
 * length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin,
 * end]}, "__metadata__": {...}}, then the data; offsets are relative to
 * the byte after the header.
 */
#include "model/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/json.h"

/* The reference implementation refuses headers above 100 MB (MAX_HEADER_SIZE). */
#define ST_MAX_HEADER (100u * 1000 * 1000)
#define ST_MAX_DIMS 16
#define ST_MAX_SHARDS 4096
#define ST_MAX_INDEX (64u * 1024 * 1024)

/* dtypes and their bits per element (safetensors Dtype enum). */
static const struct {
	const char *name;
	unsigned bits;
} st_dtypes[] = {
	{"BOOL", 8}, {"U8", 8},  {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
	{"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16},   {"I32", 32},     {"U32", 32},
	{"F32", 32}, {"I64", 64}, {"U64", 64}, {"F64", 64},    {"C64", 64},     {"F4", 4},
	{"F6_E2M3", 6}, {"F6_E3M2", 6},
};
#define ST_NDTYPES (sizeof st_dtypes / sizeof st_dtypes[0])

typedef struct st_tensor {
	char *name;
	uint64_t begin, end, nel;
	uint64_t dim0, dim1;
	int dtype;
	uint32_t shard;
} st_tensor;

typedef struct st_set {
	st_tensor *t;
	size_t n, cap;
} st_set;

static void set_release(st_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->t[i].name);
	free(s->t);
	memset(s, 0, sizeof *s);
}

static int cmp_begin(const void *a, const void *b)
{
	const st_tensor *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int bad(gw_error *err, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(gw_error *err, const char *file, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return gw_fail(err, GW_EFORMAT, "cannot read '%s': %s", file, what);
}

/*
 * The header is read by a small reader of its own instead of a general
 * JSON parser, so that the largest header the format allows (100 MB, about
 * two million tensors) costs time linear in its length and memory linear
 * in its tensor count: one pass, no tree of JSON values (jansson took 30 s
 * and 1.2 GB for a 99 MB header).  Held per tensor: its name and one
 * st_tensor (48 bytes).  It accepts RFC 8259 JSON of the header's shape:
 * an object of tensor entries {dtype, shape, data_offsets, ...} and an
 * optional "__metadata__" value, nested at most ST_MAX_DEPTH deep.
 */
#define ST_MAX_DEPTH 64
#define ST_MAX_NAME 65536

typedef struct jr {
	const char *p, *end, *start;
	const char *file;
	gw_error *err;
	strbuf str;             /* the last string read, decoded */
} jr;

static int jr_bad(jr *r, const char *what)
{
	return bad(r->err, r->file, "invalid JSON header (%s at byte %zu)", what, (size_t)(r->p - r->start));
}

static void jr_ws(jr *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* Skip whitespace and take c if it comes next. */
static bool jr_take(jr *r, char c)
{
	jr_ws(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool jr_hex4(jr *r, unsigned *v)
{
	if (r->end - r->p < 4)
		return false;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(r->p[i]);
		if (h < 0)
			return false;
		*v = *v << 4 | (unsigned)h;
	}
	r->p += 4;
	return true;
}

static void put_utf8(strbuf *sb, unsigned c)
{
	char b[4];
	size_t n;
	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xC0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3F));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xE0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3F));
		b[2] = (char)(0x80 | (c & 0x3F));
		n = 3;
	} else {
		b[0] = (char)(0xF0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3F));
		b[2] = (char)(0x80 | (c >> 6 & 0x3F));
		b[3] = (char)(0x80 | (c & 0x3F));
		n = 4;
	}
	sb_add(sb, b, n);
}

/* A string into r->str (escapes decoded; no NUL, no control characters). */
static int jr_string(jr *r)
{
	r->str.len = 0;
	if (r->str.buf)
		r->str.buf[0] = '\0';
	if (!jr_take(r, '"'))
		return jr_bad(r, "expected a string");
	for (;;) {
		const char *q = r->p;
		while (q < r->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
			q++;
		sb_add(&r->str, r->p, (size_t)(q - r->p));
		r->p = q;
		if (r->str.len > ST_MAX_NAME)
			return jr_bad(r, "a string longer than 64 KiB");
		if (r->p >= r->end)
			return jr_bad(r, "unterminated string");
		char c = *r->p++;
		if (c == '"')
			return 0;
		if (c != '\\')
			return jr_bad(r, "a control character in a string");
		if (r->p >= r->end)
			return jr_bad(r, "unterminated string");
		c = *r->p++;
		unsigned u, lo;
		switch (c) {
		case '"': case '\\': case '/':
			sb_add(&r->str, &c, 1);
			break;
		case 'b': sb_add(&r->str, "\b", 1); break;
		case 'f': sb_add(&r->str, "\f", 1); break;
		case 'n': sb_add(&r->str, "\n", 1); break;
		case 'r': sb_add(&r->str, "\r", 1); break;
		case 't': sb_add(&r->str, "\t", 1); break;
		case 'u':
			if (!jr_hex4(r, &u))
				return jr_bad(r, "a bad \\u escape");
			if (u >= 0xD800 && u < 0xDC00) {
				if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
					return jr_bad(r, "a lone surrogate");
				r->p += 2;
				if (!jr_hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF)
					return jr_bad(r, "a lone surrogate");
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
			} else if (u >= 0xDC00 && u < 0xE000) {
				return jr_bad(r, "a lone surrogate");
			}
			if (u == 0)
				return jr_bad(r, "\\u0000 in a string");
			put_utf8(&r->str, u);
			break;
		default:
			return jr_bad(r, "a bad escape");
		}
	}
}

/* A number, checked for JSON's syntax; *v gets it when it is an integer 0..2^64-1. */
static int jr_number(jr *r, bool *is_u64, uint64_t *v)
{
	jr_ws(r);
	const char *q = r->p;
	bool neg = false, frac = false, ovf = false;
	uint64_t x = 0;
	if (q < r->end && *q == '-') {
		neg = true;
		q++;
	}
	if (q >= r->end || *q < '0' || *q > '9')
		return jr_bad(r, "expected a value");
	if (*q == '0' && q + 1 < r->end && q[1] >= '0' && q[1] <= '9')
		return jr_bad(r, "a number with a leading zero");
	for (; q < r->end && *q >= '0' && *q <= '9'; q++)
		ovf |= __builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)(*q - '0'), &x);
	if (q < r->end && *q == '.') {
		frac = true;
		if (++q >= r->end || *q < '0' || *q > '9')
			return jr_bad(r, "a bad number");
		while (q < r->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < r->end && (*q == 'e' || *q == 'E')) {
		frac = true;
		q++;
		if (q < r->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= r->end || *q < '0' || *q > '9')
			return jr_bad(r, "a bad number");
		while (q < r->end && *q >= '0' && *q <= '9')
			q++;
	}
	r->p = q;
	*is_u64 = !neg && !frac && !ovf;
	*v = x;
	return 0;
}

/* Skip any value (depth: how deep it sits). */
static int jr_skip(jr *r, int depth)
{
	bool u;
	uint64_t v;
	if (depth > ST_MAX_DEPTH)
		return jr_bad(r, "nesting deeper than 64");
	jr_ws(r);
	if (r->p >= r->end)
		return jr_bad(r, "expected a value");
	switch (*r->p) {
	case '"':
		return jr_string(r);
	case '{':
	case '[': {
		char close = *r->p == '{' ? '}' : ']';
		bool obj = close == '}';
		r->p++;
		if (jr_take(r, close))
			return 0;
		do {
			int rc;
			if (obj && ((rc = jr_string(r)) || (!jr_take(r, ':') && (rc = jr_bad(r, "expected ':'")))))
				return rc;
			if ((rc = jr_skip(r, depth + 1)))
				return rc;
		} while (jr_take(r, ','));
		return jr_take(r, close) ? 0 : jr_bad(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
	case 't':
	case 'f':
	case 'n': {
		const char *w = *r->p == 't' ? "true" : *r->p == 'f' ? "false" : "null";
		size_t n = strlen(w);
		if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n))
			return jr_bad(r, "expected a value");
		r->p += n;
		return 0;
	}
	default:
		return jr_number(r, &u, &v);
	}
}

/*
 * An array of non-negative integers, at most max of them; *ok false when
 * it is something else (then skipped).
 */
static int jr_u64s(jr *r, uint64_t *out, size_t max, size_t *n, bool *ok)
{
	*n = 0;
	*ok = false;
	jr_ws(r);
	if (r->p >= r->end || *r->p != '[')
		return jr_skip(r, 2);
	r->p++;
	*ok = true;
	if (jr_take(r, ']'))
		return 0;
	do {
		bool u;
		uint64_t v;
		jr_ws(r);
		if (r->p < r->end && *r->p != '-' && (*r->p < '0' || *r->p > '9')) {
			*ok = false;
			int rc = jr_skip(r, 3);
			if (rc)
				return rc;
			continue;
		}
		int rc = jr_number(r, &u, &v);
		if (rc)
			return rc;
		if (!u || *n >= max)
			*ok = false;
		else
			out[(*n)++] = v;
	} while (jr_take(r, ','));
	return jr_take(r, ']') ? 0 : jr_bad(r, "expected ',' or ']'");
}

/* One tensor entry of a header; r->str holds its name. */
static int parse_entry(jr *r, const char *name, uint64_t data_len, st_tensor *t)
{
	const char *file = r->file;
	gw_error *err = r->err;
	char dt[40] = "";
	bool has_dt = false, has_shape = false, shape_ok = false, offs_ok = false, neg = false;
	uint64_t shape[ST_MAX_DIMS], offs[3];
	size_t nd = 0, no = 0;
	jr_ws(r);
	if (r->p >= r->end || *r->p != '{') {
		int rc = jr_skip(r, 1);
		return rc ? rc : bad(err, file, "tensor '%s' is not an object", name);
	}
	r->p++;
	if (!jr_take(r, '}')) {
		do {
			int rc = jr_string(r);
			if (rc || (!jr_take(r, ':') && (rc = jr_bad(r, "expected ':'"))))
				return rc;
			const char *k = sb_str(&r->str);
			if (!strcmp(k, "dtype")) {
				if (has_dt)
					return jr_bad(r, "duplicate key 'dtype'");
				jr_ws(r);
				if (r->p < r->end && *r->p == '"') {
					if ((rc = jr_string(r)))
						return rc;
					snprintf(dt, sizeof dt, "%s", sb_str(&r->str)); /* longer: unknown anyway */
					has_dt = true;
				} else if ((rc = jr_skip(r, 2))) {
					return rc;
				}
			} else if (!strcmp(k, "shape")) {
				if (has_shape)
					return jr_bad(r, "duplicate key 'shape'");
				has_shape = true;
				jr_ws(r);
				const char *at = r->p;
				if ((rc = jr_u64s(r, shape, ST_MAX_DIMS, &nd, &shape_ok)))
					return rc;
				/* a '-' inside the array: a negative dimension */
				neg = memchr(at, '-', (size_t)(r->p - at)) != NULL;
			} else if (!strcmp(k, "data_offsets")) {
				if (offs_ok || no)
					return jr_bad(r, "duplicate key 'data_offsets'");
				if ((rc = jr_u64s(r, offs, 3, &no, &offs_ok)))
					return rc;
				offs_ok = offs_ok && no == 2;
				no = no ? no : 1;
			} else if ((rc = jr_skip(r, 2))) {
				return rc;
			}
		} while (jr_take(r, ','));
		if (!jr_take(r, '}'))
			return jr_bad(r, "expected ',' or '}'");
	}
	if (!has_dt)
		return bad(err, file, "tensor '%s' has no dtype", name);
	t->dtype = -1;
	for (size_t i = 0; i < ST_NDTYPES; i++)
		if (!strcmp(st_dtypes[i].name, dt))
			t->dtype = (int)i;
	if (t->dtype < 0)
		return bad(err, file, "tensor '%s' has unknown dtype '%.32s'", name, dt);
	if (has_shape && neg)
		return bad(err, file, "tensor '%s' has a negative or non-integer dimension", name);
	if (!shape_ok)
		return bad(err, file, "tensor '%s' has no valid shape", name);
	uint64_t nel = 1;
	for (size_t i = 0; i < nd; i++) {
		if (__builtin_mul_overflow(nel, shape[i], &nel))
			return bad(err, file, "tensor '%s' has a shape whose element count overflows", name);
		if (i == 0)
			t->dim0 = shape[i];
		if (i == 1)
			t->dim1 = shape[i];
	}
	if (!offs_ok)
		return bad(err, file, "tensor '%s' has no valid data_offsets", name);
	t->begin = offs[0];
	t->end = offs[1];
	if (t->end < t->begin)
		return bad(err, file, "tensor '%s' ends before it begins", name);
	if (t->end > data_len)
		return bad(err, file, "tensor '%s' data [%llu, %llu) lies outside the %llu data bytes (truncated?)", name,
			   (unsigned long long)t->begin, (unsigned long long)t->end, (unsigned long long)data_len);
	uint64_t bits;
	if (__builtin_mul_overflow(nel, (uint64_t)st_dtypes[t->dtype].bits, &bits))
		return bad(err, file, "tensor '%s' has a byte size that overflows", name);
	if (bits % 8 || bits / 8 != t->end - t->begin)
		return bad(err, file, "tensor '%s' holds %llu bytes but its shape and dtype need %llu%s", name,
			   (unsigned long long)(t->end - t->begin), (unsigned long long)(bits / 8),
			   bits % 8 ? " and a fraction" : "");
	t->nel = nel;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(const st_tensor *const *)a)->name, (*(const st_tensor *const *)b)->name);
}

/*
 * Parse one header (JSON text of len bytes, data_len bytes of data after
 * it) and append its tensors to set.
 */
static int parse_header(const char *file, const char *text, size_t len, uint64_t data_len, uint32_t shard,
			st_set *set, gw_error *err)
{
	jr r = {.p = text, .end = text + len, .start = text, .file = file, .err = err, .str = STRBUF_INIT};
	int rc = 0;
	size_t first = set->n;
	st_tensor **by_name = NULL;
	jr_ws(&r);
	if (r.p >= r.end || *r.p != '{') {
		rc = r.p < r.end && (*r.p == '[' || *r.p == '"' || *r.p == 't' || *r.p == 'f' || *r.p == 'n' ||
				     *r.p == '-' || (*r.p >= '0' && *r.p <= '9'))
			     ? bad(err, file, "the header is not a JSON object")
			     : jr_bad(&r, "expected '{'");
		goto out;
	}
	r.p++;
	if (!jr_take(&r, '}')) {
		do {
			if ((rc = jr_string(&r)))
				goto out;
			if (!jr_take(&r, ':')) {
				rc = jr_bad(&r, "expected ':'");
				goto out;
			}
			if (!strcmp(sb_str(&r.str), "__metadata__")) {
				if ((rc = jr_skip(&r, 1)))
					goto out;
				continue;
			}
			char *name = xstrdup(sb_str(&r.str));
			st_tensor t = {0};
			if ((rc = parse_entry(&r, name, data_len, &t))) {
				free(name);
				goto out;
			}
			t.name = name;
			t.shard = shard;
			set->t = xgrow(set->t, &set->cap, set->n + 1, sizeof *set->t);
			set->t[set->n++] = t;
		} while (jr_take(&r, ','));
		if (!jr_take(&r, '}')) {
			rc = jr_bad(&r, "expected ',' or '}'");
			goto out;
		}
	}
	jr_ws(&r);
	if (r.p != r.end) {
		rc = jr_bad(&r, "text after the header object");
		goto out;
	}
	size_t n = set->n - first;
	/* each name once (JSON objects may not repeat a key here) */
	by_name = xcalloc(n ? n : 1, sizeof *by_name);
	for (size_t i = 0; i < n; i++)
		by_name[i] = &set->t[first + i];
	qsort(by_name, n, sizeof *by_name, cmp_name);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(by_name[i]->name, by_name[i - 1]->name)) {
			rc = bad(err, file, "invalid JSON header (duplicate tensor '%s')", by_name[i]->name);
			goto out;
		}
	/* no two tensors of this file may share bytes */
	if (n > 1)
		qsort(set->t + first, n, sizeof *set->t, cmp_begin);
	for (size_t i = first + 1; i < set->n; i++)
		if (set->t[i].begin < set->t[i - 1].end && set->t[i].end > set->t[i].begin) {
			rc = bad(err, file, "tensor '%s' overlaps tensor '%s'", set->t[i].name, set->t[i - 1].name);
			goto out;
		}
out:
	free(by_name);
	sb_release(&r.str);
	return rc;
}

/* The header length and its bounds. */
static int check_len(const char *file, const uint8_t *p8, uint64_t file_size, uint64_t *hlen, gw_error *err)
{
	uint64_t n = 0;
	for (int i = 0; i < 8; i++)
		n |= (uint64_t)p8[i] << (8 * i);
	if (n > ST_MAX_HEADER)
		return bad(err, file, "header length %llu is larger than the 100 MB limit", (unsigned long long)n);
	if (n > file_size - 8)
		return gw_fail(err, GW_ETRUNC, "cannot read '%s': header length %llu runs past the end of the file (%llu bytes)",
			       file, (unsigned long long)n, (unsigned long long)file_size);
	if (n < 2)
		return bad(err, file, "header of %llu bytes is too short", (unsigned long long)n);
	*hlen = n;
	return 0;
}

/* Read one file's header and add its tensors. */
static int read_file_header(const char *path, uint32_t shard, st_set *set, gw_error *err)
{
	uint8_t p8[8];
	char *text = NULL;
	struct stat st;
	uint64_t hlen;
	int rc;
	int fd = gw_open_regular(path, NULL, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		rc = gw_fail(err, GW_EIO, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (st.st_size < 8 || pread(fd, p8, 8, 0) != 8) {
		rc = gw_fail(err, GW_ETRUNC, "cannot read '%s': too short to be a safetensors file", path);
		goto out;
	}
	if ((rc = check_len(path, p8, (uint64_t)st.st_size, &hlen, err)))
		goto out;
	text = xmalloc((size_t)hlen);
	size_t got = 0;
	while (got < hlen) {
		ssize_t k = pread(fd, text + got, (size_t)hlen - got, (off_t)(8 + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = gw_fail(err, GW_EIO, "cannot read '%s': %s", path, k < 0 ? strerror(errno) : "short read");
			goto out;
		}
		got += (size_t)k;
	}
	rc = parse_header(path, text, (size_t)hlen, (uint64_t)st.st_size - 8 - hlen, shard, set, err);
out:
	free(text);
	close(fd);
	return rc;
}

/* "...model.layers.N." -> N, else -1. */
static long layer_index(const char *name)
{
	const char *p = strstr(name, "model.layers.");
	if (!p)
		return -1;
	p += strlen("model.layers.");
	if (*p < '0' || *p > '9')
		return -1;
	long n = 0;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (*p++ - '0');
		if (n >= (long)MODEL_MAX_LAYERS)
			return -1;
	}
	return *p == '.' ? n : -1;
}

/*
 * Turn the tensors into m: bytes by dtype, per layer, experts, embedding,
 * output; the shape from cfg (config.json) when given, else from names
 * and the embedding's shape.
 */
static void build(st_set *set, model_desc *cfg, model_desc *m)
{
	memset(m, 0, sizeof *m);
	if (cfg) {
		*m = *cfg; /* takes ownership of cfg's arrays */
		memset(cfg, 0, sizeof *cfg);
		free(m->path);
		m->path = NULL;
		free(m->name);
		m->name = NULL;
	}
	m->source = MODEL_SRC_SAFETENSORS;
	long max_layer = -1;
	for (size_t i = 0; i < set->n; i++) {
		long l = layer_index(set->t[i].name);
		if (l > max_layer)
			max_layer = l;
	}
	if (!m->n_layers)
		m->n_layers = (uint32_t)(max_layer + 1);
	model_alloc_layer_bytes(m, m->n_layers);

	uint64_t dt_bytes[ST_NDTYPES] = {0};
	double params = 0, exp_params = 0;
	bool has_head = false;
	for (size_t i = 0; i < set->n; i++) {
		const st_tensor *t = &set->t[i];
		uint64_t b = t->end - t->begin;
		long l = layer_index(t->name);
		dt_bytes[t->dtype] += b;
		params += (double)t->nel;
		m->total_bytes += b;
		if (l >= 0 && (uint32_t)l < m->n_layers) {
			m->layer_bytes[l] += b;
			if (strstr(t->name, ".experts.")) {
				m->layer_expert_bytes[l] += b;
				exp_params += (double)t->nel;
			}
		} else if (strstr(t->name, "embed_tokens.")) {
			m->embd_bytes += b;
			if (!cfg && t->dim1 && t->dim0 <= UINT32_MAX && t->dim1 <= UINT32_MAX) {
				/* [vocab, hidden] */
				m->vocab = (uint32_t)t->dim0;
				m->hidden = (uint32_t)t->dim1;
			}
		} else if (!strncmp(t->name, "lm_head.", 8) || strstr(t->name, "model.norm.")) {
			m->output_bytes += b;
			has_head |= !strncmp(t->name, "lm_head.", 8);
		} else {
			m->other_bytes += b;
		}
	}
	m->n_tensors = set->n;
	m->has_tensors = true;
	m->tied_embeddings = !has_head;
	m->params_total = params;
	m->params_active = m->n_experts && m->n_experts_used
				   ? params - exp_params + exp_params * m->n_experts_used / m->n_experts
				   : params;
	size_t nd = 0, best = 0;
	for (size_t i = 0; i < ST_NDTYPES; i++)
		nd += dt_bytes[i] != 0;
	m->dtype_names = xcalloc(nd + 1, sizeof *m->dtype_names);
	m->dtype_bytes = xcalloc(nd ? nd : 1, sizeof *m->dtype_bytes);
	for (size_t i = 0; i < ST_NDTYPES; i++) {
		if (!dt_bytes[i])
			continue;
		m->dtype_names[m->n_dtypes] = xstrdup(st_dtypes[i].name);
		m->dtype_bytes[m->n_dtypes++] = dt_bytes[i];
		if (dt_bytes[i] > dt_bytes[best])
			best = i;
	}
	free(m->file_type);
	m->file_type = nd ? xstrdup(st_dtypes[best].name) : NULL;
	if (!m->arch)
		m->arch = xstrdup("unknown");
	model_finish(m);
}

int safetensors_read_mem(const uint8_t *buf, size_t len, uint64_t file_size, model_desc *m, gw_error *err)
{
	const char *name = "(buffer)";
	st_set set = {0};
	uint64_t hlen;
	int rc;
	memset(m, 0, sizeof *m);
	if (file_size < len)
		file_size = len;
	if (len < 8)
		return gw_fail(err, GW_ETRUNC, "cannot read '%s': too short to be a safetensors file", name);
	if ((rc = check_len(name, buf, file_size, &hlen, err)))
		return rc;
	if (hlen > len - 8)
		return gw_fail(err, GW_ETRUNC, "cannot read '%s': header extends beyond the %zu bytes read", name, len);
	rc = parse_header(name, (const char *)buf + 8, (size_t)hlen, file_size - 8 - hlen, 0, &set, err);
	if (!rc)
		build(&set, NULL, m);
	set_release(&set);
	return rc;
}

static char *join(const char *dir, const char *file)
{
	size_t n = strlen(dir);
	return xasprintf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", file);
}

/*
 * Is there an entry at path?  Anything there (a FIFO, a directory, a
 * symlink loop) counts, so that its reader refuses it with a message
 * instead of it being skipped in silence.
 */
static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 || errno != ENOENT;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Where shards come from: files in a directory, or header bytes already
 * read (a repository on the Hub, safetensors_read_heads).
 */
typedef struct st_shards {
	const char *dir;               /* files under dir, when heads is NULL */
	const safetensors_head *heads; /* else these, found by name */
	size_t n_heads;
} st_shards;

/* One file's header from bytes already read: as read_file_header does from a file. */
static int read_head(const char *file, const safetensors_head *h, uint32_t shard, st_set *set, gw_error *err)
{
	uint64_t hlen;
	int rc;
	if (h->file_size < 8 || h->len < 8)
		return gw_fail(err, GW_ETRUNC, "cannot read '%s': too short to be a safetensors file", file);
	if ((rc = check_len(file, h->buf, h->file_size, &hlen, err)))
		return rc;
	if (hlen > h->len - 8)
		return gw_fail(err, GW_ETRUNC, "cannot read '%s': header extends beyond the %zu bytes read", file, h->len);
	return parse_header(file, (const char *)h->buf + 8, (size_t)hlen, h->file_size - 8 - hlen, shard, set, err);
}

/* Shard `name` (the idx-th) into set; *path gets its name for messages (malloc'd). */
static int read_shard(const st_shards *src, const char *name, uint32_t idx, st_set *set, char **path, gw_error *err)
{
	*path = join(src->dir, name);
	if (!src->heads)
		return read_file_header(*path, idx, set, err);
	for (size_t i = 0; i < src->n_heads; i++)
		if (!strcmp(src->heads[i].name, name))
			return read_head(*path, &src->heads[i], idx, set, err);
	return gw_fail(err, GW_ENOENT, "cannot read '%s': %s", *path, strerror(ENOENT));
}

/* The shards named by an index (its text); checks that each listed tensor is in its shard. */
static int read_index_text(const st_shards *src, const char *index, const char *text, size_t len, st_set *set,
			   gw_error *err)
{
	char jerr[200];
	json_t *root = NULL;
	const char **shards = NULL;
	size_t n_shards = 0, cap = 0;
	int rc = 0;
	root = json_parse_limited(text, len, jerr, sizeof jerr);
	if (!root) {
		rc = bad(err, index, "invalid JSON (%s)", jerr);
		goto out;
	}
	json_t *wm = json_object_get(root, "weight_map");
	if (!json_is_object(wm) || !json_object_size(wm)) {
		rc = bad(err, index, "no weight_map");
		goto out;
	}
	const char *key;
	json_t *val;
	json_object_foreach(wm, key, val) {
		const char *f = json_string_value(val);
		if (!f || !*f || strchr(f, '/') || !strcmp(f, "..") || !strcmp(f, ".")) {
			rc = bad(err, index, "tensor '%s' maps to an invalid shard name", key);
			goto out;
		}
		size_t j = 0;
		while (j < n_shards && strcmp(shards[j], f))
			j++;
		if (j == n_shards) {
			if (n_shards >= ST_MAX_SHARDS) {
				rc = bad(err, index, "more than %d shards", ST_MAX_SHARDS);
				goto out;
			}
			shards = xgrow(shards, &cap, n_shards + 1, sizeof *shards);
			shards[n_shards++] = f;
		}
	}
	for (size_t j = 0; j < n_shards; j++) {
		char *path = NULL;
		size_t first = set->n;
		rc = read_shard(src, shards[j], (uint32_t)j, set, &path, err);
		if (!rc) {
			/* every tensor the index puts in this shard is there */
			size_t n = set->n - first;
			const char **names = xcalloc(n ? n : 1, sizeof *names);
			for (size_t i = 0; i < n; i++)
				names[i] = set->t[first + i].name;
			qsort(names, n, sizeof *names, cmp_str);
			json_object_foreach(wm, key, val) {
				if (strcmp(json_string_value(val), shards[j]) ||
				    bsearch(&key, names, n, sizeof *names, cmp_str))
					continue;
				rc = bad(err, path, "tensor '%s' listed in the index is missing", key);
				break;
			}
			free(names);
		}
		free(path);
		if (rc)
			goto out;
	}
out:
	free(shards);
	json_decref(root);
	return rc;
}

/* The shards named by the index file at index (a path under dir). */
static int read_index(const char *dir, const char *index, st_set *set, gw_error *err)
{
	char *text = NULL;
	size_t len;
	st_shards src = {.dir = dir};
	int rc = gw_read_file(index, false, ST_MAX_INDEX, &text, &len, err);
	if (rc)
		return rc;
	rc = read_index_text(&src, index, text, len, set, err);
	free(text);
	return rc;
}

/* Every *.safetensors file of a directory without an index, in name order. */
static int read_all(const char *dir, st_set *set, gw_error *err)
{
	DIR *d = opendir(dir);
	char **files = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	if (!d)
		return gw_fail(err, GW_EIO, "cannot read '%s': %s", dir, strerror(errno));
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!str_ends(e->d_name, ".safetensors") || e->d_name[0] == '.')
			continue;
		if (n >= ST_MAX_SHARDS) {
			rc = bad(err, dir, "more than %d safetensors files", ST_MAX_SHARDS);
			goto out;
		}
		files = xgrow(files, &cap, n + 1, sizeof *files);
		files[n++] = xstrdup(e->d_name);
	}
	if (!n) {
		rc = gw_fail(err, GW_ENOENT, "cannot read '%s': no model.safetensors.index.json and no .safetensors files",
			     dir);
		goto out;
	}
	qsort(files, n, sizeof *files, cmp_str);
	for (size_t i = 0; i < n && !rc; i++) {
		char *path = join(dir, files[i]);
		rc = read_file_header(path, (uint32_t)i, set, err);
		free(path);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	closedir(d);
	return rc;
}

int safetensors_read(const char *path, model_desc *m, gw_error *err)
{
	st_set set = {0};
	model_desc cfg = {0};
	bool has_cfg = false;
	char *dir = NULL, *cfg_path = NULL, *index = NULL;
	struct stat st;
	int rc;
	memset(m, 0, sizeof *m);
	if (stat(path, &st))
		return gw_fail(err, GW_ENOENT, "cannot read '%s': %s", path, strerror(errno));
	bool is_dir = S_ISDIR(st.st_mode);
	if (is_dir) {
		dir = xstrdup(path);
	} else {
		dir = xstrdup(path);
		char *slash = strrchr(dir, '/');
		if (slash)
			slash[1] = '\0';
		else
			strcpy(dir, ".");
	}
	cfg_path = join(dir, "config.json");
	if (is_file(cfg_path)) {
		if ((rc = hfconfig_read(cfg_path, &cfg, err)))
			goto out;
		has_cfg = true;
	}
	if (!is_dir) {
		rc = read_file_header(path, 0, &set, err);
	} else {
		index = join(dir, "model.safetensors.index.json");
		if (is_file(index))
			rc = read_index(dir, index, &set, err);
		else
			rc = read_all(dir, &set, err);
	}
	if (rc)
		goto out;
	build(&set, has_cfg ? &cfg : NULL, m);
	m->path = xstrdup(path);
	m->name = model_base_name(path);
	if (!is_dir && !strcmp(m->name, "model")) {
		free(m->name);
		m->name = model_base_name(dir);
	}
out:
	model_release(&cfg);
	set_release(&set);
	free(dir);
	free(cfg_path);
	free(index);
	return rc;
}

static int cmp_head(const void *a, const void *b)
{
	return strcmp(((const safetensors_head *)a)->name, ((const safetensors_head *)b)->name);
}

int safetensors_read_heads(const char *display, const char *config, size_t config_len, const char *index,
			   size_t index_len, const safetensors_head *files, size_t n, model_desc *m, gw_error *err)
{
	st_set set = {0};
	model_desc cfg = {0};
	safetensors_head *sorted = NULL;
	st_shards src = {.dir = display, .heads = files, .n_heads = n};
	char *cfg_name = join(display, "config.json"), *index_name = join(display, "model.safetensors.index.json");
	int rc;
	memset(m, 0, sizeof *m);
	if (config && (rc = hfconfig_read_text(config, config_len, cfg_name, &cfg, err)))
		goto out;
	if (index) {
		rc = read_index_text(&src, index_name, index, index_len, &set, err);
	} else if (!n) {
		rc = gw_fail(err, GW_ENOENT, "cannot read '%s': no model.safetensors.index.json and no .safetensors files",
			     display);
	} else if (n > ST_MAX_SHARDS) {
		rc = bad(err, display, "more than %d safetensors files", ST_MAX_SHARDS);
	} else {
		/* as read_all: every file, in name order */
		sorted = xcalloc(n, sizeof *sorted);
		memcpy(sorted, files, n * sizeof *sorted);
		qsort(sorted, n, sizeof *sorted, cmp_head);
		rc = 0;
		for (size_t i = 0; i < n && !rc; i++) {
			char *path = join(display, sorted[i].name);
			rc = read_head(path, &sorted[i], (uint32_t)i, &set, err);
			free(path);
		}
	}
	if (rc)
		goto out;
	build(&set, config ? &cfg : NULL, m);
	m->name = xstrdup(display);
out:
	free(sorted);
	model_release(&cfg);
	set_release(&set);
	free(cfg_name);
	free(index_name);
	return rc;
}

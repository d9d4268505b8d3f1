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

static bool get_u64(json_t *j, uint64_t *v)
{
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

/* One tensor entry of a header. */
static int parse_entry(const char *file, const char *name, json_t *e, uint64_t data_len, st_tensor *t,
		       gw_error *err)
{
	if (!json_is_object(e))
		return bad(err, file, "tensor '%s' is not an object", name);
	const char *dt = json_string_value(json_object_get(e, "dtype"));
	json_t *shape = json_object_get(e, "shape"), *offs = json_object_get(e, "data_offsets");
	if (!dt)
		return bad(err, file, "tensor '%s' has no dtype", name);
	t->dtype = -1;
	for (size_t i = 0; i < ST_NDTYPES; i++)
		if (!strcmp(st_dtypes[i].name, dt))
			t->dtype = (int)i;
	if (t->dtype < 0)
		return bad(err, file, "tensor '%s' has unknown dtype '%.32s'", name, dt);
	if (!json_is_array(shape) || json_array_size(shape) > ST_MAX_DIMS)
		return bad(err, file, "tensor '%s' has no valid shape", name);
	uint64_t nel = 1;
	for (size_t i = 0; i < json_array_size(shape); i++) {
		uint64_t d;
		if (!get_u64(json_array_get(shape, i), &d))
			return bad(err, file, "tensor '%s' has a negative or non-integer dimension", name);
		if (__builtin_mul_overflow(nel, d, &nel))
			return bad(err, file, "tensor '%s' has a shape whose element count overflows", name);
		if (i == 0)
			t->dim0 = d;
		if (i == 1)
			t->dim1 = d;
	}
	if (!json_is_array(offs) || json_array_size(offs) != 2 || !get_u64(json_array_get(offs, 0), &t->begin) ||
	    !get_u64(json_array_get(offs, 1), &t->end))
		return bad(err, file, "tensor '%s' has no valid data_offsets", name);
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

/*
 * Parse one header (JSON text of len bytes, data_len bytes of data after
 * it) and append its tensors to set.  *root_out (optional) keeps the JSON.
 */
static int parse_header(const char *file, const char *text, size_t len, uint64_t data_len, uint32_t shard,
			st_set *set, json_t **root_out, gw_error *err)
{
	json_error_t je;
	int rc = 0;
	size_t first = set->n;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return bad(err, file, "invalid JSON header (%s)", je.text);
	if (!json_is_object(root)) {
		rc = bad(err, file, "the header is not a JSON object");
		goto out;
	}
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val) {
		if (!strcmp(key, "__metadata__"))
			continue;
		st_tensor t = {0};
		if ((rc = parse_entry(file, key, val, data_len, &t, err)))
			goto out;
		t.name = xstrdup(key);
		t.shard = shard;
		set->t = xgrow(set->t, &set->cap, set->n + 1, sizeof *set->t);
		set->t[set->n++] = t;
	}
	/* no two tensors of this file may share bytes */
	if (set->n - first > 1)
		qsort(set->t + first, set->n - first, sizeof *set->t, cmp_begin);
	for (size_t i = first + 1; i < set->n; i++)
		if (set->t[i].begin < set->t[i - 1].end && set->t[i].end > set->t[i].begin) {
			rc = bad(err, file, "tensor '%s' overlaps tensor '%s'", set->t[i].name, set->t[i - 1].name);
			goto out;
		}
out:
	if (!rc && root_out)
		*root_out = root;
	else
		json_decref(root);
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
static int read_file_header(const char *path, uint32_t shard, st_set *set, json_t **root, gw_error *err)
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
	rc = parse_header(path, text, (size_t)hlen, (uint64_t)st.st_size - 8 - hlen, shard, set, root, err);
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
	rc = parse_header(name, (const char *)buf + 8, (size_t)hlen, file_size - 8 - hlen, 0, &set, NULL, err);
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

/* The shards named by an index; checks that each listed tensor is in its shard. */
static int read_index(const char *dir, const char *index, st_set *set, gw_error *err)
{
	char *text = NULL, jerr[200];
	size_t len;
	json_t *root = NULL;
	const char **shards = NULL;
	size_t n_shards = 0, cap = 0;
	int rc = gw_read_file(index, false, ST_MAX_INDEX, &text, &len, err);
	if (rc)
		return rc;
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
		char *path = join(dir, shards[j]);
		json_t *hdr = NULL;
		rc = read_file_header(path, (uint32_t)j, set, &hdr, err);
		if (!rc) {
			json_object_foreach(wm, key, val) {
				if (strcmp(json_string_value(val), shards[j]) || json_object_get(hdr, key))
					continue;
				rc = bad(err, path, "tensor '%s' listed in the index is missing", key);
				break;
			}
		}
		json_decref(hdr);
		free(path);
		if (rc)
			goto out;
	}
out:
	free(shards);
	json_decref(root);
	free(text);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
		rc = read_file_header(path, (uint32_t)i, set, NULL, err);
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
		rc = read_file_header(path, 0, &set, NULL, err);
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

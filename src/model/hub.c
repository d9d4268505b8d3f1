/*
 * hub.c: models on the Hugging Face Hub and in Ollama's registry, read by
 * their headers only (issue 32).
 *
 * The Hub (huggingface_hub's own protocol, file_download.py / hf_api.py):
 *   GET {HF_ENDPOINT}/api/models/ORG/NAME/revision/REV  -> {"sha", "siblings": [{"rfilename"}]}
 *   GET {HF_ENDPOINT}/ORG/NAME/resolve/SHA/FILE         -> the file (large files redirect to a CDN)
 *   errors carry X-Error-Code: RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo.
 * Ollama's registry (the Docker registry API v2, as `ollama pull` uses it):
 *   GET {registry}/v2/NS/NAME/manifests/TAG  -> layers; the GGUF is the one of
 *       mediaType application/vnd.ollama.image.model, num_ctx in ...image.params
 *   GET {registry}/v2/NS/NAME/blobs/DIGEST   -> the blob (redirects to a CDN)
 * Both serve byte ranges (RFC 9110 Range / Content-Range), so a safetensors
 * file costs its 8-byte length and JSON header, a GGUF file its header and
 * tensor table, whatever the size of the weights.
 *
 * Cache, under net_cache_dir():
 *   hf/ORG--NAME/refs/REV          the commit REV pointed to (kept a day)
 *   hf/ORG--NAME/SHA/info.json     the file list at that commit
 *   hf/ORG--NAME/SHA/FILE          config.json, the safetensors index (whole)
 *   hf/ORG--NAME/SHA/FILE.head     8 bytes of file size (LE), then the file's first bytes
 *   ollama/HOST/NS/NAME/TAG.json   the manifest (kept a day)
 *   ollama/HOST/blobs/sha256-HEX[.head]  the params blob, a model blob's first bytes
 * Everything under a commit or a digest never changes; a run whose names
 * are all there makes no request.
 */
#include "model/hub.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "model/internal.h"
#include "util/json.h"

#define HUB_REF_TTL_S (24L * 3600)      /* a branch or tag is asked again after a day */
#define HUB_MAX_SMALL (16u << 20)       /* config.json, an index, the file list */
#define HUB_GGUF_FIRST (128u << 10)     /* the first GGUF read; then doubling */
#define HUB_ST_FIRST (64u << 10)        /* the first safetensors read; then the header's own length */
#define HUB_ST_MAX_HEADER (100ULL << 20) /* safetensors' own limit (MAX_HEADER_SIZE) */
#define HUB_MAX_FILES 4096

/* ---- names ------------------------------------------------------------- */

static bool name_char(int c)
{
	return isalnum(c) || c == '-' || c == '_' || c == '.';
}

/* [A-Za-z0-9._-]+ of at most max-1 bytes, not starting with '.' or '-' */
static bool copy_part(const char *s, size_t n, char *out, size_t max)
{
	if (!n || n >= max || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char((unsigned char)s[i]))
			return false;
	memcpy(out, s, n);
	out[n] = 0;
	return true;
}

static const char *skip_prefix(const char *s, const char *const *prefixes)
{
	for (size_t i = 0; prefixes[i]; i++)
		if (!strncasecmp(s, prefixes[i], strlen(prefixes[i])))
			return s + strlen(prefixes[i]);
	return NULL;
}

bool hub_parse(const char *arg, hub_name *out)
{
	static const char *const hf_prefixes[] = {"https://huggingface.co/", "http://huggingface.co/",
		"https://hf.co/", "huggingface.co/", "hf.co/", NULL};
	static const char *const ol_prefixes[] = {"https://ollama.com/", "https://registry.ollama.ai/", "ollama.com/",
		"registry.ollama.ai/", NULL};
	hub_name n = {0};
	const char *s, *colon, *slash;
	if (!arg || !*arg || strlen(arg) > 400)
		return false;
	if ((s = skip_prefix(arg, ol_prefixes))) {
		/* ollama.com/NS/NAME[:TAG] or ollama.com/NAME[:TAG] (library) */
		n.kind = HUB_OLLAMA;
		slash = strchr(s, '/');
		colon = strchr(s, ':');
		char ns[100] = "library", nm[128];
		if (slash && (!colon || slash < colon)) {
			if (!copy_part(s, (size_t)(slash - s), ns, sizeof ns))
				return false;
			s = slash + 1;
			colon = strchr(s, ':');
		}
		size_t k = colon ? (size_t)(colon - s) : strlen(s);
		if (strchr(s, '/') || !copy_part(s, k, nm, sizeof nm))
			return false;
		snprintf(n.repo, sizeof n.repo, "%s/%s", ns, nm);
		if (!copy_part(colon ? colon + 1 : "latest", colon ? strlen(colon + 1) : 6, n.rev, sizeof n.rev))
			return false;
		*out = n;
		return true;
	}
	s = skip_prefix(arg, hf_prefixes);
	if (!s && (arg[0] == '/' || arg[0] == '.' || arg[0] == '~'))
		return false; /* a path */
	if (!s)
		s = arg;
	slash = strchr(s, '/');
	if (slash) {
		/* ORG/NAME[@REV][:QUANT] */
		n.kind = HUB_HF;
		const char *end = s + strlen(s);
		colon = strchr(slash, ':');
		const char *at = strchr(slash, '@');
		if (colon) {
			if (!copy_part(colon + 1, strlen(colon + 1), n.quant, sizeof n.quant))
				return false;
			end = colon;
		}
		if (at && at < end) {
			if (!copy_part(at + 1, (size_t)(end - at - 1), n.rev, sizeof n.rev))
				return false;
			end = at;
		} else {
			strcpy(n.rev, "main");
		}
		char org[100], nm[128];
		if (!copy_part(s, (size_t)(slash - s), org, sizeof org) ||
		    !copy_part(slash + 1, (size_t)(end - slash - 1), nm, sizeof nm) || strchr(nm, '/'))
			return false;
		/* dir/model.gguf is a path that is not there, not a repository */
		if (str_ends(nm, ".gguf") || str_ends(nm, ".safetensors") || str_ends(nm, ".json"))
			return false;
		snprintf(n.repo, sizeof n.repo, "%s/%s", org, nm);
		*out = n;
		return true;
	}
	colon = strchr(s, ':');
	if (!colon || s != arg)
		return false;
	/* NAME:TAG, a model of Ollama's library */
	n.kind = HUB_OLLAMA;
	char nm[128];
	if (!copy_part(s, (size_t)(colon - s), nm, sizeof nm) || !copy_part(colon + 1, strlen(colon + 1), n.rev, sizeof n.rev))
		return false;
	snprintf(n.repo, sizeof n.repo, "library/%s", nm);
	*out = n;
	return true;
}

/* ---- the context of one load -------------------------------------------- */

typedef struct hub_ctx {
	net_ctx net;
	bool net_ready;
	bool offline;
	char offline_why[200];
	char *cache;           /* NULL: no cache directory */
	const hub_opts *o;
	const hub_name *nm;
	char *base;            /* the Hub's endpoint or the registry, no trailing '/' */
	char *token;           /* HF_TOKEN */
} hub_ctx;

static bool env_true(const char *name)
{
	const char *v = getenv(name);
	return v && (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true"));
}

static int need_net(hub_ctx *c, gw_error *err)
{
	if (c->offline)
		return gw_fail(err, GW_EUNREACH, "offline (%s)", c->offline_why);
	if (c->net_ready)
		return 0;
	int rc = net_open(&c->net, err);
	if (rc)
		return rc;
	c->net_ready = true;
	c->net.progress = c->o ? c->o->progress : NULL;
	c->net.progress_ctx = c->o ? c->o->progress_ctx : NULL;
	if (c->token)
		c->net.bearer = xstrdup(c->token);
	return 0;
}

static char *cpath(const hub_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *cpath(const hub_ctx *c, const char *fmt, ...)
{
	if (!c->cache)
		return NULL;
	strbuf sb = STRBUF_INIT;
	va_list ap;
	sb_puts(&sb, c->cache);
	sb_puts(&sb, "/");
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	return sb_detach(&sb);
}

/* A file name of a repository as one cache path component: '%' and '/' escaped. */
static char *cache_name(const char *file)
{
	strbuf sb = STRBUF_INIT;
	for (const char *p = file; *p; p++) {
		if (*p == '/')
			sb_puts(&sb, "%2F");
		else if (*p == '%')
			sb_puts(&sb, "%25");
		else
			sb_add(&sb, p, 1);
	}
	return sb_detach(&sb);
}

/* A cached file, when present (and younger than ttl_s unless offline or ttl_s is 0). */
static bool cache_read(const hub_ctx *c, const char *path, long ttl_s, char **data, size_t *len)
{
	struct stat st;
	if (!path || stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	if (ttl_s > 0 && !c->offline && time(NULL) - st.st_mtime > ttl_s)
		return false;
	return gw_read_file(path, false, HUB_MAX_SMALL + 16 + HUB_MAX_HEADER, data, len, NULL) == 0;
}

static void cache_write(const char *path, const void *data, size_t len)
{
	if (path)
		(void)net_write_file(path, data, len); /* a cache that cannot be written only costs requests */
}

/* ---- HTTP statuses into errors ------------------------------------------ */

static int http_fail(hub_ctx *c, const net_resp *r, const char *what, gw_error *err)
{
	const char *code = r->error_code;
	const char *repo = c->nm->repo;
	if (c->nm->kind == HUB_OLLAMA) {
		if (r->status == 404)
			return gw_fail(err, GW_EGONE, "Ollama's registry has no '%s' (HTTP 404 for '%s')", repo, what);
		if (r->status == 401 || r->status == 403)
			return gw_fail(err, GW_EDENIED, "Ollama's registry refused '%s' (HTTP %ld)", what, r->status);
		return gw_fail(err, GW_ENET, "cannot read '%s': HTTP %ld from the registry", what, r->status);
	}
	if (!strcmp(code, "GatedRepo") || (r->status == 403 && !strcmp(code, "")))
		return gw_fail(err, GW_EDENIED,
			       "'%s' is gated: accept the licence on the model page (%s/%s) and set HF_TOKEN (HTTP %ld)",
			       repo, c->base, repo, r->status);
	if (!strcmp(code, "RepoNotFound"))
		return gw_fail(err, GW_EGONE, "no repository '%s' on %s (a private one needs HF_TOKEN) (HTTP %ld)", repo,
			       c->base, r->status);
	if (!strcmp(code, "RevisionNotFound"))
		return gw_fail(err, GW_EGONE, "no revision '%s' of '%s' (HTTP %ld)", c->nm->rev, repo, r->status);
	if (!strcmp(code, "EntryNotFound") || r->status == 404)
		return gw_fail(err, GW_EGONE, "cannot read '%s': not found (HTTP %ld)", what, r->status);
	if (r->status == 401)
		return gw_fail(err, GW_EDENIED, "'%s' needs a token: set HF_TOKEN (HTTP 401 for '%s')", repo, what);
	if (r->status == 403)
		return gw_fail(err, GW_EDENIED, "access to '%s' denied (HTTP 403)", what);
	return gw_fail(err, GW_ENET, "cannot read '%s': HTTP %ld from %s", what, r->status, c->base);
}

/*
 * A small file in whole, through the cache (key: its cache path; ttl_s 0:
 * for ever).  *out is malloc'd and NUL-terminated.
 */
static int get_small(hub_ctx *c, const char *key, long ttl_s, const char *url, const char *accept, const char *what,
		     char **out, size_t *len, gw_error *err)
{
	net_resp r;
	int rc;
	if (cache_read(c, key, ttl_s, out, len))
		return 0;
	if ((rc = need_net(c, err)))
		return rc;
	if ((rc = net_get(&c->net, url, 0, 0, HUB_MAX_SMALL, accept, what, &r, err)))
		return rc;
	if (r.status != 200) {
		rc = http_fail(c, &r, what, err);
		net_resp_release(&r);
		return rc;
	}
	cache_write(key, r.body, r.len);
	*out = (char *)r.body;
	*len = r.len;
	free(r.final_url);
	return 0;
}

/* ---- a remote file's first bytes ------------------------------------------ */

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int hub_prefix_grow(void *ctx, uint64_t need, const uint8_t **buf, size_t *len, gw_error *err)
{
	hub_prefix *p = ctx;
	while (p->buf.len < need) {
		if (p->size && need > p->size)
			return gw_fail(err, GW_ETRUNC,
				       "cannot read '%s': truncated header: it needs %llu bytes, the file has %llu", p->what,
				       (unsigned long long)need, (unsigned long long)p->size);
		if (need > p->max)
			return gw_fail(err, GW_EFORMAT,
				       "cannot read '%s': the header runs past %llu MiB (to offset %llu): not read further, "
				       "that would be the weights", p->what, (unsigned long long)(p->max >> 20),
				       (unsigned long long)need);
		uint64_t have = p->buf.len;
		uint64_t to = have * 2 > need ? have * 2 : need;
		if (to < p->first)
			to = p->first;
		if (to > p->max)
			to = p->max;
		if (p->size && to > p->size)
			to = p->size;
		int rc = p->fetch(p->ctx, have, to, &p->buf, &p->size, err);
		if (rc)
			return rc;
		if (p->buf.len == have && (!p->size || p->size > have))
			return gw_fail(err, GW_ENET, "cannot read '%s': the server sent no bytes from offset %llu", p->what,
				       (unsigned long long)have);
	}
	*buf = (const uint8_t *)p->buf.buf;
	*len = p->buf.len;
	return 0;
}

typedef struct remote_file {
	hub_ctx *c;
	const char *url;
	const char *what;
	char *cdn;      /* where url redirected the last range to (the Hub's CDN) */
} remote_file;

/* hub_fetch_fn over HTTP. */
static int remote_fetch(void *ctx, uint64_t from, uint64_t to, strbuf *out, uint64_t *size, gw_error *err)
{
	remote_file *f = ctx;
	net_resp r;
	int rc;
	if ((rc = need_net(f->c, err)))
		return rc;
	/* the next ranges go straight to the CDN the first one was sent to
	 * (one request each instead of two); a CDN that refuses (its signed
	 * URL expired) sends us back through the original URL */
	if (f->cdn) {
		char *bearer = f->c->net.bearer; /* the token is the Hub's, never the CDN's */
		f->c->net.bearer = NULL;
		rc = net_get(&f->c->net, f->cdn, from, to, 0, NULL, f->what, &r, err);
		f->c->net.bearer = bearer;
		if (rc || (r.status != 206 && r.status != 200 && r.status != 416)) {
			if (!rc)
				net_resp_release(&r);
			free(f->cdn);
			f->cdn = NULL;
		}
	}
	if (!f->cdn && (rc = net_get(&f->c->net, f->url, from, to, 0, NULL, f->what, &r, err)))
		return rc;
	if (!f->cdn && r.status == 206 && r.final_url && strcmp(r.final_url, f->url) &&
	    !(str_starts(f->url, "https://") && !str_starts(r.final_url, "https://")))
		f->cdn = xstrdup(r.final_url);
	if (r.status == 206) {
		if (!r.range_total) {
			net_resp_release(&r);
			return gw_fail(err, GW_ENET, "cannot read '%s': a byte range without its file size (Content-Range)",
				       f->what);
		}
		*size = r.range_total;
		sb_add(out, (const char *)r.body, r.len);
	} else if (r.status == 200) {
		/* the whole file, when it is smaller than the range asked */
		*size = r.len;
		if (r.len > from)
			sb_add(out, (const char *)r.body + from, r.len - from);
	} else if (r.status == 416) {
		*size = r.range_total ? r.range_total : from; /* asked past the end */
	} else {
		rc = http_fail(f->c, &r, f->what, err);
	}
	net_resp_release(&r);
	return rc;
}

/* A prefix from the cache: 8 bytes of size, then the bytes. */
static void prefix_from_cache(const hub_ctx *c, const char *key, hub_prefix *p)
{
	char *data;
	size_t len;
	if (!cache_read(c, key, 0, &data, &len))
		return;
	if (len >= 8) {
		p->size = le64((const uint8_t *)data);
		sb_add(&p->buf, data + 8, len - 8);
	}
	free(data);
}

static void prefix_to_cache(const char *key, const hub_prefix *p, size_t cached_len)
{
	if (!key || p->buf.len == cached_len)
		return;
	uint8_t *data = xmalloc(p->buf.len + 8);
	for (int i = 0; i < 8; i++)
		data[i] = (uint8_t)(p->size >> (8 * i));
	memcpy(data + 8, p->buf.buf, p->buf.len);
	cache_write(key, data, p->buf.len + 8);
	free(data);
}

/* ---- reading the two formats -------------------------------------------- */

/* A GGUF file by its URL, its prefix cached under key. */
static int read_gguf(hub_ctx *c, const char *url, const char *key, const char *what, model_desc *m,
		     uint64_t *file_bytes, gw_error *err)
{
	remote_file f = {.c = c, .url = url, .what = what};
	hub_prefix p = {.fetch = remote_fetch, .ctx = &f, .what = what, .max = HUB_MAX_HEADER, .first = HUB_GGUF_FIRST};
	const uint8_t *b;
	size_t blen;
	prefix_from_cache(c, key, &p);
	size_t cached = p.buf.len;
	int rc = hub_prefix_grow(&p, 4, &b, &blen, err); /* learns the size */
	if (!rc)
		rc = gguf_read_grow(what, p.size, hub_prefix_grow, &p, m, err);
	if (!rc) {
		prefix_to_cache(key, &p, cached);
		*file_bytes = p.size;
	}
	free(f.cdn);
	sb_release(&p.buf);
	return rc;
}

/* A safetensors file's header: its first 8 + length bytes. */
static int read_st_head(hub_ctx *c, const char *url, const char *key, const char *what, hub_prefix *p, gw_error *err)
{
	remote_file f = {.c = c, .url = url, .what = what}; /* p->ctx points here only while reading */
	const uint8_t *b;
	size_t blen;
	*p = (hub_prefix){.fetch = remote_fetch, .ctx = &f, .what = what, .max = 8 + HUB_ST_MAX_HEADER,
			  .first = HUB_ST_FIRST};
	prefix_from_cache(c, key, p);
	size_t cached = p->buf.len;
	int rc = hub_prefix_grow(p, 8, &b, &blen, err);
	if (!rc) {
		uint64_t hlen = le64(b);
		/* a length past the limit or the file is the reader's to refuse */
		if (hlen <= HUB_ST_MAX_HEADER && p->size >= 8 && hlen <= p->size - 8)
			rc = hub_prefix_grow(p, 8 + hlen, &b, &blen, err);
	}
	if (!rc)
		prefix_to_cache(key, p, cached);
	free(f.cdn);
	p->ctx = NULL;
	return rc;
}

/* ---- the Hugging Face Hub ----------------------------------------------- */

static bool is_sha(const char *s)
{
	size_t n = strlen(s);
	if (n != 40)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A repository file name we accept: no empty, '.' or '..' part, no control characters. */
static bool safe_file(const char *f)
{
	if (!*f || strlen(f) > 1000 || f[0] == '/')
		return false;
	for (const char *p = f; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '\\')
			return false;
	char *dup = xstrdup(f), *save = NULL;
	bool ok = true;
	for (char *t = strtok_r(dup, "/", &save); t; t = strtok_r(NULL, "/", &save))
		if (!strcmp(t, ".") || !strcmp(t, ".."))
			ok = false;
	free(dup);
	return ok && !str_ends(f, "/") && !strstr(f, "//");
}

/* URL-escape a path (keeps '/'). */
static char *url_path(const char *s)
{
	strbuf sb = STRBUF_INIT;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~/", *p))
			sb_add(&sb, (const char *)p, 1);
		else
			sb_printf(&sb, "%%%02X", *p);
	}
	return sb_detach(&sb);
}

typedef struct file_list {
	char **v;
	size_t n, cap;
} file_list;

static void files_release(file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

static bool files_has(const file_list *l, const char *f)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], f))
			return true;
	return false;
}

static void files_add(file_list *l, const char *f)
{
	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = xstrdup(f);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Parse the API's answer: the commit and the file names. */
static int parse_info(const char *text, size_t len, const char *what, char *sha, size_t shan, file_list *files,
		      gw_error *err)
{
	char jerr[160];
	json_t *root = json_parse_limited(text, len, jerr, sizeof jerr);
	if (!root)
		return gw_fail(err, GW_ENET, "cannot read '%s': invalid JSON (%s)", what, jerr);
	int rc = 0;
	const char *s = json_string_value(json_object_get(root, "sha"));
	json_t *sib = json_object_get(root, "siblings");
	if (!s || !is_sha(s) || !json_is_array(sib)) {
		rc = gw_fail(err, GW_ENET, "cannot read '%s': no commit or file list in the reply", what);
		goto out;
	}
	snprintf(sha, shan, "%s", s);
	size_t i;
	json_t *e;
	json_array_foreach(sib, i, e) {
		const char *f = json_string_value(json_object_get(e, "rfilename"));
		if (!f || !safe_file(f))
			continue;
		if (files->n >= HUB_MAX_FILES) {
			rc = gw_fail(err, GW_EFORMAT, "cannot read '%s': more than %d files", what, HUB_MAX_FILES);
			goto out;
		}
		files_add(files, f);
	}
	qsort(files->v, files->n, sizeof *files->v, cmp_str);
out:
	json_decref(root);
	return rc;
}

static const char *base_name(const char *f)
{
	const char *s = strrchr(f, '/');
	return s ? s + 1 : f;
}

/* Does file name f hold quant q as a token ("...-Q4_K_M.gguf", "Q4_K_M/...")? */
static bool has_quant(const char *f, const char *q)
{
	size_t n = strlen(q);
	for (const char *p = f; (p = strcasestr(p, q)); p++) {
		bool before = p == f || !isalnum((unsigned char)p[-1]);
		char a = p[n];
		bool after = !isalnum((unsigned char)a) && a != '_';
		if (before && after)
			return true;
	}
	return false;
}

static bool is_gguf(const char *f)
{
	return str_ends(f, ".gguf") && !strcasestr(base_name(f), "mmproj");
}

static bool is_split(const char *f)
{
	const char *p = strstr(f, "-of-");
	return p && p - f >= 6 && str_ends(f, ".gguf") && isdigit((unsigned char)p[-1]) && isdigit((unsigned char)p[4]);
}

/* Which GGUF file: the one named by the quantization, else the only one, else Q4_K_M (as `ollama pull hf.co/...`). */
static int pick_gguf(const hub_ctx *c, const file_list *files, const char *quant, char **pick, gw_error *err)
{
	file_list hits = {0};
	int rc = 0;
	const char *q = *quant ? quant : NULL;
	for (size_t i = 0; i < files->n; i++)
		if (is_gguf(files->v[i]) && (!q || has_quant(files->v[i], q)))
			files_add(&hits, files->v[i]);
	if (!q && hits.n > 1) {
		file_list q4 = {0};
		for (size_t i = 0; i < hits.n; i++)
			if (has_quant(hits.v[i], "Q4_K_M"))
				files_add(&q4, hits.v[i]);
		if (q4.n) {
			files_release(&hits);
			hits = q4;
		} else {
			files_release(&q4);
		}
	}
	if (!hits.n) {
		if (q)
			rc = gw_fail(err, GW_EGONE, "no GGUF file of '%s' is quantized %s", c->nm->repo, q);
		else
			rc = gw_fail(err, GW_EFORMAT, "'%s' has no safetensors or GGUF file", c->nm->repo);
	} else if (is_split(hits.v[0])) {
		rc = gw_fail(err, GW_ENOTSUP, "'%s' is a split GGUF (%s): split files are not read yet", c->nm->repo,
			     hits.v[0]);
	} else if (hits.n > 1) {
		strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < hits.n && i < 4; i++)
			sb_printf(&sb, "%s%s", i ? ", " : "", base_name(hits.v[i]));
		rc = gw_fail(err, GW_EINVAL, "'%s' has %zu GGUF files (%s%s): name one with %s:QUANT or --file",
			     c->nm->repo, hits.n, sb_str(&sb), hits.n > 4 ? ", ..." : "", c->nm->repo);
		sb_release(&sb);
	} else {
		*pick = xstrdup(hits.v[0]);
	}
	files_release(&hits);
	return rc;
}

/* The shards an index names, in its order of first mention (as the local reader). */
static int index_shards(const char *text, size_t len, const char *what, file_list *out, gw_error *err)
{
	char jerr[160];
	json_t *root = json_parse_limited(text, len, jerr, sizeof jerr);
	if (!root)
		return gw_fail(err, GW_EFORMAT, "cannot read '%s': invalid JSON (%s)", what, jerr);
	json_t *wm = json_object_get(root, "weight_map"), *v;
	const char *k;
	int rc = 0;
	json_object_foreach(wm, k, v) {
		const char *f = json_string_value(v);
		if (!f || !safe_file(f) || strchr(f, '/'))
			continue; /* the reader names the bad entry */
		if (!files_has(out, f)) {
			if (out->n >= HUB_MAX_FILES) {
				rc = gw_fail(err, GW_EFORMAT, "cannot read '%s': more than %d shards", what, HUB_MAX_FILES);
				break;
			}
			files_add(out, f);
		}
	}
	json_decref(root);
	return rc;
}

static int hf_load(hub_ctx *c, model_desc *m, hub_result *res, gw_error *err)
{
	const hub_name *nm = c->nm;
	char org_name[300], sha[64], *text = NULL, *key = NULL, *url = NULL, *what = NULL;
	size_t len;
	file_list files = {0}, shards = {0};
	char *pick = NULL, *cfg = NULL, *index = NULL, *dir = NULL;
	size_t cfg_len = 0, index_len = 0;
	hub_prefix *heads = NULL;
	safetensors_head *sh = NULL;
	int rc;

	const char *sl = strchr(nm->repo, '/');
	snprintf(org_name, sizeof org_name, "%.*s--%s", (int)(sl - nm->repo), nm->repo, sl + 1);

	/* the commit the revision names, and the file list there */
	if (is_sha(nm->rev)) {
		snprintf(sha, sizeof sha, "%s", nm->rev);
	} else {
		char *ref = cpath(c, "hf/%s/refs/%s", org_name, nm->rev);
		sha[0] = 0;
		if (cache_read(c, ref, HUB_REF_TTL_S, &text, &len)) {
			snprintf(sha, sizeof sha, "%.*s", (int)(len < 40 ? len : 40), text);
			free(text);
			text = NULL;
			if (!is_sha(sha))
				sha[0] = 0;
		}
		if (!sha[0]) {
			url = xasprintf("%s/api/models/%s/revision/%s", c->base, nm->repo, nm->rev);
			what = xasprintf("%s (%s)", nm->repo, nm->rev);
			rc = need_net(c, err);
			net_resp r;
			if (!rc && !(rc = net_get(&c->net, url, 0, 0, HUB_MAX_SMALL, "application/json", what, &r, err))) {
				if (r.status != 200)
					rc = http_fail(c, &r, what, err);
				else if (!(rc = parse_info((const char *)r.body, r.len, what, sha, sizeof sha, &files, err))) {
					char *ik = cpath(c, "hf/%s/%s/info.json", org_name, sha);
					cache_write(ik, r.body, r.len);
					free(ik);
					cache_write(ref, sha, strlen(sha));
				}
				net_resp_release(&r);
			}
			free(url);
			free(what);
			url = what = NULL;
			if (rc) {
				free(ref);
				goto out;
			}
		}
		free(ref);
	}
	if (!files.n) {
		key = cpath(c, "hf/%s/%s/info.json", org_name, sha);
		url = xasprintf("%s/api/models/%s/revision/%s", c->base, nm->repo, sha);
		what = xasprintf("%s (%s)", nm->repo, sha);
		char got[64];
		if ((rc = get_small(c, key, 0, url, "application/json", what, &text, &len, err)) ||
		    (rc = parse_info(text, len, what, got, sizeof got, &files, err)))
			goto out;
		free(text);
		free(key);
		free(url);
		free(what);
		text = key = url = what = NULL;
	}
	snprintf(res->revision, sizeof res->revision, "%s", sha);
	snprintf(res->url, sizeof res->url, "%s/%s", c->base, nm->repo);

	/* which files */
	const char *want = c->o && c->o->file ? c->o->file : NULL;
	bool st = false;
	if (want) {
		if (!files_has(&files, want)) {
			rc = gw_fail(err, GW_EGONE, "no file '%s' in '%s' at %.12s", want, nm->repo, sha);
			goto out;
		}
		if (str_ends(want, ".safetensors")) {
			st = true;
			files_add(&shards, want);
		} else if (str_ends(want, ".gguf")) {
			pick = xstrdup(want);
		} else {
			rc = gw_fail(err, GW_EINVAL, "--file '%s': not a .gguf or .safetensors file", want);
			goto out;
		}
	} else if (!nm->quant[0]) {
		for (size_t i = 0; i < files.n; i++)
			if (str_ends(files.v[i], ".safetensors") && !strchr(files.v[i], '/'))
				st = true;
	}
	if (st) {
		/* config.json beside the file(s), the index, the shards */
		dir = xstrdup(shards.n ? shards.v[0] : "");
		char *slash = strrchr(dir, '/');
		if (slash)
			slash[1] = 0;
		else
			dir[0] = 0;
		char cfg_file[1100], idx_file[1100];
		snprintf(cfg_file, sizeof cfg_file, "%sconfig.json", dir);
		snprintf(idx_file, sizeof idx_file, "%smodel.safetensors.index.json", dir);
		const char *small[2] = {cfg_file, shards.n ? NULL : idx_file};
		char **dst[2] = {&cfg, &index};
		size_t *dlen[2] = {&cfg_len, &index_len};
		for (int i = 0; i < 2; i++) {
			if (!small[i] || !files_has(&files, small[i]))
				continue;
			char *cn = cache_name(small[i]), *up = url_path(small[i]);
			key = cpath(c, "hf/%s/%s/%s", org_name, sha, cn);
			url = xasprintf("%s/%s/resolve/%s/%s", c->base, nm->repo, sha, up);
			what = xasprintf("%s/%s", nm->repo, small[i]);
			free(cn);
			free(up);
			rc = get_small(c, key, 0, url, NULL, what, dst[i], dlen[i], err);
			free(key);
			free(url);
			free(what);
			key = url = what = NULL;
			if (rc)
				goto out;
		}
		if (index) {
			char iw[400];
			snprintf(iw, sizeof iw, "%s/%s", nm->repo, idx_file);
			if ((rc = index_shards(index, index_len, iw, &shards, err)))
				goto out;
		} else if (!shards.n) {
			for (size_t i = 0; i < files.n; i++)
				if (str_ends(files.v[i], ".safetensors") && !strchr(files.v[i], '/'))
					files_add(&shards, files.v[i]);
		}
		heads = xcalloc(shards.n ? shards.n : 1, sizeof *heads);
		sh = xcalloc(shards.n ? shards.n : 1, sizeof *sh);
		for (size_t i = 0; i < shards.n; i++) {
			char file[1200];
			snprintf(file, sizeof file, "%s%s", strchr(shards.v[i], '/') ? "" : dir, shards.v[i]);
			if (!files_has(&files, file)) {
				rc = gw_fail(err, GW_EGONE, "cannot read '%s/%s': the index names it, the repository has no such file",
					     nm->repo, file);
				goto out;
			}
			char *cn = cache_name(file), *up = url_path(file);
			key = cpath(c, "hf/%s/%s/%s.head", org_name, sha, cn);
			url = xasprintf("%s/%s/resolve/%s/%s", c->base, nm->repo, sha, up);
			what = xasprintf("%s/%s", nm->repo, file);
			free(cn);
			free(up);
			rc = read_st_head(c, url, key, what, &heads[i], err);
			free(key);
			free(url);
			free(what);
			key = url = what = NULL;
			if (rc)
				goto out;
			sh[i] = (safetensors_head){.name = base_name(shards.v[i]), .buf = (const uint8_t *)heads[i].buf.buf,
						   .len = heads[i].buf.len, .file_size = heads[i].size};
			res->file_bytes += heads[i].size;
		}
		char display[400];
		snprintf(display, sizeof display, "%s%s%.*s", nm->repo, dir[0] ? "/" : "", dir[0] ? (int)strlen(dir) - 1 : 0,
			 dir);
		rc = safetensors_read_heads(display, cfg, cfg_len, index, index_len, sh, shards.n, m, err);
		if (!rc) {
			snprintf(res->files, sizeof res->files, "%s%zu safetensors header%s", cfg ? "config.json + " : "",
				 shards.n, shards.n == 1 ? "" : "s");
			model_set_name(m, nm->repo);
		}
		goto out;
	}
	if (!pick && (rc = pick_gguf(c, &files, nm->quant, &pick, err)))
		goto out;
	{
		char *cn = cache_name(pick), *up = url_path(pick);
		key = cpath(c, "hf/%s/%s/%s.head", org_name, sha, cn);
		url = xasprintf("%s/%s/resolve/%s/%s", c->base, nm->repo, sha, up);
		what = xasprintf("%s/%s", nm->repo, pick);
		free(cn);
		free(up);
		rc = read_gguf(c, url, key, what, m, &res->file_bytes, err);
		if (!rc) {
			snprintf(res->files, sizeof res->files, "%s header", pick);
			char *nmq = xasprintf("%s:%s", nm->repo, base_name(pick));
			model_set_name(m, nmq);
			free(nmq);
		}
	}
out:
	for (size_t i = 0; heads && i < shards.n; i++)
		sb_release(&heads[i].buf);
	free(heads);
	free(sh);
	free(text);
	free(key);
	free(url);
	free(what);
	free(pick);
	free(cfg);
	free(index);
	free(dir);
	files_release(&files);
	files_release(&shards);
	return rc;
}

/* ---- Ollama's registry ---------------------------------------------------- */

static bool is_digest(const char *d)
{
	if (!d || strncmp(d, "sha256:", 7) || strlen(d) != 71)
		return false;
	for (const char *p = d + 7; *p; p++)
		if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
			return false;
	return true;
}

static int ollama_load(hub_ctx *c, model_desc *m, hub_result *res, gw_error *err)
{
	const hub_name *nm = c->nm;
	char host[200], *text = NULL, *key = NULL, *url = NULL, *what = NULL, *ptext = NULL;
	size_t len, plen;
	json_t *root = NULL;
	int rc;
	/* the registry as a cache directory name */
	size_t k = 0;
	for (const char *p = strstr(c->base, "://") ? strstr(c->base, "://") + 3 : c->base; *p && k < sizeof host - 1; p++)
		host[k++] = name_char((unsigned char)*p) && *p != '.' ? *p : *p == '.' ? '.' : '_';
	host[k] = 0;
	if (!strcmp(host, "") || host[0] == '.')
		host[0] = '_';

	key = cpath(c, "ollama/%s/%s/%s.json", host, nm->repo, nm->rev);
	url = xasprintf("%s/v2/%s/manifests/%s", c->base, nm->repo, nm->rev);
	what = xasprintf("%s:%s", nm->repo, nm->rev);
	snprintf(res->url, sizeof res->url, "%s", url);
	if ((rc = get_small(c, key, HUB_REF_TTL_S, url, "application/vnd.docker.distribution.manifest.v2+json", what,
			    &text, &len, err)))
		goto out;
	char jerr[160];
	root = json_parse_limited(text, len, jerr, sizeof jerr);
	if (!root) {
		rc = gw_fail(err, GW_ENET, "cannot read the manifest of '%s': invalid JSON (%s)", what, jerr);
		goto out;
	}
	const char *model = NULL, *params = NULL;
	json_int_t params_size = 0;
	size_t i;
	json_t *l;
	json_array_foreach(json_object_get(root, "layers"), i, l) {
		const char *mt = json_string_value(json_object_get(l, "mediaType"));
		const char *d = json_string_value(json_object_get(l, "digest"));
		if (!mt || !d)
			continue;
		if (!strcmp(mt, "application/vnd.ollama.image.model") && !model)
			model = d;
		else if (!strcmp(mt, "application/vnd.ollama.image.params") && !params) {
			params = d;
			params_size = json_integer_value(json_object_get(l, "size"));
		}
	}
	if (!model) {
		rc = gw_fail(err, GW_ENOTSUP, "the manifest of '%s' has no GGUF model layer (application/vnd.ollama.image.model)",
			     what);
		goto out;
	}
	if (!is_digest(model)) {
		rc = gw_fail(err, GW_ENET, "the manifest of '%s' names a malformed digest '%.80s'", what, model);
		goto out;
	}
	snprintf(res->revision, sizeof res->revision, "%s", model);
	free(key);
	free(url);
	free(what);
	key = cpath(c, "ollama/%s/blobs/sha256-%s.head", host, model + 7);
	url = xasprintf("%s/v2/%s/blobs/%s", c->base, nm->repo, model);
	what = xasprintf("%s:%s (%.19s)", nm->repo, nm->rev, model);
	if ((rc = read_gguf(c, url, key, what, m, &res->file_bytes, err)))
		goto out;
	snprintf(res->files, sizeof res->files, "the model blob's GGUF header");
	/* num_ctx from the params layer (a small JSON blob), when there is one */
	if (params && is_digest(params) && params_size > 0 && params_size < 65536) {
		free(key);
		free(url);
		free(what);
		key = cpath(c, "ollama/%s/blobs/sha256-%s", host, params + 7);
		url = xasprintf("%s/v2/%s/blobs/%s", c->base, nm->repo, params);
		what = xasprintf("%s:%s params", nm->repo, nm->rev);
		gw_error perr;
		if (get_small(c, key, 0, url, NULL, what, &ptext, &plen, &perr) == 0) {
			json_t *p = json_parse_limited(ptext, plen, jerr, sizeof jerr);
			json_int_t v = json_integer_value(json_object_get(p, "num_ctx"));
			if (v > 0 && v <= (json_int_t)UINT32_MAX)
				res->num_ctx = (uint32_t)v;
			json_decref(p);
		}
	}
	char *full = !strcmp(nm->repo, "library/") || strncmp(nm->repo, "library/", 8)
			     ? xasprintf("%s:%s", nm->repo, nm->rev)
			     : xasprintf("%s:%s", nm->repo + 8, nm->rev);
	model_set_name(m, full);
	free(full);
out:
	json_decref(root);
	free(text);
	free(ptext);
	free(key);
	free(url);
	free(what);
	return rc;
}

/* ---- entry ----------------------------------------------------------------- */

/* HF_TOKEN, else the file huggingface-cli login writes (HF_TOKEN_PATH, HF_HOME/token, ~/.cache/huggingface/token). */
static char *hf_token(void)
{
	const char *t = getenv("HF_TOKEN");
	if (t && *t)
		return xstrdup(t);
	char *path = NULL, *text = NULL;
	size_t len;
	const char *p = getenv("HF_TOKEN_PATH"), *h = getenv("HF_HOME"), *home = getenv("HOME");
	if (p && *p)
		path = xstrdup(p);
	else if (h && *h)
		path = xasprintf("%s/token", h);
	else if (home && *home)
		path = xasprintf("%s/.cache/huggingface/token", home);
	if (path && gw_read_file(path, false, 4096, &text, &len, NULL) == 0) {
		char *s = str_trim(text);
		char *r = *s ? xstrdup(s) : NULL;
		free(text);
		free(path);
		return r;
	}
	free(path);
	return NULL;
}

static char *trim_base(const char *s)
{
	char *b = xstrdup(s);
	size_t n = strlen(b);
	while (n && b[n - 1] == '/')
		b[--n] = 0;
	return b;
}

int hub_load(const char *arg, const hub_opts *o, model_desc *m, hub_result *res, gw_error *err)
{
	hub_name nm;
	hub_ctx c = {.o = o};
	int rc;
	memset(m, 0, sizeof *m);
	memset(res, 0, sizeof *res);
	if (!hub_parse(arg, &nm))
		return gw_fail(err, GW_EINVAL, "'%s' is not a Hugging Face (ORG/NAME) or Ollama (NAME:TAG) name", arg);
	c.nm = &nm;
	res->kind = nm.kind;
	c.cache = net_cache_dir();
	if (env_true("GPUWISE_OFFLINE")) {
		c.offline = true;
		snprintf(c.offline_why, sizeof c.offline_why, "GPUWISE_OFFLINE=%s", getenv("GPUWISE_OFFLINE"));
	}
	if (nm.kind == HUB_HF) {
		snprintf(res->name, sizeof res->name, "%s%s%s", nm.repo, nm.quant[0] ? ":" : "", nm.quant);
		const char *ep = getenv("HF_ENDPOINT");
		c.base = trim_base(ep && *ep ? ep : "https://huggingface.co");
		if (!c.offline && env_true("HF_HUB_OFFLINE")) {
			c.offline = true;
			snprintf(c.offline_why, sizeof c.offline_why, "HF_HUB_OFFLINE=%s", getenv("HF_HUB_OFFLINE"));
		}
		c.token = hf_token();
		rc = hf_load(&c, m, res, err);
	} else {
		snprintf(res->name, sizeof res->name, "%s:%s",
			 strncmp(nm.repo, "library/", 8) ? nm.repo : nm.repo + 8, nm.rev);
		const char *reg = getenv("GPUWISE_OLLAMA_REGISTRY");
		c.base = trim_base(reg && *reg ? reg : "https://registry.ollama.ai");
		rc = ollama_load(&c, m, res, err);
	}
	res->offline = rc == GW_EUNREACH && !c.net_ready;
	res->bytes_read = c.net.bytes_in;
	res->requests = c.net.requests;
	if (c.net_ready)
		net_close(&c.net);
	free(c.cache);
	free(c.base);
	free(c.token);
	if (rc)
		model_release(m);
	return rc;
}

/*
 * store.c: find a model by the name the user already uses in the stores
 * other programs keep on this machine: Ollama's (manifests naming blobs),
 * the Hugging Face cache (refs naming snapshots) and LM Studio's models
 * folder.  Only paths and small JSON files are read here; the model files
 * themselves go to the GGUF and safetensors readers.
 *
 * Layouts, as the programs write them:
 *   Ollama: $OLLAMA_MODELS (else ~/.ollama/models, /usr/share/ollama/.ollama/models)
 *     manifests/HOST/NAMESPACE/NAME/TAG  a JSON manifest whose layers name
 *     blobs/sha256-HEX  by digest and media type (ollama server/manifest.go,
 *     types/model/name.go: default host registry.ollama.ai, namespace
 *     library, tag latest)
 *   Hugging Face: $HF_HUB_CACHE (else $HF_HOME/hub, else
 *     $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub)
 *     models--ORG--NAME/refs/main  the commit of main
 *     models--ORG--NAME/snapshots/COMMIT/  the files (links into blobs/)
 *     (huggingface_hub docs, "Manage the cache": cache structure)
 *   LM Studio: ~/.lmstudio/models/PUBLISHER/REPO/NAME.gguf, older
 *     ~/.cache/lm-studio/models (LM Studio docs, "Import models")
 */
#include "model/internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STORE_MAX_JSON (4u << 20) /* manifests and params are a few KiB */
#define STORE_MAX_ROOTS 4

const char *model_store_name(model_store s)
{
	switch (s) {
	case MODEL_STORE_NONE:
		return "explicit";
	case MODEL_STORE_PATH:
		return "path";
	case MODEL_STORE_OLLAMA:
		return "ollama";
	case MODEL_STORE_HF_CACHE:
		return "hf-cache";
	case MODEL_STORE_LMSTUDIO:
		return "lmstudio";
	case MODEL_STORE_HUB:
		return "hub";
	case MODEL_STORE_REGISTRY:
		return "ollama-registry";
	case MODEL_STORE_CATALOG:
		return "catalog";
	}
	return "unknown";
}

void model_origin_release(model_origin *o)
{
	if (!o)
		return;
	free(o->ref);
	free(o->root);
	free(o->revision);
	free(o->projector);
	free(o->note);
	free(o->read);
	memset(o, 0, sizeof *o);
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static bool file_size(const char *p, uint64_t *bytes)
{
	struct stat st;
	if (stat(p, &st) || !S_ISREG(st.st_mode))
		return false;
	*bytes = (uint64_t)st.st_size;
	return true;
}

/* A name part the stores could hold: no separators, no "..", not empty. */
static bool safe_part(const char *s, size_t n)
{
	if (!n || (n <= 2 && s[0] == '.' && (n == 1 || s[1] == '.')))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

static size_t roots_ollama(char **r)
{
	size_t n = 0;
	const char *v = env("OLLAMA_MODELS"), *home = env("HOME");
	if (v) {
		r[n++] = xstrdup(v);
		return n;
	}
	if (home)
		r[n++] = xasprintf("%s/.ollama/models", home);
	r[n++] = xstrdup("/usr/share/ollama/.ollama/models");
	return n;
}

static size_t roots_hf(char **r)
{
	const char *v = env("HF_HUB_CACHE"), *hh = env("HF_HOME"), *xdg = env("XDG_CACHE_HOME"), *home = env("HOME");
	if (v)
		r[0] = xstrdup(v);
	else if (hh)
		r[0] = xasprintf("%s/hub", hh);
	else if (xdg)
		r[0] = xasprintf("%s/huggingface/hub", xdg);
	else if (home)
		r[0] = xasprintf("%s/.cache/huggingface/hub", home);
	else
		return 0;
	return 1;
}

static size_t roots_lms(char **r)
{
	size_t n = 0;
	const char *home = env("HOME");
	if (home) {
		r[n++] = xasprintf("%s/.lmstudio/models", home);
		r[n++] = xasprintf("%s/.cache/lm-studio/models", home);
	}
	return n;
}

static void roots_free(char **r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i]);
}

static int read_json(const char *path, json_t **out, gw_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = gw_read_file(path, false, STORE_MAX_JSON, &text, &len, err);
	if (rc)
		return rc;
	json_error_t je;
	*out = json_loadb(text, len, 0, &je);
	free(text);
	if (!*out || !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return gw_fail(err, GW_EFORMAT, "cannot read '%s': not a JSON object (%s)", path, je.text);
	}
	return 0;
}

/* ---- Ollama --------------------------------------------------------------- */

/*
 * Split an Ollama model name into host, namespace path, model and tag
 * ("qwen3:14b" -> registry.ollama.ai, library, qwen3, 14b;
 * "hf.co/org/repo:Q4_K_M" -> hf.co, org, repo, Q4_K_M).  False when it
 * cannot be one.  The parts are written into buf.
 */
typedef struct ollama_name {
	char host[256], ns[512], model[256], tag[128];
} ollama_name;

static bool ollama_parse(const char *name, ollama_name *on)
{
	char tmp[1024];
	if (strlen(name) >= sizeof tmp)
		return false;
	strcpy(tmp, name);
	char *slash = strrchr(tmp, '/');
	char *colon = strrchr(slash ? slash : tmp, ':');
	const char *tag = "latest";
	if (colon) {
		*colon = '\0';
		tag = colon + 1;
	}
	if (!safe_part(tag, strlen(tag)) || strlen(tag) >= sizeof on->tag)
		return false;
	snprintf(on->tag, sizeof on->tag, "%s", tag);
	char *parts[8];
	size_t n = str_split(tmp, '/', parts, 8);
	if (n == 0 || n > 6)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!safe_part(parts[i], strlen(parts[i])))
			return false;
	if (n == 1) {
		snprintf(on->host, sizeof on->host, "registry.ollama.ai");
		snprintf(on->ns, sizeof on->ns, "library");
	} else if (n == 2) {
		snprintf(on->host, sizeof on->host, "registry.ollama.ai");
		snprintf(on->ns, sizeof on->ns, "%s", parts[0]);
	} else {
		snprintf(on->host, sizeof on->host, "%s", parts[0]);
		on->ns[0] = '\0';
		for (size_t i = 1; i + 1 < n; i++) {
			size_t l = strlen(on->ns);
			snprintf(on->ns + l, sizeof on->ns - l, "%s%s", l ? "/" : "", parts[i]);
		}
	}
	if (strlen(parts[n - 1]) >= sizeof on->model)
		return false;
	snprintf(on->model, sizeof on->model, "%s", parts[n - 1]);
	return true;
}

/* The blob file of a digest "sha256:HEX" (sha256-HEX; older stores sha256:HEX). */
static char *ollama_blob(const char *root, const char *digest)
{
	if (!digest || strncmp(digest, "sha256:", 7) || strlen(digest) != 7 + 64)
		return NULL;
	for (const char *p = digest + 7; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return NULL;
	char *p = xasprintf("%s/blobs/sha256-%s", root, digest + 7);
	if (exists(p) || !exists(root))
		return p;
	char *old = xasprintf("%s/blobs/%s", root, digest);
	if (exists(old)) {
		free(p);
		return old;
	}
	free(old);
	return p;
}

/* One layer of a manifest, its blob checked against the manifest's size. */
static int ollama_layer(const char *root, const char *name, json_t *layer, char **path, uint64_t *bytes,
			gw_error *err)
{
	const char *digest = json_string_value(json_object_get(layer, "digest"));
	json_t *sz = json_object_get(layer, "size");
	char *p = ollama_blob(root, digest);
	if (!p)
		return gw_fail(err, GW_EFORMAT, "cannot read Ollama's manifest of '%s': a layer's digest '%s' is not sha256:HEX",
			       name, digest ? digest : "(none)");
	uint64_t have;
	if (!file_size(p, &have)) {
		int rc = gw_fail(err, GW_ENOENT,
				 "Ollama's manifest of '%s' names blob '%s', which is missing (pull it again: ollama pull %s)",
				 name, p, name);
		free(p);
		return rc;
	}
	if (json_is_integer(sz) && (uint64_t)json_integer_value(sz) != have) {
		int rc = gw_fail(err, GW_ETRUNC,
				 "Ollama's blob '%s' of '%s' is %llu bytes, its manifest says %llu (an interrupted pull? ollama pull %s)",
				 p, name, (unsigned long long)have, (unsigned long long)json_integer_value(sz), name);
		free(p);
		return rc;
	}
	*path = p;
	*bytes = have;
	return 0;
}

/* num_ctx / num_gpu from a params blob ({"num_ctx": 8192, "stop": [...]}). */
static int ollama_params(const char *path, model_origin *o, gw_error *err)
{
	json_t *j = NULL;
	int rc = read_json(path, &j, err);
	if (rc)
		return rc;
	json_t *v = json_object_get(j, "num_ctx");
	if (json_is_number(v) && json_number_value(v) >= 1 && json_number_value(v) <= 1e9)
		o->num_ctx = (uint64_t)json_number_value(v);
	v = json_object_get(j, "num_gpu");
	if (json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= 1e6) {
		o->num_gpu = (uint32_t)json_number_value(v);
		o->has_num_gpu = true;
	}
	json_decref(j);
	return 0;
}

/* Read one manifest: the model blob's path, and the params and projector. */
static int ollama_manifest(const char *root, const char *mpath, const char *name, model_found *f, gw_error *err)
{
	json_t *j = NULL;
	int rc = read_json(mpath, &j, err);
	if (rc)
		return rc;
	json_t *layers = json_object_get(j, "layers"), *l;
	size_t i;
	if (!json_is_array(layers)) {
		rc = gw_fail(err, GW_EFORMAT, "cannot read '%s': Ollama's manifest has no layers", mpath);
		goto out;
	}
	json_array_foreach(layers, i, l) {
		const char *mt = json_string_value(json_object_get(l, "mediaType"));
		if (!mt)
			continue;
		char *p = NULL;
		uint64_t b = 0;
		if (!strcmp(mt, "application/vnd.ollama.image.model") && !f->path) {
			if ((rc = ollama_layer(root, name, l, &p, &b, err)))
				goto out;
			f->path = p;
			f->origin.file_bytes = b;
		} else if (!strcmp(mt, "application/vnd.ollama.image.projector") && !f->origin.projector) {
			if ((rc = ollama_layer(root, name, l, &p, &b, err)))
				goto out;
			f->origin.projector = p;
			f->origin.projector_bytes = b;
		} else if (!strcmp(mt, "application/vnd.ollama.image.params")) {
			if ((rc = ollama_layer(root, name, l, &p, &b, err)))
				goto out;
			rc = ollama_params(p, &f->origin, err);
			free(p);
			if (rc)
				goto out;
		}
	}
	if (!f->path) {
		rc = gw_fail(err, GW_EFORMAT, "cannot read '%s': Ollama's manifest has no model layer", mpath);
		goto out;
	}
	const char *cd = json_string_value(json_object_get(json_object_get(j, "config"), "digest"));
	if (cd)
		f->origin.revision = xstrdup(cd);
out:
	json_decref(j);
	return rc;
}

static int find_ollama(const char *name, model_found *f, gw_error *err)
{
	ollama_name on;
	if (!ollama_parse(name, &on))
		return 1;
	char *roots[STORE_MAX_ROOTS];
	size_t nr = roots_ollama(roots);
	int rc = 1;
	for (size_t i = 0; i < nr && rc == 1; i++) {
		char *mp = xasprintf("%s/manifests/%s/%s/%s/%s", roots[i], on.host, on.ns, on.model, on.tag);
		uint64_t b;
		if (file_size(mp, &b)) {
			f->origin.store = MODEL_STORE_OLLAMA;
			f->origin.root = xstrdup(roots[i]);
			if (!strcmp(on.host, "registry.ollama.ai") && !strcmp(on.ns, "library"))
				f->origin.ref = xasprintf("%s:%s", on.model, on.tag);
			else
				f->origin.ref = xasprintf("%s/%s/%s:%s", on.host, on.ns, on.model, on.tag);
			rc = ollama_manifest(roots[i], mp, name, f, err);
		}
		free(mp);
	}
	roots_free(roots, nr);
	return rc;
}

/* ---- GGUF files in a folder (HF snapshots of GGUF repos, LM Studio) -------- */

static bool is_projector(const char *file)
{
	return strstr(file, "mmproj") || strstr(file, "MMPROJ") || strstr(file, "projector");
}

/* The later shards of a split GGUF (-0000N-of-0000M.gguf, N > 1). */
static bool later_shard(const char *file)
{
	const char *p = strstr(file, "-of-");
	return p && p - file >= 5 && strncmp(p - 5, "00001", 5) != 0;
}

static bool quant_match(const char *file, const char *quant)
{
	size_t n = strlen(quant);
	for (const char *p = file; *p; p++)
		if (!strncasecmp(p, quant, n) && !isalnum((unsigned char)p[n]) && (p == file || !isalnum((unsigned char)p[-1])))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The GGUF of a folder (one level of subfolders too, as GGUF repos keep
 * each quant's shards in one): the only model file, or the one whose name
 * carries quant.  1: the folder has no GGUF; <0: several and none chosen.
 */
static int pick_gguf(const char *dir, const char *quant, const char *name, model_found *f, gw_error *err)
{
	char **files = NULL, **proj = NULL;
	size_t n = 0, cap = 0, np = 0, pcap = 0;
	int rc = 1;
	char *subs[2] = {xstrdup(dir), NULL};
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		if (str_ends(e->d_name, ".gguf")) {
			if (is_projector(e->d_name)) {
				proj = xgrow(proj, &pcap, np + 1, sizeof *proj);
				proj[np++] = p;
				continue;
			}
			if (!later_shard(e->d_name)) {
				files = xgrow(files, &cap, n + 1, sizeof *files);
				files[n++] = p;
				continue;
			}
		} else if (is_dir(p) && n < 64) {
			DIR *d2 = opendir(p);
			struct dirent *e2;
			while (d2 && (e2 = readdir(d2))) {
				if (e2->d_name[0] == '.' || !str_ends(e2->d_name, ".gguf") || later_shard(e2->d_name) ||
				    is_projector(e2->d_name))
					continue;
				files = xgrow(files, &cap, n + 1, sizeof *files);
				files[n++] = xasprintf("%s/%s", p, e2->d_name);
			}
			if (d2)
				closedir(d2);
		}
		free(p);
	}
	if (d)
		closedir(d);
	free(subs[0]);
	if (!n)
		goto out;
	qsort(files, n, sizeof *files, cmp_str);
	size_t pick = n;
	if (quant) {
		for (size_t i = 0; i < n && pick == n; i++)
			if (quant_match(strrchr(files[i], '/') + 1, quant))
				pick = i;
		if (pick == n) {
			rc = gw_fail(err, GW_ENOTFOUND, "'%s' has no GGUF file for '%s' in '%s'", name, quant, dir);
			goto out;
		}
	} else if (n == 1) {
		pick = 0;
	} else {
		strbuf sb;
		sb_init(&sb);
		for (size_t i = 0; i < n && i < 6; i++)
			sb_printf(&sb, "%s%s", i ? ", " : "", strrchr(files[i], '/') + 1);
		rc = gw_fail(err, GW_EINVAL, "'%s' has %zu GGUF files (%s%s); name one: %s:QUANT", name, n, sb_str(&sb),
			     n > 6 ? ", ..." : "", name);
		sb_release(&sb);
		goto out;
	}
	f->path = files[pick];
	files[pick] = NULL;
	file_size(f->path, &f->origin.file_bytes);
	if (np) {
		qsort(proj, np, sizeof *proj, cmp_str);
		f->origin.projector = proj[0];
		proj[0] = NULL;
		file_size(f->origin.projector, &f->origin.projector_bytes);
	}
	rc = 0;
out:
	gw_list_free(files, n);
	gw_list_free(proj, np);
	return rc;
}

/* "ORG/NAME" or "ORG/NAME:QUANT" (also behind hf.co/): 1 when not that shape. */
static int split_repo(const char *name, char *org, char *repo, char *quant, size_t n)
{
	if (str_starts(name, "hf.co/"))
		name += 6;
	else if (str_starts(name, "huggingface.co/"))
		name += 15;
	const char *slash = strchr(name, '/');
	if (!slash || strchr(slash + 1, '/'))
		return 1;
	const char *colon = strchr(slash + 1, ':');
	size_t ol = (size_t)(slash - name), rl = colon ? (size_t)(colon - slash - 1) : strlen(slash + 1);
	if (ol >= n || rl >= n || !safe_part(name, ol) || !safe_part(slash + 1, rl))
		return 1;
	memcpy(org, name, ol);
	org[ol] = '\0';
	memcpy(repo, slash + 1, rl);
	repo[rl] = '\0';
	quant[0] = '\0';
	if (colon) {
		if (strlen(colon + 1) >= n || !safe_part(colon + 1, strlen(colon + 1)))
			return 1;
		strcpy(quant, colon + 1);
	}
	return 0;
}

/* ---- Hugging Face cache ------------------------------------------------- */

static int find_hf(const char *name, model_found *f, gw_error *err)
{
	char org[256], repo[256], quant[256];
	if (split_repo(name, org, repo, quant, sizeof org))
		return 1;
	char *roots[STORE_MAX_ROOTS];
	size_t nr = roots_hf(roots);
	int rc = 1;
	char *dir = NULL, *rev = NULL, *snap = NULL, *refp = NULL;
	if (!nr)
		return 1;
	dir = xasprintf("%s/models--%s--%s", roots[0], org, repo);
	if (!is_dir(dir))
		goto out;
	refp = xasprintf("%s/refs/main", dir);
	size_t rl;
	if (exists(refp) && (rc = gw_read_file(refp, false, 4096, &rev, &rl, err)))
		goto out;
	rc = 1;
	if (rev) {
		char *t = str_trim(rev);
		memmove(rev, t, strlen(t) + 1);
		if (!safe_part(rev, strlen(rev))) {
			rc = gw_fail(err, GW_EFORMAT, "cannot read '%s': not a revision", refp);
			goto out;
		}
		snap = xasprintf("%s/snapshots/%s", dir, rev);
		if (!is_dir(snap)) {
			rc = gw_fail(err, GW_ENOENT,
				     "the Hugging Face cache's '%s' points to snapshot '%s', which is missing (download it again: "
				     "hf download %s/%s)",
				     refp, rev, org, repo);
			goto out;
		}
	} else {
		/* no refs/main (a download by commit): the only snapshot */
		char *sd = xasprintf("%s/snapshots", dir);
		DIR *d = opendir(sd);
		struct dirent *e;
		size_t k = 0;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			if (!k++)
				rev = xstrdup(e->d_name);
		}
		if (d)
			closedir(d);
		free(sd);
		if (k != 1) {
			rc = gw_fail(err, GW_ENOENT, "the Hugging Face cache's '%s' has no refs/main and %zu snapshots", dir, k);
			goto out;
		}
		snap = xasprintf("%s/snapshots/%s", dir, rev);
	}
	f->origin.store = MODEL_STORE_HF_CACHE;
	f->origin.root = xstrdup(roots[0]);
	f->origin.ref = xasprintf("%s/%s%s%s", org, repo, *quant ? ":" : "", quant);
	f->origin.revision = xstrdup(rev);
	rc = pick_gguf(snap, *quant ? quant : NULL, f->origin.ref, f, err);
	if (rc == 1) {
		/* a safetensors repo: the snapshot folder (config.json + headers) */
		char *cfg = xasprintf("%s/config.json", snap);
		bool has = exists(cfg);
		free(cfg);
		if (!has) {
			rc = gw_fail(err, GW_ENOENT, "the Hugging Face cache's snapshot '%s' has no config.json and no GGUF file",
				     snap);
			goto out;
		}
		f->path = xstrdup(snap);
		rc = 0;
	}
out:
	free(dir);
	free(rev);
	free(snap);
	free(refp);
	roots_free(roots, nr);
	return rc;
}

/* ---- LM Studio ---------------------------------------------------------- */

static int find_lms(const char *name, model_found *f, gw_error *err)
{
	char org[256], repo[256], quant[256];
	if (split_repo(name, org, repo, quant, sizeof org))
		return 1;
	char *roots[STORE_MAX_ROOTS];
	size_t nr = roots_lms(roots);
	int rc = 1;
	for (size_t i = 0; i < nr && rc == 1; i++) {
		char *dir = xasprintf("%s/%s/%s", roots[i], org, repo);
		if (is_dir(dir)) {
			f->origin.store = MODEL_STORE_LMSTUDIO;
			f->origin.root = xstrdup(roots[i]);
			f->origin.ref = xasprintf("%s/%s%s%s", org, repo, *quant ? ":" : "", quant);
			rc = pick_gguf(dir, *quant ? quant : NULL, f->origin.ref, f, err);
			if (rc == 1) {
				model_origin_release(&f->origin);
				free(f->path);
				f->path = NULL;
			}
		}
		free(dir);
	}
	roots_free(roots, nr);
	return rc;
}

/* ---- lookup ------------------------------------------------------------- */

void model_found_release(model_found *f)
{
	if (!f)
		return;
	free(f->path);
	model_origin_release(&f->origin);
	f->path = NULL;
}

int model_store_find(const char *name, model_found *f, gw_error *err)
{
	memset(f, 0, sizeof *f);
	int rc = find_ollama(name, f, err);
	if (rc == 1)
		rc = find_hf(name, f, err);
	if (rc == 1)
		rc = find_lms(name, f, err);
	if (rc)
		model_found_release(f);
	return rc;
}

/* ---- listing ------------------------------------------------------------ */

static void add_item(model_installed **v, size_t *n, size_t *cap, model_store s, char *name, char *path,
		     uint64_t bytes, const char *rev)
{
	*v = xgrow(*v, cap, *n + 1, sizeof **v);
	model_installed *it = &(*v)[(*n)++];
	memset(it, 0, sizeof *it);
	it->store = s;
	it->name = name;
	it->path = path;
	it->bytes = bytes;
	it->revision = rev ? xstrdup(rev) : NULL;
}

/* Walk manifests/HOST/NS.../NAME/TAG below dir (depth: parts seen so far). */
static void list_ollama_dir(const char *root, const char *dir, const char *rel, int depth, model_installed **v,
			    size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d || depth > 6) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		char *r = *rel ? xasprintf("%s/%s", rel, e->d_name) : xstrdup(e->d_name);
		if (is_dir(p)) {
			list_ollama_dir(root, p, r, depth + 1, v, n, cap);
		} else if (depth >= 3) {
			/* r = HOST/NS/NAME/TAG: the name as `ollama list` shows it */
			char *name;
			if (str_starts(r, "registry.ollama.ai/library/"))
				name = xstrdup(r + strlen("registry.ollama.ai/library/"));
			else if (str_starts(r, "registry.ollama.ai/"))
				name = xstrdup(r + strlen("registry.ollama.ai/"));
			else
				name = xstrdup(r);
			char *last = strrchr(name, '/');
			*last = ':';
			model_found f = {0};
			gw_error err;
			if (ollama_manifest(root, p, name, &f, &err) == 0)
				add_item(v, n, cap, MODEL_STORE_OLLAMA, name, xstrdup(f.path),
					 f.origin.file_bytes + f.origin.projector_bytes, f.origin.revision);
			else
				add_item(v, n, cap, MODEL_STORE_OLLAMA, name, NULL, 0, NULL);
			model_found_release(&f);
		}
		free(p);
		free(r);
	}
	closedir(d);
}

/* The bytes of every regular file below dir (links followed: HF snapshots). */
static uint64_t dir_bytes(const char *dir, int depth)
{
	uint64_t sum = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && depth < 4 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		uint64_t b;
		if (file_size(p, &b))
			sum += b;
		else if (is_dir(p))
			sum += dir_bytes(p, depth + 1);
		free(p);
	}
	if (d)
		closedir(d);
	return sum;
}

static void list_hf(const char *root, model_installed **v, size_t *n, size_t *cap)
{
	DIR *d = opendir(root);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!str_starts(e->d_name, "models--"))
			continue;
		char *name = xstrdup(e->d_name + 8);
		char *sep = strstr(name, "--");
		if (sep) {
			*sep = '/';
			memmove(sep + 1, sep + 2, strlen(sep + 2) + 1);
		}
		model_found f;
		gw_error err;
		if (model_store_find_in(MODEL_STORE_HF_CACHE, name, &f, &err) == 0)
			add_item(v, n, cap, MODEL_STORE_HF_CACHE, name, xstrdup(f.path),
				 is_dir(f.path) ? dir_bytes(f.path, 0) : f.origin.file_bytes + f.origin.projector_bytes,
				 f.origin.revision);
		else
			add_item(v, n, cap, MODEL_STORE_HF_CACHE, name, NULL, 0, NULL);
		model_found_release(&f);
	}
	if (d)
		closedir(d);
}

static void list_lms(const char *root, model_installed **v, size_t *n, size_t *cap)
{
	DIR *d = opendir(root);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *pub = xasprintf("%s/%s", root, e->d_name);
		DIR *d2 = is_dir(pub) ? opendir(pub) : NULL;
		struct dirent *e2;
		while (d2 && (e2 = readdir(d2))) {
			if (e2->d_name[0] == '.')
				continue;
			char *rp = xasprintf("%s/%s", pub, e2->d_name);
			if (is_dir(rp)) {
				/* each GGUF of the folder is a model: PUBLISHER/REPO:FILE-STEM */
				size_t first = *n, k = 0;
				DIR *d3 = opendir(rp);
				struct dirent *e3;
				while (d3 && (e3 = readdir(d3))) {
					if (!str_ends(e3->d_name, ".gguf") || is_projector(e3->d_name) ||
					    later_shard(e3->d_name))
						continue;
					char *fp = xasprintf("%s/%s", rp, e3->d_name);
					uint64_t b = 0;
					file_size(fp, &b);
					add_item(v, n, cap, MODEL_STORE_LMSTUDIO,
						 xasprintf("%s/%s:%.*s", e->d_name, e2->d_name,
							   (int)(strlen(e3->d_name) - 5), e3->d_name),
						 fp, b, NULL);
					k++;
				}
				if (d3)
					closedir(d3);
				if (k == 1) /* the folder's only model: PUBLISHER/REPO names it */
					*strchr(strchr((*v)[first].name, '/'), ':') = '\0';
			}
			free(rp);
		}
		if (d2)
			closedir(d2);
		free(pub);
	}
	if (d)
		closedir(d);
}

static int cmp_installed(const void *a, const void *b)
{
	const model_installed *x = a, *y = b;
	if (x->store != y->store)
		return (int)x->store - (int)y->store;
	return strcmp(x->name, y->name);
}

int model_store_list(model_installed **out, size_t *n_out)
{
	model_installed *v = NULL;
	size_t n = 0, cap = 0;
	char *roots[STORE_MAX_ROOTS];
	size_t nr = roots_ollama(roots);
	for (size_t i = 0; i < nr; i++) {
		char *m = xasprintf("%s/manifests", roots[i]);
		list_ollama_dir(roots[i], m, "", 0, &v, &n, &cap);
		free(m);
	}
	roots_free(roots, nr);
	nr = roots_hf(roots);
	for (size_t i = 0; i < nr; i++)
		list_hf(roots[i], &v, &n, &cap);
	roots_free(roots, nr);
	nr = roots_lms(roots);
	for (size_t i = 0; i < nr; i++)
		list_lms(roots[i], &v, &n, &cap);
	roots_free(roots, nr);
	if (n)
		qsort(v, n, sizeof *v, cmp_installed);
	*out = v;
	*n_out = n;
	return 0;
}

void model_installed_free(model_installed *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].path);
		free(v[i].revision);
	}
	free(v);
}

int model_store_find_in(model_store s, const char *name, model_found *f, gw_error *err)
{
	memset(f, 0, sizeof *f);
	int rc = s == MODEL_STORE_OLLAMA ? find_ollama(name, f, err)
		 : s == MODEL_STORE_HF_CACHE ? find_hf(name, f, err)
		 : s == MODEL_STORE_LMSTUDIO ? find_lms(name, f, err)
					     : 1;
	if (rc)
		model_found_release(f);
	return rc;
}

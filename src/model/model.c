/*
 * model.c: resolve a model argument (file, directory, catalog name or
 * explicit numbers) into a model_desc, and the helpers the readers share.
 */
#include "model/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kb/kb.h"

const char *model_source_name(model_source s)
{
	switch (s) {
	case MODEL_SRC_CATALOG:
		return "catalog";
	case MODEL_SRC_GGUF:
		return "gguf";
	case MODEL_SRC_SAFETENSORS:
		return "safetensors";
	case MODEL_SRC_CONFIG:
		return "config";
	case MODEL_SRC_EXPLICIT:
		return "explicit";
	}
	return "unknown";
}

void model_release(model_desc *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->path);
	free(m->arch);
	free(m->layer_swa);
	free(m->layer_kv_heads);
	free(m->file_type);
	free(m->default_quant);
	free(m->layer_bytes);
	free(m->layer_expert_bytes);
	free(m->layer_ffn);
	free(m->layer_recr_given);
	free(m->layer_v_from_k);
	free(m->layer_mix);
	for (size_t i = 0; i < m->n_dtypes; i++)
		free(m->dtype_names ? m->dtype_names[i] : NULL);
	free(m->dtype_names);
	free(m->dtype_bytes);
	model_origin_release(&m->origin);
	memset(m, 0, sizeof *m);
}

void model_alloc_layer_bytes(model_desc *m, uint32_t n)
{
	free(m->layer_bytes);
	free(m->layer_expert_bytes);
	m->layer_bytes = xcalloc(n ? n : 1, sizeof *m->layer_bytes);
	m->layer_expert_bytes = xcalloc(n ? n : 1, sizeof *m->layer_expert_bytes);
}

void model_set_swa(model_desc *m, uint32_t window, uint32_t period)
{
	model_set_swa_pattern(m, window, period, false);
}

bool model_layer_moe(const model_desc *m, uint32_t il)
{
	if (!m->n_experts || il >= m->n_layers || il < m->n_dense_lead)
		return false;
	return m->moe_step <= 1 || (il + 1) % m->moe_step == 0;
}

void model_set_swa_pattern(model_desc *m, uint32_t window, uint32_t period, bool dense_first)
{
	free(m->layer_swa);
	m->layer_swa = NULL;
	m->swa_window = 0;
	if (!window || !period || !m->n_layers)
		return;
	m->swa_window = window;
	m->layer_swa = xcalloc(m->n_layers, sizeof *m->layer_swa);
	for (uint32_t i = 0; i < m->n_layers; i++)
		m->layer_swa[i] = period == 1 || (dense_first ? i % period != 0 : i % period < period - 1);
}

double model_shape_params(const model_desc *m, double *active)
{
	double h = m->hidden, dk = m->head_dim_k, dv = m->head_dim_v;
	double total = 0, act = 0;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		double kv = m->layer_kv_heads ? m->layer_kv_heads[i] : m->n_kv_heads;
		double attn = h * m->n_heads * dk + h * kv * dk + h * kv * dv + m->n_heads * dv * h;
		if (m->mla && kv > 0) {
			/* DeepSeek-V3 MLA: q low-rank 1536, latent dk (= rank + rope),
			 * per-head k/v up-projections, output (as plan/weights.c) */
			double qk = m->mla_head_dim_k, vk = m->mla_head_dim_v, rank = dv;
			attn = h * 1536 + 1536 * m->n_heads * qk + h * dk + (qk - 64) * rank * m->n_heads +
			       rank * vk * m->n_heads + m->n_heads * vk * h;
		}
		if (m->mixer == MODEL_MIX_GDN && m->layer_mix && (m->layer_mix[i] & MODEL_L_RS)) {
			/* a gated delta-net layer (llama.cpp src/models/qwen3next.cpp):
			 * qkv + gate projections, beta/alpha, the conv, out */
			double kd = (double)m->ssm_state * m->ssm_groups, vd = m->ssm_inner, nv = m->ssm_dt_rank;
			attn = h * (2 * kd + 2 * vd) + h * 2 * nv + (double)m->ssm_conv * (2 * kd + vd) + 2 * nv +
			       m->ssm_state + vd * h;
		} else if (m->mixer == MODEL_MIX_GDN && kv > 0) {
			attn += h * m->n_heads * dk; /* the attention's output gate doubles Q */
		}
		double norms = 2 * h;
		double mlp, mlp_act;
		if (model_layer_moe(m, i)) {
			double ef = m->expert_ffn ? m->expert_ffn : m->ffn;
			double router = h * m->n_experts, shared = 3 * h * m->shared_expert_ffn;
			mlp = m->n_experts * 3 * h * ef + router + shared;
			mlp_act = (m->n_experts_used ? m->n_experts_used : m->n_experts) * 3 * h * ef + router + shared;
		} else {
			/* up, gate and down; an ungated FFN (StarCoder2, Arcee) has no gate */
			mlp = mlp_act = (m->ffn_ungated ? 2 : 3) * h * m->ffn;
		}
		total += attn + norms + mlp;
		act += attn + norms + mlp_act;
	}
	double embd = (double)m->vocab * h;
	double head = m->tied_embeddings ? 0 : embd;
	total += embd + head + h;
	act += embd + head + h;
	if (active)
		*active = act;
	return total;
}

static int shape_fail(gw_error *err, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int shape_fail(gw_error *err, const char *name, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (name)
		return gw_fail(err, GW_EFORMAT, "cannot read '%s': %s", name, what);
	return gw_fail(err, GW_EINVAL, "impossible model shape: %s", what);
}

int model_check_shape(const model_desc *m, bool kv_given, const char *name, gw_error *err)
{
	uint32_t heads = m->n_heads, kv = m->n_kv_heads;
	if (heads > MODEL_MAX_HEADS)
		return shape_fail(err, name, "%u attention heads (at most %u)", heads, MODEL_MAX_HEADS);
	if (kv > MODEL_MAX_HEADS)
		return shape_fail(err, name, "%u key-value heads (at most %u)", kv, MODEL_MAX_HEADS);
	if (m->n_experts > MODEL_MAX_EXPERTS)
		return shape_fail(err, name, "%u experts (at most %u)", m->n_experts, MODEL_MAX_EXPERTS);
	/* 0 KV heads is a model without attention (Mamba) only when it has 0 heads too */
	if ((kv_given && kv == 0 && heads && !m->layer_kv_heads) || (kv && heads % kv))
		return shape_fail(err, name, "%u attention heads cannot be shared by %u key-value heads", heads, kv);
	for (uint32_t i = 0; m->layer_kv_heads && i < m->n_layers; i++) {
		uint32_t k = m->layer_kv_heads[i];
		if (k > MODEL_MAX_HEADS || (k && heads % k))
			return shape_fail(err, name, "layer %u: %u attention heads cannot be shared by %u key-value heads",
					  i, heads, k);
	}
	if (m->n_experts_used > m->n_experts)
		return shape_fail(err, name, "%u experts per token but only %u experts", m->n_experts_used, m->n_experts);
	if (heads && m->hidden && !m->head_dim_k && m->hidden % heads)
		return shape_fail(err, name, "hidden size %u is not a multiple of %u heads", m->hidden, heads);
	return 0;
}

char *model_base_name(const char *path)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	const char *start = path;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/' && i + 1 < len)
			start = path + i + 1;
	char *s = xstrndup(start, len - (size_t)(start - path));
	char *dot = strrchr(s, '.');
	if (dot && dot != s && (!strcmp(dot, ".gguf") || !strcmp(dot, ".safetensors") || !strcmp(dot, ".json")))
		*dot = '\0';
	return s;
}

void model_set_name(model_desc *m, const char *name)
{
	free(m->name);
	m->name = name ? xstrdup(name) : NULL;
}

/*
 * Derived fields: KV heads default to the heads (MHA), head dims to
 * hidden/heads, active parameters to the total, and the total to an
 * estimate from the shape when no file counted it.  Idempotent.
 */
void model_finish(model_desc *m)
{
	if (!m->n_kv_heads && !m->layer_kv_heads)
		m->n_kv_heads = m->n_heads;
	if (m->layer_kv_heads && !m->n_kv_heads) {
		for (uint32_t i = 0; i < m->n_layers; i++)
			if (m->layer_kv_heads[i] > m->n_kv_heads)
				m->n_kv_heads = m->layer_kv_heads[i];
	}
	if (!m->head_dim_k && m->n_heads)
		m->head_dim_k = m->hidden / m->n_heads;
	if (!m->head_dim_v)
		m->head_dim_v = m->head_dim_k;
	if (m->n_experts && !m->expert_ffn)
		m->expert_ffn = m->ffn;
	model_layers_fill(m);
	if (m->params_total <= 0 && m->n_layers && m->hidden) {
		double act;
		m->params_total = model_shape_params(m, &act);
		if (m->params_active <= 0)
			m->params_active = act;
	}
	if (m->params_active <= 0)
		m->params_active = m->params_total;
}

/* ---- catalog ----------------------------------------------------------- */

static void from_catalog(const model_spec *s, model_desc *m)
{
	memset(m, 0, sizeof *m);
	m->source = MODEL_SRC_CATALOG;
	m->name = xstrdup(s->id);
	m->arch = xstrdup(s->arch);
	m->n_layers = s->layers > 0 ? (uint32_t)s->layers : 0;
	m->hidden = s->hidden > 0 ? (uint32_t)s->hidden : 0;
	m->n_heads = s->heads > 0 ? (uint32_t)s->heads : 0;
	m->n_kv_heads = s->kv_heads > 0 ? (uint32_t)s->kv_heads : 0;
	m->head_dim_k = m->head_dim_v = s->head_dim > 0 ? (uint32_t)s->head_dim : 0;
	m->ffn = s->ffn > 0 ? (uint32_t)s->ffn : 0;
	m->vocab = s->vocab > 0 ? (uint32_t)s->vocab : 0;
	m->n_experts = s->experts > 0 ? (uint32_t)s->experts : 0;
	m->n_experts_used = s->experts_used > 0 ? (uint32_t)s->experts_used : 0;
	m->expert_ffn = s->expert_ffn > 0 ? (uint32_t)s->expert_ffn : 0;
	m->ctx_train = s->ctx_train > 0 ? (uint64_t)s->ctx_train : 0;
	m->tied_embeddings = s->tied_embeddings;
	m->params_total = s->params_total;
	m->params_active = s->params_active;
	if (s->swa_window > 0 && s->swa_period > 0)
		model_set_swa(m, (uint32_t)s->swa_window, (uint32_t)s->swa_period);
	m->moe_step = s->moe_step > 0 ? (uint32_t)s->moe_step : 0;
	m->shared_expert_ffn = s->shared_ffn > 0 ? (uint32_t)s->shared_ffn : 0;
	m->n_expert_shared = m->shared_expert_ffn ? 1 : 0;
	m->n_dense_lead = s->dense_lead > 0 ? (uint32_t)s->dense_lead : 0;
	if (s->default_quant && *s->default_quant)
		m->default_quant = xstrdup(s->default_quant);
	if (s->ssm_conv > 0 && s->ssm_inner > 0) {
		m->ssm_conv = (uint32_t)s->ssm_conv;
		m->ssm_inner = (uint32_t)s->ssm_inner;
		m->ssm_state = (uint32_t)s->ssm_state;
		m->ssm_groups = (uint32_t)s->ssm_groups;
		m->ssm_dt_rank = (uint32_t)s->ssm_dt_rank;
		m->full_attn_interval = (uint32_t)s->full_attn_every;
		m->recurrent = true;
	}
	if (s->kv_latent > 0) {
		/* MLA: the K-only latent cache, one "head" of kv_latent; the
		 * attention heads are head_dim (q/k) and 128 (v) wide */
		m->mla = true;
		m->mla_head_dim_k = m->head_dim_k;
		m->mla_head_dim_v = 128;
		m->n_kv_heads = 1;
		m->head_dim_k = (uint32_t)s->kv_latent;
		m->head_dim_v = s->kv_latent > 64 ? (uint32_t)s->kv_latent - 64 : (uint32_t)s->kv_latent;
	}
}

/* ---- files ------------------------------------------------------------- */

static bool has_magic(const char *path, const char *magic, size_t n)
{
	char buf[8] = {0};
	int fd = gw_open_regular(path, NULL, NULL);
	if (fd < 0)
		return false;
	ssize_t k = read(fd, buf, n);
	close(fd);
	return k == (ssize_t)n && !memcmp(buf, magic, n);
}

/* Pick the reader for an existing path. */
static int load_path(const char *path, const struct stat *st, model_desc *m, gw_error *err)
{
	if (S_ISDIR(st->st_mode))
		return safetensors_read(path, m, err);
	if (!S_ISREG(st->st_mode))
		return gw_fail(err, GW_EINVAL, "cannot read '%s': not a regular file or a directory", path);
	if (has_magic(path, "GGUF", 4) || str_ends(path, ".gguf"))
		return gguf_read(path, m, err);
	if (str_ends(path, ".safetensors"))
		return safetensors_read(path, m, err);
	if (str_ends(path, ".json") || has_magic(path, "{", 1))
		return hfconfig_read(path, m, err);
	/* a safetensors header starts with its 8-byte length, then '{' */
	char buf[9] = {0};
	int fd = gw_open_regular(path, NULL, NULL);
	if (fd >= 0) {
		ssize_t k = read(fd, buf, 9);
		close(fd);
		if (k == 9 && buf[8] == '{')
			return safetensors_read(path, m, err);
	}
	return gw_fail(err, GW_EFORMAT, "cannot read '%s': not a GGUF, safetensors or config.json file", path);
}

static bool looks_like_path(const char *name)
{
	return name[0] == '/' || name[0] == '.' || str_ends(name, ".gguf") || str_ends(name, ".safetensors") ||
	       str_ends(name, ".json");
}

/* Explicit numbers fill and override. */
static void apply_numbers(const model_numbers *n, model_desc *m)
{
	bool shape = n->layers || n->hidden || n->heads || n->kv_heads || n->head_dim || n->ffn || n->vocab;
	if (n->layers && n->layers != m->n_layers) {
		m->n_layers = n->layers;
		/* per-layer facts from a file no longer line up */
		free(m->layer_swa);
		free(m->layer_kv_heads);
		free(m->layer_bytes);
		free(m->layer_expert_bytes);
		free(m->layer_ffn);
		free(m->layer_recr_given);
		free(m->layer_v_from_k);
		m->layer_v_from_k = NULL;
		m->layer_ffn = NULL;
		m->layer_recr_given = NULL;
		m->layer_swa = NULL;
		m->layer_kv_heads = NULL;
		m->layer_bytes = m->layer_expert_bytes = NULL;
		m->swa_window = 0;
		m->has_tensors = false;
	}
	if (n->hidden)
		m->hidden = n->hidden;
	if (n->heads)
		m->n_heads = n->heads;
	if (n->kv_heads) {
		m->n_kv_heads = n->kv_heads;
		free(m->layer_kv_heads);
		m->layer_kv_heads = NULL;
	}
	if (n->head_dim)
		m->head_dim_k = m->head_dim_v = n->head_dim;
	if (n->ffn)
		m->ffn = n->ffn;
	if (n->vocab)
		m->vocab = n->vocab;
	if (n->ctx)
		m->ctx_train = n->ctx;
	if (n->params > 0) {
		double ratio = m->params_total > 0 ? m->params_active / m->params_total : 1;
		m->params_total = n->params;
		m->params_active = n->params * ratio;
	} else if (shape && !m->has_tensors) {
		/* the shape changed: recount from it */
		m->params_total = m->params_active = 0;
	}
}

int model_load(const char *name, const model_numbers *nums, model_desc *m, gw_error *err)
{
	static const model_numbers none;
	struct stat st;
	model_found f;
	char *note = NULL;
	int rc;
	if (!nums)
		nums = &none;
	memset(m, 0, sizeof *m);

	if (!name || !*name) {
		if (!nums->layers || !nums->hidden)
			return gw_fail(err, GW_EINVAL,
				       "a model given by numbers needs at least --layers and --hidden (or name a model)");
		if (!nums->heads && !nums->head_dim)
			return gw_fail(err, GW_EINVAL, "a model given by numbers needs --heads or --head-dim");
		m->source = MODEL_SRC_EXPLICIT;
		m->name = xstrdup("custom");
		m->arch = xstrdup("llama");
		m->tied_embeddings = false;
		if (!nums->heads && nums->head_dim)
			m->n_heads = nums->hidden / nums->head_dim;
	} else if (stat(name, &st) == 0) {
		if ((rc = load_path(name, &st, m, err)))
			return rc;
		m->origin.store = MODEL_STORE_PATH;
	} else if ((rc = looks_like_path(name) ? 1 : model_store_find(name, &f, err)) <= 0) {
		if (rc)
			return rc;
		if (stat(f.path, &st))
			rc = gw_fail(err, GW_ENOENT, "cannot read '%s': %s", f.path, strerror(errno));
		else
			rc = load_path(f.path, &st, m, err);
		if (rc) {
			model_found_release(&f);
			return rc;
		}
		model_set_name(m, f.origin.ref);
		m->origin = f.origin;
		free(f.path);
	} else if ((rc = looks_like_path(name) ? 1 : model_remote_resolve(name, m, &note, err)) <= 0) {
		if (rc) {
			free(note);
			return rc;
		}
	} else {
		const model_spec *s = kb_model_find(name);
		if (s) {
			from_catalog(s, m);
			m->origin.store = MODEL_STORE_CATALOG;
			m->origin.note = note;
			note = NULL;
		} else if (looks_like_path(name)) {
			return gw_fail(err, GW_ENOENT, "cannot read '%s': %s", name, strerror(ENOENT));
		} else {
			const model_spec *sug = kb_model_suggest(name);
			/* the remote resolver's note says why it did not answer (offline) */
			if (sug && note)
				rc = gw_fail(err, GW_ENOTFOUND, "unknown model '%s' (did you mean '%s'?); %s", name, sug->id, note);
			else if (sug)
				rc = gw_fail(err, GW_ENOTFOUND, "unknown model '%s' (did you mean '%s'?)", name, sug->id);
			else if (note)
				rc = gw_fail(err, GW_ENOTFOUND, "unknown model '%s' (not a file and not in the catalog); %s", name, note);
			else
				rc = gw_fail(err, GW_ENOTFOUND, "unknown model '%s' (not a file and not in the catalog)", name);
			free(note);
			return rc;
		}
	}
	free(note);
	apply_numbers(nums, m);
	if (m->source == MODEL_SRC_EXPLICIT && !nums->heads && nums->head_dim)
		m->n_heads = nums->hidden / nums->head_dim;
	/* explicit numbers, alone or over a file's: the same rules as every reader */
	if ((rc = model_check_shape(m, false, m->source == MODEL_SRC_EXPLICIT ? NULL : m->path ? m->path : m->name,
				    err))) {
		model_release(m);
		return rc;
	}
	model_finish(m);
	if (!m->n_layers || !m->hidden) {
		rc = gw_fail(err, GW_EFORMAT, "cannot use '%s': it does not say the number of layers and the hidden size",
			     m->path ? m->path : m->name ? m->name : "model");
		model_release(m);
		return rc;
	}
	if (!m->n_heads && !m->recurrent) { /* attention-free (pure Mamba) models need none */
		rc = gw_fail(err, GW_EFORMAT, "cannot use '%s': it does not say the attention heads (add --heads or a config.json)",
			     m->path ? m->path : m->name ? m->name : "model");
		model_release(m);
		return rc;
	}
	return 0;
}

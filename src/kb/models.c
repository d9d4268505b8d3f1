/*
 * models.c: typed records for data/models.tsv and model name lookup.
 */
#include "kb/kb_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static model_spec *models;
static size_t nmodels;

enum {
	C_ID, C_NAME, C_ALIASES, C_ARCH, C_LAYERS, C_HIDDEN, C_HEADS, C_KV_HEADS, C_HEAD_DIM,
	C_FFN, C_VOCAB, C_EXPERTS, C_EXPERTS_USED, C_EXPERT_FFN, C_PTOTAL, C_PACTIVE, C_SWA,
	C_SWA_PERIOD, C_CTX, C_TIED, C_DEFQ, C_LATENT, C_MOE_STEP, C_SHARED_FFN, C_DENSE_LEAD, C_SOURCE,
	C_COUNT
};
static const char *const cols[C_COUNT] = {
	"id", "name", "aliases", "arch", "layers", "hidden", "heads", "kv_heads", "head_dim",
	"ffn", "vocab", "experts", "experts_used", "expert_ffn", "params_total", "params_active",
	"swa_window", "swa_period", "ctx_train", "tied_embeddings", "default_quant", "kv_latent",
	"moe_step", "shared_ffn", "dense_lead", "source",
};

/* The optional ssm column: empty, or six non-negative integers
 * "conv:inner:state:groups:dt_rank:full_every" (conv and inner above 0). */
static int read_ssm(const kb_table *t, size_t r, model_spec *m, gw_error *err)
{
	long c = kb_col(t, "ssm");
	const char *s = c >= 0 ? kb_cell(t, r, c) : "";
	if (!*s)
		return 0;
	int *f[6] = {&m->ssm_conv, &m->ssm_inner, &m->ssm_state, &m->ssm_groups, &m->ssm_dt_rank, &m->full_attn_every};
	const char *p = s;
	for (int i = 0; i < 6; i++) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > (1 << 24) || (i < 5 ? *end != ':' : *end != '\0') || (i < 2 && v == 0))
			return gw_fail(err, GW_EFORMAT,
				       "table '%s' line %zu, column 'ssm': '%s' is not conv:inner:state:groups:dt_rank:full_every",
				       t->name, t->lines[r], s);
		*f[i] = (int)v;
		p = end + 1;
	}
	return 0;
}

/* The optional columns released (YYYY-MM) and kind (chat,code,reasoning,vision). */
static int read_release_kind(const kb_table *t, size_t r, model_spec *m, gw_error *err)
{
	long cr = kb_col(t, "released"), ck = kb_col(t, "kind");
	m->released = cr >= 0 ? kb_cell(t, r, cr) : "";
	m->kind = ck >= 0 ? kb_cell(t, r, ck) : "";
	const char *d = m->released;
	if (*d && !(strlen(d) == 7 && d[4] == '-' && d[0] >= '1' && d[0] <= '2' && strspn(d, "0123456789-") == 7 &&
		    ((d[5] == '0' && d[6] >= '1') || (d[5] == '1' && d[6] <= '2'))))
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column 'released': '%s' is not YYYY-MM", t->name,
			       t->lines[r], d);
	for (const char *p = m->kind; *p;) {
		size_t n = strcspn(p, ",");
		if (!((n == 4 && !strncmp(p, "chat", 4)) || (n == 4 && !strncmp(p, "code", 4)) ||
		      (n == 9 && !strncmp(p, "reasoning", 9)) || (n == 6 && !strncmp(p, "vision", 6))))
			return gw_fail(err, GW_EFORMAT,
				       "table '%s' line %zu, column 'kind': '%.*s' is not chat, code, reasoning or vision",
				       t->name, t->lines[r], (int)n, p);
		p += n + (p[n] == ',');
	}
	return 0;
}

bool kb_model_is_kind(const model_spec *m, const char *kind)
{
	size_t k = strlen(kind);
	for (const char *p = m->kind; p && *p;) {
		size_t n = strcspn(p, ",");
		if (n == k && !strncmp(p, kind, n))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static int read_row(const kb_table *t, size_t r, const long *c, model_spec *m, gw_error *err)
{
	int rc;
	memset(m, 0, sizeof *m);
	m->id = kb_cell(t, r, c[C_ID]);
	m->name = kb_cell(t, r, c[C_NAME]);
	m->aliases = kb_cell(t, r, c[C_ALIASES]);
	m->arch = kb_cell(t, r, c[C_ARCH]);
	m->source = kb_cell(t, r, c[C_SOURCE]);
	if ((rc = kb_cell_required(t, r, c[C_ID], err)) || (rc = kb_cell_required(t, r, c[C_NAME], err)) ||
	    (rc = kb_cell_required(t, r, c[C_ARCH], err)) ||
	    (rc = kb_cell_int(t, r, c[C_LAYERS], 1, 10000, false, &m->layers, err)) ||
	    (rc = kb_cell_int(t, r, c[C_HIDDEN], 1, 1 << 20, false, &m->hidden, err)) ||
	    (rc = kb_cell_int(t, r, c[C_HEADS], 1, 1 << 16, false, &m->heads, err)) ||
	    (rc = kb_cell_int(t, r, c[C_KV_HEADS], 1, 1 << 16, false, &m->kv_heads, err)) ||
	    (rc = kb_cell_int(t, r, c[C_HEAD_DIM], 1, 1 << 16, false, &m->head_dim, err)) ||
	    (rc = kb_cell_int(t, r, c[C_FFN], 1, 1 << 24, false, &m->ffn, err)) ||
	    (rc = kb_cell_int(t, r, c[C_VOCAB], 1, 1 << 24, false, &m->vocab, err)) ||
	    (rc = kb_cell_int(t, r, c[C_EXPERTS], 0, 1 << 16, false, &m->experts, err)) ||
	    (rc = kb_cell_int(t, r, c[C_EXPERTS_USED], 0, 1 << 16, false, &m->experts_used, err)) ||
	    (rc = kb_cell_int(t, r, c[C_EXPERT_FFN], 0, 1 << 24, false, &m->expert_ffn, err)) ||
	    (rc = kb_cell_double(t, r, c[C_PTOTAL], 1e6, 1e14, false, &m->params_total, err)) ||
	    (rc = kb_cell_double(t, r, c[C_PACTIVE], 1e6, 1e14, false, &m->params_active, err)) ||
	    (rc = kb_cell_int(t, r, c[C_SWA], 0, 1 << 24, false, &m->swa_window, err)) ||
	    (rc = kb_cell_int(t, r, c[C_SWA_PERIOD], 0, 10000, false, &m->swa_period, err)) ||
	    (rc = kb_cell_int(t, r, c[C_CTX], 1, 1 << 28, false, &m->ctx_train, err)) ||
	    (rc = kb_cell_bool(t, r, c[C_TIED], &m->tied_embeddings, err)) ||
	    (rc = kb_cell_int(t, r, c[C_LATENT], 0, 1 << 16, false, &m->kv_latent, err)) ||
	    (rc = kb_cell_int(t, r, c[C_MOE_STEP], 0, 10000, false, &m->moe_step, err)) ||
	    (rc = kb_cell_int(t, r, c[C_SHARED_FFN], 0, 1 << 24, false, &m->shared_ffn, err)) ||
	    (rc = kb_cell_int(t, r, c[C_DENSE_LEAD], 0, 10000, false, &m->dense_lead, err)))
		return rc;
	m->default_quant = kb_cell(t, r, c[C_DEFQ]);
	if ((rc = read_ssm(t, r, m, err)) || (rc = read_release_kind(t, r, m, err)))
		return rc;
	/* cross-column sanity: a row that breaks these would mislead the planner */
	if (m->heads % m->kv_heads)
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu: heads %d not a multiple of kv_heads %d",
			       t->name, t->lines[r], m->heads, m->kv_heads);
	if ((m->experts == 0) != (m->experts_used == 0) || m->experts_used > m->experts ||
	    (m->experts && !m->expert_ffn))
		return gw_fail(err, GW_EFORMAT,
			       "table '%s' line %zu: experts %d, experts_used %d, expert_ffn %d do not agree",
			       t->name, t->lines[r], m->experts, m->experts_used, m->expert_ffn);
	if (!m->experts && (m->moe_step || m->shared_ffn || m->dense_lead))
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu: moe_step, shared_ffn and dense_lead need experts",
			       t->name, t->lines[r]);
	if (m->moe_step > m->layers || m->dense_lead >= m->layers)
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu: moe_step %d and dense_lead %d leave no MoE block of %d",
			       t->name, t->lines[r], m->moe_step, m->dense_lead, m->layers);
	if (m->params_active > m->params_total)
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu: params_active above params_total",
			       t->name, t->lines[r]);
	if ((m->swa_window == 0) != (m->swa_period == 0))
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu: swa_window and swa_period must both be set or both 0",
			       t->name, t->lines[r]);
	return 0;
}

static int read_row_any(const kb_table *t, size_t r, const long *c, void *rec, gw_error *err)
{
	return read_row(t, r, c, rec, err);
}

static const char *id_of(const void *rec)
{
	return ((model_spec const *)rec)->id;
}

static kb_records records = {
	.table = "models",
	.cols = cols,
	.ncols = C_COUNT,
	.rec_size = sizeof(model_spec),
	.read_row = read_row_any,
	.id_of = id_of,
};

int kb_models_load(gw_error *err)
{
	int rc = kb_records_load(&records, err);
	models = records.recs;
	nmodels = records.n;
	return rc;
}

void kb_models_release(void)
{
	kb_records_release(&records);
	models = NULL;
	nmodels = 0;
}

size_t kb_model_count(void)
{
	kb_models_load(NULL);
	return nmodels;
}

const model_spec *kb_model_at(size_t i)
{
	kb_models_load(NULL);
	return i < nmodels ? &models[i] : NULL;
}

static const model_spec *find_name(const char *name)
{
	char key[KB_KEY_MAX];
	kb_name_key(name, key, sizeof key);
	for (size_t i = 0; i < nmodels; i++)
		if (kb_names_match(key, models[i].id, models[i].name, models[i].aliases))
			return &models[i];
	return NULL;
}

/* Copy of s without a trailing "-instruct", "-it" or "-chat" word; NULL if none. */
static char *strip_tune_suffix(const char *s)
{
	static const char *const sfx[] = {"-instruct", "-it", "-chat", "-base"};
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
		size_t ls = strlen(s), lx = strlen(sfx[i]);
		if (ls > lx && strncasecmp(s + ls - lx, sfx[i], lx) == 0)
			return xstrndup(s, ls - lx);
	}
	return NULL;
}

/* "Model-Instruct-GGUF" or "org_Model-GGUF" (bartowski's form): the model
 * without the -GGUF suffix, the tuning suffix, an "org_" prefix or a
 * "Meta-" prefix of old Llama repository names. */
static const model_spec *find_gguf_repo(const char *repo)
{
	size_t n = strlen(repo);
	if (n <= 5 || strcasecmp(repo + n - 5, "-gguf"))
		return NULL;
	char *base = xstrndup(repo, n - 5);
	const char *cands[3] = {base, strchr(base, '_') ? strchr(base, '_') + 1 : NULL,
				!strncasecmp(base, "meta-", 5) ? base + 5 : NULL};
	const model_spec *m = NULL;
	for (size_t i = 0; i < 3 && !m; i++) {
		if (!cands[i] || !*cands[i])
			continue;
		if ((m = find_name(cands[i])))
			break;
		char *t = strip_tune_suffix(cands[i]);
		if (t)
			m = find_name(t);
		free(t);
	}
	free(base);
	return m;
}

/*
 * Besides the exact id, name or alias, accept the forms people paste:
 * "org/Model-Instruct" (any org, tuning suffix dropped) and Ollama tags
 * with a quantization ("llama3.1:8b-instruct-q4_K_M" -> "llama3.1:8b",
 * "qwen3:4b-instruct-2507-q4_K_M" -> "qwen3:4b-instruct-2507").
 */
const model_spec *kb_model_find(const char *name)
{
	const model_spec *m = NULL;
	char *tmp = NULL, *tmp2 = NULL;
	if (!name || !*name || kb_models_load(NULL))
		return NULL;
	if ((m = find_name(name)))
		goto out;
	const char *colon = strchr(name, ':');
	const char *slash = strrchr(name, '/');
	if (colon && strchr(colon, '-')) {
		/* drop "-word" suffixes from the right, longest tag first:
		 * "qwen3:30b-a3b-instruct-2507-q4_K_M" -> "qwen3:30b-a3b-instruct-2507" */
		tmp = xstrdup(name);
		char *dash, *tag = tmp + (colon - name);
		while (!m && (dash = strrchr(tag, '-')))
			*dash = '\0', m = find_name(tmp);
		goto out;
	}
	if (slash) {
		m = find_name(slash + 1);
		if (m)
			goto out;
	}
	tmp2 = strip_tune_suffix(slash ? slash + 1 : name);
	if (tmp2 && (m = find_name(tmp2)))
		goto out;
	/* a GGUF repository ("bartowski/openai_gpt-oss-20b-GGUF",
	 * "unsloth/Qwen3-30B-A3B-GGUF"): the base model it quantizes */
	if (slash)
		m = find_gguf_repo(slash + 1);
out:
	free(tmp);
	free(tmp2);
	return m;
}

const model_spec *kb_model_suggest(const char *name)
{
	char key[KB_KEY_MAX];
	const model_spec *best = NULL;
	size_t best_d = (size_t)-1;
	if (!name || kb_models_load(NULL))
		return NULL;
	kb_name_key(name, key, sizeof key);
	if (!*key)
		return NULL;
	for (size_t i = 0; i < nmodels; i++) {
		size_t d = kb_names_distance(key, models[i].id, models[i].name, models[i].aliases);
		if (d < best_d) {
			best_d = d;
			best = &models[i];
		}
	}
	return best && best_d * 2 <= strlen(key) + 1 ? best : NULL;
}

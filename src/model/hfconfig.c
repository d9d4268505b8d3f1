/*
 * hfconfig.c: a Hugging Face config.json alone.  The shape comes from the
 * transformers field names; the parameter count is computed from it.
 */
#include "model/internal.h"

#include <jansson.h>
#include <string.h>

#include "util/json.h"

#define HF_MAX_CONFIG (16u * 1024 * 1024)

/* transformers model_type -> llama.cpp architecture (convert_hf_to_gguf.py). */
static const char *const arch_map[][2] = {
	{"llama", "llama"},         {"mistral", "llama"},      {"mixtral", "llama"},
	{"qwen2", "qwen2"},         {"qwen2_moe", "qwen2moe"}, {"qwen3", "qwen3"},
	{"qwen3_moe", "qwen3moe"},  {"gemma", "gemma"},        {"gemma2", "gemma2"},
	{"gemma3", "gemma3"},       {"gemma3_text", "gemma3"}, {"phi3", "phi3"},
	{"phi", "phi2"},            {"gpt_oss", "gpt-oss"},    {"deepseek_v2", "deepseek2"},
	{"deepseek_v3", "deepseek2"}, {"cohere2", "cohere2"},  {"starcoder2", "starcoder2"},
	{"llama4", "llama4"},       {"llama4_text", "llama4"}, {"olmo2", "olmo2"},
	{"olmo3", "olmo2"}, /* convert_hf_to_gguf.py: Olmo3ForCausalLM -> MODEL_ARCH.OLMO2 */
};

static const char *map_arch(const char *model_type)
{
	for (size_t i = 0; i < sizeof arch_map / sizeof arch_map[0]; i++)
		if (!strcmp(arch_map[i][0], model_type))
			return arch_map[i][1];
	return model_type;
}

/* An optional non-negative integer field; *v unchanged when absent or null. */
static int get_u32(json_t *o, const char *key, uint32_t max, uint32_t *v, const char *name, gw_error *err)
{
	json_t *j = json_object_get(o, key);
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < 0 || (uint64_t)json_integer_value(j) > max)
		return gw_fail(err, GW_EFORMAT, "cannot read '%s': \"%s\" must be an integer from 0 to %u", name, key,
			       max);
	*v = (uint32_t)json_integer_value(j);
	return 0;
}

/* Fill m from a parsed config object (root may nest text_config). */
static int from_json(json_t *root, const char *name, model_desc *m, gw_error *err)
{
	json_t *cfg = json_object_get(root, "text_config");
	if (!json_is_object(cfg))
		cfg = root;
	int rc = 0;
	const uint32_t big = 1u << 30;
	uint32_t heads = 0, kv = 0, head_dim = 0, experts = 0, used = 0, swa = 0, pattern = 0, ctx = 0;
	uint32_t shared_ffn = 0, moe_ffn = 0, mlp_ffn = 0, moe_step = 0, n_shared = 0, chunk = 0, dense_lead = 0;

	const char *mt = json_string_value(json_object_get(cfg, "model_type"));
	if (!mt)
		mt = json_string_value(json_object_get(root, "model_type"));
	m->arch = xstrdup(mt ? map_arch(mt) : "llama");

	if ((rc = get_u32(cfg, "num_hidden_layers", MODEL_MAX_LAYERS, &m->n_layers, name, err)) ||
	    (rc = get_u32(cfg, "hidden_size", big, &m->hidden, name, err)) ||
	    (rc = get_u32(cfg, "num_attention_heads", big, &heads, name, err)) ||
	    (rc = get_u32(cfg, "num_key_value_heads", big, &kv, name, err)) ||
	    (rc = get_u32(cfg, "head_dim", big, &head_dim, name, err)) ||
	    (rc = get_u32(cfg, "intermediate_size", big, &m->ffn, name, err)) ||
	    (rc = get_u32(cfg, "vocab_size", big, &m->vocab, name, err)) ||
	    (rc = get_u32(cfg, "max_position_embeddings", UINT32_MAX, &ctx, name, err)) ||
	    (rc = get_u32(cfg, "num_local_experts", 1u << 20, &experts, name, err)) ||
	    (rc = get_u32(cfg, "num_experts", 1u << 20, &experts, name, err)) ||
	    (rc = get_u32(cfg, "experts_per_token", 1u << 20, &used, name, err)) ||
	    (rc = get_u32(cfg, "num_experts_per_tok", 1u << 20, &used, name, err)) ||
	    (rc = get_u32(cfg, "moe_intermediate_size", big, &moe_ffn, name, err)) ||
	    (rc = get_u32(cfg, "shared_expert_intermediate_size", big, &shared_ffn, name, err)) ||
	    (rc = get_u32(cfg, "sliding_window", UINT32_MAX, &swa, name, err)) ||
	    (rc = get_u32(cfg, "sliding_window_pattern", MODEL_MAX_LAYERS, &pattern, name, err)) ||
	    /* Llama 4: intermediate_size is the expert (and shared expert)
	     * width, intermediate_size_mlp the dense blocks' width, every
	     * interleave_moe_layer_step-th block is MoE; DeepSeek-V2/V3:
	     * first_k_dense_replace dense blocks, n_shared_experts */
	    (rc = get_u32(cfg, "intermediate_size_mlp", big, &mlp_ffn, name, err)) ||
	    (rc = get_u32(cfg, "interleave_moe_layer_step", MODEL_MAX_LAYERS, &moe_step, name, err)) ||
	    (rc = get_u32(cfg, "n_shared_experts", 1u << 10, &n_shared, name, err)) ||
	    (rc = get_u32(cfg, "first_k_dense_replace", MODEL_MAX_LAYERS, &dense_lead, name, err)) ||
	    (rc = get_u32(cfg, "attention_chunk_size", UINT32_MAX, &chunk, name, err)))
		return rc;
	m->n_heads = heads;
	m->n_kv_heads = kv;
	m->head_dim_k = m->head_dim_v = head_dim;
	m->n_experts = experts;
	m->n_experts_used = used;
	json_t *kvj = json_object_get(cfg, "num_key_value_heads");
	if ((rc = model_check_shape(m, json_is_integer(kvj), name, err)))
		return rc;
	if (heads && m->hidden && !head_dim)
		head_dim = m->hidden / heads;
	m->n_kv_heads = kv ? kv : heads;
	m->head_dim_k = m->head_dim_v = head_dim;
	m->ctx_train = ctx;
	m->n_experts_used = experts ? used : 0;
	m->expert_ffn = experts ? (moe_ffn ? moe_ffn : m->ffn) : 0;
	if (experts) {
		bool llama4 = !strcmp(m->arch, "llama4");
		if (mlp_ffn)
			m->ffn = mlp_ffn; /* the dense blocks; expert_ffn stays intermediate_size */
		m->moe_step = moe_step;
		/* Llama 4: one shared expert as wide as a routed one in every
		 * MoE block (llama.cpp llama4: ffn_*_shexp of n_ff_exp) */
		m->shared_expert_ffn = shared_ffn ? shared_ffn : n_shared ? n_shared * m->expert_ffn
							    : llama4 ? m->expert_ffn : 0;
		m->n_expert_shared = n_shared ? n_shared : m->shared_expert_ffn ? 1 : 0;
		m->n_dense_lead = dense_lead;
		if (m->n_layers && (moe_step > m->n_layers || dense_lead >= m->n_layers))
			return gw_fail(err, GW_EFORMAT,
				       "cannot read '%s': interleave_moe_layer_step %u and first_k_dense_replace %u leave no MoE layer of %u",
				       name, moe_step, dense_lead, m->n_layers);
	}

	json_t *tie = json_object_get(root, "tie_word_embeddings");
	if (!json_is_boolean(tie))
		tie = json_object_get(cfg, "tie_word_embeddings");
	/* transformers' default is true; LlamaConfig, Qwen2Config, MistralConfig ... set false */
	m->tied_embeddings = json_is_boolean(tie) ? json_is_true(tie) : !strncmp(m->arch, "gemma", 5);

	/* Sliding-window layers: layer_types when given, else the arch's pattern. */
	json_t *lt = json_object_get(cfg, "layer_types");
	if (swa && json_is_array(lt)) {
		if (json_array_size(lt) != m->n_layers)
			return gw_fail(err, GW_EFORMAT, "cannot read '%s': layer_types has %zu entries for %u layers", name,
				       json_array_size(lt), m->n_layers);
		bool any = false;
		m->layer_swa = xcalloc(m->n_layers ? m->n_layers : 1, sizeof *m->layer_swa);
		for (uint32_t i = 0; i < m->n_layers; i++) {
			const char *t = json_string_value(json_array_get(lt, i));
			m->layer_swa[i] = t && !strcmp(t, "sliding_attention");
			any |= m->layer_swa[i];
		}
		if (any) {
			m->swa_window = swa;
		} else {
			free(m->layer_swa);
			m->layer_swa = NULL;
		}
	} else if (swa) {
		uint32_t period = 0;
		if (!strcmp(m->arch, "gemma2") || !strcmp(m->arch, "gpt-oss"))
			period = 2;
		else if (!strcmp(m->arch, "gemma3"))
			period = pattern ? pattern : 6;
		else if (!strcmp(m->arch, "cohere2"))
			period = pattern ? pattern : 4;
		else if (!strcmp(m->arch, "olmo2")) /* OLMo 3: 3 sliding, the 4th full */
			period = pattern ? pattern : 4;
		model_set_swa(m, swa, period);
	} else if (chunk && !strcmp(m->arch, "llama4")) {
		/* chunked attention on 3 of 4 blocks, which llama.cpp keeps in
		 * its SWA cache (src/models/llama4.cpp: n_swa 8192, pattern 4) */
		model_set_swa(m, chunk, 4);
	}

	/* Parameters from the shape, plus the pieces the generic count omits. */
	double active;
	m->params_total = model_shape_params(m, &active);
	double extra = 0;
	json_t *bias = json_object_get(cfg, "attention_bias");
	if (!strcmp(m->arch, "qwen2") || !strcmp(m->arch, "qwen2moe") || json_is_true(bias))
		extra += (double)m->n_layers * ((double)heads + 2.0 * m->n_kv_heads) * head_dim;
	if (shared_ffn) /* Qwen2-MoE: the shared expert's gate (the expert itself is in the shape count) */
		extra += (double)m->n_layers * m->hidden;
	m->params_total += extra;
	m->params_active = active + extra;
	m->source = MODEL_SRC_CONFIG;
	return 0;
}

static int parse(const char *text, size_t len, const char *name, model_desc *m, gw_error *err)
{
	char jerr[200];
	int rc;
	memset(m, 0, sizeof *m);
	if (len > HF_MAX_CONFIG)
		return gw_fail(err, GW_ERANGE, "cannot read '%s': larger than %u bytes", name, HF_MAX_CONFIG);
	/* A UTF-8 byte-order mark, as some Windows editors write (RFC 8259 section 8.1 lets parsers skip it). */
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
		text += 3;
		len -= 3;
	}
	json_t *root = json_parse_limited(text, len, jerr, sizeof jerr);
	if (!root)
		return gw_fail(err, GW_EFORMAT, "cannot read '%s': invalid JSON (%s)", name, jerr);
	if (!json_is_object(root)) {
		rc = gw_fail(err, GW_EFORMAT, "cannot read '%s': not a JSON object", name);
		goto out;
	}
	if ((rc = from_json(root, name, m, err)))
		goto out;
	const char *nm = json_string_value(json_object_get(root, "_name_or_path"));
	if (nm && *nm)
		m->name = xstrdup(nm);
	model_finish(m);
out:
	json_decref(root);
	if (rc)
		model_release(m);
	return rc;
}

int hfconfig_read_mem(const char *text, size_t len, model_desc *m, gw_error *err)
{
	return parse(text, len, "(buffer)", m, err);
}

int hfconfig_read_text(const char *text, size_t len, const char *name, model_desc *m, gw_error *err)
{
	memset(m, 0, sizeof *m);
	return parse(text, len, name, m, err);
}

int hfconfig_read(const char *path, model_desc *m, gw_error *err)
{
	char *text = NULL;
	size_t len = 0;
	memset(m, 0, sizeof *m);
	int rc = gw_read_file(path, false, HF_MAX_CONFIG, &text, &len, err);
	if (rc)
		return rc;
	rc = parse(text, len, path, m, err);
	free(text);
	if (rc)
		return rc;
	m->path = xstrdup(path);
	if (!m->name) {
		/* a config.json is named by its directory */
		char *dir = xstrdup(path);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			m->name = model_base_name(dir);
		} else {
			m->name = model_base_name(path);
		}
		free(dir);
	}
	return 0;
}

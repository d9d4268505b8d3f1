/*
 * layers.c: the layer taxonomy -- which layers of a model keep a KV cache,
 * a recurrent state, both, or neither, which read another layer's cache,
 * and which keep an extra indexer-key cache -- decided the way llama.cpp's
 * loaders decide it (0c1e570, the build llama-cpp-python 0.3.36 bundles).
 *
 * Each architecture with a rule of its own is one row below, citing the
 * llama.cpp file the rule comes from (src/models/ARCH.cpp
 * load_arch_hparams, which fills hparams.is_recr_impl, and
 * llama_model::create_memory in src/llama-model.cpp, whose layer filters
 * pick the layers of each cache).  Architectures without a row follow the
 * common rule: a layer is recurrent when the model has SSM keys and the
 * layer has no KV heads, and every other layer with KV heads keeps a
 * cache.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

/* How the recurrent layers are chosen. */
enum recr_rule {
	R_KV0,      /* recurrent iff no KV heads (the common rule) */
	R_KV0_FF0,  /* recurrent iff no KV heads and no FFN; attention iff not recurrent and no FFN */
	R_PARALLEL, /* every layer recurrent and attention side by side */
	R_INTERVAL, /* attention.recurrent_layers, else every full_attention_interval-th (4) layer attends */
};

static const struct layer_rule {
	const char *arch;
	enum recr_rule recr;
	uint8_t mixer;
	int kv_from_start;  /* >0 fixed; -1: block_count - attention.shared_kv_layers */
	bool ffn_ungated;
	bool indexer;       /* a K-only indexer cache on every layer (DSA) */
	const char *src;
} rules[] = {
	{"mamba", R_KV0, MODEL_MIX_MAMBA1, 0, false, false, "src/models/mamba.cpp (llm_arch_is_recurrent)"},
	{"mamba2", R_KV0, MODEL_MIX_MAMBA2, 0, false, false, "src/models/mamba2.cpp (llm_arch_is_recurrent)"},
	{"jamba", R_KV0, MODEL_MIX_MAMBA1, 0, false, false, "src/models/jamba.cpp load_arch_hparams"},
	{"granitehybrid", R_KV0, MODEL_MIX_MAMBA2, 0, false, false, "src/models/granite-hybrid.cpp load_arch_hparams"},
	{"plamo2", R_KV0, MODEL_MIX_MAMBA2, 0, false, false, "src/models/plamo2.cpp load_arch_hparams"},
	{"lfm2", R_KV0, MODEL_MIX_SHORTCONV, 0, false, false, "src/models/lfm2.cpp load_arch_hparams"},
	{"lfm2moe", R_KV0, MODEL_MIX_SHORTCONV, 0, false, false, "src/models/lfm2moe.cpp load_arch_hparams"},
	{"falcon-h1", R_PARALLEL, MODEL_MIX_MAMBA2, 0, false, false,
	 "src/models/falcon-h1.cpp (is_recr on every layer); src/llama-model.cpp create_memory (both filters true)"},
	{"nemotron_h", R_KV0_FF0, MODEL_MIX_MAMBA2, 0, false, false,
	 "src/models/nemotron-h.cpp load_arch_hparams; src/llama-model.cpp create_memory (filters need n_ff == 0)"},
	{"nemotron_h_moe", R_KV0_FF0, MODEL_MIX_MAMBA2, 0, false, false,
	 "src/models/nemotron-h-moe.cpp; src/llama-model.cpp create_memory (filters need n_ff == 0)"},
	{"qwen3next", R_INTERVAL, MODEL_MIX_GDN, 0, false, false, "src/models/qwen3next.cpp load_arch_hparams"},
	{"qwen35", R_INTERVAL, MODEL_MIX_GDN, 0, false, false, "src/models/qwen35.cpp load_arch_hparams"},
	{"qwen35moe", R_INTERVAL, MODEL_MIX_GDN, 0, false, false, "src/models/qwen35moe.cpp load_arch_hparams"},
	{"gemma3n", R_KV0, MODEL_MIX_NONE, 20, false, false,
	 "src/models/gemma3n.cpp (n_layer_kv_from_start = 20); src/llama-model.cpp create_memory (reuse)"},
	{"gemma4", R_KV0, MODEL_MIX_NONE, -1, false, false,
	 "src/models/gemma4.cpp (n_layer_kv_from_start = n_layer - shared_kv_layers)"},
	{"starcoder2", R_KV0, MODEL_MIX_NONE, 0, true, false, "src/models/starcoder2.cpp (build_ffn LLM_FFN_GELU, LLM_FFN_SEQ)"},
	{"arcee", R_KV0, MODEL_MIX_NONE, 0, true, false, "src/models/arcee.cpp (build_ffn LLM_FFN_RELU_SQR, LLM_FFN_SEQ)"},
	{"deepseek32", R_KV0, MODEL_MIX_NONE, 0, false, true,
	 "src/llama-model.cpp create_memory (llama_kv_cache_dsa); src/llama-kv-cache-dsa.cpp (one indexer key head)"},
};

static const struct layer_rule *rule_of(const char *arch)
{
	for (size_t i = 0; arch && i < sizeof rules / sizeof rules[0]; i++)
		if (!strcmp(arch, rules[i].arch))
			return &rules[i];
	return NULL;
}

const char *model_layers_rule(const char *arch)
{
	const struct layer_rule *r = rule_of(arch);
	return r ? r->src : NULL;
}

uint32_t model_layer_kv_heads(const model_desc *m, uint32_t il)
{
	return m->layer_kv_heads && il < m->n_layers ? m->layer_kv_heads[il] : m->n_kv_heads;
}

static bool swa_layer(const model_desc *m, uint32_t il)
{
	return m->swa_window && m->layer_swa && il < m->n_layers && m->layer_swa[il];
}

uint32_t model_layer_head_k(const model_desc *m, uint32_t il)
{
	return swa_layer(m, il) && m->head_dim_k_swa ? m->head_dim_k_swa : m->head_dim_k;
}

uint32_t model_layer_head_v(const model_desc *m, uint32_t il)
{
	return swa_layer(m, il) && m->head_dim_v_swa ? m->head_dim_v_swa : m->head_dim_v;
}

static uint32_t layer_ffn(const model_desc *m, uint32_t il)
{
	return m->layer_ffn ? m->layer_ffn[il] : m->ffn;
}

/*
 * layer_mix from what the reader found.  Recurrent layers need the SSM (or
 * short-conv) keys (m->recurrent); without them no layer is recurrent,
 * whatever the rule.  Idempotent.
 */
void model_layers_fill(model_desc *m)
{
	const struct layer_rule *r = rule_of(m->arch);
	free(m->layer_mix);
	m->layer_mix = NULL;
	m->layer_rule = r ? r->src : NULL;
	m->kv_from_start = 0;
	m->ffn_ungated = r && r->ffn_ungated;
	if (!m->n_layers)
		return;
	m->layer_mix = xcalloc(m->n_layers, sizeof *m->layer_mix);
	enum recr_rule rr = r ? r->recr : R_KV0;
	m->mixer = !m->recurrent ? MODEL_MIX_NONE : r && r->mixer ? r->mixer
		 : m->ssm_state == 0 ? MODEL_MIX_SHORTCONV : m->ssm_groups ? MODEL_MIX_MAMBA2 : MODEL_MIX_MAMBA1;
	if (r && r->kv_from_start > 0 && (uint32_t)r->kv_from_start < m->n_layers)
		m->kv_from_start = (uint32_t)r->kv_from_start;
	else if (r && r->kv_from_start < 0 && m->n_shared_kv_layers && m->n_shared_kv_layers < m->n_layers)
		m->kv_from_start = m->n_layers - m->n_shared_kv_layers;
	uint32_t every = m->full_attn_interval ? m->full_attn_interval : 4;
	for (uint32_t il = 0; il < m->n_layers; il++) {
		uint32_t kvh = model_layer_kv_heads(m, il), ff = layer_ffn(m, il);
		bool rec = false, kv = kvh > 0 && m->n_heads > 0;
		switch (rr) {
		case R_KV0:
			rec = m->recurrent && kvh == 0;
			break;
		case R_KV0_FF0:
			rec = m->recurrent && kvh == 0 && ff == 0;
			kv = kv && !rec && ff == 0;
			break;
		case R_PARALLEL:
			rec = m->recurrent;
			break;
		case R_INTERVAL:
			rec = m->recurrent &&
			      (m->layer_recr_given ? m->layer_recr_given[il] : (il + 1) % every != 0);
			kv = kv && !rec;
			break;
		}
		if (rr == R_KV0)
			kv = kv && !rec;
		if (m->kv_from_start && il >= m->kv_from_start)
			kv = false;
		uint8_t f = (uint8_t)((kv ? MODEL_L_KV : 0) | (rec ? MODEL_L_RS : 0) |
				      (ff || m->n_experts ? MODEL_L_FFN : 0));
		if (r && r->indexer && m->indexer_key_len && (kv || kvh))
			f |= MODEL_L_IDX;
		m->layer_mix[il] = f;
	}
}

bool model_layer_recurrent(const model_desc *m, uint32_t il)
{
	if (!m->recurrent || il >= m->n_layers)
		return false;
	if (m->layer_mix)
		return m->layer_mix[il] & MODEL_L_RS;
	return model_layer_kv_heads(m, il) == 0;
}

bool model_layer_has_kv(const model_desc *m, uint32_t il)
{
	if (il >= m->n_layers)
		return false;
	if (m->layer_mix)
		return m->layer_mix[il] & MODEL_L_KV;
	return !model_layer_recurrent(m, il) && model_layer_kv_heads(m, il) > 0;
}

bool model_layer_has_idx(const model_desc *m, uint32_t il)
{
	return m->layer_mix && il < m->n_layers && (m->layer_mix[il] & MODEL_L_IDX);
}

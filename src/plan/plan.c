/*
 * plan.c: one plan over an engine (engine.h; one file per engine), the
 * largest context and the ranked advice.
 */
#include "plan/engine.h"
#include "plan/prices.h"
#include "kb/lifecycle.h"

#include <math.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- names ------------------------------------------------------------ */
const char *plan_engine_name(plan_engine e)
{
	return plan_engine_ops_of(e)->name;
}

int plan_engine_parse(const char *s, plan_engine *e)
{
	if (str_ieq(s, "llama.cpp") || str_ieq(s, "llamacpp") || str_ieq(s, "llama-cpp") ||
	    str_ieq(s, "llama"))
		*e = PLAN_ENGINE_LLAMACPP;
	else if (str_ieq(s, "ollama"))
		*e = PLAN_ENGINE_OLLAMA;
	else if (str_ieq(s, "vllm"))
		*e = PLAN_ENGINE_VLLM;
	else if (str_ieq(s, "transformers") || str_ieq(s, "hf") || str_ieq(s, "huggingface"))
		*e = PLAN_ENGINE_TRANSFORMERS;
	else
		return GW_EINVAL;
	return 0;
}

int plan_engine_spec_parse(const char *s, plan_engine *e, const char **build)
{
	char name[32];
	const char *at = strchr(s, '@');
	size_t n = at ? (size_t)(at - s) : strlen(s);
	*build = NULL;
	if (n >= sizeof name)
		return GW_EINVAL;
	memcpy(name, s, n);
	name[n] = 0;
	if (plan_engine_parse(name, e))
		return GW_EINVAL;
	if (!at)
		return 0;
	/* only llama.cpp has version profiles (Ollama follows its own releases) */
	if (*e != PLAN_ENGINE_LLAMACPP || !plan_llamacpp_build_find(at + 1))
		return GW_EINVAL;
	*build = at + 1;
	return 0;
}

const char *plan_engine_builds(plan_engine e)
{
	return e == PLAN_ENGINE_LLAMACPP ? plan_llamacpp_build_list() : "";
}

int plan_fa_parse(const char *s, plan_fa *fa)
{
	if (str_ieq(s, "auto"))
		*fa = PLAN_FA_AUTO;
	else if (str_ieq(s, "on") || str_ieq(s, "1") || str_ieq(s, "true") || str_ieq(s, "enabled"))
		*fa = PLAN_FA_ON;
	else if (str_ieq(s, "off") || str_ieq(s, "0") || str_ieq(s, "false") || str_ieq(s, "disabled"))
		*fa = PLAN_FA_OFF;
	else
		return GW_EINVAL;
	return 0;
}

/* The engines (one file each, engine.h). */
const plan_engine_ops *plan_engine_ops_of(plan_engine e)
{
	switch (e) {
	case PLAN_ENGINE_OLLAMA:
		return &plan_engine_ollama_ops;
	case PLAN_ENGINE_VLLM:
		return &plan_engine_vllm_ops;
	case PLAN_ENGINE_TRANSFORMERS:
		return &plan_engine_transformers_ops;
	default:
		return &plan_engine_llamacpp_ops;
	}
}

const char *plan_verdict_name(plan_verdict v)
{
	return v == PLAN_FITS ? "fits" : v == PLAN_OFFLOAD ? "offload" : "no-fit";
}

void plan_request_init(plan_request *rq)
{
	memset(rq, 0, sizeof *rq);
	rq->engine = PLAN_ENGINE_LLAMACPP;
	rq->kv_type = PLAN_KV_F16;
	rq->gpu_layers = -1;
}

void plan_gpu_from_spec(plan_gpu *g, const gpu_spec *s)
{
	memset(g, 0, sizeof *g);
	snprintf(g->name, sizeof g->name, "%s", s->name);
	g->spec = s;
	g->vram_bytes = s->vram_bytes;
	g->bandwidth_gbs = s->bandwidth_gbs;
	g->fp16_tflops = s->fp16_tflops > 0 ? s->fp16_tflops : s->fp32_tflops;
	g->unified_memory = s->unified_memory;
}

void plan_note(plan_result *r, const char *fmt, ...)
{
	if (r->n_notes >= PLAN_MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->n_notes++], sizeof r->notes[0], _(fmt), ap);
	va_end(ap);
}

/*
 * The GPU's default share of unified memory, by kind:
 * - Apple: Metal's recommendedMaxWorkingSetSize, 2/3 of the RAM up to 32 GB
 *   (10922.67 MB of 16 GB: abetlen/llama-cpp-python issue 687's
 *   ggml_metal_init log) and 3/4 above (49152 MB of an M3 Max's 64 GB);
 *   macOS's sysctl iogpu.wired_limit_mb raises it.
 * - NVIDIA GB10 (DGX Spark): one LPDDR5X pool the CUDA driver allocates
 *   from whole; the OS keeps the larger of 4 GiB and 1/16 [assumption].
 * - AMD (Strix Halo, Linux): the BIOS carve-out plus GTT, which TTM caps
 *   at half the system memory by default (ttm.pages_limit; amdgpu.gttsize
 *   and ttm.pages_limit on the kernel command line, or a larger UMA frame
 *   buffer in the BIOS, raise it) [derived: the kernel's TTM default].
 */
static bool vendor_is(const gpu_spec *s, const char *v)
{
	return s && s->vendor && str_ieq(s->vendor, v);
}

uint64_t plan_unified_gpu_bytes(const gpu_spec *s, uint64_t total)
{
	if (vendor_is(s, "NVIDIA")) {
		uint64_t os = total / 16 > 4 * GiB ? total / 16 : 4 * GiB;
		return total > os ? total - os : total / 2;
	}
	if (vendor_is(s, "AMD") || vendor_is(s, "Intel"))
		return total / 2;
	return total > 32 * GiB ? total / 4 * 3 : total / 3 * 2;
}

const char *plan_unified_knob(const gpu_spec *s)
{
	if (vendor_is(s, "NVIDIA"))
		return _("all of the pool but the OS's share");
	if (vendor_is(s, "AMD") || vendor_is(s, "Intel"))
		return _("half the RAM, TTM's default GTT limit; raise it with amdgpu.gttsize and ttm.pages_limit "
			 "(kernel command line) or the BIOS's UMA frame buffer");
	return _("macOS's default working set, 2/3 of the RAM up to 32 GB and 3/4 above; raise it with sudo sysctl "
		 "iogpu.wired_limit_mb=N");
}

/* The rest of unified memory less the OS's share: the larger of 4 GiB
 * and 10% [assumption]. */
uint64_t plan_unified_host_bytes(const gpu_spec *s, uint64_t total)
{
	uint64_t rest = total - plan_unified_gpu_bytes(s, total);
	uint64_t os = total / 10 > 4 * GiB ? total / 10 : 4 * GiB;
	return rest > os ? rest - os : 0;
}

uint64_t plan_usable_bytes(const plan_gpu *g)
{
	uint64_t total = g->vram_bytes;
	if (g->unified_memory)
		total = plan_unified_gpu_bytes(g->spec, total);
	if (g->free_bytes && g->free_bytes < total)
		total = g->free_bytes;
	return total;
}

void plan_sum_devices(plan_result *r)
{
	r->weights_bytes = r->kv_cache_bytes = r->compute_bytes = r->overhead_bytes = 0;
	for (size_t d = 0; d < r->n_devices; d++) {
		r->weights_bytes += r->devices[d].weights_bytes;
		r->kv_cache_bytes += r->devices[d].kv_cache_bytes;
		r->compute_bytes += r->devices[d].compute_bytes;
		r->overhead_bytes += r->devices[d].overhead_bytes;
	}
	r->vram_bytes = r->weights_bytes + r->kv_cache_bytes + r->compute_bytes + r->overhead_bytes;
}

/* ---- one plan --------------------------------------------------------------- */
static int work_init(work *wk, const plan_request *rq, gw_error *err)
{
	const model_desc *m = rq->model;
	memset(wk, 0, sizeof *wk);
	wk->rq = rq;
	wk->m = m;
	if (!m)
		return gw_fail(err, GW_EINVAL, "no model");
	int rc = plan_weights_get(m, rq->quant, &wk->w, err);
	if (rc)
		return rc;
	wk->n = m->n_layers;
	wk->total = m->n_layers + 1;
	wk->nseq = rq->n_parallel ? rq->n_parallel : 1;
	wk->batch = rq->batch ? rq->batch : 512;
	wk->kv = rq->kv_type;
	wk->fa = rq->flash_attn == PLAN_FA_ON;
	uint64_t trained = m->ctx_train ? m->ctx_train : 4096;
	if (rq->ctx)
		wk->ctx = rq->ctx;
	else
		wk->ctx = trained < 4096 ? trained : 4096;
	wk->cells = wk->ctx * wk->nseq;
	plan_engine_ops_of(rq->engine)->setup(wk);
	if (!wk->kvs.n_stream) {
		wk->kvs = (plan_kv_shape){.cells = wk->cells, .n_stream = 1, .n_seq = wk->nseq, .ubatch = wk->batch};
	}
	wk->kvs.v_trans = !wk->fa;
	wk->layer_kv = xcalloc(wk->n ? wk->n : 1, sizeof *wk->layer_kv);
	for (uint32_t il = 0; il < wk->n; il++)
		wk->layer_kv[il] = plan_kv_shape_bytes(m, il, 1, &wk->kvs, wk->kv);
	/* largest tensor of a block ~ one FFN matrix (or one expert tensor) */
	uint64_t lb = 0, lx = 0;
	for (uint32_t il = 0; il < wk->n; il++) {
		if (wk->w.layer_bytes[il] > lb)
			lb = wk->w.layer_bytes[il];
		if (wk->w.layer_expert_bytes[il] > lx)
			lx = wk->w.layer_expert_bytes[il];
	}
	if (lx)
		wk->largest_tensor = lx / 3;
	else if (m->hidden && m->ffn)
		wk->largest_tensor = (uint64_t)((double)lb * 0.3);
	return 0;
}

static void work_release(work *wk)
{
	plan_weights_release(&wk->w);
	free(wk->layer_kv);
}

/* Memory, verdict and speed only. */
static int plan_one(const plan_request *rq, plan_result *r, gw_error *err)
{
	work wk;
	memset(r, 0, sizeof *r);
	if (rq->n_gpus > PLAN_MAX_GPUS)
		return gw_fail(err, GW_EINVAL, "at most %d GPUs", PLAN_MAX_GPUS);
	/* bytes are uint64_t: refuse shapes whose products would not fit */
	const model_desc *m = rq->model;
	if (m) {
		double e = m->hidden, L = m->n_layers, kvw = (double)(m->n_kv_heads + 1) * (m->head_dim_k + m->head_dim_v + 2);
		double ffn = (double)(m->ffn > m->expert_ffn ? m->ffn : m->expert_ffn) * (m->n_experts + 1);
		double ctx = (double)(rq->ctx ? rq->ctx : 131072) * (rq->n_parallel ? rq->n_parallel : 1);
		double b = rq->batch ? rq->batch : 512;
		if (L * e * (4 * e + 3 * ffn) * 4 > 1e18 || (double)m->vocab * e * 8 > 1e18 ||
		    L * kvw * ctx * 8 > 1e18 || 4 * b * ctx * (m->n_heads + 1) > 1e18)
			return gw_fail(err, GW_ERANGE, "the model or context is too large to plan (over an exabyte)");
	}
	int rc = work_init(&wk, rq, err);
	if (rc)
		return rc;
	r->engine = rq->engine;
	snprintf(r->quant, sizeof r->quant, "%s", wk.w.quant);
	r->weights_exact = wk.w.exact;
	r->ctx = plan_engine_ops_of(rq->engine)->gguf ? wk.cells / wk.nseq : wk.ctx;
	r->kv_cells = wk.cells;
	r->batch = wk.batch;
	r->n_parallel = wk.nseq;
	r->kv_streams = wk.kvs.n_stream;
	r->kv_unified = wk.kvs.n_stream == 1;
	r->kv_stream_cells = wk.kvs.cells;
	r->kv_swa_cells = plan_kv_swa_cells(m, &wk.kvs);
	r->kv_type = wk.kv;
	r->flash_attn = wk.fa;
	r->flash_attn_assumed = wk.fa_assumed;
	if (wk.build)
		snprintf(r->engine_build, sizeof r->engine_build, "%s", wk.build->id);
	r->total_layers = wk.total;
	r->model_bytes = wk.w.total_bytes;
	r->embd_bytes = wk.w.embd_bytes;
	r->kv_total_bytes = 0;
	for (uint32_t il = 0; il < wk.n; il++)
		r->kv_total_bytes += wk.layer_kv[il];
	plan_engine_ops_of(rq->engine)->place(&wk, r);
	if (rq->cpu_only)
		plan_cpu_verdict(&wk, r);
	plan_speed(&wk, r);
	if (rq->cpu_only)
		plan_cpu_speed(&wk, r);
	work_release(&wk);
	return 0;
}

/* ---- max context ------------------------------------------------------------ */
/*
 * Largest context (a multiple of 256, at most the trained context) that
 * keeps the verdict: for "fits" the largest that still fits; for
 * "offload" the largest that keeps at least as many layers on the GPUs.
 */
static uint64_t search_max_ctx(const plan_request *rq, const plan_result *base)
{
	if (base->verdict == PLAN_NOFIT || base->spill_bytes) /* a spill holds any context, slower */
		return 0;
	plan_request t = *rq;
	t.skip_advice = true;
	uint64_t trained = rq->model->ctx_train ? rq->model->ctx_train : 131072;
	uint64_t lo = 0, hi = trained / 256 + 1; /* in units of 256; lo ok, hi not */
	if (base->ctx / 256 < hi)
		lo = base->ctx / 256; /* the plan itself holds at its own context */
	plan_result *r = xmalloc(sizeof *r);
	/* The memory need grows with the context, so the bisection below ends at
	 * the top when the trained context fits: try it first (one plan instead
	 * of ten when it does, the common case for a small model on a big card). */
	bool first = base->verdict == PLAN_FITS;
	while (hi - lo > 1) {
		uint64_t mid = first ? hi - 1 : lo + (hi - lo) / 2;
		t.ctx = mid * 256;
		gw_error e;
		bool ok = plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT &&
			  (base->verdict == PLAN_FITS ? r->verdict == PLAN_FITS
						      : r->gpu_layers >= base->gpu_layers);
		if (ok)
			lo = mid;
		else
			hi = mid;
		first = false;
	}
	free(r);
	uint64_t best = lo * 256;
	if (best > trained)
		best = trained;
	return best;
}

/* ---- advice ----------------------------------------------------------------- */
static void fmt_gib(char *buf, size_t n, uint64_t b)
{
	snprintf(buf, n, "%.1f GiB", (double)b / (double)GiB);
}

static void describe(const plan_result *r, char *buf, size_t n)
{
	char v[32];
	fmt_gib(v, sizeof v, r->vram_bytes);
	int k;
	if (r->verdict == PLAN_FITS && r->n_devices == 0) {
		fmt_gib(v, sizeof v, r->host_bytes);
		k = snprintf(buf, n, _("fits: %s in host RAM"), v);
	} else if (r->verdict == PLAN_FITS)
		k = snprintf(buf, n, _("fits: %s on the GPU"), v);
	else if (r->verdict == PLAN_OFFLOAD && r->spill_bytes) {
		fmt_gib(v, sizeof v, r->spill_bytes);
		k = snprintf(buf, n, _("offload: %u of %u layers on the GPU, %s spilled into shared memory"), r->gpu_layers,
			     r->total_layers, v);
	} else if (r->verdict == PLAN_OFFLOAD)
		k = snprintf(buf, n, _("offload: %u of %u layers on the GPU"), r->gpu_layers, r->total_layers);
	else
		k = snprintf(buf, n, _("still does not fit"));
	if (k > 0 && (size_t)k < n && r->decode_tok_s > 0)
		snprintf(buf + k, n - (size_t)k, _(", ~%.0f tok/s decode"), r->decode_tok_s);
}

/* Is b better than a (verdict, then GPU layers, then speed by 5%)? */
static bool better(const plan_result *a, const plan_result *b)
{
	if (b->verdict != a->verdict)
		return b->verdict < a->verdict;
	if (b->gpu_layers != a->gpu_layers)
		return b->gpu_layers > a->gpu_layers;
	return b->decode_tok_s > a->decode_tok_s * 1.05;
}

static void add_advice(plan_result *res, const plan_request *t, const plan_result *after, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void set_str(plan_advice *a, const char *key, const char *v)
{
	if (a->n_set >= PLAN_ADVICE_MAX_SET)
		return;
	plan_advice_set *s = &a->set[a->n_set++];
	snprintf(s->key, sizeof s->key, "%s", key);
	s->type = PLAN_SET_STR;
	size_t i = 0;
	for (; v[i] && i + 1 < sizeof s->str; i++) /* option spelling: q3_k_m, not Q3_K_M */
		s->str[i] = (char)tolower((unsigned char)v[i]);
	s->str[i] = 0;
}

static void set_num(plan_advice *a, const char *key, unsigned long long v, bool is_bool)
{
	if (a->n_set >= PLAN_ADVICE_MAX_SET)
		return;
	plan_advice_set *s = &a->set[a->n_set++];
	snprintf(s->key, sizeof s->key, "%s", key);
	s->type = is_bool ? PLAN_SET_BOOL : PLAN_SET_NUM;
	s->num = v;
}

/*
 * The advice's option changes, read off the two plans: what differs
 * between the plan as asked (res) and the plan after the change.
 */
static void advice_set(plan_advice *a, const plan_result *res, const plan_result *after)
{
	if (after->engine != res->engine)
		set_str(a, "engine", plan_engine_name(after->engine));
	if (strcmp(after->quant, res->quant))
		set_str(a, "quant", after->quant);
	if (after->ctx != res->ctx)
		set_num(a, "ctx", after->ctx, false);
	if (after->batch != res->batch)
		set_num(a, "batch", after->batch, false);
	if (after->kv_type != res->kv_type)
		set_str(a, "kv_type", plan_kv_type_name(after->kv_type));
	if (after->flash_attn != res->flash_attn)
		set_num(a, "flash_attn", after->flash_attn, true);
	if (after->n_cpu_moe != res->n_cpu_moe)
		set_num(a, "n_cpu_moe", after->n_cpu_moe, false);
	if (after->n_devices && (!res->n_devices || strcmp(after->devices[0].name, res->devices[0].name))) {
		const gpu_spec *g = kb_gpu_find(after->devices[0].name);
		set_str(a, "gpu", g ? g->id : after->devices[0].name);
	}
	if (after->verdict == PLAN_OFFLOAD && after->n_cpu_moe == 0 &&
	    (after->gpu_layers != res->gpu_layers || res->verdict != PLAN_OFFLOAD || after == res))
		set_num(a, "gpu_layers", after->gpu_layers, false);
	if (res->mapped_bytes && !after->mapped_bytes && after->verdict != PLAN_NOFIT)
		set_num(a, "no_mmap", 1, true);
	else if (res->ram_known && !res->ram_ok && after->ram_ok)
		set_num(a, "ram_bytes", after->ram_need_bytes + GiB, false);
}

/*
 * One advice item: its change (fmt) and what the plan becomes (after,
 * planned from t with the searches' rule).  Where llama.cpp splits the
 * graph over devices (layers in host RAM, several GPUs, --n-cpu-moe) the
 * item is planned once more as the plan shown would be (per-device
 * graphs), so that following the advice gives the figures it promised.
 */
static void add_advice(plan_result *res, const plan_request *t, const plan_result *after, const char *fmt, ...)
{
	if (res->n_advice >= PLAN_MAX_ADVICE)
		return;
	plan_result *ex = NULL;
	if (t && t->n_gpus && after->verdict != PLAN_NOFIT &&
	    (after->verdict == PLAN_OFFLOAD || t->n_gpus > 1 || t->n_cpu_moe)) {
		plan_request x = *t;
		x.exact_split = true;
		gw_error e;
		ex = xmalloc(sizeof *ex);
		if (plan_one(&x, ex, &e) == 0)
			after = ex;
	}
	plan_advice *a = &res->advice[res->n_advice++];
	memset(a, 0, sizeof *a);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->action, sizeof a->action, _(fmt), ap);
	va_end(ap);
	describe(after, a->effect, sizeof a->effect);
	a->verdict = after->verdict;
	a->vram_bytes = after->vram_bytes;
	a->gpu_layers = after->gpu_layers;
	a->decode_tok_s = after->verdict == PLAN_NOFIT ? 0 : after->decode_tok_s;
	advice_set(a, res, after);
	free(ex);
}

/* The quantization ladder, best first (GGUF and non-GGUF). */
static const char *const gguf_ladder[] = {"f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k"};
static const char *const hf_ladder[] = {"bf16", "fp8", "awq-int4"};

/* A catalog card with today's price (new when on sale, else used). */
typedef struct priced_card {
	const gpu_spec *g;
	price_quote q;
	bool used;
} priced_card;

static int by_price(const void *a, const void *b)
{
	double x = ((const priced_card *)a)->q.amount, y = ((const priced_card *)b)->q.amount;
	return (x > y) - (x < y);
}

/* The advice item added since n advice items, if any, is a placement. */
static void mark_placement(plan_result *res, size_t n)
{
	if (res->n_advice > n)
		res->advice[res->n_advice - 1].placement = true;
}

/*
 * The placements that run (same model, weights and context; another split
 * between GPU and host RAM) first, fastest decode first; then the other
 * changes in the order advise() tried them.
 */
static void rank_advice(plan_result *res)
{
	plan_advice tmp[PLAN_MAX_ADVICE];
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < res->n_advice; i++) {
			const plan_advice *a = &res->advice[i];
			bool first = a->placement && a->verdict != PLAN_NOFIT;
			if (first == (pass == 0))
				tmp[n++] = *a;
		}
	for (size_t i = 1; i < n; i++) { /* insertion sort of the leading placements by decode */
		plan_advice x = tmp[i];
		if (!(x.placement && x.verdict != PLAN_NOFIT))
			break;
		size_t j = i;
		while (j > 0 && tmp[j - 1].decode_tok_s < x.decode_tok_s) {
			tmp[j] = tmp[j - 1];
			j--;
		}
		tmp[j] = x;
	}
	memcpy(res->advice, tmp, n * sizeof tmp[0]);
}

static void advise(const plan_request *rq, plan_result *res)
{
	plan_request t = *rq;
	t.skip_advice = true;
	plan_result *r = xmalloc(sizeof *r);
	gw_error e;
	bool gguf = plan_engine_ops_of(rq->engine)->gguf;
	const char *const *ladder = gguf ? gguf_ladder : hf_ladder;
	size_t nl = gguf ? sizeof gguf_ladder / sizeof *gguf_ladder : sizeof hf_ladder / sizeof *hf_ladder;

	/* 1. a lower quantization step */
	size_t at = nl;
	for (size_t i = 0; i < nl; i++) {
		char a[32], b[32];
		snprintf(a, sizeof a, "%s", ladder[i]);
		snprintf(b, sizeof b, "%s", res->quant);
		for (char *p = b; *p; p++)
			*p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
		if (!strcmp(a, b) || (!strcmp(a, "bf16") && !strcmp(b, "f16")) ||
		    (!strcmp(a, "f16") && !strcmp(b, "bf16")) || (!strcmp(a, "f16") && !strcmp(b, "f32")))
			at = i;
	}
	if (at == nl && gguf)
		at = 0; /* unknown or unusual recipe: try the whole ladder below f16 */
	/* a plan that fits needs no lower quality: the best weights that
	 * still fit the GPU instead, when there are better ones */
	for (size_t i = 0; res->verdict == PLAN_FITS && at < nl && i < at; i++) {
		t = *rq;
		t.skip_advice = true;
		t.quant = ladder[i];
		if (plan_one(&t, r, &e) == 0 && r->verdict == PLAN_FITS) {
			add_advice(res, &t, r, "room for better weights: --quant %s fits too (higher quality; more bytes read per token)", ladder[i]);
			break;
		}
	}
	for (size_t i = at + 1; res->verdict != PLAN_FITS && i < nl; i++) {
		t = *rq;
		t.skip_advice = true;
		t.quant = ladder[i];
		if (plan_one(&t, r, &e) == 0 && better(res, r)) {
			add_advice(res, &t, r, "use a lower quantization: --quant %s", ladder[i]);
			break;
		}
	}

	/* 2. a smaller context or batch */
	if (res->verdict != PLAN_FITS) {
		t = *rq;
		t.skip_advice = true;
		uint64_t lo = 0, hi = res->ctx / 256; /* find largest ctx that fits */
		while (hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;
			t.ctx = mid * 256;
			if (plan_one(&t, r, &e) == 0 && r->verdict == PLAN_FITS)
				lo = mid;
			else
				hi = mid;
		}
		if (lo > 0) {
			t.ctx = lo * 256;
			if (plan_one(&t, r, &e) == 0)
				add_advice(res, &t, r, "use a smaller context: --ctx %llu%s%s %llu%s",
					   (unsigned long long)t.ctx, plan_engine_ops_of(rq->engine)->knob_ctx ? " (" : "",
					   plan_engine_ops_of(rq->engine)->knob_ctx ? plan_engine_ops_of(rq->engine)->knob_ctx
										    : "",
					   (unsigned long long)t.ctx,
					   plan_engine_ops_of(rq->engine)->knob_ctx ? ")" : "");
		} else if (res->batch > 128) {
			t = *rq;
			t.skip_advice = true;
			t.batch = 128;
			t.ctx = res->ctx;
			if (plan_one(&t, r, &e) == 0 && better(res, r))
				add_advice(res, &t, r, "use a smaller batch: --batch 128");
		}
	}

	/* 3. KV cache quantization */
	if (rq->kv_type == PLAN_KV_F16 || rq->kv_type == PLAN_KV_BF16 || rq->kv_type == PLAN_KV_F32) {
		static const plan_kv_type kvs[] = {PLAN_KV_Q8_0, PLAN_KV_Q4_0};
		for (size_t i = 0; i < 2; i++) {
			if (rq->engine == PLAN_ENGINE_TRANSFORMERS)
				break;
			if (rq->engine == PLAN_ENGINE_VLLM && i > 0)
				break;
			t = *rq;
			t.skip_advice = true;
			t.kv_type = kvs[i];
			if (rq->engine != PLAN_ENGINE_VLLM)
				t.flash_attn = PLAN_FA_ON;
			if (plan_one(&t, r, &e) == 0 && better(res, r)) {
				if (rq->engine == PLAN_ENGINE_VLLM)
					add_advice(res, &t, r, "quantize the KV cache: --kv-cache-dtype fp8");
				else if (rq->engine == PLAN_ENGINE_OLLAMA)
					add_advice(res, &t, r,
						   "quantize the KV cache: OLLAMA_KV_CACHE_TYPE=%s (needs "
						   "OLLAMA_FLASH_ATTENTION=1)",
						   plan_kv_type_name(kvs[i]));
				else
					add_advice(res, &t, r,
						   "quantize the KV cache: --kv-type %s --flash-attn (llama.cpp "
						   "-ctk %s -ctv %s needs -fa)",
						   plan_kv_type_name(kvs[i]), plan_kv_type_name(kvs[i]),
						   plan_kv_type_name(kvs[i]));
				break;
			}
		}
	}

	/* 4. partial offload: for MoE, the experts of the first N blocks in RAM
	 * beat whole layers there (decode reads only the active experts) */
	if (res->verdict != PLAN_FITS && rq->engine == PLAN_ENGINE_LLAMACPP && rq->model->n_experts &&
	    rq->n_cpu_moe == 0 && rq->n_gpus > 0) {
		uint32_t lo = 0, hi = rq->model->n_layers + 1; /* smallest N that holds every layer */
		t = *rq;
		t.skip_advice = true;
		t.gpu_layers = -1;
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			t.n_cpu_moe = mid;
			if (plan_one(&t, r, &e) == 0 && r->gpu_layers == r->total_layers && r->verdict != PLAN_NOFIT)
				hi = mid;
			else
				lo = mid;
		}
		/* the search runs on the rule; the plan the user gets splits the
		 * graph device by device (op offload copies host experts into the
		 * GPU), so a few more expert layers may have to stay in RAM for
		 * every layer to be on the GPU as the advice says */
		if (hi <= rq->model->n_layers) {
			plan_request x = t;
			x.exact_split = true;
			uint32_t n = hi;
			for (; n <= rq->model->n_layers && n < hi + 8; n++) {
				x.n_cpu_moe = n;
				if (plan_one(&x, r, &e) == 0 && r->gpu_layers == r->total_layers && r->verdict != PLAN_NOFIT)
					break;
			}
			if (n <= rq->model->n_layers && n < hi + 8)
				hi = n;
		}
		if (hi <= rq->model->n_layers) {
			t.n_cpu_moe = hi;
			size_t k = res->n_advice;
			if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT &&
			    r->decode_tok_s > res->decode_tok_s)
				add_advice(res, &t, r, "keep the MoE experts of %u layers in RAM: --n-cpu-moe %u (all "
						   "layers on the GPU)", hi, hi);
			mark_placement(res, k);
		}
	}
	if (res->fit_moe) {
		/* the fit's alternative: whole layers in host RAM, no expert offload */
		t = *rq;
		t.skip_advice = true;
		t.n_cpu_moe = 0;
		t.gpu_layers = -1;
		size_t k = res->n_advice;
		if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT)
			add_advice(res, &t, r, "whole layers in host RAM instead of the experts: -ngl %u without --n-cpu-moe",
				   r->gpu_layers);
		mark_placement(res, k);
	}
	if (res->spill_bytes) {
		/* Sysmem Fallback: llama.cpp's automatic fit keeps to the dedicated VRAM */
		t = *rq;
		t.skip_advice = true;
		t.gpu_layers = -1;
		size_t k = res->n_advice;
		if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT)
			add_advice(res, &t, r, "let llama.cpp fit the dedicated VRAM instead of spilling: drop --gpu-layers "
					   "(-ngl; its automatic fit, -fit, is on by default)");
		mark_placement(res, k);
	} else if (res->verdict == PLAN_OFFLOAD && gguf) {
		/* the plan's own split (-ngl N, --n-cpu-moe N) is the verdict,
		 * not a change: never offered as one (issue 34) */
	} else if (res->verdict == PLAN_NOFIT && !gguf && rq->n_gpus > 0) {
		t = *rq;
		t.skip_advice = true;
		t.engine = PLAN_ENGINE_LLAMACPP;
		/*
		 * Keep the weights as asked where llama.cpp has the format (BF16,
		 * F16); otherwise say plainly that the quantization changes.
		 */
		char same[32];
		size_t i = 0;
		for (; res->quant[i] && i + 1 < sizeof same; i++)
			same[i] = (char)tolower((unsigned char)res->quant[i]);
		same[i] = 0;
		t.quant = same;
		if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT) {
			add_advice(res, &t, r, "offload layers to the CPU with llama.cpp, weights kept at %s "
					   "(--engine llama.cpp --quant %s)", res->quant, same);
		} else {
			t.quant = "q4_k_m";
			if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT)
				add_advice(res, &t, r, "offload layers to the CPU with llama.cpp, changing the weights from %s "
						   "to 4-bit Q4_K_M (--engine llama.cpp --quant q4_k_m)", res->quant);
		}
	} else if (res->verdict == PLAN_NOFIT && rq->cpu_only && res->ram_known && !res->ram_ok) {
		char need[32];
		fmt_gib(need, sizeof need, res->host_bytes);
		t = *rq;
		t.skip_advice = true;
		t.ram_bytes = res->ram_need_bytes + GiB;
		if (plan_one(&t, r, &e) == 0)
			add_advice(res, &t, r, "more host RAM: the model and its cache need %s", need);
	} else if (res->verdict == PLAN_NOFIT && res->ram_known && !res->ram_ok && res->gpu_layers > 0 &&
		   !(rq->n_gpus && rq->gpus[0].unified_memory)) { /* unified memory: no RAM to add */
		char need[32], file[32];
		fmt_gib(need, sizeof need, res->host_bytes);
		fmt_gib(file, sizeof file, res->mapped_bytes);
		t = *rq;
		t.skip_advice = true;
		if (res->mapped_bytes && (rq->engine == PLAN_ENGINE_LLAMACPP || rq->engine == PLAN_ENGINE_OLLAMA)) {
			/* the mapped file starves the host: read the host part instead */
			t.no_mmap = true;
			if (plan_one(&t, r, &e) == 0 && r->verdict != PLAN_NOFIT)
				add_advice(res, &t, r, "read the host part into memory instead of mapping the whole file "
						   "(%s): %s", file,
					   rq->engine == PLAN_ENGINE_OLLAMA ? "use_mmap false" : "--no-mmap");
			t.no_mmap = false;
		}
		t.ram_bytes = res->ram_need_bytes + GiB;
		if (plan_one(&t, r, &e) == 0)
			add_advice(res, &t, r, "more host RAM: the offloaded part needs %s", need);
	}

	/*
	 * 5. a larger card: the cheapest catalog GPU, with more memory than
	 * the largest one asked about, on which it fits; priced from the dated
	 * tables (new when on sale, else used) in the reader's currency
	 * (rq->currency; USD rows converted at the dated rate when it has
	 * none), never at a launch price.  For a laptop GPU (which cannot be
	 * swapped) a card for a desktop or an eGPU enclosure, or renting it:
	 * never a server card (passively cooled, no display outputs, or a
	 * module: data/install.tsv); for a desktop a server card carries the
	 * caveats `cards` prints for it.
	 */
	if (res->verdict != PLAN_FITS) {
		size_t n = kb_gpu_count(), k = 0;
		priced_card *cards = xcalloc(n ? n : 1, sizeof *cards);
		uint64_t need = res->model_bytes > res->embd_bytes ? res->model_bytes - res->embd_bytes : 0;
		uint64_t have = 0;
		bool laptop = false;
		for (size_t i = 0; i < rq->n_gpus; i++) {
			/* the driver reports a little less than the nominal size: take the larger */
			uint64_t v = rq->gpus[i].vram_bytes;
			if (rq->gpus[i].spec && rq->gpus[i].spec->vram_bytes > v)
				v = rq->gpus[i].spec->vram_bytes;
			if (v > have)
				have = v;
			if ((rq->gpus[i].spec && rq->gpus[i].spec->laptop) ||
			    strstr(rq->gpus[i].name, "Laptop"))
				laptop = true;
		}
		const char *cur = rq->currency && money_currency_ok(rq->currency) ? rq->currency : "USD";
		time_t now = time(NULL);
		struct tm tmv;
		gmtime_r(&now, &tmv);
		for (size_t i = 0; i < n; i++) {
			const gpu_spec *s = kb_gpu_at(i);
			/* a card smaller than the weights, or than the card in question, is no answer */
			bool mac = rq->n_gpus && rq->gpus[0].unified_memory;
			if (!s || s->vram_bytes <= need || s->vram_bytes <= have || s->laptop ||
			    s->unified_memory != mac || strstr(s->name, "SXM"))
				continue; /* a Mac for a Mac; no laptop or server module as a card to plug in */
			const kb_install *in = kb_install_for(s);
			if (laptop && in && (in->passive || !in->display || in->form != KB_FORM_PCIE))
				continue; /* a server card is no upgrade for a laptop's owner */
			priced_card *c = &cards[k];
			c->g = s;
			if (price_quote_in(s, false, false, tmv.tm_year + 1900, cur, &c->q, NULL) || !c->q.known) {
				c->used = true;
				if (price_quote_in(s, true, false, tmv.tm_year + 1900, cur, &c->q, NULL) || !c->q.known)
					continue;
			}
			k++;
		}
		qsort(cards, k, sizeof *cards, by_price);
		for (size_t i = 0; i < k; i++) {
			t = *rq;
			t.skip_advice = true;
			t.cpu_only = false; /* a CPU plan that does not fit: the cheapest GPU that holds it */
			t.n_gpus = 1;
			plan_gpu_from_spec(&t.gpus[0], cards[i].g);
			if (plan_one(&t, r, &e) == 0 && r->verdict == PLAN_FITS) {
				const gpu_spec *g = cards[i].g;
				const kb_install *in = kb_install_for(g);
				char v[32], price[48];
				fmt_gib(v, sizeof v, g->vram_bytes);
				if (!strcmp(cards[i].q.currency, "USD"))
					snprintf(price, sizeof price, "$%.0f", cards[i].q.amount);
				else
					snprintf(price, sizeof price, "%.0f %s%s", cards[i].q.amount, cards[i].q.currency,
						 cards[i].q.converted ? "*" : "");
				const char *used = cards[i].used ? _("used") : _("new");
				if (laptop)
					add_advice(res, &t, r,
						   "a larger card in a desktop or an eGPU enclosure (a laptop's own GPU "
						   "cannot be changed; Thunderbolt 3/4 or USB4, a power supply for its "
						   "%d W), or rent one: %s (%s, %s; about %s %s, %s)",
						   g->tdp_w, g->id, g->name, v, price, used, cards[i].q.date);
				else if (in && (in->passive || !in->display))
					add_advice(res, &t, r,
						   "a larger card: %s (%s, %s; about %s %s, %s), a server card: %s%s "
						   "(gpuwise cards lists what it needs)",
						   g->id, g->name, v, price, used, cards[i].q.date,
						   in->passive ? _("passively cooled, needs a blower fan and shroud in a desktop")
							       : _("actively cooled"),
						   in->display ? "" : _("; no display outputs"));
				else
					add_advice(res, &t, r, "a larger card: %s (%s, %s; about %s %s, %s)", g->id, g->name,
						   v, price, used, cards[i].q.date);
				break;
			}
		}
		free(cards);
	}
	free(r);
}

/*
 * llama.cpp's automatic fit for a MoE model (common/fit.cpp,
 * common_params_fit_impl; on by default, -fit): when the model does not fit
 * the GPUs as it is, it first moves every expert tensor to system memory
 * (the override "blk\.\d+\.ffn_(up|down|gate_up|gate)_(ch|)exps" to the
 * CPU buffer type), fills the GPUs back to front with the dense part of the
 * layers ("step 3"), and when all of that fits with the margin left free
 * (fit_params_target, 1 GiB a device) brings the experts back layer by
 * layer, front to back, until the GPUs are full ("step 4").  The result is
 * every layer on the GPUs with the experts of some layers in host RAM:
 * --n-cpu-moe N in effect (fit keeps the experts of the last layers of a
 * device in RAM, --n-cpu-moe those of the first: the same bytes for blocks
 * of one size).  When even the dense part does not fit, the dense-only
 * layers fill the GPUs back to front and the rest stays in host RAM.  Not
 * for an explicit -ngl or tensor override ("already set by user, abort"),
 * nor for a build without the fit.  Returns the N the fit lands on, 0 when
 * it does not apply or the model fits as it is; *split: that plan without
 * expert offload (layers in host RAM), for the comparison.
 */
static uint32_t fit_moe(const plan_request *rq, plan_result *split)
{
	const model_desc *m = rq->model;
	if ((rq->engine != PLAN_ENGINE_LLAMACPP && rq->engine != PLAN_ENGINE_OLLAMA) || !m || !m->n_experts ||
	    rq->gpu_layers >= 0 || rq->n_cpu_moe ||
	    rq->n_gpus == 0 || rq->cpu_only || rq->backend == PLAN_BACKEND_CPU || rq->gpus[0].unified_memory)
		return 0;
	const plan_llamacpp_build *b = plan_llamacpp_build_find(rq->engine_build);
	if (!b || !b->auto_fit)
		return 0;
	plan_request t = *rq;
	t.skip_advice = true;
	gw_error e;
	if (plan_one(&t, split, &e) || split->verdict == PLAN_FITS)
		return 0;
	plan_result *r = xmalloc(sizeof *r);
	uint32_t lo = 0, hi = m->n_layers + 1; /* smallest N that holds every layer */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		t.n_cpu_moe = mid;
		/* the fit looks at the GPUs only: host RAM is the verdict's business */
		if (plan_one(&t, r, &e) == 0 && r->gpu_layers == r->total_layers && r->gpus_ok)
			hi = mid;
		else
			lo = mid;
	}
	uint32_t n = hi <= m->n_layers ? hi : m->n_layers; /* else: dense-only layers, the rest in host RAM */
	t.n_cpu_moe = n;
	bool ok = plan_one(&t, r, &e) == 0 && r->gpus_ok && r->gpu_layers >= split->gpu_layers;
	free(r);
	return ok ? n : 0;
}

int plan_run(const plan_request *rq, plan_result *res, gw_error *err)
{
	plan_request fitted;
	plan_result *split = NULL;
	uint32_t fit_n = 0;
	if (!rq->skip_advice) {
		split = xmalloc(sizeof *split);
		fit_n = fit_moe(rq, split);
		if (fit_n) {
			fitted = *rq;
			fitted.n_cpu_moe = fit_n;
			rq = &fitted;
		}
	}
	int rc = plan_one(rq, res, err);
	if (rc) {
		free(split);
		return rc;
	}
	if (fit_n) {
		res->fit_moe = true;
		res->fit_layer_split_layers = split->verdict != PLAN_NOFIT ? split->gpu_layers : 0;
		res->fit_layer_split_tok_s = split->verdict != PLAN_NOFIT ? split->decode_tok_s : 0;
	}
	free(split);
	const char *eng = plan_engine_name(rq->engine);
	plan_note(res, "engine %s; weights %s (%s)", eng, res->quant,
	     res->weights_exact ? _("exact tensor bytes from the file")
				: _("estimated tensor by tensor with llama.cpp's quantization rules"));
	const plan_engine_ops *ops = plan_engine_ops_of(rq->engine);
	ops->notes(rq, res);
	if (res->fit_moe && res->fit_layer_split_tok_s > 0)
		plan_note(res, "llama.cpp's automatic fit (common/fit.cpp) moves a MoE model's experts to host RAM first "
			       "and brings them back layer by layer: all %u layers on the GPU with the experts of %u in host "
			       "RAM (as --n-cpu-moe %u), ~%.1f tok/s decode, where whole layers in host RAM (-ngl %u) would "
			       "give ~%.1f: decode then reads only the active experts from host RAM",
			  res->gpu_layers, res->n_cpu_moe, res->n_cpu_moe, res->decode_tok_s, res->fit_layer_split_layers,
			  res->fit_layer_split_tok_s);
	else if (res->fit_moe)
		plan_note(res, "llama.cpp's automatic fit (common/fit.cpp) moves a MoE model's experts to host RAM first: "
			       "the experts of %u blocks in host RAM (as --n-cpu-moe %u)",
			  res->n_cpu_moe, res->n_cpu_moe);
	else if (res->n_cpu_moe)
		plan_note(res, "experts of the first %u blocks in host RAM (--n-cpu-moe); decode reads only the "
			       "active ones",
			  res->n_cpu_moe);
	if (rq->cpu_only)
		plan_cpu_notes(rq, res);
	else
		plan_speed_notes(rq, res);
	if (rq->n_gpus == 0 && !rq->cpu_only)
		plan_note(res, "no GPU given: everything in host RAM");
	if (!res->ram_known && res->host_bytes > 0 && !ops->tensor_parallel)
		plan_note(res, "host RAM not checked (give --ram)");
	if (rq->skip_advice)
		return 0;
	res->max_ctx = search_max_ctx(rq, res);
	advise(rq, res);
	rank_advice(res);
	return 0;
}

/*
 * gpuwise cards: which GPUs (or sets of identical GPUs) run a workload,
 * how fast, at what price.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/workload.h"
#include "kb/kb.h"
#include "model/model.h"
#include "plan/cards.h"
#include "plan/plan.h"
#include "util/json.h"

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise cards MODEL [plan options] [--budget X] [--used] [--vendor V]\n"
		"                     [--currency CUR] [--region R] [--max-gpus N] [--json]\n\n"
		"Rank the catalog's GPUs, and sets of up to --max-gpus identical cards, for a\n"
		"workload: LLM inference (default), fine-tuning (--train) or image generation\n"
		"(--image).  Each GPU is planned with the smallest number of cards that fits;\n"
		"the list is sorted by speed per dollar, with the caveats a buyer must know.\n"
		"New prices: only cards on sale new, from the dated new-prices table; a card\n"
		"that fits only with a change (8-bit KV cache, a lower quantization, partial\n"
		"CPU offload; fp8 or text-encoder offload for images) is listed with the\n"
		"change; when nothing fits the budget, the cheapest configuration that fits\n"
		"is named with its price.  Prices older than 6 months are flagged; gpuwise\n"
		"list gpus shows every price with its date and source.\n\n"
		"Options:\n"
		"  --budget X          total price limit in the --currency: 1000, 1,000, $1000,\n"
		"                      10000 CNY (an amount in another currency is refused)\n"
		"  --currency CUR      the buyer's market: USD, CNY, EUR ... (default:\n"
		"                      GPUWISE_CURRENCY, else the region's, else USD); prices\n"
		"                      quoted in it first (CNY: China's market, its China-only\n"
		"                      cards and its rental platforms), else USD prices converted\n"
		"                      at a dated rate (marked *); cards sold only in another\n"
		"                      market are left out\n"
		"  --region R          cn, us, eu, de: the market's currency when --currency is\n"
		"                      not given (GPUWISE_REGION)\n"
		"  --used              used prices (the used-prices table, dated and sourced:\n"
		"                      the median of each card's rows in its newest 3 months;\n"
		"                      a card without one gets an estimate from its launch\n"
		"                      price and age, marked ~ and ranked last)\n"
		"  --no-estimates      with --used: leave out the cards without a used price\n"
		"  --vendor V          NVIDIA, AMD, Apple ...\n"
		"  --max-gpus N        largest set of identical cards (default 4, at most 16)\n"
		"  --json              machine-readable output (docs/json-cards.md)\n"
		"LLM inference (as gpuwise plan):\n"
		"  --quant Q --ctx N --batch N --kv-type T --flash-attn --engine E\n"
		"  --backend B         llama.cpp backend for every card: cuda, rocm, vulkan, metal,\n"
		"                      sycl (default: each vendor's own; cards it does not run on\n"
		"                      are left out)\n"
		"  --params N --layers N --hidden N --heads N --kv-heads N --head-dim N --ffn N\n"
		"  --vocab N           explicit numbers for a model the catalog lacks\n"
		"%s\n"
		"Speed: LLM decode tokens/s (gpuwise plan's model; ~ where no public llama-bench\n"
		"measurement of the GPU backs it, ranked after measured ones); fine-tuning tokens/s from\n"
		"FLOPs per token at %.0f%% of the card's dense FP16 TFLOPS; images per minute.\n\n"
		"Exit status: 0 at least one card fits, 4 none fits (within the budget),\n"
		"1 a table or model file cannot be read, 2 usage error.\n"),
		_(workload_help), TRAIN_MFU * 100);
}

/* Rented options listed after the cards [assumption: enough to compare]. */
#define CARDS_RENT_ROWS 6

typedef struct cards_ctx {
	workload w;
	const model_desc *m;
	const char *model_name;
	/* LLM */
	const char *quant;
	uint64_t ctx;
	uint32_t batch;
	plan_kv_type kv;
	bool flash;
	plan_engine engine;
	plan_backend backend;
	const char *region;
} cards_ctx;

/* Weight formats from the most to the least precise, for "one step lower". */
static const char *const gguf_ladder[] = {"q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k"};
static const char *const hf_ladder[] = {"bf16", "fp8", "awq-int4"};

/* The format `steps` below q on its ladder, or NULL. */
static const char *quant_below(const char *q, unsigned steps)
{
	const char *const *lad = gguf_ladder;
	size_t n = sizeof gguf_ladder / sizeof *gguf_ladder;
	if (str_ieq(q, "f16") || str_ieq(q, "fp16") || str_ieq(q, "bf16") || str_ieq(q, "fp8") ||
	    str_ieq(q, "awq-int4")) {
		lad = hf_ladder;
		n = sizeof hf_ladder / sizeof *hf_ladder;
		if (str_ieq(q, "f16") || str_ieq(q, "fp16"))
			q = "bf16";
	}
	for (size_t i = 0; i < n; i++)
		if (str_ieq(lad[i], q))
			return i + steps < n ? lad[i + steps] : NULL;
	return NULL;
}

/* Does data/llamabench-gpus.tsv name g (a public llama-bench measurement of it exists)? */
static bool llamabench_measured(const gpu_spec *g)
{
	const kb_table *t = kb_get_table("llamabench-gpus", NULL);
	long cg = t ? kb_col(t, "gpu") : -1;
	for (size_t i = 0; t && cg >= 0 && i < t->nrows; i++)
		if (kb_gpu_find(kb_cell(t, i, cg)) == g)
			return true;
	return false;
}

/*
 * LLM remedy levels, in the order plan's advice weighs them: 0 as asked;
 * 1 an 8-bit KV cache (llama.cpp/ollama, with flash attention); 2 the
 * weights one format lower; 3 partial CPU offload at the asked format
 * (not on unified memory: there is no separate RAM to offload to); 4 the
 * weights two formats lower.
 */
static int eval_llm(cards_ctx *c, const gpu_spec *g, uint32_t n, unsigned level, cards_eval *out, gw_error *err)
{
	if (n > PLAN_MAX_GPUS)
		return 0;
	bool gguf = c->engine == PLAN_ENGINE_LLAMACPP || c->engine == PLAN_ENGINE_OLLAMA;
	const char *asked = c->quant ? c->quant : gguf ? "q4_k_m" : "bf16";
	plan_request rq;
	plan_request_init(&rq);
	rq.model = c->m;
	rq.quant = c->quant;
	rq.ctx = c->ctx;
	rq.batch = c->batch;
	rq.kv_type = c->kv;
	rq.flash_attn = c->flash;
	rq.engine = c->engine;
	rq.backend = c->backend;
	rq.skip_advice = true;
	bool offload_ok = false;
	switch (level) {
	case 0: break;
	case 1:
		if (!gguf || c->kv != PLAN_KV_F16)
			return 0;
		rq.kv_type = PLAN_KV_Q8_0;
		rq.flash_attn = true;
		snprintf(out->remedy, sizeof out->remedy, "8-bit KV cache: --kv-type q8_0 --flash-attn");
		snprintf(out->remedy_set, sizeof out->remedy_set, "kv_type=q8_0 flash_attn=true");
		break;
	case 2:
	case 4: {
		const char *q = quant_below(asked, level == 2 ? 1 : 2);
		if (!q)
			return 0;
		rq.quant = q;
		snprintf(out->remedy, sizeof out->remedy, _("lower-quality weights: --quant %s (asked %s)"), q, asked);
		snprintf(out->remedy_set, sizeof out->remedy_set, "quant=%s", q);
		break;
	}
	case 3:
		if (g->unified_memory || (c->engine != PLAN_ENGINE_LLAMACPP && c->engine != PLAN_ENGINE_OLLAMA &&
					  c->engine != PLAN_ENGINE_TRANSFORMERS))
			return 0;
		offload_ok = true;
		break;
	default:
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		plan_gpu_from_spec(&rq.gpus[i], g);
	rq.n_gpus = n;
	if (g->unified_memory) /* the one unified-memory rule (plan.h) */
		rq.ram_bytes = plan_unified_host_bytes(g, g->vram_bytes) ? plan_unified_host_bytes(g, g->vram_bytes) : 1;
	plan_result *res = xcalloc(1, sizeof *res);
	int rc = plan_run(&rq, res, err);
	if (!rc) {
		out->fits = res->verdict == PLAN_FITS || (offload_ok && res->verdict == PLAN_OFFLOAD && res->gpu_layers > 0);
		out->has_speed = res->decode_tok_s > 0;
		out->speed = res->decode_tok_s;
		out->speed_estimated = out->has_speed && !llamabench_measured(g);
		out->need_bytes = n ? res->vram_bytes / n : 0;
		if (offload_ok && out->fits) {
			char hb[32];
			snprintf(out->remedy, sizeof out->remedy,
				 n > 1 ? _("partial CPU offload: %u of %u layers on the GPUs (-ngl %u), %s in host RAM, ~%.1f tok/s")
				       : _("partial CPU offload: %u of %u layers on the GPU (-ngl %u), %s in host RAM, ~%.1f tok/s"),
				 res->gpu_layers, res->total_layers, res->gpu_layers,
				 fmt_bytes(hb, sizeof hb, res->host_bytes), res->decode_tok_s);
			snprintf(out->remedy_set, sizeof out->remedy_set, "gpu_layers=%u", res->gpu_layers);
		}
	}
	free(res);
	return rc;
}

static int eval_train(cards_ctx *c, const gpu_spec *g, uint32_t n, unsigned level, cards_eval *out, gw_error *err)
{
	if (level)
		return 0;
	train_opts o = c->w.train;
	o.gpus = n;
	o.flash_attn = o.flash_attn || c->flash;
	if (n > 1 && o.shard == TRAIN_SHARD_NONE)
		o.shard = TRAIN_SHARD_FSDP; /* a set of cards shares the model */
	train_breakdown bd;
	uint64_t host;
	double t;
	int rc = train_memory(c->m, &o, &bd, &host, &t, err);
	if (rc)
		return rc;
	out->fits = bd.total <= (g->unified_memory ? plan_unified_gpu_bytes(g, g->vram_bytes) : g->vram_bytes);
	out->need_bytes = bd.total;
	double fpt = train_flops_per_token(c->m, &o);
	out->has_speed = fpt > 0 && g->fp16_tflops > 0;
	out->speed = out->has_speed ? n * g->fp16_tflops * 1e12 * TRAIN_MFU / fpt : 0;
	return 0;
}

/*
 * Image remedy levels, in plan --image's order: 0 as asked; 1 tiled VAE
 * decode; 2 that and fp8 weights; 3 that and a GGUF Q5_K_S; 4 that and a
 * GGUF Q4_K_S; 5 sequential offload (not on unified memory).
 */
static int eval_image(cards_ctx *c, const gpu_spec *g, uint32_t n, unsigned level, cards_eval *out, gw_error *err)
{
	if (n > 1)
		return 0; /* one pipeline does not split across cards */
	image_model m;
	int rc = image_model_find(c->model_name, &m, err);
	if (rc)
		return rc;
	image_opts o = c->w.image;
	double bpp = 2;
	image_quant_bytes(o.quant, &bpp);
	static const char *const quant_at[] = {NULL, NULL, "fp8", "q5_k_s", "q4_k_s", NULL};
	static const double bytes_at[] = {0, 0, 1.0, 176.0 / 256, 144.0 / 256, 0};
	if (level > 5 || (level == 1 && o.vae_tiling) || (level >= 2 && level <= 4 && !(bpp > bytes_at[level] * 1.01)) ||
	    (level == 5 && (g->unified_memory || o.offload != IMAGE_OFFLOAD_NONE)))
		return 0;
	if (level >= 1 && level <= 4)
		o.vae_tiling = true;
	if (quant_at[level])
		o.quant = quant_at[level];
	if (level == 5)
		o.offload = IMAGE_OFFLOAD_SEQUENTIAL;
	if (level == 1) {
		snprintf(out->remedy, sizeof out->remedy, "tiled VAE decode (--vae-tiling)");
		snprintf(out->remedy_set, sizeof out->remedy_set, "vae_tiling=true");
	} else if (level >= 2 && level <= 4) {
		snprintf(out->remedy, sizeof out->remedy, "%s weights (--quant %s) + tiled VAE decode (--vae-tiling)",
			 level == 2 ? "fp8" : level == 3 ? "GGUF Q5_K_S" : "GGUF Q4_K_S", o.quant);
		snprintf(out->remedy_set, sizeof out->remedy_set, "quant=%s vae_tiling=true", o.quant);
	} else if (level == 5) {
		snprintf(out->remedy, sizeof out->remedy, "sequential offload (--offload sequential, slow)");
		snprintf(out->remedy_set, sizeof out->remedy_set, "offload=sequential");
	}
	o.gpu = g;
	image_plan p;
	rc = image_plan_compute(&m, &o, g->unified_memory ? plan_unified_gpu_bytes(g, g->vram_bytes) : g->vram_bytes, &p,
				err);
	if (rc)
		return rc;
	out->fits = p.fits;
	out->need_bytes = p.bd.total;
	out->has_speed = p.has_speed && p.s_per_image > 0;
	out->speed = out->has_speed ? 60 / p.s_per_image : 0;
	out->speed_estimated = p.has_speed && p.speed_estimated;
	out->speed_caveat = p.has_speed ? p.speed_caveat : NULL; /* a kb string: outlives p */
	image_plan_release(&p);
	return 0;
}

static int eval(void *ctx, const gpu_spec *g, uint32_t n, unsigned level, cards_eval *out, gw_error *err)
{
	cards_ctx *c = ctx;
	switch (c->w.kind) {
	case WORKLOAD_TRAIN: return eval_train(c, g, n, level, out, err);
	case WORKLOAD_IMAGE: return eval_image(c, g, n, level, out, err);
	default: return eval_llm(c, g, n, level, out, err);
	}
}

static const char *unit_of(workload_kind k)
{
	return k == WORKLOAD_TRAIN ? "train_tok_s" : k == WORKLOAD_IMAGE ? "images_per_min" : "decode_tok_s";
}

/* Month now, for the age of prices. */
static void this_month(int *year, int *month)
{
	time_t now = time(NULL);
	struct tm tmv;
	gmtime_r(&now, &tmv);
	*year = tmv.tm_year + 1900;
	*month = tmv.tm_mon + 1;
}

static void fmt_eval_speed(char *b, size_t n, const cards_eval *e)
{
	if (e->has_speed)
		snprintf(b, n, e->speed < 10 ? "%s%.2f" : "%s%.0f", e->speed_estimated ? "~" : "", e->speed);
	else
		snprintf(b, n, "?");
}

static void fmt_speed(char *b, size_t n, const cards_row *r)
{
	fmt_eval_speed(b, n, &r->eval);
}

/* The rented options (cards_rentals) as text. */
static void print_rentals(const cards_ctx *c, const cards_opts *o, const cards_rent *rent, size_t n_rent)
{
	FILE *f = stdout;
	const char *cur = o->currency ? o->currency : "USD";
	const char *speed_hdr = c->w.kind == WORKLOAD_TRAIN ? "train tok/s" : c->w.kind == WORKLOAD_IMAGE ? "img/min" : "tok/s";
	char rate_hdr[32];
	snprintf(rate_hdr, sizeof rate_hdr, "%s/h", cur);
	printf(_("\n%sRent instead%s (on-demand, cheapest per hour that runs it; the rented card itself, never "
		 "another):\n"),
	       c_bold(f), c_reset(f));
	if (!n_rent) {
		printf(_("  none of the rented GPUs in data/cloud-prices.tsv runs it\n"));
		return;
	}
	const char *hdr[] = {"#", "GPU", _("cards"), speed_hdr, rate_hdr, _("provider"), _("date"), _("offers")};
	table *t = table_new(8, hdr);
	for (size_t i = 0; i < 8; i++)
		table_set_align(t, i, i == 0 || i == 2 || i == 3 || i == 4 || i == 7);
	bool conv = false;
	for (size_t i = 0; i < n_rent; i++) {
		const cards_rent *r = &rent[i];
		char num[16], cnt[16], sp[32], rate[48], offers[32];
		snprintf(num, sizeof num, "%zu", i + 1);
		snprintf(cnt, sizeof cnt, "%ux", r->count);
		fmt_eval_speed(sp, sizeof sp, &r->eval);
		snprintf(rate, sizeof rate, "%s%.3g", r->quote.converted ? "*" : "", r->per_hour);
		snprintf(offers, sizeof offers, "%zu (%.3g-%.3g)", r->quote.n_rows, r->quote.min_h, r->quote.max_h);
		conv = conv || r->quote.converted;
		table_add(t, num, r->gpu->name, cnt, sp, rate, r->quote.provider, r->quote.date, offers);
	}
	table_print(t, stdout);
	table_free(t);
	if (conv) {
		const cards_rent *r = NULL;
		for (size_t i = 0; i < n_rent && !r; i++)
			if (rent[i].quote.converted)
				r = &rent[i];
		printf(_("* quoted in %s, converted at 1 %s = %.4g %s (%s%s, %s)\n"), r->quote.row_cur, r->quote.row_cur,
		       r->quote.fx.rate, cur, r->quote.fx.date, r->quote.fx.via_eur ? _(", via EUR") : "", r->quote.fx.source);
	}
}

static void print_text(const cards_ctx *c, const cards_opts *o, const cards_result *res, const cards_rent *rent,
		       size_t n_rent)
{
	FILE *f = stdout;
	const char *what = c->w.kind == WORKLOAD_TRAIN ? _("fine-tuning") : c->w.kind == WORKLOAD_IMAGE ? _("images") : _("inference");
	printf(_("%sCards for %s%s (%s), %s prices"), c_bold(f), c->model_name, c_reset(f), what, o->used ? _("used") : _("new"));
	const char *cur = o->currency ? o->currency : "USD";
	if (o->budget > 0)
		printf(_(", budget %.0f %s"), o->budget, cur);
	printf(_(", up to %u cards\n\n"), o->max_gpus);
	const char *speed_hdr = c->w.kind == WORKLOAD_TRAIN ? _("train tok/s") : c->w.kind == WORKLOAD_IMAGE ? "img/min" : "tok/s";
	char per_hdr[96], price_hdr[48];
	snprintf(per_hdr, sizeof per_hdr, _("%s per 1000 %s"), speed_hdr, cur);
	snprintf(price_hdr, sizeof price_hdr, _("price %s"), cur);
	const char *hdr[] = {"#", "GPU", _("cards"), _("VRAM"), _("needs/card"), speed_hdr, price_hdr, _("price date"), per_hdr, _("power")};
	table *t = table_new(10, hdr);
	for (size_t i = 0; i < 10; i++)
		table_set_align(t, i, i != 1 && i != 7);
	int yr, mo, stale = 0;
	this_month(&yr, &mo);
	bool any_est = false, any_remedy = false, any_speed_est = false;
	const price_quote *conv = NULL;
	for (size_t i = 0; i < res->n_rows; i++) {
		const cards_row *r = &res->rows[i];
		char n[24], cnt[24], vram[32], need[32], sp[32], price[32], per[32], pw[16];
		snprintf(n, sizeof n, "%zu", i + 1);
		snprintf(cnt, sizeof cnt, "%ux", r->count);
		fmt_bytes(vram, sizeof vram, r->gpu->vram_bytes);
		fmt_bytes(need, sizeof need, r->eval.need_bytes);
		fmt_speed(sp, sizeof sp, r);
		snprintf(price, sizeof price, "%s%s%.0f", r->price_estimated ? "~" : "", r->quote.converted ? "*" : "",
			 r->price);
		if (r->quote.converted && !conv)
			conv = &r->quote;
		any_speed_est = any_speed_est || r->eval.speed_estimated;
		if (r->speed_per_k > 0)
			snprintf(per, sizeof per, r->speed_per_k < 10 ? "%.2f" : "%.0f", r->speed_per_k);
		else
			snprintf(per, sizeof per, "?");
		snprintf(pw, sizeof pw, "%u W", r->power_w);
		any_est = any_est || r->price_estimated;
		any_speed_est = any_speed_est || r->eval.speed_estimated;
		any_remedy = any_remedy || r->eval.remedy[0];
		int age = price_age_months(r->quote.date, yr, mo);
		stale += !r->price_estimated && age > PRICE_STALE_MONTHS;
		table_add(t, n, r->gpu->name, cnt, vram, need, sp, price,
			  r->price_estimated ? _("estimate") : r->quote.date, per, pw);
	}
	table_print(t, stdout);
	table_free(t);
	if (any_remedy) {
		printf(_("\nChanges applied so that it fits (as gpuwise plan would advise):\n"));
		for (size_t i = 0; i < res->n_rows; i++)
			if (res->rows[i].eval.remedy[0])
				printf("  %zu. %s: %s\n", i + 1, res->rows[i].gpu->id, res->rows[i].eval.remedy);
	}
	bool any = false;
	for (size_t i = 0; i < res->n_rows; i++) {
		const cards_row *r = &res->rows[i];
		if (!r->n_caveats)
			continue;
		if (!any)
			printf(_("\nCaveats:\n"));
		any = true;
		for (size_t k = 0; k < r->n_caveats; k++)
			printf("  %zu. %s%s%s: %s\n", i + 1, c_yellow(f), r->gpu->id, c_reset(f), r->caveats[k]);
	}
	if (!res->n_rows && res->has_cheapest_over) {
		const cards_row *r = &res->cheapest_over;
		char sp[32];
		fmt_speed(sp, sizeof sp, r);
		printf(_("%sNothing fits within %.0f %s.%s The cheapest configuration that fits: %ux %s for %.0f %s "
		       "(%s prices of %s), %s %s%s%s\n"),
		       c_bold(f), o->budget, cur, c_reset(f), r->count, r->gpu->name, r->price, cur, o->used ? _("used") : _("new"),
		       r->quote.date, sp, c->w.kind == WORKLOAD_TRAIN ? "train tok/s" : c->w.kind == WORKLOAD_IMAGE ? "images/min" : "tok/s",
		       r->eval.remedy[0] ? _(", with ") : "", r->eval.remedy);
	}
	if (any_est)
		printf(_("\n~ estimate, not a price: no used price is on record for this card, so it is taken as 75%%/55%%/35%% "
		       "of the launch price by age [assumption]; ranked after every priced card (--no-estimates drops them)\n"));
	if (conv)
		printf(_("\n* no %s price on record: the USD price converted at 1 USD = %.4g %s (%s%s, %s)\n"), cur,
		       conv->fx.rate, cur, conv->fx.date, conv->fx.via_eur ? _(", via EUR") : "", conv->fx.source);
	if (any_speed_est && c->w.kind == WORKLOAD_IMAGE)
		printf(_("\n~ before a speed: no public measurement of this card on its backend; estimated from the "
		       "measured cards' realised fraction (data/image-backends.tsv); ranked after the measured cards\n"));
	else if (any_speed_est)
		printf(_("\n~ speed: no public llama-bench measurement of this GPU (data/llamabench-gpus.tsv, from "
		       "tests/validation/llamabench-current.tsv) backs it, only the model; ranked after every measured card\n"));
	if (stale)
		printf(_("\n%swarning:%s %d of these prices are more than %d months old; check a current listing before "
		       "buying (or update data/%s with --data-dir)\n"),
		       c_yellow(f), c_reset(f), stale, PRICE_STALE_MONTHS, o->used ? "used-prices.tsv" : "new-prices.tsv");
	if (o->used) {
		/* like with like: the used prices listed are medians of each card's newest three months; say when a
		 * card's window ends before another's begins (a used 3090 of July-September beside a 3090 Ti of May) */
		long newest = -1;
		for (size_t i = 0; i < res->n_rows; i++) {
			const cards_row *r = &res->rows[i];
			long m = r->price_estimated ? -1 : price_month_index(r->quote.date);
			if (m > newest)
				newest = m;
		}
		size_t nold = 0;
		for (size_t i = 0; i < res->n_rows; i++) {
			const cards_row *r = &res->rows[i];
			long m = r->price_estimated ? -1 : price_month_index(r->quote.date);
			if (m < 0 || newest - m < PRICE_USED_WINDOW_MONTHS)
				continue;
			if (!nold++)
				printf(_("\nDifferent months: these cards' used prices end before the newest cards' window "
					 "begins (the market may have moved since; compare with care):\n"));
			if (nold <= 12)
				printf(_("  %s: rows of %s to %s\n"), r->gpu->id, *r->quote.date_from ? r->quote.date_from : r->quote.date,
				       r->quote.date);
		}
		if (nold > 12)
			printf(_("  ... and %zu more\n"), nold - 12);
	}
	printf(_("\n%zu GPUs considered: %zu listed, %zu do not fit with %u cards, %zu over budget, %zu %s"),
	       res->n_considered, res->n_rows, res->n_no_fit, o->max_gpus, res->n_over_budget, res->n_no_price,
	       o->used ? _("without a used price") : _("not on sale new (try --used)"));
	if (res->n_other_market)
		printf(_(", %zu sold only in another market (priced in another currency; --currency)"), res->n_other_market);
	if (o->backend != PLAN_BACKEND_AUTO)
		printf(_(", %zu not run by the %s backend"), res->n_no_backend, plan_backend_name(o->backend));
	printf("\n");
	if (o->used)
		printf(_("Prices: median of each card's rows of data/used-prices.tsv dated in the %d months up to its "
			 "newest row (older rows stay as the record, not used; gpuwise list gpus shows them).\n"),
		       PRICE_USED_WINDOW_MONTHS);
	else
		printf(_("Prices: median of the dated rows of data/new-prices.tsv (gpuwise list gpus shows them).\n"));
	if (c->w.kind == WORKLOAD_LLM && c->backend != PLAN_BACKEND_AUTO)
		printf(_("Speed: single-stream decode tokens/s as gpuwise plan predicts it on the %s backend "
		       "(%zu cards it does not run on left out).\n"),
		       plan_backend_name(c->backend), res->n_no_backend);
	else if (c->w.kind == WORKLOAD_LLM)
		printf(_("Speed: single-stream decode tokens/s as gpuwise plan predicts it, each vendor's default "
		       "llama.cpp backend (see its notes; --backend chooses one).\n"));
	else if (c->w.kind == WORKLOAD_TRAIN)
		printf(_("Speed: training tokens/s at %.0f%% of dense FP16 TFLOPS [assumption].\n"), TRAIN_MFU * 100);
	else
		printf(_("Speed: images per minute at the model's default steps, %s memory profile, each vendor's PyTorch "
		       "backend, fitted on public measurements (gpuwise plan MODEL --image --gpu G shows the basis).\n"),
		       image_ui_name(c->w.image.ui));
	print_rentals(c, o, rent, n_rent);
}

/* option=value pairs ("quant=q3_k_m kv_type=q8_0") as a JSON object of strings/numbers. */
static json_t *set_json(const char *pairs)
{
	json_t *o = json_object();
	char *copy = xstrdup(pairs);
	for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
		char *eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq = 0;
		long long v;
		if (!parse_int(eq + 1, 0, 1000000, &v))
			json_object_set_new(o, tok, json_integer(v));
		else if (!strcmp(eq + 1, "true"))
			json_object_set_new(o, tok, json_true());
		else
			json_object_set_new(o, tok, json_string(eq + 1));
	}
	free(copy);
	return o;
}

/* data/lifecycle.tsv row of a pick as JSON; null when none. */
static json_t *lifecycle_json(const kb_lifecycle *l)
{
	if (!l)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "arch", json_string(l->arch));
	json_object_set_new(o, "last_torch", jstr_or_null(*l->last_torch ? l->last_torch : NULL));
	json_object_set_new(o, "torch_wheel", jstr_or_null(*l->torch_wheel ? l->torch_wheel : NULL));
	json_object_set_new(o, "last_driver", jstr_or_null(*l->last_driver ? l->last_driver : NULL));
	json_object_set_new(o, "cuda_build", json_string(l->cuda_build));
	json_object_set_new(o, "prebuilt", json_string(l->prebuilt));
	json_object_set_new(o, "hardware", json_string(l->hardware));
	json_object_set_new(o, "as_of", json_string(l->as_of));
	json_object_set_new(o, "source", json_string(l->source));
	return o;
}

/* data/install.tsv row of a pick as JSON; null for an ordinary desktop card. */
static json_t *install_json(const kb_install *in)
{
	if (!in)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "form_factor", json_string(kb_form_name(in->form)));
	json_object_set_new(o, "passive_cooling", json_boolean(in->passive));
	json_object_set_new(o, "display_outputs", json_boolean(in->display));
	json_object_set_new(o, "power_connector", json_string(in->power_connector));
	json_object_set_new(o, "slots", json_integer(in->slots));
	json_object_set_new(o, "resizable_bar_required", json_boolean(in->rebar));
	json_object_set_new(o, "source", json_string(in->source));
	return o;
}

static json_t *row_json(const cards_row *r, int yr, int mo)
{
	json_t *x = json_object();
	json_object_set_new(x, "gpu", json_string(r->gpu->id));
	json_object_set_new(x, "name", json_string(r->gpu->name));
	json_object_set_new(x, "vendor", json_string(r->gpu->vendor));
	json_object_set_new(x, "count", json_integer(r->count));
	json_object_set_new(x, "vram_bytes", json_integer((json_int_t)r->gpu->vram_bytes));
	json_object_set_new(x, "need_bytes", json_integer((json_int_t)r->eval.need_bytes));
	json_object_set_new(x, "speed", r->eval.has_speed ? jreal_round(r->eval.speed, 2) : json_null());
	json_object_set_new(x, "price", r->price_known ? jreal_round(r->price, 2) : json_null());
	json_object_set_new(x, "currency", json_string(r->quote.currency[0] ? r->quote.currency : "USD"));
	json_object_set_new(x, "price_usd", r->price_known && !strcmp(r->quote.currency, "USD") ? jreal_round(r->price, 2)
											      : json_null());
	json_object_set_new(x, "price_converted", json_boolean(r->quote.converted));
	json_object_set_new(x, "price_quoted_currency", jstr_or_null(r->quote.row_currency[0] ? r->quote.row_currency : NULL));
	json_object_set_new(x, "speed_estimated", json_boolean(r->eval.speed_estimated));
	json_object_set_new(x, "price_estimated", json_boolean(r->price_estimated));
	json_object_set_new(x, "price_date", jstr_or_null(r->quote.date[0] ? r->quote.date : NULL));
	int age = price_age_months(r->quote.date, yr, mo);
	json_object_set_new(x, "price_age_months", age >= 0 && !r->price_estimated ? json_integer(age) : json_null());
	json_object_set_new(x, "price_source", jstr_or_null(r->quote.source));
	json_object_set_new(x, "price_rows", json_integer((json_int_t)r->quote.n_rows));
	json_object_set_new(x, "price_rows_on_record", json_integer((json_int_t)r->quote.n_on_record));
	json_object_set_new(x, "price_window_from", jstr_or_null(r->quote.date_from[0] ? r->quote.date_from : NULL));
	json_object_set_new(x, "speed_per_1000", r->speed_per_k > 0 ? jreal_round(r->speed_per_k, 3) : json_null());
	json_object_set_new(x, "speed_per_1000_usd", r->speed_per_k > 0 && !strcmp(r->quote.currency, "USD")
							     ? jreal_round(r->speed_per_k, 3) : json_null());
	json_object_set_new(x, "power_w", r->power_w ? json_integer(r->power_w) : json_null());
	json_object_set_new(x, "remedy", jstr_or_null(r->eval.remedy[0] ? r->eval.remedy : NULL));
	json_object_set_new(x, "set", set_json(r->eval.remedy_set));
	json_t *cv = json_array();
	for (size_t k = 0; k < r->n_caveats; k++)
		json_array_append_new(cv, json_string(r->caveats[k]));
	json_object_set_new(x, "caveats", cv);
	json_object_set_new(x, "lifecycle", lifecycle_json(r->lifecycle));
	json_object_set_new(x, "install", install_json(r->install));
	if (r->count > 1) {
		json_t *rig = json_object();
		json_object_set_new(rig, "slots", json_integer(r->count));
		json_object_set_new(rig, "slot_widths", json_integer(r->slots_total));
		json_object_set_new(rig, "board_power_w", json_integer(r->power_w));
		json_object_set_new(rig, "psu_min_w", json_integer(r->psu_min_w));
		json_object_set_new(x, "rig", rig);
	} else {
		json_object_set_new(x, "rig", json_null());
	}
	return x;
}

static void print_json(const cards_ctx *c, const cards_opts *o, const cards_result *res, const cards_rent *rent,
		       size_t n_rent)
{
	const char *cur = o->currency ? o->currency : "USD";
	int yr, mo;
	this_month(&yr, &mo);
	json_t *j = json_object();
	json_object_set_new(j, "model", json_string(c->model_name));
	json_object_set_new(j, "workload", json_string(c->w.kind == WORKLOAD_TRAIN ? "train" : c->w.kind == WORKLOAD_IMAGE ? "image" : "inference"));
	json_object_set_new(j, "speed_unit", json_string(unit_of(c->w.kind)));
	json_object_set_new(j, "used", json_boolean(o->used));
	json_object_set_new(j, "estimates", json_boolean(o->used && o->estimates));
	json_object_set_new(j, "currency", json_string(cur));
	json_object_set_new(j, "region", jstr_or_null(c->region));
	json_object_set_new(j, "budget", o->budget > 0 ? json_real(o->budget) : json_null());
	json_object_set_new(j, "budget_usd", o->budget > 0 && !strcmp(cur, "USD") ? json_real(o->budget) : json_null());
	json_object_set_new(j, "max_gpus", json_integer(o->max_gpus));
	json_t *rows = json_array();
	int stale = 0;
	for (size_t i = 0; i < res->n_rows; i++) {
		json_array_append_new(rows, row_json(&res->rows[i], yr, mo));
		stale += !res->rows[i].price_estimated &&
			 price_age_months(res->rows[i].quote.date, yr, mo) > PRICE_STALE_MONTHS;
	}
	json_object_set_new(j, "rows", rows);
	json_object_set_new(j, "cheapest_over_budget",
			    res->has_cheapest_over ? row_json(&res->cheapest_over, yr, mo) : json_null());
	json_object_set_new(j, "stale_prices", json_integer(stale));
	json_object_set_new(j, "considered", json_integer((json_int_t)res->n_considered));
	json_object_set_new(j, "no_fit", json_integer((json_int_t)res->n_no_fit));
	json_object_set_new(j, "over_budget", json_integer((json_int_t)res->n_over_budget));
	json_object_set_new(j, "no_price", json_integer((json_int_t)res->n_no_price));
	json_object_set_new(j, "no_backend", json_integer((json_int_t)res->n_no_backend));
	json_object_set_new(j, "other_market", json_integer((json_int_t)res->n_other_market));
	json_object_set_new(j, "backend", json_string(plan_backend_name(c->backend)));
	json_t *ra = json_array();
	for (size_t i = 0; i < n_rent; i++) {
		const cards_rent *r = &rent[i];
		json_t *x = json_object();
		json_object_set_new(x, "gpu", json_string(r->gpu->id));
		json_object_set_new(x, "name", json_string(r->gpu->name));
		json_object_set_new(x, "count", json_integer(r->count));
		json_object_set_new(x, "speed", r->eval.has_speed ? jreal_round(r->eval.speed, 2) : json_null());
		json_object_set_new(x, "speed_estimated", json_boolean(r->eval.speed_estimated));
		json_object_set_new(x, "remedy", jstr_or_null(r->eval.remedy[0] ? r->eval.remedy : NULL));
		json_object_set_new(x, "per_hour", jreal_round(r->per_hour, 4));
		json_object_set_new(x, "rate_per_gpu_hour", jreal_round(r->quote.per_h, 4));
		json_object_set_new(x, "min_per_gpu_hour", jreal_round(r->quote.min_h, 4));
		json_object_set_new(x, "max_per_gpu_hour", jreal_round(r->quote.max_h, 4));
		json_object_set_new(x, "offers", json_integer((json_int_t)r->quote.n_rows));
		json_object_set_new(x, "tier", json_string(r->quote.tier));
		json_object_set_new(x, "currency", json_string(r->quote.cur));
		json_object_set_new(x, "converted", json_boolean(r->quote.converted));
		json_object_set_new(x, "quoted_currency", json_string(r->quote.row_cur));
		json_object_set_new(x, "provider", json_string(r->quote.provider));
		json_object_set_new(x, "date", json_string(r->quote.date));
		json_object_set_new(x, "source", json_string(r->quote.source));
		json_array_append_new(ra, x);
	}
	json_object_set_new(j, "rent", ra);
	json_print(j, stdout);
	json_decref(j);
}

enum {
	OPT_BUDGET = 0x100,
	OPT_NOT_GPU, /* plan's --gpu and --vram: getopt would take --gpu for --gpus */
	OPT_NOT_VRAM,
	OPT_USED,
	OPT_NO_ESTIMATES,
	OPT_VENDOR,
	OPT_MAX_GPUS,
	OPT_JSON,
	OPT_QUANT,
	OPT_CTX,
	OPT_BATCH,
	OPT_KV_TYPE,
	OPT_FLASH,
	OPT_ENGINE,
	OPT_BACKEND,
	OPT_PARAMS,
	OPT_LAYERS,
	OPT_HIDDEN,
	OPT_HEADS,
	OPT_KV_HEADS,
	OPT_HEAD_DIM,
	OPT_FFN,
	OPT_VOCAB,
	OPT_CURRENCY,
	OPT_REGION,
	OPT_HELP,
};

static const struct option own_options[] = {
	{"budget", required_argument, NULL, OPT_BUDGET},
	{"gpu", required_argument, NULL, OPT_NOT_GPU},
	{"vram", required_argument, NULL, OPT_NOT_VRAM},
	{"used", no_argument, NULL, OPT_USED},
	{"no-estimates", no_argument, NULL, OPT_NO_ESTIMATES},
	{"vendor", required_argument, NULL, OPT_VENDOR},
	{"max-gpus", required_argument, NULL, OPT_MAX_GPUS},
	{"json", no_argument, NULL, OPT_JSON},
	{"quant", required_argument, NULL, OPT_QUANT},
	{"ctx", required_argument, NULL, OPT_CTX},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"kv-type", required_argument, NULL, OPT_KV_TYPE},
	{"flash-attn", no_argument, NULL, OPT_FLASH},
	{"engine", required_argument, NULL, OPT_ENGINE},
	{"backend", required_argument, NULL, OPT_BACKEND},
	{"params", required_argument, NULL, OPT_PARAMS},
	{"layers", required_argument, NULL, OPT_LAYERS},
	{"hidden", required_argument, NULL, OPT_HIDDEN},
	{"heads", required_argument, NULL, OPT_HEADS},
	{"kv-heads", required_argument, NULL, OPT_KV_HEADS},
	{"head-dim", required_argument, NULL, OPT_HEAD_DIM},
	{"ffn", required_argument, NULL, OPT_FFN},
	{"vocab", required_argument, NULL, OPT_VOCAB},
	{"currency", required_argument, NULL, OPT_CURRENCY},
	{"region", required_argument, NULL, OPT_REGION},
	{"help", no_argument, NULL, OPT_HELP},
};

static int u32_opt(const char *name, const char *arg, uint32_t *out)
{
	long long v;
	if (parse_int(arg, 1, 100000000, &v))
		return usage_error("cards", "invalid %s '%s' (a whole number above 0)", name, arg);
	*out = (uint32_t)v;
	return 0;
}

int cmd_cards(int argc, char **argv)
{
	size_t n_own = sizeof own_options / sizeof own_options[0];
	size_t n_wl = workload_option_count();
	struct option *opts = xcalloc(n_own + n_wl + 1, sizeof *opts);
	memcpy(opts, own_options, sizeof own_options);
	memcpy(opts + n_own, workload_options, n_wl * sizeof *opts);

	cards_ctx c;
	memset(&c, 0, sizeof c);
	workload_init(&c.w);
	c.kv = PLAN_KV_F16;
	c.engine = PLAN_ENGINE_LLAMACPP;
	cards_opts o = {.max_gpus = 4, .estimates = true};
	model_numbers nums;
	memset(&nums, 0, sizeof nums);
	bool json = false, quant_given = false, batch_given = false;
	model_desc m;
	memset(&m, 0, sizeof m);
	bool loaded = false;
	int status = GW_EXIT_USAGE, ch;
	uint32_t u = 0;
	double d;
	long long ll;
	const char *budget_arg = NULL, *cur_opt = NULL, *region_opt = NULL;
	cards_rent *rent = NULL;
	size_t n_rent = 0;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		int rc = 0;
		switch (ch) {
		case OPT_BUDGET: budget_arg = optarg; break;
		case OPT_CURRENCY: cur_opt = optarg; break;
		case OPT_REGION: region_opt = optarg; break;
		case OPT_USED: o.used = true; break;
		case OPT_NO_ESTIMATES: o.estimates = false; break;
		case OPT_NOT_GPU:
		case OPT_NOT_VRAM:
			rc = usage_error("cards", "%s is not a cards option: cards ranks every GPU of the catalog "
						  "(narrow with --vendor, --budget; one GPU: gpuwise plan)",
					 ch == OPT_NOT_GPU ? "--gpu" : "--vram");
			break;
		case OPT_VENDOR:
			if (!*optarg)
				rc = usage_error("cards", "invalid --vendor '' (e.g. NVIDIA, AMD, Apple)");
			o.vendor = optarg;
			break;
		case OPT_MAX_GPUS:
			if (parse_int(optarg, 1, 16, &ll))
				rc = usage_error("cards", "invalid --max-gpus '%s' (1 to 16)", optarg);
			else
				o.max_gpus = (uint32_t)ll;
			break;
		case OPT_JSON: json = true; break;
		case OPT_QUANT:
			if (!*optarg)
				rc = usage_error("cards", "invalid --quant '' (e.g. q4_k_m, q8_0, bf16)");
			c.quant = optarg;
			quant_given = true;
			break;
		case OPT_CTX:
			rc = parse_ctx_opt("cards", "--ctx", optarg, &c.ctx);
			break;
		case OPT_BATCH:
			if (!(rc = u32_opt("--batch", optarg, &u))) {
				c.batch = u;
				batch_given = true;
			}
			break;
		case OPT_KV_TYPE:
			if (plan_kv_type_parse(optarg, &c.kv))
				rc = usage_error("cards", "invalid --kv-type '%s'", optarg);
			break;
		case OPT_FLASH: c.flash = true; break;
		case OPT_ENGINE:
			if (plan_engine_parse(optarg, &c.engine))
				rc = usage_error("cards", "invalid --engine '%s' (llama.cpp, ollama, vllm, transformers)", optarg);
			break;
		case OPT_BACKEND:
			if (plan_backend_parse(optarg, &c.backend))
				rc = usage_error("cards", "unknown --backend '%s' (cuda, rocm, vulkan, metal, sycl, cpu)", optarg);
			else if (c.backend == PLAN_BACKEND_CPU)
				rc = usage_error("cards", "--backend cpu ranks no card (plan MODEL --gpu none plans the CPU)");
			break;
		case OPT_PARAMS:
			if (parse_count(optarg, &d) || !(d > 0))
				rc = usage_error("cards", "invalid --params '%s' (e.g. 7b, 13e9)", optarg);
			else
				nums.params = d;
			break;
		case OPT_LAYERS: rc = u32_opt("--layers", optarg, &nums.layers); break;
		case OPT_HIDDEN: rc = u32_opt("--hidden", optarg, &nums.hidden); break;
		case OPT_HEADS: rc = u32_opt("--heads", optarg, &nums.heads); break;
		case OPT_KV_HEADS: rc = u32_opt("--kv-heads", optarg, &nums.kv_heads); break;
		case OPT_HEAD_DIM: rc = u32_opt("--head-dim", optarg, &nums.head_dim); break;
		case OPT_FFN: rc = u32_opt("--ffn", optarg, &nums.ffn); break;
		case OPT_VOCAB: rc = u32_opt("--vocab", optarg, &nums.vocab); break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			status = GW_EXIT_OK;
			goto out;
		case ':':
			rc = usage_error("cards", "option '%s' needs a value", argv[optind - 1]);
			break;
		default:
			rc = workload_option(&c.w, ch, optarg, "cards");
			if (rc < 0)
				rc = usage_error("cards", "unknown option '%s'", argv[optind - 1]);
			break;
		}
		if (rc) {
			status = rc;
			goto out;
		}
	}
	if ((status = workload_check(&c.w, "cards")))
		goto out;
	{
		gw_error kerr = {0};
		if (kb_load_all(&kerr)) { /* a broken --data-dir table is not "no card fits" */
			gw_errorf("%s", gw_error_text(&kerr));
			status = GW_EXIT_RUNTIME;
			goto out;
		}
	}
	char budget_cur[4];
	if (!cur_opt && !region_opt && budget_arg && !(getenv("GPUWISE_CURRENCY") && *getenv("GPUWISE_CURRENCY")) &&
	    money_opt_currency(budget_arg, budget_cur))
		cur_opt = budget_cur; /* --budget 8000CNY: the answer in the budget's currency, its market's prices */
	if ((status = money_context("cards", cur_opt, region_opt, &o.currency, &c.region)))
		goto out;
	if (budget_arg) {
		if ((status = parse_money_opt("cards", "--budget", budget_arg, 1e12, o.currency, &d)))
			goto out;
		if (!(d > 0)) {
			status = usage_error("cards", "invalid --budget '%s' (an amount above 0)", budget_arg);
			goto out;
		}
		o.budget = d;
	}
	status = GW_EXIT_USAGE;
	bool have_nums = nums.params > 0 || nums.layers || nums.hidden;
	if (optind < argc - 1) {
		usage_error("cards", "one model at a time ('%s' is extra)", argv[optind + 1]);
		goto out;
	}
	if (optind == argc && !have_nums) {
		usage_error("cards", "name a model (catalog name, GGUF, safetensors, config.json) or give --params");
		goto out;
	}
	if (optind < argc && !*argv[optind]) {
		usage_error("cards", "the model name is empty");
		goto out;
	}
	c.model_name = optind < argc ? argv[optind] : "explicit model";
	if (c.w.kind == WORKLOAD_IMAGE) {
		if (batch_given)
			c.w.image.batch = c.batch;
		if (quant_given)
			c.w.image.quant = c.quant;
		gw_error err = {0};
		image_model im;
		int rc = image_model_find(c.model_name, &im, &err);
		if (rc) {
			if (rc == GW_ENOTFOUND)
				usage_error("cards", "%s", gw_error_text(&err));
			else {
				gw_errorf("%s", gw_error_text(&err));
				status = GW_EXIT_RUNTIME;
			}
			goto out;
		}
		double bpp;
		if (image_quant_bytes(c.w.image.quant, &bpp)) {
			usage_error("cards", "unknown image precision '%s'", c.w.image.quant);
			goto out;
		}
	} else {
		gw_error err = {0};
		int rc = model_load(optind < argc ? argv[optind] : NULL, &nums, &m, &err);
		if (rc) {
			if (rc == GW_ENOTFOUND || rc == GW_EINVAL)
				usage_error("cards", "%s", gw_error_text(&err));
			else {
				gw_errorf("%s", gw_error_text(&err));
				status = GW_EXIT_RUNTIME;
			}
			goto out;
		}
		loaded = true;
		c.m = &m;
		bool gguf = c.engine == PLAN_ENGINE_LLAMACPP || c.engine == PLAN_ENGINE_OLLAMA;
		if (c.quant) {
			c.quant = quant_resolve("cards", c.quant, gguf);
			plan_weights w;
			gw_error qe;
			if (plan_weights_get(&m, c.quant, &w, &qe)) {
				char names[1024];
				quant_names(names, sizeof names);
				usage_error("cards", "unknown quantization '%s' (valid: %s; gpuwise list quants)", c.quant, names);
				goto out;
			}
			plan_weights_release(&w);
		}
		if (m.name)
			c.model_name = m.name;
		c.w.train.flash_attn = c.w.train.flash_attn || c.flash;
	}
	if (c.backend != PLAN_BACKEND_AUTO) {
		if (c.w.kind != WORKLOAD_LLM) {
			usage_error("cards", "--backend is for LLM inference with llama.cpp or ollama, not %s",
				    c.w.kind == WORKLOAD_TRAIN ? "fine-tuning" : "image generation");
			goto out;
		}
		if (c.engine != PLAN_ENGINE_LLAMACPP && c.engine != PLAN_ENGINE_OLLAMA) {
			usage_error("cards", "--backend applies to llama.cpp and ollama, not %s", plan_engine_name(c.engine));
			goto out;
		}
		o.backend = c.backend;
	}
	int month;
	this_month(&o.year, &month);
	cards_result res;
	gw_error err = {0};
	int rc = cards_rank(&o, eval, &c, &res, &err);
	if (rc) {
		if (rc == GW_EINVAL || rc == GW_ENOTFOUND)
			usage_error("cards", "%s", gw_error_text(&err));
		else {
			gw_errorf("%s", gw_error_text(&err));
			status = GW_EXIT_RUNTIME;
		}
		goto out;
	}
	if ((rc = cards_rentals(&o, eval, &c, CARDS_RENT_ROWS, &rent, &n_rent, &err))) {
		gw_errorf("%s", gw_error_text(&err));
		status = GW_EXIT_RUNTIME;
		cards_result_release(&res);
		goto out;
	}
	if (json)
		print_json(&c, &o, &res, rent, n_rent);
	else
		print_text(&c, &o, &res, rent, n_rent);
	status = res.n_rows ? GW_EXIT_OK : GW_EXIT_VERDICT4;
	cards_result_release(&res);
out:
	free(rent);
	if (loaded)
		model_release(&m);
	free(opts);
	return status;
}

/*
 * cards.c: rank GPUs by what the caller's workload gets from them per
 * dollar, and note what a buyer must know about each.
 */
#include "plan/cards.h"

#include <stdlib.h>
#include <string.h>

/* A used price from data/used-prices.tsv, or an estimate from the new price
 * and the card's age: 75% under two years, 55% at two to three, 35% from
 * four [assumption; the RTX 3090 row (600 of 1499 USD at six years, 40%)
 * and the RTX 3060 row (225 of 329, 68% at five years) bracket it]. */
bool cards_price(const gpu_spec *g, bool used, int year, double *usd, bool *estimated)
{
	*estimated = false;
	*usd = 0;
	if (!used) {
		*usd = g->price_usd;
		return g->price_usd > 0;
	}
	if (g->used_price_usd > 0) {
		*usd = g->used_price_usd;
		return true;
	}
	const kb_table *t = kb_get_table("used-prices", NULL);
	if (t) {
		long cg = kb_col(t, "gpu"), cu = kb_col(t, "usd");
		for (size_t i = 0; i < t->nrows; i++) {
			double v;
			if (kb_gpu_find(kb_cell(t, i, cg)) == g && !parse_double(kb_cell(t, i, cu), &v) && v > 0) {
				*usd = v;
				return true;
			}
		}
	}
	if (!(g->price_usd > 0) || g->year <= 0)
		return false;
	int age = year - g->year;
	*usd = g->price_usd * (age < 2 ? 0.75 : age < 4 ? 0.55 : 0.35);
	*estimated = true;
	return true;
}

static void caveat(cards_row *r, const char *text)
{
	if (r->n_caveats < CARDS_MAX_CAVEATS)
		r->caveats[r->n_caveats++] = text;
}

/*
 * The software caveats: CUDA 13.0 builds only sm_75 and newer (it dropped
 * sm_50 to sm_72: data/cuda-arch.tsv, NVIDIA cuDecomp#97); PyTorch 2.11's
 * cu128 and cu130 wheels start at sm_75 (data/torch-builds.tsv).
 */
static void caveats_for(cards_row *r)
{
	const gpu_spec *g = r->gpu;
	if (!str_ieq(g->vendor, "NVIDIA")) {
		if (str_ieq(g->vendor, "AMD"))
			caveat(r, "AMD: ROCm instead of CUDA; many CUDA-only tools and kernels do not run");
		else if (str_ieq(g->vendor, "Apple"))
			caveat(r, "Apple: Metal/MPS, no CUDA; unified memory shared with the system");
		else
			caveat(r, "not an NVIDIA GPU: no CUDA");
	} else if (g->cc_major >= 0 && (g->cc_major < 7 || (g->cc_major == 7 && g->cc_minor < 5))) {
		caveat(r, "compute capability below 7.5: CUDA 13 and PyTorch 2.11's cu128/cu130 wheels no longer build for it");
	}
	if (g->cc_major >= 0 && g->cc_major < 5)
		caveat(r, "compute capability below 5.0: no current CUDA or PyTorch release supports it");
	if (g->laptop)
		caveat(r, "laptop part: speed depends on the laptop's power limit (TGP)");
	if (r->count > 1)
		caveat(r, "several cards: the model is split across them (needs the slots, power and a split-capable engine)");
}

static int cmp_rows(const void *a, const void *b)
{
	const cards_row *x = a, *y = b;
	if (x->speed_per_kusd != y->speed_per_kusd)
		return x->speed_per_kusd < y->speed_per_kusd ? 1 : -1;
	if (x->eval.speed != y->eval.speed)
		return x->eval.speed < y->eval.speed ? 1 : -1;
	if (x->price_usd != y->price_usd)
		return x->price_usd > y->price_usd ? 1 : -1;
	return strcmp(x->gpu->id, y->gpu->id);
}

int cards_rank(const cards_opts *o, cards_eval_fn fn, void *ctx, cards_result *res, gw_error *err)
{
	memset(res, 0, sizeof *res);
	size_t cap = 0;
	uint32_t max = o->max_gpus ? o->max_gpus : 4;
	if (max > 16)
		return gw_fail(err, GW_EINVAL, "at most 16 GPUs");
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *g = kb_gpu_at(i);
		if (o->vendor && *o->vendor && !str_ieq(o->vendor, g->vendor))
			continue;
		res->n_considered++;
		cards_row row = {.gpu = g};
		bool fit = false;
		/* Apple and other unified-memory parts do not come in sets */
		uint32_t top = g->unified_memory ? 1 : max;
		for (uint32_t n = 1; n <= top && !fit; n++) {
			cards_eval ev = {0};
			int rc = fn(ctx, g, n, &ev, err);
			if (rc)
				return rc;
			if (ev.fits) {
				fit = true;
				row.count = n;
				row.eval = ev;
			}
		}
		if (!fit) {
			res->n_no_fit++;
			continue;
		}
		double one;
		bool est;
		row.price_known = cards_price(g, o->used, o->year, &one, &est);
		row.price_estimated = est;
		row.price_usd = one * row.count;
		if (!row.price_known && o->budget_usd > 0) {
			res->n_no_price++;
			continue;
		}
		if (o->budget_usd > 0 && row.price_usd > o->budget_usd) {
			res->n_over_budget++;
			continue;
		}
		if (row.price_known && row.eval.has_speed && row.price_usd > 0)
			row.speed_per_kusd = row.eval.speed / (row.price_usd / 1000);
		row.power_w = (uint32_t)(g->tdp_w > 0 ? g->tdp_w : 0) * row.count;
		caveats_for(&row);
		res->rows = xgrow(res->rows, &cap, res->n_rows + 1, sizeof *res->rows);
		res->rows[res->n_rows++] = row;
	}
	if (o->vendor && *o->vendor && !res->n_considered)
		return gw_fail(err, GW_EINVAL, "no GPU of vendor '%s' in the catalog (e.g. NVIDIA, AMD, Apple)", o->vendor);
	if (res->n_rows)
		qsort(res->rows, res->n_rows, sizeof *res->rows, cmp_rows);
	return 0;
}

void cards_result_release(cards_result *res)
{
	free(res->rows);
	memset(res, 0, sizeof *res);
}

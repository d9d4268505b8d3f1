/*
 * cards.c: rank GPUs by what the caller's workload gets from them per
 * dollar, and note what a buyer must know about each.
 */
#include "plan/cards.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void caveat(cards_row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void caveat(cards_row *r, const char *fmt, ...)
{
	if (r->n_caveats >= CARDS_MAX_CAVEATS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->caveats[r->n_caveats++], CARDS_CAVEAT_LEN, _(fmt), ap);
	va_end(ap);
}

size_t cards_lifecycle_text(const gpu_spec *g, char *buf, size_t n)
{
	const kb_lifecycle *lc = kb_lifecycle_for(g);
	if (n)
		buf[0] = '\0';
	if (!lc || !n)
		return 0;
	bool old = g->cc_major < 7 || (g->cc_major == 7 && g->cc_minor < 5);
	/* the cells of data/lifecycle.tsv are in the catalog too (make pot: tools/tsv-pot.py --table) */
	int k = snprintf(buf, n, _("%s, sm_%d%d%s; lifecycle as of %s: last PyTorch %s%s%s; last driver branch %s; "
				   "to build from source: %s"),
			 lc->arch, g->cc_major, g->cc_minor, old ? _(" (compute capability below 7.5)") : "", lc->as_of,
			 *lc->last_torch ? lc->last_torch : _("current"), *lc->torch_wheel ? _(", ") : "",
			 *lc->torch_wheel ? _(lc->torch_wheel) : "", *lc->last_driver ? lc->last_driver : _("current"),
			 _(lc->cuda_build));
	return k < 0 ? 0 : strlen(buf);
}

/* Host PC allowance and PSU headroom for a multi-card set [assumption]. */
#define RIG_HOST_W 150
#define RIG_HEADROOM 1.25
#define RIG_DEFAULT_SLOTS 2
#define RIG_ATX_MAX_W 1600

/*
 * The software caveats: the card's row of data/lifecycle.tsv (last
 * PyTorch wheel, last driver branch, the toolkits that build for it, the
 * engines' prebuilt builds, missing hardware features); without a row,
 * CUDA 13.0 builds only sm_75 and newer (data/cuda-arch.tsv).  Then the
 * install caveats of data/install.tsv, and for a set the board and PSU
 * it implies.
 */
static void caveats_for(cards_row *r)
{
	const gpu_spec *g = r->gpu;
	const kb_lifecycle *lc = kb_lifecycle_for(g);
	const kb_install *in = kb_install_for(g);
	r->lifecycle = lc;
	r->install = in;
	bool old = g->cc_major >= 0 && (g->cc_major < 7 || (g->cc_major == 7 && g->cc_minor < 5));
	if (!str_ieq(g->vendor, "NVIDIA")) {
		if (str_ieq(g->vendor, "AMD"))
			caveat(r, "AMD: ROCm instead of CUDA; many CUDA-only tools and kernels do not run");
		else if (str_ieq(g->vendor, "Apple"))
			caveat(r, "Apple: Metal/MPS, no CUDA; unified memory shared with the system");
		else if (!str_ieq(g->vendor, "Intel"))
			caveat(r, "not an NVIDIA GPU: no CUDA");
	} else if (lc) {
		if (r->n_caveats < CARDS_MAX_CAVEATS)
			cards_lifecycle_text(g, r->caveats[r->n_caveats++], CARDS_CAVEAT_LEN);
		caveat(r, "prebuilt engines: %s", _(lc->prebuilt));
		caveat(r, "hardware: %s", _(lc->hardware));
	} else if (old) {
		caveat(r, "compute capability below 7.5: CUDA 13 and PyTorch 2.11's cu128/cu130 wheels no longer build for it");
	}
	if (g->cc_major >= 0 && g->cc_major < 5)
		caveat(r, "compute capability below 5.0: no current CUDA or PyTorch release supports it");
	if (str_ieq(g->vendor, "Intel"))
		caveat(r, "Intel: oneAPI/SYCL or Vulkan instead of CUDA; fewer engines support it");
	if (g->laptop)
		caveat(r, "laptop part: speed depends on the laptop's power limit (TGP)");
	market_note mn;
	if (price_market_note(g, NULL, "modified", &mn))
		caveat(r, "%s", _(mn.note));
	if (r->eval.speed_caveat)
		caveat(r, "speed: %s", r->eval.speed_caveat);
	if (in) {
		if (in->form != KB_FORM_PCIE)
			caveat(r, "%s module, not a PCIe card: a desktop needs an %s-to-PCIe adapter board (with its own "
				  "cooling and power) or a server built for it",
			       kb_form_name(in->form), kb_form_name(in->form));
		if (in->passive)
			caveat(r, "passively cooled (no fans): in a desktop case it needs a blower fan and shroud");
		if (!in->display)
			caveat(r, "no display outputs: the screen needs another GPU or the CPU's graphics");
		caveat(r, "power: %s; %d W board power; %d-slot %s", _(in->power_connector), g->tdp_w, in->slots,
		       kb_form_name(in->form));
		if (in->rebar)
			caveat(r, "needs Resizable BAR (and Above 4G Decoding) enabled in the BIOS: much slower without it");
	}
	if (r->count > 1) {
		int slots = in ? in->slots : RIG_DEFAULT_SLOTS;
		r->slots_total = (uint32_t)slots * r->count;
		double psu = ((double)r->power_w + RIG_HOST_W) * RIG_HEADROOM;
		r->psu_min_w = (uint32_t)((psu + 49.999) / 50) * 50;
		caveat(r, "several cards: the model is split across them (needs a split-capable engine); %ux %d-slot%s cards "
			  "need a board with %u PCIe x16-size slots and %u slot widths of room (or risers), %u W of board power, "
			  "a PSU of at least %u W (cards + %d W host, +%.0f%% headroom) [assumption]",
		       r->count, slots, in ? "" : _(" (assumed)"), r->count, r->slots_total, r->power_w, r->psu_min_w,
		       RIG_HOST_W, (RIG_HEADROOM - 1) * 100);
		if (r->psu_min_w > RIG_ATX_MAX_W)
			caveat(r, "%u W is more than the largest common ATX PSU (%d W): two PSUs and a circuit that carries it "
				  "(230 V), or a server chassis",
			       r->psu_min_w, RIG_ATX_MAX_W);
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const cards_row *x = a, *y = b;
	if (x->price_estimated != y->price_estimated)
		return x->price_estimated ? 1 : -1;
	if (x->eval.speed_estimated != y->eval.speed_estimated)
		return x->eval.speed_estimated ? 1 : -1;
	if (x->speed_per_k != y->speed_per_k)
		return x->speed_per_k < y->speed_per_k ? 1 : -1;
	if (x->eval.speed != y->eval.speed)
		return x->eval.speed < y->eval.speed ? 1 : -1;
	if (x->price != y->price)
		return x->price > y->price ? 1 : -1;
	return strcmp(x->gpu->id, y->gpu->id);
}

/*
 * The first configuration of g that fits, trying remedy levels in order
 * and, within a level, 1..top cards; with a budget only counts up to
 * max_n (what the budget buys).  Returns 0 and *found.
 */
static int first_fit(cards_eval_fn fn, void *ctx, const gpu_spec *g, uint32_t min_n, uint32_t max_n,
		     cards_row *row, bool *found, gw_error *err)
{
	*found = false;
	for (unsigned level = 0; level < CARDS_MAX_LEVELS; level++) {
		for (uint32_t n = min_n; n <= max_n; n++) {
			cards_eval ev;
			memset(&ev, 0, sizeof ev);
			int rc = fn(ctx, g, n, level, &ev, err);
			if (rc)
				return rc;
			if (ev.fits) {
				row->count = n;
				row->eval = ev;
				*found = true;
				return 0;
			}
		}
	}
	return 0;
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
		gw_error be;
		if (o->backend != PLAN_BACKEND_AUTO && plan_backend_check(o->backend, g, g->unified_memory, &be)) {
			res->n_no_backend++;
			continue;
		}
		cards_row row;
		memset(&row, 0, sizeof row);
		row.gpu = g;
		int rc = price_quote_in(g, o->used, o->estimates, o->year, o->currency ? o->currency : "USD", &row.quote, err);
		if (rc)
			return rc;
		row.price_known = row.quote.known;
		row.price_estimated = row.quote.estimated;
		if (!row.price_known) { /* new: not on sale; used: no used price; or sold only in another market */
			if (row.quote.other_currency[0])
				res->n_other_market++;
			else
				res->n_no_price++;
			continue;
		}
		/* Apple and other unified-memory parts do not come in sets */
		uint32_t top = g->unified_memory ? 1 : max;
		uint32_t affordable = top;
		if (o->budget > 0) {
			double k = o->budget / row.quote.amount;
			affordable = k < 1 ? 0 : k >= top ? top : (uint32_t)k;
		}
		bool fit = false;
		if (affordable && (rc = first_fit(fn, ctx, g, 1, affordable, &row, &fit, err)))
			return rc;
		if (!fit && affordable < top) {
			/* over budget: what it would take, for "the cheapest that fits" */
			bool over = false;
			cards_row o_row = row;
			if ((rc = first_fit(fn, ctx, g, affordable + 1, top, &o_row, &over, err)))
				return rc;
			if (over) {
				res->n_over_budget++;
				o_row.price = o_row.quote.amount * o_row.count;
				o_row.power_w = (uint32_t)(g->tdp_w > 0 ? g->tdp_w : 0) * o_row.count;
				if (o_row.eval.has_speed && o_row.price > 0)
					o_row.speed_per_k = o_row.eval.speed / (o_row.price / 1000);
				caveats_for(&o_row);
				if (!o_row.price_estimated &&
				    (!res->has_cheapest_over || o_row.price < res->cheapest_over.price)) {
					res->cheapest_over = o_row;
					res->has_cheapest_over = true;
				}
				continue;
			}
		}
		if (!fit) {
			res->n_no_fit++;
			continue;
		}
		row.price = row.quote.amount * row.count;
		if (row.eval.has_speed && row.price > 0)
			row.speed_per_k = row.eval.speed / (row.price / 1000);
		row.power_w = (uint32_t)(g->tdp_w > 0 ? g->tdp_w : 0) * row.count;
		caveats_for(&row);
		res->rows = xgrow(res->rows, &cap, res->n_rows + 1, sizeof *res->rows);
		res->rows[res->n_rows++] = row;
	}
	if (o->vendor && *o->vendor && !res->n_considered)
		return gw_fail(err, GW_EINVAL, "no GPU of vendor '%s' in the catalog (e.g. NVIDIA, AMD, Intel, Apple)",
			       o->vendor);
	if (res->n_rows)
		qsort(res->rows, res->n_rows, sizeof *res->rows, cmp_rows);
	return 0;
}

static int cmp_rent(const void *a, const void *b)
{
	const cards_rent *x = a, *y = b;
	if (x->per_hour != y->per_hour)
		return x->per_hour > y->per_hour ? 1 : -1;
	if (x->eval.speed != y->eval.speed)
		return x->eval.speed < y->eval.speed ? 1 : -1;
	return strcmp(x->gpu->id, y->gpu->id);
}

int cards_rentals(const cards_opts *o, cards_eval_fn fn, void *ctx, size_t max_rows, cards_rent **rows, size_t *n,
		  gw_error *err)
{
	*rows = NULL;
	*n = 0;
	size_t cap = 0;
	uint32_t max = o->max_gpus ? o->max_gpus : 4;
	const char *cur = o->currency ? o->currency : "USD";
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *g = kb_gpu_at(i);
		if (o->vendor && *o->vendor && !str_ieq(o->vendor, g->vendor))
			continue;
		gw_error be;
		if (o->backend != PLAN_BACKEND_AUTO && plan_backend_check(o->backend, g, g->unified_memory, &be))
			continue;
		cards_rent r;
		memset(&r, 0, sizeof r);
		int rc = cost_cloud_quote_exact(g, cur, &r.quote, err);
		if (rc < 0) {
			free(*rows);
			*rows = NULL;
			return rc;
		}
		if (rc)
			continue;
		cards_row row;
		bool fit = false;
		memset(&row, 0, sizeof row);
		if ((rc = first_fit(fn, ctx, g, 1, g->unified_memory ? 1 : max, &row, &fit, err))) {
			free(*rows);
			*rows = NULL;
			return rc;
		}
		if (!fit)
			continue;
		r.gpu = g;
		r.count = row.count;
		r.eval = row.eval;
		r.per_hour = r.quote.per_h * row.count;
		*rows = xgrow(*rows, &cap, *n + 1, sizeof **rows);
		(*rows)[(*n)++] = r;
	}
	if (*n)
		qsort(*rows, *n, sizeof **rows, cmp_rent);
	if (*n > max_rows)
		*n = max_rows;
	return 0;
}

void cards_result_release(cards_result *res)
{
	free(res->rows);
	memset(res, 0, sizeof *res);
}

/*
 * cost.c: owning against renting.  The arithmetic is deliberately plain so
 * that a user can redo it by hand from the printed inputs.
 */
#include "plan/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cost_compute(const cost_input *in, cost_result *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	if (!(in->price_usd >= 0) || !isfinite(in->price_usd))
		return gw_fail(err, GW_EINVAL, "price must be zero or more");
	if (!(in->resale_pct >= 0 && in->resale_pct <= 100))
		return gw_fail(err, GW_EINVAL, "resale must be between 0 and 100 percent");
	if (!(in->years > 0 && in->years <= 50))
		return gw_fail(err, GW_EINVAL, "years must be above 0 and at most 50");
	if (!(in->power_w >= 0 && in->power_w <= 100000) || !(in->system_power_w >= 0 && in->system_power_w <= 100000))
		return gw_fail(err, GW_EINVAL, "power must be between 0 and 100000 W");
	if (!(in->kwh_usd >= 0 && in->kwh_usd <= 100))
		return gw_fail(err, GW_EINVAL, "electricity price must be between 0 and 100 per kWh");
	if (!(in->hours_per_day > 0 && in->hours_per_day <= 24))
		return gw_fail(err, GW_EINVAL, "hours per day must be above 0 and at most 24");
	if (!isfinite(in->cloud_usd_h) || in->cloud_usd_h > 10000)
		return gw_fail(err, GW_EINVAL, "cloud rate out of range");

	double months = in->years * 12.0;
	out->hours_month = in->hours_per_day * COST_DAYS_PER_MONTH;
	out->depreciation_month = in->price_usd * (1.0 - in->resale_pct / 100.0) / months;
	out->energy_hour = (in->power_w + in->system_power_w) / 1000.0 * in->kwh_usd;
	out->energy_month = out->energy_hour * out->hours_month;
	out->own_month = out->depreciation_month + out->energy_month;
	out->own_total = out->own_month * months;
	if (in->cloud_usd_h > 0) {
		out->has_rent = true;
		out->rent_month = in->cloud_usd_h * out->hours_month;
		out->rent_total = out->rent_month * months;
		/*
		 * Owning costs dep + e*h a month, renting r*h: they meet at
		 * h = dep / (r - e).  When power alone costs more than the
		 * rent, owning never catches up.
		 */
		double margin = in->cloud_usd_h - out->energy_hour;
		if (margin > 0) {
			out->has_breakeven = true;
			out->breakeven_hours_month = out->depreciation_month / margin;
			out->breakeven_hours_day = out->breakeven_hours_month / COST_DAYS_PER_MONTH;
		}
	}
	return 0;
}

/* ---- cloud price table ------------------------------------------------ */

typedef struct price_row {
	const gpu_spec *gpu;
	double usd_h;
	const char *tier, *date, *source, *provider;
} price_row;

static int cmp_row(const void *a, const void *b)
{
	double x = ((const price_row *)a)->usd_h, y = ((const price_row *)b)->usd_h;
	return (x > y) - (x < y);
}

/* Rows of tier for gpu g, sorted by price; caller frees *rows. */
static size_t rows_for(const kb_table *t, const gpu_spec *g, const char *tier, price_row **rows)
{
	long cg = kb_col(t, "gpu"), cp = kb_col(t, "usd_per_hour"), ct = kb_col(t, "tier");
	long cd = kb_col(t, "date"), cs = kb_col(t, "source"), cv = kb_col(t, "provider");
	size_t n = 0;
	*rows = xcalloc(t->nrows ? t->nrows : 1, sizeof **rows);
	for (size_t i = 0; i < t->nrows; i++) {
		double usd;
		if (strcmp(kb_cell(t, i, ct), tier) != 0)
			continue;
		if (parse_double(kb_cell(t, i, cp), &usd) || !(usd > 0))
			continue;
		const gpu_spec *rg = kb_gpu_find(kb_cell(t, i, cg));
		if (!rg || rg != g)
			continue;
		price_row *r = &(*rows)[n++];
		r->gpu = rg;
		r->usd_h = usd;
		r->tier = kb_cell(t, i, ct);
		r->date = kb_cell(t, i, cd);
		r->source = kb_cell(t, i, cs);
		r->provider = kb_cell(t, i, cv);
	}
	qsort(*rows, n, sizeof **rows, cmp_row);
	return n;
}

/* Fill q from the rows of g (median, range, newest date); false if none. */
static bool quote_for(const kb_table *t, const gpu_spec *g, cost_quote *q)
{
	static const char *const tiers[] = {"on-demand", "serverless"};
	for (size_t k = 0; k < 2; k++) {
		price_row *rows;
		size_t n = rows_for(t, g, tiers[k], &rows);
		if (n) {
			memset(q, 0, sizeof *q);
			size_t mid = n / 2;
			q->usd_h = n % 2 ? rows[mid].usd_h : (rows[mid - 1].usd_h + rows[mid].usd_h) / 2;
			q->min_usd_h = rows[0].usd_h;
			q->max_usd_h = rows[n - 1].usd_h;
			q->n_rows = n;
			q->tier = rows[mid].tier;
			q->rented = g;
			q->source = rows[mid].source;
			q->provider = rows[mid].provider;
			q->date = rows[0].date;
			for (size_t i = 1; i < n; i++)
				if (strcmp(rows[i].date, q->date) > 0)
					q->date = rows[i].date;
			free(rows);
			return true;
		}
		free(rows);
	}
	return false;
}

int cost_cloud_quote(const gpu_spec *g, cost_quote *q, gw_error *err)
{
	const kb_table *t = kb_get_table("cloud-prices", err);
	if (!t)
		return err ? err->code : GW_ENOENT;
	if (kb_col(t, "gpu") < 0 || kb_col(t, "usd_per_hour") < 0 || kb_col(t, "tier") < 0)
		return gw_fail(err, GW_EFORMAT, "table 'cloud-prices': needs columns gpu, usd_per_hour, tier");
	if (quote_for(t, g, q))
		return 0;
	/*
	 * Same class: memory from g's to twice it and bandwidth within a
	 * factor 1.5 of g's, so a 6 GB card is not compared with a 24 GB one
	 * [assumption: the band is ours]; the cheapest such rate.
	 */
	bool found = false;
	cost_quote best = {0};
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *c = kb_gpu_at(i);
		cost_quote cq;
		if (c == g || c->vram_bytes < g->vram_bytes || c->vram_bytes > 2 * g->vram_bytes ||
		    c->bandwidth_gbs < g->bandwidth_gbs / 1.5 || c->bandwidth_gbs > g->bandwidth_gbs * 1.5)
			continue;
		if (!quote_for(t, c, &cq))
			continue;
		if (!found || cq.usd_h < best.usd_h) {
			best = cq;
			found = true;
		}
	}
	if (!found)
		return gw_fail(err, GW_ENOTFOUND, "no GPU of the class of '%s' (its memory to twice it, bandwidth "
						  "within 1.5x) is rented in the cloud-prices table", g->id);
	best.substitute = true;
	*q = best;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

bool cost_resale(const gpu_spec *g, double years, int year, double *usd, double *ratio, size_t *n_cards)
{
	if (!(g->price_usd > 0) || g->year <= 0)
		return false;
	double end_age = (year - g->year) + years;
	double *r = xcalloc(kb_gpu_count() + 1, sizeof *r);
	size_t n = 0;
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *c = kb_gpu_at(i);
		price_quote q;
		if (!(c->price_usd > 0) || c->year <= 0 || fabs((year - c->year) - end_age) > 1.0)
			continue;
		if (price_quote_get(c, true, false, year, &q, NULL) || !q.known)
			continue;
		r[n++] = q.usd / c->price_usd;
	}
	bool ok = n >= 2;
	if (ok) {
		qsort(r, n, sizeof *r, cmp_double);
		*ratio = n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
		*usd = g->price_usd * *ratio;
		*n_cards = n;
	}
	free(r);
	return ok;
}

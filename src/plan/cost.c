/*
 * cost.c: owning against renting.  The arithmetic is deliberately plain so
 * that a user can redo it by hand from the printed inputs.
 */
#include "plan/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every amount of in shares in->price's currency; the first that does not is refused. */
static int same_currency(const cost_input *in, gw_error *err)
{
	const money *m[] = {&in->host_price, &in->kwh, &in->cloud_h, &in->storage_month};
	money sum;
	for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
		int rc = money_add(in->price, *m[i], &sum, err);
		if (rc)
			return rc;
	}
	return 0;
}

int cost_compute(const cost_input *in, cost_result *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	int rc = same_currency(in, err);
	if (rc)
		return rc;
	snprintf(out->cur, sizeof out->cur, "%s", in->price.cur);
	if (!(in->price.amount >= 0) || !isfinite(in->price.amount) || !(in->host_price.amount >= 0) ||
	    !isfinite(in->host_price.amount))
		return gw_fail(err, GW_EINVAL, "price must be zero or more");
	if (!(in->resale_pct >= 0 && in->resale_pct <= 100))
		return gw_fail(err, GW_EINVAL, "resale must be between 0 and 100 percent");
	if (!(in->years > 0 && in->years <= 50))
		return gw_fail(err, GW_EINVAL, "years must be above 0 and at most 50");
	if (!(in->power_w >= 0 && in->power_w <= 100000) || !(in->system_power_w >= 0 && in->system_power_w <= 100000) ||
	    !(in->idle_power_w >= 0 && in->idle_power_w <= 100000))
		return gw_fail(err, GW_EINVAL, "power must be between 0 and 100000 W");
	if (!(in->kwh.amount >= 0 && in->kwh.amount <= 10000))
		return gw_fail(err, GW_EINVAL, "electricity price must be between 0 and 10000 per kWh");
	if (!(in->hours_per_day > 0 && in->hours_per_day <= 24))
		return gw_fail(err, GW_EINVAL, "hours per day must be above 0 and at most 24");
	if (!isfinite(in->cloud_h.amount) || in->cloud_h.amount > 1e6 || !(in->storage_month.amount >= 0) ||
	    !isfinite(in->storage_month.amount))
		return gw_fail(err, GW_EINVAL, "cloud rate out of range");

	/* sums in money, so that a currency slip is an error, not a number */
	money bought, tmp;
	if ((rc = money_add(in->price, in->host_price, &bought, err)))
		return rc;
	double months = in->years * 12.0;
	out->hours_month = in->hours_per_day * COST_DAYS_PER_MONTH;
	out->depreciation_month = money_scale(bought, (1.0 - in->resale_pct / 100.0) / months).amount;
	out->energy_hour = money_scale(in->kwh, (in->power_w + in->system_power_w) / 1000.0).amount;
	out->idle_energy_month =
		money_scale(in->kwh, in->idle_power_w / 1000.0 * (24 - in->hours_per_day) * COST_DAYS_PER_MONTH).amount;
	out->energy_month = out->energy_hour * out->hours_month + out->idle_energy_month;
	out->own_month = out->depreciation_month + out->energy_month;
	out->own_total = out->own_month * months;
	if (in->cloud_h.amount > 0) {
		if ((rc = money_add(in->cloud_h, in->storage_month, &tmp, err)))
			return rc;
		out->has_rent = true;
		out->storage_month = in->storage_month.amount;
		out->rent_month = in->cloud_h.amount * out->hours_month + out->storage_month;
		out->rent_total = out->rent_month * months;
		/*
		 * Owning costs dep + idle + e*h a month, renting r*h + s: they
		 * meet at h = (dep + idle - s) / (r - e).  When power alone
		 * costs more than the rent, owning never catches up; when the
		 * fixed costs of renting exceed owning's, owning wins at any h.
		 */
		double margin = in->cloud_h.amount - out->energy_hour;
		if (margin > 0) {
			double fixed = out->depreciation_month + out->idle_energy_month - out->storage_month;
			out->has_breakeven = true;
			out->breakeven_hours_month = fixed > 0 ? fixed / margin : 0;
			out->breakeven_hours_day = out->breakeven_hours_month / COST_DAYS_PER_MONTH;
		}
	}
	return 0;
}

/* ---- cloud price table ------------------------------------------------ */

typedef struct price_row {
	const gpu_spec *gpu;
	double per_h;
	double storage;   /* per GB-month; < 0 not stated */
	const char *tier, *date, *source, *provider;
} price_row;

static int cmp_row(const void *a, const void *b)
{
	double x = ((const price_row *)a)->per_h, y = ((const price_row *)b)->per_h;
	return (x > y) - (x < y);
}

/* The columns of the cloud table (per_hour/currency, or an older copy's usd_per_hour). */
typedef struct cloud_cols {
	long g, p, c, t, d, s, v, st;
} cloud_cols;

static const char *row_cur(const kb_table *t, const cloud_cols *c, size_t i)
{
	return c->c < 0 ? "USD" : kb_cell(t, i, c->c);
}

/* Rows of tier for gpu g quoted in cur, sorted by price; caller frees *rows. */
static size_t rows_for(const kb_table *t, const cloud_cols *c, const gpu_spec *g, const char *tier, const char *cur,
		       price_row **rows)
{
	size_t n = 0;
	*rows = xcalloc(t->nrows ? t->nrows : 1, sizeof **rows);
	for (size_t i = 0; i < t->nrows; i++) {
		double v, st = -1;
		if (strcmp(kb_cell(t, i, c->t), tier) != 0 || strcmp(row_cur(t, c, i), cur) != 0)
			continue;
		if (parse_double(kb_cell(t, i, c->p), &v) || !(v > 0))
			continue;
		const gpu_spec *rg = kb_gpu_find(kb_cell(t, i, c->g));
		if (!rg || rg != g)
			continue;
		if (c->st >= 0 && *kb_cell(t, i, c->st) && (parse_double(kb_cell(t, i, c->st), &st) || st < 0))
			st = -1;
		price_row *r = &(*rows)[n++];
		r->gpu = rg;
		r->per_h = v;
		r->storage = st;
		r->tier = kb_cell(t, i, c->t);
		r->date = kb_cell(t, i, c->d);
		r->source = kb_cell(t, i, c->s);
		r->provider = kb_cell(t, i, c->v);
	}
	qsort(*rows, n, sizeof **rows, cmp_row);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The storage price of the rows compared: one figure per provider that
 * states one (the median of its rows' when it has several), and the median
 * of those figures; returns how many providers it is the median of (0: no
 * row states a price, *med = 0).  No single row stands for the others, as
 * the rate's middle row would (some providers state none).
 */
static size_t storage_median(const price_row *rows, size_t n, double *med)
{
	double *per = xcalloc(n ? n : 1, sizeof *per), *mine = xcalloc(n ? n : 1, sizeof *mine);
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = rows[j].storage >= 0 && !strcmp(rows[j].provider, rows[i].provider);
		if (seen || rows[i].storage < 0)
			continue;
		size_t nm = 0;
		for (size_t j = i; j < n; j++)
			if (rows[j].storage >= 0 && !strcmp(rows[j].provider, rows[i].provider))
				mine[nm++] = rows[j].storage;
		per[np++] = median_of(mine, nm);
	}
	*med = np ? median_of(per, np) : 0;
	free(per);
	free(mine);
	return np;
}

/* Fill q from the rows of g quoted in cur (median, range, newest date, spot range); false if none. */
static bool quote_in(const kb_table *t, const cloud_cols *c, const gpu_spec *g, const char *cur, cost_quote *q)
{
	static const char *const tiers[] = {"on-demand", "serverless"};
	for (size_t k = 0; k < 2; k++) {
		price_row *rows;
		size_t n = rows_for(t, c, g, tiers[k], cur, &rows);
		if (n) {
			memset(q, 0, sizeof *q);
			size_t mid = n / 2;
			q->per_h = n % 2 ? rows[mid].per_h : (rows[mid - 1].per_h + rows[mid].per_h) / 2;
			q->min_h = rows[0].per_h;
			q->max_h = rows[n - 1].per_h;
			q->n_rows = n;
			q->tier = rows[mid].tier;
			q->rented = g;
			q->source = rows[mid].source;
			q->provider = rows[mid].provider;
			q->n_storage = storage_median(rows, n, &q->storage_gb_month);
			q->storage_known = q->n_storage > 0;
			snprintf(q->cur, sizeof q->cur, "%s", cur);
			snprintf(q->row_cur, sizeof q->row_cur, "%s", cur);
			q->date = rows[0].date;
			for (size_t i = 0; i < n && i < COST_MAX_OFFERS; i++)
				q->offers[q->n_offers++] = (struct cost_offer){rows[i].provider, rows[i].date, rows[i].per_h};
			for (size_t i = 1; i < n; i++)
				if (strcmp(rows[i].date, q->date) > 0)
					q->date = rows[i].date;
			free(rows);
			price_row *spot;
			size_t ns = rows_for(t, c, g, "spot", cur, &spot);
			q->n_spot = ns;
			if (ns) {
				q->spot_min_h = spot[0].per_h;
				q->spot_max_h = spot[ns - 1].per_h;
			}
			free(spot);
			return true;
		}
		free(rows);
	}
	return false;
}

/* g's quote in cur, else its USD quote converted at the dated rate; 0 found, 1 none, <0 error. */
static int quote_for(const kb_table *t, const cloud_cols *c, const gpu_spec *g, const char *cur, cost_quote *q,
		     gw_error *err)
{
	if (quote_in(t, c, g, cur, q))
		return 0;
	if (!strcmp(cur, "USD") || !quote_in(t, c, g, "USD", q))
		return 1;
	money m;
	int rc = money_convert(money_of(q->per_h, "USD"), cur, &m, &q->fx, err);
	if (rc)
		return rc;
	q->per_h = m.amount;
	q->min_h *= q->fx.rate;
	q->max_h *= q->fx.rate;
	q->spot_min_h *= q->fx.rate;
	q->spot_max_h *= q->fx.rate;
	q->storage_gb_month *= q->fx.rate;
	q->converted = true;
	snprintf(q->cur, sizeof q->cur, "%s", cur);
	return 0;
}

static const kb_table *cloud_table(cloud_cols *c, gw_error *err)
{
	const kb_table *t = kb_get_table("cloud-prices", err);
	if (!t)
		return NULL;
	*c = (cloud_cols){kb_col(t, "gpu"), kb_col(t, "per_hour"), kb_col(t, "currency"), kb_col(t, "tier"),
			  kb_col(t, "date"), kb_col(t, "source"), kb_col(t, "provider"), kb_col(t, "storage_gb_month")};
	if (c->p < 0 && c->c < 0)
		c->p = kb_col(t, "usd_per_hour");
	if (c->g < 0 || c->p < 0 || c->t < 0) {
		gw_fail(err, GW_EFORMAT, "table 'cloud-prices': needs columns gpu, per_hour, currency, tier");
		return NULL;
	}
	return t;
}

int cost_cloud_quote_exact(const gpu_spec *g, const char *cur, cost_quote *q, gw_error *err)
{
	cloud_cols c;
	const kb_table *t = cloud_table(&c, err);
	if (!t)
		return err && err->code ? err->code : GW_EFORMAT;
	return quote_for(t, &c, g, cur, q, err);
}

int cost_cloud_quote(const gpu_spec *g, const char *cur, cost_quote *q, gw_error *err)
{
	cloud_cols c;
	const kb_table *t = cloud_table(&c, err);
	if (!t)
		return err && err->code ? err->code : GW_EFORMAT;
	int rc = quote_for(t, &c, g, cur, q, err);
	if (rc <= 0)
		return rc;
	/*
	 * A different card: memory from g's to twice it and bandwidth within
	 * a factor 1.5 of g's, so a 6 GB card is not compared with a 24 GB
	 * one [assumption: the band is ours]; the cheapest such rate.
	 */
	bool found = false;
	cost_quote best = {0};
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *o = kb_gpu_at(i);
		cost_quote cq;
		if (o == g || o->vram_bytes < g->vram_bytes || o->vram_bytes > 2 * g->vram_bytes ||
		    o->bandwidth_gbs < g->bandwidth_gbs / 1.5 || o->bandwidth_gbs > g->bandwidth_gbs * 1.5)
			continue;
		if ((rc = quote_for(t, &c, o, cur, &cq, err)) < 0)
			return rc;
		if (rc)
			continue;
		if (!found || cq.per_h < best.per_h) {
			best = cq;
			found = true;
		}
	}
	if (!found)
		return gw_fail(err, GW_ENOTFOUND, "'%s' is not rented in the cloud-prices table, nor any card near it (its "
						  "memory to twice it, bandwidth within 1.5x)", g->id);
	best.substitute = true;
	*q = best;
	return 0;
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
		r[n++] = q.amount / c->price_usd;
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

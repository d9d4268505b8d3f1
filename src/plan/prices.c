/*
 * prices.c: dated new and used prices, combined per GPU into a median
 * (for used prices, of the rows in the card's newest three months).
 */
#include "plan/prices.h"

#include <stdlib.h>
#include <string.h>

typedef struct prow {
	double amount;
	const char *date, *source, *kind;
	long month; /* price_month_index of date; -1 unreadable */
} prow;

static int cmp_prow(const void *a, const void *b)
{
	double x = ((const prow *)a)->amount, y = ((const prow *)b)->amount;
	return (x > y) - (x < y);
}

long price_month_index(const char *date)
{
	long long y, m = 1;
	char buf[8];
	if (!date || strlen(date) < 4)
		return -1;
	memcpy(buf, date, 4);
	buf[4] = 0;
	if (parse_int(buf, 1990, 2100, &y))
		return -1;
	if (date[4] == '-' && date[5] && date[6]) {
		buf[0] = date[5];
		buf[1] = date[6];
		buf[2] = 0;
		if (parse_int(buf, 1, 12, &m))
			return -1;
	}
	return (long)y * 12 + (long)(m - 1);
}

int price_age_months(const char *date, int year, int month)
{
	long at = price_month_index(date);
	if (at < 0)
		return -1;
	long age = ((long)year * 12 + (month - 1)) - at;
	return age < 0 ? 0 : (int)age;
}

/*
 * The used-price estimate from the launch price and age: 75% under two
 * years, 55% at two to three, 35% from four [assumption; the table's RTX
 * 3060 (215-225 of 329 USD at five years) and RTX 3070 (145 of 499) rows
 * bracket it].  Only ever shown as an estimate.
 */
static bool estimate_used(const gpu_spec *g, int year, price_quote *q)
{
	if (!(g->price_usd > 0) || g->year <= 0)
		return false;
	int age = year - g->year;
	q->amount = q->min_amount = q->max_amount = q->row_amount =
		g->price_usd * (age < 2 ? 0.75 : age < 4 ? 0.55 : 0.35);
	snprintf(q->currency, sizeof q->currency, "USD");
	snprintf(q->row_currency, sizeof q->row_currency, "USD");
	q->known = q->estimated = true;
	q->source = "estimate: launch price x 75%/55%/35% by age [assumption]";
	q->kind = "estimate";
	return true;
}

/* The GPU each row of a price table names, resolved once per table (the
 * advice quotes dozens of cards, each over every row: resolving names
 * each time was most of a plan's run time). */
static const gpu_spec *const *row_gpus(const kb_table *t, long cg)
{
	static struct {
		const kb_table *t;
		const gpu_spec *base;
		size_t nrows;
		const gpu_spec **g;
	} cache[2];
	const gpu_spec *base = kb_gpu_at(0);
	for (size_t k = 0; k < 2; k++)
		if (cache[k].t == t && cache[k].nrows == t->nrows && cache[k].base == base && cache[k].g)
			return cache[k].g;
	size_t k = cache[0].t && cache[0].t != t ? 1 : 0;
	free(cache[k].g);
	cache[k].g = xcalloc(t->nrows ? t->nrows : 1, sizeof *cache[k].g);
	for (size_t i = 0; i < t->nrows; i++)
		cache[k].g[i] = kb_gpu_find(kb_cell(t, i, cg));
	cache[k].t = t;
	cache[k].base = base;
	cache[k].nrows = t->nrows;
	return cache[k].g;
}

/*
 * The currency column of a price table, or -1 for a table without one
 * (an older --data-dir copy with a `usd` column: all its rows are USD).
 */
static const char *row_currency(const kb_table *t, long cc, size_t i)
{
	return cc < 0 ? "USD" : kb_cell(t, i, cc);
}

/* Is row date a newer than b?  By month; within one month a day date
 * (2026-06-29) is newer than the month alone, which is newer than a bare
 * year of that January. */
static bool newer(const prow *a, const prow *b)
{
	return a->month != b->month ? a->month > b->month : strcmp(a->date, b->date) > 0;
}

/*
 * Median, range, newest date of the rows of g quoted in cur into q; the
 * row count.  window > 0: only the rows dated in the `window` months that
 * end with the newest row's month (a bare year counting as its January);
 * the others stay on record (q->n_on_record) but are not used.
 */
static size_t median_in(const kb_table *t, const gpu_spec *const *rg, const gpu_spec *g, long cp, long cc, long cd,
			long cs, long ck, const char *cur, int window, price_quote *q)
{
	prow *rows = xcalloc(t->nrows ? t->nrows : 1, sizeof *rows);
	size_t n = 0, newest = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		double v;
		if (rg[i] != g || strcmp(row_currency(t, cc, i), cur) || parse_double(kb_cell(t, i, cp), &v))
			continue;
		const char *d = kb_cell(t, i, cd);
		rows[n] = (prow){v, d, kb_cell(t, i, cs), kb_cell(t, i, ck), price_month_index(d)};
		if (n && newer(&rows[n], &rows[newest]))
			newest = n;
		n++;
	}
	size_t all = n;
	const char *newest_date = n ? rows[newest].date : NULL;
	if (n && window > 0) {
		/* keep the window; with no readable date at all, every row */
		long last = rows[newest].month;
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (last < 0 || (rows[i].month >= 0 && last - rows[i].month < window))
				rows[k++] = rows[i];
		n = k;
	}
	if (n) {
		qsort(rows, n, sizeof *rows, cmp_prow);
		size_t mid = n / 2;
		q->known = true;
		q->amount = q->row_amount = n % 2 ? rows[mid].amount : (rows[mid - 1].amount + rows[mid].amount) / 2;
		q->min_amount = rows[0].amount;
		q->max_amount = rows[n - 1].amount;
		q->n_rows = n;
		q->n_on_record = all;
		q->source = rows[mid].source;
		q->kind = rows[mid].kind;
		snprintf(q->currency, sizeof q->currency, "%s", cur);
		snprintf(q->row_currency, sizeof q->row_currency, "%s", cur);
		snprintf(q->date, sizeof q->date, "%s", newest_date);
		q->date_from[0] = 0;
		if (window > 0) {
			const prow *o = &rows[0];
			for (size_t i = 1; i < n; i++)
				if (newer(o, &rows[i]))
					o = &rows[i];
			snprintf(q->date_from, sizeof q->date_from, "%s", o->date);
		}
	}
	free(rows);
	return n;
}

/* Convert q's amounts (quoted in q->row_currency) to cur at one dated rate. */
static int convert_quote(price_quote *q, const char *cur, gw_error *err)
{
	money m;
	int rc = money_convert(money_of(q->row_amount, q->row_currency), cur, &m, &q->fx, err);
	if (rc)
		return rc;
	q->amount = m.amount;
	q->min_amount *= q->fx.rate;
	q->max_amount *= q->fx.rate;
	snprintf(q->currency, sizeof q->currency, "%s", cur);
	q->converted = strcmp(cur, q->row_currency) != 0;
	return 0;
}

int price_quote_in(const gpu_spec *g, bool used, bool estimate, int year, const char *cur, price_quote *q,
		   gw_error *err)
{
	memset(q, 0, sizeof *q);
	const char *name = used ? "used-prices" : "new-prices";
	const kb_table *t = kb_get_table(name, err);
	if (!t)
		return err ? err->code : GW_ENOENT;
	long cg = kb_col(t, "gpu"), cp = kb_col(t, "price"), cc = kb_col(t, "currency"), cd = kb_col(t, "date");
	long cs = kb_col(t, "source"), ck = kb_col(t, "kind");
	const char *pcol = "price";
	if (cp < 0 && cc < 0 && (cp = kb_col(t, "usd")) >= 0)
		pcol = "usd";
	if (cg < 0 || cp < 0 || cd < 0)
		return gw_fail(err, GW_EFORMAT, "table '%s': needs columns gpu, price, currency, date, source", name);
	const gpu_spec *const *rg = row_gpus(t, cg);
	const char *other = NULL;
	for (size_t i = 0; i < t->nrows; i++) {
		double v;
		const char *rc = row_currency(t, cc, i);
		if (parse_double(kb_cell(t, i, cp), &v) || !(v > 0))
			return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column '%s': '%s' is not a price", name,
				       t->lines[i], pcol, kb_cell(t, i, cp));
		if (!money_currency_ok(rc))
			return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column 'currency': '%s' is not a currency code",
				       name, t->lines[i], rc);
		if (rg[i] == g && (!other || !strcmp(rc, "USD")))
			other = rc;
	}
	const char *want = cur ? cur : other ? other : "USD";
	int window = used ? PRICE_USED_WINDOW_MONTHS : 0;
	if (median_in(t, rg, g, cp, cc, cd, cs, ck, want, window, q))
		return 0;
	if (strcmp(want, "USD") && median_in(t, rg, g, cp, cc, cd, cs, ck, "USD", window, q))
		return convert_quote(q, want, err);
	if (used && estimate && estimate_used(g, year, q))
		return strcmp(want, "USD") ? convert_quote(q, want, err) : 0;
	if (other)
		snprintf(q->other_currency, sizeof q->other_currency, "%s", other);
	return 0;
}

int price_quote_get(const gpu_spec *g, bool used, bool estimate, int year, price_quote *q, gw_error *err)
{
	return price_quote_in(g, used, estimate, year, "USD", q, err);
}

bool price_market_note(const gpu_spec *g, const char *cur, const char *status, market_note *m)
{
	const kb_table *t = kb_get_table("markets", NULL);
	if (!t || !g)
		return false;
	long cg = kb_col(t, "gpu"), cm = kb_col(t, "market"), cs = kb_col(t, "status"), ci = kb_col(t, "instead");
	long cn = kb_col(t, "note"), cr = kb_col(t, "source");
	if (cg < 0 || cm < 0 || cs < 0)
		return false;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < t->nrows; i++) {
			const char *mk = kb_cell(t, i, cm);
			if (pass == 0 ? !(cur && !strcmp(mk, cur)) : strcmp(mk, "*"))
				continue;
			if (status && strcmp(kb_cell(t, i, cs), status))
				continue;
			if (kb_gpu_find(kb_cell(t, i, cg)) != g)
				continue;
			m->market = mk;
			m->status = kb_cell(t, i, cs);
			m->instead = ci >= 0 && *kb_cell(t, i, ci) ? kb_gpu_find(kb_cell(t, i, ci)) : NULL;
			m->note = cn >= 0 ? kb_cell(t, i, cn) : "";
			m->source = cr >= 0 ? kb_cell(t, i, cr) : "";
			return true;
		}
	return false;
}

const char *price_market_name(const char *cur)
{
	if (cur && !strcmp(cur, "CNY"))
		return _("China");
	if (cur && !strcmp(cur, "USD"))
		return _("the United States");
	return cur ? cur : "";
}

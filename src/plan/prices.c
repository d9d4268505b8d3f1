/*
 * prices.c: dated new and used prices, combined per GPU into a median.
 */
#include "plan/prices.h"

#include <stdlib.h>
#include <string.h>

typedef struct prow {
	double usd;
	const char *date, *source, *kind;
} prow;

static int cmp_prow(const void *a, const void *b)
{
	double x = ((const prow *)a)->usd, y = ((const prow *)b)->usd;
	return (x > y) - (x < y);
}

int price_age_months(const char *date, int year, int month)
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
	int age = (year - (int)y) * 12 + (month - (int)m);
	return age < 0 ? 0 : age;
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
	q->usd = q->min_usd = q->max_usd = g->price_usd * (age < 2 ? 0.75 : age < 4 ? 0.55 : 0.35);
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

int price_quote_get(const gpu_spec *g, bool used, bool estimate, int year, price_quote *q, gw_error *err)
{
	memset(q, 0, sizeof *q);
	const char *name = used ? "used-prices" : "new-prices";
	const kb_table *t = kb_get_table(name, err);
	if (!t)
		return err ? err->code : GW_ENOENT;
	long cg = kb_col(t, "gpu"), cu = kb_col(t, "usd"), cd = kb_col(t, "date");
	long cs = kb_col(t, "source"), ck = kb_col(t, "kind");
	if (cg < 0 || cu < 0 || cd < 0)
		return gw_fail(err, GW_EFORMAT, "table '%s': needs columns gpu, usd, date, source", name);
	prow *rows = xcalloc(t->nrows ? t->nrows : 1, sizeof *rows);
	const gpu_spec *const *rg = row_gpus(t, cg);
	size_t n = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		double v;
		if (parse_double(kb_cell(t, i, cu), &v) || !(v > 0)) {
			int rc = gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column 'usd': '%s' is not a price",
					 name, t->lines[i], kb_cell(t, i, cu));
			free(rows);
			return rc;
		}
		if (rg[i] != g)
			continue;
		rows[n++] = (prow){v, kb_cell(t, i, cd), kb_cell(t, i, cs), kb_cell(t, i, ck)};
	}
	if (n) {
		qsort(rows, n, sizeof *rows, cmp_prow);
		size_t mid = n / 2;
		q->known = true;
		q->usd = n % 2 ? rows[mid].usd : (rows[mid - 1].usd + rows[mid].usd) / 2;
		q->min_usd = rows[0].usd;
		q->max_usd = rows[n - 1].usd;
		q->n_rows = n;
		q->source = rows[mid].source;
		q->kind = rows[mid].kind;
		const char *newest = rows[0].date;
		for (size_t i = 1; i < n; i++)
			if (strcmp(rows[i].date, newest) > 0)
				newest = rows[i].date;
		snprintf(q->date, sizeof q->date, "%s", newest);
	} else if (used && estimate) {
		estimate_used(g, year, q);
	}
	free(rows);
	return 0;
}

/*
 * money.c: amounts with their currency, and the dated conversions.
 */
#include "plan/money.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kb/kb.h"

bool money_currency_ok(const char *cur)
{
	if (!cur || strlen(cur) != 3)
		return false;
	for (int i = 0; i < 3; i++)
		if (!isupper((unsigned char)cur[i]))
			return false;
	return true;
}

money money_of(double amount, const char *cur)
{
	money m = {amount, "???"};
	if (money_currency_ok(cur))
		memcpy(m.cur, cur, 4);
	return m;
}

bool money_same(money a, money b)
{
	return strcmp(a.cur, b.cur) == 0 && money_currency_ok(a.cur);
}

static int mix_refused(const char *verb, money a, money b, gw_error *err)
{
	return gw_fail(err, GW_EINVAL,
		       "cannot %s %.2f %s %s %.2f %s: different currencies (convert one through data/fx-rates.tsv first)",
		       verb, b.amount, b.cur, strcmp(verb, "add") ? "from" : "to", a.amount, a.cur);
}

int money_add(money a, money b, money *out, gw_error *err)
{
	if (!money_same(a, b))
		return mix_refused("add", a, b, err);
	*out = money_of(a.amount + b.amount, a.cur);
	return 0;
}

int money_sub(money a, money b, money *out, gw_error *err)
{
	if (!money_same(a, b))
		return mix_refused("subtract", a, b, err);
	*out = money_of(a.amount - b.amount, a.cur);
	return 0;
}

money money_scale(money a, double k)
{
	a.amount *= k;
	return a;
}

/* The newest row from->to of t; -1 when none. */
static long newest_pair(const kb_table *t, const char *from, const char *to)
{
	long cf = kb_col(t, "from"), ct = kb_col(t, "to"), cd = kb_col(t, "date");
	long best = -1;
	for (size_t i = 0; i < t->nrows; i++) {
		if (strcmp(kb_cell(t, i, cf), from) || strcmp(kb_cell(t, i, ct), to))
			continue;
		if (best < 0 || strcmp(kb_cell(t, i, cd), kb_cell(t, (size_t)best, cd)) > 0)
			best = (long)i;
	}
	return best;
}

/* Row r's rate as a positive number, or an error naming the cell. */
static int row_rate(const kb_table *t, long r, double *rate, gw_error *err)
{
	const char *s = kb_cell(t, (size_t)r, kb_col(t, "rate"));
	if (parse_double(s, rate) || !(*rate > 0) || !isfinite(*rate))
		return gw_fail(err, GW_EFORMAT, "table 'fx-rates' line %zu, column 'rate': '%s' is not a rate",
			       t->lines[r], s);
	return 0;
}

int money_convert(money m, const char *to, money *out, fx_rate *fx, gw_error *err)
{
	memset(fx, 0, sizeof *fx);
	snprintf(fx->from, sizeof fx->from, "%s", m.cur);
	snprintf(fx->to, sizeof fx->to, "%s", to);
	if (!strcmp(m.cur, to)) {
		fx->rate = 1;
		fx->source = "same currency";
		*out = m;
		return 0;
	}
	const kb_table *t = kb_get_table("fx-rates", err);
	if (!t)
		return err ? err->code : GW_ENOENT;
	if (kb_col(t, "from") < 0 || kb_col(t, "to") < 0 || kb_col(t, "rate") < 0 || kb_col(t, "date") < 0)
		return gw_fail(err, GW_EFORMAT, "table 'fx-rates': needs columns from, to, rate, date, source");
	long cd = kb_col(t, "date"), cs = kb_col(t, "source");
	double rate;
	int rc;
	long r = newest_pair(t, m.cur, to);
	long inv = newest_pair(t, to, m.cur);
	if (r >= 0 || inv >= 0) {
		bool use_inv = r < 0 || (inv >= 0 && strcmp(kb_cell(t, (size_t)inv, cd), kb_cell(t, (size_t)r, cd)) > 0);
		long row = use_inv ? inv : r;
		if ((rc = row_rate(t, row, &rate, err)))
			return rc;
		fx->rate = use_inv ? 1 / rate : rate;
		snprintf(fx->date, sizeof fx->date, "%s", kb_cell(t, (size_t)row, cd));
		fx->source = kb_cell(t, (size_t)row, cs);
	} else {
		/* through EUR, both legs of one date (the ECB publishes EUR rates only) */
		long a = strcmp(m.cur, "EUR") ? newest_pair(t, "EUR", m.cur) : -1;
		long b = strcmp(to, "EUR") ? newest_pair(t, "EUR", to) : -1;
		if (a < 0 || b < 0 || strcmp(kb_cell(t, (size_t)a, cd), kb_cell(t, (size_t)b, cd)))
			return gw_fail(err, GW_ENOTFOUND, "no exchange rate from %s to %s in data/fx-rates.tsv", m.cur, to);
		double ra, rb;
		if ((rc = row_rate(t, a, &ra, err)) || (rc = row_rate(t, b, &rb, err)))
			return rc;
		fx->rate = rb / ra;
		fx->via_eur = true;
		snprintf(fx->date, sizeof fx->date, "%s", kb_cell(t, (size_t)a, cd));
		fx->source = kb_cell(t, (size_t)a, cs);
	}
	*out = money_of(m.amount * fx->rate, to);
	return 0;
}

int money_region_power(const char *region, region_power *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	const kb_table *t = kb_get_table("electricity", err);
	if (!t)
		return err ? err->code : GW_ENOENT;
	long cr = kb_col(t, "region"), cn = kb_col(t, "name"), cp = kb_col(t, "price"), cc = kb_col(t, "currency");
	long cd = kb_col(t, "date"), cs = kb_col(t, "source");
	if (cr < 0 || cp < 0 || cc < 0)
		return gw_fail(err, GW_EFORMAT, "table 'electricity': needs columns region, price, currency");
	char known[256] = "";
	for (size_t i = 0; i < t->nrows; i++) {
		if (strlen(known) + 8 < sizeof known) {
			if (*known)
				strcat(known, ", ");
			strncat(known, kb_cell(t, i, cr), 4);
		}
		if (strcasecmp(kb_cell(t, i, cr), region))
			continue;
		double v;
		const char *cur = kb_cell(t, i, cc);
		if (parse_double(kb_cell(t, i, cp), &v) || !(v >= 0) || v > 100 || !money_currency_ok(cur))
			return gw_fail(err, GW_EFORMAT, "table 'electricity' line %zu: '%s %s' is not a price per kWh",
				       t->lines[i], kb_cell(t, i, cp), cur);
		out->region = kb_cell(t, i, cr);
		out->name = kb_cell(t, i, cn);
		out->date = kb_cell(t, i, cd);
		out->source = kb_cell(t, i, cs);
		out->kwh = money_of(v, cur);
		return 0;
	}
	return gw_fail(err, GW_ENOTFOUND, "unknown region '%s' (known: %s)", region, known);
}

const char *money_region_currency(const char *region)
{
	static region_power p;
	if (!region || money_region_power(region, &p, NULL))
		return NULL;
	return p.kwh.cur;
}

const char *money_currency_region(const char *cur)
{
	const kb_table *t = kb_get_table("electricity", NULL);
	if (!t || !cur)
		return NULL;
	long cr = kb_col(t, "region"), cc = kb_col(t, "currency");
	for (size_t i = 0; i < t->nrows; i++)
		if (!strcmp(kb_cell(t, i, cc), cur))
			return kb_cell(t, i, cr);
	return NULL;
}

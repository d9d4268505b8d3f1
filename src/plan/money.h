/*
 * money: an amount that carries its currency, so that sums of different
 * currencies cannot be formed by accident.  Conversion goes only through
 * the dated exchange-rate table (data/fx-rates.tsv) and reports the rate,
 * its date and its source; region electricity prices come from
 * data/electricity.tsv.  Pure; nothing here prints.
 */
#ifndef GW_PLAN_MONEY_H
#define GW_PLAN_MONEY_H

#include <stdbool.h>

#include "util/util.h"

typedef struct money {
	double amount;
	char cur[4]; /* ISO 4217 code, "USD" */
} money;

/* The amount in currency cur (upper case, 3 letters; anything else gives "???"). */
money money_of(double amount, const char *cur);
/* 3 letters A-Z. */
bool money_currency_ok(const char *cur);
bool money_same(money a, money b);

/*
 * a + b, a - b: GW_EINVAL with err "cannot add 10.00 USD to 100.00 CNY:
 * different currencies (convert one through data/fx-rates.tsv first)"
 * when the currencies differ; *out untouched then.
 */
int money_add(money a, money b, money *out, gw_error *err);
int money_sub(money a, money b, money *out, gw_error *err);
money money_scale(money a, double k);

/* The rate used for one conversion. */
typedef struct fx_rate {
	char from[4], to[4];
	double rate;          /* 1 from = rate to */
	char date[16];        /* the rate's date (the older one when crossed through EUR) */
	const char *source;   /* kb-owned */
	bool via_eur;         /* crossed through two EUR rows of the same date */
} fx_rate;

/*
 * m in currency `to`: the newest row from->to, else to->from inverted,
 * else both through EUR rows of one date.  *fx says which (rate 1 and
 * source "same currency" when no conversion was needed).  GW_ENOTFOUND
 * (err names the pair) when the table has no way; a table error else.
 */
int money_convert(money m, const char *to, money *out, fx_rate *fx, gw_error *err);

/* A region's household electricity price (data/electricity.tsv). */
typedef struct region_power {
	const char *region, *name, *date, *source; /* kb-owned */
	money kwh;
} region_power;

/*
 * The row of region (case-insensitive); GW_ENOTFOUND with err listing the
 * known regions when there is none; a table error else.
 */
int money_region_power(const char *region, region_power *out, gw_error *err);
/* The currency of a region's row, NULL when unknown. */
const char *money_region_currency(const char *region);
/* The region whose currency is cur (first row), NULL when none. */
const char *money_currency_region(const char *cur);

#endif

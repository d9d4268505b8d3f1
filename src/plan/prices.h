/*
 * prices: what a card costs today, new or used, from the dated price
 * tables (data/new-prices.tsv, data/used-prices.tsv).  A launch price is
 * never presented as a current price; a used price estimated from the
 * launch price and the card's age exists only when the caller asks for
 * one, and says so.  Pure; nothing here prints.
 */
#ifndef GW_PLAN_PRICES_H
#define GW_PLAN_PRICES_H

#include <stdbool.h>
#include <stddef.h>

#include "kb/kb.h"
#include "util/util.h"

/* Prices older than this many months are called stale. */
#define PRICE_STALE_MONTHS 6

typedef struct price_quote {
	bool known;
	bool estimated;        /* used price from launch price and age (no row) */
	double usd;            /* median of the rows, or the estimate */
	double min_usd, max_usd;
	size_t n_rows;
	char date[16];         /* newest row date (YYYY, YYYY-MM or YYYY-MM-DD); "" estimated */
	const char *source;    /* source of the row nearest the median; kb-owned */
	const char *kind;      /* its kind column ("retail", "listings" ...) */
} price_quote;

/*
 * The price of one g today.  used: the used table, else (when estimate)
 * 75%/55%/35% of the launch price by age [assumption] as an estimate.
 * New: the new table only.  Returns 0 (q->known false when none), or a
 * table error.  year: this year, for the age of an estimate.
 */
int price_quote_get(const gpu_spec *g, bool used, bool estimate, int year, price_quote *q, gw_error *err);

/*
 * Months from a table date ("2026", "2026-05", "2026-05-07"; a year alone
 * counts as its January) to year/month; -1 when the date is unreadable.
 */
int price_age_months(const char *date, int year, int month);

#endif

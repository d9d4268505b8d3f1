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
#include "plan/money.h"
#include "util/util.h"

/* Prices older than this many months are called stale. */
#define PRICE_STALE_MONTHS 6

/*
 * A used price is the median of the card's rows dated in the three months
 * that end with its newest row's month (newest 2026-09: 2026-07 to 2026-09);
 * older rows stay in the table as the record but are not used, so a card
 * priced in autumn is not compared with one priced on spring rows.  A date
 * of a year alone ("2026") counts as its January, the earliest it can be.
 * New prices (retail rows) are the median of every row.
 */
#define PRICE_USED_WINDOW_MONTHS 3

typedef struct price_quote {
	bool known;
	bool estimated;        /* used price from launch price and age (no row) */
	double amount;         /* median of the rows, or the estimate, in `currency` */
	double min_amount, max_amount;
	char currency[4];      /* currency of amount/min/max */
	bool converted;        /* the rows were quoted in row_currency and converted at fx */
	char row_currency[4];  /* the currency the rows were quoted in (all rows of one median share it) */
	double row_amount;     /* the median as quoted, before any conversion */
	fx_rate fx;            /* the rate used when converted */
	char other_currency[4]; /* !known: a currency in which the table does have rows for g ("" none) */
	size_t n_rows;         /* rows the median is taken over (used: those in the window) */
	size_t n_on_record;    /* rows of g in that currency, in the window or not */
	char date[16];         /* newest row date (YYYY, YYYY-MM or YYYY-MM-DD); "" estimated */
	char date_from[16];    /* used: oldest row date in the window; "" for new prices or estimated */
	const char *source;    /* source of the row nearest the median; kb-owned */
	const char *kind;      /* its kind column ("retail", "listings" ...) */
} price_quote;

/*
 * The price of one g today, in currency cur (the buyer's market).  Rows
 * quoted in cur are used; when g has none and cur is not USD, its USD rows
 * (the reference market) converted at the dated rate of data/fx-rates.tsv
 * (q->converted, q->fx); never another local market's rows (a CNY-only
 * China card has no USD price).  cur NULL: the rows as quoted (USD when g
 * has USD rows, else the currency it has rows in).  used: the used table,
 * else (when estimate) 75%/55%/35% of the USD launch price by age
 * [assumption] as an estimate; a used median is taken over the rows of
 * PRICE_USED_WINDOW_MONTHS.  New: the new table only.  Every median is
 * taken over rows of one currency.  Returns 0 (q->known false when none),
 * or a table error.  year: this year, for the age of an estimate.
 */
int price_quote_in(const gpu_spec *g, bool used, bool estimate, int year, const char *cur, price_quote *q,
		   gw_error *err);
/* price_quote_in in USD. */
int price_quote_get(const gpu_spec *g, bool used, bool estimate, int year, price_quote *q, gw_error *err);

/*
 * Months from a table date ("2026", "2026-05", "2026-05-07"; a year alone
 * counts as its January) to year/month; -1 when the date is unreadable.
 */
int price_age_months(const char *date, int year, int month);
/* A table date as a month count (year * 12 + month - 1; a year alone is its
 * January); -1 when unreadable. */
long price_month_index(const char *date);

/*
 * What data/markets.tsv says of g in the market of currency cur (rows of
 * that market, then of every market "*"): status "not-sold-new" (not sold
 * new there through the maker's channels; instead: the card sold in its
 * place) or "modified" (a third-party board; note: what a buyer must
 * know).  Returns true and fills m when g has a row; false when none (or
 * the table is missing: an older --data-dir copy).
 */
typedef struct market_note {
	const char *market;     /* "CNY", "*" ... */
	const char *status;     /* "not-sold-new", "modified" */
	const gpu_spec *instead; /* NULL when the row names none */
	const char *note, *source; /* kb-owned; note untranslated */
} market_note;
bool price_market_note(const gpu_spec *g, const char *cur, const char *status, market_note *m);
/* The market of currency cur in words ("China" for CNY), translated; cur itself when unknown. */
const char *price_market_name(const char *cur);

#endif

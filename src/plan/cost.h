/*
 * cost: owning a GPU against renting the same class of GPU by the hour.
 * Pure arithmetic plus one lookup in the cloud price table
 * (data/cloud-prices.tsv); nothing here prints.
 */
#ifndef GW_PLAN_COST_H
#define GW_PLAN_COST_H

#include <stdbool.h>
#include <stddef.h>

#include "kb/kb.h"
#include "plan/money.h"
#include "plan/prices.h"
#include "util/util.h"

/* Days in an average month (365.25 / 12), used for every monthly figure. */
#define COST_DAYS_PER_MONTH 30.4375

/*
 * Default assumptions, each stated in --help and the man page:
 * - electricity 0.17 USD/kWh: U.S. residential average, EIA Electric Power
 *   Monthly table 5.6.A (April 2025 state figures 12-32 cents; national
 *   average about 17 cents) [derived];
 * - 8 hours a day of GPU work, 3 years of ownership: assumptions;
 * - resale 40% of the purchase price after those 3 years: assumption, in
 *   line with used RTX 3090 (about half of its 1499 USD launch price four
 *   years on) and GTX 1080 Ti prices [unconfirmed];
 * - rest of the system 0 W unless --system-power says otherwise: the
 *   comparison is GPU against GPU, as a rented GPU comes with its host.
 */
#define COST_DEFAULT_KWH_USD 0.17
#define COST_DEFAULT_HOURS_PER_DAY 8.0
#define COST_DEFAULT_YEARS 3.0
#define COST_DEFAULT_RESALE_PCT 40.0
/* Storage kept with a rented machine between sessions [assumption: a model and an environment]. */
#define COST_DEFAULT_STORAGE_GB 50.0

/*
 * Every amount carries its currency; cost_compute refuses inputs whose
 * currencies differ (GW_EINVAL, the message names both), so an answer
 * never mixes them: convert first (money_convert) and say so.
 */
typedef struct cost_input {
	money price;            /* purchase price of the card(s) */
	money host_price;       /* the host PC bought for it (0: not counted) */
	double resale_pct;      /* share of the price recovered at the end, 0..100 */
	double years;           /* ownership period */
	double power_w;         /* GPU board power while working */
	double system_power_w;  /* share of the rest of the machine while working */
	double idle_power_w;    /* the whole machine while not working (the other hours of the day) */
	money kwh;              /* electricity price per kWh */
	double hours_per_day;   /* hours of GPU work a day */
	money cloud_h;          /* rent per hour for the GPU; amount <= 0 unknown */
	money storage_month;    /* storage kept with the rented machine, per month (0: none or included) */
} cost_input;

typedef struct cost_result {
	char cur[4];                 /* the currency of every amount below */
	double hours_month;          /* hours of work a month */
	double depreciation_month;   /* (price + host - resale) spread over the months */
	double energy_hour;          /* electricity per working hour */
	double energy_month;         /* working hours, plus idle hours when idle power is given */
	double idle_energy_month;    /* the idle part of energy_month */
	double own_month;            /* depreciation + energy */
	bool has_rent;               /* a cloud rate was known */
	double rent_month;           /* cloud rate x hours + storage */
	double storage_month;
	bool has_breakeven;          /* renting costs more per hour than power */
	double breakeven_hours_month; /* owning is cheaper above this many hours */
	double breakeven_hours_day;
	double own_total, rent_total; /* over the whole period */
} cost_result;

/*
 * Compute the comparison; GW_EINVAL with err set for impossible inputs or
 * for amounts in different currencies.
 */
int cost_compute(const cost_input *in, cost_result *out, gw_error *err);

/* One rented rate chosen for a GPU. */
typedef struct cost_quote {
	double per_h;            /* the rate used: median of the rows, in cur */
	double min_h, max_h;
	char cur[4];
	bool converted;          /* quoted in row_cur, converted at fx */
	char row_cur[4];
	fx_rate fx;
	size_t n_rows;           /* rows the median is taken over */
	const char *tier;        /* "on-demand" or "serverless" */
	const gpu_spec *rented;  /* the GPU the rate is for */
	bool substitute;         /* rented is a different card from the one asked about */
	const char *date;        /* newest date among the rows */
	const char *source;      /* source of the row nearest the median */
	const char *provider;    /* provider of that row */
	size_t n_spot;           /* spot rows of the same GPU and currency (never used as the rate) */
	double spot_min_h, spot_max_h;
	bool storage_known;      /* some row compared states a storage price */
	double storage_gb_month; /* in cur: the median over the providers that state one */
	size_t n_storage;        /* providers that median is taken over */
	size_t n_offers;         /* the rows the median is taken over, cheapest first (at most COST_MAX_OFFERS) */
	struct cost_offer {
		const char *provider, *date; /* kb-owned */
		double per_h;                /* as quoted, in row_cur */
	} offers[8];
} cost_quote;
#define COST_MAX_OFFERS 8

/*
 * The hourly rate for renting g in currency cur (the buyer's market): the
 * median of its on-demand rows quoted in cur (serverless rows when there
 * is none), else its USD rows converted at the dated rate.  When g itself
 * is not rented, a different card: the GPU with the lowest such rate among
 * those with g's memory to twice it and a memory bandwidth within 1.5x of
 * g's (q->substitute: callers name it as a different card).  Returns 0,
 * GW_ENOTFOUND (err says why) when none is rented, or a table error.
 */
int cost_cloud_quote(const gpu_spec *g, const char *cur, cost_quote *q, gw_error *err);
/* g's own quote only: 0 found, 1 g is not rented, < 0 a table error. */
int cost_cloud_quote_exact(const gpu_spec *g, const char *cur, cost_quote *q, gw_error *err);

/*
 * Resale after `years` of a card launched in g->year at g->price_usd: the
 * median used/launch price ratio of the catalog cards that will then be
 * as old (age +- 1 year, priced in the used table), times the launch
 * price [derived].  Returns true and fills *usd, *ratio, *n_cards; false
 * when fewer than two cards qualify or the launch price is unknown.
 */
bool cost_resale(const gpu_spec *g, double years, int year, double *usd, double *ratio, size_t *n_cards);

#endif

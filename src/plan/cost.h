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

typedef struct cost_input {
	double price_usd;       /* purchase price of the card(s) */
	double resale_pct;      /* share of the price recovered at the end, 0..100 */
	double years;           /* ownership period */
	double power_w;         /* GPU board power while working */
	double system_power_w;  /* share of the rest of the machine while working */
	double kwh_usd;         /* electricity price */
	double hours_per_day;   /* hours of GPU work a day */
	double cloud_usd_h;     /* rent for the same class of GPU; <= 0 unknown */
} cost_input;

typedef struct cost_result {
	double hours_month;          /* hours of work a month */
	double depreciation_month;   /* (price - resale) spread over the months */
	double energy_hour;          /* electricity per working hour */
	double energy_month;
	double own_month;            /* depreciation + energy */
	bool has_rent;               /* a cloud rate was known */
	double rent_month;           /* cloud rate x hours */
	bool has_breakeven;          /* renting costs more per hour than power */
	double breakeven_hours_month; /* owning is cheaper above this many hours */
	double breakeven_hours_day;
	double own_total, rent_total; /* over the whole period */
} cost_result;

/* Compute the comparison; GW_EINVAL with err set for impossible inputs. */
int cost_compute(const cost_input *in, cost_result *out, gw_error *err);

/* One rented rate chosen for a GPU. */
typedef struct cost_quote {
	double usd_h;            /* the rate used: median of the rows */
	double min_usd_h, max_usd_h;
	size_t n_rows;           /* rows the median is taken over */
	const char *tier;        /* "on-demand" or "serverless" */
	const gpu_spec *rented;  /* the GPU the rate is for */
	bool substitute;         /* rented differs from the GPU asked about */
	const char *date;        /* newest date among the rows */
	const char *source;      /* source of the row nearest the median */
	const char *provider;    /* provider of that row */
} cost_quote;

/*
 * The hourly rate for renting g, from the cloud-prices table: the median
 * of its on-demand rows (serverless rows when there is none).  When g has
 * no row, the same class: the GPU with the lowest such rate among those
 * with g's memory to twice it and a memory bandwidth within 1.5x of g's.
 * Returns 0, GW_ENOTFOUND (err says why) when none is rented, or a table
 * error.
 */
int cost_cloud_quote(const gpu_spec *g, cost_quote *q, gw_error *err);

/*
 * Resale after `years` of a card launched in g->year at g->price_usd: the
 * median used/launch price ratio of the catalog cards that will then be
 * as old (age +- 1 year, priced in the used table), times the launch
 * price [derived].  Returns true and fills *usd, *ratio, *n_cards; false
 * when fewer than two cards qualify or the launch price is unknown.
 */
bool cost_resale(const gpu_spec *g, double years, int year, double *usd, double *ratio, size_t *n_cards);

#endif

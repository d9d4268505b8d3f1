/*
 * cards: rank the catalog's GPUs, and sets of up to max_gpus identical
 * cards, for a workload the caller evaluates (LLM inference, fine-tuning,
 * image generation).  Pure; nothing here prints.
 */
#ifndef GW_PLAN_CARDS_H
#define GW_PLAN_CARDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kb/kb.h"
#include "kb/lifecycle.h"
#include "plan/cost.h"
#include "plan/prices.h"
#include "plan/speed.h"
#include "util/util.h"

/* What the workload does on n copies of a GPU. */
typedef struct cards_eval {
	bool fits;
	bool has_speed;
	double speed;           /* higher is better, in the caller's unit */
	bool speed_estimated;   /* no public measurement backs the speed (LLM: no llama-bench row of the GPU,
				   data/llamabench-gpus.tsv; images: data/image-backends.tsv): marked ~,
				   ranked after the measured rows */
	const char *speed_caveat; /* a caveat on the speed (images: data/image-backends.tsv), or NULL */
	uint64_t need_bytes;    /* memory needed per GPU */
	char remedy[160];       /* "" as asked; else the change that made it fit
				   ("--quant q3_k_m", "partial offload: -ngl 30") */
	char remedy_set[96];    /* the same as option=value pairs for JSON ("quant=q3_k_m") */
} cards_eval;

/*
 * Evaluate the workload on n copies of g at remedy level `level`: 0 as
 * asked, 1.. the evaluator's remedies from the least to the most costly
 * (out->fits false when a level does not apply).  CARDS_MAX_LEVELS bounds
 * the levels tried.
 */
#define CARDS_MAX_LEVELS 6
typedef int (*cards_eval_fn)(void *ctx, const gpu_spec *g, uint32_t n, unsigned level, cards_eval *out,
			     gw_error *err);

typedef struct cards_opts {
	double budget;          /* in currency; 0: no budget */
	const char *currency;   /* the buyer's market (ISO 4217); NULL: USD */
	bool used;              /* used prices */
	const char *vendor;     /* NULL: all */
	uint32_t max_gpus;      /* 1..16 */
	bool estimates;         /* used: estimate a price for cards without a used row */
	int year;               /* this year, for used-price estimates */
	plan_backend backend;   /* llama.cpp backend; AUTO: each vendor's default; others leave out the
	                         * cards that backend does not run on (n_no_backend) */
} cards_opts;

#define CARDS_MAX_CAVEATS 12
#define CARDS_CAVEAT_LEN 720

typedef struct cards_row {
	const gpu_spec *gpu;
	uint32_t count;
	cards_eval eval;
	bool price_known;
	bool price_estimated;    /* used price estimated from launch price and age */
	double price;            /* for all count cards, in quote.currency */
	price_quote quote;       /* the price of one card, with its date and source */
	double speed_per_k;      /* speed per 1000 of the currency; 0 when price or speed unknown */
	uint32_t power_w;        /* all cards at TDP */
	char caveats[CARDS_MAX_CAVEATS][CARDS_CAVEAT_LEN]; /* what a buyer must know */
	size_t n_caveats;
	const kb_lifecycle *lifecycle; /* data/lifecycle.tsv row of its compute capability; NULL: none */
	const kb_install *install;     /* data/install.tsv row; NULL: an ordinary desktop card */
	uint32_t slots_total;          /* multi-card: slot widths the cards occupy */
	uint32_t psu_min_w;            /* multi-card: PSU the set implies [assumption]; 0 for one card */
} cards_row;

typedef struct cards_result {
	cards_row *rows;         /* fitting rows within the budget, best first */
	size_t n_rows;
	size_t n_considered;     /* GPUs looked at (after the vendor filter) */
	size_t n_over_budget, n_no_price, n_no_fit;
	size_t n_other_market;   /* priced only in another market's currency (a China-only card for a USD buyer) */
	size_t n_no_backend;     /* GPUs the chosen --backend does not run on */
	bool has_cheapest_over;  /* nothing or something over budget: the cheapest that fits */
	cards_row cheapest_over; /* the cheapest priced row over the budget */
} cards_result;

/*
 * For every catalog GPU (vendor filter), the smallest count up to max_gpus
 * that fits (the evaluator may apply a remedy and say which); kept when it
 * has a price (new: the new-prices table; used: the used-prices table, or
 * an estimate when o->estimates) within the budget.  Sorted by speed per
 * dollar, then speed, then price; estimated prices after all others, and
 * speeds no measurement backs (eval.speed_estimated) after measured ones.
 * res->cheapest_over is the cheapest fitting configuration over budget.
 */
int cards_rank(const cards_opts *o, cards_eval_fn fn, void *ctx, cards_result *res, gw_error *err);
void cards_result_release(cards_result *res);

/* A rented configuration that runs the workload. */
typedef struct cards_rent {
	const gpu_spec *gpu;
	uint32_t count;
	cards_eval eval;
	cost_quote quote;      /* the rate of one GPU (its own rows only, never another card's) */
	double per_hour;       /* count x the rate, in quote.cur */
} cards_rent;

/*
 * The rented GPUs (data/cloud-prices.tsv, on-demand, in o->currency or
 * converted from USD) on which the workload fits with up to max_gpus of
 * them, cheapest per hour first; at most max_rows.  *rows is the
 * caller's to free.  Returns 0 or an error.
 */
int cards_rentals(const cards_opts *o, cards_eval_fn fn, void *ctx, size_t max_rows, cards_rent **rows, size_t *n,
		  gw_error *err);

/*
 * The lifecycle line of g (data/lifecycle.tsv: last PyTorch and wheel,
 * last driver branch, toolkits to build from source, as of the row's
 * month) into buf; its length, 0 (buf "") when the table has no row.
 */
size_t cards_lifecycle_text(const gpu_spec *g, char *buf, size_t n);

#endif

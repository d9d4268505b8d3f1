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
#include "util/util.h"

/* What the workload does on n copies of a GPU. */
typedef struct cards_eval {
	bool fits;
	bool has_speed;
	double speed;           /* higher is better, in the caller's unit */
	uint64_t need_bytes;    /* memory needed per GPU */
} cards_eval;

typedef int (*cards_eval_fn)(void *ctx, const gpu_spec *g, uint32_t n, cards_eval *out, gw_error *err);

typedef struct cards_opts {
	double budget_usd;      /* 0: no budget */
	bool used;              /* used prices */
	const char *vendor;     /* NULL: all */
	uint32_t max_gpus;      /* 1..16 */
	int year;               /* this year, for used-price estimates */
} cards_opts;

#define CARDS_MAX_CAVEATS 5

typedef struct cards_row {
	const gpu_spec *gpu;
	uint32_t count;
	cards_eval eval;
	bool price_known;
	bool price_estimated;    /* used price estimated from new price and age */
	double price_usd;        /* for all count cards */
	double speed_per_kusd;   /* speed per 1000 USD; 0 when price or speed unknown */
	uint32_t power_w;        /* all cards at TDP */
	const char *caveats[CARDS_MAX_CAVEATS]; /* static strings or kb-owned */
	size_t n_caveats;
} cards_row;

typedef struct cards_result {
	cards_row *rows;         /* fitting rows within the budget, best first */
	size_t n_rows;
	size_t n_considered;     /* GPUs looked at (after the vendor filter) */
	size_t n_over_budget, n_no_price, n_no_fit;
} cards_result;

/* The price of one card (new or used); false when unknown. */
bool cards_price(const gpu_spec *g, bool used, int year, double *usd, bool *estimated);

/*
 * For every catalog GPU (vendor filter), the smallest count up to max_gpus
 * that fits; kept when within the budget (an unknown price is dropped when
 * there is a budget).  Sorted by speed per dollar, then speed, then price.
 */
int cards_rank(const cards_opts *o, cards_eval_fn fn, void *ctx, cards_result *res, gw_error *err);
void cards_result_release(cards_result *res);

#endif

/*
 * Unit tests for plan/cards: ranking, budget and vendor filters, used
 * prices, caveats; with a workload stub that needs a fixed memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "kb/kb.h"
#include "plan/cards.h"

/* Needs *need bytes in total; speed is the memory bandwidth. */
static int stub(void *ctx, const gpu_spec *g, uint32_t n, cards_eval *out, gw_error *err)
{
	(void)err;
	uint64_t need = *(uint64_t *)ctx;
	out->fits = g->vram_bytes * n >= need;
	out->has_speed = g->bandwidth_gbs > 0;
	out->speed = g->bandwidth_gbs;
	out->need_bytes = need / n;
	return 0;
}

static bool has_caveat(const cards_row *r, const char *word)
{
	for (size_t i = 0; i < r->n_caveats; i++)
		if (strstr(r->caveats[i], word))
			return true;
	return false;
}

static const cards_row *find(const cards_result *res, const char *id)
{
	for (size_t i = 0; i < res->n_rows; i++)
		if (!strcmp(res->rows[i].gpu->id, id))
			return &res->rows[i];
	return NULL;
}

static void test_rank(void **state)
{
	(void)state;
	uint64_t need = 20 * GiB;
	cards_opts o = {.budget_usd = 1000, .used = true, .max_gpus = 4, .year = 2026};
	cards_result res;
	assert_int_equal(cards_rank(&o, stub, &need, &res, NULL), 0);
	assert_true(res.n_rows > 0);
	for (size_t i = 0; i < res.n_rows; i++) {
		const cards_row *r = &res.rows[i];
		assert_true(r->price_known && r->price_usd <= 1000);
		assert_true(r->gpu->vram_bytes * r->count >= need);
		/* the smallest count that fits */
		assert_true(r->count == 1 || r->gpu->vram_bytes * (r->count - 1) < need);
		if (i)
			assert_true(res.rows[i - 1].speed_per_kusd >= r->speed_per_kusd);
	}
	/* a used RTX 3090 at its table price (600 USD) */
	const cards_row *r = find(&res, "rtx-3090");
	assert_non_null(r);
	assert_int_equal(r->count, 1);
	assert_true(fabs(r->price_usd - 600) < 1e-9);
	assert_false(r->price_estimated);
	assert_int_equal(r->power_w, r->gpu->tdp_w);
	/* two 12 GB cards for 20 GiB, with the split caveat */
	r = find(&res, "rtx-3060");
	assert_non_null(r);
	assert_int_equal(r->count, 2);
	assert_true(has_caveat(r, "several cards"));
	cards_result_release(&res);

	/* new prices: an RTX 4090 (1599) is over a 1000 budget */
	o.used = false;
	assert_int_equal(cards_rank(&o, stub, &need, &res, NULL), 0);
	assert_null(find(&res, "rtx-4090"));
	assert_true(res.n_over_budget > 0);
	cards_result_release(&res);
}

static void test_caveats_and_vendor(void **state)
{
	(void)state;
	uint64_t need = 4 * GiB;
	cards_opts o = {.max_gpus = 1, .year = 2026};
	cards_result res;
	assert_int_equal(cards_rank(&o, stub, &need, &res, NULL), 0);
	const cards_row *r = find(&res, "gtx-1060");
	assert_non_null(r);
	assert_true(has_caveat(r, "compute capability below 7.5"));
	r = find(&res, "rx-7900-xtx");
	assert_non_null(r);
	assert_true(has_caveat(r, "ROCm"));
	r = find(&res, "4060-laptop");
	assert_non_null(r);
	assert_true(has_caveat(r, "power limit"));
	r = find(&res, "rtx-4090");
	assert_non_null(r);
	assert_int_equal(r->n_caveats, 0);
	cards_result_release(&res);

	o.vendor = "amd";
	assert_int_equal(cards_rank(&o, stub, &need, &res, NULL), 0);
	for (size_t i = 0; i < res.n_rows; i++)
		assert_string_equal(res.rows[i].gpu->vendor, "AMD");
	assert_true(res.n_rows >= 1);
	cards_result_release(&res);
}

static void test_used_price(void **state)
{
	(void)state;
	double usd;
	bool est;
	assert_true(cards_price(kb_gpu_find("rtx-3060"), true, 2026, &usd, &est));
	assert_true(fabs(usd - 225) < 1e-9 && !est);
	/* no row: estimated from the new price and the age */
	const gpu_spec *g = kb_gpu_find("rtx-2080-ti");
	assert_true(cards_price(g, true, 2026, &usd, &est));
	assert_true(est);
	assert_true(usd < g->price_usd);
	assert_true(cards_price(g, false, 2026, &usd, &est));
	assert_true(fabs(usd - g->price_usd) < 1e-9);
}

static int teardown(void **state)
{
	(void)state;
	kb_release_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_caveats_and_vendor),
		cmocka_unit_test(test_used_price),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

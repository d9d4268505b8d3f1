/*
 * Unit tests for plan/cost: the owning/renting arithmetic and the cloud
 * price table (every row must name a catalog GPU).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "kb/kb.h"
#include "plan/cost.h"

static void test_arithmetic(void **state)
{
	(void)state;
	cost_input in = {.price_usd = 1200, .resale_pct = 50, .years = 2, .power_w = 400, .system_power_w = 100,
			 .kwh_usd = 0.2, .hours_per_day = 10, .cloud_usd_h = 0.6};
	cost_result r;
	assert_int_equal(cost_compute(&in, &r, NULL), 0);
	assert_true(fabs(r.depreciation_month - 600.0 / 24) < 1e-9);
	assert_true(fabs(r.energy_hour - 0.1) < 1e-12); /* 0.5 kW x 0.2 */
	assert_true(fabs(r.hours_month - 304.375) < 1e-9);
	assert_true(fabs(r.own_month - (25 + 30.4375)) < 1e-9);
	assert_true(r.has_breakeven);
	/* 25 USD / (0.6 - 0.1) USD/h = 50 h */
	assert_true(fabs(r.breakeven_hours_month - 50) < 1e-9);
	/* power costing more than the rent: no break-even */
	in.cloud_usd_h = 0.05;
	assert_int_equal(cost_compute(&in, &r, NULL), 0);
	assert_false(r.has_breakeven);
	in.cloud_usd_h = 0;
	assert_int_equal(cost_compute(&in, &r, NULL), 0);
	assert_false(r.has_rent);
	gw_error err;
	in.hours_per_day = 25;
	assert_int_equal(cost_compute(&in, &r, &err), GW_EINVAL);
	assert_non_null(strstr(err.msg, "hours per day"));
}

static void test_cloud_table(void **state)
{
	(void)state;
	gw_error err;
	const kb_table *t = kb_get_table("cloud-prices", &err);
	assert_non_null(t);
	long cg = kb_col(t, "gpu"), cd = kb_col(t, "date"), cs = kb_col(t, "source");
	assert_true(cg >= 0 && cd >= 0 && cs >= 0);
	for (size_t i = 0; i < t->nrows; i++) {
		if (!kb_gpu_find(kb_cell(t, i, cg)))
			fail_msg("cloud-prices row %zu: '%s' is not a catalog GPU", i, kb_cell(t, i, cg));
		assert_true(strlen(kb_cell(t, i, cd)) >= 4);
		assert_true(str_starts(kb_cell(t, i, cs), "https://"));
	}
	/* the RTX 4090 has its own on-demand rows: median of 0.60 and 0.682 */
	cost_quote q;
	assert_int_equal(cost_cloud_quote(kb_gpu_find("rtx-4090"), &q, &err), 0);
	assert_false(q.substitute);
	assert_true(fabs(q.usd_h - 0.641) < 1e-9);
	assert_string_equal(q.tier, "on-demand");
	/* a card without rows is priced as the cheapest rented card of its class:
	 * its memory to twice it, bandwidth within 1.5x */
	const gpu_spec *g = kb_gpu_find("rtx-3060");
	assert_int_equal(cost_cloud_quote(g, &q, &err), 0);
	assert_true(q.substitute);
	assert_true(q.rented->vram_bytes >= g->vram_bytes && q.rented->vram_bytes <= 2 * g->vram_bytes);
	assert_true(q.rented->bandwidth_gbs >= g->bandwidth_gbs / 1.5 && q.rented->bandwidth_gbs <= g->bandwidth_gbs * 1.5);
	/* a 6 GB GTX 1060 has no rented peer: not an RTX 3090 */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("gtx-1060"), &q, &err), GW_ENOTFOUND);
	assert_non_null(strstr(err.msg, "gtx-1060"));
}

static void test_resale(void **state)
{
	(void)state;
	double usd, ratio;
	size_t n;
	/* an RTX 4090 (2022) after 3 years is as old as the 2018-2020 cards are in 2026 */
	const gpu_spec *g = kb_gpu_find("rtx-4090");
	assert_true(cost_resale(g, 3, 2026, &usd, &ratio, &n));
	assert_true(n >= 2);
	assert_true(ratio > 0 && ratio < 1.5);
	assert_true(fabs(usd - g->price_usd * ratio) < 1e-6);
	/* no launch price: no derived resale */
	assert_false(cost_resale(kb_gpu_find("h100-sxm"), 3, 2026, &usd, &ratio, &n));
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
		cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_cloud_table),
		cmocka_unit_test(test_resale),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

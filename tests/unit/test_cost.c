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
	cost_input in = {.price = money_of(1200, "USD"), .host_price = money_of(0, "USD"), .resale_pct = 50, .years = 2,
			 .power_w = 400, .system_power_w = 100, .kwh = money_of(0.2, "USD"), .hours_per_day = 10,
			 .cloud_h = money_of(0.6, "USD"), .storage_month = money_of(0, "USD")};
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
	in.cloud_h.amount = 0.05;
	assert_int_equal(cost_compute(&in, &r, NULL), 0);
	assert_false(r.has_breakeven);
	in.cloud_h.amount = 0;
	assert_int_equal(cost_compute(&in, &r, NULL), 0);
	assert_false(r.has_rent);
	gw_error err;
	in.hours_per_day = 25;
	assert_int_equal(cost_compute(&in, &r, &err), GW_EINVAL);
	assert_non_null(strstr(err.msg, "hours per day"));
	/* storage and idle power enter the sums: 10 USD of storage a month, 50 W idle for 14 h */
	in.hours_per_day = 10;
	in.cloud_h.amount = 0.6;
	in.storage_month.amount = 10;
	in.idle_power_w = 50;
	assert_int_equal(cost_compute(&in, &r, NULL), 0);
	double idle = 0.05 * 14 * COST_DAYS_PER_MONTH * 0.2;
	assert_true(fabs(r.idle_energy_month - idle) < 1e-9);
	assert_true(fabs(r.rent_month - (0.6 * 304.375 + 10)) < 1e-9);
	/* (25 + idle - 10) / (0.6 - 0.1) */
	assert_true(fabs(r.breakeven_hours_month - (25 + idle - 10) / 0.5) < 1e-9);
}

/*
 * Mixing currencies is refused by construction: a CNY electricity price
 * with a USD purchase price is an error naming both amounts, not a sum.
 */
static void test_mixing_refused(void **state)
{
	(void)state;
	cost_input in = {.price = money_of(15000, "CNY"), .host_price = money_of(0, "CNY"), .resale_pct = 40, .years = 3,
			 .power_w = 425, .kwh = money_of(0.17, "USD"), .hours_per_day = 4, .cloud_h = money_of(1.14, "CNY"),
			 .storage_month = money_of(0, "CNY")};
	cost_result r;
	gw_error err = {0};
	assert_int_equal(cost_compute(&in, &r, &err), GW_EINVAL);
	assert_string_equal(err.msg, "cannot add 0.17 USD to 15000.00 CNY: different currencies (convert one through "
				     "data/fx-rates.tsv first)");
	/* a dollar rent on a yuan purchase: refused the same way */
	in.kwh = money_of(0.4883, "CNY");
	in.cloud_h = money_of(0.29, "USD");
	assert_int_equal(cost_compute(&in, &r, &err), GW_EINVAL);
	assert_string_equal(err.msg, "cannot add 0.29 USD to 15000.00 CNY: different currencies (convert one through "
				     "data/fx-rates.tsv first)");
	/* all in yuan: computed */
	in.cloud_h = money_of(1.14, "CNY");
	assert_int_equal(cost_compute(&in, &r, &err), 0);
	assert_string_equal(r.cur, "CNY");
	money sum;
	assert_int_equal(money_add(money_of(1, "EUR"), money_of(1, "USD"), &sum, &err), GW_EINVAL);
	assert_int_equal(money_sub(money_of(1, "CNY"), money_of(1, "CNY"), &sum, &err), 0);
	assert_true(fabs(sum.amount) < 1e-12);
}

/* Conversion goes through the ECB rows of one date, crossed through EUR, and says so. */
static void test_convert(void **state)
{
	(void)state;
	money out;
	fx_rate fx;
	gw_error err = {0};
	assert_int_equal(money_convert(money_of(100, "USD"), "CNY", &out, &fx, &err), 0);
	assert_true(fabs(out.amount - 100 * 7.9989 / 1.1761) < 1e-9);
	assert_string_equal(out.cur, "CNY");
	assert_true(fx.via_eur);
	assert_string_equal(fx.date, "2026-05-08");
	assert_non_null(strstr(fx.source, "ecb.europa.eu"));
	assert_int_equal(money_convert(money_of(100, "EUR"), "USD", &out, &fx, &err), 0);
	assert_true(fabs(out.amount - 117.61) < 1e-9);
	assert_false(fx.via_eur);
	assert_int_equal(money_convert(money_of(1, "USD"), "XYZ", &out, &fx, &err), GW_ENOTFOUND);
	assert_string_equal(err.msg, "no exchange rate from USD to XYZ in data/fx-rates.tsv");
	region_power rp;
	assert_int_equal(money_region_power("cn", &rp, &err), 0);
	assert_string_equal(rp.kwh.cur, "CNY");
	assert_int_equal(money_region_power("mars", &rp, &err), GW_ENOTFOUND);
	assert_string_equal(err.msg, "unknown region 'mars' (known: us, cn, eu, de)");
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
	/* the RTX 4090 has its own on-demand USD rows: 0.29, 0.34, 0.45, 0.55, 0.60 and 0.682,
	 * median (0.45 + 0.55) / 2; three spot rows (0.22, 0.31, 0.34), never used */
	cost_quote q;
	assert_int_equal(cost_cloud_quote(kb_gpu_find("rtx-4090"), "USD", &q, &err), 0);
	assert_false(q.substitute);
	assert_int_equal(q.n_rows, 6);
	assert_true(fabs(q.per_h - 0.50) < 1e-9);
	assert_true(fabs(q.min_h - 0.29) < 1e-9 && fabs(q.max_h - 0.682) < 1e-9);
	assert_int_equal(q.n_spot, 3);
	assert_true(fabs(q.spot_min_h - 0.22) < 1e-9 && fabs(q.spot_max_h - 0.34) < 1e-9);
	assert_string_equal(q.tier, "on-demand");
	/* the RTX 4090's on-demand rows: OpenRelay states 0 (included), RunPod 0.10 on two rows, the
	 * middle row (Spheron) none: the median of one figure per provider, 0.05 of 2 providers */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("rtx-4090"), "USD", &q, &err), 0);
	assert_true(q.storage_known);
	assert_int_equal(q.n_storage, 2);
	assert_true(fabs(q.storage_gb_month - 0.05) < 1e-9);
	/* the RTX 3090's: only RunPod states one (0.10 USD/GB-month) */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("rtx-3090"), "USD", &q, &err), 0);
	assert_true(q.storage_known);
	assert_int_equal(q.n_storage, 1);
	assert_true(fabs(q.storage_gb_month - 0.10) < 1e-9);
	/* the RTX 4090 D's only row (a CNY platform) states none */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("rtx-4090-d"), "CNY", &q, &err), 0);
	assert_false(q.storage_known);
	assert_int_equal(q.n_storage, 0);
	/* in yuan: the Chinese platforms' own CNY rows (1.24, 1.85, 2.18, 2.55: median 2.015),
	 * never the dollar rows converted */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("rtx-4090"), "CNY", &q, &err), 0);
	assert_false(q.converted);
	assert_true(fabs(q.per_h - 2.015) < 1e-9);
	assert_string_equal(q.cur, "CNY");
	assert_int_equal(cost_cloud_quote(kb_gpu_find("rtx-4090-d"), "CNY", &q, &err), 0);
	assert_true(fabs(q.per_h - 1.14) < 1e-9);
	/* an H100 has no CNY row: its USD median converted at the dated rate, and marked so */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("h100-sxm"), "CNY", &q, &err), 0);
	assert_true(q.converted);
	assert_string_equal(q.row_cur, "USD");
	assert_string_equal(q.fx.date, "2026-05-08");
	/* a P100 is not rented: the rate is a different card's, flagged so callers name it */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("tesla-p100"), "USD", &q, &err), 0);
	assert_true(q.substitute);
	assert_true(q.rented != kb_gpu_find("tesla-p100"));
	/* a card without rows is priced as the cheapest rented card of its class:
	 * its memory to twice it, bandwidth within 1.5x */
	const gpu_spec *g = kb_gpu_find("rtx-3060");
	assert_int_equal(cost_cloud_quote(g, "USD", &q, &err), 0);
	assert_true(q.substitute);
	assert_true(q.rented->vram_bytes >= g->vram_bytes && q.rented->vram_bytes <= 2 * g->vram_bytes);
	assert_true(q.rented->bandwidth_gbs >= g->bandwidth_gbs / 1.5 && q.rented->bandwidth_gbs <= g->bandwidth_gbs * 1.5);
	/* a 6 GB GTX 1060 has no rented peer: not an RTX 3090 */
	assert_int_equal(cost_cloud_quote(kb_gpu_find("gtx-1060"), "USD", &q, &err), GW_ENOTFOUND);
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
		cmocka_unit_test(test_mixing_refused),
		cmocka_unit_test(test_convert),
		cmocka_unit_test(test_cloud_table),
		cmocka_unit_test(test_resale),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

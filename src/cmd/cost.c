/*
 * gpuwise cost: own a GPU or rent the same class of GPU by the hour.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "kb/kb.h"
#include "plan/cost.h"
#include "plan/prices.h"
#include "util/json.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpuwise cost [--gpu ID] [--used] [--price USD] [--power W] [--system-power W]\n"
		"                    [--kwh-price X] [--hours-per-day H] [--years Y] [--resale PCT]\n"
		"                    [--cloud-rate USD/h] [--json]\n\n"
		"Compare owning a GPU (purchase minus resale, spread over the years, plus\n"
		"electricity) with renting the same class of GPU by the hour: the monthly cost\n"
		"of each and the break-even hours per month above which owning is cheaper.\n\n"
		"Options:\n"
		"  --gpu ID            a GPU of the catalog (rtx-4090, h100-sxm ...): gives the\n"
		"                      price, the board power and the cloud rate\n"
		"  --used              buy it used: the used price (data/used-prices.tsv, as\n"
		"                      gpuwise cards --used) instead of the new price\n"
		"  --price USD         purchase price (default: the median dated price of\n"
		"                      data/new-prices.tsv, or used-prices.tsv with --used;\n"
		"                      a card not on sale new needs --used or --price)\n"
		"  --power W           power while working (default: the card's TDP)\n"
		"  --system-power W    share of the rest of the machine while working\n"
		"                      (default 0: a rented GPU comes with its host)\n"
		"  --kwh-price X       electricity per kWh (default %.2f, U.S. residential\n"
		"                      average, EIA)\n"
		"  --hours-per-day H   hours of GPU work a day (default %g)\n"
		"  --years Y           years of ownership (default %g)\n"
		"  --resale PCT        share of the price recovered at the end (default: the\n"
		"                      median used/launch price ratio of the cards that will\n"
		"                      then be as old, from the used-price table; %g without\n"
		"                      a card or such cards)\n"
		"  --cloud-rate USD/h  rent per hour (default: median on-demand price of this\n"
		"                      GPU, or of the cheapest GPU of its class: its memory to\n"
		"                      twice it, bandwidth within 1.5x; from the cloud-prices\n"
		"                      table; see --data-dir)\n"
		"  --json              machine-readable output (docs/json-cost.md)\n"
		"  -h, --help          this help\n\n"
		"Exit status: 0 success, 1 a table could not be read, 2 usage error.\n",
		COST_DEFAULT_KWH_USD, COST_DEFAULT_HOURS_PER_DAY, COST_DEFAULT_YEARS, COST_DEFAULT_RESALE_PCT);
}

static int number_opt(const char *name, const char *arg, double min, double max, double *out)
{
	double v;
	if (parse_double(arg, &v) || !isfinite(v) || v < min || v > max)
		return usage_error("cost", "invalid %s '%s' (a number from %g to %g)", name, arg, min, max);
	*out = v;
	return 0;
}

static void print_text(const gpu_spec *g, const cost_input *in, const char *price_from, const char *price_date,
		       int price_age, const char *resale_from,
		       const cost_quote *q, bool quoted, const char *no_rent, const cost_result *r)
{
	FILE *f = stdout;
	const char *b = c_bold(f), *z = c_reset(f);
	double months = in->years * 12;
	printf(_("%sOwn%s%s%s\n"), b, g ? _(" a ") : "", g ? g->name : "", z);
	printf(_("  purchase        %10.0f USD  (%s)\n"), in->price_usd, price_from);
	if (price_age > PRICE_STALE_MONTHS)
		printf(_("  %swarning:%s this price is from %s, more than %d months ago: check a current listing or give --price\n"),
		       c_yellow(f), z, price_date, PRICE_STALE_MONTHS);
	printf(_("  resale          %10.0f USD  (%.0f%% after %g years: %s)\n"), in->price_usd * in->resale_pct / 100,
	       in->resale_pct, in->years, resale_from);
	printf(_("  depreciation    %10.2f USD/month  over %g months\n"), r->depreciation_month, months);
	printf(_("  electricity     %10.2f USD/month  (%g W%s x %.1f h x %.2f USD/kWh)\n"), r->energy_month,
	       in->power_w + in->system_power_w, in->system_power_w > 0 ? " with the system" : "", r->hours_month,
	       in->kwh_usd);
	printf(_("  total           %10.2f USD/month\n"), r->own_month);
	printf(_("%sRent%s\n"), b, z);
	if (!r->has_rent) {
		printf(_("  none rented: %s; give --cloud-rate\n"), *no_rent ? no_rent : "no cloud rate known");
		return;
	}
	if (quoted) {
		printf(P_("  rate            %10.2f USD/h  (%s%s, median of %zu %s offer, %.2f-%.2f, %s)\n",
			  "  rate            %10.2f USD/h  (%s%s, median of %zu %s offers, %.2f-%.2f, %s)\n", q->n_rows),
		       in->cloud_usd_h, q->substitute ? _("same class: ") : "", q->rented->name, q->n_rows, q->tier,
		       q->min_usd_h, q->max_usd_h, q->date);
		printf(_("  source          %s: %s\n"), q->provider, q->source);
	} else {
		printf(_("  rate            %10.2f USD/h  (--cloud-rate)\n"), in->cloud_usd_h);
	}
	printf(_("  total           %10.2f USD/month  (%.1f h a month)\n"), r->rent_month, r->hours_month);
	printf(_("%sBreak-even%s\n"), b, z);
	if (!r->has_breakeven) {
		printf(_("  never: electricity alone (%.3f USD/h) costs more than the rent\n"), r->energy_hour);
	} else {
		printf(_("  owning is cheaper above %.0f hours a month (%.1f h a day)"), r->breakeven_hours_month,
		       r->breakeven_hours_day);
		if (r->breakeven_hours_day > 24)
			printf(_(": more than a month has"));
		printf("\n");
		double diff = r->rent_month - r->own_month;
		printf(_("  at %g h a day %s %.0f USD a month (%.0f USD over %g years)\n"), in->hours_per_day,
		       diff >= 0 ? _("owning saves") : _("renting saves"), fabs(diff), fabs(diff) * months, in->years);
	}
}

static void print_json(const gpu_spec *g, const cost_input *in, const char *price_from, const char *price_date,
		       int price_age, const char *resale_from,
		       bool used, const cost_quote *q, bool quoted, const char *no_rent, const cost_result *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "gpu", jstr_or_null(g ? g->id : NULL));
	json_object_set_new(j, "price_usd", jreal_round(in->price_usd, 2));
	json_object_set_new(j, "price_source", json_string(price_from));
	json_object_set_new(j, "used", json_boolean(used));
	json_object_set_new(j, "price_date", jstr_or_null(*price_date ? price_date : NULL));
	json_object_set_new(j, "price_age_months", price_age >= 0 ? json_integer(price_age) : json_null());
	json_object_set_new(j, "resale_pct", jreal_round(in->resale_pct, 2));
	json_object_set_new(j, "resale_source", json_string(resale_from));
	json_object_set_new(j, "years", jreal_round(in->years, 3));
	json_object_set_new(j, "power_w", jreal_round(in->power_w, 1));
	json_object_set_new(j, "system_power_w", jreal_round(in->system_power_w, 1));
	json_object_set_new(j, "kwh_price_usd", jreal_round(in->kwh_usd, 4));
	json_object_set_new(j, "hours_per_day", jreal_round(in->hours_per_day, 3));
	json_object_set_new(j, "hours_per_month", jreal_round(r->hours_month, 2));
	json_t *own = json_object();
	json_object_set_new(own, "depreciation_usd_month", jreal_round(r->depreciation_month, 2));
	json_object_set_new(own, "energy_usd_month", jreal_round(r->energy_month, 2));
	json_object_set_new(own, "energy_usd_hour", jreal_round(r->energy_hour, 4));
	json_object_set_new(own, "total_usd_month", jreal_round(r->own_month, 2));
	json_object_set_new(own, "total_usd", jreal_round(r->own_total, 2));
	json_object_set_new(j, "own", own);
	if (r->has_rent) {
		json_t *rent = json_object();
		json_object_set_new(rent, "usd_per_hour", jreal_round(in->cloud_usd_h, 4));
		json_object_set_new(rent, "gpu", jstr_or_null(quoted ? q->rented->id : NULL));
		json_object_set_new(rent, "same_class_substitute", json_boolean(quoted && q->substitute));
		json_object_set_new(rent, "offers", quoted ? json_integer((json_int_t)q->n_rows) : json_null());
		json_object_set_new(rent, "min_usd_per_hour", jreal_or_null(quoted, quoted ? q->min_usd_h : 0));
		json_object_set_new(rent, "max_usd_per_hour", jreal_or_null(quoted, quoted ? q->max_usd_h : 0));
		json_object_set_new(rent, "tier", jstr_or_null(quoted ? q->tier : "user"));
		json_object_set_new(rent, "date", jstr_or_null(quoted ? q->date : NULL));
		json_object_set_new(rent, "source", jstr_or_null(quoted ? q->source : "--cloud-rate"));
		json_object_set_new(rent, "total_usd_month", jreal_round(r->rent_month, 2));
		json_object_set_new(rent, "total_usd", jreal_round(r->rent_total, 2));
		json_object_set_new(j, "rent", rent);
	} else {
		json_object_set_new(j, "rent", json_null());
	}
	json_object_set_new(j, "no_rent_reason", jstr_or_null(r->has_rent || !*no_rent ? NULL : no_rent));
	json_object_set_new(j, "breakeven_hours_month", r->has_breakeven ? jreal_round(r->breakeven_hours_month, 2) : json_null());
	json_object_set_new(j, "breakeven_hours_day", r->has_breakeven ? jreal_round(r->breakeven_hours_day, 3) : json_null());
	const char *cheaper = NULL;
	if (r->has_rent)
		cheaper = r->own_month <= r->rent_month ? "own" : "rent";
	json_object_set_new(j, "cheaper", jstr_or_null(cheaper));
	json_print(j, stdout);
	json_decref(j);
}

int cmd_cost(int argc, char **argv)
{
	static const struct option opts[] = {
		{"gpu", required_argument, NULL, 'g'},
		{"price", required_argument, NULL, 'p'},
		{"used", no_argument, NULL, 'u'},
		{"power", required_argument, NULL, 'w'},
		{"system-power", required_argument, NULL, 's'},
		{"kwh-price", required_argument, NULL, 'k'},
		{"hours-per-day", required_argument, NULL, 'H'},
		{"years", required_argument, NULL, 'y'},
		{"resale", required_argument, NULL, 'r'},
		{"cloud-rate", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	cost_input in = {
		.price_usd = -1,
		.resale_pct = COST_DEFAULT_RESALE_PCT,
		.years = COST_DEFAULT_YEARS,
		.power_w = -1,
		.kwh_usd = COST_DEFAULT_KWH_USD,
		.hours_per_day = COST_DEFAULT_HOURS_PER_DAY,
		.cloud_usd_h = 0,
	};
	const char *gpu = NULL;
	bool json = false, used = false, resale_given = false;
	int c, rc;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g': gpu = optarg; break;
		case 'p': if ((rc = parse_usd_opt("cost", "--price", optarg, 1e8, &in.price_usd))) return rc; break;
		case 'w': if ((rc = number_opt("--power", optarg, 0, 100000, &in.power_w))) return rc; break;
		case 's': if ((rc = number_opt("--system-power", optarg, 0, 100000, &in.system_power_w))) return rc; break;
		case 'k': if ((rc = number_opt("--kwh-price", optarg, 0, 100, &in.kwh_usd))) return rc; break;
		case 'H': if ((rc = number_opt("--hours-per-day", optarg, 0.01, 24, &in.hours_per_day))) return rc; break;
		case 'y': if ((rc = number_opt("--years", optarg, 0.1, 50, &in.years))) return rc; break;
		case 'r':
			if ((rc = number_opt("--resale", optarg, 0, 100, &in.resale_pct)))
				return rc;
			resale_given = true;
			break;
		case 'u': used = true; break;
		case 'c': if ((rc = number_opt("--cloud-rate", optarg, 0.001, 10000, &in.cloud_usd_h))) return rc; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		case ':': return usage_error("cost", "option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("cost", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("cost", "unexpected argument '%s'", argv[optind]);

	const gpu_spec *g = NULL;
	char price_from[600] = "--price", resale_from[200] = "--resale";
	char no_rent[512] = "", price_date[16] = "";
	int price_age = -1;
	time_t now = time(NULL);
	struct tm tmv;
	gmtime_r(&now, &tmv);
	int year = tmv.tm_year + 1900, month = tmv.tm_mon + 1;
	if (gpu) {
		gw_error kerr = {0};
		if (kb_gpus_load(&kerr)) { /* a broken --data-dir table is not an unknown GPU */
			gw_errorf("%s", kerr.msg);
			return GW_EXIT_RUNTIME;
		}
		g = kb_gpu_find(gpu);
		if (!g) {
			const gpu_spec *s = kb_gpu_suggest(gpu);
			return usage_error("cost", "unknown GPU '%s'%s%s%s (gpuwise list gpus shows the catalog)", gpu,
					   s ? " (did you mean '" : "", s ? s->id : "", s ? "'?)" : "");
		}
		if (in.price_usd < 0) {
			price_quote pq;
			gw_error perr = {0};
			if (price_quote_get(g, used, false, year, &pq, &perr)) {
				gw_errorf("%s", perr.msg);
				return GW_EXIT_RUNTIME;
			}
			if (!pq.known) {
				price_quote other;
				bool alt = !price_quote_get(g, !used, false, year, &other, NULL) && other.known;
				char hint[96] = "";
				if (alt)
					snprintf(hint, sizeof hint, "%s (%s: %.0f USD, %s) or ", used ? "leave out --used" : "give --used",
						 used ? "new" : "used", other.usd, other.date);
				return usage_error("cost", "no %s price on record for '%s'%s; %s--price USD",
						   used ? "used" : "new", g->id, used ? "" : " (not on sale new)", hint);
			}
			in.price_usd = pq.usd;
			int age = price_age_months(pq.date, year, month);
			snprintf(price_from, sizeof price_from, P_("%s price, median of %zu dated row (%.0f-%.0f), newest %s%s: %s",
				    "%s price, median of %zu dated rows (%.0f-%.0f), newest %s%s: %s", pq.n_rows),
				 used ? _("used") : _("new"), pq.n_rows, pq.min_usd, pq.max_usd, pq.date,
				 age > PRICE_STALE_MONTHS ? _(", more than 6 months old") : "", pq.source);
			snprintf(price_date, sizeof price_date, "%s", pq.date);
			price_age = age;
		}
		if (in.power_w < 0)
			in.power_w = g->tdp_w;
		if (!resale_given) {
			double rusd, ratio;
			size_t nc;
			if (cost_resale(g, in.years, year, &rusd, &ratio, &nc) && in.price_usd > 0) {
				double pct = rusd / in.price_usd * 100;
				in.resale_pct = pct > 100 ? 100 : pct;
				snprintf(resale_from, sizeof resale_from,
					 "cards %.0f+-1 years old sell used for a median %.0f%% of their launch price (%zu cards, "
					 "used-prices.tsv) [derived]",
					 (year - g->year) + in.years, ratio * 100, nc);
			} else {
				snprintf(resale_from, sizeof resale_from, "%g%% [assumption: too few priced cards of that age]",
					 COST_DEFAULT_RESALE_PCT);
			}
		}
	} else if (!resale_given) {
		snprintf(resale_from, sizeof resale_from, "%g%% [assumption]", COST_DEFAULT_RESALE_PCT);
	}
	if (used && !gpu)
		return usage_error("cost", "--used needs --gpu ID (the used price of which card?)");
	if (in.price_usd < 0)
		return usage_error("cost", "give --gpu ID or --price USD");
	if (in.power_w < 0)
		return usage_error("cost", "give --gpu ID or --power W");

	cost_quote q = {0};
	bool quoted = false;
	if (!(in.cloud_usd_h > 0) && g) {
		gw_error err = {0};
		rc = cost_cloud_quote(g, &q, &err);
		if (rc == 0) {
			in.cloud_usd_h = q.usd_h;
			quoted = true;
		} else if (rc == GW_ENOTFOUND) {
			snprintf(no_rent, sizeof no_rent, "%s", err.msg);
		} else {
			gw_errorf("%s", err.msg);
			return GW_EXIT_RUNTIME;
		}
	}
	cost_result r;
	gw_error err = {0};
	if (cost_compute(&in, &r, &err))
		return usage_error("cost", "%s", err.msg);
	if (json)
		print_json(g, &in, price_from, price_date, price_age, resale_from, used, &q, quoted, no_rent, &r);
	else
		print_text(g, &in, price_from, price_date, price_age, resale_from, &q, quoted, no_rent, &r);
	return GW_EXIT_OK;
}

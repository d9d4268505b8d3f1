/*
 * gpuwise cost: own a GPU or rent the same GPU by the hour, in the buyer's
 * currency: every amount in one currency, each conversion stated.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "kb/kb.h"
#include "plan/cost.h"
#include "plan/money.h"
#include "plan/prices.h"
#include "util/json.h"

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise cost [--gpu ID] [--used] [--currency CUR] [--region R] [--price X]\n"
		"                    [--power W] [--system-power W] [--idle-power W] [--host-price X]\n"
		"                    [--kwh-price X] [--hours-per-day H] [--years Y] [--resale PCT]\n"
		"                    [--cloud-rate X] [--storage GB] [--storage-price X] [--json]\n\n"
		"Compare owning a GPU (purchase minus resale, spread over the years, plus\n"
		"electricity) with renting the same GPU by the hour: the monthly cost of each\n"
		"and the break-even hours per month above which owning is cheaper.  Every\n"
		"amount is in one currency; a price quoted in another is converted at a dated\n"
		"rate (data/fx-rates.tsv) and the output says so.\n\n"
		"Options:\n"
		"  --gpu ID            a GPU of the catalog (rtx-4090, rtx-4090-d, h100-sxm ...):\n"
		"                      gives the price, the board power and the cloud rate\n"
		"  --used              buy it used: the median of the card's rows of\n"
		"                      data/used-prices.tsv in its newest 3 months\n"
		"  --currency CUR      the currency of the answer and of every amount given:\n"
		"                      USD, CNY, EUR ... (default: GPUWISE_CURRENCY, else the\n"
		"                      region's, else USD); prices are taken from rows quoted in\n"
		"                      it (CNY: the Chinese market and platforms), else from USD\n"
		"                      rows converted at a dated rate\n"
		"  --region R          electricity price region: us, cn, eu, de (default:\n"
		"                      GPUWISE_REGION, else the currency's; data/electricity.tsv);\n"
		"                      an unknown region needs --kwh-price\n"
		"  --price X           purchase price in the answer currency (15000, 15,000,\n"
		"                      15000 CNY; an amount in another currency is refused)\n"
		"                      (default: the median dated price of data/new-prices.tsv,\n"
		"                      or used-prices.tsv with --used)\n"
		"  --power W           power while working (default: the card's TDP)\n"
		"  --system-power W    share of the rest of the machine while working\n"
		"                      (default 0: a rented GPU comes with its host)\n"
		"  --idle-power W      the whole machine while not working, the other hours of\n"
		"                      each day (default 0: switched off)\n"
		"  --host-price X      the host PC bought for the card, depreciated with it\n"
		"                      (default 0: a PC you already have)\n"
		"  --kwh-price X       electricity per kWh in the answer currency (default: the\n"
		"                      region's household price; U.S. %.2f USD, EIA)\n"
		"  --hours-per-day H   hours of GPU work a day (default %g; --hours H)\n"
		"  --years Y           years of ownership (default %g)\n"
		"  --resale PCT        share of the price recovered at the end (default: the\n"
		"                      median used/launch price ratio of the cards that will\n"
		"                      then be as old, from the used-price table; %g without\n"
		"                      a card or such cards)\n"
		"  --cloud-rate X      rent per hour in the answer currency (default: median\n"
		"                      on-demand price of this GPU, else of the cheapest\n"
		"                      different card near it, named as such; data/cloud-prices.tsv)\n"
		"  --storage GB        storage kept with the rented machine (default %g GB)\n"
		"  --storage-price X   its price per GB and month (default: the median of the\n"
		"                      rent rows' stated prices, one per provider, else 0 and\n"
		"                      said so)\n"
		"  --json              machine-readable output (docs/json-cost.md)\n"
		"  -h, --help          this help\n\n"
		"Exit status: 0 success, 1 a table could not be read, 2 usage error (an amount\n"
		"in another currency than the answer's included).\n"),
		COST_DEFAULT_KWH_USD, COST_DEFAULT_HOURS_PER_DAY, COST_DEFAULT_YEARS, COST_DEFAULT_RESALE_PCT,
		COST_DEFAULT_STORAGE_GB);
}

static int number_opt(const char *name, const char *arg, double min, double max, double *out)
{
	double v;
	if (parse_double(arg, &v) || !isfinite(v) || v < min || v > max)
		return usage_error("cost", "invalid %s '%s' (a number from %g to %g)", name, arg, min, max);
	*out = v;
	return 0;
}

/* One conversion the answer made, for the output. */
typedef struct conversion {
	char what[48];
	double from_amount;
	fx_rate fx;
} conversion;

typedef struct cost_ctx {
	const gpu_spec *g;
	const char *cur, *region;
	bool used;
	cost_input in;
	char price_from[700], resale_from[300], kwh_from[600];
	char price_date[16];
	int price_age;
	bool price_rows_known;      /* the price is a median of table rows */
	size_t price_rows, price_rows_on_record;
	char price_window_from[16]; /* used: oldest row date in the window */
	cost_quote q;
	bool quoted;
	char no_rent[512];
	double storage_gb, storage_price;
	bool storage_price_known;
	bool storage_from_rows; /* storage_price is the median over q.n_storage providers */
	conversion conv[6];
	size_t n_conv;
	cost_result r;
	bool has_market, has_modified;
	market_note market, modified; /* data/markets.tsv: not sold new here / a modified board */
	bool instead_known;
	price_quote instead_q;        /* the card sold in its place, new, in cur */
} cost_ctx;

static void add_conversion(cost_ctx *c, const char *what, double from_amount, const fx_rate *fx)
{
	if (c->n_conv >= sizeof c->conv / sizeof *c->conv)
		return;
	conversion *v = &c->conv[c->n_conv++];
	snprintf(v->what, sizeof v->what, "%s", what);
	v->from_amount = from_amount;
	v->fx = *fx;
}

static void fx_text(char *b, size_t n, const fx_rate *fx)
{
	snprintf(b, n, "1 %s = %.4g %s, %s%s (%s)", fx->from, fx->rate, fx->to, fx->date, fx->via_eur ? _(", via EUR") : "",
		 fx->source);
}

static void print_text(const cost_ctx *c)
{
	FILE *f = stdout;
	const char *b = c_bold(f), *z = c_reset(f), *cur = c->cur;
	const cost_input *in = &c->in;
	const cost_result *r = &c->r;
	double months = in->years * 12;
	printf(_("%sOwn%s%s%s  (all amounts in %s)\n"), b, c->g ? _(" a ") : "", c->g ? c->g->name : "", z, cur);
	printf(_("  purchase        %10.0f %s  (%s)\n"), in->price.amount, cur, c->price_from);
	if (c->used && c->price_rows_known) {
		size_t older = c->price_rows_on_record - c->price_rows;
		if (older)
			printf(P_("  (used: the card's rows of %s to %s, the %d months up to its newest; %zu older row on "
				  "record, not used)\n",
				  "  (used: the card's rows of %s to %s, the %d months up to its newest; %zu older rows on "
				  "record, not used)\n",
				  older),
			       c->price_window_from, c->price_date, PRICE_USED_WINDOW_MONTHS, older);
		else
			printf(_("  (used: the card's rows of %s to %s, the %d months up to its newest; no older row on "
				 "record)\n"),
			       c->price_window_from, c->price_date, PRICE_USED_WINDOW_MONTHS);
	}
	if (c->has_market) {
		char *note = gw_translate_text(c->market.note);
		printf(_("  %snot sold new in %s:%s %s (%s)\n"), c_yellow(f), price_market_name(c->cur), z,
		       note ? note : c->market.note, c->market.source);
		free(note);
		if (!c->used && c->price_rows_known)
			printf(_("  (the purchase price above is a grey-market price in %s)\n"), price_market_name(c->cur));
		if (c->market.instead && c->instead_known)
			printf(_("  compare         %10.0f %s  (%s new in %s: median of %zu dated %s rows, newest %s%s: %s)\n"),
			       c->instead_q.amount, cur, c->market.instead->name, price_market_name(c->cur), c->instead_q.n_rows,
			       c->instead_q.row_currency, c->instead_q.date,
			       c->instead_q.converted ? _(", converted from USD: no row of this market") : "",
			       c->instead_q.source);
		else if (c->market.instead)
			printf(_("  compare         %s, sold new in %s in its place: no price on record, give --gpu %s --price X\n"),
			       c->market.instead->name, price_market_name(c->cur), c->market.instead->id);
	}
	if (c->has_modified) {
		char *note = gw_translate_text(c->modified.note);
		printf(_("  %smodified board:%s %s (%s)\n"), c_yellow(f), z, note ? note : c->modified.note,
		       c->modified.source);
		free(note);
	}
	if (c->price_age > PRICE_STALE_MONTHS)
		printf(_("  %swarning:%s this price is from %s, more than %d months ago: check a current listing or give --price\n"),
		       c_yellow(f), z, c->price_date, PRICE_STALE_MONTHS);
	if (in->host_price.amount > 0)
		printf(_("  host PC         %10.0f %s  (--host-price)\n"), in->host_price.amount, cur);
	printf(_("  resale          %10.0f %s  (%.0f%% after %g years: %s)\n"),
	       (in->price.amount + in->host_price.amount) * in->resale_pct / 100, cur, in->resale_pct, in->years,
	       c->resale_from);
	printf(_("  depreciation    %10.2f %s/month  over %g months\n"), r->depreciation_month, cur, months);
	printf(_("  electricity     %10.2f %s/month  (%g W%s x %.1f h x %.4g %s/kWh: %s"), r->energy_month, cur,
	       in->power_w + in->system_power_w, in->system_power_w > 0 ? _(" with the system") : "", r->hours_month,
	       in->kwh.amount, cur, c->kwh_from);
	if (in->idle_power_w > 0)
		printf(_("; idle %g W the other %.1f h a day: %.2f"), in->idle_power_w, 24 - in->hours_per_day,
		       r->idle_energy_month);
	printf(")\n");
	printf(_("  total           %10.2f %s/month\n"), r->own_month, cur);
	if (!(in->host_price.amount > 0) && !(in->idle_power_w > 0) && !(in->system_power_w > 0))
		printf(_("  (the host PC is not counted: --host-price, --system-power, --idle-power add it)\n"));
	printf(_("%sRent%s\n"), b, z);
	if (!r->has_rent) {
		char *why = *c->no_rent ? gw_translate_text(c->no_rent) : NULL; /* English in the JSON */
		printf(_("  none rented: %s; give --cloud-rate\n"), why ? why : _("no cloud rate known"));
		free(why);
	} else {
		if (c->quoted) {
			const cost_quote *q = &c->q;
			if (q->substitute)
				printf(_("  %snot the same card:%s %s is not rented in the table; the rate below is for %s, a "
				       "different card (%.0f GiB, %.0f GB/s against %.0f GiB, %.0f GB/s)\n"),
				       c_yellow(f), z, c->g->name, q->rented->name, q->rented->vram_bytes / 1073741824.0,
				       q->rented->bandwidth_gbs, c->g->vram_bytes / 1073741824.0, c->g->bandwidth_gbs);
			printf(P_("  rate            %10.4g %s/h  (%s%s, %s, median of %zu offer, range %.4g-%.4g, newest %s)\n",
				  "  rate            %10.4g %s/h  (%s%s, %s, median of %zu offers, range %.4g-%.4g, newest %s)\n",
				  q->n_rows),
			       in->cloud_h.amount, cur, q->substitute ? _("different card: ") : "", q->rented->name, q->tier,
			       q->n_rows, q->min_h, q->max_h, q->date);
			printf(_("  source          %s: %s\n"), q->provider, q->source);
			if (q->n_offers > 1) {
				printf(_("  offers         "));
				for (size_t i = 0; i < q->n_offers; i++)
					printf(_("%s %s %.4g %s/h (%s)"), i ? ";" : "", q->offers[i].provider, q->offers[i].per_h,
					       q->row_cur, q->offers[i].date);
				printf("\n");
			}
			if (q->n_spot)
				printf(P_("  spot            %.4g-%.4g %s/h (%zu offer; interruptible, not used for the comparison)\n",
					  "  spot            %.4g-%.4g %s/h (%zu offers; interruptible, not used for the comparison)\n",
					  q->n_spot),
				       q->spot_min_h, q->spot_max_h, cur, q->n_spot);
		} else {
			printf(_("  rate            %10.4g %s/h  (--cloud-rate)\n"), in->cloud_h.amount, cur);
		}
		if (c->storage_gb > 0 && c->storage_from_rows)
			printf(P_("  storage         %10.2f %s/month  (%g GB x %.4g %s/GB-month: the storage price of the %zu "
				  "provider that states one among the rows compared)\n",
				  "  storage         %10.2f %s/month  (%g GB x %.4g %s/GB-month: the median storage price of the "
				  "%zu providers that state one among the rows compared)\n",
				  c->q.n_storage),
			       r->storage_month, cur, c->storage_gb, c->storage_price, cur, c->q.n_storage);
		else if (c->storage_gb > 0 && c->storage_price_known)
			printf(_("  storage         %10.2f %s/month  (%g GB x %.4g %s/GB-month: --storage-price)\n"),
			       r->storage_month, cur, c->storage_gb, c->storage_price, cur);
		else if (c->storage_gb > 0)
			printf(_("  storage         %10.2f %s/month  (%g GB x %.4g %s/GB-month: no row compared states a "
				 "storage price, give --storage-price)\n"),
			       r->storage_month, cur, c->storage_gb, c->storage_price, cur);
		printf(_("  total           %10.2f %s/month  (%.1f h a month%s)\n"), r->rent_month, cur, r->hours_month,
		       r->storage_month > 0 ? _(" + storage") : "");
		printf(_("%sBreak-even%s\n"), b, z);
		if (!r->has_breakeven) {
			printf(_("  never: electricity alone (%.4g %s/h) costs more than the rent\n"), r->energy_hour, cur);
		} else {
			printf(_("  owning is cheaper above %.0f hours a month (%.1f h a day)"), r->breakeven_hours_month,
			       r->breakeven_hours_day);
			if (r->breakeven_hours_day > 24)
				printf(_(": more than a month has"));
			printf("\n");
			double diff = r->rent_month - r->own_month;
			printf(_("  at %g h a day %s %.0f %s a month (%.0f %s over %g years)\n"), in->hours_per_day,
			       diff >= 0 ? _("owning saves") : _("renting saves"), fabs(diff), cur, fabs(diff) * months, cur,
			       in->years);
		}
	}
	if (c->n_conv) {
		printf(_("%sConverted%s (gpuwise never adds amounts of different currencies)\n"), b, z);
		for (size_t i = 0; i < c->n_conv; i++) {
			char t[400];
			fx_text(t, sizeof t, &c->conv[i].fx);
			printf(_("  %s: %.2f %s at %s\n"), _(c->conv[i].what), c->conv[i].from_amount, c->conv[i].fx.from, t);
		}
	}
}

/* key and its legacy _usd twin: the amount, and the twin only when the answer is in USD. */
static void jmoney(json_t *o, const char *key, const char *usd_key, double v, int digits, const char *cur)
{
	json_object_set_new(o, key, jreal_round(v, digits));
	if (usd_key)
		json_object_set_new(o, usd_key, strcmp(cur, "USD") ? json_null() : jreal_round(v, digits));
}

static void print_json(const cost_ctx *c)
{
	const cost_input *in = &c->in;
	const cost_result *r = &c->r;
	const cost_quote *q = &c->q;
	const char *cur = c->cur;
	bool quoted = c->quoted;
	json_t *j = json_object();
	json_object_set_new(j, "gpu", jstr_or_null(c->g ? c->g->id : NULL));
	json_object_set_new(j, "currency", json_string(cur));
	json_object_set_new(j, "region", jstr_or_null(c->region));
	jmoney(j, "price", "price_usd", in->price.amount, 2, cur);
	json_object_set_new(j, "price_source", json_string(c->price_from));
	json_object_set_new(j, "used", json_boolean(c->used));
	json_object_set_new(j, "price_date", jstr_or_null(*c->price_date ? c->price_date : NULL));
	json_object_set_new(j, "price_age_months", c->price_age >= 0 ? json_integer(c->price_age) : json_null());
	json_object_set_new(j, "price_rows", c->price_rows_known ? json_integer((json_int_t)c->price_rows) : json_null());
	json_object_set_new(j, "price_rows_on_record",
			    c->price_rows_known ? json_integer((json_int_t)c->price_rows_on_record) : json_null());
	json_object_set_new(j, "price_window_from",
			    c->price_rows_known && *c->price_window_from ? json_string(c->price_window_from) : json_null());
	jmoney(j, "host_price", NULL, in->host_price.amount, 2, cur);
	json_object_set_new(j, "resale_pct", jreal_round(in->resale_pct, 2));
	json_object_set_new(j, "resale_source", json_string(c->resale_from));
	json_object_set_new(j, "years", jreal_round(in->years, 3));
	json_object_set_new(j, "power_w", jreal_round(in->power_w, 1));
	json_object_set_new(j, "system_power_w", jreal_round(in->system_power_w, 1));
	json_object_set_new(j, "idle_power_w", jreal_round(in->idle_power_w, 1));
	jmoney(j, "kwh_price", "kwh_price_usd", in->kwh.amount, 4, cur);
	json_object_set_new(j, "kwh_price_source", json_string(c->kwh_from));
	json_object_set_new(j, "hours_per_day", jreal_round(in->hours_per_day, 3));
	json_object_set_new(j, "hours_per_month", jreal_round(r->hours_month, 2));
	json_t *own = json_object();
	jmoney(own, "depreciation_month", "depreciation_usd_month", r->depreciation_month, 2, cur);
	jmoney(own, "energy_month", "energy_usd_month", r->energy_month, 2, cur);
	jmoney(own, "energy_hour", "energy_usd_hour", r->energy_hour, 4, cur);
	jmoney(own, "idle_energy_month", NULL, r->idle_energy_month, 2, cur);
	jmoney(own, "total_month", "total_usd_month", r->own_month, 2, cur);
	jmoney(own, "total", "total_usd", r->own_total, 2, cur);
	json_object_set_new(j, "own", own);
	/* data/markets.tsv: the card is not sold new in this market (and what is), a modified board */
	json_t *mk = json_object();
	json_object_set_new(mk, "not_sold_new", json_boolean(c->has_market));
	json_object_set_new(mk, "instead", jstr_or_null(c->has_market && c->market.instead ? c->market.instead->id : NULL));
	json_object_set_new(mk, "instead_price", jreal_or_null(c->instead_known, c->instead_known ? c->instead_q.amount : 0));
	json_object_set_new(mk, "instead_price_date", jstr_or_null(c->instead_known ? c->instead_q.date : NULL));
	json_object_set_new(mk, "note", jstr_or_null(c->has_market ? c->market.note : NULL));
	json_object_set_new(mk, "source", jstr_or_null(c->has_market ? c->market.source : NULL));
	json_object_set_new(mk, "modified", json_boolean(c->has_modified));
	json_object_set_new(mk, "modified_note", jstr_or_null(c->has_modified ? c->modified.note : NULL));
	json_object_set_new(j, "market", mk);
	if (r->has_rent) {
		json_t *rent = json_object();
		jmoney(rent, "per_hour", "usd_per_hour", in->cloud_h.amount, 4, cur);
		json_object_set_new(rent, "gpu", jstr_or_null(quoted ? q->rented->id : NULL));
		json_object_set_new(rent, "different_card", json_boolean(quoted && q->substitute));
		json_object_set_new(rent, "same_class_substitute", json_boolean(quoted && q->substitute));
		json_object_set_new(rent, "offers", quoted ? json_integer((json_int_t)q->n_rows) : json_null());
		json_t *ol = json_array();
		for (size_t i = 0; quoted && i < q->n_offers; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "provider", json_string(q->offers[i].provider));
			json_object_set_new(o, "per_hour", jreal_round(q->offers[i].per_h, 4));
			json_object_set_new(o, "currency", json_string(q->row_cur));
			json_object_set_new(o, "date", json_string(q->offers[i].date));
			json_array_append_new(ol, o);
		}
		json_object_set_new(rent, "offer_list", ol);
		json_object_set_new(rent, "min_per_hour", jreal_or_null(quoted, quoted ? q->min_h : 0));
		json_object_set_new(rent, "max_per_hour", jreal_or_null(quoted, quoted ? q->max_h : 0));
		json_object_set_new(rent, "min_usd_per_hour", jreal_or_null(quoted && !strcmp(cur, "USD"), q->min_h));
		json_object_set_new(rent, "max_usd_per_hour", jreal_or_null(quoted && !strcmp(cur, "USD"), q->max_h));
		json_object_set_new(rent, "tier", jstr_or_null(quoted ? q->tier : "user"));
		json_object_set_new(rent, "quoted_currency", jstr_or_null(quoted ? q->row_cur : NULL));
		if (quoted && q->n_spot) {
			json_t *sp = json_object();
			json_object_set_new(sp, "offers", json_integer((json_int_t)q->n_spot));
			json_object_set_new(sp, "min_per_hour", jreal_round(q->spot_min_h, 4));
			json_object_set_new(sp, "max_per_hour", jreal_round(q->spot_max_h, 4));
			json_object_set_new(rent, "spot", sp);
		} else {
			json_object_set_new(rent, "spot", json_null());
		}
		json_object_set_new(rent, "date", jstr_or_null(quoted ? q->date : NULL));
		json_object_set_new(rent, "source", jstr_or_null(quoted ? q->source : "--cloud-rate"));
		json_object_set_new(rent, "storage_gb", jreal_round(c->storage_gb, 1));
		json_object_set_new(rent, "storage_price_known", json_boolean(c->storage_price_known));
		json_object_set_new(rent, "storage_price_providers",
				    c->storage_from_rows ? json_integer((json_int_t)c->q.n_storage) : json_null());
		jmoney(rent, "storage_month", NULL, r->storage_month, 2, cur);
		jmoney(rent, "total_month", "total_usd_month", r->rent_month, 2, cur);
		jmoney(rent, "total", "total_usd", r->rent_total, 2, cur);
		json_object_set_new(j, "rent", rent);
	} else {
		json_object_set_new(j, "rent", json_null());
	}
	json_object_set_new(j, "no_rent_reason", jstr_or_null(r->has_rent || !*c->no_rent ? NULL : c->no_rent));
	json_object_set_new(j, "breakeven_hours_month", r->has_breakeven ? jreal_round(r->breakeven_hours_month, 2) : json_null());
	json_object_set_new(j, "breakeven_hours_day", r->has_breakeven ? jreal_round(r->breakeven_hours_day, 3) : json_null());
	const char *cheaper = NULL;
	if (r->has_rent)
		cheaper = r->own_month <= r->rent_month ? "own" : "rent";
	json_object_set_new(j, "cheaper", jstr_or_null(cheaper));
	json_t *cv = json_array();
	for (size_t i = 0; i < c->n_conv; i++) {
		const conversion *v = &c->conv[i];
		json_t *o = json_object();
		json_object_set_new(o, "what", json_string(v->what));
		json_object_set_new(o, "from_amount", jreal_round(v->from_amount, 4));
		json_object_set_new(o, "from", json_string(v->fx.from));
		json_object_set_new(o, "to", json_string(v->fx.to));
		json_object_set_new(o, "rate", jreal_round(v->fx.rate, 6));
		json_object_set_new(o, "date", json_string(v->fx.date));
		json_object_set_new(o, "via_eur", json_boolean(v->fx.via_eur));
		json_object_set_new(o, "source", json_string(v->fx.source ? v->fx.source : ""));
		json_array_append_new(cv, o);
	}
	json_object_set_new(j, "conversions", cv);
	json_print(j, stdout);
	json_decref(j);
}

/* Convert m to the answer currency, recording the conversion; GW_EXIT_RUNTIME on a table error. */
static int to_answer(cost_ctx *c, const char *what, money m, money *out)
{
	fx_rate fx;
	gw_error err = {0};
	int rc = money_convert(m, c->cur, out, &fx, &err);
	if (rc == GW_ENOTFOUND)
		return usage_error("cost", "%s", gw_error_text(&err));
	if (rc) {
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	if (strcmp(m.cur, c->cur))
		add_conversion(c, what, m.amount, &fx);
	return 0;
}

enum { OPT_CURRENCY = 0x100, OPT_REGION, OPT_HOST, OPT_IDLE, OPT_STORAGE, OPT_STORAGE_PRICE };

int cmd_cost(int argc, char **argv)
{
	static const struct option opts[] = {
		{"gpu", required_argument, NULL, 'g'},
		{"price", required_argument, NULL, 'p'},
		{"used", no_argument, NULL, 'u'},
		{"power", required_argument, NULL, 'w'},
		{"system-power", required_argument, NULL, 's'},
		{"idle-power", required_argument, NULL, OPT_IDLE},
		{"host-price", required_argument, NULL, OPT_HOST},
		{"kwh-price", required_argument, NULL, 'k'},
		{"hours-per-day", required_argument, NULL, 'H'},
		{"hours", required_argument, NULL, 'H'},
		{"years", required_argument, NULL, 'y'},
		{"resale", required_argument, NULL, 'r'},
		{"cloud-rate", required_argument, NULL, 'c'},
		{"storage", required_argument, NULL, OPT_STORAGE},
		{"storage-price", required_argument, NULL, OPT_STORAGE_PRICE},
		{"currency", required_argument, NULL, OPT_CURRENCY},
		{"region", required_argument, NULL, OPT_REGION},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	/* amounts are parsed once the currency is known: keep their text */
	const char *price_arg = NULL, *kwh_arg = NULL, *cloud_arg = NULL, *host_arg = NULL, *sprice_arg = NULL;
	const char *gpu = NULL, *cur_opt = NULL, *region_opt = NULL;
	static cost_ctx c;
	memset(&c, 0, sizeof c);
	c.in.resale_pct = COST_DEFAULT_RESALE_PCT;
	c.in.years = COST_DEFAULT_YEARS;
	c.in.power_w = -1;
	c.in.hours_per_day = COST_DEFAULT_HOURS_PER_DAY;
	c.storage_gb = COST_DEFAULT_STORAGE_GB;
	c.price_age = -1;
	bool json = false, resale_given = false;
	int ch, rc;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'g': gpu = optarg; break;
		case 'p': price_arg = optarg; break;
		case 'w': if ((rc = number_opt("--power", optarg, 0, 100000, &c.in.power_w))) return rc; break;
		case 's': if ((rc = number_opt("--system-power", optarg, 0, 100000, &c.in.system_power_w))) return rc; break;
		case OPT_IDLE: if ((rc = number_opt("--idle-power", optarg, 0, 100000, &c.in.idle_power_w))) return rc; break;
		case OPT_HOST: host_arg = optarg; break;
		case 'k': kwh_arg = optarg; break;
		case 'H': if ((rc = number_opt("--hours-per-day", optarg, 0.01, 24, &c.in.hours_per_day))) return rc; break;
		case 'y': if ((rc = number_opt("--years", optarg, 0.1, 50, &c.in.years))) return rc; break;
		case 'r':
			if ((rc = number_opt("--resale", optarg, 0, 100, &c.in.resale_pct)))
				return rc;
			resale_given = true;
			break;
		case 'u': c.used = true; break;
		case 'c': cloud_arg = optarg; break;
		case OPT_STORAGE: if ((rc = number_opt("--storage", optarg, 0, 1e6, &c.storage_gb))) return rc; break;
		case OPT_STORAGE_PRICE: sprice_arg = optarg; break;
		case OPT_CURRENCY: cur_opt = optarg; break;
		case OPT_REGION: region_opt = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		case ':': return usage_error("cost", "option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("cost", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("cost", "unexpected argument '%s'", argv[optind]);
	{
		gw_error kerr = {0};
		if (kb_gpus_load(&kerr)) { /* a broken --data-dir table is not an unknown GPU */
			gw_errorf("%s", gw_error_text(&kerr));
			return GW_EXIT_RUNTIME;
		}
	}
	if ((rc = money_context("cost", cur_opt, region_opt, &c.cur, &c.region)))
		return rc;
	const char *cur = c.cur;
	double v;
	c.in.price = money_of(-1, cur);
	c.in.host_price = money_of(0, cur);
	c.in.cloud_h = money_of(0, cur);
	c.in.storage_month = money_of(0, cur);
	if (price_arg) {
		if ((rc = parse_money_opt("cost", "--price", price_arg, 1e10, cur, &v)))
			return rc;
		c.in.price.amount = v;
		snprintf(c.price_from, sizeof c.price_from, "--price");
	}
	if (host_arg) {
		if ((rc = parse_money_opt("cost", "--host-price", host_arg, 1e10, cur, &v)))
			return rc;
		c.in.host_price.amount = v;
	}
	if (cloud_arg) {
		if ((rc = parse_money_opt("cost", "--cloud-rate", cloud_arg, 1e6, cur, &v)))
			return rc;
		if (!(v > 0))
			return usage_error("cost", "invalid --cloud-rate '%s' (an amount above 0)", cloud_arg);
		c.in.cloud_h.amount = v;
	}
	if (sprice_arg) {
		if ((rc = parse_money_opt("cost", "--storage-price", sprice_arg, 1e6, cur, &c.storage_price)))
			return rc;
		c.storage_price_known = true;
	}
	/* electricity: --kwh-price in the answer currency, else the region's row */
	if (kwh_arg) {
		if ((rc = parse_money_opt("cost", "--kwh-price", kwh_arg, 10000, cur, &v)))
			return rc;
		c.in.kwh = money_of(v, cur);
		snprintf(c.kwh_from, sizeof c.kwh_from, "--kwh-price");
	} else {
		region_power rp;
		gw_error err = {0};
		if (!c.region)
			return usage_error("cost", "no electricity price for currency %s: give --region (us, cn, eu, de) or "
						   "--kwh-price",
					   cur);
		rc = money_region_power(c.region, &rp, &err);
		if (rc == GW_ENOTFOUND)
			return usage_error("cost", "%s; give --kwh-price", gw_error_text(&err));
		if (rc) {
			gw_errorf("%s", gw_error_text(&err));
			return GW_EXIT_RUNTIME;
		}
		if ((rc = to_answer(&c, N_("electricity"), rp.kwh, &c.in.kwh)))
			return rc;
		/* the *_from texts are English under --json (main.c turns the catalog off) */
		snprintf(c.kwh_from, sizeof c.kwh_from, _("%s household price, %s: %s"), rp.name, rp.date, rp.source);
	}

	time_t now = time(NULL);
	struct tm tmv;
	gmtime_r(&now, &tmv);
	int year = tmv.tm_year + 1900, month = tmv.tm_mon + 1;
	const gpu_spec *g = NULL;
	if (gpu) {
		g = c.g = kb_gpu_find(gpu);
		if (!g) {
			const gpu_spec *s = kb_gpu_suggest(gpu);
			return usage_error("cost", "unknown GPU '%s'%s%s%s (gpuwise list gpus shows the catalog)", gpu,
					   s ? " (did you mean '" : "", s ? s->id : "", s ? "'?)" : "");
		}
		if (c.in.price.amount < 0) {
			price_quote pq;
			gw_error perr = {0};
			if (price_quote_in(g, c.used, false, year, cur, &pq, &perr)) {
				gw_errorf("%s", gw_error_text(&perr));
				return GW_EXIT_RUNTIME;
			}
			if (!pq.known) {
				price_quote other;
				bool alt = !price_quote_in(g, !c.used, false, year, cur, &other, NULL) && other.known;
				char hint[160] = "";
				if (pq.other_currency[0])
					snprintf(hint, sizeof hint, "--currency %s (its %s prices are quoted there) or ",
						 pq.other_currency, c.used ? "used" : "new");
				else if (alt)
					snprintf(hint, sizeof hint, "%s (%s: %.0f %s, %s) or ", c.used ? "leave out --used" : "give --used",
						 c.used ? "new" : "used", other.amount, other.currency, other.date);
				return usage_error("cost", "no %s price in %s on record for '%s'%s; %s--price X",
						   c.used ? "used" : "new", cur, g->id, c.used || pq.other_currency[0] ? "" : " (not on sale new)",
						   hint);
			}
			c.in.price.amount = pq.amount;
			int age = price_age_months(pq.date, year, month);
			snprintf(c.price_from, sizeof c.price_from,
				 c.used ? P_("used price, median of %zu dated %s row (%.0f-%.0f %s), newest %s%s: %s",
					     "used price, median of %zu dated %s rows (%.0f-%.0f %s), newest %s%s: %s", pq.n_rows)
					: P_("new price, median of %zu dated %s row (%.0f-%.0f %s), newest %s%s: %s",
					     "new price, median of %zu dated %s rows (%.0f-%.0f %s), newest %s%s: %s", pq.n_rows),
				 pq.n_rows, pq.row_currency, pq.min_amount, pq.max_amount, pq.currency, pq.date,
				 age > PRICE_STALE_MONTHS ? _(", more than 6 months old") : "", pq.source);
			if (pq.converted)
				add_conversion(&c, N_("purchase price"), pq.row_amount, &pq.fx);
			snprintf(c.price_date, sizeof c.price_date, "%s", pq.date);
			c.price_age = age;
			c.price_rows_known = true;
			c.price_rows = pq.n_rows;
			c.price_rows_on_record = pq.n_on_record;
			snprintf(c.price_window_from, sizeof c.price_window_from, "%s", pq.date_from);
		}
		c.has_market = price_market_note(g, cur, "not-sold-new", &c.market);
		c.has_modified = price_market_note(g, cur, "modified", &c.modified);
		if (c.has_market && c.market.instead)
			c.instead_known = !price_quote_in(c.market.instead, false, false, year, cur, &c.instead_q, NULL) &&
					  c.instead_q.known;
		if (c.in.power_w < 0)
			c.in.power_w = g->tdp_w;
		if (!resale_given) {
			double rusd, ratio;
			size_t nc;
			money launch;
			if (cost_resale(g, c.in.years, year, &rusd, &ratio, &nc) && c.in.price.amount > 0 &&
			    !to_answer(&c, N_("launch price (for the resale)"), money_of(g->price_usd, "USD"), &launch)) {
				double pct = launch.amount * ratio / c.in.price.amount * 100;
				c.in.resale_pct = pct > 100 ? 100 : pct;
				snprintf(c.resale_from, sizeof c.resale_from,
					 _("cards %.0f+-1 years old sell used for a median %.0f%% of their launch price (%zu cards, "
					   "used-prices.tsv) [derived]"),
					 (year - g->year) + c.in.years, ratio * 100, nc);
			} else {
				snprintf(c.resale_from, sizeof c.resale_from, _("%g%% [assumption: %s]"), COST_DEFAULT_RESALE_PCT,
					 g->price_usd > 0 ? _("too few priced cards of that age")
							  : _("no catalog launch price to compare with"));
			}
		}
	} else if (!resale_given) {
		snprintf(c.resale_from, sizeof c.resale_from, _("%g%% [assumption]"), COST_DEFAULT_RESALE_PCT);
	}
	if (resale_given)
		snprintf(c.resale_from, sizeof c.resale_from, "--resale");
	if (c.used && !gpu)
		return usage_error("cost", "--used needs --gpu ID (the used price of which card?)");
	if (c.in.price.amount < 0)
		return usage_error("cost", "give --gpu ID or --price X");
	if (c.in.power_w < 0)
		return usage_error("cost", "give --gpu ID or --power W");

	if (!(c.in.cloud_h.amount > 0) && g) {
		gw_error err = {0};
		rc = cost_cloud_quote(g, cur, &c.q, &err);
		if (rc == 0) {
			c.in.cloud_h.amount = c.q.per_h;
			c.quoted = true;
			if (c.q.converted)
				add_conversion(&c, N_("rent per hour"), c.q.per_h / c.q.fx.rate, &c.q.fx);
			if (!c.storage_price_known && c.q.storage_known) {
				c.storage_price = c.q.storage_gb_month;
				c.storage_price_known = true;
				c.storage_from_rows = true;
			}
		} else if (rc == GW_ENOTFOUND) {
			snprintf(c.no_rent, sizeof c.no_rent, "%s", err.msg);
		} else {
			gw_errorf("%s", gw_error_text(&err));
			return GW_EXIT_RUNTIME;
		}
	}
	c.in.storage_month.amount = c.storage_gb * c.storage_price;
	gw_error err = {0};
	if (cost_compute(&c.in, &c.r, &err))
		return usage_error("cost", "%s", gw_error_text(&err));
	if (json)
		print_json(&c);
	else
		print_text(&c);
	return GW_EXIT_OK;
}

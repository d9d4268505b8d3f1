/*
 * common.c: helpers shared by the commands.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "model/model.h"
#include "util/json.h"
#include "kb/kb.h"
#include "plan/money.h"

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpuwise: ", stderr);
	/* every caller passes a literal, extracted by `make pot` (keyword usage_error:2) */
	vfprintf(stderr, _(fmt), ap);
	fprintf(stderr, _("\ntry 'gpuwise %s --help'\n"), cmd);
	va_end(ap);
	return GW_EXIT_USAGE;
}

/* ---- input as people type it ------------------------------------------ */

/* "1,000.5" (commas only between groups of three digits) into *out, 0..max; -1 when it is not one. */
static int parse_usd_number(const char *s, double max, double *out)
{
	char buf[64];
	size_t n = 0;
	for (const char *p = s; *p && n < sizeof buf - 1; p++) {
		if (*p == ',') {
			if (p == s || !isdigit((unsigned char)p[-1]) || strspn(p + 1, "0123456789") < 3 ||
			    (p[4] && p[4] != ',' && p[4] != '.'))
				return -1;
			continue;
		}
		buf[n++] = *p;
	}
	buf[n] = 0;
	double v;
	if (!*buf || parse_double(buf, &v) || !(v >= 0) || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * An amount of money in currency cur: "15000", "15,000", "15000 CNY",
 * "CNY15000", "$1000" (USD), "¥15000" (CNY or JPY, whichever cur is),
 * "€900" (EUR).  An amount that names another currency than cur is
 * refused: an answer never mixes currencies.
 */
int parse_money_opt(const char *cmd, const char *opt, const char *arg, double max, const char *cur, double *out)
{
	char buf[64], named[4] = "";
	const char *s = arg;
	size_t len;
	if (*s == '$') {
		snprintf(named, sizeof named, "USD");
		s++;
	} else if (!strncmp(s, "\xc2\xa5", 2) || !strncmp(s, "\xef\xbf\xa5", 3)) { /* yen/yuan sign, half or full width */
		snprintf(named, sizeof named, "%s", !strcmp(cur, "JPY") ? "JPY" : "CNY");
		s += (unsigned char)*s == 0xc2 ? 2 : 3;
	} else if (!strncmp(s, "\xe2\x82\xac", 3)) {
		snprintf(named, sizeof named, "EUR");
		s += 3;
	} else if (isalpha((unsigned char)s[0]) && isalpha((unsigned char)s[1]) && isalpha((unsigned char)s[2])) {
		for (int k = 0; k < 3; k++)
			named[k] = (char)toupper((unsigned char)s[k]);
		named[3] = 0;
		s += 3;
	}
	while (*named && *s == ' ') /* "CNY 15000"; a bare " 500" stays invalid */
		s++;
	len = strlen(s);
	if (len >= 3 && isalpha((unsigned char)s[len - 1]) && isalpha((unsigned char)s[len - 2]) &&
	    isalpha((unsigned char)s[len - 3])) {
		if (*named)
			goto bad;
		for (int k = 0; k < 3; k++)
			named[k] = (char)toupper((unsigned char)s[len - 3 + k]);
		named[3] = 0;
		len -= 3;
		while (len && s[len - 1] == ' ')
			len--;
	}
	if (len >= sizeof buf)
		goto bad;
	memcpy(buf, s, len);
	buf[len] = 0;
	double v;
	if (parse_usd_number(buf, max, &v))
		goto bad;
	if (*named && strcmp(named, cur))
		return usage_error(cmd, "%s '%s' is in %s, but this answer is in %s: give it in %s (or --currency %s); "
					"gpuwise never mixes currencies",
				   opt, arg, named, cur, cur, named);
	*out = v;
	return 0;
bad:
	return usage_error(cmd, "invalid %s '%s' (an amount in %s, e.g. 1000, 1,000 or 1000 %s)", opt, arg, cur, cur);
}

bool money_opt_currency(const char *arg, char out[4])
{
	const char *s = arg;
	size_t len = strlen(s);
	out[0] = 0;
	if (*s == '$')
		snprintf(out, 4, "USD");
	else if (!strncmp(s, "\xc2\xa5", 2) || !strncmp(s, "\xef\xbf\xa5", 3))
		snprintf(out, 4, "CNY");
	else if (!strncmp(s, "\xe2\x82\xac", 3))
		snprintf(out, 4, "EUR");
	else if (len >= 3 && isalpha((unsigned char)s[0]) && isalpha((unsigned char)s[1]) && isalpha((unsigned char)s[2]))
		for (int k = 0; k < 3; k++)
			out[k] = (char)toupper((unsigned char)s[k]);
	else if (len >= 3 && isalpha((unsigned char)s[len - 1]) && isalpha((unsigned char)s[len - 2]) &&
		 isalpha((unsigned char)s[len - 3]))
		for (int k = 0; k < 3; k++)
			out[k] = (char)toupper((unsigned char)s[len - 3 + k]);
	if (out[0])
		out[3] = 0;
	return out[0] != 0;
}

int parse_size_opt(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	uint64_t b;
	if (*arg && strspn(arg, "0123456789. ") == strlen(arg))
		return usage_error(cmd, "%s '%s' has no unit: write %sG (GiB), %sGB (10^9 bytes) or %sM (MiB)", opt,
				   arg, arg, arg, arg);
	if (parse_size(arg, &b) || b == 0)
		return usage_error(cmd, "invalid %s '%s' (a size with a unit: 8G, 8GiB, 8GB, 512M)", opt, arg);
	*out = b;
	return 0;
}

int parse_ctx_opt(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	char buf[32];
	size_t len = strlen(arg);
	double mult = 1;
	if (len == 0 || len >= sizeof buf)
		goto bad;
	memcpy(buf, arg, len + 1);
	if (buf[len - 1] == 'k' || buf[len - 1] == 'K') {
		mult = 1024; /* 128k context = 131072 tokens, as llama.cpp and model cards count */
		buf[--len] = 0;
	} else if (buf[len - 1] == 'm' || buf[len - 1] == 'M') {
		mult = 1048576;
		buf[--len] = 0;
	}
	double v;
	if (!len || strspn(buf, "0123456789.") != len || parse_double(buf, &v) || !(v > 0))
		goto bad;
	v *= mult;
	if (v < 1 || v > 100000000 || v != (double)(uint64_t)v)
		goto bad;
	*out = (uint64_t)v;
	return 0;
bad:
	return usage_error(cmd, "invalid %s '%s' (tokens: 8192, 32k or 128K; k = 1024)", opt, arg);
}

/* Shorthands people type for a weight format, per engine family. */
static const struct {
	const char *in[6];
	const char *gguf, *hf, *what;
} quant_aliases[] = {
	{{"q4", "int4", "4bit", "4-bit", "4", NULL}, "q4_k_m", "awq-int4", "4-bit"},
	{{"q8", "int8", "8bit", "8-bit", "8", NULL}, "q8_0", "int8", "8-bit"},
	{{"q5", "5bit", "5-bit", NULL}, "q5_k_m", "q5_k_m", "5-bit"},
	{{"q6", "6bit", "6-bit", NULL}, "q6_k", "q6_k", "6-bit"},
	{{"q3", "3bit", "3-bit", NULL}, "q3_k_m", "q3_k_m", "3-bit"},
	{{"q2", "2bit", "2-bit", NULL}, "q2_k", "q2_k", "2-bit"},
	{{"fp8", "float8", "e4m3", "8bit-float", NULL}, "fp8", "fp8", "8-bit float"},
	{{"fp16", "half", "float16", "16bit", "16-bit", NULL}, "f16", "fp16", "16-bit float"},
};

const char *quant_resolve(const char *cmd, const char *q, bool gguf_engine)
{
	for (size_t i = 0; i < sizeof quant_aliases / sizeof *quant_aliases; i++)
		for (size_t k = 0; k < 6 && quant_aliases[i].in[k]; k++)
			if (strcasecmp(q, quant_aliases[i].in[k]) == 0) {
				const char *to = gguf_engine ? quant_aliases[i].gguf : quant_aliases[i].hf;
				if (strcasecmp(to, q) != 0)
					fprintf(stderr, _("gpuwise: %s: --quant '%s' read as %s (%s%s); give the exact name to "
							  "choose another (gpuwise list quants)\n"),
						cmd, q, to, quant_aliases[i].what,
						gguf_engine ? _(", llama.cpp's usual pick") : "");
				return to;
			}
	return q;
}

void quant_names(char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < kb_quant_count() && len + 1 < n; i++) {
		const quant_spec *q = kb_quant_at(i);
		if (q->kind == QK_GGUF_TYPE)
			continue; /* the recipes and formats are what people choose */
		int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", q->id);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	if (len + 16 < n)
		snprintf(buf + len, n - len, ", f16, bf16, f32");
}

int money_context(const char *cmd, const char *cur_opt, const char *region_opt, const char **cur, const char **region)
{
	static char cur_buf[4];
	const char *c = cur_opt ? cur_opt : getenv("GPUWISE_CURRENCY");
	const char *r = region_opt ? region_opt : getenv("GPUWISE_REGION");
	if (c && !*c)
		c = NULL;
	if (r && !*r)
		r = NULL;
	if (!c && !r && gw_i18n_zh()) {
		/* issue 24: a reader under zh_CN buys in China unless told otherwise (text output
		 * only: --json turns the catalog off, so its defaults stay those of every locale) */
		r = "cn";
		fprintf(stderr, "gpuwise: %s\n", _("prices in CNY for region cn, the defaults under zh_CN (--currency USD or "
						    "--region us to change)"));
	}
	if (c) {
		if (strlen(c) != 3)
			return usage_error(cmd, "invalid currency '%s' (an ISO 4217 code: USD, CNY, EUR ...)", c);
		for (int k = 0; k < 3; k++)
			cur_buf[k] = (char)toupper((unsigned char)c[k]);
		cur_buf[3] = 0;
		c = cur_buf;
	} else if (r && money_region_currency(r)) {
		c = money_region_currency(r);
	} else {
		c = "USD";
	}
	money m;
	fx_rate fx;
	gw_error err = {0};
	int rc = money_convert(money_of(1, "USD"), c, &m, &fx, &err);
	if (rc == GW_ENOTFOUND || !money_currency_ok(c))
		return usage_error(cmd, "no dated exchange rate for currency '%s' in data/fx-rates.tsv (add a row with "
					"--data-dir, or use USD, CNY, EUR, GBP, JPY ...)",
				   c);
	if (rc) {
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	*cur = c;
	*region = r ? r : money_currency_region(c);
	return 0;
}

/* ---- where a model came from ------------------------------------------ */

void model_origin_print(FILE *f, const model_desc *m)
{
	const model_origin *o = &m->origin;
	char b[32];
	const char *path = m->path ? m->path : "";
	switch (o->store) {
	case MODEL_STORE_OLLAMA:
		fprintf(f, _("from Ollama's store: %s (%s)\n"), o->ref, path);
		break;
	case MODEL_STORE_HF_CACHE:
		fprintf(f, _("from the Hugging Face cache: %s at revision %s (%s)\n"), o->ref,
			o->revision ? o->revision : "?", path);
		break;
	case MODEL_STORE_LMSTUDIO:
		fprintf(f, _("from LM Studio's models: %s (%s)\n"), o->ref, path);
		break;
	case MODEL_STORE_HUB:
	case MODEL_STORE_REGISTRY:
		fprintf(f, o->store == MODEL_STORE_HUB ? _("from the Hugging Face Hub: %s@%.12s (%s")
						       : _("from Ollama's registry: %s, %.19s (%s"),
			o->ref ? o->ref : "", o->revision ? o->revision : "?", o->read ? o->read : "");
		if (o->requests)
			fprintf(f, _(", %s in %u requests)\n"), fmt_bytes(b, sizeof b, o->read_bytes), o->requests);
		else
			fprintf(f, _(", from the cache)\n"));
		break;
	case MODEL_STORE_CATALOG:
		if (o->note) /* the network was not used: why */
			fprintf(f, _("from the catalog: %s\n"), o->note);
		break;
	default:
		break;
	}
	if (o->num_ctx)
		fprintf(f, _("  its Modelfile sets num_ctx %llu: the context planned unless --ctx\n"),
			(unsigned long long)o->num_ctx);
	if (o->has_num_gpu)
		fprintf(f, _("  its Modelfile sets num_gpu %u: the layers on the GPU unless --gpu-layers\n"), o->num_gpu);
	if (o->projector)
		fprintf(f, _("  a vision projector of %s (%s), loaded too when images are sent; not in the plan below\n"),
			fmt_bytes(b, sizeof b, o->projector_bytes), o->projector);
	if (o->note && o->store != MODEL_STORE_CATALOG)
		fprintf(f, "  %s\n", _(o->note));
}

json_t *model_origin_json(const model_desc *m)
{
	const model_origin *o = &m->origin;
	json_t *j = json_object();
	json_object_set_new(j, "store", json_string(model_store_name(o->store)));
	json_object_set_new(j, "ref", o->ref ? json_string(o->ref) : json_null());
	json_object_set_new(j, "path", m->path ? json_string(m->path) : json_null());
	json_object_set_new(j, "revision", o->revision ? json_string(o->revision) : json_null());
	json_object_set_new(j, "file_bytes", jint_or_null(o->file_bytes > 0, (long long)o->file_bytes));
	json_object_set_new(j, "projector_path", o->projector ? json_string(o->projector) : json_null());
	json_object_set_new(j, "projector_bytes", jint_or_null(o->projector != NULL, (long long)o->projector_bytes));
	json_object_set_new(j, "num_ctx", jint_or_null(o->num_ctx > 0, (long long)o->num_ctx));
	json_object_set_new(j, "num_gpu", jint_or_null(o->has_num_gpu, o->num_gpu));
	json_object_set_new(j, "note", o->note ? json_string(o->note) : json_null());
	bool remote = o->store == MODEL_STORE_HUB || o->store == MODEL_STORE_REGISTRY;
	json_object_set_new(j, "read", remote && o->read ? json_string(o->read) : json_null());
	json_object_set_new(j, "read_bytes", jint_or_null(remote, (long long)o->read_bytes));
	json_object_set_new(j, "requests", jint_or_null(remote, (long long)o->requests));
	return j;
}

/*
 * gpuwise list gpus|models|quants [FILTER]: the catalog, each row with its
 * source, so a user can see what gpuwise knows without the source tree.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "kb/kb.h"
#include "model/model.h"
#include "plan/prices.h"
#include "util/json.h"

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise list gpus|models|quants [FILTER] [--json]\n"
		"       gpuwise list models --installed [FILTER] [--json]\n\n"
		"List what gpuwise knows: the GPUs (memory, bandwidth, today's new and used\n"
		"prices with their dates), the models (LLMs and image models) and the weight\n"
		"formats, each row with its source.  FILTER keeps the rows whose id, name,\n"
		"aliases or vendor contain it (case-insensitive).  The tables are built in;\n"
		"--data-dir DIR reads DIR/NAME.tsv instead (docs/data-tables.md).\n\n"
		"Options:\n"
		"  --installed         the models on this machine: Ollama's store, the Hugging\n"
		"                      Face cache and LM Studio's folders, each with its exact\n"
		"                      size on disk and the name `plan` takes\n"
		"  --json              one JSON object (docs/json-list.md)\n"
		"  -h, --help          this help\n\n"
		"Exit status: 0 rows listed, 4 no row matches FILTER, 2 usage error,\n"
		"1 a table cannot be read.\n"));
}

static bool matches(const char *filter, const char *a, const char *b, const char *c, const char *d)
{
	if (!filter)
		return true;
	const char *f[] = {a, b, c, d};
	for (size_t i = 0; i < 4; i++)
		if (f[i] && strcasestr(f[i], filter))
			return true;
	return false;
}

static json_t *price_json(const price_quote *q)
{
	if (!q->known)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "price", jreal_round(q->amount, 2));
	json_object_set_new(o, "currency", json_string(q->currency));
	json_object_set_new(o, "usd", strcmp(q->currency, "USD") ? json_null() : jreal_round(q->amount, 2));
	json_object_set_new(o, "date", json_string(q->date));
	json_object_set_new(o, "rows", json_integer((json_int_t)q->n_rows));
	json_object_set_new(o, "rows_on_record", json_integer((json_int_t)q->n_on_record));
	json_object_set_new(o, "window_from", jstr_or_null(q->date_from[0] ? q->date_from : NULL));
	json_object_set_new(o, "source", jstr_or_null(q->source));
	return o;
}

static void fmt_price(char *b, size_t n, const price_quote *q)
{
	if (q->known)
		snprintf(b, n, "%.0f%s%s (%s)", q->amount, strcmp(q->currency, "USD") ? " " : "",
			 strcmp(q->currency, "USD") ? q->currency : "", q->date);
	else
		snprintf(b, n, "-");
}

static int list_gpus(const char *filter, bool json, int year)
{
	json_t *arr = json ? json_array() : NULL;
	const char *hdr[] = {"ID", _("NAME"), _("VENDOR"), _("VRAM"), "GB/s", _("NEW (date; USD unless marked)"), _("USED (date)")};
	table *t = json ? NULL : table_new(7, hdr);
	size_t n = 0;
	int rc = 0;
	char **sources = xcalloc(kb_gpu_count() + 1, sizeof *sources);
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *g = kb_gpu_at(i);
		if (!matches(filter, g->id, g->name, g->aliases, g->vendor))
			continue;
		price_quote nq, uq;
		gw_error err = {0};
		/* the prices as quoted: USD where there is a USD row, else the card's own market */
		if ((rc = price_quote_in(g, false, false, year, NULL, &nq, &err)) ||
		    (rc = price_quote_in(g, true, false, year, NULL, &uq, &err))) {
			gw_errorf("%s", gw_error_text(&err));
			rc = GW_EXIT_RUNTIME;
			goto out;
		}
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(g->id));
			json_object_set_new(o, "name", json_string(g->name));
			json_object_set_new(o, "vendor", json_string(g->vendor));
			json_object_set_new(o, "arch", json_string(g->arch));
			json_object_set_new(o, "vram_bytes", json_integer((json_int_t)g->vram_bytes));
			json_object_set_new(o, "bandwidth_gbs", jreal_round(g->bandwidth_gbs, 1));
			json_object_set_new(o, "fp16_tflops", jreal_round(g->fp16_tflops, 1));
			json_object_set_new(o, "tdp_w", json_integer(g->tdp_w));
			json_object_set_new(o, "unified_memory", json_boolean(g->unified_memory));
			json_object_set_new(o, "laptop", json_boolean(g->laptop));
			json_object_set_new(o, "year", json_integer(g->year));
			json_object_set_new(o, "launch_price_usd", g->price_usd > 0 ? jreal_round(g->price_usd, 2) : json_null());
			json_object_set_new(o, "new_price", price_json(&nq));
			json_object_set_new(o, "used_price", price_json(&uq));
			json_object_set_new(o, "source", json_string(g->source));
			json_array_append_new(arr, o);
		} else {
			char vram[32], bw[32], np[48], up[48];
			fmt_bytes(vram, sizeof vram, g->vram_bytes);
			snprintf(bw, sizeof bw, "%.0f", g->bandwidth_gbs);
			fmt_price(np, sizeof np, &nq);
			fmt_price(up, sizeof up, &uq);
			table_add(t, g->id, g->name, g->vendor, vram, bw, np, up);
			sources[n] = xasprintf("%s: %s", g->id, g->source);
		}
		n++;
	}
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "table", json_string("gpus"));
		json_object_set_new(o, "filter", jstr_or_null(filter));
		json_object_set_new(o, "rows", arr);
		arr = NULL;
		json_print(o, stdout);
		json_decref(o);
	} else if (n) {
		table_print(t, stdout);
		fputs(_("\nSources (specs; prices: new-prices.tsv and used-prices.tsv, see --json):\n"), stdout);
		for (size_t i = 0; i < n; i++)
			printf("  %s\n", sources[i]);
	}
	rc = n ? GW_EXIT_OK : GW_EXIT_VERDICT4;
out:
	for (size_t i = 0; i < kb_gpu_count(); i++)
		free(sources[i]);
	free(sources);
	if (t)
		table_free(t);
	json_decref(arr);
	return rc;
}

/* Newest release first; rows without a date last; then by id. */
static int cmp_release(const void *a, const void *b)
{
	const model_spec *x = *(const model_spec *const *)a, *y = *(const model_spec *const *)b;
	int c = strcmp(y->released, x->released);
	return c ? c : strcmp(x->id, y->id);
}

static int list_models(const char *filter, bool json)
{
	json_t *arr = json ? json_array() : NULL;
	const char *hdr[] = {"ID", _("NAME"), _("KIND"), _("RELEASED"), _("PARAMS"), _("LAYERS"), _("CONTEXT"), _("SOURCE")};
	table *t = json ? NULL : table_new(8, hdr);
	size_t n = 0, n_llm = 0;
	const char *newest = "";
	const model_spec **order = xcalloc(kb_model_count() + 1, sizeof *order);
	for (size_t i = 0; i < kb_model_count(); i++)
		order[i] = kb_model_at(i);
	qsort(order, kb_model_count(), sizeof *order, cmp_release);
	for (size_t i = 0; i < kb_model_count(); i++) {
		const model_spec *m = order[i];
		if (strcmp(m->released, newest) > 0)
			newest = m->released;
		if (!matches(filter, m->id, m->name, m->aliases, m->arch) && !matches(filter, m->kind, NULL, NULL, NULL))
			continue;
		n++;
		n_llm++;
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(m->id));
			json_object_set_new(o, "name", json_string(m->name));
			json_object_set_new(o, "kind", json_string("llm"));
			json_object_set_new(o, "arch", json_string(m->arch));
			json_object_set_new(o, "aliases", json_string(m->aliases));
			json_object_set_new(o, "params", json_real(m->params_total));
			json_object_set_new(o, "layers", json_integer(m->layers));
			json_object_set_new(o, "ctx_train", json_integer(m->ctx_train));
			json_object_set_new(o, "released", jstr_or_null(*m->released ? m->released : NULL));
			json_t *uses = json_array();
			static const char *const kinds[] = {"chat", "code", "reasoning", "vision"};
			for (size_t k = 0; k < 4; k++)
				if (kb_model_is_kind(m, kinds[k]))
					json_array_append_new(uses, json_string(kinds[k]));
			json_object_set_new(o, "uses", uses);
			json_object_set_new(o, "source", json_string(m->source));
			json_array_append_new(arr, o);
		} else {
			char p[32], l[16], c[16], k[48];
			snprintf(p, sizeof p, "%.1fB", m->params_total / 1e9);
			snprintf(l, sizeof l, "%d", m->layers);
			snprintf(c, sizeof c, "%d", m->ctx_train);
			snprintf(k, sizeof k, "%s", *m->kind ? m->kind : "llm");
			table_add(t, m->id, m->name, k, *m->released ? m->released : "-", p, l, c, m->source);
		}
	}
	free(order);
	gw_error err = {0};
	const kb_table *d = kb_get_table("diffusion", &err);
	if (!d) {
		gw_errorf("%s", gw_error_text(&err));
		if (t)
			table_free(t);
		json_decref(arr);
		return GW_EXIT_RUNTIME;
	}
	long ci = kb_col(d, "id"), cn = kb_col(d, "name"), ca = kb_col(d, "aliases"), cs = kb_col(d, "source");
	long cp = kb_col(d, "denoiser_params");
	for (size_t r = 0; r < d->nrows; r++) {
		if (!matches(filter, kb_cell(d, r, ci), kb_cell(d, r, cn), kb_cell(d, r, ca), "image"))
			continue;
		n++;
		double params = 0;
		parse_double(kb_cell(d, r, cp), &params);
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(kb_cell(d, r, ci)));
			json_object_set_new(o, "name", json_string(kb_cell(d, r, cn)));
			json_object_set_new(o, "kind", json_string("image"));
			json_object_set_new(o, "arch", json_null());
			json_object_set_new(o, "aliases", json_string(kb_cell(d, r, ca)));
			json_object_set_new(o, "params", json_real(params));
			json_object_set_new(o, "layers", json_null());
			json_object_set_new(o, "ctx_train", json_null());
			json_object_set_new(o, "released", json_null());
			json_object_set_new(o, "uses", json_array());
			json_object_set_new(o, "source", json_string(kb_cell(d, r, cs)));
			json_array_append_new(arr, o);
		} else {
			char p[32];
			snprintf(p, sizeof p, "%.1fB", params / 1e9);
			table_add(t, kb_cell(d, r, ci), kb_cell(d, r, cn), "image", "-", p, "-", "-", kb_cell(d, r, cs));
		}
	}
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "table", json_string("models"));
		json_object_set_new(o, "filter", jstr_or_null(filter));
		json_object_set_new(o, "catalog_models", json_integer((json_int_t)kb_model_count()));
		json_object_set_new(o, "catalog_newest_release", jstr_or_null(*newest ? newest : NULL));
		json_object_set_new(o, "rows", arr);
		json_print(o, stdout);
		json_decref(o);
	} else {
		if (n) {
			table_print(t, stdout);
			printf(_("\nThe catalog: %zu language models, newest released %s (language models newest first)\n"),
			       kb_model_count(), *newest ? newest : "-");
		}
		table_free(t);
	}
	(void)n_llm;
	return n ? GW_EXIT_OK : GW_EXIT_VERDICT4;
}

/* The models other programs keep here, with the name that resolves to each. */
static int list_installed(const char *filter, bool json)
{
	model_installed *v;
	size_t nv, n = 0;
	model_store_list(&v, &nv);
	json_t *arr = json ? json_array() : NULL;
	const char *hdr[] = {_("NAME"), _("STORE"), _("SIZE"), _("BYTES"), _("PATH")};
	table *t = json ? NULL : table_new(5, hdr);
	if (t) {
		table_set_align(t, 2, true);
		table_set_align(t, 3, true);
	}
	for (size_t i = 0; i < nv; i++) {
		const model_installed *it = &v[i];
		if (!matches(filter, it->name, it->path, model_store_name(it->store), NULL))
			continue;
		n++;
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string(it->name));
			json_object_set_new(o, "store", json_string(model_store_name(it->store)));
			json_object_set_new(o, "path", jstr_or_null(it->path));
			json_object_set_new(o, "size_bytes", jint_or_null(it->path != NULL, (long long)it->bytes));
			json_object_set_new(o, "revision", jstr_or_null(it->revision));
			json_object_set_new(o, "broken", json_boolean(!it->path));
			json_array_append_new(arr, o);
		} else {
			char h[32], b[32];
			fmt_bytes(h, sizeof h, it->bytes);
			snprintf(b, sizeof b, "%llu", (unsigned long long)it->bytes);
			table_add(t, it->name, model_store_name(it->store), it->path ? h : "-", it->path ? b : "-",
				  it->path ? it->path : _("(broken: run `gpuwise plan NAME` for why)"));
		}
	}
	model_installed_free(v, nv);
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "table", json_string("installed"));
		json_object_set_new(o, "filter", jstr_or_null(filter));
		json_object_set_new(o, "rows", arr);
		json_print(o, stdout);
		json_decref(o);
	} else {
		if (n)
			table_print(t, stdout);
		else
			fputs(_("no installed models found (Ollama: $OLLAMA_MODELS or ~/.ollama/models; Hugging Face: "
				"$HF_HUB_CACHE or ~/.cache/huggingface/hub; LM Studio: ~/.lmstudio/models)\n"), stderr);
		table_free(t);
	}
	return n ? GW_EXIT_OK : GW_EXIT_VERDICT4;
}

static int list_quants(const char *filter, bool json)
{
	static const char *const kinds[] = {"gguf-type", "gguf-recipe", "format"};
	json_t *arr = json ? json_array() : NULL;
	const char *hdr[] = {"ID", _("NAME"), _("KIND"), _("BITS/WEIGHT"), _("ALIASES"), _("SOURCE")};
	table *t = json ? NULL : table_new(6, hdr);
	size_t n = 0;
	for (size_t i = 0; i < kb_quant_count(); i++) {
		const quant_spec *q = kb_quant_at(i);
		if (!matches(filter, q->id, q->name, q->aliases, kinds[q->kind]))
			continue;
		n++;
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(q->id));
			json_object_set_new(o, "name", json_string(q->name));
			json_object_set_new(o, "kind", json_string(kinds[q->kind]));
			json_object_set_new(o, "bits_per_weight", q->bpw > 0 ? jreal_round(q->bpw, 3) : json_null());
			json_object_set_new(o, "aliases", json_string(q->aliases));
			json_object_set_new(o, "source", json_string(q->source));
			json_array_append_new(arr, o);
		} else {
			char b[32];
			snprintf(b, sizeof b, q->bpw > 0 ? "%.2f" : "-", q->bpw);
			table_add(t, q->id, q->name, kinds[q->kind], b, q->aliases, q->source);
		}
	}
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "table", json_string("quants"));
		json_object_set_new(o, "filter", jstr_or_null(filter));
		json_object_set_new(o, "rows", arr);
		json_print(o, stdout);
		json_decref(o);
	} else {
		if (n) {
			table_print(t, stdout);
			fputs(_("\nShorthands: q4/int4/4bit -> q4_k_m (llama.cpp, ollama) or awq-int4 (vllm, transformers); "
			       "q8/int8/8bit -> q8_0 or int8; fp8; fp16/half -> f16 or fp16.\n"), stdout);
		}
		table_free(t);
	}
	return n ? GW_EXIT_OK : GW_EXIT_VERDICT4;
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"installed", no_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false, installed = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'i': installed = true; break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		default: return usage_error("list", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc && !installed)
		return usage_error("list", "say what to list: gpus, models or quants");
	const char *what = optind < argc ? argv[optind++] : "models"; /* list --installed */
	const char *filter = optind < argc ? argv[optind++] : NULL;
	if (optind < argc)
		return usage_error("list", "unexpected argument '%s'", argv[optind]);
	if (filter && !*filter)
		return usage_error("list", "the filter is empty");
	gw_error err = {0};
	if (kb_load_all(&err)) {
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	time_t now = time(NULL);
	struct tm tmv;
	gmtime_r(&now, &tmv);
	if (!strcmp(what, "gpus") || !strcmp(what, "gpu"))
		return list_gpus(filter, json, tmv.tm_year + 1900);
	if (installed && strcmp(what, "models") && strcmp(what, "model"))
		return usage_error("list", "--installed lists models, not %s", what);
	if (!strcmp(what, "models") || !strcmp(what, "model"))
		return installed ? list_installed(filter, json) : list_models(filter, json);
	if (!strcmp(what, "quants") || !strcmp(what, "quant"))
		return list_quants(filter, json);
	return usage_error("list", "cannot list '%s' (gpus, models or quants)", what);
}

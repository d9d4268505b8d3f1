/*
 * gpuwise fit: what runs on this machine (or the GPUs and RAM given).
 * Every catalog language model and every installed one is planned as
 * `plan` plans it, in the best weight format that runs (on the GPUs
 * first, then with layers in host RAM) at the decode speed asked, and the
 * ones that run are ranked.
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "kb/kb.h"
#include "model/model.h"
#include "plan/plan.h"
#include "util/json.h"

/* The GGUF formats tried, best first (llama.cpp's common quantization recipes). */
static const char *const fit_quants[] = {"q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k"};
#define N_FIT_QUANTS (sizeof fit_quants / sizeof *fit_quants)
/*
 * Below this many bits per weight a quantized model is ranked as if it had
 * proportionally fewer parameters [assumption: perplexity rises steeply
 * under ~4.5 bpw, llama.cpp's quantize table of PPL per recipe]; at and
 * above, the parameters count in full.
 */
#define FIT_FULL_BPW 4.5

typedef struct fit_row {
	char *name;            /* catalog id or the installed name */
	model_store store;
	const model_spec *spec; /* catalog row, NULL for installed */
	const char *quant;     /* NULL: the file's own */
	plan_result r;
	double params, bpw, score;
} fit_row;

typedef struct fit_cli {
	const char *gpu_arg, *kind;
	uint64_t vram, ram, ctx;
	double min_tps;
	bool installed_only, json, help, catalog_only;
	long top;
} fit_cli;

static void usage(FILE *f)
{
	fputs(_("usage: gpuwise fit [--gpu ID[,ID...] | --vram SIZE] [--ram SIZE] [--ctx N] [--min-tps T]\n"
		"                   [--kind chat|code|reasoning|vision] [--installed] [--top N] [--json]\n\n"
		"What runs here: every catalog language model and every installed one (Ollama's\n"
		"store, the Hugging Face cache, LM Studio) planned as `gpuwise plan` plans it, in\n"
		"the best GGUF format that runs at --min-tps (Q8_0 down to Q4_K_M on the GPUs, then\n"
		"with layers in host RAM; only then Q3_K_M and Q2_K), ranked by parameters\n"
		"(counted in proportion below 4.5 bits per weight), then decode speed.  Each row:\n"
		"the format, the context, the placement and decode tok/s; `gpuwise plan MODEL\n"
		"--quant Q` with the same hardware gives the same numbers.\n\n"
		"Options:\n"
		"  --gpu ID[,ID...]   catalog GPUs (4060-laptop, 2x3090); default: this machine's\n"
		"                     GPUs with their free memory\n"
		"  --vram SIZE        a GPU with SIZE of memory (with --gpu: per GPU)\n"
		"  --ram SIZE         host RAM for offloaded layers (default: this machine's\n"
		"                     available RAM less headroom)\n"
		"  --ctx N            context tokens (default 4096 or the trained context if less)\n"
		"  --min-tps T        only models that decode at T tok/s or faster (default 5)\n"
		"  --kind K           only chat, code, reasoning or vision models (catalog)\n"
		"  --installed        only the installed models\n"
		"  --top N            the first N rows (default 25; 0: all)\n"
		"  --json             one JSON object (docs/json-fit.md)\n"
		"  -h, --help         this help\n\n"
		"Exit status: 0 models listed, 4 none runs here, 2 usage error, 1 a table cannot\n"
		"be read.\n"),
	      f);
}

static int parse_args(fit_cli *c, int argc, char **argv)
{
	enum { O_GPU = 256, O_VRAM, O_RAM, O_CTX, O_MIN_TPS, O_KIND, O_INSTALLED, O_TOP, O_JSON };
	static const struct option opts[] = {
		{"gpu", required_argument, NULL, O_GPU},
		{"vram", required_argument, NULL, O_VRAM},
		{"ram", required_argument, NULL, O_RAM},
		{"ctx", required_argument, NULL, O_CTX},
		{"min-tps", required_argument, NULL, O_MIN_TPS},
		{"kind", required_argument, NULL, O_KIND},
		{"installed", no_argument, NULL, O_INSTALLED},
		{"top", required_argument, NULL, O_TOP},
		{"json", no_argument, NULL, O_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int o;
	long long v;
	opterr = 0;
	optind = 1;
	while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (o) {
		case O_GPU: c->gpu_arg = optarg; break;
		case O_VRAM:
			if (parse_size_opt("fit", "--vram", optarg, &c->vram))
				return GW_EXIT_USAGE;
			break;
		case O_RAM:
			if (parse_size_opt("fit", "--ram", optarg, &c->ram))
				return GW_EXIT_USAGE;
			break;
		case O_CTX:
			if (parse_ctx_opt("fit", "--ctx", optarg, &c->ctx))
				return GW_EXIT_USAGE;
			break;
		case O_MIN_TPS:
			if (parse_double(optarg, &c->min_tps) || !(c->min_tps >= 0) || c->min_tps > 1e6)
				return usage_error("fit", "invalid --min-tps '%s' (tokens per second, 0 or more)", optarg);
			break;
		case O_KIND:
			if (strcmp(optarg, "chat") && strcmp(optarg, "code") && strcmp(optarg, "reasoning") &&
			    strcmp(optarg, "vision"))
				return usage_error("fit", "invalid --kind '%s' (chat, code, reasoning or vision)", optarg);
			c->kind = optarg;
			break;
		case O_INSTALLED: c->installed_only = true; break;
		case O_TOP:
			if (parse_int(optarg, 0, 100000, &v))
				return usage_error("fit", "invalid --top '%s' (a count, 0 for all)", optarg);
			c->top = (long)v;
			break;
		case O_JSON: c->json = true; break;
		case 'h': c->help = true; break;
		case ':': return usage_error("fit", "option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("fit", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("fit", "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* Plan m with quant on the hardware; false when the plan fails. */
static bool plan_one(const plan_request *hw, const fit_cli *c, const model_desc *m, const char *quant, bool advice,
		     plan_result *r)
{
	plan_request rq = *hw;
	rq.model = m;
	rq.quant = quant;
	rq.ctx = c->ctx;
	rq.skip_advice = !advice;
	return plan_run(&rq, r, NULL) == 0;
}

/* Runs here: fits (GPUs, or GPUs and RAM) at min_tps; a speed nobody can
 * predict (a bare --vram GPU has no bandwidth) does not filter. */
static bool runs(const fit_cli *c, const plan_result *r)
{
	return r->verdict != PLAN_NOFIT && (r->decode_tok_s <= 0 || r->decode_tok_s >= c->min_tps);
}

/*
 * The best format of one model: on the GPUs beats offloaded; within a
 * verdict, more bits per weight.  Returns false when none runs.
 */
static bool best_quant(const plan_request *hw, const fit_cli *c, const model_desc *m, const model_spec *s,
		       fit_row *row)
{
	plan_result *r = xmalloc(sizeof *r);
	bool found = false;
	const char *only[1] = {s && s->default_quant && *s->default_quant ? s->default_quant : NULL};
	const char *const *qs = only[0] || m->has_tensors ? only : fit_quants;
	size_t nq = only[0] || m->has_tensors ? 1 : N_FIT_QUANTS;
	/* Q8_0..Q4_K_M on the GPUs, then offloaded; only then Q3_K_M and Q2_K, on the GPUs, then offloaded */
	size_t good = nq > 1 ? 4 : nq;
	for (int pass = 0; pass < 4 && !found; pass++) {
		size_t from = pass < 2 ? 0 : good, to = pass < 2 ? good : nq;
		for (size_t i = from; i < to && !found; i++) {
			if (!plan_one(hw, c, m, qs[i], false, r) || !runs(c, r))
				continue;
			if (pass % 2 == 0 ? r->verdict != PLAN_FITS : r->verdict != PLAN_OFFLOAD)
				continue;
			row->quant = qs[i];
			found = true;
		}
	}
	if (found)
		found = plan_one(hw, c, m, row->quant, true, &row->r); /* as `plan` shows it */
	free(r);
	return found;
}

static void fill_score(fit_row *row, const model_desc *m)
{
	row->params = m->params_total;
	row->bpw = m->params_total > 0 ? (double)row->r.model_bytes * 8 / m->params_total : 0;
	row->score = row->params * (row->bpw >= FIT_FULL_BPW || row->bpw <= 0 ? 1 : row->bpw / FIT_FULL_BPW);
}

static int cmp_rows(const void *a, const void *b)
{
	const fit_row *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->r.decode_tok_s != y->r.decode_tok_s)
		return x->r.decode_tok_s < y->r.decode_tok_s ? 1 : -1;
	return strcmp(x->name, y->name);
}

static json_t *uses_json(const model_spec *s)
{
	static const char *const kinds[] = {"chat", "code", "reasoning", "vision"};
	json_t *a = json_array();
	for (size_t k = 0; s && k < 4; k++)
		if (kb_model_is_kind(s, kinds[k]))
			json_array_append_new(a, json_string(kinds[k]));
	return a;
}

static void print_json(const fit_cli *c, const plan_request *hw, const fit_row *rows, size_t n, size_t tried)
{
	json_t *o = json_object(), *g = json_array(), *arr = json_array();
	for (size_t i = 0; i < hw->n_gpus; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "name", json_string(hw->gpus[i].name));
		json_object_set_new(x, "vram_bytes", json_integer((json_int_t)hw->gpus[i].vram_bytes));
		json_array_append_new(g, x);
	}
	json_object_set_new(o, "gpus", g);
	json_object_set_new(o, "ram_bytes", jint_or_null(hw->ram_bytes > 0, (long long)hw->ram_bytes));
	json_object_set_new(o, "ctx", jint_or_null(c->ctx > 0, (long long)c->ctx));
	json_object_set_new(o, "min_tok_s", jreal_round(c->min_tps, 2));
	json_object_set_new(o, "kind", jstr_or_null(c->kind));
	json_object_set_new(o, "installed_only", json_boolean(c->installed_only));
	json_object_set_new(o, "models_tried", json_integer((json_int_t)tried));
	json_object_set_new(o, "models_run", json_integer((json_int_t)n));
	for (size_t i = 0; i < n; i++) {
		const fit_row *f = &rows[i];
		json_t *x = json_object();
		json_object_set_new(x, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(x, "model", json_string(f->name));
		json_object_set_new(x, "store", json_string(model_store_name(f->store)));
		json_object_set_new(x, "params", json_real(f->params));
		json_object_set_new(x, "quant", json_string(f->r.quant));
		json_object_set_new(x, "bits_per_weight", jreal_round(f->bpw, 2));
		json_object_set_new(x, "ctx", json_integer((json_int_t)f->r.ctx));
		json_object_set_new(x, "max_ctx", jint_or_null(f->r.max_ctx > 0, (long long)f->r.max_ctx));
		json_object_set_new(x, "verdict", json_string(plan_verdict_name(f->r.verdict)));
		json_object_set_new(x, "gpu_layers", json_integer(f->r.gpu_layers));
		json_object_set_new(x, "total_layers", json_integer(f->r.total_layers));
		json_object_set_new(x, "n_cpu_moe", json_integer(f->r.n_cpu_moe));
		json_object_set_new(x, "model_bytes", json_integer((json_int_t)f->r.model_bytes));
		json_object_set_new(x, "vram_bytes", json_integer((json_int_t)f->r.vram_bytes));
		json_object_set_new(x, "host_bytes", json_integer((json_int_t)f->r.host_bytes));
		json_object_set_new(x, "decode_tok_s", f->r.decode_tok_s > 0 ? jreal_round(f->r.decode_tok_s, 2) : json_null());
		json_object_set_new(x, "prefill_tok_s", f->r.prefill_tok_s > 0 ? jreal_round(f->r.prefill_tok_s, 2) : json_null());
		json_object_set_new(x, "released", jstr_or_null(f->spec && *f->spec->released ? f->spec->released : NULL));
		json_object_set_new(x, "uses", uses_json(f->spec));
		json_array_append_new(arr, x);
	}
	json_object_set_new(o, "rows", arr);
	json_print(o, stdout);
	json_decref(o);
}

static void print_text(const fit_cli *c, const plan_request *hw, const fit_row *rows, size_t n, size_t tried)
{
	char b[32], b2[32];
	printf(_("What runs on "));
	for (size_t i = 0; i < hw->n_gpus; i++)
		printf("%s%s (%s)", i ? ", " : "", hw->gpus[i].name, fmt_bytes(b, sizeof b, hw->gpus[i].vram_bytes));
	if (hw->ram_bytes > 1)
		printf(_(" + %s host RAM"), fmt_bytes(b, sizeof b, hw->ram_bytes));
	printf(_(": %zu of %zu models at %.0f tok/s or faster\n\n"), n, tried, c->min_tps);
	if (!n)
		return;
	const char *hdr[] = {"#", _("MODEL"), _("PARAMS"), _("QUANT"), _("CONTEXT"), _("PLACEMENT"), _("WEIGHTS"),
			     _("DECODE tok/s"), _("FROM")};
	table *t = table_new(9, hdr);
	table_set_align(t, 0, true);
	table_set_align(t, 2, true);
	table_set_align(t, 6, true);
	table_set_align(t, 7, true);
	size_t shown = c->top > 0 && (size_t)c->top < n ? (size_t)c->top : n;
	for (size_t i = 0; i < shown; i++) {
		const fit_row *f = &rows[i];
		char rk[16], p[32], ctx[24], place[64], tps[24];
		snprintf(rk, sizeof rk, "%zu", i + 1);
		snprintf(p, sizeof p, "%.1fB", f->params / 1e9);
		snprintf(ctx, sizeof ctx, "%llu", (unsigned long long)f->r.ctx);
		if (f->r.verdict == PLAN_FITS)
			snprintf(place, sizeof place, _("GPU"));
		else if (f->r.n_cpu_moe)
			snprintf(place, sizeof place, _("GPU + experts of %u layers in RAM"), f->r.n_cpu_moe);
		else
			snprintf(place, sizeof place, _("%u/%u layers on GPU"), f->r.gpu_layers, f->r.total_layers);
		snprintf(tps, sizeof tps, f->r.decode_tok_s > 0 ? "%.1f" : "-", f->r.decode_tok_s);
		fmt_bytes(b2, sizeof b2, f->r.model_bytes);
		table_add(t, rk, f->name, p, f->r.quant, ctx, place, b2, tps, model_store_name(f->store));
	}
	table_print(t, stdout);
	table_free(t);
	if (shown < n)
		printf(_("\n... and %zu more (--top 0 shows all)\n"), n - shown);
}

int cmd_fit(int argc, char **argv)
{
	fit_cli c = {.min_tps = 5, .top = 25};
	int rc = parse_args(&c, argc, argv);
	if (rc)
		return rc;
	if (c.help) {
		usage(stdout);
		return GW_EXIT_OK;
	}
	gw_error err = {0};
	if (kb_load_all(&err)) {
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	plan_request hw;
	plan_request_init(&hw);
	if ((rc = plan_hardware(&hw, c.gpu_arg, c.vram, c.ram, NULL)))
		return rc;

	fit_row *rows = NULL;
	size_t n = 0, cap = 0, tried = 0;
	/* installed models first, so a model both pulled and in the catalog is planned from its file */
	model_installed *inst = NULL;
	size_t n_inst = 0;
	if (!c.kind || c.installed_only)
		model_store_list(&inst, &n_inst);
	for (size_t i = 0; i < n_inst; i++) {
		if (!inst[i].path)
			continue;
		model_desc m;
		gw_error me;
		if (model_load(inst[i].name, NULL, &m, &me))
			continue;
		tried++;
		fit_row row = {.store = inst[i].store};
		if (best_quant(&hw, &c, &m, NULL, &row)) {
			row.name = xstrdup(inst[i].name);
			fill_score(&row, &m);
			rows = xgrow(rows, &cap, n + 1, sizeof *rows);
			rows[n++] = row;
		}
		model_release(&m);
	}
	model_installed_free(inst, n_inst);
	for (size_t i = 0; !c.installed_only && i < kb_model_count(); i++) {
		const model_spec *s = kb_model_at(i);
		if (c.kind && !kb_model_is_kind(s, c.kind))
			continue;
		model_desc m;
		gw_error me;
		if (model_load(s->id, NULL, &m, &me))
			continue;
		tried++;
		fit_row row = {.store = MODEL_STORE_CATALOG, .spec = s};
		if (best_quant(&hw, &c, &m, s, &row)) {
			row.name = xstrdup(s->id);
			fill_score(&row, &m);
			rows = xgrow(rows, &cap, n + 1, sizeof *rows);
			rows[n++] = row;
		}
		model_release(&m);
	}
	if (n)
		qsort(rows, n, sizeof *rows, cmp_rows);
	if (c.json)
		print_json(&c, &hw, rows, n, tried);
	else
		print_text(&c, &hw, rows, n, tried);
	for (size_t i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
	return n ? GW_EXIT_OK : GW_EXIT_VERDICT4;
}

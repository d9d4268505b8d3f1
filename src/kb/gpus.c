/*
 * gpus.c: typed records for data/gpus.tsv and GPU name lookup.
 */
#include "kb/kb_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static gpu_spec *gpus;
static size_t ngpus;

enum {
	C_ID, C_NAME, C_ALIASES, C_VENDOR, C_ARCH, C_CC, C_SMS, C_CORES, C_VRAM, C_BW,
	C_FP32, C_FP16, C_TDP, C_PCIE, C_MIG, C_LAPTOP, C_UMA, C_YEAR, C_PRICE, C_USED,
	C_PRICE_DATE, C_SOURCE, C_COUNT
};
static const char *const cols[C_COUNT] = {
	"id", "name", "aliases", "vendor", "arch", "cc", "sms", "cores", "vram_gib",
	"bandwidth_gbs", "fp32_tflops", "fp16_tflops", "tdp_w", "pcie_gen", "mig", "laptop",
	"unified_memory", "year", "price_usd", "used_price_usd", "price_date", "source",
};

/* "8.9" -> 8, 9; "" -> -1, -1.  Anything else is an error. */
static int parse_cc(const kb_table *t, size_t row, long col, gpu_spec *g, gw_error *err)
{
	const char *s = kb_cell(t, row, col);
	long long maj, min;
	char buf[16];
	const char *dot = strchr(s, '.');
	g->cc_major = g->cc_minor = -1;
	if (!*s)
		return 0;
	if (!dot || (size_t)(dot - s) >= sizeof buf)
		goto bad;
	memcpy(buf, s, (size_t)(dot - s));
	buf[dot - s] = '\0';
	if (parse_int(buf, 1, 99, &maj) || parse_int(dot + 1, 0, 9, &min))
		goto bad;
	g->cc_major = (int)maj;
	g->cc_minor = (int)min;
	return 0;
bad:
	return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column 'cc': '%s' is not a compute capability",
		       t->name, t->lines[row], s);
}

/*
 * The tensor-rate columns added after the first tables shipped: optional,
 * so a data directory's older gpus.tsv still loads (its rows then have no
 * int8 / fp16-accumulate rates and no sparsity flag).  Empty = not stated.
 */
static int read_rates(const kb_table *t, size_t r, gpu_spec *g, gw_error *err)
{
	long c8 = kb_col(t, "int8_tops"), c16 = kb_col(t, "fp16_acc16_tflops"), cs = kb_col(t, "sparse");
	int rc;
	if (c8 >= 0 && (rc = kb_cell_double(t, r, c8, 0, 1e6, true, &g->int8_tops, err)))
		return rc;
	if (c16 >= 0 && (rc = kb_cell_double(t, r, c16, 0, 1e6, true, &g->fp16_acc16_tflops, err)))
		return rc;
	if (cs >= 0 && *kb_cell(t, r, cs) && (rc = kb_cell_bool(t, r, cs, &g->sparse, err)))
		return rc;
	return 0;
}

static int read_row(const kb_table *t, size_t r, const long *c, gpu_spec *g, gw_error *err)
{
	double vram_gib;
	int rc;
	memset(g, 0, sizeof *g);
	g->id = kb_cell(t, r, c[C_ID]);
	g->name = kb_cell(t, r, c[C_NAME]);
	g->aliases = kb_cell(t, r, c[C_ALIASES]);
	g->vendor = kb_cell(t, r, c[C_VENDOR]);
	g->arch = kb_cell(t, r, c[C_ARCH]);
	g->cc = kb_cell(t, r, c[C_CC]);
	g->price_date = kb_cell(t, r, c[C_PRICE_DATE]);
	g->source = kb_cell(t, r, c[C_SOURCE]);
	if ((rc = kb_cell_required(t, r, c[C_ID], err)) || (rc = kb_cell_required(t, r, c[C_NAME], err)) ||
	    (rc = kb_cell_required(t, r, c[C_VENDOR], err)) ||
	    (rc = parse_cc(t, r, c[C_CC], g, err)) ||
	    (rc = kb_cell_int(t, r, c[C_SMS], 0, 100000, false, &g->sms, err)) ||
	    (rc = kb_cell_int(t, r, c[C_CORES], 0, 10000000, false, &g->cores, err)) ||
	    (rc = kb_cell_double(t, r, c[C_VRAM], 0.001, 1e6, false, &vram_gib, err)) ||
	    (rc = kb_cell_double(t, r, c[C_BW], 0.001, 1e6, false, &g->bandwidth_gbs, err)) ||
	    (rc = kb_cell_double(t, r, c[C_FP32], 0, 1e6, false, &g->fp32_tflops, err)) ||
	    (rc = kb_cell_double(t, r, c[C_FP16], 0, 1e6, false, &g->fp16_tflops, err)) ||
	    (rc = kb_cell_int(t, r, c[C_TDP], 0, 100000, false, &g->tdp_w, err)) ||
	    (rc = kb_cell_int(t, r, c[C_PCIE], 0, 9, false, &g->pcie_gen, err)) ||
	    (rc = kb_cell_bool(t, r, c[C_MIG], &g->mig, err)) ||
	    (rc = kb_cell_bool(t, r, c[C_LAPTOP], &g->laptop, err)) ||
	    (rc = kb_cell_bool(t, r, c[C_UMA], &g->unified_memory, err)) ||
	    (rc = kb_cell_int(t, r, c[C_YEAR], 1990, 2100, false, &g->year, err)) ||
	    (rc = kb_cell_double(t, r, c[C_PRICE], 0, 1e7, true, &g->price_usd, err)) ||
	    (rc = kb_cell_double(t, r, c[C_USED], 0, 1e7, true, &g->used_price_usd, err)))
		return rc;
	g->vram_bytes = (uint64_t)llround(vram_gib * (double)GiB);
	return read_rates(t, r, g, err);
}

static int read_row_any(const kb_table *t, size_t r, const long *c, void *rec, gw_error *err)
{
	return read_row(t, r, c, rec, err);
}

static const char *id_of(const void *rec)
{
	return ((gpu_spec const *)rec)->id;
}

static kb_records records = {
	.table = "gpus",
	.cols = cols,
	.ncols = C_COUNT,
	.rec_size = sizeof(gpu_spec),
	.read_row = read_row_any,
	.id_of = id_of,
};

int kb_gpus_load(gw_error *err)
{
	int rc = kb_records_load(&records, err);
	gpus = records.recs;
	ngpus = records.n;
	return rc;
}

static void idx_release(void);

void kb_gpus_release(void)
{
	idx_release();
	kb_records_release(&records);
	gpus = NULL;
	ngpus = 0;
}

size_t kb_gpu_count(void)
{
	kb_gpus_load(NULL);
	return ngpus;
}

const gpu_spec *kb_gpu_at(size_t i)
{
	kb_gpus_load(NULL);
	return i < ngpus ? &gpus[i] : NULL;
}

/*
 * The keys of every row's id, name and aliases, hashed to the first row
 * that has them: find_key() then answers as kb_names_match() over the rows
 * in order would, without normalising every name of the table per lookup
 * (a plan's advice resolves every row of the price tables).  Built on the
 * first lookup after a load; lookups run on one thread, as the table's own
 * cache does.
 */
static struct {
	const gpu_spec *base;
	size_t ngpus, cap; /* cap: a power of two, 0 when not built */
	char **key;
	size_t *row;
} idx;

static void idx_release(void)
{
	for (size_t i = 0; i < idx.cap; i++)
		free(idx.key[i]);
	free(idx.key);
	free(idx.row);
	memset(&idx, 0, sizeof idx);
}

static size_t idx_slot(const char *key)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)key; *c; c++)
		h = (h ^ *c) * 1099511628211ull;
	size_t i = (size_t)h & (idx.cap - 1);
	while (idx.key[i] && strcmp(idx.key[i], key))
		i = (i + 1) & (idx.cap - 1);
	return i;
}

struct idx_add {
	size_t row, n;
};

static bool idx_add_key(const char *k, void *arg)
{
	struct idx_add *a = arg;
	if (!*k)
		return false;
	size_t i = idx_slot(k);
	if (!idx.key[i]) { /* the first row with this key keeps it */
		idx.key[i] = xstrdup(k);
		idx.row[i] = a->row;
		a->n++;
	}
	return false;
}

static bool count_key(const char *k, void *arg)
{
	(void)k;
	++*(size_t *)arg;
	return false;
}

static void idx_build(void)
{
	idx_release();
	size_t n = 0;
	for (size_t i = 0; i < ngpus; i++)
		kb_names_each(gpus[i].id, gpus[i].name, gpus[i].aliases, count_key, &n);
	for (idx.cap = 16; idx.cap < 2 * n; idx.cap *= 2)
		;
	idx.key = xcalloc(idx.cap, sizeof *idx.key);
	idx.row = xcalloc(idx.cap, sizeof *idx.row);
	struct idx_add a = {0, 0};
	for (a.row = 0; a.row < ngpus; a.row++)
		kb_names_each(gpus[a.row].id, gpus[a.row].name, gpus[a.row].aliases, idx_add_key, &a);
	idx.base = gpus;
	idx.ngpus = ngpus;
}

static const gpu_spec *find_key(const char *key)
{
	if (!*key || !ngpus)
		return NULL;
	if (!idx.cap || idx.base != gpus || idx.ngpus != ngpus)
		idx_build();
	size_t i = idx_slot(key);
	return idx.key[i] ? &gpus[idx.row[i]] : NULL;
}

/* The one GPU whose key equals prefix + key ("4090" -> "rtx4090"); NULL if none or several. */
static const gpu_spec *find_prefixed(const char *key)
{
	static const char *const prefixes[] = {"rtx", "gtx"};
	const gpu_spec *hit = NULL;
	char k2[KB_KEY_MAX];
	for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++) {
		snprintf(k2, sizeof k2, "%s%s", prefixes[p], key);
		const gpu_spec *g = find_key(k2);
		if (g && hit && g != hit)
			return NULL;
		if (g)
			hit = g;
	}
	return hit;
}

/*
 * "RTX 3090 24GB": drop a last word "<n>GB" / "<n>G" / "<n>GiB" and accept
 * the match only when n is the card's memory in GiB.
 */
static const gpu_spec *find_without_size(const char *name)
{
	char key[KB_KEY_MAX];
	const char *end = name + strlen(name), *w;
	while (end > name && !isalnum((unsigned char)end[-1]))
		end--;
	for (w = end; w > name && isalnum((unsigned char)w[-1]); w--)
		;
	char *unit;
	long gib = strtol(w, &unit, 10);
	if (unit == w || w == name || gib <= 0 ||
	    !(strncasecmp(unit, "gb", 2) == 0 || strncasecmp(unit, "gib", 3) == 0 || strncasecmp(unit, "g", 1) == 0) ||
	    unit + strspn(unit, "GgIiBb") != end)
		return NULL;
	char *head = xstrndup(name, (size_t)(w - name));
	kb_name_key(head, key, sizeof key);
	free(head);
	const gpu_spec *g = *key ? find_key(key) : NULL;
	if (!g && *key)
		g = find_prefixed(key);
	if (g && llround((double)g->vram_bytes / (double)GiB) == gib)
		return g;
	return NULL;
}

const gpu_spec *kb_gpu_find(const char *name)
{
	char key[KB_KEY_MAX];
	const gpu_spec *g;
	if (!name || kb_gpus_load(NULL))
		return NULL;
	kb_name_key(name, key, sizeof key);
	if (!*key)
		return NULL;
	if ((g = find_key(key)) || (g = find_prefixed(key)) || (g = find_without_size(name)))
		return g;
	return NULL;
}

const gpu_spec *kb_gpu_suggest(const char *name)
{
	char key[KB_KEY_MAX];
	const gpu_spec *best = NULL;
	size_t best_d = (size_t)-1;
	if (!name || kb_gpus_load(NULL))
		return NULL;
	kb_name_key(name, key, sizeof key);
	if (!*key)
		return NULL;
	for (size_t i = 0; i < ngpus; i++) {
		size_t d = kb_names_distance(key, gpus[i].id, gpus[i].name, gpus[i].aliases);
		if (d < best_d) {
			best_d = d;
			best = &gpus[i];
		}
	}
	/* a suggestion that shares less than half the text helps nobody */
	return best && best_d * 2 <= strlen(key) + 1 ? best : NULL;
}

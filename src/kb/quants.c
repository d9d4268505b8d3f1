/*
 * quants.c: typed records for data/quants.tsv: GGUF tensor types,
 * llama.cpp quantization recipes and other weight formats.
 */
#include "kb/kb_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static quant_spec *quants;
static size_t nquants;

enum {
	C_ID, C_NAME, C_ALIASES, C_KIND, C_GGML, C_BLOCK, C_BYTES, C_BPW, C_BASE, C_BUMP,
	C_OUTPUT, C_ATTN_V, C_FFN_DOWN, C_ATTN_OUT, C_SOURCE, C_COUNT
};
static const char *const cols[C_COUNT] = {
	"id", "name", "aliases", "kind", "ggml_type", "block_size", "bytes_per_block", "bpw",
	"base", "bump", "output", "attn_v", "ffn_down", "attn_output", "source",
};

static int read_row(const kb_table *t, size_t r, const long *c, quant_spec *q, gw_error *err)
{
	const char *kind = kb_cell(t, r, c[C_KIND]);
	bool recipe;
	int rc;
	memset(q, 0, sizeof *q);
	q->id = kb_cell(t, r, c[C_ID]);
	q->name = kb_cell(t, r, c[C_NAME]);
	q->aliases = kb_cell(t, r, c[C_ALIASES]);
	q->base = kb_cell(t, r, c[C_BASE]);
	q->bump = kb_cell(t, r, c[C_BUMP]);
	q->output = kb_cell(t, r, c[C_OUTPUT]);
	q->attn_v = kb_cell(t, r, c[C_ATTN_V]);
	q->ffn_down = kb_cell(t, r, c[C_FFN_DOWN]);
	q->attn_output = kb_cell(t, r, c[C_ATTN_OUT]);
	q->source = kb_cell(t, r, c[C_SOURCE]);
	if (strcmp(kind, "type") == 0)
		q->kind = QK_GGUF_TYPE;
	else if (strcmp(kind, "recipe") == 0)
		q->kind = QK_GGUF_RECIPE;
	else if (strcmp(kind, "format") == 0)
		q->kind = QK_FORMAT;
	else
		return gw_fail(err, GW_EFORMAT,
			       "table '%s' line %zu, column 'kind': '%s' is not type, recipe or format",
			       t->name, t->lines[r], kind);
	recipe = q->kind == QK_GGUF_RECIPE;
	if ((rc = kb_cell_required(t, r, c[C_ID], err)) || (rc = kb_cell_required(t, r, c[C_NAME], err)) ||
	    (rc = kb_cell_int(t, r, c[C_GGML], -1, 1023, false, &q->ggml_type, err)) ||
	    (rc = kb_cell_int(t, r, c[C_BLOCK], 1, 1 << 24, recipe, &q->block_size, err)) ||
	    (rc = kb_cell_int(t, r, c[C_BYTES], 1, 1 << 28, recipe, &q->bytes_per_block, err)) ||
	    (rc = kb_cell_double(t, r, c[C_BPW], 0.01, 64, false, &q->bpw, err)))
		return rc;
	if ((q->kind == QK_GGUF_TYPE) != (q->ggml_type >= 0))
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu: ggml_type %d does not fit kind '%s'",
			       t->name, t->lines[r], q->ggml_type, kind);
	if (recipe && (rc = kb_cell_required(t, r, c[C_BASE], err)))
		return rc;
	/* types and formats: the stated bpw must be what the block layout gives */
	if (!recipe && fabs(q->bpw - 8.0 * q->bytes_per_block / q->block_size) > 0.01)
		return gw_fail(err, GW_EFORMAT,
			       "table '%s' line %zu: bpw %g disagrees with %d bytes per %d weights",
			       t->name, t->lines[r], q->bpw, q->bytes_per_block, q->block_size);
	return 0;
}

static const quant_spec *find_id_kind(const char *id, quant_kind kind)
{
	for (size_t i = 0; i < nquants; i++)
		if (quants[i].kind == kind && str_ieq(quants[i].id, id))
			return &quants[i];
	return NULL;
}

/*
 * A recipe's type references must name GGUF types: base, bump, output and
 * each TYPE in the attn_v/ffn_down/attn_output rules.  Fills the recipe's
 * block layout from its base type.
 */
static int check_recipe(const kb_table *t, size_t r, quant_spec *q, gw_error *err)
{
	const char *refs[] = {q->base, q->bump, q->output, q->attn_v, q->ffn_down, q->attn_output};
	for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
		char buf[64];
		const char *s = refs[i];
		while (*s) {
			size_t l = strcspn(s, "@/");
			if (l == 0 || l >= sizeof buf)
				goto bad;
			memcpy(buf, s, l);
			buf[l] = '\0';
			if (!find_id_kind(buf, QK_GGUF_TYPE))
				goto bad;
			s += l;
			if (*s == '@')
				s += 1 + strcspn(s + 1, "/");
			if (*s == '/')
				s++;
			continue;
bad:
			return gw_fail(err, GW_EFORMAT, "table '%s' line %zu: recipe '%s' refers to unknown type in '%s'",
				       t->name, t->lines[r], q->id, refs[i]);
		}
	}
	const quant_spec *base = find_id_kind(q->base, QK_GGUF_TYPE);
	if (!q->block_size)
		q->block_size = base->block_size;
	if (!q->bytes_per_block)
		q->bytes_per_block = base->bytes_per_block;
	return 0;
}

/* Recipes name other rows, so they are checked once every row is read. */
static int check_recipes(const kb_table *t, void *recs, size_t n, gw_error *err)
{
	quant_spec *qs = recs;
	quants = qs; /* find_id_kind() searches the rows read so far */
	nquants = n;
	for (size_t r = 0; r < n; r++) {
		int rc = qs[r].kind == QK_GGUF_RECIPE ? check_recipe(t, r, &qs[r], err) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* Recipes, types and formats share ids (q8_0 is both); only one kind clashes. */
static bool same_kind(const void *a, const void *b)
{
	return ((const quant_spec *)a)->kind == ((const quant_spec *)b)->kind;
}

static int read_row_any(const kb_table *t, size_t r, const long *c, void *rec, gw_error *err)
{
	return read_row(t, r, c, rec, err);
}

static const char *id_of(const void *rec)
{
	return ((quant_spec const *)rec)->id;
}

static kb_records records = {
	.table = "quants",
	.cols = cols,
	.ncols = C_COUNT,
	.rec_size = sizeof(quant_spec),
	.read_row = read_row_any,
	.id_of = id_of,
	.clash = same_kind,
	.finish = check_recipes,
};

int kb_quants_load(gw_error *err)
{
	int rc = kb_records_load(&records, err);
	quants = records.recs;
	nquants = records.n;
	return rc;
}

void kb_quants_release(void)
{
	kb_records_release(&records);
	quants = NULL;
	nquants = 0;
}

size_t kb_quant_count(void)
{
	kb_quants_load(NULL);
	return nquants;
}

const quant_spec *kb_quant_at(size_t i)
{
	kb_quants_load(NULL);
	return i < nquants ? &quants[i] : NULL;
}

const quant_spec *kb_quant_find_kind(const char *name, quant_kind kind)
{
	char key[KB_KEY_MAX];
	if (!name || kb_quants_load(NULL))
		return NULL;
	kb_name_key(name, key, sizeof key);
	for (size_t i = 0; i < nquants; i++)
		if (quants[i].kind == kind && kb_names_match(key, quants[i].id, quants[i].name, quants[i].aliases))
			return &quants[i];
	return NULL;
}

const quant_spec *kb_quant_find(const char *name)
{
	const quant_spec *q = kb_quant_find_kind(name, QK_GGUF_RECIPE);
	if (!q)
		q = kb_quant_find_kind(name, QK_GGUF_TYPE);
	if (!q)
		q = kb_quant_find_kind(name, QK_FORMAT);
	return q;
}

const quant_spec *kb_quant_suggest(const char *name)
{
	char key[KB_KEY_MAX];
	const quant_spec *best = NULL;
	size_t best_d = (size_t)-1;
	if (!name || kb_quants_load(NULL))
		return NULL;
	kb_name_key(name, key, sizeof key);
	if (!*key)
		return NULL;
	/* same preference as kb_quant_find on ties: recipe, type, format */
	static const quant_kind order[] = {QK_GGUF_RECIPE, QK_GGUF_TYPE, QK_FORMAT};
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < nquants; i++) {
			if (quants[i].kind != order[k])
				continue;
			size_t d = kb_names_distance(key, quants[i].id, quants[i].name, quants[i].aliases);
			if (d < best_d) {
				best_d = d;
				best = &quants[i];
			}
		}
	return best && best_d * 2 <= strlen(key) + 1 ? best : NULL;
}

const quant_spec *kb_quant_by_ggml_type(int ggml_type)
{
	if (ggml_type < 0 || kb_quants_load(NULL))
		return NULL;
	for (size_t i = 0; i < nquants; i++)
		if (quants[i].kind == QK_GGUF_TYPE && quants[i].ggml_type == ggml_type)
			return &quants[i];
	return NULL;
}

uint64_t quant_row_bytes(const quant_spec *q, uint64_t n)
{
	if (!q || q->block_size <= 0)
		return 0;
	uint64_t blocks = n / (uint64_t)q->block_size + (n % (uint64_t)q->block_size != 0);
	return blocks * (uint64_t)q->bytes_per_block;
}

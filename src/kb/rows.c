/*
 * rows.c: checked access to table cells and fuzzy name keys, shared by the
 * typed readers (gpus.c, models.c, quants.c).
 */
#include "kb/kb_int.h"
#include "kb/lifecycle.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kb_need_cols(const kb_table *t, const char *const *names, size_t n, long *idx, gw_error *err)
{
	for (size_t i = 0; i < n; i++) {
		idx[i] = kb_col(t, names[i]);
		if (idx[i] < 0)
			return gw_fail(err, GW_EFORMAT, "table '%s': no '%s' column", t->name, names[i]);
	}
	return 0;
}

static size_t row_line(const kb_table *t, size_t row)
{
	return t->lines && row < t->nrows ? t->lines[row] : row + 1;
}

static int bad_cell(const kb_table *t, size_t row, long col, const char *what, gw_error *err)
{
	return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column '%s': '%s' %s", t->name,
		       row_line(t, row), t->header[col], kb_cell(t, row, col), what);
}

int kb_cell_double(const kb_table *t, size_t row, long col, double min, double max,
		   bool empty_ok, double *out, gw_error *err)
{
	const char *s = kb_cell(t, row, col);
	double v;
	if (!*s && empty_ok) {
		*out = 0;
		return 0;
	}
	if (!*s)
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column '%s': empty", t->name,
			       row_line(t, row), t->header[col]);
	if (parse_double(s, &v))
		return bad_cell(t, row, col, "is not a number", err);
	if (v < min || v > max)
		return bad_cell(t, row, col, "is out of range", err);
	*out = v;
	return 0;
}

int kb_cell_int(const kb_table *t, size_t row, long col, long long min, long long max,
		bool empty_ok, int *out, gw_error *err)
{
	const char *s = kb_cell(t, row, col);
	long long v;
	int rc;
	if (!*s && empty_ok) {
		*out = 0;
		return 0;
	}
	if (!*s)
		return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column '%s': empty", t->name,
			       row_line(t, row), t->header[col]);
	rc = parse_int(s, min, max, &v);
	if (rc == GW_ERANGE)
		return bad_cell(t, row, col, "is out of range", err);
	if (rc)
		return bad_cell(t, row, col, "is not an integer", err);
	*out = (int)v;
	return 0;
}

int kb_cell_bool(const kb_table *t, size_t row, long col, bool *out, gw_error *err)
{
	const char *s = kb_cell(t, row, col);
	if (strcmp(s, "0") == 0 || str_ieq(s, "no") || str_ieq(s, "false")) {
		*out = false;
		return 0;
	}
	if (strcmp(s, "1") == 0 || str_ieq(s, "yes") || str_ieq(s, "true")) {
		*out = true;
		return 0;
	}
	return bad_cell(t, row, col, "is not 0 or 1", err);
}

int kb_cell_required(const kb_table *t, size_t row, long col, gw_error *err)
{
	if (*kb_cell(t, row, col))
		return 0;
	return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column '%s': empty", t->name,
		       row_line(t, row), t->header[col]);
}

/* A word that is only noise in GPU names: vendor and brand words. */
static bool noise_word(const char *w, size_t n)
{
	static const char *const words[] = {"nvidia", "geforce", "tesla", "amd", "radeon", "apple"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strlen(words[i]) == n && strncmp(w, words[i], n) == 0)
			return true;
	return false;
}

void kb_name_key(const char *in, char *out, size_t n)
{
	char word[KB_KEY_MAX];
	size_t j = 0;
	if (!n)
		return;
	while (*in) {
		size_t wl = 0;
		while (*in && !isalnum((unsigned char)*in))
			in++;
		while (isalnum((unsigned char)*in)) {
			if (wl + 1 < sizeof word)
				word[wl++] = (char)tolower((unsigned char)*in);
			in++;
		}
		word[wl] = '\0';
		if (!wl || noise_word(word, wl))
			continue;
		/* "80gb", "80gib" -> "80g": sizes are written both ways */
		size_t d = 0;
		while (d < wl && isdigit((unsigned char)word[d]))
			d++;
		if (d && d < wl && (strcmp(word + d, "gb") == 0 || strcmp(word + d, "gib") == 0))
			word[d + 1] = '\0', wl = d + 1;
		for (size_t k = 0; k < wl && j + 1 < n; k++)
			out[j++] = word[k];
	}
	out[j] = '\0';
}

/* Call fn on the key of id, name and each comma-separated alias; stop when it returns true. */
static bool each_key(const char *id, const char *name, const char *aliases,
		     bool (*fn)(const char *k, void *arg), void *arg)
{
	char key[KB_KEY_MAX], part[KB_KEY_MAX];
	kb_name_key(id, key, sizeof key);
	if (fn(key, arg))
		return true;
	kb_name_key(name, key, sizeof key);
	if (fn(key, arg))
		return true;
	for (const char *a = aliases; a && *a;) {
		const char *c = strchr(a, ',');
		size_t l = c ? (size_t)(c - a) : strlen(a);
		if (l >= sizeof part)
			l = sizeof part - 1;
		memcpy(part, a, l);
		part[l] = '\0';
		kb_name_key(part, key, sizeof key);
		if (*key && fn(key, arg))
			return true;
		/* a Hugging Face id also answers to its repository name alone,
		 * the part other orgs' GGUF repositories copy */
		const char *slash = strrchr(part, '/');
		if (slash && slash[1]) {
			kb_name_key(slash + 1, key, sizeof key);
			if (*key && fn(key, arg))
				return true;
		}
		a = c ? c + 1 : a + l;
	}
	return false;
}

static bool eq_key(const char *k, void *arg)
{
	return *k && strcmp(k, arg) == 0;
}

bool kb_names_match(const char *key, const char *id, const char *name, const char *aliases)
{
	return *key && each_key(id, name, aliases, eq_key, (void *)key);
}

void kb_names_each(const char *id, const char *name, const char *aliases, bool (*fn)(const char *k, void *arg),
		   void *arg)
{
	each_key(id, name, aliases, fn, arg);
}

struct dist_arg {
	const char *key;
	size_t best;
};

static bool min_dist(const char *k, void *arg)
{
	struct dist_arg *d = arg;
	size_t v = str_distance(d->key, k);
	if (v < d->best)
		d->best = v;
	return false;
}

size_t kb_names_distance(const char *key, const char *id, const char *name, const char *aliases)
{
	struct dist_arg d = {key, (size_t)-1};
	each_key(id, name, aliases, min_dist, &d);
	return d.best;
}

/*
 * used-prices: the lookup in plan/cards.c skips rows it cannot use, so a
 * typo would silently change answers; here each row must name a known GPU
 * and a positive price.
 */
static int check_used_prices(gw_error *err)
{
	/* "price" with its "currency"; an older copy's "usd" column is read as USD */
	static const char *const cols[] = {"gpu", "price"};
	static const char *const old_cols[] = {"gpu", "usd"};
	long c[2] = {-1, -1};
	double usd;
	const kb_table *t = kb_get_table("used-prices", err);
	if (!t)
		return err && err->code ? err->code : GW_EFORMAT;
	/* the names are checked when the table is the user's own (a replaced gpus table may drop some) */
	char *own = kb_data_dir() ? xasprintf("%s/used-prices.tsv", kb_data_dir()) : NULL;
	bool names = own && access(own, F_OK) == 0;
	free(own);
	long ccur = kb_col(t, "currency");
	int rc = kb_need_cols(t, kb_col(t, "price") < 0 && kb_col(t, "usd") >= 0 ? old_cols : cols, 2, c, err);
	for (size_t i = 0; i < t->nrows && !rc; i++) {
		const char *cur = ccur < 0 ? "USD" : kb_cell(t, i, ccur);
		if (names && !kb_gpu_find(kb_cell(t, i, c[0])))
			rc = bad_cell(t, i, c[0], "is not a GPU of the gpus table", err);
		else if (strlen(cur) != 3 || strspn(cur, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 3)
			rc = bad_cell(t, i, ccur, "is not a currency code (ISO 4217: USD, CNY ...)", err);
		else
			rc = kb_cell_double(t, i, c[1], 1e-9, 1e12, false, &usd, err);
	}
	return rc;
}

/* xid: a code from 1 to 1023 (NVIDIA's catalogue), a meaning, a DCGM severity. */
static int check_xid(gw_error *err)
{
	static const char *const cols[] = {"xid", "meaning", "severity", "action"};
	long c[4] = {-1, -1, -1, -1};
	int xid;
	const kb_table *t = kb_get_table("xid", err);
	if (!t)
		return err && err->code ? err->code : GW_EFORMAT;
	int rc = kb_need_cols(t, cols, 4, c, err);
	for (size_t i = 0; i < t->nrows && !rc; i++) {
		const char *sev = kb_cell(t, i, c[2]);
		if ((rc = kb_cell_int(t, i, c[0], 1, 1023, false, &xid, err)) ||
		    (rc = kb_cell_required(t, i, c[1], err)) || (rc = kb_cell_required(t, i, c[3], err)))
			break;
		if (strcmp(sev, "fail") && strcmp(sev, "warn") && strcmp(sev, "none"))
			rc = bad_cell(t, i, c[2], "is not fail, warn or none", err);
	}
	return rc;
}

/* Does the data directory hold this table (rather than the built-in copy)? */
static bool own_table(const char *name)
{
	if (!kb_data_dir())
		return false;
	char *p = xasprintf("%s/%s.tsv", kb_data_dir(), name);
	bool own = access(p, F_OK) == 0;
	free(p);
	return own;
}

/* "12", "12.8", "570.124.06": digits in dot-separated groups. */
static bool is_version(const char *s)
{
	if (!*s)
		return false;
	for (bool digit = false; *s; s++) {
		if (*s >= '0' && *s <= '9')
			digit = true;
		else if (*s == '.' && digit)
			digit = false;
		else
			return false;
		if (!s[1] && !digit)
			return false;
	}
	return true;
}

/*
 * The doctor's tables (cuda-drivers, cuda-compat, torch-builds, cuda-arch)
 * are read by lookups that skip what they cannot use; a user's replacement
 * is checked here, column by column, so a typo is refused, not ignored.
 * (The built-in copies are checked by the tests.)
 */
static const struct version_cols {
	const char *table;
	const char *cols[3];
	bool list;              /* space-separated versions (cuda-arch ccs) in the last column */
} version_cols[] = {
	{"cuda-drivers", {"cuda", "linux_min", NULL}, false},
	{"cuda-compat", {"cuda_major", "driver_min", NULL}, false},
	{"torch-builds", {"torch", "cuda", NULL}, false},
	{"cuda-arch", {"cuda", "ccs", NULL}, true},
};

static int check_versions(gw_error *err)
{
	for (size_t k = 0; k < sizeof version_cols / sizeof version_cols[0]; k++) {
		const struct version_cols *v = &version_cols[k];
		if (!own_table(v->table))
			continue;
		const kb_table *t = kb_get_table(v->table, err);
		if (!t)
			return err && err->code ? err->code : GW_EFORMAT;
		size_t nc = 0;
		long c[3] = {-1, -1, -1};
		while (nc < 3 && v->cols[nc])
			nc++;
		int rc = kb_need_cols(t, v->cols, nc, c, err);
		for (size_t i = 0; i < t->nrows && !rc; i++)
			for (size_t j = 0; j < nc && !rc; j++) {
				char *cell = xstrdup(kb_cell(t, i, c[j]));
				bool ok = true;
				if (v->list && j == nc - 1) {
					char *save = NULL;
					bool any = false;
					for (char *w = strtok_r(cell, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
						any = true;
						ok = ok && is_version(w);
					}
					ok = ok && any;
				} else {
					ok = is_version(cell);
				}
				free(cell);
				if (!ok)
					rc = bad_cell(t, i, c[j], v->list && j == nc - 1 ? "is not a list of versions" : "is not a version",
						      err);
			}
		if (rc)
			return rc;
	}
	return 0;
}

int kb_load_all(gw_error *err)
{
	int rc = kb_gpus_load(err);
	if (!rc)
		rc = kb_models_load(err);
	if (!rc)
		rc = kb_quants_load(err);
	if (!rc)
		rc = check_used_prices(err);
	if (!rc)
		rc = check_xid(err);
	if (!rc)
		rc = check_versions(err);
	if (!rc)
		rc = kb_lifecycle_load(err);
	if (!rc && kb_data_dir())
		rc = kb_data_dir_check(err);
	return rc;
}

int kb_records_load(kb_records *R, gw_error *err)
{
	const kb_table *t;
	long *c = NULL;
	char *recs = NULL;
	size_t n = 0;
	int rc = 0;
	if (R->loaded)
		goto out;
	R->loaded = true;
	t = kb_get_table(R->table, &R->err);
	if (!t) {
		R->rc = R->err.code ? R->err.code : GW_EFORMAT;
		goto out;
	}
	c = xcalloc(R->ncols, sizeof *c);
	rc = kb_need_cols(t, R->cols, R->ncols, c, &R->err);
	recs = xcalloc(t->nrows ? t->nrows : 1, R->rec_size);
	for (; n < t->nrows && !rc; n++) {
		void *rec = recs + n * R->rec_size;
		rc = R->read_row(t, n, c, rec, &R->err);
		for (size_t i = 0; i < n && !rc; i++) {
			const void *other = recs + i * R->rec_size;
			if (str_ieq(R->id_of(other), R->id_of(rec)) && (!R->clash || R->clash(other, rec)))
				rc = gw_fail(&R->err, GW_EFORMAT, "table '%s' line %zu: duplicate id '%s'",
					     R->table, t->lines[n], R->id_of(rec));
		}
	}
	if (!rc && R->finish)
		rc = R->finish(t, recs, n, &R->err);
	if (rc) {
		R->rc = rc;
		free(recs);
		recs = NULL;
		n = 0;
	}
	R->recs = recs;
	R->n = n;
out:
	free(c);
	if (R->rc && err)
		*err = R->err;
	return R->rc;
}

void kb_records_release(kb_records *R)
{
	free(R->recs);
	R->recs = NULL;
	R->n = 0;
	R->loaded = false;
	R->rc = 0;
}

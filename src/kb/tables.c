/*
 * tables.c: generic TSV tables, embedded or from a data directory.
 */
#include "kb/kb.h"
#include "kb/kb_int.h"
#include "kb/lifecycle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct kb_blob {
	const char *name;
	const char *data;
	size_t len;
};
extern const struct kb_blob kb_blobs[];

static char *data_dir;
static bool data_dir_set;

#define KB_MAX_TABLES 32
static kb_table *cache[KB_MAX_TABLES];
static size_t ncache;

void kb_set_data_dir(const char *dir)
{
	kb_release_all();
	free(data_dir);
	data_dir = dir ? xstrdup(dir) : NULL;
	data_dir_set = true;
}

const char *kb_data_dir(void)
{
	if (!data_dir_set) {
		const char *e = getenv("GPUWISE_DATA");
		data_dir = e && *e ? xstrdup(e) : NULL;
		data_dir_set = true;
	}
	return data_dir;
}

void kb_table_release(kb_table *t)
{
	free(t->name);
	free(t->header);
	free(t->cells);
	free(t->lines);
	free(t->text);
	memset(t, 0, sizeof *t);
}

void kb_release_all(void)
{
	kb_gpus_release();
	kb_models_release();
	kb_quants_release();
	kb_lifecycle_release();
	for (size_t i = 0; i < ncache; i++) {
		kb_table_release(cache[i]);
		free(cache[i]);
	}
	ncache = 0;
}

/*
 * Count the tab-separated fields of line; when out is non-NULL also cut
 * the line at each tab and store up to max field pointers.
 */
static size_t split_tabs(char *line, char **out, size_t max)
{
	size_t n = 0;
	for (;;) {
		char *tab = strchr(line, '\t');
		if (out && n < max)
			out[n] = line;
		n++;
		if (!tab)
			break;
		if (out) /* the counting pass (out NULL) must not cut the line */
			*tab = '\0';
		line = tab + 1;
	}
	return n;
}

int kb_parse_tsv(kb_table *t, const char *name, const char *text, size_t len, gw_error *err)
{
	memset(t, 0, sizeof *t);
	t->name = xstrdup(name);
	t->text = xstrndup(text, len);
	if (strlen(t->text) != len) {
		kb_table_release(t);
		return gw_fail(err, GW_EFORMAT, "table '%s': contains a NUL byte", name);
	}
	size_t cap = 0, lcap = 0, lineno = 0;
	char *save = NULL;
	char *line = t->text;
	(void)save;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		size_t l = strlen(line);
		if (l && line[l - 1] == '\r')
			line[--l] = '\0';
		if (l == 0 || line[0] == '#') {
			line = nl ? nl + 1 : NULL;
			continue;
		}
		if (!t->header) {
			size_t n = split_tabs(line, NULL, 0);
			t->header = xcalloc(n, sizeof *t->header);
			t->ncols = split_tabs(line, t->header, n);
			if (kb_col(t, "source") < 0) {
				kb_table_release(t);
				return gw_fail(err, GW_EFORMAT, "table '%s': no 'source' column", name);
			}
		} else {
			char **row;
			t->cells = xgrow(t->cells, &cap, (t->nrows + 1) * t->ncols, sizeof *t->cells);
			row = t->cells + t->nrows * t->ncols;
			size_t n = split_tabs(line, row, t->ncols);
			if (n != t->ncols) {
				int rc = gw_fail(err, GW_EFORMAT, "table '%s' line %zu: %zu columns, expected %zu",
						 name, lineno, n, t->ncols);
				kb_table_release(t);
				return rc;
			}
			const char *src = row[kb_col(t, "source")];
			if (!*src) {
				int rc = gw_fail(err, GW_EFORMAT, "table '%s' line %zu: empty source", name, lineno);
				kb_table_release(t);
				return rc;
			}
			t->lines = xgrow(t->lines, &lcap, t->nrows + 1, sizeof *t->lines);
			t->lines[t->nrows] = lineno;
			t->nrows++;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!t->header) {
		kb_table_release(t);
		return gw_fail(err, GW_EFORMAT, "table '%s': empty", name);
	}
	return 0;
}

const kb_table *kb_get_table(const char *name, gw_error *err)
{
	for (size_t i = 0; i < ncache; i++)
		if (strcmp(cache[i]->name, name) == 0)
			return cache[i];
	if (ncache == KB_MAX_TABLES) {
		gw_fail(err, GW_ERANGE, "too many tables");
		return NULL;
	}
	kb_table *t = xcalloc(1, sizeof *t);
	int rc;
	const char *dir = kb_data_dir();
	rc = GW_ENOENT;
	if (dir) {
		/*
		 * A data directory replaces the tables it holds; a table it does
		 * not hold falls back to the built-in copy, so updating one table
		 * does not mean copying them all.  A missing directory is an error.
		 */
		struct stat st;
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			free(t);
			gw_fail(err, GW_ENOENT, "cannot open data directory '%s'", dir);
			return NULL;
		}
		char *path = xasprintf("%s/%s.tsv", dir, name);
		/* only a missing file falls back: a loop or a FIFO is an error */
		if (stat(path, &st) == 0 || errno != ENOENT) {
			char *text;
			size_t len;
			rc = gw_read_file(path, false, 64u << 20, &text, &len, err);
			if (!rc) {
				rc = kb_parse_tsv(t, name, text, len, err);
				free(text);
			}
		}
		free(path);
	}
	if (rc == GW_ENOENT) {
		rc = GW_ENOENT;
		gw_fail(err, GW_ENOENT, "no embedded table '%s'", name);
		for (const struct kb_blob *b = kb_blobs; b->name; b++)
			if (strcmp(b->name, name) == 0) {
				rc = kb_parse_tsv(t, name, b->data, b->len, err);
				break;
			}
	}
	if (rc) {
		free(t);
		return NULL;
	}
	cache[ncache++] = t;
	return t;
}

const char *kb_embedded_name(size_t i)
{
	for (const struct kb_blob *b = kb_blobs; b->name; b++, i--)
		if (i == 0)
			return b->name;
	return NULL;
}

long kb_col(const kb_table *t, const char *col)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->header[i], col) == 0)
			return (long)i;
	return -1;
}

const char *kb_cell(const kb_table *t, size_t row, long col)
{
	if (col < 0 || (size_t)col >= t->ncols || row >= t->nrows)
		return "";
	return t->cells[row * t->ncols + (size_t)col];
}

int kb_data_dir_check(gw_error *err)
{
	for (const struct kb_blob *b = kb_blobs; b->name; b++)
		if (!kb_get_table(b->name, err))
			return err && err->code ? err->code : GW_EFORMAT;
	return 0;
}

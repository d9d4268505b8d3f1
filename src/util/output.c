/*
 * output.c: text tables, colours (terminal only, NO_COLOR respected) and
 * git-style error messages.  Only cmd/ calls these.
 */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct table {
	size_t ncols, nrows, cap;
	char **cells; /* nrows+1 rows (row 0 = headers) */
	bool *right;
};

table *table_new(size_t ncols, const char *const *headers)
{
	table *t = xcalloc(1, sizeof *t);
	t->ncols = ncols;
	t->right = xcalloc(ncols, sizeof *t->right);
	table_addv(t, headers);
	return t;
}

void table_set_align(table *t, size_t col, bool right)
{
	if (col < t->ncols)
		t->right[col] = right;
}

void table_addv(table *t, const char *const *cells)
{
	t->cells = xgrow(t->cells, &t->cap, (t->nrows + 1) * t->ncols, sizeof *t->cells);
	for (size_t i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = xstrdup(cells[i] ? cells[i] : "");
	t->nrows++;
}

void table_add(table *t, ...)
{
	const char *cells[32];
	va_list ap;
	va_start(ap, t);
	for (size_t i = 0; i < t->ncols && i < 32; i++)
		cells[i] = va_arg(ap, const char *);
	va_end(ap);
	table_addv(t, cells);
}

/* Terminal columns of UTF-8 text: two per CJK character (util/i18n.c). */
static size_t u8_width(const char *s)
{
	return gw_display_width(s);
}

void table_print(const table *t, FILE *f)
{
	size_t *w = xcalloc(t->ncols, sizeof *w);
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t l = u8_width(t->cells[r * t->ncols + c]);
			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		if (r == 0)
			fputs(c_bold(f), f);
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t pad = w[c] - u8_width(s);
			bool last = c + 1 == t->ncols;
			if (t->right[c])
				fprintf(f, "%*s%s", (int)pad, "", s);
			else
				fprintf(f, "%s%*s", s, last ? 0 : (int)pad, "");
			if (!last)
				fputs("  ", f);
		}
		if (r == 0)
			fputs(c_reset(f), f);
		fputc('\n', f);
	}
	free(w);
}

void table_free(table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->right);
	free(t);
}

static bool nocolor_flag;

void out_set_nocolor(bool off)
{
	nocolor_flag = off;
}

bool out_color(FILE *f)
{
	if (nocolor_flag)
		return false;
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return false;
	const char *term = getenv("TERM");
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fileno(f));
}

#define COLOR_FN(name, code) \
	const char *name(FILE *f) { return out_color(f) ? code : ""; }
COLOR_FN(c_red, "\033[31m")
COLOR_FN(c_yellow, "\033[33m")
COLOR_FN(c_green, "\033[32m")
COLOR_FN(c_bold, "\033[1m")
COLOR_FN(c_dim, "\033[2m")
COLOR_FN(c_reset, "\033[0m")

void gw_errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpuwise: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void gw_warnf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpuwise: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/*
 * util.c: errors, allocation helpers, strbuf and string helpers.
 */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

const char *gw_strerror(int code)
{
	switch (code) {
	case GW_OK:
		return "success";
#define GW_ERR_CASE(name, text) \
	case GW_E##name:        \
		return text;
		GW_ERRNO_MAP(GW_ERR_CASE)
#undef GW_ERR_CASE
	}
	return "unknown error";
}

int gw_fail(gw_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		err->fmt = fmt;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

static void die_oom(size_t n)
{
	fprintf(stderr, "gpuwise: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die_oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	return q;
}

void *xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 8;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			die_oom(SIZE_MAX);
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		die_oom(SIZE_MAX);
	p = xrealloc(p, c * size);
	*cap = c;
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t l = strnlen(s, n);
	char *p = xmalloc(l + 1);
	memcpy(p, s, l);
	p[l] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	return sb_detach(&sb);
}

void sb_init(strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void sb_release(strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

void sb_add(strbuf *sb, const char *s, size_t n)
{
	sb->buf = xgrow(sb->buf, &sb->cap, sb->len + n + 1, 1);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_vprintf(strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	sb->buf = xgrow(sb->buf, &sb->cap, sb->len + (size_t)n + 1, 1);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_printf(strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

char *sb_detach(strbuf *sb)
{
	char *p = sb->buf ? sb->buf : xstrdup("");
	sb_init(sb);
	return p;
}

const char *sb_str(const strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

bool str_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

bool str_ieq(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

char *str_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

void str_squash(const char *in, char *out, size_t n)
{
	size_t j = 0;
	for (; *in && j + 1 < n; in++)
		if (isalnum((unsigned char)*in))
			out[j++] = (char)tolower((unsigned char)*in);
	if (n)
		out[j] = '\0';
}

size_t str_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xcalloc(lb + 1, sizeof *row);
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = prev + cost;
			if (row[j] + 1 < v)
				v = row[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			prev = cur;
		}
	}
	size_t d = row[lb];
	free(row);
	return d;
}

size_t str_split(char *s, char sep, char **parts, size_t max)
{
	size_t n = 0;
	while (n < max) {
		parts[n++] = s;
		char *p = strchr(s, sep);
		if (!p)
			break;
		*p = '\0';
		s = p + 1;
	}
	return n;
}

void sb_prom_label(strbuf *sb, const char *k, const char *v, bool first)
{
	sb_printf(sb, "%s%s=\"", first ? "" : ",", k);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			sb_printf(sb, "\\%c", *v);
		else if (*v == '\n')
			sb_puts(sb, "\\n");
		else
			sb_add(sb, v, 1);
	}
	sb_puts(sb, "\"");
}

static size_t ctl_len(const unsigned char *p)
{
	if (*p < 0x20 || *p == 0x7f)
		return 1;
	if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	return 0;
}

bool str_has_ctl(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; s && *p; p++)
		if (ctl_len(p))
			return true;
	return false;
}

const char *str_esc_ctl(const char *s, char *buf, size_t n)
{
	size_t o = 0;
	if (!n)
		return buf;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t c = ctl_len(p);
		if (c) {
			if (o + 4 * c >= n)
				break;
			for (size_t k = 0; k < c; k++)
				o += (size_t)snprintf(buf + o, n - o, "\\x%02x", p[k]);
			p += c;
			continue;
		}
		/* one whole UTF-8 character, or nothing */
		size_t l = *p < 0x80 ? 1 : *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : 4;
		size_t k = 1;
		while (k < l && p[k])
			k++;
		if (o + k >= n)
			break;
		memcpy(buf + o, p, k);
		o += k;
		p += k;
	}
	buf[o] = 0;
	return buf;
}

static char *title_at;
static size_t title_len;

void gw_proc_title_init(int argc, char **argv)
{
	if (argc < 1 || !argv[0])
		return;
	char *end = argv[0] + strlen(argv[0]);
	for (int i = 1; i < argc; i++)
		if (argv[i] == end + 1)
			end = argv[i] + strlen(argv[i]);
	title_at = argv[0];
	title_len = (size_t)(end - argv[0]);
}

void gw_proc_title_set(const char *title)
{
	char comm[16];
	snprintf(comm, sizeof comm, "%s", title);
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	if (!title_at || !title_len)
		return;
	size_t n = strlen(title);
	if (n > title_len)
		n = title_len;
	memcpy(title_at, title, n);
	memset(title_at + n, 0, title_len - n + 1);
}


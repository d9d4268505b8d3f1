/*
 * i18n.c: the language choice, the catalog lookup and display widths.
 *
 * Two ways to the same catalog (po/zh_CN.po compiled by msgfmt):
 *  - glibc's gettext (dgettext) over a .mo on disk: GPUWISE_LOCALEDIR,
 *    else next to the binary (../share/locale for an install, build/locale
 *    for ./gpuwise in a checkout, ../locale for build/check/gpuwise), when
 *    setlocale() can select zh_CN (the locale is generated);
 *  - else the .mo embedded at build time (obj/catalog.c), read here: the
 *    GNU .mo format (magic, count, two tables of length/offset pairs,
 *    originals sorted by strcmp, which msgfmt guarantees), searched by
 *    bisection.  zh_CN has one plural form, so msgstr[0] answers ngettext.
 */
#include "util/i18n.h"
#include "util/util.h"

#include <ctype.h>
#include <libintl.h>
#include <limits.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOMAIN "gpuwise"
#define MO_REL "zh_CN/LC_MESSAGES/" DOMAIN ".mo"

extern const unsigned char gw_catalog_mo[];
extern const size_t gw_catalog_mo_len;

enum mode { MODE_OFF, MODE_GLIBC, MODE_EMBEDDED };
static enum mode mode = MODE_OFF;
static enum mode chosen = MODE_OFF; /* what init picked, for gw_i18n_source */
static char glibc_dir[PATH_MAX];
static char source_text[PATH_MAX + 16];

static uint32_t mo_u32(size_t off)
{
	if (off + 4 > gw_catalog_mo_len)
		return 0;
	const unsigned char *p = gw_catalog_mo + off;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The embedded translation of msgid, or NULL (checked against the blob's size). */
static const char *mo_find(const char *msgid)
{
	if (gw_catalog_mo_len < 28 || mo_u32(0) != 0x950412deu)
		return NULL;
	uint32_t n = mo_u32(8), orig = mo_u32(12), trans = mo_u32(16);
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t len = mo_u32(orig + 8 * mid), off = mo_u32(orig + 8 * mid + 4);
		if ((size_t)off + len >= gw_catalog_mo_len)
			return NULL;
		int c = strcmp(msgid, (const char *)gw_catalog_mo + off);
		if (c == 0) {
			uint32_t tlen = mo_u32(trans + 8 * mid), toff = mo_u32(trans + 8 * mid + 4);
			if ((size_t)toff + tlen >= gw_catalog_mo_len || tlen == 0)
				return NULL;
			return (const char *)gw_catalog_mo + toff;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const char *gw_gettext(const char *msgid)
{
	if (!msgid || !*msgid || mode == MODE_OFF)
		return msgid;
	if (mode == MODE_GLIBC)
		return dgettext(DOMAIN, msgid);
	const char *t = mo_find(msgid);
	return t ? t : msgid;
}

const char *gw_ngettext(const char *msgid, const char *plural, unsigned long n)
{
	if (mode == MODE_OFF)
		return n == 1 ? msgid : plural;
	if (mode == MODE_GLIBC)
		return dngettext(DOMAIN, msgid, plural, n);
	const char *t = mo_find(msgid);
	return t ? t : (n == 1 ? msgid : plural);
}

/* Simplified Chinese: zh, zh_CN, zh_SG, zh_Hans (zh_TW and zh_HK are not). */
static bool lang_is_zh(const char *l)
{
	if (!l || strncmp(l, "zh", 2) != 0)
		return false;
	const char *r = l + 2;
	return *r == '\0' || *r == '.' || *r == '@' || *r == ':' || strncmp(r, "_CN", 3) == 0 ||
	       strncmp(r, "_SG", 3) == 0 || strncmp(r, "_Hans", 5) == 0 || strncmp(r, "-Hans", 5) == 0;
}

/* The reader's language as glibc would choose it: LANGUAGE (unless the
 * locale is C), then LC_ALL, LC_MESSAGES, LANG. */
static bool env_wants_zh(void)
{
	const char *loc = NULL;
	const char *vars[] = {"LC_ALL", "LC_MESSAGES", "LANG"};
	for (size_t i = 0; i < 3 && !loc; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			loc = v;
	}
	if (!loc || strcmp(loc, "C") == 0 || strcmp(loc, "POSIX") == 0 || strncmp(loc, "C.", 2) == 0)
		return false;
	const char *language = getenv("LANGUAGE");
	if (language && *language)
		return lang_is_zh(language);
	return lang_is_zh(loc);
}

static bool mo_file_in(const char *dir)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s/%s", dir, MO_REL) >= (int)sizeof p)
		return false;
	return access(p, R_OK) == 0;
}

/* The directory holding zh_CN/LC_MESSAGES/gpuwise.mo, into glibc_dir; false if none. */
static bool find_locale_dir(void)
{
	const char *env = getenv("GPUWISE_LOCALEDIR");
	if (env) {
		/* given: that directory only (empty or without the file: embedded) */
		if (*env && mo_file_in(env)) {
			snprintf(glibc_dir, sizeof glibc_dir, "%s", env);
			return true;
		}
		return false;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	const char *rel[] = {"../share/locale", "build/locale", "../locale"};
	for (size_t i = 0; i < 3; i++) {
		char d[PATH_MAX];
		if (snprintf(d, sizeof d, "%s/%s", exe, rel[i]) >= (int)sizeof d)
			continue;
		if (mo_file_in(d)) {
			char *real = realpath(d, NULL);
			snprintf(glibc_dir, sizeof glibc_dir, "%s", real ? real : d);
			free(real);
			return true;
		}
	}
	return false;
}

int gw_i18n_init(const char *lang)
{
	setlocale(LC_CTYPE, "");
	setlocale(LC_MESSAGES, "");
	mode = chosen = MODE_OFF;
	bool zh;
	if (lang) {
		if (strcmp(lang, "en") == 0 || strcmp(lang, "C") == 0)
			zh = false;
		else if (lang_is_zh(lang))
			zh = true;
		else
			return -1;
	} else {
		zh = env_wants_zh();
	}
	if (!zh)
		return 0;
	/* glibc answers only when LC_MESSAGES is a zh locale that exists */
	const char *cur = setlocale(LC_MESSAGES, NULL);
	if (!cur || !lang_is_zh(cur))
		cur = setlocale(LC_MESSAGES, "zh_CN.UTF-8");
	if (cur && lang_is_zh(cur) && find_locale_dir() && bindtextdomain(DOMAIN, glibc_dir) &&
	    bind_textdomain_codeset(DOMAIN, "UTF-8")) {
		/* LANGUAGE=en would make glibc answer in English where we chose zh */
		if (lang)
			unsetenv("LANGUAGE");
		mode = chosen = MODE_GLIBC;
		snprintf(source_text, sizeof source_text, "glibc %s", glibc_dir);
	} else {
		mode = chosen = MODE_EMBEDDED;
		snprintf(source_text, sizeof source_text, "embedded");
	}
	return 0;
}

bool gw_i18n_zh(void)
{
	return mode != MODE_OFF;
}

void gw_i18n_disable(void)
{
	mode = MODE_OFF;
	/* strerror() follows LC_MESSAGES: English too, byte for byte */
	setlocale(LC_MESSAGES, "C");
}

const char *gw_i18n_source(void)
{
	return chosen == MODE_OFF ? "off" : source_text;
}

/* ---- display width ------------------------------------------------------ */

/* East Asian Wide (W) and Fullwidth (F) ranges of Unicode's
 * EastAsianWidth.txt (https://www.unicode.org/Public/UCD/latest/ucd/EastAsianWidth.txt,
 * read 2026-12-02), the ones glibc's wcwidth() also counts as 2. */
static const struct { unsigned lo, hi; } wide[] = {
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x2E99}, {0x2E9B, 0x2EF3}, {0x2F00, 0x2FD5}, {0x2FF0, 0x2FFF}, {0x3000, 0x3029},
	{0x302E, 0x303E}, {0x3041, 0x3096}, {0x309B, 0x30FF}, {0x3105, 0x312F}, {0x3131, 0x318E},
	{0x3190, 0x31E5}, {0x31EF, 0x321E}, {0x3220, 0x3247}, {0x3250, 0xA48C}, {0xA490, 0xA4C6},
	{0xA960, 0xA97C}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE52},
	{0xFE54, 0xFE66}, {0xFE68, 0xFE6B}, {0xFF01, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F320},
	{0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA},
	{0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E},
	{0x1F440, 0x1F440}, {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E},
	{0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4},
	{0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2},
	{0x1F6EB, 0x1F6EC}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945},
	{0x1F947, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

int gw_cp_width(unsigned cp)
{
	/* combining marks and zero-width characters take no column */
	if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) ||
	    (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0x3099 ||
	    cp == 0x309A || (cp >= 0x302A && cp <= 0x302D))
		return 0;
	if (cp < 0x1100)
		return 1;
	size_t lo = 0, hi = sizeof wide / sizeof wide[0];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cp < wide[mid].lo)
			hi = mid;
		else if (cp > wide[mid].hi)
			lo = mid + 1;
		else
			return 2;
	}
	return 1;
}

size_t gw_display_width_n(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t w = 0;
	while (p < end && *p) {
		unsigned cp = *p, len = 1;
		if (cp >= 0xF0 && cp < 0xF8)
			cp &= 0x07, len = 4;
		else if (cp >= 0xE0 && cp < 0xF0)
			cp &= 0x0F, len = 3;
		else if (cp >= 0xC0 && cp < 0xE0)
			cp &= 0x1F, len = 2;
		else if (cp >= 0x80) {
			/* a stray byte: one column, as before */
			w++, p++;
			continue;
		}
		unsigned k = 1;
		for (; k < len && p + k < end && (p[k] & 0xC0) == 0x80; k++)
			cp = cp << 6 | (p[k] & 0x3F);
		if (k < len) {
			w++, p++;
			continue;
		}
		w += (size_t)gw_cp_width(cp);
		p += len;
	}
	return w;
}

size_t gw_display_width(const char *s)
{
	return s ? gw_display_width_n(s, strlen(s)) : 0;
}

/* ---- translating text that was formatted in English ----------------------- */

/*
 * A text another process formatted in English (the queue daemon's reasons,
 * kept in its state and sent as JSON): find the catalog's format it came
 * from by matching the format against it (%s: any text, %d/%u/...: an
 * integer, %f/%g: a number), then print the captured pieces into the
 * translation, translating each %s piece the same way (a reason quoting
 * another).  Formats with fewer than 6 literal characters are never tried.
 */
#define TR_MAX_ARGS 12
struct tr_cap {
	const char *p;
	size_t n;
};

static bool is_conv(char c)
{
	return strchr("sdiuxXfFgGeEcp", c) != NULL;
}

/* The directive at f (after '%'): its length and conversion, false if none. */
static bool directive(const char *f, size_t *len, char *conv)
{
	size_t i = 0;
	while (f[i] && strchr("0123456789$.-+ #*'", f[i]))
		i++;
	while (f[i] && strchr("hlzjtLq", f[i]))
		i++;
	if (!f[i] || !is_conv(f[i]))
		return false;
	*len = i + 1;
	*conv = f[i];
	return true;
}

static bool match_fmt(const char *f, const char *s, struct tr_cap *caps, size_t *nc, int depth)
{
	if (depth > 64)
		return false;
	while (*f) {
		if (*f == '%' && f[1] == '%') {
			if (*s != '%')
				return false;
			f += 2, s++;
			continue;
		}
		size_t len;
		char conv;
		if (*f == '%' && directive(f + 1, &len, &conv)) {
			if (*nc >= TR_MAX_ARGS)
				return false;
			const char *next = f + 1 + len;
			size_t k = *nc;
			if (conv == 's' || conv == 'c' || conv == 'p') {
				/* shortest first, each length tried until the rest matches */
				for (size_t l = 0;; l++) {
					caps[k].p = s, caps[k].n = l;
					*nc = k + 1;
					if (match_fmt(next, s + l, caps, nc, depth + 1))
						return true;
					if (!s[l])
						return false;
				}
			}
			size_t l = 0;
			if (s[l] == '-' || s[l] == '+')
				l++;
			bool num = conv != 'd' && conv != 'i' && conv != 'u' && conv != 'x' && conv != 'X';
			while (s[l] && (isdigit((unsigned char)s[l]) || (num && strchr(".eE+-naif", s[l])) ||
					((conv == 'x' || conv == 'X') && isxdigit((unsigned char)s[l]))))
				l++;
			if (l == 0)
				return false;
			/* numbers are greedy but may give back what the literal after them needs */
			for (; l > 0; l--) {
				caps[k].p = s, caps[k].n = l;
				*nc = k + 1;
				if (match_fmt(next, s + l, caps, nc, depth + 1))
					return true;
			}
			return false;
		}
		if (*f != *s)
			return false;
		f++, s++;
	}
	return *s == '\0';
}

static size_t literal_chars(const char *f)
{
	size_t n = 0, len;
	char conv;
	for (; *f; f++) {
		if (*f == '%' && directive(f + 1, &len, &conv)) {
			f += len;
			continue;
		}
		n++;
	}
	return n;
}

/*
 * Whether every literal piece of the format f occurs in s, in order: a
 * cheap test before match_fmt, whose shortest-first %s search is
 * exponential in the directives it tries ("%s%s%s%s%s; ..." against a
 * long text took seconds for each catalog entry).
 */
static bool literals_in_order(const char *f, const char *s)
{
	char seg[256];
	size_t k = 0, len;
	char conv;
	for (;; f++) {
		bool end = !*f;
		bool dir = !end && *f == '%' && f[1] != '%' && directive(f + 1, &len, &conv);
		if (end || dir) {
			if (k) {
				seg[k] = '\0';
				const char *at = strstr(s, seg);
				if (!at)
					return false;
				s = at + k;
				k = 0;
			}
			if (end)
				return true;
			f += len;
			continue;
		}
		if (*f == '%' && f[1] == '%')
			f++;
		if (k < sizeof seg - 1)
			seg[k++] = *f;
	}
}

static void tr_text(strbuf *out, const char *s, size_t n, int depth);

/* Print caps into the translation tr (directives in order, or n$ positions). */
static void tr_fill(strbuf *out, const char *tr, const struct tr_cap *caps, size_t nc, const char *fmt, int depth)
{
	char convs[TR_MAX_ARGS] = {0};
	bool quoted[TR_MAX_ARGS] = {0}; /* '%s': a name, path or value as given, never translated */
	size_t k = 0, len;
	char conv;
	for (const char *f = fmt; *f && k < nc; f++)
		if (*f == '%' && f[1] == '%')
			f++;
		else if (*f == '%' && directive(f + 1, &len, &conv)) {
			quoted[k] = f > fmt && (f[-1] == '\'' || f[-1] == '"') && f[1 + len] == f[-1];
			convs[k++] = conv, f += len;
		}
	size_t next = 0;
	for (const char *t = tr; *t; t++) {
		if (*t == '%' && t[1] == '%') {
			sb_add(out, "%", 1);
			t++;
			continue;
		}
		if (*t == '%' && directive(t + 1, &len, &conv)) {
			size_t idx = next++;
			if (isdigit((unsigned char)t[1])) {
				char *end;
				long pos = strtol(t + 1, &end, 10);
				if (*end == '$' && pos >= 1)
					idx = (size_t)pos - 1;
			}
			/* an English plural ending ("GPU%s" with "s") has no Chinese counterpart */
			bool suffix = idx < nc && convs[idx] == 's' &&
				      ((caps[idx].n == 1 && caps[idx].p[0] == 's') ||
				       (caps[idx].n == 2 && caps[idx].p[0] == 'e' && caps[idx].p[1] == 's'));
			if (idx < nc && !suffix) {
				if (convs[idx] == 's' && !quoted[idx])
					tr_text(out, caps[idx].p, caps[idx].n, depth + 1);
				else
					sb_add(out, caps[idx].p, caps[idx].n);
			}
			t += len;
			continue;
		}
		sb_add(out, t, 1);
	}
}

static void tr_text(strbuf *out, const char *s, size_t n, int depth)
{
	char *text = xstrndup(s, n);
	const char *exact = gw_gettext(text);
	if (exact != text || depth > 2 || !*text) {
		sb_puts(out, exact);
		free(text);
		return;
	}
	uint32_t cnt = gw_catalog_mo_len >= 28 && mo_u32(0) == 0x950412deu ? mo_u32(8) : 0;
	uint32_t orig = mo_u32(12);
	for (uint32_t i = 0; i < cnt; i++) {
		uint32_t len = mo_u32(orig + 8 * i), off = mo_u32(orig + 8 * i + 4);
		if ((size_t)off + len >= gw_catalog_mo_len)
			break;
		const char *fmt = (const char *)gw_catalog_mo + off;
		if (!strchr(fmt, '%') || literal_chars(fmt) < 6 || !literals_in_order(fmt, text))
			continue;
		struct tr_cap caps[TR_MAX_ARGS];
		size_t nc = 0;
		if (match_fmt(fmt, text, caps, &nc, 0)) {
			const char *tr = gw_gettext(fmt);
			if (tr != fmt) {
				tr_fill(out, tr, caps, nc, fmt, depth);
				free(text);
				return;
			}
		}
	}
	/* a reason with a note appended: "<reason> (GPUs are held for it)" */
	for (char *p = strrchr(text, '('); p && p > text + 1; p = p > text + 1 ? memrchr(text, '(', (size_t)(p - text)) : NULL) {
		if (p[-1] != ' ')
			continue;
		const char *note = gw_gettext(p - 1);
		if (note == p - 1)
			continue;
		strbuf head = STRBUF_INIT;
		tr_text(&head, text, (size_t)(p - 1 - text), depth + 1);
		if (strncmp(sb_str(&head), text, (size_t)(p - 1 - text)) != 0 || head.len != (size_t)(p - 1 - text)) {
			sb_puts(out, sb_str(&head));
			sb_puts(out, note);
			sb_release(&head);
			free(text);
			return;
		}
		sb_release(&head);
	}
	sb_puts(out, text);
	free(text);
}

char *gw_translate_text(const char *english)
{
	if (!english)
		return NULL;
	if (mode == MODE_OFF)
		return xstrdup(english);
	strbuf sb = STRBUF_INIT;
	tr_text(&sb, english, strlen(english), 0);
	return sb_detach(&sb);
}

char *gw_translate_fmt(const char *fmt, const char *english)
{
	if (!english)
		return NULL;
	if (mode == MODE_OFF || !fmt)
		return xstrdup(english);
	const char *tr = gw_gettext(fmt);
	struct tr_cap caps[TR_MAX_ARGS];
	size_t nc = 0;
	if (tr == fmt || !match_fmt(fmt, english, caps, &nc, 0))
		return xstrdup(english);
	strbuf sb = STRBUF_INIT;
	tr_fill(&sb, tr, caps, nc, fmt, 0);
	return sb_detach(&sb);
}

const char *gw_error_text(const gw_error *err)
{
	static char bufs[4][2048];
	static unsigned next;
	if (!err)
		return "";
	if (mode == MODE_OFF || !err->msg[0])
		return err->msg;
	char *t = err->fmt ? gw_translate_fmt(err->fmt, err->msg) : NULL;
	if (!t || strcmp(t, err->msg) == 0) {
		free(t);
		t = gw_translate_text(err->msg);
	}
	char *buf = bufs[next++ % 4];
	snprintf(buf, sizeof bufs[0], "%s", t);
	free(t);
	return buf;
}

/*
 * i18n: GNU gettext for every user-facing string (issue 24).
 *
 *   _("text")            the translation of text in the reader's language
 *   N_("text")           marks text for xgettext where a translation cannot
 *                        be looked up yet (static tables); translate at print
 *   P_("one", "many", n) plural forms (ngettext)
 *
 * The catalog is po/zh_CN.po compiled by msgfmt.  gw_i18n_init() picks the
 * language (--lang, else LC_ALL / LC_MESSAGES / LANG / LANGUAGE as glibc
 * does) and the catalog: glibc's own gettext over an installed or built
 * .mo when the zh_CN locale exists, else the copy embedded in the binary
 * (so the single-file release binary needs nothing but glibc).  JSON keys
 * and values, metric names, ids and printed commands are never wrapped;
 * --json and --prometheus output is never translated (main.c turns the
 * catalog off for them).
 */
#ifndef GW_I18N_H
#define GW_I18N_H

#include <stdbool.h>
#include <stddef.h>

#define _(s) gw_gettext(s)
#define N_(s) (s)
#define P_(s, p, n) gw_ngettext((s), (p), (unsigned long)(n))

/* format_arg: printf checks the English format against the arguments, as
 * glibc's gettext declaration does (msgfmt --check keeps the translation's
 * directives the same). */
const char *gw_gettext(const char *msgid) __attribute__((format_arg(1)));
const char *gw_ngettext(const char *msgid, const char *plural, unsigned long n)
	__attribute__((format_arg(1), format_arg(2)));

/*
 * Choose the language and the catalog.  lang is "en", "zh" (also "zh_CN",
 * "C") or NULL for the environment.  Returns 0, or -1 for a language this
 * build has no catalog for.  Sets LC_CTYPE and LC_MESSAGES from the
 * environment, never LC_NUMERIC (JSON and tables keep the '.' decimal).
 */
int gw_i18n_init(const char *lang);
/* True while output is in Chinese (the zh_CN catalog is on). */
bool gw_i18n_zh(void);
/* Turn translation off (--json, --prometheus: English, byte for byte). */
void gw_i18n_disable(void);
/* "glibc DIR", "embedded" or "off": which catalog answers (GPUWISE_I18N_DEBUG). */
const char *gw_i18n_source(void);

/*
 * The translation of a text formatted in English elsewhere (the queue
 * daemon's reasons): its catalog format is found by matching, the pieces
 * are put into the translated format.  Malloc'd; the text itself (copied)
 * when no format matches or translation is off.
 */
char *gw_translate_text(const char *english);
/*
 * The same when the caller knows the catalog format english was made from
 * (src/plan keeps it beside the English text): only that format is tried,
 * its %s pieces translated as gw_translate_text does.  Malloc'd; a copy of
 * english when fmt is NULL, has no translation or does not match.
 */
char *gw_translate_fmt(const char *fmt, const char *english);

/*
 * err->msg in the reader's language, for src/cmd to print: translated with
 * its format (err->fmt, set by gw_fail) when that matches, else by matching
 * the catalog as gw_translate_text does; err->msg itself when translation
 * is off (--json, LANG=C).  The text lives in a static buffer (one of 4,
 * reused in turn): print it before the fifth call.
 */
struct gw_error;
const char *gw_error_text(const struct gw_error *err);

/* Display width of UTF-8 text in terminal columns: East Asian wide and
 * fullwidth characters count 2, combining marks 0, the rest 1. */
size_t gw_display_width(const char *s);
/* The same for the first n bytes. */
size_t gw_display_width_n(const char *s, size_t n);
/* Columns of one code point (0, 1 or 2), as wcwidth() gives under a UTF-8 locale. */
int gw_cp_width(unsigned cp);

#endif

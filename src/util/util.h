/*
 * util: errors, allocation, units, strings, root-prefixed file access,
 * tables and JSON helpers shared by every layer.  Nothing here prints
 * except the explicit output helpers used by cmd/.
 */
#ifndef GW_UTIL_H
#define GW_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/i18n.h"

/* ---- errors (libuv style X-macro) ------------------------------------- */
#define GW_ERRNO_MAP(X)                                   \
	X(NOMEM, "out of memory")                         \
	X(IO, "input/output error")                       \
	X(NOENT, "no such file or directory")             \
	X(INVAL, "invalid argument")                      \
	X(FORMAT, "malformed input")                      \
	X(TRUNC, "truncated input")                       \
	X(RANGE, "value out of range")                    \
	X(NOTSUP, "not supported")                        \
	X(NOSYM, "symbol not found")                      \
	X(NODEV, "no such device")                        \
	X(PERM, "permission denied")                      \
	X(TIMEOUT, "timed out")                           \
	X(NOTFOUND, "not found")                          \
	X(LOST, "device lost")                            \
	X(CHILD, "child process failed")                  \
	X(DENIED, "access denied by the server")          \
	X(GONE, "not found on the server")                \
	X(NET, "network failure")                         \
	X(UNREACH, "network unreachable")

enum {
	GW_OK = 0,
#define GW_ERR_ENUM(name, text) GW_E##name,
	GW__EFIRST = -100,
	GW_ERRNO_MAP(GW_ERR_ENUM)
#undef GW_ERR_ENUM
};

const char *gw_strerror(int code);

/* A failure with its specific text, filled by domain code, printed by cmd/. */
typedef struct gw_error {
	int code;
	char msg[512];
	/* the (literal, English) format gw_fail made msg from, NULL for a text
	 * written another way: src/cmd prints gw_error_text(), which translates */
	const char *fmt;
} gw_error;

/* Set err (if non-NULL) and return code, for `return gw_fail(err, ...)`;
 * fmt is a literal (`make pot` extracts it: keyword gw_fail:3). */
int gw_fail(gw_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Exit statuses, the same for every command. */
enum {
	GW_EXIT_OK = 0,
	GW_EXIT_RUNTIME = 1,
	GW_EXIT_USAGE = 2,
	GW_EXIT_VERDICT3 = 3,
	GW_EXIT_VERDICT4 = 4,
	/* a model read from the Hugging Face Hub or Ollama's registry (plan) */
	GW_EXIT_REMOTE_NOTFOUND = 5, /* no such repository, file or tag (HTTP 404) */
	GW_EXIT_REMOTE_DENIED = 6,   /* gated or private (HTTP 401/403) */
	GW_EXIT_NETWORK = 7,         /* timeout, truncated reply, redirect loop, no network */
};

/* ---- allocation that aborts with a message on out-of-memory ---------- */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow an array: returns p resized to hold at least need elements of size. */
void *xgrow(void *p, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- growable string ------------------------------------------------- */
typedef struct strbuf {
	char *buf;
	size_t len, cap;
} strbuf;
#define STRBUF_INIT {NULL, 0, 0}
void sb_init(strbuf *sb);
void sb_release(strbuf *sb);
void sb_add(strbuf *sb, const char *s, size_t n);
void sb_puts(strbuf *sb, const char *s);
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One Prometheus label k="v" (preceded by a comma unless first), the value
 * escaped as the exposition format asks: backslash, double quote, newline. */
void sb_prom_label(strbuf *sb, const char *k, const char *v, bool first);
void sb_vprintf(strbuf *sb, const char *fmt, va_list ap);
char *sb_detach(strbuf *sb); /* caller frees; sb is reset */
/*
 * s for a terminal: control characters (C0, DEL and UTF-8 C1) written as
 * \xHH, so a name cannot move the cursor, ring, set the clipboard or start
 * a forged row; written into buf (cut at n, on a character), returned.
 */
const char *str_esc_ctl(const char *s, char *buf, size_t n);
/*
 * The process title `ps` shows: gw_proc_title_init(argc, argv) at the start
 * of main keeps where the command line lies; gw_proc_title_set writes over
 * it (cut to its length) and names the thread, so a forked helper says
 * what it is instead of repeating its parent's command.
 */
void gw_proc_title_init(int argc, char **argv);
void gw_proc_title_set(const char *title);
/* Does s hold a control character (what str_esc_ctl would escape)? */
bool str_has_ctl(const char *s);
const char *sb_str(const strbuf *sb); /* never NULL */

/* ---- strings --------------------------------------------------------- */
bool str_starts(const char *s, const char *prefix);
bool str_ends(const char *s, const char *suffix);
bool str_ieq(const char *a, const char *b);
char *str_trim(char *s); /* in place; returns s advanced past leading space */
/* Lower-case, keep only [a-z0-9] into out (for fuzzy name matching). */
void str_squash(const char *in, char *out, size_t n);
/* Damerau-free Levenshtein distance (for "did you mean"). */
size_t str_distance(const char *a, const char *b);
/* Split s on sep (in place); returns count, fills at most max pointers. */
size_t str_split(char *s, char sep, char **parts, size_t max);

/* ---- units ----------------------------------------------------------- */
/*
 * Sizes: plain bytes, K/M/G/T and KiB/MiB/GiB/TiB (binary), KB/MB/GB/TB
 * (decimal); fractions allowed ("7.5G").  Returns 0 or GW_EINVAL/GW_ERANGE.
 */
int parse_size(const char *s, uint64_t *bytes);
/* Durations: ms, s, m, h (a bare number is seconds). */
int parse_duration_ms(const char *s, uint64_t *ms);
/* Counts with k/m/b/t suffixes ("13b" = 13e9).  Used for parameter counts. */
int parse_count(const char *s, double *out);
/* Strict integer parsing with bounds. */
int parse_int(const char *s, long long min, long long max, long long *out);
int parse_double(const char *s, double *out);
/* "7.50 GiB", "512 MiB", "12 KiB", "100 B" */
const char *fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* "1h 02m", "3m 05s", "4.2s", "250ms" */
const char *fmt_duration(char *buf, size_t n, uint64_t ms);

#define KiB (1024ULL)
#define MiB (1024ULL * 1024ULL)
#define GiB (1024ULL * 1024ULL * 1024ULL)

/* ---- files under the root prefix (GPUWISE_ROOT) ---------------------- */
/* The root prefix for /proc, /sys, /dev and system paths; "" when unset. */
const char *gw_root(void);
void gw_set_root(const char *root); /* tests; NULL = read env again */
/* Malloc'd root + abs path. */
char *gw_path(const char *abs);
/* Glob a pattern under the root; *out gets malloc'd paths without the root
 * (NULL-terminated), the count is returned; free with gw_list_free. */
size_t gw_glob(const char *pattern, char ***out);
void gw_list_free(char **l, size_t n);
/*
 * Open path for reading without ever blocking: O_NONBLOCK (a FIFO with no
 * writer would otherwise hang open()), then refuse anything that is not a
 * regular file ("not a regular file"; a symlink loop is an error, not
 * absent).  Returns the fd (blocking mode restored) or a negative code
 * with err set; display names the file in the message (NULL: path).
 */
int gw_open_regular(const char *path, const char *display, gw_error *err);
/* Read a whole regular file (root-prefixed when rooted is true), at most max bytes. */
int gw_read_file(const char *path, bool rooted, size_t max, char **out, size_t *len, gw_error *err);
/* Read the first line of a small file under the root, trimmed; NULL if absent. */
char *gw_read_line(const char *abs);
/* Read an integer from a small file under the root (sysfs style). */
int gw_read_ll(const char *abs, long long *out);
bool gw_exists(const char *abs);

/* ---- time ------------------------------------------------------------ */
uint64_t now_ms(void);      /* monotonic */
uint64_t wall_ms(void);     /* CLOCK_REALTIME */
void sleep_ms(uint64_t ms);

/* ---- text tables (cmd/ output) --------------------------------------- */
typedef struct table table;
table *table_new(size_t ncols, const char *const *headers);
void table_set_align(table *t, size_t col, bool right);
void table_add(table *t, ...); /* exactly ncols const char * */
void table_addv(table *t, const char *const *cells);
void table_print(const table *t, FILE *f);
void table_free(table *t);

/* ---- terminal output helpers (cmd/ only) ------------------------------ */
/* True when f is a terminal, NO_COLOR is unset and --no-color was not given. */
bool out_color(FILE *f);
void out_set_nocolor(bool off);
const char *c_red(FILE *f);
const char *c_yellow(FILE *f);
const char *c_green(FILE *f);
const char *c_bold(FILE *f);
const char *c_dim(FILE *f);
const char *c_reset(FILE *f);
/* "gpuwise: <msg>" to stderr (git style: lowercase, no full stop). */
void gw_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gw_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

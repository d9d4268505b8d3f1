/*
 * fetch.c: HTTP GETs through libcurl, loaded with dlopen like NVML and
 * libmicrohttpd: the release binary links only glibc (tests/e2e/static.t),
 * and a machine without libcurl still plans every local and catalog model
 * (the network is then "unreachable", and the caller says so).  curl.h
 * gives the types and option numbers; the functions come from the library.
 *
 * libcurl reads the proxy variables itself (http_proxy, https_proxy,
 * HTTPS_PROXY, ALL_PROXY, NO_PROXY: libcurl's CURLOPT_PROXY documentation).
 */
#include "model/fetch.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { F_INIT, F_SETOPT, F_PERFORM, F_GETINFO, F_CLEANUP, F_STRERROR, F_SLIST_APPEND, F_SLIST_FREE, F_GLOBAL, F_N };
static const char *const fn_names[F_N] = {"curl_easy_init", "curl_easy_setopt", "curl_easy_perform",
	"curl_easy_getinfo", "curl_easy_cleanup", "curl_easy_strerror", "curl_slist_append",
	"curl_slist_free_all", "curl_global_init"};

typedef CURL *(*init_fn)(void);
typedef CURLcode (*setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*perform_fn)(CURL *);
typedef CURLcode (*getinfo_fn)(CURL *, CURLINFO, ...);
typedef void (*cleanup_fn)(CURL *);
typedef const char *(*strerror_fn)(CURLcode);
typedef struct curl_slist *(*slist_append_fn)(struct curl_slist *, const char *);
typedef void (*slist_free_fn)(struct curl_slist *);
typedef CURLcode (*global_fn)(long);

#define FN(n, i, t) ((t)(n)->fn[i])

int net_open(net_ctx *n, gw_error *err)
{
	memset(n, 0, sizeof *n);
	const char *want = getenv("GPUWISE_CURL_LIB");
	if (want && !strcmp(want, "none"))
		return gw_fail(err, GW_EUNREACH, "no network (GPUWISE_CURL_LIB=none)");
	/* Debian: libcurl4 (OpenSSL) or libcurl3-gnutls (which git needs) */
	const char *names[] = {want && *want ? want : "libcurl.so.4", want && *want ? NULL : "libcurl-gnutls.so.4"};
	const char *e = NULL;
	for (size_t i = 0; i < 2 && names[i] && !n->lib; i++) {
		n->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!n->lib && !e)
			e = dlerror();
	}
	if (!n->lib)
		return gw_fail(err, GW_EUNREACH, "no network: cannot load '%s' (install libcurl4): %s", names[0],
			       e ? e : "not found");
	for (int i = 0; i < F_N; i++) {
		n->fn[i] = dlsym(n->lib, fn_names[i]);
		if (!n->fn[i]) {
			dlclose(n->lib);
			n->lib = NULL;
			return gw_fail(err, GW_EUNREACH, "no network: '%s' lacks %s", names[0], fn_names[i]);
		}
	}
	FN(n, F_GLOBAL, global_fn)(CURL_GLOBAL_DEFAULT);
	n->easy = FN(n, F_INIT, init_fn)();
	if (!n->easy) {
		dlclose(n->lib);
		n->lib = NULL;
		return gw_fail(err, GW_EUNREACH, "no network: curl_easy_init failed");
	}
	n->timeout_s = 30;
	const char *t = getenv("GPUWISE_NET_TIMEOUT");
	long long v;
	if (t && *t && parse_int(t, 1, 3600, &v) == 0)
		n->timeout_s = (long)v;
	return 0;
}

void net_close(net_ctx *n)
{
	if (n->easy)
		FN(n, F_CLEANUP, cleanup_fn)(n->easy);
	/* libcurl is not dlclose'd: OpenSSL's atexit handlers stay behind */
	free(n->bearer);
	memset(n, 0, sizeof *n);
}

void net_resp_release(net_resp *r)
{
	free(r->body);
	free(r->final_url);
	memset(r, 0, sizeof *r);
}

/* ---- one transfer ---------------------------------------------------- */

typedef struct xfer {
	net_ctx *n;
	net_resp *r;
	size_t cap, max;
	bool over;               /* the body passed max: stopped */
	const char *what;
	struct timespec t0;
	bool shown;              /* progress was shown */
	uint64_t expect;         /* bytes a Range asked for (0: whole) */
} xfer;

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	size_t k = size * nmemb;
	if (x->r->len + k > x->max) {
		long status = 0;
		FN(x->n, F_GETINFO, getinfo_fn)(x->n->easy, CURLINFO_RESPONSE_CODE, &status);
		if (status >= 300 && x->r->len < 65536)
			return k; /* an error page: its status says enough */
		x->over = true;
		return 0; /* CURLE_WRITE_ERROR: never read past what was asked */
	}
	x->r->body = xgrow(x->r->body, &x->cap, x->r->len + k + 1, 1);
	memcpy(x->r->body + x->r->len, p, k);
	x->r->len += k;
	x->r->body[x->r->len] = 0;
	x->n->bytes_in += k;
	return k;
}

/* Copy a header's value (trimmed) into out when the line is "name: value". */
static bool header_value(const char *line, size_t len, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name);
	if (len <= nl || strncasecmp(line, name, nl) || line[nl] != ':')
		return false;
	const char *v = line + nl + 1;
	const char *end = line + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	size_t k = (size_t)(end - v) < n - 1 ? (size_t)(end - v) : n - 1;
	memcpy(out, v, k);
	out[k] = 0;
	return true;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	size_t k = size * nmemb;
	char v[256];
	if (k >= 5 && !strncmp(p, "HTTP/", 5)) {
		/* a new response (after a redirect): its own range and error;
		 * the Hub's X-Repo-Commit stays from the first */
		x->r->range_total = 0;
		x->r->error_code[0] = x->r->error_msg[0] = 0;
	} else if (header_value(p, k, "Content-Range", v, sizeof v)) {
		const char *slash = strrchr(v, '/');
		if (slash && slash[1] != '*')
			x->r->range_total = strtoull(slash + 1, NULL, 10);
	} else if (!header_value(p, k, "X-Repo-Commit", x->r->commit, sizeof x->r->commit) &&
		   !header_value(p, k, "X-Error-Code", x->r->error_code, sizeof x->r->error_code)) {
		header_value(p, k, "X-Error-Message", x->r->error_msg, sizeof x->r->error_msg);
	}
	return k;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	xfer *x = ud;
	if (!x->n->progress)
		return 0;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double s = (double)(t.tv_sec - x->t0.tv_sec) + (double)(t.tv_nsec - x->t0.tv_nsec) / 1e9;
	if (s < 1.0)
		return 0;
	x->shown = true;
	uint64_t total = x->expect ? x->expect : dltotal > 0 ? (uint64_t)dltotal : 0;
	x->n->progress(x->n->progress_ctx, x->what, dlnow > 0 ? (uint64_t)dlnow : 0, total, false);
	return 0;
}

int net_get(net_ctx *n, const char *url, uint64_t from, uint64_t to, size_t max, const char *accept,
	    const char *what, net_resp *r, gw_error *err)
{
	setopt_fn so = FN(n, F_SETOPT, setopt_fn);
	CURL *h = n->easy;
	struct curl_slist *hdrs = NULL;
	char range[64], ua[64], cerr[CURL_ERROR_SIZE] = "";
	xfer x = {.n = n, .r = r, .max = max, .what = what};
	int rc = 0;

	memset(r, 0, sizeof *r);
	if (!h)
		return gw_fail(err, GW_EUNREACH, "no network");
	if (to > from) {
		/* a Range reply carries exactly to - from bytes; room for no more */
		x.expect = to - from;
		x.max = (size_t)(to - from);
		snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)from, (unsigned long long)(to - 1));
	}
	clock_gettime(CLOCK_MONOTONIC, &x.t0);
	/* curl_easy_reset is not among the functions loaded: set every option each time */
	so(h, CURLOPT_URL, url);
	so(h, CURLOPT_RANGE, to > from ? range : NULL);
	so(h, CURLOPT_FOLLOWLOCATION, 1L);
	so(h, CURLOPT_MAXREDIRS, 10L);
	so(h, CURLOPT_PROTOCOLS_STR, "http,https");
	so(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	so(h, CURLOPT_NOSIGNAL, 1L);
	so(h, CURLOPT_CONNECTTIMEOUT, n->timeout_s);
	/* a stalled transfer (nothing for timeout_s, waiting for the reply
	 * included) is a timeout; a slow but moving one is not */
	so(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	so(h, CURLOPT_LOW_SPEED_TIME, n->timeout_s);
	snprintf(ua, sizeof ua, "gpuwise/%s", GPUWISE_VERSION);
	so(h, CURLOPT_USERAGENT, ua);
	so(h, CURLOPT_ACCEPT_ENCODING, NULL); /* byte ranges of the file itself, never compressed */
	if (accept) {
		char a[200];
		snprintf(a, sizeof a, "Accept: %s", accept);
		hdrs = FN(n, F_SLIST_APPEND, slist_append_fn)(hdrs, a);
	}
	so(h, CURLOPT_HTTPHEADER, hdrs);
	/* the token goes to the host asked, never to the CDN a redirect names
	 * (libcurl sends CURLOPT_XOAUTH2_BEARER to the first host only) */
	so(h, CURLOPT_HTTPAUTH, n->bearer ? (long)CURLAUTH_BEARER : (long)CURLAUTH_BASIC);
	so(h, CURLOPT_XOAUTH2_BEARER, n->bearer);
	so(h, CURLOPT_WRITEFUNCTION, on_body);
	so(h, CURLOPT_WRITEDATA, &x);
	so(h, CURLOPT_HEADERFUNCTION, on_header);
	so(h, CURLOPT_HEADERDATA, &x);
	so(h, CURLOPT_NOPROGRESS, 0L);
	so(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	so(h, CURLOPT_XFERINFODATA, &x);
	so(h, CURLOPT_ERRORBUFFER, cerr);
	so(h, CURLOPT_FAILONERROR, 0L);

	n->requests++;
	CURLcode c = FN(n, F_PERFORM, perform_fn)(h);
	FN(n, F_GETINFO, getinfo_fn)(h, CURLINFO_RESPONSE_CODE, &r->status);
	char *eff = NULL;
	if (FN(n, F_GETINFO, getinfo_fn)(h, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff)
		r->final_url = xstrdup(eff);
	if (x.shown && n->progress)
		n->progress(n->progress_ctx, what, r->len, x.expect, true);
	so(h, CURLOPT_ERRORBUFFER, NULL);
	so(h, CURLOPT_HTTPHEADER, NULL);
	FN(n, F_SLIST_FREE, slist_free_fn)(hdrs);
	const char *why = cerr[0] ? cerr : FN(n, F_STRERROR, strerror_fn)(c);

	switch (c) {
	case CURLE_OK:
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
		rc = gw_fail(err, GW_EUNREACH, "cannot reach '%s': %s", url, why);
		goto out;
	case CURLE_OPERATION_TIMEDOUT:
		rc = gw_fail(err, GW_ETIMEOUT, "cannot read '%s': timed out after %ld s without data (GPUWISE_NET_TIMEOUT)",
			     what, n->timeout_s);
		goto out;
	case CURLE_PARTIAL_FILE:
		rc = gw_fail(err, GW_ENET, "cannot read '%s': truncated response (%zu bytes, the server announced more)",
			     what, r->len);
		goto out;
	case CURLE_TOO_MANY_REDIRECTS:
		rc = gw_fail(err, GW_ENET, "cannot read '%s': redirect loop (more than 10 redirects) at '%s'", what, url);
		goto out;
	case CURLE_WRITE_ERROR:
		if (x.over) {
			if (x.expect)
				rc = gw_fail(err, GW_ENET,
					     "cannot read '%s': the server ignored the byte range asked for (stopped after "
					     "%zu bytes: weights are never downloaded)", what, r->len);
			else
				rc = gw_fail(err, GW_ENET, "cannot read '%s': larger than %zu bytes", what, max);
			goto out;
		}
		/* fall through */
	default:
		rc = gw_fail(err, GW_ENET, "cannot read '%s': %s", what, why);
		goto out;
	}
	if (x.expect && r->status == 206 && r->len != x.expect &&
	    !(r->range_total && from + r->len == r->range_total)) {
		rc = gw_fail(err, GW_ENET, "cannot read '%s': truncated response (%zu of %llu bytes)", what, r->len,
			     (unsigned long long)x.expect);
		goto out;
	}
	if (!r->body)
		r->body = xcalloc(1, 1);
	return 0;
out:
	net_resp_release(r);
	return rc;
}

/* ---- the cache directory --------------------------------------------- */

char *net_cache_dir(void)
{
	const char *d = getenv("GPUWISE_CACHE_DIR");
	if (d && *d)
		return xasprintf("%s/hub", d);
	d = getenv("XDG_CACHE_HOME");
	if (d && *d)
		return xasprintf("%s/gpuwise/hub", d);
	d = getenv("HOME");
	if (d && *d)
		return xasprintf("%s/.cache/gpuwise/hub", d);
	return NULL;
}

int net_mkdirs_for(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash && slash != dir) {
		*slash = 0;
		for (char *p = dir + 1; *p && !rc; p++) {
			if (*p != '/')
				continue;
			*p = 0;
			if (mkdir(dir, 0755) && errno != EEXIST)
				rc = -1;
			*p = '/';
		}
		if (!rc && mkdir(dir, 0755) && errno != EEXIST)
			rc = -1;
	}
	free(dir);
	return rc;
}

int net_write_file(const char *path, const void *data, size_t len)
{
	if (net_mkdirs_for(path))
		return -1;
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = -1;
	if (fd >= 0) {
		const uint8_t *p = data;
		size_t done = 0;
		while (done < len) {
			ssize_t k = write(fd, p + done, len - done);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			done += (size_t)k;
		}
		if (close(fd) == 0 && done == len && rename(tmp, path) == 0)
			rc = 0;
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

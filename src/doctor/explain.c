/*
 * explain.c: match error text against the signatures of data/errors.tsv
 * (POSIX extended regular expressions with named captures), rank the
 * diagnoses, and parse PyTorch's out-of-memory message.
 */
#include "doctor/doctor.h"
#include "hw/hw.h"

#include <ctype.h>
#include <pthread.h>
#include <pwd.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/kb.h"
#include "util/json.h"

typedef struct sig {
	char *id, *title;
	char **causes, **fixes; /* the table's JSON arrays, each entry whole */
	size_t n_causes, n_fixes;
	int priority;
	regex_t re;
	char **names;   /* names[i] names group i (NULL: unnamed), i <= nsub */
	size_t nsub;
	char **lits;    /* lowercase literals, one per top-level alternative */
	size_t n_lits;
} sig;

/*
 * The regex of a signature runs only in a window of this many bytes before
 * and after an occurrence of one of its literals, and after a window that
 * did not match the next one starts at least this far on: every signature
 * costs O(input) whatever its pattern, and a match is found when it lies
 * within 1 KiB of its literal (every message of the corpus does).
 */
#define SIG_WINDOW_BYTES 1024
#define SIG_MIN_LITERAL 3
/* Free memory below this on an OOM is a full GPU, not a broken allocator. */
#define OOM_TIGHT_FREE_BYTES ((int64_t)256 << 20)

static sig *sigs;
static size_t nsigs;
static int sigs_rc;
static gw_error sigs_err;
static bool sigs_loaded;
static pthread_mutex_t sigs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Skip a bracket expression starting at p ('['); returns the char after ']'. */
static const char *skip_bracket(const char *p)
{
	const char *q = p + 1;
	if (*q == '^')
		q++;
	if (*q == ']')
		q++;
	while (*q && *q != ']') {
		if (*q == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
			const char *e = strstr(q + 2, (char[]){q[1], ']', 0});
			q = e ? e + 2 : q + strlen(q);
		} else {
			q++;
		}
	}
	return *q ? q + 1 : q;
}

/*
 * Rewrite "(?<name>" to "(" and record which group number each name
 * belongs to.  Groups are counted by unescaped '(' outside bracket
 * expressions, which is how regcomp numbers them.  Returns the new
 * pattern (caller frees); *names gets ngroups+1 entries.
 */
static char *strip_names(const char *re, char ***names, size_t *ngroups)
{
	strbuf sb = STRBUF_INIT;
	size_t cap = 0, g = 0;
	char **nm = NULL;
	for (const char *p = re; *p;) {
		if (*p == '\\' && p[1]) {
			sb_add(&sb, p, 2);
			p += 2;
		} else if (*p == '[') {
			const char *q = skip_bracket(p);
			sb_add(&sb, p, (size_t)(q - p));
			p = q;
		} else if (*p == '(') {
			g++;
			nm = xgrow(nm, &cap, g + 1, sizeof *nm);
			nm[g] = NULL;
			sb_add(&sb, "(", 1);
			p++;
			if (p[0] == '?' && p[1] == '<') {
				const char *e = strchr(p + 2, '>');
				if (e) {
					nm[g] = xstrndup(p + 2, (size_t)(e - p - 2));
					p = e + 1;
				}
			}
		} else {
			sb_add(&sb, p, 1);
			p++;
		}
	}
	if (!nm)
		nm = xcalloc(1, sizeof *nm);
	nm[0] = NULL;
	*names = nm;
	*ngroups = g;
	return sb_detach(&sb);
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void sig_free(sig *s)
{
	free(s->id);
	free(s->title);
	strv_free(s->causes, s->n_causes);
	strv_free(s->fixes, s->n_fixes);
	strv_free(s->lits, s->n_lits);
	regfree(&s->re);
	for (size_t i = 0; i <= s->nsub; i++)
		free(s->names[i]);
	free(s->names);
}

/*
 * Parse a cell holding a JSON array of strings into *v (each entry
 * xstrdup'd).  0, or -1 when the cell is not such an array.
 */
static int parse_strv(const char *cell, char ***v, size_t *n)
{
	*v = NULL;
	*n = 0;
	json_error_t jerr;
	json_t *a = json_loads(cell, JSON_REJECT_DUPLICATES, &jerr);
	if (!a || !json_is_array(a)) {
		json_decref(a);
		return -1;
	}
	size_t i;
	json_t *e;
	*v = xcalloc(json_array_size(a) + 1, sizeof **v);
	json_array_foreach(a, i, e) {
		if (!json_is_string(e) || !*json_string_value(e)) {
			strv_free(*v, *n);
			*v = NULL;
			*n = 0;
			json_decref(a);
			return -1;
		}
		(*v)[(*n)++] = xstrdup(json_string_value(e));
	}
	json_decref(a);
	return 0;
}

static void sb_clear(strbuf *sb)
{
	sb->len = 0;
}


/*
 * The literals a match must contain: for each top-level alternative of
 * the (name-stripped) pattern, its longest run of plain characters outside
 * groups, brackets and quantified atoms, lowercased.  Returns false when
 * some alternative has no literal of SIG_MIN_LITERAL characters: such a
 * pattern could only be run over the whole input, which the table forbids.
 */
static bool extract_literals(const char *re, char ***lits, size_t *n)
{
	strbuf run = STRBUF_INIT, best = STRBUF_INIT;
	bool ok = true;
	*lits = NULL;
	*n = 0;
	size_t cap = 0;
	for (const char *p = re;; ) {
		char c = *p;
		if (c == '\0' || c == '|') {
			if (run.len > best.len) {
				sb_clear(&best);
				sb_add(&best, run.buf, run.len);
			}
			if (best.len < SIG_MIN_LITERAL)
				ok = false;
			*lits = xgrow(*lits, &cap, *n + 1, sizeof **lits);
			(*lits)[(*n)++] = xstrndup(best.buf ? best.buf : "", best.len);
			sb_clear(&run);
			sb_clear(&best);
			if (!c)
				break;
			p++;
			continue;
		}
		bool lit = false, transparent = false;
		char ch = 0;
		const char *next = p + 1;
		if (c == '\\' && p[1]) {
			if (!isalnum((unsigned char)p[1])) {
				lit = true;
				ch = p[1];
			}
			next = p + 2;
		} else if (c == '[') {
			next = skip_bracket(p);
		} else if (c == '(') {
			/* a group that is neither quantified nor holds an alternation
			 * of its own is part of the run; any other group ends it */
			int depth = 1;
			bool alt = false;
			const char *q = p + 1;
			while (*q && depth) {
				if (*q == '\\' && q[1]) {
					q += 2;
				} else if (*q == '[') {
					q = skip_bracket(q);
				} else {
					alt |= depth == 1 && *q == '|';
					depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
					q++;
				}
			}
			if (alt || *q == '*' || *q == '?' || *q == '{')
				next = q;
			else
				transparent = true;
		} else if (c == ')') {
			transparent = true;
		} else if (c == '*' || c == '?' || c == '+' || c == '{') {
			/* the atom before is optional or repeated: it ends the run
			 * and, unless '+', does not belong to it */
			if (c != '+' && run.len)
				run.len--;
			if (c == '{') {
				const char *e = strchr(p, '}');
				next = e ? e + 1 : p + strlen(p);
			}
		} else if (c != '.' && c != '^' && c != '$') {
			lit = true;
			ch = c;
		}
		if (transparent) {
			/* nothing: the group's characters continue the run */
		} else if (lit && !(*next == '*' || *next == '?' || *next == '{')) {
			char lc = (char)tolower((unsigned char)ch);
			sb_add(&run, &lc, 1);
		} else {
			if (run.len > best.len) {
				sb_clear(&best);
				sb_add(&best, run.buf, run.len);
			}
			sb_clear(&run);
		}
		p = next;
	}
	sb_release(&run);
	sb_release(&best);
	return ok;
}

/* ---- vendor status-code catalogs (data/error-catalog.tsv, data/xid.tsv) ---- */

typedef struct cat_row {
	const char *family, *name, *diag, *msg, *meaning, *source; /* table cells */
	char *own_name;  /* "Xid N" rows own their name */
	long code;
	int depth;       /* how deep in a software stack the code is raised: 3 innermost */
} cat_row;

static cat_row *cats;  /* error-catalog rows, sorted by name */
static size_t ncats;
static cat_row *xids;  /* xid rows */
static size_t nxids;
static const cat_row **printed_rows; /* the CUDA runtime and HIP rows with a printed message */
static size_t nprinted;

/*
 * A wrapper reports the error of the layer below: NCCL around CUDA, a
 * cuBLAS status around a CUDA error.  The innermost code is the cause.
 */
static int family_depth(const char *f)
{
	if (!strcmp(f, "nccl"))
		return 1;
	if (!strcmp(f, "cublas") || !strcmp(f, "cudnn") || !strcmp(f, "cufft") || !strcmp(f, "cusolver"))
		return 2;
	return 3; /* cuda-runtime, cuda-driver, hip, xid */
}

static int cat_cmp(const void *a, const void *b)
{
	return strcmp(((const cat_row *)a)->name, ((const cat_row *)b)->name);
}

/* The diagnosis whose advice fits an Xid, as the signatures of errors.tsv pick them. */
static const char *xid_diag(long x)
{
	switch (x) {
	case 79:
		return "gpu-fell-off-bus";
	case 48: case 63: case 64: case 92: case 94: case 95: case 140: case 171: case 172:
		return "ecc-error";
	case 119: case 120:
		return "gsp-timeout";
	default:
		return "xid";
	}
}

static int load_catalog(void)
{
	const kb_table *t = kb_get_table("error-catalog", &sigs_err);
	if (!t)
		return sigs_err.code ? sigs_err.code : GW_ENOENT;
	long cf = kb_col(t, "family"), cn = kb_col(t, "name"), cc = kb_col(t, "code"), cd = kb_col(t, "diagnosis"),
	     cm = kb_col(t, "message"), cw = kb_col(t, "meaning"), cs = kb_col(t, "source");
	if (cf < 0 || cn < 0 || cc < 0 || cd < 0 || cm < 0 || cw < 0 || cs < 0)
		return gw_fail(&sigs_err, GW_EFORMAT, "table 'error-catalog': needs columns family, name, code, "
				"diagnosis, message, meaning, source");
	cats = xcalloc(t->nrows + 1, sizeof *cats);
	for (size_t r = 0; r < t->nrows; r++) {
		char *end;
		const char *code = kb_cell(t, r, cc);
		long v = strtol(code, &end, 10);
		if (!*code || *end || !*kb_cell(t, r, cn))
			return gw_fail(&sigs_err, GW_EFORMAT, "table 'error-catalog' line %zu: code '%s' is not a number",
				       t->lines[r], code);
		cat_row *c = &cats[ncats++];
		c->family = kb_cell(t, r, cf);
		c->name = kb_cell(t, r, cn);
		c->diag = kb_cell(t, r, cd);
		c->msg = kb_cell(t, r, cm);
		c->meaning = kb_cell(t, r, cw);
		c->source = kb_cell(t, r, cs);
		c->code = v;
		c->depth = family_depth(c->family);
	}
	qsort(cats, ncats, sizeof *cats, cat_cmp);
	printed_rows = xcalloc(ncats + 1, sizeof *printed_rows);
	for (size_t i = 0; i < ncats; i++)
		if (*cats[i].msg && (!strcmp(cats[i].family, "cuda-runtime") || !strcmp(cats[i].family, "hip")))
			printed_rows[nprinted++] = &cats[i];
	const kb_table *x = kb_get_table("xid", &sigs_err);
	if (!x)
		return sigs_err.code ? sigs_err.code : GW_ENOENT;
	long xx = kb_col(x, "xid"), xm = kb_col(x, "meaning"), xs = kb_col(x, "source");
	xids = xcalloc(x->nrows + 1, sizeof *xids);
	for (size_t r = 0; r < x->nrows; r++) {
		cat_row *c = &xids[nxids++];
		c->code = atol(kb_cell(x, r, xx));
		c->own_name = xasprintf("Xid %ld", c->code);
		c->name = c->own_name;
		c->family = "xid";
		c->diag = xid_diag(c->code);
		c->msg = "";
		c->meaning = kb_cell(x, r, xm);
		c->source = kb_cell(x, r, xs);
		c->depth = 3;
	}
	return 0;
}

static void release_catalog(void)
{
	for (size_t i = 0; i < nxids; i++)
		free(xids[i].own_name);
	free(xids);
	free(cats);
	free(printed_rows);
	xids = cats = NULL;
	printed_rows = NULL;
	nxids = ncats = nprinted = 0;
}

static void load_sigs(void)
{
	if ((sigs_rc = load_catalog()) != 0)
		return;

	const kb_table *t = kb_get_table("errors", &sigs_err);
	if (!t) {
		sigs_rc = sigs_err.code ? sigs_err.code : GW_ENOENT;
		return;
	}
	long ci = kb_col(t, "id"), cp = kb_col(t, "priority"), cr = kb_col(t, "regex"),
	     ct = kb_col(t, "title"), cc = kb_col(t, "causes"), cf = kb_col(t, "fixes");
	if (ci < 0 || cr < 0 || ct < 0 || cc < 0 || cf < 0 || cp < 0) {
		sigs_rc = gw_fail(&sigs_err, GW_EFORMAT,
				  "table 'errors': needs columns id, priority, regex, title, causes, fixes");
		return;
	}
	sigs = xcalloc(t->nrows ? t->nrows : 1, sizeof *sigs);
	for (size_t r = 0; r < t->nrows; r++) {
		sig *s = &sigs[nsigs];
		const char *id = kb_cell(t, r, ci);
		char *pat = strip_names(kb_cell(t, r, cr), &s->names, &s->nsub);
		int rc = regcomp(&s->re, pat, REG_EXTENDED | REG_ICASE);
		const char *why = NULL;
		char msg[128];
		if (rc) {
			regerror(rc, &s->re, msg, sizeof msg);
			why = "bad regex";
		} else if (s->re.re_nsub != s->nsub) {
			snprintf(msg, sizeof msg, "group count %zu, expected %zu", (size_t)s->re.re_nsub, s->nsub);
			regfree(&s->re);
			why = "bad regex";
		} else if (!extract_literals(pat, &s->lits, &s->n_lits)) {
			snprintf(msg, sizeof msg, "an alternative has no literal of %d characters outside groups",
				 SIG_MIN_LITERAL);
			why = "unbounded regex";
		} else if (parse_strv(kb_cell(t, r, cc), &s->causes, &s->n_causes)) {
			snprintf(msg, sizeof msg, "column causes is not a JSON array of strings");
			why = "bad list";
		} else if (parse_strv(kb_cell(t, r, cf), &s->fixes, &s->n_fixes)) {
			snprintf(msg, sizeof msg, "column fixes is not a JSON array of strings");
			why = "bad list";
		}
		free(pat);
		if (why) {
			if (!rc && s->re.re_nsub == s->nsub)
				regfree(&s->re);
			strv_free(s->lits, s->n_lits);
			strv_free(s->causes, s->n_causes);
			for (size_t i = 0; i <= s->nsub; i++)
				free(s->names[i]);
			free(s->names);
			memset(s, 0, sizeof *s);
			sigs_rc = gw_fail(&sigs_err, GW_EFORMAT, "table 'errors' row %zu (%s): %s: %s", r + 1, id, why, msg);
			return;
		}
		s->id = xstrdup(id);
		s->title = xstrdup(kb_cell(t, r, ct));
		s->priority = atoi(kb_cell(t, r, cp));
		nsigs++;
	}
}

static void explain_fix_rules_release(void);

void explain_release(void)
{
	pthread_mutex_lock(&sigs_lock);
	for (size_t i = 0; i < nsigs; i++)
		sig_free(&sigs[i]);
	free(sigs);
	sigs = NULL;
	nsigs = 0;
	release_catalog();
	explain_fix_rules_release();
	sigs_rc = 0;
	sigs_loaded = false;
	pthread_mutex_unlock(&sigs_lock);
	explain_retrieve_release();
}

const char *explain_cap(const explain_match_t *m, const char *name)
{
	for (size_t i = 0; i < m->n_caps; i++)
		if (strcmp(m->caps[i].name, name) == 0)
			return m->caps[i].value;
	return NULL;
}

static void cap_set(explain_match_t *m, const char *name, const char *value)
{
	for (size_t i = 0; i < m->n_caps; i++)
		if (strcmp(m->caps[i].name, name) == 0) {
			free(m->caps[i].value);
			m->caps[i].value = xstrdup(value);
			return;
		}
	m->caps = xrealloc(m->caps, (m->n_caps + 1) * sizeof *m->caps);
	m->caps[m->n_caps].name = xstrdup(name);
	m->caps[m->n_caps].value = xstrdup(value);
	m->n_caps++;
}

/* Fill {name} placeholders; *ok is false when one has no value. */
static char *render(const char *tmpl, const explain_match_t *m, bool *ok)
{
	strbuf sb = STRBUF_INIT;
	*ok = true;
	for (const char *p = tmpl; *p;) {
		const char *e;
		if (*p == '{' && (e = strchr(p, '}')) && e - p < 40) {
			char name[40];
			memcpy(name, p + 1, (size_t)(e - p - 1));
			name[e - p - 1] = '\0';
			const char *v = explain_cap(m, name);
			if (v && *v)
				sb_puts(&sb, v);
			else
				*ok = false;
			p = e + 1;
		} else {
			sb_add(&sb, p, 1);
			p++;
		}
	}
	sb_puts(&sb, "");
	return sb_detach(&sb);
}

static void list_add(char ***list, size_t *n, char *s, bool front)
{
	*list = xrealloc(*list, (*n + 1) * sizeof **list);
	if (front) {
		memmove(*list + 1, *list, *n * sizeof **list);
		(*list)[0] = s;
	} else {
		(*list)[*n] = s;
	}
	(*n)++;
}

/* Render each entry of a table list; entries with a missing capture are left out. */
static void render_list(char *const *tmpl, size_t nt, const explain_match_t *m, char ***list, size_t *n)
{
	for (size_t i = 0; i < nt; i++) {
		bool ok;
		char *r = render(_(tmpl[i]), m, &ok);
		if (ok)
			list_add(list, n, r, false);
		else
			free(r);
	}
}

const char *cuda_version_decode(long v, char *buf, size_t n)
{
	/* cuDriverGetVersion: 1000 * major + 10 * minor (CUDA driver API docs) */
	if (v <= 0)
		snprintf(buf, n, "unknown");
	else
		snprintf(buf, n, "%ld.%ld", v / 1000, (v % 1000) / 10);
	return buf;
}

static void free_match(explain_match_t *m)
{
	free(m->id);
	free(m->title);
	for (size_t i = 0; i < m->n_causes; i++)
		free(m->causes[i]);
	free(m->causes);
	for (size_t i = 0; i < m->n_fixes; i++)
		free(m->fixes[i]);
	free(m->fixes);
	for (size_t i = 0; i < m->n_caps; i++) {
		free(m->caps[i].name);
		free(m->caps[i].value);
	}
	free(m->caps);
	for (size_t i = 0; i < m->n_catalog; i++) {
		explain_catalog_row *c = &m->catalog[i];
		free(c->family);
		free(c->name);
		free(c->message);
		free(c->meaning);
		free(c->source);
	}
	free(m->catalog);
	free(m->example_source);
	free(m->example_message);
	free(m->example_resolution);
}

void explain_matches_free(explain_match_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free_match(&m[i]);
	free(m);
}

static void add_fix(explain_match_t *m, char *s, bool front)
{
	list_add(&m->fixes, &m->n_fixes, s, front);
}

static void add_cause(explain_match_t *m, char *s, bool front)
{
	list_add(&m->causes, &m->n_causes, s, front);
}

/* Values the templates can use beyond the raw captures. */
static void derive_caps(explain_match_t *m)
{
	const char *v = explain_cap(m, "cudaver");
	if (v) {
		char buf[32];
		cap_set(m, "cudaver_dotted", cuda_version_decode(atol(v), buf, sizeof buf));
	}
	v = explain_cap(m, "sm");
	if (v && strlen(v) >= 2) {
		char buf[16];
		size_t l = strspn(v, "0123456789");
		if (l >= 2) {
			snprintf(buf, sizeof buf, "%.*s.%c", (int)(l - 1), v, v[l - 1]);
			cap_set(m, "cc", buf);
		}
	}
}

static void fmt_size_or(char *buf, size_t n, int64_t b)
{
	if (b < 0)
		snprintf(buf, n, "?");
	else
		fmt_bytes(buf, n, (uint64_t)b);
}

/* The pip package of a compiled module ("flash_attn_2_cuda" -> "flash-attn"). */
static char *module_package(const char *mod)
{
	static const struct {
		const char *prefix, *pkg;
	} known[] = {
		{"flash_attn", "flash-attn"}, {"transformer_engine", "transformer-engine"}, {"xformers", "xformers"},
		{"vllm", "vllm"}, {"apex", "apex"}, {"deepspeed", "deepspeed"}, {"bitsandbytes", "bitsandbytes"},
		{"torchvision", "torchvision"}, {"torchaudio", "torchaudio"}, {"mamba_ssm", "mamba-ssm"},
		{"causal_conv1d", "causal-conv1d"}, {"sageattention", "sageattention"},
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strncmp(mod, known[i].prefix, strlen(known[i].prefix)) == 0)
			return xstrdup(known[i].pkg);
	char *p = xstrdup(mod);
	for (char *q = p; *q; q++)
		if (*q == '_')
			*q = '-';
	return p;
}

/* undefined symbol: _ZN3c10...: say which library's ABI is missing. */
static void enrich_symbol(explain_match_t *m)
{
	const char *sym = explain_cap(m, "symbol");
	const char *mod = explain_cap(m, "module");
	if (mod) {
		char *pkg = module_package(mod);
		cap_set(m, "package", pkg);
		add_fix(m, xasprintf(_("reinstall it for the installed torch: pip uninstall -y %s && pip install "
				     "--no-build-isolation --no-cache-dir %s"), pkg, pkg), true);
		free(pkg);
	}
	char *d = sym ? explain_demangle(sym) : NULL;
	if (!d)
		return;
	cap_set(m, "demangled", d);
	const char *lib = explain_symbol_library(d);
	free(m->title);
	m->title = xasprintf(_("a compiled extension%s%s does not match the installed %s (undefined symbol %s)"),
			     mod ? " " : "", mod ? mod : "", lib ? lib : _("libraries"), d);
	if (lib) {
		cap_set(m, "library", lib);
		add_cause(m, xasprintf(_("the extension calls %s from %s, which the installed version does not export: "
				       "it was built against another version%s"), d, lib,
				       strncmp(lib, "PyTorch", 7) == 0 ? _(" of torch (rebuild it against the installed torch)") : ""),
			  true);
	}
	if (strstr(sym, "__cxx11"))
		add_cause(m, xstrdup(_("the symbol uses the C++11 string ABI (std::__cxx11): a cxx11abiTRUE build on a torch "
				     "built with the old ABI, or the reverse")), false);
	free(d);
}

/* pip: no torch==X(+cuYYY) for this Python and index. */
static void enrich_pip(explain_match_t *m)
{
	const char *pkg = explain_cap(m, "pkg"), *ver = explain_cap(m, "ver");
	const char *variant = explain_cap(m, "variant"), *versions = explain_cap(m, "versions");
	if (!pkg || !ver)
		return;
	bool torch_index = versions && strchr(versions, '+');
	if (variant && !torch_index) {
		add_cause(m, xasprintf(_("pip searched PyPI only: the +%s build of %s %s lives on PyTorch's index "
				       "(https://download.pytorch.org/whl/%s), never on PyPI"), variant, pkg, ver, variant), true);
		add_fix(m, xasprintf(_("pip install %s==%s --index-url https://download.pytorch.org/whl/%s"), pkg, ver, variant),
			true);
	}
	if (torch_index || (versions && !strcmp(versions, "none"))) {
		add_cause(m, xasprintf(_("the index%s has no %s %s wheel for this Python or platform: the release has no "
				       "wheel for this Python version (too new, or 32-bit)"), torch_index ? _(" was searched but") : "",
				       pkg, ver), !variant || torch_index);
		add_fix(m, xasprintf(_("use a Python version %s %s has wheels for (a new venv: python3.10 -m venv .venv), "
				     "or pick a version the list offers"), pkg, ver), false);
	}
}

/* Specific causes and fixes computed from what the text says. */
static void enrich(explain_match_t *m, const char *text)
{
	char b1[32], b2[32], b3[32];
	if (strcmp(m->id, "cuda-oom") == 0) {
		oom_info o;
		if (explain_parse_oom(text, &o) != 0)
			return;
		if (o.requested >= 0)
			cap_set(m, "requested", fmt_bytes(b1, sizeof b1, (uint64_t)o.requested));
		if (o.total >= 0)
			cap_set(m, "total", fmt_bytes(b1, sizeof b1, (uint64_t)o.total));
		if (o.free >= 0)
			cap_set(m, "free", fmt_bytes(b1, sizeof b1, (uint64_t)o.free));
		if (o.process >= 0)
			cap_set(m, "this_process", fmt_bytes(b1, sizeof b1, (uint64_t)o.process));
		if (o.allocated >= 0)
			cap_set(m, "allocated", fmt_bytes(b1, sizeof b1, (uint64_t)o.allocated));
		if (o.reserved_unalloc >= 0)
			cap_set(m, "reserved_unallocated", fmt_bytes(b1, sizeof b1, (uint64_t)o.reserved_unalloc));
		if (o.gpu >= 0) {
			snprintf(b1, sizeof b1, "%d", o.gpu);
			cap_set(m, "gpu", b1);
		}
		cap_set(m, "verdict", oom_verdict_name(o.verdict));
		fmt_size_or(b1, sizeof b1, o.requested);
		fmt_size_or(b2, sizeof b2, o.free);
		int64_t others = o.others_bytes;
		size_t n_foreign = o.n_others - (o.self_index >= 0);
		char *self_cause = NULL;
		if (o.self_index >= 0) {
			char b4[32], b5[32];
			fmt_bytes(b4, sizeof b4, (uint64_t)o.others[o.self_index].bytes);
			fmt_bytes(b5, sizeof b5, (uint64_t)o.reserved);
			self_cause = xasprintf(_("process %u (%s) is this job itself seen from outside its PID namespace "
					       "(a container): the %s PyTorch reserved plus the CUDA context make up that "
					       "figure, and PyTorch printed no 'this process has' sentence because NVML "
					       "reports host PIDs"), o.others[o.self_index].pid, b4, b5);
			snprintf(b4, sizeof b4, "%u", o.others[o.self_index].pid);
			cap_set(m, "this_job_pid", b4);
			if (!n_foreign) /* the table's generic "other processes" cause does not apply */
				for (size_t i = 0; i < m->n_causes; i++)
					if (strstr(m->causes[i], "other processes") ||
					    strcmp(m->causes[i], _("other processes hold memory on the same GPU")) == 0) {
						free(m->causes[i]);
						memmove(m->causes + i, m->causes + i + 1, (m->n_causes - i - 1) * sizeof *m->causes);
						m->n_causes--;
						i--;
					}
		}
		switch (o.verdict) {
		case OOM_TOO_BIG:
			fmt_size_or(b2, sizeof b2, o.total);
			free(m->title);
			m->title = xasprintf(_("the GPU ran out of memory: %s requested, more than the whole GPU (%s)"), b1, b2);
			add_cause(m, xasprintf(_("one allocation of %s is larger than the GPU's total %s: this "
					       "job cannot fit on this GPU as configured"), b1, b2), true);
			add_fix(m, xstrdup(_("shrink the job (batch, sequence length, precision, quantization) or use "
					   "several GPUs or a larger one; gpuwise plan MODEL shows what fits")), true);
			break;
		case OOM_NOT_SHORTAGE:
			if (o.total > 0 && o.free < OOM_TIGHT_FREE_BYTES) {
				/* a nearly full GPU: the figures are the whole story */
				char b4[32], b5[32];
				int64_t mine = o.process >= 0 ? o.process : o.reserved >= 0 ? o.reserved : 0;
				int64_t rest = o.total - o.free - mine;
				fmt_bytes(b3, sizeof b3, (uint64_t)o.total);
				fmt_bytes(b4, sizeof b4, (uint64_t)mine);
				fmt_bytes(b5, sizeof b5, (uint64_t)(rest > 0 ? rest : 0));
				add_cause(m, xasprintf(_("the GPU is full, not broken: only %s of its %s was free, and a request "
						       "that leaves almost nothing fails (the driver allocates in 2 MiB pages and "
						       "keeps a reserve); this job holds %s and %s is held outside it: on a Windows "
						       "or WSL laptop that is the desktop (dwm.exe), the browser and other apps "
						       "drawing on the GPU"), b2, b3, b4, b5), true);
				add_fix(m, xstrdup(_("free what other programs hold: close GPU-heavy apps (a browser with hardware "
						   "acceleration, games, video); on a hybrid laptop run the desktop on the "
						   "integrated GPU; gpuwise status (nvidia-smi on Windows) lists who holds it")), true);
				break;
			}
			add_cause(m, xasprintf(_("not a plain shortage: %s was free for a %s request, so the memory "
					       "belongs to something outside this allocator (another CUDA context, a "
					       "driver problem) or the job used another GPU than intended"), b2, b1), true);
			add_fix(m, xstrdup(_("check which GPU the job really uses (CUDA_VISIBLE_DEVICES, "
					   "CUDA_DEVICE_ORDER=PCI_BUS_ID) and the kernel log for Xid errors")), true);
			break;
		case OOM_FRAGMENTATION:
			fmt_size_or(b3, sizeof b3, o.reserved_unalloc);
			add_cause(m, xasprintf(_("fragmentation: %s free plus %s reserved by PyTorch but unallocated "
					       "would cover the %s request"), b2, b3, b1), true);
			add_fix(m, xstrdup(_("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True and rerun (lets "
					   "the allocator grow segments instead of leaving reserved gaps)")), true);
			break;
		case OOM_SHORTAGE:
			fmt_size_or(b3, sizeof b3, o.shortfall);
			if (n_foreign && others >= o.shortfall) {
				char b4[32];
				fmt_bytes(b4, sizeof b4, (uint64_t)others);
				add_cause(m, xasprintf(_("a real shortage of %s, and other processes hold %s on this GPU: "
						       "stopping them would make room"), b3, b4), true);
			} else {
				add_cause(m, xasprintf(_("a real shortage: %s requested, %s free; %s short even if all "
						       "reserved-but-unallocated memory were reused"), b1, b2, b3), true);
			}
			if (o.reserved_unalloc >= (int64_t)GiB)
				add_fix(m, xstrdup(_("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reclaims part of the "
						   "reserved-but-unallocated memory, but not enough on its own")), false);
			break;
		default:
			break;
		}
		if (self_cause) {
			/* right after the verdict */
			add_cause(m, self_cause, true);
			if (m->n_causes > 1) {
				m->causes[0] = m->causes[1];
				m->causes[1] = self_cause;
			}
		}
		for (size_t i = 0; i < o.n_others; i++) {
			fmt_bytes(b1, sizeof b1, (uint64_t)o.others[i].bytes);
			snprintf(b2, sizeof b2, "%u", o.others[i].pid);
			char key[32];
			snprintf(key, sizeof key, "process_%zu", i + 1);
			char *val = xasprintf("%u %s", o.others[i].pid, b1);
			cap_set(m, key, val);
			free(val);
		}
		if (n_foreign) {
			strbuf sb = STRBUF_INIT;
			sb_puts(&sb, n_foreign > 1 ? _("see who holds the memory: gpuwise status (the message names processes")
					       : _("see who holds the memory: gpuwise status (the message names process"));
			for (size_t i = 0, k = 0; i < o.n_others; i++)
				if ((int)i != o.self_index)
					sb_printf(&sb, "%s %u", k++ ? "," : "", o.others[i].pid);
			sb_puts(&sb, _("); stop them or pick another GPU with CUDA_VISIBLE_DEVICES"));
			add_fix(m, sb_detach(&sb), o.verdict == OOM_SHORTAGE);
		}
	} else if (strcmp(m->id, "arch-unsupported") == 0) {
		const char *cc = explain_cap(m, "cc");
		int ma, mi;
		if (cc && sscanf(cc, "%d.%d", &ma, &mi) == 2 && (ma < 3 || (ma == 3 && mi < 5))) {
			/* no torch wheel ever covered it: pinning an older one cannot help */
			for (size_t i = 0; i < m->n_fixes; i++)
				free(m->fixes[i]);
			m->n_fixes = 0;
			add_cause(m, xasprintf(_("no PyTorch build supports CC %d.%d: CUDA itself dropped it (Fermi, CC 2.x, after "
					       "CUDA 8; Kepler CC 3.0 after CUDA 10) and PyTorch wheels start at CC 3.5"), ma, mi), true);
			add_fix(m, xstrdup(_("run on the CPU: pip install --force-reinstall torch --index-url "
					   "https://download.pytorch.org/whl/cpu (and use device='cpu')")), false);
			add_fix(m, xstrdup(_("use another GPU: current wheels run on CC 5.0 and newer (gpuwise cards MODEL "
					   "lists cards for a model)")), false);
		} else if (cc && sscanf(cc, "%d.%d", &ma, &mi) == 2) {
			torch_pick p;
			if (compat_pick_torch(ma, mi, NULL, &p, NULL) == 0 && (p.found || p.driver_too_old)) {
				add_fix(m, xasprintf(_("then check the driver: this build (torch %s, CUDA %s) needs "
						     "driver >= %s (nvidia-smi shows it)"), p.torch, p.cuda, p.min_driver), true);
				add_fix(m, xstrdup(p.pip_line), true);
				cap_set(m, "pip_line", p.pip_line);
			}
		}
	} else if (strcmp(m->id, "extension-abi-mismatch") == 0) {
		enrich_symbol(m);
	} else if (strcmp(m->id, "pip-torch-no-version") == 0) {
		enrich_pip(m);
	} else if (explain_cap(m, "xid")) {
		const char *meaning, *sev, *action;
		int xid = atoi(explain_cap(m, "xid"));
		if (xid_lookup(xid, &meaning, &sev, &action)) {
			/* the table's meaning and action go through the catalog
			 * (tools/tsv-pot.py extracts them; --json turns it off) */
			meaning = _(meaning);
			cap_set(m, "xid_meaning", meaning);
			cap_set(m, "dcgm_severity", sev);
			if (strcmp(m->id, "xid") == 0) {
				free(m->title);
				m->title = xasprintf(_("the NVIDIA driver reported Xid %d: %s"), xid, meaning);
				add_cause(m, xasprintf(_("Xid %d: %s (DCGM severity: %s)"), xid, meaning, sev), true);
			}
			/* first; once (ecc-error's own first fix is Xid 48's action) */
			action = _(action);
			for (size_t i = 0; i < m->n_fixes; i++)
				if (strcmp(m->fixes[i], action) == 0) {
					free(m->fixes[i]);
					memmove(m->fixes + i, m->fixes + i + 1, (m->n_fixes - i - 1) * sizeof *m->fixes);
					m->n_fixes--;
					break;
				}
			add_fix(m, xstrdup(action), true);
		}
	} else if (strcmp(m->id, "driver-too-old") == 0 && explain_cap(m, "cudaver_dotted")) {
		/* which wheels this driver can run: CUDA majors up to the driver's */
		int major = atoi(explain_cap(m, "cudaver_dotted"));
		char floor[16];
		compat_minor_floor(major + 1, floor, sizeof floor);
		if (*floor)
			add_fix(m, xasprintf(_("a CUDA %d.x build of PyTorch needs driver >= %s (minor-version "
					     "compatibility); upgrade to at least that"), major + 1, floor), true);
	}
}

/* Title, causes and fixes of signature s with the captures x holds. */
static void render_sig(explain_match_t *x, const sig *s)
{
	derive_caps(x);
	bool ok;
	/* the table's templates go through the catalog (tools/tsv-pot.py extracts them) */
	x->title = render(_(s->title), x, &ok);
	if (!ok) {
		/* drop the parenthesised detail that had no value */
		char *paren = strstr(x->title, " (");
		if (!paren)
			paren = strstr(x->title, "（");
		if (paren)
			*paren = '\0';
	}
	render_list(s->causes, s->n_causes, x, &x->causes, &x->n_causes);
	render_list(s->fixes, s->n_fixes, x, &x->fixes, &x->n_fixes);
}

static const sig *sig_by_id(const char *id)
{
	for (size_t i = 0; i < nsigs; i++)
		if (strcmp(sigs[i].id, id) == 0)
			return &sigs[i];
	return NULL;
}

/* ---- catalog hits ------------------------------------------------------- */

#define CAT_MAX_HITS 16

typedef struct cat_hit {
	const cat_row *row;
	size_t off;
} cat_hit;

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static const cat_row *cat_by_name(const char *s, size_t n)
{
	size_t lo = 0, hi = ncats;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(s, cats[mid].name, n);
		if (c == 0 && cats[mid].name[n])
			c = -1;
		if (c == 0)
			return &cats[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static const cat_row *cat_by_code(const char *family, long code)
{
	if (!strcmp(family, "xid")) {
		for (size_t i = 0; i < nxids; i++)
			if (xids[i].code == code)
				return &xids[i];
		return NULL;
	}
	for (size_t i = 0; i < ncats; i++)
		if (cats[i].code == code && !strcmp(cats[i].family, family))
			return &cats[i];
	/* a driver-API number the runtime does not list */
	if (!strcmp(family, "cuda-runtime"))
		return cat_by_code("cuda-driver", code);
	return NULL;
}

static void hit_add(cat_hit *h, size_t *n, const cat_row *r, size_t off)
{
	if (!r || r->code == 0) /* success codes explain nothing */
		return;
	for (size_t i = 0; i < *n; i++)
		if (h[i].row == r) {
			if (off < h[i].off)
				h[i].off = off;
			return;
		}
	if (*n < CAT_MAX_HITS)
		h[(*n)++] = (cat_hit){r, off};
}

/* A decimal number at p not followed by '.' or a digit; -1 when none. */
static long number_at(const char *p)
{
	if (!isdigit((unsigned char)*p))
		return -1;
	char *end;
	long v = strtol(p, &end, 10);
	if (*end == '.' && isdigit((unsigned char)end[1]))
		return -1;
	return end - p > 6 ? -1 : v;
}

/*
 * The catalog rows a message names: status names as whole words
 * (cudaErrorLaunchFailure, CUBLAS_STATUS_EXECUTION_FAILED, ncclSystemError),
 * numbered forms ("CUDA error 2", "Cuda failure 999", "cusolver error: 7"),
 * printed messages ("CUDA error: misaligned address", "HIP error: ...")
 * and kernel-log Xids ("Xid (PCI:0000:01:00): 31,").  Linear in len.
 */
static size_t catalog_scan(const char *text, const char *lower, size_t len, cat_hit *h)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		if (!ident_char(text[i]) || (i && ident_char(text[i - 1]))) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < len && ident_char(text[j]))
			j++;
		char c = text[i];
		if (j - i >= 6 && (c == 'c' || c == 'C' || c == 'n' || c == 'h'))
			hit_add(h, &n, cat_by_name(text + i, j - i), i);
		i = j;
	}
	static const struct {
		const char *lit, *family;
	} numbered[] = {
		{"cuda error ", "cuda-runtime"}, {"cuda failure ", "cuda-runtime"}, {"cuda error code ", "cuda-runtime"},
		{"cusolver error: ", "cusolver"}, {"cufft error(", "cufft"}, {"cublas failure ", "cublas"},
		{"cublas error ", "cublas"}, {"cudnn error ", "cudnn"}, {"nccl error ", "nccl"}, {"hip error ", "hip"},
	};
	for (size_t k = 0; k < sizeof numbered / sizeof numbered[0]; k++) {
		size_t ll = strlen(numbered[k].lit);
		for (const char *p = lower; (p = memmem(p, len - (size_t)(p - lower), numbered[k].lit, ll)); p += ll) {
			long v = number_at(p + ll);
			if (v > 0)
				hit_add(h, &n, cat_by_code(numbered[k].family, v), (size_t)(p - lower));
		}
	}
	static const struct {
		const char *lit, *family;
	} printed[] = {
		{"cuda error: ", "cuda-runtime"}, {"cuda failure '", "cuda-runtime"}, {"hip error: ", "hip"},
	};
	for (size_t k = 0; k < sizeof printed / sizeof printed[0]; k++) {
		size_t ll = strlen(printed[k].lit);
		for (const char *p = lower; (p = memmem(p, len - (size_t)(p - lower), printed[k].lit, ll)); p += ll) {
			const char *q = text + (p - lower) + ll;
			const cat_row *best = NULL;
			size_t best_len = 0;
			char c0 = (char)tolower((unsigned char)*q);
			for (size_t i = 0; i < nprinted; i++) {
				const cat_row *c = printed_rows[i];
				if (tolower((unsigned char)c->msg[0]) != c0 || strcmp(c->family, printed[k].family))
					continue;
				size_t ml = strlen(c->msg);
				if (ml > best_len && strncasecmp(q, c->msg, ml) == 0 && !ident_char(q[ml])) {
					best = c;
					best_len = ml;
				}
			}
			hit_add(h, &n, best, (size_t)(p - lower));
		}
	}
	/* Xid, Xid (PCI:0000:01:00): 31, Xid 79 */
	for (const char *p = lower; (p = memmem(p, len - (size_t)(p - lower), "xid", 3)); p += 3) {
		if (p > lower && ident_char(p[-1]))
			continue;
		const char *q = p + 3;
		while (*q == ' ')
			q++;
		if (*q == '(') {
			const char *e = memchr(q, ')', strnlen(q, 64));
			if (!e)
				continue;
			q = e + 1;
		}
		if (*q == ':')
			q++;
		while (*q == ' ')
			q++;
		long v = number_at(q);
		if (v > 0)
			hit_add(h, &n, cat_by_code("xid", v), (size_t)(p - lower));
	}
	return n;
}

static const char *catalog_fallback_id(const char *family)
{
	if (!strcmp(family, "cuda-runtime") || !strcmp(family, "cuda-driver"))
		return "cuda-error";
	if (!strcmp(family, "hip"))
		return "hip-error";
	if (!strcmp(family, "nccl"))
		return "nccl-status";
	if (!strcmp(family, "cudnn"))
		return "cudnn-status";
	if (!strcmp(family, "xid"))
		return "xid";
	return "cublas-status";
}

static void catalog_attach(explain_match_t *x, const cat_row *r)
{
	for (size_t i = 0; i < x->n_catalog; i++)
		if (!strcmp(x->catalog[i].name, r->name))
			return;
	x->catalog = xrealloc(x->catalog, (x->n_catalog + 1) * sizeof *x->catalog);
	x->catalog[x->n_catalog++] = (explain_catalog_row){
		.family = xstrdup(r->family), .name = xstrdup(r->name), .code = r->code,
		.message = xstrdup(r->msg), .meaning = xstrdup(r->meaning), .source = xstrdup(r->source)};
}

/* A match for catalog row r when no signature of its diagnosis matched. */
static void catalog_synthesize(explain_match_t *x, const char *id, const cat_row *r, size_t off, size_t len)
{
	memset(x, 0, sizeof *x);
	x->id = xstrdup(id);
	x->via = "catalog";
	x->confidence = -1;
	x->offset = off;
	/* the row's name ("Xid 79") may be longer than the text's form of it ("Xid79") */
	x->length = strlen(r->name);
	if (off > len)
		x->offset = off = len;
	if (x->length > len - off)
		x->length = len - off;
	char code[24];
	snprintf(code, sizeof code, "%ld", r->code);
	if (!strcmp(r->family, "xid")) {
		cap_set(x, "xid", code);
	} else {
		cap_set(x, "status", r->name);
		cap_set(x, "code", code);
	}
	const sig *s = sig_by_id(id);
	if (s) {
		/* below any signature that matched the text itself */
		x->priority = s->priority - 20;
		render_sig(x, s);
		return;
	}
	x->priority = 40;
	/* the row's meaning goes through the catalog (tools/tsv-pot.py extracts it) */
	x->title = xasprintf(_("%s (%s code %ld): %s"), r->name, r->family, r->code, _(r->meaning));
	if (*r->msg)
		add_cause(x, xasprintf(_("the library reports it as '%s'"), r->msg), false);
	add_cause(x, xstrdup(_(r->meaning)), false);
	if (!strcmp(r->family, "hip")) {
		add_fix(x, xstrdup(_("rerun with AMD_SERIALIZE_KERNEL=3 so the failing call is the one reported")), false);
		add_fix(x, xstrdup(_("check the GPU's gfx target with rocminfo against the ROCm build")), false);
	} else if (!strcmp(r->family, "nccl")) {
		add_fix(x, xstrdup(_("rerun with NCCL_DEBUG=INFO: the lines before the error name the failing call")), false);
	} else {
		add_fix(x, xstrdup(_("rerun with CUDA_LAUNCH_BLOCKING=1 so the failing call is the one reported")), false);
		add_fix(x, xstrdup(_("gpuwise doctor checks the driver, the CUDA runtime and the PyTorch build")), false);
	}
}

/*
 * Give every catalog row the text names to a match: the one of its
 * diagnosis (made from that diagnosis's first signature when none
 * matched), or a match of its own.  When codes of several layers appear
 * (NCCL around a CUDA error, a cuBLAS status around one), the innermost
 * one's diagnosis ranks first: the outer layers only report it.
 */
static void apply_catalog(explain_match_t **mp, size_t *nmp, const char *text, const char *lower, size_t len)
{
	cat_hit h[CAT_MAX_HITS];
	size_t nh = catalog_scan(text, lower, len, h);
	if (!nh)
		return;
	size_t inner = 0;
	bool wrapped = false;
	for (size_t i = 1; i < nh; i++)
		if (h[i].row->depth > h[inner].row->depth ||
		    (h[i].row->depth == h[inner].row->depth && h[i].off < h[inner].off))
			inner = i;
	for (size_t i = 0; i < nh; i++)
		wrapped |= h[i].row->depth < h[inner].row->depth;
	int top = 0;
	for (size_t k = 0; k < *nmp; k++)
		if ((*mp)[k].priority > top)
			top = (*mp)[k].priority;
	for (size_t i = 0; i < nh; i++) {
		const cat_row *r = h[i].row;
		const char *id = *r->diag ? r->diag : catalog_fallback_id(r->family);
		size_t k;
		for (k = 0; k < *nmp; k++)
			if (!strcmp((*mp)[k].id, id))
				break;
		if (k == *nmp) {
			*mp = xrealloc(*mp, (*nmp + 1) * sizeof **mp);
			catalog_synthesize(&(*mp)[k], id, r, h[i].off, len);
			(*nmp)++;
		}
		explain_match_t *x = &(*mp)[k];
		catalog_attach(x, r);
		if (i == inner && wrapped && x->priority <= top) {
			x->priority = top + 1;
			char *what = *r->msg ? xasprintf(" '%s'", r->msg) : xstrdup("");
			add_cause(x, xasprintf(_("the innermost error is %s (%ld%s): the layers around it (NCCL, cuBLAS, "
					       "cuDNN) only pass it on"), r->name, r->code, what), true);
			free(what);
		}
	}
	/* the innermost row first in each list */
	for (size_t k = 0; k < *nmp; k++) {
		explain_match_t *x = &(*mp)[k];
		for (size_t i = 1; i < x->n_catalog; i++)
			if (!strcmp(x->catalog[i].name, h[inner].row->name)) {
				explain_catalog_row t = x->catalog[0];
				x->catalog[0] = x->catalog[i];
				x->catalog[i] = t;
			}
	}
}

/* ---- retrieval (retrieve.c) -------------------------------------------- */


/* Arch codes a message names, for the templates ({sm}, {gfx}) as a signature would capture them. */
static void retrieval_caps(explain_match_t *x, const char *text, size_t len)
{
	static const struct {
		const char *lit, *name;
	} arch[] = {{"sm_", "sm"}, {"gfx", "gfx"}};
	for (size_t k = 0; k < sizeof arch / sizeof arch[0]; k++) {
		if (explain_cap(x, arch[k].name))
			continue; /* a signature's capture stands */
		for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), arch[k].lit, 3)); p += 3) {
			if (p > text && ident_char(p[-1]))
				continue;
			size_t d = strspn(p + 3, "0123456789abcdef");
			size_t digits = strspn(p + 3, "0123456789");
			if (digits < 2 || d > 5)
				continue;
			char v[12];
			/* {gfx} keeps its prefix, as the signature capture (?<gfx>gfx[0-9a-f]+) does; {sm} is the digits */
			snprintf(v, sizeof v, "%s%.*s", k ? "gfx" : "", (int)d, p + 3);
			cap_set(x, arch[k].name, v);
			break;
		}
	}
}

static void set_example(explain_match_t *x, const explain_hit *h)
{
	free(x->example_source);
	free(x->example_message);
	free(x->example_resolution);
	x->example_source = xstrdup(h->source);
	x->example_message = xstrdup(h->message);
	x->example_resolution = xstrdup(h->resolution);
	x->confidence = h->confidence;
}

/*
 * After the signatures: the corpus's nearest labelled message.  When no
 * signature matched, a confident hit names the diagnosis (its causes and
 * fixes are its first signature's, with the arch codes of the text); each
 * match found otherwise gets its nearest example of the same id.
 */
static void apply_retrieval(explain_match_t **mp, size_t *nmp, const char *text, size_t len)
{
	explain_hit h[4];
	if (*nmp == 0) {
		size_t nh = explain_retrieve(text, len, NULL, h, 1);
		const sig *s = nh && h[0].accepted ? sig_by_id(h[0].diagnosis) : NULL;
		if (!s)
			return;
		*mp = xrealloc(*mp, sizeof **mp);
		explain_match_t *x = &(*mp)[0];
		memset(x, 0, sizeof *x);
		x->id = xstrdup(s->id);
		x->via = "retrieval";
		x->priority = s->priority;
		retrieval_caps(x, text, len);
		render_sig(x, s);
		set_example(x, &h[0]);
		*nmp = 1;
		return;
	}
	for (size_t k = 0; k < *nmp; k++) {
		explain_match_t *x = &(*mp)[k];
		x->confidence = -1;
		if (explain_retrieve(text, len, x->id, h, 1) && h[0].confidence >= EXPLAIN_RETRIEVE_MIN_CONFIDENCE / 2) {
			set_example(x, &h[0]);
			x->confidence = -1; /* the signature found it: the example only illustrates */
		}
	}
	/*
	 * Only a status code's catalog row answered (a generic "CUDA error:
	 * operation not supported"): a confident corpus hit of another id that
	 * outvotes the catalog's id is the more specific diagnosis, first.
	 */
	int top_priority = (*mp)[0].priority;
	for (size_t k = 0; k < *nmp; k++) {
		if (strcmp((*mp)[k].via, "catalog"))
			return;
		if ((*mp)[k].priority > top_priority)
			top_priority = (*mp)[k].priority;
	}
	size_t nh = explain_retrieve(text, len, NULL, h, 4);
	if (!nh || !h[0].accepted)
		return;
	for (size_t k = 0; k < *nmp; k++)
		if (!strcmp((*mp)[k].id, h[0].diagnosis))
			return;
	for (size_t i = 1; i < nh; i++)
		if (!strcmp(h[i].diagnosis, (*mp)[0].id) && h[i].rank > h[0].rank)
			return;
	const sig *s = sig_by_id(h[0].diagnosis);
	if (!s)
		return;
	*mp = xrealloc(*mp, (*nmp + 1) * sizeof **mp);
	memmove(*mp + 1, *mp, *nmp * sizeof **mp);
	explain_match_t *x = &(*mp)[0];
	memset(x, 0, sizeof *x);
	x->id = xstrdup(s->id);
	x->via = "retrieval";
	x->priority = top_priority + 1;
	retrieval_caps(x, text, len);
	render_sig(x, s);
	set_example(x, &h[0]);
	(*nmp)++;
}

/* ---- fixes chosen by the message's facts (data/explain-fixes.tsv) -------- */

/*
 * One diagnosis id can cover several root causes (no-cuda-device on an AMD
 * box is /dev/kfd permissions, on WSL2 the /usr/lib/wsl/lib driver); the
 * message says which.  Each row of explain-fixes: when the match has that
 * id and the text contains one of `when`'s items (case-insensitive literals
 * or @names below, '|'-separated) and none of `unless`'s, the table's fix
 * lines containing one of `drop`'s literals are removed and `fix` (a
 * template: {gfx}, {sm}, {gfx_override}... and a line whose capture is
 * missing is left out) goes before the table's fixes, rows in file order.
 */
typedef struct fix_rule {
	char *id, *when, *unless, *drop, *fix;
} fix_rule;

static fix_rule *fix_rules;
static size_t nfix_rules;
static int fix_rules_state; /* 0 not loaded, 1 loaded, -1 absent or bad */
static pthread_mutex_t fix_rules_lock = PTHREAD_MUTEX_INITIALIZER;

static void load_fix_rules(void)
{
	gw_error err = {0};
	const kb_table *t = kb_get_table("explain-fixes", &err);
	long ci = t ? kb_col(t, "id") : -1, cw = t ? kb_col(t, "when") : -1, cu = t ? kb_col(t, "unless") : -1,
	     cd = t ? kb_col(t, "drop") : -1, cf = t ? kb_col(t, "fix") : -1;
	if (!t || ci < 0 || cw < 0 || cf < 0) {
		fix_rules_state = -1;
		return;
	}
	fix_rules = xcalloc(t->nrows ? t->nrows : 1, sizeof *fix_rules);
	for (size_t r = 0; r < t->nrows; r++) {
		fix_rule *f = &fix_rules[nfix_rules++];
		f->id = xstrdup(kb_cell(t, r, ci));
		f->when = xstrdup(kb_cell(t, r, cw));
		f->unless = xstrdup(kb_cell(t, r, cu));
		f->drop = xstrdup(kb_cell(t, r, cd));
		f->fix = xstrdup(kb_cell(t, r, cf));
	}
	fix_rules_state = 1;
}

static void explain_fix_rules_release(void)
{
	pthread_mutex_lock(&fix_rules_lock);
	for (size_t i = 0; i < nfix_rules; i++) {
		free(fix_rules[i].id);
		free(fix_rules[i].when);
		free(fix_rules[i].unless);
		free(fix_rules[i].drop);
		free(fix_rules[i].fix);
	}
	free(fix_rules);
	fix_rules = NULL;
	nfix_rules = 0;
	fix_rules_state = 0;
	pthread_mutex_unlock(&fix_rules_lock);
}

/* The @names of a rule: what a message says about the vendor, engine or platform. */
static const struct {
	const char *name;
	const char *words; /* '|'-separated lowercase literals */
} fact_sets[] = {
	{"amd", "rocm|hip error|hiperror|hipblas|hsa_|hsa status|/dev/kfd|gfx|amdgpu|rocblas|miopen|radeon|zluda|"
		"libamdhip|rccl|tensile|amd gpu|amd_linux|amd_windows"},
	{"intel", "xpu|sycl|oneapi|level zero|level_zero|ur_result|intel arc|intel(r) arc|ipex|"
		  "intel_extension_for_pytorch|ze_result|/dev/dri/render"},
	{"apple", "mps|metal|apple m|/opt/homebrew|darwin|macos"},
	{"ollama", "ollama"},
	{"llamacpp", "llama.cpp|llama_|ggml|gguf|llama-cpp|llama_cpp"},
	{"vllm", "vllm"},
	{"sglang", "sglang|sgl_kernel|sgl-kernel|mem-fraction-static"},
	{"comfyui", "comfyui|comfy|ksampler|vaedecode|checkpointloader|cliptextencode|run_nvidia_gpu"},
	{"docker", "docker|container|nvidia-container|oci runtime|podman|cdi"},
	{"k8s", "kubernetes|kubectl|k8s|nvidia.com/gpu|device-plugin|device plugin|pod "},
	{"jax", "jax|xla"},
	{"tensorflow", "tensorflow|tf."},
	{"deepspeed", "deepspeed|zero stage|zero-3|zero3"},
	{"blackwell", "sm_120|sm120|sm_121|rtx 50|rtx50|5090|5080|5070|5060|blackwell|b200|gb200|dgx spark"},
};

static bool word_in(const char *lower, size_t len, const char *w, size_t wl)
{
	return wl && memmem(lower, len, w, wl) != NULL;
}

/* Does the lowercased text hold one of the '|'-separated items of list? */
static bool rule_hits(const char *list, const char *lower, size_t len, explain_platform plat)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, "|");
		if (*p == '@') {
			if ((n == 8 && !strncmp(p, "@windows", 8) && plat == EXPLAIN_PLATFORM_WINDOWS) ||
			    (n == 4 && !strncmp(p, "@wsl", 4) && plat == EXPLAIN_PLATFORM_WSL) ||
			    (n == 6 && !strncmp(p, "@macos", 6) && plat == EXPLAIN_PLATFORM_MACOS))
				return true;
			for (size_t k = 0; k < sizeof fact_sets / sizeof fact_sets[0]; k++)
				if (strlen(fact_sets[k].name) == n - 1 && !strncmp(p + 1, fact_sets[k].name, n - 1) &&
				    rule_hits(fact_sets[k].words, lower, len, plat))
					return true;
		} else {
			char w[96];
			size_t wl = n < sizeof w - 1 ? n : sizeof w - 1;
			for (size_t i = 0; i < wl; i++)
				w[i] = (char)tolower((unsigned char)p[i]);
			if (word_in(lower, len, w, wl))
				return true;
		}
		p += n;
		if (*p == '|')
			p++;
	}
	return false;
}

/* HSA_OVERRIDE_GFX_VERSION for a gfx target: the generation's supported target, none for APUs without one. */
static const char *gfx_override(const char *gfx)
{
	static const struct {
		const char *prefix, *value;
	} o[] = {{"gfx103", "10.3.0"}, {"gfx110", "11.0.0"}, {"gfx101", "10.1.0"}, {"gfx90", "9.0.0"}, {"gfx120", "12.0.1"}};
	if (!gfx)
		return NULL;
	for (size_t i = 0; i < sizeof o / sizeof o[0]; i++)
		if (!strncmp(gfx, o[i].prefix, strlen(o[i].prefix)))
			return o[i].value;
	return NULL;
}

static void drop_fix(explain_match_t *x, size_t i);

static void apply_fix_rules(explain_match_t *m, size_t n, const char *text, const char *lower, size_t len)
{
	pthread_mutex_lock(&fix_rules_lock);
	if (!fix_rules_state)
		load_fix_rules();
	pthread_mutex_unlock(&fix_rules_lock);
	if (fix_rules_state < 0 || !n)
		return;
	explain_platform plat = explain_message_platform(text, len);
	for (size_t k = 0; k < n; k++) {
		explain_match_t *x = &m[k];
		bool caps_done = false;
		size_t front = 0;
		for (size_t r = 0; r < nfix_rules; r++) {
			const fix_rule *f = &fix_rules[r];
			if (strcmp(f->id, x->id) || !rule_hits(f->when, lower, len, plat) ||
			    (*f->unless && rule_hits(f->unless, lower, len, plat)))
				continue;
			if (*f->drop)
				for (size_t i = front; i < x->n_fixes; i++) {
					char *l = xstrdup(x->fixes[i]);
					for (char *c = l; *c; c++)
						*c = (char)tolower((unsigned char)*c);
					bool hit = rule_hits(f->drop, l, strlen(l), EXPLAIN_PLATFORM_UNKNOWN);
					free(l);
					if (hit)
						drop_fix(x, i--);
				}
			if (!*f->fix)
				continue;
			if (!caps_done && strchr(f->fix, '{')) {
				/* the arch codes the message names, for rows that use them */
				caps_done = true;
				retrieval_caps(x, text, len);
				const char *ov = gfx_override(explain_cap(x, "gfx"));
				if (ov)
					cap_set(x, "gfx_override", ov);
			}
			bool ok;
			char *line = render(_(f->fix), x, &ok);
			if (!ok) {
				free(line);
				continue;
			}
			x->fixes = xrealloc(x->fixes, (x->n_fixes + 1) * sizeof *x->fixes);
			memmove(x->fixes + front + 1, x->fixes + front, (x->n_fixes - front) * sizeof *x->fixes);
			x->fixes[front++] = line;
			x->n_fixes++;
		}
	}
}

/* ---- fixes that fit the machine ------------------------------------------ */

static void wsl_rewrite(explain_match_t *x);

static void drop_fix(explain_match_t *x, size_t i)
{
	free(x->fixes[i]);
	memmove(x->fixes + i, x->fixes + i + 1, (x->n_fixes - i - 1) * sizeof *x->fixes);
	x->n_fixes--;
}

static bool has_word(const char *s, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(s, words[i]))
			return true;
	return false;
}

/*
 * The platform a message comes from, by what it names: /usr/lib/wsl or
 * dxg (WSL2), a drive-letter path, WinError or a .dll (Windows), /Users/
 * or a .dylib (macOS).  EXPLAIN_PLATFORM_UNKNOWN when it names none.
 */
explain_platform explain_message_platform(const char *text, size_t len)
{
	static const char *const wsl[] = {"/usr/lib/wsl", "microsoft-standard-wsl", "wsl2", "/dev/dxg", "dxgkio", "dxgk:"};
	static const char *const win[] = {"winerror", ".dll", "\\appdata\\", "program files", "amd_windows.go",
					  "powershell", "windows_", "\\site-packages\\", "\\users\\"};
	static const char *const mac[] = {"/users/", ".dylib", "darwin", "macos", "/opt/homebrew", "mps backend",
					  "mps device"};
	char *lower = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++)
		lower[i] = (char)tolower((unsigned char)text[i]);
	lower[len] = '\0';
	explain_platform p = EXPLAIN_PLATFORM_UNKNOWN;
	if (has_word(lower, wsl, sizeof wsl / sizeof wsl[0]))
		p = EXPLAIN_PLATFORM_WSL;
	else if (has_word(lower, win, sizeof win / sizeof win[0]))
		p = EXPLAIN_PLATFORM_WINDOWS;
	else if (has_word(lower, mac, sizeof mac / sizeof mac[0]))
		p = EXPLAIN_PLATFORM_MACOS;
	for (size_t i = 0; p == EXPLAIN_PLATFORM_UNKNOWN && i + 3 < len; i++)
		/* C:\ or D:/ at a word start */
		if (isalpha((unsigned char)text[i]) && text[i + 1] == ':' && (text[i + 2] == '\\' || text[i + 2] == '/') &&
		    (i == 0 || !isalnum((unsigned char)text[i - 1])) && isalnum((unsigned char)text[i + 3]))
			p = EXPLAIN_PLATFORM_WINDOWS;
	free(lower);
	return p;
}

/* Steps that only work on Linux: never offered for a Windows or macOS message. */
static bool linux_only(const char *fix)
{
	static const char *const words[] = {"journalctl", "free -h", "dmesg", "lsmod", "modprobe", "systemctl", "sudo ",
					    "apt ", "apt-get", "ldconfig", "LD_LIBRARY_PATH", "/proc/", "/dev/", "rocminfo",
					    "dkms", "/etc/", "/usr/", "nvidia-ctk", "WSL2:"};
	return has_word(fix, words, sizeof words / sizeof words[0]);
}

static const char *gfx_of(const explain_match_t *x, const char *text)
{
	const char *g = explain_cap(x, "gfx");
	if (g)
		return g;
	const char *p = strstr(text, "gfx");
	return p && isdigit((unsigned char)p[3]) ? p : NULL;
}

/* The fixes of one match, made to fit the platform and the GPU the message names. */
static void fit_fixes(explain_match_t *x, const char *text, explain_platform plat)
{
	if (plat == EXPLAIN_PLATFORM_WSL) {
		wsl_rewrite(x);
	} else if (plat == EXPLAIN_PLATFORM_WINDOWS || plat == EXPLAIN_PLATFORM_MACOS) {
		size_t before = x->n_fixes;
		for (size_t i = 0; i < x->n_fixes; i++)
			if (linux_only(x->fixes[i]))
				drop_fix(x, i--);
		if (plat == EXPLAIN_PLATFORM_WINDOWS && x->n_fixes < before) {
			if (!strcmp(x->id, "hip-no-binary"))
				add_fix(x, xstrdup(_("Windows: see the GPU's gfx target with hipInfo (HIP SDK) or in Ollama's "
						   "server.log (%LOCALAPPDATA%\\Ollama)")), false);
			else if (strstr(x->id, "oom") || !strcmp(x->id, "host-ram-short") || !strcmp(x->id, "ollama-runner-died"))
				add_fix(x, xstrdup(_("Windows: Task Manager > Performance shows what holds the memory and the GPU; "
						   "Ollama's log is %LOCALAPPDATA%\\Ollama\\server.log")), false);
			else if (x->n_fixes == 0)
				add_fix(x, xstrdup(_("Windows: update the GPU driver from the vendor's site and reinstall the "
						   "program's Python packages in a fresh environment")), false);
		}
	}
	/* gfx1150/gfx1151 APUs: gfx1100 code does not run there (HSA_STATUS_ERROR_INVALID_ISA) */
	const char *g = gfx_of(x, text);
	if (g && !strncmp(g, "gfx115", 6)) {
		bool dropped = false;
		for (size_t i = 0; i < x->n_fixes; i++)
			if (strstr(x->fixes[i], "HSA_OVERRIDE_GFX_VERSION")) {
				drop_fix(x, i--);
				dropped = true;
			}
		if (dropped || !strcmp(x->id, "hip-no-binary"))
			add_fix(x, xasprintf(_("%.7s (a Ryzen AI APU): do not set HSA_OVERRIDE_GFX_VERSION=11.0.0, gfx1100 code "
					     "fails there with HSA_STATUS_ERROR_INVALID_ISA; use a build with native %.7s kernels "
					     "(ROCm 7 or AMD's TheRock nightly PyTorch wheels), or llama.cpp/Ollama's Vulkan backend"),
					     g, g), true);
	}
}

/* No fix line twice, in one match or across the answer (the first keeps it). */
static void tidy_fixes(explain_match_t *m, size_t n)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < m[k].n_fixes; i++) {
			bool dup = false;
			for (size_t j = 0; j <= k && !dup; j++)
				for (size_t f = 0; f < (j == k ? i : m[j].n_fixes) && !dup; f++)
					dup = strcmp(m[j].fixes[f], m[k].fixes[i]) == 0;
			if (dup)
				drop_fix(&m[k], i--);
		}
}

/*
 * What the message says about the machine: the platform for every match;
 * libcuda missing in WSL ranks above "no CUDA device" (it is why there is
 * none), and a library-missing that is not cuDNN gets no cuDNN step.
 */
static void fit_to_message(explain_match_t *m, size_t n, const char *text, size_t len)
{
	explain_platform plat = explain_message_platform(text, len);
	int top = 0;
	for (size_t k = 0; k < n; k++)
		if (m[k].priority > top)
			top = m[k].priority;
	for (size_t k = 0; k < n; k++) {
		explain_match_t *x = &m[k];
		if (!strcmp(x->id, "library-missing")) {
			const char *lib = explain_cap(x, "lib");
			if (lib && !strstr(lib, "cudnn"))
				for (size_t i = 0; i < x->n_fixes; i++)
					if (strstr(x->fixes[i], "cuDNN") || strstr(x->fixes[i], "cudnn"))
						drop_fix(x, i--);
			if (lib && (!strncmp(lib, "libcuda.", 8) || !strncmp(lib, "libnvidia-ml", 12)))
				x->priority = top + 1;
		}
		fit_fixes(x, text, plat);
	}
}

static int cmp_match(const void *a, const void *b)
{
	const explain_match_t *x = a, *y = b;
	if (x->priority != y->priority)
		return y->priority - x->priority;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * Run one signature over text (len bytes; lower is its ASCII-lowercased
 * copy): for each of its literals, the regex runs only in the window of
 * SIG_WINDOW_BYTES around an occurrence, and a failed window moves the
 * search SIG_WINDOW_BYTES on, so the work is linear in len.  The earliest
 * match over the literals wins; pm[0..ng) get offsets into text.
 */
static bool sig_find(const sig *s, const char *text, const char *lower, size_t len, strbuf *win,
		     regmatch_t *pm, size_t ng)
{
	bool found = false;
	regmatch_t best[32];
	for (size_t k = 0; k < s->n_lits; k++) {
		const char *lit = s->lits[k];
		size_t ll = strlen(lit);
		size_t from = 0;
		/* a match at or after the best one found so far cannot win */
		size_t limit = found ? (size_t)best[0].rm_so + ll + SIG_WINDOW_BYTES : len;
		if (limit > len)
			limit = len;
		while (from < limit) {
			const char *hit = memmem(lower + from, len - from, lit, ll);
			if (!hit)
				break;
			size_t at = (size_t)(hit - lower);
			size_t ws = at > SIG_WINDOW_BYTES ? at - SIG_WINDOW_BYTES : 0;
			size_t we = at + ll + SIG_WINDOW_BYTES < len ? at + ll + SIG_WINDOW_BYTES : len;
			win->len = 0;
			sb_add(win, text + ws, we - ws);
			if (regexec(&s->re, win->buf, ng, pm, (ws ? REG_NOTBOL : 0) | (we < len ? REG_NOTEOL : 0)) == 0) {
				if (!found || (size_t)pm[0].rm_so + ws < (size_t)best[0].rm_so) {
					for (size_t g = 0; g < ng; g++) {
						best[g] = pm[g];
						if (best[g].rm_so >= 0) {
							best[g].rm_so += (regoff_t)ws;
							best[g].rm_eo += (regoff_t)ws;
						}
					}
					found = true;
				}
				break;
			}
			from = at + SIG_WINDOW_BYTES;
		}
	}
	if (found)
		memcpy(pm, best, ng * sizeof *pm);
	return found;
}

int explain_match(const char *text, explain_match_t **out, size_t *n, gw_error *err)
{
	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&sigs_lock);
	if (!sigs_loaded) {
		load_sigs();
		sigs_loaded = true;
	}
	pthread_mutex_unlock(&sigs_lock);
	if (sigs_rc) {
		if (err)
			*err = sigs_err;
		return sigs_rc;
	}
	explain_match_t *m = NULL;
	size_t nm = 0;
	regmatch_t pm[32];
	size_t len = strlen(text);
	char *lower = xmalloc(len + 1);
	for (size_t i = 0; i <= len; i++)
		lower[i] = (char)tolower((unsigned char)text[i]);
	strbuf win = STRBUF_INIT;
	for (size_t i = 0; i < nsigs; i++) {
		sig *s = &sigs[i];
		size_t ng = s->nsub + 1 > 32 ? 32 : s->nsub + 1;
		if (!sig_find(s, text, lower, len, &win, pm, ng))
			continue;
		size_t k;
		for (k = 0; k < nm; k++)
			if (strcmp(m[k].id, s->id) == 0)
				break;
		if (k < nm) {
			if (m[k].priority >= s->priority)
				continue;
			free_match(&m[k]);
		} else {
			m = xrealloc(m, (nm + 1) * sizeof *m);
			k = nm++;
		}
		explain_match_t *x = &m[k];
		memset(x, 0, sizeof *x);
		x->id = xstrdup(s->id);
		x->priority = s->priority;
		x->via = "signature";
		x->confidence = -1;
		x->offset = (size_t)pm[0].rm_so;
		x->length = (size_t)(pm[0].rm_eo - pm[0].rm_so);
		for (size_t g = 1; g < ng; g++) {
			if (!s->names[g] || pm[g].rm_so < 0 || explain_cap(x, s->names[g]))
				continue;
			char *v = xstrndup(text + pm[g].rm_so, (size_t)(pm[g].rm_eo - pm[g].rm_so));
			char *t = str_trim(v);
			cap_set(x, s->names[g], t);
			free(v);
		}
		render_sig(x, s);
	}
	sb_release(&win);
	apply_catalog(&m, &nm, text, lower, len);
	apply_retrieval(&m, &nm, text, len);
	for (size_t k = 0; k < nm; k++)
		enrich(&m[k], text);
	apply_fix_rules(m, nm, text, lower, len);
	free(lower);
	fit_to_message(m, nm, text, len);
	if (nm > 1)
		qsort(m, nm, sizeof *m, cmp_match);
	tidy_fixes(m, nm);
	*out = m;
	*n = nm;
	return 0;
}

/* ---- PyTorch out-of-memory messages ------------------------------------ */

static const char *const oom_names[] = {"unknown", "too-big", "not-a-shortage", "fragmentation", "shortage"};

const char *oom_verdict_name(oom_verdict v)
{
	return (unsigned)v < sizeof oom_names / sizeof oom_names[0] ? oom_names[v] : "unknown";
}

/* Parse "12.34 GiB" at p; -1 when it is not a size. */
static int64_t size_at(const char *p)
{
	char buf[48];
	size_t i = 0;
	while (*p == ' ')
		p++;
	while (i < sizeof buf - 1 && (isdigit((unsigned char)p[i]) || p[i] == '.'))
		i++;
	if (!i)
		return -1;
	size_t j = i;
	while (p[j] == ' ')
		j++;
	size_t u = 0;
	while (u < 4 && isalpha((unsigned char)p[j + u]))
		u++;
	if (u == 4 && strncasecmp(p + j, "byte", 4) == 0)
		u = 1; /* "0 bytes is free": the unit is B */
	if (i + 1 + u >= sizeof buf)
		return -1;
	memcpy(buf, p, i);
	buf[i] = ' ';
	memcpy(buf + i + 1, p + j, u);
	buf[i + 1 + u] = '\0';
	uint64_t b;
	if (parse_size(buf, &b) != 0 || b > INT64_MAX)
		return -1;
	return (int64_t)b;
}

/* Case-insensitive strstr. */
static const char *find(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return hay;
	return NULL;
}

/* The size just before `marker` ("9.35 GiB is reserved ..."), searching from `from`. */
static int64_t size_before(const char *from, const char *marker)
{
	const char *m = find(from, marker);
	if (!m)
		return -1;
	const char *p = m;
	/* back over spaces, the unit, spaces and the number */
	while (p > from && p[-1] == ' ')
		p--;
	while (p > from && isalpha((unsigned char)p[-1]))
		p--;
	while (p > from && p[-1] == ' ')
		p--;
	while (p > from && (isdigit((unsigned char)p[-1]) || p[-1] == '.'))
		p--;
	return size_at(p);
}

int explain_parse_oom(const char *text, oom_info *o)
{
	memset(o, 0, sizeof *o);
	o->gpu = -1;
	o->requested = o->total = o->free = o->process = o->allocated = o->reserved = o->reserved_unalloc = -1;
	o->shortfall = -1;
	const char *s = find(text, "out of memory");
	if (!s)
		return GW_ENOTFOUND;
	const char *p = find(s, "Tried to allocate");
	if (p)
		o->requested = size_at(p + strlen("Tried to allocate"));
	const char *q;
	if ((q = find(s, "(GPU ")) && (!p || q - p < 64) && find(q, "total capacity;")) {
		/* old: (GPU 0; 10.92 GiB total capacity; 8.57 MiB already allocated;
		 * 9.28 GiB free; 4.68 MiB cached) or "... reserved in total by PyTorch)" */
		o->old_format = true;
		o->gpu = atoi(q + 5);
		o->total = size_before(q, "total capacity");
		o->allocated = size_before(q, "already allocated");
		o->free = size_before(q, " free");
		o->reserved = size_before(q, "reserved in total");
		if (o->reserved < 0)
			o->reserved = size_before(q, " cached");
		if (o->reserved >= 0 && o->allocated >= 0 && o->reserved >= o->allocated)
			o->reserved_unalloc = o->reserved - o->allocated;
	} else {
		/* new: GPU 0 has a total capacity of X of which Y is free. [Process N has Z
		 * memory in use.] Including non-PyTorch memory, this process has W memory in
		 * use. Of the allocated memory A is allocated by PyTorch, and R is reserved
		 * by PyTorch but unallocated. */
		if ((q = find(s, "GPU ")) && isdigit((unsigned char)q[4]))
			o->gpu = atoi(q + 4);
		if ((q = find(s, "total capacity of")))
			o->total = size_at(q + strlen("total capacity of"));
		if ((q = find(s, "of which")))
			o->free = size_at(q + strlen("of which"));
		if ((q = find(s, "this process has")))
			o->process = size_at(q + strlen("this process has"));
		o->allocated = size_before(s, "is allocated by PyTorch");
		o->reserved_unalloc = size_before(s, "is reserved by PyTorch but unallocated");
		if (o->allocated >= 0 && o->reserved_unalloc >= 0)
			o->reserved = o->allocated + o->reserved_unalloc;
		for (q = s; (q = find(q, "Process ")) && o->n_others < OOM_MAX_PROCS; q += 8) {
			if (!isdigit((unsigned char)q[8]))
				continue;
			char *end;
			unsigned long pid = strtoul(q + 8, &end, 10);
			if (strncasecmp(end, " has ", 5) != 0)
				continue;
			int64_t b = size_at(end + 5);
			if (b < 0)
				continue;
			o->others[o->n_others].pid = (uint32_t)pid;
			o->others[o->n_others].bytes = b;
			o->n_others++;
		}
	}
	o->self_index = -1;
	if (o->process < 0 && o->reserved >= 0) {
		int64_t best = -1;
		for (size_t i = 0; i < o->n_others; i++) {
			int64_t extra = o->others[i].bytes - o->reserved;
			if (extra >= 0 && extra <= OOM_CONTEXT_MAX_BYTES && (best < 0 || extra < best)) {
				best = extra;
				o->self_index = (int)i;
			}
		}
	}
	o->others_bytes = 0;
	for (size_t i = 0; i < o->n_others; i++)
		if ((int)i != o->self_index)
			o->others_bytes += o->others[i].bytes;
	/* The rule: bigger than the GPU -> impossible; free covered it -> not a
	 * shortage; free + reserved-but-unallocated covers it -> fragmentation
	 * (expandable segments let the allocator reuse that memory); else short. */
	if (o->requested < 0)
		o->verdict = OOM_UNKNOWN;
	else if (o->total >= 0 && o->requested > o->total)
		o->verdict = OOM_TOO_BIG;
	else if (o->free >= 0 && o->requested <= o->free)
		o->verdict = OOM_NOT_SHORTAGE;
	else if (o->free >= 0 && o->reserved_unalloc > 0 && o->requested <= o->free + o->reserved_unalloc)
		o->verdict = OOM_FRAGMENTATION;
	else if (o->free >= 0)
		o->verdict = OOM_SHORTAGE;
	if (o->verdict == OOM_SHORTAGE)
		o->shortfall = o->requested - o->free - (o->reserved_unalloc > 0 ? o->reserved_unalloc : 0);
	o->expandable_helps = o->verdict == OOM_FRAGMENTATION;
	return 0;
}

/* ---- machine context ---------------------------------------------------- */

/* The user owning /proc/PID (through the root prefix); "" when unknown. */
static void proc_user(uint32_t pid, char *buf, size_t n)
{
	buf[0] = '\0';
	char path[64];
	snprintf(path, sizeof path, "/proc/%u/status", pid);
	char *st;
	if (gw_read_file(path, true, 1 << 16, &st, NULL, NULL))
		return;
	const char *u = strstr(st, "\nUid:");
	if (u) {
		unsigned long uid = strtoul(u + 5, NULL, 10);
		char *pwd = NULL;
		/* the passwd file under the root prefix (fixtures), then the system's */
		if (*gw_root() && gw_read_file("/etc/passwd", true, 4 << 20, &pwd, NULL, NULL) == 0) {
			char *save = NULL;
			for (char *line = strtok_r(pwd, "\n", &save); line && !*buf; line = strtok_r(NULL, "\n", &save)) {
				char *f[4];
				if (str_split(line, ':', f, 4) >= 3 && strtoul(f[2], NULL, 10) == uid)
					snprintf(buf, n, "%s", f[0]);
			}
			free(pwd);
		} else {
			struct passwd pw, *res = NULL;
			char pwbuf[1024];
			if (getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
				snprintf(buf, n, "%s", res->pw_name);
		}
		if (!*buf)
			snprintf(buf, n, "uid %lu", uid);
	}
	free(st);
}

bool explain_platform_is_wsl(void)
{
	return hw_platform() != HW_PLATFORM_LINUX;
}

/*
 * WSL2: the driver is the Windows one (seen through /usr/lib/wsl/lib) and
 * the kernel is Microsoft's, so the steps of the diagnoses that touch the
 * driver are Windows steps, and a Linux driver inside WSL is the mistake.
 */
static const struct {
	const char *id, *fix;
} wsl_fixes[] = {
	{"driver-too-old", "WSL2: the driver is the Windows one: install the newest NVIDIA driver for Windows, then run "
			   "wsl --shutdown in PowerShell (never install a Linux NVIDIA driver inside WSL)"},
	{"no-driver", "WSL2: check the Windows driver (nvidia-smi.exe in PowerShell), /dev/dxg and /usr/lib/wsl/lib/libcuda.so.1; "
		      "update it and WSL (wsl --update), then wsl --shutdown; remove any Linux driver installed inside WSL: "
		      "sudo apt purge 'nvidia-driver-*' 'libnvidia-compute-*' 'nvidia-utils-*'"},
	{"no-cuda-device", "WSL2: the GPU and libcuda come from the Windows driver: check ls -l /usr/lib/wsl/lib/libcuda.so* and "
			   "/dev/dxg, and that nothing shadows them (export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH); do not "
			   "install a Linux NVIDIA driver inside WSL (sudo apt purge 'nvidia-driver-*' 'libnvidia-compute-*' if one is); "
			   "update the Windows driver and WSL (wsl --update), then wsl --shutdown"},
	{"device-busy", "WSL2: the GPU is shared with Windows: close Windows apps holding it (Task Manager > Performance > GPU), "
			"or a Windows-side compute mode; then wsl --shutdown"},
	{"library-missing", "WSL2: libcuda and libnvidia-ml come from /usr/lib/wsl/lib: export "
			    "LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH; do not install the cuda-drivers or cuda "
			    "metapackages inside WSL (use cuda-toolkit-X-Y from the wsl-ubuntu repository)"},
	{"container-toolkit", "WSL2 with Docker Desktop: the GPU comes from Windows; a 'file exists' mount error means the "
			      "image carries its own libnvidia-ml/libcuda copies: remove them from the image, and update "
			      "Docker Desktop and the Windows driver"},
	{"cuda-unknown-error", "WSL2: update the NVIDIA driver for Windows and WSL (wsl --update), then wsl --shutdown; no "
			       "module reload is possible inside WSL"},
	{"cuda-init-oom", "WSL2: this is the Windows driver or the VM's memory limit: update the driver for Windows, "
			  "wsl --update, raise memory= in %UserProfile%\\.wslconfig, then wsl --shutdown"},
	{"driver-library-mismatch", "WSL2: a Linux NVIDIA user-space library shadows the Windows driver's: sudo apt purge "
				    "'libnvidia-*' 'nvidia-utils-*', then wsl --shutdown"},
	{"nvml-version-warning", "WSL2: use the nvidia-smi from /usr/lib/wsl/lib (remove Linux nvidia-utils packages "
				 "installed inside WSL)"},
};

/* Fixes that cannot work inside WSL2: there is no Linux kernel driver to load, reset or rebuild. */
static bool bare_metal_only(const char *fix)
{
	static const char *const words[] = {"modprobe", "rmmod", "nvidia-smi -r", "dkms", "nvidia-driver", "mokutil", "lsmod",
					    "dmesg", "journalctl -k", "Secure Boot", "secure boot",
					    "nouveau", "nvidia-persistenced", "update-initramfs", "/proc/driver/nvidia",
					    "NVreg_", "fuser /dev/nvidia", "nvidia-suspend"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(fix, words[i]) && !strstr(fix, "WSL"))
			return true;
	return false;
}

static void contextualize(explain_match_t *m, size_t n, const char *text, const explain_context *ctx);

static void wsl_rewrite(explain_match_t *x)
{
	for (size_t i = 0; i < x->n_fixes; i++)
		if (bare_metal_only(x->fixes[i])) {
			free(x->fixes[i]);
			memmove(x->fixes + i, x->fixes + i + 1, (x->n_fixes - i - 1) * sizeof *x->fixes);
			x->n_fixes--;
			i--;
		}
	const char *lib = explain_cap(x, "lib");
	/* only the driver's libraries come from Windows */
	if (strcmp(x->id, "library-missing") == 0 && lib && strncmp(lib, "libcuda.", 8) && strncmp(lib, "libnvidia-ml", 12))
		return;
	for (size_t i = 0; i < sizeof wsl_fixes / sizeof wsl_fixes[0]; i++)
		if (strcmp(x->id, wsl_fixes[i].id) == 0)
			add_fix(x, xstrdup(wsl_fixes[i].fix), true);
}

/* The desktop/browser findings of doctor that bear on a message, as causes and fixes. */
static void add_desktop_findings(explain_match_t *x)
{
	doctor_report rep = {0};
	doctor_check_desktop(&rep);
	for (size_t i = 0; i < rep.n; i++) {
		const doctor_finding *f = &rep.findings[i];
		if (f->severity < DOC_INFO)
			continue;
		/* a warning doctor sees here is the likeliest cause; facts go after the guide's list */
		bool confirmed = f->severity >= DOC_WARN;
		add_cause(x, xasprintf(_("on this machine (gpuwise doctor, %s): %s%s%s"), f->id, f->title,
				       f->evidence && *f->evidence ? ": " : "", f->evidence ? f->evidence : ""), confirmed);
		if (f->fix && *f->fix && confirmed)
			add_fix(x, xasprintf(_("on this machine: %s"), f->fix), true);
	}
	doctor_report_release(&rep);
}

void explain_contextualize(explain_match_t *m, size_t n, const char *text, const explain_context *ctx)
{
	contextualize(m, n, text, ctx);
	tidy_fixes(m, n);
}

static void contextualize(explain_match_t *m, size_t n, const char *text, const explain_context *ctx)
{
	bool wsl = explain_platform_is_wsl();
	for (size_t i = 0; i < n; i++) {
		explain_match_t *x = &m[i];
		if (wsl)
			wsl_rewrite(x);
		if (strcmp(x->id, "browser-gpu-acceleration") == 0) {
			add_desktop_findings(x);
			continue;
		}
		if (strcmp(x->id, "gpu-crash-dump") == 0) {
			/* the guide's first two checks, with what the GPU says now */
			if (ctx->temp_c >= 0)
				add_cause(x, xasprintf(_("on this machine: the GPU is at %d C now%s"), ctx->temp_c,
						       ctx->temp_c >= 80 ? _(", above ~80 C: cooling is the first suspect")
									 : _(" (watch it under load: the crash comes at the peak)")),
					  ctx->temp_c >= 80);
			if (ctx->power_w >= 0 && ctx->power_limit_w > 0)
				add_cause(x, xasprintf(_("on this machine: the GPU draws %d W of its %d W limit now; the power "
						       "supply needs headroom above the limit for transient spikes"),
						       ctx->power_w, ctx->power_limit_w), false);
			if (ctx->driver_version)
				add_fix(x, xasprintf(_("on this machine: %s runs driver %s; if the crashes began with it, that "
						     "is the release to roll back from"), ctx->gpu_name ? ctx->gpu_name : _("the GPU"),
						     ctx->driver_version), false);
			continue;
		}
		if (strcmp(x->id, "arch-unsupported") == 0 || strcmp(x->id, "torch-cpu-only") == 0 ||
		    strcmp(x->id, "driver-too-old") == 0) {
			int ma = ctx->cc_major, mi = ctx->cc_minor;
			const char *cc = explain_cap(x, "cc");
			if (cc && sscanf(cc, "%d.%d", &ma, &mi) != 2)
				ma = -1;
			if (ma < 0 || !ctx->driver_version)
				continue;
			torch_pick p;
			if (compat_pick_torch(ma, mi, ctx->driver_version, &p, NULL) != 0)
				continue;
			if (p.found)
				add_fix(x, xasprintf(_("on this machine (%s%sdriver %s): %s"), ctx->gpu_name ? ctx->gpu_name : "",
						     ctx->gpu_name ? ", " : "", ctx->driver_version ? ctx->driver_version : "unknown",
						     p.pip_line), true);
			else if (p.driver_too_old)
				add_fix(x, xasprintf(_("on this machine the driver %s is too old for any PyTorch build that "
						     "supports CC %d.%d: upgrade the driver to >= %s first, then %s"),
						     ctx->driver_version, ma, mi, p.need_driver, p.pip_line), true);
			if (ctx->torch_version)
				add_cause(x, xasprintf(_("installed here: torch %s (CUDA %s)%s%s"), ctx->torch_version,
						       ctx->torch_cuda ? ctx->torch_cuda : _("none, CPU-only"),
						       ctx->python ? _(" in ") : "", ctx->python ? ctx->python : ""), false);
		} else if (strcmp(x->id, "cuda-oom") == 0 && text) {
			oom_info o;
			if (explain_parse_oom(text, &o) != 0)
				continue;
			for (size_t k = 0; k < o.n_others; k++) {
				char user[64], b[32];
				if ((int)k == o.self_index)
					continue;
				proc_user(o.others[k].pid, user, sizeof user);
				if (!*user)
					continue;
				add_cause(x, xasprintf(_("process %u (user %s) holds %s on this GPU"), o.others[k].pid, user,
						       fmt_bytes(b, sizeof b, (uint64_t)o.others[k].bytes)), false);
			}
		}
	}
}

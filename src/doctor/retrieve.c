/*
 * retrieve.c: explain's second matcher.  The labelled corpus (the embedded
 * tables data/explain-corpus-*.tsv: real messages, each with its diagnosis
 * id and the URL of its thread) is indexed on first use; a message is
 * reduced to its identifying tokens and scored against every corpus
 * message with BM25 (Robertson and Zaragoza, "The Probabilistic Relevance
 * Framework: BM25 and Beyond", 2009: k1 = 1.2, b = 0.75).  No network, no
 * model: the corpus is the knowledge.
 *
 * Tokens: runs of [A-Za-z0-9_] lowercased; an identifier with '_' also
 * gives its parts; numbers become "#"; a name ending in digits
 * ("gfx1103", "sm_120", "cuda129") also gives its family ("gfx#", "sm_#",
 * "cuda#"); hex addresses and hashes are dropped; English function words
 * are dropped; CJK text gives overlapping bigrams.  A literal "\n" or "\t"
 * (a JSON-escaped log) separates like the real character.
 */
#include "doctor/doctor.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kb/kb.h"

#define BM25_K1 1.2
#define BM25_B 0.75
#define TOK_MAX 64
/* A hit needs this much BM25 evidence besides its confidence: two rare tokens. */
#define MIN_SCORE 5.0
/* Without a shared GPU-world token (anchored()) a hit must be this close. */
#define UNANCHORED_MIN_CONFIDENCE 0.8
/* ... or the text's share it explains (query_coverage()) is at least this. */
#define MIN_COVERAGE 0.4
/* A token no corpus message has counts this share of the largest idf in the text's total. */
#define UNKNOWN_TOKEN_SHARE 0.5
/* Nearest-neighbour voting: a diagnosis's rank sums its best documents' ranks, this many. */
#define VOTES 3

typedef struct posting {
	uint32_t doc;
	uint32_t tf;
} posting;

typedef struct term {
	char *tok;
	posting *post;
	size_t n_post, cap;
	double idf;
	bool anchor; /* names a GPU, its stack or its vendor: see anchored() */
} term;

typedef struct doc {
	char *diagnosis, *family, *lang, *message, *source, *resolution;
	uint32_t len;  /* tokens */
	double self;   /* its own BM25 score: the most a query can reach */
} doc;

static struct {
	term *terms;
	size_t n_terms, cap_terms;
	uint32_t *slots; /* open addressing: term index + 1, 0 empty */
	size_t n_slots;
	doc *docs;
	size_t n_docs;
	double avg_len;
	bool built;
} ix;
static pthread_mutex_t ix_lock = PTHREAD_MUTEX_INITIALIZER;
/* explain_retrieve_exclude(): a thread URL whose rows no lookup sees */
static char *excluded;
static bool excluded_set;

/* ---- tokens ------------------------------------------------------------- */

static const char *const stopwords[] = {
	"a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does", "for",
	"from", "had", "has", "have", "if", "in", "into", "is", "it", "its", "may", "might", "no", "of", "on", "or",
	"please", "should", "so", "such", "than", "that", "the", "then", "there", "these", "this", "to", "was",
	"were", "which", "while", "will", "with", "would", "you", "your",
};

static int cmp_word(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static bool stopword(const char *t)
{
	return bsearch(t, stopwords, sizeof stopwords / sizeof stopwords[0], sizeof stopwords[0], cmp_word) != NULL;
}

/*
 * Words every error message has: they count a quarter, so that sharing
 * only them ("error ... exit status 1", "No such file or directory") is
 * no match.  Sorted.
 */
static const char *const weak_words[] = {
	"call", "cannot", "code", "command", "directory", "error", "errors", "exception", "exit", "failed", "fatal",
	"file", "found", "info", "last", "line", "local", "module", "most", "not", "py", "python", "raise",
	"recent", "return", "runtimeerror", "self", "site", "status", "such", "traceback", "unable", "usr",
	"valueerror", "warn", "warning",
};
#define WEAK_FACTOR 0.25

static bool weak(const char *t)
{
	if (t[0] == '#' && !t[1])
		return true;
	return bsearch(t, weak_words, sizeof weak_words / sizeof weak_words[0], sizeof weak_words[0], cmp_word) != NULL;
}

/*
 * A hit must share at least one token that names the GPU world (a vendor,
 * a library, a runtime, an arch code): two messages that share only
 * "Insufficient", "Error response from daemon" or "No module named" are
 * other tools' errors ("0/3 nodes are available: 3 Insufficient cpu").
 */
static bool anchored(const char *t)
{
	static const char *const parts[] = {
		"cuda", "gpu", "nvidia", "nvml", "rocm", "rocblas", "hip", "hsa_", "amdgpu", "gfx", "nccl", "cudnn",
		"cublas", "cufft", "cusolver", "cusparse", "vram", "xpu", "mps", "metal", "tensorrt", "trt", "triton",
		"ptxas", "nvcc", "vllm", "sglang", "ollama", "ggml", "gguf", "bitsandbytes", "xformers", "flash_attn",
		"flashattention", "deepspeed", "fsdp", "xid", "dxg", "wsl", "sm_", "torch", "onnxruntime", "cutlass",
		"winerror", "level_zero", "ur_result", "ipex", "zluda", "directml", "vulkan", "nvrm", "tensile",
		"oom", "xla", "jax", "resource_exhausted", "offload", "8bit", "4bit", "bnb", "dll", "accelerat",
		"device", "llama", "kv_cache", "unsloth", "peft", "quantiz",
		"\xe6\x98\xbe", /* 显 (显存, 显卡) */
		"\xe9\xa9\xb1\xe5\x8a\xa8", /* 驱动 */
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (strstr(t, parts[i]))
			return true;
	return false;
}

typedef void (*tok_fn)(const char *tok, void *ctx);

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return n > 0;
}

/* A hash, an address or a UUID part: hex with digits and letters, 8+ long, or 0x... */
static bool hexish(const char *s, size_t n)
{
	if (n > 2 && s[0] == '0' && s[1] == 'x')
		return true;
	if (n < 8)
		return false;
	bool digit = false, alpha = false;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		digit |= isdigit((unsigned char)s[i]) != 0;
		alpha |= isalpha((unsigned char)s[i]) != 0;
	}
	return digit && alpha;
}

/* One ASCII word (lowercased, n < TOK_MAX): the word, its parts and its family. */
static void emit_word(char *w, size_t n, tok_fn fn, void *ctx)
{
	if (n < 2 || hexish(w, n))
		return;
	if (all_digits(w, n)) {
		fn("#", ctx);
		return;
	}
	if (!stopword(w))
		fn(w, ctx);
	/* the family of a name ending in digits: gfx1103 -> gfx#, sm_120 -> sm_# */
	size_t d = n;
	while (d > 0 && isdigit((unsigned char)w[d - 1]))
		d--;
	if (d < n && d >= 2) {
		char fam[TOK_MAX + 2];
		memcpy(fam, w, d);
		fam[d] = '#';
		fam[d + 1] = '\0';
		fn(fam, ctx);
	}
	/* the parts of an identifier: CUDA_ERROR_NO_DEVICE -> cuda, error, device */
	if (memchr(w, '_', n)) {
		size_t i = 0;
		while (i < n) {
			while (i < n && w[i] == '_')
				i++;
			size_t j = i;
			while (j < n && w[j] != '_')
				j++;
			if (j - i >= 2 && j - i < n) {
				char part[TOK_MAX];
				memcpy(part, w + i, j - i);
				part[j - i] = '\0';
				if (all_digits(part, j - i))
					; /* sm_120's number is in its family already */
				else if (!stopword(part) && !hexish(part, j - i))
					fn(part, ctx);
			}
			i = j;
		}
	}
}

/* The code point of a UTF-8 sequence at s (n bytes left); *adv its length. */
static uint32_t utf8_at(const unsigned char *s, size_t n, size_t *adv)
{
	*adv = 1;
	if (s[0] < 0x80)
		return s[0];
	int len = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 1;
	if (len == 1 || (size_t)len > n)
		return 0xFFFD;
	uint32_t c = s[0] & (0x7F >> len);
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0xFFFD;
		c = (c << 6) | (s[i] & 0x3F);
	}
	*adv = (size_t)len;
	return c;
}

static bool cjk(uint32_t c)
{
	return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0xF900 && c <= 0xFAFF);
}

static void tokenize(const char *text, size_t len, tok_fn fn, void *ctx)
{
	const unsigned char *s = (const unsigned char *)text;
	char w[TOK_MAX];
	size_t wn = 0;
	bool too_long = false;
	/* the previous CJK character (UTF-8), for bigrams */
	char prev[8];
	size_t prev_n = 0;
	bool lone = false; /* prev has not been part of a bigram yet */
	for (size_t i = 0; i <= len;) {
		unsigned char c = i < len ? s[i] : 0;
		bool word = c && (isalnum(c) || c == '_');
		/* a literal \n or \t inside a word is a separator */
		if (c == '\\' && i + 1 < len && (s[i + 1] == 'n' || s[i + 1] == 't' || s[i + 1] == 'r')) {
			word = false;
			i++;
		}
		if (word) {
			if (wn < TOK_MAX - 1)
				w[wn++] = (char)tolower(c);
			else
				too_long = true;
			i++;
			continue;
		}
		if (wn) {
			w[wn] = '\0';
			if (!too_long)
				emit_word(w, wn, fn, ctx);
			wn = 0;
			too_long = false;
		}
		if (!c)
			break;
		size_t adv;
		uint32_t cp = c < 0x80 ? c : utf8_at(s + i, len - i, &adv);
		if (c < 0x80)
			adv = 1;
		if (cjk(cp)) {
			if (prev_n) {
				char bi[16];
				memcpy(bi, prev, prev_n);
				memcpy(bi + prev_n, s + i, adv);
				bi[prev_n + adv] = '\0';
				fn(bi, ctx);
				lone = false;
			} else {
				lone = true;
			}
			memcpy(prev, s + i, adv);
			prev_n = adv;
		} else {
			if (prev_n && lone) {
				prev[prev_n] = '\0';
				fn(prev, ctx);
			}
			prev_n = 0;
			lone = false;
		}
		i += adv;
	}
	if (prev_n && lone) {
		prev[prev_n] = '\0';
		fn(prev, ctx);
	}
}

static void tok_print(const char *tok, void *ctx)
{
	strbuf *sb = ctx;
	sb_printf(sb, "%s%s", sb->len ? " " : "", tok);
}

char *explain_tokens(const char *text, size_t len)
{
	strbuf sb = STRBUF_INIT;
	tokenize(text, len, tok_print, &sb);
	sb_puts(&sb, "");
	return sb_detach(&sb);
}

/* ---- the index ---------------------------------------------------------- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of tok: its term's index + 1, or the empty slot where it would go. */
static size_t slot_of(const char *tok)
{
	size_t mask = ix.n_slots - 1;
	for (size_t i = hash(tok) & mask;; i = (i + 1) & mask)
		if (!ix.slots[i] || strcmp(ix.terms[ix.slots[i] - 1].tok, tok) == 0)
			return i;
}

static long term_find(const char *tok)
{
	if (!ix.n_slots)
		return -1;
	size_t i = slot_of(tok);
	return ix.slots[i] ? (long)ix.slots[i] - 1 : -1;
}

static void rehash(void)
{
	free(ix.slots);
	ix.n_slots = ix.n_slots ? ix.n_slots * 2 : 4096;
	ix.slots = xcalloc(ix.n_slots, sizeof *ix.slots);
	for (size_t t = 0; t < ix.n_terms; t++)
		ix.slots[slot_of(ix.terms[t].tok)] = (uint32_t)t + 1;
}

static size_t term_add(const char *tok)
{
	if ((ix.n_terms + 1) * 2 > ix.n_slots)
		rehash();
	size_t i = slot_of(tok);
	if (ix.slots[i])
		return ix.slots[i] - 1;
	ix.terms = xgrow(ix.terms, &ix.cap_terms, ix.n_terms + 1, sizeof *ix.terms);
	ix.terms[ix.n_terms] = (term){.tok = xstrdup(tok)};
	ix.slots[i] = (uint32_t)++ix.n_terms;
	return ix.n_terms - 1;
}

static void doc_tok(const char *tok, void *ctx)
{
	uint32_t d = *(uint32_t *)ctx;
	size_t ti = term_add(tok); /* before taking ix.terms: it may move */
	term *t = &ix.terms[ti];
	ix.docs[d].len++;
	if (t->n_post && t->post[t->n_post - 1].doc == d) {
		t->post[t->n_post - 1].tf++;
		return;
	}
	t->post = xgrow(t->post, &t->cap, t->n_post + 1, sizeof *t->post);
	t->post[t->n_post++] = (posting){d, 1};
}

static double tf_weight(double tf, uint32_t dl)
{
	return tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / ix.avg_len));
}

/* "CUDA\nerror" (the table's escape) -> the real characters. */
static char *unescape(const char *s)
{
	char *o = xmalloc(strlen(s) + 1), *q = o;
	for (; *s; s++) {
		if (*s == '\\' && (s[1] == 'n' || s[1] == 't')) {
			*q++ = s[1] == 'n' ? '\n' : '\t';
			s++;
		} else {
			*q++ = *s;
		}
	}
	*q = '\0';
	return o;
}

static void build(void)
{
	static const char prefix[] = "explain-corpus-";
	const char *name;
	size_t cap_docs = 0;
	for (size_t b = 0; (name = kb_embedded_name(b)); b++) {
		if (strncmp(name, prefix, sizeof prefix - 1))
			continue;
		gw_error err = {0};
		const kb_table *t = kb_get_table(name, &err);
		if (!t)
			continue; /* a broken table: explain's signatures still answer (kb.t checks the tables) */
		long cd = kb_col(t, "diagnosis"), cl = kb_col(t, "lang"), cf = kb_col(t, "family"),
		     cm = kb_col(t, "message"), cs = kb_col(t, "source"), cr = kb_col(t, "resolution");
		if (cd < 0 || cm < 0)
			continue;
		for (size_t r = 0; r < t->nrows; r++) {
			if (!*kb_cell(t, r, cd) || !*kb_cell(t, r, cm))
				continue;
			ix.docs = xgrow(ix.docs, &cap_docs, ix.n_docs + 1, sizeof *ix.docs);
			doc *d = &ix.docs[ix.n_docs];
			*d = (doc){
				.diagnosis = xstrdup(kb_cell(t, r, cd)), .family = xstrdup(kb_cell(t, r, cf)),
				.lang = xstrdup(kb_cell(t, r, cl)), .message = unescape(kb_cell(t, r, cm)),
				.source = xstrdup(kb_cell(t, r, cs)), .resolution = xstrdup(kb_cell(t, r, cr)),
			};
			uint32_t id = (uint32_t)ix.n_docs++;
			tokenize(d->message, strlen(d->message), doc_tok, &id);
		}
	}
	if (!ix.n_docs)
		return;
	double total = 0;
	for (size_t i = 0; i < ix.n_docs; i++)
		total += ix.docs[i].len;
	ix.avg_len = total / (double)ix.n_docs;
	if (ix.avg_len <= 0)
		ix.avg_len = 1;
	double n = (double)ix.n_docs;
	for (size_t t = 0; t < ix.n_terms; t++) {
		term *x = &ix.terms[t];
		x->idf = log(1 + (n - (double)x->n_post + 0.5) / ((double)x->n_post + 0.5));
		if (weak(x->tok))
			x->idf *= WEAK_FACTOR;
		x->anchor = anchored(x->tok);
		for (size_t p = 0; p < x->n_post; p++)
			ix.docs[x->post[p].doc].self += x->idf * tf_weight(x->post[p].tf, ix.docs[x->post[p].doc].len);
	}
}

static void ensure_built(void)
{
	pthread_mutex_lock(&ix_lock);
	if (!ix.built) {
		build();
		ix.built = true;
	}
	pthread_mutex_unlock(&ix_lock);
}

void explain_retrieve_release(void)
{
	pthread_mutex_lock(&ix_lock);
	for (size_t t = 0; t < ix.n_terms; t++) {
		free(ix.terms[t].tok);
		free(ix.terms[t].post);
	}
	for (size_t d = 0; d < ix.n_docs; d++) {
		doc *x = &ix.docs[d];
		free(x->diagnosis);
		free(x->family);
		free(x->lang);
		free(x->message);
		free(x->source);
		free(x->resolution);
	}
	free(ix.terms);
	free(ix.slots);
	free(ix.docs);
	memset(&ix, 0, sizeof ix);
	free(excluded);
	excluded = NULL;
	excluded_set = false;
	pthread_mutex_unlock(&ix_lock);
}

void explain_retrieve_exclude(const char *source)
{
	pthread_mutex_lock(&ix_lock);
	free(excluded);
	excluded = source ? xstrdup(source) : NULL;
	excluded_set = source != NULL;
	pthread_mutex_unlock(&ix_lock);
}

size_t explain_corpus_size(size_t *n_diagnoses)
{
	ensure_built();
	if (n_diagnoses) {
		size_t k = 0;
		for (size_t i = 0; i < ix.n_docs; i++) {
			size_t j;
			for (j = 0; j < i; j++)
				if (!strcmp(ix.docs[j].diagnosis, ix.docs[i].diagnosis))
					break;
			k += j == i;
		}
		*n_diagnoses = k;
	}
	return ix.n_docs;
}

/* ---- queries ------------------------------------------------------------ */

typedef struct query {
	uint32_t *terms; /* distinct known terms */
	size_t n, cap;
	uint8_t *seen;   /* per term */
	uint64_t *unknown; /* hashes of the tokens no corpus message has (not weak ones) */
	size_t n_unknown, cap_unknown;
} query;

static void query_tok(const char *tok, void *ctx)
{
	query *q = ctx;
	long t = term_find(tok);
	if (t < 0) {
		if (!weak(tok)) {
			q->unknown = xgrow(q->unknown, &q->cap_unknown, q->n_unknown + 1, sizeof *q->unknown);
			q->unknown[q->n_unknown++] = hash(tok);
		}
		return;
	}
	if (q->seen[t])
		return;
	q->seen[t] = 1;
	q->terms = xgrow(q->terms, &q->cap, q->n + 1, sizeof *q->terms);
	q->terms[q->n++] = (uint32_t)t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/*
 * What share of the text the best document explains: its score over the
 * idf of the text's distinct known tokens plus, for each distinct token no
 * corpus message has, half the largest idf (a token never seen is as rare
 * as a token can be, and a message made of them is another world's).
 */
static double query_coverage(const query *q, double score)
{
	double known = 0;
	for (size_t i = 0; i < q->n; i++)
		known += ix.terms[q->terms[i]].idf;
	size_t distinct = 0;
	if (q->n_unknown) {
		qsort(q->unknown, q->n_unknown, sizeof *q->unknown, cmp_u64);
		distinct = 1;
		for (size_t i = 1; i < q->n_unknown; i++)
			distinct += q->unknown[i] != q->unknown[i - 1];
	}
	double idf_max = log(1 + ((double)ix.n_docs + 0.5) / 0.5);
	double all = known + UNKNOWN_TOKEN_SHARE * idf_max * (double)distinct;
	return all > 0 ? score / all : 0;
}

size_t explain_retrieve(const char *text, size_t len, const char *want_id, explain_hit *out, size_t max)
{
	ensure_built();
	if (!ix.n_docs || !max)
		return 0;
	if (len > EXPLAIN_RETRIEVE_TAIL) {
		/* start at a line (or at least a character) boundary */
		const char *p = text + len - EXPLAIN_RETRIEVE_TAIL;
		const char *nl = memchr(p, '\n', 256);
		if (nl)
			p = nl + 1;
		while ((unsigned char)*p >= 0x80 && (unsigned char)*p < 0xC0)
			p++;
		len -= (size_t)(p - text);
		text = p;
	}
	query q = {.seen = xcalloc(ix.n_terms, 1)};
	tokenize(text, len, query_tok, &q);
	double *score = xcalloc(ix.n_docs, sizeof *score);
	uint8_t *anchor = xcalloc(ix.n_docs, 1);
	/* tools/explain-eval.py: leave one thread out of the fit set to measure it honestly */
	const char *exclude = excluded_set ? excluded : getenv("GPUWISE_EXPLAIN_EXCLUDE_SOURCE");
	for (size_t i = 0; i < q.n; i++) {
		const term *t = &ix.terms[q.terms[i]];
		for (size_t p = 0; p < t->n_post; p++) {
			score[t->post[p].doc] += t->idf * tf_weight(t->post[p].tf, ix.docs[t->post[p].doc].len);
			anchor[t->post[p].doc] |= t->anchor;
		}
	}
	/*
	 * Each document's rank is its score times its confidence: the raw
	 * score favours long examples that share many tokens, the confidence
	 * short ones that the text covers whole; their product wants both.  A
	 * diagnosis is ranked by the sum of its VOTES best documents' ranks
	 * (nearest-neighbour voting: three threads that agree outweigh one
	 * long example that happens to share more words), and answered with
	 * its best document.
	 */
	typedef struct {
		size_t doc;
		double rank, conf;
	} cand;
	cand *c = xmalloc(ix.n_docs * sizeof *c);
	size_t nc = 0;
	for (size_t d = 0; d < ix.n_docs; d++) {
		if (score[d] <= 0 || (want_id && strcmp(ix.docs[d].diagnosis, want_id)) ||
		    (exclude && !strcmp(exclude, ix.docs[d].source)))
			continue;
		double conf = ix.docs[d].self > 0 ? score[d] / ix.docs[d].self : 0;
		if (conf > 1)
			conf = 1;
		c[nc++] = (cand){d, score[d] * conf, conf};
	}
	/* per diagnosis: the best document and the sum of the VOTES best ranks */
	typedef struct {
		const char *diagnosis;
		size_t best, n;
		double top[VOTES];
		double vote;
	} group;
	group *g = xcalloc(nc ? nc : 1, sizeof *g);
	size_t ng = 0;
	for (size_t i = 0; i < nc; i++) {
		const char *dg = ix.docs[c[i].doc].diagnosis;
		size_t k;
		for (k = 0; k < ng; k++)
			if (g[k].diagnosis == dg || !strcmp(g[k].diagnosis, dg))
				break;
		if (k == ng)
			g[ng++] = (group){.diagnosis = dg, .best = i};
		group *x = &g[k];
		if (c[i].rank > c[x->best].rank)
			x->best = i;
		/* keep the VOTES largest ranks */
		size_t slot = x->n < VOTES ? x->n++ : VOTES;
		if (slot == VOTES) {
			size_t lo = 0;
			for (size_t v = 1; v < VOTES; v++)
				if (x->top[v] < x->top[lo])
					lo = v;
			if (x->top[lo] >= c[i].rank)
				continue;
			slot = lo;
		}
		x->top[slot] = c[i].rank;
	}
	for (size_t k = 0; k < ng; k++) {
		g[k].vote = 0;
		for (size_t v = 0; v < g[k].n; v++)
			g[k].vote += g[k].top[v];
	}
	/* the best max groups, best first; oanch[k]: out[k]'s example shares a GPU-world token */
	size_t n = 0;
	uint8_t *oanch = xcalloc(max, 1);
	for (size_t k = 0; k < ng; k++) {
		size_t at = n < max ? n++ : max;
		if (at == max) {
			if (out[max - 1].rank >= g[k].vote)
				continue;
			at = max - 1;
		}
		const cand *b = &c[g[k].best];
		const doc *x = &ix.docs[b->doc];
		out[at] = (explain_hit){x->diagnosis, x->family, x->lang, x->message, x->source, x->resolution,
					score[b->doc], b->conf, g[k].vote, false};
		oanch[at] = anchor[b->doc];
		while (at > 0 && out[at - 1].rank < out[at].rank) {
			explain_hit tmp = out[at - 1];
			out[at - 1] = out[at];
			out[at] = tmp;
			uint8_t a = oanch[at - 1];
			oanch[at - 1] = oanch[at];
			oanch[at] = a;
			at--;
		}
	}
	/*
	 * A hit names a diagnosis when its example is similar enough (the
	 * example's share the text covers, or the text's share the example
	 * explains), scores two rare tokens' worth, and shares a GPU-world
	 * token (or is very close).
	 */
	for (size_t k = 0; k < n; k++)
		out[k].accepted = out[k].score >= MIN_SCORE &&
				  (oanch[k] || out[k].confidence >= UNANCHORED_MIN_CONFIDENCE) &&
				  (out[k].confidence >= EXPLAIN_RETRIEVE_MIN_CONFIDENCE ||
				   query_coverage(&q, out[k].score) >= MIN_COVERAGE);
	free(oanch);
	free(c);
	free(g);
	free(score);
	free(anchor);
	free(q.terms);
	free(q.seen);
	free(q.unknown);
	return n;
}

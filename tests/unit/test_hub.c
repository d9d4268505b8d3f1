/*
 * model/hub.c without a network: the names it takes, and the Range-grown
 * GGUF reader over a file served from memory (the same parse as the file
 * reader, however small the first read; a truncated or lying header is an
 * error with its reason; the fuzz corpus of tests/fuzz/corpus/gguf_grow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hub.h"
#include "model/model.h"

static void test_parse(void **state)
{
	(void)state;
	hub_name n;
	assert_true(hub_parse("Qwen/Qwen3-14B", &n));
	assert_int_equal(n.kind, HUB_HF);
	assert_string_equal(n.repo, "Qwen/Qwen3-14B");
	assert_string_equal(n.rev, "main");
	assert_string_equal(n.quant, "");
	assert_true(hub_parse("unsloth/Qwen3-14B-GGUF:Q4_K_M", &n));
	assert_string_equal(n.repo, "unsloth/Qwen3-14B-GGUF");
	assert_string_equal(n.quant, "Q4_K_M");
	assert_true(hub_parse("hf.co/org/name@v1.0:IQ2_XS", &n));
	assert_string_equal(n.repo, "org/name");
	assert_string_equal(n.rev, "v1.0");
	assert_string_equal(n.quant, "IQ2_XS");
	assert_true(hub_parse("https://huggingface.co/org/name", &n));
	assert_string_equal(n.repo, "org/name");
	assert_true(hub_parse("qwen3:14b", &n));
	assert_int_equal(n.kind, HUB_OLLAMA);
	assert_string_equal(n.repo, "library/qwen3");
	assert_string_equal(n.rev, "14b");
	assert_true(hub_parse("ollama.com/huihui_ai/qwen3-abliterated:8b", &n));
	assert_string_equal(n.repo, "huihui_ai/qwen3-abliterated");
	assert_true(hub_parse("ollama.com/gemma3", &n));
	assert_string_equal(n.repo, "library/gemma3");
	assert_string_equal(n.rev, "latest");
	/* not remote: catalog names, paths, malformed names */
	const char *no[] = {"llama-3.1-8b", "./x/y", "/abs/path", "~/m.gguf", "dir/model.gguf", "org/", "/name",
			    "org/a/b", "org/name:", "org/na me", "qwen3:", ":14b", "org/.hidden", "a:b:c", "", "org/name@"};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (hub_parse(no[i], &n))
			fail_msg("'%s' taken as a remote name", no[i]);
}

/* ---- a remote file in memory ---------------------------------------- */

typedef struct mem_file {
	const uint8_t *data;
	size_t len;
	uint64_t size;     /* the size the server reports (>= len: the rest reads as zeros) */
	unsigned requests;
	uint64_t sent;
} mem_file;

static int mem_fetch(void *ctx, uint64_t from, uint64_t to, strbuf *out, uint64_t *size, gw_error *err)
{
	mem_file *f = ctx;
	(void)err;
	f->requests++;
	*size = f->size;
	for (uint64_t p = from; p < to && p < f->size; p++) {
		char c = p < f->len ? (char)f->data[p] : 0;
		sb_add(out, &c, 1);
		f->sent++;
	}
	return 0;
}

static uint8_t *slurp(const char *name, size_t *len)
{
	const char *top = getenv("GW_TOP");
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/fuzz/corpus/gguf/%s", top && *top ? top : ".", name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open '%s'", path);
	uint8_t *buf = malloc(1 << 20);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static int grow_read(mem_file *f, uint64_t first, uint64_t max, model_desc *m, hub_prefix *p, gw_error *err)
{
	const uint8_t *b;
	size_t blen;
	*p = (hub_prefix){.fetch = mem_fetch, .ctx = f, .what = "t.gguf", .max = max, .first = first};
	int rc = hub_prefix_grow(p, 4, &b, &blen, err);
	if (!rc)
		rc = gguf_read_grow("t.gguf", p->size, hub_prefix_grow, p, m, err);
	return rc;
}

static void test_grow_equals_file(void **state)
{
	(void)state;
	const char *seeds[] = {"llama-v3.gguf", "llama-v2.gguf", "gemma3-swa.gguf", "moe-kvarr.gguf"};
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
		size_t len;
		uint8_t *data = slurp(seeds[i], &len);
		model_desc want, got;
		gw_error err = {0};
		assert_int_equal(gguf_read_mem(data, len, len, &want, &err), 0);
		/* first reads of 16 bytes up to the whole file: the same model */
		for (uint64_t first = 16; first <= 8192; first *= 8) {
			mem_file f = {.data = data, .len = len, .size = len};
			hub_prefix p;
			if (grow_read(&f, first, HUB_MAX_HEADER, &got, &p, &err))
				fail_msg("%s, first read %llu: %s", seeds[i], (unsigned long long)first, err.msg);
			assert_int_equal(got.total_bytes, want.total_bytes);
			assert_int_equal(got.n_layers, want.n_layers);
			assert_int_equal(got.n_tensors, want.n_tensors);
			assert_int_equal(got.embd_bytes, want.embd_bytes);
			/* doubling: a handful of requests, at most twice the header read */
			assert_true(f.requests <= 12);
			assert_true(f.sent == p.buf.len && p.buf.len <= len);
			model_release(&got);
			sb_release(&p.buf);
		}
		model_release(&want);
		free(data);
	}
}

static void test_grow_errors(void **state)
{
	(void)state;
	size_t len;
	uint8_t *data = slurp("llama-v3.gguf", &len);
	model_desc m;
	gw_error err = {0};
	hub_prefix p;
	/* the file is shorter than its header: a truncated header, said so */
	mem_file f = {.data = data, .len = len / 2, .size = len / 2};
	assert_int_equal(grow_read(&f, 64, HUB_MAX_HEADER, &m, &p, &err), GW_ETRUNC);
	assert_non_null(strstr(err.msg, "truncated"));
	sb_release(&p.buf);
	/* a header that runs past the ceiling is refused before reading it */
	mem_file g = {.data = data, .len = len, .size = 1ULL << 40};
	uint8_t *liar = malloc(len);
	memcpy(liar, data, len);
	/* the first key's length (offset 24) claims 1 GiB */
	liar[24 + 4] = 0x40;
	g.data = liar;
	int rc = grow_read(&g, 64, 1 << 20, &m, &p, &err);
	assert_true(rc < 0);
	assert_true(g.sent <= (1 << 20));
	sb_release(&p.buf);
	free(liar);
	free(data);
}

/* tests/fuzz/corpus/gguf_grow (and gguf) through the grown reader: a result or a clean error. */
static void test_corpus(void **state)
{
	(void)state;
	const char *top = getenv("GW_TOP");
	const char *subs[] = {"gguf_grow", "gguf"};
	size_t n = 0;
	for (size_t s = 0; s < 2; s++) {
		char dir[1024];
		snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", top && *top ? top : ".", subs[s]);
		DIR *d = opendir(dir);
		if (!d)
			fail_msg("cannot open the corpus '%s'", dir);
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[2048];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			FILE *fp = fopen(path, "rb");
			assert_non_null(fp);
			uint8_t *buf = malloc(1 << 20);
			size_t len = fread(buf, 1, 1 << 20, fp);
			fclose(fp);
			/* as the fuzz target: the last byte stretches the file with zeros */
			mem_file f = {.data = buf, .len = len, .size = len + (len ? (uint64_t)buf[len - 1] << 20 : 0)};
			model_desc m;
			gw_error err = {0};
			hub_prefix p;
			int rc = grow_read(&f, 4096, 1 << 20, &m, &p, &err);
			if (!rc)
				model_release(&m);
			else
				assert_true(rc < 0 && err.msg[0]);
			sb_release(&p.buf);
			free(buf);
			n++;
		}
		closedir(d);
	}
	assert_true(n >= 5);
	print_message("# replayed %zu GGUF inputs through the grown reader\n", n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_grow_equals_file),
		cmocka_unit_test(test_grow_errors),
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests_name("hub", tests, NULL, NULL);
}

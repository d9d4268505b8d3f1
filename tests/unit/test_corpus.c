/*
 * Replays the fuzz corpus (tests/fuzz/corpus/{gguf,safetensors,explain})
 * through the readers and explain's matcher under the sanitizers of `make
 * check`: every seed and every input that once crashed must now give a
 * result or a clean error, and the valid seeds must still parse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hw/hw.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor.h"
#include "model/model.h"

typedef int (*reader_fn)(const char *path, const uint8_t *buf, size_t len, model_desc *m, gw_error *err);

static int gguf_mem(const char *path, const uint8_t *buf, size_t len, model_desc *m, gw_error *err)
{
	(void)path;
	return gguf_read_mem(buf, len, len, m, err);
}
static int gguf_prefix(const char *path, const uint8_t *buf, size_t len, model_desc *m, gw_error *err)
{
	(void)path;
	return gguf_read_mem(buf, len, (uint64_t)len + (1ULL << 36), m, err);
}
static int gguf_file(const char *path, const uint8_t *buf, size_t len, model_desc *m, gw_error *err)
{
	(void)buf;
	(void)len;
	return gguf_read(path, m, err);
}
static int st_mem(const char *path, const uint8_t *buf, size_t len, model_desc *m, gw_error *err)
{
	(void)path;
	return safetensors_read_mem(buf, len, len, m, err);
}
static int cfg_mem(const char *path, const uint8_t *buf, size_t len, model_desc *m, gw_error *err)
{
	(void)path;
	return hfconfig_read_mem((const char *)buf, len, m, err);
}

/* Seeds that are valid models (tests/fuzz/mkseeds.py). */
static const char *const valid[] = {
	"gguf:llama-v3.gguf", "gguf:llama-v2.gguf", "gguf:gemma3-swa.gguf", "gguf:moe-kvarr.gguf",
	"safetensors:small.safetensors", "safetensors:empty-meta.safetensors", "config:config.json",
};

static bool must_parse(const char *kind, const char *name)
{
	char key[300];
	snprintf(key, sizeof key, "%s:%s", kind, name);
	for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
		if (!strcmp(valid[i], key))
			return true;
	return false;
}

static size_t replay(const char *sub, const char *kind, reader_fn fn)
{
	const char *top = getenv("GW_TOP");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", top && *top ? top : ".", sub);
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open the corpus '%s'", dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		long sz = ftell(f);
		fseek(f, 0, SEEK_SET);
		assert_true(sz >= 0 && sz < (1 << 20));
		uint8_t *buf = malloc((size_t)sz + 1);
		assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
		fclose(f);
		model_desc m;
		gw_error err = {0};
		int rc = fn(path, buf, (size_t)sz, &m, &err);
		if (rc == 0) {
			model_release(&m);
		} else {
			/* a refusal says why */
			assert_true(rc < 0);
			assert_true(err.msg[0] != '\0');
			if (must_parse(kind, e->d_name))
				fail_msg("valid seed %s refused: %s", path, err.msg);
		}
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static void test_gguf_corpus(void **state)
{
	(void)state;
	size_t n = replay("gguf", "gguf", gguf_mem);
	assert_true(n >= 5);
	replay("gguf", "gguf", gguf_file);
	replay("gguf", "prefix", gguf_prefix);
	print_message("# replayed %zu GGUF inputs\n", n);
}

static void test_safetensors_corpus(void **state)
{
	(void)state;
	size_t n = replay("safetensors", "safetensors", st_mem);
	assert_true(n >= 3);
	replay("safetensors", "config", cfg_mem);
	print_message("# replayed %zu safetensors/config inputs\n", n);
}

/*
 * tests/fuzz/corpus/explain: every seed and every input the matcher fuzz
 * target (tests/fuzz/fuzz_explain.c) found goes through explain_match and
 * the OOM parser; each match lies inside the text, and the seeds taken from
 * the validation corpus still get a diagnosis.
 */
static void test_explain_corpus(void **state)
{
	(void)state;
	const char *top = getenv("GW_TOP");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/explain", top && *top ? top : ".");
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open the corpus '%s'", dir);
	size_t n = 0, diagnosed = 0, seeds = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		char *buf = malloc(1 << 20);
		size_t len = fread(buf, 1, (1 << 20) - 1, f);
		fclose(f);
		for (size_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = '\n';
		buf[len] = '\0';
		explain_match_t *m;
		size_t nm;
		gw_error err = {0};
		assert_int_equal(explain_match(buf, &m, &nm, &err), 0);
		for (size_t i = 0; i < nm; i++)
			assert_true(m[i].offset <= len && m[i].length <= len - m[i].offset);
		bool seed = strncmp(e->d_name, "msg-", 4) == 0;
		seeds += seed;
		diagnosed += seed && nm > 0;
		explain_matches_free(m, nm);
		oom_info o;
		explain_parse_oom(buf, &o);
		assert_true(o.n_others <= OOM_MAX_PROCS);
		free(buf);
		n++;
	}
	closedir(d);
	assert_true(seeds >= 100);
	assert_int_equal(diagnosed, seeds);
	print_message("# replayed %zu explain inputs (%zu seeds, all diagnosed)\n", n, seeds);
	explain_release();
}

/* tests/fuzz/corpus/dmi: the SMBIOS parser over every seed and finding; the
 * seeds (seed-*) parse with a bandwidth, the rest parse or say why. */
static void test_dmi_corpus(void **state)
{
	(void)state;
	const char *top = getenv("GW_TOP");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/dmi", top && *top ? top : ".");
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open the corpus '%s'", dir);
	size_t n = 0, seeds = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		uint8_t *buf = malloc(1 << 20);
		size_t len = fread(buf, 1, 1 << 20, f);
		fclose(f);
		uint8_t *exact = malloc(len ? len : 1);
		memcpy(exact, buf, len);
		hw_host_memory m;
		gw_error err = {0};
		int rc = hw_dmi_memory_parse(exact, len, &m, &err);
		if (rc)
			assert_true(err.msg[0] != '\0');
		else
			assert_true(m.bandwidth_gbs > 0 && m.channels > 0);
		if (!strncmp(e->d_name, "seed-", 5)) {
			seeds++;
			assert_int_equal(rc, 0);
		}
		free(exact);
		free(buf);
		n++;
	}
	closedir(d);
	assert_true(seeds >= 4);
	print_message("# replayed %zu SMBIOS inputs (%zu seeds)\n", n, seeds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gguf_corpus),
		cmocka_unit_test(test_safetensors_corpus),
		cmocka_unit_test(test_explain_corpus),
		cmocka_unit_test(test_dmi_corpus),
	};
	return cmocka_run_group_tests_name("fuzz-corpus", tests, NULL, NULL);
}

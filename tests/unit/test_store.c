/*
 * Unit tests for models found by name in the stores other programs keep:
 * Ollama's (manifests naming blobs), the Hugging Face cache (refs naming
 * snapshots) and LM Studio's folders.  The stores are written here: GGUF
 * blobs with the tests' GGUF writer, safetensors with their header, and
 * broken stores (a missing blob, a blob of the wrong size, a GGUF whose
 * header claims more data than the file has, refs/main naming nothing).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "kb/kb.h"
#include "model/model.h"
#include "tmpdir.h"

static const char *tpath(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *tpath(const char *fmt, ...)
{
	static char p[8][600];
	static int k;
	char rel[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof rel, fmt, ap);
	va_end(ap);
	k = (k + 1) % 8;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, rel);
	return p[k];
}

static void mkdirs(const char *path)
{
	char cmd[800];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static uint64_t fsize(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/*
 * A small llama GGUF (2 blocks of 64 wide, Q8_0/F16/F32 tensors); its
 * tensor bytes in *tensor_bytes; cut: bytes short of its data (a header
 * that lies about the file's length).  Returns the file size.
 */
static uint64_t write_gguf(const char *path, uint64_t cut, uint64_t *tensor_bytes)
{
	ggw w;
	uint64_t b = 0;
	ggw_init(&w, 3);
	ggw_kv_str(&w, "general.architecture", "llama");
	ggw_kv_u32(&w, "general.file_type", 7);
	ggw_kv_u32(&w, "llama.block_count", 2);
	ggw_kv_u32(&w, "llama.embedding_length", 64);
	ggw_kv_u32(&w, "llama.feed_forward_length", 128);
	ggw_kv_u32(&w, "llama.attention.head_count", 4);
	ggw_kv_u32(&w, "llama.attention.head_count_kv", 2);
	ggw_kv_u32(&w, "llama.context_length", 4096);
	b += ggw_tensor2(&w, "token_embd.weight", GGT_Q8_0, 64, 256);
	for (int i = 0; i < 2; i++) {
		char n[64];
		snprintf(n, sizeof n, "blk.%d.attn_q.weight", i);
		b += ggw_tensor2(&w, n, GGT_Q8_0, 64, 64);
		snprintf(n, sizeof n, "blk.%d.attn_k.weight", i);
		b += ggw_tensor2(&w, n, GGT_Q8_0, 64, 32);
		snprintf(n, sizeof n, "blk.%d.attn_v.weight", i);
		b += ggw_tensor2(&w, n, GGT_Q8_0, 64, 32);
		snprintf(n, sizeof n, "blk.%d.attn_output.weight", i);
		b += ggw_tensor2(&w, n, GGT_Q8_0, 64, 64);
		snprintf(n, sizeof n, "blk.%d.ffn_up.weight", i);
		b += ggw_tensor2(&w, n, GGT_F16, 64, 128);
		snprintf(n, sizeof n, "blk.%d.ffn_gate.weight", i);
		b += ggw_tensor2(&w, n, GGT_F16, 64, 128);
		snprintf(n, sizeof n, "blk.%d.ffn_down.weight", i);
		b += ggw_tensor2(&w, n, GGT_F16, 128, 64);
		snprintf(n, sizeof n, "blk.%d.attn_norm.weight", i);
		b += ggw_tensor2(&w, n, GGT_F32, 64, 0);
	}
	b += ggw_tensor2(&w, "output_norm.weight", GGT_F32, 64, 0);
	b += ggw_tensor2(&w, "output.weight", GGT_Q8_0, 64, 256);
	uint64_t size = ggw_write(&w, path, cut);
	ggw_free(&w);
	assert_true(size > 0);
	if (tensor_bytes)
		*tensor_bytes = b;
	return size;
}

static const char HEX_MODEL[] = "1111111111111111111111111111111111111111111111111111111111111111";
static const char HEX_PARAMS[] = "2222222222222222222222222222222222222222222222222222222222222222";
static const char HEX_PROJ[] = "3333333333333333333333333333333333333333333333333333333333333333";
static const char HEX_CFG[] = "4444444444444444444444444444444444444444444444444444444444444444";

/* A manifest at manifests/HOST/NS/NAME/TAG naming the model blob (its size
 * as given), the params blob and, when proj, a projector. */
static void write_manifest(const char *rel, const char *model_hex, uint64_t model_size, bool proj)
{
	const char *mp = tpath("ollama/manifests/%s", rel);
	char dir[600];
	snprintf(dir, sizeof dir, "%s", mp);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	char text[2048];
	snprintf(text, sizeof text,
		 "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
		 "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:%s\",\"size\":10},"
		 "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:%s\",\"size\":%llu},"
		 "{\"mediaType\":\"application/vnd.ollama.image.template\",\"digest\":\"sha256:%s\",\"size\":3},"
		 "{\"mediaType\":\"application/vnd.ollama.image.params\",\"digest\":\"sha256:%s\",\"size\":%llu}%s%s%s]}",
		 HEX_CFG, model_hex, (unsigned long long)model_size, HEX_PARAMS, HEX_PARAMS,
		 (unsigned long long)fsize(tpath("ollama/blobs/sha256-%s", HEX_PARAMS)),
		 proj ? ",{\"mediaType\":\"application/vnd.ollama.image.projector\",\"digest\":\"sha256:" : "",
		 proj ? HEX_PROJ : "", proj ? "\",\"size\":1000}" : "");
	write_text(mp, text);
}

static uint64_t model_bytes; /* tensor bytes of the good blob */
static uint64_t blob_size;

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make("store"))
		return -1;
	setenv("HOME", tpath("home"), 1);
	setenv("OLLAMA_MODELS", tpath("ollama"), 1);
	setenv("HF_HUB_CACHE", tpath("hf"), 1);
	unsetenv("HF_HOME");
	mkdirs(tpath("ollama/blobs"));
	mkdirs(tpath("home"));
	blob_size = write_gguf(tpath("ollama/blobs/sha256-%s", HEX_MODEL), 0, &model_bytes);
	write_text(tpath("ollama/blobs/sha256-%s", HEX_PARAMS), "{\"num_ctx\": 8192, \"num_gpu\": 1, \"stop\": [\"<|eot|>\"]}");
	FILE *f = fopen(tpath("ollama/blobs/sha256-%s", HEX_PROJ), "wb");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), 1000), 0);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kb_release_all();
	return tmpdir_remove();
}

static void expect_fail(int rc, const gw_error *err, const char *want)
{
	assert_true(rc < 0);
	if (!strstr(err->msg, want))
		print_error("message '%s' lacks '%s'\n", err->msg, want);
	assert_non_null(strstr(err->msg, want));
}

/* ---- Ollama ------------------------------------------------------------- */

static void test_ollama(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	write_manifest("registry.ollama.ai/library/tiny/q8", HEX_MODEL, blob_size, true);
	write_manifest("registry.ollama.ai/library/tiny/latest", HEX_MODEL, blob_size, false);
	write_manifest("registry.ollama.ai/someone/tiny/q8", HEX_MODEL, blob_size, false);
	write_manifest("hf.co/org/tiny-GGUF/Q8_0", HEX_MODEL, blob_size, false);

	assert_int_equal(model_load("tiny:q8", NULL, &m, &err), 0);
	assert_int_equal(m.source, MODEL_SRC_GGUF);
	assert_int_equal(m.origin.store, MODEL_STORE_OLLAMA);
	assert_string_equal(m.name, "tiny:q8");
	assert_string_equal(m.origin.ref, "tiny:q8");
	assert_true(m.has_tensors);
	assert_int_equal(m.total_bytes, model_bytes); /* the blob's own tensor bytes */
	assert_int_equal(m.origin.file_bytes, blob_size);
	assert_int_equal(m.origin.num_ctx, 8192);
	assert_true(m.origin.has_num_gpu);
	assert_int_equal(m.origin.num_gpu, 1);
	assert_non_null(m.origin.projector);
	assert_int_equal(m.origin.projector_bytes, 1000);
	assert_string_equal(m.origin.revision, "sha256:4444444444444444444444444444444444444444444444444444444444444444");
	assert_non_null(strstr(m.path, "blobs/sha256-1111"));
	model_release(&m);

	/* no tag: latest; a user namespace; another host */
	assert_int_equal(model_load("tiny", NULL, &m, &err), 0);
	assert_string_equal(m.origin.ref, "tiny:latest");
	assert_null(m.origin.projector);
	model_release(&m);
	assert_int_equal(model_load("someone/tiny:q8", NULL, &m, &err), 0);
	assert_string_equal(m.origin.ref, "registry.ollama.ai/someone/tiny:q8");
	model_release(&m);
	assert_int_equal(model_load("hf.co/org/tiny-GGUF:Q8_0", NULL, &m, &err), 0);
	assert_int_equal(m.origin.store, MODEL_STORE_OLLAMA);
	assert_int_equal(m.total_bytes, model_bytes);
	model_release(&m);

	/* a catalog alias the user has pulled: the store answers, not the catalog */
	const model_spec *s = kb_model_find("llama3.1:8b");
	assert_non_null(s);
	write_manifest("registry.ollama.ai/library/llama3.1/8b", HEX_MODEL, blob_size, false);
	assert_int_equal(model_load("llama3.1:8b", NULL, &m, &err), 0);
	assert_int_equal(m.origin.store, MODEL_STORE_OLLAMA);
	assert_int_equal(m.n_layers, 2);
	model_release(&m);
	assert_int_equal(model_load("llama3.1:70b", NULL, &m, &err), 0);
	assert_int_equal(m.origin.store, MODEL_STORE_CATALOG);
	assert_false(m.origin.has_num_gpu);
	assert_int_equal(m.origin.num_ctx, 0);
	model_release(&m);

	/* hostile names never leave the store */
	assert_int_not_equal(model_load("../../etc/passwd:x", NULL, &m, &err), 0);
	assert_int_not_equal(model_load("tiny:../../q8", NULL, &m, &err), 0);
}

static void test_ollama_broken(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	/* a manifest naming a blob that is not there */
	write_manifest("registry.ollama.ai/library/gone/1b", "9999999999999999999999999999999999999999999999999999999999999999",
		       5000, false);
	expect_fail(model_load("gone:1b", NULL, &m, &err), &err, "which is missing (pull it again: ollama pull gone:1b)");
	assert_int_equal(err.code, GW_ENOENT);

	/* the blob is not the size its manifest says (an interrupted pull) */
	write_manifest("registry.ollama.ai/library/short/1b", HEX_MODEL, blob_size + 100, false);
	expect_fail(model_load("short:1b", NULL, &m, &err), &err, "its manifest says");

	/* a GGUF blob whose header claims more tensor data than it holds */
	static const char hex[] = "5555555555555555555555555555555555555555555555555555555555555555";
	uint64_t sz = write_gguf(tpath("ollama/blobs/sha256-%s", hex), 4096, NULL);
	write_manifest("registry.ollama.ai/library/liar/1b", hex, sz, false);
	expect_fail(model_load("liar:1b", NULL, &m, &err), &err, "truncated");

	/* a digest that is not sha256:HEX */
	write_manifest("registry.ollama.ai/library/odd/1b", "../../../x", 10, false);
	expect_fail(model_load("odd:1b", NULL, &m, &err), &err, "is not sha256:HEX");

	/* a manifest that is not JSON */
	mkdirs(tpath("ollama/manifests/registry.ollama.ai/library/junk"));
	write_text(tpath("ollama/manifests/registry.ollama.ai/library/junk/1b"), "not json");
	expect_fail(model_load("junk:1b", NULL, &m, &err), &err, "not a JSON object");
}

/* ---- Hugging Face cache ------------------------------------------------- */

static void write_st(const char *path, const char *json, uint64_t data_len)
{
	size_t n = strlen(json);
	uint8_t len8[8];
	for (int i = 0; i < 8; i++)
		len8[i] = (uint8_t)((uint64_t)n >> (8 * i));
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(len8, 1, 8, f);
	fwrite(json, 1, n, f);
	fflush(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)(8 + n + data_len)), 0);
	fclose(f);
}

static void test_hf_cache(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	const char *rev = "0123456789abcdef0123456789abcdef01234567";
	mkdirs(tpath("hf/models--org--tiny/blobs"));
	mkdirs(tpath("hf/models--org--tiny/refs"));
	mkdirs(tpath("hf/models--org--tiny/snapshots/%s", rev));
	write_text(tpath("hf/models--org--tiny/refs/main"), "0123456789abcdef0123456789abcdef01234567");
	write_text(tpath("hf/models--org--tiny/blobs/cfg"),
		   "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2,"
		   " \"num_hidden_layers\": 2, \"intermediate_size\": 128, \"vocab_size\": 256,"
		   " \"max_position_embeddings\": 4096, \"tie_word_embeddings\": false}");
	/* embed 256x64 + 2 x (q 64x64, k 32x64, v 32x64) + lm_head 256x64, BF16 */
	write_st(tpath("hf/models--org--tiny/blobs/st"),
		 "{\"model.embed_tokens.weight\":{\"dtype\":\"BF16\",\"shape\":[256,64],\"data_offsets\":[0,32768]},"
		 "\"model.layers.0.self_attn.q_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[64,64],\"data_offsets\":[32768,40960]},"
		 "\"model.layers.1.self_attn.q_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[64,64],\"data_offsets\":[40960,49152]},"
		 "\"lm_head.weight\":{\"dtype\":\"BF16\",\"shape\":[256,64],\"data_offsets\":[49152,81920]}}",
		 81920);
	assert_int_equal(symlink("../../blobs/cfg", tpath("hf/models--org--tiny/snapshots/%s/config.json", rev)), 0);
	assert_int_equal(symlink("../../blobs/st", tpath("hf/models--org--tiny/snapshots/%s/model.safetensors", rev)), 0);

	assert_int_equal(model_load("org/tiny", NULL, &m, &err), 0);
	assert_int_equal(m.source, MODEL_SRC_SAFETENSORS);
	assert_int_equal(m.origin.store, MODEL_STORE_HF_CACHE);
	assert_string_equal(m.origin.ref, "org/tiny");
	assert_string_equal(m.origin.revision, rev);
	assert_int_equal(m.total_bytes, 81920);
	assert_int_equal(m.n_layers, 2);
	model_release(&m);
	/* Ollama's spelling of a Hub name finds the cache too */
	assert_int_equal(model_load("hf.co/org/tiny", NULL, &m, &err), 0);
	assert_int_equal(m.origin.store, MODEL_STORE_HF_CACHE);
	model_release(&m);

	/* refs/main naming a snapshot that is not there */
	mkdirs(tpath("hf/models--org--stale/refs"));
	mkdirs(tpath("hf/models--org--stale/snapshots"));
	write_text(tpath("hf/models--org--stale/refs/main"), "deadbeef\n");
	expect_fail(model_load("org/stale", NULL, &m, &err), &err, "points to snapshot 'deadbeef', which is missing");
	/* a snapshot whose safetensors link points at a blob that is gone */
	mkdirs(tpath("hf/models--org--dangling/refs"));
	mkdirs(tpath("hf/models--org--dangling/snapshots/r1"));
	write_text(tpath("hf/models--org--dangling/refs/main"), "r1");
	assert_int_equal(symlink("../../../models--org--tiny/blobs/cfg", tpath("hf/models--org--dangling/snapshots/r1/config.json")), 0);
	assert_int_equal(symlink("../../blobs/nothing", tpath("hf/models--org--dangling/snapshots/r1/model.safetensors")), 0);
	expect_fail(model_load("org/dangling", NULL, &m, &err), &err, "model.safetensors");

	/* a GGUF repo with two quants: name one */
	const char *gs = "hf/models--org--tiny-GGUF/snapshots/r2";
	mkdirs(tpath("%s", gs));
	mkdirs(tpath("hf/models--org--tiny-GGUF/refs"));
	write_text(tpath("hf/models--org--tiny-GGUF/refs/main"), "r2");
	uint64_t tb;
	uint64_t sz = write_gguf(tpath("%s/tiny-Q8_0.gguf", gs), 0, &tb);
	write_gguf(tpath("%s/tiny-Q4_K_M.gguf", gs), 0, NULL);
	write_gguf(tpath("%s/mmproj-tiny-f16.gguf", gs), 0, NULL);
	expect_fail(model_load("org/tiny-GGUF", NULL, &m, &err), &err, "has 2 GGUF files");
	assert_int_equal(model_load("org/tiny-GGUF:q8_0", NULL, &m, &err), 0);
	assert_int_equal(m.origin.store, MODEL_STORE_HF_CACHE);
	assert_non_null(strstr(m.path, "tiny-Q8_0.gguf"));
	assert_int_equal(m.total_bytes, tb);
	assert_int_equal(m.origin.file_bytes, sz);
	assert_non_null(m.origin.projector);
	model_release(&m);
	expect_fail(model_load("org/tiny-GGUF:Q2_K", NULL, &m, &err), &err, "no GGUF file for 'Q2_K'");
}

/* ---- LM Studio and the listing ----------------------------------------- */

static void test_lmstudio_and_list(void **state)
{
	(void)state;
	model_desc m;
	gw_error err = {0};
	mkdirs(tpath("home/.lmstudio/models/pub/tiny-GGUF"));
	uint64_t tb;
	uint64_t sz = write_gguf(tpath("home/.lmstudio/models/pub/tiny-GGUF/tiny-Q8_0.gguf"), 0, &tb);
	assert_int_equal(model_load("pub/tiny-GGUF", NULL, &m, &err), 0);
	assert_int_equal(m.origin.store, MODEL_STORE_LMSTUDIO);
	assert_int_equal(m.total_bytes, tb);
	assert_int_equal(m.origin.file_bytes, sz);
	model_release(&m);
	/* the older folder */
	mkdirs(tpath("home/.cache/lm-studio/models/old/m"));
	write_gguf(tpath("home/.cache/lm-studio/models/old/m/m.gguf"), 0, NULL);
	assert_int_equal(model_load("old/m", NULL, &m, &err), 0);
	assert_int_equal(m.origin.store, MODEL_STORE_LMSTUDIO);
	model_release(&m);
	/* a name no store has and the catalog lacks */
	expect_fail(model_load("nobody/nothing", NULL, &m, &err), &err, "unknown model 'nobody/nothing'");

	model_installed *v;
	size_t n;
	assert_int_equal(model_store_list(&v, &n), 0);
	bool seen_ollama = false, seen_hf = false, seen_lms = false, seen_gone = false;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].name, "tiny:q8")) {
			seen_ollama = true;
			assert_int_equal(v[i].store, MODEL_STORE_OLLAMA);
			assert_int_equal(v[i].bytes, blob_size + 1000); /* model + projector */
		}
		if (!strcmp(v[i].name, "org/tiny")) {
			seen_hf = true;
			assert_int_equal(v[i].bytes, fsize(tpath("hf/models--org--tiny/blobs/st")) +
							 fsize(tpath("hf/models--org--tiny/blobs/cfg")));
		}
		if (!strcmp(v[i].name, "pub/tiny-GGUF")) {
			seen_lms = true;
			assert_int_equal(v[i].bytes, sz);
		}
		if (!strcmp(v[i].name, "gone:1b")) {
			seen_gone = true;
			assert_null(v[i].path);
		}
		if (i)
			assert_true(v[i - 1].store <= v[i].store);
	}
	assert_true(seen_ollama && seen_hf && seen_lms && seen_gone);
	model_installed_free(v, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ollama),
		cmocka_unit_test(test_ollama_broken),
		cmocka_unit_test(test_hf_cache),
		cmocka_unit_test(test_lmstudio_and_list),
	};
	return cmocka_run_group_tests_name("store", tests, setup, teardown);
}

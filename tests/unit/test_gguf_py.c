/*
 * Cross-check with an independent GGUF writer: the `gguf` package from
 * PyPI (tests/tools/gguf_py_write.py) writes real files and prints the
 * numbers our reader must find.  Skipped, with a '# skip' line naming the
 * reason, when python3 or the package is missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/model.h"
#include "tmpdir.h"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("ggufpy");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

/* Run the python writer; NULL (after a skip) when it cannot run. */
static json_t *py_write(const char *path, const char *arch)
{
	const char *top = getenv("GW_TOP");
	char cmd[1024], out[65536];
	snprintf(cmd, sizeof cmd, "python3 '%s/tests/tools/gguf_py_write.py' '%s' '%s' 2>&1", top && *top ? top : ".",
		 path, arch);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	if (WIFEXITED(st) && (WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 127)) {
		out[strcspn(out, "\n")] = '\0';
		print_message("# skip: independent GGUF writer unavailable (%s)\n", *out ? out : "no python3");
		return NULL;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("python writer failed: %s", out);
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	if (!j)
		fail_msg("bad JSON from the python writer: %s", out);
	return j;
}

static uint64_t ju(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	assert_true(json_is_integer(v));
	return (uint64_t)json_integer_value(v);
}

static void check_arch(const char *arch)
{
	char path[400];
	snprintf(path, sizeof path, "%s/%s.gguf", tmpdir, arch);
	json_t *e = py_write(path, arch);
	if (!e)
		return; /* reported by py_write; cmocka's skip() reads as "not ok" in TAP */
	model_desc m;
	gw_error err = {0};
	if (gguf_read(path, &m, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(m.arch, arch);
	assert_string_equal(m.name, json_string_value(json_object_get(e, "name")));
	assert_string_equal(m.file_type, "Q4_K_M");
	assert_int_equal(m.n_layers, ju(e, "layers"));
	assert_int_equal(m.hidden, ju(e, "hidden"));
	assert_int_equal(m.n_heads, ju(e, "heads"));
	assert_int_equal(m.n_kv_heads, ju(e, "kv_heads"));
	assert_int_equal(m.head_dim_k, ju(e, "head_dim"));
	assert_int_equal(m.head_dim_v, ju(e, "head_dim"));
	assert_int_equal(m.ffn, ju(e, "ffn"));
	assert_int_equal(m.vocab, ju(e, "vocab"));
	assert_int_equal(m.ctx_train, ju(e, "ctx"));
	assert_int_equal(m.n_experts, ju(e, "experts"));
	assert_int_equal(m.n_experts_used, ju(e, "experts_used"));
	assert_int_equal(m.embd_bytes, ju(e, "embd_bytes"));
	assert_int_equal(m.output_bytes, ju(e, "output_bytes"));
	assert_int_equal(m.other_bytes, ju(e, "other_bytes"));
	assert_int_equal(m.total_bytes, ju(e, "total_bytes"));
	assert_int_equal(m.n_tensors, ju(e, "n_tensors"));
	assert_true(m.params_total == (double)ju(e, "params"));
	json_t *lb = json_object_get(e, "layer_bytes"), *xb = json_object_get(e, "expert_bytes");
	for (uint32_t i = 0; i < m.n_layers; i++) {
		assert_int_equal(m.layer_bytes[i], (uint64_t)json_integer_value(json_array_get(lb, i)));
		assert_int_equal(m.layer_expert_bytes[i], (uint64_t)json_integer_value(json_array_get(xb, i)));
	}
	assert_int_equal(m.swa_window, ju(e, "swa_window"));
	json_t *swa = json_object_get(e, "swa");
	if (json_array_size(swa)) {
		assert_non_null(m.layer_swa);
		for (uint32_t i = 0; i < m.n_layers; i++)
			assert_int_equal(m.layer_swa[i], json_is_true(json_array_get(swa, i)));
	} else {
		assert_null(m.layer_swa);
	}
	model_release(&m);

	/* a truncated copy is refused, naming the file */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size / 2), 0);
	assert_int_equal(gguf_read(path, &m, &err), GW_ETRUNC);
	assert_non_null(strstr(err.msg, "truncated"));
	assert_non_null(strstr(err.msg, path));
	json_decref(e);
}

static void test_py_qwen3(void **state)
{
	(void)state;
	check_arch("qwen3");
}

static void test_py_gemma3(void **state)
{
	(void)state;
	check_arch("gemma3");
}

static void test_py_moe(void **state)
{
	(void)state;
	check_arch("qwen3moe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_py_qwen3),
		cmocka_unit_test(test_py_gemma3),
		cmocka_unit_test(test_py_moe),
	};
	return cmocka_run_group_tests_name("gguf-py", tests, setup, teardown);
}

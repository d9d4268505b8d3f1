/*
 * Unit tests for stack/: toolkits (version.json, nvcc --version, PATH
 * order, CUDA_HOME), cuDNN/NCCL through ld.so.conf and pip wheels, Python
 * environments with torch/version.py, the interpreter probe and the
 * libtorch_cuda.so fallback, all against tests/fixtures/roots/doctor-toolkits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"

static char *fixture(void)
{
	const char *top = getenv("GW_TOP");
	return xasprintf("%s/tests/fixtures/roots/doctor-toolkits", top && *top ? top : ".");
}

static void set_env(void)
{
	setenv("PATH", "/usr/local/cuda-11.8/bin:/usr/local/cuda-12.8/bin:/usr/bin", 1);
	setenv("CUDA_HOME", "/usr/local/cuda-12.8", 1);
	unsetenv("CUDA_PATH");
	unsetenv("LD_LIBRARY_PATH");
	unsetenv("VIRTUAL_ENV");
	unsetenv("CONDA_PREFIX");
	setenv("HOME", "/nonexistent-home", 1);
}

static const stack_toolkit *tk(const stack_info *s, const char *root)
{
	for (size_t i = 0; i < s->n_toolkits; i++)
		if (strcmp(s->toolkits[i].root, root) == 0)
			return &s->toolkits[i];
	return NULL;
}

static void test_toolkits(void **state)
{
	(void)state;
	char *root = fixture();
	gw_set_root(root);
	set_env();
	stack_info s;
	stack_opts o = {0};
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	/* cuda, cuda-11.8, cuda-12.8: the symlink folds into cuda-12.8 */
	assert_int_equal(s.n_toolkits, 3); /* + /opt/cuda-11.0 (version.txt only) */
	const stack_toolkit *a = tk(&s, "/usr/local/cuda-11.8"), *b = tk(&s, "/usr/local/cuda-12.8");
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a->version, "11.8.89");
	assert_string_equal(a->version_from, "nvcc --version");
	assert_int_equal(a->path_rank, 0);
	assert_false(a->is_cuda_home);
	assert_string_equal(b->version, "12.8.93");
	assert_string_equal(b->version_from, "version.json");
	assert_int_equal(b->path_rank, 1);
	assert_true(b->is_cuda_home);
	stack_release(&s);

	/* without running programs, the nvcc-only toolkit has no version */
	o.no_exec = true;
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	a = tk(&s, "/usr/local/cuda-11.8");
	assert_non_null(a);
	assert_string_equal(a->version, "");
	stack_release(&s);
	gw_set_root(NULL);
	free(root);
}

static void test_libs(void **state)
{
	(void)state;
	char *root = fixture();
	gw_set_root(root);
	set_env();
	stack_info s;
	stack_opts o = {.no_exec = true};
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	const stack_lib *c = stack_find_lib(&s, "cudnn"), *n = stack_find_lib(&s, "nccl");
	assert_non_null(c);
	assert_string_equal(c->path, "/usr/local/cuda-12.8/lib64/libcudnn.so.9.1.0");
	assert_string_equal(c->version, "9.1.0");
	assert_string_equal(c->how, "ld.so.conf");
	assert_non_null(n);
	assert_string_equal(n->version, "2.21.5");
	assert_string_equal(n->how, "system library directory");
	/* the pip wheel is listed too, with the wheel's version */
	bool wheel = false;
	for (size_t i = 0; i < s.n_libs; i++)
		if (strcmp(s.libs[i].how, "pip nvidia-cudnn-cu12") == 0 && strcmp(s.libs[i].version, "9.1.0.70") == 0)
			wheel = true;
	assert_true(wheel);
	stack_release(&s);

	/* LD_LIBRARY_PATH comes first */
	setenv("LD_LIBRARY_PATH", "/usr/lib/python3/dist-packages/nvidia/cudnn/lib", 1);
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	c = stack_find_lib(&s, "cudnn");
	assert_string_equal(c->how, "LD_LIBRARY_PATH");
	/* libcudnn.so.9 alone: the full version comes from the wheel's cudnn_version.h */
	assert_string_equal(c->version, "9.1.0");
	stack_release(&s);
	unsetenv("LD_LIBRARY_PATH");
	gw_set_root(NULL);
	free(root);
}

static void test_python(void **state)
{
	(void)state;
	char *root = fixture();
	gw_set_root(root);
	set_env();
	stack_info s;
	stack_opts o = {0};
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	assert_int_equal(s.n_pythons, 1);
	const stack_python *p = &s.pythons[0];
	assert_string_equal(p->exe, "/usr/bin/python3");
	assert_string_equal(p->how, "PATH python3");
	assert_true(p->has_torch);
	assert_string_equal(p->torch_version, "2.5.1+cu124");
	assert_string_equal(p->torch_cuda, "12.4");
	assert_string_equal(p->torch_hip, "");
	assert_string_equal(p->arch_from, "python");
	assert_string_equal(p->arch_list, "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
	bool bnb = false, fa = false, np = false;
	for (size_t i = 0; i < p->n_pkgs; i++) {
		bnb |= strcmp(p->pkgs[i].name, "bitsandbytes") == 0 && strcmp(p->pkgs[i].version, "0.43.1") == 0;
		fa |= strcmp(p->pkgs[i].name, "flash-attn") == 0 && strcmp(p->pkgs[i].version, "2.6.3") == 0;
		np |= strcmp(p->pkgs[i].name, "numpy") == 0;
	}
	assert_true(bnb);
	assert_true(fa);
	assert_false(np);
	stack_release(&s);

	/* no interpreter run: the arch list comes from libtorch_cuda.so */
	o.no_exec = true;
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	assert_string_equal(s.pythons[0].arch_from, "libtorch_cuda.so");
	assert_string_equal(s.pythons[0].arch_list, "sm_50 sm_60 sm_70 compute_90");
	stack_release(&s);
	gw_set_root(NULL);
	free(root);
}

static void test_version_py(void **state)
{
	(void)state;
	stack_python p;
	memset(&p, 0, sizeof p);
	stack_parse_torch_version("__version__ = '2.7.1+cpu'\ndebug = False\ncuda: Optional[str] = None\n"
				  "hip: Optional[str] = None\n", &p);
	assert_string_equal(p.torch_version, "2.7.1+cpu");
	assert_string_equal(p.torch_cuda, "");
	memset(&p, 0, sizeof p);
	stack_parse_torch_version("__version__ = \"2.4.0+rocm6.1\"\ncuda = None\nhip = '6.1.40091'\n", &p);
	assert_string_equal(p.torch_hip, "6.1.40091");
}

static void test_run_timeout(void **state)
{
	(void)state;
	char *argv[] = {"/bin/sh", "-c", "echo hi; sleep 5", NULL};
	char *out;
	int st;
	gw_error err;
	assert_int_equal(stack_run(argv, 300, &out, &st, &err), GW_ETIMEOUT);
	assert_string_equal(out, "hi\n");
	assert_int_equal(st, -1);
	free(out);
	char *argv2[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 7", NULL};
	assert_int_equal(stack_run(argv2, 5000, &out, &st, &err), 0);
	assert_int_equal(st, 7);
	assert_non_null(strstr(out, "err"));
	free(out);
	char *argv3[] = {"/nonexistent/python", NULL};
	assert_int_not_equal(stack_run(argv3, 5000, &out, &st, &err), 0);
	free(out);
}


static void test_more_toolkits(void **state)
{
	(void)state;
	char *root = fixture();
	gw_set_root(root);
	set_env();
	setenv("HOME", "/home/u", 1);
	stack_info s;
	stack_opts o = {0};
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	assert_int_equal(s.n_toolkits, 4);
	const stack_toolkit *a = tk(&s, "/opt/cuda-11.0"), *b = tk(&s, "/home/u/miniconda3/envs/ml");
	assert_non_null(a);
	assert_string_equal(a->version, "11.0.228");
	assert_string_equal(a->version_from, "version.txt");
	assert_string_equal(a->nvcc, "");
	assert_non_null(b);
	assert_string_equal(b->how, "conda env");
	assert_string_equal(b->version, "12.1.105");
	assert_int_equal(b->path_rank, -1);
	stack_release(&s);
	/* CONDA_PREFIX names the env directly */
	setenv("HOME", "/nonexistent-home", 1);
	setenv("CONDA_PREFIX", "/home/u/miniconda3/envs/ml", 1);
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	b = tk(&s, "/home/u/miniconda3/envs/ml");
	assert_non_null(b);
	assert_string_equal(b->how, "CONDA_PREFIX");
	stack_release(&s);
	unsetenv("CONDA_PREFIX");
	gw_set_root(NULL);
	free(root);
}

/* A wrapper script on PATH belongs to the toolkit it execs, not to its own tree. */
static void test_nvcc_wrapper(void **state)
{
	(void)state;
	char *root = fixture();
	gw_set_root(root);
	set_env();
	setenv("PATH", "/opt/wrap/bin:/usr/local/cuda-11.8/bin:/usr/bin", 1);
	stack_info s;
	stack_opts o = {.no_exec = true};
	assert_int_equal(stack_discover(&o, &s, NULL), 0);
	assert_null(tk(&s, "/opt/wrap"));
	const stack_toolkit *t = tk(&s, "/usr/local/cuda-12.8");
	assert_non_null(t);
	assert_int_equal(t->path_rank, 0);
	const stack_toolkit *old = tk(&s, "/usr/local/cuda-11.8");
	assert_non_null(old);
	assert_int_equal(old->path_rank, 1);
	stack_release(&s);
	gw_set_root(NULL);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toolkits),
		cmocka_unit_test(test_libs),
		cmocka_unit_test(test_python),
		cmocka_unit_test(test_version_py),
		cmocka_unit_test(test_run_timeout),
		cmocka_unit_test(test_more_toolkits),
		cmocka_unit_test(test_nvcc_wrapper),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

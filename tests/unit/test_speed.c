/*
 * Unit tests for plan/speed.c's entry points: backend names and defaults,
 * vendor checks, architecture families from the catalog, the weight-format
 * kernel families, the data/speed.tsv lookup with its fallbacks, and the
 * CPU backend.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "kb/kb.h"
#include "plan/speed.h"

static void test_backend_names(void **state)
{
	(void)state;
	plan_backend b;
	assert_int_equal(plan_backend_parse("cuda", &b), 0);
	assert_int_equal(b, PLAN_BACKEND_CUDA);
	assert_int_equal(plan_backend_parse("HIP", &b), 0);
	assert_int_equal(b, PLAN_BACKEND_ROCM);
	assert_int_equal(plan_backend_parse("vulkan", &b), 0);
	assert_string_equal(plan_backend_name(b), "vulkan");
	assert_int_equal(plan_backend_parse("opencl", &b), GW_EINVAL);
	assert_int_equal(plan_backend_parse("auto", &b), GW_EINVAL);
	assert_int_equal(plan_backend_parse(NULL, &b), GW_EINVAL);
}

static void test_defaults_and_checks(void **state)
{
	(void)state;
	const gpu_spec *nv = kb_gpu_find("rtx-4090"), *amd = kb_gpu_find("rx-7900-xtx"),
		       *apple = kb_gpu_find("m3-max"), *intel = kb_gpu_find("arc-b580");
	assert_non_null(nv);
	assert_non_null(amd);
	assert_non_null(apple);
	assert_non_null(intel);
	assert_int_equal(plan_backend_default(nv, false), PLAN_BACKEND_CUDA);
	assert_int_equal(plan_backend_default(amd, false), PLAN_BACKEND_ROCM);
	assert_int_equal(plan_backend_default(apple, true), PLAN_BACKEND_METAL);
	assert_int_equal(plan_backend_default(intel, false), PLAN_BACKEND_SYCL);
	gw_error err = {0};
	assert_int_equal(plan_backend_check(PLAN_BACKEND_ROCM, nv, false, &err), GW_EINVAL);
	assert_non_null(strstr(err.msg, "needs an AMD GPU"));
	assert_int_equal(plan_backend_check(PLAN_BACKEND_VULKAN, amd, false, NULL), 0);
	assert_int_equal(plan_backend_check(PLAN_BACKEND_METAL, apple, true, NULL), 0);
	assert_int_equal(plan_backend_check(PLAN_BACKEND_CUDA, apple, true, NULL), GW_EINVAL);
	assert_int_equal(plan_backend_check(PLAN_BACKEND_CPU, nv, false, NULL), 0);
}

static void test_families(void **state)
{
	(void)state;
	assert_string_equal(plan_speed_family(kb_gpu_find("rtx-5090"), false), "blackwell");
	assert_string_equal(plan_speed_family(kb_gpu_find("rtx-4090"), false), "ada");
	assert_string_equal(plan_speed_family(kb_gpu_find("rtx-3090"), false), "ampere");
	assert_string_equal(plan_speed_family(kb_gpu_find("a100-80g-sxm"), false), "ampere-hpc");
	assert_string_equal(plan_speed_family(kb_gpu_find("h100-sxm"), false), "hopper");
	assert_string_equal(plan_speed_family(kb_gpu_find("v100"), false), "volta");
	assert_string_equal(plan_speed_family(kb_gpu_find("tesla-p40"), false), "pascal");
	assert_string_equal(plan_speed_family(kb_gpu_find("rx-7900-xtx"), false), "rdna3");
	assert_string_equal(plan_speed_family(kb_gpu_find("rx-9070-xt"), false), "rdna4");
	assert_string_equal(plan_speed_family(kb_gpu_find("mi300x"), false), "cdna3");
	assert_string_equal(plan_speed_family(kb_gpu_find("m2-ultra"), true), "apple");
	assert_string_equal(plan_speed_family(kb_gpu_find("arc-b580"), false), "xe");
	assert_string_equal(plan_speed_family(NULL, false), "*");
}

static void test_kernels(void **state)
{
	(void)state;
	assert_string_equal(plan_speed_kernel("Q4_0"), "legacy");
	assert_string_equal(plan_speed_kernel("q8_0"), "legacy");
	assert_string_equal(plan_speed_kernel("Q5_1"), "legacy");
	assert_string_equal(plan_speed_kernel("Q4_K_M"), "kq");
	assert_string_equal(plan_speed_kernel("IQ4_XS"), "kq");
	assert_string_equal(plan_speed_kernel("MXFP4_MOE"), "mxfp4");
	assert_string_equal(plan_speed_kernel("F16"), "f16");
	assert_string_equal(plan_speed_kernel("BF16"), "f16");
	assert_string_equal(plan_speed_kernel(""), "kq");
}

static void test_rows(void **state)
{
	(void)state;
	plan_speed_row r;
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_CUDA, "ada", &r), 0);
	assert_string_equal(r.family, "ada");
	assert_false(r.legacy);
	assert_true(r.bw_legacy > 0.5 && r.bw_legacy <= 1.0);
	assert_string_equal(r.pp_q_rate, "int8");
	assert_non_null(r.source);
	assert_true(*r.source);
	/* a -pro family without its own row takes its stem's */
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_VULKAN, "ada-pro", &r), 0);
	assert_string_equal(r.family, "ada");
	/* GB10's own row on CUDA; on Vulkan, without one, its stem's */
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_CUDA, "blackwell-soc", &r), 0);
	assert_string_equal(r.family, "blackwell-soc");
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_VULKAN, "blackwell-soc", &r), 0);
	assert_string_equal(r.family, "blackwell");
	/* an unknown family falls back to the backend's "*" row */
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_ROCM, "no-such", &r), 0);
	assert_string_equal(r.family, "*");
	/* b2824: the 2024 closed form, 0.10 ms per block on CUDA, 0.40 on Metal */
	assert_int_equal(plan_speed_row_find("b2824", PLAN_BACKEND_CUDA, "ada", &r), 0);
	assert_true(r.legacy);
	assert_true(r.layer_us == 100 && r.bw_kq == 0.92 && r.bw_ceil_gbs == 1200 && r.pp_q_eff == 0.55);
	assert_int_equal(plan_speed_row_find("b2824", PLAN_BACKEND_METAL, "apple", &r), 0);
	assert_true(r.layer_us == 400);
	assert_int_equal(plan_speed_row_find("b1", PLAN_BACKEND_CUDA, "ada", &r), GW_ENOENT);
	/* found again from the lookup cache: the same row, and a miss stays a miss */
	plan_speed_row a, b;
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_METAL, "apple", &a), 0);
	for (int i = 0; i < 20; i++) /* more lookups than the cache holds */
		assert_int_equal(plan_speed_row_find("latest", i % 2 ? PLAN_BACKEND_CUDA : PLAN_BACKEND_ROCM,
						     i % 3 ? "ada" : "rdna3", &b), 0);
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_METAL, "apple", &b), 0);
	assert_memory_equal(&a, &b, sizeof a);
	assert_int_equal(plan_speed_row_find("latest", PLAN_BACKEND_VULKAN, "ampere", &b), 0);
	assert_string_equal(b.family, "ampere");
	assert_int_equal(plan_speed_row_find("b1", PLAN_BACKEND_CUDA, "ada", &r), GW_ENOENT);
}

static void test_cpu(void **state)
{
	(void)state;
	double dec = 0, pre = 0;
	/* 4.7 GB per token from 100 GB/s: bandwidth bound, well under 100/4.7 tok/s */
	assert_int_equal(plan_speed_cpu("latest", "Q4_K_M", 32, 4.7e9, 16e9, 100, 16, &dec, &pre), 0);
	assert_true(dec > 5 && dec < 100 / 4.7);
	assert_true(pre > 0);
	double dec2 = 0, pre2 = 0;
	assert_int_equal(plan_speed_cpu("latest", "Q4_K_M", 32, 4.7e9, 16e9, 200, 32, &dec2, &pre2), 0);
	assert_true(dec2 > dec * 1.5); /* twice the bandwidth: nearly twice the decode */
	assert_true(pre2 > pre * 1.9);  /* twice the threads: twice the prefill */
	assert_int_equal(plan_speed_cpu("b1", "Q4_K_M", 32, 4.7e9, 16e9, 100, 16, &dec, &pre), GW_ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backend_names), cmocka_unit_test(test_defaults_and_checks),
		cmocka_unit_test(test_families),      cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_rows),          cmocka_unit_test(test_cpu),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	kb_release_all();
	return rc;
}

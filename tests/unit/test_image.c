/*
 * Unit tests for plan/image: the must-show cases (SDXL at 1024x1024 on 16
 * and 24 GB cards, FLUX.1-dev at fp16 on 16 GB), the options' directions,
 * and the speed calibrations the table cites.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "kb/kb.h"
#include "plan/image.h"

static void test_sdxl_16_and_24(void **state)
{
	(void)state;
	image_model m;
	assert_int_equal(image_model_find("sdxl", &m, NULL), 0);
	/* the figures checked here come from cited rows */
	assert_non_null(strstr(m.source, "stable-diffusion-webui#13341"));
	image_opts o;
	image_opts_init(&o);
	o.width = o.height = 1024;
	image_plan p;
	assert_int_equal(image_plan_compute(&m, &o, 16 * GiB, &p, NULL), 0);
	assert_true(p.fits);
	assert_true(p.little_headroom);
	image_plan_release(&p);
	assert_int_equal(image_plan_compute(&m, &o, 24 * GiB, &p, NULL), 0);
	assert_true(p.fits);
	assert_false(p.little_headroom);
	/* the fp32 decode of SDXL's VAE is the peak, as the A1111 report says (>12 GB) */
	assert_true(p.bd.vae_decode > p.bd.activations);
	assert_true(p.bd.total > 12e9);
	image_plan_release(&p);
}

static void test_flux_16(void **state)
{
	(void)state;
	image_model m;
	assert_int_equal(image_model_find("black-forest-labs/FLUX.1-dev", &m, NULL), 0);
	assert_non_null(strstr(m.source, "diffusers/benchmarks"));
	image_opts o;
	image_opts_init(&o);
	o.width = o.height = 1024;
	image_plan p;
	assert_int_equal(image_plan_compute(&m, &o, 16 * GiB, &p, NULL), 0);
	assert_false(p.fits);
	assert_true(p.n_advice >= 1);
	assert_true(p.advice[p.n_advice - 1].fits_after);
	assert_non_null(strstr(p.advice[0].action, "fp8"));
	image_plan_release(&p);

	/* offloading the text encoders alone is not enough at fp16 ... */
	o.offload = IMAGE_OFFLOAD_TEXT_ENCODERS;
	assert_int_equal(image_plan_compute(&m, &o, 16 * GiB, &p, NULL), 0);
	assert_false(p.fits);
	image_plan_release(&p);
	/* ... fp8 with it fits, and so does sequential offload at fp16 */
	o.quant = "fp8";
	assert_int_equal(image_plan_compute(&m, &o, 16 * GiB, &p, NULL), 0);
	assert_true(p.fits);
	image_plan_release(&p);
	o.quant = "fp16";
	o.offload = IMAGE_OFFLOAD_SEQUENTIAL;
	o.gpu_tflops = 100;
	assert_int_equal(image_plan_compute(&m, &o, 16 * GiB, &p, NULL), 0);
	assert_true(p.fits);
	assert_true(p.offload_s > 10); /* 28 steps x 23.8 GB over PCIe */
	image_plan_release(&p);

	/* the diffusers benchmark: 22.63 GB (GiB) peak for the bf16 transformer alone */
	image_breakdown bd;
	o.offload = IMAGE_OFFLOAD_NONE;
	assert_int_equal(image_memory(&m, &o, &bd, NULL), 0);
	double transformer = (bd.denoiser + bd.activations) / (double)GiB;
	assert_true(fabs(transformer - 22.63) < 0.05 * 22.63);
}

static void test_options(void **state)
{
	(void)state;
	image_model m;
	assert_int_equal(image_model_find("SD 1.5", &m, NULL), 0);
	image_opts o;
	image_opts_init(&o);
	image_breakdown a, b;
	assert_int_equal(image_memory(&m, &o, &a, NULL), 0);
	o.batch = 4;
	assert_int_equal(image_memory(&m, &o, &b, NULL), 0);
	assert_true(b.activations == 4 * a.activations);
	o.vae_tiling = true;
	o.width = o.height = 2048;
	assert_int_equal(image_memory(&m, &o, &a, NULL), 0);
	o.vae_tiling = false;
	assert_int_equal(image_memory(&m, &o, &b, NULL), 0);
	assert_true(a.vae_decode * 16 * 4 == b.vae_decode); /* one 512x512 tile against 4 x 2048x2048 */
	o.quant = "q4_k_s";
	assert_int_equal(image_memory(&m, &o, &a, NULL), 0);
	o.quant = "q8_0";
	assert_int_equal(image_memory(&m, &o, &b, NULL), 0);
	assert_true(a.denoiser < b.denoiser);
	gw_error err;
	o.quant = "q9_z";
	assert_int_equal(image_memory(&m, &o, &a, &err), GW_EINVAL);
	assert_non_null(strstr(err.msg, "q9_z"));
	assert_int_equal(image_model_find("sdxxl", &m, &err), GW_ENOTFOUND);
	assert_non_null(strstr(err.msg, "did you mean 'sdxl'"));
}

static void test_speed_calibrations(void **state)
{
	(void)state;
	image_model m;
	image_opts o;
	image_plan p;
	/* FLUX transformer, one forward at 1024x1024 on the L40 (181 TFLOPS): 0.547 s */
	assert_int_equal(image_model_find("flux.1-dev", &m, NULL), 0);
	image_opts_init(&o);
	o.steps = 1;
	o.gpu_tflops = 181;
	assert_int_equal(image_plan_compute(&m, &o, 0, &p, NULL), 0);
	assert_true(p.has_speed);
	assert_true(fabs(p.s_per_image - 0.547) < 0.1 * 0.547);
	image_plan_release(&p);
	/* SDXL, 50 steps at 1024x1024 on an A100 SXM (312 TFLOPS): 5.93 s (fal benchmarks) */
	assert_int_equal(image_model_find("sdxl", &m, NULL), 0);
	o.steps = 50;
	o.gpu_tflops = 312;
	assert_int_equal(image_plan_compute(&m, &o, 0, &p, NULL), 0);
	assert_true(fabs(p.s_per_image - 5.93) < 0.15 * 5.93);
	image_plan_release(&p);
}

static int teardown(void **state)
{
	(void)state;
	kb_release_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sdxl_16_and_24),
		cmocka_unit_test(test_flux_16),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_speed_calibrations),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

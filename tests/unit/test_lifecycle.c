/*
 * Unit tests for kb/lifecycle: data/lifecycle.tsv and data/install.tsv
 * load, every row is sourced, lookups by compute capability and card,
 * and malformed copies are refused with table, line and column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kb/kb.h"
#include "kb/lifecycle.h"
#include "tmpdir.h"

static void test_tables_load(void **state)
{
	(void)state;
	gw_error err = {0};
	assert_int_equal(kb_lifecycle_load(&err), 0);
	assert_true(kb_lifecycle_count() >= 4);
	assert_true(kb_install_count() >= 10);
	for (size_t i = 0; i < kb_lifecycle_count(); i++) {
		const kb_lifecycle *l = kb_lifecycle_at(i);
		assert_true(l->source[0] != '\0');
		assert_true(l->as_of[0] != '\0');
	}
	/* every install row names a card of the gpus table and has a source */
	const kb_table *t = kb_get_table("install", NULL);
	assert_non_null(t);
	long g = kb_col(t, "gpu"), s = kb_col(t, "source");
	for (size_t i = 0; i < t->nrows; i++) {
		const gpu_spec *gs = kb_gpu_find(kb_cell(t, i, g));
		assert_non_null(gs);
		assert_true(kb_cell(t, i, s)[0] != '\0');
		assert_non_null(kb_install_for(gs));
	}
}

static void test_lookups(void **state)
{
	(void)state;
	const kb_lifecycle *l = kb_lifecycle_for(kb_gpu_find("tesla-p40"));
	assert_non_null(l);
	assert_string_equal(l->last_torch, "2.14");
	assert_string_equal(l->last_driver, "R580");
	assert_non_null(strstr(l->hardware, "1/64"));
	l = kb_lifecycle_for(kb_gpu_find("tesla-p100"));
	assert_non_null(l);
	assert_non_null(strstr(l->hardware, "no DP4A"));
	assert_non_null(kb_lifecycle_for(kb_gpu_find("v100")));
	assert_null(kb_lifecycle_for(kb_gpu_find("rtx-4090")));
	assert_null(kb_lifecycle_for(kb_gpu_find("rx-7900-xtx")));
	/* every Maxwell/Pascal/Volta card of the catalog has a row */
	for (size_t i = 0; i < kb_gpu_count(); i++) {
		const gpu_spec *gs = kb_gpu_at(i);
		if (gs->cc_major >= 5 && (gs->cc_major < 7 || (gs->cc_major == 7 && gs->cc_minor < 5)))
			assert_non_null(kb_lifecycle_for(gs));
	}
	const kb_install *in = kb_install_for(kb_gpu_find("v100"));
	assert_non_null(in);
	assert_int_equal(in->form, KB_FORM_SXM2);
	assert_string_equal(kb_form_name(in->form), "SXM2");
	in = kb_install_for(kb_gpu_find("tesla-p40"));
	assert_non_null(in);
	assert_true(in->passive);
	assert_false(in->display);
	assert_non_null(strstr(in->power_connector, "EPS"));
	in = kb_install_for(kb_gpu_find("arc-b580"));
	assert_non_null(in);
	assert_true(in->rebar);
	assert_null(kb_install_for(kb_gpu_find("rtx-4090")));
}

static void write_table(const char *name, const char *text)
{
	char path[320];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void expect_refused(const char *name, const char *text, const char *msg)
{
	write_table(name, text);
	kb_set_data_dir(tmpdir);
	gw_error err = {0};
	assert_int_equal(kb_lifecycle_load(&err), GW_EFORMAT);
	if (!strstr(err.msg, msg))
		fail_msg("got '%s', want '%s'", err.msg, msg);
	char path[320];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	unlink(path);
	kb_set_data_dir(NULL);
}

#define LHDR "arch\tccs\tlast_torch\ttorch_wheel\tlast_driver\tcuda_build\tprebuilt\thardware\tas_of\tsource\n"
#define IHDR "gpu\tform_factor\tcooling\tdisplay\tpower_connector\tslots\trebar\tsource\n"

static void test_malformed(void **state)
{
	(void)state;
	assert_int_equal(tmpdir_make("lifecycle"), 0);
	expect_refused("lifecycle.tsv", LHDR "Pascal\t6.1\t2.14\tcu126\tR580\t12\tx\ty\tDec 2026\ts\n",
		       "table 'lifecycle' line 2, column 'as_of': 'Dec 2026' is not a month (YYYY-MM)");
	expect_refused("lifecycle.tsv", LHDR "# two rows, one cc\nA\t6.0 6.1\t\t\t\t12\tx\ty\t2026-12\ts\nB\t6.1\t\t\t\t12\tx\ty\t2026-12\ts\n",
		       "table 'lifecycle' line 4, column 'ccs': '6.1' is already in line 3");
	expect_refused("lifecycle.tsv", LHDR "Pascal\t6.1\t2.14\t\tR580\t12\tx\ty\t2026-12\ts\n",
		       "table 'lifecycle' line 2, column 'torch_wheel': '' is empty");
	expect_refused("lifecycle.tsv", LHDR "Pascal\t6.1\ttwo\tcu126\tR580\t12\tx\ty\t2026-12\ts\n",
		       "table 'lifecycle' line 2, column 'last_torch': 'two' is not a PyTorch release");
	expect_refused("lifecycle.tsv", "arch\tccs\tsource\nPascal\t6.1\ts\n",
		       "table 'lifecycle': no 'last_torch' column");
	expect_refused("install.tsv", IHDR "tesla-p40\tpcie\tfanless\t0\tEPS\t2\t0\ts\n",
		       "table 'install' line 2, column 'cooling': 'fanless' is not active or passive");
	expect_refused("install.tsv", IHDR "tesla-p40\tpcie\tpassive\tmaybe\tEPS\t2\t0\ts\n",
		       "table 'install' line 2, column 'display': 'maybe' is not 0 or 1");
	expect_refused("install.tsv", IHDR "tesla-p40\tpcie\tpassive\t0\tEPS\t2\t0\ts\ntesla-p40\tpcie\tpassive\t0\tEPS\t2\t0\ts\n",
		       "table 'install' line 3: duplicate id 'tesla-p40'");
	/* a good copy loads and is used */
	write_table("install.tsv", IHDR "rtx-4090\tpcie\tactive\t1\t1x 16-pin\t3\t0\ts\n");
	kb_set_data_dir(tmpdir);
	gw_error err = {0};
	assert_int_equal(kb_lifecycle_load(&err), 0);
	const kb_install *in = kb_install_for(kb_gpu_find("rtx-4090"));
	assert_non_null(in);
	assert_int_equal(in->slots, 3);
	assert_null(kb_install_for(kb_gpu_find("tesla-p40")));
	kb_set_data_dir(NULL);
	assert_int_equal(tmpdir_remove(), 0);
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
		cmocka_unit_test(test_tables_load),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

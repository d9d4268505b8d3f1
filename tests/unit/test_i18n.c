/*
 * Unit tests for util/i18n.c: the embedded catalog, display widths and the
 * translation of texts formatted in English elsewhere (issue 24).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/util.h"

/* every code point of these ranges has the width glibc's wcwidth() gives under C.UTF-8 */
static void test_width_matches_wcwidth(void **state)
{
	(void)state;
	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		skip();
		return;
	}
	static const unsigned ranges[][2] = {
		{0x20, 0x7e}, {0xa0, 0x2ff}, {0x2010, 0x2027}, {0x3000, 0x303e}, {0x3041, 0x3096}, {0x30a0, 0x30ff},
		{0x4e00, 0x4fff}, {0x9f00, 0x9fff}, {0xac00, 0xac40}, {0xff01, 0xff60}, {0xffe0, 0xffe6},
	};
	size_t checked = 0;
	for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
		for (unsigned cp = ranges[r][0]; cp <= ranges[r][1]; cp++) {
			int w = wcwidth((wchar_t)cp);
			if (w < 0)
				continue; /* unassigned there */
			if (gw_cp_width(cp) != w)
				fail_msg("U+%04X: gw_cp_width %d, wcwidth %d", cp, gw_cp_width(cp), w);
			checked++;
		}
	assert_true(checked > 1800);
	setlocale(LC_CTYPE, "C");
}

static void test_display_width(void **state)
{
	(void)state;
	assert_int_equal(gw_display_width("GPU 0"), 5);
	assert_int_equal(gw_display_width("显存"), 4);
	assert_int_equal(gw_display_width("KV 缓存"), 7);
	assert_int_equal(gw_display_width("——"), 2);        /* em dashes are narrow */
	assert_int_equal(gw_display_width("（注）"), 6);     /* fullwidth parentheses are wide */
	assert_int_equal(gw_display_width("e\xcc\x81"), 1); /* a combining accent takes no column */
	assert_int_equal(gw_display_width("a\xe6\x98"), 3); /* a cut sequence: one column a byte */
	assert_int_equal(gw_display_width(""), 0);
}

/* the table pads by display width: each column starts at the same terminal column */
static void test_table_aligns_cjk(void **state)
{
	(void)state;
	const char *h[] = {"", "GPU 0"};
	table *t = table_new(2, h);
	table_add(t, "权重", "5.08 GiB");
	table_add(t, "KV cache", "1.09 GiB");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	table_print(t, f);
	fclose(f);
	table_free(t);
	char *l1 = strchr(buf, '\n') + 1, *l2 = strchr(l1, '\n') + 1;
	assert_int_equal(gw_display_width_n(l1, (size_t)(strstr(l1, "5.08") - l1)),
			 gw_display_width_n(l2, (size_t)(strstr(l2, "1.09") - l2)));
	free(buf);
}

static void test_catalog(void **state)
{
	(void)state;
	assert_int_equal(gw_i18n_init("en"), 0);
	assert_string_equal(_("\nassumptions:\n"), "\nassumptions:\n");
	assert_false(gw_i18n_zh());
	assert_int_equal(gw_i18n_init("fr"), -1);
	setenv("GPUWISE_LOCALEDIR", "", 1); /* the embedded copy */
	assert_int_equal(gw_i18n_init("zh"), 0);
	assert_true(gw_i18n_zh());
	assert_string_equal(gw_i18n_source(), "embedded");
	assert_string_equal(_("\nassumptions:\n"), "\n假设：\n");
	assert_string_equal(P_("%zu warning", "%zu warnings", 3), "%zu 项警告");
	/* a text the catalog lacks is itself */
	assert_string_equal(_("no such message in any catalog"), "no such message in any catalog");
	gw_i18n_disable();
	assert_string_equal(_("\nassumptions:\n"), "\nassumptions:\n");
	unsetenv("GPUWISE_LOCALEDIR");
}

static void check_fmt(const char *fmt, const char *en, const char *zh)
{
	char *t = gw_translate_fmt(fmt, en);
	assert_string_equal(t, zh);
	free(t);
}

/* plan --train/--image advice: the format src/plan made the English from */
static void test_translate_fmt(void **state)
{
	(void)state;
	setenv("GPUWISE_LOCALEDIR", "", 1);
	assert_int_equal(gw_i18n_init("zh"), 0);
	const char *eff = "%s per GPU (%s%s; peak at the %s phase)%s";
	check_fmt(eff, "5.43 GiB per GPU (-39.79 GiB; peak at the loss-backward phase), fits",
		  "每块 GPU 5.43 GiB（-39.79 GiB；峰值在损失反向阶段），放得下");
	const char *acc = "micro-batch 1 with --grad-accum %u (same effective batch: --micro-batch 1 --grad-accum %u)";
	check_fmt(acc, "micro-batch 1 with --grad-accum 16 (same effective batch: --micro-batch 1 --grad-accum 16)",
		  "微批次 1，梯度累积 16 步（有效批次不变：--micro-batch 1 --grad-accum 16）");
	/* a text without directives is its own format */
	check_fmt("one image at a time (--batch 1)", "one image at a time (--batch 1)", "一次一张图（--batch 1）");
	/* no format, a format without translation, or a text it did not make: the English */
	check_fmt(NULL, "5.43 GiB per GPU", "5.43 GiB per GPU");
	check_fmt("no such format %s here", "no such format x here", "no such format x here");
	check_fmt(eff, "something else entirely", "something else entirely");
	assert_int_equal(gw_i18n_init("en"), 0);
	check_fmt(eff, "5.43 GiB per GPU (-39.79 GiB; peak at the loss-backward phase), fits",
		  "5.43 GiB per GPU (-39.79 GiB; peak at the loss-backward phase), fits");
	unsetenv("GPUWISE_LOCALEDIR");
}

static void check_tr(const char *en, const char *zh)
{
	char *t = gw_translate_text(en);
	assert_string_equal(t, zh);
	free(t);
}

static void test_translate_text(void **state)
{
	(void)state;
	setenv("GPUWISE_LOCALEDIR", "", 1);
	assert_int_equal(gw_i18n_init("zh"), 0);
	check_tr("no GPU has 8.50 GiB free", "没有哪块 GPU 有 8.50 GiB 空闲");
	check_tr("waiting for job 12 to end", "等待任务 12 结束");
	/* positional arguments reorder; the plural ending has no Chinese counterpart */
	check_tr("no GPU has 4.00 GiB free; GPU 1 frees 6.00 GiB when job 7 ends",
		 "没有哪块 GPU 有 4.00 GiB 空闲；任务 7 结束后 GPU 1 会释放 6.00 GiB");
	check_tr("waiting for 2 idle GPUs", "等待 2 块空闲 GPU");
	/* a reason quoting another is translated inside too */
	check_tr("preempted and requeued: no GPU has 1.00 GiB free", "被抢占并重新排队：没有哪块 GPU 有 1.00 GiB 空闲");
	check_tr("held by its owner", "被任务主人暂停");
	/* a note appended to a reason */
	check_tr("no GPU has 8.50 GiB free (GPUs are held for it)", "没有哪块 GPU 有 8.50 GiB 空闲（已为它保留 GPU）");
	/* unknown text stays as it is */
	check_tr("the daemon said something new", "the daemon said something new");
	/* a hardware-layer message quoting glibc's (dlerror); a long text that
	 * matches no format comes back at once, not after the exponential
	 * search of formats with many %s ("%s%s%s%s%s; ..."), and as it was */
	check_tr("cannot load '/x/libnvidia-ml.so.1': /x/libnvidia-ml.so.1: cannot open shared object file",
		 "无法加载 '/x/libnvidia-ml.so.1'：/x/libnvidia-ml.so.1: cannot open shared object file");
	{
		char longer[700];
		size_t k = 0;
		while (k + 40 < sizeof longer)
			k += (size_t)snprintf(longer + k, sizeof longer - k, "/a/b/c: no such file or directory; ");
		uint64_t t0 = now_ms();
		check_tr(longer, longer);
		assert_true(now_ms() - t0 < 2000);
	}
	assert_int_equal(gw_i18n_init("en"), 0);
	check_tr("no GPU has 8.50 GiB free", "no GPU has 8.50 GiB free");
	unsetenv("GPUWISE_LOCALEDIR");
}

/* gw_error_text: an error gw_fail made, in the reader's language */
static void test_error_text(void **state)
{
	(void)state;
	setenv("GPUWISE_LOCALEDIR", "", 1);
	gw_error err = {0};
	assert_int_equal(gw_fail(&err, GW_ENOTFOUND, "unknown model '%s' (not a file and not in the catalog)", "x1"),
			 GW_ENOTFOUND);
	assert_non_null(err.fmt);
	assert_int_equal(gw_i18n_init("zh"), 0);
	assert_string_equal(gw_error_text(&err), "未知的模型 'x1'（既不是文件，也不在目录中）");
	/* a quoted piece is a name as given, even one the catalog translates ("version" is 版本) */
	gw_fail(&err, GW_ENOTFOUND, "unknown model '%s' (not a file and not in the catalog)", "version");
	assert_string_equal(gw_error_text(&err), "未知的模型 'version'（既不是文件，也不在目录中）");
	/* nested: the %s piece is a catalog format too, and its field name */
	gw_fail(&err, GW_ETRUNC, "cannot read '%s': %s", "/m/a.gguf",
		"truncated header: version at offset 4 needs 4 bytes, the file has 4");
	assert_string_equal(gw_error_text(&err), "无法读取 '/m/a.gguf'：文件头不完整：偏移 4 处的版本需要 4 字节，文件只有 4 字节");
	/* a text written without a format is matched against the catalog */
	snprintf(err.msg, sizeof err.msg, "unknown model 'x2' (not a file and not in the catalog)");
	err.fmt = NULL;
	assert_string_equal(gw_error_text(&err), "未知的模型 'x2'（既不是文件，也不在目录中）");
	/* a format the text no longer matches falls back to that too */
	err.fmt = "cannot read '%s': %s";
	assert_string_equal(gw_error_text(&err), "未知的模型 'x2'（既不是文件，也不在目录中）");
	/* fast: a hundred of the slowest kind (the fallback scans the catalog) well under a second */
	uint64_t t0 = now_ms();
	for (int i = 0; i < 100; i++)
		gw_error_text(&err);
	uint64_t t1 = now_ms();
	gw_fail(&err, GW_ENOTFOUND, "unknown model '%s' (not a file and not in the catalog)", "x1");
	for (int i = 0; i < 100; i++)
		gw_error_text(&err);
	uint64_t t2 = now_ms();
	fprintf(stderr, "# gw_error_text: %.3f ms (catalog scan), %.3f ms (its format)\n", (double)(t1 - t0) / 100,
		(double)(t2 - t1) / 100);
	assert_true(t2 - t0 < 1000);
	/* English (LANG=C, --json): the text itself */
	assert_int_equal(gw_i18n_init("en"), 0);
	assert_ptr_equal(gw_error_text(&err), err.msg);
	assert_string_equal(gw_error_text(NULL), "");
	unsetenv("GPUWISE_LOCALEDIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_width_matches_wcwidth),
		cmocka_unit_test(test_display_width),
		cmocka_unit_test(test_table_aligns_cjk),
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_translate_text),
		cmocka_unit_test(test_translate_fmt),
		cmocka_unit_test(test_error_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

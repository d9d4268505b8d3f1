/*
 * Unit tests for util/: sizes, durations, counts, strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/util.h"

static void test_sizes(void **state)
{
	(void)state;
	uint64_t b;
	assert_int_equal(parse_size("8G", &b), 0);
	assert_int_equal(b, 8ULL << 30);
	assert_int_equal(parse_size("8GiB", &b), 0);
	assert_int_equal(b, 8ULL << 30);
	assert_int_equal(parse_size("8GB", &b), 0);
	assert_int_equal(b, 8000000000ULL);
	assert_int_equal(parse_size("512k", &b), 0);
	assert_int_equal(b, 512ULL * 1024);
	assert_int_equal(parse_size("1.5T", &b), 0);
	assert_int_equal(b, 3ULL << 39);
	assert_int_equal(parse_size("100", &b), 0);
	assert_int_equal(b, 100);
	assert_int_equal(parse_size("7.5 MiB", &b), 0);
	assert_int_equal(b, 7864320);
	assert_int_not_equal(parse_size("", &b), 0);
	assert_int_not_equal(parse_size("G", &b), 0);
	assert_int_not_equal(parse_size("-1G", &b), 0);
	assert_int_not_equal(parse_size("8X", &b), 0);
	assert_int_not_equal(parse_size("nan", &b), 0);
	assert_int_not_equal(parse_size("1e30T", &b), 0);
}

static void test_durations(void **state)
{
	(void)state;
	uint64_t ms;
	assert_int_equal(parse_duration_ms("250ms", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(parse_duration_ms("5s", &ms), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(parse_duration_ms("5m", &ms), 0);
	assert_int_equal(ms, 300000);
	assert_int_equal(parse_duration_ms("1.5h", &ms), 0);
	assert_int_equal(ms, 5400000);
	assert_int_equal(parse_duration_ms("2", &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_not_equal(parse_duration_ms("5d", &ms), 0);
	assert_int_not_equal(parse_duration_ms("abc", &ms), 0);
}

static void test_counts(void **state)
{
	(void)state;
	double v;
	assert_int_equal(parse_count("13b", &v), 0);
	assert_true(v == 13e9);
	assert_int_equal(parse_count("350M", &v), 0);
	assert_true(v == 350e6);
	assert_int_not_equal(parse_count("13q", &v), 0);
	long long i;
	assert_int_equal(parse_int("42", 0, 100, &i), 0);
	assert_int_equal(i, 42);
	assert_int_equal(parse_int("420", 0, 100, &i), GW_ERANGE);
	assert_int_equal(parse_int("4x", 0, 100, &i), GW_EINVAL);
}

static void test_format(void **state)
{
	(void)state;
	char buf[32];
	assert_string_equal(fmt_bytes(buf, sizeof buf, 1536ULL << 20), "1.50 GiB");
	assert_string_equal(fmt_bytes(buf, sizeof buf, 100), "100 B");
	assert_string_equal(fmt_duration(buf, sizeof buf, 250), "250ms");
	assert_string_equal(fmt_duration(buf, sizeof buf, 3723000), "1h 02m");
}

static void test_strings(void **state)
{
	(void)state;
	char out[64];
	str_squash("NVIDIA GeForce RTX-4090", out, sizeof out);
	assert_string_equal(out, "nvidiageforcertx4090");
	assert_int_equal(str_distance("stauts", "status"), 2);
	assert_int_equal(str_distance("", "abc"), 3);
	assert_true(str_ends("model.gguf", ".gguf"));
	assert_false(str_starts("ab", "abc"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

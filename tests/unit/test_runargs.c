/*
 * Unit tests for watch_run_args_check: the gpuwise run options a queued
 * job may pass (run_args) are parsed as gpuwise run parses them (issue 20).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "watch/watch.h"

static int check(const char *const *a, size_t n, char *err, size_t en)
{
	err[0] = '\0';
	return watch_run_args_check((char *const *)a, n, err, en);
}

static void test_allowed(void **state)
{
	(void)state;
	char err[300];
	const char *a[] = {"--interval", "200ms", "--mem-limit=5G", "--no-gpu", "--grace", "--",
			   "--backoff", "1s..1m", "--oom-halve-arg", "--batch-size"};
	/* "--" and "--batch-size" here are values, taken as getopt_long takes them */
	assert_int_equal(check(a, 10, err, sizeof err), 0);
	assert_int_equal(check(NULL, 0, err, sizeof err), 0);
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *args[3];
		size_t n;
		const char *err;
	} bad[] = {
		{{"--", "sh", "-c"}, 3, "'run_args' may not hold '--': the job's command goes after the daemon's options"},
		{{"--interval", "1s", "--"}, 3, "'run_args' may not hold '--'"},
		{{"--lo", "/etc/passwd"}, 2, "'run_args' may not abbreviate options: '--lo' (write it in full, e.g. '--log')"},
		{{"--vram", "1P"}, 2, "'run_args' may not abbreviate options: '--vram' (write it in full, e.g. '--vram-cap')"},
		{{"--inter=1s"}, 1, "'run_args' may not abbreviate options: '--inter=1s'"},
		{{"--vram-cap", "1P"}, 2, "'run_args' may not set '--vram-cap' (the daemon sets it)"},
		{{"--vram-cap=0"}, 1, "'run_args' may not set '--vram-cap' (the daemon sets it)"},
		{{"--log=/etc/passwd"}, 1, "'run_args' may not set '--log' (the daemon sets it)"},
		{{"--restart", "always"}, 2, "'run_args' may not set '--restart' (the daemon sets it)"},
		{{"--max-restarts", "9"}, 2, "'run_args' may not set '--max-restarts'"},
		{{"--json"}, 1, "'run_args' may not set '--json'"},
		{{"--report", "x"}, 2, "'run_args' may not set '--report'"},
		{{"--on-event", "x"}, 2, "'run_args' may not set '--on-event'"},
		{{"-h"}, 1, "'run_args' holds '-h', which is not a gpuwise run option"},
		{{"sh"}, 1, "'run_args' holds 'sh', which is not a gpuwise run option"},
		{{"--frobnicate"}, 1, "'run_args' holds '--frobnicate', which is not a gpuwise run option"},
		{{"--no-gpu=yes"}, 1, "'run_args': option '--no-gpu' takes no value, not '--no-gpu=yes'"},
		/* left without its value it would take the daemon's next word (--vram-cap) */
		{{"--grace"}, 1, "'run_args': option '--grace' needs a value"},
		{{"--interval", "1s", "--grace"}, 3, "'run_args': option '--grace' needs a value"},
	};
	char err[300];
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int rc = check(bad[i].args, bad[i].n, err, sizeof err);
		if (rc != GW_EINVAL || !strstr(err, bad[i].err))
			fail_msg("case %zu ('%s'): rc %d, '%s'; expected '%s'", i, bad[i].args[0], rc, err, bad[i].err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

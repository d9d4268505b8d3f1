/*
 * Unit tests for hw/wsl.c: platform detection from the kernel strings,
 * /dev/dxg and /usr/lib/wsl/lib, and the WSL 2 VM's memory limit from a
 * .wslconfig (sections, comments, units, CRLF), in temporary roots; the
 * GPU-PV adapter is not listed as a GPU; dxgkrnl lines from the kernel log.
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

#include "hw/hw.h"
#include "hw/hw_int.h"
#include "tmpdir.h"

static void put(const char *rel, const char *text)
{
	char path[512], cmd[700];
	snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void clean(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", tmpdir);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make("wsl"))
		return -1;
	gw_set_root(tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gw_set_root(NULL);
	return tmpdir_remove();
}

static void test_detect(void **state)
{
	(void)state;
	hw_platform_info p;
	clean();
	put("proc/sys/kernel/osrelease", "6.8.0-49-generic\n");
	put("proc/version", "Linux version 6.8.0-49-generic (buildd@lcy02-amd64-103) #49-Ubuntu SMP\n");
	hw_platform_detect(&p);
	assert_int_equal(p.kind, HW_PLATFORM_LINUX);
	assert_string_equal(hw_platform_name(p.kind), "linux");
	assert_string_equal(p.evidence, "");

	put("proc/sys/kernel/osrelease", "5.15.167.4-microsoft-standard-WSL2\n");
	hw_platform_detect(&p);
	assert_int_equal(p.kind, HW_PLATFORM_WSL2);
	assert_string_equal(p.kernel, "5.15.167.4-microsoft-standard-WSL2");
	assert_false(p.dxg);
	assert_string_equal(p.evidence, "kernel '5.15.167.4-microsoft-standard-WSL2'");
	assert_int_equal(hw_platform(), HW_PLATFORM_WSL2);

	/* WSL 1: a Microsoft kernel without WSL2 / standard, no GPU-PV */
	put("proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
	put("proc/version", "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) )\n");
	hw_platform_detect(&p);
	assert_int_equal(p.kind, HW_PLATFORM_WSL1);
	assert_string_equal(hw_platform_name(p.kind), "wsl1");

	/* a custom WSL 2 kernel without the name: /dev/dxg and the driver folder tell */
	put("proc/sys/kernel/osrelease", "6.6.36-custom\n");
	put("proc/version", "Linux version 6.6.36-custom\n");
	put("dev/dxg", "");
	hw_platform_detect(&p);
	assert_int_equal(p.kind, HW_PLATFORM_WSL2);
	assert_true(p.dxg);
	assert_string_equal(p.evidence, "/dev/dxg");
	put("usr/lib/wsl/lib/libcuda.so.1", "x");
	hw_platform_detect(&p);
	assert_true(p.wsl_lib);
	assert_string_equal(p.evidence, "/dev/dxg, /usr/lib/wsl/lib");
}

static void test_wslconfig(void **state)
{
	(void)state;
	hw_wsl_memory m;
	gw_error err = {0};
	clean();
	/* no /proc/meminfo: an error, not a guess */
	assert_int_not_equal(hw_wsl_memory_read(&m, &err), 0);
	put("proc/meminfo", "MemTotal:       16303440 kB\nMemAvailable:   12000000 kB\n");
	assert_int_equal(hw_wsl_memory_read(&m, &err), 0);
	assert_int_equal(m.vm_total_bytes, 16303440ULL * 1024);
	assert_int_equal(m.limit_bytes, 0);
	assert_int_equal(m.windows_ram_bytes_est, 2ULL * 16303440 * 1024);
	assert_string_equal(m.wslconfig, "");
	assert_non_null(strstr(m.rule, "50% of the Windows RAM"));

	/* memory= in another section does not count; comments are ignored */
	put("mnt/c/Users/ana/.wslconfig", "[experimental]\nmemory=4GB\n[wsl2]\n# memory=2GB\nswap=0\n");
	assert_int_equal(hw_wsl_memory_read(&m, &err), 0);
	assert_int_equal(m.limit_bytes, 0);
	assert_string_equal(m.wslconfig, "/mnt/c/Users/ana/.wslconfig");
	assert_non_null(strstr(m.rule, "no memory= in /mnt/c/Users/ana/.wslconfig"));

	static const struct {
		const char *text;
		uint64_t bytes;
	} cases[] = {
		{"[wsl2]\r\nmemory=12GB\r\nprocessors=8\r\n", 12ULL << 30},
		{"[WSL2]\nmemory = 4096MB ; four gig\n", 4096ULL << 20},
		{"[wsl2]\nmemory=8G\n", 8ULL << 30},
		{"[wsl2]\nmemory=1.5GB\n", 3ULL << 29},
		{"[wsl2]\nmemoryLimit=8GB\n", 0},
		{"[wsl2]\nmemory=lots\n", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		put("mnt/c/Users/ana/.wslconfig", cases[i].text);
		assert_int_equal(hw_wsl_memory_read(&m, &err), 0);
		if (m.limit_bytes != cases[i].bytes)
			fail_msg("case %zu: '%s' gave %llu bytes, expected %llu", i, cases[i].text,
				 (unsigned long long)m.limit_bytes, (unsigned long long)cases[i].bytes);
		if (cases[i].bytes) {
			assert_int_equal(m.windows_ram_bytes_est, 0);
			assert_non_null(strstr(m.rule, "in /mnt/c/Users/ana/.wslconfig"));
		}
	}
	/* two profiles: the one with a limit wins */
	put("mnt/c/Users/Public/.wslconfig", "[wsl2]\nswap=0\n");
	put("mnt/c/Users/ana/.wslconfig", "[wsl2]\nmemory=6GB\n");
	assert_int_equal(hw_wsl_memory_read(&m, &err), 0);
	assert_int_equal(m.limit_bytes, 6ULL << 30);
	assert_string_equal(m.wslconfig, "/mnt/c/Users/ana/.wslconfig");
}

static void test_gpu_pv_adapter_skipped(void **state)
{
	(void)state;
	clean();
	/* "3D controller: Microsoft Corporation Basic Render Driver" is not a GPU */
	put("sys/bus/pci/devices/4cf5:00:00.0/class", "0x030200\n");
	put("sys/bus/pci/devices/4cf5:00:00.0/vendor", "0x1414\n");
	put("sys/bus/pci/devices/4cf5:00:00.0/device", "0x008e\n");
	sysfs_gpu *s = NULL;
	size_t n = 9;
	gw_error err = {0};
	assert_int_equal(sysfs_scan(&s, &n, &err), 0);
	assert_int_equal(n, 0);
	free(s);
	/* another Microsoft device of display class still is one */
	put("sys/bus/pci/devices/4cf5:00:00.0/device", "0x5353\n");
	assert_int_equal(sysfs_scan(&s, &n, &err), 0);
	assert_int_equal(n, 1);
	free(s);
}

static void test_kmsg_grep(void **state)
{
	(void)state;
	clean();
	put("dev/kmsg", "6,310,1201000,-;hv_vmbus: registering driver dxgkrnl\n"
			"3,402,2301000,-;misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22\n"
			"6,403,2401000,-;usb 1-1: new device\n");
	char **l = NULL;
	size_t n = 0;
	gw_error err = {0};
	assert_int_equal(hw_kmsg_grep(NULL, "DXG", 10, &l, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(l[0], "hv_vmbus: registering driver dxgkrnl");
	assert_string_equal(l[1], "misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22");
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
	assert_int_equal(hw_kmsg_grep(NULL, "dxg", 1, &l, &n, &err), 0);
	assert_int_equal(n, 1); /* at most max */
	free(l[0]);
	free(l);
	assert_int_not_equal(hw_kmsg_grep("/nonexistent/kmsg", "dxg", 10, &l, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err.msg, "cannot read"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_wslconfig),
		cmocka_unit_test(test_gpu_pv_adapter_skipped),
		cmocka_unit_test(test_kmsg_grep),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

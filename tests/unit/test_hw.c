/*
 * Unit tests for hw/: Xid lines, throttle words, PCI bus ids, container
 * ids from cgroups, and the sysfs scan of fixture roots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/hw.h"
#include "hw/hw_int.h"

static void test_xid_kmsg(void **state)
{
	(void)state;
	hw_xid x;
	assert_true(hw_xid_parse("3,1022,86012345678,-;NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', "
				 "name=<unknown>, GPU has fallen off the bus.", &x));
	assert_int_equal(x.xid, 79);
	assert_string_equal(x.pci, "0000:2a:00");
	assert_int_equal(x.ts_us, 86012345678ULL);
	assert_int_equal(x.pid, -1);
	assert_string_equal(x.process, "");
	assert_string_equal(x.text, "GPU has fallen off the bus.");
	assert_int_equal(x.wall_s, -1);
	/* kmsg with extra flag fields before ';' */
	assert_true(hw_xid_parse("4,77,1000,-,caller=T12;NVRM: Xid (PCI:0000:01:00): 13, pid=4242, "
				 "name=python3, Graphics SM Warp Exception", &x));
	assert_int_equal(x.xid, 13);
	assert_int_equal(x.pid, 4242);
	assert_string_equal(x.process, "python3");
	assert_string_equal(x.text, "Graphics SM Warp Exception");
}

static void test_xid_dmesg(void **state)
{
	(void)state;
	hw_xid x;
	assert_true(hw_xid_parse("[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 48, pid=911, name=trainer, "
				 "An uncorrectable double bit error (DBE) has been detected", &x));
	assert_int_equal(x.xid, 48);
	assert_int_equal(x.ts_us, 1234567890ULL);
	assert_int_equal(x.pid, 911);
	assert_string_equal(x.pci, "0000:3b:00");
	/* an older driver prints no pid/name */
	assert_true(hw_xid_parse("[   12.000001] NVRM: Xid (PCI:0000:01:00): 62, 0000(0000) 00000000", &x));
	assert_int_equal(x.xid, 62);
	assert_int_equal(x.pid, -1);
	assert_string_equal(x.text, "0000(0000) 00000000");
	/* not Xid lines */
	assert_false(hw_xid_parse("6,1021,5012345678,-;nvidia-modeset: Loading NVIDIA Kernel Mode Setting", &x));
	assert_false(hw_xid_parse("4,1023,86012345999,-;NVRM: GPU 0000:2a:00.0: GPU has fallen off the bus.", &x));
	assert_false(hw_xid_parse("NVRM: Xid (PCI:0000:01:00): 79, no timestamp", &x));
	assert_false(hw_xid_parse("[ 12.5] NVRM: Xid (PCI:0000:01:00): notanumber", &x));
	assert_false(hw_xid_parse("[ 12.5 NVRM: Xid (PCI:0000:01:00): 79, x", &x));
	assert_false(hw_xid_parse("", &x));
}

/* Every prefix and every one-byte change of real lines: no crash, no
 * overrun (ASan), and the strings stay terminated. */
static void test_xid_mutations(void **state)
{
	(void)state;
	const char *lines[] = {
		"3,1022,86012345678,-;NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
		"[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 48, pid=911, name=trainer, DBE",
	};
	static const char bytes[] = {'\0', ' ', ',', ';', ':', ')', '(', '[', ']', '\'', '=', '9', 'x', '-', '\n'};
	char buf[256];
	hw_xid x;
	for (size_t l = 0; l < 2; l++) {
		size_t n = strlen(lines[l]);
		for (size_t cut = 0; cut <= n; cut++) {
			memcpy(buf, lines[l], cut);
			buf[cut] = '\0';
			if (hw_xid_parse(buf, &x))
				assert_true(strlen(x.text) < sizeof x.text && strlen(x.pci) < sizeof x.pci);
		}
		for (size_t pos = 0; pos < n; pos++)
			for (size_t b = 0; b < sizeof bytes; b++) {
				memcpy(buf, lines[l], n + 1);
				buf[pos] = bytes[b];
				if (hw_xid_parse(buf, &x))
					assert_true(x.xid >= 0 && strlen(x.process) < sizeof x.process);
			}
	}
}

static void test_xid_read(void **state)
{
	(void)state;
	char path[] = "/tmp/gw-xid-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "6,1,100,-;hello\n"
			   "3,2,2000000,-;NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', name=<unknown>, lost\n"
			   " SUBSYSTEM=pci\n"
			   "[    5.000000] NVRM: Xid (PCI:0000:01:00): 31, pid=7, name=a, MMU fault\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	hw_xid *x = NULL;
	size_t n = 0;
	gw_error err = {0};
	assert_int_equal(hw_xid_read(path, 0, &x, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(x[0].xid, 79);
	assert_int_equal(x[1].xid, 31);
	free(x);
	assert_int_equal(hw_xid_read(path, 3000000, &x, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(x[0].xid, 31);
	free(x);
	unlink(path);
	assert_int_not_equal(hw_xid_read("/nonexistent/kmsg", 0, &x, &n, &err), 0);
	assert_non_null(strstr(err.msg, "cannot read '/nonexistent/kmsg'"));
}

/* NULL path: GPUWISE_ROOT/dev/kmsg, with wall clock from /proc/uptime. */
static char *fixture(const char *name);
static void test_xid_root(void **state)
{
	(void)state;
	char *root = fixture("fell-off-bus");
	gw_set_root(root);
	hw_xid *x = NULL;
	size_t n = 0;
	gw_error err = {0};
	assert_int_equal(hw_xid_read(NULL, 0, &x, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(x[0].xid, 79);
	assert_string_equal(x[0].pci, "0000:2a:00");
	/* uptime 86400 s, event at 86012 s: about 388 s ago */
	int64_t age = (int64_t)(wall_ms() / 1000) - x[0].wall_s;
	assert_true(age >= 387 && age <= 400);
	free(x);
	free(root);
	gw_set_root(NULL);
}

static void test_throttle_words(void **state)
{
	(void)state;
	char buf[256];
	assert_string_equal(hw_throttle_words(0, buf, sizeof buf), "none");
	assert_string_equal(hw_throttle_words(HW_THR_GPU_IDLE, buf, sizeof buf), "idle");
	assert_string_equal(hw_throttle_words(HW_THR_SW_POWER_CAP | HW_THR_SW_THERMAL, buf, sizeof buf),
			    "power cap, thermal slowdown (software)");
	assert_string_equal(hw_throttle_words(HW_THR_HW_THERMAL | HW_THR_HW_POWER_BRAKE, buf, sizeof buf),
			    "thermal slowdown (hardware), power brake (hardware)");
	assert_string_equal(hw_throttle_words(0x1000 | HW_THR_HW_SLOWDOWN, buf, sizeof buf),
			    "hardware slowdown, other (0x1000)");
	/* a short buffer truncates, never overflows */
	char small[8];
	hw_throttle_words(0x1ff, small, sizeof small);
	assert_true(strlen(small) < sizeof small);
}

static void test_pci_norm(void **state)
{
	(void)state;
	char b[32];
	assert_true(hw_pci_norm("00000000:01:00.0", b, sizeof b));
	assert_string_equal(b, "0000:01:00.0");
	assert_true(hw_pci_norm("0000:DB:00.0", b, sizeof b));
	assert_string_equal(b, "0000:db:00.0");
	assert_true(hw_pci_norm("2a:00.1", b, sizeof b));
	assert_string_equal(b, "0000:2a:00.1");
	assert_false(hw_pci_norm("0000:01:00", b, sizeof b));
	assert_false(hw_pci_norm("0000:01:00.9", b, sizeof b));
	assert_false(hw_pci_norm("nvidia", b, sizeof b));
	assert_false(hw_pci_norm("0000:01:00.0x", b, sizeof b));
}

static void test_container_id(void **state)
{
	(void)state;
	char id[80];
	const char *hex = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";
	char cg[256];
	snprintf(cg, sizeof cg, "/system.slice/docker-%s.scope", hex);
	proc_container_id(cg, id, sizeof id);
	assert_string_equal(id, hex);
	snprintf(cg, sizeof cg, "/kubepods/burstable/pod1234-56/%s", hex);
	proc_container_id(cg, id, sizeof id);
	assert_string_equal(id, hex);
	snprintf(cg, sizeof cg, "/machine.slice/libpod-%s.scope/container", hex);
	proc_container_id(cg, id, sizeof id);
	assert_string_equal(id, hex);
	proc_container_id("/user.slice/user-1000.slice/session-2.scope", id, sizeof id);
	assert_string_equal(id, "");
	/* 63 hex digits is not an id */
	snprintf(cg, sizeof cg, "/docker/%.63s", hex);
	proc_container_id(cg, id, sizeof id);
	assert_string_equal(id, "");
}

static char *fixture(const char *name)
{
	const char *top = getenv("GW_TOP");
	return xasprintf("%s/tests/fixtures/roots/%s", top ? top : ".", name);
}

static void test_sysfs_laptop(void **state)
{
	(void)state;
	char *root = fixture("laptop-5070");
	gw_set_root(root);
	sysfs_gpu *s = NULL;
	size_t n = 0;
	gw_error err = {0};
	assert_int_equal(sysfs_scan(&s, &n, &err), 0);
	assert_int_equal(n, 2); /* host bridge and SATA skipped */
	assert_string_equal(s[0].id.pci_bus_id, "0000:00:02.0");
	assert_int_equal(s[0].id.vendor, HW_VENDOR_INTEL);
	assert_true(s[0].id.integrated);
	assert_string_equal(s[0].id.kernel_driver, "i915");
	assert_string_equal(s[0].id.name, "Intel Arc Graphics");
	assert_int_equal(s[0].id.pci_revision, 8);
	assert_int_equal(s[1].id.vendor, HW_VENDOR_NVIDIA);
	assert_int_equal(s[1].id.pci_device_id, 0x2d58);
	assert_string_equal(s[1].id.runtime_status, "suspended");
	assert_false(s[1].id.integrated);
	assert_int_equal(s[1].id.pci_class, 0x030000);
	free(s);
	free(root);
	gw_set_root(NULL);
}

static void test_sysfs_amd_and_bad(void **state)
{
	(void)state;
	char *root = fixture("amd-7900xtx");
	gw_set_root(root);
	sysfs_gpu *s = NULL;
	size_t n = 0;
	gw_error err = {0};
	assert_int_equal(sysfs_scan(&s, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_false(s[0].id.integrated);
	assert_true(s[1].id.integrated);
	assert_non_null(strstr(s[0].hwmon, "hwmon2"));
	hw_gpu g = s[0].id;
	sysfs_dynamic(&s[0], &g, false);
	assert_int_equal(g.temp_c.st, HW_OK);
	assert_int_equal(g.temp_c.v, 51);
	assert_int_equal(g.power_mw.v, 98000);
	assert_int_equal(g.power_limit_mw.v, 339000);
	assert_int_equal(g.mem_free_bytes.v, 25753026560LL - 3221225472LL);
	/* the iGPU has no hwmon here: its temperature stays unknown */
	g = s[1].id;
	sysfs_dynamic(&s[1], &g, false);
	assert_int_not_equal(g.temp_c.st, HW_OK);
	free(s);
	free(root);

	root = fixture("fell-off-bus");
	gw_set_root(root);
	assert_int_equal(sysfs_scan(&s, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(s[0].id.fell_off_bus);
	assert_int_equal(s[0].id.pci_revision, 0xff);
	assert_false(s[1].id.fell_off_bus);
	free(s);
	free(root);

	root = fixture("malformed");
	gw_set_root(root);
	assert_int_not_equal(sysfs_scan(&s, &n, &err), 0);
	assert_non_null(strstr(err.msg, "vendor"));
	assert_null(s);
	free(root);
	gw_set_root(NULL);
}

/* ---- SMBIOS memory devices (dmi.c) ---------------------------------------- */
typedef struct dmi_buf {
	uint8_t b[8192];
	size_t n;
} dmi_buf;

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v & 0xff);
	p[1] = (uint8_t)(v >> 8);
}

/* A type 16 array (use: 3 system memory, 4 video memory). */
static void dmi_array(dmi_buf *d, unsigned handle, unsigned use)
{
	uint8_t *h = d->b + d->n;
	memset(h, 0, 0x17);
	h[0] = 16;
	h[1] = 0x17;
	put16(h + 2, handle);
	h[5] = (uint8_t)use;
	d->n += 0x17;
	d->b[d->n++] = 0;
	d->b[d->n++] = 0;
}

/* A type 17 device of SMBIOS 2.7 (formatted length 0x22): size in MiB (0:
 * empty slot), memory type byte, speed and configured speed in MT/s. */
static void dmi_device(dmi_buf *d, unsigned array, unsigned width, unsigned size_mib, unsigned type, unsigned speed,
		       unsigned configured, const char *dev_loc, const char *bank_loc)
{
	uint8_t *h = d->b + d->n;
	memset(h, 0, 0x22);
	h[0] = 17;
	h[1] = 0x22;
	put16(h + 2, 0x1100 + (unsigned)d->n);
	put16(h + 4, array);
	put16(h + 8, width);
	put16(h + 0x0A, width);
	if (size_mib >= 0x7FFF) {
		put16(h + 0x0C, 0x7FFF);
		put16(h + 0x1C, size_mib & 0xFFFF);
		put16(h + 0x1E, size_mib >> 16);
	} else {
		put16(h + 0x0C, size_mib);
	}
	h[0x10] = 1;
	h[0x11] = 2;
	h[0x12] = (uint8_t)type;
	put16(h + 0x15, speed);
	put16(h + 0x20, configured);
	d->n += 0x22;
	size_t a = strlen(dev_loc) + 1, b = strlen(bank_loc) + 1;
	memcpy(d->b + d->n, dev_loc, a);
	d->n += a;
	memcpy(d->b + d->n, bank_loc, b);
	d->n += b;
	d->b[d->n++] = 0;
}

static void dmi_end(dmi_buf *d)
{
	uint8_t *h = d->b + d->n;
	memset(h, 0, 4);
	h[0] = 127;
	h[1] = 4;
	d->n += 4;
	d->b[d->n++] = 0;
	d->b[d->n++] = 0;
}

static void test_dmi_desktops(void **state)
{
	(void)state;
	hw_host_memory m;
	gw_error err = {0};
	/* AMD desktop: DDR4-3200 in 2 of 4 slots, one per channel */
	dmi_buf d = {.n = 0};
	dmi_array(&d, 0x1000, 3);
	dmi_device(&d, 0x1000, 64, 16384, 0x1A, 3200, 3200, "DIMM 0", "P0 CHANNEL A");
	dmi_device(&d, 0x1000, 64, 0, 0x02, 0, 0, "DIMM 1", "P0 CHANNEL A");
	dmi_device(&d, 0x1000, 64, 16384, 0x1A, 3200, 3200, "DIMM 0", "P0 CHANNEL B");
	dmi_device(&d, 0x1000, 64, 0, 0x02, 0, 0, "DIMM 1", "P0 CHANNEL B");
	dmi_end(&d);
	assert_int_equal(hw_dmi_memory_parse(d.b, d.n, &m, &err), 0);
	assert_string_equal(m.type, "DDR4");
	assert_int_equal(m.mts, 3200);
	assert_int_equal(m.n_devices, 2);
	assert_int_equal(m.channels, 2);
	assert_true(m.bandwidth_gbs > 51.19 && m.bandwidth_gbs < 51.21);
	assert_int_equal(m.total_bytes, 32ULL << 30);

	/* Intel desktop: DDR5 rated 6400, run at 6000, four DIMMs in two channels */
	d.n = 0;
	dmi_device(&d, 0x1000, 64, 16384, 0x22, 6400, 6000, "Controller0-ChannelA-DIMM0", "BANK 0");
	dmi_device(&d, 0x1000, 64, 16384, 0x22, 6400, 6000, "Controller0-ChannelA-DIMM1", "BANK 1");
	dmi_device(&d, 0x1000, 64, 16384, 0x22, 6400, 6000, "Controller1-ChannelA-DIMM0", "BANK 2");
	dmi_device(&d, 0x1000, 64, 16384, 0x22, 6400, 5600, "Controller1-ChannelA-DIMM1", "BANK 3");
	dmi_end(&d);
	assert_int_equal(hw_dmi_memory_parse(d.b, d.n, &m, &err), 0);
	assert_string_equal(m.type, "DDR5");
	assert_int_equal(m.mts, 5600); /* the slowest device sets the bus */
	assert_int_equal(m.n_devices, 4);
	assert_int_equal(m.channels, 2);
	assert_true(m.bandwidth_gbs > 89.59 && m.bandwidth_gbs < 89.61);
}

static void test_dmi_server_and_lpddr(void **state)
{
	(void)state;
	hw_host_memory m;
	gw_error err = {0};
	/* 8-channel server: DDR4-3200 RDIMMs, one per channel, Dell-style
	 * locators naming no channel (each its own); a video-memory array is
	 * not host memory */
	dmi_buf d = {.n = 0};
	dmi_array(&d, 0x1000, 3);
	dmi_array(&d, 0x2000, 4);
	static const char *const loc[] = {"A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8"};
	for (size_t i = 0; i < 8; i++)
		dmi_device(&d, 0x1000, 64, 65536, 0x1A, 3200, 3200, loc[i], "Not Specified");
	dmi_device(&d, 0x2000, 64, 8192, 0x1A, 3200, 3200, "VRAM", "Not Specified");
	dmi_end(&d);
	assert_int_equal(hw_dmi_memory_parse(d.b, d.n, &m, &err), 0);
	assert_int_equal(m.n_devices, 8);
	assert_int_equal(m.channels, 8);
	assert_true(m.bandwidth_gbs > 204.79 && m.bandwidth_gbs < 204.81);
	assert_int_equal(m.total_bytes, 512ULL << 30);

	/* Strix Halo-like: LPDDR5X-8000 as 16 channels of 16 bits = 256 bits */
	d.n = 0;
	char dl[32];
	for (int i = 0; i < 16; i++) {
		snprintf(dl, sizeof dl, "Controller%d-Channel%c", i / 4, 'A' + i % 4);
		dmi_device(&d, 0x1000, 16, 8192, 0x23, 8000, 8000, dl, "BANK 0");
	}
	dmi_end(&d);
	assert_int_equal(hw_dmi_memory_parse(d.b, d.n, &m, &err), 0);
	assert_string_equal(m.type, "LPDDR5");
	assert_int_equal(m.bus_bits, 256);
	assert_int_equal(m.channels, 4);
	assert_true(m.bandwidth_gbs > 255.9 && m.bandwidth_gbs < 256.1);
	/* an extended size (128 GiB in one device) */
	d.n = 0;
	dmi_device(&d, 0x1000, 64, 131072, 0x22, 4800, 4800, "CPU1_DIMM_A1", "P1");
	dmi_end(&d);
	assert_int_equal(hw_dmi_memory_parse(d.b, d.n, &m, &err), 0);
	assert_int_equal(m.total_bytes, 128ULL << 30);
	assert_int_equal(m.channels, 1);
}

static void test_dmi_malformed(void **state)
{
	(void)state;
	hw_host_memory m;
	gw_error err = {0};
	dmi_buf d = {.n = 0};
	dmi_device(&d, 0x1000, 64, 16384, 0x22, 6000, 6000, "DIMM_A1", "BANK 0");
	dmi_device(&d, 0x1000, 64, 16384, 0x22, 6000, 6000, "DIMM_B1", "BANK 1");
	dmi_end(&d);
	/* every truncation: a clean answer, never a read past the end */
	for (size_t cut = 0; cut < d.n; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, d.b, cut);
		int rc = hw_dmi_memory_parse(copy, cut, &m, &err);
		assert_true(rc == 0 || rc == GW_ENOENT || rc == GW_EFORMAT);
		if (rc == 0)
			assert_true(m.bandwidth_gbs > 0 && m.bandwidth_gbs <= 96.01);
		free(copy);
	}
	/* lying lengths: too short, beyond the table */
	dmi_buf bad = d;
	bad.b[1] = 2;
	assert_int_not_equal(hw_dmi_memory_parse(bad.b, bad.n, &m, &err), 0);
	bad = d;
	bad.b[1] = 0xff;
	assert_int_not_equal(hw_dmi_memory_parse(bad.b, bad.n, &m, &err), 0);
	/* no speed anywhere */
	dmi_buf z = {.n = 0};
	dmi_device(&z, 0x1000, 64, 16384, 0x22, 0, 0, "DIMM_A1", "BANK 0");
	dmi_end(&z);
	assert_int_equal(hw_dmi_memory_parse(z.b, z.n, &m, &err), GW_EFORMAT);
	/* strings without their terminator: the walk ends */
	z.n = 0;
	dmi_device(&z, 0x1000, 64, 16384, 0x22, 6000, 6000, "DIMM_A1", "BANK 0");
	z.n -= 2; /* drop the last NUL pair */
	assert_int_not_equal(hw_dmi_memory_parse(z.b, z.n, &m, &err), 0);
}

static void test_dmi_root(void **state)
{
	(void)state;
	char root[256];
	const char *t = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/gw-dmi.XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(root));
	hw_host_memory m;
	gw_error err = {0};
	gw_set_root(root);
	/* no tables: ENOENT, the caller's fallback */
	assert_int_equal(hw_dmi_memory_read(&m, &err), GW_ENOENT);
	char *dir = xasprintf("%s/sys/firmware/dmi/tables", root), *cmd = xasprintf("mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	char *path = xasprintf("%s/DMI", dir);
	dmi_buf d = {.n = 0};
	dmi_device(&d, 0x1000, 64, 32768, 0x22, 6000, 6000, "DIMM_A1", "BANK 0");
	dmi_device(&d, 0x1000, 64, 32768, 0x22, 6000, 6000, "DIMM_B1", "BANK 1");
	dmi_end(&d);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d.b, 1, d.n, f), d.n);
	fclose(f);
	assert_int_equal(hw_dmi_memory_read(&m, &err), 0);
	assert_true(m.bandwidth_gbs > 95.99 && m.bandwidth_gbs < 96.01);
	assert_int_equal(m.channels, 2);
	gw_set_root(NULL);
	free(cmd);
	cmd = xasprintf("rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xid_kmsg),
		cmocka_unit_test(test_xid_dmesg),
		cmocka_unit_test(test_xid_mutations),
		cmocka_unit_test(test_xid_read),
		cmocka_unit_test(test_xid_root),
		cmocka_unit_test(test_throttle_words),
		cmocka_unit_test(test_pci_norm),
		cmocka_unit_test(test_container_id),
		cmocka_unit_test(test_sysfs_laptop),
		cmocka_unit_test(test_sysfs_amd_and_bad),
		cmocka_unit_test(test_dmi_desktops),
		cmocka_unit_test(test_dmi_server_and_lpddr),
		cmocka_unit_test(test_dmi_malformed),
		cmocka_unit_test(test_dmi_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

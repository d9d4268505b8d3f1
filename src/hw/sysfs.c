/*
 * sysfs.c: every PCI display controller of every vendor from
 * /sys/bus/pci/devices (under the root prefix), the kernel driver bound to
 * it and its runtime power state; amdgpu's own sysfs files for AMD GPUs.
 * Nothing here opens a vendor library, so nothing here wakes a GPU.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/hw_int.h"

/* PCI vendor ids (PCI-SIG; pci.ids) */
enum { PCI_NVIDIA = 0x10de, PCI_AMD = 0x1002, PCI_INTEL = 0x8086 };

bool hw_pci_norm(const char *in, char *out, size_t n)
{
	unsigned int dom = 0, bus, dev, fn;
	int used = 0;
	/* scanf's %x would also take "0x" prefixes and signs */
	if (strspn(in, "0123456789abcdefABCDEF:.") != strlen(in))
		return false;
	if (sscanf(in, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &used) != 4) {
		dom = 0;
		if (sscanf(in, "%x:%x.%x%n", &bus, &dev, &fn, &used) != 3)
			return false;
	}
	if (in[used] || dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return false;
	snprintf(out, n, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return true;
}

/* A hex sysfs attribute ("0x10de"); -1 absent, -2 malformed. */
static long long read_hex(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	char *s = gw_read_line(p);
	if (!s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 16);
	long long rc = (end == s || *end || errno || v < 0) ? -2 : v;
	free(s);
	return rc;
}

static void read_str(const char *dir, const char *name, char *out, size_t n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	char *s = gw_read_line(p);
	snprintf(out, n, "%s", s ? s : "");
	free(s);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first hwmon directory of an amdgpu device, "" when none. */
static void find_hwmon(const char *dir, char *out, size_t n)
{
	out[0] = '\0';
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/hwmon", dir);
	char *full = gw_path(p);
	DIR *d = opendir(full);
	free(full);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		if (str_starts(e->d_name, "hwmon")) {
			snprintf(out, n, "%.150s/%.40s", p, e->d_name);
			break;
		}
	closedir(d);
}

static hw_vendor vendor_of(uint32_t id)
{
	return id == PCI_NVIDIA ? HW_VENDOR_NVIDIA : id == PCI_AMD ? HW_VENDOR_AMD
		: id == PCI_INTEL ? HW_VENDOR_INTEL : HW_VENDOR_OTHER;
}

/* Read one device; 1 when it is a display controller, 0 when not, <0 malformed. */
static int read_device(const char *name, sysfs_gpu *s, gw_error *err)
{
	char dir[200];
	snprintf(dir, sizeof dir, "/sys/bus/pci/devices/%.160s", name);
	long long cls = read_hex(dir, "class");
	if (cls == -1)
		return 0;
	if (cls == -2)
		return gw_fail(err, GW_EFORMAT, "cannot read '%s/class': not a hex number", dir);
	/* PCI base class 0x03: display controller (PCI Code and ID Assignment spec) */
	if ((cls >> 16) != 0x03)
		return 0;
	memset(s, 0, sizeof *s);
	hw_gpu *g = &s->id;
	hw_gpu_clear(g);
	snprintf(s->dir, sizeof s->dir, "%s", dir);
	if (!hw_pci_norm(name, g->pci_bus_id, sizeof g->pci_bus_id))
		return gw_fail(err, GW_EFORMAT, "cannot read '%s': not a PCI address", dir);
	g->pci_class = (uint32_t)cls;
	long long vendor = read_hex(dir, "vendor"), device = read_hex(dir, "device");
	if (vendor < 0 || device < 0 || vendor > 0xffff || device > 0xffff)
		return gw_fail(err, GW_EFORMAT, "cannot read '%s/%s': %s", dir, vendor < 0 ? "vendor" : "device",
			       (vendor == -1 || (vendor >= 0 && device == -1)) ? "missing" : "not a 16-bit hex number");
	/* WSL 2's GPU-PV adapter, "Microsoft Corporation Basic Render Driver"
	 * (1414:008e in pci.ids): a window onto the Windows GPUs NVML lists,
	 * not a GPU of its own */
	if (vendor == 0x1414 && device == 0x008e)
		return 0;
	g->pci_vendor_id = (uint32_t)vendor;
	g->pci_device_id = (uint32_t)device;
	g->vendor = vendor_of(g->pci_vendor_id);
	long long sv = read_hex(dir, "subsystem_vendor"), sd = read_hex(dir, "subsystem_device");
	if (sv >= 0 && sd >= 0)
		g->pci_subsys_id = (uint32_t)(sd << 16 | sv);
	long long rev = read_hex(dir, "revision");
	g->pci_revision = rev >= 0 ? (int)rev : -1;
	/* config space reads all ones once a device has dropped off the bus */
	g->fell_off_bus = rev == 0xff;
	char p[PATH_MAX], link[PATH_MAX];
	snprintf(p, sizeof p, "%s/driver", dir);
	char *full = gw_path(p);
	ssize_t ln = readlink(full, link, sizeof link - 1);
	free(full);
	if (ln > 0) {
		link[ln] = '\0';
		const char *base = strrchr(link, '/');
		snprintf(g->kernel_driver, sizeof g->kernel_driver, "%.31s", base ? base + 1 : link);
	}
	read_str(dir, "power/runtime_status", g->runtime_status, sizeof g->runtime_status);
	/* Integrated: Intel's iGPU always sits at 00:02.0 (the heuristic nvtop
	 * uses); an AMD APU carves a small VRAM (<= 2 GiB, a heuristic) from
	 * system memory. */
	long long vram = 0;
	char vp[PATH_MAX];
	snprintf(vp, sizeof vp, "%s/mem_info_vram_total", dir);
	bool have_vram = gw_read_ll(vp, &vram) == 0;
	if (g->vendor == HW_VENDOR_INTEL)
		g->integrated = strcmp(g->pci_bus_id, "0000:00:02.0") == 0;
	else if (g->vendor == HW_VENDOR_AMD && have_vram)
		g->integrated = vram > 0 && (uint64_t)vram <= 2 * GiB;
	if (g->vendor == HW_VENDOR_AMD) {
		find_hwmon(dir, s->hwmon, sizeof s->hwmon);
		if (have_vram && !g->integrated)
			g->mem_total_bytes = (hw_val){vram, HW_OK, 0};
	}
	sysfs_pci_name(g->pci_vendor_id, g->pci_device_id, g->name, sizeof g->name);
	if (!g->name[0])
		snprintf(g->name, sizeof g->name, "%s GPU [%04x:%04x]", hw_vendor_name(g->vendor),
			 g->pci_vendor_id, g->pci_device_id);
	return 1;
}

int sysfs_scan(sysfs_gpu **out, size_t *n, gw_error *err)
{
	*out = NULL;
	*n = 0;
	char *full = gw_path("/sys/bus/pci/devices");
	DIR *d = opendir(full);
	int rc = 0;
	char **names = NULL;
	size_t nn = 0, cap = 0, gcap = 0;
	if (!d) {
		/* a machine without sysfs has no PCI GPUs to show; a test root that
		 * lacks it is a broken fixture */
		if (gw_root()[0])
			rc = gw_fail(err, GW_ENOENT, "cannot read '%s': %s", full, strerror(errno));
		goto out;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = xgrow(names, &cap, nn + 1, sizeof *names);
		names[nn++] = xstrdup(e->d_name);
	}
	if (nn)
		qsort(names, nn, sizeof *names, cmp_names);
	for (size_t i = 0; i < nn; i++) {
		sysfs_gpu s;
		int r = read_device(names[i], &s, err);
		if (r < 0) {
			rc = r;
			goto out;
		}
		if (r == 0)
			continue;
		*out = xgrow(*out, &gcap, *n + 1, sizeof **out);
		(*out)[(*n)++] = s;
	}
out:
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	if (d)
		closedir(d);
	free(full);
	return rc;
}

static void read_val(const char *dir, const char *name, int64_t div, hw_val *v)
{
	char p[PATH_MAX];
	long long x;
	snprintf(p, sizeof p, "%s/%s", dir, name);
	if (gw_read_ll(p, &x) == 0)
		*v = (hw_val){x / div, HW_OK, 0};
	else
		*v = (hw_val){0, HW_NOT_SUPPORTED, 0};
}

void sysfs_dynamic(const sysfs_gpu *s, hw_gpu *g, bool wake)
{
	read_str(s->dir, "power/runtime_status", g->runtime_status, sizeof g->runtime_status);
	if (g->vendor != HW_VENDOR_AMD || strcmp(g->kernel_driver, "amdgpu") != 0)
		return;
	if (strcmp(g->runtime_status, "suspended") == 0 && !wake) {
		g->asleep = true;
		return;
	}
	/* amdgpu sysfs (kernel Documentation/gpu/amdgpu/driver-misc.rst, thermal.rst) */
	read_val(s->dir, "mem_info_vram_total", 1, &g->mem_total_bytes);
	read_val(s->dir, "mem_info_vram_used", 1, &g->mem_used_bytes);
	if (HW_VALID(g->mem_total_bytes) && HW_VALID(g->mem_used_bytes))
		g->mem_free_bytes = (hw_val){g->mem_total_bytes.v - g->mem_used_bytes.v, HW_OK, 0};
	read_val(s->dir, "gpu_busy_percent", 1, &g->util_gpu_pct);
	read_val(s->dir, "mem_busy_percent", 1, &g->util_mem_pct);
	if (s->hwmon[0]) {
		/* hwmon: temperatures in millidegrees, power in microwatts */
		read_val(s->hwmon, "temp1_input", 1000, &g->temp_c);
		read_val(s->hwmon, "temp1_crit", 1000, &g->temp_shutdown_c);
		read_val(s->hwmon, "power1_average", 1000, &g->power_mw);
		if (!HW_VALID(g->power_mw))
			read_val(s->hwmon, "power1_input", 1000, &g->power_mw);
		read_val(s->hwmon, "power1_cap", 1000, &g->power_limit_mw);
		read_val(s->hwmon, "power1_cap_default", 1000, &g->power_default_limit_mw);
	}
}

/*
 * pci.ids (the PCI ID repository, pci-ids.ucw.cz) as lspci reads it.  A
 * device line is "\tdddd  name"; a bracketed marketing name wins.
 */
void sysfs_pci_name(uint32_t vendor, uint32_t device, char *out, size_t n)
{
	static const char *const files[] = {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids",
					    "/usr/share/pci.ids"};
	out[0] = '\0';
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		char *full = gw_path(files[f]);
		FILE *fp = fopen(full, "re");
		free(full);
		if (!fp)
			continue;
		char line[512];
		bool in_vendor = false;
		while (fgets(line, sizeof line, fp)) {
			if (line[0] == '#' || line[0] == '\n')
				continue;
			unsigned int id;
			if (line[0] != '\t') {
				if (in_vendor)
					break;
				in_vendor = sscanf(line, "%4x", &id) == 1 && id == vendor;
				continue;
			}
			if (!in_vendor || line[1] == '\t')
				continue;
			if (sscanf(line + 1, "%4x", &id) != 1 || id != device)
				continue;
			char *name = str_trim(line + 6);
			char *nl = strchr(name, '\n');
			if (nl)
				*nl = '\0';
			char *lb = strrchr(name, '['), *rb = lb ? strchr(lb, ']') : NULL;
			if (lb && rb && rb > lb + 1) {
				*rb = '\0';
				name = lb + 1;
			}
			snprintf(out, n, "%s", name);
			break;
		}
		fclose(fp);
		return;
	}
}

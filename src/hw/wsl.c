/*
 * wsl.c: which platform this is (bare-metal or container Linux, WSL 1,
 * WSL 2) and, on WSL 2, the VM's memory limit from the Windows user's
 * .wslconfig.  Every read goes through the root prefix.
 *
 * Signs of WSL 2 (Microsoft, "Comparing WSL versions" and "GPU acceleration
 * in WSL"; NVIDIA, "CUDA on WSL User Guide"): the kernel release names
 * Microsoft ("5.15.167.4-microsoft-standard-WSL2"), /dev/dxg is the GPU
 * paravirtualisation (GPU-PV) device, and /usr/lib/wsl/lib holds the Windows
 * driver's Linux libraries (libcuda.so.1, libnvidia-ml.so.1, nvidia-smi).
 * WSL 1 kernels read "4.4.0-19041-Microsoft" and have no GPU at all.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hw/hw.h"

static bool has_ci(const char *s, const char *w)
{
	return s && strcasestr(s, w) != NULL;
}

void hw_platform_detect(hw_platform_info *out)
{
	memset(out, 0, sizeof *out);
	char *rel = gw_read_line("/proc/sys/kernel/osrelease");
	char *ver = gw_read_line("/proc/version");
	if (rel)
		snprintf(out->kernel, sizeof out->kernel, "%s", rel);
	out->dxg = gw_exists("/dev/dxg");
	out->wsl_lib = gw_exists("/usr/lib/wsl/lib");
	bool ms = has_ci(rel, "microsoft") || has_ci(ver, "microsoft");
	bool wsl2_kernel = has_ci(rel, "WSL2") || has_ci(ver, "WSL2") || has_ci(rel, "microsoft-standard") ||
			   has_ci(ver, "microsoft-standard");
	/* a custom WSL 2 kernel may drop the name; GPU-PV and the driver folder stay */
	if (wsl2_kernel || out->dxg || out->wsl_lib)
		out->kind = HW_PLATFORM_WSL2;
	else if (ms)
		out->kind = HW_PLATFORM_WSL1;
	size_t l = 0;
	if (ms || wsl2_kernel)
		l += (size_t)snprintf(out->evidence + l, sizeof out->evidence - l, "kernel '%s'",
				      rel ? rel : "(osrelease unreadable; /proc/version names Microsoft)");
	if (out->dxg && l < sizeof out->evidence)
		l += (size_t)snprintf(out->evidence + l, sizeof out->evidence - l, "%s/dev/dxg", l ? ", " : "");
	if (out->wsl_lib && l < sizeof out->evidence)
		snprintf(out->evidence + l, sizeof out->evidence - l, "%s/usr/lib/wsl/lib", l ? ", " : "");
	free(rel);
	free(ver);
}

hw_platform_kind hw_platform(void)
{
	hw_platform_info p;
	hw_platform_detect(&p);
	return p.kind;
}

const char *hw_platform_name(hw_platform_kind k)
{
	switch (k) {
	case HW_PLATFORM_WSL1: return "wsl1";
	case HW_PLATFORM_WSL2: return "wsl2";
	default: return "linux";
	}
}

/* The memory= value of the [wsl2] section; 0 when absent or unreadable.
 * WSL reads "GB"/"MB" as 1024-based sizes [assumption: the VM's MemTotal
 * matches GiB, not 10^9]. */
static uint64_t wslconfig_memory(const char *path, char *raw, size_t rawn)
{
	char *text;
	uint64_t bytes = 0;
	if (gw_read_file(path, true, 1 << 16, &text, NULL, NULL))
		return 0;
	bool in_wsl2 = false;
	char *save = NULL;
	for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
		char *t = str_trim(line);
		char *hash = strpbrk(t, "#;");
		if (hash)
			*hash = '\0';
		t = str_trim(t);
		if (*t == '[') {
			in_wsl2 = strncasecmp(t, "[wsl2]", 6) == 0;
			continue;
		}
		if (!in_wsl2 || strncasecmp(t, "memory", 6) != 0)
			continue;
		char *eq = strchr(t, '=');
		if (!eq || *str_trim(t + 6) != '=')
			continue;
		char *v = str_trim(eq + 1);
		char num[64];
		snprintf(num, sizeof num, "%s", v);
		size_t nl = strlen(num);
		/* GB/MB/KB/TB -> the binary suffixes parse_size knows */
		if (nl >= 2 && (num[nl - 1] == 'B' || num[nl - 1] == 'b') && strchr("KkMmGgTt", num[nl - 2]))
			num[nl - 1] = '\0';
		uint64_t b;
		if (parse_size(num, &b) == 0 && b > 0) {
			bytes = b;
			snprintf(raw, rawn, "%s", v);
		}
	}
	free(text);
	return bytes;
}

int hw_wsl_memory_read(hw_wsl_memory *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	uint64_t avail = 0;
	int rc = hw_meminfo(&out->vm_total_bytes, &avail, err);
	if (rc)
		return rc;
	/* the Windows user profiles, seen through the C: drive's automount */
	char *pat = gw_path("/mnt/c/Users/*/.wslconfig");
	glob_t g;
	size_t rl = strlen(gw_root());
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *p = g.gl_pathv[i] + rl;
			char raw[64] = "";
			uint64_t b = wslconfig_memory(p, raw, sizeof raw);
			if (!*out->wslconfig || (b && !out->limit_bytes)) {
				snprintf(out->wslconfig, sizeof out->wslconfig, "%s", p);
				out->limit_bytes = b;
				if (b)
					snprintf(out->rule, sizeof out->rule, "memory=%s in %s", raw, p);
			}
		}
		globfree(&g);
	}
	free(pat);
	if (!out->limit_bytes) {
		/* Microsoft, "Advanced settings configuration in WSL" (.wslconfig,
		 * memory: "50% of total memory on Windows") */
		out->windows_ram_bytes_est = out->vm_total_bytes * 2;
		snprintf(out->rule, sizeof out->rule, "no memory= in %s: WSL's default, 50%% of the Windows RAM",
			 *out->wslconfig ? out->wslconfig : "a .wslconfig under /mnt/c/Users");
	}
	return 0;
}

/*
 * checks.c: the doctor's checks over a hardware snapshot, the discovered
 * software stack and the kernel log.  Each check adds findings
 * {id, severity, group, title, evidence, fix}; nothing here prints.
 * Thresholds cite their source where they come from the world.
 */
#include "doctor/doctor.h"
#include "kb/lifecycle.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hw/hw.h"
#include "kb/kb.h"
#include "stack/stack.h"

/* ---- report -------------------------------------------------------------- */

static const char *const sev_names[] = {N_("ok"), N_("info"), N_("skip"), N_("warn"), N_("fail")};
static const char *const group_names[] = {N_("Hardware"), N_("Driver"), N_("CUDA"), N_("Python and PyTorch"), N_("Health"),
					  N_("Desktop and browser")};

const char *doctor_severity_name(doctor_severity s)
{
	return (unsigned)s < DOC_NSEV ? sev_names[s] : "?";
}

const char *doctor_group_name(doctor_group g)
{
	return (unsigned)g < DG_COUNT ? group_names[g] : "?";
}

doctor_finding *doctor_add(doctor_report *rep, const char *id, doctor_severity sev, doctor_group g, int gpu)
{
	rep->findings = xrealloc(rep->findings, (rep->n + 1) * sizeof *rep->findings);
	doctor_finding *f = &rep->findings[rep->n++];
	memset(f, 0, sizeof *f);
	f->id = xstrdup(id);
	f->severity = sev;
	f->group = g;
	f->gpu = gpu;
	f->gpu_mask = gpu >= 0 && gpu < 64 ? 1ULL << gpu : 0;
	return f;
}

static bool same_text(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

void doctor_merge_duplicates(doctor_report *rep)
{
	size_t n = 0;
	for (size_t i = 0; i < rep->n; i++) {
		doctor_finding *f = &rep->findings[i];
		size_t k;
		for (k = 0; k < n; k++) {
			doctor_finding *g = &rep->findings[k];
			if (strcmp(g->id, f->id) == 0 && g->severity == f->severity && g->group == f->group &&
			    same_text(g->title, f->title) && same_text(g->evidence, f->evidence) && same_text(g->fix, f->fix))
				break;
		}
		if (k < n) {
			rep->findings[k].gpu_mask |= f->gpu_mask;
			if (rep->findings[k].gpu < 0)
				rep->findings[k].gpu = f->gpu;
			free(f->id);
			free(f->title);
			free(f->evidence);
			free(f->fix);
			continue;
		}
		if (n != i)
			rep->findings[n] = *f;
		n++;
	}
	rep->n = n;
}

void doctor_report_release(doctor_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->findings[i].id);
		free(rep->findings[i].title);
		free(rep->findings[i].evidence);
		free(rep->findings[i].fix);
	}
	free(rep->findings);
	memset(rep, 0, sizeof *rep);
}

doctor_severity doctor_worst(const doctor_report *rep)
{
	doctor_severity w = DOC_OK;
	for (size_t i = 0; i < rep->n; i++)
		if (rep->findings[i].severity > w)
			w = rep->findings[i].severity;
	return w;
}

/* Set the three texts of a finding (evidence and fix may be NULL). */
static void say(doctor_finding *f, char *title, char *evidence, char *fix)
{
	f->title = title;
	f->evidence = evidence ? evidence : xstrdup("");
	f->fix = fix ? fix : xstrdup("");
}

/* ---- helpers ------------------------------------------------------------- */

static bool is_nvidia(const hw_gpu *g)
{
	return g->vendor == HW_VENDOR_NVIDIA;
}

static size_t count_nvidia(const hw_snapshot *snap)
{
	size_t n = 0;
	for (size_t i = 0; snap && i < snap->n_gpus; i++)
		n += is_nvidia(&snap->gpus[i]);
	return n;
}

static const char *gpu_label(const hw_gpu *g, char *buf, size_t n)
{
	snprintf(buf, n, "GPU %d (%s, %s)", g->index, *g->name ? g->name : "unnamed", g->pci_bus_id);
	return buf;
}

static bool has_cc(const hw_gpu *g)
{
	return HW_VALID(g->cc_major) && HW_VALID(g->cc_minor);
}

/* "+cu124" -> "12.4" (for a torch whose version.py lacks the cuda field) */
static void variant_cuda(const char *version, char *out, size_t n)
{
	out[0] = '\0';
	const char *p = strstr(version, "+cu");
	if (p && isdigit((unsigned char)p[3])) {
		const char *d = p + 3;
		size_t l = strspn(d, "0123456789");
		if (l >= 3)
			snprintf(out, n, "%.*s.%.*s", (int)(l - 1), d, 1, d + l - 1);
	}
}

/* The arch list of a torch release and CUDA variant from data/torch-builds.tsv. */
static const char *table_arch_list(const char *torch_version, const char *cuda)
{
	const kb_table *t = kb_get_table("torch-builds", NULL);
	if (!t || !*cuda)
		return NULL;
	char rel[16];
	int ma, mi;
	if (sscanf(torch_version, "%d.%d", &ma, &mi) != 2)
		return NULL;
	snprintf(rel, sizeof rel, "%d.%d", ma, mi);
	long ct = kb_col(t, "torch"), cc = kb_col(t, "cuda"), ca = kb_col(t, "arch_list");
	for (size_t r = 0; r < t->nrows; r++)
		if (strcmp(kb_cell(t, r, ct), rel) == 0 && strcmp(kb_cell(t, r, cc), cuda) == 0)
			return kb_cell(t, r, ca);
	return NULL;
}

/* WSL: the GPU is the Windows driver's; PCI, module and Xid checks do not apply */
static bool on_wsl(const doctor_input *in)
{
	return in->platform && in->platform->kind != HW_PLATFORM_LINUX;
}

/* "upgrade the driver to >= MIN" + tail; on WSL the Windows driver's install line */
static char *upgrade_fix(const doctor_input *in, const char *min, const char *tail)
{
	if (on_wsl(in)) {
		char *w = doctor_wsl_driver_fix(min);
		char *r = xasprintf("%s%s", w, tail);
		free(w);
		return r;
	}
	return xasprintf(_("upgrade the NVIDIA driver to >= %s%s"), min, tail);
}

static const char *driver_of(const doctor_input *in)
{
	return in->hw && *in->hw->driver_version ? in->hw->driver_version : NULL;
}

/* ---- Hardware ------------------------------------------------------------ */

/* Secure Boot state from the EFI variable: its last byte is 1 when enabled
 * (UEFI spec, SecureBoot variable of EFI_GLOBAL_VARIABLE 8be4df61-...). */
static int secure_boot_on(void)
{
	char *data;
	size_t len;
	if (gw_read_file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", true, 64,
			 &data, &len, NULL))
		return -1;
	int on = len >= 5 ? data[4] == 1 : len ? data[len - 1] == 1 : -1;
	free(data);
	return on;
}

static bool nvidia_module_loaded(void)
{
	char *mods;
	bool loaded = false;
	if (gw_read_file("/proc/modules", true, 1 << 20, &mods, NULL, NULL) == 0) {
		loaded = str_starts(mods, "nvidia ") || strstr(mods, "\nnvidia ") != NULL;
		free(mods);
	}
	return loaded || gw_exists("/sys/module/nvidia");
}


/*
 * NVML answers for g with a driver version while sysfs has no PCI device
 * for it at all (a container's /sys, a test root): the nvidia module is
 * loaded and drives the GPU.  A PCI device that sysfs does list without a
 * driver link stays "no driver bound" (sysfs sees the device and says so).
 */
static bool nvml_without_sysfs(const hw_snapshot *snap, const hw_gpu *g)
{
	if (g->nvml_index < 0 || !*snap->driver_version || !*g->pci_bus_id)
		return false;
	char *abs = xasprintf("/sys/bus/pci/devices/%s", g->pci_bus_id);
	char *p = gw_path(abs);
	struct stat st;
	bool present = stat(p, &st) == 0;
	free(p);
	free(abs);
	return !present;
}

static void check_hardware(const doctor_input *in, doctor_report *rep)
{
	const hw_snapshot *snap = in->hw;
	char lb[192];
	size_t nv = count_nvidia(snap);
	if ((!snap || snap->n_gpus == 0) && on_wsl(in)) {
		doctor_finding *f = doctor_add(rep, "no-gpu", DOC_FAIL, DG_HARDWARE, -1);
		char *drv = doctor_wsl_driver_fix(NULL);
		say(f, xstrdup(_("no GPU visible in WSL")),
		    xasprintf(_("NVML %s%s"), snap && *snap->nvml_error ? _("says: ") : _("lists no GPU"),
			      snap && *snap->nvml_error ? snap->nvml_error : ""),
		    xasprintf(_("%s; a GPU in TCC mode is invisible to WSL (on Windows, in an administrator prompt: "
			      "nvidia-smi -g 0 -dm 0 selects WDDM); Windows Server before 2022 has no GPU-PV"), drv));
		free(drv);
		return;
	}
	if (!snap || snap->n_gpus == 0) {
		doctor_finding *f = doctor_add(rep, "no-gpu", DOC_FAIL, DG_HARDWARE, -1);
		say(f, xstrdup(_("no GPU found")),
		    xasprintf(_("no display or 3D controller on the PCI bus%s%s"), snap && *snap->nvml_error ? "; NVML: " : "",
			      snap && *snap->nvml_error ? snap->nvml_error : ""),
		    xstrdup(_("check lspci -nn | grep -Ei 'vga|3d'; in a VM or container make sure the GPU is passed "
			    "through (docker run --gpus all)")));
		return;
	}
	if (nv == 0) {
		doctor_finding *f = doctor_add(rep, "no-nvidia-gpu", DOC_WARN, DG_HARDWARE, -1);
		say(f, xstrdup(_("no NVIDIA GPU: CUDA cannot run here")),
		    xasprintf(_("%zu GPU(s), none from NVIDIA (first: %s)"), snap->n_gpus, snap->gpus[0].name), NULL);
	}
	int sb = -2;
	bool hybrid_done = false;
	for (size_t i = 0; i < snap->n_gpus; i++) {
		const hw_gpu *g = &snap->gpus[i];
		if (!is_nvidia(g))
			continue;
		gpu_label(g, lb, sizeof lb);
		if (g->fell_off_bus || g->pci_revision == 0xff) {
			doctor_finding *f = doctor_add(rep, "gpu-fell-off-bus", DOC_FAIL, DG_HARDWARE, g->index);
			say(f, xasprintf(_("%s fell off the bus"), lb),
			    xasprintf(_("PCI config space reads revision 0x%02x (all ones: the device does not answer)%s"),
				      g->pci_revision & 0xff, g->fell_off_bus ? _("; the driver reports the GPU lost") : ""),
			    xstrdup(_("reboot (a GPU reset is required); then check temperatures, power cables, seating "
				    "and the system BIOS; repeated events: take the GPU out of service")));
			continue;
		}
		if (on_wsl(in) && !*g->kernel_driver) {
			/* no PCI device in WSL: the Windows driver drives the GPU */
		} else if (strcmp(g->kernel_driver, "nouveau") == 0) {
			doctor_finding *f = doctor_add(rep, "nouveau-conflict", DOC_FAIL, DG_HARDWARE, g->index);
			say(f, xasprintf(_("%s is driven by nouveau, not the NVIDIA driver"), lb),
			    xstrdup(_("the kernel bound nouveau to the device; CUDA needs nvidia.ko")),
			    xstrdup(_("printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
				    "/etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot")));
			continue;
		} else if (!*g->kernel_driver && nvml_without_sysfs(snap, g)) {
			/* NVML answers for this GPU with a driver version: nvidia.ko is loaded and drives it, whatever
			 * sysfs lacks (a container's or a test root's /sys without the PCI device).  One verdict from
			 * both sources: the driver is bound; the missing sysfs entry is a fact, not a second verdict. */
			doctor_finding *f = doctor_add(rep, "gpu-sysfs", DOC_INFO, DG_HARDWARE, g->index);
			say(f, xasprintf(_("%s: no PCI sysfs entry, but NVML reports driver %s driving it"), lb,
					 snap->driver_version),
			    xasprintf(_("no driver link under /sys/bus/pci/devices/%s (a container or a restricted /sys); "
					"NVML answers for the GPU, so the nvidia module is loaded and bound"),
				      g->pci_bus_id),
			    NULL);
		} else if (!*g->kernel_driver) {
			if (sb == -2)
				sb = secure_boot_on();
			bool loaded = nvidia_module_loaded();
			if (sb == 1 && !loaded) {
				doctor_finding *f = doctor_add(rep, "secure-boot", DOC_FAIL, DG_HARDWARE, g->index);
				say(f, xasprintf(_("%s has no driver: Secure Boot is on and the nvidia module is not loaded"), lb),
				    xstrdup(_("SecureBoot EFI variable = 1; nvidia is not in /proc/modules (an unsigned module "
					    "is refused: 'Key was rejected by service')")),
				    xstrdup(_("sudo mokutil --import /var/lib/dkms/mok.pub, reboot and enroll the key in the "
					    "MOK manager (or disable Secure Boot in the firmware)")));
			} else {
				doctor_finding *f = doctor_add(rep, "no-driver", DOC_FAIL, DG_HARDWARE, g->index);
				say(f, xasprintf(_("%s has no driver bound"), lb),
				    xasprintf(_("no driver link under /sys/bus/pci/devices/%s; nvidia module %s"), g->pci_bus_id,
					      loaded ? _("loaded but not bound") : _("not loaded")),
				    xstrdup(loaded ? _("sudo dmesg | grep -i nvrm (why the probe failed); reboot after a "
							       "driver upgrade")
						   : _("install the driver (Debian/Ubuntu: sudo apt install nvidia-driver) and "
						       "reboot; if installed: sudo modprobe nvidia and check dkms status")));
			}
			continue;
		}
		doctor_finding *f = doctor_add(rep, "gpu", DOC_OK, DG_HARDWARE, g->index);
		char cc[16] = "unknown";
		if (has_cc(g))
			snprintf(cc, sizeof cc, "%lld.%lld", (long long)g->cc_major.v, (long long)g->cc_minor.v);
		char mem[32] = "unknown";
		if (HW_VALID(g->mem_total_bytes))
			fmt_bytes(mem, sizeof mem, (uint64_t)g->mem_total_bytes.v);
		say(f, xasprintf("%s", lb),
		    xasprintf(_("compute capability %s, %s, driver %s%s"), cc, mem,
			      *g->kernel_driver ? g->kernel_driver
			      : on_wsl(in)      ? _("the Windows driver's (GPU-PV)")
			      : nvml_without_sysfs(snap, g) ? _("nvidia (per NVML)")
						: _("none"),
			      g->asleep ? _(", runtime-suspended (not woken)") : ""),
		    NULL);
		const kb_lifecycle *lc = has_cc(g) ? kb_lifecycle_for_cc(cc) : NULL;
		if (lc) {
			/* the wheel's tag is the first word of torch_wheel ("cu126 (legacy; ...)") */
			char wheel[32];
			snprintf(wheel, sizeof wheel, "%.*s", (int)strcspn(lc->torch_wheel, " "), lc->torch_wheel);
			doctor_finding *l = doctor_add(rep, "gpu-lifecycle", DOC_INFO, DG_HARDWARE, g->index);
			say(l, xasprintf(_("%s (%s, compute capability %s): its software support is ending"), lb, lc->arch, cc),
			    xasprintf(_("as of %s: last PyTorch %s, wheel %s; last driver branch %s; builds: %s; prebuilt "
				      "engines: %s; hardware: %s (data/lifecycle.tsv cites the sources)"),
				      lc->as_of, *lc->last_torch ? lc->last_torch : _("current"), _(lc->torch_wheel),
				      *lc->last_driver ? lc->last_driver : _("current"), _(lc->cuda_build), _(lc->prebuilt),
				      _(lc->hardware)),
			    xasprintf(_("keep PyTorch at %s (pip install 'torch~=%s.0' --index-url "
				      "https://download.pytorch.org/whl/%s) and the driver on the %s branch; build "
				      "llama.cpp and other CUDA code with a CUDA 12.x toolkit "
				      "(cmake -DCMAKE_CUDA_ARCHITECTURES=%lld%lld)"),
				      *lc->last_torch ? lc->last_torch : "the newest", *lc->last_torch ? lc->last_torch : "2",
				      wheel,
				      *lc->last_driver ? lc->last_driver : "current",
				      (long long)g->cc_major.v, (long long)g->cc_minor.v));
		}
		if (!hybrid_done && !g->integrated && !on_wsl(in)) {
			const hw_gpu *igpu = NULL;
			for (size_t k = 0; k < snap->n_gpus; k++)
				if (snap->gpus[k].integrated || (!is_nvidia(&snap->gpus[k]) && snap->gpus[k].vendor != HW_VENDOR_OTHER))
					igpu = &snap->gpus[k];
			if (igpu && igpu->integrated) {
				hybrid_done = true;
				const char *off = getenv("__NV_PRIME_RENDER_OFFLOAD");
				const char *glx = getenv("__GLX_VENDOR_LIBRARY_NAME");
				bool set = off && strcmp(off, "1") == 0 && glx && strcmp(glx, "nvidia") == 0;
				doctor_finding *h = doctor_add(rep, "hybrid-graphics", DOC_INFO, DG_HARDWARE, g->index);
				say(h, xasprintf(_("hybrid laptop: %s plus the integrated %s"), g->name, igpu->name),
				    xasprintf(_("CUDA programs always run on the NVIDIA GPU; the desktop renders on the iGPU. "
					      "PRIME render offload variables are %s%s"),
					      set ? _("set in this shell") : _("not set"),
					      g->asleep ? _("; the dGPU is runtime-suspended and wakes on first use") : ""),
				    xstrdup(_("to render a program on the dGPU: __NV_PRIME_RENDER_OFFLOAD=1 "
					    "__GLX_VENDOR_LIBRARY_NAME=nvidia PROGRAM (Vulkan: also "
					    "__VK_LAYER_NV_optimus=NVIDIA_only); check with "
					    "__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia glxinfo | grep 'OpenGL renderer'")));
			}
		}
	}
}

/* CUDA_VISIBLE_DEVICES: CUDA stops at the first invalid entry (CUDA C
 * Programming Guide, "CUDA Environment Variables"). */
static void check_visible_devices(const doctor_input *in, doctor_report *rep)
{
	const hw_snapshot *snap = in->hw;
	size_t nv = count_nvidia(snap);
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	if (cvd && nv) {
		char *c = xstrdup(cvd);
		char *parts[64];
		size_t np = str_split(c, ',', parts, 64);
		size_t valid = 0;
		const char *bad = NULL;
		strbuf seen = STRBUF_INIT;
		for (size_t i = 0; i < np && i < 64; i++) {
			char *e = str_trim(parts[i]);
			bool ok = false;
			if (*e && strspn(e, "0123456789") == strlen(e)) {
				long idx = atol(e);
				ok = idx >= 0 && (size_t)idx < nv;
				if (ok)
					sb_printf(&seen, "%s%s -> %s", valid ? ", " : "", e, snap->gpus[idx].name);
			} else if (str_starts(e, "GPU-") || str_starts(e, "MIG-")) {
				for (size_t k = 0; k < snap->n_gpus && !ok; k++)
					if (is_nvidia(&snap->gpus[k]) && str_starts(snap->gpus[k].uuid, e))
						ok = true;
				ok = ok || str_starts(e, "MIG-");
				if (ok)
					sb_printf(&seen, "%s%s", valid ? ", " : "", e);
			}
			if (!ok) {
				bad = cvd + (e - c);
				break;
			}
			valid++;
		}
		sb_puts(&seen, "");
		if (valid == 0) {
			doctor_finding *f = doctor_add(rep, "cuda-visible-devices", DOC_FAIL, DG_DRIVER, -1);
			say(f, xstrdup(_("CUDA_VISIBLE_DEVICES hides every GPU")),
			    xasprintf(_("CUDA_VISIBLE_DEVICES='%s' but this machine has %zu NVIDIA GPU(s) (indices 0-%zu); "
				      "CUDA stops at the first invalid entry"), cvd, nv, nv - 1),
			    xstrdup(_("unset CUDA_VISIBLE_DEVICES, or set it to valid indices or UUIDs (nvidia-smi -L)")));
		} else if (bad) {
			doctor_finding *f = doctor_add(rep, "cuda-visible-devices", DOC_WARN, DG_DRIVER, -1);
			say(f, xasprintf(_("CUDA_VISIBLE_DEVICES names a GPU that does not exist: CUDA ignores it and "
					 "everything after it")),
			    xasprintf(_("CUDA_VISIBLE_DEVICES='%s'; CUDA sees only: %s"), cvd, seen.buf),
			    xstrdup(_("fix the list: nvidia-smi -L shows the indices and UUIDs")));
		} else {
			doctor_finding *f = doctor_add(rep, "cuda-visible-devices", DOC_OK, DG_DRIVER, -1);
			say(f, xasprintf(_("CUDA_VISIBLE_DEVICES selects %zu of %zu GPU(s)"), valid, nv),
			    xasprintf(_("CUDA_VISIBLE_DEVICES='%s': %s (CUDA renumbers them from 0)"), cvd, seen.buf), NULL);
		}
		sb_release(&seen);
		free(c);
	}
	if (snap && *snap->cuda_order_note) {
		const char *order = getenv("CUDA_DEVICE_ORDER");
		bool pci = order && strcmp(order, "PCI_BUS_ID") == 0;
		doctor_finding *f = doctor_add(rep, "cuda-order", pci ? DOC_OK : DOC_WARN, DG_DRIVER, -1);
		say(f, xstrdup(pci ? _("CUDA numbers GPUs in PCI order (CUDA_DEVICE_ORDER=PCI_BUS_ID)")
				   : _("CUDA and nvidia-smi number the GPUs differently")),
		    xstrdup(snap->cuda_order_note),
		    pci ? NULL : xstrdup(_("export CUDA_DEVICE_ORDER=PCI_BUS_ID (then cuda:N is nvidia-smi's GPU N)")));
	}
}

/* ---- Driver -------------------------------------------------------------- */

static void check_driver(const doctor_input *in, doctor_report *rep)
{
	const hw_snapshot *snap = in->hw;
	if (!snap || count_nvidia(snap) == 0)
		return;
	bool bound = false;
	for (size_t i = 0; i < snap->n_gpus; i++)
		bound |= is_nvidia(&snap->gpus[i]) && strcmp(snap->gpus[i].kernel_driver, "nvidia") == 0;
	if (*snap->driver_version) {
		doctor_finding *f = doctor_add(rep, "driver", DOC_OK, DG_DRIVER, -1);
		char cv[16] = "unknown";
		if (HW_VALID(snap->cuda_driver_version))
			cuda_version_decode((long)snap->cuda_driver_version.v, cv, sizeof cv);
		say(f, xasprintf(_("NVIDIA %sdriver %s (supports CUDA up to %s)"), on_wsl(in) ? "Windows " : "",
				 snap->driver_version, cv),
		    xasprintf(_("NVML %s from %s"), *snap->nvml_version ? snap->nvml_version : "?",
			      *snap->nvml_path ? snap->nvml_path : "?"),
		    NULL);
		if (strstr(snap->nvml_path, "/stubs/")) {
			doctor_finding *s = doctor_add(rep, "nvml-version-warning", DOC_WARN, DG_DRIVER, -1);
			say(s, xstrdup(_("the NVML library loaded is the CUDA toolkit's stub")),
			    xasprintf(_("loaded from %s"), snap->nvml_path),
			    xstrdup(_("remove the toolkit's lib/stubs directory from LD_LIBRARY_PATH")));
		}
		return;
	}
	if (!bound && !snap->nvml_loaded && !on_wsl(in))
		return; /* already reported as no driver / nouveau under Hardware */
	const char *e = snap->nvml_error;
	bool mismatch = strstr(e, "mismatch") || strstr(e, "MISMATCH");
	doctor_finding *f = doctor_add(rep, mismatch ? "driver-library-mismatch" : "nvml-failed", DOC_FAIL, DG_DRIVER, -1);
	if (on_wsl(in))
		say(f, xstrdup(mismatch ? _("NVML and the Windows driver disagree: a Linux driver's library is loaded")
					: "the NVIDIA management library (NVML) does not work"),
		    xasprintf(_("NVML: %s"), *e ? e : _("libnvidia-ml.so.1 not loaded")),
		    mismatch ? xstrdup(_("remove the Linux driver inside WSL (the wsl-linux-driver finding gives the "
				       "command), then in PowerShell: wsl --shutdown"))
			     : doctor_wsl_driver_fix(NULL));
	else if (mismatch)
		say(f, xstrdup(_("the NVIDIA kernel module and user-space libraries have different versions")),
		    xasprintf(_("NVML: %s"), e),
		    xstrdup(_("reboot (or reload the modules: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && "
			    "sudo modprobe nvidia)")));
	else
		say(f, xstrdup(_("the NVIDIA management library (NVML) does not work")),
		    xasprintf("%s", *e ? e : _("libnvidia-ml.so.1 not loaded")),
		    xstrdup(_("make sure the driver's libnvidia-ml.so.1 is installed and on the loader path "
			    "(ldconfig -p | grep libnvidia-ml), then nvidia-smi must work")));
}

/* ---- CUDA toolkits ----------------------------------------------------------- */

/* Compare a driver with what CUDA version X.Y needs: 0 full support, 1 minor-
 * version compatibility only, 2 too old.  Writes the two thresholds. */
static int driver_vs_cuda(const char *driver, const char *cuda, char *full, size_t fn, char *floor, size_t fln,
			  bool windows)
{
	if (windows) /* WSL: NVML reports the Windows driver's number */
		compat_driver_min_windows(cuda, full, fn);
	else
		compat_driver_min(cuda, full, fn);
	compat_minor_floor(atoi(cuda), floor, fln);
	if (!*full || version_cmp(driver, full) >= 0)
		return 0;
	if (*floor && version_cmp(driver, floor) >= 0)
		return 1;
	return 2;
}

static bool toolkit_knows_cc(const char *version, int ma, int mi)
{
	const kb_table *t = kb_get_table("cuda-arch", NULL);
	if (!t)
		return true;
	long cc = kb_col(t, "cuda"), cl = kb_col(t, "ccs");
	const char *best = NULL, *list = NULL;
	for (size_t r = 0; r < t->nrows; r++) {
		const char *c = kb_cell(t, r, cc);
		if (version_cmp(c, version) <= 0 && (!best || version_cmp(c, best) > 0)) {
			best = c;
			list = kb_cell(t, r, cl);
		}
	}
	if (!list)
		return true;
	char want[16];
	snprintf(want, sizeof want, "%d.%d", ma, mi);
	for (const char *p = list; (p = strstr(p, want)); p++)
		if ((p == list || p[-1] == ' ') && (p[strlen(want)] == ' ' || !p[strlen(want)]))
			return true;
	return false;
}

static void check_cuda(const doctor_input *in, doctor_report *rep)
{
	const stack_info *st = in->stack;
	const char *drv = driver_of(in);
	if (!st)
		return;
	if (st->n_toolkits == 0) {
		doctor_finding *f = doctor_add(rep, "cuda-toolkit", DOC_INFO, DG_CUDA, -1);
		say(f, xstrdup(_("no CUDA toolkit installed (PyTorch wheels bring their own CUDA runtime)")),
		    xstrdup(_("looked in /usr/local/cuda*, /opt/cuda*, CUDA_HOME/CUDA_PATH, PATH and conda environments")),
		    NULL);
	}
	const stack_toolkit *first = NULL, *home = NULL;
	for (size_t i = 0; i < st->n_toolkits; i++) {
		const stack_toolkit *t = &st->toolkits[i];
		if (t->path_rank == 0)
			first = t;
		if (t->is_cuda_home)
			home = t;
		char ev[1400];
		snprintf(ev, sizeof ev, _("%s (found via %s%s%s)"), t->root, t->how, *t->version_from ? _(", version from ") : "",
			 t->version_from);
		if (!*t->version || !drv) {
			doctor_finding *f = doctor_add(rep, "cuda-toolkit", DOC_OK, DG_CUDA, -1);
			say(f, xasprintf(_("CUDA toolkit %s"), *t->version ? t->version : _("of unknown version")), xstrdup(ev), NULL);
			continue;
		}
		char full[32], floor[32];
		int v = driver_vs_cuda(drv, t->version, full, sizeof full, floor, sizeof floor, on_wsl(in));
		doctor_finding *f = doctor_add(rep, v == 0 ? "cuda-toolkit" : "toolkit-driver",
					       v == 0 ? DOC_OK : DOC_WARN, DG_CUDA, -1);
		if (v == 0)
			say(f, xasprintf(_("CUDA toolkit %s works with driver %s"), t->version, drv), xstrdup(ev), NULL);
		else if (v == 1)
			say(f, xasprintf(_("CUDA toolkit %s: driver %s is below its minimum %s"), t->version, drv, full),
			    xasprintf(_("%s; programs built with it run through minor-version compatibility (driver >= %s), "
				      "but PTX JIT and newer APIs need >= %s"), ev, floor, full),
			    on_wsl(in) ? upgrade_fix(in, full, "") : xasprintf(_("upgrade the driver to >= %s"), full));
		else
			say(f, xasprintf(_("CUDA toolkit %s needs driver >= %s; this driver is %s"), t->version, full, drv),
			    xstrdup(ev), on_wsl(in) ? upgrade_fix(in, full, _("; or use a toolkit of the driver's CUDA"))
						    : xasprintf(_("upgrade the driver to >= %s, or use a toolkit of the driver's CUDA"), full));
		/* can it compile for the GPUs here? */
		for (size_t k = 0; in->hw && k < in->hw->n_gpus; k++) {
			const hw_gpu *g = &in->hw->gpus[k];
			if (!is_nvidia(g) || !has_cc(g))
				continue;
			if (!toolkit_knows_cc(t->version, (int)g->cc_major.v, (int)g->cc_minor.v)) {
				doctor_finding *a = doctor_add(rep, "toolkit-arch", DOC_WARN, DG_CUDA, g->index);
				say(a, xasprintf(_("nvcc %s cannot compile for %s (compute capability %lld.%lld)"), t->version,
						 g->name, (long long)g->cc_major.v, (long long)g->cc_minor.v),
				    xasprintf(_("%s; data/cuda-arch.tsv"), t->root),
				    xstrdup(_("use a newer toolkit for extensions built here (sm_120 needs CUDA >= 12.8)")));
			}
		}
	}
	if (first && home && first != home) {
		bool older = *first->version && *home->version && version_cmp(first->version, home->version) < 0;
		doctor_finding *f = doctor_add(rep, "nvcc-path-order", DOC_WARN, DG_CUDA, -1);
		say(f, xasprintf(_("the first nvcc on PATH is %s CUDA (%s) than the one CUDA_HOME names (%s)"),
				 older ? _("an older") : _("another"), *first->version ? first->version : "?",
				 *home->version ? home->version : "?"),
		    xasprintf(_("PATH finds %s first; CUDA_HOME=%s; builds of extensions (pip install flash-attn, "
			      "torch.utils.cpp_extension) use CUDA_HOME while make/cmake use PATH"),
			      first->nvcc, st->cuda_home),
		    xasprintf(_("export PATH=%s/bin:$PATH (or point CUDA_HOME at %s)"), home->root, first->root));
	} else if (st->n_toolkits > 1 && first && !home) {
		doctor_finding *f = doctor_add(rep, "nvcc-path-order", DOC_OK, DG_CUDA, -1);
		say(f, xasprintf(_("%zu CUDA toolkits; nvcc on PATH is CUDA %s"), st->n_toolkits,
				 *first->version ? first->version : "?"),
		    xasprintf(_("CUDA_HOME is not set; %s comes first on PATH"), first->nvcc),
		    xasprintf(_("set CUDA_HOME=%s so extension builds use the same toolkit"), first->root));
	}
	for (size_t k = 0; k < 2; k++) {
		const char *name = k ? "nccl" : "cudnn";
		const stack_lib *l = stack_find_lib(st, name);
		if (!l)
			continue;
		doctor_finding *f = doctor_add(rep, name, DOC_OK, DG_CUDA, -1);
		say(f, xasprintf("%s %s", k ? "NCCL" : "cuDNN", *l->version ? l->version : _("(version unknown)")),
		    xasprintf(_("%s (via %s)"), l->path, l->how), NULL);
	}
	/* environment variables that slow CUDA down (DCGM's software test list) */
	const kb_table *bt = kb_get_table("bad-env", NULL);
	for (size_t r = 0; bt && r < bt->nrows; r++) {
		const char *var = kb_cell(bt, r, kb_col(bt, "var"));
		const char *val = getenv(var);
		if (!val)
			continue;
		doctor_finding *f = doctor_add(rep, "bad-env", DOC_WARN, DG_CUDA, -1);
		say(f, xasprintf(_("%s is set: %s"), var, kb_cell(bt, r, kb_col(bt, "effect"))),
		    xasprintf("%s=%s", var, val), xasprintf(_("unset %s"), var));
	}
}

/* ---- Python and PyTorch ---------------------------------------------------- */

/*
 * The reinstall line for the first NVIDIA GPU with a known capability (the
 * newest build this driver runs), else torch 2.11 from the cu128 index.
 */
static void default_pip_line(const hw_snapshot *snap, const char *drv, char *out, size_t n)
{
	for (size_t k = 0; snap && k < snap->n_gpus; k++) {
		torch_pick p;
		if (is_nvidia(&snap->gpus[k]) && has_cc(&snap->gpus[k]) &&
		    compat_pick_torch((int)snap->gpus[k].cc_major.v, (int)snap->gpus[k].cc_minor.v, drv, &p, NULL) == 0 &&
		    p.found) {
			snprintf(out, n, "%s", p.pip_line);
			return;
		}
	}
	compat_pip_line("2.11", "https://download.pytorch.org/whl/cu128", out, n);
}

static void check_python(const doctor_input *in, doctor_report *rep)
{
	const stack_info *st = in->stack;
	const hw_snapshot *snap = in->hw;
	const char *drv = driver_of(in);
	size_t nv = count_nvidia(snap);
	if (!st)
		return;
	bool any_torch = false;
	for (size_t i = 0; i < st->n_pythons; i++) {
		const stack_python *py = &st->pythons[i];
		if (!py->has_torch)
			continue;
		any_torch = true;
		char where[1600];
		snprintf(where, sizeof where, "%s (%s), torch in %s", py->exe, py->how, py->site);
		char pick_line[256];
		default_pip_line(snap, drv, pick_line, sizeof pick_line);
		if (*py->torch_hip) {
			doctor_finding *f = doctor_add(rep, "torch", nv ? DOC_WARN : DOC_OK, DG_PYTHON, -1);
			say(f, xasprintf(_("torch %s is a ROCm (HIP %s) build%s"), py->torch_version, py->torch_hip,
					 nv ? ": it cannot use the NVIDIA GPU" : ""),
			    xstrdup(where), nv ? xstrdup(pick_line) : NULL);
			continue;
		}
		char cuda[16];
		snprintf(cuda, sizeof cuda, "%s", py->torch_cuda);
		if (!*cuda)
			variant_cuda(py->torch_version, cuda, sizeof cuda);
		if (!*cuda) {
			doctor_finding *f = doctor_add(rep, "torch-cpu-only", nv ? DOC_FAIL : DOC_OK, DG_PYTHON, -1);
			say(f, xasprintf(_("torch %s is a CPU-only build%s"), py->torch_version,
					 nv ? " on a machine with an NVIDIA GPU" : ""),
			    xasprintf(_("%s; torch/version.py has cuda = None"), where),
			    nv ? xstrdup(pick_line) : NULL);
			continue;
		}
		/* the build's CUDA against the driver (PyTorch wheels carry their CUDA runtime) */
		if (drv) {
			char full[32], floor[32];
			int v = driver_vs_cuda(drv, cuda, full, sizeof full, floor, sizeof floor, on_wsl(in));
			doctor_finding *f = doctor_add(rep, v ? "driver-too-old" : "torch-driver", v ? DOC_FAIL : DOC_OK,
						       DG_PYTHON, -1);
			if (v == 0)
				say(f, xasprintf(_("torch %s (CUDA %s) works with driver %s"), py->torch_version, cuda, drv),
				    xstrdup(where), NULL);
			else
				say(f, xasprintf(_("driver %s is too old for torch %s (built for CUDA %s, needs driver >= %s)"),
						 drv, py->torch_version, cuda, full),
				    xasprintf("%s; %s", where,
					      v == 1 ? "minor-version compatibility may start it, but kernels, PTX JIT and "
						       "libraries of this CUDA need the full minimum"
						     : "below even the minor-version compatibility floor"),
				    upgrade_fix(in, full, on_wsl(in) ? "; or install a torch built for the driver's CUDA"
								     : ", or install a torch built for the driver's CUDA"));
		}
		/* the GPU's compute capability against the build's architectures */
		const char *arch = py->arch_list;
		const char *arch_src = py->arch_from;
		if (!*arch) {
			const char *t = table_arch_list(py->torch_version, cuda);
			if (t) {
				arch = t;
				arch_src = "data/torch-builds.tsv";
			}
		}
		for (size_t k = 0; snap && k < snap->n_gpus; k++) {
			const hw_gpu *g = &snap->gpus[k];
			if (!is_nvidia(g) || !has_cc(g) || !*arch)
				continue;
			int ma = (int)g->cc_major.v, mi = (int)g->cc_minor.v;
			bool ptx;
			bool ok = compat_arch_covers(arch, ma, mi, &ptx);
			if (ok && !ptx) {
				doctor_finding *f = doctor_add(rep, "torch-arch", DOC_OK, DG_PYTHON, g->index);
				say(f, xasprintf(_("torch %s has code for %s (sm_%d%d)"), py->torch_version, g->name, ma, mi),
				    xasprintf(_("architectures (%s): %s; %s"), arch_src, arch, where), NULL);
				continue;
			}
			torch_pick p;
			compat_pick_torch(ma, mi, drv, &p, NULL);
			char *fix;
			if (p.found)
				fix = xstrdup(p.pip_line);
			else if (p.driver_too_old && on_wsl(in)) {
				char *w = doctor_wsl_driver_fix(p.need_driver);
				fix = xasprintf(_("%s first (driver %s is too old for any PyTorch build with sm_%d%d), then: %s"), w,
						drv ? drv : "?", ma, mi, p.pip_line);
				free(w);
			} else if (p.driver_too_old)
				fix = xasprintf(_("upgrade the NVIDIA driver to >= %s first (driver %s is too old for any "
						"PyTorch build with sm_%d%d), then: %s"), p.need_driver, drv ? drv : "?", ma, mi,
						p.pip_line);
			else
				fix = xasprintf(_("no PyTorch build in data/torch-builds.tsv covers sm_%d%d"), ma, mi);
			doctor_finding *f = doctor_add(rep, "arch-unsupported", ok ? DOC_WARN : DOC_FAIL, DG_PYTHON, g->index);
			say(f, ok ? xasprintf(_("torch %s has only PTX for %s (sm_%d%d): kernels are JIT-compiled at start "
					      "and PyTorch warns the GPU is not compatible"), py->torch_version, g->name, ma, mi)
				  : xasprintf(_("%s with CUDA capability sm_%d%d is not compatible with torch %s"), g->name, ma,
					      mi, py->torch_version),
			    xasprintf(_("architectures (%s): %s; %s"), arch_src, arch, where), fix);
		}
		if (*py->run_error) {
			doctor_finding *f = doctor_add(rep, "torch-import", DOC_WARN, DG_PYTHON, -1);
			say(f, xasprintf(_("could not ask %s for its PyTorch architectures"), py->exe),
			    xasprintf("%s%s", py->run_error, *py->arch_from ? "; used the list from libtorch_cuda.so" : ""),
			    xasprintf(_("%s -c 'import torch' shows the full error"), py->exe));
		}
		if (py->n_pkgs) {
			strbuf sb = STRBUF_INIT;
			for (size_t k = 0; k < py->n_pkgs; k++)
				sb_printf(&sb, "%s%s %s", k ? ", " : "", py->pkgs[k].name, py->pkgs[k].version);
			doctor_finding *f = doctor_add(rep, "python-packages", DOC_INFO, DG_PYTHON, -1);
			say(f, xasprintf(_("torch %s with %s"), py->torch_version, sb_str(&sb)), xstrdup(where), NULL);
			sb_release(&sb);
		} else {
			doctor_finding *f = doctor_add(rep, "torch", DOC_OK, DG_PYTHON, -1);
			say(f, xasprintf(_("torch %s (CUDA %s)"), py->torch_version, cuda), xstrdup(where), NULL);
		}
	}
	if (!any_torch) {
		doctor_finding *f = doctor_add(rep, "torch", DOC_SKIP, DG_PYTHON, -1);
		strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < st->n_pythons; i++)
			sb_printf(&sb, "%s%s", i ? ", " : "", st->pythons[i].exe);
		say(f, xstrdup(_("no PyTorch found")),
		    xasprintf(_("Python interpreters looked at: %s"), st->n_pythons ? sb_str(&sb) : "none"),
		    xstrdup(_("point gpuwise at an environment with --python PATH")));
		sb_release(&sb);
	}
}

/* ---- Health ----------------------------------------------------------------- */

/* Seconds since the process started, from /proc/PID/stat (field 22, clock
 * ticks since boot) and /proc/uptime; -1 unknown. */
static double proc_age_s(uint32_t pid)
{
	char path[64], *stat = NULL, *up = NULL;
	double age = -1;
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	if (gw_read_file(path, true, 1 << 16, &stat, NULL, NULL) || gw_read_file("/proc/uptime", true, 256, &up, NULL, NULL))
		goto out;
	const char *p = strrchr(stat, ')');
	if (!p)
		goto out;
	/* after ") " come fields 3.. ; starttime is field 22 */
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	double ticks = strtod(p, NULL);
	age = atof(up) - ticks / 100.0; /* USER_HZ is 100 on Linux (proc(5)) */
out:
	free(stat);
	free(up);
	return age;
}

/* Names of the clocks-event bits the doctor cares about (NVML bit values). */
static void throttle_words(uint64_t bits, char *buf, size_t n)
{
	static const struct {
		uint64_t bit;
		const char *word;
	} w[] = {{HW_THR_SW_THERMAL, "software thermal slowdown"}, {HW_THR_HW_THERMAL, "hardware thermal slowdown"},
		 {HW_THR_HW_SLOWDOWN, "hardware slowdown"}, {HW_THR_HW_POWER_BRAKE, "power brake"},
		 {HW_THR_SW_POWER_CAP, "power cap"}};
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		if (bits & w[i].bit) {
			int k = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", w[i].word);
			if (k > 0 && (size_t)k < n - used)
				used += (size_t)k;
		}
}

static void check_health(const doctor_input *in, doctor_report *rep)
{
	const hw_snapshot *snap = in->hw;
	char lb[192];
	size_t nv = count_nvidia(snap);
	for (size_t i = 0; snap && i < snap->n_gpus; i++) {
		const hw_gpu *g = &snap->gpus[i];
		if (!is_nvidia(g) || g->fell_off_bus || g->asleep)
			continue;
		gpu_label(g, lb, sizeof lb);
		size_t before = rep->n;
		/* temperature: 80 C is the warning line; the GPU's own slowdown threshold fails */
		if (HW_VALID(g->temp_c)) {
			long long t = g->temp_c.v;
			bool slow = HW_VALID(g->temp_slowdown_c) && t >= g->temp_slowdown_c.v;
			if (slow || t >= 80) {
				doctor_finding *f = doctor_add(rep, "temperature", slow ? DOC_FAIL : DOC_WARN, DG_HEALTH, g->index);
				say(f, xasprintf(_("%s is at %lld C%s"), lb, t, slow ? ", at its slowdown threshold" : ""),
				    HW_VALID(g->temp_slowdown_c) ? xasprintf(_("slowdown threshold %lld C"), (long long)g->temp_slowdown_c.v)
								 : xstrdup(_("slowdown threshold unknown")),
				    xstrdup(_("check airflow and fans, clean dust filters; on a laptop raise it and use the "
					    "performance power profile")));
			}
		}
		if (HW_VALID(g->throttle_reasons)) {
			uint64_t bad = (uint64_t)g->throttle_reasons.v &
				       (HW_THR_SW_THERMAL | HW_THR_HW_THERMAL | HW_THR_HW_SLOWDOWN | HW_THR_HW_POWER_BRAKE |
					HW_THR_SW_POWER_CAP);
			if (bad) {
				char words[128];
				throttle_words(bad, words, sizeof words);
				doctor_finding *f = doctor_add(rep, "throttle", DOC_WARN, DG_HEALTH, g->index);
				say(f, xasprintf(_("%s is throttled: %s"), lb, words),
				    xasprintf(_("clocks-event reasons 0x%llx"), (unsigned long long)g->throttle_reasons.v),
				    xstrdup(on_wsl(in) ? "check cooling; the power limit is set on Windows (the laptop's "
							 "performance mode or power plan): nvidia-smi cannot change it in WSL"
					    : bad & HW_THR_SW_POWER_CAP && !(bad & ~(uint64_t)HW_THR_SW_POWER_CAP)
						    ? "power cap under load is normal; if the limit was lowered: sudo nvidia-smi -pl "
						      "<default watts>"
						    : "check cooling and the power supply; hardware slowdown with low temperature "
						      "points at power delivery"));
			}
		}
		if (HW_VALID(g->power_limit_mw) && HW_VALID(g->power_default_limit_mw) &&
		    g->power_limit_mw.v < g->power_default_limit_mw.v) {
			doctor_finding *f = doctor_add(rep, "power-limit", DOC_WARN, DG_HEALTH, g->index);
			say(f, xasprintf(_("%s power limit %lld W is below its default %lld W"), lb,
					 (long long)g->power_limit_mw.v / 1000, (long long)g->power_default_limit_mw.v / 1000),
			    xstrdup(_("enforced limit < default limit")),
			    on_wsl(in) ? xstrdup(_("set on Windows: the laptop maker's performance mode or the Windows power "
						 "plan (Settings > System > Power & battery); nvidia-smi cannot change limits in WSL"))
				       : xasprintf(_("sudo nvidia-smi -i %d -pl %lld"), g->nvml_index,
						   (long long)g->power_default_limit_mw.v / 1000));
		}
		if (HW_VALID(g->pcie_gen) && HW_VALID(g->pcie_gen_max) && HW_VALID(g->pcie_width) &&
		    HW_VALID(g->pcie_width_max) && (g->pcie_gen.v < g->pcie_gen_max.v || g->pcie_width.v < g->pcie_width_max.v)) {
			/* GPUs train the link down when idle to save power; only a narrow link is suspicious then */
			bool idle = (HW_VALID(g->throttle_reasons) && (g->throttle_reasons.v & HW_THR_GPU_IDLE)) ||
				    (HW_VALID(g->util_gpu_pct) && g->util_gpu_pct.v == 0);
			bool narrow = g->pcie_width.v < g->pcie_width_max.v;
			doctor_finding *f = doctor_add(rep, "pcie-link", (narrow || !idle) ? DOC_WARN : DOC_OK, DG_HEALTH, g->index);
			say(f, xasprintf(_("%s PCIe link runs at gen %lld x%lld, below its maximum gen %lld x%lld%s"), lb,
					 (long long)g->pcie_gen.v, (long long)g->pcie_width.v, (long long)g->pcie_gen_max.v,
					 (long long)g->pcie_width_max.v, (!narrow && idle) ? _(" (idle power saving)") : ""),
			    xstrdup(idle ? _("the GPU is idle: the generation drops to save power") : _("the GPU is busy")),
			    xstrdup(narrow ? _("reseat the card, use an x16 slot wired for x16, check the riser")
					   : idle ? "" : _("check the slot's generation in the BIOS and the riser")));
		}
		if (HW_VALID(g->ecc_uncorrected) && g->ecc_uncorrected.v > 0) {
			doctor_finding *f = doctor_add(rep, "ecc-error", DOC_FAIL, DG_HEALTH, g->index);
			say(f, xasprintf(_("%s has %lld uncorrectable ECC error(s)"), lb, (long long)g->ecc_uncorrected.v),
			    xasprintf(_("corrected: %lld"), HW_VALID(g->ecc_corrected) ? (long long)g->ecc_corrected.v : -1LL),
			    xstrdup(_("drain the GPU and reset it or reboot the node; repeated errors: field diagnostics "
				    "(dcgmi diag -r 3) and RMA")));
		}
		if ((HW_VALID(g->remap_failure) && g->remap_failure.v) ||
		    (HW_VALID(g->remap_pending) && g->remap_pending.v) ||
		    (HW_VALID(g->retired_pending) && g->retired_pending.v) ||
		    (HW_VALID(g->retired_dbe) && g->retired_dbe.v > 0)) {
			bool fail = HW_VALID(g->remap_failure) && g->remap_failure.v;
			doctor_finding *f = doctor_add(rep, "retired-pages", fail ? DOC_FAIL : DOC_WARN, DG_HEALTH, g->index);
			say(f, xasprintf("%s %s", lb, fail ? "failed to remap a memory row" : "has retired or pending memory pages/rows"),
			    xasprintf(_("retired DBE %lld, retirement pending %lld, remap pending %lld, remap failure %lld"),
				      HW_VALID(g->retired_dbe) ? (long long)g->retired_dbe.v : -1LL,
				      HW_VALID(g->retired_pending) ? (long long)g->retired_pending.v : -1LL,
				      HW_VALID(g->remap_pending) ? (long long)g->remap_pending.v : -1LL,
				      HW_VALID(g->remap_failure) ? (long long)g->remap_failure.v : -1LL),
			    xstrdup(fail ? "take the GPU out of service and run field diagnostics (DCGM: row-remap failure is fatal)"
					 : "reset the GPU or reboot at the next chance so pending retirements take effect"));
		}
		if (nv >= 2 && !on_wsl(in) && HW_VALID(g->persistence_mode) && g->persistence_mode.v == 0) {
			doctor_finding *f = doctor_add(rep, "persistence-mode", DOC_WARN, DG_HEALTH, g->index);
			say(f, xasprintf(_("%s has persistence mode off on a %zu-GPU machine"), lb, nv),
			    xstrdup(_("without persistence the driver tears GPU state down between jobs (slow starts)")),
			    xasprintf(_("sudo nvidia-smi -i %d -pm 1 (DCGM's advice; or enable nvidia-persistenced)"),
				      g->nvml_index));
		}
		for (size_t k = 0; k < g->n_procs; k++) {
			const hw_proc *p = &g->procs[k];
			char mem[32] = "?";
			if (HW_VALID(p->used_mem_bytes))
				fmt_bytes(mem, sizeof mem, (uint64_t)p->used_mem_bytes.v);
			if (!p->exists && on_wsl(in)) {
				doctor_finding *f = doctor_add(rep, "windows-process", DOC_INFO, DG_HEALTH, g->index);
				say(f, xasprintf(_("%s: process %u holds %s: a Windows-side process"), lb, p->pid, mem),
				    xstrdup(_("NVML lists the PID, WSL's /proc has none: Windows programs share the GPU with WSL")),
				    xstrdup(_("Task Manager > Details, with the 'Dedicated GPU memory' column, names it")));
				continue;
			}
			if (!p->exists) {
				doctor_finding *f = doctor_add(rep, "stale-process", DOC_WARN, DG_HEALTH, g->index);
				say(f, xasprintf(_("%s: process %u holds %s but no longer exists"), lb, p->pid, mem),
				    xstrdup(_("NVML lists the PID; /proc has no such process (or it lives in another PID "
					    "namespace: run gpuwise on the host)")),
				    xasprintf(_("find what keeps the memory: sudo fuser -v /dev/nvidia*; a reset frees it: sudo "
					      "nvidia-smi -i %d -r"), g->nvml_index));
				continue;
			}
			double age = proc_age_s(p->pid);
			/* idle for hours: the GPU shows no load and the process is older than 2 h */
			if (age > 7200 && HW_VALID(g->util_gpu_pct) && g->util_gpu_pct.v == 0) {
				doctor_finding *f = doctor_add(rep, "idle-process", DOC_WARN, DG_HEALTH, g->index);
				say(f, xasprintf(_("%s: process %u (%s%s%s) holds %s while the GPU is idle"), lb, p->pid,
						 *p->user ? p->user : "?", *p->command ? ": " : "", p->command, mem),
				    xasprintf(_("running for %.1f h; GPU utilisation 0%%"), age / 3600.0),
				    xasprintf(_("if it is a forgotten notebook or server: kill %u"), p->pid));
			}
		}
		if (rep->n == before) {
			doctor_finding *f = doctor_add(rep, "health", DOC_OK, DG_HEALTH, g->index);
			char t[32] = "?";
			if (HW_VALID(g->temp_c))
				snprintf(t, sizeof t, "%lld C", (long long)g->temp_c.v);
			say(f, xasprintf(_("%s healthy"), lb),
			    xasprintf(_("temperature %s, no throttling, power limit and PCIe link as expected, no ECC errors"), t),
			    NULL);
		}
	}
	/* Xid events in the kernel log (last 24 h), with DCGM's severity; on
	 * WSL Xid never reaches Linux (wsl.c reports dxgkrnl instead) */
	if (on_wsl(in)) {
	} else if (in->xids_read) {
		for (size_t i = 0; i < in->n_xids; i++) {
			const hw_xid *x = &in->xids[i];
			bool dup = false;
			for (size_t k = 0; k < i && !dup; k++)
				dup = in->xids[k].xid == x->xid && strcmp(in->xids[k].pci, x->pci) == 0;
			if (dup)
				continue;
			size_t count = 0;
			for (size_t k = i; k < in->n_xids; k++)
				count += in->xids[k].xid == x->xid && strcmp(in->xids[k].pci, x->pci) == 0;
			const char *meaning = N_("unknown Xid"), *sev = "none", *action = N_("look at the kernel log around it");
			xid_lookup(x->xid, &meaning, &sev, &action);
			doctor_finding *f = doctor_add(rep, "xid", strcmp(sev, "fail") == 0 ? DOC_FAIL : DOC_WARN, DG_HEALTH, -1);
			/* data/xid.tsv's meaning and action go through the catalog (tools/tsv-pot.py) */
			say(f, xasprintf(_("Xid %d on %s: %s (%zu in the last 24 h)"), x->xid, x->pci, _(meaning), count),
			    xasprintf(_("DCGM severity: %s; last: pid %d %s: %s"), sev, x->pid, x->process, x->text),
			    xstrdup(_(action)));
		}
		if (in->n_xids == 0 && nv) {
			doctor_finding *f = doctor_add(rep, "xid", DOC_OK, DG_HEALTH, -1);
			say(f, xstrdup(_("no Xid errors in the kernel log in the last 24 h")), NULL, NULL);
		}
	} else if (nv) {
		doctor_finding *f = doctor_add(rep, "xid", DOC_SKIP, DG_HEALTH, -1);
		say(f, xstrdup(_("kernel log not readable: Xid errors not checked")),
		    xstrdup(in->xid_error ? in->xid_error : "/dev/kmsg"),
		    xstrdup(_("run as root or allow reading: sudo sysctl kernel.dmesg_restrict=0")));
	}
}

void doctor_check(const doctor_input *in0, doctor_report *rep)
{
	doctor_input local = *in0;
	hw_platform_info pl;
	if (!local.platform) {
		hw_platform_detect(&pl);
		local.platform = &pl;
	}
	const doctor_input *in = &local;
	if (on_wsl(in))
		doctor_check_wsl(in, in->platform, rep);
	check_hardware(in, rep);
	check_driver(in, rep);
	check_visible_devices(in, rep);
	doctor_check_vram_cap(rep);
	check_cuda(in, rep);
	check_python(in, rep);
	check_health(in, rep);
	if (on_wsl(in))
		doctor_check_wsl_desktop(in, rep);
	else
		doctor_check_desktop(rep);
	doctor_merge_duplicates(rep);
}

/*
 * wsl.c: the doctor's checks for WSL 2, where the GPU belongs to the
 * Windows driver and Linux sees it through GPU paravirtualisation: no PCI
 * device, no kernel module, no Xid.  What can go wrong there is different
 * (NVIDIA, "CUDA on WSL User Guide", docs.nvidia.com/cuda/wsl-user-guide):
 *
 *  - a Linux driver installed inside WSL (its libcuda.so.5xx shadows the
 *    Windows driver's /usr/lib/wsl/lib/libcuda.so.1; the guide: "do not
 *    install any NVIDIA GPU Linux driver within WSL 2"); the `cuda`,
 *    `cuda-X-Y` and `cuda-drivers` packages pull one, `cuda-toolkit-X-Y`
 *    from the wsl-ubuntu repository does not;
 *  - another libcuda (the toolkit's stub, a cuda-compat copy) found before
 *    /usr/lib/wsl/lib by the loader;
 *  - the Windows driver missing or old: fixed on Windows, then wsl --shutdown.
 *
 * Nothing here prints; every fix is one that works inside WSL or names the
 * Windows place to click.
 */
#include "doctor/doctor.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "hw/hw.h"
#include "stack/stack.h"

#define WSL_LIB "/usr/lib/wsl/lib"

static void say(doctor_finding *f, char *title, char *evidence, char *fix)
{
	f->title = title;
	f->evidence = evidence ? evidence : xstrdup("");
	f->fix = fix ? fix : xstrdup("");
}

char *doctor_wsl_driver_fix(const char *min_version)
{
	return xasprintf(_("install the NVIDIA driver for Windows%s%s (nvidia.com/drivers: Game Ready or Studio for "
			 "GeForce), then in PowerShell: wsl --shutdown; never install a Linux driver inside WSL"),
			 min_version && *min_version ? " >= " : "", min_version ? min_version : "");
}

/* ---- files under the root ------------------------------------------------ */

/* lstat under the root: 1 a symlink, 0 another file, -1 absent */
static int rooted_is_link(const char *abs)
{
	char *p = gw_path(abs);
	struct stat st;
	int r = lstat(p, &st) ? -1 : S_ISLNK(st.st_mode) ? 1 : 0;
	free(p);
	return r;
}

/* the same path, "/a//b/" -> "/a/b" */
static void norm_dir(const char *in, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = in; *p && k + 1 < n; p++)
		if (!(*p == '/' && k && out[k - 1] == '/'))
			out[k++] = *p;
	while (k > 1 && out[k - 1] == '/')
		k--;
	out[k] = '\0';
}

static bool is_wsl_dir(const char *dir)
{
	char d[512];
	norm_dir(dir, d, sizeof d);
	return str_starts(d, "/usr/lib/wsl/");
}

/* ---- dpkg ------------------------------------------------------------------ */

typedef struct pkg {
	char name[96];
	char version[64];
} pkg;

/* Installed packages of /var/lib/dpkg/status ("Status: install ok installed"). */
static size_t dpkg_installed(pkg **out)
{
	char *text;
	size_t n = 0, cap = 0;
	*out = NULL;
	if (gw_read_file("/var/lib/dpkg/status", true, 64 << 20, &text, NULL, NULL))
		return 0;
	pkg cur = {{0}, {0}};
	bool inst = false;
	for (char *line = text; line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!*line) {
			if (inst && *cur.name) {
				*out = xgrow(*out, &cap, n + 1, sizeof **out);
				(*out)[n++] = cur;
			}
			memset(&cur, 0, sizeof cur);
			inst = false;
		} else if (str_starts(line, "Package:")) {
			snprintf(cur.name, sizeof cur.name, "%s", str_trim(line + 8));
		} else if (str_starts(line, "Version:")) {
			snprintf(cur.version, sizeof cur.version, "%s", str_trim(line + 8));
		} else if (str_starts(line, "Status:")) {
			inst = strstr(line, " installed") != NULL && strstr(line, "not-installed") == NULL;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (inst && *cur.name) {
		*out = xgrow(*out, &cap, n + 1, sizeof **out);
		(*out)[n++] = cur;
	}
	free(text);
	return n;
}

static const pkg *pkg_find(const pkg *p, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	return NULL;
}

/* "cuda" or "cuda-12-8": the metapackages that pull cuda-drivers (NVIDIA WSL guide) */
static bool is_cuda_meta(const char *name)
{
	if (strcmp(name, "cuda") == 0)
		return true;
	int a, b, used = 0;
	return sscanf(name, "cuda-%d-%d%n", &a, &b, &used) == 2 && name[used] == '\0';
}

/* Packages that install a Linux driver (kernel module or its user-space libraries). */
static bool is_driver_pkg(const char *name)
{
	static const char *const pre[] = {"nvidia-driver-", "libnvidia-compute-", "nvidia-dkms-", "nvidia-kernel-",
					  "nvidia-utils-", "cuda-drivers", "nvidia-open", "nvidia-headless-"};
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
		if (str_starts(name, pre[i]))
			return true;
	return false;
}

/* ---- the loader's search order ------------------------------------------- */

typedef struct ldir {
	char dir[512];
	char how[160];
} ldir;

static void add_dir(ldir **d, size_t *n, size_t *cap, const char *dir, const char *how)
{
	char nd[512];
	norm_dir(dir, nd, sizeof nd);
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*d)[i].dir, nd) == 0)
			return;
	*d = xgrow(*d, cap, *n + 1, sizeof **d);
	snprintf((*d)[*n].dir, sizeof (*d)[*n].dir, "%s", nd);
	snprintf((*d)[*n].how, sizeof (*d)[*n].how, "%s", how);
	(*n)++;
}

static void conf_dirs(const char *file, ldir **d, size_t *n, size_t *cap, int depth)
{
	char *text;
	if (depth > 3 || gw_read_file(file, true, 1 << 20, &text, NULL, NULL))
		return;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *t = str_trim(line);
		if (str_starts(t, "include")) {
			char *pat = str_trim(t + 7);
			char *full = *pat == '/' ? xstrdup(pat) : xasprintf("/etc/%s", pat);
			char **l;
			size_t k = gw_glob(full, &l); /* glob sorts, as ldconfig does */
			for (size_t i = 0; i < k; i++)
				conf_dirs(l[i], d, n, cap, depth + 1);
			gw_list_free(l, k);
			free(full);
		} else if (*t == '/') {
			add_dir(d, n, cap, t, file);
		}
	}
	free(text);
}

/*
 * The directories in the order the loader tries them (ld.so(8)):
 * LD_LIBRARY_PATH, then ld.so.cache (built from /etc/ld.so.conf in file
 * order), then the trusted directories.
 */
static size_t loader_dirs(ldir **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	const char *llp = getenv("LD_LIBRARY_PATH");
	if (llp) {
		char *c = xstrdup(llp), *save = NULL;
		for (char *d = strtok_r(c, ":", &save); d; d = strtok_r(NULL, ":", &save))
			if (*d == '/')
				add_dir(out, &n, &cap, d, "LD_LIBRARY_PATH");
		free(c);
	}
	conf_dirs("/etc/ld.so.conf", out, &n, &cap, 0);
	static const char *const sys[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
					  "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
	for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
		add_dir(out, &n, &cap, sys[i], _("system library directory"));
	return n;
}

/* What a libcuda outside /usr/lib/wsl/lib is, judged by where it lies. */
static const char *libcuda_kind(const char *dir)
{
	if (strstr(dir, "/stubs"))
		return _("the CUDA toolkit's stub libcuda (for linking only: at run time CUDA fails with error 34, "
		       "'CUDA driver is a stub library')");
	if (strstr(dir, "compat"))
		return _("a CUDA forward-compatibility libcuda (cuda-compat: it needs a Linux kernel driver, which WSL does "
		       "not have)");
	if (strstr(dir, "conda") || strstr(dir, "/envs/"))
		return _("a conda package's libcuda (cuda-compat or a driver package)");
	return _("a Linux driver's libcuda (not the Windows driver's)");
}

/* ---- the checks ------------------------------------------------------------ */

static void check_platform(const doctor_input *in, const hw_platform_info *pl, doctor_report *rep)
{
	const hw_snapshot *s = in->hw;
	if (pl->kind == HW_PLATFORM_WSL1) {
		doctor_finding *f = doctor_add(rep, "platform", DOC_FAIL, DG_HARDWARE, -1);
		say(f, xstrdup(_("WSL 1: no GPU access (CUDA needs WSL 2)")), xstrdup(pl->evidence),
		    xstrdup(_("in PowerShell: wsl -l -v (lists the distributions), then wsl --set-version <distribution> 2")));
		return;
	}
	char cv[16] = "?";
	if (s && HW_VALID(s->cuda_driver_version))
		cuda_version_decode((long)s->cuda_driver_version.v, cv, sizeof cv);
	doctor_finding *f = doctor_add(rep, "platform", DOC_INFO, DG_HARDWARE, -1);
	if (s && *s->driver_version)
		say(f, xasprintf(_("WSL 2: the GPU is driven by the Windows NVIDIA driver %s (CUDA up to %s), seen through "
				 "GPU paravirtualisation"), s->driver_version, cv),
		    xasprintf(_("%s; NVML from %s; Linux has no PCI device, kernel module or Xid for this GPU"), pl->evidence,
			      *s->nvml_path ? s->nvml_path : "?"),
		    NULL);
	else
		say(f, xstrdup(_("WSL 2: the GPU belongs to the Windows driver, seen through GPU paravirtualisation")),
		    xasprintf(_("%s; NVML did not answer%s%s"), pl->evidence, s && *s->nvml_error ? ": " : "",
			      s && *s->nvml_error ? s->nvml_error : ""),
		    NULL);
	/* GPU-PV: the /dev/dxg device */
	doctor_finding *d = doctor_add(rep, "wsl-gpu-pv", pl->dxg ? DOC_OK : DOC_FAIL, DG_DRIVER, -1);
	if (pl->dxg)
		say(d, xstrdup(_("/dev/dxg is present: WSL's GPU paravirtualisation is on")), NULL, NULL);
	else
		say(d, xstrdup(_("/dev/dxg is missing: this WSL 2 has no GPU paravirtualisation")),
		    xasprintf("kernel '%s'", pl->kernel),
		    xstrdup(_("in PowerShell: wsl --update, then wsl --shutdown; GPU access needs Windows 11 or Windows 10 "
			    "21H2 and later, and a WDDM driver (a custom WSL kernel needs CONFIG_DXGKRNL)")));
	/* the Windows driver's libraries */
	bool cu = gw_exists(WSL_LIB "/libcuda.so.1"), ml = gw_exists(WSL_LIB "/libnvidia-ml.so.1");
	doctor_finding *l = doctor_add(rep, "wsl-driver-libs", cu && ml ? DOC_OK : DOC_FAIL, DG_DRIVER, -1);
	if (cu && ml)
		say(l, xstrdup(_("the Windows driver's libcuda.so.1 and libnvidia-ml.so.1 are in " "/usr/lib/wsl/lib")), NULL, NULL);
	else
		say(l, xstrdup(_("the Windows NVIDIA driver's Linux libraries are missing from " "/usr/lib/wsl/lib")),
		    xasprintf(_("libcuda.so.1 %s, libnvidia-ml.so.1 %s"), cu ? _("present") : _("missing"), ml ? _("present") : _("missing")),
		    doctor_wsl_driver_fix(NULL));
}

static void check_linux_driver(const doctor_input *in, const pkg *pk, size_t npk, const ldir *dirs, size_t nd,
			       doctor_report *rep)
{
	strbuf files = STRBUF_INIT, pkgs = STRBUF_INIT, purge = STRBUF_INIT;
	size_t nfiles = 0, npkgs = 0;
	bool meta = false;
	for (size_t i = 0; i < nd; i++) {
		if (is_wsl_dir(dirs[i].dir))
			continue;
		static const char *const pats[] = {"libcuda.so.[1-9][0-9][0-9]*", "libnvidia-ml.so.[1-9][0-9][0-9]*"};
		for (size_t k = 0; k < 2; k++) {
			char *pat = xasprintf("%s/%s", dirs[i].dir, pats[k]);
			char **l;
			size_t n = gw_glob(pat, &l);
			for (size_t j = 0; j < n; j++, nfiles++)
				sb_printf(&files, "%s%s", nfiles ? ", " : "", l[j]);
			gw_list_free(l, n);
			free(pat);
		}
	}
	for (size_t i = 0; i < npk; i++) {
		bool m = is_cuda_meta(pk[i].name);
		if (!m && !is_driver_pkg(pk[i].name))
			continue;
		meta |= m;
		sb_printf(&pkgs, "%s%s %s", npkgs ? ", " : "", pk[i].name, pk[i].version);
		sb_printf(&purge, " %s", pk[i].name);
		npkgs++;
	}
	if (!nfiles && !npkgs) {
		doctor_finding *f = doctor_add(rep, "wsl-linux-driver", DOC_OK, DG_DRIVER, -1);
		say(f, xstrdup(_("no Linux NVIDIA driver is installed inside WSL (as it should be)")),
		    xstrdup(_("no libcuda.so.5xx or libnvidia-ml.so.5xx outside " "/usr/lib/wsl/lib" "; no nvidia-driver-*, "
			    "libnvidia-compute-* or cuda-drivers package")),
		    NULL);
		goto out;
	}
	char cv[16] = "";
	if (in->hw && HW_VALID(in->hw->cuda_driver_version)) {
		int v = (int)in->hw->cuda_driver_version.v;
		snprintf(cv, sizeof cv, "%d-%d", v / 1000, v % 1000 / 10);
	}
	/* the toolkit to keep: the one installed, else the driver's CUDA */
	char tk[96];
	snprintf(tk, sizeof tk, "cuda-toolkit-%s", *cv ? cv : "12-8");
	for (size_t i = 0; i < npk; i++) {
		int a, b, used = 0;
		if (sscanf(pk[i].name, "cuda-toolkit-%d-%d%n", &a, &b, &used) == 2 && !pk[i].name[used])
			snprintf(tk, sizeof tk, "%s", pk[i].name);
	}
	char then[200] = "";
	if (meta) /* autoremove takes the toolkit the metapackage pulled too */
		snprintf(then, sizeof then, _("then the toolkit alone: the package %s from NVIDIA's wsl-ubuntu repository; "), tk);
	char *fix;
	if (npkgs)
		fix = xasprintf(_("sudo apt-get purge%s && sudo apt-get autoremove --purge; %sthen in PowerShell: wsl --shutdown"),
				sb_str(&purge), then);
	else if (gw_exists("/usr/bin/nvidia-uninstall"))
		fix = xstrdup(_("sudo nvidia-uninstall (the .run installer's uninstaller), then in PowerShell: wsl --shutdown"));
	else
		fix = xasprintf(_("remove the copied driver files (sudo rm %s) and run sudo ldconfig, then in PowerShell: "
				"wsl --shutdown"), sb_str(&files));
	doctor_finding *f = doctor_add(rep, "wsl-linux-driver", DOC_FAIL, DG_DRIVER, -1);
	say(f, xstrdup(_("a Linux NVIDIA driver is installed inside WSL: it shadows the Windows driver's libraries")),
	    xasprintf(_("%s%s%s%s%s; NVIDIA's CUDA on WSL guide: the Windows driver is the only driver, never install a "
		      "Linux one in WSL%s"),
		      nfiles ? _("files: ") : "", sb_str(&files), nfiles && npkgs ? "; " : "", npkgs ? _("packages: ") : "",
		      sb_str(&pkgs), meta ? _(" ('cuda' and 'cuda-X-Y' pull cuda-drivers)") : ""),
	    fix);
out:
	sb_release(&files);
	sb_release(&pkgs);
	sb_release(&purge);
}

/* Which libcuda.so.1 and libcuda.so the loader takes; the export line that fixes it. */
static void check_libcuda_order(const ldir *dirs, size_t nd, doctor_report *rep)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so"};
	const ldir *win[2] = {NULL, NULL};
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < nd && !win[k]; i++) {
			char *p = xasprintf("%s/%s", dirs[i].dir, names[k]);
			if (gw_exists(p))
				win[k] = &dirs[i];
			free(p);
		}
	bool bad = false, bad_llp = false;
	strbuf ev = STRBUF_INIT, others = STRBUF_INIT;
	/* other libcuda.so.1 files in the cache's directories (not LD_LIBRARY_PATH) */
	for (size_t i = 0; i < nd; i++) {
		if (is_wsl_dir(dirs[i].dir) || strcmp(dirs[i].how, "LD_LIBRARY_PATH") == 0)
			continue;
		char *p = xasprintf("%s/libcuda.so.1", dirs[i].dir);
		if (gw_exists(p))
			sb_printf(&others, "%s%s (via %s)", others.len ? ", " : "", p, dirs[i].how);
		free(p);
	}
	for (size_t k = 0; k < 2; k++) {
		if (!win[k] || is_wsl_dir(win[k]->dir))
			continue;
		bad = true;
		bad_llp |= strcmp(win[k]->how, "LD_LIBRARY_PATH") == 0;
		sb_printf(&ev, "%s%s resolves to %s/%s (via %s): %s", ev.len ? "; " : "", names[k], win[k]->dir, names[k],
			  win[k]->how, libcuda_kind(win[k]->dir));
	}
	if (bad) {
		/* LD_LIBRARY_PATH without the directories that hold another libcuda */
		strbuf keep = STRBUF_INIT;
		sb_puts(&keep, WSL_LIB);
		const char *llp = getenv("LD_LIBRARY_PATH");
		char *c = xstrdup(llp ? llp : ""), *save = NULL;
		for (char *d = strtok_r(c, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			char nd2[512];
			norm_dir(d, nd2, sizeof nd2);
			char *p1 = xasprintf("%s/libcuda.so.1", nd2), *p2 = xasprintf("%s/libcuda.so", nd2);
			bool shadow = !is_wsl_dir(nd2) && (gw_exists(p1) || gw_exists(p2));
			free(p1);
			free(p2);
			if (!shadow && !is_wsl_dir(nd2))
				sb_printf(&keep, ":%s", nd2);
		}
		free(c);
		char *fix;
		if (bad_llp)
			fix = xasprintf(_("export LD_LIBRARY_PATH=%s (and drop the other directory where LD_LIBRARY_PATH is set: "
					"~/.bashrc, a conda environment's etc/conda/activate.d)"), sb_str(&keep));
		else
			fix = xstrdup(_("remove that directory's line from its ld.so.conf file (or the copied libcuda files), "
				      "then sudo ldconfig"));
		doctor_finding *f = doctor_add(rep, "wsl-libcuda-order", DOC_FAIL, DG_CUDA, -1);
		say(f, xstrdup(_("programs load another libcuda before the Windows driver's " "/usr/lib/wsl/lib" "/libcuda.so.1")),
		    xasprintf("%s", sb_str(&ev)), fix);
		sb_release(&keep);
	} else if (!win[1] && win[0]) {
		doctor_finding *f = doctor_add(rep, "wsl-libcuda-order", DOC_WARN, DG_CUDA, -1);
		say(f, xstrdup(_("no unversioned libcuda.so: Triton (torch.compile) and programs linked with -lcuda do not "
			       "find the driver")),
		    xasprintf(_("libcuda.so.1 resolves to %s/libcuda.so.1; no libcuda.so in the loader's directories"),
			      win[0]->dir),
		    xstrdup(_("the Windows driver ships " "/usr/lib/wsl/lib" "/libcuda.so: update the driver for Windows, then in "
			    "PowerShell: wsl --shutdown")));
	} else if (win[0] && others.len) {
		/* both in ld.so.cache: which one a lookup returns is ldconfig's order, not ours to guess */
		doctor_finding *f = doctor_add(rep, "wsl-libcuda-order", DOC_WARN, DG_CUDA, -1);
		say(f, xstrdup(_("another libcuda.so.1 is in the loader's cache next to the Windows driver's")),
		    xasprintf(_("%s, next to %s/libcuda.so.1; ld.so.cache's order decides which one programs get"),
			      sb_str(&others), WSL_LIB),
		    xstrdup(_("ldconfig -p | grep libcuda.so.1 shows the order; remove the other copy (the wsl-linux-driver "
			    "finding says how), then sudo ldconfig")));
	} else if (win[0]) {
		doctor_finding *f = doctor_add(rep, "wsl-libcuda-order", DOC_OK, DG_CUDA, -1);
		say(f, xstrdup(_("libcuda.so.1 and libcuda.so resolve to the Windows driver's " "/usr/lib/wsl/lib")),
		    xasprintf(_("first match via %s"), win[0]->how), NULL);
	}
	sb_release(&ev);
	sb_release(&others);
}

static void check_ldconfig_warning(doctor_report *rep)
{
	if (rooted_is_link(WSL_LIB "/libcuda.so.1") != 0)
		return;
	doctor_finding *f = doctor_add(rep, "wsl-ldconfig-warning", DOC_INFO, DG_DRIVER, -1);
	say(f, xstrdup(_("ldconfig's warning '" "/usr/lib/wsl/lib" "/libcuda.so.1 is not a symbolic link' is harmless")),
	    xstrdup(_("/usr/lib/wsl/lib holds the Windows driver's files as plain copies, so ldconfig (run by apt) warns; CUDA "
		    "loads them all the same")),
	    xstrdup(_("nothing to do; do not 'fix' it by deleting, renaming or re-linking files in " "/usr/lib/wsl/lib" ": Windows "
		    "manages that folder and such changes break CUDA in WSL (wsl --shutdown in PowerShell restores it)")));
}

/* The apt sources that name NVIDIA's CUDA repositories: 'w' wsl-ubuntu, 'u' another one. */
static void cuda_repos(bool *wsl_repo, bool *other_repo, char *other, size_t n)
{
	*wsl_repo = *other_repo = false;
	other[0] = '\0';
	char **l;
	size_t k = gw_glob("/etc/apt/sources.list.d/*", &l);
	for (size_t i = 0; i <= k; i++) {
		const char *file = i < k ? l[i] : "/etc/apt/sources.list";
		char *text;
		if (gw_read_file(file, true, 1 << 20, &text, NULL, NULL))
			continue;
		for (char *p = text; (p = strstr(p, "compute/cuda/repos/")); p++) {
			const char *r = p + strlen("compute/cuda/repos/");
			if (str_starts(r, "wsl-ubuntu")) {
				*wsl_repo = true;
			} else {
				*other_repo = true;
				size_t len = strcspn(r, "/ \t\n");
				snprintf(other, n, "%.*s", (int)len, r);
			}
		}
		free(text);
	}
	gw_list_free(l, k);
}

static void check_toolkit_origin(const doctor_input *in, const pkg *pk, size_t npk, doctor_report *rep)
{
	const stack_info *st = in->stack;
	char cv[16] = "12-8";
	if (in->hw && HW_VALID(in->hw->cuda_driver_version)) {
		int v = (int)in->hw->cuda_driver_version.v;
		snprintf(cv, sizeof cv, "%d-%d", v / 1000, v % 1000 / 10);
	}
	bool wsl_repo, other_repo;
	char other[64];
	cuda_repos(&wsl_repo, &other_repo, other, sizeof other);
	const pkg *ubuntu = pkg_find(pk, npk, "nvidia-cuda-toolkit");
	if (!st || st->n_toolkits == 0) {
		doctor_finding *f = doctor_add(rep, "wsl-toolkit-origin", DOC_INFO, DG_CUDA, -1);
		say(f, xstrdup(_("no CUDA toolkit: PyTorch wheels bring their own CUDA runtime")), NULL,
		    xasprintf(_("if you need nvcc: the package cuda-toolkit-%s from NVIDIA's wsl-ubuntu repository "
			      "(developer.nvidia.com/cuda-downloads: Linux, x86_64, WSL-Ubuntu); not 'cuda', 'cuda-%s' "
			      "or 'cuda-drivers', which pull a Linux driver"), cv, cv));
		return;
	}
	for (size_t i = 0; i < st->n_toolkits; i++) {
		const stack_toolkit *t = &st->toolkits[i];
		int ma = 0, mi = 0;
		char want[16];
		if (sscanf(t->version, "%d.%d", &ma, &mi) == 2)
			snprintf(want, sizeof want, "%d-%d", ma, mi);
		else
			snprintf(want, sizeof want, "%s", cv);
		char pname[64];
		snprintf(pname, sizeof pname, "cuda-toolkit-%s", want);
		const pkg *tp = pkg_find(pk, npk, pname);
		bool system = strcmp(t->root, "/usr") == 0 || str_starts(t->nvcc, "/usr/bin/");
		doctor_finding *f;
		if (system && ubuntu) {
			f = doctor_add(rep, "wsl-toolkit-origin", DOC_WARN, DG_CUDA, -1);
			/* without nvcc's answer, the package's upstream version ("12.0.140~12.0.1-4build4") */
			int vl = (int)strcspn(ubuntu->version, "~-");
			say(f, xasprintf(_("CUDA toolkit %.*s is Ubuntu's nvidia-cuda-toolkit, not NVIDIA's WSL package"),
					 *t->version ? (int)strlen(t->version) : vl, *t->version ? t->version : ubuntu->version),
			    xasprintf(_("%s; package nvidia-cuda-toolkit %s from the Ubuntu archive: an older CUDA, and its "
				      "dependencies can bring Linux driver libraries (libnvidia-compute-*)"),
				      t->root, ubuntu->version),
			    xasprintf(_("sudo apt-get remove nvidia-cuda-toolkit; then the package cuda-toolkit-%s from NVIDIA's "
				      "wsl-ubuntu repository (developer.nvidia.com/cuda-downloads: Linux, x86_64, WSL-Ubuntu)"),
				      cv));
		} else if (tp && wsl_repo && !other_repo) {
			f = doctor_add(rep, "wsl-toolkit-origin", DOC_OK, DG_CUDA, -1);
			say(f, xasprintf(_("CUDA toolkit %s is %s from NVIDIA's wsl-ubuntu repository"), t->version, pname),
			    xasprintf("%s; %s %s", t->root, pname, tp->version), NULL);
		} else if (tp && other_repo) {
			f = doctor_add(rep, "wsl-toolkit-origin", DOC_WARN, DG_CUDA, -1);
			say(f, xasprintf(_("CUDA toolkit %s comes from NVIDIA's %s repository, not the wsl-ubuntu one"), t->version,
					 other),
			    xasprintf(_("%s; %s %s; the %s repository also offers cuda-drivers, a Linux driver that must not "
				      "be installed in WSL"), t->root, pname, tp->version, other),
			    xasprintf(_("switch the apt source to NVIDIA's wsl-ubuntu repository (developer.nvidia.com/"
				      "cuda-downloads: Linux, x86_64, WSL-Ubuntu) and keep to %s; never 'cuda' or "
				      "'cuda-drivers'"), pname));
		} else {
			f = doctor_add(rep, "wsl-toolkit-origin", DOC_INFO, DG_CUDA, -1);
			say(f, xasprintf(_("CUDA toolkit %s in %s is not from a package (a runfile or a copy)"),
					 *t->version ? t->version : "?", t->root),
			    xasprintf(_("no %s package installed"), pname),
			    xasprintf(_("fine if it works; NVIDIA's packaged choice for WSL is %s from the wsl-ubuntu repository "
				      "(the runfile: deselect the driver)"), pname));
		}
	}
}

/* dxgkrnl's errors in the kernel log (GPU-PV's own messages; Xid never reaches Linux here). */
static void check_dxgkrnl(doctor_report *rep)
{
	char **lines = NULL;
	size_t n = 0;
	gw_error e = {0};
	int rc = hw_kmsg_grep(NULL, "dxg", 64, &lines, &n, &e);
	size_t errs = 0;
	const char *last = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcasestr(lines[i], "fail") || strcasestr(lines[i], "error")) {
			errs++;
			last = lines[i];
		}
	doctor_finding *f;
	if (rc) {
		f = doctor_add(rep, "wsl-dxgkrnl", DOC_SKIP, DG_HEALTH, -1);
		say(f, xstrdup(_("kernel log not readable: dxgkrnl (GPU-PV) errors not checked")), xstrdup(e.msg),
		    xstrdup(_("run as root (sudo gpuwise doctor) or allow reading: sudo sysctl kernel.dmesg_restrict=0")));
	} else if (errs) {
		f = doctor_add(rep, "wsl-dxgkrnl", DOC_WARN, DG_HEALTH, -1);
		say(f, xasprintf(P_("dxgkrnl (GPU paravirtualisation) logged %zu error", "dxgkrnl (GPU paravirtualisation) logged %zu errors", errs), errs),
		    xasprintf(_("last: %s; a few 'Ioctl failed' lines at start-up are common and harmless when CUDA works"),
			      last),
		    xstrdup(_("if CUDA fails: update the NVIDIA driver for Windows, then in PowerShell: wsl --update and "
			    "wsl --shutdown")));
	} else {
		f = doctor_add(rep, "wsl-dxgkrnl", DOC_OK, DG_HEALTH, -1);
		say(f, xstrdup(_("no dxgkrnl (GPU-PV) errors in the kernel log")), NULL, NULL);
	}
	f = doctor_add(rep, "wsl-xid", DOC_INFO, DG_HEALTH, -1);
	say(f, xstrdup(_("Xid errors do not reach WSL: the Windows driver handles GPU faults")),
	    xstrdup(_("the Linux kernel log of WSL carries dxgkrnl messages, never NVRM Xid lines")),
	    xstrdup(_("on Windows: Event Viewer > Windows Logs > System, source nvlddmkm (Xid and TDR 'display driver "
		    "stopped responding' events)")));
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

void doctor_check_wsl(const doctor_input *in, const hw_platform_info *pl, doctor_report *rep)
{
	check_platform(in, pl, rep);
	if (pl->kind != HW_PLATFORM_WSL2)
		return;
	pkg *pk;
	size_t npk = dpkg_installed(&pk);
	ldir *dirs;
	size_t nd = loader_dirs(&dirs);
	check_linux_driver(in, pk, npk, dirs, nd, rep);
	check_ldconfig_warning(rep);
	check_libcuda_order(dirs, nd, rep);
	check_toolkit_origin(in, pk, npk, rep);
	check_dxgkrnl(rep);
	free(dirs);
	free(pk);
}

/* The desktop on WSL is Windows': say where Windows decides. */
void doctor_check_wsl_desktop(const doctor_input *in, doctor_report *rep)
{
	const hw_snapshot *s = in->hw;
	const hw_gpu *g = NULL;
	for (size_t i = 0; s && i < s->n_gpus && !g; i++)
		if (s->gpus[i].vendor == HW_VENDOR_NVIDIA)
			g = &s->gpus[i];
	bool laptop = g && strcasestr(g->name, "laptop");
	doctor_finding *f = doctor_add(rep, "windows-graphics", DOC_INFO, DG_DESKTOP, -1);
	say(f, xstrdup(_("the desktop is Windows': Windows chooses the GPU of each Windows app")),
	    xasprintf(_("CUDA in WSL always runs on the NVIDIA GPU; Linux windows (WSLg) are drawn by Windows%s"),
		      laptop ? _("; on this hybrid laptop Windows apps default to the integrated GPU to save power") : ""),
	    xstrdup(_("for a Windows app (a browser, a game, a Windows Python): Settings > System > Display > Graphics, "
		    "pick the app, Options > High performance (the NVIDIA GPU); NVIDIA Control Panel > Manage 3D settings "
		    "> Program Settings does the same")));
	if (!g)
		return;
	char used[32] = "?", total[32] = "?";
	if (HW_VALID(g->mem_used_bytes))
		fmt_bytes(used, sizeof used, (uint64_t)g->mem_used_bytes.v);
	if (HW_VALID(g->mem_total_bytes))
		fmt_bytes(total, sizeof total, (uint64_t)g->mem_total_bytes.v);
	f = doctor_add(rep, "windows-gpu-memory", DOC_INFO, DG_DESKTOP, g->index);
	say(f, xasprintf(_("%s of %s VRAM in use, the Windows desktop's and Windows apps' share included"), used, total),
	    xstrdup(_("WSL cannot list Windows processes by name; Task Manager can")),
	    xstrdup(_("Task Manager > Performance > GPU (the NVIDIA one): 'Dedicated GPU memory' is the VRAM CUDA "
		    "allocates; 'Shared GPU memory' is system RAM the GPU may borrow, far slower (NVIDIA Control Panel > "
		    "Manage 3D settings > CUDA - Sysmem Fallback Policy decides whether CUDA spills into it); Task "
		    "Manager > Details with the 'Dedicated GPU memory' column names each app's share")));
}

/*
 * desktop.c: the desktop and browser GPU check for Linux.  "Chrome says GPU
 * acceleration is not supported" has a handful of causes that can be read
 * off the machine: which GPU (and which kernel driver) drives the session's
 * displays (/sys/class/drm), software rendering (no GPU driver on the
 * display, LIBGL_ALWAYS_SOFTWARE), PRIME render offload variables that do
 * not apply to the GPU they are meant for, and Chrome/Chromium's own
 * settings (hardware acceleration off, --disable-gpu, the GPU blocklist
 * override) under $HOME.
 */
#include "doctor/doctor.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/json.h"

#define DESKTOP_MAX_CARDS 16

typedef struct drm_card {
	char name[32];      /* "card0" */
	char driver[64];    /* "i915", "nvidia", "amdgpu", "simpledrm"; "" none */
	char pci[64];       /* "0000:00:02.0"; "" not a PCI device */
	unsigned vendor;    /* PCI vendor id, 0 unknown */
	bool boot_vga;      /* the firmware's primary display adapter */
	char connected[128]; /* "eDP-1, HDMI-A-1" */
} drm_card;

/* The last path component a symlink under the root points to; "" when none. */
static void link_base(const char *abs, char *out, size_t n)
{
	out[0] = '\0';
	char *p = gw_path(abs);
	char buf[1024];
	ssize_t l = readlink(p, buf, sizeof buf - 1);
	free(p);
	if (l <= 0)
		return;
	buf[l] = '\0';
	const char *b = strrchr(buf, '/');
	snprintf(out, n, "%s", b ? b + 1 : buf);
}

static const char *vendor_name(unsigned v)
{
	/* PCI vendor ids (pci.ids) */
	switch (v) {
	case 0x10de:
		return "NVIDIA";
	case 0x8086:
		return "Intel";
	case 0x1002:
		return "AMD";
	default:
		return "";
	}
}

/* Drivers that put a picture on the screen without a GPU to render with. */
static bool software_driver(const char *d)
{
	static const char *const sw[] = {"simpledrm", "simple-framebuffer", "efifb", "vesafb", "simplefb", "vkms",
					 "bochs-drm", "cirrus", "vboxvideo", "ast", "mgag200"};
	if (!*d)
		return true;
	for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++)
		if (strcmp(d, sw[i]) == 0)
			return true;
	return false;
}

static size_t scan_cards(drm_card *cards, size_t max)
{
	char *dir = gw_path("/sys/class/drm");
	DIR *d = opendir(dir);
	free(dir);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (strncmp(e->d_name, "card", 4) != 0 || strchr(e->d_name, '-') || !e->d_name[4])
			continue;
		drm_card *c = &cards[n];
		memset(c, 0, sizeof *c);
		snprintf(c->name, sizeof c->name, "%.31s", e->d_name);
		char path[256];
		snprintf(path, sizeof path, "/sys/class/drm/%s/device/driver", c->name);
		link_base(path, c->driver, sizeof c->driver);
		snprintf(path, sizeof path, "/sys/class/drm/%s/device", c->name);
		link_base(path, c->pci, sizeof c->pci);
		snprintf(path, sizeof path, "/sys/class/drm/%s/device/vendor", c->name);
		char *v = gw_read_line(path);
		if (v)
			c->vendor = (unsigned)strtoul(v, NULL, 16);
		free(v);
		snprintf(path, sizeof path, "/sys/class/drm/%s/device/boot_vga", c->name);
		v = gw_read_line(path);
		c->boot_vga = v && strcmp(v, "1") == 0;
		free(v);
		n++;
	}
	/* connectors: cardN-TYPE-M/status is "connected" */
	rewinddir(d);
	while ((e = readdir(d))) {
		const char *dash = strchr(e->d_name, '-');
		if (strncmp(e->d_name, "card", 4) != 0 || !dash)
			continue;
		char path[512];
		snprintf(path, sizeof path, "/sys/class/drm/%s/status", e->d_name);
		char *st = gw_read_line(path);
		bool on = st && strcmp(st, "connected") == 0;
		free(st);
		if (!on)
			continue;
		for (size_t i = 0; i < n; i++) {
			size_t l = strlen(cards[i].name);
			if (strncmp(e->d_name, cards[i].name, l) == 0 && e->d_name[l] == '-') {
				size_t used = strlen(cards[i].connected);
				snprintf(cards[i].connected + used, sizeof cards[i].connected - used, "%s%s", used ? ", " : "",
					 dash + 1);
			}
		}
	}
	closedir(d);
	return n;
}

static char *card_label(const drm_card *c)
{
	const char *vn = vendor_name(c->vendor);
	return xasprintf("%s%s%s (%s%s%s)", vn, *vn ? " GPU " : "", c->name, *c->driver ? c->driver : _("no driver"),
			 *c->pci ? ", " : "", c->pci);
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);
	return v && strcmp(v, value) == 0;
}

/* ---- the browser ---------------------------------------------------------- */

typedef struct browser {
	const char *name;   /* "Chrome" */
	const char *dir;    /* under ~/.config */
	const char *flags;  /* the flags file under ~/.config (Arch's chrome-flags.conf convention) */
} browser;

static const browser browsers[] = {
	{"Chrome", "google-chrome", "chrome-flags.conf"},
	{"Chromium", "chromium", "chromium-flags.conf"},
};

/* Does the flags text hold this switch as a word (optionally "=value")? */
static bool has_switch(const char *text, const char *sw)
{
	size_t l = strlen(sw);
	for (const char *p = text; (p = strstr(p, sw)); p += l) {
		bool start = p == text || strchr(" \t\n\"'", p[-1]);
		bool end = !p[l] || strchr(" \t\n\"'=", p[l]);
		if (start && end)
			return true;
	}
	return false;
}

static void check_browser(const browser *b, const char *home, doctor_report *rep)
{
	char *ls_path = xasprintf("%s/.config/%s/Local State", home, b->dir);
	char *fl_path = xasprintf("%s/.config/%s", home, b->flags);
	char *ls = NULL, *fl = NULL;
	size_t ls_len = 0;
	bool have_ls = gw_read_file(ls_path, true, 8 << 20, &ls, &ls_len, NULL) == 0;
	bool have_fl = gw_read_file(fl_path, true, 1 << 20, &fl, NULL, NULL) == 0;
	if (!have_ls && !have_fl)
		goto out;
	bool accel_off = false, ignore_blocklist = false;
	if (have_ls) {
		char ebuf[128];
		json_t *j = json_parse_limited(ls, ls_len, ebuf, sizeof ebuf);
		json_t *hw = j ? json_object_get(j, "hardware_acceleration_mode") : NULL;
		json_t *en = hw ? json_object_get(hw, "enabled") : NULL;
		accel_off = en && json_is_false(en);
		json_t *br = j ? json_object_get(j, "browser") : NULL;
		json_t *labs = br ? json_object_get(br, "enabled_labs_experiments") : NULL;
		size_t i;
		json_t *x;
		json_array_foreach(labs, i, x) {
			if (json_is_string(x) && str_starts(json_string_value(x), "ignore-gpu-blocklist"))
				ignore_blocklist = true;
		}
		json_decref(j);
	}
	if (accel_off) {
		doctor_finding *f = doctor_add(rep, "browser-gpu-off", DOC_WARN, DG_DESKTOP, -1);
		f->title = xasprintf(_("%s: \"Use graphics acceleration when available\" is off, so %s renders without the "
				     "GPU (chrome://gpu: \"Software only, hardware acceleration unavailable\")"), b->name, b->name);
		f->evidence = xasprintf(_("%s: hardware_acceleration_mode.enabled is false"), ls_path);
		f->fix = xasprintf(_("turn it on in chrome://settings/system, relaunch %s, then check chrome://gpu "
				   "(Graphics Feature Status shows \"Hardware accelerated\")"), b->name);
	}
	if (have_fl && has_switch(fl, "--disable-gpu")) {
		doctor_finding *f = doctor_add(rep, "browser-gpu-off", DOC_WARN, DG_DESKTOP, -1);
		f->title = xasprintf(_("%s is started with --disable-gpu"), b->name);
		f->evidence = xasprintf("%s", fl_path);
		f->fix = xasprintf(_("remove --disable-gpu from %s and relaunch %s"), fl_path, b->name);
	}
	if (have_fl && (strstr(fl, "--use-gl=swiftshader") || strstr(fl, "--use-angle=swiftshader"))) {
		doctor_finding *f = doctor_add(rep, "browser-gpu-off", DOC_WARN, DG_DESKTOP, -1);
		f->title = xasprintf(_("%s is told to render with SwiftShader (the CPU)"), b->name);
		f->evidence = xasprintf("%s", fl_path);
		f->fix = xasprintf(_("remove the --use-gl/--use-angle=swiftshader switch from %s"), fl_path);
	}
	if (ignore_blocklist || (have_fl && has_switch(fl, "--ignore-gpu-blocklist"))) {
		doctor_finding *f = doctor_add(rep, "browser-blocklist", DOC_INFO, DG_DESKTOP, -1);
		f->title = xasprintf(_("%s ignores its GPU blocklist (#ignore-gpu-blocklist)"), b->name);
		f->evidence = xasprintf("%s", ignore_blocklist ? ls_path : fl_path);
		f->fix = xstrdup(_("if pages render wrongly or the GPU process crashes, turn it off again in "
				 "chrome://flags/#ignore-gpu-blocklist; chrome://gpu lists the driver bugs it works around"));
	} else if (!accel_off) {
		doctor_finding *f = doctor_add(rep, "browser-blocklist", DOC_INFO, DG_DESKTOP, -1);
		f->title = xasprintf(_("%s applies its GPU blocklist: features it blocks for this GPU or driver run in "
				     "software"), b->name);
		f->evidence = xasprintf("%s", have_ls ? ls_path : fl_path);
		f->fix = xstrdup(_("see what is blocked and why in chrome://gpu (Problems Detected); to override for a "
				 "test: google-chrome --ignore-gpu-blocklist, or chrome://flags/#ignore-gpu-blocklist"));
	}
out:
	free(ls);
	free(fl);
	free(ls_path);
	free(fl_path);
}

/* ---- the check ------------------------------------------------------------ */

void doctor_check_desktop(doctor_report *rep)
{
	drm_card cards[DESKTOP_MAX_CARDS];
	size_t n = scan_cards(cards, DESKTOP_MAX_CARDS);
	const char *x11 = getenv("DISPLAY"), *way = getenv("WAYLAND_DISPLAY");
	bool session = (x11 && *x11) || (way && *way);
	const drm_card *disp = NULL;
	for (size_t i = 0; i < n && !disp; i++)
		if (cards[i].connected[0])
			disp = &cards[i];
	if (!session) {
		/* a server's BMC display (ast, mgag200) is no desktop to judge */
		doctor_finding *f = doctor_add(rep, "desktop-gpu", DOC_SKIP, DG_DESKTOP, -1);
		f->title = xstrdup(_("no graphical session: desktop and browser GPU checks skipped"));
		f->evidence = xasprintf(P_("DISPLAY and WAYLAND_DISPLAY are unset (%zu DRM card in /sys/class/drm%s%s)",
					   "DISPLAY and WAYLAND_DISPLAY are unset (%zu DRM cards in /sys/class/drm%s%s)", n), n,
					disp ? _(", a display on ") : "", disp ? disp->name : "");
		f->fix = xstrdup("");
		return;
	}
	for (size_t i = 0; i < n && !disp; i++)
		if (cards[i].boot_vga)
			disp = &cards[i];
	const char *stype = getenv("XDG_SESSION_TYPE");
	char sess[96];
	snprintf(sess, sizeof sess, _("%s session"), stype && *stype ? stype : way && *way ? "wayland" : "x11");

	/* which GPU draws the desktop */
	bool software = false;
	if (!disp) {
		doctor_finding *f = doctor_add(rep, "desktop-gpu", DOC_WARN, DG_DESKTOP, -1);
		f->title = xstrdup(_("no DRM device drives the display: the desktop and browsers render in software"));
		f->evidence = xasprintf(P_("%s; /sys/class/drm has %zu card, none with a connected display",
					   "%s; /sys/class/drm has %zu cards, none with a connected display", n), sess, n);
		f->fix = xstrdup(_("install and load the GPU's driver (gpuwise doctor's Hardware group says which)"));
		software = true;
	} else {
		char *lb = card_label(disp);
		software = software_driver(disp->driver);
		doctor_finding *f = doctor_add(rep, "desktop-gpu", software ? DOC_WARN : DOC_INFO, DG_DESKTOP, -1);
		if (software) {
			f->title = xasprintf(_("the display is driven by %s, a driver without a GPU behind it: the desktop and "
					     "browsers render in software (llvmpipe, SwiftShader), so Chrome reports GPU "
					     "acceleration as unavailable"), *disp->driver ? disp->driver : _("no driver"));
			f->fix = xstrdup(_("load the GPU's own driver for the display; for NVIDIA: enable DRM KMS "
					 "(nvidia-drm.modeset=1 on the kernel command line) and make sure nvidia_drm loads"));
		} else {
			f->title = xasprintf(_("the desktop is drawn by %s"), lb);
			f->fix = xstrdup("");
		}
		f->evidence = xasprintf(_("%s; displays connected to %s: %s%s"), sess, disp->name,
					disp->connected[0] ? disp->connected : _("none (the boot VGA device)"),
					disp->boot_vga ? _("; boot VGA") : "");
		free(lb);
	}
	if (env_is("LIBGL_ALWAYS_SOFTWARE", "1") || env_is("LIBGL_ALWAYS_SOFTWARE", "true")) {
		doctor_finding *f = doctor_add(rep, "desktop-software", DOC_WARN, DG_DESKTOP, -1);
		f->title = xstrdup(_("LIBGL_ALWAYS_SOFTWARE forces software OpenGL (llvmpipe) for programs started here"));
		f->evidence = xstrdup("LIBGL_ALWAYS_SOFTWARE=1");
		f->fix = xstrdup(_("unset LIBGL_ALWAYS_SOFTWARE"));
		software = true;
	}

	/* PRIME render offload: the variables must fit the GPU they aim at */
	const drm_card *dgpu = NULL;
	for (size_t i = 0; i < n; i++)
		if (&cards[i] != disp && !cards[i].connected[0] && *cards[i].driver && !software_driver(cards[i].driver))
			dgpu = &cards[i];
	const char *off = getenv("__NV_PRIME_RENDER_OFFLOAD"), *glx = getenv("__GLX_VENDOR_LIBRARY_NAME"),
		   *dri = getenv("DRI_PRIME");
	bool nv_off = off && strcmp(off, "1") == 0, nv_glx = glx && strcmp(glx, "nvidia") == 0;
	if (dgpu) {
		char *dl = card_label(dgpu);
		bool nvidia = strcmp(dgpu->driver, "nvidia") == 0;
		if (nvidia && dri && *dri && !nv_off) {
			doctor_finding *f = doctor_add(rep, "prime-offload", DOC_WARN, DG_DESKTOP, -1);
			f->title = xasprintf(_("DRI_PRIME=%s does not move rendering to %s: the NVIDIA driver ignores it"), dri, dl);
			f->evidence = xasprintf(_("DRI_PRIME selects among Mesa drivers; %s uses the proprietary nvidia driver"), dl);
			f->fix = xstrdup(_("__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia google-chrome "
					 "(Vulkan/ANGLE: also __VK_LAYER_NV_optimus=NVIDIA_only)"));
		} else if (nvidia && nv_off != nv_glx) {
			doctor_finding *f = doctor_add(rep, "prime-offload", DOC_WARN, DG_DESKTOP, -1);
			f->title = xstrdup(_("PRIME render offload is half set: GLX programs still render on the desktop's GPU"));
			f->evidence = xasprintf("__NV_PRIME_RENDER_OFFLOAD=%s, __GLX_VENDOR_LIBRARY_NAME=%s", off ? off : "(unset)",
						glx ? glx : "(unset)");
			f->fix = xstrdup(_("set both: __NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia PROGRAM"));
		} else {
			bool on = nvidia ? (nv_off && nv_glx) : (dri && *dri && strcmp(dri, "0") != 0);
			doctor_finding *f = doctor_add(rep, "prime-offload", DOC_INFO, DG_DESKTOP, -1);
			f->title = on ? xasprintf(_("programs started from this shell render on %s (PRIME render offload)"), dl)
				      : xasprintf(_("programs render on the desktop's GPU; %s renders only what is offloaded to it"), dl);
			f->evidence = nvidia ? xasprintf("__NV_PRIME_RENDER_OFFLOAD=%s, __GLX_VENDOR_LIBRARY_NAME=%s",
							 off ? off : "(unset)", glx ? glx : "(unset)")
					     : xasprintf("DRI_PRIME=%s", dri ? dri : "(unset)");
			f->fix = on ? xstrdup("")
				    : nvidia ? xstrdup(_("to run a browser on it: __NV_PRIME_RENDER_OFFLOAD=1 "
						       "__GLX_VENDOR_LIBRARY_NAME=nvidia google-chrome"))
					     : xstrdup(_("to run a browser on it: DRI_PRIME=1 google-chrome"));
		}
		free(dl);
	} else if (disp && strcmp(disp->driver, "nvidia") == 0 && dri && *dri) {
		doctor_finding *f = doctor_add(rep, "prime-offload", DOC_WARN, DG_DESKTOP, -1);
		f->title = xasprintf(_("DRI_PRIME=%s has no effect: the only GPU is driven by the NVIDIA driver"), dri);
		f->evidence = xstrdup(_("DRI_PRIME selects among Mesa drivers"));
		f->fix = xstrdup(_("unset DRI_PRIME"));
	}

	/* the browsers of this user */
	const char *home = getenv("HOME");
	if (home && *home)
		for (size_t i = 0; i < sizeof browsers / sizeof browsers[0]; i++)
			check_browser(&browsers[i], home, rep);
}

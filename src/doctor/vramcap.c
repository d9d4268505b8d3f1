/*
 * doctor/vramcap.c: is this process under a gpuwise VRAM cap (issue 14)?
 * Reads GPUWISE_CAP_REGION and LD_PRELOAD, and the region they name.
 */
#include <stdlib.h>
#include <string.h>

#include "cap/region.h"
#include "doctor/doctor.h"

/* Is libgpuwise-cap.so among the LD_PRELOAD entries (split on spaces and colons)? */
static bool cap_preloaded(void)
{
	const char *pre = getenv("LD_PRELOAD");
	if (!pre)
		return false;
	char *copy = xstrdup(pre);
	bool found = false;
	for (char *save = NULL, *tok = strtok_r(copy, " :\t", &save); tok && !found; tok = strtok_r(NULL, " :\t", &save)) {
		const char *base = strrchr(tok, '/');
		found = strcmp(base ? base + 1 : tok, CAP_LIB_NAME) == 0;
	}
	free(copy);
	return found;
}

void doctor_check_vram_cap(doctor_report *rep)
{
	const char *path = getenv(CAP_ENV_REGION);
	bool pre = cap_preloaded();
	if (!path || !*path) {
		/* the library fails closed without a region (docs/vram-cap.md) */
		if (pre) {
			doctor_finding *f = doctor_add(rep, "vram-cap", DOC_FAIL, DG_DRIVER, -1);
			f->title = xasprintf(_("%s is preloaded but no cap region is set: every GPU allocation is refused"), CAP_LIB_NAME);
			f->evidence = xasprintf("LD_PRELOAD='%s', %s %s", getenv("LD_PRELOAD"), CAP_ENV_REGION,
						path ? "empty" : "unset");
			f->fix = xasprintf(_("start the job with gpuwise run --vram-cap SIZE -- CMD, or remove %s from LD_PRELOAD"),
					  CAP_LIB_NAME);
		}
		return;
	}
	cap_region *r = NULL;
	char why[256] = "";
	int rc = cap_region_open(path, &r);
	if (!rc && (rc = cap_region_authenticate(path, r, why, sizeof why))) {
		cap_region_close(r);
		r = NULL;
	}
	if (rc) {
		doctor_finding *f = doctor_add(rep, "vram-cap", DOC_FAIL, DG_DRIVER, -1);
		f->title = xasprintf(_("the VRAM cap region '%s' cannot be used: every GPU allocation of this job is refused"), path);
		f->evidence = xasprintf("%s=%s: %s%s%s", CAP_ENV_REGION, path, cap_strerror(rc), *why ? ": " : "", why);
		f->fix = xstrdup(_("let gpuwise run --vram-cap SIZE set GPUWISE_CAP_REGION; do not set it by hand"));
		return;
	}
	char cap[32], used[32];
	strbuf ev = STRBUF_INIT;
	sb_printf(&ev, "region %s, created by gpuwise pid %u; %d process(es) of the job hold a lease", path,
		  r->owner_pid, cap_live_slots(r));
	for (int d = 0; d < CAP_MAX_DEVICES; d++)
		if (atomic_load(&r->devs[d].in_use)) {
			const unsigned char *u = r->devs[d].uuid;
			sb_printf(&ev, "; GPU-%02x%02x%02x%02x-...: %s in use", u[0], u[1], u[2], u[3],
				  fmt_bytes(used, sizeof used, cap_used(r, d)));
		}
	sb_printf(&ev, "; %llu allocation(s) refused", (unsigned long long)atomic_load(&r->refused));
	doctor_finding *f = doctor_add(rep, "vram-cap", pre ? DOC_OK : DOC_WARN, DG_DRIVER, -1);
	fmt_bytes(cap, sizeof cap, r->limit_bytes);
	f->title = pre ? xasprintf(_("VRAM cap active: %s per GPU (%s)"), cap, CAP_LIB_NAME)
		       : xasprintf(_("a VRAM cap of %s per GPU is set, but %s is not preloaded here"), cap, CAP_LIB_NAME);
	f->evidence = ev.buf;
	f->fix = xstrdup(pre ? "" : _("keep LD_PRELOAD as gpuwise run set it (a program that resets it is not capped)"));
	cap_region_close(r);
}

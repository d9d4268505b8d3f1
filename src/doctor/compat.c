/*
 * compat.c: the rules that tie a driver, a CUDA version, a GPU's compute
 * capability and a PyTorch build together, over the knowledge tables
 * data/cuda-drivers.tsv, cuda-compat.tsv, torch-builds.tsv and xid.tsv.
 */
#include "doctor/doctor.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/kb.h"

int version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		long x = 0, y = 0;
		while (*a && !isdigit((unsigned char)*a))
			a++;
		while (*b && !isdigit((unsigned char)*b))
			b++;
		if (!*a && !*b)
			break;
		x = *a ? strtol(a, (char **)&a, 10) : -1;
		y = *b ? strtol(b, (char **)&b, 10) : -1;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static void driver_min_col(const char *cuda, const char *col, char *out, size_t n)
{
	out[0] = '\0';
	const kb_table *t = kb_get_table("cuda-drivers", NULL);
	if (!t || !cuda || !*cuda)
		return;
	long cc = kb_col(t, "cuda"), cl = kb_col(t, col);
	/* the nearest listed release at or below cuda; its lowest minimum (GA) */
	const char *best_cuda = NULL, *best = NULL;
	for (size_t r = 0; r < t->nrows; r++) {
		const char *c = kb_cell(t, r, cc);
		if (version_cmp(c, cuda) > 0)
			continue;
		if (!best_cuda || version_cmp(c, best_cuda) > 0) {
			best_cuda = c;
			best = kb_cell(t, r, cl);
		} else if (version_cmp(c, best_cuda) == 0 && version_cmp(kb_cell(t, r, cl), best) < 0 &&
			   strcmp(kb_cell(t, r, cl), "N/A") != 0) {
			best = kb_cell(t, r, cl);
		}
	}
	if (best && strcmp(best, "N/A") != 0)
		snprintf(out, n, "%s", best);
}

void compat_driver_min(const char *cuda, char *out, size_t n)
{
	driver_min_col(cuda, "linux_min", out, n);
}

void compat_driver_min_windows(const char *cuda, char *out, size_t n)
{
	driver_min_col(cuda, "windows_min", out, n);
	if (!*out) /* from 13.1 the table gives no Windows number: the branches match */
		driver_min_col(cuda, "linux_min", out, n);
}

void compat_minor_floor(int cuda_major, char *out, size_t n)
{
	out[0] = '\0';
	const kb_table *t = kb_get_table("cuda-compat", NULL);
	if (!t)
		return;
	long cm = kb_col(t, "cuda_major"), cd = kb_col(t, "driver_min");
	for (size_t r = 0; r < t->nrows; r++)
		if (atoi(kb_cell(t, r, cm)) == cuda_major)
			snprintf(out, n, "%s", kb_cell(t, r, cd));
}

/* Tegra/iGPU capabilities that are not binary compatible with their dGPU siblings
 * (DEVICE_REQUIREMENT in pytorch/pytorch:torch/cuda/__init__.py). */
static bool exact_only(int major, int minor)
{
	return (major == 5 && minor == 3) || (major == 6 && minor == 2) || (major == 7 && minor == 2) ||
	       (major == 8 && minor == 7) || (major == 10 && minor == 1);
}

/* "sm_120" -> 12, 0; "sm_90a" -> 9, 0, arch-specific.  The last digit is the minor. */
static bool parse_arch(const char *tok, size_t len, bool *ptx, int *major, int *minor, bool *specific)
{
	char buf[32];
	if (len >= sizeof buf)
		return false;
	memcpy(buf, tok, len);
	buf[len] = '\0';
	const char *d;
	if (str_starts(buf, "sm_"))
		*ptx = false, d = buf + 3;
	else if (str_starts(buf, "compute_"))
		*ptx = true, d = buf + 8;
	else
		return false;
	size_t nd = 0;
	while (isdigit((unsigned char)d[nd]))
		nd++;
	if (nd < 2)
		return false;
	*specific = d[nd] == 'a' || d[nd] == 'f';
	*minor = d[nd - 1] - '0';
	*major = 0;
	for (size_t i = 0; i + 1 < nd; i++)
		*major = *major * 10 + (d[i] - '0');
	return true;
}

bool compat_arch_covers(const char *arch_list, int major, int minor, bool *ptx_only)
{
	bool cubin = false, ptx = false;
	const char *p = arch_list;
	while (p && *p) {
		while (*p == ' ' || *p == ',' || *p == ';' || *p == '\'' || *p == '[' || *p == ']')
			p++;
		size_t len = strcspn(p, " ,;'[]");
		if (!len)
			break;
		bool is_ptx, specific;
		int ma, mi;
		if (parse_arch(p, len, &is_ptx, &ma, &mi, &specific)) {
			if (is_ptx) {
				if (!specific && (ma < major || (ma == major && mi <= minor)))
					ptx = true;
			} else if (ma == major) {
				if (mi == minor)
					cubin = true;
				else if (mi < minor && !specific && !exact_only(major, minor) &&
					 !exact_only(ma, mi))
					cubin = true;
			}
		}
		p += len;
	}
	if (ptx_only)
		*ptx_only = !cubin && ptx;
	return cubin || ptx;
}

void compat_pip_line(const char *torch, const char *index_url, char *out, size_t n)
{
	/* --force-reinstall: a plain install answers "Requirement already
	 * satisfied" when any torch of that version is present, CPU or not */
	const kb_table *t = kb_get_table("torch-domains", NULL);
	if (t) {
		long ct = kb_col(t, "torch"), cv = kb_col(t, "torchvision"), ca = kb_col(t, "torchaudio");
		for (size_t r = 0; ct >= 0 && cv >= 0 && ca >= 0 && r < t->nrows; r++) {
			if (strcmp(kb_cell(t, r, ct), torch) != 0)
				continue;
			snprintf(out, n, "pip install --force-reinstall torch~=%s.0 torchvision~=%s.0 torchaudio~=%s.0 --index-url %s",
				 torch, kb_cell(t, r, cv), kb_cell(t, r, ca), index_url);
			return;
		}
	}
	snprintf(out, n, "pip install --force-reinstall torch~=%s.0 --index-url %s", torch, index_url);
}

int compat_pick_torch(int major, int minor, const char *driver, torch_pick *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	const kb_table *t = kb_get_table("torch-builds", err);
	if (!t)
		return err ? err->code : GW_ENOENT;
	long ct = kb_col(t, "torch"), cv = kb_col(t, "variant"), cc = kb_col(t, "cuda"),
	     ca = kb_col(t, "arch_list"), cu = kb_col(t, "index_url");
	long best = -1, lowest = -1;
	char best_min[32] = "", lowest_min[32] = "";
	for (size_t r = 0; r < t->nrows; r++) {
		bool ptx_only;
		/* PTX alone does not count: PyTorch warns unless a cubin of the same major exists */
		if (!compat_arch_covers(kb_cell(t, r, ca), major, minor, &ptx_only) || ptx_only)
			continue;
		char need[32];
		compat_driver_min(kb_cell(t, r, cc), need, sizeof need);
		/* the build needing the oldest driver; among equals the newest torch */
		if (lowest < 0 || version_cmp(need, lowest_min) < 0 ||
		    (version_cmp(need, lowest_min) == 0 &&
		     version_cmp(kb_cell(t, r, ct), kb_cell(t, (size_t)lowest, ct)) > 0)) {
			lowest = (long)r;
			snprintf(lowest_min, sizeof lowest_min, "%s", need);
		}
		if (driver && *driver && *need && version_cmp(driver, need) < 0)
			continue;
		/* newest torch, then newest CUDA */
		if (best < 0 || version_cmp(kb_cell(t, r, ct), kb_cell(t, (size_t)best, ct)) > 0 ||
		    (version_cmp(kb_cell(t, r, ct), kb_cell(t, (size_t)best, ct)) == 0 &&
		     version_cmp(kb_cell(t, r, cc), kb_cell(t, (size_t)best, cc)) > 0)) {
			best = (long)r;
			snprintf(best_min, sizeof best_min, "%s", need);
		}
	}
	long r = (driver && *driver) ? best : lowest;
	if (r < 0) {
		if (lowest >= 0) {
			out->driver_too_old = true;
			snprintf(out->need_driver, sizeof out->need_driver, "%s", lowest_min);
			r = lowest;
		} else {
			return 0;
		}
	} else {
		out->found = true;
	}
	size_t row = (size_t)r;
	snprintf(out->torch, sizeof out->torch, "%s", kb_cell(t, row, ct));
	snprintf(out->variant, sizeof out->variant, "%s", kb_cell(t, row, cv));
	snprintf(out->cuda, sizeof out->cuda, "%s", kb_cell(t, row, cc));
	snprintf(out->index_url, sizeof out->index_url, "%s", kb_cell(t, row, cu));
	compat_pip_line(out->torch, out->index_url, out->pip_line, sizeof out->pip_line);
	snprintf(out->min_driver, sizeof out->min_driver, "%s", r == best ? best_min : lowest_min);
	return 0;
}

bool xid_lookup(int xid, const char **meaning, const char **severity, const char **action)
{
	const kb_table *t = kb_get_table("xid", NULL);
	if (!t)
		return false;
	long cx = kb_col(t, "xid");
	for (size_t r = 0; r < t->nrows; r++) {
		if (atoi(kb_cell(t, r, cx)) != xid)
			continue;
		if (meaning)
			*meaning = kb_cell(t, r, kb_col(t, "meaning"));
		if (severity)
			*severity = kb_cell(t, r, kb_col(t, "severity"));
		if (action)
			*action = kb_cell(t, r, kb_col(t, "action"));
		return true;
	}
	return false;
}

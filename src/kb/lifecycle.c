/*
 * lifecycle.c: data/lifecycle.tsv (per compute capability) and
 * data/install.tsv (per card), read into typed records and checked.
 */
#include "kb/lifecycle.h"
#include "kb/kb_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bad(const kb_table *t, size_t r, long c, const char *what, gw_error *err)
{
	return gw_fail(err, GW_EFORMAT, "table '%s' line %zu, column '%s': '%s' %s", t->name, t->lines[r],
		       t->header[c], kb_cell(t, r, c), what);
}

/* ---- lifecycle.tsv ------------------------------------------------------- */
enum { L_ARCH, L_CCS, L_TORCH, L_WHEEL, L_DRIVER, L_CUDA, L_PREBUILT, L_HW, L_ASOF, L_SOURCE, L_COUNT };
static const char *const lcols[L_COUNT] = {"arch", "ccs", "last_torch", "torch_wheel", "last_driver",
					   "cuda_build", "prebuilt", "hardware", "as_of", "source"};

typedef struct lc_rec {
	kb_lifecycle pub;
	const char *ccs; /* "6.1 6.2" */
} lc_rec;

/* "6.1": digits, a dot, digits. */
static bool is_cc(const char *s, size_t n)
{
	size_t i = 0, a = 0, b = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, a++;
	if (!a || i >= n || s[i] != '.')
		return false;
	i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, b++;
	return b && i == n;
}

/* "2.14" or "" */
static bool is_release(const char *s)
{
	if (!*s)
		return true;
	return is_cc(s, strlen(s));
}

/* "YYYY-MM" */
static bool is_month(const char *s)
{
	if (strlen(s) != 7 || s[4] != '-')
		return false;
	for (int i = 0; i < 7; i++)
		if (i != 4 && (s[i] < '0' || s[i] > '9'))
			return false;
	int m = (s[5] - '0') * 10 + (s[6] - '0');
	return m >= 1 && m <= 12;
}

static bool ccs_ok(const char *s)
{
	bool any = false;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		size_t n = strcspn(s, " ");
		if (!is_cc(s, n))
			return false;
		any = true;
		s += n;
	}
	return any;
}

static int lc_read(const kb_table *t, size_t r, const long *c, void *rec, gw_error *err)
{
	lc_rec *x = rec;
	int rc;
	if ((rc = kb_cell_required(t, r, c[L_ARCH], err)) || (rc = kb_cell_required(t, r, c[L_CUDA], err)) ||
	    (rc = kb_cell_required(t, r, c[L_PREBUILT], err)) || (rc = kb_cell_required(t, r, c[L_HW], err)))
		return rc;
	if (!ccs_ok(kb_cell(t, r, c[L_CCS])))
		return bad(t, r, c[L_CCS], "is not a list of compute capabilities (\"6.0 6.1\")", err);
	if (!is_release(kb_cell(t, r, c[L_TORCH])))
		return bad(t, r, c[L_TORCH], "is not a PyTorch release (\"2.14\")", err);
	if (*kb_cell(t, r, c[L_TORCH]) && !*kb_cell(t, r, c[L_WHEEL]))
		return bad(t, r, c[L_WHEEL], "is empty: say which wheel runs the last release", err);
	const char *drv = kb_cell(t, r, c[L_DRIVER]);
	if (*drv && (drv[0] != 'R' || !drv[1] || strspn(drv + 1, "0123456789") != strlen(drv + 1)))
		return bad(t, r, c[L_DRIVER], "is not a driver branch (\"R580\")", err);
	if (!is_month(kb_cell(t, r, c[L_ASOF])))
		return bad(t, r, c[L_ASOF], "is not a month (YYYY-MM)", err);
	x->pub.arch = kb_cell(t, r, c[L_ARCH]);
	x->ccs = kb_cell(t, r, c[L_CCS]);
	x->pub.last_torch = kb_cell(t, r, c[L_TORCH]);
	x->pub.torch_wheel = kb_cell(t, r, c[L_WHEEL]);
	x->pub.last_driver = drv;
	x->pub.cuda_build = kb_cell(t, r, c[L_CUDA]);
	x->pub.prebuilt = kb_cell(t, r, c[L_PREBUILT]);
	x->pub.hardware = kb_cell(t, r, c[L_HW]);
	x->pub.as_of = kb_cell(t, r, c[L_ASOF]);
	x->pub.source = kb_cell(t, r, c[L_SOURCE]);
	return 0;
}

static const char *lc_id(const void *rec)
{
	return ((const lc_rec *)rec)->pub.arch;
}

/* No compute capability in two rows. */
static int lc_finish(const kb_table *t, void *recs, size_t n, gw_error *err)
{
	lc_rec *x = recs;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++) {
			char cc[16];
			const char *s = x[i].ccs;
			while (*s) {
				while (*s == ' ')
					s++;
				size_t k = strcspn(s, " ");
				if (!k)
					break;
				snprintf(cc, sizeof cc, "%.*s", (int)k, s);
				const char *o = x[j].ccs;
				for (;;) {
					while (*o == ' ')
						o++;
					size_t m = strcspn(o, " ");
					if (!m)
						break;
					if (m == k && !strncmp(o, cc, k))
						return gw_fail(err, GW_EFORMAT,
							       "table '%s' line %zu, column 'ccs': '%s' is already in line %zu",
							       t->name, t->lines[i], cc, t->lines[j]);
					o += m;
				}
				s += k;
			}
		}
	return 0;
}

static kb_records lc_records = {
	.table = "lifecycle",
	.cols = lcols,
	.ncols = L_COUNT,
	.rec_size = sizeof(lc_rec),
	.read_row = lc_read,
	.id_of = lc_id,
	.finish = lc_finish,
};

/* ---- install.tsv --------------------------------------------------------- */
enum { I_GPU, I_FORM, I_COOL, I_DISPLAY, I_POWER, I_SLOTS, I_REBAR, I_SOURCE, I_COUNT };
static const char *const icols[I_COUNT] = {"gpu",   "form_factor", "cooling", "display",
					   "power_connector", "slots", "rebar", "source"};

static const char *const form_names[] = {"PCIe", "SXM2", "SXM4", "SXM5"};

const char *kb_form_name(kb_form_factor f)
{
	return (size_t)f < sizeof form_names / sizeof form_names[0] ? form_names[f] : "?";
}

/* The names are checked when the table is the user's own (a replaced gpus table may drop some). */
static bool own_install(void)
{
	if (!kb_data_dir())
		return false;
	char *p = xasprintf("%s/install.tsv", kb_data_dir());
	bool own = access(p, F_OK) == 0;
	free(p);
	return own;
}

static int in_read(const kb_table *t, size_t r, const long *c, void *rec, gw_error *err)
{
	kb_install *x = rec;
	int rc, slots;
	const char *gpu = kb_cell(t, r, c[I_GPU]);
	if ((rc = kb_cell_required(t, r, c[I_GPU], err)))
		return rc;
	if (own_install() && !kb_gpu_find(gpu))
		return bad(t, r, c[I_GPU], "is not a GPU of the gpus table", err);
	const char *f = kb_cell(t, r, c[I_FORM]);
	size_t k = 0;
	for (; k < sizeof form_names / sizeof form_names[0]; k++)
		if (str_ieq(f, form_names[k]))
			break;
	if (k == sizeof form_names / sizeof form_names[0])
		return bad(t, r, c[I_FORM], "is not pcie, sxm2, sxm4 or sxm5", err);
	const char *cool = kb_cell(t, r, c[I_COOL]);
	if (strcmp(cool, "active") && strcmp(cool, "passive"))
		return bad(t, r, c[I_COOL], "is not active or passive", err);
	if ((rc = kb_cell_bool(t, r, c[I_DISPLAY], &x->display, err)) ||
	    (rc = kb_cell_bool(t, r, c[I_REBAR], &x->rebar, err)) ||
	    (rc = kb_cell_int(t, r, c[I_SLOTS], 1, 4, false, &slots, err)) ||
	    (rc = kb_cell_required(t, r, c[I_POWER], err)))
		return rc;
	x->gpu = gpu;
	x->form = (kb_form_factor)k;
	x->passive = !strcmp(cool, "passive");
	x->power_connector = kb_cell(t, r, c[I_POWER]);
	x->slots = slots;
	x->source = kb_cell(t, r, c[I_SOURCE]);
	return 0;
}

static const char *in_id(const void *rec)
{
	return ((const kb_install *)rec)->gpu;
}

static kb_records in_records = {
	.table = "install",
	.cols = icols,
	.ncols = I_COUNT,
	.rec_size = sizeof(kb_install),
	.read_row = in_read,
	.id_of = in_id,
};

/* ---- API ----------------------------------------------------------------- */
int kb_lifecycle_load(gw_error *err)
{
	int rc = kb_records_load(&lc_records, err);
	if (!rc)
		rc = kb_records_load(&in_records, err);
	return rc;
}

void kb_lifecycle_release(void)
{
	kb_records_release(&lc_records);
	kb_records_release(&in_records);
}

size_t kb_lifecycle_count(void)
{
	kb_records_load(&lc_records, NULL);
	return lc_records.n;
}

const kb_lifecycle *kb_lifecycle_at(size_t i)
{
	return i < kb_lifecycle_count() ? &((const lc_rec *)lc_records.recs)[i].pub : NULL;
}

size_t kb_install_count(void)
{
	kb_records_load(&in_records, NULL);
	return in_records.n;
}

const kb_lifecycle *kb_lifecycle_for(const gpu_spec *g)
{
	if (!g || g->cc_major < 0 || !g->cc || !*g->cc)
		return NULL;
	return kb_lifecycle_for_cc(g->cc);
}

const kb_lifecycle *kb_lifecycle_for_cc(const char *cc)
{
	if (!cc || !*cc)
		return NULL;
	size_t n = kb_lifecycle_count(), k = strlen(cc);
	for (size_t i = 0; i < n; i++) {
		const lc_rec *x = &((const lc_rec *)lc_records.recs)[i];
		for (const char *s = x->ccs; *s;) {
			while (*s == ' ')
				s++;
			size_t m = strcspn(s, " ");
			if (m == k && !strncmp(s, cc, k))
				return &x->pub;
			s += m;
		}
	}
	return NULL;
}

const kb_install *kb_install_for(const gpu_spec *g)
{
	if (!g)
		return NULL;
	size_t n = kb_install_count();
	const kb_install *rows = in_records.recs;
	for (size_t i = 0; i < n; i++) {
		const gpu_spec *o = kb_gpu_find(rows[i].gpu);
		if (o == g || (o && !strcmp(o->id, g->id)))
			return &rows[i];
	}
	return NULL;
}

/*
 * hw.c: merge the backends into one snapshot.  NVML devices come first in
 * NVML order, matched to their sysfs PCI entries by bus id; then NVIDIA
 * GPUs NVML did not report (asleep, no driver, nouveau); then every other
 * display controller in PCI order.  What does not change (identity,
 * limits, maxima, CUDA attributes) is read once at hw_open into
 * templates; hw_sample copies them and reads only what changes.
 */
#include <stdlib.h>
#include <string.h>

#include "hw/hw_int.h"

struct hw {
	hw_opts o;
	sysfs_gpu *sys;
	size_t n_sys;
	nvml *nv;
	cuda *cu;
	hw_snapshot base;   /* machine-wide fields; gpus stays NULL */
	hw_gpu *tmpl;
	int *sys_of;        /* per template: index into sys, or -1 */
	size_t n_tmpl;
	proc_cache *pc;
};

void hw_gpu_clear(hw_gpu *g)
{
	memset(g, 0, sizeof *g);
	g->nvml_index = -1;
	g->cuda_ordinal = -1;
	g->pci_revision = -1;
	/* every hw_val between cc_major and l2_bytes is not queried yet */
	for (hw_val *v = &g->cc_major; v <= &g->l2_bytes; v++)
		*v = (hw_val){0, HW_UNQUERIED, 0};
	g->procs_listed = (hw_val){0, HW_UNQUERIED, 0};
	for (hw_val *v = &g->enc_util_pct; v <= &g->pstate; v++)
		*v = (hw_val){0, HW_UNQUERIED, 0};
}

void hw_gpu_free_lists(hw_gpu *g)
{
	free(g->migs);
	free(g->procs);
	g->migs = NULL;
	g->procs = NULL;
	g->n_migs = g->n_procs = 0;
}

static bool nvidia_bound(const hw_gpu *g)
{
	return g->vendor == HW_VENDOR_NVIDIA && strcmp(g->kernel_driver, "nvidia") == 0;
}

static bool nvidia_sleeping(const hw_gpu *g)
{
	return nvidia_bound(g) && strcmp(g->runtime_status, "suspended") == 0;
}

/* Copy what sysfs knows into an NVML device's template. */
static void merge_sysfs(hw_gpu *g, const hw_gpu *s)
{
	snprintf(g->kernel_driver, sizeof g->kernel_driver, "%s", s->kernel_driver);
	snprintf(g->runtime_status, sizeof g->runtime_status, "%s", s->runtime_status);
	g->pci_revision = s->pci_revision;
	g->fell_off_bus = s->fell_off_bus;
	g->integrated = s->integrated;
	g->pci_class = s->pci_class;
	if (!g->pci_subsys_id)
		g->pci_subsys_id = s->pci_subsys_id;
	if (!g->pci_device_id)
		g->pci_device_id = s->pci_device_id;
	if (!g->name[0])
		snprintf(g->name, sizeof g->name, "%s", s->name);
	if (s->fell_off_bus) {
		size_t len = strlen(g->error);
		snprintf(g->error + len, sizeof g->error - len, N_("%sfell off the bus (PCI config space reads 0xff)"),
			 len ? "; " : "");
	}
}

static void add_tmpl(hw *h, size_t *cap, const hw_gpu *g, int sys_idx)
{
	size_t cap2 = *cap;
	h->tmpl = xgrow(h->tmpl, cap, h->n_tmpl + 1, sizeof *h->tmpl);
	h->sys_of = xgrow(h->sys_of, &cap2, h->n_tmpl + 1, sizeof *h->sys_of);
	h->tmpl[h->n_tmpl] = *g;
	h->tmpl[h->n_tmpl].index = (int)h->n_tmpl;
	h->sys_of[h->n_tmpl] = sys_idx;
	h->n_tmpl++;
}

/* A sysfs-only GPU: say why nothing more is known. */
static void sysfs_only(hw *h, hw_gpu *g)
{
	if (g->fell_off_bus)
		snprintf(g->error, sizeof g->error, N_("fell off the bus (PCI config space reads 0xff)"));
	if (g->vendor != HW_VENDOR_NVIDIA)
		return;
	if (nvidia_sleeping(g) && !h->o.wake)
		g->asleep = true;
	else if (!g->kernel_driver[0] && !g->error[0])
		snprintf(g->error, sizeof g->error, N_("no kernel driver bound"));
	else if (strcmp(g->kernel_driver, "nvidia") != 0 && !g->error[0])
		snprintf(g->error, sizeof g->error, N_("bound to '%s', not the NVIDIA driver"), g->kernel_driver);
	else if (!g->error[0] && !g->asleep && h->base.nvml_initialised)
		snprintf(g->error, sizeof g->error, N_("not reported by NVML"));
}

hw *hw_open(const hw_opts *o, gw_error *err)
{
	hw *h = xcalloc(1, sizeof *h);
	if (o)
		h->o = *o;
	if (sysfs_scan(&h->sys, &h->n_sys, err)) {
		free(h);
		return NULL;
	}
	hw_snapshot *b = &h->base;
	b->cuda_driver_version = (hw_val){0, HW_UNQUERIED, 0};
	b->platform = hw_platform();
	const char *sleeper = NULL;
	for (size_t i = 0; i < h->n_sys; i++)
		if (nvidia_sleeping(&h->sys[i].id) && !sleeper)
			sleeper = h->sys[i].id.pci_bus_id;
	bool blocked = sleeper && !h->o.wake;

	h->nv = nvml_load(b->nvml_path, sizeof b->nvml_path, b->nvml_error, sizeof b->nvml_error,
			  b->nvml_note, sizeof b->nvml_note);
	b->nvml_loaded = h->nv != NULL;
	const char *named = getenv("GPUWISE_NVML_LIB");
	b->nvml_disabled = named && strcmp(named, "none") == 0;
	b->nvml_named = named && *named && !b->nvml_disabled;
	if (h->nv && blocked) {
		/* nvmlInit (and cuInit) would power the GPU up */
		b->nvml_asleep_skip = true;
		snprintf(b->nvml_error, sizeof b->nvml_error,
			 N_("NVML not initialised: the NVIDIA GPU at %s is runtime-suspended (asleep); --wake would wake it"),
			 sleeper);
	} else if (h->nv) {
		b->nvml_initialised = nvml_start(h->nv, b, b->nvml_error, sizeof b->nvml_error) == 0;
	}

	size_t cap = 0;
	bool *used = xcalloc(h->n_sys ? h->n_sys : 1, sizeof *used);
	unsigned nn = nvml_count(h->nv);
	for (unsigned i = 0; i < nn; i++) {
		hw_gpu g;
		hw_gpu_clear(&g);
		nvml_static(h->nv, i, &g);
		int sys_idx = -1;
		for (size_t k = 0; k < h->n_sys; k++)
			if (!used[k] && g.pci_bus_id[0] && strcmp(h->sys[k].id.pci_bus_id, g.pci_bus_id) == 0) {
				sys_idx = (int)k;
				used[k] = true;
				merge_sysfs(&g, &h->sys[k].id);
				break;
			}
		add_tmpl(h, &cap, &g, sys_idx);
	}
	/* An NVML device whose PCI info failed (a lost GPU may answer nothing)
	 * takes the first unmatched GPU the NVIDIA driver drives: both lists
	 * are in PCI order, and listing it twice would be worse. */
	for (size_t t = 0; t < h->n_tmpl; t++) {
		if (h->tmpl[t].pci_bus_id[0])
			continue;
		for (size_t k = 0; k < h->n_sys; k++)
			if (!used[k] && nvidia_bound(&h->sys[k].id)) {
				used[k] = true;
				h->sys_of[t] = (int)k;
				snprintf(h->tmpl[t].pci_bus_id, sizeof h->tmpl[t].pci_bus_id, "%s", h->sys[k].id.pci_bus_id);
				merge_sysfs(&h->tmpl[t], &h->sys[k].id);
				break;
			}
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < h->n_sys; k++) {
			bool nv = h->sys[k].id.vendor == HW_VENDOR_NVIDIA;
			if (used[k] || nv != (pass == 0))
				continue;
			used[k] = true;
			hw_gpu g = h->sys[k].id;
			sysfs_only(h, &g);
			add_tmpl(h, &cap, &g, (int)k);
		}
	free(used);

	if (!h->o.no_cuda && !blocked && nn > 0) {
		h->cu = cuda_load(b->cuda_path, sizeof b->cuda_path, b->cuda_error, sizeof b->cuda_error);
		b->cuda_loaded = h->cu != NULL;
		hw_val cv = {0, HW_UNQUERIED, 0};
		if (h->cu && cuda_start(h->cu, &cv, b->cuda_error, sizeof b->cuda_error) == 0)
			cuda_attach(h->cu, h->tmpl, h->n_tmpl, b->cuda_order_note, sizeof b->cuda_order_note);
		if (!HW_VALID(b->cuda_driver_version) && HW_VALID(cv))
			b->cuda_driver_version = cv;
	}
	h->pc = proc_cache_new();
	return h;
}

int hw_sample(hw *h, hw_snapshot *out, gw_error *err)
{
	(void)err;
	*out = h->base;
	out->taken_wall_ms = wall_ms();
	out->gpus = xcalloc(h->n_tmpl ? h->n_tmpl : 1, sizeof *out->gpus);
	out->n_gpus = h->n_tmpl;
	for (size_t i = 0; i < h->n_tmpl; i++) {
		hw_gpu *g = &out->gpus[i];
		*g = h->tmpl[i];
		if (g->nvml_index >= 0)
			nvml_dynamic(h->nv, (unsigned)g->nvml_index, g, !h->o.no_procs, h->o.pcie_throughput);
		if (h->sys_of[i] >= 0 && !g->fell_off_bus)
			sysfs_dynamic(&h->sys[h->sys_of[i]], g, h->o.wake);
		if (g->nvml_index < 0 && g->vendor == HW_VENDOR_NVIDIA)
			g->asleep = nvidia_sleeping(g) && !h->o.wake;
		for (size_t k = 0; k < g->n_procs; k++) {
			proc_fill(h->pc, &g->procs[k]);
			g->procs[k].windows_side = h->base.platform == HW_PLATFORM_WSL2 && !g->procs[k].exists;
		}
	}
	proc_cache_sweep(h->pc);
	return 0;
}

void hw_snapshot_release(hw_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_gpus; i++)
		hw_gpu_free_lists(&s->gpus[i]);
	free(s->gpus);
	s->gpus = NULL;
	s->n_gpus = 0;
}

void hw_close(hw *h)
{
	if (!h)
		return;
	nvml_close(h->nv);
	cuda_close(h->cu);
	proc_cache_free(h->pc);
	free(h->sys);
	free(h->tmpl);
	free(h->sys_of);
	free(h);
}

int hw_snapshot_take(const hw_opts *o, hw_snapshot *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	hw *h = hw_open(o, err);
	if (!h)
		return err ? err->code : GW_EINVAL;
	int rc = hw_sample(h, out, err);
	hw_close(h);
	return rc;
}

/* Bit names of nvmlClocksEventReasons (nvml.h, "ClocksEventReasons"). */
const char *hw_throttle_words(uint64_t bits, char *buf, size_t n)
{
	static const struct { uint64_t bit; const char *word; } names[] = {
		{HW_THR_GPU_IDLE, "idle"},
		{HW_THR_APP_CLOCKS, "application clocks setting"},
		{HW_THR_SW_POWER_CAP, "power cap"},
		{HW_THR_HW_SLOWDOWN, "hardware slowdown"},
		{HW_THR_SYNC_BOOST, "sync boost"},
		{HW_THR_SW_THERMAL, "thermal slowdown (software)"},
		{HW_THR_HW_THERMAL, "thermal slowdown (hardware)"},
		{HW_THR_HW_POWER_BRAKE, "power brake (hardware)"},
		{HW_THR_DISPLAY_CLOCKS, "display clock setting"},
	};
	size_t len = 0;
	if (n)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(bits & names[i].bit))
			continue;
		int w = snprintf(buf + len, n > len ? n - len : 0, "%s%s", len ? ", " : "", names[i].word);
		if (w > 0)
			len += (size_t)w;
		if (len >= n)
			break;
	}
	uint64_t known = 0x1ff;
	if ((bits & ~known) && len < n)
		snprintf(buf + len, n - len, "%sother (0x%llx)", len ? ", " : "",
			 (unsigned long long)(bits & ~known));
	if (!bits && n)
		snprintf(buf, n, "none");
	return buf;
}

const char *hw_vendor_name(hw_vendor v)
{
	switch (v) {
	case HW_VENDOR_NVIDIA: return "NVIDIA";
	case HW_VENDOR_AMD: return "AMD";
	case HW_VENDOR_INTEL: return "Intel";
	default: return "other";
	}
}

const char *hw_status_name(hw_status s)
{
	switch (s) {
	case HW_OK: return N_("ok");
	case HW_UNQUERIED: return N_("not queried");
	case HW_NOT_SUPPORTED: return N_("not supported");
	case HW_NO_PERMISSION: return N_("no permission");
	case HW_GPU_LOST: return N_("GPU is lost");
	case HW_NO_SYMBOL: return N_("not in this driver");
	default: return N_("failed");
	}
}

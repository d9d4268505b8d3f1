/*
 * gpuwise status: the GPUs now, one line each with their processes below
 * (gpustat style), or --json, or --prometheus; --watch repeats.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "hw/hw.h"
#include "util/json.h"

enum { FMT_TEXT, FMT_JSON, FMT_PROM };

typedef struct status_opts {
	int format;
	bool all, watch;
	uint64_t interval_ms;
	long long count;      /* frames to print with --watch; 0 = until SIGINT */
	long long bench;      /* --bench-refresh N (hidden) */
} status_opts;

static volatile sig_atomic_t stop_flag;

static void on_sigint(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpuwise status [--json | --prometheus] [--watch DURATION] [--count N]\n"
		"                      [--all] [--wake]\n\n"
		"Show the GPUs of this machine now: memory, utilisation, temperature, power\n"
		"and the processes on each, with their users.  Non-NVIDIA GPUs are listed with\n"
		"what sysfs knows of them.\n\n"
		"Options:\n"
		"  --json             one JSON document (docs/json-status.md); null = unknown\n"
		"  --prometheus       Prometheus text exposition format (docs/prometheus.md)\n"
		"  --watch DURATION   refresh every DURATION (\"1s\", \"500ms\") until Ctrl-C;\n"
		"                     in place on a terminal, repeated otherwise (JSON: one\n"
		"                     document per line)\n"
		"  --count N          with --watch, stop after N refreshes\n"
		"  --all              more detail: bus, driver, clocks, throttle reasons, PCIe,\n"
		"                     ECC, MIG, and the CUDA driver's view (SM count, bandwidth,\n"
		"                     CUDA ordinals; loading CUDA is slower)\n"
		"  --wake             query NVIDIA GPUs even when they are runtime-suspended\n"
		"                     (asleep); without it a sleeping laptop GPU is left asleep\n"
		"  -h, --help         this help\n\n"
		"Environment: GPUWISE_NVML_LIB and GPUWISE_CUDA_LIB name the NVML and CUDA\n"
		"driver libraries; GPUWISE_ROOT prefixes /sys, /proc and /etc (tests).\n\n"
		"Exit status: 0 success; 1 runtime error (NVML present but failing, an NVIDIA\n"
		"GPU bound to the driver but no NVML, an unreadable sysfs tree); 2 usage error.\n");
}

/* ---- shared helpers -------------------------------------------------------- */

static const char *cc_string(const hw_gpu *g, char *buf, size_t n)
{
	if (!HW_VALID(g->cc_major) || !HW_VALID(g->cc_minor))
		return NULL;
	snprintf(buf, n, "%lld.%lld", (long long)g->cc_major.v, (long long)g->cc_minor.v);
	return buf;
}

static const char *cuda_version_string(const hw_snapshot *s, char *buf, size_t n)
{
	if (!HW_VALID(s->cuda_driver_version))
		return NULL;
	/* CUDA_VERSION encoding: 1000 * major + 10 * minor (cuda.h) */
	long long v = s->cuda_driver_version.v;
	snprintf(buf, n, "%lld.%lld", v / 1000, (v % 1000) / 10);
	return buf;
}

static const char *compute_mode_name(int64_t m)
{
	/* nvmlComputeMode_t: 0 default, 2 exclusive process, 3 prohibited */
	switch (m) {
	case 0: return "default";
	case 1: return "exclusive_thread";
	case 2: return "exclusive_process";
	case 3: return "prohibited";
	default: return "unknown";
	}
}

static const char *proc_type(const hw_proc *p)
{
	return p->compute && p->graphics ? "compute+graphics" : p->graphics ? "graphics" : "compute";
}

/* Exit status for a snapshot: 1 when NVML should work but does not. */
static int snapshot_verdict(const hw_snapshot *s, bool report)
{
	if (s->nvml_asleep_skip)
		return 0;
	if (s->nvml_initialised)
		return 0;
	/* NVML failing matters only where the NVIDIA driver drives a GPU */
	for (size_t i = 0; i < s->n_gpus; i++)
		if (s->gpus[i].vendor == HW_VENDOR_NVIDIA && strcmp(s->gpus[i].kernel_driver, "nvidia") == 0) {
			if (report && s->nvml_loaded)
				gw_errorf("%s (library '%s')", s->nvml_error, s->nvml_path);
			else if (report)
				gw_errorf("the NVIDIA driver is bound to %s but NVML cannot be used: %s",
					  s->gpus[i].pci_bus_id, s->nvml_error);
			return GW_EXIT_RUNTIME;
		}
	return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *jv(hw_val v) { return jint_or_null(HW_VALID(v), v.v); }

static json_t *jwatts(hw_val mw)
{
	return HW_VALID(mw) ? jreal_round((double)mw.v / 1000.0, 3) : json_null();
}

static json_t *jbool(hw_val v) { return HW_VALID(v) ? json_boolean(v.v != 0) : json_null(); }

/* A MIG instance id; null when the GPU is not partitioned (UINT32_MAX). */
static json_t *jmig_id(uint32_t id)
{
	return id != UINT32_MAX ? json_integer(id) : json_null();
}

static json_t *jstr_empty_null(const char *s) { return s && *s ? json_string(s) : json_null(); }

/* Which fields are unknown and why (for the doctor and for people). */
static json_t *unavailable(const hw_gpu *g)
{
	static const struct { const char *key; size_t off; } fields[] = {
#define F(k, m) {k, offsetof(hw_gpu, m)}
		F("memory_total_bytes", mem_total_bytes), F("memory_used_bytes", mem_used_bytes),
		F("memory_reserved_bytes", mem_reserved_bytes), F("utilization_gpu_pct", util_gpu_pct),
		F("temperature_c", temp_c), F("fan_pct", fan_pct), F("power_w", power_mw),
		F("power_limit_w", power_limit_mw), F("clock_sm_mhz", clock_sm_mhz),
		F("throttle_reasons", throttle_reasons), F("pcie_gen", pcie_gen),
		F("mig_mode", mig_mode), F("ecc_mode", ecc_mode),
		F("remapped_rows_correctable", remap_correctable), F("retired_pages_sbe", retired_sbe),
		F("compute_capability", cc_major), F("sm_count", sm_count),
#undef F
	};
	json_t *o = json_object();
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		const hw_val *v = (const hw_val *)((const char *)g + fields[i].off);
		if (v->st != HW_OK && v->st != HW_UNQUERIED)
			json_object_set_new(o, fields[i].key, json_string(hw_status_name(v->st)));
	}
	return o;
}

static json_t *gpu_json(const hw_gpu *g)
{
	char buf[256];
	json_t *o = json_object();
	json_object_set_new(o, "index", json_integer(g->index));
	json_object_set_new(o, "nvml_index", g->nvml_index >= 0 ? json_integer(g->nvml_index) : json_null());
	json_object_set_new(o, "cuda_index", g->cuda_ordinal >= 0 ? json_integer(g->cuda_ordinal) : json_null());
	json_object_set_new(o, "uuid", jstr_empty_null(g->uuid));
	json_object_set_new(o, "name", jstr_empty_null(g->name));
	json_object_set_new(o, "vendor", json_string(hw_vendor_name(g->vendor)));
	json_object_set_new(o, "pci_bus_id", jstr_empty_null(g->pci_bus_id));
	snprintf(buf, sizeof buf, "0x%04x", g->pci_vendor_id);
	json_object_set_new(o, "pci_vendor_id", g->pci_vendor_id ? json_string(buf) : json_null());
	snprintf(buf, sizeof buf, "0x%04x", g->pci_device_id);
	json_object_set_new(o, "pci_device_id", g->pci_device_id ? json_string(buf) : json_null());
	json_object_set_new(o, "pci_revision", g->pci_revision >= 0 ? json_integer(g->pci_revision) : json_null());
	json_object_set_new(o, "integrated", json_boolean(g->integrated));
	json_object_set_new(o, "kernel_driver", jstr_empty_null(g->kernel_driver));
	json_object_set_new(o, "runtime_status", jstr_empty_null(g->runtime_status));
	json_object_set_new(o, "asleep", json_boolean(g->asleep));
	json_object_set_new(o, "fell_off_bus", json_boolean(g->fell_off_bus));
	json_object_set_new(o, "error", jstr_empty_null(g->error));
	json_object_set_new(o, "architecture", jstr_empty_null(g->arch));
	json_object_set_new(o, "compute_capability", jstr_or_null(cc_string(g, buf, sizeof buf)));
	json_object_set_new(o, "memory_total_bytes", jv(g->mem_total_bytes));
	json_object_set_new(o, "memory_used_bytes", jv(g->mem_used_bytes));
	json_object_set_new(o, "memory_free_bytes", jv(g->mem_free_bytes));
	json_object_set_new(o, "memory_reserved_bytes", jv(g->mem_reserved_bytes));
	json_object_set_new(o, "utilization_gpu_pct", jv(g->util_gpu_pct));
	json_object_set_new(o, "utilization_memory_pct", jv(g->util_mem_pct));
	json_object_set_new(o, "temperature_c", jv(g->temp_c));
	json_object_set_new(o, "temperature_slowdown_c", jv(g->temp_slowdown_c));
	json_object_set_new(o, "temperature_shutdown_c", jv(g->temp_shutdown_c));
	json_object_set_new(o, "fan_pct", jv(g->fan_pct));
	json_object_set_new(o, "power_w", jwatts(g->power_mw));
	json_object_set_new(o, "power_limit_w", jwatts(g->power_limit_mw));
	json_object_set_new(o, "power_default_limit_w", jwatts(g->power_default_limit_mw));
	json_object_set_new(o, "clock_sm_mhz", jv(g->clock_sm_mhz));
	json_object_set_new(o, "clock_memory_mhz", jv(g->clock_mem_mhz));
	json_object_set_new(o, "clock_sm_max_mhz", jv(g->clock_sm_max_mhz));
	json_object_set_new(o, "clock_memory_max_mhz", jv(g->clock_mem_max_mhz));
	json_object_set_new(o, "throttle_reasons_mask", jv(g->throttle_reasons));
	if (HW_VALID(g->throttle_reasons)) {
		json_t *a = json_array();
		hw_throttle_words((uint64_t)g->throttle_reasons.v, buf, sizeof buf);
		char *parts[16];
		size_t np = g->throttle_reasons.v ? str_split(buf, ',', parts, 16) : 0;
		for (size_t i = 0; i < np; i++)
			json_array_append_new(a, json_string(str_trim(parts[i])));
		json_object_set_new(o, "throttle_reasons", a);
	} else {
		json_object_set_new(o, "throttle_reasons", json_null());
	}
	json_object_set_new(o, "pcie_gen", jv(g->pcie_gen));
	json_object_set_new(o, "pcie_width", jv(g->pcie_width));
	json_object_set_new(o, "pcie_gen_max", jv(g->pcie_gen_max));
	json_object_set_new(o, "pcie_width_max", jv(g->pcie_width_max));
	json_object_set_new(o, "persistence_mode", jbool(g->persistence_mode));
	json_object_set_new(o, "compute_mode",
			    HW_VALID(g->compute_mode) ? json_string(compute_mode_name(g->compute_mode.v)) : json_null());
	json_object_set_new(o, "mig_mode", jbool(g->mig_mode));
	json_object_set_new(o, "ecc_mode", jbool(g->ecc_mode));
	json_object_set_new(o, "ecc_errors_corrected", jv(g->ecc_corrected));
	json_object_set_new(o, "ecc_errors_uncorrected", jv(g->ecc_uncorrected));
	json_object_set_new(o, "retired_pages_sbe", jv(g->retired_sbe));
	json_object_set_new(o, "retired_pages_dbe", jv(g->retired_dbe));
	json_object_set_new(o, "retired_pages_pending", jbool(g->retired_pending));
	json_object_set_new(o, "remapped_rows_correctable", jv(g->remap_correctable));
	json_object_set_new(o, "remapped_rows_uncorrectable", jv(g->remap_uncorrectable));
	json_object_set_new(o, "remapped_rows_pending", jbool(g->remap_pending));
	json_object_set_new(o, "remapped_rows_failure", jbool(g->remap_failure));
	json_object_set_new(o, "sm_count", jv(g->sm_count));
	json_object_set_new(o, "memory_bus_width_bits", jv(g->mem_bus_width_bits));
	json_object_set_new(o, "memory_clock_khz", jv(g->mem_clock_khz));
	json_object_set_new(o, "l2_cache_bytes", jv(g->l2_bytes));
	json_object_set_new(o, "memory_bandwidth_gbs",
			    g->bandwidth_gbs > 0 ? jreal_round(g->bandwidth_gbs, 1) : json_null());
	json_t *migs = json_array();
	for (size_t i = 0; i < g->n_migs; i++) {
		const hw_mig *m = &g->migs[i];
		json_t *x = json_object();
		json_object_set_new(x, "uuid", jstr_empty_null(m->uuid));
		json_object_set_new(x, "name", jstr_empty_null(m->name));
		json_object_set_new(x, "gpu_instance_id", jmig_id(m->gpu_instance));
		json_object_set_new(x, "compute_instance_id", jmig_id(m->compute_instance));
		json_object_set_new(x, "memory_total_bytes", jv(m->mem_total_bytes));
		json_object_set_new(x, "memory_used_bytes", jv(m->mem_used_bytes));
		json_object_set_new(x, "sm_count", jv(m->sm_count));
		json_array_append_new(migs, x);
	}
	json_object_set_new(o, "mig_devices", migs);
	json_t *procs = json_array();
	for (size_t i = 0; i < g->n_procs; i++) {
		const hw_proc *p = &g->procs[i];
		json_t *x = json_object();
		json_object_set_new(x, "pid", json_integer(p->pid));
		json_object_set_new(x, "user", jstr_empty_null(p->user));
		json_object_set_new(x, "command", jstr_empty_null(p->command));
		json_object_set_new(x, "used_memory_bytes", jv(p->used_mem_bytes));
		json_object_set_new(x, "type", json_string(proc_type(p)));
		json_object_set_new(x, "gpu_instance_id", jmig_id(p->gpu_instance));
		json_object_set_new(x, "compute_instance_id", jmig_id(p->compute_instance));
		json_object_set_new(x, "container", jstr_empty_null(p->container));
		json_object_set_new(x, "cgroup", jstr_empty_null(p->cgroup));
		json_object_set_new(x, "running", json_boolean(p->exists));
		json_array_append_new(procs, x);
	}
	json_object_set_new(o, "processes", procs);
	json_object_set_new(o, "processes_error", g->procs_listed.st == HW_OK || g->procs_listed.st == HW_UNQUERIED
				? json_null() : json_string(hw_status_name(g->procs_listed.st)));
	json_object_set_new(o, "unavailable", unavailable(g));
	return o;
}

static json_t *snapshot_json(const hw_snapshot *s)
{
	char buf[64];
	json_t *o = json_object();
	json_object_set_new(o, "timestamp_ms", json_integer((json_int_t)s->taken_wall_ms));
	json_object_set_new(o, "driver_version", jstr_empty_null(s->driver_version));
	json_object_set_new(o, "nvml_version", jstr_empty_null(s->nvml_version));
	json_object_set_new(o, "cuda_driver_version", jstr_or_null(cuda_version_string(s, buf, sizeof buf)));
	json_object_set_new(o, "cuda_driver_version_int", jv(s->cuda_driver_version));
	json_object_set_new(o, "nvml_library", jstr_empty_null(s->nvml_path));
	json_object_set_new(o, "nvml_initialised", json_boolean(s->nvml_initialised));
	json_object_set_new(o, "nvml_error", jstr_empty_null(s->nvml_error));
	json_object_set_new(o, "nvml_note", jstr_empty_null(s->nvml_note));
	json_object_set_new(o, "cuda_library", jstr_empty_null(s->cuda_path));
	json_object_set_new(o, "cuda_error", jstr_empty_null(s->cuda_error));
	json_object_set_new(o, "cuda_order_note", jstr_empty_null(s->cuda_order_note));
	json_t *gpus = json_array();
	for (size_t i = 0; i < s->n_gpus; i++)
		json_array_append_new(gpus, gpu_json(&s->gpus[i]));
	json_object_set_new(o, "gpus", gpus);
	return o;
}

/* ---- Prometheus ------------------------------------------------------------- */

/* Label values escape backslash, double quote and newline (exposition format). */
static void prom_label(strbuf *sb, const char *k, const char *v, bool first)
{
	sb_printf(sb, "%s%s=\"", first ? "" : ",", k);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			sb_printf(sb, "\\%c", *v);
		else if (*v == '\n')
			sb_puts(sb, "\\n");
		else
			sb_add(sb, v, 1);
	}
	sb_puts(sb, "\"");
}

static void prom_gpu_labels(strbuf *sb, const hw_gpu *g)
{
	char idx[16];
	snprintf(idx, sizeof idx, "%d", g->index);
	sb_puts(sb, "{");
	prom_label(sb, "gpu", idx, true);
	prom_label(sb, "uuid", g->uuid, false);
	prom_label(sb, "pci_bus_id", g->pci_bus_id, false);
	sb_puts(sb, "}");
}

typedef struct prom_metric {
	const char *name, *type, *help;
	size_t off;       /* hw_val in hw_gpu */
	double scale;
} prom_metric;

static void print_prometheus(const hw_snapshot *s, FILE *f)
{
	static const prom_metric metrics[] = {
#define M(n, t, h, m, sc) {n, t, h, offsetof(hw_gpu, m), sc}
		M("gpuwise_gpu_memory_total_bytes", "gauge", "Total GPU memory.", mem_total_bytes, 1),
		M("gpuwise_gpu_memory_used_bytes", "gauge", "GPU memory in use.", mem_used_bytes, 1),
		M("gpuwise_gpu_utilization_ratio", "gauge", "Fraction of time a kernel ran (0-1).", util_gpu_pct, 0.01),
		M("gpuwise_gpu_memory_utilization_ratio", "gauge", "Fraction of time memory was read or written (0-1).",
		  util_mem_pct, 0.01),
		M("gpuwise_gpu_temperature_celsius", "gauge", "GPU core temperature.", temp_c, 1),
		M("gpuwise_gpu_fan_ratio", "gauge", "Fan speed as a fraction of maximum (0-1).", fan_pct, 0.01),
		M("gpuwise_gpu_power_watts", "gauge", "Power draw.", power_mw, 0.001),
		M("gpuwise_gpu_power_limit_watts", "gauge", "Enforced power limit.", power_limit_mw, 0.001),
		M("gpuwise_gpu_clock_sm_hertz", "gauge", "SM clock.", clock_sm_mhz, 1e6),
		M("gpuwise_gpu_clock_memory_hertz", "gauge", "Memory clock.", clock_mem_mhz, 1e6),
		M("gpuwise_gpu_throttle_reasons", "gauge", "Clock event (throttle) reason bits as NVML reports them.",
		  throttle_reasons, 1),
		M("gpuwise_gpu_pcie_link_generation", "gauge", "Current PCIe link generation.", pcie_gen, 1),
		M("gpuwise_gpu_pcie_link_width", "gauge", "Current PCIe link width (lanes).", pcie_width, 1),
		M("gpuwise_gpu_ecc_errors_corrected", "gauge", "Corrected ECC errors since the driver loaded.",
		  ecc_corrected, 1),
		M("gpuwise_gpu_ecc_errors_uncorrected", "gauge", "Uncorrected ECC errors since the driver loaded.",
		  ecc_uncorrected, 1),
#undef M
	};
	strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "# HELP gpuwise_gpu_info GPU identity; always 1.\n# TYPE gpuwise_gpu_info gauge\n");
	for (size_t i = 0; i < s->n_gpus; i++) {
		const hw_gpu *g = &s->gpus[i];
		char idx[16];
		snprintf(idx, sizeof idx, "%d", g->index);
		sb_puts(&sb, "gpuwise_gpu_info{");
		prom_label(&sb, "gpu", idx, true);
		prom_label(&sb, "uuid", g->uuid, false);
		prom_label(&sb, "pci_bus_id", g->pci_bus_id, false);
		prom_label(&sb, "name", g->name, false);
		prom_label(&sb, "vendor", hw_vendor_name(g->vendor), false);
		prom_label(&sb, "driver", g->kernel_driver, false);
		prom_label(&sb, "driver_version", g->vendor == HW_VENDOR_NVIDIA ? s->driver_version : "", false);
		sb_puts(&sb, "} 1\n");
	}
	sb_puts(&sb, "# HELP gpuwise_gpu_asleep 1 when the GPU is runtime-suspended and was not woken.\n"
		     "# TYPE gpuwise_gpu_asleep gauge\n");
	for (size_t i = 0; i < s->n_gpus; i++) {
		sb_puts(&sb, "gpuwise_gpu_asleep");
		prom_gpu_labels(&sb, &s->gpus[i]);
		sb_printf(&sb, " %d\n", s->gpus[i].asleep ? 1 : 0);
	}
	for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
		bool header = false;
		for (size_t i = 0; i < s->n_gpus; i++) {
			const hw_gpu *g = &s->gpus[i];
			const hw_val *v = (const hw_val *)((const char *)g + metrics[m].off);
			if (!HW_VALID(*v))
				continue;
			if (!header) {
				sb_printf(&sb, "# HELP %s %s\n# TYPE %s %s\n", metrics[m].name, metrics[m].help,
					  metrics[m].name, metrics[m].type);
				header = true;
			}
			sb_puts(&sb, metrics[m].name);
			prom_gpu_labels(&sb, g);
			if (metrics[m].scale == 1)
				sb_printf(&sb, " %lld\n", (long long)v->v);
			else
				sb_printf(&sb, " %.10g\n", (double)v->v * metrics[m].scale);
		}
	}
	sb_puts(&sb, "# HELP gpuwise_process_memory_used_bytes GPU memory used by one process.\n"
		     "# TYPE gpuwise_process_memory_used_bytes gauge\n");
	for (size_t i = 0; i < s->n_gpus; i++) {
		const hw_gpu *g = &s->gpus[i];
		for (size_t k = 0; k < g->n_procs; k++) {
			const hw_proc *p = &g->procs[k];
			if (!HW_VALID(p->used_mem_bytes))
				continue;
			char idx[16], pid[16];
			snprintf(idx, sizeof idx, "%d", g->index);
			snprintf(pid, sizeof pid, "%u", p->pid);
			char cmd[64];
			snprintf(cmd, sizeof cmd, "%.63s", p->command);
			char *sp = strchr(cmd, ' ');
			if (sp)
				*sp = '\0';
			sb_puts(&sb, "gpuwise_process_memory_used_bytes{");
			prom_label(&sb, "gpu", idx, true);
			prom_label(&sb, "uuid", g->uuid, false);
			prom_label(&sb, "pid", pid, false);
			prom_label(&sb, "user", p->user, false);
			prom_label(&sb, "command", cmd, false);
			sb_printf(&sb, "} %lld\n", (long long)p->used_mem_bytes.v);
		}
	}
	fputs(sb_str(&sb), f);
	sb_release(&sb);
}

/* ---- text --------------------------------------------------------------------- */

/* The value scaled, rounded and followed by suffix, or "-" when unknown. */
static const char *dash_or(hw_val v, const char *suffix, double scale, char *buf, size_t n)
{
	if (!HW_VALID(v))
		return "-";
	snprintf(buf, n, "%.0f%s", (double)v.v * scale, suffix);
	return buf;
}

static void print_gpu_text(const hw_gpu *g, size_t name_w, bool all, FILE *f)
{
	char t[48], u[48], mu[48], mt[48], pw[48], pl[48];
	fprintf(f, "%s[%d]%s %-*s", c_bold(f), g->index, c_reset(f), (int)name_w, g->name);
	bool nothing = !HW_VALID(g->mem_total_bytes) && !HW_VALID(g->temp_c) && !HW_VALID(g->util_gpu_pct);
	if (g->asleep) {
		fprintf(f, " | %sasleep%s (runtime-suspended; --wake to query)\n", c_dim(f), c_reset(f));
	} else if (g->error[0] && nothing) {
		fprintf(f, " | %s%s%s\n", c_red(f), g->error, c_reset(f));
	} else if (nothing) {
		fprintf(f, " | %s%s%s%s\n", g->kernel_driver[0] ? g->kernel_driver : "no driver",
			g->integrated ? ", integrated" : "", g->fell_off_bus ? ", fell off the bus" : "",
			g->vendor != HW_VENDOR_NVIDIA ? "; no more data from sysfs" : "");
	} else {
		const char *temp = dash_or(g->temp_c, "°C", 1, t, sizeof t);
		bool hot = HW_VALID(g->temp_c) && HW_VALID(g->temp_slowdown_c) && g->temp_c.v >= g->temp_slowdown_c.v - 5;
		fprintf(f, " | %s%6s%s, %5s %%", hot ? c_red(f) : "", temp, hot ? c_reset(f) : "",
			dash_or(g->util_gpu_pct, "", 1, u, sizeof u));
		if (HW_VALID(g->mem_used_bytes) && HW_VALID(g->mem_total_bytes)) {
			fmt_bytes(mu, sizeof mu, (uint64_t)g->mem_used_bytes.v);
			fmt_bytes(mt, sizeof mt, (uint64_t)g->mem_total_bytes.v);
			fprintf(f, " | %10s / %10s", mu, mt);
		} else {
			fprintf(f, " | %10s / %10s", "-",
				HW_VALID(g->mem_total_bytes) ? fmt_bytes(mt, sizeof mt, (uint64_t)g->mem_total_bytes.v) : "-");
		}
		fprintf(f, " | %5s / %s W", dash_or(g->power_mw, "", 0.001, pw, sizeof pw),
			dash_or(g->power_limit_mw, "", 0.001, pl, sizeof pl));
		if (HW_VALID(g->throttle_reasons) && (g->throttle_reasons.v & ~(int64_t)HW_THR_GPU_IDLE)) {
			char words[200];
			hw_throttle_words((uint64_t)(g->throttle_reasons.v & ~(int64_t)HW_THR_GPU_IDLE), words,
					  sizeof words);
			fprintf(f, " | %sthrottled: %s%s", c_yellow(f), words, c_reset(f));
		}
		if (g->error[0])
			fprintf(f, " | %s%s%s", c_red(f), g->error, c_reset(f));
		fputc('\n', f);
	}
	if (all) {
		char cc[48], buf[64];
		fprintf(f, "    bus %s  %04x:%04x rev %s  driver %s%s", g->pci_bus_id, g->pci_vendor_id,
			g->pci_device_id, g->pci_revision >= 0 ? (snprintf(buf, sizeof buf, "%02x", g->pci_revision), buf) : "-",
			g->kernel_driver[0] ? g->kernel_driver : "none", g->integrated ? "  integrated" : "");
		if (g->runtime_status[0])
			fprintf(f, "  power %s", g->runtime_status);
		if (cc_string(g, cc, sizeof cc))
			fprintf(f, "  cc %s%s%s%s", cc, g->arch[0] ? " (" : "", g->arch, g->arch[0] ? ")" : "");
		if (g->cuda_ordinal >= 0)
			fprintf(f, "  cuda %d", g->cuda_ordinal);
		fputc('\n', f);
		if (HW_VALID(g->clock_sm_mhz) || HW_VALID(g->pcie_gen) || HW_VALID(g->fan_pct)) {
			char a[48], b[48], c[48], d[48], e[48], x[48];
			fprintf(f, "    clocks sm %s/%s MHz mem %s/%s MHz  PCIe gen %s x%s (max %s x%s)  fan %s\n",
				dash_or(g->clock_sm_mhz, "", 1, a, sizeof a),
				dash_or(g->clock_sm_max_mhz, "", 1, b, sizeof b),
				dash_or(g->clock_mem_mhz, "", 1, c, sizeof c),
				dash_or(g->clock_mem_max_mhz, "", 1, d, sizeof d),
				dash_or(g->pcie_gen, "", 1, e, sizeof e),
				dash_or(g->pcie_width, "", 1, x, sizeof x),
				dash_or(g->pcie_gen_max, "", 1, buf, sizeof buf),
				dash_or(g->pcie_width_max, "", 1, cc, sizeof cc),
				dash_or(g->fan_pct, " %", 1, t, sizeof t));
		}
		if (g->nvml_index >= 0) {
			char a[32], b[32];
			fprintf(f, "    persistence %s  compute mode %s  ECC %s (corrected %s, uncorrected %s)  MIG %s",
				HW_VALID(g->persistence_mode) ? (g->persistence_mode.v ? "on" : "off") : "-",
				HW_VALID(g->compute_mode) ? compute_mode_name(g->compute_mode.v) : "-",
				HW_VALID(g->ecc_mode) ? (g->ecc_mode.v ? "on" : "off") : "-",
				dash_or(g->ecc_corrected, "", 1, a, sizeof a),
				dash_or(g->ecc_uncorrected, "", 1, b, sizeof b),
				HW_VALID(g->mig_mode) ? (g->mig_mode.v ? "on" : "off") : "-");
			if (HW_VALID(g->remap_pending) && (g->remap_pending.v || g->remap_failure.v))
				fprintf(f, "  %srow remapping %s%s", c_red(f),
					g->remap_failure.v ? "failed" : "pending (reset the GPU)", c_reset(f));
			fputc('\n', f);
		}
		if (HW_VALID(g->sm_count))
			fprintf(f, "    %lld SMs  memory bus %lld bit  L2 %s  peak bandwidth %.0f GB/s\n",
				(long long)g->sm_count.v, (long long)g->mem_bus_width_bits.v,
				HW_VALID(g->l2_bytes) ? fmt_bytes(buf, sizeof buf, (uint64_t)g->l2_bytes.v) : "-",
				g->bandwidth_gbs);
	}
	for (size_t i = 0; i < g->n_migs; i++) {
		const hw_mig *m = &g->migs[i];
		char a[32], b[32];
		fprintf(f, "    MIG %s (GI %u CI %u) | %s / %s | %s\n", m->name, m->gpu_instance, m->compute_instance,
			HW_VALID(m->mem_used_bytes) ? fmt_bytes(a, sizeof a, (uint64_t)m->mem_used_bytes.v) : "-",
			HW_VALID(m->mem_total_bytes) ? fmt_bytes(b, sizeof b, (uint64_t)m->mem_total_bytes.v) : "-",
			m->uuid);
	}
	if (g->procs_listed.st != HW_OK && g->procs_listed.st != HW_UNQUERIED)
		fprintf(f, "    %sprocesses: %s%s\n", c_dim(f), hw_status_name(g->procs_listed.st), c_reset(f));
	for (size_t i = 0; i < g->n_procs; i++) {
		const hw_proc *p = &g->procs[i];
		char mem[32], where[40] = "";
		if (p->gpu_instance != UINT32_MAX && g->n_migs)
			snprintf(where, sizeof where, " [MIG GI %u]", p->gpu_instance);
		if (p->container[0])
			snprintf(where + strlen(where), sizeof where - strlen(where), " [container %.12s]", p->container);
		fprintf(f, "    %-10s %10s  %7u  %.60s%s%s\n", p->user[0] ? p->user : "?",
			HW_VALID(p->used_mem_bytes) ? fmt_bytes(mem, sizeof mem, (uint64_t)p->used_mem_bytes.v) : "-",
			p->pid, p->command[0] ? p->command : (p->exists ? "?" : "(not in /proc: another PID namespace?)"),
			where, p->graphics && !p->compute ? " (graphics)" : "");
	}
}

static void print_text(const hw_snapshot *s, bool all, FILE *f)
{
	char host[128] = "", when[32], cv[48];
	gethostname(host, sizeof host - 1);
	time_t now = (time_t)(s->taken_wall_ms / 1000);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "%s  %s", host, when);
	if (s->driver_version[0])
		fprintf(f, "  driver %s", s->driver_version);
	if (cuda_version_string(s, cv, sizeof cv))
		fprintf(f, "  CUDA %s", cv);
	fputc('\n', f);
	if (!s->n_gpus)
		fprintf(f, "no GPU found\n");
	size_t w = 0;
	for (size_t i = 0; i < s->n_gpus; i++)
		if (strlen(s->gpus[i].name) > w)
			w = strlen(s->gpus[i].name);
	for (size_t i = 0; i < s->n_gpus; i++)
		print_gpu_text(&s->gpus[i], w, all, f);
	if (s->nvml_asleep_skip)
		fprintf(f, "%snote: %s%s\n", c_dim(f), s->nvml_error, c_reset(f));
	if (s->cuda_order_note[0])
		fprintf(f, "note: %s\n", s->cuda_order_note);
	if (all) {
		if (s->nvml_path[0])
			fprintf(f, "NVML: %s%s%s\n", s->nvml_path, s->nvml_version[0] ? " version " : "", s->nvml_version);
		else if (s->nvml_error[0])
			fprintf(f, "NVML: %s\n", s->nvml_error);
		if (s->nvml_note[0])
			fprintf(f, "NVML: %s\n", s->nvml_note);
		if (s->cuda_path[0] || s->cuda_error[0])
			fprintf(f, "CUDA driver: %s%s%s\n", s->cuda_path, s->cuda_error[0] ? "  " : "", s->cuda_error);
	}
}

/* ---- main ------------------------------------------------------------------------ */

static void print_frame(const status_opts *o, const hw_snapshot *s, bool tty)
{
	if (o->format == FMT_JSON) {
		json_t *j = snapshot_json(s);
		if (o->watch) {
			char *txt = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
			if (txt)
				printf("%s\n", txt);
			free(txt);
		} else {
			json_print(j, stdout);
		}
		json_decref(j);
	} else if (o->format == FMT_PROM) {
		print_prometheus(s, stdout);
	} else {
		if (o->watch && tty)
			fputs("\033[H\033[2J", stdout); /* cursor home, clear screen (ECMA-48) */
		print_text(s, o->all, stdout);
	}
	fflush(stdout);
}

/* Sleep up to ms, returning early on SIGINT. */
static void nap(uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	while (!stop_flag) {
		uint64_t t = now_ms();
		if (t >= end)
			break;
		uint64_t left = end - t;
		struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
}

static int bench_refresh(hw *h, long long n)
{
	struct timespec a, b;
	hw_snapshot s;
	size_t gpus = 0, procs = 0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	uint64_t w0 = now_ms();
	for (long long i = 0; i < n; i++) {
		hw_sample(h, &s, NULL);
		gpus = s.n_gpus;
		procs = 0;
		for (size_t k = 0; k < s.n_gpus; k++)
			procs += s.gpus[k].n_procs;
		hw_snapshot_release(&s);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	double cpu_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	printf("refreshes %lld gpus %zu processes %zu cpu_ms_per_refresh %.4f wall_ms_total %llu\n", n, gpus,
	       procs, cpu_ms / (double)n, (unsigned long long)(now_ms() - w0));
	return 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"prometheus", no_argument, NULL, 'p'},
		{"watch", required_argument, NULL, 'w'},
		{"count", required_argument, NULL, 'c'},
		{"all", no_argument, NULL, 'a'},
		{"wake", no_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{"bench-refresh", required_argument, NULL, 'B'},
		{NULL, 0, NULL, 0},
	};
	status_opts o = {FMT_TEXT, false, false, 1000, 0, 0};
	hw_opts ho = {0};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (o.format == FMT_PROM)
				return usage_error("status", "--json and --prometheus exclude each other");
			o.format = FMT_JSON;
			break;
		case 'p':
			if (o.format == FMT_JSON)
				return usage_error("status", "--json and --prometheus exclude each other");
			o.format = FMT_PROM;
			break;
		case 'w':
			if (parse_duration_ms(optarg, &o.interval_ms) || o.interval_ms < 10 ||
			    o.interval_ms > 24ULL * 3600 * 1000)
				return usage_error("status", "--watch needs a duration from 10ms to 24h, not '%s'", optarg);
			o.watch = true;
			break;
		case 'c':
			if (parse_int(optarg, 1, 1000000000, &o.count))
				return usage_error("status", "--count needs a positive number, not '%s'", optarg);
			break;
		case 'B':
			if (parse_int(optarg, 1, 100000000, &o.bench))
				return usage_error("status", "--bench-refresh needs a positive number, not '%s'", optarg);
			break;
		case 'a': o.all = true; break;
		case 'W': ho.wake = true; break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		case ':': return usage_error("status", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("status", "unknown option '-%c'", optopt);
			return usage_error("status", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("status", "unexpected argument '%s'", argv[optind]);
	if (o.count && !o.watch)
		return usage_error("status", "--count needs --watch");
	/* The CUDA driver is slow to initialise; only --all asks it. */
	ho.no_cuda = !o.all;

	gw_error err = {0};
	hw *h = hw_open(&ho, &err);
	if (!h) {
		gw_errorf("%s", err.msg);
		return GW_EXIT_RUNTIME;
	}
	if (o.bench) {
		int r = bench_refresh(h, o.bench);
		hw_close(h);
		return r;
	}
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	stop_flag = 0;
	if (o.watch) {
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
	}
	bool tty = isatty(STDOUT_FILENO);
	int rc = GW_EXIT_OK;
	long long frames = 0;
	for (;;) {
		hw_snapshot s;
		if (hw_sample(h, &s, &err)) {
			gw_errorf("%s", err.msg);
			rc = GW_EXIT_RUNTIME;
			break;
		}
		print_frame(&o, &s, tty);
		int v = snapshot_verdict(&s, frames == 0);
		if (v)
			rc = v;
		hw_snapshot_release(&s);
		frames++;
		if (!o.watch || stop_flag || (o.count && frames >= o.count))
			break;
		if (o.format == FMT_TEXT && !tty)
			fputc('\n', stdout);
		else if (o.format == FMT_PROM)
			fputc('\n', stdout);
		nap(o.interval_ms);
		if (stop_flag)
			break;
	}
	if (o.watch) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	hw_close(h);
	return rc;
}

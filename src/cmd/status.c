/*
 * gpuwise status: the GPUs now, one line each with their processes below
 * (gpustat style), or --json, or --prometheus; --watch repeats.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/page.h"
#include "hw/hw.h"
#include "util/json.h"

enum { FMT_TEXT, FMT_JSON, FMT_PROM };

typedef struct status_opts {
	int format;
	bool all, watch;
	uint64_t interval_ms;
	long long count;      /* frames to print with --watch; 0 = until SIGINT */
	long long bench;      /* --bench-refresh N (hidden) */
	int prom_names;       /* PROM_DCGM or PROM_GPUWISE */
	const char *serve;    /* --serve ADDR:PORT */
	const char *socket;   /* --socket: the queue daemon the page shows */
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
		_("usage: gpuwise status [--json | --prometheus] [--watch DURATION] [--count N]\n"
		"                      [--all] [--wake] [--prometheus-names dcgm|gpuwise]\n"
		"       gpuwise status --serve ADDR:PORT [--socket PATH] [--prometheus-names dcgm|gpuwise]\n"
		"                      [--wake]\n\n"
		"Show the GPUs of this machine now: memory, utilisation, temperature, power\n"
		"and the processes on each, with their users.  Non-NVIDIA GPUs are listed with\n"
		"what sysfs knows of them.\n\n"
		"Options:\n"
		"  --json             one JSON document (docs/json-status.md); null = unknown\n"
		"  --prometheus       Prometheus text exposition format (docs/prometheus.md)\n"
		"  --prometheus-names dcgm|gpuwise\n"
		"                     metric names: dcgm (default) those of NVIDIA's dcgm-exporter\n"
		"                     (DCGM_FI_DEV_GPU_UTIL ..., labels gpu, UUID, modelName ...),\n"
		"                     so its Grafana dashboards work; gpuwise: gpuwise_gpu_* in\n"
		"                     base units\n"
		"  --serve ADDR:PORT  serve the Prometheus metrics over HTTP at /metrics until\n"
		"                     Ctrl-C (\"127.0.0.1:9400\", \":9400\", \"[::1]:9400\"; port 0\n"
		"                     picks a free one), and at / a read-only page refreshing\n"
		"                     every 5 s: each GPU's memory and utilisation, the queue\n"
		"                     as 'gpuwise queue' shows it to every user (never a job's\n"
		"                     arguments or environment) and each project's use against\n"
		"                     its quota; /metrics gains the queue's gpuwise_queue_* and\n"
		"                     gpuwise_project_* series; needs libmicrohttpd\n"
		"  --socket PATH      the queue daemon the page and the queue series show\n"
		"                     (default: as 'gpuwise queue' finds it)\n"
		"  --watch DURATION   refresh every DURATION (\"1s\", \"500ms\") until Ctrl-C;\n"
		"                     in place on a terminal, repeated otherwise (JSON: one\n"
		"                     document per line)\n"
		"  --count N          with --watch, stop after N refreshes\n"
		"  --all              more detail: bus, driver, clocks, throttle reasons, PCIe,\n"
		"                     ECC, P-state, video engines, energy, MIG, and the CUDA\n"
		"                     driver's view (SM count, bandwidth, CUDA ordinals; loading\n"
		"                     CUDA is slower)\n"
		"  --wake             query NVIDIA GPUs even when they are runtime-suspended\n"
		"                     (asleep); without it a sleeping laptop GPU is left asleep\n"
		"  -h, --help         this help\n\n"
		"Environment: GPUWISE_NVML_LIB and GPUWISE_CUDA_LIB name the NVML and CUDA\n"
		"driver libraries (GPUWISE_NVML_LIB=none: do not use NVML); GPUWISE_ROOT\n"
		"prefixes /sys, /proc and /etc (tests; users are then named from its\n"
		"/etc/passwd, otherwise through NSS).\n\n"
		"Exit status: 0 success; 1 runtime error (the NVML library named by\n"
		"GPUWISE_NVML_LIB or found cannot be loaded or initialised, an NVIDIA GPU bound\n"
		"to the driver but no NVML, an unreadable sysfs tree, --serve cannot listen);\n"
		"2 usage error.\n"));
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
	/* nvmlComputeMode_t (nvml.h): NVML_COMPUTEMODE_DEFAULT 0,
	 * EXCLUSIVE_THREAD 1 (deprecated), PROHIBITED 2, EXCLUSIVE_PROCESS 3 */
	switch (m) {
	case 0: return "default";
	case 1: return "exclusive_thread";
	case 2: return "prohibited";
	case 3: return "exclusive_process";
	default: return "unknown";
	}
}

static const char *proc_type(const hw_proc *p)
{
	return p->compute && p->graphics ? "compute+graphics" : p->graphics ? "graphics" : "compute";
}

/*
 * A message the hardware layer wrote in English (src/hw marks its formats
 * with N_()), in the reader's language: the whole text, else each of its
 * "; "-separated parts.  Malloc'd.
 */
static char *tr_hw(const char *english)
{
	char *whole = gw_translate_text(english);
	if (!gw_i18n_zh() || strcmp(whole, english) != 0 || !strstr(english, "; "))
		return whole;
	free(whole);
	strbuf sb = STRBUF_INIT;
	for (const char *p = english;;) {
		const char *e = strstr(p, "; ");
		char *part = xstrndup(p, e ? (size_t)(e - p) : strlen(p));
		char *t = gw_translate_text(part);
		sb_puts(&sb, t);
		free(t);
		free(part);
		if (!e)
			break;
		sb_puts(&sb, "\xef\xbc\x9b"); /* U+FF1B fullwidth semicolon */
		p = e + 2;
	}
	return sb_detach(&sb);
}

/*
 * Exit status for a snapshot: 1 when NVML should work but does not: the
 * library GPUWISE_NVML_LIB names cannot be loaded, nvmlInit (or counting
 * the GPUs) failed, or the NVIDIA driver drives a GPU but no NVML library
 * was found.  A machine without NVIDIA software, an explicit
 * GPUWISE_NVML_LIB=none and a GPU left asleep are not errors.
 */
static int snapshot_verdict(const hw_snapshot *s, bool report)
{
	if (s->nvml_asleep_skip || s->nvml_initialised || s->nvml_disabled)
		return 0;
	if (s->nvml_loaded || s->nvml_named) {
		if (report) {
			char *e = tr_hw(s->nvml_error);
			if (s->nvml_path[0])
				gw_errorf(_("NVML cannot be used: %s (library '%s')"), e, s->nvml_path);
			else
				gw_errorf(_("NVML cannot be used: %s"), e);
			free(e);
		}
		return GW_EXIT_RUNTIME;
	}
	for (size_t i = 0; i < s->n_gpus; i++)
		if (s->gpus[i].vendor == HW_VENDOR_NVIDIA && strcmp(s->gpus[i].kernel_driver, "nvidia") == 0) {
			if (report) {
				char *e = tr_hw(s->nvml_error);
				gw_errorf(_("the NVIDIA driver is bound to %s but NVML cannot be used: %s"),
					  s->gpus[i].pci_bus_id, e);
				free(e);
			}
			return GW_EXIT_RUNTIME;
		}
	return 0;
}

/* NVML's state in one word for JSON: ok, absent, disabled, asleep, failed. */
static const char *nvml_state(const hw_snapshot *s)
{
	if (s->nvml_initialised)
		return "ok";
	if (s->nvml_asleep_skip)
		return "asleep";
	if (s->nvml_disabled)
		return "disabled";
	return snapshot_verdict(s, false) ? "failed" : "absent";
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
		F("encoder_utilization_pct", enc_util_pct), F("decoder_utilization_pct", dec_util_pct),
		F("pcie_tx_kbytes_per_s", pcie_tx_kbytes_per_s), F("energy_mj", energy_mj),
		F("performance_state", pstate),
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

/* A copy of n bytes with every byte that is not part of valid UTF-8
 * replaced by U+FFFD; the caller frees it. */
static char *utf8_sanitize(const char *in, size_t n)
{
	const unsigned char *s = (const unsigned char *)in;
	char *out = xmalloc(n * 3 + 1);
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t len = s[i] < 0x80 ? 1 : (s[i] & 0xe0) == 0xc0 && s[i] >= 0xc2 ? 2
			     : (s[i] & 0xf0) == 0xe0 ? 3 : (s[i] & 0xf8) == 0xf0 && s[i] <= 0xf4 ? 4 : 0;
		bool ok = len && i + len <= n && s[i] != 0;
		for (size_t k = 1; ok && k < len; k++)
			ok = (s[i + k] & 0xc0) == 0x80;
		/* no overlong 3-byte forms, no surrogates, nothing above U+10FFFF */
		if (ok && len == 3)
			ok = !(s[i] == 0xe0 && s[i + 1] < 0xa0) && !(s[i] == 0xed && s[i + 1] >= 0xa0);
		if (ok && len == 4)
			ok = !(s[i] == 0xf0 && s[i + 1] < 0x90) && !(s[i] == 0xf4 && s[i + 1] >= 0x90);
		if (ok) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	return out;
}

/* The arguments of a process as an array of strings; null when unknown.
 * Bytes that are not UTF-8 become U+FFFD so the document stays valid. */
static json_t *argv_json(const hw_proc *p)
{
	if (!p->argv_len)
		return json_null();
	json_t *a = json_array();
	size_t i = 0;
	while (i < p->argv_len) {
		size_t len = strnlen(p->argv + i, p->argv_len - i);
		json_t *x = json_stringn(p->argv + i, len);
		if (!x) {
			char *fixed = utf8_sanitize(p->argv + i, len);
			x = json_string(fixed);
			free(fixed);
		}
		json_array_append_new(a, x ? x : json_string(""));
		i += len + 1;
	}
	return a;
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
	json_object_set_new(o, "encoder_utilization_pct", jv(g->enc_util_pct));
	json_object_set_new(o, "decoder_utilization_pct", jv(g->dec_util_pct));
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
	json_object_set_new(o, "pcie_tx_kbytes_per_s", jv(g->pcie_tx_kbytes_per_s));
	json_object_set_new(o, "pcie_rx_kbytes_per_s", jv(g->pcie_rx_kbytes_per_s));
	json_object_set_new(o, "energy_mj", jv(g->energy_mj));
	json_object_set_new(o, "performance_state", jv(g->pstate));
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
		json_object_set_new(x, "profile", jstr_empty_null(m->profile));
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
		json_object_set_new(x, "argv", argv_json(p));
		json_object_set_new(x, "used_memory_bytes", jv(p->used_mem_bytes));
		json_object_set_new(x, "sm_utilization_pct", jv(p->sm_util_pct));
		json_object_set_new(x, "memory_utilization_pct", jv(p->mem_util_pct));
		json_object_set_new(x, "encoder_utilization_pct", jv(p->enc_util_pct));
		json_object_set_new(x, "decoder_utilization_pct", jv(p->dec_util_pct));
		json_object_set_new(x, "type", json_string(proc_type(p)));
		json_object_set_new(x, "gpu_instance_id", jmig_id(p->gpu_instance));
		json_object_set_new(x, "compute_instance_id", jmig_id(p->compute_instance));
		json_object_set_new(x, "container", jstr_empty_null(p->container));
		json_object_set_new(x, "cgroup", jstr_empty_null(p->cgroup));
		json_object_set_new(x, "running", json_boolean(p->exists));
		json_object_set_new(x, "windows_side", json_boolean(p->windows_side));
		json_array_append_new(procs, x);
	}
	json_object_set_new(o, "processes", procs);
	json_object_set_new(o, "processes_error", g->procs_listed.st == HW_OK || g->procs_listed.st == HW_UNQUERIED
				? json_null() : json_string(hw_status_name(g->procs_listed.st)));
	json_object_set_new(o, "unavailable", unavailable(g));
	return o;
}

/* WSL 2: the VM's RAM and what limits it (.wslconfig or WSL's default); NULL elsewhere. */
static json_t *wsl_memory_json(const hw_snapshot *s)
{
	hw_wsl_memory m;
	if (s->platform != HW_PLATFORM_WSL2 || hw_wsl_memory_read(&m, NULL))
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "vm_ram_total_bytes", json_integer((json_int_t)m.vm_total_bytes));
	json_object_set_new(o, "wslconfig_memory_bytes", jint_or_null(m.limit_bytes > 0, (long long)m.limit_bytes));
	json_object_set_new(o, "wslconfig", jstr_empty_null(m.wslconfig));
	json_object_set_new(o, "windows_ram_estimate_bytes",
			    jint_or_null(m.windows_ram_bytes_est > 0, (long long)m.windows_ram_bytes_est));
	json_object_set_new(o, "rule", json_string(m.rule));
	return o;
}

static json_t *snapshot_json(const hw_snapshot *s)
{
	char buf[64];
	json_t *o = json_object();
	json_object_set_new(o, "timestamp_ms", json_integer((json_int_t)s->taken_wall_ms));
	json_object_set_new(o, "platform", json_string(hw_platform_name(s->platform)));
	json_object_set_new(o, "wsl_memory", wsl_memory_json(s));
	json_object_set_new(o, "driver_version", jstr_empty_null(s->driver_version));
	json_object_set_new(o, "nvml_version", jstr_empty_null(s->nvml_version));
	json_object_set_new(o, "cuda_driver_version", jstr_or_null(cuda_version_string(s, buf, sizeof buf)));
	json_object_set_new(o, "cuda_driver_version_int", jv(s->cuda_driver_version));
	json_object_set_new(o, "nvml_library", jstr_empty_null(s->nvml_path));
	json_object_set_new(o, "nvml_initialised", json_boolean(s->nvml_initialised));
	json_object_set_new(o, "nvml_state", json_string(nvml_state(s)));
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

/*
 * Two naming schemes.  PROM_DCGM (the default) uses the metric names,
 * units and labels of NVIDIA's dcgm-exporter (etc/default-counters.csv and
 * internal/pkg/rendermetrics/render_metrics.go in NVIDIA/dcgm-exporter;
 * field names from go-dcgm pkg/dcgm/dcgm_fields.h), so dashboards built for
 * it work unchanged.  PROM_GPUWISE keeps gpuwise's own names in base units
 * (bytes, watts, hertz, ratios 0-1).  What neither scheme knows (health,
 * processes, containers) is gpuwise_* in both.
 */
enum { PROM_DCGM, PROM_GPUWISE };

typedef struct prom_ctx {
	strbuf *sb;
	const hw_snapshot *s;
	int names;
	char host[128];
} prom_ctx;

/* The labels of one GPU (and of one of its MIG instances when m is set),
 * without the braces. */
static void prom_gpu_labels(const prom_ctx *c, const hw_gpu *g, const hw_mig *m)
{
	char idx[16], dev[32], gi[16];
	snprintf(idx, sizeof idx, "%d", g->index);
	sb_prom_label(c->sb, "gpu", idx, true);
	if (c->names == PROM_GPUWISE) {
		sb_prom_label(c->sb, "uuid", g->uuid, false);
		sb_prom_label(c->sb, "pci_bus_id", g->pci_bus_id, false);
		if (m) {
			snprintf(gi, sizeof gi, "%u", m->gpu_instance);
			sb_prom_label(c->sb, "gpu_instance_id", gi, false);
			sb_prom_label(c->sb, "mig_profile", m->profile, false);
		}
		return;
	}
	/* dcgm-exporter: gpu, UUID, pci_bus_id, device ("nvidia<N>"),
	 * modelName, GPU_I_PROFILE and GPU_I_ID for MIG, Hostname, and the
	 * driver version as a label (DCGM_FI_DRIVER_VERSION) */
	sb_prom_label(c->sb, "UUID", g->uuid, false);
	sb_prom_label(c->sb, "pci_bus_id", g->pci_bus_id, false);
	if (g->nvml_index >= 0)
		snprintf(dev, sizeof dev, "nvidia%d", g->nvml_index);
	else
		snprintf(dev, sizeof dev, "%s", g->kernel_driver);
	sb_prom_label(c->sb, "device", dev, false);
	sb_prom_label(c->sb, "modelName", g->name, false);
	if (m) {
		snprintf(gi, sizeof gi, "%u", m->gpu_instance);
		sb_prom_label(c->sb, "GPU_I_PROFILE", m->profile, false);
		sb_prom_label(c->sb, "GPU_I_ID", gi, false);
	}
	sb_prom_label(c->sb, "Hostname", c->host, false);
	sb_prom_label(c->sb, "DCGM_FI_DRIVER_VERSION", g->vendor == HW_VENDOR_NVIDIA ? c->s->driver_version : "", false);
}

static void prom_header(const prom_ctx *c, const char *name, const char *type, const char *help)
{
	sb_printf(c->sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample: name{labels} value, the value scaled (integers stay exact). */
static void prom_sample(const prom_ctx *c, const char *name, const hw_gpu *g, const hw_mig *m, int64_t v,
			double scale)
{
	sb_printf(c->sb, "%s{", name);
	prom_gpu_labels(c, g, m);
	if (scale == 1)
		sb_printf(c->sb, "} %lld\n", (long long)v);
	else
		sb_printf(c->sb, "} %.10g\n", (double)v * scale);
}

typedef struct prom_metric {
	const char *dcgm, *own;   /* NULL: not in that scheme */
	const char *type, *help_dcgm, *help_own;
	size_t off;               /* hw_val in hw_gpu */
	double scale_dcgm, scale_own;
} prom_metric;

#define MiB_SCALE (1.0 / 1048576.0)

static const prom_metric prom_metrics[] = {
#define M(d, o, t, hd, ho, m, sd, so) {d, o, t, hd, ho, offsetof(hw_gpu, m), sd, so}
	M("DCGM_FI_DEV_SM_CLOCK", "gpuwise_gpu_clock_sm_hertz", "gauge", "SM clock frequency (in MHz).",
	  "SM clock.", clock_sm_mhz, 1, 1e6),
	M("DCGM_FI_DEV_MEM_CLOCK", "gpuwise_gpu_clock_memory_hertz", "gauge", "Memory clock frequency (in MHz).",
	  "Memory clock.", clock_mem_mhz, 1, 1e6),
	M("DCGM_FI_DEV_GPU_TEMP", "gpuwise_gpu_temperature_celsius", "gauge", "GPU temperature (in C).",
	  "GPU core temperature.", temp_c, 1, 1),
	M("DCGM_FI_DEV_SLOWDOWN_TEMP", "gpuwise_gpu_temperature_slowdown_celsius", "gauge",
	  "Slowdown temperature (in C).", "Temperature at which the GPU slows down.", temp_slowdown_c, 1, 1),
	M("DCGM_FI_DEV_POWER_USAGE", "gpuwise_gpu_power_watts", "gauge", "Power draw (in W).", "Power draw.",
	  power_mw, 0.001, 0.001),
	M("DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "gpuwise_gpu_power_limit_watts", "gauge",
	  "Enforced power limit (in W).", "Enforced power limit.", power_limit_mw, 0.001, 0.001),
	M("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gpuwise_gpu_energy_joules_total", "counter",
	  "Total energy consumption since boot (in mJ).", "Energy used since the driver loaded.", energy_mj, 1,
	  0.001),
	M("DCGM_FI_DEV_GPU_UTIL", "gpuwise_gpu_utilization_ratio", "gauge", "GPU utilization (in %).",
	  "Fraction of time a kernel ran (0-1).", util_gpu_pct, 1, 0.01),
	M("DCGM_FI_DEV_MEM_COPY_UTIL", "gpuwise_gpu_memory_utilization_ratio", "gauge", "Memory utilization (in %).",
	  "Fraction of time memory was read or written (0-1).", util_mem_pct, 1, 0.01),
	M("DCGM_FI_DEV_ENC_UTIL", "gpuwise_gpu_encoder_utilization_ratio", "gauge", "Encoder utilization (in %).",
	  "Fraction of time the video encoder was busy (0-1).", enc_util_pct, 1, 0.01),
	M("DCGM_FI_DEV_DEC_UTIL", "gpuwise_gpu_decoder_utilization_ratio", "gauge", "Decoder utilization (in %).",
	  "Fraction of time the video decoder was busy (0-1).", dec_util_pct, 1, 0.01),
	M("DCGM_FI_DEV_FB_TOTAL", "gpuwise_gpu_memory_total_bytes", "gauge", "Framebuffer memory total (in MiB).",
	  "Total GPU memory.", mem_total_bytes, MiB_SCALE, 1),
	M("DCGM_FI_DEV_FB_FREE", "gpuwise_gpu_memory_free_bytes", "gauge", "Framebuffer memory free (in MiB).",
	  "GPU memory free.", mem_free_bytes, MiB_SCALE, 1),
	M("DCGM_FI_DEV_FB_USED", "gpuwise_gpu_memory_used_bytes", "gauge", "Framebuffer memory used (in MiB).",
	  "GPU memory in use.", mem_used_bytes, MiB_SCALE, 1),
	M("DCGM_FI_DEV_FB_RESERVED", "gpuwise_gpu_memory_reserved_bytes", "gauge",
	  "Framebuffer memory reserved (in MiB).", "GPU memory the driver reserves.", mem_reserved_bytes, MiB_SCALE,
	  1),
	M("DCGM_FI_DEV_FAN_SPEED", "gpuwise_gpu_fan_ratio", "gauge", "Fan speed (in %).",
	  "Fan speed as a fraction of maximum (0-1).", fan_pct, 1, 0.01),
	M("DCGM_FI_DEV_PSTATE", "gpuwise_gpu_performance_state", "gauge", "Performance state (P-state) 0-15.",
	  "Performance state: 0 (P0, fastest) to 15.", pstate, 1, 1),
	M(NULL, "gpuwise_gpu_pcie_tx_bytes_per_second", "gauge", NULL,
	  "PCIe transmit throughput (NVML, 20 ms sample).", pcie_tx_kbytes_per_s, 1, 1024),
	M(NULL, "gpuwise_gpu_pcie_rx_bytes_per_second", "gauge", NULL,
	  "PCIe receive throughput (NVML, 20 ms sample).", pcie_rx_kbytes_per_s, 1, 1024),
	M("DCGM_FI_DEV_PCIE_LINK_GEN", "gpuwise_gpu_pcie_link_generation", "gauge", "PCIe link generation.",
	  "Current PCIe link generation.", pcie_gen, 1, 1),
	M("DCGM_FI_DEV_PCIE_LINK_WIDTH", "gpuwise_gpu_pcie_link_width", "gauge", "PCIe link width.",
	  "Current PCIe link width (lanes).", pcie_width, 1, 1),
	M("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gpuwise_gpu_throttle_reasons", "gauge",
	  "Current clock event reasons (bitmask).", "Clock event (throttle) reason bits as NVML reports them.",
	  throttle_reasons, 1, 1),
	M("DCGM_FI_DEV_COMPUTE_MODE", "gpuwise_gpu_compute_mode", "gauge",
	  "Compute mode (0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process).",
	  "Compute mode (nvmlComputeMode_t: 0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process).",
	  compute_mode, 1, 1),
	M("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "gpuwise_gpu_ecc_errors_corrected_total", "counter",
	  "Total number of single-bit volatile ECC errors.", "Corrected ECC errors since the driver loaded.",
	  ecc_corrected, 1, 1),
	M("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gpuwise_gpu_ecc_errors_uncorrected_total", "counter",
	  "Total number of double-bit volatile ECC errors.", "Uncorrected ECC errors since the driver loaded.",
	  ecc_uncorrected, 1, 1),
	M("DCGM_FI_DEV_RETIRED_SBE", NULL, "counter", "Total number of retired pages due to single-bit errors.",
	  NULL, retired_sbe, 1, 1),
	M("DCGM_FI_DEV_RETIRED_DBE", NULL, "counter", "Total number of retired pages due to double-bit errors.",
	  NULL, retired_dbe, 1, 1),
	M("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", NULL, "counter", "Number of remapped rows for correctable errors",
	  NULL, remap_correctable, 1, 1),
	M("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", NULL, "counter",
	  "Number of remapped rows for uncorrectable errors", NULL, remap_uncorrectable, 1, 1),
	M("DCGM_FI_DEV_ROW_REMAP_FAILURE", NULL, "gauge", "Whether remapping of rows has failed", NULL,
	  remap_failure, 1, 1),
#undef M
};

/* The hostname label dcgm-exporter adds (os.Hostname). */
static void prom_host(prom_ctx *c)
{
	c->host[0] = '\0';
	if (gethostname(c->host, sizeof c->host - 1) != 0)
		c->host[0] = '\0';
	c->host[sizeof c->host - 1] = '\0';
}

/* GPU metrics; MIG instances get their own memory series. */
static void prom_gpus(const prom_ctx *c)
{
	for (size_t k = 0; k < sizeof prom_metrics / sizeof prom_metrics[0]; k++) {
		const prom_metric *pm = &prom_metrics[k];
		const char *name = c->names == PROM_DCGM ? pm->dcgm : pm->own;
		if (!name)
			continue;
		double scale = c->names == PROM_DCGM ? pm->scale_dcgm : pm->scale_own;
		bool header = false;
		for (size_t i = 0; i < c->s->n_gpus; i++) {
			const hw_gpu *g = &c->s->gpus[i];
			const hw_val *v = (const hw_val *)((const char *)g + pm->off);
			if (!HW_VALID(*v))
				continue;
			if (!header)
				prom_header(c, name, pm->type, c->names == PROM_DCGM ? pm->help_dcgm : pm->help_own);
			header = true;
			prom_sample(c, name, g, NULL, v->v, scale);
			/* dcgm-exporter reports framebuffer memory per GPU instance too */
			bool fb = pm->off == offsetof(hw_gpu, mem_used_bytes) ||
				  pm->off == offsetof(hw_gpu, mem_free_bytes) || pm->off == offsetof(hw_gpu, mem_total_bytes);
			for (size_t j = 0; fb && j < g->n_migs; j++) {
				const hw_mig *m = &g->migs[j];
				if (!HW_VALID(m->mem_total_bytes) || !HW_VALID(m->mem_used_bytes))
					continue;
				int64_t mv = pm->off == offsetof(hw_gpu, mem_used_bytes) ? m->mem_used_bytes.v
					     : pm->off == offsetof(hw_gpu, mem_total_bytes) ? m->mem_total_bytes.v
					     : m->mem_total_bytes.v - m->mem_used_bytes.v;
				prom_sample(c, name, g, m, mv, scale);
			}
		}
	}
}

/* One series per process: memory and the newest SM sample, labelled with
 * its MIG instance and container. */
static void prom_processes(const prom_ctx *c)
{
	const hw_snapshot *s = c->s;
	strbuf *sb = c->sb;
	static const struct { const char *name, *help; size_t off; double scale; } pmetrics[] = {
		{"gpuwise_process_memory_used_bytes", "GPU memory used by one process.", offsetof(hw_proc, used_mem_bytes), 1},
		{"gpuwise_process_sm_utilization_ratio", "Fraction of time one process ran kernels on the SMs (0-1).",
		 offsetof(hw_proc, sm_util_pct), 0.01},
	};
	for (size_t m = 0; m < sizeof pmetrics / sizeof pmetrics[0]; m++) {
		bool header = false;
		for (size_t i = 0; i < s->n_gpus; i++) {
			const hw_gpu *g = &s->gpus[i];
			for (size_t k = 0; k < g->n_procs; k++) {
				const hw_proc *p = &g->procs[k];
				const hw_val *v = (const hw_val *)((const char *)p + pmetrics[m].off);
				if (!HW_VALID(*v))
					continue;
				if (!header)
					prom_header(c, pmetrics[m].name, "gauge", pmetrics[m].help);
				header = true;
				char pid[16], gi[16] = "", cmd[64];
				snprintf(pid, sizeof pid, "%u", p->pid);
				if (p->gpu_instance != UINT32_MAX && g->n_migs)
					snprintf(gi, sizeof gi, "%u", p->gpu_instance);
				/* the program: argv[0] (NUL-terminated in argv) */
				snprintf(cmd, sizeof cmd, "%.63s", p->argv_len ? p->argv : p->command);
				char *sp = p->argv_len ? NULL : strchr(cmd, ' ');
				if (sp)
					*sp = '\0';
				sb_printf(sb, "%s{", pmetrics[m].name);
				prom_gpu_labels(c, g, NULL);
				sb_prom_label(sb, "pid", pid, false);
				sb_prom_label(sb, "user", p->user, false);
				sb_prom_label(sb, "command", cmd, false);
				sb_prom_label(sb, "container", p->container, false);
				sb_prom_label(sb, c->names == PROM_DCGM ? "GPU_I_ID" : "gpu_instance_id", gi, false);
				if (pmetrics[m].scale == 1)
					sb_printf(sb, "} %lld\n", (long long)v->v);
				else
					sb_printf(sb, "} %.10g\n", (double)v->v * pmetrics[m].scale);
			}
		}
	}
}

/* One series per container and GPU: its processes' memory summed. */
static void prom_containers(const prom_ctx *c)
{
	const hw_snapshot *s = c->s;
	strbuf *sb = c->sb;
	bool header = false;
	for (size_t i = 0; i < s->n_gpus; i++) {
		const hw_gpu *g = &s->gpus[i];
		for (size_t k = 0; k < g->n_procs; k++) {
			const hw_proc *p = &g->procs[k];
			bool first = true;
			for (size_t j = 0; j < k; j++)
				if (strcmp(g->procs[j].container, p->container) == 0)
					first = false;
			if (!p->container[0] || !first)
				continue;
			int64_t sum = 0;
			size_t n = 0;
			for (size_t j = k; j < g->n_procs; j++)
				if (strcmp(g->procs[j].container, p->container) == 0 && HW_VALID(g->procs[j].used_mem_bytes)) {
					sum += g->procs[j].used_mem_bytes.v;
					n++;
				}
			if (!n)
				continue;
			if (!header)
				prom_header(c, "gpuwise_container_memory_used_bytes", "gauge",
					    "GPU memory used by the processes of one container (docker, podman, containerd, CRI-O).");
			header = true;
			sb_puts(sb, "gpuwise_container_memory_used_bytes{");
			prom_gpu_labels(c, g, NULL);
			sb_prom_label(sb, "container", p->container, false);
			sb_printf(sb, "} %lld\n", (long long)sum);
		}
	}
}

static void print_prometheus(const hw_snapshot *s, int names, FILE *f)
{
	strbuf sb = STRBUF_INIT;
	prom_ctx c = {&sb, s, names, ""};
	prom_host(&c);
	/* health first: a scraper tells "no GPU" (up 1, no GPU series) from
	 * "NVML broken" (up 0 with the reason) */
	bool broken = snapshot_verdict(s, false) != 0;
	prom_header(&c, "gpuwise_nvml_up", "gauge",
		    "1 when NVML answers (or is not needed: no NVIDIA driver, GPU asleep), 0 when it cannot be used.");
	sb_puts(&sb, "gpuwise_nvml_up{");
	sb_prom_label(&sb, "library", s->nvml_path, true);
	sb_prom_label(&sb, "state", nvml_state(s), false);
	sb_prom_label(&sb, "error", broken ? s->nvml_error : "", false);
	sb_printf(&sb, "} %d\n", broken ? 0 : 1);
	prom_header(&c, "gpuwise_gpus", "gauge", "GPUs found (NVML and PCI display controllers).");
	sb_printf(&sb, "gpuwise_gpus %zu\n", s->n_gpus);
	prom_header(&c, "gpuwise_gpu_info", "gauge", "GPU identity; always 1.");
	for (size_t i = 0; i < s->n_gpus; i++) {
		const hw_gpu *g = &s->gpus[i];
		sb_puts(&sb, "gpuwise_gpu_info{");
		prom_gpu_labels(&c, g, NULL);
		if (names == PROM_GPUWISE) {
			sb_prom_label(&sb, "name", g->name, false);
			sb_prom_label(&sb, "driver_version", g->vendor == HW_VENDOR_NVIDIA ? s->driver_version : "", false);
		}
		sb_prom_label(&sb, "vendor", hw_vendor_name(g->vendor), false);
		sb_prom_label(&sb, "driver", g->kernel_driver, false);
		sb_puts(&sb, "} 1\n");
	}
	prom_header(&c, "gpuwise_gpu_asleep", "gauge", "1 when the GPU is runtime-suspended and was not woken.");
	for (size_t i = 0; i < s->n_gpus; i++)
		prom_sample(&c, "gpuwise_gpu_asleep", &s->gpus[i], NULL, s->gpus[i].asleep ? 1 : 0, 1);
	prom_gpus(&c);

	prom_processes(&c);
	prom_containers(&c);
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

/* Code points in a UTF-8 string (a terminal column each, near enough). */
static size_t utf8_len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Print s, cut to width columns with a trailing ellipsis (0: whole). */
static void fputs_cut(const char *s, size_t width, FILE *f)
{
	if (!width || utf8_len(s) <= width) {
		fputs(s, f);
		return;
	}
	size_t n = 0, i = 0;
	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == width - 1)
			break;
	}
	fwrite(s, 1, i, f);
	fputs("\xe2\x80\xa6", f); /* U+2026 horizontal ellipsis */
}

/*
 * The arguments as a POSIX shell would need them typed: plain words as they
 * are, anything else in single quotes ('\'' for a quote), and control
 * characters as bash $'\n' / $'\xHH' so one process stays on one line.
 * Bytes that are not UTF-8 are shown as $'\xHH' too.
 */
static void quote_argv(strbuf *sb, const char *argv, size_t len)
{
	size_t i = 0;
	bool first = true;
	while (i < len) {
		size_t n = strnlen(argv + i, len - i);
		const char *a = argv + i;
		if (!first)
			sb_puts(sb, " ");
		first = false;
		bool plain = n > 0, control = false;
		char *clean = utf8_sanitize(a, n);
		bool valid = strlen(clean) == n && memcmp(clean, a, n) == 0;
		free(clean);
		for (size_t k = 0; k < n; k++) {
			unsigned char ch = (unsigned char)a[k];
			if (ch < 0x20 || ch == 0x7f)
				control = true;
			if (!(isalnum(ch) || strchr("_@%+=:,./-", ch)))
				plain = false;
		}
		if (plain) {
			sb_add(sb, a, n);
		} else if (control || !valid) {
			sb_puts(sb, "$'");
			for (size_t k = 0; k < n; k++) {
				unsigned char ch = (unsigned char)a[k];
				if (ch == '\n')
					sb_puts(sb, "\\n");
				else if (ch == '\t')
					sb_puts(sb, "\\t");
				else if (ch == '\'' || ch == '\\')
					sb_printf(sb, "\\%c", ch);
				else if (ch < 0x20 || ch == 0x7f || (!valid && ch >= 0x80))
					sb_printf(sb, "\\x%02x", ch);
				else
					sb_add(sb, (const char *)&ch, 1);
			}
			sb_puts(sb, "'");
		} else {
			sb_puts(sb, "'");
			for (size_t k = 0; k < n; k++) {
				if (a[k] == '\'')
					sb_puts(sb, "'\\''");
				else
					sb_add(sb, a + k, 1);
			}
			sb_puts(sb, "'");
		}
		i += n + 1;
	}
}

/* Terminal width for the command column: the terminal's when stdout is
 * one, else $COLUMNS, else 0 (no limit: a pipe or file gets whole lines). */
static size_t term_cols(FILE *f)
{
	struct winsize ws;
	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	long long c;
	const char *e = getenv("COLUMNS");
	if (e && parse_int(e, 20, 10000, &c) == 0)
		return (size_t)c;
	return 0;
}

/* "on", "off" or "-" (unknown), in the reader's language */
static const char *on_off(hw_val v)
{
	return HW_VALID(v) ? (v.v ? _("on") : _("off")) : "-";
}

static void print_gpu_text(const hw_gpu *g, size_t name_w, bool all, size_t cols, FILE *f)
{
	char t[48], u[48], mu[48], mt[48], pw[48], pl[48];
	fprintf(f, "%s[%d]%s %-*s", c_bold(f), g->index, c_reset(f), (int)name_w, g->name);
	bool nothing = !HW_VALID(g->mem_total_bytes) && !HW_VALID(g->temp_c) && !HW_VALID(g->util_gpu_pct);
	if (g->asleep) {
		fprintf(f, _(" | %sasleep%s (runtime-suspended; --wake to query)\n"), c_dim(f), c_reset(f));
	} else if (g->error[0] && nothing) {
		char *e = tr_hw(g->error);
		fprintf(f, " | %s%s%s\n", c_red(f), e, c_reset(f));
		free(e);
	} else if (nothing) {
		fprintf(f, " | %s%s%s%s\n", g->kernel_driver[0] ? g->kernel_driver : _("no driver"),
			g->integrated ? _(", integrated") : "", g->fell_off_bus ? _(", fell off the bus") : "",
			g->vendor != HW_VENDOR_NVIDIA ? _("; no more data from sysfs") : "");
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
			fprintf(f, _(" | %sthrottled: %s%s"), c_yellow(f), words, c_reset(f));
		}
		if (g->error[0]) {
			char *e = tr_hw(g->error);
			fprintf(f, " | %s%s%s", c_red(f), e, c_reset(f));
			free(e);
		}
		fputc('\n', f);
	}
	if (all) {
		char cc[48], buf[64];
		fprintf(f, _("    bus %s  %04x:%04x rev %s  driver %s%s"), g->pci_bus_id, g->pci_vendor_id,
			g->pci_device_id, g->pci_revision >= 0 ? (snprintf(buf, sizeof buf, "%02x", g->pci_revision), buf) : "-",
			g->kernel_driver[0] ? g->kernel_driver : _("none"), g->integrated ? _("  integrated") : "");
		if (g->runtime_status[0])
			fprintf(f, _("  power %s"), g->runtime_status);
		if (cc_string(g, cc, sizeof cc))
			fprintf(f, _("  cc %s%s%s%s"), cc, g->arch[0] ? " (" : "", g->arch, g->arch[0] ? ")" : "");
		if (g->cuda_ordinal >= 0)
			fprintf(f, _("  cuda %d"), g->cuda_ordinal);
		fputc('\n', f);
		if (HW_VALID(g->clock_sm_mhz) || HW_VALID(g->pcie_gen) || HW_VALID(g->fan_pct)) {
			char a[48], b[48], c[48], d[48], e[48], x[48];
			fprintf(f, _("    clocks sm %s/%s MHz mem %s/%s MHz  PCIe gen %s x%s (max %s x%s)  fan %s\n"),
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
			fprintf(f, _("    persistence %s  compute mode %s  ECC %s (corrected %s, uncorrected %s)  MIG %s"),
				on_off(g->persistence_mode), HW_VALID(g->compute_mode) ? compute_mode_name(g->compute_mode.v) : "-",
				on_off(g->ecc_mode), dash_or(g->ecc_corrected, "", 1, a, sizeof a),
				dash_or(g->ecc_uncorrected, "", 1, b, sizeof b), on_off(g->mig_mode));
			if (HW_VALID(g->remap_pending) && (g->remap_pending.v || g->remap_failure.v))
				fprintf(f, _("  %srow remapping %s%s"), c_red(f),
					g->remap_failure.v ? _("failed") : _("pending (reset the GPU)"), c_reset(f));
			fputc('\n', f);
		}
		if (HW_VALID(g->enc_util_pct) || HW_VALID(g->pcie_tx_kbytes_per_s) || HW_VALID(g->energy_mj) ||
		    HW_VALID(g->pstate)) {
			char a[48], b[48], c[48], d[48], e[48], p[48];
			fprintf(f, _("    P-state %s  video enc %s dec %s  PCIe tx %s rx %s MB/s  energy %s kJ\n"),
				HW_VALID(g->pstate) ? (snprintf(p, sizeof p, "P%lld", (long long)g->pstate.v), p) : "-",
				dash_or(g->enc_util_pct, "%", 1, a, sizeof a), dash_or(g->dec_util_pct, "%", 1, b, sizeof b),
				dash_or(g->pcie_tx_kbytes_per_s, "", 1024.0 / 1e6, c, sizeof c),
				dash_or(g->pcie_rx_kbytes_per_s, "", 1024.0 / 1e6, d, sizeof d),
				dash_or(g->energy_mj, "", 1e-6, e, sizeof e));
		}
		if (HW_VALID(g->sm_count))
			fprintf(f, _("    %lld SMs  memory bus %lld bit  L2 %s  peak bandwidth %.0f GB/s\n"),
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
		fprintf(f, _("    %sprocesses: %s%s\n"), c_dim(f), _(hw_status_name(g->procs_listed.st)), c_reset(f));
	for (size_t i = 0; i < g->n_procs; i++) {
		const hw_proc *p = &g->procs[i];
		char mem[32], sm[16], where[64] = "";
		if (p->gpu_instance != UINT32_MAX && g->n_migs)
			snprintf(where, sizeof where, " [MIG GI %u]", p->gpu_instance);
		if (p->container[0])
			snprintf(where + strlen(where), sizeof where - strlen(where), _(" [container %.12s]"), p->container);
		if (p->graphics && !p->compute)
			snprintf(where + strlen(where), sizeof where - strlen(where), _(" (graphics)"));
		snprintf(sm, sizeof sm, HW_VALID(p->sm_util_pct) ? "%lld%%" : "-", (long long)p->sm_util_pct.v);
		char head[96];
		int hn = snprintf(head, sizeof head, "    %-10s %10s  %7u %4s  ", p->user[0] ? p->user : "?",
				  HW_VALID(p->used_mem_bytes) ? fmt_bytes(mem, sizeof mem, (uint64_t)p->used_mem_bytes.v) : "-",
				  p->pid, sm);
		strbuf cmd = STRBUF_INIT;
		if (p->argv_len)
			quote_argv(&cmd, p->argv, p->argv_len);
		else
			sb_puts(&cmd, p->command[0] ? p->command
				      : p->exists	  ? "?"
				      : p->windows_side ? _("(a Windows-side process: not in WSL's /proc)")
							  : _("(not in /proc: another PID namespace?)"));
		/* the command fills what the terminal leaves after the other columns */
		size_t room = 0;
		if (cols > (size_t)hn + utf8_len(where) + 8)
			room = cols - (size_t)hn - utf8_len(where);
		fputs(head, f);
		fputs_cut(sb_str(&cmd), cols ? (room ? room : 8) : 0, f);
		fprintf(f, "%s\n", where);
		sb_release(&cmd);
	}
}

static void print_text(const hw_snapshot *s, bool all, FILE *f)
{
	size_t cols = term_cols(f);
	char host[128] = "", when[32], cv[48];
	gethostname(host, sizeof host - 1);
	time_t now = (time_t)(s->taken_wall_ms / 1000);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "%s  %s", host, when);
	if (s->driver_version[0])
		fprintf(f, _("  driver %s"), s->driver_version);
	if (cuda_version_string(s, cv, sizeof cv))
		fprintf(f, _("  CUDA %s"), cv);
	if (s->platform == HW_PLATFORM_WSL2)
		fputs(_("  WSL 2 (the Windows driver)"), f);
	else if (s->platform == HW_PLATFORM_WSL1)
		fputs(_("  WSL 1 (no GPU access)"), f);
	fputc('\n', f);
	hw_wsl_memory wm;
	if (s->platform == HW_PLATFORM_WSL2 && hw_wsl_memory_read(&wm, NULL) == 0) {
		char a[32], b[32];
		fmt_bytes(a, sizeof a, wm.vm_total_bytes);
		if (wm.limit_bytes)
			fprintf(f, _("WSL 2 VM: %s RAM, limited by %s\n"), a, wm.rule);
		else
			fprintf(f, _("WSL 2 VM: %s RAM (%s: Windows has about %s)\n"), a, wm.rule,
				fmt_bytes(b, sizeof b, wm.windows_ram_bytes_est));
	}
	char *nvml_error = tr_hw(s->nvml_error);
	if (snapshot_verdict(s, false))
		fprintf(f, _("%sNVML cannot be used: %s%s\n"), c_red(f), nvml_error, c_reset(f));
	else if (!s->n_gpus)
		fputs(_("no GPU found\n"), f);
	size_t w = 0;
	for (size_t i = 0; i < s->n_gpus; i++)
		if (strlen(s->gpus[i].name) > w)
			w = strlen(s->gpus[i].name);
	for (size_t i = 0; i < s->n_gpus; i++)
		print_gpu_text(&s->gpus[i], w, all, cols, f);
	if (s->nvml_asleep_skip)
		fprintf(f, _("%snote: %s%s\n"), c_dim(f), nvml_error, c_reset(f));
	if (s->cuda_order_note[0]) {
		char *t = tr_hw(s->cuda_order_note);
		fprintf(f, _("note: %s\n"), t);
		free(t);
	}
	if (all) {
		if (s->nvml_path[0] && s->nvml_version[0])
			fprintf(f, _("NVML: %s version %s\n"), s->nvml_path, s->nvml_version);
		else if (s->nvml_path[0])
			fprintf(f, _("NVML: %s\n"), s->nvml_path);
		else if (s->nvml_error[0])
			fprintf(f, _("NVML: %s\n"), nvml_error);
		if (s->nvml_note[0]) {
			char *t = tr_hw(s->nvml_note);
			fprintf(f, _("NVML: %s\n"), t);
			free(t);
		}
		if (s->cuda_path[0] || s->cuda_error[0]) {
			char *t = tr_hw(s->cuda_error);
			fprintf(f, _("CUDA driver: %s%s%s\n"), s->cuda_path, t[0] ? "  " : "", t);
			free(t);
		}
	}
	free(nvml_error);
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
		print_prometheus(s, o->prom_names, stdout);
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

/* ---- --serve: a /metrics endpoint (libmicrohttpd, loaded at run time) ------------ */

/*
 * libmicrohttpd is dlopen'ed like NVML, so the binary still runs where it
 * is not installed (only --serve needs it); microhttpd.h gives the types.
 * One internal polling thread answers the requests one at a time; each
 * scrape of /metrics takes a fresh sample under the lock.
 */
typedef struct MHD_Daemon *(*mhd_start_fn)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
					   MHD_AccessHandlerCallback, void *, ...);
typedef struct mhd_api {
	void *lib;
	mhd_start_fn start;
	void (*stop)(struct MHD_Daemon *);
	struct MHD_Response *(*from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
	enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
	enum MHD_Result (*queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
	void (*destroy)(struct MHD_Response *);
	const union MHD_DaemonInfo *(*info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
} mhd_api;

typedef struct serve_ctx {
	mhd_api api;
	hw *h;
	int names;
	const char *socket;      /* the queue daemon asked for the page and the queue series */
	pthread_mutex_t lock;
	unsigned long long scrapes;
} serve_ctx;

#define PAGE_REFRESH_S 5
#define PAGE_QUEUE_TIMEOUT_MS 2000

static int mhd_load(mhd_api *m, char *why, size_t whyn)
{
	const char *name = getenv("GPUWISE_MHD_LIB");
	if (!name || !*name)
		name = "libmicrohttpd.so.12";
	dlerror();
	m->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!m->lib) {
		const char *e = dlerror();
		snprintf(why, whyn, _("cannot load '%s' for --serve (install libmicrohttpd12): %s"), name, e ? e : _("not found"));
		return -1;
	}
	*(void **)&m->start = dlsym(m->lib, "MHD_start_daemon");
	*(void **)&m->stop = dlsym(m->lib, "MHD_stop_daemon");
	*(void **)&m->from_buffer = dlsym(m->lib, "MHD_create_response_from_buffer");
	*(void **)&m->add_header = dlsym(m->lib, "MHD_add_response_header");
	*(void **)&m->queue = dlsym(m->lib, "MHD_queue_response");
	*(void **)&m->destroy = dlsym(m->lib, "MHD_destroy_response");
	*(void **)&m->info = dlsym(m->lib, "MHD_get_daemon_info");
	if (!m->start || !m->stop || !m->from_buffer || !m->add_header || !m->queue || !m->destroy || !m->info) {
		snprintf(why, whyn, _("'%s' lacks a libmicrohttpd function --serve needs"), name);
		dlclose(m->lib);
		m->lib = NULL;
		return -1;
	}
	return 0;
}

static enum MHD_Result serve_reply(serve_ctx *c, struct MHD_Connection *conn, unsigned int code, const char *type,
				   char *body, size_t len)
{
	struct MHD_Response *r = c->api.from_buffer(len, body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	c->api.add_header(r, "Content-Type", type);
	enum MHD_Result ok = c->api.queue(conn, code, r);
	c->api.destroy(r);
	return ok;
}

static enum MHD_Result serve_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				     const char *version, const char *upload, size_t *upload_size, void **req)
{
	(void)version;
	(void)upload;
	serve_ctx *c = cls;
	/* the first call only announces the request (libmicrohttpd protocol) */
	if (!*req) {
		*req = c;
		return MHD_YES;
	}
	if (*upload_size) {
		/* a body (POST ...) is read and dropped; the answer is 405 */
		*upload_size = 0;
		return MHD_YES;
	}
	char text[160];
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		int n = snprintf(text, sizeof text, "method %s not allowed\n", method);
		return serve_reply(c, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", text, (size_t)n);
	}
	bool page = strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0;
	if (strcmp(url, "/metrics") != 0 && !page) {
		int n = snprintf(text, sizeof text, "gpuwise status --serve: the page is at /, the metrics at /metrics\n");
		return serve_reply(c, conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", text, (size_t)n);
	}
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	/* the queue first, outside the lock: a slow daemon holds up no NVML reading */
	page_queue q;
	page_queue_fetch(c->socket, PAGE_QUEUE_TIMEOUT_MS, &q);
	strbuf extra = STRBUF_INIT;
	pthread_mutex_lock(&c->lock);
	hw_snapshot s;
	gw_error err = {0};
	bool have = hw_sample(c->h, &s, &err) == 0;
	if (page) {
		page_html(have ? &s : NULL, err.msg, &q, PAGE_REFRESH_S, &extra);
	} else {
		if (have)
			print_prometheus(&s, c->names, f);
		page_prometheus(&q, &extra);
	}
	if (have)
		hw_snapshot_release(&s);
	c->scrapes++;
	pthread_mutex_unlock(&c->lock);
	fputs(sb_str(&extra), f);
	sb_release(&extra);
	page_queue_release(&q);
	fclose(f);
	if (page) {
		enum MHD_Result ok = serve_reply(c, conn, MHD_HTTP_OK, "text/html; charset=utf-8", body, len);
		free(body);
		return ok;
	}
	/* the exposition format's content type (Prometheus text format 0.0.4) */
	enum MHD_Result ok = serve_reply(c, conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len);
	free(body);
	return ok;
}

/*
 * Parse ADDR:PORT ("127.0.0.1:9400", ":9400" for every IPv4 address,
 * "[::1]:9400", "localhost:9400") into a socket address; port 0 asks the
 * kernel for a free one.  0 or -1 with why filled.
 */
static int serve_addr(const char *spec, struct sockaddr_storage *out, socklen_t *outlen, char *why, size_t whyn)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon[1] == '\0') {
		snprintf(why, whyn, _("--serve needs ADDR:PORT (\"127.0.0.1:9400\", \":9400\"), not '%s'"), spec);
		return -1;
	}
	long long port;
	if (parse_int(colon + 1, 0, 65535, &port)) {
		snprintf(why, whyn, _("--serve: port must be 0 to 65535, not '%s'"), colon + 1);
		return -1;
	}
	size_t hl = (size_t)(colon - spec);
	if (hl >= sizeof host) {
		snprintf(why, whyn, _("--serve: address too long"));
		return -1;
	}
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	int e = getaddrinfo(host[0] ? host : "0.0.0.0", NULL, &hints, &res);
	if (e || !res) {
		snprintf(why, whyn, _("--serve: cannot resolve '%s': %s"), host, e ? gai_strerror(e) : _("no address"));
		return -1;
	}
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*outlen = res->ai_addrlen;
	freeaddrinfo(res);
	if (out->ss_family == AF_INET6)
		((struct sockaddr_in6 *)out)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)out)->sin_port = htons((uint16_t)port);
	return 0;
}

/* Serve /metrics until SIGINT or SIGTERM; the exit status. */
static int serve(hw *h, const char *spec, int names, const char *socket)
{
	struct sockaddr_storage sa;
	socklen_t salen = 0;
	char why[512];
	if (serve_addr(spec, &sa, &salen, why, sizeof why))
		return usage_error("status", "%s", why);
	serve_ctx c;
	memset(&c, 0, sizeof c);
	c.h = h;
	c.names = names;
	c.socket = socket;
	pthread_mutex_init(&c.lock, NULL);
	if (mhd_load(&c.api, why, sizeof why)) {
		gw_errorf("%s", why);
		pthread_mutex_destroy(&c.lock);
		return GW_EXIT_RUNTIME;
	}
	int rc = GW_EXIT_OK;
	/* nobody of the same user reads this process's memory or environment */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/*
	 * epoll (no select() limit of 1024 descriptors), idle connections closed
	 * after 10 s, at most 1000 at once and 64 below the descriptor limit,
	 * at most 64 from one address (the daemon's http_per_address) so that
	 * one user's idle connections leave room for everyone else's; under the
	 * queue daemon, on the socket it bound (GPUWISE_LISTEN_FD)
	 */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			     (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	const char *lfd = getenv("GPUWISE_LISTEN_FD");
	long long lfd_n = -1;
	if (lfd && parse_int(lfd, 3, 1 << 20, &lfd_n))
		lfd_n = -1;
	const char *pa = getenv("GPUWISE_HTTP_PER_ADDRESS");
	long long per_addr = 64;
	if (pa && parse_int(pa, 1, 100000, &per_addr))
		per_addr = 64;
	unsigned int conn_cap = 1000;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1000 + 64)
		conn_cap = rl.rlim_cur > 64 + 16 ? (unsigned int)(rl.rlim_cur - 64) : 16;
	struct MHD_Daemon *d =
		lfd_n >= 0 ? c.api.start(flags, 0, NULL, NULL, serve_request, &c, MHD_OPTION_LISTEN_SOCKET, (int)lfd_n,
					 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_CONNECTION_LIMIT,
					 conn_cap, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)per_addr,
					 MHD_OPTION_END)
			   : c.api.start(flags, 0, NULL, NULL, serve_request, &c, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_CONNECTION_LIMIT,
					 conn_cap, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)per_addr,
					 MHD_OPTION_END);
	if (!d) {
		gw_errorf(_("cannot listen on '%s': %s"), spec, errno ? strerror(errno) : _("libmicrohttpd refused"));
		rc = GW_EXIT_RUNTIME;
		goto out;
	}
	/* a broken NVML does not stop the endpoint (it reports
	 * gpuwise_nvml_up 0), but the person starting it hears why now */
	hw_snapshot s0;
	gw_error err = {0};
	pthread_mutex_lock(&c.lock);
	if (hw_sample(h, &s0, &err) == 0) {
		snapshot_verdict(&s0, true);
		hw_snapshot_release(&s0);
	}
	pthread_mutex_unlock(&c.lock);
	const union MHD_DaemonInfo *bi = c.api.info(d, MHD_DAEMON_INFO_BIND_PORT);
	char shown[300];
	snprintf(shown, sizeof shown, "%.*s", (int)(strrchr(spec, ':') - spec), spec);
	printf(_("serving http://%s:%u/metrics and the page at / (Ctrl-C stops)\n"), shown[0] ? shown : "0.0.0.0", bi ? bi->port : 0);
	fflush(stdout);
	struct sigaction sig, old_int, old_term;
	memset(&sig, 0, sizeof sig);
	sig.sa_handler = on_sigint;
	sigemptyset(&sig.sa_mask);
	stop_flag = 0;
	sigaction(SIGINT, &sig, &old_int);
	sigaction(SIGTERM, &sig, &old_term);
	while (!stop_flag)
		nap(200);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	c.api.stop(d);
out:
	dlclose(c.api.lib);
	pthread_mutex_destroy(&c.lock);
	return rc;
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
		{"prometheus-names", required_argument, NULL, 'N'},
		{"serve", required_argument, NULL, 'S'},
		{"socket", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	status_opts o = {FMT_TEXT, false, false, 1000, 0, 0, PROM_DCGM, NULL, NULL};
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
		case 'N':
			if (strcmp(optarg, "dcgm") == 0)
				o.prom_names = PROM_DCGM;
			else if (strcmp(optarg, "gpuwise") == 0)
				o.prom_names = PROM_GPUWISE;
			else
				return usage_error("status", "--prometheus-names is 'dcgm' or 'gpuwise', not '%s'", optarg);
			break;
		case 'S': o.serve = optarg; break;
		case 's': o.socket = optarg; break;
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
	if (o.socket && !o.serve)
		return usage_error("status", "--socket needs --serve");
	if (o.serve && (o.watch || o.format == FMT_JSON))
		return usage_error("status", "--serve excludes --watch and --json");
	/* The CUDA driver is slow to initialise; only --all asks it.  PCIe
	 * throughput costs NVML about 20 ms a reading: only outputs showing it. */
	ho.no_cuda = !o.all;
	ho.pcie_throughput = o.all || o.format != FMT_TEXT || o.serve;

	gw_error err = {0};
	hw *h = hw_open(&ho, &err);
	if (!h) {
		gw_errorf("%s", gw_error_text(&err));
		return GW_EXIT_RUNTIME;
	}
	if (o.bench) {
		int r = bench_refresh(h, o.bench);
		hw_close(h);
		return r;
	}
	if (o.serve) {
		int r = serve(h, o.serve, o.prom_names, o.socket);
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
			gw_errorf("%s", gw_error_text(&err));
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

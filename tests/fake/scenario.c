/*
 * scenario.c: load and evaluate the JSON scenario behind the fake vendor
 * libraries; linked into every fake library in tests/fake.
 */
#include "scenario.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static json_t *root;
static int load_state; /* 0 not tried, 1 ok, -1 failed */
static int64_t t0_ms;
static bool clock_calls;
static int log_fd = -2;

void sc_lock(void) { pthread_mutex_lock(&lock); }
void sc_unlock(void) { pthread_mutex_unlock(&lock); }

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sc_now_ms(void) { return mono_ms() - t0_ms; }

/* Return codes from NVML's nvml.h (nvmlReturn_t), as listed in
 * NVIDIA/go-nvml:gen/nvml/nvml.h. */
static const struct { const char *name; int code; } nvml_codes[] = {
	{"SUCCESS", 0}, {"UNINITIALIZED", 1}, {"INVALID_ARGUMENT", 2}, {"NOT_SUPPORTED", 3},
	{"NO_PERMISSION", 4}, {"ALREADY_INITIALIZED", 5}, {"NOT_FOUND", 6},
	{"INSUFFICIENT_SIZE", 7}, {"INSUFFICIENT_POWER", 8}, {"DRIVER_NOT_LOADED", 9},
	{"TIMEOUT", 10}, {"IRQ_ISSUE", 11}, {"LIBRARY_NOT_FOUND", 12}, {"FUNCTION_NOT_FOUND", 13},
	{"CORRUPTED_INFOROM", 14}, {"GPU_IS_LOST", 15}, {"RESET_REQUIRED", 16},
	{"OPERATING_SYSTEM", 17}, {"LIB_RM_VERSION_MISMATCH", 18}, {"IN_USE", 19},
	{"MEMORY", 20}, {"NO_DATA", 21}, {"ARGUMENT_VERSION_MISMATCH", 25},
	{"GPU_NOT_FOUND", 28}, {"UNKNOWN", 999},
};
/* CUresult values from cuda.h (CUDA driver API reference, "Error Handling"). */
static const struct { const char *name; int code; } cuda_codes[] = {
	{"SUCCESS", 0}, {"INVALID_VALUE", 1}, {"OUT_OF_MEMORY", 2}, {"NOT_INITIALIZED", 3},
	{"DEINITIALIZED", 4}, {"NO_DEVICE", 100}, {"INVALID_DEVICE", 101},
	{"SYSTEM_DRIVER_MISMATCH", 803}, {"COMPAT_NOT_SUPPORTED_ON_DEVICE", 804},
	{"UNKNOWN", 999},
};

int sc_nvml_code(const char *name)
{
	for (size_t i = 0; i < sizeof nvml_codes / sizeof nvml_codes[0]; i++)
		if (strcmp(nvml_codes[i].name, name) == 0)
			return nvml_codes[i].code;
	return -1;
}

int sc_cuda_code(const char *name)
{
	for (size_t i = 0; i < sizeof cuda_codes / sizeof cuda_codes[0]; i++)
		if (strcmp(cuda_codes[i].name, name) == 0)
			return cuda_codes[i].code;
	return -1;
}

/* ---- validation --------------------------------------------------------- */

static const char *const root_keys[] = {
	"description", "driver_version", "nvml_version", "cuda_driver_version", "gpus",
	"errors", "cuda_errors", NULL};
static const char *const gpu_str_keys[] = {"name", "uuid", "pci_bus_id", "cc", "serial", NULL};
static const char *const gpu_num_keys[] = {
	"pci_device_id", "pci_subsys_id", "arch", "memory_total_bytes", "mem_used", "mem_reserved",
	"temp_c", "temp_slowdown_c", "temp_shutdown_c", "fan_pct", "util_gpu_pct", "util_mem_pct",
	"power_mw", "power_limit_mw", "power_default_limit_mw", "clock_sm_mhz", "clock_mem_mhz",
	"clock_sm_max_mhz", "clock_mem_max_mhz", "throttle_reasons", "pcie_gen", "pcie_width",
	"pcie_gen_max", "pcie_width_max", "persistence_mode", "compute_mode", "mig_mode",
	"ecc_mode", "ecc_corrected", "ecc_uncorrected", "retired_sbe", "retired_dbe",
	"retired_pending", "remap_correctable", "remap_uncorrectable", "remap_pending",
	"remap_failure", "sm_count", "mem_clock_khz", "mem_bus_width_bits", "l2_bytes",
	"enc_util_pct", "dec_util_pct", "pcie_tx_kbps", "pcie_rx_kbps", "energy_mj", "pstate",
	"bar1_total_bytes", "bar1_used_bytes", "display_active", NULL};
static const char *const gpu_obj_keys[] = {"migs", "processes", "errors", "cuda_errors", NULL};
static const char *const mig_keys[] = {
	"uuid", "name", "gpu_instance", "compute_instance", "memory_total_bytes", "mem_used",
	"sm_count", "errors", "bar1_total_bytes", "bar1_used_bytes", NULL};
static const char *const proc_keys[] = {
	"pid", "used_memory_bytes", "type", "gpu_instance", "compute_instance", "from_ms",
	"until_ms", "sm_pct", "mem_pct", "enc_pct", "dec_pct", NULL};

static bool in_list(const char *const *list, const char *k)
{
	for (; *list; list++)
		if (strcmp(*list, k) == 0)
			return true;
	return false;
}

static int bad(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A numeric value: number, bool, null, array of numbers, or a series object. */
static int check_num(json_t *v, const char *where, char *why, size_t n)
{
	if (json_is_number(v) || json_is_boolean(v) || json_is_null(v))
		return 0;
	json_t *arr = v;
	if (json_is_object(v)) {
		arr = json_object_get(v, "series");
		if (!arr)
			arr = json_object_get(v, "calls");
		json_t *step = json_object_get(v, "step_ms");
		if (step && (!json_is_integer(step) || json_integer_value(step) <= 0))
			return bad(why, n, "%s: step_ms must be a positive integer", where);
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
			if (strcmp(k, "series") && strcmp(k, "calls") && strcmp(k, "step_ms") &&
			    strcmp(k, "loop") && k[0] != '_')
				return bad(why, n, "%s: unknown key '%s' in a series", where, k);
	}
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return bad(why, n, "%s: expected a number or a non-empty series", where);
	size_t i;
	json_t *x;
	json_array_foreach(arr, i, x)
		if (!json_is_number(x) && !json_is_null(x))
			return bad(why, n, "%s: series element %zu is not a number", where, i);
	return 0;
}

static int check_errors(json_t *e, const char *where, bool cuda, char *why, size_t n)
{
	if (!json_is_object(e))
		return bad(why, n, "%s: errors must be an object", where);
	const char *k;
	json_t *v;
	json_object_foreach(e, k, v) {
		if (k[0] == '_')
			continue;
		json_t *code = json_is_object(v) ? json_object_get(v, "error") : v;
		if (json_is_integer(code))
			continue;
		if (!json_is_string(code) ||
		    (cuda ? sc_cuda_code(json_string_value(code)) : sc_nvml_code(json_string_value(code))) < 0)
			return bad(why, n, "%s: errors.%s: unknown error name", where, k);
	}
	return 0;
}

static int check_keys(json_t *o, const char *where, const char *const *allowed, char *why, size_t n)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
		if (k[0] != '_' && !in_list(allowed, k))
			return bad(why, n, "%s: unknown key '%s'", where, k);
	return 0;
}

static int validate(char *why, size_t n)
{
	char where[64];
	if (!json_is_object(root))
		return bad(why, n, "the top level must be an object");
	if (check_keys(root, "top level", root_keys, why, n))
		return -1;
	json_t *gpus = json_object_get(root, "gpus");
	if (gpus && !json_is_array(gpus))
		return bad(why, n, "'gpus' must be an array");
	json_t *e = json_object_get(root, "errors");
	if (e && check_errors(e, "top level", false, why, n))
		return -1;
	e = json_object_get(root, "cuda_errors");
	if (e && check_errors(e, "top level", true, why, n))
		return -1;
	size_t i;
	json_t *g;
	json_array_foreach(gpus, i, g) {
		snprintf(where, sizeof where, "gpus[%zu]", i);
		if (!json_is_object(g))
			return bad(why, n, "%s: must be an object", where);
		const char *k;
		json_t *v;
		json_object_foreach(g, k, v) {
			if (k[0] == '_')
				continue;
			if (in_list(gpu_str_keys, k)) {
				if (!json_is_string(v))
					return bad(why, n, "%s.%s: must be a string", where, k);
			} else if (in_list(gpu_num_keys, k)) {
				char w2[128];
				snprintf(w2, sizeof w2, "%s.%s", where, k);
				if (check_num(v, w2, why, n))
					return -1;
			} else if (strcmp(k, "nvlinks") == 0) {
				/* each active NVLink's remote PCI bus id; null for a link that is down */
				size_t li;
				json_t *lv;
				if (!json_is_array(v) || json_array_size(v) > 18)
					return bad(why, n, "%s.nvlinks: must be an array of at most 18 bus ids", where);
				json_array_foreach(v, li, lv) if (!json_is_string(lv) && !json_is_null(lv)) return bad(
					why, n, "%s.nvlinks[%zu]: must be a PCI bus id or null", where, li);
			} else if (!in_list(gpu_obj_keys, k)) {
				return bad(why, n, "%s: unknown key '%s'", where, k);
			}
		}
		if (!sc_str(g, "name") || !sc_str(g, "uuid") || !sc_str(g, "pci_bus_id"))
			return bad(why, n, "%s: needs name, uuid and pci_bus_id", where);
		if ((e = json_object_get(g, "errors")) && check_errors(e, where, false, why, n))
			return -1;
		if ((e = json_object_get(g, "cuda_errors")) && check_errors(e, where, true, why, n))
			return -1;
		json_t *migs = json_object_get(g, "migs");
		if (migs && !json_is_array(migs))
			return bad(why, n, "%s.migs: must be an array", where);
		size_t j;
		json_t *m;
		json_array_foreach(migs, j, m) {
			char w2[96];
			snprintf(w2, sizeof w2, "%s.migs[%zu]", where, j);
			if (!json_is_object(m) || check_keys(m, w2, mig_keys, why, n))
				return json_is_object(m) ? -1 : bad(why, n, "%s: must be an object", w2);
			if (!sc_str(m, "uuid"))
				return bad(why, n, "%s: needs a uuid", w2);
		}
		json_t *procs = json_object_get(g, "processes");
		if (procs && !json_is_array(procs))
			return bad(why, n, "%s.processes: must be an array", where);
		json_array_foreach(procs, j, m) {
			char w2[96];
			snprintf(w2, sizeof w2, "%s.processes[%zu]", where, j);
			if (!json_is_object(m) || check_keys(m, w2, proc_keys, why, n))
				return json_is_object(m) ? -1 : bad(why, n, "%s: must be an object", w2);
			json_t *pid = json_object_get(m, "pid");
			if (!json_is_integer(pid) && !(json_is_string(pid) && strcmp(json_string_value(pid), "child") == 0))
				return bad(why, n, "%s: needs an integer pid or \"child\"", w2);
			json_t *um = json_object_get(m, "used_memory_bytes");
			if (um && check_num(um, w2, why, n))
				return -1;
		}
	}
	return 0;
}

int sc_load(void)
{
	if (load_state)
		return load_state > 0 ? 0 : -1;
	t0_ms = mono_ms();
	const char *c = getenv("GPUWISE_FAKE_CLOCK");
	clock_calls = c && strcmp(c, "calls") == 0;
	const char *path = getenv("GPUWISE_FAKE_SCENARIO");
	char why[300];
	if (!path || !*path) {
		fprintf(stderr, "fake vendor library: GPUWISE_FAKE_SCENARIO is not set\n");
		load_state = -1;
		return -1;
	}
	json_error_t je;
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		fprintf(stderr, "fake vendor library: scenario '%s': line %d: %s\n", path, je.line, je.text);
		load_state = -1;
		return -1;
	}
	if (validate(why, sizeof why)) {
		fprintf(stderr, "fake vendor library: scenario '%s': %s\n", path, why);
		json_decref(root);
		root = NULL;
		load_state = -1;
		return -1;
	}
	load_state = 1;
	return 0;
}

bool sc_loaded_ok(void) { return load_state > 0; }

/* Free the scenario when the library is unloaded (dlclose), so leak
 * checkers in the host process stay quiet. */
__attribute__((destructor)) static void sc_unload(void)
{
	json_decref(root);
	root = NULL;
	load_state = 0;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -2;
}
json_t *sc_root(void) { return root; }

size_t sc_gpu_count(void)
{
	return root ? json_array_size(json_object_get(root, "gpus")) : 0;
}

json_t *sc_gpu(size_t i) { return json_array_get(json_object_get(root, "gpus"), i); }

const char *sc_str(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static bool peeking;

void sc_peek(bool on) { peeking = on; }

/* The read counter of a series lives in the series object itself; a peek
 * reads the value the next read will return without counting. */
static size_t bump(json_t *series_obj)
{
	json_t *r = json_object_get(series_obj, "_reads");
	size_t n = r ? (size_t)json_integer_value(r) : 0;
	if (!peeking)
		json_object_set_new(series_obj, "_reads", json_integer((json_int_t)n + 1));
	return n;
}

static int64_t numval(json_t *x)
{
	return json_is_integer(x) ? (int64_t)json_integer_value(x) : (int64_t)json_real_value(x);
}

bool sc_int(json_t *obj, const char *key, int64_t *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return false;
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return true;
	}
	if (json_is_number(v)) {
		*out = numval(v);
		return true;
	}
	json_t *arr = v;
	int64_t step = 1000;
	bool per_call = clock_calls, loop = false;
	if (json_is_object(v)) {
		arr = json_object_get(v, "series");
		if (!arr) {
			arr = json_object_get(v, "calls");
			per_call = true;
		}
		json_t *s = json_object_get(v, "step_ms");
		if (s)
			step = json_integer_value(s);
		loop = json_is_true(json_object_get(v, "loop"));
	}
	size_t n = json_array_size(arr);
	if (!n)
		return false;
	size_t i;
	if (per_call) {
		/* the counter needs an object to live in; a bare array gets wrapped */
		if (!json_is_object(v)) {
			json_t *w = json_pack("{sO}", "series", v);
			json_object_set_new(obj, key, w);
			v = w;
		}
		i = bump(v);
	} else {
		i = (size_t)(sc_now_ms() / (step > 0 ? step : 1000));
	}
	i = loop ? i % n : (i >= n ? n - 1 : i);
	json_t *x = json_array_get(arr, i);
	if (json_is_null(x))
		return false;
	*out = numval(x);
	return true;
}

/*
 * "pid": "child" stands for the first child of the process that loaded the
 * fake (gpuwise run's job, whatever its pid is this time), read from
 * /proc/self/task/TID/children; 0 when it has none.
 */
uint32_t sc_pid(json_t *proc)
{
	json_t *v = json_object_get(proc, "pid");
	if (!json_is_string(v))
		return (uint32_t)sc_int_or(proc, "pid", 0);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	FILE *f = fopen(path, "r");
	unsigned int pid = 0;
	if (f) {
		if (fscanf(f, "%u", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid;
}

int64_t sc_int_or(json_t *obj, const char *key, int64_t dflt)
{
	int64_t v;
	return sc_int(obj, key, &v) ? v : dflt;
}

int sc_error(json_t *obj, const char *fn, const char *table)
{
	json_t *errs = json_object_get(obj, table);
	if (!errs)
		return 0;
	json_t *spec = json_object_get(errs, fn);
	if (!spec)
		spec = json_object_get(errs, "*");
	if (!spec)
		return 0;
	bool cuda = strcmp(table, "cuda_errors") == 0;
	json_t *code = spec;
	if (json_is_object(spec)) {
		code = json_object_get(spec, "error");
		json_t *calls = json_object_get(spec, "_calls");
		int64_t k = calls ? json_integer_value(calls) : 0;
		json_object_set_new(spec, "_calls", json_integer(k + 1));
		json_t *fc = json_object_get(spec, "from_call");
		if (fc && k < json_integer_value(fc))
			return 0;
		json_t *fm = json_object_get(spec, "from_ms");
		if (fm && sc_now_ms() < json_integer_value(fm))
			return 0;
		json_t *um = json_object_get(spec, "until_ms");
		if (um && sc_now_ms() >= json_integer_value(um))
			return 0;
	}
	if (json_is_integer(code))
		return (int)json_integer_value(code);
	return cuda ? sc_cuda_code(json_string_value(code)) : sc_nvml_code(json_string_value(code));
}

void sc_log(const char *fmt, ...)
{
	if (log_fd == -2) {
		const char *p = getenv("GPUWISE_FAKE_LOG");
		log_fd = p && *p ? open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	}
	if (log_fd < 0)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	ssize_t w = write(log_fd, line, (size_t)n);
	(void)w;
}

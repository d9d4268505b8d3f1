/*
 * scenario: the state behind the fake libnvidia-ml and libcuda.  A JSON
 * file named by GPUWISE_FAKE_SCENARIO describes the machine (see
 * tests/fake/README.md); values may be constants, time series or per-call
 * sequences; errors can be injected per function and per GPU.  Every
 * exported function locks sc_lock()/sc_unlock() around its work.
 */
#ifndef FAKE_SCENARIO_H
#define FAKE_SCENARIO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Only the vendor API is exported from the fake libraries. */
#pragma GCC visibility push(hidden)

/* Load the scenario once per process; 0 or -1 (reason printed to stderr). */
int sc_load(void);
bool sc_loaded_ok(void);
void sc_lock(void);
void sc_unlock(void);

json_t *sc_root(void);
size_t sc_gpu_count(void);
json_t *sc_gpu(size_t i);

/*
 * Evaluate a numeric field of obj: a number, true/false, an array (a
 * series with step 1000 ms), or {"series": [...], "step_ms": N} /
 * {"calls": [...]}.  null or absent: false.
 */
bool sc_int(json_t *obj, const char *key, int64_t *out);
int64_t sc_int_or(json_t *obj, const char *key, int64_t dflt);
/* A process entry's pid; "child" is the first child of the calling process. */
uint32_t sc_pid(json_t *proc);
/* While on, per-call series are read without advancing (derived values). */
void sc_peek(bool on);
const char *sc_str(json_t *obj, const char *key);

/*
 * The error injected for function fn on obj (a GPU, a MIG instance or the
 * root), or 0.  Looks up obj.errors[fn] then obj.errors["*"].  Counts the
 * call (for "from_call").
 */
int sc_error(json_t *obj, const char *fn, const char *table);

/* ms since the scenario was loaded (monotonic). */
int64_t sc_now_ms(void);

/* One line to GPUWISE_FAKE_LOG (when set). */
void sc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Error-name lookups ("NOT_SUPPORTED" -> 3), for NVML and CUDA tables. */
int sc_nvml_code(const char *name);
int sc_cuda_code(const char *name);

#pragma GCC visibility pop

#endif

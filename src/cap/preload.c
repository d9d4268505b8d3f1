/*
 * libgpuwise-cap.so: a hard per-job VRAM cap, preloaded into the job
 * (LD_PRELOAD) by gpuwise run --vram-cap.  See docs/vram-cap.md.
 *
 * Every CUDA driver call that allocates device memory is intercepted, on
 * both roads a program takes to the driver: the dynamic symbol (a program
 * linked with -lcuda, or dlopen + dlsym, which this library answers by
 * exporting dlsym) and cuGetProcAddress / cuGetProcAddress_v2, which the
 * CUDA runtime (cudaMalloc) and PyTorch use.  An allocation that would
 * take the job past its cap fails with CUDA_ERROR_OUT_OF_MEMORY before
 * the driver is asked; cuMemGetInfo_v2, cuDeviceTotalMem_v2 and NVML's
 * nvmlDeviceGetMemoryInfo(_v2) report the cap as the total.  The count is
 * kept per job in the region the supervisor created (cap/region.h).
 *
 * Types, signatures and values are those of cuda.h (CUDA 13.0: CUresult 2
 * CUDA_ERROR_OUT_OF_MEMORY, 500 CUDA_ERROR_NOT_FOUND; CUmemLocationType 1
 * DEVICE; CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 1 << 1) and nvml.h
 * (nvmlMemory_t, nvmlMemory_v2_t, nvmlProcessInfo_v2_t); they are declared
 * here, not included, as gpuwise does everywhere.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cap/region.h"

#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))
#define likely(x) __builtin_expect(!!(x), 1)

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;
typedef void *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
	int type;
	int requestedHandleTypes;
	CUmemLocation location;
	/* the rest of CUmemAllocationProp is not read */
} CUmemAllocationProp;
typedef struct { char bytes[16]; } CUuuid;

enum {
	CU_OK = 0, CU_INVALID_VALUE = 1, CU_OUT_OF_MEMORY = 2, CU_NOT_FOUND = 500, CU_UNKNOWN = 999,
	CU_LOC_DEVICE = 1, CU_PROC_PTDS = 1 << 1,
};

typedef void *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

/* ---- the real dlsym ------------------------------------------------------ */

typedef void *(*dlsym_fn)(void *, const char *);
HIDDEN __attribute__((used)) void *gwcap_next_dlsym;

/* glibc 2.34 moved dlsym into libc under GLIBC_2.34; older ones only have
 * the first version of their architecture (x86-64 2.2.5, aarch64 2.17). */
HIDDEN void *gwcap_resolve_dlsym(void)
{
	void *p = atomic_load_explicit((_Atomic(void *) *)&gwcap_next_dlsym, memory_order_acquire);
	if (p)
		return p;
	static const char *const vers[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
	for (size_t i = 0; !p && i < sizeof vers / sizeof vers[0]; i++)
		p = dlvsym(RTLD_NEXT, "dlsym", vers[i]);
	if (!p) {
		static const char msg[] = "gpuwise-cap: cannot find the C library's dlsym\n";
		ssize_t w = write(2, msg, sizeof msg - 1);
		(void)w;
		abort();
	}
	atomic_store_explicit((_Atomic(void *) *)&gwcap_next_dlsym, p, memory_order_release);
	return p;
}

static void *real_dlsym(void *h, const char *name)
{
	return ((dlsym_fn)gwcap_resolve_dlsym())(h, name);
}

/* ---- hooks ---------------------------------------------------------------- */

#define HOOKS(X)                                                           \
	X(cuMemAlloc_v2, "cuMemAlloc", 'v')                                \
	X(cuMemAllocPitch_v2, "cuMemAllocPitch", 'v')                      \
	X(cuMemAllocManaged, "cuMemAllocManaged", 'p')                     \
	X(cuMemAllocAsync, "cuMemAllocAsync", 'p')                         \
	X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 't')                    \
	X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 'p')         \
	X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 't')    \
	X(cuMemCreate, "cuMemCreate", 'p')                                 \
	X(cuMemFree_v2, "cuMemFree", 'v')                                  \
	X(cuMemFreeAsync, "cuMemFreeAsync", 'p')                           \
	X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 't')                      \
	X(cuMemRelease, "cuMemRelease", 'p')                               \
	X(cuMemGetInfo_v2, "cuMemGetInfo", 'v')                            \
	X(cuDeviceTotalMem_v2, "cuDeviceTotalMem", 'v')                    \
	X(cuGetProcAddress, "cuGetProcAddress", 'p')                       \
	X(cuGetProcAddress_v2, "cuGetProcAddress", 'w')                    \
	X(nvmlDeviceGetMemoryInfo, NULL, 'n')                              \
	X(nvmlDeviceGetMemoryInfo_v2, NULL, 'n')

enum {
#define HOOK_ENUM(name, base, kind) H_##name,
	HOOKS(HOOK_ENUM)
#undef HOOK_ENUM
	H_COUNT
};

typedef struct hook {
	const char *name;
	const char *base;   /* the name cuGetProcAddress is asked for; NULL: NVML */
	char kind;          /* 'p' plain, 'v' the _v2 of base, 't' _ptsz, 'w' _v2 from 12.0, 'n' NVML */
	void *fn;           /* ours */
	_Atomic(void *) real;
} hook;

/* Filled statically at the end of the file: dlsym may be called before
 * any constructor of ours has run. */
static hook hooks[H_COUNT];
/* A handle of the library the real functions come from (cuda, nvml). */
static _Atomic(void *) cuda_handle, nvml_handle;

static int hook_find(const char *name)
{
	for (int i = 0; i < H_COUNT; i++)
		if (strcmp(hooks[i].name, name) == 0)
			return i;
	return -1;
}

/* A dlopen handle for the object that holds address p (not ours). */
static void *handle_of(const void *p)
{
	Dl_info di;
	if (!p || !dladdr(p, &di) || !di.dli_fname)
		return NULL;
	return dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

static void note_real(int i, void *real)
{
	void *none = NULL;
	if (!real || real == hooks[i].fn)
		return;
	atomic_compare_exchange_strong(&hooks[i].real, &none, real);
	_Atomic(void *) *lib = hooks[i].kind == 'n' ? &nvml_handle : &cuda_handle;
	if (!atomic_load(lib)) {
		void *h = handle_of(real);
		none = NULL;
		if (h && !atomic_compare_exchange_strong(lib, &none, h))
			dlclose(h);
	}
}

/* A function of the real library by name: the one in the library a
 * hooked lookup went to, else the next definition after us. */
static void *lib_sym(bool nvml, const char *name)
{
	void *h = atomic_load(nvml ? &nvml_handle : &cuda_handle);
	void *p = h ? real_dlsym(h, name) : NULL;
	if (!p)
		p = real_dlsym(RTLD_NEXT, name);
	return p;
}

static void *real_of(int i)
{
	void *p = atomic_load_explicit(&hooks[i].real, memory_order_acquire);
	if (likely(p != NULL))
		return p;
	p = lib_sym(hooks[i].kind == 'n', hooks[i].name);
	if (p && p != hooks[i].fn)
		note_real(i, p);
	return atomic_load(&hooks[i].real);
}

/*
 * Our dlsym, for a handle that is not RTLD_DEFAULT or RTLD_NEXT: the hook
 * when name is one we intercept and the library defines it; NULL tells
 * the entry point below to hand the call to the C library's dlsym
 * unchanged (it keeps the caller's return address, which RTLD_NEXT needs).
 */
HIDDEN void *gwcap_dlsym_pre(void *h, const char *name)
{
	gwcap_resolve_dlsym();
	if (h == RTLD_DEFAULT || h == RTLD_NEXT || !name || (name[0] != 'c' && name[0] != 'n'))
		return NULL;
	int i = hook_find(name);
	if (i < 0)
		return NULL;
	void *real = real_dlsym(h, name);
	if (!real)
		return NULL;
	note_real(i, real);
	return hooks[i].fn;
}

#if defined(__x86_64__)
/* dlsym(h, name): ask gwcap_dlsym_pre, else jump (not call) into the C
 * library's dlsym with the caller's own return address on the stack. */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym,@function\n"
	"dlsym:\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	call gwcap_dlsym_pre\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	ret\n"
	"1:	jmp *gwcap_next_dlsym(%rip)\n"
	".size dlsym, .-dlsym\n");
#else
/* Elsewhere RTLD_NEXT is resolved from this library instead of the caller
 * (docs/vram-cap.md, "What it does not cover"). */
EXPORT void *dlsym(void *h, const char *name)
{
	void *p = gwcap_dlsym_pre(h, name);
	return p ? p : real_dlsym(h, name);
}
#endif

/* ---- per-process state ------------------------------------------------------ */

enum { ST_UNKNOWN, ST_ON, ST_BROKEN };
static _Atomic int g_state = ST_UNKNOWN;
static cap_region *g_reg;
static cap_slot *_Atomic g_slot;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
#define MAX_ORDINALS 64
static _Atomic int g_devmap[MAX_ORDINALS]; /* CUDA ordinal -> region index + 1 */
static _Atomic int g_refusals_said;
static _Atomic int64_t g_ctx_ms[CAP_MAX_DEVICES]; /* last NVML measurement per region device */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[320];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	ssize_t w = write(2, line, (size_t)n);
	(void)w;
}

static char *fmt_gib(char *b, size_t n, uint64_t v)
{
	if (v < (1ULL << 30))
		snprintf(b, n, "%.1f MiB", (double)v / (double)(1ULL << 20));
	else
		snprintf(b, n, "%.2f GiB", (double)v / (double)(1ULL << 30));
	return b;
}

/* Map the region named by the environment, once per process. */
static int attach(void)
{
	int s = atomic_load_explicit(&g_state, memory_order_acquire);
	if (likely(s != ST_UNKNOWN))
		return s;
	pthread_mutex_lock(&g_mu);
	s = atomic_load(&g_state);
	if (s == ST_UNKNOWN) {
		/* Fail closed on anything but a region this job's supervisor made:
		 * the library is only ever preloaded by gpuwise run --vram-cap, so
		 * a missing, empty or forged region is a job trying to leave its
		 * cap (or a mistake), never a reason to hand out memory. */
		const char *path = getenv(CAP_ENV_REGION);
		char why[256];
		s = ST_BROKEN;
		if (!path) {
			say("gpuwise-cap: %s is preloaded but %s is not set; every GPU allocation is refused", CAP_LIB_NAME,
			    CAP_ENV_REGION);
		} else if (!*path) {
			say("gpuwise-cap: %s is empty; every GPU allocation is refused", CAP_ENV_REGION);
		} else {
			int rc = cap_region_open(path, &g_reg);
			if (!rc && (rc = cap_region_authenticate(path, g_reg, why, sizeof why))) {
				cap_region_close(g_reg);
				g_reg = NULL;
			}
			if (rc == CAP_EFORGED)
				say("gpuwise-cap: cannot use the cap region '%s': %s: %s; every GPU allocation is refused",
				    path, cap_strerror(rc), why);
			else if (rc)
				say("gpuwise-cap: cannot use the cap region '%s': %s%s%s; every GPU allocation is refused",
				    path, cap_strerror(rc), rc == CAP_EIO ? ": " : "", rc == CAP_EIO ? strerror(errno) : "");
			else
				s = ST_ON;
		}
		atomic_store_explicit(&g_state, s, memory_order_release);
	}
	pthread_mutex_unlock(&g_mu);
	return s;
}

static void release_slot(void)
{
	cap_slot *s = atomic_exchange(&g_slot, NULL);
	if (s && g_reg)
		cap_slot_release(g_reg, s);
}

/* This process's lease, taken at its first counted allocation. */
static cap_slot *slot(void)
{
	cap_slot *s = atomic_load_explicit(&g_slot, memory_order_acquire);
	if (likely(s != NULL))
		return s;
	static bool atexit_done;
	pthread_mutex_lock(&g_mu);
	s = atomic_load(&g_slot);
	if (!s) {
		pid_t pid = getpid();
		int rc = cap_slot_claim(g_reg, pid, cap_proc_start_ticks(pid), &s);
		if (rc) {
			say("gpuwise-cap: cannot join the job's accounting: %s; GPU allocations are refused",
			    cap_strerror(rc));
			s = NULL;
		} else {
			atomic_store_explicit(&g_slot, s, memory_order_release);
			if (!atexit_done)
				atexit(release_slot);
			atexit_done = true;
		}
	}
	pthread_mutex_unlock(&g_mu);
	return s;
}

/* ---- allocation table: pointer or handle -> bytes and device ------------- */

typedef struct entry { uint64_t key; uint64_t bytes; int32_t dev; int32_t kind; } entry;
enum { K_PTR = 1, K_HANDLE = 2 };
static entry *t_tab;
static size_t t_cap, t_n;
static pthread_mutex_t t_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t t_home(uint64_t key, int kind)
{
	return (size_t)(((key ^ (uint64_t)kind) * 0x9e3779b97f4a7c15ULL) >> 17) & (t_cap - 1);
}

static int t_put(uint64_t key, int kind, uint64_t bytes, int dev)
{
	int rc = 0;
	pthread_mutex_lock(&t_mu);
	if ((t_n + 1) * 2 > t_cap) {
		size_t ocap = t_cap, ncap = t_cap ? t_cap * 2 : 4096;
		entry *old = t_tab, *nt = calloc(ncap, sizeof *nt);
		if (!nt) {
			rc = -1;
			goto out;
		}
		t_tab = nt;
		t_cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].kind) {
				size_t j = t_home(old[i].key, old[i].kind);
				while (t_tab[j].kind)
					j = (j + 1) & (t_cap - 1);
				t_tab[j] = old[i];
			}
		free(old);
	}
	size_t j = t_home(key, kind);
	while (t_tab[j].kind)
		j = (j + 1) & (t_cap - 1);
	t_tab[j] = (entry){key, bytes, dev, kind};
	t_n++;
out:
	pthread_mutex_unlock(&t_mu);
	return rc;
}

static bool t_take(uint64_t key, int kind, entry *out)
{
	bool found = false;
	pthread_mutex_lock(&t_mu);
	if (!t_cap)
		goto out;
	size_t j = t_home(key, kind);
	while (t_tab[j].kind && !(t_tab[j].key == key && t_tab[j].kind == kind))
		j = (j + 1) & (t_cap - 1);
	if (!t_tab[j].kind)
		goto out;
	*out = t_tab[j];
	found = true;
	t_tab[j].kind = 0;
	t_n--;
	/* backward-shift deletion keeps every probe chain unbroken */
	for (size_t k = (j + 1) & (t_cap - 1); t_tab[k].kind; k = (k + 1) & (t_cap - 1)) {
		size_t h = t_home(t_tab[k].key, t_tab[k].kind);
		if ((k > j && (h <= j || h > k)) || (k < j && h <= j && h > k)) {
			t_tab[j] = t_tab[k];
			t_tab[k].kind = 0;
			j = k;
		}
	}
out:
	pthread_mutex_unlock(&t_mu);
	return found;
}

/* After fork the child has no CUDA context and its own PID: start over. */
static void at_fork_child(void)
{
	pthread_mutex_init(&g_mu, NULL);
	pthread_mutex_init(&t_mu, NULL);
	atomic_store(&g_slot, NULL);
	free(t_tab);
	t_tab = NULL;
	t_cap = t_n = 0;
	atomic_store(&g_refusals_said, 0);
	for (int i = 0; i < CAP_MAX_DEVICES; i++)
		atomic_store(&g_ctx_ms[i], 0);
}

__attribute__((constructor)) static void gwcap_init(void)
{
	pthread_atfork(NULL, NULL, at_fork_child);
}

/* ---- devices ------------------------------------------------------------------ */

typedef CUresult (*ctx_get_device_fn)(CUdevice *);
typedef CUresult (*get_uuid_fn)(CUuuid *, CUdevice);

static CUresult current_device(CUdevice *d)
{
	static _Atomic(ctx_get_device_fn) fn;
	ctx_get_device_fn f = atomic_load_explicit(&fn, memory_order_relaxed);
	if (!f) {
		f = (ctx_get_device_fn)lib_sym(false, "cuCtxGetDevice");
		if (!f)
			return CU_UNKNOWN;
		atomic_store(&fn, f);
	}
	return f(d);
}

/* The region index of CUDA ordinal d, or a CUresult (> 0) on failure. */
static int region_dev(CUdevice d, int *out)
{
	if (d < 0 || d >= MAX_ORDINALS)
		return CU_OUT_OF_MEMORY;
	int v = atomic_load_explicit(&g_devmap[d], memory_order_relaxed);
	if (likely(v > 0)) {
		*out = v - 1;
		return 0;
	}
	get_uuid_fn f = (get_uuid_fn)lib_sym(false, "cuDeviceGetUuid_v2");
	if (!f)
		f = (get_uuid_fn)lib_sym(false, "cuDeviceGetUuid");
	if (!f)
		return CU_UNKNOWN;
	CUuuid u;
	CUresult rc = f(&u, d);
	if (rc)
		return rc;
	int idx = cap_dev_index(g_reg, (const unsigned char *)u.bytes);
	if (idx < 0) {
		say("gpuwise-cap: more than %d GPUs in one job; allocations on the others are refused", CAP_MAX_DEVICES);
		return CU_OUT_OF_MEMORY;
	}
	atomic_store(&g_devmap[d], idx + 1);
	*out = idx;
	return 0;
}

/* ---- NVML: the context's own memory ------------------------------------------ */

typedef int (*nvml_void_fn)(void);
typedef int (*nvml_count_fn)(unsigned int *);
typedef int (*nvml_handle_fn)(unsigned int, nvmlDevice_t *);
typedef int (*nvml_uuid_fn)(nvmlDevice_t, char *, unsigned int);
typedef int (*nvml_procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_v2_t *);
typedef int (*nvml_mem_fn)(nvmlDevice_t, void *);

/* "GPU-5a1c2f7e-0d4b-..." to the 16 bytes CUDA reports. */
static bool parse_uuid(const char *s, unsigned char out[16])
{
	if (strncmp(s, "GPU-", 4) == 0)
		s += 4;
	int i = 0;
	while (*s && i < 16) {
		if (*s == '-') {
			s++;
			continue;
		}
		unsigned int b;
		if (sscanf(s, "%2x", &b) != 1)
			return false;
		out[i++] = (unsigned char)b;
		s += 2;
	}
	return i == 16;
}

static void *nvml_lib(void)
{
	static void *h;
	static bool tried;
	if (!tried) {
		tried = true;
		const char *p = getenv("GPUWISE_NVML_LIB");
		h = dlopen(p && *p ? p : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		if (h) {
			nvml_void_fn init = (nvml_void_fn)real_dlsym(h, "nvmlInit_v2");
			if (!init || init()) {
				dlclose(h);
				h = NULL;
			}
		}
	}
	return h;
}

/*
 * What NVML says this process uses on the GPU with this UUID; false when
 * it cannot say (no NVML, the PID not visible in a container, a driver
 * that does not report per-process memory).  g_mu held.
 */
static bool nvml_my_bytes(const unsigned char uuid[16], uint64_t *out)
{
	void *h = nvml_lib();
	if (!h)
		return false;
	nvml_count_fn count = (nvml_count_fn)real_dlsym(h, "nvmlDeviceGetCount_v2");
	nvml_handle_fn byidx = (nvml_handle_fn)real_dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	nvml_uuid_fn getuuid = (nvml_uuid_fn)real_dlsym(h, "nvmlDeviceGetUUID");
	nvml_procs_fn procs = (nvml_procs_fn)real_dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!procs)
		procs = (nvml_procs_fn)real_dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v2");
	unsigned int n = 0;
	if (!count || !byidx || !getuuid || !procs || count(&n))
		return false;
	for (unsigned int i = 0; i < n; i++) {
		nvmlDevice_t dev;
		char s[96];
		unsigned char u[16];
		if (byidx(i, &dev) || getuuid(dev, s, sizeof s) || !parse_uuid(s, u) || memcmp(u, uuid, 16))
			continue;
		nvmlProcessInfo_v2_t info[256];
		unsigned int k = 256;
		if (procs(dev, &k, info))
			return false;
		unsigned int me = (unsigned int)getpid();
		for (unsigned int j = 0; j < k && j < 256; j++)
			if (info[j].pid == me && info[j].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) {
				*out = info[j].usedGpuMemory;
				return true;
			}
		return false;
	}
	return false;
}

/*
 * Charge what the driver holds for this process on a GPU beyond the
 * counted allocations (the CUDA context, modules loaded later, allocation
 * rounding): NVML's figure for our PID less what we counted, at the first
 * allocation and again at most once a second.
 */
#define CTX_REFRESH_MS 1000

static int64_t coarse_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void measure_ctx(cap_slot *s, int idx)
{
	int64_t now = coarse_ms();
	int64_t last = atomic_load_explicit(&g_ctx_ms[idx], memory_order_relaxed);
	if (likely(last && now - last < CTX_REFRESH_MS))
		return;
	if (atomic_load(&s->ctx_state[idx]) == CAP_CTX_UNMEASURED)
		pthread_mutex_lock(&g_mu);
	else if (pthread_mutex_trylock(&g_mu))
		return; /* another thread is measuring */
	if (!atomic_load(&g_ctx_ms[idx]) || now - atomic_load(&g_ctx_ms[idx]) >= CTX_REFRESH_MS) {
		uint64_t total = 0;
		bool known = nvml_my_bytes(g_reg->devs[idx].uuid, &total);
		uint64_t counted = atomic_load(&s->alloc_bytes[idx]);
		if (known || atomic_load(&s->ctx_state[idx]) == CAP_CTX_UNMEASURED)
			cap_set_ctx(g_reg, s, idx, known && total > counted ? total - counted : 0, known);
		atomic_store(&g_ctx_ms[idx], now ? now : 1);
	}
	pthread_mutex_unlock(&g_mu);
}

/* ---- the accounting around one allocation ------------------------------------ */

typedef struct ticket {
	cap_slot *s;
	CUdevice dev;     /* CUDA ordinal */
	int idx;          /* region device */
	uint64_t bytes;
	bool counted;
} ticket;

/* ordinal: the CUDA device as this process numbers it */
static void refused(int ordinal, int idx, uint64_t bytes)
{
	if (atomic_fetch_add(&g_refusals_said, 1) >= 8)
		return;
	char a[32], b[32], c[32];
	say("gpuwise-cap: refused %s on GPU %d: the job uses %s of its %s cap", fmt_gib(a, sizeof a, bytes), ordinal,
	    fmt_gib(b, sizeof b, cap_used(g_reg, idx)), fmt_gib(c, sizeof c, g_reg->limit_bytes));
}

/*
 * Before the real call: 0 and t filled, or the CUresult to return
 * (CUDA_ERROR_OUT_OF_MEMORY whenever there is no usable region).
 */
static CUresult begin(CUdevice d, bool have_dev, uint64_t bytes, ticket *t)
{
	t->counted = false;
	if (attach() != ST_ON)
		return CU_OUT_OF_MEMORY;
	CUresult rc;
	if (!have_dev && (rc = current_device(&d)))
		return rc;
	if ((rc = region_dev(d, &t->idx)))
		return rc;
	t->dev = d;
	if (!(t->s = slot()))
		return CU_OUT_OF_MEMORY;
	measure_ctx(t->s, t->idx);
	if (cap_reserve(g_reg, t->s, t->idx, bytes)) {
		refused(d, t->idx, bytes);
		return CU_OUT_OF_MEMORY;
	}
	t->bytes = bytes;
	t->counted = true;
	return 0;
}

/* After the real call: keep the count (and remember the key) or undo it. */
static void finish(ticket *t, CUresult rc, uint64_t key, int kind)
{
	if (!t->counted)
		return;
	if (rc == CU_OK && t_put(key, kind, t->bytes, t->idx) == 0)
		return;
	cap_unreserve(g_reg, t->s, t->idx, t->bytes);
}

typedef CUresult (*free_fn)(uint64_t);

/* A free: take the entry out first (the address may be handed out again
 * as soon as the driver frees it), put it back if the driver refuses. */
static void forget_after(CUresult rc, const entry *e, bool had)
{
	if (!had)
		return;
	if (rc == CU_OK) {
		cap_slot *s = atomic_load(&g_slot);
		if (s)
			cap_unreserve(g_reg, s, e->dev, e->bytes);
	} else {
		t_put(e->key, e->kind, e->bytes, e->dev);
	}
}

static bool forget_before(uint64_t key, int kind, entry *e)
{
	if (likely(atomic_load_explicit(&g_state, memory_order_relaxed) != ST_ON))
		return false;
	return t_take(key, kind, e);
}

#define REAL(h, type) ((type)real_of(H_##h))
#define NEED_REAL(f)                \
	do {                        \
		if (!(f))           \
			return CU_UNKNOWN; \
	} while (0)

/* ---- the allocation API --------------------------------------------------------- */

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
typedef CUresult (*managed_fn)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*free1_fn)(CUdeviceptr);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*info_fn)(size_t *, size_t *);
typedef CUresult (*total_fn)(size_t *, CUdevice);
typedef CUresult (*proc1_fn)(const char *, void **, int, unsigned long long);
typedef CUresult (*proc2_fn)(const char *, void **, int, unsigned long long, int *);

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	alloc_fn f = REAL(cuMemAlloc_v2, alloc_fn);
	NEED_REAL(f);
	ticket t;
	CUresult rc = begin(0, false, bytes, &t);
	if (rc)
		return rc;
	rc = f(dptr, bytes);
	finish(&t, rc, dptr ? *dptr : 0, K_PTR);
	return rc;
}

/* Counted as width x height first, then as pitch x height once the
 * driver has chosen the pitch. */
EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
	pitch_fn f = REAL(cuMemAllocPitch_v2, pitch_fn);
	NEED_REAL(f);
	ticket t;
	if (height && width > SIZE_MAX / height)
		return CU_OUT_OF_MEMORY;
	CUresult rc = begin(0, false, (uint64_t)width * height, &t);
	if (rc)
		return rc;
	rc = f(dptr, pitch, width, height, elem);
	if (rc == CU_OK && t.counted && pitch && *pitch > width) {
		uint64_t extra = (uint64_t)(*pitch - width) * height;
		if (height && *pitch - width > UINT64_MAX / height)
			extra = UINT64_MAX;
		if (cap_reserve(g_reg, t.s, t.idx, extra)) {
			refused(t.dev, t.idx, extra);
			((free1_fn)real_of(H_cuMemFree_v2))(*dptr);
			cap_unreserve(g_reg, t.s, t.idx, t.bytes);
			return CU_OUT_OF_MEMORY;
		}
		t.bytes += extra;
	}
	finish(&t, rc, dptr ? *dptr : 0, K_PTR);
	return rc;
}

/* Managed memory is counted whole on the current device, where it lives
 * until the driver migrates it. */
EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
	managed_fn f = REAL(cuMemAllocManaged, managed_fn);
	NEED_REAL(f);
	ticket t;
	CUresult rc = begin(0, false, bytes, &t);
	if (rc)
		return rc;
	rc = f(dptr, bytes, flags);
	finish(&t, rc, dptr ? *dptr : 0, K_PTR);
	return rc;
}

static CUresult alloc_async(int h, CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	async_fn f = (async_fn)real_of(h);
	NEED_REAL(f);
	ticket t;
	CUresult rc = begin(0, false, bytes, &t);
	if (rc)
		return rc;
	rc = f(dptr, bytes, s);
	finish(&t, rc, dptr ? *dptr : 0, K_PTR);
	return rc;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return alloc_async(H_cuMemAllocAsync, dptr, bytes, s);
}

EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return alloc_async(H_cuMemAllocAsync_ptsz, dptr, bytes, s);
}

static CUresult alloc_pool(int h, CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	pool_fn f = (pool_fn)real_of(h);
	NEED_REAL(f);
	ticket t;
	CUresult rc = begin(0, false, bytes, &t);
	if (rc)
		return rc;
	rc = f(dptr, bytes, pool, s);
	finish(&t, rc, dptr ? *dptr : 0, K_PTR);
	return rc;
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return alloc_pool(H_cuMemAllocFromPoolAsync, dptr, bytes, pool, s);
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return alloc_pool(H_cuMemAllocFromPoolAsync_ptsz, dptr, bytes, pool, s);
}

/* Virtual memory management: the physical memory is made here (mapping
 * it later costs nothing more), on the device the properties name. */
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t bytes, const CUmemAllocationProp *prop,
			    unsigned long long flags)
{
	create_fn f = REAL(cuMemCreate, create_fn);
	NEED_REAL(f);
	if (!prop || prop->location.type != CU_LOC_DEVICE)
		return f(handle, bytes, prop, flags);
	ticket t;
	CUresult rc = begin(prop->location.id, true, bytes, &t);
	if (rc)
		return rc;
	rc = f(handle, bytes, prop, flags);
	finish(&t, rc, handle ? *handle : 0, K_HANDLE);
	return rc;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	free1_fn f = REAL(cuMemFree_v2, free1_fn);
	NEED_REAL(f);
	entry e;
	bool had = forget_before(p, K_PTR, &e);
	CUresult rc = f(p);
	forget_after(rc, &e, had);
	return rc;
}

static CUresult free_async(int h, CUdeviceptr p, CUstream s)
{
	free_async_fn f = (free_async_fn)real_of(h);
	NEED_REAL(f);
	entry e;
	bool had = forget_before(p, K_PTR, &e);
	CUresult rc = f(p, s);
	forget_after(rc, &e, had);
	return rc;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { return free_async(H_cuMemFreeAsync, p, s); }
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return free_async(H_cuMemFreeAsync_ptsz, p, s); }

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	release_fn f = REAL(cuMemRelease, release_fn);
	NEED_REAL(f);
	entry e;
	bool had = forget_before(h, K_HANDLE, &e);
	CUresult rc = f(h);
	forget_after(rc, &e, had);
	return rc;
}

/* ---- what the job is told about memory ---------------------------------------- */

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* total and free as the job should see them on region device idx. */
static void capped(int idx, uint64_t *free_b, uint64_t *total_b)
{
	uint64_t cap = g_reg->limit_bytes;
	uint64_t used = idx >= 0 ? cap_used(g_reg, idx) : 0;
	*total_b = min_u64(*total_b, cap);
	*free_b = min_u64(*free_b, used < *total_b ? *total_b - used : 0);
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
	info_fn f = REAL(cuMemGetInfo_v2, info_fn);
	NEED_REAL(f);
	CUresult rc = f(free_b, total_b);
	if (rc || !free_b || !total_b || attach() != ST_ON)
		return rc;
	CUdevice d;
	int idx;
	if (current_device(&d) || region_dev(d, &idx))
		idx = -1;
	cap_reclaim(g_reg); /* a crashed sibling's memory shows as free again */
	uint64_t fr = *free_b, to = *total_b;
	capped(idx, &fr, &to);
	*free_b = (size_t)fr;
	*total_b = (size_t)to;
	return rc;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	total_fn f = REAL(cuDeviceTotalMem_v2, total_fn);
	NEED_REAL(f);
	CUresult rc = f(bytes, d);
	if (rc == CU_OK && bytes && attach() == ST_ON && *bytes > g_reg->limit_bytes)
		*bytes = (size_t)g_reg->limit_bytes;
	return rc;
}

/* The region index of an NVML device, -1 when the job has not used it. */
static int nvml_region_dev(nvmlDevice_t dev)
{
	nvml_uuid_fn getuuid = (nvml_uuid_fn)lib_sym(true, "nvmlDeviceGetUUID");
	char s[96];
	unsigned char u[16];
	if (!getuuid || getuuid(dev, s, sizeof s) || !parse_uuid(s, u))
		return -1;
	return cap_dev_find(g_reg, u);
}

EXPORT int nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m)
{
	nvml_mem_fn f = (nvml_mem_fn)real_of(H_nvmlDeviceGetMemoryInfo);
	if (!f)
		return 999; /* NVML_ERROR_UNKNOWN */
	int rc = f(dev, m);
	if (rc || !m || attach() != ST_ON)
		return rc;
	int idx = nvml_region_dev(dev);
	uint64_t fr = m->free, to = m->total;
	capped(idx, &fr, &to);
	m->total = to;
	m->free = fr;
	m->used = to - fr;
	return rc;
}

EXPORT int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m)
{
	nvml_mem_fn f = (nvml_mem_fn)real_of(H_nvmlDeviceGetMemoryInfo_v2);
	if (!f)
		return 999;
	int rc = f(dev, m);
	if (rc || !m || attach() != ST_ON)
		return rc;
	int idx = nvml_region_dev(dev);
	uint64_t fr = m->free, to = m->total;
	capped(idx, &fr, &to);
	m->total = to;
	m->free = fr;
	m->reserved = 0; /* the job's contexts are in used */
	m->used = to - fr;
	return rc;
}

/* ---- cuGetProcAddress ------------------------------------------------------------ */

/*
 * The hook that stands for what the driver returned for base name sym:
 * the variant whose exported address it is, else the one cuda.h's rules
 * pick (_ptsz under per-thread streams, _v2 from CUDA 3.2 or, for
 * cuGetProcAddress itself, 12.0).  -2: a legacy entry point we cannot cap.
 */
static int proc_hook(const char *sym, void *got, int ver, unsigned long long flags)
{
	int cand[4], n = 0;
	for (int i = 0; i < H_COUNT && n < 4; i++)
		if (hooks[i].base && strcmp(hooks[i].base, sym) == 0)
			cand[n++] = i;
	if (!n) {
		/* a versioned name asked for directly ("cuMemAlloc_v2") */
		int exact = hook_find(sym);
		return exact >= 0 && hooks[exact].kind != 'n' ? exact : -1;
	}
	for (int k = 0; k < n; k++) {
		void *p = lib_sym(false, hooks[cand[k]].name);
		if (p && p == got)
			return cand[k];
	}
	int plain = -1, v2 = -1, ptsz = -1;
	for (int k = 0; k < n; k++) {
		char kind = hooks[cand[k]].kind;
		if (kind == 'p')
			plain = cand[k];
		else if (kind == 't')
			ptsz = cand[k];
		else
			v2 = cand[k];
	}
	if (ptsz >= 0 && (flags & CU_PROC_PTDS))
		return ptsz;
	if (v2 >= 0) {
		int from = hooks[v2].kind == 'w' ? 12000 : 3020;
		if (ver >= from)
			return v2;
		return plain >= 0 ? plain : -2;
	}
	return plain;
}

static CUresult proc_filter(CUresult rc, const char *sym, void **pfn, int ver, unsigned long long flags, int *status)
{
	if (rc != CU_OK || !sym || !pfn || !*pfn)
		return rc;
	int i = proc_hook(sym, *pfn, ver, flags);
	if (i == -2) {
		*pfn = NULL;
		if (status)
			*status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
		return CU_NOT_FOUND;
	}
	if (i >= 0) {
		note_real(i, *pfn);
		*pfn = hooks[i].fn;
	}
	return rc;
}

EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, unsigned long long flags)
{
	proc1_fn f = REAL(cuGetProcAddress, proc1_fn);
	NEED_REAL(f);
	return proc_filter(f(sym, pfn, ver, flags), sym, pfn, ver, flags, NULL);
}

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, unsigned long long flags, int *status)
{
	proc2_fn f = REAL(cuGetProcAddress_v2, proc2_fn);
	NEED_REAL(f);
	return proc_filter(f(sym, pfn, ver, flags, status), sym, pfn, ver, flags, status);
}

/* The hook table, after the definitions it points at. */
static hook hooks[H_COUNT] = {
#define HOOK_INIT(n, b, k) [H_##n] = {.name = #n, .base = b, .kind = k, .fn = (void *)n},
	HOOKS(HOOK_INIT)
#undef HOOK_INIT
};

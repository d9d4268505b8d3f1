/*
 * captest: a CUDA driver API client for libgpuwise-cap's tests.  It reaches
 * the (fake) driver the way real programs do, chosen by --via:
 *   link   calls the symbols it was linked with (-lcuda)
 *   dlsym  dlopen(GPUWISE_CUDA_LIB) + dlsym, as PyTorch's driver shim does
 *   proc   cuGetProcAddress, as the CUDA runtime of 11.3-11.8 does
 *   proc2  cuGetProcAddress_v2, as the CUDA 12 runtime (cudaMalloc) does
 * then runs the commands of its argument list in order, one line of output
 * each, so a shell test can read what the job saw.
 *
 *   alloc SIZE | pitch W H | managed SIZE | async SIZE | pool SIZE |
 *   create SIZE (cuMemCreate) | free (the last pointer or handle) | freeall |
 *   info | total | nvml | hold (until stdin closes) | sleep MS |
 *   threads N ITERATIONS CAP (N threads allocate and free at once; each
 *   checks that what the job holds never passes CAP)
 *
 * Exit status: 0, 1 when a command failed in a way the test did not ask
 * for (bad usage, a thread seeing the cap passed), 2 usage.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef struct {
	int type, requestedHandleTypes;
	struct { int type, id; } location;
	void *win32HandleMetaData;
	struct { unsigned char compressionType, gpuDirectRDMACapable; unsigned short usage; unsigned char reserved[4]; } allocFlags;
} CUmemAllocationProp;

/* The functions used, as the real cuda.h declares them. */
CUresult cuInit(unsigned int);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuDeviceGetDefaultMemPool(void **, CUdevice);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemAllocPitch_v2(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
CUresult cuMemAllocManaged(CUdeviceptr *, size_t, unsigned int);
CUresult cuMemAllocAsync(CUdeviceptr *, size_t, void *);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *, size_t, void *, void *);
CUresult cuMemCreate(unsigned long long *, size_t, const CUmemAllocationProp *, unsigned long long);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemFreeAsync(CUdeviceptr, void *);
CUresult cuMemRelease(unsigned long long);
CUresult cuMemGetInfo_v2(size_t *, size_t *);
CUresult cuDeviceTotalMem_v2(size_t *, CUdevice);
CUresult cuGetProcAddress(const char *, void **, int, unsigned long long);
CUresult cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);

static struct {
	CUresult (*init)(unsigned int);
	CUresult (*dev_get)(CUdevice *, int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set_current)(CUcontext);
	CUresult (*default_pool)(void **, CUdevice);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*async)(CUdeviceptr *, size_t, void *);
	CUresult (*from_pool)(CUdeviceptr *, size_t, void *, void *);
	CUresult (*create)(unsigned long long *, size_t, const CUmemAllocationProp *, unsigned long long);
	CUresult (*free)(CUdeviceptr);
	CUresult (*free_async)(CUdeviceptr, void *);
	CUresult (*release)(unsigned long long);
	CUresult (*info)(size_t *, size_t *);
	CUresult (*total)(size_t *, CUdevice);
} cu;

static void *lib;
static int via; /* 0 link, 1 dlsym, 2 proc, 3 proc2 */
static CUresult (*proc1)(const char *, void **, int, unsigned long long);
static CUresult (*proc2)(const char *, void **, int, unsigned long long, int *);

/* name_v for dlsym, base for cuGetProcAddress (CUDA 12.0 asks, as cudart 12 does) */
static void *get(const char *sym, const char *base, void *linked)
{
	void *p = NULL;
	switch (via) {
	case 0: return linked;
	case 1: p = dlsym(lib, sym); break;
	case 2:
		if (proc1(base, &p, 12000, 0))
			p = NULL;
		break;
	default: {
		int st = -1;
		if (proc2(base, &p, 12000, 0, &st) || st != 0)
			p = NULL;
	}
	}
	if (!p) {
		fprintf(stderr, "captest: cannot get %s\n", sym);
		exit(1);
	}
	return p;
}

#define GET(field, sym, base) cu.field = get(#sym, base, (void *)sym)

static void load(void)
{
	if (via) {
		const char *path = getenv("GPUWISE_CUDA_LIB");
		lib = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			fprintf(stderr, "captest: %s\n", dlerror());
			exit(1);
		}
		proc1 = dlsym(lib, "cuGetProcAddress");
		proc2 = dlsym(lib, "cuGetProcAddress_v2");
		/* then, as the CUDA runtime does, the entry point through itself */
		void *p = NULL;
		int st = -1;
		if (via == 2 && (proc1("cuGetProcAddress", &p, 11030, 0) || !p))
			exit(fprintf(stderr, "captest: cuGetProcAddress(cuGetProcAddress) failed\n") ? 1 : 1);
		if (via == 3 && (proc2("cuGetProcAddress", &p, 12000, 0, &st) || st || !p))
			exit(fprintf(stderr, "captest: cuGetProcAddress_v2(cuGetProcAddress) failed\n") ? 1 : 1);
		if (via == 2)
			proc1 = (CUresult(*)(const char *, void **, int, unsigned long long))p;
		if (via == 3)
			proc2 = (CUresult(*)(const char *, void **, int, unsigned long long, int *))p;
	}
	GET(init, cuInit, "cuInit");
	GET(dev_get, cuDeviceGet, "cuDeviceGet");
	GET(retain, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	GET(set_current, cuCtxSetCurrent, "cuCtxSetCurrent");
	GET(default_pool, cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool");
	GET(alloc, cuMemAlloc_v2, "cuMemAlloc");
	GET(pitch, cuMemAllocPitch_v2, "cuMemAllocPitch");
	GET(managed, cuMemAllocManaged, "cuMemAllocManaged");
	GET(async, cuMemAllocAsync, "cuMemAllocAsync");
	GET(from_pool, cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync");
	GET(create, cuMemCreate, "cuMemCreate");
	GET(free, cuMemFree_v2, "cuMemFree");
	GET(free_async, cuMemFreeAsync, "cuMemFreeAsync");
	GET(release, cuMemRelease, "cuMemRelease");
	GET(info, cuMemGetInfo_v2, "cuMemGetInfo");
	GET(total, cuDeviceTotalMem_v2, "cuDeviceTotalMem");
}

static int dev_ordinal;
static CUcontext ctx;

static void make_current(void)
{
	if (cu.set_current(ctx)) {
		fprintf(stderr, "captest: cuCtxSetCurrent failed\n");
		exit(1);
	}
}

static unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	if (*end == 'K')
		v <<= 10, end++;
	else if (*end == 'M')
		v <<= 20, end++;
	else if (*end == 'G')
		v <<= 30, end++;
	if (*end) {
		fprintf(stderr, "captest: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

/* what is held: pointers (kind 0) and VMM handles (kind 1), a stack */
static struct held { unsigned long long key; int kind; } held[4096];
static int n_held;

static void push(unsigned long long key, int kind)
{
	if (n_held < 4096)
		held[n_held++] = (struct held){key, kind};
}

static CUresult pop_free(void)
{
	if (!n_held)
		return -1;
	struct held h = held[--n_held];
	return h.kind ? cu.release(h.key) : cu.free(h.key);
}

/* ---- threads ---- */
static atomic_ullong outstanding, max_outstanding, n_ok, n_refused, n_bad;
static unsigned long long t_cap, t_iters;

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 2654435761u;
	make_current();
	CUdeviceptr mine[8];
	unsigned long long sz[8];
	int n = 0;
	for (unsigned long long i = 0; i < t_iters; i++) {
		if (n == 8 || (n && rand_r(&seed) % 3 == 0)) {
			int k = (int)(rand_r(&seed) % (unsigned)n);
			/* count it gone before the driver may hand the memory out again */
			atomic_fetch_sub(&outstanding, sz[k]);
			if (cu.free(mine[k]))
				atomic_fetch_add(&n_bad, 1);
			mine[k] = mine[n - 1];
			sz[k] = sz[--n];
			continue;
		}
		unsigned long long b = ((unsigned long long)(rand_r(&seed) % 64) + 1) << 20;
		CUdeviceptr p;
		CUresult rc = cu.alloc(&p, b);
		if (rc == 2) {
			atomic_fetch_add(&n_refused, 1);
			continue;
		}
		if (rc) {
			atomic_fetch_add(&n_bad, 1);
			continue;
		}
		unsigned long long now = atomic_fetch_add(&outstanding, b) + b;
		unsigned long long m = atomic_load(&max_outstanding);
		while (now > m && !atomic_compare_exchange_weak(&max_outstanding, &m, now))
			;
		atomic_fetch_add(&n_ok, 1);
		mine[n] = p;
		sz[n++] = b;
	}
	while (n) {
		atomic_fetch_sub(&outstanding, sz[n - 1]);
		if (cu.free(mine[--n]))
			atomic_fetch_add(&n_bad, 1);
	}
	return NULL;
}

static int nvml_cmd(void)
{
	const char *path = getenv("GPUWISE_NVML_LIB");
	void *h = dlopen(path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return printf("nvml unavailable\n"), 1;
	int (*init)(void) = dlsym(h, "nvmlInit_v2");
	int (*byidx)(unsigned int, void **) = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	int (*mem1)(void *, unsigned long long *) = dlsym(h, "nvmlDeviceGetMemoryInfo");
	int (*mem2)(void *, void *) = dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
	void *dev;
	if (!init || !byidx || !mem1 || !mem2 || init() || byidx(0, &dev))
		return printf("nvml failed\n"), 1;
	unsigned long long m[3];
	int rc = mem1(dev, m);
	printf("nvml rc=%d total=%llu free=%llu used=%llu\n", rc, m[0], m[1], m[2]);
	struct { unsigned int version; unsigned long long total, reserved, free, used; } m2;
	m2.version = (unsigned int)sizeof m2 | 2u << 24;
	rc = mem2(dev, &m2);
	printf("nvml_v2 rc=%d total=%llu free=%llu used=%llu\n", rc, m2.total, m2.free, m2.used);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc)
			return 2;
		if (strcmp(argv[i], "--via") == 0)
			via = strcmp(argv[i + 1], "link") == 0 ? 0 : strcmp(argv[i + 1], "dlsym") == 0 ? 1
				: strcmp(argv[i + 1], "proc") == 0 ? 2 : strcmp(argv[i + 1], "proc2") == 0 ? 3 : -1;
		else if (strcmp(argv[i], "--dev") == 0)
			dev_ordinal = (int)num(argv[i + 1]);
		else
			via = -1;
		if (via < 0)
			return fprintf(stderr, "usage: captest [--via link|dlsym|proc|proc2] [--dev N] CMD...\n"), 2;
	}
	load();
	CUdevice d;
	if (cu.init(0) || cu.dev_get(&d, dev_ordinal) || cu.retain(&ctx, d)) {
		fprintf(stderr, "captest: no device\n");
		return 1;
	}
	make_current();
	int status = 0;
	for (; i < argc; i++) {
		const char *c = argv[i];
		CUdeviceptr p = 0;
		CUresult rc;
		if (strcmp(c, "alloc") == 0 && i + 1 < argc) {
			const char *a = argv[++i];
			rc = cu.alloc(&p, num(a));
			printf("alloc %s rc=%d\n", a, rc);
			if (!rc)
				push(p, 0);
		} else if (strcmp(c, "managed") == 0 && i + 1 < argc) {
			const char *a = argv[++i];
			rc = cu.managed(&p, num(a), 1);
			printf("managed %s rc=%d\n", a, rc);
			if (!rc)
				push(p, 0);
		} else if (strcmp(c, "async") == 0 && i + 1 < argc) {
			const char *a = argv[++i];
			rc = cu.async(&p, num(a), NULL);
			printf("async %s rc=%d\n", a, rc);
			if (!rc)
				push(p, 0);
		} else if (strcmp(c, "pool") == 0 && i + 1 < argc) {
			const char *a = argv[++i];
			void *pool;
			rc = cu.default_pool(&pool, d);
			if (!rc)
				rc = cu.from_pool(&p, num(a), pool, NULL);
			printf("pool %s rc=%d\n", a, rc);
			if (!rc)
				push(p, 0);
		} else if (strcmp(c, "pitch") == 0 && i + 2 < argc) {
			const char *w = argv[++i], *h = argv[++i];
			size_t pitch = 0;
			rc = cu.pitch(&p, &pitch, num(w), num(h), 4);
			printf("pitch %s %s rc=%d pitch=%zu\n", w, h, rc, pitch);
			if (!rc)
				push(p, 0);
		} else if (strcmp(c, "create") == 0 && i + 1 < argc) {
			const char *a = argv[++i];
			CUmemAllocationProp prop;
			memset(&prop, 0, sizeof prop);
			prop.type = 1;          /* CU_MEM_ALLOCATION_TYPE_PINNED */
			prop.location.type = 1; /* CU_MEM_LOCATION_TYPE_DEVICE */
			prop.location.id = d;
			unsigned long long h = 0;
			rc = cu.create(&h, num(a), &prop, 0);
			printf("create %s rc=%d\n", a, rc);
			if (!rc)
				push(h, 1);
		} else if (strcmp(c, "free") == 0) {
			printf("free rc=%d\n", pop_free());
		} else if (strcmp(c, "freeall") == 0) {
			int bad = 0;
			while (n_held)
				bad |= pop_free() != 0;
			printf("freeall %s\n", bad ? "failed" : "ok");
		} else if (strcmp(c, "info") == 0) {
			size_t fr = 0, to = 0;
			rc = cu.info(&fr, &to);
			printf("info rc=%d free=%zu total=%zu\n", rc, fr, to);
		} else if (strcmp(c, "total") == 0) {
			size_t to = 0;
			rc = cu.total(&to, d);
			printf("total rc=%d total=%zu\n", rc, to);
		} else if (strcmp(c, "sleep") == 0 && i + 1 < argc) {
			usleep((useconds_t)num(argv[++i]) * 1000);
		} else if (strcmp(c, "nvml") == 0) {
			status |= nvml_cmd();
		} else if (strcmp(c, "hold") == 0) {
			printf("holding\n");
			char buf[64];
			while (read(0, buf, sizeof buf) > 0)
				;
		} else if (strcmp(c, "threads") == 0 && i + 3 < argc) {
			int n = (int)num(argv[++i]);
			t_iters = num(argv[++i]);
			t_cap = num(argv[++i]);
			pthread_t th[64];
			if (n < 1 || n > 64)
				return 2;
			for (int k = 0; k < n; k++)
				pthread_create(&th[k], NULL, worker, (void *)(uintptr_t)(k + 1));
			for (int k = 0; k < n; k++)
				pthread_join(th[k], NULL);
			unsigned long long mx = atomic_load(&max_outstanding);
			printf("threads %d ok=%llu refused=%llu errors=%llu max=%llu cap=%llu %s\n", n,
			       (unsigned long long)atomic_load(&n_ok), (unsigned long long)atomic_load(&n_refused),
			       (unsigned long long)atomic_load(&n_bad), mx, t_cap, mx <= t_cap ? "within" : "PASSED");
			if (mx > t_cap || atomic_load(&n_bad))
				status = 1;
		} else {
			fprintf(stderr, "captest: bad command '%s'\n", c);
			return 2;
		}
	}
	return status;
}

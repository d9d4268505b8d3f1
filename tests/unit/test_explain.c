/*
 * Unit tests for doctor/explain.c and doctor/compat.c: OOM parsing, the
 * fragmentation rule, captures, ranking, version and architecture rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor/doctor.h"
#include "kb/kb.h"

/* sizes in messages are rounded: within one byte of the exact product */
#define assert_near(got, want) assert_in_range((got), (int64_t)(want) - 1, (int64_t)(want) + 1)

static void test_oom_new_format(void **state)
{
	(void)state;
	oom_info o;
	const char *msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a "
			  "total capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, "
			  "this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated "
			  "by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated.";
	assert_int_equal(explain_parse_oom(msg, &o), 0);
	assert_false(o.old_format);
	assert_int_equal(o.gpu, 0);
	assert_near(o.requested, 22.78 * GiB);
	assert_near(o.total, 31.47 * GiB);
	assert_near(o.free, 12.73 * GiB);
	assert_near(o.process, 18.73 * GiB);
	assert_near(o.allocated, 9.08 * GiB);
	assert_near(o.reserved_unalloc, 9.35 * GiB);
	/* 12.73 + 9.35 = 22.08 < 22.78: a real shortage of about 0.70 GiB */
	assert_int_equal(o.verdict, OOM_SHORTAGE);
	assert_true(o.shortfall > (int64_t)(0.69 * GiB) && o.shortfall < (int64_t)(0.71 * GiB));
	assert_false(o.expandable_helps);
}

static void test_oom_processes_and_too_big(void **state)
{
	(void)state;
	oom_info o;
	const char *msg = "CUDA out of memory. Tried to allocate 124.68 GiB. GPU 0 has a total capacity of 95.22 "
			  "GiB of which 51.23 GiB is free. Process 608946 has 14.91 GiB memory in use. Process "
			  "734147 has 29.07 GiB memory in use. ...";
	assert_int_equal(explain_parse_oom(msg, &o), 0);
	assert_int_equal(o.n_others, 2);
	assert_int_equal(o.others[0].pid, 608946);
	assert_int_equal(o.others[1].pid, 734147);
	assert_near(o.others[1].bytes, 29.07 * GiB);
	assert_int_equal(o.verdict, OOM_TOO_BIG);
}

static void test_oom_old_format(void **state)
{
	(void)state;
	oom_info o;
	const char *msg = "RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total "
			  "capacity; 8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)";
	assert_int_equal(explain_parse_oom(msg, &o), 0);
	assert_true(o.old_format);
	assert_near(o.requested, 12.5 * MiB);
	assert_near(o.total, 10.92 * GiB);
	assert_near(o.allocated, 8.57 * MiB);
	assert_near(o.free, 9.28 * GiB);
	assert_near(o.reserved, 4.68 * MiB);
	assert_int_equal(o.verdict, OOM_NOT_SHORTAGE);

	const char *msg2 = "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.79 GiB total capacity; "
			   "3.00 GiB already allocated; 1.00 GiB free; 5.50 GiB reserved in total by PyTorch)";
	assert_int_equal(explain_parse_oom(msg2, &o), 0);
	assert_near(o.reserved_unalloc, 2.5 * GiB);
	assert_int_equal(o.verdict, OOM_FRAGMENTATION);
	assert_true(o.expandable_helps);

	assert_int_equal(explain_parse_oom("segmentation fault", &o), GW_ENOTFOUND);
}

static void test_cuda_version_decode(void **state)
{
	(void)state;
	char b[16];
	assert_string_equal(cuda_version_decode(11040, b, sizeof b), "11.4");
	assert_string_equal(cuda_version_decode(12080, b, sizeof b), "12.8");
	assert_string_equal(cuda_version_decode(13000, b, sizeof b), "13.0");
	assert_string_equal(cuda_version_decode(0, b, sizeof b), "unknown");
}

static void test_versions(void **state)
{
	(void)state;
	assert_true(version_cmp("570.26", "570.124.06") < 0);
	assert_true(version_cmp("2.10", "2.9") > 0);
	assert_int_equal(version_cmp("12.8", "12.8"), 0);
	assert_true(version_cmp("535.183.01", "570") < 0);
	char d[32];
	compat_driver_min("12.8", d, sizeof d);
	assert_string_equal(d, "570.26");
	compat_driver_min("12.8.93", d, sizeof d); /* a patch release: its minor's GA */
	assert_string_equal(d, "570.26");
	compat_driver_min("13.0", d, sizeof d);
	assert_string_equal(d, "580.65.06");
	compat_minor_floor(12, d, sizeof d);
	assert_string_equal(d, "525");
}

static void test_arch_rules(void **state)
{
	(void)state;
	bool ptx;
	const char *cu124 = "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90";
	assert_false(compat_arch_covers(cu124, 12, 0, &ptx));     /* RTX 50 */
	assert_true(compat_arch_covers(cu124, 8, 9, &ptx));       /* Ada runs sm_86 cubins */
	assert_false(ptx);
	assert_false(compat_arch_covers(cu124, 8, 7, &ptx));      /* Orin is not binary compatible */
	assert_true(compat_arch_covers("sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", 12, 0, &ptx));
	assert_true(compat_arch_covers("sm_80 compute_80", 9, 0, &ptx)); /* PTX JIT */
	assert_true(ptx);
	assert_false(compat_arch_covers("sm_90a", 9, 1, &ptx));   /* arch-specific: exact only */
	assert_false(compat_arch_covers("sm_50 sm_60", 3, 7, &ptx));
}

static void test_pick_torch(void **state)
{
	(void)state;
	torch_pick p;
	/* no driver known: the build that needs the oldest driver */
	assert_int_equal(compat_pick_torch(12, 0, NULL, &p, NULL), 0);
	assert_true(p.found);
	assert_string_equal(p.variant, "cu128");
	assert_string_equal(p.pip_line, "pip install --force-reinstall torch~=2.12.0 torchvision~=0.27.0 torchaudio~=2.12.0 --index-url https://download.pytorch.org/whl/cu128");
	/* driver 570: cu128 is the newest it runs */
	assert_int_equal(compat_pick_torch(12, 0, "570.133.07", &p, NULL), 0);
	assert_true(p.found);
	assert_string_equal(p.variant, "cu128");
	/* driver 580.82: cu130 */
	assert_int_equal(compat_pick_torch(12, 0, "580.82.07", &p, NULL), 0);
	assert_string_equal(p.variant, "cu130");
	/* driver 535: too old for any sm_120 build; upgrade to 570.26 */
	assert_int_equal(compat_pick_torch(12, 0, "535.183.01", &p, NULL), 0);
	assert_false(p.found);
	assert_true(p.driver_too_old);
	assert_string_equal(p.need_driver, "570.26");
	/* Pascal: only cu126-or-older builds */
	assert_int_equal(compat_pick_torch(6, 1, "580.82.07", &p, NULL), 0);
	assert_true(p.found);
	assert_string_equal(p.variant, "cu126");
}

static void test_match_rank_and_captures(void **state)
{
	(void)state;
	explain_match_t *m;
	size_t n;
	gw_error err;
	const char *msg = "docker: Error response from daemon: ... stderr: nvidia-container-cli: initialization "
			  "error: nvml error: driver not loaded: unknown.";
	assert_int_equal(explain_match(msg, &m, &n, &err), 0);
	assert_true(n >= 2);
	assert_string_equal(m[0].id, "container-toolkit");
	assert_string_equal(explain_cap(&m[0], "stage"), "initialization");
	assert_string_equal(m[1].id, "no-driver");
	explain_matches_free(m, n);

	assert_int_equal(explain_match("Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: "
				       "cannot open shared object file: No such file or directory", &m, &n, &err), 0);
	assert_true(n >= 1);
	assert_string_equal(m[0].id, "library-missing");
	assert_string_equal(explain_cap(&m[0], "lib"), "libcuda.so");
	explain_matches_free(m, n);

	assert_int_equal(explain_match("NVRM: Xid (PCI:0000:0c:00): 31, pid=11461, Ch 00000053", &m, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(explain_cap(&m[0], "pci"), "0000:0c:00");
	assert_string_equal(explain_cap(&m[0], "dcgm_severity"), "warn");
	assert_non_null(strstr(m[0].title, "page fault"));
	explain_matches_free(m, n);

	assert_int_equal(explain_match("all good here", &m, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_null(m);
}

static void test_bad_table(void **state)
{
	(void)state;
	/* a data directory whose errors.tsv has a bad regex fails cleanly */
	char dir[] = "/tmp/gw-explain-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = xasprintf("%s/errors.tsv", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("id\tpriority\tregex\ttitle\tcauses\tfixes\tsource\nx\t1\t(unclosed\tt\tc\tf\ts\n", f);
	fclose(f);
	explain_release();
	kb_set_data_dir(dir);
	explain_match_t *m;
	size_t n;
	gw_error err = {0};
	assert_int_not_equal(explain_match("anything", &m, &n, &err), 0);
	assert_non_null(strstr(err.msg, "bad regex"));
	explain_release();
	kb_set_data_dir(NULL);
	remove(path);
	rmdir(dir);
	free(path);
}

static int teardown(void **state)
{
	(void)state;
	explain_release();
	kb_release_all();
	return 0;
}

/* The Itanium names of the symbols users meet in extension import errors. */
static void test_demangle(void **state)
{
	(void)state;
	static const struct {
		const char *sym, *want, *lib;
	} cases[] = {
		{"_ZN3c104cuda9SetDeviceEi", "c10::cuda::SetDevice", "PyTorch (libc10)"},
		{"_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
		 "c10::Error::Error", "PyTorch (libc10)"},
		{"_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEE",
		 "at::_ops::zeros::call", "PyTorch (ATen, libtorch_cpu/libtorch_cuda)"},
		{"_ZN3c104cuda20CUDACachingAllocator9allocatorE", "c10::cuda::CUDACachingAllocator::allocator",
		 "PyTorch (libc10)"},
		{"_ZNK3c1010TensorImpl4sizeEl", "c10::TensorImpl::size", "PyTorch (libc10)"},
		{"_ZN5torch3jit6tracer9getTracerEv", "torch::jit::tracer::getTracer", "PyTorch (libtorch)"},
		{"_Z16THPVariable_WrapN2at10TensorBaseE", "THPVariable_Wrap", NULL},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector::push_back", "the C++ standard library (libstdc++)"},
		{"_ZN3c1011StorageImplD2Ev", "c10::StorageImpl::~StorageImpl", "PyTorch (libc10)"},
		{"_ZTVN3c1011StorageImplE", "vtable for c10::StorageImpl", "PyTorch (libc10)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *d = explain_demangle(cases[i].sym);
		assert_non_null(d);
		assert_string_equal(d, cases[i].want);
		const char *lib = explain_symbol_library(d);
		if (cases[i].lib)
			assert_string_equal(lib, cases[i].lib);
		else
			assert_null(lib);
		free(d);
	}
	/* not mangled, truncated or hostile: NULL, never a crash */
	static const char *const bad[] = {"cudaMalloc", "_Z", "_ZN", "_ZN99999c10E", "_ZN3c1", "_ZNS9_E", "_ZNS_E",
					  "_ZN4abcdIIIIIIIII", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *d = explain_demangle(bad[i]);
		if (d && i < 3)
			fail_msg("'%s' demangled to '%s'", bad[i], d);
		free(d);
	}
	assert_null(explain_demangle(NULL));
}

/* Does some match of the text carry catalog row (family, name)? */
static bool explains_row(const char *text, const char *family, const char *name, long code)
{
	explain_match_t *m;
	size_t n;
	assert_int_equal(explain_match(text, &m, &n, NULL), 0);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++)
		for (size_t k = 0; k < m[i].n_catalog; k++)
			if (!strcmp(m[i].catalog[k].family, family) && !strcmp(m[i].catalog[k].name, name) &&
			    m[i].catalog[k].code == code && *m[i].catalog[k].meaning)
				found = true;
	explain_matches_free(m, n);
	return found;
}

/*
 * Catalog coverage: every status code of data/error-catalog.tsv (every
 * cudaError_t and CUresult name among them) and every Xid of data/xid.tsv
 * is explained by its own row when a message names it.
 */
static void test_catalog_coverage(void **state)
{
	(void)state;
	const kb_table *t = kb_get_table("error-catalog", NULL);
	assert_non_null(t);
	long cf = kb_col(t, "family"), cn = kb_col(t, "name"), cc = kb_col(t, "code");
	size_t runtime = 0, driver = 0, rows = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		const char *family = kb_cell(t, r, cf), *name = kb_cell(t, r, cn);
		long code = atol(kb_cell(t, r, cc));
		assert_true(*kb_cell(t, r, kb_col(t, "source")));
		if (code == 0)
			continue; /* success codes are not errors */
		char msg[256];
		snprintf(msg, sizeof msg, "RuntimeError: failed with %s at line 12", name);
		if (!explains_row(msg, family, name, code))
			fail_msg("%s (%s %ld) is not explained by its catalog row", name, family, code);
		runtime += !strcmp(family, "cuda-runtime");
		driver += !strcmp(family, "cuda-driver");
		rows++;
	}
	/* CUDA 12.9: 133 cudaError_t values and 100 CUresult values (less cudaSuccess, CUDA_SUCCESS) */
	assert_true(runtime >= 130);
	assert_true(driver >= 95);
	const kb_table *x = kb_get_table("xid", NULL);
	assert_non_null(x);
	size_t nx = 0;
	bool have44 = false;
	for (size_t r = 0; r < x->nrows; r++) {
		long v = atol(kb_cell(x, r, kb_col(x, "xid")));
		char msg[160], name[32];
		snprintf(msg, sizeof msg, "[ 12.5] NVRM: Xid (PCI:0000:01:00): %ld, pid=4242, name=python3, Ch 00000008", v);
		snprintf(name, sizeof name, "Xid %ld", v);
		if (!explains_row(msg, "xid", name, v))
			fail_msg("Xid %ld is not explained by its row", v);
		have44 |= v == 44;
		nx++;
	}
	assert_true(have44);
	assert_true(nx >= 100);
	print_message("# catalog coverage: %zu status codes (%zu runtime, %zu driver API) and %zu Xids explained by their rows\n",
		      rows, runtime, driver, nx);
}

/* A wrapped error is explained by its innermost cause. */
static void test_innermost(void **state)
{
	(void)state;
	explain_match_t *m;
	size_t n;
	assert_int_equal(explain_match("torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:93, unhandled cuda "
				       "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9\n"
				       "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
				       "Cuda failure 999 'unknown error'", &m, &n, NULL), 0);
	assert_true(n >= 2);
	assert_string_equal(m[0].id, "cuda-unknown-error");
	assert_string_equal(m[0].catalog[0].name, "cudaErrorUnknown");
	assert_int_equal(m[0].catalog[0].code, 999);
	explain_matches_free(m, n);
	/* cuBLAS around a CUDA out-of-memory */
	assert_int_equal(explain_match("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle); "
				       "CUDA error: out of memory", &m, &n, NULL), 0);
	assert_string_equal(m[0].id, "cuda-oom");
	explain_matches_free(m, n);
	/* one layer only: the wrapper's own diagnosis */
	assert_int_equal(explain_match("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm", &m,
				       &n, NULL), 0);
	assert_string_equal(m[0].id, "cublas-error");
	assert_string_equal(m[0].catalog[0].name, "CUBLAS_STATUS_EXECUTION_FAILED");
	explain_matches_free(m, n);
	/* numbered forms */
	assert_int_equal(explain_match("RuntimeError: cusolver error: 7, when calling `cusolverDnCreate(handle)`", &m, &n,
				       NULL), 0);
	assert_string_equal(m[0].id, "cusolver-error");
	assert_string_equal(m[0].catalog[0].name, "CUSOLVER_STATUS_INTERNAL_ERROR");
	explain_matches_free(m, n);
	/* a CUDA version is not an error number */
	assert_int_equal(explain_match("built with CUDA error 12.1 toolkit", &m, &n, NULL), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(m[i].n_catalog, 0);
	explain_matches_free(m, n);
}

/* Issue 31: the tokens retrieval scores, the platform a message names, and the index. */
static void test_retrieval(void **state)
{
	(void)state;
	const char *msg = "RuntimeError: CUDA_ERROR_NO_DEVICE on gfx1150 and sm_120 at 0x7ffd1234abcd, 4096 MiB\\n找不到指定的模块";
	char *t = explain_tokens(msg, strlen(msg));
	/* the enum whole and in parts; arch codes and their family; numbers as #; no address; CJK bigrams */
	assert_non_null(strstr(t, "cuda_error_no_device"));
	assert_non_null(strstr(t, " device"));
	assert_non_null(strstr(t, "gfx1150 gfx#"));
	assert_non_null(strstr(t, "sm_120 sm_#"));
	assert_non_null(strstr(t, " # mib"));
	assert_null(strstr(t, "7ffd"));
	assert_null(strstr(t, " the "));
	assert_non_null(strstr(t, "找不 不到 到指"));
	/* the literal \n of a JSON-escaped log separates words */
	assert_null(strstr(t, "n找"));
	free(t);
	assert_int_equal(explain_message_platform("C:\\Users\\me\\torch\\lib", 20), EXPLAIN_PLATFORM_WINDOWS);
	assert_int_equal(explain_message_platform("/usr/lib/wsl/lib/libcuda.so.1", 29), EXPLAIN_PLATFORM_WSL);
	assert_int_equal(explain_message_platform("/Users/me/x.dylib", 17), EXPLAIN_PLATFORM_MACOS);
	assert_int_equal(explain_message_platform("/home/me/x.so", 13), EXPLAIN_PLATFORM_UNKNOWN);
	/* the embedded corpus: every row's diagnosis is a known id; a corpus message finds itself */
	size_t nd = 0, n = explain_corpus_size(&nd);
	if (n == 0)
		return; /* a build without the corpus tables */
	assert_true(nd >= 10);
	explain_hit h[3];
	const char *q = "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
			"initializing the engine.";
	size_t k = explain_retrieve(q, strlen(q), NULL, h, 3);
	assert_true(k >= 1);
	assert_string_equal(h[0].diagnosis, "vllm-gpu-memory-utilization");
	assert_true(h[0].accepted && h[0].confidence > 0.5 && h[0].confidence <= 1.0);
	for (size_t i = 1; i < k; i++) {
		/* best first by vote; a vote sums up to three examples' score x confidence, the best one's among them */
		assert_true(h[i - 1].rank >= h[i].rank);
		assert_true(h[i].rank >= h[i].score * h[i].confidence - 1e-9);
		assert_true(h[i].rank <= 3 * h[0].rank + 1e-9);
		assert_true(strcmp(h[i].diagnosis, h[i - 1].diagnosis) != 0);
	}
	/* a non-GPU error is not accepted */
	q = "ModuleNotFoundError: No module named 'requests'";
	k = explain_retrieve(q, strlen(q), NULL, h, 1);
	assert_true(k == 0 || !h[0].accepted);
	/* a 64 KiB paste reads only the tail */
	char *big = malloc(65536 + 200);
	memset(big, 'x', 65536);
	strcpy(big + 65536, " No available memory for the cache blocks. Try increasing gpu_memory_utilization");
	k = explain_retrieve(big, strlen(big), NULL, h, 1);
	assert_true(k == 1 && !strcmp(h[0].diagnosis, "vllm-gpu-memory-utilization"));
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_new_format),
		cmocka_unit_test(test_oom_processes_and_too_big),
		cmocka_unit_test(test_oom_old_format),
		cmocka_unit_test(test_cuda_version_decode),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_arch_rules),
		cmocka_unit_test(test_pick_torch),
		cmocka_unit_test(test_match_rank_and_captures),
		cmocka_unit_test(test_bad_table),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_catalog_coverage),
		cmocka_unit_test(test_innermost),
		cmocka_unit_test(test_retrieval),
	};
	int rc = cmocka_run_group_tests(tests, NULL, teardown);
	return rc;
}

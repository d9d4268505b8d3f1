/*
 * Unit tests for doctor/checks.c over hand-built hardware snapshots and
 * stack descriptions: one test per check, including the RTX 50 rule, the
 * driver-too-old rule, the nvcc PATH order and the hybrid laptop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doctor/doctor.h"
#include "hw/hw.h"
#include "kb/kb.h"
#include "stack/stack.h"

static hw_val V(int64_t v)
{
	return (hw_val){v, HW_OK, 0};
}

static hw_val NA(void)
{
	return (hw_val){0, HW_NOT_SUPPORTED, 3};
}

/* Every value field not supported, like a GPU that answers nothing. */
static void gpu_blank(hw_gpu *g)
{
	memset(g, 0, sizeof *g);
	hw_val *fields[] = {&g->cc_major, &g->cc_minor, &g->mem_total_bytes, &g->mem_used_bytes, &g->mem_free_bytes,
			    &g->mem_reserved_bytes, &g->util_gpu_pct, &g->util_mem_pct, &g->temp_c, &g->temp_slowdown_c,
			    &g->temp_shutdown_c, &g->fan_pct, &g->power_mw, &g->power_limit_mw, &g->power_default_limit_mw,
			    &g->clock_sm_mhz, &g->clock_mem_mhz, &g->clock_sm_max_mhz, &g->clock_mem_max_mhz,
			    &g->throttle_reasons, &g->pcie_gen, &g->pcie_width, &g->pcie_gen_max, &g->pcie_width_max,
			    &g->persistence_mode, &g->compute_mode, &g->mig_mode, &g->ecc_mode, &g->ecc_corrected,
			    &g->ecc_uncorrected, &g->retired_sbe, &g->retired_dbe, &g->retired_pending,
			    &g->remap_correctable, &g->remap_uncorrectable, &g->remap_pending, &g->remap_failure,
			    &g->sm_count, &g->mem_clock_khz, &g->mem_bus_width_bits, &g->l2_bytes};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		*fields[i] = NA();
	g->pci_revision = 0xa1;
	g->nvml_index = g->cuda_ordinal = -1;
}

static void gpu_nvidia(hw_gpu *g, int index, const char *name, int ma, int mi)
{
	gpu_blank(g);
	g->index = g->nvml_index = g->cuda_ordinal = index;
	snprintf(g->name, sizeof g->name, "%s", name);
	snprintf(g->uuid, sizeof g->uuid, "GPU-%08d-aaaa-bbbb-cccc-dddddddddddd", index);
	snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "0000:%02x:00.0", index + 1);
	g->vendor = HW_VENDOR_NVIDIA;
	snprintf(g->kernel_driver, sizeof g->kernel_driver, "nvidia");
	g->cc_major = V(ma);
	g->cc_minor = V(mi);
	g->mem_total_bytes = V(8LL << 30);
	g->temp_c = V(45);
	g->temp_slowdown_c = V(87);
	g->util_gpu_pct = V(30);
}

typedef struct fixture {
	hw_snapshot snap;
	hw_gpu gpus[4];
	stack_info st;
	stack_python py[2];
	stack_toolkit tk[3];
	doctor_input in;
	doctor_report rep;
} fixture;

static void fx_init(fixture *f, const char *driver)
{
	memset(f, 0, sizeof *f);
	snprintf(f->snap.driver_version, sizeof f->snap.driver_version, "%s", driver);
	f->snap.nvml_loaded = f->snap.nvml_initialised = true;
	f->snap.cuda_driver_version = V(12080);
	f->snap.gpus = f->gpus;
	f->st.pythons = f->py;
	f->st.toolkits = f->tk;
	f->in.hw = &f->snap;
	f->in.stack = &f->st;
	f->in.xids_read = true;
}

static void fx_torch(fixture *f, const char *version, const char *cuda, const char *arch)
{
	stack_python *p = &f->py[f->st.n_pythons++];
	memset(p, 0, sizeof *p);
	snprintf(p->exe, sizeof p->exe, "/home/u/venv/bin/python");
	snprintf(p->how, sizeof p->how, "--python");
	snprintf(p->site, sizeof p->site, "/home/u/venv/lib/python3.11/site-packages");
	p->has_torch = true;
	snprintf(p->torch_version, sizeof p->torch_version, "%s", version);
	snprintf(p->torch_cuda, sizeof p->torch_cuda, "%s", cuda);
	snprintf(p->arch_list, sizeof p->arch_list, "%s", arch);
	snprintf(p->arch_from, sizeof p->arch_from, "%s", *arch ? "python" : "");
}

static const doctor_finding *find(const doctor_report *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->findings[i].id, id) == 0)
			return &r->findings[i];
	return NULL;
}

static void run(fixture *f)
{
	doctor_check(&f->in, &f->rep);
}

static void done(fixture *f)
{
	doctor_report_release(&f->rep);
}

static void clean_env(void)
{
	const char *vars[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "__NV_PRIME_RENDER_OFFLOAD",
			      "__GLX_VENDOR_LIBRARY_NAME", "CUDA_LAUNCH_BLOCKING", "CUDA_INJECTION64_PATH"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
	gw_set_root("/nonexistent-gpuwise-root");
}

static void test_rtx50_old_torch(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0);
	fx_torch(&f, "2.5.1+cu124", "12.4", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
	run(&f);
	const doctor_finding *a = find(&f.rep, "arch-unsupported");
	assert_non_null(a);
	assert_int_equal(a->severity, DOC_FAIL);
	assert_non_null(strstr(a->title, "sm_120 is not compatible"));
	/* 2.12 is the newest release with a cu128 wheel (2.13 ships cu126 and cu130 only) */
	assert_non_null(strstr(a->fix, "torch~=2.12.0 torchvision~=0.27.0 torchaudio~=2.12.0 --index-url https://download.pytorch.org/whl/cu128"));
	assert_int_equal(doctor_worst(&f.rep), DOC_FAIL);
	done(&f);

	/* the same GPU with driver 580: the newest build it runs is cu130 */
	fx_init(&f, "580.82.07");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0);
	fx_torch(&f, "2.5.1+cu124", "12.4", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
	run(&f);
	a = find(&f.rep, "arch-unsupported");
	assert_non_null(strstr(a->fix, "whl/cu130"));
	done(&f);

	/* driver 560: nothing with sm_120 runs; upgrade to 570.26 first */
	fx_init(&f, "560.35.03");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0);
	fx_torch(&f, "2.5.1+cu124", "12.4", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
	run(&f);
	a = find(&f.rep, "arch-unsupported");
	assert_non_null(strstr(a->fix, "upgrade the NVIDIA driver to >= 570.26 first"));
	done(&f);
}

static void test_arch_from_table_and_ok(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	/* no arch list from the interpreter: the table's list for 2.5 cu124 is used */
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	fx_torch(&f, "2.5.1+cu124", "12.4", "");
	run(&f);
	const doctor_finding *a = find(&f.rep, "torch-arch");
	assert_non_null(a);
	assert_int_equal(a->severity, DOC_OK);
	assert_non_null(strstr(a->evidence, "data/torch-builds.tsv"));
	assert_null(find(&f.rep, "arch-unsupported"));
	assert_int_equal(find(&f.rep, "torch-driver")->severity, DOC_OK);
	done(&f);
}

static void test_driver_too_old(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	fx_init(&f, "535.183.01");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA A100-SXM4-40GB", 8, 0);
	fx_torch(&f, "2.7.1+cu128", "12.8", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120");
	run(&f);
	const doctor_finding *d = find(&f.rep, "driver-too-old");
	assert_non_null(d);
	assert_int_equal(d->severity, DOC_FAIL);
	assert_non_null(strstr(d->title, "needs driver >= 570.26"));
	assert_non_null(strstr(d->fix, "570.26"));
	done(&f);
}

static void test_cpu_only(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 3060", 8, 6);
	fx_torch(&f, "2.7.1+cpu", "", "");
	run(&f);
	const doctor_finding *c = find(&f.rep, "torch-cpu-only");
	assert_non_null(c);
	assert_int_equal(c->severity, DOC_FAIL);
	/* driver 570 runs cu126, and 2.14 is the newest release with a cu126 wheel that has sm_86 */
	assert_non_null(strstr(c->fix, "torch~=2.14.0 torchvision~=0.29.0 torchaudio~=2.14.0 --index-url https://download.pytorch.org/whl/cu126"));
	done(&f);
}

static void test_toolkits_path_order(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0);
	stack_toolkit *a = &f.tk[f.st.n_toolkits++], *b = &f.tk[f.st.n_toolkits++];
	memset(a, 0, sizeof *a);
	memset(b, 0, sizeof *b);
	snprintf(a->root, sizeof a->root, "/usr/local/cuda-11.8");
	snprintf(a->version, sizeof a->version, "11.8.89");
	snprintf(a->nvcc, sizeof a->nvcc, "/usr/local/cuda-11.8/bin/nvcc");
	a->path_rank = 0;
	snprintf(b->root, sizeof b->root, "/usr/local/cuda-12.8");
	snprintf(b->version, sizeof b->version, "12.8.93");
	snprintf(b->nvcc, sizeof b->nvcc, "/usr/local/cuda-12.8/bin/nvcc");
	b->path_rank = 1;
	b->is_cuda_home = true;
	snprintf(f.st.cuda_home, sizeof f.st.cuda_home, "/usr/local/cuda-12.8");
	run(&f);
	const doctor_finding *p = find(&f.rep, "nvcc-path-order");
	assert_non_null(p);
	assert_int_equal(p->severity, DOC_WARN);
	assert_non_null(strstr(p->title, "the first nvcc on PATH is an older CUDA (11.8.89) than the one CUDA_HOME names (12.8.93)"));
	assert_string_equal(p->fix, "export PATH=/usr/local/cuda-12.8/bin:$PATH (or point CUDA_HOME at /usr/local/cuda-11.8)");
	/* 11.8 cannot build sm_120 */
	const doctor_finding *t = find(&f.rep, "toolkit-arch");
	assert_non_null(t);
	assert_non_null(strstr(t->title, "nvcc 11.8.89"));
	done(&f);
}

static void test_hybrid_laptop(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0);
	hw_gpu *ig = &f.gpus[f.snap.n_gpus++];
	gpu_blank(ig);
	ig->index = 1;
	ig->vendor = HW_VENDOR_INTEL;
	ig->integrated = true;
	snprintf(ig->name, sizeof ig->name, "Intel Arc Graphics");
	snprintf(ig->kernel_driver, sizeof ig->kernel_driver, "i915");
	run(&f);
	const doctor_finding *h = find(&f.rep, "hybrid-graphics");
	assert_non_null(h);
	assert_non_null(strstr(h->fix, "__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia"));
	assert_non_null(strstr(h->evidence, "not set"));
	hw_gpu igpu = *ig;
	done(&f);
	setenv("__NV_PRIME_RENDER_OFFLOAD", "1", 1);
	setenv("__GLX_VENDOR_LIBRARY_NAME", "nvidia", 1);
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0);
	f.gpus[f.snap.n_gpus++] = igpu;
	run(&f);
	assert_non_null(strstr(find(&f.rep, "hybrid-graphics")->evidence, "set in this shell"));
	done(&f);
	clean_env();
}

static void test_no_gpu_driver_nouveau_bus(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	fx_init(&f, "");
	run(&f);
	assert_int_equal(find(&f.rep, "no-gpu")->severity, DOC_FAIL);
	done(&f);

	fx_init(&f, "");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	f.gpus[0].kernel_driver[0] = '\0';
	f.snap.nvml_loaded = false;
	run(&f);
	assert_int_equal(find(&f.rep, "no-driver")->severity, DOC_FAIL);
	done(&f);

	fx_init(&f, "");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	snprintf(f.gpus[0].kernel_driver, sizeof f.gpus[0].kernel_driver, "nouveau");
	run(&f);
	assert_non_null(strstr(find(&f.rep, "nouveau-conflict")->fix, "blacklist nouveau"));
	done(&f);

	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	f.gpus[0].pci_revision = 0xff;
	f.gpus[0].fell_off_bus = true;
	run(&f);
	assert_int_equal(find(&f.rep, "gpu-fell-off-bus")->severity, DOC_FAIL);
	done(&f);

	fx_init(&f, "");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	snprintf(f.snap.nvml_error, sizeof f.snap.nvml_error, "nvmlInit_v2: Driver/library version mismatch");
	f.snap.nvml_loaded = true;
	run(&f);
	assert_int_equal(find(&f.rep, "driver-library-mismatch")->severity, DOC_FAIL);
	done(&f);
}

static void test_visible_devices(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	setenv("CUDA_VISIBLE_DEVICES", "2", 1);
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA H100 80GB HBM3", 9, 0);
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 1, "NVIDIA H100 80GB HBM3", 9, 0);
	run(&f);
	assert_int_equal(find(&f.rep, "cuda-visible-devices")->severity, DOC_FAIL);
	done(&f);
	setenv("CUDA_VISIBLE_DEVICES", "1,7,0", 1);
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA H100 80GB HBM3", 9, 0);
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 1, "NVIDIA H100 80GB HBM3", 9, 0);
	run(&f);
	assert_int_equal(find(&f.rep, "cuda-visible-devices")->severity, DOC_WARN);
	done(&f);
	setenv("CUDA_VISIBLE_DEVICES", "GPU-00000001", 1);
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA H100 80GB HBM3", 9, 0);
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 1, "NVIDIA H100 80GB HBM3", 9, 0);
	snprintf(f.snap.cuda_order_note, sizeof f.snap.cuda_order_note, "CUDA 0 is NVML 1 (fastest first)");
	run(&f);
	assert_int_equal(find(&f.rep, "cuda-visible-devices")->severity, DOC_OK);
	assert_int_equal(find(&f.rep, "cuda-order")->severity, DOC_WARN);
	done(&f);
	clean_env();
}

static void test_health(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	fx_init(&f, "570.124.06");
	for (int i = 0; i < 2; i++) {
		hw_gpu *g = &f.gpus[f.snap.n_gpus++];
		gpu_nvidia(g, i, "NVIDIA H100 80GB HBM3", 9, 0);
		g->persistence_mode = V(i == 0 ? 0 : 1);
	}
	hw_gpu *g = &f.gpus[0];
	g->temp_c = V(83);
	g->throttle_reasons = V(HW_THR_SW_THERMAL | HW_THR_HW_SLOWDOWN);
	g->power_limit_mw = V(300000);
	g->power_default_limit_mw = V(700000);
	g->pcie_gen = V(5);
	g->pcie_gen_max = V(5);
	g->pcie_width = V(8);
	g->pcie_width_max = V(16);
	g->ecc_uncorrected = V(2);
	g->ecc_corrected = V(10);
	g->remap_pending = V(1);
	g->remap_failure = V(0);
	hw_proc pr;
	memset(&pr, 0, sizeof pr);
	pr.pid = 4242;
	pr.exists = false;
	pr.used_mem_bytes = V(1LL << 30);
	g->procs = &pr;
	g->n_procs = 1;
	hw_xid x[2];
	memset(x, 0, sizeof x);
	x[0].xid = 79;
	x[1].xid = 79;
	snprintf(x[0].pci, sizeof x[0].pci, "0000:01:00");
	snprintf(x[1].pci, sizeof x[1].pci, "0000:01:00");
	f.in.xids = x;
	f.in.n_xids = 2;
	run(&f);
	assert_int_equal(find(&f.rep, "temperature")->severity, DOC_WARN);
	assert_non_null(strstr(find(&f.rep, "throttle")->title, "software thermal slowdown, hardware slowdown"));
	assert_non_null(strstr(find(&f.rep, "power-limit")->fix, "-pl 700"));
	assert_int_equal(find(&f.rep, "pcie-link")->severity, DOC_WARN);
	assert_int_equal(find(&f.rep, "ecc-error")->severity, DOC_FAIL);
	assert_int_equal(find(&f.rep, "retired-pages")->severity, DOC_WARN);
	assert_non_null(strstr(find(&f.rep, "persistence-mode")->fix, "nvidia-smi -i 0 -pm 1"));
	assert_non_null(strstr(find(&f.rep, "stale-process")->title, "process 4242"));
	const doctor_finding *xf = find(&f.rep, "xid");
	assert_int_equal(xf->severity, DOC_FAIL);
	assert_non_null(strstr(xf->title, "2 in the last 24 h"));
	/* the second GPU is fine */
	bool healthy = false;
	for (size_t i = 0; i < f.rep.n; i++)
		healthy |= strcmp(f.rep.findings[i].id, "health") == 0 && f.rep.findings[i].gpu == 1;
	assert_true(healthy);
	done(&f);

	/* at the slowdown threshold: fail; idle PCIe gen drop: ok */
	fx_init(&f, "570.124.06");
	g = &f.gpus[f.snap.n_gpus++];
	gpu_nvidia(g, 0, "NVIDIA GeForce RTX 4090", 8, 9);
	g->temp_c = V(90);
	g->pcie_gen = V(1);
	g->pcie_gen_max = V(4);
	g->pcie_width = V(16);
	g->pcie_width_max = V(16);
	g->util_gpu_pct = V(0);
	run(&f);
	assert_int_equal(find(&f.rep, "temperature")->severity, DOC_FAIL);
	assert_int_equal(find(&f.rep, "pcie-link")->severity, DOC_OK);
	done(&f);
}

static void test_bad_env(void **state)
{
	(void)state;
	fixture f;
	clean_env();
	setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
	fx_init(&f, "570.124.06");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	run(&f);
	const doctor_finding *b = find(&f.rep, "bad-env");
	assert_non_null(b);
	assert_string_equal(b->fix, "unset CUDA_LAUNCH_BLOCKING");
	done(&f);
	clean_env();
}


static void write_file(const char *root, const char *rel, const char *data, size_t len)
{
	char *path = xasprintf("%s%s", root, rel);
	char *dir = xstrdup(path);
	for (char *p = dir + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(data, 1, len, f);
	fclose(f);
	free(dir);
	free(path);
}

static void test_secure_boot_and_idle_process(void **state)
{
	(void)state;
	char root[] = "/tmp/gw-doctor-root-XXXXXX";
	assert_non_null(mkdtemp(root));
	/* SecureBoot EFI variable: 4 attribute bytes, then 1 = enabled */
	write_file(root, "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
		   "\x06\x00\x00\x00\x01", 5);
	write_file(root, "/proc/modules", "snd 1 0 - Live 0x0\n", 19);
	write_file(root, "/proc/uptime", "100000.00 350000.00\n", 20);
	/* starttime (field 22) = 500 ticks after boot: the process is ~27.8 h old */
	const char *stat = "4242 (python) S 1 4242 4242 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 1 0 500 1000 100\n";
	write_file(root, "/proc/4242/stat", stat, strlen(stat));
	fixture f;
	clean_env();
	gw_set_root(root);
	fx_init(&f, "");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	f.gpus[0].kernel_driver[0] = '\0';
	f.snap.nvml_loaded = false;
	run(&f);
	const doctor_finding *sb = find(&f.rep, "secure-boot");
	assert_non_null(sb);
	assert_int_equal(sb->severity, DOC_FAIL);
	assert_non_null(strstr(sb->fix, "mokutil --import"));
	done(&f);

	/* the module is loaded: then it is not Secure Boot */
	write_file(root, "/proc/modules", "nvidia 1 0 - Live 0x0\n", 22);
	fx_init(&f, "");
	gpu_nvidia(&f.gpus[f.snap.n_gpus++], 0, "NVIDIA GeForce RTX 4090", 8, 9);
	f.gpus[0].kernel_driver[0] = '\0';
	run(&f);
	assert_null(find(&f.rep, "secure-boot"));
	assert_non_null(strstr(find(&f.rep, "no-driver")->evidence, "loaded but not bound"));
	done(&f);

	fx_init(&f, "570.124.06");
	hw_gpu *g = &f.gpus[f.snap.n_gpus++];
	gpu_nvidia(g, 0, "NVIDIA GeForce RTX 4090", 8, 9);
	g->util_gpu_pct = V(0);
	hw_proc pr;
	memset(&pr, 0, sizeof pr);
	pr.pid = 4242;
	pr.exists = true;
	snprintf(pr.user, sizeof pr.user, "alice");
	snprintf(pr.command, sizeof pr.command, "python -m jupyter");
	pr.used_mem_bytes = V(3LL << 30);
	g->procs = &pr;
	g->n_procs = 1;
	run(&f);
	const doctor_finding *idle = find(&f.rep, "idle-process");
	assert_non_null(idle);
	assert_non_null(strstr(idle->title, "process 4242 (alice: python -m jupyter) holds 3.00 GiB"));
	assert_non_null(strstr(idle->evidence, "running for 27.8 h"));
	done(&f);
	/* busy GPU: not idle */
	fx_init(&f, "570.124.06");
	g = &f.gpus[f.snap.n_gpus++];
	gpu_nvidia(g, 0, "NVIDIA GeForce RTX 4090", 8, 9);
	g->procs = &pr;
	g->n_procs = 1;
	run(&f);
	assert_null(find(&f.rep, "idle-process"));
	done(&f);
	clean_env();
	char *cmd = xasprintf("rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static int teardown(void **state)
{
	(void)state;
	kb_release_all();
	gw_set_root(NULL);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtx50_old_torch),
		cmocka_unit_test(test_arch_from_table_and_ok),
		cmocka_unit_test(test_driver_too_old),
		cmocka_unit_test(test_cpu_only),
		cmocka_unit_test(test_toolkits_path_order),
		cmocka_unit_test(test_hybrid_laptop),
		cmocka_unit_test(test_no_gpu_driver_nouveau_bus),
		cmocka_unit_test(test_visible_devices),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_bad_env),
		cmocka_unit_test(test_secure_boot_and_idle_process),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

/*
 * deep.c: doctor --deep.  Real work on each GPU through the CUDA driver
 * API (bench/cudrv: libcuda.so.1 loaded with dlopen, shared with bench):
 * a context, an allocation, copies both ways checked with a checksum, the
 * Triad kernel of gpuwise bench (its embedded PTX, JIT-compiled by the
 * driver), host-device bandwidth; and for each
 * Python with a CUDA PyTorch, a bounded torch.cuda.is_available() and a
 * small matmul.  Results become doctor findings.
 */
#include "doctor/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/cudrv.h"
#include "hw/hw.h"
#include "stack/stack.h"

#define DEEP_N (2u << 20)            /* 2 Mi doubles a vector: 16 MiB checked */
#define DEEP_BW_BYTES (64u << 20)    /* bandwidth buffer */
#define DEEP_BW_REPS 5

/* One GPU: returns a finding (ok or fail) describing each step. */
static void deep_one(const cu_driver *c, int ordinal, doctor_report *rep)
{
	char e[256] = "", name[128] = "?", step[64] = "device";
	cu_device dev;
	cu_context ctx = NULL;
	cu_module mod = NULL;
	cu_ptr d = 0, dbw = 0;
	double *h = NULL;
	void *pinned = NULL;
	double h2d = 0, d2h = 0;
	cu_result r;
	bool retained = false, ok = false;
	const size_t vec = DEEP_N * sizeof(double);

	if ((r = c->get(&dev, ordinal)))
		goto out;
	c->name(name, sizeof name, dev);
	snprintf(step, sizeof step, "context");
	if ((r = c->retain(&ctx, dev)))
		goto out;
	retained = true;
	if ((r = c->set_current(ctx)))
		goto out;
	snprintf(step, sizeof step, "allocation");
	/* three vectors a, b, c in one allocation: the Triad a = b + 2c */
	if ((r = c->alloc(&d, 3 * vec)))
		goto out;
	h = xmalloc(2 * vec);
	for (uint32_t i = 0; i < DEEP_N; i++) {
		h[i] = (double)i;                   /* b: every element differs */
		h[DEEP_N + i] = (double)(i % 1024); /* c */
	}
	snprintf(step, sizeof step, "copy to the GPU");
	if ((r = c->htod(d + vec, h, 2 * vec)))
		goto out;
	snprintf(step, sizeof step, "loading the PTX kernel");
	if ((r = c->load(&mod, gw_bench_kernels_ptx)))
		goto out;
	cu_function fn;
	if ((r = c->function(&fn, mod, "gw_triad")))
		goto out;
	snprintf(step, sizeof step, "kernel launch");
	cu_ptr da = d, db = d + vec, dc = d + 2 * vec;
	double scalar = 2.0;
	unsigned long long n = DEEP_N;
	void *params[] = {&da, &db, &dc, &scalar, &n};
	if ((r = c->launch(fn, (DEEP_N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL)))
		goto out;
	if ((r = c->sync()))
		goto out;
	snprintf(step, sizeof step, "copy back");
	memset(h, 0, vec);
	if ((r = c->dtoh(h, da, vec)))
		goto out;
	/* every value is an integer below 2^53: each element must be exact */
	uint32_t bad = 0, first = 0;
	for (uint32_t i = 0; i < DEEP_N; i++)
		if (h[i] != (double)i + 2.0 * (double)(i % 1024) && bad++ == 0)
			first = i;
	if (bad) {
		snprintf(e, sizeof e, "checksum mismatch after copy, kernel and copy back: %u of %u values wrong, the first "
			 "at %u (%.17g, expected %.17g)", bad, DEEP_N, first, h[first], (double)first + 2.0 * (double)(first % 1024));
		snprintf(step, sizeof step, "checksum");
		r = -1;
		goto out;
	}
	/* host-device bandwidth with pinned memory */
	snprintf(step, sizeof step, "bandwidth");
	if ((r = c->host_alloc(&pinned, DEEP_BW_BYTES)) || (r = c->alloc(&dbw, DEEP_BW_BYTES)))
		goto out;
	memset(pinned, 0x5a, DEEP_BW_BYTES);
	uint64_t t0 = now_ms();
	for (int i = 0; i < DEEP_BW_REPS && !r; i++)
		r = c->htod(dbw, pinned, DEEP_BW_BYTES);
	uint64_t t1 = now_ms();
	for (int i = 0; i < DEEP_BW_REPS && !r; i++)
		r = c->dtoh(pinned, dbw, DEEP_BW_BYTES);
	uint64_t t2 = now_ms();
	if (r)
		goto out;
	double bytes = (double)DEEP_BW_BYTES * DEEP_BW_REPS;
	h2d = t1 > t0 ? bytes / ((double)(t1 - t0) / 1000.0) / 1e9 : 0;
	d2h = t2 > t1 ? bytes / ((double)(t2 - t1) / 1000.0) / 1e9 : 0;
	ok = true;
out:
	if (!ok && !*e)
		cu_driver_strerror(c, r, e, sizeof e);
	doctor_finding *f = doctor_add(rep, ok ? "deep-cuda" : "deep-cuda-failed", ok ? DOC_OK : DOC_FAIL, DG_CUDA, -1);
	if (ok) {
		f->title = xasprintf(_("CUDA device %d (%s): context, allocation, copies, PTX kernel and checksum work"),
				     ordinal, name);
		f->evidence = xasprintf(_("32 MiB to the GPU, the Triad kernel, 16 MiB back, checksum matches; host to device "
					"%.1f GB/s, device to host %.1f GB/s (pinned, 64 MiB x %d)"), h2d, d2h, DEEP_BW_REPS);
		f->fix = xstrdup("");
	} else {
		f->title = xasprintf(_("CUDA device %d (%s) failed at the %s step"), ordinal, name, step);
		f->evidence = xstrdup(e);
		/* WSL: Xid never reaches Linux; Windows logs it */
		f->fix = xstrdup(hw_platform() == HW_PLATFORM_WSL2
					 ? _("gpuwise explain the error text; on Windows: Event Viewer > Windows Logs > System, "
					   "source nvlddmkm (Xid and TDR events)")
					 : _("gpuwise explain the error text; check the kernel log for Xid errors (sudo dmesg | grep "
					   "Xid)"));
	}
	if (dbw)
		c->free(dbw);
	if (pinned)
		c->host_free(pinned);
	if (mod)
		c->unload(mod);
	if (d)
		c->free(d);
	free(h);
	if (retained)
		c->release(dev);
}

void doctor_deep_cuda(doctor_report *rep)
{
	cu_driver c;
	char why[512];
	if (!cu_driver_load(&c, why, sizeof why)) {
		doctor_finding *f = doctor_add(rep, "deep-cuda", DOC_SKIP, DG_CUDA, -1);
		f->title = xstrdup(_("CUDA driver tests not available"));
		f->evidence = xstrdup(why);
		f->fix = xstrdup("");
		return;
	}
	char e[256];
	cu_result r = c.init(0);
	int n = 0;
	if (!r)
		r = c.count(&n);
	if (r) {
		doctor_finding *f = doctor_add(rep, "deep-cuda-failed", DOC_FAIL, DG_CUDA, -1);
		f->title = xstrdup(_("the CUDA driver does not initialise"));
		f->evidence = xasprintf("cuInit: %s", cu_driver_strerror(&c, r, e, sizeof e));
		f->fix = xstrdup(hw_platform() == HW_PLATFORM_WSL2
					 ? _("gpuwise explain the error; check that nvidia-smi works; if not, update the NVIDIA "
					   "driver for Windows, then in PowerShell: wsl --shutdown")
					 : _("gpuwise explain the error; check that nvidia-smi works and the kernel log for Xid errors"));
	} else if (n == 0) {
		doctor_finding *f = doctor_add(rep, "deep-cuda", DOC_SKIP, DG_CUDA, -1);
		f->title = xstrdup(_("CUDA sees no device: driver tests skipped"));
		f->evidence = xstrdup(_("cuDeviceGetCount returned 0 (CUDA_VISIBLE_DEVICES may hide every GPU)"));
		f->fix = xstrdup("");
	}
	for (int i = 0; !r && i < n; i++)
		deep_one(&c, i, rep);
	cu_driver_close(&c);
}

/* how much of a failing probe's output is shown: a traceback's last frames and the exception */
#define DOCTOR_TAIL_LINES 8
#define DOCTOR_TAIL_BYTES 900

static char *text_tail(const char *out, size_t lines, size_t bytes)
{
	return stack_output_tail(out, lines, bytes);
}

static const char torch_script[] =
	"import sys\n"
	"import torch\n"
	"ok = torch.cuda.is_available()\n"
	"print('AVAILABLE %s %d' % (ok, torch.cuda.device_count() if ok else 0))\n"
	"if ok:\n"
	"    for i in range(torch.cuda.device_count()):\n"
	"        a = torch.randn(512, 512, device='cuda:%d' % i)\n"
	"        b = (a @ a).cpu()\n"
	"        ref = a.cpu() @ a.cpu()\n"
	"        err = float((b - ref).abs().max()) / max(float(ref.abs().max()), 1e-30)\n"
	"        print('MATMUL %d %.3g %s' % (i, err, torch.cuda.get_device_name(i)))\n";

void doctor_deep_python(const struct stack_info *st, int timeout_ms, doctor_report *rep)
{
	for (size_t i = 0; st && i < st->n_pythons; i++) {
		const stack_python *py = &st->pythons[i];
		if (!py->has_torch || !*py->torch_cuda)
			continue;
		char *exe = gw_path(py->exe);
		char *argv[] = {exe, "-c", (char *)torch_script, NULL};
		char *out = NULL;
		int status;
		gw_error err = {0};
		int rc = stack_run(argv, timeout_ms, &out, &status, &err);
		const char *av = out ? strstr(out, "AVAILABLE ") : NULL;
		doctor_finding *f;
		if (rc) {
			f = doctor_add(rep, "deep-torch-failed", DOC_FAIL, DG_PYTHON, -1);
			f->title = xasprintf(_("torch in %s: the CUDA test did not finish"), py->exe);
			f->evidence = xstrdup(err.msg);
			f->fix = xstrdup(hw_platform() == HW_PLATFORM_WSL2
						 ? _("a hang in torch.cuda.is_available() points at the driver: check nvidia-smi; "
						   "on Windows update the NVIDIA driver, then in PowerShell: wsl --shutdown")
						 : _("a hang in torch.cuda.is_available() points at the driver: check nvidia-smi and "
						   "the kernel log"));
		} else if (!av) {
			f = doctor_add(rep, "deep-torch-failed", DOC_FAIL, DG_PYTHON, -1);
			f->title = xasprintf(_("torch in %s failed its CUDA test (exit %d)"), py->exe, status);
			f->evidence = text_tail(out, DOCTOR_TAIL_LINES, DOCTOR_TAIL_BYTES);
			f->fix = xstrdup(_("gpuwise explain - < the error text"));
		} else if (str_starts(av + 10, "False")) {
			f = doctor_add(rep, "deep-torch-failed", DOC_FAIL, DG_PYTHON, -1);
			f->title = xasprintf(_("torch %s in %s: torch.cuda.is_available() is False"), py->torch_version, py->exe);
			f->evidence = xasprintf("%.*s", (int)strcspn(out, "\n"), out);
			f->fix = xstrdup(_("run python -c 'import torch; torch.zeros(1).cuda()' for the reason, then gpuwise "
					 "explain it"));
		} else {
			strbuf sb = STRBUF_INIT;
			bool bad = false;
			for (const char *m = out; (m = strstr(m, "MATMUL ")); m += 7) {
				int dev;
				double rel;
				if (sscanf(m + 7, "%d %lf", &dev, &rel) == 2) {
					/* fp32 512x512 matmul: GPU and CPU agree to ~1e-6 relative; TF32 would give ~1e-3 */
					bad |= rel > 1e-2;
					sb_printf(&sb, "%scuda:%d relative error %.2g", sb.len ? "; " : "", dev, rel);
				}
			}
			f = doctor_add(rep, bad ? "deep-torch-failed" : "deep-torch", bad ? DOC_FAIL : DOC_OK, DG_PYTHON, -1);
			f->title = xasprintf(_("torch %s in %s: CUDA available, 512x512 matmul %s"), py->torch_version, py->exe,
					     bad ? _("gives wrong results") : _("matches the CPU"));
			f->evidence = sb.len ? sb_detach(&sb) : xstrdup(_("no matmul ran"));
			f->fix = xstrdup(bad ? _("check the GPU's health (ECC, Xid) and clocks") : "");
			sb_release(&sb);
		}
		free(out);
		free(exe);
	}
}

/*
 * gpuwise bench: why GPUs win, measured here.  The sum of squares from 10^4
 * numbers up (one CPU core, every core, each GPU), STREAM on the CPU, the
 * GPUs' memory, copies, FP32 and tensor-core throughput, each against its
 * peak, then the three lessons in numbers.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "cmd/cmd.h"
#include "hw/hw.h"
#include "kb/kb.h"
#include "util/json.h"

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise bench [--quick] [--threads N] [--max-n N] [--runs N] [--no-cuda]\n"
		"                     [--no-opencl] [--json]\n\n"
		"Measure why GPUs win on this machine: the sum of the squares of 10^4 to 10^9\n"
		"numbers on one CPU core, on every core and on each GPU (where launch overhead\n"
		"dominates and where the GPU starts to win); STREAM Copy, Scale, Add and Triad\n"
		"on the CPU; on each GPU the device Copy, Triad and Dot bandwidth, host <-> device\n"
		"copies (pinned and pageable), FP32 FMA and tensor-core (mma.sync fp16, bf16,\n"
		"tf32) throughput, each against its peak.  NVIDIA GPUs through the CUDA driver\n"
		"(libcuda.so.1), others through OpenCL (libOpenCL.so.1); every result is checked.\n\n"
		"Options:\n"
		"  --quick        under 10 seconds: sizes up to 10^7, fewer repetitions\n"
		"  --threads N    CPU threads (default: every online CPU)\n"
		"  --max-n N      largest sum-of-squares size (default 10^7 quick, 10^9 full)\n"
		"  --runs N       STREAM runs on the CPU, the best after the first counts\n"
		"                 (STREAM's NTIMES; default 6 quick, 20 full)\n"
		"  --no-cuda      do not use the CUDA driver\n"
		"  --no-opencl    do not use OpenCL\n"
		"  --json         machine-readable output (docs/json-bench.md)\n"
		"  -h, --help     this help\n\n"
		"Environment: GPUWISE_CUDA_LIB and GPUWISE_OPENCL_LIB name the libraries.\n\n"
		"Exit status: 0 success; 1 runtime error (a device could not be measured);\n"
		"2 usage error; 4 a kernel's result was wrong (check the device's health).\n"));
}

static bool progress_on;

static void progress(void *ctx, const char *what)
{
	(void)ctx;
	if (progress_on)
		fprintf(stderr, "\r\033[Kgpuwise bench: %s...", what);
}

static void progress_done(void)
{
	if (progress_on)
		fprintf(stderr, "\r\033[K");
}

/* PCIe per-lane rate, GB/s one direction after encoding (PCI-SIG: 2.5, 5, 8, 16, 32, 64 GT/s;
 * 8b/10b for gen 1-2, 128b/130b for gen 3-5, FLIT for gen 6 ~ 242/256). */
static double pcie_lane_gbs(int gen)
{
	static const double r[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
	return gen >= 1 && gen <= 6 ? r[gen] : 0;
}

/* Peaks from the hardware layer (PCIe link) and the catalog (TFLOPS, bandwidth). */
static size_t gather_peaks(hw_snapshot *snap, bench_peaks **out, char (*from)[2][128])
{
	size_t n = 0;
	*out = xcalloc(snap->n_gpus ? snap->n_gpus : 1, sizeof **out);
	for (size_t i = 0; i < snap->n_gpus; i++) {
		const hw_gpu *g = &snap->gpus[i];
		if (g->cuda_ordinal < 0 && g->nvml_index < 0)
			continue;
		bench_peaks *p = &(*out)[n];
		p->cuda_ordinal = g->cuda_ordinal >= 0 ? g->cuda_ordinal : g->nvml_index;
		if (HW_VALID(g->pcie_gen_max) && HW_VALID(g->pcie_width_max)) {
			p->pcie_gbs = pcie_lane_gbs((int)g->pcie_gen_max.v) * (double)g->pcie_width_max.v;
			snprintf(from[n][0], sizeof from[n][0], "PCIe gen %lld x%lld link", (long long)g->pcie_gen_max.v,
				 (long long)g->pcie_width_max.v);
			p->pcie_from = from[n][0];
		}
		const gpu_spec *s = kb_gpu_find(g->name);
		if (s) {
			snprintf(from[n][1], sizeof from[n][1], "catalog: %s", s->id);
			p->tflops_from = p->mem_from = from[n][1];
			p->mem_gbs = s->bandwidth_gbs;
			p->fp32_tflops = s->fp32_tflops;
			p->fp16_tflops = p->bf16_tflops = s->fp16_tflops;
			/* dense TF32 is half the dense FP16 rate on Ampere, Ada and Hopper
			 * (A100 156/312, H100 SXM 494.7/989.4, RTX 4090 82.6/165.2: NVIDIA datasheets) */
			p->tf32_tflops = s->fp16_tflops / 2;
		}
		n++;
	}
	return n;
}

static const char *kind_name(bench_dev_kind k)
{
	return k == BENCH_DEV_CPU ? "cpu" : k == BENCH_DEV_CUDA ? "cuda" : "opencl";
}

static void fmt_n(char *buf, size_t n, uint64_t v)
{
	int e = 0;
	uint64_t x = v;
	while (x >= 10 && x % 10 == 0) {
		x /= 10;
		e++;
	}
	if (x == 1 && e >= 4)
		snprintf(buf, n, "10^%d", e);
	else
		snprintf(buf, n, "%llu", (unsigned long long)v);
}

static void fmt_ms(char *buf, size_t n, double ms)
{
	if (ms < 0)
		snprintf(buf, n, "-");
	else if (ms < 1)
		snprintf(buf, n, "%.1f us", ms * 1e3);
	else if (ms < 1000)
		snprintf(buf, n, "%.2f ms", ms);
	else
		snprintf(buf, n, "%.2f s", ms / 1e3);
}

/* The GPU that the lessons speak of: the first CUDA device, else the first other GPU; NULL none. */
static const bench_device *lesson_device(const bench_report *r)
{
	const bench_device *best = NULL;
	for (size_t i = 1; i < r->n_devs; i++) {
		const bench_device *d = &r->devs[i];
		if (!d->is_gpu || (*d->error && !d->n_figs))
			continue;
		if (d->kind == BENCH_DEV_CUDA)
			return d;
		if (!best)
			best = d;
	}
	return best;
}

static const bench_sumsq *sumsq_at(const bench_device *d, uint64_t n)
{
	for (size_t i = 0; i < d->n_sumsq; i++)
		if (d->sumsq[i].n == n)
			return &d->sumsq[i];
	return NULL;
}

static void print_first_line(const bench_report *r)
{
	const bench_device *cpu = &r->devs[0];
	const bench_device *g = lesson_device(r);
	const bench_sumsq *c = sumsq_at(cpu, 10000);
	if (!c)
		return;
	char a[32], b[32], d[32];
	fmt_ms(a, sizeof a, c->cpu1_simd_ms);
	fmt_ms(b, sizeof b, c->cpu_all_ms);
	printf(_("The sum of the squares of 10,000 numbers: one CPU core %s, %d threads %s"), a, cpu->threads, b);
	const bench_sumsq *gs = g ? sumsq_at(g, 10000) : NULL;
	if (gs && gs->dev_ms >= 0) {
		fmt_ms(d, sizeof d, gs->dev_ms);
		printf(", %s %s", g->name, d);
	}
	printf(".\n");
	bool threads_lose = c->cpu_all_ms > c->cpu1_simd_ms;
	bool gpu_loses = gs && gs->dev_ms >= 0 && gs->dev_ms > c->cpu1_simd_ms;
	if (threads_lose || gpu_loses)
		printf(threads_lose && gpu_loses ? _("At this size overhead dominates: %s%s%s cost more than the arithmetic.\n")
						 : _("At this size overhead dominates: %s%s%s costs more than the arithmetic.\n"),
		       threads_lose ? _("handing work to threads") : "", threads_lose && gpu_loses ? _(" and ") : "",
		       gpu_loses ? _("a kernel launch and its result's trip back") : "");
	if (g) {
		char x[32];
		if (g->crossover_n) {
			fmt_n(x, sizeof x, g->crossover_n);
			printf(_("%s beats every CPU core from %s numbers on (measured).\n"), g->name, x);
		} else if (g->n_sumsq) {
			fmt_n(x, sizeof x, g->sumsq[g->n_sumsq - 1].n);
			printf(_("%s did not beat every CPU core at any size up to %s numbers.\n"), g->name, x);
		}
	}
	printf("\n");
}

static void print_sumsq(const bench_report *r)
{
	const bench_device *cpu = &r->devs[0];
	if (!cpu->n_sumsq)
		return;
	size_t ncols = 4;
	for (size_t i = 1; i < r->n_devs; i++)
		ncols += r->devs[i].n_sumsq ? 1 : 0;
	const char **hdr = xcalloc(ncols, sizeof *hdr);
	hdr[0] = _("numbers");
	hdr[1] = _("1 core");
	hdr[2] = _("1 core SIMD");
	char all[32];
	snprintf(all, sizeof all, _("%d threads SIMD"), cpu->threads);
	hdr[3] = all;
	size_t k = 4;
	for (size_t i = 1; i < r->n_devs; i++)
		if (r->devs[i].n_sumsq)
			hdr[k++] = r->devs[i].name;
	table *t = table_new(ncols, hdr);
	for (size_t c = 1; c < ncols; c++)
		table_set_align(t, c, true);
	char (*cells)[32] = xcalloc(ncols, sizeof *cells);
	const char **row = xcalloc(ncols, sizeof *row);
	for (size_t s = 0; s < cpu->n_sumsq; s++) {
		const bench_sumsq *q = &cpu->sumsq[s];
		fmt_n(cells[0], 32, q->n);
		fmt_ms(cells[1], 32, q->cpu1_ms);
		fmt_ms(cells[2], 32, q->cpu1_simd_ms);
		fmt_ms(cells[3], 32, q->cpu_all_ms);
		k = 4;
		for (size_t i = 1; i < r->n_devs; i++) {
			if (!r->devs[i].n_sumsq)
				continue;
			const bench_sumsq *g = sumsq_at(&r->devs[i], q->n);
			fmt_ms(cells[k++], 32, g ? g->dev_ms : -1);
		}
		for (size_t c = 0; c < ncols; c++)
			row[c] = cells[c];
		table_addv(t, row);
	}
	printf(_("Sum of squares, best time (the device's includes the launch and the result's trip back):\n"));
	table_print(t, stdout);
	printf("\n");
	table_free(t);
	free(cells);
	free(row);
	free(hdr);
}

static void print_device(const bench_device *d)
{
	const char *b = c_bold(stdout), *z = c_reset(stdout);
	printf("%s%s%s  (%s)\n", b, d->name, z, d->detail);
	if (d->n_figs) {
		const char *hdr[] = {_("figure"), _("value"), _("peak"), "%", _("check")};
		table *t = table_new(5, hdr);
		table_set_align(t, 1, true);
		table_set_align(t, 2, true);
		table_set_align(t, 3, true);
		for (size_t i = 0; i < d->n_figs; i++) {
			const bench_fig *f = &d->figs[i];
			char v[48], p[48], pct[16];
			if (f->value > 0)
				snprintf(v, sizeof v, "%.1f %s", f->value, f->unit);
			else
				snprintf(v, sizeof v, "-");
			if (f->peak > 0) {
				snprintf(p, sizeof p, "%.1f %s", f->peak, f->unit);
				snprintf(pct, sizeof pct, f->value > 0 ? "%.0f%%" : "-", 100.0 * f->value / f->peak);
			} else {
				snprintf(p, sizeof p, "-");
				snprintf(pct, sizeof pct, "-");
			}
			table_add(t, f->label, v, p, pct, f->value > 0 ? (f->validated ? _("ok") : _("WRONG")) : "");
		}
		table_print(t, stdout);
		table_free(t);
		for (size_t i = 0; i < d->n_figs; i++)
			if (d->figs[i].peak > 0 && (i == 0 || strcmp(d->figs[i].peak_from, d->figs[i - 1].peak_from)))
				printf(_("  peak of %s: %s\n"), d->figs[i].label, d->figs[i].peak_from);
	}
	if (*d->error)
		printf("  %s%s%s\n", c_red(stdout), d->error, c_reset(stdout));
	printf("\n");
}

static void print_lessons(const bench_report *r)
{
	const bench_device *cpu = &r->devs[0];
	const bench_device *g = lesson_device(r);
	printf(_("%sThree lessons%s\n"), c_bold(stdout), c_reset(stdout));
	if (!g) {
		printf(_("  no GPU was measured (%s%s%s)\n"), *r->cuda_note ? r->cuda_note : _("CUDA measured nothing"),
		       *r->opencl_note ? "; " : "", r->opencl_note);
		return;
	}
	/* 1. parallel units: the largest size both measured */
	const bench_sumsq *best_g = NULL, *best_c = NULL;
	for (size_t i = 0; i < g->n_sumsq; i++) {
		const bench_sumsq *c = sumsq_at(cpu, g->sumsq[i].n);
		if (c && c->cpu1_simd_ms > 0 && g->sumsq[i].dev_ms > 0) {
			best_g = &g->sumsq[i];
			best_c = c;
		}
	}
	if (best_g) {
		char x[32];
		fmt_n(x, sizeof x, best_g->n);
		double r1 = best_c->cpu1_simd_ms / best_g->dev_ms, ra = best_c->cpu_all_ms / best_g->dev_ms;
		printf(_("  1. parallel units: %s summed %s squares %.1fx %s than one CPU core (vectorised),\n"
		       "     %.1fx %s than all %d threads.\n"),
		       g->name, x, r1 >= 1 ? r1 : 1 / r1, r1 >= 1 ? _("faster") : _("slower"), ra >= 1 ? ra : 1 / ra,
		       ra >= 1 ? _("faster") : _("slower"), cpu->threads);
	}
	const bench_fig *gt = bench_find(g, "triad"), *ct = bench_find(cpu, "triad");
	if (gt && ct && ct->value > 0)
		printf(_("  2. memory bandwidth: %s's memory moved %.0f GB/s (Triad), %.1fx the host's %.1f GB/s\n"
		       "     (STREAM Triad).\n"),
		       g->name, gt->value, gt->value / ct->value, ct->value);
	const bench_fig *fma = bench_find(g, "fp32_fma"), *mma = bench_find(g, "mma_bf16");
	if (!mma || mma->value <= 0)
		mma = bench_find(g, "mma_fp16");
	if (fma && mma && mma->value > 0)
		printf(_("  3. tensor cores: %s reached %.1f TFLOPS, %.1fx its FP32 FMA rate of %.1f TFLOPS.\n"), mma->label,
		       mma->value, mma->value / fma->value, fma->value);
	else
		printf(_("  3. tensor cores: not measured on %s%s%s\n"), g->name, mma && *mma->note ? ": " : "",
		       mma ? mma->note : _(" (no mma.sync kernels through OpenCL)"));
}

static json_t *fig_json(const bench_fig *f)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string(f->id));
	json_object_set_new(o, "label", json_string(f->label));
	/* units in the key names: GB/s figures as *_gbs, TFLOPS figures as *_tflops */
	bool bw = strcmp(f->unit, "GB/s") == 0;
	json_object_set_new(o, bw ? "value_gbs" : "value_tflops", f->value > 0 ? jreal_round(f->value, 3) : json_null());
	json_object_set_new(o, bw ? "peak_gbs" : "peak_tflops", f->peak > 0 ? jreal_round(f->peak, 3) : json_null());
	json_object_set_new(o, "unit", json_string(f->unit));
	json_object_set_new(o, "peak_from", f->peak > 0 ? json_string(f->peak_from) : json_null());
	json_object_set_new(o, "peak_pct",
			    f->peak > 0 && f->value > 0 ? jreal_round(100.0 * f->value / f->peak, 2) : json_null());
	json_object_set_new(o, "validated", json_boolean(f->validated));
	json_object_set_new(o, "note", json_string(f->note));
	return o;
}

static json_t *ms_or_null(double ms)
{
	return ms >= 0 ? jreal_round(ms, 6) : json_null();
}

static json_t *report_json(const bench_report *r, bool quick)
{
	json_t *root = json_object();
	json_object_set_new(root, "mode", json_string(quick ? "quick" : "full"));
	json_t *devs = json_array();
	for (size_t i = 0; i < r->n_devs; i++) {
		const bench_device *d = &r->devs[i];
		json_t *o = json_object();
		json_object_set_new(o, "kind", json_string(kind_name(d->kind)));
		json_object_set_new(o, "name", json_string(d->name));
		json_object_set_new(o, "detail", json_string(d->detail));
		json_object_set_new(o, "threads", d->kind == BENCH_DEV_CPU ? json_integer(d->threads) : json_null());
		json_object_set_new(o, "stream_array_bytes",
				    d->stream_array_bytes ? json_integer((json_int_t)d->stream_array_bytes) : json_null());
		json_object_set_new(o, "error", *d->error ? json_string(d->error) : json_null());
		json_t *figs = json_array();
		for (size_t k = 0; k < d->n_figs; k++)
			json_array_append_new(figs, fig_json(&d->figs[k]));
		json_object_set_new(o, "figures", figs);
		json_t *sq = json_array();
		for (size_t k = 0; k < d->n_sumsq; k++) {
			const bench_sumsq *q = &d->sumsq[k];
			json_t *s = json_object();
			json_object_set_new(s, "n", json_integer((json_int_t)q->n));
			json_object_set_new(s, "cpu_1thread_ms", ms_or_null(q->cpu1_ms));
			json_object_set_new(s, "cpu_1thread_simd_ms", ms_or_null(q->cpu1_simd_ms));
			json_object_set_new(s, "cpu_all_threads_ms", ms_or_null(q->cpu_all_ms));
			json_object_set_new(s, "device_ms", ms_or_null(q->dev_ms));
			json_object_set_new(s, "validated", json_boolean(q->validated));
			json_array_append_new(sq, s);
		}
		json_object_set_new(o, "sum_of_squares", sq);
		json_object_set_new(o, "crossover_n",
				    d->kind != BENCH_DEV_CPU && d->crossover_n ? json_integer((json_int_t)d->crossover_n)
									       : json_null());
		json_array_append_new(devs, o);
	}
	json_object_set_new(root, "devices", devs);
	json_object_set_new(root, "cpu_llc_bytes", r->llc_bytes > 0 ? json_integer((json_int_t)r->llc_bytes) : json_null());
	json_object_set_new(root, "cuda_note", *r->cuda_note ? json_string(r->cuda_note) : json_null());
	json_object_set_new(root, "opencl_note", *r->opencl_note ? json_string(r->opencl_note) : json_null());
	/* the three lessons as ratios */
	json_t *l = json_object();
	const bench_device *g = lesson_device(r), *cpu = &r->devs[0];
	double sq = 0, mem = 0, tc = 0;
	if (g) {
		for (size_t i = 0; i < g->n_sumsq; i++) {
			const bench_sumsq *c = sumsq_at(cpu, g->sumsq[i].n);
			if (c && c->cpu1_simd_ms > 0 && g->sumsq[i].dev_ms > 0)
				sq = c->cpu1_simd_ms / g->sumsq[i].dev_ms;
		}
		const bench_fig *gt = bench_find(g, "triad"), *ct = bench_find(cpu, "triad");
		if (gt && ct && ct->value > 0)
			mem = gt->value / ct->value;
		const bench_fig *fma = bench_find(g, "fp32_fma"), *mma = bench_find(g, "mma_bf16");
		if (fma && mma && fma->value > 0 && mma->value > 0)
			tc = mma->value / fma->value;
	}
	json_object_set_new(l, "device", g ? json_string(g->name) : json_null());
	json_object_set_new(l, "sum_of_squares_vs_one_core", sq > 0 ? jreal_round(sq, 2) : json_null());
	json_object_set_new(l, "memory_vs_host", mem > 0 ? jreal_round(mem, 2) : json_null());
	json_object_set_new(l, "tensor_vs_fp32", tc > 0 ? jreal_round(tc, 2) : json_null());
	json_object_set_new(root, "lessons", l);
	return root;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option opts[] = {
		{"quick", no_argument, NULL, 'q'},     {"threads", required_argument, NULL, 't'},
		{"max-n", required_argument, NULL, 'n'}, {"no-cuda", no_argument, NULL, 'C'},
		{"runs", required_argument, NULL, 'r'},
		{"no-opencl", no_argument, NULL, 'O'},  {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
	};
	bench_opts o = {0};
	bool json = false;
	long long v;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o.quick = true;
			break;
		case 't':
			if (parse_int(optarg, 1, 256, &v))
				return usage_error("bench", "invalid --threads '%s' (a number from 1 to 256)", optarg);
			o.threads = (int)v;
			break;
		case 'n': {
			double d;
			if (parse_count(optarg, &d) || d < 1e4 || d > 1e10 || d != floor(d))
				return usage_error("bench", "invalid --max-n '%s' (a whole number from 10000 to 10^10)",
						   optarg);
			o.max_n = (uint64_t)d;
			break;
		}
		case 'r':
			if (parse_int(optarg, 2, 1000, &v))
				return usage_error("bench", "invalid --runs '%s' (a number from 2 to 1000)", optarg);
			o.runs = (int)v;
			break;
		case 'C':
			o.no_cuda = true;
			break;
		case 'O':
			o.no_opencl = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return GW_EXIT_OK;
		case ':':
			return usage_error("bench", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("bench", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("bench", "unexpected argument '%s'", argv[optind]);

	progress_on = isatty(STDERR_FILENO);
	o.progress = progress;
	/* peaks: the PCIe link from NVML, TFLOPS and bandwidth from the catalog */
	hw_snapshot snap = {0};
	hw_opts ho = {.no_procs = true}; /* CUDA too: its ordinals may differ from NVML's order */
	bench_peaks *peaks = NULL;
	char (*from)[2][128] = NULL;
	gw_error kerr = {0};
	kb_gpus_load(&kerr);
	if (!o.no_cuda && hw_snapshot_take(&ho, &snap, NULL) == 0 && snap.n_gpus) {
		from = xcalloc(snap.n_gpus, sizeof *from);
		o.n_peaks = gather_peaks(&snap, &peaks, from);
		o.peaks = peaks;
	}
	bench_report r;
	gw_error err = {0};
	int rc = bench_run(&o, &r, &err);
	progress_done();
	if (rc) {
		gw_errorf("%s", gw_error_text(&err));
		rc = GW_EXIT_RUNTIME;
		goto out;
	}
	bool wrong = false, failed = false;
	for (size_t i = 0; i < r.n_devs; i++) {
		const bench_device *d = &r.devs[i];
		for (size_t k = 0; k < d->n_figs; k++)
			wrong |= d->figs[k].value > 0 && !d->figs[k].validated;
		for (size_t k = 0; k < d->n_sumsq; k++)
			wrong |= !d->sumsq[k].validated;
		failed |= *d->error != 0;
	}
	if (json) {
		json_t *j = report_json(&r, o.quick);
		json_print(j, stdout);
		json_decref(j);
	} else {
		print_first_line(&r);
		print_sumsq(&r);
		for (size_t i = 0; i < r.n_devs; i++)
			print_device(&r.devs[i]);
		if (*r.cuda_note)
			printf("CUDA: %s\n", r.cuda_note);
		if (*r.opencl_note)
			printf("OpenCL: %s\n", r.opencl_note);
		if (*r.cuda_note || *r.opencl_note)
			printf("\n");
		print_lessons(&r);
	}
	rc = wrong ? GW_EXIT_VERDICT4 : failed ? GW_EXIT_RUNTIME : GW_EXIT_OK;
	if (!wrong) { /* plan on this machine reads the measured bandwidth */
		gw_error cerr = {0};
		if (bench_cache_write(&r, GPUWISE_VERSION, &cerr))
			gw_errorf(_("cannot cache the measured bandwidth: %s"), gw_error_text(&cerr));
	}
	bench_report_release(&r);
out:
	free(peaks);
	free(from);
	hw_snapshot_release(&snap);
	return rc;
}

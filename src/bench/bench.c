/*
 * bench.c: runs the CPU, CUDA and OpenCL halves and ties the sum-of-squares
 * series together (the crossover size where a device beats every CPU core).
 */
#include "bench/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bench_fig *bench_fig_add(bench_device *d, const char *id, const char *label, double value, const char *unit)
{
	d->figs = xrealloc(d->figs, (d->n_figs + 1) * sizeof *d->figs);
	bench_fig *f = &d->figs[d->n_figs++];
	memset(f, 0, sizeof *f);
	snprintf(f->id, sizeof f->id, "%s", id);
	snprintf(f->label, sizeof f->label, "%s", label);
	f->value = value;
	f->unit = unit;
	return f;
}

const bench_fig *bench_find(const bench_device *d, const char *id)
{
	for (size_t i = 0; i < d->n_figs; i++)
		if (strcmp(d->figs[i].id, id) == 0)
			return &d->figs[i];
	return NULL;
}

void bench_progress(const bench_opts *o, const char *fmt, ...)
{
	if (!o->progress)
		return;
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	o->progress(o->progress_ctx, buf);
}

/*
 * The smallest measured size from which on the device is faster than every
 * core of the CPU (vectorised) at every larger size too; 0 when it never is.
 */
static uint64_t crossover(const bench_device *dev, const bench_device *cpu)
{
	uint64_t from = 0;
	for (size_t i = 0; i < dev->n_sumsq; i++) {
		const bench_sumsq *s = &dev->sumsq[i];
		double cpu_ms = -1;
		for (size_t k = 0; k < cpu->n_sumsq; k++)
			if (cpu->sumsq[k].n == s->n)
				cpu_ms = cpu->sumsq[k].cpu_all_ms;
		if (s->dev_ms < 0 || cpu_ms < 0)
			continue;
		if (s->dev_ms < cpu_ms) {
			if (!from)
				from = s->n;
		} else {
			from = 0;
		}
	}
	return from;
}

int bench_run(const bench_opts *o, bench_report *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	out->devs = xcalloc(1, sizeof *out->devs);
	out->n_devs = 1;
	bench_device *cpu = &out->devs[0];
	if (o->no_cpu) {
		cpu->kind = BENCH_DEV_CPU;
		snprintf(cpu->name, sizeof cpu->name, "CPU");
		snprintf(cpu->error, sizeof cpu->error, "not measured (--no-cpu)");
	} else {
		bench_cpu(o, cpu, &out->llc_bytes);
	}
	if (!o->no_cuda)
		bench_cuda(o, out);
	else
		snprintf(out->cuda_note, sizeof out->cuda_note, "not used (--no-cuda)");
	if (!o->no_opencl)
		bench_opencl(o, out);
	else
		snprintf(out->opencl_note, sizeof out->opencl_note, "not used (--no-opencl)");
	for (size_t i = 1; i < out->n_devs; i++)
		out->devs[i].crossover_n = crossover(&out->devs[i], &out->devs[0]);
	(void)err;
	return 0;
}

void bench_report_release(bench_report *r)
{
	for (size_t i = 0; i < r->n_devs; i++) {
		free(r->devs[i].figs);
		free(r->devs[i].sumsq);
	}
	free(r->devs);
	memset(r, 0, sizeof *r);
}

/*
 * probe.c: the machine context for explain: the driver and first NVIDIA
 * GPU (a sleeping dGPU is not woken, processes are not read) and the first
 * Python environment with PyTorch (files only, no interpreter is run).
 */
#include "cmd/probe.h"

#include <stdio.h>
#include <string.h>

#include "hw/hw.h"
#include "stack/stack.h"

void probe_take(probe_info *p)
{
	memset(p, 0, sizeof *p);
	p->ctx.cc_major = p->ctx.cc_minor = -1;
	p->ctx.temp_c = p->ctx.power_w = p->ctx.power_limit_w = -1;
	hw_snapshot snap;
	hw_opts ho = {.no_procs = true};
	if (hw_snapshot_take(&ho, &snap, NULL) == 0) {
		if (*snap.driver_version) {
			snprintf(p->driver, sizeof p->driver, "%s", snap.driver_version);
			p->ctx.driver_version = p->driver;
		}
		for (size_t i = 0; i < snap.n_gpus; i++) {
			const hw_gpu *g = &snap.gpus[i];
			if (g->vendor != HW_VENDOR_NVIDIA)
				continue;
			snprintf(p->gpu, sizeof p->gpu, "%s", g->name);
			p->ctx.gpu_name = p->gpu;
			if (HW_VALID(g->cc_major) && HW_VALID(g->cc_minor)) {
				p->ctx.cc_major = (int)g->cc_major.v;
				p->ctx.cc_minor = (int)g->cc_minor.v;
			}
			if (HW_VALID(g->temp_c))
				p->ctx.temp_c = (int)g->temp_c.v;
			if (HW_VALID(g->power_mw))
				p->ctx.power_w = (int)(g->power_mw.v / 1000);
			if (HW_VALID(g->power_limit_mw))
				p->ctx.power_limit_w = (int)(g->power_limit_mw.v / 1000);
			break;
		}
		hw_snapshot_release(&snap);
	}
	stack_info st;
	stack_opts so = {.no_exec = true};
	if (stack_discover(&so, &st, NULL) == 0) {
		for (size_t i = 0; i < st.n_pythons; i++) {
			const stack_python *py = &st.pythons[i];
			if (!py->has_torch)
				continue;
			snprintf(p->torch, sizeof p->torch, "%s", py->torch_version);
			snprintf(p->python, sizeof p->python, "%s", py->exe);
			p->ctx.torch_version = p->torch;
			p->ctx.python = p->python;
			if (*py->torch_cuda) {
				snprintf(p->torch_cuda, sizeof p->torch_cuda, "%s", py->torch_cuda);
				p->ctx.torch_cuda = p->torch_cuda;
			}
			break;
		}
		stack_release(&st);
	}
}

void probe_release(probe_info *p)
{
	memset(p, 0, sizeof *p);
}

/*
 * sched/place: placement policies.  This first version implements the
 * contract with first-fit for every policy; the simulator's work replaces
 * it with the real policies.
 */
#include "sched/place.h"

#include <string.h>

static const char *const policy_names[] = {
	[SCHED_POLICY_EXCLUSIVE] = "exclusive",
	[SCHED_POLICY_FIRST_FIT] = "first-fit",
	[SCHED_POLICY_BEST_FIT] = "best-fit",
	[SCHED_POLICY_FGD] = "fgd",
	[SCHED_POLICY_GPUWISE] = "gpuwise",
};

const char *sched_policy_name(sched_policy p)
{
	if ((size_t)p < sizeof policy_names / sizeof policy_names[0])
		return policy_names[p];
	return "?";
}

int sched_policy_parse(const char *name, sched_policy *p)
{
	for (size_t i = 0; i < sizeof policy_names / sizeof policy_names[0]; i++)
		if (strcmp(name, policy_names[i]) == 0) {
			*p = (sched_policy)i;
			return 0;
		}
	return -1;
}

static bool fits(const sched_gpu *g, const sched_req *r, bool whole)
{
	if (g->unavailable || g->exclusive)
		return false;
	if (whole)
		return g->n_jobs == 0;
	return g->mem_free_bytes >= r->vram_bytes;
}

int sched_place(sched_policy p, const sched_gpu *gpus, size_t n, const sched_req *req,
		const sched_demand *demand, int *out_idx)
{
	(void)demand;
	if (!req || req->n_gpus < 1 || (size_t)req->n_gpus > n)
		return SCHED_EINVAL;
	bool whole = req->exclusive || p == SCHED_POLICY_EXCLUSIVE;
	int got = 0;
	for (size_t i = 0; i < n && got < req->n_gpus; i++)
		if (fits(&gpus[i], req, whole))
			out_idx[got++] = (int)i;
	return got == req->n_gpus ? 0 : SCHED_ENOFIT;
}

void sched_commit(sched_gpu *gpus, const sched_req *req, const int *idx)
{
	for (int i = 0; i < req->n_gpus; i++) {
		sched_gpu *g = &gpus[idx[i]];
		g->n_jobs++;
		if (req->exclusive) {
			g->exclusive = true;
		} else {
			g->mem_free_bytes -= req->vram_bytes <= g->mem_free_bytes ? req->vram_bytes
										   : g->mem_free_bytes;
		}
	}
}

void sched_uncommit(sched_gpu *gpus, const sched_req *req, const int *idx)
{
	for (int i = 0; i < req->n_gpus; i++) {
		sched_gpu *g = &gpus[idx[i]];
		if (g->n_jobs > 0)
			g->n_jobs--;
		if (req->exclusive) {
			g->exclusive = false;
		} else {
			uint64_t room = g->mem_total_bytes - g->mem_free_bytes;
			g->mem_free_bytes += req->vram_bytes <= room ? req->vram_bytes : room;
		}
	}
}

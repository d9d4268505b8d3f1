/*
 * sched/queue: one scheduling pass (admission, order, placement, backfill,
 * preemption of borrowed jobs).  See queue.h for the contract.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/queue.h"
#include "util/util.h"

#define MAX_DEMAND 64

static void res_add(sched_result *res, const sched_decision *d)
{
	res->d = xgrow(res->d, &res->cap, res->n + 1, sizeof *res->d);
	res->d[res->n++] = *d;
}

void sched_result_release(sched_result *res)
{
	free(res->d);
	memset(res, 0, sizeof *res);
}

static uint64_t max_gpu_total(const sched_node_gpu *gpus, size_t n)
{
	uint64_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (gpus[i].n_migs == 0 && gpus[i].mem_total_bytes > m)
			m = gpus[i].mem_total_bytes;
	return m;
}

static const sched_mig *mig_of_profile(const sched_node_gpu *gpus, size_t n, const char *profile)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < gpus[i].n_migs; k++)
			if (profile && strcmp(gpus[i].migs[k].profile, profile) == 0)
				return &gpus[i].migs[k];
	return NULL;
}

/*
 * VRAM charged to the project: the request on each GPU for a shared job,
 * the whole memory of the GPUs for an exclusive one (the largest GPU's,
 * before placement), the instance's memory for a MIG job.
 */
uint64_t sched_gpu_charge(const job_spec *s, const sched_node_gpu *g)
{
	if (!g->n_slots)
		return s->vram_bytes;
	sched_gpu v = {.mem_total_bytes = g->mem_total_bytes, .slot_bytes = g->slot_bytes, .n_slots = g->n_slots};
	sched_req r = {.vram_bytes = s->vram_bytes, .n_gpus = 1};
	return sched_need_bytes(&v, &r);
}

static bool job_placed(const job *j, size_t n_gpus)
{
	if (j->n_placed < 1 || j->n_placed != j->spec.n_gpus || j->n_placed > 16)
		return false;
	for (int k = 0; k < j->n_placed; k++)
		if (j->gpu_idx[k] < 0 || (size_t)j->gpu_idx[k] >= n_gpus)
			return false;
	return true;
}

/* A shared job's charge per GPU: the largest (max) or smallest over its GPUs, or the lower bound. */
static uint64_t shared_charge(const job *j, const sched_node_gpu *gpus, size_t n_gpus, bool max)
{
	const job_spec *s = &j->spec;
	uint64_t best = 0;
	bool any = false;
	if (job_placed(j, n_gpus)) {
		for (int k = 0; k < j->n_placed; k++) {
			uint64_t c = sched_gpu_charge(s, &gpus[j->gpu_idx[k]]);
			if (!any || (max ? c > best : c < best))
				best = c;
			any = true;
		}
		return best;
	}
	for (size_t i = 0; i < n_gpus; i++) {
		if (gpus[i].n_migs || gpus[i].lost)
			continue;
		uint64_t c = sched_gpu_charge(s, &gpus[i]);
		if (c > gpus[i].mem_total_bytes)
			continue; /* it never runs there */
		if (!any || c < best)
			best = c;
		any = true;
	}
	return any ? best : s->vram_bytes;
}

uint64_t sched_job_slot_bytes(const job *j, const sched_node_gpu *gpus, size_t n_gpus)
{
	if (j->spec.mode != JOB_MODE_SHARED || !job_placed(j, n_gpus))
		return j->spec.vram_bytes;
	return shared_charge(j, gpus, n_gpus, false);
}

uint64_t sched_job_vram_bytes(const job *j, const sched_node_gpu *gpus, size_t n_gpus)
{
	const job_spec *s = &j->spec;
	switch (s->mode) {
	case JOB_MODE_SHARED:
		return shared_charge(j, gpus, n_gpus, true) * (uint64_t)s->n_gpus;
	case JOB_MODE_EXCLUSIVE:
		return max_gpu_total(gpus, n_gpus) * (uint64_t)s->n_gpus;
	case JOB_MODE_MIG: {
		const sched_mig *m = mig_of_profile(gpus, n_gpus, s->mig_profile);
		return m ? m->mem_total_bytes : s->vram_bytes;
	}
	}
	return 0;
}

/* GPUs charged to the project: the whole GPUs an exclusive job holds. */
uint64_t sched_job_gpus(const job *j)
{
	return j->spec.mode == JOB_MODE_EXCLUSIVE ? (uint64_t)j->spec.n_gpus : 0;
}

const char *sched_check_fits(const job_spec *s, const sched_node_gpu *gpus, size_t n_gpus,
			     uint64_t context_reserve_bytes, char *buf, size_t n)
{
	char a[32], b[32];
	if (s->n_gpus < 1 || s->n_gpus > 16)
		return N_("a job asks for 1 to 16 GPUs");
	if (s->mode == JOB_MODE_MIG) {
		if (s->n_gpus != 1)
			return N_("a MIG job takes one instance (--gpus 1)");
		if (!mig_of_profile(gpus, n_gpus, s->mig_profile)) {
			snprintf(buf, n, N_("no GPU here has a MIG instance of profile %s"), s->mig_profile);
			return buf;
		}
		return NULL;
	}
	size_t whole = 0, fit = 0, sized = 0;
	for (size_t i = 0; i < n_gpus; i++) {
		if (gpus[i].n_migs || gpus[i].lost)
			continue;
		whole++;
		sized += gpus[i].n_slots > 0;
		uint64_t need = gpus[i].n_slots ? sched_gpu_charge(s, &gpus[i]) : s->vram_bytes + context_reserve_bytes;
		if (gpus[i].mem_total_bytes >= need)
			fit++;
	}
	if ((size_t)s->n_gpus > whole) {
		snprintf(buf, n, N_("this server has %zu usable GPU%s, the job asks for %d"), whole,
			 whole == 1 ? "" : "s", s->n_gpus);
		return buf;
	}
	if (s->mode == JOB_MODE_SHARED && (size_t)s->n_gpus > fit && sized && sized == whole) {
		snprintf(buf, n, N_("no GPU here has %s (the request)"), fmt_bytes(a, sizeof a, s->vram_bytes));
		return buf;
	}
	if (s->mode == JOB_MODE_SHARED && (size_t)s->n_gpus > fit) {
		snprintf(buf, n, N_("no GPU here has %s (the request %s plus a %s context reserve)"),
			 fmt_bytes(a, sizeof a, s->vram_bytes + context_reserve_bytes),
			 fmt_bytes(b, sizeof b, s->vram_bytes),
			 fmt_bytes((char[32]){0}, 32, context_reserve_bytes));
		return buf;
	}
	return NULL;
}

uint64_t sched_round_size(const uint64_t *slot_bytes, size_t n_slots, uint64_t bytes)
{
	for (size_t i = 0; i < n_slots; i++)
		if (slot_bytes[i] >= bytes)
			return slot_bytes[i];
	return bytes;
}

const char *sched_check_quota(const job_spec *s, const sched_project *pr, const sched_project *all,
			      size_t n_all, bool borrowing, const sched_node_gpu *gpus, size_t n_gpus,
			      char *buf, size_t n)
{
	if (!pr)
		return NULL;
	job tmp = {.spec = *s};
	uint64_t req[2] = {sched_job_vram_bytes(&tmp, gpus, n_gpus), sched_job_gpus(&tmp)};
	uint64_t quota[2] = {pr->quota_vram_bytes, pr->quota_gpus};
	for (int d = 0; d < 2; d++) {
		if (quota[d] == SCHED_UNLIMITED || req[d] <= quota[d])
			continue;
		/* with borrowing, the others' quotas may lend the rest (when all are limited) */
		uint64_t room = quota[d];
		bool bounded = true;
		for (size_t i = 0; borrowing && i < n_all; i++) {
			if (&all[i] == pr)
				continue;
			uint64_t q = d == 0 ? all[i].quota_vram_bytes : all[i].quota_gpus;
			if (q == SCHED_UNLIMITED)
				bounded = false;
			else
				room += q;
		}
		if (!bounded || req[d] <= room)
			continue;
		char a[32], b[32], c[32];
		if (d == 0 && s->mode == JOB_MODE_SHARED && req[0] > s->vram_bytes * (uint64_t)s->n_gpus)
			snprintf(buf, n, N_("the job asks for %s of GPU memory, which is charged at least %s here "
				 "(the smallest standard size of any GPU model that holds it), and project %s's VRAM quota is %s%s: "
				 "it could never start"),
				 fmt_bytes(c, sizeof c, s->vram_bytes * (uint64_t)s->n_gpus), fmt_bytes(a, sizeof a, req[0]),
				 pr->name, fmt_bytes(b, sizeof b, quota[0]),
				 borrowing ? N_(" (with all the others' to borrow)") : "");
		else if (d == 0)
			snprintf(buf, n, N_("the job asks for %s of GPU memory and project %s's VRAM quota is %s%s: it could never start"),
				 fmt_bytes(a, sizeof a, req[0]), pr->name, fmt_bytes(b, sizeof b, quota[0]),
				 borrowing ? N_(" (with all the others' to borrow)") : "");
		else
			snprintf(buf, n, N_("the job asks for %llu whole GPUs and project %s's GPU quota is %llu%s: it could never start"),
				 (unsigned long long)req[1], pr->name, (unsigned long long)quota[1],
				 borrowing ? N_(" (with all the others' to borrow)") : "");
		return buf;
	}
	/* a running-job quota of 0 pauses a project: its jobs wait, they are not refused */
	return NULL;
}

/* ---- fair share ----------------------------------------------------------- */

void sched_usage_decay(sched_usage *u, uint64_t now_ms, uint64_t half_life_ms)
{
	if (now_ms <= u->at_ms) {
		if (!u->at_ms)
			u->at_ms = now_ms;
		return;
	}
	if (half_life_ms) {
		double f = exp2(-(double)(now_ms - u->at_ms) / (double)half_life_ms);
		u->vram_byte_s *= f;
		u->gpu_s *= f;
	}
	u->at_ms = now_ms;
}

void sched_usage_add(sched_usage *u, uint64_t vram_bytes, uint64_t n_gpus, uint64_t start_ms,
		     uint64_t end_ms, uint64_t half_life_ms)
{
	uint64_t at = u->at_ms;
	if (!end_ms || end_ms > at)
		end_ms = at;
	if (!start_ms || start_ms >= end_ms)
		return;
	/* the integral of 2^(-(at - t) / H) over [start, end], in seconds */
	double secs;
	if (half_life_ms) {
		double h = (double)half_life_ms / 1000.0 / M_LN2;
		secs = h * (exp2(-(double)(at - end_ms) / (double)half_life_ms) -
			    exp2(-(double)(at - start_ms) / (double)half_life_ms));
	} else {
		secs = (double)(end_ms - start_ms) / 1000.0;
	}
	u->vram_byte_s += (double)vram_bytes * secs;
	u->gpu_s += (double)n_gpus * secs;
}

/*
 * Slurm's classic fair-share factor per project: F = 2^(-U/S), U the
 * project's part of all projects' decayed usage (the mean of its parts of
 * GPU-memory-seconds and of GPU-seconds), S its part of the shares.
 */
void sched_fair_share(sched_project *pr, size_t n, const sched_node_gpu *gpus, size_t n_gpus)
{
	double tot_mem = 0, tot_gpu = 0, tot_w = 0, known_w = 0;
	size_t n_known = 0;
	uint64_t big = max_gpu_total(gpus, n_gpus);
	double *w = xcalloc(n ? n : 1, sizeof *w);
	for (size_t i = 0; i < n; i++) {
		tot_mem += pr[i].usage_vram_byte_s > 0 ? pr[i].usage_vram_byte_s : 0;
		tot_gpu += pr[i].usage_gpu_s > 0 ? pr[i].usage_gpu_s : 0;
		if (pr[i].shares > 0)
			w[i] = pr[i].shares;
		else if (pr[i].quota_vram_bytes != SCHED_UNLIMITED)
			w[i] = (double)pr[i].quota_vram_bytes / (double)GiB;
		else if (pr[i].quota_gpus != SCHED_UNLIMITED)
			w[i] = (double)pr[i].quota_gpus * (double)(big ? big : GiB) / (double)GiB;
		if (w[i] > 0) {
			known_w += w[i];
			n_known++;
		}
	}
	/* a project without a quota or shares gets the mean share of the others */
	for (size_t i = 0; i < n; i++) {
		if (w[i] <= 0 && !(pr[i].shares > 0) && pr[i].quota_vram_bytes == SCHED_UNLIMITED &&
		    pr[i].quota_gpus == SCHED_UNLIMITED)
			w[i] = n_known ? known_w / (double)n_known : 1;
		tot_w += w[i];
	}
	for (size_t i = 0; i < n; i++) {
		double um = tot_mem > 0 ? pr[i].usage_vram_byte_s / tot_mem : -1;
		double ug = tot_gpu > 0 ? pr[i].usage_gpu_s / tot_gpu : -1;
		double u = um >= 0 && ug >= 0 ? (um + ug) / 2 : um >= 0 ? um : ug >= 0 ? ug : 0;
		pr[i].usage_norm = u > 0 ? u : 0;
		pr[i].share_norm = tot_w > 0 ? w[i] / tot_w : 0;
		pr[i].fairshare = pr[i].share_norm > 0 ? exp2(-pr[i].usage_norm / pr[i].share_norm)
						       : (pr[i].usage_norm > 0 ? 0 : 1);
	}
	free(w);
}

/* ---- the pass ----------------------------------------------------------- */

typedef struct pass {
	const sched_config *cfg;
	const sched_node_gpu *node;
	size_t n_gpus;
	sched_gpu *view;          /* placement view, changed as jobs start */
	bool *mig_taken;          /* flat over every GPU's instances */
	size_t *mig_base;
	sched_project *projects;
	size_t n_projects;
	job **running;
	size_t n_running;
	sched_demand demand;
	sched_req demand_reqs[MAX_DEMAND];
	double demand_w[MAX_DEMAND];
	bool reserved[64];
	bool have_reservation;
	/* caches that keep a pass over 10,000 waiting jobs cheap */
	uint64_t *pver;           /* per project: bumped when its use changes */
	uint64_t *qtext_ver;      /* per project and dimension: pver of qtext */
	char (*qtext)[224];       /* "project x is at its VRAM quota: ..." */
	uint64_t *qtext_req;      /* the request qtext names */
	struct {
		uint64_t vram;
		int n_gpus;
		bool exclusive;
		char text[224];
	} fails[32];              /* shapes that found no room since the last change */
	size_t n_fails;
	size_t n_borrowed;        /* running borrowed jobs (possible victims) */
	bool slots;               /* standard sizes: a slot includes the context */
	uint32_t n_pos;           /* queue positions handed out */
} pass;

static sched_project *project_of(pass *p, const job *j)
{
	for (size_t i = 0; i < p->n_projects; i++)
		if (j->spec.project && strcmp(p->projects[i].name, j->spec.project) == 0)
			return &p->projects[i];
	return NULL;
}

static sched_req req_of(const pass *p, const job *j)
{
	sched_req r = {
		.vram_bytes = j->spec.vram_bytes + (p->slots ? 0 : p->cfg->context_reserve_bytes),
		.n_gpus = j->spec.n_gpus,
		.exclusive = j->spec.mode == JOB_MODE_EXCLUSIVE,
	};
	return r;
}

static void set_reason(job *j, const char *text)
{
	if (j->reason && strcmp(j->reason, text) == 0)
		return;
	free(j->reason);
	j->reason = xstrdup(text);
}

/* What j charges when placed on idx[0..n_gpus) (NULL: where it is now). */
static uint64_t charge_on(const pass *p, const job *j, const int *idx)
{
	if (!idx || j->spec.mode != JOB_MODE_SHARED)
		return sched_job_vram_bytes(j, p->node, p->n_gpus);
	job tmp = {.spec = j->spec, .n_placed = j->spec.n_gpus, .mig_idx = -1};
	memcpy(tmp.gpu_idx, idx, sizeof tmp.gpu_idx);
	return sched_job_vram_bytes(&tmp, p->node, p->n_gpus);
}

static void charge_at(pass *p, const job *j, const int *idx, sched_project *pr, int sign)
{
	if (!pr)
		return;
	if (p->pver)
		p->pver[pr - p->projects]++;
	uint64_t v = charge_on(p, j, idx), g = sched_job_gpus(j);
	if (sign > 0) {
		pr->used_vram_bytes += v;
		pr->used_gpus += g;
		pr->used_jobs++;
	} else {
		pr->used_vram_bytes -= v <= pr->used_vram_bytes ? v : pr->used_vram_bytes;
		pr->used_gpus -= g <= pr->used_gpus ? g : pr->used_gpus;
		pr->used_jobs -= pr->used_jobs ? 1 : 0;
	}
}

static void charge(pass *p, const job *j, sched_project *pr, int sign)
{
	charge_at(p, j, NULL, pr, sign);
}

/* Share of a project: its largest used/quota over the limited dimensions. */
static double share_of(const sched_project *pr)
{
	double s = 0;
	if (pr->quota_vram_bytes != SCHED_UNLIMITED && pr->quota_vram_bytes)
		s = (double)pr->used_vram_bytes / (double)pr->quota_vram_bytes;
	if (pr->quota_gpus != SCHED_UNLIMITED && pr->quota_gpus) {
		double g = (double)pr->used_gpus / (double)pr->quota_gpus;
		s = g > s ? g : s;
	}
	if (pr->quota_jobs != SCHED_UNLIMITED && pr->quota_jobs) {
		double g = (double)pr->used_jobs / (double)pr->quota_jobs;
		s = g > s ? g : s;
	}
	return s;
}

enum { ADMIT_NO, ADMIT_NOMINAL, ADMIT_BORROW };

/* What other projects may lend in one dimension (idle quota less what is lent already). */
static int64_t lendable(const pass *p, const sched_project *self, int dim)
{
	int64_t idle = 0, lent = 0;
	for (size_t i = 0; i < p->n_projects; i++) {
		const sched_project *o = &p->projects[i];
		if (o == self)
			continue;
		uint64_t q = dim == 0 ? o->quota_vram_bytes : dim == 1 ? o->quota_gpus : o->quota_jobs;
		uint64_t u = dim == 0 ? o->used_vram_bytes : dim == 1 ? o->used_gpus : o->used_jobs;
		if (q == SCHED_UNLIMITED)
			continue;
		if (q > u)
			idle += (int64_t)(q - u);
		else
			lent += (int64_t)(u - q);
	}
	return idle - lent;
}

/*
 * Kueue-style admission on requested amounts.  Returns ADMIT_*; on ADMIT_NO
 * *why points at words saying which quota is full (cached per project
 * until its use changes).
 */
static int admit_v(pass *p, const job *j, const sched_project *pr, uint64_t vram, const char **why)
{
	uint64_t req[3] = {vram, sched_job_gpus(j), 1};
	uint64_t used[3] = {pr->used_vram_bytes, pr->used_gpus, pr->used_jobs};
	uint64_t quota[3] = {pr->quota_vram_bytes, pr->quota_gpus, pr->quota_jobs};
	static const char *const dim_name[3] = {"VRAM", "GPU", N_("running-job")};
	int verdict = ADMIT_NOMINAL;
	for (int d = 0; d < 3; d++) {
		if (quota[d] == SCHED_UNLIMITED || used[d] + req[d] <= quota[d])
			continue;
		int64_t over = (int64_t)(used[d] + req[d] - quota[d]);
		if (p->cfg->borrowing && over <= lendable(p, pr, d)) {
			verdict = ADMIT_BORROW;
			continue;
		}
		size_t pi = (size_t)(pr - p->projects), k = pi * 3 + (size_t)d;
		char *text = p->qtext[k];
		/* the words name this request too: "55 GiB/60 GiB" alone reads as room for 5 */
		if (p->qtext_ver[k] != p->pver[pi] + 1 || p->qtext_req[k] != req[d]) {
			char a[32], b[32], c[32], e[32];
			if (d == 0)
				snprintf(text, sizeof p->qtext[k],
					 N_("project %s is at its VRAM quota: %s/%s (this job's %s would take it to %s)%s"),
					 pr->name, fmt_bytes(a, sizeof a, used[0]), fmt_bytes(b, sizeof b, quota[0]),
					 fmt_bytes(c, sizeof c, req[0]), fmt_bytes(e, sizeof e, used[0] + req[0]),
					 p->cfg->borrowing ? N_(" and the others have none idle to lend") : "");
			else
				snprintf(text, sizeof p->qtext[k],
					 N_("project %s is at its %s quota: %llu/%llu (this job's %llu would take it to %llu)%s"),
					 pr->name, dim_name[d], (unsigned long long)used[d], (unsigned long long)quota[d],
					 (unsigned long long)req[d], (unsigned long long)(used[d] + req[d]),
					 p->cfg->borrowing ? N_(" and the others have none idle to lend") : "");
			p->qtext_ver[k] = p->pver[pi] + 1;
			p->qtext_req[k] = req[d];
		}
		*why = text;
		return ADMIT_NO;
	}
	return verdict;
}

/* Admission before placement: on the smallest charge the job could have. */
static int admit(pass *p, const job *j, const sched_project *pr, const char **why)
{
	return admit_v(p, j, pr, sched_job_vram_bytes(j, p->node, p->n_gpus), why);
}

/* Free MIG instance of the job's profile, or -1; sets *gpu. */
static int find_mig(pass *p, const job *j, int *gpu)
{
	for (size_t i = 0; i < p->n_gpus; i++) {
		const sched_node_gpu *g = &p->node[i];
		if (g->lost || (p->have_reservation && p->reserved[i]))
			continue;
		for (size_t k = 0; k < g->n_migs; k++)
			if (!p->mig_taken[p->mig_base[i] + k] &&
			    strcmp(g->migs[k].profile, j->spec.mig_profile ? j->spec.mig_profile : "") == 0) {
				*gpu = (int)i;
				return (int)k;
			}
	}
	return -1;
}

/* Place on the view, keeping reserved GPUs out unless ignore_reservation. */
static int place(pass *p, const sched_req *r, bool ignore_reservation, int *idx)
{
	bool saved[64];
	bool hide_reserved = p->have_reservation && !ignore_reservation;
	for (size_t i = 0; i < p->n_gpus; i++) {
		saved[i] = p->view[i].unavailable;
		if ((hide_reserved && p->reserved[i]) || (r->exclusive && p->node[i].foreign))
			p->view[i].unavailable = true;
	}
	int rc = sched_place(p->cfg->policy, p->view, p->n_gpus, r, &p->demand, idx);
	for (size_t i = 0; i < p->n_gpus; i++)
		p->view[i].unavailable = saved[i];
	return rc;
}

/*
 * With standard sizes a shared job's charge is known once it is placed
 * (the size of the GPU model it lands on): check it against the quota,
 * and when it is over, place again on the GPUs whose charge is not.
 * Returns false, *why saying which quota is full, when no such placement
 * exists now; else idx and *verdict are the placement's.
 */
static bool placed_within_quota(pass *p, const job *j, const sched_project *pr, const sched_req *r,
				int *idx, int *verdict, const char **why)
{
	int v = admit_v(p, j, pr, charge_on(p, j, idx), why);
	if (v != ADMIT_NO) {
		*verdict = v;
		return true;
	}
	bool saved[64];
	const char *w;
	for (size_t i = 0; i < p->n_gpus; i++) {
		saved[i] = p->view[i].unavailable;
		uint64_t c = sched_gpu_charge(&j->spec, &p->node[i]) * (uint64_t)j->spec.n_gpus;
		if (admit_v(p, j, pr, c, &w) == ADMIT_NO)
			p->view[i].unavailable = true;
	}
	int tmp[16];
	int rc = place(p, r, false, tmp);
	for (size_t i = 0; i < p->n_gpus; i++)
		p->view[i].unavailable = saved[i];
	if (rc != 0)
		return false;
	v = admit_v(p, j, pr, charge_on(p, j, tmp), &w);
	if (v == ADMIT_NO)
		return false;
	memcpy(idx, tmp, sizeof tmp);
	*verdict = v;
	return true;
}

/* Words for a job that fits its quota but not the GPUs now. */
static void no_room_reason(pass *p, const job *j, char *why, size_t n)
{
	char a[32], b[32];
	sched_req r = req_of(p, j);
	if (j->spec.mode == JOB_MODE_EXCLUSIVE) {
		char list[64] = "";
		size_t l = 0, n_foreign = 0;
		for (size_t i = 0; i < p->n_gpus && l < sizeof list; i++)
			if (p->node[i].foreign && !p->node[i].lost) {
				l += (size_t)snprintf(list + l, sizeof list - l, "%s%zu", n_foreign ? "," : "", i);
				n_foreign++;
			}
		if (n_foreign)
			snprintf(why, n, N_("waiting for %d idle GPU%s (GPU %s: a process outside the queue uses %s)"),
				 r.n_gpus, r.n_gpus == 1 ? "" : "s", list, n_foreign == 1 ? N_("it") : N_("them"));
		else
			snprintf(why, n, N_("waiting for %d idle GPU%s"), r.n_gpus, r.n_gpus == 1 ? "" : "s");
		return;
	}
	/* the least it needs on any GPU (models with standard sizes round it differently) */
	uint64_t need = r.vram_bytes;
	bool any = false;
	for (size_t i = 0; i < p->n_gpus; i++) {
		if (p->node[i].lost || p->node[i].n_migs)
			continue;
		uint64_t x = sched_need_bytes(&p->view[i], &r);
		if (!any || x < need)
			need = x;
		any = true;
	}
	/* the running job whose end frees the most on a GPU that would then fit */
	for (size_t i = 0; i < p->n_running; i++) {
		const job *k = p->running[i];
		if (k->spec.mode == JOB_MODE_MIG)
			continue;
		for (int g = 0; g < k->n_placed; g++) {
			int gi = k->gpu_idx[g];
			if (gi < 0 || (size_t)gi >= p->n_gpus)
				continue;
			/* what the GPU has free once k ends */
			uint64_t after;
			if (k->spec.mode == JOB_MODE_EXCLUSIVE) {
				uint64_t out = p->node[gi].mem_outside_bytes, t = p->node[gi].mem_total_bytes;
				after = t > out ? t - out : 0;
			} else {
				sched_req kr = req_of(p, k);
				after = p->view[gi].mem_free_bytes + sched_need_bytes(&p->view[gi], &kr);
			}
			if (after >= sched_need_bytes(&p->view[gi], &r)) {
				snprintf(why, n, N_("no GPU has %s free; GPU %d frees %s when job %llu ends"),
					 fmt_bytes(a, sizeof a, need), gi, fmt_bytes(b, sizeof b, after),
					 (unsigned long long)k->id);
				return;
			}
		}
	}
	snprintf(why, n, N_("no GPU has %s free"), fmt_bytes(a, sizeof a, need));
}

/*
 * The head job that cannot be placed now holds a reservation: the GPUs it
 * would take if the queue's jobs there ended.  Later jobs may not start on
 * them, so the running jobs drain and the head starts (no starvation).
 */
static void reserve_for(pass *p, const job *j, sched_result *res)
{
	sched_gpu empty[64];
	for (size_t i = 0; i < p->n_gpus; i++) {
		const sched_node_gpu *g = &p->node[i];
		empty[i] = p->view[i];
		empty[i].n_jobs = 0;
		empty[i].exclusive = false;
		uint64_t taken = g->mem_outside_bytes;
		empty[i].mem_free_bytes = g->mem_total_bytes > taken ? g->mem_total_bytes - taken : 0;
		if (j->spec.mode == JOB_MODE_EXCLUSIVE && g->foreign)
			empty[i].unavailable = true;
	}
	sched_req r = req_of(p, j);
	int idx[16];
	if (sched_place(p->cfg->policy, empty, p->n_gpus, &r, NULL, idx) != 0)
		return;
	p->have_reservation = true;
	res->reserved_job = (int64_t)j->id;
	res->n_reserved = r.n_gpus;
	for (int i = 0; i < r.n_gpus; i++) {
		p->reserved[idx[i]] = true;
		res->reserved_gpus[i] = idx[i];
	}
}

/*
 * A job within its project's nominal quota that does not fit: take back
 * what borrowing jobs hold, the most recently started first, until it
 * fits.  Returns true with the preemptions and the start added to res.
 */
static bool reclaim(pass *p, job *j, const sched_project *pr, sched_result *res, int *idx)
{
	size_t n_vict = 0;
	job *vict[64];
	sched_gpu saved[64];
	memcpy(saved, p->view, p->n_gpus * sizeof *saved);
	sched_req r = req_of(p, j);
	bool ok = false;
	for (;;) {
		job *best = NULL;
		for (size_t i = 0; i < p->n_running; i++) {
			job *k = p->running[i];
			if (!k->borrowed || k->spec.mode == JOB_MODE_MIG || k->state != JOB_RUNNING)
				continue;
			if (k->spec.project && strcmp(k->spec.project, pr->name) == 0)
				continue;
			bool taken = false;
			for (size_t v = 0; v < n_vict; v++)
				taken |= vict[v] == k;
			if (taken)
				continue;
			if (!best || k->start_ms > best->start_ms ||
			    (k->start_ms == best->start_ms && k->id > best->id))
				best = k;
		}
		if (!best || n_vict == 64)
			break;
		vict[n_vict++] = best;
		sched_req kr = req_of(p, best);
		sched_uncommit(p->view, &kr, best->gpu_idx);
		if (place(p, &r, true, idx) == 0) {
			/* the GPU found charges its own model's standard size: a
			 * job that would then leave its nominal quota waits rather
			 * than preempt anyone */
			const char *w;
			ok = !p->slots || j->spec.mode != JOB_MODE_SHARED ||
			     admit_v(p, j, pr, charge_on(p, j, idx), &w) == ADMIT_NOMINAL;
			break;
		}
	}
	if (!ok) {
		memcpy(p->view, saved, p->n_gpus * sizeof *saved);
		return false;
	}
	p->n_fails = 0;
	p->n_borrowed -= n_vict <= p->n_borrowed ? n_vict : p->n_borrowed;
	for (size_t v = 0; v < n_vict; v++) {
		sched_decision d = {.action = SCHED_PREEMPT, .job = vict[v], .mig_idx = -1};
		res_add(res, &d);
		/* the victim's project gives back what it held */
		for (size_t i = 0; i < p->n_projects; i++)
			if (vict[v]->spec.project && strcmp(p->projects[i].name, vict[v]->spec.project) == 0)
				charge(p, vict[v], &p->projects[i], -1);
		vict[v]->state = JOB_QUEUED; /* for the rest of this pass only */
	}
	return true;
}

/*
 * A job started in this pass weighs on its project's order as if it had run
 * its expected time; *dv and *dg get what it added (for its user's lane).
 */
static void project_run(pass *p, const job *j, const int *idx, sched_project *pr, double *dv, double *dg)
{
	uint64_t ms = j->spec.time_limit_ms ? j->spec.time_limit_ms : p->cfg->expected_run_ms;
	*dv = *dg = 0;
	if (!ms)
		return;
	double s = (double)ms / 1000.0;
	*dv = (double)charge_on(p, j, idx) * s;
	*dg = (double)j->spec.n_gpus * s;
	pr->usage_vram_byte_s += *dv;
	pr->usage_gpu_s += *dg;
	sched_fair_share(p->projects, p->n_projects, p->node, p->n_gpus);
}

/* Queued jobs grouped by project, then user, each user's in level, priority and submission order. */
static int cmp_job(const void *a, const void *b)
{
	const job *x = *(job *const *)a, *y = *(job *const *)b;
	const char *px = x->spec.project ? x->spec.project : "", *py = y->spec.project ? y->spec.project : "";
	int c = strcmp(px, py);
	if (c)
		return c;
	if (x->spec.uid != y->spec.uid)
		return x->spec.uid < y->spec.uid ? -1 : 1;
	if (x->spec.boost != y->spec.boost)
		return x->spec.boost > y->spec.boost ? -1 : 1;
	if (x->spec.priority != y->spec.priority)
		return x->spec.priority > y->spec.priority ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * One user's waiting jobs in one project (the fair tree's leaf): its
 * decayed usage in that project (from sched_config.user_usage, plus what
 * it starts in this pass) against all of the project's users'.
 */
typedef struct lane {
	size_t head, end;         /* into the sorted queue */
	size_t slot;              /* its project */
	double uv, ug;            /* the user's usage: VRAM-byte-s, GPU-s */
	size_t running;           /* the user's jobs running in the project, and turns taken in this pass */
	double part;              /* lane_part(), kept up to date (compared ~lanes x picks times) */
	/* the head job's fields lane_before() compares, kept beside the lane so the
	 * ~lanes x picks comparisons do not load every head job (set by lane_head()) */
	const job *hj;
	int hboost;
	uint64_t hid;
} lane;

/* Cache the lane's head job (call whenever head or the job at it changes). */
static void lane_head(lane *l, job **queued)
{
	if (l->head < l->end) {
		l->hj = queued[l->head];
		l->hboost = l->hj->spec.boost;
		l->hid = l->hj->id;
	}
}

/* A lane's part of its project's usage: the mean of its parts of VRAM and of GPU time. */
static double lane_part(const lane *l, const double *tv, const double *tg)
{
	double v = tv[l->slot] > 0 ? l->uv / tv[l->slot] : 0, g = tg[l->slot] > 0 ? l->ug / tg[l->slot] : 0;
	return (v + g) / 2;
}

/* Is lane a's head before lane b's inside one project: level, the held job, user usage, submission. */
static bool lane_before(const lane *a, const lane *b, const job *sticky)
{
	if (a->hboost != b->hboost)
		return a->hboost > b->hboost;
	if (a->hj == sticky || b->hj == sticky)
		return a->hj == sticky;
	if (a->part != b->part)
		return a->part < b->part;
	if (a->running != b->running)
		return a->running < b->running;
	return a->hid < b->hid;
}

int sched_pass(const sched_config *cfg, const sched_node_gpu *gpus, size_t n_gpus,
	       sched_project *projects, size_t n_projects, job **jobs, size_t n_jobs,
	       sched_result *res)
{
	char why[256];
	pass p = {.cfg = cfg, .node = gpus, .n_gpus = n_gpus > 64 ? 64 : n_gpus,
		  .projects = projects, .n_projects = n_projects};
	n_gpus = p.n_gpus;
	res->n = 0;
	res->reserved_job = 0;
	res->n_reserved = 0;
	p.view = xcalloc(n_gpus ? n_gpus : 1, sizeof *p.view);
	p.mig_base = xcalloc(n_gpus ? n_gpus : 1, sizeof *p.mig_base);
	size_t n_migs = 0;
	for (size_t i = 0; i < n_gpus; i++) {
		const sched_node_gpu *g = &gpus[i];
		p.mig_base[i] = n_migs;
		n_migs += g->n_migs;
		uint64_t out = g->mem_outside_bytes;
		p.view[i] = (sched_gpu){
			.node = 0, .numa = g->numa, .nvlink_group = g->nvlink_group,
			.pcie_switch = g->pcie_switch, .mem_total_bytes = g->mem_total_bytes,
			.mem_free_bytes = g->mem_total_bytes > out ? g->mem_total_bytes - out : 0,
			.unavailable = g->lost || g->n_migs > 0,
			.slot_bytes = g->slot_bytes, .n_slots = g->n_slots,
		};
		p.slots |= g->n_slots > 0;
	}
	for (size_t i = 0; p.slots && i < n_gpus; i++)
		if (!gpus[i].n_slots)
			p.view[i].context_bytes = cfg->context_reserve_bytes;
	p.mig_taken = xcalloc(n_migs ? n_migs : 1, sizeof *p.mig_taken);
	for (size_t i = 0; i < n_projects; i++)
		projects[i].used_vram_bytes = projects[i].used_gpus = projects[i].used_jobs = 0;
	p.pver = xcalloc(n_projects + 1, sizeof *p.pver);
	p.qtext_ver = xcalloc(n_projects * 3 + 1, sizeof *p.qtext_ver);
	p.qtext = xcalloc(n_projects * 3 + 1, sizeof *p.qtext);
	p.qtext_req = xcalloc(n_projects * 3 + 1, sizeof *p.qtext_req);

	/* running jobs hold their placement and their quota */
	p.running = xcalloc(n_jobs ? n_jobs : 1, sizeof *p.running);
	job **queued = xcalloc(n_jobs ? n_jobs : 1, sizeof *queued);
	size_t n_queued = 0;
	for (size_t i = 0; i < n_jobs; i++) {
		job *j = jobs[i];
		j->queue_pos = 0;
		if (j->state == JOB_RUNNING) {
			p.running[p.n_running++] = j;
			charge(&p, j, project_of(&p, j), +1);
			p.n_borrowed += j->borrowed;
			if (j->spec.mode == JOB_MODE_MIG) {
				int g = j->gpu_idx[0];
				if (j->n_placed == 1 && g >= 0 && (size_t)g < n_gpus && j->mig_idx >= 0 &&
				    (size_t)j->mig_idx < gpus[g].n_migs)
					p.mig_taken[p.mig_base[g] + (size_t)j->mig_idx] = true;
				continue;
			}
			bool valid = j->n_placed == j->spec.n_gpus;
			for (int k = 0; k < j->n_placed; k++)
				valid &= j->gpu_idx[k] >= 0 && (size_t)j->gpu_idx[k] < n_gpus;
			if (valid) {
				sched_req r = req_of(&p, j);
				sched_commit(p.view, &r, j->gpu_idx);
			}
		} else if (j->state == JOB_QUEUED) {
			queued[n_queued++] = j;
		}
	}
	/* jobs waiting on another job, and the demand seen by the policy */
	size_t n_dem = 0;
	uint64_t dem_count[MAX_DEMAND] = {0};
	size_t n_ready = 0;
	for (size_t i = 0; i < n_queued; i++) {
		job *j = queued[i];
		if (j->spec.after_id) {
			bool waiting = false;
			for (size_t k = 0; k < n_jobs; k++)
				if (jobs[k]->id == j->spec.after_id && !job_state_ended(jobs[k]->state))
					waiting = true;
			if (waiting) {
				snprintf(why, sizeof why, N_("waiting for job %llu to end"),
					 (unsigned long long)j->spec.after_id);
				set_reason(j, why);
				continue;
			}
		}
		queued[n_ready++] = j;
		if (j->spec.mode == JOB_MODE_MIG)
			continue;
		sched_req r = req_of(&p, j);
		size_t k = 0;
		while (k < n_dem && !(p.demand_reqs[k].vram_bytes == r.vram_bytes &&
				      p.demand_reqs[k].n_gpus == r.n_gpus &&
				      p.demand_reqs[k].exclusive == r.exclusive))
			k++;
		if (k == n_dem && n_dem < MAX_DEMAND)
			p.demand_reqs[n_dem++] = r;
		if (k < n_dem)
			dem_count[k]++;
	}
	uint64_t dem_total = 0;
	for (size_t k = 0; k < n_dem; k++)
		dem_total += dem_count[k];
	for (size_t k = 0; k < n_dem; k++)
		p.demand_w[k] = dem_total ? (double)dem_count[k] / (double)dem_total : 0;
	p.demand = (sched_demand){.reqs = p.demand_reqs, .weight = p.demand_w, .n = n_dem};

	/* per-user lanes inside each project (the fair tree), each in level, priority, submission order */
	qsort(queued, n_ready, sizeof *queued, cmp_job);
	lane *lanes = xcalloc(n_ready ? n_ready : 1, sizeof *lanes);
	size_t n_lanes = 0;
	size_t *lane_lo = xcalloc(n_projects + 1, sizeof *lane_lo);
	size_t *lane_hi = xcalloc(n_projects + 1, sizeof *lane_hi);
	double *tv = xcalloc(n_projects + 1, sizeof *tv), *tg = xcalloc(n_projects + 1, sizeof *tg);
	for (size_t i = 0; i < n_ready;) {
		sched_project *pr = project_of(&p, queued[i]);
		size_t slot = pr ? (size_t)(pr - projects) : n_projects;
		size_t k = i;
		while (k < n_ready && project_of(&p, queued[k]) == pr)
			k++;
		if (slot == n_projects) {
			for (size_t m = i; m < k; m++) {
				snprintf(why, sizeof why, N_("project %s does not exist (any more)"),
					 queued[m]->spec.project ? queued[m]->spec.project : "?");
				set_reason(queued[m], why);
			}
		} else {
			lane_lo[slot] = n_lanes;
			for (size_t m = i; m < k;) {
				size_t e = m;
				while (e < k && queued[e]->spec.uid == queued[m]->spec.uid)
					e++;
				lanes[n_lanes++] = (lane){.head = m, .end = e, .slot = slot};
				m = e;
			}
			lane_hi[slot] = n_lanes;
		}
		i = k;
	}
	/* what each user runs now, and their usage inside the project against all its users' */
	for (size_t r = 0; r < p.n_running; r++) {
		const job *j = p.running[r];
		sched_project *pr = project_of(&p, j);
		if (!pr)
			continue;
		size_t s = (size_t)(pr - projects);
		for (size_t l = lane_lo[s]; l < lane_hi[s]; l++)
			if (queued[lanes[l].head]->spec.uid == j->spec.uid) {
				lanes[l].running++;
				break;
			}
	}
	for (size_t u = 0; u < cfg->n_user_usage; u++) {
		const sched_user_usage *uu = &cfg->user_usage[u];
		size_t s = 0;
		while (s < n_projects && (!uu->project || strcmp(projects[s].name, uu->project)))
			s++;
		if (s == n_projects)
			continue;
		tv[s] += uu->vram_byte_s > 0 ? uu->vram_byte_s : 0;
		tg[s] += uu->gpu_s > 0 ? uu->gpu_s : 0;
		for (size_t l = lane_lo[s]; l < lane_hi[s]; l++)
			if (queued[lanes[l].head]->spec.uid == uu->uid) {
				lanes[l].uv += uu->vram_byte_s > 0 ? uu->vram_byte_s : 0;
				lanes[l].ug += uu->gpu_s > 0 ? uu->gpu_s : 0;
				break;
			}
	}

	for (size_t l = 0; l < n_lanes; l++)
		lanes[l].part = lane_part(&lanes[l], tv, tg);
	sched_fair_share(projects, n_projects, gpus, n_gpus);
	/* the job the GPUs were held for last pass goes first in its user's lane */
	job *sticky = NULL;
	for (size_t i = 0; cfg->prev_reserved_job && i < n_ready; i++)
		if (queued[i]->id == cfg->prev_reserved_job) {
			sched_project *pr = project_of(&p, queued[i]);
			if (!pr)
				break;
			size_t slot = (size_t)(pr - projects), l = lane_lo[slot];
			while (l < lane_hi[slot] && !(lanes[l].head <= i && i < lanes[l].end))
				l++;
			if (l == lane_hi[slot])
				break;
			const job *h = queued[lanes[l].head];
			if (h->spec.boost > queued[i]->spec.boost ||
			    (h->spec.boost == queued[i]->spec.boost && h->spec.priority > queued[i]->spec.priority))
				break;
			/* only when it can start now: else the reservation is decided anew */
			const char *qwhy;
			sched_req r = req_of(&p, queued[i]);
			int idx[16], g;
			if (admit(&p, queued[i], pr, &qwhy) == ADMIT_NO ||
			    (queued[i]->spec.mode == JOB_MODE_MIG ? find_mig(&p, queued[i], &g) < 0
								  : place(&p, &r, true, idx) != 0))
				break;
			sticky = queued[i];
			size_t h0 = lanes[l].head;
			memmove(&queued[h0 + 1], &queued[h0], (i - h0) * sizeof *queued);
			queued[h0] = sticky;
			break;
		}
	for (size_t l = 0; l < n_lanes; l++)
		lane_head(&lanes[l], queued);
	double *saved_usage = xcalloc(2 * n_projects + 1, sizeof *saved_usage);
	for (size_t i = 0; i < n_projects; i++) {
		saved_usage[2 * i] = projects[i].usage_vram_byte_s;
		saved_usage[2 * i + 1] = projects[i].usage_gpu_s;
	}

	for (;;) {
		/*
		 * The next job, as a fair tree: the level (an administrator's
		 * priority, else 0), then the job holding the GPUs from the last
		 * pass, then between projects their fair-share factor (decayed
		 * usage against shares) and their share of their quota in use now,
		 * inside a project each user's part of its usage; then submission.
		 * A user's own --priority orders only that user's lane.
		 */
		size_t best = SIZE_MAX, best_lane = SIZE_MAX;
		double best_share = 0;
		for (size_t s = 0; s < n_projects; s++) {
			size_t bl = SIZE_MAX;
			for (size_t l = lane_lo[s]; l < lane_hi[s]; l++)
				if (lanes[l].head < lanes[l].end &&
				    (bl == SIZE_MAX || lane_before(&lanes[l], &lanes[bl], sticky)))
					bl = l;
			if (bl == SIZE_MAX)
				continue;
			job *j = queued[lanes[bl].head];
			double sh = share_of(&projects[s]);
			if (best == SIZE_MAX)
				goto take;
			job *b = queued[lanes[best_lane].head];
			if (j->spec.boost != b->spec.boost) {
				if (j->spec.boost > b->spec.boost)
					goto take;
				continue;
			}
			if (b == sticky)
				continue;
			if (j == sticky)
				goto take;
			if (projects[s].fairshare != projects[best].fairshare) {
				if (projects[s].fairshare > projects[best].fairshare)
					goto take;
				continue;
			}
			if (sh != best_share) {
				if (sh < best_share)
					goto take;
				continue;
			}
			if (j->id < b->id)
				goto take;
			continue;
		take:
			best = s;
			best_lane = bl;
			best_share = sh;
		}
		if (best == SIZE_MAX)
			break;
		lane *ln = &lanes[best_lane];
		job *j = queued[ln->head++];
		lane_head(ln, queued);
		if (j == sticky)
			sticky = NULL;
		double dv, dg;
		/* a turn taken, started or not: the project's next position goes to its next user */
		ln->running++;
		j->queue_pos = ++p.n_pos; /* taken back below when it starts */
		sched_project *pr = &projects[best];
		const char *qwhy = NULL;
		int verdict = admit(&p, j, pr, &qwhy);
		if (verdict == ADMIT_NO) {
			set_reason(j, qwhy);
			continue;
		}
		sched_decision d = {.action = SCHED_START, .job = j, .mig_idx = -1,
				    .borrowed = verdict == ADMIT_BORROW};
		if (j->spec.mode == JOB_MODE_MIG) {
			int g = -1;
			int k = find_mig(&p, j, &g);
			if (k < 0) {
				snprintf(why, sizeof why, N_("no free MIG instance of profile %s"),
					 j->spec.mig_profile ? j->spec.mig_profile : "?");
				set_reason(j, why);
				continue;
			}
			p.mig_taken[p.mig_base[g] + (size_t)k] = true;
			d.gpu_idx[0] = g;
			d.n_gpus = 1;
			d.mig_idx = k;
			j->queue_pos = 0;
			p.n_pos--;
			charge(&p, j, pr, +1);
			res_add(res, &d);
			project_run(&p, j, NULL, pr, &dv, &dg);
			ln->uv += dv, ln->ug += dg, tv[best] += dv, tg[best] += dg;
			for (size_t l = lane_lo[best]; (dv || dg) && l < lane_hi[best]; l++)
				lanes[l].part = lane_part(&lanes[l], tv, tg);
			continue;
		}
		sched_req r = req_of(&p, j);
		/* a shape that found no room since the last change finds none now */
		size_t hit = SIZE_MAX, exact = SIZE_MAX;
		for (size_t f = 0; f < p.n_fails; f++)
			if (p.fails[f].n_gpus == r.n_gpus && p.fails[f].exclusive == r.exclusive &&
			    (r.exclusive || p.fails[f].vram <= r.vram_bytes)) {
				hit = f;
				if (r.exclusive || p.fails[f].vram == r.vram_bytes)
					exact = f;
			}
		int rc = hit != SIZE_MAX ? SCHED_ENOFIT : place(&p, &r, false, d.gpu_idx);
		if (rc == 0 && p.slots && j->spec.mode == JOB_MODE_SHARED &&
		    !placed_within_quota(&p, j, pr, &r, d.gpu_idx, &verdict, &qwhy)) {
			set_reason(j, qwhy);
			continue;
		}
		if (rc != 0 && verdict == ADMIT_NOMINAL && cfg->borrowing && p.n_borrowed &&
		    reclaim(&p, j, pr, res, d.gpu_idx))
			rc = 0;
		if (rc != 0) {
			if (exact != SIZE_MAX) {
				snprintf(why, sizeof why, "%s", p.fails[exact].text);
			} else {
				no_room_reason(&p, j, why, sizeof why);
				if (p.n_fails < sizeof p.fails / sizeof *p.fails) {
					p.fails[p.n_fails].vram = r.vram_bytes;
					p.fails[p.n_fails].n_gpus = r.n_gpus;
					p.fails[p.n_fails].exclusive = r.exclusive;
					snprintf(p.fails[p.n_fails].text, sizeof p.fails[p.n_fails].text, "%s", why);
					p.n_fails++;
				}
			}
			if (!p.have_reservation) {
				reserve_for(&p, j, res);
				if (p.have_reservation) {
					size_t l = strlen(why);
					snprintf(why + l, sizeof why - l, N_(" (GPUs are held for it)"));
				}
			}
			set_reason(j, why);
			continue;
		}
		d.n_gpus = r.n_gpus;
		j->queue_pos = 0;
		p.n_pos--;
		d.borrowed = verdict == ADMIT_BORROW;
		sched_commit(p.view, &r, d.gpu_idx);
		p.n_fails = 0;
		charge_at(&p, j, d.gpu_idx, pr, +1);
		res_add(res, &d);
		project_run(&p, j, d.gpu_idx, pr, &dv, &dg);
		ln->uv += dv, ln->ug += dg, tv[best] += dv, tg[best] += dg;
			for (size_t l = lane_lo[best]; (dv || dg) && l < lane_hi[best]; l++)
				lanes[l].part = lane_part(&lanes[l], tv, tg);
	}
	for (size_t i = 0; i < n_projects; i++) {
		projects[i].usage_vram_byte_s = saved_usage[2 * i];
		projects[i].usage_gpu_s = saved_usage[2 * i + 1];
	}
	sched_fair_share(projects, n_projects, gpus, n_gpus);
	free(saved_usage);
	/* victims return to the queue; the caller requeues them */
	for (size_t i = 0; i < res->n; i++)
		if (res->d[i].action == SCHED_PREEMPT)
			res->d[i].job->state = JOB_RUNNING;
	free(lanes);
	free(lane_lo);
	free(lane_hi);
	free(tv);
	free(tg);
	free(queued);
	free(p.running);
	free(p.pver);
	free(p.qtext_ver);
	free(p.qtext);
	free(p.qtext_req);
	free(p.mig_taken);
	free(p.mig_base);
	free(p.view);
	return 0;
}

/* ---- estimated start times ------------------------------------------------ */

typedef struct est_end {
	uint64_t at_ms;
	const job *j;
	int idx[16];
	sched_req r;
} est_end;

static int cmp_pos(const void *a, const void *b)
{
	const job *x = *(job *const *)a, *y = *(job *const *)b;
	return (x->queue_pos > y->queue_pos) - (x->queue_pos < y->queue_pos);
}

void sched_estimate(const sched_config *cfg, const sched_node_gpu *gpus, size_t n_gpus,
		    const sched_project *projects, size_t n_projects, job **jobs, size_t n_jobs,
		    uint64_t now_ms, size_t max_jobs)
{
	if (n_gpus > 64)
		n_gpus = 64;
	pass p = {.cfg = cfg, .node = gpus, .n_gpus = n_gpus};
	sched_gpu view[64];
	for (size_t i = 0; i < n_gpus; i++) {
		const sched_node_gpu *g = &gpus[i];
		uint64_t out = g->mem_outside_bytes;
		view[i] = (sched_gpu){.numa = g->numa, .nvlink_group = g->nvlink_group,
				      .pcie_switch = g->pcie_switch, .mem_total_bytes = g->mem_total_bytes,
				      .mem_free_bytes = g->mem_total_bytes > out ? g->mem_total_bytes - out : 0,
				      .unavailable = g->lost || g->n_migs > 0,
				      .slot_bytes = g->slot_bytes, .n_slots = g->n_slots};
		p.slots |= g->n_slots > 0;
	}
	for (size_t i = 0; p.slots && i < n_gpus; i++)
		if (!gpus[i].n_slots)
			view[i].context_bytes = cfg->context_reserve_bytes;
	uint64_t *used = xcalloc(n_projects * 3 + 1, sizeof *used);
	est_end *ends = xcalloc(n_jobs + 1, sizeof *ends);
	size_t n_ends = 0;
	job **wait = xcalloc(n_jobs + 1, sizeof *wait);
	size_t n_wait = 0;
	for (size_t i = 0; i < n_jobs; i++) {
		job *j = jobs[i];
		j->est_start_ms = 0;
		const sched_project *pr = NULL;
		for (size_t k = 0; k < n_projects; k++)
			if (j->spec.project && strcmp(projects[k].name, j->spec.project) == 0)
				pr = &projects[k];
		if (j->state == JOB_QUEUED && j->queue_pos)
			wait[n_wait++] = j;
		if (j->state != JOB_RUNNING || j->spec.mode == JOB_MODE_MIG)
			continue;
		est_end *e = &ends[n_ends++];
		e->j = j;
		e->r = req_of(&p, j);
		e->at_ms = j->spec.time_limit_ms ? j->start_ms + j->spec.time_limit_ms : UINT64_MAX;
		if (e->at_ms != UINT64_MAX && e->at_ms < now_ms)
			e->at_ms = now_ms;
		bool valid = j->n_placed == j->spec.n_gpus;
		for (int k = 0; k < j->n_placed; k++)
			valid &= j->gpu_idx[k] >= 0 && (size_t)j->gpu_idx[k] < n_gpus;
		if (valid) {
			memcpy(e->idx, j->gpu_idx, sizeof e->idx);
			sched_commit(view, &e->r, e->idx);
		} else {
			n_ends--;
			continue;
		}
		if (pr) {
			size_t k = (size_t)(pr - projects) * 3;
			used[k] += sched_job_vram_bytes(j, gpus, n_gpus);
			used[k + 1] += sched_job_gpus(j);
			used[k + 2]++;
		}
	}
	qsort(wait, n_wait, sizeof *wait, cmp_pos);
	uint64_t t = now_ms;
	for (size_t w = 0; w < n_wait && w < max_jobs; w++) {
		job *j = wait[w];
		if (j->spec.mode == JOB_MODE_MIG)
			break;
		const sched_project *pr = NULL;
		for (size_t k = 0; k < n_projects; k++)
			if (j->spec.project && strcmp(projects[k].name, j->spec.project) == 0)
				pr = &projects[k];
		if (!pr)
			break;
		size_t pk = (size_t)(pr - projects) * 3;
		sched_req r = req_of(&p, j);
		uint64_t need[3] = {sched_job_vram_bytes(j, gpus, n_gpus), sched_job_gpus(j), 1};
		uint64_t quota[3] = {pr->quota_vram_bytes, pr->quota_gpus, pr->quota_jobs};
		int idx[16];
		bool placed = false;
		for (;;) {
			/* what has ended by t gives its GPUs and quota back */
			for (size_t e = 0; e < n_ends; e++)
				if (ends[e].at_ms <= t && ends[e].j) {
					sched_uncommit(view, &ends[e].r, ends[e].idx);
					for (size_t k = 0; k < n_projects; k++)
						if (ends[e].j->spec.project && strcmp(projects[k].name, ends[e].j->spec.project) == 0) {
							used[k * 3] -= sched_job_vram_bytes(ends[e].j, gpus, n_gpus);
							used[k * 3 + 1] -= sched_job_gpus(ends[e].j);
							used[k * 3 + 2]--;
						}
					ends[e].j = NULL;
				}
			bool fits_quota = true;
			for (int d = 0; d < 3; d++)
				fits_quota &= quota[d] == SCHED_UNLIMITED || used[pk + d] + need[d] <= quota[d];
			bool saved[64];
			for (size_t i = 0; i < n_gpus; i++) {
				saved[i] = view[i].unavailable;
				if (r.exclusive && gpus[i].foreign)
					view[i].unavailable = true;
			}
			if (fits_quota && sched_place(cfg->policy, view, n_gpus, &r, NULL, idx) == 0)
				placed = true;
			for (size_t i = 0; i < n_gpus; i++)
				view[i].unavailable = saved[i];
			if (placed)
				break;
			uint64_t next = UINT64_MAX;
			for (size_t e = 0; e < n_ends; e++)
				if (ends[e].j && ends[e].at_ms > t && ends[e].at_ms < next)
					next = ends[e].at_ms;
			if (next == UINT64_MAX)
				break;
			t = next;
		}
		if (!placed)
			break; /* unknown from here on */
		j->est_start_ms = t;
		est_end *e = &ends[n_ends++];
		e->j = j;
		e->r = r;
		memcpy(e->idx, idx, sizeof e->idx);
		e->at_ms = j->spec.time_limit_ms ? t + j->spec.time_limit_ms : UINT64_MAX;
		sched_commit(view, &r, idx);
		used[pk] += need[0];
		used[pk + 1] += need[1];
		used[pk + 2]++;
	}
	free(used);
	free(ends);
	free(wait);
}

void sched_gpu_reserved(job *const *jobs, size_t n_jobs, const sched_node_gpu *gpus, size_t n_gpus,
			uint64_t context_reserve_bytes, uint64_t *out)
{
	bool slots = false;
	for (size_t i = 0; i < n_gpus; i++) {
		out[i] = 0;
		slots |= gpus[i].n_slots > 0;
	}
	for (size_t i = 0; i < n_jobs; i++) {
		const job *j = jobs[i];
		if (j->state != JOB_RUNNING)
			continue;
		if (j->spec.mode == JOB_MODE_MIG) {
			int g = j->gpu_idx[0];
			if (j->n_placed == 1 && g >= 0 && (size_t)g < n_gpus && j->mig_idx >= 0 &&
			    (size_t)j->mig_idx < gpus[g].n_migs)
				out[g] += gpus[g].migs[j->mig_idx].mem_total_bytes;
			continue;
		}
		sched_req r = {
			.vram_bytes = j->spec.vram_bytes + (slots ? 0 : context_reserve_bytes),
			.n_gpus = j->spec.n_gpus,
			.exclusive = j->spec.mode == JOB_MODE_EXCLUSIVE,
		};
		for (int k = 0; k < j->n_placed && k < 16; k++) {
			int x = j->gpu_idx[k];
			if (x < 0 || (size_t)x >= n_gpus)
				continue;
			const sched_node_gpu *g = &gpus[x];
			sched_gpu v = {
				.mem_total_bytes = g->mem_total_bytes, .slot_bytes = g->slot_bytes, .n_slots = g->n_slots,
				.context_bytes = slots && !g->n_slots ? context_reserve_bytes : 0,
			};
			out[x] += r.exclusive ? g->mem_total_bytes : sched_need_bytes(&v, &r);
		}
	}
	for (size_t i = 0; i < n_gpus; i++)
		if (out[i] > gpus[i].mem_total_bytes)
			out[i] = gpus[i].mem_total_bytes;
}

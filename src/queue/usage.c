/*
 * queue/usage: each project's decayed past usage for fair share.  Nothing
 * of it is stored apart: it is recomputed at start from the jobs the state
 * database keeps (their request, start and end), so it survives a restart
 * and cannot disagree with the jobs; ended runs are then added as they
 * end, and running jobs count up to now at each pass.
 */
#include <stdlib.h>
#include <string.h>

#include "queue/daemon_int.h"

static sched_usage *usage_of(qd *d, const char *project)
{
	for (size_t i = 0; i < d->n_usage; i++)
		if (strcmp(d->usage_names[i], project) == 0)
			return &d->usage[i];
	size_t cap = d->n_usage, cap2 = d->n_usage;
	d->usage_names = xgrow(d->usage_names, &cap, d->n_usage + 1, sizeof *d->usage_names);
	d->usage = xgrow(d->usage, &cap2, d->n_usage + 1, sizeof *d->usage);
	d->usage_names[d->n_usage] = xstrdup(project);
	d->usage[d->n_usage] = (sched_usage){0, 0, wall_ms()};
	return &d->usage[d->n_usage++];
}

static sched_usage *user_usage_of(qd *d, const char *project, uint32_t uid)
{
	for (size_t i = 0; i < d->n_user_usage; i++)
		if (d->user_usage[i].uid == uid && strcmp(d->user_usage[i].project, project) == 0)
			return &d->user_decayed[i];
	size_t cap = d->cap_user_usage;
	d->user_usage = xgrow(d->user_usage, &d->cap_user_usage, d->n_user_usage + 1, sizeof *d->user_usage);
	d->user_decayed = xgrow(d->user_decayed, &cap, d->n_user_usage + 1, sizeof *d->user_decayed);
	d->user_usage[d->n_user_usage] = (sched_user_usage){.project = xstrdup(project), .uid = uid};
	d->user_decayed[d->n_user_usage] = (sched_usage){0, 0, wall_ms()};
	return &d->user_decayed[d->n_user_usage++];
}

/* What a run charges: its VRAM (sched_job_vram_bytes) and the GPUs it held. */
static void add_run(qd *d, sched_usage *u, const job *j, uint64_t end_ms)
{
	uint64_t n = j->n_placed > 0 ? (uint64_t)j->n_placed : (uint64_t)j->spec.n_gpus;
	sched_usage_add(u, sched_job_vram_bytes(j, d->gpus, d->n_gpus), n, j->start_ms, end_ms,
			d->cfg.fairshare_half_life_ms);
}

void qd_usage_ended(qd *d, const job *j)
{
	if (!j->start_ms || !j->spec.project)
		return;
	sched_usage *u = usage_of(d, j->spec.project);
	uint64_t end = j->end_ms ? j->end_ms : wall_ms();
	sched_usage_decay(u, wall_ms(), d->cfg.fairshare_half_life_ms);
	add_run(d, u, j, end);
	u = user_usage_of(d, j->spec.project, j->spec.uid);
	sched_usage_decay(u, wall_ms(), d->cfg.fairshare_half_life_ms);
	add_run(d, u, j, end);
	double ms = end > j->start_ms ? (double)(end - j->start_ms) : 0;
	d->mean_run_ms = d->mean_run_ms > 0 ? d->mean_run_ms + (ms - d->mean_run_ms) / 16 : ms;
}

sched_config qd_sched_config(qd *d)
{
	return (sched_config){.policy = d->cfg.policy, .borrowing = d->cfg.borrowing,
			      .context_reserve_bytes = d->cfg.context_reserve_bytes,
			      .prev_reserved_job = d->reserved_job, .expected_run_ms = (uint64_t)d->mean_run_ms};
}

static void load_one(void *ctx, const job *j)
{
	qd *d = ctx;
	if (!j->spec.project)
		return;
	add_run(d, usage_of(d, j->spec.project), j, j->end_ms);
	add_run(d, user_usage_of(d, j->spec.project, j->spec.uid), j, j->end_ms);
	double ms = j->end_ms > j->start_ms ? (double)(j->end_ms - j->start_ms) : 0;
	d->mean_run_ms = d->mean_run_ms > 0 ? d->mean_run_ms + (ms - d->mean_run_ms) / 16 : ms;
}

void qd_usage_load(qd *d)
{
	uint64_t now = wall_ms(), h = d->cfg.fairshare_half_life_ms;
	/* after 30 half-lives a run weighs less than 1e-9 of what it did */
	uint64_t since = h && now > 30 * h ? now - 30 * h : 0;
	gw_error e;
	if (store_each_ran_since(d->st, since, load_one, d, &e))
		qd_log(d, "fair share: cannot read the past usage: %s", e.msg);
}

sched_project *qd_quota_projects(qd *d, size_t *n)
{
	sched_project *pr = xcalloc(d->n_projects + 1, sizeof *pr);
	size_t np = 0;
	bool have_default = false;
	for (size_t i = 0; i < d->n_projects; i++) {
		pr[np++] = (sched_project){.name = d->projects[i].name, .quota_vram_bytes = d->projects[i].vram_bytes,
					   .quota_gpus = d->projects[i].gpus, .quota_jobs = d->projects[i].jobs};
		have_default |= strcmp(d->projects[i].name, "default") == 0;
	}
	if (!have_default)
		pr[np++] = (sched_project){.name = "default", .quota_vram_bytes = SCHED_UNLIMITED,
					   .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED};
	*n = np;
	return pr;
}

sched_project *qd_sched_projects(qd *d, size_t *n)
{
	size_t np;
	sched_project *pr = qd_quota_projects(d, &np);
	uint64_t now = wall_ms();
	sched_usage *run = xcalloc(np + 1, sizeof *run);
	for (size_t i = 0; i < np; i++) {
		sched_usage *u = usage_of(d, pr[i].name);
		sched_usage_decay(u, now, d->cfg.fairshare_half_life_ms);
		run[i] = *u;
	}
	/* running jobs count up to now */
	for (size_t k = 0; k < d->n_jobs; k++) {
		const job *j = &d->jobs[k]->j;
		if (j->state != JOB_RUNNING || !j->spec.project)
			continue;
		for (size_t i = 0; i < np; i++)
			if (strcmp(j->spec.project, pr[i].name) == 0) {
				add_run(d, &run[i], j, now);
				break;
			}
	}
	for (size_t i = 0; i < np; i++) {
		pr[i].usage_vram_byte_s = run[i].vram_byte_s;
		pr[i].usage_gpu_s = run[i].gpu_s;
	}
	free(run);
	sched_fair_share(pr, np, d->gpus, d->n_gpus);
	*n = np;
	return pr;
}

void qd_sched_users(qd *d, sched_config *cfg)
{
	uint64_t now = wall_ms();
	/* running jobs' users first get a row, so that the copy below has them all */
	for (size_t k = 0; k < d->n_jobs; k++) {
		const job *j = &d->jobs[k]->j;
		if (j->state == JOB_RUNNING && j->spec.project)
			user_usage_of(d, j->spec.project, j->spec.uid);
	}
	sched_user_usage *u = xcalloc(d->n_user_usage + 1, sizeof *u);
	sched_usage *run = xcalloc(d->n_user_usage + 1, sizeof *run);
	for (size_t i = 0; i < d->n_user_usage; i++) {
		sched_usage_decay(&d->user_decayed[i], now, d->cfg.fairshare_half_life_ms);
		run[i] = d->user_decayed[i];
	}
	for (size_t k = 0; k < d->n_jobs; k++) {
		const job *j = &d->jobs[k]->j;
		if (j->state != JOB_RUNNING || !j->spec.project)
			continue;
		for (size_t i = 0; i < d->n_user_usage; i++)
			if (d->user_usage[i].uid == j->spec.uid && !strcmp(d->user_usage[i].project, j->spec.project)) {
				add_run(d, &run[i], j, now);
				break;
			}
	}
	for (size_t i = 0; i < d->n_user_usage; i++)
		u[i] = (sched_user_usage){.project = d->user_usage[i].project, .uid = d->user_usage[i].uid,
					  .vram_byte_s = run[i].vram_byte_s, .gpu_s = run[i].gpu_s};
	free(run);
	cfg->user_usage = u;
	cfg->n_user_usage = d->n_user_usage;
}

void qd_sched_users_free(sched_config *cfg)
{
	free((void *)cfg->user_usage);
	cfg->user_usage = NULL;
	cfg->n_user_usage = 0;
}

void qd_usage_free(qd *d)
{
	for (size_t i = 0; i < d->n_user_usage; i++)
		free((char *)d->user_usage[i].project);
	free(d->user_usage);
	free(d->user_decayed);
	d->user_usage = NULL;
	d->user_decayed = NULL;
	d->n_user_usage = d->cap_user_usage = 0;
	for (size_t i = 0; i < d->n_usage; i++)
		free(d->usage_names[i]);
	free(d->usage_names);
	free(d->usage);
	d->usage_names = NULL;
	d->usage = NULL;
	d->n_usage = 0;
}

/*
 * Unit tests for sched/queue (one scheduling pass: admission on quotas,
 * borrowing and preemption, order, backfill with a reservation, MIG) and
 * queue/proto (request validation).  The placement policy itself is
 * sched/place's; these tests assert what holds under any correct policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/proto.h"
#include "sched/queue.h"
#include "util/util.h"

#define RES (512 * MiB)

static job *mk(uint64_t id, const char *project, job_mode mode, uint64_t vram_gib, int n_gpus, int prio)
{
	job *j = xcalloc(1, sizeof *j);
	j->id = id;
	j->state = JOB_QUEUED;
	j->mig_idx = -1;
	j->spec.project = xstrdup(project);
	j->spec.mode = mode;
	j->spec.vram_bytes = vram_gib * GiB;
	j->spec.n_gpus = n_gpus;
	j->spec.priority = prio;
	j->submit_ms = id;
	return j;
}

static void free_jobs(job **jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		job_release(jobs[i]);
		free(jobs[i]);
	}
}

static void node(sched_node_gpu *g, size_t n, uint64_t gib)
{
	memset(g, 0, n * sizeof *g);
	for (size_t i = 0; i < n; i++) {
		snprintf(g[i].uuid, sizeof g[i].uuid, "GPU-%zu", i);
		g[i].mem_total_bytes = gib * GiB;
		g[i].numa = g[i].nvlink_group = g[i].pcie_switch = -1;
	}
}

/* Apply the starts of a pass to the jobs, as the daemon does. */
static size_t apply(sched_result *r, uint64_t t)
{
	size_t started = 0;
	for (size_t i = 0; i < r->n; i++) {
		job *j = r->d[i].job;
		if (r->d[i].action != SCHED_START)
			continue;
		j->state = JOB_RUNNING;
		j->n_placed = r->d[i].n_gpus;
		memcpy(j->gpu_idx, r->d[i].gpu_idx, sizeof j->gpu_idx);
		j->mig_idx = r->d[i].mig_idx;
		j->borrowed = r->d[i].borrowed;
		j->start_ms = t;
		started++;
	}
	return started;
}

/* The requests placed on each GPU never exceed its memory. */
static void assert_no_overcommit(job **jobs, size_t n, const sched_node_gpu *g, size_t n_gpus)
{
	for (size_t k = 0; k < n_gpus; k++) {
		uint64_t sum = 0;
		int whole = 0, shared = 0;
		for (size_t i = 0; i < n; i++) {
			if (jobs[i]->state != JOB_RUNNING || jobs[i]->spec.mode == JOB_MODE_MIG)
				continue;
			for (int p = 0; p < jobs[i]->n_placed; p++)
				if ((size_t)jobs[i]->gpu_idx[p] == k) {
					if (jobs[i]->spec.mode == JOB_MODE_EXCLUSIVE)
						whole++;
					else {
						shared++;
						sum += jobs[i]->spec.vram_bytes + RES;
					}
				}
		}
		assert_true(sum <= g[k].mem_total_bytes);
		assert_true(whole == 0 || (whole == 1 && shared == 0));
	}
}

static sched_config cfg_of(bool borrowing)
{
	sched_config c = {.policy = SCHED_POLICY_GPUWISE, .borrowing = borrowing, .context_reserve_bytes = RES};
	return c;
}

static void test_quota(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 48);
	sched_project pr[1] = {{.name = "nlp", .quota_vram_bytes = 40 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[3] = {mk(1, "nlp", JOB_MODE_SHARED, 20, 1, 0), mk(2, "nlp", JOB_MODE_SHARED, 20, 1, 0),
			mk(3, "nlp", JOB_MODE_SHARED, 20, 1, 0)};
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 1, jobs, 3, &r);
	assert_int_equal(apply(&r, 1), 2);
	assert_int_equal(jobs[2]->state, JOB_QUEUED);
	assert_string_equal(jobs[2]->reason, "project nlp is at its VRAM quota: 40.00 GiB/40.00 GiB (this job's 20.00 GiB would take it to 60.00 GiB)");
	assert_int_equal(pr[0].used_vram_bytes, 40 * GiB);
	/* the running-jobs quota */
	pr[0].quota_vram_bytes = SCHED_UNLIMITED;
	pr[0].quota_jobs = 2;
	sched_pass(&c, g, 2, pr, 1, jobs, 3, &r);
	assert_int_equal(apply(&r, 2), 0);
	assert_non_null(strstr(jobs[2]->reason, "running-job quota: 2/2"));
	/* a job of a project that does not exist waits and says so */
	free(jobs[2]->spec.project);
	jobs[2]->spec.project = xstrdup("gone");
	sched_pass(&c, g, 2, pr, 1, jobs, 3, &r);
	assert_string_equal(jobs[2]->reason, "project gone does not exist (any more)");
	sched_result_release(&r);
	free_jobs(jobs, 3);
}

static void test_packing(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 48);
	sched_project pr[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[10];
	for (int i = 0; i < 10; i++)
		jobs[i] = mk((uint64_t)i + 1, "default", JOB_MODE_SHARED, 10, 1, 0);
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 1, jobs, 10, &r);
	/* 10.5 GiB each: four fit in 48 GiB, so eight run on two GPUs */
	assert_int_equal(apply(&r, 1), 8);
	assert_no_overcommit(jobs, 10, g, 2);
	assert_non_null(strstr(jobs[9]->reason, "no GPU has 10.50 GiB free"));
	/* memory held outside the queue counts: GPU 1 loses 20 GiB to a stranger */
	for (int i = 0; i < 10; i++) {
		jobs[i]->state = JOB_QUEUED;
		jobs[i]->n_placed = 0;
	}
	g[1].mem_outside_bytes = 20 * GiB;
	sched_pass(&c, g, 2, pr, 1, jobs, 10, &r);
	assert_int_equal(apply(&r, 2), 6);
	sched_result_release(&r);
	free_jobs(jobs, 10);
}

static void test_exclusive(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 48);
	sched_project pr[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = 1, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[3] = {mk(1, "default", JOB_MODE_SHARED, 4, 1, 0), mk(2, "default", JOB_MODE_EXCLUSIVE, 0, 1, 0),
			mk(3, "default", JOB_MODE_EXCLUSIVE, 0, 1, 0)};
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 1, jobs, 3, &r);
	assert_int_equal(apply(&r, 1), 2);
	assert_no_overcommit(jobs, 3, g, 2);
	/* the exclusive job did not land on the GPU of the shared one */
	assert_int_not_equal(jobs[0]->gpu_idx[0], jobs[1]->gpu_idx[0]);
	/* GPU quota: one whole GPU */
	assert_string_equal(jobs[2]->reason, "project default is at its GPU quota: 1/1 (this job's 1 would take it to 2)");
	sched_result_release(&r);
	free_jobs(jobs, 3);
}

static void test_priority_and_fair_share(void **state)
{
	(void)state;
	sched_node_gpu g[1];
	node(g, 1, 48);
	sched_project pr[2] = {{.name = "a", .quota_vram_bytes = 40 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
			       {.name = "b", .quota_vram_bytes = 40 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[8];
	for (int i = 0; i < 4; i++)
		jobs[i] = mk((uint64_t)i + 1, "a", JOB_MODE_SHARED, 10, 1, 0);
	for (int i = 4; i < 8; i++)
		jobs[i] = mk((uint64_t)i + 1, "b", JOB_MODE_SHARED, 10, 1, 0);
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 1, pr, 2, jobs, 8, &r);
	/* four fit; fair share alternates the projects although a submitted first */
	assert_int_equal(apply(&r, 1), 4);
	assert_int_equal(r.d[0].job->id, 1);
	assert_int_equal(r.d[1].job->id, 5);
	assert_int_equal(r.d[2].job->id, 2);
	assert_int_equal(r.d[3].job->id, 6);
	/* fair share is weighted by quota: b with twice the quota gets two of three */
	for (int i = 0; i < 8; i++) {
		jobs[i]->state = JOB_QUEUED;
		jobs[i]->n_placed = 0;
	}
	pr[1].quota_vram_bytes = 80 * GiB;
	node(g, 1, 32); /* three fit */
	sched_pass(&c, g, 1, pr, 2, jobs, 8, &r);
	assert_int_equal(apply(&r, 2), 3);
	int b = 0;
	for (size_t i = 0; i < r.n; i++)
		b += strcmp(r.d[i].job->spec.project, "b") == 0;
	assert_int_equal(b, 2);
	/* a user's priority orders that user's own jobs: a's fourth goes before a's first */
	for (int i = 0; i < 8; i++) {
		jobs[i]->state = JOB_QUEUED;
		jobs[i]->n_placed = 0;
	}
	jobs[3]->spec.priority = 10;
	sched_pass(&c, g, 1, pr, 2, jobs, 8, &r);
	assert_int_equal(r.d[0].job->id, 4);
	/* the level (an administrator's priority) goes before fair share: b's last jumps */
	for (int i = 0; i < 8; i++) {
		jobs[i]->state = JOB_QUEUED;
		jobs[i]->n_placed = 0;
	}
	jobs[7]->spec.boost = 5;
	sched_pass(&c, g, 1, pr, 2, jobs, 8, &r);
	assert_int_equal(r.d[0].job->id, 8);
	sched_result_release(&r);
	free_jobs(jobs, 8);
}

/*
 * Issue 33: a heavy project's flood at --priority 1000 (level 0, as for any
 * user) starts none of its jobs ahead of the favoured project's; inside one
 * project, users share by usage (the fair tree), not by who submitted more.
 */
static void test_priority_flood_and_fair_tree(void **state)
{
	(void)state;
	sched_node_gpu g[1];
	node(g, 1, 48); /* four 10 GiB jobs fit */
	sched_project pr[2] = {{.name = "fav", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
			       {.name = "heavy", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	pr[1].usage_vram_byte_s = 7.0 * 3600 * 10 * (double)GiB; /* factor well below fav's */
	pr[1].usage_gpu_s = 7.0 * 3600;
	job *jobs[16];
	size_t n = 0;
	for (int i = 0; i < 4; i++) {
		jobs[n] = mk(n + 1, "fav", JOB_MODE_SHARED, 10, 1, 0);
		n++;
	}
	for (int i = 0; i < 12; i++) {
		jobs[n] = mk(n + 1, "heavy", JOB_MODE_SHARED, 10, 1, 1000);
		jobs[n]->spec.uid = 2000;
		n++;
	}
	sched_config c = cfg_of(false);
	c.expected_run_ms = 3600 * 1000;
	sched_result r = {0};
	sched_pass(&c, g, 1, pr, 2, jobs, n, &r);
	assert_int_equal(apply(&r, 1), 4);
	for (size_t i = 0; i < r.n; i++)
		assert_string_equal(r.d[i].job->spec.project, "fav");
	/* the flood waits behind them, in its own priority order */
	for (size_t i = 4; i < n; i++)
		assert_int_equal(jobs[i]->state, JOB_QUEUED);
	sched_result_release(&r);
	free_jobs(jobs, n);

	/* one project, user 1000 submits ten, then user 1001 one: 1001's starts second */
	sched_project def[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	n = 0;
	for (int i = 0; i < 10; i++) {
		jobs[n] = mk(n + 1, "default", JOB_MODE_SHARED, 10, 1, 0);
		jobs[n]->spec.uid = 1000;
		n++;
	}
	jobs[n] = mk(n + 1, "default", JOB_MODE_SHARED, 10, 1, 0);
	jobs[n]->spec.uid = 1001;
	n++;
	c.expected_run_ms = 0; /* a new daemon knows no run length: the running count shares */
	sched_pass(&c, g, 1, def, 1, jobs, n, &r);
	assert_int_equal(apply(&r, 1), 4);
	assert_int_equal(r.d[0].job->spec.uid, 1000);
	assert_int_equal(r.d[1].job->spec.uid, 1001);
	sched_result_release(&r);
	free_jobs(jobs, n);

	/* past usage inside the project: the user who ran more waits for the other */
	n = 0;
	for (int i = 0; i < 3; i++) {
		jobs[n] = mk(n + 1, "default", JOB_MODE_SHARED, 10, 1, 0);
		jobs[n]->spec.uid = 1000;
		n++;
	}
	for (int i = 0; i < 3; i++) {
		jobs[n] = mk(n + 1, "default", JOB_MODE_SHARED, 10, 1, 0);
		jobs[n]->spec.uid = 1001;
		n++;
	}
	sched_user_usage uu[2] = {{.project = "default", .uid = 1000, .vram_byte_s = 1e15, .gpu_s = 1e5},
				  {.project = "default", .uid = 1001, .vram_byte_s = 1e12, .gpu_s = 1e2}};
	c.user_usage = uu;
	c.n_user_usage = 2;
	node(g, 1, 24); /* two fit */
	sched_pass(&c, g, 1, def, 1, jobs, n, &r);
	assert_int_equal(apply(&r, 1), 2);
	assert_int_equal(r.d[0].job->spec.uid, 1001);
	assert_int_equal(r.d[1].job->spec.uid, 1001); /* still far below 1000's usage */
	sched_result_release(&r);
	free_jobs(jobs, n);
}

static void test_backfill(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 48);
	sched_project pr[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[64];
	size_t n = 0;
	/* two running 30 GiB jobs, one on each GPU */
	jobs[n++] = mk(1, "default", JOB_MODE_SHARED, 30, 1, 0);
	jobs[n++] = mk(2, "default", JOB_MODE_SHARED, 30, 1, 0);
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 1, jobs, n, &r);
	assert_int_equal(apply(&r, 1), 2);
	assert_int_not_equal(jobs[0]->gpu_idx[0], jobs[1]->gpu_idx[0]);
	/* the head job (30 GiB) does not fit; small jobs behind it backfill */
	jobs[n++] = mk(3, "default", JOB_MODE_SHARED, 30, 1, 0);
	jobs[n++] = mk(4, "default", JOB_MODE_SHARED, 9, 1, 0);
	jobs[n++] = mk(5, "default", JOB_MODE_SHARED, 9, 1, 0);
	sched_pass(&c, g, 2, pr, 1, jobs, n, &r);
	assert_int_equal(r.reserved_job, 3);
	assert_int_equal(r.n_reserved, 1);
	int reserved = r.reserved_gpus[0];
	assert_non_null(strstr(jobs[2]->reason, "GPUs are held for it"));
	assert_non_null(strstr(jobs[2]->reason, "when job"));
	assert_int_equal(apply(&r, 2), 1); /* one 9.5 GiB job fits beside a 30.5 GiB one, not two */
	for (size_t i = 3; i < n; i++)
		if (jobs[i]->state == JOB_RUNNING)
			assert_int_not_equal(jobs[i]->gpu_idx[0], reserved);
	/* no starvation: small jobs keep coming, the job on the reserved GPU ends, the head starts */
	uint64_t id = 6;
	bool head_started = false;
	for (int round = 0; round < 5 && !head_started; round++) {
		jobs[n++] = mk(id++, "default", JOB_MODE_SHARED, 8, 1, 0);
		for (size_t i = 0; i < n; i++)
			if (jobs[i]->state == JOB_RUNNING && jobs[i]->id != 3 && jobs[i]->gpu_idx[0] == reserved &&
			    round == 2)
				jobs[i]->state = JOB_DONE;
		sched_pass(&c, g, 2, pr, 1, jobs, n, &r);
		apply(&r, 3 + (uint64_t)round);
		head_started = jobs[2]->state == JOB_RUNNING;
		if (round < 2)
			assert_false(head_started);
	}
	assert_true(head_started);
	assert_int_equal(jobs[2]->gpu_idx[0], reserved);
	sched_result_release(&r);
	free_jobs(jobs, n);
}

static void test_borrow_and_preempt(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 48);
	sched_project pr[2] = {{.name = "a", .quota_vram_bytes = 24 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
			       {.name = "b", .quota_vram_bytes = 72 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[5] = {mk(1, "a", JOB_MODE_SHARED, 20, 1, 0), mk(2, "a", JOB_MODE_SHARED, 20, 1, 0),
			mk(3, "a", JOB_MODE_SHARED, 20, 1, 0)};
	size_t n = 3;
	/* without borrowing a stays within its 24 GiB */
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 2, jobs, n, &r);
	assert_int_equal(r.n, 1);
	assert_string_equal(jobs[1]->reason, "project a is at its VRAM quota: 20.00 GiB/24.00 GiB (this job's 20.00 GiB would take it to 40.00 GiB)");
	/* with borrowing, a uses b's idle quota */
	c = cfg_of(true);
	sched_pass(&c, g, 2, pr, 2, jobs, n, &r);
	assert_int_equal(r.n, 3);
	assert_false(r.d[0].borrowed);
	assert_true(r.d[1].borrowed && r.d[2].borrowed);
	for (size_t i = 0; i < r.n; i++) {
		apply(&r, 10);
		r.d[i].job->start_ms = 10 + r.d[i].job->id; /* job 3 started last */
	}
	assert_no_overcommit(jobs, n, g, 2);
	/* b wants its quota back: 40 GiB fits nowhere, so the newest borrowed job goes */
	jobs[n++] = mk(4, "b", JOB_MODE_SHARED, 40, 1, 0);
	sched_pass(&c, g, 2, pr, 2, jobs, n, &r);
	size_t pre = 0, start = 0;
	job *victim = NULL;
	for (size_t i = 0; i < r.n; i++) {
		if (r.d[i].action == SCHED_PREEMPT) {
			pre++;
			victim = r.d[i].job;
		} else if (r.d[i].job->id == 4)
			start++;
	}
	assert_int_equal(start, 1);
	assert_true(pre >= 1);
	assert_true(victim->borrowed);
	assert_string_equal(victim->spec.project, "a");
	assert_int_equal(victim->state, JOB_RUNNING); /* the daemon stops and requeues it */
	/* a job of a within its own quota is never a victim */
	for (size_t i = 0; i < r.n; i++)
		if (r.d[i].action == SCHED_PREEMPT)
			assert_int_not_equal(r.d[i].job->id, 1);
	sched_result_release(&r);
	free_jobs(jobs, n);
}

static void test_mig_and_after(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 80);
	sched_mig migs[2] = {{"MIG-a", "1g.10gb", 10 * GiB, 0}, {"MIG-b", "1g.10gb", 10 * GiB, 0}};
	g[1].migs = migs;
	g[1].n_migs = 2;
	sched_project pr[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[5];
	for (int i = 0; i < 3; i++) {
		jobs[i] = mk((uint64_t)i + 1, "default", JOB_MODE_MIG, 0, 1, 0);
		jobs[i]->spec.mig_profile = xstrdup("1g.10gb");
	}
	/* shared jobs never land on the MIG-partitioned GPU */
	jobs[3] = mk(4, "default", JOB_MODE_SHARED, 60, 1, 0);
	jobs[4] = mk(5, "default", JOB_MODE_SHARED, 60, 1, 0);
	jobs[4]->spec.after_id = 4;
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 1, jobs, 5, &r);
	assert_int_equal(apply(&r, 1), 3);
	assert_int_equal(jobs[0]->gpu_idx[0], 1);
	assert_int_not_equal(jobs[0]->mig_idx, jobs[1]->mig_idx);
	assert_string_equal(jobs[2]->reason, "no free MIG instance of profile 1g.10gb");
	assert_int_equal(jobs[3]->gpu_idx[0], 0);
	assert_string_equal(jobs[4]->reason, "waiting for job 4 to end");
	assert_int_equal(sched_job_vram_bytes(jobs[0], g, 2), 10 * GiB);
	char buf[200];
	job_spec s = {.n_gpus = 1, .mode = JOB_MODE_SHARED, .vram_bytes = 90 * GiB};
	assert_non_null(sched_check_fits(&s, g, 2, RES, buf, sizeof buf));
	s.vram_bytes = 70 * GiB;
	assert_null(sched_check_fits(&s, g, 2, RES, buf, sizeof buf));
	s.n_gpus = 2; /* one GPU is MIG-partitioned */
	assert_non_null(sched_check_fits(&s, g, 2, RES, buf, sizeof buf));
	s.n_gpus = 1;
	s.mode = JOB_MODE_MIG;
	s.mig_profile = "3g.40gb";
	assert_string_equal(sched_check_fits(&s, g, 2, RES, buf, sizeof buf),
			    "no GPU here has a MIG instance of profile 3g.40gb");
	sched_result_release(&r);
	free_jobs(jobs, 5);
}

static int parse(const char *text, proto_req *r, char *err)
{
	return proto_parse(text, strlen(text), r, err, 256);
}

static void test_proto(void **state)
{
	(void)state;
	proto_req r;
	char err[256];
	assert_int_equal(parse("{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"python\",\"t.py\"],\"cwd\":\"/tmp\","
			       "\"vram_bytes\":21474836480,\"project\":\"nlp\",\"env\":[\"A=1\"],\"mode\":\"mig:1g.10gb\"}}",
			       &r, err), 0);
	assert_int_equal(r.op, PROTO_SUBMIT);
	assert_int_equal(r.spec.argc, 2);
	assert_null(r.spec.argv[2]);
	assert_int_equal(r.spec.vram_bytes, 20 * GiB);
	assert_string_equal(r.spec.mig_profile, "1g.10gb");
	/* the stored form round-trips */
	json_t *o = proto_spec_to_json(&r.spec, true);
	job_spec s;
	assert_int_equal(proto_spec_from_json(o, true, &s, err, sizeof err), 0);
	assert_string_equal(s.env[0], "A=1");
	assert_int_equal(s.mode, JOB_MODE_MIG);
	job_spec_release(&s);
	/* a client may not claim a level (the daemon sets it) nor a uid */
	assert_int_equal(proto_spec_from_json(o, false, &s, err, sizeof err), -1);
	assert_string_equal(err, "unknown key 'boost' in 'job'");
	json_object_del(o, "boost");
	assert_int_equal(proto_spec_from_json(o, false, &s, err, sizeof err), -1);
	assert_string_equal(err, "unknown key 'uid' in 'job'");
	json_decref(o);
	proto_req_release(&r);

	static const struct {
		const char *in, *err;
	} bad[] = {
		{"{\"v\":1,\"op\":\"submit\"", "malformed JSON"},
		{"[1]", "a request must be a JSON object"},
		{"{\"op\":\"ping\"}", "missing protocol version 'v'"},
		{"{\"v\":2,\"op\":\"ping\"}", "protocol version 2 is not supported"},
		{"{\"v\":1,\"op\":\"rm -rf\"}", "unknown op 'rm -rf'"},
		{"{\"v\":1,\"op\":\"ping\",\"x\":1}", "unknown key 'x' for op 'ping'"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"vram_bytes\":-1}}", "'vram_bytes' must not be negative"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"vram_bytes\":99999999999999999999}}", "malformed JSON"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"vram_bytes\":9007199254740993}}", "'vram_bytes' is too large"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"vram_bytes\":1.5}}", "'vram_bytes' must be an integer"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[]}}", "'job' needs a non-empty 'argv'"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"]}}", "a shared job needs 'vram_bytes'"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"gpus\":17,\"mode\":\"exclusive\"}}", "'gpus' is too large"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"mode\":\"mig:\"}}", "'mode' must be"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"env\":[\"=x\"],\"mode\":\"exclusive\"}}", "NAME=VALUE"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"run_args\":[\"--log=/etc/passwd\"],\"mode\":\"exclusive\"}}", "may not set"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"a\\u0000b\"],\"mode\":\"exclusive\"}}", "is not allowed"},
		{"{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"project\":\"../etc\",\"mode\":\"exclusive\"}}", "'project' must be"},
		{"{\"v\":1,\"op\":\"cancel\",\"ids\":[]}", "'ids' must be a non-empty array"},
		{"{\"v\":1,\"op\":\"cancel\"}", "'cancel' needs 'ids'"},
		{"{\"v\":1,\"op\":\"show\",\"id\":-3}", "'id' must not be negative"},
		{"{\"v\":1,\"op\":\"quota-set\",\"project\":\"x\",\"vram_bytes\":\"lots\"}", "'vram_bytes' must be an integer"},
		{"{\"v\":1,\"op\":\"ping\",\"v\":1}", "malformed JSON"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int rc = parse(bad[i].in, &r, err);
		if (rc == 0 || !strstr(err, bad[i].err))
			fail_msg("'%s': got rc %d, '%s'; expected '%s'", bad[i].in, rc, err, bad[i].err);
	}
	/* an oversized line is refused before parsing */
	assert_int_equal(proto_parse("{}", PROTO_MAX_LINE + 1, &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "request longer than"));
}

/* Replay tests/fuzz/corpus/queue: nothing crashes, the seeds parse, every refusal says why. */
static void test_proto_corpus(void **state)
{
	(void)state;
	const char *top = getenv("GW_TOP");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/queue", top && *top ? top : ".");
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open the corpus '%s'", dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048], err[256] = "";
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		char *text = NULL;
		size_t len = 0;
		gw_error ge;
		assert_int_equal(gw_read_file(path, false, 4 << 20, &text, &len, &ge), 0);
		proto_req r;
		if (proto_parse(text, len, &r, err, sizeof err) == 0)
			proto_req_release(&r);
		else if (str_starts(e->d_name, "seed"))
			fail_msg("seed %s refused: %s", path, err);
		else
			assert_true(err[0] != '\0');
		free(text);
		n++;
	}
	closedir(d);
	assert_true(n >= 7);
}

/*
 * Run jobs one at a time (each 40 GiB on one 48 GiB GPU, 1 s long) and
 * return the projects in the order they started, as the daemon's usage
 * bookkeeping would see them: ended runs decayed, the running one to now.
 */
static void run_one_at_a_time(sched_project *pr, size_t n_pr, job **jobs, size_t n, size_t steps, char *order,
			      uint64_t half_life_ms)
{
	sched_node_gpu g[1];
	node(g, 1, 48);
	sched_usage u[2] = {{0, 0, 1000}, {0, 0, 1000}};
	sched_config c = cfg_of(false);
	c.expected_run_ms = 1000;
	sched_result r = {0};
	uint64_t t = 1000;
	size_t k = 0;
	for (size_t step = 0; step < steps; step++) {
		for (size_t p = 0; p < n_pr; p++) {
			sched_usage_decay(&u[p], t, half_life_ms);
			pr[p].usage_vram_byte_s = u[p].vram_byte_s;
			pr[p].usage_gpu_s = u[p].gpu_s;
		}
		sched_pass(&c, g, 1, pr, n_pr, jobs, n, &r);
		if (getenv("DEBUG_FS"))
			print_message("# t %llu F %g %g U %g %g S %g %g res %lld\n", (unsigned long long)t, pr[0].fairshare, pr[1].fairshare,
				      pr[0].usage_norm, pr[1].usage_norm, pr[0].share_norm, pr[1].share_norm, (long long)r.reserved_job);
		c.prev_reserved_job = r.reserved_job > 0 ? (uint64_t)r.reserved_job : 0;
		assert_int_equal(apply(&r, t), 1);
		job *j = r.d[0].job;
		order[k++] = j->spec.project[0];
		t += 1000;
		j->state = JOB_DONE;
		size_t p = strcmp(j->spec.project, pr[0].name) == 0 ? 0 : 1;
		sched_usage_decay(&u[p], t, half_life_ms);
		sched_usage_add(&u[p], j->spec.vram_bytes, 1, j->start_ms, t, half_life_ms);
	}
	order[k] = 0;
	sched_result_release(&r);
}

static void test_fair_share_decayed(void **state)
{
	(void)state;
	/* equal quotas: a submitted all four first, yet the projects alternate */
	sched_project pr[2] = {{.name = "a", .quota_vram_bytes = 40 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
			       {.name = "b", .quota_vram_bytes = 40 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[12];
	for (int i = 0; i < 4; i++)
		jobs[i] = mk((uint64_t)i + 1, "a", JOB_MODE_SHARED, 40, 1, 0);
	for (int i = 4; i < 8; i++)
		jobs[i] = mk((uint64_t)i + 1, "b", JOB_MODE_SHARED, 40, 1, 0);
	char order[16];
	run_one_at_a_time(pr, 2, jobs, 8, 8, order, 20000);
	assert_string_equal(order, "abababab");
	assert_true(pr[0].fairshare > 0 && pr[0].fairshare <= 1);
	free_jobs(jobs, 8);
	/* shares 2:1 (the VRAM quotas): a gets two starts of three */
	pr[0].quota_vram_bytes = 80 * GiB;
	for (int i = 0; i < 8; i++)
		jobs[i] = mk((uint64_t)i + 1, "a", JOB_MODE_SHARED, 40, 1, 0);
	for (int i = 8; i < 12; i++)
		jobs[i] = mk((uint64_t)i + 1, "b", JOB_MODE_SHARED, 40, 1, 0);
	run_one_at_a_time(pr, 2, jobs, 12, 9, order, 20000);
	int na = 0;
	for (int i = 0; i < 9; i++)
		na += order[i] == 'a';
	print_message("# 2:1 shares, start order %s\n", order);
	assert_int_equal(na, 6);
	free_jobs(jobs, 12);
}

static void test_usage_decay(void **state)
{
	(void)state;
	/* one GiB for an hour, seen one half-life after it ended: half of what it was */
	sched_usage u = {0, 0, 3600001};
	sched_usage_add(&u, GiB, 1, 1, 3600001, 0);
	assert_true(fabs(u.gpu_s - 3600) < 1e-6);
	sched_usage v = {0, 0, 3600001};
	sched_usage_add(&v, GiB, 1, 1, 3600001, 3600000ULL * 1000);
	sched_usage_decay(&v, 3600001 + 3600000ULL * 1000, 3600000ULL * 1000);
	assert_true(fabs(v.gpu_s / 3600 - 0.5) < 1e-3);
	assert_true(fabs(v.vram_byte_s / (double)GiB / 3600 - 0.5) < 1e-3);
}

static void test_reservation_sticks(void **state)
{
	(void)state;
	/* b1 holds the GPUs; when they free, b1 starts although a2 is older and a's usage is lower now */
	sched_node_gpu g[1];
	node(g, 1, 48);
	sched_project pr[2] = {{.name = "a", .quota_vram_bytes = 40 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
			       {.name = "b", .quota_vram_bytes = 40 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[3] = {mk(1, "a", JOB_MODE_SHARED, 40, 1, 0), mk(2, "a", JOB_MODE_SHARED, 40, 1, 0),
			mk(3, "b", JOB_MODE_SHARED, 40, 1, 0)};
	jobs[0]->state = JOB_RUNNING;
	jobs[0]->n_placed = 1;
	jobs[0]->gpu_idx[0] = 0;
	sched_config c = cfg_of(false);
	sched_result r = {0};
	pr[0].usage_gpu_s = 10;
	sched_pass(&c, g, 1, pr, 2, jobs, 3, &r);
	assert_int_equal(r.reserved_job, 3);
	assert_non_null(strstr(jobs[2]->reason, "GPUs are held for it"));
	assert_int_equal(jobs[2]->queue_pos, 1);
	assert_int_equal(jobs[1]->queue_pos, 2);
	/* a1 ends; now b has more usage than a, but b1 holds the reservation */
	jobs[0]->state = JOB_DONE;
	pr[0].usage_gpu_s = 0;
	pr[1].usage_gpu_s = 10;
	c.prev_reserved_job = 3;
	sched_pass(&c, g, 1, pr, 2, jobs, 3, &r);
	assert_int_equal(apply(&r, 2), 1);
	assert_int_equal(r.d[0].job->id, 3);
	/* without the reservation a2 would have gone first */
	jobs[2]->state = JOB_QUEUED;
	c.prev_reserved_job = 0;
	sched_pass(&c, g, 1, pr, 2, jobs, 3, &r);
	assert_int_equal(r.d[0].job->id, 2);
	sched_result_release(&r);
	free_jobs(jobs, 3);
}

static void test_estimate(void **state)
{
	(void)state;
	sched_node_gpu g[1];
	node(g, 1, 48);
	sched_project pr[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[4] = {mk(1, "default", JOB_MODE_SHARED, 40, 1, 0), mk(2, "default", JOB_MODE_SHARED, 40, 1, 0),
			mk(3, "default", JOB_MODE_SHARED, 40, 1, 0), mk(4, "default", JOB_MODE_SHARED, 40, 1, 0)};
	jobs[0]->spec.time_limit_ms = 60000;
	jobs[1]->spec.time_limit_ms = 30000;
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 1, pr, 1, jobs, 4, &r);
	assert_int_equal(apply(&r, 1000), 1);
	sched_pass(&c, g, 1, pr, 1, jobs, 4, &r);
	sched_estimate(&c, g, 1, pr, 1, jobs, 4, 5000, 100);
	/* job 2 when job 1's limit runs out, job 3 after job 2's, job 4 unknown (job 3 has no limit) */
	assert_int_equal(jobs[1]->queue_pos, 1);
	assert_int_equal(jobs[1]->est_start_ms, 61000);
	assert_int_equal(jobs[2]->est_start_ms, 91000);
	assert_int_equal(jobs[3]->est_start_ms, 0);
	sched_result_release(&r);
	free_jobs(jobs, 4);
}

static void test_check_quota(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 48);
	sched_project pr[2] = {{.name = "small", .quota_vram_bytes = 16 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
			       {.name = "big", .quota_vram_bytes = 80 * GiB, .quota_gpus = 1, .quota_jobs = SCHED_UNLIMITED}};
	job_spec s = {.vram_bytes = 20 * GiB, .n_gpus = 1, .mode = JOB_MODE_SHARED};
	char buf[256];
	const char *why = sched_check_quota(&s, &pr[0], pr, 2, false, g, 2, buf, sizeof buf);
	assert_non_null(why);
	assert_string_equal(why, "the job asks for 20.00 GiB of GPU memory and project small's VRAM quota is 16.00 GiB: it could never start");
	/* with borrowing the others' quota could lend the rest */
	assert_null(sched_check_quota(&s, &pr[0], pr, 2, true, g, 2, buf, sizeof buf));
	s.vram_bytes = 16 * GiB;
	assert_null(sched_check_quota(&s, &pr[0], pr, 2, false, g, 2, buf, sizeof buf));
	s.mode = JOB_MODE_EXCLUSIVE;
	s.n_gpus = 2;
	why = sched_check_quota(&s, &pr[1], pr, 2, false, g, 2, buf, sizeof buf);
	assert_non_null(why);
	assert_non_null(strstr(why, "VRAM quota is 80.00 GiB"));
}

static void test_standard_sizes(void **state)
{
	(void)state;
	/* two 24 GiB GPUs: two 12 GiB jobs and a 20 GiB one */
	static const uint64_t sizes[] = {8 * GiB, 12 * GiB, 24 * GiB};
	sched_project pr[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	for (int with_sizes = 0; with_sizes < 2; with_sizes++) {
		sched_node_gpu g[2];
		node(g, 2, 24);
		for (int i = 0; with_sizes && i < 2; i++) {
			g[i].slot_bytes = sizes;
			g[i].n_slots = 3;
		}
		job *jobs[3] = {mk(1, "default", JOB_MODE_SHARED, 12, 1, 0), mk(2, "default", JOB_MODE_SHARED, 12, 1, 0),
				mk(3, "default", JOB_MODE_SHARED, 20, 1, 0)};
		sched_config c = cfg_of(false);
		sched_result r = {0};
		size_t started = 0;
		for (int k = 0; k < 3; k++) { /* one arrives per pass */
			sched_pass(&c, g, 2, pr, 1, jobs, (size_t)k + 1, &r);
			started += apply(&r, (uint64_t)k + 1);
		}
		/* free-form: 12 GiB + the 512 MiB context twice is over 24 GiB, so the two
		 * spread over both GPUs and the 20 GiB job finds 11.5 GiB on each */
		assert_int_equal(started, with_sizes ? 3 : 2);
		if (with_sizes) {
			assert_int_equal(jobs[0]->gpu_idx[0], jobs[1]->gpu_idx[0]);
			assert_int_not_equal(jobs[2]->gpu_idx[0], jobs[0]->gpu_idx[0]);
		} else {
			assert_non_null(strstr(jobs[2]->reason, "no GPU has 20.50 GiB free"));
		}
		sched_result_release(&r);
		free_jobs(jobs, 3);
	}
	assert_int_equal(sched_round_size(sizes, 3, 5 * GiB), 8 * GiB);
	assert_int_equal(sched_round_size(sizes, 3, 12 * GiB), 12 * GiB);
	assert_int_equal(sched_round_size(sizes, 3, 30 * GiB), 30 * GiB);
}

/*
 * Standard sizes per GPU model (an 80 GiB and a 24 GiB card with their own
 * sizes): a job is charged the size of the model it is placed on, and is
 * kept off a model whose size would take its project over its quota.
 */
static void test_model_sizes(void **state)
{
	(void)state;
	static const uint64_t big[] = {10 * GiB, 20 * GiB, 40 * GiB, 80 * GiB}, small[] = {6 * GiB, 12 * GiB, 24 * GiB};
	sched_node_gpu g[2];
	node(g, 2, 24);
	g[0].mem_total_bytes = 80 * GiB;
	g[0].slot_bytes = big;
	g[0].n_slots = 4;
	g[1].slot_bytes = small;
	g[1].n_slots = 3;
	job_spec s = {.mode = JOB_MODE_SHARED, .vram_bytes = 9 * GiB, .n_gpus = 1};
	assert_int_equal(sched_gpu_charge(&s, &g[0]), 10 * GiB);
	assert_int_equal(sched_gpu_charge(&s, &g[1]), 12 * GiB);
	s.vram_bytes = 30 * GiB; /* over the 4090's sizes: the whole card, which it does not fit */
	assert_int_equal(sched_gpu_charge(&s, &g[1]), 30 * GiB);
	assert_int_equal(sched_gpu_charge(&s, &g[0]), 40 * GiB);
	job tmp = {.spec = s};
	assert_int_equal(sched_job_vram_bytes(&tmp, g, 2), 40 * GiB); /* never on the 4090 */
	s.vram_bytes = 9 * GiB;
	tmp.spec = s;
	assert_int_equal(sched_job_vram_bytes(&tmp, g, 2), 10 * GiB); /* before placement: the least */
	tmp.n_placed = 1;
	tmp.gpu_idx[0] = 1;
	assert_int_equal(sched_job_vram_bytes(&tmp, g, 2), 12 * GiB);
	assert_int_equal(sched_job_slot_bytes(&tmp, g, 2), 12 * GiB);

	/* refused at submit when no model's size fits the quota */
	sched_project pr[1] = {{.name = "small", .quota_vram_bytes = 9 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	char buf[512];
	const char *why = sched_check_quota(&s, &pr[0], pr, 1, false, g, 2, buf, sizeof buf);
	assert_non_null(why);
	assert_string_equal(why, "the job asks for 9.00 GiB of GPU memory, which is charged at least 10.00 GiB here "
				 "(the smallest standard size of any GPU model that holds it), and project small's VRAM "
				 "quota is 9.00 GiB: it could never start");
	/* 5 GiB: 6 GiB on the 24 GiB card, 10 GiB on the 80 GiB one; only the first fits 9 GiB */
	job *jobs[2] = {mk(1, "small", JOB_MODE_SHARED, 5, 1, 0), mk(2, "small", JOB_MODE_SHARED, 3, 1, 0)};
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 1, jobs, 1, &r);
	assert_int_equal(apply(&r, 1), 1);
	assert_int_equal(jobs[0]->gpu_idx[0], 1);
	assert_int_equal(pr[0].used_vram_bytes, 6 * GiB);
	/* a 3 GiB job: 6 GiB more on the 24 GiB card would be 12 > 9; 10 on the other too */
	sched_pass(&c, g, 2, pr, 1, jobs, 2, &r);
	assert_int_equal(apply(&r, 2), 0);
	assert_string_equal(jobs[1]->reason, "project small is at its VRAM quota: 6.00 GiB/9.00 GiB (this job's 6.00 GiB would take it to 12.00 GiB)");
	sched_result_release(&r);
	free_jobs(jobs, 2);

	/* a model without sizes next to one with: the context reserve is added there only */
	node(g, 2, 24);
	g[1].slot_bytes = small;
	g[1].n_slots = 3;
	sched_project any[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *one[1] = {mk(1, "default", JOB_MODE_SHARED, 0, 1, 0)};
	one[0]->spec.vram_bytes = 24 * GiB - 256 * MiB; /* with 512 MiB of context: over 24 GiB */
	sched_pass(&c, g, 2, any, 1, one, 1, &r);
	assert_int_equal(apply(&r, 1), 1);
	assert_int_equal(one[0]->gpu_idx[0], 1);
	assert_int_equal(any[0].used_vram_bytes, 24 * GiB);
	/* with the sized card gone, the free-form one lacks the room for the context */
	one[0]->state = JOB_QUEUED;
	one[0]->n_placed = 0;
	g[1].lost = true;
	sched_pass(&c, g, 2, any, 1, one, 1, &r);
	assert_int_equal(apply(&r, 2), 0);
	assert_string_equal(one[0]->reason, "no GPU has 24.25 GiB free");
	sched_result_release(&r);
	free_jobs(one, 1);
}

/*
 * Preempting a borrowed job for a job within its quota: on a mixed server
 * the GPU freed may be of a model whose standard size takes that job over
 * its quota; it then waits, and nobody is preempted for it.
 */
static void test_reclaim_respects_model_sizes(void **state)
{
	(void)state;
	static const uint64_t big[] = {10 * GiB, 20 * GiB, 40 * GiB, 80 * GiB}, small[] = {6 * GiB, 12 * GiB, 24 * GiB};
	sched_node_gpu g[2];
	node(g, 2, 24);
	g[0].mem_total_bytes = 80 * GiB;
	g[0].slot_bytes = big;
	g[0].n_slots = 4;
	g[1].slot_bytes = small;
	g[1].n_slots = 3;
	sched_project pr[2] = {{.name = "a", .quota_vram_bytes = 10 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
			       {.name = "b", .quota_vram_bytes = 10 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	/* b borrowed both cards: 70 GiB on the 80 GiB one, then 20 GiB on the 24 GiB one */
	job *jobs[3] = {mk(1, "b", JOB_MODE_SHARED, 70, 1, 0), mk(2, "b", JOB_MODE_SHARED, 20, 1, 0),
			mk(3, "a", JOB_MODE_SHARED, 9, 1, 0)};
	for (int i = 0; i < 2; i++) {
		jobs[i]->state = JOB_RUNNING;
		jobs[i]->borrowed = true;
		jobs[i]->n_placed = 1;
		jobs[i]->gpu_idx[0] = i;
		jobs[i]->start_ms = 10 + i; /* job 2, on the 24 GiB card, is the newest */
	}
	sched_config c = cfg_of(true);
	sched_result r = {0};
	/* a's 9 GiB: 10 GiB on the 80 GiB model (within a's 10), 12 on the 24 GiB one
	 * (over): freeing the 24 GiB card would start it over its quota */
	sched_pass(&c, g, 2, pr, 2, jobs, 3, &r);
	for (size_t i = 0; i < r.n; i++) {
		assert_int_not_equal(r.d[i].action, SCHED_PREEMPT);
		assert_true(r.d[i].job->id != 3 || r.d[i].action != SCHED_START);
	}
	assert_int_equal(jobs[2]->state, JOB_QUEUED);
	/* with the same sizes on both models the 24 GiB card's charge is 10 GiB:
	 * then the newest borrowed job is preempted for it */
	g[1].slot_bytes = big;
	g[1].n_slots = 2;
	sched_pass(&c, g, 2, pr, 2, jobs, 3, &r);
	size_t pre = 0;
	for (size_t i = 0; i < r.n; i++)
		if (r.d[i].action == SCHED_PREEMPT) {
			pre++;
			assert_int_equal(r.d[i].job->id, 2);
		}
	assert_int_equal(pre, 1);
	sched_result_release(&r);
	free_jobs(jobs, 3);
}

/*
 * A job stored by a daemon that rounded requests at submit (vram_bytes the
 * standard size, vram_asked_bytes the request) loads with its request back,
 * so that placement charges it by the sizes of the model it runs on.
 */
static void test_stored_rounded_request(void **state)
{
	(void)state;
	json_error_t je;
	json_t *o = json_loads("{\"argv\":[\"true\"],\"cwd\":\"/\",\"vram_bytes\":12884901888,"
			       "\"vram_asked_bytes\":10737418240}", 0, &je);
	assert_non_null(o);
	job_spec s;
	char err[256];
	assert_int_equal(proto_spec_from_json(o, true, &s, err, sizeof err), 0);
	assert_int_equal(s.vram_bytes, 10 * GiB);
	json_t *back = proto_spec_to_json(&s, true);
	assert_null(json_object_get(back, "vram_asked_bytes"));
	json_decref(back);
	job_spec_release(&s);
	/* a client may not send it */
	assert_int_not_equal(proto_spec_from_json(o, false, &s, err, sizeof err), 0);
	assert_string_equal(err, "unknown key 'vram_asked_bytes' in 'job'");
	json_decref(o);
}

static void test_exclusive_foreign(void **state)
{
	(void)state;
	sched_node_gpu g[2];
	node(g, 2, 48);
	g[0].foreign = true;
	g[0].mem_outside_bytes = 20 * GiB;
	sched_project pr[1] = {{.name = "default", .quota_vram_bytes = SCHED_UNLIMITED, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED}};
	job *jobs[2] = {mk(1, "default", JOB_MODE_EXCLUSIVE, 0, 1, 0), mk(2, "default", JOB_MODE_EXCLUSIVE, 0, 1, 0)};
	sched_config c = cfg_of(false);
	sched_result r = {0};
	sched_pass(&c, g, 2, pr, 1, jobs, 2, &r);
	assert_int_equal(apply(&r, 1), 1);
	assert_int_equal(jobs[0]->gpu_idx[0], 1);
	assert_non_null(strstr(jobs[1]->reason, "waiting for 1 idle GPU (GPU 0: a process outside the queue uses it)"));
	sched_result_release(&r);
	free_jobs(jobs, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_packing),
		cmocka_unit_test(test_exclusive),
		cmocka_unit_test(test_priority_and_fair_share),
		cmocka_unit_test(test_priority_flood_and_fair_tree),
		cmocka_unit_test(test_backfill),
		cmocka_unit_test(test_borrow_and_preempt),
		cmocka_unit_test(test_mig_and_after),
		cmocka_unit_test(test_fair_share_decayed),
		cmocka_unit_test(test_usage_decay),
		cmocka_unit_test(test_reservation_sticks),
		cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_check_quota),
		cmocka_unit_test(test_standard_sizes),
		cmocka_unit_test(test_model_sizes),
		cmocka_unit_test(test_stored_rounded_request),
		cmocka_unit_test(test_reclaim_respects_model_sizes),
		cmocka_unit_test(test_exclusive_foreign),
		cmocka_unit_test(test_proto),
		cmocka_unit_test(test_proto_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

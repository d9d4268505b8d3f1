/*
 * Benchmark driver for the queue (bench/queue.sh), linked with the release
 * objects:
 *   queue_bench submit SOCKET CLIENTS PER_CLIENT WINDOW
 *       CLIENTS processes each submit PER_CLIENT jobs, WINDOW requests in
 *       flight per connection; prints acknowledged submissions per second
 *   queue_bench pass
 *       one scheduling pass with 10,000 queued jobs on 8 GPUs (median of 21)
 *   queue_bench fill STATE_DB N
 *       write N ended jobs into a state database (history for the RSS figure)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "queue/proto.h"
#include "queue/queue.h"
#include "queue/store.h"
#include "sched/queue.h"
#include "util/util.h"

static int client(const char *sock, int id, int n, int window)
{
	queue_conn *c;
	gw_error err;
	if (queue_connect(sock, &c, &err)) {
		fprintf(stderr, "client %d: %s\n", id, err.msg);
		return 1;
	}
	char cwd[] = "/tmp";
	int sent = 0, acked = 0, bad = 0;
	while (acked < n) {
		while (sent < n && sent - acked < window) {
			json_t *job = json_pack("{s:[s,s],s:s,s:s,s:I,s:s}", "argv", "sleep", "1", "cwd", cwd,
						"project", "bench", "vram_bytes", (json_int_t)GiB, "name", "b");
			json_t *req = json_pack("{s:s,s:o}", "op", "submit", "job", job);
			if (queue_send(c, req, &err)) {
				json_decref(req);
				fprintf(stderr, "client %d: %s\n", id, err.msg);
				return 1;
			}
			json_decref(req);
			sent++;
		}
		json_t *rep;
		if (queue_recv(c, &rep, &err)) {
			fprintf(stderr, "client %d: %s\n", id, err.msg);
			return 1;
		}
		if (!json_is_true(json_object_get(rep, "ok"))) {
			if (!bad) { /* say why once per client */
				char *t = json_dumps(rep, JSON_COMPACT);
				fprintf(stderr, "client %d: refused: %s\n", id, t ? t : "?");
				free(t);
			}
			bad++;
		}
		json_decref(rep);
		acked++;
	}
	queue_close(c);
	return bad ? 1 : 0;
}

static int bench_submit(const char *sock, int clients, int per, int window)
{
	uint64_t t0 = now_ms();
	for (int i = 0; i < clients; i++)
		if (fork() == 0)
			_exit(client(sock, i, per, window));
	int fails = 0, ws;
	while (wait(&ws) > 0)
		fails += !WIFEXITED(ws) || WEXITSTATUS(ws) != 0;
	uint64_t ms = now_ms() - t0;
	double rate = (double)clients * per / ((double)ms / 1000.0);
	printf("durable acknowledged submissions: %d clients x %d, %d in flight each: %.0f/s (%d in %.2f s)%s\n",
	       clients, per, window, rate, clients * per, (double)ms / 1000.0, fails ? " FAILED" : "");
	return fails ? 1 : 0;
}

static int bench_pass(void)
{
	enum { N_GPUS = 8, N_JOBS = 10000, N_PROJ = 4 };
	sched_node_gpu g[N_GPUS];
	memset(g, 0, sizeof g);
	for (int i = 0; i < N_GPUS; i++) {
		snprintf(g[i].uuid, sizeof g[i].uuid, "GPU-%d", i);
		g[i].mem_total_bytes = 80 * GiB;
		g[i].numa = i / 4;
		g[i].nvlink_group = g[i].pcie_switch = -1;
	}
	sched_project pr[N_PROJ] = {
		{.name = "p0", .quota_vram_bytes = 160 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
		{.name = "p1", .quota_vram_bytes = 160 * GiB, .quota_gpus = 4, .quota_jobs = SCHED_UNLIMITED},
		{.name = "p2", .quota_vram_bytes = 160 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = 20},
		{.name = "p3", .quota_vram_bytes = 160 * GiB, .quota_gpus = SCHED_UNLIMITED, .quota_jobs = SCHED_UNLIMITED},
	};
	static const char *const names[N_PROJ] = {"p0", "p1", "p2", "p3"};
	static const uint64_t sizes[] = {2, 4, 8, 12, 16, 20, 24, 40};
	job *jobs = xcalloc(N_JOBS, sizeof *jobs);
	job **ptr = xcalloc(N_JOBS, sizeof *ptr);
	for (int i = 0; i < N_JOBS; i++) {
		job *j = &jobs[i];
		j->id = (uint64_t)i + 1;
		j->state = JOB_QUEUED;
		j->mig_idx = -1;
		j->spec.project = xstrdup(names[i % N_PROJ]);
		j->spec.n_gpus = i % 37 == 0 ? 2 : 1;
		j->spec.mode = i % 23 == 0 ? JOB_MODE_EXCLUSIVE : JOB_MODE_SHARED;
		j->spec.vram_bytes = j->spec.mode == JOB_MODE_SHARED ? sizes[(i * 7) % 8] * GiB : 0;
		j->spec.priority = i % 101 == 0 ? 5 : 0;
		/* 50 users, a few spread over every project: per-user fair share inside each */
		j->spec.uid = 1000 + (uint32_t)((i * 13) % 50);
		ptr[i] = j;
	}
	sched_user_usage uu[200];
	for (int u = 0; u < 200; u++)
		uu[u] = (sched_user_usage){.project = names[u % N_PROJ], .uid = 1000 + (uint32_t)(u / N_PROJ),
					   .vram_byte_s = 1e12 * (double)(u % 7), .gpu_s = 100.0 * (u % 5)};
	sched_config cfg = {.policy = SCHED_POLICY_GPUWISE, .borrowing = true, .context_reserve_bytes = 512 * MiB,
			    .user_usage = uu, .n_user_usage = 200};
	sched_result res = {0};
	/* the first pass fills the GPUs; the timed passes run with them full */
	sched_pass(&cfg, g, N_GPUS, pr, N_PROJ, ptr, N_JOBS, &res);
	size_t started = 0;
	for (size_t i = 0; i < res.n; i++) {
		job *j = res.d[i].job;
		if (res.d[i].action != SCHED_START)
			continue;
		j->state = JOB_RUNNING;
		j->n_placed = res.d[i].n_gpus;
		memcpy(j->gpu_idx, res.d[i].gpu_idx, sizeof j->gpu_idx);
		started++;
	}
	double t[21], cpu[21];
	for (int k = 0; k < 21; k++) {
		/* one running job ends before each pass, so every pass has work */
		for (int i = 0; i < N_JOBS; i++)
			if (jobs[i].state == JOB_RUNNING) {
				jobs[i].state = JOB_DONE;
				break;
			}
		struct timespec a, b, ca, cb;
		clock_gettime(CLOCK_MONOTONIC, &a);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
		sched_pass(&cfg, g, N_GPUS, pr, N_PROJ, ptr, N_JOBS, &res);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
		clock_gettime(CLOCK_MONOTONIC, &b);
		cpu[k] = (double)(cb.tv_sec - ca.tv_sec) * 1e3 + (double)(cb.tv_nsec - ca.tv_nsec) / 1e6;
		t[k] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		for (size_t i = 0; i < res.n; i++)
			if (res.d[i].action == SCHED_START) {
				job *j = res.d[i].job;
				j->state = JOB_RUNNING;
				j->n_placed = res.d[i].n_gpus;
				memcpy(j->gpu_idx, res.d[i].gpu_idx, sizeof j->gpu_idx);
			}
	}
	for (int a = 0; a < 21; a++)
		for (int b = a + 1; b < 21; b++)
			if (t[b] < t[a]) {
				double x = t[a];
				t[a] = t[b];
				t[b] = x;
			}
	for (int a = 0; a < 21; a++)
		for (int b = a + 1; b < 21; b++)
			if (cpu[b] < cpu[a]) {
				double x = cpu[a];
				cpu[a] = cpu[b];
				cpu[b] = x;
			}
	printf("one scheduling pass (per-user fair share on, 50 users), %d queued jobs on %d GPUs (%zu running): median %.2f ms CPU time "
	       "(worst %.2f), %.2f ms wall clock (worst %.2f) over 21 passes\n",
	       N_JOBS, N_GPUS, started, cpu[10], cpu[20], t[10], t[20]);
	sched_result_release(&res);
	for (int i = 0; i < N_JOBS; i++)
		job_release(&jobs[i]);
	free(jobs);
	free(ptr);
	return 0;
}

static int bench_fill(const char *db, long n)
{
	store *s;
	gw_error err;
	if (store_open(db, &s, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	store_begin(s, &err);
	for (long i = 0; i < n; i++) {
		job j = {0};
		char *argv[] = {"python", "train.py", "--epochs", "10", NULL};
		j.spec.argv = argv;
		j.spec.argc = 4;
		j.spec.cwd = "/home/alice/project";
		j.spec.project = "history";
		j.spec.user = "alice";
		j.spec.uid = 1000;
		j.spec.vram_bytes = 8 * GiB;
		j.spec.n_gpus = 1;
		j.state = JOB_QUEUED;
		j.submit_ms = wall_ms();
		j.mig_idx = -1;
		if (store_add_job(s, &j, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		j.state = JOB_DONE;
		j.start_ms = j.submit_ms;
		j.end_ms = j.submit_ms + 1000;
		store_update_job(s, &j, &err);
	}
	store_commit(s, &err);
	store_close(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "submit") == 0)
		return bench_submit(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 2 && strcmp(argv[1], "pass") == 0)
		return bench_pass();
	if (argc == 4 && strcmp(argv[1], "fill") == 0)
		return bench_fill(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: queue_bench submit SOCKET CLIENTS PER_CLIENT WINDOW | pass | fill DB N\n");
	return 2;
}

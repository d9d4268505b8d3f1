/*
 * Unit tests for watch/: the leak and heat detectors, exit classification,
 * the restart policy, --oom-halve and the /proc tree walk on a fixture.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch/watch.h"

static void test_theil_sen(void **state)
{
	(void)state;
	double t[8], y[8];
	for (int i = 0; i < 8; i++) {
		t[i] = i;
		y[i] = 3.0 * i + 1;
	}
	y[2] = 1000; /* one outlier does not move the median slope */
	assert_true(fabs(watch_theil_sen(t, y, 8) - 3.0) < 1e-9);
	assert_true(watch_theil_sen(t, y, 1) == 0);
}

/* Feed a memory curve sampled every step_ms for dur_ms; return the slope or NAN. */
static double run_leak(double (*f)(double t_s), uint64_t dur_ms, uint64_t step_ms)
{
	watch_leak l;
	watch_leak_init(&l, 0, 1000, 500, (double)MiB / 60.0);
	for (uint64_t t = 0; t <= dur_ms; t += step_ms) {
		double slope;
		double v = f((double)t / 1000.0);
		if (watch_leak_feed(&l, t, (uint64_t)v, &slope))
			return slope;
	}
	return NAN;
}

static double ramp(double t)
{
	return 2e9 + 8.0 * MiB * t; /* 8 MiB/s */
}

/* A caching allocator's sawtooth: 1.5 GiB to 2 GiB every 0.7 s, no growth. */
static double sawtooth(double t)
{
	double ph = fmod(t, 0.7) / 0.7;
	return 1.5 * GiB + 0.5 * GiB * ph;
}

static double saw_on_ramp(double t)
{
	return sawtooth(t) + 4.0 * MiB * t;
}

/* One step up (the allocator reserving a bigger block once), then flat. */
static double one_step(double t)
{
	return t < 3.2 ? 1.0 * GiB : 1.5 * GiB;
}

static void test_leak_detector(void **state)
{
	(void)state;
	double s = run_leak(ramp, 20000, 100);
	assert_true(isfinite(s));
	assert_true(fabs(s - 8.0 * MiB) / (8.0 * MiB) < 0.02);
	assert_true(isnan(run_leak(sawtooth, 120000, 100)));
	s = run_leak(saw_on_ramp, 60000, 100);
	assert_true(isfinite(s));
	assert_true(fabs(s - 4.0 * MiB) / (4.0 * MiB) < 0.10);
	assert_true(isnan(run_leak(one_step, 60000, 100)));
}

static void test_leak_warmup(void **state)
{
	(void)state;
	watch_leak l;
	/* Growth only during the warm-up is not a leak. */
	watch_leak_init(&l, 0, 5000, 500, 1);
	double slope;
	for (uint64_t t = 0; t <= 30000; t += 100) {
		uint64_t v = t < 5000 ? t * 1000000 : 5000ULL * 1000000;
		assert_false(watch_leak_feed(&l, t, v, &slope));
	}
}

static void test_heat(void **state)
{
	(void)state;
	watch_heat h;
	watch_heat_init(&h, 83, 3);
	assert_int_equal(watch_heat_feed(&h, 80, 0), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 84, 0), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 85, 0), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 86, 0), WATCH_HEAT_HOT);
	assert_int_equal(watch_heat_feed(&h, 90, 0), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 80, 0), WATCH_HEAT_NONE); /* not 5 C under yet */
	assert_int_equal(watch_heat_feed(&h, 78, 0), WATCH_HEAT_CLEAR);
	/* thermal slowdown bits count at any temperature */
	watch_heat_init(&h, 83, 2);
	assert_int_equal(watch_heat_feed(&h, 60, HW_THR_HW_THERMAL), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 60, HW_THR_SW_THERMAL), WATCH_HEAT_HOT);
	assert_int_equal(watch_heat_feed(&h, 60, HW_THR_SW_POWER_CAP), WATCH_HEAT_CLEAR);
	/* a spike shorter than `need` is ignored */
	watch_heat_init(&h, 83, 3);
	assert_int_equal(watch_heat_feed(&h, 95, 0), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 95, 0), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 70, 0), WATCH_HEAT_NONE);
	assert_int_equal(watch_heat_feed(&h, 95, 0), WATCH_HEAT_NONE);
}

static int exited(int code)
{
	return (code & 0xff) << 8;
}

static void test_classify(void **state)
{
	(void)state;
	watch_exit_facts f = {.wait_status = exited(0), .oom_kills_before = -1, .oom_kills_after = -1};
	assert_int_equal(watch_classify(&f), WATCH_SUCCESS);
	f.wait_status = exited(1);
	f.stderr_tail = "Traceback...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
	assert_int_equal(watch_classify(&f), WATCH_CUDA_OOM);
	f.stderr_tail = "RuntimeError: CUDA error: out of memory\n";
	assert_int_equal(watch_classify(&f), WATCH_CUDA_OOM);
	f.stderr_tail = "pynvml.NVMLError_GpuIsLost: GPU is lost\n";
	assert_int_equal(watch_classify(&f), WATCH_HARDWARE); /* explain's gpu-fell-off-bus */
	f.stderr_tail = "RuntimeError: CUDA error: uncorrectable ECC error encountered\n";
	assert_int_equal(watch_classify(&f), WATCH_HARDWARE);
	f.stderr_tail = "ValueError: bad\n";
	assert_int_equal(watch_classify(&f), WATCH_FAILURE);
	f.wait_status = SIGKILL; /* killed by signal 9 */
	assert_int_equal(watch_classify(&f), WATCH_FAILURE);
	f.oom_kills_before = 2;
	f.oom_kills_after = 3;
	assert_int_equal(watch_classify(&f), WATCH_HOST_OOM);
	f.oom_kills_after = 2;
	assert_int_equal(watch_classify(&f), WATCH_FAILURE);
	f.hardware_xid = 79;
	assert_int_equal(watch_classify(&f), WATCH_HARDWARE);
	f.stop_reason = "leak";
	assert_int_equal(watch_classify(&f), WATCH_STOPPED);
	f.stop_reason = NULL;
	f.hardware_xid = 0;
	f.interrupted = true;
	assert_int_equal(watch_classify(&f), WATCH_INTERRUPTED);
	f.exec_failed = true;
	assert_int_equal(watch_classify(&f), WATCH_NOT_STARTED);
	assert_int_equal(watch_exit_status(exited(3)), 3);
	assert_int_equal(watch_exit_status(SIGTERM), 128 + SIGTERM);
	assert_true(watch_xid_is_hardware(79));
	assert_true(watch_xid_is_hardware(48));
	assert_false(watch_xid_is_hardware(13));
	assert_false(watch_xid_is_hardware(31));
	assert_int_equal(watch_class_parse("cuda-oom"), WATCH_CUDA_OOM);
	assert_int_equal(watch_class_parse("nonsense"), -1);
	assert_string_equal(watch_class_name(WATCH_HOST_OOM), "host-oom");
}

static void test_policy(void **state)
{
	(void)state;
	watch_policy p;
	watch_policy_defaults(&p);
	watch_policy_state st = {0};
	uint64_t d;
	char why[128];
	/* never */
	assert_false(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 10, false, 0, &d, why, sizeof why));
	assert_non_null(strstr(why, "never"));
	/* ... unless a detector forces it */
	assert_true(watch_policy_next(&p, &st, WATCH_STOPPED, 143, 10, true, 0, &d, why, sizeof why));
	/* on-failure: exponential back-off, capped, then max restarts */
	p.restart = WATCH_RESTART_ON_FAILURE;
	p.backoff_min_ms = 200;
	p.backoff_max_ms = 1000;
	p.max_restarts = 4;
	p.start_limit_interval_ms = 0;
	memset(&st, 0, sizeof st);
	uint64_t want[] = {200, 400, 800, 1000};
	for (int i = 0; i < 4; i++) {
		assert_true(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 10, false, 0, &d, why, sizeof why));
		assert_int_equal(d, want[i]);
	}
	assert_false(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 10, false, 0, &d, why, sizeof why));
	assert_non_null(strstr(why, "--max-restarts"));
	/* success ends on-failure, restarts always */
	memset(&st, 0, sizeof st);
	assert_false(watch_policy_next(&p, &st, WATCH_SUCCESS, 0, 10, false, 0, &d, why, sizeof why));
	p.restart = WATCH_RESTART_ALWAYS;
	assert_true(watch_policy_next(&p, &st, WATCH_SUCCESS, 0, 10, false, 0, &d, why, sizeof why));
	assert_int_equal(d, 200);
	/* a long healthy run resets the back-off */
	p.restart = WATCH_RESTART_ON_FAILURE;
	memset(&st, 0, sizeof st);
	st.failures_in_row = 3;
	assert_true(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 5000, false, 0, &d, why, sizeof why));
	assert_int_equal(d, 200);
	/* --no-restart-on codes and classes */
	p.no_restart_codes[p.n_no_restart_codes++] = 2;
	p.no_restart_class[WATCH_HARDWARE] = true;
	assert_false(watch_policy_next(&p, &st, WATCH_FAILURE, 2, 10, false, 0, &d, why, sizeof why));
	assert_non_null(strstr(why, "exit status 2"));
	assert_false(watch_policy_next(&p, &st, WATCH_HARDWARE, 1, 10, false, 0, &d, why, sizeof why));
	assert_non_null(strstr(why, "hardware"));
	/* interrupted and not-started never restart */
	assert_false(watch_policy_next(&p, &st, WATCH_INTERRUPTED, 130, 10, true, 0, &d, why, sizeof why));
	assert_false(watch_policy_next(&p, &st, WATCH_NOT_STARTED, 127, 10, false, 0, &d, why, sizeof why));
	/* start limit: 3 starts within 10 s */
	watch_policy_defaults(&p);
	p.restart = WATCH_RESTART_ON_FAILURE;
	p.max_restarts = -1;
	p.backoff_min_ms = p.backoff_max_ms = 100;
	p.start_limit_burst = 3;
	p.start_limit_interval_ms = 10000;
	memset(&st, 0, sizeof st);
	uint64_t now = 1000;
	watch_policy_note_start(&st, now);
	assert_true(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 10, false, now, &d, why, sizeof why));
	watch_policy_note_start(&st, now += 100);
	assert_true(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 10, false, now, &d, why, sizeof why));
	watch_policy_note_start(&st, now += 100);
	assert_false(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 10, false, now, &d, why, sizeof why));
	assert_non_null(strstr(why, "start limit"));
	/* ... but later it may start again */
	assert_true(watch_policy_next(&p, &st, WATCH_FAILURE, 1, 10, false, now + 20000, &d, why, sizeof why));
}

static void test_halve(void **state)
{
	(void)state;
	long long n;
	assert_true(watch_halve("8", &n));
	assert_int_equal(n, 4);
	assert_true(watch_halve("3", &n));
	assert_int_equal(n, 1);
	assert_true(watch_halve("2", &n));
	assert_int_equal(n, 1);
	assert_false(watch_halve("1", &n));
	assert_false(watch_halve("0", &n));
	assert_false(watch_halve("x", &n));
	assert_false(watch_halve(NULL, &n));
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

static void test_tree_fixture(void **state)
{
	(void)state;
	char root[] = "/tmp/gw-watch-XXXXXX";
	assert_non_null(mkdtemp(root));
	/* 100 -> 101 -> 102 (command with spaces and a paren), 100 -> 104; 103 unrelated */
	put(root, "/proc/100/stat", "100 (sup) S 1 100 100 0\n");
	put(root, "/proc/101/stat", "101 (bash) S 100 101 101 0\n");
	put(root, "/proc/102/stat", "102 (py thon) x) R 101 101 101 0\n");
	put(root, "/proc/103/stat", "103 (other) S 1 103 103 0\n");
	put(root, "/proc/104/stat", "104 (orphan) T 100 104 104 0\n");
	put(root, "/proc/101/statm", "1000 256 10 1 0 100 0\n");
	put(root, "/proc/102/statm", "1000 512 10 1 0 100 0\n");
	put(root, "/proc/self/cgroup", "0::/user.slice/job\n");
	put(root, "/sys/fs/cgroup/user.slice/job/memory.events", "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n");
	gw_set_root(root);
	pid_t *t = NULL;
	size_t n = 0;
	assert_int_equal(watch_tree(100, &t, &n, NULL), 0);
	assert_int_equal(n, 3);
	qsort(t, n, sizeof *t, cmp_pid);
	assert_int_equal(t[0], 101);
	assert_int_equal(t[1], 102);
	assert_int_equal(t[2], 104);
	long page = sysconf(_SC_PAGESIZE);
	assert_int_equal(watch_rss_bytes(t, n), (uint64_t)(256 + 512) * (uint64_t)page);
	free(t);
	assert_int_equal(watch_proc_state(104), 'T');
	assert_int_equal(watch_proc_state(102), 'R');
	assert_int_equal(watch_proc_state(999), 0);
	assert_int_equal(watch_cgroup_oom_kills(0), 2);
	/* The children files, when present, are used instead of a scan. */
	put(root, "/proc/200/task/200/children", "201 ");
	put(root, "/proc/201/task/201/children", "202 203");
	put(root, "/proc/201/task/205/children", "");
	assert_int_equal(watch_tree(200, &t, &n, NULL), 0);
	assert_int_equal(n, 3);
	free(t);
	gw_set_root(NULL);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/*
 * The report (issue 10): event labels never overlap, however close the
 * events; lines break between attempts; the GPU memory chart carries the
 * card's total and --mem-limit.
 */
static void test_report_layout(void **state)
{
	(void)state;
	watch_result r = {0};
	watch_opts o;
	watch_opts_defaults(&o);
	o.mem_limit_bytes = 6 * GiB;
	r.series = calloc(1, sizeof *r.series);
	watch_series *se = r.series;
	se->merged = 1;
	se->n_gpus = 1;
	se->gpu_mem = calloc(WATCH_SERIES_MAX, sizeof(double));
	se->gpu_util = calloc(WATCH_SERIES_MAX, sizeof(double));
	se->gpu_temp = calloc(WATCH_SERIES_MAX, sizeof(double));
	se->gpu_power = calloc(WATCH_SERIES_MAX, sizeof(double));
	se->n = 100;
	for (size_t i = 0; i < se->n; i++) {
		se->t_ms[i] = i * 100;
		se->attempt[i] = i < 50 ? 1 : 2;
		se->job_mem[i] = se->gpu_mem[i] = (double)GiB + (double)i * MiB;
		se->rss[i] = 100.0 * MiB;
		se->gpu_util[i] = 50;
		se->gpu_temp[i] = 60;
		se->gpu_power[i] = 100000;
	}
	r.gpu_seen = true;
	r.n_gpus = 1;
	r.gpus = calloc(1, sizeof *r.gpus);
	r.gpus[0].mem_total_bytes = (hw_val){.v = (int64_t)(8 * GiB), .st = HW_OK};
	snprintf(r.gpus[0].name, sizeof r.gpus[0].name, "test GPU");
	r.duration_ms = 10000;
	/* 60 alerts, restarts and Xids within 3 s: far more labels than fit */
	static const watch_event_kind kinds[] = {WATCH_EV_LEAK, WATCH_EV_RESTART, WATCH_EV_MEM_LIMIT, WATCH_EV_XID};
	r.n_events = 60;
	r.events = calloc(r.n_events, sizeof *r.events);
	for (size_t i = 0; i < r.n_events; i++) {
		r.events[i].t_ms = 3000 + i * 50;
		r.events[i].kind = kinds[i % 4];
		r.events[i].attempt = 1;
	}
	char *argv[] = {"train", NULL};
	strbuf sb = STRBUF_INIT;
	watch_report_html(&r, argv, &o, &sb);
	const char *html = sb_str(&sb);
	/* labels of the first chart: no two on one row overlap (6.2 px a character, DejaVu Sans at 11 px) */
	const char *end = strstr(html, "</svg>");
	assert_non_null(end);
	double a[64], b[64], y[64];
	size_t n = 0;
	for (const char *p = html; (p = strstr(p, "<text class=\"mark\" x=\"")) && p < end; p++) {
		double x, yy;
		assert_int_equal(sscanf(p, "<text class=\"mark\" x=\"%lf\" y=\"%lf\"", &x, &yy), 2);
		const char *gt = strchr(p, '>'), *lt = strstr(p, "</text>");
		double w = 6.2 * (double)(lt - gt - 1);
		bool right = strstr(p, "text-anchor=\"end\"") && strstr(p, "text-anchor=\"end\"") < gt;
		assert_true(n < 64);
		a[n] = right ? x - w : x;
		b[n] = right ? x : x + w;
		y[n++] = yy;
	}
	assert_true(n >= 4);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (y[i] == y[j] && a[i] < b[j] && a[j] < b[i])
				fail_msg("labels %zu and %zu overlap on row y=%.0f: [%.0f, %.0f] and [%.0f, %.0f]", i, j, y[i], a[i],
					 b[i], a[j], b[j]);
	assert_non_null(strstr(html, "more events (see the table)"));
	/* the card's total and the limit */
	assert_non_null(strstr(html, "GPU 0 total 8.00 GiB"));
	assert_non_null(strstr(html, "--mem-limit 6.00 GiB"));
	/* two attempts: the host memory line is two polylines */
	const char *host = strstr(html, "aria-label=\"Host memory\"");
	assert_non_null(host);
	size_t lines = 0;
	for (const char *p = host; (p = strstr(p, "<polyline")) && p < strstr(host, "</svg>"); p++)
		lines++;
	assert_int_equal(lines, 2);
	sb_release(&sb);
	watch_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_theil_sen),
		cmocka_unit_test(test_leak_detector),
		cmocka_unit_test(test_leak_warmup),
		cmocka_unit_test(test_heat),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_halve),
		cmocka_unit_test(test_tree_fixture),
		cmocka_unit_test(test_report_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * gpuwise run: supervise a long GPU job.  Parses options, hands the job to
 * watch_run(), and shows what happens: a status line on a terminal, events
 * on stderr, a CSV or JSON-lines log, an HTML report and a JSON summary.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/vramcap.h"
#include "doctor/doctor.h"
#include "util/json.h"
#include "watch/watch.h"

static void usage(FILE *f)
{
	fprintf(f,
		_("usage: gpuwise run [OPTIONS] -- CMD [ARGS...]\n\n"
		"Start CMD in its own process group and supervise it: sample its GPU memory\n"
		"(summed over its whole process tree), the GPUs' utilisation, temperature,\n"
		"power and clocks, catch leaks, heat, hangs and Xid errors, classify how it\n"
		"ended, and restart it with back-off.\n\n"
		"Sampling:\n"
		"  --interval DUR        sample every DUR (default 1s, at least 100ms)\n"
		"  --no-gpu              do not open NVML; watch the host side only\n"
		"  --xid-file FILE       read Xid events from FILE (default /dev/kmsg)\n\n"
		"Restarts:\n"
		"  --restart POLICY      never (default), on-failure or always\n"
		"  --max-restarts N      at most N restarts (default 3; 'unlimited')\n"
		"  --backoff MIN..MAX    exponential back-off between attempts (default 5s..5m)\n"
		"  --start-limit N/DUR   give up after N starts within DUR (default 5/10s, 0 off)\n"
		"  --no-restart-on LIST  exit codes or classes never restarted (e.g. 2,cuda-oom)\n"
		"  --oom-halve VAR       after a CUDA out-of-memory exit, halve the integer\n"
		"                        environment variable VAR for the next attempt (min 1)\n"
		"  --oom-halve-arg NAME  the same for the command's own option NAME, as in\n"
		"                        '--batch-size 32' or '--batch-size=32' (min 1)\n"
		"  --grace DUR           SIGTERM to SIGKILL when stopping the job (default 10s)\n\n"
		"Detectors and actions:\n"
		"  --mem-limit SIZE      stop the job when its GPU memory exceeds SIZE\n"
		"  --vram-cap SIZE       hard cap: CUDA allocations that would take the job past\n"
		"                        SIZE on a GPU fail as out of memory (libgpuwise-cap.so)\n"
		"  --on-leak ACTION      warn (default), restart or stop on a memory leak (GPU\n"
		"                        memory, or the job's host RSS: the same detector)\n"
		"  --leak-warmup DUR     ignore the first DUR of each attempt (default 2m)\n"
		"  --leak-window DUR     trend window (default 30s; six are needed)\n"
		"  --temp-limit C        heat alert at C degrees or thermal slowdown (default 83)\n"
		"  --on-heat ACTION      warn (default), pause (SIGSTOP until 5 C under) or stop\n"
		"  --hang-timeout DUR    stop the job after DUR of no output and 0%% GPU use\n"
		"  --on-event CMD        run CMD (sh -c) for every event, with GPUWISE_EVENT,\n"
		"                        GPUWISE_EVENT_DETAIL, GPUWISE_EVENT_GPU,\n"
		"                        GPUWISE_EVENT_VALUE, GPUWISE_EVENT_ATTEMPT,\n"
		"                        GPUWISE_EVENT_TIME and GPUWISE_JOB_PID set\n\n"
		"Output:\n"
		"  --log FILE            every sample as CSV, or JSON lines if FILE ends in .jsonl\n"
		"  --report FILE         a self-contained HTML report with charts at the end\n"
		"  --json                a JSON summary on stdout at the end (after the job's output)\n"
		"  -h, --help            show this help\n\n"
		"The job gets GPUWISE_RESTART_COUNT (0 on the first attempt) and\n"
		"GPUWISE_RUN_TOKEN.  SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGXCPU, SIGXFSZ and\n"
		"SIGPWR are forwarded to the job and end the run (a second one kills the\n"
		"job); SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO and real-time\n"
		"signals pass through; a stopped job gets SIGCONT after a forwarded signal.\n"
		"If gpuwise itself is killed (SIGKILL, or a fault signal such as SIGSEGV),\n"
		"the job's leader gets SIGKILL (PR_SET_PDEATHSIG) and a sentinel process\n"
		"kills the rest of the job.\n"
		"At the end, one line on stderr sums the run up.\n\n"
		"Exit status: the job's own (the last attempt's exit code, or 128+N when\n"
		"signal N ended it; 126/127 when CMD cannot be run); 1 when supervision\n"
		"cannot start (for example a --log file that cannot be written); 2 usage error.\n"));
}

enum {
	OPT_INTERVAL = 256, OPT_RESTART, OPT_MAX_RESTARTS, OPT_BACKOFF, OPT_START_LIMIT,
	OPT_NO_RESTART_ON, OPT_OOM_HALVE, OPT_MEM_LIMIT, OPT_ON_LEAK, OPT_ON_HEAT,
	OPT_TEMP_LIMIT, OPT_HANG_TIMEOUT, OPT_ON_EVENT, OPT_LOG, OPT_REPORT, OPT_JSON,
	OPT_LEAK_WARMUP, OPT_LEAK_WINDOW, OPT_XID_FILE, OPT_GRACE, OPT_NO_GPU, OPT_OOM_HALVE_ARG,
	OPT_VRAM_CAP,
};

/* ---- output: one writer thread per stream ------------------------------ */

/*
 * Everything run prints (the job's output, events, the status line, the
 * summaries) goes to stdout and stderr through a writer thread each, so
 * a reader that stalls (a pager, a full pipe) holds up only that thread:
 * the supervisor keeps forwarding signals and sampling.  Once OUTQ_HIGH
 * bytes wait, the supervisor stops reading the job's pipe, and the job
 * blocks in write() as it would without gpuwise.  A write that fails
 * (EPIPE: the reader is gone) marks the stream closed; its output is
 * dropped from then on and the job's stdout pipe is closed.
 */
#define OUTQ_HIGH (1u << 20)

typedef struct outq {
	int fd;
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t more, drained;
	char *buf, *spare;          /* pending bytes; the buffer being written is swapped out */
	size_t len, cap, spare_cap, inflight;
	bool closed, stop;
} outq;

static void *outq_main(void *arg)
{
	outq *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->len && !q->stop)
			pthread_cond_wait(&q->more, &q->mu);
		if (!q->len)
			break;
		char *b = q->buf;
		size_t n = q->len, bcap = q->cap;
		q->buf = q->spare;
		q->cap = q->spare_cap;
		q->spare = NULL;
		q->spare_cap = q->len = 0;
		q->inflight = n;
		bool closed = q->closed;
		pthread_mutex_unlock(&q->mu);
		for (size_t off = 0; !closed && off < n;) {
			ssize_t w = write(q->fd, b + off, n - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				closed = true;
			else
				off += (size_t)w;
		}
		pthread_mutex_lock(&q->mu);
		q->closed |= closed;
		q->inflight = 0;
		if (!q->spare) {
			q->spare = b;
			q->spare_cap = bcap;
		} else {
			free(b);
		}
		pthread_cond_broadcast(&q->drained);
	}
	pthread_cond_broadcast(&q->drained);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* Start the thread with every signal blocked: they belong to the supervisor's signalfd. */
static void outq_start(outq *q, int fd)
{
	memset(q, 0, sizeof *q);
	q->fd = fd;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->more, NULL);
	pthread_cond_init(&q->drained, NULL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	q->started = pthread_create(&q->th, NULL, outq_main, q) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void outq_put(outq *q, const char *data, size_t n)
{
	if (!q->started) {
		while (n) {
			ssize_t w = write(q->fd, data, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return;
			data += w;
			n -= (size_t)w;
		}
		return;
	}
	pthread_mutex_lock(&q->mu);
	if (!q->closed && n) {
		q->buf = xgrow(q->buf, &q->cap, q->len + n, 1);
		memcpy(q->buf + q->len, data, n);
		q->len += n;
		pthread_cond_signal(&q->more);
	}
	pthread_mutex_unlock(&q->mu);
}

static void outq_printf(outq *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outq_printf(outq *q, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *t = NULL;
	int n = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (n > 0)
		outq_put(q, t, (size_t)n);
	free(t);
}

static int outq_state(outq *q)
{
	if (!q->started)
		return WATCH_OUT_OK;
	pthread_mutex_lock(&q->mu);
	int st = q->closed ? WATCH_OUT_CLOSED : q->len + q->inflight > OUTQ_HIGH ? WATCH_OUT_FULL : WATCH_OUT_OK;
	pthread_mutex_unlock(&q->mu);
	return st;
}

/* Write out what waits (blocking: the run is over), then end the thread. */
static void outq_finish(outq *q)
{
	if (!q->started)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	free(q->buf);
	free(q->spare);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->more);
	pthread_cond_destroy(&q->drained);
	q->started = false;
}

typedef struct run_ctx {
	FILE *log;
	bool jsonl;
	bool header_done;
	bool tty;
	bool line_shown;
	int restarts;
	outq out, err;
} run_ctx;

static void clear_line(run_ctx *c)
{
	if (c->line_shown) {
		outq_put(&c->err, "\r\033[K", 4);
		c->line_shown = false;
	}
}

static void on_output(void *ctx, int fd, const char *buf, size_t n)
{
	run_ctx *c = ctx;
	clear_line(c);
	outq_put(fd == 1 ? &c->out : &c->err, buf, n);
}

static int output_state(void *ctx, int fd)
{
	run_ctx *c = ctx;
	return outq_state(fd == 1 ? &c->out : &c->err);
}

static void on_event(void *ctx, const watch_event *e)
{
	run_ctx *c = ctx;
	clear_line(c);
	if (e->kind == WATCH_EV_RESTART)
		c->restarts++;
	const char *col = watch_event_is_alert(e->kind) ? c_red(stderr)
			  : e->kind == WATCH_EV_EXIT || e->kind == WATCH_EV_PAUSE ? c_yellow(stderr)
										     : "";
	char t[32];
	/* the supervisor's detail is English (the metrics log); shown in the reader's language */
	char *detail = gw_translate_text(e->detail);
	outq_printf(&c->err, "gpuwise: [%s] %s%s%s: %s\n", fmt_duration(t, sizeof t, e->t_ms), col,
		    watch_event_name(e->kind), *col ? c_reset(stderr) : "", detail);
	free(detail);
}

/* A hw_val as a CSV cell or a JSON value. */
static void put_val(FILE *f, hw_val v, bool json)
{
	if (HW_VALID(v))
		fprintf(f, "%lld", (long long)v.v);
	else if (json)
		fputs("null", f);
}

static void log_sample(run_ctx *c, const watch_sample *s)
{
	FILE *f = c->log;
	if (c->jsonl) {
		fprintf(f, "{\"t_s\":%.3f,\"wall_ms\":%llu,\"attempt\":%d,\"pids\":%zu,\"host_rss_bytes\":%llu,"
			   "\"job_gpu_mem_bytes\":",
			(double)s->t_ms / 1000.0, (unsigned long long)s->wall_ms, s->attempt, s->n_pids,
			(unsigned long long)s->host_rss_bytes);
		put_val(f, s->job_mem_bytes, true);
		fprintf(f, ",\"paused\":%s,\"gpus\":[", s->paused ? "true" : "false");
		for (size_t i = 0; i < s->n_gpus; i++) {
			const watch_gpu_sample *g = &s->gpus[i];
			fprintf(f, "%s{\"index\":%d,\"mem_used_bytes\":", i ? "," : "", g->index);
			put_val(f, g->mem_used_bytes, true);
			fputs(",\"job_mem_bytes\":", f);
			put_val(f, g->job_mem_bytes, true);
			fputs(",\"util_pct\":", f);
			put_val(f, g->util_gpu_pct, true);
			fputs(",\"temp_c\":", f);
			put_val(f, g->temp_c, true);
			fputs(",\"power_mw\":", f);
			put_val(f, g->power_mw, true);
			fputs(",\"clock_sm_mhz\":", f);
			put_val(f, g->clock_sm_mhz, true);
			fputs(",\"clock_mem_mhz\":", f);
			put_val(f, g->clock_mem_mhz, true);
			fputs(",\"throttle_reasons\":", f);
			put_val(f, g->throttle_reasons, true);
			fputc('}', f);
		}
		fputs("]}\n", f);
	} else {
		if (!c->header_done) {
			fputs("time_s,wall_ms,attempt,pids,host_rss_bytes,job_gpu_mem_bytes,paused", f);
			for (size_t i = 0; i < s->n_gpus; i++) {
				int k = s->gpus[i].index;
				fprintf(f, ",gpu%d_mem_used_bytes,gpu%d_job_mem_bytes,gpu%d_util_pct,gpu%d_temp_c,"
					   "gpu%d_power_mw,gpu%d_clock_sm_mhz,gpu%d_clock_mem_mhz,gpu%d_throttle_reasons",
					k, k, k, k, k, k, k, k);
			}
			fputc('\n', f);
			c->header_done = true;
		}
		fprintf(f, "%.3f,%llu,%d,%zu,%llu,", (double)s->t_ms / 1000.0, (unsigned long long)s->wall_ms,
			s->attempt, s->n_pids, (unsigned long long)s->host_rss_bytes);
		put_val(f, s->job_mem_bytes, false);
		fprintf(f, ",%d", s->paused ? 1 : 0);
		for (size_t i = 0; i < s->n_gpus; i++) {
			const watch_gpu_sample *g = &s->gpus[i];
			const hw_val *v[] = {&g->mem_used_bytes, &g->job_mem_bytes, &g->util_gpu_pct, &g->temp_c,
					     &g->power_mw, &g->clock_sm_mhz, &g->clock_mem_mhz, &g->throttle_reasons};
			for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
				fputc(',', f);
				put_val(f, *v[k], false);
			}
		}
		fputc('\n', f);
	}
	fflush(f);
}

static void status_line(run_ctx *c, const watch_sample *s)
{
	char t[32], m[32];
	int temp = -1000, util = -1;
	for (size_t i = 0; i < s->n_gpus; i++) {
		const watch_gpu_sample *g = &s->gpus[i];
		if (HW_VALID(g->temp_c) && g->temp_c.v > temp)
			temp = (int)g->temp_c.v;
		if (HW_VALID(g->util_gpu_pct) && g->util_gpu_pct.v > util)
			util = (int)g->util_gpu_pct.v;
	}
	outq *q = &c->err;
	outq_printf(q, "\r\033[K");
	outq_printf(q, _("%s%s%s  restarts %d  job %s"), c_bold(stderr), fmt_duration(t, sizeof t, s->t_ms),
		    c_reset(stderr), c->restarts,
		    HW_VALID(s->job_mem_bytes) ? fmt_bytes(m, sizeof m, (uint64_t)s->job_mem_bytes.v) : _("n/a"));
	if (temp > -1000)
		outq_printf(q, "  %d C", temp);
	if (util >= 0)
		outq_printf(q, _("  util %d%%"), util);
	if (!s->gpu_ok)
		outq_printf(q, _("  host RSS %s"), fmt_bytes(m, sizeof m, s->host_rss_bytes));
	if (s->paused)
		outq_printf(q, _("  %spaused%s"), c_yellow(stderr), c_reset(stderr));
	c->line_shown = true;
}

static void on_sample(void *ctx, const watch_sample *s)
{
	run_ctx *c = ctx;
	if (c->log)
		log_sample(c, s);
	if (c->tty && outq_state(&c->err) == WATCH_OUT_OK)
		status_line(c, s);
}

/* ---- the JSON summary --------------------------------------------------- */

static json_t *jval(hw_val v)
{
	return jint_or_null(HW_VALID(v), (long long)v.v);
}

static json_t *jsec(uint64_t ms)
{
	return jreal_round((double)ms / 1000.0, 3);
}

static json_t *event_json(const watch_event *e)
{
	json_t *j = json_object();
	json_object_set_new(j, "t_s", jsec(e->t_ms));
	json_object_set_new(j, "wall_ms", json_integer((json_int_t)e->wall_ms));
	json_object_set_new(j, "attempt", json_integer(e->attempt));
	json_object_set_new(j, "event", json_string(watch_event_name(e->kind)));
	json_object_set_new(j, "gpu", jint_or_null(e->gpu >= 0, e->gpu));
	json_object_set_new(j, "detail", json_string(e->detail));
	switch (e->kind) {
	case WATCH_EV_LEAK:
	case WATCH_EV_HOST_LEAK:
		json_object_set_new(j, "slope_bytes_per_s", jreal_round(e->value, 1));
		json_object_set_new(j, "slope_mib_per_min", jreal_round(e->value * 60 / (double)MiB, 3));
		json_object_set_new(j, "time_to_oom_s", isfinite(e->value2) ? jreal_round(e->value2, 1) : json_null());
		break;
	case WATCH_EV_HEAT:
	case WATCH_EV_HEAT_CLEAR:
		json_object_set_new(j, "temp_c", isfinite(e->value) ? json_integer((json_int_t)e->value) : json_null());
		break;
	case WATCH_EV_XID:
		json_object_set_new(j, "xid", json_integer((json_int_t)e->value));
		break;
	case WATCH_EV_EXIT:
	case WATCH_EV_GIVE_UP:
		json_object_set_new(j, "exit_status", json_integer((json_int_t)e->value));
		break;
	case WATCH_EV_RESTART:
		json_object_set_new(j, "delay_s", jreal_round(e->value / 1000.0, 3));
		break;
	case WATCH_EV_OOM_HALVE:
		json_object_set_new(j, "value", json_integer((json_int_t)e->value));
		break;
	case WATCH_EV_MEM_LIMIT:
		json_object_set_new(j, "job_gpu_mem_bytes", json_integer((json_int_t)e->value));
		json_object_set_new(j, "limit_bytes", json_integer((json_int_t)e->value2));
		break;
	case WATCH_EV_HANG:
		json_object_set_new(j, "idle_s", jreal_round(e->value, 1));
		break;
	case WATCH_EV_SIGNAL:
	case WATCH_EV_START:
		json_object_set_new(j, e->kind == WATCH_EV_START ? "pid" : "signal",
				    json_integer((json_int_t)e->value));
		break;
	default:
		break;
	}
	return j;
}

static json_t *summary_json(const watch_result *r, char **argv)
{
	json_t *j = json_object();
	json_t *cmd = json_array();
	for (char **a = argv; *a; a++)
		json_array_append_new(cmd, json_string(*a));
	json_object_set_new(j, "command", cmd);
	json_object_set_new(j, "exit_status", json_integer(r->exit_status));
	json_object_set_new(j, "final_class",
			    r->n_attempts ? json_string(watch_class_name(r->attempts[r->n_attempts - 1].cls))
					  : json_null());
	json_object_set_new(j, "duration_s", jsec(r->duration_ms));
	json_object_set_new(j, "restarts", json_integer(r->n_attempts ? (json_int_t)r->n_attempts - 1 : 0));
	json_object_set_new(j, "gpu", json_boolean(r->gpu_seen));
	json_object_set_new(j, "no_gpu_reason", r->gpu_seen ? json_null() : json_string(r->no_gpu_reason));
	json_object_set_new(j, "xid_error", *r->xid_error ? json_string(r->xid_error) : json_null());
	json_object_set_new(j, "samples", json_integer((json_int_t)r->samples));
	json_object_set_new(j, "gpuwise_cpu_s", jreal_round(r->cpu_s, 4));
	json_object_set_new(j, "sentinel", json_boolean(r->sentinel));
	json_t *at = json_array();
	for (size_t i = 0; i < r->n_attempts; i++) {
		const watch_attempt *a = &r->attempts[i];
		json_t *o = json_object();
		json_object_set_new(o, "attempt", json_integer(a->n));
		json_object_set_new(o, "pid", a->pid > 0 ? json_integer(a->pid) : json_null());
		json_object_set_new(o, "start_s", jsec(a->start_ms));
		json_object_set_new(o, "end_s", jsec(a->end_ms));
		json_object_set_new(o, "duration_s", jsec(a->end_ms - a->start_ms));
		json_object_set_new(o, "exit_status", json_integer(a->status));
		json_object_set_new(o, "exit_code", jint_or_null(WIFEXITED(a->wait_status), WEXITSTATUS(a->wait_status)));
		json_object_set_new(o, "signal", jint_or_null(WIFSIGNALED(a->wait_status), WTERMSIG(a->wait_status)));
		json_object_set_new(o, "class", json_string(watch_class_name(a->cls)));
		json_object_set_new(o, "reason", *a->reason ? json_string(a->reason) : json_null());
		json_object_set_new(o, "env_value", *a->env_value ? json_string(a->env_value) : json_null());
		json_object_set_new(o, "arg_value", *a->arg_value ? json_string(a->arg_value) : json_null());
		json_object_set_new(o, "stderr_tail", *a->stderr_tail ? json_string(a->stderr_tail) : json_null());
		json_object_set_new(o, "backoff_s", a->backoff_ms ? jsec(a->backoff_ms) : json_null());
		json_object_set_new(o, "peak_job_gpu_mem_bytes", jval(a->peak_job_mem_bytes));
		json_array_append_new(at, o);
	}
	json_object_set_new(j, "attempts", at);
	json_t *ev = json_array();
	for (size_t i = 0; i < r->n_events; i++)
		json_array_append_new(ev, event_json(&r->events[i]));
	json_object_set_new(j, "events", ev);
	json_t *pk = json_object();
	json_object_set_new(pk, "job_gpu_mem_bytes", jval(r->peak_job_mem_bytes));
	json_object_set_new(pk, "host_rss_bytes", json_integer((json_int_t)r->peak_rss_bytes));
	json_t *gs = json_array();
	for (size_t i = 0; i < r->n_gpus; i++) {
		const watch_gpu_info *g = &r->gpus[i];
		json_t *o = json_object();
		json_object_set_new(o, "index", json_integer(g->index));
		json_object_set_new(o, "name", json_string(g->name));
		json_object_set_new(o, "mem_total_bytes", jval(g->mem_total_bytes));
		json_object_set_new(o, "mem_used_bytes", jval(g->peak_mem_used_bytes));
		json_object_set_new(o, "job_mem_bytes", jval(g->peak_job_mem_bytes));
		json_object_set_new(o, "util_pct", jval(g->peak_util_pct));
		json_object_set_new(o, "temp_c", jval(g->peak_temp_c));
		json_object_set_new(o, "power_mw", jval(g->peak_power_mw));
		json_array_append_new(gs, o);
	}
	json_object_set_new(pk, "gpus", gs);
	json_object_set_new(j, "peaks", pk);
	return j;
}

/*
 * One line on stderr at the end: attempts, outcome, peaks, the report.
 * "gpuwise: run: 3 attempts, success (exit 0) after 12.3s; peak job GPU
 * memory 1.20 GiB, host RSS 35.0 MiB; report train.html"
 */
static void summary_line(run_ctx *c, const watch_result *r, const char *report_path)
{
	char d[32], g[32], h[32];
	const watch_attempt *last = r->n_attempts ? &r->attempts[r->n_attempts - 1] : NULL;
	outq_printf(&c->err,
		    P_("gpuwise: run: %zu attempt, %s (exit %d) after %s; peak job GPU memory %s, host RSS %s%s%s\n",
		       "gpuwise: run: %zu attempts, %s (exit %d) after %s; peak job GPU memory %s, host RSS %s%s%s\n",
		       r->n_attempts),
		    r->n_attempts, last ? watch_class_name(last->cls) : _("not started"),
		    r->exit_status, fmt_duration(d, sizeof d, r->duration_ms),
		    HW_VALID(r->peak_job_mem_bytes) ? fmt_bytes(g, sizeof g, (uint64_t)r->peak_job_mem_bytes.v) : _("n/a"),
		    fmt_bytes(h, sizeof h, r->peak_rss_bytes), report_path ? _("; report ") : "",
		    report_path ? report_path : "");
}

/* ---- options ------------------------------------------------------------ */

static int parse_backoff(const char *s, uint64_t *lo, uint64_t *hi)
{
	const char *dots = strstr(s, "..");
	if (!dots)
		return GW_EINVAL;
	char *a = xstrndup(s, (size_t)(dots - s));
	int rc = parse_duration_ms(a, lo);
	free(a);
	if (rc || parse_duration_ms(dots + 2, hi) || *lo == 0 || *hi < *lo)
		return GW_EINVAL;
	return 0;
}

static int parse_start_limit(const char *s, watch_policy *p)
{
	if (strcmp(s, "0") == 0) {
		p->start_limit_interval_ms = 0;
		return 0;
	}
	const char *slash = strchr(s, '/');
	if (!slash)
		return GW_EINVAL;
	char *a = xstrndup(s, (size_t)(slash - s));
	long long n;
	int rc = parse_int(a, 1, 1000000, &n);
	free(a);
	uint64_t ms;
	if (rc || parse_duration_ms(slash + 1, &ms) || ms == 0)
		return GW_EINVAL;
	p->start_limit_burst = (int)n;
	p->start_limit_interval_ms = ms;
	return 0;
}

static int parse_no_restart(const char *s, watch_policy *p)
{
	char *copy = xstrdup(s);
	char *parts[64];
	size_t n = str_split(copy, ',', parts, 64);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char *w = str_trim(parts[i]);
		long long code;
		int cls;
		if (parse_int(w, 0, 255, &code) == 0) {
			if (p->n_no_restart_codes == sizeof p->no_restart_codes / sizeof p->no_restart_codes[0])
				rc = GW_ERANGE;
			else
				p->no_restart_codes[p->n_no_restart_codes++] = (int)code;
		} else if ((cls = watch_class_parse(w)) >= 0) {
			p->no_restart_class[cls] = true;
		} else {
			rc = GW_EINVAL;
		}
	}
	free(copy);
	return rc;
}

static int parse_action(const char *s, bool allow_pause, bool allow_restart, watch_action *a)
{
	if (strcmp(s, "warn") == 0)
		*a = WATCH_ACT_WARN;
	else if (strcmp(s, "stop") == 0)
		*a = WATCH_ACT_STOP;
	else if (allow_pause && strcmp(s, "pause") == 0)
		*a = WATCH_ACT_PAUSE;
	else if (allow_restart && strcmp(s, "restart") == 0)
		*a = WATCH_ACT_RESTART;
	else
		return GW_EINVAL;
	return 0;
}

static int dur_opt(const char *name, const char *v, uint64_t *ms)
{
	if (parse_duration_ms(v, ms))
		return usage_error("run", "option '--%s' needs a duration like 500ms, 10s or 5m, not '%s'", name, v);
	return 0;
}

/*
 * Open --log or --report for writing without following a symbolic link
 * at path (a link planted in a shared directory would make gpuwise, maybe
 * running as root, overwrite whatever it points to) and without blocking
 * on a FIFO.  Prints the one-line error; NULL on failure.
 */
static FILE *open_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	struct stat sb;
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
			gw_errorf(_("cannot write '%s': it is a symbolic link, which gpuwise run never writes through"), path);
		else
			gw_errorf(_("cannot write '%s': %s"), path, strerror(e));
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		gw_errorf(_("cannot write '%s': %s"), path, strerror(errno));
		close(fd);
	}
	return f;
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"restart", required_argument, NULL, OPT_RESTART},
		{"max-restarts", required_argument, NULL, OPT_MAX_RESTARTS},
		{"backoff", required_argument, NULL, OPT_BACKOFF},
		{"start-limit", required_argument, NULL, OPT_START_LIMIT},
		{"no-restart-on", required_argument, NULL, OPT_NO_RESTART_ON},
		{"oom-halve", required_argument, NULL, OPT_OOM_HALVE},
		{"oom-halve-arg", required_argument, NULL, OPT_OOM_HALVE_ARG},
		{"mem-limit", required_argument, NULL, OPT_MEM_LIMIT},
		{"on-leak", required_argument, NULL, OPT_ON_LEAK},
		{"on-heat", required_argument, NULL, OPT_ON_HEAT},
		{"temp-limit", required_argument, NULL, OPT_TEMP_LIMIT},
		{"hang-timeout", required_argument, NULL, OPT_HANG_TIMEOUT},
		{"leak-warmup", required_argument, NULL, OPT_LEAK_WARMUP},
		{"leak-window", required_argument, NULL, OPT_LEAK_WINDOW},
		{"xid-file", required_argument, NULL, OPT_XID_FILE},
		{"on-event", required_argument, NULL, OPT_ON_EVENT},
		{"grace", required_argument, NULL, OPT_GRACE},
		{"no-gpu", no_argument, NULL, OPT_NO_GPU},
		{"vram-cap", required_argument, NULL, OPT_VRAM_CAP},
		{"log", required_argument, NULL, OPT_LOG},
		{"report", required_argument, NULL, OPT_REPORT},
		{"json", no_argument, NULL, OPT_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	watch_opts o;
	watch_opts_defaults(&o);
	const char *log_path = NULL, *report_path = NULL;
	bool json = false;
	uint64_t vram_cap_bytes = 0;
	vram_cap cap = {0};
	int opt, rc;
	long long n;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return GW_EXIT_OK;
		case OPT_INTERVAL:
			if ((rc = dur_opt("interval", optarg, &o.interval_ms)))
				return rc;
			if (o.interval_ms < 100 || o.interval_ms > 24 * 3600 * 1000ULL)
				return usage_error("run", "--interval must be from 100ms to 24h, not '%s'", optarg);
			break;
		case OPT_RESTART:
			if (strcmp(optarg, "never") == 0)
				o.policy.restart = WATCH_RESTART_NEVER;
			else if (strcmp(optarg, "on-failure") == 0)
				o.policy.restart = WATCH_RESTART_ON_FAILURE;
			else if (strcmp(optarg, "always") == 0)
				o.policy.restart = WATCH_RESTART_ALWAYS;
			else
				return usage_error("run", "--restart must be never, on-failure or always, not '%s'", optarg);
			break;
		case OPT_MAX_RESTARTS:
			if (strcmp(optarg, "unlimited") == 0)
				o.policy.max_restarts = -1;
			else if (parse_int(optarg, 0, 1000000, &n))
				return usage_error("run", "--max-restarts needs a count or 'unlimited', not '%s'", optarg);
			else
				o.policy.max_restarts = (int)n;
			break;
		case OPT_BACKOFF:
			if (parse_backoff(optarg, &o.policy.backoff_min_ms, &o.policy.backoff_max_ms))
				return usage_error("run", "--backoff needs MIN..MAX durations with 0 < MIN <= MAX, not '%s'",
						   optarg);
			break;
		case OPT_START_LIMIT:
			if (parse_start_limit(optarg, &o.policy))
				return usage_error("run", "--start-limit needs N/DURATION (like 5/10s) or 0, not '%s'", optarg);
			break;
		case OPT_NO_RESTART_ON:
			if (parse_no_restart(optarg, &o.policy))
				return usage_error("run", "--no-restart-on needs exit codes 0-255 or classes "
							  "(cuda-oom, host-oom, hardware, failure ...), not '%s'", optarg);
			break;
		case OPT_OOM_HALVE:
			if (!*optarg || strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
						 strlen(optarg) || (*optarg >= '0' && *optarg <= '9'))
				return usage_error("run", "--oom-halve needs a variable name, not '%s'", optarg);
			o.oom_halve_var = optarg;
			break;
		case OPT_OOM_HALVE_ARG:
			if (!*optarg || strchr(optarg, '='))
				return usage_error("run", "--oom-halve-arg needs an option name like --batch-size, not '%s'",
						   optarg);
			o.oom_halve_arg = optarg;
			break;
		case OPT_MEM_LIMIT:
			if ((rc = parse_size_opt("run", "--mem-limit", optarg, &o.mem_limit_bytes)))
				return rc;
			break;
		case OPT_ON_LEAK:
			if (parse_action(optarg, false, true, &o.on_leak))
				return usage_error("run", "--on-leak must be warn, restart or stop, not '%s'", optarg);
			break;
		case OPT_ON_HEAT:
			if (parse_action(optarg, true, false, &o.on_heat))
				return usage_error("run", "--on-heat must be warn, pause or stop, not '%s'", optarg);
			break;
		case OPT_TEMP_LIMIT:
			if (parse_int(optarg, 20, 150, &n))
				return usage_error("run", "--temp-limit needs degrees C between 20 and 150, not '%s'", optarg);
			o.temp_limit_c = (int)n;
			break;
		case OPT_HANG_TIMEOUT:
			if ((rc = dur_opt("hang-timeout", optarg, &o.hang_timeout_ms)))
				return rc;
			break;
		case OPT_LEAK_WARMUP:
			if ((rc = dur_opt("leak-warmup", optarg, &o.leak_warmup_ms)))
				return rc;
			break;
		case OPT_LEAK_WINDOW:
			if ((rc = dur_opt("leak-window", optarg, &o.leak_window_ms)))
				return rc;
			if (o.leak_window_ms < 100)
				return usage_error("run", "--leak-window must be at least 100ms, not '%s'", optarg);
			break;
		case OPT_XID_FILE:
			o.xid_path = optarg;
			break;
		case OPT_ON_EVENT:
			o.on_event_cmd = optarg;
			break;
		case OPT_GRACE:
			if ((rc = dur_opt("grace", optarg, &o.grace_ms)))
				return rc;
			break;
		case OPT_NO_GPU:
			o.no_gpu = true;
			break;
		case OPT_VRAM_CAP:
			if (parse_size(optarg, &vram_cap_bytes) || vram_cap_bytes == 0)
				return usage_error("run", "--vram-cap needs a size like 10G, not '%s'", optarg);
			break;
		case OPT_LOG:
			log_path = optarg;
			break;
		case OPT_REPORT:
			report_path = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case ':':
			return usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("run", "unknown option '-%c'", optopt);
			return usage_error("run", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0 && argv[optind][0] == '-')
		return usage_error("run", "unknown option '%s'", argv[optind]);
	if (optind >= argc)
		return usage_error("run", "no command given: gpuwise run [OPTIONS] -- CMD [ARGS...]");
	o.argv = argv + optind;

	run_ctx c = {0};
	FILE *report = NULL;
	watch_result r = {0};
	gw_error err = {0};
	int status = GW_EXIT_RUNTIME;
	/* Files are opened before the job starts: a bad path must not cost a run. */
	if (log_path) {
		if (!(c.log = open_output(log_path)))
			goto out;
		c.jsonl = str_ends(log_path, ".jsonl");
	}
	if (report_path && !(report = open_output(report_path)))
		goto out;
	if (vram_cap_bytes && vram_cap_start(vram_cap_bytes, &cap))
		goto out;
	c.tty = isatty(2) && !getenv("GPUWISE_NO_STATUS_LINE");
	fflush(stdout);
	fflush(stderr);
	outq_start(&c.out, 1);
	outq_start(&c.err, 2);
	watch_callbacks cb = {.ctx = &c,
			      .on_sample = on_sample,
			      .on_event = on_event,
			      .on_output = on_output,
			      .output_state = output_state};
	if (watch_run(&o, &cb, &r, &err)) {
		clear_line(&c);
		outq_printf(&c.err, "gpuwise: %s\n", gw_error_text(&err));
		goto out;
	}
	clear_line(&c);
	status = r.exit_status;
	if (c.log) {
		int bad = ferror(c.log);
		errno = 0;
		if (fflush(c.log) || bad) {
			outq_printf(&c.err, _("gpuwise: cannot write '%s': %s\n"), log_path, errno ? strerror(errno) : _("write error"));
			if (status == 0)
				status = GW_EXIT_RUNTIME;
		}
	}
	if (report) {
		strbuf sb = STRBUF_INIT;
		watch_report_html(&r, o.argv, &o, &sb);
		if (fwrite(sb.buf, 1, sb.len, report) != sb.len || fflush(report)) {
			outq_printf(&c.err, _("gpuwise: cannot write '%s': %s\n"), report_path, strerror(errno));
			report_path = NULL;
			if (status == 0)
				status = GW_EXIT_RUNTIME;
		}
		sb_release(&sb);
	}
	summary_line(&c, &r, report ? report_path : NULL);
	if (json) {
		json_t *j = summary_json(&r, o.argv);
		char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		if (text) {
			outq_put(&c.out, text, strlen(text));
			outq_put(&c.out, "\n", 1);
		}
		free(text);
		json_decref(j);
	}
out:
	outq_finish(&c.out);
	outq_finish(&c.err);
	if (c.log)
		fclose(c.log);
	if (report)
		fclose(report);
	watch_result_release(&r);
	explain_release();
	vram_cap_finish(&cap);
	return status;
}

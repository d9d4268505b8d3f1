/*
 * cmd/page: the lab's page (HTML) and the queue's Prometheus series, for
 * `gpuwise status --serve`.  Everything shown comes from NVML and from two
 * requests every user may make of the daemon, `queue` and `quota`; the
 * rows hold a job's id, display name, user, project, state, request and
 * reason, never its argv, environment or working directory.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/page.h"
#include "queue/queue.h"

#define PAGE_MAX_ROWS 2000   /* queue rows shown; the rest are counted */

void page_queue_release(page_queue *q)
{
	json_decref(q->jobs);
	json_decref(q->quota);
	free(q->socket);
	memset(q, 0, sizeof *q);
}

/* One request; the reply when ok, else NULL with q->err set. */
static json_t *ask(queue_conn *c, json_t *req, page_queue *q)
{
	json_t *rep = NULL;
	gw_error e;
	if (queue_call(c, req, &rep, &e)) {
		snprintf(q->err, sizeof q->err, "%s", e.msg);
		json_decref(req);
		return NULL;
	}
	json_decref(req);
	if (!json_is_true(json_object_get(rep, "ok"))) {
		const char *m = json_string_value(json_object_get(rep, "error"));
		snprintf(q->err, sizeof q->err, N_("the queue daemon refused: %s"), m ? m : N_("no reason given"));
		json_decref(rep);
		return NULL;
	}
	return rep;
}

void page_queue_fetch(const char *socket, uint64_t timeout_ms, page_queue *q)
{
	memset(q, 0, sizeof *q);
	q->socket = queue_socket_path(socket);
	queue_conn *c = NULL;
	gw_error e;
	if (queue_connect(q->socket, &c, &e)) {
		snprintf(q->err, sizeof q->err, "%s", e.msg);
		return;
	}
	queue_set_timeout(c, timeout_ms);
	json_t *jobs = json_array();
	json_t *cursor = NULL;
	/* the daemon answers in pages (docs/queue-protocol.md); at most PAGE_MAX_ROWS kept */
	for (;;) {
		json_t *req = json_pack("{s:s}", "op", "queue");
		if (cursor)
			json_object_set(req, "cursor", cursor);
		json_t *rep = ask(c, req, q);
		json_decref(cursor);
		cursor = NULL;
		if (!rep) {
			json_decref(jobs);
			jobs = NULL;
			break;
		}
		json_t *arr = json_object_get(rep, "jobs");
		size_t i;
		json_t *row;
		json_array_foreach(arr, i, row)
			if (json_array_size(jobs) < PAGE_MAX_ROWS)
				json_array_append(jobs, row);
		json_t *next = json_object_get(rep, "next");
		if (json_is_string(next) && json_array_size(jobs) < PAGE_MAX_ROWS)
			cursor = json_incref(next);
		json_decref(rep);
		if (!cursor)
			break;
	}
	q->jobs = jobs;
	if (jobs)
		q->quota = ask(c, json_pack("{s:s}", "op", "quota"), q);
	if (!q->quota) {
		json_decref(q->jobs);
		q->jobs = NULL;
	}
	queue_close(c);
}

/* ---- HTML ---------------------------------------------------------------------- */
static void esc(strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': sb_puts(sb, "&lt;"); break;
		case '>': sb_puts(sb, "&gt;"); break;
		case '&': sb_puts(sb, "&amp;"); break;
		case '"': sb_puts(sb, "&quot;"); break;
		case '\'': sb_puts(sb, "&#39;"); break;
		default: sb_add(sb, s, 1);
		}
	}
}

/* An English message (the hardware layer's, the queue client's, the
 * daemon's; /metrics keeps it English), escaped in the reader's language. */
static void esc_tr(strbuf *sb, const char *english)
{
	char *t = gw_translate_text(english ? english : "");
	esc(sb, t);
	free(t);
}

static const char *jstr(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static long long jint(json_t *o, const char *k, long long dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

/* A bar of used against total (total 0: no bar). */
static void bar(strbuf *sb, double used, double total)
{
	double pct = total > 0 ? used / total * 100.0 : 0;
	if (pct > 100)
		pct = 100;
	sb_printf(sb, "<div class=bar><div class=\"fill%s\" style=\"width:%.1f%%\"></div></div>", pct >= 90 ? " hot" : "",
		  total > 0 ? pct : 0);
}

/* The quota reply's row for the GPU h (by UUID, else by NVML index); NULL none. */
static json_t *queue_gpu(const page_queue *q, const hw_gpu *h)
{
	json_t *arr = q ? json_object_get(q->quota, "gpus") : NULL;
	size_t i;
	json_t *g;
	json_array_foreach(arr, i, g)
		if (h->uuid[0] && strcmp(jstr(g, "uuid"), h->uuid) == 0)
			return g;
	json_array_foreach(arr, i, g)
		if (!jstr(g, "uuid")[0] && jint(g, "index", -1) == h->nvml_index)
			return g;
	return NULL;
}

static void html_gpus(const hw_snapshot *s, const char *hw_err, const page_queue *q, strbuf *sb)
{
	sb_printf(sb, "<h2>%s</h2>\n", _("GPUs"));
	if (!s) {
		sb_printf(sb, "<p class=warn>%s", _("the GPUs cannot be read: "));
		esc_tr(sb, hw_err);
		sb_puts(sb, "</p>\n");
		return;
	}
	if (!s->n_gpus) {
		sb_printf(sb, "<p>%s</p>\n", _("no GPU found"));
		return;
	}
	sb_printf(sb, "<table id=gpus><tr><th>GPU</th><th>%s</th><th>%s</th><th></th><th>%s</th><th></th><th>%s</th><th></th><th>%s</th></tr>\n",
		  _("name"), _("memory used"), _("reserved by the queue"), _("utilisation"), _("temperature"));
	for (size_t i = 0; i < s->n_gpus; i++) {
		const hw_gpu *g = &s->gpus[i];
		char a[32], b[32];
		sb_printf(sb, "<tr><td>%d</td><td>", g->index);
		esc(sb, g->name);
		sb_puts(sb, "</td>");
		if (HW_VALID(g->mem_used_bytes) && HW_VALID(g->mem_total_bytes)) {
			sb_printf(sb, "<td class=num>%s / %s</td><td>", fmt_bytes(a, sizeof a, (uint64_t)g->mem_used_bytes.v),
				  fmt_bytes(b, sizeof b, (uint64_t)g->mem_total_bytes.v));
			bar(sb, (double)g->mem_used_bytes.v, (double)g->mem_total_bytes.v);
			sb_puts(sb, "</td>");
		} else
			sb_printf(sb, "<td>%s</td><td></td>", _("unknown"));
		/* what the queue gave its running jobs here: a job waiting for "free" memory reads both */
		json_t *qg = queue_gpu(q, g);
		if (qg) {
			long long rv = jint(qg, "reserved_bytes", 0), tot = jint(qg, "memory_total_bytes", 0);
			sb_printf(sb, "<td class=\"num reserved\">%s / %s</td><td>", fmt_bytes(a, sizeof a, (uint64_t)rv),
				  fmt_bytes(b, sizeof b, (uint64_t)tot));
			bar(sb, (double)rv, (double)tot);
			sb_printf(sb, "</td>");
		} else
			sb_printf(sb, "<td>%s</td><td></td>", q && q->quota ? _("not the queue's") : _("unknown"));
		if (HW_VALID(g->util_gpu_pct)) {
			sb_printf(sb, "<td class=num>%lld%%</td><td>", (long long)g->util_gpu_pct.v);
			bar(sb, (double)g->util_gpu_pct.v, 100);
			sb_puts(sb, "</td>");
		} else
			sb_printf(sb, "<td>%s</td><td></td>", _("unknown"));
		if (HW_VALID(g->temp_c))
			sb_printf(sb, "<td class=num>%lld &deg;C</td>", (long long)g->temp_c.v);
		else
			sb_printf(sb, "<td>%s</td>", _("unknown"));
		sb_puts(sb, "</tr>\n");
	}
	sb_puts(sb, "</table>\n");
}

static void html_queue(const page_queue *q, strbuf *sb)
{
	sb_printf(sb, "<h2>%s</h2>\n", _("Queue"));
	if (!q->jobs) {
		sb_printf(sb, "<p class=warn>%s", _("no queue: "));
		esc_tr(sb, q->err);
		sb_puts(sb, "</p>\n");
		return;
	}
	size_t n = json_array_size(q->jobs);
	if (!n) {
		sb_printf(sb, "<p>%s</p>\n", _("no job is waiting or running"));
		return;
	}
	static const char *const hdr[] = {N_("id"), N_("name"), N_("user"), N_("project"), N_("state"),
					  N_("GPUs"), N_("on GPU"), N_("VRAM per GPU"), N_("waited"), N_("reason")};
	sb_puts(sb, "<table id=queue><tr>");
	for (size_t h = 0; h < sizeof hdr / sizeof *hdr; h++)
		sb_printf(sb, "<th>%s</th>", _(hdr[h]));
	sb_puts(sb, "</tr>\n");
	size_t i;
	json_t *j;
	json_array_foreach(q->jobs, i, j) {
		char a[32], t[32];
		const char *state = jstr(j, "state");
		sb_printf(sb, "<tr class=\"%s\"><td class=num>%lld</td><td>", state, jint(j, "id", 0));
		esc(sb, jstr(j, "name"));
		sb_puts(sb, "</td><td>");
		esc(sb, jstr(j, "user"));
		sb_puts(sb, "</td><td>");
		esc(sb, jstr(j, "project"));
		sb_puts(sb, "</td><td>");
		esc(sb, state);
		sb_printf(sb, "</td><td class=num>%lld</td><td class=num>", jint(j, "gpus_requested", 1));
		json_t *placed = json_object_get(j, "gpus");
		size_t k;
		json_t *g;
		json_array_foreach(placed, k, g)
			sb_printf(sb, "%s%lld", k ? "," : "", (long long)json_integer_value(g));
		long long v = jint(j, "vram_request_bytes", 0);
		long long ch = jint(j, "vram_charged_bytes", 0);
		sb_printf(sb, "</td><td class=num>%s", v > 0 ? fmt_bytes(a, sizeof a, (uint64_t)v) : _("whole GPU"));
		/* the standard size of the GPU model it runs on, as `queue` shows it */
		if (v > 0 && ch > v)
			sb_printf(sb, _(" (std %s)"), fmt_bytes(a, sizeof a, (uint64_t)ch));
		sb_puts(sb, "</td>");
		sb_printf(sb, "<td class=num>%s</td><td>", fmt_duration(t, sizeof t, (uint64_t)jint(j, "wait_ms", 0)));
		esc_tr(sb, jstr(j, "reason"));
		sb_puts(sb, "</td></tr>\n");
	}
	sb_puts(sb, "</table>\n");
	if (n >= PAGE_MAX_ROWS)
		sb_printf(sb, _("<p>the first %d jobs are shown; <code>gpuwise queue</code> lists them all</p>\n"),
			  PAGE_MAX_ROWS);
}

/* A quota cell: used / limit, or used alone when unlimited. */
static void quota_cell(strbuf *sb, json_t *p, const char *used_k, const char *quota_k, bool bytes)
{
	json_t *lim = json_object_get(p, quota_k);
	long long used = jint(p, used_k, 0);
	char a[32], b[32];
	if (bytes)
		fmt_bytes(a, sizeof a, (uint64_t)used);
	else
		snprintf(a, sizeof a, "%lld", used);
	if (json_is_integer(lim)) {
		long long l = (long long)json_integer_value(lim);
		if (bytes)
			fmt_bytes(b, sizeof b, (uint64_t)l);
		else
			snprintf(b, sizeof b, "%lld", l);
		sb_printf(sb, "<td class=num>%s / %s</td><td>", a, b);
		bar(sb, (double)used, (double)l);
		sb_puts(sb, "</td>");
	} else
		sb_printf(sb, _("<td class=num>%s (no limit)</td><td></td>"), a);
}

/* The fair-share factor, when the daemon reports one (a number in 0..1). */
static json_t *fair_share(json_t *p)
{
	json_t *f = json_object_get(p, "fairshare_factor");
	return json_is_number(f) ? f : NULL;
}

static void html_projects(const page_queue *q, strbuf *sb)
{
	sb_printf(sb, "<h2>%s</h2>\n", _("Projects"));
	json_t *arr = q->quota ? json_object_get(q->quota, "projects") : NULL;
	if (!arr) {
		sb_printf(sb, "<p class=warn>%s", _("no quotas: "));
		esc_tr(sb, q->err);
		sb_puts(sb, "</p>\n");
		return;
	}
	bool fs = false;
	size_t i;
	json_t *p;
	json_array_foreach(arr, i, p)
		fs |= fair_share(p) != NULL;
	sb_printf(sb, "<table id=projects><tr><th>%s</th><th>%s</th><th></th><th>%s</th><th></th><th>%s</th><th></th>"
		      "<th>%s</th>",
		  _("project"), _("VRAM in use"), _("GPUs"), _("jobs running"), _("waiting"));
	if (fs)
		sb_printf(sb, "<th>%s</th>", _("fair-share factor"));
	sb_puts(sb, "</tr>\n");
	json_array_foreach(arr, i, p) {
		sb_puts(sb, "<tr><td>");
		esc(sb, jstr(p, "project"));
		sb_puts(sb, "</td>");
		quota_cell(sb, p, "vram_used_bytes", "vram_quota_bytes", true);
		quota_cell(sb, p, "gpus_used", "gpus_quota", false);
		quota_cell(sb, p, "jobs_running", "jobs_quota", false);
		sb_printf(sb, "<td class=num>%lld</td>", jint(p, "jobs_waiting", 0));
		if (fs) {
			json_t *f = fair_share(p);
			if (f)
				sb_printf(sb, "<td class=num>%.3f</td>", json_number_value(f));
			else
				sb_puts(sb, "<td></td>");
		}
		sb_puts(sb, "</tr>\n");
	}
	sb_puts(sb, "</table>\n");
}

void page_html(const hw_snapshot *s, const char *hw_err, const page_queue *q, unsigned refresh_s, strbuf *sb)
{
	char host[128] = "";
	if (gethostname(host, sizeof host - 1))
		host[0] = 0;
	char when[64];
	time_t now = time(NULL);
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", localtime_r(&now, &tm));
	sb_printf(sb, "<!DOCTYPE html>\n<html lang=%s><head><meta charset=utf-8>\n"
		      "<meta http-equiv=refresh content=%u>\n<title>", gw_i18n_zh() ? "zh-CN" : "en", refresh_s);
	esc(sb, host);
	sb_puts(sb, " - gpuwise</title>\n<style>\n"
		    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
		    "h1{font-size:1.4em;margin:0}h2{font-size:1.1em;margin:1.4em 0 .4em}\n"
		    ".sub{color:#666;margin:.2em 0 1em}\n"
		    "table{border-collapse:collapse}th,td{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:left}\n"
		    "th{background:#f3f3f3}td.num{text-align:right;white-space:nowrap}\n"
		    ".bar{width:9em;height:.8em;background:#e6e6e6;border-radius:3px}\n"
		    ".fill{height:100%;background:#4a8;border-radius:3px}.fill.hot{background:#d54}\n"
		    "tr.running td:nth-child(5){color:#282;font-weight:600}tr.held td:nth-child(5){color:#a60}\n"
		    ".warn{color:#a30}\n</style></head><body>\n<h1>");
	/* TRANSLATORS: the page's heading; %s is the host name */
	strbuf h1 = STRBUF_INIT;
	esc(&h1, host);
	sb_printf(sb, _("GPUs of %s"), sb_str(&h1));
	sb_release(&h1);
	sb_puts(sb, "</h1>\n<p class=sub>");
	sb_printf(sb, _("gpuwise %s &middot; read at %s &middot; refreshes every %u s &middot; "), GPUWISE_VERSION, when,
		  refresh_s);
	sb_puts(sb, "<a href=\"/metrics\">/metrics</a></p>\n");
	html_gpus(s, hw_err, q, sb);
	html_queue(q, sb);
	html_projects(q, sb);
	sb_puts(sb, "</body></html>\n");
}

/* ---- Prometheus ---------------------------------------------------------------- */
static void header(strbuf *sb, const char *name, const char *help)
{
	sb_printf(sb, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* One series per project: key's integer value; a null (no limit) is left out. */
static void per_project(strbuf *sb, json_t *arr, const char *name, const char *help, const char *key,
			const char *state)
{
	bool first = true;
	size_t i;
	json_t *p;
	json_array_foreach(arr, i, p) {
		json_t *v = json_object_get(p, key);
		if (!json_is_number(v))
			continue;
		if (first)
			header(sb, name, help);
		first = false;
		sb_printf(sb, "%s{", name);
		sb_prom_label(sb, "project", jstr(p, "project"), true);
		if (state)
			sb_prom_label(sb, "state", state, false);
		if (json_is_integer(v))
			sb_printf(sb, "} %lld\n", (long long)json_integer_value(v));
		else
			sb_printf(sb, "} %.6g\n", json_number_value(v));
	}
}

void page_prometheus(const page_queue *q, strbuf *sb)
{
	header(sb, "gpuwise_queue_up", "1 when the queue daemon answered this scrape, else 0 with the reason.");
	sb_puts(sb, "gpuwise_queue_up{");
	sb_prom_label(sb, "socket", q->socket ? q->socket : "", true);
	sb_prom_label(sb, "error", q->quota ? "" : q->err, false);
	sb_printf(sb, "} %d\n", q->quota ? 1 : 0);
	json_t *arr = q->quota ? json_object_get(q->quota, "projects") : NULL;
	if (!arr)
		return;
	/* the two states in one family, so sum by (project) is every active job */
	bool first = true;
	static const struct { const char *key, *state; } st[] = {{"jobs_waiting", "waiting"}, {"jobs_running", "running"}};
	for (size_t k = 0; k < 2; k++) {
		size_t i;
		json_t *p;
		json_array_foreach(arr, i, p) {
			if (first)
				header(sb, "gpuwise_queue_jobs", "Jobs of one project waiting (queued or held) or running.");
			first = false;
			sb_puts(sb, "gpuwise_queue_jobs{");
			sb_prom_label(sb, "project", jstr(p, "project"), true);
			sb_prom_label(sb, "state", st[k].state, false);
			sb_printf(sb, "} %lld\n", jint(p, st[k].key, 0));
		}
	}
	per_project(sb, arr, "gpuwise_project_vram_requested_bytes",
		    "GPU memory requested by the project's running jobs (what counts against its quota).",
		    "vram_used_bytes", NULL);
	per_project(sb, arr, "gpuwise_project_vram_quota_bytes", "The project's VRAM quota (absent: no limit).",
		    "vram_quota_bytes", NULL);
	per_project(sb, arr, "gpuwise_project_gpus_used", "GPUs held by the project's running jobs.", "gpus_used", NULL);
	per_project(sb, arr, "gpuwise_project_gpus_quota", "The project's GPU quota (absent: no limit).", "gpus_quota",
		    NULL);
	per_project(sb, arr, "gpuwise_project_jobs_quota", "The project's running-jobs quota (absent: no limit).",
		    "jobs_quota", NULL);
	per_project(sb, arr, "gpuwise_project_jobs_borrowing", "The project's running jobs on borrowed quota.",
		    "jobs_borrowing", NULL);
	/* fair share (issue 20 item 1): exposed when the daemon reports it */
	per_project(sb, arr, "gpuwise_project_fair_share_factor",
		    "The project's fair-share factor (0-1, higher runs sooner), when the daemon computes one.",
		    "fairshare_factor", NULL);
}

/*
 * report.c: the HTML report of a run: one page, inline CSS and SVG, no
 * scripts and nothing fetched, so it opens anywhere and can be mailed.
 */
#include "watch/watch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

/* Eight distinguishable colours for GPU lines. */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
				      "#8c564b", "#e377c2", "#17becf", "#bcbd22"};
#define JOB_COLOR "#d62728"

static void esc(strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			sb_puts(sb, "&lt;");
			break;
		case '>':
			sb_puts(sb, "&gt;");
			break;
		case '&':
			sb_puts(sb, "&amp;");
			break;
		case '"':
			sb_puts(sb, "&quot;");
			break;
		default:
			sb_add(sb, s, 1);
		}
	}
}

typedef struct line {
	char label[112];
	const char *color;
	const double *y;    /* y[i * stride + off] */
	size_t stride, off;
	double scale;       /* divide by this */
	bool thick, dashed;
} line;

/* Plot area inside the 1000 x 270 view box. */
#define X0 70.0
#define X1 980.0
#define Y0 28.0
#define Y1 220.0

static double nice_max(double v)
{
	if (!(v > 0))
		return 1;
	double p = pow(10, floor(log10(v)));
	double m = v / p;
	double n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10;
	return n * p;
}

/* Horizontal reference lines: a card's total memory, --mem-limit, a temperature limit. */
typedef struct ref {
	double y;
	char label[96];
	const char *color;
} ref;

/*
 * Event markers: a dashed line each, and a label placed in the first of
 * MARK_ROWS rows where it overlaps no other label (widths estimated at
 * 6.5 px a character of the 11 px font); a label that fits nowhere is left
 * out (the events table lists every event) and the count is shown.
 */
#define MARK_ROWS 6
/* The exit class in the reader's language (the id stays in --json, the log and
 * the summary line on stderr). */
static const char *class_label(watch_class c)
{
	static const char *const label[WATCH_CLASS_COUNT] = {
		[WATCH_SUCCESS] = N_("success"),
		[WATCH_CUDA_OOM] = N_("cuda-oom"),
		[WATCH_HOST_OOM] = N_("host-oom"),
		[WATCH_HARDWARE] = N_("hardware"),
		[WATCH_STOPPED] = N_("stopped-by-gpuwise"),
		[WATCH_INTERRUPTED] = N_("interrupted"),
		[WATCH_NOT_STARTED] = N_("not-started"),
		[WATCH_FAILURE] = N_("failure"),
	};
	return (unsigned)c < WATCH_CLASS_COUNT && label[c] ? _(label[c]) : watch_class_name(c);
}

static void markers(strbuf *sb, const watch_result *r, double tmax)
{
	double row_end[MARK_ROWS][64], row_start[MARK_ROWS][64];
	size_t row_n[MARK_ROWS] = {0};
	size_t hidden = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const watch_event *e = &r->events[i];
		const char *col = NULL, *tag = NULL;
		if (e->kind == WATCH_EV_RESTART) {
			col = "#1f3fbf";
			tag = _("restart");
		} else if (e->kind == WATCH_EV_XID) {
			col = "#7b1fa2";
			tag = "Xid";
		} else if (watch_event_is_alert(e->kind)) {
			col = JOB_COLOR;
			tag = watch_event_name(e->kind);
		} else if (e->kind == WATCH_EV_PAUSE || e->kind == WATCH_EV_RESUME) {
			col = "#ef6c00";
			tag = watch_event_name(e->kind);
		}
		if (!col)
			continue;
		double x = X0 + (X1 - X0) * ((double)e->t_ms / tmax);
		double w = 6.5 * (double)strlen(tag) + 4;
		bool left = x + 3 + w > X1;
		double a = left ? x - 3 - w : x + 3, b = a + w;
		sb_printf(sb,
			  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
			  "stroke-dasharray=\"5 3\"/>\n",
			  x, Y0, x, Y1, col);
		int rowi = -1;
		for (int k = 0; k < MARK_ROWS && rowi < 0; k++) {
			bool free_row = row_n[k] < 64;
			for (size_t j = 0; j < row_n[k] && free_row; j++)
				free_row = b + 2 < row_start[k][j] || a > row_end[k][j] + 2;
			if (free_row)
				rowi = k;
		}
		if (rowi < 0) {
			hidden++;
			continue;
		}
		row_start[rowi][row_n[rowi]] = a;
		row_end[rowi][row_n[rowi]++] = b;
		sb_printf(sb,
			  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"#fafafa\" opacity=\"0.85\"/>"
			  "<text class=\"mark\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-size=\"11\"%s>%s</text>\n",
			  a, Y0 + 1 + rowi * 13.0, w, left ? x - 3 : x + 3, Y0 + 11 + rowi * 13.0, col,
			  left ? " text-anchor=\"end\"" : "", tag);
	}
	if (hidden)
	{
		sb_printf(sb, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#555\" text-anchor=\"end\">", X1,
			  Y1 + 30);
		sb_printf(sb, _("+%zu more events (see the table)"), hidden);
		sb_puts(sb, "</text>\n");
	}
}

static void chart(strbuf *sb, const watch_result *r, const char *title, const char *unit,
		  const line *lines, size_t nl, double fixed_max, const ref *refs, size_t nref)
{
	const watch_series *se = r->series;
	double tmax = se->n ? (double)se->t_ms[se->n - 1] : 0;
	if ((double)r->duration_ms > tmax)
		tmax = (double)r->duration_ms;
	if (tmax < 1000)
		tmax = 1000;
	double ymax = 0;
	for (size_t l = 0; l < nl; l++)
		for (size_t i = 0; i < se->n; i++) {
			double v = lines[l].y[i * lines[l].stride + lines[l].off] / lines[l].scale;
			if (isfinite(v) && v > ymax)
				ymax = v;
		}
	for (size_t k = 0; k < nref; k++)
		if (isfinite(refs[k].y) && refs[k].y > ymax)
			ymax = refs[k].y;
	ymax = fixed_max > 0 ? fixed_max : nice_max(ymax * 1.05);
	sb_printf(sb, "<h2>%s</h2>\n<svg viewBox=\"0 0 1000 280\" width=\"100%%\" role=\"img\" "
		      "aria-label=\"%s\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		  title, title);
	sb_printf(sb, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\" "
		      "stroke=\"#999\"/>\n",
		  X0, Y0, X1 - X0, Y1 - Y0);
	for (int k = 0; k <= 4; k++) {
		double y = Y1 - (Y1 - Y0) * k / 4.0;
		sb_printf(sb, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			      "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.*f</text>\n",
			  X0, y, X1, y, X0 - 5, y + 4, ymax >= 40 ? 0 : ymax >= 4 ? 1 : 2, ymax * k / 4.0);
		double x = X0 + (X1 - X0) * k / 4.0;
		char d[32];
		fmt_duration(d, sizeof d, (uint64_t)(tmax * k / 4.0));
		sb_printf(sb, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n", x,
			  Y1 + 15, d);
	}
	sb_printf(sb, "<text x=\"12\" y=\"%.0f\" font-size=\"11\" transform=\"rotate(-90 12 %.0f)\" "
		      "text-anchor=\"middle\">%s</text>\n",
		  (Y0 + Y1) / 2, (Y0 + Y1) / 2, unit);
	double ref_used_y[8];
	size_t n_ref_used = 0;
	for (size_t k = 0; k < nref; k++) {
		if (!isfinite(refs[k].y))
			continue;
		double y = Y1 - (Y1 - Y0) * refs[k].y / ymax;
		/* labels of lines close together go below the line instead of above */
		double ty = y - 3;
		for (size_t j = 0; j < n_ref_used; j++)
			if (fabs(ref_used_y[j] - ty) < 12)
				ty = y + 12;
		if (n_ref_used < 8)
			ref_used_y[n_ref_used++] = ty;
		sb_printf(sb, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
			      "stroke-dasharray=\"2 2\"/><text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\" "
			      "text-anchor=\"start\">",
			  X0, y, X1, y, refs[k].color, X0 + 6, ty, refs[k].color);
		esc(sb, refs[k].label);
		sb_puts(sb, "</text>\n");
	}
	for (size_t l = 0; l < nl; l++) {
		const line *ln = &lines[l];
		bool open = false;
		size_t pts = 0;
		for (size_t i = 0; i < se->n; i++) {
			double v = ln->y[i * ln->stride + ln->off] / ln->scale;
			/* no line across the back-off between two attempts */
			if (open && i && se->attempt[i] != se->attempt[i - 1]) {
				sb_puts(sb, "\"/>\n");
				open = false;
			}
			if (!isfinite(v)) {
				if (open)
					sb_puts(sb, "\"/>\n");
				open = false;
				continue;
			}
			if (!open) {
				sb_printf(sb, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"",
					  ln->color, ln->thick ? "3" : "1.6",
					  ln->dashed ? " stroke-dasharray=\"6 3\"" : "");
				open = true;
			}
			double x = X0 + (X1 - X0) * ((double)se->t_ms[i] / tmax);
			double y = Y1 - (Y1 - Y0) * (v > ymax ? ymax : v < 0 ? 0 : v) / ymax;
			sb_printf(sb, "%.1f,%.1f ", x, y);
			pts++;
		}
		if (open)
			sb_puts(sb, "\"/>\n");
		/* A single point would be invisible as a line. */
		if (pts == 1)
			for (size_t i = 0; i < se->n; i++) {
				double v = ln->y[i * ln->stride + ln->off] / ln->scale;
				if (isfinite(v))
					sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
						  X0 + (X1 - X0) * ((double)se->t_ms[i] / tmax),
						  Y1 - (Y1 - Y0) * (v > ymax ? ymax : v) / ymax, ln->color);
			}
	}
	markers(sb, r, tmax);
	/* legend */
	double lx = X0;
	for (size_t l = 0; l < nl; l++) {
		sb_printf(sb, "<rect x=\"%.0f\" y=\"8\" width=\"14\" height=\"4\" fill=\"%s\"/>"
			      "<text x=\"%.0f\" y=\"14\" font-size=\"11\">",
			  lx, lines[l].color, lx + 18);
		esc(sb, lines[l].label);
		sb_puts(sb, "</text>\n");
		lx += 26 + 6.2 * (double)strlen(lines[l].label);
	}
	sb_puts(sb, "</svg>\n");
}

static void row(strbuf *sb, const char *k, const char *v)
{
	sb_puts(sb, "<tr><th>");
	esc(sb, k);
	sb_puts(sb, "</th><td>");
	esc(sb, v);
	sb_puts(sb, "</td></tr>\n");
}

void watch_report_html(const watch_result *r, char *const *argv, const watch_opts *o, strbuf *sb)
{
	char buf[640], a[32], b[32];
	strbuf cmd = STRBUF_INIT;
	for (char *const *p = argv; *p; p++) {
		if (p != argv)
			sb_puts(&cmd, " ");
		sb_puts(&cmd, *p);
	}
	sb_printf(sb, "<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\">\n<title>gpuwise run: ",
		  gw_i18n_zh() ? "zh-CN" : "en");
	esc(sb, sb_str(&cmd));
	sb_puts(sb, "</title>\n<style>\n"
		    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}\n"
		    "h1{font-size:22px}h2{font-size:16px;margin:22px 0 4px}\n"
		    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 8px;"
		    "text-align:left;font-size:13px}th{background:#f0f0f0}\n"
		    "code{background:#f4f4f4;padding:2px 4px}.alert{color:#c62828;font-weight:bold}\n"
		    ".ok{color:#2e7d32;font-weight:bold}.note{color:#555}\n"
		    "h3{font-size:14px;margin:14px 0 2px}pre.tail{background:#fff3f3;border-left:3px solid #c62828;"
		    "padding:6px 10px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}\n"
		    "</style></head><body>\n<h1>gpuwise run</h1>\n<p><code>");
	/* the labels below are in the reader's language (a CJK font renders them: the
	 * page names no font, the browser's sans-serif fallback for lang zh-CN does) */
	esc(sb, sb_str(&cmd));
	sb_printf(sb, "</code></p>\n<h2>%s</h2>\n<table>\n", _("Summary"));
	time_t st = (time_t)(r->start_wall_ms / 1000);
	struct tm tm;
	gmtime_r(&st, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
	row(sb, _("started"), buf);
	row(sb, _("duration"), fmt_duration(a, sizeof a, r->duration_ms));
	size_t restarts = r->n_attempts ? r->n_attempts - 1 : 0;
	snprintf(buf, sizeof buf, P_("%zu (%zu restart)", "%zu (%zu restarts)", restarts), r->n_attempts, restarts);
	row(sb, _("attempts"), buf);
	const watch_attempt *last = r->n_attempts ? &r->attempts[r->n_attempts - 1] : NULL;
	/* TRANSLATORS: the exit status and its class */
	snprintf(buf, sizeof buf, _("%d (%s)"), r->exit_status, last ? class_label(last->cls) : _("not started"));
	sb_printf(sb, "<tr><th>%s</th><td class=\"%s\">", _("exit"), r->exit_status == 0 ? "ok" : "alert");
	esc(sb, buf);
	sb_puts(sb, "</td></tr>\n");
	row(sb, _("peak job GPU memory"),
	    HW_VALID(r->peak_job_mem_bytes) ? fmt_bytes(a, sizeof a, (uint64_t)r->peak_job_mem_bytes.v) : _("n/a"));
	row(sb, _("peak host RSS of the job"), fmt_bytes(a, sizeof a, r->peak_rss_bytes));
	snprintf(buf, sizeof buf, _("%llu every %s"), (unsigned long long)r->samples,
		 fmt_duration(a, sizeof a, o->interval_ms));
	row(sb, _("samples"), buf);
	if (!r->gpu_seen) {
		char *why = gw_translate_text(r->no_gpu_reason); /* English in the JSON, the reader's here */
		snprintf(buf, sizeof buf, _("none watched: %.256s"), why);
		free(why);
		row(sb, _("GPUs"), buf);
	}
	if (*r->xid_error)
		row(sb, _("Xid events"), r->xid_error);
	for (size_t i = 0; i < r->n_gpus; i++) {
		const watch_gpu_info *g = &r->gpus[i];
		char t[48], p[48], u[48];
		if (HW_VALID(g->peak_temp_c))
			snprintf(t, sizeof t, "%lld °C", (long long)g->peak_temp_c.v);
		else
			snprintf(t, sizeof t, "%s", _("n/a"));
		if (HW_VALID(g->peak_power_mw))
			snprintf(p, sizeof p, "%.0f W", (double)g->peak_power_mw.v / 1000.0);
		else
			snprintf(p, sizeof p, "%s", _("n/a"));
		if (HW_VALID(g->peak_util_pct))
			snprintf(u, sizeof u, "%lld%%", (long long)g->peak_util_pct.v);
		else
			snprintf(u, sizeof u, "%s", _("n/a"));
		char c[32];
		snprintf(buf, sizeof buf, _("%s, %s; peaks: job %s, used %s, %s, %s, util %s"), g->name,
			 HW_VALID(g->mem_total_bytes) ? fmt_bytes(a, sizeof a, (uint64_t)g->mem_total_bytes.v) : "?",
			 HW_VALID(g->peak_job_mem_bytes) ? fmt_bytes(b, sizeof b, (uint64_t)g->peak_job_mem_bytes.v) : _("n/a"),
			 HW_VALID(g->peak_mem_used_bytes) ? fmt_bytes(c, sizeof c, (uint64_t)g->peak_mem_used_bytes.v) : _("n/a"),
			 t, p, u);
		char k[32];
		snprintf(k, sizeof k, "GPU %d", g->index);
		row(sb, k, buf);
	}
	sb_puts(sb, "</table>\n");

	const watch_series *se = r->series;
	size_t ng = se->n_gpus;
	if (r->gpu_seen && ng) {
		size_t nl = 0;
		line *ls = xcalloc(ng + 1, sizeof *ls);
		for (size_t g = 0; g < ng; g++) {
			line *l = &ls[nl++];
			snprintf(l->label, sizeof l->label, _("GPU %d used"), r->gpus[g].index);
			l->color = palette[g % 8];
			l->y = se->gpu_mem;
			l->stride = ng;
			l->off = g;
			l->scale = (double)MiB;
		}
		/* the job's line last, so it is drawn on top */
		ls[nl] = (line){.color = JOB_COLOR, .y = se->job_mem, .stride = 1,
				.scale = (double)MiB, .thick = true, .dashed = true};
		snprintf(ls[nl++].label, sizeof ls[0].label, "%s", _("job (all GPUs)"));
		double big = 0;
		for (size_t i = 0; i < se->n * ng; i++)
			if (isfinite(se->gpu_mem[i]) && se->gpu_mem[i] > big)
				big = se->gpu_mem[i];
		double unit = big > 4.0 * (double)GiB ? (double)GiB : (double)MiB;
		for (size_t l = 0; l < nl; l++)
			ls[l].scale = unit;
		ref refs[9];
		size_t nref = 0;
		for (size_t g = 0; g < ng && nref < 8; g++) {
			if (!HW_VALID(r->gpus[g].mem_total_bytes))
				continue;
			ref *f = &refs[nref++];
			f->y = (double)r->gpus[g].mem_total_bytes.v / unit;
			f->color = palette[g % 8];
			snprintf(f->label, sizeof f->label, _("GPU %d total %s"), r->gpus[g].index,
				 fmt_bytes(a, sizeof a, (uint64_t)r->gpus[g].mem_total_bytes.v));
		}
		if (o->mem_limit_bytes) {
			ref *f = &refs[nref++];
			f->y = (double)o->mem_limit_bytes / unit;
			f->color = JOB_COLOR;
			snprintf(f->label, sizeof f->label, "--mem-limit %s", fmt_bytes(a, sizeof a, o->mem_limit_bytes));
		}
		chart(sb, r, _("GPU memory"), unit == (double)GiB ? "GiB" : "MiB", ls, nl, 0, refs, nref);
		for (size_t g = 0; g < ng; g++) {
			line *l = &ls[g];
			snprintf(l->label, sizeof l->label, "GPU %d", r->gpus[g].index);
			l->color = palette[g % 8];
			l->stride = ng;
			l->off = g;
			l->thick = false;
			l->scale = 1;
			l->y = se->gpu_util;
		}
		chart(sb, r, _("GPU utilisation"), "%", ls, ng, 100, NULL, 0);
		for (size_t g = 0; g < ng; g++)
			ls[g].y = se->gpu_temp;
		ref tl = {.y = o->temp_limit_c, .color = JOB_COLOR};
		snprintf(tl.label, sizeof tl.label, _("limit %d °C"), o->temp_limit_c);
		chart(sb, r, _("Temperature"), "°C", ls, ng, 0, &tl, 1);
		for (size_t g = 0; g < ng; g++) {
			ls[g].y = se->gpu_power;
			ls[g].scale = 1000;
		}
		chart(sb, r, _("Power"), "W", ls, ng, 0, NULL, 0);
		free(ls);
	} else {
		sb_printf(sb, "<h2>GPU</h2>\n<p class=\"note\">%s", _("No GPU data: "));
		char *why = gw_translate_text(r->no_gpu_reason);
		esc(sb, why);
		free(why);
		sb_puts(sb, ".</p>\n");
	}
	line rss = {.color = "#455a64", .y = se->rss, .stride = 1,
		    .scale = (double)MiB};
	snprintf(rss.label, sizeof rss.label, "%s", _("host RSS of the job's processes"));
	chart(sb, r, _("Host memory"), "MiB", &rss, 1, 0, NULL, 0);
	if (se->merged > 1) {
		sb_puts(sb, "<p class=\"note\">");
		sb_printf(sb, _("Each chart point is the maximum (memory, temperature) or mean "
				"(utilisation, power) of %u samples."), se->merged);
		sb_puts(sb, "</p>\n");
	}

	sb_printf(sb, "<h2>%s</h2>\n<table>\n<tr><th>#</th><th>pid</th><th>%s</th><th>%s</th>"
		  "<th>%s</th><th>%s</th><th>%s</th><th>%s</th><th>%s</th>", _("Attempts"), _("start"), _("ran"),
		  _("status"), _("class"), _("reason"), _("peak job GPU memory"), _("back-off"));
	if (o->oom_halve_var) {
		sb_puts(sb, "<th>");
		esc(sb, o->oom_halve_var);
		sb_puts(sb, "</th>");
	}
	sb_puts(sb, "</tr>\n");
	for (size_t i = 0; i < r->n_attempts; i++) {
		const watch_attempt *at = &r->attempts[i];
		char s1[32], s2[32], s3[32], s4[32];
		sb_printf(sb, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td class=\"%s\">%s</td><td>",
			  at->n, (int)at->pid, fmt_duration(s1, sizeof s1, at->start_ms),
			  fmt_duration(s2, sizeof s2, at->end_ms - at->start_ms), at->status,
			  at->cls == WATCH_SUCCESS ? "ok" : "alert", class_label(at->cls));
		esc(sb, at->reason);
		sb_printf(sb, "</td><td>%s</td><td>%s</td>",
			  HW_VALID(at->peak_job_mem_bytes) ? fmt_bytes(s3, sizeof s3, (uint64_t)at->peak_job_mem_bytes.v)
							   : _("n/a"),
			  at->backoff_ms ? fmt_duration(s4, sizeof s4, at->backoff_ms) : "");
		if (o->oom_halve_var) {
			sb_puts(sb, "<td>");
			esc(sb, at->env_value);
			sb_puts(sb, "</td>");
		}
		sb_puts(sb, "</tr>\n");
	}
	sb_puts(sb, "</table>\n");
	/* why each failed attempt ended, in its own words */
	for (size_t i = 0; i < r->n_attempts; i++) {
		const watch_attempt *at = &r->attempts[i];
		if (at->cls == WATCH_SUCCESS || (!*at->stderr_tail && !*at->reason))
			continue;
		sb_puts(sb, "<h3>");
		sb_printf(sb, _("Attempt %d: %s, status %d"), at->n, class_label(at->cls), at->status);
		if (*at->reason) {
			sb_puts(sb, " (");
			esc(sb, at->reason);
			sb_puts(sb, ")");
		}
		sb_puts(sb, "</h3>\n");
		if (*at->stderr_tail) {
			sb_printf(sb, "<p class=\"note\">%s</p>\n<pre class=\"tail\">", _("The end of its stderr:"));
			esc(sb, at->stderr_tail);
			sb_puts(sb, "</pre>\n");
		}
	}
	sb_printf(sb, "<h2>%s</h2>\n<table>\n<tr><th>%s</th><th>%s</th><th>%s</th><th>%s</th></tr>\n", _("Events"),
		  _("time"), _("attempt"), _("event"), _("detail"));
	for (size_t i = 0; i < r->n_events; i++) {
		const watch_event *e = &r->events[i];
		sb_printf(sb, "<tr><td>%s</td><td>%d</td><td%s>%s</td><td>", fmt_duration(a, sizeof a, e->t_ms),
			  e->attempt, watch_event_is_alert(e->kind) ? " class=\"alert\"" : "",
			  watch_event_name(e->kind));
		char *detail = gw_translate_text(e->detail); /* English in the log, the reader's here */
		esc(sb, detail);
		free(detail);
		sb_puts(sb, "</td></tr>\n");
	}
	sb_puts(sb, "</table>\n<p class=\"note\">");
	sb_printf(sb, _("Written by gpuwise %s. Job GPU memory is the sum of NVML's per-process figures over the "
			"job's process tree."), GPUWISE_VERSION);
	sb_puts(sb, "</p>\n</body></html>\n");
	sb_release(&cmd);
}

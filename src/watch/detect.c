/*
 * detect.c: the leak and heat detectors.  Pure functions over samples.
 */
#include "watch/watch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double watch_theil_sen(const double *t, const double *y, size_t n)
{
	if (n < 2)
		return 0;
	size_t cap = n * (n - 1) / 2, k = 0;
	double *s = xmalloc(cap * sizeof *s);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double dt = t[j] - t[i];
			if (dt > 0)
				s[k++] = (y[j] - y[i]) / dt;
		}
	double m = 0;
	if (k) {
		qsort(s, k, sizeof *s, cmp_double);
		m = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	}
	free(s);
	return m;
}

/* Windows needed before judging: three in each half. */
#define LEAK_MIN_WINDOWS 6

void watch_leak_init(watch_leak *l, uint64_t t0_ms, uint64_t warmup_ms, uint64_t window_ms,
		     double min_rate_bps)
{
	memset(l, 0, sizeof *l);
	l->t0_ms = t0_ms;
	l->warmup_ms = warmup_ms;
	l->window_ms = window_ms ? window_ms : 1;
	l->min_rate_bps = min_rate_bps;
	l->min_windows = LEAK_MIN_WINDOWS;
}

static void leak_close_window(watch_leak *l)
{
	if (l->nw == WATCH_LEAK_WINDOWS) {
		size_t m = WATCH_LEAK_WINDOWS - 1;
		memmove(l->tmax, l->tmax + 1, m * sizeof *l->tmax);
		memmove(l->ymax, l->ymax + 1, m * sizeof *l->ymax);
		memmove(l->tmin, l->tmin + 1, m * sizeof *l->tmin);
		memmove(l->ymin, l->ymin + 1, m * sizeof *l->ymin);
		l->nw = m;
	}
	l->tmax[l->nw] = l->win_tmax;
	l->ymax[l->nw] = l->win_max;
	l->tmin[l->nw] = l->win_tmin;
	l->ymin[l->nw] = l->win_min;
	l->nw++;
}

static void leak_open_window(watch_leak *l, double t_s, double y)
{
	l->win_any = true;
	l->win_start_ms = (uint64_t)llround(t_s * 1000.0);
	l->win_max = l->win_min = y;
	l->win_tmax = l->win_tmin = t_s;
}

bool watch_leak_feed(watch_leak *l, uint64_t t_ms, uint64_t bytes, double *slope_bps)
{
	if (l->fired || t_ms < l->t0_ms + l->warmup_ms)
		return false;
	double t_s = (double)t_ms / 1000.0, y = (double)bytes;
	if (!l->win_any) {
		leak_open_window(l, t_s, y);
		return false;
	}
	if (t_ms - l->win_start_ms < l->window_ms) {
		if (y > l->win_max) {
			l->win_max = y;
			l->win_tmax = t_s;
		}
		if (y < l->win_min) {
			l->win_min = y;
			l->win_tmin = t_s;
		}
		return false;
	}
	leak_close_window(l);
	leak_open_window(l, t_s, y);
	if (l->nw < l->min_windows)
		return false;
	size_t h = l->nw / 2;
	double s_max = watch_theil_sen(l->tmax, l->ymax, l->nw);
	double s_min = watch_theil_sen(l->tmin, l->ymin, l->nw);
	double s_old = watch_theil_sen(l->tmax, l->ymax, h);
	double s_new = watch_theil_sen(l->tmax + h, l->ymax + h, l->nw - h);
	if (s_max >= l->min_rate_bps && s_min > 0 && s_old > 0 && s_new > 0) {
		l->fired = true;
		if (slope_bps)
			*slope_bps = s_max;
		return true;
	}
	return false;
}

void watch_heat_init(watch_heat *h, int limit_c, int need)
{
	memset(h, 0, sizeof *h);
	h->limit_c = limit_c;
	h->need = need > 0 ? need : 1;
}

watch_heat_change watch_heat_feed(watch_heat *h, int temp_c, uint64_t throttle)
{
	bool known = temp_c > -274;
	bool thermal = (throttle & WATCH_THERMAL_BITS) != 0;
	bool hot_now = (known && temp_c >= h->limit_c) || thermal;
	if (hot_now) {
		h->run++;
		if (!h->hot && h->run >= h->need) {
			h->hot = true;
			return WATCH_HEAT_HOT;
		}
		return WATCH_HEAT_NONE;
	}
	h->run = 0;
	if (h->hot && !thermal && (!known || temp_c <= h->limit_c - WATCH_HEAT_HYSTERESIS_C)) {
		h->hot = false;
		return WATCH_HEAT_CLEAR;
	}
	return WATCH_HEAT_NONE;
}
